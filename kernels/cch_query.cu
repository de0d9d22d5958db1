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
 */
#include "kernels/cch_internal.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

namespace {

__device__ __forceinline__ u64 warp_min64(u64 v) {
    for (int o = 16; o > 0; o >>= 1) {
        u64 u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u < v ? u : v;
    }
    return v;
}

/* The top of the hierarchy (levels l0..l1-1, ranks r0 = lev[l0] .. lev[l1]: every upward edge of
 * these nodes stays inside) in one block with the distances and the CSR offsets in shared memory:
 * a level then costs one global read (the edge) instead of three dependent ones. */
__global__ void sweep_top(uint32_t l0, uint32_t l1, const uint32_t *__restrict__ lev, uint32_t k,
                          const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                          const uint32_t *__restrict__ wt, u64 *dist) {
    extern __shared__ u64 sd[];
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
            u64 best = INF64;
            for (uint32_t e = sf[x] + lane; e < sf[x + 1]; e += 32) {
                uint32_t w = wt[e];
                if (w == INF32) continue;
                u64 dh = sd[(size_t)(head[e] - r0) * k + sc];
                if (dh != INF64 && dh + w < best) best = dh + w;
            }
            best = warp_min64(best);
            if (lane == 0 && best < sd[(size_t)x * k + sc]) sd[(size_t)x * k + sc] = best;
        }
        __syncthreads();
    }
    for (uint64_t i = threadIdx.x; i < cells; i += blockDim.x) dist[(size_t)r0 * k + i] = sd[i];
}

/* Every level below the top (top-1 .. 0) in one persistent cooperative kernel, grid.sync() between
 * levels: a thread per item on wide levels, a warp per item on the others. Distances written by
 * other blocks in earlier levels are read through L2 (__ldcg), never from a stale L1 line. */
__global__ void sweep_coop(uint32_t top, const uint32_t *__restrict__ lev, uint32_t k,
                           const uint32_t *__restrict__ first, const uint32_t *__restrict__ head,
                           const uint32_t *__restrict__ wt, u64 *dist) {
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
                u64 best = __ldcg(&dist[at]);
                for (uint32_t e = first[x]; e < first[x + 1]; e++) {
                    uint32_t w = wt[e];
                    if (w == INF32) continue;
                    u64 dh = __ldcg(&dist[(size_t)head[e] * k + sc]);
                    if (dh != INF64 && dh + w < best) best = dh + w;
                }
                dist[at] = best;
            }
        } else {
            for (uint64_t i = wid; i < items; i += nw) {
                uint32_t x = lo + (uint32_t)(i / k), sc = (uint32_t)(i % k);
                size_t at = (size_t)x * k + sc;
                u64 best = INF64;
                for (uint32_t e = first[x] + lane; e < first[x + 1]; e += 32) {
                    uint32_t w = wt[e];
                    if (w == INF32) continue;
                    u64 dh = __ldcg(&dist[(size_t)head[e] * k + sc]);
                    if (dh != INF64 && dh + w < best) best = dh + w;
                }
                best = warp_min64(best);
                if (lane == 0) {
                    u64 cur = __ldcg(&dist[at]);
                    dist[at] = best < cur ? best : cur;
                }
            }
        }
        grid.sync();
    }
}

__global__ void fill64(u64 *a, size_t count) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) a[i] = INF64;
}

/* Upward-search results into the matrix: entry j of source s (init_first is k+1 offsets). */
__global__ void scatter_init(uint32_t k, const uint32_t *__restrict__ init_first,
                             const uint32_t *__restrict__ init_rank,
                             const u64 *__restrict__ init_dist, const uint32_t *__restrict__ map,
                             u64 *dist) {
    uint32_t s = blockIdx.x;
    for (uint32_t j = init_first[s] + threadIdx.x; j < init_first[s + 1]; j += blockDim.x)
        dist[(size_t)(map ? map[init_rank[j]] : init_rank[j]) * k + s] = init_dist[j];
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
__global__ void gather_targets(uint32_t nt, uint32_t k, const uint32_t *__restrict__ tgt,
                               const u64 *__restrict__ dist, u64 *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)nt * k) return;
    uint32_t s = (uint32_t)(i / nt), j = (uint32_t)(i % nt);
    out[i] = dist[(size_t)tgt[j] * k + s];
}

} // namespace

