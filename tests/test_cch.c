/* test_cch.c - customizable contraction hierarchies on the CPU (engine/cch.c) and in the engine.
 *
 * Against the CPU backend's Dijkstra: p2p distances and paths (every consecutive pair an arc, the
 * arcs' weights summing to the distance), PHAST one-to-all, bucket tables; on random graphs (zero
 * weights, parallel arcs, self-loops, unreachable parts, one and two nodes), generated road graphs,
 * and DIMACS NY and BAY when $GPATH_DATA has them (200 random queries). The multi-threaded
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
#include <sys/stat.h>

#include "../engine/cch.h"
#include "../engine/cch_plan.h"
#include "../engine/engine.h"
#include "../engine/snap.h"

static gp_backend *cpu;

static int setup(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    cpu = gp_cpu_backend_new(2, &err);
    gp_cch_set_max_tri_per_node(0); /* random graphs are no road networks: no size guard */
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
        if (w == UINT64_MAX) fail_msg("path step %u->%u is not an arc", p->nodes[i], p->nodes[i + 1]);
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
        uint32_t ns = 1 + (uint32_t)(rnd() % GP_CCH_MAX_ENDS), nd = 1 + (uint32_t)(rnd() % GP_CCH_MAX_ENDS);
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
        if (a.dist != b.dist) fail_msg("p2p %u->%u: dijkstra %llu cch %llu", s, t,
                                       (unsigned long long)a.dist, (unsigned long long)b.dist);
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
            if (d1[v] != d2[v]) fail_msg("phast from %u: node %u dijkstra %llu cch %llu", s, v,
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
        uint32_t e = checks == m ? k : k % 2 ? (uint32_t)(rnd() % m) : m - 1 - (uint32_t)(rnd() % (m / 20 + 1));
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
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < a.n; i++) /* change about 10% of the costs, some to zero */
            if (rnd() % 10 == 0) a.w[i] = (uint32_t)(rnd() % 3 ? rnd() % 2000 : 0);
        gp_graph *g2 = build(3000, &a, NULL);
        gp_cch *c2 = NULL;
        assert_int_equal(gp_cch_new(g2, 4, &c2, &err), GP_OK);
        assert_int_equal(c2->reused_topo, 1);
        assert_ptr_equal(c2->topo, c->topo);
        check_customize_threads(c2);
        check_queries(g2, c2, 40);
        check_perfect(g2, c2, 300, 40, 4);
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

static void test_dimacs(void **state) {
    (void)state;
    const char *d = getenv("GPATH_DATA");
    const char *names[] = {"USA-road-d.NY.gr.gz", "USA-road-d.BAY.gr.gz"};
    for (int i = 0; i < 2; i++) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/dimacs/%s", d ? d : "", names[i]);
        if (!d || stat(path, &st) != 0) {
            print_message("GPATH_DATA has no dimacs/%s: skipped\n", names[i]);
            continue;
        }
        gp_err err;
        gp_err_clear(&err);
        gp_graph *g = gp_graph_load(path, NULL, &err);
        if (!g) fail_msg("%s: %s", path, err.msg);
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
                assert_int_equal(gp_builder_add_arc(b, g->ext[u], g->ext[g->col[a]], w, &err), GP_OK);
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
            assert_int_equal(gp_cch_plan_sssp(c, p, src, d2, &err), GP_OK);
            assert_memory_equal(d1, d2, (size_t)n * 8);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_graphs),  cmocka_unit_test(test_recustomize),
        cmocka_unit_test(test_order_roundtrip), cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_road),          cmocka_unit_test(test_engine_policy),
        cmocka_unit_test(test_guard),         cmocka_unit_test(test_dimacs),
        cmocka_unit_test(test_snapped_osm), cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
