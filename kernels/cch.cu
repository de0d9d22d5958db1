/* cch.cu - GPU customization, PHAST and RPHAST for customizable contraction hierarchies. Plain-C
 * interface and the design in engine/cuda_cch.h; the CPU reference is engine/cch.c, the lab
 * bench/lab_cch.cu (validation against the CPU, then timings).
 *
 * Weights are uint32 with 0xffffffff = none, customization sums saturate and flag an overflow
 * exactly as the CPU does (a shortcut is wrong only when every candidate overflowed), so the GPU's
 * customized weights are bit-identical to the CPU's (min is order-independent). Sweep distances are
 * uint64 (GP_INF unreachable).
 *
 * Levels: the CCH's ranks are grouped by level (engine/cch.h), so a level is a contiguous rank
 * range and its edges a contiguous edge range; edges only go up a level, so a level's items are
 * independent.
 *  - customization, bottom-up: a launch per level of more than SMALL_ITEMS / 8 edges, a warp per
 *    edge (lanes over its lower triangles, warp min of value then witness); runs of smaller levels
 *    in one block of 1024 threads with __syncthreads() between levels (a block's global writes are
 *    visible to it after the barrier).
 *  - level sweep (RPHAST always; PHAST with GPATH_CCH_SWEEP=levels), top-down: the top levels
 *    (each <= 64 items, together <= TOP_CELLS distances) in one block with the distances and CSR
 *    offsets in shared memory, a warp per item; then all other levels in one persistent cooperative
 *    kernel (grid.sync() between levels), a warp per item, or a thread per item on levels of >=
 *    SWEEP_THREAD_ITEMS items (the wide, low-degree bottom). Distances of earlier levels are read
 *    with __ldcg.
 *  - plan sweep (PHAST by default): the elimination tree cut into phases, pieces and bins on the
 *    host at upload (engine/cch_plan.h); a launch per phase, a block per bin, the bin's steps
 *    separated by __syncthreads() only (no grid barrier), distances and inner arcs staged in
 *    shared memory, the output written in node order by the bins themselves (no gather pass), and
 *    only the upper phases' cells filled before a sweep (the last phase restores INF). The
 *    leading phases of at most TOP_MAX_NODES nodes are not swept: their cells come from the top
 *    table (cch_plan.h gp_cch_top, computed by top_table at customization) in sweep_init, which
 *    also fills and scatters (one launch before the remaining phases). The bins of the following
 *    phases (at least PIECE_MIN_STEPS steps, within PIECE_MAX_BIN / GPATH_CCH_PIECES entries)
 *    have piece tables (cch_plan.h gp_cch_ptab, computed by piece_tables at customization): after
 *    the outer arcs, such a bin's cells come from one min-plus product of its own cells with the
 *    table (an entry per thread, atomicMin in shared memory) instead of its steps; for k > 1 only
 *    in phases whose entries are at most twice their inner arcs (else the product's work, entries
 *    x k, outweighs the steps'). By default (engine/cuda_cch.h flags) a phase whose bins all have
 *    tables runs flat instead (flat_outer, flat_entries: no bins, an atomicMin per entry in
 *    global memory; flat_gather for several sources in the largest: a thread per position and
 *    source, its entries sorted by target), and the phases without tables with many bins run
 *    as warp bins (sweep_warcs: a warp per bin, a lane per inner arc of a step, 32-bit cells,
 *    the output in node order within a bin; sweep_wpass for 4 sources a warp: passes of 8 arcs
 *    x 4 sources), a phase's bins in the order of their smallest node.
 *
 * Versions (H100 80GB HBM3, bench/lab_cch.cu, device ms, medians; BAY / NY):
 *   v1  sweeps a thread per item, a launch per level of > 4096 items and one block for the
 *       smaller ones: PHAST 3.56 / 6.96 ms for one source, 0.174 / 0.317 ms per tree with 16 per
 *       sweep; RPHAST 100x100 3.00 / 5.74 ms device. (Separator nodes at the top have up to 114
 *       upward edges: one thread looping over them serialised the narrow levels.)
 *   v2  a warp per item below 16384 items, a launch per level over 64 items, top levels in shared
 *       memory: PHAST 0.57 / 0.90 ms, 16 per sweep 0.075 / 0.101 ms per tree; RPHAST 100x100
 *       0.84 / 1.29 ms, 1000x1000 2.40 / 3.69 ms device.
 *   v3  (the level sweep) v2 with the per-level launches below the top replaced by one
 *       cooperative kernel: PHAST 0.62 / 0.95 ms, 16 per sweep 0.083 / 0.112 ms per tree; RPHAST
 *       100x100 1.02 / 1.63 ms, 1000x1000 3.66 / 5.54 ms device: no gain over v2 (another
 *       machine of the same kind; within its noise). Kept: one launch instead of ~50.
 *   v4a the plan sweep, outer arcs relaxed serially by a thread per cell: PHAST 0.359 / 0.487 ms
 *       (v3 in the same run 0.622 / 0.970), 16 per sweep 0.044 / 0.052 ms per tree (v3 0.084 /
 *       0.113).
 *   v4  v4a with the outer arcs relaxed an arc per thread (atomicMin): PHAST 0.299 /
 *       0.405 ms (v3 in the same run 0.597 / 0.944: 2.0x / 2.3x), 16 per sweep 0.047 / 0.062 ms
 *       per tree (v3 0.083 / 0.112): k=1 gained, k=16 lost 7-19% against v4a (the next step:
 *       the arc-per-thread form for k = 1 only). A step inside a block costs ~0.7-1 us and a
 *       launch ~9 us on that machine (bench/results/2026-11-25-NVIDIA-H100-80GB-HBM3-gpu-phast.md
 *       has the per-phase profile); BAY's 0.1 ms target is not reached.
 *   v5  v4 with the top table (engine/cch_plan.h gp_cch_top: the leading phases of
 *       <= 2048 nodes as one min-plus product, fused with the fill and scatter into one launch)
 *       and sweep_bins specialised for k = 1 and for bins that fit shared memory: PHAST 0.135 /
 *       0.156 ms (the same plan without the table 0.265 / 0.360, v3 0.599 / 0.942), 16 per sweep
 *       0.028 / 0.033 ms per tree (without the table 0.044 / 0.059); gen:1M 0.406 / 0.145
 *       (bench/results/2026-11-26-NVIDIA-H100-80GB-HBM3-gpu-phast-top.md). The table costs 0.83 /
 *       1.08 ms of device time at customization.
 *   v6  v5 with piece tables (cch_plan.h gp_cch_ptab) for the phases after the top:
 *       BAY phase 2 (113 of 114 bins, 127 K entries, longest bin 74 steps) and phase 3 (528 bins,
 *       2.87 M entries, 35 steps), 24 MB; NY 184 K + 3.02 M entries; gen:1M 12.4 M. Predicted
 *       before any device run: BAY k=1 phase 2 78 -> ~14 us, phase 3 44 -> ~15 us, PHAST 0.135
 *       -> ~0.06 ms; NY 0.156 -> ~0.07; gen:1M 0.406 -> ~0.15; 16 per sweep (phase 3 keeps its
 *       steps) within 10% of v5; customization + ~0.1-0.2 ms (BAY, NY), ~0.4 ms (gen:1M: a bin
 *       of 213 steps). Not yet measured.
 *   v7  (gp_dcch_set_sweep flags, engine/cuda_cch.h; the lab times them beside v6; (a) on by
 *       default since its measurement, (b) opt-in) (a)
 *       GP_DCCH_SWEEP_GRAPH: the sweep's launches (sweep_init + a launch per phase) captured once
 *       per key (x_key) as a CUDA graph and replayed: one submission instead of 3-6. (b)
 *       GP_DCCH_SWEEP_CHAINS: a phase whose largest piece is short (GPATH_CCH_CHAINS, default
 *       1024 positions) and that uses no piece table at this k is swept as chains (cch_plan.h
 *       gp_cch_chains): G x r lanes per piece, a lane per column (r lanes splitting a node's
 *       arcs), walking the piece position by position with no block barrier; the pieces of a bin
 *       run side by side. Aimed at gen:24M's last phase at k = 16 (22,994 bins, 20.5 ms of the
 *       24 ms sweep: ~35+ barrier-separated steps per bin at one 512-thread block per SM).
 *       Predicted before any device run: BAY k=1 -5..-10 us from (a); gen:24M k=16 last phase
 *       20.5 -> ~3-5 ms from (b) (a piece of <= 256 positions at ~100-200 cycles each, ~8 pieces
 *       per SM at once, bounded by shared memory); k = 1 phases with piece tables unchanged
 *       (CHAINS_FIRST tries chains there too). Measured (bench/results/2026-11-26-NVIDIA-H100-
 *       80GB-HBM3-gpu-cch-v7.md, same sources, same run): (a) NY 0.145 -> 0.121 ms, BAY 0.114
 *       -> 0.102, gen:1M 0.268 -> 0.250, gen:24M 1.828 -> 1.804 for one source, 1.00-1.10x at
 *       k = 16; (b) lost everywhere: BAY 0.91x, gen:24M one source 0.38x, k = 16 0.74x (the
 *       last phase's chains run slower than its barrier-separated steps), so gen:24M stays at
 *       1.80 ms / 1.51 ms per tree. (-v7b.md, another machine: BAY 0.107 -> 0.097 ms.)
 *   v8  warp bins for one source (GP_DCCH_SWEEP_WARPS, sweep_wbins: a warp per bin,
 *       8 bins per block, __syncwarp between steps) and bins of 128 nodes instead of 1024. The
 *       profile of gen:24M's last phase (23.5 M positions, 33 steps per bin) showed a bin's time
 *       to be a fixed chain (~40 us per 1024-node bin at 5 blocks per SM, ~26 us per 256-node
 *       bin at 8), so the gain is bins in flight (64 per SM), not fewer steps: a warp per piece
 *       (the first try) kept the same chain and lost (0.88x); warp bins with their arcs staged in
 *       shared memory lost too (24 warps per SM). Measured (-27-...-gpu-cch-v8.md, same run,
 *       v7's sweep -> v8's, device ms): one source NY 0.115 -> 0.106, BAY 0.095 -> 0.089, gen:1M
 *       0.243 -> 0.229, gen:24M 1.802 -> 1.522 (last phase 1.38 -> 1.13 ms); 16 per sweep per
 *       tree (block sweep on the smaller bins) NY 0.041 -> 0.038, BAY 0.034 -> 0.030, gen:1M
 *       0.122 -> 0.098, gen:24M 1.503 -> 0.992. gen:24M stays above the issue's 1 ms / 0.3 ms.
 *       Also lost (-27-...-gpu-cch-v8b.md): loading a lane's next-step arcs into registers ahead
 *       (gen:24M 1.52 -> 1.94 ms: registers halved the blocks per SM).
 *   v9  three changes, each measured beside the sweep before it in the same run
 *       (H100; bench/results/2026-11-27-NVIDIA-H100-80GB-HBM3-gpu-cch-v9a / -v9b / -v9.md):
 *       (a) warp bins give a lane to each inner arc of a step (sweep_warcs; v8 gave a step's
 *       positions a group of lanes each, most idle at gen:24M's 2.7 arcs per position, and was
 *       issue-bound): gen:24M one source 1.459 -> 1.175 ms, the last phase 1.13 -> 0.78 ms;
 *       (b) their cells in 32 bits with a saturation check (1.180 -> 1.165 ms: the atomics
 *       were not the limit) and several sources per warp (16 per sweep 0.992 -> 0.648 ms per
 *       tree on gen:24M; slower on NY and BAY, whose last phase has 2,446 bins: used from 32
 *       bins per SM); (c) flat table phases (flat_outer / flat_entries): the phases with piece
 *       tables no longer a block per bin, idle where bins are few (gen:24M's phases 2-4, 37 /
 *       528 / 3,134 bins: 360 -> 159 us): one source NY 0.102 -> 0.073, gen:1M 0.226 ->
 *       0.156, gen:24M 1.124 -> 0.959 ms; 16 per sweep gen:24M 0.646 -> 0.573 ms per tree.
 *       Also: one source sweeps its own cells (pdist1), so it never cleans the layout a
 *       16-source sweep left. Lost: the table phases as warp bins (0.49x: 27 arcs a position
 *       make 27 lanes hit one cell, and 243 steps a bin).
 *   v10 (-27-...-gpu-cch-v10a..d.md on gen:4M, -gather.md and -v10.md on gen:24M,
 *       Nsight Compute in -ncu-v10.md): (a) the warp bins store their output in node order
 *       within a bin (GP_DCCH_SWEEP_OSORT: a sorted copy of each bin's nodes; gen:1M's 32-lane
 *       stores touch 9.5 sectors instead of 19.6): gen:4M 16 per sweep 0.101 -> 0.079 ms per
 *       tree; (b) the outer arcs loaded four at a time with no branch between the loads (they
 *       were compiled as four dependent round trips an arc: 40% of the stall samples), the
 *       output a position per lane with its columns in turn, untouched cells filled with
 *       16-byte stores, a bin's bounds as one record: gen:4M 0.079 -> 0.068 ms per tree, one
 *       source 0.205 -> 0.187 ms (other runs); (c) the largest flat phases gathered for several
 *       sources (GP_DCCH_SWEEP_GATHER, flat_gather): gen:24M 0.380 -> 0.353 ms per tree in the
 *       same run. gen:24M one source 0.959 -> 0.781 ms, 16 per sweep 0.574 -> 0.353 ms per tree.
 *       Lost: the inner arcs read from L1 one or two passes ahead instead of the register
 *       window (0.95x at 16 sources on gen:4M: the per-pass loads miss L1 and outlast two
 *       passes), 8 or 16 sources per warp (occupancy), bins of 192 / 256 nodes, thresholds from
 *       128, the gathered phases for one source (0.68-0.84x).
 *   v11 (this code; -27-...-gpu-cch-v11-passes.md at 37c6d47, -v11.md at 33a2cda, the
 *       experiments between them in -gpu-cch-output.md): (a) the warp bins of 4 sources a warp
 *       walk passes (GP_DCCH_SWEEP_PASSES, sweep_wpass: steps padded to 8 arcs, the chunks
 *       rotating through registers without moves, no branch in a pass): a third fewer
 *       instructions in gen:4M's last phase, 7% less time under Nsight Compute; gen:24M 16 per
 *       sweep 0.350 -> 0.331 ms per tree. On gen:4M that phase takes as long without its inner
 *       or outer arcs and 40% less without its output stores (0.066 -> 0.041 ms per tree;
 *       stored contiguously 0.047): the stores bound it, not the arcs. (b) so the bins of a
 *       phase run in the order of their smallest node (GP_DCCH_SWEEP_BORDER): bins in flight
 *       together store to neighbouring nodes and share 32-byte sectors: gen:24M 16 per sweep
 *       0.331 -> 0.293 ms per tree, one source 0.802 -> 0.827 ms (same run). Lost: 7 blocks of 8
 *       warps or 12 / 14 of 4 per SM, an L2 prefetch of a bin's arcs (0.97-1.00x; options
 *       GPATH_CCH_PMB, GPATH_CCH_PREFETCH), stores with cache hints (__stcs, evict_last, __stwt).
 *   Customization (both): BAY 1.9 ms, NY 3.7 ms device (CPU, 16 threads: 14 / 33 ms); v5 adds the
 *       top table: 2.7 / 4.8 ms.
 */
#include "engine/cch_plan.h"
#include "engine/cuda_cch.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace cg = cooperative_groups;

typedef unsigned long long u64;
#define INF64 0xffffffffffffffffULL
#define INF32 0xffffffffu
#define SMALL_ITEMS 4096         /* customization: levels of <= SMALL_ITEMS / 8 edges in one block */
#define SWEEP_SMALL_ITEMS 64      /* sweeps: levels of <= 64 items in one block, a warp per item */
#define SWEEP_THREAD_ITEMS 16384  /* sweeps: a thread per item from here (bottom levels) */
#define COOP_THREADS 512          /* sweeps: block size of the cooperative kernel */
#define TOP_CELLS 12288           /* sweeps: top levels kept in shared memory (96 KiB + offsets) */
#define TOP_SMEM (TOP_CELLS * 8 + (TOP_CELLS + 1) * 4)
#define SMALL_THREADS 1024
#define BIG_THREADS 256
#define PLAN_BASE 256             /* plan sweeps: thresholds 256, 4096, 65536, ... (cch_plan.h) */
#define PLAN_RATIO 16
#define PLAN_BIN_CAP 128          /* plan sweeps: nodes per bin of a phase, at most (roughly; 1024
                                   * before the warp bins: bench/lab_cch.cu --plans compares) */
#define PLAN_BLOCKS_PER_SM 4
#define PLAN_THREADS_MAX 512      /* plan sweeps: a phase gets >= 4 bins per SM when it has pieces */
#define TOP_MAX_NODES 2048        /* plan sweeps: the top table's nodes, at most (cch_plan.h) */
#define PIECE_MAX_TOTAL (1u << 25) /* plan sweeps: piece tables' entries at most (cch_plan.h) */
#define PIECE_MAX_BIN 65536       /* plan sweeps: entries of one bin's table at most */
#define PIECE_MIN_STEPS 4         /* plan sweeps: bins of fewer steps keep the step sweep */
#define PIECE_THREADS 256         /* piece_tables: block size */
#define INIT_CHUNK 2048           /* plan sweeps: cells filled per block of sweep_init */
#define INIT_THREADS 256
#define CHAIN_MAX_PIECE 1024      /* chains (GP_DCCH_SWEEP_CHAINS): phases whose largest piece is
                                   * at most this many positions (GPATH_CCH_CHAINS overrides) */
#define X_GRAPHS 4                /* GP_DCCH_SWEEP_GRAPH: captured launch sequences kept */
#ifndef WARCS_BLOCKS
#define WARCS_BLOCKS 8            /* arc-lane warp bins: blocks per SM (registers: 32 a thread) */
#endif
#ifndef WARCS_BLOCKS_K
#define WARCS_BLOCKS_K 6          /* ... with several sources per warp (their cells: <= 7 blocks) */
#endif
#define WBIN_WARPS 8              /* warp bins (GP_DCCH_SWEEP_WARPS): bins (a warp each) per block */
#define PASS_ARCS 8               /* warp bins: a step's arcs padded to a multiple of this (one
                                   * pass of sweep_wpass: 8 arcs x 4 sources) */
#define WBIN_SLOT_MAX 12288       /* warp bins: shared bytes per warp at most (cells and arc
                                   * offsets; beyond, the cells stay in global memory; phases
                                   * whose offsets alone do not fit keep the block sweep) */

struct plan_dev { /* device copy of a gp_cch_plan (cch_plan.h) plus its weights */
    const uint32_t *bin_first, *bin_step, *step_first, *in_first, *in_head, *in_wt, *out_first,
        *out_head, *out_tail, *out_wt, *pnode;
    const uint32_t *in_ht;    /* the warp bins' inner arcs, each step's padded with dummy arcs
                               * to a multiple of PASS_ARCS: head << 4 | tail << 20 (offsets in
                               * the bin, bins < 4096 nodes: a 4-source cell's byte offset in
                               * 32 bits), a dummy 0 */
    const uint32_t *in_pwt;   /* ... their weights (a dummy's INF) */
    const uint32_t *step_arc; /* nsteps+1: a step's first arc in in_ht */
    const uint32_t *tab_first; /* piece tables (cch_plan.h gp_cch_ptab): entries per bin */
    const uint32_t *ch_bin, *ch_first, *ch_node; /* chains (cch_plan.h gp_cch_chains) */
    const uint32_t *onode;    /* GP_DCCH_SWEEP_OSORT: a bin's nodes ascending (pnode sorted) */
    const uint16_t *ooff;     /* ... and each one's offset in the bin */
    const uint4 *bin_rec;     /* nbins+1: a bin's first position, step, inner arc, outer arc */
    const uint32_t *border;   /* GP_DCCH_SWEEP_BORDER: the warp bins' order (NULL: bin order) */
};
__global__ void top_table(uint32_t K, const uint32_t *__restrict__ tf,
                          const uint32_t *__restrict__ th, const uint32_t *__restrict__ tw,
                          unsigned long long *tab);
template <bool K1, bool SA, bool CH = false>
__global__ void sweep_bins(plan_dev P, uint32_t bin0, uint32_t k, unsigned long long *dist,
                           unsigned long long *out, uint32_t n, int last, uint32_t smem,
                           const unsigned long long *__restrict__ tab, uint32_t cr);
__global__ void sweep_top(uint32_t l0, uint32_t l1, const uint32_t *__restrict__ lev, uint32_t k,
                          const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                          const uint32_t *__restrict__ wt, unsigned long long *dist);

