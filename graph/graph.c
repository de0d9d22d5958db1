/* graph.c - the CSR graph model: the immutable graph (graph.h) completed from a builder's or a
 * loader's arrays (reverse CSR, external-id map, content hash, spatial index), its reweighted
 * versions, reference counting and lookups; and the module's small utilities (wall clock, the one
 * CPU count, the one parallel-for, array growth). The builder is graph/builder.c.
 */
#include "graph/graph_internal.h"
#include "graph/parallel.h"
#include "graph/spatial.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------
 * Small utilities
 * ------------------------------------------------------------------------------------------- */

double gp_wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int gp_cpu_count(void) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (c > 4096 ? 4096 : (int)c) : 1;
}

int gp_grow(void **p, uint64_t *cap, uint64_t need, size_t sz) {
    if (need <= *cap) return 0;
    uint64_t nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, (size_t)(nc * sz));
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Completing a graph: reverse CSR, id map, hash, spatial index
 * ------------------------------------------------------------------------------------------- */

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* a - b modulo 2^64: the offset of id a from base b, wrapping by design (an id below the base
 * becomes a huge offset that the span check rejects). In tests/ubsan.ignorelist. */
static inline uint64_t id_delta(int64_t a, int64_t b) { return (uint64_t)a - (uint64_t)b; }

#define H_P1 0x9e3779b185ebca87ULL
#define H_P2 0xc2b2ae3d27d4eb4fULL

/* Fast 64-bit hash of a byte range, four independent lanes over 32-byte blocks (xxhash-like
 * structure), chained from h. Not cryptographic: a content fingerprint for cache keys. */
uint64_t gp_hash_bytes(uint64_t h, const void *data, uint64_t len) {
    const unsigned char *p = data;
    uint64_t l0 = h + H_P1 + H_P2, l1 = h + H_P2, l2 = h, l3 = h - H_P1;
    uint64_t i = 0;
    for (; i + 32 <= len; i += 32) {
        uint64_t x[4];
        memcpy(x, p + i, 32);
        l0 = rotl64(l0 + x[0] * H_P2, 31) * H_P1;
        l1 = rotl64(l1 + x[1] * H_P2, 31) * H_P1;
        l2 = rotl64(l2 + x[2] * H_P2, 31) * H_P1;
        l3 = rotl64(l3 + x[3] * H_P2, 31) * H_P1;
    }
    uint64_t r = rotl64(l0, 1) + rotl64(l1, 7) + rotl64(l2, 12) + rotl64(l3, 18) + len;
    for (; i + 8 <= len; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        r = rotl64(r ^ (rotl64(x * H_P2, 31) * H_P1), 27) * H_P1 + 0x85ebca77c2b2ae63ULL;
    }
    for (; i < len; i++) r = rotl64(r ^ (p[i] * 0x27d4eb2f165667c5ULL), 11) * H_P1;
    return gp_mix64(r);
}

#define hash_bytes gp_hash_bytes

static uint64_t graph_hash(const gp_graph *g) {
    uint64_t h = 0x6770617468ULL; /* "gpath" */
    uint64_t hdr[3];
    hdr[0] = g->n;
    hdr[1] = g->m;
    memcpy(&hdr[2], &g->scale, sizeof(double));
    h = hash_bytes(h, hdr, sizeof hdr);
    h = hash_bytes(h, g->ext, (uint64_t)g->n * sizeof *g->ext);
    h = hash_bytes(h, g->row, ((uint64_t)g->n + 1) * sizeof *g->row);
    h = hash_bytes(h, g->col, (uint64_t)g->m * sizeof *g->col);
    h = hash_bytes(h, g->w, (uint64_t)g->m * sizeof *g->w);
    /* road attributes and original ids, when the graph has them (graphs without keep the hash
     * they always had) */
    if (g->arc_len_m) h = hash_bytes(h, g->arc_len_m, (uint64_t)g->m * sizeof *g->arc_len_m);
    if (g->arc_name) h = hash_bytes(h, g->arc_name, (uint64_t)g->m * sizeof *g->arc_name);
    if (g->arc_ref) h = hash_bytes(h, g->arc_ref, (uint64_t)g->m * sizeof *g->arc_ref);
    if (g->arc_class) h = hash_bytes(h, g->arc_class, g->m);
    if (g->arc_flags) h = hash_bytes(h, g->arc_flags, g->m);
    if (g->arc_guide) h = hash_bytes(h, g->arc_guide, (uint64_t)g->m * sizeof *g->arc_guide);
    if (g->arc_limits) h = hash_bytes(h, g->arc_limits, (uint64_t)g->m * GP_LIMITS);
    if (g->arc_shape) {
        uint64_t ns = g->arc_shape[g->m];
        h = hash_bytes(h, g->arc_shape, ((uint64_t)g->m + 1) * sizeof *g->arc_shape);
        if (g->shape_lon) h = hash_bytes(h, g->shape_lon, ns * sizeof(double));
        if (g->shape_lat) h = hash_bytes(h, g->shape_lat, ns * sizeof(double));
        if (g->shape_osm_id) h = hash_bytes(h, g->shape_osm_id, ns * sizeof(int64_t));
    }
    if (g->strtab) h = hash_bytes(h, g->strtab, g->strtab_len);
    if (g->osm_id) h = hash_bytes(h, g->osm_id, (uint64_t)g->n * sizeof *g->osm_id);
    if (g->node_flags) h = hash_bytes(h, g->node_flags, g->n);
    if (g->restr) h = hash_bytes(h, g->restr, g->restr_len * sizeof *g->restr);
    return h;
}

