/* fuzz_sndlib.c - libFuzzer harness for the sndlib loader (graph/load_sndlib.c) on arbitrary bytes; see
 * fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_sndlib/.
 */
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gp_fuzz_load("sndlib", data, size);
}
