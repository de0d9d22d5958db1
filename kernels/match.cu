/* match.cu - map matching's bounded searches on the GPU (contract in match.h): engine/match.c's
 * search_run without the path (via NULL), one thread per table row, in the same order of
 * operations. Built with -fmad=false (Makefile) so no multiply-add is fused: the doubles are the
 * host's bit for bit.
 */
#include "kernels/match.h"

#include <cuda_runtime.h>
#include <math_constants.h>

#define MT_NONE 0xFFFFFFFFu
#define MT_THREADS 128

struct mt_search {
    uint32_t *key, *touched, *hv;
    double *d, *m, *len, *hd;
    uint8_t *done;
    uint32_t used, nh;
};

/* The scratch: per array, nthreads slices side by side; keys first. */
__device__ static mt_search mt_slice(void *base, uint32_t nthreads, uint32_t t) {
    size_t S = GP_MATCH_DEV_SLOTS, H = GP_MATCH_DEV_HEAP, T = nthreads;
    char *p = (char *)base;
    mt_search s;
    s.key = (uint32_t *)p + t * S;
    p += T * S * 4;
    s.d = (double *)p + t * S;
    p += T * S * 8;
    s.m = (double *)p + t * S;
    p += T * S * 8;
    s.len = (double *)p + t * S;
    p += T * S * 8;
    s.hd = (double *)p + t * H;
    p += T * H * 8;
    s.hv = (uint32_t *)p + t * H;
    p += T * H * 4;
    s.touched = (uint32_t *)p + t * S;
    p += T * S * 4;
    s.done = (uint8_t *)p + t * S;
    s.used = s.nh = 0;
    return s;
}

extern "C" size_t gp_cuda_match_keys_bytes(uint32_t nthreads) {
    return (size_t)nthreads * GP_MATCH_DEV_SLOTS * 4;
}

extern "C" size_t gp_cuda_match_scratch_bytes(uint32_t nthreads) {
    return (size_t)nthreads *
           (GP_MATCH_DEV_SLOTS * (4 + 8 + 8 + 8 + 4 + 1) + GP_MATCH_DEV_HEAP * 12);
}

__device__ static uint32_t mt_slot_of(const mt_search &s, uint32_t v) {
    uint32_t i = (uint32_t)(((uint64_t)v * 2654435761u) >> 13) & (GP_MATCH_DEV_SLOTS - 1);
    while (s.key[i] != MT_NONE && s.key[i] != v) i = (i + 1) & (GP_MATCH_DEV_SLOTS - 1);
    return i;
}

/* The slot of v, created when absent; MT_NONE when the map would pass half full (the host's map
 * grows there). */
__device__ static uint32_t mt_slot_get(mt_search &s, uint32_t v) {
    if (2 * (s.used + 1) > GP_MATCH_DEV_SLOTS) return MT_NONE;
    uint32_t i = mt_slot_of(s, v);
    if (s.key[i] == MT_NONE) {
        s.key[i] = v;
        s.d[i] = CUDART_INF;
        s.m[i] = CUDART_INF;
        s.len[i] = -1;
        s.done[i] = 0;
        s.touched[s.used++] = i;
    }
    return i;
}

