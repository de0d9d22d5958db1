/* test_metric.c - per-request metrics (engine/metric.h): exclude= classes and vehicle limits on
 * the hand-made tests/data/osm/exclude.osm (car profile, turn costs on, CCH on and off), literal
 * values in deciseconds: a direct way of 0.02 degrees of longitude (1572.5 m) and a detour of
 * 2723.6 m through a node 0.01 degrees north, primary at 65 km/h (1508 ds); the direct way is a
 * motorway at 90 km/h (629 ds), a toll / low / weight-limited / hgv=no primary (871 ds) or a
 * one-minute ferry (600 ds). Also: the OSM limit parser, the cache, and exactness against a
 * Dijkstra that leaves the closed arcs out on Liechtenstein when $GPATH_DATA/osm has it. Run from
 * the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/change.h"
#include "engine/metric.h"
#include "engine/snap.h"
#include "graph/osm_profile.h"
#include "graph/turns.h"
#include "graph/snapshot.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EX "osm:tests/data/osm/exclude.osm?profile=car"

static gp_engine *engine(const char *cch, const char *turns) {
    gp_err err = {0};
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, cch, 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_set_turn_costs(e, turns, &err), GP_OK);
    return e;
}

static gp_graph *load(gp_engine *e, const char *spec) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    return g;
}

/* Cost from OSM node a to OSM node b on the metric of g under k (GP_INF: none). */
static uint64_t cost(gp_engine *e, gp_graph *g, const gp_metric_key *k, int64_t a, int64_t b) {
    gp_err err = {0};
    gp_graph *m = NULL;
    assert_int_equal(gp_metric_get(e, g, k, &m, &err), GP_OK);
    gp_snap sa, sb;
    gp_snap_at_node(m, gp_graph_index(m, a), &sa);
    gp_snap_at_node(m, gp_graph_index(m, b), &sb);
    gp_snap_route rt;
    assert_int_equal(gp_engine_route_snap(e, m, &sa, &sb, GP_P2P_AUTO, &rt, &err), GP_OK);
    uint64_t d = rt.dist;
    gp_snap_route_free(&rt);
    uint64_t t = 0;
    assert_int_equal(gp_engine_table_snap(e, m, &sa, 1, &sb, 1, &t, &err), GP_OK);
    assert_true(t == d); /* table and route agree, closed arcs included */
    gp_graph_unref(m);
    return d;
}

static gp_metric_key ex(unsigned bits) {
    gp_metric_key k;
    memset(&k, 0, sizeof k);
    k.exclude = bits;
    return k;
}

static gp_metric_key veh(int lim, double v) {
    gp_metric_key k;
    memset(&k, 0, sizeof k);
    gp_err err;
    assert_int_equal(gp_metric_vehicle(lim, v, &k.veh[lim], &err), GP_OK);
    return k;
}

