/* test_cpu.c - the CPU backend (engine/cpu_backend.c, cpu_dijkstra.c, cpu_apsp.c) and the engine's
 * fallback (engine/engine.c).
 *
 * Hand-drawn graphs with literal expected distances and paths (unreachable nodes, zero weights,
 * self-loops, parallel arcs, one- and two-node graphs); every algorithm cross-checked against the
 * others on random graphs (Dijkstra, bidirectional, A*, table, Floyd-Warshall) for sizes around
 * the FW tile (n in 1, 2, 31, 33, 65, 100, 129, 257); A* on generated road graphs and on graphs
 * whose coordinates say nothing about the weights; next hops that realise the distances; the
 * max_dist cutoff; and the engine's fallback rules with fake primary backends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/engine_lab.h"

#define INF GP_INF
#define NONE GP_NONE

/* ---------------------------------------------------------------------------------------------
 * helpers */

typedef struct arc {
    int64_t u, v;
    uint32_t w;
} arc;

/* Builds a graph with external ids 0..n-1 (so internal == external) from an arc list. */
static gp_graph *build(uint32_t n, const arc *arcs, size_t na, const double *lon,
                       const double *lat) {
    gp_err err;
    gp_err_clear(&err);
    gp_builder *b = gp_builder_new(1.0);
    assert_non_null(b);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(
            gp_builder_add_node(b, i, lon != NULL, lon ? lon[i] : 0, lat ? lat[i] : 0, NULL, &err),
            GP_OK);
    for (size_t i = 0; i < na; i++)
        assert_int_equal(gp_builder_add_arc(b, arcs[i].u, arcs[i].v, arcs[i].w, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "test", "test", 1, &err);
    if (!g) fail_msg("builder: %s", err.msg);
    assert_int_equal(g->n, n);
    return g;
}

static uint64_t rng_state = 0x1234567;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Random graph: ~deg*n arcs with weights 0..maxw (zeros included), some self-loops and parallel
 * arcs; coordinates random when coords. */
static gp_graph *random_graph(uint32_t n, uint32_t deg, uint32_t maxw, int coords) {
    size_t na = (size_t)n * deg + 4;
    arc *a = calloc(na, sizeof *a);
    double *lon = coords ? malloc(n * sizeof *lon) : NULL,
           *lat = coords ? malloc(n * sizeof *lat) : NULL;
    size_t k = 0;
    for (size_t i = 0; i < (size_t)n * deg; i++) {
        a[k].u = (int64_t)(rnd() % n);
        a[k].v = (int64_t)(rnd() % n);
        a[k].w = (uint32_t)(rnd() % ((uint64_t)maxw + 1));
        k++;
        if (rnd() % 8 == 0 && k < na) { /* a parallel arc */
            a[k] = a[k - 1];
            a[k].w = (uint32_t)(rnd() % ((uint64_t)maxw + 1));
            k++;
        }
        if (k >= na - 1) break;
    }
    if (coords)
        for (uint32_t i = 0; i < n; i++) {
            lon[i] = 8.0 + (double)(rnd() % 10000) / 10000.0;
            lat[i] = 47.0 + (double)(rnd() % 10000) / 10000.0;
            if (i % 7 == 1) { /* a node on top of another: zero-length arcs */
                lon[i] = lon[i - 1];
                lat[i] = lat[i - 1];
            }
        }
    gp_graph *g = build(n, a, k, lon, lat);
    free(a);
    free(lon);
    free(lat);
    return g;
}

/* Lightest arc u->v, or INF. */
static uint64_t arc_w(const gp_graph *g, uint32_t u, uint32_t v) {
    uint64_t best = INF;
    for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
        if (g->col[a] == v && g->w[a] < best) best = g->w[a];
    return best;
}

/* The path is s..t, each step an arc, and its length equals dist. */
static void check_path(const gp_graph *g, uint32_t s, uint32_t t, const gp_path *p, uint64_t dist) {
    assert_int_equal(p->dist, dist);
    if (dist == INF) {
        assert_int_equal(p->len, 0);
        return;
    }
    assert_true(p->len >= 1);
    assert_int_equal(p->nodes[0], s);
    assert_int_equal(p->nodes[p->len - 1], t);
    uint64_t sum = 0;
    for (uint32_t i = 0; i + 1 < p->len; i++) {
        uint64_t w = arc_w(g, p->nodes[i], p->nodes[i + 1]);
        assert_true(w != INF);
        sum += w;
    }
    assert_int_equal(sum, dist);
}

/* pred realises dist: dist[pred[v]] + w(pred[v], v) == dist[v]. */
static void check_pred(const gp_graph *g, uint32_t s, const uint64_t *dist, const uint32_t *pred) {
    for (uint32_t v = 0; v < g->n; v++) {
        if (v == s || dist[v] == INF) {
            assert_int_equal(pred[v], NONE);
            continue;
        }
        uint32_t u = pred[v];
        assert_true(u < g->n);
        uint64_t w = arc_w(g, u, v);
        assert_true(w != INF);
        /* some parallel arc (not necessarily the lightest) realises it; the lightest must too */
        assert_int_equal(dist[u] + w, dist[v]);
    }
}

/* Following next hops from i reaches j with total length dist[i][j]. */
static void check_next(const gp_graph *g, const uint64_t *dist, const uint32_t *next) {
    uint32_t n = g->n;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            uint64_t d = dist[(size_t)i * n + j];
            uint32_t h = next[(size_t)i * n + j];
            if (i == j || d == INF) {
                assert_int_equal(h, NONE);
                continue;
            }
            uint64_t sum = 0;
            uint32_t u = i, steps = 0;
            while (u != j) {
                uint32_t x = next[(size_t)u * n + j];
                assert_true(x < n);
                uint64_t w = arc_w(g, u, x);
                assert_true(w != INF);
                sum += w;
                u = x;
                assert_true(++steps <= n);
            }
            assert_int_equal(sum, d);
        }
}

