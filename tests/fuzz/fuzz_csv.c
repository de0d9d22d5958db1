/* fuzz_csv.c - libFuzzer harness for the csv loader (graph/load_csv.c) on arbitrary bytes; see
 * fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_csv/.
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("csv", data, size);
}
