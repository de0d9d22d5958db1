/* alt.c - alternative routes for OSRM's `alternatives` (two coordinates, as in OSRM), by OSRM's
 * criteria for via-node alternatives (Abraham, Delling, Goldberg, Werneck, "Alternative Routes in
 * Road Networks", the method osrm-routed's CH alternatives follow): a route through a via node v
 * is the shortest a -> v route joined to the shortest v -> b route, and is admissible when
 *  - its stretch is bounded: it costs at most 1.25 x the best route (OSRM's epsilon 0.25);
 *  - it shares at most 75% of its length with the best route and the alternatives already taken
 *    (OSRM's gamma 0.75);
 *  - it is locally optimal: v lies inside a plateau (a stretch of road that both the forward
 *    shortest-path tree of a and the backward tree of b drive), so no U-turn joins its two halves,
 *    and it passes the T-test: the part of it within T = 25% of its cost around v (OSRM's alpha)
 *    is itself a shortest path, so no detour that a U-turn or a short cut would shorten;
 *  - it drives no arc and then its reverse arc (no U-turn anywhere) and visits no node twice.
 *
 * Steps: (1) the forward tree of a (gp_engine_sssp_snap, cut off at 1.25 x the best cost) and the
 * backward tree of b (a Dijkstra on the reverse arcs here, same cutoff); (2) plateaus: maximal
 * chains of arcs u -> v with pred_a[v] = u and succ_b[u] = v, each giving one candidate (every node
 * of a plateau gives the same route) of cost d(a, v) + d(v, b); (3) candidates by Abraham's
 * objective 2 x cost - plateau length, at most 32 tried, each built, checked as above (the T-test
 * is one point-to-point query through the engine) and taken until enough are found.
 */
#include "server/osrm/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRETCH 1.25    /* OSRM's VIAPATH_EPSILON: at most 25% slower than the best */
#define MAX_SHARED 0.75 /* OSRM's VIAPATH_GAMMA: share of the length on roads already listed */
#define T_ALPHA 0.25    /* OSRM's VIAPATH_ALPHA: the T-test's window, share of the route's cost */
#define TRIES 32

/* ---- backward tree: Dijkstra on the reverse arcs from b's exit nodes ---- */
typedef struct heap {
    uint64_t *key;
    uint32_t *node, n, cap;
} heap;

/* -1 when out of memory (nothing pushed). */
static int heap_push(heap *h, uint64_t k, uint32_t v) {
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? 2 * h->cap : 4096;
        uint64_t *nk = realloc(h->key, sizeof *nk * cap);
        if (nk) h->key = nk;
        uint32_t *nn = nk ? realloc(h->node, sizeof *nn * cap) : NULL;
        if (!nn) return -1;
        h->node = nn;
        h->cap = cap;
    }
    uint32_t i = h->n++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->key[p] <= k) break;
        h->key[i] = h->key[p];
        h->node[i] = h->node[p];
        i = p;
    }
    h->key[i] = k;
    h->node[i] = v;
    return 0;
}

static void heap_pop(heap *h, uint64_t *k, uint32_t *v) {
    *k = h->key[0];
    *v = h->node[0];
    uint64_t lk = h->key[--h->n];
    uint32_t lv = h->node[h->n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->key[c + 1] < h->key[c]) c++;
        if (lk <= h->key[c]) break;
        h->key[i] = h->key[c];
        h->node[i] = h->node[c];
        i = c;
    }
    h->key[i] = lk;
    h->node[i] = lv;
}

/* dt[v]: cost from v to b; succ[v]: the next node toward b (GP_NONE at an exit node). Lazy
 * deletion: the heap holds an entry per relaxation, grown as needed (the search stays within the
 * cutoff). 0 when out of memory. */
static int backward_tree(const gp_graph *g, const gp_snap *b, uint64_t cutoff, uint64_t *dt,
                         uint32_t *succ) {
    heap h = {NULL, NULL, 0, 0};
    int ok = 1;
    for (uint32_t v = 0; v < g->n; v++) {
        dt[v] = GP_INF;
        succ[v] = GP_NONE;
    }
    uint32_t nd[2];
    uint64_t c[2];
    uint32_t k = gp_snap_dests(g, b, nd, c);
    for (uint32_t i = 0; i < k; i++)
        if (c[i] < dt[nd[i]]) {
            dt[nd[i]] = c[i];
            if (heap_push(&h, c[i], nd[i])) ok = 0;
        }
    while (ok && h.n) {
        uint64_t d;
        uint32_t v;
        heap_pop(&h, &d, &v);
        if (d != dt[v] || d > cutoff) continue;
        for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++) {
            uint32_t u = g->rcol[a];
            uint64_t nd2 = d + g->rw[a];
            if (nd2 < dt[u] && nd2 <= cutoff) {
                dt[u] = nd2;
                succ[u] = v;
                if (heap_push(&h, nd2, u)) ok = 0;
            }
        }
    }
    free(h.key);
    free(h.node);
    return ok;
}

