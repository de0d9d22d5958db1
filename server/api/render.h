/* render.h - JSON rendering of query answers, shared by the CLI (cli/cli.c) and the HTTP
 * server: the whole documents (gp_render_*_doc, below) are built here once and both sides print
 * them, so a query answers the same document on HTTP and on the shell.
 *
 * Conventions (every function):
 *  - node ids are the graph's EXTERNAL ids (g->ext), JSON integers;
 *  - weights are in the input's units (the graph's weight_unit): JSON integers when
 *    g->scale == 1, else d / scale as a number (shortest decimal that reads back to the same
 *    double); GP_INF renders as null. A member named "distance" is always metres;
 *  - predecessors / next hops that are GP_NONE render as null.
 * Shapes of the parts (the documents add "graph", "version", units and waypoints, below):
 *   route: {"from": ID, "to": ID, "weight": D|null, "weight_unit": U, "distance": M?,
 *           "path": [ID,...], "geometry": {"type": "LineString", "coordinates": [[lon,lat],...]}}
 *          (distance (metres) and geometry only when the graph has coordinates; no route:
 *          weight null, path [])
 *   sssp:  {"source": ID, "reached": K, "nodes": [ID...], "weights": [D...],
 *           "predecessors": [ID|null...]}   (reached nodes only, ascending internal index)
 *   table: {"sources": [ID...], "targets": [ID...], "weights": [[D|null,...],...]} (row/source)
 *   apsp:  {"nodes": [ID...], "weights": [[D|null...]...], "next_hops": [[ID|null...]...]}
 *          (next_hops only when a next matrix is given)
 *   graph info: {"name", "nodes", "edges" (arcs), "version", "source", "format",
 *                "has_coordinates", "memory_bytes", "scale", "loaded_at" (ISO-8601 UTC),
 *                "weight_unit" ("deciseconds", "hops", "cost", ...), "unit_s" (seconds per unit,
 *                only for travel times), "profile" (OSM imports)}
 *   nearest: {"lon", "lat", "nodes": [{"id", "distance_m", "lon", "lat"}, ...], "waypoint"}
 *   error: {"code": "InvalidQuery"..., "message": "..."}
 *
 * cJSON builders return a new tree owned by the caller (cJSON_Delete), NULL when out of memory.
 * The *_text variants write the same JSON (compact) straight into a malloc'd NUL-terminated buffer
 * without building a tree: use them for big answers (tables, APSP, large SSSP trees), where cJSON
 * would be slow and memory-hungry. *len (may be NULL) receives the length. NULL when out of memory.
 */
#ifndef GP_RENDER_H
#define GP_RENDER_H

#include "engine/backend.h"
#include "engine/snap.h"
#include "server/errors.h"

#include <cjson/cJSON.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One distance (stored units) in input units; null for GP_INF. */
cJSON *gp_render_dist(const gp_graph *g, uint64_t d);
/* A JSON array of n numbers (NaN: null) as cJSON prints them, as one raw item: fast for numbers
 * rounded to tenths (durations, distances of the OSRM table); NULL when out of memory. */
cJSON *gp_render_number_row(const double *v, uint32_t n);
/* A node's external id; null for GP_NONE. */
cJSON *gp_render_node(const gp_graph *g, uint32_t v);

cJSON *gp_render_route(const gp_graph *g, uint32_t from, uint32_t to, const gp_path *p);
cJSON *gp_render_sssp(const gp_graph *g, uint32_t src, const uint64_t *dist, const uint32_t *pred);
cJSON *gp_render_table(const gp_graph *g, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                       uint32_t nt, const uint64_t *dist);
/* dist n*n row-major; next n*n or NULL (then no "next_hops"). */
cJSON *gp_render_apsp(const gp_graph *g, const uint64_t *dist, const uint32_t *next);
cJSON *gp_render_graph_info(const gp_graph *g, const char *name);
/* The same with the code named by a GP_E* status (gp_status_name: GP_ENOROUTE -> "NoRoute"). */
cJSON *gp_render_error(int code, const char *message);
/* No route between two places of the graph named graph, each described as gp_render_node_desc
 * writes a node ("node 12") or as HTTP describes a coordinate: the message, and the NoRoute error
 * document carrying it (what HTTP route answers and the CLI prints). */
void gp_render_node_desc(char *buf, size_t size, int64_t id);
void gp_render_no_route_msg(char *buf, size_t size, const char *from, const char *to,
                            const char *graph);
cJSON *gp_render_no_route(const char *from, const char *to, const char *graph);
/* nearest's members {"lon": X, "lat": Y, "nodes": [{"id": ID, "distance_m": M, "lon", "lat"}, ...],
 * "waypoint": waypoint | null} for the n nodes found (nearest first) and the snapped position way
 * (NULL: none within the radius), written into o (0, or -1 when out of memory); the document is
 * gp_render_nearest_doc's, below. */
int gp_render_nearest_add(cJSON *o, const gp_graph *g, double lon, double lat,
                          const uint32_t *nodes, const double *metres, int n, const gp_snap *way);

