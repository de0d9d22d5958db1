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

/* A distance column towards one destination: c[u * stride]. */
struct pl_col {
    const uint64_t *c;
    size_t stride;
    __device__ uint64_t operator[](uint32_t u) const { return c[u * stride]; }
};

/* Failure masks of one scenario (NULL: none). */
struct pl_mask {
    const uint8_t *link, *router;
};

__device__ static bool on_dag(const gp_plan_dev &g, const pl_col &col, const pl_mask &m, uint32_t u,
                              uint32_t l, uint64_t du) {
    uint32_t k = g.nb[l];
    if (k == u || (m.link && (m.link[l] || m.router[k]))) return false;
    uint64_t dk = col[k];
    return dk != UINT64_MAX && dk + g.nbw[l] == du;
}

/* The whole block adds sign x the loads of the demands towards t (distances col, failures m) to
 * load and sign x their unrouted volume to *lost. Starts and ends with the block in step. */
__device__ static void accumulate(const gp_plan_dev &g, uint32_t t, const pl_col &col,
                                  const pl_mask &m, double sign, double *load, double *lost,
                                  pl_scratch s) {
    uint32_t n = g.n, cap = g.ecmp_max ? g.ecmp_max : 0xffffffffu;
    __shared__ int progressed;
    if (g.doff[t] == g.doff[t + 1]) return; /* no demands towards t (the same for the block) */
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x)
        s.indeg[u] = 0, s.flow[u] = 0, s.done[u] = 0;
    __syncthreads();
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
        uint64_t du = col[u];
        uint32_t c = 0;
        if (u != t && du != UINT64_MAX && !(m.router && m.router[u]))
            for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && c < cap; l++)
                if (on_dag(g, col, m, u, l, du)) c++, atomicAdd(&s.indeg[g.nb[l]], 1u);
        s.nh[u] = c;
    }
    __syncthreads();
    for (uint32_t i = g.doff[t] + threadIdx.x; i < g.doff[t + 1]; i += blockDim.x) {
        uint32_t src = g.dsrc[i];
        if (src == t) continue;
        if (!s.nh[src]) atomicAdd(lost, sign * g.dvol[i]);
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
            uint64_t du = col[u];
            uint32_t c = 0;
            for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && c < s.nh[u]; l++) {
                if (!on_dag(g, col, m, u, l, du)) continue;
                c++;
                uint32_t k = g.nb[l];
                if (share != 0) atomicAdd(&load[l], sign * share);
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

__global__ static void plan_load_kernel(gp_plan_dev g, uint32_t dst0, double *load, double *lost,
                                        void *scratch) {
    uint32_t t = dst0 + blockIdx.x;
    pl_col col = {g.dist + t, g.n};
    accumulate(g, t, col, pl_mask{NULL, NULL}, 1.0, load, lost, slice(scratch, g.n, blockIdx.x));
}

/* ---- failure scenarios ---- */

/* Per block: the pl_scratch slice, then the old and the new distance column (n each), the router
 * mask (n) and the link mask (L). */
static __host__ __device__ size_t fail_slice_bytes(uint32_t n, uint32_t L) {
    return (((size_t)n * 17 + 16) + (size_t)n * 16 + (size_t)n + L + 15) & ~(size_t)7;
}

/* col2[u] = d(u, t) without the failed links and routers: rounds of u <- min over live links
 * (u -> k) of col2[k] + w, in place, until a round changes nothing (values only ever fall and
 * are always lengths of real paths, so the fixed point is the distances). */
__device__ static void column(const gp_plan_dev &g, uint32_t t, const pl_mask &m, uint64_t *col2) {
    __shared__ int changed;
    uint32_t n = g.n;
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x)
        col2[u] = u == t && !m.router[t] ? 0 : UINT64_MAX;
    __syncthreads();
    volatile uint64_t *vc = col2;
    for (;;) {
        if (threadIdx.x == 0) changed = 0;
        __syncthreads();
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
            if (u == t || m.router[u]) continue;
            uint64_t best = vc[u];
            for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1]; l++) {
                uint32_t k = g.nb[l];
                if (m.link[l] || m.router[k]) continue;
                uint64_t dk = vc[k];
                if (dk != UINT64_MAX && dk + g.nbw[l] < best) best = dk + g.nbw[l];
            }
            if (best < vc[u]) vc[u] = best, changed = 1;
        }
        __syncthreads();
        if (!changed) break;
        __syncthreads();
    }
}

