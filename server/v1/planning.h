/* planning.h - the network-planning endpoints (server/v1/planning.c): demand matrices, link
 * capacities, ECMP link loads and exhaustive failure analysis jobs (engine/planning.h). */
#ifndef GP_H_PLANNING_H
#define GP_H_PLANNING_H

#include "server/http/http.h"

/* PUT / GET / DELETE /v1/graphs/{graph}/demands */
void gp_h_demands_put(gp_req *r);
void gp_h_demands_get(gp_req *r);
void gp_h_demands_delete(gp_req *r);
/* PATCH /v1/graphs/{graph}/capacities */
void gp_h_capacities_patch(gp_req *r);
/* POST /v1/graphs/{graph}/load */
void gp_h_load(gp_req *r);
/* POST /v1/graphs/{graph}/failure-analysis -> 202 {"job": ID}; GET /v1/failure-analysis/{id} */
void gp_h_failure_post(gp_req *r);
void gp_h_failure_get(gp_req *r);
void gp_h_failure_delete(gp_req *r);
/* Waits for a running analysis and drops demands and results (after the daemon stopped). */
void gp_srv_planning_stop(void);

#endif
