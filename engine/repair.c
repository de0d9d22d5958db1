/* repair.c - LFA and TI-LFA repair paths for every router (see repair.h for the definitions).
 *
 * One worker per thread takes routers from an atomic counter. For router S it marks, per
 * neighbour E, the destinations for which E is a primary next hop; for each such E it grows one
 * shortest-path tree from S without the link S-E and (node protection) one without the node E,
 * keyed by (distance, hops) so that the post-convergence path is the fewest-hop one among equal
 * costs, with the lowest-id predecessor recorded per node. LFA inequalities and P/Q-space
 * membership read the base matrix only.
 */
#include "engine/repair.h"

#include "engine/progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline uint64_t add2(uint64_t a, uint64_t b) {
    return a >= GP_INF || b >= GP_INF ? GP_INF : a + b;
}
static inline uint64_t add3(uint64_t a, uint64_t b, uint64_t c) { return add2(add2(a, b), c); }

/* The protected resource: link s-e (node == 0) or node e (node == 1). */
typedef struct prot {
    uint32_t s, e;
    uint64_t wse, wes; /* cheapest arcs s->e and e->s (GP_INF: none) */
    int node;
} prot;

/* 1 when every shortest path x->y avoids X (and y is reachable from x). */
static int avoids(const gp_rt *t, const prot *x, uint32_t a, uint32_t b) {
    uint64_t d = gp_rt_dist(t, a, b);
    if (d >= GP_INF) return 0;
    if (x->node)
        return a != x->e && b != x->e && d < add2(gp_rt_dist(t, a, x->e), gp_rt_dist(t, x->e, b));
    return d < add3(gp_rt_dist(t, a, x->s), x->wse, gp_rt_dist(t, x->e, b)) &&
           d < add3(gp_rt_dist(t, a, x->e), x->wes, gp_rt_dist(t, x->s, b));
}

/* ---- per-thread state: a (distance, hops) Dijkstra with a binary heap ---- */
typedef struct work {
    const gp_rt *t;
    const gp_repair_opts *o;
    gp_repair *res;
    atomic_uint *next;
    gp_progress *pr;
    uint64_t *d;
    uint32_t *h, *pred, *heap, *pos;
    uint32_t nheap;
    uint8_t *isnh;     /* per destination: bit per... primary next hop count (>= 1) */
    uint8_t *agg;      /* per destination: aggregation bits (below) */
    uint32_t *pathbuf; /* n */
    uint64_t spf_runs, rows;
    int rc;
    gp_err err;
} work;

enum { AG_LFA_LINK = 1, AG_LFA_NODE = 2, AG_TI_LINK = 4, AG_TI_NODE = 8, AG_NH_IS_D = 16 };

static inline int key_less(const work *w, uint32_t a, uint32_t b) {
    return w->d[a] < w->d[b] || (w->d[a] == w->d[b] && w->h[a] < w->h[b]);
}
static void heap_up(work *w, uint32_t i) {
    uint32_t v = w->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!key_less(w, v, w->heap[p])) break;
        w->heap[i] = w->heap[p];
        w->pos[w->heap[i]] = i;
        i = p;
    }
    w->heap[i] = v;
    w->pos[v] = i;
}
static void heap_down(work *w, uint32_t i) {
    uint32_t v = w->heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= w->nheap) break;
        if (c + 1 < w->nheap && key_less(w, w->heap[c + 1], w->heap[c])) c++;
        if (!key_less(w, w->heap[c], v)) break;
        w->heap[i] = w->heap[c];
        w->pos[w->heap[i]] = i;
        i = c;
    }
    w->heap[i] = v;
    w->pos[v] = i;
}

/* Tree from x->s on the topology without X: d, h, pred (GP_NONE at the root / unreached). */
static void spf(work *w, const prot *x) {
    const gp_rt *t = w->t;
    uint32_t n = t->n;
    for (uint32_t v = 0; v < n; v++) {
        w->d[v] = GP_INF;
        w->h[v] = UINT32_MAX;
        w->pred[v] = GP_NONE;
        w->pos[v] = UINT32_MAX;
    }
    w->nheap = 0;
    w->d[x->s] = 0;
    w->h[x->s] = 0;
    w->heap[w->nheap++] = x->s;
    w->pos[x->s] = 0;
    while (w->nheap) {
        uint32_t u = w->heap[0];
        w->pos[u] = UINT32_MAX - 1; /* settled */
        w->heap[0] = w->heap[--w->nheap];
        if (w->nheap) heap_down(w, 0);
        for (uint32_t k = t->nb_off[u]; k < t->nb_off[u + 1]; k++) {
            uint32_t v = t->nb[k];
            if (x->node ? v == x->e : (u == x->s && v == x->e) || (u == x->e && v == x->s))
                continue;
            uint64_t nd = w->d[u] + t->nbw[k];
            uint32_t nh = w->h[u] + 1;
            if (nd < w->d[v] || (nd == w->d[v] && nh < w->h[v])) {
                w->d[v] = nd;
                w->h[v] = nh;
                w->pred[v] = u;
                if (w->pos[v] == UINT32_MAX) {
                    w->heap[w->nheap] = v;
                    heap_up(w, w->nheap++);
                } else {
                    heap_up(w, w->pos[v]);
                }
            } else if (nd == w->d[v] && nh == w->h[v] && u < w->pred[v]) {
                w->pred[v] = u;
            }
        }
    }
    w->spf_runs++;
}

