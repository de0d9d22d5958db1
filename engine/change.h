/* change.h - a cost change as one engine operation (engine/change.c): derive a new graph version
 * with changed link costs, links taken down or failed routers (gp_graph_change_links, reached
 * through engine/ecmp.h) and attach it to the engine (gp_engine_attach: the CSR onto the GPU, or
 * lazily for a reweighted version; the CCH customized), so that the version answers like any
 * loaded graph from its first query.
 *
 * PATCH .../links and what-if (server/v1/netops.c) and `gpath what-if` (cli/netops.c) all go
 * through it. Publishing the version is not part of it: the service hands it to the registry
 * (server/registry.h gp_registry_replace, which finds it attached and only swaps); a what-if
 * never publishes it. The graph g is only read (it may be serving meanwhile); the new version
 * has its own hash, and a pure cost change shares every array but the weights with g.
 */
#ifndef GP_ENGINE_CHANGE_H
#define GP_ENGINE_CHANGE_H

#include "graph/change.h" /* gp_link_change, gp_graph_change_links */
#include "engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the time of one change went (as PATCH .../links logs it). */
typedef struct gp_change_stats {
    double change_ms; /* deriving the version (gp_graph_change_links) */
    double attach_ms; /* attaching it (gp_engine_attach) */
} gp_change_stats;

/* *out = g with the changes ch[0..nch) and every arc of the routers fail_routers[0..nfail)
 * (external ids) removed, attached to e; the caller owns the reference. On failure *out is NULL
 * and the status is gp_graph_change_links' (GP_ENOTFOUND: no such link or router, GP_EINVAL: a
 * bad cost) or gp_engine_attach's. st may be NULL; it is filled on success. */
int gp_engine_change_links(gp_engine *e, const gp_graph *g, const gp_link_change *ch, size_t nch,
                           const int64_t *fail_routers, size_t nfail, gp_graph **out,
                           gp_change_stats *st, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
