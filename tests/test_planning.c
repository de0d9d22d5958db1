/* test_planning.c - engine/planning.h: ECMP link loads on hand-drawn networks with literal
 * expectations (a square splitting 50/50, a link whose failure overloads another: worst
 * utilization and link literal, unrouted demands, parallel links' capacities), and exhaustive
 * failure analysis (every link, every router, link pairs) equal under the incremental and the full
 * strategy (and the gpu one where a device is present: the literal square) and to a brute-force reference (each failed network built with gp_graph_change_links,
 * its routing tables and loads computed from scratch) on random graphs with random demands.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/planning.h"
#include "engine/progress.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "tests/netops_test.h"

typedef struct arc {
    int64_t u, v;
    uint32_t w;
    double cap;
} arc;

/* Undirected graph with ids 1..n; capacities (both directions) from a[i].cap when > 0. */
static gp_graph *build(uint32_t n, const arc *a, size_t na) {
    gp_err err;
    gp_builder *b = routers_builder(n);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(gp_builder_add_arc(b, a[i].u, a[i].v, a[i].w, &err), GP_OK);
        assert_int_equal(gp_builder_add_arc(b, a[i].v, a[i].u, a[i].w, &err), GP_OK);
    }
    gp_graph *g = routers_finish(b, 0);
    int any = 0;
    for (size_t i = 0; i < na; i++) any |= a[i].cap > 0;
    if (any) {
        g->arc_cap = calloc(g->m, sizeof *g->arc_cap);
        for (size_t i = 0; i < na; i++)
            for (int d = 0; d < 2; d++) {
                uint32_t u = gp_graph_index(g, d ? a[i].v : a[i].u),
                         v = gp_graph_index(g, d ? a[i].u : a[i].v);
                for (uint32_t k = g->row[u]; k < g->row[u + 1]; k++)
                    if (g->col[k] == v) g->arc_cap[k] = a[i].cap;
            }
    }
    return g;
}

static gp_rt *tables(gp_graph *g) {
    gp_rt *t = NULL;
    gp_err err;
    if (gp_rt_build(E, g, 0, 2, 0, &t, &err) != GP_OK) fail_msg("build: %s", err.msg);
    return t;
}

/* Demands between ext ids. */
static gp_demands *demands(const gp_graph *g, const int64_t (*rows)[2], const double *vol,
                           size_t k) {
    uint32_t *s = malloc((k + 1) * sizeof *s), *d = malloc((k + 1) * sizeof *d);
    for (size_t i = 0; i < k; i++) {
        s[i] = gp_graph_index(g, rows[i][0]);
        d[i] = gp_graph_index(g, rows[i][1]);
    }
    gp_demands *dm = NULL;
    gp_err err;
    assert_int_equal(gp_demands_build(g->n, s, d, vol, k, &dm, &err), GP_OK);
    free(s);
    free(d);
    return dm;
}

static double load_of(const gp_rt *t, const double *load, int64_t u, int64_t v) {
    uint32_t l = gp_plan_link_find(t, gp_graph_index(t->g, u), gp_graph_index(t->g, v));
    assert_int_not_equal(l, GP_NONE);
    return load[l];
}

/* r's listed pairs are want[0 .. n) ({router, destination, disconnected} by external id) and
 * truncated as said. */
static void expect_pairs(const gp_graph *g, const gp_scenario_result *r, const int64_t (*want)[3],
                         uint32_t n, int truncated) {
    assert_int_equal(r->npairs, n);
    assert_int_equal(r->pairs_truncated, truncated);
    for (uint32_t i = 0; i < n; i++) {
        if (r->pairs[i].router != gp_graph_index(g, want[i][0]) ||
            r->pairs[i].dst != gp_graph_index(g, want[i][1]) ||
            r->pairs[i].disconnected != (uint32_t)want[i][2])
            fail_msg("pair %u: (%u, %u, %u), want (%lld, %lld, %lld) by id", i, r->pairs[i].router,
                     r->pairs[i].dst, r->pairs[i].disconnected, (long long)want[i][0],
                     (long long)want[i][1], (long long)want[i][2]);
    }
}