__device__ static bool same_hops(const gp_plan_dev &g, const pl_col &a, const pl_col &b,
                                 const pl_mask &m, uint32_t u) {
    uint32_t cap = g.ecmp_max ? g.ecmp_max : 0xffffffffu, ca = 0, cb = 0;
    uint64_t da = a[u], db = b[u];
    for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1]; l++) {
        bool x = ca < cap && da != UINT64_MAX && on_dag(g, a, pl_mask{NULL, NULL}, u, l, da);
        bool y = cb < cap && db != UINT64_MAX && on_dag(g, b, m, u, l, db);
        ca += x;
        cb += y;
        if (x != y) return false;
    }
    return true;
}

__global__ static void plan_fail_kernel(gp_plan_dev g, gp_plan_fail_dev f, void *scratch) {
    uint32_t n = g.n, L = g.nb_off[n];
    char *base = (char *)scratch + (size_t)blockIdx.x * fail_slice_bytes(n, L);
    pl_scratch s;
    s.flow = (double *)base;
    s.nh = (uint32_t *)(s.flow + n);
    s.indeg = s.nh + n;
    s.done = (uint8_t *)(s.indeg + n);
    uint64_t *col2 = (uint64_t *)(((uintptr_t)(s.done + n) + 7) & ~(uintptr_t)7);
    uint64_t *col1 = col2 + n; /* the base column, gathered once (dist is row-major) */
    uint8_t *dead_r = (uint8_t *)(col1 + n), *dead_l = dead_r + n;
    __shared__ unsigned long long changed, disconnected;
    for (uint32_t i = blockIdx.x; i < f.nitems; i += gridDim.x) {
        uint32_t sc = f.item_scen[i], t = f.item_dst[i];
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x)
            dead_r[u] = 0, col1[u] = g.dist[(size_t)u * n + t];
        for (uint32_t l = threadIdx.x; l < L; l += blockDim.x) dead_l[l] = 0;
        if (threadIdx.x == 0) changed = 0, disconnected = 0;
        __syncthreads();
        for (uint32_t k = f.foff[sc] + threadIdx.x; k < f.foff[sc + 1]; k += blockDim.x)
            dead_l[f.flinks[k]] = 1;
        for (uint32_t k = f.roff[sc] + threadIdx.x; k < f.roff[sc + 1]; k += blockDim.x)
            dead_r[f.frouters[k]] = 1;
        __syncthreads();
        pl_mask m = {dead_l, dead_r};
        column(g, t, m, col2);
        pl_col old = {col1, 1}, now = {col2, 1};
        double *load = f.loads + (size_t)sc * L;
        accumulate(g, t, old, pl_mask{NULL, NULL}, -1.0, load, &f.lost[sc], s);
        accumulate(g, t, now, m, 1.0, load, &f.lost[sc], s);
        unsigned long long ch = 0, dis = 0;
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
            if (u == t) continue;
            uint64_t a = old[u];
            if (a != UINT64_MAX && col2[u] == UINT64_MAX) dis++;
            if (dead_r[u] ? a != UINT64_MAX : !same_hops(g, old, now, m, u)) ch++;
        }
        if (ch) atomicAdd(&changed, ch);
        if (dis) atomicAdd(&disconnected, dis);
        __syncthreads();
        if (threadIdx.x == 0) {
            if (changed) atomicAdd(&f.changed[sc], changed);
            if (disconnected) atomicAdd(&f.disconnected[sc], disconnected);
        }
        __syncthreads();
    }
}

extern "C" size_t gp_cuda_plan_fail_scratch_bytes(uint32_t n, uint32_t L, uint32_t nblocks) {
    return (size_t)nblocks * fail_slice_bytes(n, L) + 16;
}

extern "C" int gp_cuda_plan_fail(const gp_plan_dev *in, const gp_plan_fail_dev *f, uint32_t nblocks,
                                 void *scratch, void *stream) {
    if (!f->nitems || !nblocks) return 0;
    plan_fail_kernel<<<nblocks, PL_THREADS, 0, (cudaStream_t)stream>>>(*in, *f, scratch);
    return (int)cudaGetLastError();
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