static gp_backend *cpu(int threads) {
    gp_err err;
    gp_backend *b = gp_cpu_backend_new(threads, &err);
    assert_non_null(b);
    return b;
}

/* ---------------------------------------------------------------------------------------------
 * hand-drawn graphs */

/* 0 -4-> 1, 0 -1-> 2, 2 -2-> 1, 1 -1-> 3, 1 -7-> 3 (parallel), 2 -5-> 3, 3 -0-> 3 (self-loop),
 * 3 -0-> 5 (zero weight), 5 -3-> 1; node 4 isolated. */
static const arc HAND[] = {{0, 1, 4}, {0, 2, 1}, {2, 1, 2}, {1, 3, 1}, {1, 3, 7},
                           {2, 3, 5}, {3, 3, 0}, {3, 5, 0}, {5, 1, 3}};

static void test_hand_graph(void **state) {
    (void)state;
    gp_graph *g = build(6, HAND, sizeof HAND / sizeof HAND[0], NULL, NULL);
    gp_backend *b = cpu(2);
    gp_err err;
    uint64_t dist[6];
    uint32_t pred[6];
    assert_int_equal(b->ops->sssp(b, g, 0, INF, dist, pred, &err), GP_OK);
    const uint64_t want[6] = {0, 3, 1, 4, INF, 4};
    const uint32_t wantp[6] = {NONE, 2, 0, 1, NONE, 3};
    for (int v = 0; v < 6; v++) {
        assert_int_equal(dist[v], want[v]);
        assert_int_equal(pred[v], wantp[v]);
    }
    /* routes with literal paths */
    const uint32_t p05[] = {0, 2, 1, 3, 5};
    for (int algo = GP_P2P_AUTO; algo <= GP_P2P_BIDIR; algo++) {
        gp_path p;
        assert_int_equal(b->ops->p2p(b, g, 0, 5, algo, &p, &err), GP_OK);
        assert_int_equal(p.dist, 4);
        assert_int_equal(p.len, 5);
        assert_memory_equal(p.nodes, p05, sizeof p05);
        gp_path_free(&p);
        assert_int_equal(b->ops->p2p(b, g, 0, 4, algo, &p, &err), GP_OK); /* unreachable */
        assert_int_equal(p.dist, INF);
        assert_int_equal(p.len, 0);
        gp_path_free(&p);
        assert_int_equal(b->ops->p2p(b, g, 3, 3, algo, &p, &err), GP_OK); /* to itself */
        assert_int_equal(p.dist, 0);
        assert_int_equal(p.len, 1);
        assert_int_equal(p.nodes[0], 3);
        gp_path_free(&p);
        assert_int_equal(b->ops->p2p(b, g, 5, 3, algo, &p, &err), GP_OK); /* 5-1-3 = 4 */
        assert_int_equal(p.dist, 4);
        assert_int_equal(p.len, 3);
        gp_path_free(&p);
    }
    /* A* without coordinates is unsupported */
    gp_path p;
    assert_int_equal(b->ops->p2p(b, g, 0, 5, GP_P2P_ASTAR, &p, &err), GP_EUNSUPPORTED);
    /* bad node index */
    assert_int_equal(b->ops->p2p(b, g, 0, 6, GP_P2P_DIJKSTRA, &p, &err), GP_EINVAL);
    /* table */
    uint32_t src[] = {0, 4, 5}, dst[] = {3, 4, 0, 1};
    uint64_t tab[12];
    assert_int_equal(b->ops->table(b, g, src, 3, dst, 4, tab, &err), GP_OK);
    const uint64_t wt[12] = {4, INF, 0, 3, INF, 0, INF, INF, 4, INF, INF, 3};
    for (int i = 0; i < 12; i++) assert_int_equal(tab[i], wt[i]);
    /* apsp with next hops */
    uint64_t d[36];
    uint32_t nx[36];
    assert_int_equal(b->ops->apsp(b, g, d, nx, &err), GP_OK);
    for (int v = 0; v < 6; v++) assert_int_equal(d[v], want[v]);
    assert_int_equal(d[3 * 6 + 3], 0); /* self-loop of weight 0 and the diagonal */
    assert_int_equal(d[1 * 6 + 3], 1); /* the lighter of the parallel arcs */
    assert_int_equal(d[3 * 6 + 1], 3); /* 3 -0-> 5 -3-> 1 */
    assert_int_equal(d[4 * 6 + 0], INF);
    assert_int_equal(nx[0 * 6 + 3], 2);
    assert_int_equal(nx[2 * 6 + 5], 1);
    assert_int_equal(nx[3 * 6 + 1], 5);
    assert_int_equal(nx[0 * 6 + 0], NONE);
    assert_int_equal(nx[4 * 6 + 1], NONE);
    check_next(g, d, nx);
    /* without next */
    uint64_t d2[36];
    assert_int_equal(b->ops->apsp(b, g, d2, NULL, &err), GP_OK);
    assert_memory_equal(d, d2, sizeof d);
    gp_backend_info in;
    b->ops->info(b, &in);
    assert_string_equal(in.name, "cpu");
    assert_int_equal(in.threads, 2);
    assert_true(in.healthy);
    gp_backend_destroy(b);
    gp_graph_unref(g);
}

