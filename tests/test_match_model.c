/* test_match_model.c - the map matching model (engine/match.h) on tests/data/osm/match.osm, with
 * literal expectations: candidates, the chosen roads, the split after too many dropped points and
 * after a large time step, a dropped point that is too far off, and turn graph and road graph
 * searches agreeing; a candidate per pass of a road that passes a point twice (hairpin.osm); a
 * point behind the previous one on a one-way road beside a dead end the other way (behind.osm:
 * both dropped, one matching); a one-second step's bound (detour.osm); the transition table
 * (gp_match_prepare + gp_match_fill + gp_match_run, the batch path's steps) giving
 * gp_match_trace's answers bit for bit on noisy traces, on match.osm and on Monaco from $GPATH_DATA
 * when it is there. The HTTP side (/match/v1, the batch endpoint) is tests/match_test.py's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine/match.h"
#include "graph/spatial.h"
#include "storage/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/match_traces.h"

/* tests/data/osm/NAME.osm (car), attached with or without turn costs */
static gp_graph *load_map(const char *name, int turns) {
    char spec[128];
    snprintf(spec, sizeof spec, "osm:tests/data/osm/%s.osm?profile=car", name);
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("load: %s", err.msg);
    eng->turn_costs = turns;
    if (gp_engine_attach(eng, g, &err)) fail_msg("attach: %s", err.msg);
    assert_true(!turns == !g->turns);
    return g;
}

static gp_graph *load(int turns) { return load_map("match", turns); }

/* n fixes at pt (lon, lat), the default accuracy, one a second */
static void fixes(gp_match_point *p, double *ts, const double (*pt)[2], uint32_t n) {
    memset(p, 0, sizeof *p * n);
    for (uint32_t i = 0; i < n; i++) {
        p[i].lon = pt[i][0];
        p[i].lat = pt[i][1];
        p[i].accuracy_m = NAN;
        ts[i] = i;
    }
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

/* p's one matching expected (default options): points 0-2 on road a, 3 and 4 dropped, the rest
 * on road b, length_m long. */
static void expect_3_4_dropped(const gp_graph *g, const gp_match_point *p, uint32_t n,
                               const double *ts, const char *a, const char *b, double length_m) {
    gp_match_opts o;
    gp_match_opts_default(&o);
    gp_match m;
    gp_err err;
    assert_int_equal(gp_match_trace(g, p, n, ts, &o, &m, &err), GP_OK);
    assert_int_equal(m.nmatch, 1);
    expect_names(g, &m, 0, 3, a, 0);
    assert_int_equal(m.matching[3], GP_NONE);
    assert_int_equal(m.matching[4], GP_NONE);
    expect_names(g, &m, 5, n - 5, b, 0);
    assert_true(fabs(m.length_m[0] - length_m) < 0.2);
    gp_match_free(&m);
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
    static const double pt[][2] = {/* west at 15.7 m/s, 2.2 m north of Down Street */
                                   {7.0016, 45.00002},  {7.0014, 45.00002},  {7.0012, 45.00002},
                                   {7.00135, 45.00002}, {7.00095, 45.00002}, {7.0008, 45.00002},
                                   {7.0006, 45.00002},  {7.0004, 45.00002}};
    enum { N = sizeof pt / sizeof *pt, BEHIND = 3 };
    gp_match_point p[N];
    double ts[N];
    fixes(p, ts, pt, N);
    for (int turns = 0; turns < 2; turns++) {
        gp_graph *g = load_map("behind", turns);
        gp_err err;
        gp_match_opts o;
        gp_match_opts_default(&o);
        gp_match_prep pr;
        assert_int_equal(gp_match_prepare(g, p, N, ts, &o, &pr, &err), GP_OK);
        assert_int_equal(pr.off[BEHIND + 1] - pr.off[BEHIND], 2); /* Down Street, Up Lane */
        assert_string_equal(gp_graph_arc_name(g, pr.c[pr.off[BEHIND]].arc), "Down Street");
        assert_string_equal(gp_graph_arc_name(g, pr.c[pr.off[BEHIND] + 1].arc), "Up Lane");
        gp_match_prep_free(&pr);
        /* points BEHIND and the next dropped; 7.0016 to 7.0004 E along 45.000 N: 94.35 m */
        expect_3_4_dropped(g, p, N, ts, "Down Street", "West Road", 94.35);
        gp_graph_unref(g);
    }
}

/* A step of one second bounds the route at great-circle + 50 m (max_speed_mps x 1 s, OSRM's
 * bound): on detour.osm, a fix 24 m north of Main Road has Back Lane only, reached from the
 * previous point round by the junction 47 m on, 93 m for 24 m apart; that is no transition, and
 * the fix is dropped with the previous point (test_behind_on_oneway) instead of drawing the
 * detour. */
static void test_one_second_bound(void **state) {
    (void)state;
    static const double pt[][2] = {{7.0008, 45.00002}, {7.0010, 45.00002}, {7.0012, 45.00002},
                                   {7.0014, 45.00002}, {7.0015, 45.00022}, {7.0018, 45.00002},
                                   {7.0020, 45.00002}, {7.0022, 45.00002}, {7.0024, 45.00002}};
    enum { N = sizeof pt / sizeof *pt, OFF = 4 };
    gp_match_point p[N];
    double ts[N];
    fixes(p, ts, pt, N);
    for (int turns = 0; turns < 2; turns++) {
        gp_graph *g = load_map("detour", turns);
        /* points OFF and the one before dropped; 7.0008 to 7.0024 E along 45.000 N: 125.8 m
         * (with Back Lane's detour, before: 218.3) */
        expect_3_4_dropped(g, p, N, ts, "Main Road", "Main Road", 125.8);
        /* the bounds of a one-second step: great-circle + 50 m */
        gp_err err;
        gp_match_opts o;
        gp_match_opts_default(&o);
        gp_match_prep pr;
        assert_int_equal(gp_match_prepare(g, p, N, ts, &o, &pr, &err), GP_OK);
        double hav = gp_haversine_m(p[OFF - 1].lon, p[OFF - 1].lat, p[OFF].lon, p[OFF].lat);
        assert_true(fabs(pr.mb[OFF] - hav - 50) < 1e-9);
        gp_match_prep_free(&pr);
        double same[N] = {0}; /* fixes within one second: a one-second step's bound */
        assert_int_equal(gp_match_prepare(g, p, N, same, &o, &pr, &err), GP_OK);
        assert_true(fabs(pr.mb[OFF] - hav - 50) < 1e-9);
        gp_match_prep_free(&pr);
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
        cmocka_unit_test(test_one_second_bound),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