template <uint32_t KW, typename C>
__global__ void sweep_warcs(plan_dev P, uint32_t bin0, uint32_t bin1, uint32_t k, uint32_t g,
                            unsigned long long *dist, unsigned long long *out, uint32_t n,
                            int last, uint32_t slot, uint32_t *flag, uint32_t sat, uint32_t *ovf,
                            int osort);

typedef void (*warcs_fn)(plan_dev, uint32_t, uint32_t, uint32_t, uint32_t, unsigned long long *,
                         unsigned long long *, uint32_t, int, uint32_t, uint32_t *, uint32_t,
                         uint32_t *, int);
#define WARCS_KW_MAX 16 /* sources per warp at most */
/* sweep_warcs with kw sources per warp (1, 2, 4, 8, 16), cells of 32 bits (c32) or 64 */
static warcs_fn warcs_kern(uint32_t kw, bool c32) {
    if (c32)
        return kw == 16  ? sweep_warcs<16, uint32_t>
               : kw == 8 ? sweep_warcs<8, uint32_t>
               : kw == 4 ? sweep_warcs<4, uint32_t>
               : kw == 2 ? sweep_warcs<2, uint32_t>
                         : sweep_warcs<1, uint32_t>;
    return kw == 16  ? sweep_warcs<16, unsigned long long>
           : kw == 8 ? sweep_warcs<8, unsigned long long>
           : kw == 4 ? sweep_warcs<4, unsigned long long>
           : kw == 2 ? sweep_warcs<2, unsigned long long>
                     : sweep_warcs<1, unsigned long long>;
}
template <int WPB, int MB>
__global__ void sweep_wpass(plan_dev P, uint32_t bin0, uint32_t bin1, uint32_t k, uint32_t g,
                            unsigned long long *dist, unsigned long long *out, uint32_t n,
                            int last, uint32_t slot, uint32_t *flag, uint32_t sat, uint32_t *ovf,
                            int osort, int pf);
typedef void (*wpass_fn)(plan_dev, uint32_t, uint32_t, uint32_t, uint32_t, unsigned long long *,
                         unsigned long long *, uint32_t, int, uint32_t, uint32_t *, uint32_t,
                         uint32_t *, int, int);
/* sweep_wpass by its blocks per SM (launch bounds): 6 or 7 blocks of 8 warps (WBIN_WARPS), 12 or
 * 14 of 4 (32 registers from 56 warps per SM); wpb: its warps per block */
static wpass_fn wpass_kern(uint32_t mb, uint32_t *wpb) {
    if (wpb) *wpb = mb >= 12 ? 4 : WBIN_WARPS;
    return mb >= 14  ? sweep_wpass<4, 14>
           : mb >= 12 ? sweep_wpass<4, 12>
           : mb >= 7  ? sweep_wpass<WBIN_WARPS, 7>
                      : sweep_wpass<WBIN_WARPS, 6>;
}

struct x_graph_slot {       /* a captured plan sweep (fill/scatter/top product + phases) */
    unsigned char key[128];  /* its x_key */
    cudaGraphExec_t exec;
    uint64_t used;
};

/* The part of a device CCH that depends on the topology alone: the upload, the levels and the
 * sweep plan with the layouts of its top table and piece tables. Built once per topology and
 * device (gp_dcch_topo_new) and shared, read-only, by every graph version customized on it
 * (engine/cch_cuda.c finds it by topology), so a cost change uploads and customizes a metric only.
 * A gp_dcch copies these fields by value (base-class assignment, bind) and references the owner;
 * the owner frees them when the last reference goes. */
struct gp_dcch_topo {
    int refs;               /* atomic */
    uint32_t n, m, nlevels;
    uint64_t ntri;
    int sms;                /* multiprocessors of the device */
    uint32_t *level_first;  /* host copy: ranks per level */
    uint32_t *edge_level;   /* host: up_first[level_first[l]] per level (nlevels+1) */
    uint32_t *up_first, *up_head, *order; /* device */
    uint64_t *tri_first;
    uint32_t *tri;
    uint32_t *d_levels;     /* device copy of level_first */
    uint32_t *d_elevels;    /* device copy of edge_level */
    /* the sweep plan (cch_plan.h): device arrays, host metadata per phase */
    const gp_cch_topo *topo; /* referenced */
    int smem_max;           /* opt-in shared memory per block */
    uint32_t p_nphases, p_nbins, p_mid; /* p_mid: first position of the last phase */
    uint32_t *p_phase_bin;  /* host: nphases+1 */
    uint32_t *p_max_nodes, *p_max_arcs, *p_max_steps; /* host: per phase, largest bin */
    uint32_t *p_bin_first, *p_bin_step, *p_step_first, *p_in_first, *p_in_head, *p_in_edge,
        *p_out_first, *p_out_head, *p_out_tail, *p_out_edge, *p_pnode, *p_pos;
    uint32_t *p_in_ht, *p_step_arc; /* the arc-lane warp bins' layout (plan_dev) */
    uint32_t p_nsteps, p_npad; /* steps; arcs of that layout (the inner arcs with the padding) */
    uint4 *p_bin_rec;
    uint32_t *p_border;     /* GP_DCCH_SWEEP_BORDER: each phase's bins by their smallest node */
    uint32_t *p_onode;      /* GP_DCCH_SWEEP_OSORT: per bin its nodes ascending ... */
    uint16_t *p_ooff;       /* ... with their offsets in the bin (bins < 2^16 nodes) */
    uint32_t p_lim;         /* largest bin's nodes or outer arcs: the plan needs p_lim * k < 2^31 */
    uint32_t p_nin, p_nout;
    /* the top table (cch_plan.h gp_cch_top): positions 0 .. t_K-1 = phases 0 .. t_nph-1 */
    uint32_t t_K, t_nph, t_narcs, t_max; /* t_max: GPATH_CCH_TOP (nodes at most; 0 none) */
    uint32_t *t_first, *t_head, *t_edge;
    /* the piece tables (cch_plan.h gp_cch_ptab): q_ntab bins (q_bins) with q_first entries;
     * q_tmpl holds the entries' low words (the layout), a gp_dcch copies it and customization
     * writes the high words */
    uint32_t q_ntab, q_max_steps, q_max; /* q_max: GPATH_CCH_PIECES (entries at most; 0 none) */
    uint32_t *q_bins, *q_first, *q_depth;
    u64 *q_tmpl;
    uint64_t q_nent;
    uint64_t *q_pent, *q_parcs; /* host, per phase: table entries, inner arcs */
    uint32_t *q_pmaxn;      /* host, per phase: nodes of the largest bin with a table */
    /* flat phases (GP_DCCH_SWEEP_FLAT): each piece-table entry with absolute positions,
     * (v << 32) | a (device, q_nent), and per phase its positions and entries (host) */
    u64 *f_va;              /* ... sorted by v (so each position's entries are a range) */
    uint32_t *f_perm;       /* device, q_nent: f_va's i-th entry is q_tmpl's f_perm[i] */
    uint32_t *f_vfirst;     /* device, p_mid + 1: position v's entries in f_va (GATHER) */
    uint32_t *f_ppos;       /* host: nphases+1, the first position of each phase */
    uint64_t *f_pent;       /* host: nphases+1, the first entry of each phase */
    unsigned char *f_full;  /* host: nphases, every bin of the phase has a table */
    /* the plan's chains (cch_plan.h gp_cch_chains; the GP_DCCH_SWEEP_CHAINS sweeps) */
    uint32_t *c_bin, *c_first, *c_node; /* device */
    uint32_t *c_pmax, *c_ppos, *c_parcs; /* host, per phase: largest piece, positions, inner arcs */
    uint64_t tbytes;        /* device bytes of this part */
};

/* One customized CCH: the shared topology part (copied from tm) plus its own metric, customized
 * weights, the plan's weights and tables, and the sweep workspace. */
struct gp_dcch : gp_dcch_topo {
    gp_dcch_topo *tm;       /* the shared part (referenced) */
    uint32_t *ofw, *obw, *fw, *bw, *fmid, *bmid;
    uint32_t *bad;          /* device word: overflow seen */
    /* sweep workspace */
    u64 *dist;
    size_t dist_cap;        /* entries */
    uint32_t *init_rank;
    u64 *init_dist;
    uint32_t *init_first;
    size_t init_cap, init_dcap, init_first_cap;
    u64 *outbuf;
    size_t out_cap;
    /* rphast restricted graph */
    uint32_t *r_first, *r_head, *r_wt, *r_lev, *r_tgt;
    uint32_t r_n, r_m, r_nlev, r_nt;
    uint32_t *r_lev_host;
    size_t r_cap_n, r_cap_m, r_cap_lev, r_cap_t;
    int sweep;              /* GP_DCCH_SWEEP_PLAN or GP_DCCH_SWEEP_LEVELS */
    int profile;            /* GPATH_CCH_PLAN_PROFILE: per-phase device times on stderr */
    /* the plan's weights and tables for this metric (sized by tm) */
    uint32_t *p_in_wt, *p_out_wt, *t_wt;
    uint32_t *p_in_pwt;     /* the inner arcs' weights in the warp bins' layout (p_npad) */
    u64 *t_tab;             /* t_K x t_K, row u: down distances from u */
    float t_ms;             /* device ms of the last table computation */
    u64 *q_ent;             /* the piece tables: q_tmpl's layout, high words this metric's */
    uint32_t *f_T;          /* flat phases: q_ent's high words alone (f_va's order) */
    uint32_t *q_bad;
    int q_ok;               /* the last customization's tables hold (no down distance >= 2^32-1) */
    float q_ms;             /* device ms of the last piece-table computation */
    u64 *pdist;             /* plan sweeps: positions x k, INF from cell p_dirty on */
    size_t pdist_cap, p_dirty;
    u64 *pdist1;            /* ... the same for one source: a sweep of one source after one of
                             * 16 would clean the 16-source layout's upper cells (p_dirty) */
    size_t pdist1_cap, p_dirty1;
    uint32_t *p_flag;       /* GP_DCCH_SWEEP_SKIP: per bin, an entry of the init in its cells */
    uint32_t *p_ovf;        /* device word: a 32-bit warp-bin cell saturated (GP_DCCH_SWEEP_W64) */
    int w64;                /* ... so this metric's sweeps keep 64-bit cells */
    int x_c32;              /* the last plan sweep used 32-bit cells */
    size_t p_flag_cap;
    int customized;
    uint64_t bytes;         /* device bytes of this instance (the shared part: tm->tbytes) */
    cudaEvent_t ev0, ev1;
    /* ---- issue 18 sweep variants (GP_DCCH_SWEEP_CHAINS / _GRAPH; the chains are in the
     * topology part): the captured graphs, per instance, freed by sweep_x_free (from gp_dcch_free
     * and bind) ---- */
    int x_flags;            /* GP_DCCH_SWEEP_CHAINS | _CHAINS_FIRST | _GRAPH | _WARPS | _SKIP */
    int x_attr;             /* the chain kernels' shared-memory limit is set */
    uint32_t wbin_min;      /* warp bins only in phases of at least this many bins */
    uint32_t wmulti_min;    /* ... and for several sources of at least this many */
    uint64_t gather_min;    /* GP_DCCH_SWEEP_GATHER: flat phases of at least this many entries */
    uint32_t x_gen;         /* plan generation: graphs of an older plan are never launched */
    x_graph_slot x_graph[X_GRAPHS];
    uint64_t x_tick;
};

static int cfail(cudaError_t e, const char *what, gp_err *err) {
    return gp_err_set(err, GP_EDEVICE, "CUDA error during %s: %s (%s)", what, cudaGetErrorName(e),
                      cudaGetErrorString(e));
}

#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            rc = cfail(e_, (what), err);                                                           \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
#define CKL(what) CK(cudaGetLastError(), (what))

template <typename T>
static cudaError_t dput(T **dst, const T *src, size_t count, cudaStream_t s, uint64_t *bytes) {
    cudaError_t e = cudaMalloc((void **)dst, (count ? count : 1) * sizeof(T));
    if (e != cudaSuccess) return e;
    if (bytes) *bytes += (count ? count : 1) * sizeof(T);
    if (count && src) return cudaMemcpyAsync(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice, s);
    return cudaSuccess;
}

/* Grows a device buffer to at least count entries (contents not kept). */
template <typename T> static cudaError_t grow(T **buf, size_t *cap, size_t count) {
    if (*cap >= count && *buf) return cudaSuccess;
    cudaFree(*buf);
    *buf = NULL;
    size_t c = count < 1024 ? 1024 : count + count / 4;
    cudaError_t e = cudaMalloc((void **)buf, c * sizeof(T));
    *cap = e == cudaSuccess ? c : 0;
    return e;
}

/* Frees what a topology part owns (device arrays, host metadata, its topology reference). */
static void topo_part_free(gp_dcch_topo *t) {
    if (!t) return;
    void *dev[] = {t->up_first, t->up_head, t->order, t->tri_first, t->tri, t->d_levels,
                   t->d_elevels, t->p_bin_first, t->p_bin_step, t->p_step_first, t->p_in_first,
                   t->p_in_head, t->p_in_edge, t->p_out_first, t->p_out_head, t->p_out_tail,
                   t->p_out_edge, t->p_pnode, t->p_pos, t->p_in_ht, t->p_step_arc, t->p_bin_rec, t->p_border, t->p_onode,
                   t->p_ooff, t->t_first,
                   t->t_head, t->t_edge, t->q_bins, t->q_first, t->q_depth, t->q_tmpl,
                   t->c_bin, t->c_first, t->c_node, t->f_va, t->f_perm, t->f_vfirst};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
    free(t->level_first);
    free(t->edge_level);
    free(t->p_phase_bin);
    free(t->p_max_nodes);
    free(t->p_max_arcs);
    free(t->p_max_steps);
    free(t->q_pent);
    free(t->q_parcs);
    free(t->q_pmaxn);
    free(t->f_ppos);
    free(t->f_pent);
    free(t->f_full);
    free(t->c_pmax);
    free(t->c_ppos);
    free(t->c_parcs);
    gp_cch_topo_unref((gp_cch_topo *)t->topo);
    free(t);
}

extern "C" void gp_dcch_topo_ref(gp_dcch_topo *t) { __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED); }

extern "C" void gp_dcch_topo_unref(gp_dcch_topo *t) {
    if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) topo_part_free(t);
}

extern "C" uint64_t gp_dcch_topo_bytes(const gp_dcch_topo *t) { return t ? t->tbytes : 0; }

/* Issue 18 variants: the captured graphs (gp_dcch's last block). */
static void sweep_x_free(gp_dcch *d) {
    for (int i = 0; i < X_GRAPHS; i++) {
        if (d->x_graph[i].exec) cudaGraphExecDestroy(d->x_graph[i].exec);
        d->x_graph[i].exec = NULL;
        d->x_graph[i].used = 0;
    }
}

/* This instance's plan weights and tables (sized by its topology part). */
static void metric_free(gp_dcch *d) {
    void *dev[] = {d->p_in_wt, d->p_out_wt, d->t_wt, d->t_tab, d->q_ent, d->q_bad, d->f_T,
                   d->p_in_pwt};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
    d->p_in_wt = d->p_out_wt = d->t_wt = d->q_bad = d->f_T = d->p_in_pwt = NULL;
    d->t_tab = d->q_ent = NULL;
    d->q_ok = 0;
}

static uint64_t metric_bytes(const gp_dcch_topo *t) {
    return ((uint64_t)t->p_nin + t->p_npad + t->p_nout + t->t_narcs) * 4 + (uint64_t)t->t_K * t->t_K * 8 +
           (t->q_ntab ? t->q_nent * 8 + 4 : 0) + (t->f_va ? t->q_nent * 4 : 0);
}

/* Points d at the topology part t (a reference the caller hands over), dropping the one it had,
 * and allocates the plan's weights and tables for it (the piece tables' layout copied). */
static int bind(gp_dcch *d, gp_dcch_topo *t, cudaStream_t s, gp_err *err) {
    int rc = GP_OK;
    if (d->tm) d->bytes -= metric_bytes(d->tm);
    metric_free(d);
    sweep_x_free(d); /* graphs captured for the old part: dropped, and no old key matches */
    d->x_gen++;
    gp_dcch_topo_unref(d->tm);
    static_cast<gp_dcch_topo &>(*d) = *t;
    d->tm = t;
    d->p_dirty = d->pdist_cap; /* positions may have moved: every cell may be stale */
    d->p_dirty1 = d->pdist1_cap;
    CK(dput(&d->p_in_wt, (const uint32_t *)NULL, (size_t)t->p_nin, s, NULL), "allocating the plan");
    CK(dput(&d->p_in_pwt, (const uint32_t *)NULL, (size_t)t->p_npad, s, NULL), "allocating the plan");
    CK(dput(&d->p_out_wt, (const uint32_t *)NULL, (size_t)t->p_nout, s, NULL), "allocating the plan");
    if (t->t_K) {
        CK(dput(&d->t_wt, (const uint32_t *)NULL, (size_t)t->t_narcs, s, NULL), "allocating the top table");
        CK(dput(&d->t_tab, (const u64 *)NULL, (size_t)t->t_K * t->t_K, s, NULL), "allocating the top table");
    }
    if (t->q_ntab) {
        CK(dput(&d->q_ent, (const u64 *)NULL, (size_t)t->q_nent, s, NULL), "allocating the piece tables");
        CK(cudaMemcpyAsync(d->q_ent, t->q_tmpl, (size_t)t->q_nent * 8, cudaMemcpyDeviceToDevice, s),
           "copying the piece tables");
        CK(dput(&d->q_bad, (const uint32_t *)NULL, 1, s, NULL), "allocating the piece tables");
        if (t->f_va)
            CK(dput(&d->f_T, (const uint32_t *)NULL, (size_t)t->q_nent, s, NULL),
               "allocating the piece tables");
    }
    d->bytes += metric_bytes(t);
out:
    return rc;
}

/* The chains of plan p (cch_plan.h) into topology part d: to the device, per-phase metadata on
 * the host. */
static int topo_chains(gp_dcch_topo *d, const gp_cch_plan *p, cudaStream_t s, gp_err *err) {
    int rc = GP_OK;
    gp_cch_chains *ch = NULL;
    if ((rc = gp_cch_plan_chains(p, d->topo, &ch, err)) != GP_OK) return rc;
    d->c_pmax = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
    d->c_ppos = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
    d->c_parcs = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
    if (!d->c_pmax || !d->c_ppos || !d->c_parcs) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the plan's chains");
        goto out;
    }
    memcpy(d->c_pmax, ch->max_piece, (size_t)p->nphases * 4);
    for (uint32_t f = 0; f < p->nphases; f++) {
        const uint32_t q0 = p->bin_first[p->phase_bin[f]], q1 = p->bin_first[p->phase_bin[f + 1]];
        d->c_ppos[f] = q1 - q0;
        d->c_parcs[f] = p->in_first[q1] - p->in_first[q0];
    }
    CK(dput(&d->c_bin, ch->bin_piece, (size_t)p->nbins + 1, s, &d->tbytes), "uploading the chains");
    CK(dput(&d->c_first, ch->first, (size_t)ch->npieces + 1, s, &d->tbytes), "uploading the chains");
    CK(dput(&d->c_node, ch->node, (size_t)p->n, s, &d->tbytes), "uploading the chains");
out:
    gp_cch_chains_free(ch);
    return rc;
}

extern "C" void gp_dcch_free(gp_dcch *d) {
    if (!d) return;
    sweep_x_free(d);
    metric_free(d);
    void *dev[] = {d->pdist,     d->p_flag,    d->ofw,        d->obw,    d->fw,      d->bw,
                   d->fmid,      d->bmid,      d->bad,        d->dist,   d->init_rank,
                   d->init_dist, d->init_first, d->outbuf,    d->r_first, d->r_head, d->r_wt,
                   d->r_lev,     d->r_tgt,     d->p_ovf,      d->pdist1};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
    if (d->ev0) cudaEventDestroy(d->ev0);
    if (d->ev1) cudaEventDestroy(d->ev1);
    free(d->r_lev_host);
    gp_dcch_topo_unref(d->tm);
    free(d);
}

extern "C" uint64_t gp_dcch_bytes(const gp_dcch *d) {
    return d ? d->bytes + gp_dcch_topo_bytes(d->tm) : 0;
}

static int topo_plan(gp_dcch_topo *d, cudaStream_t s, uint32_t base, uint32_t ratio,
                     uint32_t bin_cap, gp_err *err);

