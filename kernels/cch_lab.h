/* cch_lab.h - the knobs of the GPU CCH (kernels/cch*.cu) for the kernel lab (bench/lab_cch.cu)
 * and the GPU tests (tests/test_gpu_cch.c) only: the service never includes this header and
 * runs the defaults (gp_dcch_tune_defaults), which are the sweep docs/gpu.md "CCH on the GPU"
 * describes.
 *
 * One options struct, set process-wide by gp_dcch_tune_set before the device CCHs it should
 * shape are made (the plan's fields are read when a topology's device part is built, the
 * sweep's when a gp_dcch is made) or applied to one CCH's device state at once by
 * gp_cch_gpu_sweep (engine/cch.h). Plain C; not thread-safe against sweeps running at the time
 * (lab and tests set it between calls).
 */
#ifndef GP_KERNELS_CCH_LAB_H
#define GP_KERNELS_CCH_LAB_H

#include "kernels/cch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sweep's paths (gp_dcch_tune.paths): the service runs GP_DCCH_PATHS_DEFAULT; a lab
 * ablation or a test turns some off to reach or time the path each one falls back to. */
/* the sweep's launches captured once per key as a CUDA graph and
 * replayed (else launched one by one) */
#define GP_DCCH_GRAPH 1u
/* phases without piece tables, with small bins, as warp bins (a warp
 * per bin; else a block per bin) for one source */
#define GP_DCCH_WARPS 2u
#define GP_DCCH_WMULTI 4u /* ... and for several sources (wkw sources a warp) */
/* the last phase's warp bins read only the cells of bins an upward
 * search left an entry in (else every cell) */
#define GP_DCCH_SKIP 8u
/* a phase whose bins all have piece tables runs without bins (else a
 * block per bin with its table) */
#define GP_DCCH_FLAT 16u
/* for several sources, the largest flat phases gathered a position
 * at a time (else an atomicMin per entry) */
#define GP_DCCH_GATHER 32u
/* the warp bins' cells in 64 bits from the start (else 32-bit cells,
 * and 64-bit ones only after a cell saturated) */
#define GP_DCCH_W64 64u
#define GP_DCCH_PATHS_DEFAULT                                                                      \
    (GP_DCCH_GRAPH | GP_DCCH_WARPS | GP_DCCH_WMULTI | GP_DCCH_SKIP | GP_DCCH_FLAT | GP_DCCH_GATHER)

/* One launch of a profiled customization (gp_dcch_tune.custom_profile). */
typedef struct gp_dcch_launch {
    uint32_t l0, l1; /* the levels it customized */
    int alone;       /* one level alone (customize_level), else small levels in one block */
    float ms;        /* device time, from the end of the launch before */
} gp_dcch_launch;

typedef struct gp_dcch_tune {
    /* the plan (kernels/cch_plan.h), built with a topology's device part */
    uint32_t plan_base, plan_ratio; /* phase thresholds base, base*ratio, base*ratio^2, ... */
    uint32_t bin_cap;               /* nodes per bin, about */
    uint32_t top_max;               /* the top table's nodes at most (0: no top table) */
    uint32_t piece_max;             /* the piece tables' entries at most (0: no piece tables) */
    uint32_t smem_max;              /* shared memory per plan bin, bytes (0: the device's opt-in
                                     * limit; less reaches the paths for bins that do not fit) */
    /* the sweep, read when a gp_dcch is made or re-tuned */
    int levels;             /* PHAST through the level sweep (RPHAST's) */
    unsigned paths;         /* GP_DCCH_* */
    uint32_t wkw;           /* sources per warp bin at most for several sources (1, 2, 4) */
    uint32_t wbin_per_sm;   /* warp bins only in phases of at least this many bins per SM
                             * (one source) ... */
    uint32_t wmulti_per_sm; /* ... and for several sources */
    uint64_t gather_min;    /* GP_DCCH_GATHER from this many table entries in a phase */
    uint32_t sat;           /* 32-bit warp-bin cells and RPHAST's 32-bit table cells
                             * saturate here (a test hook: lower than a distance reaches
                             * the 64-bit fallback) */
    int profile;            /* per-phase device times of every plan sweep on stderr (the
                             * launches one by one) */
    uint32_t tiny_tri;      /* customization: in a level launched alone, edges of fewer
                             * triangles take a thread each (0: none) ... */
    uint32_t heavy_tri;     /* ... and edges of more a block each (0: none) */
    /* every customization's launches timed (an event after each), handed to this callback:
     * launch i customized levels [l[i].l0, l[i].l1), alone or as small levels in one block,
     * in l[i].ms; tail_ms: the plan's weights after them (bench/lab_cch.cu prints the report) */
    void (*custom_profile)(void *arg, const struct gp_dcch_launch *l, uint32_t n, float tail_ms);
    void *custom_profile_arg;
    int custom_graph;      /* customization's level launches captured once as a CUDA graph
                            * and replayed (not while custom_profile times them) */
    uint32_t custom_chunk; /* customization: a level launched alone of at least chunk_min edges
                            * is cut into chunks of this many edges (by id), a block per chunk
                            * walking its tiny, short and long edges, so that the edges of one
                            * row, whatever their class, run together (0: the classes across
                            * the whole level, each launched after the other) */
    uint32_t chunk_min;    /* ... (the service's: 256 edges from levels of a million) */
    int custom_pdl;        /* customization: each level launch after the first a programmatic
                            * dependent launch (Hopper), its blocks loading their edges'
                            * first triangles while the level before still runs */
} gp_dcch_tune;

/* The service's values (the constants of kernels/cch_internal.cuh; zeroes in a build without
 * CUDA). */
void gp_dcch_tune_defaults(gp_dcch_tune *t);
/* The class a customization launch of one level gives an edge of ntri lower triangles under t:
 * 0 a thread, 1 SHORT_W lanes, 2 a warp, 3 a block (kernels/cch.cu; -1 in a build without
 * CUDA). */
int gp_dcch_edge_class(uint64_t ntri, const gp_dcch_tune *t);
/* The process-wide options every later device CCH is made with (NULL: the defaults again).
 * A no-op in a build without CUDA. */
void gp_dcch_tune_set(const gp_dcch_tune *t);
/* What engine/cch.h gp_cch_gpu_sweep does to one CCH's device state, on one device CCH with the
 * current process-wide options (gp_cch_gpu_sweep holds its lock around this). */
int gp_dcch_retune(gp_dcch *d, void *stream, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