/* Square 1-2-3-4-1, cost 1 each: 1 -> 3 splits over 2 and 4. */
static void test_square_ecmp(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1, 10}, {2, 3, 1, 10}, {3, 4, 1, 8}, {4, 1, 1, 10}};
    gp_graph *g = build(4, a, 4);
    gp_rt *t = tables(g);
    int64_t rows[][2] = {{1, 3}, {2, 2}, {2, 4}};
    double vol[] = {10, 7, 6};
    gp_demands *d = demands(g, rows, vol, 3);
    uint32_t L = gp_plan_links(t);
    assert_int_equal(L, 8);
    double *load = calloc(L, sizeof *load), unr = -1;
    gp_err err;
    assert_int_equal(gp_plan_load(t, d, 2, load, NULL, &unr, &err), GP_OK);
    assert_true(load_of(t, load, 1, 2) == 5);
    assert_true(load_of(t, load, 2, 3) == 5 + 3 && load_of(t, load, 4, 3) == 5);
    assert_true(load_of(t, load, 2, 1) == 3 && load_of(t, load, 1, 4) == 5 + 3);
    assert_true(load_of(t, load, 3, 4) == 3);
    assert_true(unr == 0);
    double cap[8];
    gp_plan_link_caps(t, cap);
    assert_true(cap[gp_plan_link_find(t, 2, 3)] == 8); /* link 3-4 (internal 2 -> 3) */

    /* every single link: failing 1-2 sends all of 1 -> 3 over 1 -> 4 -> 3 (capacity 8): 10 + 0 */
    gp_fail sc[4];
    uint32_t links[8], k = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t k0 = k;
        gp_plan_fail_link(t, gp_graph_index(g, a[i].u), gp_graph_index(g, a[i].v), links, &k);
        sc[i] = (gp_fail){.links = links + k0, .nlinks = k - k0};
    }
    gp_scenario_result res[4];
    for (int strat = GP_PLAN_INCREMENTAL; strat <= GP_PLAN_GPU; strat++) {
        gp_plan_stats st;
        assert_int_equal(gp_plan_strategy_parse(gp_plan_strategy_name(strat)), strat);
        int rc = gp_plan_failures(E, t, d, cap, sc, 4, strat, 2, res, NULL, &st, &err);
        if (strat == GP_PLAN_GPU && rc == GP_EUNSUPPORTED) {
            print_message("the gpu strategy skipped: %s\n", err.msg);
            continue;
        }
        assert_int_equal(rc, GP_OK);
        assert_int_equal(st.strategy, strat);
        /* 1-2 down touches every destination's DAG: 1 -> 2, 2 -> 1, 1 -> 3 and 2 -> 4 cross it */
        uint8_t dead[4] = {0};
        uint32_t touched = 0;
        for (uint32_t v = 0; v < 4; v++)
            touched += (uint32_t)gp_plan_touches(t, &sc[0], v, dead, NULL);
        assert_int_equal(touched, 4);
        assert_int_equal(res[0].affected, touched);
        /* scenario 0: 1-2 down. 1 -> 3: 10 over 1-4-3 (4 -> 3: 10 / 8); 2 -> 4 (6): 2-3-4 */
        assert_true(fabs(res[0].worst_utilization - 10.0 / 8) < 1e-12);
        assert_int_equal(gp_plan_link_tail(t, res[0].worst_link), gp_graph_index(g, 4));
        assert_int_equal(t->nb[res[0].worst_link], gp_graph_index(g, 3));
        assert_true(res[0].worst_load == 10);
        assert_true(res[0].unrouted_volume == 0);
        assert_int_equal(res[0].disconnected_pairs, 0);
        /* next hops that change: 1->2 ({2}->{4}), 1->3 ({2,4}->{4}), 2->1 ({1}->{3}),
         * 2->4 ({1,3}->{3}), 3->1 ({2,4}->{4}), 4->2 ({1,3}->{3}) */
        assert_int_equal(res[0].changed_pairs, 6);
        /* the same pairs listed (by destination, then router), and cut at 4 */
        static const int64_t all[][3] = {{2, 1, 0}, {3, 1, 0}, {1, 2, 0},
                                         {4, 2, 0}, {1, 3, 0}, {2, 4, 0}};
        gp_plan_opts o = {.list_max = 16};
        gp_scenario_result lr[4];
        assert_int_equal(
            gp_plan_failures_opts(E, t, d, cap, sc, 4, strat, 2, &o, lr, NULL, NULL, &err), GP_OK);
        expect_pairs(g, &lr[0], all, 6, 0);
        assert_int_equal(lr[0].changed_pairs, 6);
        gp_plan_results_free(lr, 4);
        o.list_max = 4;
        assert_int_equal(
            gp_plan_failures_opts(E, t, d, cap, sc, 4, strat, 2, &o, lr, NULL, NULL, &err), GP_OK);
        expect_pairs(g, &lr[0], all, 4, 1);
        assert_int_equal(lr[0].changed_pairs, 6);
        gp_plan_results_free(lr, 4);
        /* scenario 2: 3-4 down: 1 -> 3 over 1-2-3 (10/10), 2 -> 4 over 2-1-4 (6/10) */
        assert_true(fabs(res[2].worst_utilization - 1.0) < 1e-12);
        assert_true(fabs(load_of(t, load, 1, 2) - 5) < 1e-12); /* base untouched */
    }
    /* router 4 fails: 2 -> 4 is unrouted (6) */
    uint32_t r4 = gp_graph_index(g, 4);
    gp_fail fr = {.routers = &r4, .nrouters = 1};
    gp_scenario_result rr;
    assert_int_equal(gp_plan_failures(E, t, d, cap, &fr, 1, GP_PLAN_AUTO, 1, &rr, NULL, NULL, &err),
                     GP_OK);
    /* listed: the 6 disconnected pairs among the changed ones, (4, x) and (x, 4) */
    gp_plan_opts o = {.list_max = 100};
    assert_int_equal(gp_plan_failures_opts(E, t, d, cap, &fr, 1, GP_PLAN_INCREMENTAL, 1, &o, &rr,
                                           NULL, NULL, &err),
                     GP_OK);
    static const int64_t cut[][3] = {{4, 1, 1}, {4, 2, 1}, {4, 3, 1},
                                     {1, 4, 1}, {2, 4, 1}, {3, 4, 1}};
    uint32_t nd = 0;
    for (uint32_t i = 0; i < rr.npairs; i++) {
        const gp_plan_pair *p = &rr.pairs[i];
        if (!p->disconnected) continue;
        assert_true(nd < 6);
        assert_int_equal(p->router, gp_graph_index(g, cut[nd][0]));
        assert_int_equal(p->dst, gp_graph_index(g, cut[nd][1]));
        nd++;
    }
    assert_int_equal(nd, 6);
    assert_int_equal(rr.npairs, rr.changed_pairs);
    assert_false(rr.pairs_truncated);
    gp_plan_results_free(&rr, 1);
    assert_true(rr.unrouted_volume == 6);
    assert_int_equal(rr.disconnected_pairs, 6);            /* (4, x) x3 and (x, 4) x3 */
    assert_true(fabs(rr.worst_utilization - 1.0) < 1e-12); /* 1 -> 3 all over 1-2, 2-3 */
    /* cancelled (a job's DELETE) before the scenarios: GP_ECANCELLED from every strategy, the
     * progress not past the base loads; the same call without it completes */
    for (int strat = GP_PLAN_AUTO; strat <= GP_PLAN_GPU; strat++) {
        gp_progress p;
        gp_progress_init(&p, "test");
        gp_progress_cancel(&p);
        gp_progress_set(&p);
        gp_scenario_result rc4[4] = {0};
        int rc = gp_plan_failures(E, t, d, cap, sc, 4, strat, 2, rc4, NULL, NULL, &err);
        gp_progress_set(NULL);
        gp_plan_results_free(rc4, 4);
        if (strat == GP_PLAN_GPU && rc == GP_EUNSUPPORTED) continue;
        assert_int_equal(rc, GP_ECANCELLED);
        assert_string_equal(err.msg, "failure analysis cancelled");
        assert_true(atomic_load(&p.done) <= 1);
    }
    free(load);
    gp_demands_free(d);
    gp_rt_free(t);
    gp_graph_unref(g);
}

