/* test_render_snap.c - routes between snapped positions rendered for the /v1 API
 * (server/api/render.c gp_render_route_snap / gp_render_waypoint) on a graph carrying road attributes
 * the way an OSM import does (shape points, names, lengths): the geometry runs from the snapped
 * point through the arcs' shape points to the other snapped point, length_m adds partial arcs,
 * waypoints name the road, coordinates carry 6 decimals and metres 2. The route document (path and
 * coordinates written as raw text) prints byte for byte as the cJSON tree of gp_render_route_snap
 * does, on random graphs with awkward ids (negative, 10^15 and beyond, past 2^53) and coordinates
 * (tiny, zero, negative, not on the 10^-6 grid, shape points).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/snap.h"
#include "graph/spatial.h"
#include "server/api/render.h"

/* 0 (0, 0) <-> 1 (0.02, 0) along a bent road through (0.005, 0.001) and (0.015, 0.001), named
 * "Main Street", 1000 each way; 1 -> 2 (0.03, 0) straight, "Side Road", 100, one-way. */
static gp_graph *bent_road(void) {
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    double lon[] = {0, 0.02, 0.03};
    for (int i = 0; i < 3; i++)
        assert_int_equal(gp_builder_add_node(b, i + 1, 1, lon[i], 0, NULL, &err), 0);
    assert_int_equal(gp_builder_add_arc(b, 1, 2, 1000, &err), 0);
    assert_int_equal(gp_builder_add_arc(b, 2, 1, 1000, &err), 0);
    assert_int_equal(gp_builder_add_arc(b, 2, 3, 100, &err), 0);
    gp_graph *g = gp_builder_finish(b, "bent", "test", 1, &err);
    assert_non_null(g);
    uint32_t a01 = gp_graph_find_arc(g, 0, 1), a10 = gp_graph_find_arc(g, 1, 0),
             a12 = gp_graph_find_arc(g, 1, 2);
    g->arc_shape = calloc(g->m + 1, sizeof *g->arc_shape);
    g->shape_lon = malloc(4 * sizeof(double));
    g->shape_lat = malloc(4 * sizeof(double));
    /* arcs are in CSR order a01 < a10 < a12: two shape points each for the bent road */
    assert_true(a01 < a10 && a10 < a12);
    g->arc_shape[a01] = 0;
    g->arc_shape[a10] = 2;
    g->arc_shape[a12] = 4;
    g->arc_shape[g->m] = 4;
    double sx[] = {0.005, 0.015, 0.015, 0.005}, sy[] = {0.001, 0.001, 0.001, 0.001};
    memcpy(g->shape_lon, sx, sizeof sx);
    memcpy(g->shape_lat, sy, sizeof sy);
    static const char names[] = "\0Main Street\0Side Road";
    g->strtab = malloc(sizeof names);
    memcpy(g->strtab, names, sizeof names);
    g->strtab_len = sizeof names;
    g->arc_name = calloc(g->m, sizeof *g->arc_name);
    g->arc_name[a01] = g->arc_name[a10] = 1;
    g->arc_name[a12] = 13;
    return g;
}

static void coord_eq(const cJSON *c, double lon, double lat) {
    assert_true(cJSON_IsArray(c) && cJSON_GetArraySize(c) == 2);
    assert_true(fabs(cJSON_GetArrayItem(c, 0)->valuedouble - lon) < 1e-6);
    assert_true(fabs(cJSON_GetArrayItem(c, 1)->valuedouble - lat) < 1e-6);
}

