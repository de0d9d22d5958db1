/* cch_sweep.cu - GPU PHAST through the sweep plan (kernels/cch.h gp_dcch_phast), the sweep the
 * service runs; where the plan cannot serve, the level sweep of cch_query.cu answers. Device
 * state in kernels/cch.cu, shared structs in cch_internal.cuh, the design in docs/gpu.md "CCH on
 * the GPU", the versions and the variants that lost in bench/lab_cch.cu.
 *
 * The elimination tree is cut into phases, pieces and bins on the host at upload
 * (kernels/cch_plan.h); a launch per phase, the output written in node order by the phases
 * themselves (no gather pass), and only the upper phases' cells filled before a sweep (the last
 * phase restores INF). Per sweep:
 *  - sweep_init: the leading phases of at most TOP_MAX_NODES nodes are not swept: their cells
 *    come from the top table (cch_plan.h gp_cch_top, computed at customization) by one min-plus
 *    product, in the same launch that fills the upper cells and scatters the upward searches.
 *  - phases whose bins all have piece tables (cch_plan.h gp_cch_ptab: at least PIECE_MIN_STEPS
 *    steps, within PIECE_MAX_BIN entries) run flat (GP_DCCH_FLAT: flat_outer relaxes every
 *    position's outer arcs, flat_entries applies every entry with an atomicMin; for several
 *    sources the largest are gathered, flat_gather, GP_DCCH_GATHER); for k > 1 only in phases
 *    whose entries are at most twice their inner arcs.
 *  - phases without tables and with many small bins run as warp bins (GP_DCCH_WARPS /
 *    GP_DCCH_WMULTI: a warp per bin, a lane per inner arc of a step, 32-bit cells with a 64-bit
 *    fallback when one saturates; sweep_wpass for 4 sources a warp, sweep_warcs otherwise), a
 *    phase's bins in the order of their smallest node, each storing its output in node order;
 *    the last phase reads only the cells of bins an upward search reached (GP_DCCH_SKIP).
 *  - the others run a block per bin (sweep_bins: the bin's steps separated by __syncthreads(),
 *    distances and inner arcs staged in shared memory, or its piece table's product).
 * The launches are captured once per key as a CUDA graph and replayed (GP_DCCH_GRAPH).
 */
#include "kernels/cch_internal.cuh"

