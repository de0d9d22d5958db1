/* cch_customize.cu - GPU CCH customization (kernels/cch.h gp_dcch_customize) and the sweep plan's
 * metric-dependent parts computed with it: the plan's arc weights, the top table and the piece
 * tables (kernels/cch_plan.h gp_cch_top, gp_cch_ptab; their CPU references engine/cch_plan.h
 * gp_cch_top_table and gp_cch_ptab_fill). Device state in kernels/cch.cu, shared structs in
 * cch_internal.cuh.
 *
 * Customization, bottom-up: a launch per level of more than SMALL_ITEMS / 8 edges or more than
 * SMALL_TRI triangles, its edges by their lower triangles (kernels/cch.cu edge_class): a block
 * per edge of more than HEAVY_TRI (launched first), a warp per edge of more than SHORT_TRI,
 * SHORT_W lanes per edge of at most SHORT_TRI and a thread per edge of fewer than TINY_TRI
 * (lanes over the triangles, two per step, then the group's min of value and witness); in a
 * level of CHUNK_MIN edges or more those classes go chunk by chunk of CUSTOM_CHUNK edges, a
 * block each (customize_chunks: road-like 24M's turn graph 70.45 -> 67.70 ms, gen:8M's 26.46 ->
 * 25.60, gen:4M's 15.34 -> 15.18); runs of
 * smaller levels in one block of 1024 threads, a warp per edge, with __syncthreads() between
 * levels (a block's global writes are visible to it after the barrier). The launches are the
 * same for every metric of a topology part: captured once as a CUDA graph and replayed
 * (CUSTOM_GRAPH; gen:1M's turn graph 7.39 -> 6.61 ms, gen:4M's 17.80 -> 16.94, road-like
 * 24M's in nd order 79.33 -> 77.60; 71.27 with step_wt). Each level launch after the first is a
 * programmatic dependent launch (CUSTOM_PDL): its blocks start while the level before runs,
 * load their edges' first triangles and wait (pdl_wait) before the lower edges' weights; with
 * the pipelined scan (edge_scan) gen:1M's turn graph 6.31 -> 5.73 ms, road-like 24M's in flow
 * order unchanged (53.34 -> 53.36). On the road-like 1M
 * map's turn graph the one block took 16.5 of 28.0 ms of kernel time (ncu, H200): its top
 * levels have few edges of hundreds of triangles each, so a level of more than SMALL_TRI
 * triangles is launched on its own. Triangles read the lower edges' packed {fw, bw} (fb), the
 * only customized weights on the device: the separate fw and bw arrays it also wrote left
 * (gen:4M's turn graph in flow order 11.69 -> 11.29 ms, bench/results
 * 2026-12-02-NVIDIA-H200-cch-packed-weights.md); the plan's weights read fb's halves and the
 * copy back splits them a chunk at a time (fb_half). Device
 * times (H200, bench/lab_cch.cu, 2026-11-30): road-like 24M's turn graph 79.4 ms (129.0 without
 * the thread and block classes), gen:4M's 17.7 ms, gen:1M's 7.4 ms (docs/gpu.md has the steps
 * before).
 *
 * A cost change customized on the host from its predecessor (engine/cch.h
 * gp_cch_gpu_customize_delta) is not customized here again: gp_dcch_customize_from copies the
 * predecessor's arrays on the device, scatters the edges the host pass rewrote and derives the
 * plan's weights (no full customization, nothing back to the host).
 */
#include <chrono>
#include "kernels/cch_internal.cuh"

namespace {

/* Arc i's down weight (the edge's packed bw) into wt[i]. */
__global__ void gather_wt(const uint32_t *__restrict__ edge, uint32_t count,
                          const uint2 *__restrict__ fb, uint32_t *wt) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) wt[i] = fb[edge[i]].y;
}

/* The inner arcs' weights, in position order (in_wt) and in the warp bins' layout (pwt), a warp
 * per step: lane j of the step's padded arcs reads its arc's down weight through in_edge (INF past
 * the step's arcs) and writes both. Every inner arc is in one step. It replaced a gather into
 * in_wt followed by a thread per step copying its arcs into the padded layout, whose lanes each
 * walked its own step (uncoalesced, 71% of the plan's weights): 2.13 -> 1.03 ms on gen:4M's turn
 * graph, customization with them 77.60 -> 71.27 ms on road-like 24M's (nd; H200, bench/results
 * 2026-12-02-NVIDIA-H200-cch-plan-weights.md). */
__global__ void step_wt(uint32_t nsteps, const uint32_t *__restrict__ step_first,
                        const uint32_t *__restrict__ in_first,
                        const uint32_t *__restrict__ step_arc, const uint32_t *__restrict__ in_edge,
                        const uint2 *__restrict__ fb, uint32_t *in_wt, uint32_t *pwt) {
    const uint64_t st = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (st >= nsteps) return; /* whole warps */
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t a0 = in_first[step_first[st]], na = in_first[step_first[st + 1]] - a0;
    const uint32_t d0 = step_arc[st], nd = step_arc[st + 1] - d0;
    for (uint32_t j = lane; j < nd; j += 32) {
        const uint32_t w = j < na ? fb[in_edge[a0 + j]].y : INF32;
        if (j < na) in_wt[a0 + j] = w;
        pwt[d0 + j] = w;
    }
}

/* The top table (kernels/cch_plan.h gp_cch_top): a warp per row u walks the top positions after
 * u in order (an arc's head precedes its tail, so row[h] is final when x reads it), lanes over x's
 * arcs; a node no path from u reaches (every lane INF) skips the warp min. The row lives in shared
 * memory (K*8 bytes per warp; lane 0's writes are visible to the warp after __syncwarp) and goes
 * to tab at the end. Latency-bound (a serial walk over the top per warp): BAY 0.83 ms, NY 1.08 ms
 * (the first version, the row in global memory, measured 0.72 / 1.00 ms in another run). */
