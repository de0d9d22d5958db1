/* match.h - map matching: a GPS trace (coordinates, optional timestamps and accuracies) to the
 * most likely sequence of positions on the road network, the hidden Markov model of Newson &
 * Krumm as OSRM's /match/v1 runs it.
 *
 *  - candidates: every road within the search radius of a point (radius_mult x its accuracy,
 *    default accuracy sigma_m), nearest first, at most max_candidates, one per road and pass (a
 *    two-way road is one candidate driven either way; a road that leaves the search circle and
 *    comes back, a hairpin's two legs, gives the nearest point of each pass), through the segment
 *    index (graph/segidx.h) as engine/snap.c snaps;
 *  - emission: a Gaussian on the point's distance to the candidate (sigma: the accuracy);
 *  - transition: exponential (beta) on |route distance - great-circle distance| between the
 *    candidates of consecutive points; the route is the least-weight one (turn costs and one-way
 *    rules respected: on a graph with turn costs the search runs on its turn graph, graph/turns.h)
 *    found by a search bounded as OSRM bounds it (route metres < great-circle + max delta, max
 *    delta = the time step x max_speed_mps with timestamps, a step counting as one second at
 *    least, else max_delta_m; weight under the metres at 4 m/s); a transition whose difference
 *    reaches max delta is impossible;
 *  - Viterbi; a point no candidate of the previous matched point can reach is dropped, and that
 *    previous point is no longer searched from (unless it began the matching): the next point is
 *    searched from the matched point before it (OSRM's "remove both ends of the breakage"), so a
 *    point reached only onto a road that leads nowhere the trace goes is dropped too once a later
 *    point is matched without it; the trace splits into several matchings when the next matched
 *    point would come more than max_broken points after the one it is searched from, or with
 *    split_gaps and timestamps where the time step exceeds max_broken x the median step (a
 *    matching ends at its last matched point); a matching of one point is dropped.
 * Implemented in engine/match.c on the CPU (one thread per call; callers run traces in parallel);
 * the searches between consecutive points of many traces can run on the GPU first
 * (gp_match_fill_cuda, engine/match_cuda.c) into each trace's table.
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

/* gp_match_trace in steps, for batches whose searches run together (on the GPU):
 * gp_match_prepare finds the candidates and the table's layout; gp_match_fill (CPU) or
 * gp_match_fill_cuda (GPU, many traces at once) runs, for every step t-1 -> t whose points both
 * have candidates, the bounded search from each candidate at t-1 to the k(t) candidates at t
 * (weights tw, route metres tm, INFINITY when not reached: row (i - off[t-1]) of the block at
 * tab[t]); gp_match_run is Viterbi, reading the table where the previous matched point is t-1
 * (searching otherwise). gp_match_trace == prepare + run; with the table filled the answer is the
 * same. A job is one row: jobs numbered by t, then the source candidate. */
typedef struct gp_match_prep {
    uint32_t n;
    uint32_t *off;   /* n + 1: the candidates of point t are c[off[t] .. off[t + 1]) */
    gp_snap *c;      /* off[n] */
    double *emis;    /* off[n]: log emission probabilities */
    double *wb, *mb; /* n: step t-1 -> t's weight bound and metres bound (where tab[t] is set) */
    size_t *tab;     /* n: step t's block in tw/tm, SIZE_MAX when the step has no block */
    size_t ntab;     /* table entries */
    size_t njobs;    /* rows */
    double *tw, *tm; /* ntab, allocated by the fill */
    int filled;      /* tw/tm hold every row */
} gp_match_prep;

int gp_match_prepare(const gp_graph *g, const gp_match_point *p, uint32_t n, const double *ts,
                     const gp_match_opts *o, gp_match_prep *pr, gp_err *err);
/* Allocates tw/tm (when not yet): GP_OK or GP_ENOMEM. */
int gp_match_table_alloc(gp_match_prep *pr, gp_err *err);
/* Runs the rows on the CPU (redo NULL: every row, else the rows j with redo[j]) and marks the
 * table filled: GP_OK or GP_ENOMEM. */
int gp_match_fill(const gp_graph *g, gp_match_prep *pr, const uint8_t *redo, gp_err *err);
/* Where gp_match_fill_cuda's time went (milliseconds). */
typedef struct gp_match_gpu_stats {
    double gpu_ms;   /* the kernels' device time */
    double wait_ms;  /* waiting for the device (another batch on it) */
    double hold_ms;  /* holding it: the graph's first copy, the scratch, rows in and out, kernels */
    double redo_ms;  /* the CPU's searches of rows past the device's scratch (device released) */
    uint64_t rows;   /* rows run on the device */
    uint64_t redone; /* of them, rows run again on the CPU */
} gp_match_gpu_stats;
/* Runs the rows of count prepared traces on the GPU (rows the device's fixed capacities cannot
 * hold are run again by gp_match_fill once the device is released), filling their tables; st
 * (may be NULL): where the time went. GP_EUNSUPPORTED without CUDA or a device, GP_ENOMEM,
 * GP_EDEVICE on a device error. */
int gp_match_fill_cuda(const gp_graph *g, gp_match_prep *const *pr, size_t count,
                       gp_match_gpu_stats *st, gp_err *err);
/* Viterbi over a prepared trace (the same p, ts and o as prepared). */
int gp_match_run(const gp_graph *g, const gp_match_point *p, const double *ts,
                 const gp_match_opts *o, const gp_match_prep *pr, gp_match *out, gp_err *err);
void gp_match_prep_free(gp_match_prep *pr);

/* The route the model scores between two matched positions (the least-weight one, the same
 * search without bounds) in gp_engine_route_snap's form, for assembling a matching's legs:
 * GP_OK, GP_ENOTFOUND when b cannot be reached, GP_ENOMEM. */
int gp_match_route(const gp_graph *g, const gp_snap *a, const gp_snap *b, gp_snap_route *out,
                   gp_err *err);
/* A search's memory for gp_match_route_in, kept between the calls of one thread (a trace's legs
 * ask for one route each): gp_match_search_new is NULL when out of memory. */
typedef struct gp_match_search gp_match_search;
gp_match_search *gp_match_search_new(void);
void gp_match_search_free(gp_match_search *s);
/* gp_match_route searching in s's memory (NULL: its own, as gp_match_route): the same answer. */
int gp_match_route_in(gp_match_search *s, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                      gp_snap_route *out, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
