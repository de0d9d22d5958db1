/* test_cch.c - customizable contraction hierarchies on the CPU (engine/cch*.c) and in the engine.
 *
 * Against the CPU backend's Dijkstra: p2p distances and paths (every consecutive pair an arc, the
 * arcs' weights summing to the distance), PHAST one-to-all, bucket tables; on random graphs (zero
 * weights, parallel arcs, self-loops, unreachable parts, one and two nodes), generated road graphs,
 * and DIMACS NY and BAY and the Liechtenstein OSM extract when $GPATH_DATA has them (100-200 random
 * queries, then again after 1% of the arcs changed cost). The multi-threaded
 * customization equals the serial one; re-customization after random cost changes (same topology,
 * taken from the cache) and after links going down (a subgraph) stays exact; the serialised order
 * (a snapshot section) round-trips and is rejected for another graph or when damaged; a shortcut overflowing uint32 is refused rather
 * than answered wrongly; the engine routes AUTO through the CCH only per its policy (off, auto with
 * a node threshold, on). Queries between sets of ends with start / end costs (gp_cch_p2p_multi, what
 * snapped positions use) equal the cheapest pair by Dijkstra, and pick the first such pair in
 * (source, target) order; routes between snapped positions on the OSM test graphs (turn
 * restrictions, one-way streets; Monaco too when $GPATH_DATA has it) through the engine's CCH are
 * those of a loop over the entry / exit pairs with one CCH query each (the engine's way before
 * gp_cch_p2p_multi), with Dijkstra's distances (the pruned query arcs of perfect customization
 * on). Perfect customization: its weights are the exact distances between the ends of the CCH
 * edges (Dijkstra; every edge of the small graphs, samples of the others), the threaded and the
 * background pass keep exactly the arcs whose basic weight is exact, a new customization drops
 * them, and with them every query type above equals Dijkstra (random, gen: and DIMACS graphs,
 * before and after cost changes); the engine's cch_perfect modes. The GPU sweep plan (engine/cch_plan.h): its
 * invariants, and the plan run on the CPU equal to PHAST, for several cuts, on random, road-like
 * and the DIMACS graphs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>

#include "engine/cch.h"
#include "engine/cch_internal.h"  /* gp_cch_find_edge, GP_CCH_WIT_ORIG */
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "graph/turns.h"
#include "engine/cch_plan.h"
#include "engine/engine.h"
#include "engine/engine_lab.h"
#include "engine/snap.h"
#include "tests/real_graphs.h"
#include "storage/source.h"

static gp_backend *cpu;

static int setup(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    cpu = gp_cpu_backend_new(2, &err);
    gp_cch_set_max_tri_per_node(0); /* random graphs are no road networks: no size guard */
    /* every CCH of these tests on the parallel nested dissection with small leaves, so that the
     * graphs above 64 nodes are split by separators (test_order_nd checks the single call too) */
    gp_cch_set_order(GP_CCH_ORDER_ND, 64);
    return cpu ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    gp_backend_destroy(cpu);
    gp_cch_cache_clear();
    return 0;
}

static uint64_t rng_state = 0x5eed;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct arcs {
    int64_t *u, *v;
    uint32_t *w;
    size_t n;
} arcs;

static gp_graph *build(uint32_t n, const arcs *a, const unsigned char *skip) {
    gp_err err;
    gp_err_clear(&err);
    gp_builder *b = gp_builder_new(1.0);
    assert_non_null(b);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(gp_builder_add_node(b, i, 0, 0, 0, NULL, &err), GP_OK);
    for (size_t i = 0; i < a->n; i++)
        if (!skip || !skip[i])
            assert_int_equal(gp_builder_add_arc(b, a->u[i], a->v[i], a->w[i], &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "test", "test", 1, &err);
    if (!g) fail_msg("builder: %s", err.msg);
    return g;
}

/* Random arcs: sparse, clustered (most arcs to near ids, some far), zero weights, parallel arcs,
 * self-loops and one-way arcs; the top tenth of the ids has no arc into it from below. */
static arcs random_arcs(uint32_t n, uint32_t deg, uint32_t maxw) {
    arcs a;
    size_t m = (size_t)n * deg;
    a.u = malloc(m * sizeof *a.u);
    a.v = malloc(m * sizeof *a.v);
    a.w = malloc(m * sizeof *a.w);
    a.n = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t u = (uint32_t)(rnd() % n), v;
        if (rnd() % 8 == 0) v = (uint32_t)(rnd() % n);
        else v = (uint32_t)((u + 1 + rnd() % 5) % n);
        if (n > 20 && v >= n - n / 10 && u < n - n / 10) continue;
        a.u[a.n] = u;
        a.v[a.n] = v;
        a.w[a.n] = (uint32_t)(rnd() % (maxw + 1));
        a.n++;
    }
    return a;
}

static void arcs_free(arcs *a) {
    if (!a) return;
    free(a->u);
    free(a->v);
    free(a->w);
}

/* The cheapest arc u->v, UINT64_MAX when none. */
static uint64_t arc_w(const gp_graph *g, uint32_t u, uint32_t v) {
    uint64_t best = UINT64_MAX;
    for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
        if (g->col[a] == v && g->w[a] < best) best = g->w[a];
    return best;
}

static void check_path(const gp_graph *g, uint32_t s, uint32_t t, const gp_path *p) {
    if (p->dist == GP_INF) {
        assert_int_equal(p->len, 0);
        return;
    }
    assert_true(p->len >= 1);
    assert_int_equal(p->nodes[0], s);
    assert_int_equal(p->nodes[p->len - 1], t);
    uint64_t sum = 0;
    for (uint32_t i = 0; i + 1 < p->len; i++) {
        uint64_t w = arc_w(g, p->nodes[i], p->nodes[i + 1]);
        if (w == UINT64_MAX)
            fail_msg("path step %u->%u is not an arc", p->nodes[i], p->nodes[i + 1]);
        sum += w;
    }
    assert_int_equal(sum, p->dist);
}

/* gp_cch_p2p_multi on random sets of 1..GP_CCH_MAX_ENDS ends (repeats allowed) with random
 * offsets against the cheapest pair by Dijkstra (d: n*n distances, or NULL: one Dijkstra per
 * pair), the first such pair in (source, target) order. */
static void check_multi(const gp_graph *g, const gp_cch *c, int queries) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t n = g->n;
    for (int q = 0; q < queries; q++) {
        uint32_t ns = 1 + (uint32_t)(rnd() % GP_CCH_MAX_ENDS),
                 nd = 1 + (uint32_t)(rnd() % GP_CCH_MAX_ENDS);
        uint32_t src[GP_CCH_MAX_ENDS], dst[GP_CCH_MAX_ENDS];
        uint64_t so[GP_CCH_MAX_ENDS], dof[GP_CCH_MAX_ENDS];
        for (uint32_t i = 0; i < ns; i++) {
            src[i] = i && rnd() % 4 == 0 ? src[i - 1] : (uint32_t)(rnd() % n);
            so[i] = rnd() % 3 == 0 ? 0 : rnd() % 50;
        }
        for (uint32_t j = 0; j < nd; j++) {
            dst[j] = j && rnd() % 4 == 0 ? dst[j - 1] : (uint32_t)(rnd() % n);
            dof[j] = rnd() % 3 == 0 ? 0 : rnd() % 50;
        }
        if (rnd() % 5 == 0) dst[0] = src[0]; /* an end on both sides */
        uint64_t best = GP_INF;
        uint32_t bi = GP_NONE, bj = GP_NONE;
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t j = 0; j < nd; j++) {
                gp_path a;
                assert_int_equal(cpu->ops->p2p(cpu, g, src[i], dst[j], GP_P2P_DIJKSTRA, &a, &err),
                                 GP_OK);
                if (a.dist != GP_INF && so[i] + a.dist + dof[j] < best)
                    best = so[i] + a.dist + dof[j], bi = i, bj = j;
                gp_path_free(&a);
            }
        gp_path p;
        uint32_t si = 7, di = 7;
        assert_int_equal(gp_cch_p2p_multi(c, src, so, ns, dst, dof, nd, &p, &si, &di, &err), GP_OK);
        if (p.dist != best)
            fail_msg("multi %ux%u: dijkstra %llu cch %llu", ns, nd, (unsigned long long)best,
                     (unsigned long long)p.dist);
        assert_int_equal(si, bi);
        assert_int_equal(di, bj);
        if (best != GP_INF) {
            p.dist -= so[si] + dof[di];
            check_path(g, src[si], dst[di], &p);
        } else {
            assert_int_equal(p.len, 0);
        }
        gp_path_free(&p);
    }
    uint32_t bad = n;
    gp_path p;
    assert_int_equal(gp_cch_p2p_multi(c, &bad, NULL, 1, &bad, NULL, 1, &p, NULL, NULL, &err),
                     GP_EINVAL);
    assert_int_equal(gp_cch_p2p_multi(c, &bad, NULL, 0, &bad, NULL, 1, &p, NULL, NULL, &err),
                     GP_EINVAL);
}

