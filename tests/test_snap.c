/* test_snap.c - snapping to road segments and routing from snapped positions (engine/snap.c, over
 * the segment index of graph/segidx.c).
 *
 * Hand-drawn roads with literal answers: a coordinate beside a long road snaps to the road's
 * middle, not to a far node; partial costs in both directions of a two-way road with different
 * weights per direction; a one-way road gives one entry; routes between two positions on one arc;
 * the radius and the swapped-coordinates hint. Random graphs (with shape points) against an
 * independent brute force: the nearest distance over every segment found by ternary search along
 * each piece, and route costs from Dijkstra on a copy of the graph with the snapped positions
 * inserted as nodes splitting their arcs. table_snap equals route_snap pairwise.
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

#include "engine/snap.h"
#include "graph/spatial.h"

typedef struct arc {
    int64_t u, v;
    uint32_t w;
} arc;

static gp_graph *build(uint32_t n, const arc *arcs, size_t na, const double *lon,
                       const double *lat) {
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    assert_non_null(b);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(
            gp_builder_add_node(b, i, lon != NULL, lon ? lon[i] : 0, lat ? lat[i] : 0, NULL, &err),
            GP_OK);
    for (size_t i = 0; i < na; i++)
        assert_int_equal(gp_builder_add_arc(b, arcs[i].u, arcs[i].v, arcs[i].w, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "test", "test", 1, &err);
    if (!g) fail_msg("builder: %s", err.msg);
    return g;
}

static uint64_t rng_state = 0x5eed;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double urand(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static gp_engine *engine(void) {
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    if (!e) fail_msg("engine: %s", err.msg);
    return e;
}

/* ---- hand-drawn ---- */

/* 0 (0,0) <-> 1 (0.1,0): 0->1 weight 1000, 1->0 weight 2000; 2 (0.2, 0.0001) one-way 1 -> 2
 * weight 300; 3 (5, 5) isolated. */
static gp_graph *road(void) {
    double lon[] = {0, 0.1, 0.2, 5}, lat[] = {0, 0, 0.0001, 5};
    arc a[] = {{0, 1, 1000}, {1, 0, 2000}, {1, 2, 300}};
    return build(4, a, 3, lon, lat);
}

static void test_snaps_to_middle_of_long_road(void **st) {
    (void)st;
    gp_graph *g = road();
    gp_snap s;
    gp_err err;
    assert_int_equal(gp_snap_point(g, 0.05, 0.001, 1000, &s, &err), GP_OK);
    /* the nearest node is 5.5 km away; the road passes 111 m south */
    assert_true(fabs(s.lon - 0.05) < 1e-6);
    assert_true(fabs(s.lat) < 1e-6);
    assert_true(fabs(s.dist_m - gp_haversine_m(0.05, 0.001, 0.05, 0)) < 0.01);
    assert_true(fabs(s.frac - 0.5) < 1e-6);
    assert_int_equal(s.arc, gp_graph_find_arc(g, 0, 1));
    assert_int_equal(s.rarc, gp_graph_find_arc(g, 1, 0));
    assert_true(s.qlon == 0.05 && s.qlat == 0.001);
    /* a node id's position */
    gp_snap n;
    gp_snap_at_node(g, 2, &n);
    assert_int_equal(n.node, 2);
    assert_int_equal(n.arc, GP_NONE);
    gp_graph_unref(g);
}

static void test_partial_costs(void **st) {
    (void)st;
    gp_graph *g = road();
    gp_snap s;
    gp_err err;
    assert_int_equal(gp_snap_point(g, 0.025, -0.0005, 1000, &s, &err), GP_OK);
    assert_true(fabs(s.frac - 0.25) < 1e-6);
    assert_int_equal(s.node, 0);
    uint32_t node[2];
    uint64_t cost[2];
    /* leaving: forward to 1 for 3/4 of 1000, or back to 0 for 1/4 of 2000 */
    assert_int_equal(gp_snap_origins(g, &s, node, cost), 2);
    assert_int_equal(node[0], 1);
    assert_int_equal(cost[0], 750);
    assert_int_equal(node[1], 0);
    assert_int_equal(cost[1], 500);
    /* arriving: from 0 for 1/4 of 1000, from 1 for 3/4 of 2000 */
    assert_int_equal(gp_snap_dests(g, &s, node, cost), 2);
    assert_int_equal(node[0], 0);
    assert_int_equal(cost[0], 250);
    assert_int_equal(node[1], 1);
    assert_int_equal(cost[1], 1500);
    gp_graph_unref(g);
}

