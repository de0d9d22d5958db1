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
 * steps of its own bin. Phase 0 is one piece per elimination-tree root. The layout (positions,
 * inner and outer arcs) and the tables' structs are the kernels' interface: kernels/cch_plan.h.
 *
 * The plan depends on the topology only (not the metric); engine/cch_cuda.c builds it once per
 * device CCH (gp_cch_plan_make, when the upload asks through kernels/cch.h gp_dcch_topo_src.plan),
 * tests/test_cch.c checks its invariants and runs it on the CPU.
 */
#ifndef GP_CCH_PLAN_H
#define GP_CCH_PLAN_H

#include "engine/cch.h"
#include "kernels/cch_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* The top of p (kernels/cch_plan.h gp_cch_top): the most leading phases whose nodes number at
 * most max_nodes, leaving at least one phase to the sweep; *out = NULL (GP_OK) when not even
 * phase 0 fits. */
int gp_cch_plan_top(const gp_cch_plan *p, uint32_t max_nodes, gp_cch_top **out, gp_err *err);
void gp_cch_top_free(gp_cch_top *t); /* accepts NULL */
/* tab (K*K) from the down weights bw, on the CPU: the reference for the GPU's
 * (kernels/cch_customize.cu). */
void gp_cch_top_table(const gp_cch_top *t, const uint32_t *bw, uint64_t *tab);

/* The piece tables of p (kernels/cch_plan.h gp_cch_ptab) for the phases from f0 on. */
int gp_cch_plan_pieces(const gp_cch_plan *p, const gp_cch_topo *t, uint32_t f0, uint32_t min_steps,
                       uint32_t max_bin, uint32_t max_total, gp_cch_ptab **out, gp_err *err);
void gp_cch_ptab_free(gp_cch_ptab *pt); /* accepts NULL */
/* T into the entries' high words from the down weights bw, on the CPU (the GPU's reference,
 * kernels/cch_customize.cu piece_tables); 1 when a down distance would reach 2^32-1 (then the
 * tables must not be used with this metric), 0 when not, -1 out of memory. */
int gp_cch_ptab_fill(gp_cch_ptab *pt, const gp_cch_plan *p, const uint32_t *bw);

/* The plan of t as a topology's device part asks for it (kernels/cch_plan.h gp_dcch_plan_req:
 * thresholds, bins, the top table, then the piece tables after it) into *out; out is left empty
 * on failure. gp_cch_plan_clear frees what it holds (an empty one too). */
int gp_cch_plan_make(const gp_cch_topo *t, const gp_dcch_plan_req *rq, gp_dcch_plan *out,
                     gp_err *err);
void gp_cch_plan_clear(gp_dcch_plan *pl);

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