/* Unreachable demands and duplicate rows adding up. */
static void test_unrouted(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1, 0}, {3, 4, 2, 0}};
    gp_graph *g = build(4, a, 2);
    gp_rt *t = tables(g);
    int64_t rows[][2] = {{1, 2}, {1, 2}, {1, 3}, {4, 3}};
    double vol[] = {1, 2, 5, 4};
    gp_demands *d = demands(g, rows, vol, 4);
    assert_int_equal(d->count, 3);
    double load[4], unr;
    uint8_t flags[3];
    gp_err err;
    assert_int_equal(gp_plan_load(t, d, 0, load, flags, &unr, &err), GP_OK);
    assert_true(unr == 5);
    assert_true(load_of(t, load, 1, 2) == 3 && load_of(t, load, 4, 3) == 4);
    assert_true(load_of(t, load, 2, 1) == 0);
    gp_scenario_result r;
    gp_plan_worst(t, load, NULL, &r);
    assert_true(r.worst_utilization == -1 && r.worst_load == 4); /* no capacity: most loaded */
    gp_demands_free(d);
    gp_rt_free(t);
    gp_graph_unref(g);
}

static uint64_t rng(uint64_t *s) { return gp_splitmix64(s); }

/* The reference: the failed network built from scratch, its tables and loads. */
static void brute(const gp_graph *g, const gp_rt *t, const gp_demands *d, const double *cap,
                  const int64_t (*fl)[2], int nfl, const int64_t *fr, int nfr,
                  gp_scenario_result *out) {
    gp_link_change ch[4];
    for (int i = 0; i < nfl; i++) ch[i] = (gp_link_change){fl[i][0], fl[i][1], 1, 0};
    gp_graph *g2 = NULL;
    gp_err err;
    assert_int_equal(gp_graph_change_links(g, ch, (size_t)nfl, fr, (size_t)nfr, &g2, &err), GP_OK);
    gp_rt *t2 = tables(g2);
    uint32_t L2 = gp_plan_links(t2), L = gp_plan_links(t);
    double *l2 = calloc(L2 + 1, sizeof *l2), *l1 = calloc(L + 1, sizeof *l1), unr;
    assert_int_equal(gp_plan_load(t2, d, 1, l2, NULL, &unr, &err), GP_OK);
    for (uint32_t l = 0; l < L2; l++) { /* onto t's link numbering */
        uint32_t u = gp_plan_link_tail(t2, l);
        l1[gp_plan_link_find(t, u, t2->nb[l])] = l2[l];
    }
    gp_plan_worst(t, l1, cap, out);
    out->unrouted_volume = unr;
    out->changed_pairs = out->disconnected_pairs = 0;
    uint32_t h1[256], h2[256];
    for (uint32_t i = 0; i < t->n; i++)
        for (uint32_t j = 0; j < t->n; j++) {
            if (i == j) continue;
            if (gp_rt_dist(t, i, j) != GP_INF && gp_rt_dist(t2, i, j) == GP_INF)
                out->disconnected_pairs++;
            uint32_t a = gp_rt_next_hops(t, i, j, h1), b = gp_rt_next_hops(t2, i, j, h2);
            if (a != b || memcmp(h1, h2, a * sizeof *h1)) out->changed_pairs++;
        }
    free(l1);
    free(l2);
    gp_rt_free(t2);
    gp_graph_unref(g2);
}

