/* test_gpu_metric.c - per-request metrics (engine/metric.h) customized on the GPU: the metric of
 * an OSM road graph with closed arcs (exclude= classes, a big truck's limits), attached to the
 * CUDA engine (its turn graph's CCH customized on the device), answers tables between snapped
 * positions exactly as the CPU engine's Dijkstra on the same metric, on
 * tests/data/osm/exclude.osm and on Liechtenstein when $GPATH_DATA/osm has it. Without a GPU (or
 * in a build without CUDA) every test skips with "no CUDA device: GPU tests skipped";
 * GPATH_REQUIRE_GPU=1 turns that into a failure. Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/metric.h"
#include "graph/osm_profile.h"
#include "graph/turns.h"
#include "storage/source.h"
#include "tests/gpu_pair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int teardown(void **state) {
    gp_metric_cache_clear();
    return gpu_pair_teardown(state);
}

static void compare(const char *spec) {
    gp_err err = {0};
    gp_graph *gg, *gc;
    gpu_pair_load(spec, &gg, &gc);
    gp_metric_key k;
    memset(&k, 0, sizeof k);
    k.exclude = GP_OSM_CLASS_MOTORWAY | GP_OSM_CLASS_TOLL | GP_OSM_CLASS_FERRY;
    const double v[GP_LIMITS] = {4.0, 2.55, 18.75, 40, 11.5};
    for (int i = 0; i < GP_LIMITS; i++)
        assert_int_equal(gp_metric_vehicle(i, v[i], &k.veh[i], &err), GP_OK);
    gp_graph *mg = NULL, *mc = NULL;
    assert_int_equal(gp_metric_get(gpu, gg, &k, &mg, &err), GP_OK);
    assert_int_equal(gp_metric_get(cpu, gc, &k, &mc, &err), GP_OK);
    assert_non_null(mg->turns);
    const gp_cch *c = ((const gp_turns *)mg->turns)->tg->cch;
    assert_non_null(c);
    assert_non_null(c->gpu); /* the metric customized on the device */
    enum { K = 40 };
    gp_snap s[K];
    uint32_t n = 0, step = gg->n / K + 1;
    for (uint32_t x = 0; x < gg->n && n < K; x += step) gp_snap_at_node(mg, x, &s[n++]);
    uint64_t *tg_ = malloc(sizeof *tg_ * K * K), *tc_ = malloc(sizeof *tc_ * K * K);
    assert_non_null(tg_);
    assert_non_null(tc_);
    assert_int_equal(gp_engine_table_snap(gpu, mg, s, n, s, n, tg_, &err), GP_OK);
    assert_int_equal(gp_engine_table_snap(cpu, mc, s, n, s, n, tc_, &err), GP_OK);
    for (uint32_t i = 0; i < n * n; i++)
        if (tg_[i] != tc_[i])
            fail_msg("%s: cell %u: GPU %llu, CPU %llu", spec, i, (unsigned long long)tg_[i],
                     (unsigned long long)tc_[i]);
    free(tg_);
    free(tc_);
    gp_graph_unref(mg);
    gp_graph_unref(mc);
    gp_metric_cache_clear();
    gp_graph_unref(gg);
    gp_graph_unref(gc);
}

static void test_exclude_osm(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    compare("osm:tests/data/osm/exclude.osm?profile=car");
}

static void test_liechtenstein(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    const char *dir = getenv("GPATH_DATA");
    char path[1024], spec[1100];
    snprintf(path, sizeof path, "%s/osm/liechtenstein-latest.osm.pbf", dir ? dir : "data");
    if (access(path, R_OK) != 0) {
        print_message("%s absent (make data): skipped\n", path);
        skip();
    }
    snprintf(spec, sizeof spec, "osm:%s?profile=truck", path);
    compare(spec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exclude_osm),
        cmocka_unit_test(test_liechtenstein),
    };
    return cmocka_run_group_tests(tests, gpu_pair_setup, teardown);
}
