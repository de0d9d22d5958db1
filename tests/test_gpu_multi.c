/* test_gpu_multi.c - every GPU of the host (cuda_devices, engine/engine.h): engines on two device
 * states of one GPU (cuda_devices = 0,0: how the path is tested with one GPU) and on every GPU
 * (all) answer exactly as the engine on one device: tables (row shares per device, shares of one
 * row and an odd split), one-to-all trees (round-robin over the devices), routes, and a cost change
 * (PATCH .../links: every device customized) followed by tables and trees; on a generated road
 * graph with turn costs (its turn graph's CCH replicated) and on Monaco when data/osm has it.
 * Without a GPU (or in a build without CUDA) every test skips with "no CUDA device: GPU tests
 * skipped"; GPATH_REQUIRE_GPU=1 turns that into a failure. Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/change.h"
#include "engine/engine.h"
#include "engine/snap.h"
#include "graph/turns.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gp_engine *one, *two, *all;
static char no_gpu_msg[600];

static gp_engine *cuda_engine(const char *devices, gp_err *err) {
    gp_cuda_opts o = {0, 2, 2000, NULL, devices};
    gp_engine *e = gp_engine_new("cuda", 2, &o, err);
    if (e && gp_engine_set_cch(e, "on", 0, 0, err)) {
        gp_engine_free(e);
        return NULL;
    }
    return e;
}

static int setup(void **state) {
    (void)state;
    gp_err err = {0};
    one = cuda_engine(NULL, &err);
    if (!one) {
        snprintf(no_gpu_msg, sizeof no_gpu_msg, "%s", err.msg);
        return 0;
    }
    two = cuda_engine("0,0", &err);
    all = cuda_engine("all", &err);
    return two && all ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    gp_engine_free(one);
    gp_engine_free(two);
    gp_engine_free(all);
    return 0;
}

static int need_gpu(void) {
    if (one) return 1;
    const char *r = getenv("GPATH_REQUIRE_GPU");
    if (r && strcmp(r, "1") == 0) fail_msg("GPATH_REQUIRE_GPU=1 but %s", no_gpu_msg);
    print_message("no CUDA device: GPU tests skipped (%s)\n", no_gpu_msg);
    return 0;
}

static const gp_cch *cch_of(const gp_graph *g) {
    return g->turns ? ((const gp_turns *)g->turns)->tg->cch : g->cch;
}

/* Float32 cells through a table plan (.npy answers, matrix jobs) between snapped positions (nodes
 * and points a third along arcs) of a turn graph: combined on each device of e, the rows split
 * across them, bit for bit the one-device engine's. */
static void plan_cells(const char *what, gp_engine *e, const gp_graph *a, const gp_graph *b,
                       const uint32_t *src, uint32_t k) {
    enum { P = 97 };
    gp_err err = {0};
    gp_snap s[P];
    uint32_t np = 0;
    for (uint32_t i = 0; i < P && i < k; i++) {
        uint32_t arc = (uint32_t)(((uint64_t)i * 131 + 7) % a->m), u = gp_graph_arc_tail(a, arc);
        uint32_t v = a->col[arc];
        if (i % 2 == 0 || !a->lon ||
            gp_snap_point(a, a->lon[u] + (a->lon[v] - a->lon[u]) / 3,
                          a->lat[u] + (a->lat[v] - a->lat[u]) / 3, 5, &s[np], &err) != GP_OK)
            gp_snap_at_node(a, src[i], &s[np]);
        np++;
    }
    float *fa = malloc(sizeof *fa * P * P), *fb = malloc(sizeof *fb * P * P);
    assert_true(fa && fb);
    gp_cch_gpu_stats st0, st;
    assert_int_equal(gp_cch_gpu_stats_get(cch_of(b), &st0), 0);
    gp_table_plan *pa = gp_engine_table_plan_new(one, a, s, np, &err);
    gp_table_plan *pb = gp_engine_table_plan_new(e, b, s, np, &err);
    assert_true(pa && pb);
    assert_int_equal(gp_engine_table_plan_rows(pa, s, np, NULL, fa, &err), GP_OK);
    if (gp_engine_table_plan_rows(pb, s, np, NULL, fb, &err) != GP_OK)
        fail_msg("%s: plan cells %u x %u: %s", what, np, np, err.msg);
    gp_engine_table_plan_free(pa);
    gp_engine_table_plan_free(pb);
    assert_int_equal(gp_cch_gpu_stats_get(cch_of(b), &st), 0);
    if (st.cells != st0.cells + 1)
        fail_msg("%s: plan cells not combined on the first device", what);
    for (uint32_t x = 0; x < np * np; x++)
        if (memcmp(&fa[x], &fb[x], sizeof *fa))
            fail_msg("%s: plan cell %u -> %u: one device %.9g, several %.9g", what, x / np, x % np,
                     fa[x], fb[x]);
    free(fa);
    free(fb);
}

