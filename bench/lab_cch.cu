/* lab_cch.cu - the CCH kernel lab: validates GPU customization, PHAST and RPHAST against the CPU
 * (engine/cch.c, itself held to Dijkstra by tests/test_cch.c), then times every query type beside
 * today's engines in the same run (bench/gpu-cch.sh writes bench/results/DATE-GPU-gpu-cch.md).
 *
 *   lab_cch [--data DIR] [--graphs SPEC,..] [--reps N] [--queries N] [--plot FILE] [--small]
 *           [--fast] [--plans BASExRATIOxBINCAP,..] [--order nd|metis|cuts|flow] [--compare-metis]
 *           [--p2p-checks N] [--nf-table-max K] [--phast-only] [--variants KEY,..]
 *           [--profile-plans] [--profile-custom] [--turns] [--custom-only]
 *           [--custom-shapes TINY:HEAVY[:CHUNK[:MIN[:LAUNCH]]],..] [--custom-layout]
 *           [--order-file FILE]
 *
 * The kernels are the product's (kernels/cch*.cu); the lab shapes them through
 * kernels/cch_lab.h (gp_dcch_tune: the plan's thresholds and table caps, the sweep's paths,
 * sources per warp, the saturation point, the per-phase profile), which the service never
 * includes.
 *
 *   --small   two generated graphs (road-like and grid, 2,000 nodes), and the road-like one again
 *             with 2 KiB of shared memory per plan bin (gp_dcch_tune.smem_max: bins that do not fit)
 *             and a many-phase plan (4x4x64): every GPU operation once, checked; exit status 1 on
 *             a mismatch (for compute-sanitizer memcheck / racecheck)
 *   --fast    no near-far runs and no timed Dijkstra (Dijkstra still checks PHAST on 2 sources)
 *   --phast-only  no p2p queries and no tables (customization and one-to-all only)
 *   --custom-layout  the customization's levels also with the edges numbered by the
 *             elimination tree's postorder, timed beside the service's numbering (a simplified
 *             pass, custom_layout below)
 *   --custom-only  customization alone, one CPU pass (what fits road-like 24M's turn graph in
 *             128 GiB: no PHAST, p2p or tables)
 *   --order-file FILE  the CCH order of the (one) graph read from FILE when it holds one for
 *             this graph (gp_cch_order_decode: no order computed, the contraction still runs),
 *             else computed as --order says and written there (gp_cch_order_encode): a second
 *             lab on the same machine, e.g. another build for an A/B, skips road-like 24M's
 *             ten-minute order
 *   --variants  time only these of the sweep variants (step 4 below), by key: nogather,
 *             noflat, nowmulti, before, wkw2, w64, allcells, nograph, nowarps, block (default:
 *             all; unknown keys match none)
 *   --plans   PHAST also through these plans (engine/cch_plan.h thresholds base, base*ratio, ...;
 *             nodes per bin), each checked against the CPU
 *   --profile-plans  with --plans: each plan's per-phase device times on stderr
 *   --profile-custom  every GPU customization's launches timed one by one, on stderr (by kind,
 *             by edges per launch, the slowest; gp_dcch_tune.custom_profile)
 *   --custom-shapes  after the service's customization, the same pass again with other edge
 *             classes (gp_dcch_tune tiny_tri: edges of fewer triangles a thread each, 0 none;
 *             heavy_tri: edges of more a block each, 0 none; CHUNK, MIN: custom_chunk, a level
 *             of MIN edges or more cut into chunks of CHUNK edges a block each, 0 none; LAUNCH:
 *             1 programmatic dependent level launches (custom_pdl), 0 plain ones; the
 *             service's where left out), each checked bit for bit against the CPU and timed
 *             (--reps); a shape of other classes builds a topology part of
 *             its own beside the shared one (road-like 24M's turn graph: one such shape fits
 *             the H200)
 *   --turns   each graph replaced by its car turn graph (graph/turns.h: node = road arc, arc =
 *             allowed turn weighted turn cost + next arc; needs coordinates and times, e.g. gen:N
 *             or an OSM file): what turn costs cost the CCH (sizes, times, GPU customization)
 *   --order   the CCH order (engine/cch_order.c): nd, the parallel nested dissection on all CPUs
 *             (default), or metis, one METIS_NodeND call, or (with --turns) cuts, the turn
 *             graph's order from the road graph's edge cuts (gp_cch_order_turns; its time is
 *             printed in the order's description, the contraction's in the order's column), or
 *             flow, nd with Inertial Flow parts on a turn graph (the service's cch_order = flow)
 *   --compare-metis  with --order nd: also the single METIS_NodeND call on each graph, its time
 *             and its contraction's size beside the parallel order's (not for 24M nodes: minutes)
 *   --p2p-checks N  p2p queries checked against (and timed beside) the CPU backend's AUTO
 *             (default 20; each costs a Dijkstra-family search over the graph)
 *   --nf-table-max K  the near-far table baseline only for tables of at most K x K (a 1000 x 1000
 *             near-far table on 24M nodes takes a thousand one-to-all searches)
 *   GPATH_LOG_LEVEL=debug  the order's and the contraction's phase times on stderr
 *   default   graphs DIR/dimacs/USA-road-d.NY.gr.gz and BAY, the road-like generator at
 *             gen:1000000 and gen:4000000, the grid-like one at grid:10000, grid:30000,
 *             grid:100000 (--graphs replaces the list: any gp_graph_load spec). The size guard
 *             (cch_max_triangles_per_node) is lifted so grids are measured too. Per graph:
 *             1. order and contraction seconds, CCH edges, triangles, levels, MiB;
 *             2. customization: CPU (all threads) and GPU (device ms and end-to-end, checked
 *                bit-identical), and after changing 1% of the arc costs (GPU checked again);
 *                the GPU pass the other way too (its level launches replayed as a CUDA graph,
 *                the service's way, or launched one by one; checked again; not with
 *                --profile-custom, which times the launches one by one);
 *             3. p2p: CCH query with path unpacking (CPU, median / p90 of --queries pairs, the
 *                first 20 checked against Dijkstra) vs the CPU backend's AUTO (A* / bidir);
 *             4. one-to-all: GPU PHAST 1 source and 16 sources per sweep (device ms, end-to-end)
 *                through the service's sweep (the plan with its top table and piece tables,
 *                warp bins for one source, the launches as a CUDA graph) and, on the same
 *                sources, the plan with its top table only (no piece tables), the plan without
 *                tables and the level sweep (the ratios; each variant checked against CPU PHAST
 *                on its own: a failing one prints FAIL, the others are still timed, exit status
 *                1), the service's sweep without one of its paths (--variants; each checked the
 *                same way), the plan's per-phase device times (stderr, gp_dcch_tune.profile:
 *                per phase its path, bins, largest bin, shared memory, blocks per SM, GB/s),
 *                CPU PHAST,
 *                vs near-far GPU SSSP (device ms) and CPU Dijkstra; every GPU tree checked;
 *             5. tables 100x100 and 1000x1000: GPU RPHAST, CPU buckets vs near-far GPU tables
 *                (and the CPU backend's Dijkstra table at 100x100); checked.
 *             --plot FILE: one line per graph: name n dijkstra_ms nearfar_ms cch_p2p_us phast_ms.
 *
 * Versions of the GPU CCH (kernels/cch*.cu; H100 80GB HBM3, this lab, device ms, medians; BAY /
 * NY). The product keeps v11's sweep with v7a's graph; the others stay here with their numbers
 * (the losers' code left the product in the issue-28 redesign, 2026-11-28: chains and
 * CHAINS_FIRST (v7b), 8 / 16 sources per warp (v10), 7 / 12 / 14 blocks per SM and the L2
 * prefetch (v11), and the "off" switches of the output order (v10a), the passes (v11a) and the
 * bin order (v11b), which are now always on; names below are the flags and options of their
 * time):
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
 *   v11 (the product; -27-...-gpu-cch-v11-passes.md at 37c6d47, -v11.md at 33a2cda, the
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
 *   v11 after the redesign (the same sweep in kernels/cch_sweep.cu, the losers and the switches
 *       gone; -28-...-gpu-cch-redesign.md, before / after in one run): one source NY 0.085 ->
 *       0.079, BAY 0.090 -> 0.095, gen:1M 0.174 -> 0.168, gen:24M 0.846 -> 0.828 ms; 16 per
 *       sweep 0.016 / 0.030 / 0.033 / 0.294 ms per tree in both.
 * Run (the figures above; the results files name each run's command): make all, then
 *   build/bench/lab_cch --fast --phast-only --reps 5 --graphs DATA/dimacs/USA-road-d.NY.gr.gz,
 *   DATA/dimacs/USA-road-d.BAY.gr.gz,gen:1000000,gen:24000000 (bench/gpu-cch.sh: GPU_CCH_ARGS).
 */