static void literal(const char *cch, const char *turns) {
    gp_engine *e = engine(cch, turns);
    gp_graph *g = load(e, EX);
    gp_metric_key none = ex(0);
    assert_true(cost(e, g, &none, 101, 102) == 629);
    gp_metric_key k = ex(GP_OSM_CLASS_MOTORWAY);
    assert_true(cost(e, g, &k, 101, 102) == 1508);
    assert_true(cost(e, g, &k, 102, 101) == 1508);
    k = ex(GP_OSM_CLASS_TOLL);
    assert_true(cost(e, g, &k, 101, 102) == 629); /* the motorway is free */
    assert_true(cost(e, g, &none, 201, 202) == 871);
    assert_true(cost(e, g, &k, 201, 202) == 1508);
    assert_true(cost(e, g, &none, 301, 302) == 600);
    k = ex(GP_OSM_CLASS_FERRY);
    assert_true(cost(e, g, &k, 301, 302) == 1508);
    k = veh(GP_LIM_HEIGHT, 4);
    assert_true(cost(e, g, &k, 401, 402) == 1508);
    k = veh(GP_LIM_HEIGHT, 3.5); /* as high as the bridge: passes */
    assert_true(cost(e, g, &k, 401, 402) == 871);
    k = veh(GP_LIM_WEIGHT, 8);
    assert_true(cost(e, g, &k, 501, 502) == 1508);
    k = veh(GP_LIM_WEIGHT, 7.5);
    assert_true(cost(e, g, &k, 501, 502) == 871);
    k = veh(GP_LIM_WEIGHT, 3.6); /* hgv=no closes to vehicles over 3.5 t */
    assert_true(cost(e, g, &k, 601, 602) == 1508);
    k = veh(GP_LIM_WEIGHT, 3.5);
    assert_true(cost(e, g, &k, 601, 602) == 871);
    k = veh(GP_LIM_HEIGHT, 3.8); /* 12'6" = 3.81 m, stored as 3.8 */
    assert_true(cost(e, g, &k, 701, 702) == 871);
    k = veh(GP_LIM_HEIGHT, 3.9);
    assert_true(cost(e, g, &k, 701, 702) == 1508);
    k.veh[GP_LIM_WIDTH] = 25; /* 2.5 m: the 2.2 m wide detour closes too */
    assert_true(cost(e, g, &k, 701, 702) == GP_INF);
    gp_graph_unref(g);
    gp_metric_cache_clear();
    gp_engine_free(e);
}

static void test_literal_dijkstra(void **state) {
    (void)state;
    literal("off", "on");
    literal("off", "off");
}

static void test_literal_cch(void **state) {
    (void)state;
    literal("on", "on");
    literal("on", "off");
}

/* The topology's prepared spare (config cch_spare_max_mb): filled after the graph's CCH, taken by
 * a new metric, filled again; none with 0. The answers are the same either way. */
static void spare(uint64_t max_mb) {
    gp_cch_cache_clear(); /* a new topology: no spare of an earlier test's versions */
    gp_engine *e = engine("on", "on");
    gp_engine_set_cch_spare(e, max_mb);
    gp_graph *g = load(e, EX);
    const gp_graph *tg = ((const gp_turns *)g->turns)->tg;
    gp_cch_topo *t = ((const gp_cch *)tg->cch)->topo;
    for (int i = 0; i < 500 && !__atomic_load_n(&t->spare, __ATOMIC_ACQUIRE); i++) usleep(10000);
    assert_true(!__atomic_load_n(&t->spare, __ATOMIC_ACQUIRE) == !max_mb);
    gp_metric_key k = ex(GP_OSM_CLASS_MOTORWAY);
    assert_true(cost(e, g, &k, 101, 102) == 1508);
    gp_err err = {0};
    gp_graph *m = NULL;
    assert_int_equal(gp_metric_get(e, g, &k, &m, &err), GP_OK); /* cached */
    const gp_cch *mc = ((const gp_turns *)m->turns)->tg->cch;
    assert_int_equal(mc->spare_warm, max_mb ? 1 : 0);
    assert_int_equal(mc->spare_gone, 1);
    for (int i = 0; i < 500 && !__atomic_load_n(&t->spare, __ATOMIC_ACQUIRE); i++) usleep(10000);
    assert_true(!__atomic_load_n(&t->spare, __ATOMIC_ACQUIRE) == !max_mb); /* filled again */
    k = ex(GP_OSM_CLASS_TOLL);
    assert_true(cost(e, g, &k, 201, 202) == 1508);
    gp_graph_unref(m);
    gp_graph_unref(g);
    gp_metric_cache_clear();
    gp_engine_free(e);
}

static void test_warm_spare(void **state) {
    (void)state;
    spare(GP_CCH_SPARE_MAX_MB);
    spare(0);
}

