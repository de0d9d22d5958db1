/* test_traffic_rss.c - engine/traffic.h applied again and again keeps memory flat: a speed file of
 * 1% of the arcs (new random speeds each time) applied 50 times in a row on a generated road map of
 * 40,000 nodes with turn costs and the CCH on (the CPU engine), each version made from the one
 * before and the one before released, as POST .../speeds does once a second in the service. The
 * process's resident memory after the 50th must stay within a bound of that after the 10th (the
 * versions' arrays go back to the spares and to the system, nothing per apply is kept). Every
 * tenth version's routes are also checked against the Dijkstra family. Run from the repository
 * root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/traffic.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "graph/turns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* AddressSanitizer keeps freed memory in quarantine (RSS grows by design): the bound is
 * meaningless there. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Resident set size in MiB (/proc/self/statm), or -1. */
static double rss_mib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f) return -1;
    int ok = fscanf(f, "%ld %ld", &size, &res) == 2;
    fclose(f);
    return ok ? (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0 : -1;
}

/* The cost of the route s -> t on version g by algorithm algo. */
static uint64_t cost(gp_engine *e, const gp_graph *g, uint32_t s, uint32_t t, int algo) {
    gp_err err = {0};
    gp_path p = {0};
    if (gp_engine_p2p(e, g, s, t, algo, &p, &err) != GP_OK) fail_msg("route: %s", err.msg);
    uint64_t d = p.dist;
    gp_path_free(&p);
    return d;
}

/* Ten random routes of version g: the CCH's against the Dijkstra family's. */
static void routes_as_dijkstra(gp_engine *e, const gp_graph *g, uint64_t *seed) {
    uint32_t st[20];
    for (int q = 0; q < 20; q++) st[q] = (uint32_t)((gp_splitmix64(seed) >> 33) % g->n);
    for (int q = 0; q < 20; q += 2) {
        uint64_t x = cost(e, g, st[q], st[q + 1], GP_P2P_AUTO);
        uint64_t y = cost(e, g, st[q], st[q + 1], GP_P2P_DIJKSTRA);
        if (x != y)
            fail_msg("version %s route %u -> %u: CCH %llu, Dijkstra %llu", g->version, st[q],
                     st[q + 1], (unsigned long long)x, (unsigned long long)y);
    }
}

static void test_flat(void **state) {
    (void)state;
    if (rss_mib() < 0 || UNDER_ASAN) {
        print_message("%s: skipped\n", UNDER_ASAN
                                           ? "AddressSanitizer's quarantine holds freed memory"
                                           : "no /proc/self/statm");
        skip();
    }
    gp_err err = {0};
    gp_graph *g = gp_generate_road(40000, 9, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car"); /* travel times and coordinates */
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_set_cch_perfect(e, "off", &err), GP_OK);
    assert_int_equal(gp_engine_set_turn_costs(e, "on", &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_non_null(g->turns);
    size_t ns = g->m / 100 + 1;
    gp_speed_entry *sp = calloc(ns, sizeof *sp);
    assert_non_null(sp);
    uint64_t seed = 5;
    gp_graph *cur = gp_graph_ref(g);
    double at10 = 0, peak = 0;
    for (int r = 1; r <= 50; r++) {
        for (size_t i = 0; i < ns; i++) { /* the same segments, new speeds */
            uint32_t a = (uint32_t)((i * 7919 + 3) % g->m), u = gp_graph_arc_tail(g, a);
            sp[i] = (gp_speed_entry){gp_graph_orig_id(g, u), gp_graph_orig_id(g, g->col[a]),
                                     (double)(10 + (gp_splitmix64(&seed) >> 33) % 90)};
        }
        gp_graph *nx = NULL;
        gp_traffic_stats st;
        if (gp_traffic_apply(e, cur, sp, ns, NULL, 0, &nx, NULL, NULL, &st, &err) != GP_OK)
            fail_msg("apply %d: %s", r, err.msg);
        assert_true(st.arcs_changed > 0);
        gp_graph_unref(cur);
        cur = nx;
        if (r % 10 == 0) routes_as_dijkstra(e, cur, &seed);
        double now = rss_mib();
        if (r == 10) at10 = now;
        if (r > 10 && now > peak) peak = now;
    }
    const gp_cch *c = ((const gp_turns *)cur->turns)->tg->cch;
    assert_non_null(c);
    /* one version's CCH arrays (40 bytes an edge) and turn-graph weights: the bound allows two
     * more than after the 10th apply, where 40 retained versions would be far above */
    double version_mib = ((double)c->topo->m * 40 + (double)c->m * 8) / 1048576.0;
    print_message("RSS after 10 applies %.1f MiB, peak after %.1f MiB (one version %.1f MiB)\n",
                  at10, peak, version_mib);
    if (peak > at10 + 2 * version_mib + 16)
        fail_msg("RSS grew from %.1f to %.1f MiB over 40 applies (one version: %.1f MiB)", at10,
                 peak, version_mib);
    gp_graph_unref(cur);
    free(sp);
    gp_graph_unref(g);
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