namespace {

/* One phase of the plan (kernels/cch_plan.h): block b sweeps bin bin0 + b. Its distances (positions
 * x k) and, when they fit too, its inner arcs are staged in shared memory (else read in place).
 * First every cell takes its scattered upward-search value and the bin's outer arcs (heads in
 * earlier phases, final) are relaxed all at once, an arc per thread with atomicMin; then the bin's
 * steps run in order with a block barrier between them: a step reads only earlier steps of the
 * same bin. A step of few items gets a group of g lanes per item (lanes over the arcs, a g-lane
 * min), a wide one a thread per item. At the end: the values go to out (node order, one row per
 * source) and, for all but the last phase, back to dist (later phases read them). The last phase
 * leaves dist as it found it apart from the cells it reset: every cell from position p_mid on is
 * INF between calls, so only the upper phases' cells need a fill before the next sweep. Indices
 * are 32-bit: the host keeps a bin's cells and outer arcs times k under 2^31.
 * K1: k = 1 (no divisions). SA: the host knows that every bin of the phase fits in shared memory
 * with its arcs and step offsets (smem >= cells*8 + (N+1)*4 + A*8 + (steps+1)*4): then D, F, H,
 * W and the step offsets are plain shared arrays (ld.shared, no generic loads, no global load of
 * the next step's offset inside the step loop). */
template <bool K1, bool SA>
__global__ void __launch_bounds__(PLAN_THREADS_MAX)
    sweep_bins(plan_dev P, uint32_t bin0, uint32_t k_, u64 *dist, u64 *out, uint32_t n, int last,
               uint32_t smem, const u64 *__restrict__ tab) {
    extern __shared__ u64 sm[];
    const uint32_t k = K1 ? 1 : k_;
    const uint32_t b = bin0 + blockIdx.x, tid = threadIdx.x, bd = blockDim.x;
    const uint32_t p0 = P.bin_first[b], N = P.bin_first[b + 1] - p0;
    const uint32_t a0 = P.in_first[p0], A = P.in_first[p0 + N] - a0;
    const uint32_t s0 = P.bin_step[b], s1 = P.bin_step[b + 1];
    const uint32_t cells = N * k;
    const bool sd = SA || (size_t)cells * 8 <= smem;
    const bool sa = SA || (sd && (size_t)cells * 8 + ((size_t)N + 1) * 4 + (size_t)A * 8 <= smem);
    u64 *const base = dist + (size_t)p0 * k;
    u64 *D = sd ? sm : base;
    const uint32_t *F, *H, *W;
    uint32_t *S = NULL; /* SA: step offsets from p0 */
    /* the bin's piece table (tab: this launch uses them): R = sm + cells receives the product */
    const bool tb = tab && P.tab_first[b + 1] > P.tab_first[b] && (size_t)cells * 16 <= smem;
    if (tb) {
        F = H = W = NULL;
    } else if (sa) {
        uint32_t *f = (uint32_t *)(sm + cells), *h = f + N + 1, *w = h + A;
        for (uint32_t i = tid; i <= N; i += bd) f[i] = P.in_first[p0 + i] - a0;
        for (uint32_t i = tid; i < A; i += bd) {
            h[i] = P.in_head[a0 + i];
            w[i] = P.in_wt[a0 + i];
        }
        if (SA) {
            S = w + A;
            for (uint32_t i = tid; i <= s1 - s0; i += bd) S[i] = P.step_first[s0 + i] - p0;
        }
        F = f, H = h, W = w;
    } else {
        F = P.in_first + p0, H = P.in_head, W = P.in_wt;
    }
    for (uint32_t it = tid; it < cells; it += bd) {
        u64 v = base[it];
        if (sd) {
            D[it] = v;
            if (last && v != INF64) base[it] = INF64;
        }
    }
    __syncthreads();
    {
        const uint32_t o0 = P.out_first[p0], no = (P.out_first[p0 + N] - o0) * k;
        for (uint32_t j = tid; j < no; j += bd) {
            uint32_t o = o0 + (k == 1 ? j : j / k), sc = k == 1 ? 0 : j % k;
            uint32_t w = P.out_wt[o];
            if (w == INF32) continue;
            u64 dh = dist[(size_t)P.out_head[o] * k + sc];
            if (dh != INF64) atomicMin(&D[P.out_tail[o] * k + sc], dh + w);
        }
    }
    __syncthreads();
    if (tb) { /* R = min(D1, D1(a_j) + T(v, j) over the entries): the bin's steps at once */
        u64 *const R = sm + cells;
        for (uint32_t it = tid; it < cells; it += bd) R[it] = D[it];
        __syncthreads();
        const uint32_t t0 = P.tab_first[b], ne = (P.tab_first[b + 1] - t0) * k;
#pragma unroll 4
        for (uint32_t j = tid; j < ne; j += bd) {
            const uint32_t e = k == 1 ? j : j / k, sc = k == 1 ? 0 : j % k;
            const u64 x = tab[t0 + e];
            const uint32_t T = (uint32_t)(x >> 32);
            const u64 da = D[((uint32_t)x & 0xffffu) * k + sc];
            if (T != INF32 && da != INF64)
                atomicMin(&R[(((uint32_t)x >> 16) & 0xffffu) * k + sc], da + T);
        }
        __syncthreads();
        D = R;
    }
    const uint32_t lane = tid & 31, warp = tid >> 5, nw = bd >> 5;
    uint32_t qa = 0, qb = tb ? 0 : SA ? S[1] : P.step_first[s0 + 1] - p0;
    for (uint32_t st = tb ? s1 : s0; st < s1; st++) {
        uint32_t qn = SA ? (st + 2 <= s1 ? S[st + 2 - s0] : 0)
                         : (st + 2 <= s1 ? P.step_first[st + 2] - p0 : 0); /* in flight */
        const uint32_t items = (qb - qa) * k;
        uint32_t g = 32;
        while (g > 1 && items * g > bd) g >>= 1;
        const uint32_t gpw = 32 / g, sub = lane / g, gl = lane % g;
        for (uint32_t base_it = warp * gpw; base_it < items; base_it += nw * gpw) {
            uint32_t it = base_it + sub;
            u64 best = INF64;
            uint32_t at = 0;
            if (it < items) {
                uint32_t i = qa + (k == 1 ? it : it / k), sc = k == 1 ? 0 : it % k;
                at = i * k + sc;
                for (uint32_t a = F[i] + gl; a < F[i + 1]; a += g) {
                    uint32_t w = W[a];
                    if (w == INF32) continue;
                    u64 dh = D[H[a] * k + sc];
                    if (dh != INF64 && dh + w < best) best = dh + w;
                }
            }
            for (uint32_t o = g >> 1; o > 0; o >>= 1) { /* uniform per block: g is */
                u64 u = __shfl_xor_sync(0xffffffffu, best, o);
                best = u < best ? u : best;
            }
            if (it < items && gl == 0 && best < D[at]) D[at] = best;
        }
        __syncthreads();
        qa = qb;
        qb = qn;
    }
    /* out row by row (neighbouring threads: neighbouring positions), then dist */
    for (uint32_t j = tid; j < cells; j += bd) {
        uint32_t sc = k == 1 ? 0 : j / N, i = k == 1 ? j : j % N;
        out[(size_t)sc * n + P.pnode[p0 + i]] = D[i * k + sc];
    }
    if (!last && sd) {
        for (uint32_t it = tid; it < cells; it += bd) base[it] = D[it];
    } else if (last && !sd) {
        __syncthreads(); /* every output read of D (= dist) is done */
        for (uint32_t it = tid; it < cells; it += bd) base[it] = INF64;
    }
}

/* Arc-lane warp bins (v9; GP_DCCH_WARPS): a warp per bin and KW of
 * the k sources (k / KW warps per bin, each its own columns KW apart), WBIN_WARPS warps to a
 * block. v8's warp bins (removed at 49b62bd) gave a step's positions g lanes each (over its
 * arcs, then a g-lane shuffle min): on gen:24M's last phase (2.7 inner arcs per position, ~4
 * positions per step) most lanes idle and ~90 instructions a step, issue-bound (Nsight Compute:
 * 59% of issue slots at half the DRAM bandwidth). Here a step is its inner arcs, consecutive
 * (positions sorted by step, arcs by position, each step padded to a multiple of PASS_ARCS with
 * dummy arcs of weight INF): lane j takes arc qa + j / KW and column j % KW and relaxes it into
 * its tail's cell with a shared-memory atomicMin (heads are at earlier steps: final), no
 * offsets, no shuffle min. The bin's arcs (head << 4 | tail << 20, and the weight) come
 * through a window of 32-arc chunks in the lanes' registers, a lane an arc each, read with
 * __shfl_sync. The cells
 * (N x KW) live in the warp's slot, 32-bit (C = uint32_t: sums saturate at sat, a cell at sat
 * sets *ovf and the host sweeps again with 64-bit cells) or 64-bit; the outer arcs are relaxed
 * first (an arc and column per lane, atomicMin); flag (GP_DCCH_SKIP, last phase): the
 * cells of a bin whose flag sweep_init did not set are INF, not read; the k / KW warps of a
 * flagged bin count themselves in on the flag and the last clears it. sweep_warcs walks the
 * steps (KW = 1 or 2, or 4 with 64-bit cells); sweep_wpass walks passes of 8 arcs x 4 sources
 * for KW = 4 with 32-bit cells. A phase's bins run in the order of their smallest node
 * (P.border), so that the bins in flight together store to neighbouring nodes, and each bin
 * stores its output in node order (P.onode / P.ooff). The parts they share: */
__device__ __forceinline__ uint32_t cell_in(u64 v, uint32_t sat, uint32_t) { /* 32-bit cells */
    return v == INF64 ? INF32 : v >= sat ? sat : (uint32_t)v;
}
__device__ __forceinline__ u64 cell_in(u64 v, uint32_t, u64) { return v; }
__device__ __forceinline__ u64 cell_out(uint32_t x) { return x == INF32 ? INF64 : x; }
__device__ __forceinline__ u64 cell_out(u64 x) { return x; }

struct wbin { /* a warp bin's bounds (its bin_rec and the next bin's, one load each) */
    uint32_t p0, N, s0, ns, a0, A, o0, no;
};
__device__ __forceinline__ wbin wbin_of(const plan_dev &P, uint32_t b) {
    const uint4 r0 = __ldg(&P.bin_rec[b]), r1 = __ldg(&P.bin_rec[b + 1]);
    return {r0.x, r1.x - r0.x, r0.y, r1.y - r0.y, r0.z, r1.z - r0.z, r0.w, r1.w - r0.w};
}
struct wwarp { /* a warp's place: its lane, warp in the block, bin (b), first column (c0) */
    uint32_t lane, wi, b, c0;
};
/* The warp's bin (the j-th of the launch, through P.border) and columns, wpb warps to
 * a block, g warps to a bin of kw sources each; false past the last bin. */
__device__ __forceinline__ bool wwarp_of(const plan_dev &P, uint32_t bin0, uint32_t bin1,
                                         uint32_t g, uint32_t wpb, uint32_t kw, wwarp *w) {
    w->lane = threadIdx.x & 31, w->wi = threadIdx.x >> 5;
    const uint32_t gw = blockIdx.x * wpb + w->wi, j = bin0 + gw / g;
    if (j >= bin1) return false;
    w->b = __ldg(&P.border[j]);
    w->c0 = gw % g * kw;
    return true;
}

/* The cells' initial values (rd: from dist, INF written back there on the last phase; else
 * INF with 16-byte stores), then the outer arcs, an arc and column per lane: U arcs' loads in
 * flight together (their arc, then their heads' cells; no branch between the loads). */
template <uint32_t KW, typename C, uint32_t U>
__device__ __forceinline__ void wbin_in(const plan_dev &P, const wbin &B, C *D, u64 *dist,
                                        uint32_t k, uint32_t c0, uint32_t lane, bool rd, int last,
                                        uint32_t sat) {
    if (rd) {
        for (uint32_t it = lane; it < B.N * KW; it += 32) { /* a position's columns together */
            const size_t cell = (size_t)(B.p0 + it / KW) * k + c0 + it % KW;
            const u64 v = dist[cell];
            D[it] = cell_in(v, sat, C());
            if (last && v != INF64) dist[cell] = INF64;
        }
    } else { /* every cell INF (all bits set in either width): 16-byte stores */
        uint32_t *const Dw = (uint32_t *)D;
        const uint32_t nw = B.N * KW * (uint32_t)sizeof(C) / 4;
        for (uint32_t x = lane * 4; x + 3 < nw; x += 128)
            *(uint4 *)&Dw[x] = make_uint4(INF32, INF32, INF32, INF32);
        for (uint32_t x = (nw & ~3u) + lane; x < nw; x += 32) Dw[x] = INF32;
    }
    __syncwarp();
    const uint32_t nj = B.no * KW, col = lane % KW; /* (32 is a multiple of KW) */
    for (uint32_t j0 = lane; j0 < nj; j0 += 32 * U) {
        uint32_t w[U], h[U], t[U];
        u64 dh[U];
#pragma unroll
        for (uint32_t u = 0; u < U; u++) {
            const uint32_t j = j0 + 32 * u, o = B.o0 + j / KW;
            w[u] = j < nj ? __ldg(&P.out_wt[o]) : INF32;
            h[u] = j < nj ? __ldg(&P.out_head[o]) : 0;
        }
#pragma unroll
        for (uint32_t u = 0; u < U; u++) {
            const uint32_t j = j0 + 32 * u, o = B.o0 + j / KW;
            dh[u] = w[u] != INF32 ? __ldg(&dist[(size_t)h[u] * k + c0 + col]) : INF64;
            t[u] = j < nj ? __ldg(&P.out_tail[o]) : 0;
        }
#pragma unroll
        for (uint32_t u = 0; u < U; u++)
            if (dh[u] != INF64) atomicMin(&D[t[u] * KW + col], cell_in(dh[u] + w[u], sat, C()));
    }
}

/* The output: a lane per position (the j-th smallest node of the bin, so that the lanes
 * store to neighbouring nodes), its KW columns one row after another, UO positions' loads in
 * flight together; then dist (not on the last phase), *ovf where a 32-bit cell reached sat, and
 * the flag. */
template <uint32_t KW, typename C>
__device__ __forceinline__ void wbin_out(const plan_dev &P, const wbin &B, const C *D, u64 *dist,
                                         u64 *out, uint32_t n, uint32_t k, uint32_t c0,
                                         uint32_t lane, int last, uint32_t sat, uint32_t *ovf,
                                         uint32_t *flag, uint32_t b, uint32_t g, bool rd) {
    constexpr bool C32 = sizeof(C) == 4;
    bool sv = false; /* a 32-bit cell reached sat: the host sweeps again with 64-bit cells */
    constexpr uint32_t UO = KW == 1 ? 2 : 4;
    for (uint32_t j0 = lane; j0 < B.N; j0 += 32 * UO) {
        uint32_t i[UO], v[UO];
#pragma unroll
        for (uint32_t u = 0; u < UO; u++) {
            const uint32_t j = j0 + 32 * u;
            i[u] = j < B.N ? __ldg(&P.ooff[B.p0 + j]) : j;
            v[u] = j < B.N ? __ldg(&P.onode[B.p0 + j]) : 0;
        }
#pragma unroll
        for (uint32_t u = 0; u < UO; u++) {
            if (j0 + 32 * u >= B.N) break;
            u64 *o = out + (size_t)c0 * n + v[u];
#pragma unroll
            for (uint32_t c = 0; c < KW; c++, o += n) {
                const C x = D[i[u] * KW + c];
                sv |= C32 && x == (C)sat;
                *o = cell_out(x);
            }
        }
    }
    if (!last)
        for (uint32_t it = lane; it < B.N * KW; it += 32)
            dist[(size_t)(B.p0 + it / KW) * k + c0 + it % KW] = cell_out(D[it]);
    if (C32 && sv) *ovf = 1;
    /* (every lane read the flag before the first step) */
    if (flag && rd && lane == 0 && atomicAdd(&flag[b], 1u) == g) flag[b] = 0;
}

/* The steps one after another (any KW): the window holds three chunks, the third loaded while
 * the first two are in use; the step offsets of the first 64 steps sit in two registers per
 * lane. */
template <uint32_t KW, typename C>
__global__ void __launch_bounds__(WBIN_WARPS * 32, KW == 1 ? WARCS_BLOCKS : WARCS_BLOCKS_K)
    sweep_warcs(plan_dev P, uint32_t bin0, uint32_t bin1, uint32_t k, uint32_t g, u64 *dist,
                u64 *out, uint32_t n, int last, uint32_t slot, uint32_t *flag, uint32_t sat,
                uint32_t *ovf) {
    extern __shared__ u64 sm[];
    constexpr bool C32 = sizeof(C) == 4;
    const C INFC = (C)INF64;
    constexpr uint32_t APW = 32 / KW; /* arcs per pass */
    const unsigned FULL = 0xffffffffu;
    wwarp ww;
    if (!wwarp_of(P, bin0, bin1, g, WBIN_WARPS, KW, &ww)) return; /* (no block barrier below) */
    const uint32_t lane = ww.lane, wi = ww.wi, b = ww.b, c0 = ww.c0;
    const wbin B = wbin_of(P, b);
    const uint32_t ns = B.ns, A = B.A;
    C *const D = (C *)((char *)sm + (size_t)wi * slot);
    const uint32_t *const HT = P.in_ht + B.a0, *const W = P.in_pwt + B.a0;
    const uint32_t sr0 = lane <= ns ? __ldg(&P.step_arc[B.s0 + lane]) - B.a0 : 0;
    const uint32_t sr1 = lane + 32 <= ns ? __ldg(&P.step_arc[B.s0 + 32 + lane]) - B.a0 : 0;
    const bool rd = !flag || flag[b];
    /* (outer arcs 2 at a time for one source: its kernel keeps to 32 registers) */
    wbin_in<KW, C, KW == 1 ? 2 : 4>(P, B, D, dist, k, c0, lane, rd, last, sat);
    /* the window (loaded after the outer arcs: their batches need the registers) */
    uint32_t h0 = lane < A ? __ldg(&HT[lane]) : 0, w0 = lane < A ? __ldg(&W[lane]) : INF32;
    uint32_t h1 = lane + 32 < A ? __ldg(&HT[lane + 32]) : 0;
    uint32_t w1 = lane + 32 < A ? __ldg(&W[lane + 32]) : INF32;
    uint32_t h2 = lane + 64 < A ? __ldg(&HT[lane + 64]) : 0;
    uint32_t w2 = lane + 64 < A ? __ldg(&W[lane + 64]) : INF32;
    __syncwarp();
    const uint32_t col = lane % KW, sub = lane / KW;
    {
        uint32_t k0 = 0, qa = 0;                /* k0: the chunk in h0 / w0 */
        for (uint32_t st = 1; st <= ns; st++) { /* the same trips on all lanes; step st - 1 */
            const uint32_t qb = st < 32   ? __shfl_sync(FULL, sr0, st)
                                : st < 64 ? __shfl_sync(FULL, sr1, st - 32)
                                          : __ldg(&P.step_arc[B.s0 + st]) - B.a0;
            for (uint32_t c = qa; c < qb; c += APW) {
                if ((c >> 5) != k0) { /* one chunk on (a step starts at most one chunk on) */
                    h0 = h1, w0 = w1, h1 = h2, w1 = w2, k0++;
                    const uint32_t x = ((k0 + 2) << 5) + lane;
                    h2 = x < A ? __ldg(&HT[x]) : 0;
                    w2 = x < A ? __ldg(&W[x]) : INF32;
                }
                const uint32_t a = c + sub, sl = a & 31;
                uint32_t e = __shfl_sync(FULL, h0, sl), v = __shfl_sync(FULL, w0, sl);
                if (((min(c + APW, qb) - 1) >> 5) != k0) { /* the pass reaches the next chunk */
                    const uint32_t e1 = __shfl_sync(FULL, h1, sl), v1 = __shfl_sync(FULL, w1, sl);
                    if ((a >> 5) != k0) e = e1, v = v1;
                }
                if (a < qb && v != INF32) {
                    const C dh = D[((e & 0xffffu) >> 4) * KW + col];
                    if (dh != INFC) { /* 32-bit cells: the sum saturates at sat */
                        const u64 x = (u64)dh + v;
                        atomicMin(&D[(e >> 20) * KW + col], C32 ? (C)(x < sat ? x : sat) : (C)x);
                    }
                }
            }
            __syncwarp();
            qa = qb;
        }
    }
    wbin_out<KW, C>(P, B, D, dist, out, n, k, c0, lane, last, sat, ovf, flag, b, g, rd);
}

/* Passes (KW = 4, 32-bit cells, sat < 2^31): with every step padded to a
 * multiple of 8 arcs, the bin's arcs are a sequence of passes of 8 arcs x 4 sources, four to a
 * 32-arc chunk, none spanning two steps, so no step offsets, no chunk boundary inside a pass and
 * a __syncwarp after each pass (a step's last pass among them). The chunks rotate through three
 * register pairs with no moves (the loop unrolled three times): a chunk is loaded two chunks
 * (eight passes) before its first use, where sweep_warcs' window shifts by register moves that
 * wait on the chunk loaded one chunk before (Nsight Compute: 17,497 long-scoreboard samples
 * there, bench/results/2026-11-27-...-gpu-cch-ncu-v10.md); the first chunk is loaded before the
 * outer arcs. A pass has no branch: the head's cell read and the tail's cell lowered (red.shared,
 * predicated off for a dummy or INF arc and an INF head) at byte offsets the layout holds, a
 * 32-bit saturating sum (weights clamped to sat < 2^31, so a sum never wraps). */
__global__ void __launch_bounds__(WBIN_WARPS * 32, WPASS_BLOCKS)
    sweep_wpass(plan_dev P, uint32_t bin0, uint32_t bin1, uint32_t k, uint32_t g, u64 *dist,
                u64 *out, uint32_t n, int last, uint32_t slot, uint32_t *flag, uint32_t sat,
                uint32_t *ovf) {
    extern __shared__ u64 sm[];
    constexpr uint32_t KW = 4;
    const unsigned FULL = 0xffffffffu;
    wwarp ww;
    if (!wwarp_of(P, bin0, bin1, g, WBIN_WARPS, KW, &ww)) return; /* (no block barrier below) */
    const uint32_t lane = ww.lane, wi = ww.wi, b = ww.b, c0 = ww.c0;
    const wbin B = wbin_of(P, b);
    const uint32_t A = B.A; /* a multiple of 8 */
    uint32_t *const D = (uint32_t *)((char *)sm + (size_t)wi * slot);
    const uint32_t *const HT = P.in_ht + B.a0, *const W = P.in_pwt + B.a0;
    uint32_t ha, wa, hb, wb, hc, wc;
    auto ld = [&](uint32_t ch, uint32_t &h, uint32_t &w) {
        const uint32_t x = (ch << 5) + lane;
        h = x < A ? __ldg(&HT[x]) : 0;
        w = x < A ? __ldg(&W[x]) : INF32;
    };
    ld(0, ha, wa);
    const bool rd = !flag || flag[b];
    wbin_in<KW, uint32_t, 4>(P, B, D, dist, k, c0, lane, rd, last, sat);
    const uint32_t col = lane & 3, sub = lane >> 2, np = A >> 3, nch = (A + 31) >> 5;
    const uint32_t dcol = (uint32_t)__cvta_generic_to_shared(D + col); /* + a byte offset */
    auto run = [&](uint32_t h, uint32_t w,
                   uint32_t ch) { /* chunk ch's passes */
                                  const uint32_t q1 = np - (ch << 2);
#pragma unroll
                                  for (uint32_t q = 0; q < 4; q++) {
                                      if (q >= q1) break;
                                      const uint32_t e = __shfl_sync(FULL, h, (q << 3) + sub);
                                      const uint32_t v = __shfl_sync(FULL, w, (q << 3) + sub);
                                      uint32_t dh;
                                      asm volatile("ld.shared.u32 %0, [%1];"
                                                   : "=r"(dh)
                                                   : "r"(dcol + (e & 0xffffu))
                                                   : "memory");
                                      const uint32_t x = min(dh + min(v, sat),
                                                             sat); /* dh <= sat < 2^31 unless INF */
                                      asm volatile("{\n\t.reg .pred p, q;\n\t"
                                                   "setp.ne.u32 p, %2, 0xffffffff;\n\t"
                                                   "setp.ne.and.u32 q, %3, 0xffffffff, p;\n\t"
                                                   "@q red.shared.min.u32 [%0], %1;\n\t}" ::"r"(
                                                       dcol + (e >> 16)),
                                                   "r"(x), "r"(v), "r"(dh)
                                                   : "memory");
                                      __syncwarp();
                                  }
    };
    ld(1, hb, wb);
    ld(2, hc, wc);
    __syncwarp();
    for (uint32_t ch = 0; ch < nch; ch += 3) {
        run(ha, wa, ch);
        ld(ch + 3, ha, wa);
        if (ch + 1 >= nch) break;
        run(hb, wb, ch + 1);
        ld(ch + 4, hb, wb);
        if (ch + 2 >= nch) break;
        run(hc, wc, ch + 2);
        ld(ch + 5, hc, wc);
    }
    wbin_out<KW, uint32_t>(P, B, D, dist, out, n, k, c0, lane, last, sat, ovf, flag, b, g, rd);
}

/* Flat phases (GP_DCCH_FLAT): a phase with piece tables without bins. A bin's table gives
 * d(v) = min(D1(v), min over its entries (v, a, T) of D1(a) + T) with D1 the cells after the
 * outer arcs; a block per bin left the GPU idle where a phase has few bins (gen:24M: 37 bins of
 * 139 steps, 528 of 243 at one block per SM). Here the whole phase at once: flat_outer, a thread
 * per position and source, relaxes the position's outer arcs into its cell (D1; heads are in
 * earlier phases: final), then flat_entries, a thread per entry and source, lowers v's cell with
 * atomicMin. An entry may read a's cell after other entries lowered it: any value there lies
 * between d(a) and D1(a), so the candidate is a real path's length, never below d(v), and never
 * above D1(a) + T: the minimum is d(v) whatever the order (and a stale cached read is such a
 * value too). The output waits for the next launch: flat_outer's first part writes the previous
 * flat phase's positions (plo .. phi) to out row by row (neighbouring threads: neighbouring
 * positions), and restores INF there after the last phase (lastp). */
__global__ void __launch_bounds__(256)
    flat_outer(plan_dev P, uint32_t lo, uint32_t hi, uint32_t k, u64 *dist, u64 *out, uint32_t n,
               uint32_t plo, uint32_t phi, int lastp) {
    const uint64_t np = (uint64_t)(phi - plo) * k, nq = (uint64_t)(hi - lo) * k;
    const uint64_t it = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it < np) {
        const uint32_t sc = (uint32_t)(it / (phi - plo)), p = plo + (uint32_t)(it % (phi - plo));
        const size_t cell = (size_t)p * k + sc;
        const u64 v = dist[cell];
        out[(size_t)sc * n + P.pnode[p]] = v;
        if (lastp && v != INF64) dist[cell] = INF64;
        return;
    }
    if (it >= np + nq) return;
    const uint32_t p = lo + (uint32_t)((it - np) / k), sc = (uint32_t)((it - np) % k);
    const size_t cell = (size_t)p * k + sc;
    u64 best = dist[cell];
    for (uint32_t o = P.out_first[p]; o < P.out_first[p + 1]; o++) {
        const uint32_t w = P.out_wt[o];
        if (w == INF32) continue;
        const u64 dh = dist[(size_t)P.out_head[o] * k + sc];
        if (dh != INF64 && dh + w < best) best = dh + w;
    }
    dist[cell] = best;
}

