/* cch_custom.c - the CCH's customization on the CPU (cch.h): the metric mapped onto the CCH edges
 * (gp_cch_map_metric), basic customization edge by edge in level order over lower triangles, the
 * edges of one level split over a team of threads with a barrier between levels, each weight
 * keeping its witness (the first lower triangle realising it), packed afterwards into one 64-bit
 * word per edge and direction so that unpacking a shortcut costs one read; and the perfect
 * customization (gp_cch_perfect, in the foreground or on a thread of its own), which prunes the
 * query arcs.
 */
#include "engine/cch_internal.h"
#include "graph/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline uint32_t sat_add(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t)a + b;
    return s >= GP_CCH_INF ? GP_CCH_INF : (uint32_t)s;
}

/* ---------------------------------------------------------------------------------------------
 * Metric and customization */

/* Maps the arcs of nodes [lo, hi) of g onto c's edges; returns the first node with an arc that
 * is not a CCH edge in a direction of the topology's (its tail), or GP_NONE. An edge's up slot (ofw) is written only by arcs of its
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
            uint32_t e = ru < rv ? gp_cch_find_edge(t, ru, rv) : gp_cch_find_edge(t, rv, ru);
            /* a direction the topology was not built with: its triangles were pruned for it */
            if (e == GP_NONE || !(t->adir[e] & (ru < rv ? GP_CCH_DIR_UP : GP_CCH_DIR_DOWN))) {
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

/* c's arrays are about to be rewritten: they no longer are prev's but at c->delta. */
static void delta_drop(gp_cch *c) {
    free(c->delta);
    c->delta = NULL;
    c->ndelta = 0;
}

int gp_cch_map_metric(gp_cch *c, const gp_graph *g, gp_err *err) {
    const gp_cch_topo *t = c->topo;
    delta_drop(c);
    free(c->mchg);
    c->mchg = NULL;
    c->nmchg = 0;
    c->mchg_ok = 0; /* every edge mapped: no list against a predecessor */
    c->from_prev = 0;
    gp_parallel_for(t->m, t->m >= (1u << 20) ? 0 : 1, inf_ranges, c);
    /* a reweighted road graph maps 2-20 M arcs on every cost change: on all CPUs */
    map_ctx m = {c, g, PTHREAD_MUTEX_INITIALIZER, GP_NONE, GP_NONE};
    gp_parallel_for(g->n, g->m >= (1u << 18) ? 0 : 1, map_ranges, &m);
    pthread_mutex_destroy(&m.mu);
    if (m.bad_u != GP_NONE)
        return gp_err_set(err, GP_EINVAL, "arc %u->%u is not an edge of the CCH in that direction",
                          m.bad_u, m.bad_v);
    return GP_OK;
}

/* The metric of g, a version of the graph pg whose customized CCH p is over c's topology (pg: g's
 * base, or the version g was made from): p's original weights copied, the slots of the arcs whose
 * weight differs from pg's mapped again (the minimum over the parallel arcs of the same slot), and
 * each slot whose value changed listed. Nodes in ranges on threads: a slot is written only from the
 * rows of its ends, as in map_range; the list is appended to atomically (an edge may come twice:
 * its two slots; sorted and made unique afterwards). */
typedef struct remap_job {
    gp_cch *c;
    const gp_cch *p;
    const gp_graph *g, *b;
    uint32_t *chg;         /* one entry per arc read at most */
    uint32_t nchg;         /* atomic */
    const uint32_t *tails; /* remap_listed's nodes */
} remap_job;

static void remap_copy(void *jv, uint64_t lo, uint64_t hi) {
    remap_job *j = jv;
    memcpy(j->c->ofw + lo, j->p->ofw + lo, (size_t)(hi - lo) * 4);
    memcpy(j->c->obw + lo, j->p->obw + lo, (size_t)(hi - lo) * 4);
}

/* A range's changed slots, appended to j->chg a batch at a time: one atomic per changed slot on
 * the shared count kept every thread waiting on its cache line (the map took ~200 ns a changed
 * slot on 16 threads: road-like 4M's 92k changed edges a speed file, 19 ms). */
typedef struct chg_buf {
    remap_job *j;
    uint32_t n;
    uint32_t e[256];
} chg_buf;

static void chg_flush(chg_buf *b) {
    if (!b->n) return;
    uint32_t at = __atomic_fetch_add(&b->j->nchg, b->n, __ATOMIC_RELAXED);
    memcpy(b->j->chg + at, b->e, (size_t)b->n * 4);
    b->n = 0;
}

static void remap_node(chg_buf *cb, uint32_t u) {
    remap_job *j = cb->j;
    const gp_cch_topo *t = j->c->topo;
    const gp_graph *g = j->g;
    for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
        uint32_t v = g->col[a];
        if (g->w[a] == j->b->w[a] || v == u) continue;
        uint32_t ru = t->rank[u], rv = t->rank[v], x = GP_CCH_INF;
        uint32_t e = ru < rv ? gp_cch_find_edge(t, ru, rv) : gp_cch_find_edge(t, rv, ru);
        for (uint32_t k = g->row[u]; k < g->row[u + 1]; k++)
            if (g->col[k] == v && g->w[k] < x) x = g->w[k];
        if (e == GP_NONE) continue;
        uint32_t *slot = ru < rv ? &j->c->ofw[e] : &j->c->obw[e];
        if (*slot == x) continue;
        *slot = x;
        if (!j->chg) continue;
        if (cb->n == sizeof cb->e / sizeof *cb->e) chg_flush(cb);
        cb->e[cb->n++] = e;
    }
}

