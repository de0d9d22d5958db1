/* planload.h - the GPU pass of ECMP link-load accumulation (kernels/planload.cu) behind a plain-C
 * interface, used by engine/planning_cuda.c (gp_plan_load_cuda) and its GPU == CPU test.
 *
 * One thread block per destination t: every router counts its ECMP next hops towards t from the
 * all-pairs matrix (w(u,k) + d(k,t) == d(u,t), capped at ecmp_max, lowest neighbour first, as
 * engine/ecmp.h), the demands towards t seed each source's flow, and the flow is pushed through
 * the shortest-path DAG in rounds of Kahn's order (a router forwards once every router sending it
 * traffic for t has), each round one pass of the block's threads over the routers. Link loads are
 * accumulated with double atomicAdd, so the last bits may differ from the CPU's order of addition.
 * Plain C: the stream is passed as void * (a cudaStream_t).
 */
#ifndef GP_CUDA_PLANLOAD_H
#define GP_CUDA_PLANLOAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers of one computation (engine/planning.h's arrays, uploaded). */
typedef struct gp_plan_dev {
    uint32_t n, ecmp_max;   /* ecmp_max 0: no cap */
    const uint32_t *nb_off; /* n + 1 */
    const uint32_t *nb;     /* L: head of each directed link */
    const uint32_t *nbw;    /* L: its weight */
    const uint64_t *dist;   /* n * n, row-major: dist[u * n + t]; UINT64_MAX unreachable */
    const uint32_t *doff;   /* n + 1: demands towards t are dsrc/dvol[doff[t] .. doff[t + 1]) */
    const uint32_t *dsrc;
    const double *dvol;
} gp_plan_dev;

/* Device scratch bytes for batches of ndst destinations. */
size_t gp_cuda_plan_scratch_bytes(uint32_t n, uint32_t ndst);
/* Adds the loads of the demands towards destinations dst0 .. dst0 + ndst - 1 to load (L doubles,
 * device) and their unrouted volume to *lost (one double, device). scratch: device memory of
 * gp_cuda_plan_scratch_bytes(n, ndst). Asynchronous on stream; returns 0, or a cudaError_t. */
int gp_cuda_plan_load(const gp_plan_dev *in, uint32_t dst0, uint32_t ndst, double *load,
                      double *lost, void *scratch, void *stream);

#ifdef __cplusplus
}
#endif
#endif