__global__ void __launch_bounds__(256)
    flat_entries(const u64 *__restrict__ va, const uint32_t *__restrict__ T, uint64_t e0,
                 uint64_t ne, uint32_t k, u64 *dist) {
    const uint64_t it = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= ne * k) return;
    const uint64_t e = e0 + it / k;
    const uint32_t sc = (uint32_t)(it % k), t = T[e];
    if (t == INF32) return;
    const u64 x = va[e];
    const u64 da = dist[(size_t)(uint32_t)x * k + sc];
    if (da == INF64) return;
    u64 *const dv = &dist[(size_t)(x >> 32) * k + sc];
    if (da + t < *dv) atomicMin(dv, da + t);
}

/* GP_DCCH_GATHER: flat_entries without atomics. The entries sorted by v (f_vfirst: v's
 * range), a thread per position and source takes the minimum of its cell and its entries' D1(a) +
 * T and writes it once (the same bounds as flat_entries: any value read at a lies between d(a)
 * and D1(a)). Neighbouring threads: one position's sources. */
__global__ void __launch_bounds__(256)
    flat_gather(const u64 *__restrict__ va, const uint32_t *__restrict__ T,
                const uint32_t *__restrict__ vfirst, uint32_t lo, uint32_t hi, uint32_t k,
                u64 *dist) {
    const uint64_t it = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= (uint64_t)(hi - lo) * k) return;
    const uint32_t v = lo + (uint32_t)(it / k), sc = (uint32_t)(it % k);
    const size_t cell = (size_t)v * k + sc;
    const u64 d1 = dist[cell];
    u64 best = d1;
    const uint32_t i1 = __ldg(&vfirst[v + 1]);
