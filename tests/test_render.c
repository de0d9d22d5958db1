/* test_render.c - server/api/render.c: the JSON shapes the CLI and the HTTP server share.
 *
 * Distances in input units (integers at scale 1, d / scale otherwise, null when unreachable),
 * external node ids (also beyond 2^53), route geometry only with coordinates, and the text
 * writers (*_text) producing exactly the document the cJSON builders produce.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "server/api/render.h"

#include <math.h>

/* ids 10, 20, 30 and 2^60+1; arcs 10->20 (cost 1.5), 20->30 (0.25); optional coordinates. */
static gp_graph *small(double scale, int coords) {
    gp_err err;
    gp_builder *b = gp_builder_new(scale);
    const int64_t ids[4] = {10, 20, 30, ((int64_t)1 << 60) + 1};
    for (int i = 0; i < 4; i++)
        assert_int_equal(gp_builder_add_node(b, ids[i], coords, 8.5 + i * 0.01, 47.3, NULL, &err),
                         GP_OK);
    uint32_t w;
    assert_int_equal(gp_builder_cost(b, 1.5, &w, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 10, 20, w, &err), GP_OK);
    assert_int_equal(gp_builder_cost(b, 0.25, &w, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 20, 30, w, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "test", "test", 1, &err);
    assert_non_null(g);
    return g;
}

static char *print(cJSON *j) {
    assert_non_null(j);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(s);
    return s;
}

static void test_route(void **state) {
    (void)state;
    gp_graph *g = small(1000, 1);
    uint32_t nodes[3] = {0, 1, 2};
    gp_path p = {1750, nodes, 3, 0};
    char *s = print(gp_render_route(g, 0, 2, &p));
    /* weight in the graph's unit; distance: metres, the haversine lengths of the two arcs */
    assert_string_equal(s, "{\"from\":10,\"to\":30,\"weight\":1.75,\"weight_unit\":\"cost\","
                           "\"distance\":1508.16,\"path\":[10,20,30],"
                           "\"geometry\":{\"type\":\"LineString\",\"coordinates\":"
                           "[[8.5,47.3],[8.51,47.3],[8.52,47.3]]}}");
    free(s);
    gp_path none = {GP_INF, NULL, 0, 0};
    s = print(gp_render_route(g, 0, 3, &none));
    assert_string_equal(s, "{\"from\":10,\"to\":1152921504606846977,\"weight\":null,"
                           "\"weight_unit\":\"cost\",\"path\":[],"
                           "\"geometry\":{\"type\":\"LineString\",\"coordinates\":[]}}");
    free(s);
    gp_graph_unref(g);
}

static void test_integer_scale_no_coords(void **state) {
    (void)state;
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_arc(b, 1, 2, 7, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 2, 3, 4000000000u, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 3, 4, 4000000000u, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "t", "t", 1, &err);
    uint32_t nodes[4] = {0, 1, 2, 3};
    gp_path p = {8000000007ull, nodes, 4, 0};
    char *s = print(gp_render_route(g, 0, 3, &p));
    assert_string_equal(s, "{\"from\":1,\"to\":4,\"weight\":8000000007,"
                           "\"weight_unit\":\"cost\",\"path\":[1,2,3,4]}");
    free(s);
    char buf[32];
    gp_render_dist_str(g, GP_INF, buf, sizeof buf);
    assert_string_equal(buf, "null");
    gp_render_dist_str(g, 18000000000000000000ull, buf, sizeof buf);
    assert_string_equal(buf, "18000000000000000000");
    s = print(gp_render_dist(g, 18000000000000000000ull)); /* beyond 2^53: exact digits */
    assert_string_equal(s, "18000000000000000000");
    free(s);
    gp_graph_unref(g);
}

/* The text writers give exactly the cJSON builders' documents. */
static void test_text_equals_tree(void **state) {
    (void)state;
    const double scales[2] = {1000, 1};
    for (int k = 0; k < 2; k++) {
        gp_graph *g = k == 0 ? small(1000, 1) : NULL;
        if (!g) {
            gp_err err;
            gp_builder *b = gp_builder_new(1.0);
            assert_int_equal(gp_builder_add_arc(b, 5, 6, 3, &err), GP_OK);
            assert_int_equal(gp_builder_add_arc(b, 6, 9, 4, &err), GP_OK);
            assert_int_equal(gp_builder_add_node(b, -2, 0, 0, 0, NULL, &err), GP_OK);
            g = gp_builder_finish(b, "t", "t", 1, &err);
        }
        assert_true(g->scale == scales[k]);
        uint32_t n = g->n;
        uint64_t *d = malloc((size_t)n * n * sizeof *d);
        uint32_t *nx = malloc((size_t)n * n * sizeof *nx);
        for (uint32_t i = 0; i < n * n; i++) {
            d[i] = i % 3 == 0 ? GP_INF : (uint64_t)i * 1234567;
            nx[i] = i % 4 == 0 ? GP_NONE : i % n;
        }
        char *a = print(gp_render_apsp(g, d, nx));
        char *t = gp_render_apsp_text(g, d, nx, NULL);
        assert_string_equal(a, t);
        free(a);
        free(t);
        a = print(gp_render_apsp(g, d, NULL));
        t = gp_render_apsp_text(g, d, NULL, NULL);
        assert_string_equal(a, t);
        free(a);
        free(t);
        uint32_t src[2] = {0, n - 1}, dst[3] = {1, 0, n - 1};
        size_t len = 0;
        a = print(gp_render_table(g, src, 2, dst, 3, d));
        t = gp_render_table_text(g, src, 2, dst, 3, d, &len);
        assert_string_equal(a, t);
        assert_int_equal(len, strlen(t));
        free(a);
        free(t);
        a = print(gp_render_sssp(g, 1, d, nx));
        t = gp_render_sssp_text(g, 1, d, nx, NULL);
        assert_string_equal(a, t);
        free(a);
        free(t);
        free(d);
        free(nx);
        gp_graph_unref(g);
    }
}

static void test_info_and_error(void **state) {
    (void)state;
    gp_graph *g = small(1000, 0);
    cJSON *j = gp_render_graph_info(g, "roads");
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "name")->valuestring, "roads");
    assert_int_equal(cJSON_GetObjectItem(j, "nodes")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(j, "edges")->valueint, 2);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "has_coordinates")));
    assert_true(cJSON_GetObjectItem(j, "scale")->valuedouble == 1000);
    const char *ts = cJSON_GetObjectItem(j, "loaded_at")->valuestring;
    assert_int_equal(strlen(ts), 20);
    assert_int_equal(ts[19], 'Z');
    assert_int_equal(strlen(cJSON_GetObjectItem(j, "version")->valuestring), 16);
    cJSON_Delete(j);
    char *s = print(gp_render_error(GP_ENOTFOUND, "unknown node 7"));
    assert_string_equal(s, "{\"code\":\"NotFound\",\"message\":\"unknown node 7\"}");
    free(s);
    gp_graph_unref(g);
}