/* Every query type of c against Dijkstra on queries random pairs. */
static void check_queries(const gp_graph *g, const gp_cch *c, int queries) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t n = g->n;
    uint64_t *d1 = malloc((size_t)n * sizeof *d1), *d2 = malloc((size_t)n * sizeof *d2);
    uint32_t *pred = malloc((size_t)n * sizeof *pred);
    assert_non_null(d1);
    assert_non_null(d2);
    assert_non_null(pred);
    for (int q = 0; q < queries; q++) {
        uint32_t s = (uint32_t)(rnd() % n), t = (uint32_t)(rnd() % n);
        gp_path a, b;
        assert_int_equal(cpu->ops->p2p(cpu, g, s, t, GP_P2P_DIJKSTRA, &a, &err), GP_OK);
        assert_int_equal(gp_cch_p2p(c, s, t, &b, &err), GP_OK);
        if (a.dist != b.dist)
            fail_msg("p2p %u->%u: dijkstra %llu cch %llu", s, t, (unsigned long long)a.dist,
                     (unsigned long long)b.dist);
        check_path(g, s, t, &b);
        gp_path_free(&a);
        gp_path_free(&b);
    }
    check_multi(g, c, queries / 4 + 1);
    int sssp = queries < 5 ? queries : 5;
    for (int q = 0; q < sssp; q++) {
        uint32_t s = (uint32_t)(rnd() % n);
        assert_int_equal(cpu->ops->sssp(cpu, g, s, GP_INF, d1, NULL, &err), GP_OK);
        assert_int_equal(gp_cch_sssp(c, s, GP_INF, d2, &err), GP_OK);
        for (uint32_t v = 0; v < n; v++)
            if (d1[v] != d2[v])
                fail_msg("phast from %u: node %u dijkstra %llu cch %llu", s, v,
                         (unsigned long long)d1[v], (unsigned long long)d2[v]);
        assert_int_equal(gp_cch_pred(g, s, d2, pred, &err), GP_OK);
        for (uint32_t v = 0; v < n; v++) {
            if (v == s || d2[v] == GP_INF) {
                assert_int_equal(pred[v], GP_NONE);
                continue;
            }
            assert_true(pred[v] != GP_NONE);
            assert_int_equal(d2[pred[v]] + arc_w(g, pred[v], v), d2[v]);
        }
        /* a distance limit */
        uint64_t lim = d2[(s + 1) % n] == GP_INF ? 10 : d2[(s + 1) % n];
        assert_int_equal(gp_cch_sssp(c, s, lim, d2, &err), GP_OK);
        for (uint32_t v = 0; v < n; v++) assert_true(d2[v] == (d1[v] <= lim ? d1[v] : GP_INF));
    }
    uint32_t ns = n < 23 ? n : 23, nt = n < 31 ? n : 31;
    uint32_t src[23], dst[31];
    for (uint32_t i = 0; i < ns; i++) src[i] = (uint32_t)(rnd() % n);
    for (uint32_t i = 0; i < nt; i++) dst[i] = (uint32_t)(rnd() % n);
    if (nt > 2) dst[1] = dst[0]; /* a repeated target */
    uint64_t *o1 = malloc((size_t)ns * nt * sizeof *o1), *o2 = malloc((size_t)ns * nt * sizeof *o2);
    assert_int_equal(cpu->ops->table(cpu, g, src, ns, dst, nt, o1, &err), GP_OK);
    assert_int_equal(gp_cch_table(c, src, ns, dst, nt, 3, o2, &err), GP_OK);
    assert_memory_equal(o1, o2, (size_t)ns * nt * sizeof *o1);
    free(o1);
    free(o2);
    free(d1);
    free(d2);
    free(pred);
}

static void check_plans(const gp_graph *g, const gp_cch *c); /* the sweep plan (below) */

/* The distance u -> v by Dijkstra, as a CCH weight (GP_CCH_INF when none or past uint32). */
static uint32_t exact(const gp_graph *g, uint32_t u, uint32_t v) {
    gp_err err;
    gp_err_clear(&err);
    gp_path p;
    assert_int_equal(cpu->ops->p2p(cpu, g, u, v, GP_P2P_DIJKSTRA, &p, &err), GP_OK);
    uint64_t d = p.dist;
    gp_path_free(&p);
    return d >= GP_CCH_INF ? GP_CCH_INF : (uint32_t)d;
}

/* Perfect customization of c: the serial oracle's weights are the exact distances between the
 * ends of every CCH edge (sample 0) or of sample edges (half of them among the top 5% of ids, the
 * separators, where the pruning happens), both ways; the threaded pass (and the background one)
 * keeps exactly the arcs whose basic weight is finite and exact, with that weight and their edge
 * ids; a new customization drops them; then every query type, with the pruned arcs, against
 * Dijkstra. Returns the arcs pruned. */
static uint64_t check_perfect(const gp_graph *g, gp_cch *c, uint32_t sample, int queries,
                              int threads) {
    gp_err err;
    gp_err_clear(&err);
    const gp_cch_topo *t = c->topo;
    uint32_t m = t->m, n = t->n;
    uint32_t *pf = malloc(((size_t)m + 1) * 4), *pb = malloc(((size_t)m + 1) * 4);
    assert_non_null(pf);
    assert_non_null(pb);
    gp_cch_perfect_serial(t, c->fw, c->bw, pf, pb);
    uint32_t checks = sample && sample < m ? sample : m;
    for (uint32_t k = 0; k < checks && m; k++) {
        uint32_t e = checks == m ? k
                     : k % 2     ? (uint32_t)(rnd() % m)
                                 : m - 1 - (uint32_t)(rnd() % (m / 20 + 1));
        uint32_t u = t->order[t->up_tail[e]], v = t->order[t->up_head[e]];
        uint32_t du = exact(g, u, v), dv = exact(g, v, u);
        if (pf[e] != du || pb[e] != dv)
            fail_msg("perfect edge %u (%u, %u): up %u exact %u, down %u exact %u", e, u, v, pf[e],
                     du, pb[e], dv);
        assert_true(pf[e] <= c->fw[e] && pb[e] <= c->bw[e]);
    }
    assert_int_equal(gp_cch_perfect(c, threads, &err), GP_OK);
    assert_non_null(c->q);
    uint64_t pruned = 0;
    for (int d = 0; d < 2; d++) {
        const gp_cch_arcs *q = &c->q[d];
        const uint32_t *basic = d ? c->fw : c->bw, *perf = d ? pf : pb;
        uint32_t k = 0;
        assert_int_equal(q->first[0], 0);
        for (uint32_t x = 0; x < n; x++) {
            for (uint32_t e = t->up_first[x]; e < t->up_first[x + 1]; e++) {
                if (basic[e] == GP_CCH_INF || basic[e] != perf[e]) {
                    pruned += basic[e] != GP_CCH_INF;
                    continue;
                }
                assert_true(k < q->first[x + 1]);
                assert_int_equal(q->edge[k], e);
                assert_int_equal(q->head[k], t->up_head[e]);
                assert_int_equal(q->w[k], basic[e]);
                k++;
            }
            assert_int_equal(q->first[x + 1], k);
        }
    }
    /* the background pass builds the same arcs */
    gp_cch_arcs *sync = c->q;
    uint32_t kept[2] = {sync[0].first[n], sync[1].first[n]};
    uint32_t *edges = malloc(((size_t)kept[1] + 1) * 4);
    memcpy(edges, sync[1].edge, (size_t)kept[1] * 4);
    assert_int_equal(gp_cch_perfect_start(c, threads, &err), GP_OK);
    gp_cch_perfect_wait(c);
    assert_non_null(c->q);
    assert_int_equal(c->q[0].first[n], kept[0]);
    assert_int_equal(c->q[1].first[n], kept[1]);
    assert_memory_equal(c->q[1].edge, edges, (size_t)kept[1] * 4);
    /* a held pass (a version derived from c meanwhile: engine.h gp_engine_hold_background)
     * publishes nothing until every hold is let go, then the same arcs */
    gp_cch_perfect_hold(c, 1);
    gp_cch_perfect_hold(c, 1);
    assert_int_equal(gp_cch_perfect_start(c, threads, &err), GP_OK);
    assert_null(c->q);
    usleep(20000);
    assert_null(__atomic_load_n(&c->q, __ATOMIC_ACQUIRE));
    gp_cch_perfect_hold(c, 0);
    usleep(20000);
    assert_null(__atomic_load_n(&c->q, __ATOMIC_ACQUIRE));
    gp_cch_perfect_hold(c, 0);
    gp_cch_perfect_wait(c);
    assert_non_null(c->q);
    assert_int_equal(c->q[0].first[n], kept[0]);
    assert_int_equal(c->q[1].first[n], kept[1]);
    assert_memory_equal(c->q[1].edge, edges, (size_t)kept[1] * 4);
    free(edges);
    check_queries(g, c, queries);
    free(pf);
    free(pb);
    return pruned;
}

static void check_customize_threads(const gp_cch *c) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t m = c->topo->m;
    uint32_t *fw = malloc(((size_t)m + 1) * 4), *bw = malloc(((size_t)m + 1) * 4);
    uint32_t *fm = malloc(((size_t)m + 1) * 4), *bm = malloc(((size_t)m + 1) * 4);
    assert_int_equal(gp_cch_customize_serial(c->topo, c->ofw, c->obw, fw, bw, fm, bm, &err), GP_OK);
    assert_memory_equal(fw, c->fw, (size_t)m * 4);
    assert_memory_equal(bw, c->bw, (size_t)m * 4);
    assert_memory_equal(fm, c->fmid, (size_t)m * 4);
    assert_memory_equal(bm, c->bmid, (size_t)m * 4);
    free(fw);
    free(bw);
    free(fm);
    free(bm);
}

static void test_small_graphs(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    uint32_t sizes[] = {1, 2, 3, 7, 40, 150, 600, 2500};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        arcs a = random_arcs(sizes[i], 3, i % 2 ? 20 : 1000);
        gp_graph *g = build(sizes[i], &a, NULL);
        gp_cch *c = NULL;
        if (gp_cch_new(g, 3, &c, &err) != GP_OK) fail_msg("cch: %s", err.msg);
        check_customize_threads(c);
        check_queries(g, c, 60);
        check_perfect(g, c, 0, 60, 3);
        /* a new customization (CPU, or the GPU path's witnesses) drops the stale arcs */
        assert_int_equal(gp_cch_customize(c, 2, &err), GP_OK);
        assert_null(c->q);
        assert_int_equal(gp_cch_perfect(c, 1, &err), GP_OK);
        assert_non_null(c->q);
        gp_cch_witnesses(c);
        assert_null(c->q);
        /* a background pass stopped by a customization, or by the free below */
        assert_int_equal(gp_cch_perfect_start(c, 2, &err), GP_OK);
        assert_int_equal(gp_cch_customize(c, 2, &err), GP_OK);
        assert_null(c->q);
        assert_null(c->perfect_bg);
        if (i % 2) gp_cch_perfect_hold(c, 1); /* held: the free stops it all the same */
        assert_int_equal(gp_cch_perfect_start(c, 2, &err), GP_OK);
        gp_cch_free(c);
        gp_graph_unref(g);
        arcs_free(&a);
    }
}

