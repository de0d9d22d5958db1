/* match.h - map matching: a GPS trace (coordinates, optional timestamps and accuracies) to the
 * most likely sequence of positions on the road network, the hidden Markov model of Newson &
 * Krumm as OSRM's /match/v1 runs it.
 *
 *  - candidates: every road within the search radius of a point (radius_mult x its accuracy,
 *    default accuracy sigma_m), nearest first, at most max_candidates, one per road (a two-way
 *    road is one candidate driven either way), through the segment index (graph/segidx.h) as
 *    engine/snap.c snaps;
 *  - emission: a Gaussian on the point's distance to the candidate (sigma: the accuracy);
 *  - transition: exponential (beta) on |route distance - great-circle distance| between the
 *    candidates of consecutive points; the route is the least-weight one (turn costs and one-way
 *    rules respected: on a graph with turn costs the search runs on its turn graph, graph/turns.h)
 *    found by a search bounded as OSRM bounds it (route metres < great-circle + max delta, max
 *    delta = the time step x max_speed_mps with timestamps, else max_delta_m; weight under the
 *    metres at 4 m/s); a transition whose difference reaches max delta is impossible;
 *  - Viterbi; a point no candidate of the previous matched point can reach is dropped; the trace
 *    splits into several matchings when the next matched point would come more than max_broken
 *    points after the last one (max_broken dropped points in a row), or with
 *    split_gaps and timestamps where the time step exceeds max_broken x the median step; a
 *    matching of one point is dropped.
 * Implemented in engine/match.c on the CPU (one thread per call; callers run traces in parallel).
 * Thread-safe.
 */
#ifndef GP_MATCH_H
#define GP_MATCH_H

#include "engine/snap.h"
#include "graph/segidx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_match_opts {
    double sigma_m;          /* GPS accuracy of points that give none (OSRM: 5 m) */
    double radius_mult;      /* search radius = radius_mult x accuracy (OSRM: 3) */
    double max_radius_m;     /* search radius cap (0: none) */
    double beta;             /* transition scale, metres (OSRM: 10) */
    double max_speed_mps;    /* with timestamps: max delta = step seconds x this (OSRM car: 50) */
    double max_delta_m;      /* without timestamps (OSRM: 2000) */
    uint32_t max_candidates; /* roads per point */
    uint32_t max_broken;     /* dropped points in a row before a split (OSRM: 10) */
    int split_gaps;          /* gaps=split: split at large time steps */
} gp_match_opts;

void gp_match_opts_default(gp_match_opts *o);

typedef struct gp_match_point {
    double lon, lat;
    double accuracy_m;    /* <= 0 or not finite: opts sigma_m */
    gp_seg_filter filter; /* NULL or which road pieces may be candidates (e.g. bearings) */
    void *filter_ctx;
} gp_match_point;

typedef struct gp_match {
    uint32_t n;
    uint32_t *matching;     /* n: index of the point's matching, GP_NONE when dropped */
    uint32_t *alternatives; /* n: other candidates of the point the matching could reach */
    gp_snap *snap;          /* n: the chosen position, where matching[i] != GP_NONE */
    uint32_t nmatch;
    double *confidence; /* nmatch, in [0, 1] */
    double *length_m;   /* nmatch: route metres through the matching's points */
} gp_match;

/* Matches n points (timestamps ts in seconds, non-decreasing, or NULL). GP_EINVAL for a graph
 * without coordinates or an invalid coordinate (the message names it); GP_ENOMEM. A trace
 * nothing matches is no error: nmatch 0. */
int gp_match_trace(const gp_graph *g, const gp_match_point *p, uint32_t n, const double *ts,
                   const gp_match_opts *o, gp_match *out, gp_err *err);
void gp_match_free(gp_match *m);

/* The route the model scores between two matched positions (the least-weight one, the same
 * search without bounds) in gp_engine_route_snap's form, for assembling a matching's legs:
 * GP_OK, GP_ENOTFOUND when b cannot be reached, GP_ENOMEM. */
int gp_match_route(const gp_graph *g, const gp_snap *a, const gp_snap *b, gp_snap_route *out,
                   gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