static void test_limit_tags(void **state) {
    (void)state;
    struct {
        const char *k, *v;
        int lim;
        uint8_t want;
    } cases[] = {
        {"maxheight", "3.5", GP_LIM_HEIGHT, 35},
        {"maxheight", "3.5 m", GP_LIM_HEIGHT, 35},
        {"maxheight", "12'6\"", GP_LIM_HEIGHT, 38},
        {"maxheight", "12 ft", GP_LIM_HEIGHT, 36},
        {"maxheight", "none", GP_LIM_HEIGHT, 0},
        {"maxheight", "default", GP_LIM_HEIGHT, 0},
        {"maxheight", "below_default", GP_LIM_HEIGHT, 0},
        {"maxwidth", "2.2", GP_LIM_WIDTH, 22},
        {"maxlength", "12", GP_LIM_LENGTH, 120},
        {"maxweight", "7.5", GP_LIM_WEIGHT, 15},
        {"maxweight", "7500 kg", GP_LIM_WEIGHT, 15},
        {"maxweight", "16000 lbs", GP_LIM_WEIGHT, 14},
        {"maxweight", "0", GP_LIM_WEIGHT, 0},
        {"maxweight", "200", GP_LIM_WEIGHT, 0},
        {"maxaxleload", "11.5", GP_LIM_AXLELOAD, 23},
        {"maxweight:conditional", "7.5 @ (22:00-06:00)", GP_LIM_WEIGHT, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gp_osm_tag t = {cases[i].k, cases[i].v};
        uint8_t out[GP_LIMITS];
        gp_osm_way_limits(&t, 1, out);
        if (out[cases[i].lim] != cases[i].want)
            fail_msg("%s=%s: %u, want %u", cases[i].k, cases[i].v, out[cases[i].lim],
                     cases[i].want);
    }
    /* maxheight:physical wins over the signed maxheight */
    gp_osm_tag two[2] = {{"maxheight", "3.2"}, {"maxheight:physical", "3.4"}};
    uint8_t out[GP_LIMITS];
    assert_int_equal(gp_osm_way_limits(two, 2, out), 1);
    assert_int_equal(out[GP_LIM_HEIGHT], 34);
    /* a vehicle rounds up: 3.51 m is 3.6 */
    gp_err err;
    uint8_t q;
    assert_int_equal(gp_metric_vehicle(GP_LIM_HEIGHT, 3.51, &q, &err), GP_OK);
    assert_int_equal(q, 36);
    assert_int_equal(gp_metric_vehicle(GP_LIM_WEIGHT, 0, &q, &err), GP_EINVAL);
    assert_int_equal(gp_metric_vehicle(GP_LIM_WEIGHT, 200, &q, &err), GP_EINVAL);
    assert_int_equal(gp_metric_parse_vehicle(GP_LIM_WIDTH, "2,5", &q, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "vehicle_width"));
}

static void test_exclude_lists(void **state) {
    (void)state;
    gp_engine *e = engine("off", "on");
    gp_graph *g = load(e, EX);
    gp_err err;
    unsigned bits;
    assert_int_equal(gp_metric_parse_exclude(g, "motorway,toll", 0, &bits, &err), GP_OK);
    assert_int_equal(bits, GP_OSM_CLASS_MOTORWAY | GP_OSM_CLASS_TOLL);
    /* OSRM: car.lua's excludable sets are single classes */
    assert_int_equal(gp_metric_parse_exclude(g, "motorway,toll", 1, &bits, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "combination is not supported"));
    assert_int_equal(gp_metric_parse_exclude(g, "ferry", 1, &bits, &err), GP_OK);
    assert_int_equal(bits, GP_OSM_CLASS_FERRY);
    assert_int_equal(gp_metric_parse_exclude(g, "highway", 0, &bits, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "'highway' is no exclusion class"));
    gp_graph *dim = gp_graph_load("grid:100:1", NULL, &err); /* no road classes */
    assert_non_null(dim);
    assert_null(dim->arc_class);
    assert_int_equal(gp_metric_parse_exclude(dim, "motorway", 1, &bits, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "defines no exclusion classes"));
    gp_graph_unref(dim);
    /* a generated road network has road classes but no profile: any class, one at a time on OSRM */
    gp_graph *road = gp_graph_load("gen:2000:1", NULL, &err);
    assert_non_null(road);
    assert_int_equal(gp_metric_parse_exclude(road, "motorway,ferry", 0, &bits, &err), GP_OK);
    assert_int_equal(gp_metric_parse_exclude(road, "motorway,ferry", 1, &bits, &err), GP_EINVAL);
    gp_graph_unref(road);
    gp_engine *eb = engine("off", "on");
    gp_graph *bike = load(eb, "osm:tests/data/osm/exclude.osm?profile=bicycle");
    assert_int_equal(gp_metric_parse_exclude(bike, "ferry", 0, &bits, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "defines no exclusion classes"));
    gp_graph_unref(bike);
    gp_engine_free(eb);

    /* the cache: one metric per graph and key, the least recently used dropped past the size */
    gp_metric_cache_clear();
    gp_metric_cache_size(2);
    uint64_t built0, hits0, built, hits;
    unsigned n;
    gp_metric_cache_stats(&built0, &hits0, &n);
    gp_metric_key a = ex(GP_OSM_CLASS_MOTORWAY), b = ex(GP_OSM_CLASS_TOLL), c = veh(0, 4);
    gp_graph *m1, *m2, *m3;
    assert_int_equal(gp_metric_get(e, g, &a, &m1, &err), GP_OK);
    assert_int_equal(gp_metric_get(e, g, &a, &m2, &err), GP_OK);
    assert_ptr_equal(m1, m2);
    assert_true(m1 != g && m1->closed && m1->base == g);
    gp_graph_unref(m2);
    assert_int_equal(gp_metric_get(e, g, &b, &m2, &err), GP_OK);
    assert_int_equal(gp_metric_get(e, g, &c, &m3, &err), GP_OK); /* drops a */
    gp_metric_cache_stats(&built, &hits, &n);
    assert_true(built - built0 == 3 && hits - hits0 == 1 && n == 2);
    gp_graph_unref(m1);
    gp_graph_unref(m2);
    gp_graph_unref(m3);
    assert_int_equal(gp_metric_get(e, g, &a, &m1, &err), GP_OK); /* built again */
    gp_metric_cache_stats(&built, &hits, &n);
    assert_true(built - built0 == 4 && n == 2);
    gp_graph_unref(m1);
    /* a graph only the cache holds goes with the next metric built */
    gp_graph *g2 = load(e, EX);
    assert_int_equal(gp_metric_get(e, g2, &b, &m2, &err), GP_OK);
    gp_graph_unref(m2);
    gp_graph_unref(g2); /* the cache holds the last reference */
    assert_int_equal(gp_metric_get(e, g, &b, &m2, &err), GP_OK); /* built: drops g2's */
    gp_metric_cache_stats(&built, &hits, &n);
    assert_true(n == 2 && built - built0 == 6);
    gp_graph_unref(m2);
    assert_int_equal(gp_metric_get(e, g, &a, &m1, &err), GP_OK); /* a stayed: a hit */
    uint64_t hits2;
    gp_metric_cache_stats(&built, &hits2, &n);
    assert_true(built - built0 == 6 && hits2 == hits + 1);
    gp_graph_unref(m1);
    /* a key that closes no arc (oneway.osm has no motorway, no ferry): the graph itself */
    gp_graph *grid = load(e, "osm:tests/data/osm/oneway.osm?profile=car");
    gp_metric_key f = ex(GP_OSM_CLASS_FERRY | GP_OSM_CLASS_MOTORWAY);
    assert_int_equal(gp_metric_get(e, grid, &f, &m1, &err), GP_OK);
    assert_ptr_equal(m1, grid);
    gp_graph_unref(m1);
    gp_graph_unref(grid);
    gp_metric_key empty = ex(0);
    assert_int_equal(gp_metric_get(e, g, &empty, &m1, &err), GP_OK);
    assert_ptr_equal(m1, g);
    gp_graph_unref(m1);
    gp_metric_cache_clear();
    gp_metric_cache_size(GP_METRIC_CACHE_DEFAULT);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* Limits and hgv flags survive a snapshot (their own section, in the version hash), and a metric
 * of the loaded graph answers as one of the imported graph. */
static void test_snapshot_limits(void **state) {
    (void)state;
    gp_engine *e = engine("off", "on");
    gp_graph *g = load(e, EX);
    assert_non_null(g->arc_limits);
    uint32_t with = 0;
    for (uint32_t a = 0; a < g->m; a++) with += gp_graph_arc_limits(g, a)[GP_LIM_HEIGHT] != 0;
    assert_int_equal(with, 4); /* the 3.5 m bridge and the 12'6" underpass, both directions */
    char path[] = "/tmp/gpath-metric-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gp_err err;
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    gp_graph *h = gp_load_snapshot(path, NULL, &err);
    unlink(path);
    assert_non_null(h);
    assert_int_equal(gp_engine_attach(e, h, &err), GP_OK);
    assert_string_equal(h->version, g->version);
    assert_memory_equal(h->arc_limits, g->arc_limits, (size_t)g->m * GP_LIMITS);
    assert_memory_equal(h->arc_flags, g->arc_flags, g->m);
    gp_metric_key k = veh(GP_LIM_HEIGHT, 4);
    assert_true(cost(e, h, &k, 401, 402) == 1508);
    k = veh(GP_LIM_WEIGHT, 3.6);
    assert_true(cost(e, h, &k, 601, 602) == 1508);
    gp_metric_cache_clear();
    gp_graph_unref(h);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* A cost change is a new version: its metrics are its own, and the old version's stay as they
 * were (a request pinned to it still gets them). */
static void test_new_version(void **state) {
    (void)state;
    gp_engine *e = engine("on", "on");
    gp_graph *g = load(e, EX);
    gp_metric_key k = ex(GP_OSM_CLASS_TOLL);
    assert_true(cost(e, g, &k, 201, 202) == 1508);
    /* both arcs 201 - 202 (the toll road and the detour, parallel after the collapse) to 1000 */
    gp_link_change ch = {201, 202, 0, 1000};
    gp_graph *g2 = NULL;
    gp_err err;
    assert_int_equal(gp_engine_change_links(e, g, &ch, 1, NULL, 0, &g2, NULL, &err), GP_OK);
    assert_true(cost(e, g2, &k, 201, 202) == 1000);
    assert_true(cost(e, g, &k, 201, 202) == 1508);
    gp_metric_key none = ex(0);
    assert_true(cost(e, g2, &none, 201, 202) == 1000);
    gp_metric_cache_clear();
    gp_graph_unref(g2);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* Dijkstra from s over g's arcs that are open under k (the reference: arcs left out). */
static void ref_dijkstra(const gp_graph *g, const gp_metric_key *k, uint32_t s, uint64_t *d) {
    for (uint32_t v = 0; v < g->n; v++) d[v] = GP_INF;
    char *done = calloc(g->n, 1);
    assert_non_null(done);
    d[s] = 0;
    for (;;) { /* O(n^2) is fine for the sample */
        uint32_t u = GP_NONE;
        for (uint32_t v = 0; v < g->n; v++)
            if (!done[v] && d[v] != GP_INF && (u == GP_NONE || d[v] < d[u])) u = v;
        if (u == GP_NONE) break;
        done[u] = 1;
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
            if (!gp_metric_arc_closed(g, a, k) && d[u] + g->w[a] < d[g->col[a]])
                d[g->col[a]] = d[u] + g->w[a];
    }
    free(done);
}

static void test_exact_liechtenstein(void **state) {
    (void)state;
    const char *dir = getenv("GPATH_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/osm/liechtenstein-latest.osm.pbf", dir ? dir : "data");
    if (access(path, R_OK) != 0) {
        print_message("%s absent (make data): skipped\n", path);
        skip();
    }
    char spec[1100];
    snprintf(spec, sizeof spec, "osm:%s?profile=car", path);
    gp_engine *e = engine("on", "off"); /* node-based, so that the reference is a plain Dijkstra */
    gp_graph *g = load(e, spec);
    gp_metric_key k = ex(GP_OSM_CLASS_MOTORWAY | GP_OSM_CLASS_TOLL | GP_OSM_CLASS_FERRY);
    gp_err err;
    /* a big truck: every limit and hgv=no */
    const double v[GP_LIMITS] = {4.0, 2.55, 18.75, 40, 11.5};
    for (int i = 0; i < GP_LIMITS; i++)
        assert_int_equal(gp_metric_vehicle(i, v[i], &k.veh[i], &err), GP_OK);
    uint32_t closed = 0;
    for (uint32_t a = 0; a < g->m; a++) closed += gp_metric_arc_closed(g, a, &k);
    print_message("liechtenstein: %u of %u arcs closed\n", closed, g->m);
    assert_true(closed > 0);
    gp_graph *m = NULL;
    assert_int_equal(gp_metric_get(e, g, &k, &m, &err), GP_OK);
    assert_non_null(m->cch); /* customized */
    enum { K = 24 };
    uint32_t src[K], dst[K];
    /* the ends of the closed arcs first (their routes change), then spread-out nodes */
    uint32_t c = 0;
    for (uint32_t a = 0; a < g->m && c < K / 2; a++)
        if (gp_metric_arc_closed(g, a, &k)) {
            src[c] = gp_graph_arc_tail(g, a);
            dst[c++] = g->col[a];
        }
    for (uint32_t i = c; i < K; i++) {
        src[i] = (uint32_t)((uint64_t)(i * 7919 + 13) % g->n);
        dst[i] = (uint32_t)((uint64_t)(i * 104729 + 101) % g->n);
    }
    gp_snap ss[K], ts[K];
    for (uint32_t i = 0; i < K; i++) {
        gp_snap_at_node(m, src[i], &ss[i]);
        gp_snap_at_node(m, dst[i], &ts[i]);
    }
    uint64_t *tab = malloc(sizeof *tab * K * K), *d = malloc(sizeof *d * g->n);
    assert_non_null(tab);
    assert_non_null(d);
    assert_int_equal(gp_engine_table_snap(e, m, ss, K, ts, K, tab, &err), GP_OK);
    uint32_t reached = 0, cut = 0;
    for (uint32_t i = 0; i < K; i++) {
        ref_dijkstra(g, &k, src[i], d);
        uint64_t *d0 = malloc(sizeof *d0 * g->n);
        ref_dijkstra(g, &(gp_metric_key){0}, src[i], d0);
        for (uint32_t j = 0; j < K; j++) {
            if (tab[i * K + j] != d[dst[j]])
                fail_msg("%u -> %u: metric %llu, without the arcs %llu", src[i], dst[j],
                         (unsigned long long)tab[i * K + j], (unsigned long long)d[dst[j]]);
            reached += d[dst[j]] != GP_INF;
            cut += d[dst[j]] != d0[dst[j]];
        }
        free(d0);
    }
    print_message("liechtenstein: %u of %u pairs reached, %u changed by the closures\n", reached,
                  K * K, cut);
    assert_true(reached > 0 && cut > 0);
    free(tab);
    free(d);
    gp_graph_unref(m);
    gp_metric_cache_clear();
    gp_graph_unref(g);
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_tags),          cmocka_unit_test(test_exclude_lists),
        cmocka_unit_test(test_literal_dijkstra),    cmocka_unit_test(test_literal_cch),
        cmocka_unit_test(test_snapshot_limits),     cmocka_unit_test(test_new_version),
        cmocka_unit_test(test_exact_liechtenstein), cmocka_unit_test(test_warm_spare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
