/* cch_contract.c - the CCH's contraction (cch.h gp_cch_topo_build): from an order (cch_order.c)
 * to the metric-independent topology: symbolic elimination in rank order (the upper neighbours of
 * x, minus its elimination-tree parent, are merged into the parent's), then ranks re-sorted by
 * level (an elimination-tree topological order, so the chordal completion is the same) and the
 * completion renamed to the new ranks; lower triangles listed per edge (v ascending); renaming on
 * threads (gp_parallel_for), triangles a node's edges at a time (gp_parallel_for_dynamic). The size guard (gp_cch_set_max_tri_per_node) stops it on
 * graphs that are not road-like.
 */
#include "engine/cch_internal.h"
#include "graph/parallel.h"

#include <stdlib.h>
#include <string.h>

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

/* The completion under a new order that is a topological order of the elimination tree (ranks
 * sorted by level): the same chordal graph (Liu 1990: equivalent orderings have the same filled
 * graph), since every upper neighbour of a node is one of its elimination-tree ancestors, whose
 * relative order the new ranks keep; the parent (the nearest ancestor among them) stays the parent.
 * So the up lists are renamed and sorted rather than eliminated again. Ranks r2 in [b, e). */
typedef struct relabel_ctx {
    const uint32_t *uf, *uh, *par, *newrank, *old; /* old completion; newrank[r]; old[r2] */
    uint32_t *uf2, *uh2, *par2, *tail2;            /* new completion (uf2 filled beforehand) */
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

/* Lower triangles of the edges {x, y} of the nodes x in [b, e): for each lower neighbour v of x
 * (down list, v ascending) and each upper neighbour y of v after x, v is a lower triangle of
 * {x, y}, an edge of x's own up list (the completion is chordal: found by a forward search in
 * it). Only x's task touches x's edges, so pass 0 counts them (tri_first[xy + 1]) and pass 1
 * stores them through cursors of its own, without atomics, already in v order (their first
 * edge's id ascends with v). A listing per v with an atomic counter per edge spent most of the
 * contraction in those atomics (road-like 24M's turn graph: 744 of 782 s). */
typedef struct tri_ctx {
    gp_cch_topo *t;
    const uint32_t *dfirst, *dedge; /* down lists: the edges (v, x) of each x, v ascending */
    int pass, oom;
    uint32_t bad; /* the lowest rank whose upper neighbours miss an edge (not chordal), or NONE */
} tri_ctx;

static void tri_bad(tri_ctx *c, uint32_t v) {
    uint32_t cur = __atomic_load_n(&c->bad, __ATOMIC_RELAXED);
    while (v < cur &&
           !__atomic_compare_exchange_n(&c->bad, &cur, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void tri_range(void *arg, uint64_t b, uint64_t e) {
    tri_ctx *c = arg;
    gp_cch_topo *t = c->t;
    uint64_t *cur = c->pass ? malloc(((size_t)t->width + 1) * sizeof *cur) : NULL;
    if (c->pass && !cur) {
        __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED);
        return;
    }
    for (uint64_t x = b; x < e; x++) {
        uint32_t xf = t->up_first[x], xl = t->up_first[x + 1];
        if (xf == xl) continue;
        if (c->pass)
            for (uint32_t p = xf; p < xl; p++) cur[p - xf] = t->tri_first[p];
        for (uint32_t d = c->dfirst[x]; d < c->dfirst[x + 1]; d++) {
            uint32_t i = c->dedge[d], v = t->up_tail[i], hi = t->up_first[v + 1], p = xf;
            for (uint32_t j = i + 1; j < hi; j++) {
                uint32_t y = t->up_head[j], lo = p, h = xl;
                while (lo < h) { /* the first position of x's list at or after y */
                    uint32_t mid = lo + (h - lo) / 2;
                    if (t->up_head[mid] < y) lo = mid + 1;
                    else h = mid;
                }
                if (lo == xl || t->up_head[lo] != y) {
                    tri_bad(c, v);
                    break;
                }
                p = lo + 1;
                if (c->pass == 0) {
                    t->tri_first[lo + 1]++;
                } else {
                    uint64_t k = cur[lo - xf]++;
                    t->tri[2 * k] = i;
                    t->tri[2 * k + 1] = j;
                }
            }
        }
    }
    free(cur);
}

/* ---------------------------------------------------------------------------------------------
 * Directed pruning (cch.h, Directions). adir from the graph's arcs (an edge's two bits come from
 * its two ends' rows: atomic or). Then level by level bottom-up, the edges of a level in chunks on
 * threads: an edge's reach bits are adir's or those its lower triangles give (x -> v is {v, x}'s
 * down bit, v -> y {v, y}'s up bit), from edges of lower levels only, final by then; the same
 * chunk moves the triangles that give a bit to the front of its own range (in place, in order)
 * and leaves the count in tri_first[e]. Last, one pass moves the chunks' kept triangles together
 * (each moves down, never over a chunk not yet moved) and makes tri_first prefix sums again. */
#define PRUNE_EDGES 4096       /* at most this many edges a chunk */
#define PRUNE_TRI (1ull << 18) /* or this many triangles */

typedef struct prune_chunk {
    uint32_t ea, eb;   /* edges */
    uint64_t at, kept; /* old first triangle of ea; triangles kept (at at .. at + kept) */
} prune_chunk;

typedef struct prune_ctx {
    gp_cch_topo *t;
    const gp_graph *g;
    uint8_t *r; /* m: reach bits */
    prune_chunk *ch;
    uint64_t base; /* first chunk of the level */
} prune_ctx;

static void adir_range(void *arg, uint64_t lo, uint64_t hi) {
    prune_ctx *c = arg;
    const gp_cch_topo *t = c->t;
    const gp_graph *g = c->g;
    for (uint64_t u = lo; u < hi; u++) {
        uint32_t ru = t->rank[u];
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == u) continue;
            uint32_t rv = t->rank[v];
            uint32_t e = ru < rv ? gp_cch_find_edge(t, ru, rv) : gp_cch_find_edge(t, rv, ru);
            if (e != GP_NONE) /* every skeleton edge is one (chordal supergraph) */
                __atomic_fetch_or(&t->adir[e], ru < rv ? GP_CCH_DIR_UP : GP_CCH_DIR_DOWN,
                                  __ATOMIC_RELAXED);
        }
    }
}

static void prune_range(void *arg, uint64_t lo, uint64_t hi) {
    prune_ctx *c = arg;
    gp_cch_topo *t = c->t;
    uint8_t *r = c->r;
    uint32_t *tri = t->tri;
    for (uint64_t i = c->base + lo; i < c->base + hi; i++) {
        prune_chunk *ch = &c->ch[i];
        uint64_t w = ch->at, k = ch->at;
        for (uint32_t e = ch->ea; e < ch->eb; e++) {
            uint64_t end = e + 1 < ch->eb ? t->tri_first[e + 1] : ch->at + ch->kept;
            uint8_t b = t->adir[e];
            uint64_t w0 = w;
            for (; k < end; k++) {
                uint32_t e1 = tri[2 * k], e2 = tri[2 * k + 1];
                uint8_t r1 = r[e1], r2 = r[e2];
                uint8_t up = (r1 & GP_CCH_DIR_DOWN) && (r2 & GP_CCH_DIR_UP);
                uint8_t down = (r2 & GP_CCH_DIR_DOWN) && (r1 & GP_CCH_DIR_UP);
                if (!(up | down)) continue;
                b |= (up ? GP_CCH_DIR_UP : 0) | (down ? GP_CCH_DIR_DOWN : 0);
                tri[2 * w] = e1;
                tri[2 * w + 1] = e2;
                w++;
            }
            r[e] = b;
            t->tri_first[e] = w - w0; /* the count, until the last pass */
        }
        ch->kept = w - ch->at;
    }
}

static int prune_directed(gp_cch_topo *t, const gp_graph *g, gp_err *err) {
    uint32_t m = t->m;
    t->ntri_all = t->ntri;
    t->adir = calloc((size_t)m + 1, 1);
    uint8_t *r = malloc((size_t)m + 1);
    uint64_t cap = (uint64_t)m / PRUNE_EDGES + t->ntri / PRUNE_TRI + t->nlevels + 2, nch = 0;
    prune_chunk *ch = malloc(cap * sizeof *ch);
    uint64_t *lch = malloc(((size_t)t->nlevels + 1) * sizeof *lch); /* first chunk per level */
    if (!t->adir || !r || !ch || !lch) {
        free(r);
        free(ch);
        free(lch);
        return gp_err_set(err, GP_ENOMEM, "out of memory pruning the CCH's triangles");
    }
    prune_ctx c = {t, g, r, ch, 0};
    gp_parallel_for(g->n, g->m >= (1u << 18) ? 0 : 1, adir_range, &c);
    /* chunks: edge ranges inside a level (a chunk's ch.kept holds its old end until it runs) */
    for (uint32_t l = 0; l < t->nlevels; l++) {
        lch[l] = nch;
        uint32_t ea = t->up_first[t->level_first[l]], eb = t->up_first[t->level_first[l + 1]];
        for (uint32_t e = ea; e < eb;) {
            uint32_t s = e;
            uint64_t at = t->tri_first[s];
            while (e < eb && e - s < PRUNE_EDGES && t->tri_first[e] - at < PRUNE_TRI) e++;
            ch[nch++] = (prune_chunk){s, e, at, t->tri_first[e] - at};
        }
    }
    lch[t->nlevels] = nch;
    for (uint32_t l = 0; l < t->nlevels; l++) {
        uint64_t k = lch[l + 1] - lch[l];
        if (!k) continue;
        c.base = lch[l];
        gp_parallel_for_dynamic(k, k > 1 ? 0 : 1, 1, prune_range, &c);
    }
    uint64_t w = 0;
    for (uint64_t i = 0; i < nch; i++) {
        if (w != ch[i].at)
            memmove(t->tri + 2 * w, t->tri + 2 * ch[i].at, ch[i].kept * 2 * sizeof *t->tri);
        w += ch[i].kept;
    }
    uint64_t run = 0;
    for (uint32_t e = 0; e < m; e++) {
        uint64_t k = t->tri_first[e];
        t->tri_first[e] = run;
        run += k;
    }
    t->tri_first[m] = run;
    t->ntri = run;
    uint32_t *shrunk = realloc(t->tri, (run * 2 + 1) * sizeof *t->tri);
    if (shrunk) t->tri = shrunk;
    free(r);
    free(ch);
    free(lch);
    return GP_OK;
}

int gp_cch_topo_build(const gp_graph *g, const uint32_t *rank_in, gp_cch_topo **out, gp_err *err) {
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
    double ph[6]; /* phase ends, for the debug log */
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
    rl.uf2 = gp_cch_big_malloc(((size_t)n + 1) * sizeof *rl.uf2);
    rl.uh2 = gp_cch_big_malloc(((size_t)t->m + 1) * sizeof *rl.uh2);
    rl.par2 = gp_cch_big_malloc((size_t)n * sizeof *rl.par2);
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
    /* the down lists: edge ids by head, ascending (so v ascending) */
    uint32_t *dfirst = calloc((size_t)n + 1, sizeof *dfirst);
    uint32_t *dedge = malloc(((size_t)t->m + 1) * sizeof *dedge);
    if (!dfirst || !dedge) {
        free(dfirst);
        free(dedge);
        goto oom;
    }
    for (uint32_t e = 0; e < t->m; e++) dfirst[t->up_head[e] + 1]++;
    for (uint32_t v = 0; v < n; v++) dfirst[v + 1] += dfirst[v];
    for (uint32_t e = 0; e < t->m; e++) dedge[dfirst[t->up_head[e]]++] = e;
    for (uint32_t v = n; v > 0; v--) dfirst[v] = dfirst[v - 1];
    dfirst[0] = 0;
    tri_ctx tc = {t, dfirst, dedge, 0, 0, GP_NONE};
    for (tc.pass = 0; tc.pass < 2; tc.pass++) {
        gp_parallel_for_dynamic(n, 0, 4096, tri_range, &tc);
        if (tc.oom || tc.bad != GP_NONE) {
            free(dfirst);
            free(dedge);
            if (tc.oom) goto oom;
            rc = gp_err_set(err, GP_EINVAL, "CCH is not chordal at rank %u", tc.bad);
            goto fail;
        }
        if (tc.pass == 0) {
            for (uint32_t e = 0; e < t->m; e++) t->tri_first[e + 1] += t->tri_first[e];
            t->ntri = t->tri_first[t->m];
            t->tri = malloc((t->ntri * 2 + 1) * sizeof *t->tri);
            if (!t->tri) {
                free(dfirst);
                free(dedge);
                goto oom;
            }
        }
    }
    free(dfirst);
    free(dedge);
    free(lvl);
    free(cnt);
    lvl = cnt = NULL;
    ph[4] = gp_now();
    if ((rc = prune_directed(t, g, err))) goto fail;
    t->contract_s = gp_now() - t0;
    ph[5] = gp_now();
    GP_LOG(GP_LOG_DEBUG,
           "cch_contract nodes=%u skeleton_s=%.2f chordal_s=%.2f levels_s=%.2f relabel_s=%.2f "
           "triangles_s=%.2f prune_s=%.2f triangles=%llu of %llu",
           n, ph[0] - t0, ph[1] - ph[0], ph[2] - ph[1], ph[3] - ph[2], ph[4] - ph[3], ph[5] - ph[4],
           (unsigned long long)t->ntri, (unsigned long long)t->ntri_all);
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
