/* test_osm_guidance.c - the guidance attributes the OSM import keeps per arc (graph/osm.c way
 * tags -> gp_road_attr -> arc_flags / arc_guide, graph/roadattr.c) on the hand-made
 * tests/data/osm/guidance.osm: ring, ramp, toll and tunnel flags, destination / turn:lanes /
 * junction:ref / pronunciation records by direction, rings and tunnels kept as their own arcs by
 * the collapse, and graphs without such tags carrying neither array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "graph/graph.h"
#include "storage/source.h"

#include <stdio.h>
#include <string.h>

static gp_graph *load(const char *file) {
    char spec[256];
    snprintf(spec, sizeof spec, "osm:tests/data/osm/%s?profile=car", file);
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    return g;
}

/* Field f of arc a's record as a C string in buf ("" when absent). */
static const char *field(const gp_graph *g, uint32_t a, int f, char *buf, size_t cap) {
    size_t len;
    const char *s = gp_graph_arc_guide(g, a, f, &len);
    snprintf(buf, cap, "%.*s", (int)len, s ? s : "");
    return buf;
}

static uint32_t count_flag(const gp_graph *g, unsigned f) {
    uint32_t c = 0;
    for (uint32_t a = 0; a < g->m; a++) c += (gp_graph_arc_flags(g, a) & f) != 0;
    return c;
}

/* The arc named nm (or with ref rf) carrying flag f (0: any), GP_NONE when none. */
static uint32_t find(const gp_graph *g, const char *nm, const char *rf, unsigned f) {
    for (uint32_t a = 0; a < g->m; a++) {
        const char *n = gp_graph_arc_name(g, a), *r = gp_graph_arc_ref(g, a);
        if (nm && (!n || strcmp(n, nm))) continue;
        if (rf && (!r || strcmp(r, rf))) continue;
        if (f && !(gp_graph_arc_flags(g, a) & f)) continue;
        return a;
    }
    return GP_NONE;
}

static void test_flags(void **state) {
    (void)state;
    gp_graph *g = load("guidance.osm");
    assert_non_null(g->arc_flags);
    assert_non_null(g->arc_guide);
    /* three one-way rings, each cut at its four arms: 12 ring arcs */
    assert_int_equal(count_flag(g, GP_ARC_ROUNDABOUT), 12);
    assert_int_equal(count_flag(g, GP_ARC_CIRCULAR), 0);
    /* the on ramp and the off ramp, one-way, each one arc (their middle node folded) */
    assert_int_equal(count_flag(g, GP_ARC_LINK), 2);
    /* the A1 (toll=yes, one-way) between its ramps: 3 arcs; the tunnel of Kurvenweg, both ways */
    assert_int_equal(count_flag(g, GP_ARC_TOLL), 3);
    assert_int_equal(count_flag(g, GP_ARC_TUNNEL), 2);
    assert_int_equal(count_flag(g, GP_ARC_RESTRICTED), 0);
    /* Kurvenweg: three arcs each way (the tunnel's ends stay nodes) */
    uint32_t kurven = 0;
    for (uint32_t a = 0; a < g->m; a++) {
        const char *n = gp_graph_arc_name(g, a);
        kurven += n && !strcmp(n, "Kurvenweg");
    }
    assert_int_equal(kurven, 6);
    gp_graph_unref(g);
}

static void test_records(void **state) {
    (void)state;
    gp_graph *g = load("guidance.osm");
    char buf[128];
    /* the off ramp: destination, destination:ref, junction:ref; no lanes */
    uint32_t off = GP_NONE;
    for (uint32_t a = 0; a < g->m; a++)
        if ((gp_graph_arc_flags(g, a) & GP_ARC_LINK) &&
            *field(g, a, GP_GUIDE_DESTINATION, buf, sizeof buf))
            off = a;
    assert_int_not_equal(off, GP_NONE);
    assert_string_equal(field(g, off, GP_GUIDE_DESTINATION, buf, sizeof buf), "Vaduz;Schaan");
    assert_string_equal(field(g, off, GP_GUIDE_DEST_REF, buf, sizeof buf), "A13");
    assert_string_equal(field(g, off, GP_GUIDE_EXITS, buf, sizeof buf), "5");
    assert_string_equal(field(g, off, GP_GUIDE_LANES, buf, sizeof buf), "");
    /* Talstrasse, one-way: plain turn:lanes applies to its direction */
    uint32_t tal = find(g, "Talstrasse", NULL, 0);
    assert_int_not_equal(tal, GP_NONE);
    assert_string_equal(field(g, tal, GP_GUIDE_LANES, buf, sizeof buf), "left|right");
    assert_string_equal(field(g, tal, GP_GUIDE_DESTINATION, buf, sizeof buf), "");
    /* the rotary's ring: name:pronunciation; Querstrasse: no record at all */
    uint32_t ring = find(g, "Sternkreisel", NULL, GP_ARC_ROUNDABOUT);
    assert_int_not_equal(ring, GP_NONE);
    assert_string_equal(field(g, ring, GP_GUIDE_PRONUNCIATION, buf, sizeof buf), "shtern-kry-zel");
    uint32_t quer = find(g, "Querstrasse", NULL, 0);
    assert_int_not_equal(quer, GP_NONE);
    assert_int_equal(g->arc_guide[quer], 0);
    size_t len = 7;
    assert_null(gp_graph_arc_guide(g, quer, GP_GUIDE_LANES, &len));
    assert_int_equal(len, 0);
    /* the A1 by its ref: toll, no record */
    uint32_t a1 = find(g, NULL, "A1", GP_ARC_TOLL);
    assert_int_not_equal(a1, GP_NONE);
    assert_int_equal(g->arc_class[a1], GP_ROAD_MOTORWAY);
    gp_graph_unref(g);
}

static void test_none_without_tags(void **state) {
    (void)state;
    gp_graph *g = load("turns.osm"); /* no ring, ramp, toll, tunnel or guidance tag */
    assert_null(g->arc_flags);
    assert_null(g->arc_guide);
    assert_int_equal(gp_graph_arc_flags(g, 0), 0);
    gp_graph_unref(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_none_without_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
