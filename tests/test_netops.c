/* test_netops.c - router topologies: loaders (GraphML, SNDlib, Rocketfuel, incl. malformed files
 * with line numbers), ECMP routing tables on hand-drawn networks with literal next-hop sets
 * (unreachable routers, parallel arcs, self-loops, the ecmp_max cap over and under 64 neighbours),
 * cost changes and what-if diffs on a square with a diagonal, and the incremental update equal to a
 * full recompute and to a brute-force reference on random graphs with random cost changes; cost
 * changes on an OSM road graph (a reweighted version sharing the rest, a link down keeping the road
 * attributes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/ecmp.h"
#include "engine/jobs.h"
#include "engine/snap.h"
#include "storage/source.h"
#include "tests/netops_test.h"

typedef struct arc {
    int64_t u, v;
    uint32_t w;
} arc;

/* Graph with external ids 1..n (internal = id - 1); undirected: every arc both ways. */
static gp_graph *build(uint32_t n, const arc *a, size_t na, int undirected) {
    gp_err err;
    gp_builder *b = routers_builder(n);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(gp_builder_add_arc(b, a[i].u, a[i].v, a[i].w, &err), GP_OK);
        if (undirected)
            assert_int_equal(gp_builder_add_arc(b, a[i].v, a[i].u, a[i].w, &err), GP_OK);
    }
    gp_graph *g = routers_finish(b, !undirected);
    return g;
}

static gp_rt *tables(gp_graph *g, uint32_t ecmp_max) {
    gp_rt *t = NULL;
    gp_err err;
    if (gp_rt_build(E, g, ecmp_max, 2, 0, &t, &err) != GP_OK) fail_msg("build: %s", err.msg);
    return t;
}

/* Asserts the entry (router ext i, dest ext j): dist (GP_INF: unreachable) and next hops (ext ids,
 * ascending, terminated by -1). */
static void expect(const gp_rt *t, int64_t i, int64_t j, uint64_t dist, const int64_t *hops) {
    uint32_t ii = gp_graph_index(t->g, i), jj = gp_graph_index(t->g, j);
    uint32_t got[256];
    assert_int_equal(gp_rt_dist(t, ii, jj), dist);
    uint32_t c = gp_rt_next_hops(t, ii, jj, got), k = 0;
    for (; hops[k] != -1; k++) {
        if (k >= c)
            fail_msg("%lld->%lld: missing next hop %lld", (long long)i, (long long)j,
                     (long long)hops[k]);
        assert_int_equal(t->g->ext[got[k]], hops[k]);
    }
    if (c != k) fail_msg("%lld->%lld: %u next hops, expected %u", (long long)i, (long long)j, c, k);
}
#define H(...) ((const int64_t[]){__VA_ARGS__, -1})
#define NOHOPS ((const int64_t[]){-1})

/* Square 1-2-3-4-1 (cost 1) with a diagonal 1-3 of cost 2, an isolated router 5, a one-way arc
 * 6->1, a self-loop on 1 and a parallel 1-2 arc of cost 3. */
static gp_graph *square(void) {
    const arc a[] = {{1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 1, 1}, {1, 3, 2}, {1, 1, 0}, {1, 2, 3}};
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    for (int64_t i = 1; i <= 6; i++) gp_builder_add_node(b, i, 0, 0, 0, NULL, &err);
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        gp_builder_add_arc(b, a[i].u, a[i].v, a[i].w, &err);
        gp_builder_add_arc(b, a[i].v, a[i].u, a[i].w, &err);
    }
    gp_builder_add_arc(b, 6, 1, 1, &err);
    gp_graph *g = gp_builder_finish(b, "square", "test", 1, &err);
    assert_non_null(g);
    return g;
}

static void test_square_tables(void **state) {
    (void)state;
    gp_graph *g = square();
    gp_rt *t = tables(g, 0);
    expect(t, 1, 1, 0, NOHOPS);
    expect(t, 1, 2, 1, H(2));       /* parallel arcs 1-2: one next hop */
    expect(t, 1, 3, 2, H(2, 3, 4)); /* three equal-cost ways */
    expect(t, 1, 4, 1, H(4));
    expect(t, 2, 4, 2, H(1, 3));
    expect(t, 3, 1, 2, H(1, 2, 4));
    expect(t, 1, 5, GP_INF, NOHOPS); /* isolated */
    expect(t, 5, 1, GP_INF, NOHOPS);
    expect(t, 1, 6, GP_INF, NOHOPS); /* 6->1 is one-way */
    expect(t, 6, 3, 3, H(1));
    expect(t, 6, 6, 0, NOHOPS);
    gp_rt_free(t);
    gp_graph_unref(g);
}