__global__ void top_table(uint32_t K, const uint32_t *__restrict__ tf,
                          const uint32_t *__restrict__ th, const uint32_t *__restrict__ tw,
                          u64 *tab) {
    extern __shared__ u64 sm[];
    const uint32_t u = (uint32_t)(((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const uint32_t lane = threadIdx.x & 31;
    if (u >= K) return; /* whole warps */
    u64 *row = sm + (size_t)(threadIdx.x >> 5) * K;
    for (uint32_t x = lane; x < K; x += 32) row[x] = x == u ? 0 : INF64;
    __syncwarp();
    for (uint32_t x = u + 1; x < K; x++) {
        u64 best = INF64;
        for (uint32_t a = tf[x] + lane; a < tf[x + 1]; a += 32) {
            uint32_t h = th[a], w = tw[a];
            if (h < u || w == INF32) continue; /* heads before u: INF */
            u64 dh = row[h];
            if (dh != INF64 && dh + w < best) best = dh + w;
        }
        if (__any_sync(0xffffffffu, best != INF64)) {
            for (int o = 16; o > 0; o >>= 1) {
                u64 v = __shfl_xor_sync(0xffffffffu, best, o);
                best = v < best ? v : best;
            }
            if (lane == 0) row[x] = best;
            __syncwarp();
        }
    }
    for (uint32_t x = lane; x < K; x += 32) tab[(size_t)u * K + x] = row[x];
}

/* The piece tables (kernels/cch_plan.h gp_cch_ptab; gp_cch_ptab_fill is the CPU reference): a
 * block per bin with a table, its steps in order with a block barrier between them (entry (v, j)
 * reads the entries of v's upper neighbours, which are at lower steps), a thread per entry of the
 * step looping over v's inner arcs. S (the bin's step offsets) and at[j] = col(j) - S(j+1) in
 * shared memory (ns + 1 and ns words). Only T (the high word) is written; a down distance that
 * would reach 2^32-1 sets *bad (the host then keeps the step sweep for this metric). The block's
 * own global writes are visible to it after __syncthreads() (tab is not read through the
 * read-only cache here). */
__global__ void __launch_bounds__(PIECE_THREADS)
    piece_tables(const uint32_t *__restrict__ bins, const uint32_t *__restrict__ bin_first,
                 const uint32_t *__restrict__ bin_step, const uint32_t *__restrict__ step_first,
                 const uint32_t *__restrict__ in_first, const uint32_t *__restrict__ in_head,
                 const uint32_t *__restrict__ in_wt, const uint32_t *__restrict__ depth,
                 const uint32_t *__restrict__ tab_first, uint32_t *tab, uint32_t *bad) {
    extern __shared__ int32_t pq[];
    const uint32_t b = bins[blockIdx.x], tid = threadIdx.x;
    const uint32_t p0 = bin_first[b], N = bin_first[b + 1] - p0, s0 = bin_step[b];
    const uint32_t ns = bin_step[b + 1] - s0, t0 = tab_first[b];
    int32_t *S = pq, *at = pq + ns + 1;
    for (uint32_t i = tid; i <= ns; i += blockDim.x) S[i] = (int32_t)(step_first[s0 + i] - p0);
    __syncthreads();
    if (tid == 0) {
        int32_t col = 0;
        for (uint32_t j = 0; j + 1 < ns; j++) {
            at[j] = col - S[j + 1];
            col += (int32_t)N - S[j + 1];
        }
    }
    __syncthreads();
    uint32_t over = 0;
    for (uint32_t st = 1; st < ns; st++) {
        const uint32_t items = (uint32_t)(S[st + 1] - S[st]) * st;
        for (uint32_t it = tid; it < items; it += blockDim.x) {
            const uint32_t v = (uint32_t)S[st] + it / st, j = it % st, q = p0 + v;
            u64 best = INF32;
            for (uint32_t a = in_first[q]; a < in_first[q + 1]; a++) {
                const uint32_t w = in_wt[a], h = in_head[a];
                const int32_t idx = (int32_t)depth[p0 + h] - (int32_t)st + (int32_t)j;
                if (w == INF32 || idx < -1) continue; /* h below a_j: no path from a_j */
                const u64 th =
                    idx < 0 ? 0 : tab[2 * ((size_t)t0 + (uint32_t)(at[idx] + (int32_t)h)) + 1];
                if (th == INF32) continue;
                if (th + w >= INF32) over = 1;
                else if (th + w < best) best = th + w;
            }
            tab[2 * ((size_t)t0 + (uint32_t)(at[j] + (int32_t)v)) + 1] = (uint32_t)best;
        }
        __syncthreads();
    }
    if (over) atomicOr(bad, 1u);
}

/* Flat phases' T: the piece tables' high words alone. */
__global__ void ent_t(const u64 *__restrict__ ent, const uint32_t *__restrict__ perm, uint64_t n,
                      uint32_t *T) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) T[i] = (uint32_t)(ent[perm[i]] >> 32);
}

/* One triangle's two candidates into a lane's minima (k ascending per lane, so the first offset
 * reaching a strictly smaller value is kept). */
__device__ __forceinline__ void relax_pair(uint2 w1, uint2 w2, uint32_t off, uint32_t &f,
                                           uint32_t &b, uint32_t &fm, uint32_t &bm, int &of,
                                           int &ob) {
    uint32_t a1 = w1.y, b2 = w2.x, a2 = w2.y, b1 = w1.x;
    if (a1 != INF32 && b2 != INF32) {
        u64 sum = (u64)a1 + b2;
        if (sum >= INF32) of = 1;
        else if ((uint32_t)sum < f) f = (uint32_t)sum, fm = off;
    }
    if (a2 != INF32 && b1 != INF32) {
        u64 sum = (u64)a2 + b1;
        if (sum >= INF32) ob = 1;
        else if ((uint32_t)sum < b) b = (uint32_t)sum, bm = off;
    }
}

/* Programmatic dependent launches (CUSTOM_PDL): a level's kernel lets the next level's start at
 * once (its blocks load their edges and first triangles meanwhile) and waits, before it reads a
 * lower edge's weight, until the level before has finished and its writes are visible. Both are
 * no-ops in a kernel launched without the attribute. */
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* One lane's part of edge e's lower triangles (W lanes, lane in [0, W)): the triangles k0+lane,
 * k0+lane+W, ..., two per step with their loads issued together (the pass is bound by the latency
 * of these dependent loads more than by bandwidth), and the next step's two triangles loaded
 * before this step's sums, so that a step waits for one load rather than two in a row (the first
 * step's before pdl_wait); per lane the smallest sums and the first offsets reaching them, and
 * whether a sum overflowed. */
struct lane_min {
    uint32_t f, b, fm, bm;
    int of, ob;
};
template <int W>
__device__ __forceinline__ lane_min edge_scan(uint32_t e, int lane, const uint64_t *__restrict__ tf,
                                              const uint32_t *__restrict__ tri, const uint2 *fb) {
    lane_min r = {INF32, INF32, INF32, INF32, 0, 0};
    const uint64_t k0 = tf[e], k1 = tf[e + 1];
    const uint2 *tp = (const uint2 *)tri; /* {e1, e2} per triangle */
    uint64_t k = k0 + lane;
    uint2 t1 = k < k1 ? tp[k] : make_uint2(0, 0), t2 = k + W < k1 ? tp[k + W] : make_uint2(0, 0);
    pdl_wait();
    for (; k < k1; k += 2 * W) {
        const bool two = k + W < k1;
        uint2 w1 = fb[t1.x], w2 = fb[t1.y]; /* {fw, bw}: one sector each rather than two */
        uint2 w3 = two ? fb[t2.x] : make_uint2(INF32, INF32);
        uint2 w4 = two ? fb[t2.y] : make_uint2(INF32, INF32);
        const uint64_t kn = k + 2 * W;
        const uint2 n1 = kn < k1 ? tp[kn] : make_uint2(0, 0);
        const uint2 n2 = kn + W < k1 ? tp[kn + W] : make_uint2(0, 0);
        relax_pair(w1, w2, (uint32_t)(k - k0), r.f, r.b, r.fm, r.bm, r.of, r.ob);
        relax_pair(w3, w4, (uint32_t)(k + W - k0), r.f, r.b, r.fm, r.bm, r.of, r.ob);
        t1 = n1, t2 = n2;
    }
    return r;
}

/* Edge e's results from its triangles' minima (f, b) with the first offsets reaching them (fm,
 * bm), the overflow flags and its original weights (of0, ob0: loaded by the caller before the
 * triangles, so that their latency overlaps the scan's): the witness is none when the original
 * arc reaches the minimum (the CPU's rule, engine/cch.c customize_range). */
__device__ __forceinline__ void edge_store(uint32_t e, uint32_t f, uint32_t b, uint32_t fm,
                                           uint32_t bm, int of, int ob, uint32_t of0, uint32_t ob0,
                                           uint2 *fb, uint32_t *fmid, uint32_t *bmid,
                                           uint32_t *bad) {
    const uint32_t fw_ = min(f, of0), bw_ = min(b, ob0);
    fb[e] = make_uint2(fw_, bw_);
    fmid[e] = fw_ == of0 ? INF32 : fm;
    bmid[e] = bw_ == ob0 ? INF32 : bm;
    if ((of && fw_ == INF32) || (ob && bw_ == INF32)) atomicMin(bad, e);
}

/* W lanes customize edge e (mask: the group's lanes of the warp; W = 1: a thread alone): each
 * lane's minima (edge_scan), then the group's minimum and the smallest offset reaching it. */
template <int W>
__device__ __forceinline__ void customize_edge(uint32_t e, int lane, unsigned mask,
                                               const uint64_t *__restrict__ tf,
                                               const uint32_t *__restrict__ tri,
                                               const uint32_t *__restrict__ ofw,
                                               const uint32_t *__restrict__ obw, uint2 *fb,
                                               uint32_t *fmid, uint32_t *bmid, uint32_t *bad) {
    const uint32_t of0 = lane == 0 ? ofw[e] : 0, ob0 = lane == 0 ? obw[e] : 0;
    lane_min r = edge_scan<W>(e, lane, tf, tri, fb);
    if constexpr (W == 1) {
        (void)mask;
        edge_store(e, r.f, r.b, r.fm, r.bm, r.of, r.ob, of0, ob0, fb, fmid, bmid, bad);
    } else {
        const uint32_t fmin = __reduce_min_sync(mask, r.f), bmin = __reduce_min_sync(mask, r.b);
        const uint32_t fmc = __reduce_min_sync(mask, r.f == fmin ? r.fm : INF32);
        const uint32_t bmc = __reduce_min_sync(mask, r.b == bmin ? r.bm : INF32);
        const int of = __any_sync(mask, r.of), ob = __any_sync(mask, r.ob);
        if (lane == 0) edge_store(e, fmin, bmin, fmc, bmc, of, ob, of0, ob0, fb, fmid, bmid, bad);
    }
}

/* A block of BIG_THREADS customizes edge e (one of a level's heaviest): each thread's minima
 * packed as value << 32 | offset, so that one minimum gives the value and the first offset
 * reaching it; warps reduce by shuffles, then thread 0 over the warps. */
__device__ __forceinline__ void customize_edge_block(uint32_t e, const uint64_t *__restrict__ tf,
                                                     const uint32_t *__restrict__ tri,
                                                     const uint32_t *__restrict__ ofw,
                                                     const uint32_t *__restrict__ obw, uint2 *fb,
                                                     uint32_t *fmid, uint32_t *bmid,
                                                     uint32_t *bad) {
    __shared__ u64 sf[BIG_THREADS / 32], sb[BIG_THREADS / 32];
    __shared__ int sfl[BIG_THREADS / 32];
    const uint32_t of0 = threadIdx.x == 0 ? ofw[e] : 0, ob0 = threadIdx.x == 0 ? obw[e] : 0;
    lane_min r = edge_scan<BIG_THREADS>(e, (int)threadIdx.x, tf, tri, fb);
    u64 pf = (u64)r.f << 32 | r.fm, pb = (u64)r.b << 32 | r.bm;
    for (int o = 16; o > 0; o >>= 1) {
        const u64 xf = __shfl_xor_sync(0xffffffffu, pf, o),
                  xb = __shfl_xor_sync(0xffffffffu, pb, o);
        pf = xf < pf ? xf : pf;
        pb = xb < pb ? xb : pb;
    }
    const int fl = __any_sync(0xffffffffu, r.of) | __any_sync(0xffffffffu, r.ob) << 1;
    const int warp = (int)threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) sf[warp] = pf, sb[warp] = pb, sfl[warp] = fl;
    __syncthreads();
    if (threadIdx.x == 0) {
        int f = 0;
        for (int w = 0; w < BIG_THREADS / 32; w++) {
            pf = sf[w] < pf ? sf[w] : pf;
            pb = sb[w] < pb ? sb[w] : pb;
            f |= sfl[w];
        }
        edge_store(e, (uint32_t)(pf >> 32), (uint32_t)(pb >> 32), (uint32_t)pf, (uint32_t)pb, f & 1,
                   f >> 1, of0, ob0, fb, fmid, bmid, bad);
    }
}

