/* cch_query.cu - the GPU CCH's level sweep and RPHAST (kernels/cch.h gp_dcch_rphast_prepare,
 * gp_dcch_rphast); the level sweep is also PHAST's where the plan cannot serve (its indices are
 * 32-bit: a bin's cells times k must stay under 2^31) or the lab asks for it. Device state in
 * kernels/cch.cu, shared structs in cch_internal.cuh.
 *
 * The level sweep, top-down: the top levels (each <= SWEEP_SMALL_ITEMS items, together <=
 * TOP_CELLS distances) in one block with the distances and CSR offsets in shared memory, a warp
 * per item; then all other levels in one persistent cooperative kernel (grid.sync() between
 * levels), a warp per item, or a thread per item on levels of >= SWEEP_THREAD_ITEMS items (the
 * wide, low-degree bottom). Distances of earlier levels are read with __ldcg. (bench/lab_cch.cu
 * v1-v3 measured its forms; RPHAST 100x100 on BAY / NY 0.84 / 1.29 ms device.)
 *
 * Cells are 64-bit (PHAST's level sweep) or, for RPHAST's tables, 32-bit: a table's sweep reads
 * one cell per arc and source, so half the bytes is nearly half the time on large tables (10,000
 * x 10,000 on the road-like 1M turn graph). A sum that reaches d->sat (2^32 - 2 unless the tests
 * lower it) sets a device word and the table runs again with 64-bit cells (kept for that target
 * set: gp_dcch_rphast_prepare and a re-tune start 32-bit again).
 */
#include "kernels/cch_internal.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