/* Router 1 with k middle routers 2..k+1, each linked to a sink k+2 at cost 1. */
static gp_graph *fan(uint32_t k) {
    arc *a = calloc(2 * k, sizeof *a);
    for (uint32_t i = 0; i < k; i++) {
        a[2 * i] = (arc){1, 2 + i, 1};
        a[2 * i + 1] = (arc){2 + i, k + 2, 1};
    }
    gp_graph *g = build(k + 2, a, 2 * k, 1);
    free(a);
    return g;
}

static void test_ecmp_cap(void **state) {
    (void)state;
    gp_graph *g = fan(5);
    gp_rt *t = tables(g, 3);
    expect(t, 1, 7, 2, H(2, 3, 4)); /* capped to the lowest 3 ids */
    expect(t, 7, 1, 2, H(2, 3, 4));
    expect(t, 2, 7, 1, H(7));
    gp_rt_free(t);
    t = tables(g, 0);
    expect(t, 1, 7, 2, H(2, 3, 4, 5, 6));
    gp_rt_free(t);
    gp_graph_unref(g);

    /* every entry width: 12 (2 bytes), 20 (4), 40 (8) neighbours, capped at 10 */
    for (uint32_t k = 12; k <= 40; k = k == 12 ? 20 : 40) {
        g = fan(k);
        int64_t want[41];
        for (uint32_t x = 0; x < 10; x++) want[x] = 2 + x;
        want[10] = -1;
        t = tables(g, 10);
        expect(t, 1, k + 2, 2, want);
        expect(t, k + 2, 1, 2, want);
        gp_rt_free(t);
        t = tables(g, 0);
        for (uint32_t x = 0; x < k; x++) want[x] = 2 + x;
        want[k] = -1;
        expect(t, 1, k + 2, 2, want);
        gp_rt_free(t);
        gp_graph_unref(g);
        if (k == 40) break;
    }

    /* 100 neighbours: masks span two words */
    g = fan(100);
    int64_t all[101], low64[65];
    for (int i = 0; i < 100; i++) all[i] = 2 + i;
    all[100] = -1;
    for (int i = 0; i < 64; i++) low64[i] = 2 + i;
    low64[64] = -1;
    t = tables(g, 0); /* default cap 64 */
    expect(t, 1, 102, 2, low64);
    gp_rt_free(t);
    t = tables(g, 100);
    expect(t, 1, 102, 2, all);
    expect(t, 102, 1, 2, all);
    gp_rt_free(t);
    t = tables(g, 70);
    all[70] = -1;
    expect(t, 1, 102, 2, all);
    gp_rt_free(t);
    gp_graph_unref(g);
}

static gp_rt *what_if(const gp_rt *t, const gp_link_change *ch, size_t nch, const int64_t *fr,
                      size_t nfr, int strategy) {
    gp_graph *g2 = NULL;
    gp_rt *t2 = NULL;
    gp_err err;
    if (gp_graph_change_links(t->g, ch, nch, fr, nfr, &g2, &err) != GP_OK)
        fail_msg("change: %s", err.msg);
    if (gp_rt_update(E, t, g2, strategy, 2, &t2, NULL, &err) != GP_OK)
        fail_msg("update: %s", err.msg);
    gp_graph_unref(g2);
    return t2;
}

static size_t diff(const gp_rt *a, const gp_rt *b, gp_rt_pair **p) {
    size_t n = 0;
    gp_err err;
    assert_int_equal(gp_rt_diff(a, b, p, &n, &err), GP_OK);
    return n;
}