/* One level: its edges in eord by class (kernels/cch.cu edge_class): n1 tiny ones, n8 short, n32
 * long, then the heavy ones. Blocks take the heavy edges first (a block each), then the long ones
 * (a warp each), the short ones (SHORT_W lanes each) and the tiny ones (a thread each); b[0..3)
 * are the first blocks of the long, short and tiny parts. */
__global__ void customize_level(const uint32_t *__restrict__ eord, uint32_t n1, uint32_t n8,
                                uint32_t n32, uint3 b, const uint64_t *__restrict__ tf,
                                const uint32_t *__restrict__ tri, const uint32_t *__restrict__ ofw,
                                const uint32_t *__restrict__ obw, uint2 *fb, uint32_t *fmid,
                                uint32_t *bmid, uint32_t *bad) {
    pdl_trigger();
    const uint32_t bx = blockIdx.x;
    if (bx < b.x) {
        customize_edge_block(eord[n1 + n8 + n32 + bx], tf, tri, ofw, obw, fb, fmid, bmid, bad);
    } else if (bx < b.y) {
        uint64_t w = ((uint64_t)(bx - b.x) * blockDim.x + threadIdx.x) / 32;
        if (w >= n32) return; /* whole warps leave together */
        customize_edge<32>(eord[n1 + n8 + w], threadIdx.x & 31, 0xffffffffu, tf, tri, ofw, obw, fb,
                           fmid, bmid, bad);
    } else if (bx < b.z) {
        uint64_t g = ((uint64_t)(bx - b.y) * blockDim.x + threadIdx.x) / SHORT_W;
        if (g >= n8) return; /* whole groups leave together */
        const int lane = threadIdx.x & (SHORT_W - 1);
        const unsigned mask = ((1u << SHORT_W) - 1) << (threadIdx.x & 31 & ~(SHORT_W - 1));
        customize_edge<SHORT_W>(eord[n1 + g], lane, mask, tf, tri, ofw, obw, fb, fmid, bmid, bad);
    } else {
        uint64_t i = (uint64_t)(bx - b.z) * blockDim.x + threadIdx.x;
        if (i >= n1) return;
        customize_edge<1>(eord[i], 0, 0, tf, tri, ofw, obw, fb, fmid, bmid, bad);
    }
}

