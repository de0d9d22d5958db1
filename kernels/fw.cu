/* fw.cu - all-pairs shortest paths on the GPU: blocked Floyd-Warshall (Venkataraman et al. 2003;
 * Katz and Kider 2008) with optional next hops, behind gp_cuda_apsp (kernels/fw.h).
 *
 * The matrix is n rounded up to the round block B (padding nodes are isolated: a zero diagonal
 * and "unreachable" elsewhere, so any n is exact). Per round, with pivot block K:
 *   1. pivot: one block closes the B x B pivot tile in shared memory (sequential k, one barrier);
 *   2. panels: the pivot row panel (B x npad) and column panel (npad x B, stored transposed) are
 *      copied into dense buffers in the form the min-plus kernel reads;
 *   3. the pivot row and column tiles: C = min(C, A (x) B) with A, B from the panels (the pivot is
 *      closed, so this is one min-plus product, no sequential k);
 *   4. panels again (the updated row / column tiles);
 *   5. every other tile: C = min(C, A (x) B), a GEMM-shaped min-plus product: 128 x 128-word
 *      tiles, 8 x 8 words per thread in registers, k streamed in chunks of 32 through three
 *      cp.async shared-memory stages, 16-byte shared loads; min(a+b, c) is one DPX instruction
 *      (VIADDMNMX) on sm_90 via __viaddmin_u32 / __viaddmin_u16x2. Only changed elements are
 *      written back.
 *
 * Kinds (chosen from the bound (n-1) * max_w on path lengths, so sums never overflow and no
 * finite distance is mistaken for infinity):
 *   U16: uint16 elements, two per 32-bit word (__viaddmin_u16x2), INF 0x7fff, B = 256; distances only.
 *   U32: uint32, INF 0x7fffffff; with next hops INF 0xffffff and the panels carry d << 7 | k, so the
 *        same one-instruction min also yields the arg-min k (ties: smallest k) at no cost in the
 *        inner loop; an improved element takes next[i][K+k].
 *   U64: uint64, INF 2^55 - 1, always packed; plain add + min (the wide fallback).
 * With next hops on a graph with zero-weight arcs the weights become w * 2^s + 1 (2^s >= n), so
 * ties are broken by hop count and next-hop walks always end (see gp_cuda_apsp_bound).
 * Next hops follow the strict-improvement rule: next[i][j] changes only when d[i][j] strictly
 * decreases, to the first hop of the i -> k part, so d[i][j] is always the length of a walk that
 * starts with the arc (i, next[i][j]) and the final next hops realise the final distances.
 * Ownership: gp_cuda_apsp allocates everything on the given stream (stream-ordered allocator) and
 * frees it before returning; callers own the host arrays.
 */
#include "kernels/fw.cuh"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <vector>

#define FW_BM 128      /* tile rows */
#define FW_BNW 128     /* tile width in words */
#define FW_KC 32       /* k per pipeline chunk */
#define FW_NST 3       /* cp.async pipeline stages */
#define FW_THREADS 256 /* 16 x 16 threads, 8 x 8 words each */
#define FW_P1_THREADS 1024

static const uint32_t INF16 = 0x7fffu;
static const uint32_t INF32 = 0x7fffffffu;
static const uint32_t INF32P = 0xffffffu; /* with the k index packed in 7 bits */
static const unsigned long long INF64 = (1ull << 55) - 1;

/* ------------------------------------------------------------------------------------------ */
/* Element traits                                                                             */

struct K16 { /* two uint16 elements per 32-bit word */
    typedef uint32_t W;
    typedef uint16_t E;
    enum { EPW = 2 };
    static __device__ __forceinline__ W op(W a, W b, W c) { return __viaddmin_u16x2(a, b, c); }
    static __device__ __forceinline__ W dup(E e) { return (W)e | ((W)e << 16); }
};
struct K32 {
    typedef uint32_t W;
    typedef uint32_t E;
    enum { EPW = 1 };
    static __device__ __forceinline__ W op(W a, W b, W c) { return __viaddmin_u32(a, b, c); }
    static __device__ __forceinline__ W dup(E e) { return e; }
};
struct K64 {
    typedef unsigned long long W;
    typedef unsigned long long E;
    enum { EPW = 1 };
    static __device__ __forceinline__ W op(W a, W b, W c) { return min(a + b, c); }
    static __device__ __forceinline__ W dup(E e) { return e; }
};

static __device__ __forceinline__ void ld4(uint32_t *r, const uint32_t *s) {
    uint4 v = *reinterpret_cast<const uint4 *>(s);
    r[0] = v.x;
    r[1] = v.y;
    r[2] = v.z;
    r[3] = v.w;
}
static __device__ __forceinline__ void ld4(unsigned long long *r, const unsigned long long *s) {
    ulonglong2 v = *reinterpret_cast<const ulonglong2 *>(s);
    ulonglong2 u = *reinterpret_cast<const ulonglong2 *>(s + 2);
    r[0] = v.x;
    r[1] = v.y;
    r[2] = u.x;
    r[3] = u.y;
}

