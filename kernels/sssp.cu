/* sssp.cu - GPU single-source shortest paths: the seed algorithm (Martin, Torres, Gavilanes, ICCS
 * 2009), near-far delta-stepping in one persistent kernel (Davidson et al., IPDPS 2014), batched
 * multi-source runs for tables, and predecessors / paths computed on the GPU. Plain-C interface in
 * kernels/sssp.h; the CUDA backend (engine/cuda_backend.c) calls it on pooled streams.
 *
 * Distances are uint64 (GP_INF = unreachable), relaxed with 64-bit atomicMin; every read of data
 * that other blocks write during a kernel goes through __ldcg (L2), never a possibly stale L1 line.
 *
 * Seed ("seed"): arrays C (cost), U (unvisited), F (frontier). Per iteration: relax (each frontier
 * vertex atomicMins its unvisited successors), min (block reduction of the unvisited costs, one
 * atomicMin per block into a device word: no host copy), update (every unvisited vertex whose cost
 * equals the minimum becomes the frontier and is visited). Stops when the minimum is infinite. The
 * host enqueues iterations in chunks and reads a done flag (pinned) once per chunk, so it never
 * reads per-iteration results. One iteration settles one distinct distance value: on road graphs
 * that is ~n iterations of three O(n) kernels.
 *
 * Near-far ("auto"): a persistent cooperative kernel, one grid.sync() per round. Items are
 * (batch slot, node) pairs, item = b*n + v, so one launch runs B sources at once (tables) and B = 1
 * is plain SSSP. A round either expands the near queue (nodes with distance < threshold) or, when
 * it is empty, splits the far pile: threshold += delta (or, after a split that moved nothing,
 * min(far) + delta), far items under it move to the near queue, stale ones are dropped. Queues are
 * compacted (warp-aggregated atomicAdd) and deduplicated (a per-item round stamp for the near queue,
 * an in-far flag for the far pile), so each holds at most B*n items. Counters rotate over three
 * slots so one sync per round suffices (read slot r, write r+1, reset r+2). Load balancing: each
 * warp takes c queue items (c = frontier / warps, 1..32) and expands all their arcs together, one
 * arc per lane (scan of the degrees, binary search for each lane's owner), so a node of any degree
 * is spread over the warp and a round costs about one arc's latency. Point-to-point stops at the
 * first split at which dist(t) < threshold (t is then settled).
 *
 * Predecessors: pred[v] = the first in-arc (u,v,w) with dist[u] + w == dist[v] and w > 0; nodes
 * whose only tight in-arcs have weight 0 are then anchored in rounds through tight zero arcs from
 * already anchored nodes, so predecessor chains never cycle even with zero-weight cycles. Race-free
 * and deterministic (depends only on the distances).
 *
 * Why these settings (H100 80GB HBM3, CUDA 13.0, bench/lab_sssp.cu --sweep; device ms, median of
 * 3 random sources; full tables in bench/results/2026-11-21-NVIDIA-H100-80GB-HBM3-gpu-sssp.md):
 *  - A round is latency-bound (the frontier of a road graph is a thin wavefront: thousands of
 *    nodes), so time ~ rounds x round latency. v1 expanded a node's arcs in one thread with a read
 *    before each atomicMin: ~12-18 us per round (BAY 19.2 ms, 24 M nodes 90 ms). v2 (this code)
 *    spreads arcs over lanes and drops the read: ~4 us per round (BAY 7.5 ms, 24 M nodes 31-34 ms).
 *  - "Chaining" (a thread expanding an improved successor itself instead of queueing it) cut the
 *    rounds by up to 3x but made each round serial and, with a wide bucket, exploded the work
 *    (24 M nodes: 335 ms at delta 64, 12 s at delta inf, vs 93 / 90 ms without): removed.
 *  - delta (bucket width, x mean arc weight) for one source: BAY 4: 15.6, 16: 10.2, 64: 7.5,
 *    inf: 9.1 ms; gen 24 M: 4: 43.7, 16: 37.4, 64: 34.1, inf: 31.5 ms. 64 is best on the real graph,
 *    within 8% of the best on the generated ones, bounds the re-relaxations, and keeps p2p's early
 *    stop (an infinite bucket never splits): DEFAULT_DELTA_MUL 64.
 *  - grid: one block of 256 per SM (132) beats 264 and 528 on every graph for one source (a
 *    cheaper grid.sync; 24 M: 31.5 / 35.3 / 42.3 ms at delta inf).
 *  - tables (BAY, end-to-end): work, not latency, dominates: an infinite bucket re-relaxes so much
 *    that 100x100 took 697 ms and 1000x1000 7.4 s; delta 8 / 16 / 32 with 264 blocks: 100x100
 *    37.9 / 33.2 / 32.5 ms, 1000x1000 254 / 231 / 241 ms (batches of up to 512 sources, as many as
 *    the 4 GiB workspace holds: 3 batches for 1000 on BAY): DEFAULT_TABLE_DELTA_MUL 16, 2 blocks/SM.
 */
#include "kernels/sssp.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdlib.h>
#include <string.h>

namespace cg = cooperative_groups;

typedef unsigned long long u64;
#define INF64 0xffffffffffffffffULL
#define NONE32 0xffffffffu
#define NF_THREADS 256
#define SEED_THREADS 256

/* Defaults, chosen with the lab's sweep (see the header comment and docs/gpu.md). */
#define DEFAULT_DELTA_MUL 64.0       /* one source (sssp, p2p) */
#define DEFAULT_TABLE_DELTA_MUL 16.0 /* batched sources (table) */
#define DEFAULT_BATCH_MAX 512
#define DEFAULT_SINGLE_BLOCKS_PER_SM 1
#define DEFAULT_TABLE_BLOCKS_PER_SM 2
#define DEFAULT_MEM_BUDGET (4ULL << 30)

static int g_broken; /* sticky error seen (atomic) */

static int is_sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown: return 1;
    default: return 0;
    }
}

