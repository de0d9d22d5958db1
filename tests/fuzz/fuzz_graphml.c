/* fuzz_graphml.c - libFuzzer harness for the graphml loader (graph/load_graphml.c) on arbitrary bytes; see
 * fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_graphml/.
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("graphml", data, size);
}