static void test_what_if_square(void **state) {
    (void)state;
    gp_graph *g = square();
    gp_rt *t = tables(g, 0);
    /* fail the diagonal: only 1<->3 lose a next hop, distances stay 2 */
    gp_link_change down = {.u = 1, .v = 3, .down = 1};
    gp_rt *t2 = what_if(t, &down, 1, NULL, 0, GP_RT_AUTO);
    assert_string_not_equal(t2->g->version, g->version);
    expect(t2, 1, 3, 2, H(2, 4));
    expect(t2, 3, 1, 2, H(2, 4));
    gp_rt_pair *p = NULL;
    size_t np = diff(t, t2, &p);
    /* changed: 1->3 and 3->1 (next hops), 6->3 unchanged (via 1, still 3) */
    assert_int_equal(np, 2);
    assert_int_equal(t->g->ext[p[0].router], 1);
    assert_int_equal(t->g->ext[p[0].dest], 3);
    assert_int_equal(t->g->ext[p[1].router], 3);
    assert_int_equal(t->g->ext[p[1].dest], 1);
    free(p);
    gp_rt_free(t2);

    /* diagonal cost 2 -> 1: 1->3 becomes a single hop of cost 1, 6->3 cost 2 */
    gp_link_change cheaper = {.u = 3, .v = 1, .cost = 1};
    t2 = what_if(t, &cheaper, 1, NULL, 0, GP_RT_INCREMENTAL);
    expect(t2, 1, 3, 1, H(3));
    expect(t2, 3, 1, 1, H(1));
    expect(t2, 6, 3, 2, H(1));
    expect(t2, 2, 4, 2, H(1, 3));
    np = diff(t, t2, &p);
    assert_int_equal(np, 3); /* 1->3, 3->1, 6->3 */
    free(p);
    gp_rt_free(t2);

    /* router 2 fails: everything to/from 2 unreachable; 1->3 keeps 3 and 4 */
    int64_t r2 = 2;
    t2 = what_if(t, NULL, 0, &r2, 1, GP_RT_AUTO);
    expect(t2, 2, 1, GP_INF, NOHOPS);
    expect(t2, 1, 2, GP_INF, NOHOPS);
    expect(t2, 6, 2, GP_INF, NOHOPS);
    expect(t2, 1, 3, 2, H(3, 4));
    expect(t2, 3, 1, 2, H(1, 4));
    expect(t2, 4, 2, GP_INF, NOHOPS);
    np = diff(t, t2, &p);
    /* 2->{1,3,4} + {1,3,4,6}->2 + 1->3 + 3->1 */
    assert_int_equal(np, 3 + 4 + 2);
    free(p);
    gp_rt_free(t2);

    /* errors: a link that does not exist, an unknown router, a negative cost */
    gp_graph *g2 = NULL;
    gp_err err;
    gp_link_change none = {.u = 2, .v = 4, .down = 1};
    assert_int_equal(gp_graph_change_links(g, &none, 1, NULL, 0, &g2, &err), GP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no link between 2 and 4"));
    gp_link_change unk = {.u = 1, .v = 99, .cost = 1};
    assert_int_equal(gp_graph_change_links(g, &unk, 1, NULL, 0, &g2, &err), GP_ENOTFOUND);
    gp_link_change neg = {.u = 1, .v = 2, .cost = -1};
    assert_int_equal(gp_graph_change_links(g, &neg, 1, NULL, 0, &g2, &err), GP_EINVAL);
    int64_t r99 = 99;
    assert_int_equal(gp_graph_change_links(g, NULL, 0, &r99, 1, &g2, &err), GP_ENOTFOUND);
    gp_rt_free(t);
    gp_graph_unref(g);
}

/* ---- cost changes on a road graph ---- */

/* Forward and reverse weights agree: the in-arcs of every v, as (tail, weight) pairs, are its
 * forward arcs from every u, in the same order (rows sorted by tail, then weight). */
static void check_reverse(const gp_graph *g) {
    uint32_t *seen = calloc(g->n + 1, sizeof *seen);
    assert_non_null(seen);
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a], k = g->rrow[v] + seen[v]++;
            assert_true(k < g->rrow[v + 1]);
            assert_int_equal(g->rcol[k], u);
            assert_int_equal(g->rw[k], g->w[a]);
        }
    free(seen);
}

/* An OSM road graph (car, turn restrictions: nodes copied for them, degree-2 chains kept as arc
 * shapes): a pure cost change is a reweighted version that shares every array but the weights
 * with the graph it came from (whose snap index it uses), chains of changes share the first
 * graph, and the old version can go while the new one serves; a link taken down rebuilds the
 * graph and keeps the road attributes, the original ids and the profile. */
