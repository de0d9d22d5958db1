/* map.h - the map pages and the road overview they draw (server/v1/map.c):
 *   GET /v1/graphs/{graph}/overview.geojson   the road network, bounded in size
 *   GET /  and  GET /web/{file}               the MapLibre map page (config key `map_page`)
 *   GET /lrm                                  the Leaflet Routing Machine page (the same key)
 */
#ifndef GP_V1_MAP_H
#define GP_V1_MAP_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

void gp_h_overview(gp_req *r);
void gp_h_map_page(gp_req *r);
void gp_h_lrm_page(gp_req *r);
void gp_h_web_asset(gp_req *r);

#ifdef __cplusplus
}
#endif
#endif
