/* planning.c - ECMP link loads from a demand matrix and exhaustive failure analysis (contract in
 * planning.h). Per destination t the work is one pass over the links: count each router's next
 * hops towards t (the ECMP rule of ecmp.c on a distance column), then push the traffic through the
 * shortest-path DAG in Kahn's order. Failure scenarios run one per thread; a scenario recomputes
 * only the destinations whose DAG it touches (incremental) or all of them (full).
 */
#include "engine/planning.h"

#include "engine/progress.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int gp_demands_build(uint32_t n, const uint32_t *src, const uint32_t *dst, const double *vol,
                     size_t count, gp_demands **out, gp_err *err) {
    gp_demands *d = calloc(1, sizeof *d);
    if (d) {
        d->n = n;
        d->off = calloc((size_t)n + 1, sizeof *d->off);
        d->src = malloc((count ? count : 1) * sizeof *d->src);
        d->vol = malloc((count ? count : 1) * sizeof *d->vol);
    }
    if (!d || !d->off || !d->src || !d->vol) {
        gp_demands_free(d);
        return gp_err_set(err, GP_ENOMEM, "out of memory for %zu demands", count);
    }
    for (size_t i = 0; i < count; i++) {
        if (src[i] >= n || dst[i] >= n || !(vol[i] >= 0) || !isfinite(vol[i])) {
            gp_demands_free(d);
            return gp_err_set(err, GP_EINVAL, "demand %zu: bad router or volume", i);
        }
        d->off[dst[i] + 1]++;
    }
    for (uint32_t t = 0; t < n; t++) d->off[t + 1] += d->off[t];
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        gp_demands_free(d);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    memcpy(fill, d->off, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < count; i++) {
        d->src[fill[dst[i]]] = src[i];
        d->vol[fill[dst[i]]++] = vol[i];
    }
    free(fill);
    /* rows of the same pair add up: merge within each destination (sources ascending) */
    size_t w = 0;
    for (uint32_t t = 0; t < n; t++) {
        uint32_t lo = d->off[t], hi = d->off[t + 1];
        for (uint32_t i = lo + 1; i < hi; i++) { /* insertion sort: few rows per destination */
            uint32_t s = d->src[i];
            double v = d->vol[i];
            uint32_t k = i;
            while (k > lo && d->src[k - 1] > s) {
                d->src[k] = d->src[k - 1];
                d->vol[k] = d->vol[k - 1];
                k--;
            }
            d->src[k] = s;
            d->vol[k] = v;
        }
        d->off[t] = (uint32_t)w;
        for (uint32_t i = lo; i < hi; i++) {
            if (w > d->off[t] && d->src[w - 1] == d->src[i]) {
                d->vol[w - 1] += d->vol[i];
            } else {
                d->src[w] = d->src[i];
                d->vol[w++] = d->vol[i];
            }
        }
    }
    d->off[n] = (uint32_t)w;
    d->count = w;
    d->total = 0;
    for (size_t i = 0; i < w; i++) d->total += d->vol[i];
    *out = d;
    return GP_OK;
}

void gp_demands_free(gp_demands *d) {
    if (!d) return;
    free(d->off);
    free(d->src);
    free(d->vol);
    free(d);
}

uint32_t gp_plan_link_tail(const gp_rt *t, uint32_t l) {
    uint32_t lo = 0, hi = t->n; /* largest u with nb_off[u] <= l */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->nb_off[mid] <= l) lo = mid;
        else hi = mid;
    }
    return lo;
}

uint32_t gp_plan_link_find(const gp_rt *t, uint32_t u, uint32_t v) {
    if (u >= t->n) return GP_NONE;
    for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++)
        if (t->nb[l] == v) return l;
    return GP_NONE;
}

void gp_plan_link_caps(const gp_rt *t, double *cap) {
    const gp_graph *g = t->g;
    const double *ac = gp_graph_owner(g)->arc_cap;
    for (uint32_t u = 0; u < t->n; u++)
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
            double c = 0;
            int unknown = !ac;
            for (uint32_t a = g->row[u]; a < g->row[u + 1] && !unknown; a++)
                if (g->col[a] == t->nb[l] && g->w[a] == t->nbw[l]) {
                    if (ac[a] > 0) c += ac[a];
                    else unknown = 1;
                }
            cap[l] = unknown ? 0 : c;
        }
}

