/* fuzz_dimacs.c - libFuzzer harness for the dimacs loader (graph/load_dimacs.c) on arbitrary bytes; see
 * fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_dimacs/.
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("dimacs", data, size);
}