/* One chunked level (kernels/cch.cu topo_new): its nh heavy edges first in eord (a block each),
 * then its other nn edges in chunks of C by id, a block each: the chunk's tiny edges a thread
 * each, its short ones SHORT_W lanes each, its long ones a warp each (cd: the chunk's n1 | n8 <<
 * 16). A row's edges of every class so run at the same time on one multiprocessor, and the lower
 * rows their triangles read (two edges of one row per triangle) are read while they are in the
 * caches, rather than again by each class's part of the level. */
__global__ void __launch_bounds__(BIG_THREADS)
    customize_chunks(const uint32_t *__restrict__ eord, uint32_t nh, uint32_t nn, uint32_t C,
                     const uint32_t *__restrict__ cd, const uint64_t *__restrict__ tf,
                     const uint32_t *__restrict__ tri, const uint32_t *__restrict__ ofw,
                     const uint32_t *__restrict__ obw, uint2 *fb, uint32_t *fmid, uint32_t *bmid,
                     uint32_t *bad) {
    pdl_trigger();
    const uint32_t bx = blockIdx.x;
    if (bx < nh) {
        customize_edge_block(eord[bx], tf, tri, ofw, obw, fb, fmid, bmid, bad);
        return;
    }
    const uint32_t c = bx - nh, len = min(C, nn - c * C), n1 = cd[c] & 0xffffu, n8 = cd[c] >> 16;
    const uint32_t *q = eord + nh + (size_t)c * C;
    for (uint32_t i = threadIdx.x; i < n1; i += BIG_THREADS)
        customize_edge<1>(q[i], 0, 0, tf, tri, ofw, obw, fb, fmid, bmid, bad);
    {
        const int lane = threadIdx.x & (SHORT_W - 1);
        const unsigned mask = ((1u << SHORT_W) - 1) << (threadIdx.x & 31 & ~(SHORT_W - 1));
        for (uint32_t g = threadIdx.x / SHORT_W; g < n8; g += BIG_THREADS / SHORT_W)
            customize_edge<SHORT_W>(q[n1 + g], lane, mask, tf, tri, ofw, obw, fb, fmid, bmid, bad);
    }
    for (uint32_t w = threadIdx.x / 32; w < len - n1 - n8; w += BIG_THREADS / 32)
        customize_edge<32>(q[n1 + n8 + w], threadIdx.x & 31, 0xffffffffu, tf, tri, ofw, obw, fb,
                           fmid, bmid, bad);
}

/* Levels [l0, l1) in one block, bottom-up. */
__global__ void customize_small(uint32_t l0, uint32_t l1, const uint32_t *__restrict__ elev,
                                const uint64_t *__restrict__ tf, const uint32_t *__restrict__ tri,
                                const uint32_t *__restrict__ ofw, const uint32_t *__restrict__ obw,
                                uint2 *fb, uint32_t *fmid, uint32_t *bmid, uint32_t *bad) {
    pdl_trigger();
    int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
    for (uint32_t l = l0; l < l1; l++) {
        for (uint32_t e = elev[l] + warp; e < elev[l + 1]; e += nw)
            customize_edge<32>(e, lane, 0xffffffffu, tf, tri, ofw, obw, fb, fmid, bmid, bad);
        __syncthreads();
    }
}

/* The tail (rank) of edge e: the last rank v with up_first[v] <= e. */
__device__ __forceinline__ uint32_t tail_of(uint32_t e, uint32_t n,
                                            const uint32_t *__restrict__ up_first) {
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (up_first[mid] <= e) lo = mid;
        else hi = mid;
    }
    return lo;
}

} // namespace

cudaError_t gp_dcch_customize_attrs(int smem_max) {
    return cudaFuncSetAttribute(top_table, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max);
}

/* The plan's arc weights from the customized down weights (after every customization and plan
 * rebuild), the top table and the piece tables marked stale; gp_dcch_plan_tables computes them
 * (their device times land in d->t_ms and d->q_ms). */
int gp_dcch_plan_weights_only(gp_dcch *d, cudaStream_t s, gp_err *err) {
    int rc = GP_OK;
    if (!d->p_nphases || !d->customized) return GP_OK;
    if (d->p_nsteps) {
        const uint64_t th = (uint64_t)d->p_nsteps * 32;
        step_wt<<<(unsigned)((th + BIG_THREADS - 1) / BIG_THREADS), BIG_THREADS, 0, s>>>(
            d->p_nsteps, d->p_step_first, d->p_in_first, d->p_step_arc, d->p_in_edge, d->fb,
            d->p_in_wt, d->p_in_pwt);
        CKL("plan weights");
    }
    if (d->p_nout) {
        gather_wt<<<(d->p_nout + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->p_out_edge, d->p_nout, d->fb, d->p_out_wt);
        CKL("plan weights");
    }
    d->tables_stale = d->t_K || d->q_ntab;
out:
    return rc;
}