static void same(const gp_scenario_result *a, const gp_scenario_result *b, const char *what) {
    if (a->changed_pairs != b->changed_pairs || a->disconnected_pairs != b->disconnected_pairs ||
        fabs(a->unrouted_volume - b->unrouted_volume) > 1e-6 ||
        fabs(a->worst_utilization - b->worst_utilization) > 1e-9 ||
        fabs(a->worst_load - b->worst_load) > 1e-6)
        fail_msg("%s: changed %llu/%llu disconnected %llu/%llu unrouted %g/%g worst %g/%g load "
                 "%g/%g",
                 what, (unsigned long long)a->changed_pairs, (unsigned long long)b->changed_pairs,
                 (unsigned long long)a->disconnected_pairs,
                 (unsigned long long)b->disconnected_pairs, a->unrouted_volume, b->unrouted_volume,
                 a->worst_utilization, b->worst_utilization, a->worst_load, b->worst_load);
}

/* Random graphs: every link, every router and some link pairs, incremental = full = brute force. */
static void test_random_failures(void **state) {
    (void)state;
    uint64_t seed = 7;
    for (int rep = 0; rep < 12; rep++) {
        uint32_t n = 6 + (uint32_t)(rng(&seed) % 14);
        arc a[80];
        size_t na = 0;
        for (uint32_t i = 2; i <= n; i++) /* a random tree plus chords: connected */
            a[na++] = (arc){1 + (int64_t)(rng(&seed) % (i - 1)), i, 1 + (uint32_t)(rng(&seed) % 3),
                            (double)(5 + rng(&seed) % 20)};
        for (uint32_t c = 0; c < n / 2 && na < 80; c++) {
            int64_t u = 1 + (int64_t)(rng(&seed) % n), v = 1 + (int64_t)(rng(&seed) % n);
            if (u != v)
                a[na++] =
                    (arc){u, v, 1 + (uint32_t)(rng(&seed) % 3), (double)(5 + rng(&seed) % 20)};
        }
        gp_graph *g = build(n, a, na);
        gp_rt *t = tables(g);
        int64_t rows[400][2];
        double vol[400];
        size_t k = 0;
        for (uint32_t i = 1; i <= n; i++)
            for (uint32_t j = 1; j <= n; j++)
                if (rng(&seed) % 3)
                    rows[k][0] = i, rows[k][1] = j, vol[k++] = (double)(rng(&seed) % 9);
        gp_demands *d = demands(g, (const int64_t(*)[2])rows, vol, k);
        uint32_t L = gp_plan_links(t);
        double *cap = malloc(L * sizeof *cap);
        gp_plan_link_caps(t, cap);
        /* scenarios: each link (by its pair), each router, 5 link pairs */
        size_t ns = 0;
        gp_fail sc[120];
        int64_t pairs[120][2][2];
        int npair[120], isr[120];
        uint32_t lk[120][4], rt[120];
        for (size_t i = 0; i < na; i++) {
            uint32_t kk = 0;
            gp_plan_fail_link(t, gp_graph_index(g, a[i].u), gp_graph_index(g, a[i].v), lk[ns], &kk);
            pairs[ns][0][0] = a[i].u, pairs[ns][0][1] = a[i].v, npair[ns] = 1, isr[ns] = 0;
            sc[ns] = (gp_fail){.links = lk[ns], .nlinks = kk};
            ns++;
        }
        for (uint32_t r = 0; r < n; r++) {
            rt[ns] = r;
            isr[ns] = 1, npair[ns] = 0;
            sc[ns] = (gp_fail){.routers = &rt[ns], .nrouters = 1};
            ns++;
        }
        for (int p = 0; p < 5; p++) {
            size_t x = rng(&seed) % na, y = rng(&seed) % na;
            if (x == y || (a[x].u == a[y].u && a[x].v == a[y].v)) continue;
            uint32_t kk = 0;
            gp_plan_fail_link(t, gp_graph_index(g, a[x].u), gp_graph_index(g, a[x].v), lk[ns], &kk);
            gp_plan_fail_link(t, gp_graph_index(g, a[y].u), gp_graph_index(g, a[y].v), lk[ns], &kk);
            pairs[ns][0][0] = a[x].u, pairs[ns][0][1] = a[x].v;
            pairs[ns][1][0] = a[y].u, pairs[ns][1][1] = a[y].v;
            npair[ns] = 2, isr[ns] = 0;
            sc[ns] = (gp_fail){.links = lk[ns], .nlinks = kk};
            ns++;
        }
        gp_scenario_result *ri = calloc(ns, sizeof *ri), *rf = calloc(ns, sizeof *rf);
        gp_err err;
        assert_int_equal(
            gp_plan_failures(E, t, d, cap, sc, ns, GP_PLAN_INCREMENTAL, 3, ri, NULL, NULL, &err),
            GP_OK);
        gp_plan_opts o = {.list_max = 1 + (uint32_t)(rng(&seed) % 12)}; /* some cut, some not */
        assert_int_equal(
            gp_plan_failures_opts(E, t, d, cap, sc, ns, GP_PLAN_FULL, 2, &o, rf, NULL, NULL, &err),
            GP_OK);
        gp_scenario_result *rl = calloc(ns, sizeof *rl);
        assert_int_equal(gp_plan_failures_opts(E, t, d, cap, sc, ns, GP_PLAN_INCREMENTAL, 3, &o, rl,
                                               NULL, NULL, &err),
                         GP_OK);
        for (size_t s = 0; s < ns; s++) {
            uint64_t disc = 0;
            assert_int_equal(rl[s].npairs, rf[s].npairs);
            assert_int_equal(rl[s].pairs_truncated, rl[s].changed_pairs > o.list_max);
            assert_int_equal(rl[s].pairs_truncated, rf[s].pairs_truncated);
            if (rl[s].npairs)
                assert_memory_equal(rl[s].pairs, rf[s].pairs, rl[s].npairs * sizeof *rl[s].pairs);
            for (uint32_t i = 0; i < rl[s].npairs; i++) disc += rl[s].pairs[i].disconnected;
            if (!rl[s].pairs_truncated) assert_int_equal(disc, rl[s].disconnected_pairs);
            /* the CPU lister of the gpu strategy (past list_max) gives the same */
            gp_scenario_result one = {0};
            assert_int_equal(gp_plan_list_pairs(t, &sc[s], o.list_max, &one), 0);
            assert_int_equal(one.npairs, rl[s].npairs);
            if (one.npairs)
                assert_memory_equal(one.pairs, rl[s].pairs, one.npairs * sizeof *one.pairs);
            gp_plan_results_free(&one, 1);
        }
        gp_plan_results_free(rl, ns);
        gp_plan_results_free(rf, ns);
        free(rl);
        for (size_t s = 0; s < ns; s++) {
            char what[64];
            snprintf(what, sizeof what, "rep %d scenario %zu", rep, s);
            same(&ri[s], &rf[s], what);
            gp_scenario_result rb;
            int64_t fr = (int64_t)rt[s] + 1;
            brute(g, t, d, cap, (const int64_t(*)[2])pairs[s], isr[s] ? 0 : npair[s],
                  isr[s] ? &fr : NULL, isr[s], &rb);
            same(&ri[s], &rb, what);
        }
        free(ri);
        free(rf);
        free(cap);
        gp_demands_free(d);
        gp_rt_free(t);
        gp_graph_unref(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_square_ecmp),
        cmocka_unit_test(test_unrouted),
        cmocka_unit_test(test_random_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