extern "C" int gp_dcch_topo_new(const gp_cch_topo *t, void *stream, uint32_t base, uint32_t ratio,
                                uint32_t bin_cap, gp_dcch_topo **out, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    gp_dcch_topo *d = (gp_dcch_topo *)calloc(1, sizeof *d);
    if (!d) return gp_err_set(err, GP_ENOMEM, "out of memory for the device CCH");
    d->refs = 1;
    __atomic_add_fetch(&((gp_cch_topo *)t)->refs, 1, __ATOMIC_RELAXED);
    d->topo = t;
    d->n = t->n;
    d->m = t->m;
    d->nlevels = t->nlevels;
    d->ntri = t->ntri;
    d->level_first = (uint32_t *)malloc(((size_t)t->nlevels + 1) * sizeof(uint32_t));
    d->edge_level = (uint32_t *)malloc(((size_t)t->nlevels + 1) * sizeof(uint32_t));
    if (!d->level_first || !d->edge_level) {
        topo_part_free(d);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the device CCH");
    }
    memcpy(d->level_first, t->level_first, ((size_t)t->nlevels + 1) * sizeof(uint32_t));
    for (uint32_t l = 0; l <= t->nlevels; l++) d->edge_level[l] = t->up_first[t->level_first[l]];
    CK(cudaFuncSetAttribute(sweep_top, cudaFuncAttributeMaxDynamicSharedMemorySize, TOP_SMEM),
       "allowing the sweep's shared memory");
    {
        int dev = 0;
        CK(cudaGetDevice(&dev), "cudaGetDevice");
        CK(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev), "device attributes");
        CK(cudaDeviceGetAttribute(&d->smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
           "device attributes");
    }
    CK(dput(&d->up_first, t->up_first, (size_t)t->n + 1, s, &d->tbytes), "uploading the CCH");
    CK(dput(&d->up_head, t->up_head, (size_t)t->m, s, &d->tbytes), "uploading the CCH");
    CK(dput(&d->order, t->order, (size_t)t->n, s, &d->tbytes), "uploading the CCH");
    CK(dput(&d->tri_first, (const uint64_t *)t->tri_first, (size_t)t->m + 1, s, &d->tbytes),
       "uploading the CCH triangles");
    CK(dput(&d->tri, t->tri, (size_t)t->ntri * 2, s, &d->tbytes), "uploading the CCH triangles");
    CK(dput(&d->d_levels, d->level_first, (size_t)t->nlevels + 1, s, &d->tbytes), "uploading levels");
    CK(dput(&d->d_elevels, d->edge_level, (size_t)t->nlevels + 1, s, &d->tbytes), "uploading levels");
    CK(cudaFuncSetAttribute(top_table, cudaFuncAttributeMaxDynamicSharedMemorySize, d->smem_max),
       "allowing the top table's shared memory");
    CK(cudaFuncSetAttribute(sweep_bins<false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            d->smem_max), "allowing the plan sweep's shared memory");
    CK(cudaFuncSetAttribute(sweep_bins<false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            d->smem_max), "allowing the plan sweep's shared memory");
    CK(cudaFuncSetAttribute(sweep_bins<true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            d->smem_max), "allowing the plan sweep's shared memory");
    CK(cudaFuncSetAttribute(sweep_bins<true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            d->smem_max), "allowing the plan sweep's shared memory");
    for (uint32_t kw = 1; kw <= WARCS_KW_MAX; kw *= 2)
        for (int c32 = 0; c32 < 2; c32++)
            CK(cudaFuncSetAttribute(warcs_kern(kw, c32), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    WBIN_WARPS * WBIN_SLOT_MAX),
               "allowing the warp bins' shared memory");
    for (uint32_t mb : {6u, 7u, 12u, 14u})
        CK(cudaFuncSetAttribute(wpass_kern(mb, NULL), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                WBIN_WARPS * WBIN_SLOT_MAX),
           "allowing the warp bins' shared memory");
    { /* GPATH_CCH_PLAN_SMEM: a smaller shared-memory budget (bytes), so that the lab's --small
       * run under compute-sanitizer reaches the paths for bins that do not fit */
        const char *sm = getenv("GPATH_CCH_PLAN_SMEM");
        long v = sm ? strtol(sm, NULL, 10) : 0;
        if (v > 0 && v < d->smem_max) d->smem_max = (int)v;
        const char *tp = getenv("GPATH_CCH_TOP"); /* the top table's nodes at most (0: none) */
        d->t_max = tp ? (uint32_t)strtoul(tp, NULL, 10) : TOP_MAX_NODES;
        const char *pc = getenv("GPATH_CCH_PIECES"); /* piece tables' entries at most (0: none) */
        d->q_max = pc ? (uint32_t)strtoul(pc, NULL, 10) : PIECE_MAX_TOTAL;
    }
    if ((rc = topo_plan(d, s, base, ratio, bin_cap, err)) != GP_OK) goto out;
    CK(cudaStreamSynchronize(s), "uploading the CCH");
    *out = d;
    return GP_OK;
out:
    cudaStreamSynchronize(s);
    topo_part_free(d);
    return rc;
}

extern "C" int gp_dcch_new(gp_dcch_topo *t, const gp_cch *c, void *stream, gp_dcch **out,
                           gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    if (t->n != c->topo->n || t->m != c->topo->m || t->topo != c->topo)
        return gp_err_set(err, GP_EINVAL, "device CCH: another topology's device part");
    gp_dcch *d = (gp_dcch *)calloc(1, sizeof *d);
    if (!d) return gp_err_set(err, GP_ENOMEM, "out of memory for the device CCH");
    gp_dcch_topo_ref(t);
    if ((rc = bind(d, t, s, err)) != GP_OK) goto out;
    CK(cudaEventCreate(&d->ev0), "cudaEventCreate");
    CK(cudaEventCreate(&d->ev1), "cudaEventCreate");
    CK(dput(&d->ofw, c->ofw, (size_t)t->m, s, &d->bytes), "uploading the CCH weights");
    CK(dput(&d->obw, c->obw, (size_t)t->m, s, &d->bytes), "uploading the CCH weights");
    CK(dput(&d->fw, (const uint32_t *)NULL, (size_t)t->m, s, &d->bytes), "allocating weights");
    CK(dput(&d->bw, (const uint32_t *)NULL, (size_t)t->m, s, &d->bytes), "allocating weights");
    CK(dput(&d->fmid, (const uint32_t *)NULL, (size_t)t->m, s, &d->bytes), "allocating witnesses");
    CK(dput(&d->bmid, (const uint32_t *)NULL, (size_t)t->m, s, &d->bytes), "allocating witnesses");
    CK(dput(&d->bad, (const uint32_t *)NULL, 1, s, &d->bytes), "allocating a flag");
    CK(dput(&d->p_ovf, (const uint32_t *)NULL, 1, s, &d->bytes), "allocating a flag");
    CK(cudaMemsetAsync(d->p_ovf, 0, 4, s), "allocating a flag");
    CK(cudaStreamSynchronize(s), "uploading the CCH weights");
    {
        const char *sw = getenv("GPATH_CCH_SWEEP"), *gr = getenv("GPATH_CCH_GRAPH"),
                   *wb = getenv("GPATH_CCH_WARPS");
        d->sweep = sw && !strcmp(sw, "levels") ? GP_DCCH_SWEEP_LEVELS : GP_DCCH_SWEEP_PLAN;
        /* the plan sweep's launches replayed from a captured CUDA graph: 1.01-1.19x on every
         * graph of the lab's run on the H100 (BAY 0.114 -> 0.102 ms); GPATH_CCH_GRAPH=0 turns it
         * off. gp_dcch_set_sweep (the lab, the tests) sets the flags explicitly. */
        if (!(gr && !strcmp(gr, "0"))) d->x_flags = GP_DCCH_SWEEP_GRAPH;
        /* warp bins where no piece table is used (GP_DCCH_SWEEP_WARPS); GPATH_CCH_WARPS=0: off */
        if (!(wb && !strcmp(wb, "0"))) d->x_flags |= GP_DCCH_SWEEP_WARPS;
        /* warp bins only where a phase has a bin per SM at least: a grid's phase of 2 bins of
         * 1034 positions and 170 inner arcs each took 7.7 ms as warp bins, 2.2 ms as blocks
         * (grid:100000, H100); GPATH_CCH_WBIN_MIN=N sets the least bins (the tests: 0) */
        const char *wm = getenv("GPATH_CCH_WBIN_MIN");
        d->wbin_min = wm && *wm ? (uint32_t)strtoul(wm, NULL, 10) : (uint32_t)t->sms;
        /* for several sources (GP_DCCH_SWEEP_WMULTI), warp bins only where a phase has 32 bins
         * per SM at least: at 16 sources they won on gen:1M (7,800 bins in its last phase) and
         * gen:24M (184,000) but lost on NY and BAY (2,446 bins: 0.034 vs 0.029 ms per tree,
         * bench/results/2026-11-27-...-gpu-cch-v9.md); GPATH_CCH_WMULTI_MIN=N (the tests: 0) */
        const char *wmm = getenv("GPATH_CCH_WMULTI_MIN");
        d->wmulti_min = wmm && *wmm ? (uint32_t)strtoul(wmm, NULL, 10) : (uint32_t)t->sms * 32;
        /* the last phase's untouched cells not read (GP_DCCH_SWEEP_SKIP); GPATH_CCH_SKIP=0: off */
        const char *sk = getenv("GPATH_CCH_SKIP");
        if (!(sk && !strcmp(sk, "0"))) d->x_flags |= GP_DCCH_SWEEP_SKIP;
        /* flat table phases (GP_DCCH_SWEEP_FLAT) and warp bins for several sources
         * (GP_DCCH_SWEEP_WMULTI): gen:24M one source 1.128 -> 0.960 ms, 16 per sweep 0.989 ->
         * 0.573 ms per tree on the H100 (bench/results/2026-11-27-...-gpu-cch-v9c.md);
         * GPATH_CCH_FLAT=0 / GPATH_CCH_WMULTI=0 turn them off */
        const char *fl = getenv("GPATH_CCH_FLAT"), *wmu = getenv("GPATH_CCH_WMULTI");
        if (!(fl && !strcmp(fl, "0"))) d->x_flags |= GP_DCCH_SWEEP_FLAT;
        if (!(wmu && !strcmp(wmu, "0"))) d->x_flags |= GP_DCCH_SWEEP_WMULTI;
        /* flat phases gathered (GP_DCCH_SWEEP_GATHER) for several sources where a phase has
         * at least 2^22 entries: gen:24M's phase 4 (5.8 M entries) at 16 sources 0.381 ->
         * 0.347 ms per tree; slower for one source everywhere (gen:24M 0.84x) and at 16 on
         * gen:1M's phases of <= 1.7 M entries (0.96x) (bench/results/2026-11-27-...-gpu-cch-
         * gather.md); GPATH_CCH_GATHER=0 turns it off, GPATH_CCH_GATHER_MIN=N sets the least
         * entries (the tests: 0) */
        const char *ga = getenv("GPATH_CCH_GATHER"), *gm = getenv("GPATH_CCH_GATHER_MIN");
        if (!(ga && !strcmp(ga, "0"))) d->x_flags |= GP_DCCH_SWEEP_GATHER;
        d->gather_min = gm && *gm ? strtoull(gm, NULL, 10) : (uint64_t)1 << 22;
        /* warp bins store their output in node order within a bin (GP_DCCH_SWEEP_OSORT);
         * GPATH_CCH_OSORT=0: off */
        const char *os = getenv("GPATH_CCH_OSORT");
        if (!(os && !strcmp(os, "0"))) d->x_flags |= GP_DCCH_SWEEP_OSORT;
        /* the warp bins with 4 sources a warp walk passes (GP_DCCH_SWEEP_PASSES);
         * GPATH_CCH_PASSES=0: off */
        const char *pa = getenv("GPATH_CCH_PASSES");
        if (!(pa && !strcmp(pa, "0"))) d->x_flags |= GP_DCCH_SWEEP_PASSES;
        /* the warp bins in the order of their smallest node (GP_DCCH_SWEEP_BORDER);
         * GPATH_CCH_BORDER=0: off */
        const char *bd = getenv("GPATH_CCH_BORDER");
        if (!(bd && !strcmp(bd, "0"))) d->x_flags |= GP_DCCH_SWEEP_BORDER;
    }
    *out = d;
    return GP_OK;
out:
    cudaStreamSynchronize(s);
    gp_dcch_free(d);
    return rc;
}

__global__ void gather_wt(const uint32_t *__restrict__ edge, uint32_t count,
                          const uint32_t *__restrict__ bw, uint32_t *wt) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) wt[i] = bw[edge[i]];
}

/* The inner arcs' weights in the warp bins' layout (plan_dev in_ht), a thread per step: its
 * arcs' weights from the position-ordered in_wt, then INF up to its padded end. */
__global__ void pad_wt(uint32_t nsteps, const uint32_t *__restrict__ step_first,
                       const uint32_t *__restrict__ in_first, const uint32_t *__restrict__ step_arc,
                       const uint32_t *__restrict__ in_wt, uint32_t *pwt) {
    const size_t st = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (st >= nsteps) return;
    const uint32_t a0 = in_first[step_first[st]], na = in_first[step_first[st + 1]] - a0;
    const uint32_t d0 = step_arc[st], nd = step_arc[st + 1] - d0;
    for (uint32_t j = 0; j < nd; j++) pwt[d0 + j] = j < na ? in_wt[a0 + j] : INF32;
}

/* The top table (engine/cch_plan.h gp_cch_top): a warp per row u walks the top positions after
 * u in order (an arc's head precedes its tail, so row[h] is final when x reads it), lanes over x's
 * arcs; a node no path from u reaches (every lane INF) skips the warp min. The row lives in shared
 * memory (K*8 bytes per warp; lane 0's writes are visible to the warp after __syncwarp) and goes
 * to tab at the end. Latency-bound (a serial walk over the top per warp): BAY 0.83 ms, NY 1.08 ms
 * (the first version, the row in global memory, measured 0.72 / 1.00 ms in another run). */
