/* cch_internal.cuh - what the GPU CCH's kernel files (kernels/cch.cu, cch_customize.cu,
 * cch_sweep.cu, cch_query.cu) share and nothing else includes: the constants (the thresholds the
 * service runs; the lab varies some through kernels/cch_lab.h), the device CCH's structs
 * (gp_dcch_topo, gp_dcch, plan_dev), the CUDA error macros and the host functions one file
 * calls in another. The kernels themselves are private to their files.
 */
#ifndef GP_KERNELS_CCH_INTERNAL_CUH
#define GP_KERNELS_CCH_INTERNAL_CUH

#include "kernels/cch.h"
#include "kernels/cch_lab.h"
#include "kernels/cch_plan.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long u64;
#define INF64 0xffffffffffffffffULL
#define INF32 0xffffffffu
#define SMALL_ITEMS 4096 /* customization: levels of <= SMALL_ITEMS / 8 edges in one block */
/* customization: ... and of <= SMALL_TRI triangles; a level with few edges but many triangles
 * each (the top of a turn graph's CCH) gets a launch of its own, a warp per edge on every SM */
#define SMALL_TRI 8192
/* customization: in a level of its own launch, the edges of at most SHORT_TRI triangles (most
 * of them) take SHORT_W lanes each, the others a warp */
#define SHORT_TRI 16
#define SHORT_W 8
/* customization: ... and the edges of fewer than TINY_TRI triangles (the bottom levels' edges,
 * most of a turn graph's) a thread each; those of more than HEAVY_TRI a block of BIG_THREADS
 * (kernels/cch_lab.h gp_dcch_tune tiny_tri, heavy_tri; 9 and 256 won on gen:4M's turn graph
 * among 2-33 and 64-2048: bench/results/2026-11-30-NVIDIA-H200-turns-cch-classes.md) */
#define TINY_TRI 9
#define HEAVY_TRI 256
/* customization: the level launches captured once per bound topology part as a CUDA graph and
 * replayed (kernels/cch_lab.h gp_dcch_tune custom_graph) */
#define CUSTOM_GRAPH 1
/* customization: a level launched alone of at least CHUNK_MIN edges is cut into chunks of
 * CUSTOM_CHUNK edges, a block each (kernels/cch_lab.h gp_dcch_tune custom_chunk) */
#define CUSTOM_CHUNK 256
#define CHUNK_MIN 1000000
/* customization: each level launch after the first a programmatic dependent launch
 * (kernels/cch_lab.h gp_dcch_tune custom_pdl; with the pipelined triangle scan, gen:1M's turn
 * graph 6.31 -> 5.73 ms, gen:4M's 15.09 -> 15.01, road-like 24M's in flow order 53.34 -> 53.36:
 * bench/results/2026-12-02-NVIDIA-H200-cch-pdl.md) */
#define CUSTOM_PDL 1
#define SWEEP_SMALL_ITEMS 64     /* sweeps: levels of <= 64 items in one block, a warp per item */
#define SWEEP_THREAD_ITEMS 16384 /* sweeps: a thread per item from here (bottom levels) */
#define COOP_THREADS 512         /* sweeps: block size of the cooperative kernel */
#define TOP_CELLS 12288          /* sweeps: top levels kept in shared memory (96 KiB + offsets) */
#define TOP_SMEM (TOP_CELLS * 8 + (TOP_CELLS + 1) * 4)
#define SMALL_THREADS 1024
#define BIG_THREADS 256
#define PLAN_BASE 256 /* plan sweeps: thresholds 256, 4096, 65536, ... (cch_plan.h) */
#define PLAN_RATIO 16
/* plan sweeps: nodes per bin of a phase, at most (roughly; 1024
 * before the warp bins: bench/lab_cch.cu --plans compares) */