uint32_t gp_plan_fail_link(const gp_rt *t, uint32_t u, uint32_t v, uint32_t *links, uint32_t *k) {
    uint32_t added = 0, a = gp_plan_link_find(t, u, v), b = gp_plan_link_find(t, v, u);
    if (a != GP_NONE) links[(*k)++] = a, added++;
    if (b != GP_NONE) links[(*k)++] = b, added++;
    return added;
}

const char *gp_plan_strategy_name(int s) {
    return s == GP_PLAN_INCREMENTAL ? "incremental"
           : s == GP_PLAN_FULL      ? "full"
           : s == GP_PLAN_GPU       ? "gpu"
                                    : "auto";
}

int gp_plan_strategy_parse(const char *s) {
    for (int k = GP_PLAN_AUTO; k <= GP_PLAN_GPU; k++)
        if (strcmp(s, gp_plan_strategy_name(k)) == 0) return k;
    return -1;
}

/* ---- one destination ---- */

/* Scratch of one worker: per-router arrays and the failure masks. */
typedef struct scratch {
    uint32_t *nh, *indeg, *queue, *heap, *hpos;
    double *flow;
    uint64_t *col, *col2; /* distance columns */
    uint8_t *dead_link, *dead_router;
    double *load; /* L */
} scratch;

static void scratch_free(scratch *s) {
    if (!s) return;
    free(s->nh);
    free(s->indeg);
    free(s->queue);
    free(s->heap);
    free(s->hpos);
    free(s->flow);
    free(s->col);
    free(s->col2);
    free(s->dead_link);
    free(s->dead_router);
    free(s->load);
    memset(s, 0, sizeof *s);
}

static int scratch_init(scratch *s, uint32_t n, uint32_t L) {
    memset(s, 0, sizeof *s);
    size_t N = (size_t)n + 1;
    s->nh = malloc(N * sizeof *s->nh);
    s->indeg = malloc(N * sizeof *s->indeg);
    s->queue = malloc(N * sizeof *s->queue);
    s->heap = malloc(N * sizeof *s->heap);
    s->hpos = malloc(N * sizeof *s->hpos);
    s->flow = malloc(N * sizeof *s->flow);
    s->col = malloc(N * sizeof *s->col);
    s->col2 = malloc(N * sizeof *s->col2);
    s->dead_link = calloc((size_t)L + 1, 1);
    s->dead_router = calloc(N, 1);
    s->load = calloc((size_t)L + 1, sizeof *s->load);
    if (!s->nh || !s->indeg || !s->queue || !s->heap || !s->hpos || !s->flow || !s->col ||
        !s->col2 || !s->dead_link || !s->dead_router || !s->load) {
        scratch_free(s);
        return -1;
    }
    return 0;
}

/* Is link l (u -> k) on a shortest path towards the column's destination? */
static inline int on_dag(const gp_rt *t, const uint64_t *col, const scratch *s, uint32_t u,
                         uint32_t l) {
    uint32_t k = t->nb[l];
    if (k == u || (s && (s->dead_link[l] || s->dead_router[k]))) return 0;
    return col[k] != GP_INF && col[k] + t->nbw[l] == col[u];
}

/* Adds sign x the loads of the demands towards dst, distances col (col[u] = d(u, dst), GP_INF
 * unreachable), failures in s (masks; NULL = none), to load. unrouted flags per demand (may be
 * NULL); returns the unrouted volume. */
