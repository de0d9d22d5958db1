/* ecmp.c - routing tables with ECMP next-hop sets from all-pairs distances, incremental updates
 * after cost changes, and table diffs for what-if questions (contract in ecmp.h).
 *
 * Extraction: for router i, each distinct neighbour k (index idx in i's list) is a next hop towards
 * j iff w(i,k) + d(k,j) == d(i,j); the test runs over whole rows (d(i,.) against d(k,.)), so it is
 * a streaming, branch-free pass over 1 + deg(i) rows per router, spread over a thread pool.
 *
 * Incremental update (old tables T of G, new graph G'): per (u,v) the cheapest weight old/new.
 *  - decreases (and additions) first, one arc at a time on the exact old matrix:
 *    d(i,j) = min(d(i,j), d(i,u)+w'+d(v,j)), restricted to rows with d(i,u)+w' < d(i,v) and columns
 *    with w'+d(v,j) < d(u,j) (both necessary for an improvement, by the triangle inequality of an
 *    exact matrix); row v and column u cannot change, so the update is in place, and each step
 *    leaves the matrix exact for the graph with the decreases so far.
 *  - increases (and removals) then: source i is affected iff an increased arc lay on one of its
 *    shortest paths, i.e. d(i,u) + w_old(u,v) == d(i,v) (then it lies on a shortest path to v
 *    itself, so the O(n)-per-arc test is exact). Unaffected rows keep their distances (their
 *    shortest-path trees survive); affected rows are recomputed by one many-to-all table call on
 *    G' (the engine: GPU or CPU SSSP).
 *  - next-hop sets are re-extracted only for routers whose adjacency, own row or a neighbour's row
 *    changed; the others are copied.
 * AUTO takes the full recompute when half or more of the sources are affected.
 */
#include "engine/ecmp.h"
#include "engine/progress.h"
#include "graph/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- one router at a time over the threads (graph/parallel.h), with progress ---- */

typedef struct rows_ctx {
    void (*fn)(void *ctx, uint32_t i);
    void *ctx;
    gp_progress *prog; /* a unit per router, counted a chunk at a time; NULL: none */
} rows_ctx;

static void rows_range(void *arg, uint64_t begin, uint64_t end) {
    rows_ctx *r = arg;
    for (uint64_t i = begin; i < end; i++) r->fn(r->ctx, (uint32_t)i);
    gp_progress_add(r->prog, end - begin);
}

/* fn(ctx, i) for every router i < n on `threads` threads; chunks of at most 64 routers while
 * progress is reported, so that it moves smoothly. */
static void par_for(uint32_t n, int threads, void (*fn)(void *, uint32_t), void *ctx,
                    gp_progress *prog) {
    rows_ctx r = {fn, ctx, prog};
    gp_progress_begin(prog, n);
    gp_parallel_for_dynamic(n, threads, prog ? 64 : 0, rows_range, &r);
}

/* ---- layout ---- */

/* Bytes of one next-hop entry of a router with deg neighbours: the smallest of 1, 2, 4, 8 bytes
 * that holds deg bits, else whole 64-bit words; 0 for a router without neighbours. Narrow entries
 * keep the masks (and the memory traffic of extraction) small for typical router degrees. */
static inline uint32_t ent_bytes(uint32_t deg) {
    return deg == 0 ? 0 : deg <= 8 ? 1 : deg <= 16 ? 2 : deg <= 32 ? 4 : 8 * ((deg + 63) / 64);
}
static inline uint32_t ebytes_of(const gp_rt *t, uint32_t i) {
    return ent_bytes(t->nb_off[i + 1] - t->nb_off[i]);
}

/* Large buffers come from mmap with transparent huge pages requested: the matrices are written
 * once right after allocation, and 4 KiB page faults would otherwise cost as much as the work. */
#define BIG_ALLOC (1u << 21)
static void *big_alloc(size_t bytes) {
    if (bytes < BIG_ALLOC) return malloc(bytes ? bytes : 1);
    size_t len = (bytes + BIG_ALLOC - 1) & ~(size_t)(BIG_ALLOC - 1);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}