/* New metrics on the same shape: the topology is reused (cache) and answers stay exact. */
static void test_recustomize(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    arcs a = random_arcs(3000, 3, 500);
    gp_graph *g = build(3000, &a, NULL);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 2, &c, &err), GP_OK);
    check_queries(g, c, 30);
    const void *freed_fw = NULL, *freed_wit = NULL; /* the arrays of the last freed version */
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < a.n; i++) /* change about 10% of the costs, some to zero */
            if (rnd() % 10 == 0) a.w[i] = (uint32_t)(rnd() % 3 ? rnd() % 2000 : 0);
        gp_graph *g2 = build(3000, &a, NULL);
        gp_cch *c2 = NULL;
        assert_int_equal(gp_cch_new(g2, 4, &c2, &err), GP_OK);
        assert_int_equal(c2->reused_topo, 1);
        assert_ptr_equal(c2->topo, c->topo);
        /* the topology's spare: the arrays of the version freed before, with its old values */
        if (freed_fw) {
            assert_ptr_equal(c2->fw, freed_fw);
            assert_ptr_equal(c2->wit, freed_wit);
        }
        check_customize_threads(c2);
        check_queries(g2, c2, 40);
        check_perfect(g2, c2, 300, 40, 4);
        freed_fw = c2->fw;
        freed_wit = c2->wit;
        gp_cch_free(c2);
        gp_graph_unref(g2);
    }
    /* links down: a subgraph of the same node set also reuses the topology */
    unsigned char *skip = calloc(a.n, 1);
    for (size_t i = 0; i < a.n; i++) skip[i] = rnd() % 20 == 0;
    gp_graph *g3 = build(3000, &a, skip);
    gp_cch *c3 = NULL;
    assert_int_equal(gp_cch_new(g3, 2, &c3, &err), GP_OK);
    assert_int_equal(c3->reused_topo, 1);
    assert_ptr_equal(c3->fw, freed_fw);
    check_queries(g3, c3, 40);
    gp_cch_free(c3);
    gp_graph_unref(g3);
    free(skip);
    gp_cch_free(c);
    gp_graph_unref(g);
    arcs_free(&a);
}

static void test_order_roundtrip(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    arcs a = random_arcs(800, 3, 100);
    gp_graph *g = build(800, &a, NULL);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 1, &c, &err), GP_OK);
    void *buf = NULL;
    uint64_t size = 0;
    assert_int_equal(gp_cch_order_encode(c->topo->rank, g, &buf, &size, &err), GP_OK);
    gp_cch_cache_clear();
    assert_int_equal(gp_cch_order_decode(g, buf, size, &err), GP_OK);
    gp_cch *c2 = NULL;
    assert_int_equal(gp_cch_new(g, 1, &c2, &err), GP_OK);
    assert_int_equal(c2->reused_topo, 1);
    assert_memory_equal(c2->topo->rank, c->topo->rank, (size_t)g->n * 4);
    assert_int_equal(c2->topo->m, c->topo->m);
    check_queries(g, c2, 20);
    /* another graph: rejected as stale; damaged records too */
    a.u[0] = (a.u[0] + 1) % 800;
    gp_graph *g2 = build(800, &a, NULL);
    assert_int_equal(gp_cch_order_decode(g2, buf, size, &err), GP_EPARSE);
    assert_int_equal(gp_cch_order_decode(g, buf, size - 4, &err), GP_EPARSE);
    assert_int_equal(gp_cch_order_decode(g, "not an order", 12, &err), GP_EPARSE);
    unsigned char *p = buf; /* node 0 gets node 1's rank: not a permutation */
    memcpy(p + 24, p + 28, 4);
    assert_int_equal(gp_cch_order_decode(g, buf, size, &err), GP_EINVAL);
    free(buf);
    gp_graph_unref(g2);
    gp_cch_free(c);
    gp_cch_free(c2);
    gp_graph_unref(g);
    arcs_free(&a);
}

/* A path whose shortcuts exceed uint32: refused (GP_ETOOBIG) or, where the order makes none,
 * answered exactly. */
static void test_overflow(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    arcs a;
    int64_t u[8], v[8];
    uint32_t w[8];
    a.u = u, a.v = v, a.w = w, a.n = 0;
    for (int i = 0; i < 4; i++) {
        u[a.n] = i, v[a.n] = i + 1, w[a.n++] = 3000000000u;
        u[a.n] = i + 1, v[a.n] = i, w[a.n++] = 7;
    }
    gp_graph *g = build(5, &a, NULL);
    gp_cch *c = NULL;
    int rc = gp_cch_new(g, 1, &c, &err);
    if (rc == GP_OK) {
        check_queries(g, c, 50);
        gp_cch_free(c);
    } else {
        assert_int_equal(rc, GP_ETOOBIG);
    }
    /* the engine then serves the graph without a CCH, exactly */
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_true(rc == GP_OK ? g->cch != NULL : g->cch == NULL);
    gp_path p;
    assert_int_equal(gp_engine_p2p(e, g, 0, 4, GP_P2P_AUTO, &p, &err), GP_OK);
    assert_int_equal(p.dist, 12000000000ull);
    gp_path_free(&p);
    gp_engine_free(e);
    gp_graph_unref(g);
}

static void test_road(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    for (int kind = 0; kind < 2; kind++) { /* road-like gen:N, and the grid-like grid:N */
        gp_graph *g = kind ? gp_generate_grid(20000, 3, &err) : gp_generate_road(30000, 3, &err);
        assert_non_null(g);
        gp_cch *c = NULL;
        assert_int_equal(gp_cch_new(g, 0, &c, &err), GP_OK);
        check_customize_threads(c);
        check_queries(g, c, 100);
        uint64_t pruned = check_perfect(g, c, 200, 100, 2);
        print_message("%s: perfect customization prunes %llu of %u arcs\n", kind ? "grid" : "gen",
                      (unsigned long long)pruned, 2 * c->topo->m);
        assert_true(pruned > 0);
        gp_cch_free(c);
        gp_graph_unref(g);
    }
}

/* The queries' AVX-512 relaxation (where this CPU has it) against the scalar one: the same
 * distances, paths and upward-search labels, over the basic and the perfect arcs; both checked
 * against Dijkstra. On a CPU without AVX-512 both runs take the scalar path. */
/* The queries' AVX-512 relaxation on (where the CPU has it) or off, through the lab knob. */
static void set_simd(int on) {
    gp_engine_lab lab;
    gp_engine_lab_get(&lab);
    lab.cch_simd = on;
    gp_engine_lab_set(&lab);
}

static void test_simd(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_generate_road(20000, 5, &err);
    assert_non_null(g);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 0, &c, &err), GP_OK);
    uint32_t n = g->n;
    uint32_t *r1 = malloc((size_t)n * 4), *r2 = malloc((size_t)n * 4);
    uint64_t *d1 = malloc((size_t)n * 8), *d2 = malloc((size_t)n * 8);
    assert_true(r1 && r2 && d1 && d2);
    for (int perfect = 0; perfect < 2; perfect++) {
        if (perfect) assert_int_equal(gp_cch_perfect(c, 2, &err), GP_OK);
        for (int on = 1; on >= 0; on--) {
            set_simd(on);
            check_queries(g, c, 40);
        }
        for (int q = 0; q < 200; q++) {
            uint32_t s = (uint32_t)(rnd() % n), t = (uint32_t)(rnd() % n);
            gp_path a, b;
            set_simd(1);
            assert_int_equal(gp_cch_p2p(c, s, t, &a, &err), GP_OK);
            int k1 = gp_cch_upward(c, s, q & 1, r1, d1);
            set_simd(0);
            assert_int_equal(gp_cch_p2p(c, s, t, &b, &err), GP_OK);
            int k2 = gp_cch_upward(c, s, q & 1, r2, d2);
            assert_int_equal(a.dist, b.dist);
            assert_int_equal(a.len, b.len);
            if (a.len) assert_memory_equal(a.nodes, b.nodes, (size_t)a.len * 4);
            assert_int_equal(k1, k2);
            assert_true(k1 >= 1);
            assert_memory_equal(r1, r2, (size_t)k1 * 4);
            assert_memory_equal(d1, d2, (size_t)k1 * 8);
            gp_path_free(&a);
            gp_path_free(&b);
        }
    }
    gp_engine_lab_set(NULL);
    free(r1);
    free(r2);
    free(d1);
    free(d2);
    gp_cch_free(c);
    gp_graph_unref(g);
}

/* The size guard: a 100,000-node grid would need ~1,100 triangles per node; it is refused and the
 * engine serves it without a CCH. */
static void test_guard(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_generate_grid(100000, 9, &err);
    assert_non_null(g);
    gp_cch_set_max_tri_per_node(GP_CCH_MAX_TRI_PER_NODE);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 0, &c, &err), GP_ETOOBIG);
    assert_null(c);
    assert_non_null(strstr(err.msg, "not road-like"));
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, GP_CCH_MAX_TRI_PER_NODE, &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_null(g->cch);
    gp_cch_set_max_tri_per_node(0);
    gp_path p, q;
    assert_int_equal(gp_engine_p2p(e, g, 3, 99999, GP_P2P_AUTO, &p, &err), GP_OK);
    assert_int_equal(gp_engine_p2p(e, g, 3, 99999, GP_P2P_DIJKSTRA, &q, &err), GP_OK);
    assert_int_equal(p.dist, q.dist);
    gp_path_free(&p);
    gp_path_free(&q);
    gp_engine_free(e);
    gp_graph_unref(g);
}

