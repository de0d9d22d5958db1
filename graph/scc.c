/* scc.c - strongly connected components (contract in scc.h): iterative Kosaraju, a post-order of
 * the forward CSR, then the reverse CSR in reverse post-order; O(n + m) time, 4n words of scratch.
 */
#include "graph/scc.h"

#include <stdlib.h>

uint8_t *gp_scc_big(const gp_graph *g, uint32_t min_size) {
    uint32_t n = g->n;
    uint32_t *order = malloc(sizeof *order * n), *stack = malloc(sizeof *stack * n);
    uint32_t *edge = malloc(sizeof *edge * n), *comp = malloc(sizeof *comp * n);
    uint8_t *big = calloc(n, 1);
    if (!order || !stack || !edge || !comp || !big) {
        free(big);
        big = NULL;
        goto done;
    }
    for (uint32_t v = 0; v < n; v++) comp[v] = GP_NONE;
    /* 1: post-order of the forward graph (comp doubles as the visited mark: 0 = seen) */
    uint32_t no = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (comp[r] != GP_NONE) continue;
        uint32_t sp = 0;
        stack[sp++] = r;
        comp[r] = 0;
        edge[r] = g->row[r];
        while (sp) {
            uint32_t v = stack[sp - 1];
            if (edge[v] < g->row[v + 1]) {
                uint32_t w = g->col[edge[v]++];
                if (comp[w] == GP_NONE) {
                    comp[w] = 0;
                    edge[w] = g->row[w];
                    stack[sp++] = w;
                }
            } else {
                order[no++] = v;
                sp--;
            }
        }
    }
    /* 2: the reverse graph in reverse post-order: each tree is one component */
    for (uint32_t v = 0; v < n; v++) comp[v] = GP_NONE;
    uint32_t best_size = 0, c = 0;
    for (uint32_t i1 = n; i1 > 0; i1--) { /* i = n-1 .. 0 without an unsigned wrap */
        uint32_t r = order[i1 - 1];
        if (comp[r] != GP_NONE) continue;
        uint32_t sp = 0, size = 0;
        stack[sp++] = r;
        comp[r] = c;
        while (sp) {
            uint32_t v = stack[--sp];
            size++;
            for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++) {
                uint32_t w = g->rcol[a];
                if (comp[w] == GP_NONE) {
                    comp[w] = c;
                    stack[sp++] = w;
                }
            }
        }
        if (size > best_size) best_size = size;
        edge[c] = size; /* edge[] is free now: component sizes by id */
        c++;
    }
    if (best_size < min_size) min_size = best_size;
    for (uint32_t v = 0; v < n; v++) big[v] = edge[comp[v]] >= min_size;
done:
    free(order);
    free(stack);
    free(edge);
    free(comp);
    return big;
}

