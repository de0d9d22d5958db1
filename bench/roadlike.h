/* roadlike.h - how road-like a graph is: the measures of issue 18, shared by bench/roadlike.c (the
 * results table) and tests/test_roadlike.c (the bounds against the real DIMACS graphs).
 *
 * All measures are on the undirected simple graph underneath (an arc either way is an edge;
 * self-loops and parallel arcs dropped), as METIS and a CCH see it:
 *  - mean degree: arcs / nodes of the directed graph (the DIMACS graphs store each road both ways,
 *    so this is also the undirected degree for them);
 *  - hop diameter: a lower bound by iterated double-sweep BFS (BFS from node 0, then from the
 *    farthest node found, twice more; the largest eccentricity seen), exact on trees and tight on
 *    road networks in practice;
 *  - nested-dissection fill: METIS_NodeND (METIS defaults) orders the nodes; a symbolic Cholesky
 *    factorisation of that order gives each column's count c_j of non-zeros below the diagonal of
 *    L, via the elimination tree and row subtrees (Liu 1986). fill = sum c_j and operation count =
 *    sum c_j^2 - c_j: the definitions of METIS's own ComputeFillIn, i.e. the "Nonzeros" and
 *    "Operation Count" ndmetis prints. METIS is randomised and one ordering's operation count
 *    varies by ~15% with its seed, so several orderings are made (ROADLIKE_ND_SEEDS by default)
 *    and the one with the fewest operations is kept (as a CCH would keep its best order).
 * Link with -lmetis.
 */
#ifndef GP_BENCH_ROADLIKE_H
#define GP_BENCH_ROADLIKE_H

#include "graph/graph.h"

#include <metis.h>
#include <stdint.h>

/* METIS orderings tried per graph by default (seeds 1..ROADLIKE_ND_SEEDS); the best is kept */
#define ROADLIKE_ND_SEEDS 3
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct roadlike {
    uint64_t n, arcs, edges; /* nodes, directed arcs, undirected simple edges */
    double mean_degree;      /* arcs / n */
    uint32_t hop_diameter;   /* double-sweep lower bound */
    uint32_t components;     /* weakly connected components */
    double fill, opc;        /* nnz(L) and operation count of the METIS order (0 when skipped) */
    double nd_seconds;       /* one METIS_NodeND and symbolic factorisation */
    int nd_seeds;            /* orderings tried */
} roadlike;

/* The undirected simple adjacency of g (METIS layout): xadj n+1, adj xadj[n]. 0, or -1 on OOM. */
static int roadlike_adjacency(const gp_graph *g, idx_t **xadj_out, idx_t **adj_out) {
    const uint32_t n = g->n;
    idx_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    idx_t *adj = malloc(((size_t)g->m * 2 + 1) * sizeof *adj);
    if (!xadj || !adj) {
        free(xadj);
        free(adj);
        return -1;
    }
    idx_t k = 0;
    xadj[0] = 0;
    for (uint32_t u = 0; u < n; u++) {
        /* merge the out-heads and in-tails, both ascending */
        uint32_t i = g->row[u], ie = g->row[u + 1], j = g->rrow[u], je = g->rrow[u + 1];
        idx_t last = -1;
        while (i < ie || j < je) {
            uint32_t v = (j >= je || (i < ie && g->col[i] <= g->rcol[j])) ? g->col[i++]
                                                                          : g->rcol[j++];
            if (v == u || (idx_t)v == last) continue;
            adj[k++] = (idx_t)v;
            last = (idx_t)v;
        }
        xadj[u + 1] = k;
    }
    *xadj_out = xadj;
    *adj_out = adj;
    return 0;
}

/* BFS from s: hop distances into dist (UINT32_MAX unreached), returns the farthest node; *ecc its
 * distance. queue: n entries. */
