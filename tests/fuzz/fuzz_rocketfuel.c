/* fuzz_rocketfuel.c - libFuzzer harness for the rocketfuel loader (graph/load_rocketfuel.c) on arbitrary bytes; see
 * fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_rocketfuel/.
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("rocketfuel", data, size);
}