static void test_change_road_graph(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_graph_load("osm:tests/data/osm/turns.osm?profile=car", NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_non_null(g->arc_shape);
    assert_non_null(g->osm_id);
    /* the arc with the most shape points, and its reverse */
    uint32_t best = 0, ua = 0;
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
            if (g->arc_shape[a + 1] - g->arc_shape[a] > g->arc_shape[best + 1] - g->arc_shape[best])
                best = a, ua = u;
    assert_true(g->arc_shape[best + 1] > g->arc_shape[best]);
    uint32_t va = g->col[best];
    gp_link_change c = {.u = g->ext[ua], .v = g->ext[va], .cost = 1234};
    gp_graph *g2 = NULL, *g3 = NULL, *g4 = NULL;
    assert_int_equal(gp_graph_change_links(g, &c, 1, NULL, 0, &g2, &err), GP_OK);
    assert_ptr_equal(g2->base, g);
    assert_ptr_equal(g2->col, g->col);
    assert_ptr_equal(g2->arc_shape, g->arc_shape);
    assert_ptr_equal(g2->osm_id, g->osm_id);
    assert_ptr_equal(g2->spatial, g->spatial);
    assert_true(g2->w != g->w && g2->rw != g->rw);
    assert_string_equal(g2->profile, "car");
    assert_string_equal(g2->unit_name, g->unit_name);
    assert_string_not_equal(g2->version, g->version);
    uint32_t x = (uint32_t)(1234 * g->scale + 0.5), changed = 0;
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            int link = (u == ua && v == va) || (u == va && v == ua);
            assert_int_equal(g2->w[a], link ? x : g->w[a]);
            changed += link;
        }
    assert_true(changed >= 1);
    check_reverse(g2);
    /* a change of the change shares the first graph; the same content has the same version */
    c.cost = 7;
    assert_int_equal(gp_graph_change_links(g2, &c, 1, NULL, 0, &g3, &err), GP_OK);
    assert_ptr_equal(g3->base, g);
    check_reverse(g3);
    gp_link_change back = {.u = c.u, .v = c.v, .cost = (double)g->w[best] / g->scale};
    int parallel = 0; /* the version equals g's only when no other arc joins the two nodes */
    for (uint32_t a = g->row[ua]; a < g->row[ua + 1]; a++) parallel += g->col[a] == va;
    for (uint32_t a = g->row[va]; a < g->row[va + 1]; a++)
        parallel += g->col[a] == ua && g->w[a] != g->w[best];
    assert_int_equal(gp_graph_change_links(g3, &back, 1, NULL, 0, &g4, &err), GP_OK);
    if (parallel == 1) assert_string_equal(g4->version, g->version);
    gp_graph_unref(g4);
    g4 = NULL;
    /* the snap index is built once, on the first graph, and serves its versions */
    gp_snap sp;
    assert_int_equal(gp_snap_point(g3, g->lon[ua], g->lat[ua], 100, &sp, &err), GP_OK);
    assert_null(g3->snap);
    assert_non_null(g->snap);
    /* the old versions go; the newest keeps what it shares */
    gp_graph_unref(g2);
    gp_link_change down = {.u = c.u, .v = c.v, .down = 1};
    assert_int_equal(gp_graph_change_links(g3, &down, 1, NULL, 0, &g4, &err), GP_OK);
    gp_graph_unref(g);
    assert_int_equal(gp_snap_point(g3, sp.lon, sp.lat, 100, &sp, &err), GP_OK);
    check_reverse(g3);
    /* a link down: rebuilt, with the road attributes, original ids and profile */
    assert_null(g4->base);
    assert_int_equal(g4->m, g3->m - changed);
    assert_non_null(g4->arc_shape);
    assert_non_null(g4->osm_id);
    assert_string_equal(g4->profile, "car");
    assert_int_equal(g4->shape_lon ? 1 : 0, 1);
    uint64_t s3 = 0, s4 = 0;
    for (uint32_t a = 0; a < g3->m; a++) s3 += g3->arc_shape[a + 1] - g3->arc_shape[a];
    for (uint32_t a = 0; a < g4->m; a++) s4 += g4->arc_shape[a + 1] - g4->arc_shape[a];
    assert_true(s4 < s3 && s4 > 0); /* the link's own shape points went with it */
    check_reverse(g4);
    gp_graph_unref(g3);
    gp_graph_unref(g4);
}

/* ---- random graphs: incremental == full == brute force ---- */

static uint64_t rs = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Brute force from the definition: Bellman-Ford style relaxation (n rounds) on the raw arcs, then
 * next hops from every arc (parallel arcs collapse, self-loops skipped). */
static void brute_check(const gp_rt *t) {
    const gp_graph *g = t->g;
    uint32_t n = g->n;
    uint64_t *d = malloc((size_t)n * n * sizeof *d);
    for (uint64_t k = 0; k < (uint64_t)n * n; k++) d[k] = GP_INF;
    for (uint32_t i = 0; i < n; i++) d[(uint64_t)i * n + i] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t u = 0; u < n; u++)
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
                for (uint32_t j = 0; j < n; j++) {
                    uint64_t dv = d[(uint64_t)g->col[a] * n + j];
                    if (dv != GP_INF && dv + g->w[a] < d[(uint64_t)u * n + j]) {
                        d[(uint64_t)u * n + j] = dv + g->w[a];
                        changed = 1;
                    }
                }
    }
    uint32_t got[512];
    unsigned char *is = calloc(n, 1);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            assert_int_equal(gp_rt_dist(t, i, j), d[(uint64_t)i * n + j]);
            memset(is, 0, n);
            uint32_t cnt = 0;
            if (i != j && d[(uint64_t)i * n + j] != GP_INF)
                for (uint32_t a = g->row[i]; a < g->row[i + 1]; a++) {
                    uint32_t k = g->col[a];
                    uint64_t dk = d[(uint64_t)k * n + j];
                    if (k != i && dk != GP_INF && dk + g->w[a] == d[(uint64_t)i * n + j] &&
                        !is[k]) {
                        is[k] = 1;
                        cnt++;
                    }
                }
            uint32_t c = gp_rt_next_hops(t, i, j, got);
            uint32_t want = cnt < t->ecmp_max ? cnt : t->ecmp_max;
            assert_int_equal(c, want);
            for (uint32_t k = 0; k < c; k++) {
                assert_true(is[got[k]]);
                if (k) assert_true(got[k] > got[k - 1]);
            }
            /* capped sets keep the lowest indices */
            uint32_t below = 0;
            for (uint32_t k = 0; c && k < got[c - 1]; k++) below += is[k];
            if (c) assert_int_equal(below, c - 1);
        }
    free(is);
    free(d);
}