/* ---- candidates ---- */
typedef struct cand {
    uint32_t via;     /* a node in the middle of the plateau */
    uint64_t total;   /* d(a, via) + d(via, b) */
    uint64_t plateau; /* the plateau's cost */
    double score;     /* 2 x total - plateau: lower is better */
} cand;

static int cand_cmp(const void *x, const void *y) {
    const cand *a = x, *b = y;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    return (a->via > b->via) - (a->via < b->via);
}

static void mark_leg(const gp_graph *g, const gp_osrm_leg *leg, uint8_t *on) {
    for (size_t i = 0; i < leg->npc; i++) {
        on[leg->pc[i].tail] = 1;
        on[g->col[leg->pc[i].arc]] = 1;
    }
}

/* Share of leg's length on arcs whose both ends are marked. */
static double shared(const gp_graph *g, const gp_osrm_leg *leg, const uint8_t *on) {
    double s = 0, t = 0;
    for (size_t i = 0; i < leg->npc; i++) {
        t += leg->pc[i].dist_m;
        if (on[leg->pc[i].tail] && on[g->col[leg->pc[i].arc]]) s += leg->pc[i].dist_m;
    }
    return t > 0 ? s / t : 1;
}

/* 1 when arc q drives arc p's road back: from p's head to p's tail by their original (OSM) node
 * ids, so through the copies that turn restrictions make of a node too, along as many shape
 * points (the same ones reversed where the graph knows their ids). */
static int drives_back(const gp_graph *g, uint32_t p, uint32_t q) {
    if (q == gp_graph_reverse_arc(g, p)) return 1;
    uint32_t pt = gp_graph_arc_tail(g, p), qt = gp_graph_arc_tail(g, q);
    if (gp_graph_orig_id(g, qt) != gp_graph_orig_id(g, g->col[p]) ||
        gp_graph_orig_id(g, g->col[q]) != gp_graph_orig_id(g, pt))
        return 0;
    const double *x, *y;
    uint32_t np = gp_graph_arc_shape(g, p, &x, &y), nq = gp_graph_arc_shape(g, q, &x, &y);
    if (np != nq) return 0;
    if (!np || !g->shape_osm_id) return 1;
    return g->shape_osm_id[g->arc_shape[p]] == g->shape_osm_id[g->arc_shape[q] + nq - 1];
}

int gp_osrm_leg_has_uturn(const gp_graph *g, const gp_osrm_leg *leg) {
    for (size_t i = 0; i + 1 < leg->npc; i++)
        if (drives_back(g, leg->pc[i].arc, leg->pc[i + 1].arc)) return 1;
    return 0;
}

/* The arc a route leaves snapped position s on toward entry node o (or reaches s on from exit
 * node o, dest = 1): GP_NONE when s is a node. */
static uint32_t end_arc(const gp_graph *g, const gp_snap *s, uint32_t o, int dest) {
    if (s->arc == GP_NONE || s->frac <= 0 || s->frac >= 1) return GP_NONE;
    uint32_t tail = gp_graph_arc_tail(g, s->arc), head = g->col[s->arc];
    /* origin: s->arc to its head, rarc to the tail; destination: s->arc from its tail */
    if (o == (dest ? tail : head)) return s->arc;
    return s->rarc;
}

/* A growing node list that refuses a node twice (seen[] marks its nodes). */
typedef struct node_list {
    uint32_t *v, k, cap;
} node_list;

static int push_node(node_list *l, uint32_t x, uint8_t *seen) {
    if (seen[x]) return 0;
    if (l->k == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 64, *nv = realloc(l->v, sizeof *nv * cap);
        if (!nv) return 0;
        l->v = nv;
        l->cap = cap;
    }
    seen[x] = 1;
    l->v[l->k++] = x;
    return 1;
}

/* The route a -> via -> b along the two trees as a gp_snap_route (path from the entry node to the
 * exit node); 0 when it visits a node twice or out of memory. */