/* Repeated sources and targets, a target equal to its source, and an empty table. */
static void test_table_repeats(void **state) {
    (void)state;
    gp_graph *g = build(6, HAND, sizeof HAND / sizeof HAND[0], NULL, NULL);
    gp_backend *b = cpu(3);
    gp_err err;
    uint32_t src[] = {5, 0, 5}, dst[] = {1, 1, 4, 0, 5};
    uint64_t tab[15];
    assert_int_equal(b->ops->table(b, g, src, 3, dst, 5, tab, &err), GP_OK);
    const uint64_t want[15] = {3, 3, INF, INF, 0, 3, 3, INF, 0, 4, 3, 3, INF, INF, 0};
    for (int i = 0; i < 15; i++) assert_int_equal(tab[i], want[i]);
    assert_int_equal(b->ops->table(b, g, src, 0, dst, 5, tab, &err), GP_OK);
    uint32_t bad = 6;
    assert_int_equal(b->ops->table(b, g, src, 3, &bad, 1, tab, &err), GP_EINVAL);
    gp_backend_destroy(b);
    gp_graph_unref(g);
}

static void test_one_node(void **state) {
    (void)state;
    const arc loop[] = {{0, 0, 5}};
    for (int withloop = 0; withloop < 2; withloop++) {
        gp_graph *g = build(1, loop, (size_t)withloop, NULL, NULL);
        gp_backend *b = cpu(4);
        gp_err err;
        uint64_t d;
        uint32_t pr, nx;
        assert_int_equal(b->ops->sssp(b, g, 0, INF, &d, &pr, &err), GP_OK);
        assert_int_equal(d, 0);
        assert_int_equal(pr, NONE);
        for (int algo = GP_P2P_AUTO; algo <= GP_P2P_BIDIR; algo++) {
            gp_path p;
            assert_int_equal(b->ops->p2p(b, g, 0, 0, algo, &p, &err), GP_OK);
            assert_int_equal(p.dist, 0);
            assert_int_equal(p.len, 1);
            gp_path_free(&p);
        }
        uint32_t s = 0;
        assert_int_equal(b->ops->table(b, g, &s, 1, &s, 1, &d, &err), GP_OK);
        assert_int_equal(d, 0);
        assert_int_equal(b->ops->apsp(b, g, &d, &nx, &err), GP_OK);
        assert_int_equal(d, 0);
        assert_int_equal(nx, NONE);
        gp_backend_destroy(b);
        gp_graph_unref(g);
    }
}