int gp_dcch_plan_tables(gp_dcch *d, cudaStream_t s, gp_err *err) {
    int rc = GP_OK;
    if (!d->tables_stale) return GP_OK;
    d->tables_stale = 0;
    if (d->t_K) {
        cudaEvent_t e0 = NULL, e1 = NULL;
        CK(cudaEventCreate(&e0), "top table");
        CK(cudaEventCreate(&e1), "top table");
        CK(cudaEventRecord(e0, s), "top table");
        gather_wt<<<(d->t_narcs + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->t_edge, d->t_narcs, d->fb, d->t_wt);
        uint32_t wpb = (uint32_t)d->smem_max / (d->t_K * 8); /* warps (rows) per block */
        if (wpb > 4) wpb = 4;
        top_table<<<(d->t_K + wpb - 1) / wpb, wpb * 32, (size_t)wpb * d->t_K * 8, s>>>(
            d->t_K, d->t_first, d->t_head, d->t_wt, d->t_tab);
        CKL("top table");
        CK(cudaEventRecord(e1, s), "top table");
        CK(cudaEventSynchronize(e1), "top table");
        CK(cudaEventElapsedTime(&d->t_ms, e0, e1), "top table");
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    if (d->q_ntab) { /* after the inner arcs' weights, which it reads */
        cudaEvent_t e0 = NULL, e1 = NULL;
        uint32_t bad = 0;
        CK(cudaEventCreate(&e0), "piece tables");
        CK(cudaEventCreate(&e1), "piece tables");
        CK(cudaMemcpyAsync(d->q_bad, &bad, 4, cudaMemcpyHostToDevice, s), "piece tables");
        CK(cudaEventRecord(e0, s), "piece tables");
        piece_tables<<<d->q_ntab, PIECE_THREADS, ((size_t)d->q_max_steps * 2 + 1) * 4, s>>>(
            d->q_bins, d->p_bin_first, d->p_bin_step, d->p_step_first, d->p_in_first, d->p_in_head,
            d->p_in_wt, d->q_depth, d->q_first, (uint32_t *)d->q_ent, d->q_bad);
        CKL("piece tables");
        if (d->f_T) {
            ent_t<<<(unsigned)((d->q_nent + BIG_THREADS - 1) / BIG_THREADS), BIG_THREADS, 0, s>>>(
                d->q_ent, d->f_perm, d->q_nent, d->f_T);
            CKL("piece tables");
        }
        CK(cudaEventRecord(e1, s), "piece tables");
        CK(cudaMemcpyAsync(&bad, d->q_bad, 4, cudaMemcpyDeviceToHost, s), "piece tables");
        CK(cudaEventSynchronize(e1), "piece tables");
        CK(cudaStreamSynchronize(s), "piece tables");
        CK(cudaEventElapsedTime(&d->q_ms, e0, e1), "piece tables");
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        d->q_ok = !bad;
    }
out:
    return rc;
}

int gp_dcch_plan_weights(gp_dcch *d, cudaStream_t s, gp_err *err) {
    int rc = gp_dcch_plan_weights_only(d, s, err);
    return rc != GP_OK ? rc : gp_dcch_plan_tables(d, s, err);
}

/* Kernel k on grid x block in stream s, a programmatic dependent launch if pdl (the launch
 * before it in s a kernel: pdl_wait orders its reads after that kernel's writes). */
template <typename... P, typename... A>
static cudaError_t launch(int pdl, void (*k)(P...), uint32_t grid, uint32_t block, cudaStream_t s,
                          A... a) {
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cf = {};
    cf.gridDim = dim3(grid), cf.blockDim = dim3(block), cf.dynamicSmemBytes = 0, cf.stream = s;
    cf.attrs = at, cf.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cf, k, a...);
}

/* The level launches, bottom-up (pev: the lab's profile, an event after each launch, *np of them
 * recorded with their levels in pl; then no programmatic launches, which the events would
 * separate). */
static int levels_issue(gp_dcch *d, cudaStream_t s, cudaEvent_t *pev, gp_dcch_launch *pl,
                        uint32_t *np, gp_err *err) {
    int rc = GP_OK;
    for (uint32_t l = 0; l < d->nlevels;) {
        const uint32_t l_at = l;
        const int pdl = d->custom_pdl && !pev && l > 0;
        uint32_t cnt = d->edge_level[l + 1] - d->edge_level[l];
        if (cnt > SMALL_ITEMS / 8 || d->level_heavy[l]) {
            const uint32_t lo = d->edge_level[l], *cl = d->level_cls + 3 * (size_t)l;
            const uint32_t n1 = cl[0], n8 = cl[1], n32 = cl[2], nh = cnt - n1 - n8 - n32;
            const uint32_t c0 = d->level_chunk[l], nc = d->level_chunk[l + 1] - c0;
            if (nc) {
                CK(launch(pdl, customize_chunks, nh + nc, BIG_THREADS, s,
                          (const uint32_t *)d->eord + lo, nh, cnt - nh, d->chunk,
                          (const uint32_t *)d->cdesc + c0, (const uint64_t *)d->tri_first,
                          (const uint32_t *)d->tri, (const uint32_t *)d->ofw,
                          (const uint32_t *)d->obw, d->fb, d->fmid, d->bmid, d->bad),
                   "customization");
            } else {
                uint3 b;
                b.x = nh;
                b.y = b.x + (uint32_t)(((uint64_t)n32 * 32 + BIG_THREADS - 1) / BIG_THREADS);
                b.z = b.y + (uint32_t)(((uint64_t)n8 * SHORT_W + BIG_THREADS - 1) / BIG_THREADS);
                const uint32_t nb = b.z + (n1 + BIG_THREADS - 1) / BIG_THREADS;
                CK(launch(pdl, customize_level, nb, BIG_THREADS, s, (const uint32_t *)d->eord + lo,
                          n1, n8, n32, b, (const uint64_t *)d->tri_first, (const uint32_t *)d->tri,
                          (const uint32_t *)d->ofw, (const uint32_t *)d->obw, d->fb, d->fmid,
                          d->bmid, d->bad),
                   "customization");
            }
            CKL("customization");
            l++;
            if (pev) {
                pl[*np].l0 = l_at, pl[*np].l1 = l, pl[*np].alone = 1;
                CK(cudaEventRecord(pev[(*np)++], s), "customization profile");
            }
        } else {
            uint32_t l1 = l;
            while (l1 < d->nlevels &&
                   d->edge_level[l1 + 1] - d->edge_level[l1] <= SMALL_ITEMS / 8 &&
                   !d->level_heavy[l1])
                l1++;
            CK(launch(pdl, customize_small, 1, SMALL_THREADS, s, l, l1,
                      (const uint32_t *)d->d_elevels, (const uint64_t *)d->tri_first,
                      (const uint32_t *)d->tri, (const uint32_t *)d->ofw, (const uint32_t *)d->obw,
                      d->fb, d->fmid, d->bmid, d->bad),
               "customization");
            CKL("customization");
            l = l1;
            if (pev) {
                pl[*np].l0 = l_at, pl[*np].l1 = l, pl[*np].alone = 0;
                CK(cudaEventRecord(pev[(*np)++], s), "customization profile");
            }
        }
    }
out:
    return rc;
}

