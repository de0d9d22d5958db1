/* test_mvt.c - server/api/mvt.c: the bytes of a one-feature tile written out by hand from the
 * Mapbox Vector Tile 2.1 specification (its point example MoveTo(25,17) = [9, 50, 34]), the
 * specification's line example, the key and value tables deduplicated, every value type's wire
 * form, clipping to a tile's box (a line leaving and re-entering is two parts, one wholly outside
 * none), empty tiles, and the Web Mercator tile arithmetic (OSM's tile numbers for a known place).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/mvt.h"

static int has(const char *buf, size_t len, const void *pat, size_t plen) {
    for (size_t i = 0; i + plen <= len; i++)
        if (!memcmp(buf + i, pat, plen)) return 1;
    return 0;
}

static size_t count(const char *buf, size_t len, const char *s) {
    size_t n = 0, l = strlen(s);
    for (size_t i = 0; i + l <= len; i++) n += !memcmp(buf + i, s, l);
    return n;
}

static void test_point_tile_bytes(void **state) {
    (void)state;
    gp_mvt *t = gp_mvt_new();
    assert_non_null(t);
    gp_mvt_layer(t, "points", GP_MVT_EXTENT);
    gp_mvt_feature(t, GP_MVT_POINT, 1);
    gp_mvt_prop_str(t, "hello", "world");
    gp_mvt_point(t, 25, 17);
    assert_int_equal(gp_mvt_commit(t), 1);
    size_t len = 0;
    char *b = gp_mvt_finish(t, &len);
    static const unsigned char want[] = {0x1a, 0x2c, /* Tile.layers, 44 bytes */
                                         0x78, 0x02, /* version 2 */
                                         0x0a, 0x06, 'p',  'o',  'i',  'n', 't', 's', /* name */
                                         0x12, 0x0d,                   /* a feature, 13 bytes: */
                                         0x08, 0x01,                   /*   id 1 */
                                         0x12, 0x02, 0x00, 0x00,       /*   tags [key 0, value 0] */
                                         0x18, 0x01,                   /*   type POINT */
                                         0x22, 0x03, 0x09, 0x32, 0x22, /*   geometry [9, 50, 34] */
                                         0x1a, 0x05, 'h',  'e',  'l',  'l', 'o', /* keys */
                                         0x22, 0x07, 0x0a, 0x05, 'w',  'o', 'r', 'l',
                                         'd',               /* values: string_value */
                                         0x28, 0x80, 0x20}; /* extent 4096 */
    assert_int_equal(len, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    free(b);
}

static void test_line_and_tables(void **state) {
    (void)state;
    gp_mvt *t = gp_mvt_new();
    gp_mvt_layer(t, "lines", GP_MVT_EXTENT);
    for (int i = 0; i < 3; i++) { /* the same properties three times: one key and value each */
        gp_mvt_feature(t, GP_MVT_LINESTRING, 0);
        gp_mvt_prop_str(t, "name", "Rue Grimaldi");
        gp_mvt_prop_bool(t, "oneway", 1);
        /* the specification's example, with a repeated point the encoder merges */
        int32_t xy[] = {2, 2, 2, 10, 2, 10, 10, 10};
        gp_mvt_line(t, xy, 4);
        gp_mvt_commit(t);
    }
    gp_mvt_feature(t, GP_MVT_LINESTRING, 0); /* one distinct point: no geometry, dropped */
    int32_t dot[] = {5, 5, 5, 5};
    gp_mvt_line(t, dot, 2);
    assert_int_equal(gp_mvt_commit(t), 0);
    assert_int_equal(gp_mvt_count(t), 3);
    size_t len;
    char *b = gp_mvt_finish(t, &len);
    static const unsigned char geom[] = {0x22, 0x08, 9, 4, 4, 18, 0, 16, 16, 0};
    assert_true(has(b, len, geom, sizeof geom));
    assert_int_equal(count(b, len, "Rue Grimaldi"), 1);
    assert_int_equal(count(b, len, "oneway"), 1);
    static const unsigned char bool_true[] = {0x22, 0x02, 0x38, 0x01}; /* bool_value: field 7 */
    assert_true(has(b, len, bool_true, sizeof bool_true));
    free(b);
}

