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
    const uint64_t *distT; /* plan_fail: dist transposed, distT[t * n + u] */
    double *flow; /* n * n: flow[t * n + u], the traffic towards t that u forwards without failures;
                     written by gp_cuda_plan_load when not NULL (rows of destinations without
                     demands untouched), read by gp_cuda_plan_fail */
} gp_plan_dev;

/* Device scratch bytes for batches of ndst destinations. */
size_t gp_cuda_plan_scratch_bytes(uint32_t n, uint32_t ndst);
/* Adds the loads of the demands towards destinations dst0 .. dst0 + ndst - 1 to load (L doubles,
 * device) and their unrouted volume to *lost (one double, device). scratch: device memory of
 * gp_cuda_plan_scratch_bytes(n, ndst). Asynchronous on stream; returns 0, or a cudaError_t. */
int gp_cuda_plan_load(const gp_plan_dev *in, uint32_t dst0, uint32_t ndst, double *load,
                      double *lost, void *scratch, void *stream);

/* A batch of failure scenarios (device pointers). Work item i recomputes destination item_dst[i]
 * under scenario item_scen[i] (batch-local), one block each: its distance column on the failed
 * network (from the base column distT: only the routers whose every base shortest path crosses a
 * failed element are recomputed, by rounds of Bellman-Ford relaxation among them), the new flows
 * through the new DAG, and on each link of a router whose flow or next hops differ from the base
 * (flow) the new share minus the old added to loads[sc * L ..] (lost[sc] likewise), and the
 * (router, destination) pairs whose ECMP next-hop set changed or that lost connectivity added to
 * changed[sc] / disconnected[sc]. The caller seeds loads with the base loads and lost with the
 * base unrouted volume, and lists only the destinations a scenario touches. Scenario sc fails
 * links flinks[foff[sc] .. foff[sc + 1]) and routers frouters[roff[sc] .. roff[sc + 1]).
 * list (may be NULL): each changed pair is also appended to list[sc * list_max ..] as
 * destination << 33 | router << 1 | disconnected, nlisted[sc] counting every append (those past
 * list_max are dropped; the order is not deterministic). */
typedef struct gp_plan_fail_dev {
    const uint32_t *item_scen, *item_dst;
    uint32_t nitems;
    const uint32_t *foff, *flinks, *roff, *frouters;
    double *loads, *lost;
    unsigned long long *changed, *disconnected;
    unsigned long long *list;
    unsigned int *nlisted;
    uint32_t list_max;
} gp_plan_fail_dev;

/* One scenario's outcome from its loads (gp_plan_finish's rules, engine/planning.h). */
typedef struct gp_plan_fin {
    double worst_utilization, worst_load, lost;
    uint32_t worst_link, top[8]; /* 0xffffffff: none */
    double top_load[8];
} gp_plan_fin;

/* Device scratch bytes for nblocks blocks of gp_cuda_plan_fail (zeroing not needed). */
size_t gp_cuda_plan_fail_scratch_bytes(uint32_t n, uint32_t L, uint32_t nblocks);
/* Runs every work item of f on nblocks blocks. Asynchronous on stream; 0 or a cudaError_t. */
int gp_cuda_plan_fail(const gp_plan_dev *in, const gp_plan_fail_dev *f, uint32_t nblocks,
                      void *scratch, void *stream);

/* out[sc] (device) for the nscen scenarios of f from f's loads and lost: loads below eps in
 * magnitude count as 0, failed links as 0; cap (device, L, may be NULL). Asynchronous. */
int gp_cuda_plan_finish(const gp_plan_dev *in, const gp_plan_fail_dev *f, uint32_t nscen,
                        const double *cap, double eps, gp_plan_fin *out, void *stream);
/* b = a transposed (n x n words, device). Asynchronous. */
int gp_cuda_plan_transpose(const uint64_t *a, uint64_t *b, uint32_t n, void *stream);

#ifdef __cplusplus
}
#endif
#endif