namespace {

template <typename C> struct cell_inf;
template <> struct cell_inf<u64> { static constexpr u64 v = INF64; };
template <> struct cell_inf<uint32_t> { static constexpr uint32_t v = INF32; };

template <typename C> __device__ __forceinline__ C warp_min(C v) {
    for (int o = 16; o > 0; o >>= 1) {
        C u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u < v ? u : v;
    }
    return v;
}

/* best = min(best, dh + w) for a reached head: 64-bit cells as before; a 32-bit cell whose sum
 * would reach sat (d->sat: below INF32; the tests lower it) is not stored, and *ovf says the
 * table must run again with 64-bit ones. */
template <typename C>
__device__ __forceinline__ void relax(C dh, uint32_t w, C &best, uint32_t sat, uint32_t *ovf) {
    if (dh == cell_inf<C>::v) return;
    u64 x = (u64)dh + w;
    if (x >= (u64)best) return;
    if (sizeof(C) == 4 && x >= sat) *ovf = 1;
    else best = (C)x;
}

/* The top of the hierarchy (levels l0..l1-1, ranks r0 = lev[l0] .. lev[l1]: every upward edge of
 * these nodes stays inside) in one block with the distances and the CSR offsets in shared memory:
 * a level then costs one global read (the edge) instead of three dependent ones. Edge e's weight
 * is wt[e * ws] (ws 2: the down halves of the packed customized weights). */
template <typename C>
__global__ void sweep_top(uint32_t l0, uint32_t l1, const uint32_t *__restrict__ lev, uint32_t k,
                          const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                          const uint32_t *__restrict__ wt, uint32_t ws, C *dist, uint32_t sat,
                          uint32_t *ovf) {
    extern __shared__ u64 sraw[];
    C *sd = (C *)sraw;
    uint32_t r0 = lev[l0], nodes = lev[l1] - r0;
    uint64_t cells = (uint64_t)nodes * k;
    uint32_t *sf = (uint32_t *)(sd + cells);
    for (uint64_t i = threadIdx.x; i < cells; i += blockDim.x) sd[i] = dist[(size_t)r0 * k + i];
    for (uint32_t i = threadIdx.x; i <= nodes; i += blockDim.x) sf[i] = first[r0 + i];
    __syncthreads();
    int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
    for (uint32_t l = l1; l-- > l0;) {
        uint32_t lo = lev[l] - r0;
        uint64_t items = (uint64_t)(lev[l + 1] - lev[l]) * k;
        for (uint64_t i = warp; i < items; i += nw) {
            uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
            C best = cell_inf<C>::v;
            for (uint32_t e = sf[x] + lane; e < sf[x + 1]; e += 32) {
                uint32_t w = wt[(size_t)e * ws];
                if (w == INF32) continue;
                relax<C>(sd[(size_t)(head[e] - r0) * k + sc], w, best, sat, ovf);
            }
            best = warp_min<C>(best);
            if (lane == 0 && best < sd[(size_t)x * k + sc]) sd[(size_t)x * k + sc] = best;
        }
        __syncthreads();
    }
    for (uint64_t i = threadIdx.x; i < cells; i += blockDim.x) dist[(size_t)r0 * k + i] = sd[i];
}

/* Every level below the top (top-1 .. 0) in one persistent cooperative kernel, grid.sync() between
 * levels: a thread per item on wide levels, a warp per item on the others. Distances written by
 * other blocks in earlier levels are read through L2 (__ldcg), never from a stale L1 line. */
template <typename C>
__global__ void sweep_coop(uint32_t top, const uint32_t *__restrict__ lev, uint32_t k,
                           const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                           const uint32_t *__restrict__ wt, uint32_t ws, C *dist, uint32_t sat,
                           uint32_t *ovf) {
    cg::grid_group grid = cg::this_grid();
    uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t nth = (uint64_t)gridDim.x * blockDim.x, wid = tid / 32, nw = nth / 32;
    int lane = threadIdx.x & 31;
    for (uint32_t l = top; l-- > 0;) {
        uint32_t lo = lev[l];
        uint64_t items = (uint64_t)(lev[l + 1] - lo) * k;
        if (items >= SWEEP_THREAD_ITEMS) {
            for (uint64_t i = tid; i < items; i += nth) {
                uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
                size_t at = (size_t)x * k + sc;
                C best = __ldcg(&dist[at]);
                for (uint32_t e = first[x]; e < first[x + 1]; e++) {
                    uint32_t w = wt[(size_t)e * ws];
                    if (w == INF32) continue;
                    relax<C>(__ldcg(&dist[(size_t)head[e] * k + sc]), w, best, sat, ovf);
                }
                dist[at] = best;
            }
        } else {
            for (uint64_t i = wid; i < items; i += nw) {
                uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
                size_t at = (size_t)x * k + sc;
                C best = cell_inf<C>::v;
                for (uint32_t e = first[x] + lane; e < first[x + 1]; e += 32) {
                    uint32_t w = wt[(size_t)e * ws];
                    if (w == INF32) continue;
                    relax<C>(__ldcg(&dist[(size_t)head[e] * k + sc]), w, best, sat, ovf);
                }
                best = warp_min<C>(best);
                if (lane == 0) {
                    C cur = __ldcg(&dist[at]);
                    dist[at] = best < cur ? best : cur;
                }
            }
        }
        grid.sync();
    }
}

template <typename C> __global__ void fill_inf(C *a, size_t count) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) a[i] = cell_inf<C>::v;
}

/* Upward-search results into the matrix: entry j of source s (init_first is k+1 offsets); a
 * distance a 32-bit cell cannot hold sets *ovf. */
template <typename C>
__global__ void scatter_init(uint32_t k, const uint32_t *__restrict__ init_first,
                             const uint32_t *__restrict__ init_rank,
                             const u64 *__restrict__ init_dist, const uint32_t *__restrict__ map,
                             C *dist, uint32_t sat, uint32_t *ovf) {
    uint32_t s = blockIdx.x;
    for (uint32_t j = init_first[s] + threadIdx.x; j < init_first[s + 1]; j += blockDim.x) {
        u64 v = init_dist[j];
        if (sizeof(C) == 4 && v >= sat) {
            *ovf = 1;
            continue;
        }
        dist[(size_t)(map ? map[init_rank[j]] : init_rank[j]) * k + s] = (C)v;
    }
}