static gp_graph *random_graph(uint32_t n, uint32_t deg, uint32_t maxw, int undirected) {
    size_t na = (size_t)n * deg;
    arc *a = malloc(na * sizeof *a);
    for (size_t k = 0; k < na; k++)
        a[k] = (arc){1 + (int64_t)(rnd() % n), 1 + (int64_t)(rnd() % n),
                     (uint32_t)(rnd() % (maxw + 1))};
    gp_graph *g = build(n, a, na, undirected);
    free(a);
    return g;
}

static void test_incremental_random(void **state) {
    (void)state;
    for (int round = 0; round < 150; round++) {
        uint32_t n = 5 + (uint32_t)(rnd() % 60), maxw = round % 3 == 0 ? 2 : 9;
        gp_graph *g = random_graph(n, 1 + (uint32_t)(rnd() % 3), maxw, round % 2);
        gp_rt *t = tables(g, round % 4 == 0 ? 2 : 0);
        brute_check(t);
        /* 1..4 random changes on existing links: up, down, removal */
        gp_link_change ch[4];
        int nch = 1 + (int)(rnd() % 4), k = 0;
        while (k < nch) {
            uint32_t u = (uint32_t)(rnd() % n);
            if (g->row[u + 1] == g->row[u]) {
                if (rnd() % 8 == 0) break;
                continue;
            }
            uint32_t a = g->row[u] + (uint32_t)(rnd() % (g->row[u + 1] - g->row[u]));
            int kind = (int)(rnd() % 3);
            ch[k++] = (gp_link_change){.u = g->ext[u],
                                       .v = g->ext[g->col[a]],
                                       .down = kind == 2,
                                       .cost = kind == 0 ? g->w[a] + 1 + (double)(rnd() % 5)
                                                         : (double)(rnd() % (g->w[a] + 1))};
        }
        int64_t fr = g->ext[rnd() % n];
        int use_fr = round % 5 == 0;
        gp_rt *ti = what_if(t, ch, (size_t)k, use_fr ? &fr : NULL, use_fr, GP_RT_INCREMENTAL);
        gp_rt *tf = what_if(t, ch, (size_t)k, use_fr ? &fr : NULL, use_fr, GP_RT_FULL);
        gp_rt *ts = tables(ti->g, t->ecmp_max);
        brute_check(ti);
        gp_rt_pair *p = NULL;
        assert_int_equal(diff(ti, tf, &p), 0);
        free(p);
        assert_int_equal(diff(ti, ts, &p), 0);
        free(p);
        assert_memory_equal(ti->dist, ts->dist, (size_t)n * n * 8);
        gp_rt_free(ti);
        gp_rt_free(tf);
        gp_rt_free(ts);
        gp_rt_free(t);
        gp_graph_unref(g);
    }
}

/* ---- jobs ---- */

static int stored_calls;
static int store_cb(void *ctx, const char *graph, const gp_graph *g, const uint64_t *dist) {
    (void)ctx;
    assert_string_equal(graph, "net");
    assert_int_equal(dist[1], gp_rt_dist(ctx ? ctx : NULL, 0, 1));
    (void)g;
    stored_calls++;
    return 1;
}

