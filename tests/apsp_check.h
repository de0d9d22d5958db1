/* apsp_check.h - random graphs and all-pairs checks shared by tests/test_gpu_apsp.c and the kernel
 * lab bench/lab_fw.cu (header-only, static functions; C11 and C++).
 *
 * apc_graph builds a directed graph of n nodes (ids 0..n-1, so internal index = id) where each
 * ordered pair (i, j) gets an arc with probability p, weight uniform in [wmin, wmax]; it adds a few
 * self-loops and heavier / lighter parallel arcs so the "lightest parallel arc" and "self-loops
 * never count" rules are exercised. Nodes without arcs stay, giving unreachable pairs.
 * The checks compare a distance matrix with a reference and verify that a next-hop matrix realises
 * the distances (w(i, next) + d(next, j) == d(i, j) with the lightest i->next arc) and that
 * following next hops from i reaches j in at most n - 1 steps. Messages go into a caller buffer.
 */
#ifndef GP_APSP_CHECK_H
#define GP_APSP_CHECK_H

#include "graph/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t apc_rand(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline gp_graph *apc_graph(uint32_t n, double p, uint32_t wmin, uint32_t wmax, uint64_t seed,
                                  gp_err *err) {
    gp_builder *b = gp_builder_new(1.0);
    if (!b) return NULL;
    uint64_t s = seed * 7919 + n;
    uint64_t thresh = (uint64_t)(p * 18446744073709551615.0);
    if (p >= 1.0) thresh = UINT64_MAX;
    uint32_t span = wmax - wmin + 1;
    for (uint32_t i = 0; i < n; i++) {
        if (gp_builder_add_node(b, i, 0, 0, 0, NULL, err) != GP_OK) goto fail;
        for (uint32_t j = 0; j < n; j++) {
            uint64_t r = apc_rand(&s);
            if (i == j || r > thresh || p <= 0) continue;
            uint32_t w = wmin + (uint32_t)(apc_rand(&s) % span);
            if (gp_builder_add_arc(b, i, j, w, err) != GP_OK) goto fail;
            if (apc_rand(&s) % 16 == 0) { /* a parallel arc, lighter or heavier */
                uint32_t w2 = wmin + (uint32_t)(apc_rand(&s) % span);
                if (gp_builder_add_arc(b, i, j, w2, err) != GP_OK) goto fail;
            }
        }
        if (apc_rand(&s) % 8 == 0 && gp_builder_add_arc(b, i, i, wmin, err) != GP_OK) goto fail;
    }
    return gp_builder_finish(b, "apsp-check", "gen", 1, err);
fail:
    gp_builder_free(b);
    return NULL;
}

/* Rows rows[0..nr) of a (n x n) against ref (nr x n, row r of ref is row rows[r] of a). */
static inline int apc_rows_equal(uint32_t n, const uint64_t *a, const uint64_t *ref,
                                 const uint32_t *rows, uint32_t nr, char *msg, size_t len) {
    for (uint32_t r = 0; r < nr; r++)
        for (uint32_t j = 0; j < n; j++) {
            uint64_t x = a[(size_t)rows[r] * n + j], y = ref[(size_t)r * n + j];
            if (x != y) {
                snprintf(msg, len, "dist[%u][%u] = %llu, reference %llu", rows[r], j,
                         (unsigned long long)x, (unsigned long long)y);
                return 0;
            }
        }
    return 1;
}

static inline int apc_equal(uint32_t n, const uint64_t *a, const uint64_t *ref, char *msg,
                            size_t len) {
    for (size_t t = 0; t < (size_t)n * n; t++)
        if (a[t] != ref[t]) {
            snprintf(msg, len, "dist[%zu][%zu] = %llu, reference %llu", t / n, t % n,
                     (unsigned long long)a[t], (unsigned long long)ref[t]);
            return 0;
        }
    return 1;
}

/* Next hops realise dist, and walks terminate. */
static inline int apc_next_ok(const gp_graph *g, const uint64_t *dist, const uint32_t *next,
                              char *msg, size_t len) {
    uint32_t n = g->n;
    uint64_t *minw = (uint64_t *)malloc((size_t)n * sizeof *minw);
    int ok = 1;
    if (!minw) {
        snprintf(msg, len, "out of memory");
        return 0;
    }
    for (uint32_t j = 0; j < n; j++) minw[j] = GP_INF;
    for (uint32_t i = 0; i < n && ok; i++) {
        for (uint32_t e = g->row[i]; e < g->row[i + 1]; e++)
            if (g->w[e] < minw[g->col[e]]) minw[g->col[e]] = g->w[e];
        const uint64_t *di = dist + (size_t)i * n;
        const uint32_t *ni = next + (size_t)i * n;
        for (uint32_t j = 0; j < n && ok; j++) {
            uint32_t x = ni[j];
            if (i == j || di[j] == GP_INF) {
                if (x != GP_NONE || (i == j && di[j] != 0)) {
                    snprintf(msg, len, "(%u,%u): dist %llu, next %u (want none%s)", i, j,
                             (unsigned long long)di[j], x, i == j ? ", dist 0" : "");
                    ok = 0;
                }
                continue;
            }
            if (x >= n || x == i || minw[x] == GP_INF ||
                minw[x] + dist[(size_t)x * n + j] != di[j]) {
                snprintf(msg, len, "(%u,%u): next %u does not realise dist %llu", i, j, x,
                         (unsigned long long)di[j]);
                ok = 0;
                continue;
            }
            uint32_t v = i, steps = 0;
            while (v != j && v < n && steps < n) {
                v = next[(size_t)v * n + j];
                steps++;
            }
            if (v != j) {
                snprintf(msg, len, "(%u,%u): following next hops does not reach the target", i, j);
                ok = 0;
            }
        }
        for (uint32_t e = g->row[i]; e < g->row[i + 1]; e++) minw[g->col[e]] = GP_INF;
    }
    free(minw);
    return ok;
}

#endif
