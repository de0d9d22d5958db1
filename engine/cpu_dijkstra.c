/* cpu_dijkstra.c - the CPU backend's Dijkstra family (engine/cpu_backend.c has the overview):
 * sssp (Dijkstra on a radix heap), p2p (unidirectional, bidirectional, A* with a great-circle
 * bound on the radix heap with the binary heap as its fallback) and table (one Dijkstra per source
 * on a pool of threads, each stopping once all its targets settle).
 */
#include "engine/cpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Binary heap with decrease-key (positions in hpos). */

static inline void heap_up(gp_cpu_ws *w, uint32_t i) {
    gp_cpu_hent e = w->heap[i];
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

static inline void heap_down(gp_cpu_ws *w, uint32_t i) {
    gp_cpu_hent e = w->heap[i];
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
static inline void heap_push_or_decrease(gp_cpu_ws *w, uint32_t v, uint64_t key) {
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

static inline uint32_t heap_pop(gp_cpu_ws *w) {
    uint32_t v = w->heap[0].v;
    w->hsize--;
    if (w->hsize > 0) {
        w->heap[0] = w->heap[w->hsize];
        heap_down(w, 0);
    }
    w->hpos[v] = ST_SETTLED;
    return v;
}

static inline void touch(gp_cpu_ws *w, uint32_t v) {
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

static inline int rb_append(gp_cpu_rbucket *b, uint64_t key, uint32_t v) {
    if (b->len == b->cap) {
        uint32_t cap = b->cap ? 2 * b->cap : 256;
        gp_cpu_hent *e = realloc(b->e, (size_t)cap * sizeof *e);
        if (!e) return GP_ENOMEM;
        b->e = e;
        b->cap = cap;
    }
    b->e[b->len].key = key;
    b->e[b->len].v = v;
    b->len++;
    return GP_OK;
}

static inline int rb_push(gp_cpu_ws *w, uint64_t key, uint32_t v) {
    w->rsize++;
    return rb_append(&w->rb[rb_index(key, w->rlast)], key, v);
}

/* Makes bucket 0 hold the smallest key (redistributing the lowest non-empty bucket) and returns
 * that key in *key; the heap must not be empty. The key may belong to a stale entry, which is
 * never below the smallest live key, so it is a valid lower bound for the stopping rules. */
static inline int rb_top(gp_cpu_ws *w, uint64_t *key) {
    if (w->rb[0].len == 0) {
        int i = 1;
        while (w->rb[i].len == 0) i++;
        gp_cpu_rbucket *b = &w->rb[i];
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
static inline int rb_pop(gp_cpu_ws *w, gp_cpu_hent *out) {
    uint64_t key;
    if (rb_top(w, &key) != GP_OK) return GP_ENOMEM;
    w->rsize--;
    *out = w->rb[0].e[--w->rb[0].len];
    return GP_OK;
}

/* Deadline checks (config request_timeout_ms): each op reads the caller's deadline once at entry
 * (gp_deadline_get; worker threads get it through their job) and the search loops look at the
 * clock every DEADLINE_EVERY heap pops, the first pop included, so an expired deadline stops an op
 * before it does any work; a cut (gp_deadline_cut_all, shutdown) stops an op without one too. */
#define DEADLINE_EVERY 4096u
static inline int deadline_passed(double deadline, uint32_t *ticks) {
    return ((*ticks)++ & (DEADLINE_EVERY - 1)) == 0 && gp_deadline_passed(deadline);
}

/* One-to-many Dijkstra from src on (row, col, w) with the radix heap. Stops when `target` is
 * settled (GP_NONE: never), or when `ntargets` nodes whose mark equals w->stamp have settled (0:
 * never). Relaxations beyond max_dist are skipped. Settled nodes have hpos == ST_SETTLED. Returns
 * GP_ENOMEM when a bucket cannot grow, GP_ETIMEOUT past deadline (0: none). */
static int dijkstra(gp_cpu_ws *w, const uint32_t *row, const uint32_t *col, const uint32_t *wt,
                    uint32_t src, uint64_t max_dist, uint32_t target, uint32_t ntargets,
                    double deadline) {
    touch(w, src);
    w->dist[src] = 0;
    if (rb_push(w, 0, src) != GP_OK) return GP_ENOMEM;
    uint64_t settled = 0;
    uint32_t found = 0, ticks = 0;
    while (w->rsize > 0) {
        if (deadline_passed(deadline, &ticks)) return GP_ETIMEOUT;
        gp_cpu_hent x;
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

static int check_node(const gp_graph *g, uint32_t v, const char *what, gp_err *err) {
    if (v >= g->n)
        return gp_err_set(err, GP_EINVAL, "%s node index %u out of range (graph has %u nodes)",
                          what, v, g->n);
    return GP_OK;
}

int gp_cpu_sssp(gp_backend *b, const gp_graph *g, uint32_t src, uint64_t max_dist, uint64_t *dist,
                uint32_t *pred, gp_err *err) {
    if (check_node(g, src, "source", err)) return err ? err->code : GP_EINVAL;
    gp_cpu_impl *c = gp_cpu_impl_of(b);
    gp_cpu_ws *w = gp_cpu_ws_get(c, g->n, err);
    if (!w) return GP_ENOMEM;
    int rc = dijkstra(w, g->row, g->col, g->w, src, max_dist, GP_NONE, 0, gp_deadline_get());
    if (rc != GP_OK) {
        gp_cpu_ws_put(c, w);
        return rc == GP_ETIMEOUT ? gp_deadline_error(err)
                                 : gp_err_set(err, GP_ENOMEM, "out of memory in Dijkstra's queue");
    }
    memcpy(dist, w->dist, (size_t)g->n * sizeof *dist);
    if (pred) memcpy(pred, w->pred, (size_t)g->n * sizeof *pred);
    gp_cpu_ws_put(c, w);
    return GP_OK;
}

/* Fills path from a predecessor chain ending at t (forward) and, when bw is given, the backward
 * search's successor chain from meet to the target. */
static int build_path(gp_path *path, const gp_cpu_ws *fw, uint32_t meet, const gp_cpu_ws *bw,
                      uint64_t dist, gp_err *err) {
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

static int p2p_dijkstra(gp_cpu_impl *c, const gp_graph *g, uint32_t s, uint32_t t, gp_path *path,
                        gp_err *err) {
    gp_cpu_ws *w = gp_cpu_ws_get(c, g->n, err);
    if (!w) return GP_ENOMEM;
    int rc = dijkstra(w, g->row, g->col, g->w, s, GP_INF, t, 0, gp_deadline_get());
    if (rc != GP_OK) {
        gp_cpu_ws_put(c, w);
        return rc == GP_ETIMEOUT ? gp_deadline_error(err)
                                 : gp_err_set(err, rc, "out of memory in Dijkstra's queue");
    }
    path->settled = w->settled;
    if (w->dist[t] != GP_INF && w->hpos[t] == ST_SETTLED)
        rc = build_path(path, w, t, NULL, w->dist[t], err);
    gp_cpu_ws_put(c, w);
    return rc;
}

/* Relaxes u's arcs in one direction of a bidirectional search. A meeting candidate
 * dist_me[v] + dist_other[v] is checked whenever either side lowers dist[v] (here, and on the other
 * side's turn), so every combination of the two sides' values is seen without reading the other
 * side's array for arcs that change nothing. */
static inline int bidir_relax(gp_cpu_ws *me, const gp_cpu_ws *other, const uint32_t *row,
                              const uint32_t *col, const uint32_t *wt, uint32_t u, uint64_t *best,
                              uint32_t *meet) {
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
static inline int bidir_next(gp_cpu_ws *w, uint32_t *u, int *oom) {
    while (w->rsize > 0) {
        gp_cpu_hent x;
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
static inline int bidir_top(gp_cpu_ws *w, uint64_t *key, int *oom) {
    while (w->rsize > 0) {
        if (rb_top(w, key) != GP_OK) {
            *oom = 1;
            return 0;
        }
        const gp_cpu_hent *x = &w->rb[0].e[w->rb[0].len - 1];
        if (x->key == w->dist[x->v] && w->hpos[x->v] != ST_SETTLED) return 1;
        w->rb[0].len--;
        w->rsize--;
    }
    *key = GP_INF;
    return 0;
}

static int p2p_bidir(gp_cpu_impl *c, const gp_graph *g, uint32_t s, uint32_t t, gp_path *path,
                     gp_err *err) {
    gp_cpu_ws *f = gp_cpu_ws_get(c, g->n, err);
    if (!f) return GP_ENOMEM;
    gp_cpu_ws *r = gp_cpu_ws_get(c, g->n, err);
    if (!r) {
        gp_cpu_ws_put(c, f);
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
        gp_cpu_ws *me = tf <= tr ? f : r;
        uint32_t u;
        if (!bidir_next(me, &u, &oom)) break;
        settled++;
        int rc = me == f ? bidir_relax(f, r, g->row, g->col, g->w, u, &best, &meet)
                         : bidir_relax(r, f, g->rrow, g->rcol, g->rw, u, &best, &meet);
        if (rc != GP_OK) oom = 1;
    }
    int rc = GP_OK;
    path->settled = settled;
    if (late) rc = gp_deadline_error(err);
    else if (oom)
        rc = gp_err_set(err, GP_ENOMEM, "out of memory in the bidirectional search's queues");
    else if (best != GP_INF) rc = build_path(path, f, meet, r, best, err);
    gp_cpu_ws_put(c, f);
    gp_cpu_ws_put(c, r);
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
static double astar_factor(gp_cpu_impl *c, const gp_graph *g) {
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < HCACHE_SLOTS; i++) {
        gp_cpu_hcache *h = &c->hc[i];
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
    gp_cpu_hcache *h = &c->hc[c->hc_next++ % HCACHE_SLOTS];
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
static int astar_radix(gp_cpu_ws *w, const gp_graph *g, uint32_t s, uint32_t t, double factor,
                       double deadline, int *found, uint64_t *settled) {
    touch(w, s);
    w->dist[s] = 0;
    w->aux[s] = astar_h(g, factor, s, t);
    if (rb_push(w, w->aux[s], s) != GP_OK) return GP_ENOMEM;
    uint32_t ticks = 0;
    while (w->rsize > 0) {
        if (deadline_passed(deadline, &ticks)) return GP_ETIMEOUT;
        gp_cpu_hent x;
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
static int astar_binary(gp_cpu_ws *w, const gp_graph *g, uint32_t s, uint32_t t, double factor,
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
static int p2p_astar(gp_cpu_impl *c, const gp_graph *g, uint32_t s, uint32_t t, gp_path *path,
                     gp_err *err) {
    if (!g->lon || !g->lat)
        return gp_err_set(err, GP_EUNSUPPORTED, "A* needs node coordinates; this graph has none");
    double factor = astar_factor(c, g);
    gp_cpu_ws *w = gp_cpu_ws_get(c, g->n, err);
    if (!w) return GP_ENOMEM;
    if (gp_cpu_ws_need_aux(w) != GP_OK) {
        gp_cpu_ws_put(c, w);
        return gp_err_set(err, GP_ENOMEM, "out of memory for A* bounds of %u nodes", g->n);
    }
    uint64_t settled = 0;
    int found = 0;
    const double deadline = gp_deadline_get();
    int rc = c->astar_binary ? ASTAR_INCONSISTENT
                             : astar_radix(w, g, s, t, factor, deadline, &found, &settled);
    if (rc == ASTAR_INCONSISTENT) {
        /* rounding made the bound inconsistent somewhere: redo on the binary heap */
        gp_cpu_ws_reset(w);
        settled = 0;
        found = 0;
        rc = astar_binary(w, g, s, t, factor, deadline, &found, &settled);
    }
    if (rc != GP_OK) {
        gp_cpu_ws_put(c, w);
        return rc == GP_ETIMEOUT ? gp_deadline_error(err)
                                 : gp_err_set(err, rc, "out of memory in A*'s queue");
    }
    path->settled = settled;
    if (found) rc = build_path(path, w, t, NULL, w->dist[t], err);
    gp_cpu_ws_put(c, w);
    return rc;
}

int gp_cpu_p2p(gp_backend *b, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
               gp_err *err) {
    path->dist = GP_INF;
    path->nodes = NULL;
    path->len = 0;
    path->settled = 0;
    if (check_node(g, s, "source", err) || check_node(g, t, "target", err))
        return err ? err->code : GP_EINVAL;
    gp_cpu_impl *c = gp_cpu_impl_of(b);
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
 * Table on threads */

static void job_fail(gp_cpu_job *j, int code, const gp_err *e) {
    pthread_mutex_lock(&j->err_lock);
    if (atomic_load(&j->rc) == GP_OK) {
        j->err = *e;
        atomic_store(&j->rc, code);
    }
    pthread_mutex_unlock(&j->err_lock);
}

/* Runs fn on nthreads threads (the caller's thread is worker 0). */
static int run_threads(gp_cpu_job *j, int nthreads, void *(*fn)(void *), gp_err *err) {
    gp_cpu_worker wk[256];
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
    gp_cpu_worker *wk = arg;
    gp_cpu_job *j = wk->j;
    const gp_graph *g = j->g;
    gp_err e;
    gp_err_clear(&e);
    gp_cpu_ws *w = gp_cpu_ws_get(j->c, g->n, &e);
    if (w && gp_cpu_ws_need_mark(w) != GP_OK) {
        gp_cpu_ws_put(j->c, w);
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
        int rc =
            dijkstra(w, g->row, g->col, g->w, j->src[i], GP_INF, GP_NONE, distinct, j->deadline);
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
        gp_cpu_ws_reset(w);
        gp_progress_add(j->prog, 1);
    }
    gp_cpu_ws_put(j->c, w);
    return NULL;
}

int gp_cpu_table(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                 const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    for (uint32_t i = 0; i < ns; i++)
        if (check_node(g, src[i], "source", err)) return err ? err->code : GP_EINVAL;
    for (uint32_t i = 0; i < nt; i++)
        if (check_node(g, dst[i], "target", err)) return err ? err->code : GP_EINVAL;
    if (ns == 0 || nt == 0) return GP_OK;
    gp_cpu_impl *c = gp_cpu_impl_of(b);
    gp_cpu_job j;
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

/* Nothing to copy for the CPU; when the graph has coordinates, the A* bound's factor is computed
 * now (at load) rather than on the first A* query. Not for a reweighted version (a cost change,
 * g->base set): its scan of every arc's length (12 ms of the 1 M-node map's 50 ms from PATCH to
 * the new CCH on the H100 machine's 16 cores, seconds on 24 M arcs) would sit between the change
 * and its first answer, which the CCH gives without A*; the first A* query on it computes it. */
int gp_cpu_attach(gp_backend *b, gp_graph *g, gp_err *err) {
    (void)err;
    if (g->lon && g->lat && !g->base) (void)astar_factor(gp_cpu_impl_of(b), g);
    return GP_OK;
}