#pragma unroll 4
    for (uint32_t i = __ldg(&vfirst[v]); i < i1; i++) {
        const uint32_t t = __ldg(&T[i]), a = (uint32_t)__ldg(&va[i]);
        const u64 da = dist[(size_t)a * k + sc];
        const u64 x = t == INF32 || da == INF64 ? INF64 : da + t;
        best = x < best ? x : best;
    }
    if (best < d1) dist[cell] = best;
}

/* Before the plan's phases, one launch: blocks 0 .. nfill-1 fill a chunk of INIT_CHUNK cells of
 * [lo, hi) each with INF and then write the upward-search entries that land in their chunk (block
 * 0 also those at hi or beyond: cells that are INF between sweeps); entries of the top (positions
 * below K) are left to the other blocks, which compute the top's cells (cch_plan.h gp_cch_top): a
 * block per source and 32 top positions (a lane each), the source's top entries staged in shared
 * memory (compacted in any order: the min does not care), the block's warps taking every 8th entry
 * (loads unrolled: many rows of tab in flight), each lane the minimum of d0(u) + tab[u*K + v] over
 * its warp's entries, then the minimum over the warps; the result goes to dist and to out. (First
 * version, a thread per position looping over all entries: 60 us on BAY, latency-bound.) */
__global__ void __launch_bounds__(INIT_THREADS)
    sweep_init(uint32_t k, u64 *dist, size_t lo, size_t hi, uint32_t nfill,
               const uint32_t *__restrict__ init_first, const uint32_t *__restrict__ init_rank,
               const u64 *__restrict__ init_dist, const uint32_t *__restrict__ pos, uint32_t K,
               const u64 *__restrict__ tab, u64 *out, const uint32_t *__restrict__ pnode,
               uint32_t n, uint32_t *flag, const uint32_t *__restrict__ bin_first, uint32_t fb0,
               uint32_t fb1) {
    extern __shared__ u64 sm[];
    __shared__ uint32_t cnt;
    const uint32_t b = blockIdx.x, tid = threadIdx.x;
    const size_t top = (size_t)K * k;
    if (b < nfill) {
        const size_t c0 = lo + (size_t)b * INIT_CHUNK,
                     c1 = c0 + INIT_CHUNK < hi ? c0 + INIT_CHUNK : hi;
        for (size_t i = c0 + tid; i < c1; i += blockDim.x) dist[i] = INF64;
        __syncthreads();
        for (uint32_t s = 0; s < k; s++)
#pragma unroll 4 /* (independent iterations: their loads in flight together) */
            for (uint32_t j = init_first[s] + tid; j < init_first[s + 1]; j += blockDim.x) {
                size_t cell = (size_t)pos[init_rank[j]] * k + s;
                if (cell >= top && ((cell >= c0 && cell < c1) || (b == 0 && cell >= hi))) {
                    dist[cell] = init_dist[j];
                    /* flag: the bin of bins [fb0, fb1) holding the cell's position */
                    const size_t x = cell / k;
                    if (flag && x >= bin_first[fb0]) {
                        uint32_t l = fb0, r = fb1; /* the last bin starting at or before it */
                        while (r - l > 1) {
                            const uint32_t mid = l + (r - l) / 2;
                            if (bin_first[mid] <= x) l = mid;
                            else r = mid;
                        }
                        flag[l] = 1;
                    }
                }
            }
        return;
    }
    __shared__ u64 red[INIT_THREADS / 32][32];
    const uint32_t chunks = (K + 31) / 32, s = (b - nfill) / chunks;
    const uint32_t lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
    const uint32_t v = (b - nfill) % chunks * 32 + lane;
    u64 *sdist = sm;
    uint32_t *su = (uint32_t *)(sm + (init_first[s + 1] - init_first[s]));
    if (tid == 0) cnt = 0;
    __syncthreads();
#pragma unroll 4
    for (uint32_t j = init_first[s] + tid; j < init_first[s + 1]; j += blockDim.x) {
        uint32_t u = pos[init_rank[j]];
        u64 du = init_dist[j];
        if (u < K && du != INF64) {
            uint32_t i = atomicAdd(&cnt, 1u);
            su[i] = u;
            sdist[i] = du;
        }
    }
    __syncthreads();
    u64 best = INF64;
    const uint32_t c = cnt;
    if (v < K) {
#pragma unroll 4
        for (uint32_t i = warp; i < c; i += nw) {
            u64 t = tab[(size_t)su[i] * K + v];
            if (t != INF64 && sdist[i] + t < best) best = sdist[i] + t;
        }
    }
    red[warp][lane] = best;
    __syncthreads();
    if (warp || v >= K) return;
    for (uint32_t w = 1; w < nw; w++) best = red[w][lane] < best ? red[w][lane] : best;
    dist[(size_t)v * k + s] = best;
    out[(size_t)s * n + pnode[v]] = best;
}

