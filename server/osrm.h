/* osrm.h - the OSRM v1 compatible API, the isochrone endpoint and the map page (one handler family:
 * server/osrm*.c). Route-table lines are in server/routes.c; README's `section:osrm` documents them.
 *   GET  /route/v1/{profile}/{coordinates}    osrm.c + osrm_route.c (legs, steps, geometry)
 *   GET  /table/v1/{profile}/{coordinates}    osrm.c; POST /table/v1/{profile} with a JSON body
 *   GET  /nearest/v1/{profile}/{coordinates}  osrm.c
 *   GET  /trip/v1/{profile}/{coordinates}     osrm_trip.c (TSP over the duration table)
 *   GET  /v1/graphs/{graph}/isochrone          osrm_iso.c (marching squares over reached roads)
 *   GET  /v1/graphs/{graph}/overview.geojson   osrm_web.c (the road network, bounded in size)
 *   GET  /  and  GET /web/{file}               osrm_web.c (the Leaflet map page, `map_page`)
 */
#ifndef GP_OSRM_H
#define GP_OSRM_H

#include "server/http.h"

#ifdef __cplusplus
extern "C" {
#endif

void gp_h_osrm_route(gp_req *r);
void gp_h_osrm_table(gp_req *r);
void gp_h_osrm_table_post(gp_req *r);
void gp_h_osrm_nearest(gp_req *r);
void gp_h_osrm_trip(gp_req *r);
void gp_h_isochrone(gp_req *r);
void gp_h_overview(gp_req *r);
void gp_h_map_page(gp_req *r);
void gp_h_web_asset(gp_req *r);

#ifdef __cplusplus
}
#endif
#endif