/* PHAST output: out[s*n + v] = dist[rank(v)*k + s] via order (rank -> node). */
__global__ void gather_nodes(uint32_t n, uint32_t k, const uint32_t *__restrict__ order,
                             const u64 *__restrict__ dist, u64 *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)n * k) return;
    uint32_t r = (uint32_t)(i / k), s = (uint32_t)(i % k);
    out[(size_t)s * n + order[r]] = dist[i];
}

/* RPHAST output: out[s*nt + j] = dist[tgt[j]*k + s]. */
template <typename C>
__global__ void gather_targets(uint32_t nt, uint32_t k, const uint32_t *__restrict__ tgt,
                               const C *__restrict__ dist, C *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)nt * k) return;
    uint32_t s = (uint32_t)(i / nt), j = (uint32_t)(i % nt);
    out[i] = dist[(size_t)tgt[j] * k + s];
}

} // namespace

cudaError_t gp_dcch_level_attrs(void) {
    cudaError_t e =
        cudaFuncSetAttribute(sweep_top<u64>, cudaFuncAttributeMaxDynamicSharedMemorySize, TOP_SMEM);
    if (e != cudaSuccess) return e;
    return cudaFuncSetAttribute(sweep_top<uint32_t>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                TOP_SMEM);
}

/* The upward searches' results (init lists) to the device. */
int gp_dcch_upload_init(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                        const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t ninit = init_first[k];
    CK(grow(&d->init_rank, &d->init_cap, ninit + 1), "allocating the sweep");
    CK(grow(&d->init_dist, &d->init_dcap, ninit + 1), "allocating the sweep");
    CK(grow(&d->init_first, &d->init_first_cap, (size_t)k + 1), "allocating the sweep");
    CK(cudaMemcpyAsync(d->init_first, init_first, ((size_t)k + 1) * 4, cudaMemcpyHostToDevice, s),
       "sweep init");
    if (ninit) {
        CK(cudaMemcpyAsync(d->init_rank, init_rank, ninit * 4, cudaMemcpyHostToDevice, s),
           "sweep init");
        CK(cudaMemcpyAsync(d->init_dist, init_dist, ninit * 8, cudaMemcpyHostToDevice, s),
           "sweep init");
    }
out:
    return rc;
}

/* Init + level sweep over a graph (first/head/wt device, levels host lev / device dlev) in
 * cells of C (d->dist's memory; 32-bit ones report saturation in d->p_ovf). */
template <typename C>
static int level_sweep(gp_dcch *d, cudaStream_t s, uint32_t n, uint32_t nlev, const uint32_t *lev,
                       const uint32_t *dlev, const uint32_t *first, const uint32_t *head,
                       const uint32_t *wt, uint32_t ws, uint32_t k, const uint32_t *init_first,
                       const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t cells = (size_t)n * k;
    CK(grow(&d->dist, &d->dist_cap, (cells * sizeof(C) + 7) / 8), "allocating the sweep");
    if ((rc = gp_dcch_upload_init(d, s, k, init_first, init_rank, init_dist, err)) != GP_OK)
        return rc;
    CK(cudaEventRecord(d->ev0, s), "sweep");
    {
        C *dc = (C *)d->dist;
        fill_inf<C><<<blocks_for(cells), BIG_THREADS, 0, s>>>(dc, cells);
        CKL("sweep init");
        scatter_init<C><<<k, 64, 0, s>>>(k, d->init_first, d->init_rank, (const u64 *)d->init_dist,
                                         NULL, dc, d->sat, d->p_ovf);
        CKL("sweep init");
    }
    { /* the top levels in shared memory, then the rest level by level */
        uint32_t top = nlev;
        while (top > 0 && (uint64_t)(lev[top] - lev[top - 1]) * k <= SWEEP_SMALL_ITEMS &&
               (uint64_t)(lev[nlev] - lev[top - 1]) * k <= TOP_CELLS)
            top--;
        if (top < nlev) {
            uint64_t nodes = lev[nlev] - lev[top];
            size_t smem = (size_t)(nodes * k) * sizeof(C) + (size_t)(nodes + 1) * 4;
            sweep_top<C><<<1, SMALL_THREADS, smem, s>>>(top, nlev, dlev, k, first, head, wt, ws,
                                                        (C *)d->dist, d->sat, d->p_ovf);
            CKL("sweep (top levels)");
        }
        if (top > 0) {
            /* one block per SM for a single source (latency: a cheaper grid.sync), as many as fit
         * for several (work) */
            int per_sm = 1;
            if (k > 1 && cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, sweep_coop<C>, COOP_THREADS, 0) != cudaSuccess)
                per_sm = 1;
            if (per_sm < 1) per_sm = 1;
            dim3 grid((unsigned)(d->sms * per_sm)), block(COOP_THREADS);
            uint32_t *dl = (uint32_t *)dlev;
            C *dd = (C *)d->dist;
            uint32_t *f = (uint32_t *)first, *h = (uint32_t *)head, *w = (uint32_t *)wt;
            uint32_t *ov = d->p_ovf, sat = d->sat;
            void *args[] = {&top, &dl, &k, &f, &h, &w, &ws, &dd, &sat, &ov};
            CK(cudaLaunchCooperativeKernel((void *)sweep_coop<C>, grid, block, args, 0, s),
               "sweep");
        }
    }
