/* cpu_backend.c - the CPU backend: the reference implementation of every gp_backend_ops operation
 * and the fallback behind the CUDA backend.
 *
 *  - sssp: Dijkstra with a radix heap (monotone integer keys; decrease-key by re-insertion);
 *    max_dist prunes relaxations past the limit, so every node it reports is settled with its
 *    exact distance.
 *  - p2p: unidirectional Dijkstra stopping when the target is settled; bidirectional Dijkstra over
 *    the forward and reverse CSR (stops when top_f + top_b >= best meeting distance); A* with a
 *    great-circle lower bound (haversine metres times the smallest weight-per-metre of any arc,
 *    computed once per graph at attach, or on first use, and cached; none when a node lacks
 *    coordinates), on the radix heap while the bound is consistent, else on a binary heap with
 *    decrease-key that reopens nodes, so float rounding never costs exactness. AUTO is
 *    bidirectional.
 *  - table: one Dijkstra per source on a pool of threads, each stopping once all targets settle.
 *  - apsp: blocked Floyd-Warshall on threads (pivot tile, then its row and column tiles, then the
 *    rest, per round) with an optional next-hop matrix; tiles at the edge are clipped to n. With
 *    next hops, paths are ordered by (length, hops) so zero-weight cycles cannot make next-hop
 *    walks loop. The row update has an AVX2 version chosen at run time.
 *
 * Workspaces (n-sized distance / predecessor / heap-position arrays) are pooled in the backend and
 * reset through a list of touched nodes, so a query costs O(nodes touched), not O(n), after the
 * first use. Every call is thread-safe; the graph is only read.
 */
#include "engine/backend.h"
#include "engine/engine_lab.h"
#include "engine/progress.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------
 * Workspaces */

#define ST_UNSEEN UINT32_MAX       /* hpos: never reached in this query */
#define ST_SETTLED (UINT32_MAX - 1) /* hpos: settled (popped) */

typedef struct hent {
    uint64_t key;
    uint32_t v;
} hent;

/* Radix heap bucket (monotone integer keys; see dijkstra()). */
typedef struct rbucket {
    hent *e;
    uint32_t len, cap;
} rbucket;
#define RADIX_BUCKETS 65

typedef struct ws {
    uint32_t cap;       /* nodes the arrays hold */
    uint64_t *dist;     /* GP_INF when unreached */
    uint32_t *pred;     /* GP_NONE when none */
    uint32_t *hpos;     /* heap index, ST_UNSEEN or ST_SETTLED */
    uint32_t *mark;     /* table: target stamp per node (allocated on first table use) */
    uint32_t mark_cap;
    uint64_t *aux;      /* A*: the node's bound, valid once the node is touched (lazy too) */
    uint32_t aux_cap;
    uint32_t stamp;     /* current target stamp */
    hent *heap;         /* binary min-heap on key */
    uint32_t hsize;
    uint32_t *touched;  /* nodes whose dist/pred/hpos differ from the reset state */
    uint32_t ntouched;
    uint64_t settled;   /* nodes settled in the last run */
    rbucket rb[RADIX_BUCKETS]; /* radix heap: bucket i holds keys whose highest bit differing
                                * from rlast is bit i-1 (bucket 0: key == rlast) */
    uint64_t rlast;     /* last extracted key */
    uint64_t rsize;     /* entries in the radix heap */
    struct ws *next;    /* pool free list */
} ws;

typedef struct hcache {
    const gp_graph *g;  /* identity (pointer + content hash + sizes) */
    uint64_t hash;
    uint32_t n, m;
    double factor;      /* stored weight units per metre, lower bound over all arcs */
} hcache;

#define HCACHE_SLOTS 8

typedef struct cpu_impl {
    int threads;
    char model[128];
    pthread_mutex_t lock; /* guards pool and hcache */
    ws *pool;
    int pooled;           /* workspaces in pool */
    int astar_binary;     /* A* always on the binary heap (engine/engine_lab.h, tests) */
    hcache hc[HCACHE_SLOTS];
    unsigned hc_next;
} cpu_impl;

static void ws_free(ws *w) {
    if (!w) return;
    free(w->dist);
    free(w->pred);
    free(w->hpos);
    free(w->mark);
    free(w->aux);
    free(w->heap);
    free(w->touched);
    for (int i = 0; i < RADIX_BUCKETS; i++) free(w->rb[i].e);
    free(w);
}

/* Grows w to hold n nodes, resetting its arrays. */
static int ws_reserve(ws *w, uint32_t n) {
    if (w->cap >= n) return GP_OK;
    size_t cap = n ? n : 1;
    uint64_t *d = realloc(w->dist, cap * sizeof *d);
    if (d) w->dist = d;
    uint32_t *p = realloc(w->pred, cap * sizeof *p);
    if (p) w->pred = p;
    uint32_t *h = realloc(w->hpos, cap * sizeof *h);
    if (h) w->hpos = h;
    hent *hp = realloc(w->heap, cap * sizeof *hp);
    if (hp) w->heap = hp;
    uint32_t *t = realloc(w->touched, cap * sizeof *t);
    if (t) w->touched = t;
    if (!d || !p || !h || !hp || !t) return GP_ENOMEM;
    for (size_t i = 0; i < cap; i++) {
        w->dist[i] = GP_INF;
        w->pred[i] = GP_NONE;
        w->hpos[i] = ST_UNSEEN;
    }
    w->cap = (uint32_t)cap;
    w->hsize = 0;
    w->ntouched = 0;
    return GP_OK;
}