static int cuda_fail(cudaError_t e, const char *what, gp_err *err) {
    int sticky = is_sticky(e);
    if (sticky) __atomic_store_n(&g_broken, 1, __ATOMIC_SEQ_CST);
    return gp_err_set(err, GP_EDEVICE, "CUDA error during %s: %s (%s)%s", what, cudaGetErrorName(e),
                      cudaGetErrorString(e),
                      sticky ? "; the GPU context is lost, the backend is out of service" : "");
}

#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            rc = cuda_fail(e_, (what), err);                                                       \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
/* after a launch: launch errors now, execution errors at the next synchronising call */
#define CKL(what) CK(cudaGetLastError(), (what))

extern "C" int gp_cuda_device_broken(void) { return __atomic_load_n(&g_broken, __ATOMIC_SEQ_CST); }

/* ---------------------------------------------------------------------------------------------
 * Device graph */

struct gp_dgraph {
    uint32_t n, m;
    uint32_t *row, *col, *w, *rrow, *rcol, *rw;
    uint64_t bytes;
    double mean_w;
    int has_zero;
};

extern "C" void gp_dgraph_free(void *p) {
    gp_dgraph *d = (gp_dgraph *)p;
    if (!d) return;
    cudaFree(d->row);
    cudaFree(d->col);
    cudaFree(d->w);
    cudaFree(d->rrow);
    cudaFree(d->rcol);
    cudaFree(d->rw);
    free(d);
}

extern "C" uint64_t gp_dgraph_bytes(const gp_dgraph *d) { return d ? d->bytes : 0; }

extern "C" int gp_dgraph_new(const gp_graph *g, gp_dgraph **out, gp_err *err) {
    int rc = GP_OK;
    *out = NULL;
    gp_dgraph *d = (gp_dgraph *)calloc(1, sizeof *d);
    if (!d) return gp_err_set(err, GP_ENOMEM, "out of memory for the device graph record");
    d->n = g->n;
    d->m = g->m;
    {
        size_t rb = ((size_t)g->n + 1) * 4, mb = (size_t)(g->m ? g->m : 1) * 4;
        CK(cudaMalloc(&d->row, rb), "cudaMalloc(graph)");
        CK(cudaMalloc(&d->rrow, rb), "cudaMalloc(graph)");
        CK(cudaMalloc(&d->col, mb), "cudaMalloc(graph)");
        CK(cudaMalloc(&d->w, mb), "cudaMalloc(graph)");
        CK(cudaMalloc(&d->rcol, mb), "cudaMalloc(graph)");
        CK(cudaMalloc(&d->rw, mb), "cudaMalloc(graph)");
        size_t mc = (size_t)g->m * 4;
        CK(cudaMemcpy(d->row, g->row, rb, cudaMemcpyHostToDevice), "copying the graph");
        CK(cudaMemcpy(d->rrow, g->rrow, rb, cudaMemcpyHostToDevice), "copying the graph");
        if (mc) {
            CK(cudaMemcpy(d->col, g->col, mc, cudaMemcpyHostToDevice), "copying the graph");
            CK(cudaMemcpy(d->w, g->w, mc, cudaMemcpyHostToDevice), "copying the graph");
            CK(cudaMemcpy(d->rcol, g->rcol, mc, cudaMemcpyHostToDevice), "copying the graph");
            CK(cudaMemcpy(d->rw, g->rw, mc, cudaMemcpyHostToDevice), "copying the graph");
        }
        d->bytes = 2 * rb + 4 * mb;
        uint64_t sum = 0;
        int zero = 0;
        for (uint32_t i = 0; i < g->m; i++) {
            sum += g->w[i];
            zero |= g->w[i] == 0;
        }
        d->mean_w = g->m ? (double)sum / g->m : 1.0;
        d->has_zero = zero;
    }
out:
    if (rc != GP_OK) {
        gp_dgraph_free(d);
        return rc;
    }
    *out = d;
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Workspace */

struct nf_ctl {
    unsigned ncnt[3]; /* near queue sizes, rotating by round */
    unsigned fcnt[3]; /* far pile sizes, rotating by split */
    u64 farmin[3];    /* min distance left in the far pile after a split, rotating by split */
    unsigned rounds;
    unsigned splits;
    unsigned changed; /* predecessor anchoring */
    unsigned path_len;
    u64 gmin[2];   /* seed: minimum unvisited cost, alternating by iteration */
    unsigned done; /* seed: stop flag */
    unsigned seed_iters;
};

struct gp_sssp_ws {
    cudaStream_t stream;
    int share;
    uint64_t budget;
    /* item arrays, capacity cap_items = batch x n */
    uint64_t cap_items;
    u64 *dist;
    uint32_t *stamp, *infar, *qn[2], *qf[2];
    /* n-sized */
    uint64_t cap_n;
    uint32_t *pred, *pathbuf;
    /* table */
    uint64_t cap_src, cap_dst, cap_out;
    uint32_t *dsrc, *ddst;
    u64 *dout;
    nf_ctl *ctl;
    nf_ctl *hctl; /* pinned */
    cudaEvent_t ev0, ev1;
    int coop_blocks; /* co-resident blocks of the near-far kernel on the whole device */
    int sms;
};

static void ws_release_items(gp_sssp_ws *ws) {
    cudaFree(ws->dist);
    cudaFree(ws->stamp);
    cudaFree(ws->infar);
    for (int i = 0; i < 2; i++) {
        cudaFree(ws->qn[i]);
        cudaFree(ws->qf[i]);
        ws->qn[i] = ws->qf[i] = NULL;
    }
    ws->dist = NULL;
    ws->stamp = ws->infar = NULL;
    ws->cap_items = 0;
}

extern "C" void gp_sssp_ws_free(gp_sssp_ws *ws) {
    if (!ws) return;
    if (ws->stream) cudaStreamSynchronize(ws->stream);
    ws_release_items(ws);
    cudaFree(ws->pred);
    cudaFree(ws->pathbuf);
    cudaFree(ws->dsrc);
    cudaFree(ws->ddst);
    cudaFree(ws->dout);
    cudaFree(ws->ctl);
    if (ws->hctl) cudaFreeHost(ws->hctl);
    if (ws->ev0) cudaEventDestroy(ws->ev0);
    if (ws->ev1) cudaEventDestroy(ws->ev1);
    free(ws);
}

extern "C" uint64_t gp_sssp_ws_bytes(const gp_sssp_ws *ws) {
    if (!ws) return 0;
    return ws->cap_items * (8 + 4 * 6) + ws->cap_n * 8 + ws->cap_src * 4 + ws->cap_dst * 4 +
           ws->cap_out * 8 + sizeof(nf_ctl);
}

/* ---------------------------------------------------------------------------------------------
 * Near-far kernel */

struct nf_args {
    const uint32_t *row, *col, *w;
    uint32_t n;
    u64 *dist;
    uint32_t *stamp, *infar;
    uint32_t *qn0, *qn1, *qf0, *qf1;
    nf_ctl *ctl;
    u64 delta, maxd;
    uint32_t target; /* item to stop at (p2p), NONE32 for none */
};

/* Appends item to q: one atomicAdd per group of threads that push together. */
__device__ __forceinline__ void q_push(uint32_t *q, unsigned *cnt, uint32_t item) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(cnt, g.size());
    base = g.shfl(base, 0);
    q[base + g.thread_rank()] = item;
}