/* free() for an array of g, unless it lies in the snapshot mapping g was loaded from. */
static void release(const gp_graph *g, void *p) {
    const char *c = p, *base = g->map_base;
    if (base && c >= base && c < base + g->map_len) return;
    free(p);
}

/* The pool of released weight arrays. An entry may be clean: it holds the weights (w, or rw when
 * rev) of the graph whose version hash is `of` (a graph that owns its arrays), restored there when
 * the version that used it went (release_version) - a new version of that graph takes it without
 * copying every weight. */
static struct {
    pthread_mutex_t mu;
    uint32_t *w[GP_WEIGHTS_KEPT];
    uint32_t m[GP_WEIGHTS_KEPT];
    uint64_t of[GP_WEIGHTS_KEPT];
    unsigned char clean[GP_WEIGHTS_KEPT], rev[GP_WEIGHTS_KEPT];
    int n;
} wpool = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* An array of m weights from the pool (lock held), or NULL: with clean, only one holding the
 * weights (of, rev); otherwise one that is not clean first, then the oldest clean one. */
static uint32_t *pool_take(uint32_t m, int clean, uint64_t of, int rev) {
    int pick = -1;
    for (int i = wpool.n - 1; i >= 0; i--) {
        if (wpool.m[i] != m) continue;
        if (clean) {
            if (wpool.clean[i] && wpool.of[i] == of && wpool.rev[i] == rev) {
                pick = i;
                break;
            }
        } else if (!wpool.clean[i]) {
            pick = i;
            break;
        } else {
            pick = i; /* a clean one, unless a plain one comes */
        }
    }
    if (pick < 0) return NULL;
    uint32_t *w = wpool.w[pick];
    wpool.n--;
    memmove(wpool.w + pick, wpool.w + pick + 1, sizeof *wpool.w * (size_t)(wpool.n - pick));
    memmove(wpool.m + pick, wpool.m + pick + 1, sizeof *wpool.m * (size_t)(wpool.n - pick));
    memmove(wpool.of + pick, wpool.of + pick + 1, sizeof *wpool.of * (size_t)(wpool.n - pick));
    memmove(wpool.clean + pick, wpool.clean + pick + 1, (size_t)(wpool.n - pick));
    memmove(wpool.rev + pick, wpool.rev + pick + 1, (size_t)(wpool.n - pick));
    return w;
}

uint32_t *gp_weights_alloc(uint32_t m) {
    pthread_mutex_lock(&wpool.mu);
    uint32_t *w = pool_take(m, 0, 0, 0);
    pthread_mutex_unlock(&wpool.mu);
    return w ? w : malloc(sizeof(uint32_t) * (m ? m : 1));
}