/* The table's target marks, allocated on first use (cleared, stamp restarted). */
static int ws_need_mark(ws *w) {
    if (w->mark_cap >= w->cap) return GP_OK;
    free(w->mark);
    w->mark = calloc(w->cap, sizeof *w->mark);
    if (!w->mark) {
        w->mark_cap = 0;
        return GP_ENOMEM;
    }
    w->mark_cap = w->cap;
    w->stamp = 0;
    return GP_OK;
}

/* A*'s per-node bound cache, allocated on first use (entries are written before being read). */
static int ws_need_aux(ws *w) {
    if (w->aux_cap >= w->cap) return GP_OK;
    free(w->aux);
    w->aux = malloc((size_t)w->cap * sizeof *w->aux);
    if (!w->aux) {
        w->aux_cap = 0;
        return GP_ENOMEM;
    }
    w->aux_cap = w->cap;
    return GP_OK;
}

/* Returns w to its reset state in O(touched). */
static void ws_reset(ws *w) {
    for (uint32_t i = 0; i < w->ntouched; i++) {
        uint32_t v = w->touched[i];
        w->dist[v] = GP_INF;
        w->pred[v] = GP_NONE;
        w->hpos[v] = ST_UNSEEN;
    }
    w->ntouched = 0;
    w->hsize = 0;
    w->settled = 0;
    for (int i = 0; i < RADIX_BUCKETS; i++) w->rb[i].len = 0;
    w->rlast = 0;
    w->rsize = 0;
}

static ws *ws_get(cpu_impl *c, uint32_t n, gp_err *err) {
    pthread_mutex_lock(&c->lock);
    ws *w = c->pool;
    if (w) {
        c->pool = w->next;
        c->pooled--;
    }
    pthread_mutex_unlock(&c->lock);
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w) {
            gp_err_set(err, GP_ENOMEM, "out of memory for a query workspace");
            return NULL;
        }
    }
    if (ws_reserve(w, n) != GP_OK) {
        ws_free(w);
        gp_err_set(err, GP_ENOMEM, "out of memory for a query workspace of %u nodes", n);
        return NULL;
    }
    w->next = NULL;
    return w;
}

/* Returns w to the pool; beyond POOL_SPARE + threads idle workspaces it is freed instead, so a
 * burst of concurrent queries does not pin its memory forever. */
#define POOL_SPARE 4
static void ws_put(cpu_impl *c, ws *w) {
    if (!w) return;
    ws_reset(w);
    pthread_mutex_lock(&c->lock);
    if (c->pooled >= c->threads + POOL_SPARE) {
        pthread_mutex_unlock(&c->lock);
        ws_free(w);
        return;
    }
    w->next = c->pool;
    c->pool = w;
    c->pooled++;
    pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------------------------------------
 * Binary heap with decrease-key (positions in hpos). */

static inline void heap_up(ws *w, uint32_t i) {
    hent e = w->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) >> 1;
        if (w->heap[p].key <= e.key) break;
        w->heap[i] = w->heap[p];
        w->hpos[w->heap[i].v] = i;
        i = p;
    }
    w->heap[i] = e;
    w->hpos[e.v] = i;
}

static inline void heap_down(ws *w, uint32_t i) {
    hent e = w->heap[i];
    uint32_t n = w->hsize;
    for (;;) {
        uint32_t l = 2 * i + 1;
        if (l >= n) break;
        uint32_t r = l + 1;
        uint32_t c = (r < n && w->heap[r].key < w->heap[l].key) ? r : l;
        if (w->heap[c].key >= e.key) break;
        w->heap[i] = w->heap[c];
        w->hpos[w->heap[i].v] = i;
        i = c;
    }
    w->heap[i] = e;
    w->hpos[e.v] = i;
}

/* Inserts v with key, or lowers its key when it is in the heap; re-inserts a settled node. */
static inline void heap_push_or_decrease(ws *w, uint32_t v, uint64_t key) {
    uint32_t p = w->hpos[v];
    if (p == ST_UNSEEN || p == ST_SETTLED) {
        uint32_t i = w->hsize++;
        w->heap[i].key = key;
        w->heap[i].v = v;
        heap_up(w, i);
    } else if (key < w->heap[p].key) {
        w->heap[p].key = key;
        heap_up(w, p);
    }
}

static inline uint32_t heap_pop(ws *w) {
    uint32_t v = w->heap[0].v;
    w->hsize--;
    if (w->hsize > 0) {
        w->heap[0] = w->heap[w->hsize];
        heap_down(w, 0);
    }
    w->hpos[v] = ST_SETTLED;
    return v;
}

static inline void touch(ws *w, uint32_t v) {
    if (w->hpos[v] == ST_UNSEEN && w->dist[v] == GP_INF) w->touched[w->ntouched++] = v;
}

/* ---------------------------------------------------------------------------------------------
 * Dijkstra */

/* ---------------------------------------------------------------------------------------------
 * Radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) for the plain Dijkstra runs: keys popped are
 * non-decreasing, so an entry only ever moves to lower buckets; decrease-key is a new entry and
 * the stale one is skipped when popped. A* (whose keys may dip through rounding) and the
 * bidirectional search keep the binary heap. */

