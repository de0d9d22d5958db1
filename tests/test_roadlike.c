/* test_roadlike.c - the road-like generator (gen:N[:SEED], graph/road.c): exactly N nodes,
 * deterministic for (N, SEED), strongly connected, travel times by road class; and road-like
 * against the real DIMACS graphs under $GPATH_DATA (skipped when absent): at the node counts of NY
 * and BAY its METIS nested-dissection fill and operation count are within 2x of the real graph's,
 * its mean degree within 20% and its hop diameter within 2x (measures of bench/roadlike.h, computed
 * here from the real files), while the grid generator (grid:N) misses the operation-count bound:
 * the measure tells the two apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/roadlike.h"
#include "graph/spatial.h"
#include "storage/source.h"

static gp_graph *gen(uint64_t n, uint64_t seed) {
    gp_err err;
    gp_graph *g = gp_generate_road(n, seed, &err);
    if (!g) fail_msg("gen:%llu:%llu: %s", (unsigned long long)n, (unsigned long long)seed, err.msg);
    return g;
}

/* Nodes reached from node 0 along arcs (forward) or against them (the reverse CSR). */
static uint32_t reach(const gp_graph *g, int reverse) {
    const uint32_t *row = reverse ? g->rrow : g->row, *col = reverse ? g->rcol : g->col;
    uint32_t *queue = malloc((size_t)g->n * sizeof *queue);
    unsigned char *seen = calloc(g->n, 1);
    assert_non_null(queue);
    assert_non_null(seen);
    uint32_t head = 0, tail = 0;
    queue[tail++] = 0;
    seen[0] = 1;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t i = row[u]; i < row[u + 1]; i++)
            if (!seen[col[i]]) {
                seen[col[i]] = 1;
                queue[tail++] = col[i];
            }
    }
    free(queue);
    free(seen);
    return tail;
}

static void test_exact_and_deterministic(void **state) {
    (void)state;
    static const uint64_t sizes[] = {100, 101, 137, 999, 4321, 20000, 264346};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        gp_graph *g = gen(sizes[s], 5);
        assert_int_equal(g->n, sizes[s]);
        assert_string_equal(g->format, "gen");
        assert_non_null(g->lon);
        for (uint32_t v = 0; v < g->n; v++) {
            assert_int_equal(g->ext[v], (int64_t)v + 1);
            assert_true(isfinite(g->lon[v]) && isfinite(g->lat[v]));
            assert_true(fabs(g->lat[v] - 47.3) < 10 && fabs(g->lon[v] - 8.5) < 15);
        }
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t i = g->row[u]; i < g->row[u + 1]; i++) {
                assert_true(g->col[i] != u); /* no self-loop */
                if (i > g->row[u]) assert_true(g->col[i - 1] <= g->col[i]);
            }
        gp_graph *h = gen(sizes[s], 5);
        assert_true(g->hash == h->hash);
        assert_memory_equal(g->lon, h->lon, g->n * sizeof(double));
        assert_memory_equal(g->lat, h->lat, g->n * sizeof(double));
        gp_graph_unref(h);
        h = gen(sizes[s], 6);
        assert_int_equal(h->n, sizes[s]);
        assert_true(g->hash != h->hash);
        gp_graph_unref(h);
        gp_graph_unref(g);
    }
    /* exactly n for every small n (one town up to the second settlement, then the node budget
     * split between settlements and rural roads) */
    for (uint64_t n = 100; n < 3000; n += 13)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            gp_graph *g = gen(n, seed);
            assert_int_equal(g->n, n);
            if (reach(g, 0) != n || reach(g, 1) != n)
                fail_msg("gen:%llu:%llu not strongly connected", (unsigned long long)n,
                         (unsigned long long)seed);
            gp_graph_unref(g);
        }
    gp_err err;
    assert_null(gp_generate_road(99, 1, &err));
    assert_int_equal(err.code, GP_EINVAL);
    assert_null(gp_generate_road(100000001ULL, 1, &err));
    assert_int_equal(err.code, GP_EINVAL);
}

static void test_strongly_connected(void **state) {
    (void)state;
    static const uint64_t sizes[] = {100, 500, 3000, 50000, 300000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            gp_graph *g = gen(sizes[s], seed);
            if (reach(g, 0) != g->n || reach(g, 1) != g->n)
                fail_msg("gen:%llu:%llu is not strongly connected (%u / %u of %u nodes)",
                         (unsigned long long)sizes[s], (unsigned long long)seed, reach(g, 0),
                         reach(g, 1), g->n);
            gp_graph_unref(g);
        }
}

/* Every arc carries a road class and its travel time is its great-circle length at that class's
 * speed; residential streets dominate, every class appears, and some one-way streets exist. */
