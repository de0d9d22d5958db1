/* cch.c - customizable contraction hierarchies on the CPU (see cch.h for the model).
 *
 *  - order: nested dissection (METIS) on the undirected skeleton, computed once per topology
 *    (engine/cch_order.c);
 *  - contraction: symbolic elimination in rank order (the upper neighbours of x, minus its
 *    elimination-tree parent, are merged into the parent's), then ranks re-sorted by level (an
 *    elimination-tree topological order, so the chordal completion is the same) and the completion
 *    renamed to the new ranks; lower triangles listed per edge (v ascending); renaming and
 *    triangles on threads (gp_parallel_for);
 *  - customization: basic customization, edge by edge in level order (lower triangles only), the
 *    edges of one level split over threads with a barrier between levels; each weight keeps its
 *    witness (the first lower triangle realising it), packed afterwards into one 64-bit word per
 *    edge and direction so that unpacking a shortcut costs one read;
 *  - p2p: the elimination-tree query (the ancestors of s upward with up weights and of t with down
 *    weights, walked together in rank order and pruned by the best meeting so far), paths
 *    unpacked through the witnesses to original arcs;
 *  - sssp: PHAST (upward elimination-tree search, then one sweep over ranks n-1..0 pulling from
 *    upper neighbours over down weights);
 *  - table: buckets (each target's backward search fills buckets, each source's forward search scans
 *    them), sources on threads.
 * Query workspaces (rank-indexed distance and parent arrays) are pooled and reset along the
 * elimination-tree paths they touched, so a p2p query costs O(search space), not O(n).
 */
#include "engine/cch.h"
#include "engine/engine_lab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int gp_cch_threads(int threads) {
    if (threads <= 0) threads = gp_cpu_count();
    return threads > 256 ? 256 : threads;
}

static inline uint32_t sat_add(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t)a + b;
    return s >= GP_CCH_INF ? GP_CCH_INF : (uint32_t)s;
}

/* malloc for the arrays queries read at random (witnesses, query arcs, weights, the elimination
 * tree, workspaces): transparent huge pages asked for (where the system leaves them to madvise)
 * on the 2 MiB pages inside, before anything is written, so that a query's scattered reads miss
 * the TLB less (p2p 3-5% faster on NY and BAY). */
static void *big_malloc(size_t bytes) {
    void *p = malloc(bytes);
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)1 << 21;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (p && b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
    return p;
}