typedef struct rbuf { /* growable arrays of one router's result */
    gp_repair_router *r;
    size_t ecap, scap, pcap;
} rbuf;

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The repair of D under X from the current tree (w->d, pred from X's SPF) into ti. */
static int tilfa(work *w, const prot *x, uint32_t D, int keep, rbuf *b, gp_tilfa *ti) {
    const gp_rt *t = w->t;
    memset(ti, 0, sizeof *ti);
    ti->cost = w->d[D];
    ti->next_hop = ti->p = ti->q = GP_NONE;
    if (ti->cost >= GP_INF || !keep) return 0;
    uint32_t k = 0; /* path backwards into pathbuf, then reversed */
    for (uint32_t v = D; v != GP_NONE && k < t->n; v = w->pred[v]) w->pathbuf[k++] = v;
    uint32_t *v = w->pathbuf;
    for (uint32_t i = 0; i < k / 2; i++) {
        uint32_t tmp = v[i];
        v[i] = v[k - 1 - i];
        v[k - 1 - i] = tmp;
    }
    if (k < 2 || v[0] != x->s) return 0; /* cannot happen: D != S is reachable */
    uint32_t q = 1;
    while (q < k - 1 && !avoids(t, x, v[q], D)) q++;
    ti->next_hop = v[1];
    ti->q = v[q];
    ti->p = v[1];
    ti->seg_off = (uint32_t)b->r->nseg;
    uint32_t cur = 1;
    while (cur < q) {
        uint32_t j = q;
        while (j > cur && !avoids(t, x, v[cur], v[j])) j--;
        if (grow((void **)&b->r->seg, &b->scap, b->r->nseg + 1, sizeof *b->r->seg)) return -1;
        gp_repair_seg *s = &b->r->seg[b->r->nseg++];
        if (j > cur) {
            s->a = v[j];
            s->b = GP_NONE;
            cur = j;
        } else {
            s->a = v[cur];
            s->b = v[cur + 1];
            cur++;
        }
        if (ti->nseg++ == 0 && s->b == GP_NONE) ti->p = s->a;
    }
    if (w->o->keep_paths) {
        if (grow((void **)&b->r->path, &b->pcap, b->r->npath + k, sizeof *b->r->path)) return -1;
        ti->path_off = (uint32_t)b->r->npath;
        ti->path_len = k;
        memcpy(b->r->path + b->r->npath, v, (size_t)k * sizeof *v);
        b->r->npath += k;
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b) {
    const gp_repair_entry *x = a, *y = b;
    if (x->dest != y->dest) return x->dest < y->dest ? -1 : 1;
    return x->nh < y->nh ? -1 : x->nh > y->nh;
}

static int do_router(work *w, uint32_t S) {
    const gp_rt *t = w->t;
    const gp_repair_opts *o = w->o;
    uint32_t n = t->n;
    int store = !o->keep || o->keep[S], keep = store || o->lists_for_all;
    gp_repair_router *R = &w->res->r[S];
    rbuf b = {.r = R};
    memset(w->agg, 0, n);
    memset(w->isnh, 0, n);
    const uint64_t *dS = t->dist + (uint64_t)S * n;
    for (uint32_t k = t->nb_off[S]; k < t->nb_off[S + 1]; k++) {
        uint32_t E = t->nb[k];
        uint64_t wse = t->nbw[k];
        const uint64_t *dE = t->dist + (uint64_t)E * n;
        int any = 0;
        for (uint32_t D = 0; D < n && !any; D++)
            any = D != S && dS[D] < GP_INF && wse + dE[D] == dS[D];
        if (!any) continue;
        prot xl = {.s = S, .e = E, .wse = wse, .wes = GP_INF, .node = 0};
        for (uint32_t a = t->nb_off[E]; a < t->nb_off[E + 1]; a++)
            if (t->nb[a] == S) xl.wes = t->nbw[a];
        prot xn = xl;
        xn.node = 1;
        size_t first = R->ne;
        /* pass 1: link-failure tree; LFAs and link repairs */
        spf(w, &xl);
        for (uint32_t D = 0; D < n; D++) {
            if (D == S || dS[D] >= GP_INF || wse + dE[D] != dS[D]) continue;
            if (!w->isnh[D]) w->agg[D] = AG_LFA_LINK | AG_LFA_NODE | AG_TI_LINK | AG_TI_NODE;
            w->isnh[D] = 1;
            if (D == E) w->agg[D] |= AG_NH_IS_D;
            /* LFA: neighbours N != E */
            uint32_t best = GP_NONE, bits = 0;
            uint64_t bestc = GP_INF;
            for (uint32_t a = t->nb_off[S]; a < t->nb_off[S + 1]; a++) {
                uint32_t N = t->nb[a];
                if (N == E) continue;
                uint64_t dND = gp_rt_dist(t, N, D);
                if (!(dND < add2(gp_rt_dist(t, N, S), dS[D]))) continue;
                uint32_t nb2 = (D != E && dND < add2(gp_rt_dist(t, N, E), dE[D])) ? GP_LFA_NODE : 0;
                if (dND < dS[D]) nb2 |= GP_LFA_DOWNSTREAM;
                uint64_t c = add2(t->nbw[a], dND);
                int better = best == GP_NONE || ((nb2 & GP_LFA_NODE) && !(bits & GP_LFA_NODE)) ||
                             (((nb2 ^ bits) & GP_LFA_NODE) == 0 && c < bestc);
                if (better) best = N, bits = nb2, bestc = c;
            }
            if (best == GP_NONE) w->agg[D] &= (uint8_t)~AG_LFA_LINK;
            if (!(bits & GP_LFA_NODE)) w->agg[D] &= (uint8_t)~AG_LFA_NODE;
            if (w->d[D] >= GP_INF) w->agg[D] &= (uint8_t)~AG_TI_LINK;
            if (!keep) continue;
            if (grow((void **)&R->e, &b.ecap, R->ne + 1, sizeof *R->e)) return -1;
            gp_repair_entry *en = &R->e[R->ne++];
            memset(en, 0, sizeof *en);
            en->dest = D;
            en->nh = E;
            en->lfa = best;
            en->lfa_bits = bits;
            en->node.cost = GP_INF;
            en->node.next_hop = en->node.p = en->node.q = GP_NONE;
            if (tilfa(w, &xl, D, 1, &b, &en->link)) return -1;
        }
        /* pass 2: node-failure tree */
        if (!o->node_protection) continue;
        spf(w, &xn);
        size_t ei = first;
        for (uint32_t D = 0; D < n; D++) {
            if (D == S || dS[D] >= GP_INF || wse + dE[D] != dS[D]) continue;
            gp_repair_entry *en = keep ? &R->e[ei++] : NULL;
            if (D == E) continue;
            if (w->d[D] >= GP_INF) w->agg[D] &= (uint8_t)~AG_TI_NODE;
            if (!en) continue;
            en->node_applies = 1;
            if (tilfa(w, &xn, D, 1, &b, &en->node)) return -1;
        }
    }
    gp_repair_cov *c = &R->cov;
    memset(c, 0, sizeof *c);
    for (uint32_t D = 0; D < n; D++) {
        if (D == S || dS[D] >= GP_INF) continue;
        c->dests++;
        uint8_t a = w->agg[D];
        c->lfa_link += (a & AG_LFA_LINK) != 0;
        c->tilfa_link += (a & AG_TI_LINK) != 0;
        if (a & AG_NH_IS_D) continue;
        c->node_dests++;
        c->lfa_node += (a & AG_LFA_NODE) != 0;
        c->tilfa_node += o->node_protection && (a & AG_TI_NODE);
    }
    w->rows += R->ne;
    if (!store) { /* computed for the count and the time only */
        free(R->e);
        free(R->seg);
        free(R->path);
        R->e = NULL;
        R->seg = NULL;
        R->path = NULL;
        R->ne = R->nseg = R->npath = 0;
    }
    if (R->ne > 1) qsort(R->e, R->ne, sizeof *R->e, cmp_entry);
    return 0;
}

static void *worker(void *arg) {
    work *w = arg;
    for (;;) {
        uint32_t S = atomic_fetch_add(w->next, 1);
        if (S >= w->t->n || w->rc) break;
        if (gp_progress_cancelled(w->pr)) {
            w->rc = gp_err_set(&w->err, GP_ECANCELLED, "repair paths cancelled");
            break;
        }
        if (do_router(w, S)) {
            w->rc = gp_err_set(&w->err, GP_ENOMEM, "out of memory computing repair paths");
            break;
        }
        gp_progress_add(w->pr, 1);
    }
    return NULL;
}

static void work_clear(work *w) {
    free(w->d);
    free(w->h);
    free(w->pred);
    free(w->heap);
    free(w->pos);
    free(w->isnh);
    free(w->agg);
    free(w->pathbuf);
}

/* Entries the kept routers will hold: one per (S, D, primary next hop). */
static uint64_t count_entries(const gp_rt *t, const uint8_t *keepf) {
    uint64_t c = 0;
    uint32_t n = t->n;
    for (uint32_t S = 0; S < n; S++) {
        if (keepf && !keepf[S]) continue;
        const uint64_t *dS = t->dist + (uint64_t)S * n;
        for (uint32_t k = t->nb_off[S]; k < t->nb_off[S + 1]; k++) {
            const uint64_t *dE = t->dist + (uint64_t)t->nb[k] * n;
            for (uint32_t D = 0; D < n; D++)
                c += D != S && dS[D] < GP_INF && t->nbw[k] + dE[D] == dS[D];
        }
    }
    return c;
}

int gp_repair_compute(const gp_rt *t, const gp_repair_opts *o, gp_repair **out, gp_err *err) {
    *out = NULL;
    double t0 = gp_now();
    gp_repair_opts def = {.node_protection = 1};
    if (!o) o = &def;
    uint32_t n = t->n;
    if (o->max_entries) {
        uint64_t c = count_entries(t, o->keep);
        if (c > o->max_entries)
            return gp_err_set(err, GP_ETOOBIG,
                              "the answer would hold %llu repair rows, over the limit of %llu: ask "
                              "for fewer routers",
                              (unsigned long long)c, (unsigned long long)o->max_entries);
    }
    gp_repair *res = calloc(1, sizeof *res);
    if (res) res->r = calloc((size_t)n + 1, sizeof *res->r);
    if (!res || !res->r) {
        gp_repair_free(res);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    res->t = t;
    res->n = n;
    int nt = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt < 1) nt = 1;
    if ((uint32_t)nt > n) nt = n ? (int)n : 1;
    work *ws = calloc((size_t)nt, sizeof *ws);
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    atomic_uint next = 0;
    gp_progress *pr = gp_progress_get();
    gp_progress_begin(pr, n ? n : 1);
    int rc = ws && th ? GP_OK : gp_err_set(err, GP_ENOMEM, "out of memory");
    int started = 0;
    for (int i = 0; i < nt && rc == GP_OK; i++) {
        work *w = &ws[i];
        w->t = t;
        w->o = o;
        w->res = res;
        w->next = &next;
        w->pr = pr;
        size_t nn = (size_t)n + 1;
        w->d = malloc(nn * sizeof *w->d);
        w->h = malloc(nn * sizeof *w->h);
        w->pred = malloc(nn * sizeof *w->pred);
        w->heap = malloc(nn * sizeof *w->heap);
        w->pos = malloc(nn * sizeof *w->pos);
        w->isnh = malloc(nn);
        w->agg = malloc(nn);
        w->pathbuf = malloc(nn * sizeof *w->pathbuf);
        if (!w->d || !w->h || !w->pred || !w->heap || !w->pos || !w->isnh || !w->agg ||
            !w->pathbuf) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == GP_OK) {
        for (int i = 1; i < nt; i++, started++)
            if (pthread_create(&th[i], NULL, worker, &ws[i])) break;
        worker(&ws[0]);
        for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
    }
    for (int i = 0; ws && i < nt; i++) {
        if (rc == GP_OK && ws[i].rc) {
            *err = ws[i].err;
            rc = ws[i].rc;
        }
        res->spf_runs += ws[i].spf_runs;
        res->rows += ws[i].rows;
        work_clear(&ws[i]);
    }
    free(ws);
    free(th);
    if (rc != GP_OK) {
        gp_repair_free(res);
        return rc;
    }
    for (uint32_t S = 0; S < n; S++) {
        const gp_repair_cov *c = &res->r[S].cov;
        res->total.dests += c->dests;
        res->total.lfa_link += c->lfa_link;
        res->total.tilfa_link += c->tilfa_link;
        res->total.node_dests += c->node_dests;
        res->total.lfa_node += c->lfa_node;
        res->total.tilfa_node += c->tilfa_node;
    }
    res->seconds = gp_now() - t0;
    *out = res;
    return GP_OK;
}

void gp_repair_free(gp_repair *r) {
    if (!r) return;
    for (uint32_t i = 0; r->r && i < r->n; i++) {
        free(r->r[i].e);
        free(r->r[i].seg);
        free(r->r[i].path);
    }
    free(r->r);
    free(r);
}