static __device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
static __device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> static __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* ------------------------------------------------------------------------------------------ */
/* Phase 1: close the pivot tile. 32 x 32 threads, each holding RM rows x 4 words in registers;
 * per k the owners of column k and row k publish them to shared memory (double-buffered, so one
 * barrier per k), everyone updates. Row and column k do not change during step k (d[k][k] = 0
 * and improvements are strict), so the published values stay valid for the whole step.          */

template <class KT, bool NEXT>
static __global__ void __launch_bounds__(FW_P1_THREADS)
    fw_pivot(typename KT::E *d, uint32_t *nx, uint32_t npad, uint32_t kb) {
    typedef typename KT::W W;
    typedef typename KT::E E;
    constexpr uint32_t B = KT::EPW == 2 ? 256 : 128; /* round block */
    constexpr uint32_t Bw = B / KT::EPW;             /* 128 words */
    constexpr int RM = B / 32;                       /* rows per thread */
    constexpr int CW = Bw / 32;                      /* words per thread: 4 */
    __shared__ __align__(16) W rowbuf[2][Bw];
    __shared__ __align__(16) W colbuf[2][B];
    __shared__ __align__(16) uint32_t colnx[2][NEXT ? B : 4];
    /* Next hops live in shared memory, not registers (1024 threads leave 64 registers each):
     * element (r, c) is only ever read and written by its owner thread. */
    extern __shared__ __align__(16) uint32_t snx[]; /* NEXT: B x Bw, dynamic (64 KB) */
    const uint32_t tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    const size_t npadw = npad / KT::EPW;
    W *gw = reinterpret_cast<W *>(d);
    W v[RM][CW];
#pragma unroll
    for (int r = 0; r < RM; r++) {
        size_t row = kb + ty * RM + r;
        ld4(v[r], gw + row * npadw + kb / KT::EPW + tx * CW);
        if (NEXT)
            *reinterpret_cast<uint4 *>(&snx[(ty * RM + r) * Bw + tx * CW]) =
                *reinterpret_cast<const uint4 *>(nx + row * npad + kb + tx * CW);
    }
    for (uint32_t k = 0; k < B; k++) {
        const uint32_t buf = k & 1, kw = k / KT::EPW;
        if (tx == kw / CW) { /* owners of column k */
            const uint32_t cs = kw % CW, half = k % KT::EPW;
#pragma unroll
            for (int r = 0; r < RM; r++) {
                W word = v[r][0];
#pragma unroll
                for (int c = 1; c < CW; c++)
                    if (cs == (uint32_t)c) word = v[r][c];
                E e = KT::EPW == 2 ? (E)(word >> (16 * half)) : (E)word;
                colbuf[buf][ty * RM + r] = KT::dup(e);
                if (NEXT) colnx[buf][ty * RM + r] = snx[(ty * RM + r) * Bw + k];
            }
        }
        if (ty == k / RM) { /* owners of row k */
            const uint32_t rs = k % RM;
#pragma unroll
            for (int c = 0; c < CW; c++) {
                W word = v[0][c];
#pragma unroll
                for (int r = 1; r < RM; r++)
                    if (rs == (uint32_t)r) word = v[r][c];
                rowbuf[buf][tx * CW + c] = word;
            }
        }
        __syncthreads();
        W a[RM], b[CW];
        uint32_t an[NEXT ? RM : 4];
#pragma unroll
        for (int r = 0; r < RM; r += 4) ld4(a + r, &colbuf[buf][ty * RM + r]);
        ld4(b, &rowbuf[buf][tx * CW]);
        if (NEXT) ld4(an, &colnx[buf][ty * RM]);
#pragma unroll
        for (int r = 0; r < RM; r++)
#pragma unroll
            for (int c = 0; c < CW; c++) {
                if (NEXT) {
                    W s2 = a[r] + b[c];
                    if (s2 < v[r][c]) {
                        v[r][c] = s2;
                        snx[(ty * RM + r) * Bw + tx * CW + c] = an[NEXT ? r : 0];
                    }
                } else {
                    v[r][c] = KT::op(a[r], b[c], v[r][c]);
                }
            }
    }
#pragma unroll
    for (int r = 0; r < RM; r++) {
        size_t row = kb + ty * RM + r;
#pragma unroll
        for (int c = 0; c < CW; c++) {
            gw[row * npadw + kb / KT::EPW + tx * CW + c] = v[r][c];
            if (NEXT) nx[row * npad + kb + tx * CW + c] = snx[(ty * RM + r) * Bw + tx * CW + c];
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Panels: rowp[k][w] = the row panel's words (shifted when packed); colp[k][i] = element
 * d[i][kb+k] transposed, duplicated into both halves (u16) or packed as d << 7 | k.            */

template <class KT, int SHIFT>
static __global__ void fw_rowpanel(const typename KT::W *d, typename KT::W *rowp, uint32_t npadw,
                                   uint32_t B, uint32_t kb) {
    size_t total = (size_t)B * npadw;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t k = t / npadw, w = t % npadw;
        rowp[t] = d[(kb + k) * npadw + w] << SHIFT;
    }
}

template <class KT, int SHIFT>
static __global__ void fw_colpanel(const typename KT::E *d, typename KT::W *colp, uint32_t npad,
                                   uint32_t kb) {
    typedef typename KT::W W;
    __shared__ W tile[32][33];
    uint32_t i0 = blockIdx.x * 32, k0 = blockIdx.y * 32;
    for (uint32_t r = threadIdx.y; r < 32; r += blockDim.y) /* read along k (coalesced) */
        tile[r][threadIdx.x] = (W)d[(size_t)(i0 + r) * npad + kb + k0 + threadIdx.x];
    __syncthreads();
    for (uint32_t r = threadIdx.y; r < 32; r += blockDim.y) { /* write along i (coalesced) */
        W e = tile[threadIdx.x][r];
        uint32_t k = k0 + r;
        W v = SHIFT ? ((e << SHIFT) | (W)k) : KT::dup((typename KT::E)e);
        colp[(size_t)k * npad + i0 + threadIdx.x] = v;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Phases 2 and 3: C = min(C, A (x) B) on 128 x 128-word tiles.
 * phase 2: tiles of the pivot row (rows in K, every other column tile) and of the pivot column
 *          (every other row tile, columns K); phase 3: every tile off the pivot row and column.  */

struct MPArgs {
    void *d;
    uint32_t *nx;
    const void *rowp, *colp;
    uint32_t npad, npadw, B, kb;
    int phase;
};

template <class KT, int SHIFT, bool NEXT>
static __global__ void __launch_bounds__(FW_THREADS, (sizeof(typename KT::W) == 4 ? 2 : 1))
    fw_minplus(MPArgs a) {
    typedef typename KT::W W;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const uint32_t rt_k = a.B / FW_BM;    /* row tiles inside the pivot block */
    const uint32_t Tc = a.npadw / FW_BNW; /* column tiles (each B columns) */
    const uint32_t kt_r = a.kb / FW_BM, kt_c = a.kb / a.B;
    uint32_t rt, ct;
    uint32_t bid = blockIdx.x;
    if (a.phase == 2) {
        uint32_t nrow = rt_k * (Tc - 1);
        if (bid < nrow) { /* pivot row */
            rt = kt_r + bid / (Tc - 1);
            ct = bid % (Tc - 1);
            ct += ct >= kt_c;
        } else { /* pivot column */
            rt = bid - nrow;
            rt += rt >= kt_r ? rt_k : 0;
            ct = kt_c;
        }
    } else {
        rt = bid / (Tc - 1);
        ct = bid % (Tc - 1);
        rt += rt >= kt_r ? rt_k : 0;
        ct += ct >= kt_c;
    }
    const uint32_t r0 = rt * FW_BM, c0 = ct * FW_BNW;
    const W *gA = reinterpret_cast<const W *>(a.colp) + r0; /* [k][npad] */
    const W *gB = reinterpret_cast<const W *>(a.rowp) + c0; /* [k][npadw] */
    W *sA = reinterpret_cast<W *>(smem);
    const uint32_t STAGE = FW_KC * (FW_BM + FW_BNW); /* words per stage */
    const uint32_t PR = FW_BM * sizeof(W) / 16;      /* 16-byte pieces per tile row */

    auto load_chunk = [&](uint32_t c, uint32_t stage) {
        W *As = sA + stage * STAGE, *Bs = As + FW_KC * FW_BM;
        for (uint32_t p = tid; p < FW_KC * PR; p += FW_THREADS) {
            uint32_t kk = p / PR, off = p % PR;
            size_t k = (size_t)c * FW_KC + kk;
            cp_async16(reinterpret_cast<char *>(As + kk * FW_BM) + off * 16,
                       reinterpret_cast<const char *>(gA + k * a.npad) + off * 16);
            cp_async16(reinterpret_cast<char *>(Bs + kk * FW_BNW) + off * 16,
                       reinterpret_cast<const char *>(gB + k * a.npadw) + off * 16);
        }
        cp_commit();
    };

    W acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = ~(W)0;

    /* FW_NST-stage pipeline, one barrier per chunk: chunk c+NST-1 is fetched into the stage that
     * chunk c-1 used, after the barrier that ends everyone's reads of it. Empty groups keep the
     * group count uniform so wait_group<NST-2> always means "chunk c has landed". */
    const uint32_t NC = a.B / FW_KC;
#pragma unroll
    for (uint32_t s = 0; s < FW_NST - 1; s++) {
        if (s < NC) load_chunk(s, s);
        else cp_commit();
    }
    for (uint32_t c = 0; c < NC; c++) {
        cp_wait<FW_NST - 2>();
        __syncthreads();
        if (c + FW_NST - 1 < NC) load_chunk(c + FW_NST - 1, (c + FW_NST - 1) % FW_NST);
        else cp_commit();
        const W *As = sA + (c % FW_NST) * STAGE, *Bs = As + FW_KC * FW_BM;
#pragma unroll 4
        for (int kk = 0; kk < FW_KC; kk++) {
            W av[8], bv[8];
            ld4(av, As + kk * FW_BM + ty * 4);
            ld4(av + 4, As + kk * FW_BM + 64 + ty * 4);
            ld4(bv, Bs + kk * FW_BNW + tx * 4);
            ld4(bv + 4, Bs + kk * FW_BNW + 64 + tx * 4);
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = KT::op(av[i], bv[j], acc[i][j]);
        }
    }

    /* Epilogue: merge with the old tile; write only what changed. */
    W *d = reinterpret_cast<W *>(a.d);
    uint32_t nxv[NEXT ? 8 : 1][NEXT ? 8 : 1];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const size_t r = r0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        W old[8];
        ld4(old, d + r * a.npadw + c0 + tx * 4);
        ld4(old + 4, d + r * a.npadw + c0 + 64 + tx * 4);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const size_t cw = c0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (SHIFT) {
                W nd = acc[i][j] >> SHIFT;
                bool better = nd < old[j];
                if (better) d[r * a.npadw + cw] = nd;
                if (NEXT) {
                    uint32_t k = (uint32_t)(acc[i][j] & ((1u << SHIFT) - 1));
                    nxv[NEXT ? i : 0][NEXT ? j : 0] = better ? a.nx[r * a.npad + a.kb + k]
                                                             : GP_NONE;
                }
            } else {
                W nv;
                if (KT::EPW == 2) nv = __vminu2((uint32_t)acc[i][j], (uint32_t)old[j]);
                else nv = min(acc[i][j], old[j]);
                if (nv != old[j]) d[r * a.npadw + cw] = nv;
            }
        }
    }
    if (NEXT) {
        /* Pivot-column tiles of phase 2 read next hops of their own tile, so every gather comes
         * before any write (a block-wide barrier). Measured: writing directly where that hazard
         * cannot occur (phase 3) was slower (12.70 vs 13.06 T/s at n = 16384): the gathers then
         * stall one by one on their stores instead of all being in flight. */
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const size_t r = r0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const size_t cw = c0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
                uint32_t v = nxv[NEXT ? i : 0][NEXT ? j : 0];
                if (v != GP_NONE) a.nx[r * a.npad + cw] = v;
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Initialisation, output                                                                     */

template <class E> static __global__ void fw_fill(E *d, uint32_t *nx, uint32_t npad, E inf) {
    size_t total = (size_t)npad * npad;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t i = t / npad, j = t % npad;
        d[t] = i == j ? (E)0 : inf;
        if (nx) nx[t] = GP_NONE;
    }
}

/* One warp per row: arcs u -> v (u != v) keep their smallest weight; next[u][v] = v. */
template <class E>
static __global__ void fw_arcs(E *d, uint32_t *nx, uint32_t npad, uint32_t n, const uint32_t *row,
                               const uint32_t *col, const uint32_t *warr, int zs) {
    uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    for (uint32_t u = warp; u < n; u += gridDim.x * blockDim.x / 32) {
        for (uint32_t e = row[u] + lane; e < row[u + 1]; e += 32) {
            uint32_t v = col[e];
            if (v == u) continue;
            size_t t = (size_t)u * npad + v;
            /* zs > 0: weights w * 2^zs + 1 (shortest, then fewest hops; see gp_cuda_apsp_ex) */
            const unsigned long long wl = ((unsigned long long)warr[e] << zs) + (zs ? 1 : 0);
            if (sizeof(E) == 2) {
                /* no 16-bit atomicMin: compare-and-swap the containing word */
                uint32_t *word = reinterpret_cast<uint32_t *>(d) + t / 2;
                int sh = (t & 1) ? 16 : 0;
                uint32_t old = *word, assumed;
                do {
                    assumed = old;
                    uint32_t cur = (assumed >> sh) & 0xffffu;
                    if (wl >= cur) break;
                    uint32_t nw = (assumed & ~(0xffffu << sh)) | ((uint32_t)wl << sh);
                    old = atomicCAS(word, assumed, nw);
                } while (old != assumed);
            } else if (sizeof(E) == 4) {
                atomicMin(reinterpret_cast<unsigned int *>(d) + t, (unsigned int)wl);
            } else {
                atomicMin(reinterpret_cast<unsigned long long *>(d) + t, wl);
            }
            if (nx) nx[t] = v;
        }
    }
}

template <class E>
static __global__ void fw_random(E *d, uint32_t *nx, uint32_t npad, uint32_t n, E inf,
                                 uint64_t thresh, uint32_t max_w, uint64_t seed) {
    size_t total = (size_t)npad * npad;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t i = t / npad, j = t % npad;
        uint32_t w = gp_fw_arc(i, j, npad, n, thresh, max_w, seed);
        bool arc = w != 0;
        d[t] = i == j ? (E)0 : arc ? (E)w : inf;
        if (nx) nx[t] = arc ? (uint32_t)j : GP_NONE;
    }
}

template <class E>
static __global__ void fw_out(const E *d, uint64_t *out, uint32_t npad, uint32_t n, uint32_t r0,
                              uint32_t rows, E inf, int zs) {
    size_t total = (size_t)rows * n;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t i = t / n, j = t % n;
        E e = d[(r0 + i) * (size_t)npad + j];
        out[t] = e >= inf ? GP_INF : (uint64_t)e >> zs;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Host side                                                                                  */

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            rc = gp_err_set(err, GP_EDEVICE, "apsp: %s: %s", #call, cudaGetErrorString(e_));       \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static int grid_for(size_t work) {
    size_t b = (work + 255) / 256;
    return (int)std::min<size_t>(std::max<size_t>(b, 1), 132 * 16);
}

const char *gp_fw_kind_name(int kind) {
    return kind == GP_FW_U16 ? "u16" : kind == GP_FW_U32 ? "u32" : kind == GP_FW_U64 ? "u64" : "?";
}

static uint64_t kind_inf(int kind, int next) {
    if (kind == GP_FW_U16) return INF16;
    if (kind == GP_FW_U32) return next ? INF32P : INF32;
    return INF64;
}

int gp_fw_auto_kind(uint64_t bound, int next) {
    if (!next && bound < INF16) return GP_FW_U16;
    if (bound < kind_inf(GP_FW_U32, next)) return GP_FW_U32;
    return GP_FW_U64;
}

static void plan_shape(uint32_t n, int kind, uint32_t *block, uint32_t *npad, size_t *esize) {
    *block = kind == GP_FW_U16 ? 256 : 128;
    *esize = kind == GP_FW_U16 ? 2 : kind == GP_FW_U32 ? 4 : 8;
    uint64_t np = ((uint64_t)std::max<uint32_t>(n, 1) + *block - 1) / *block * *block;
    *npad = (uint32_t)std::min<uint64_t>(np, 0xffffff00u);
}

uint64_t gp_fw_plan_bytes(uint32_t n, int kind, int next) {
    uint32_t B, np;
    size_t es;
    plan_shape(n, kind, &B, &np, &es);
    size_t ws = kind == GP_FW_U64 ? 8 : 4;
    uint64_t m = (uint64_t)np * np * es;
    if (next) m += (uint64_t)np * np * 4;
    m += (uint64_t)B * np * es + (uint64_t)B * np * ws;
    return m;
}

void gp_fw_plan_free(gp_fw_plan *p) {
    if (!p) return;
    if (p->d) cudaFreeAsync(p->d, p->stream);
    if (p->nx) cudaFreeAsync(p->nx, p->stream);
    if (p->rowp) cudaFreeAsync(p->rowp, p->stream);
    if (p->colp) cudaFreeAsync(p->colp, p->stream);
    p->d = p->nx = NULL;
    p->rowp = p->colp = NULL;
}

template <class KT, int SHIFT, bool NEXT> static cudaError_t set_minplus_attr() {
    size_t sm = FW_NST * FW_KC * (FW_BM + FW_BNW) * sizeof(typename KT::W);
    return cudaFuncSetAttribute(fw_minplus<KT, SHIFT, NEXT>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
}

/* Raises the dynamic shared-memory limits once per process (thread-safe static init). */
static cudaError_t fw_attrs(void) {
    static cudaError_t done = [] {
        cudaError_t e;
        if ((e = set_minplus_attr<K16, 0, false>()) != cudaSuccess) return e;
        if ((e = set_minplus_attr<K32, 0, false>()) != cudaSuccess) return e;
        if ((e = set_minplus_attr<K32, 7, true>()) != cudaSuccess) return e;
        if ((e = set_minplus_attr<K64, 7, false>()) != cudaSuccess) return e;
        if ((e = set_minplus_attr<K64, 7, true>()) != cudaSuccess) return e;
        if ((e = cudaFuncSetAttribute(fw_pivot<K32, true>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      128 * 128 * 4)) != cudaSuccess)
            return e;
        return cudaFuncSetAttribute(fw_pivot<K64, true>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, 128 * 128 * 4);
    }();
    return done;
}

int gp_fw_plan_init(gp_fw_plan *p, uint32_t n, uint64_t bound, int kind, int next,
                    cudaStream_t stream, gp_err *err) {
    int rc = GP_OK;
    memset(p, 0, sizeof *p);
    p->stream = stream;
    if (kind == 0) kind = gp_fw_auto_kind(bound, next);
    if (kind < GP_FW_U16 || kind > GP_FW_U64)
        return gp_err_set(err, GP_EINVAL, "apsp: unknown matrix kind %d", kind);
    if (kind == GP_FW_U16 && next)
        return gp_err_set(err, GP_EINVAL, "apsp: the 16-bit kind computes distances only");
    if (bound >= kind_inf(kind, next))
        return gp_err_set(
            err, GP_EINVAL, "apsp: path lengths up to %llu do not fit the %s kind%s (limit %llu)",
            (unsigned long long)bound, gp_fw_kind_name(kind), next ? " with next hops" : "",
            (unsigned long long)kind_inf(kind, next) - 1);
    p->kind = kind;
    p->next = next;
    p->n = n;
    p->inf = kind_inf(kind, next);
    plan_shape(n, kind, &p->block, &p->npad, &p->esize);
    {
        CK(fw_attrs());
        size_t fr = 0, tot = 0;
        CK(cudaMemGetInfo(&fr, &tot));
        uint64_t need = gp_fw_plan_bytes(n, kind, next);
        if (need > (uint64_t)(fr * 0.92)) {
            double per = (double)p->esize + (next ? 4.0 : 0.0);
            uint64_t nmax = (uint64_t)sqrt((double)fr * 0.9 / per);
            return gp_err_set(err, GP_ETOOBIG,
                              "apsp: n=%u needs %.2f GiB of GPU memory (%s%s), %.2f GiB free: "
                              "the largest n here is about %llu",
                              n, need / 1073741824.0, gp_fw_kind_name(kind),
                              next ? " + next hops" : "", fr / 1073741824.0,
                              (unsigned long long)nmax / p->block * p->block);
        }
        size_t ws = kind == GP_FW_U64 ? 8 : 4;
        size_t np = p->npad;
        CK(cudaMallocAsync(&p->d, np * np * p->esize, stream));
        if (next) CK(cudaMallocAsync((void **)&p->nx, np * np * 4, stream));
        CK(cudaMallocAsync(&p->rowp, (size_t)p->block * np * p->esize, stream));
        CK(cudaMallocAsync(&p->colp, (size_t)p->block * np * ws, stream));
    }
    return GP_OK;
out:
    gp_fw_plan_free(p);
    return rc;
}

template <class KT, int SHIFT, bool NEXT> static int solve_t(gp_fw_plan *p, gp_err *err) {
    typedef typename KT::W W;
    typedef typename KT::E E;
    int rc = GP_OK;
    const uint32_t B = p->block, np = p->npad, npw = np / KT::EPW;
    const uint32_t T = np / B;
    const size_t sm3 = FW_NST * FW_KC * (FW_BM + FW_BNW) * sizeof(W);
    MPArgs a;
    a.d = p->d;
    a.nx = p->nx;
    a.rowp = p->rowp;
    a.colp = p->colp;
    a.npad = np;
    a.npadw = npw;
    a.B = B;
    /* Lab profiling: events between the phases of every round (5 per round). */
    std::vector<cudaEvent_t> ev;
    auto mark = [&]() {
        if (!p->prof_ms) return;
        cudaEvent_t e;
        cudaEventCreate(&e);
        cudaEventRecord(e, p->stream);
        ev.push_back(e);
    };
    for (uint32_t kb = 0; kb < np; kb += B) {
        mark();
        fw_pivot<KT, NEXT><<<1, FW_P1_THREADS, NEXT ? (size_t)B * B * 4 : 0, p->stream>>>(
            (E *)p->d, p->nx, np, kb);
        CK(cudaGetLastError());
        mark();
        if (T == 1) break;
        a.kb = kb;
        for (int ph = 2; ph <= 3; ph++) {
            fw_rowpanel<KT, SHIFT><<<grid_for((size_t)B * npw), 256, 0, p->stream>>>(
                (const W *)p->d, (W *)p->rowp, npw, B, kb);
            fw_colpanel<KT, SHIFT><<<dim3(np / 32, B / 32), dim3(32, 8), 0, p->stream>>>(
                (const E *)p->d, (W *)p->colp, np, kb);
            CK(cudaGetLastError());
            if (ph == 3) mark();
            a.phase = ph;
            uint32_t blocks = ph == 2 ? (B / FW_BM) * (T - 1) + (np / FW_BM - B / FW_BM)
                                      : (np / FW_BM - B / FW_BM) * (T - 1);
            fw_minplus<KT, SHIFT, NEXT><<<blocks, FW_THREADS, sm3, p->stream>>>(a);
            CK(cudaGetLastError());
            mark();
        }
    }
out:
    if (p->prof_ms) {
        cudaStreamSynchronize(p->stream);
        for (size_t i = 0; i + 1 < ev.size(); i++) {
            float ms = 0;
            if ((i + 1) % 5 == 0) continue; /* from the end of one round to the next */
            cudaEventElapsedTime(&ms, ev[i], ev[i + 1]);
            p->prof_ms[i % 5] += ms; /* pivot, row/column tiles, panels, the rest */
        }
        for (cudaEvent_t e : ev) cudaEventDestroy(e);
    }
    return rc;
}

int gp_fw_solve(gp_fw_plan *p, gp_err *err) {
    if (p->kind == GP_FW_U16) return solve_t<K16, 0, false>(p, err);
    if (p->kind == GP_FW_U32)
        return p->next ? solve_t<K32, 7, true>(p, err) : solve_t<K32, 0, false>(p, err);
    return p->next ? solve_t<K64, 7, true>(p, err) : solve_t<K64, 7, false>(p, err);
}

int gp_fw_fill_random(gp_fw_plan *p, double density, uint32_t max_w, uint64_t seed, gp_err *err) {
    int rc = GP_OK;
    uint64_t thresh = gp_fw_thresh(density);
    size_t work = (size_t)p->npad * p->npad;
    if (max_w == 0) max_w = 1;
    if (p->kind == GP_FW_U16)
        fw_random<uint16_t><<<grid_for(work), 256, 0, p->stream>>>(
            (uint16_t *)p->d, p->nx, p->npad, p->n, (uint16_t)p->inf, thresh, max_w, seed);
    else if (p->kind == GP_FW_U32)
        fw_random<uint32_t><<<grid_for(work), 256, 0, p->stream>>>(
            (uint32_t *)p->d, p->nx, p->npad, p->n, (uint32_t)p->inf, thresh, max_w, seed);
    else
        fw_random<unsigned long long><<<grid_for(work), 256, 0, p->stream>>>(
            (unsigned long long *)p->d, p->nx, p->npad, p->n, p->inf, thresh, max_w, seed);
    CK(cudaGetLastError());
out:
    return rc;
}

/* Converts rows [r0, r0+rows) into uint64 (GP_INF for unreachable) in out (device). */
static cudaError_t launch_out(gp_fw_plan *p, uint64_t *out, uint32_t r0, uint32_t rows) {
    size_t work = (size_t)rows * p->n;
    if (p->kind == GP_FW_U16)
        fw_out<uint16_t><<<grid_for(work), 256, 0, p->stream>>>(
            (const uint16_t *)p->d, out, p->npad, p->n, r0, rows, (uint16_t)p->inf, p->zshift);
    else if (p->kind == GP_FW_U32)
        fw_out<uint32_t><<<grid_for(work), 256, 0, p->stream>>>(
            (const uint32_t *)p->d, out, p->npad, p->n, r0, rows, (uint32_t)p->inf, p->zshift);
    else
        fw_out<unsigned long long><<<grid_for(work), 256, 0, p->stream>>>(
            (const unsigned long long *)p->d, out, p->npad, p->n, r0, rows, p->inf, p->zshift);
    return cudaGetLastError();
}

int gp_fw_read_row(gp_fw_plan *p, uint32_t r, uint64_t *dist, uint32_t *next, gp_err *err) {
    int rc = GP_OK;
    uint64_t *dd = NULL;
    CK(cudaMallocAsync((void **)&dd, (size_t)p->n * 8, p->stream));
    CK(launch_out(p, dd, r, 1));
    CK(cudaMemcpyAsync(dist, dd, (size_t)p->n * 8, cudaMemcpyDeviceToHost, p->stream));
    if (next && p->nx)
        CK(cudaMemcpyAsync(next, p->nx + (size_t)r * p->npad, (size_t)p->n * 4,
                           cudaMemcpyDeviceToHost, p->stream));
    CK(cudaStreamSynchronize(p->stream));
out:
    if (dd) cudaFreeAsync(dd, p->stream);
    return rc;
}

extern "C" int gp_cuda_apsp_devices(void) {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return c;
}

extern "C" uint64_t gp_cuda_apsp_bound(const gp_graph *g, int next, int *zshift) {
    const uint32_t n = g->n;
    uint32_t maxw = 0;
    int zero = 0;
    for (uint32_t u = 0; u < n; u++) /* self-loops never lie on a shortest path */
        for (uint32_t e = g->row[u]; e < g->row[u + 1]; e++)
            if (g->col[e] != u) {
                if (g->w[e] > maxw) maxw = g->w[e];
                if (g->w[e] == 0) zero = 1;
            }
    /* Next hops with zero-weight arcs: equal-length alternatives through zero-weight cycles can
     * make next-hop walks loop (a -0-> b -0-> a). Weights w * 2^zs + 1 with 2^zs >= n order
     * paths by (length, hops): every arc is positive, so each next hop is strictly closer and
     * walks end; length = d >> zs exactly, since hop counts stay below 2^zs. */
    int zs = 0;
    if (next && zero)
        while ((1ull << zs) < n) zs++;
    uint64_t wl = ((uint64_t)maxw << zs) + (zs ? 1 : 0);
    uint64_t bound = 0;
    if (n > 1) bound = wl > UINT64_MAX / (n - 1) ? UINT64_MAX : (uint64_t)(n - 1) * wl;
    if (zshift) *zshift = zs;
    return bound;
}

extern "C" int gp_cuda_apsp_ex(void *stream, const gp_graph *g, uint64_t *dist, uint32_t *next,
                               const gp_cuda_apsp_opts *opts, gp_cuda_apsp_stats *stats,
                               gp_err *err) {
    int rc = GP_OK;
    double t0 = gp_now();
    cudaStream_t st = (cudaStream_t)stream;
    gp_fw_plan p;
    memset(&p, 0, sizeof p);
    p.stream = st;
    uint32_t *drow = NULL, *dcol = NULL, *dw = NULL;
    uint64_t *stage = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    if (!g || !dist) return gp_err_set(err, GP_EINVAL, "apsp: graph and dist are required");
    {
        const uint32_t n = g->n, m = g->m;
        int zs = 0;
        uint64_t bound = gp_cuda_apsp_bound(g, next != NULL, &zs);
        if (zs && bound >= INF64)
            return gp_err_set(err, GP_ETOOBIG,
                              "apsp: next hops on a graph with zero-weight arcs need "
                              "(n-1) * (max_w * 2^%d + 1) below 2^55 (n=%u, max_w=%u)",
                              zs, n, g->max_w);
        rc = gp_fw_plan_init(&p, n, bound, opts ? opts->kind : 0, next != NULL, st, err);
        if (rc != GP_OK) return rc;
        p.zshift = zs;
        const size_t np = p.npad;
        size_t work = np * np;
        if (p.kind == GP_FW_U16)
            fw_fill<uint16_t>
                <<<grid_for(work), 256, 0, st>>>((uint16_t *)p.d, p.nx, p.npad, (uint16_t)p.inf);
        else if (p.kind == GP_FW_U32)
            fw_fill<uint32_t>
                <<<grid_for(work), 256, 0, st>>>((uint32_t *)p.d, p.nx, p.npad, (uint32_t)p.inf);
        else
            fw_fill<unsigned long long>
                <<<grid_for(work), 256, 0, st>>>((unsigned long long *)p.d, p.nx, p.npad, p.inf);
        CK(cudaGetLastError());
        if (m > 0) {
            CK(cudaMallocAsync((void **)&drow, ((size_t)n + 1) * 4, st));
            CK(cudaMallocAsync((void **)&dcol, (size_t)m * 4, st));
            CK(cudaMallocAsync((void **)&dw, (size_t)m * 4, st));
            CK(cudaMemcpyAsync(drow, g->row, ((size_t)n + 1) * 4, cudaMemcpyHostToDevice, st));
            CK(cudaMemcpyAsync(dcol, g->col, (size_t)m * 4, cudaMemcpyHostToDevice, st));
            CK(cudaMemcpyAsync(dw, g->w, (size_t)m * 4, cudaMemcpyHostToDevice, st));
            int gb = (int)std::min<size_t>(((size_t)n * 32 + 255) / 256, 132 * 16);
            if (p.kind == GP_FW_U16)
                fw_arcs<uint16_t>
                    <<<gb, 256, 0, st>>>((uint16_t *)p.d, p.nx, p.npad, n, drow, dcol, dw, zs);
            else if (p.kind == GP_FW_U32)
                fw_arcs<uint32_t>
                    <<<gb, 256, 0, st>>>((uint32_t *)p.d, p.nx, p.npad, n, drow, dcol, dw, zs);
            else
                fw_arcs<unsigned long long><<<gb, 256, 0, st>>>((unsigned long long *)p.d, p.nx,
                                                                p.npad, n, drow, dcol, dw, zs);
            CK(cudaGetLastError());
        }
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0, st));
        rc = gp_fw_solve(&p, err);
        if (rc != GP_OK) goto out;
        CK(cudaEventRecord(e1, st));
        /* Output: rows in chunks of at most 64 MiB through a device staging buffer. */
        uint32_t rows = (uint32_t)std::max<uint64_t>(
            1, std::min<uint64_t>(n, (64ull << 20) / ((uint64_t)n * 8)));
        CK(cudaMallocAsync((void **)&stage, (size_t)rows * n * 8, st));
        for (uint32_t r0 = 0; r0 < n; r0 += rows) {
            uint32_t rr = std::min(rows, n - r0);
            CK(launch_out(&p, stage, r0, rr));
            CK(cudaMemcpyAsync(dist + (size_t)r0 * n, stage, (size_t)rr * n * 8,
                               cudaMemcpyDeviceToHost, st));
        }
        if (next)
            CK(cudaMemcpy2DAsync(next, (size_t)n * 4, p.nx, np * 4, (size_t)n * 4, n,
                                 cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        if (stats) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            stats->kind = p.kind;
            stats->npad = p.npad;
            stats->block = p.block;
            stats->solve_s = ms / 1e3;
        }
    }
out:
    if (stage) cudaFreeAsync(stage, st);
    if (drow) cudaFreeAsync(drow, st);
    if (dcol) cudaFreeAsync(dcol, st);
    if (dw) cudaFreeAsync(dw, st);
    gp_fw_plan_free(&p);
    if (rc == GP_OK) {
        cudaError_t e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) rc = gp_err_set(err, GP_EDEVICE, "apsp: %s", cudaGetErrorString(e));
    } else {
        cudaStreamSynchronize(st);
    }
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (stats) stats->total_s = gp_now() - t0;
    return rc;
}

extern "C" int gp_cuda_apsp(void *stream, const gp_graph *g, uint64_t *dist, uint32_t *next,
                            gp_err *err) {
    return gp_cuda_apsp_ex(stream, g, dist, next, NULL, NULL, err);
}