/* c's query arcs as published (a background perfect pass may set them at any time). */
static inline const gp_cch_arcs *published(const gp_cch *c) {
    return __atomic_load_n(&c->q, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------------------------------------
 * Contraction */

static uint32_t max_tri_per_node = GP_CCH_MAX_TRI_PER_NODE; /* set at startup */
#define GUARD_FLOOR (1ULL << 22)

void gp_cch_set_max_tri_per_node(uint32_t v) { max_tri_per_node = v; }

/* Edge ids travel shifted by one bit in path unpacking: at most 2^31 - 1 edges. */
static uint64_t edge_limit(uint32_t n) {
    uint64_t per = max_tri_per_node / 8 > 16 ? max_tri_per_node / 8 : 16;
    uint64_t lim = max_tri_per_node ? per * n + GUARD_FLOOR : UINT64_MAX;
    return lim < 0x7fffffffULL ? lim : 0x7fffffffULL;
}
static uint64_t tri_limit(uint32_t n) {
    return max_tri_per_node ? (uint64_t)max_tri_per_node * n + GUARD_FLOOR : UINT64_MAX;
}

typedef struct vec {
    uint32_t *a;
    uint32_t len, cap;
} vec;

static int vec_push(vec *v, uint32_t x) {
    if (v->len == v->cap) {
        uint32_t nc = v->cap ? v->cap * 2 : 4;
        uint32_t *na = realloc(v->a, (size_t)nc * sizeof *na);
        if (!na) return -1;
        v->a = na;
        v->cap = nc;
    }
    v->a[v->len++] = x;
    return 0;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Chordal completion for rank: up lists (rank space, ascending) and the elimination tree. */
static int chordal(uint32_t n, const uint32_t *first, const uint32_t *adj, const uint32_t *rank,
                   uint32_t **up_first, uint32_t **up_head, uint32_t *m_out, uint32_t *parent,
                   gp_err *err) {
    vec *L = calloc(n, sizeof *L);
    uint32_t *uf = malloc(((size_t)n + 1) * sizeof *uf);
    uint64_t cap = (uint64_t)first[n] + 16, len = 0;
    uint32_t *uh = malloc(cap * sizeof *uh);
    if (!L || !uf || !uh) goto oom;
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t i = first[u]; i < first[u + 1]; i++)
            if (rank[adj[i]] > rank[u] && vec_push(&L[rank[u]], rank[adj[i]])) goto oom;
    for (uint32_t r = 0; r < n; r++) {
        vec *v = &L[r];
        if (v->len > 1) qsort(v->a, v->len, sizeof *v->a, cmp_u32);
        uint32_t k = 0;
        for (uint32_t i = 0; i < v->len; i++)
            if (i == 0 || v->a[i] != v->a[i - 1]) v->a[k++] = v->a[i];
        v->len = k;
        uf[r] = (uint32_t)len;
        if (len + k > edge_limit(n)) {
            gp_err_set(err, GP_ETOOBIG,
                       "the CCH of %u nodes passes %llu edges: the graph is not road-like "
                       "(cch_max_triangles_per_node)",
                       n, (unsigned long long)edge_limit(n));
            goto fail;
        }
        if (len + k > cap) {
            while (len + k > cap) cap *= 2;
            uint32_t *nh = realloc(uh, cap * sizeof *nh);
            if (!nh) goto oom;
            uh = nh;
        }
        if (k) memcpy(uh + len, v->a, (size_t)k * sizeof *uh); /* v->a may be NULL when empty */
        len += k;
        parent[r] = k ? v->a[0] : GP_NONE;
        if (k) {
            vec *p = &L[v->a[0]];
            for (uint32_t i = 1; i < k; i++)
                if (vec_push(p, v->a[i])) goto oom;
        }
        free(v->a);
        v->a = NULL;
    }
    uf[n] = (uint32_t)len;
    free(L);
    *up_first = uf;
    *up_head = uh;
    *m_out = (uint32_t)len;
    return GP_OK;
oom:
    gp_err_set(err, GP_ENOMEM, "out of memory contracting %u nodes", n);
fail:
    if (L)
        for (uint32_t r = 0; r < n; r++) free(L[r].a);
    free(L);
    free(uf);
    free(uh);
    return err ? err->code : GP_ENOMEM;
}

static inline uint32_t find_edge(const gp_cch_topo *t, uint32_t lo, uint32_t hi) {
    uint32_t a = t->up_first[lo], b = t->up_first[lo + 1];
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (t->up_head[mid] < hi) a = mid + 1;
        else b = mid;
    }
    return a < t->up_first[lo + 1] && t->up_head[a] == hi ? a : GP_NONE;
}

static void pool_free(void *pv);

/* The weight and witness arrays of one gp_cch (topo->m edges each; wit twice). A cost change
 * makes a gp_cch a version, and the one it replaces is freed soon after: its arrays are kept
 * as the topology's spare (one set) for the next, so that the next cost change writes into
 * pages already mapped instead of faulting in fresh zeroed ones (clear_page was a third of the
 * CPU time from PATCH to the new CCH on the 1 M-node map). */
typedef struct wbufs {
    uint32_t *ofw, *obw, *fw, *bw, *fmid, *bmid;
    uint64_t *wit;
} wbufs;

static void wbufs_free(wbufs *b, int whole) {
    if (!b) return;
    free(b->ofw);
    free(b->obw);
    free(b->fw);
    free(b->bw);
    free(b->fmid);
    free(b->bmid);
    free(b->wit);
    if (whole) free(b);
}

void gp_cch_topo_unref(gp_cch_topo *t) {
    if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    wbufs_free(t->spare, 1);
    pool_free(t->pool);
    free(t->rank);
    free(t->order);
    free(t->up_first);
    free(t->up_head);
    free(t->up_tail);
    free(t->parent);
    free(t->tri_first);
    free(t->tri);
    free(t->level_first);
    free(t);
}

uint64_t gp_cch_topo_bytes(const gp_cch_topo *t) {
    if (!t) return 0;
    return (uint64_t)t->n * 4 * 4 + (uint64_t)t->m * 4 * 2 + ((uint64_t)t->m + 1) * 8 +
           t->ntri * 8 + ((uint64_t)t->nlevels + 1) * 4;
}

/* The completion under a new order that is a topological order of the elimination tree (ranks
 * sorted by level): the same chordal graph (Liu 1990: equivalent orderings have the same filled
 * graph), since every upper neighbour of a node is one of its elimination-tree ancestors, whose
 * relative order the new ranks keep; the parent (the nearest ancestor among them) stays the parent.
 * So the up lists are renamed and sorted rather than eliminated again. Ranks r2 in [b, e). */
typedef struct relabel_ctx {
    const uint32_t *uf, *uh, *par, *newrank, *old; /* old completion; newrank[r]; old[r2] */
    uint32_t *uf2, *uh2, *par2, *tail2;           /* new completion (uf2 filled beforehand) */
} relabel_ctx;

static void relabel_range(void *arg, uint64_t b, uint64_t e) {
    relabel_ctx *c = arg;
    for (uint64_t r2 = b; r2 < e; r2++) {
        uint32_t r = c->old[r2], d = c->uf[r + 1] - c->uf[r];
        uint32_t *dst = c->uh2 + c->uf2[r2];
        for (uint32_t k = 0; k < d; k++) {
            uint32_t x = c->newrank[c->uh[c->uf[r] + k]], j = k;
            while (j > 0 && dst[j - 1] > x) {
                dst[j] = dst[j - 1];
                j--;
            }
            dst[j] = x;
            c->tail2[c->uf2[r2] + k] = (uint32_t)r2;
        }
        c->par2[r2] = c->par[r] == GP_NONE ? GP_NONE : c->newrank[c->par[r]];
    }
}

/* Lower triangles of the nodes v in [b, e): pass 0 counts them per edge (tri_first[xy + 1]),
 * pass 1 stores them through the cursors tri_first[xy]; threads race only on those counters, so
 * the runs come out in any order and are sorted afterwards (tri_sort_range). */
typedef struct tri_ctx {
    gp_cch_topo *t;
    int pass;
    uint32_t bad; /* the lowest rank whose upper neighbours miss an edge (not chordal), or NONE */
} tri_ctx;

static void tri_range(void *arg, uint64_t b, uint64_t e) {
    tri_ctx *c = arg;
    gp_cch_topo *t = c->t;
    for (uint64_t v = b; v < e; v++) {
        uint32_t lo = t->up_first[v], hi = t->up_first[v + 1];
        for (uint32_t i = lo; i < hi; i++) {
            for (uint32_t j = i + 1; j < hi; j++) {
                uint32_t xy = find_edge(t, t->up_head[i], t->up_head[j]);
                if (xy == GP_NONE) {
                    uint32_t cur = __atomic_load_n(&c->bad, __ATOMIC_RELAXED);
                    while (v < cur && !__atomic_compare_exchange_n(&c->bad, &cur, (uint32_t)v, 0,
                                                                   __ATOMIC_RELAXED,
                                                                   __ATOMIC_RELAXED)) {
                    }
                    continue;
                }
                if (c->pass == 0) {
                    __atomic_fetch_add(&t->tri_first[xy + 1], 1, __ATOMIC_RELAXED);
                } else {
                    uint64_t k = __atomic_fetch_add(&t->tri_first[xy], 1, __ATOMIC_RELAXED);
                    t->tri[2 * k] = i;
                    t->tri[2 * k + 1] = j;
                }
            }
        }
    }
}

static int cmp_pair(const void *a, const void *b) {
    return cmp_u32(a, b); /* by the first entry (the edge {v,x}: v ascending); unique per edge */
}

/* Each edge's triangles in [b, e) sorted by v (their first edge's id ascends with v). */
static void tri_sort_range(void *arg, uint64_t b, uint64_t e) {
    gp_cch_topo *t = arg;
    for (uint64_t x = b; x < e; x++) {
        uint32_t *p = t->tri + 2 * t->tri_first[x];
        uint64_t len = t->tri_first[x + 1] - t->tri_first[x];
        if (len > 32) {
            qsort(p, len, 2 * sizeof *p, cmp_pair);
            continue;
        }
        for (uint64_t i = 1; i < len; i++) {
            uint32_t a = p[2 * i], c = p[2 * i + 1];
            uint64_t j = i;
            while (j > 0 && p[2 * (j - 1)] > a) {
                p[2 * j] = p[2 * (j - 1)];
                p[2 * j + 1] = p[2 * (j - 1) + 1];
                j--;
            }
            p[2 * j] = a;
            p[2 * j + 1] = c;
        }
    }
}

int gp_cch_topo_build(const gp_graph *g, const uint32_t *rank_in, gp_cch_topo **out,
                      gp_err *err) {
    double t0 = gp_now();
    uint32_t n = g->n;
    uint32_t *first = NULL, *adj = NULL, *lvl = NULL, *cnt = NULL;
    gp_cch_topo *t = calloc(1, sizeof *t);
    int rc = GP_ENOMEM;
    if (!t) return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH");
    t->refs = 1;
    t->n = n;
    t->rank = malloc((size_t)n * sizeof *t->rank);
    t->order = malloc((size_t)n * sizeof *t->order);
    t->parent = malloc((size_t)n * sizeof *t->parent);
    lvl = calloc(n, sizeof *lvl);
    if (!t->rank || !t->order || !t->parent || !lvl) goto oom;
    /* the order must be a permutation */
    for (uint32_t v = 0; v < n; v++) t->order[v] = GP_NONE;
    for (uint32_t v = 0; v < n; v++) {
        if (rank_in[v] >= n || t->order[rank_in[v]] != GP_NONE) {
            rc = gp_err_set(err, GP_EINVAL, "CCH order is not a permutation of %u nodes", n);
            goto fail;
        }
        t->order[rank_in[v]] = v;
    }
    double ph[5]; /* phase ends, for the debug log */
    if ((rc = gp_cch_skeleton(g, &first, &adj, err))) goto fail;
    ph[0] = gp_now();
    if ((rc = chordal(n, first, adj, rank_in, &t->up_first, &t->up_head, &t->m, t->parent, err)))
        goto fail;
    ph[1] = gp_now();
    /* levels, then ranks sorted by (level, rank) */
    uint32_t nl = 0;
    for (uint32_t r = 0; r < n; r++) {
        for (uint32_t e = t->up_first[r]; e < t->up_first[r + 1]; e++)
            if (lvl[t->up_head[e]] < lvl[r] + 1) lvl[t->up_head[e]] = lvl[r] + 1;
        if (lvl[r] + 1 > nl) nl = lvl[r] + 1;
    }
    cnt = calloc((size_t)nl + 1, sizeof *cnt);
    if (!cnt) goto oom;
    for (uint32_t r = 0; r < n; r++) cnt[lvl[r] + 1]++;
    for (uint32_t l = 0; l < nl; l++) cnt[l + 1] += cnt[l];
    t->nlevels = nl;
    t->level_first = malloc(((size_t)nl + 1) * sizeof *t->level_first);
    if (!t->level_first) goto oom;
    memcpy(t->level_first, cnt, ((size_t)nl + 1) * sizeof *cnt);
    /* newrank[old rank] through the counting sort; rank[v] = newrank[rank_in[v]]; the completion
     * renamed (relabel_range) */
    uint32_t *newrank = t->order, *old = lvl; /* reuse: order is rebuilt, lvl recomputed below */
    for (uint32_t r = 0; r < n; r++) newrank[r] = cnt[lvl[r]]++;
    for (uint32_t r = 0; r < n; r++) old[newrank[r]] = r;
    for (uint32_t v = 0; v < n; v++) t->rank[v] = newrank[rank_in[v]];
    ph[2] = gp_now();
    free(first);
    free(adj);
    first = adj = NULL;
    relabel_ctx rl = {t->up_first, t->up_head, t->parent, newrank, old, NULL, NULL, NULL, NULL};
    rl.uf2 = big_malloc(((size_t)n + 1) * sizeof *rl.uf2);
    rl.uh2 = big_malloc(((size_t)t->m + 1) * sizeof *rl.uh2);
    rl.par2 = big_malloc((size_t)n * sizeof *rl.par2);
    t->up_tail = rl.tail2 = malloc(((size_t)t->m + 1) * sizeof *t->up_tail);
    if (!rl.uf2 || !rl.uh2 || !rl.par2 || !t->up_tail) {
        free(rl.uf2);
        free(rl.uh2);
        free(rl.par2);
        goto oom;
    }
    rl.uf2[0] = 0;
    for (uint32_t r2 = 0; r2 < n; r2++)
        rl.uf2[r2 + 1] = rl.uf2[r2] + (t->up_first[old[r2] + 1] - t->up_first[old[r2]]);
    gp_parallel_for(n, 0, relabel_range, &rl);
    free(t->up_first);
    free(t->up_head);
    free(t->parent);
    t->up_first = rl.uf2;
    t->up_head = rl.uh2;
    t->parent = rl.par2;
    for (uint32_t v = 0; v < n; v++) t->order[t->rank[v]] = v;
    ph[3] = gp_now();
    /* the level of every rank must be unchanged: recompute and check contiguity */
    memset(lvl, 0, (size_t)n * sizeof *lvl);
    t->width = t->height = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t d = t->up_first[r + 1] - t->up_first[r];
        if (d > t->width) t->width = d;
        for (uint32_t e = t->up_first[r]; e < t->up_first[r + 1]; e++)
            if (lvl[t->up_head[e]] < lvl[r] + 1) lvl[t->up_head[e]] = lvl[r] + 1;
        if (r < t->level_first[lvl[r]] || r >= t->level_first[lvl[r] + 1]) {
            rc = gp_err_set(err, GP_EINVAL, "CCH levels changed after re-ranking (rank %u)", r);
            goto fail;
        }
    }
    t->height = nl;
    t->tri_first = calloc((size_t)t->m + 1, sizeof *t->tri_first);
    if (!t->tri_first) goto oom;
    /* lower triangles: for each v and pair x < y of its upper neighbours, v is a lower triangle
     * of {x, y} (an edge of the chordal graph); their number is known up front */
    uint64_t ntri = 0;
    for (uint32_t v = 0; v < n; v++) {
        uint64_t d = t->up_first[v + 1] - t->up_first[v];
        ntri += d * (d - (d > 0)) / 2;
    }
    if (ntri > tri_limit(n)) {
        rc = gp_err_set(err, GP_ETOOBIG,
                        "the CCH of %u nodes would have %llu triangles (over %u per node): the "
                        "graph is not road-like (cch_max_triangles_per_node)",
                        n, (unsigned long long)ntri, max_tri_per_node);
        goto fail;
    }
    tri_ctx tc = {t, 0, GP_NONE};
    for (tc.pass = 0; tc.pass < 2; tc.pass++) {
        gp_parallel_for(n, 0, tri_range, &tc);
        if (tc.bad != GP_NONE) {
            rc = gp_err_set(err, GP_EINVAL, "CCH is not chordal at rank %u", tc.bad);
            goto fail;
        }
        if (tc.pass == 0) {
            for (uint32_t e = 0; e < t->m; e++) t->tri_first[e + 1] += t->tri_first[e];
            t->ntri = t->tri_first[t->m];
            t->tri = malloc((t->ntri * 2 + 1) * sizeof *t->tri);
            if (!t->tri) goto oom;
        } else {
            /* tri_first[e] now holds the end of e's run: shift back */
            for (uint32_t e = t->m; e > 0; e--) t->tri_first[e] = t->tri_first[e - 1];
            t->tri_first[0] = 0;
        }
    }
    gp_parallel_for(t->m, 0, tri_sort_range, t);
    free(lvl);
    free(cnt);
    t->contract_s = gp_now() - t0;
    ph[4] = gp_now();
    GP_LOG(GP_LOG_DEBUG,
           "cch_contract nodes=%u skeleton_s=%.2f chordal_s=%.2f levels_s=%.2f relabel_s=%.2f "
           "triangles_s=%.2f",
           n, ph[0] - t0, ph[1] - ph[0], ph[2] - ph[1], ph[3] - ph[2], ph[4] - ph[3]);
    *out = t;
    return GP_OK;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory building the CCH of %u nodes", n);
fail:
    free(first);
    free(adj);
    free(lvl);
    free(cnt);
    gp_cch_topo_unref(t);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Topology cache */

#define CACHE_MAX 4
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static gp_cch_topo *cache[CACHE_MAX];

static void cache_put(gp_cch_topo *t) {
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&cache_mu);
    gp_cch_topo *drop = cache[CACHE_MAX - 1];
    memmove(cache + 1, cache, (CACHE_MAX - 1) * sizeof *cache);
    cache[0] = t;
    pthread_mutex_unlock(&cache_mu);
    gp_cch_topo_unref(drop);
}

