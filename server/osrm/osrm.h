/* osrm.h - the OSRM v1 compatible API (one handler family: server/osrm/). Route-table lines
 * are in server/routes.c; docs/osrm.md documents them. gpath's own isochrone endpoint
 * and map page, which share some of the family's helpers, are in server/v1/ (isochrone.h, map.h).
 *   GET  /route/v1/{profile}/{coordinates}    osrm.c + route.c (legs, steps, geometry)
 *   GET  /table/v1/{profile}/{coordinates}    osrm.c; POST /table/v1/{profile} with a JSON body
 *   GET  /nearest/v1/{profile}/{coordinates}  osrm.c
 *   GET  /trip/v1/{profile}/{coordinates}     trip.c (TSP over the duration table)
 *   GET  /tile/v1/{profile}/tile(x,y,z).mvt   tile.c (vector tiles of the graph, z 12..19)
 *   GET  /match/v1/{profile}/{coordinates}    match.c (map matching); POST /match/v1/{profile}
 *   POST /v1/graphs/{graph}/match             match.c: many traces (JSON or NDJSON), each
 *                                             answered as /match/v1 (gpath's API, here because
 *                                             it shares the OSRM answer's code)
 */
#ifndef GP_OSRM_H
#define GP_OSRM_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

void gp_h_osrm_route(gp_req *r);
void gp_h_osrm_table(gp_req *r);
void gp_h_osrm_table_post(gp_req *r);
void gp_h_osrm_nearest(gp_req *r);
void gp_h_osrm_trip(gp_req *r);
void gp_h_osrm_match(gp_req *r);
void gp_h_osrm_match_post(gp_req *r);
void gp_h_match_batch(gp_req *r);
void gp_h_osrm_tile(gp_req *r);

#ifdef __cplusplus
}
#endif
#endif