#include "engine/backend.h"
#include "engine/cch.h"
#include "bench/lab_common.h"
#include "engine/engine_lab.h"
#include "graph/turns.h"
#include "kernels/cch_lab.h"
#include "kernels/sssp.h"
#include "storage/source.h"

#include <cuda_runtime.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

struct lab {
    gp_backend *cpu = NULL, *cpu1 = NULL;
    gp_sssp_ws *ws = NULL;
    int reps = 7, queries = 1000, p2p_checks = 20;
    uint32_t nf_table_max = UINT32_MAX; /* --nf-table-max: near-far tables up to this size only */
    bool fast = false;                  /* --fast: no near-far runs, no timed Dijkstra */
    bool metis = false;                 /* --order metis */
    bool flow = false;                  /* --order flow */
    bool cuts = false; /* --order cuts: with --turns, the road graph's cuts (gp_cch_order_turns) */
    const char *order_file = NULL; /* --order-file */
    double cuts_order_s = 0;
    bool compare = false;                     /* --compare-metis */
    bool phast_only = false;                  /* --phast-only: no p2p, no tables */
    bool custom_only = false;                 /* --custom-only: customization only */
    std::vector<std::string> variants;        /* --variants: the sweep variants to time */
    std::vector<std::vector<uint32_t>> plans; /* --plans: base x ratio x bin cap */
    bool profile_plans = false;               /* --profile-plans */
    bool profile_custom = false;              /* --profile-custom */
    bool turns = false;                       /* --turns: the car turn graph of each graph */
    /* --custom-shapes: tiny_tri, heavy_tri, custom_chunk, chunk_min, custom_pdl (the last three
     * the service's where not given: ~0u) */
    std::vector<std::array<uint32_t, 5>> shapes;
    bool custom_layout = false; /* --custom-layout */
    /* the service's sweep (--small: warp bins and gathers in phases of any size; smem: 2 KiB) */
    gp_dcch_tune svc;
    FILE *plot = NULL;
};

/* The customization profile (--profile-custom; the kernels hand each launch's levels and time to
 * gp_dcch_tune.custom_profile), on stderr: by kind, by edges per launch (powers of 10), the ten
 * slowest launches, each with its edges by class (kernels/cch.cu edge_class) and triangles, all
 * read from the host CCH (prof_topo) with the process-wide thresholds (prof_tune). */
static const gp_cch_topo *prof_topo;
static gp_dcch_tune prof_tune;

static void custom_profile(void *arg, const gp_dcch_launch *pl, uint32_t np, float tail) {
    (void)arg;
    const gp_cch_topo *t = prof_topo;
    if (!t) return;
    auto edge = [t](uint32_t l) -> uint64_t { return t->up_first[t->level_first[l]]; };
    auto tris = [t, &edge](uint32_t l0, uint32_t l1) -> uint64_t {
        return t->tri_first[edge(l1)] - t->tri_first[edge(l0)];
    };
    float all = 0;
    for (uint32_t i = 0; i < np; i++) all += pl[i].ms;
    fprintf(stderr,
            "custom profile: %u levels, %llu edges, %llu triangles in %u launches: %.2f ms, then "
            "the plan's weights %.2f ms\n",
            t->nlevels, (unsigned long long)edge(t->nlevels),
            (unsigned long long)tris(0, t->nlevels), np, all, tail);
    const char *kind[2] = {"small levels in one block", "a level alone"};
    for (int k = 1; k >= 0; k--) {
        uint32_t n = 0, lv = 0;
        uint64_t e = 0, tr = 0;
        float x = 0;
        for (uint32_t i = 0; i < np; i++)
            if (pl[i].alone == k) {
                n++, lv += pl[i].l1 - pl[i].l0, x += pl[i].ms, tr += tris(pl[i].l0, pl[i].l1);
                e += edge(pl[i].l1) - edge(pl[i].l0);
            }
        fprintf(stderr, "  %s: %u launches, %u levels, %llu edges, %llu triangles, %.2f ms\n",
                kind[k], n, lv, (unsigned long long)e, (unsigned long long)tr, x);
    }
    for (uint64_t lo = 1; lo <= 100000000ull; lo *= 10) { /* by edges per launch */
        uint32_t n = 0;
        uint64_t e = 0, tr = 0;
        float x = 0;
        for (uint32_t i = 0; i < np; i++) {
            uint64_t ei = edge(pl[i].l1) - edge(pl[i].l0);
            if (ei >= lo && (ei < lo * 10 || lo == 100000000ull))
                n++, e += ei, tr += tris(pl[i].l0, pl[i].l1), x += pl[i].ms;
        }
        if (n)
            fprintf(stderr,
                    "  launches of %llu+ edges: %u, %llu edges, %llu triangles, %.2f ms (%.3f us "
                    "a launch)\n",
                    (unsigned long long)lo, n, (unsigned long long)e, (unsigned long long)tr, x,
                    1e3 * x / n);
    }
    std::vector<uint32_t> ord(np);
    for (uint32_t i = 0; i < np; i++) ord[i] = i;
    std::stable_sort(ord.begin(), ord.end(),
                     [pl](uint32_t a, uint32_t b) { return pl[a].ms > pl[b].ms; });
    for (uint32_t r = 0; r < 10 && r < np; r++) { /* the slowest */
        const gp_dcch_launch &L = pl[ord[r]];
        uint64_t cls[4] = {0, 0, 0, 0}; /* a thread, SHORT_W lanes, a warp, a block */
        for (uint64_t e = edge(L.l0); e < edge(L.l1); e++) {
            uint64_t nt = t->tri_first[e + 1] - t->tri_first[e];
            cls[gp_dcch_edge_class(nt, &prof_tune)]++; /* the service's own rule */
        }
        fprintf(stderr,
                "  slow: levels [%u, %u) %s, %llu edges (%llu tiny, %llu short, %llu long, %llu "
                "heavy), %llu triangles, %.3f ms\n",
                L.l0, L.l1, L.alone ? "alone" : "in one block",
                (unsigned long long)(edge(L.l1) - edge(L.l0)), (unsigned long long)cls[0],
                (unsigned long long)cls[1], (unsigned long long)cls[2], (unsigned long long)cls[3],
                (unsigned long long)tris(L.l0, L.l1), L.ms);
    }
}

/* GPU customization equals the CPU's (c holds the CPU result on entry). */
static void check_gpu_custom(gp_cch *c, const char *what) {
    gp_err err;
    gp_err_clear(&err);
    size_t m = c->topo->m;
    std::vector<uint32_t> fw(c->fw, c->fw + m), bw(c->bw, c->bw + m), fm(c->fmid, c->fmid + m),
        bm(c->bmid, c->bmid + m);
    if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
    CHECK(memcmp(fw.data(), c->fw, m * 4) == 0 && memcmp(bw.data(), c->bw, m * 4) == 0 &&
              memcmp(fm.data(), c->fmid, m * 4) == 0 && memcmp(bm.data(), c->bmid, m * 4) == 0,
          "%s: GPU customization (weights, witnesses) differs from the CPU's", what);
}

/* reps GPU customizations of c's metric: their device times (ms). */
static std::vector<double> gpu_custom_times(gp_cch *c, int reps) {
    gp_err err;
    gp_err_clear(&err);
    std::vector<double> v;
    for (int r = 0; r < reps; r++) {
        if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
        v.push_back(gp_cch_gpu_last_ms(c));
    }
    return v;
}