static void remap_nodes(void *jv, uint64_t lo, uint64_t hi) {
    chg_buf cb = {.j = jv, .n = 0};
    for (uint64_t u = lo; u < hi; u++) remap_node(&cb, (uint32_t)u);
    chg_flush(&cb);
}

/* The nodes of a list (j->tails: distinct, so no slot is written from two threads). */
static void remap_listed(void *jv, uint64_t lo, uint64_t hi) {
    remap_job *j = jv;
    chg_buf cb = {.j = j, .n = 0};
    for (uint64_t i = lo; i < hi; i++) remap_node(&cb, j->tails[i]);
    chg_flush(&cb);
}

/* The nodes outside of which g's weights are pg's: the union of both versions' lists against
 * their base (gp_graph diff_tails; pg the base itself: g's list), into *out (malloc'd, distinct);
 * -1 when a list is not known, or out of memory. */
static int64_t tails_union(const gp_graph *g, const gp_graph *pg, uint32_t **out) {
    const gp_graph *b = gp_graph_owner(g);
    *out = NULL;
    if (!g->base || !g->diff_tails || gp_graph_owner(pg) != b || (pg != b && !pg->diff_tails))
        return -1;
    const uint32_t *x = g->diff_tails, *y = pg != b ? pg->diff_tails : NULL;
    uint32_t nx = g->ndiff_tails, ny = y ? pg->ndiff_tails : 0, i = 0, k = 0;
    uint32_t *u = malloc(((size_t)nx + ny + 1) * 4);
    if (!u) return -1;
    int64_t n = 0;
    while (i < nx || k < ny) { /* a merge of two ascending lists */
        uint32_t v = k >= ny || (i < nx && x[i] <= y[k]) ? x[i] : y[k];
        while (i < nx && x[i] == v) i++;
        while (k < ny && y[k] == v) k++;
        u[n++] = v;
    }
    *out = u;
    return n;
}

/* The arcs of the listed tails, summed in chunks on all CPUs (~1M tails of road-like 24M's turn
 * graph a speed file, their rows read at random). */
typedef struct deg_job {
    const gp_graph *g;
    const uint32_t *tails;
    uint64_t n, sum; /* sum: atomic */
} deg_job;

static void deg_range(void *jv, uint64_t lo, uint64_t hi) {
    deg_job *j = jv;
    uint64_t s = 0;
    for (uint64_t i = lo; i < hi; i++) s += j->g->row[j->tails[i] + 1] - j->g->row[j->tails[i]];
    __atomic_add_fetch(&j->sum, s, __ATOMIC_RELAXED);
}

