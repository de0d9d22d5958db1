/* handlers.h - the endpoints of server/v1/handlers.c (queries, status) and server/v1/admin.c (admin),
 * referenced by the route table in server/routes.c. */
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

#endif