static int via_route(const gp_graph *g, const gp_snap *a, const gp_snap *b, uint32_t via,
                     const uint64_t *ds, const uint32_t *pred, const uint64_t *dt,
                     const uint32_t *succ, uint8_t *seen, gp_snap_route *rt) {
    memset(rt, 0, sizeof *rt);
    node_list l = {NULL, 0, 0};
    int ok = 1;
    for (uint32_t x = via; ok && x != GP_NONE; x = pred[x]) ok = push_node(&l, x, seen);
    for (uint32_t i = 0; ok && i < l.k / 2; i++) { /* a -> via */
        uint32_t t = l.v[i];
        l.v[i] = l.v[l.k - 1 - i];
        l.v[l.k - 1 - i] = t;
    }
    for (uint32_t x = ok ? succ[via] : GP_NONE; ok && x != GP_NONE; x = succ[x])
        ok = push_node(&l, x, seen);
    for (uint32_t i = 0; i < l.k; i++) seen[l.v[i]] = 0;
    uint64_t own = 0;
    for (uint32_t i = 0; ok && i + 1 < l.k; i++) {
        uint32_t arc = gp_graph_find_arc(g, l.v[i], l.v[i + 1]);
        if (arc == GP_NONE) ok = 0;
        else own += g->w[arc];
    }
    if (!ok || !l.k) {
        free(l.v);
        return 0;
    }
    rt->path.nodes = l.v;
    rt->path.len = l.k;
    rt->path.dist = own;
    rt->dist = ds[via] + dt[via];
    rt->first_arc = end_arc(g, a, l.v[0], 0);
    rt->last_arc = end_arc(g, b, l.v[l.k - 1], 1);
    return 1;
}

/* The position at cost `left` before the head of arc (tail u -> head v, dir 0) or after its tail
 * (dir 1), in the arc's direction only; node u / v itself when the arc is that short. */
static void point_on(const gp_graph *g, uint32_t u, uint32_t v, uint64_t left, int dir,
                     gp_snap *s) {
    uint32_t arc = gp_graph_find_arc(g, u, v);
    uint32_t w = g->w[arc];
    if (left >= w) {
        gp_snap_at_node(g, dir ? v : u, s);
        return;
    }
    memset(s, 0, sizeof *s);
    s->arc = arc;
    s->rarc = GP_NONE; /* one direction: the route's */
    s->frac = dir ? (double)left / w : 1 - (double)left / w;
    s->node = s->frac <= 0.5 ? u : v;
    s->lon = s->qlon = g->lon[u] + s->frac * (g->lon[v] - g->lon[u]);
    s->lat = s->qlat = g->lat[u] + s->frac * (g->lat[v] - g->lat[u]);
}

/* The T-test around via: the part of the route within T_ALPHA x its cost around the via node
 * (points inside arcs where the window ends there; the route's ends when it reaches past them)
 * must be a shortest path, up to the rounding of the two partial arcs. */
static int t_test(const gp_graph *g, const gp_snap_route *rt, uint32_t via) {
    const gp_path *p = &rt->path;
    uint32_t vi = 0;
    while (vi < p->len && p->nodes[vi] != via) vi++;
    if (vi == p->len) return 0;
    uint64_t half = (uint64_t)((double)rt->dist * T_ALPHA / 2), cost = 0;
    gp_snap ends[2];
    gp_snap_at_node(g, p->nodes[0], &ends[0]);
    gp_snap_at_node(g, p->nodes[p->len - 1], &ends[1]);
    for (int dir = 0; dir < 2; dir++) { /* back from via (dir 0), then on from it */
        uint64_t c = 0;
        for (uint32_t i = vi; dir ? i + 1 < p->len : i > 0; i = dir ? i + 1 : i - 1) {
            uint32_t u = dir ? p->nodes[i] : p->nodes[i - 1],
                     v = dir ? p->nodes[i + 1] : p->nodes[i];
            uint32_t w = g->w[gp_graph_find_arc(g, u, v)];
            if (c + w >= half) {
                point_on(g, u, v, half - c, dir, &ends[dir]);
                c = half;
                break;
            }
            c += w;
        }
        cost += c;
    }
    gp_snap x = ends[0], y = ends[1];
    gp_snap_route sr;
    gp_err err;
    if (gp_engine_route_snap(gp_http_engine(), g, &x, &y, GP_P2P_AUTO, &sr, &err)) return 0;
    int ok = sr.dist != GP_INF && sr.dist + 2 >= cost;
    gp_snap_route_free(&sr);
    return ok;
}

