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

/* The block counts every router's next hops towards t on col (failures m: may be NULL) into
 * s.nh and the DAG's in-degrees into s.indeg, flows and done flags zeroed. */
__device__ static void dag(const gp_plan_dev &g, uint32_t t, const pl_col &col, const pl_mask &m,
                           pl_scratch s) {
    uint32_t n = g.n, cap = g.ecmp_max ? g.ecmp_max : 0xffffffffu;
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
}

/* The block pushes the flows of s through the DAG in Kahn's rounds, adding sign x each share to
 * its link's load (load NULL: flows only). */
__device__ static void kahn(const gp_plan_dev &g, const pl_col &col, const pl_mask &m, double sign,
                            double *load, pl_scratch s) {
    uint32_t n = g.n;
    __shared__ int progressed;
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
                if (load && share != 0) atomicAdd(&load[l], sign * share);
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

/* The whole block adds sign x the loads of the demands towards t (distances col, failures m) to
 * load and sign x their unrouted volume to *lost. Starts and ends with the block in step. */
__device__ static void accumulate(const gp_plan_dev &g, uint32_t t, const pl_col &col,
                                  const pl_mask &m, double sign, double *load, double *lost,
                                  pl_scratch s) {
    if (g.doff[t] == g.doff[t + 1]) return; /* no demands towards t (the same for the block) */
    dag(g, t, col, m, s);
    for (uint32_t i = g.doff[t] + threadIdx.x; i < g.doff[t + 1]; i += blockDim.x) {
        uint32_t src = g.dsrc[i];
        if (src == t) continue;
        if (!s.nh[src]) atomicAdd(lost, sign * g.dvol[i]);
        else atomicAdd(&s.flow[src], g.dvol[i]);
    }
    __syncthreads();
    kahn(g, col, m, sign, load, s);
}

__global__ static void plan_load_kernel(gp_plan_dev g, uint32_t dst0, double *load, double *lost,
                                        void *scratch) {
    uint32_t t = dst0 + blockIdx.x;
    pl_col col = {g.dist + t, g.n};
    pl_scratch s = slice(scratch, g.n, blockIdx.x);
    accumulate(g, t, col, pl_mask{NULL, NULL}, 1.0, load, lost, s);
    if (g.flow && g.doff[t] != g.doff[t + 1]) /* each router's flow towards t, for plan_fail */
        for (uint32_t u = threadIdx.x; u < g.n; u += blockDim.x)
            g.flow[(size_t)t * g.n + u] = s.flow[u];
}

/* ---- failure scenarios ---- */

/* Per block: flow and the new distance column (n doubles / words each), next-hop counts and
 * in-degrees (n each), then done, affected and failed-router flags (n bytes each) and the
 * failed-link flags (L bytes). */
static __host__ __device__ size_t fail_slice_bytes(uint32_t n, uint32_t L) {
    return ((size_t)n * 27 + L + 15) & ~(size_t)15;
}

/* col2[u] = d(u, t) without the failed links and routers, from the base column b: a router keeps
 * its distance unless every base shortest path from it crosses a failed element (aff[u]: marked
 * in rounds, from the failure towards the sources); only those are recomputed, by rounds of
 * u <- min over live links (u -> k) of col2[k] + w among them (values only fall and are always
 * lengths of real paths, the others are exact, so the fixed point is the distances). */
__device__ static void column(const gp_plan_dev &g, uint32_t t, const pl_col &b, const pl_mask &m,
                              uint64_t *col2, uint8_t *aff) {
    __shared__ int changed, any; /* any: a live router lost its distance */
    uint32_t n = g.n;
    volatile uint8_t *va = aff;
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) aff[u] = m.router[u];
    if (threadIdx.x == 0) any = 0;
    __syncthreads();
    for (;;) {
        if (threadIdx.x == 0) changed = 0;
        __syncthreads();
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
            uint64_t du = b[u];
            if (u == t || va[u] || du == UINT64_MAX) continue;
            bool alive = false;
            for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && !alive; l++) {
                uint32_t k = g.nb[l];
                uint64_t dk = b[k];
                alive = k != u && !m.link[l] && !va[k] && dk != UINT64_MAX && dk + g.nbw[l] == du;
            }
            if (!alive) va[u] = 1, changed = 1, any = 1;
        }
        __syncthreads();
        if (!changed) break;
        __syncthreads();
    }
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) col2[u] = aff[u] ? UINT64_MAX : b[u];
    __syncthreads();
    if (!any) return; /* the same block-wide: read after the barrier */
    volatile uint64_t *vc = col2;
    for (;;) {
        if (threadIdx.x == 0) changed = 0;
        __syncthreads();
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
            if (u == t || !aff[u] || m.router[u]) continue;
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

/* Next hops of u on column c (failures m), capped: their number. */
__device__ static uint32_t hops(const gp_plan_dev &g, const pl_col &c, const pl_mask &m,
                                uint32_t u) {
    uint32_t cap = g.ecmp_max ? g.ecmp_max : 0xffffffffu, k = 0;
    uint64_t du = c[u];
    if (du == UINT64_MAX) return 0;
    for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && k < cap; l++)
        k += on_dag(g, c, m, u, l, du);
    return k;
}

