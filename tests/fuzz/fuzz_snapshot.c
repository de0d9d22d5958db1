/* fuzz_snapshot.c - libFuzzer harness for the snapshot reader (graph/snapshot.c) on arbitrary
 * bytes: header, section table, bounds, alignment, checksums, structure and UTF-8 checks must
 * refuse what they cannot vouch for, and a file they pass must be safe to query; see
 * fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_snapshot/ (snapshots of the
 * tests/data/osm/ extracts, written by `gpath import`). Checksums make random mutations fail
 * early; the seeds still drive every check up to them, and mutations of the header and table.
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("gpath", data, size);
}