cudaError_t gp_dcch_level_attrs(void) {
    return cudaFuncSetAttribute(sweep_top, cudaFuncAttributeMaxDynamicSharedMemorySize, TOP_SMEM);
}

static unsigned blocks_for(uint64_t items) {
    return (unsigned)((items + BIG_THREADS - 1) / BIG_THREADS);
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

/* Init + level sweep over a graph (first/head/wt device, levels host lev / device dlev). */
int gp_dcch_level_sweep(gp_dcch *d, cudaStream_t s, uint32_t n, uint32_t nlev, const uint32_t *lev,
                        const uint32_t *dlev, const uint32_t *first, const uint32_t *head,
                        const uint32_t *wt, uint32_t k, const uint32_t *init_first,
                        const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t cells = (size_t)n * k;
    CK(grow(&d->dist, &d->dist_cap, cells), "allocating the sweep");
    if ((rc = gp_dcch_upload_init(d, s, k, init_first, init_rank, init_dist, err)) != GP_OK)
        return rc;
    CK(cudaEventRecord(d->ev0, s), "sweep");
    fill64<<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->dist, cells);
    CKL("sweep init");
    scatter_init<<<k, 64, 0, s>>>(k, d->init_first, d->init_rank, (const u64 *)d->init_dist, NULL,
                                  d->dist);
    CKL("sweep init");
    { /* the top levels in shared memory, then the rest level by level */
        uint32_t top = nlev;
        while (top > 0 && (uint64_t)(lev[top] - lev[top - 1]) * k <= SWEEP_SMALL_ITEMS &&
               (uint64_t)(lev[nlev] - lev[top - 1]) * k <= TOP_CELLS)
            top--;
        if (top < nlev) {
            uint64_t nodes = lev[nlev] - lev[top];
            size_t smem = (size_t)(nodes * k) * 8 + (size_t)(nodes + 1) * 4;
            sweep_top<<<1, SMALL_THREADS, smem, s>>>(top, nlev, dlev, k, first, head, wt, d->dist);
            CKL("sweep (top levels)");
        }
        if (top > 0) {
            /* one block per SM for a single source (latency: a cheaper grid.sync), as many as fit
         * for several (work) */
            int per_sm = 1;
            if (k > 1 && cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &per_sm, sweep_coop, COOP_THREADS, 0) != cudaSuccess)
                per_sm = 1;
            if (per_sm < 1) per_sm = 1;
            dim3 grid((unsigned)(d->sms * per_sm)), block(COOP_THREADS);
            uint32_t *dl = (uint32_t *)dlev;
            u64 *dd = d->dist;
            uint32_t *f = (uint32_t *)first, *h = (uint32_t *)head, *w = (uint32_t *)wt;
            void *args[] = {&top, &dl, &k, &f, &h, &w, &dd};
            CK(cudaLaunchCooperativeKernel((void *)sweep_coop, grid, block, args, 0, s), "sweep");
        }
    }
out:
    return rc;
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
    CK(cudaStreamSynchronize(s), "RPHAST upload");
out:
    return rc;
}

extern "C" int gp_dcch_rphast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                              const uint32_t *init_local, const uint64_t *init_dist, uint64_t *out,
                              float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    size_t cells = (size_t)d->r_nt * k;
    int rc = gp_dcch_level_sweep(d, s, d->r_n, d->r_nlev, d->r_lev_host, d->r_lev, d->r_first,
                                 d->r_head, d->r_wt, k, init_first, init_local, init_dist, err);
    if (rc) return rc;
    CK(grow(&d->outbuf, &d->out_cap, cells + 1), "allocating the RPHAST output");
    gather_targets<<<blocks_for(cells), BIG_THREADS, 0, s>>>(d->r_nt, k, d->r_tgt, d->dist,
                                                             d->outbuf);
    CKL("RPHAST output");
    CK(cudaEventRecord(d->ev1, s), "RPHAST");
    CK(cudaMemcpyAsync(out, d->outbuf, cells * 8, cudaMemcpyDeviceToHost, s), "RPHAST output");
    CK(cudaStreamSynchronize(s), "RPHAST");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "RPHAST");
out:
    return rc;
}