typedef void (*warcs_fn)(plan_dev, uint32_t, uint32_t, uint32_t, uint32_t, u64 *, u64 *, uint32_t,
                         int, uint32_t, uint32_t *, uint32_t, uint32_t *);
/* sweep_warcs with kw sources per warp (1, 2; 4 with 64-bit cells: 4 with 32-bit ones is
 * sweep_wpass), cells of 32 bits (c32) or 64 */
warcs_fn warcs_kern(uint32_t kw, bool c32) {
    if (c32) return kw == 2 ? sweep_warcs<2, uint32_t> : sweep_warcs<1, uint32_t>;
    return kw == 4 ? sweep_warcs<4, u64> : kw == 2 ? sweep_warcs<2, u64> : sweep_warcs<1, u64>;
}

typedef void (*sweep_kern)(plan_dev, uint32_t, uint32_t, u64 *, u64 *, uint32_t, int, uint32_t,
                           const u64 *);
const sweep_kern sweep_kerns[2][2] = {/* [k == 1][bins fit smem] */
                                      {sweep_bins<false, false>, sweep_bins<false, true>},
                                      {sweep_bins<true, false>, sweep_bins<true, true>}};

/* What a captured plan sweep depends on (GP_DCCH_GRAPH): equal keys, equal launches. */
struct x_key {
    uint32_t k, K, f0, nfill, nprod, init_smem, gen;
    unsigned flags; /* GP_DCCH_* (d->paths, GP_DCCH_W64 where 64-bit cells are on) */
    int q_ok;
    uint32_t wkw; /* GP_DCCH_WMULTI: sources per warp at most */
    uint32_t sat; /* 32-bit warp-bin cells saturate here */
    size_t lo, hi;
    const void *pdist, *outbuf, *init_first, *init_rank, *init_dist;
    uint32_t *flag; /* GP_DCCH_SKIP: d->p_flag where the last phase runs as warp bins */
};

static_assert(sizeof(x_key) <= sizeof(((gp_dcch *)0)->x_graph[0].key), "x_key fits");

/* Whether phase f of the plan uses piece tables at x.k: for one source always, for several where
 * the product's work, entries x k, stays within twice the steps', inner arcs x k. */
bool phase_tabs(const gp_dcch *d, const x_key &x, uint32_t f) {
    return d->q_ok && d->q_pent && d->q_pent[f] && (x.k == 1 || d->q_pent[f] <= 2 * d->q_parcs[f]);
}