static void pool_put(uint32_t *w, uint32_t m, int clean, uint64_t of, int rev) {
    if (!w) return;
    pthread_mutex_lock(&wpool.mu);
    if (wpool.n == GP_WEIGHTS_KEPT) { /* the oldest goes: sizes in use come back often */
        free(wpool.w[0]);
        wpool.n--;
        memmove(wpool.w, wpool.w + 1, sizeof *wpool.w * (size_t)wpool.n);
        memmove(wpool.m, wpool.m + 1, sizeof *wpool.m * (size_t)wpool.n);
        memmove(wpool.of, wpool.of + 1, sizeof *wpool.of * (size_t)wpool.n);
        memmove(wpool.clean, wpool.clean + 1, (size_t)wpool.n);
        memmove(wpool.rev, wpool.rev + 1, (size_t)wpool.n);
    }
    wpool.w[wpool.n] = w;
    wpool.m[wpool.n] = m;
    wpool.of[wpool.n] = of;
    wpool.clean[wpool.n] = (unsigned char)clean;
    wpool.rev[wpool.n++] = (unsigned char)rev;
    pthread_mutex_unlock(&wpool.mu);
}

void gp_weights_release(uint32_t *w, uint32_t m) { pool_put(w, m, 0, 0, 0); }

typedef struct wcopy_job {
    const gp_graph *g;
    uint32_t *w, *rw; /* NULL: that one holds g's already */
} wcopy_job;

static void wcopy_range(void *jv, uint64_t lo, uint64_t hi) {
    wcopy_job *j = jv;
    if (j->w) memcpy(j->w + lo, j->g->w + lo, (size_t)(hi - lo) * sizeof *j->w);
    if (j->rw) memcpy(j->rw + lo, j->g->rw + lo, (size_t)(hi - lo) * sizeof *j->rw);
}

void gp_weights_copy(const gp_graph *g, uint32_t *w, uint32_t *rw) {
    wcopy_job j = {g, w, rw};
    gp_parallel_for(g->m, g->m >= (1u << 20) ? 0 : 1, wcopy_range, &j);
}

int gp_weights_dup(const gp_graph *g, uint32_t **w, uint32_t **rw, int *copied) {
    uint32_t *a = NULL, *b = NULL;
    if (!g->base) { /* only an owner's weights are restored into released arrays */
        pthread_mutex_lock(&wpool.mu);
        a = pool_take(g->m, 1, g->hash, 0);
        b = pool_take(g->m, 1, g->hash, 1);
        pthread_mutex_unlock(&wpool.mu);
    }
    wcopy_job j = {g, a ? NULL : gp_weights_alloc(g->m), b ? NULL : gp_weights_alloc(g->m)};
    if ((!a && !j.w) || (!b && !j.rw)) {
        gp_weights_release(a ? a : j.w, g->m);
        gp_weights_release(b ? b : j.rw, g->m);
        *w = *rw = NULL;
        return -1;
    }
    if (j.w || j.rw) gp_parallel_for(g->m, g->m >= (1u << 20) ? 0 : 1, wcopy_range, &j);
    if (copied) *copied = (j.w != NULL) + (j.rw != NULL);
    *w = a ? a : j.w;
    *rw = b ? b : j.rw;
    return 0;
}

/* A reweighted version's arrays back to its base's weights, at the nodes of its list (rows in w;
 * their arcs' reverse entries in rw): outside them they are the base's (gp_graph diff_tails). */
typedef struct restore_job {
    const gp_graph *b;
    const uint32_t *tails;
    uint32_t *w, *rw;
} restore_job;

static void restore_range(void *jv, uint64_t lo, uint64_t hi) {
    restore_job *j = jv;
    const gp_graph *b = j->b;
    for (uint64_t i = lo; i < hi; i++) {
        uint32_t u = j->tails[i];
        memcpy(j->w + b->row[u], b->w + b->row[u], (size_t)(b->row[u + 1] - b->row[u]) * 4);
        for (uint32_t k = b->row[u]; k < b->row[u + 1]; k++) {
            uint32_t v = b->col[k];
            for (uint32_t r = b->rrow[v]; r < b->rrow[v + 1]; r++)
                if (b->rcol[r] == u) j->rw[r] = b->rw[r];
        }
    }
}

/* Version g's w and rw back to the pool: clean (its base's weights) when g lists where they
 * differ, so that the next version of that base takes them without a copy (gp_weights_dup). */
static void release_version(gp_graph *g) {
    const gp_graph *b = g->base;
    if (g->diff_tails && g->w && g->rw && b->w && b->rw && b->m == g->m) {
        restore_job j = {b, g->diff_tails, g->w, g->rw};
        gp_parallel_for_dynamic(g->ndiff_tails, g->ndiff_tails >= 4096 ? 0 : 1, 0, restore_range,
                                &j);
        pool_put(g->w, g->m, 1, b->hash, 0);
        pool_put(g->rw, g->m, 1, b->hash, 1);
        return;
    }
    gp_weights_release(g->w, g->m);
    gp_weights_release(g->rw, g->m);
}

