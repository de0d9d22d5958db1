/* scc.c - strongly connected components (contract in scc.h): iterative Kosaraju over the forward
 * and reverse CSR, with explicit stacks (no recursion, so a million-node chain is fine).
 */
#include "graph/scc.h"

#include <stdlib.h>

int gp_graph_scc(const gp_graph *g, uint32_t *comp, uint32_t *size, uint32_t *count, gp_err *err) {
    uint32_t n = g->n;
    uint32_t *order = malloc(sizeof *order * (n ? n : 1)),
             *stack = malloc(sizeof *stack * (n ? n : 1));
    uint32_t *edge = malloc(sizeof *edge * (n ? n : 1));
    if (!order || !stack || !edge) {
        free(order);
        free(stack);
        free(edge);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the components of %u nodes", n);
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
    uint32_t c = 0;
    for (uint32_t i1 = n; i1 > 0; i1--) { /* i = n-1 .. 0 without an unsigned wrap */
        uint32_t r = order[i1 - 1];
        if (comp[r] != GP_NONE) continue;
        uint32_t sp = 0, sz = 0;
        stack[sp++] = r;
        comp[r] = c;
        while (sp) {
            uint32_t v = stack[--sp];
            sz++;
            for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++) {
                uint32_t w = g->rcol[a];
                if (comp[w] == GP_NONE) {
                    comp[w] = c;
                    stack[sp++] = w;
                }
            }
        }
        size[c++] = sz;
    }
    *count = c;
    free(order);
    free(stack);
    free(edge);
    return GP_OK;
}

uint8_t *gp_scc_big(const gp_graph *g, uint32_t min_size) {
    uint32_t n = g->n, count = 0, best = 0;
    uint32_t *comp = malloc(sizeof *comp * (n ? n : 1)), *size = malloc(sizeof *size * (n ? n : 1));
    uint8_t *big = calloc(n ? n : 1, 1);
    gp_err err;
    if (!comp || !size || !big || gp_graph_scc(g, comp, size, &count, &err) != GP_OK) {
        free(big);
        big = NULL;
        goto done;
    }
    for (uint32_t c = 0; c < count; c++)
        if (size[c] > best) best = size[c];
    if (best < min_size) min_size = best;
    for (uint32_t v = 0; v < n; v++) big[v] = size[comp[v]] >= min_size;
done:
    free(comp);
    free(size);
    return big;
}