static void test_two_nodes(void **state) {
    (void)state;
    const arc a[] = {{0, 1, 5}, {0, 1, 3}};
    gp_graph *g = build(2, a, 2, NULL, NULL);
    gp_backend *b = cpu(1);
    gp_err err;
    for (int algo = GP_P2P_AUTO; algo <= GP_P2P_BIDIR; algo++) {
        gp_path p;
        assert_int_equal(b->ops->p2p(b, g, 0, 1, algo, &p, &err), GP_OK);
        check_path(g, 0, 1, &p, 3);
        gp_path_free(&p);
        assert_int_equal(b->ops->p2p(b, g, 1, 0, algo, &p, &err), GP_OK);
        check_path(g, 1, 0, &p, INF);
        gp_path_free(&p);
    }
    uint64_t d[4];
    uint32_t nx[4];
    assert_int_equal(b->ops->apsp(b, g, d, nx, &err), GP_OK);
    assert_int_equal(d[0], 0);
    assert_int_equal(d[1], 3);
    assert_int_equal(d[2], INF);
    assert_int_equal(d[3], 0);
    assert_int_equal(nx[1], 1);
    assert_int_equal(nx[2], NONE);
    gp_backend_destroy(b);
    gp_graph_unref(g);
}

/* ---------------------------------------------------------------------------------------------
 * cross-checks on random graphs */

static void cross_check(uint32_t n, uint32_t deg, uint32_t maxw, int threads) {
    gp_graph *g = random_graph(n, deg, maxw, 1);
    gp_backend *b = cpu(threads);
    gp_err err;
    size_t nn = (size_t)n * n;
    uint64_t *sd = malloc(nn * sizeof *sd), *fw = malloc(nn * sizeof *fw),
             *tab = malloc(nn * sizeof *tab);
    uint32_t *nx = malloc(nn * sizeof *nx), *pred = malloc(n * sizeof *pred),
             *all = malloc(n * sizeof *all);
    for (uint32_t s = 0; s < n; s++) {
        all[s] = s;
        assert_int_equal(b->ops->sssp(b, g, s, INF, sd + (size_t)s * n, pred, &err), GP_OK);
        check_pred(g, s, sd + (size_t)s * n, pred);
    }
    assert_int_equal(b->ops->table(b, g, all, n, all, n, tab, &err), GP_OK);
    assert_memory_equal(tab, sd, nn * sizeof *sd);
    assert_int_equal(b->ops->apsp(b, g, fw, nx, &err), GP_OK);
    assert_memory_equal(fw, sd, nn * sizeof *sd);
    check_next(g, fw, nx);
    assert_int_equal(b->ops->apsp(b, g, fw, NULL, &err), GP_OK);
    assert_memory_equal(fw, sd, nn * sizeof *sd);
    /* point-to-point: all pairs for small n, a sample otherwise */
    uint32_t pairs = n <= 40 ? n * n : 600;
    for (uint32_t k = 0; k < pairs; k++) {
        uint32_t s = n <= 40 ? k / n : (uint32_t)(rnd() % n);
        uint32_t t = n <= 40 ? k % n : (uint32_t)(rnd() % n);
        uint64_t want = sd[(size_t)s * n + t];
        for (int algo = GP_P2P_AUTO; algo <= GP_P2P_ASTAR; algo++) {
            gp_path p;
            assert_int_equal(b->ops->p2p(b, g, s, t, algo, &p, &err), GP_OK);
            check_path(g, s, t, &p, want);
            gp_path_free(&p);
        }
    }
    free(sd);
    free(fw);
    free(tab);
    free(nx);
    free(pred);
    free(all);
    gp_backend_destroy(b);
    gp_graph_unref(g);
}