void gp_graph_destroy(gp_graph *g) {
    if (!g) return;
    if (g->dev && g->dev_free) g->dev_free(g->dev);
    if (g->cch && g->cch_free) g->cch_free(g->cch);
    if (g->snap && g->snap_free) g->snap_free(g->snap);
    if (g->osmseg && g->osmseg_free) g->osmseg_free(g->osmseg);
    if (g->mdev && g->mdev_free) g->mdev_free(g->mdev);
    if (g->turns && g->turns_free) g->turns_free(g->turns);
    if (g->base) { /* a reweighted version: the rest is the base's */
        release_version(g);
        free(g->diff_tails);
        free(g->diff_arcs);
        gp_graph_unref(g->base);
        free(g);
        return;
    }
    gp_spatial_free(g->spatial);
    if (g->names) {
        for (uint32_t i = 0; i < g->n; i++) release(g, g->names[i]);
        free(g->names);
    }
    void *arrays[] = {g->row,          g->col,        g->w,          g->rrow,       g->rcol,
                      g->rw,           g->ext,        g->idmap.keys, g->idmap.vals, g->lon,
                      g->lat,          g->arc_len_m,  g->arc_name,   g->arc_ref,    g->arc_class,
                      g->arc_shape,    g->shape_lon,  g->shape_lat,  g->strtab,     g->osm_id,
                      g->shape_osm_id, g->node_flags, g->arc_flags,  g->arc_guide,  g->restr,
                      g->arc_limits,   g->arc_cap,    g->places};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) release(g, arrays[i]);
    if (g->map_base && g->map_unmap) g->map_unmap(g->map_base, g->map_len);
    free(g);
}

typedef struct rev_ctx {
    gp_graph *g;
    uint32_t *cursor;
    uint32_t max_w;
} rev_ctx;