/* --custom-layout: the customization's memory layout as a lab experiment (issue 35). The
 * service numbers the CCH edges level by level (each rank's row in (level, rank) order), so the
 * two lower edges a triangle reads, {v,x} and {v,y}, lie in v's row but the rows of one
 * elimination subtree are spread over every level. Here the same levels run with the edges
 * numbered by a postorder of the elimination tree instead (a subtree's rows together), the
 * levels' edges then taken through lists. A simplified pass times both layouts alike: a thread per
 * edge of at most 16 triangles, a warp per edge of more, weights only (no witnesses), checked
 * against the CPU's weights; device time per level summed by the level's edges. The postorder
 * lost (H200, gen:4M's turn graph 22.16 against 21.34 ms, its levels of a million edges 3.56
 * against 2.83: bench/results/2026-12-02-NVIDIA-H200-cch-layout.md). */
/* Triangles k, k + step, ... below k1 into the minima f (up) and b (down), as the service's
 * relax_pair (kernels/cch_customize.cu) without its witnesses. */
static __device__ __forceinline__ void lay_scan(uint64_t k, uint64_t k1, uint32_t step,
                                                const uint2 *__restrict__ tri, const uint2 *fb,
                                                uint32_t &f, uint32_t &b) {
    for (; k < k1; k += step) {
        const uint2 t = tri[k];
        const uint2 w1 = fb[t.x], w2 = fb[t.y];
        if (w1.y != GP_CCH_INF && w2.x != GP_CCH_INF && (uint64_t)w1.y + w2.x < GP_CCH_INF)
            f = min(f, w1.y + w2.x);
        if (w2.y != GP_CCH_INF && w1.x != GP_CCH_INF && (uint64_t)w2.y + w1.x < GP_CCH_INF)
            b = min(b, w2.y + w1.x);
    }
}

static __global__ void lay_thread(const uint32_t *__restrict__ list, uint32_t cnt,
                                  const uint64_t *__restrict__ tf, const uint2 *__restrict__ tri,
                                  const uint2 *__restrict__ ofb, uint2 *fb) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cnt) return;
    const uint32_t e = list[i];
    uint32_t f = GP_CCH_INF, b = GP_CCH_INF;
    lay_scan(tf[e], tf[e + 1], 1, tri, fb, f, b);
    const uint2 o = ofb[e];
    fb[e] = make_uint2(min(f, o.x), min(b, o.y));
}

static __global__ void lay_warp(const uint32_t *__restrict__ list, uint32_t cnt,
                                const uint64_t *__restrict__ tf, const uint2 *__restrict__ tri,
                                const uint2 *__restrict__ ofb, uint2 *fb) {
    const uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (w >= cnt) return;
    const uint32_t e = list[w];
    uint32_t f = GP_CCH_INF, b = GP_CCH_INF;
    lay_scan(tf[e] + lane, tf[e + 1], 32, tri, fb, f, b);
    f = __reduce_min_sync(0xffffffffu, f);
    b = __reduce_min_sync(0xffffffffu, b);
    if (lane == 0) {
        const uint2 o = ofb[e];
        fb[e] = make_uint2(min(f, o.x), min(b, o.y));
    }
}

#define LCK(x)                                                                                     \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "custom-layout: %s: %s\n", #x, cudaGetErrorString(e_));                \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

template <typename T> static T *lay_put(const std::vector<T> &v) {
    T *d = NULL;
    LCK(cudaMalloc(&d, v.size() * sizeof(T) + 8));
    LCK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* --order-file: g's CCH order from path into the topology cache (gp_cch_order_decode builds the
 * topology there, so gp_cch_new only customizes); false when path holds none or another graph's
 * (then the order is computed and written). */
static bool order_file_read(const char *path, const gp_graph *g) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    std::vector<char> buf;
    char tmp[1 << 16];
    size_t got;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0) buf.insert(buf.end(), tmp, tmp + got);
    fclose(f);
    gp_err err = {};
    if (gp_cch_order_decode(g, buf.data(), buf.size(), &err)) {
        printf("(--order-file %s: %s; the order is computed again)\n", path, err.msg);
        return false;
    }
    return true;
}

/* --order-file: t's order (its ranks) into path, through a temporary name. */
static void order_file_write(const char *path, const gp_graph *g, const gp_cch_topo *t) {
    void *enc = NULL;
    uint64_t esz = 0;
    gp_err err = {};
    if (gp_cch_order_encode(t->rank, g, &enc, &esz, &err)) die("--order-file", err);
    std::string tmp = std::string(path) + ".part";
    FILE *f = fopen(tmp.c_str(), "wb");
    bool ok = f && fwrite(enc, 1, esz, f) == esz;
    if (f && fclose(f)) ok = false;
    free(enc);
    if (!ok || rename(tmp.c_str(), path)) {
        fprintf(stderr, "lab_cch: cannot write the order to %s\n", path);
        exit(1);
    }
}

static void custom_layout(const gp_cch *c, int reps) {
    const gp_cch_topo *t = c->topo;
    const uint32_t n = t->n, m = t->m, L = t->nlevels;
    double t0 = gp_now();
    /* the elimination tree's postorder (children after their CSR, iteratively) */
    std::vector<uint32_t> cf(n + 1, 0), ch(n), post(n), stk, it(n);
    for (uint32_t v = 0; v < n; v++)
        if (t->parent[v] != GP_NONE) cf[t->parent[v] + 1]++;
    for (uint32_t v = 0; v < n; v++) cf[v + 1] += cf[v];
    {
        std::vector<uint32_t> at(cf.begin(), cf.end() - 1);
        for (uint32_t v = 0; v < n; v++)
            if (t->parent[v] != GP_NONE) ch[at[t->parent[v]]++] = v;
    }
    uint32_t np = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (t->parent[r] != GP_NONE) continue;
        stk.push_back(r);
        it[r] = cf[r];
        while (!stk.empty()) {
            const uint32_t v = stk.back();
            if (it[v] < cf[v + 1]) {
                const uint32_t u = ch[it[v]++];
                it[u] = cf[u];
                stk.push_back(u);
            } else {
                post[v] = np++;
                stk.pop_back();
            }
        }
    }
    if (np != n) {
        fprintf(stderr, "custom-layout: the elimination tree's postorder missed nodes\n");
        exit(1);
    }
    std::vector<uint32_t> byp(n), nf(n + 1, 0), ne(m);
    for (uint32_t v = 0; v < n; v++) byp[post[v]] = v;
    for (uint32_t p = 0; p < n; p++)
        nf[p + 1] = nf[p] + (t->up_first[byp[p] + 1] - t->up_first[byp[p]]);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t e = t->up_first[v]; e < t->up_first[v + 1]; e++)
            ne[e] = nf[post[v]] + (e - t->up_first[v]);
    /* both layouts' arrays */
    std::vector<uint64_t> tf1(m + 1), tf2(m + 1, 0);
    std::vector<uint2> tri1(t->ntri), tri2(t->ntri), ofb1(m), ofb2(m);
    for (uint32_t e = 0; e <= m; e++) tf1[e] = t->tri_first[e];
    for (uint64_t k = 0; k < t->ntri; k++) tri1[k] = make_uint2(t->tri[2 * k], t->tri[2 * k + 1]);
    for (uint32_t e = 0; e < m; e++) tf2[ne[e] + 1] = t->tri_first[e + 1] - t->tri_first[e];
    for (uint32_t e = 0; e < m; e++) tf2[e + 1] += tf2[e];
    for (uint32_t e = 0; e < m; e++) {
        ofb1[e] = make_uint2(c->ofw[e], c->obw[e]);
        ofb2[ne[e]] = ofb1[e];
        uint64_t k2 = tf2[ne[e]];
        for (uint64_t k = t->tri_first[e]; k < t->tri_first[e + 1]; k++, k2++)
            tri2[k2] = make_uint2(ne[t->tri[2 * k]], ne[t->tri[2 * k + 1]]);
    }
    /* per level and layout, its thread edges then its warp edges (the new ids ascending) */
    std::vector<uint32_t> list1, list2, lf(2 * (size_t)L + 1, 0);
    std::vector<uint32_t> l2;
    for (uint32_t l = 0; l < L; l++) {
        const uint32_t lo = t->up_first[t->level_first[l]], hi = t->up_first[t->level_first[l + 1]];
        for (int w = 0; w < 2; w++) {
            l2.clear();
            for (uint32_t e = lo; e < hi; e++) {
                if ((t->tri_first[e + 1] - t->tri_first[e] > 16) != (w == 1)) continue;
                list1.push_back(e);
                l2.push_back(ne[e]);
            }
            std::sort(l2.begin(), l2.end());
            list2.insert(list2.end(), l2.begin(), l2.end());
            lf[2 * l + w + 1] = (uint32_t)list1.size();
        }
    }
    printf("- custom-layout: postorder and both layouts built on the host in %.1f s\n",
           gp_now() - t0);
    fflush(stdout);
    const char *names[2] = {"levels (the service's numbering)", "elimination-tree postorder"};
    for (int lay = 0; lay < 2; lay++) {
        uint64_t *dtf = lay_put(lay ? tf2 : tf1);
        uint2 *dtri = lay_put(lay ? tri2 : tri1), *dofb = lay_put(lay ? ofb2 : ofb1);
        uint32_t *dl = lay_put(lay ? list2 : list1);
        uint2 *dfb = NULL;
        LCK(cudaMalloc(&dfb, (size_t)m * 8));
        std::vector<cudaEvent_t> ev(L + 1);
        for (auto &x : ev) LCK(cudaEventCreate(&x));
        std::vector<double> tot, big, mid, small;
        for (int r = 0; r < reps; r++) {
            LCK(cudaEventRecord(ev[0]));
            for (uint32_t l = 0; l < L; l++) {
                const uint32_t a = lf[2 * l], b = lf[2 * l + 1], z = lf[2 * l + 2];
                if (b > a)
                    lay_thread<<<(b - a + 255) / 256, 256>>>(dl + a, b - a, dtf, dtri, dofb, dfb);
                if (z > b)
                    lay_warp<<<(unsigned)(((uint64_t)(z - b) * 32 + 255) / 256), 256>>>(
                        dl + b, z - b, dtf, dtri, dofb, dfb);
                LCK(cudaEventRecord(ev[l + 1]));
            }
            LCK(cudaEventSynchronize(ev[L]));
            LCK(cudaGetLastError());
            double s[4] = {0, 0, 0, 0};
            for (uint32_t l = 0; l < L; l++) {
                float ms = 0;
                LCK(cudaEventElapsedTime(&ms, ev[l], ev[l + 1]));
                const uint32_t ed = lf[2 * l + 2] - lf[2 * l];
                s[0] += ms;
                s[ed >= 1000000 ? 1 : ed >= 100000 ? 2 : 3] += ms;
            }
            tot.push_back(s[0]), big.push_back(s[1]), mid.push_back(s[2]), small.push_back(s[3]);
        }
        std::vector<uint2> out(m);
        LCK(cudaMemcpy(out.data(), dfb, (size_t)m * 8, cudaMemcpyDeviceToHost));
        uint64_t bad = 0;
        for (uint32_t e = 0; e < m; e++) {
            const uint2 o = out[lay ? ne[e] : e];
            bad += o.x != c->fw[e] || o.y != c->bw[e];
        }
        printf("- custom-layout, %s: %.2f ms device (median of %d), levels of >= 1 M edges %.2f, "
               "100 k - 1 M %.2f, fewer %.2f; weights %s the CPU's (%llu differ)\n",
               names[lay], median(tot), reps, median(big), median(mid), median(small),
               bad ? "DIFFER from" : "equal to", (unsigned long long)bad);
        fflush(stdout);
        CHECK(bad == 0, "custom-layout: %s: weights differ from the CPU's", names[lay]);
        for (auto &x : ev) cudaEventDestroy(x);
        cudaFree(dtf), cudaFree(dtri), cudaFree(dofb), cudaFree(dl), cudaFree(dfb);
    }
}

