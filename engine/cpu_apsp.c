/* cpu_apsp.c - the CPU backend's all-pairs shortest paths: blocked Floyd-Warshall on threads (pivot
 * tile, then its row and column tiles, then the rest, per round) with an optional next-hop matrix;
 * tiles at the edge are clipped to n. With next hops, paths are ordered by (length, hops) so
 * zero-weight cycles cannot make next-hop walks loop. The row update has an AVX2 version chosen at
 * run time.
 */
#include "engine/cpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Blocked Floyd-Warshall. Distances are computed in place in the caller's buffer as int64 with a
 * large finite "infinity" (FW_INF) so that sums never overflow and the inner loops are branch-free
 * (and vectorise); FW_INF is turned into GP_INF at the end. Real path lengths are < 2^32 * n,
 * far below FW_INF. */

#define FW_INF ((int64_t)1 << 61)
#define FW_TILE 64

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FW_HAVE_AVX2_PATH 1
/* AVX2 version of fw_row (4 lanes of int64; next hops blended as 4 lanes of uint32). Selected at
 * run time when the CPU has AVX2; the portable loop below is the reference. */
__attribute__((target("avx2"))) static void fw_row_avx2(int64_t *restrict di, uint32_t *restrict ni,
                                                        const int64_t *restrict dk, int64_t dik,
                                                        uint32_t nik, uint32_t j0, uint32_t j1) {
    __m256i vik = _mm256_set1_epi64x(dik);
    uint32_t j = j0;
    if (ni) {
        const __m256i perm = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        __m128i vnik = _mm_set1_epi32((int)nik);
        for (; j + 4 <= j1; j += 4) {
            __m256i cur = _mm256_loadu_si256((const __m256i *)(di + j));
            __m256i v = _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(dk + j)), vik);
            __m256i lt = _mm256_cmpgt_epi64(cur, v);
            _mm256_storeu_si256((__m256i *)(di + j), _mm256_blendv_epi8(cur, v, lt));
            __m128i m32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(lt, perm));
            __m128i nold = _mm_loadu_si128((const __m128i *)(ni + j));
            _mm_storeu_si128((__m128i *)(ni + j), _mm_blendv_epi8(nold, vnik, m32));
        }
        for (; j < j1; j++) {
            int64_t v = dik + dk[j];
            if (v < di[j]) {
                di[j] = v;
                ni[j] = nik;
            }
        }
    } else {
        for (; j + 4 <= j1; j += 4) {
            __m256i cur = _mm256_loadu_si256((const __m256i *)(di + j));
            __m256i v = _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(dk + j)), vik);
            __m256i lt = _mm256_cmpgt_epi64(cur, v);
            _mm256_storeu_si256((__m256i *)(di + j), _mm256_blendv_epi8(cur, v, lt));
        }
        for (; j < j1; j++) {
            int64_t v = dik + dk[j];
            if (v < di[j]) di[j] = v;
        }
    }
}
#else
#define FW_HAVE_AVX2_PATH 0
#endif

/* One row segment: di[j] = min(di[j], dik + dk[j]) for j0 <= j < j1, carrying next hops. The
 * portable reference (and the path on CPUs without AVX2 or with the lab knob cpu_avx2 off,
 * engine/engine_lab.h). */
static inline void fw_row_plain(int64_t *restrict di, uint32_t *restrict ni,
                                const int64_t *restrict dk, int64_t dik, uint32_t nik, uint32_t j0,
                                uint32_t j1) {
    if (ni) {
        for (uint32_t j = j0; j < j1; j++) {
            int64_t v = dik + dk[j];
            int better = v < di[j];
            di[j] = better ? v : di[j];
            ni[j] = better ? nik : ni[j];
        }
    } else {
        for (uint32_t j = j0; j < j1; j++) {
            int64_t v = dik + dk[j];
            di[j] = v < di[j] ? v : di[j];
        }
    }
}

static int fw_avx2; /* set by gp_cpu_apsp_select */

void gp_cpu_apsp_select(int avx2) {
#if FW_HAVE_AVX2_PATH
    __builtin_cpu_init();
    fw_avx2 = __builtin_cpu_supports("avx2") && avx2;
#else
    (void)avx2;
#endif
}

static inline void fw_row(int64_t *restrict di, uint32_t *restrict ni, const int64_t *restrict dk,
                          int64_t dik, uint32_t nik, uint32_t j0, uint32_t j1) {
#if FW_HAVE_AVX2_PATH
    if (fw_avx2) {
        fw_row_avx2(di, ni, dk, dik, nik, j0, j1);
        return;
    }
#endif
    fw_row_plain(di, ni, dk, dik, nik, j0, j1);
}

/* Updates tile (i0..i1) x (j0..j1) through pivots k0..k1: d[i][j] = min(d[i][j], d[i][k]+d[k][j]).
 * Correct for any tile, including ones overlapping the pivot rows/columns, because k is the outer
 * loop. */