static void test_value_types(void **state) {
    (void)state;
    gp_mvt *t = gp_mvt_new();
    gp_mvt_layer(t, "v", 256);
    gp_mvt_feature(t, GP_MVT_POINT, 0);
    gp_mvt_prop_sint(t, "s", -3);     /* sint_value (6): zigzag 5 */
    gp_mvt_prop_uint(t, "u", 300);    /* uint_value (5): varint ac 02 */
    gp_mvt_prop_float(t, "f", 1.0f);  /* float_value (2): 00 00 80 3f */
    gp_mvt_prop_double(t, "d", -2.0); /* double_value (3): 8 bytes, c0 00 ... last */
    gp_mvt_point(t, 0, 0);
    gp_mvt_commit(t);
    size_t len;
    char *b = gp_mvt_finish(t, &len);
    static const unsigned char s[] = {0x22, 0x02, 0x30, 0x05}, u[] = {0x22, 0x03, 0x28, 0xac, 0x02},
                               f[] = {0x22, 0x05, 0x15, 0x00, 0x00, 0x80, 0x3f},
                               d[] = {0x22, 0x09, 0x19, 0, 0, 0, 0, 0, 0, 0, 0xc0},
                               ext[] = {0x28, 0x80, 0x02};
    assert_true(has(b, len, s, sizeof s));
    assert_true(has(b, len, u, sizeof u));
    assert_true(has(b, len, f, sizeof f));
    assert_true(has(b, len, d, sizeof d));
    assert_true(has(b, len, ext, sizeof ext));
    free(b);
}

static void test_clip(void **state) {
    (void)state;
    gp_mvt *t = gp_mvt_new();
    gp_mvt_layer(t, "c", 100);
    /* across the box: one part from (0, 50) to (100, 50) */
    gp_mvt_feature(t, GP_MVT_LINESTRING, 0);
    double x1[] = {-100, 200}, y1[] = {50, 50};
    assert_int_equal(gp_mvt_line_clip(t, x1, y1, 2, 0, 100), 1);
    gp_mvt_commit(t);
    /* in, out, in again: two parts */
    gp_mvt_feature(t, GP_MVT_LINESTRING, 0);
    double x2[] = {10, 10, 150, 150, 90, 90}, y2[] = {10, 90, 90, 10, 10, 50};
    assert_int_equal(gp_mvt_line_clip(t, x2, y2, 6, 0, 100), 2);
    gp_mvt_commit(t);
    /* wholly outside: nothing, and the feature is dropped */
    gp_mvt_feature(t, GP_MVT_LINESTRING, 0);
    double x3[] = {-50, -10}, y3[] = {-50, 500};
    assert_int_equal(gp_mvt_line_clip(t, x3, y3, 2, 0, 100), 0);
    assert_int_equal(gp_mvt_commit(t), 0);
    size_t len;
    char *b = gp_mvt_finish(t, &len);
    /* first feature's geometry: MoveTo(0, 50) = zigzag 0, 100; LineTo(+100, 0) = zigzag 200
     * (the varint c8 01), 0 */
    static const unsigned char g1[] = {0x22, 0x07, 9, 0, 100, 10, 0xc8, 0x01, 0};
    assert_true(has(b, len, g1, sizeof g1));
    free(b);
}

static void test_empty(void **state) {
    (void)state;
    size_t len = 99;
    char *b = gp_mvt_finish(gp_mvt_new(), &len);
    assert_non_null(b);
    assert_int_equal(len, 0);
    free(b);
    gp_mvt *t = gp_mvt_new();
    gp_mvt_layer(t, "x", GP_MVT_EXTENT);
    b = gp_mvt_finish_drawn(t, 0, &len);
    assert_non_null(b);
    assert_int_equal(len, 0);
    free(b);
}

static void test_tiles(void **state) {
    (void)state;
    /* Monaco's palace (7.4200, 43.7310) is in OSM tile 14/8529/5974 */
    double x, y;
    gp_tile_project(14, 8529, 5974, 4096, 7.4200, 43.7310, &x, &y);
    assert_true(x >= 0 && x < 4096 && y >= 0 && y < 4096);
    double lon0, lat0, lon1, lat1;
    gp_tile_bounds(14, 8529, 5974, &lon0, &lat0, &lon1, &lat1);
    assert_true(lon0 < 7.42 && 7.42 < lon1 && lat0 < 43.731 && 43.731 < lat1);
    gp_tile_project(14, 8529, 5974, 4096, lon0, lat1, &x, &y); /* north-west corner */
    assert_true(fabs(x) < 1e-6 && fabs(y) < 1e-6);
    gp_tile_project(14, 8529, 5974, 4096, lon1, lat0, &x, &y); /* south-east corner */
    assert_true(fabs(x - 4096) < 1e-6 && fabs(y - 4096) < 1e-6);
    gp_tile_bounds(0, 0, 0, &lon0, &lat0, &lon1, &lat1);
    assert_true(fabs(lon0 + 180) < 1e-9 && fabs(lat1 - 85.0511287798) < 1e-6);
    assert_true(gp_tile_valid(0, 0, 0));
    assert_false(gp_tile_valid(0, 1, 0));
    assert_true(gp_tile_valid(19, 524287, 524287));
    assert_false(gp_tile_valid(19, 524288, 0));
    assert_false(gp_tile_valid(31, 0, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point_tile_bytes),
        cmocka_unit_test(test_line_and_tables),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_clip),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
