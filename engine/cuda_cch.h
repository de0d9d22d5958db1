/* cuda_cch.h - the CCH on the GPU (kernels/cch.cu) behind a plain-C interface, used by
 * engine/cch_cuda.c and the kernel lab (bench/lab_cch.cu).
 *
 * A gp_dcch_topo is the device part of one CCH topology (engine/cch.h): the upward CSR by rank,
 * lower triangles, rank -> node, levels, and the PHAST sweep plan (engine/cch_plan.h) with the
 * layouts of its tables. It is built once per topology and device and shared, read-only and
 * reference counted, by every gp_dcch on that topology: a cost change on a graph (a new graph
 * version with the same topology) uploads and customizes only a metric.
 * A gp_dcch is the device copy of one customized CCH: a reference to its gp_dcch_topo, the original
 * and customized weights, the plan's weights and tables, and a workspace for the sweeps. Every
 * call takes the cudaStream_t to run on (as void *) and is synchronous on it; one gp_dcch is used
 * by one caller at a time (engine/cch_cuda.c holds a mutex); gp_dcchs sharing a gp_dcch_topo may
 * run at once.
 *
 *  - customize: level by level bottom-up, one warp per CCH edge (lanes over its lower triangles,
 *    a warp min-reduction); consecutive small levels are run by one block in one launch with a
 *    barrier between levels, so the narrow top of the hierarchy costs no launch per level.
 *  - phast: k sources at once; distances as an n x k matrix (sources adjacent, so the threads of
 *    one node read neighbouring words); the upward search results (from the CPU) are scattered
 *    in, then the sweep: by default the plan (engine/cch_plan.h), a launch per phase and a block
 *    per bin, steps separated by block barriers only, distances and arcs staged in shared memory;
 *    or (GP_DCCH_SWEEP_LEVELS) levels top-down. Output in node order, one row per source.
 *  - rphast: the level sweep on a restricted graph (the upward closure of a target set, in local
 *    ids, uploaded once per table by rphast_prepare), then only the targets' entries come back.
 */
#ifndef GP_CUDA_CCH_H
#define GP_CUDA_CCH_H

#include "engine/cch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_dcch_topo gp_dcch_topo;
typedef struct gp_dcch gp_dcch;

/* Uploads topology t to the current device and builds its sweep plan (thresholds base,
 * base*ratio, ..., bins of about bin_cap nodes; 0 = the defaults, see gp_dcch_plan). *out holds
 * one reference and a reference to t. */
int gp_dcch_topo_new(const gp_cch_topo *t, void *stream, uint32_t base, uint32_t ratio,
                     uint32_t bin_cap, gp_dcch_topo **out, gp_err *err);
void gp_dcch_topo_ref(gp_dcch_topo *t);
void gp_dcch_topo_unref(gp_dcch_topo *t); /* accepts NULL; frees with the last reference */
uint64_t gp_dcch_topo_bytes(const gp_dcch_topo *t);
/* A device CCH for c on the topology part t (c->topo's; referenced) with c's original weights
 * (ofw/obw) uploaded; not customized yet. */
int gp_dcch_new(gp_dcch_topo *t, const gp_cch *c, void *stream, gp_dcch **out, gp_err *err);
void gp_dcch_free(gp_dcch *d); /* accepts NULL; drops its topology part's reference */
uint64_t gp_dcch_bytes(const gp_dcch *d); /* its own bytes plus its topology part's */
/* The sweep PHAST uses: the plan (default; engine/cch_plan.h: one launch per phase, a block per
 * bin sweeping its steps in shared memory) or the level sweep (the top levels in one block, then
 * one cooperative kernel with a grid barrier per level; also RPHAST's). The environment variable
 * GPATH_CCH_SWEEP=levels picks the level sweep at upload; the lab times both. */
#define GP_DCCH_SWEEP_PLAN 0
#define GP_DCCH_SWEEP_LEVELS 1
#define GP_DCCH_SWEEP_PLAN_NOTOP 2 /* the plan without its tables (cch_plan.h gp_cch_top, ptab) */
#define GP_DCCH_SWEEP_PLAN_NOPIECES 3 /* the plan with its top table, without piece tables */
/* Flags or'ed onto a plan sweep (issue 18; the lab compares them with the plain plan): GRAPH is
 * on from upload (GPATH_CCH_GRAPH=0: off), the others opt-in (slower on the H100 run of the lab):
 * CHAINS sweeps a phase whose largest piece has at most GPATH_CCH_CHAINS positions (default 1024)
 * and that does not use piece tables at this k as chains (cch_plan.h gp_cch_chains: a group of
 * lanes per piece, a lane per column, no block barrier between steps); CHAINS_FIRST prefers
 * chains to piece tables too; GRAPH launches the sweep's kernels as one captured CUDA graph per k
 * (re-captured when anything a launch depends on changes). */
#define GP_DCCH_SWEEP_CHAINS 4
#define GP_DCCH_SWEEP_CHAINS_FIRST 8
#define GP_DCCH_SWEEP_GRAPH 16
/* WARPS (on from upload, GPATH_CCH_WARPS=0: off): the phases that use no piece table at this k
 * and whose bins are small (a bin's cells fit a warp's 12 KiB of shared memory) run as warp bins
 * (kernels/cch.cu sweep_warcs): a warp per bin, several bins per block, a step's inner arcs a
 * lane each with __syncwarp between the steps, instead of a block per bin with block barriers,
 * so that many more bins are in flight per SM; one source by default, several with WMULTI. */
