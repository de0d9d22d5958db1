/* test_match_model.c - the map matching model (engine/match.h) on tests/data/osm/match.osm, with
 * literal expectations: candidates, the chosen roads, the split after too many dropped points and
 * after a large time step, a dropped point that is too far off, and turn graph and road graph
 * searches agreeing; a candidate per pass of a road that passes a point twice (hairpin.osm); a
 * point behind the previous one on a one-way road beside a dead end the other way (behind.osm:
 * both dropped, one matching); the transition table (gp_match_prepare + gp_match_fill +
 * gp_match_run, the batch path's steps) giving gp_match_trace's answers bit for bit on noisy
 * traces, on match.osm and on Monaco from $GPATH_DATA when it is there. The HTTP side (/match/v1,
 * the batch endpoint) is tests/match_test.py's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine/match.h"
#include "storage/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/match_traces.h"

static gp_graph *load(int turns) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load("osm:tests/data/osm/match.osm?profile=car", NULL, &err);
    if (!g) fail_msg("load: %s", err.msg);
    eng->turn_costs = turns;
    if (gp_engine_attach(eng, g, &err)) fail_msg("attach: %s", err.msg);
    assert_true(!turns == !g->turns);
    return g;
}

/* n points along Main Street (45.000 N) from lon0 in steps of dlon, 2 m north of it. */
static void street(gp_match_point *p, uint32_t n, double lon0, double dlon) {
    for (uint32_t i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].lon = lon0 + dlon * i;
        p[i].lat = 45.00002;
        p[i].accuracy_m = NAN;
    }
}

static void expect_names(const gp_graph *g, const gp_match *m, uint32_t first, uint32_t n,
                         const char *name, uint32_t matching) {
    for (uint32_t i = first; i < first + n; i++) {
        assert_int_equal(m->matching[i], matching);
        assert_string_equal(gp_graph_arc_name(g, m->snap[i].arc), name);
        assert_true(fabs(m->snap[i].lat - 45.0) < 1e-6); /* on the chord */
    }
}

static void test_street_and_dropped_runs(void **state) {
    (void)state;
    for (int turns = 0; turns < 2; turns++) {
        gp_graph *g = load(turns);
        gp_match_opts o;
        gp_match_opts_default(&o);
        gp_match_point p[17];
        street(p, 3, 7.0005, 0.0003);
        for (uint32_t i = 3; i < 14; i++) { /* 11 points 1.1 km north of every road */
            p[i] = p[0];
            p[i].lat = 45.012;
        }
        street(p + 14, 3, 7.0035, 0.0003);
        gp_match m;
        gp_err err;
        assert_int_equal(gp_match_trace(g, p, 17, NULL, &o, &m, &err), GP_OK);
        /* point 14 comes 12 points after the last matched one, more than max_broken (10): two
         * matchings (OSRM's rule: 10 dropped points in a row split) */
        assert_int_equal(m.nmatch, 2);
        expect_names(g, &m, 0, 3, "Main Street", 0);
        expect_names(g, &m, 14, 3, "Main Street", 1);
        for (uint32_t i = 3; i < 14; i++) assert_int_equal(m.matching[i], GP_NONE);
        /* 0.0006 degrees of longitude at 45 N: 47.2 m each */
        assert_true(fabs(m.length_m[0] - 47.2) < 0.2 && fabs(m.length_m[1] - 47.2) < 0.2);
        assert_true(m.confidence[0] > 0.9 && m.confidence[0] <= 1);
        /* the legs' routes: the same cost as the engine's route between the positions */
        for (uint32_t i = 0; i + 1 < 17; i++) {
            if (m.matching[i] == GP_NONE || m.matching[i + 1] != m.matching[i]) continue;
            gp_snap_route a, b;
            assert_int_equal(gp_match_route(g, &m.snap[i], &m.snap[i + 1], &a, &err), GP_OK);
            assert_int_equal(
                gp_engine_route_snap(eng, g, &m.snap[i], &m.snap[i + 1], GP_P2P_AUTO, &b, &err),
                GP_OK);
            assert_true(a.dist <= b.dist + 1 && b.dist <= a.dist + 1);
            assert_int_equal(a.path.len, b.path.len);
            gp_snap_route_free(&a);
            gp_snap_route_free(&b);
        }
        gp_match_free(&m);
        o.max_broken = 12; /* 12 points on is allowed now: one matching */
        assert_int_equal(gp_match_trace(g, p, 17, NULL, &o, &m, &err), GP_OK);
        assert_int_equal(m.nmatch, 1);
        expect_names(g, &m, 14, 3, "Main Street", 0);
        assert_true(fabs(m.length_m[0] - 283.1) < 1); /* 7.0005 to 7.0041 E */
        gp_match_free(&m);
        gp_graph_unref(g);
    }
}

