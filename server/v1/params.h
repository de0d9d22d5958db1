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
/* The places of list argument v snapped (malloc'd, v->nlist entries), or NULL with the error
 * answered (field names the list in it). */
gp_snap *gp_req_snap_list(gp_req *r, const gp_arg *v, const char *field, double radius);
/* A table-shaped request (ep has "sources", optional "targets" (default: the sources) and
 * "radius"): parsed, its cell count checked against limit (413 naming limit_key), its places
 * snapped into *ss / *ts (malloc'd). GP_OK, or -1 with the error answered. */
int gp_req_table_places(gp_req *r, const gp_endpoint *ep, long limit, const char *limit_key,
                        gp_snap **ss, uint32_t *ns, gp_snap **ts, uint32_t *nt);

#ifdef __cplusplus
}
#endif
#endif