__global__ void top_table(uint32_t K, const uint32_t *__restrict__ tf,
                          const uint32_t *__restrict__ th, const uint32_t *__restrict__ tw,
                          u64 *tab) {
    extern __shared__ u64 sm[];
    const uint32_t u = (uint32_t)(((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const uint32_t lane = threadIdx.x & 31;
    if (u >= K) return; /* whole warps */
    u64 *row = sm + (size_t)(threadIdx.x >> 5) * K;
    for (uint32_t x = lane; x < K; x += 32) row[x] = x == u ? 0 : INF64;
    __syncwarp();
    for (uint32_t x = u + 1; x < K; x++) {
        u64 best = INF64;
        for (uint32_t a = tf[x] + lane; a < tf[x + 1]; a += 32) {
            uint32_t h = th[a], w = tw[a];
            if (h < u || w == INF32) continue; /* heads before u: INF */
            u64 dh = row[h];
            if (dh != INF64 && dh + w < best) best = dh + w;
        }
        if (__any_sync(0xffffffffu, best != INF64)) {
            for (int o = 16; o > 0; o >>= 1) {
                u64 v = __shfl_xor_sync(0xffffffffu, best, o);
                best = v < best ? v : best;
            }
            if (lane == 0) row[x] = best;
            __syncwarp();
        }
    }
    for (uint32_t x = lane; x < K; x += 32) tab[(size_t)u * K + x] = row[x];
}

/* The piece tables (engine/cch_plan.h gp_cch_ptab; gp_cch_ptab_fill is the CPU reference): a
 * block per bin with a table, its steps in order with a block barrier between them (entry (v, j)
 * reads the entries of v's upper neighbours, which are at lower steps), a thread per entry of the
 * step looping over v's inner arcs. S (the bin's step offsets) and at[j] = col(j) - S(j+1) in
 * shared memory (ns + 1 and ns words). Only T (the high word) is written; a down distance that
 * would reach 2^32-1 sets *bad (the host then keeps the step sweep for this metric). The block's
 * own global writes are visible to it after __syncthreads() (tab is not read through the
 * read-only cache here). */
__global__ void __launch_bounds__(PIECE_THREADS)
    piece_tables(const uint32_t *__restrict__ bins, const uint32_t *__restrict__ bin_first,
                 const uint32_t *__restrict__ bin_step, const uint32_t *__restrict__ step_first,
                 const uint32_t *__restrict__ in_first, const uint32_t *__restrict__ in_head,
                 const uint32_t *__restrict__ in_wt, const uint32_t *__restrict__ depth,
                 const uint32_t *__restrict__ tab_first, uint32_t *tab, uint32_t *bad) {
    extern __shared__ int32_t pq[];
    const uint32_t b = bins[blockIdx.x], tid = threadIdx.x;
    const uint32_t p0 = bin_first[b], N = bin_first[b + 1] - p0, s0 = bin_step[b];
    const uint32_t ns = bin_step[b + 1] - s0, t0 = tab_first[b];
    int32_t *S = pq, *at = pq + ns + 1;
    for (uint32_t i = tid; i <= ns; i += blockDim.x) S[i] = (int32_t)(step_first[s0 + i] - p0);
    __syncthreads();
    if (tid == 0) {
        int32_t col = 0;
        for (uint32_t j = 0; j + 1 < ns; j++) {
            at[j] = col - S[j + 1];
            col += (int32_t)N - S[j + 1];
        }
    }
    __syncthreads();
    uint32_t over = 0;
    for (uint32_t st = 1; st < ns; st++) {
        const uint32_t items = (uint32_t)(S[st + 1] - S[st]) * st;
        for (uint32_t it = tid; it < items; it += blockDim.x) {
            const uint32_t v = (uint32_t)S[st] + it / st, j = it % st, q = p0 + v;
            u64 best = INF32;
            for (uint32_t a = in_first[q]; a < in_first[q + 1]; a++) {
                const uint32_t w = in_wt[a], h = in_head[a];
                const int32_t idx = (int32_t)depth[p0 + h] - (int32_t)st + (int32_t)j;
                if (w == INF32 || idx < -1) continue; /* h below a_j: no path from a_j */
                const u64 th = idx < 0 ? 0 : tab[2 * ((size_t)t0 + (uint32_t)(at[idx] + (int32_t)h)) + 1];
                if (th == INF32) continue;
                if (th + w >= INF32) over = 1;
                else if (th + w < best) best = th + w;
            }
            tab[2 * ((size_t)t0 + (uint32_t)(at[j] + (int32_t)v)) + 1] = (uint32_t)best;
        }
        __syncthreads();
    }
    if (over) atomicOr(bad, 1u);
}

/* The plan's arc weights (and the top table, the piece tables) from the customized down weights
 * (after every customization and plan rebuild); the tables' device times land in d->t_ms and
 * d->q_ms. */
/* Flat phases' T: the piece tables' high words alone. */
__global__ void ent_t(const u64 *__restrict__ ent, const uint32_t *__restrict__ perm, uint64_t n,
                      uint32_t *T) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) T[i] = (uint32_t)(ent[perm[i]] >> 32);
}

static int plan_weights(gp_dcch *d, cudaStream_t s, gp_err *err) {
    int rc = GP_OK;
    if (!d->p_nphases || !d->customized) return GP_OK;
    if (d->t_K) {
        cudaEvent_t e0 = NULL, e1 = NULL;
        CK(cudaEventCreate(&e0), "top table");
        CK(cudaEventCreate(&e1), "top table");
        CK(cudaEventRecord(e0, s), "top table");
        gather_wt<<<(d->t_narcs + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->t_edge, d->t_narcs, d->bw, d->t_wt);
        uint32_t wpb = (uint32_t)d->smem_max / (d->t_K * 8); /* warps (rows) per block */
        if (wpb > 4) wpb = 4;
        top_table<<<(d->t_K + wpb - 1) / wpb, wpb * 32, (size_t)wpb * d->t_K * 8, s>>>(
            d->t_K, d->t_first, d->t_head, d->t_wt, d->t_tab);
        CKL("top table");
        CK(cudaEventRecord(e1, s), "top table");
        CK(cudaEventSynchronize(e1), "top table");
        CK(cudaEventElapsedTime(&d->t_ms, e0, e1), "top table");
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    if (d->p_nin) {
        gather_wt<<<(d->p_nin + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->p_in_edge, d->p_nin, d->bw, d->p_in_wt);
        CKL("plan weights");
    }
    if (d->p_nsteps) {
        pad_wt<<<(d->p_nsteps + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->p_nsteps, d->p_step_first, d->p_in_first, d->p_step_arc, d->p_in_wt, d->p_in_pwt);
        CKL("plan weights");
    }
    if (d->q_ntab) { /* after the inner arcs' weights, which it reads */
        cudaEvent_t e0 = NULL, e1 = NULL;
        uint32_t bad = 0;
        CK(cudaEventCreate(&e0), "piece tables");
        CK(cudaEventCreate(&e1), "piece tables");
        CK(cudaMemcpyAsync(d->q_bad, &bad, 4, cudaMemcpyHostToDevice, s), "piece tables");
        CK(cudaEventRecord(e0, s), "piece tables");
        piece_tables<<<d->q_ntab, PIECE_THREADS, ((size_t)d->q_max_steps * 2 + 1) * 4, s>>>(
            d->q_bins, d->p_bin_first, d->p_bin_step, d->p_step_first, d->p_in_first,
            d->p_in_head, d->p_in_wt, d->q_depth, d->q_first, (uint32_t *)d->q_ent, d->q_bad);
        CKL("piece tables");
        if (d->f_T) {
            ent_t<<<(unsigned)((d->q_nent + BIG_THREADS - 1) / BIG_THREADS), BIG_THREADS, 0, s>>>(
                d->q_ent, d->f_perm, d->q_nent, d->f_T);
            CKL("piece tables");
        }
        CK(cudaEventRecord(e1, s), "piece tables");
        CK(cudaMemcpyAsync(&bad, d->q_bad, 4, cudaMemcpyDeviceToHost, s), "piece tables");
        CK(cudaEventSynchronize(e1), "piece tables");
        CK(cudaStreamSynchronize(s), "piece tables");
        CK(cudaEventElapsedTime(&d->q_ms, e0, e1), "piece tables");
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        d->q_ok = !bad;
    }
    if (d->p_nout) {
        gather_wt<<<(d->p_nout + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->p_out_edge, d->p_nout, d->bw, d->p_out_wt);
        CKL("plan weights");
    }
out:
    return rc;
}

/* Builds the sweep plan of a topology part (thresholds base, base*ratio, ...; 0 = defaults):
 * its device arrays and host metadata, the top table's and piece tables' layouts. */
static int topo_plan(gp_dcch_topo *d, cudaStream_t s, uint32_t base, uint32_t ratio,
                     uint32_t bin_cap, gp_err *err) {
    const gp_cch_topo *t = d->topo;
    int rc = GP_OK;
    uint32_t thr[8], q = gp_cch_plan_thresholds(t, base ? base : PLAN_BASE,
                                                 ratio ? ratio : PLAN_RATIO, thr);
    gp_cch_plan *p = NULL;
    gp_cch_top *top = NULL;
    gp_cch_ptab *pt = NULL;
    uint32_t *pnode = NULL;
    rc = gp_cch_plan_build(t, thr, q, (uint32_t)d->sms * PLAN_BLOCKS_PER_SM,
                           bin_cap ? bin_cap : PLAN_BIN_CAP, &p, err);
    if (rc) return rc;
    d->p_nphases = p->nphases;
    d->p_nbins = p->nbins;
    d->p_nin = p->in_first[p->n];
    d->p_nout = p->out_first[p->n];
    d->p_phase_bin = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
    d->p_max_nodes = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    d->p_max_arcs = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    d->p_max_steps = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    pnode = (uint32_t *)malloc((size_t)p->n * 4 + 4);
    if (!d->p_phase_bin || !d->p_max_nodes || !d->p_max_arcs || !d->p_max_steps || !pnode) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the sweep plan");
        goto out;
    }
    memcpy(d->p_phase_bin, p->phase_bin, ((size_t)p->nphases + 1) * 4);
    for (uint32_t f = 0; f < p->nphases; f++)
        for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++) {
            uint32_t nodes = p->bin_first[b + 1] - p->bin_first[b];
            uint32_t arcs = p->in_first[p->bin_first[b + 1]] - p->in_first[p->bin_first[b]];
            if (nodes > d->p_max_nodes[f]) d->p_max_nodes[f] = nodes;
            if (arcs > d->p_max_arcs[f]) d->p_max_arcs[f] = arcs;
            if (p->bin_step[b + 1] - p->bin_step[b] > d->p_max_steps[f])
                d->p_max_steps[f] = p->bin_step[b + 1] - p->bin_step[b];
        }
    d->p_mid = p->bin_first[p->phase_bin[p->nphases - 1]];
    d->p_lim = p->max_bin_nodes > p->max_bin_out ? p->max_bin_nodes : p->max_bin_out;
    for (uint32_t x = 0; x < p->n; x++) pnode[x] = t->order[p->rank[x]];
    CK(dput(&d->p_bin_first, p->bin_first, (size_t)p->nbins + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_bin_step, p->bin_step, (size_t)p->nbins + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_step_first, p->step_first, (size_t)p->nsteps + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_in_first, p->in_first, (size_t)p->n + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_in_head, p->in_head, (size_t)d->p_nin, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_in_edge, p->in_edge, (size_t)d->p_nin, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_first, p->out_first, (size_t)p->n + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_head, p->out_head, (size_t)d->p_nout, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_tail, p->out_tail, (size_t)d->p_nout, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_edge, p->out_edge, (size_t)d->p_nout, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_pnode, pnode, (size_t)p->n, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_pos, p->pos, (size_t)p->n, s, &d->tbytes), "uploading the plan");
    { /* the arc-lane warp bins' layout: the inner arcs step by step, each step's padded with
       * dummy arcs (0, weight INF) to a multiple of PASS_ARCS (sweep_wpass: a pass never spans
       * two steps or two 32-arc chunks), an arc as its head and tail (offsets in its bin times
       * 16, head << 4 | tail << 20, in bins of fewer than 4096 nodes; 0 in larger ones, which
       * never run as warp bins), and each step's first arc there */
        uint32_t *sa = (uint32_t *)malloc(((size_t)p->nsteps + 1) * 4);
        uint64_t npad = 0;
        for (uint32_t st = 0; sa && st < p->nsteps; st++) {
            sa[st] = (uint32_t)npad;
            const uint32_t na = p->in_first[p->step_first[st + 1]] - p->in_first[p->step_first[st]];
            npad += (na + PASS_ARCS - 1) / PASS_ARCS * PASS_ARCS;
        }
        if (sa) sa[p->nsteps] = (uint32_t)npad;
        if (npad >= INF32) {
            free(sa);
            rc = gp_err_set(err, GP_ETOOBIG, "the sweep plan has too many inner arcs");
            goto out;
        }
        d->p_nsteps = p->nsteps;
        d->p_npad = (uint32_t)npad;
        uint32_t *ht = (uint32_t *)calloc((size_t)npad + 1, 4);
        uint32_t *on = (uint32_t *)malloc((size_t)p->n * 4 + 4); /* (OSORT below) */
        uint16_t *oo = (uint16_t *)malloc((size_t)p->n * 2 + 2);
        if (!ht || !sa || !on || !oo) {
            free(ht);
            free(sa);
            free(on);
            free(oo);
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the sweep plan");
            goto out;
        }
        for (uint32_t b = 0; b < p->nbins; b++) {
            const uint32_t p0 = p->bin_first[b], p1 = p->bin_first[b + 1];
            if (p1 - p0 >= 4096) continue;
            for (uint32_t st = p->bin_step[b]; st < p->bin_step[b + 1]; st++) {
                uint32_t j = sa[st];
                for (uint32_t x = p->step_first[st]; x < p->step_first[st + 1]; x++)
                    for (uint32_t a = p->in_first[x]; a < p->in_first[x + 1]; a++)
                        ht[j++] = p->in_head[a] << 4 | (x - p0) << 20;
            }
        }
        /* GP_DCCH_SWEEP_OSORT: each bin's nodes ascending with their offsets, so that a warp
         * bin's 32 lanes store to neighbouring nodes (gen:1M's last phase: 9.5 32-byte sectors
         * per store of 64-bit distances instead of 19.6; 7.1 if the nodes were consecutive) */
        std::vector<uint64_t> key;
        for (uint32_t b = 0; b < p->nbins; b++) {
            const uint32_t p0 = p->bin_first[b], p1 = p->bin_first[b + 1];
            if (p1 - p0 >= 65536) { /* (never a warp bin) */
                for (uint32_t x = p0; x < p1; x++) on[x] = pnode[x], oo[x] = 0;
                continue;
            }
            key.resize(p1 - p0);
            for (uint32_t x = p0; x < p1; x++) key[x - p0] = (uint64_t)pnode[x] << 16 | (x - p0);
            std::sort(key.begin(), key.end());
            for (uint32_t x = p0; x < p1; x++) {
                on[x] = (uint32_t)(key[x - p0] >> 16);
                oo[x] = (uint16_t)(key[x - p0] & 0xffffu);
            }
        }
        cudaError_t e1 = dput(&d->p_in_ht, ht, (size_t)d->p_npad, s, &d->tbytes);
        cudaError_t e2 = e1 == cudaSuccess
                             ? dput(&d->p_step_arc, sa, (size_t)p->nsteps + 1, s, &d->tbytes)
                             : e1;
        std::vector<uint4> rec((size_t)p->nbins + 1);
        for (uint32_t b = 0; b <= p->nbins; b++) {
            const uint32_t q = p->bin_first[b], st = p->bin_step[b];
            rec[b] = make_uint4(q, st, sa[st], p->out_first[q]);
        }
        if (e2 == cudaSuccess) e2 = dput(&d->p_bin_rec, rec.data(), rec.size(), s, &d->tbytes);
        if (e2 == cudaSuccess) e2 = dput(&d->p_onode, on, (size_t)p->n, s, &d->tbytes);
        /* GP_DCCH_SWEEP_BORDER: within each phase, the bins by their smallest node (on[] is
         * ascending per bin), so that the bins in flight together store to neighbouring nodes
         * and complete each other's 32-byte sectors of the output (the bins of a phase are
         * independent: any order is a valid sweep) */
        std::vector<uint32_t> bo(p->nbins ? p->nbins : 1);
        for (uint32_t f = 0; f < p->nphases; f++) {
            const uint32_t b0 = p->phase_bin[f], b1 = p->phase_bin[f + 1];
            for (uint32_t b = b0; b < b1; b++) bo[b] = b;
            std::stable_sort(bo.begin() + b0, bo.begin() + b1, [&](uint32_t x, uint32_t y) {
                const uint32_t vx = p->bin_first[x + 1] > p->bin_first[x] ? on[p->bin_first[x]]
                                                                         : UINT32_MAX;
                const uint32_t vy = p->bin_first[y + 1] > p->bin_first[y] ? on[p->bin_first[y]]
                                                                         : UINT32_MAX;
                return vx < vy;
            });
        }
        if (e2 == cudaSuccess) e2 = dput(&d->p_border, bo.data(), bo.size(), s, &d->tbytes);
        if (e2 == cudaSuccess) e2 = dput(&d->p_ooff, oo, (size_t)p->n, s, &d->tbytes);
        if (e2 == cudaSuccess) e2 = cudaStreamSynchronize(s); /* before the host copies go */
        free(ht);
        free(sa);
        free(on);
        free(oo);
        CK(e2, "uploading the plan");
    }
    if (d->t_max && (rc = gp_cch_plan_top(p, d->t_max < (uint32_t)d->smem_max / 8
                                                 ? d->t_max : (uint32_t)d->smem_max / 8,
                                             &top, err)) != GP_OK)
        goto out; /* a table row fits in shared memory (top_table) */
    if (top) {
        d->t_K = top->K;
        d->t_nph = top->nphases;
        d->t_narcs = top->first[top->K];
        CK(dput(&d->t_first, top->first, (size_t)top->K + 1, s, &d->tbytes), "uploading the top table");
        CK(dput(&d->t_head, top->head, (size_t)d->t_narcs, s, &d->tbytes), "uploading the top table");
        CK(dput(&d->t_edge, top->edge, (size_t)d->t_narcs, s, &d->tbytes), "uploading the top table");
    }
    if (d->q_max && (rc = gp_cch_plan_pieces(p, t, top ? top->nphases : 0, PIECE_MIN_STEPS,
                                             PIECE_MAX_BIN, d->q_max, &pt, err)) != GP_OK)
        goto out;
    if (pt && pt->ntab) {
        d->q_pent = (uint64_t *)calloc((size_t)p->nphases + 1, 8);
        d->q_parcs = (uint64_t *)calloc((size_t)p->nphases + 1, 8);
        d->q_pmaxn = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
        if (!d->q_pent || !d->q_parcs || !d->q_pmaxn) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the piece tables");
            goto out;
        }
        for (uint32_t f = 0; f < p->nphases; f++)
            for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++) {
                uint32_t N = p->bin_first[b + 1] - p->bin_first[b];
                d->q_parcs[f] += p->in_first[p->bin_first[b + 1]] - p->in_first[p->bin_first[b]];
                d->q_pent[f] += pt->first[b + 1] - pt->first[b];
                if (pt->first[b + 1] > pt->first[b] && N > d->q_pmaxn[f]) d->q_pmaxn[f] = N;
            }
        d->q_ntab = pt->ntab;
        d->q_max_steps = pt->max_steps;
        CK(dput(&d->q_bins, pt->bins, (size_t)pt->ntab, s, &d->tbytes), "uploading the piece tables");
        CK(dput(&d->q_first, pt->first, (size_t)p->nbins + 1, s, &d->tbytes), "uploading the piece tables");
        CK(dput(&d->q_depth, pt->depth, (size_t)p->n, s, &d->tbytes), "uploading the piece tables");
        d->q_nent = pt->first[p->nbins];
        CK(dput(&d->q_tmpl, (const u64 *)pt->ent, (size_t)pt->first[p->nbins], s, &d->tbytes),
           "uploading the piece tables");
        { /* flat phases: the entries with absolute positions, the phases' ranges */
            u64 *va = (u64 *)malloc((size_t)d->q_nent * 8 + 8);
            d->f_ppos = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
            d->f_pent = (uint64_t *)malloc(((size_t)p->nphases + 1) * 8);
            d->f_full = (unsigned char *)calloc((size_t)p->nphases + 1, 1);
            if (!va || !d->f_ppos || !d->f_pent || !d->f_full) {
                free(va);
                rc = gp_err_set(err, GP_ENOMEM, "out of memory for the piece tables");
                goto out;
            }
            for (uint32_t f = 0; f <= p->nphases; f++) {
                d->f_ppos[f] = p->bin_first[p->phase_bin[f]];
                d->f_pent[f] = pt->first[p->phase_bin[f]];
                if (f == p->nphases) break;
                d->f_full[f] = 1;
                for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++)
                    if (pt->first[b + 1] == pt->first[b]) d->f_full[f] = 0;
            }
            /* sorted by v (a bin's entries are a range of the table, column by column; here each
             * position's entries are a range, f_vfirst, for flat_gather), f_perm the order */
            std::vector<uint32_t> perm(d->q_nent), vfirst((size_t)d->p_mid + 1, 0);
            std::vector<uint64_t> ord; /* v << 32 | e: by v, then as the table had them */
            for (uint32_t b = 0; b < p->nbins; b++) {
                const uint32_t p0 = p->bin_first[b];
                ord.clear();
                for (uint32_t e = pt->first[b]; e < pt->first[b + 1]; e++)
                    ord.push_back((uint64_t)((uint32_t)pt->ent[e] >> 16) << 32 | e);
                std::sort(ord.begin(), ord.end());
                for (size_t i = 0; i < ord.size(); i++) {
                    const uint32_t e = (uint32_t)ord[i], lo = (uint32_t)pt->ent[e];
                    const uint64_t at = pt->first[b] + i;
                    perm[at] = e;
                    va[at] = (u64)(p0 + (lo >> 16)) << 32 | (p0 + (lo & 0xffffu));
                    if (p0 + (lo >> 16) < d->p_mid) vfirst[p0 + (lo >> 16) + 1]++;
                }
            }
            for (uint32_t v = 0; v < d->p_mid; v++) vfirst[v + 1] += vfirst[v];
            cudaError_t e1 = dput(&d->f_va, (const u64 *)va, (size_t)d->q_nent, s, &d->tbytes);
            if (e1 == cudaSuccess) e1 = dput(&d->f_perm, perm.data(), perm.size(), s, &d->tbytes);
            if (e1 == cudaSuccess)
                e1 = dput(&d->f_vfirst, vfirst.data(), vfirst.size(), s, &d->tbytes);
            if (e1 == cudaSuccess) e1 = cudaStreamSynchronize(s); /* before va goes */
            free(va);
            CK(e1, "uploading the piece tables");
        }
    }
    if ((rc = topo_chains(d, p, s, err)) != GP_OK) goto out; /* issue 18 variants */
    CK(cudaStreamSynchronize(s), "uploading the plan");
out:
    gp_cch_plan_free(p);
    gp_cch_top_free(top);
    gp_cch_ptab_free(pt);
    free(pnode);
    return rc;
}

extern "C" int gp_dcch_plan(gp_dcch *d, void *stream, uint32_t base, uint32_t ratio,
                            uint32_t bin_cap, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    gp_dcch_topo *t = NULL;
    /* a topology part of d's own: the shared one stays as it is for the other versions */
    int rc = gp_dcch_topo_new(d->topo, stream, base, ratio, bin_cap, &t, err);
    if (rc) return rc;
    if ((rc = bind(d, t, s, err)) != GP_OK) {
        d->p_nphases = 0; /* no plan weights: the level sweep answers */
        return rc;
    }
    return plan_weights(d, s, err);
}

extern "C" void gp_dcch_set_sweep(gp_dcch *d, int sweep) {
    const int base = sweep & 3; /* the four sweeps; the flags of issue 18 above */
    d->sweep = base == GP_DCCH_SWEEP_LEVELS || base == GP_DCCH_SWEEP_PLAN_NOTOP ||
                       base == GP_DCCH_SWEEP_PLAN_NOPIECES
                   ? base
                   : GP_DCCH_SWEEP_PLAN;
    d->w64 = 0; /* (32-bit warp-bin cells again until one saturates) */
    d->x_flags = sweep & (GP_DCCH_SWEEP_CHAINS | GP_DCCH_SWEEP_CHAINS_FIRST | GP_DCCH_SWEEP_GRAPH |
                          GP_DCCH_SWEEP_WARPS | GP_DCCH_SWEEP_SKIP | GP_DCCH_SWEEP_WMULTI |
                          GP_DCCH_SWEEP_W64 | GP_DCCH_SWEEP_FLAT | GP_DCCH_SWEEP_OSORT |
                          GP_DCCH_SWEEP_GATHER | GP_DCCH_SWEEP_PASSES | GP_DCCH_SWEEP_BORDER);
}