static void test_time_gap_and_candidates(void **state) {
    (void)state;
    gp_graph *g = load(1);
    gp_match_opts o;
    gp_match_opts_default(&o);
    gp_match_point p[6];
    street(p, 6, 7.0005, 0.0007);
    double ts[6] = {0, 10, 20, 1000, 1010, 1020};
    gp_match m;
    gp_err err;
    assert_int_equal(gp_match_trace(g, p, 6, ts, &o, &m, &err), GP_OK);
    assert_int_equal(m.nmatch, 2);
    expect_names(g, &m, 0, 3, "Main Street", 0);
    expect_names(g, &m, 3, 3, "Main Street", 1);
    /* 7.0019 lies 7.8 m from node 3 (7.002), where Main Street's two arcs and Cul Street meet,
     * and 11 m from Service Lane: four roads within 15 m, the chosen one and three alternatives */
    assert_int_equal(m.alternatives[2], 3);
    assert_int_equal(m.alternatives[0], 0);
    gp_match_free(&m);
    o.split_gaps = 0;
    assert_int_equal(gp_match_trace(g, p, 6, ts, &o, &m, &err), GP_OK);
    assert_int_equal(m.nmatch, 1);
    gp_match_free(&m);
    o.max_candidates = 1; /* the nearest road only */
    assert_int_equal(gp_match_trace(g, p, 6, NULL, &o, &m, &err), GP_OK);
    for (uint32_t i = 0; i < 6; i++) assert_int_equal(m.alternatives[i], 0);
    gp_match_free(&m);
    p[1].lon = 200; /* an invalid coordinate */
    assert_int_equal(gp_match_trace(g, p, 6, NULL, &o, &m, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "not a valid lon,lat"));
    gp_graph_unref(g);
}

/* A road that leaves a point's search circle and comes back gives a candidate per pass: on
 * hairpin.osm's one arc, a point 21 m north of the east-bound leg and 23 m south of the west-bound
 * one, driven on the latter, has both as candidates and is matched onto the west-bound leg; a
 * point at the bend, where the road stays within the circle from one leg to the other, has one. */
static void test_hairpin_passes(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load("osm:tests/data/osm/hairpin.osm?profile=car", NULL, &err);
    if (!g) fail_msg("load: %s", err.msg);
    eng->turn_costs = 0;
    assert_int_equal(gp_engine_attach(eng, g, &err), GP_OK);
    static const double pt[][2] = {{7.0002, 45.00002}, {7.0008, 45.00002}, {7.0014, 45.00002},
                                   {7.0019, 45.0002},  {7.0014, 45.00038}, {7.0008, 45.00038},
                                   {7.0005, 45.00019}, {7.0002, 45.00038}};
    enum { N = sizeof pt / sizeof *pt, BEND = 3, TWICE = 6 };
    gp_match_point p[N];
    double ts[N];
    memset(p, 0, sizeof p);
    for (uint32_t i = 0; i < N; i++) {
        p[i].lon = pt[i][0];
        p[i].lat = pt[i][1];
        p[i].accuracy_m = 20; /* a search radius of 60 m: both legs */
        ts[i] = 5.0 * i;
    }
    gp_match_opts o;
    gp_match_opts_default(&o);
    gp_match_prep pr;
    assert_int_equal(gp_match_prepare(g, p, N, ts, &o, &pr, &err), GP_OK);
    assert_int_equal(pr.off[BEND + 1] - pr.off[BEND], 1);
    assert_int_equal(pr.off[TWICE + 1] - pr.off[TWICE], 2);
    const gp_snap *c = pr.c + pr.off[TWICE]; /* nearest first, on the one road */
    assert_true(fabs(c[0].lat - 45.0) < 1e-6 && fabs(c[1].lat - 45.0004) < 1e-6);
    assert_int_equal(c[0].arc, c[1].arc);
    gp_match_prep_free(&pr);
    gp_match m;
    assert_int_equal(gp_match_trace(g, p, N, ts, &o, &m, &err), GP_OK);
    assert_int_equal(m.nmatch, 1);
    for (uint32_t i = 0; i < N; i++) assert_int_equal(m.matching[i], 0);
    assert_true(fabs(m.snap[TWICE].lat - 45.0004) < 1e-6);
    /* along the road from 7.0002 E on the east-bound leg to 7.0002 E on the west-bound one:
     * 0.0036 degrees of longitude (283 m) and the bend's 0.0004 of latitude (44 m) */
    assert_true(fabs(m.length_m[0] - 327.6) < 1);
    gp_match_free(&m);
    gp_graph_unref(g);
}

/* A point behind the previous one on a one-way road (GPS noise) can be reached only on a road
 * beside it that runs the other way; when that road leads nowhere the trace goes (behind.osm: Up
 * Lane, a dead end 5.6 m north of Down Street), the next point cannot be reached from it, and the
 * point the dead end was reached from is not trusted either: the next points are searched from
 * the one before (OSRM's "remove both ends of the breakage"). The two points are dropped and the
 * trace stays one matching on the roads driven; before, point 3 went onto Up Lane and the trace
 * split after it. */