int gp_cch_map_metric_from(gp_cch *c, const gp_graph *g, const gp_cch *p, const gp_graph *pg,
                           gp_err *err) {
    const gp_cch_topo *t = c->topo;
    remap_job j = {c, p, g, pg, NULL, 0, NULL};
    delta_drop(c);
    free(c->mchg);
    c->mchg = NULL;
    c->nmchg = 0;
    c->mchg_ok = 0;
    if (!c->from_prev) gp_parallel_for(t->m, t->m >= (1u << 20) ? 0 : 1, remap_copy, &j);
    /* the arcs of the nodes where either version differs from the base (a speed file: ~1% of
     * the nodes), or every node */
    uint32_t *tails = NULL;
    int64_t nt = tails_union(g, pg, &tails);
    uint64_t cap = (uint64_t)g->m + 1;
    if (nt >= 0) {
        deg_job dj = {g, tails, (uint64_t)nt, 0};
        gp_parallel_for_dynamic((uint64_t)nt, nt >= 65536 ? 0 : 1, 0, deg_range, &dj);
        cap = dj.sum + 1;
    }
    j.chg = malloc(cap * 4);
    j.tails = tails;
    /* ~20k tails a speed file, each a few binary searches: every CPU (the even split needs 64k
     * items a thread) */
    if (j.chg && nt >= 0)
        gp_parallel_for_dynamic((uint64_t)nt, nt >= 4096 ? 0 : 1, 0, remap_listed, &j);
    else if (j.chg) gp_parallel_for(g->n, g->m >= (1u << 18) ? 0 : 1, remap_nodes, &j);
    free(tails);
    if (!j.chg) return gp_err_set(err, GP_ENOMEM, "out of memory for the changed CCH edges");
    if (gp_sort_u32(j.chg, j.nchg) != 0) { /* ~100k entries a speed file: not qsort */
        free(j.chg);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the changed CCH edges");
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < j.nchg; i++)
        if (!n || j.chg[n - 1] != j.chg[i]) j.chg[n++] = j.chg[i];
    uint32_t *shrunk = realloc(j.chg, (size_t)n * 4 + 4);
    c->mchg = shrunk ? shrunk : j.chg;
    c->nmchg = n;
    c->mchg_ok = 1;
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

typedef struct restore_job {
    gp_cch *c;
    const gp_cch *p;
    const uint32_t *delta;
    int what;
} restore_job;

static void restore_ranges(void *jv, uint64_t lo, uint64_t hi) {
    restore_job *j = jv;
    gp_cch *c = j->c;
    const gp_cch *p = j->p;
    if (j->what & GP_CCH_RESTORE_METRIC)
        for (uint64_t i = lo; i < hi; i++) {
            uint32_t e = j->delta[i];
            c->ofw[e] = p->ofw[e], c->obw[e] = p->obw[e];
        }
    if (j->what & GP_CCH_RESTORE_CUSTOM)
        for (uint64_t i = lo; i < hi; i++) {
            uint32_t e = j->delta[i];
            c->fw[e] = p->fw[e], c->bw[e] = p->bw[e];
            c->fmid[e] = p->fmid[e], c->bmid[e] = p->bmid[e];
            c->wit[2 * (size_t)e] = p->wit[2 * (size_t)e];
            c->wit[2 * (size_t)e + 1] = p->wit[2 * (size_t)e + 1];
        }
}

/* A delta of a device customization may list millions of edges: on all CPUs then. */
void gp_cch_restore_from(gp_cch *c, const gp_cch *p, const uint32_t *delta, uint32_t n, int what) {
    restore_job j = {c, p, delta, what};
    gp_parallel_for_dynamic(n, n >= (1u << 14) ? 0 : 1, 0, restore_ranges, &j);
}

void gp_cch_restore_pending(gp_cch *c) {
    if (!c->pend) return;
    gp_cch_restore_from(c, c->pend_from, c->pend, c->npend, GP_CCH_RESTORE_CUSTOM);
    if (c->pend_owned) free((void *)c->pend);
    c->pend = NULL;
    c->npend = 0;
    c->pend_owned = 0;
    c->pend_from = NULL;
}

/* Packed witnesses for path unpacking (cch_internal.h GP_CCH_WIT_ORIG), from fmid/bmid. */
static void witnesses_range(gp_cch *c, uint32_t lo, uint32_t hi) {
    const gp_cch_topo *t = c->topo;
    for (uint32_t e = lo; e < hi; e++) {
        uint64_t k0 = t->tri_first[e];
        c->wit[2 * (size_t)e + 1] = c->fmid[e] == GP_NONE
                                        ? GP_CCH_WIT_ORIG | t->order[t->up_head[e]]
                                        : (uint64_t)t->tri[2 * (k0 + c->fmid[e])] << 32 |
                                              t->tri[2 * (k0 + c->fmid[e]) + 1];
        c->wit[2 * (size_t)e] = c->bmid[e] == GP_NONE
                                    ? GP_CCH_WIT_ORIG | t->order[t->up_tail[e]]
                                    : (uint64_t)t->tri[2 * (k0 + c->bmid[e])] << 32 |
                                          t->tri[2 * (k0 + c->bmid[e]) + 1];
    }
}

static void wit_ranges(void *c, uint64_t lo, uint64_t hi) {
    witnesses_range(c, (uint32_t)lo, (uint32_t)hi);
}

/* After a GPU customization (each edge reads its triangles at random): on all CPUs. */
void gp_cch_witnesses(gp_cch *c) {
    gp_cch_perfect_drop(c);
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
static inline void team_part(uint64_t lo, uint64_t hi, int id, int parts, uint32_t *a,
                             uint32_t *b) {
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
            uint32_t bad = customize_range(t, j->c->ofw, j->c->obw, j->c->fw, j->c->bw, j->c->fmid,
                                           j->c->bmid, a, b);
            if (bad != GP_NONE) {
                unsigned none = GP_NONE;
                atomic_compare_exchange_strong(&j->bad, &none, bad);
            }
            if (id == 0 && gp_deadline_passed(j->deadline)) atomic_store(&j->timed_out, 1);
        }
        pthread_barrier_wait(j->bar);
    }
    uint32_t a, b;
    team_part(0, t->m, id, nthreads, &a, &b);
    witnesses_range(j->c, a, b);
}