static inline int rb_index(uint64_t key, uint64_t last) {
    return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

static inline int rb_append(rbucket *b, uint64_t key, uint32_t v) {
    if (b->len == b->cap) {
        uint32_t cap = b->cap ? 2 * b->cap : 256;
        hent *e = realloc(b->e, (size_t)cap * sizeof *e);
        if (!e) return GP_ENOMEM;
        b->e = e;
        b->cap = cap;
    }
    b->e[b->len].key = key;
    b->e[b->len].v = v;
    b->len++;
    return GP_OK;
}

static inline int rb_push(ws *w, uint64_t key, uint32_t v) {
    w->rsize++;
    return rb_append(&w->rb[rb_index(key, w->rlast)], key, v);
}

/* Makes bucket 0 hold the smallest key (redistributing the lowest non-empty bucket) and returns
 * that key in *key; the heap must not be empty. The key may belong to a stale entry, which is
 * never below the smallest live key, so it is a valid lower bound for the stopping rules. */
static inline int rb_top(ws *w, uint64_t *key) {
    if (w->rb[0].len == 0) {
        int i = 1;
        while (w->rb[i].len == 0) i++;
        rbucket *b = &w->rb[i];
        uint64_t mn = UINT64_MAX;
        for (uint32_t k = 0; k < b->len; k++)
            if (b->e[k].key < mn) mn = b->e[k].key;
        w->rlast = mn;
        for (uint32_t k = 0; k < b->len; k++) /* every entry lands in a bucket below i */
            if (rb_append(&w->rb[rb_index(b->e[k].key, mn)], b->e[k].key, b->e[k].v) != GP_OK)
                return GP_ENOMEM;
        b->len = 0;
    }
    *key = w->rlast;
    return GP_OK;
}

/* Removes a smallest entry into *out (the heap must not be empty). */
static inline int rb_pop(ws *w, hent *out) {
    uint64_t key;
    if (rb_top(w, &key) != GP_OK) return GP_ENOMEM;
    w->rsize--;
    *out = w->rb[0].e[--w->rb[0].len];
    return GP_OK;
}

/* Deadline checks (config request_timeout_ms): each op reads the caller's deadline once at entry
 * (gp_deadline_get; worker threads get it through their job) and the search loops look at the
 * clock every DEADLINE_EVERY heap pops, the first pop included, so an expired deadline stops an op
 * before it does any work. */
#define DEADLINE_EVERY 4096u
static inline int deadline_passed(double deadline, uint32_t *ticks) {
    return deadline > 0 && ((*ticks)++ & (DEADLINE_EVERY - 1)) == 0 && gp_now() >= deadline;
}

/* One-to-many Dijkstra from src on (row, col, w) with the radix heap. Stops when `target` is
 * settled (GP_NONE: never), or when `ntargets` nodes whose mark equals w->stamp have settled (0:
 * never). Relaxations beyond max_dist are skipped. Settled nodes have hpos == ST_SETTLED. Returns
 * GP_ENOMEM when a bucket cannot grow, GP_ETIMEOUT past deadline (0: none). */
static int dijkstra(ws *w, const uint32_t *row, const uint32_t *col, const uint32_t *wt,
                    uint32_t src, uint64_t max_dist, uint32_t target, uint32_t ntargets,
                    double deadline) {
    touch(w, src);
    w->dist[src] = 0;
    if (rb_push(w, 0, src) != GP_OK) return GP_ENOMEM;
    uint64_t settled = 0;
    uint32_t found = 0, ticks = 0;
    while (w->rsize > 0) {
        if (deadline_passed(deadline, &ticks)) return GP_ETIMEOUT;
        hent x;
        if (rb_pop(w, &x) != GP_OK) return GP_ENOMEM;
        uint32_t u = x.v;
        if (x.key != w->dist[u] || w->hpos[u] == ST_SETTLED) continue; /* stale entry */
        w->hpos[u] = ST_SETTLED;
        settled++;
        if (u == target) break;
        if (ntargets && w->mark[u] == w->stamp && ++found == ntargets) break;
        uint64_t du = x.key;
        for (uint32_t a = row[u], e = row[u + 1]; a < e; a++) {
            uint32_t v = col[a];
            uint64_t nd = du + wt[a];
            if (nd < w->dist[v] && nd <= max_dist) {
                touch(w, v);
                w->dist[v] = nd;
                w->pred[v] = u;
                if (rb_push(w, nd, v) != GP_OK) return GP_ENOMEM;
            }
        }
    }
    w->settled = settled;
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Backend ops */

static cpu_impl *impl_of(gp_backend *b) { return (cpu_impl *)b->impl; }

static int check_node(const gp_graph *g, uint32_t v, const char *what, gp_err *err) {
    if (v >= g->n)
        return gp_err_set(err, GP_EINVAL, "%s node index %u out of range (graph has %u nodes)",
                          what, v, g->n);
    return GP_OK;
}

static int cpu_sssp(gp_backend *b, const gp_graph *g, uint32_t src, uint64_t max_dist,
                    uint64_t *dist, uint32_t *pred, gp_err *err) {
    if (check_node(g, src, "source", err)) return err ? err->code : GP_EINVAL;
    cpu_impl *c = impl_of(b);
    ws *w = ws_get(c, g->n, err);
    if (!w) return GP_ENOMEM;
    int rc = dijkstra(w, g->row, g->col, g->w, src, max_dist, GP_NONE, 0, gp_deadline_get());
    if (rc != GP_OK) {
        ws_put(c, w);
        return rc == GP_ETIMEOUT ? gp_deadline_error(err)
                                 : gp_err_set(err, GP_ENOMEM, "out of memory in Dijkstra's queue");
    }
    memcpy(dist, w->dist, (size_t)g->n * sizeof *dist);
    if (pred) memcpy(pred, w->pred, (size_t)g->n * sizeof *pred);
    ws_put(c, w);
    return GP_OK;
}

/* Fills path from a predecessor chain ending at t (forward) and, when bw is given, the backward
 * search's successor chain from meet to the target. */
static int build_path(gp_path *path, const ws *fw, uint32_t meet, const ws *bw, uint64_t dist,
                      gp_err *err) {
    uint32_t len = 0;
    for (uint32_t v = meet; v != GP_NONE; v = fw->pred[v]) len++;
    if (bw)
        for (uint32_t v = bw->pred[meet]; v != GP_NONE; v = bw->pred[v]) len++;
    uint32_t *nodes = malloc((size_t)len * sizeof *nodes);
    if (!nodes) return gp_err_set(err, GP_ENOMEM, "out of memory for a path of %u nodes", len);
    uint32_t i = 0;
    for (uint32_t v = meet; v != GP_NONE; v = fw->pred[v]) i++;
    uint32_t k = i;
    for (uint32_t v = meet; v != GP_NONE; v = fw->pred[v]) nodes[--k] = v;
    if (bw)
        for (uint32_t v = bw->pred[meet]; v != GP_NONE; v = bw->pred[v]) nodes[i++] = v;
    path->nodes = nodes;
    path->len = len;
    path->dist = dist;
    return GP_OK;
}

static int p2p_dijkstra(cpu_impl *c, const gp_graph *g, uint32_t s, uint32_t t, gp_path *path,
                        gp_err *err) {
    ws *w = ws_get(c, g->n, err);
    if (!w) return GP_ENOMEM;
    int rc = dijkstra(w, g->row, g->col, g->w, s, GP_INF, t, 0, gp_deadline_get());
    if (rc != GP_OK) {
        ws_put(c, w);
        return rc == GP_ETIMEOUT ? gp_deadline_error(err)
                                 : gp_err_set(err, rc, "out of memory in Dijkstra's queue");
    }
    path->settled = w->settled;
    if (w->dist[t] != GP_INF && w->hpos[t] == ST_SETTLED)
        rc = build_path(path, w, t, NULL, w->dist[t], err);
    ws_put(c, w);
    return rc;
}

/* Relaxes u's arcs in one direction of a bidirectional search. A meeting candidate
 * dist_me[v] + dist_other[v] is checked whenever either side lowers dist[v] (here, and on the other
 * side's turn), so every combination of the two sides' values is seen without reading the other
 * side's array for arcs that change nothing. */
static inline int bidir_relax(ws *me, const ws *other, const uint32_t *row, const uint32_t *col,
                              const uint32_t *wt, uint32_t u, uint64_t *best, uint32_t *meet) {
    uint64_t du = me->dist[u];
    for (uint32_t a = row[u], e = row[u + 1]; a < e; a++) {
        uint32_t v = col[a];
        uint64_t nd = du + wt[a];
        if (nd >= me->dist[v]) continue;
        touch(me, v);
        me->dist[v] = nd;
        me->pred[v] = u;
        if (rb_push(me, nd, v) != GP_OK) return GP_ENOMEM;
        uint64_t ov = other->dist[v];
        if (ov != GP_INF && nd + ov < *best) {
            *best = nd + ov;
            *meet = v;
        }
    }
    return GP_OK;
}

/* Pops live entries from w until one is unsettled: settles it into *u. 0 when w ran empty. */
static inline int bidir_next(ws *w, uint32_t *u, int *oom) {
    while (w->rsize > 0) {
        hent x;
        if (rb_pop(w, &x) != GP_OK) {
            *oom = 1;
            return 0;
        }
        if (x.key != w->dist[x.v] || w->hpos[x.v] == ST_SETTLED) continue;
        w->hpos[x.v] = ST_SETTLED;
        *u = x.v;
        return 1;
    }
    return 0;
}

/* Drops stale entries from the top so its key is a live node's (or the heap is empty). */
static inline int bidir_top(ws *w, uint64_t *key, int *oom) {
    while (w->rsize > 0) {
        if (rb_top(w, key) != GP_OK) {
            *oom = 1;
            return 0;
        }
        const hent *x = &w->rb[0].e[w->rb[0].len - 1];
        if (x->key == w->dist[x->v] && w->hpos[x->v] != ST_SETTLED) return 1;
        w->rb[0].len--;
        w->rsize--;
    }
    *key = GP_INF;
    return 0;
}

static int p2p_bidir(cpu_impl *c, const gp_graph *g, uint32_t s, uint32_t t, gp_path *path,
                     gp_err *err) {
    ws *f = ws_get(c, g->n, err);
    if (!f) return GP_ENOMEM;
    ws *r = ws_get(c, g->n, err);
    if (!r) {
        ws_put(c, f);
        return GP_ENOMEM;
    }
    int oom = 0;
    touch(f, s);
    f->dist[s] = 0;
    touch(r, t);
    r->dist[t] = 0;
    if (rb_push(f, 0, s) != GP_OK || rb_push(r, 0, t) != GP_OK) oom = 1;
    uint64_t best = GP_INF;
    uint32_t meet = GP_NONE;
    if (s == t) {
        best = 0;
        meet = s;
    }
    uint64_t settled = 0;
    const double deadline = gp_deadline_get();
    uint32_t ticks = 0;
    int late = 0;
    while (!oom) {
        if (deadline_passed(deadline, &ticks)) {
            late = 1;
            break;
        }
        uint64_t tf, tr;
        int hf = bidir_top(f, &tf, &oom), hr = bidir_top(r, &tr, &oom);
        /* One side exhausted: every node it can reach is settled, and every meeting with it was
         * seen when the other side relaxed into it (or it into the other), so best is final. */
        if (oom || !hf || !hr) break;
        /* Stopping rule: no path through an unsettled node can beat best. */
        if (best != GP_INF && tf + tr >= best) break;
        ws *me = tf <= tr ? f : r;
        uint32_t u;
        if (!bidir_next(me, &u, &oom)) break;
        settled++;
        int rc = me == f ? bidir_relax(f, r, g->row, g->col, g->w, u, &best, &meet)
                         : bidir_relax(r, f, g->rrow, g->rcol, g->rw, u, &best, &meet);
        if (rc != GP_OK) oom = 1;
    }
    int rc = GP_OK;
    path->settled = settled;
    if (late)
        rc = gp_deadline_error(err);
    else if (oom)
        rc = gp_err_set(err, GP_ENOMEM, "out of memory in the bidirectional search's queues");
    else if (best != GP_INF)
        rc = build_path(path, f, meet, r, best, err);
    ws_put(c, f);
    ws_put(c, r);
    return rc;
}

/* Great-circle distance in metres between two lon/lat points in degrees. */
static double haversine_m(double lon1, double lat1, double lon2, double lat2) {
    const double rad = M_PI / 180.0, R = 6371008.8;
    double dlat = (lat2 - lat1) * rad, dlon = (lon2 - lon1) * rad;
    double a = sin(dlat * 0.5) * sin(dlat * 0.5) +
               cos(lat1 * rad) * cos(lat2 * rad) * sin(dlon * 0.5) * sin(dlon * 0.5);
    if (a > 1.0) a = 1.0;
    return 2.0 * R * asin(sqrt(a));
}

/* Parallel scan for the smallest weight per metre: nodes handed out in chunks. */
#define FSCAN_CHUNK 16384
typedef struct fscan {
    const gp_graph *g;
    atomic_uint next; /* next chunk */
} fscan;
typedef struct fscan_worker {
    fscan *fs;
    double best;
} fscan_worker;

static void *fscan_main(void *arg) {
    fscan_worker *wk = arg;
    const gp_graph *g = wk->fs->g;
    double best = INFINITY;
    for (;;) {
        uint64_t u0 = (uint64_t)atomic_fetch_add(&wk->fs->next, 1) * FSCAN_CHUNK;
        if (u0 >= g->n) break;
        uint64_t u1 = u0 + FSCAN_CHUNK < g->n ? u0 + FSCAN_CHUNK : g->n;
        for (uint64_t u = u0; u < u1; u++)
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                uint32_t v = g->col[a];
                double len = haversine_m(g->lon[u], g->lat[u], g->lon[v], g->lat[v]);
                if (!(len > 0.0)) continue;
                double f = (double)g->w[a] / len;
                if (f < best) best = f;
            }
    }
    wk->best = best;
    return NULL;
}

/* Smallest weight per metre over all arcs of positive length (cached per graph). Arcs of zero
 * length put no constraint on the bound; a zero-weight arc of positive length makes it 0 (A*
 * degrades to Dijkstra). Shrunk by 1e-6 against float rounding in the triangle inequality. */
static double astar_factor(cpu_impl *c, const gp_graph *g) {
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < HCACHE_SLOTS; i++) {
        hcache *h = &c->hc[i];
        if (h->g == g && h->hash == g->hash && h->n == g->n && h->m == g->m) {
            double f = h->factor;
            pthread_mutex_unlock(&c->lock);
            return f;
        }
    }
    pthread_mutex_unlock(&c->lock);
    /* one scan of every arc, on the backend's threads (a 24M-arc graph takes seconds alone) */
    fscan fs;
    fs.g = g;
    atomic_init(&fs.next, 0);
    int nth = c->threads > 64 ? 64 : c->threads;
    if ((uint64_t)g->m < 200000) nth = 1;
    fscan_worker wk[64];
    pthread_t th[64];
    int started = 1;
    for (int i = 0; i < nth; i++) {
        wk[i].fs = &fs;
        wk[i].best = INFINITY;
    }
    for (int i = 1; i < nth; i++) {
        if (pthread_create(&th[i], NULL, fscan_main, &wk[i]) != 0) break;
        started++;
    }
    fscan_main(&wk[0]);
    double factor = wk[0].best;
    for (int i = 1; i < started; i++) {
        pthread_join(th[i], NULL);
        if (wk[i].best < factor) factor = wk[i].best;
    }
    /* A node without coordinates (NaN) puts no bound on the arcs through it, so a path via it
     * could be shorter than any great-circle estimate: no bound at all then (plain Dijkstra). */
    for (uint32_t v = 0; v < g->n && factor > 0; v++)
        if (!isfinite(g->lon[v]) || !isfinite(g->lat[v])) factor = 0.0;
    if (!isfinite(factor)) factor = 0.0; /* no arc of positive length: no useful bound */
    factor *= (1.0 - 1e-6);
    pthread_mutex_lock(&c->lock);
    hcache *h = &c->hc[c->hc_next++ % HCACHE_SLOTS];
    h->g = g;
    h->hash = g->hash;
    h->n = g->n;
    h->m = g->m;
    h->factor = factor;
    pthread_mutex_unlock(&c->lock);
    return factor;
}