void gp_cch_cache_clear(void) {
    gp_cch_topo *old[CACHE_MAX];
    pthread_mutex_lock(&cache_mu);
    memcpy(old, cache, sizeof old);
    memset(cache, 0, sizeof cache);
    pthread_mutex_unlock(&cache_mu);
    for (int i = 0; i < CACHE_MAX; i++) gp_cch_topo_unref(old[i]);
}

/* ---------------------------------------------------------------------------------------------
 * Metric and customization */

/* Maps the arcs of nodes [lo, hi) of g onto c's edges; returns the first node with an arc that
 * is not a CCH edge (its tail), or GP_NONE. An edge's up slot (ofw) is written only by arcs of its
 * lower end and its down slot (obw) only by arcs of its higher end, so node ranges never share a
 * slot and run on threads side by side. */
static uint32_t map_range(gp_cch *c, const gp_graph *g, uint32_t lo, uint32_t hi, uint32_t *bad_v) {
    const gp_cch_topo *t = c->topo;
    for (uint32_t u = lo; u < hi; u++) {
        uint32_t ru = t->rank[u];
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == u) continue;
            uint32_t rv = t->rank[v], w = g->w[a];
            uint32_t e = ru < rv ? find_edge(t, ru, rv) : find_edge(t, rv, ru);
            if (e == GP_NONE) {
                *bad_v = v;
                return u;
            }
            uint32_t *slot = ru < rv ? &c->ofw[e] : &c->obw[e];
            if (w < *slot) *slot = w;
        }
    }
    return GP_NONE;
}

typedef struct map_ctx {
    gp_cch *c;
    const gp_graph *g;
    pthread_mutex_t mu;
    uint32_t bad_u, bad_v; /* the lowest tail with an arc that is not a CCH edge */
} map_ctx;

static void map_ranges(void *cv, uint64_t lo, uint64_t hi) {
    map_ctx *m = cv;
    uint32_t v = GP_NONE, u = map_range(m->c, m->g, (uint32_t)lo, (uint32_t)hi, &v);
    if (u == GP_NONE) return;
    pthread_mutex_lock(&m->mu);
    if (m->bad_u == GP_NONE || u < m->bad_u) m->bad_u = u, m->bad_v = v;
    pthread_mutex_unlock(&m->mu);
}

static void inf_ranges(void *cv, uint64_t lo, uint64_t hi) {
    gp_cch *c = cv;
    for (uint64_t e = lo; e < hi; e++) c->ofw[e] = c->obw[e] = GP_CCH_INF;
}

int gp_cch_map_metric(gp_cch *c, const gp_graph *g, gp_err *err) {
    const gp_cch_topo *t = c->topo;
    gp_parallel_for(t->m, t->m >= (1u << 20) ? 0 : 1, inf_ranges, c);
    /* a reweighted road graph maps 2-20 M arcs on every cost change: on all CPUs */
    map_ctx m = {c, g, PTHREAD_MUTEX_INITIALIZER, GP_NONE, GP_NONE};
    gp_parallel_for(g->n, g->m >= (1u << 18) ? 0 : 1, map_ranges, &m);
    pthread_mutex_destroy(&m.mu);
    if (m.bad_u != GP_NONE)
        return gp_err_set(err, GP_EINVAL, "arc %u->%u is not an edge of the CCH", m.bad_u,
                          m.bad_v);
    return GP_OK;
}

/* Customizes edges [lo, hi) into fw/bw and the witnesses fmid/bmid (the offset of the first lower
 * triangle realising the weight within the edge's triangles; GP_NONE when the original arc does);
 * returns the first edge whose weight overflowed, or GP_NONE. */
static uint32_t customize_range(const gp_cch_topo *t, const uint32_t *ofw, const uint32_t *obw,
                                uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                                uint32_t lo, uint32_t hi) {
    uint32_t bad = GP_NONE;
    for (uint32_t e = lo; e < hi; e++) {
        uint32_t f = ofw[e], b = obw[e], fm = GP_NONE, bm = GP_NONE;
        int of = 0, ob = 0;
        uint64_t k0 = t->tri_first[e];
        for (uint64_t k = k0; k < t->tri_first[e + 1]; k++) {
            uint32_t e1 = t->tri[2 * k], e2 = t->tri[2 * k + 1]; /* {v,x}, {v,y} */
            uint32_t a1 = bw[e1], b2 = fw[e2], a2 = bw[e2], b1 = fw[e1];
            if (a1 != GP_CCH_INF && b2 != GP_CCH_INF) {
                uint32_t s = sat_add(a1, b2);
                if (s == GP_CCH_INF) of = 1;
                else if (s < f) f = s, fm = (uint32_t)(k - k0);
            }
            if (a2 != GP_CCH_INF && b1 != GP_CCH_INF) {
                uint32_t s = sat_add(a2, b1);
                if (s == GP_CCH_INF) ob = 1;
                else if (s < b) b = s, bm = (uint32_t)(k - k0);
            }
        }
        fw[e] = f;
        bw[e] = b;
        fmid[e] = fm;
        bmid[e] = bm;
        if (((of && f == GP_CCH_INF) || (ob && b == GP_CCH_INF)) && bad == GP_NONE) bad = e;
    }
    return bad;
}

/* Packed witnesses for path unpacking, from fmid/bmid: one 8-byte read per shortcut step. Original
 * arc: WIT_ORIG | the node (original id) it leads to; shortcut: e1 << 32 | e2 of its triangle. */
#define WIT_ORIG (1ULL << 63)
static void witnesses_range(gp_cch *c, uint32_t lo, uint32_t hi) {
    const gp_cch_topo *t = c->topo;
    for (uint32_t e = lo; e < hi; e++) {
        uint64_t k0 = t->tri_first[e];
        c->wit[2 * (size_t)e + 1] = c->fmid[e] == GP_NONE
                         ? WIT_ORIG | t->order[t->up_head[e]]
                         : (uint64_t)t->tri[2 * (k0 + c->fmid[e])] << 32 | t->tri[2 * (k0 + c->fmid[e]) + 1];
        c->wit[2 * (size_t)e] = c->bmid[e] == GP_NONE
                         ? WIT_ORIG | t->order[t->up_tail[e]]
                         : (uint64_t)t->tri[2 * (k0 + c->bmid[e])] << 32 | t->tri[2 * (k0 + c->bmid[e]) + 1];
    }
}

static void perfect_drop(gp_cch *c);

static void wit_ranges(void *c, uint64_t lo, uint64_t hi) {
    witnesses_range(c, (uint32_t)lo, (uint32_t)hi);
}

/* After a GPU customization (each edge reads its triangles at random): on all CPUs. */
void gp_cch_witnesses(gp_cch *c) {
    perfect_drop(c);
    gp_parallel_for(c->topo->m, c->topo->m >= (1u << 20) ? 0 : 1, wit_ranges, c);
}

static int overflow_error(uint32_t e, gp_err *err) {
    return gp_err_set(err, GP_ETOOBIG,
                      "CCH customization: shortcut %u would exceed 2^32-1 weight units", e);
}

int gp_cch_customize_serial(const gp_cch_topo *t, const uint32_t *ofw, const uint32_t *obw,
                            uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                            gp_err *err) {
    uint32_t bad = customize_range(t, ofw, obw, fw, bw, fmid, bmid, 0, t->m);
    return bad == GP_NONE ? GP_OK : overflow_error(bad, err);
}

/* A team of threads working level by level with a barrier between levels: fn(job, id, nthreads)
 * runs on every member, this thread as id 0. The members wait at a gate until the team is known,
 * so a thread that fails to start only makes the team smaller. */
typedef struct team {
    void (*fn)(void *job, int id, int nthreads);
    void *job;
    int n;
    pthread_barrier_t bar;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} team;

typedef struct team_member {
    team *tm;
    int id;
} team_member;

static void *team_main(void *arg) {
    team_member *me = arg;
    team *tm = me->tm;
    pthread_mutex_lock(&tm->mu);
    while (!tm->go) pthread_cond_wait(&tm->cv, &tm->mu);
    pthread_mutex_unlock(&tm->mu);
    tm->fn(tm->job, me->id, tm->n);
    return NULL;
}

static void team_run(int nt, void (*fn)(void *job, int id, int nthreads), void *job,
                     pthread_barrier_t **bar) {
    team tm;
    team_member mem[256];
    pthread_t th[256];
    tm.fn = fn;
    tm.job = job;
    tm.go = 0;
    pthread_mutex_init(&tm.mu, NULL);
    pthread_cond_init(&tm.cv, NULL);
    int started = 1;
    for (int i = 1; i < nt; i++) {
        mem[started].tm = &tm;
        mem[started].id = started;
        if (pthread_create(&th[started], NULL, team_main, &mem[started]) != 0) break;
        started++;
    }
    tm.n = started;
    pthread_barrier_init(&tm.bar, NULL, (unsigned)started);
    *bar = &tm.bar;
    pthread_mutex_lock(&tm.mu);
    tm.go = 1;
    pthread_cond_broadcast(&tm.cv);
    pthread_mutex_unlock(&tm.mu);
    fn(job, 0, started);
    for (int i = 1; i < started; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&tm.bar);
    pthread_cond_destroy(&tm.cv);
    pthread_mutex_destroy(&tm.mu);
}