extern "C" int gp_dcch_set_metric(gp_dcch *d, void *stream, const uint32_t *ofw,
                                  const uint32_t *obw, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    CK(cudaMemcpyAsync(d->ofw, ofw, (size_t)d->m * 4, cudaMemcpyHostToDevice, s), "metric upload");
    CK(cudaMemcpyAsync(d->obw, obw, (size_t)d->m * 4, cudaMemcpyHostToDevice, s), "metric upload");
    CK(cudaStreamSynchronize(s), "metric upload");
out:
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Customization */

/* One warp customizes edge e: lanes take the triangles k0+lane, k0+lane+32, ...; the witness is
 * the smallest triangle offset reaching the minimum, none when the original arc does (the CPU's
 * rule, engine/cch.c customize_range). */
__device__ __forceinline__ void customize_edge(uint32_t e, int lane, const uint64_t *__restrict__ tf,
                                               const uint32_t *__restrict__ tri,
                                               const uint32_t *__restrict__ ofw,
                                               const uint32_t *__restrict__ obw, uint32_t *fw,
                                               uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                                               uint32_t *bad) {
    uint32_t of0 = ofw[e], ob0 = obw[e];
    uint32_t f = INF32, b = INF32, fm = INF32, bm = INF32;
    int of = 0, ob = 0;
    uint64_t k0 = tf[e];
    for (uint64_t k = k0 + lane; k < tf[e + 1]; k += 32) {
        uint32_t e1 = tri[2 * k], e2 = tri[2 * k + 1];
        uint32_t a1 = bw[e1], b2 = fw[e2], a2 = bw[e2], b1 = fw[e1];
        if (a1 != INF32 && b2 != INF32) {
            u64 sum = (u64)a1 + b2;
            if (sum >= INF32) of = 1;
            else if ((uint32_t)sum < f) f = (uint32_t)sum, fm = (uint32_t)(k - k0);
        }
        if (a2 != INF32 && b1 != INF32) {
            u64 sum = (u64)a2 + b1;
            if (sum >= INF32) ob = 1;
            else if ((uint32_t)sum < b) b = (uint32_t)sum, bm = (uint32_t)(k - k0);
        }
    }
    uint32_t fmin = __reduce_min_sync(0xffffffffu, f), bmin = __reduce_min_sync(0xffffffffu, b);
    uint32_t fw_ = min(fmin, of0), bw_ = min(bmin, ob0);
    uint32_t fmc = __reduce_min_sync(0xffffffffu, f == fw_ ? fm : INF32);
    uint32_t bmc = __reduce_min_sync(0xffffffffu, b == bw_ ? bm : INF32);
    of = __any_sync(0xffffffffu, of);
    ob = __any_sync(0xffffffffu, ob);
    if (lane == 0) {
        fw[e] = fw_;
        bw[e] = bw_;
        fmid[e] = fw_ == of0 ? INF32 : fmc;
        bmid[e] = bw_ == ob0 ? INF32 : bmc;
        if ((of && fw_ == INF32) || (ob && bw_ == INF32)) atomicMin(bad, e);
    }
}

__global__ void customize_level(uint32_t lo, uint32_t hi, const uint64_t *__restrict__ tf,
                                const uint32_t *__restrict__ tri, const uint32_t *__restrict__ ofw,
                                const uint32_t *__restrict__ obw, uint32_t *fw, uint32_t *bw,
                                uint32_t *fmid, uint32_t *bmid, uint32_t *bad) {
    uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (lo + w >= hi) return; /* whole warps leave together: hi - lo is per warp */
    customize_edge((uint32_t)(lo + w), threadIdx.x & 31, tf, tri, ofw, obw, fw, bw, fmid, bmid, bad);
}

/* Levels [l0, l1) in one block, bottom-up. */
__global__ void customize_small(uint32_t l0, uint32_t l1, const uint32_t *__restrict__ elev,
                                const uint64_t *__restrict__ tf, const uint32_t *__restrict__ tri,
                                const uint32_t *__restrict__ ofw, const uint32_t *__restrict__ obw,
                                uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                                uint32_t *bad) {
    int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
    for (uint32_t l = l0; l < l1; l++) {
        for (uint32_t e = elev[l] + warp; e < elev[l + 1]; e += nw)
            customize_edge(e, lane, tf, tri, ofw, obw, fw, bw, fmid, bmid, bad);
        __syncthreads();
    }
}

extern "C" int gp_dcch_customize(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw,
                                 uint32_t *fmid, uint32_t *bmid, float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t bad = INF32;
    CK(cudaMemcpyAsync(d->bad, &bad, 4, cudaMemcpyHostToDevice, s), "customization");
    CK(cudaEventRecord(d->ev0, s), "customization");
    for (uint32_t l = 0; l < d->nlevels;) {
        uint32_t cnt = d->edge_level[l + 1] - d->edge_level[l];
        if (cnt > SMALL_ITEMS / 8) {
            uint64_t threads = (uint64_t)cnt * 32;
            uint32_t blocks = (uint32_t)((threads + BIG_THREADS - 1) / BIG_THREADS);
            customize_level<<<blocks, BIG_THREADS, 0, s>>>(d->edge_level[l], d->edge_level[l + 1],
                                                           d->tri_first, d->tri, d->ofw, d->obw,
                                                           d->fw, d->bw, d->fmid, d->bmid, d->bad);
            CKL("customization");
            l++;
        } else {
            uint32_t l1 = l;
            while (l1 < d->nlevels && d->edge_level[l1 + 1] - d->edge_level[l1] <= SMALL_ITEMS / 8)
                l1++;
            customize_small<<<1, SMALL_THREADS, 0, s>>>(l, l1, d->d_elevels, d->tri_first, d->tri,
                                                        d->ofw, d->obw, d->fw, d->bw, d->fmid,
                                                        d->bmid, d->bad);
            CKL("customization");
            l = l1;
        }
    }
    d->customized = 1; /* the plan's weights and the top table count as customization */
    d->w64 = 0;        /* a new metric: 32-bit warp-bin cells until one saturates */
    if ((rc = plan_weights(d, s, err)) != GP_OK) goto out;
    CK(cudaEventRecord(d->ev1, s), "customization");
    CK(cudaMemcpyAsync(&bad, d->bad, 4, cudaMemcpyDeviceToHost, s), "customization");
    if (fw) CK(cudaMemcpyAsync(fw, d->fw, (size_t)d->m * 4, cudaMemcpyDeviceToHost, s), "customization");
    if (bw) CK(cudaMemcpyAsync(bw, d->bw, (size_t)d->m * 4, cudaMemcpyDeviceToHost, s), "customization");
    if (fmid) CK(cudaMemcpyAsync(fmid, d->fmid, (size_t)d->m * 4, cudaMemcpyDeviceToHost, s), "customization");
    if (bmid) CK(cudaMemcpyAsync(bmid, d->bmid, (size_t)d->m * 4, cudaMemcpyDeviceToHost, s), "customization");
    CK(cudaStreamSynchronize(s), "customization");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "customization");
    if (bad != INF32)
        rc = gp_err_set(err, GP_ETOOBIG,
                        "CCH customization: shortcut %u would exceed 2^32-1 weight units", bad);
out:
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Sweeps (PHAST, RPHAST) */

__device__ __forceinline__ u64 warp_min64(u64 v) {
    for (int o = 16; o > 0; o >>= 1) {
        u64 u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u < v ? u : v;
    }
    return v;
}

/* The top of the hierarchy (levels l0..l1-1, ranks r0 = lev[l0] .. lev[l1]: every upward edge of
 * these nodes stays inside) in one block with the distances and the CSR offsets in shared memory:
 * a level then costs one global read (the edge) instead of three dependent ones. */
__global__ void sweep_top(uint32_t l0, uint32_t l1, const uint32_t *__restrict__ lev, uint32_t k,
                          const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                          const uint32_t *__restrict__ wt, u64 *dist) {
    extern __shared__ u64 sd[];
    uint32_t r0 = lev[l0], nodes = lev[l1] - r0;
    uint64_t cells = (uint64_t)nodes * k;
    uint32_t *sf = (uint32_t *)(sd + cells);
    for (uint64_t i = threadIdx.x; i < cells; i += blockDim.x) sd[i] = dist[(size_t)r0 * k + i];
    for (uint32_t i = threadIdx.x; i <= nodes; i += blockDim.x) sf[i] = first[r0 + i];
    __syncthreads();
    int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
    for (uint32_t l = l1; l-- > l0;) {
        uint32_t lo = lev[l] - r0;
        uint64_t items = (uint64_t)(lev[l + 1] - lev[l]) * k;
        for (uint64_t i = warp; i < items; i += nw) {
            uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
            u64 best = INF64;
            for (uint32_t e = sf[x] + lane; e < sf[x + 1]; e += 32) {
                uint32_t w = wt[e];
                if (w == INF32) continue;
                u64 dh = sd[(size_t)(head[e] - r0) * k + sc];
                if (dh != INF64 && dh + w < best) best = dh + w;
            }
            best = warp_min64(best);
            if (lane == 0 && best < sd[(size_t)x * k + sc]) sd[(size_t)x * k + sc] = best;
        }
        __syncthreads();
    }
    for (uint64_t i = threadIdx.x; i < cells; i += blockDim.x) dist[(size_t)r0 * k + i] = sd[i];
}

/* Every level below the top (top-1 .. 0) in one persistent cooperative kernel, grid.sync() between
 * levels: a thread per item on wide levels, a warp per item on the others. Distances written by
 * other blocks in earlier levels are read through L2 (__ldcg), never from a stale L1 line. */
__global__ void sweep_coop(uint32_t top, const uint32_t *__restrict__ lev, uint32_t k,
                           const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                           const uint32_t *__restrict__ wt, u64 *dist) {
    cg::grid_group grid = cg::this_grid();
    uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t nth = (uint64_t)gridDim.x * blockDim.x, wid = tid / 32, nw = nth / 32;
    int lane = threadIdx.x & 31;
    for (uint32_t l = top; l-- > 0;) {
        uint32_t lo = lev[l];
        uint64_t items = (uint64_t)(lev[l + 1] - lo) * k;
        if (items >= SWEEP_THREAD_ITEMS) {
            for (uint64_t i = tid; i < items; i += nth) {
                uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
                size_t at = (size_t)x * k + sc;
                u64 best = __ldcg(&dist[at]);
                for (uint32_t e = first[x]; e < first[x + 1]; e++) {
                    uint32_t w = wt[e];
                    if (w == INF32) continue;
                    u64 dh = __ldcg(&dist[(size_t)head[e] * k + sc]);
                    if (dh != INF64 && dh + w < best) best = dh + w;
                }
                dist[at] = best;
            }
        } else {
            for (uint64_t i = wid; i < items; i += nw) {
                uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
                size_t at = (size_t)x * k + sc;
                u64 best = INF64;
                for (uint32_t e = first[x] + lane; e < first[x + 1]; e += 32) {
                    uint32_t w = wt[e];
                    if (w == INF32) continue;
                    u64 dh = __ldcg(&dist[(size_t)head[e] * k + sc]);
                    if (dh != INF64 && dh + w < best) best = dh + w;
                }
                best = warp_min64(best);
                if (lane == 0) {
                    u64 cur = __ldcg(&dist[at]);
                    dist[at] = best < cur ? best : cur;
                }
            }
        }
        grid.sync();
    }
}

__global__ void fill64(u64 *a, size_t count) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) a[i] = INF64;
}

/* Upward-search results into the matrix: entry j of source s (init_first is k+1 offsets). */
__global__ void scatter_init(uint32_t k, const uint32_t *__restrict__ init_first,
                             const uint32_t *__restrict__ init_rank,
                             const u64 *__restrict__ init_dist, const uint32_t *__restrict__ map,
                             u64 *dist) {
    uint32_t s = blockIdx.x;
    for (uint32_t j = init_first[s] + threadIdx.x; j < init_first[s + 1]; j += blockDim.x)
        dist[(size_t)(map ? map[init_rank[j]] : init_rank[j]) * k + s] = init_dist[j];
}

/* PHAST output: out[s*n + v] = dist[rank(v)*k + s] via order (rank -> node). */
__global__ void gather_nodes(uint32_t n, uint32_t k, const uint32_t *__restrict__ order,
                             const u64 *__restrict__ dist, u64 *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)n * k) return;
    uint32_t r = (uint32_t)(i / k), s = (uint32_t)(i % k);
    out[(size_t)s * n + order[r]] = dist[i];
}

/* RPHAST output: out[s*nt + j] = dist[tgt[j]*k + s]. */
__global__ void gather_targets(uint32_t nt, uint32_t k, const uint32_t *__restrict__ tgt,
                               const u64 *__restrict__ dist, u64 *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)nt * k) return;
    uint32_t s = (uint32_t)(i / nt), j = (uint32_t)(i % nt);
    out[i] = dist[(size_t)tgt[j] * k + s];
}

/* One phase of the plan (engine/cch_plan.h): block b sweeps bin bin0 + b. Its distances (positions
 * x k) and, when they fit too, its inner arcs are staged in shared memory (else read in place).
 * First every cell takes its scattered upward-search value and the bin's outer arcs (heads in
 * earlier phases, final) are relaxed all at once, an arc per thread with atomicMin; then the bin's
 * steps run in order with a block barrier between them: a step reads only earlier steps of the
 * same bin. A step of few items gets a group of g lanes per item (lanes over the arcs, a g-lane
 * min), a wide one a thread per item. At the end: the values go to out (node order, one row per
 * source) and, for all but the last phase, back to dist (later phases read them). The last phase
 * leaves dist as it found it apart from the cells it reset: every cell from position p_mid on is
 * INF between calls, so only the upper phases' cells need a fill before the next sweep. Indices
 * are 32-bit: the host keeps a bin's cells and outer arcs times k under 2^31.
 * K1: k = 1 (no divisions). SA: the host knows that every bin of the phase fits in shared memory
 * with its arcs and step offsets (smem >= cells*8 + (N+1)*4 + A*8 + (steps+1)*4): then D, F, H,
 * W and the step offsets are plain shared arrays (ld.shared, no generic loads, no global load of
 * the next step's offset inside the step loop). */
template <bool K1, bool SA, bool CH>
__global__ void __launch_bounds__(PLAN_THREADS_MAX)
    sweep_bins(plan_dev P, uint32_t bin0, uint32_t k_, u64 *dist, u64 *out, uint32_t n, int last,
               uint32_t smem, const u64 *__restrict__ tab, uint32_t cr) {
    extern __shared__ u64 sm[];
    const uint32_t k = K1 ? 1 : k_;
    const uint32_t b = bin0 + blockIdx.x, tid = threadIdx.x, bd = blockDim.x;
    const uint32_t p0 = P.bin_first[b], N = P.bin_first[b + 1] - p0;
    const uint32_t a0 = P.in_first[p0], A = P.in_first[p0 + N] - a0;
    const uint32_t s0 = P.bin_step[b], s1 = P.bin_step[b + 1];
    const uint32_t cells = N * k;
    const bool sd = SA || (size_t)cells * 8 <= smem;
    const bool sa = SA || (sd && (size_t)cells * 8 + ((size_t)N + 1) * 4 + (size_t)A * 8 <= smem);
    u64 *const base = dist + (size_t)p0 * k;
    u64 *D = sd ? sm : base;
    const uint32_t *F, *H, *W;
    uint32_t *S = NULL; /* SA: step offsets from p0 */
    /* the bin's piece table (tab: this launch uses them): R = sm + cells receives the product */
    const bool tb = tab && P.tab_first[b + 1] > P.tab_first[b] && (size_t)cells * 16 <= smem;
    if (tb) {
        F = H = W = NULL;
    } else if (sa) {
        uint32_t *f = (uint32_t *)(sm + cells), *h = f + N + 1, *w = h + A;
        for (uint32_t i = tid; i <= N; i += bd) f[i] = P.in_first[p0 + i] - a0;
        for (uint32_t i = tid; i < A; i += bd) {
            h[i] = P.in_head[a0 + i];
            w[i] = P.in_wt[a0 + i];
        }
        if (SA) {
            S = w + A;
            for (uint32_t i = tid; i <= s1 - s0; i += bd) S[i] = P.step_first[s0 + i] - p0;
        }
        F = f, H = h, W = w;
    } else {
        F = P.in_first + p0, H = P.in_head, W = P.in_wt;
    }
    for (uint32_t it = tid; it < cells; it += bd) {
        u64 v = base[it];
        if (sd) {
            D[it] = v;
            if (last && v != INF64) base[it] = INF64;
        }
    }
    __syncthreads();
    {
        const uint32_t o0 = P.out_first[p0], no = (P.out_first[p0 + N] - o0) * k;
        for (uint32_t j = tid; j < no; j += bd) {
            uint32_t o = o0 + (k == 1 ? j : j / k), sc = k == 1 ? 0 : j % k;
            uint32_t w = P.out_wt[o];
            if (w == INF32) continue;
            u64 dh = dist[(size_t)P.out_head[o] * k + sc];
            if (dh != INF64) atomicMin(&D[P.out_tail[o] * k + sc], dh + w);
        }
    }
    __syncthreads();
    if (tb) { /* R = min(D1, D1(a_j) + T(v, j) over the entries): the bin's steps at once */
        u64 *const R = sm + cells;
        for (uint32_t it = tid; it < cells; it += bd) R[it] = D[it];
        __syncthreads();
        const uint32_t t0 = P.tab_first[b], ne = (P.tab_first[b + 1] - t0) * k;
#pragma unroll 4
        for (uint32_t j = tid; j < ne; j += bd) {
            const uint32_t e = k == 1 ? j : j / k, sc = k == 1 ? 0 : j % k;
            const u64 x = tab[t0 + e];
            const uint32_t T = (uint32_t)(x >> 32);
            const u64 da = D[((uint32_t)x & 0xffffu) * k + sc];
            if (T != INF32 && da != INF64)
                atomicMin(&R[(((uint32_t)x >> 16) & 0xffffu) * k + sc], da + T);
        }
        __syncthreads();
        D = R;
    }
    if (CH) { /* chains: L = G x r lanes per piece (G a power of two >= min(k, 32): lane gl
               * takes columns gl % G, + G, ...; r lanes split a node's arcs, an r-lane min, the
               * first writes, __syncwarp before the next node reads), each piece walked in order */
        uint32_t G = 1;
        while (G < k && G < 32) G <<= 1;
        const uint32_t r = cr, L = G * r, gl = tid % L, col = gl % G, sub = gl / G;
        const unsigned mask = L == 32 ? 0xffffffffu : ((1u << L) - 1) << (tid % 32 / L * L);
        for (uint32_t j = __ldg(&P.ch_bin[b]) + tid / L; j < __ldg(&P.ch_bin[b + 1]); j += bd / L) {
            const uint32_t x1 = __ldg(&P.ch_first[j + 1]);
            uint32_t x = __ldg(&P.ch_first[j]), i = __ldg(&P.ch_node[x]);
            for (; x < x1; x++) {
                const uint32_t inext = x + 1 < x1 ? __ldg(&P.ch_node[x + 1]) : 0; /* in flight */
                const uint32_t e0 = F[i], e1 = F[i + 1];
                for (uint32_t c0 = 0; c0 < k; c0 += G) { /* the same trips on all L lanes */
                    const uint32_t sc = c0 + col;
                    u64 best = sc < k && sub == 0 ? D[i * k + sc] : INF64;
                    if (sc < k)
                        for (uint32_t a = e0 + sub; a < e1; a += r) {
                            const uint32_t w = W[a];
                            if (w == INF32) continue;
                            const u64 dh = D[H[a] * k + sc];
                            if (dh != INF64 && dh + w < best) best = dh + w;
                        }
                    for (uint32_t o = G; o < L; o <<= 1) {
                        const u64 u = __shfl_xor_sync(mask, best, o, L);
                        best = u < best ? u : best;
                    }
                    if (sc < k && sub == 0) D[i * k + sc] = best;
                }
                if (r > 1) __syncwarp(mask);
                i = inext;
            }
        }
        __syncthreads();
    }
    const uint32_t lane = tid & 31, warp = tid >> 5, nw = bd >> 5;
    uint32_t qa = 0, qb = tb || CH ? 0 : SA ? S[1] : P.step_first[s0 + 1] - p0;
    for (uint32_t st = tb || CH ? s1 : s0; st < s1; st++) {
        uint32_t qn = SA ? (st + 2 <= s1 ? S[st + 2 - s0] : 0)
                         : (st + 2 <= s1 ? P.step_first[st + 2] - p0 : 0); /* in flight */
        const uint32_t items = (qb - qa) * k;
        uint32_t g = 32;
        while (g > 1 && items * g > bd) g >>= 1;
        const uint32_t gpw = 32 / g, sub = lane / g, gl = lane % g;
        for (uint32_t base_it = warp * gpw; base_it < items; base_it += nw * gpw) {
            uint32_t it = base_it + sub;
            u64 best = INF64;
            uint32_t at = 0;
            if (it < items) {
                uint32_t i = qa + (k == 1 ? it : it / k), sc = k == 1 ? 0 : it % k;
                at = i * k + sc;
                for (uint32_t a = F[i] + gl; a < F[i + 1]; a += g) {
                    uint32_t w = W[a];
                    if (w == INF32) continue;
                    u64 dh = D[H[a] * k + sc];
                    if (dh != INF64 && dh + w < best) best = dh + w;
                }
            }
            for (uint32_t o = g >> 1; o > 0; o >>= 1) { /* uniform per block: g is */
                u64 u = __shfl_xor_sync(0xffffffffu, best, o);
                best = u < best ? u : best;
            }
            if (it < items && gl == 0 && best < D[at]) D[at] = best;
        }
        __syncthreads();
        qa = qb;
        qb = qn;
    }
    /* out row by row (neighbouring threads: neighbouring positions), then dist */
    for (uint32_t j = tid; j < cells; j += bd) {
        uint32_t sc = k == 1 ? 0 : j / N, i = k == 1 ? j : j % N;
        out[(size_t)sc * n + P.pnode[p0 + i]] = D[i * k + sc];
    }
    if (!last && sd) {
        for (uint32_t it = tid; it < cells; it += bd) base[it] = D[it];
    } else if (last && !sd) {
        __syncthreads(); /* every output read of D (= dist) is done */
        for (uint32_t it = tid; it < cells; it += bd) base[it] = INF64;
    }
}

/* Arc-lane warp bins (v9; GP_DCCH_SWEEP_WARPS, the host's default): a warp per bin and KW of
 * the k sources (k / KW warps per bin, each its own columns KW apart), WBIN_WARPS warps to a
 * block. v8's warp bins (removed at 49b62bd) gave a step's positions g lanes each (over its
 * arcs, then a g-lane shuffle min): on gen:24M's last phase (2.7 inner arcs per position, ~4
 * positions per step) most lanes idle and ~90 instructions a step, issue-bound (Nsight Compute:
 * 59% of issue slots at half the DRAM bandwidth). Here a step is its inner arcs, consecutive
 * (positions sorted by step, arcs by position, each step padded to a multiple of PASS_ARCS with
 * dummy arcs of weight INF): lane j takes arc qa + j / KW and column j % KW and relaxes it into
 * its tail's cell with a shared-memory atomicMin (heads are at earlier steps: final), no
 * offsets, no shuffle min. The bin's arcs (head << 4 | tail << 20, and the weight) come
 * through a window of 32-arc chunks in the lanes' registers, a lane an arc each, read with
 * __shfl_sync. The cells
 * (N x KW) live in the warp's slot, 32-bit (C = uint32_t: sums saturate at sat, a cell at sat
 * sets *ovf and the host sweeps again with 64-bit cells) or 64-bit; the outer arcs are relaxed
 * first (an arc and column per lane, atomicMin); flag (GP_DCCH_SWEEP_SKIP, last phase): the
 * cells of a bin whose flag sweep_init did not set are INF, not read; the k / KW warps of a
 * flagged bin count themselves in on the flag and the last clears it. sweep_warcs walks the
 * steps (any KW, either width); sweep_wpass (GP_DCCH_SWEEP_PASSES) walks passes of 8 arcs x 4
 * sources for KW = 4 with 32-bit cells. The parts they share: */
