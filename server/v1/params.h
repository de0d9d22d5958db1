/* params.h - the /v1 parameter layer bound to an HTTP request (server/v1/params.c): parsing a
 * request against its endpoint's table (server/api/params.h) and resolving places and routers
 * against the request's graph, answering the 400 / 404 itself. */
#ifndef GP_V1_PARAMS_H
#define GP_V1_PARAMS_H

#include "server/api/params.h"
#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses the request against ep (gp_params_parse). GP_OK, or answers the 400 and returns -1. */
int gp_params(gp_req *r, const gp_endpoint *ep, gp_args *a);
/* The snapping radius of the request: its `radius` argument, else config max_snap_m. */
double gp_req_radius(const gp_args *a);
/* Resolution against the request's graph: answer the error, return -1 / GP_NONE. */
int gp_req_snap(gp_req *r, const gp_place *p, const char *what, double radius_m, gp_snap *out);
uint32_t gp_req_router(gp_req *r, const gp_place *p, const char *what);

#ifdef __cplusplus
}
#endif
#endif
