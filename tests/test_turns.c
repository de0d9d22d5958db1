/* test_turns.c - turn costs (graph/turns.c, engine/snap.c through the turn graph) on the hand-made
 * tests/data/osm/turncost.osm, car profile, literal values in deciseconds. Residential roads at
 * 25 km/h: a 0.001 degree east-west arm (78.6 m) is 113 ds, the 0.0005 degree halves of the south
 * arm 80 ds each, the 0.002 degree north arm 320 ds. Turn costs (car.lua v6): a right turn of 90
 * degrees 7.5 / (1 + e^0.941) = 2.105 s -> 21 ds, a left turn 5.395 s -> 54 ds, straight 0.007 s
 * -> 0, a U-turn 7.455 + 20 s -> 275 ds, a signal 20 ds, a give-way sign 10 ds. Also: turn
 * restrictions still obeyed (turns.osm), table == route == one-to-all, CCH == Dijkstra, a cost
 * change through the turn graph, node flags through a snapshot. Turn restrictions in the turn
 * model (loaded with restrictions_as_turns: no node copies): no_left_turn and only_straight_on
 * (turns.osm), a via way (viaway.osm), two via ways (viaways.osm), except=motorcar, each with its
 * exact route; the same answers as the node-copy model on every node pair (Monaco too when
 * $GPATH_DATA or data/ has it); CCH == Dijkstra; the restrictions through a snapshot.
 * continue_straight on a multi-leg route (straight.osm). Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/change.h"
#include "engine/snap.h"
#include "graph/snapshot.h"
#include "graph/turns.h"
#include "storage/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TC "osm:tests/data/osm/turncost.osm?profile=car"

static gp_engine *new_engine(const char *cch, const char *turns) {
    gp_err err = {0};
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, cch, 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_set_turn_costs(e, turns, &err), GP_OK);
    return e;
}

static int as_turns; /* load(): OSM turn restrictions kept for the turn model, no node copies */