__device__ __forceinline__ uint32_t cell_in(u64 v, uint32_t sat, uint32_t) { /* 32-bit cells */
    return v == INF64 ? INF32 : v >= sat ? sat : (uint32_t)v;
}
__device__ __forceinline__ u64 cell_in(u64 v, uint32_t, u64) { return v; }
__device__ __forceinline__ u64 cell_out(uint32_t x) { return x == INF32 ? INF64 : x; }
__device__ __forceinline__ u64 cell_out(u64 x) { return x; }

struct wbin { /* a warp bin's bounds (its bin_rec and the next bin's, one load each) */
    uint32_t p0, N, s0, ns, a0, A, o0, no;
};
__device__ __forceinline__ wbin wbin_of(const plan_dev &P, uint32_t b) {
    const uint4 r0 = __ldg(&P.bin_rec[b]), r1 = __ldg(&P.bin_rec[b + 1]);
    return {r0.x, r1.x - r0.x, r0.y, r1.y - r0.y, r0.z, r1.z - r0.z, r0.w, r1.w - r0.w};
}
struct wwarp { /* a warp's place: its lane, warp in the block, bin (b), first column (c0) */
    uint32_t lane, wi, b, c0;
};
/* The warp's bin (the j-th of the launch, through P.border when set) and columns, wpb warps to
 * a block, g warps to a bin of kw sources each; false past the last bin. */
__device__ __forceinline__ bool wwarp_of(const plan_dev &P, uint32_t bin0, uint32_t bin1,
                                         uint32_t g, uint32_t wpb, uint32_t kw, wwarp *w) {
    w->lane = threadIdx.x & 31, w->wi = threadIdx.x >> 5;
    const uint32_t gw = blockIdx.x * wpb + w->wi, j = bin0 + gw / g;
    if (j >= bin1) return false;
    w->b = P.border ? __ldg(&P.border[j]) : j;
    w->c0 = gw % g * kw;
    return true;
}

/* The cells' initial values (rd: from dist, INF written back there on the last phase; else
 * INF with 16-byte stores), then the outer arcs, an arc and column per lane: U arcs' loads in
 * flight together (their arc, then their heads' cells; no branch between the loads). */
template <uint32_t KW, typename C, uint32_t U>
__device__ __forceinline__ void wbin_in(const plan_dev &P, const wbin &B, C *D, u64 *dist,
                                        uint32_t k, uint32_t c0, uint32_t lane, bool rd, int last,
                                        uint32_t sat) {
    if (rd) {
        for (uint32_t it = lane; it < B.N * KW; it += 32) { /* a position's columns together */
            const size_t cell = (size_t)(B.p0 + it / KW) * k + c0 + it % KW;
            const u64 v = dist[cell];
            D[it] = cell_in(v, sat, C());
            if (last && v != INF64) dist[cell] = INF64;
        }
    } else { /* every cell INF (all bits set in either width): 16-byte stores */
        uint32_t *const Dw = (uint32_t *)D;
        const uint32_t nw = B.N * KW * (uint32_t)sizeof(C) / 4;
        for (uint32_t x = lane * 4; x + 3 < nw; x += 128)
            *(uint4 *)&Dw[x] = make_uint4(INF32, INF32, INF32, INF32);
        for (uint32_t x = (nw & ~3u) + lane; x < nw; x += 32) Dw[x] = INF32;
    }
    __syncwarp();
    const uint32_t nj = B.no * KW, col = lane % KW; /* (32 is a multiple of KW) */
    for (uint32_t j0 = lane; j0 < nj; j0 += 32 * U) {
        uint32_t w[U], h[U], t[U];
        u64 dh[U];
#pragma unroll
        for (uint32_t u = 0; u < U; u++) {
            const uint32_t j = j0 + 32 * u, o = B.o0 + j / KW;
            w[u] = j < nj ? __ldg(&P.out_wt[o]) : INF32;
            h[u] = j < nj ? __ldg(&P.out_head[o]) : 0;
        }
#pragma unroll
        for (uint32_t u = 0; u < U; u++) {
            const uint32_t j = j0 + 32 * u, o = B.o0 + j / KW;
            dh[u] = w[u] != INF32 ? __ldg(&dist[(size_t)h[u] * k + c0 + col]) : INF64;
            t[u] = j < nj ? __ldg(&P.out_tail[o]) : 0;
        }
#pragma unroll
        for (uint32_t u = 0; u < U; u++)
            if (dh[u] != INF64) atomicMin(&D[t[u] * KW + col], cell_in(dh[u] + w[u], sat, C()));
    }
}

/* The output: a lane per position (osort: the j-th smallest node of the bin, so that the lanes
 * store to neighbouring nodes), its KW columns one row after another, UO positions' loads in
 * flight together; then dist (not on the last phase), *ovf where a 32-bit cell reached sat, and
 * the flag. */
template <uint32_t KW, typename C>
__device__ __forceinline__ void wbin_out(const plan_dev &P, const wbin &B, const C *D, u64 *dist,
                                         u64 *out, uint32_t n, uint32_t k, uint32_t c0,
                                         uint32_t lane, int last, int osort, uint32_t sat,
                                         uint32_t *ovf, uint32_t *flag, uint32_t b, uint32_t g,
                                         bool rd) {
    constexpr bool C32 = sizeof(C) == 4;
    bool sv = false; /* a 32-bit cell reached sat: the host sweeps again with 64-bit cells */
    constexpr uint32_t UO = KW == 1 ? 2 : 4;
    for (uint32_t j0 = lane; j0 < B.N; j0 += 32 * UO) {
        uint32_t i[UO], v[UO];
#pragma unroll
        for (uint32_t u = 0; u < UO; u++) {
            const uint32_t j = j0 + 32 * u;
            i[u] = j < B.N && osort ? __ldg(&P.ooff[B.p0 + j]) : j;
            v[u] = j < B.N ? __ldg(osort ? &P.onode[B.p0 + j] : &P.pnode[B.p0 + j]) : 0;
        }
#pragma unroll
        for (uint32_t u = 0; u < UO; u++) {
            if (j0 + 32 * u >= B.N) break;
            u64 *o = out + (size_t)c0 * n + v[u];
#pragma unroll
            for (uint32_t c = 0; c < KW; c++, o += n) {
                const C x = D[i[u] * KW + c];
                sv |= C32 && x == (C)sat;
                *o = cell_out(x);
            }
        }
    }
    if (!last)
        for (uint32_t it = lane; it < B.N * KW; it += 32)
            dist[(size_t)(B.p0 + it / KW) * k + c0 + it % KW] = cell_out(D[it]);
    if (C32 && sv) *ovf = 1;
    /* (every lane read the flag before the first step) */
    if (flag && rd && lane == 0 && atomicAdd(&flag[b], 1u) == g) flag[b] = 0;
}

/* The steps one after another (any KW): the window holds three chunks, the third loaded while
 * the first two are in use; the step offsets of the first 64 steps sit in two registers per
 * lane. */
template <uint32_t KW, typename C>
__global__ void __launch_bounds__(WBIN_WARPS * 32, KW == 1 ? WARCS_BLOCKS : WARCS_BLOCKS_K)
    sweep_warcs(plan_dev P, uint32_t bin0, uint32_t bin1, uint32_t k, uint32_t g, u64 *dist,
                u64 *out, uint32_t n, int last, uint32_t slot, uint32_t *flag, uint32_t sat,
                uint32_t *ovf, int osort) {
    extern __shared__ u64 sm[];
    constexpr bool C32 = sizeof(C) == 4;
    const C INFC = (C)INF64;
    constexpr uint32_t APW = 32 / KW; /* arcs per pass */
    const unsigned FULL = 0xffffffffu;
    wwarp ww;
    if (!wwarp_of(P, bin0, bin1, g, WBIN_WARPS, KW, &ww)) return; /* (no block barrier below) */
    const uint32_t lane = ww.lane, wi = ww.wi, b = ww.b, c0 = ww.c0;
    const wbin B = wbin_of(P, b);
    const uint32_t ns = B.ns, A = B.A;
    C *const D = (C *)((char *)sm + (size_t)wi * slot);
    const uint32_t *const HT = P.in_ht + B.a0, *const W = P.in_pwt + B.a0;
    const uint32_t sr0 = lane <= ns ? __ldg(&P.step_arc[B.s0 + lane]) - B.a0 : 0;
    const uint32_t sr1 = lane + 32 <= ns ? __ldg(&P.step_arc[B.s0 + 32 + lane]) - B.a0 : 0;
    const bool rd = !flag || flag[b];
    /* (outer arcs 2 at a time for one source: its kernel keeps to 32 registers) */
    wbin_in<KW, C, KW == 1 ? 2 : 4>(P, B, D, dist, k, c0, lane, rd, last, sat);
    /* the window (loaded after the outer arcs: their batches need the registers) */
    uint32_t h0 = lane < A ? __ldg(&HT[lane]) : 0, w0 = lane < A ? __ldg(&W[lane]) : INF32;
    uint32_t h1 = lane + 32 < A ? __ldg(&HT[lane + 32]) : 0;
    uint32_t w1 = lane + 32 < A ? __ldg(&W[lane + 32]) : INF32;
    uint32_t h2 = lane + 64 < A ? __ldg(&HT[lane + 64]) : 0;
    uint32_t w2 = lane + 64 < A ? __ldg(&W[lane + 64]) : INF32;
    __syncwarp();
    const uint32_t col = lane % KW, sub = lane / KW;
    {
        uint32_t k0 = 0, qa = 0; /* k0: the chunk in h0 / w0 */
        for (uint32_t st = 1; st <= ns; st++) { /* the same trips on all lanes; step st - 1 */
            const uint32_t qb = st < 32   ? __shfl_sync(FULL, sr0, st)
                                : st < 64 ? __shfl_sync(FULL, sr1, st - 32)
                                          : __ldg(&P.step_arc[B.s0 + st]) - B.a0;
            for (uint32_t c = qa; c < qb; c += APW) {
                if ((c >> 5) != k0) { /* one chunk on (a step starts at most one chunk on) */
                    h0 = h1, w0 = w1, h1 = h2, w1 = w2, k0++;
                    const uint32_t x = ((k0 + 2) << 5) + lane;
                    h2 = x < A ? __ldg(&HT[x]) : 0;
                    w2 = x < A ? __ldg(&W[x]) : INF32;
                }
                const uint32_t a = c + sub, sl = a & 31;
                uint32_t e = __shfl_sync(FULL, h0, sl), v = __shfl_sync(FULL, w0, sl);
                if (((min(c + APW, qb) - 1) >> 5) != k0) { /* the pass reaches the next chunk */
                    const uint32_t e1 = __shfl_sync(FULL, h1, sl), v1 = __shfl_sync(FULL, w1, sl);
                    if ((a >> 5) != k0) e = e1, v = v1;
                }
                if (a < qb && v != INF32) {
                    const C dh = D[((e & 0xffffu) >> 4) * KW + col];
                    if (dh != INFC) { /* 32-bit cells: the sum saturates at sat */
                        const u64 x = (u64)dh + v;
                        atomicMin(&D[(e >> 20) * KW + col], C32 ? (C)(x < sat ? x : sat) : (C)x);
                    }
                }
            }
            __syncwarp();
            qa = qb;
        }
    }
    wbin_out<KW, C>(P, B, D, dist, out, n, k, c0, lane, last, osort, sat, ovf, flag, b, g, rd);
}

/* Passes (GP_DCCH_SWEEP_PASSES; KW = 4, 32-bit cells, sat < 2^31): with every step padded to a
 * multiple of 8 arcs, the bin's arcs are a sequence of passes of 8 arcs x 4 sources, four to a
 * 32-arc chunk, none spanning two steps, so no step offsets, no chunk boundary inside a pass and
 * a __syncwarp after each pass (a step's last pass among them). The chunks rotate through three
 * register pairs with no moves (the loop unrolled three times): a chunk is loaded two chunks
 * (eight passes) before its first use, where sweep_warcs' window shifts by register moves that
 * wait on the chunk loaded one chunk before (Nsight Compute: 17,497 long-scoreboard samples
 * there, bench/results/2026-11-27-...-gpu-cch-ncu-v10.md); the first chunk is loaded before the
 * outer arcs. A pass has no branch: the head's cell read and the tail's cell lowered (red.shared,
 * predicated off for a dummy or INF arc and an INF head) at byte offsets the layout holds, a
 * 32-bit saturating sum (weights clamped to sat < 2^31, so a sum never wraps). pf: 1 = the bin's
 * inner arcs prefetched into L2 before the outer arcs, 2 = also its outer arcs and its output's
 * node order. */
template <int WPB, int MB>
__global__ void __launch_bounds__(WPB * 32, MB)
    sweep_wpass(plan_dev P, uint32_t bin0, uint32_t bin1, uint32_t k, uint32_t g, u64 *dist,
                u64 *out, uint32_t n, int last, uint32_t slot, uint32_t *flag, uint32_t sat,
                uint32_t *ovf, int osort, int pf) {
    extern __shared__ u64 sm[];
    constexpr uint32_t KW = 4;
    const unsigned FULL = 0xffffffffu;
    wwarp ww;
    if (!wwarp_of(P, bin0, bin1, g, WPB, KW, &ww)) return; /* (no block barrier below) */
    const uint32_t lane = ww.lane, wi = ww.wi, b = ww.b, c0 = ww.c0;
    const wbin B = wbin_of(P, b);
    const uint32_t A = B.A; /* a multiple of 8 */
    uint32_t *const D = (uint32_t *)((char *)sm + (size_t)wi * slot);
    const uint32_t *const HT = P.in_ht + B.a0, *const W = P.in_pwt + B.a0;
    if (pf) { /* a 128-byte line a lane */
        for (uint32_t x = lane * 32; x < A; x += 32 * 32) {
            asm volatile("prefetch.global.L2 [%0];" ::"l"(HT + x));
            asm volatile("prefetch.global.L2 [%0];" ::"l"(W + x));
        }
        if (pf > 1) {
            for (uint32_t x = lane * 32; x < B.no; x += 32 * 32) {
                asm volatile("prefetch.global.L2 [%0];" ::"l"(P.out_wt + B.o0 + x));
                asm volatile("prefetch.global.L2 [%0];" ::"l"(P.out_head + B.o0 + x));
                asm volatile("prefetch.global.L2 [%0];" ::"l"(P.out_tail + B.o0 + x));
            }
            for (uint32_t x = lane * 32; x < B.N; x += 32 * 32) {
                asm volatile("prefetch.global.L2 [%0];" ::"l"((osort ? P.onode : P.pnode) + B.p0 + x));
                if (osort) asm volatile("prefetch.global.L2 [%0];" ::"l"(P.ooff + B.p0 + x));
            }
        }
    }
    uint32_t ha, wa, hb, wb, hc, wc;
    auto ld = [&](uint32_t ch, uint32_t &h, uint32_t &w) {
        const uint32_t x = (ch << 5) + lane;
        h = x < A ? __ldg(&HT[x]) : 0;
        w = x < A ? __ldg(&W[x]) : INF32;
    };
    ld(0, ha, wa);
    const bool rd = !flag || flag[b];
    wbin_in<KW, uint32_t, WPB * MB <= 48 ? 4 : 2>(P, B, D, dist, k, c0, lane, rd, last, sat);
    const uint32_t col = lane & 3, sub = lane >> 2, np = A >> 3, nch = (A + 31) >> 5;
    const uint32_t dcol = (uint32_t)__cvta_generic_to_shared(D + col); /* + a byte offset */
    auto run = [&](uint32_t h, uint32_t w, uint32_t ch) { /* chunk ch's passes */
        const uint32_t q1 = np - (ch << 2);
#pragma unroll
        for (uint32_t q = 0; q < 4; q++) {
            if (q >= q1) break;
            const uint32_t e = __shfl_sync(FULL, h, (q << 3) + sub);
            const uint32_t v = __shfl_sync(FULL, w, (q << 3) + sub);
            uint32_t dh;
            asm volatile("ld.shared.u32 %0, [%1];" : "=r"(dh) : "r"(dcol + (e & 0xffffu)) : "memory");
            const uint32_t x = min(dh + min(v, sat), sat); /* dh <= sat < 2^31 unless INF */
            asm volatile("{\n\t.reg .pred p, q;\n\t"
                         "setp.ne.u32 p, %2, 0xffffffff;\n\t"
                         "setp.ne.and.u32 q, %3, 0xffffffff, p;\n\t"
                         "@q red.shared.min.u32 [%0], %1;\n\t}"
                         ::"r"(dcol + (e >> 16)), "r"(x), "r"(v), "r"(dh) : "memory");
            __syncwarp();
        }
    };
    ld(1, hb, wb);
    ld(2, hc, wc);
    __syncwarp();
    for (uint32_t ch = 0; ch < nch; ch += 3) {
        run(ha, wa, ch);
        ld(ch + 3, ha, wa);
        if (ch + 1 >= nch) break;
        run(hb, wb, ch + 1);
        ld(ch + 4, hb, wb);
        if (ch + 2 >= nch) break;
        run(hc, wc, ch + 2);
        ld(ch + 5, hc, wc);
    }
    wbin_out<KW, uint32_t>(P, B, D, dist, out, n, k, c0, lane, last, osort, sat, ovf, flag, b, g,
                           rd);
}

/* Flat phases (GP_DCCH_SWEEP_FLAT): a phase with piece tables without bins. A bin's table gives
 * d(v) = min(D1(v), min over its entries (v, a, T) of D1(a) + T) with D1 the cells after the
 * outer arcs; a block per bin left the GPU idle where a phase has few bins (gen:24M: 37 bins of
 * 139 steps, 528 of 243 at one block per SM). Here the whole phase at once: flat_outer, a thread
 * per position and source, relaxes the position's outer arcs into its cell (D1; heads are in
 * earlier phases: final), then flat_entries, a thread per entry and source, lowers v's cell with
 * atomicMin. An entry may read a's cell after other entries lowered it: any value there lies
 * between d(a) and D1(a), so the candidate is a real path's length, never below d(v), and never
 * above D1(a) + T: the minimum is d(v) whatever the order (and a stale cached read is such a
 * value too). The output waits for the next launch: flat_outer's first part writes the previous
 * flat phase's positions (plo .. phi) to out row by row (neighbouring threads: neighbouring
 * positions), and restores INF there after the last phase (lastp). */
__global__ void __launch_bounds__(256)
    flat_outer(plan_dev P, uint32_t lo, uint32_t hi, uint32_t k, u64 *dist, u64 *out, uint32_t n,
               uint32_t plo, uint32_t phi, int lastp) {
    const uint64_t np = (uint64_t)(phi - plo) * k, nq = (uint64_t)(hi - lo) * k;
    const uint64_t it = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it < np) {
        const uint32_t sc = (uint32_t)(it / (phi - plo)), p = plo + (uint32_t)(it % (phi - plo));
        const size_t cell = (size_t)p * k + sc;
        const u64 v = dist[cell];
        out[(size_t)sc * n + P.pnode[p]] = v;
        if (lastp && v != INF64) dist[cell] = INF64;
        return;
    }
    if (it >= np + nq) return;
    const uint32_t p = lo + (uint32_t)((it - np) / k), sc = (uint32_t)((it - np) % k);
    const size_t cell = (size_t)p * k + sc;
    u64 best = dist[cell];
    for (uint32_t o = P.out_first[p]; o < P.out_first[p + 1]; o++) {
        const uint32_t w = P.out_wt[o];
        if (w == INF32) continue;
        const u64 dh = dist[(size_t)P.out_head[o] * k + sc];
        if (dh != INF64 && dh + w < best) best = dh + w;
    }
    dist[cell] = best;
}

__global__ void __launch_bounds__(256)
    flat_entries(const u64 *__restrict__ va, const uint32_t *__restrict__ T, uint64_t e0,
                 uint64_t ne, uint32_t k, u64 *dist) {
    const uint64_t it = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= ne * k) return;
    const uint64_t e = e0 + it / k;
    const uint32_t sc = (uint32_t)(it % k), t = T[e];
    if (t == INF32) return;
    const u64 x = va[e];
    const u64 da = dist[(size_t)(uint32_t)x * k + sc];
    if (da == INF64) return;
    u64 *const dv = &dist[(size_t)(x >> 32) * k + sc];
    if (da + t < *dv) atomicMin(dv, da + t);
}

