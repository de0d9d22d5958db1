/* test_gpu_turns.c - turn costs on the GPU: the turn graph of an OSM road graph (graph/turns.h)
 * attached to the CUDA engine (CCH customized on the GPU, GPU PHAST and RPHAST) answers exactly
 * as the CPU engine's Dijkstra family: tables between nodes and snapped positions, one-to-all
 * trees and routes, on tests/data/osm/turncost.osm and turns.osm and on Liechtenstein when
 * $GPATH_DATA/osm has it; also with the turn restrictions in the turn model (loaded with
 * restrictions_as_turns: removed turns, duplicated tg nodes for via ways, viaways.osm's two via
 * ways); and twelve cost changes in a row (generated road graph, Monaco from data/osm) against the
 * same changes on the CPU engine: small ones (customized on the host from the version before
 * and the device state built from its, engine/cch.h gp_cch_gpu_customize_delta;
 * the third on the device arrays of the version freed before it), then a large one (a full
 * customization on the device), each version's device weights and witnesses equal to the host's
 * and to a full CPU customization's. Without a GPU (or in a build without CUDA) every test skips
 * with "no CUDA device: GPU tests skipped"; GPATH_REQUIRE_GPU=1 turns that into a failure. Run
 * from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/change.h"
#include "engine/engine_lab.h"
#include "engine/snap.h"
#include "graph/turns.h"
#include "kernels/cch_lab.h"
#include "storage/source.h"
#include "tests/gpu_pair.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* up to k positions: every step-th node and a point a third along every step-th arc */
static uint32_t positions(const gp_graph *g, gp_snap *s, uint32_t k, uint32_t step) {
    uint32_t c = 0;
    gp_err err = {0};
    for (uint32_t v = 0; v < g->n && c < k / 2; v += step) gp_snap_at_node(g, v, &s[c++]);
    for (uint32_t a = 0; a < g->m && c < k; a += step) {
        uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
        if (gp_snap_point(g, g->lon[u] + (g->lon[v] - g->lon[u]) / 3,
                          g->lat[u] + (g->lat[v] - g->lat[u]) / 3, 5, &s[c], &err) == GP_OK)
            c++;
    }
    return c;
}

/* Float32 cells through a table plan in blocks of 7 rows (the .npy and matrix-job path: on the
 * GPU, combined on the device) against the CPU engine's table of the same positions: nodes, and
 * two points on each of some arcs, either order (the direct way along one arc, and around and
 * back, are finished on the host). sat: the RPHAST cells saturate there (0: the default); each
 * block must then run in 64-bit cells. */