static double accumulate(const gp_rt *t, const gp_demands *d, uint32_t dst, const uint64_t *col,
                         scratch *s, int masked, double sign, double *load, uint8_t *unrouted) {
    uint32_t n = t->n, cap = t->ecmp_max ? t->ecmp_max : UINT32_MAX;
    const scratch *m = masked ? s : NULL;
    double lost = 0;
    if (d->off[dst] == d->off[dst + 1]) return 0;
    for (uint32_t u = 0; u < n; u++) s->nh[u] = s->indeg[u] = 0, s->flow[u] = 0;
    for (uint32_t u = 0; u < n; u++) {
        if (u == dst || col[u] == GP_INF || (m && s->dead_router[u])) continue;
        uint32_t c = 0;
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1] && c < cap; l++)
            if (on_dag(t, col, m, u, l)) c++, s->indeg[t->nb[l]]++;
        s->nh[u] = c;
    }
    int dst_dead = m && s->dead_router[dst];
    for (uint32_t i = d->off[dst]; i < d->off[dst + 1]; i++) {
        uint32_t src = d->src[i];
        if (src == dst) continue;
        if (dst_dead || col[src] == GP_INF || (m && s->dead_router[src]) || !s->nh[src]) {
            lost += d->vol[i];
            if (unrouted) unrouted[i] = 1;
            continue;
        }
        s->flow[src] += d->vol[i];
    }
    uint32_t qh = 0, qt = 0;
    for (uint32_t u = 0; u < n; u++)
        if (!s->indeg[u] && s->nh[u]) s->queue[qt++] = u;
    while (qh < qt) {
        uint32_t u = s->queue[qh++];
        if (!s->nh[u]) continue;
        double share = s->flow[u] / s->nh[u];
        uint32_t c = 0;
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1] && c < s->nh[u]; l++) {
            if (!on_dag(t, col, m, u, l)) continue;
            c++;
            uint32_t k = t->nb[l];
            if (share != 0) load[l] += sign * share;
            s->flow[k] += share;
            if (--s->indeg[k] == 0 && s->nh[k]) s->queue[qt++] = k;
        }
    }
    return lost;
}

static void base_column(const gp_rt *t, uint32_t dst, uint64_t *col) {
    for (uint32_t u = 0; u < t->n; u++) col[u] = t->dist[(uint64_t)u * t->n + dst];
}

/* ---- reverse Dijkstra towards dst on the failed network ---- */

typedef struct rev_adj {
    uint32_t *off, *tail, *link; /* in-links of each router: tail u and forward link l */
} rev_adj;

static void rev_free(rev_adj *r) {
    if (!r) return;
    free(r->off);
    free(r->tail);
    free(r->link);
}

static int rev_build(const gp_rt *t, rev_adj *r) {
    uint32_t n = t->n, L = gp_plan_links(t);
    r->off = calloc((size_t)n + 1, sizeof *r->off);
    r->tail = malloc(((size_t)L + 1) * sizeof *r->tail);
    r->link = malloc(((size_t)L + 1) * sizeof *r->link);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!r->off || !r->tail || !r->link || !fill) {
        free(fill);
        rev_free(r);
        return -1;
    }
    for (uint32_t l = 0; l < L; l++) r->off[t->nb[l] + 1]++;
    for (uint32_t v = 0; v < n; v++) r->off[v + 1] += r->off[v];
    memcpy(fill, r->off, ((size_t)n + 1) * sizeof *fill);
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
            uint32_t k = fill[t->nb[l]]++;
            r->tail[k] = u;
            r->link[k] = l;
        }
    free(fill);
    return 0;
}

static void heap_up(uint32_t *h, uint32_t *pos, const uint64_t *key, uint32_t i) {
    uint32_t v = h[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (key[h[p]] <= key[v]) break;
        h[i] = h[p];
        pos[h[i]] = i;
        i = p;
    }
    h[i] = v;
    pos[v] = i;
}

static void heap_down(uint32_t *h, uint32_t *pos, const uint64_t *key, uint32_t sz, uint32_t i) {
    uint32_t v = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= sz) break;
        if (c + 1 < sz && key[h[c + 1]] < key[h[c]]) c++;
        if (key[h[c]] >= key[v]) break;
        h[i] = h[c];
        pos[h[i]] = i;
        i = c;
    }
    h[i] = v;
    pos[v] = i;
}