/* a (the one-device engine's graph) and b (e's, the same graph): tables, trees, routes equal;
 * b's CCH on nd device states */
static void compare(const char *what, gp_engine *e, int nd, const gp_graph *a, const gp_graph *b) {
    gp_err err = {0};
    assert_int_equal(gp_cch_gpu_count(cch_of(a)), 1);
    if (gp_cch_gpu_count(cch_of(b)) != nd)
        fail_msg("%s: %d device states, want %d", what, gp_cch_gpu_count(cch_of(b)), nd);
    enum { K = 301 };
    uint32_t *src = malloc(sizeof *src * K);
    uint64_t *ta = malloc(sizeof *ta * K * K), *tb = malloc(sizeof *tb * K * K);
    assert_true(src && ta && tb);
    for (uint32_t i = 0; i < K; i++) src[i] = (uint32_t)(((uint64_t)i * 7919 + 13) % a->n);
    /* K rows (shares of 150 / 151), 1 row (one device), 3 rows (an odd split) */
    const uint32_t rows[] = {K, 1, 3};
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        uint32_t ns = rows[r];
        memset(tb, 0xab, sizeof *tb * ns * K);
        assert_int_equal(gp_engine_table(one, a, src, ns, src, K, ta, &err), GP_OK);
        if (gp_engine_table(e, b, src, ns, src, K, tb, &err) != GP_OK)
            fail_msg("%s: table %u x %u: %s", what, ns, K, err.msg);
        for (uint32_t i = 0; i < ns * K; i++)
            if (ta[i] != tb[i])
                fail_msg("%s: table %u x %u cell %u -> %u: one device %llu, several %llu", what, ns,
                         K, i / K, i % K, (unsigned long long)ta[i], (unsigned long long)tb[i]);
    }
    if (a->turns) plan_cells(what, e, a, b, src, K);
    uint64_t *da = malloc(sizeof *da * a->n), *db = malloc(sizeof *db * a->n);
    assert_true(da && db);
    for (int s = 0; s < 4; s++) { /* four trees: each device answers some */
        assert_int_equal(gp_engine_sssp(one, a, src[s], GP_INF, da, NULL, &err), GP_OK);
        assert_int_equal(gp_engine_sssp(e, b, src[s], GP_INF, db, NULL, &err), GP_OK);
        for (uint32_t v = 0; v < a->n; v++)
            if (da[v] != db[v])
                fail_msg("%s: tree %d node %u: %llu vs %llu", what, s, v, (unsigned long long)da[v],
                         (unsigned long long)db[v]);
    }
    for (int s = 0; s < 8; s++) {
        gp_path pa = {0}, pb = {0};
        assert_int_equal(gp_engine_p2p(one, a, src[s], src[K - 1 - s], 0, &pa, &err), GP_OK);
        assert_int_equal(gp_engine_p2p(e, b, src[s], src[K - 1 - s], 0, &pb, &err), GP_OK);
        assert_int_equal(pa.dist, pb.dist);
        assert_int_equal(pa.len, pb.len);
        gp_path_free(&pa);
        gp_path_free(&pb);
    }
    free(da);
    free(db);
    free(src);
    free(ta);
    free(tb);
}

/* a cost change of nl links (every 4th arc from off) on both, the new versions compared */
static void change(gp_engine *e, gp_graph **a, gp_graph **b, uint32_t nl, uint32_t off) {
    gp_err err = {0};
    gp_link_change *ch = malloc(sizeof *ch * nl);
    assert_non_null(ch);
    const gp_graph *g = *a;
    for (uint32_t k = 0; k < nl; k++) {
        uint32_t arc = (off + k * 4) % g->m, u = gp_graph_arc_tail(g, arc);
        double c = (double)g->w[arc] / g->scale;
        ch[k] = (gp_link_change){g->ext[u], g->ext[g->col[arc]], 0,
                                 (double)(uint64_t)(c * (k % 2 ? 3 : 0.5))};
    }
    gp_graph *a2 = NULL, *b2 = NULL;
    assert_int_equal(gp_engine_change_links(one, *a, ch, nl, NULL, 0, &a2, NULL, &err), GP_OK);
    if (gp_engine_change_links(e, *b, ch, nl, NULL, 0, &b2, NULL, &err) != GP_OK)
        fail_msg("cost change on several devices: %s", err.msg);
    free(ch);
    gp_graph_unref(*a);
    gp_graph_unref(*b);
    *a = a2;
    *b = b2;
}