/* ---------------------------------------------------------------------------------------------
 * Partial customization: a new metric close to a customized one over the same topology (a cost
 * change: the version's CCH against its base's). The predecessor's weights, witnesses and packed
 * witnesses are copied; an edge is customized again (from its lower triangles, exactly as the full
 * pass would) when its original weights differ or a lower edge of one of its triangles changed
 * weight: edge {v, x} (v lower) is a lower edge of the triangles {v, x, y} of the edges {x, y}
 * for every other upper neighbour y of v, whose ids all follow those of v's edges, so one pass
 * over a bitmap of dirty edges in id order sees every edge after everything it reads. */

typedef struct part_job {
    gp_cch *c;
    const gp_cch *p;
    uint64_t *dirty; /* one bit per edge */
    uint64_t seeds;  /* atomic */
} part_job;

static void part_seed(void *jv, uint64_t lo, uint64_t hi) { /* words [lo, hi) */
    part_job *j = jv;
    const uint32_t m = j->c->topo->m;
    uint64_t cnt = 0;
    for (uint64_t wd = lo; wd < hi; wd++) {
        uint64_t bits = 0;
        for (uint32_t b = 0; b < 64 && wd * 64 + b < m; b++) {
            size_t e = wd * 64 + b;
            if (j->c->ofw[e] != j->p->ofw[e] || j->c->obw[e] != j->p->obw[e]) bits |= 1ULL << b;
        }
        j->dirty[wd] = bits;
        cnt += (uint64_t)__builtin_popcountll(bits);
    }
    __atomic_add_fetch(&j->seeds, cnt, __ATOMIC_RELAXED);
}