out:
    return rc;
}

int gp_dcch_level_sweep(gp_dcch *d, cudaStream_t s, uint32_t n, uint32_t nlev, const uint32_t *lev,
                        const uint32_t *dlev, const uint32_t *first, const uint32_t *head,
                        const uint32_t *wt, uint32_t ws, uint32_t k, const uint32_t *init_first,
                        const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    return level_sweep<u64>(d, s, n, nlev, lev, dlev, first, head, wt, ws, k, init_first, init_rank,
                            init_dist, err);
}

int gp_dcch_level_output(gp_dcch *d, cudaStream_t s, uint32_t k, gp_err *err) {
    int rc = GP_OK;
    const size_t cells = (size_t)d->n * k;
    CK(grow(&d->outbuf, &d->out_cap, cells), "allocating the PHAST output");
    gather_nodes<<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->n, k, d->order, d->dist, d->outbuf);
    CKL("PHAST output");
out:
    return rc;
}

extern "C" int gp_dcch_rphast_prepare(gp_dcch *d, void *stream, uint32_t nsel,
                                      const uint32_t *first, const uint32_t *head,
                                      const uint32_t *wt, uint32_t nlev, const uint32_t *lev_first,
                                      uint32_t nt, const uint32_t *tgt, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t m = first[nsel];
    size_t capm = d->r_cap_m, capl = d->r_cap_lev;
    CK(grow(&d->r_first, &d->r_cap_n, (size_t)nsel + 1), "RPHAST upload");
    CK(grow(&d->r_head, &d->r_cap_m, (size_t)m + 1), "RPHAST upload");
    if (d->r_cap_m != capm || !d->r_wt) {
        cudaFree(d->r_wt);
        d->r_wt = NULL;
        CK(cudaMalloc((void **)&d->r_wt, d->r_cap_m * 4), "RPHAST upload");
    }
    CK(grow(&d->r_lev, &d->r_cap_lev, (size_t)nlev + 1), "RPHAST upload");
    if (d->r_cap_lev != capl || !d->r_lev_host) {
        free(d->r_lev_host);
        d->r_lev_host = (uint32_t *)malloc(d->r_cap_lev * 4);
        if (!d->r_lev_host) return gp_err_set(err, GP_ENOMEM, "out of memory for RPHAST levels");
    }
    CK(grow(&d->r_tgt, &d->r_cap_t, (size_t)nt + 1), "RPHAST upload");
    CK(cudaMemcpyAsync(d->r_first, first, ((size_t)nsel + 1) * 4, cudaMemcpyHostToDevice, s),
       "RPHAST upload");
    if (m) {
        CK(cudaMemcpyAsync(d->r_head, head, (size_t)m * 4, cudaMemcpyHostToDevice, s),
           "RPHAST upload");
        CK(cudaMemcpyAsync(d->r_wt, wt, (size_t)m * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
    }
    CK(cudaMemcpyAsync(d->r_lev, lev_first, ((size_t)nlev + 1) * 4, cudaMemcpyHostToDevice, s),
       "RPHAST upload");
    CK(cudaMemcpyAsync(d->r_tgt, tgt, (size_t)nt * 4, cudaMemcpyHostToDevice, s), "RPHAST upload");
    memcpy(d->r_lev_host, lev_first, ((size_t)nlev + 1) * 4);
    d->r_n = nsel;
    d->r_m = m;
    d->r_nlev = nlev;
    d->r_nt = nt;
    d->r_w64 = 0; /* 32-bit cells until one saturates */
    CK(cudaStreamSynchronize(s), "RPHAST upload");
out:
    return rc;
}

template <typename C>
static int rphast(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                  const uint32_t *init_local, const uint64_t *init_dist, C *out, int *saturated,
                  float *ms, gp_err *err) {
    size_t cells = (size_t)d->r_nt * k;
    uint32_t ovf = 0;
    int rc = level_sweep<C>(d, s, d->r_n, d->r_nlev, d->r_lev_host, d->r_lev, d->r_first, d->r_head,
                            d->r_wt, 1, k, init_first, init_local, init_dist, err);
    if (rc) return rc;
    CK(grow(&d->outbuf, &d->out_cap, (cells * sizeof(C) + 7) / 8 + 1),
       "allocating the RPHAST output");
    gather_targets<C><<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->r_nt, k, d->r_tgt,
                                                                (const C *)d->dist, (C *)d->outbuf);
    CKL("RPHAST output");
    CK(cudaEventRecord(d->ev1, s), "RPHAST");
    if (sizeof(C) == 4) CK(cudaMemcpyAsync(&ovf, d->p_ovf, 4, cudaMemcpyDeviceToHost, s), "RPHAST");
    if (out) /* else the table stays on the device (gp_dcch_rphast_dev) */
        CK(cudaMemcpyAsync(out, d->outbuf, cells * sizeof(C), cudaMemcpyDeviceToHost, s),
           "RPHAST output");
    CK(cudaStreamSynchronize(s), "RPHAST");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "RPHAST");
    if (ovf) { /* this target set's tables run with 64-bit cells from now on */
        CK(cudaMemsetAsync(d->p_ovf, 0, 4, s), "RPHAST");
        CK(cudaStreamSynchronize(s), "RPHAST");
        d->r_w64 = 1;
    }
    if (saturated) *saturated = ovf != 0;
out:
    return rc;
}

