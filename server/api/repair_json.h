/* repair_json.h - the repair-paths document (LFA and TI-LFA, engine/repair.h) as JSON or CSV text,
 * shared by the CLI (`gpath repair`, cli/netops.c) and POST /v1/graphs/{g}/repair-paths
 * (server/v1/repair.c), so both print one format:
 *   {"graph", "version", "backend", "weight_unit", "routers": N, "node_protection": bool,
 *    "coverage": cov, "spf_runs", "compute_ms", "per_router": [{"router": ID, cov}, ...],
 *    "repairs": [repair, ...]}
 *   cov: "destinations", "lfa_link", "tilfa_link", "node_destinations", "lfa_node", "tilfa_node"
 *        (counts; tilfa_node null when node protection is off) and "lfa_link_share",
 *        "tilfa_link_share", "lfa_node_share", "tilfa_node_share" (count / destinations or
 *        node_destinations; null when that is 0)
 *   repair: {"router", "destination", "primary_next_hop" (ids; "..._name" members when the graph
 *            has names), "distance", "lfa": ID|null, "lfa_node_protecting", "lfa_downstream",
 *            "link_repair": tilfa, "node_repair": tilfa|null (D is the next hop itself, or node
 *            protection off)}
 *   tilfa:  {"cost": C|null (unreachable without the resource), "next_hop", "p_node", "q_node",
 *            "segments": [{"node": ID} | {"adjacency": [A, B]}, ...], "path": [...] (when kept)}
 * CSV: one line per repair and protection (link, node), a header line first; segments as
 * "node:ID" / "adj:A-B" separated by spaces. Distances in the graph's input units.
 */
#ifndef GP_REPAIR_JSON_H
#define GP_REPAIR_JSON_H

#include "engine/repair.h"
#include "server/api/netops_json.h" /* gp_sbuf */

/* The whole JSON document into s; graph is the graph's name. flush (may be NULL) is called with
 * ctx whenever s holds over 1 MiB, to write it out and reset it; nonzero from it stops (-1). */
int gp_rj_json(gp_sbuf *s, const char *graph, const gp_rt *t, const gp_repair *r,
               int node_protection, int (*flush)(void *ctx, gp_sbuf *s), void *ctx);
/* The CSV text of the kept routers' repairs, the same way. */
int gp_rj_csv(gp_sbuf *s, const gp_rt *t, const gp_repair *r, int node_protection,
              int (*flush)(void *ctx, gp_sbuf *s), void *ctx);

#endif