static void plan_cells(gp_graph *gg, gp_graph *gc, const char *spec, uint32_t sat) {
    enum { K = 48 };
    gp_err err = {0};
    gp_snap s[K];
    uint32_t k = 0, step = gg->m / 20 + 1;
    for (uint32_t v = 0; v < gg->n && k < K / 4; v += gg->n / 12 + 1)
        gp_snap_at_node(gg, v, &s[k++]);
    for (uint32_t a = 0; a < gg->m && k + 2 <= K; a += step) {
        uint32_t u = gp_graph_arc_tail(gg, a), v = gg->col[a];
        for (int f = 1; f <= 2; f++) {
            int g = a % 2 ? 3 - f : f; /* either order */
            if (gp_snap_point(gg, gg->lon[u] + (gg->lon[v] - gg->lon[u]) * g / 3.0,
                              gg->lat[u] + (gg->lat[v] - gg->lat[u]) * g / 3.0, 5, &s[k],
                              &err) == GP_OK)
                k++;
        }
    }
    const gp_cch *c = ((const gp_turns *)gg->turns)->tg->cch;
    gp_dcch_tune tn;
    gp_dcch_tune_defaults(&tn);
    if (sat) tn.sat = sat;
    assert_int_equal(gp_cch_gpu_sweep(c, &tn, &err), GP_OK);
    gp_cch_gpu_stats st0, st;
    assert_int_equal(gp_cch_gpu_stats_get(c, &st0), 0);
    uint64_t *want = malloc(sizeof *want * K * K);
    float *f = malloc(sizeof *f * K * K);
    assert_int_equal(gp_engine_table_snap(cpu, gc, s, k, s, k, want, &err), GP_OK);
    gp_table_plan *plan = gp_engine_table_plan_new(gpu, gg, s, k, &err);
    assert_non_null(plan);
    uint64_t *u = malloc(sizeof *u * K * K);
    int w64 = 1;
    for (uint32_t r0 = 0; r0 < k; r0 += 7) { /* as float32 (.npy) and as stored units */
        uint32_t n = k - r0 < 7 ? k - r0 : 7;
        memset(f + (size_t)r0 * k, 0x55, sizeof *f * n * k);
        memset(u + (size_t)r0 * k, 0x55, sizeof *u * n * k);
        if (gp_engine_table_plan_rows(plan, s + r0, n, NULL, f + (size_t)r0 * k, &err) != GP_OK ||
            gp_engine_table_plan_rows(plan, s + r0, n, u + (size_t)r0 * k, NULL, &err) != GP_OK)
            fail_msg("%s plan rows %u: %s", spec, r0, err.msg);
        assert_int_equal(gp_cch_gpu_stats_get(c, &st), 0);
        w64 &= st.table64;
    }
    gp_engine_table_plan_free(plan);
    if (st.cells != st0.cells + 2 * ((k + 6) / 7))
        fail_msg("%s: %llu of %u blocks combined on the device", spec,
                 (unsigned long long)(st.cells - st0.cells), 2 * ((k + 6) / 7));
    for (size_t x = 0; x < (size_t)k * k; x++)
        if (u[x] != want[x])
            fail_msg("%s stored cell %zu (%zu -> %zu): gpu %llu, cpu %llu", spec, x, x / k, x % k,
                     (unsigned long long)u[x], (unsigned long long)want[x]);
    free(u);
    if (sat && !w64) fail_msg("%s: saturating at %u, a block kept 32-bit cells", spec, sat);
    uint32_t unreachable = 0;
    for (size_t x = 0; x < (size_t)k * k; x++) {
        if (want[x] == GP_INF) {
            unreachable++;
            if (!isnan(f[x])) fail_msg("%s cell %zu: gpu %g, cpu no route", spec, x, f[x]);
        } else if (f[x] != (float)gp_graph_cost(gc, want[x])) {
            fail_msg("%s cell %zu (%zu -> %zu): gpu %.9g, cpu %.9g", spec, x, x / k, x % k, f[x],
                     (float)gp_graph_cost(gc, want[x]));
        }
    }
    print_message("%s: %u x %u plan cells on the device%s, %u unreachable\n", spec, k, k,
                  sat ? " (64-bit ends' table)" : "", unreachable);
    free(want);
    free(f);
    gp_dcch_tune_defaults(&tn);
    assert_int_equal(gp_cch_gpu_sweep(c, &tn, &err), GP_OK);
}