/* The levels, bottom-up, then the plan's weights. ms: device time. The level launches are the
 * same for every metric of a bound topology part: with custom_graph they are captured once as a
 * CUDA graph (dropped when another part is bound) and replayed. */
static int customize_run(gp_dcch *d, cudaStream_t s, float *ms, void (*busy)(void *), void *arg,
                         gp_err *err) {
    int rc = GP_OK;
    uint32_t bad = INF32;
    /* the lab's profile: an event after each launch */
    uint32_t np = 0;
    cudaEvent_t *pev = NULL;
    gp_dcch_launch *pl = NULL;
    if (d->custom_profile) {
        pev = (cudaEvent_t *)calloc((size_t)d->nlevels + 1, sizeof *pev);
        pl = (gp_dcch_launch *)calloc((size_t)d->nlevels + 1, sizeof *pl);
        if (!pev || !pl) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the customization profile");
            goto out;
        }
        for (uint32_t i = 0; i < d->nlevels; i++)
            CK(cudaEventCreate(&pev[i]), "customization profile");
    }
    CK(cudaMemcpyAsync(d->bad, &bad, 4, cudaMemcpyHostToDevice, s), "customization");
    if (!pev && d->custom_graph && d->nlevels) {
        if (!d->custom_exec) {
            cudaGraph_t graph = NULL;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
               "capturing the customization");
            rc = levels_issue(d, s, NULL, NULL, NULL, err);
            cudaError_t e = cudaStreamEndCapture(s, &graph);
            if (rc == GP_OK && e == cudaSuccess)
                e = cudaGraphInstantiate(&d->custom_exec, graph, 0);
            if (graph) cudaGraphDestroy(graph);
            if (rc) goto out;
            CK(e, "capturing the customization");
        }
        CK(cudaEventRecord(d->ev0, s), "customization");
        CK(cudaGraphLaunch(d->custom_exec, s), "customization (graph)");
    } else {
        CK(cudaEventRecord(d->ev0, s), "customization");
        if ((rc = levels_issue(d, s, pev, pl, &np, err)) != GP_OK) goto out;
    }
    d->customized = 1; /* the plan's weights count as customization; its tables are computed
                        * before the next plan sweep */
    d->w64 = 0;        /* a new metric: 32-bit warp-bin cells until one saturates */
    if ((rc = gp_dcch_plan_weights_only(d, s, err)) != GP_OK) goto out;
    CK(cudaEventRecord(d->ev1, s), "customization");
    /* the host's work meanwhile, everything queued (so that ms stays the device's time when the
     * host's part takes longer: queued after it, the plan's weights and ev1 counted its wait) */
    if (busy) busy(arg);
    CK(cudaMemcpyAsync(&bad, d->bad, 4, cudaMemcpyDeviceToHost, s), "customization");
    CK(cudaStreamSynchronize(s), "customization");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "customization");
    if (bad != INF32)
        rc = gp_err_set(err, GP_ETOOBIG,
                        "CCH customization: shortcut %u would exceed 2^32-1 weight units", bad);
    if (pev) { /* each launch's time from the end of the one before */
        float tail = 0;
        for (uint32_t i = 0; i < np; i++)
            CK(cudaEventElapsedTime(&pl[i].ms, i ? pev[i - 1] : d->ev0, pev[i]),
               "customization profile");
        if (np) CK(cudaEventElapsedTime(&tail, pev[np - 1], d->ev1), "customization profile");
        d->custom_profile(d->custom_profile_arg, pl, np, tail);
    }
out:
    if (pev) {
        cudaStreamSynchronize(s);
        for (uint32_t i = 0; i < d->nlevels; i++)
            if (pev[i]) cudaEventDestroy(pev[i]);
    }
    free(pev);
    free(pl);
    return rc;
}

extern "C" int gp_dcch_customize(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw,
                                 uint32_t *fmid, uint32_t *bmid, float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = customize_run(d, s, ms, NULL, NULL, err);
    if (rc != GP_OK) return rc;
    return gp_dcch_weights(d, stream, fw, bw, fmid, bmid, err);
}

namespace {

/* The arrays an update list writes (ofw, obw, fw, bw, fmid, bmid: the first nw of them), each
 * with its stride in words (fw and bw are the halves of the packed fb: 2). */
struct scat_dst {
    uint32_t *a[6];
    uint32_t st[6];
};

/* upd: 1 + nw words per edge (id, then a value per array of dst) into the arrays. */
__global__ void scatter_edges(uint32_t n, const uint32_t *__restrict__ upd, uint32_t nw, uint32_t m,
                              scat_dst dst) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t *u = upd + (size_t)(nw + 1) * i;
    uint32_t e = u[0];
    if (e >= m) return;
    for (uint32_t k = 0; k < nw; k++) dst.a[k][(size_t)e * dst.st[k]] = u[1 + k];
}

} // namespace

