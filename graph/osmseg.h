/* osmseg.h - the OSM-segment index of a road graph: which arcs hold a directed segment between two
 * original (OSM) node ids, as OSRM's --segment-speed-file and --turn-penalty-file name them.
 *
 * An arc u -> v is a polyline: its tail, its interior shape points, its head (graph.h,
 * gp_graph_arc_shape). When the graph knows the shape points' OSM ids (shape_osm_id) each pair of
 * consecutive points is a segment (piece 0 starts at the tail, piece k at shape point k); without
 * them the arc is one segment, tail to head. Node ids are gp_graph_orig_id (the copies made for
 * turn restrictions share their original's id, so a segment may lie on several arcs).
 *
 * Live traffic (engine/traffic.c) looks up each entry of a speed file here instead of reading
 * every point of the graph, so applying a file costs its entries, not the graph's size.
 *
 * Implemented in graph/osmseg.c. Thread-safe: built once per graph (gp_engine_attach builds it
 * for road graphs of travel times, else the first gp_osmseg_get does, under a lock; 24 bytes a
 * segment, a radix sort: 170-300 ms for the road-like 1M map's 2.5M segments on one core),
 * immutable afterwards, shared by the reweighted versions of the graph (it holds ids and arc
 * numbers, no weights), freed with the graph (gp_graph.osmseg / osmseg_free).
 */
#ifndef GP_OSMSEG_H
#define GP_OSMSEG_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_osmseg gp_osmseg;

/* One segment of an arc: piece k runs from point k to point k + 1 of the arc's polyline. */
typedef struct gp_osmseg_hit {
    uint32_t arc, piece;
} gp_osmseg_hit;

/* g's index (its base's for a reweighted version), built now when it does not exist yet. NULL
 * with err filled (GP_ENOMEM) when it cannot be built. */
const gp_osmseg *gp_osmseg_get(const gp_graph *g, gp_err *err);
/* Segments in the index. */
uint64_t gp_osmseg_count(const gp_osmseg *x);
/* The segments from -> to: at most cap of them into out (ascending by arc,
 * then piece); returns how many there are (may exceed cap). */
uint32_t gp_osmseg_find(const gp_osmseg *x, int64_t from, int64_t to, gp_osmseg_hit *out,
                        uint32_t cap);
#ifdef __cplusplus
}
#endif
#endif