static void test_one_way_gives_one_entry(void **st) {
    (void)st;
    gp_graph *g = road();
    gp_snap s;
    gp_err err;
    assert_int_equal(gp_snap_point(g, 0.15, 0.0002, 1000, &s, &err), GP_OK);
    assert_int_equal(s.arc, gp_graph_find_arc(g, 1, 2));
    assert_int_equal(s.rarc, GP_NONE);
    uint32_t node[2];
    uint64_t cost[2];
    assert_int_equal(gp_snap_origins(g, &s, node, cost), 1);
    assert_int_equal(node[0], 2);
    assert_int_equal(cost[0], 150);
    assert_int_equal(gp_snap_dests(g, &s, node, cost), 1);
    assert_int_equal(node[0], 1);
    assert_int_equal(cost[0], 150);
    gp_graph_unref(g);
}

static void test_same_arc_routes(void **st) {
    (void)st;
    gp_graph *g = road();
    gp_engine *e = engine();
    gp_snap a, b, c, d;
    gp_err err;
    assert_int_equal(gp_snap_point(g, 0.025, 0.0001, 1000, &a, &err), GP_OK);
    assert_int_equal(gp_snap_point(g, 0.075, 0.0001, 1000, &b, &err), GP_OK);
    gp_snap_route r;
    /* forward along 0 -> 1: half of 1000, no node passed */
    assert_int_equal(gp_engine_route_snap(e, g, &a, &b, GP_P2P_AUTO, &r, &err), GP_OK);
    assert_int_equal(r.dist, 500);
    assert_int_equal(r.path.len, 0);
    assert_int_equal(r.first_arc, a.arc);
    assert_int_equal(r.last_arc, a.arc);
    gp_snap_route_free(&r);
    /* backward along 1 -> 0: half of 2000 */
    assert_int_equal(gp_engine_route_snap(e, g, &b, &a, GP_P2P_AUTO, &r, &err), GP_OK);
    assert_int_equal(r.dist, 1000);
    assert_int_equal(r.first_arc, a.rarc);
    gp_snap_route_free(&r);
    /* one-way 1 -> 2: backward has no route at all */
    assert_int_equal(gp_snap_point(g, 0.13, 0.0001, 1000, &c, &err), GP_OK);
    assert_int_equal(gp_snap_point(g, 0.17, 0.0001, 1000, &d, &err), GP_OK);
    assert_int_equal(gp_engine_route_snap(e, g, &c, &d, GP_P2P_AUTO, &r, &err), GP_OK);
    assert_int_equal(r.dist, 120);
    gp_snap_route_free(&r);
    assert_int_equal(gp_engine_route_snap(e, g, &d, &c, GP_P2P_AUTO, &r, &err), GP_OK);
    assert_true(r.dist == GP_INF);
    assert_int_equal(r.path.len, 0);
    gp_snap_route_free(&r);
    /* across a node: a (frac .25 on 0-1) to c (frac .3 on 1-2): 750 + 90 through node 1 */
    assert_int_equal(gp_engine_route_snap(e, g, &a, &c, GP_P2P_AUTO, &r, &err), GP_OK);
    assert_int_equal(r.dist, 750 + 90);
    assert_int_equal(r.path.len, 1);
    assert_int_equal(r.path.nodes[0], 1);
    assert_int_equal(r.first_arc, a.arc);
    assert_int_equal(r.last_arc, c.arc);
    gp_snap_route_free(&r);
    /* a node id to a position: node 0 to b = 750 */
    gp_snap n0;
    gp_snap_at_node(g, 0, &n0);
    assert_int_equal(gp_engine_route_snap(e, g, &n0, &b, GP_P2P_AUTO, &r, &err), GP_OK);
    assert_int_equal(r.dist, 750);
    gp_snap_route_free(&r);
    /* sssp from a: node 1 at 750, node 0 at 500, node 2 at 1050 */
    uint64_t dist[4];
    uint32_t pred[4];
    assert_int_equal(gp_engine_sssp_snap(e, g, &a, GP_INF, dist, pred, &err), GP_OK);
    assert_int_equal(dist[0], 500);
    assert_int_equal(dist[1], 750);
    assert_int_equal(dist[2], 1050);
    assert_true(dist[3] == GP_INF);
    assert_int_equal(pred[2], 1);
    assert_int_equal(pred[1], GP_NONE);
    assert_int_equal(gp_engine_sssp_snap(e, g, &a, 700, dist, pred, &err), GP_OK);
    assert_int_equal(dist[0], 500);
    assert_true(dist[1] == GP_INF && dist[2] == GP_INF);
    gp_engine_free(e);
    gp_graph_unref(g);
}