static void run(gp_graph *(*make)(void)) {
    gp_engine *es[] = {two, all};
    int nd[2] = {2, 0};
    gp_backend_info in;
    gp_engine_info(all, &in);
    nd[1] = in.ndevices;
    print_message("cuda_devices = all: %d device(s)\n", nd[1]);
    for (int k = 0; k < 2; k++) {
        gp_err err = {0};
        gp_graph *a = make(), *b = make();
        assert_int_equal(gp_engine_attach(one, a, &err), GP_OK);
        assert_int_equal(gp_engine_attach(es[k], b, &err), GP_OK);
        const char *what = k ? "all" : "0,0";
        compare(what, es[k], nd[k], a, b);
        change(es[k], &a, &b, 4, 17); /* small: on the host, the devices from the predecessor */
        compare(what, es[k], nd[k], a, b);
        change(es[k], &a, &b, a->m / 4, 1); /* large: in full on the devices */
        compare(what, es[k], nd[k], a, b);
        gp_graph_unref(a);
        gp_graph_unref(b);
    }
}

static gp_graph *make_generated(void) {
    gp_err err = {0};
    gp_graph *g = gp_generate_road(4000, 7, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car"); /* travel times: the turn graph */
    return g;
}

static gp_graph *make_monaco(void) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load("osm:data/osm/monaco.osm.pbf?profile=car", NULL, &err);
    if (!g) fail_msg("monaco: %s", err.msg);
    return g;
}

/* Rows without an end (a source on behind.osm's node 4, where the one-way Up Lane ends: no
 * out-arc) beside a row with ends, split across the two device states of engine two so that one
 * share has no end at all (kernels/cch_cells.cu: no RPHAST then, the cells still combined on
 * that device): bit for bit the one-device engine's cells, the dead end's row NaN but for 0 to
 * itself. */
static void test_rows_without_ends(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    gp_err err = {0};
    const char *spec = "osm:tests/data/osm/behind.osm?profile=car";
    gp_graph *a = gp_graph_load(spec, NULL, &err), *b = gp_graph_load(spec, NULL, &err);
    if (!a || !b) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(one, a, &err), GP_OK);
    assert_int_equal(gp_engine_attach(two, b, &err), GP_OK);
    assert_int_equal(gp_cch_gpu_count(cch_of(b)), 2);
    uint32_t dead = GP_NONE, live = GP_NONE;
    for (uint32_t v = 0; v < a->n; v++) {
        if (a->row[v] == a->row[v + 1] && dead == GP_NONE) dead = v;
        if (a->row[v] < a->row[v + 1] && live == GP_NONE) live = v;
    }
    assert_true(dead != GP_NONE && live != GP_NONE);
    gp_snap t[8];
    uint32_t nt = 0;
    for (uint32_t v = 0; v < a->n && nt < 8; v++) gp_snap_at_node(a, v, &t[nt++]);
    for (int order = 0; order < 2;
         order++) { /* the dead end on the second device, then the first */
        gp_snap s[2];
        gp_snap_at_node(a, order ? dead : live, &s[0]);
        gp_snap_at_node(a, order ? live : dead, &s[1]);
        float fa[16], fb[16];
        gp_cch_gpu_stats st0, st;
        assert_int_equal(gp_cch_gpu_stats_get(cch_of(b), &st0), 0);
        gp_table_plan *pa = gp_engine_table_plan_new(one, a, t, nt, &err);
        gp_table_plan *pb = gp_engine_table_plan_new(two, b, t, nt, &err);
        assert_true(pa && pb);
        assert_int_equal(gp_engine_table_plan_rows(pa, s, 2, NULL, fa, &err), GP_OK);
        if (gp_engine_table_plan_rows(pb, s, 2, NULL, fb, &err) != GP_OK)
            fail_msg("%s: rows from nodes %u and %u: %s", spec, live, dead, err.msg);
        gp_engine_table_plan_free(pa);
        gp_engine_table_plan_free(pb);
        assert_int_equal(gp_cch_gpu_stats_get(cch_of(b), &st), 0);
        if (st.cells != st0.cells + 1)
            fail_msg("%s: cells not combined on the first device (order %d)", spec, order);
        for (uint32_t x = 0; x < 2 * nt; x++)
            if (memcmp(&fa[x], &fb[x], sizeof *fa))
                fail_msg("%s: cell %u -> %u: one device %.9g, two %.9g", spec, x / nt, x % nt,
                         fa[x], fb[x]);
        const float *drow = fa + (size_t)(order ? 0 : 1) * nt;
        for (uint32_t j = 0; j < nt; j++)
            if (j == dead ? drow[j] != 0 : drow[j] == drow[j])
                fail_msg("%s: dead end %u -> %u: %g", spec, dead, j, drow[j]);
    }
    gp_graph_unref(a);
    gp_graph_unref(b);
}

static void test_generated(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    run(make_generated);
}

static void test_monaco(void **state) {
    (void)state;
    if (!need_gpu()) skip();
    if (access("data/osm/monaco.osm.pbf", R_OK) != 0) {
        print_message("no data/osm/monaco.osm.pbf (make data): skipped\n");
        skip();
    }
    run(make_monaco);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_without_ends),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_monaco),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
