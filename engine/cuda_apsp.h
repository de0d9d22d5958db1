/* cuda_apsp.h - all-pairs shortest paths on the GPU (blocked Floyd-Warshall, kernels/fw.cu),
 * called by the CUDA backend (engine/cuda_backend.c) on one of its pooled streams.
 * Plain C: the stream is passed as void* (a cudaStream_t). */
#ifndef GP_CUDA_APSP_H
#define GP_CUDA_APSP_H

#include "../graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same contract as gp_backend_ops.apsp: dist n*n (GP_INF unreachable), next n*n or NULL. */
int gp_cuda_apsp(void *stream, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