static inline uint64_t astar_h(const gp_graph *g, double factor, uint32_t v, uint32_t t) {
    double d = factor * haversine_m(g->lon[v], g->lat[v], g->lon[t], g->lat[t]);
    if (!(d > 0.0)) return 0;
    if (d >= 1.8e19) return (uint64_t)1 << 63;
    return (uint64_t)floor(d);
}

#define ASTAR_INCONSISTENT (-1)

/* A* on the radix heap. Keys g + h pop in non-decreasing order as long as the bound is consistent
 * (h(u) <= w(u,v) + h(v)), which the real-valued bound is and flooring to integers keeps; should
 * rounding break it anywhere (a key below the last extracted one, or a settled node improving),
 * this returns ASTAR_INCONSISTENT and the caller reruns on the binary heap. */
static int astar_radix(ws *w, const gp_graph *g, uint32_t s, uint32_t t, double factor,
                       double deadline, int *found, uint64_t *settled) {
    touch(w, s);
    w->dist[s] = 0;
    w->aux[s] = astar_h(g, factor, s, t);
    if (rb_push(w, w->aux[s], s) != GP_OK) return GP_ENOMEM;
    uint32_t ticks = 0;
    while (w->rsize > 0) {
        if (deadline_passed(deadline, &ticks)) return GP_ETIMEOUT;
        hent x;
        if (rb_pop(w, &x) != GP_OK) return GP_ENOMEM;
        uint32_t u = x.v;
        if (w->hpos[u] == ST_SETTLED || x.key != w->dist[u] + w->aux[u]) continue; /* stale */
        w->hpos[u] = ST_SETTLED;
        (*settled)++;
        if (u == t) {
            *found = 1;
            break;
        }
        uint64_t du = w->dist[u];
        for (uint32_t a = g->row[u], e = g->row[u + 1]; a < e; a++) {
            uint32_t v = g->col[a];
            uint64_t nd = du + g->w[a];
            if (nd >= w->dist[v]) continue;
            if (w->dist[v] == GP_INF) { /* first reached: compute its bound once */
                touch(w, v);
                w->aux[v] = astar_h(g, factor, v, t);
            }
            uint64_t key = nd + w->aux[v];
            if (w->hpos[v] == ST_SETTLED || key < w->rlast) return ASTAR_INCONSISTENT;
            w->dist[v] = nd;
            w->pred[v] = u;
            if (rb_push(w, key, v) != GP_OK) return GP_ENOMEM;
        }
    }
    return GP_OK;
}