#define GP_DCCH_SWEEP_WARPS 32
/* SKIP (on from upload, GPATH_CCH_SKIP=0: off; with WARPS): the last phase's warp bins read
 * their cells only where an upward search left an entry (a flag per bin, set by the sweep's
 * init, cleared by the bin's last warp): every other cell there is INF between sweeps, so a
 * sweep reads none of the last phase's cells but those of its sources' own bins. */
#define GP_DCCH_SWEEP_SKIP 64
/* WMULTI (on from upload, GPATH_CCH_WMULTI=0: off): warp bins for several sources too,
 * GPATH_CCH_WKW (1, 2, 4, 8 or 16, default 4) sources per warp, k / that many warps per bin. */
#define GP_DCCH_SWEEP_WMULTI 256
/* W64: the warp bins keep their cells in 64 bits. Without it (the default) the cells are 32-bit
 * in shared memory with sums saturating just below 2^32 - 1 (INF): a cell is exact unless it
 * saturated, and when one did the kernel says so and the sweep runs again with 64-bit cells,
 * which stay on for this metric (until the next customization or gp_dcch_set_sweep). */
#define GP_DCCH_SWEEP_W64 1024
/* FLAT (on from upload, GPATH_CCH_FLAT=0: off): a phase that uses piece tables at this k, every
 * bin of it with a table, runs without bins: a launch relaxing every position's outer arcs (a
 * thread per position and source), then one applying every table entry (a thread per entry and
 * source, atomicMin on the cells); its output follows in the next launch (kernels/cch.cu
 * flat_outer / flat_entries). */
#define GP_DCCH_SWEEP_FLAT 2048
/* OSORT (on from upload, GPATH_CCH_OSORT=0: off): the warp bins write their output in node order
 * within a bin (a sorted copy of the bin's nodes with their offsets, 6 bytes per node), so that
 * a warp's 32 stores touch fewer 32-byte sectors than in position order. */
#define GP_DCCH_SWEEP_OSORT 4096
/* GATHER (on from upload, GPATH_CCH_GATHER=0: off): for several sources, a flat phase of at
 * least 2^22 entries (GPATH_CCH_GATHER_MIN) applies its table entries a position at a time (the
 * entries sorted by their target, a thread per position and source taking the minimum, one
 * write) instead of an atomicMin per entry and source (kernels/cch.cu flat_gather). */
#define GP_DCCH_SWEEP_GATHER 8192
/* PASSES (on from upload, GPATH_CCH_PASSES=0: off): warp bins of 4 sources a warp with 32-bit
 * cells walk their arcs as passes of 8 arcs x 4 sources (each step's arcs padded to a multiple
 * of 8), the arc window rotating through registers without moves (kernels/cch.cu sweep_wpass)
 * instead of step by step (sweep_warcs); the sums saturate below 2^31 there. */
#define GP_DCCH_SWEEP_PASSES 16384
/* BORDER (on from upload, GPATH_CCH_BORDER=0: off): the warp bins of a phase run in the order of
 * their smallest node instead of the plan's, so that the bins in flight together write their
 * output to neighbouring nodes. */
#define GP_DCCH_SWEEP_BORDER 32768
void gp_dcch_set_sweep(gp_dcch *d, int sweep);
/* Rebuilds the plan with thresholds base, base*ratio, ... and at most about bin_cap nodes per bin
 * (0 = the defaults: 256, 16, 128) into a topology part of d's own (the shared one, built with
 * the defaults, stays as it is for the others). The plan's top table
 * covers the leading phases of at most GPATH_CCH_TOP nodes (read at upload; default 2048, 0 =
 * none); the piece tables (cch_plan.h gp_cch_ptab) the following phases while their entries
 * number at most GPATH_CCH_PIECES (default 2^25, 0 = none); both are recomputed with every
 * customization (whose device time includes them). */
int gp_dcch_plan(gp_dcch *d, void *stream, uint32_t base, uint32_t ratio, uint32_t bin_cap,
                 gp_err *err);
/* Replaces the original weights (a new metric on the same topology). */
int gp_dcch_set_metric(gp_dcch *d, void *stream, const uint32_t *ofw, const uint32_t *obw,
                       gp_err *err);
/* Customizes on the device; fw / bw / fmid / bmid (host, topo->m entries; may be NULL) receive
 * the weights and witnesses (bit-identical to the CPU's). GP_ETOOBIG when a shortcut overflows
 * (as the CPU). ms: device time (may be NULL). */
int gp_dcch_customize(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw, uint32_t *fmid,
                      uint32_t *bmid, float *ms, gp_err *err);
/* PHAST for k sources: init_first (k+1) / init_rank / init_dist list each source's upward search
 * (ranks and distances); dist (host, k*n, may be NULL: the lab times the device alone) gets one
 * row per source in node order. */
int gp_dcch_phast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                  const uint32_t *init_rank, const uint64_t *init_dist, uint64_t *dist,
                  float *ms, gp_err *err);
/* RPHAST: the restricted graph (nsel local nodes in ascending rank; first (nsel+1) / head / wt its
 * upward arcs with down weights; nlev levels lev_first (nlev+1) in local ids) and the local ids of
 * the nt targets. */
int gp_dcch_rphast_prepare(gp_dcch *d, void *stream, uint32_t nsel, const uint32_t *first,
                           const uint32_t *head, const uint32_t *wt, uint32_t nlev,
                           const uint32_t *lev_first, uint32_t nt, const uint32_t *tgt,
                           gp_err *err);
/* k sources (init lists in local ids, as for phast): out (host, k x nt). */
int gp_dcch_rphast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                   const uint32_t *init_local, const uint64_t *init_dist, uint64_t *out,
                   float *ms, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
