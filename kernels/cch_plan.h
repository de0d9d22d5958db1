/* cch_plan.h - the sweep plan of a CCH topology as the GPU CCH (kernels/cch*.cu) reads it: the
 * plan's layout (gp_cch_plan), its top table (gp_cch_top) and piece tables (gp_cch_ptab), and
 * what a topology's device part asks the plan to be built with (gp_dcch_plan_req). Plain C, part
 * of the kernels' interface: the plan is computed on the host by the engine (engine/cch_plan.h:
 * the model, the builders, the CPU references), which hands it down through kernels/cch.h.
 *
 * Layout. Nodes are renumbered to positions: phases in order, the bins of a phase in order, a
 * bin's steps in order, ranks ascending within a step. Each position's upward CCH arcs are split
 * into "inner" arcs (head in the same bin, stored as the offset from the bin's first position)
 * and "outer" arcs (head in an earlier phase, stored as a position), each with its CCH edge id
 * (the weight to read); an outer arc also names its tail (offset in the bin), so that a bin's
 * outer arcs can be relaxed all at once, an arc per thread. Bins of a phase are ordered largest
 * first (so big bins start first on the device).
 */
#ifndef GP_KERNELS_CCH_PLAN_H
#define GP_KERNELS_CCH_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_cch_plan {
    uint32_t n; /* positions (= topo->n) */
    uint32_t nphases, nbins, nsteps;
    uint32_t *phase_bin;  /* nphases+1: bins of phase p are phase_bin[p] .. phase_bin[p+1]-1 */
    uint32_t *bin_first;  /* nbins+1: positions of bin b are bin_first[b] .. bin_first[b+1]-1 */
    uint32_t *bin_step;   /* nbins+1: steps of bin b are bin_step[b] .. bin_step[b+1]-1 */
    uint32_t *step_first; /* nsteps+1: positions of step s are step_first[s] .. step_first[s+1]-1 */
    uint32_t *rank;       /* n: position -> rank */
    uint32_t *pos;        /* n: rank -> position */
    uint32_t *in_first;   /* n+1: inner arcs of position p are in_first[p] .. in_first[p+1]-1 */
    uint32_t *in_head;    /* head as an offset from its bin's first position */
    uint32_t *in_edge;    /* CCH edge id */
    uint32_t *out_first;  /* n+1: outer arcs of position p */
    uint32_t *out_head;   /* head position (an earlier phase) */
    uint32_t *out_tail;   /* tail as an offset from its bin's first position */
    uint32_t *out_edge;   /* CCH edge id */
    uint32_t max_bin_nodes, max_bin_arcs, max_bin_out, max_bin_steps; /* over all bins */
} gp_cch_plan;

/* The top table of a plan (issue 18: the long dependency chains of the top separators replaced by
 * one min-plus product). The first `nphases` phases of a plan are the positions 0 .. K-1, closed
 * upwards (every upper neighbour of a top node is a top node, at a smaller position). At
 * customization, tab[u*K + v] = the down distance from u to v inside the top (the shortest path
 * from u to v whose ranks descend, so u is an elimination-tree ancestor of v; 0 for u = v, GP_INF
 * without one). A sweep then sets every top cell at once: d(v) = min over the upward search's top
 * labels d0(u) of d0(u) + tab[u*K + v], which is PHAST's value for v (PHAST's d(v) is the minimum
 * over descending paths from the search space), and runs the remaining phases as before. */
typedef struct gp_cch_top {
    uint32_t K, nphases; /* positions 0 .. K-1 = phases 0 .. nphases-1 */
    uint32_t *first;     /* K+1: arcs of top position x are first[x] .. first[x+1]-1 */
    uint32_t *head;      /* head position (< x) */
    uint32_t *edge;      /* CCH edge id (its down weight bw is the arc's) */
} gp_cch_top;

/* Piece tables (issue 18: a bin's dependent steps replaced by one min-plus product). Inside a bin
 * the step of a position is its depth in its piece (the parent is an upper neighbour in the bin
 * unless the node is a piece root, and every upper neighbour is an ancestor), and the positions
 * are sorted by step, so the positions of depth > j are a suffix of the bin. Once the outer arcs
 * are relaxed (D1), a cell's value is d(v) = min(D1(v), min over v's piece ancestors a_j of
 * D1(a_j) + T(v, j)), T(v, j) = the down distance from a_j (the (j+1)-th ancestor: a_0 = parent)
 * to v over the bin's inner arcs (GP_CCH_INF: none): no steps. Entry (v, j) of bin b lives at
 * first[b] + col(j) + (v - S(j+1)), S the bin's step offsets, col(j) = sum over i < j of (N -
 * S(i+1)): a column per depth j holding the positions deeper than j, so that neighbouring threads
 * of the product take different cells. An entry is a uint64: low word (v << 16) | a_j (offsets in
 * the bin), high word T (set at customization; T(v, j) reads T of v's upper neighbours at lower
 * steps, so a bin fills step by step). Only bins of at least min_steps steps and fewer than 65536
 * nodes, at most max_bin entries each, in phases f0 .. (a phase's eligible bins all or none,
 * while the total stays within max_total) get a table; the others keep the step sweep. */
typedef struct gp_cch_ptab {
    uint32_t nbins;                /* = the plan's */
    uint32_t ntab;                 /* bins with a table */
    uint32_t *first;               /* nbins+1: entries of bin b (none: first[b] == first[b+1]) */
    uint32_t *bins;                /* ntab: the bins with a table, ascending */
    uint32_t *depth;               /* n: position -> its step within its bin (depth in its piece) */
    uint64_t *ent;                 /* first[nbins] entries */
    uint32_t max_nodes, max_steps; /* over the bins with a table */
} gp_cch_ptab;

/* What a topology's device part asks its plan to be built with (kernels/cch.h
 * gp_dcch_topo_src.plan; engine/cch_plan.h gp_cch_plan_make builds it): the thresholds base,
 * base*ratio, ... below n (at most 8), at least min_bins bins per phase and about bin_cap nodes a
 * bin; the top table of at most top_max nodes (0: none); piece tables (0 piece_max: none) for the
 * phases after the top, in bins of at least piece_min_steps steps, at most piece_max_bin entries a
 * bin and piece_max in all. */
typedef struct gp_dcch_plan_req {
    uint32_t base, ratio, min_bins, bin_cap;
    uint32_t top_max;
    uint32_t piece_min_steps, piece_max_bin, piece_max;
} gp_dcch_plan_req;

/* A built plan: the layout, its top table and piece tables (NULL where none was asked for or none
 * fits). Owned by whoever built it (engine/cch_plan.h gp_cch_plan_clear frees it). */
typedef struct gp_dcch_plan {
    gp_cch_plan *plan;
    gp_cch_top *top;
    gp_cch_ptab *pt;
} gp_dcch_plan;

#ifdef __cplusplus
}
#endif
#endif