/* The part [a, b) of [lo, hi) that member id of parts takes. */
static inline void team_part(uint64_t lo, uint64_t hi, int id, int parts, uint32_t *a, uint32_t *b) {
    *a = (uint32_t)(lo + (hi - lo) * (uint64_t)id / (uint64_t)parts);
    *b = (uint32_t)(lo + (hi - lo) * (uint64_t)(id + 1) / (uint64_t)parts);
}

typedef struct cust_job {
    gp_cch *c;
    pthread_barrier_t *bar;
    atomic_uint bad;
    atomic_int timed_out;
    double deadline;
} cust_job;

static void cust_main(void *arg, int id, int nthreads) {
    cust_job *j = arg;
    const gp_cch_topo *t = j->c->topo;
    for (uint32_t l = 0; l < t->nlevels; l++) {
        uint64_t lo = t->up_first[t->level_first[l]], hi = t->up_first[t->level_first[l + 1]];
        /* small levels: one thread, no point splitting */
        int parts = hi - lo < 2048 ? 1 : nthreads;
        if (id < parts && !atomic_load(&j->timed_out)) {
            uint32_t a, b;
            team_part(lo, hi, id, parts, &a, &b);
            uint32_t bad = customize_range(t, j->c->ofw, j->c->obw, j->c->fw, j->c->bw,
                                           j->c->fmid, j->c->bmid, a, b);
            if (bad != GP_NONE) {
                unsigned none = GP_NONE;
                atomic_compare_exchange_strong(&j->bad, &none, bad);
            }
            if (id == 0 && j->deadline > 0 && gp_now() > j->deadline)
                atomic_store(&j->timed_out, 1);
        }
        pthread_barrier_wait(j->bar);
    }
    uint32_t a, b;
    team_part(0, t->m, id, nthreads, &a, &b);
    witnesses_range(j->c, a, b);
}