struct nf_round {
    uint32_t *qn_out, *qf_out;
    unsigned *ncnt_out, *fcnt_out;
    u64 thr;
    uint32_t tag;
};

/* Relaxes an arc into item idx with candidate distance nd: one atomicMin (no read first: that
 * would add a dependent round trip to every improving arc), then queues the item once per round
 * (near) or once while it sits in the far pile. */
__device__ __forceinline__ void nf_relax(const nf_args &a, const nf_round &r, uint32_t idx,
                                         u64 nd) {
    if (nd > a.maxd) return;
    const u64 old = atomicMin(&a.dist[idx], nd);
    if (nd >= old) return;
    if (nd < r.thr) {
        if (atomicExch(&a.stamp[idx], r.tag) != r.tag) q_push(r.qn_out, r.ncnt_out, idx);
    } else {
        if (atomicExch(&a.infar[idx], 1u) == 0u) q_push(r.qf_out, r.fcnt_out, idx);
    }
}

static __global__ void __launch_bounds__(NF_THREADS) nf_kernel(nf_args a) {
    cg::grid_group grid = cg::this_grid();
    const unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned nthreads = gridDim.x * blockDim.x;
    const unsigned lane = threadIdx.x & 31;
    const unsigned gwarp = gtid >> 5, nwarps = nthreads >> 5;
    const uint32_t n = a.n;
    nf_ctl *ctl = a.ctl;
    u64 thr = a.delta;
    unsigned it = 0, split = 0;
    int last_split_empty = 0;

    for (;;) {
        const unsigned nin = __ldcg(&ctl->ncnt[it % 3]);
        nf_round r;
        r.qn_out = (it & 1) ? a.qn0 : a.qn1;
        r.ncnt_out = &ctl->ncnt[(it + 1) % 3];
        r.qf_out = (split & 1) ? a.qf1 : a.qf0;
        r.fcnt_out = &ctl->fcnt[split % 3];
        r.tag = it + 1;
        if (nin > 0) {
            last_split_empty = 0;
            r.thr = thr;
            if (gtid == 0) ctl->ncnt[(it + 2) % 3] = 0;
            const uint32_t *qin = (it & 1) ? a.qn1 : a.qn0;
            /* Each warp takes c queue items (c spreads a small frontier over every warp) and
             * expands all their arcs together, one arc per lane: an exclusive scan of the
             * out-degrees, then each lane finds its arc's owner by binary search over the scan.
             * So the latency of a round is one arc's, whatever the degrees. */
            unsigned c = (nin + nwarps - 1) / nwarps;
            c = c < 1 ? 1 : (c > 32 ? 32 : c);
            for (unsigned base = gwarp * c; base < nin; base += nwarps * c) {
                const unsigned i = base + lane;
                const bool valid = lane < c && i < nin;
                uint32_t boff = 0, e0 = 0, deg = 0;
                u64 du = 0;
                if (valid) {
                    const uint32_t item = __ldcg(&qin[i]);
                    const uint32_t b = item / n;
                    boff = b * n;
                    const uint32_t v = item - boff;
                    e0 = __ldg(&a.row[v]);
                    deg = __ldg(&a.row[v + 1]) - e0;
                    du = __ldcg(&a.dist[item]);
                }
                uint32_t incl = deg;
                for (int o = 1; o < 32; o <<= 1) {
                    const uint32_t y = __shfl_up_sync(0xffffffffu, incl, o);
                    if (lane >= (unsigned)o) incl += y;
                }
                const uint32_t total = __shfl_sync(0xffffffffu, incl, 31);
                const uint32_t excl = incl - deg;
                for (uint32_t kb = 0; kb < total; kb += 32) {
                    const uint32_t k = kb + lane;
                    int lo = 0; /* the last lane whose first arc index is <= k */
                    for (int s = 16; s >= 1; s >>= 1) {
                        const uint32_t ex = __shfl_sync(0xffffffffu, excl, lo + s);
                        if (ex <= k) lo += s;
                    }
                    const uint32_t oboff = __shfl_sync(0xffffffffu, boff, lo);
                    const uint32_t oe0 = __shfl_sync(0xffffffffu, e0, lo);
                    const uint32_t oex = __shfl_sync(0xffffffffu, excl, lo);
                    const u64 odu = __shfl_sync(0xffffffffu, du, lo);
                    if (k < total) {
                        const uint32_t e = oe0 + (k - oex);
                        nf_relax(a, r, oboff + __ldg(&a.col[e]), odu + __ldg(&a.w[e]));
                    }
                }
            }
        } else {
            const unsigned fin = __ldcg(&ctl->fcnt[split % 3]);
            if (fin == 0) break;
            if (a.target != NONE32 && __ldcg(&a.dist[a.target]) < thr) break;
            const u64 thr_old = thr;
            u64 basev = thr;
            if (last_split_empty) {
                const u64 fm = __ldcg(&ctl->farmin[(split + 2) % 3]); /* written by split-1 */
                if (fm > basev) basev = fm;
            }
            thr = basev > INF64 - a.delta ? INF64 : basev + a.delta;
            if (gtid == 0) {
                ctl->ncnt[(it + 2) % 3] = 0;
                ctl->fcnt[(split + 2) % 3] = 0;
                ctl->farmin[(split + 1) % 3] = INF64;
            }
            const uint32_t *fpin = (split & 1) ? a.qf1 : a.qf0;
            uint32_t *fpout = (split & 1) ? a.qf0 : a.qf1;
            unsigned *fcout = &ctl->fcnt[(split + 1) % 3];
            u64 mymin = INF64;
            const unsigned fend = (fin + 31) & ~31u; /* whole warps, for the reduction */
            for (unsigned i = gtid; i < fend; i += nthreads) {
                if (i < fin) {
                    const uint32_t idx = __ldcg(&fpin[i]);
                    const u64 d = __ldcg(&a.dist[idx]);
                    if (d < thr_old) {
                        a.infar[idx] = 0; /* already expanded from the near queue */
                    } else if (d < thr) {
                        a.infar[idx] = 0;
                        if (atomicExch(&a.stamp[idx], r.tag) != r.tag)
                            q_push(r.qn_out, r.ncnt_out, idx);
                    } else {
                        q_push(fpout, fcout, idx);
                        if (d < mymin) mymin = d;
                    }
                }
            }
            for (int o = 16; o > 0; o >>= 1) {
                const u64 x = __shfl_down_sync(0xffffffffu, mymin, o);
                if (x < mymin) mymin = x;
            }
            if (lane == 0 && mymin != INF64) atomicMin(&ctl->farmin[split % 3], mymin);
            split++;
            last_split_empty = 1; /* cleared by the next expansion round */
        }
        it++;
        grid.sync();
    }
    if (gtid == 0) {
        ctl->rounds = it;
        ctl->splits = split;
    }
}

