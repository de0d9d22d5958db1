/* sssp.h - GPU single-source shortest paths (kernels/sssp.cu) behind a plain-C interface, used
 * by the CUDA backend (engine/cuda_backend.c) and the kernel lab (bench/lab_sssp.cu).
 *
 * Two algorithms (see the header comment of kernels/sssp.cu for the design and the measurements):
 *  - GP_SSSP_SEED: Martin, Torres and Gavilanes (ICCS 2009): cost / unvisited / frontier arrays, a
 *    relax kernel, a min-reduction kept on the GPU and an update kernel; one settled "layer" of equal
 *    distance per iteration. The baseline.
 *  - GP_SSSP_NEARFAR: near-far delta-stepping (Davidson et al., IPDPS 2014) with compacted queues in
 *    one persistent cooperative kernel, 64-bit atomicMin distances, warp-cooperative expansion of
 *    high-degree nodes, and batches of sources processed together (tables).
 * Predecessors are computed afterwards on the GPU from the final distances over the reverse CSR.
 *
 * Ownership: a gp_dgraph is the device copy of one gp_graph, stored in g->dev and freed through
 * g->dev_free (gp_dgraph_free) with the graph. A gp_sssp_ws is one stream's workspace: used by one
 * request at a time (the backend's stream pool guarantees it), sized on first use for the graph and
 * batch at hand and grown only when a larger graph or batch arrives. Callers' output arrays are
 * host memory and are never retained.
 */
#ifndef GP_CUDA_SSSP_H
#define GP_CUDA_SSSP_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gp_sssp_variant { GP_SSSP_NEARFAR = 0, GP_SSSP_SEED = 1 };

/* Tuning. Zero fields mean "the default" (chosen by measurement, kernels/sssp.cu). */
typedef struct gp_sssp_params {
    int variant;      /* enum gp_sssp_variant */
    double delta_mul; /* near-far bucket width = delta_mul x mean arc weight; < 0: infinite */
    int blocks;       /* cooperative grid blocks; 0: the stream's share of the GPU */
    int batch;        /* most sources per batched run (tables); 0: from the memory budget */
} gp_sssp_params;

typedef struct gp_sssp_stats {
    double gpu_ms;       /* CUDA-event time of the device work (init, search, predecessors) */
    uint32_t iterations; /* synchronised rounds (near-far) or settled layers (seed) */
    uint32_t batches;    /* table: batched runs */
} gp_sssp_stats;

typedef struct gp_dgraph gp_dgraph;
typedef struct gp_sssp_ws gp_sssp_ws;

/* Copies g's forward and reverse CSR to the current device. */
int gp_dgraph_new(const gp_graph *g, gp_dgraph **out, gp_err *err);
void gp_dgraph_free(void *dg); /* accepts NULL; the signature of gp_graph.dev_free */
uint64_t gp_dgraph_bytes(const gp_dgraph *dg);

/* A workspace bound to stream (a cudaStream_t); share = how many workspaces may run cooperative
 * kernels at once (the pool size): each gets 1/share of the co-resident blocks, so concurrent
 * persistent kernels can never wait on each other. mem_budget: bytes a batched run may use (0: a
 * default). */
gp_sssp_ws *gp_sssp_ws_new(void *stream, int share, uint64_t mem_budget, gp_err *err);
void gp_sssp_ws_free(gp_sssp_ws *ws);
uint64_t gp_sssp_ws_bytes(const gp_sssp_ws *ws);

/* One-to-all from src. dist (n entries) and pred (n or NULL) are host arrays; dist may be NULL too
 * (the lab times the device work alone). Nodes beyond max_dist are reported unreachable. */
int gp_cuda_sssp(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *p, uint32_t src,
                 uint64_t max_dist, uint64_t *dist, uint32_t *pred, gp_sssp_stats *st, gp_err *err);
/* Shortest s-t path; the search stops once t is settled. *dist: its length (GP_INF: no route,
 * then *nodes NULL and *len 0); *nodes (malloc'ed, the caller frees it): s ... t, *len of them
 * (engine/backend.h gp_path's fields). */
int gp_cuda_p2p(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *p, uint32_t s,
                uint32_t t, uint64_t *dist, uint32_t **nodes, uint32_t *len, gp_sssp_stats *st,
                gp_err *err);
/* out[i*nt + j] = dist(src[i], dst[j]); sources in batches of the workspace's batch size. */
int gp_cuda_table(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *p, const uint32_t *src,
                  uint32_t ns, const uint32_t *dst, uint32_t nt, uint64_t *out, gp_sssp_stats *st,
                  gp_err *err);

/* 1 once a sticky CUDA error (illegal address, launch failure, ...) was seen in this process: the
 * context is lost and every later call would fail. */
int gp_cuda_device_broken(void);
/* Test hook: launches a kernel that writes through an invalid pointer on the workspace's stream,
 * which makes the context's error sticky. Returns the resulting status. */
int gp_cuda_debug_fault(gp_sssp_ws *ws, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