static void run_graph(lab &L, const char *spec, bool small) {
    gp_err err;
    gp_err_clear(&err);
    double t0 = gp_now();
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) die(spec, err);
    double load_s = gp_now() - t0;
    gp_turns *tt = NULL; /* --turns: kept until the end (the turn graph's cch_xy is its xy) */
    if (L.turns) { /* the turn graph (graph/turns.h, car costs) takes the road graph's place */
        tt = gp_turns_build(g, gp_turn_costs_find("car"), &err);
        if (!tt || (L.flow && gp_turns_add_xy(tt, g, &err))) die("turn graph", err);
        printf("\n%s: road graph %u nodes, %u arcs -> car turn graph %u nodes, %u arcs (%llu "
               "U-turns at dead ends) in %.2f s\n",
               spec, g->n, g->m, tt->tg->n, tt->tg->m, (unsigned long long)tt->u_turns,
               tt->build_s);
        gp_graph *tg = gp_graph_ref(tt->tg);
        if (L.cuts) { /* the order from the road graph's cuts, into the cache gp_cch_new reads */
            std::vector<uint32_t> rank(tg->n);
            void *enc = NULL;
            uint64_t esz = 0;
            gp_cch_cache_clear();
            double o0 = gp_now();
            if (gp_cch_order_turns(g, tg, 0, rank.data(), &err)) die("cuts order", err);
            L.cuts_order_s = gp_now() - o0;
            if (gp_cch_order_encode(rank.data(), tg, &enc, &esz, &err) ||
                gp_cch_order_decode(tg, enc, esz, &err))
                die("cuts order", err);
            free(enc);
        }
        gp_graph_unref(g);
        g = tg;
    }
    gp_dgraph *dgr = NULL; /* near-far baseline */
    if (gp_dgraph_new(g, &dgr, &err)) die("graph upload", err);
    const char *name = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
    uint32_t n = g->n;
    printf("\n## %s: %u nodes, %u arcs (loaded in %.1f s)\n\n", name, n, g->m, load_s);
    fflush(stdout);
    if (!L.cuts) gp_cch_cache_clear(); /* --order cuts: the topology is in the cache already */
    bool order_read = false;           /* --order-file held this graph's order: into the cache */
    t0 = gp_now();
    if (L.order_file && !L.cuts) order_read = order_file_read(L.order_file, g);
    gp_cch *c = NULL;
    if (gp_cch_new(g, 0, &c, &err)) die("cch", err);
    double build_s = gp_now() - t0;
    const gp_cch_topo *t = c->topo;
    prof_topo = t; /* --profile-custom reads it */
    if (L.order_file && !L.cuts && !order_read) order_file_write(L.order_file, g, t);
    char how[160];
    if (order_read) snprintf(how, sizeof how, "read from %s, contraction inside", L.order_file);
    else if (L.cuts)
        snprintf(how, sizeof how, "road graph's cuts, %.2f s, contraction inside", L.cuts_order_s);
    else if (L.metis) snprintf(how, sizeof how, "one METIS_NodeND call");
    else
        snprintf(how, sizeof how, "parallel nested dissection%s, %d threads",
                 L.flow && g->cch_xy ? " with Inertial Flow parts" : "", gp_cch_threads(0));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("- preprocessing: order (%s) %.2f s, contraction %.2f s, first customization "
           "%.3f s, total %.2f s; %u CCH edges (%.2f per node), %llu triangles (%llu before the "
           "directed pruning), %u levels, widest "
           "up-degree %u; CCH memory %.1f MiB (graph %.1f MiB); process peak RSS so far %.0f MiB\n",
           how, t->order_s, t->contract_s, c->custom_s, build_s, t->m, (double)t->m / n,
           (unsigned long long)t->ntri, (unsigned long long)t->ntri_all, t->nlevels, t->width,
           gp_cch_bytes(c) / 1048576.0, gp_graph_memory(g) / 1048576.0, ru.ru_maxrss / 1024.0);
    if (L.compare && !L.metis) { /* the single call on the same graph */
        std::vector<uint32_t> rank(n);
        gp_cch_topo *ts = NULL;
        double a = gp_now();
        if (gp_cch_order_metis(g, rank.data(), &err)) die("metis order", err);
        double ord = gp_now() - a;
        a = gp_now();
        if (gp_cch_topo_build(g, rank.data(), &ts, &err)) die("contraction", err);
        printf("- the single METIS_NodeND call: order %.2f s (parallel %.1fx faster), contraction "
               "%.2f s; %u CCH edges, %llu triangles, %u levels, widest up-degree %u (parallel / "
               "single: edges %.3f, triangles %.3f, levels %.2f)\n",
               ord, ord / t->order_s, gp_now() - a, ts->m, (unsigned long long)ts->ntri,
               ts->nlevels, ts->width, (double)t->m / ts->m, (double)t->ntri / (double)ts->ntri,
               (double)t->nlevels / ts->nlevels);
        gp_cch_topo_unref(ts);
    }
    fflush(stdout);
    /* customization */
    std::vector<double> cc, cg, cge;
    int reps = small ? 1 : L.reps;
    for (int r = 0; r < (L.custom_only ? 1 : reps); r++) {
        if (gp_cch_customize(c, 0, &err)) die("customize", err);
        cc.push_back(c->custom_s * 1e3);
    }
    check_gpu_custom(c, name);
    for (int r = 0; r < reps; r++) {
        if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
        cg.push_back(gp_cch_gpu_last_ms(c));
        cge.push_back(c->custom_s * 1e3);
    }
    /* 1% of the arcs' costs change */
    std::vector<uint32_t> ofw(c->ofw, c->ofw + t->m), obw(c->obw, c->obw + t->m);
    uint32_t changed = 0;
    for (uint32_t e = 0; e < t->m; e++) {
        if (c->ofw[e] != GP_CCH_INF && rnd() % 100 == 0)
            c->ofw[e] = c->ofw[e] / 2 * 3 + 1, changed++;
        if (c->obw[e] != GP_CCH_INF && rnd() % 100 == 0)
            c->obw[e] = c->obw[e] / 2 * 3 + 1, changed++;
    }
    t0 = gp_now();
    if (gp_cch_customize(c, 0, &err)) die("customize 1%", err);
    double cpu1 = (gp_now() - t0) * 1e3;
    check_gpu_custom(c, "after 1% changes");
    double gpu1 = gp_cch_gpu_last_ms(c), gpu1e = c->custom_s * 1e3;
    memcpy(c->ofw, ofw.data(), (size_t)t->m * 4);
    memcpy(c->obw, obw.data(), (size_t)t->m * 4);
    if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
    printf(
        "- customization: CPU (all threads) %.1f ms; GPU %.2f ms device, %.1f ms end-to-end "
        "(metric upload + copy back); after changing %u arc costs (1%%): CPU %.1f ms, GPU %.2f ms "
        "device / %.1f ms end-to-end; GPU == CPU bit for bit\n",
        median(cc), median(cg), median(cge), changed, cpu1, gpu1, gpu1e);
    fflush(stdout);
    if (L.custom_layout) custom_layout(c, reps < 3 ? 3 : reps);
    if (!L.svc.custom_profile) { /* the level launches replayed as a CUDA graph, or not */
        gp_dcch_tune tn = L.svc;
        tn.custom_graph = !L.svc.custom_graph;
        if (gp_cch_gpu_sweep(c, &tn, &err)) die("retune", err);
        if (gp_cch_customize(c, 0, &err)) die("customize", err);
        check_gpu_custom(c, tn.custom_graph ? "customization as a CUDA graph"
                                            : "customization launch by launch");
        std::vector<double> cv = gpu_custom_times(c, reps);
        if (gp_cch_gpu_sweep(c, &L.svc, &err)) die("retune", err);
        std::vector<double> cs = gpu_custom_times(c, reps);
        printf("- customization %s: GPU %.2f ms device (median of %d; the service's, %s: %.2f ms "
               "before and %.2f after); GPU == CPU bit for bit\n",
               tn.custom_graph ? "as a CUDA graph" : "launch by launch", median(cv), reps,
               L.svc.custom_graph ? "a CUDA graph" : "launch by launch", median(cg), median(cs));
        fflush(stdout);
    }
    for (auto &sh : L.shapes) { /* --custom-shapes: the same pass with other edge classes */
        gp_dcch_tune tn = L.svc;
        tn.tiny_tri = sh[0], tn.heavy_tri = sh[1];
        if (sh[2] != ~0u) tn.custom_chunk = sh[2];
        if (sh[3] != ~0u) tn.chunk_min = sh[3];
        if (sh[4] != ~0u) tn.custom_pdl = (int)sh[4];
        prof_tune = tn;
        if (gp_cch_gpu_sweep(c, &tn, &err)) die("customization shape", err);
        if (gp_cch_customize(c, 0, &err)) die("customize", err);
        char what[128];
        snprintf(what, sizeof what, "%s, tiny_tri %u heavy_tri %u chunk %u from %u pdl %d", name,
                 tn.tiny_tri, tn.heavy_tri, tn.custom_chunk, tn.chunk_min, tn.custom_pdl);
        check_gpu_custom(c, what);
        std::vector<double> cs = gpu_custom_times(c, reps);
        printf(
            "- customization with tiny_tri %u, heavy_tri %u, chunks of %u from %u edges, pdl %d: "
            "GPU %.2f ms device (service's %u, %u, %u, %u, %d: %.2f ms); GPU == CPU bit for "
            "bit\n",
            tn.tiny_tri, tn.heavy_tri, tn.custom_chunk, tn.chunk_min, tn.custom_pdl, median(cs),
            L.svc.tiny_tri, L.svc.heavy_tri, L.svc.custom_chunk, L.svc.chunk_min, L.svc.custom_pdl,
            median(cg));
        fflush(stdout);
    }
    /* back to the service's (not with --custom-only: nothing follows, and road-like 24M's turn
     * graph has no room for a third topology part while the shape's is bound) */
    if (!L.shapes.empty() && !L.custom_only) {
        prof_tune = L.svc;
        if (gp_cch_gpu_sweep(c, &L.svc, &err)) die("customization shape", err);
    }
    if (L.custom_only) { /* --custom-only: nothing else (road-like 24M's turn graph in 128 GiB) */
        gp_cch_free(c);
        gp_dgraph_free(dgr);
        gp_graph_unref(g);
        gp_turns_free(tt);
        return;
    }

    /* p2p: timed after a warm-up over as many other random pairs (untimed), as in a service that
     * answers routes one after another; the customization and the checks before it left the
     * caches cold */
    int nq = small ? 50 : L.queries;
    auto warm_up = [&](const char *what) {
        for (int q = 0; q < nq; q++) {
            gp_path p;
            if (gp_cch_p2p(c, (uint32_t)(rnd() % n), (uint32_t)(rnd() % n), &p, &err))
                die(what, err);
            gp_path_free(&p);
        }
    };
    std::vector<double> qp, qb;
    if (L.phast_only) nq = 0; /* --phast-only: no p2p */
    else warm_up("p2p warm-up");
    std::vector<uint32_t> qs(nq), qt(nq);
    std::vector<uint64_t> qd(nq);
    for (int q = 0; q < nq; q++) {
        uint32_t s = (uint32_t)(rnd() % n), tt = (uint32_t)(rnd() % n);
        gp_path p;
        double a = gp_now();
        if (gp_cch_p2p(c, s, tt, &p, &err)) die("p2p", err);
        qp.push_back((gp_now() - a) * 1e6);
        qs[q] = s;
        qt[q] = tt;
        qd[q] = p.dist;
        if (q < (small ? 50 : L.p2p_checks)) {
            gp_path p2;
            a = gp_now();
            if (L.cpu->ops->p2p(L.cpu, g, s, tt, GP_P2P_AUTO, &p2, &err)) die("p2p ref", err);
            qb.push_back((gp_now() - a) * 1e6);
            CHECK(p.dist == p2.dist, "%s: p2p %u->%u cch %llu dijkstra %llu", name, s, tt,
                  (unsigned long long)p.dist, (unsigned long long)p2.dist);
            gp_path_free(&p2);
        }
        gp_path_free(&p);
    }
    if (nq)
        printf(
            "- p2p (CPU, one thread, path unpacked to original arcs): CCH median %.1f us, p90 %.1f "
            "us over %d random pairs (after a warm-up over %d others); CPU backend AUTO (%s) "
            "median "
            "%.0f us over %zu: %.0fx\n",
            median(qp), pct(qp, 0.9), nq, nq, g->lon ? "A*" : "bidirectional Dijkstra", median(qb),
            qb.size(), median(qb) / median(qp));
    if (nq) { /* the same pairs over perfect customization's pruned arcs: what the service answers with
               * once its background pass is through (cch_perfect = auto, the default) */
        double a = gp_now();
        if (gp_cch_perfect(c, 0, &err)) die("perfect customization", err);
        double perfect_ms = (gp_now() - a) * 1e3;
        warm_up("p2p warm-up (perfect)");
        std::vector<double> qq;
        for (int q = 0; q < nq; q++) {
            gp_path p;
            a = gp_now();
            if (gp_cch_p2p(c, qs[q], qt[q], &p, &err)) die("p2p (perfect)", err);
            qq.push_back((gp_now() - a) * 1e6);
            CHECK(p.dist == qd[q], "%s: p2p %u->%u perfect %llu basic %llu", name, qs[q], qt[q],
                  (unsigned long long)p.dist, (unsigned long long)qd[q]);
            gp_path_free(&p);
        }
        printf(
            "- p2p over perfect customization's pruned arcs (the service's default, cch_perfect="
            "auto): median %.1f us, p90 %.1f us over the same pairs, after a warm-up over as many "
            "others (%.2fx the basic arcs'); the "
            "perfect pass %.0f ms (all threads), keeping %u + %u of %u + %u arcs\n",
            median(qq), pct(qq, 0.9), median(qq) / median(qp), perfect_ms, c->q[1].first[n],
            c->q[0].first[n], t->m, t->m);
    }

    /* one-to-all: the plan sweep (default) and the level sweep on the same sources; then the
     * plan variants of --plans */
    std::vector<uint64_t> dg((size_t)n * 16), dc(n), dn(n);
    std::vector<std::vector<uint32_t>> srcs(reps, std::vector<uint32_t>(16));
    for (auto &v : srcs)
        for (auto &x : v) x = (uint32_t)(rnd() % n);
    std::vector<double> ph1, ph1e, ph16, ph16e, phc, nf, dj, lv1, lv16;
    /* one mode: k=1 and k=16 per rep, each k=1 tree and rows 0, 5, 10, 15 of the first k=16 sweep
     * checked against CPU PHAST */
    auto one_to_all = [&](const char *what, std::vector<double> &t1, std::vector<double> *t1e,
                          std::vector<double> &t16, std::vector<double> *t16e, bool cpu_time) {
        for (int r = 0; r < reps; r++) {
            uint32_t *src = srcs[r].data();
            double a = gp_now();
            if (gp_cch_gpu_sssp(c, src, 1, dg.data(), &err)) die("phast", err);
            if (t1e) t1e->push_back((gp_now() - a) * 1e3);
            t1.push_back(gp_cch_gpu_last_ms(c));
            a = gp_now();
            if (gp_cch_sssp(c, src[0], GP_INF, dc.data(), &err)) die("cpu phast", err);
            if (cpu_time) phc.push_back((gp_now() - a) * 1e3);
            CHECK(memcmp(dc.data(), dg.data(), (size_t)n * 8) == 0,
                  "%s: GPU PHAST (%s) != CPU PHAST", name, what);
            a = gp_now();
            if (gp_cch_gpu_sssp(c, src, 16, dg.data(), &err)) die("phast16", err);
            if (t16e) t16e->push_back((gp_now() - a) * 1e3);
            t16.push_back(gp_cch_gpu_last_ms(c));
            if (r == 0) {
                for (int i = 0; i < 16; i += 5) {
                    if (gp_cch_sssp(c, src[i], GP_INF, dc.data(), &err)) die("cpu phast", err);
                    CHECK(memcmp(dc.data(), dg.data() + (size_t)i * n, (size_t)n * 8) == 0,
                          "%s: PHAST x16 (%s) row %d != CPU", name, what, i);
                }
            }
        }
    };
    /* the service's sweep (kernels/cch_lab.h gp_dcch_tune_defaults; --small: in phases of any
     * size): the plan with both tables, the table phases flat, warp bins (for 1 and for 16
     * sources) reading only the last phase's cells with an entry, the launches as one CUDA
     * graph, the largest flat phases gathered for several sources */
    const gp_dcch_tune SVC = L.svc;
    if (gp_cch_gpu_sweep(c, &SVC, &err)) die("plan sweep", err);
    one_to_all("plan with top and piece tables", ph1, &ph1e, ph16, &ph16e, true);
    std::vector<double> tp1, tp16; /* the plan with its top table only, same sources */
    gp_dcch_tune tn = SVC;
    tn.piece_max = 0;
    if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan sweep", err);
    one_to_all("plan without piece tables", tp1, NULL, tp16, NULL, false);
    std::vector<double> nt1, nt16; /* the plan without tables, same sources */
    tn.top_max = 0;
    if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan sweep", err);
    one_to_all("plan without tables", nt1, NULL, nt16, NULL, false);
    /* the service's sweep without one of its paths (each falls back to the one before it),
     * same sources, each checked against CPU PHAST: without the flat phases' gather, without
     * the flat table phases, without warp bins for several sources, neither (the sweep before
     * v9), 2 sources per warp, 64-bit warp-bin cells, the last phase reading every cell, without
     * the CUDA graph, without warp bins, the block sweep launch by launch. (The variants that
     * lost, v7-v11 below, left the product with their numbers in this file's header.) */
    struct xvar {
        const char *key, *name; /* key: --variants picks by it */
        unsigned paths;
        uint32_t wkw;
        std::vector<double> t1, t16;
    };
    const unsigned ALL = GP_DCCH_PATHS_DEFAULT;
    std::vector<xvar> all = {
        {"nogather", "flat phases by atomics", ALL & ~GP_DCCH_GATHER, 0, {}, {}},
        {"noflat", "without flat table phases", ALL & ~GP_DCCH_FLAT, 0, {}, {}},
        {"nowmulti", "without warp bins for k > 1", ALL & ~GP_DCCH_WMULTI, 0, {}, {}},
        {"before",
         "neither (the sweep before)",
         GP_DCCH_SKIP | GP_DCCH_WARPS | GP_DCCH_GRAPH,
         0,
         {},
         {}},
        {"wkw2", "2 sources a warp", ALL, 2, {}, {}},
        {"w64", "64-bit warp-bin cells", ALL | GP_DCCH_W64, 0, {}, {}},
        {"allcells", "reading every cell", ALL & ~GP_DCCH_SKIP, 0, {}, {}},
        {"nograph", "without the graph", ALL & ~GP_DCCH_GRAPH, 0, {}, {}},
        {"nowarps", "without warp bins", ALL & ~(GP_DCCH_WARPS | GP_DCCH_WMULTI), 0, {}, {}},
        {"block", "block sweep, launch by launch", 0, 0, {}, {}}};
    std::vector<xvar> xv;
    for (auto &v : all) { /* --variants KEY,..: those only (default: all) */
        bool on = L.variants.empty();
        for (auto &k : L.variants) on |= k == v.key;
        if (on) xv.push_back(v);
    }
    for (auto &v : xv) {
        tn = SVC;
        tn.paths = v.paths;
        if (v.wkw) tn.wkw = v.wkw;
        if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan sweep variant", err);
        one_to_all(v.name, v.t1, NULL, v.t16, NULL, false);
    }
    if (!small) { /* where the plan sweep's time goes: per-phase device times (stderr) */
        fflush(stdout);
        for (unsigned paths : {ALL, GP_DCCH_SKIP | GP_DCCH_WARPS, 0u}) { /* (no graph) */
            tn = SVC;
            tn.paths = paths & ~GP_DCCH_GRAPH;
            tn.profile = 1;
            if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan sweep", err);
            for (uint32_t k : {1u, 16u})
                if (gp_cch_gpu_sssp(c, srcs[0].data(), k, dg.data(), &err))
                    die("phast profile", err);
        }
    }
    tn = SVC;
    tn.levels = 1;
    if (gp_cch_gpu_sweep(c, &tn, &err)) die("level sweep", err);
    one_to_all("levels", lv1, NULL, lv16, NULL, false);
    if (gp_cch_gpu_sweep(c, &SVC, &err)) die("plan sweep", err);
    for (int r = 0; r < reps && !L.fast; r++) { /* the older engines, from the same sources */
        uint32_t s0 = srcs[r][0];
        if (gp_cch_sssp(c, s0, GP_INF, dc.data(), &err)) die("cpu phast", err);
        gp_sssp_stats st;
        memset(&st, 0, sizeof st);
        gp_sssp_params p = {GP_SSSP_NEARFAR, 0, 0, 0};
        if (gp_cuda_sssp(L.ws, dgr, &p, s0, GP_INF, r == 0 ? dn.data() : NULL, NULL, &st, &err))
            die("near-far", err);
        nf.push_back(st.gpu_ms);
        if (r == 0) {
            CHECK(memcmp(dn.data(), dc.data(), (size_t)n * 8) == 0, "%s: PHAST != near-far", name);
        }
        if (r < 3) {
            double a = gp_now();
            if (L.cpu1->ops->sssp(L.cpu1, g, s0, GP_INF, dn.data(), NULL, &err))
                die("dijkstra", err);
            dj.push_back((gp_now() - a) * 1e3);
            CHECK(memcmp(dn.data(), dc.data(), (size_t)n * 8) == 0, "%s: PHAST != Dijkstra", name);
        }
    }
    if (L.fast) {
        dn.assign(n, 0);
        for (int r = 0; r < std::min(reps, 2); r++) { /* Dijkstra still checks PHAST */
            if (gp_cch_sssp(c, srcs[r][0], GP_INF, dc.data(), &err)) die("cpu phast", err);
            if (L.cpu->ops->sssp(L.cpu, g, srcs[r][0], GP_INF, dn.data(), NULL, &err))
                die("dijkstra", err);
            CHECK(memcmp(dn.data(), dc.data(), (size_t)n * 8) == 0, "%s: PHAST != Dijkstra", name);
        }
        printf("- one-to-all: GPU PHAST %.3f ms device (%.2f ms end-to-end with the upward search "
               "and the %.1f MB copy to the host); 16 sources per sweep %.3f ms device per tree "
               "(%.2f ms end-to-end per tree); CPU PHAST (1 thread) %.1f ms; (--fast: no near-far, "
               "no timed Dijkstra)\n",
               median(ph1), median(ph1e), n * 8 / 1e6, median(ph16) / 16, median(ph16e) / 16,
               median(phc));
    } else {
        printf("- one-to-all: GPU PHAST %.3f ms device (%.2f ms end-to-end with the upward search "
               "and the %.1f MB copy to the host); 16 sources per sweep %.3f ms device per tree "
               "(%.2f ms end-to-end per tree); CPU PHAST (1 thread) %.1f ms; near-far GPU SSSP "
               "%.2f ms device (%.0fx PHAST); CPU Dijkstra (1 thread) %.0f ms (%.0fx PHAST)\n",
               median(ph1), median(ph1e), n * 8 / 1e6, median(ph16) / 16, median(ph16e) / 16,
               median(phc), median(nf), median(nf) / median(ph1), median(dj),
               median(dj) / median(ph1));
    }
    printf("- PHAST sweep, plan vs levels (same sources, same run; device ms): 1 source %.3f vs "
           "%.3f (%.2fx); 16 per sweep %.3f vs %.3f ms per tree (%.2fx)\n",
           median(ph1), median(lv1), median(lv1) / median(ph1), median(ph16) / 16,
           median(lv16) / 16, median(lv16) / median(ph16));
    printf("- PHAST sweep, plan with vs without its piece tables (top table in both; same sources, "
           "same run; device ms): 1 source %.3f vs %.3f (%.2fx); 16 per sweep %.3f vs %.3f ms per "
           "tree (%.2fx)\n",
           median(ph1), median(tp1), median(tp1) / median(ph1), median(ph16) / 16,
           median(tp16) / 16, median(tp16) / median(ph16));
    printf("- PHAST sweep, plan with vs without any table (same sources, same run; device ms): "
           "1 source %.3f vs %.3f (%.2fx); 16 per sweep %.3f vs %.3f ms per tree (%.2fx)\n",
           median(ph1), median(nt1), median(nt1) / median(ph1), median(ph16) / 16,
           median(nt16) / 16, median(nt16) / median(ph16));
    printf("- PHAST sweep, the service's sweep without one of its paths (default plan; same "
           "sources, same run; device ms; the service's sweep (\"default\") / variant in "
           "parentheses, > 1 = the variant is faster): 1 source default %.3f",
           median(ph1));
    for (auto &v : xv)
        printf(", %s %.3f (%.2fx)", v.name, median(v.t1), median(ph1) / median(v.t1));
    printf("; 16 per sweep per tree default %.3f", median(ph16) / 16);
    for (auto &v : xv)
        printf(", %s %.3f (%.2fx)", v.name, median(v.t16) / 16, median(ph16) / median(v.t16));
    printf("\n");
    fflush(stdout);
    for (auto &v : L.plans) { /* plan variants: base x ratio x bin cap */
        tn = SVC;
        tn.plan_base = v[0], tn.plan_ratio = v[1], tn.bin_cap = v[2];
        if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan variant", err);
        std::vector<double> v1, v16;
        one_to_all("plan variant", v1, NULL, v16, NULL, false);
        printf("- plan %ux%ux%u: 1 source %.3f ms, 16 per sweep %.3f ms per tree (device)\n", v[0],
               v[1], v[2], median(v1), median(v16) / 16);
        if (L.profile_plans) { /* where this plan's time goes (stderr) */
            fflush(stdout);
            tn.profile = 1;
            if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan variant", err);
            for (uint32_t k : {1u, 16u})
                if (gp_cch_gpu_sssp(c, srcs[0].data(), k, dg.data(), &err))
                    die("phast profile", err);
        }
        fflush(stdout);
    }
    if (gp_cch_gpu_sweep(c, &SVC, &err)) die("plan", err); /* back to the default plan */
    if (small) { /* many phases and small bins: 4 x 4, 64 nodes per bin */
        std::vector<double> v1, v16;
        const unsigned WARPS = GP_DCCH_SKIP | GP_DCCH_WARPS | GP_DCCH_GRAPH;
        const unsigned FLAT = GP_DCCH_FLAT | GP_DCCH_WMULTI | WARPS;
        /* the block sweep; warp bins; flat table phases and warp bins for 16 sources (4, then 1
         * a warp); 32-bit cells saturating (then again with 64-bit ones); 64-bit cells; the
         * default plan */
        const struct {
            const char *what;
            unsigned paths;
            uint32_t wkw, sat;
        } sm[] = {{"plan 4x4x64", 0, 0, 0},
                  {"plan 4x4x64, warps", WARPS, 0, 0},
                  {"plan 4x4x64, flat, warps for k > 1", FLAT, 0, 0},
                  {"plan 4x4x64, flat, warps for k > 1, 1 a warp", FLAT, 1, 0},
                  {"plan 4x4x64, saturating", FLAT, 0, 300},
                  {"plan 4x4x64, warps for k > 1, 64-bit cells",
                   GP_DCCH_W64 | GP_DCCH_WMULTI | WARPS, 0, 0}};
        for (auto &x : sm) {
            tn = SVC;
            tn.plan_base = 4, tn.plan_ratio = 4, tn.bin_cap = 64;
            tn.paths = x.paths;
            if (x.wkw) tn.wkw = x.wkw;
            if (x.sat) tn.sat = x.sat;
            if (gp_cch_gpu_sweep(c, &tn, &err)) die("plan variant", err);
            one_to_all(x.what, v1, NULL, v16, NULL, false);
        }
        if (gp_cch_gpu_sweep(c, &SVC, &err)) die("plan variant", err);
        one_to_all("default plan", v1, NULL, v16, NULL, false);
    }

    /* tables */
    uint32_t sizes[2] = {100, 1000};
    for (int si = 0; si < (L.phast_only ? 0 : small ? 1 : 2); si++) { /* (--phast-only: none) */
        uint32_t k = sizes[si];
        if (k > n) k = n;
        std::vector<uint32_t> S(k), T(k);
        std::vector<uint64_t> o1((size_t)k * k), o2((size_t)k * k), o3((size_t)k * k);
        std::vector<double> tg, tgd, tc, tn;
        for (int r = 0; r < (small ? 1 : std::min(reps, 3)); r++) {
            for (uint32_t i = 0; i < k; i++)
                S[i] = (uint32_t)(rnd() % n), T[i] = (uint32_t)(rnd() % n);
            double a = gp_now();
            if (gp_cch_gpu_table(c, S.data(), k, T.data(), k, o1.data(), &err)) die("rphast", err);
            tg.push_back((gp_now() - a) * 1e3);
            tgd.push_back(gp_cch_gpu_last_ms(c));
            a = gp_now();
            if (gp_cch_table(c, S.data(), k, T.data(), k, 0, o2.data(), &err)) die("buckets", err);
            tc.push_back((gp_now() - a) * 1e3);
            CHECK(o1 == o2, "%s: RPHAST %ux%u != buckets", name, k, k);
            gp_sssp_stats st;
            memset(&st, 0, sizeof st);
            gp_sssp_params p = {GP_SSSP_NEARFAR, 0, 0, 0};
            if (r == 0 && !L.fast && k <= L.nf_table_max) {
                a = gp_now();
                if (gp_cuda_table(L.ws, dgr, &p, S.data(), k, T.data(), k, o3.data(), &st, &err))
                    die("near-far table", err);
                tn.push_back((gp_now() - a) * 1e3);
                CHECK(o1 == o3, "%s: RPHAST %ux%u != near-far table", name, k, k);
            }
        }
        if (L.fast || k > L.nf_table_max)
            printf("- table %ux%u: GPU RPHAST %.2f ms end-to-end (%.2f ms device); CPU buckets "
                   "(all threads) %.1f ms%s\n",
                   k, k, median(tg), median(tgd), median(tc),
                   L.fast ? "" : "; near-far table not run (--nf-table-max)");
        else
            printf(
                "- table %ux%u: GPU RPHAST %.2f ms end-to-end (%.2f ms device); CPU buckets (all "
                "threads) %.1f ms; near-far GPU table %.0f ms (%.0fx RPHAST)\n",
                k, k, median(tg), median(tgd), median(tc), median(tn), median(tn) / median(tg));
        fflush(stdout);
    }
    if (L.plot)
        fprintf(L.plot, "%s %u %.3f %.3f %.3f %.4f\n", name, n, median(dj), median(nf), median(qp),
                median(ph1));
    gp_cch_free(c);
    gp_dgraph_free(dgr);
    gp_graph_unref(g);
    gp_turns_free(tt);
}