static void test_geometry_through_shape_points(void **st) {
    (void)st;
    gp_graph *g = bent_road();
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    assert_non_null(e);
    gp_snap a, b;
    /* beside the first piece of the bent road, and beside the side road */
    assert_int_equal(gp_snap_point(g, 0.0025, 0.0009, 1000, &a, &err), 0);
    assert_int_equal(gp_snap_point(g, 0.025, 0.0001, 1000, &b, &err), 0);
    assert_int_equal(a.arc, gp_graph_find_arc(g, 0, 1));
    gp_snap_route r;
    assert_int_equal(gp_engine_route_snap(e, g, &a, &b, GP_P2P_AUTO, &r, &err), 0);
    cJSON *o = gp_render_route_snap(g, &a, &b, &r);
    assert_non_null(o);
    const cJSON *coords = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "geometry"), "coordinates");
    assert_int_equal(cJSON_GetArraySize(coords), 5);
    coord_eq(cJSON_GetArrayItem(coords, 0), a.lon, a.lat);
    coord_eq(cJSON_GetArrayItem(coords, 1), 0.005, 0.001);
    coord_eq(cJSON_GetArrayItem(coords, 2), 0.015, 0.001);
    coord_eq(cJSON_GetArrayItem(coords, 3), 0.02, 0);
    coord_eq(cJSON_GetArrayItem(coords, 4), b.lon, b.lat);
    /* length: the rest of the bent road from a, and half of the side road */
    double bent = gp_graph_arc_length_m(g, a.arc), side = gp_graph_arc_length_m(g, b.arc);
    double want = (1 - a.frac) * bent + b.frac * side;
    assert_true(fabs(cJSON_GetObjectItem(o, "length_m")->valuedouble - want) < 0.01);
    assert_true(fabs(b.frac - 0.5) < 1e-3);
    /* waypoints: the road names, metres with 2 decimals */
    const cJSON *w = cJSON_GetObjectItem(o, "waypoints");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(w, 0), "name")->valuestring,
                        "Main Street");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(w, 1), "name")->valuestring,
                        "Side Road");
    double dm = cJSON_GetObjectItem(cJSON_GetArrayItem(w, 0), "distance_m")->valuedouble;
    assert_true(fabs(dm - round(a.dist_m * 100) / 100) < 1e-9);
    assert_string_equal(cJSON_GetObjectItem(o, "weight_unit")->valuestring, "cost");
    assert_null(cJSON_GetObjectItem(o, "duration_s")); /* the weights are not times */
    cJSON_Delete(o);
    gp_snap_route_free(&r);

    /* both on the bent road, backwards: the reverse arc's shape, no node passed */
    gp_snap c;
    assert_int_equal(gp_snap_point(g, 0.0175, 0.0009, 1000, &c, &err), 0);
    assert_int_equal(c.arc, a.arc);
    assert_int_equal(gp_engine_route_snap(e, g, &c, &a, GP_P2P_AUTO, &r, &err), 0);
    assert_int_equal(r.path.len, 0);
    assert_int_equal(r.first_arc, a.rarc);
    o = gp_render_route_snap(g, &c, &a, &r);
    coords = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "geometry"), "coordinates");
    assert_int_equal(cJSON_GetArraySize(coords), 4);
    coord_eq(cJSON_GetArrayItem(coords, 0), c.lon, c.lat);
    coord_eq(cJSON_GetArrayItem(coords, 1), 0.015, 0.001);
    coord_eq(cJSON_GetArrayItem(coords, 2), 0.005, 0.001);
    coord_eq(cJSON_GetArrayItem(coords, 3), a.lon, a.lat);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "path")), 0);
    assert_true(fabs(cJSON_GetObjectItem(o, "length_m")->valuedouble - (c.frac - a.frac) * bent) <
                0.01);
    cJSON_Delete(o);
    gp_snap_route_free(&r);

    /* a travel-time graph gets duration_s */
    gp_graph_set_unit(g, "deciseconds", 0.1);
    assert_int_equal(gp_engine_route_snap(e, g, &a, &b, GP_P2P_AUTO, &r, &err), 0);
    o = gp_render_route_snap(g, &a, &b, &r);
    assert_true(fabs(cJSON_GetObjectItem(o, "duration_s")->valuedouble - r.dist / 10.0) < 0.01);
    cJSON_Delete(o);
    gp_snap_route_free(&r);
    gp_engine_free(e);
    gp_graph_unref(g);
}