/* The /v1 answers' additions (server/v1/handlers.c), for queries by node id or coordinate:
 *   waypoint: {"location": [lon, lat] | null, "node": ID, "distance_m": M, "name": "road"?}
 *             (the snapped position, the end node of its segment nearest to it, the distance from
 *             the coordinate asked for; a node id's waypoint is the node at distance 0)
 *   route:    {"from": ID, "to": ID, "weight": D, "weight_unit": "deciseconds", "duration_s": S?,
 *              "length_m": M?, "distance": M?, "path": [ID...], "geometry"?, "waypoints": [a, b]}
 *             path runs from the node where the route enters the network to the node where it
 *             leaves it ([] when both positions lie on one segment and the route stays on it);
 *             the geometry runs from position to position along the arcs' shape points.
 *             duration_s only when the weights are travel times (unit_s > 0); length_m only when
 *             the graph knows lengths (coordinates or arc lengths); distance (= length_m, metres)
 *             only when the graph has lon/lat (a planar graph's lengths are in its own units).
 * Coordinates carry 6 decimals, metres 2. */
cJSON *gp_render_waypoint(const gp_graph *g, const gp_snap *s);
cJSON *gp_render_route_snap(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                            const gp_snap_route *r);
/* x rounded to 6 / 2 decimals, for JSON. */
double gp_round6(double x);
double gp_round2(double x);

/* ---- whole documents: what HTTP answers and the CLI prints, built here once for both ----
 * graph names the graph: its name on HTTP, the --graph spec on the CLI. Every document carries
 * "graph" and "version" (g's content hash); the cJSON ones come from the builders above, the text
 * ones end with a newline:
 *   route:   gp_render_route_snap's members, then "graph", "version"; its path and geometry
 *            coordinates are raw items holding the text cJSON prints for those arrays (the same
 *            bytes, written without an item per number): print the document, do not walk them
 *   nearest: {"graph", "version", gp_render_nearest_add's members}
 *   sssp:    {"graph", "version", "weight_unit", "unit_s"?, "waypoints": [source's],
 *             sssp members}    (unit_s only for travel times)
 *   table:   {"graph", "version", "weight_unit", "unit_s"?,
 *             "waypoints": {"sources": [...], "targets": [...]}, table members}
 *   apsp:    {"graph", "version", "weight_unit", apsp members} */
cJSON *gp_render_route_doc(const gp_graph *g, const char *graph, const gp_snap *a, const gp_snap *b,
                           const gp_snap_route *r);
cJSON *gp_render_nearest_doc(const gp_graph *g, const char *graph, double lon, double lat,
                             const uint32_t *nodes, const double *metres, int n,
                             const gp_snap *way);
char *gp_render_sssp_doc(const gp_graph *g, const char *graph, const gp_snap *src,
                         const uint64_t *dist, const uint32_t *pred, size_t *len);
char *gp_render_table_doc(const gp_graph *g, const char *graph, const gp_snap *src, uint32_t ns,
                          const gp_snap *dst, uint32_t nt, const uint64_t *dist, size_t *len);
char *gp_render_apsp_doc(const gp_graph *g, const char *graph, const uint64_t *dist,
                         const uint32_t *next, size_t *len);
/* A place in messages (NoRoute): "node 12" for a node id, "7.420000,43.730000 (snapped 3.20 m
 * to the road at node 12)" for a coordinate. */
void gp_render_place_desc(char *buf, size_t size, const gp_graph *g, int is_coord,
                          const gp_snap *s);

char *gp_render_sssp_text(const gp_graph *g, uint32_t src, const uint64_t *dist,
                          const uint32_t *pred, size_t *len);
char *gp_render_table_text(const gp_graph *g, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                           uint32_t nt, const uint64_t *dist, size_t *len);
char *gp_render_apsp_text(const gp_graph *g, const uint64_t *dist, const uint32_t *next,
                          size_t *len);

/* The all-pairs document in pieces, for an answer streamed row by row: the same text as
 * gp_render_apsp_doc. gp_render_apsp_open gives its opening (the head members, "nodes" and
 * `"weights":[`); then each row of weights (gp_render_dist_row, rows separated by ","), "]",
 * and with next hops `,"next_hops":[` and their rows (gp_render_id_row), "]"; then "}\n". A row
 * needs GP_RENDER_DIST_ROW_BYTES / GP_RENDER_ID_ROW_BYTES (cols) bytes; returns its length (NUL
 * written after it). gp_render_id_row with row NULL writes the ids of nodes 0..cols-1. */
#define GP_RENDER_DIST_ROW_BYTES(cols) ((size_t)(cols)*41 + 3)
#define GP_RENDER_ID_ROW_BYTES(cols) ((size_t)(cols)*33 + 3)
char *gp_render_apsp_open(const gp_graph *g, const char *graph, size_t *len);
size_t gp_render_dist_row(const gp_graph *g, const uint64_t *row, uint32_t cols, char *out);
size_t gp_render_id_row(const gp_graph *g, const uint32_t *row, uint32_t cols, char *out);

/* Writes a distance in input units into buf (NUL-terminated, "null" for GP_INF); returns the
 * length. buf needs 32 bytes. */
int gp_render_dist_str(const gp_graph *g, uint64_t d, char *buf, size_t size);
/* ISO-8601 UTC ("2026-01-02T03:04:05Z") of wall-clock seconds since the epoch; buf >= 32 bytes. */
void gp_render_iso8601(double t, char *buf, size_t size);
/* x rounded to a multiple of unit (0.1: tenths, as OSRM renders durations and distances), giving
 * the double nearest k / 10 for tenths. */
double gp_round_unit(double x, double unit);
/* A cost in stored units as seconds (cost * unit_s) when g's weights are travel times (graph.h),
 * else the cost itself in the input's units. */
double gp_cost_seconds(const gp_graph *g, uint64_t cost);

#ifdef __cplusplus
}
#endif
#endif