/* GP_DCCH_SWEEP_GATHER: flat_entries without atomics. The entries sorted by v (f_vfirst: v's
 * range), a thread per position and source takes the minimum of its cell and its entries' D1(a) +
 * T and writes it once (the same bounds as flat_entries: any value read at a lies between d(a)
 * and D1(a)). Neighbouring threads: one position's sources. */
__global__ void __launch_bounds__(256)
    flat_gather(const u64 *__restrict__ va, const uint32_t *__restrict__ T,
                const uint32_t *__restrict__ vfirst, uint32_t lo, uint32_t hi, uint32_t k,
                u64 *dist) {
    const uint64_t it = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= (uint64_t)(hi - lo) * k) return;
    const uint32_t v = lo + (uint32_t)(it / k), sc = (uint32_t)(it % k);
    const size_t cell = (size_t)v * k + sc;
    const u64 d1 = dist[cell];
    u64 best = d1;
    const uint32_t i1 = __ldg(&vfirst[v + 1]);
#pragma unroll 4
    for (uint32_t i = __ldg(&vfirst[v]); i < i1; i++) {
        const uint32_t t = __ldg(&T[i]), a = (uint32_t)__ldg(&va[i]);
        const u64 da = dist[(size_t)a * k + sc];
        const u64 x = t == INF32 || da == INF64 ? INF64 : da + t;
        best = x < best ? x : best;
    }
    if (best < d1) dist[cell] = best;
}

/* Before the plan's phases, one launch: blocks 0 .. nfill-1 fill a chunk of INIT_CHUNK cells of
 * [lo, hi) each with INF and then write the upward-search entries that land in their chunk (block
 * 0 also those at hi or beyond: cells that are INF between sweeps); entries of the top (positions
 * below K) are left to the other blocks, which compute the top's cells (cch_plan.h gp_cch_top): a
 * block per source and 32 top positions (a lane each), the source's top entries staged in shared
 * memory (compacted in any order: the min does not care), the block's warps taking every 8th entry
 * (loads unrolled: many rows of tab in flight), each lane the minimum of d0(u) + tab[u*K + v] over
 * its warp's entries, then the minimum over the warps; the result goes to dist and to out. (First
 * version, a thread per position looping over all entries: 60 us on BAY, latency-bound.) */
__global__ void __launch_bounds__(INIT_THREADS)
    sweep_init(uint32_t k, u64 *dist, size_t lo, size_t hi, uint32_t nfill,
               const uint32_t *__restrict__ init_first, const uint32_t *__restrict__ init_rank,
               const u64 *__restrict__ init_dist, const uint32_t *__restrict__ pos, uint32_t K,
               const u64 *__restrict__ tab, u64 *out, const uint32_t *__restrict__ pnode,
               uint32_t n, uint32_t *flag, const uint32_t *__restrict__ bin_first, uint32_t fb0,
               uint32_t fb1) {
    extern __shared__ u64 sm[];
    __shared__ uint32_t cnt;
    const uint32_t b = blockIdx.x, tid = threadIdx.x;
    const size_t top = (size_t)K * k;
    if (b < nfill) {
        const size_t c0 = lo + (size_t)b * INIT_CHUNK, c1 = c0 + INIT_CHUNK < hi ? c0 + INIT_CHUNK : hi;
        for (size_t i = c0 + tid; i < c1; i += blockDim.x) dist[i] = INF64;
        __syncthreads();
        for (uint32_t s = 0; s < k; s++)
#pragma unroll 4 /* (independent iterations: their loads in flight together) */
            for (uint32_t j = init_first[s] + tid; j < init_first[s + 1]; j += blockDim.x) {
                size_t cell = (size_t)pos[init_rank[j]] * k + s;
                if (cell >= top && ((cell >= c0 && cell < c1) || (b == 0 && cell >= hi))) {
                    dist[cell] = init_dist[j];
                    /* flag: the bin of bins [fb0, fb1) holding the cell's position */
                    const size_t x = cell / k;
                    if (flag && x >= bin_first[fb0]) {
                        uint32_t l = fb0, r = fb1; /* the last bin starting at or before it */
                        while (r - l > 1) {
                            const uint32_t mid = l + (r - l) / 2;
                            if (bin_first[mid] <= x) l = mid;
                            else r = mid;
                        }
                        flag[l] = 1;
                    }
                }
            }
        return;
    }
    __shared__ u64 red[INIT_THREADS / 32][32];
    const uint32_t chunks = (K + 31) / 32, s = (b - nfill) / chunks;
    const uint32_t lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
    const uint32_t v = (b - nfill) % chunks * 32 + lane;
    u64 *sdist = sm;
    uint32_t *su = (uint32_t *)(sm + (init_first[s + 1] - init_first[s]));
    if (tid == 0) cnt = 0;
    __syncthreads();
#pragma unroll 4
    for (uint32_t j = init_first[s] + tid; j < init_first[s + 1]; j += blockDim.x) {
        uint32_t u = pos[init_rank[j]];
        u64 du = init_dist[j];
        if (u < K && du != INF64) {
            uint32_t i = atomicAdd(&cnt, 1u);
            su[i] = u;
            sdist[i] = du;
        }
    }
    __syncthreads();
    u64 best = INF64;
    const uint32_t c = cnt;
    if (v < K) {
#pragma unroll 4
        for (uint32_t i = warp; i < c; i += nw) {
            u64 t = tab[(size_t)su[i] * K + v];
            if (t != INF64 && sdist[i] + t < best) best = sdist[i] + t;
        }
    }
    red[warp][lane] = best;
    __syncthreads();
    if (warp || v >= K) return;
    for (uint32_t w = 1; w < nw; w++) best = red[w][lane] < best ? red[w][lane] : best;
    dist[(size_t)v * k + s] = best;
    out[(size_t)s * n + pnode[v]] = best;
}

static unsigned blocks_for(uint64_t items) {
    return (unsigned)((items + BIG_THREADS - 1) / BIG_THREADS);
}

/* The upward searches' results (init lists) to the device. */
static int upload_init(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                       const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t ninit = init_first[k];
    CK(grow(&d->init_rank, &d->init_cap, ninit + 1), "allocating the sweep");
    CK(grow(&d->init_dist, &d->init_dcap, ninit + 1), "allocating the sweep");
    CK(grow(&d->init_first, &d->init_first_cap, (size_t)k + 1), "allocating the sweep");
    CK(cudaMemcpyAsync(d->init_first, init_first, ((size_t)k + 1) * 4, cudaMemcpyHostToDevice, s),
       "sweep init");
    if (ninit) {
        CK(cudaMemcpyAsync(d->init_rank, init_rank, ninit * 4, cudaMemcpyHostToDevice, s), "sweep init");
        CK(cudaMemcpyAsync(d->init_dist, init_dist, ninit * 8, cudaMemcpyHostToDevice, s), "sweep init");
    }
out:
    return rc;
}

/* What a captured plan sweep depends on (GP_DCCH_SWEEP_GRAPH): equal keys, equal launches. */
struct x_key {
    uint32_t k, K, f0, nfill, nprod, init_smem, chain_max, gen;
    int sweep, flags, q_ok;
    uint32_t wkw; /* GP_DCCH_SWEEP_WMULTI: sources per warp at most */
    uint32_t sat;  /* 32-bit warp-bin cells saturate here (GPATH_CCH_SAT: lower, for tests) */
    uint32_t wp;   /* GP_DCCH_SWEEP_PASSES: sweep_wpass's blocks per SM | prefetch level << 8 */
    size_t lo, hi;
    const void *pdist, *outbuf, *init_first, *init_rank, *init_dist;
    uint32_t *flag; /* GP_DCCH_SWEEP_SKIP: d->p_flag where the last phase runs as warp bins */
};

static_assert(sizeof(x_key) <= sizeof(((gp_dcch *)0)->x_graph[0].key), "x_key fits");

typedef void (*sweep_kern)(plan_dev, uint32_t, uint32_t, u64 *, u64 *, uint32_t, int, uint32_t,
                           const u64 *, uint32_t);
static const sweep_kern sweep_kerns[2][2][2] = { /* [k == 1][bins fit smem][chains] */
    {{sweep_bins<false, false, false>, sweep_bins<false, false, true>},
     {sweep_bins<false, true, false>, sweep_bins<false, true, true>}},
    {{sweep_bins<true, false, false>, sweep_bins<true, false, true>},
     {sweep_bins<true, true, false>, sweep_bins<true, true, true>}}};

/* Whether phase f of the plan uses piece tables at x.k (for one source always, for several where
 * the product's work, entries x k, stays within twice the steps', inner arcs x k) and whether
 * chains replace its steps (GP_DCCH_SWEEP_CHAINS: where the largest piece is short enough), or
 * also its tables (CHAINS_FIRST). */
static void phase_paths(const gp_dcch *d, const x_key &x, uint32_t f, bool *tabs, bool *ch) {
    *tabs = d->sweep == GP_DCCH_SWEEP_PLAN && d->q_ok && d->q_pent && d->q_pent[f] &&
            (x.k == 1 || d->q_pent[f] <= 2 * d->q_parcs[f]);
    *ch = (x.flags & GP_DCCH_SWEEP_CHAINS) && d->c_pmax && d->c_pmax[f] <= x.chain_max &&
          (!*tabs || (x.flags & GP_DCCH_SWEEP_CHAINS_FIRST));
}

/* Whether phase f of the plan runs flat (GP_DCCH_SWEEP_FLAT: where it uses piece tables at x.k,
 * no chains replace them and every bin of it has a table: a bin of fewer than PIECE_MIN_STEPS
 * steps keeps its steps). */
static bool phase_flat(const gp_dcch *d, const x_key &x, uint32_t f) {
    bool tabs, ch;
    phase_paths(d, x, f, &tabs, &ch);
    return (x.flags & GP_DCCH_SWEEP_FLAT) && d->f_va && d->f_T && d->f_full[f] && tabs && !ch;
}

/* Whether and how phase f of the plan runs as warp bins at x.k (GP_DCCH_SWEEP_WARPS, in phases
 * of at least d->wbin_min bins): 0 not, else the sources per warp (sweep_warcs): for one source
 * where the phase uses no piece table at this k (unless chains replace it), for several with
 * WMULTI likewise in phases of at least d->wmulti_min bins (x.wkw sources per warp at most, a
 * divisor of k, so k / that warps per bin),
 * where the largest bin's cells (nodes x sources per warp) fit a warp's slot. tabs / ch: whether
 * the phase uses piece tables / chains. */
static uint32_t phase_wbins(const gp_dcch *d, const x_key &x, uint32_t f, bool *tabs_out,
                            bool *ch_out) {
    const uint32_t k = x.k;
    const uint64_t nodes = d->p_max_nodes[f];
    bool tabs, ch;
    phase_paths(d, x, f, &tabs, &ch);
    if (tabs_out) *tabs_out = tabs;
    if (ch_out) *ch_out = ch;
    if (!(x.flags & GP_DCCH_SWEEP_WARPS) || (tabs && !ch) ||
        d->p_phase_bin[f + 1] - d->p_phase_bin[f] < d->wbin_min)
        return 0;
    uint32_t kw = 1;
    if (k > 1) {
        if (!(x.flags & GP_DCCH_SWEEP_WMULTI) ||
            d->p_phase_bin[f + 1] - d->p_phase_bin[f] < d->wmulti_min)
            return 0;
        kw = x.wkw;
        while (kw > 1 && k % kw) kw >>= 1;
    }
    const uint64_t csz = x.flags & GP_DCCH_SWEEP_W64 ? 8 : 4; /* bytes per cell */
    return nodes < 4096 && nodes * csz * kw <= WBIN_SLOT_MAX ? kw : 0;
}

/* The launches of one plan sweep after the init upload: sweep_init (fill, scatter, the top
 * table's product), then a launch per phase (steps, piece tables or chains). With npev (the
 * profile) an event after the init and after each phase, and path[f] = the path phase f took
 * (0 steps, 1 piece tables, 2 chains, 3 warp bins, 256 flat; + 4 where its bins fit shared
 * memory with their arcs and steps (warp bins: always); + 8 x the chains' lanes per column or the
 * warp bins' sources per warp; + 1024 for 32-bit warp-bin cells) and
 * smem[f] its shared memory per block. Also what GP_DCCH_SWEEP_GRAPH captures. */
static int plan_issue(gp_dcch *d, cudaStream_t s, const x_key &x, cudaEvent_t *pev,
                      uint32_t npev, uint32_t *path, uint32_t *smem_of, gp_err *err) {
    int rc = GP_OK;
    const uint32_t k = x.k;
    sweep_init<<<x.nfill + x.nprod, INIT_THREADS, x.init_smem, s>>>(
        k, d->pdist, x.lo, x.hi, x.nfill, d->init_first, d->init_rank, (const u64 *)d->init_dist,
        d->p_pos, x.K, d->t_tab, d->outbuf, d->p_pnode, d->n, x.flag, d->p_bin_first,
        d->p_phase_bin[d->p_nphases - 1], d->p_phase_bin[d->p_nphases]);
    CKL("sweep init");
    if (npev) CK(cudaEventRecord(pev[0], s), "plan profile");
    {
        plan_dev P = {d->p_bin_first, d->p_bin_step, d->p_step_first, d->p_in_first,
                      d->p_in_head,   d->p_in_wt,    d->p_out_first,  d->p_out_head,
                      d->p_out_tail,  d->p_out_wt,   d->p_pnode,      d->p_in_ht,
                      d->p_in_pwt,
                      d->p_step_arc,  d->q_first,    d->c_bin,        d->c_first,
                      d->c_node,      d->p_onode,    d->p_ooff,       d->p_bin_rec,
                      x.flags & GP_DCCH_SWEEP_BORDER ? d->p_border : NULL};
        unsigned threads = k == 1 ? 256 : PLAN_THREADS_MAX;
        uint32_t plo = 0, phi = 0; /* a flat phase's positions, their output still to write */
        for (uint32_t f = x.f0; f <= d->p_nphases; f++) {
            const bool flat = f < d->p_nphases && phase_flat(d, x, f);
            if (phi > plo || (flat && f < d->p_nphases)) { /* flat_outer: the pending output,
                                                          * this flat phase's outer arcs */
                const uint32_t lo = flat ? d->f_ppos[f] : 0, hi = flat ? d->f_ppos[f + 1] : 0;
                const uint64_t items = ((uint64_t)(phi - plo) + (hi - lo)) * k;
                if (items)
                    flat_outer<<<(unsigned)((items + 255) / 256), 256, 0, s>>>(
                        P, lo, hi, k, d->pdist, d->outbuf, d->n, plo, phi,
                        f == d->p_nphases);
                CKL("sweep (flat)");
                plo = lo, phi = hi;
            }
            if (f == d->p_nphases) break;
            if (flat) { /* flat_entries: the phase's piece-table entries at once */
                const uint64_t e0 = d->f_pent[f], ne = d->f_pent[f + 1] - e0;
                const uint64_t np = (uint64_t)(d->f_ppos[f + 1] - d->f_ppos[f]) * k;
                if (ne && (x.flags & GP_DCCH_SWEEP_GATHER) && k > 1 && ne >= d->gather_min &&
                    d->f_ppos[f + 1] <= d->p_mid)
                    flat_gather<<<(unsigned)((np + 255) / 256), 256, 0, s>>>(
                        d->f_va, d->f_T, d->f_vfirst, d->f_ppos[f], d->f_ppos[f + 1], k,
                        d->pdist);
                else if (ne)
                    flat_entries<<<(unsigned)((ne * k + 255) / 256), 256, 0, s>>>(
                        d->f_va, d->f_T, e0, ne, k, d->pdist);
                CKL("sweep (flat)");
                if (path) path[f] = 256;
                if (smem_of) smem_of[f] = 0;
                if (npev) CK(cudaEventRecord(pev[f - x.f0 + 1], s), "plan profile");
                continue;
            }
            uint32_t nb = d->p_phase_bin[f + 1] - d->p_phase_bin[f];
            uint64_t nodes = d->p_max_nodes[f], need = nodes * k * 8 + (nodes + 1) * 4 +
                                                      (uint64_t)d->p_max_arcs[f] * 8 + 16;
            uint64_t need_sa = need + ((uint64_t)d->p_max_steps[f] + 1) * 4;
            bool sa = need_sa <= (uint64_t)d->smem_max;
            uint32_t smem = sa ? (uint32_t)need_sa
                               : need < (uint64_t)d->smem_max ? (uint32_t)need : (uint32_t)d->smem_max;
            const u64 *tab = NULL;
            bool tabs, ch;
            const uint32_t wk = phase_wbins(d, x, f, &tabs, &ch);
            const int lastf = f + 1 == d->p_nphases;
            if (wk) { /* arc-lane warp bins: the cells of wk sources in a warp's slot */
                const bool c32 = !(x.flags & GP_DCCH_SWEEP_W64);
                const uint32_t slot = (uint32_t)((nodes * wk * (c32 ? 4 : 8) + 15) / 16 * 16);
                const uint32_t g = k / wk;
                const bool wp = wk == 4 && c32 && (x.flags & GP_DCCH_SWEEP_PASSES);
                uint32_t wpb = WBIN_WARPS; /* warps per block */
                const wpass_fn wpk = wp ? wpass_kern(x.wp & 255, &wpb) : NULL;
                const uint32_t nbl = (uint32_t)(((uint64_t)nb * g + wpb - 1) / wpb);
                if (path) path[f] = 3 + 4 + (wk << 3) + (c32 ? 1024 : 0) + (wp ? 2048 : 0);
                if (smem_of) smem_of[f] = slot * wpb;
                const int os = (x.flags & GP_DCCH_SWEEP_OSORT) && d->p_onode;
                if (wp) /* (its sums need sat < 2^31) */
                    wpk<<<nbl, wpb * 32, slot * wpb, s>>>(
                        P, d->p_phase_bin[f], d->p_phase_bin[f + 1], k, g, d->pdist, d->outbuf,
                        d->n, lastf, slot, lastf ? x.flag : NULL,
                        x.sat < 0x7fffffffu ? x.sat : 0x7fffffffu, d->p_ovf, os, x.wp >> 8 & 3);
                else
                    warcs_kern(wk, c32)<<<nbl, wpb * 32, slot * wpb, s>>>(
                        P, d->p_phase_bin[f], d->p_phase_bin[f + 1], k, g, d->pdist, d->outbuf,
                        d->n, lastf, slot, lastf ? x.flag : NULL, x.sat, d->p_ovf, os);
                CKL("sweep (warp bins)");
                if (npev) CK(cudaEventRecord(pev[f - x.f0 + 1], s), "plan profile");
                continue;
            }
            if (tabs && !ch) {
                uint64_t tneed = (uint64_t)d->q_pmaxn[f] * k * 16;
                if (tneed <= (uint64_t)d->smem_max) {
                    tab = d->q_ent;
                    if (tneed > smem) smem = (uint32_t)tneed;
                }
            }
            /* chains: lanes splitting a node's arcs, about its phase's inner arcs per position
             * (a power of two), within a warp with the columns' lanes */
            uint32_t G = 1, r = 1;
            while (G < k && G < 32) G <<= 1;
            while (ch && G * r * 2 <= 32 && (uint64_t)r * 2 * d->c_ppos[f] <= d->c_parcs[f]) r <<= 1;
            if (path) path[f] = (ch ? 2 : tab ? 1 : 0) + (sa ? 4 : 0) + (r << 3);
            if (smem_of) smem_of[f] = smem;
            sweep_kerns[k == 1][sa][ch]<<<nb, threads, smem, s>>>(P, d->p_phase_bin[f], k, d->pdist,
                                                            d->outbuf, d->n,
                                                            f + 1 == d->p_nphases, smem, tab, r);
            CKL("sweep (plan)");
            if (npev) CK(cudaEventRecord(pev[f - x.f0 + 1], s), "plan profile");
        }
    }
out:
    return rc;
}

/* The per-phase profile (GPATH_CCH_PLAN_PROFILE=1) on stderr: per phase its bins, positions, the
 * largest bin (positions, steps), the largest piece, the path taken, shared memory per block and
 * resident blocks per SM, the device time and the bytes of distances read + written (positions
 * x k x 8, twice: the bin's cells in, the output out) per second. */