/* col[u] = d(u, dst) without the failed links and routers of s. */
static void rev_dijkstra(const gp_rt *t, const rev_adj *r, uint32_t dst, scratch *s,
                         uint64_t *col) {
    uint32_t n = t->n, sz = 0;
    for (uint32_t u = 0; u < n; u++) col[u] = GP_INF, s->hpos[u] = GP_NONE;
    if (s->dead_router[dst]) return;
    col[dst] = 0;
    s->heap[sz++] = dst;
    s->hpos[dst] = 0;
    while (sz) {
        uint32_t v = s->heap[0];
        s->hpos[v] = GP_NONE - 1; /* settled */
        s->heap[0] = s->heap[--sz];
        if (sz) heap_down(s->heap, s->hpos, col, sz, 0);
        for (uint32_t k = r->off[v]; k < r->off[v + 1]; k++) {
            uint32_t u = r->tail[k], l = r->link[k];
            if (s->dead_link[l] || s->dead_router[u] || s->hpos[u] == GP_NONE - 1) continue;
            uint64_t nd = col[v] + t->nbw[l];
            if (nd >= col[u]) continue;
            col[u] = nd;
            if (s->hpos[u] == GP_NONE) {
                s->heap[sz] = u;
                heap_up(s->heap, s->hpos, col, sz++);
            } else {
                heap_up(s->heap, s->hpos, col, s->hpos[u]);
            }
        }
    }
}

/* ---- base loads: destinations spread over threads ---- */

typedef struct load_ctx {
    const gp_rt *t;
    const gp_demands *d;
    uint8_t *unrouted;
    int threads;
    atomic_uint next;
    double *loads; /* threads * L */
    double *lost;  /* threads */
    int failed;
} load_ctx;

typedef struct load_arg {
    load_ctx *c;
    int k;
} load_arg;

static void *load_worker(void *arg) {
    load_arg *a = arg;
    load_ctx *c = a->c;
    scratch s;
    if (scratch_init(&s, c->t->n, gp_plan_links(c->t))) {
        c->failed = 1;
        return NULL;
    }
    double *load = c->loads + (size_t)a->k * gp_plan_links(c->t), lost = 0;
    for (;;) {
        uint32_t dst = atomic_fetch_add(&c->next, 1);
        if (dst >= c->t->n) break;
        base_column(c->t, dst, s.col);
        lost += accumulate(c->t, c->d, dst, s.col, &s, 0, 1.0, load, c->unrouted);
    }
    c->lost[a->k] = lost;
    scratch_free(&s);
    return NULL;
}

static int nthreads(int threads, uint64_t items) {
    int T = threads > 0 ? threads : gp_cpu_count();
    if (T > 64) T = 64;
    if ((uint64_t)T > items) T = (int)(items ? items : 1);
    return T;
}

/* Runs fn(arg[k]) on T threads (the caller's among them). */
static void run_threads(int T, void *(*fn)(void *), void *args, size_t argsz) {
    pthread_t th[64];
    int started[64] = {0};
    for (int k = 1; k < T; k++)
        started[k] = pthread_create(&th[k], NULL, fn, (char *)args + (size_t)k * argsz) == 0;
    for (int k = 1; k < T; k++)
        if (!started[k]) fn((char *)args + (size_t)k * argsz);
    fn(args);
    for (int k = 1; k < T; k++)
        if (started[k]) pthread_join(th[k], NULL);
}

int gp_plan_load(const gp_rt *t, const gp_demands *d, int threads, double *load, uint8_t *unrouted,
                 double *unrouted_vol, gp_err *err) {
    uint32_t L = gp_plan_links(t);
    if (d->n != t->n) return gp_err_set(err, GP_EINVAL, "demands are for another router set");
    int T = nthreads(threads, t->n);
    load_ctx c = {.t = t, .d = d, .unrouted = unrouted, .threads = T};
    atomic_init(&c.next, 0);
    c.loads = calloc((size_t)T * L + 1, sizeof *c.loads);
    c.lost = calloc((size_t)T, sizeof *c.lost);
    load_arg args[64];
    if (!c.loads || !c.lost) {
        free(c.loads);
        free(c.lost);
        return gp_err_set(err, GP_ENOMEM, "out of memory for link loads");
    }
    if (unrouted) memset(unrouted, 0, d->count ? d->count : 1);
    for (int k = 0; k < T; k++) args[k] = (load_arg){&c, k};
    run_threads(T, load_worker, args, sizeof args[0]);
    int rc = GP_OK;
    if (c.failed) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for link loads");
    } else {
        double lost = 0;
        for (uint32_t l = 0; l < L; l++) {
            double x = 0;
            for (int k = 0; k < T; k++) x += c.loads[(size_t)k * L + l];
            load[l] = x;
        }
        for (int k = 0; k < T; k++) lost += c.lost[k];
        if (unrouted_vol) *unrouted_vol = lost;
    }
    free(c.loads);
    free(c.lost);
    return rc;
}