__device__ static int mt_push(mt_search &s, double d, uint32_t v) {
    if (s.nh == GP_MATCH_DEV_HEAP) return -1;
    uint32_t i = s.nh++;
    while (i > 0 && s.hd[(i - 1) / 2] > d) {
        s.hd[i] = s.hd[(i - 1) / 2];
        s.hv[i] = s.hv[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s.hd[i] = d;
    s.hv[i] = v;
    return 0;
}

__device__ static void mt_pop(mt_search &s, double *d, uint32_t *v) {
    *d = s.hd[0];
    *v = s.hv[0];
    uint32_t n = --s.nh;
    double ld = s.hd[n];
    uint32_t lv = s.hv[n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && s.hd[c + 1] < s.hd[c]) c++;
        if (s.hd[c] >= ld) break;
        s.hd[i] = s.hd[c];
        s.hv[i] = s.hv[c];
        i = c;
    }
    if (n) {
        s.hd[i] = ld;
        s.hv[i] = lv;
    }
}

__device__ static int mt_relax_slot(mt_search &s, uint32_t k, uint32_t v, double d, double m) {
    if (s.done[k] || d >= s.d[k]) return 0;
    s.d[k] = d;
    s.m[k] = m;
    return mt_push(s, d, v);
}

/* A candidate's directed states, as engine/match.c's states(). */
__device__ static uint32_t mt_states(const gp_match_dev_rows &r, uint32_t c, uint32_t a[2],
                                     double f[2]) {
    uint32_t k = 0;
    if (r.carc[c] == MT_NONE) return 0;
    a[k] = r.carc[c];
    f[k++] = r.cfrac[c];
    if (r.crarc[c] != MT_NONE) {
        a[k] = r.crarc[c];
        f[k++] = 1 - r.cfrac[c];
    }
    return k;
}

/* One row: 0, or -1 when the scratch is too small. */
__device__ static int mt_row(const gp_match_dev_graph &g, const gp_match_dev_rows &r, uint32_t q,
                             mt_search &s) {
    uint32_t sa[2], ta[2];
    double sf[2], tf[2];
    uint32_t ns = mt_states(r, r.src[q], sa, sf), k = r.k[q], t0 = r.tgt[q];
    double *best_w = r.tw_out + r.out[q], *out_m = r.tm_out + r.out[q];
    double wbound = r.wb[q], mbound = r.mb[q];
    for (uint32_t j = 0; j < k; j++) {
        best_w[j] = CUDART_INF;
        out_m[j] = CUDART_INF;
        uint32_t nt = mt_states(r, t0 + j, ta, tf);
        for (uint32_t x = 0; x < ns; x++)
            for (uint32_t y = 0; y < nt; y++)
                if (sa[x] == ta[y] && tf[y] >= sf[x]) {
                    double w = (tf[y] - sf[x]) * (double)g.w[sa[x]];
                    if (w < best_w[j]) {
                        best_w[j] = w;
                        out_m[j] = (tf[y] - sf[x]) * g.len[sa[x]];
                    }
                }
    }
    for (uint32_t x = 0; x < ns; x++) {
        uint32_t v = g.turns ? sa[x] : g.col[sa[x]];
        uint32_t kv = mt_slot_get(s, v);
        if (kv == MT_NONE ||
            mt_relax_slot(s, kv, v, (1 - sf[x]) * (double)g.w[sa[x]], (1 - sf[x]) * g.len[sa[x]]))
            return -1;
    }
    while (s.nh) {
        double itd;
        uint32_t itv;
        mt_pop(s, &itd, &itv);
        uint32_t ks = mt_slot_of(s, itv);
        if (s.done[ks] || itd > s.d[ks]) continue;
        s.done[ks] = 1;
        if (itd > wbound) break;
        double worst = 0;
        for (uint32_t j = 0; j < k; j++)
            if (best_w[j] > worst) worst = best_w[j];
        if (itd >= worst) break;
        double d = itd, m = s.m[ks];
        if (!g.turns) {
            for (uint32_t j = 0; j < k; j++) {
                uint32_t nt = mt_states(r, t0 + j, ta, tf);
                for (uint32_t y = 0; y < nt; y++) {
                    if (g.tail[ta[y]] != itv) continue;
                    double w = d + tf[y] * (double)g.w[ta[y]];
                    if (w < best_w[j]) {
                        best_w[j] = w;
                        out_m[j] = m + tf[y] * g.len[ta[y]];
                    }
                }
            }
            for (uint32_t e = g.row[itv]; e < g.row[itv + 1]; e++) {
                double nm = m + g.len[e];
                if (nm > mbound) continue;
                uint32_t v = g.col[e], kv = mt_slot_get(s, v);
                if (kv == MT_NONE || mt_relax_slot(s, kv, v, d + g.w[e], nm)) return -1;
            }
        } else {
            for (uint32_t e = g.trow[itv]; e < g.trow[itv + 1]; e++) {
                uint32_t b = g.tcol[e], ra = g.tarc[b];
                double turn = (double)g.tw[e] - (double)g.w[ra];
                if (turn < 0) turn = 0;
                for (uint32_t j = 0; j < k; j++) {
                    uint32_t nt = mt_states(r, t0 + j, ta, tf);
                    for (uint32_t y = 0; y < nt; y++) {
                        if (ta[y] != ra) continue;
                        double w = d + turn + tf[y] * (double)g.w[ra];
                        if (w < best_w[j]) {
                            best_w[j] = w;
                            out_m[j] = m + tf[y] * g.len[ra];
                        }
                    }
                }
                uint32_t kb = mt_slot_get(s, b);
                if (kb == MT_NONE) return -1;
                if (s.done[kb]) continue;
                if (s.len[kb] < 0) s.len[kb] = g.len[ra];
                double nm = m + s.len[kb];
                if (nm > mbound) continue;
                if (mt_relax_slot(s, kb, b, d + g.tw[e], nm)) return -1;
            }
        }
    }
    return 0;
}

__global__ static void mt_kernel(gp_match_dev_graph g, gp_match_dev_rows r, void *scratch,
                                 uint32_t nthreads) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads) return;
    mt_search s = mt_slice(scratch, nthreads, t);
    for (uint32_t q = t; q < r.count; q += nthreads) {
        r.overflow[q] = mt_row(g, r, q, s) ? 1 : 0;
        for (uint32_t i = 0; i < s.used; i++) s.key[s.touched[i]] = MT_NONE; /* search_reset */
        s.used = 0;
        s.nh = 0;
    }
}

extern "C" int gp_cuda_match_rows(const gp_match_dev_graph *g, const gp_match_dev_rows *r,
                                  void *scratch, uint32_t nthreads, void *stream) {
    if (!r->count) return 0;
    uint32_t blocks = (nthreads + MT_THREADS - 1) / MT_THREADS;
    mt_kernel<<<blocks, MT_THREADS, 0, (cudaStream_t)stream>>>(*g, *r, scratch, nthreads);
    return (int)cudaGetLastError();
}