/* Whether phase f of the plan runs flat (GP_DCCH_FLAT: where it uses piece tables at x.k and
 * every bin of it has a table: a bin of fewer than PIECE_MIN_STEPS steps keeps its steps). */
bool phase_flat(const gp_dcch *d, const x_key &x, uint32_t f) {
    return (x.flags & GP_DCCH_FLAT) && d->f_va && d->f_T && d->f_full[f] && phase_tabs(d, x, f);
}

/* Whether and how phase f of the plan runs as warp bins at x.k (GP_DCCH_WARPS, in phases of at
 * least d->wbin_min bins): 0 not, else the sources per warp: for one source where the phase
 * uses no piece table at this k, for several with GP_DCCH_WMULTI likewise in phases of at least
 * d->wmulti_min bins (x.wkw sources per warp at most, a divisor of k, so k / that warps per
 * bin), where the largest bin's cells (nodes x sources per warp) fit a warp's slot. */
uint32_t phase_wbins(const gp_dcch *d, const x_key &x, uint32_t f) {
    const uint32_t k = x.k, nb = d->p_phase_bin[f + 1] - d->p_phase_bin[f];
    const uint64_t nodes = d->p_max_nodes[f];
    if (!(x.flags & GP_DCCH_WARPS) || phase_tabs(d, x, f) || nb < d->wbin_min) return 0;
    uint32_t kw = 1;
    if (k > 1) {
        if (!(x.flags & GP_DCCH_WMULTI) || nb < d->wmulti_min) return 0;
        kw = x.wkw;
        while (kw > 1 && k % kw) kw >>= 1;
    }
    const uint64_t csz = x.flags & GP_DCCH_W64 ? 8 : 4; /* bytes per cell */
    return nodes < 4096 && nodes * csz * kw <= WBIN_SLOT_MAX ? kw : 0;
}

/* The paths a phase takes (the profile's path[f]) */
enum { PATH_STEPS, PATH_TABLES, PATH_WBINS, PATH_WPASS, PATH_FLAT };

/* The launches of one plan sweep after the init upload: sweep_init (fill, scatter, the top
 * table's product), then a launch per phase (flat, warp bins, or a block per bin with its steps
 * or its piece table). With npev (the profile) an event after the init and after each phase,
 * path[f] the path phase f took (PATH_*), wk_of[f] its warp bins' sources per warp and smem[f]
 * its shared memory per block. Also what GP_DCCH_GRAPH captures. */
int plan_issue(gp_dcch *d, cudaStream_t s, const x_key &x, cudaEvent_t *pev, uint32_t npev,
               uint32_t *path, uint32_t *wk_of, uint32_t *smem_of, gp_err *err) {
    int rc = GP_OK;
    const uint32_t k = x.k;
    sweep_init<<<x.nfill + x.nprod, INIT_THREADS, x.init_smem, s>>>(
        k, d->pdist, x.lo, x.hi, x.nfill, d->init_first, d->init_rank, (const u64 *)d->init_dist,
        d->p_pos, x.K, d->t_tab, d->outbuf, d->p_pnode, d->n, x.flag, d->p_bin_first,
        d->p_phase_bin[d->p_nphases - 1], d->p_phase_bin[d->p_nphases]);
    CKL("sweep init");
    if (npev) CK(cudaEventRecord(pev[0], s), "plan profile");
    {
        plan_dev P = {d->p_bin_first, d->p_bin_step,  d->p_step_first, d->p_in_first, d->p_in_head,
                      d->p_in_wt,     d->p_out_first, d->p_out_head,   d->p_out_tail, d->p_out_wt,
                      d->p_pnode,     d->p_in_ht,     d->p_in_pwt,     d->p_step_arc, d->q_first,
                      d->p_onode,     d->p_ooff,      d->p_bin_rec,    d->p_border};
        unsigned threads = k == 1 ? 256 : PLAN_THREADS_MAX;
        uint32_t plo = 0, phi = 0; /* a flat phase's positions, their output still to write */
        for (uint32_t f = x.f0; f <= d->p_nphases; f++) {
            const bool flat = f < d->p_nphases && phase_flat(d, x, f);
            if (phi > plo || (flat && f < d->p_nphases)) { /* flat_outer: the pending output,
                                                            * this flat phase's outer arcs */
                const uint32_t lo = flat ? d->f_ppos[f] : 0, hi = flat ? d->f_ppos[f + 1] : 0;
                const uint64_t items = ((uint64_t)(phi - plo) + (hi - lo)) * k;
                if (items)
                    flat_outer<<<(unsigned)((items + 255) / 256), 256, 0, s>>>(
                        P, lo, hi, k, d->pdist, d->outbuf, d->n, plo, phi, f == d->p_nphases);
                CKL("sweep (flat)");
                plo = lo, phi = hi;
            }
            if (f == d->p_nphases) break;
            if (path) path[f] = PATH_STEPS, wk_of[f] = 0, smem_of[f] = 0;
            if (flat) { /* flat_entries: the phase's piece-table entries at once */
                const uint64_t e0 = d->f_pent[f], ne = d->f_pent[f + 1] - e0;
                const uint64_t np = (uint64_t)(d->f_ppos[f + 1] - d->f_ppos[f]) * k;
                if (ne && (x.flags & GP_DCCH_GATHER) && k > 1 && ne >= d->gather_min &&
                    d->f_ppos[f + 1] <= d->p_mid)
                    flat_gather<<<(unsigned)((np + 255) / 256), 256, 0, s>>>(
                        d->f_va, d->f_T, d->f_vfirst, d->f_ppos[f], d->f_ppos[f + 1], k, d->pdist);
                else if (ne)
                    flat_entries<<<(unsigned)((ne * k + 255) / 256), 256, 0, s>>>(
                        d->f_va, d->f_T, e0, ne, k, d->pdist);
                CKL("sweep (flat)");
                if (path) path[f] = PATH_FLAT;
                if (npev) CK(cudaEventRecord(pev[f - x.f0 + 1], s), "plan profile");
                continue;
            }
            uint32_t nb = d->p_phase_bin[f + 1] - d->p_phase_bin[f];
            uint64_t nodes = d->p_max_nodes[f],
                     need = nodes * k * 8 + (nodes + 1) * 4 + (uint64_t)d->p_max_arcs[f] * 8 + 16;
            uint64_t need_sa = need + ((uint64_t)d->p_max_steps[f] + 1) * 4;
            bool sa = need_sa <= (uint64_t)d->smem_max;
            uint32_t smem = sa                             ? (uint32_t)need_sa
                            : need < (uint64_t)d->smem_max ? (uint32_t)need
                                                           : (uint32_t)d->smem_max;
            const u64 *tab = NULL;
            const uint32_t wk = phase_wbins(d, x, f);
            const int lastf = f + 1 == d->p_nphases;
            if (wk) { /* arc-lane warp bins: the cells of wk sources in a warp's slot */
                const bool c32 = !(x.flags & GP_DCCH_W64);
                const uint32_t slot = (uint32_t)((nodes * wk * (c32 ? 4 : 8) + 15) / 16 * 16);
                const uint32_t g = k / wk, wpb = WBIN_WARPS; /* warps per block */
                const bool wp = wk == 4 && c32;              /* passes */
                const uint32_t nbl = (uint32_t)(((uint64_t)nb * g + wpb - 1) / wpb);
                if (path)
                    path[f] = wp ? PATH_WPASS : PATH_WBINS, wk_of[f] = wk | (c32 ? 32 : 64) << 8,
                    smem_of[f] = slot * wpb;
                if (wp) /* (its sums need sat < 2^31) */
                    sweep_wpass<<<nbl, wpb * 32, slot * wpb, s>>>(
                        P, d->p_phase_bin[f], d->p_phase_bin[f + 1], k, g, d->pdist, d->outbuf,
                        d->n, lastf, slot, lastf ? x.flag : NULL,
                        x.sat < 0x7fffffffu ? x.sat : 0x7fffffffu, d->p_ovf);
                else
                    warcs_kern(wk, c32)<<<nbl, wpb * 32, slot * wpb, s>>>(
                        P, d->p_phase_bin[f], d->p_phase_bin[f + 1], k, g, d->pdist, d->outbuf,
                        d->n, lastf, slot, lastf ? x.flag : NULL, x.sat, d->p_ovf);
                CKL("sweep (warp bins)");
                if (npev) CK(cudaEventRecord(pev[f - x.f0 + 1], s), "plan profile");
                continue;
            }
            if (phase_tabs(d, x, f)) {
                uint64_t tneed = (uint64_t)d->q_pmaxn[f] * k * 16;
                if (tneed <= (uint64_t)d->smem_max) {
                    tab = d->q_ent;
                    if (tneed > smem) smem = (uint32_t)tneed;
                }
            }
            if (path) path[f] = tab ? PATH_TABLES : PATH_STEPS, wk_of[f] = sa, smem_of[f] = smem;
            sweep_kerns[k == 1][sa]<<<nb, threads, smem, s>>>(P, d->p_phase_bin[f], k, d->pdist,
                                                              d->outbuf, d->n,
                                                              f + 1 == d->p_nphases, smem, tab);
            CKL("sweep (plan)");
            if (npev) CK(cudaEventRecord(pev[f - x.f0 + 1], s), "plan profile");
        }
    }
out:
    return rc;
}

