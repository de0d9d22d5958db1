/* segidx.h - the road-segment index of a graph: the nearest point of its road geometry to a
 * coordinate (great-circle distance), exact anywhere on the globe.
 *
 * On a graph with coordinates every arc is a segment: a polyline from its tail through its shape
 * points (graph.h, gp_graph_arc_shape) to its head. A two-way road (an arc and its
 * gp_graph_reverse_arc, the same geometry reversed) is indexed once, from its lower-numbered tail;
 * the hit names that arc. engine/snap.h turns a hit into a snapped position for queries.
 *
 * Implemented in graph/segidx.c. Thread-safe: the index is built once per graph (at attach through
 * gp_segidx_prepare, or else on first use, under a lock), is immutable afterwards, is shared by the
 * reweighted versions of a graph (it holds geometry and arc ids, no weights) and is freed with the
 * graph (gp_graph.snap / snap_free).
 */
#ifndef GP_SEGIDX_H
#define GP_SEGIDX_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_segidx gp_segidx;

/* The nearest point of the indexed geometry to a coordinate. */
typedef struct gp_seg_hit {
    uint32_t arc;    /* the arc (tail -> head) whose geometry holds the point */
    uint32_t tail;   /* its tail */
    double lon, lat; /* the point (an end's own coordinates when it is a shape point or a node) */
    double chord_m;  /* great-circle metres from the coordinate asked for, through the chord */
    double frac;     /* the point's position along arc from its tail, 0..1, by length */
    uint32_t piece;  /* the piece holding it: 0 from the tail to the first shape point, and on */
} gp_seg_hit;

/* g's index, built now when it does not exist yet (its base's for a reweighted version). g must
 * have coordinates. NULL with err filled (GP_ENOMEM, GP_ETOOBIG) when it cannot be built. */
const gp_segidx *gp_segidx_get(const gp_graph *g, gp_err *err);
/* Builds g's index now (else the first gp_segidx_get does): gp_engine_attach calls it for every
 * graph with coordinates, so a graph answers its first coordinate query as fast as the next ones
 * (a 1M-node road graph's index takes most of a second). No-op for a graph without coordinates or
 * arcs, or whose index exists. GP_ENOMEM when it cannot be built. */
int gp_segidx_prepare(const gp_graph *g, gp_err *err);
/* Road pieces indexed (a piece: two consecutive points of an arc's polyline); 0 when no arc has
 * coordinates at both ends. */
uint32_t gp_segidx_pieces(const gp_segidx *x);
/* The nearest point of x (g's index) to (lon, lat) within radius_m metres (INFINITY: anywhere):
 * 1 and *out filled, or 0 when nothing lies that near. Ties go to the lowest arc, then piece. */
int gp_segidx_nearest(const gp_segidx *x, const gp_graph *g, double lon, double lat,
                      double radius_m, gp_seg_hit *out);
/* Which pieces may answer gp_segidx_nearest_if: 1 when piece (a_lon, a_lat) -> (b_lon, b_lat) of
 * arc (tail -> head, in the arc's direction) qualifies. Called only for pieces nearer than the
 * best qualifying one so far. */
typedef int (*gp_seg_filter)(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail,
                             double a_lon, double a_lat, double b_lon, double b_lat);
/* The nearest point within radius_m of the pieces f accepts (f NULL: every piece, as
 * gp_segidx_nearest): the same exact search, so the roads within the radius are tried nearest
 * first until one qualifies (OSRM's bearing filter chooses among them this way). */
int gp_segidx_nearest_if(const gp_segidx *x, const gp_graph *g, double lon, double lat,
                         double radius_m, gp_seg_filter f, void *ctx, gp_seg_hit *out);
/* Arcs' lengths along their pieces as gp_segidx_nearest_each's hits need them (each hit's
 * fraction along its arc), kept for the arcs met last, and the road points' unit vectors: hits on
 * the same arcs again and walks through the same pieces (the consecutive points of a GPS trace)
 * reuse them, the same numbers. Zeroed before its first use,
 * gp_seg_memo_free after the last. */
#define GP_SEG_MEMO 64
#define GP_SEG_MEMO_PTS 512
typedef struct gp_seg_memo {
    uint32_t arc[GP_SEG_MEMO]; /* the arc a slot holds */
    uint32_t n[GP_SEG_MEMO];   /* its pieces + 1 (0: the slot is empty) */
    uint32_t cap[GP_SEG_MEMO]; /* cum's room */
    double *cum[GP_SEG_MEMO];  /* the angles of its first i pieces summed, i = 0 .. pieces */
    /* the unit vectors of the road points met last (by the address of their longitude) */
    const double *pt[GP_SEG_MEMO_PTS];
    double vec[GP_SEG_MEMO_PTS][3];
} gp_seg_memo;
void gp_seg_memo_free(gp_seg_memo *m);

/* Given each hit in turn: 1 for the next one, 0 to stop. */
typedef int (*gp_seg_each)(void *ctx, const gp_seg_hit *hit);
/* The pieces within radius_m that f accepts, nearest first (ties: the lowest arc, then piece),
 * each given to each in turn until it returns 0 or none is left, from one search: f is asked
 * about the pieces in that order, each after the hits before it were given, so a filter that
 * rejects what each has taken (e.g. the roads already found) gets, hit by hit, what repeated
 * gp_segidx_nearest_if calls with that filter would answer. memo: NULL, or the arcs met before
 * (see gp_seg_memo). Returns the hits given, or -1 when out of memory (a few pieces need none). */
int gp_segidx_nearest_each(const gp_segidx *x, const gp_graph *g, double lon, double lat,
                           double radius_m, gp_seg_filter f, void *fctx, gp_seg_each each,
                           void *ectx, gp_seg_memo *memo);

#ifdef __cplusplus
}
#endif
#endif
