/* change.h - a new version of a graph with other link costs, links down or routers failed: the
 * graph operation behind PATCH .../links, what-if questions and `gpath netops` (the routing tables
 * of engine/ecmp.h are then derived for the new version).
 *
 * The graph given is not modified (graphs are immutable); the new one is a graph of its own
 * (refs = 1) that the caller attaches and publishes like any loaded graph.
 */
#ifndef GP_GRAPH_CHANGE_H
#define GP_GRAPH_CHANGE_H

#include "graph/graph.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A link change: the link between external ids u and v in both directions (every arc u->v and
 * v->u). down: remove them; else set their cost (input units, >= 0). */
typedef struct gp_link_change {
    int64_t u, v;
    int down;
    double cost;
} gp_link_change;

/* New graph = g with the changes applied and every arc of the failed routers (external ids)
 * removed (the routers stay, unreachable). A link with no arc either way: GP_ENOTFOUND; an unknown
 * router: GP_ENOTFOUND; a bad cost: GP_EINVAL. The new graph has its own version hash. */
int gp_graph_change_links(const gp_graph *g, const gp_link_change *ch, size_t nch,
                          const int64_t *fail_routers, size_t nfail, gp_graph **out, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