#define PLAN_BIN_CAP 128
#define PLAN_BLOCKS_PER_SM 4
#define PLAN_THREADS_MAX 512 /* plan sweeps: a phase gets >= 4 bins per SM when it has pieces */
#define TOP_MAX_NODES 2048   /* plan sweeps: the top table's nodes, at most (cch_plan.h) */
#define PIECE_MAX_TOTAL (1u << 25) /* plan sweeps: piece tables' entries at most (cch_plan.h) */
#define PIECE_MAX_BIN 65536        /* plan sweeps: entries of one bin's table at most */
#define PIECE_MIN_STEPS 4          /* plan sweeps: bins of fewer steps keep the step sweep */
#define PIECE_THREADS 256          /* piece_tables: block size */
#define INIT_CHUNK 2048            /* plan sweeps: cells filled per block of sweep_init */
#define INIT_THREADS 256
#define X_GRAPHS 4 /* GP_DCCH_GRAPH: captured launch sequences kept */
#ifndef WARCS_BLOCKS
#define WARCS_BLOCKS 8 /* arc-lane warp bins: blocks per SM (registers: 32 a thread) */
#endif
#ifndef WARCS_BLOCKS_K
#define WARCS_BLOCKS_K 6 /* ... with several sources per warp (their cells: <= 7 blocks) */
#endif
#define WBIN_WARPS 8 /* warp bins (GP_DCCH_WARPS): bins (a warp each) per block */
/* warp bins: a step's arcs padded to a multiple of this (one
 * pass of sweep_wpass: 8 arcs x 4 sources) */
#define PASS_ARCS 8
/* warp bins: shared bytes per warp at most (cells and arc
 * offsets; beyond, the cells stay in global memory; phases
 * whose offsets alone do not fit keep the block sweep) */
#define WBIN_SLOT_MAX 12288
/* sweep_wpass: blocks of WBIN_WARPS warps per SM (7 blocks of 8
 * warps, 12 or 14 of 4 lost: bench/lab_cch.cu v11) */
#define WPASS_BLOCKS 6
/* warp bins: sources per warp at most (8 or 16 lost on
 * occupancy: v10); a divisor of k, so k / that warps per bin */
#define WKW_MAX 4
/* warp bins only where a phase has WBIN_PER_SM bins per SM at least: a grid's phase of 2 bins
 * of 1034 positions and 170 inner arcs each took 7.7 ms as warp bins, 2.2 ms as blocks
 * (grid:100000, H100) */
#define WBIN_PER_SM 1
/* for several sources, warp bins only where a phase has WMULTI_PER_SM bins per SM at least: at
 * 16 sources they won on gen:1M (7,800 bins in its last phase) and gen:24M (184,000) but lost on
 * NY and BAY (2,446 bins: 0.034 vs 0.029 ms per tree, bench/results/2026-11-27-...-gpu-cch-v9.md) */
#define WMULTI_PER_SM 32
/* flat phases gathered (GP_DCCH_GATHER) for several sources from GATHER_MIN entries: gen:24M's
 * phase 4 (5.8 M entries) at 16 sources 0.381 -> 0.347 ms per tree; slower for one source
 * everywhere (gen:24M 0.84x) and at 16 on gen:1M's phases of <= 1.7 M entries (0.96x)
 * (bench/results/2026-11-27-...-gpu-cch-gather.md) */
#define GATHER_MIN ((uint64_t)1 << 22)
#define CELL_SAT (INF32 - 1) /* 32-bit warp-bin cells saturate here (sweep_wpass: below 2^31) */