static void test_engine_policy(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "sometimes", 0, 0, &err), GP_EINVAL);
    arcs a = random_arcs(500, 3, 50);
    gp_graph *g1 = build(500, &a, NULL), *g2 = build(500, &a, NULL), *g3 = build(500, &a, NULL);
    assert_int_equal(gp_engine_set_cch(e, "auto", 501, 0, &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g1, &err), GP_OK);
    assert_null(g1->cch);
    assert_int_equal(gp_engine_set_cch(e, "auto", 500, 0, &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g2, &err), GP_OK);
    assert_non_null(g2->cch);
    assert_int_equal(gp_engine_set_cch(e, "off", 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g3, &err), GP_OK);
    assert_null(g3->cch);
    /* perfect customization: in the background by default (g2), before answering, or never */
    assert_int_equal(gp_engine_set_cch_perfect(e, "sometimes", &err), GP_EINVAL);
    gp_cch_perfect_wait(g2->cch);
    assert_non_null(((gp_cch *)g2->cch)->q);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    const char *pm[2] = {"on", "off"};
    for (int k = 0; k < 2; k++) {
        gp_graph *gk = build(500, &a, NULL);
        assert_int_equal(gp_engine_set_cch_perfect(e, pm[k], &err), GP_OK);
        assert_int_equal(gp_engine_attach(e, gk, &err), GP_OK);
        assert_non_null(gk->cch);
        assert_null(((gp_cch *)gk->cch)->perfect_bg);
        assert_true(k == 0 ? ((gp_cch *)gk->cch)->q != NULL : ((gp_cch *)gk->cch)->q == NULL);
        gp_graph_unref(gk);
    }
    assert_int_equal(gp_engine_set_cch_perfect(e, "auto", &err), GP_OK);
    /* engine answers through the CCH equal the Dijkstra family's */
    uint64_t *d1 = malloc(500 * sizeof *d1), *d2 = malloc(500 * sizeof *d2);
    uint32_t *p2 = malloc(500 * sizeof *p2);
    for (int q = 0; q < 50; q++) {
        uint32_t s = (uint32_t)(rnd() % 500), t = (uint32_t)(rnd() % 500);
        gp_path x, y;
        assert_int_equal(gp_engine_p2p(e, g2, s, t, GP_P2P_AUTO, &x, &err), GP_OK);
        assert_int_equal(gp_engine_p2p(e, g2, s, t, GP_P2P_BIDIR, &y, &err), GP_OK);
        assert_int_equal(x.dist, y.dist);
        check_path(g2, s, t, &x);
        gp_path_free(&x);
        gp_path_free(&y);
    }
    assert_int_equal(gp_engine_sssp(e, g2, 7, GP_INF, d2, p2, &err), GP_OK);
    assert_int_equal(gp_engine_sssp(e, g1, 7, GP_INF, d1, NULL, &err), GP_OK);
    assert_memory_equal(d1, d2, 500 * sizeof *d1);
    for (uint32_t v = 0; v < 500; v++)
        if (p2[v] != GP_NONE) assert_int_equal(d2[p2[v]] + arc_w(g2, p2[v], v), d2[v]);
    uint32_t src[5] = {1, 2, 3, 499, 250}, dst[4] = {0, 9, 499, 100};
    uint64_t o1[20], o2[20];
    assert_int_equal(gp_engine_table(e, g1, src, 5, dst, 4, o1, &err), GP_OK);
    assert_int_equal(gp_engine_table(e, g2, src, 5, dst, 4, o2, &err), GP_OK);
    assert_memory_equal(o1, o2, sizeof o1);
    free(d1);
    free(d2);
    free(p2);
    gp_graph_unref(g1);
    gp_graph_unref(g2);
    gp_graph_unref(g3);
    gp_engine_free(e);
    arcs_free(&a);
}

/* The order of g by the parallel nested dissection at leaf, checked to be a permutation and the same
 * at 1, 2 and 5 threads and on a second run; mallocs it. */
static uint32_t *nd_order(const gp_graph *g, uint32_t leaf) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t n = g->n;
    uint32_t *r1 = malloc((size_t)n * sizeof *r1), *r2 = malloc((size_t)n * sizeof *r2);
    unsigned char *seen = calloc(n, 1);
    assert_non_null(r1);
    assert_non_null(r2);
    assert_non_null(seen);
    assert_int_equal(gp_cch_order_nd(g, 1, leaf, r1, NULL, &err), GP_OK);
    for (uint32_t v = 0; v < n; v++) {
        assert_true(r1[v] < n);
        assert_int_equal(seen[r1[v]], 0);
        seen[r1[v]] = 1;
    }
    int threads[] = {2, 5, 5};
    for (int k = 0; k < 3; k++) {
        memset(r2, 0xff, (size_t)n * sizeof *r2);
        assert_int_equal(gp_cch_order_nd(g, threads[k], leaf, r2, NULL, &err), GP_OK);
        assert_memory_equal(r1, r2, (size_t)n * sizeof *r1);
    }
    free(r2);
    free(seen);
    return r1;
}

static gp_cch_topo *topo_of(const gp_graph *g, const uint32_t *rank) {
    gp_err err;
    gp_err_clear(&err);
    gp_cch_topo *t = NULL;
    if (gp_cch_topo_build(g, rank, &t, &err) != GP_OK) fail_msg("contraction: %s", err.msg);
    return t;
}

/* gp_cch_new on g with the order mode / leaf (then back to the tests' order): customization on
 * threads equal to the serial one, queries exact. */
static void check_new(const gp_graph *g, int mode, uint32_t leaf, int queries) {
    gp_err err;
    gp_err_clear(&err);
    gp_cch_cache_clear();
    gp_cch_set_order(mode, leaf);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 0, &c, &err), GP_OK);
    check_customize_threads(c);
    check_queries(g, c, queries);
    gp_cch_free(c);
    gp_cch_set_order(GP_CCH_ORDER_ND, 64);
    gp_cch_cache_clear();
}

static void *other_rand(void *arg) {
    srand(99);
    for (int i = 0; i < 100; i++) ((int *)arg)[i] = rand();
    return NULL;
}

/* rand / srand (engine/cch_order.c): glibc's numbers, per thread, and what libmetis calls. */
static void test_order_rand(void **state) {
    (void)state;
    int (*libc_rand)(void) = (int (*)(void))dlsym(RTLD_NEXT, "rand");
    void (*libc_srand)(unsigned) = (void (*)(unsigned))dlsym(RTLD_NEXT, "srand");
    assert_non_null(libc_rand);
    assert_non_null(libc_srand);
    assert_true(libc_rand != rand);
    assert_true(dlsym(RTLD_DEFAULT, "rand") == (void *)rand); /* interposed for libmetis */
    unsigned seeds[] = {0, 1, 4321, 123456789, 0x80000001u, UINT32_MAX};
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        srand(seeds[i]);
        libc_srand(seeds[i]);
        for (int k = 0; k < 1000; k++) assert_int_equal(rand(), libc_rand());
    }
    /* another thread's srand does not move this thread's sequence */
    int mine[4], ref[4], theirs[100];
    srand(5);
    mine[0] = rand();
    mine[1] = rand();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, other_rand, theirs), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    mine[2] = rand();
    mine[3] = rand();
    libc_srand(5);
    for (int k = 0; k < 4; k++) ref[k] = libc_rand();
    assert_memory_equal(mine, ref, sizeof mine);
    libc_srand(99);
    assert_int_equal(theirs[0], libc_rand());
}

/* The parallel nested dissection: a permutation, the same for any thread count; CCH queries on it
 * exact (also on the single-call order); its fill within a bound of the single call's on a
 * road-like graph; a graph within one leaf gets the single call's order. */
static void test_order_nd(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    /* random graphs: disconnected, isolated nodes, 1 and 2 nodes; leaves of 16 nodes */
    uint32_t sizes[] = {1, 2, 3, 17, 40, 150, 600, 2500};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        arcs a = random_arcs(sizes[i], i % 2 ? 1 : 3, 100);
        gp_graph *g = build(sizes[i], &a, NULL);
        free(nd_order(g, 16));
        gp_graph_unref(g);
        arcs_free(&a);
    }
    /* an arc-less graph and a graph of isolated nodes around one path */
    arcs none = {NULL, NULL, NULL, 0};
    gp_graph *g0 = build(50, &none, NULL);
    uint32_t *r0 = nd_order(g0, 16);
    for (uint32_t v = 0; v < 50; v++) assert_int_equal(r0[v], v);
    free(r0);
    gp_graph_unref(g0);
    /* a road-like graph: fill (CCH edges, triangles) near the single call's, queries exact */
    gp_graph *g = gp_generate_road(30000, 5, &err);
    assert_non_null(g);
    uint32_t *rank = malloc((size_t)g->n * sizeof *rank);
    assert_non_null(rank);
    assert_int_equal(gp_cch_order_metis(g, rank, &err), GP_OK);
    gp_cch_topo *ts = topo_of(g, rank);
    free(rank);
    uint32_t leaves[] = {512, 4096};
    for (int k = 0; k < 2; k++) {
        uint32_t *r = nd_order(g, leaves[k]);
        gp_cch_topo *tp = topo_of(g, r);
        print_message("gen:30000:5 leaf %u: CCH edges %u vs %u (single call), triangles %llu vs "
                      "%llu, levels %u vs %u\n",
                      leaves[k], tp->m, ts->m, (unsigned long long)tp->ntri,
                      (unsigned long long)ts->ntri, tp->nlevels, ts->nlevels);
        assert_true(tp->m <= ts->m + ts->m / 10);
        assert_true(tp->ntri <= ts->ntri + ts->ntri / 4);
        assert_true(tp->nlevels <= ts->nlevels + ts->nlevels / 4);
        gp_cch_topo_unref(tp);
        free(r);
    }
    gp_cch_topo_unref(ts);
    /* within one leaf: the single call */
    uint32_t *r1 = nd_order(g, 30000), *r2 = malloc((size_t)g->n * sizeof *r2);
    assert_int_equal(gp_cch_order_metis(g, r2, &err), GP_OK);
    assert_memory_equal(r1, r2, (size_t)g->n * sizeof *r1);
    free(r1);
    free(r2);
    /* queries through gp_cch_new on either order */
    check_new(g, GP_CCH_ORDER_ND, 256, 60);
    check_new(g, GP_CCH_ORDER_METIS, 0, 60);
    gp_graph_unref(g);
}

