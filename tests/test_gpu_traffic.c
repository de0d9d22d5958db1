/* test_gpu_traffic.c - live traffic on the GPU: a traffic version (engine/traffic.h: speeds of
 * every 7th road arc's segments and penalties on every 11th turn, drawn from the graph's own OSM
 * ids) attached to the CUDA engine (CCH customized on the GPU) answers exactly as the CPU engine's
 * Dijkstra family on the same version, and so do two versions after it with other speeds and no
 * penalties: tables, one-to-all trees and routes, on
 * tests/data/osm/traffic.osm and turncost.osm and on Liechtenstein when $GPATH_DATA/osm has it.
 * Without a GPU (or in a build without CUDA) every test skips with "no CUDA device: GPU tests
 * skipped"; GPATH_REQUIRE_GPU=1 turns that into a failure. Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/snap.h"
#include "engine/traffic.h"
#include "graph/turns.h"
#include "storage/source.h"
#include "tests/gpu_pair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The OSM id of point i of road arc a: 0 its tail, 1..ns its shape points, ns + 1 its head. */
static int64_t pid(const gp_graph *g, uint32_t a, uint32_t i) {
    const double *x, *y;
    uint32_t ns = g->shape_osm_id ? gp_graph_arc_shape(g, a, &x, &y) : 0;
    if (i == 0) return gp_graph_orig_id(g, gp_graph_arc_tail(g, a));
    if (i > ns) return gp_graph_orig_id(g, g->col[a]);
    return g->shape_osm_id[g->arc_shape[a] + i - 1];
}

/* Speeds (5..95 km/h) on every segment of every 7th arc, penalties (0..290 s) on every 11th turn
 * of the turn graph; no closure (a closed arc is no arc to the CCH, a huge one to Dijkstra). */
static void traffic_of(const gp_graph *g, gp_speed_entry **sp, size_t *ns, gp_turn_entry **tp,
                       size_t *nt) {
    *ns = *nt = 0;
    *sp = malloc(sizeof **sp * (g->m + g->arc_shape[g->m] + 1));
    const gp_graph *tg = ((const gp_turns *)g->turns)->tg;
    *tp = malloc(sizeof **tp * (tg->m / 11 + 1));
    for (uint32_t a = 0; a < g->m; a += 7) {
        const double *x, *y;
        uint32_t k = g->shape_osm_id ? gp_graph_arc_shape(g, a, &x, &y) : 0;
        for (uint32_t i = 0; i <= k; i++)
            (*sp)[(*ns)++] = (gp_speed_entry){pid(g, a, i), pid(g, a, i + 1), 5.0 + (a % 10) * 10};
    }
    for (uint32_t a = 0; a < tg->n; a++)
        for (uint32_t e = tg->row[a]; e < tg->row[a + 1]; e++) {
            if (e % 11) continue;
            const double *x, *y;
            uint32_t b = tg->col[e], k = g->shape_osm_id ? gp_graph_arc_shape(g, a, &x, &y) : 0;
            (*tp)[(*nt)++] = (gp_turn_entry){pid(g, a, k), pid(g, a, k + 1), pid(g, b, 1),
                                             (double)(e % 30) * 10};
        }
}