/* Random graph: ids and coordinates from awkward lists, random arcs with shape points. */
static gp_graph *awkward_graph(unsigned *seed) {
    static const int64_t ids[] = {1,
                                  -5,
                                  999999999999999LL,
                                  1000000000000000LL,
                                  1000000000000001LL,
                                  1234567890123450LL,
                                  -1000000000000000LL,
                                  9007199254740991LL,
                                  9007199254740993LL,
                                  (1LL << 60) + 1,
                                  -(1LL << 60) - 3,
                                  42,
                                  7000000001LL,
                                  0};
    static const double cs[] = {0,           1e-5,          -3e-7,        0.0001,
                                -0.0001,     7.4205,        -22.419415,   89.999999,
                                -89.9999995, 43.7300001234, 1e-4 + 1e-12, 45.5};
    enum { N = sizeof ids / sizeof *ids, NC = sizeof cs / sizeof *cs };
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    for (int i = 0; i < N; i++)
        assert_int_equal(gp_builder_add_node(b, ids[i], 1,
                                             cs[rand_r(seed) % NC] + (rand_r(seed) % 3) * 1e-6,
                                             cs[rand_r(seed) % NC], NULL, &err),
                         0);
    for (int k = 0; k < 3 * N; k++) {
        int u = rand_r(seed) % N, v = rand_r(seed) % N;
        double sx[2] = {cs[rand_r(seed) % NC], cs[rand_r(seed) % NC]},
               sy[2] = {cs[rand_r(seed) % NC], 1e-9};
        gp_road_attr ra = {100,  NULL, NULL, 0,  (uint32_t)(rand_r(seed) % 3), sx, sy,
                           NULL, 0,    NULL, {0}};
        assert_int_equal(gp_builder_add_road_arc(b, ids[u], ids[v],
                                                 1 + (uint32_t)(rand_r(seed) % 50), &ra, &err),
                         0);
        if (rand_r(seed) % 2)
            assert_int_equal(
                gp_builder_add_arc(b, ids[v], ids[u], 1 + (uint32_t)(rand_r(seed) % 50), &err), 0);
    }
    gp_graph *g = gp_builder_finish(b, "awkward", "test", 1, &err);
    assert_non_null(g);
    return g;
}

static void test_doc_text_equals_tree(void **st) {
    (void)st;
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    assert_non_null(e);
    unsigned seed = 11;
    int routes = 0;
    for (int gi = 0; gi < 20; gi++) {
        gp_graph *g = awkward_graph(&seed);
        for (int q = 0; q < 40; q++) {
            gp_snap a, b;
            uint32_t u = (uint32_t)rand_r(&seed) % g->n, v = (uint32_t)rand_r(&seed) % g->n;
            if (q % 2) {
                gp_snap_at_node(g, u, &a);
                gp_snap_at_node(g, v, &b);
            } else if (gp_snap_point(g, g->lon[u] + 1e-4, g->lat[u], 1e9, &a, &err) ||
                       gp_snap_point(g, g->lon[v], g->lat[v] - 1e-4, 1e9, &b, &err)) {
                continue;
            }
            gp_snap_route r;
            assert_int_equal(gp_engine_route_snap(e, g, &a, &b, GP_P2P_AUTO, &r, &err), 0);
            cJSON *tree = gp_render_route_snap(g, &a, &b, &r);
            assert_non_null(tree);
            cJSON_AddStringToObject(tree, "graph", "x");
            cJSON_AddStringToObject(tree, "version", g->version);
            cJSON_AddStringToObject(tree, "data_version", g->version);
            cJSON *doc = gp_render_route_doc(g, "x", &a, &b, &r);
            char *t1 = cJSON_PrintUnformatted(tree), *t2 = cJSON_PrintUnformatted(doc);
            assert_string_equal(t2, t1);
            routes += r.dist != GP_INF && r.path.len > 1;
            cJSON_free(t1);
            cJSON_free(t2);
            cJSON_Delete(tree);
            cJSON_Delete(doc);
            gp_snap_route_free(&r);
        }
        gp_graph_unref(g);
    }
    assert_true(routes > 100);
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_through_shape_points),
        cmocka_unit_test(test_doc_text_equals_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