static void fw_tile(int64_t *restrict d, uint32_t *restrict nx, size_t n, uint32_t i0, uint32_t i1,
                    uint32_t j0, uint32_t j1, uint32_t k0, uint32_t k1) {
    for (uint32_t k = k0; k < k1; k++)
        for (uint32_t i = i0; i < i1; i++) {
            int64_t dik = d[(size_t)i * n + k];
            /* i == k: d[k][k] = 0 changes nothing (and rows must not alias under restrict) */
            if (dik >= FW_INF || i == k) continue;
            fw_row(d + (size_t)i * n, nx ? nx + (size_t)i * n : NULL, d + (size_t)k * n, dik,
                   nx ? nx[(size_t)i * n + k] : 0, j0, j1);
        }
}

/* The independent tiles of phase 3 (neither row nor column of the pivot): d[i][k] and d[k][j] are
 * final for the round, so the i-k-j order with the row held in cache is used. */
static void fw_tile_ind(int64_t *restrict d, uint32_t *restrict nx, size_t n, uint32_t i0,
                        uint32_t i1, uint32_t j0, uint32_t j1, uint32_t k0, uint32_t k1) {
    for (uint32_t i = i0; i < i1; i++)
        for (uint32_t k = k0; k < k1; k++) {
            int64_t dik = d[(size_t)i * n + k];
            if (dik >= FW_INF) continue;
            fw_row(d + (size_t)i * n, nx ? nx + (size_t)i * n : NULL, d + (size_t)k * n, dik,
                   nx ? nx[(size_t)i * n + k] : 0, j0, j1);
        }
}

static inline uint32_t tile_end(const gp_cpu_job *j, uint32_t t) {
    uint32_t e = (t + 1) * j->tile;
    return e < j->n ? e : j->n;
}

static void *apsp_worker(void *arg) {
    gp_cpu_worker *wk = arg;
    gp_cpu_job *j = wk->j;
    size_t n = j->n;
    uint32_t T = j->ntiles, B = j->tile;
    if (wk->id != 0) {
        pthread_mutex_lock(&j->gate_lock);
        while (j->gate_open == 0) pthread_cond_wait(&j->gate_cond, &j->gate_lock);
        int open = j->gate_open;
        pthread_mutex_unlock(&j->gate_lock);
        if (open < 0) return NULL;
    }
    for (uint32_t kt = 0; kt < T; kt++) {
        uint32_t k0 = kt * B, k1 = tile_end(j, kt);
        /* phase 1: pivot tile. Worker 0 alone decides whether the deadline has passed, before
         * the barrier, and every thread reads that after it, so all leave at the same round. */
        if (wk->id == 0) {
            if (gp_deadline_passed(j->deadline)) atomic_store(&j->stop, 1);
            else fw_tile(j->d, j->nx, n, k0, k1, k0, k1, k0, k1);
        }
        pthread_barrier_wait(&j->barrier);
        if (atomic_load(&j->stop)) break;
        /* phase 2: pivot row and column tiles (2*(T-1) of them), handed out dynamically so a
         * descheduled thread does not hold the others at the next barrier */
        for (uint32_t x; (x = atomic_fetch_add(&j->ctr[2 * kt], 1)) < 2 * (T - 1);) {
            uint32_t t = x / 2;
            if (t >= kt) t++;
            uint32_t a0 = t * B, a1 = tile_end(j, t);
            if (x % 2 == 0) fw_tile(j->d, j->nx, n, k0, k1, a0, a1, k0, k1); /* row tile (kt, t) */
            else fw_tile(j->d, j->nx, n, a0, a1, k0, k1, k0, k1); /* column tile (t, kt) */
        }
        pthread_barrier_wait(&j->barrier);
        /* phase 3: the rest, a row of tiles at a time, handed out dynamically too */
        for (uint32_t it; (it = atomic_fetch_add(&j->ctr[2 * kt + 1], 1)) < T;) {
            if (it != kt) {
                uint32_t i0 = it * B, i1 = tile_end(j, it);
                for (uint32_t jt = 0; jt < T; jt++) {
                    if (jt == kt) continue;
                    fw_tile_ind(j->d, j->nx, n, i0, i1, jt * B, tile_end(j, jt), k0, k1);
                }
            }
            gp_progress_add(j->prog, 1);
        }
        pthread_barrier_wait(&j->barrier);
    }
    return NULL;
}