int gp_cch_customize(gp_cch *c, int threads, gp_err *err) {
    double t0 = gp_now();
    int nt = gp_cch_threads(threads);
    if (c->topo->m < 65536) nt = 1;
    perfect_drop(c);
    cust_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.deadline = gp_deadline_get();
    atomic_init(&j.bad, GP_NONE);
    atomic_init(&j.timed_out, 0);
    team_run(nt, cust_main, &j, &j.bar);
    if (atomic_load(&j.timed_out)) return gp_deadline_error(err);
    uint32_t bad = atomic_load(&j.bad);
    if (bad != GP_NONE) return overflow_error(bad, err);
    c->custom_s = gp_now() - t0;
    snprintf(c->custom_on, sizeof c->custom_on, "cpu");
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Perfect customization */

/* *a = min(*a, b + c) over finite b, c. */
static inline void relax_tri(uint32_t *a, uint32_t b, uint32_t c) {
    if (b != GP_CCH_INF && c != GP_CCH_INF && (uint64_t)b + c < *a) *a = b + c;
}

/* Rank x's edges in pf/pb (basic weights on entry, every edge of a higher rank perfect) made
 * perfect: for each pair y < z of x's upper neighbours, {y, z} is an edge (the graph is chordal)
 * found by a merge along y's edges; triangle {x, y, z} is an upper one of {x, y} and an
 * intermediate one of {x, z}. The order of the relaxations does not matter: a shortest up-down
 * path x -> y starts with an arc x -> z of its basic weight, followed by a shortest z -> y path, so
 * relaxing over z with any weight of {x, z} between the exact and the basic one reaches the
 * distance. */
static void perfect_node(const gp_cch_topo *t, uint32_t *pf, uint32_t *pb, uint32_t x) {
    uint32_t b = t->up_first[x], e = t->up_first[x + 1];
    for (uint32_t i = b; i < e; i++) {
        uint32_t y = t->up_head[i], p = t->up_first[y], pe = t->up_first[y + 1];
        for (uint32_t j = i + 1; j < e; j++) {
            uint32_t z = t->up_head[j];
            while (p < pe && t->up_head[p] < z) p++;
            if (p == pe || t->up_head[p] != z) break; /* not chordal: cannot happen */
            uint32_t fyz = pf[p], byz = pb[p];
            relax_tri(&pf[i], pf[j], byz); /* x -> z -> y */
            relax_tri(&pb[i], fyz, pb[j]); /* y -> z -> x */
            relax_tri(&pf[j], pf[i], fyz); /* x -> y -> z */
            relax_tri(&pb[j], byz, pb[i]); /* z -> y -> x */
        }
    }
}

void gp_cch_perfect_serial(const gp_cch_topo *t, const uint32_t *fw, const uint32_t *bw,
                           uint32_t *pfw, uint32_t *pbw) {
    memcpy(pfw, fw, (size_t)t->m * 4);
    memcpy(pbw, bw, (size_t)t->m * 4);
    for (uint32_t x = t->n; x > 0; x--) perfect_node(t, pfw, pbw, x - 1);
}

static void arcs_free(gp_cch_arcs *q) {
    if (!q) return;
    for (int d = 0; d < 2; d++) {
        free(q[d].first);
        free(q[d].head);
        free(q[d].w);
        free(q[d].edge);
    }
    free(q);
}

/* An arc is kept when its basic weight is finite and exact. */
static inline int perfect_keeps(uint32_t basic, uint32_t perfect) {
    return basic != GP_CCH_INF && basic == perfect;
}

#define PERF_STOPPED (-1) /* a background pass told to stop */

typedef struct perf_job {
    const gp_cch *c;
    uint32_t *pf, *pb;  /* perfect weights */
    gp_cch_arcs *q;     /* built here; first[x+1] counts x's kept arcs until the prefix sums */
    pthread_barrier_t *bar;
    atomic_int failed;  /* GP_ENOMEM, GP_ETIMEOUT, or PERF_STOPPED */
    atomic_int *stop;   /* set by perfect_drop for a background pass, else NULL */
    double deadline;
} perf_job;

/* The ranks [a, b) of [lo, hi) that member id of parts takes, cut where the edges divide evenly. */
static void perf_part(const gp_cch_topo *t, uint32_t lo, uint32_t hi, int id, int parts,
                      uint32_t *a, uint32_t *b) {
    uint32_t ea, eb, r[2];
    team_part(t->up_first[lo], t->up_first[hi], id, parts, &ea, &eb);
    uint32_t want[2] = {ea, eb};
    for (int k = 0; k < 2; k++) { /* the first rank in [lo, hi] whose edges start at or after */
        uint32_t x = lo, y = hi;
        while (x < y) {
            uint32_t mid = x + (y - x) / 2;
            if (t->up_first[mid] < want[k]) x = mid + 1;
            else y = mid;
        }
        r[k] = x;
    }
    *a = id == 0 ? lo : r[0];
    *b = id == parts - 1 ? hi : r[1];
}

static void perf_main(void *arg, int id, int nthreads) {
    perf_job *j = arg;
    const gp_cch *c = j->c;
    const gp_cch_topo *t = c->topo;
    for (uint32_t l = t->nlevels; l > 0; l--) {
        uint32_t lo = t->level_first[l - 1], hi = t->level_first[l];
        int parts = t->up_first[hi] - t->up_first[lo] < 2048 ? 1 : nthreads;
        if (id < parts && !atomic_load(&j->failed)) {
            uint32_t a, b;
            perf_part(t, lo, hi, id, parts, &a, &b);
            uint32_t ea = t->up_first[a], eb = t->up_first[b];
            memcpy(j->pf + ea, c->fw + ea, (size_t)(eb - ea) * 4);
            memcpy(j->pb + ea, c->bw + ea, (size_t)(eb - ea) * 4);
            for (uint32_t x = a; x < b; x++) {
                perfect_node(t, j->pf, j->pb, x);
                uint32_t kf = 0, kb = 0;
                for (uint32_t e = t->up_first[x]; e < t->up_first[x + 1]; e++) {
                    kf += perfect_keeps(c->fw[e], j->pf[e]);
                    kb += perfect_keeps(c->bw[e], j->pb[e]);
                }
                j->q[1].first[x + 1] = kf;
                j->q[0].first[x + 1] = kb;
            }
            if (id == 0 && j->deadline > 0 && gp_now() > j->deadline)
                atomic_store(&j->failed, GP_ETIMEOUT);
            if (id == 0 && j->stop && atomic_load(j->stop)) atomic_store(&j->failed, PERF_STOPPED);
        }
        pthread_barrier_wait(j->bar);
    }
    if (id == 0 && !atomic_load(&j->failed)) {
        for (int d = 0; d < 2; d++) {
            gp_cch_arcs *q = &j->q[d];
            q->first[0] = 0;
            for (uint32_t x = 0; x < t->n; x++) q->first[x + 1] += q->first[x];
            size_t k = (size_t)q->first[t->n] + 1;
            q->head = big_malloc(k * 4);
            q->w = big_malloc(k * 4);
            q->edge = big_malloc(k * 4);
            if (!q->head || !q->w || !q->edge) atomic_store(&j->failed, GP_ENOMEM);
        }
    }
    pthread_barrier_wait(j->bar);
    if (atomic_load(&j->failed)) return;
    uint32_t a, b;
    perf_part(t, 0, t->n, id, nthreads, &a, &b);
    for (int d = 0; d < 2; d++) {
        gp_cch_arcs *q = &j->q[d];
        const uint32_t *basic = d ? c->fw : c->bw, *perf = d ? j->pf : j->pb;
        uint32_t k = q->first[a];
        for (uint32_t e = t->up_first[a]; e < t->up_first[b]; e++) {
            if (!perfect_keeps(basic[e], perf[e])) continue;
            q->head[k] = t->up_head[e];
            q->w[k] = basic[e];
            q->edge[k++] = e;
        }
    }
}

/* The pass into *out (NULL on failure): GP_OK or the failure's code. */
static int perfect_run(const gp_cch *c, int threads, double deadline, atomic_int *stop,
                       gp_cch_arcs **out) {
    const gp_cch_topo *t = c->topo;
    int nt = gp_cch_threads(threads);
    if (t->m < 65536) nt = 1;
    perf_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.deadline = deadline;
    j.stop = stop;
    atomic_init(&j.failed, 0);
    j.pf = malloc(((size_t)t->m + 1) * 4);
    j.pb = malloc(((size_t)t->m + 1) * 4);
    j.q = calloc(2, sizeof *j.q);
    if (j.q) {
        j.q[0].first = big_malloc(((size_t)t->n + 1) * 4);
        j.q[1].first = big_malloc(((size_t)t->n + 1) * 4);
    }
    if (!j.pf || !j.pb || !j.q || !j.q[0].first || !j.q[1].first) atomic_store(&j.failed, GP_ENOMEM);
    else team_run(nt, perf_main, &j, &j.bar);
    free(j.pf);
    free(j.pb);
    int rc = atomic_load(&j.failed);
    if (rc) {
        arcs_free(j.q);
        j.q = NULL;
    }
    *out = j.q;
    return rc;
}

typedef struct perf_bg {
    gp_cch *c;
    int threads;
    atomic_int stop;
    pthread_t th;
} perf_bg;

static void *perf_bg_main(void *arg) {
    perf_bg *bg = arg;
    gp_cch_arcs *q = NULL;
    /* background work: below the requests and the next cost change (Linux keeps a nice value
     * per thread, and the pass's team threads inherit this one's) */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    double t0 = gp_now();
    if (perfect_run(bg->c, bg->threads, 0, &bg->stop, &q) == GP_OK) {
        bg->c->perfect_s = gp_now() - t0;
        __atomic_store_n(&bg->c->q, q, __ATOMIC_RELEASE);
    }
    return NULL;
}

void gp_cch_perfect_wait(gp_cch *c) {
    perf_bg *bg = c->perfect_bg;
    if (!bg) return;
    pthread_join(bg->th, NULL);
    free(bg);
    c->perfect_bg = NULL;
}

/* Stops a background pass and drops the query arcs (new weights make them stale). */
static void perfect_drop(gp_cch *c) {
    perf_bg *bg = c->perfect_bg;
    if (bg) atomic_store(&bg->stop, 1);
    gp_cch_perfect_wait(c);
    arcs_free(c->q);
    c->q = NULL;
    c->perfect_s = 0;
}

int gp_cch_perfect(gp_cch *c, int threads, gp_err *err) {
    double t0 = gp_now();
    perfect_drop(c);
    gp_cch_arcs *q = NULL;
    int rc = perfect_run(c, threads, gp_deadline_get(), NULL, &q);
    if (rc == GP_ETIMEOUT) return gp_deadline_error(err);
    if (rc)
        return gp_err_set(err, GP_ENOMEM, "out of memory for the perfect customization of %u "
                                          "edges", c->topo->m);
    c->q = q;
    c->perfect_s = gp_now() - t0;
    return GP_OK;
}

int gp_cch_perfect_start(gp_cch *c, int threads, gp_err *err) {
    perfect_drop(c);
    perf_bg *bg = calloc(1, sizeof *bg);
    if (!bg) return gp_err_set(err, GP_ENOMEM, "out of memory for a perfect customization");
    bg->c = c;
    bg->threads = threads;
    atomic_init(&bg->stop, 0);
    if (pthread_create(&bg->th, NULL, perf_bg_main, bg) != 0) {
        free(bg);
        return gp_err_set(err, GP_ENOMEM, "cannot start the perfect customization thread");
    }
    c->perfect_bg = bg;
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Workspaces */

typedef struct cws {
    uint64_t *df, *db;   /* n, GP_INF when untouched */
    uint32_t *pf, *pb;   /* n: the rank whose arc reached the node (GP_NONE) */
    uint8_t *of, *ob;    /* n: the end a label of a query between sets comes from (read only
                          * where df / db is set) */
    uint64_t *sweep;     /* n, PHAST (allocated on first use) */
    uint32_t *uit, *ukid, *upos; /* ucap each: path unpacking's tree (unpack) */
    uint32_t ucap;
    struct cws *next;
} cws;

typedef struct cpool {
    pthread_mutex_t mu;
    cws *free;
    uint32_t n;
} cpool;

static void cws_free(cws *w) {
    if (!w) return;
    free(w->df);
    free(w->db);
    free(w->pf);
    free(w->pb);
    free(w->of);
    free(w->ob);
    free(w->sweep);
    free(w->uit);
    free(w->ukid);
    free(w->upos);
    free(w);
}

static cws *cws_get(const gp_cch *c, gp_err *err) {
    cpool *p = c->pool;
    pthread_mutex_lock(&p->mu);
    cws *w = p->free;
    if (w) p->free = w->next;
    pthread_mutex_unlock(&p->mu);
    if (w) return w;
    uint32_t n = p->n;
    w = calloc(1, sizeof *w);
    if (w) {
        w->df = big_malloc((size_t)n * sizeof *w->df);
        w->db = big_malloc((size_t)n * sizeof *w->db);
        w->pf = big_malloc((size_t)n * sizeof *w->pf);
        w->pb = big_malloc((size_t)n * sizeof *w->pb);
        w->of = malloc(n);
        w->ob = malloc(n);
    }
    if (!w || !w->df || !w->db || !w->pf || !w->pb || !w->of || !w->ob) {
        cws_free(w);
        gp_err_set(err, GP_ENOMEM, "out of memory for a CCH query workspace");
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) w->df[i] = w->db[i] = GP_INF;
    return w;
}

/* Room for k nodes in w's unpacking tree. */
static int ws_reserve(cws *w, uint32_t k) {
    if (k <= w->ucap) return 0;
    uint32_t nc = k < 1024 ? 1024 : k + k / 2;
    uint32_t *a = realloc(w->uit, (size_t)nc * 4);
    if (a) w->uit = a;
    uint32_t *b = a ? realloc(w->ukid, (size_t)nc * 4) : NULL;
    if (b) w->ukid = b;
    uint32_t *p = b ? realloc(w->upos, (size_t)nc * 4) : NULL;
    if (p) w->upos = p;
    if (!p) return -1;
    w->ucap = nc;
    return 0;
}

static void cws_put(const gp_cch *c, cws *w) {
    cpool *p = c->pool;
    pthread_mutex_lock(&p->mu);
    w->next = p->free;
    p->free = w;
    pthread_mutex_unlock(&p->mu);
}

/* ---------------------------------------------------------------------------------------------
 * Construction */

/* The workspace pool of topology t, shared by every gp_cch over it: a workspace holds no metric
 * (a query leaves it as it found it), so a new graph version's first query takes a warm one
 * instead of allocating and clearing n-sized arrays. Created with
 * the first gp_cch; freed with the topology (gp_cch_topo_unref). */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static cpool *topo_pool(gp_cch_topo *t) {
    pthread_mutex_lock(&pool_mu);
    cpool *p = t->pool;
    if (!p && (p = calloc(1, sizeof *p))) {
        pthread_mutex_init(&p->mu, NULL);
        p->n = t->n;
        t->pool = p;
    }
    pthread_mutex_unlock(&pool_mu);
    return p;
}

static void pool_free(void *pv) {
    cpool *p = pv;
    if (!p) return;
    while (p->free) {
        cws *w = p->free;
        p->free = w->next;
        cws_free(w);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void gp_cch_free(void *pc) {
    gp_cch *c = pc;
    if (!c) return;
    perfect_drop(c); /* stops a background pass, which reads the weights */
    if (c->gpu && c->gpu_free) c->gpu_free(c->gpu);
    wbufs set = {c->ofw, c->obw, c->fw, c->bw, c->fmid, c->bmid, c->wit}, *b = NULL;
    void *none = NULL;
    if (set.ofw && set.obw && set.fw && set.bw && set.fmid && set.bmid && set.wit &&
        (b = malloc(sizeof *b)) != NULL) {
        *b = set;
        if (!__atomic_compare_exchange_n(&c->topo->spare, &none, b, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            wbufs_free(b, 1); /* the topology has one already */
    } else {
        wbufs_free(&set, 0); /* a partial set (out of memory in cch_over), or no memory */
    }
    gp_cch_topo_unref(c->topo);
    free(c);
}

uint64_t gp_cch_bytes(const gp_cch *c) {
    /* ofw obw fw bw, fmid bmid (4 bytes each), wit (16) per edge; query arcs (12 each) */
    if (!c) return 0;
    uint64_t q = 0;
    const gp_cch_arcs *pq = published(c);
    for (int d = 0; pq && d < 2; d++) q += ((uint64_t)c->n + 1) * 4 + (uint64_t)pq[d].first[c->n] * 12;
    return (uint64_t)c->topo->m * 40 + q + gp_cch_topo_bytes(c->topo);
}

/* The weight and witness arrays of a new gp_cch written once on all CPUs: their pages are faulted
 * in by threads together rather than one by one by the copy from the GPU (a driver thread) and
 * the witness pass. */
static void first_touch(void *cv, uint64_t lo, uint64_t hi) {
    gp_cch *c = cv;
    size_t k = (size_t)(hi - lo);
    memset(c->fw + lo, 0, k * 4);
    memset(c->bw + lo, 0, k * 4);
    memset(c->fmid + lo, 0, k * 4);
    memset(c->bmid + lo, 0, k * 4);
    memset(c->wit + 2 * (size_t)lo, 0, k * 16);
}

/* A gp_cch over topology t (referenced) with g's metric; GP_EINVAL when g does not fit t. */
static int cch_over(gp_cch_topo *t, const gp_graph *g, gp_cch **out, gp_err *err) {
    gp_cch *c = calloc(1, sizeof *c);
    cpool *p = topo_pool(t);
    if (!c || !p) {
        free(c);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH");
    }
    c->pool = p;
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
    c->topo = t;
    c->n = g->n;
    c->m = g->m;
    c->graph_hash = g->hash;
    size_t m = (size_t)t->m + 1;
    wbufs *b = __atomic_exchange_n(&t->spare, NULL, __ATOMIC_ACQ_REL);
    if (b) { /* every array is written before it is read: map_metric, customization */
        c->ofw = b->ofw, c->obw = b->obw, c->fw = b->fw, c->bw = b->bw;
        c->fmid = b->fmid, c->bmid = b->bmid, c->wit = b->wit;
        free(b);
    } else {
        c->ofw = malloc(m * 4);
        c->obw = malloc(m * 4);
        c->fw = big_malloc(m * 4);
        c->bw = big_malloc(m * 4);
        c->fmid = malloc(m * 4);
        c->bmid = malloc(m * 4);
        c->wit = big_malloc(m * 16);
    }
    int rc;
    if (!c->ofw || !c->obw || !c->fw || !c->bw || !c->fmid || !c->bmid || !c->wit) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for CCH weights (%u edges)", t->m);
    } else {
        if (!b) gp_parallel_for(t->m, t->m >= (1u << 20) ? 0 : 1, first_touch, c);
        rc = gp_cch_map_metric(c, g, err);
    }
    if (rc) {
        gp_cch_free(c);
        return rc;
    }
    *out = c;
    return GP_OK;
}

int gp_cch_new(const gp_graph *g, int threads, gp_cch **out, gp_err *err) {
    gp_cch *c = NULL;
    int rc = gp_cch_prepare(g, &c, err);
    if (rc) return rc;
    rc = gp_cch_customize(c, threads, err);
    if (rc) {
        gp_cch_free(c);
        return rc;
    }
    *out = c;
    return GP_OK;
}

int gp_cch_prepare(const gp_graph *g, gp_cch **out, gp_err *err) {
    gp_cch *c = NULL;
    int rc;
    /* a cached topology that covers every arc of g */
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CACHE_MAX && !c; i++) {
        if (!cache[i] || cache[i]->n != g->n) continue;
        gp_err e2;
        gp_err_clear(&e2);
        if (cch_over(cache[i], g, &c, &e2) == GP_OK) {
            gp_cch_topo *hit = cache[i];
            memmove(cache + 1, cache, (size_t)i * sizeof *cache);
            cache[0] = hit;
            c->reused_topo = 1;
        }
    }
    pthread_mutex_unlock(&cache_mu);
    if (!c) {
        uint32_t *rank = malloc((size_t)g->n * sizeof *rank);
        if (!rank) return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH order");
        double t0 = gp_now();
        gp_cch_topo *t = NULL;
        rc = gp_cch_order(g, rank, err);
        double ord = gp_now() - t0;
        if (rc == GP_OK) rc = gp_cch_topo_build(g, rank, &t, err);
        free(rank);
        if (rc) return rc;
        t->order_s = ord;
        rc = cch_over(t, g, &c, err);
        if (rc == GP_OK) cache_put(t);
        gp_cch_topo_unref(t);
        if (rc) return rc;
    }
    *out = c;
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Serialised order */

#define ORDER_MAGIC "GPCCHORD"
#define ORDER_VERSION 1u

static uint64_t fingerprint(const gp_graph *g) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ g->n ^ ((uint64_t)g->m << 32);
    for (uint32_t i = 0; i <= g->n; i++) h = (h ^ g->row[i]) * 0x100000001b3ull;
    for (uint32_t i = 0; i < g->m; i++) h = (h ^ g->col[i]) * 0x100000001b3ull;
    return h;
}

static void put_le32(unsigned char *p, uint32_t x) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(x >> (8 * i));
}
static uint32_t get_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define ORDER_HDR 24

int gp_cch_order_encode(const uint32_t *rank, const gp_graph *g, void **out, uint64_t *size,
                        gp_err *err) {
    uint64_t sz = ORDER_HDR + (uint64_t)g->n * 4;
    unsigned char *p = malloc(sz);
    if (!p) return gp_err_set(err, GP_ENOMEM, "out of memory encoding the CCH order");
    memcpy(p, ORDER_MAGIC, 8);
    put_le32(p + 8, ORDER_VERSION);
    put_le32(p + 12, g->n);
    uint64_t fp = fingerprint(g);
    put_le32(p + 16, (uint32_t)fp);
    put_le32(p + 20, (uint32_t)(fp >> 32));
    for (uint32_t v = 0; v < g->n; v++) put_le32(p + ORDER_HDR + 4 * (uint64_t)v, rank[v]);
    *out = p;
    *size = sz;
    return GP_OK;
}

int gp_cch_order_decode(const gp_graph *g, const void *data, uint64_t size, gp_err *err) {
    const unsigned char *p = data;
    if (size < ORDER_HDR || memcmp(p, ORDER_MAGIC, 8) != 0)
        return gp_err_set(err, GP_EPARSE, "not a CCH order record");
    if (get_le32(p + 8) != ORDER_VERSION)
        return gp_err_set(err, GP_EPARSE, "CCH order record version %u (expected %u)",
                          get_le32(p + 8), ORDER_VERSION);
    uint64_t fp = (uint64_t)get_le32(p + 16) | (uint64_t)get_le32(p + 20) << 32;
    if (get_le32(p + 12) != g->n || fp != fingerprint(g))
        return gp_err_set(err, GP_EPARSE, "CCH order record is for another graph");
    if (size != ORDER_HDR + (uint64_t)g->n * 4)
        return gp_err_set(err, GP_EPARSE, "CCH order record has %llu bytes (expected %llu)",
                          (unsigned long long)size,
                          (unsigned long long)(ORDER_HDR + (uint64_t)g->n * 4));
    uint32_t *rank = malloc((size_t)g->n * sizeof *rank + 4);
    if (!rank) return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH order");
    for (uint32_t v = 0; v < g->n; v++) rank[v] = get_le32(p + ORDER_HDR + 4 * (uint64_t)v);
    gp_cch_topo *t = NULL;
    int rc = gp_cch_topo_build(g, rank, &t, err); /* checks that rank is a permutation */
    free(rank);
    if (rc) return rc;
    cache_put(t);
    gp_cch_topo_unref(t);
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Queries */

/* The upward arcs a query relaxes in one direction (dir 1: up over fw, 0: down over bw): the
 * perfect pass's kept arcs when there are some (edge: their CCH edge ids), else every CCH edge
 * (edge NULL: the position is the id). */
typedef struct qarcs {
    const uint32_t *first, *head, *w, *edge;
} qarcs;

static inline qarcs query_arcs(const gp_cch *c, const gp_cch_arcs *q, int dir) {
    if (q) return (qarcs){q[dir].first, q[dir].head, q[dir].w, q[dir].edge};
    return (qarcs){c->topo->up_first, c->topo->up_head, dir ? c->fw : c->bw, NULL};
}


/* Relaxes the upward arcs of x; a node it improves gets x as its predecessor in pe (its arc is
 * looked up when the path is built: reading the arc's edge id here missed the cache on every
 * improvement). o (a query between sets; NULL otherwise)
 * carries the end each label comes from, and an equal distance goes to the lower end, so that of
 * the pairs with the shortest route the query finds the first in (source, target) order, as a
 * loop over the pairs would. Inlined with a constant o, so the plain query pays nothing for it.
 * (Edges as (head, fw, bw) triples in one array were tried for the query: no gain above the
 * noise of a shared machine, for 12 more bytes per edge.) */
static inline __attribute__((always_inline)) void relax_q(const qarcs *q, uint32_t x, uint64_t *d,
                                                          uint32_t *pe, uint8_t *o) {
    uint64_t dx = d[x];
    uint8_t ox = o ? o[x] : 0;
    for (uint32_t a = q->first[x], end = q->first[x + 1]; a < end; a++) {
        uint32_t w = q->w[a];
        if (w == GP_CCH_INF) continue;
        uint32_t h = q->head[a];
        uint64_t nd = dx + w;
        if (nd < d[h] || (o && nd == d[h] && ox < o[h])) {
            d[h] = nd;
            pe[h] = x;
            if (o) o[h] = ox;
        }
    }
}

/* relax_q for one end (o = NULL) with AVX-512 (x86-64 GCC/Clang; used where the CPU has
 * AVX-512F and VL, see simd_ok): eight arcs at a time, their heads' distances gathered, the
 * improved ones and their predecessors scattered (a node's heads are distinct, so no two lanes
 * write one place), the last group under a mask. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CCH_SIMD 1
__attribute__((target("avx512f,avx512vl"))) static void relax_q8(const qarcs *q, uint32_t x,
                                                                 uint64_t *d, uint32_t *pe) {
    const uint32_t a1 = q->first[x + 1];
    const __m512i vdx = _mm512_set1_epi64((long long)d[x]);
    const __m256i vinf = _mm256_set1_epi32((int)GP_CCH_INF), vx = _mm256_set1_epi32((int)x);
    for (uint32_t a = q->first[x]; a < a1; a += 8) {
        const uint32_t left = a1 - a;
        const __mmask8 in = left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1);
        const __m256i w = _mm256_maskz_loadu_epi32(in, q->w + a);
        const __m256i h = _mm256_maskz_loadu_epi32(in, q->head + a);
        const __mmask8 fin = _mm256_mask_cmpneq_epu32_mask(in, w, vinf);
        const __m512i nd = _mm512_add_epi64(vdx, _mm512_cvtepu32_epi64(w));
        const __m512i old = _mm512_mask_i32gather_epi64(nd, fin, h, (const void *)d, 8);
        const __mmask8 better = _mm512_mask_cmplt_epu64_mask(fin, nd, old);
        _mm512_mask_i32scatter_epi64((void *)d, better, h, nd, 8);
        _mm256_mask_i32scatter_epi32((void *)pe, better, h, vx, 4);
    }
}
#endif

/* Whether relax_q8 runs: the CPU has AVX-512F and VL, the ranks fit its 32-bit signed indices,
 * and the lab's knob (engine/engine_lab.h cch_simd, on by default) leaves it on. */
static int simd_ok(uint32_t n) {
#ifdef CCH_SIMD
    gp_engine_lab lab;
    gp_engine_lab_get(&lab);
    return lab.cch_simd && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl") && n < (1u << 31);
#else
    (void)n;
    return 0;
#endif
}

/* Elimination-tree search from rank r over q (up: upward, down: backward search). */
static void etree_search(const gp_cch_topo *t, const qarcs *q, uint32_t r, uint64_t *d,
                         uint32_t *pe) {
    d[r] = 0;
    pe[r] = GP_NONE;
#ifdef CCH_SIMD
    if (simd_ok(t->n)) {
        for (uint32_t x = r; x != GP_NONE; x = t->parent[x])
            if (d[x] != GP_INF) relax_q8(q, x, d, pe);
        return;
    }
#endif
    for (uint32_t x = r; x != GP_NONE; x = t->parent[x])
        if (d[x] != GP_INF) relax_q(q, x, d, pe, NULL);
}

/* The CCH edge of the arc x -> h in q (x's arcs were just relaxed: in cache; heads ascend). */
static uint32_t arc_edge(const qarcs *q, uint32_t x, uint32_t h) {
    uint32_t a = q->first[x], b = q->first[x + 1];
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (q->head[mid] < h) a = mid + 1;
        else b = mid;
    }
    return q->edge ? q->edge[a] : a;
}

static void etree_reset(const gp_cch_topo *t, uint32_t r, uint64_t *d) {
    for (uint32_t x = r; x != GP_NONE; x = t->parent[x]) d[x] = GP_INF;
}

/* The path from node start along the path edges w->uit[0..nr-1] (items edge << 1 | up, the index
 * of their witness in c->wit; up = lo -> hi over fw, down = hi -> lo over bw), unpacked to original
 * nodes: a malloc'ed array, its length in *n (NULL out of memory). The shortcuts unfold breadth
 * first, in rounds: those of one round are independent, so their witnesses load in parallel
 * (prefetched when their parent unfolded), where a depth-first walk waits on every first half's
 * witness in turn (the unpacking was half of a query on NY). Tree node k: item it[k]; kid[k] = the
 * index of its first half (the second follows), or 0 for an original arc, whose it[k] becomes the
 * node it leads to. Children are appended, so each round is the range appended by the previous
 * one. Then the nodes go to their places in path order (below). */
static uint32_t *unpack(const gp_cch *c, cws *w, uint32_t nr, uint32_t start, uint32_t *n) {
    const uint64_t *wv = c->wit;
    uint32_t len = nr, lo = 0;
    for (uint32_t k = 0; k < nr; k++) __builtin_prefetch(wv + w->uit[k]);
    while (lo < len) {
        uint32_t hi = len;
        if (ws_reserve(w, len + 2 * (hi - lo))) return NULL;
        uint32_t *it = w->uit, *kid = w->ukid;
        for (uint32_t k = lo; k < hi; k++) {
            uint32_t item = it[k];
            uint64_t wit = wv[item];
            if (wit & WIT_ORIG) {
                it[k] = (uint32_t)wit;
                kid[k] = 0;
                continue;
            }
            uint32_t e1 = (uint32_t)(wit >> 32), e2 = (uint32_t)wit; /* {v,lo}, {v,hi} */
            /* up: lo->v (down e1), v->hi (up e2); down: hi->v (down e2), v->lo (up e1) */
            uint32_t first = item & 1 ? e1 << 1 : e2 << 1, second = item & 1 ? e2 << 1 | 1u : e1 << 1 | 1u;
            __builtin_prefetch(wv + first);
            __builtin_prefetch(wv + second);
            kid[k] = len;
            it[len++] = first;
            it[len++] = second;
        }
        lo = hi;
    }
    /* the nodes to their places in path order: leaves per subtree (children after parents: one
     * pass backwards), then each subtree's first place (one pass forwards, in place of the
     * counts); a leaf's children are written to a dummy node D (a depth-first walk over the tree
     * cost twice as much: a chain of dependent loads and a coin-toss branch per node) */
    if (ws_reserve(w, len + 2)) return NULL;
    uint32_t *it = w->uit, *kid = w->ukid, *at = w->upos, D = len;
    at[D] = at[D + 1] = 0;
    for (uint32_t k = len; k > 0; k--) {
        uint32_t ck = kid[k - 1]; /* 0: a leaf (at[0], at[1] may hold anything then) */
        at[k - 1] = ck ? at[ck] + at[ck + 1] : 1;
    }
    uint32_t m = 1;
    for (uint32_t k = 0; k < nr; k++) {
        uint32_t cnt = at[k];
        at[k] = m;
        m += cnt;
    }
    uint32_t *out = malloc(((size_t)m + 1) * sizeof *out);
    if (!out) return NULL;
    out[0] = start;
    for (uint32_t k = 0; k < len; k++) {
        uint32_t ck = kid[k], p = at[k], leaf = ck == 0;
        ck = leaf ? D : ck;
        uint32_t cnt = at[ck];
        at[ck] = p;
        at[ck + 1] = p + cnt;
        out[leaf ? p : m] = it[k];
    }
    *n = m;
    return out;
}

/* Prefetches what relaxing node x's upward arcs reads next: the first line of its arcs, its
 * distance and parent. Always inlined: GCC otherwise found the function free of side effects and
 * dropped its calls. (Every line of the arcs was tried too: slower on NY and BAY, with and without
 * the perfect pruning, once the search no longer read edge ids.) */
static inline __attribute__((always_inline)) void prefetch_node(const gp_cch_topo *t,
                                                                const qarcs *q, const uint64_t *d,
                                                                uint32_t x) {
    if (x == GP_NONE) return;
    uint32_t a = q->first[x];
    __builtin_prefetch(q->head + a);
    __builtin_prefetch(q->w + a);
    __builtin_prefetch(d + x);
    __builtin_prefetch(t->parent + x);
}

/* The meeting of a p2p query's elimination-tree search (gp_cch_p2p_multi). */
typedef struct meeting {
    uint64_t best, settled;
    uint32_t meet;
    int bi, bj; /* the ends of the best meeting (multi) */
} meeting;

/* Always inlined with a constant multi, so that the single pair's loop keeps no trace of the
 * multi-end one (left to itself, GCC merged two of the relaxation loops into one testing o on
 * every arc). */
static inline __attribute__((always_inline)) void etree_meet(const gp_cch_topo *t, const qarcs *qf,
                                                             const qarcs *qb, cws *w, uint32_t *fh,
                                                             uint32_t ns, uint32_t *bh,
                                                             uint32_t nd, int multi, meeting *m) {
    uint64_t best = GP_INF, settled = 0;
    uint32_t meet = GP_NONE;
    int bi = 0, bj = 0;
#ifdef CCH_SIMD
    const int simd = !multi && simd_ok(t->n);
#endif
    for (;;) {
        uint32_t x = GP_NONE;
        for (uint32_t i = 0; i < ns; i++) x = fh[i] < x ? fh[i] : x;
        for (uint32_t j = 0; j < nd; j++) x = bh[j] < x ? bh[j] : x;
        if (x == GP_NONE) break;
        uint32_t px = t->parent[x];
        int fa = 0, fb = 0;
        for (uint32_t i = 0; i < ns; i++)
            if (fh[i] == x) fh[i] = px, fa = 1;
        for (uint32_t j = 0; j < nd; j++)
            if (bh[j] == x) bh[j] = px, fb = 1;
        /* the parent is next on this path: its data loads while x relaxes */
        if (fa) prefetch_node(t, qf, w->df, px);
        if (fb) prefetch_node(t, qb, w->db, px);
        settled++;
        uint64_t dfx = w->df[x], dbx = w->db[x];
        if (fa && fb && dfx != GP_INF && dbx != GP_INF) {
            uint64_t tot = dfx + dbx;
            int i = multi ? w->of[x] : 0, j = multi ? w->ob[x] : 0;
            if (tot < best || (tot == best && (i < bi || (i == bi && j < bj)))) {
                best = tot;
                meet = x;
                bi = i;
                bj = j;
            }
        }
        if (!multi) {
#ifdef CCH_SIMD
            if (simd) {
                if (fa && dfx < best) relax_q8(qf, x, w->df, w->pf);
                if (fb && dbx < best) relax_q8(qb, x, w->db, w->pb);
            } else
#endif
            {
                if (fa && dfx < best) relax_q(qf, x, w->df, w->pf, NULL);
                if (fb && dbx < best) relax_q(qb, x, w->db, w->pb, NULL);
            }
        } else {
            /* labels equal to the best may still lead to an equal route between earlier ends */
            if (fa && dfx <= best && dfx != GP_INF) relax_q(qf, x, w->df, w->pf, w->of);
            if (fb && dbx <= best && dbx != GP_INF) relax_q(qb, x, w->db, w->pb, w->ob);
        }
    }
    m->best = best;
    m->settled = settled;
    m->meet = meet;
    m->bi = bi;
    m->bj = bj;
}

int gp_cch_p2p_multi(const gp_cch *c, const uint32_t *src, const uint64_t *soff, uint32_t ns,
                     const uint32_t *dst, const uint64_t *doff, uint32_t nd, gp_path *path,
                     uint32_t *si, uint32_t *di, gp_err *err) {
    const gp_cch_topo *t = c->topo;
    memset(path, 0, sizeof *path);
    path->dist = GP_INF;
    if (si) *si = GP_NONE;
    if (di) *di = GP_NONE;
    if (ns < 1 || nd < 1 || ns > GP_CCH_MAX_ENDS || nd > GP_CCH_MAX_ENDS)
        return gp_err_set(err, GP_EINVAL, "a CCH query takes 1 to %d sources and targets",
                          GP_CCH_MAX_ENDS);
    for (uint32_t i = 0; i < ns + nd; i++)
        if ((i < ns ? src[i] : dst[i - ns]) >= c->n)
            return gp_err_set(err, GP_EINVAL, "node index out of range (graph has %u nodes)",
                              c->n);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    cws *w = cws_get(c, err);
    if (!w) return GP_ENOMEM;
    const gp_cch_arcs *pq = published(c);
    const qarcs qf = query_arcs(c, pq, 1), qb = query_arcs(c, pq, 0);
    /* the heads of the elimination-tree paths of the sources (fh) and targets (bh), walked
     * together in increasing rank, the ends' offsets as initial distances; paths that meet go
     * on as one. Pruned: a node whose distance is already no better than the best meeting found
     * relaxes nothing. */
    uint32_t fh[GP_CCH_MAX_ENDS], bh[GP_CCH_MAX_ENDS];
    int multi = ns > 1 || nd > 1;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t r = fh[i] = t->rank[src[i]];
        uint64_t o = soff ? soff[i] : 0;
        if (o < w->df[r]) w->df[r] = o, w->of[r] = (uint8_t)i;
        w->pf[r] = GP_NONE;
    }
    for (uint32_t j = 0; j < nd; j++) {
        uint32_t r = bh[j] = t->rank[dst[j]];
        uint64_t o = doff ? doff[j] : 0;
        if (o < w->db[r]) w->db[r] = o, w->ob[r] = (uint8_t)j;
        w->pb[r] = GP_NONE;
    }
    meeting mt;
    if (multi) etree_meet(t, &qf, &qb, w, fh, ns, bh, nd, 1, &mt);
    else etree_meet(t, &qf, &qb, w, fh, ns, bh, nd, 0, &mt);
    uint64_t best = mt.best;
    uint32_t meet = mt.meet;
    int bi = mt.bi, bj = mt.bj;
    int rc = GP_OK;
    if (meet != GP_NONE) {
        /* the path edges into the unpacking tree's roots: forward ones meet <- ... <- the
         * source, collected backwards then reversed, then the backward ones meet -> ... -> the
         * target (at most two tree paths) */
        if (ws_reserve(w, 2 * (t->height + 1))) goto oom;
        uint32_t x = meet, nr = 0, *r = w->uit;
        for (; w->pf[x] != GP_NONE; x = w->pf[x]) r[nr++] = arc_edge(&qf, w->pf[x], x) << 1 | 1u;
        for (uint32_t a = 0, b = nr; a + 1 < b; a++, b--) {
            uint32_t tmp = r[a];
            r[a] = r[b - 1];
            r[b - 1] = tmp;
        }
        for (x = meet; w->pb[x] != GP_NONE; x = w->pb[x]) r[nr++] = arc_edge(&qb, w->pb[x], x) << 1;
        uint32_t len;
        uint32_t *nodes = unpack(c, w, nr, src[bi], &len);
        if (!nodes) goto oom;
        if (si) *si = (uint32_t)bi;
        if (di) *di = (uint32_t)bj;
        path->dist = best;
        path->nodes = nodes;
        path->len = len;
    }
    path->settled = mt.settled;
    goto done;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory unpacking a CCH path");
done:
    for (uint32_t i = 0; i < ns; i++) etree_reset(t, t->rank[src[i]], w->df);
    for (uint32_t j = 0; j < nd; j++) etree_reset(t, t->rank[dst[j]], w->db);
    cws_put(c, w);
    return rc;
}

int gp_cch_p2p(const gp_cch *c, uint32_t s, uint32_t t, gp_path *path, gp_err *err) {
    return gp_cch_p2p_multi(c, &s, NULL, 1, &t, NULL, 1, path, NULL, NULL, err);
}

int gp_cch_upward(const gp_cch *c, uint32_t v, int dir, uint32_t *ranks, uint64_t *dist) {
    const gp_cch_topo *t = c->topo;
    gp_err e;
    cws *w = cws_get(c, &e);
    if (!w) return -1;
    uint32_t r = t->rank[v];
    const qarcs q = query_arcs(c, published(c), dir != 0);
    etree_search(t, &q, r, w->df, w->pf);
    int k = 0;
    for (uint32_t x = r; x != GP_NONE; x = t->parent[x]) {
        if (w->df[x] == GP_INF) continue;
        ranks[k] = x;
        dist[k++] = w->df[x];
    }
    etree_reset(t, r, w->df);
    cws_put(c, w);
    return k;
}

int gp_cch_sssp(const gp_cch *c, uint32_t src, uint64_t max_dist, uint64_t *dist, gp_err *err) {
    const gp_cch_topo *t = c->topo;
    if (src >= c->n)
        return gp_err_set(err, GP_EINVAL, "source %u out of range (graph has %u nodes)", src, c->n);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    cws *w = cws_get(c, err);
    if (!w) return GP_ENOMEM;
    if (!w->sweep && !(w->sweep = malloc((size_t)c->n * sizeof *w->sweep))) {
        cws_put(c, w);
        return gp_err_set(err, GP_ENOMEM, "out of memory for a PHAST sweep of %u nodes", c->n);
    }
    uint64_t *d = w->sweep;
    uint32_t n = c->n, rs = t->rank[src];
    for (uint32_t i = 0; i < n; i++) d[i] = GP_INF;
    const qarcs q = query_arcs(c, published(c), 1);
    etree_search(t, &q, rs, d, w->pf);
    for (uint32_t rr = n; rr > 0; rr--) { /* ranks n-1 .. 0 without an unsigned wrap */
        uint32_t r = rr - 1;
        uint64_t best = d[r];
        for (uint32_t e = t->up_first[r]; e < t->up_first[r + 1]; e++) {
            uint32_t wt = c->bw[e];
            uint64_t dh = d[t->up_head[e]];
            if (wt != GP_CCH_INF && dh != GP_INF && dh + wt < best) best = dh + wt;
        }
        d[r] = best;
    }
    for (uint32_t v = 0; v < n; v++) {
        uint64_t x = d[t->rank[v]];
        dist[v] = x > max_dist ? GP_INF : x;
    }
    cws_put(c, w);
    return GP_OK;
}

int gp_cch_pred(const gp_graph *g, uint32_t src, const uint64_t *dist, uint32_t *pred,
                gp_err *err) {
    uint32_t n = g->n;
    uint32_t *q = malloc((size_t)n * sizeof *q);
    unsigned char *seen = calloc(n, 1);
    if (!q || !seen) {
        free(q);
        free(seen);
        return gp_err_set(err, GP_ENOMEM, "out of memory for predecessors");
    }
    for (uint32_t v = 0; v < n; v++) pred[v] = GP_NONE;
    uint32_t qh = 0, qt = 0;
    if (dist[src] == 0) {
        q[qt++] = src;
        seen[src] = 1;
    }
    while (qh < qt) {
        uint32_t u = q[qh++];
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (!seen[v] && dist[v] != GP_INF && dist[u] + g->w[a] == dist[v]) {
                seen[v] = 1;
                pred[v] = u;
                q[qt++] = v;
            }
        }
    }
    free(q);
    free(seen);
    return GP_OK;
}

/* Many-to-many with buckets. */
typedef struct bent {
    uint32_t j;
    uint32_t pad;
    uint64_t d;
} bent;

typedef struct tjob {
    const gp_cch *c;
    const uint32_t *src;
    uint32_t ns, nt;
    const uint32_t *bfirst; /* n+1: bucket of rank x */
    const bent *b;
    uint64_t *out;
    atomic_uint next;
    atomic_int rc;
    double deadline;
} tjob;

static void *table_main(void *arg) {
    tjob *j = arg;
    const gp_cch *c = j->c;
    const gp_cch_topo *t = c->topo;
    gp_err e;
    cws *w = cws_get(c, &e);
    if (!w) {
        atomic_store(&j->rc, GP_ENOMEM);
        return NULL;
    }
    const qarcs qf = query_arcs(c, published(c), 1);
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->ns || atomic_load(&j->rc) != GP_OK) break;
        if (j->deadline > 0 && gp_now() > j->deadline) {
            atomic_store(&j->rc, GP_ETIMEOUT);
            break;
        }
        uint64_t *row = j->out + (size_t)i * j->nt;
        for (uint32_t k = 0; k < j->nt; k++) row[k] = GP_INF;
        uint32_t rs = t->rank[j->src[i]];
        etree_search(t, &qf, rs, w->df, w->pf);
        for (uint32_t x = rs; x != GP_NONE; x = t->parent[x]) {
            uint64_t dx = w->df[x];
            if (dx == GP_INF) continue;
            for (uint32_t k = j->bfirst[x]; k < j->bfirst[x + 1]; k++) {
                uint64_t d = dx + j->b[k].d;
                if (d < row[j->b[k].j]) row[j->b[k].j] = d;
            }
        }
        etree_reset(t, rs, w->df);
    }
    cws_put(c, w);
    return NULL;
}