/* vg (GPU engine) answers as vc (CPU engine): tables, trees and routes between up to K nodes. */
static void answers_equal(const char *spec, gp_graph *vg, gp_graph *vc) {
    gp_err err = {0};
    const gp_cch *c = ((const gp_turns *)vg->turns)->tg->cch;
    assert_non_null(c);
    assert_non_null(c->gpu); /* customized on the device */
    enum { K = 60 };
    gp_snap s[K];
    uint32_t k = 0;
    for (uint32_t v = 0; v < vg->n && k < K; v += vg->n / K + 1) gp_snap_at_node(vg, v, &s[k++]);
    uint64_t tg_[K * K], tc_[K * K];
    assert_int_equal(gp_engine_table_snap(gpu, vg, s, k, s, k, tg_, &err), GP_OK);
    assert_int_equal(gp_engine_table_snap(cpu, vc, s, k, s, k, tc_, &err), GP_OK);
    uint64_t *dg = malloc(sizeof *dg * vg->n), *dc = malloc(sizeof *dc * vg->n);
    for (uint32_t i = 0; i < k; i++) {
        for (uint32_t j = 0; j < k; j++)
            if (tg_[i * k + j] != tc_[i * k + j])
                fail_msg("%s table %u -> %u: gpu %llu, cpu %llu", spec, i, j,
                         (unsigned long long)tg_[i * k + j], (unsigned long long)tc_[i * k + j]);
        assert_int_equal(gp_engine_sssp_snap(gpu, vg, &s[i], GP_INF, dg, NULL, &err), GP_OK);
        assert_int_equal(gp_engine_sssp_snap(cpu, vc, &s[i], GP_INF, dc, NULL, &err), GP_OK);
        for (uint32_t v = 0; v < vg->n; v++)
            if (dg[v] != dc[v])
                fail_msg("%s tree %u node %u: gpu %llu, cpu %llu", spec, i, v,
                         (unsigned long long)dg[v], (unsigned long long)dc[v]);
        gp_snap_route r;
        uint32_t j = (i * 7 + 3) % k;
        assert_int_equal(gp_engine_route_snap(gpu, vg, &s[i], &s[j], GP_P2P_AUTO, &r, &err), GP_OK);
        assert_int_equal(r.dist, tc_[i * k + j]);
        gp_snap_route_free(&r);
    }
    free(dg);
    free(dc);
}

/* A traffic version, then versions of it in turn (each customized on the device beside its
 * predecessor's state, and only the edges that differ from it fetched: kernels/cch.h
 * gp_dcch_customize_diff), each answering as the CPU engine's version of the same data. */
static void compare(const char *spec) {
    gp_err err = {0};
    gp_graph *gg, *gc;
    gpu_pair_load(spec, &gg, &gc);
    gp_speed_entry *sp;
    gp_turn_entry *tp;
    size_t ns, nt;
    traffic_of(gc, &sp, &ns, &tp, &nt);
    for (int round = 0; round < 3; round++) {
        gp_graph *vg = NULL, *vc = NULL;
        gp_traffic_stats sg, sc;
        assert_int_equal(gp_traffic_apply(gpu, gg, sp, ns, tp, nt, &vg, NULL, NULL, &sg, &err),
                         GP_OK);
        assert_int_equal(gp_traffic_apply(cpu, gc, sp, ns, tp, nt, &vc, NULL, NULL, &sc, &err),
                         GP_OK);
        assert_int_equal(sg.speeds_unknown, 0);
        assert_int_equal(sg.turns_unknown, 0);
        assert_true(sg.arcs_changed > 0 && sg.arcs_changed == sc.arcs_changed);
        assert_true(round > 0 || (sg.turns_changed > 0 && sg.turns_changed == sc.turns_changed));
        assert_string_equal(vg->version, vc->version);
        answers_equal(spec, vg, vc);
        gp_graph_unref(gg);
        gp_graph_unref(gc);
        gg = vg, gc = vc;
        /* the next round: other speeds on every 7th arc's segments, the turns as they are */
        for (size_t i = 0; i < ns; i++)
            sp[i].kmh = 5.0 + (double)((i * 13 + (size_t)round * 29) % 90);
        nt = 0;
    }
    free(sp);
    free(tp);
    gp_graph_unref(gg);
    gp_graph_unref(gc);
}

static void test_hand_written(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    compare("osm:tests/data/osm/traffic.osm?profile=car");
    compare("osm:tests/data/osm/turncost.osm?profile=car");
}

static void test_extract(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    const char *data = getenv("GPATH_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/osm/liechtenstein-latest.osm.pbf", data ? data : "");
    if (!data || access(path, R_OK) != 0) {
        print_message("GPATH_DATA has no osm/liechtenstein-latest.osm.pbf: skipped\n");
        skip();
    }
    char spec[1200];
    snprintf(spec, sizeof spec, "osm:%s?profile=car", path);
    compare(spec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_written),
        cmocka_unit_test(test_extract),
    };
    return cmocka_run_group_tests(tests, gpu_pair_setup, gpu_pair_teardown);
}