static void test_radius_and_errors(void **st) {
    (void)st;
    gp_graph *g = road();
    gp_snap s;
    gp_err err;
    /* 111 m from the road: out of a 100 m radius, in a 120 m one */
    assert_int_equal(gp_snap_point(g, 0.05, 0.001, 100, &s, &err), GP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "111."));
    assert_int_equal(gp_snap_point(g, 0.05, 0.001, 120, &s, &err), GP_OK);
    assert_int_equal(gp_snap_point(g, 0.05, 91, 1000, &s, &err), GP_EINVAL);
    assert_int_equal(gp_snap_point(g, NAN, 1, 1000, &s, &err), GP_EINVAL);
    /* lat,lon given as lon,lat: the hint names the swap */
    double lon[] = {8.50, 8.51}, lat[] = {47.30, 47.30};
    arc a[] = {{0, 1, 10}};
    gp_graph *h = build(2, a, 1, lon, lat);
    assert_int_equal(gp_snap_point(h, 47.30, 8.505, 1000, &s, &err), GP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "swapped"));
    assert_int_equal(gp_snap_point(h, 8.505, 47.30, 1000, &s, &err), GP_OK);
    gp_graph_unref(h);
    /* no coordinates */
    gp_graph *nc = build(2, a, 1, NULL, NULL);
    assert_int_equal(gp_snap_point(nc, 1, 1, 1000, &s, &err), GP_EINVAL);
    gp_graph_unref(nc);
    gp_graph_unref(g);
}

/* Two different one-way roads between the same nodes (an OSM street and its detour): neither is
 * the other's reverse, both are indexed, and a route along one never runs backwards on the other. */
static void test_distinct_roads_between_two_nodes(void **st) {
    (void)st;
    double lon[] = {0, 0.01}, lat[] = {0, 0};
    arc a[] = {{0, 1, 100}, {1, 0, 300}};
    gp_graph *g = build(2, a, 2, lon, lat);
    uint32_t straight = gp_graph_find_arc(g, 0, 1), detour = gp_graph_find_arc(g, 1, 0);
    g->arc_shape = calloc(g->m + 1, sizeof *g->arc_shape);
    g->shape_lon = malloc(sizeof(double));
    g->shape_lat = malloc(sizeof(double));
    g->shape_lon[0] = 0.005;
    g->shape_lat[0] = 0.005;
    g->arc_shape[detour + 1] = 1; /* arc order: straight (0 -> 1) then detour (1 -> 0) */
    g->arc_shape[g->m] = 1;
    assert_int_equal(gp_graph_reverse_arc(g, straight), GP_NONE);
    gp_err err;
    gp_snap s;
    /* beside the detour's apex, 555 m from the straight road */
    assert_int_equal(gp_snap_point(g, 0.005, 0.0049, 1000, &s, &err), GP_OK);
    assert_int_equal(s.arc, detour);
    assert_int_equal(s.rarc, GP_NONE);
    assert_true(s.dist_m < 12);
    assert_true(fabs(s.frac - 0.5) < 0.01);
    /* beside the straight road: one way only */
    assert_int_equal(gp_snap_point(g, 0.0025, -0.0001, 1000, &s, &err), GP_OK);
    assert_int_equal(s.arc, straight);
    assert_int_equal(s.rarc, GP_NONE);
    uint32_t node[2];
    uint64_t cost[2];
    assert_int_equal(gp_snap_origins(g, &s, node, cost), 1);
    assert_int_equal(node[0], 1);
    assert_int_equal(cost[0], 75);
    gp_graph_unref(g);
}

/* ---- random graphs against brute force ---- */