void gp_plan_worst(const gp_rt *t, const double *load, const double *cap, gp_scenario_result *r) {
    uint32_t L = gp_plan_links(t);
    r->worst_utilization = -1;
    r->worst_link = GP_NONE;
    r->worst_load = 0;
    uint32_t most = GP_NONE;
    for (int k = 0; k < 8; k++) r->top[k] = GP_NONE, r->top_load[k] = 0;
    for (uint32_t l = 0; l < L; l++) {
        double x = load[l];
        if (!(x > 0)) continue;
        if (most == GP_NONE || x > load[most]) most = l;
        if (cap && cap[l] > 0 && x / cap[l] > r->worst_utilization) {
            r->worst_utilization = x / cap[l];
            r->worst_link = l;
        }
        int k = 8; /* insert into the top list (load descending, link ascending on ties) */
        while (k > 0 && (r->top[k - 1] == GP_NONE || r->top_load[k - 1] < x)) k--;
        if (k < 8) {
            memmove(&r->top[k + 1], &r->top[k], (size_t)(7 - k) * sizeof r->top[0]);
            memmove(&r->top_load[k + 1], &r->top_load[k], (size_t)(7 - k) * sizeof r->top_load[0]);
            r->top[k] = l;
            r->top_load[k] = x;
        }
    }
    if (r->worst_link == GP_NONE) r->worst_link = most;
    if (r->worst_link != GP_NONE) r->worst_load = load[r->worst_link];
}

/* ---- failure scenarios ---- */

typedef struct fail_ctx {
    gp_engine *e;
    const gp_rt *t;
    const gp_demands *d;
    const double *cap;
    const gp_fail *sc;
    size_t nscen;
    int strategy; /* incremental or full */
    const double *base;
    double base_lost; /* unrouted volume without failures */
    rev_adj rev;
    uint32_t list_max;
    gp_scenario_result *res;
    gp_progress *prog;
    atomic_size_t next;
    atomic_uint_fast64_t columns, accs, affected;
    int failed;
    int cancelled; /* a worker saw gp_progress_cancelled: the results are incomplete */
} fail_ctx;

typedef struct fail_arg {
    fail_ctx *c;
} fail_arg;

/* Next-hop sets of u towards the column's destination equal before (base col, no mask) and
 * after (col2, masked)? */
static int same_hops(const gp_rt *t, const uint64_t *col, const uint64_t *col2, const scratch *s,
                     uint32_t u) {
    uint32_t cap = t->ecmp_max ? t->ecmp_max : UINT32_MAX, ca = 0, cb = 0;
    for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
        int a = ca < cap && on_dag(t, col, NULL, u, l);
        int b = cb < cap && on_dag(t, col2, s, u, l);
        ca += (uint32_t)a;
        cb += (uint32_t)b;
        if (a != b) return 0;
    }
    return 1;
}

/* base_on_dag: link l = u -> k on a shortest path towards dst without failures */
static inline int base_on_dag(const gp_rt *t, uint32_t dst, uint32_t u, uint32_t l) {
    uint32_t k = t->nb[l];
    uint64_t dk = t->dist[(uint64_t)k * t->n + dst];
    return k != u && dk != GP_INF && dk + t->nbw[l] == t->dist[(uint64_t)u * t->n + dst];
}

/* Counts dst's changed and disconnected pairs (base column s->col, new s->col2) into r and, with
 * list_max, lists them (routers ascending) while r holds fewer than list_max. -1 out of memory. */
static int note_changes(const gp_rt *t, const scratch *s, uint32_t dst, uint32_t list_max,
                        gp_scenario_result *r) {
    for (uint32_t u = 0; u < t->n; u++) {
        if (u == dst) continue;
        int dis = s->col[u] != GP_INF && s->col2[u] == GP_INF;
        r->disconnected_pairs += (uint64_t)dis;
        if (s->dead_router[u] ? s->col[u] == GP_INF : same_hops(t, s->col, s->col2, s, u)) continue;
        r->changed_pairs++;
        if (!list_max) continue;
        if (r->npairs == list_max) {
            r->pairs_truncated = 1;
            continue;
        }
        uint32_t k = r->npairs;
        if (k == 0 || (k >= 16 && !(k & (k - 1)))) { /* capacity 16, then doubling */
            size_t c = k ? (size_t)k * 2 : 16;
            gp_plan_pair *p = realloc(r->pairs, c * sizeof *p);
            if (!p) return -1;
            r->pairs = p;
        }
        r->pairs[k] = (gp_plan_pair){.router = u, .dst = dst, .disconnected = (uint32_t)dis};
        r->npairs++;
    }
    return 0;
}