static void compare(const char *spec, int as_turns) {
    gp_err err = {0};
    gp_load_opts o;
    memset(&o, 0, sizeof o);
    o.restrictions_as_turns = as_turns;
    gp_graph *gg = gp_graph_load(spec, &o, &err), *gc = gp_graph_load(spec, &o, &err);
    if (!gg || !gc) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(gpu, gg, &err), GP_OK);
    assert_int_equal(gp_engine_attach(cpu, gc, &err), GP_OK);
    assert_non_null(gg->turns);
    const gp_cch *c = ((const gp_turns *)gg->turns)->tg->cch;
    assert_non_null(c);
    assert_non_null(c->gpu); /* customized on the device */
    enum { K = 60 };
    gp_snap s[K];
    uint32_t k = positions(gg, s, K, gg->n / 25 + 1);
    uint64_t tg_[K * K], tc_[K * K];
    assert_int_equal(gp_engine_table_snap(gpu, gg, s, k, s, k, tg_, &err), GP_OK);
    assert_int_equal(gp_engine_table_snap(cpu, gc, s, k, s, k, tc_, &err), GP_OK);
    /* in blocks of rows with the same targets, as a streamed .npy answer asks (the device keeps
     * the targets' RPHAST state between blocks), another target set between two blocks */
    uint64_t blk[7 * K];
    for (uint32_t r0 = 0; r0 < k; r0 += 7) {
        uint32_t kb = k - r0 < 7 ? k - r0 : 7;
        assert_int_equal(gp_engine_table_snap(gpu, gg, s + r0, kb, s, k, blk, &err), GP_OK);
        for (uint32_t x = 0; x < kb * k; x++)
            if (blk[x] != tc_[(size_t)r0 * k + x])
                fail_msg("%s block at row %u cell %u: gpu %llu, cpu %llu", spec, r0, x,
                         (unsigned long long)blk[x], (unsigned long long)tc_[(size_t)r0 * k + x]);
        if (r0 == 7 && k > 2) { /* the targets' tail only: rows are the full table's columns 1.. */
            assert_int_equal(gp_engine_table_snap(gpu, gg, s, kb, s + 1, k - 1, blk, &err), GP_OK);
            for (uint32_t i = 0; i < kb; i++)
                for (uint32_t j = 1; j < k; j++)
                    assert_int_equal(blk[i * (k - 1) + j - 1], tc_[i * k + j]);
        }
    }
    uint64_t *dg = malloc(sizeof *dg * gg->n), *dc = malloc(sizeof *dc * gg->n);
    for (uint32_t i = 0; i < k; i++) {
        for (uint32_t j = 0; j < k; j++)
            if (tg_[i * k + j] != tc_[i * k + j])
                fail_msg("%s table %u -> %u: gpu %llu, cpu %llu", spec, i, j,
                         (unsigned long long)tg_[i * k + j], (unsigned long long)tc_[i * k + j]);
        assert_int_equal(gp_engine_sssp_snap(gpu, gg, &s[i], GP_INF, dg, NULL, &err), GP_OK);
        assert_int_equal(gp_engine_sssp_snap(cpu, gc, &s[i], GP_INF, dc, NULL, &err), GP_OK);
        for (uint32_t v = 0; v < gg->n; v++)
            if (dg[v] != dc[v])
                fail_msg("%s tree %u node %u: gpu %llu, cpu %llu", spec, i, v,
                         (unsigned long long)dg[v], (unsigned long long)dc[v]);
        gp_snap_route r;
        uint32_t j = (i * 7 + 3) % k;
        assert_int_equal(gp_engine_route_snap(gpu, gg, &s[i], &s[j], GP_P2P_AUTO, &r, &err), GP_OK);
        assert_int_equal(r.dist, tc_[i * k + j]);
        gp_snap_route_free(&r);
    }
    free(dg);
    free(dc);
    plan_cells(gg, gc, spec, 0);
    plan_cells(gg, gc, spec, 300);
    gp_graph_unref(gg);
    gp_graph_unref(gc);
}

static void test_hand_written(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    compare("osm:tests/data/osm/turncost.osm?profile=car", 0);
    compare("osm:tests/data/osm/turns.osm?profile=car", 0);
    compare("osm:tests/data/osm/viaway.osm?profile=bicycle", 0);
    static const char *restr[] = {"turns", "viaway", "viaways"};
    for (int i = 0; i < 3; i++) {
        char spec[128];
        snprintf(spec, sizeof spec, "osm:tests/data/osm/%s.osm?profile=car", restr[i]);
        compare(spec, 1);
    }
    /* two via ways: 1 -> 2 -> 3 -> 4 -> 5 forbidden, the detour north (697 ds) on the GPU too */
    gp_err err = {0};
    gp_load_opts o = {.restrictions_as_turns = 1};
    gp_graph *g = gp_graph_load("osm:tests/data/osm/viaways.osm?profile=car", &o, &err);
    assert_non_null(g);
    assert_int_equal(gp_engine_attach(gpu, g, &err), GP_OK);
    assert_int_equal(((const gp_turns *)g->turns)->ndups, 2);
    gp_path p = {0};
    assert_int_equal(
        gp_engine_p2p(gpu, g, gp_graph_index(g, 1), gp_graph_index(g, 5), GP_P2P_AUTO, &p, &err),
        GP_OK);
    assert_int_equal(p.dist, 697);
    gp_path_free(&p);
    gp_graph_unref(g);
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
    compare(spec, 0);
    compare(spec, 1);
}

/* A cost change with turn costs on the GPU (PATCH .../links): the turn graph reweighted, its CCH
 * customized on the device over the first version's topology. */
/* The device's weights and witnesses of version a's turn-graph CCH: the host's, and a full CPU
 * customization's of the same metric. */