#define DEG2RAD (3.14159265358979323846 / 180.0)
static void uv(double lon, double lat, double v[3]) {
    v[0] = cos(lat * DEG2RAD) * cos(lon * DEG2RAD);
    v[1] = cos(lat * DEG2RAD) * sin(lon * DEG2RAD);
    v[2] = sin(lat * DEG2RAD);
}
/* Point at t in [0,1] along the great circle a -> b (normalised linear interpolation: monotone in
 * t, which is all a ternary search needs). */
static void lerp(const double a[3], const double b[3], double t, double *lon, double *lat) {
    double p[3], l = 0;
    for (int d = 0; d < 3; d++) {
        p[d] = a[d] + (b[d] - a[d]) * t;
        l += p[d] * p[d];
    }
    l = sqrt(l);
    *lat = asin(p[2] / l) / DEG2RAD;
    *lon = atan2(p[1], p[0]) / DEG2RAD;
}
static double piece_dist(double qlon, double qlat, double alon, double alat, double blon,
                         double blat) {
    double a[3], b[3];
    uv(alon, alat, a);
    uv(blon, blat, b);
    double lo = 0, hi = 1, x, y;
    for (int i = 0; i < 64; i++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        lerp(a, b, m1, &x, &y);
        double d1 = gp_haversine_m(qlon, qlat, x, y);
        lerp(a, b, m2, &x, &y);
        double d2 = gp_haversine_m(qlon, qlat, x, y);
        if (d1 < d2) hi = m2;
        else lo = m1;
    }
    lerp(a, b, (lo + hi) / 2, &x, &y);
    return gp_haversine_m(qlon, qlat, x, y);
}
static double arc_dist(const gp_graph *g, uint32_t a, double qlon, double qlat) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
    uint32_t u = gp_graph_arc_tail(g, a);
    double px = g->lon[u], py = g->lat[u], best = INFINITY;
    for (uint32_t k = 0; k <= ns; k++) {
        double nx = k < ns ? sx[k] : g->lon[g->col[a]], ny = k < ns ? sy[k] : g->lat[g->col[a]];
        double d = piece_dist(qlon, qlat, px, py, nx, ny);
        if (d < best) best = d;
        px = nx;
        py = ny;
    }
    return best;
}

/* n nodes in a 0.05-degree square, ~2n roads, half two-way (different weights each way), a third
 * with 1..3 shape points; when shape, shape points are attached as an OSM import would. */