static void test_travel_times(void **state) {
    (void)state;
    gp_graph *g = gen(200000, 2);
    uint64_t per_class[GP_ROAD_CLASS_COUNT] = {0}, oneway = 0;
    assert_non_null(g->arc_class);
    assert_string_equal(g->unit_name, "deciseconds");
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t i = g->row[u]; i < g->row[u + 1]; i++) {
            uint32_t v = g->col[i];
            double m = gp_haversine_m(g->lon[u], g->lat[u], g->lon[v], g->lat[v]);
            int c = g->arc_class[i];
            double kmh = gp_gen_class_kmh(c), want = m / (kmh / 3.6) * 10;
            if (!(kmh > 0) ||
                !(fabs(want - g->w[i]) <= 0.5 + 1e-6 * want || (want < 1 && g->w[i] == 1)))
                fail_msg("arc %u->%u (%s): %.1f m in %u ds is not its class's speed", u, v,
                         gp_road_class_name(c), m, g->w[i]);
            per_class[c]++;
            int back = 0;
            for (uint32_t j = g->row[v]; j < g->row[v + 1] && !back; j++) back = g->col[j] == u;
            oneway += !back;
        }
    assert_true(per_class[GP_ROAD_RESIDENTIAL] > g->m / 2);
    assert_true(per_class[GP_ROAD_MOTORWAY] > 0 && per_class[GP_ROAD_PRIMARY] > 0 &&
                per_class[GP_ROAD_SECONDARY] > 0 && per_class[GP_ROAD_TERTIARY] > 0);
    assert_true(oneway > 0 && oneway < g->m / 20);
    assert_string_equal(gp_road_class_name(GP_ROAD_MOTORWAY), "motorway");
    gp_graph_unref(g);
}

/* ---------------------------------------------------------------------------------------------
 * against the real graphs */

static void measure(const gp_graph *g, const char *what, roadlike *r) {
    if (roadlike_measure(g, ROADLIKE_ND_SEEDS, r)) fail_msg("%s: measuring failed", what);
    print_message("%-22s n %8llu  mean degree %.3f  hop diameter %5u  ND fill %.3g  opc %.3g\n",
                  what, (unsigned long long)r->n, r->mean_degree, r->hop_diameter, r->fill, r->opc);
}

/* 1 when every bound of issue 18 holds for x against the real graph ref. */
static int within(const roadlike *x, const roadlike *ref) {
    double f = x->fill / ref->fill, o = x->opc / ref->opc,
           h = (double)x->hop_diameter / ref->hop_diameter;
    double d = x->mean_degree / ref->mean_degree;
    return f >= 0.5 && f <= 2 && o >= 0.5 && o <= 2 && h >= 0.5 && h <= 2 && d >= 0.8 && d <= 1.2;
}

static void test_like_real_graphs(void **state) {
    (void)state;
    const char *d = getenv("GPATH_DATA");
    struct stat st;
    char p[600];
    static const char *names[] = {"NY", "BAY"};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/dimacs/USA-road-d.%s.gr.gz", d ? d : "", names[k]);
        if (!d || stat(p, &st) != 0) {
            print_message("no %s (GPATH_DATA): skipping the comparison with the real graphs\n", p);
            skip();
        }
        gp_err err;
        gp_graph *real = gp_graph_load(p, NULL, &err);
        if (!real) fail_msg("%s: %s", p, err.msg);
        roadlike r, x;
        char what[64];
        snprintf(what, sizeof what, "%s (real)", names[k]);
        measure(real, what, &r);
        assert_int_equal(r.components, 1);
        for (uint64_t seed = 1; seed <= 2; seed++) {
            gp_graph *g = gen(real->n, seed);
            snprintf(what, sizeof what, "gen:%u:%llu", real->n, (unsigned long long)seed);
            measure(g, what, &x);
            assert_int_equal(x.components, 1);
            if (!within(&x, &r))
                fail_msg("%s is not road-like against %s: fill x%.2f, operations x%.2f, mean "
                         "degree x%.2f, "
                         "hop diameter x%.2f",
                         what, names[k], x.fill / r.fill, x.opc / r.opc,
                         x.mean_degree / r.mean_degree, (double)x.hop_diameter / r.hop_diameter);
            gp_graph_unref(g);
        }
        if (k == 0) { /* the grid of the same size is not road-like by this measure */
            gp_graph *g = gp_generate_grid(real->n, 1, &err);
            assert_non_null(g);
            snprintf(what, sizeof what, "grid:%u", real->n);
            measure(g, what, &x);
            assert_true(x.opc > 2 * r.opc);
            assert_false(within(&x, &r));
            gp_graph_unref(g);
        }
        gp_graph_unref(real);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_and_deterministic),
        cmocka_unit_test(test_strongly_connected),
        cmocka_unit_test(test_travel_times),
        cmocka_unit_test(test_like_real_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
