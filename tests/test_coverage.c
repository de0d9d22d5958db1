/* test_coverage.c - the registry's coverage grid of a graph's roads (gp_registry_coverage, which the
 * OSRM aliases use to pick a region): literal expectations on a hand-made OSM map written here, one
 * straight road of 7.9 km with no node between its ends (so only the sampling along the segment
 * covers its middle), and a short road 0.5 degree away. Points beside the road are in, points two
 * cells off or beyond its ends are out; a graph without a routing profile has no grid; a removed
 * graph none either; a reload keeps one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static int setup(void **state) {
    (void)state;
    gp_log_level = GP_LOG_ERROR;
    snprintf(path, sizeof path, "/tmp/gp_coverage_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) return -1;
    fputs("<?xml version='1.0' encoding='UTF-8'?>\n<osm version='0.6'>\n"
          " <node id='1' lat='45.000' lon='7.000'/>\n <node id='2' lat='45.000' lon='7.100'/>\n"
          " <node id='3' lat='45.500' lon='7.500'/>\n <node id='4' lat='45.500' lon='7.502'/>\n"
          " <way id='10'><nd ref='1'/><nd ref='2'/><tag k='highway' v='primary'/></way>\n"
          " <way id='11'><nd ref='3'/><nd ref='4'/><tag k='highway' v='residential'/></way>\n"
          "</osm>\n",
          f);
    return fclose(f);
}

static int teardown(void **state) {
    (void)state;
    unlink(path);
    return 0;
}

static void load(gp_registry *r, const char *name, const char *spec) {
    gp_graph_source src;
    memset(&src, 0, sizeof src);
    snprintf(src.spec, sizeof src.spec, "%s", spec);
    gp_err err;
    gp_err_clear(&err);
    assert_int_equal(gp_registry_load(r, name, &src, NULL, &err), GP_OK);
}

static void test_coverage(void **state) {
    (void)state;
    gp_registry *r = gp_registry_new(NULL);
    char spec[128];
    snprintf(spec, sizeof spec, "osm:%s", path);
    load(r, "road", spec);
    /* the middle of the long segment, just beside it (one cell north), the far end, the short
     * road; then two to three cells off the road, past its west end, between the roads */
    const double lon[] = {7.050, 7.050, 7.100, 7.501, 7.050, 6.970, 7.300};
    const double lat[] = {45.000, 45.012, 45.000, 45.500, 45.030, 45.000, 45.250};
    const uint8_t want[] = {1, 1, 1, 1, 0, 0, 0};
    uint8_t in[7];
    double area = 0;
    assert_int_equal(gp_registry_coverage(r, "road", lon, lat, 7, in, &area), GP_OK);
    assert_memory_equal(in, want, sizeof want);
    /* 10 or 11 cells along the long road (7.00 .. 7.10 at 0.01 degree: whether its east end
     * lands in an eleventh cell is a rounding of 0.1 / 0.01) and 1 for the short one, each
     * 1.112 km x 0.786 km = 0.874 km2 at 45 degrees north */
    assert_true(area > 11 * 0.87 && area < 12 * 0.88);
    /* a reload keeps a grid; a generated graph (no routing profile) has none; removal drops it */
    gp_err err;
    assert_int_equal(gp_registry_reload(r, "road", &err), GP_OK);
    assert_int_equal(gp_registry_coverage(r, "road", lon, lat, 1, in, NULL), GP_OK);
    load(r, "gen", "gen:100");
    assert_int_equal(gp_registry_coverage(r, "gen", lon, lat, 1, in, NULL), GP_ENOTFOUND);
    assert_int_equal(gp_registry_remove(r, "road", &err), GP_OK);
    assert_int_equal(gp_registry_coverage(r, "road", lon, lat, 1, in, NULL), GP_ENOTFOUND);
    gp_registry_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_coverage)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
