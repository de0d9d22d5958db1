/* fw.h - all-pairs shortest paths on the GPU (blocked Floyd-Warshall, kernels/fw.cu),
 * called by the CUDA backend (engine/cuda_backend.c) on one of its pooled streams.
 * Plain C: the stream is passed as void* (a cudaStream_t). */
#ifndef GP_CUDA_APSP_H
#define GP_CUDA_APSP_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same contract as gp_backend_ops.apsp: dist n*n (GP_INF unreachable), next n*n or NULL. */
int gp_cuda_apsp(void *stream, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err);

/* Element kinds of the device matrix. AUTO picks the narrowest that holds every path length, from
 * the bound (n-1) * max arc weight: U16 (packed pairs, about twice the rate; distances only) below
 * 0x7fff, U32 below 0x7fffffff (0xffffff with next hops, which pack the pivot index into the low
 * 7 bits), else U64. A forced kind that cannot hold the bound is GP_EINVAL, never a wrong number. */
enum { GP_APSP_AUTO = 0, GP_APSP_U16 = 1, GP_APSP_U32 = 2, GP_APSP_U64 = 3 };
typedef struct gp_cuda_apsp_opts {
    int kind; /* GP_APSP_* */
} gp_cuda_apsp_opts;
typedef struct gp_cuda_apsp_stats {
    int kind;       /* the kind used */
    uint32_t npad;  /* n padded to the round block */
    uint32_t block; /* round block */
    double solve_s; /* device time of the rounds (CUDA events) */
    double total_s; /* wall time of the call, copies included */
} gp_cuda_apsp_stats;
/* gp_cuda_apsp with options (NULL: automatic) and statistics (may be NULL). */
int gp_cuda_apsp_ex(void *stream, const gp_graph *g, uint64_t *dist, uint32_t *next,
                    const gp_cuda_apsp_opts *opts, gp_cuda_apsp_stats *stats, gp_err *err);
/* The bound on stored path lengths that chooses the kind: (n-1) * max arc weight (self-loops
 * ignored). With next hops on a graph with zero-weight arcs, weights become w * 2^zshift + 1
 * (2^zshift >= n: shortest, then fewest hops, so next-hop walks always end) and the bound grows
 * with them; *zshift (may be NULL) receives the shift. */
uint64_t gp_cuda_apsp_bound(const gp_graph *g, int next, int *zshift);
/* Number of usable CUDA devices (0 when none, or the driver cannot be reached). */
int gp_cuda_apsp_devices(void);

#ifdef __cplusplus
}
#endif
#endif