static void device_as_full(const gp_graph *a, int r) {
    const gp_graph *tg = ((const gp_turns *)a->turns)->tg;
    const gp_cch *c = tg->cch;
    size_t m = c->topo->m;
    gp_err err = {0};
    uint32_t *w[4];
    for (int i = 0; i < 4; i++) assert_non_null(w[i] = malloc(m * 4 + 4));
    assert_int_equal(gp_cch_gpu_weights(c, w[0], w[1], w[2], w[3], &err), GP_OK);
    gp_cch *f = NULL;
    assert_int_equal(gp_cch_prepare(tg, &f, &err), GP_OK);
    f->prev = NULL;
    assert_int_equal(gp_cch_map_metric(f, tg, &err), GP_OK);
    assert_int_equal(gp_cch_customize(f, 2, &err), GP_OK);
    const uint32_t *host[4] = {c->fw, c->bw, c->fmid, c->bmid},
                   *full[4] = {f->fw, f->bw, f->fmid, f->bmid};
    static const char *name[4] = {"fw", "bw", "fmid", "bmid"};
    for (int i = 0; i < 4; i++)
        for (size_t e = 0; e < m; e++)
            if (w[i][e] != host[i][e] || w[i][e] != full[i][e])
                fail_msg("change %d %s[%zu]: device %u, host %u, full CPU %u", r, name[i], e,
                         w[i][e], host[i][e], full[i][e]);
    assert_memory_equal(c->wit, f->wit, m * 16);
    /* the delta path whatever the engine chose: customized on the host from the first version
     * (the default budget), the device state from the first version's with the list scattered */
    gp_cch *d = NULL;
    assert_int_equal(gp_cch_prepare(tg, &d, &err), GP_OK);
    const gp_cch *p = d->prev;
    uint32_t *edges = NULL, n = 0;
    assert_int_equal(gp_cch_customize_partial(d, 2, 0, &edges, &n, &err), GP_OK);
    if (d->custom_partial) {
        if (gp_cch_gpu_customize_delta(d, p, edges, n, 0, &err) != GP_OK)
            fail_msg("change %d: device state from the predecessor: %s", r, err.msg);
        assert_int_equal(gp_cch_gpu_weights(d, w[0], w[1], w[2], w[3], &err), GP_OK);
        for (int i = 0; i < 4; i++)
            for (size_t e = 0; e < m; e++)
                if (w[i][e] != full[i][e])
                    fail_msg("change %d, delta path: %s[%zu]: device %u, full CPU %u", r, name[i],
                             e, w[i][e], full[i][e]);
    } else {
        print_message("change %d: the host's partial pass gave up (no delta path check)\n", r);
    }
    gp_cch_free(d);
    gp_cch_free(f);
    for (int i = 0; i < 4; i++) free(w[i]);
}

/* gg on the GPU engine and gc on the CPU engine: the same graph; a chain of changes, each made
 * from the version before it as PATCHes are: small ones of 4 links (customized on the host from
 * the predecessor, not the base, and the device state from the predecessor's), one of 1% of the
 * arcs (past the host's partial pass: the device customization from the predecessor's device
 * metric with the changed entries scattered, the differences fetched) and one of a quarter of
 * the arcs (every array fetched), applied to both engines, each version compared. */