void gp_plan_results_free(gp_scenario_result *res, size_t n) {
    if (!res) return;
    for (size_t i = 0; i < n; i++) {
        free(res[i].pairs);
        res[i].pairs = NULL;
        res[i].npairs = 0;
    }
}

int gp_plan_touches(const gp_rt *t, const gp_fail *f, uint32_t dst, const uint8_t *dead_router,
                    int *transit) {
    /* transit: a failed link or router that traffic of a live router crosses (distances change);
     * source-only: a failed router's own links */
    int tr = dead_router[dst], touched = tr;
    for (uint32_t i = 0; i < f->nlinks && !tr; i++) {
        uint32_t l = f->links[i], u = gp_plan_link_tail(t, l);
        if (base_on_dag(t, dst, u, l)) {
            touched = 1;
            if (!dead_router[u]) tr = 1;
        }
    }
    for (uint32_t i = 0; i < f->nrouters && !tr; i++) {
        uint32_t rr = f->routers[i];
        if (rr != dst && t->dist[(uint64_t)rr * t->n + dst] != GP_INF) touched = 1;
        if (touched && !transit) return 1; /* the caller only asks whether */
        for (uint32_t l = t->nb_off[rr]; l < t->nb_off[rr + 1] && !tr; l++) {
            uint32_t k = t->nb[l], back = gp_plan_link_find(t, k, rr);
            if (back != GP_NONE && !dead_router[k] && base_on_dag(t, dst, k, back)) tr = 1;
        }
    }
    if (transit) *transit = tr;
    return touched | tr;
}

void gp_plan_finish(const gp_rt *t, const gp_demands *d, const double *cap, const gp_fail *f,
                    double *load, double lost, gp_scenario_result *r) {
    /* the subtraction leaves rounding residue on links that no longer carry traffic */
    double eps = 1e-9 * (d->total > 0 ? d->total : 1);
    uint32_t L = gp_plan_links(t);
    for (uint32_t l = 0; l < L; l++)
        if (fabs(load[l]) < eps) load[l] = 0;
    for (uint32_t i = 0; i < f->nlinks; i++) load[f->links[i]] = 0;
    gp_plan_worst(t, load, cap, r);
    r->unrouted_volume = fabs(lost) < eps ? 0 : lost;
}

/* s->col2: dst's column under f (masks in s) from the base column s->col: a reverse Dijkstra
 * when recompute, else the base with f's routers cut off. */
static void new_column(const gp_rt *t, const rev_adj *rev, const gp_fail *f, scratch *s,
                       uint32_t dst, int recompute) {
    if (recompute) {
        rev_dijkstra(t, rev, dst, s, s->col2);
        return;
    }
    memcpy(s->col2, s->col, (size_t)t->n * sizeof *s->col2);
    for (uint32_t i = 0; i < f->nrouters; i++) s->col2[f->routers[i]] = GP_INF;
}

int gp_plan_list_pairs(const gp_rt *t, const gp_fail *f, uint32_t list_max, gp_scenario_result *r) {
    scratch s;
    rev_adj rev = {0};
    if (scratch_init(&s, t->n, gp_plan_links(t))) return -1;
    if (rev_build(t, &rev)) {
        scratch_free(&s);
        return -1;
    }
    gp_scenario_result x;
    memset(&x, 0, sizeof x);
    for (uint32_t i = 0; i < f->nlinks; i++) s.dead_link[f->links[i]] = 1;
    for (uint32_t i = 0; i < f->nrouters; i++) s.dead_router[f->routers[i]] = 1;
    int rc = 0;
    for (uint32_t dst = 0; dst < t->n && !rc; dst++) {
        base_column(t, dst, s.col);
        int transit = 0;
        if (!gp_plan_touches(t, f, dst, s.dead_router, &transit)) continue;
        new_column(t, &rev, f, &s, dst, transit);
        rc = note_changes(t, &s, dst, list_max, &x);
    }
    free(r->pairs);
    r->pairs = x.pairs;
    r->npairs = x.npairs;
    r->pairs_truncated = x.pairs_truncated;
    rev_free(&rev);
    scratch_free(&s);
    return rc;
}