/* gp_render_number_row writes what cJSON prints for the same numbers (null for NaN), on numbers
 * rounded to tenths by gp_round_unit (its fast path: they are the doubles nearest k / 10) and on
 * any others; and gp_round_unit gives those nearest doubles (3 tenths is 0.3, not 0.1 * 3). */
static void test_number_row(void **state) {
    (void)state;
    enum { N = 4000 };
    double *v = malloc(sizeof *v * N);
    assert_non_null(v);
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = (x * 1103515245u + 12345u) & 0x7fffffffu; /* < 2^62: no wrap for make ubsan */
        double r = (double)x / 2147483648.0;
        switch (i % 5) {
        case 0: v[i] = gp_round_unit(r * 100000, 0.1); break; /* durations */
        case 1: v[i] = gp_round_unit(r * 3, 0.1); break;      /* small ones */
        case 2: v[i] = r * 1e6; break;                        /* not rounded */
        case 3: v[i] = i % 3 ? -gp_round_unit(r * 50, 0.1) : 1e20 * r; break;
        default: v[i] = i % 2 ? NAN : 0.0; break;
        }
    }
    v[1] = gp_round_unit(0.3, 0.1);
    assert_true(v[1] == 0.3);
    assert_true(gp_round_unit(123.44, 0.1) == 123.4 && gp_round_unit(1.2345674, 1e-6) == 1.234567);
    cJSON *raw = gp_render_number_row(v, N), *ref = cJSON_CreateArray();
    assert_non_null(raw);
    for (int i = 0; i < N; i++)
        cJSON_AddItemToArray(ref, isnan(v[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(v[i]));
    char *want = cJSON_PrintUnformatted(ref);
    assert_string_equal(raw->valuestring, want);
    assert_non_null(strstr(want, ",0.3,"));
    free(want);
    cJSON_Delete(ref);
    cJSON_Delete(raw);
    double none = 0;
    raw = gp_render_number_row(&none, 0);
    assert_string_equal(raw->valuestring, "[]");
    cJSON_Delete(raw);
    free(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route),
        cmocka_unit_test(test_number_row),
        cmocka_unit_test(test_integer_scale_no_coords),
        cmocka_unit_test(test_text_equals_tree),
        cmocka_unit_test(test_info_and_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
