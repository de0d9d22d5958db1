/* planload.cu - ECMP link-load accumulation per destination on the GPU (contract in planload.h).
 * Block b handles destination dst0 + b with its own slice of the scratch: next-hop counts, DAG
 * in-degrees, flow and a done flag per router. Rounds of Kahn's order run until a round forwards
 * nothing; the DAG's depth bounds them (a handful for router topologies).
 */
#include "kernels/planload.h"

#include <cuda_runtime.h>

#define PL_THREADS 256

struct pl_scratch {
    uint32_t *nh, *indeg;
    double *flow;
    uint8_t *done;
};

__device__ static pl_scratch slice(void *base, uint32_t n, uint32_t b) {
    char *p = (char *)base + (size_t)b * ((size_t)n * 17 + 16);
    pl_scratch s;
    s.flow = (double *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
    s.nh = (uint32_t *)(s.flow + n);
    s.indeg = s.nh + n;
    s.done = (uint8_t *)(s.indeg + n);
    return s;
}

__device__ static bool on_dag(const gp_plan_dev &g, uint32_t t, uint32_t u, uint32_t l,
                              uint64_t du) {
    uint32_t k = g.nb[l];
    if (k == u) return false;
    uint64_t dk = g.dist[(uint64_t)k * g.n + t];
    return dk != UINT64_MAX && dk + g.nbw[l] == du;
}

__global__ static void plan_load_kernel(gp_plan_dev g, uint32_t dst0, double *load, double *lost,
                                        void *scratch) {
    uint32_t t = dst0 + blockIdx.x, n = g.n, cap = g.ecmp_max ? g.ecmp_max : 0xffffffffu;
    if (g.doff[t] == g.doff[t + 1]) return;
    pl_scratch s = slice(scratch, n, blockIdx.x);
    __shared__ int progressed;
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x)
        s.indeg[u] = 0, s.flow[u] = 0, s.done[u] = 0;
    __syncthreads();
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
        uint64_t du = g.dist[(uint64_t)u * n + t];
        uint32_t c = 0;
        if (u != t && du != UINT64_MAX)
            for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && c < cap; l++)
                if (on_dag(g, t, u, l, du)) c++, atomicAdd(&s.indeg[g.nb[l]], 1u);
        s.nh[u] = c;
    }
    __syncthreads();
    for (uint32_t i = g.doff[t] + threadIdx.x; i < g.doff[t + 1]; i += blockDim.x) {
        uint32_t src = g.dsrc[i];
        if (src == t) continue;
        if (!s.nh[src]) atomicAdd(lost, g.dvol[i]);
        else atomicAdd(&s.flow[src], g.dvol[i]);
    }
    __syncthreads();
    for (;;) {
        if (threadIdx.x == 0) progressed = 0;
        __syncthreads();
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
            if (s.done[u] || !s.nh[u] || atomicAdd(&s.indeg[u], 0u) != 0) continue;
            s.done[u] = 1;
            progressed = 1;
            double share = atomicAdd(&s.flow[u], 0.0) / s.nh[u];
            uint64_t du = g.dist[(uint64_t)u * n + t];
            uint32_t c = 0;
            for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && c < s.nh[u]; l++) {
                if (!on_dag(g, t, u, l, du)) continue;
                c++;
                uint32_t k = g.nb[l];
                if (share != 0) atomicAdd(&load[l], share);
                atomicAdd(&s.flow[k], share);
                __threadfence_block(); /* the flow lands before the in-degree drops */
                atomicSub(&s.indeg[k], 1u);
            }
        }
        __syncthreads();
        if (!progressed) break;
        __syncthreads();
    }
}

extern "C" size_t gp_cuda_plan_scratch_bytes(uint32_t n, uint32_t ndst) {
    return (size_t)ndst * ((size_t)n * 17 + 16) + 16;
}

extern "C" int gp_cuda_plan_load(const gp_plan_dev *in, uint32_t dst0, uint32_t ndst, double *load,
                                 double *lost, void *scratch, void *stream) {
    if (!ndst) return 0;
    plan_load_kernel<<<ndst, PL_THREADS, 0, (cudaStream_t)stream>>>(*in, dst0, load, lost, scratch);
    return (int)cudaGetLastError();
}