/* Moves destination t's traffic from the base routing (column b, base flows g.flow) to the new
 * one (column now, failures m): the new flows through the new DAG in Kahn's order (no load
 * written), then one pass adds to each link of a router whose flow or next hops differ the new
 * share minus the old, and to *lost the new unrouted volume minus the old. */
__device__ static void reroute(const gp_plan_dev &g, uint32_t t, const pl_col &b, const pl_col &now,
                               const pl_mask &m, double *load, double *lost, pl_scratch s) {
    uint32_t n = g.n;
    pl_mask none = {NULL, NULL};
    dag(g, t, now, m, s);
    for (uint32_t i = g.doff[t] + threadIdx.x; i < g.doff[t + 1]; i += blockDim.x) {
        uint32_t src = g.dsrc[i];
        if (src == t) continue;
        bool was = hops(g, b, none, src) == 0, is = !s.nh[src];
        if (!is) atomicAdd(&s.flow[src], g.dvol[i]);
        if (was != is) atomicAdd(lost, is ? g.dvol[i] : -g.dvol[i]);
    }
    __syncthreads();
    kahn(g, now, m, 1.0, NULL, s);
    const double *bf = g.flow + (size_t)t * n;
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
        if (u == t) continue;
        uint32_t ho = hops(g, b, none, u), hn = s.nh[u];
        double so = ho ? bf[u] / ho : 0, sn = hn ? s.flow[u] / hn : 0;
        if (so == 0 && sn == 0) continue;
        uint64_t da = b[u], dn = now[u];
        uint32_t ca = 0, cb = 0;
        for (uint32_t l = g.nb_off[u]; l < g.nb_off[u + 1] && (ca < ho || cb < hn); l++) {
            bool x = ca < ho && on_dag(g, b, none, u, l, da);
            bool y = cb < hn && on_dag(g, now, m, u, l, dn);
            ca += x;
            cb += y;
            double delta = (y ? sn : 0) - (x ? so : 0);
            if (delta != 0) atomicAdd(&load[l], delta);
        }
    }
    __syncthreads();
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
    uint64_t *col2 = (uint64_t *)(s.flow + n);
    s.nh = (uint32_t *)(col2 + n);
    s.indeg = s.nh + n;
    s.done = (uint8_t *)(s.indeg + n);
    uint8_t *aff = s.done + n, *dead_r = aff + n, *dead_l = dead_r + n;
    __shared__ unsigned long long changed, disconnected;
    for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) dead_r[u] = 0;
    for (uint32_t l = threadIdx.x; l < L; l += blockDim.x) dead_l[l] = 0;
    for (uint32_t i = blockIdx.x; i < f.nitems; i += gridDim.x) {
        uint32_t sc = f.item_scen[i], t = f.item_dst[i];
        if (threadIdx.x == 0) changed = 0, disconnected = 0;
        __syncthreads();
        for (uint32_t k = f.foff[sc] + threadIdx.x; k < f.foff[sc + 1]; k += blockDim.x)
            dead_l[f.flinks[k]] = 1;
        for (uint32_t k = f.roff[sc] + threadIdx.x; k < f.roff[sc + 1]; k += blockDim.x)
            dead_r[f.frouters[k]] = 1;
        __syncthreads();
        pl_mask m = {dead_l, dead_r};
        pl_col old = {g.distT + (size_t)t * n, 1}, now = {col2, 1};
        column(g, t, old, m, col2, aff);
        if (g.doff[t] != g.doff[t + 1]) /* the same for the block */
            reroute(g, t, old, now, m, f.loads + (size_t)sc * L, &f.lost[sc], s);
        unsigned long long ch = 0, dis = 0;
        for (uint32_t u = threadIdx.x; u < n; u += blockDim.x) {
            if (u == t) continue;
            uint64_t a = old[u];
            bool d = a != UINT64_MAX && col2[u] == UINT64_MAX;
            bool c = dead_r[u] ? a != UINT64_MAX : !same_hops(g, old, now, m, u);
            dis += d;
            ch += c;
            if (c && f.list) {
                unsigned int at = atomicAdd(&f.nlisted[sc], 1u);
                if (at < f.list_max)
                    f.list[(size_t)sc * f.list_max + at] = (unsigned long long)t << 33 |
                                                           (unsigned long long)u << 1 | d;
            }
        }
        if (ch) atomicAdd(&changed, ch);
        if (dis) atomicAdd(&disconnected, dis);
        __syncthreads();
        if (threadIdx.x == 0) {
            if (changed) atomicAdd(&f.changed[sc], changed);
            if (disconnected) atomicAdd(&f.disconnected[sc], disconnected);
        }
        for (uint32_t k = f.foff[sc] + threadIdx.x; k < f.foff[sc + 1]; k += blockDim.x)
            dead_l[f.flinks[k]] = 0;
        for (uint32_t k = f.roff[sc] + threadIdx.x; k < f.roff[sc + 1]; k += blockDim.x)
            dead_r[f.frouters[k]] = 0;
        __syncthreads();
    }
}

