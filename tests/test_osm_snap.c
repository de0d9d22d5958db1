/* test_osm_snap.c - snapping to OSM roads (engine/snap.c on graphs from graph/osm.c): a coordinate
 * beside a long collapsed road snaps to the road's middle (a point on its shape, not one of the
 * far end nodes), and a route's duration from a snapped position includes the partial segment:
 * half of the 330 ds "Long Road" arc plus the 71 ds of "Short Lane"; on a one-way street the only
 * way from a position to the street's start is forward and around the detour. Literal values
 * from tests/data/osm (see tests/test_osm.c for how they are computed). Also the shape points' OSM
 * ids and the filtered search (gp_snap_point_if). Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/snap.h"
#include "storage/source.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static gp_engine *eng;

static int setup(void **state) {
    (void)state;
    gp_err err = {0};
    eng = gp_engine_new("cpu", 1, NULL, &err);
    return eng ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    gp_engine_free(eng);
    return 0;
}

static gp_graph *load(const char *spec) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(eng, g, &err), GP_OK);
    /* attached: the segment index is built (the first coordinate query does not build it) */
    assert_non_null(g->snap);
    return g;
}

static uint64_t snap_route(gp_graph *g, const gp_snap *a, const gp_snap *b) {
    gp_err err = {0};
    gp_snap_route r = {0};
    assert_int_equal(gp_engine_route_snap(eng, g, a, b, GP_P2P_ASTAR, &r, &err), GP_OK);
    uint64_t d = r.dist;
    gp_snap_route_free(&r);
    uint64_t t = 0;
    assert_int_equal(gp_engine_table_snap(eng, g, a, 1, b, 1, &t, &err), GP_OK);
    assert_true(t == d);
    return d;
}

/* A gp_seg_filter: every road but Long Road. */
static int not_long_road(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                         double a_lat, double b_lon, double b_lat) {
    (void)ctx, (void)tail, (void)a_lon, (void)a_lat, (void)b_lon, (void)b_lat;
    const char *nm = gp_graph_arc_name(g, arc);
    return !nm || strcmp(nm, "Long Road") != 0;
}

static void test_long_road_middle(void **state) {
    (void)state;
    gp_graph *g = load("osm:tests/data/osm/access.osm?profile=car");
    gp_err err = {0};
    gp_snap s;
    /* 11.1 m north of shape point 51, the middle of Long Road (50 -> 53, 314.29 m) */
    assert_int_equal(gp_snap_point(g, 7.002, 45.0401, 100, &s, &err), GP_OK);
    assert_true(fabs(s.lon - 7.002) < 1e-7 && fabs(s.lat - 45.04) < 1e-7);
    assert_true(fabs(s.dist_m - 11.12) < 0.01);
    uint32_t n50 = gp_graph_index(g, 50), n53 = gp_graph_index(g, 53);
    assert_int_not_equal(s.arc, GP_NONE);
    assert_int_not_equal(s.rarc, GP_NONE); /* two-way */
    uint32_t t = gp_graph_arc_tail(g, s.arc), h = g->col[s.arc];
    assert_true((t == n50 && h == n53) || (t == n53 && h == n50));
    assert_true(fabs(s.frac - 0.5) < 1e-6);
    assert_string_equal(gp_graph_arc_name(g, s.arc), "Long Road");
    /* the shape points keep their OSM node ids, in the arc's direction */
    assert_non_null(g->shape_osm_id);
    const int64_t *sid = g->shape_osm_id + g->arc_shape[s.arc];
    int fwd = t == n50;
    assert_int_equal(sid[0], fwd ? 55 : 56);
    assert_int_equal(sid[1], 51);
    assert_int_equal(sid[2], fwd ? 56 : 55);
    /* a filter: the nearest road it accepts (Short Lane from 53, 157 m off), none within 100 m */
    gp_snap f;
    assert_int_equal(gp_snap_point_if(g, 7.002, 45.0401, 500, not_long_road, NULL, &f, &err),
                     GP_OK);
    assert_string_equal(gp_graph_arc_name(g, f.arc), "Short Lane");
    assert_true(fabs(f.lon - 7.004) < 1e-7 && fabs(f.lat - 45.04) < 1e-7);
    assert_int_equal(gp_snap_point_if(g, 7.002, 45.0401, 100, not_long_road, NULL, &f, &err),
                     GP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "qualifies"));
    /* duration from the middle to 54: half of 377 ds, then Short Lane's 71 ds */
    gp_snap b, a;
    gp_snap_at_node(g, gp_graph_index(g, 54), &b);
    uint64_t d = snap_route(g, &s, &b);
    if (d < 259 || d > 261)
        fail_msg("middle of Long Road -> 54: %llu ds, want 260 +- 1", (unsigned long long)d);
    gp_snap_at_node(g, n50, &a);
    d = snap_route(g, &a, &s);
    if (d < 188 || d > 189)
        fail_msg("50 -> middle: %llu ds, want 188.5 +- 1", (unsigned long long)d);
    gp_graph_unref(g);
}

static void test_one_way_partial(void **state) {
    (void)state;
    gp_graph *g = load("osm:tests/data/osm/oneway.osm?profile=car");
    gp_err err = {0};
    gp_snap s, to1, to3;
    /* three quarters along One Way Street (1 -> 3, 226 ds), 5.6 m beside it */
    assert_int_equal(gp_snap_point(g, 7.0015, 45.00005, 50, &s, &err), GP_OK);
    assert_int_equal(s.rarc, GP_NONE); /* one way: no opposite arc */
    assert_int_equal(gp_graph_arc_tail(g, s.arc), gp_graph_index(g, 1));
    assert_true(fabs(s.frac - 0.75) < 1e-3);
    gp_snap_at_node(g, gp_graph_index(g, 3), &to3);
    gp_snap_at_node(g, gp_graph_index(g, 1), &to1);
    uint64_t d = snap_route(g, &s, &to3); /* the last quarter */
    if (d < 56 || d > 57) fail_msg("-> 3: %llu ds, want 56.5 +- 0.5", (unsigned long long)d);
    d = snap_route(g, &s, &to1); /* forward to 3, then the 547 ds detour */
    if (d < 603 || d > 604) fail_msg("-> 1: %llu ds, want 603.5 +- 0.5", (unsigned long long)d);
    gp_graph_unref(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_road_middle),
        cmocka_unit_test(test_one_way_partial),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