/* The per-phase profile (gp_dcch_tune.profile) on stderr: per phase its bins, positions, inner
 * arcs per position, the largest bin (positions, steps), the path taken, shared memory per block
 * and resident blocks per SM, the device time and the bytes of distances read + written
 * (positions x k x 8, twice: the bin's cells in, the output out) per second. */
int plan_profile(gp_dcch *d, const x_key &x, cudaEvent_t *pev, uint32_t npev, const uint32_t *path,
                 const uint32_t *wk_of, const uint32_t *smem_of, gp_err *err) {
    int rc = GP_OK;
    float t0 = 0, ti = 0;
    const uint32_t k = x.k;
    static const char *const names[] = {"steps", "piece tables", "warp bins", "warp bins (passes)",
                                        "flat piece tables"};
    CK(cudaEventSynchronize(pev[npev - 1]), "plan profile");
    CK(cudaEventElapsedTime(&t0, d->ev0, pev[0]), "plan profile");
    fprintf(stderr, "plan profile k=%u paths %u: init (fill, scatter", k, x.flags);
    if (x.K)
        fprintf(stderr,
                ", top table of %u nodes = phases 0-%u, computed in %.1f us at "
                "customization",
                x.K, x.f0 - 1, d->t_ms * 1e3);
    fprintf(stderr, ") %.1f us", t0 * 1e3);
    if (d->q_ntab)
        fprintf(stderr, " [piece tables: %u bins, %.1f us at customization%s]", d->q_ntab,
                d->q_ms * 1e3, d->q_ok ? "" : ", off: a distance overflows");
    for (uint32_t f = x.f0; f < d->p_nphases; f++) {
        int per_sm = 0;
        CK(cudaEventElapsedTime(&ti, pev[f - x.f0], pev[f - x.f0 + 1]), "plan profile");
        const uint32_t p = path[f], wk = wk_of[f] & 255;
        cudaError_t oe =
            p == PATH_FLAT    ? cudaErrorNotSupported /* (grids of 256 threads: no blocks per SM) */
            : p == PATH_WPASS ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                    &per_sm, sweep_wpass, WBIN_WARPS * 32, smem_of[f])
            : p == PATH_WBINS
                ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &per_sm, warcs_kern(wk, wk_of[f] >> 8 == 32), WBIN_WARPS * 32, smem_of[f])
                : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &per_sm, sweep_kerns[k == 1][wk_of[f] & 1], k == 1 ? 256 : PLAN_THREADS_MAX,
                      smem_of[f]);
        if (oe != cudaSuccess) per_sm = -1;
        const double pos = d->p_ppos ? (double)d->p_ppos[f] : 0;
        char lanes[96] = "";
        if (p == PATH_FLAT || p == PATH_TABLES) /* the tables' entries */
            snprintf(lanes, sizeof lanes, " (%llu entries)",
                     (unsigned long long)(d->q_pent ? d->q_pent[f] : 0));
        else if (p == PATH_WBINS || p == PATH_WPASS) /* a lane per arc, wk sources per warp */
            snprintf(lanes, sizeof lanes, " (a lane per arc, %u sources per warp, %u-bit cells)",
                     wk, wk_of[f] >> 8);
        fprintf(stderr,
                "; phase %u (%u bins, %.0f positions, %.1f inner arcs each, largest bin %u "
                "positions / %u steps, %s%s, %u B smem, %d blocks/SM) %.1f us = %.0f GB/s",
                f, d->p_phase_bin[f + 1] - d->p_phase_bin[f], pos,
                pos > 0 ? d->p_parcs[f] / pos : 0.0, d->p_max_nodes[f], d->p_max_steps[f], names[p],
                lanes, smem_of[f], per_sm, ti * 1e3,
                ti > 0 ? pos * k * 16 / (ti * 1e-3) / 1e9 : 0.0);
    }
    fprintf(stderr, "\n");
out:
    return rc;
}

/* PHAST through the plan: fill the upper phases' cells (and whatever an earlier call left), scatter
 * the upward searches by position, a launch per phase; the output lands in d->outbuf. With
 * GP_DCCH_GRAPH the launches after the init upload run as one CUDA graph, captured once per key
 * (x_key: k, the fill range, the buffers, the plan generation, the paths' inputs). */