static void test_behind_on_oneway(void **state) {
    (void)state;
    static const double lon[] = {7.0016, 7.0014, 7.0012, 7.00135, 7.00095, 7.0008, 7.0006, 7.0004};
    enum { N = sizeof lon / sizeof *lon, BEHIND = 3 };
    gp_match_point p[N];
    double ts[N];
    memset(p, 0, sizeof p);
    for (uint32_t i = 0; i < N; i++) { /* west at 15.7 m/s, 2.2 m north of Down Street */
        p[i].lon = lon[i];
        p[i].lat = 45.00002;
        p[i].accuracy_m = NAN;
        ts[i] = i;
    }
    for (int turns = 0; turns < 2; turns++) {
        gp_err err = {0};
        gp_graph *g = gp_graph_load("osm:tests/data/osm/behind.osm?profile=car", NULL, &err);
        if (!g) fail_msg("load: %s", err.msg);
        eng->turn_costs = turns;
        assert_int_equal(gp_engine_attach(eng, g, &err), GP_OK);
        assert_true(!turns == !g->turns);
        gp_match_opts o;
        gp_match_opts_default(&o);
        gp_match_prep pr;
        assert_int_equal(gp_match_prepare(g, p, N, ts, &o, &pr, &err), GP_OK);
        assert_int_equal(pr.off[BEHIND + 1] - pr.off[BEHIND], 2); /* Down Street, Up Lane */
        assert_string_equal(gp_graph_arc_name(g, pr.c[pr.off[BEHIND]].arc), "Down Street");
        assert_string_equal(gp_graph_arc_name(g, pr.c[pr.off[BEHIND] + 1].arc), "Up Lane");
        gp_match_prep_free(&pr);
        gp_match m;
        assert_int_equal(gp_match_trace(g, p, N, ts, &o, &m, &err), GP_OK);
        assert_int_equal(m.nmatch, 1);
        expect_names(g, &m, 0, 3, "Down Street", 0);
        assert_int_equal(m.matching[BEHIND], GP_NONE);
        assert_int_equal(m.matching[BEHIND + 1], GP_NONE);
        expect_names(g, &m, 5, 3, "West Road", 0);
        /* 7.0016 to 7.0004 E along 45.000 N: 0.0012 degrees of longitude, 94.4 m */
        assert_true(fabs(m.length_m[0] - 94.35) < 0.2);
        gp_match_free(&m);
        gp_graph_unref(g);
    }
}

/* 60 noisy traces on g: the table path == gp_match_trace; returns the points matched. */
static uint32_t table_equals_trace(const gp_graph *g, double noise_m) {
    gp_match_opts o;
    gp_match_opts_default(&o);
    gp_match_point p[80];
    double ts[80];
    uint64_t seed = 33;
    uint32_t matched = 0, rows = 0;
    for (int tr = 0; tr < 60; tr++) {
        uint32_t n = mt_trace(g, &seed, noise_m, p, ts, 80);
        if (!n) continue;
        gp_err err;
        gp_match a, b;
        gp_match_prep pr;
        const double *t = tr % 2 ? ts : NULL;
        assert_int_equal(gp_match_trace(g, p, n, t, &o, &a, &err), GP_OK);
        assert_int_equal(gp_match_prepare(g, p, n, t, &o, &pr, &err), GP_OK);
        assert_int_equal(gp_match_fill(g, &pr, NULL, &err), GP_OK);
        assert_true(pr.filled);
        rows += (uint32_t)pr.njobs;
        assert_int_equal(gp_match_run(g, p, t, &o, &pr, &b, &err), GP_OK);
        mt_same(&a, &b);
        for (uint32_t i = 0; i < n; i++) matched += a.matching[i] != GP_NONE;
        gp_match_free(&a);
        gp_match_free(&b);
        gp_match_prep_free(&pr);
    }
    assert_true(rows > 0);
    return matched;
}

static void test_table_equals_trace(void **state) {
    (void)state;
    for (int turns = 0; turns < 2; turns++) {
        gp_graph *g = load(turns);
        assert_true(table_equals_trace(g, 5) > 100);
        gp_graph_unref(g);
    }
    const char *d = getenv("GPATH_DATA");
    char spec[1100];
    snprintf(spec, sizeof spec, "osm:%s/osm/monaco.osm.pbf?profile=car", d ? d : "");
    for (int turns = 1; turns >= 0; turns--) {
        gp_err err = {0};
        gp_graph *g = d ? gp_graph_load(spec, NULL, &err) : NULL;
        if (!g) {
            print_message("GPATH_DATA has no osm/monaco.osm.pbf: Monaco skipped\n");
            return;
        }
        eng->turn_costs = turns;
        assert_int_equal(gp_engine_attach(eng, g, &err), GP_OK);
        assert_true(!turns == !g->turns);
        assert_true(table_equals_trace(g, 8) > 1000);
        gp_graph_unref(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_street_and_dropped_runs),
        cmocka_unit_test(test_time_gap_and_candidates),
        cmocka_unit_test(test_table_equals_trace),
        cmocka_unit_test(test_hairpin_passes),
        cmocka_unit_test(test_behind_on_oneway),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
