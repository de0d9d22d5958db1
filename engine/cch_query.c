/* cch_query.c - the CCH's queries on the CPU (cch.h), over a pooled workspace each:
 *  - p2p: the elimination-tree query (the ancestors of s upward with up weights and of t with down
 *    weights, walked together in rank order and pruned by the best meeting so far), paths
 *    unpacked through the witnesses to original arcs; between sets of ends too (snapped routes);
 *  - sssp: PHAST (upward elimination-tree search, then one sweep over ranks n-1..0 pulling from
 *    upper neighbours over down weights);
 *  - table: buckets (each target's backward search fills buckets, each source's forward search
 *    scans them), sources on threads.
 * The relaxation has an AVX-512 version (8 arcs at a time) where the CPU has it (the lab's cch_simd
 * knob, engine/engine_lab.h, turns it off for the tests).
 */
#include "engine/cch_internal.h"
#include "engine/engine_lab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
static uint32_t *unpack(const gp_cch *c, gp_cch_ws *w, uint32_t nr, uint32_t start, uint32_t *n) {
    const uint64_t *wv = c->wit;
    uint32_t len = nr, lo = 0;
    for (uint32_t k = 0; k < nr; k++) __builtin_prefetch(wv + w->uit[k]);
    while (lo < len) {
        uint32_t hi = len;
        if (gp_cch_ws_reserve(w, len + 2 * (hi - lo))) return NULL;
        uint32_t *it = w->uit, *kid = w->ukid;
        for (uint32_t k = lo; k < hi; k++) {
            uint32_t item = it[k];
            uint64_t wit = wv[item];
            if (wit & GP_CCH_WIT_ORIG) {
                it[k] = (uint32_t)wit;
                kid[k] = 0;
                continue;
            }
            uint32_t e1 = (uint32_t)(wit >> 32), e2 = (uint32_t)wit; /* {v,lo}, {v,hi} */
            /* up: lo->v (down e1), v->hi (up e2); down: hi->v (down e2), v->lo (up e1) */
            uint32_t first = item & 1 ? e1 << 1 : e2 << 1,
                     second = item & 1 ? e2 << 1 | 1u : e1 << 1 | 1u;
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
    if (gp_cch_ws_reserve(w, len + 2)) return NULL;
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
                                                             const qarcs *qb, gp_cch_ws *w,
                                                             uint32_t *fh, uint32_t ns,
                                                             uint32_t *bh, uint32_t nd, int multi,
                                                             meeting *m) {
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
            return gp_err_set(err, GP_EINVAL, "node index out of range (graph has %u nodes)", c->n);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    gp_cch_ws *w = gp_cch_ws_get(c, err);
    if (!w) return GP_ENOMEM;
    const gp_cch_arcs *pq = gp_cch_published(c);
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
        if (gp_cch_ws_reserve(w, 2 * (t->height + 1))) goto oom;
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
    gp_cch_ws_put(c, w);
    return rc;
}

int gp_cch_p2p(const gp_cch *c, uint32_t s, uint32_t t, gp_path *path, gp_err *err) {
    return gp_cch_p2p_multi(c, &s, NULL, 1, &t, NULL, 1, path, NULL, NULL, err);
}

int gp_cch_upward(const gp_cch *c, uint32_t v, int dir, uint32_t *ranks, uint64_t *dist) {
    const gp_cch_topo *t = c->topo;
    gp_err e;
    gp_cch_ws *w = gp_cch_ws_get(c, &e);
    if (!w) return -1;
    uint32_t r = t->rank[v];
    const qarcs q = query_arcs(c, gp_cch_published(c), dir != 0);
    etree_search(t, &q, r, w->df, w->pf);
    int k = 0;
    for (uint32_t x = r; x != GP_NONE; x = t->parent[x]) {
        if (w->df[x] == GP_INF) continue;
        ranks[k] = x;
        dist[k++] = w->df[x];
    }
    etree_reset(t, r, w->df);
    gp_cch_ws_put(c, w);
    return k;
}

int gp_cch_sssp(const gp_cch *c, uint32_t src, uint64_t max_dist, uint64_t *dist, gp_err *err) {
    const gp_cch_topo *t = c->topo;
    if (src >= c->n)
        return gp_err_set(err, GP_EINVAL, "source %u out of range (graph has %u nodes)", src, c->n);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    gp_cch_ws *w = gp_cch_ws_get(c, err);
    if (!w) return GP_ENOMEM;
    if (!w->sweep && !(w->sweep = malloc((size_t)c->n * sizeof *w->sweep))) {
        gp_cch_ws_put(c, w);
        return gp_err_set(err, GP_ENOMEM, "out of memory for a PHAST sweep of %u nodes", c->n);
    }
    uint64_t *d = w->sweep;
    uint32_t n = c->n, rs = t->rank[src];
    for (uint32_t i = 0; i < n; i++) d[i] = GP_INF;
    const qarcs q = query_arcs(c, gp_cch_published(c), 1);
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
    gp_cch_ws_put(c, w);
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

/* Many-to-many with buckets: the targets' backward searches on threads, each leaving the
 * ancestors it reached as bucket entries; the entries sorted by rank, a rank's first one found
 * through a workspace's head array (n entries, GP_NONE but at this table's ranks, reset after);
 * each source's forward search on threads scans the buckets of its ancestors. No pass over all n
 * ranks: a 100 x 100 table on a 2M-node turn graph took a calloc, a prefix sum over n and two
 * serial backward searches per target before. */
typedef struct bent {
    uint32_t x, j; /* rank, target */
    uint64_t d;
} bent;

typedef struct blist {
    bent *v;
    size_t n, cap;
} blist;

typedef struct tjob {
    const gp_cch *c;
    const uint32_t *src, *dst;
    uint32_t ns, nt;
    const uint32_t *head; /* n: a rank's first entry of b, GP_NONE */
    const bent *b;
    size_t nb;
    uint64_t *out;
    blist *lists; /* the backward phase: a list per thread */
    atomic_uint next, nthread;
    atomic_int rc;
    double deadline;
} tjob;

static int blist_add(blist *l, uint32_t x, uint32_t j, uint64_t d) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        bent *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = (bent){x, j, d};
    return 0;
}

static void *back_main(void *arg) {
    tjob *j = arg;
    const gp_cch *c = j->c;
    const gp_cch_topo *t = c->topo;
    gp_err e;
    blist *l = &j->lists[atomic_fetch_add(&j->nthread, 1)];
    gp_cch_ws *w = gp_cch_ws_get(c, &e);
    if (!w) {
        atomic_store(&j->rc, GP_ENOMEM);
        return NULL;
    }
    const qarcs qb = query_arcs(c, gp_cch_published(c), 0);
    for (;;) {
        uint32_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->nt || atomic_load(&j->rc) != GP_OK) break;
        uint32_t rt = t->rank[j->dst[k]];
        etree_search(t, &qb, rt, w->db, w->pb);
        for (uint32_t x = rt; x != GP_NONE; x = t->parent[x])
            if (w->db[x] != GP_INF && blist_add(l, x, k, w->db[x]) != 0)
                atomic_store(&j->rc, GP_ENOMEM);
        etree_reset(t, rt, w->db);
    }
    gp_cch_ws_put(c, w);
    return NULL;
}

static void *table_main(void *arg) {
    tjob *j = arg;
    const gp_cch *c = j->c;
    const gp_cch_topo *t = c->topo;
    gp_err e;
    gp_cch_ws *w = gp_cch_ws_get(c, &e);
    if (!w) {
        atomic_store(&j->rc, GP_ENOMEM);
        return NULL;
    }
    const qarcs qf = query_arcs(c, gp_cch_published(c), 1);
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->ns || atomic_load(&j->rc) != GP_OK) break;
        if (gp_deadline_passed(j->deadline)) {
            atomic_store(&j->rc, GP_ETIMEOUT);
            break;
        }
        uint64_t *row = j->out + (size_t)i * j->nt;
        for (uint32_t k = 0; k < j->nt; k++) row[k] = GP_INF;
        uint32_t rs = t->rank[j->src[i]];
        etree_search(t, &qf, rs, w->df, w->pf);
        for (uint32_t x = rs; x != GP_NONE; x = t->parent[x]) {
            uint64_t dx = w->df[x];
            uint32_t h = j->head[x];
            if (dx == GP_INF || h == GP_NONE) continue;
            for (size_t k = h; k < j->nb && j->b[k].x == x; k++) {
                uint64_t d = dx + j->b[k].d;
                if (d < row[j->b[k].j]) row[j->b[k].j] = d;
            }
        }
        etree_reset(t, rs, w->df);
    }
    gp_cch_ws_put(c, w);
    return NULL;
}

