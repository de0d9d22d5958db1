/* netops.h - the network-operations endpoints (server/v1/netops.c): routing tables with ECMP,
 * link cost changes, failure what-ifs and recomputation jobs. */
#ifndef GP_H_NETOPS_H
#define GP_H_NETOPS_H

#include "engine/ecmp.h"
#include "server/http/http.h"

/* GET /v1/graphs/{graph}/routing-table?router=ID | router_name=NAME */
void gp_h_routing_table(gp_req *r);
/* GET /v1/graphs/{graph}/routing-tables (streamed) */
void gp_h_routing_tables(gp_req *r);
/* PATCH /v1/graphs/{graph}/links */
void gp_h_links_patch(gp_req *r);
/* GET /v1/graphs/{graph}/routers: every router's id, name, distinct neighbours and state.
 * GET /v1/graphs/{graph}/links: every link once ([u, v] from the lower id of a two-way link),
 * the routers' names, cost u->v and v->u (null when one-way), state "up", and links taken down by
 * PATCH since the graph was loaded with state "down" (their last costs). 413 past max_apsp_nodes. */
void gp_h_routers(gp_req *r);
void gp_h_links(gp_req *r);
/* POST /v1/graphs/{graph}/what-if */
void gp_h_what_if(gp_req *r);
/* POST /v1/graphs/{graph}/jobs -> 202 {"job": ID} */
void gp_h_jobs_post(gp_req *r);
/* GET /v1/jobs/{id} */
void gp_h_job_get(gp_req *r);
/* The routing tables of g (the request's graph) as the netops endpoints find them (in-process LRU,
 * job results, SQLite matrix cache, else computed), referenced (gp_rt_free); NULL after answering
 * an error (413 past max_apsp_nodes). Used by the repair-paths endpoint (server/v1/repair.c). */
gp_rt *gp_srv_netops_tables(gp_req *r, gp_graph *g);
/* Stops the job worker and drops cached tables; serve.c calls it after the HTTP daemon stopped
 * and before the engine is freed. Idempotent. */
void gp_srv_netops_stop(void);

#endif