static void run_scenario(fail_ctx *c, scratch *s, size_t si) {
    const gp_rt *t = c->t;
    const gp_fail *f = &c->sc[si];
    uint32_t n = t->n, L = gp_plan_links(t);
    gp_scenario_result *r = &c->res[si];
    memset(r, 0, sizeof *r);
    for (uint32_t i = 0; i < f->nlinks; i++) s->dead_link[f->links[i]] = 1;
    for (uint32_t i = 0; i < f->nrouters; i++) s->dead_router[f->routers[i]] = 1;
    int full = c->strategy == GP_PLAN_FULL;
    if (full) memset(s->load, 0, (size_t)L * sizeof *s->load);
    else memcpy(s->load, c->base, (size_t)L * sizeof *s->load);
    uint64_t cols = 0, accs = 0;
    double lost = full ? 0 : c->base_lost;
    for (uint32_t dst = 0; dst < n; dst++) {
        base_column(t, dst, s->col);
        int transit = 0, touched = gp_plan_touches(t, f, dst, s->dead_router, &transit);
        if (!touched && !full) continue;
        if (touched) r->affected++;
        new_column(t, &c->rev, f, s, dst, transit || full);
        cols += (uint64_t)(transit || full);
        if (!full) { /* take out dst's old contribution (and its old unrouted volume) */
            lost -= accumulate(t, c->d, dst, s->col, s, 0, -1.0, s->load, NULL);
            accs++;
        }
        lost += accumulate(t, c->d, dst, s->col2, s, 1, 1.0, s->load, NULL);
        accs++;
        if (touched && note_changes(t, s, dst, c->list_max, r)) c->failed = 1;
    }
    gp_plan_finish(t, c->d, c->cap, f, s->load, lost, r);
    for (uint32_t i = 0; i < f->nlinks; i++) s->dead_link[f->links[i]] = 0;
    for (uint32_t i = 0; i < f->nrouters; i++) s->dead_router[f->routers[i]] = 0;
    atomic_fetch_add(&c->columns, cols);
    atomic_fetch_add(&c->accs, accs);
    atomic_fetch_add(&c->affected, r->affected);
}

static void *fail_worker(void *arg) {
    fail_ctx *c = ((fail_arg *)arg)->c;
    scratch s;
    if (scratch_init(&s, c->t->n, gp_plan_links(c->t))) {
        c->failed = 1;
        return NULL;
    }
    for (;;) {
        size_t si = atomic_fetch_add(&c->next, 1);
        if (si >= c->nscen) break;
        if (gp_progress_cancelled(c->prog)) {
            c->cancelled = 1;
            break;
        }
        run_scenario(c, &s, si);
        gp_progress_add(c->prog, 1);
    }
    scratch_free(&s);
    return NULL;
}

int gp_plan_failures(gp_engine *e, const gp_rt *t, const gp_demands *d, const double *cap,
                     const gp_fail *sc, size_t nscen, int strategy, int threads,
                     gp_scenario_result *res, double *base_load, gp_plan_stats *st, gp_err *err) {
    return gp_plan_failures_opts(e, t, d, cap, sc, nscen, strategy, threads, NULL, res, base_load,
                                 st, err);
}