static void part_copy(void *jv, uint64_t lo, uint64_t hi) {
    part_job *j = jv;
    size_t k = (size_t)(hi - lo);
    memcpy(j->c->fw + lo, j->p->fw + lo, k * 4);
    memcpy(j->c->bw + lo, j->p->bw + lo, k * 4);
    memcpy(j->c->fmid + lo, j->p->fmid + lo, k * 4);
    memcpy(j->c->bmid + lo, j->p->bmid + lo, k * 4);
    memcpy(j->c->wit + 2 * (size_t)lo, j->p->wit + 2 * (size_t)lo, k * 16);
}

void gp_cch_custom_copy(gp_cch *c, const gp_cch *p) {
    gp_cch_restore_pending(c); /* from another predecessor, maybe: before the copy */
    part_job j = {c, p, NULL, 0};
    gp_parallel_for(c->topo->m, c->topo->m >= (1u << 20) ? 0 : 1, part_copy, &j);
    c->from_prev = 1;
}

/* The edges a partial pass customized again (ascending), grown as it goes. */
typedef struct edge_list {
    uint32_t *e;
    uint32_t n, cap;
} edge_list;

static int edge_list_add(edge_list *l, uint32_t e) {
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 1024;
        uint32_t *ne = realloc(l->e, (size_t)cap * sizeof *ne);
        if (!ne) return -1;
        l->e = ne;
        l->cap = cap;
    }
    l->e[l->n++] = e;
    return 0;
}

/* The most edges with new original weights a partial pass starts from: 0.1% of the edges. */
static inline uint64_t partial_max_seeds(uint32_t m) { return m / 1024 + 64; }

/* 1: c customized from p; 0: too much changed, or no memory for the list (c's weights partly
 * written: the caller runs the full pass, which writes every one); -1: an overflow (*bad set).
 * The pass is serial: it is not tried when over 0.1% of the edges have new original weights, and
 * it gives up once its triangles (and edge searches) pass half of what the full pass does per
 * thread (nt threads), so a large change costs at most half a full customization more. c's arrays
 * are p's first: copied, or already (c->from_prev: a spare restored). out gets the edges
 * customized again: every edge whose weights or witnesses may differ
 * from p's (those with new original weights among them). */
static int customize_partial(gp_cch *c, const gp_cch *p, uint64_t limit, uint32_t *bad,
                             edge_list *out) {
    const gp_cch_topo *t = c->topo;
    const uint32_t m = t->m;
    const uint64_t words = ((uint64_t)m + 63) / 64;
    int par = m >= (1u << 20) ? 0 : 1;
    if (c->mchg_ok && c->nmchg > partial_max_seeds(m)) return 0; /* known before any work */
    part_job j = {c, p, calloc(words ? words : 1, sizeof(uint64_t)), 0};
    if (!j.dirty) return 0;
    if (c->mchg_ok) { /* the metric's changed edges, listed by the mapping */
        for (uint32_t i = 0; i < c->nmchg; i++)
            j.dirty[c->mchg[i] / 64] |= 1ULL << (c->mchg[i] % 64);
        j.seeds = c->nmchg;
    } else {
        gp_parallel_for(words, par, part_seed, &j);
    }
    if (j.seeds > partial_max_seeds(m)) { /* too many changed edges: the full pass */
        free(j.dirty);
        return 0;
    }
    if (!c->from_prev) gp_parallel_for(m, par, part_copy, &j); /* else they are p's already */
    c->from_prev = 1;
    uint64_t done = 0;
    int rc = 1;
    for (uint64_t wd = 0; wd < words && rc == 1; wd++) {
        while (j.dirty[wd] && rc == 1) {
            uint32_t e = (uint32_t)(wd * 64 + (uint64_t)__builtin_ctzll(j.dirty[wd]));
            j.dirty[wd] &= j.dirty[wd] - 1;
            if (out && edge_list_add(out, e)) {
                rc = 0;
                break;
            }
            uint32_t f0 = c->fw[e], b0 = c->bw[e];
            uint32_t ov =
                customize_range(t, c->ofw, c->obw, c->fw, c->bw, c->fmid, c->bmid, e, e + 1);
            if (ov != GP_NONE) {
                *bad = ov;
                rc = -1;
                break;
            }
            witnesses_range(c, e, e + 1);
            done += t->tri_first[e + 1] - t->tri_first[e] + 1;
            if (done > limit) rc = 0;
            if (c->fw[e] == f0 && c->bw[e] == b0) continue;
            uint32_t v = t->up_tail[e], x = t->up_head[e];
            done += 4 * (uint64_t)(t->up_first[v + 1] - t->up_first[v]); /* the searches below */
            for (uint32_t i = t->up_first[v]; i < t->up_first[v + 1]; i++) {
                uint32_t y = t->up_head[i];
                if (y == x) continue;
                uint32_t e2 = y > x ? gp_cch_find_edge(t, x, y) : gp_cch_find_edge(t, y, x);
                if (e2 != GP_NONE) j.dirty[e2 / 64] |= 1ULL << (e2 % 64);
            }
        }
    }
    free(j.dirty);
    /* given up: the customized arrays made p's again (a full pass on the device may then fetch
     * only what differs from p's, gp_cch_gpu_customize_diff) */
    if (rc == 0) gp_cch_restore_from(c, p, out->e, out->n, GP_CCH_RESTORE_CUSTOM);
    else c->from_prev = 0;
    return rc;
}

