/* scc.h - strongly connected components of a graph.
 *
 * Iterative Kosaraju, O(n + m) time and 3n words of scratch: a post-order of the forward CSR, then
 * the reverse CSR in reverse post-order, each tree of the second pass one component. Used where a
 * query should avoid a node cut off from the network (OSRM's "big component" snapping rule).
 */
#ifndef GP_SCC_H
#define GP_SCC_H

#include "graph/graph.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills comp[v] (n entries) with the component of every node, ids 0..*count-1 in the order the
 * second pass finds them, and size[c] (n entries; the first *count are set) with their node
 * counts. GP_OK, or GP_ENOMEM with err filled. */
int gp_graph_scc(const gp_graph *g, uint32_t *comp, uint32_t *size, uint32_t *count, gp_err *err);
/* big[v] = 1 for the nodes of g's strongly connected components of at least min_size nodes, or of
 * the largest component's size when none is that big (so some nodes are always big); malloc'd
 * (free it), NULL when out of memory. */
uint8_t *gp_scc_big(const gp_graph *g, uint32_t min_size);

#ifdef __cplusplus
}
#endif
#endif
