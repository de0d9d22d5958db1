/* test_turns.c - turn costs (graph/turns.c, engine/snap.c through the turn graph) on the hand-made
 * tests/data/osm/turncost.osm, car profile, literal values in deciseconds. Residential roads at
 * 25 km/h: a 0.001 degree east-west arm (78.6 m) is 113 ds, the 0.0005 degree halves of the south
 * arm 80 ds each, the 0.002 degree north arm 320 ds. Turn costs (car.lua v6): a right turn of 90
 * degrees 7.5 / (1 + e^0.941) = 2.105 s -> 21 ds, a left turn 5.395 s -> 54 ds, straight 0.007 s
 * -> 0, a U-turn 7.455 + 20 s -> 275 ds, a signal 20 ds, a give-way sign 10 ds. Also: turn
 * restrictions still obeyed (turns.osm), table == route == one-to-all, CCH == Dijkstra, a cost
 * change through the turn graph, node flags through a snapshot. Run from the repository root. */
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

static gp_graph *load(gp_engine *e, const char *spec) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
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
    check_consistent("osm:tests/data/osm/turns.osm?profile=car");
    check_consistent("osm:tests/data/osm/viaway.osm?profile=car");
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

static void test_snapshot_flags(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load(TC, NULL, &err);
    assert_non_null(g);
    char path[64];
    snprintf(path, sizeof path, "/tmp/gp_turns_%d.gpath", (int)getpid());
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    char spec[80];
    snprintf(spec, sizeof spec, "gpath:%s", path);
    gp_graph *h = gp_graph_load(spec, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    assert_non_null(h->node_flags);
    assert_memory_equal(g->node_flags, h->node_flags, g->n);
    assert_string_equal(g->version, h->version);
    unlink(path);
    gp_graph_unref(h);
    gp_graph_unref(g);
}

int main(void) {
    if (access("tests/data/osm/turncost.osm", R_OK) != 0) {
        printf("test_turns: skipped (run from the repository root)\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cost_table),     cmocka_unit_test(test_crossing),
        cmocka_unit_test(test_u_turns),        cmocka_unit_test(test_consistent),
        cmocka_unit_test(test_restrictions),   cmocka_unit_test(test_reweight),
        cmocka_unit_test(test_snapshot_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
