/* cch_plan.h - the sweep plan of a CCH topology: how the GPU PHAST sweep (kernels/cch_sweep.cu)
 * cuts the elimination tree into pieces that one thread block each can sweep with block barriers
 * only.
 *
 * Why it works. The upward neighbours of a rank in the CCH are its elimination-tree ancestors, so a
 * node's distance depends only on its ancestors. Let sz(x) be the size of x's elimination subtree
 * (sz(parent) > sz(x)) and T_1 < T_2 < ... < T_q the plan's thresholds: phase 0 holds the nodes
 * with sz > T_q, phase j the nodes with T_{q-j} < sz <= T_{q-j+1}, the last phase those with sz <=
 * T_1. Ancestors are never in a later phase. Within a phase, a "piece" is the set of nodes sharing
 * their highest same-phase ancestor; every same-phase ancestor of x is in x's piece, so an arc
 * leaves a piece only towards an earlier phase. A phase is one kernel launch (the launch boundary
 * is the only grid-wide barrier); its pieces are packed into bins (largest first onto the least
 * loaded bin), a bin being one thread block. Inside a bin, "steps" replace levels: step(x) = 1 + the
 * largest step of an upper neighbour inside the bin (0 without one), so a step only reads earlier
 * steps of its own bin. Phase 0 is one piece per elimination-tree root.
 *
 * Layout. Nodes are renumbered to positions: phases in order, the bins of a phase in order, a bin's
 * steps in order, ranks ascending within a step. Each position's upward CCH arcs are split into
 * "inner" arcs (head in the same bin, stored as the offset from the bin's first position) and "outer"
 * arcs (head in an earlier phase, stored as a position), each with its CCH edge id (the weight to
 * read); an outer arc also names its tail (offset in the bin), so that a bin's outer arcs can be
 * relaxed all at once, an arc per thread. Bins of a phase are ordered largest first (so big bins start first on the device).
 *
 * The plan depends on the topology only (not the metric); engine/cch_cuda.c builds it once per
 * device CCH (at upload), tests/test_cch.c checks its invariants and runs it on the CPU.
 */
#ifndef GP_CCH_PLAN_H
#define GP_CCH_PLAN_H

#include "engine/cch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_cch_plan {
    uint32_t n;           /* positions (= topo->n) */
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

/* Builds the plan of t with thresholds thr[0..nthr-1] (ascending, each >= 1; nthr 0 = one phase)
 * and at least min_bins bins per phase where the phase has that many pieces, more when a phase's
 * nodes exceed bin_cap per bin. */
int gp_cch_plan_build(const gp_cch_topo *t, const uint32_t *thr, uint32_t nthr, uint32_t min_bins,
                      uint32_t bin_cap, gp_cch_plan **out, gp_err *err);
/* The default thresholds: base, base*ratio, base*ratio^2, ... while below t->n (at most 8). */
uint32_t gp_cch_plan_thresholds(const gp_cch_topo *t, uint32_t base, uint32_t ratio,
                                uint32_t thr[8]);
void gp_cch_plan_free(gp_cch_plan *p); /* accepts NULL */
uint64_t gp_cch_plan_bytes(const gp_cch_plan *p);
/* Checks every invariant above against t (positions a permutation, phases/bins/steps contiguous
 * and covering, every upward CCH edge exactly once as an inner arc to an earlier step of the same
 * bin or an outer arc to an earlier phase); GP_EINVAL naming the first violation. */
int gp_cch_plan_check(const gp_cch_plan *p, const gp_cch_topo *t, gp_err *err);
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

/* The top of p: the most leading phases whose nodes number at most max_nodes, leaving at least one
 * phase to the sweep; *out = NULL (GP_OK) when not even phase 0 fits. */
int gp_cch_plan_top(const gp_cch_plan *p, uint32_t max_nodes, gp_cch_top **out, gp_err *err);
void gp_cch_top_free(gp_cch_top *t); /* accepts NULL */
/* tab (K*K) from the down weights bw, on the CPU: the reference for the GPU's
 * (kernels/cch_customize.cu). */
void gp_cch_top_table(const gp_cch_top *t, const uint32_t *bw, uint64_t *tab);

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
    uint32_t nbins;     /* = the plan's */
    uint32_t ntab;      /* bins with a table */
    uint32_t *first;    /* nbins+1: entries of bin b (none: first[b] == first[b+1]) */
    uint32_t *bins;     /* ntab: the bins with a table, ascending */
    uint32_t *depth;    /* n: position -> its step within its bin (depth in its piece) */
    uint64_t *ent;      /* first[nbins] entries */
    uint32_t max_nodes, max_steps; /* over the bins with a table */
} gp_cch_ptab;

int gp_cch_plan_pieces(const gp_cch_plan *p, const gp_cch_topo *t, uint32_t f0,
                       uint32_t min_steps, uint32_t max_bin, uint32_t max_total,
                       gp_cch_ptab **out, gp_err *err);
void gp_cch_ptab_free(gp_cch_ptab *pt); /* accepts NULL */
/* T into the entries' high words from the down weights bw, on the CPU (the GPU's reference,
 * kernels/cch_customize.cu piece_tables); 1 when a down distance would reach 2^32-1 (then the
 * tables must not be used with this metric), 0 when not, -1 out of memory. */
int gp_cch_ptab_fill(gp_cch_ptab *pt, const gp_cch_plan *p, const uint32_t *bw);

/* PHAST from src executed the way the GPU does (phase by phase, bin by bin, outer arcs first, then
 * step by step or, with pt, the product of a bin that has a table; with top / tab, the top's cells
 * by the product first), on the CPU: the reference for tests. dist: n entries in node order. top
 * and pt may be NULL. */
int gp_cch_plan_sssp(const gp_cch *c, const gp_cch_plan *p, const gp_cch_top *top,
                     const uint64_t *tab, const gp_cch_ptab *pt, uint32_t src, uint64_t *dist,
                     gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
