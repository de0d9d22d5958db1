/* test_gpu_match.c - map matching's transition tables on the GPU (gp_match_fill_cuda,
 * kernels/match.cu) against the CPU's: 200 noisy traces (tests/match_traces.h) on Monaco's OSM roads
 * from $GPATH_DATA, with turn costs (its turn graph) and without (the road graph), and on
 * tests/data/osm/match.osm: every table entry bit for bit equal to gp_match_fill's and the matchings
 * equal to gp_match_trace's; the device copy kept with a graph reused by its next batch and its
 * reweighted versions. Skips without a CUDA device ("no CUDA device: GPU tests skipped"),
 * fails then when GPATH_REQUIRE_GPU=1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine/match.h"
#include "storage/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/match_traces.h"

#define TRACES 200
#define POINTS 100

/* GPU tables of TRACES traces on g == the CPU's; 0 when the GPU half cannot run (skipped). */
static int gpu_equals_cpu(const gp_graph *g, double noise_m) {
    gp_match_opts o;
    gp_match_opts_default(&o);
    gp_match_point *p = calloc((size_t)TRACES * POINTS, sizeof *p);
    double *ts = calloc((size_t)TRACES * POINTS, sizeof *ts);
    uint32_t n[TRACES];
    gp_match_prep *pr = calloc(TRACES, sizeof *pr), *ptr[TRACES];
    assert_non_null(p);
    assert_non_null(ts);
    assert_non_null(pr);
    uint64_t seed = 2026;
    gp_err err;
    size_t rows = 0;
    for (int i = 0; i < TRACES; i++) {
        n[i] = mt_trace(g, &seed, noise_m, p + (size_t)i * POINTS, ts + (size_t)i * POINTS, POINTS);
        const double *t = i % 2 ? ts + (size_t)i * POINTS : NULL;
        assert_int_equal(gp_match_prepare(g, p + (size_t)i * POINTS, n[i], t, &o, &pr[i], &err),
                         GP_OK);
        ptr[i] = &pr[i];
        rows += pr[i].njobs;
    }
    assert_true(rows > 1000);
    gp_match_gpu_stats st;
    int rc = gp_match_fill_cuda(g, ptr, TRACES, &st, &err);
    if (rc == GP_EUNSUPPORTED) {
        const char *r = getenv("GPATH_REQUIRE_GPU");
        if (r && strcmp(r, "1") == 0) fail_msg("GPATH_REQUIRE_GPU=1 but %s", err.msg);
        print_message("no CUDA device: GPU tests skipped (%s)\n", err.msg);
    } else {
        assert_int_equal(rc, GP_OK);
        print_message("%zu rows on the GPU in %.2f ms (%llu run again on the CPU)\n", rows,
                      st.gpu_ms, (unsigned long long)st.redone);
        assert_int_equal(st.rows, rows);
        assert_true(st.redone <= st.rows);
        size_t finite = 0;
        for (int i = 0; i < TRACES; i++) {
            gp_match_prep c;
            const double *t = i % 2 ? ts + (size_t)i * POINTS : NULL;
            assert_true(pr[i].filled);
            assert_int_equal(gp_match_prepare(g, p + (size_t)i * POINTS, n[i], t, &o, &c, &err),
                             GP_OK);
            assert_int_equal(gp_match_fill(g, &c, NULL, &err), GP_OK);
            assert_int_equal(c.ntab, pr[i].ntab);
            for (size_t j = 0; j < c.ntab; j++) {
                if (memcmp(&c.tw[j], &pr[i].tw[j], 8) || memcmp(&c.tm[j], &pr[i].tm[j], 8))
                    fail_msg("trace %d entry %zu: CPU %.17g m / %.17g, GPU %.17g m / %.17g", i, j,
                             c.tm[j], c.tw[j], pr[i].tm[j], pr[i].tw[j]);
                finite += isfinite(c.tm[j]);
            }
            gp_match a, b;
            assert_int_equal(gp_match_trace(g, p + (size_t)i * POINTS, n[i], t, &o, &a, &err),
                             GP_OK);
            assert_int_equal(gp_match_run(g, p + (size_t)i * POINTS, t, &o, &pr[i], &b, &err),
                             GP_OK);
            mt_same(&a, &b);
            gp_match_free(&a);
            gp_match_free(&b);
            gp_match_prep_free(&c);
        }
        assert_true(finite > rows); /* reached targets, not only INFINITY */
    }
    for (int i = 0; i < TRACES; i++) gp_match_prep_free(&pr[i]);
    free(pr);
    free(p);
    free(ts);
    return rc == GP_OK;
}

static gp_graph *load(const char *spec, int turns) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    eng->turn_costs = turns;
    if (gp_engine_attach(eng, g, &err)) fail_msg("attach: %s", err.msg);
    assert_true(!turns == !g->turns);
    return g;
}

static void test_match_osm(void **state) {
    (void)state;
    for (int turns = 0; turns < 2; turns++) {
        gp_graph *g = load("osm:tests/data/osm/match.osm?profile=car", turns);
        int ran = gpu_equals_cpu(g, 5);
        gp_graph_unref(g);
        if (!ran) return;
    }
}

/* The device copy kept with a graph (gp_graph.mdev): a second batch on it, a reweighted version
 * (its own weights on the device, its base's topology) and the base again, each equal to the
 * CPU's; the version's tables differ from the base's, so reading the base's weights fails. */
static void test_versions(void **state) {
    (void)state;
    gp_graph *g = load("osm:tests/data/osm/match.osm?profile=car", 1);
    if (!gpu_equals_cpu(g, 5)) {
        gp_graph_unref(g);
        return;
    }
    assert_non_null(g->mdev);
    assert_true(gpu_equals_cpu(g, 5));
    uint32_t *w = malloc(sizeof *w * g->m), *rw = malloc(sizeof *rw * g->m);
    assert_non_null(w);
    assert_non_null(rw);
    for (uint32_t a = 0; a < g->m; a++) w[a] = g->w[a] * 3 + 7, rw[a] = g->rw[a] * 3 + 7;
    gp_err err = {0};
    gp_graph *h = gp_graph_reweight(g, w, rw, &err);
    assert_non_null(h);
    assert_int_equal(gp_engine_attach(eng, h, &err), GP_OK);
    assert_non_null(h->turns);
    assert_true(gpu_equals_cpu(h, 5));
    assert_non_null(h->mdev);
    assert_ptr_not_equal(h->mdev, g->mdev);
    assert_true(gpu_equals_cpu(g, 5));
    gp_graph_unref(h);
    gp_graph_unref(g);
}

static void test_monaco(void **state) {
    (void)state;
    const char *d = getenv("GPATH_DATA");
    char path[1024], spec[1100];
    snprintf(path, sizeof path, "%s/osm/monaco.osm.pbf", d ? d : "");
    FILE *f = d ? fopen(path, "rb") : NULL;
    if (!f) {
        print_message("GPATH_DATA has no osm/monaco.osm.pbf: skipped\n");
        return;
    }
    fclose(f);
    snprintf(spec, sizeof spec, "osm:%s?profile=car", path);
    for (int turns = 1; turns >= 0; turns--) {
        gp_graph *g = load(spec, turns);
        int ran = gpu_equals_cpu(g, 8);
        gp_graph_unref(g);
        if (!ran) return;
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_osm),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_monaco),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