static void big_free(void *p, size_t bytes) {
    if (!p) return;
    if (bytes < BIG_ALLOC) free(p);
    else munmap(p, (bytes + BIG_ALLOC - 1) & ~(size_t)(BIG_ALLOC - 1));
}

static uint64_t mask_bytes_of(const gp_rt *t) { return t->mask_off[t->n]; }

/* Allocates t for g with adjacency and mask layout (dist and mask unset). */
static int rt_alloc(gp_graph *g, uint32_t ecmp_max, uint64_t max_bytes, gp_rt **out, gp_err *err) {
    uint32_t n = g->n;
    gp_rt *t = calloc(1, sizeof *t);
    if (!t) return gp_err_set(err, GP_ENOMEM, "out of memory");
    t->n = n;
    t->ecmp_max = ecmp_max ? ecmp_max : GP_ECMP_MAX_DEFAULT;
    t->nb_off = malloc(((size_t)n + 1) * sizeof *t->nb_off);
    t->nb = malloc(((size_t)g->m + 1) * sizeof *t->nb);
    t->nbw = malloc(((size_t)g->m + 1) * sizeof *t->nbw);
    t->mask_off = calloc((size_t)n + 1, sizeof *t->mask_off);
    if (!t->nb_off || !t->nb || !t->nbw || !t->mask_off) goto oom;
    uint32_t k = 0;
    t->nb_off[0] = 0;
    t->mask_off[0] = 0;
    for (uint32_t u = 0; u < n; u++) {
        /* arcs are sorted by (head, weight) within a row: the first of each head is the cheapest */
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == u) continue;
            if (k > t->nb_off[u] && t->nb[k - 1] == v) {
                if (g->w[a] < t->nbw[k - 1]) t->nbw[k - 1] = g->w[a];
                continue;
            }
            t->nb[k] = v;
            t->nbw[k] = g->w[a];
            k++;
        }
        t->nb_off[u + 1] = k;
        /* each router's block starts 8-byte aligned */
        uint64_t blk = ((uint64_t)n * ent_bytes(k - t->nb_off[u]) + 7) & ~(uint64_t)7;
        t->mask_off[u + 1] = t->mask_off[u] + blk;
    }
    uint64_t bytes = (uint64_t)n * n * 8 + mask_bytes_of(t);
    if (max_bytes && bytes > max_bytes) {
        gp_rt_free(t);
        return gp_err_set(err, GP_ETOOBIG,
                          "routing tables for %u routers need %llu MiB, over the limit of %llu MiB",
                          n, (unsigned long long)(bytes >> 20),
                          (unsigned long long)(max_bytes >> 20));
    }
    t->dist = big_alloc((size_t)n * n * sizeof *t->dist);
    if (!t->dist) goto oom;
    t->mask = big_alloc((size_t)mask_bytes_of(t));
    if (!t->mask) goto oom;
    t->g = gp_graph_ref(g);
    t->refs = 1;
    *out = t;
    return GP_OK;
oom:
    gp_rt_free(t);
    return gp_err_set(err, GP_ENOMEM, "out of memory for the routing tables of %u routers", n);
}

uint64_t gp_rt_bytes(const gp_graph *g) {
    uint64_t b = 0;
    for (uint32_t u = 0; u < g->n; u++)
        b += ((uint64_t)g->n * ent_bytes(g->row[u + 1] - g->row[u]) + 7) & ~(uint64_t)7;
    return (uint64_t)g->n * g->n * 8 + b; /* an upper bound: arcs >= distinct neighbours */
}

gp_rt *gp_rt_ref(gp_rt *t) {
    if (t) __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
    return t;
}