struct plan_dev { /* device copy of a gp_cch_plan (cch_plan.h) plus its weights */
    const uint32_t *bin_first, *bin_step, *step_first, *in_first, *in_head, *in_wt, *out_first,
        *out_head, *out_tail, *out_wt, *pnode;
    const uint32_t *in_ht;     /* the warp bins' inner arcs, each step's padded with dummy arcs
                                * to a multiple of PASS_ARCS: head << 4 | tail << 20 (offsets in
                                * the bin, bins < 4096 nodes: a 4-source cell's byte offset in
                                * 32 bits), a dummy 0 */
    const uint32_t *in_pwt;    /* ... their weights (a dummy's INF) */
    const uint32_t *step_arc;  /* nsteps+1: a step's first arc in in_ht */
    const uint32_t *tab_first; /* piece tables (cch_plan.h gp_cch_ptab): entries per bin */
    const uint32_t *onode;     /* the warp bins' output order: a bin's nodes ascending (pnode
                                * sorted) */
    const uint16_t *ooff;      /* ... and each one's offset in the bin */
    const uint4 *bin_rec;      /* nbins+1: a bin's first position, step, inner arc, outer arc */
    const uint32_t *border;    /* the warp bins' order: a phase's bins by their smallest node */
};
struct x_graph_slot {       /* a captured plan sweep (fill/scatter/top product + phases) */
    unsigned char key[128]; /* its x_key */
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
    int refs; /* atomic */
    uint32_t n, m, nlevels;
    uint64_t ntri;
    int sms;                    /* multiprocessors of the device */
    uint32_t *level_first;      /* host copy: ranks per level */
    uint32_t *edge_level;       /* host: up_first[level_first[l]] per level (nlevels+1) */
    unsigned char *level_heavy; /* host: 1 where a level has more than SMALL_TRI triangles */
    /* host, 3 per level: its edges of fewer than tiny_tri triangles, of at most SHORT_TRI, of at
     * most heavy_tri (the rest: heavy) */
    uint32_t *level_cls;
    /* device, m: each level's edges by those classes (each class ascending), or in a chunked
     * level its heavy edges, then chunk by chunk the chunk's edges by class */
    uint32_t *eord;
    /* host, nlevels+1: a level's first chunk (a level has chunks where this grows: chunk_min
     * edges or more, launched alone) */
    uint32_t *level_chunk;
    uint32_t *cdesc; /* device, a chunk's tiny and short edges: n1 | n8 << 16 */
    uint32_t chunk;  /* edges per chunk (gp_dcch_tune custom_chunk) */
    uint32_t *up_first, *up_head, *order; /* device */
    uint64_t *tri_first;
    uint32_t *tri;
    uint32_t *d_levels;  /* device copy of level_first */
    uint32_t *d_elevels; /* device copy of edge_level */
    /* the sweep plan (cch_plan.h): device arrays, host metadata per phase */
    gp_dcch_topo_src src; /* the host topology (copied; src.owner held): plan rebuilds */
    int smem_max;         /* opt-in shared memory per block */
    uint32_t p_nphases, p_nbins, p_mid;               /* p_mid: first position of the last phase */
    uint32_t *p_phase_bin;                            /* host: nphases+1 */
    uint32_t *p_max_nodes, *p_max_arcs, *p_max_steps; /* host: per phase, largest bin */
    uint32_t *p_bin_first, *p_bin_step, *p_step_first, *p_in_first, *p_in_head, *p_in_edge,
        *p_out_first, *p_out_head, *p_out_tail, *p_out_edge, *p_pnode, *p_pos;
    uint32_t *p_in_ht, *p_step_arc; /* the arc-lane warp bins' layout (plan_dev) */
    uint32_t p_nsteps, p_npad; /* steps; arcs of that layout (the inner arcs with the padding) */
    uint4 *p_bin_rec;
    uint32_t *p_border; /* each phase's bins by their smallest node (the warp bins' order) */
    uint32_t *p_onode;  /* per bin its nodes ascending (the warp bins' output order) ... */
    uint16_t *p_ooff;   /* ... with their offsets in the bin (bins < 2^16 nodes) */
    uint32_t p_lim;     /* largest bin's nodes or outer arcs: the plan needs p_lim * k < 2^31 */
    uint32_t p_nin, p_nout;
    /* the top table (cch_plan.h gp_cch_top): positions 0 .. t_K-1 = phases 0 .. t_nph-1 */
    uint32_t t_K, t_nph, t_narcs;
    uint32_t *t_first, *t_head, *t_edge;
    /* the piece tables (cch_plan.h gp_cch_ptab): q_ntab bins (q_bins) with q_first entries;
     * q_tmpl holds the entries' low words (the layout), a gp_dcch copies it and customization
     * writes the high words */
    uint32_t q_ntab, q_max_steps;
    uint32_t *q_bins, *q_first, *q_depth;
    u64 *q_tmpl;
    uint64_t q_nent;
    uint64_t *q_pent, *q_parcs; /* host, per phase: table entries, inner arcs */
    uint32_t *q_pmaxn;          /* host, per phase: nodes of the largest bin with a table */
    /* flat phases (GP_DCCH_FLAT): each piece-table entry with absolute positions,
     * (v << 32) | a (device, q_nent), and per phase its positions and entries (host) */
    u64 *f_va;                  /* ... sorted by v (so each position's entries are a range) */
    uint32_t *f_perm;           /* device, q_nent: f_va's i-th entry is q_tmpl's f_perm[i] */
    uint32_t *f_vfirst;         /* device, p_mid + 1: position v's entries in f_va (GATHER) */
    uint32_t *f_ppos;           /* host: nphases+1, the first position of each phase */
    uint64_t *f_pent;           /* host: nphases+1, the first entry of each phase */
    unsigned char *f_full;      /* host: nphases, every bin of the phase has a table */
    uint32_t *p_ppos, *p_parcs; /* host, per phase: positions, inner arcs (the profile) */
    /* the gp_dcch_tune plan fields this part was built with (gp_dcch_retune compares) */
    uint32_t shape[10]; /* plan_base, plan_ratio, bin_cap, top_max, piece_max, smem_max,
                         * tiny_tri, heavy_tri, custom_chunk, chunk_min */
    uint64_t tbytes;    /* device bytes of this part */
};