int gp_cch_customize_partial(gp_cch *c, int threads, uint64_t max_work, uint32_t **edges,
                             uint32_t *nedges, gp_err *err) {
    double t0 = gp_now();
    int nt = gp_cch_threads(threads);
    if (c->topo->m < 65536) nt = 1;
    if (edges) *edges = NULL;
    if (nedges) *nedges = 0;
    c->custom_partial = 0;
    delta_drop(c);
    gp_cch_restore_pending(c);
    const gp_cch *prev = c->prev;
    if (!prev || prev->topo != c->topo || !prev->fw || !prev->wit) {
        c->from_prev = 0;
        return GP_OK;
    }
    gp_cch_perfect_drop(c);
    edge_list l = {NULL, 0, 0};
    uint32_t pbad = GP_NONE;
    /* half the full pass's work on nt threads (its triangles and one step an edge, as `done`
     * counts them) */
    uint64_t limit = max_work ? max_work : (c->topo->ntri + c->topo->m) / (2 * (uint64_t)nt) + 1024;
    int pr = customize_partial(c, prev, limit, &pbad, &l);
    if (pr <= 0) {
        free(l.e);
        return pr < 0 ? overflow_error(pbad, err) : GP_OK;
    }
    c->prev = NULL; /* used: c is customized */
    c->custom_s = gp_now() - t0;
    snprintf(c->custom_on, sizeof c->custom_on, "cpu");
    c->custom_partial = 1;
    /* an empty list is a delta too (a version with prev's weights: a speed file's expiry that
     * the newer files cover): NULL would read as "no delta", and the next version would copy
     * every array from this one (50-70 ms on gen:1M turns) instead of restoring a spare */
    if (!l.e) l.e = malloc(sizeof *l.e);
    c->delta = l.e;
    c->ndelta = l.n;
    c->delta_base = prev->graph_hash;
    if (edges) *edges = l.e;
    if (nedges) *nedges = l.n;
    return GP_OK;
}