static gp_graph *random_roads(uint32_t n, int shape) {
    size_t cap = 8 * (size_t)n;
    arc *a = malloc(cap * sizeof *a);
    double *lon = malloc(n * sizeof *lon), *lat = malloc(n * sizeof *lat);
    for (uint32_t i = 0; i < n; i++) {
        lon[i] = 7.40 + 0.05 * urand();
        lat[i] = 43.70 + 0.05 * urand();
    }
    size_t k = 0;
    for (uint32_t i = 0; i < 2 * n; i++) {
        int64_t u = (int64_t)(rnd() % n), v = (int64_t)(rnd() % n);
        if (u == v) continue;
        a[k++] = (arc){u, v, 1 + (uint32_t)(rnd() % 1000)};
        if (rnd() % 2) a[k++] = (arc){v, u, 1 + (uint32_t)(rnd() % 1000)};
    }
    gp_graph *g = build(n, a, k, lon, lat);
    if (shape) {
        /* shape points per arc; the reverse of a two-way road gets the same points reversed */
        uint32_t *cnt = calloc(g->m + 1, sizeof *cnt);
        for (uint32_t x = 0; x < g->m; x++) {
            uint32_t u = gp_graph_arc_tail(g, x), v = g->col[x];
            uint32_t r = u > v ? gp_graph_find_arc(g, v, u) : GP_NONE;
            cnt[x] = r != GP_NONE ? 0 : (rnd() % 3 == 0 ? 1 + (uint32_t)(rnd() % 3) : 0);
        }
        for (uint32_t x = 0; x < g->m; x++) { /* copy counts to the reverse arcs */
            uint32_t u = gp_graph_arc_tail(g, x), v = g->col[x];
            uint32_t r = u > v ? gp_graph_find_arc(g, v, u) : GP_NONE;
            if (r != GP_NONE) cnt[x] = cnt[r];
        }
        g->arc_shape = malloc((g->m + 1) * sizeof *g->arc_shape);
        uint32_t tot = 0;
        for (uint32_t x = 0; x < g->m; x++) {
            g->arc_shape[x] = tot;
            tot += cnt[x];
        }
        g->arc_shape[g->m] = tot;
        g->shape_lon = malloc((tot + 1) * sizeof(double));
        g->shape_lat = malloc((tot + 1) * sizeof(double));
        for (uint32_t x = 0; x < g->m; x++) {
            uint32_t u = gp_graph_arc_tail(g, x), v = g->col[x];
            uint32_t r = u > v ? gp_graph_find_arc(g, v, u) : GP_NONE;
            if (r != GP_NONE) continue;
            for (uint32_t j = 0; j < cnt[x]; j++) {
                double t = (j + 1.0) / (cnt[x] + 1.0);
                g->shape_lon[g->arc_shape[x] + j] =
                    g->lon[u] + t * (g->lon[v] - g->lon[u]) + 0.004 * (urand() - 0.5);
                g->shape_lat[g->arc_shape[x] + j] =
                    g->lat[u] + t * (g->lat[v] - g->lat[u]) + 0.004 * (urand() - 0.5);
            }
        }
        for (uint32_t x = 0; x < g->m; x++) {
            uint32_t u = gp_graph_arc_tail(g, x), v = g->col[x];
            uint32_t r = u > v ? gp_graph_find_arc(g, v, u) : GP_NONE;
            if (r == GP_NONE) continue;
            for (uint32_t j = 0; j < cnt[x]; j++) {
                g->shape_lon[g->arc_shape[x] + j] = g->shape_lon[g->arc_shape[r] + cnt[x] - 1 - j];
                g->shape_lat[g->arc_shape[x] + j] = g->shape_lat[g->arc_shape[r] + cnt[x] - 1 - j];
            }
        }
        free(cnt);
    }
    free(a);
    free(lon);
    free(lat);
    return g;
}

static void check_brute(gp_graph *g, int queries) {
    gp_err err;
    for (int q = 0; q < queries; q++) {
        double qlon = g->lon[0] + 0.08 * (urand() - 0.5) + 0.02,
               qlat = g->lat[0] + 0.08 * (urand() - 0.5) + 0.02;
        double bf = INFINITY;
        for (uint32_t a = 0; a < g->m; a++) {
            double d = arc_dist(g, a, qlon, qlat);
            if (d < bf) bf = d;
        }
        gp_snap s;
        assert_int_equal(gp_snap_point(g, qlon, qlat, 1e7, &s, &err), GP_OK);
        if (fabs(s.dist_m - bf) > 1e-3)
            fail_msg("query %d (%.6f,%.6f): snap %.6f m, brute force %.6f m", q, qlon, qlat,
                     s.dist_m, bf);
        /* the position lies on the arc it names, at the distance it reports */
        assert_true(arc_dist(g, s.arc, s.lon, s.lat) < 1e-3);
        assert_true(fabs(gp_haversine_m(qlon, qlat, s.lon, s.lat) - s.dist_m) < 1e-6);
        if (s.rarc != GP_NONE) assert_true(arc_dist(g, s.rarc, s.lon, s.lat) < 1e-3);
        /* frac by length: the partial length from the tail */
        double len = gp_graph_arc_length_m(g, s.arc);
        uint32_t u = gp_graph_arc_tail(g, s.arc);
        if (g->arc_shape == NULL || g->arc_shape[s.arc] == g->arc_shape[s.arc + 1])
            assert_true(fabs(gp_haversine_m(g->lon[u], g->lat[u], s.lon, s.lat) - s.frac * len) <
                        1e-3);
        /* radius just under / over the distance */
        if (bf > 1) {
            assert_int_equal(gp_snap_point(g, qlon, qlat, bf - 0.01, &s, &err), GP_ENOTFOUND);
            assert_int_equal(gp_snap_point(g, qlon, qlat, bf + 0.01, &s, &err), GP_OK);
        }
    }
}

static void test_brute_force_random(void **st) {
    (void)st;
    for (int shape = 0; shape <= 1; shape++)
        for (int rep = 0; rep < 3; rep++) {
            gp_graph *g = random_roads(60 + 50 * rep, shape);
            check_brute(g, 40);
            gp_graph_unref(g);
        }
}

