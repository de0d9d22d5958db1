/* arcs.h - where answers meet a graph's arcs (server/api/arcs.c), shared by the OSRM family and
 * gpath's own endpoints (isochrones, the map's overview): the points of an arc between two
 * fractions of its length (partial arcs at snapped ends), the projection of a coordinate onto an
 * arc, and OSRM's rule of snapping onto the graph's big strongly connected components.
 */
#ifndef GP_API_ARCS_H
#define GP_API_ARCS_H

#include "engine/snap.h"
#include "graph/graph.h"
#include "server/api/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends the points of arc `arc` from fraction f0 to f1 of its length (f0 > f1 walks it
 * backwards). -1 when out of memory. */
int gp_arc_points(const gp_graph *g, uint32_t arc, double f0, double f1, gp_pts *out);
/* The same with the arc's tail u known (GP_NONE: looked up). */
int gp_arc_points_from(const gp_graph *g, uint32_t arc, uint32_t u, double f0, double f1,
                       gp_pts *out);
/* The bounding box of arc `arc` (tail u) through its shape points: box = {min lon, min lat,
 * max lon, max lat}; no allocation (the tile services test every arc against a tile with it). */
void gp_arc_bbox(const gp_graph *g, uint32_t arc, uint32_t u, double box[4]);
/* Projects (lon, lat) onto arc `arc`: fills s (arc, rarc = GP_NONE, frac, lon/lat, dist_m, node =
 * the nearer end). */
void gp_arc_project(const gp_graph *g, uint32_t arc, double lon, double lat, gp_snap *s);
/* When snapped position s lies outside g's big strongly connected components (>= 1000 nodes, as
 * OSRM), moves it to the nearest segment inside one within radius_m; returns 1 when it moved. */
int gp_snap_big(const gp_graph *g, gp_snap *s, double radius_m);
/* g's strongly connected components, computed once per graph version: comp[v] (an id) and big[v]
 * (1 in components of at least 1000 nodes; none when no component is that big). 0 when out of
 * memory. */
int gp_snap_components(const gp_graph *g, const uint32_t **comp, const uint8_t **big);
/* 1 when snapped position s lies on big[]'s nodes (both ends of its arc). */
int gp_snap_in_big(const gp_graph *g, const gp_snap *s, const uint8_t *big);
/* A gp_seg_filter accepting the pieces of arcs between nodes of big (ctx: big[]). */
int gp_snap_big_filter(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                       double a_lat, double b_lon, double b_lat);

#ifdef __cplusplus
}
#endif
#endif