/* Sets every item to unreachable and clears the stamps and flags. */
static __global__ void nf_init(u64 *dist, uint32_t *stamp, uint32_t *infar, uint64_t items) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < items;
         i += (uint64_t)gridDim.x * blockDim.x) {
        dist[i] = INF64;
        stamp[i] = 0;
        infar[i] = 0;
    }
}

/* Seeds slot b with source src[b]: distance 0, in the first near queue. */
static __global__ void nf_sources(const uint32_t *src, uint32_t nsrc, uint32_t n, u64 *dist,
                                  uint32_t *qn0, nf_ctl *ctl) {
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b == 0) {
        ctl->ncnt[0] = nsrc;
        ctl->ncnt[1] = ctl->ncnt[2] = 0;
        for (int i = 0; i < 3; i++) {
            ctl->fcnt[i] = 0;
            ctl->farmin[i] = INF64;
        }
        ctl->rounds = ctl->splits = 0;
    }
    if (b < nsrc) {
        const uint32_t item = b * n + src[b];
        dist[item] = 0;
        qn0[b] = item;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Seed kernels (Martin et al. 2009). U and F are byte arrays; gmin alternates by iteration. */

static __global__ void seed_init(uint32_t n, uint32_t src, u64 *C, unsigned char *U,
                                 unsigned char *F, nf_ctl *ctl) {
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        C[v] = v == src ? 0 : INF64;
        U[v] = v != src;
        F[v] = v == src;
    }
    if (v == 0) {
        ctl->gmin[0] = ctl->gmin[1] = INF64;
        ctl->done = 0;
        ctl->seed_iters = 0;
    }
}

static __global__ void seed_relax(const uint32_t *row, const uint32_t *col, const uint32_t *w,
                                  uint32_t n, u64 *C, const unsigned char *U,
                                  const unsigned char *F, u64 maxd, const nf_ctl *ctl) {
    if (*(volatile const unsigned *)&ctl->done) return;
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !F[v]) return;
    const u64 cv = C[v];
    for (uint32_t e = row[v], end = row[v + 1]; e < end; e++) {
        const uint32_t x = col[e];
        if (U[x]) {
            const u64 nd = cv + w[e];
            if (nd <= maxd) atomicMin(&C[x], nd);
        }
    }
}

static __global__ void seed_min(uint32_t n, const u64 *C, const unsigned char *U, nf_ctl *ctl,
                                int slot) {
    if (*(volatile const unsigned *)&ctl->done) return;
    __shared__ u64 wmin[SEED_THREADS / 32];
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    u64 m = (v < n && U[v]) ? C[v] : INF64;
    for (int o = 16; o > 0; o >>= 1) {
        const u64 x = __shfl_down_sync(0xffffffffu, m, o);
        if (x < m) m = x;
    }
    if ((threadIdx.x & 31) == 0) wmin[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
        m = threadIdx.x < blockDim.x / 32 ? wmin[threadIdx.x] : INF64;
        for (int o = 16; o > 0; o >>= 1) {
            const u64 x = __shfl_down_sync(0xffffffffu, m, o);
            if (x < m) m = x;
        }
        if (threadIdx.x == 0 && m != INF64) atomicMin(&ctl->gmin[slot], m);
    }
}

static __global__ void seed_update(uint32_t n, const u64 *C, unsigned char *U, unsigned char *F,
                                   nf_ctl *ctl, int slot, uint32_t target) {
    if (*(volatile const unsigned *)&ctl->done) return;
    const u64 m = ctl->gmin[slot];
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v == 0) {
        ctl->gmin[slot ^ 1] = INF64; /* for the next iteration's reduction */
        if (m == INF64) ctl->done = 1;
        else ctl->seed_iters++;
    }
    if (m == INF64 || v >= n) return;
    const unsigned char f = U[v] && C[v] == m;
    F[v] = f;
    if (f) {
        U[v] = 0;
        if (v == target) ctl->done = 1; /* settled: enough for point-to-point */
    }
}

/* ---------------------------------------------------------------------------------------------
 * Predecessors, paths, table gather */