extern "C" int gp_dcch_metric_from(gp_dcch *d, const gp_dcch *src, void *stream, uint32_t nupd,
                                   const uint32_t *upd, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t *dupd = NULL;
    if (d->tm != src->tm)
        return gp_err_set(err, GP_EINVAL,
                          "device CCH: the predecessor is on another topology part");
    const size_t bytes = (size_t)d->m * 4;
    CK(cudaMemcpyAsync(d->ofw, src->ofw, bytes, cudaMemcpyDeviceToDevice, s), "metric scatter");
    CK(cudaMemcpyAsync(d->obw, src->obw, bytes, cudaMemcpyDeviceToDevice, s), "metric scatter");
    if (nupd) {
        CK(cudaMallocAsync((void **)&dupd, (size_t)nupd * 12, s), "metric scatter");
        CK(cudaMemcpyAsync(dupd, upd, (size_t)nupd * 12, cudaMemcpyHostToDevice, s),
           "metric scatter");
        scat_dst to = {{d->ofw, d->obw, NULL, NULL, NULL, NULL}, {1, 1, 0, 0, 0, 0}};
        scatter_edges<<<(nupd + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(nupd, dupd, 2,
                                                                                     d->m, to);
        CKL("metric scatter");
    }
    CK(cudaStreamSynchronize(s), "metric scatter");
out:
    if (dupd) {
        cudaFreeAsync(dupd, s);
        cudaStreamSynchronize(s);
    }
    return rc;
}

extern "C" const gp_dcch_topo *gp_dcch_part(const gp_dcch *d) { return d ? d->tm : NULL; }

extern "C" int gp_dcch_customize_from(gp_dcch *d, const gp_dcch *src, void *stream, uint32_t nupd,
                                      const uint32_t *upd, float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t *dupd = NULL;
    if (d->tm != src->tm || !src->customized)
        return gp_err_set(err, GP_EINVAL,
                          "device CCH: the predecessor is on another topology part or not "
                          "customized");
    const size_t bytes = (size_t)d->m * 4;
    uint32_t *dst[5] = {d->ofw, d->obw, (uint32_t *)d->fb, d->fmid, d->bmid};
    const uint32_t *from[5] = {src->ofw, src->obw, (const uint32_t *)src->fb, src->fmid, src->bmid};
    CK(cudaEventRecord(d->ev0, s), "copying the predecessor's weights");
    for (int i = 0; i < 5; i++) /* fb: two words an edge */
        CK(cudaMemcpyAsync(dst[i], from[i], i == 2 ? 2 * bytes : bytes, cudaMemcpyDeviceToDevice,
                           s),
           "copying the predecessor's weights");
    if (nupd) {
        CK(cudaMallocAsync((void **)&dupd, (size_t)nupd * 28, s), "the changed edges");
        CK(cudaMemcpyAsync(dupd, upd, (size_t)nupd * 28, cudaMemcpyHostToDevice, s),
           "the changed edges");
        scat_dst to = {{d->ofw, d->obw, (uint32_t *)d->fb, (uint32_t *)d->fb + 1, d->fmid, d->bmid},
                       {1, 1, 2, 2, 1, 1}};
        scatter_edges<<<(nupd + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(nupd, dupd, 6,
                                                                                     d->m, to);
        CKL("the changed edges");
    }
    d->customized = 1;
    d->w64 = 0; /* a new metric: 32-bit warp-bin cells until one saturates */
    if ((rc = gp_dcch_plan_weights_only(d, s, err)) != GP_OK) goto out;
    CK(cudaEventRecord(d->ev1, s), "the changed edges");
    CK(cudaStreamSynchronize(s), "the changed edges");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "the changed edges");
out:
    if (dupd) {
        cudaFreeAsync(dupd, s);
        cudaStreamSynchronize(s);
    }
    return rc;
}

namespace {

/* Edge e's packed witnesses from its fmid / bmid: the triangle's two edge ids, or
 * GP_DCCH_WIT_ORIG with the original node of the edge's head (forward) or tail (backward). */
__device__ __forceinline__ void edge_witnesses(uint32_t e, uint32_t n,
                                               const uint32_t *__restrict__ up_first,
                                               const uint32_t *__restrict__ up_head,
                                               const uint32_t *__restrict__ order,
                                               const uint64_t *__restrict__ tf,
                                               const uint32_t *__restrict__ tri, uint32_t fm,
                                               uint32_t bm, u64 *wb, u64 *wf) {
    const uint64_t k0 = tf[e];
    if (fm == INF32) *wf = GP_DCCH_WIT_ORIG | order[up_head[e]];
    else *wf = (u64)tri[2 * (k0 + fm)] << 32 | tri[2 * (k0 + fm) + 1];
    if (bm == INF32) *wb = GP_DCCH_WIT_ORIG | order[tail_of(e, n, up_first)];
    else *wb = (u64)tri[2 * (k0 + bm)] << 32 | tri[2 * (k0 + bm) + 1];
}

/* The packed witnesses of engine/cch_custom.c witnesses_range from fmid / bmid, a thread per edge
 * (wit[2e]: backward, wit[2e+1]: forward): the triangle's two edge ids, or GP_DCCH_WIT_ORIG with
 * the original node of the edge's head (forward) or tail (backward; its rank found in up_first). */
__global__ void witness_edges(uint32_t m, uint32_t n, const uint32_t *__restrict__ up_first,
                              const uint32_t *__restrict__ up_head,
                              const uint32_t *__restrict__ order, const uint64_t *__restrict__ tf,
                              const uint32_t *__restrict__ tri, const uint32_t *__restrict__ fmid,
                              const uint32_t *__restrict__ bmid, u64 *wit) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= m) return;
    u64 wb, wf;
    edge_witnesses(e, n, up_first, up_head, order, tf, tri, fmid[e], bmid[e], &wb, &wf);
    wit[2 * (size_t)e] = wb;
    wit[2 * (size_t)e + 1] = wf;
}

/* Half h (0: fw, 1: bw) of the packed weights of edges i0 .. i0+n-1 into out. */
__global__ void fb_half(const uint2 *__restrict__ fb, uint32_t i0, uint32_t n, int h,
                        uint32_t *out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const uint2 w = fb[(size_t)i0 + i];
        out[i] = h ? w.y : w.x;
    }
}

/* Edges a chunk of that split (64 MiB of scratch at most, whatever m). */
constexpr uint32_t FB_CHUNK = 1u << 24;

} // namespace

extern "C" int gp_dcch_fetch(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw, uint32_t *fmid,
                             uint32_t *bmid, uint64_t *wit, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    if (wit && !d->wit) {
        CK(cudaMalloc((void **)&d->wit, (size_t)d->m * 16 + 16), "witnesses");
        d->bytes += (uint64_t)d->m * 16 + 16;
    }
    if (wit && d->m) {
        witness_edges<<<(d->m + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->m, d->n, d->up_first, d->up_head, d->order, d->tri_first, d->tri, d->fmid, d->bmid,
            d->wit);
        CKL("witnesses");
        CK(cudaMemcpyAsync(wit, d->wit, (size_t)d->m * 16, cudaMemcpyDeviceToHost, s),
           "copying the witnesses");
    }
    rc = gp_dcch_weights(d, stream, fw, bw, fmid, bmid, err);
out:
    return rc;
}