void gp_rt_free(gp_rt *t) {
    if (!t) return;
    /* refs == 0 only for tables still under construction here (rt_alloc failure paths) */
    if (t->refs > 0 && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    gp_graph_unref(t->g);
    big_free(t->dist, (size_t)t->n * t->n * sizeof *t->dist);
    if (t->mask_off) big_free(t->mask, (size_t)mask_bytes_of(t));
    free(t->nb_off);
    free(t->nb);
    free(t->nbw);
    free(t->mask_off);
    free(t);
}

/* ---- extraction ---- */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
#define EX_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define EX_CLONES
#endif

/* Narrow entries (deg <= 8 * sizeof(T)): M[j] |= bit for every j where neighbour idx is a next
 * hop, a branch-free pass over two rows that the compiler vectorises. */
#define NARROW_PASS(T, NAME)                                                                       \
    EX_CLONES static void NAME(T *restrict M, const uint64_t *restrict Di,                         \
                               const uint64_t *restrict Dk, uint64_t w, T bit, uint32_t n) {       \
        for (uint32_t j = 0; j < n; j++) {                                                         \
            T on = (T)((Dk[j] + w == Di[j]) & (Dk[j] != GP_INF));                                  \
            M[j] |= (T)((T)0 - on) & bit;                                                          \
        }                                                                                          \
    }
NARROW_PASS(uint8_t, pass8)
NARROW_PASS(uint16_t, pass16)
NARROW_PASS(uint32_t, pass32)
NARROW_PASS(uint64_t, pass64)

/* Wide entries (W words each): word idx/64 of every entry. */
EX_CLONES static void pass_wide(uint64_t *restrict M, const uint64_t *restrict Di,
                                const uint64_t *restrict Dk, uint64_t w, uint64_t bit, uint32_t n,
                                uint32_t W) {
    for (uint32_t j = 0; j < n; j++)
        M[(uint64_t)j * W] |= (uint64_t) - (uint64_t)((Dk[j] + w == Di[j]) & (Dk[j] != GP_INF)) &
                              bit;
}

/* Entry (i, j) as up to nw 64-bit words (narrow entries: one word). */
static inline uint32_t load_entry(const gp_rt *t, uint32_t i, uint32_t j, uint64_t *w,
                                  uint32_t eb) {
    const uint8_t *p = t->mask + t->mask_off[i] + (uint64_t)j * eb;
    switch (eb) {
    case 0: return 0;
    case 1: w[0] = *p; return 1;
    case 2: w[0] = *(const uint16_t *)p; return 1;
    case 4: w[0] = *(const uint32_t *)p; return 1;
    default: memcpy(w, p, eb); return eb / 8;
    }
}
static inline void store_entry(gp_rt *t, uint32_t i, uint32_t j, const uint64_t *w, uint32_t eb) {
    uint8_t *p = t->mask + t->mask_off[i] + (uint64_t)j * eb;
    switch (eb) {
    case 0: break;
    case 1: *p = (uint8_t)w[0]; break;
    case 2: *(uint16_t *)p = (uint16_t)w[0]; break;
    case 4: *(uint32_t *)p = (uint32_t)w[0]; break;
    default: memcpy(p, w, eb);
    }
}

static void extract_router(void *ctx, uint32_t i) {
    gp_rt *t = ctx;
    const uint32_t n = t->n, b = t->nb_off[i], deg = t->nb_off[i + 1] - b, eb = ent_bytes(deg);
    uint8_t *M = t->mask + t->mask_off[i];
    const uint64_t *Di = t->dist + (uint64_t)i * n;
    if (!deg) return;
    memset(M, 0, (size_t)n * eb);
    for (uint32_t idx = 0; idx < deg; idx++) {
        const uint64_t *Dk = t->dist + (uint64_t)t->nb[b + idx] * n;
        const uint64_t w = t->nbw[b + idx];
        switch (eb) {
        case 1: pass8(M, Di, Dk, w, (uint8_t)(1u << idx), n); break;
        case 2: pass16((uint16_t *)M, Di, Dk, w, (uint16_t)(1u << idx), n); break;
        case 4: pass32((uint32_t *)M, Di, Dk, w, 1u << idx, n); break;
        case 8: pass64((uint64_t *)M, Di, Dk, w, 1ULL << idx, n); break;
        default: pass_wide((uint64_t *)M + idx / 64, Di, Dk, w, 1ULL << (idx & 63), n, eb / 8);
        }
    }
    memset(M + (uint64_t)i * eb, 0, eb); /* no next hop towards oneself */
    if (deg > t->ecmp_max) {             /* cap: keep the lowest-indexed ecmp_max next hops */
        uint64_t stack[64], *m = eb > sizeof stack ? malloc(eb) : stack;
        if (!m) { /* cannot happen for the widths met in practice; leave the sets uncapped */
            GP_LOG(GP_LOG_WARN, "event=ecmp_cap_skipped router=%u reason=out_of_memory", i);
            return;
        }
        for (uint32_t j = 0; j < n; j++) {
            uint32_t nw = load_entry(t, i, j, m, eb), seen = 0;
            for (uint32_t k = 0; k < nw; k++) {
                if (seen >= t->ecmp_max) {
                    m[k] = 0;
                    continue;
                }
                uint32_t c = (uint32_t)__builtin_popcountll(m[k]);
                if (seen + c > t->ecmp_max) {
                    uint64_t x = m[k], keep = 0;
                    while (seen < t->ecmp_max) {
                        uint64_t low = x & (~x + 1); /* lowest set bit; x != 0 here */
                        keep |= low;
                        x ^= low;
                        seen++;
                    }
                    m[k] = keep;
                } else {
                    seen += c;
                }
            }
            store_entry(t, i, j, m, eb);
        }
        if (m != stack) free(m);
    }
}

uint32_t gp_rt_next_hops(const gp_rt *t, uint32_t i, uint32_t j, uint32_t *out) {
    const uint32_t b = t->nb_off[i], eb = ebytes_of(t, i);
    uint64_t one;
    const uint64_t *m = &one;
    uint32_t nw;
    if (eb <= 8) {
        nw = load_entry(t, i, j, &one, eb);
    } else {
        m = (const uint64_t *)(t->mask + t->mask_off[i] + (uint64_t)j * eb);
        nw = eb / 8;
    }
    uint32_t c = 0;
    for (uint32_t k = 0; k < nw; k++)
        for (uint64_t x = m[k]; x; x &= x - 1)
            out[c++] = t->nb[b + k * 64 + (uint32_t)__builtin_ctzll(x)];
    return c;
}

/* Threads worth starting for extraction: one per ~256K row-element tests (a thread costs tens of
 * microseconds to start; the vectorised tests take well under a nanosecond each, so a thread gets
 * at least ~0.1 ms of work). */
static int extract_threads(const gp_rt *t, int threads) {
    uint64_t work = (uint64_t)t->n * (t->nb_off[t->n] + t->n);
    uint64_t useful = 1 + work / (256u << 10);
    if (threads <= 0) threads = gp_cpu_count();
    return useful < (uint64_t)threads ? (int)useful : threads;
}

/* All-pairs distances of g into dist. On the GPU: the engine's APSP (blocked Floyd-Warshall).
 * On the CPU a sparse router graph is much cheaper as n Dijkstras (O(n m log n) against FW's n^3),
 * run as one all-sources table call on the CPU backend's threads; dense graphs keep FW. */
static int rt_distances(gp_engine *e, const gp_graph *g, uint64_t *dist, gp_err *err) {
    const uint64_t n = g->n;
    if (strcmp(gp_engine_backend(e), "cpu") != 0 || (uint64_t)g->m * 16 >= n * n)
        return gp_engine_apsp(e, g, dist, NULL, err);
    uint32_t *all = malloc((size_t)n * sizeof *all);
    if (!all) return gp_err_set(err, GP_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) all[i] = i;
    int rc = gp_engine_table(e, g, all, (uint32_t)n, all, (uint32_t)n, dist, err);
    free(all);
    return rc;
}

int gp_rt_build(gp_engine *e, gp_graph *g, uint32_t ecmp_max, int threads, uint64_t max_bytes,
                gp_rt **out, gp_err *err) {
    gp_rt *t = NULL;
    int rc = rt_alloc(g, ecmp_max, max_bytes, &t, err);
    if (rc != GP_OK) return rc;
    /* the caller's progress: distances the first half, next-hop extraction the second */
    gp_progress *prog = gp_progress_get();
    gp_progress_span(prog, 0, 0.5);
    double t0 = gp_now();
    rc = rt_distances(e, g, t->dist, err);
    if (rc != GP_OK) {
        gp_rt_free(t);
        return rc;
    }
    snprintf(t->backend, sizeof t->backend, "%s", gp_engine_backend(e));
    double t1 = gp_now();
    gp_progress_span(prog, 0.5, 1.0);
    par_for(t->n, extract_threads(t, threads), extract_router, t, prog);
    t->apsp_s = t1 - t0;
    t->ecmp_s = gp_now() - t1;
    *out = t;
    return GP_OK;
}

int gp_rt_from_dist(gp_graph *g, const uint64_t *dist, uint32_t ecmp_max, int threads, gp_rt **out,
                    gp_err *err) {
    gp_rt *t = NULL;
    int rc = rt_alloc(g, ecmp_max, 0, &t, err);
    if (rc != GP_OK) return rc;
    memcpy(t->dist, dist, (size_t)t->n * t->n * sizeof *t->dist);
    snprintf(t->backend, sizeof t->backend, "cache");
    double t1 = gp_now();
    par_for(t->n, extract_threads(t, threads), extract_router, t, NULL);
    t->ecmp_s = gp_now() - t1;
    *out = t;
    return GP_OK;
}

/* ---- incremental update ---- */

typedef struct arc_delta {
    uint32_t u, v;
    uint64_t w; /* increases: the old weight; decreases: the new one */
} arc_delta;

typedef struct upd_ctx {
    const gp_rt *old;
    gp_rt *t;
    const unsigned char *reextract;
} upd_ctx;

static void copy_or_extract(void *ctx, uint32_t i) {
    upd_ctx *c = ctx;
    if (c->reextract[i]) {
        extract_router(c->t, i);
        return;
    }
    uint64_t bytes = c->t->mask_off[i + 1] - c->t->mask_off[i];
    memcpy(c->t->mask + c->t->mask_off[i], c->old->mask + c->old->mask_off[i], bytes);
}

static int push_delta(arc_delta **a, size_t *n, size_t *cap, arc_delta d) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        arc_delta *x = realloc(*a, c * sizeof *x);
        if (!x) return -1;
        *a = x;
        *cap = c;
    }
    (*a)[(*n)++] = d;
    return 0;
}