static __global__ void pred_init(uint32_t n, const uint32_t *rrow, const uint32_t *rcol,
                                 const uint32_t *rw, const u64 *dist, uint32_t src, uint32_t *pred,
                                 uint32_t *anch) {
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const u64 dv = dist[v];
    uint32_t p = NONE32, an = 1;
    if (v != src && dv != INF64) {
        an = 0;
        for (uint32_t e = rrow[v], end = rrow[v + 1]; e < end; e++) {
            const uint32_t u = rcol[e], wt = rw[e];
            const u64 du = dist[u];
            if (wt > 0 && du != INF64 && du + wt == dv) {
                p = u;
                an = 1;
                break;
            }
        }
    }
    pred[v] = p;
    anch[v] = an;
}

/* One anchoring round through tight zero-weight arcs (graphs with zero weights only). */
static __global__ void pred_zero(uint32_t n, const uint32_t *rrow, const uint32_t *rcol,
                                 const uint32_t *rw, const u64 *dist, uint32_t *pred,
                                 uint32_t *anch, nf_ctl *ctl) {
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || __ldcg(&anch[v])) return;
    const u64 dv = dist[v];
    for (uint32_t e = rrow[v], end = rrow[v + 1]; e < end; e++) {
        const uint32_t u = rcol[e];
        if (rw[e] == 0 && dist[u] == dv && __ldcg(&anch[u])) {
            pred[v] = u;
            __stcg(&anch[v], 1u);
            atomicAdd(&ctl->changed, 1u);
            return;
        }
    }
}

/* Walks t -> s over pred (one thread) into buf, reversed; len 0 when the chain is broken. */
static __global__ void path_walk(const uint32_t *pred, uint32_t n, uint32_t s, uint32_t t,
                                 uint32_t *buf, nf_ctl *ctl) {
    uint32_t v = t, len = 0;
    while (len < n) {
        buf[len++] = v;
        if (v == s) break;
        v = pred[v];
        if (v == NONE32) {
            len = 0;
            break;
        }
    }
    if (len >= n && buf[len - 1] != s) len = 0;
    ctl->path_len = len;
}

static __global__ void table_gather(const u64 *dist, uint32_t n, uint32_t nb, const uint32_t *dst,
                                    uint32_t nt, u64 *out) {
    const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i >= (uint64_t)nb * nt) return;
    const uint32_t b = (uint32_t)(i / nt), j = (uint32_t)(i % nt);
    out[i] = __ldcg(&dist[(uint64_t)b * n + dst[j]]);
}

static __global__ void fault_kernel(unsigned *p) { *p = 1; }

/* ---------------------------------------------------------------------------------------------
 * Drivers */

extern "C" gp_sssp_ws *gp_sssp_ws_new(void *stream, int share, uint64_t mem_budget, gp_err *err) {
    int rc = GP_OK;
    gp_sssp_ws *ws = (gp_sssp_ws *)calloc(1, sizeof *ws);
    if (!ws) {
        gp_err_set(err, GP_ENOMEM, "out of memory for a GPU workspace");
        return NULL;
    }
    ws->stream = (cudaStream_t)stream;
    ws->share = share < 1 ? 1 : share;
    ws->budget = mem_budget ? mem_budget : DEFAULT_MEM_BUDGET;
    {
        int dev = 0, per_sm = 0;
        CK(cudaGetDevice(&dev), "cudaGetDevice");
        CK(cudaDeviceGetAttribute(&ws->sms, cudaDevAttrMultiProcessorCount, dev), "device query");
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, nf_kernel, NF_THREADS, 0),
           "occupancy query");
        ws->coop_blocks = per_sm * ws->sms;
        if (ws->coop_blocks < 1) {
            rc = gp_err_set(err, GP_EDEVICE, "the near-far kernel cannot be resident on this GPU");
            goto out;
        }
        CK(cudaMalloc(&ws->ctl, sizeof(nf_ctl)), "cudaMalloc(workspace)");
        CK(cudaHostAlloc(&ws->hctl, sizeof(nf_ctl), cudaHostAllocDefault), "cudaHostAlloc");
        CK(cudaEventCreate(&ws->ev0), "cudaEventCreate");
        CK(cudaEventCreate(&ws->ev1), "cudaEventCreate");
    }
out:
    if (rc != GP_OK) {
        gp_sssp_ws_free(ws);
        return NULL;
    }
    return ws;
}

/* Items per run needed: batch x n. Grows (never shrinks) the item arrays. */
static int ws_reserve(gp_sssp_ws *ws, uint32_t n, uint64_t items, gp_err *err) {
    int rc = GP_OK;
    if (items > ws->cap_items) {
        ws_release_items(ws);
        size_t c = (size_t)items;
        CK(cudaMalloc(&ws->dist, c * 8), "cudaMalloc(workspace distances)");
        CK(cudaMalloc(&ws->stamp, c * 4), "cudaMalloc(workspace)");
        CK(cudaMalloc(&ws->infar, c * 4), "cudaMalloc(workspace)");
        for (int i = 0; i < 2; i++) {
            CK(cudaMalloc(&ws->qn[i], c * 4), "cudaMalloc(workspace queues)");
            CK(cudaMalloc(&ws->qf[i], c * 4), "cudaMalloc(workspace queues)");
        }
        ws->cap_items = items;
    }
    if (n > ws->cap_n) {
        cudaFree(ws->pred);
        cudaFree(ws->pathbuf);
        ws->pred = ws->pathbuf = NULL;
        ws->cap_n = 0;
        CK(cudaMalloc(&ws->pred, (size_t)n * 4), "cudaMalloc(workspace)");
        CK(cudaMalloc(&ws->pathbuf, (size_t)n * 4), "cudaMalloc(workspace)");
        ws->cap_n = n;
    }
out:
    if (rc != GP_OK) ws_release_items(ws);
    return rc;
}

static inline unsigned nblocks(uint64_t items, unsigned threads) {
    uint64_t b = (items + threads - 1) / threads;
    return (unsigned)(b ? (b > 2147483647ULL ? 2147483647ULL : b) : 1);
}

