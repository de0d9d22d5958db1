/* isochrone.h - GET /v1/graphs/{graph}/isochrone (server/v1/isochrone.c): the areas reachable
 * within given times or distances, by marching squares over the reached roads. */
#ifndef GP_V1_ISOCHRONE_H
#define GP_V1_ISOCHRONE_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

void gp_h_isochrone(gp_req *r);

#ifdef __cplusplus
}
#endif
#endif