/* The contraction renames the completion to the level-sorted ranks and lists triangles on threads:
 * the topology equals the one eliminated directly in its final order (built again from t->rank),
 * each edge's triangles ascend by v, and queries stay exact; 140,000 nodes so that the threads run
 * (gp_parallel_for splits from 131,072 items). */
static void test_contract(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_generate_road(140000, 9, &err);
    assert_non_null(g);
    uint32_t *rank = malloc((size_t)g->n * sizeof *rank);
    assert_non_null(rank);
    assert_int_equal(gp_cch_order_nd(g, 0, 0, rank, NULL, &err), GP_OK);
    gp_cch_topo *t1 = topo_of(g, rank), *t2 = topo_of(g, t1->rank);
    assert_int_equal(t1->m, t2->m);
    assert_int_equal(t1->ntri, t2->ntri);
    assert_int_equal(t1->nlevels, t2->nlevels);
    assert_memory_equal(t1->rank, t2->rank, (size_t)g->n * 4);
    assert_memory_equal(t1->order, t2->order, (size_t)g->n * 4);
    assert_memory_equal(t1->up_first, t2->up_first, ((size_t)g->n + 1) * 4);
    assert_memory_equal(t1->up_head, t2->up_head, (size_t)t1->m * 4);
    assert_memory_equal(t1->up_tail, t2->up_tail, (size_t)t1->m * 4);
    assert_memory_equal(t1->parent, t2->parent, (size_t)g->n * 4);
    assert_memory_equal(t1->level_first, t2->level_first, ((size_t)t1->nlevels + 1) * 4);
    assert_memory_equal(t1->tri_first, t2->tri_first, ((size_t)t1->m + 1) * 8);
    assert_memory_equal(t1->tri, t2->tri, (size_t)t1->ntri * 8);
    for (uint32_t e = 0; e < t1->m; e++) {
        for (uint64_t k = t1->tri_first[e]; k < t1->tri_first[e + 1]; k++) {
            uint32_t e1 = t1->tri[2 * k], e2 = t1->tri[2 * k + 1];
            assert_int_equal(t1->up_tail[e1], t1->up_tail[e2]); /* both from v */
            assert_int_equal(t1->up_head[e1], t1->up_tail[e]);  /* to x and y */
            assert_int_equal(t1->up_head[e2], t1->up_head[e]);
            if (k > t1->tri_first[e])
                assert_true(t1->up_tail[e1] > t1->up_tail[t1->tri[2 * k - 2]]);
        }
    }
    gp_cch_topo_unref(t1);
    gp_cch_topo_unref(t2);
    free(rank);
    check_new(g, GP_CCH_ORDER_ND, 0, 20);
    /* a table over more than 65,536 ranks (its bucket entries sorted by rank in two passes),
     * 120 x 500, against each source's one-to-all distances */
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 0, &c, &err), GP_OK);
    enum { NS = 120, NT = 500 };
    uint32_t *src = malloc(NS * 4), *dst = malloc(NT * 4);
    uint64_t *tab = malloc((size_t)NS * NT * 8), *d = malloc((size_t)g->n * 8);
    assert_true(src && dst && tab && d);
    uint64_t seed = 5;
    for (int i = 0; i < NS; i++) src[i] = (uint32_t)(gp_splitmix64(&seed) % g->n);
    for (int i = 0; i < NT; i++) dst[i] = (uint32_t)(gp_splitmix64(&seed) % g->n);
    assert_int_equal(gp_cch_table(c, src, NS, dst, NT, 4, tab, &err), GP_OK);
    for (int i = 0; i < NS; i++) {
        assert_int_equal(gp_cch_sssp(c, src[i], GP_INF, d, &err), GP_OK);
        for (int k = 0; k < NT; k++)
            if (tab[(size_t)i * NT + k] != d[dst[k]])
                fail_msg("table cell %d,%d: %llu, one-to-all %llu", i, k,
                         (unsigned long long)tab[(size_t)i * NT + k],
                         (unsigned long long)d[dst[k]]);
    }
    free(src), free(dst), free(tab), free(d);
    gp_cch_free(c);
    gp_graph_unref(g);
}

static void test_dimacs(void **state) {
    (void)state;
    for (int i = 0; i < REAL_GRAPHS; i++) {
        const char *const *names = real_graph_names;
        gp_graph *g = real_graph_load(i);
        if (!g) continue;
        gp_err err;
        gp_err_clear(&err);
        gp_cch *c = NULL;
        if (gp_cch_new(g, 0, &c, &err) != GP_OK) fail_msg("cch %s: %s", names[i], err.msg);
        print_message("%s: %u nodes, %u CCH edges, %llu triangles, %u levels, order %.2fs, "
                      "contraction %.2fs, customization %.3fs\n",
                      names[i], g->n, c->topo->m, (unsigned long long)c->topo->ntri,
                      c->topo->nlevels, c->topo->order_s, c->topo->contract_s, c->custom_s);
        check_queries(g, c, i == 0 ? 200 : 100);
        check_plans(g, c);
        uint64_t pruned = check_perfect(g, c, 60, 100, 0);
        print_message("%s: perfect customization %.3fs, prunes %llu of %u arcs\n", names[i],
                      c->perfect_s, (unsigned long long)pruned, 2 * c->topo->m);
        /* 1% of the arcs change cost: re-customize and check again */
        gp_builder *b = gp_builder_new(1.0);
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                uint32_t w = g->w[a];
                if (rnd() % 100 == 0) w = (uint32_t)(w * (1 + rnd() % 4) / 2);
                assert_int_equal(gp_builder_add_arc(b, g->ext[u], g->ext[g->col[a]], w, &err),
                                 GP_OK);
            }
        gp_graph *g2 = gp_builder_finish(b, "test", "test", 1, &err);
        assert_non_null(g2);
        gp_cch *c2 = NULL;
        assert_int_equal(gp_cch_new(g2, 0, &c2, &err), GP_OK);
        assert_int_equal(c2->reused_topo, 1);
        check_queries(g2, c2, 50);
        check_perfect(g2, c2, 40, 100, 0);
        gp_cch_free(c2);
        gp_graph_unref(g2);
        gp_cch_free(c);
        gp_graph_unref(g);
    }
}

/* The route between a and b as the engine found it before gp_cch_p2p_multi: the direct way along a
 * common arc, else one CCH query per (entry, exit) pair, the first cheapest pair kept. */
static uint64_t pairs_route(const gp_graph *g, const gp_snap *a, const gp_snap *b, gp_path *best,
                            uint32_t *first_arc, uint32_t *last_arc) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t on[2], dn[2];
    uint64_t oc[2], dc[2];
    uint32_t no = gp_snap_origins(g, a, on, oc), nd = gp_snap_dests(g, b, dn, dc);
    uint64_t dist = GP_INF;
    memset(best, 0, sizeof *best);
    *first_arc = *last_arc = GP_NONE;
    for (uint32_t i = 0; i < no; i++)
        for (uint32_t j = 0; j < nd; j++) {
            gp_path p;
            assert_int_equal(gp_cch_p2p(g->cch, on[i], dn[j], &p, &err), GP_OK);
            if (p.dist != GP_INF && oc[i] + p.dist + dc[j] < dist) {
                gp_path_free(best);
                *best = p;
                dist = oc[i] + p.dist + dc[j];
                *first_arc = i;
                *last_arc = j;
            } else {
                gp_path_free(&p);
            }
        }
    return dist;
}

/* Snapped routes through the engine's CCH on OSM graphs: Dijkstra's distances, and the path and
 * entry / exit of pairs_route (unless the direct way along one arc answers). */
static int check_snapped(const char *spec, int queries) {
    gp_err err;
    gp_err_clear(&err);
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    /* the pruned query arcs from the start (auto would switch to them midway) */
    assert_int_equal(gp_engine_set_cch_perfect(e, "on", &err), GP_OK);
    /* the road graph's own CCH (turn costs: tests/test_turns.c) */
    assert_int_equal(gp_engine_set_turn_costs(e, "off", &err), GP_OK);
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_non_null(g->cch);
    assert_non_null(g->lon);
    double x0 = 1e9, x1 = -1e9, y0 = 1e9, y1 = -1e9;
    for (uint32_t v = 0; v < g->n; v++) {
        x0 = g->lon[v] < x0 ? g->lon[v] : x0, x1 = g->lon[v] > x1 ? g->lon[v] : x1;
        y0 = g->lat[v] < y0 ? g->lat[v] : y0, y1 = g->lat[v] > y1 ? g->lat[v] : y1;
    }
    int multi = 0;
    for (int q = 0; q < queries; q++) {
        gp_snap s[2];
        for (int k = 0; k < 2; k++) {
            if (rnd() % 5 == 0) {
                gp_snap_at_node(g, (uint32_t)(rnd() % g->n), &s[k]);
                continue;
            }
            double lon = x0 + (x1 - x0) * (double)(rnd() % 10001) / 10000;
            double lat = y0 + (y1 - y0) * (double)(rnd() % 10001) / 10000;
            assert_int_equal(gp_snap_point(g, lon, lat, 1e7, &s[k], &err), GP_OK);
        }
        uint32_t on[2], dn[2];
        uint64_t oc[2], dc[2];
        multi += gp_snap_origins(g, &s[0], on, oc) * gp_snap_dests(g, &s[1], dn, dc) > 1;
        gp_snap_route r, ref;
        assert_int_equal(gp_engine_route_snap(e, g, &s[0], &s[1], GP_P2P_AUTO, &r, &err), GP_OK);
        assert_int_equal(gp_engine_route_snap(e, g, &s[0], &s[1], GP_P2P_DIJKSTRA, &ref, &err),
                         GP_OK);
        if (r.dist != ref.dist)
            fail_msg("%s query %d: cch %llu dijkstra %llu", spec, q, (unsigned long long)r.dist,
                     (unsigned long long)ref.dist);
        gp_path p;
        uint32_t fi, li;
        uint64_t pd = pairs_route(g, &s[0], &s[1], &p, &fi, &li);
        if (pd < ref.dist || (pd == ref.dist && r.path.len)) {
            /* a route through the network: the pairs loop's, node for node */
            assert_int_equal(pd, r.dist);
            assert_int_equal(p.dist, r.path.dist); /* the network part, without the ends */
            assert_int_equal(p.len, r.path.len);
            if (p.len) assert_memory_equal(p.nodes, r.path.nodes, p.len * sizeof *p.nodes);
            uint32_t oa[2] = {GP_NONE, GP_NONE}, da[2] = {GP_NONE, GP_NONE};
            if (s[0].arc != GP_NONE && s[0].frac > 0 && s[0].frac < 1)
                oa[0] = s[0].arc, oa[1] = s[0].rarc;
            if (s[1].arc != GP_NONE && s[1].frac > 0 && s[1].frac < 1)
                da[0] = s[1].arc, da[1] = s[1].rarc;
            assert_int_equal(r.first_arc, oa[fi]);
            assert_int_equal(r.last_arc, da[li]);
        }
        gp_path_free(&p);
        gp_snap_route_free(&r);
        gp_snap_route_free(&ref);
    }
    print_message("%s: %d snapped routes, %d with several entry / exit pairs\n", spec, queries,
                  multi);
    gp_graph_unref(g);
    gp_engine_free(e);
    return multi;
}