size_t gp_osrm_alternatives(gp_osrm_req *q, const gp_osrm_leg *best, size_t max_alt,
                            gp_osrm_leg *out) {
    const gp_graph *g = q->g;
    const gp_snap *a = best->a, *b = best->b;
    uint64_t C = best->cost;
    size_t got = 0, nc = 0, ccap = 0;
    if (!max_alt || C == 0 || C == GP_INF || best->npc == 0) return 0;
    uint64_t cutoff = (uint64_t)((double)C * STRETCH);
    uint64_t *ds = malloc(sizeof *ds * g->n), *dt = malloc(sizeof *dt * g->n);
    uint32_t *pred = malloc(sizeof *pred * g->n), *succ = malloc(sizeof *succ * g->n);
    uint8_t *on = calloc(g->n, 1), *seen = calloc(g->n, 1);
    cand *cs = NULL;
    gp_err err;
    if (!ds || !dt || !pred || !succ || !on || !seen ||
        gp_engine_sssp_snap(gp_http_engine(), g, a, cutoff, ds, pred, &err) ||
        !backward_tree(g, b, cutoff, dt, succ))
        goto done;
    mark_leg(g, best, on);
    /* plateaus: chains of arcs x -> succ[x] that the forward tree drives too */
    for (uint32_t x = 0; x < g->n; x++) {
        if (ds[x] == GP_INF || dt[x] == GP_INF || ds[x] + dt[x] > cutoff) continue;
        uint32_t y = succ[x];
        if (y == GP_NONE || pred[y] != x) continue; /* no plateau arc leaves x */
        uint32_t px = pred[x];
        if (px != GP_NONE && succ[px] == x) continue; /* x is inside a plateau, not its start */
        uint32_t end = x, len = 0;
        while (succ[end] != GP_NONE && pred[succ[end]] == end && len <= g->n)
            end = succ[end], len++;
        uint32_t mid = x;
        for (uint32_t i = 0; i < len / 2; i++) mid = succ[mid];
        if (nc == ccap) {
            size_t nc2 = ccap ? 2 * ccap : 256;
            cand *n2 = realloc(cs, sizeof *cs * nc2);
            if (!n2) goto done;
            cs = n2;
            ccap = nc2;
        }
        cand *c = &cs[nc++];
        c->via = mid;
        c->total = ds[x] + dt[x];
        c->plateau = ds[end] - ds[x];
        c->score = 2.0 * (double)c->total - (double)c->plateau;
    }
    /* nodes on no plateau arc: plateaus of one node, unless the two trees meet there in a U-turn
     * (the tip of a dead end: pred = succ) */
    for (uint32_t v = 0; v < g->n; v++) {
        if (ds[v] == GP_INF || dt[v] == GP_INF || ds[v] + dt[v] > cutoff) continue;
        uint32_t pv = pred[v], sv = succ[v];
        if (pv == sv || (sv != GP_NONE && pred[sv] == v) || (pv != GP_NONE && succ[pv] == v))
            continue;
        if (nc == ccap) {
            size_t nc2 = ccap ? 2 * ccap : 256;
            cand *n2 = realloc(cs, sizeof *cs * nc2);
            if (!n2) goto done;
            cs = n2;
            ccap = nc2;
        }
        cs[nc++] = (cand){v, ds[v] + dt[v], 0, 2.0 * (double)(ds[v] + dt[v])};
    }
    if (nc) qsort(cs, nc, sizeof *cs, cand_cmp);
    for (size_t k = 0, tried = 0; k < nc && tried < TRIES && got < max_alt; k++) {
        const cand *c = &cs[k];
        if (on[c->via] || (double)c->total > (double)C * STRETCH) continue; /* on a listed road */
        tried++;
        gp_snap_route rt;
        gp_osrm_leg l;
        if (!via_route(g, a, b, c->via, ds, pred, dt, succ, seen, &rt)) continue;
        int ok = t_test(g, &rt, c->via) && !gp_osrm_leg_build(g, a, b, &rt, &l);
        gp_snap_route_free(&rt);
        if (!ok) continue;
        if (gp_osrm_leg_has_uturn(g, &l) || shared(g, &l, on) > MAX_SHARED) {
            gp_osrm_leg_free(&l);
            continue;
        }
        mark_leg(g, &l, on);
        out[got++] = l;
    }
done:
    free(ds);
    free(dt);
    free(pred);
    free(succ);
    free(on);
    free(seen);
    free(cs);
    return got;
}
