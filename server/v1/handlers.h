/* handlers.h - the endpoints of server/v1/handlers.c (queries, status) and server/v1/admin.c
 * (graph and cache administration), referenced by the route table in server/routes.c. */
#ifndef GP_HANDLERS_H
#define GP_HANDLERS_H

#include "server/http/http.h"

void gp_h_health(gp_req *r);
void gp_h_ready(gp_req *r);
void gp_h_metrics(gp_req *r);
void gp_h_graphs(gp_req *r);
void gp_h_graph(gp_req *r);
void gp_h_route(gp_req *r);
void gp_h_nearest(gp_req *r);
void gp_h_sssp(gp_req *r);
void gp_h_table(gp_req *r);
void gp_h_apsp(gp_req *r);

void gp_h_admin_put(gp_req *r);
void gp_h_admin_reload(gp_req *r);
void gp_h_admin_delete(gp_req *r);
/* GET /admin/cache: entries, bytes, budget, hits, misses, hit rate. */
void gp_h_cache_stats(gp_req *r);
/* DELETE /admin/cache[?graph=NAME|VERSION]: purge all, or one graph's entries. */
void gp_h_cache_purge(gp_req *r);

#endif