/* fn on nth threads (this one too) over j. */
static void run_threads(int nth, void *(*fn)(void *), tjob *j) {
    pthread_t th[256];
    int started = 0;
    for (int i = 1; i < nth && started < 255; i++) {
        if (pthread_create(&th[started], NULL, fn, j) != 0) break;
        started++;
    }
    fn(j);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* a[0..n) sorted by rank (LSD radix, 16 bits a pass, as many passes as ranks below n need) into
 * a or tmp: the sorted array returned. */
static bent *sort_by_rank(bent *a, bent *tmp, size_t n, uint32_t nranks, uint32_t *cnt) {
    for (int sh = 0; sh < (nranks > 65536 ? 32 : 16); sh += 16) {
        memset(cnt, 0, 65537 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[((a[i].x >> sh) & 0xffff) + 1]++;
        for (int k = 0; k < 65536; k++) cnt[k + 1] += cnt[k];
        for (size_t i = 0; i < n; i++) tmp[cnt[(a[i].x >> sh) & 0xffff]++] = a[i];
        bent *s = a;
        a = tmp, tmp = s;
    }
    return a;
}

int gp_cch_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                 uint32_t nt, int threads, uint64_t *out, gp_err *err) {
    for (uint32_t i = 0; i < ns; i++)
        if (src[i] >= c->n)
            return gp_err_set(err, GP_EINVAL, "source index %u out of range", src[i]);
    for (uint32_t i = 0; i < nt; i++)
        if (dst[i] >= c->n)
            return gp_err_set(err, GP_EINVAL, "target index %u out of range", dst[i]);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    uint32_t n = c->n;
    int rc = GP_OK, nth = gp_cch_threads(threads);
    if (nth > 256) nth = 256;
    tjob j;
    memset(&j, 0, sizeof j);
    j.c = c, j.src = src, j.dst = dst, j.ns = ns, j.nt = nt, j.out = out;
    j.deadline = gp_deadline_get();
    atomic_init(&j.next, 0);
    atomic_init(&j.nthread, 0);
    atomic_init(&j.rc, GP_OK);
    bent *b = NULL, *tmp = NULL;
    uint32_t *cnt = NULL;
    gp_cch_ws *w = NULL;
    /* the targets' backward searches, a list of entries per thread */
    int bth = (uint32_t)nth > nt / 4 + 1 ? (int)(nt / 4 + 1) : nth;
    j.lists = calloc((size_t)bth, sizeof *j.lists);
    if (!j.lists) goto oom;
    run_threads(bth, back_main, &j);
    if ((rc = atomic_load(&j.rc)) != GP_OK) goto oom;
    size_t nb = 0;
    for (int i = 0; i < bth; i++) nb += j.lists[i].n;
    b = malloc((nb + 1) * sizeof *b);
    tmp = malloc((nb + 1) * sizeof *tmp);
    cnt = malloc(65537 * sizeof *cnt);
    w = gp_cch_ws_get(c, err);
    if (!b || !tmp || !cnt || !w) goto oom;
    if (!w->bhead) {
        if (!(w->bhead = malloc((size_t)n * sizeof *w->bhead))) goto oom;
        memset(w->bhead, 0xff, (size_t)n * sizeof *w->bhead); /* GP_NONE */
    }
    nb = 0;
    for (int i = 0; i < bth; i++) {
        if (j.lists[i].n) memcpy(b + nb, j.lists[i].v, j.lists[i].n * sizeof *b);
        nb += j.lists[i].n;
    }
    bent *sb = sort_by_rank(b, tmp, nb, n, cnt);
    for (size_t k = nb; k > 0; k--) w->bhead[sb[k - 1].x] = (uint32_t)(k - 1); /* the first */
    /* the sources' forward searches, scanning the buckets */
    j.head = w->bhead, j.b = sb, j.nb = nb;
    atomic_store(&j.next, 0);
    int fth = (uint32_t)nth > ns / 4 + 1 ? (int)(ns / 4 + 1) : nth;
    run_threads(fth, table_main, &j);
    for (size_t k = 0; k < nb; k++) w->bhead[sb[k].x] = GP_NONE;
    rc = atomic_load(&j.rc);
    if (rc == GP_ETIMEOUT) rc = gp_deadline_error(err);
    else if (rc) rc = gp_err_set(err, rc, "out of memory in the CCH table");
    goto done;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory for CCH table buckets");
done:
    if (w) gp_cch_ws_put(c, w);
    for (int i = 0; j.lists && i < bth; i++) free(j.lists[i].v);
    free(j.lists);
    free(b);
    free(tmp);
    free(cnt);
    return rc;
}