static void test_brute_force_gen(void **st) {
    (void)st;
    gp_err err;
    gp_graph *g = gp_generate_road(3000, 7, &err);
    assert_non_null(g);
    check_brute(g, 8);
    gp_graph_unref(g);
    /* over 65536 pieces: the index's top levels are built on threads */
    g = gp_generate_road(40000, 3, &err);
    assert_non_null(g);
    check_brute(g, 2);
    gp_graph_unref(g);
}

/* Route cost from Dijkstra on a copy of g with a and b inserted as nodes n and n + 1 splitting
 * their arcs (at frac 0 / 1 joined to the end node both ways at no cost). */
static uint64_t split_route(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b) {
    const gp_snap *ps[2] = {a, b};
    size_t cap = g->m + 32, k = 0;
    arc *x = malloc(cap * sizeof *x);
    uint32_t cut[4];
    int nc = 0;
    for (int i = 0; i < 2; i++) {
        if (ps[i]->arc == GP_NONE) continue;
        cut[nc++] = ps[i]->arc;
        if (ps[i]->rarc != GP_NONE) cut[nc++] = ps[i]->rarc;
    }
    for (uint32_t c = 0; c < g->m; c++) {
        int skip = 0;
        for (int i = 0; i < nc; i++) skip |= cut[i] == c;
        if (!skip) x[k++] = (arc){gp_graph_arc_tail(g, c), g->col[c], g->w[c]};
    }
    for (int i = 0; i < nc; i++) {
        uint32_t c = cut[i];
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= cut[j] == c;
        if (dup) continue;
        /* the points on arc c, ordered by their position along it */
        int64_t id[2];
        double f[2];
        int np = 0;
        for (int p = 0; p < 2; p++) {
            if (ps[p]->arc == c) f[np] = ps[p]->frac, id[np++] = g->n + p;
            else if (ps[p]->rarc == c) f[np] = 1 - ps[p]->frac, id[np++] = g->n + p;
        }
        if (np == 2 && f[1] < f[0]) {
            double tf = f[0];
            f[0] = f[1];
            f[1] = tf;
            int64_t ti = id[0];
            id[0] = id[1];
            id[1] = ti;
        }
        int64_t prev = gp_graph_arc_tail(g, c);
        double pf = 0;
        for (int p = 0; p < np; p++) {
            x[k++] = (arc){prev, id[p], (uint32_t)llround((f[p] - pf) * g->w[c])};
            prev = id[p];
            pf = f[p];
        }
        x[k++] = (arc){prev, g->col[c], (uint32_t)llround((1 - pf) * g->w[c])};
    }
    for (int p = 0; p < 2; p++) {
        uint32_t end = ps[p]->arc == GP_NONE ? ps[p]->node
                       : ps[p]->frac <= 0    ? gp_graph_arc_tail(g, ps[p]->arc)
                       : ps[p]->frac >= 1    ? g->col[ps[p]->arc]
                                             : GP_NONE;
        if (end == GP_NONE) continue;
        x[k++] = (arc){end, g->n + p, 0};
        x[k++] = (arc){g->n + p, end, 0};
    }
    double *lon = malloc((g->n + 2) * sizeof *lon), *lat = malloc((g->n + 2) * sizeof *lat);
    memcpy(lon, g->lon, g->n * sizeof *lon);
    memcpy(lat, g->lat, g->n * sizeof *lat);
    lon[g->n] = a->lon, lat[g->n] = a->lat, lon[g->n + 1] = b->lon, lat[g->n + 1] = b->lat;
    gp_graph *h = build(g->n + 2, x, k, lon, lat);
    uint64_t *d = malloc((g->n + 2) * sizeof *d);
    gp_err err;
    assert_int_equal(gp_engine_sssp(e, h, g->n, GP_INF, d, NULL, &err), GP_OK);
    uint64_t r = d[g->n + 1];
    /* a and b at the same spot of one road: the split graph has a 0-cost path */
    free(d);
    free(lon);
    free(lat);
    free(x);
    gp_graph_unref(h);
    return r;
}