int gp_plan_failures_opts(gp_engine *e, const gp_rt *t, const gp_demands *d, const double *cap,
                          const gp_fail *sc, size_t nscen, int strategy, int threads,
                          const gp_plan_opts *o, gp_scenario_result *res, double *base_load,
                          gp_plan_stats *st, gp_err *err) {
    double t0 = gp_now();
    uint32_t list_max = o ? o->list_max : 0;
    uint32_t L = gp_plan_links(t);
    if (d->n != t->n) return gp_err_set(err, GP_EINVAL, "demands are for another router set");
    for (size_t i = 0; i < nscen; i++) {
        for (uint32_t k = 0; k < sc[i].nlinks; k++)
            if (sc[i].links[k] >= L)
                return gp_err_set(err, GP_EINVAL, "scenario %zu: link %u out of range", i,
                                  sc[i].links[k]);
        for (uint32_t k = 0; k < sc[i].nrouters; k++)
            if (sc[i].routers[k] >= t->n)
                return gp_err_set(err, GP_EINVAL, "scenario %zu: router %u out of range", i,
                                  sc[i].routers[k]);
    }
    gp_progress *prog = gp_progress_get();
    gp_progress_begin(prog, nscen + 1);
    fail_ctx c = {.e = e,
                  .t = t,
                  .d = d,
                  .cap = cap,
                  .sc = sc,
                  .nscen = nscen,
                  .res = res,
                  .prog = prog,
                  .list_max = list_max};
    atomic_init(&c.next, 0);
    atomic_init(&c.columns, 0);
    atomic_init(&c.accs, 0);
    atomic_init(&c.affected, 0);
    double *base = malloc(((size_t)L + 1) * sizeof *base);
    if (!base || rev_build(t, &c.rev)) {
        free(base);
        return gp_err_set(err, GP_ENOMEM, "out of memory for failure analysis");
    }
    double base_lost = 0;
    int rc = gp_plan_load(t, d, threads, base, NULL, &base_lost, err);
    double t1 = gp_now();
    gp_progress_add(prog, 1);
    if (rc == GP_OK) {
        c.base = base;
        c.base_lost = base_lost;
        if (strategy == GP_PLAN_GPU ||
            (strategy == GP_PLAN_AUTO && e && e->primary != e->cpu && !e->primary_failed)) {
            rc = gp_plan_failures_cuda(t, d, cap, sc, nscen, base, base_lost, threads, list_max,
                                       res, st, err);
            if (rc == GP_OK || rc == GP_ECANCELLED || strategy == GP_PLAN_GPU) goto done;
            rc = GP_OK; /* auto: the CPU threads after all */
        }
        if (strategy == GP_PLAN_AUTO) {
            /* estimate the share of affected destinations from a sample of scenarios */
            strategy = GP_PLAN_INCREMENTAL;
            size_t sample = nscen < 8 ? nscen : 8;
            uint64_t on = 0;
            for (size_t i = 0; i < sample; i++) {
                size_t si = i * nscen / (sample ? sample : 1);
                for (uint32_t dst = 0; dst < t->n; dst++) {
                    int hit = 0;
                    for (uint32_t k = 0; k < sc[si].nlinks && !hit; k++) {
                        uint32_t l = sc[si].links[k], u = gp_plan_link_tail(t, l), v = t->nb[l];
                        uint64_t du = t->dist[(uint64_t)u * t->n + dst],
                                 dv = t->dist[(uint64_t)v * t->n + dst];
                        hit = dv != GP_INF && dv + t->nbw[l] == du;
                    }
                    on += (uint64_t)(hit || sc[si].nrouters);
                }
            }
            /* incremental does what full does for an affected destination plus taking out its old
             * loads, and nothing for the others: full only pays when nearly all are affected */
            if (sample && on * 10 >= (uint64_t)sample * t->n * 9) strategy = GP_PLAN_FULL;
        }
        c.strategy = strategy;
        int T = nthreads(threads, nscen);
        fail_arg args[64];
        for (int k = 0; k < T; k++) args[k].c = &c;
        if (nscen) run_threads(T, fail_worker, args, sizeof args[0]);
        if (c.failed) rc = gp_err_set(err, GP_ENOMEM, "out of memory for failure analysis");
        else if (c.cancelled) rc = gp_err_set(err, GP_ECANCELLED, "failure analysis cancelled");
    }
    if (st) {
        st->strategy = strategy;
        st->columns = atomic_load(&c.columns);
        st->accumulations = atomic_load(&c.accs);
        st->affected_sum = atomic_load(&c.affected);
    }
done:
    if (rc == GP_OK && base_load) memcpy(base_load, base, (size_t)L * sizeof *base);
    if (st) {
        st->seconds = gp_now() - t0;
        st->base_s = t1 - t0;
    }
    rev_free(&c.rev);
    free(base);
    return rc;
}
