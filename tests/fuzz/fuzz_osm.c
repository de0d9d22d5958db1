/* fuzz_osm.c - libFuzzer harness for the OpenStreetMap importer (graph/osm.c, graph/osm_read.cpp)
 * on arbitrary bytes: XML when the input starts with '<', PBF otherwise (the importer's own sniff);
 * see fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_osm/ (the hand-made extracts of
 * tests/data/osm/).
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("osm", data, size);
}