extern "C" int gp_dcch_weights(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw, uint32_t *fmid,
                               uint32_t *bmid, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t *tmp = NULL;
    uint32_t *half[2] = {fw, bw}, *mid[2] = {fmid, bmid};
    const uint32_t *from[2] = {d->fmid, d->bmid};
    for (int i = 0; i < 2; i++)
        if (mid[i])
            CK(cudaMemcpyAsync(mid[i], from[i], (size_t)d->m * 4, cudaMemcpyDeviceToHost, s),
               "copying the weights");
    if ((fw || bw) && d->m) { /* the halves of fb, a chunk at a time through a scratch buffer */
        const uint32_t chunk = d->m < FB_CHUNK ? d->m : FB_CHUNK;
        CK(cudaMallocAsync((void **)&tmp, (size_t)chunk * 4, s), "copying the weights");
        for (int h = 0; h < 2; h++)
            for (uint32_t i0 = 0; half[h] && i0 < d->m; i0 += chunk) {
                const uint32_t n = d->m - i0 < chunk ? d->m - i0 : chunk;
                fb_half<<<(n + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(d->fb, i0, n, h,
                                                                                    tmp);
                CKL("copying the weights");
                CK(cudaMemcpyAsync(half[h] + i0, tmp, (size_t)n * 4, cudaMemcpyDeviceToHost, s),
                   "copying the weights");
            }
    }
    CK(cudaStreamSynchronize(s), "copying the weights");
out:
    if (tmp) {
        cudaFreeAsync(tmp, s);
        cudaStreamSynchronize(s);
    }
    return rc;
}

/* Host wall-clock seconds (the phases of gp_dcch_customize_diff). */
static double wall_now(void) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

namespace {

/* Edges where d's six arrays differ from base's, DIFF_WORDS words each: id, fw, bw, fmid, bmid,
 * then the packed witnesses (backward, forward; low word first) as witness_edges writes them;
 * at most cap of them; *cnt counts them all. */
__global__ void diff_edges(uint32_t m, uint32_t n, const uint32_t *__restrict__ up_first,
                           const uint32_t *__restrict__ up_head, const uint32_t *__restrict__ order,
                           const uint64_t *__restrict__ tf, const uint32_t *__restrict__ tri,
                           const uint32_t *ofw, const uint32_t *obw, const uint2 *fb,
                           const uint32_t *fmid, const uint32_t *bmid, const uint32_t *bofw,
                           const uint32_t *bobw, const uint2 *bfb, const uint32_t *bfmid,
                           const uint32_t *bbmid, uint32_t cap, uint32_t *cnt, uint32_t *out) {
    uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t f = 0, w = 0, fm = 0, bm = 0;
    bool changed = false;
    if (e < m) {
        uint32_t a = ofw[e], b = obw[e];
        const uint2 fbe = fb[e], bfbe = bfb[e];
        f = fbe.x, w = fbe.y, fm = fmid[e], bm = bmid[e];
        changed = a != bofw[e] || b != bobw[e] || f != bfbe.x || w != bfbe.y || fm != bfmid[e] ||
                  bm != bbmid[e];
    }
    /* one atomic a warp (11.5 M changed edges a speed file on road-like 24M's turn graph, each
     * an atomic on one word before): the lanes that changed take consecutive slots */
    uint32_t mask = __ballot_sync(0xffffffffu, changed);
    if (!mask) return;
    uint32_t lane = threadIdx.x & 31u, lead = (uint32_t)__ffs(mask) - 1u, first = 0;
    if (lane == lead) first = atomicAdd(cnt, (uint32_t)__popc(mask));
    first = __shfl_sync(0xffffffffu, first, lead);
    if (!changed) return;
    uint32_t i = first + (uint32_t)__popc(mask & ((1u << lane) - 1u));
    if (i >= cap) return;
    uint32_t *u = out + (size_t)GP_DCCH_DIFF_WORDS * i;
    u[0] = e, u[1] = f, u[2] = w, u[3] = fm, u[4] = bm;
    u64 wb, wf;
    edge_witnesses(e, n, up_first, up_head, order, tf, tri, fm, bm, &wb, &wf);
    u[5] = (uint32_t)wb, u[6] = (uint32_t)(wb >> 32);
    u[7] = (uint32_t)wf, u[8] = (uint32_t)(wf >> 32);
}

} // namespace

extern "C" int gp_dcch_customize_diff(gp_dcch *d, const gp_dcch *base, void *stream, uint32_t cap,
                                      void *(*host)(void *ctx, size_t bytes), void *hctx,
                                      uint32_t **out, uint32_t *nout, float *ms,
                                      void (*busy)(void *), void *arg, double wall_s[3],
                                      gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    uint32_t *dbuf = NULL, *hbuf = NULL, cnt = 0;
    *out = NULL;
    *nout = 0;
    if (d->tm != base->tm || !base->customized)
        return gp_err_set(err, GP_EINVAL,
                          "device CCH: the predecessor is on another topology part or not "
                          "customized");
    double w0 = wall_now();
    if (wall_s) wall_s[0] = wall_s[1] = wall_s[2] = 0;
    if ((rc = customize_run(d, s, ms, busy, arg, err)) != GP_OK) return rc;
    double w1 = wall_now();
    if (wall_s) wall_s[0] = w1 - w0;
    CK(cudaMallocAsync((void **)&dbuf, ((size_t)cap * GP_DCCH_DIFF_WORDS + 1) * 4, s),
       "the changed edges");
    CK(cudaMemsetAsync(dbuf, 0, 4, s), "the changed edges");
    if (d->m) /* no zero-block launch */
        diff_edges<<<(d->m + BIG_THREADS - 1) / BIG_THREADS, BIG_THREADS, 0, s>>>(
            d->m, d->n, d->up_first, d->up_head, d->order, d->tri_first, d->tri, d->ofw, d->obw,
            d->fb, d->fmid, d->bmid, base->ofw, base->obw, base->fb, base->fmid, base->bmid, cap,
            dbuf, dbuf + 1);
    CKL("the changed edges");
    CK(cudaMemcpyAsync(&cnt, dbuf, 4, cudaMemcpyDeviceToHost, s), "the changed edges");
    CK(cudaStreamSynchronize(s), "the changed edges");
    w0 = wall_now();
    if (wall_s) wall_s[1] = w0 - w1;
    if (cnt > cap) { /* customized; too many to list: the caller fetches every array */
        *nout = cnt;
        goto out;
    }
    hbuf = (uint32_t *)host(hctx, ((size_t)cnt + 1) * GP_DCCH_DIFF_WORDS * 4);
    if (!hbuf) {
        rc = gp_err_set(err, GP_ENOMEM, "out of page-locked memory for the changed edges");
        goto out;
    }
    if (cnt)
        CK(cudaMemcpyAsync(hbuf, dbuf + 1, (size_t)cnt * GP_DCCH_DIFF_WORDS * 4,
                           cudaMemcpyDeviceToHost, s),
           "the changed edges");
    CK(cudaStreamSynchronize(s), "the changed edges");
    *out = hbuf;
    *nout = cnt;
    if (wall_s) wall_s[2] = wall_now() - w0;
out:
    if (dbuf) {
        cudaFreeAsync(dbuf, s);
        cudaStreamSynchronize(s);
    }
    return rc;
}