/* A* on the binary heap with decrease-key: settled nodes are reopened when a shorter g appears, so
 * the result is exact with any admissible bound. GP_ETIMEOUT past deadline, else GP_OK. */
static int astar_binary(ws *w, const gp_graph *g, uint32_t s, uint32_t t, double factor,
                        double deadline, int *found, uint64_t *settled) {
    touch(w, s);
    w->dist[s] = 0;
    w->aux[s] = astar_h(g, factor, s, t);
    heap_push_or_decrease(w, s, w->aux[s]);
    uint32_t ticks = 0;
    while (w->hsize > 0) {
        if (deadline_passed(deadline, &ticks)) return GP_ETIMEOUT;
        uint32_t u = heap_pop(w);
        (*settled)++;
        if (u == t) {
            *found = 1;
            break;
        }
        uint64_t du = w->dist[u];
        for (uint32_t a = g->row[u], e = g->row[u + 1]; a < e; a++) {
            uint32_t v = g->col[a];
            uint64_t nd = du + g->w[a];
            if (nd < w->dist[v]) {
                if (w->dist[v] == GP_INF) {
                    touch(w, v);
                    w->aux[v] = astar_h(g, factor, v, t);
                }
                w->dist[v] = nd;
                w->pred[v] = u;
                heap_push_or_decrease(w, v, nd + w->aux[v]);
            }
        }
    }
    return GP_OK;
}