/* One thread per scenario: gp_plan_finish's rounding cut, failed links at zero, then
 * gp_plan_worst's worst utilization and top list (engine/planning.c, the same rules). */
__global__ static void plan_finish_kernel(gp_plan_dev g, gp_plan_fail_dev f, uint32_t nscen,
                                          const double *cap, double eps, gp_plan_fin *out) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x, L = g.nb_off[g.n];
    if (k >= nscen) return;
    const double *load = f.loads + (size_t)k * L;
    uint32_t f0 = f.foff[k], f1 = f.foff[k + 1], most = 0xffffffffu;
    gp_plan_fin r;
    r.worst_utilization = -1;
    r.worst_link = 0xffffffffu;
    r.worst_load = 0;
    double most_load = 0;
    for (int j = 0; j < 8; j++) r.top[j] = 0xffffffffu, r.top_load[j] = 0;
    for (uint32_t l = 0; l < L; l++) {
        double x = load[l];
        if (!(fabs(x) >= eps)) continue;
        bool failed = false;
        for (uint32_t j = f0; j < f1 && !failed; j++) failed = f.flinks[j] == l;
        if (failed || !(x > 0)) continue;
        if (most == 0xffffffffu || x > most_load) most = l, most_load = x;
        if (cap && cap[l] > 0 && x / cap[l] > r.worst_utilization) {
            r.worst_utilization = x / cap[l];
            r.worst_link = l;
            r.worst_load = x;
        }
        int j = 8;
        while (j > 0 && (r.top[j - 1] == 0xffffffffu || r.top_load[j - 1] < x)) j--;
        if (j < 8) {
            for (int q = 7; q > j; q--) r.top[q] = r.top[q - 1], r.top_load[q] = r.top_load[q - 1];
            r.top[j] = l;
            r.top_load[j] = x;
        }
    }
    if (r.worst_link == 0xffffffffu) r.worst_link = most, r.worst_load = most_load;
    double lost = f.lost[k];
    r.lost = fabs(lost) < eps ? 0 : lost;
    out[k] = r;
}

extern "C" int gp_cuda_plan_finish(const gp_plan_dev *in, const gp_plan_fail_dev *f, uint32_t nscen,
                                   const double *cap, double eps, gp_plan_fin *out, void *stream) {
    if (!nscen) return 0;
    plan_finish_kernel<<<(nscen + 31) / 32, 32, 0, (cudaStream_t)stream>>>(*in, *f, nscen, cap, eps,
                                                                           out);
    return (int)cudaGetLastError();
}

__global__ static void transpose_kernel(const uint64_t *a, uint64_t *b, uint32_t n) {
    __shared__ uint64_t tile[32][33];
    uint32_t x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (uint32_t j = 0; j < 32; j += 8)
        if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = a[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x, y = blockIdx.x * 32 + threadIdx.y;
    for (uint32_t j = 0; j < 32; j += 8)
        if (x < n && y + j < n) b[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" int gp_cuda_plan_transpose(const uint64_t *a, uint64_t *b, uint32_t n, void *stream) {
    if (!n) return 0;
    dim3 grid((n + 31) / 32, (n + 31) / 32), block(32, 8);
    transpose_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(a, b, n);
    return (int)cudaGetLastError();
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