static void test_random_cross_check(void **state) {
    (void)state;
    /* A* on the binary heap too (its fallback when rounding breaks the radix heap's order), and
     * APSP's portable row update (the reference of its AVX2 version) */
    gp_engine_lab lab;
    gp_engine_lab_defaults(&lab);
    lab.astar_binary = 1;
    lab.cpu_avx2 = 0;
    gp_engine_lab_set(&lab);
    cross_check(100, 3, 20, 2);
    cross_check(257, 2, 1000, 2);
    gp_engine_lab_set(NULL);
    static const uint32_t sizes[] = {1, 2, 31, 33, 65, 100, 129, 257};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        cross_check(sizes[i], 3, 20, 3); /* sparse, zero weights present */
        cross_check(sizes[i], 1, 3, 2);  /* very sparse: many unreachable pairs, many ties */
    }
    cross_check(200, 8, 1000, 1);        /* denser, single thread */
    cross_check(150, 4, 0, 4);           /* every weight zero */
    cross_check(100, 3, 4000000000u, 2); /* weights near UINT32_MAX: 64-bit path lengths */
}

/* A* and bidirectional Dijkstra on generated road graphs agree with plain Dijkstra. */
static void test_road_astar(void **state) {
    (void)state;
    gp_err err;
    gp_backend *b = cpu(2);
    const uint64_t sizes[] = {100, 2500, 20000};
    for (size_t i = 0; i < 3; i++) {
        gp_graph *g = gp_generate_road(sizes[i], 11 + i, &err);
        assert_non_null(g);
        assert_non_null(g->lon);
        uint64_t *dist = malloc(g->n * sizeof *dist);
        for (int k = 0; k < 20; k++) {
            uint32_t s = (uint32_t)(rnd() % g->n), t = (uint32_t)(rnd() % g->n);
            assert_int_equal(b->ops->sssp(b, g, s, INF, dist, NULL, &err), GP_OK);
            uint64_t settled[4] = {0};
            for (int algo = GP_P2P_DIJKSTRA; algo <= GP_P2P_ASTAR; algo++) {
                gp_path p;
                assert_int_equal(b->ops->p2p(b, g, s, t, algo, &p, &err), GP_OK);
                check_path(g, s, t, &p, dist[t]);
                settled[algo] = p.settled;
                gp_path_free(&p);
            }
            /* the goal-directed searches never settle more than plain Dijkstra here (+ slack for
             * the bidirectional one counting both frontiers) */
            assert_true(settled[GP_P2P_ASTAR] <= settled[GP_P2P_DIJKSTRA] + 16);
        }
        free(dist);
        gp_graph_unref(g);
    }
    gp_backend_destroy(b);
}

/* A node without coordinates must not let A* overestimate. The arc 4 -> 5 (111 km, cost 111000)
 * alone sets the weight-per-metre bound (~1 per metre); every other arc touches a node without
 * coordinates or has zero length. 0 and 1 share a point ~1000 km from 3: with the bound, 1 would
 * look ~10^6 away, and A* would settle 3 at 100 via 6 before trying the path 0-1-2-3 of cost 3. */