static void test_jobs(void **state) {
    (void)state;
    gp_err err;
    gp_graph *g = random_graph(300, 3, 9, 1);
    gp_rt *ref = tables(g, 0);
    gp_jobs *j = gp_jobs_new(E, 0, 0, 2, store_cb, ref, &err);
    assert_non_null(j);
    uint64_t id[3];
    for (int k = 0; k < 3; k++) assert_int_equal(gp_jobs_submit(j, "net", g, &id[k], &err), GP_OK);
    assert_true(id[1] == id[0] + 1 && id[2] == id[1] + 1);
    gp_job_status st;
    gp_rt *rt = NULL;
    double t0 = gp_now();
    do {
        assert_int_equal(gp_jobs_get(j, id[2], &st, &rt, &err), GP_OK);
        assert_true(st.progress >= 0 && st.progress <= 1);
        if (st.state < GP_JOB_DONE) usleep(2000);
    } while (st.state < GP_JOB_DONE && gp_now() - t0 < 60);
    assert_int_equal(st.state, GP_JOB_DONE);
    assert_true(st.progress == 1.0);
    assert_int_equal(st.routers, 300);
    assert_string_equal(st.version, g->version);
    assert_int_equal(st.stored, 1);
    assert_non_null(rt);
    gp_rt_pair *p = NULL;
    assert_int_equal(diff(rt, ref, &p), 0);
    free(p);
    gp_rt_free(rt);
    /* keep = 2: the first job is forgotten once three are done */
    assert_int_equal(gp_jobs_get(j, id[0], &st, NULL, &err), GP_ENOTFOUND);
    assert_int_equal(gp_jobs_get(j, 999, &st, NULL, &err), GP_ENOTFOUND);
    assert_int_equal(stored_calls, 3);
    rt = gp_jobs_result_for(j, g->hash);
    assert_non_null(rt);
    gp_rt_free(rt);
    assert_null(gp_jobs_result_for(j, g->hash ^ 1));
    assert_string_equal(gp_job_state_name(GP_JOB_RUNNING), "running");
    /* a job over the byte limit fails with the reason */
    gp_jobs *small = gp_jobs_new(E, 0, 1000, 4, NULL, NULL, &err);
    assert_int_equal(gp_jobs_submit(small, "net", g, &id[0], &err), GP_OK);
    do {
        assert_int_equal(gp_jobs_get(small, id[0], &st, NULL, &err), GP_OK);
        if (st.state < GP_JOB_DONE) usleep(1000);
    } while (st.state < GP_JOB_DONE);
    assert_int_equal(st.state, GP_JOB_FAILED);
    assert_non_null(strstr(st.error, "over the limit"));
    gp_jobs_free(small);
    gp_jobs_free(j);
    gp_rt_free(ref);
    gp_graph_unref(g);
}

/* ---- loaders ---- */

static char tmpdir[256];

static const char *write_tmp(const char *name, const char *text) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static gp_graph *load(const char *spec, const char *rule, gp_err *err) {
    gp_load_opts o = {.cost_rule = rule};
    return gp_graph_load(spec, &o, err);
}

static uint32_t arc_w(const gp_graph *g, int64_t u, int64_t v) {
    uint32_t a = gp_graph_index(g, u), b = gp_graph_index(g, v);
    for (uint32_t k = g->row[a]; k < g->row[a + 1]; k++)
        if (g->col[k] == b) return g->w[k];
    fail_msg("no arc %lld->%lld", (long long)u, (long long)v);
    return 0;
}

#define GML_HEAD                                                                                   \
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"                                                 \
    "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"                                  \
    "  <key attr.name=\"label\" attr.type=\"string\" for=\"node\" id=\"d1\" />\n"                  \
    "  <key attr.name=\"Longitude\" attr.type=\"double\" for=\"node\" id=\"d2\" />\n"              \
    "  <key attr.name=\"Latitude\" attr.type=\"double\" for=\"node\" id=\"d3\" />\n"               \
    "  <key attr.name=\"LinkSpeed\" attr.type=\"string\" for=\"edge\" id=\"d4\" />\n"              \
    "  <key attr.name=\"LinkSpeedUnits\" attr.type=\"string\" for=\"edge\" id=\"d5\" />\n"         \
    "  <key attr.name=\"LinkSpeedRaw\" attr.type=\"double\" for=\"edge\" id=\"d6\" />\n"           \
    "  <graph edgedefault=\"undirected\">\n"