/* A*: heap key = g + h, on the radix heap, falling back to the binary heap (with reopening) if
 * rounding ever makes the bound inconsistent; the lab knob astar_binary (engine/engine_lab.h, read
 * when the backend is created) always uses the binary heap, so tests can hold both to the same
 * answers. */
static int p2p_astar(cpu_impl *c, const gp_graph *g, uint32_t s, uint32_t t, gp_path *path,
                     gp_err *err) {
    if (!g->lon || !g->lat)
        return gp_err_set(err, GP_EUNSUPPORTED, "A* needs node coordinates; this graph has none");
    double factor = astar_factor(c, g);
    ws *w = ws_get(c, g->n, err);
    if (!w) return GP_ENOMEM;
    if (ws_need_aux(w) != GP_OK) {
        ws_put(c, w);
        return gp_err_set(err, GP_ENOMEM, "out of memory for A* bounds of %u nodes", g->n);
    }
    uint64_t settled = 0;
    int found = 0;
    const double deadline = gp_deadline_get();
    int rc = c->astar_binary ? ASTAR_INCONSISTENT
                             : astar_radix(w, g, s, t, factor, deadline, &found, &settled);
    if (rc == ASTAR_INCONSISTENT) {
        /* rounding made the bound inconsistent somewhere: redo on the binary heap */
        ws_reset(w);
        settled = 0;
        found = 0;
        rc = astar_binary(w, g, s, t, factor, deadline, &found, &settled);
    }
    if (rc != GP_OK) {
        ws_put(c, w);
        return rc == GP_ETIMEOUT ? gp_deadline_error(err)
                                 : gp_err_set(err, rc, "out of memory in A*'s queue");
    }
    path->settled = settled;
    if (found) rc = build_path(path, w, t, NULL, w->dist[t], err);
    ws_put(c, w);
    return rc;
}