static void params_resolve(const gp_sssp_params *p, gp_sssp_params *o, int table) {
    static const gp_sssp_params def = {GP_SSSP_NEARFAR, 0, 0, 0};
    *o = p ? *p : def;
    if (o->delta_mul == 0) o->delta_mul = table ? DEFAULT_TABLE_DELTA_MUL : DEFAULT_DELTA_MUL;
}

static u64 delta_of(const gp_dgraph *dg, const gp_sssp_params *p) {
    if (p->delta_mul < 0) return INF64 / 2;
    double d = p->delta_mul * dg->mean_w;
    if (d < 1) d = 1;
    if (d > 9.0e18) return INF64 / 2;
    return (u64)d;
}

/* Runs near-far for nsrc sources already copied to ws->dsrc (or the single src). Distances are
 * left in ws->dist (slot b at b*n). */
static int nf_run(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *p,
                  const uint32_t *dsrc, uint32_t nsrc, uint32_t target, u64 maxd, gp_err *err) {
    int rc = GP_OK;
    const uint64_t items = (uint64_t)nsrc * dg->n;
    nf_args a;
    a.row = dg->row;
    a.col = dg->col;
    a.w = dg->w;
    a.n = dg->n;
    a.dist = ws->dist;
    a.stamp = ws->stamp;
    a.infar = ws->infar;
    a.qn0 = ws->qn[0];
    a.qn1 = ws->qn[1];
    a.qf0 = ws->qf[0];
    a.qf1 = ws->qf[1];
    a.ctl = ws->ctl;
    a.delta = delta_of(dg, p);
    a.maxd = maxd;
    a.target = target;
    /* a single source has a small frontier: fewer blocks make grid.sync cheaper; batches need
     * more warps. Never more than the stream's share of the co-resident blocks. */
    int blocks =
        p->blocks > 0
            ? p->blocks
            : std::min((nsrc == 1 ? DEFAULT_SINGLE_BLOCKS_PER_SM : DEFAULT_TABLE_BLOCKS_PER_SM) *
                           ws->sms,
                       ws->coop_blocks / ws->share);
    if (blocks > ws->coop_blocks) blocks = ws->coop_blocks;
    if (blocks < 1) blocks = 1;
    {
        void *args[] = {&a};
        unsigned ib = nblocks(items, 256);
        if (ib > (unsigned)ws->sms * 16) ib = ws->sms * 16;
        nf_init<<<ib, 256, 0, ws->stream>>>(ws->dist, ws->stamp, ws->infar, items);
        CKL("launching the initialisation kernel");
        nf_sources<<<nblocks(nsrc, 256), 256, 0, ws->stream>>>(dsrc, nsrc, dg->n, ws->dist,
                                                               ws->qn[0], ws->ctl);
        CKL("launching the source kernel");
        CK(cudaLaunchCooperativeKernel((void *)nf_kernel, blocks, NF_THREADS, args, 0, ws->stream),
           "launching the near-far kernel");
    }
out:
    return rc;
}

static int seed_run(gp_sssp_ws *ws, const gp_dgraph *dg, uint32_t src, uint32_t target, u64 maxd,
                    gp_err *err) {
    int rc = GP_OK;
    const uint32_t n = dg->n;
    unsigned char *U = (unsigned char *)ws->stamp, *F = (unsigned char *)ws->infar;
    const unsigned nb = nblocks(n, SEED_THREADS);
    unsigned chunk = 16, it = 0;
    seed_init<<<nb, SEED_THREADS, 0, ws->stream>>>(n, src, ws->dist, U, F, ws->ctl);
    CKL("launching the seed initialisation");
    for (;;) {
        for (unsigned k = 0; k < chunk; k++, it++) {
            const int slot = it & 1;
            seed_relax<<<nb, SEED_THREADS, 0, ws->stream>>>(dg->row, dg->col, dg->w, n, ws->dist, U,
                                                            F, maxd, ws->ctl);
            seed_min<<<nb, SEED_THREADS, 0, ws->stream>>>(n, ws->dist, U, ws->ctl, slot);
            seed_update<<<nb, SEED_THREADS, 0, ws->stream>>>(n, ws->dist, U, F, ws->ctl, slot,
                                                             target);
        }
        CKL("launching the seed kernels");
        CK(cudaMemcpyAsync(&ws->hctl->done, &ws->ctl->done, sizeof(unsigned),
                           cudaMemcpyDeviceToHost, ws->stream),
           "reading the seed stop flag");
        CK(cudaStreamSynchronize(ws->stream), "running the seed kernels");
        if (ws->hctl->done) break;
        if (chunk < 512) chunk *= 2;
    }
out:
    return rc;
}

/* pred for the single source in slot 0 of ws->dist. */
static int pred_run(gp_sssp_ws *ws, const gp_dgraph *dg, uint32_t src, gp_err *err) {
    int rc = GP_OK;
    const uint32_t n = dg->n;
    const unsigned nb = nblocks(n, 256);
    pred_init<<<nb, 256, 0, ws->stream>>>(n, dg->rrow, dg->rcol, dg->rw, ws->dist, src, ws->pred,
                                          ws->infar);
    CKL("launching the predecessor kernel");
    if (dg->has_zero) {
        for (int round = 0; round <= (int)n; round++) {
            CK(cudaMemsetAsync(&ws->ctl->changed, 0, sizeof(unsigned), ws->stream),
               "cudaMemsetAsync");
            pred_zero<<<nb, 256, 0, ws->stream>>>(n, dg->rrow, dg->rcol, dg->rw, ws->dist, ws->pred,
                                                  ws->infar, ws->ctl);
            CKL("launching the zero-weight predecessor kernel");
            CK(cudaMemcpyAsync(&ws->hctl->changed, &ws->ctl->changed, sizeof(unsigned),
                               cudaMemcpyDeviceToHost, ws->stream),
               "reading the anchoring flag");
            CK(cudaStreamSynchronize(ws->stream), "anchoring zero-weight predecessors");
            if (!ws->hctl->changed) break;
        }
    }
out:
    return rc;
}