int gp_cch_customize(gp_cch *c, int threads, gp_err *err) {
    double t0 = gp_now();
    int nt = gp_cch_threads(threads);
    if (c->topo->m < 65536) nt = 1;
    gp_cch_perfect_drop(c);
    int rc = gp_cch_customize_partial(c, threads, 0, NULL, NULL, err);
    if (rc != GP_OK || c->custom_partial) return rc;
    c->prev = NULL; /* used once: the first customization of a new version */
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
    c->from_prev = 0;
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

/* gp_cch_perfect_hold's counts (gp_cch perfect_holds) and the background passes waiting on them */
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;

/* Waits while c's pass is held and not told to stop; 1 when told to stop. Every member of the
 * pass's team asks before each level: a lock only while held. */
static int perf_wait_hold(const gp_cch *c, atomic_int *stop) {
    if (__atomic_load_n(&c->perfect_holds, __ATOMIC_ACQUIRE) <= 0) return atomic_load(stop);
    pthread_mutex_lock(&hold_mu);
    while (c->perfect_holds > 0 && !atomic_load(stop)) pthread_cond_wait(&hold_cv, &hold_mu);
    pthread_mutex_unlock(&hold_mu);
    return atomic_load(stop);
}

void gp_cch_perfect_hold(const gp_cch *c, int hold) {
    if (!c) return;
    gp_cch *w = (gp_cch *)c; /* the count alone, under hold_mu */
    pthread_mutex_lock(&hold_mu);
    if (hold) __atomic_add_fetch(&w->perfect_holds, 1, __ATOMIC_RELEASE);
    else if (w->perfect_holds > 0) __atomic_sub_fetch(&w->perfect_holds, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
}

typedef struct perf_job {
    const gp_cch *c;
    uint32_t *pf, *pb; /* perfect weights */
    gp_cch_arcs *q;    /* built here; first[x+1] counts x's kept arcs until the prefix sums */
    pthread_barrier_t *bar;
    atomic_int failed; /* GP_ENOMEM, GP_ETIMEOUT, or PERF_STOPPED */
    atomic_int *stop;  /* set by perfect_drop for a background pass, else NULL */
    int halt[2];       /* member 0's decision to stop at a level, by the level's parity */
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
        /* a background pass: held while a version is derived from c, or stopped */
        if (j->stop && perf_wait_hold(c, j->stop) && id == 0) {
            atomic_store(&j->failed, PERF_STOPPED);
            j->halt[l & 1] = 1; /* read by every member after this level's barrier */
        }
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
            if (id == 0 && gp_deadline_passed(j->deadline)) atomic_store(&j->failed, GP_ETIMEOUT);
        }
        pthread_barrier_wait(j->bar);
        /* stopped: no more barriers level by level (a version freed waits for this pass; the
         * slot of l's parity, which member 0 writes again only after the next barrier) */
        if (j->halt[l & 1]) break;
    }
    if (id == 0 && !atomic_load(&j->failed)) {
        for (int d = 0; d < 2; d++) {
            gp_cch_arcs *q = &j->q[d];
            q->first[0] = 0;
            for (uint32_t x = 0; x < t->n; x++) q->first[x + 1] += q->first[x];
            size_t k = (size_t)q->first[t->n] + 1;
            q->head = gp_cch_big_malloc(k * 4);
            q->w = gp_cch_big_malloc(k * 4);
            q->edge = gp_cch_big_malloc(k * 4);
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
        j.q[0].first = gp_cch_big_malloc(((size_t)t->n + 1) * 4);
        j.q[1].first = gp_cch_big_malloc(((size_t)t->n + 1) * 4);
    }
    if (!j.pf || !j.pb || !j.q || !j.q[0].first || !j.q[1].first)
        atomic_store(&j.failed, GP_ENOMEM);
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

void gp_cch_perfect_drop(gp_cch *c) {
    perf_bg *bg = c->perfect_bg;
    if (bg) { /* a held pass wakes to it */
        pthread_mutex_lock(&hold_mu);
        atomic_store(&bg->stop, 1);
        pthread_cond_broadcast(&hold_cv);
        pthread_mutex_unlock(&hold_mu);
    }
    gp_cch_perfect_wait(c);
    arcs_free(c->q);
    c->q = NULL;
    c->perfect_s = 0;
}

int gp_cch_perfect(gp_cch *c, int threads, gp_err *err) {
    double t0 = gp_now();
    gp_cch_perfect_drop(c);
    gp_cch_arcs *q = NULL;
    int rc = perfect_run(c, threads, gp_deadline_get(), NULL, &q);
    if (rc == GP_ETIMEOUT) return gp_deadline_error(err);
    if (rc)
        return gp_err_set(err, GP_ENOMEM,
                          "out of memory for the perfect customization of %u "
                          "edges",
                          c->topo->m);
    c->q = q;
    c->perfect_s = gp_now() - t0;
    return GP_OK;
}

int gp_cch_perfect_start(gp_cch *c, int threads, gp_err *err) {
    gp_cch_perfect_drop(c);
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