static void test_snapped_osm(void **state) {
    (void)state;
    const char *files[] = {"turns", "rules", "viaway", "uturn", "oneway", "access", "gaps"};
    int multi = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char spec[256];
        snprintf(spec, sizeof spec, "osm:tests/data/osm/%s.osm?profile=car", files[i]);
        multi += check_snapped(spec, 150);
    }
    assert_true(multi > 100); /* the query between sets was exercised */
    const char *d = getenv("GPATH_DATA");
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/osm/monaco.osm.pbf", d ? d : "");
    if (!d || stat(path, &st) != 0) {
        print_message("GPATH_DATA has no osm/monaco.osm.pbf: skipped\n");
        return;
    }
    char spec[1100];
    snprintf(spec, sizeof spec, "osm:%s", path);
    check_snapped(spec, 300);
}

/* The piece tables of p from phase f0 on (engine/cch_plan.h gp_cch_ptab), without a per-bin cap
 * (8n entries in all), with a total cap that leaves some phases to the steps, and with a per-bin
 * cap: the layout (a_j is the
 * (j+1)-th ancestor of v, columns by depth) and the plan run with them equal to PHAST. */
static void check_pieces(const gp_cch *c, const gp_cch_plan *p, const gp_cch_top *top,
                         const uint64_t *tab, uint32_t f0, uint64_t *d1, uint64_t *d2) {
    gp_err err;
    gp_err_clear(&err);
    const gp_cch_topo *t = c->topo;
    uint32_t n = t->n, caps[3][2] = {{UINT32_MAX, 8 * n}, {UINT32_MAX, n / 3}, {40, n}};
    for (int v = 0; v < 3; v++) {
        gp_cch_ptab *pt = NULL;
        assert_int_equal(gp_cch_plan_pieces(p, t, f0, 2, caps[v][0], caps[v][1], &pt, &err), GP_OK);
        assert_true(pt->first[pt->nbins] <= caps[v][1]);
        uint32_t nt = 0;
        for (uint32_t b = 0; b < p->nbins; b++) {
            uint32_t e = pt->first[b + 1] - pt->first[b], p0 = p->bin_first[b], N = 0, want = 0;
            if (!e) continue;
            assert_true(pt->bins[nt++] == b && b >= p->phase_bin[f0] && e <= caps[v][0]);
            N = p->bin_first[b + 1] - p0;
            uint32_t *cnt = calloc(N, 4); /* entries per cell: its depth */
            assert_non_null(cnt);
            uint32_t pj = 0, pv = 0;
            for (uint32_t q = p0; q < p0 + N; q++) want += pt->depth[q];
            assert_int_equal(e, want);
            for (uint32_t i = pt->first[b]; i < pt->first[b + 1]; i++) {
                uint32_t cv = (uint32_t)(pt->ent[i] >> 16) & 0xffff, a = pt->ent[i] & 0xffff;
                assert_true(cv < N && a < N && cnt[cv] < pt->depth[p0 + cv]);
                uint32_t x = p->rank[p0 + cv]; /* a_j: the (j+1)-th ancestor, j = cnt[cv] */
                for (uint32_t j = 0; j <= cnt[cv]; j++) x = t->parent[x];
                assert_int_equal(p->pos[x], p0 + a);
                /* columns by depth j, cells ascending within one */
                assert_true(i == pt->first[b] || cnt[cv] > pj || (cnt[cv] == pj && cv > pv));
                pj = cnt[cv]++;
                pv = cv;
            }
            free(cnt);
        }
        assert_int_equal(nt, pt->ntab);
        assert_int_equal(gp_cch_ptab_fill(pt, p, c->bw), 0);
        for (int s = 0; s < 3; s++) {
            uint32_t src = (uint32_t)(rnd() % n);
            assert_int_equal(gp_cch_sssp(c, src, GP_INF, d1, &err), GP_OK);
            memset(d2, 0x5a, (size_t)n * 8);
            assert_int_equal(gp_cch_plan_sssp(c, p, top, tab, pt, src, d2, &err), GP_OK);
            assert_memory_equal(d1, d2, (size_t)n * 8);
        }
        gp_cch_ptab_free(pt);
    }
}

/* The GPU sweep plan (engine/cch_plan.h): its invariants, and the plan executed on the CPU the
 * way the GPU runs it equals PHAST, for several cuts (one phase, many small phases, the default),
 * on random graphs (forests of several elimination trees, isolated nodes) and road-like ones. */
static void check_plans(const gp_graph *g, const gp_cch *c) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t n = g->n;
    uint64_t *d1 = malloc((size_t)n * 8), *d2 = malloc((size_t)n * 8);
    assert_non_null(d1);
    assert_non_null(d2);
    uint32_t thr[8], cuts[4][3] = {{0, 0, 0}, {2, 2, 1}, {4, 4, 64}, {256, 16, 1024}};
    for (int v = 0; v < 4; v++) {
        uint32_t q = cuts[v][0] ? gp_cch_plan_thresholds(c->topo, cuts[v][0], cuts[v][1], thr) : 0;
        gp_cch_plan *p = NULL;
        if (gp_cch_plan_build(c->topo, thr, q, v == 1 ? 1 : 8, cuts[v][2] ? cuts[v][2] : n, &p,
                              &err) != GP_OK)
            fail_msg("plan: %s", err.msg);
        if (gp_cch_plan_check(p, c->topo, &err) != GP_OK) fail_msg("plan %d: %s", v, err.msg);
        assert_true(p->nphases >= 1 && p->nphases <= q + 1);
        if (q == 0) assert_int_equal(p->nphases, 1);
        assert_true(p->max_bin_nodes <= n && gp_cch_plan_bytes(p) > 0);
        for (int s = 0; s < 3; s++) {
            uint32_t src = (uint32_t)(rnd() % n);
            assert_int_equal(gp_cch_sssp(c, src, GP_INF, d1, &err), GP_OK);
            assert_int_equal(gp_cch_plan_sssp(c, p, NULL, NULL, NULL, src, d2, &err), GP_OK);
            assert_memory_equal(d1, d2, (size_t)n * 8);
        }
        check_pieces(c, p, NULL, NULL, 0, d1, d2);
        /* the top table (the leading phases of at most n/8, n/2, n nodes, and 3000: K x K) */
        for (uint32_t cap1 = n / 8; cap1 <= n; cap1 = cap1 ? cap1 * 4 : 1) {
            gp_cch_top *top = NULL;
            uint32_t cap = cap1 < 3000 ? cap1 : 3000;
            assert_int_equal(gp_cch_plan_top(p, cap, &top, &err), GP_OK);
            if (!top) {
                assert_true(p->nphases == 1 || p->bin_first[p->phase_bin[1]] > cap);
                continue;
            }
            uint32_t K = top->K;
            assert_true(K <= cap && top->nphases >= 1 && top->nphases < p->nphases);
            assert_int_equal(K, p->bin_first[p->phase_bin[top->nphases]]);
            for (uint32_t x = 0; x < K; x++) /* every upward arc of a top node, to an earlier one */
                for (uint32_t a = top->first[x]; a < top->first[x + 1]; a++)
                    assert_true(top->head[a] < x && c->topo->up_tail[top->edge[a]] == p->rank[x]);
            assert_int_equal(top->first[K], p->in_first[K] + p->out_first[K]);
            uint64_t *tab = malloc((size_t)K * K * 8);
            assert_non_null(tab);
            gp_cch_top_table(top, c->bw, tab);
            for (uint32_t u = 0; u < K; u++) assert_true(tab[(size_t)u * K + u] == 0);
            for (int s = 0; s < 3; s++) {
                uint32_t src = (uint32_t)(rnd() % n);
                assert_int_equal(gp_cch_sssp(c, src, GP_INF, d1, &err), GP_OK);
                memset(d2, 0x5a, (size_t)n * 8);
                assert_int_equal(gp_cch_plan_sssp(c, p, top, tab, NULL, src, d2, &err), GP_OK);
                assert_memory_equal(d1, d2, (size_t)n * 8);
            }
            check_pieces(c, p, top, tab, top->nphases, d1, d2);
            free(tab);
            gp_cch_top_free(top);
            if (cap1 == n || cap < cap1) break;
        }
        /* a damaged plan is caught: an inner arc pointing at its own step */
        for (uint32_t x = 0; x < n; x++)
            if (p->in_first[x + 1] > p->in_first[x]) {
                uint32_t b = 0;
                while (p->bin_first[b + 1] <= x) b++;
                uint32_t keep = p->in_head[p->in_first[x]];
                p->in_head[p->in_first[x]] = x - p->bin_first[b];
                assert_int_equal(gp_cch_plan_check(p, c->topo, &err), GP_EINVAL);
                p->in_head[p->in_first[x]] = keep;
                break;
            }
        gp_cch_plan_free(p);
    }
    uint32_t bad[2] = {5, 5};
    gp_cch_plan *p = NULL;
    assert_int_equal(gp_cch_plan_build(c->topo, bad, 2, 1, 10, &p, &err), GP_EINVAL);
    free(d1);
    free(d2);
}

