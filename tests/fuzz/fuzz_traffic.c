/* fuzz_traffic.c - libFuzzer harness for live traffic files (engine/traffic.h): OSRM segment speed
 * files and turn penalty files as a POST or a watched config file brings them, parsed and, when
 * they parse, applied to a small OSM road graph with turn costs (tests/data/osm/traffic.osm, the
 * CPU backend: CCH customization of the new version included).
 *
 * The first byte picks the kind (even: speeds, odd: turn penalties), the rest is the file. A parse
 * that succeeds must give entries with finite numbers; an apply that succeeds must give a graph of
 * the base's shape whose routes the engine answers; one that fails must say why. Any crash, leak or
 * undefined behaviour fails the run. Seeds: tests/fuzz/corpus/fuzz_traffic/.
 */
#include "engine/engine.h"
#include "engine/traffic.h"
#include "graph/graph.h"
#include "graph/turns.h"
#include "storage/source.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static gp_engine *engine;
static gp_graph *base;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    gp_log_level = GP_LOG_ERROR;
    gp_err err;
    gp_err_clear(&err);
    engine = gp_engine_new("cpu", 1, NULL, &err);
    base = engine ? gp_graph_load("osm:tests/data/osm/traffic.osm", NULL, &err) : NULL;
    if (!base || gp_engine_attach(engine, base, &err) != GP_OK || !base->turns) {
        fprintf(stderr, "fuzz_traffic: cannot set up (run from the repository root): %s\n",
                err.msg);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int turns = data[0] & 1;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    gp_err err;
    gp_err_clear(&err);
    gp_speed_entry *sp = NULL;
    gp_turn_entry *tp = NULL;
    size_t n = 0;
    int rc = turns ? gp_traffic_parse_turns(text, len, &tp, &n, &err)
                   : gp_traffic_parse_speeds(text, len, &sp, &n, &err);
    if (rc != GP_OK) {
        if (!err.msg[0] || sp || tp) __builtin_trap(); /* refused: says why, returns nothing */
        return 0;
    }
    if (n == 0) __builtin_trap(); /* "a file without any entry is GP_EINVAL" */
    for (size_t i = 0; i < n; i++) {
        if (sp && !(isfinite(sp[i].kmh) && sp[i].kmh >= 0)) __builtin_trap();
        if (tp && !isfinite(tp[i].penalty_s)) __builtin_trap();
    }
    gp_graph *g2 = NULL;
    gp_traffic_stats st;
    unsigned char *known = calloc(n, 1);
    if (!known) abort();
    rc = gp_traffic_apply(engine, base, sp, sp ? n : 0, tp, tp ? n : 0, &g2, sp ? known : NULL,
                          tp ? known : NULL, &st, &err);
    if (rc == GP_OK) {
        if (!g2 || g2->n != base->n || g2->m != base->m || !g2->turns) __builtin_trap();
        if ((sp ? st.speeds_unknown : st.turns_unknown) > n) __builtin_trap();
        /* a query on the new version: every node from node 0 */
        uint64_t *dist = malloc(sizeof *dist * g2->n);
        if (!dist) abort();
        gp_err qerr;
        gp_err_clear(&qerr);
        (void)gp_engine_sssp(engine, g2, 0, UINT64_MAX, dist, NULL, &qerr);
        free(dist);
        gp_graph_unref(g2);
    } else if (g2 || !err.msg[0]) {
        __builtin_trap();
    }
    free(known);
    free(sp);
    free(tp);
    return 0;
}