int gp_rt_update(gp_engine *e, const gp_rt *old, gp_graph *g2, int strategy, int threads,
                 gp_rt **out, gp_rt_update_stats *st, gp_err *err) {
    const uint32_t n = old->n;
    gp_rt_update_stats s = {0};
    gp_rt *t = NULL;
    arc_delta *inc = NULL, *dec = NULL;
    size_t ninc = 0, ndec = 0, cinc = 0, cdec = 0;
    unsigned char *adj_changed = NULL, *affected = NULL, *row_changed = NULL, *reext = NULL;
    uint32_t *src = NULL, *all = NULL, *rows_i = NULL, *cols_j = NULL;
    uint64_t *tmp = NULL;
    int rc;
    double t0 = gp_now();

    if (g2->n != n || memcmp(g2->ext, old->g->ext, (size_t)n * sizeof *g2->ext) != 0)
        return gp_err_set(err, GP_EINVAL, "the new graph has other routers than the old one");
    if ((rc = rt_alloc(g2, old->ecmp_max, 0, &t, err)) != GP_OK) return rc;
    adj_changed = calloc(n, 1);
    affected = calloc(n, 1);
    row_changed = calloc(n, 1);
    reext = calloc(n, 1);
    if (!adj_changed || !affected || !row_changed || !reext) goto oom;

    /* per (u,v): cheapest weight before / after */
    for (uint32_t u = 0; u < n; u++) {
        uint32_t a = old->nb_off[u], ae = old->nb_off[u + 1], b = t->nb_off[u],
                 be = t->nb_off[u + 1];
        if (ae - a != be - b || memcmp(old->nb + a, t->nb + b, (ae - a) * sizeof *t->nb) ||
            memcmp(old->nbw + a, t->nbw + b, (ae - a) * sizeof *t->nbw))
            adj_changed[u] = 1;
        else continue;
        while (a < ae || b < be) {
            if (b >= be || (a < ae && old->nb[a] < t->nb[b])) { /* removed */
                if (push_delta(&inc, &ninc, &cinc, (arc_delta){u, old->nb[a], old->nbw[a]}))
                    goto oom;
                a++;
            } else if (a >= ae || t->nb[b] < old->nb[a]) { /* added */
                if (push_delta(&dec, &ndec, &cdec, (arc_delta){u, t->nb[b], t->nbw[b]})) goto oom;
                b++;
            } else {
                if (t->nbw[b] > old->nbw[a]) {
                    if (push_delta(&inc, &ninc, &cinc, (arc_delta){u, old->nb[a], old->nbw[a]}))
                        goto oom;
                } else if (t->nbw[b] < old->nbw[a]) {
                    if (push_delta(&dec, &ndec, &cdec, (arc_delta){u, t->nb[b], t->nbw[b]}))
                        goto oom;
                }
                a++, b++;
            }
        }
    }
    s.arcs_increased = (uint32_t)ninc;
    s.arcs_decreased = (uint32_t)ndec;

    /* Decreases first, on the exact old matrix, so every step starts exact (the filters below
     * rely on the triangle inequality); then increases against the result (see the file head). */
    const uint64_t *D = old->dist;
    uint64_t *D2 = t->dist;
    uint32_t naff = 0;
    if (strategy != GP_RT_FULL) {
        memcpy(D2, D, (size_t)n * n * sizeof *D2);
        if (ndec) {
            rows_i = malloc((size_t)n * sizeof *rows_i);
            cols_j = malloc((size_t)n * sizeof *cols_j);
            if (!rows_i || !cols_j) goto oom;
        }
        for (size_t k = 0; k < ndec; k++) {
            const uint32_t u = dec[k].u, v = dec[k].v;
            const uint64_t w = dec[k].w;
            uint32_t ni = 0, nj = 0;
            const uint64_t *Du = D2 + (uint64_t)u * n, *Dv = D2 + (uint64_t)v * n;
            for (uint32_t j = 0; j < n; j++)
                if (Dv[j] != GP_INF && w + Dv[j] < Du[j]) cols_j[nj++] = j;
            if (!nj) continue;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t diu = D2[(uint64_t)i * n + u];
                if (diu != GP_INF && diu + w < D2[(uint64_t)i * n + v]) rows_i[ni++] = i;
            }
            for (uint32_t a = 0; a < ni; a++) {
                uint64_t *Di = D2 + (uint64_t)rows_i[a] * n;
                const uint64_t base = Di[u] + w;
                for (uint32_t b = 0; b < nj; b++) {
                    const uint32_t j = cols_j[b];
                    uint64_t c = base + Dv[j];
                    if (c < Di[j]) Di[j] = c;
                }
            }
        }
        /* D2 is now exact for old + decreases; the increased arcs still have their old weight */
        for (size_t k = 0; k < ninc; k++) {
            const uint32_t u = inc[k].u, v = inc[k].v;
            for (uint32_t i = 0; i < n; i++) {
                uint64_t diu = D2[(uint64_t)i * n + u];
                if (!affected[i] && diu != GP_INF && diu + inc[k].w == D2[(uint64_t)i * n + v]) {
                    affected[i] = 1;
                    naff++;
                }
            }
        }
        if (strategy == GP_RT_AUTO)
            strategy = (uint64_t)naff * 2 >= n ? GP_RT_FULL : GP_RT_INCREMENTAL;
    }
    s.strategy = strategy;
    if (strategy == GP_RT_FULL) {
        if ((rc = rt_distances(e, g2, D2, err)) != GP_OK) goto fail;
        s.rows_recomputed = n;
    } else if (naff) {
        const uint32_t block = 256;
        src = malloc((size_t)naff * sizeof *src);
        all = malloc((size_t)n * sizeof *all);
        tmp = malloc((size_t)(naff < block ? naff : block) * n * sizeof *tmp);
        if (!src || !all || !tmp) goto oom;
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
            all[i] = i;
            if (affected[i]) src[k++] = i;
        }
        for (uint32_t s0 = 0; s0 < naff; s0 += block) {
            uint32_t ns = naff - s0 < block ? naff - s0 : block;
            if ((rc = gp_engine_table(e, g2, src + s0, ns, all, n, tmp, err)) != GP_OK) goto fail;
            for (uint32_t r = 0; r < ns; r++)
                memcpy(D2 + (uint64_t)src[s0 + r] * n, tmp + (uint64_t)r * n, (size_t)n * 8);
        }
        s.rows_recomputed = naff;
    }
    double t1 = gp_now();
    t->apsp_s = t1 - t0;
    snprintf(t->backend, sizeof t->backend, "%s", gp_engine_backend(e));
    for (uint32_t i = 0; i < n; i++) {
        row_changed[i] = memcmp(D + (uint64_t)i * n, D2 + (uint64_t)i * n, (size_t)n * 8) != 0;
        s.rows_changed += row_changed[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        unsigned char r = adj_changed[i] || row_changed[i];
        for (uint32_t a = t->nb_off[i]; !r && a < t->nb_off[i + 1]; a++) r = row_changed[t->nb[a]];
        reext[i] = r;
        s.routers_reextracted += r;
    }
    upd_ctx uc = {.old = old, .t = t, .reextract = reext};
    par_for(n, extract_threads(t, threads), copy_or_extract, &uc, NULL);
    t->ecmp_s = gp_now() - t1;
    s.seconds = gp_now() - t0;
    if (st) *st = s;
    *out = t;
    t = NULL;
    rc = GP_OK;
    goto done;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory updating the routing tables");
fail:
done:
    gp_rt_free(t);
    free(inc);
    free(dec);
    free(adj_changed);
    free(affected);
    free(row_changed);
    free(reext);
    free(src);
    free(all);
    free(tmp);
    free(rows_i);
    free(cols_j);
    return rc;
}