int gp_cpu_apsp(gp_backend *b, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err) {
    gp_cpu_impl *c = gp_cpu_impl_of(b);
    size_t n = g->n;
    int64_t *d = (int64_t *)dist;
    /* With next hops and zero-weight arcs, equal-length alternatives can make the next-hop walk
     * cycle (a -0-> b -0-> a). Ordering paths by (length, hops) instead, encoded as
     * (length << shift) + hops, makes every next hop strictly closer in hops, so walks end; the
     * length part is still the exact shortest distance. Used whenever next hops are asked for and
     * the encoding fits below FW_INF. */
    int shift = 0;
    if (next) {
        while (((size_t)1 << shift) <= n) shift++;
        double top = ((double)g->max_w * (double)n + 1.0) * (double)((uint64_t)1 << shift);
        if (!(top < (double)(FW_INF / 2))) {
            int zero = 0;
            for (uint32_t a = 0; a < g->m && !zero; a++) zero = g->w[a] == 0;
            if (zero)
                return gp_err_set(err, GP_ETOOBIG,
                                  "next hops on a graph with zero-weight arcs need max weight x "
                                  "nodes^2 below 2^60 (max weight %u, %zu nodes)",
                                  g->max_w, n);
            shift = -1; /* no zero arcs: every next hop is strictly closer; plain lengths */
        }
    } else {
        shift = -1;
    }
    /* initialise: 0 on the diagonal, the lightest parallel arc, FW_INF elsewhere */
    for (size_t i = 0; i < n; i++) {
        int64_t *di = d + i * n;
        for (size_t jx = 0; jx < n; jx++) di[jx] = FW_INF;
        di[i] = 0;
        if (next)
            for (size_t jx = 0; jx < n; jx++) next[i * n + jx] = GP_NONE;
        for (uint32_t a = g->row[i]; a < g->row[i + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == i) continue; /* self-loop: never shorter than staying */
            int64_t w = shift >= 0 ? ((int64_t)g->w[a] << shift) + 1 : (int64_t)g->w[a];
            if (w < di[v]) {
                di[v] = w;
                if (next) next[i * n + v] = v;
            }
        }
    }
    gp_cpu_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.g = g;
    j.d = d;
    j.nx = next;
    j.n = g->n;
    j.tile = FW_TILE;
    j.ntiles = (uint32_t)((n + FW_TILE - 1) / FW_TILE);
    j.ctr = malloc((size_t)2 * j.ntiles * sizeof *j.ctr);
    if (!j.ctr) return gp_err_set(err, GP_ENOMEM, "out of memory for APSP work counters");
    for (uint32_t x = 0; x < 2 * j.ntiles; x++) atomic_init(&j.ctr[x], 0);
    atomic_init(&j.stop, 0);
    j.deadline = gp_deadline_get();
    j.prog = gp_progress_get();
    gp_progress_begin(j.prog, (uint64_t)j.ntiles * j.ntiles); /* T rounds of T tile rows */
    atomic_init(&j.rc, GP_OK);
    pthread_mutex_init(&j.err_lock, NULL);
    /* threads beyond the tiles of a row have no phase-3 work */
    int nth = c->threads;
    if (nth > (int)j.ntiles) nth = (int)j.ntiles;
    if (nth > 256) nth = 256;
    if (nth < 1) nth = 1;
    /* Workers wait at a gate until the barrier exists, so the barrier can count exactly the
     * threads that were started even if some creation fails. */
    pthread_t th[256];
    gp_cpu_worker wk[256];
    pthread_mutex_init(&j.gate_lock, NULL);
    pthread_cond_init(&j.gate_cond, NULL);
    j.gate_open = 0;
    int started = 1;
    for (int i = 0; i < nth; i++) {
        wk[i].j = &j;
        wk[i].id = i;
    }
    for (int i = 1; i < nth; i++) {
        if (pthread_create(&th[i], NULL, apsp_worker, &wk[i]) != 0) break;
        started++;
    }
    j.nthreads = started;
    int brc = pthread_barrier_init(&j.barrier, NULL, (unsigned)started);
    pthread_mutex_lock(&j.gate_lock);
    j.gate_open = brc == 0 ? 1 : -1;
    pthread_cond_broadcast(&j.gate_cond);
    pthread_mutex_unlock(&j.gate_lock);
    if (brc == 0) apsp_worker(&wk[0]);
    for (int i = 1; i < started; i++) pthread_join(th[i], NULL);
    if (brc == 0) pthread_barrier_destroy(&j.barrier);
    pthread_cond_destroy(&j.gate_cond);
    pthread_mutex_destroy(&j.gate_lock);
    pthread_mutex_destroy(&j.err_lock);
    free(j.ctr);
    if (brc != 0) return gp_err_set(err, GP_ENOMEM, "cannot create a thread barrier");
    if (atomic_load(&j.stop)) return gp_deadline_error(err);
    size_t nn = n * n;
    if (shift >= 0) {
        for (size_t x = 0; x < nn; x++)
            dist[x] = d[x] >= FW_INF ? GP_INF : (uint64_t)(d[x] >> shift);
    } else {
        for (size_t x = 0; x < nn; x++)
            if (d[x] >= FW_INF) dist[x] = GP_INF;
    }
    return GP_OK;
}