static int cpu_p2p(gp_backend *b, const gp_graph *g, uint32_t s, uint32_t t, int algo,
                   gp_path *path, gp_err *err) {
    path->dist = GP_INF;
    path->nodes = NULL;
    path->len = 0;
    path->settled = 0;
    if (check_node(g, s, "source", err) || check_node(g, t, "target", err))
        return err ? err->code : GP_EINVAL;
    cpu_impl *c = impl_of(b);
    switch (algo) {
    case GP_P2P_DIJKSTRA: return p2p_dijkstra(c, g, s, t, path, err);
    case GP_P2P_AUTO:
        /* Measured on 1M-node road graphs (bench/results/, cpu-engine): A* settles ~4x fewer
         * nodes and runs ~2.4x faster than Dijkstra; bidirectional is on par with Dijkstra. A*
         * needs coordinates on every node, so it falls back to bidirectional search. */
        if (g->lon && g->lat) {
            int rc = p2p_astar(c, g, s, t, path, err);
            if (rc != GP_EUNSUPPORTED) return rc;
            gp_err_clear(err);
        }
        return p2p_bidir(c, g, s, t, path, err);
    case GP_P2P_BIDIR: return p2p_bidir(c, g, s, t, path, err);
    case GP_P2P_ASTAR: return p2p_astar(c, g, s, t, path, err);
    default: return gp_err_set(err, GP_EINVAL, "unknown point-to-point algorithm %d", algo);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Threads */

typedef struct job {
    cpu_impl *c;
    const gp_graph *g;
    /* table */
    const uint32_t *src, *dst;
    uint32_t ns, nt;
    uint64_t *out;
    atomic_uint next_src;
    /* apsp */
    int64_t *d;
    uint32_t *nx;
    uint32_t n, tile, ntiles;
    atomic_uint *ctr; /* apsp: per round, the next phase-2 tile and phase-3 tile row */
    atomic_int stop;  /* apsp: set by worker 0 before a round's first barrier when past deadline */
    pthread_barrier_t barrier;
    int nthreads;
    pthread_mutex_t gate_lock; /* apsp start gate: 1 open, -1 abandoned */
    pthread_cond_t gate_cond;
    int gate_open;
    double deadline;  /* the caller's gp_deadline_get() (workers have their own thread-locals) */
    gp_progress *prog; /* the caller's gp_progress_get(): a unit per table source / APSP tile row */
    /* status */
    atomic_int rc;
    gp_err err;
    pthread_mutex_t err_lock;
} job;

typedef struct worker {
    job *j;
    int id;
} worker;

static void job_fail(job *j, int code, const gp_err *e) {
    pthread_mutex_lock(&j->err_lock);
    if (atomic_load(&j->rc) == GP_OK) {
        j->err = *e;
        atomic_store(&j->rc, code);
    }
    pthread_mutex_unlock(&j->err_lock);
}

/* Runs fn on nthreads threads (the caller's thread is worker 0). */
static int run_threads(job *j, int nthreads, void *(*fn)(void *), gp_err *err) {
    worker wk[256];
    pthread_t th[256];
    if (nthreads > 256) nthreads = 256;
    if (nthreads < 1) nthreads = 1;
    j->nthreads = nthreads;
    for (int i = 0; i < nthreads; i++) {
        wk[i].j = j;
        wk[i].id = i;
    }
    /* Work is handed out through an atomic counter, so fewer threads (creation failed) only
     * means less parallelism. */
    int started = 1;
    for (int i = 1; i < nthreads; i++) {
        if (pthread_create(&th[i], NULL, fn, &wk[i]) != 0) break;
        started++;
    }
    fn(&wk[0]);
    for (int i = 1; i < started; i++) pthread_join(th[i], NULL);
    if (atomic_load(&j->rc) != GP_OK) {
        if (err) *err = j->err;
        return atomic_load(&j->rc);
    }
    return GP_OK;
}

static void *table_worker(void *arg) {
    worker *wk = arg;
    job *j = wk->j;
    const gp_graph *g = j->g;
    gp_err e;
    gp_err_clear(&e);
    ws *w = ws_get(j->c, g->n, &e);
    if (w && ws_need_mark(w) != GP_OK) {
        ws_put(j->c, w);
        w = NULL;
        gp_err_set(&e, GP_ENOMEM, "out of memory for table marks of %u nodes", g->n);
    }
    if (!w) {
        job_fail(j, GP_ENOMEM, &e);
        return NULL;
    }
    for (;;) {
        if (atomic_load(&j->rc) != GP_OK) break;
        uint32_t i = atomic_fetch_add(&j->next_src, 1);
        if (i >= j->ns) break;
        /* new stamp marks this source's targets; wrap-around clears marks once */
        if (++w->stamp == 0) {
            memset(w->mark, 0, (size_t)w->mark_cap * sizeof *w->mark);
            w->stamp = 1;
        }
        uint32_t distinct = 0;
        for (uint32_t k = 0; k < j->nt; k++) {
            uint32_t v = j->dst[k];
            if (w->mark[v] != w->stamp) {
                w->mark[v] = w->stamp;
                distinct++;
            }
        }
        int rc = dijkstra(w, g->row, g->col, g->w, j->src[i], GP_INF, GP_NONE, distinct,
                          j->deadline);
        if (rc != GP_OK) {
            /* a timeout's message is written by the calling thread, which knows the limit */
            if (rc == GP_ETIMEOUT) gp_err_set(&e, rc, "query exceeded its time limit");
            else gp_err_set(&e, GP_ENOMEM, "out of memory in Dijkstra's queue");
            job_fail(j, rc, &e);
            break;
        }
        uint64_t *row = j->out + (size_t)i * j->nt;
        for (uint32_t k = 0; k < j->nt; k++) {
            uint32_t v = j->dst[k];
            row[k] = w->hpos[v] == ST_SETTLED ? w->dist[v] : GP_INF;
        }
        ws_reset(w);
        gp_progress_add(j->prog, 1);
    }
    ws_put(j->c, w);
    return NULL;
}

static int cpu_table(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                     const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    for (uint32_t i = 0; i < ns; i++)
        if (check_node(g, src[i], "source", err)) return err ? err->code : GP_EINVAL;
    for (uint32_t i = 0; i < nt; i++)
        if (check_node(g, dst[i], "target", err)) return err ? err->code : GP_EINVAL;
    if (ns == 0 || nt == 0) return GP_OK;
    cpu_impl *c = impl_of(b);
    job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.g = g;
    j.src = src;
    j.dst = dst;
    j.ns = ns;
    j.nt = nt;
    j.out = out;
    j.deadline = gp_deadline_get();
    j.prog = gp_progress_get();
    gp_progress_begin(j.prog, ns);
    atomic_init(&j.next_src, 0);
    atomic_init(&j.rc, GP_OK);
    pthread_mutex_init(&j.err_lock, NULL);
    int nth = c->threads < (int)ns ? c->threads : (int)ns;
    int rc = run_threads(&j, nth, table_worker, err);
    pthread_mutex_destroy(&j.err_lock);
    if (rc == GP_ETIMEOUT) gp_deadline_error(err);
    return rc;
}

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
__attribute__((target("avx2"))) static void fw_row_avx2(int64_t *restrict di,
                                                        uint32_t *restrict ni,
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

static int fw_avx2; /* set once by gp_cpu_backend_new */

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
static void fw_tile(int64_t *restrict d, uint32_t *restrict nx, size_t n, uint32_t i0,
                              uint32_t i1, uint32_t j0, uint32_t j1, uint32_t k0, uint32_t k1) {
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

static inline uint32_t tile_end(const job *j, uint32_t t) {
    uint32_t e = (t + 1) * j->tile;
    return e < j->n ? e : j->n;
}

static void *apsp_worker(void *arg) {
    worker *wk = arg;
    job *j = wk->j;
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
            if (j->deadline > 0 && gp_now() >= j->deadline) atomic_store(&j->stop, 1);
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
            if (x % 2 == 0)
                fw_tile(j->d, j->nx, n, k0, k1, a0, a1, k0, k1); /* row tile (kt, t) */
            else
                fw_tile(j->d, j->nx, n, a0, a1, k0, k1, k0, k1); /* column tile (t, kt) */
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

static int cpu_apsp(gp_backend *b, const gp_graph *g, uint64_t *dist, uint32_t *next,
                    gp_err *err) {
    cpu_impl *c = impl_of(b);
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
    job j;
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
    worker wk[256];
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
        for (size_t x = 0; x < nn; x++) dist[x] = d[x] >= FW_INF ? GP_INF : (uint64_t)(d[x] >> shift);
    } else {
        for (size_t x = 0; x < nn; x++)
            if (d[x] >= FW_INF) dist[x] = GP_INF;
    }
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Lifecycle */

/* Nothing to copy for the CPU; when the graph has coordinates, the A* bound's factor is computed
 * now (at load) rather than on the first A* query. Not for a reweighted version (a cost change,
 * g->base set): its scan of every arc's length (12 ms of the 1 M-node map's 50 ms from PATCH to
 * the new CCH on the H100 machine's 16 cores, seconds on 24 M arcs) would sit between the change
 * and its first answer, which the CCH gives without A*; the first A* query on it computes it. */
static int cpu_attach(gp_backend *b, gp_graph *g, gp_err *err) {
    (void)err;
    if (g->lon && g->lat && !g->base) (void)astar_factor(impl_of(b), g);
    return GP_OK;
}

static void cpu_info(gp_backend *b, gp_backend_info *out) {
    cpu_impl *c = impl_of(b);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "cpu");
    snprintf(out->device, sizeof out->device, "%s", c->model);
    out->threads = c->threads;
    out->healthy = 1;
}

static void cpu_destroy(gp_backend *b) {
    if (!b) return;
    cpu_impl *c = impl_of(b);
    if (c) {
        ws *w = c->pool;
        while (w) {
            ws *nx = w->next;
            ws_free(w);
            w = nx;
        }
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
    free(b);
}

static const gp_backend_ops cpu_ops = {
    .attach = cpu_attach,
    .sssp = cpu_sssp,
    .p2p = cpu_p2p,
    .table = cpu_table,
    .apsp = cpu_apsp,
    .info = cpu_info,
    .destroy = cpu_destroy,
};

/* CPU model name from /proc/cpuinfo ("unknown CPU" when unreadable). */
static void read_cpu_model(char *buf, size_t len) {
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *p = strchr(line, ':');
        if (!p) continue;
        p++;
        while (*p == ' ' || *p == '\t') p++;
        size_t l = strcspn(p, "\n");
        snprintf(buf, len, "%.*s", (int)l, p);
        break;
    }
    fclose(f);
}

gp_backend *gp_cpu_backend_new(int threads, gp_err *err) {
    gp_backend *b = calloc(1, sizeof *b);
    cpu_impl *c = calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        gp_err_set(err, GP_ENOMEM, "out of memory creating the CPU backend");
        return NULL;
    }
    if (threads <= 0) threads = gp_cpu_count();
    if (threads > 256) threads = 256;
    c->threads = threads;
    gp_engine_lab lab;
    gp_engine_lab_get(&lab);
#if FW_HAVE_AVX2_PATH
    __builtin_cpu_init();
    fw_avx2 = __builtin_cpu_supports("avx2") && lab.cpu_avx2;
#endif
    c->astar_binary = lab.astar_binary;
    pthread_mutex_init(&c->lock, NULL);
    read_cpu_model(c->model, sizeof c->model);
    b->ops = &cpu_ops;
    b->impl = c;
    return b;
}

void gp_path_free(gp_path *p) {
    if (!p) return;
    free(p->nodes);
    p->nodes = NULL;
    p->len = 0;
}