static int check_args(const gp_dgraph *dg, uint32_t v, const char *what, gp_err *err) {
    if (!dg) return gp_err_set(err, GP_EINVAL, "graph is not resident on the GPU");
    if (v >= dg->n)
        return gp_err_set(err, GP_EINVAL, "%s node index %u out of range (n = %u)", what, v, dg->n);
    return GP_OK;
}

static int read_stats(gp_sssp_ws *ws, int variant, gp_sssp_stats *st, gp_err *err) {
    int rc = GP_OK;
    float ms = 0;
    CK(cudaMemcpyAsync(ws->hctl, ws->ctl, sizeof(nf_ctl), cudaMemcpyDeviceToHost, ws->stream),
       "reading the run's counters");
    CK(cudaStreamSynchronize(ws->stream), "running the shortest-path kernels");
    CK(cudaEventElapsedTime(&ms, ws->ev0, ws->ev1), "reading the timer");
    if (st) {
        st->gpu_ms = ms;
        st->iterations = variant == GP_SSSP_SEED ? ws->hctl->seed_iters : ws->hctl->rounds;
        st->batches = 1;
    }
out:
    return rc;
}

extern "C" int gp_cuda_sssp(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *pin,
                            uint32_t src, uint64_t max_dist, uint64_t *dist, uint32_t *pred,
                            gp_sssp_stats *st, gp_err *err) {
    int rc = check_args(dg, src, "source", err);
    if (rc) return rc;
    gp_sssp_params p;
    params_resolve(pin, &p, 0);
    if ((rc = ws_reserve(ws, dg->n, dg->n, err))) return rc;
    CK(cudaEventRecord(ws->ev0, ws->stream), "cudaEventRecord");
    if (p.variant == GP_SSSP_SEED) {
        rc = seed_run(ws, dg, src, NONE32, max_dist, err);
    } else {
        CK(cudaMemcpyAsync(ws->pred, &src, 4, cudaMemcpyHostToDevice, ws->stream),
           "copying the source");
        CK(cudaStreamSynchronize(ws->stream), "copying the source");
        rc = nf_run(ws, dg, &p, ws->pred, 1, NONE32, max_dist, err);
    }
    if (rc) goto out;
    if (pred && (rc = pred_run(ws, dg, src, err))) goto out;
    CK(cudaEventRecord(ws->ev1, ws->stream), "cudaEventRecord");
    if ((rc = read_stats(ws, p.variant, st, err))) goto out;
    if (dist)
        CK(cudaMemcpyAsync(dist, ws->dist, (size_t)dg->n * 8, cudaMemcpyDeviceToHost, ws->stream),
           "copying distances to the host");
    if (pred)
        CK(cudaMemcpyAsync(pred, ws->pred, (size_t)dg->n * 4, cudaMemcpyDeviceToHost, ws->stream),
           "copying predecessors to the host");
    CK(cudaStreamSynchronize(ws->stream), "copying results to the host");
out:
    return rc;
}

extern "C" int gp_cuda_p2p(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *pin,
                           uint32_t s, uint32_t t, uint64_t *dist, uint32_t **nodes, uint32_t *nlen,
                           gp_sssp_stats *st, gp_err *err) {
    int rc = check_args(dg, s, "source", err);
    if (!rc) rc = check_args(dg, t, "target", err);
    if (rc) return rc;
    gp_sssp_params p;
    params_resolve(pin, &p, 0);
    *dist = GP_INF;
    *nodes = NULL;
    *nlen = 0;
    u64 dt = INF64;
    uint32_t len = 0;
    if ((rc = ws_reserve(ws, dg->n, dg->n, err))) return rc;
    CK(cudaEventRecord(ws->ev0, ws->stream), "cudaEventRecord");
    if (p.variant == GP_SSSP_SEED) {
        rc = seed_run(ws, dg, s, t, INF64, err);
    } else {
        CK(cudaMemcpyAsync(ws->pathbuf, &s, 4, cudaMemcpyHostToDevice, ws->stream),
           "copying the source");
        CK(cudaStreamSynchronize(ws->stream), "copying the source");
        rc = nf_run(ws, dg, &p, ws->pathbuf, 1, t, INF64, err);
    }
    if (rc) goto out;
    if ((rc = pred_run(ws, dg, s, err))) goto out;
    path_walk<<<1, 1, 0, ws->stream>>>(ws->pred, dg->n, s, t, ws->pathbuf, ws->ctl);
    CKL("launching the path kernel");
    CK(cudaEventRecord(ws->ev1, ws->stream), "cudaEventRecord");
    if ((rc = read_stats(ws, p.variant, st, err))) goto out;
    CK(cudaMemcpyAsync(&ws->hctl->gmin[0], ws->dist + t, 8, cudaMemcpyDeviceToHost, ws->stream),
       "copying the distance");
    CK(cudaStreamSynchronize(ws->stream), "copying the distance");
    dt = ws->hctl->gmin[0];
    if (dt == INF64) goto out; /* no route */
    len = ws->hctl->path_len;
    if (len == 0) {
        rc = gp_err_set(err, GP_EDEVICE, "internal error: broken predecessor chain from %u to %u",
                        t, s);
        goto out;
    }
    *nodes = (uint32_t *)malloc((size_t)len * 4);
    if (!*nodes) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for a path of %u nodes", len);
        goto out;
    }
    CK(cudaMemcpyAsync(*nodes, ws->pathbuf, (size_t)len * 4, cudaMemcpyDeviceToHost, ws->stream),
       "copying the path");
    CK(cudaStreamSynchronize(ws->stream), "copying the path");
    for (uint32_t i = 0; i < len / 2; i++) {
        uint32_t x = (*nodes)[i];
        (*nodes)[i] = (*nodes)[len - 1 - i];
        (*nodes)[len - 1 - i] = x;
    }
    *nlen = len;
    *dist = dt;
out:
    if (rc) {
        free(*nodes);
        *nodes = NULL;
        *nlen = 0;
    }
    return rc;
}

/* Sources per batch: the workspace's memory budget over the per-item bytes (dist 8, stamp 4,
 * in-far 4, two near and two far queue slots 16), capped so items fit 32-bit indices. */
