/* tiles.h - gpath's basemap (server/v1/tiles.c): vector tiles of a road graph (layers roads and
 * places), their TileJSON and a MapLibre style that draws them:
 *   GET /v1/graphs/{graph}/tiles/{z}/{x}/{y}.mvt
 *   GET /v1/graphs/{graph}/tiles.json
 *   GET /v1/graphs/{graph}/style.json
 */
#ifndef GP_V1_TILES_H
#define GP_V1_TILES_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

void gp_h_base_tile(gp_req *r);
void gp_h_base_tilejson(gp_req *r);
void gp_h_base_style(gp_req *r);

#ifdef __cplusplus
}
#endif
#endif