/* One customized CCH: the shared topology part (copied from tm) plus its own metric, customized
 * weights, the plan's weights and tables, and the sweep workspace. */
struct gp_dcch : gp_dcch_topo {
    gp_dcch_topo *tm; /* the shared part (referenced) */
    uint32_t *ofw, *obw, *fmid, *bmid;
    uint2 *fb;     /* the customized {fw, bw} per edge, packed: a triangle reads one 8-byte word
                    * per lower edge instead of two 4-byte ones, and the pass writes 8 bytes an
                    * edge rather than 16 (it kept separate fw and bw arrays too before, for the
                    * plan's weights and the copy back) */
    uint32_t *bad; /* device word: overflow seen */
    u64 *wit;      /* packed witnesses (2m), allocated by the first gp_dcch_fetch asking for them */
    /* sweep workspace */
    u64 *dist;
    size_t dist_cap; /* entries */
    uint32_t *init_rank;
    u64 *init_dist;
    uint32_t *init_first;
    size_t init_cap, init_dcap, init_first_cap;
    u64 *outbuf;
    size_t out_cap;
    /* rphast restricted graph */
    uint32_t *r_first, *r_head, *r_wt, *r_lev, *r_tgt;
    uint32_t r_n, r_m, r_nlev, r_nt;
    int r_w64; /* a 32-bit cell of this target set's tables saturated: 64-bit ones */
    uint32_t *r_lev_host;
    size_t r_cap_n, r_cap_m, r_cap_lev, r_cap_t;
    /* the sweep's gp_dcch_tune fields (gp_dcch_new, gp_dcch_retune) */
    int levels;  /* PHAST through the level sweep */
    int profile; /* per-phase device times on stderr */
    /* each customization's launches timed, to the lab's callback (gp_dcch_tune) */
    void (*custom_profile)(void *arg, const gp_dcch_launch *l, uint32_t n, float tail_ms);
    void *custom_profile_arg;
    int custom_graph;            /* gp_dcch_tune.custom_graph */
    cudaGraphExec_t custom_exec; /* the level launches, captured (gp_dcch_graphs_free drops it) */
    int custom_pdl;              /* gp_dcch_tune.custom_pdl */
    unsigned paths;              /* GP_DCCH_* */
    uint32_t wkw;                /* sources per warp bin at most for several sources */
    uint32_t sat;                /* 32-bit warp-bin cells saturate here */
    uint32_t wbin_min;           /* warp bins only in phases of at least this many bins */
    uint32_t wmulti_min;         /* ... and for several sources of at least this many */
    uint64_t gather_min;         /* GP_DCCH_GATHER: flat phases of at least this many entries */
    /* the plan's weights and tables for this metric (sized by tm) */
    uint32_t *p_in_wt, *p_out_wt, *t_wt;
    uint32_t *p_in_pwt; /* the inner arcs' weights in the warp bins' layout (p_npad) */
    u64 *t_tab;         /* t_K x t_K, row u: down distances from u */
    float t_ms;         /* device ms of the last table computation */
    u64 *q_ent;         /* the piece tables: q_tmpl's layout, high words this metric's */
    uint32_t *f_T;      /* flat phases: q_ent's high words alone (f_va's order) */
    uint32_t *q_bad;
    int q_ok;   /* the last customization's tables hold (no down distance >= 2^32-1) */
    float q_ms; /* device ms of the last piece-table computation */
    /* the top and piece tables are the last metric's but one: computed before the next plan
     * sweep (gp_dcch_plan_tables), not on a customization's way to its first answer */
    int tables_stale;
    u64 *pdist; /* plan sweeps: positions x k, INF from cell p_dirty on */
    size_t pdist_cap, p_dirty;
    u64 *pdist1; /* ... the same for one source: a sweep of one source after one of
                  * 16 would clean the 16-source layout's upper cells (p_dirty) */
    size_t pdist1_cap, p_dirty1;
    uint32_t *p_flag; /* GP_DCCH_SKIP: per bin, an entry of the init in its cells */
    uint32_t *p_ovf;  /* device word: a 32-bit warp-bin cell saturated (then 64-bit ones) */
    int w64;          /* ... so this metric's sweeps keep 64-bit cells */
    int x_c32;        /* the last plan sweep used 32-bit cells */
    size_t p_flag_cap;
    int customized;
    uint64_t bytes; /* device bytes of this instance (the shared part: tm->tbytes) */
    cudaEvent_t ev0, ev1;
    /* the captured sweeps (GP_DCCH_GRAPH), freed by gp_dcch_graphs_free (from gp_dcch_free and
     * bind) */
    uint32_t x_gen; /* plan generation: graphs of an older plan are never launched */
    x_graph_slot x_graph[X_GRAPHS];
    uint64_t x_tick;
    struct dcch_cells *cells; /* a turn table's cells (kernels/cch_cells.cu), made on first use */
};