static uint32_t batch_size(const gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *p) {
    uint64_t b = ws->budget / ((uint64_t)dg->n * 32);
    uint64_t cap = p->batch > 0 ? (uint64_t)p->batch : DEFAULT_BATCH_MAX;
    if (b > cap) b = cap;
    if (b > 0xffffffffULL / dg->n) b = 0xffffffffULL / dg->n;
    return b < 1 ? 1 : (uint32_t)b;
}

extern "C" int gp_cuda_table(gp_sssp_ws *ws, const gp_dgraph *dg, const gp_sssp_params *pin,
                             const uint32_t *src, uint32_t ns, const uint32_t *dst, uint32_t nt,
                             uint64_t *out, gp_sssp_stats *st, gp_err *err) {
    int rc = GP_OK;
    if (!dg) return gp_err_set(err, GP_EINVAL, "graph is not resident on the GPU");
    for (uint32_t i = 0; i < ns; i++)
        if ((rc = check_args(dg, src[i], "source", err))) return rc;
    for (uint32_t j = 0; j < nt; j++)
        if ((rc = check_args(dg, dst[j], "target", err))) return rc;
    if (ns == 0 || nt == 0) return GP_OK;
    gp_sssp_params p;
    params_resolve(pin, &p, 1);
    gp_sssp_stats acc = {0, 0, 0};
    if (p.variant == GP_SSSP_SEED) {
        /* the baseline has no batched form: one run per source */
        if ((rc = ws_reserve(ws, dg->n, dg->n, err))) return rc;
        for (uint32_t i = 0; i < ns; i++) {
            gp_sssp_stats one;
            /* the previous source's copies were synchronised: a deadline check costs no sync */
            if (i > 0 && gp_deadline_expired()) {
                rc = gp_deadline_error(err);
                goto out;
            }
            CK(cudaEventRecord(ws->ev0, ws->stream), "cudaEventRecord");
            if ((rc = seed_run(ws, dg, src[i], NONE32, INF64, err))) goto out;
            CK(cudaEventRecord(ws->ev1, ws->stream), "cudaEventRecord");
            if ((rc = read_stats(ws, p.variant, &one, err))) goto out;
            for (uint32_t j = 0; j < nt; j++)
                CK(cudaMemcpyAsync(out + (uint64_t)i * nt + j, ws->dist + dst[j], 8,
                                   cudaMemcpyDeviceToHost, ws->stream),
                   "copying table entries");
            CK(cudaStreamSynchronize(ws->stream), "copying table entries");
            acc.gpu_ms += one.gpu_ms;
            acc.iterations += one.iterations;
            acc.batches++;
        }
        if (st) *st = acc;
        return GP_OK;
    }
    {
        const uint32_t bmax = batch_size(ws, dg, &p);
        const uint32_t nbatch = (ns + bmax - 1) / bmax;
        const uint32_t B = (ns + nbatch - 1) / nbatch; /* balanced batches */
        if ((rc = ws_reserve(ws, dg->n, (uint64_t)B * dg->n, err))) return rc;
        if (ns > ws->cap_src) {
            cudaFree(ws->dsrc);
            ws->dsrc = NULL;
            ws->cap_src = 0;
            CK(cudaMalloc(&ws->dsrc, (size_t)ns * 4), "cudaMalloc(table sources)");
            ws->cap_src = ns;
        }
        if (nt > ws->cap_dst) {
            cudaFree(ws->ddst);
            ws->ddst = NULL;
            ws->cap_dst = 0;
            CK(cudaMalloc(&ws->ddst, (size_t)nt * 4), "cudaMalloc(table targets)");
            ws->cap_dst = nt;
        }
        if ((uint64_t)B * nt > ws->cap_out) {
            cudaFree(ws->dout);
            ws->dout = NULL;
            ws->cap_out = 0;
            CK(cudaMalloc(&ws->dout, (size_t)B * nt * 8), "cudaMalloc(table output)");
            ws->cap_out = (uint64_t)B * nt;
        }
        CK(cudaMemcpyAsync(ws->dsrc, src, (size_t)ns * 4, cudaMemcpyHostToDevice, ws->stream),
           "copying table sources");
        CK(cudaMemcpyAsync(ws->ddst, dst, (size_t)nt * 4, cudaMemcpyHostToDevice, ws->stream),
           "copying table targets");
        for (uint32_t b0 = 0; b0 < ns; b0 += B) {
            const uint32_t nb = ns - b0 < B ? ns - b0 : B;
            gp_sssp_stats one;
            /* read_stats waited for the previous batch: checking the deadline adds no sync */
            if (b0 > 0 && gp_deadline_expired()) {
                rc = gp_deadline_error(err);
                goto out;
            }
            CK(cudaEventRecord(ws->ev0, ws->stream), "cudaEventRecord");
            if ((rc = nf_run(ws, dg, &p, ws->dsrc + b0, nb, NONE32, INF64, err))) goto out;
            table_gather<<<nblocks((uint64_t)nb * nt, 256), 256, 0, ws->stream>>>(
                ws->dist, dg->n, nb, ws->ddst, nt, ws->dout);
            CKL("launching the table gather kernel");
            CK(cudaEventRecord(ws->ev1, ws->stream), "cudaEventRecord");
            CK(cudaMemcpyAsync(out + (uint64_t)b0 * nt, ws->dout, (size_t)nb * nt * 8,
                               cudaMemcpyDeviceToHost, ws->stream),
               "copying the table to the host");
            if ((rc = read_stats(ws, p.variant, &one, err))) goto out;
            acc.gpu_ms += one.gpu_ms;
            acc.iterations += one.iterations;
            acc.batches++;
        }
        if (st) *st = acc;
    }
out:
    return rc;
}

extern "C" int gp_cuda_debug_fault(gp_sssp_ws *ws, gp_err *err) {
    int rc = GP_OK;
    fault_kernel<<<1, 1, 0, ws->stream>>>((unsigned *)(uintptr_t)0x10);
    CKL("launching the fault kernel");
    CK(cudaStreamSynchronize(ws->stream), "running the fault kernel");
out:
    return rc;
}