static void compare_changes(gp_graph *gg, gp_graph *gc) {
    gp_err err = {0};
    assert_int_equal(gp_engine_attach(gpu, gg, &err), GP_OK);
    assert_int_equal(gp_engine_attach(cpu, gc, &err), GP_OK);
    uint64_t seed = 3;
    gp_graph *a = gp_graph_ref(gg), *b = gp_graph_ref(gc);
    enum { K = 40, ROUNDS = 12, MID = 5, BIG = 8 };
    int fast = 0, small = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t nl = r == BIG ? a->m / 4 : r == MID ? a->m / 100 + 1 : 4;
        gp_link_change *ch = malloc(sizeof *ch * nl);
        assert_non_null(ch);
        for (uint32_t k = 0; k < nl; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t e = r == BIG ? k * 4 : (uint32_t)((seed >> 33) % a->m);
            uint32_t u = gp_graph_arc_tail(a, e);
            double c = (double)a->w[e] / a->scale;
            ch[k] = (gp_link_change){a->ext[u], a->ext[a->col[e]], 0,
                                     (double)(uint64_t)(c * (k % 2 ? 3 : 0.5))};
        }
        gp_graph *a2 = NULL, *b2 = NULL;
        assert_int_equal(gp_engine_change_links(gpu, a, ch, nl, NULL, 0, &a2, NULL, &err), GP_OK);
        assert_int_equal(gp_engine_change_links(cpu, b, ch, nl, NULL, 0, &b2, NULL, &err), GP_OK);
        free(ch);
        uint64_t prev_hash = ((const gp_turns *)a->turns)->tg->hash;
        gp_graph_unref(a);
        gp_graph_unref(b);
        a = a2;
        b = b2;
        const gp_cch *c = ((const gp_turns *)a->turns)->tg->cch;
        assert_non_null(c);
        assert_non_null(c->gpu); /* customized on the device */
        gp_cch_gpu_stats gs;
        assert_int_equal(gp_cch_gpu_stats_get(c, &gs), 0);
        print_message("change %d (%u links): partial %d, from the predecessor's device state %d, "
                      "full with a diff %d (%u edges), every array %d, spare %d\n",
                      r, nl, c->custom_partial, gs.delta, gs.diff, gs.scattered, gs.whole,
                      gs.spare);
        if (r != MID && r != BIG) {
            /* 4 links off the predecessor: on the host from it, or on the device with a diff */
            assert_true(gs.delta || gs.diff);
            small++;
            fast += gs.delta;
            if (gs.delta) assert_true(c->delta_base == prev_hash); /* not from the base */
        }
        if (r == MID || r == BIG) assert_int_equal(gs.delta, 0); /* on the device */
        if (r == BIG) assert_true(gs.diff || gs.whole);
        /* the version before the last one is gone: its device arrays serve this one */
        if (r >= 2) assert_int_equal(gs.spare, 1);
        device_as_full(a, r);
        uint32_t src[K];
        for (uint32_t i = 0; i < K; i++) src[i] = (uint32_t)(((uint64_t)i * 7919 + 13) % a->n);
        uint64_t ta[K * K], tb[K * K];
        assert_int_equal(gp_engine_table(gpu, a, src, K, src, K, ta, &err), GP_OK);
        assert_int_equal(gp_engine_table(cpu, b, src, K, src, K, tb, &err), GP_OK);
        for (uint32_t i = 0; i < K * K; i++)
            if (ta[i] != tb[i])
                fail_msg("change %d table %u -> %u: gpu %llu, cpu %llu", r, i / K, i % K,
                         (unsigned long long)ta[i], (unsigned long long)tb[i]);
        uint64_t *da = malloc(sizeof *da * a->n), *db = malloc(sizeof *db * a->n);
        assert_int_equal(gp_engine_sssp(gpu, a, src[r], GP_INF, da, NULL, &err), GP_OK);
        assert_int_equal(gp_engine_sssp(cpu, b, src[r], GP_INF, db, NULL, &err), GP_OK);
        for (uint32_t v = 0; v < a->n; v++)
            if (da[v] != db[v])
                fail_msg("change %d tree node %u: gpu %llu, cpu %llu", r, v,
                         (unsigned long long)da[v], (unsigned long long)db[v]);
        free(da);
        free(db);
    }
    /* from the predecessor, a chain of small changes stays small; on this small graph 4 links
     * already pass the engine's cut to the device (0.1% of the CCH's edges), so the host's partial
     * pass is not required here (tests/test_turn_change.c holds the chain to it on the CPU, and
     * device_as_full checks the delta path's device state whenever the partial pass holds) */
    print_message("%d of %d small changes on the host's partial pass\n", fast, small);
    gp_graph_unref(a);
    gp_graph_unref(b);
}

static void test_changes_generated(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    gp_err err = {0};
    gp_graph *gg = gp_generate_road(3000, 5, &err), *gc = gp_generate_road(3000, 5, &err);
    assert_non_null(gg);
    assert_non_null(gc);
    snprintf(gg->profile, sizeof gg->profile, "car"); /* travel times and coordinates */
    snprintf(gc->profile, sizeof gc->profile, "car");
    compare_changes(gg, gc);
    gp_graph_unref(gg);
    gp_graph_unref(gc);
}

static void test_changes_monaco(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    const char *spec = "osm:data/osm/monaco.osm.pbf?profile=car";
    if (access("data/osm/monaco.osm.pbf", R_OK) != 0) {
        print_message("no data/osm/monaco.osm.pbf (make data): skipped\n");
        skip();
    }
    gp_err err = {0};
    gp_graph *gg = gp_graph_load(spec, NULL, &err), *gc = gp_graph_load(spec, NULL, &err);
    if (!gg || !gc) fail_msg("%s: %s", spec, err.msg);
    compare_changes(gg, gc);
    gp_graph_unref(gg);
    gp_graph_unref(gc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_written),
        cmocka_unit_test(test_extract),
        cmocka_unit_test(test_changes_generated),
        cmocka_unit_test(test_changes_monaco),
    };
    return cmocka_run_group_tests(tests, gpu_pair_setup, gpu_pair_teardown);
}