/* In-degrees into rrow[v + 1] and the largest weight, for tails [begin, end). */
static void rev_count(void *ctx, uint64_t begin, uint64_t end) {
    rev_ctx *c = ctx;
    const gp_graph *g = c->g;
    uint32_t mw = 0;
    for (uint32_t i = g->row[begin]; i < g->row[end]; i++) {
        __atomic_fetch_add(&g->rrow[g->col[i] + 1], 1, __ATOMIC_RELAXED);
        if (g->w[i] > mw) mw = g->w[i];
    }
    uint32_t cur = __atomic_load_n(&c->max_w, __ATOMIC_RELAXED);
    while (mw > cur && !__atomic_compare_exchange_n(&c->max_w, &cur, mw, 1, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
    }
}

/* Places the arcs of tails [begin, end) in the reverse CSR. */
static void rev_fill(void *ctx, uint64_t begin, uint64_t end) {
    rev_ctx *c = ctx;
    gp_graph *g = c->g;
    for (uint64_t u = begin; u < end; u++)
        for (uint32_t i = g->row[u]; i < g->row[u + 1]; i++) {
            uint32_t p = __atomic_fetch_add(&c->cursor[g->col[i]], 1, __ATOMIC_RELAXED);
            g->rcol[p] = (uint32_t)u;
            g->rw[p] = g->w[i];
        }
}

/* Inserts ext[begin..end) into the id map. Threads claim empty slots with a compare-and-swap on
 * vals; ids are unique, so no thread ever needs another's key while inserting. The slot layout
 * may differ between runs, the mapping never does. */
static void idmap_fill(void *ctx, uint64_t begin, uint64_t end) {
    gp_graph *g = ctx;
    const uint64_t mask = g->idmap.mask;
    for (uint64_t i = begin; i < end; i++) {
        uint64_t s = gp_id_hash(g->ext[i]) & mask;
        for (;; s = (s + 1) & mask) {
            uint32_t expect = GP_NONE;
            if (__atomic_load_n(&g->idmap.vals[s], __ATOMIC_RELAXED) == GP_NONE &&
                __atomic_compare_exchange_n(&g->idmap.vals[s], &expect, (uint32_t)i, 0,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                break;
        }
        g->idmap.keys[s] = g->ext[i];
    }
}

gp_graph *gp_graph_complete(gp_graph *g, const char *source, const char *format, int directed,
                            gp_err *err) {
    const uint32_t n = g->n, m = g->m;
    double t0 = gp_now(), t1, t2, t3;
    snprintf(g->source, sizeof g->source, "%s", source ? source : "");
    snprintf(g->format, sizeof g->format, "%s", format ? format : "");
    g->directed_input = directed;
    if (!(g->scale > 0)) g->scale = 1.0;
    if (!g->unit_name[0]) gp_graph_set_unit(g, "cost", 0);

    /* reverse CSR: counting sort by head on parallel threads (atomic counters and cursors), then
     * each row sorted by (tail, weight) so the result does not depend on thread timing; a graph
     * that comes with one (a snapshot) keeps it, only max_w is computed */
    if (g->rrow && g->rcol && g->rw) {
        uint32_t mw = 0;
        for (uint32_t i = 0; i < m; i++)
            if (g->w[i] > mw) mw = g->w[i];
        g->max_w = mw;
        goto reverse_done;
    }
    g->rrow = calloc((size_t)n + 1, sizeof *g->rrow);
    g->rcol = malloc((size_t)(m ? m : 1) * sizeof *g->rcol);
    g->rw = malloc((size_t)(m ? m : 1) * sizeof *g->rw);
    uint32_t *cursor = malloc((size_t)n * sizeof *cursor);
    if (!g->rrow || !g->rcol || !g->rw || !cursor) {
        free(cursor);
        goto oom;
    }
    rev_ctx rc = {g, cursor, 0};
    gp_parallel_for(n, 0, rev_count, &rc);
    g->max_w = rc.max_w;
    uint32_t maxdeg = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (g->rrow[v + 1] > maxdeg) maxdeg = g->rrow[v + 1];
        g->rrow[v + 1] += g->rrow[v];
    }
    memcpy(cursor, g->rrow, (size_t)n * sizeof *cursor);
    gp_parallel_for(n, 0, rev_fill, &rc);
    free(cursor);
    if (gp_graph_sort_rows(g->rrow, g->rcol, g->rw, n, maxdeg)) goto oom;
reverse_done:
    t1 = gp_now();

    /* id map: a direct table when the ids are dense, else a hash of capacity >= 2n (ids spanning
     * all of int64 wrap span to 0: the hash) */
    uint64_t delta = n ? id_delta(g->ext[n - 1], g->ext[0]) : UINT64_MAX;
    uint64_t span = delta == UINT64_MAX ? 0 : delta + 1;
    if (n && span != 0 && span <= 4 * (uint64_t)n + 1024) {
        g->idmap.base = g->ext[0];
        g->idmap.span = span;
        g->idmap.vals = malloc(span * sizeof *g->idmap.vals);
        if (!g->idmap.vals) goto oom;
        memset(g->idmap.vals, 0xff, span * sizeof *g->idmap.vals);
        for (uint32_t i = 0; i < n; i++) g->idmap.vals[id_delta(g->ext[i], g->idmap.base)] = i;
    } else {
        uint64_t cap = 16;
        while (cap < 2 * (uint64_t)n) cap *= 2;
        g->idmap.keys = malloc(cap * sizeof *g->idmap.keys);
        g->idmap.vals = malloc(cap * sizeof *g->idmap.vals);
        if (!g->idmap.keys || !g->idmap.vals) goto oom;
        memset(g->idmap.vals, 0xff, cap * sizeof *g->idmap.vals);
        g->idmap.mask = cap - 1;
        gp_parallel_for(n, 0, idmap_fill, g);
    }

    t2 = gp_now();
    g->hash = graph_hash(g);
    snprintf(g->version, sizeof g->version, "%016llx", (unsigned long long)g->hash);
    t3 = gp_now();

    if (g->lon && g->lat) {
        g->spatial = gp_spatial_build(g, err);
        if (!g->spatial) {
            gp_graph_destroy(g);
            return NULL;
        }
    }
    g->loaded_at = gp_wall_now();
    GP_LOG(GP_LOG_DEBUG,
           "graph %s: %u nodes, %u arcs; reverse %.3fs, id map %.3fs, hash %.3fs, spatial %.3fs",
           g->source, n, m, t1 - t0, t2 - t1, t3 - t2, gp_now() - t3);
    __atomic_store_n(&g->refs, 1, __ATOMIC_RELEASE);
    return g;
oom:
    gp_err_set(err, GP_ENOMEM, "out of memory completing the graph (%u nodes, %u arcs)", n, m);
    gp_graph_destroy(g);
    return NULL;
}

/* The largest of w[0..n), in parallel (a new version's max_w: 4.5M turn weights on a 1M-node
 * OSM map). */
typedef struct max_job {
    const uint32_t *w;
    uint32_t max; /* atomic */
} max_job;

static void max_range(void *ctx, uint64_t lo, uint64_t hi) {
    max_job *j = ctx;
    uint32_t mw = 0;
    for (uint64_t i = lo; i < hi; i++)
        if (j->w[i] > mw) mw = j->w[i];
    uint32_t cur = __atomic_load_n(&j->max, __ATOMIC_RELAXED);
    while (mw > cur &&
           !__atomic_compare_exchange_n(&j->max, &cur, mw, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

uint32_t gp_weights_max(const uint32_t *w, uint32_t n) {
    max_job mj = {w, 0};
    gp_parallel_for(n, n >= (1u << 20) ? 0 : 1, max_range, &mj);
    return mj.max;
}

/* A reweighted version of g over w / rw (taken over) with version hash, or with one derived from
 * the weights when !have_hash. */
static gp_graph *reweight(const gp_graph *g, uint32_t *w, uint32_t *rw, int have_hash,
                          uint64_t hash, int64_t max_w, gp_err *err) {
    gp_graph *h = malloc(sizeof *h);
    if (!h || !w || !rw) {
        free(h);
        free(w);
        free(rw);
        gp_err_set(err, GP_ENOMEM, "out of memory for a new version of the graph");
        return NULL;
    }
    *h = *g;
    h->w = w;
    h->rw = rw;
    h->base = gp_graph_ref((gp_graph *)gp_graph_owner(g));
    h->dev = h->cch = h->snap = NULL;
    h->dev_free = NULL;
    h->cch_free = NULL;
    h->snap_free = NULL;
    h->osmseg = NULL;
    h->osmseg_free = NULL;
    h->mdev = NULL;
    h->mdev_free = NULL;
    h->diff_tails = NULL;
    h->ndiff_tails = 0;
    h->diff_arcs = NULL;
    h->ndiff_arcs = 0;
    h->turns = NULL;
    h->turns_free = NULL;
    h->map_base = NULL; /* the base keeps its snapshot's memory */
    h->map_len = 0;
    h->map_unmap = NULL;
    if (max_w >= 0) {
        h->max_w = (uint32_t)max_w; /* the caller's bound: no pass over every weight */
    } else {
        h->max_w = gp_weights_max(w, h->m);
    }
    /* the version: derived from the base's and the weights (a full content hash would read every
     * shared array again, ~100 MB on a 1M-node OSM graph); the base's own weights give the base's
     * version, the same weights over the same base the same version */
    const gp_graph *root = h->base;
    if (have_hash) h->hash = hash;
    else
        h->hash =
            memcmp(w, root->w, (size_t)h->m * sizeof *w) == 0
                ? root->hash
                : gp_hash_bytes(root->hash ^ 0x7265776569676874ULL, w, (uint64_t)h->m * sizeof *w);
    snprintf(h->version, sizeof h->version, "%016llx", (unsigned long long)h->hash);
    h->loaded_at = gp_wall_now();
    __atomic_store_n(&h->refs, 1, __ATOMIC_RELEASE);
    return h;
}

gp_graph *gp_graph_reweight(const gp_graph *g, uint32_t *w, uint32_t *rw, gp_err *err) {
    return reweight(g, w, rw, 0, 0, -1, err);
}

gp_graph *gp_graph_reweight_versioned(const gp_graph *g, uint32_t *w, uint32_t *rw, uint64_t hash,
                                      int64_t max_w, gp_err *err) {
    return reweight(g, w, rw, 1, hash, max_w, err);
}

/* ---------------------------------------------------------------------------------------------
 * Graph queries and lifetime
 * ------------------------------------------------------------------------------------------- */

gp_graph *gp_graph_ref(gp_graph *g) {
    if (g) __atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
    return g;
}

void gp_graph_unref(gp_graph *g) {
    if (!g) return;
    if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0) gp_graph_destroy(g);
}

uint32_t gp_graph_index(const gp_graph *g, int64_t ext_id) {
    if (!g || !g->idmap.vals) return GP_NONE;
    if (!g->idmap.keys) {
        uint64_t off = id_delta(ext_id, g->idmap.base);
        return off < g->idmap.span ? g->idmap.vals[off] : GP_NONE;
    }
    for (uint64_t s = gp_id_hash(ext_id) & g->idmap.mask;; s = (s + 1) & g->idmap.mask) {
        uint32_t v = g->idmap.vals[s];
        if (v == GP_NONE) return GP_NONE;
        if (g->idmap.keys[s] == ext_id) return v;
    }
}

uint64_t gp_graph_memory(const gp_graph *g) {
    if (!g) return 0;
    uint64_t n = g->n, m = g->m;
    uint64_t bytes = sizeof *g;
    bytes += 2 * (n + 1) * sizeof(uint32_t); /* row, rrow */
    bytes += 4 * m * sizeof(uint32_t);       /* col, w, rcol, rw */
    bytes += n * sizeof(int64_t);            /* ext */
    if (g->idmap.keys) bytes += (g->idmap.mask + 1) * (sizeof(int64_t) + sizeof(uint32_t));
    else bytes += g->idmap.span * sizeof(uint32_t);
    if (g->lon) bytes += 2 * n * sizeof(double);
    if (g->names) {
        bytes += n * sizeof(char *);
        for (uint32_t i = 0; i < g->n; i++)
            if (g->names[i]) bytes += strlen(g->names[i]) + 1;
    }
    bytes += gp_spatial_memory(g->spatial);
    bytes += gp_graph_roadattr_memory(g);
    bytes += g->places_len;
    return bytes;
}

/* The parallel form of gp_sort_u32 for large n (a speed file's changed CCH slots on road-like
 * 24M: about a million): three stable passes of 11 bits, each a count per chunk on every CPU,
 * the chunks' offsets per digit, then a scatter per chunk; the same order as the serial sort. */
#define PSORT_MIN (1u << 17)
#define PSORT_BITS 11
#define PSORT_DIGITS (1u << PSORT_BITS)
typedef struct psort_job {
    const uint32_t *src;
    uint32_t *dst;
    uint32_t n, nchunks;
    int sh;
    uint32_t *cnt; /* nchunks x PSORT_DIGITS: counts, then offsets */
} psort_job;

static void psort_count(void *jv, uint64_t lo, uint64_t hi) {
    psort_job *j = jv;
    for (uint64_t c = lo; c < hi; c++) {
        uint32_t *cn = j->cnt + c * PSORT_DIGITS;
        uint64_t b = (uint64_t)j->n * c / j->nchunks, e = (uint64_t)j->n * (c + 1) / j->nchunks;
        memset(cn, 0, PSORT_DIGITS * sizeof *cn);
        for (uint64_t i = b; i < e; i++) cn[(j->src[i] >> j->sh) & (PSORT_DIGITS - 1)]++;
    }
}

static void psort_scatter(void *jv, uint64_t lo, uint64_t hi) {
    psort_job *j = jv;
    for (uint64_t c = lo; c < hi; c++) {
        uint32_t *at = j->cnt + c * PSORT_DIGITS;
        uint64_t b = (uint64_t)j->n * c / j->nchunks, e = (uint64_t)j->n * (c + 1) / j->nchunks;
        for (uint64_t i = b; i < e; i++) {
            uint32_t x = j->src[i];
            j->dst[at[(x >> j->sh) & (PSORT_DIGITS - 1)]++] = x;
        }
    }
}

static int sort_u32_parallel(uint32_t *a, uint32_t n) {
    int nt = gp_cpu_count();
    if (nt > GP_PARALLEL_MAX_THREADS) nt = GP_PARALLEL_MAX_THREADS;
    uint32_t nchunks = (uint32_t)(nt > 1 ? nt : 1) * 2;
    uint32_t *tmp = malloc((size_t)n * 4 + 4);
    uint32_t *cnt = malloc((size_t)nchunks * PSORT_DIGITS * sizeof *cnt);
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        return -1;
    }
    psort_job j = {a, tmp, n, nchunks, 0, cnt};
    for (int pass = 0; pass < 3; pass++) {
        j.sh = PSORT_BITS * pass;
        gp_parallel_for_dynamic(nchunks, 0, 1, psort_count, &j);
        uint32_t off = 0; /* digit-major, chunk-minor: stable */
        for (uint32_t d = 0; d < PSORT_DIGITS; d++)
            for (uint32_t c = 0; c < nchunks; c++) {
                uint32_t k = cnt[(size_t)c * PSORT_DIGITS + d];
                cnt[(size_t)c * PSORT_DIGITS + d] = off;
                off += k;
            }
        gp_parallel_for_dynamic(nchunks, 0, 1, psort_scatter, &j);
        const uint32_t *src = j.src;
        j.src = j.dst;
        j.dst = (uint32_t *)src;
    }
    memcpy(a, j.src, (size_t)n * 4); /* three passes: the result is in tmp */
    free(tmp);
    free(cnt);
    return 0;
}

int gp_sort_u32(uint32_t *a, uint32_t n) {
    if (n < 2) return 0;
    if (n >= PSORT_MIN && gp_cpu_count() > 1) return sort_u32_parallel(a, n);
    uint32_t *tmp = malloc((size_t)n * 4 + 4);
    uint32_t *cnt = malloc(65537 * 4);
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        return -1;
    }
    for (int pass = 0; pass < 2; pass++) {
        int sh = 16 * pass;
        memset(cnt, 0, 65537 * 4);
        for (uint32_t i = 0; i < n; i++) cnt[((a[i] >> sh) & 0xffff) + 1]++;
        for (int b = 0; b < 65536; b++) cnt[b + 1] += cnt[b];
        for (uint32_t i = 0; i < n; i++) tmp[cnt[(a[i] >> sh) & 0xffff]++] = a[i];
        memcpy(a, tmp, (size_t)n * 4);
    }
    free(tmp);
    free(cnt);
    return 0;
}

/* Sorts a[0..n) ascending and drops repeats; the count kept, or -1 when out of memory. */
int64_t gp_sort_unique_u32(uint32_t *a, uint32_t n) {
    if (gp_sort_u32(a, n) != 0) return -1;
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!u || a[u - 1] != a[i]) a[u++] = a[i];
    return u;
}

/* The heads' reverse rows in chunks (a speed file of road-like 24M: ~500k heads read at random):
 * each chunk's count, then each chunk's tails at its offset. */
#define TU_CHUNKS 64
typedef struct tu_job {
    const gp_graph *g;
    const uint32_t *heads;
    uint32_t nheads;
    uint64_t at[TU_CHUNKS + 1];
    uint32_t *v;
} tu_job;

static void tu_count(void *jv, uint64_t lo, uint64_t hi) {
    tu_job *j = jv;
    for (uint64_t c = lo; c < hi; c++) {
        uint64_t n = 0;
        for (uint64_t i = c * j->nheads / TU_CHUNKS; i < (c + 1) * j->nheads / TU_CHUNKS; i++)
            n += j->g->rrow[j->heads[i] + 1] - j->g->rrow[j->heads[i]];
        j->at[c + 1] = n;
    }
}

static void tu_fill(void *jv, uint64_t lo, uint64_t hi) {
    tu_job *j = jv;
    const gp_graph *g = j->g;
    for (uint64_t c = lo; c < hi; c++) {
        uint64_t k = j->at[c];
        for (uint64_t i = c * j->nheads / TU_CHUNKS; i < (c + 1) * j->nheads / TU_CHUNKS; i++)
            for (uint32_t r = g->rrow[j->heads[i]]; r < g->rrow[j->heads[i] + 1]; r++)
                j->v[k++] = g->rcol[r];
    }
}

uint32_t *gp_graph_tails_union(const gp_graph *g, const uint32_t *heads, uint32_t nheads,
                               const uint32_t *tails, uint32_t ntails, const uint32_t *old,
                               uint32_t nold, uint32_t *nout) {
    tu_job j = {.g = g, .heads = heads, .nheads = nheads};
    int threads = nheads >= 16384 ? 0 : 1;
    gp_parallel_for_dynamic(TU_CHUNKS, threads, 1, tu_count, &j);
    j.at[0] = (uint64_t)nold + ntails;
    for (int c = 0; c < TU_CHUNKS; c++) j.at[c + 1] += j.at[c];
    uint64_t n = j.at[TU_CHUNKS];
    uint32_t *v = n < UINT32_MAX ? malloc(n * 4 + 4) : NULL;
    if (!v) return NULL;
    if (nold) memcpy(v, old, (size_t)nold * 4);
    if (ntails) memcpy(v + nold, tails, (size_t)ntails * 4);
    j.v = v;
    gp_parallel_for_dynamic(TU_CHUNKS, threads, 1, tu_fill, &j);
    int64_t u = gp_sort_unique_u32(v, (uint32_t)n);
    if (u < 0) {
        free(v);
        return NULL;
    }
    *nout = (uint32_t)u;
    return v;
}