extern "C" int gp_dcch_rphast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                              const uint32_t *init_local, const uint64_t *init_dist, uint64_t *out,
                              float *ms, gp_err *err) {
    return rphast<u64>(d, (cudaStream_t)stream, k, init_first, init_local, init_dist, (u64 *)out,
                       NULL, ms, err);
}

extern "C" int gp_dcch_rphast32(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                                const uint32_t *init_local, const uint64_t *init_dist,
                                uint32_t *out, int *saturated, float *ms, gp_err *err) {
    if (d->r_w64) {
        *saturated = 1;
        return GP_OK;
    }
    return rphast<uint32_t>(d, (cudaStream_t)stream, k, init_first, init_local, init_dist, out,
                            saturated, ms, err);
}

int gp_dcch_rphast_dev(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
                       const uint32_t *init_local, const uint64_t *init_dist, int *w64, float *ms,
                       gp_err *err) {
    int sat = 1, rc = GP_OK;
    if (!d->r_w64 && (rc = rphast<uint32_t>(d, s, k, init_first, init_local, init_dist,
                                            (uint32_t *)NULL, &sat, ms, err)) != GP_OK)
        return rc;
    if (sat)
        rc = rphast<u64>(d, s, k, init_first, init_local, init_dist, (u64 *)NULL, NULL, ms, err);
    *w64 = sat;
    return rc;
}