int run_plan_k(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
               const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    int rc = GP_OK;
    size_t cells = (size_t)d->n * k;
    u64 *before = d->pdist;
    x_key x;
    cudaEvent_t pev[18];
    uint32_t path[16], wk_of[16], smem_of[16], npev = 0;
    memset(&x, 0, sizeof x);
    /* this metric's tables, when its customization left them stale */
    if ((rc = gp_dcch_plan_tables(d, s, err)) != GP_OK) return rc;
    /* the top table: its phases are done by sweep_init's product */
    x.k = k;
    x.K = d->t_K;
    x.f0 = x.K ? d->t_nph : 0;
    CK(grow(&d->pdist, &d->pdist_cap, cells), "allocating the sweep");
    if (d->pdist != before) d->p_dirty = d->pdist_cap;
    CK(grow(&d->outbuf, &d->out_cap, cells), "allocating the PHAST output");
    if ((rc = gp_dcch_upload_init(d, s, k, init_first, init_rank, init_dist, err)) != GP_OK)
        return rc;
    { /* the fill range and the init launch's blocks */
        size_t hi = (size_t)d->p_mid * k, lo = (size_t)x.K * k;
        if (d->p_dirty > hi) hi = d->p_dirty;
        if (hi > d->pdist_cap) hi = d->pdist_cap;
        if (lo > hi) lo = hi;
        uint32_t nfill = (uint32_t)((hi - lo + INIT_CHUNK - 1) / INIT_CHUNK), maxc = 0;
        if (nfill < 1) nfill = 1;
        for (uint32_t i = 0; i < k; i++)
            if (init_first[i + 1] - init_first[i] > maxc) maxc = init_first[i + 1] - init_first[i];
        x.lo = lo;
        x.hi = hi;
        x.nfill = nfill;
        x.nprod = x.K ? k * ((x.K + 31) / 32) : 0;
        /* the product's staging: rounded up so that a captured graph serves many sources */
        uint32_t cap = (maxc + 255) / 256 * 256;
        if ((size_t)cap * 12 + 16 > 48 * 1024) cap = maxc;
        x.init_smem = cap * 12 + 16;
    }
    d->p_dirty = d->pdist_cap; /* until the sweep is through */
    x.flags = d->paths | (d->w64 ? GP_DCCH_W64 : 0);
    x.q_ok = d->q_ok;
    x.sat = d->sat;
    x.wkw = d->wkw;
    x.gen = d->x_gen;
    x.pdist = d->pdist;
    x.outbuf = d->outbuf;
    x.init_first = d->init_first;
    x.init_rank = d->init_rank;
    x.init_dist = d->init_dist;
    /* GP_DCCH_SKIP: where the last phase runs as warp bins with its cells in the slots */
    if ((x.flags & GP_DCCH_SKIP) && d->p_nphases > x.f0 && phase_wbins(d, x, d->p_nphases - 1)) {
        uint32_t *before_f = d->p_flag;
        CK(grow(&d->p_flag, &d->p_flag_cap, (size_t)d->p_nbins), "allocating the bin flags");
        if (d->p_flag != before_f) /* stale flags would only cost reads; missing ones, cells */
            CK(cudaMemsetAsync(d->p_flag, 0, d->p_flag_cap * 4, s), "allocating the bin flags");
        x.flag = d->p_flag;
    }
    d->x_c32 = 0; /* whether a phase runs as arc-lane warp bins with 32-bit cells */
    for (uint32_t f = x.f0; f < d->p_nphases; f++)
        if (phase_wbins(d, x, f) && !(x.flags & GP_DCCH_W64)) d->x_c32 = 1;
    /* the profile (the lab): an event after the init and after each phase */
    npev = d->profile && d->p_nphases <= 16 ? d->p_nphases - x.f0 + 1 : 0;
    for (uint32_t i = 0; i < npev; i++) CK(cudaEventCreate(&pev[i]), "plan profile");
    if ((x.flags & GP_DCCH_GRAPH) && !npev) { /* ev0 after a capture: device time */
        x_graph_slot *slot = NULL, *lru = &d->x_graph[0];
        for (int i = 0; i < X_GRAPHS; i++) {
            x_graph_slot *g = &d->x_graph[i];
            if (g->exec && !memcmp(g->key, &x, sizeof x)) slot = g;
            if (g->used < lru->used) lru = g;
        }
        if (!slot) {
            cudaGraph_t graph = NULL;
            slot = lru;
            if (slot->exec) cudaGraphExecDestroy(slot->exec);
            slot->exec = NULL;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capturing the sweep");
            rc = plan_issue(d, s, x, NULL, 0, NULL, NULL, NULL, err);
            cudaError_t e = cudaStreamEndCapture(s, &graph);
            if (rc == GP_OK && e == cudaSuccess) e = cudaGraphInstantiate(&slot->exec, graph, 0);
            if (graph) cudaGraphDestroy(graph);
            if (rc) return rc;
            CK(e, "capturing the sweep");
            memcpy(slot->key, &x, sizeof x);
        }
        slot->used = ++d->x_tick;
        CK(cudaEventRecord(d->ev0, s), "sweep");
        CK(cudaGraphLaunch(slot->exec, s), "sweep (graph)");
    } else {
        CK(cudaEventRecord(d->ev0, s), "sweep");
        if ((rc = plan_issue(d, s, x, pev, npev, npev ? path : NULL, wk_of, smem_of, err)) != GP_OK)
            return rc;
    }
    if (npev) {
        rc = plan_profile(d, x, pev, npev, path, wk_of, smem_of, err);
        for (uint32_t i = 0; i < npev; i++) cudaEventDestroy(pev[i]);
        if (rc) return rc;
    }
    d->p_dirty = (size_t)d->p_mid * k;
out:
    return rc;
}

/* One source sweeps its own buffer (pdist1), several the shared one (pdist): a sweep of one
 * source after one of 16 would otherwise clean the 16-source layout's upper cells. */
int run_plan(gp_dcch *d, cudaStream_t s, uint32_t k, const uint32_t *init_first,
             const uint32_t *init_rank, const uint64_t *init_dist, gp_err *err) {
    if (k != 1) return run_plan_k(d, s, k, init_first, init_rank, init_dist, err);
    u64 *p = d->pdist;
    size_t cap = d->pdist_cap, dirty = d->p_dirty;
    d->pdist = d->pdist1, d->pdist_cap = d->pdist1_cap, d->p_dirty = d->p_dirty1;
    int rc = run_plan_k(d, s, k, init_first, init_rank, init_dist, err);
    d->pdist1 = d->pdist, d->pdist1_cap = d->pdist_cap, d->p_dirty1 = d->p_dirty;
    d->pdist = p, d->pdist_cap = cap, d->p_dirty = dirty;
    return rc;
}

} // namespace

cudaError_t gp_dcch_sweep_attrs(int smem_max) {
    cudaError_t e = cudaSuccess;
    for (int k1 = 0; k1 < 2 && e == cudaSuccess; k1++)
        for (int sa = 0; sa < 2 && e == cudaSuccess; sa++)
            e = cudaFuncSetAttribute(sweep_kerns[k1][sa],
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max);
    const warcs_fn wk[] = {warcs_kern(1, true), warcs_kern(2, true), warcs_kern(1, false),
                           warcs_kern(2, false), warcs_kern(4, false)};
    for (size_t i = 0; i < sizeof wk / sizeof *wk && e == cudaSuccess; i++)
        e = cudaFuncSetAttribute(wk[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 WBIN_WARPS * WBIN_SLOT_MAX);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(sweep_wpass, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 WBIN_WARPS * WBIN_SLOT_MAX);
    return e;
}

void gp_dcch_graphs_free(gp_dcch *d) {
    if (!d) return;
    for (int i = 0; i < X_GRAPHS; i++) {
        if (d->x_graph[i].exec) cudaGraphExecDestroy(d->x_graph[i].exec);
        d->x_graph[i].exec = NULL;
        d->x_graph[i].used = 0;
    }
    if (d->custom_exec) cudaGraphExecDestroy(d->custom_exec);
    d->custom_exec = NULL;
}

extern "C" int gp_dcch_phast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                             const uint32_t *init_rank, const uint64_t *init_dist, uint64_t *dist,
                             float *ms, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    size_t cells = (size_t)d->n * k;
    /* the plan's indices are 32-bit: a bin's cells and outer arcs times k under 2^31 */
    int plan = !d->levels && d->p_nphases && (uint64_t)d->p_lim * k < (1ULL << 31);
    int rc = plan ? run_plan(d, s, k, init_first, init_rank, init_dist, err)
                  : gp_dcch_level_sweep(d, s, d->n, d->nlevels, d->level_first, d->d_levels,
                                        d->up_first, d->up_head, (const uint32_t *)d->fb + 1, 2, k,
                                        init_first, init_rank, init_dist, err);
    if (rc) return rc;
    if (dist && !plan && (rc = gp_dcch_level_output(d, s, k, err)) != GP_OK) return rc;
    CK(cudaEventRecord(d->ev1, s), "PHAST");
    if (plan && d->x_c32) { /* a 32-bit cell saturated: again with 64-bit cells, kept for this
                             * metric (until the next customization or re-tune) */
        uint32_t ovf = 0;
        CK(cudaMemcpyAsync(&ovf, d->p_ovf, 4, cudaMemcpyDeviceToHost, s), "PHAST");
        CK(cudaStreamSynchronize(s), "PHAST");
        if (ovf) {
            CK(cudaMemsetAsync(d->p_ovf, 0, 4, s), "PHAST");
            d->w64 = 1;
            return gp_dcch_phast(d, stream, k, init_first, init_rank, init_dist, dist, ms, err);
        }
    }
    if (dist)
        CK(cudaMemcpyAsync(dist, d->outbuf, cells * 8, cudaMemcpyDeviceToHost, s), "PHAST output");
    CK(cudaStreamSynchronize(s), "PHAST");
    if (ms) CK(cudaEventElapsedTime(ms, d->ev0, d->ev1), "PHAST");
out:
    return rc;
}