static void random_snaps(const gp_graph *g, gp_snap *s, uint32_t n) {
    gp_err err;
    for (uint32_t i = 0; i < n; i++) {
        if (i % 5 == 4) {
            gp_snap_at_node(g, (uint32_t)(rnd() % g->n), &s[i]);
            continue;
        }
        double qlon = g->lon[0] + 0.06 * (urand() - 0.5) + 0.02,
               qlat = g->lat[0] + 0.06 * (urand() - 0.5) + 0.02;
        assert_int_equal(gp_snap_point(g, qlon, qlat, 1e7, &s[i], &err), GP_OK);
    }
}

static void test_routes_and_tables_random(void **st) {
    (void)st;
    gp_engine *e = engine();
    for (int rep = 0; rep < 4; rep++) {
        gp_graph *g = random_roads(80 + 40 * rep, rep & 1);
        enum { NS = 7, NT = 9 };
        gp_snap src[NS], dst[NT];
        random_snaps(g, src, NS);
        random_snaps(g, dst, NT);
        dst[0] = src[0]; /* the same position both ends */
        dst[1] = src[1];
        dst[1].frac = src[1].frac * 0.5; /* the same arc, behind */
        uint64_t tab[NS * NT];
        gp_err err;
        assert_int_equal(gp_engine_table_snap(e, g, src, NS, dst, NT, tab, &err), GP_OK);
        for (int i = 0; i < NS; i++)
            for (int j = 0; j < NT; j++) {
                gp_snap_route r;
                assert_int_equal(
                    gp_engine_route_snap(e, g, &src[i], &dst[j], GP_P2P_AUTO, &r, &err), GP_OK);
                if (r.dist != tab[i * NT + j])
                    fail_msg("rep %d: table[%d][%d] = %llu, route %llu", rep, i, j,
                             (unsigned long long)tab[i * NT + j], (unsigned long long)r.dist);
                uint64_t ref = split_route(e, g, &src[i], &dst[j]);
                /* on a shared arc the split graph rounds the pieces separately: +-1 each */
                int shared = src[i].arc != GP_NONE && dst[j].arc != GP_NONE &&
                             (src[i].arc == dst[j].arc || src[i].arc == dst[j].rarc);
                uint64_t slack = shared ? 2 : 0;
                if (r.dist == GP_INF
                        ? ref != GP_INF
                        : ref == GP_INF || r.dist + slack < ref || ref + slack < r.dist)
                    fail_msg("rep %d: route %d -> %d = %llu, split-graph Dijkstra %llu", rep, i, j,
                             (unsigned long long)r.dist, (unsigned long long)ref);
                /* the path realises the middle part */
                if (r.dist != GP_INF && r.path.len > 1) {
                    uint64_t mid = 0;
                    for (uint32_t p = 0; p + 1 < r.path.len; p++) {
                        uint32_t c = gp_graph_find_arc(g, r.path.nodes[p], r.path.nodes[p + 1]);
                        assert_int_not_equal(c, GP_NONE);
                        mid += g->w[c];
                    }
                    assert_true(mid <= r.dist);
                }
                gp_snap_route_free(&r);
            }
        /* sssp_snap to every node equals route_snap to that node */
        uint64_t *d = malloc(g->n * sizeof *d);
        assert_int_equal(gp_engine_sssp_snap(e, g, &src[2], GP_INF, d, NULL, &err), GP_OK);
        for (uint32_t v = 0; v < g->n; v += 7) {
            gp_snap nv;
            gp_snap_at_node(g, v, &nv);
            gp_snap_route r;
            assert_int_equal(gp_engine_route_snap(e, g, &src[2], &nv, GP_P2P_AUTO, &r, &err),
                             GP_OK);
            assert_true(r.dist == d[v]);
            gp_snap_route_free(&r);
        }
        free(d);
        gp_graph_unref(g);
    }
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snaps_to_middle_of_long_road),
        cmocka_unit_test(test_partial_costs),
        cmocka_unit_test(test_one_way_gives_one_entry),
        cmocka_unit_test(test_same_arc_routes),
        cmocka_unit_test(test_radius_and_errors),
        cmocka_unit_test(test_distinct_roads_between_two_nodes),
        cmocka_unit_test(test_brute_force_random),
        cmocka_unit_test(test_brute_force_gen),
        cmocka_unit_test(test_routes_and_tables_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