static void test_astar_partial_coords(void **state) {
    (void)state;
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    static const struct {
        int64_t id;
        int has;
        double lon, lat;
    } nodes[] = {{0, 1, 0.0, 45.0}, {1, 1, 0.0, 45.0}, {2, 0, 0, 0}, {3, 1, 13.0, 45.0},
                 {4, 1, 0.0, 0.0},  {5, 1, 1.0, 0.0},  {6, 0, 0, 0}};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        assert_int_equal(gp_builder_add_node(b, nodes[i].id, nodes[i].has, nodes[i].lon,
                                             nodes[i].lat, NULL, &err),
                         GP_OK);
    static const arc arcs[] = {{0, 1, 1},  {1, 2, 1},  {2, 3, 1},
                               {0, 6, 50}, {6, 3, 50}, {4, 5, 111000}};
    for (size_t i = 0; i < sizeof arcs / sizeof arcs[0]; i++)
        assert_int_equal(gp_builder_add_arc(b, arcs[i].u, arcs[i].v, arcs[i].w, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "t", "t", 1, &err);
    assert_non_null(g);
    assert_non_null(g->lon);
    gp_backend *be = cpu(1);
    assert_int_equal(be->ops->attach(be, g, &err), GP_OK);
    gp_path p;
    assert_int_equal(be->ops->p2p(be, g, 0, 3, GP_P2P_ASTAR, &p, &err), GP_OK);
    check_path(g, 0, 3, &p, 3);
    gp_path_free(&p);
    gp_backend_destroy(be);
    gp_graph_unref(g);
}

/* max_dist: nodes within the limit have their exact distance, the rest are unreachable. */
static void test_max_dist(void **state) {
    (void)state;
    gp_err err;
    gp_graph *g = random_graph(500, 3, 50, 0);
    gp_backend *b = cpu(1);
    uint64_t *full = malloc(g->n * sizeof *full), *cut = malloc(g->n * sizeof *cut);
    uint32_t *pred = malloc(g->n * sizeof *pred);
    for (uint32_t s = 0; s < 20; s++) {
        assert_int_equal(b->ops->sssp(b, g, s, INF, full, NULL, &err), GP_OK);
        const uint64_t limits[] = {0, 1, 7, 40, 100, 1000};
        for (int k = 0; k < 6; k++) {
            assert_int_equal(b->ops->sssp(b, g, s, limits[k], cut, pred, &err), GP_OK);
            for (uint32_t v = 0; v < g->n; v++)
                assert_int_equal(cut[v], full[v] <= limits[k] ? full[v] : INF);
            check_pred(g, s, cut, pred);
        }
    }
    free(full);
    free(cut);
    free(pred);
    gp_backend_destroy(b);
    gp_graph_unref(g);
}

/* Concurrent callers on one backend (workspace pool): every answer stays right. */
typedef struct conc {
    gp_backend *b;
    const gp_graph *g;
    const uint64_t *ref; /* dist from node 0 */
    int bad;
} conc;

#include <pthread.h>
static void *conc_main(void *arg) {
    conc *c = arg;
    gp_err err;
    for (uint32_t t = 0; t < c->g->n; t += 7) {
        gp_path p;
        if (c->b->ops->p2p(c->b, c->g, 0, t, GP_P2P_BIDIR, &p, &err) != GP_OK ||
            p.dist != c->ref[t])
            c->bad++;
        gp_path_free(&p);
    }
    return NULL;
}

static void test_concurrent(void **state) {
    (void)state;
    gp_err err;
    gp_graph *g = random_graph(400, 3, 30, 0);
    gp_backend *b = cpu(2);
    uint64_t *ref = malloc(g->n * sizeof *ref);
    assert_int_equal(b->ops->sssp(b, g, 0, INF, ref, NULL, &err), GP_OK);
    pthread_t th[4];
    conc c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (conc){b, g, ref, 0};
        assert_int_equal(pthread_create(&th[i], NULL, conc_main, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(c[i].bad, 0);
    }
    free(ref);
    gp_backend_destroy(b);
    gp_graph_unref(g);
}

/* ---------------------------------------------------------------------------------------------
 * engine fallback */

typedef struct fake {
    int rc;      /* what every op answers */
    int healthy; /* what info reports */
    int calls;
} fake;

static int fk_sssp(gp_backend *b, const gp_graph *g, uint32_t s, uint64_t md, uint64_t *d,
                   uint32_t *p, gp_err *err) {
    (void)g, (void)s, (void)md, (void)d, (void)p;
    fake *f = b->impl;
    f->calls++;
    return gp_err_set(err, f->rc, "fake backend answers %d", f->rc);
}
static int fk_p2p(gp_backend *b, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
                  gp_err *err) {
    (void)g, (void)s, (void)t, (void)algo, (void)path;
    fake *f = b->impl;
    f->calls++;
    return gp_err_set(err, f->rc, "fake backend answers %d", f->rc);
}
static int fk_table(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                    const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    (void)g, (void)src, (void)ns, (void)dst, (void)nt, (void)out;
    fake *f = b->impl;
    f->calls++;
    return gp_err_set(err, f->rc, "fake backend answers %d", f->rc);
}
static int fk_apsp(gp_backend *b, const gp_graph *g, uint64_t *d, uint32_t *nx, gp_err *err) {
    (void)g, (void)d, (void)nx;
    fake *f = b->impl;
    f->calls++;
    return gp_err_set(err, f->rc, "fake backend answers %d", f->rc);
}
static void fk_info(gp_backend *b, gp_backend_info *out) {
    fake *f = b->impl;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "cuda");
    out->healthy = f->healthy;
}
static void fk_destroy(gp_backend *b) { (void)b; }
static const gp_backend_ops FAKE_OPS = {NULL,    fk_sssp, fk_p2p,    fk_table,
                                        fk_apsp, fk_info, fk_destroy};

static void test_engine_fallback(void **state) {
    (void)state;
    gp_err err;
    gp_graph *g = build(6, HAND, sizeof HAND / sizeof HAND[0], NULL, NULL);
    /* plain CPU engine */
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_string_equal(gp_engine_backend(e), "cpu");
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    gp_path p;
    assert_int_equal(gp_engine_p2p(e, g, 0, 5, GP_P2P_AUTO, &p, &err), GP_OK);
    assert_int_equal(p.dist, 4);
    gp_path_free(&p);
    gp_engine_free(e);
    assert_null(gp_engine_new("tpu", 0, NULL, &err));
    assert_int_equal(err.code, GP_EINVAL);
    /* auto always answers (CUDA when usable, else CPU); cuda fails without a CUDA build */
    e = gp_engine_new("auto", 1, NULL, &err);
    assert_non_null(e);
    uint64_t d[6];
    assert_int_equal(gp_engine_sssp(e, g, 0, INF, d, NULL, &err), GP_OK);
    assert_int_equal(d[3], 4);
    gp_engine_free(e);
    if (!gp_cuda_compiled()) assert_null(gp_engine_new("cuda", 1, NULL, &err));

    /* fake primaries */
    fake f = {GP_EUNSUPPORTED, 1, 0};
    gp_backend fb = {&FAKE_OPS, &f};
    e = gp_engine_new("cpu", 1, NULL, &err);
    assert_non_null(e);
    e->primary = &fb;
    assert_string_equal(gp_engine_backend(e), "cuda");
    /* unsupported: answered by the CPU, primary stays in service */
    assert_int_equal(gp_engine_sssp(e, g, 0, INF, d, NULL, &err), GP_OK);
    assert_int_equal(d[1], 3);
    uint64_t apsp[36];
    assert_int_equal(gp_engine_apsp(e, g, apsp, NULL, &err), GP_OK);
    assert_int_equal(apsp[3], 4);
    uint32_t s = 0, t = 3;
    uint64_t tab;
    assert_int_equal(gp_engine_table(e, g, &s, 1, &t, 1, &tab, &err), GP_OK);
    assert_int_equal(tab, 4);
    assert_int_equal(f.calls, 3);
    assert_int_equal(e->primary_failed, 0);
    /* non-sticky device error: the call fails, no fallback */
    f.rc = GP_EDEVICE;
    assert_int_equal(gp_engine_p2p(e, g, 0, 5, GP_P2P_AUTO, &p, &err), GP_EDEVICE);
    assert_int_equal(e->primary_failed, 0);
    /* sticky device error: answered on the CPU, primary retired */
    f.healthy = 0;
    assert_int_equal(gp_engine_p2p(e, g, 0, 5, GP_P2P_AUTO, &p, &err), GP_OK);
    assert_int_equal(p.dist, 4);
    gp_path_free(&p);
    assert_int_equal(e->primary_failed, 1);
    assert_string_equal(gp_engine_backend(e), "cpu");
    int calls = f.calls;
    assert_int_equal(gp_engine_sssp(e, g, 0, INF, d, NULL, &err), GP_OK);
    assert_int_equal(f.calls, calls); /* straight to the CPU now */
    e->primary = e->cpu;              /* the fake is not heap-owned */
    gp_engine_free(e);
    gp_graph_unref(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_graph),
        cmocka_unit_test(test_table_repeats),
        cmocka_unit_test(test_one_node),
        cmocka_unit_test(test_two_nodes),
        cmocka_unit_test(test_random_cross_check),
        cmocka_unit_test(test_road_astar),
        cmocka_unit_test(test_astar_partial_coords),
        cmocka_unit_test(test_max_dist),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_engine_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