int main(int argc, char **argv) {
    const char *data = "../shared/data", *graphs = NULL, *plot = NULL;
    lab L;
    bool small = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else if (!strcmp(argv[i], "--graphs") && i + 1 < argc) graphs = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            L.reps = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            L.queries = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--plot") && i + 1 < argc) plot = argv[++i];
        else if (!strcmp(argv[i], "--small")) small = true;
        else if (!strcmp(argv[i], "--fast")) L.fast = true;
        else if (!strcmp(argv[i], "--compare-metis")) L.compare = true;
        else if (!strcmp(argv[i], "--phast-only")) L.phast_only = true;
        else if (!strcmp(argv[i], "--custom-only")) L.custom_only = true;
        else if (!strcmp(argv[i], "--custom-layout")) L.custom_layout = true;
        else if (!strcmp(argv[i], "--profile-plans")) L.profile_plans = true;
        else if (!strcmp(argv[i], "--profile-custom")) L.profile_custom = true;
        else if (!strcmp(argv[i], "--turns")) L.turns = true;
        else if (!strcmp(argv[i], "--order-file") && i + 1 < argc) L.order_file = argv[++i];
        else if (!strcmp(argv[i], "--custom-shapes") && i + 1 < argc) {
            for (auto &x : split_commas(argv[++i])) {
                unsigned a = 0, b = 0, c = ~0u, m = ~0u, f = ~0u;
                if (sscanf(x.c_str(), "%u:%u:%u:%u:%u", &a, &b, &c, &m, &f) < 2 ||
                    (f != ~0u && f > 1)) {
                    fprintf(stderr, "lab_cch: --custom-shapes wants "
                                    "TINY:HEAVY[:CHUNK[:MIN[:LAUNCH]]],... (LAUNCH 0 or 1)\n");
                    return 2;
                }
                L.shapes.push_back({a, b, c, m, f});
            }
        } else if (!strcmp(argv[i], "--variants") && i + 1 < argc)
            L.variants = split_commas(argv[++i]);
        else if (!strcmp(argv[i], "--p2p-checks") && i + 1 < argc)
            L.p2p_checks = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--nf-table-max") && i + 1 < argc)
            L.nf_table_max = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--order") && i + 1 < argc) {
            const char *o = argv[++i];
            if (strcmp(o, "nd") && strcmp(o, "metis") && strcmp(o, "cuts") && strcmp(o, "flow")) {
                fprintf(stderr, "lab_cch: --order wants nd, metis, cuts or flow\n");
                return 2;
            }
            L.metis = !strcmp(o, "metis");
            L.flow = !strcmp(o, "flow");
            L.cuts = !strcmp(o, "cuts");
        } else if (!strcmp(argv[i], "--plans") && i + 1 < argc) {
            for (auto &tok : split_commas(argv[++i])) {
                unsigned a = 0, b = 0, cc = 0;
                if (sscanf(tok.c_str(), "%ux%ux%u", &a, &b, &cc) < 3 || !a || b < 2 || !cc) {
                    fprintf(stderr, "lab_cch: --plans wants BASExRATIOxBINCAP,...\n");
                    return 2;
                }
                L.plans.push_back({a, b, cc});
            }
        } else {
            fprintf(stderr, "usage: lab_cch [--data DIR] [--graphs SPEC,..] [--reps N] "
                            "[--queries N] [--plot FILE] [--small] [--fast] [--plans BxRxC,..] "
                            "[--order nd|metis|cuts|flow] [--compare-metis] [--p2p-checks N] "
                            "[--nf-table-max K] "
                            "[--phast-only] [--variants KEY,..] [--profile-plans] "
                            "[--profile-custom] [--turns] "
                            "[--custom-only] [--custom-layout]\n");
            return 2;
        }
    }
    gp_err err;
    gp_err_clear(&err);
    gp_cch_set_max_tri_per_node(0);
    int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL")); /* debug: order / contraction phases */
    if (lvl >= 0) gp_log_level = lvl;
    gp_cch_set_order(L.metis  ? GP_CCH_ORDER_METIS
                     : L.flow ? GP_CCH_ORDER_FLOW
                              : GP_CCH_ORDER_ND,
                     0);
    L.cpu = gp_cpu_backend_new(0, &err);
    L.cpu1 = gp_cpu_backend_new(1, &err);
    gp_backend *cuda = gp_cuda_backend_new(NULL, &err);
    if (!L.cpu || !L.cpu1 || !cuda) die("backends", err);
    L.ws = gp_sssp_ws_new(NULL, 1, 0, &err);
    if (!L.ws) die("workspace", err);
    if (plot && !(L.plot = fopen(plot, "w"))) {
        fprintf(stderr, "lab_cch: cannot write %s\n", plot);
        return 2;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("GPU %s (%d SMs), CPU threads: all online\n", prop.name, prop.multiProcessorCount);
    std::vector<std::string> specs;
    gp_dcch_tune_defaults(&L.svc);
    if (L.profile_custom) L.svc.custom_profile = custom_profile;
    prof_tune = L.svc;
    if (small) { /* warp bins and gathers in every phase they fit (sanitizers) */
        L.svc.wbin_per_sm = 0;
        L.svc.wmulti_per_sm = 0;
        L.svc.gather_min = 0;
        specs.push_back("gen:2000:7");
        specs.push_back("grid:2000:7");
        specs.push_back("smem:gen:2000:7"); /* again, with 2 KiB of shared memory per plan bin */
    } else if (graphs) {
        specs = split_commas(graphs);
    } else {
        const char *ny[] = {"USA-road-d.NY.gr.gz", "USA-road-d.BAY.gr.gz"};
        for (const char *f : ny) {
            std::string p = std::string(data) + "/dimacs/" + f;
            FILE *fp = fopen(p.c_str(), "rb");
            if (fp) {
                fclose(fp);
                specs.push_back(p);
            } else {
                printf("(%s not found: skipped)\n", p.c_str());
            }
        }
        for (const char *sp :
             {"gen:1000000", "gen:4000000", "grid:10000", "grid:30000", "grid:100000"})
            specs.push_back(sp);
    }
    for (auto &s : specs) {
        const bool smem = s.compare(0, 5, "smem:") == 0; /* the plan sweep's bins that do not fit */
        L.svc.smem_max = smem ? 2048 : 0;
        gp_dcch_tune_set(&L.svc);
        run_graph(L, s.c_str() + (smem ? 5 : 0), small);
    }
    if (L.plot) fclose(L.plot);
    printf("\n%s (%d failures)\n", failures ? "FAILED" : "OK", failures);
    gp_sssp_ws_free(L.ws);
    gp_backend_destroy(cuda);
    gp_backend_destroy(L.cpu);
    gp_backend_destroy(L.cpu1);
    return failures ? 1 : 0;
}
