/* test_osrm_geom.c - server/api/geom.c: Google's encoded polyline (the format's published
 * example, precision 5 and 6, negative and large values, malformed text), Douglas-Peucker (ends
 * kept, collinear points dropped, a bump above the tolerance kept) and initial bearings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/geom.h"

/* developers.google.com/maps/documentation/utilities/polylinealgorithm: (38.5, -120.2),
 * (40.7, -120.95), (43.252, -126.453) -> "_p~iF~ps|U_ulLnnqC_mqNvxq`@" */
static const double ex_lat[] = {38.5, 40.7, 43.252}, ex_lon[] = {-120.2, -120.95, -126.453};
static const char *ex_text = "_p~iF~ps|U_ulLnnqC_mqNvxq`@";

static void test_encode_example(void **state) {
    (void)state;
    char *s = gp_polyline_encode(ex_lon, ex_lat, 3, 5);
    assert_non_null(s);
    assert_string_equal(s, ex_text);
    free(s);
}

static void test_decode_example(void **state) {
    (void)state;
    gp_pts p;
    memset(&p, 0, sizeof p);
    assert_int_equal(gp_polyline_decode(ex_text, strlen(ex_text), 5, &p), 3);
    for (int i = 0; i < 3; i++) {
        assert_true(fabs(p.lat[i] - ex_lat[i]) < 1e-9);
        assert_true(fabs(p.lon[i] - ex_lon[i]) < 1e-9);
    }
    gp_pts_free(&p);
}

static void test_round_trip_precision6(void **state) {
    (void)state;
    double lon[] = {7.4246801, 7.4246802, -179.999999, 179.999999, 0};
    double lat[] = {43.7384171, 43.7384169, -89.999999, 89.999999, 0};
    char *s = gp_polyline_encode(lon, lat, 5, 6);
    gp_pts p;
    memset(&p, 0, sizeof p);
    assert_int_equal(gp_polyline_decode(s, strlen(s), 6, &p), 5);
    for (int i = 0; i < 5; i++) {
        /* rounding happens on absolute values: each point within half a unit, no drift */
        assert_true(fabs(p.lon[i] - lon[i]) <= 0.5e-6 + 1e-12);
        assert_true(fabs(p.lat[i] - lat[i]) <= 0.5e-6 + 1e-12);
    }
    gp_pts_free(&p);
    free(s);
}

static void test_decode_malformed(void **state) {
    (void)state;
    gp_pts p;
    memset(&p, 0, sizeof p);
    assert_int_equal(gp_polyline_decode("_p~iF", 5, 5, &p), -1); /* latitude without longitude */
    assert_int_equal(gp_polyline_decode("_p~i", 4, 5, &p), -1);  /* value cut mid-chunk */
    assert_int_equal(gp_polyline_decode("ab\x7f"
                                        "c",
                                        4, 5, &p),
                     -1); /* outside '?'..'~' */
    assert_int_equal(gp_polyline_decode("", 0, 5, &p), 0);
    /* values past 35 bits (8 chunks) are refused: 13-chunk values summed overflowed int64 */
    assert_int_equal(gp_polyline_decode("~~~~~~~??", 9, 6, &p), -1);
    char big[13 * 2 * 40 + 1];
    for (int i = 0; i < 80; i++) memcpy(big + 13 * i, "~~~~~~~~~~~~_", 13);
    big[13 * 80] = '\0';
    assert_int_equal(gp_polyline_decode(big, strlen(big), 6, &p), -1);
    gp_pts_free(&p);
    /* the largest real deltas still decode: -180,-90 to 180,90 at precision 6 */
    const double lon[] = {-180, 180}, lat[] = {-90, 90};
    char *enc = gp_polyline_encode(lon, lat, 2, 6);
    assert_non_null(enc);
    memset(&p, 0, sizeof p);
    assert_int_equal(gp_polyline_decode(enc, strlen(enc), 6, &p), 2);
    free(enc);
    gp_pts_free(&p);
}

static void test_douglas_peucker(void **state) {
    (void)state;
    /* along a parallel: 0.0001 degrees ~ 7.5 m; point 3 bumps 50 m north */
    double lon[7], lat[7];
    for (int i = 0; i < 7; i++) {
        lon[i] = 8.5 + i * 0.0001;
        lat[i] = 47.3;
    }
    lat[3] += 50 / 111195.0;
    uint8_t keep[7];
    gp_simplify_dp(lon, lat, 7, 10, keep);
    uint8_t want[7] = {1, 0, 1, 1, 1, 0, 1}; /* ends, the bump and its two corners */
    assert_memory_equal(keep, want, 7);
    gp_simplify_dp(lon, lat, 7, 100, keep); /* a tolerance above the bump: only the ends */
    uint8_t ends[7] = {1, 0, 0, 0, 0, 0, 1};
    assert_memory_equal(keep, ends, 7);
    gp_simplify_dp(lon, lat, 2, 1, keep);
    assert_true(keep[0] && keep[1]);
}

static void test_bearings(void **state) {
    (void)state;
    assert_true(fabs(gp_bearing_deg(8.5, 47.3, 8.5, 47.4) - 0) < 1e-6);
    assert_true(fabs(gp_bearing_deg(8.5, 47.3, 8.6, 47.3) - 90) < 0.1);
    assert_true(fabs(gp_bearing_deg(8.5, 47.3, 8.5, 47.2) - 180) < 1e-6);
    assert_true(fabs(gp_bearing_deg(8.5, 47.3, 8.4, 47.3) - 270) < 0.1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_example),        cmocka_unit_test(test_decode_example),
        cmocka_unit_test(test_round_trip_precision6), cmocka_unit_test(test_decode_malformed),
        cmocka_unit_test(test_douglas_peucker),       cmocka_unit_test(test_bearings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
