/* scc.h - strongly connected components of a graph (graph/scc.c). */
#ifndef GP_SCC_H
#define GP_SCC_H

#include "graph/graph.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* big[v] = 1 for the nodes of g's strongly connected components of at least min_size nodes, or of
 * the largest component's size when none is that big (so some nodes are always big); malloc'd
 * (free it), NULL when out of memory. Uses the forward and reverse CSR (row/col, rrow/rcol). */
uint8_t *gp_scc_big(const gp_graph *g, uint32_t min_size);

#ifdef __cplusplus
}
#endif
#endif