static int plan_profile(gp_dcch *d, const x_key &x, cudaEvent_t *pev, uint32_t npev,
                        const uint32_t *path, const uint32_t *smem_of, gp_err *err) {
    int rc = GP_OK;
    float t0 = 0, ti = 0;
    const uint32_t k = x.k;
    static const char *const names[4] = {"steps", "piece tables", "chains", "warp bins"};
    CK(cudaEventSynchronize(pev[npev - 1]), "plan profile");
    CK(cudaEventElapsedTime(&t0, d->ev0, pev[0]), "plan profile");
    fprintf(stderr, "plan profile k=%u sweep %d flags %d: init (fill, scatter", k, d->sweep,
            x.flags);
    if (x.K)
        fprintf(stderr, ", top table of %u nodes = phases 0-%u, computed in %.1f us at "
                        "customization", x.K, x.f0 - 1, d->t_ms * 1e3);
    fprintf(stderr, ") %.1f us", t0 * 1e3);
    if (d->sweep == GP_DCCH_SWEEP_PLAN && d->q_ntab)
        fprintf(stderr, " [piece tables: %u bins, %.1f us at customization%s]", d->q_ntab,
                d->q_ms * 1e3, d->q_ok ? "" : ", off: a distance overflows");
    for (uint32_t f = x.f0; f < d->p_nphases; f++) {
        int per_sm = 0;
        uint32_t wpb = WBIN_WARPS;
        CK(cudaEventElapsedTime(&ti, pev[f - x.f0], pev[f - x.f0 + 1]), "plan profile");
        const bool flat = path[f] == 256;
        const uint32_t wk = !flat && (path[f] & 3) == 3 ? path[f] >> 3 & 127 : 0; /* warp bins */
        const bool c32 = path[f] >> 10 & 1;
        cudaError_t oe =
            flat ? cudaErrorNotSupported /* (grids of 256 threads: no blocks per SM to tell) */
            : wk && (path[f] & 2048)
                ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &per_sm, wpass_kern(x.wp & 255, &wpb), wpb * 32, smem_of[f])
            : wk ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, warcs_kern(wk, c32),
                                                               WBIN_WARPS * 32, smem_of[f])
                 : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &per_sm, sweep_kerns[k == 1][(path[f] >> 2) & 1][(path[f] & 3) == 2],
                      k == 1 ? 256 : PLAN_THREADS_MAX, smem_of[f]);
        if (oe != cudaSuccess) per_sm = -1;
        const double pos = d->c_ppos ? (double)d->c_ppos[f] : 0;
        char lanes[96] = "";
        if (flat || (path[f] & 3) == 1) /* the tables' entries */
            snprintf(lanes, sizeof lanes, " (%llu entries)",
                     (unsigned long long)(d->q_pent ? d->q_pent[f] : 0));
        else if ((path[f] & 3) == 2) /* chains: lanes per column (splitting a node's arcs) */
            snprintf(lanes, sizeof lanes, " (%u lanes per column)", path[f] >> 3);
        else if (wk) /* warp bins: a lane per arc, wk sources per warp */
            snprintf(lanes, sizeof lanes, " (a lane per arc, %u sources per warp, %u-bit cells)",
                     wk, c32 ? 32 : 64);
        fprintf(stderr,
                "; phase %u (%u bins, %.0f positions, %.1f inner arcs each, largest bin %u "
                "positions / %u steps, largest piece %u, %s%s, %u B smem, %d blocks/SM) %.1f us = "
                "%.0f GB/s",
                f, d->p_phase_bin[f + 1] - d->p_phase_bin[f], pos,
                pos > 0 && d->c_parcs ? d->c_parcs[f] / pos : 0.0, d->p_max_nodes[f],
                d->p_max_steps[f], d->c_pmax ? d->c_pmax[f] : 0,
                flat ? "flat piece tables" : names[path[f] & 3], lanes,
                smem_of[f],
                per_sm, ti * 1e3, ti > 0 ? pos * k * 16 / (ti * 1e-3) / 1e9 : 0.0);
    }
    fprintf(stderr, "\n");
out:
    return rc;
}

/* PHAST through the plan: fill the upper phases' cells (and whatever an earlier call left), scatter
 * the upward searches by position, a launch per phase; the output lands in d->outbuf. With
 * GP_DCCH_SWEEP_GRAPH the launches after the init upload run as one CUDA graph, captured once per
 * key (x_key: k, the fill range, the buffers, the plan generation, the paths' inputs). */
static int run_plan_k(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                      const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err);
/* One source sweeps its own buffer (pdist1), several the shared one (pdist). */
static int run_plan(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                    const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    if (k != 1) return run_plan_k(d, s, k, init_first, init_rank, init_dist, err);
    u64 *p = d->pdist;
    size_t cap = d->pdist_cap, dirty = d->p_dirty;
    d->pdist = d->pdist1, d->pdist_cap = d->pdist1_cap, d->p_dirty = d->p_dirty1;
    int rc = run_plan_k(d, s, k, init_first, init_rank, init_dist, err);
    d->pdist1 = d->pdist, d->pdist1_cap = d->pdist_cap, d->p_dirty1 = d->p_dirty;
    d->pdist = p, d->pdist_cap = cap, d->p_dirty = dirty;
    return rc;
}

static int run_plan_k(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                      const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t cells = (size_t)d->n * k;
    u64 *before = d->pdist;
    x_key x;
    cudaEvent_t pev[18];
    uint32_t path[16];
    uint32_t smem_of[16], npev = 0;
    const char *pf = getenv("GPATH_CCH_PLAN_PROFILE"), *cm = getenv("GPATH_CCH_CHAINS");
    memset(&x, 0, sizeof x);
    /* the top table: its phases are done by sweep_init's product */
    x.k = k;
    x.K = d->sweep == GP_DCCH_SWEEP_PLAN || d->sweep == GP_DCCH_SWEEP_PLAN_NOPIECES ? d->t_K : 0;
    x.f0 = x.K ? d->t_nph : 0;
    CK(grow(&d->pdist, &d->pdist_cap, cells), "allocating the sweep");
    if (d->pdist != before) d->p_dirty = d->pdist_cap;
    CK(grow(&d->outbuf, &d->out_cap, cells), "allocating the PHAST output");
    if ((rc = upload_init(d, s, k, init_first, init_rank, init_dist, err)) != GP_OK) return rc;
    if (!d->x_attr) { /* the chain kernels may use all of a block's shared memory too (the
                       * device's limit: d->smem_max may be lowered by GPATH_CCH_PLAN_SMEM) */
        int dev = 0, lim = 0;
        CK(cudaGetDevice(&dev), "cudaGetDevice");
        CK(cudaDeviceGetAttribute(&lim, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "chains");
        for (int k1 = 0; k1 < 2; k1++)
            for (int sa = 0; sa < 2; sa++)
                CK(cudaFuncSetAttribute(sweep_kerns[k1][sa][1],
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, lim), "chains");
        d->x_attr = 1;
    }
    { /* the fill range and the init launch's blocks */
        size_t hi = (size_t)d->p_mid * k, lo = (size_t)x.K * k;
        if (d->p_dirty > hi) hi = d->p_dirty;
        if (hi > d->pdist_cap) hi = d->pdist_cap;
        if (lo > hi) lo = hi;
        uint32_t nfill = (uint32_t)((hi - lo + INIT_CHUNK - 1) / INIT_CHUNK), maxc = 0;
        if (nfill < 1) nfill = 1;
        for (uint32_t i = 0; i < k; i++)
            if (init_first[i + 1] - init_first[i] > maxc) maxc = init_first[i + 1] - init_first[i];
        x.lo = lo;
        x.hi = hi;
        x.nfill = nfill;
        x.nprod = x.K ? k * ((x.K + 31) / 32) : 0;
        /* the product's staging: rounded up so that a captured graph serves many sources */
        uint32_t cap = (maxc + 255) / 256 * 256;
        if ((size_t)cap * 12 + 16 > 48 * 1024) cap = maxc;
        x.init_smem = cap * 12 + 16;
    }
    d->p_dirty = d->pdist_cap; /* until the sweep is through */
    /* chains: the largest piece at most */
    x.chain_max = cm && *cm ? (uint32_t)strtoul(cm, NULL, 10) : CHAIN_MAX_PIECE;
    x.sweep = d->sweep;
    x.flags = d->x_flags | (d->w64 ? GP_DCCH_SWEEP_W64 : 0);
    x.q_ok = d->q_ok;
    { /* 32-bit cells saturate at INF - 1 (GPATH_CCH_SAT=N: at N, so tests reach the fallback) */
        const char *st = getenv("GPATH_CCH_SAT");
        unsigned long v = st && *st ? strtoul(st, NULL, 10) : 0;
        x.sat = v > 0 && v < INF32 ? (uint32_t)v : INF32 - 1;
    }
    x.gen = d->x_gen;
    x.pdist = d->pdist;
    x.outbuf = d->outbuf;
    x.init_first = d->init_first;
    x.init_rank = d->init_rank;
    x.init_dist = d->init_dist;
    { /* GP_DCCH_SWEEP_PASSES: sweep_wpass's launch bounds, GPATH_CCH_PMB = 6 (default) or 7
       * blocks of 8 warps per SM, or 12 or 14 of 4, and its L2 prefetch (GPATH_CCH_PREFETCH=0
       * (default): none, 1: the inner arcs, 2: also the outer arcs and the output's node order;
       * gen:4M 16 per sweep 0.064 / 0.065 / 0.066 ms per tree) */
        const char *mb = getenv("GPATH_CCH_PMB"), *pf = getenv("GPATH_CCH_PREFETCH");
        const unsigned long m = mb && *mb ? strtoul(mb, NULL, 10) : 6;
        x.wp = (m == 7 || m == 12 || m == 14 ? (uint32_t)m : 6u) |
               (pf && (*pf == '1' || *pf == '2') ? (uint32_t)(*pf - '0') : 0u) << 8;
    }
    { /* GP_DCCH_SWEEP_WMULTI's sources per warp: GPATH_CCH_WKW = 1, 2, 4 (default), 8 or 16 */
        const char *kw = getenv("GPATH_CCH_WKW");
        const unsigned long v = kw && *kw ? strtoul(kw, NULL, 10) : 4;
        x.wkw = v >= 1 && v <= WARCS_KW_MAX && !(v & (v - 1)) ? (uint32_t)v : 4;
    }
    { /* GP_DCCH_SWEEP_SKIP: where the last phase runs as warp bins with its cells in the slots
       * (arc-lane warp bins always; v8's where they fit) */
        if ((d->x_flags & GP_DCCH_SWEEP_SKIP) && d->p_nphases > x.f0 &&
            phase_wbins(d, x, d->p_nphases - 1, NULL, NULL)) {
            uint32_t *before_f = d->p_flag;
            CK(grow(&d->p_flag, &d->p_flag_cap, (size_t)d->p_nbins), "allocating the bin flags");
            if (d->p_flag != before_f) /* stale flags would only cost reads; missing ones, cells */
                CK(cudaMemsetAsync(d->p_flag, 0, d->p_flag_cap * 4, s), "allocating the bin flags");
            x.flag = d->p_flag;
        }
    }
    d->x_c32 = 0; /* whether a phase runs as arc-lane warp bins with 32-bit cells */
    for (uint32_t f = x.f0; f < d->p_nphases; f++) {
        if (phase_wbins(d, x, f, NULL, NULL) && !(x.flags & GP_DCCH_SWEEP_W64)) d->x_c32 = 1;
    }
    /* GPATH_CCH_PLAN_PROFILE=1 (the lab): an event after the init and after each phase */
    npev = pf && *pf == '1' && d->p_nphases <= 16 ? d->p_nphases - x.f0 + 1 : 0;
    for (uint32_t i = 0; i < npev; i++) CK(cudaEventCreate(&pev[i]), "plan profile");
    if ((d->x_flags & GP_DCCH_SWEEP_GRAPH) && !npev) { /* ev0 after a capture: device time */
        x_graph_slot *slot = NULL, *lru = &d->x_graph[0];
        for (int i = 0; i < X_GRAPHS; i++) {
            x_graph_slot *g = &d->x_graph[i];
            if (g->exec && !memcmp(g->key, &x, sizeof x)) slot = g;
            if (g->used < lru->used) lru = g;
        }
        if (!slot) {
            cudaGraph_t graph = NULL;
            slot = lru;
            if (slot->exec) cudaGraphExecDestroy(slot->exec);
            slot->exec = NULL;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capturing the sweep");
            rc = plan_issue(d, s, x, NULL, 0, NULL, NULL, err);
            cudaError_t e = cudaStreamEndCapture(s, &graph);
            if (rc == GP_OK && e == cudaSuccess)
                e = cudaGraphInstantiate(&slot->exec, graph, 0);
            if (graph) cudaGraphDestroy(graph);
            if (rc) return rc;
            CK(e, "capturing the sweep");
            memcpy(slot->key, &x, sizeof x);
        }
        slot->used = ++d->x_tick;
        CK(cudaEventRecord(d->ev0, s), "sweep");
        CK(cudaGraphLaunch(slot->exec, s), "sweep (graph)");
    } else {
        CK(cudaEventRecord(d->ev0, s), "sweep");
        if ((rc = plan_issue(d, s, x, pev, npev, path, smem_of, err)) != GP_OK) return rc;
    }
    if (npev) {
        rc = plan_profile(d, x, pev, npev, path, smem_of, err);
        for (uint32_t i = 0; i < npev; i++) cudaEventDestroy(pev[i]);
        if (rc) return rc;
    }
    d->p_dirty = (size_t)d->p_mid * k;
out:
    return rc;
}

/* Init + level sweep over a graph (first/head/wt device, levels host lev / device dlev). */
static int run_sweep(gp_dcch *d, cudaStream_t s, uint32_t n, uint32_t nlev, const uint32_t *lev,
                     const uint32_t *dlev, const uint32_t *first, const uint32_t *head,
                     const uint32_t *wt, uint32_t k, const uint32_t *init_first,
                     const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t cells = (size_t)n * k;
    CK(grow(&d->dist, &d->dist_cap, cells), "allocating the sweep");
    if ((rc = upload_init(d, s, k, init_first, init_rank, init_dist, err)) != GP_OK) return rc;
    CK(cudaEventRecord(d->ev0, s), "sweep");
    fill64<<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->dist, cells);
    CKL("sweep init");
    scatter_init<<<k, 64, 0, s>>>(k, d->init_first, d->init_rank, (const u64 *)d->init_dist,
                                  NULL, d->dist);
    CKL("sweep init");
    { /* the top levels in shared memory, then the rest level by level */
    uint32_t top = nlev;
    while (top > 0 && (uint64_t)(lev[top] - lev[top - 1]) * k <= SWEEP_SMALL_ITEMS &&
           (uint64_t)(lev[nlev] - lev[top - 1]) * k <= TOP_CELLS)
        top--;
    if (top < nlev) {
        uint64_t nodes = lev[nlev] - lev[top];
        size_t smem = (size_t)(nodes * k) * 8 + (size_t)(nodes + 1) * 4;
        sweep_top<<<1, SMALL_THREADS, smem, s>>>(top, nlev, dlev, k, first, head, wt, d->dist);
        CKL("sweep (top levels)");
    }
    if (top > 0) {
        /* one block per SM for a single source (latency: a cheaper grid.sync), as many as fit
         * for several (work) */
        int per_sm = 1;
        if (k > 1 && cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sweep_coop, COOP_THREADS,
                                                                   0) != cudaSuccess)
            per_sm = 1;
        if (per_sm < 1) per_sm = 1;
        dim3 grid((unsigned)(d->sms * per_sm)), block(COOP_THREADS);
        uint32_t *dl = (uint32_t *)dlev;
        u64 *dd = d->dist;
        uint32_t *f = (uint32_t *)first, *h = (uint32_t *)head, *w = (uint32_t *)wt;
        void *args[] = {&top, &dl, &k, &f, &h, &w, &dd};
        CK(cudaLaunchCooperativeKernel((void *)sweep_coop, grid, block, args, 0, s), "sweep");
    }
    }
out:
    return rc;
}

extern "C" int gp_dcch_phast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                             const uint32_t *init_rank, const uint64_t *init_dist, uint64_t *dist,
                             float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    size_t cells = (size_t)d->n * k;
    int plan = d->sweep != GP_DCCH_SWEEP_LEVELS && d->p_nphases &&
               (uint64_t)d->p_lim * k < (1ULL << 31);
    int rc = plan ? run_plan(d, s, k, init_first, init_rank, init_dist, err)
                  : run_sweep(d, s, d->n, d->nlevels, d->level_first, d->d_levels, d->up_first,
                              d->up_head, d->bw, k, init_first, init_rank, init_dist, err);
    if (rc) return rc;
    if (dist && !plan) {
        CK(grow(&d->outbuf, &d->out_cap, cells), "allocating the PHAST output");
        gather_nodes<<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->n, k, d->order, d->dist,
                                                               d->outbuf);
        CKL("PHAST output");
    }
    CK(cudaEventRecord(d->ev1, s), "PHAST");
    if (plan && d->x_c32) { /* a 32-bit cell saturated: again with 64-bit cells (GP_DCCH_SWEEP_W64) */
        uint32_t ovf = 0;
        CK(cudaMemcpyAsync(&ovf, d->p_ovf, 4, cudaMemcpyDeviceToHost, s), "PHAST");
        CK(cudaStreamSynchronize(s), "PHAST");
        if (ovf) {
            CK(cudaMemsetAsync(d->p_ovf, 0, 4, s), "PHAST");
            d->w64 = 1;
            return gp_dcch_phast(d, stream, k, init_first, init_rank, init_dist, dist, ms, err);
        }
    }
    if (dist) CK(cudaMemcpyAsync(dist, d->outbuf, cells * 8, cudaMemcpyDeviceToHost, s), "PHAST output");
    CK(cudaStreamSynchronize(s), "PHAST");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "PHAST");
out:
    return rc;
}

extern "C" int gp_dcch_rphast_prepare(gp_dcch *d, void *stream, uint32_t nsel,
                                      const uint32_t *first, const uint32_t *head,
                                      const uint32_t *wt, uint32_t nlev, const uint32_t *lev_first,
                                      uint32_t nt, const uint32_t *tgt, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t m = first[nsel];
    size_t capm = d->r_cap_m, capl = d->r_cap_lev;
    CK(grow(&d->r_first, &d->r_cap_n, (size_t)nsel + 1), "RPHAST upload");
    CK(grow(&d->r_head, &d->r_cap_m, (size_t)m + 1), "RPHAST upload");
    if (d->r_cap_m != capm || !d->r_wt) {
        cudaFree(d->r_wt);
        d->r_wt = NULL;
        CK(cudaMalloc((void **)&d->r_wt, d->r_cap_m * 4), "RPHAST upload");
    }
    CK(grow(&d->r_lev, &d->r_cap_lev, (size_t)nlev + 1), "RPHAST upload");
    if (d->r_cap_lev != capl || !d->r_lev_host) {
        free(d->r_lev_host);
        d->r_lev_host = (uint32_t *)malloc(d->r_cap_lev * 4);
        if (!d->r_lev_host) return gp_err_set(err, GP_ENOMEM, "out of memory for RPHAST levels");
    }
    CK(grow(&d->r_tgt, &d->r_cap_t, (size_t)nt + 1), "RPHAST upload");
    CK(cudaMemcpyAsync(d->r_first, first, ((size_t)nsel + 1) * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
    if (m) {
        CK(cudaMemcpyAsync(d->r_head, head, (size_t)m * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
        CK(cudaMemcpyAsync(d->r_wt, wt, (size_t)m * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
    }
    CK(cudaMemcpyAsync(d->r_lev, lev_first, ((size_t)nlev + 1) * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
    CK(cudaMemcpyAsync(d->r_tgt, tgt, (size_t)nt * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
    memcpy(d->r_lev_host, lev_first, ((size_t)nlev + 1) * 4);
    d->r_n = nsel;
    d->r_m = m;
    d->r_nlev = nlev;
    d->r_nt = nt;
    CK(cudaStreamSynchronize(s), "RPHAST upload");
out:
    return rc;
}

extern "C" int gp_dcch_rphast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                              const uint32_t *init_local, const uint64_t *init_dist, uint64_t *out,
                              float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    size_t cells = (size_t)d->r_nt * k;
    int rc = run_sweep(d, s, d->r_n, d->r_nlev, d->r_lev_host, d->r_lev, d->r_first, d->r_head,
                       d->r_wt, k, init_first, init_local, init_dist, err);
    if (rc) return rc;
    CK(grow(&d->outbuf, &d->out_cap, cells + 1), "allocating the RPHAST output");
    gather_targets<<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->r_nt, k, d->r_tgt, d->dist,
                                                             d->outbuf);
    CKL("RPHAST output");
    CK(cudaEventRecord(d->ev1, s), "RPHAST");
    CK(cudaMemcpyAsync(out, d->outbuf, cells * 8, cudaMemcpyDeviceToHost, s), "RPHAST output");
    CK(cudaStreamSynchronize(s), "RPHAST");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "RPHAST");
out:
    return rc;
}