static uint32_t roadlike_bfs(uint32_t n, const idx_t *xadj, const idx_t *adj, uint32_t s,
                             uint32_t *dist, uint32_t *queue, uint32_t *ecc) {
    memset(dist, 0xff, (size_t)n * sizeof *dist);
    uint32_t head = 0, tail = 0, far = s;
    dist[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        uint32_t u = queue[head++];
        far = u;
        for (idx_t i = xadj[u]; i < xadj[u + 1]; i++) {
            uint32_t v = (uint32_t)adj[i];
            if (dist[v] == UINT32_MAX) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    *ecc = dist[far];
    return far;
}

/* Column counts of the Cholesky factor of the matrix with pattern (xadj, adj) in the order perm
 * (new -> old) / iperm (old -> new): nnz(L) and the operation count. 0, or -1 on OOM. */
static int roadlike_symbolic(uint32_t n, const idx_t *xadj, const idx_t *adj, const idx_t *perm,
                             const idx_t *iperm, double *fill, double *opc) {
    idx_t *parent = malloc((size_t)n * sizeof *parent), *anc = malloc((size_t)n * sizeof *anc);
    idx_t *mark = malloc((size_t)n * sizeof *mark);
    uint64_t *cnt = calloc(n, sizeof *cnt);
    if (!parent || !anc || !mark || !cnt) {
        free(parent);
        free(anc);
        free(mark);
        free(cnt);
        return -1;
    }
    /* elimination tree (Liu's algorithm with path compression through anc) */
    for (uint32_t i = 0; i < n; i++) {
        parent[i] = anc[i] = -1;
        idx_t old = perm[i];
        for (idx_t p = xadj[old]; p < xadj[old + 1]; p++) {
            idx_t k = iperm[adj[p]];
            while (k != -1 && k < (idx_t)i) {
                idx_t next = anc[k];
                anc[k] = (idx_t)i;
                if (next == -1) parent[k] = (idx_t)i;
                k = next;
            }
        }
    }
    /* row subtrees: row i of L holds j < i on the etree paths from A's entries (i, k) up to i */
    for (uint32_t i = 0; i < n; i++) {
        mark[i] = (idx_t)i;
        cnt[i]++; /* the diagonal */
        idx_t old = perm[i];
        for (idx_t p = xadj[old]; p < xadj[old + 1]; p++)
            for (idx_t k = iperm[adj[p]]; k < (idx_t)i && mark[k] != (idx_t)i; k = parent[k]) {
                mark[k] = (idx_t)i;
                cnt[k]++;
            }
    }
    double f = 0, o = 0;
    for (uint32_t j = 0; j < n; j++) {
        double c = (double)cnt[j] - 1; /* below the diagonal */
        f += c;
        o += c * c - c;
    }
    *fill = f;
    *opc = o;
    free(parent);
    free(anc);
    free(mark);
    free(cnt);
    return 0;
}

/* Measures g; the METIS fill from the best of nd_seeds orderings (0: none). 0, or -1 on OOM /
 * METIS failure. */
static int roadlike_measure(const gp_graph *g, int nd_seeds, roadlike *r) {
    memset(r, 0, sizeof *r);
    r->nd_seeds = nd_seeds;
    const uint32_t n = g->n;
    idx_t *xadj, *adj;
    if (roadlike_adjacency(g, &xadj, &adj)) return -1;
    r->n = n;
    r->arcs = g->m;
    r->edges = (uint64_t)xadj[n] / 2;
    r->mean_degree = n ? (double)g->m / n : 0;
    uint32_t *dist = malloc((size_t)n * sizeof *dist), *queue = malloc((size_t)n * sizeof *queue);
    int rc = -1;
    if (!dist || !queue) goto out;
    uint32_t ecc, s = 0;
    for (int round = 0; round < 3; round++) {
        s = roadlike_bfs(n, xadj, adj, s, dist, queue, &ecc);
        if (ecc > r->hop_diameter) r->hop_diameter = ecc;
    }
    /* weak components: BFS from every unreached node (dist reused as the seen mark) */
    memset(dist, 0xff, (size_t)n * sizeof *dist);
    for (uint32_t v = 0; v < n; v++) {
        if (dist[v] != UINT32_MAX) continue;
        r->components++;
        uint32_t head = 0, tail = 0;
        dist[v] = 0;
        queue[tail++] = v;
        while (head < tail) {
            uint32_t u = queue[head++];
            for (idx_t i = xadj[u]; i < xadj[u + 1]; i++)
                if (dist[adj[i]] == UINT32_MAX) {
                    dist[adj[i]] = 0;
                    queue[tail++] = (uint32_t)adj[i];
                }
        }
    }
    rc = 0;
    if (nd_seeds > 0) {
        idx_t nv = (idx_t)n, options[METIS_NOPTIONS];
        idx_t *perm = malloc((size_t)n * sizeof *perm), *iperm = malloc((size_t)n * sizeof *iperm);
        double t0 = gp_now();
        for (int seed = 1; seed <= nd_seeds && rc == 0; seed++) {
            double fill, opc;
            METIS_SetDefaultOptions(options);
            options[METIS_OPTION_SEED] = seed;
            if (!perm || !iperm ||
                METIS_NodeND(&nv, xadj, adj, NULL, options, perm, iperm) != METIS_OK ||
                roadlike_symbolic(n, xadj, adj, perm, iperm, &fill, &opc))
                rc = -1;
            else if (seed == 1 || opc < r->opc) {
                r->fill = fill;
                r->opc = opc;
            }
        }
        r->nd_seconds = (gp_now() - t0) / nd_seeds;
        free(perm);
        free(iperm);
    }
out:
    free(dist);
    free(queue);
    free(xadj);
    free(adj);
    return rc;
}

#endif