static void test_plan(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    uint32_t sizes[] = {1, 2, 7, 150, 2500};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        arcs a = random_arcs(sizes[i], 2, 1000);
        gp_graph *g = build(sizes[i], &a, NULL);
        gp_cch *c = NULL;
        assert_int_equal(gp_cch_new(g, 2, &c, &err), GP_OK);
        check_plans(g, c);
        gp_cch_free(c);
        gp_graph_unref(g);
        arcs_free(&a);
    }
    gp_graph *g = gp_generate_road(30000, 5, &err);
    assert_non_null(g);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 0, &c, &err), GP_OK);
    check_plans(g, c);
    gp_cch_free(c);
    gp_graph_unref(g);
}

/* Directed pruning (cch.h, Directions): c's weights and packed witnesses equal a customization
 * over every lower triangle (pushed from each v to the pairs of its upper neighbours, v
 * ascending, the first strictly smaller sum kept: the CPU's rule); every kept triangle can give
 * a finite weight (reach bits from g's arcs, bottom-up) and every other cannot. The share kept. */
static double check_directed(const gp_graph *g, const gp_cch *c) {
    const gp_cch_topo *t = c->topo;
    uint32_t m = t->m;
    uint32_t *f = malloc((size_t)m * 4 + 4), *b = malloc((size_t)m * 4 + 4);
    uint64_t *wf = malloc((size_t)m * 8 + 8), *wb = malloc((size_t)m * 8 + 8);
    uint8_t *r = calloc((size_t)m + 1, 1);
    assert_true(f && b && wf && wb && r);
    uint64_t all = 0, useful = 0;
    for (uint32_t e = 0; e < m; e++) {
        f[e] = c->ofw[e], b[e] = c->obw[e];
        wf[e] = GP_CCH_WIT_ORIG | t->order[t->up_head[e]];
        wb[e] = GP_CCH_WIT_ORIG | t->order[t->up_tail[e]];
    }
    for (uint32_t u = 0; u < g->n; u++) /* reach bits from the arcs */
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a], ru = t->rank[u], rv = t->rank[v];
            if (v == u) continue;
            uint32_t e = ru < rv ? gp_cch_find_edge(t, ru, rv) : gp_cch_find_edge(t, rv, ru);
            assert_int_not_equal(e, GP_NONE);
            r[e] |= ru < rv ? GP_CCH_DIR_UP : GP_CCH_DIR_DOWN;
            assert_true(t->adir[e] & (ru < rv ? GP_CCH_DIR_UP : GP_CCH_DIR_DOWN));
        }
    for (uint32_t v = 0; v < t->n; v++)
        for (uint32_t i = t->up_first[v]; i < t->up_first[v + 1]; i++)
            for (uint32_t j = i + 1; j < t->up_first[v + 1]; j++) {
                uint32_t e = gp_cch_find_edge(t, t->up_head[i], t->up_head[j]);
                assert_int_not_equal(e, GP_NONE);
                all++;
                int up = (r[i] & GP_CCH_DIR_DOWN) && (r[j] & GP_CCH_DIR_UP);
                int down = (r[j] & GP_CCH_DIR_DOWN) && (r[i] & GP_CCH_DIR_UP);
                int kept = 0;
                for (uint64_t k = t->tri_first[e]; k < t->tri_first[e + 1]; k++)
                    kept |= t->tri[2 * k] == i && t->tri[2 * k + 1] == j;
                if (kept != (up || down))
                    fail_msg("triangle %u of edge %u: kept %d, can give up %d down %d", v, e, kept,
                             up, down);
                useful += kept;
                r[e] |= (up ? GP_CCH_DIR_UP : 0) | (down ? GP_CCH_DIR_DOWN : 0);
                uint64_t sf = (uint64_t)b[i] + f[j], sb = (uint64_t)b[j] + f[i];
                if (b[i] != GP_CCH_INF && f[j] != GP_CCH_INF && sf < GP_CCH_INF && sf < f[e])
                    f[e] = (uint32_t)sf, wf[e] = (uint64_t)i << 32 | j;
                if (b[j] != GP_CCH_INF && f[i] != GP_CCH_INF && sb < GP_CCH_INF && sb < b[e])
                    b[e] = (uint32_t)sb, wb[e] = (uint64_t)i << 32 | j;
            }
    assert_int_equal(all, t->ntri_all);
    assert_int_equal(useful, t->ntri);
    for (uint32_t e = 0; e < m; e++) {
        if (f[e] != c->fw[e] || b[e] != c->bw[e])
            fail_msg("edge %u: up %u down %u, over every triangle %u %u", e, c->fw[e], c->bw[e],
                     f[e], b[e]);
        assert_int_equal(c->wit[2 * (size_t)e + 1], wf[e]);
        assert_int_equal(c->wit[2 * (size_t)e], wb[e]);
    }
    free(f), free(b), free(wf), free(wb), free(r);
    return all ? (double)useful / (double)all : 1;
}

static void test_directed(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_cch_cache_clear();
    /* random arcs, one-way ones among them */
    arcs a = random_arcs(1200, 3, 1000);
    gp_graph *g = build(1200, &a, NULL);
    gp_cch *c = NULL;
    assert_int_equal(gp_cch_new(g, 2, &c, &err), GP_OK);
    double share = check_directed(g, c);
    print_message("random arcs: %.1f%% of %llu triangles kept\n", 100 * share,
                  (unsigned long long)c->topo->ntri_all);
    check_queries(g, c, 40);
    /* the same skeleton with a one-way arc turned around: the cached topology was not built
     * with that direction, so it is not reused; new weights on the same arcs reuse it */
    size_t k = 0;
    for (; k < a.n; k++) { /* an arc of its own: no parallel one, none back */
        size_t same = 0;
        for (size_t i = 0; i < a.n; i++) same += a.u[i] == a.u[k] && a.v[i] == a.v[k];
        if (a.u[k] != a.v[k] && same == 1 && arc_w(g, a.v[k], a.u[k]) == UINT64_MAX) break;
    }
    assert_true(k < a.n);
    uint32_t u0 = a.u[k];
    a.u[k] = a.v[k], a.v[k] = u0;
    gp_graph *g2 = build(1200, &a, NULL);
    gp_cch *c2 = NULL;
    assert_int_equal(gp_cch_new(g2, 2, &c2, &err), GP_OK);
    assert_int_equal(c2->reused_topo, 0);
    assert_ptr_not_equal(c2->topo, c->topo);
    check_directed(g2, c2);
    check_queries(g2, c2, 40);
    a.v[k] = a.u[k], a.u[k] = u0;
    for (size_t i = 0; i < a.n; i++) a.w[i] = a.w[i] / 2 + 7;
    gp_graph *g3 = build(1200, &a, NULL);
    gp_cch *c3 = NULL;
    assert_int_equal(gp_cch_new(g3, 2, &c3, &err), GP_OK);
    assert_int_equal(c3->reused_topo, 1);
    assert_ptr_equal(c3->topo, c->topo);
    check_directed(g3, c3);
    check_queries(g3, c3, 40);
    gp_cch_free(c3), gp_cch_free(c2), gp_cch_free(c);
    gp_graph_unref(g3), gp_graph_unref(g2), gp_graph_unref(g);
    arcs_free(&a);
    /* a car turn graph: its arcs are turns, and about half of the triangles cannot be driven */
    gp_graph *road = gp_generate_road(3000, 5, &err);
    assert_non_null(road);
    gp_turns *T = gp_turns_build(road, gp_turn_costs_find("car"), &err);
    if (!T) fail_msg("turn graph: %s", err.msg);
    assert_int_equal(gp_cch_new(T->tg, 2, &c, &err), GP_OK);
    share = check_directed(T->tg, c);
    print_message("car turn graph of gen:3000:5: %.1f%% of %llu triangles kept\n", 100 * share,
                  (unsigned long long)c->topo->ntri_all);
    assert_true(share < 0.7);
    check_queries(T->tg, c, 40);
    gp_cch_free(c);
    gp_turns_free(T);
    gp_graph_unref(road);
}

/* Inertial Flow leaves (cch_order = flow) on a car turn graph: a permutation, the same for any
 * thread count, the whole graph as one flow part or nd's METIS separators above parts of 1,000
 * nodes; fewer triangles than nd's METIS_NodeND leaves here; queries exact through gp_cch_new.
 * A graph without cch_xy gets nd's order. */
/* A grid of R x C nodes (4 neighbours, lists ascending), node r * C + c, as CSR. */
#define GR 8
#define GC 12
static void grid_csr(uint32_t *first, uint32_t *adj) {
    uint32_t e = 0;
    for (uint32_t r = 0; r < GR; r++)
        for (uint32_t c = 0; c < GC; c++) {
            first[r * GC + c] = e;
            if (r > 0) adj[e++] = (r - 1) * GC + c;
            if (c > 0) adj[e++] = r * GC + c - 1;
            if (c + 1 < GC) adj[e++] = r * GC + c + 1;
            if (r + 1 < GR) adj[e++] = (r + 1) * GC + c;
        }
    first[GR * GC] = e;
}