/* ---- diff ---- */

int gp_rt_diff(const gp_rt *a, const gp_rt *b, gp_rt_pair **out, size_t *count, gp_err *err) {
    const uint32_t n = a->n;
    gp_rt_pair *p = NULL;
    size_t np = 0, cap = 0;
    uint32_t *ha = NULL, *hb = NULL;
    if (b->n != n) return gp_err_set(err, GP_EINVAL, "tables of different router sets");
    uint32_t maxdeg = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (a->nb_off[i + 1] - a->nb_off[i] > maxdeg) maxdeg = a->nb_off[i + 1] - a->nb_off[i];
        if (b->nb_off[i + 1] - b->nb_off[i] > maxdeg) maxdeg = b->nb_off[i + 1] - b->nb_off[i];
    }
    ha = malloc((size_t)maxdeg * sizeof *ha);
    hb = malloc((size_t)maxdeg * sizeof *hb);
    if (!ha || !hb) goto oom;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t da = a->nb_off[i + 1] - a->nb_off[i], db = b->nb_off[i + 1] - b->nb_off[i];
        const int same_adj =
            da == db && memcmp(a->nb + a->nb_off[i], b->nb + b->nb_off[i], da * sizeof *a->nb) == 0;
        const uint32_t eb = ebytes_of(a, i);
        for (uint32_t j = 0; j < n; j++) {
            int differ = gp_rt_dist(a, i, j) != gp_rt_dist(b, i, j);
            if (!differ) {
                if (same_adj) {
                    differ = memcmp(a->mask + a->mask_off[i] + (uint64_t)j * eb,
                                    b->mask + b->mask_off[i] + (uint64_t)j * eb, eb) != 0;
                } else {
                    uint32_t ca = gp_rt_next_hops(a, i, j, ha), cb = gp_rt_next_hops(b, i, j, hb);
                    differ = ca != cb || memcmp(ha, hb, ca * sizeof *ha) != 0;
                }
            }
            if (!differ) continue;
            if (np == cap) {
                size_t c = cap ? cap * 2 : 256;
                gp_rt_pair *x = realloc(p, c * sizeof *x);
                if (!x) goto oom;
                p = x;
                cap = c;
            }
            p[np++] = (gp_rt_pair){i, j};
        }
    }
    free(ha);
    free(hb);
    *out = p;
    *count = np;
    return GP_OK;
oom:
    free(ha);
    free(hb);
    free(p);
    return gp_err_set(err, GP_ENOMEM, "out of memory comparing routing tables");
}