static gp_graph *load(gp_engine *e, const char *spec) {
    gp_err err = {0};
    gp_load_opts o;
    memset(&o, 0, sizeof o);
    o.restrictions_as_turns = as_turns;
    gp_graph *g = gp_graph_load(spec, &o, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    return g;
}

/* spec loaded with restrictions in the turn model, not attached. */
static gp_graph *load_as_turns(const char *spec) {
    gp_err err = {0};
    gp_load_opts o = {.restrictions_as_turns = 1};
    gp_graph *g = gp_graph_load(spec, &o, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    return g;
}

static uint32_t ix(const gp_graph *g, int64_t id) {
    uint32_t v = gp_graph_index(g, id);
    if (v == GP_NONE) fail_msg("node %lld is not a graph node", (long long)id);
    return v;
}

/* Route by OSM node ids; the path's ids in ids (up to 8), its length in *len. */
static uint64_t route(gp_engine *e, const gp_graph *g, int64_t a, int64_t b, int algo, int64_t *ids,
                      uint32_t *len) {
    gp_err err = {0};
    gp_path p = {0};
    assert_int_equal(gp_engine_p2p(e, g, ix(g, a), ix(g, b), algo, &p, &err), GP_OK);
    if (len) *len = p.len;
    for (uint32_t i = 0; ids && i < p.len && i < 8; i++) ids[i] = gp_graph_orig_id(g, p.nodes[i]);
    uint64_t d = p.dist;
    gp_path_free(&p);
    return d;
}

static void test_cost_table(void **state) {
    (void)state;
    const gp_turn_costs *car = gp_turn_costs_find("car");
    assert_non_null(car);
    assert_true(fabs(gp_turn_cost_s(car, 90, 4, 0, 0) - 2.1053) < 1e-3);
    assert_true(fabs(gp_turn_cost_s(car, -90, 4, 0, 0) - 5.3947) < 1e-3);
    assert_true(gp_turn_cost_s(car, 0, 4, 0, 0) < 0.01);
    assert_true(fabs(gp_turn_cost_s(car, 180, 1, 1, 0) - 27.4548) < 1e-3);
    assert_true(gp_turn_cost_s(car, -90, 2, 0, 0) == 0); /* a bend: no angle cost */
    assert_true(gp_turn_cost_s(car, 0, 2, 0, GP_NODE_SIGNAL) == 2);
    assert_true(gp_turn_cost_s(car, 0, 2, 0, GP_NODE_STOP) == 2);
    assert_true(gp_turn_cost_s(car, 0, 2, 0, GP_NODE_GIVE_WAY) == 1);
    const gp_turn_costs *bike = gp_turn_costs_find("bicycle");
    assert_true(fabs(gp_turn_cost_s(bike, 90, 2, 0, 0) - 6 / 1.4) < 1e-9);
    assert_true(fabs(gp_turn_cost_s(bike, -90, 2, 0, 0) - 6 * 1.4) < 1e-9);
    const gp_turn_costs *foot = gp_turn_costs_find("foot");
    assert_true(gp_turn_cost_s(foot, -90, 4, 0, 0) == 0);
    assert_true(gp_turn_cost_s(foot, 180, 1, 1, 0) == 2);
    assert_null(gp_turn_costs_find("boat"));
    /* a value that cannot be applied is refused by name */
    gp_turn_costs bad = *car;
    bad.u_turn_s = -1;
    gp_err err = {0};
    assert_int_equal(gp_turn_costs_check(&bad, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "u_turn_penalty"));
    bad = *car;
    bad.bias = 0;
    assert_int_equal(gp_turn_costs_check(&bad, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "turn_bias"));
}

static void test_crossing(void **state) {
    (void)state;
    gp_engine *e = new_engine("off", "on");
    gp_graph *g = load(e, TC);
    assert_non_null(g->turns);
    assert_non_null(g->node_flags);
    assert_int_equal(g->node_flags[ix(g, 8)], GP_NODE_SIGNAL);
    assert_int_equal(g->node_flags[ix(g, 22)], GP_NODE_GIVE_WAY);
    static const struct {
        int64_t a, b;
        uint64_t d;
    } want[] = {
        {2, 5, 273 + 10 + 21},       /* give way, right turn */
        {2, 4, 273 + 10 + 54},       /* give way, left turn */
        {4, 5, 226},                 /* straight through the crossing */
        {9, 20, 102 + 113 + 20},     /* straight through a signal */
        {9, 1, 102 + 320 + 20 + 21}, /* signal, right turn */
        {1, 7, 113 + 273},           /* a name change (2 roads) and a bend: nothing */
        {2, 21, 386 + 10 + 54},      /* left, then straight at a node of 3 roads */
    };
    static const int algos[] = {GP_P2P_AUTO, GP_P2P_DIJKSTRA, GP_P2P_BIDIR, GP_P2P_ASTAR};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        for (int a = 0; a < 4; a++) {
            uint64_t d = route(e, g, want[i].a, want[i].b, algos[a], NULL, NULL);
            if (d != want[i].d)
                fail_msg("%lld -> %lld algo %d: %llu ds, want %llu", (long long)want[i].a,
                         (long long)want[i].b, algos[a], (unsigned long long)d,
                         (unsigned long long)want[i].d);
        }
    /* the node-based shortest way 5 -> 9 (535 ds through 1 and 8) turns right at 1 and left at
     * the signal: with turn costs the way straight through 1 and right at 4 (546 + 23) wins */
    int64_t ids[8];
    uint32_t len;
    assert_int_equal(route(e, g, 5, 9, GP_P2P_AUTO, ids, &len), 546 + 23);
    assert_int_equal(len, 4);
    assert_int_equal(ids[2], 4);
    gp_engine *off = new_engine("off", "off");
    gp_graph *h = load(off, TC);
    assert_null(h->turns);
    assert_int_equal(route(off, h, 5, 9, GP_P2P_AUTO, ids, &len), 535);
    assert_int_equal(ids[2], 8);
    gp_graph_unref(h);
    gp_engine_free(off);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* The turn arc from road arc (a -> b) to road arc (b -> c), GP_NONE when the turn is absent. */
static uint32_t turn_arc(const gp_graph *g, int64_t a, int64_t b, int64_t c) {
    const gp_graph *tg = ((const gp_turns *)g->turns)->tg;
    uint32_t x = gp_graph_find_arc(g, ix(g, a), ix(g, b)),
             y = gp_graph_find_arc(g, ix(g, b), ix(g, c));
    assert_true(x != GP_NONE && y != GP_NONE);
    for (uint32_t k = tg->row[x]; k < tg->row[x + 1]; k++)
        if (tg->col[k] == y) return k;
    return GP_NONE;
}

static void test_u_turns(void **state) {
    (void)state;
    gp_engine *e = new_engine("off", "on");
    gp_graph *g = load(e, TC);
    const gp_graph *tg = ((const gp_turns *)g->turns)->tg;
    assert_int_equal(tg->n, g->m);
    /* at the dead end 21: a U-turn, 275 ds + the 113 ds arc back */
    uint32_t k = turn_arc(g, 4, 21, 4);
    assert_int_not_equal(k, GP_NONE);
    assert_int_equal(tg->w[k], 275 + 113);
    /* elsewhere none: not at the crossing, not at 4 (3 roads), not at the bend node 5 */
    assert_int_equal(turn_arc(g, 22, 1, 22), GP_NONE);
    assert_int_equal(turn_arc(g, 1, 4, 1), GP_NONE);
    assert_int_equal(turn_arc(g, 1, 5, 1), GP_NONE);
    /* a right turn and a left turn arc carry their costs */
    assert_int_equal(tg->w[turn_arc(g, 4, 1, 22)], 21 + 80); /* eastbound, right */
    assert_int_equal(tg->w[turn_arc(g, 4, 1, 8)], 54 + 320); /* eastbound, left */
    assert_int_equal(tg->w[turn_arc(g, 4, 1, 5)], 113);      /* straight */
    /* a position on West End heading west (the road is two-way, so the way back is the opposite
     * arc, no U-turn); a table from it equals the routes */
    gp_snap s;
    gp_err err = {0};
    assert_int_equal(gp_snap_point(g, 6.9985, 45.0, 50, &s, &err), GP_OK);
    gp_snap_route r;
    gp_snap t;
    gp_snap_at_node(g, ix(g, 2), &t);
    assert_int_equal(gp_engine_route_snap(e, g, &s, &t, GP_P2P_AUTO, &r, &err), GP_OK);
    /* half of West End (56 ds: the snapped fraction) to 4, straight to 1, right (eastbound,
     * south is right), through the give-way sign at 22 to 2 */
    assert_int_equal(r.dist, 56 + 113 + 21 + 80 + 10 + 80);
    assert_int_equal(r.path.len, 4); /* 4, 1, 22, 2 */
    assert_non_null(r.arcs);
    assert_int_equal(gp_graph_orig_id(g, r.path.nodes[0]), 4);
    assert_int_equal(r.arcs[0], gp_graph_find_arc(g, ix(g, 4), ix(g, 1)));
    gp_snap_route_free(&r);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* Every node pair and some positions: table == route, one-to-all == route, CCH == Dijkstra. */
static void check_consistent(const char *spec) {
    gp_engine *ec = new_engine("on", "on"), *ed = new_engine("off", "on");
    gp_graph *gc = load(ec, spec), *gd = load(ed, spec);
    assert_non_null(gc->turns);
    assert_non_null(((gp_turns *)gc->turns)->tg->cch);
    assert_null(((gp_turns *)gd->turns)->tg->cch);
    const uint32_t n = gc->n;
    gp_snap *s = calloc(n + 8, sizeof *s);
    uint32_t k = 0;
    for (uint32_t v = 0; v < n; v++) gp_snap_at_node(gc, v, &s[k++]);
    gp_err err = {0};
    for (uint32_t a = 0; a < gc->m && k < n + 8; a += 3) { /* positions at a third of some arcs */
        uint32_t u = gp_graph_arc_tail(gc, a), v = gc->col[a];
        if (gp_snap_point(gc, gc->lon[u] + (gc->lon[v] - gc->lon[u]) / 3,
                          gc->lat[u] + (gc->lat[v] - gc->lat[u]) / 3, 5, &s[k], &err) == GP_OK)
            k++;
    }
    uint64_t *tc = malloc(sizeof *tc * k * k), *td = malloc(sizeof *td * k * k);
    uint64_t *dist = malloc(sizeof *dist * n);
    uint32_t *pred = malloc(sizeof *pred * n);
    assert_int_equal(gp_engine_table_snap(ec, gc, s, k, s, k, tc, &err), GP_OK);
    assert_int_equal(gp_engine_table_snap(ed, gd, s, k, s, k, td, &err), GP_OK);
    for (uint32_t i = 0; i < k; i++) {
        assert_int_equal(gp_engine_sssp_snap(ec, gc, &s[i], GP_INF, dist, pred, &err), GP_OK);
        for (uint32_t j = 0; j < k; j++) {
            gp_snap_route rc, rd;
            assert_int_equal(gp_engine_route_snap(ec, gc, &s[i], &s[j], GP_P2P_AUTO, &rc, &err),
                             GP_OK);
            assert_int_equal(gp_engine_route_snap(ed, gd, &s[i], &s[j], GP_P2P_DIJKSTRA, &rd, &err),
                             GP_OK);
            if (rc.dist != rd.dist || rc.dist != tc[(size_t)i * k + j] ||
                td[(size_t)i * k + j] != rc.dist)
                fail_msg("%s %u -> %u: cch %llu, dijkstra %llu, table %llu / %llu", spec, i, j,
                         (unsigned long long)rc.dist, (unsigned long long)rd.dist,
                         (unsigned long long)tc[(size_t)i * k + j],
                         (unsigned long long)td[(size_t)i * k + j]);
            if (j < n && s[j].arc == GP_NONE && dist[s[j].node] != rc.dist)
                fail_msg("%s %u -> node %u: one-to-all %llu, route %llu", spec, i, j,
                         (unsigned long long)dist[s[j].node], (unsigned long long)rc.dist);
            gp_snap_route_free(&rc);
            gp_snap_route_free(&rd);
        }
    }
    free(s);
    free(tc);
    free(td);
    free(dist);
    free(pred);
    gp_graph_unref(gc);
    gp_graph_unref(gd);
    gp_engine_free(ec);
    gp_engine_free(ed);
}

static void test_consistent(void **state) {
    (void)state;
    check_consistent(TC);
    for (as_turns = 0; as_turns < 2; as_turns++) {
        check_consistent("osm:tests/data/osm/turns.osm?profile=car");
        check_consistent("osm:tests/data/osm/viaway.osm?profile=car");
        check_consistent("osm:tests/data/osm/viaways.osm?profile=car");
    }
    as_turns = 0;
}

/* cch = auto decides by the turn graph's size (GP_CCH_TURN_MIN_NODES), not cch_min_nodes alone:
 * the tiny turncost.osm stays on the Dijkstra family, Monaco's turn graph (4,259 turn nodes, under
 * the default cch_min_nodes 10000) gets a CCH; and on Monaco a table of positions (at nodes, on
 * arcs, several on one arc) is the per-pair routes cell by cell (CCH table vs CCH routes vs the
 * Dijkstra family's routes). Skipped without $GPATH_DATA/osm/monaco.osm.pbf. */
static void test_turn_table_auto(void **state) {
    (void)state;
    gp_err err = {0};
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err), *ed = new_engine("off", "on");
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "auto", GP_CCH_MIN_NODES_DEFAULT, 0, &err), GP_OK);
    gp_graph *small = load(e, TC);
    assert_true(((gp_turns *)small->turns)->tg->n < GP_CCH_TURN_MIN_NODES);
    assert_null(((gp_turns *)small->turns)->tg->cch);
    gp_graph_unref(small);
    const char *data = getenv("GPATH_DATA");
    char spec[1100];
    snprintf(spec, sizeof spec, "%s/osm/monaco.osm.pbf", data ? data : "");
    FILE *probe = data ? fopen(spec, "rb") : NULL;
    if (!probe) {
        gp_engine_free(e);
        gp_engine_free(ed);
        print_message("GPATH_DATA has no osm/monaco.osm.pbf: the Monaco table skipped\n");
        skip();
    }
    fclose(probe);
    snprintf(spec, sizeof spec, "osm:%s/osm/monaco.osm.pbf?profile=car", data);
    gp_graph *g = load(e, spec), *gd = load(ed, spec);
    const gp_graph *tg = ((gp_turns *)g->turns)->tg;
    assert_true(tg->n >= GP_CCH_TURN_MIN_NODES && tg->n < GP_CCH_MIN_NODES_DEFAULT);
    assert_non_null(tg->cch);
    assert_null(((gp_turns *)gd->turns)->tg->cch);
    enum { K = 48 };
    gp_snap s[K];
    uint32_t k = 0;
    srand(11);
    while (k < K) {
        uint32_t a = (uint32_t)rand() % g->m;
        if (k % 3 == 0) { /* at a node */
            gp_snap_at_node(g, g->col[a], &s[k++]);
            continue;
        }
        uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
        for (int f = 1; f <= (k % 3 == 2 ? 2 : 1) && k < K; f++) /* two on one arc, either order */
            if (gp_snap_point(g, g->lon[u] + (g->lon[v] - g->lon[u]) * f / 3.0,
                              g->lat[u] + (g->lat[v] - g->lat[u]) * f / 3.0, 5, &s[k],
                              &err) == GP_OK)
                k++;
    }
    uint64_t *t = malloc(sizeof *t * K * K);
    assert_int_equal(gp_engine_table_snap(e, g, s, K, s, K, t, &err), GP_OK);
    /* one plan, blocks of 5 rows (the last shorter), as stored units and as float32: the cells
     * of the one-block table */
    uint64_t *pu = malloc(sizeof *pu * K * K);
    float *pf = malloc(sizeof *pf * K * K);
    gp_table_plan *plan = gp_engine_table_plan_new(e, g, s, K, &err);
    assert_non_null(plan);
    for (uint32_t r0 = 0; r0 < K; r0 += 5) {
        uint32_t n = K - r0 < 5 ? K - r0 : 5;
        assert_int_equal(
            gp_engine_table_plan_rows(plan, s + r0, n, pu + (size_t)r0 * K, NULL, &err), GP_OK);
        assert_int_equal(
            gp_engine_table_plan_rows(plan, s + r0, n, NULL, pf + (size_t)r0 * K, &err), GP_OK);
    }
    gp_engine_table_plan_free(plan);
    uint32_t nan_cells = 0;
    for (size_t c = 0; c < (size_t)K * K; c++) {
        assert_true(pu[c] == t[c]);
        if (t[c] == GP_INF) nan_cells++, assert_true(isnan(pf[c]));
        else assert_true(pf[c] == (float)gp_graph_cost(g, t[c]));
    }
    print_message("monaco plan: %u of %u cells unreachable\n", nan_cells, K * K);
    free(pu);
    free(pf);
    uint32_t routed = 0;
    for (uint32_t i = 0; i < K; i++)
        for (uint32_t j = 0; j < K; j++) {
            gp_snap_route r, rd;
            assert_int_equal(gp_engine_route_snap(e, g, &s[i], &s[j], GP_P2P_AUTO, &r, &err),
                             GP_OK);
            assert_int_equal(gp_engine_route_snap(ed, gd, &s[i], &s[j], GP_P2P_DIJKSTRA, &rd, &err),
                             GP_OK);
            if (t[(size_t)i * K + j] != r.dist || r.dist != rd.dist)
                fail_msg("monaco %u -> %u: table %llu, route %llu, dijkstra %llu", i, j,
                         (unsigned long long)t[(size_t)i * K + j], (unsigned long long)r.dist,
                         (unsigned long long)rd.dist);
            routed += r.dist != GP_INF && r.dist > 0;
            gp_snap_route_free(&r);
            gp_snap_route_free(&rd);
        }
    assert_true(routed > K * K / 2);
    free(t);
    gp_graph_unref(g);
    gp_graph_unref(gd);
    gp_engine_free(e);
    gp_engine_free(ed);
}

/* A destination behind its origin on a one-way arc: around the block and back onto the arc.
 * Reference: the cheapest turn p -> a after a plain Dijkstra over tg from a, written here. */
static void test_loop_back(void **state) {
    (void)state;
    gp_engine *e = new_engine("on", "on");
    gp_graph *g = load(e, TC);
    const gp_graph *tg = ((gp_turns *)g->turns)->tg;
    uint64_t *d = malloc(sizeof *d * tg->n);
    uint8_t *done = malloc(tg->n);
    gp_err err = {0};
    uint32_t loops = 0;
    for (uint32_t a = 0; a < g->m; a++) {
        for (uint32_t v = 0; v < tg->n; v++) d[v] = GP_INF, done[v] = 0;
        d[a] = 0;
        for (;;) { /* O(n^2) Dijkstra: tg is small */
            uint32_t u = GP_NONE;
            for (uint32_t v = 0; v < tg->n; v++)
                if (!done[v] && d[v] != GP_INF && (u == GP_NONE || d[v] < d[u])) u = v;
            if (u == GP_NONE) break;
            done[u] = 1;
            for (uint32_t k = tg->row[u]; k < tg->row[u + 1]; k++)
                if (d[u] + tg->w[k] < d[tg->col[k]]) d[tg->col[k]] = d[u] + tg->w[k];
        }
        uint64_t loop = GP_INF;
        for (uint32_t k = tg->rrow[a]; k < tg->rrow[a + 1]; k++)
            if (tg->rcol[k] != a && d[tg->rcol[k]] != GP_INF && d[tg->rcol[k]] + tg->rw[k] < loop)
                loop = d[tg->rcol[k]] + tg->rw[k];
        gp_snap s[2];
        memset(s, 0, sizeof s);
        for (int i = 0; i < 2; i++) {
            s[i].arc = a;
            s[i].rarc = GP_NONE; /* one way: no way back along the arc */
            s[i].node = g->col[a];
            s[i].frac = i ? 0.3 : 0.7;
        }
        uint64_t want = loop == GP_INF ? GP_INF
                                       : (uint64_t)llround(0.3 * g->w[a]) + loop -
                                             (uint64_t)llround(0.7 * g->w[a]);
        gp_snap_route r;
        uint64_t t[4];
        assert_int_equal(gp_engine_route_snap(e, g, &s[0], &s[1], GP_P2P_AUTO, &r, &err), GP_OK);
        assert_int_equal(gp_engine_table_snap(e, g, s, 2, s, 2, t, &err), GP_OK);
        if (r.dist != want || t[1] != want)
            fail_msg("arc %u: route %llu, table %llu, want %llu", a, (unsigned long long)r.dist,
                     (unsigned long long)t[1], (unsigned long long)want);
        if (want != GP_INF) {
            loops++;
            assert_true(r.path.len >= 2); /* around the block */
            assert_int_equal(r.first_arc, a);
            assert_int_equal(r.last_arc, a);
        }
        gp_snap_route_free(&r);
    }
    assert_true(loops > g->m / 2);
    free(d);
    free(done);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* turns.osm: no_left_turn 101 -> 100 -> 103 still holds with turn costs (the detour) */
static void test_restrictions(void **state) {
    (void)state;
    gp_engine *e = new_engine("off", "on");
    gp_graph *g = load(e, "osm:tests/data/osm/turns.osm?profile=car");
    int64_t ids[8];
    uint32_t len;
    uint64_t d = route(e, g, 101, 103, GP_P2P_DIJKSTRA, ids, &len);
    for (uint32_t i = 0; i + 2 < len; i++)
        assert_false(ids[i] == 101 && ids[i + 1] == 100 && ids[i + 2] == 103);
    assert_int_equal(d, 456); /* the ring 101 -> 108 -> 103: no turn on it (a bend) */
    /* to the crossing itself from the south: the south arm, to the copy of 100 the restriction
     * made (the same place), not around the ring */
    assert_int_equal(route(e, g, 101, 100, GP_P2P_DIJKSTRA, ids, &len), 160);
    assert_int_equal(len, 2);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* A cost change: the reweighted road graph gets its own turn graph with the new weights. */
static void test_reweight(void **state) {
    (void)state;
    gp_engine *e = new_engine("on", "on");
    gp_graph *g = load(e, TC);
    uint32_t *w = malloc(sizeof *w * g->m), *rw = malloc(sizeof *rw * g->m);
    memcpy(w, g->w, sizeof *w * g->m);
    uint32_t a = gp_graph_find_arc(g, ix(g, 1), ix(g, 5));
    w[a] += 1000; /* 1 -> 5 closed in effect */
    for (uint32_t v = 0; v < g->n; v++)
        for (uint32_t k = g->rrow[v]; k < g->rrow[v + 1]; k++) {
            uint32_t x = gp_graph_find_arc(g, g->rcol[k], v);
            rw[k] = x == a ? w[a] : g->rw[k];
        }
    gp_err err = {0};
    gp_graph *h = gp_graph_reweight(g, w, rw, &err);
    assert_non_null(h);
    assert_int_equal(gp_engine_attach(e, h, &err), GP_OK);
    assert_non_null(h->turns);
    assert_ptr_not_equal(h->turns, g->turns);
    assert_int_equal(route(e, g, 2, 5, GP_P2P_AUTO, NULL, NULL), 304);
    assert_int_equal(route(e, h, 2, 5, GP_P2P_AUTO, NULL, NULL), 304 + 1000);
    assert_int_equal(route(e, h, 2, 5, GP_P2P_DIJKSTRA, NULL, NULL), 304 + 1000);
    /* through the engine's cost change (PATCH .../links): link 1 - 5 at 200 ds each way */
    gp_link_change ch = {1, 5, 0, 200};
    gp_graph *c = NULL;
    assert_int_equal(gp_engine_change_links(e, g, &ch, 1, NULL, 0, &c, NULL, &err), GP_OK);
    assert_non_null(c->turns);
    assert_int_equal(route(e, c, 2, 5, GP_P2P_AUTO, NULL, NULL), 160 + 10 + 21 + 200);
    assert_int_equal(route(e, c, 5, 2, GP_P2P_DIJKSTRA, NULL, NULL), 200 + 54 + 80 + 10 + 80);
    gp_graph_unref(c);
    /* a link taken down (a new topology: a new turn graph): 21 is cut off */
    gp_link_change dn = {4, 21, 1, 0};
    assert_int_equal(gp_engine_change_links(e, g, &dn, 1, NULL, 0, &c, NULL, &err), GP_OK);
    assert_non_null(c->turns);
    assert_int_equal(route(e, c, 1, 21, GP_P2P_AUTO, NULL, NULL), GP_INF);
    assert_int_equal(route(e, c, 2, 5, GP_P2P_AUTO, NULL, NULL), 304);
    gp_graph_unref(c);
    gp_graph_unref(h);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* The turn graph's coordinates (gp_turns_add_xy) are made only under cch_order = flow, and a
 * reweighted version shares its base's; the routes are the same either way. */
static void test_flow_xy(void **state) {
    (void)state;
    gp_err err = {0};
    gp_engine *e = new_engine("on", "on");
    gp_graph *g = load(e, TC);
    const gp_turns *T = g->turns;
    assert_null(T->xy);
    assert_null(T->tg->cch_xy);
    uint64_t d = route(e, g, 2, 5, GP_P2P_AUTO, NULL, NULL);
    assert_int_equal(gp_engine_set_cch_order(e, "flow", &err), GP_OK);
    gp_graph *f = load(e, TC);
    const gp_turns *F = f->turns;
    assert_non_null(F->xy);
    assert_ptr_equal(F->tg->cch_xy, F->xy);
    assert_int_equal(route(e, f, 2, 5, GP_P2P_AUTO, NULL, NULL), d);
    gp_link_change ch = {1, 5, 0, 200};
    gp_graph *c = NULL;
    assert_int_equal(gp_engine_change_links(e, f, &ch, 1, NULL, 0, &c, NULL, &err), GP_OK);
    const gp_turns *C = c->turns;
    assert_ptr_equal(C->xy, F->xy);
    assert_ptr_equal(C->tg->cch_xy, F->xy);
    assert_int_equal(route(e, c, 2, 5, GP_P2P_AUTO, NULL, NULL), 160 + 10 + 21 + 200);
    gp_graph_unref(c);
    assert_int_equal(gp_engine_set_cch_order(e, "nd", &err), GP_OK); /* (process-wide) */
    gp_graph_unref(f);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* g written to a snapshot and loaded back (the file removed). */
static gp_graph *snapshot_roundtrip(const gp_graph *g) {
    gp_err err = {0};
    char path[64], spec[80];
    snprintf(path, sizeof path, "/tmp/gp_turns_%d.gpath", (int)getpid());
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    snprintf(spec, sizeof spec, "gpath:%s", path);
    gp_graph *h = gp_graph_load(spec, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    unlink(path);
    return h;
}

static void test_snapshot_flags(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load(TC, NULL, &err);
    assert_non_null(g);
    gp_graph *h = snapshot_roundtrip(g);
    assert_non_null(h->node_flags);
    assert_memory_equal(g->node_flags, h->node_flags, g->n);
    assert_string_equal(g->version, h->version);
    gp_graph_unref(h);
    gp_graph_unref(g);
}

/* Route by OSM ids on a graph loaded with restrictions in the turn model; the path's OSM ids
 * joined by spaces into buf. */
static uint64_t route_ids(gp_engine *e, const gp_graph *g, int64_t a, int64_t b, int algo,
                          char *buf, size_t cap) {
    int64_t ids[8];
    uint32_t len;
    uint64_t d = route(e, g, a, b, algo, ids, &len);
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < len && i < 8; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? " " : "", (long long)ids[i]);
    return d;
}

typedef struct want_route {
    int64_t a, b;
    uint64_t d;
    const char *path;
} want_route;

/* Each route, by Dijkstra and by the CCH: distance and node sequence. */
static void check_routes(const char *spec, const want_route *w, size_t n) {
    static const char *cch[] = {"off", "on"};
    for (int c = 0; c < 2; c++) {
        gp_engine *e = new_engine(cch[c], "on");
        gp_graph *g = load(e, spec);
        for (size_t i = 0; i < n; i++) {
            char buf[128];
            uint64_t d =
                route_ids(e, g, w[i].a, w[i].b, c ? GP_P2P_AUTO : GP_P2P_DIJKSTRA, buf, sizeof buf);
            if (d != w[i].d || strcmp(buf, w[i].path))
                fail_msg("%s (cch %s) %lld -> %lld: %llu ds [%s], want %llu [%s]", spec, cch[c],
                         (long long)w[i].a, (long long)w[i].b, (unsigned long long)d, buf,
                         (unsigned long long)w[i].d, w[i].path);
        }
        gp_graph_unref(g);
        gp_engine_free(e);
    }
}

/* The turn graph of spec loaded with restrictions in the turn model: no node copies, the
 * duplicated tg nodes and the turns removed as expected. */
static void check_model(const char *spec, uint32_t nodes, uint32_t dups, uint64_t removed) {
    gp_engine *e = new_engine("off", "on");
    gp_graph *g = load(e, spec);
    const gp_turns *T = g->turns;
    assert_null(g->osm_id); /* no node copies */
    assert_int_equal(T->ncopies, 0);
    assert_int_equal(g->n, nodes);
    assert_non_null(g->restr);
    assert_int_equal(T->tg->n, g->m + dups);
    assert_int_equal(T->ndups, dups);
    assert_int_equal(T->restr_turns, removed);
    assert_int_equal(T->restr_bad, 0);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* Via node (turns.osm): no_left_turn 101 -> 100 -> 103 (south arm onto the west arm), and
 * only_straight_on from the east arm onto the west arm; except=motorcar (303) lets cars turn right
 * from the south arm; the conditional one (302) is ignored. Corners of the ring are folded into
 * shape points, so its paths list only the arm ends. */
static void test_restr_via_node(void **state) {
    (void)state;
    as_turns = 1;
    /* 7 graph nodes less the 2 copies; 3 turns removed: south -> west, east -> north,
     * east -> south; none for 302 (conditional) or 303 (cars exempt) */
    check_model("osm:tests/data/osm/turns.osm?profile=car", 5, 0, 3);
    static const want_route w[] = {
        {101, 103, 456, "101 103"},         /* no left turn: around the ring (a bend: no turn) */
        {101, 100, 160, "101 100"},         /* to the crossing itself: no detour */
        {104, 102, 456, "104 102"},         /* only straight on: no right turn at 100 */
        {104, 101, 736, "104 100 103 101"}, /* only straight on: west, then the ring */
        {101, 104, 294, "101 100 104"},     /* except=motorcar: the right turn is allowed */
        {102, 103, 294, "102 100 103"},     /* restriction:conditional ignored */
        {103, 104, 226, "103 100 104"},     /* no restriction from the west arm */
    };
    check_routes("osm:tests/data/osm/turns.osm?profile=car", w, sizeof w / sizeof w[0]);
    /* bicycles obey no turn restriction (bicycle.lua): no records at all */
    gp_graph *b = load_as_turns("osm:tests/data/osm/turns.osm?profile=bicycle");
    assert_null(b->restr);
    assert_null(b->osm_id);
    gp_graph_unref(b);
    as_turns = 0;
}

/* Via ways: viaway.osm (one: 801 -> 802 -> 803), viaways.osm (two in order: 1001 -> 1002, 1003
 * -> 1004). The via path's arcs are duplicated in the turn graph for entries from the from way
 * (1 and 2 duplicates), and only the forbidden continuation is missing there. */
static void test_restr_via_ways(void **state) {
    (void)state;
    as_turns = 1;
    check_model("osm:tests/data/osm/viaway.osm?profile=car", 6, 1, 1);
    static const want_route w1[] = {
        {1, 4, 509, "1 2 6 4"}, /* not 2 -> 3 -> 4 coming from the south: the detour */
        {1, 5, 407, "1 2 3 5"}, /* straight on east at 3 stays allowed */
        {2, 4, 327, "2 3 4"},   /* starting on the via way: allowed */
        {3, 4, 160, "3 4"},
    };
    check_routes("osm:tests/data/osm/viaway.osm?profile=car", w1, sizeof w1 / sizeof w1[0]);
    check_model("osm:tests/data/osm/viaways.osm?profile=car", 8, 2, 1);
    static const want_route w2[] = {
        {1, 5, 697, "1 2 7 5"},   /* not 2 -> 3 -> 4 -> 5 from the south: north, then east */
        {1, 6, 520, "1 2 3 4 6"}, /* straight on at 4 */
        {1, 4, 407, "1 2 3 4"},   /* to the end of the via path itself */
        {1, 9, 475, "1 2 3 9"},   /* off the via path at 3; 1101 exempts cars */
        {2, 5, 440, "2 3 4 5"},   /* entering at 2 (not from 1001): allowed */
        {3, 5, 327, "3 4 5"},     /* entering at 3: allowed */
    };
    check_routes("osm:tests/data/osm/viaways.osm?profile=car", w2, sizeof w2 / sizeof w2[0]);
    /* the node-copy model (turn_costs off) handles one via way only: two are counted
     * unsupported and not obeyed */
    as_turns = 0;
    static const want_route w3[] = {{1, 5, 621, "1 2 3 4 5"}};
    check_routes("osm:tests/data/osm/viaways.osm?profile=car", w3, 1);
}

/* The turn model's restrictions and the node copies give the same answer for every pair of OSM
 * nodes (restrictions with one via way at most: what the copies handle). */
static void check_same_as_copies(const char *spec) {
    gp_engine *ea = new_engine("on", "on"), *eb = new_engine("off", "on");
    as_turns = 1;
    gp_graph *a = load(ea, spec);
    as_turns = 0;
    gp_graph *b = load(eb, spec);
    assert_non_null(b->osm_id);
    uint32_t step = a->n > 400 ? a->n / 40 : 1, pairs = 0;
    for (uint32_t u = 0; u < a->n; u += step)
        for (uint32_t v = 0; v < a->n; v += step) {
            uint32_t bu = gp_graph_index(b, a->ext[u]), bv = gp_graph_index(b, a->ext[v]);
            assert_true(bu != GP_NONE && bv != GP_NONE);
            gp_err err = {0};
            gp_path p = {0}, q = {0};
            assert_int_equal(gp_engine_p2p(ea, a, u, v, GP_P2P_AUTO, &p, &err), GP_OK);
            assert_int_equal(gp_engine_p2p(eb, b, bu, bv, GP_P2P_DIJKSTRA, &q, &err), GP_OK);
            if (p.dist != q.dist)
                fail_msg("%s %lld -> %lld: turn model %llu, node copies %llu", spec,
                         (long long)a->ext[u], (long long)a->ext[v], (unsigned long long)p.dist,
                         (unsigned long long)q.dist);
            pairs++;
            gp_path_free(&p);
            gp_path_free(&q);
        }
    assert_true(pairs > 0);
    gp_graph_unref(a);
    gp_graph_unref(b);
    gp_engine_free(ea);
    gp_engine_free(eb);
}

static void test_restr_same_as_copies(void **state) {
    (void)state;
    check_same_as_copies("osm:tests/data/osm/turns.osm?profile=car");
    check_same_as_copies("osm:tests/data/osm/viaway.osm?profile=car");
    const char *dir = getenv("GPATH_DATA");
    char path[480], spec[512];
    snprintf(path, sizeof path, "%s/osm/monaco.osm.pbf", dir ? dir : "data");
    if (access(path, R_OK) != 0) {
        print_message("test_turns: no %s (make data): the Monaco comparison skipped\n", path);
        return;
    }
    snprintf(spec, sizeof spec, "osm:%s?profile=car", path);
    check_same_as_copies(spec);
}

/* The restrictions go through a snapshot unchanged (and into the version). */
static void test_restr_snapshot(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = load_as_turns("osm:tests/data/osm/viaways.osm?profile=car");
    assert_int_equal(g->restr_len, 6); /* [no, 4, from, via, via, to] */
    assert_int_equal(g->restr[0], GP_RESTR_NO);
    assert_int_equal(g->restr[1], 4);
    gp_graph *plain = gp_graph_load("osm:tests/data/osm/viaways.osm?profile=car", NULL, &err);
    assert_string_not_equal(g->version, plain->version); /* copies or none: another graph */
    gp_graph_unref(plain);
    gp_graph *h = snapshot_roundtrip(g);
    assert_int_equal(h->restr_len, g->restr_len);
    assert_memory_equal(g->restr, h->restr, g->restr_len * sizeof *g->restr);
    assert_string_equal(g->version, h->version);
    gp_engine *e = new_engine("on", "on");
    assert_int_equal(gp_engine_attach(e, h, &err), GP_OK);
    assert_int_equal(route(e, h, 1, 5, GP_P2P_AUTO, NULL, NULL), 697);
    gp_graph_unref(h);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* continue_straight (straight.osm): A;W;A with A and W on Main Street. false: the route turns
 * around at W (90 + 90 ds); true: it goes on east from W, around the loop (546 ds, folded into
 * the arcs 2 -> 4 -> 2) and back west past W (113 + 546 + 113 + 90 ds). W at node 2: turning
 * back there is no turn of the turn graph either (203 + 203 against 203 + 546 + 203). */
static void test_continue_straight(void **state) {
    (void)state;
    static const struct {
        double wlon;
        uint64_t d[2][2]; /* [straight][leg] */
        uint32_t len;     /* nodes of the second leg when straight */
    } want[] = {{7.001, {{90, 90}, {90, 862}}, 3}, {7.002, {{203, 203}, {203, 749}}, 3}};
    static const char *cch[] = {"off", "on"};
    for (int c = 0; c < 2; c++) {
        gp_engine *e = new_engine(cch[c], "on");
        as_turns = 1;
        gp_graph *g = load(e, "osm:tests/data/osm/straight.osm?profile=car");
        as_turns = 0;
        gp_err err = {0};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            gp_snap s[3];
            assert_int_equal(gp_snap_point(g, 7.0002, 45.0, 50, &s[0], &err), GP_OK);
            assert_int_equal(gp_snap_point(g, want[i].wlon, 45.0, 50, &s[1], &err), GP_OK);
            s[2] = s[0];
            for (int st = 0; st < 2; st++) {
                gp_snap_route r[2];
                assert_int_equal(gp_engine_route_via(e, g, s, 3, st, GP_P2P_AUTO, r, &err), GP_OK);
                for (int l = 0; l < 2; l++)
                    if (r[l].dist != want[i].d[st][l])
                        fail_msg("W at %.3f, straight %d, cch %s, leg %d: %llu ds, want %llu",
                                 want[i].wlon, st, cch[c], l, (unsigned long long)r[l].dist,
                                 (unsigned long long)want[i].d[st][l]);
                if (st) {
                    assert_int_equal(r[1].path.len, want[i].len);
                    assert_int_equal(gp_graph_orig_id(g, r[1].path.nodes[0]), 2);
                    assert_int_equal(gp_graph_orig_id(g, r[1].path.nodes[1]), 4);
                }
                gp_snap_route_free(&r[0]);
                gp_snap_route_free(&r[1]);
            }
        }
        gp_graph_unref(g);
        gp_engine_free(e);
    }
}

int main(void) {
    if (access("tests/data/osm/turncost.osm", R_OK) != 0) {
        printf("test_turns: skipped (run from the repository root)\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_table),      cmocka_unit_test(test_crossing),
        cmocka_unit_test(test_u_turns),         cmocka_unit_test(test_consistent),
        cmocka_unit_test(test_restrictions),    cmocka_unit_test(test_reweight),
        cmocka_unit_test(test_snapshot_flags),  cmocka_unit_test(test_loop_back),
        cmocka_unit_test(test_turn_table_auto), cmocka_unit_test(test_restr_via_node),
        cmocka_unit_test(test_restr_via_ways),  cmocka_unit_test(test_restr_same_as_copies),
        cmocka_unit_test(test_restr_snapshot),  cmocka_unit_test(test_continue_straight),
        cmocka_unit_test(test_flow_xy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
