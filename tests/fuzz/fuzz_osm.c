/* fuzz_osm.c - libFuzzer harness for the OpenStreetMap importer (graph/osm.c, graph/osm_read.cpp)
 * on arbitrary bytes: XML when the input starts with '<', PBF otherwise (the importer's own sniff);
 * see fuzz_load.h. Run by `make fuzz` on tests/fuzz/corpus/fuzz_osm/ (the hand-made extracts of
 * tests/data/osm/). Each input is loaded for both models of turn restrictions (node copies; kept
 * for the turn model) and the second one's turn graph is built (graph/turns.c applies them).
 */
#include "graph/turns.h"
#include "tests/fuzz/fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gp_fuzz_load("osm", data, size);
    gp_graph *g = gp_fuzz_load_graph("osm", data, size, 1);
    const gp_turn_costs *tc = g ? gp_turn_costs_find(g->profile) : NULL;
    if (tc) {
        gp_err err;
        gp_turns_free(gp_turns_build(g, tc, &err));
    }
    gp_graph_unref(g);
    return 0;
}