int gp_cch_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                 uint32_t nt, int threads, uint64_t *out, gp_err *err) {
    const gp_cch_topo *t = c->topo;
    for (uint32_t i = 0; i < ns; i++)
        if (src[i] >= c->n) return gp_err_set(err, GP_EINVAL, "source index %u out of range", src[i]);
    for (uint32_t i = 0; i < nt; i++)
        if (dst[i] >= c->n) return gp_err_set(err, GP_EINVAL, "target index %u out of range", dst[i]);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    uint32_t n = c->n;
    uint32_t *bfirst = calloc((size_t)n + 2, sizeof *bfirst);
    cws *w = cws_get(c, err);
    bent *b = NULL;
    int rc = GP_OK;
    if (!bfirst || !w) goto oom;
    const qarcs qb = query_arcs(c, published(c), 0);
    /* two passes over the targets' backward searches: count per rank, then fill */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t j = 0; j < nt; j++) {
            uint32_t rt = t->rank[dst[j]];
            etree_search(t, &qb, rt, w->db, w->pb);
            for (uint32_t x = rt; x != GP_NONE; x = t->parent[x]) {
                if (w->db[x] == GP_INF) continue;
                if (pass == 0) {
                    bfirst[x + 2]++;
                } else {
                    bent *be = &b[bfirst[x + 1]++];
                    be->j = j;
                    be->pad = 0;
                    be->d = w->db[x];
                }
            }
            etree_reset(t, rt, w->db);
        }
        if (pass == 0) {
            for (uint32_t x = 0; x < n; x++) bfirst[x + 2] += bfirst[x + 1];
            b = malloc(((size_t)bfirst[n + 1] + 1) * sizeof *b);
            if (!b) goto oom;
        }
    }
    cws_put(c, w);
    w = NULL;
    tjob j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.src = src;
    j.ns = ns;
    j.nt = nt;
    j.bfirst = bfirst;
    j.b = b;
    j.out = out;
    j.deadline = gp_deadline_get();
    atomic_init(&j.next, 0);
    atomic_init(&j.rc, GP_OK);
    int nth = gp_cch_threads(threads);
    if ((uint32_t)nth > ns / 4 + 1) nth = (int)(ns / 4 + 1);
    pthread_t th[256];
    int started = 0;
    for (int i = 1; i < nth; i++) {
        if (pthread_create(&th[started], NULL, table_main, &j) != 0) break;
        started++;
    }
    table_main(&j);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    rc = atomic_load(&j.rc);
    if (rc == GP_ETIMEOUT) rc = gp_deadline_error(err);
    else if (rc) rc = gp_err_set(err, rc, "out of memory in the CCH table");
    goto done;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory for CCH table buckets");
done:
    if (w) cws_put(c, w);
    free(bfirst);
    free(b);
    return rc;
}