/* sep separates the grid: removing it leaves at least two components, and its size is k. */
static void assert_grid_separator(const uint32_t *first, const uint32_t *adj, const uint8_t *sep,
                                  uint32_t k) {
    uint32_t n = GR * GC, cnt = 0, nc = 0, comp[GR * GC], queue[GR * GC];
    for (uint32_t v = 0; v < n; v++) cnt += sep[v] != 0, comp[v] = UINT32_MAX;
    assert_int_equal(cnt, k);
    for (uint32_t r = 0; r < n; r++) {
        if (sep[r] || comp[r] != UINT32_MAX) continue;
        uint32_t qh = 0, qt = 0;
        queue[qt++] = r, comp[r] = nc;
        while (qh < qt)
            for (uint32_t u = queue[qh++], i = first[u]; i < first[u + 1]; i++)
                if (!sep[adj[i]] && comp[adj[i]] == UINT32_MAX)
                    comp[adj[i]] = nc, queue[qt++] = adj[i];
        nc++;
    }
    assert_true(nc >= 2);
}

/* gp_cch_flow_refine (engine/cch_flow.c) on an 8 x 12 grid, whose smallest separators have 8
 * nodes, one a row (a column, or the steps of a diagonal): a staircase of 10 becomes one of
 * them with a wide corridor; a column with a node no path crosses loses that node even with no
 * corridor; a column stays as it is; a set that separates nothing is left alone. */
static void test_flow_refine(void **state) {
    (void)state;
    uint32_t first[GR * GC + 1], adj[4 * GR * GC];
    uint8_t sep[GR * GC];
    grid_csr(first, adj);
    /* the staircase: column 5 in rows 0-3, (3,6), (3,7), column 7 in rows 4-7 */
    memset(sep, 0, sizeof sep);
    for (uint32_t r = 0; r < 4; r++) sep[r * GC + 5] = 1;
    sep[3 * GC + 6] = sep[3 * GC + 7] = 1;
    for (uint32_t r = 4; r < GR; r++) sep[r * GC + 7] = 1;
    assert_grid_separator(first, adj, sep, 10);
    assert_int_equal(gp_cch_flow_refine(GR * GC, first, adj, sep, 0.5), 8);
    assert_grid_separator(first, adj, sep, 8);
    for (uint32_t r = 0; r < GR; r++) { /* one node a row (a column, or a diagonal's steps) */
        uint32_t in_row = 0;
        for (uint32_t c = 0; c < GC; c++) in_row += sep[r * GC + c];
        assert_int_equal(in_row, 1);
    }
    /* column 6 and the corner (0,0), which lies on no path across */
    memset(sep, 0, sizeof sep);
    for (uint32_t r = 0; r < GR; r++) sep[r * GC + 6] = 1;
    sep[0] = 1;
    assert_int_equal(gp_cch_flow_refine(GR * GC, first, adj, sep, 0), 8);
    assert_int_equal(sep[0], 0);
    for (uint32_t r = 0; r < GR; r++) assert_int_equal(sep[r * GC + 6], 1);
    assert_grid_separator(first, adj, sep, 8);
    /* a column: already the smallest, unchanged */
    uint8_t before[GR * GC];
    memcpy(before, sep, sizeof sep);
    assert_int_equal(gp_cch_flow_refine(GR * GC, first, adj, sep, 0.25), 8);
    assert_memory_equal(before, sep, sizeof sep);
    /* one node that separates nothing: unchanged */
    memset(sep, 0, sizeof sep);
    sep[2 * GC + 3] = 1;
    assert_int_equal(gp_cch_flow_refine(GR * GC, first, adj, sep, 0.25), 1);
    assert_int_equal(sep[2 * GC + 3], 1);
}

static void test_order_flow(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_graph *road = gp_generate_road(3000, 5, &err);
    assert_non_null(road);
    gp_turns *T = gp_turns_build(road, gp_turn_costs_find("car"), &err);
    if (!T) fail_msg("turn graph: %s", err.msg);
    const gp_graph *tg = T->tg;
    assert_null(tg->cch_xy); /* made only for the flow order */
    assert_int_equal(gp_turns_add_xy(T, road, &err), GP_OK);
    assert_non_null(tg->cch_xy);
    const float *xy = tg->cch_xy;
    assert_int_equal(gp_turns_add_xy(T, road, &err), GP_OK); /* once */
    assert_ptr_equal(tg->cch_xy, xy);
    uint32_t n = tg->n;
    uint32_t *r1 = malloc((size_t)n * 4), *r2 = malloc((size_t)n * 4);
    uint8_t *seen = calloc(n, 1);
    assert_true(r1 && r2 && seen);
    uint32_t leaves[] = {UINT32_MAX, 1000};
    uint64_t ntri[2];
    for (int k = 0; k < 2; k++) {
        gp_cch_nd_stats st;
        assert_int_equal(gp_cch_order_nd_flow(tg, 1, leaves[k], tg->cch_xy, NULL, r1, &st, &err),
                         GP_OK);
        memset(seen, 0, n);
        for (uint32_t v = 0; v < n; v++) {
            assert_true(r1[v] < n);
            assert_int_equal(seen[r1[v]], 0);
            seen[r1[v]] = 1;
        }
        assert_true(st.flow_seps > 0);
        for (int t = 2; t <= 5; t += 3) {
            memset(r2, 0xff, (size_t)n * 4);
            assert_int_equal(
                gp_cch_order_nd_flow(tg, t, leaves[k], tg->cch_xy, NULL, r2, NULL, &err), GP_OK);
            assert_memory_equal(r1, r2, (size_t)n * 4);
        }
        gp_cch_topo *t = topo_of(tg, r1);
        ntri[k] = t->ntri;
        gp_cch_topo_unref(t);
    }
    { /* METIS's separators above parts of 200 nodes, refined by the corridor flow (the
       * default) or not */
        gp_cch_flow_opts plain = GP_CCH_FLOW_DEFAULT;
        plain.refine = 0;
        gp_cch_nd_stats sr, sp;
        uint32_t *q1 = malloc((size_t)n * 4), *q2 = malloc((size_t)n * 4);
        assert_true(q1 && q2);
        assert_int_equal(gp_cch_order_nd_flow(tg, 2, 200, tg->cch_xy, NULL, q1, &sr, &err), GP_OK);
        assert_int_equal(gp_cch_order_nd_flow(tg, 2, 200, tg->cch_xy, &plain, q2, &sp, &err),
                         GP_OK);
        gp_cch_topo *t1 = topo_of(tg, q1), *t2 = topo_of(tg, q2);
        print_message("parts of 200: %u METIS separators, %u refined (%llu nodes fewer), triangles "
                      "%llu against %llu unrefined\n",
                      sr.splits, sr.refined, (unsigned long long)sr.refine_saved,
                      (unsigned long long)t1->ntri, (unsigned long long)t2->ntri);
        assert_int_equal(sp.refined, 0);
        assert_true(sr.refined > 0 && sr.refine_saved >= sr.refined);
        memset(seen, 0, n);
        for (uint32_t v = 0; v < n; v++) {
            assert_true(q1[v] < n);
            assert_int_equal(seen[q1[v]], 0);
            seen[q1[v]] = 1;
        }
        assert_int_equal(gp_cch_order_nd_flow(tg, 5, 200, tg->cch_xy, NULL, q2, NULL, &err),
                         GP_OK); /* the same on any number of threads */
        assert_memory_equal(q1, q2, (size_t)n * 4);
        /* nd (METIS_NodeND leaves, no coordinates) with the refinement asked for: refines; the
         * service's nd (no options) does not */
        gp_cch_flow_opts nr = GP_CCH_FLOW_DEFAULT;
        assert_int_equal(gp_cch_order_nd_flow(tg, 2, 200, NULL, &nr, q1, &sr, &err), GP_OK);
        assert_true(sr.refined > 0 && sr.flow_seps == 0);
        memset(seen, 0, n);
        for (uint32_t v = 0; v < n; v++) {
            assert_true(q1[v] < n);
            assert_int_equal(seen[q1[v]], 0);
            seen[q1[v]] = 1;
        }
        assert_int_equal(gp_cch_order_nd(tg, 2, 200, q2, &sp, &err), GP_OK);
        assert_int_equal(sp.refined, 0);
        gp_cch_topo_unref(t1);
        gp_cch_topo_unref(t2);
        free(q1);
        free(q2);
    }
    assert_int_equal(gp_cch_order_nd(tg, 2, 1000, r2, NULL, &err), GP_OK);
    gp_cch_topo *t = topo_of(tg, r2);
    print_message("car turn graph of gen:3000:5: triangles nd %llu, flow %llu (whole), %llu "
                  "(parts of 1000)\n",
                  (unsigned long long)t->ntri, (unsigned long long)ntri[0],
                  (unsigned long long)ntri[1]);
    assert_true(ntri[0] < t->ntri);
    assert_true(ntri[1] < t->ntri);
    gp_cch_topo_unref(t);
    /* through the configured order: flow on the turn graph, nd on the road graph */
    gp_cch_set_order(GP_CCH_ORDER_FLOW, 1000);
    assert_int_equal(gp_cch_order(tg, r2, &err), GP_OK);
    assert_memory_equal(r1, r2, (size_t)n * 4);
    uint32_t *r3 = malloc((size_t)road->n * 4), *r4 = malloc((size_t)road->n * 4);
    assert_true(r3 && r4);
    assert_int_equal(gp_cch_order(road, r3, &err), GP_OK);
    assert_int_equal(gp_cch_order_nd(road, 0, 1000, r4, NULL, &err), GP_OK);
    assert_memory_equal(r3, r4, (size_t)road->n * 4);
    free(r3), free(r4);
    check_new(tg, GP_CCH_ORDER_FLOW, 1000, 40);
    free(r1), free(r2), free(seen);
    gp_turns_free(T);
    gp_graph_unref(road);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_graphs),
        cmocka_unit_test(test_recustomize),
        cmocka_unit_test(test_order_roundtrip),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_road),
        cmocka_unit_test(test_engine_policy),
        cmocka_unit_test(test_guard),
        cmocka_unit_test(test_dimacs),
        cmocka_unit_test(test_snapped_osm),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_order_rand),
        cmocka_unit_test(test_order_nd),
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_simd),
        cmocka_unit_test(test_directed),
        cmocka_unit_test(test_flow_refine),
        cmocka_unit_test(test_order_flow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
