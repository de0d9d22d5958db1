/* planload.h - the GPU pass of ECMP link-load accumulation (kernels/planload.cu) behind a plain-C
 * interface, used by engine/planning_cuda.c (gp_plan_load_cuda) and its GPU == CPU test.
 *
 * One thread block per destination t: every router counts its ECMP next hops towards t from the
 * all-pairs matrix (w(u,k) + d(k,t) == d(u,t), capped at ecmp_max, lowest neighbour first, as
 * engine/ecmp.h), the demands towards t seed each source's flow, and the flow is pushed through
 * the shortest-path DAG in rounds of Kahn's order (a router forwards once every router sending it
 * traffic for t has), each round one pass of the block's threads over the routers. Link loads are
 * accumulated with double atomicAdd, so the last bits may differ from the CPU's order of addition.
 * gp_cuda_plan_fail runs batches of failure scenarios with the same per-destination pass.
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

/* A batch of failure scenarios (device pointers). Work item i recomputes destination item_dst[i]
 * under scenario item_scen[i] (batch-local): its distance column on the failed network (rounds
 * of Bellman-Ford relaxation in one block), its old load contribution taken out of loads[sc * L ..]
 * and the new one added (lost[sc] likewise), and the (router, destination) pairs whose ECMP
 * next-hop set changed or that lost connectivity added to changed[sc] / disconnected[sc]. The
 * caller seeds loads with the base loads and lost with the base unrouted volume, and lists only
 * the destinations a scenario touches. Scenario sc fails links flinks[foff[sc] .. foff[sc + 1])
 * and routers frouters[roff[sc] .. roff[sc + 1]). */
typedef struct gp_plan_fail_dev {
    const uint32_t *item_scen, *item_dst;
    uint32_t nitems;
    const uint32_t *foff, *flinks, *roff, *frouters;
    double *loads, *lost;
    unsigned long long *changed, *disconnected;
} gp_plan_fail_dev;

/* Device scratch bytes for nblocks blocks of gp_cuda_plan_fail (zeroing not needed). */
size_t gp_cuda_plan_fail_scratch_bytes(uint32_t n, uint32_t L, uint32_t nblocks);
/* Runs every work item of f on nblocks blocks. Asynchronous on stream; 0 or a cudaError_t. */
int gp_cuda_plan_fail(const gp_plan_dev *in, const gp_plan_fail_dev *f, uint32_t nblocks,
                      void *scratch, void *stream);

#ifdef __cplusplus
}
#endif
#endif