static void test_load_graphml(void **state) {
    (void)state;
    gp_err err;
    const char *p = write_tmp(
        "t.graphml", GML_HEAD
        "    <node id=\"0\"><data key=\"d1\">Alpha</data><data key=\"d2\">13.4</data>"
        "<data key=\"d3\">52.5</data></node>\n"
        "    <node id=\"1\"><data key=\"d1\">Beta &amp; Co</data></node>\n"
        "    <node id=\"7\"><data key=\"d1\">Gamma</data></node>\n"
        "    <node id=\"3\"/>\n"
        "    <edge source=\"0\" target=\"1\"><data key=\"d6\">10000000000.0</data></edge>\n"
        "    <edge source=\"1\" target=\"7\"><data key=\"d4\">155</data><data "
        "key=\"d5\">M</data></edge>\n"
        "    <edge source=\"7\" target=\"3\"><data key=\"d4\">2.5</data><data "
        "key=\"d5\">G</data></edge>\n"
        "    <edge source=\"0\" target=\"3\"/>\n"
        "  </graph>\n</graphml>\n");
    char spec[600];
    snprintf(spec, sizeof spec, "graphml:%s", p);
    gp_graph *g = load(spec, NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(g->n, 4);
    assert_int_equal(g->m, 8);
    assert_int_equal(g->ext[3], 7);
    assert_string_equal(gp_graph_name(g, gp_graph_index(g, 1)), "Beta & Co");
    assert_null(gp_graph_name(g, gp_graph_index(g, 3)));
    assert_int_equal(arc_w(g, 0, 1), 1);
    assert_int_equal(arc_w(g, 3, 0), 1);
    gp_graph_unref(g);
    /* bandwidth: 100G/10G = 10, 100G/155M = 645, 100G/2.5G = 40, unknown -> lower median of
     * {10, 40, 645} = 40 */
    g = load(p, "bandwidth", &err); /* bare path: the extension picks GraphML */
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(arc_w(g, 0, 1), 10);
    assert_int_equal(arc_w(g, 1, 0), 10);
    assert_int_equal(arc_w(g, 7, 1), 645);
    assert_int_equal(arc_w(g, 7, 3), 40);
    assert_int_equal(arc_w(g, 0, 3), 40);
    gp_graph_unref(g);
    gp_load_opts o = {.cost_rule = "bandwidth", .ref_bandwidth = 1e9};
    g = gp_load_graphml(p, &o, &err);
    assert_non_null(g);
    assert_int_equal(arc_w(g, 0, 1), 1); /* max(1, 0.1) */
    assert_int_equal(arc_w(g, 1, 7), 6); /* floor(6.45) */
    gp_graph_unref(g);
    assert_null(load(spec, "latency", &err));
    assert_non_null(strstr(err.msg, "unknown cost rule"));

    /* malformed: bad XML names its line; an edge to an undeclared node; a non-numeric id */
    p = write_tmp("bad1.graphml", GML_HEAD "    <node id=\"0\">\n      <data key=\"d1\">x</dta>\n"
                                           "    </node>\n  </graph>\n</graphml>\n");
    assert_null(gp_load_graphml(p, NULL, &err));
    assert_int_equal(err.code, GP_EPARSE);
    assert_non_null(strstr(err.msg, "bad1.graphml:11:"));
    p = write_tmp("bad2.graphml", GML_HEAD "    <node id=\"0\"/>\n    <node id=\"1\"/>\n"
                                           "    <edge source=\"0\" target=\"1\"/>\n"
                                           "    <edge source=\"1\" target=\"5\"/>\n"
                                           "  </graph>\n</graphml>\n");
    assert_null(gp_load_graphml(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad2.graphml:13: edge names node 5"));
    p = write_tmp("bad3.graphml", GML_HEAD "    <node id=\"0\"/>\n    <node id=\"n1\"/>\n"
                                           "  </graph>\n</graphml>\n");
    assert_null(gp_load_graphml(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad3.graphml:11: node id is not an integer"));
    p = write_tmp("bad5.graphml", GML_HEAD "    <node id=\"0\"/>\n    <node id=\"1\"/>\n"
                                           "    <node id=\"0\"/>\n  </graph>\n</graphml>\n");
    assert_null(gp_load_graphml(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad5.graphml:12: node id 0 declared twice"));
    p = write_tmp("bad4.graphml", "<?xml version=\"1.0\"?>\n<other/>\n");
    assert_null(gp_load_graphml(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad4.graphml:2: root element"));
    assert_null(gp_load_graphml("/nonexistent/x.graphml", NULL, &err));
    assert_int_equal(err.code, GP_EIO);
}

#define SND_HEAD "?SNDlib native format; type: network; version: 1.0\n# network t\n\n"

static void test_load_sndlib(void **state) {
    (void)state;
    gp_err err;
    const char *p = write_tmp("t.txt", SND_HEAD
                              "META (\n  unit = GBITPERSEC\n)\n\nNODES (\n  A ( 10.0 50.0 )\n"
                              "  B ( 11.0 51.0 )\n  C ( 12.0 52.0 )\n)\n\n# links\nLINKS (\n"
                              "  L1 ( A B ) 10.00 0.00 2.50 0.00 ( 40.00 100.00 )\n"
                              "  L2 ( B C ) 0.00 0.00 1.25 0.00 ( 2.50 1.0 25.0 2.0 )\n"
                              "  L3 ( A C ) 0.00 0.00 7.00 0.00 ( )\n)\n\n"
                              "DEMANDS (\n  D1 ( A C ) 1 10.00 UNLIMITED\n)\n\n"
                              "ADMISSIBLE_PATHS (\n  D1 (\n    P1 ( L1 L2 )\n  )\n)\n");
    char spec[600];
    snprintf(spec, sizeof spec, "sndlib:%s", p);
    gp_graph *g = load(spec, NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(g->n, 3);
    assert_int_equal(g->m, 6);
    assert_string_equal(gp_graph_name(g, 2), "C");
    assert_non_null(g->lon);
    assert_int_equal(arc_w(g, 0, 2), 1);
    gp_graph_unref(g);
    g = load(spec, "bandwidth", &err);
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(arc_w(g, 0, 1), 10); /* pre-installed 10 G */
    assert_int_equal(arc_w(g, 2, 1), 4);  /* largest module 25 G */
    assert_int_equal(arc_w(g, 0, 2), 4);  /* no capacity: median of {10, 4} (lower) */
    gp_graph_unref(g);
    g = load(spec, "routing", &err);
    if (!g) fail_msg("%s", err.msg);
    gp_rt *t = tables(g, 0);
    expect(t, 0, 2, 3750, H(1)); /* 2.5 + 1.25 at scale 1000 */
    gp_rt_free(t);
    gp_graph_unref(g);

    p = write_tmp("bad.txt", SND_HEAD "NODES (\n  A ( 1 2 )\n  B ( 1 2 )\n)\nLINKS (\n"
                                      "  L1 ( A B ) 0 0 0 0 ( )\n  L2 ( A Z ) 0 0 0 0 ( )\n)\n");
    assert_null(gp_load_sndlib(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad.txt:10: the link's target node is not declared in NODES"));
    p = write_tmp("bad2.txt", SND_HEAD "NODES (\n  A ( 1 )\n)\n");
    assert_null(gp_load_sndlib(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad2.txt:5: node line"));
    p = write_tmp("bad3.txt", SND_HEAD "NODES (\n  A ( 1 2 )\n");
    assert_null(gp_load_sndlib(p, NULL, &err));
    assert_non_null(strstr(err.msg, "not closed"));
    p = write_tmp("bad4.txt",
                  SND_HEAD "NODES (\n  A ( 1 2 )\n)\nLINKS (\n  L1 ( A A ) 0 0 x 0 ( )\n)\n");
    assert_null(gp_load_sndlib(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad4.txt:8: link line"));
}

static void test_load_rocketfuel(void **state) {
    (void)state;
    gp_err err;
    const char *p = write_tmp("weights.intra", "Zurich,+Switzerland9 Aachen,+Germany3 2\n"
                                               "Aachen,+Germany3 Zurich,+Switzerland9 2\n"
                                               "Aachen,+Germany3 Bonn,+Germany1 1.5\n"
                                               "Bonn,+Germany1 Aachen,+Germany3 1.5\n"
                                               "Bonn,+Germany1 Zurich,+Switzerland9 3.5\n"
                                               "Zurich,+Switzerland9 Bonn,+Germany1 3.5\n");
    gp_graph *g = load(p, NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(g->n, 3);
    assert_string_equal(gp_graph_name(g, 0), "Aachen,+Germany3");
    assert_string_equal(gp_graph_name(g, 2), "Zurich,+Switzerland9");
    assert_true(g->scale == 1000.0);
    gp_rt *t = tables(g, 0);
    expect(t, 1, 2, 3500, H(0, 2)); /* Bonn->Zurich: 3.5 direct = 1.5 + 2 via Aachen */
    assert_true(gp_graph_cost(g, gp_rt_dist(t, 1, 2)) == 3.5);
    gp_rt_free(t);
    gp_graph_unref(g);
    g = load(p, "hops", &err);
    assert_non_null(g);
    assert_true(g->scale == 1.0);
    assert_int_equal(arc_w(g, 1, 2), 1);
    gp_graph_unref(g);
    assert_null(load(p, "bandwidth", &err));
    assert_non_null(strstr(err.msg, "unknown cost rule 'bandwidth'"));
    p = write_tmp("bad.intra", "a b 1\nb a 1\nb c\n");
    assert_null(gp_load_rocketfuel(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad.intra:3: expected"));
    p = write_tmp("bad2.intra", "a b 1\nb a -4\n");
    assert_null(gp_load_rocketfuel(p, NULL, &err));
    assert_non_null(strstr(err.msg, "bad2.intra:2:"));
}

static int loader_setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gp_netops_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}
static int loader_teardown(void **state) {
    (void)state;
    const char *names[] = {"t.graphml",    "bad1.graphml", "bad2.graphml", "bad3.graphml",
                           "bad4.graphml", "bad5.graphml", "t.txt",        "bad.txt",
                           "bad2.txt",     "bad3.txt",     "bad4.txt",     "weights.intra",
                           "bad.intra",    "bad2.intra"};
    char path[600];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_square_tables),
        cmocka_unit_test(test_ecmp_cap),
        cmocka_unit_test(test_what_if_square),
        cmocka_unit_test(test_change_road_graph),
        cmocka_unit_test(test_incremental_random),
        cmocka_unit_test(test_jobs),
        cmocka_unit_test_setup_teardown(test_load_graphml, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(test_load_sndlib, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(test_load_rocketfuel, loader_setup, loader_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