static inline int cfail(cudaError_t e, const char *what, gp_err *err) {
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
static inline cudaError_t dput(T **dst, const T *src, size_t count, cudaStream_t s,
                               uint64_t *bytes) {
    cudaError_t e = cudaMalloc((void **)dst, (count ? count : 1) * sizeof(T));
    if (e != cudaSuccess) return e;
    if (bytes) *bytes += (count ? count : 1) * sizeof(T);
    if (count && src)
        return cudaMemcpyAsync(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice, s);
    return cudaSuccess;
}

/* Grows a device buffer to at least count entries (contents not kept). */
template <typename T> static inline cudaError_t grow(T **buf, size_t *cap, size_t count) {
    if (*cap >= count && *buf) return cudaSuccess;
    cudaFree(*buf);
    *buf = NULL;
    size_t c = count < 1024 ? 1024 : count + count / 4;
    cudaError_t e = cudaMalloc((void **)buf, c * sizeof(T));
    *cap = e == cudaSuccess ? c : 0;
    return e;
}

/* Blocks of BIG_THREADS for a thread per item. */
static inline unsigned blocks_for(uint64_t items) {
    return (unsigned)((items + BIG_THREADS - 1) / BIG_THREADS);
}

/* The process-wide gp_dcch_tune (kernels/cch.cu; the defaults unless the lab or a test set it). */
const gp_dcch_tune *gp_dcch_tune_now(void);

/* kernels/cch_customize.cu: the plan's weights, top table and piece tables from the customized
 * weights (after every customization and plan rebuild); its kernels' shared-memory limits (at a
 * topology part's upload). gp_dcch_plan_weights_only leaves the tables stale (a customization:
 * 9.6 ms of its 35.6 on the road-like 1M map with turn costs, H200); gp_dcch_plan_tables computes
 * stale tables (every plan sweep calls it first). */
int gp_dcch_plan_weights(gp_dcch *d, cudaStream_t s, gp_err *err);
int gp_dcch_plan_weights_only(gp_dcch *d, cudaStream_t s, gp_err *err);
int gp_dcch_plan_tables(gp_dcch *d, cudaStream_t s, gp_err *err);
cudaError_t gp_dcch_customize_attrs(int smem_max);

/* kernels/cch_sweep.cu: the sweep kernels' shared-memory limits; the captured sweeps freed. */
cudaError_t gp_dcch_sweep_attrs(int smem_max);
void gp_dcch_graphs_free(gp_dcch *d);

/* kernels/cch_query.cu: the upward searches' results to the device; the level sweep over a graph
 * (first / head / wt device, edge e's weight wt[e * ws], levels host lev / device dlev) into
 * d->dist; PHAST's output from it in node order (d->outbuf); sweep_top's shared-memory limit. */
int gp_dcch_upload_init(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                        const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err);
int gp_dcch_level_sweep(gp_dcch *d, cudaStream_t s, uint32_t n, uint32_t nlev, const uint32_t *lev,
                        const uint32_t *dlev, const uint32_t *first, const uint32_t *head,
                        const uint32_t *wt, uint32_t ws, uint32_t k, const uint32_t *init_first,
                        const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err);
int gp_dcch_level_output(gp_dcch *d, cudaStream_t s, uint32_t k, gp_err *err);
cudaError_t gp_dcch_level_attrs(void); /* sweep_top's shared memory */
/* RPHAST (gp_dcch_rphast32, then 64-bit cells where one saturates) with its k x r_nt table left
 * in d->outbuf: *w64 says which cells it holds. */
int gp_dcch_rphast_dev(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                       const uint32_t *init_local, const uint64_t *init_dist, int *w64, float *ms,
                       gp_err *err);

/* kernels/cch_cells.cu: the cells' device buffers (gp_dcch_free). */
void gp_dcch_cells_free(gp_dcch *d);

#endif
