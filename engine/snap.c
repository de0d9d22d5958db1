/* snap.c - snapping coordinates to road segments, and routing from / to snapped positions
 * (engine/snap.h is the contract).
 *
 * The nearest point of the road geometry comes from the graph's segment index (graph/segidx.h);
 * this file turns it into a position on the network (the arc, its opposite on a two-way road, the
 * fraction along it) and adds the partial costs of the snapped segments to the engine's queries.
 */
#include "engine/snap.h"

#include "graph/parallel.h"
#include "graph/segidx.h"
#include "graph/spatial.h"
#include "graph/turns.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int valid_coord(double lon, double lat) {
    return isfinite(lon) && isfinite(lat) && lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90;
}

int gp_snap_point(const gp_graph *g, double lon, double lat, double radius_m, gp_snap *out,
                  gp_err *err) {
    return gp_snap_point_if(g, lon, lat, radius_m, NULL, NULL, out, err);
}

int gp_snap_index(const gp_graph *g, double lon, double lat, const gp_segidx **x, gp_err *err) {
    *x = NULL;
    if (!valid_coord(lon, lat))
        return gp_err_set(err, GP_EINVAL,
                          "coordinate %.6f,%.6f is not a valid lon,lat (longitude -180..180, "
                          "latitude -90..90)",
                          lon, lat);
    if (!g->lon)
        return gp_err_set(err, GP_EINVAL, "graph %s has no coordinates to snap to", g->source);
    const gp_segidx *ix = gp_segidx_get(g, err);
    if (!ix) return err ? err->code : GP_ENOMEM;
    if (!gp_segidx_pieces(ix))
        return gp_err_set(err, GP_ENOTFOUND, "graph %s has no road segments with coordinates",
                          g->source);
    *x = ix;
    return GP_OK;
}

int gp_snap_point_if(const gp_graph *g, double lon, double lat, double radius_m, gp_seg_filter f,
                     void *ctx, gp_snap *out, gp_err *err) {
    const gp_segidx *x;
    int rc = gp_snap_index(g, lon, lat, &x, err);
    if (rc) return rc;
    if (!(radius_m >= 0)) radius_m = 0;
    gp_seg_hit h;
    if (!gp_segidx_nearest_if(x, g, lon, lat, radius_m, f, ctx, &h)) {
        if (f && gp_segidx_nearest(x, g, lon, lat, radius_m, &h))
            return gp_err_set(err, GP_ENOTFOUND,
                              "no road segment within %.2f m of %.6f,%.6f (lon,lat) qualifies "
                              "(the nearest, %.2f m away, does not)",
                              radius_m, lon, lat, h.chord_m);
        gp_segidx_nearest(x, g, lon, lat, INFINITY, &h);
        char hint[200] = "";
        gp_seg_hit sw;
        if (fabs(lon) <= 90 && gp_segidx_nearest(x, g, lat, lon, radius_m, &sw))
            snprintf(hint, sizeof hint,
                     "; %.6f,%.6f (the two numbers swapped) lies %.2f m from a road: coordinates "
                     "are longitude,latitude",
                     lat, lon, sw.chord_m);
        return gp_err_set(err, GP_ENOTFOUND,
                          "no road segment within %.2f m of %.6f,%.6f (lon,lat): the nearest is "
                          "%.2f m away%s",
                          radius_m, lon, lat, h.chord_m, hint);
    }
    gp_snap_from_hit(g, lon, lat, &h, out);
    return GP_OK;
}

void gp_snap_at_node(const gp_graph *g, uint32_t v, gp_snap *out) {
    memset(out, 0, sizeof *out);
    out->qlon = out->lon = g->lon ? g->lon[v] : NAN;
    out->qlat = out->lat = g->lat ? g->lat[v] : NAN;
    out->node = v;
    out->arc = out->rarc = GP_NONE;
}

static inline uint64_t part(double f, uint32_t w) {
    double c = f * (double)w;
    return c <= 0 ? 0 : (uint64_t)llround(c);
}

/* Entry (dir 0: origin) or exit (dir 1: destination) points of s, with the arc used. A position at
 * an end of its arc (frac 0 or 1) is that node, reachable at no cost in every direction. */
static uint32_t ends(const gp_graph *g, const gp_snap *s, int dir, uint32_t node[2],
                     uint64_t cost[2], uint32_t arc[2]) {
    if (s->arc == GP_NONE || s->frac <= 0 || s->frac >= 1) {
        node[0] = s->arc == GP_NONE ? s->node
                  : s->frac <= 0    ? gp_graph_arc_tail(g, s->arc)
                                    : g->col[s->arc];
        cost[0] = 0;
        arc[0] = GP_NONE;
        return 1;
    }
    uint32_t tail = gp_graph_arc_tail(g, s->arc), head = g->col[s->arc], k = 0;
    /* origin: forward to the head, or back to the tail through rarc; destination: from the tail
     * forward, or from the head back through rarc */
    node[k] = dir ? tail : head;
    cost[k] = part(dir ? s->frac : 1 - s->frac, g->w[s->arc]);
    arc[k++] = s->arc;
    if (s->rarc != GP_NONE) {
        node[k] = dir ? head : tail;
        cost[k] = part(dir ? 1 - s->frac : s->frac, g->w[s->rarc]);
        arc[k++] = s->rarc;
    }
    return k;
}

uint32_t gp_snap_origins(const gp_graph *g, const gp_snap *s, uint32_t node[2], uint64_t cost[2]) {
    uint32_t arc[2];
    return ends(g, s, 0, node, cost, arc);
}

uint32_t gp_snap_dests(const gp_graph *g, const gp_snap *s, uint32_t node[2], uint64_t cost[2]) {
    uint32_t arc[2];
    return ends(g, s, 1, node, cost, arc);
}

void gp_snap_route_free(gp_snap_route *r) {
    if (!r) return;
    gp_path_free(&r->path);
    free(r->arcs);
    r->arcs = NULL;
}

/* The direct way from a to b along their common arc: cost, or GP_INF when they do not share an
 * arc or the road does not run that way; *arc: the arc driven. */
static uint64_t direct(const gp_graph *g, const gp_snap *a, const gp_snap *b, uint32_t *arc) {
    *arc = GP_NONE;
    if (a->arc == GP_NONE || b->arc == GP_NONE) return GP_INF;
    double fb;
    if (b->arc == a->arc) fb = b->frac;
    else if (a->rarc != GP_NONE && b->arc == a->rarc) fb = 1 - b->frac;
    else return GP_INF;
    if (fb >= a->frac) {
        *arc = a->arc;
        return part(fb - a->frac, g->w[a->arc]);
    }
    if (a->rarc == GP_NONE) return GP_INF;
    *arc = a->rarc;
    return part(a->frac - fb, g->w[a->rarc]);
}

static inline uint64_t add3(uint64_t a, uint64_t d, uint64_t b) {
    return d == GP_INF ? GP_INF : a + d + b;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t find_u32(const uint32_t *v, uint32_t n, uint32_t key) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* ---------------------------------------------------------------------------------------------
 * Turn costs: a road graph with a turn graph (g->turns, graph/turns.h) is answered through it.
 * An EBG node a stands for "has driven road arc a, at its head". Origin on arc a at fraction f:
 * EBG a at cost (1 - f) * w(a) (and the opposite arc at f * w'); at node v: every arc b out of v
 * at cost w(b) (no turn cost at the start). Destination on arc b at fraction f: EBG b, minus the
 * part of b not driven, (1 - f) * w(b) (the opposite arc: f * w'); at node v: every arc p into v,
 * at no cost. A pair whose origin and destination EBG nodes coincide is the way along the arc
 * (direct()'s) when the destination lies ahead, else a loop around and back onto the arc
 * (loop_back: searched for that pair alone).
 * ------------------------------------------------------------------------------------------- */

typedef struct tends {
    uint32_t n, cap;
    uint32_t *node; /* EBG nodes (road arcs) */
    uint64_t *cost; /* origin: cost to add; destination: cost to subtract */
} tends;

static void tends_free(tends *t) {
    if (!t) return;
    free(t->node);
    free(t->cost);
    memset(t, 0, sizeof *t);
}

static int tends_push(tends *t, uint32_t node, uint64_t cost) {
    if (t->n == t->cap) {
        uint32_t c = t->cap ? t->cap * 2 : 8;
        uint32_t *a = realloc(t->node, sizeof *a * c);
        if (!a) return -1;
        t->node = a;
        uint64_t *b = realloc(t->cost, sizeof *b * c);
        if (!b) return -1;
        t->cost = b;
        t->cap = c;
    }
    t->node[t->n] = node;
    t->cost[t->n++] = cost;
    return 0;
}

/* Destination end: EBG node p at cost c and the duplicates of road arc p made for via-way turn
 * restrictions (graph/turns.h: the same arc driven after a restriction's prefix). */
static int push_dest(const gp_turns *T, tends *t, uint32_t p, uint64_t c) {
    if (tends_push(t, p, c)) return -1;
    const uint32_t *dup;
    uint32_t nd = gp_turns_dups(T, p, &dup);
    for (uint32_t i = 0; i < nd; i++)
        if (tends_push(t, dup[i], c)) return -1;
    return 0;
}

/* The EBG ends of s: dir 0 origin, 1 destination (appended to t). -1: out of memory. */
static int turn_ends(const gp_graph *g, const gp_snap *s, int dir, tends *t) {
    const gp_turns *T = g->turns;
    if (s->arc != GP_NONE && s->frac > 0 && s->frac < 1) {
        if (dir) {
            if (push_dest(T, t, s->arc, part(1 - s->frac, g->w[s->arc]))) return -1;
            if (s->rarc != GP_NONE && push_dest(T, t, s->rarc, part(s->frac, g->w[s->rarc])))
                return -1;
            return 0;
        }
        if (tends_push(t, s->arc, part(1 - s->frac, g->w[s->arc]))) return -1;
        if (s->rarc != GP_NONE && tends_push(t, s->rarc, part(s->frac, g->w[s->rarc]))) return -1;
        return 0;
    }
    uint32_t v = s->arc == GP_NONE ? s->node
                 : s->frac <= 0    ? gp_graph_arc_tail(g, s->arc)
                                   : g->col[s->arc];
    if (!dir) {
        for (uint32_t b = g->row[v]; b < g->row[v + 1]; b++)
            if (tends_push(t, b, g->w[b])) return -1;
        return 0;
    }
    /* arcs into v, or into a copy of v made for turn restrictions (the same place) */
    uint32_t c0, nc = gp_turns_copies(T, g, v, &c0);
    if (nc) v = gp_graph_index(g, gp_graph_orig_id(g, v)); /* the original, then its copies */
    for (uint32_t c = 0; c <= nc; c++) {
        uint32_t x = c ? T->copy_node[c0 + c - 1] : v;
        if (x == GP_NONE) continue;
        for (uint32_t k = g->rrow[x]; k < g->rrow[x + 1]; k++) {
            uint32_t u = g->rcol[k];
            if (k > g->rrow[x] && g->rcol[k - 1] == u) continue; /* parallel arcs: once */
            for (uint32_t p = gp_graph_find_arc(g, u, x);
                 p != GP_NONE && p < g->row[u + 1] && g->col[p] == x; p++)
                if (push_dest(T, t, p, 0)) return -1;
        }
    }
    return 0;
}

uint64_t gp_snap_turn_cost(const gp_graph *g, uint32_t a, uint32_t b) {
    const gp_turns *T = g->turns;
    if (!T || a == GP_NONE || b == GP_NONE || a >= g->m || b >= g->m) return 0;
    const gp_graph *tg = T->tg;
    /* the turn onto b or onto a duplicate of b (via-way restrictions): the same cost */
    for (uint32_t k = tg->row[a]; k < tg->row[a + 1]; k++)
        if (gp_turns_arc(T, tg->col[k]) == b) return tg->w[k] >= g->w[b] ? tg->w[k] - g->w[b] : 0;
    return 0;
}

/* origin + EBG distance - destination part; GP_INF when d is. */
static inline uint64_t tcost(uint64_t oc, uint64_t d, uint64_t sub) {
    if (d == GP_INF) return GP_INF;
    uint64_t x = oc + d;
    return x >= sub ? x - sub : 0;
}

/* The road path of EBG path q (origin at a node: from tail(q1); destination at a node: to
 * head(qk)), its arcs, into out. -1: out of memory. */
static int road_path(const gp_graph *g, const gp_path *q, int onode, int dnode,
                     gp_snap_route *out) {
    const gp_turns *T = g->turns;
    uint32_t k = q->len, len = 0;
    uint32_t *nodes = malloc(sizeof *nodes * (k + 2)), *arcs = malloc(sizeof *arcs * (k + 2));
    if (!nodes || !arcs) {
        free(nodes);
        free(arcs);
        return -1;
    }
    uint32_t na = 0;
#define ARC(i) gp_turns_arc(T, q->nodes[i]) /* EBG node -> road arc (duplicates too) */
    if (onode) nodes[len++] = gp_graph_arc_tail(g, ARC(0));
    for (uint32_t i = 0; i + 1 < k; i++) {
        if (onode || i) arcs[na++] = ARC(i);
        nodes[len++] = g->col[ARC(i)];
    }
    if (dnode) {
        if (onode || k > 1) arcs[na++] = ARC(k - 1);
        nodes[len++] = g->col[ARC(k - 1)];
    }
    out->path.nodes = nodes;
    out->path.len = len;
    out->arcs = arcs;
    out->first_arc = onode ? GP_NONE : ARC(0);
    out->last_arc = dnode ? GP_NONE : ARC(k - 1);
#undef ARC
    return 0;
}

static int is_node_end(const gp_snap *s) {
    return s->arc == GP_NONE || s->frac <= 0 || s->frac >= 1;
}

/* The node of a position at a node, else GP_NONE. */
static uint32_t end_node(const gp_graph *g, const gp_snap *s) {
    if (!is_node_end(s)) return GP_NONE;
    return s->arc == GP_NONE ? s->node
           : s->frac <= 0    ? gp_graph_arc_tail(g, s->arc)
                             : g->col[s->arc];
}

/* Cost of the pair (origin EBG node o at cost oc, destination EBG node d less sub) when dist is
 * the EBG distance o -> d: one EBG node (o == d) is valid only when the destination is not behind
 * the origin on it (oc >= sub). */
static inline uint64_t pair_cost(uint32_t o, uint64_t oc, uint32_t d, uint64_t sub, uint64_t dist) {
    if (o == d) return oc >= sub ? oc - sub : GP_INF;
    return tcost(oc, dist, sub);
}

/* The cheapest way from EBG node x around and back onto x (x driven again, whole): min over the
 * turns p -> x of dist(x, p) + w(p -> x), GP_INF when there is none; with path non-NULL, that
 * way's EBG nodes (x ... p x). How a destination behind its origin on one arc is reached. */
static int loop_back(gp_engine *e, const gp_graph *tg, uint32_t x, int algo, uint64_t *cost,
                     gp_path *path, gp_err *err) {
    *cost = GP_INF;
    if (path) memset(path, 0, sizeof *path), path->dist = GP_INF;
    for (uint32_t k = tg->rrow[x]; k < tg->rrow[x + 1]; k++) {
        uint32_t p = tg->rcol[k];
        gp_path q;
        memset(&q, 0, sizeof q);
        int rc = p == x ? GP_OK : gp_engine_p2p(e, tg, x, p, algo, &q, err);
        if (p == x) q.dist = 0;
        if (rc) {
            gp_path_free(&q);
            return rc;
        }
        uint64_t c = q.dist == GP_INF ? GP_INF : q.dist + tg->rw[k];
        if (c < *cost && (p != x || !path)) {
            *cost = c;
            if (path) {
                uint32_t *nodes = realloc(q.nodes, sizeof *nodes * ((size_t)q.len + 1));
                if (!nodes) {
                    gp_path_free(&q);
                    return gp_err_set(err, GP_ENOMEM, "out of memory");
                }
                nodes[q.len] = x;
                gp_path_free(path);
                path->nodes = nodes;
                path->len = q.len + 1;
                path->dist = c;
                continue;
            }
        }
        gp_path_free(&q);
    }
    return GP_OK;
}

/* How a route may use its ends beyond the EBG ends o and d: the way along one arc (direct())
 * when direct_ok, along direct_arc only unless it is GP_NONE; 0 for positions at one node when
 * same_ok. */
typedef struct end_rules {
    int direct_ok, same_ok;
    uint32_t direct_arc;
} end_rules;

static int route_core(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                      const tends *po, const tends *pd, end_rules er, int algo, gp_snap_route *out,
                      gp_err *err);

static int route_turns(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                       int algo, gp_snap_route *out, gp_err *err) {
    tends o = {0}, d = {0};
    int rc;
    if (turn_ends(g, a, 0, &o) || turn_ends(g, b, 1, &d)) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory");
        gp_snap_route_free(out);
    } else {
        rc = route_core(e, g, a, b, &o, &d, (end_rules){1, 1, GP_NONE}, algo, out, err);
    }
    tends_free(&o);
    tends_free(&d);
    return rc;
}

static int route_core(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                      const tends *po, const tends *pd, end_rules er, int algo, gp_snap_route *out,
                      gp_err *err) {
    const gp_turns *T = g->turns;
    const gp_graph *tg = T->tg;
    const tends o = *po, d = *pd;
    int rc = GP_OK;
    uint32_t darc;
    uint64_t dd = er.direct_ok ? direct(g, a, b, &darc) : GP_INF;
    if (dd != GP_INF && (er.direct_arc == GP_NONE || darc == er.direct_arc)) {
        out->dist = dd;
        out->first_arc = out->last_arc = darc;
    }
    uint32_t va = end_node(g, a);
    uint32_t vb = end_node(g, b);
    if (er.same_ok && va != GP_NONE && vb != GP_NONE &&
        gp_graph_orig_id(g, va) == gp_graph_orig_id(g, vb)) {
        /* the same node (or a copy of it made for turn restrictions: the same place) */
        out->dist = 0;
        out->path.nodes = malloc(sizeof *out->path.nodes);
        if (!out->path.nodes) rc = gp_err_set(err, GP_ENOMEM, "out of memory");
        else out->path.nodes[0] = va, out->path.len = 1;
        goto done;
    }
    int clash = 0; /* an origin EBG node is also a destination one */
    for (uint32_t i = 0; i < o.n; i++)
        for (uint32_t j = 0; j < d.n; j++) clash |= o.node[i] == d.node[j];
    gp_path best;
    memset(&best, 0, sizeof best);
    best.dist = GP_INF;
    uint64_t bestc = out->dist;
    if (algo == GP_P2P_AUTO && tg->cch && !clash && o.n <= GP_CCH_MAX_ENDS &&
        d.n <= GP_CCH_MAX_ENDS && o.n && d.n) {
        /* destination parts are subtracted: offsets K - part, K the largest part */
        uint64_t K = 0, doff[GP_CCH_MAX_ENDS];
        for (uint32_t j = 0; j < d.n; j++) K = d.cost[j] > K ? d.cost[j] : K;
        for (uint32_t j = 0; j < d.n; j++) doff[j] = K - d.cost[j];
        gp_path p;
        uint32_t i, j;
        rc = gp_cch_p2p_multi(tg->cch, o.node, o.cost, o.n, d.node, doff, d.n, &p, &i, &j, err);
        if (rc) goto done;
        if (p.dist != GP_INF && p.dist - K < bestc) {
            bestc = p.dist - K;
            best = p;
        } else {
            gp_path_free(&p);
        }
    } else {
        for (uint32_t i = 0; i < o.n; i++)
            for (uint32_t j = 0; j < d.n; j++) {
                if (bestc != GP_INF && o.cost[i] >= bestc + d.cost[j]) continue;
                gp_path p;
                memset(&p, 0, sizeof p);
                if (o.node[i] == d.node[j] && o.cost[i] < d.cost[j]) {
                    /* the destination lies behind the origin on one arc: around and back */
                    uint64_t lc;
                    rc = loop_back(e, tg, o.node[i],
                                   algo == GP_P2P_ASTAR && !tg->lon ? GP_P2P_BIDIR : algo, &lc, &p,
                                   err);
                    if (rc) {
                        gp_path_free(&p);
                        goto done;
                    }
                    uint64_t c = lc == GP_INF ? GP_INF : o.cost[i] + lc - d.cost[j];
                    if (c < bestc) {
                        gp_path_free(&best);
                        best = p;
                        bestc = c;
                    } else {
                        gp_path_free(&p);
                    }
                    continue;
                } else if (o.node[i] == d.node[j]) { /* along one arc */
                    p.nodes = malloc(sizeof *p.nodes);
                    if (!p.nodes) {
                        rc = gp_err_set(err, GP_ENOMEM, "out of memory");
                        goto done;
                    }
                    p.nodes[0] = o.node[i];
                    p.len = 1;
                } else {
                    /* the turn graph has no coordinates: A* answers as bidirectional */
                    rc = gp_engine_p2p(e, tg, o.node[i], d.node[j],
                                       algo == GP_P2P_ASTAR && !tg->lon ? GP_P2P_BIDIR : algo, &p,
                                       err);
                }
                if (rc) {
                    gp_path_free(&p);
                    goto done;
                }
                uint64_t c = pair_cost(o.node[i], o.cost[i], d.node[j], d.cost[j], p.dist);
                if (c < bestc) {
                    gp_path_free(&best);
                    best = p;
                    bestc = c;
                } else {
                    gp_path_free(&p);
                }
            }
    }
    if (best.len) {
        out->dist = bestc;
        if (road_path(g, &best, is_node_end(a), is_node_end(b), out)) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory");
        } else {
            /* the path's own part: the total less the partial arcs at its ends */
            uint64_t ends = 0;
            if (out->first_arc != GP_NONE)
                ends += part(1 - (out->first_arc == a->arc ? a->frac : 1 - a->frac),
                             g->w[out->first_arc]);
            if (out->last_arc != GP_NONE)
                ends += part(out->last_arc == b->arc ? b->frac : 1 - b->frac, g->w[out->last_arc]);
            out->path.dist = bestc >= ends ? bestc - ends : 0;
            out->path.settled = best.settled;
        }
    }
    gp_path_free(&best);
done:
    if (rc) gp_snap_route_free(out);
    return rc;
}

/* Sorted distinct EBG nodes of the ends of n positions (dir as turn_ends); the per-position ends
 * in e[0..n) (nodes replaced by their index in the distinct list). */
static uint32_t *turn_distinct(const gp_graph *g, const gp_snap *s, uint32_t n, int dir, tends *e,
                               uint32_t *k) {
    tends all = {0};
    for (uint32_t i = 0; i < n; i++) {
        if (turn_ends(g, &s[i], dir, &e[i])) goto oom;
        for (uint32_t j = 0; j < e[i].n; j++)
            if (tends_push(&all, e[i].node[j], 0)) goto oom;
    }
    uint32_t *v = all.node ? all.node : malloc(sizeof *v);
    if (!v) goto oom;
    free(all.cost);
    qsort(v, all.n, sizeof *v, cmp_u32);
    uint32_t u = 0;
    for (uint32_t i = 0; i < all.n; i++)
        if (!u || v[u - 1] != v[i]) v[u++] = v[i];
    *k = u;
    return v;
oom:
    tends_free(&all);
    return NULL;
}

/* The candidates of n positions (turn_ends) resolved once for a table: position i's EBG ends are
 * first[i] .. first[i+1]-1, each with its index in the sorted distinct list (the table's row or
 * column), its EBG node and its cost; and per position its arcs (direct()) and the OSM id of its
 * node (INT64_MIN when not at a node), so that a cell reads no graph and searches nothing. */
typedef struct tcands {
    uint32_t *first, *ix, *node;
    uint64_t *cost;
    int64_t *orig;
} tcands;

static void tcands_free(tcands *c) {
    if (!c) return;
    free(c->first);
    free(c->ix);
    free(c->node);
    free(c->cost);
    free(c->orig);
}

static int tcands_make(const gp_graph *g, const gp_snap *s, uint32_t n, const tends *e,
                       const uint32_t *v, uint32_t k, tcands *c) {
    size_t tot = 0;
    for (uint32_t i = 0; i < n; i++) tot += e[i].n;
    c->first = malloc(sizeof *c->first * ((size_t)n + 1));
    c->ix = malloc(sizeof *c->ix * (tot ? tot : 1));
    c->node = malloc(sizeof *c->node * (tot ? tot : 1));
    c->cost = malloc(sizeof *c->cost * (tot ? tot : 1));
    c->orig = malloc(sizeof *c->orig * (n ? n : 1));
    if (!c->first || !c->ix || !c->node || !c->cost || !c->orig) return -1;
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        c->first[i] = (uint32_t)at;
        for (uint32_t p = 0; p < e[i].n; p++, at++) {
            c->node[at] = e[i].node[p];
            c->cost[at] = e[i].cost[p];
            c->ix[at] = find_u32(v, k, e[i].node[p]);
        }
        uint32_t vi = end_node(g, &s[i]);
        c->orig[i] = vi == GP_NONE ? INT64_MIN : gp_graph_orig_id(g, vi);
    }
    c->first[n] = (uint32_t)at;
    return 0;
}

/* 1 when a lies on road arc b_arc (either way); share_arc: a and b lie on one road arc, the only
 * cells direct() can answer. */
static inline int on_arc(const gp_snap *a, uint32_t b_arc) {
    return a->arc != GP_NONE && b_arc != GP_NONE &&
           (b_arc == a->arc || (a->rarc != GP_NONE && b_arc == a->rarc));
}

static inline int share_arc(const gp_snap *a, const gp_snap *b) { return on_arc(a, b->arc); }

/* One-to-all through the turn graph: dist(v) = min over arcs p into v of dist(EBG p); pred(v) =
 * the tail of that best arc. dist[v] may exceed dist[pred] + w by a turn cost, and following
 * pred from v is a path, but not always v's best route: the best route into pred[v] may arrive
 * there by another arc than the best route to v does (a tree of nodes cannot hold both). */
static int sssp_turns(gp_engine *e, const gp_graph *g, const gp_snap *src, uint64_t max_dist,
                      uint64_t *dist, uint32_t *pred, gp_err *err) {
    const gp_turns *T = g->turns;
    const gp_graph *tg = T->tg;
    tends o = {0};
    uint64_t *td = malloc(sizeof *td * (tg->n ? tg->n : 1));
    int rc = GP_OK;
    if (!td || turn_ends(g, src, 0, &o)) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for a %u-node tree", tg->n);
        goto done;
    }
    for (uint32_t v = 0; v < g->n; v++) {
        dist[v] = GP_INF;
        if (pred) pred[v] = GP_NONE;
    }
    if (is_node_end(src)) {
        uint32_t s = src->arc == GP_NONE ? src->node
                     : src->frac <= 0    ? gp_graph_arc_tail(g, src->arc)
                                         : g->col[src->arc];
        dist[s] = 0;
    }
    for (uint32_t i = 0; i < o.n; i++) {
        if (max_dist != GP_INF && o.cost[i] > max_dist) continue;
        uint64_t lim = max_dist == GP_INF ? GP_INF : max_dist - o.cost[i];
        if ((rc = gp_engine_sssp(e, tg, o.node[i], lim, td, NULL, err))) break;
        for (uint32_t x = 0, u = 0; x < tg->n; x++) {   /* road arcs, then their duplicates */
            while (x < g->m && g->row[u + 1] <= x) u++; /* the tail of road arc x */
            if (td[x] == GP_INF) continue;
            uint32_t a = gp_turns_arc(T, x);
            uint64_t c = td[x] + o.cost[i];
            uint32_t v = g->col[a];
            if (c < dist[v] && (max_dist == GP_INF || c <= max_dist)) {
                dist[v] = c;
                if (pred)
                    pred[v] = x == o.node[i] && !is_node_end(src) ? GP_NONE
                              : x < g->m                          ? u
                                                                  : gp_graph_arc_tail(g, a);
            }
        }
    }
    /* a node and its copies made for turn restrictions are one place: each gets the best of
     * them (first the original from its copies, then the copies from it) */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t c = 0; !rc && c < T->ncopies; c++) {
            uint32_t x = T->copy_node[c], v = gp_graph_index(g, T->copy_orig[c]);
            if (v == GP_NONE) continue;
            uint32_t from = pass ? v : x, to = pass ? x : v;
            if (dist[from] < dist[to]) {
                dist[to] = dist[from];
                if (pred) pred[to] = pred[from];
            }
        }
done:
    tends_free(&o);
    free(td);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Several legs with continue_straight: a via position's pass-through states are the EBG nodes
 * it may be passed in (on an arc: the arc or its opposite; at a node: each arc into it). The leg
 * from state x of one position to state y of the next is a route between those ends alone; the
 * states are chosen by dynamic programming over the legs (k - 1 legs, a few states each).
 * ------------------------------------------------------------------------------------------- */

#define VIA_MAX_STATES 16

typedef struct via_pos {
    int kind; /* 0 free (the first and last position), 1 on an arc, 2 at a node */
    uint32_t n;
    uint32_t st[VIA_MAX_STATES]; /* road arcs */
} via_pos;

static void via_states(const gp_graph *g, const gp_snap *s, int free_end, via_pos *p) {
    memset(p, 0, sizeof *p);
    if (free_end) {
        p->n = 1;
        return;
    }
    if (!is_node_end(s)) {
        p->kind = 1;
        p->st[p->n++] = s->arc;
        if (s->rarc != GP_NONE) p->st[p->n++] = s->rarc;
        return;
    }
    uint32_t v = end_node(g, s);
    p->kind = 2;
    for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1] && p->n < VIA_MAX_STATES; a++) {
        uint32_t u = g->rcol[a];
        if (a > g->rrow[v] && g->rcol[a - 1] == u) continue; /* parallel arcs: once */
        for (uint32_t q = gp_graph_find_arc(g, u, v);
             q != GP_NONE && q < g->row[u + 1] && g->col[q] == v && p->n < VIA_MAX_STATES; q++)
            p->st[p->n++] = q;
    }
    if (!p->n) { /* no way in: nothing to keep straight */
        p->kind = 0;
        p->n = 1;
    }
}

/* The EBG ends of state i of p at position s: dir 0 leaving, 1 arriving. -1: out of memory. */
static int via_ends(const gp_graph *g, const gp_snap *s, const via_pos *p, uint32_t i, int dir,
                    tends *t) {
    const gp_turns *T = g->turns;
    if (p->kind == 0) return turn_ends(g, s, dir, t);
    uint32_t x = p->st[i];
    if (p->kind == 1) {
        uint64_t c = part(x == s->arc ? 1 - s->frac : s->frac, g->w[x]);
        return dir ? push_dest(T, t, x, c) : tends_push(t, x, c);
    }
    if (dir) return push_dest(T, t, x, 0);
    const gp_graph *tg = T->tg; /* on through the node: the turns out of x */
    for (uint32_t k = tg->row[x]; k < tg->row[x + 1]; k++)
        if (tends_push(t, tg->col[k], tg->w[k])) return -1;
    return 0;
}

/* The leg from state i of position a to state j of position b. */
static int via_leg(gp_engine *e, const gp_graph *g, const gp_snap *a, const via_pos *pa, uint32_t i,
                   const gp_snap *b, const via_pos *pb, uint32_t j, int algo, gp_snap_route *out,
                   gp_err *err) {
    memset(out, 0, sizeof *out);
    out->dist = GP_INF;
    out->first_arc = out->last_arc = GP_NONE;
    tends o = {0}, d = {0};
    end_rules er = {pa->kind != 2 && pb->kind != 2, pa->kind == 0 && pb->kind == 0, GP_NONE};
    if (pa->kind == 1) er.direct_arc = pa->st[i];
    if (pb->kind == 1) {
        if (er.direct_arc != GP_NONE && er.direct_arc != pb->st[j]) er.direct_ok = 0;
        er.direct_arc = pb->st[j];
    }
    int rc;
    if (via_ends(g, a, pa, i, 0, &o) || via_ends(g, b, pb, j, 1, &d))
        rc = gp_err_set(err, GP_ENOMEM, "out of memory");
    else rc = route_core(e, g, a, b, &o, &d, er, algo, out, err);
    if (rc == GP_OK && g->closed && out->dist != GP_INF && out->dist >= GP_W_CLOSED)
        out->dist = GP_INF; /* through an arc a per-request metric closed: no leg */
    tends_free(&o);
    tends_free(&d);
    return rc;
}

static int legs_alone(gp_engine *e, const gp_graph *g, const gp_snap *s, uint32_t k, int algo,
                      gp_snap_route *legs, gp_err *err) {
    for (uint32_t i = 0; i + 1 < k; i++) {
        int rc = gp_engine_route_snap(e, g, &s[i], &s[i + 1], algo, &legs[i], err);
        if (rc) {
            for (uint32_t j = 0; j < i; j++) gp_snap_route_free(&legs[j]);
            return rc;
        }
    }
    return GP_OK;
}

int gp_engine_route_via(gp_engine *e, const gp_graph *g, const gp_snap *s, uint32_t k, int straight,
                        int algo, gp_snap_route *legs, gp_err *err) {
    if (k < 2) return gp_err_set(err, GP_EINVAL, "a route needs at least 2 positions");
    if (!straight || !g->turns || k == 2) return legs_alone(e, g, s, k, algo, legs, err);
    via_pos *P = malloc(sizeof *P * k);
    /* per leg: the routes of every state pair; per position: best cost and predecessor state */
    gp_snap_route *R = calloc((size_t)(k - 1) * VIA_MAX_STATES * VIA_MAX_STATES, sizeof *R);
    uint64_t *best = malloc(sizeof *best * k * VIA_MAX_STATES);
    uint32_t *from = malloc(sizeof *from * k * VIA_MAX_STATES);
    int rc = GP_OK;
    if (!P || !R || !best || !from) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for a %u-position route", k);
        goto done;
    }
#define RT(l, x, y) R[((size_t)(l)*VIA_MAX_STATES + (x)) * VIA_MAX_STATES + (y)]
    for (uint32_t i = 0; i < k; i++) via_states(g, &s[i], i == 0 || i + 1 == k, &P[i]);
    best[0] = 0;
    for (uint32_t l = 0; l + 1 < k; l++)
        for (uint32_t y = 0; y < P[l + 1].n; y++) {
            uint64_t *b = &best[(size_t)(l + 1) * VIA_MAX_STATES + y];
            *b = GP_INF;
            for (uint32_t x = 0; x < P[l].n; x++) {
                uint64_t bx = best[(size_t)l * VIA_MAX_STATES + x];
                gp_snap_route *r = &RT(l, x, y);
                if (bx == GP_INF) {
                    r->dist = GP_INF;
                    continue;
                }
                if ((rc = via_leg(e, g, &s[l], &P[l], x, &s[l + 1], &P[l + 1], y, algo, r, err)))
                    goto done;
                if (r->dist != GP_INF && bx + r->dist < *b) {
                    *b = bx + r->dist;
                    from[(size_t)(l + 1) * VIA_MAX_STATES + y] = x;
                }
            }
        }
    if (best[(size_t)(k - 1) * VIA_MAX_STATES] == GP_INF) {
        rc = legs_alone(e, g, s, k, algo, legs, err); /* no way straight on: legs alone */
        goto done;
    }
    for (uint32_t l = k - 1, y = 0; l > 0; l--) { /* the chosen legs, from the last one back */
        uint32_t x = from[(size_t)l * VIA_MAX_STATES + y];
        legs[l - 1] = RT(l - 1, x, y);
        memset(&RT(l - 1, x, y), 0, sizeof(gp_snap_route));
        y = x;
    }
done:
    for (uint32_t l = 0; R && P && l + 1 < k; l++)
        for (uint32_t x = 0; x < P[l].n; x++)
            for (uint32_t y = 0; y < P[l + 1].n; y++) gp_snap_route_free(&RT(l, x, y));
#undef RT
    free(P);
    free(R);
    free(best);
    free(from);
    return rc;
}

static int route_snap(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b, int algo,
                      gp_snap_route *out, gp_err *err) {
    memset(out, 0, sizeof *out);
    out->dist = GP_INF;
    out->first_arc = out->last_arc = GP_NONE;
    if (g->turns) return route_turns(e, g, a, b, algo, out, err);
    uint32_t on[2], dn[2], oa[2], da[2];
    uint64_t oc[2], dc[2];
    uint32_t no = ends(g, a, 0, on, oc, oa), nd = ends(g, b, 1, dn, dc, da);
    uint32_t darc;
    uint64_t dd = direct(g, a, b, &darc);
    if (dd != GP_INF) {
        out->dist = dd;
        out->first_arc = out->last_arc = darc;
    }
    if (algo == GP_P2P_AUTO && g->cch) {
        /* the CCH takes every entry and exit node at once: one query instead of one per pair */
        gp_path p;
        uint32_t i, j;
        int rc = gp_cch_p2p_multi(g->cch, on, oc, no, dn, dc, nd, &p, &i, &j, err);
        if (rc) {
            gp_snap_route_free(out);
            return rc;
        }
        if (p.dist < out->dist) {
            out->dist = p.dist;
            p.dist -= oc[i] + dc[j]; /* the path's own part, as gp_engine_p2p's */
            out->path = p;
            out->first_arc = oa[i];
            out->last_arc = da[j];
        } else {
            gp_path_free(&p);
        }
        no = 0; /* answered */
    }
    for (uint32_t i = 0; i < no; i++)
        for (uint32_t j = 0; j < nd; j++) {
            if (out->dist != GP_INF && oc[i] + dc[j] >= out->dist) continue;
            gp_path p;
            memset(&p, 0, sizeof p);
            if (on[i] == dn[j]) {
                p.dist = 0;
                p.len = 1;
                p.nodes = malloc(sizeof *p.nodes);
                if (!p.nodes) {
                    gp_snap_route_free(out);
                    return gp_err_set(err, GP_ENOMEM, "out of memory");
                }
                p.nodes[0] = on[i];
            } else {
                int rc = gp_engine_p2p(e, g, on[i], dn[j], algo, &p, err);
                if (rc) {
                    gp_path_free(&p);
                    gp_snap_route_free(out);
                    return rc;
                }
            }
            uint64_t tot = add3(oc[i], p.dist, dc[j]);
            if (tot < out->dist) {
                gp_path_free(&out->path);
                out->path = p;
                out->dist = tot;
                out->first_arc = oa[i];
                out->last_arc = da[j];
            } else {
                gp_path_free(&p);
            }
        }
    if (out->dist == GP_INF) {
        gp_path_free(&out->path);
        out->first_arc = out->last_arc = GP_NONE;
    }
    return GP_OK;
}

/* The distinct entry (dir 0) or exit (dir 1) nodes of n positions, sorted; count in *k. */
static uint32_t *distinct_ends(const gp_graph *g, const gp_snap *s, uint32_t n, int dir,
                               uint32_t *k) {
    uint32_t *v = malloc(sizeof *v * 2 * (size_t)(n ? n : 1));
    if (!v) return NULL;
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node[2], arc[2];
        uint64_t cost[2];
        uint32_t m = ends(g, &s[i], dir, node, cost, arc);
        for (uint32_t j = 0; j < m; j++) v[c++] = node[j];
    }
    qsort(v, c, sizeof *v, cmp_u32);
    uint32_t u = 0;
    for (uint32_t i = 0; i < c; i++)
        if (!u || v[u - 1] != v[i]) v[u++] = v[i];
    *k = u;
    return v;
}

/* The ends of n positions resolved once: up to two (entry or exit) nodes each as indices into the
 * sorted distinct list v of k nodes, with their partial-arc costs. */
typedef struct ends_ix {
    uint32_t cnt;
    uint32_t ix[2];
    uint64_t cost[2];
} ends_ix;

static ends_ix *resolve_ends(const gp_graph *g, const gp_snap *s, uint32_t n, int dir,
                             const uint32_t *v, uint32_t k) {
    ends_ix *x = malloc(sizeof *x * (n ? n : 1));
    if (!x) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node[2], arc[2];
        x[i].cnt = ends(g, &s[i], dir, node, x[i].cost, arc);
        for (uint32_t a = 0; a < x[i].cnt; a++) x[i].ix[a] = find_u32(v, k, node[a]);
    }
    return x;
}

/* ---------------------------------------------------------------------------------------------
 * Table plans (snap.h gp_table_plan): the targets' ends resolved once (their distinct nodes, EBG
 * nodes with turn costs, and each target's candidates), then any number of blocks of sources,
 * each one engine table over the distinct ends and a combine of the candidates into the cells,
 * spread over the CPU's threads (gp_parallel_for_dynamic over the rows).
 * ------------------------------------------------------------------------------------------- */

#define TABLE_SPARES 4 /* engine-table buffers a plan keeps: one per block being computed */

struct gp_table_plan {
    gp_engine *e;
    const gp_graph *g;
    const gp_snap *dst; /* the caller's, for the plan's lifetime */
    uint32_t nt, kt;
    uint32_t *tv;       /* sorted distinct target ends (kt) */
    tcands dc;          /* turn costs: the targets' EBG candidates */
    ends_ix *dx;        /* no turn costs: the targets' exit nodes */
    pthread_mutex_t mu; /* the combine's around-and-back searches (loop, done) and its failure */
    /* engine-table buffers of finished blocks, kept for the next ones (under mu): a block's
     * table is tens of MB, and a fresh one would be faulted in page by page each time */
    uint64_t *spare[TABLE_SPARES];
    size_t spare_cap[TABLE_SPARES];
    /* the columns in the order of their first candidate's end: a row's combine then reads the
     * engine table's rows front to back (random order missed the cache on nearly every cell) */
    uint32_t *corder;
    /* turn costs: the columns' candidates and what a cell compares, laid out in corder's order,
     * so that a row's combine reads them front to back too (dc and dst by column: from the
     * cache's side, random places on every cell) */
    uint32_t *cfirst, *cix, *cnode, *carc;
    uint64_t *ccost;
    int64_t *corig;
    /* turn costs, the cells on the device: the targets' arcs by column, and the key under which
     * a device keeps the columns for the plan's next blocks (unique in the process) */
    uint32_t *darc;
    uint64_t key;
};

/* A buffer of at least cells for a block's engine table (one kept from an earlier block when
 * there is), or NULL. */
static uint64_t *table_buf_take(gp_table_plan *p, size_t cells, size_t *cap) {
    uint64_t *b = NULL;
    *cap = 0;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < TABLE_SPARES && !b; i++)
        if (p->spare[i] && p->spare_cap[i] >= cells) {
            b = p->spare[i], *cap = p->spare_cap[i];
            p->spare[i] = NULL;
        }
    pthread_mutex_unlock(&p->mu);
    if (b) return b;
    size_t c = cells + cells / 8 + 1; /* the next block's ends may be a few more */
    b = malloc(sizeof *b * c);
    if (b) *cap = c;
    return b;
}

/* b back to the plan for the next block (or freed when the plan keeps enough). */
static void table_buf_put(gp_table_plan *p, uint64_t *b, size_t cap) {
    if (!b) return;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < TABLE_SPARES && b; i++)
        if (!p->spare[i]) {
            p->spare[i] = b, p->spare_cap[i] = cap;
            b = NULL;
        }
    pthread_mutex_unlock(&p->mu);
    free(b);
}

/* One block's combine: its sources' candidates, the engine table t (ks x kt) and the cells. */
typedef struct combine {
    gp_table_plan *p;
    const gp_snap *src;
    const tcands *sc;  /* turn costs */
    const ends_ix *sx; /* no turn costs */
    const uint64_t *t;
    uint64_t *loop; /* around-and-back cost of a source candidate, once done[] is set */
    uint8_t *done;
    uint64_t *out;
    float *outf;
    int rc; /* the first failure (under p->mu) */
    gp_err err;
} combine;

/* What a turn-cost cell's pairs cannot give without the host, folded into *best: the way along
 * the arc both positions lie on, and around and back where a pair meets at one EBG node with the
 * destination behind the origin (a search, once per origin candidate). */
static int cell_extra(combine *cx, uint32_t i, uint32_t j, uint64_t *best) {
    const gp_table_plan *P = cx->p;
    const tcands *sc = cx->sc, *dc = &P->dc;
    const gp_snap *src = cx->src, *dst = P->dst;
    if (share_arc(&src[i], &dst[j])) {
        uint32_t darc;
        uint64_t d = direct(P->g, &src[i], &dst[j], &darc);
        if (d < *best) *best = d;
    }
    const uint32_t q0 = dc->first[j], q1 = dc->first[j + 1];
    for (uint32_t p = sc->first[i]; p < sc->first[i + 1]; p++) {
        const uint64_t oc = sc->cost[p];
        const uint32_t on = sc->node[p];
        for (uint32_t q = q0; q < q1; q++) {
            if (on != dc->node[q] || oc >= dc->cost[q]) continue;
            gp_table_plan *W = cx->p;
            pthread_mutex_lock(&W->mu);
            int rc = cx->rc, have = cx->done[p];
            uint64_t lc = cx->loop[p];
            pthread_mutex_unlock(&W->mu);
            if (rc) return rc;
            if (!have) { /* searched outside the lock (two threads may both search: one answer) */
                gp_err e1 = {0};
                rc = loop_back(W->e, ((const gp_turns *)W->g->turns)->tg, on, GP_P2P_AUTO, &lc,
                               NULL, &e1);
                pthread_mutex_lock(&W->mu);
                if (rc && !cx->rc) {
                    cx->rc = rc;
                    cx->err = e1;
                } else if (!rc) {
                    cx->loop[p] = lc;
                    cx->done[p] = 1;
                }
                pthread_mutex_unlock(&W->mu);
                if (rc) return rc;
            }
            uint64_t c = lc == GP_INF ? GP_INF : oc + lc - dc->cost[q];
            if (c < *best) *best = c;
        }
    }
    return GP_OK;
}

/* A turn-cost cell: the cheapest origin x destination candidate pair, the way along a shared
 * arc, or 0 at one node. */
static int cell_turns(combine *cx, uint32_t i, uint32_t j, uint64_t *cell) {
    const gp_table_plan *P = cx->p;
    const tcands *sc = cx->sc, *dc = &P->dc;
    const uint32_t kt = P->kt;
    const int64_t oi = sc->orig[i];
    uint64_t best = GP_INF;
    if (oi != INT64_MIN && oi == dc->orig[j]) {
        *cell = 0;
        return GP_OK;
    }
    const uint32_t q0 = dc->first[j], q1 = dc->first[j + 1];
    for (uint32_t p = sc->first[i]; p < sc->first[i + 1]; p++) {
        const uint64_t *row = cx->t + (size_t)sc->ix[p] * kt;
        const uint64_t oc = sc->cost[p];
        const uint32_t on = sc->node[p];
        for (uint32_t q = q0; q < q1; q++) {
            uint64_t c;
            if (on != dc->node[q]) c = tcost(oc, row[dc->ix[q]], dc->cost[q]);
            else if (oc >= dc->cost[q]) c = oc - dc->cost[q];
            else continue; /* around and back: cell_extra */
            if (c < best) best = c;
        }
    }
    int rc = cell_extra(cx, i, j, &best);
    *cell = best;
    return rc;
}

/* A cell without turn costs: the cheapest entry x exit pair, or the direct way along an arc both
 * lie on. */
static uint64_t cell_plain(const combine *cx, uint32_t i, uint32_t j) {
    const gp_table_plan *P = cx->p;
    const ends_ix *a = &cx->sx[i], *b = &P->dx[j];
    uint32_t darc;
    uint64_t bestd = direct(P->g, &cx->src[i], &P->dst[j], &darc);
    for (uint32_t p = 0; p < a->cnt; p++) {
        const uint64_t *row = cx->t + (size_t)a->ix[p] * P->kt;
        for (uint32_t q = 0; q < b->cnt; q++) {
            uint64_t d = add3(a->cost[p], row[b->ix[q]], b->cost[q]);
            if (d < bestd) bestd = d;
        }
    }
    return bestd;
}

/* A turn-cost cell from the plan's column layout (column jj = corder[jj]): the cheapest
 * candidate pair; 1 when the cell needs cell_turns (the positions share an arc, or a pair meets
 * at one EBG node: direct ways and around-and-back), else 0 with *cell set. */
static inline int cell_turns_fast(const combine *cx, uint32_t i, uint32_t jj, uint64_t *cell) {
    const gp_table_plan *P = cx->p;
    const tcands *sc = cx->sc;
    const gp_snap *a = &cx->src[i];
    const int64_t oi = sc->orig[i];
    if (oi != INT64_MIN && oi == P->corig[jj]) {
        *cell = 0;
        return 0;
    }
    if (on_arc(a, P->carc[jj])) return 1;
    const uint32_t q0 = P->cfirst[jj], q1 = P->cfirst[jj + 1], kt = P->kt;
    uint64_t best = GP_INF;
    for (uint32_t p = sc->first[i]; p < sc->first[i + 1]; p++) {
        const uint64_t *row = cx->t + (size_t)sc->ix[p] * kt;
        const uint64_t oc = sc->cost[p];
        const uint32_t on = sc->node[p];
        for (uint32_t q = q0; q < q1; q++) {
            if (on == P->cnode[q]) return 1;
            uint64_t c = tcost(oc, row[P->cix[q]], P->ccost[q]);
            if (c < best) best = c;
        }
    }
    *cell = best;
    return 0;
}

/* A cell's cost v into the block: no route through a closed arc; as stored units (out) or as
 * float32 in the graph's unit, NaN for no route (outf). */
static inline void cell_put(const combine *cx, size_t at, uint64_t v) {
    const gp_graph *g = cx->p->g;
    if (g->closed && v >= GP_W_CLOSED) v = GP_INF;
    if (cx->outf) cx->outf[at] = v == GP_INF ? NAN : (float)gp_graph_cost(g, v);
    else cx->out[at] = v;
}

/* Rows [begin, end) of a block: each cell, no route through a closed arc, written as stored
 * units (out) or as float32 in the graph's unit, NaN for no route (outf); the columns in the
 * plan's order (corder), so that the engine table's rows are read in order. */
static void combine_rows(void *ctx, uint64_t begin, uint64_t end) {
    combine *cx = ctx;
    const gp_table_plan *P = cx->p;
    const uint32_t nt = P->nt, *order = P->corder;
    for (uint32_t i = (uint32_t)begin; i < end; i++) {
        const size_t row = (size_t)i * nt;
        for (uint32_t jj = 0; jj < nt; jj++) {
            const uint32_t j = order[jj];
            uint64_t v;
            if (cx->sc) {
                if (cell_turns_fast(cx, i, jj, &v) && cell_turns(cx, i, j, &v)) return;
            } else {
                v = cell_plain(cx, i, j);
            }
            cell_put(cx, row + j, v);
        }
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* p->corder: the columns by their first candidate's end (columns without one last). */
static int column_order(gp_table_plan *p) {
    uint64_t *key = malloc(sizeof *key * (p->nt ? p->nt : 1));
    p->corder = malloc(sizeof *p->corder * (p->nt ? p->nt : 1));
    if (!key || !p->corder) {
        free(key);
        return -1;
    }
    for (uint32_t j = 0; j < p->nt; j++) {
        uint64_t ix = UINT32_MAX;
        if (p->dc.first && p->dc.first[j] < p->dc.first[j + 1]) ix = p->dc.ix[p->dc.first[j]];
        else if (p->dx && p->dx[j].cnt) ix = p->dx[j].ix[0];
        key[j] = ix << 32 | j;
    }
    qsort(key, p->nt, sizeof *key, cmp_u64);
    for (uint32_t j = 0; j < p->nt; j++) p->corder[j] = (uint32_t)key[j];
    free(key);
    if (!p->dc.first) return 0;
    /* turn costs: the columns' candidates in that order */
    size_t tot = p->dc.first[p->nt], at = 0;
    p->cfirst = malloc(sizeof *p->cfirst * ((size_t)p->nt + 1));
    p->cix = malloc(sizeof *p->cix * (tot ? tot : 1));
    p->cnode = malloc(sizeof *p->cnode * (tot ? tot : 1));
    p->ccost = malloc(sizeof *p->ccost * (tot ? tot : 1));
    p->carc = malloc(sizeof *p->carc * (p->nt ? p->nt : 1));
    p->corig = malloc(sizeof *p->corig * (p->nt ? p->nt : 1));
    if (!p->cfirst || !p->cix || !p->cnode || !p->ccost || !p->carc || !p->corig) return -1;
    for (uint32_t jj = 0; jj < p->nt; jj++) {
        uint32_t j = p->corder[jj];
        p->cfirst[jj] = (uint32_t)at;
        for (uint32_t q = p->dc.first[j]; q < p->dc.first[j + 1]; q++, at++) {
            p->cix[at] = p->dc.ix[q];
            p->cnode[at] = p->dc.node[q];
            p->ccost[at] = p->dc.cost[q];
        }
        p->carc[jj] = p->dst[j].arc;
        p->corig[jj] = p->dc.orig[j];
    }
    p->cfirst[p->nt] = (uint32_t)at;
    return 0;
}

void gp_engine_table_plan_free(gp_table_plan *p) {
    if (!p) return;
    tcands_free(&p->dc);
    free(p->dx);
    free(p->tv);
    for (int i = 0; i < TABLE_SPARES; i++) free(p->spare[i]);
    free(p->corder);
    free(p->cfirst);
    free(p->cix);
    free(p->cnode);
    free(p->ccost);
    free(p->carc);
    free(p->corig);
    free(p->darc);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

gp_table_plan *gp_engine_table_plan_new(gp_engine *e, const gp_graph *g, const gp_snap *dst,
                                        uint32_t nt, gp_err *err) {
    gp_table_plan *p = calloc(1, sizeof *p);
    if (!p || pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        gp_err_set(err, GP_ENOMEM, "out of memory for a table plan of %u targets", nt);
        return NULL;
    }
    p->e = e;
    p->g = g;
    p->dst = dst;
    p->nt = nt;
    double t0 = gp_now();
    int ok;
    if (g->turns) {
        tends *de = calloc(nt ? nt : 1, sizeof *de);
        p->tv = de ? turn_distinct(g, dst, nt, 1, de, &p->kt) : NULL;
        ok = p->tv && !tcands_make(g, dst, nt, de, p->tv, p->kt, &p->dc);
        for (uint32_t j = 0; de && j < nt; j++) tends_free(&de[j]);
        free(de);
    } else {
        p->tv = distinct_ends(g, dst, nt, 1, &p->kt);
        p->dx = p->tv ? resolve_ends(g, dst, nt, 1, p->tv, p->kt) : NULL;
        ok = p->dx != NULL;
    }
    if (ok) ok = column_order(p) == 0;
    if (ok && g->turns) {
        static uint64_t keys;
        p->key = __atomic_add_fetch(&keys, 1, __ATOMIC_RELAXED);
        p->darc = malloc(sizeof *p->darc * (nt ? nt : 1));
        ok = p->darc != NULL;
        for (uint32_t j = 0; ok && j < nt; j++) p->darc[j] = dst[j].arc;
    }
    if (!ok) {
        gp_engine_table_plan_free(p);
        gp_err_set(err, GP_ENOMEM, "out of memory for a table plan of %u targets", nt);
        return NULL;
    }
    GP_LOG(GP_LOG_DEBUG, "event=table_plan cols=%u ends=%u prepare_ms=%.1f", nt, p->kt,
           (gp_now() - t0) * 1e3);
    return p;
}

typedef struct fix_job {
    combine *cx;
    const gp_dcch_fix *fix;
} fix_job;

/* Cells [begin, end) the device left to the host: finished from its partial minimum. */
static void fix_cells(void *ctx, uint64_t begin, uint64_t end) {
    fix_job *j = ctx;
    const uint32_t nt = j->cx->p->nt;
    for (uint64_t x = begin; x < end; x++) {
        uint64_t v = j->fix[x].partial;
        const uint64_t cell = j->fix[x].cell;
        if (cell_extra(j->cx, (uint32_t)(cell / nt), (uint32_t)(cell % nt), &v)) return;
        cell_put(j->cx, cell, v);
    }
}

/* A turn table's rows (float32 or stored units) computed on the device (gp_engine_table_cells),
 * the cells it leaves to the host finished here (cell_extra); GP_EUNSUPPORTED where there is no
 * GPU CCH.
 * ts: when the block's sources were taken up (its log line). */
static int cells_device(gp_table_plan *p, combine *cx, uint32_t ns, double ts, gp_err *err) {
    const tcands *sc = cx->sc;
    const gp_graph *g = p->g, *tg = ((const gp_turns *)g->turns)->tg;
    uint32_t *arc = malloc(sizeof *arc * 2 * ((size_t)ns + 1));
    if (!arc) return gp_err_set(err, GP_ENOMEM, "out of memory for a %u-row table", ns);
    for (uint32_t i = 0; i < ns; i++) {
        arc[i] = cx->src[i].arc;
        arc[ns + i] = cx->src[i].rarc;
    }
    gp_dcch_ends rows = {ns, sc->first, NULL, sc->node, arc, arc + ns, sc->cost, sc->orig};
    gp_dcch_ends cols = {p->nt,   p->dc.first, p->dc.ix,   p->dc.node,
                         p->darc, NULL,        p->dc.cost, p->dc.orig};
    gp_dcch_fix *fix = NULL;
    uint32_t nfix = 0;
    double t0 = gp_now();
    int rc = gp_engine_table_cells(p->e, tg, p->tv, p->kt, p->key, &rows, &cols,
                                   g->closed ? GP_W_CLOSED : 0, cx->outf ? g->scale : 0,
                                   cx->outf ? (void *)cx->outf : (void *)cx->out, &fix, &nfix, err);
    double t1 = gp_now();
    if (rc == GP_OK && nfix) { /* on every CPU (a few thousand cells a block) */
        fix_job fj = {cx, fix};
        gp_parallel_for_dynamic(nfix, nfix >= 256 ? 0 : 1, 0, fix_cells, &fj);
        if (cx->rc) {
            rc = cx->rc;
            if (err) *err = cx->err;
        }
    }
    /* as the host's combine logs it (bench/lib.sh phases): table_ms the device's part with the
     * cells' copy, combine_ms the host's cells */
    GP_LOG(GP_LOG_DEBUG,
           "event=table_block rows=%u cols=%u ends=%ux%u sources_ms=%.1f table_ms=%.1f "
           "combine_ms=%.1f cells=device host_cells=%u",
           ns, p->nt, sc->first[ns], p->kt, (t0 - ts) * 1e3, (t1 - t0) * 1e3, (gp_now() - t1) * 1e3,
           nfix);
    free(fix);
    free(arc);
    return rc;
}

int gp_engine_table_plan_rows(gp_table_plan *p, const gp_snap *src, uint32_t ns, uint64_t *out,
                              float *outf, gp_err *err) {
    const gp_graph *g = p->g;
    combine cx = {.p = p, .src = src, .out = out, .outf = outf};
    tends *se = NULL;
    tcands sc = {0};
    ends_ix *sx = NULL;
    uint32_t ks = 0, *sv = NULL;
    uint64_t *t = NULL;
    int rc = GP_OK;
    double t0 = gp_now(), t1 = t0, t2 = t0;
    if (g->turns) {
        se = calloc(ns ? ns : 1, sizeof *se);
        sv = se ? turn_distinct(g, src, ns, 0, se, &ks) : NULL;
        if (sv && !tcands_make(g, src, ns, se, sv, ks, &sc)) {
            cx.loop = malloc(sizeof *cx.loop * ((size_t)sc.first[ns] + 1));
            cx.done = calloc((size_t)sc.first[ns] + 1, 1);
            cx.sc = &sc;
        }
    } else {
        sv = distinct_ends(g, src, ns, 0, &ks);
        cx.sx = sx = sv ? resolve_ends(g, src, ns, 0, sv, ks) : NULL;
    }
    if (cx.sc && cx.loop && cx.done && ks && p->kt && g->scale > 0) {
        /* the cells on the device, where the engine table is */
        rc = cells_device(p, &cx, ns, t0, err);
        if (rc != GP_EUNSUPPORTED && rc != GP_EDEVICE) goto done;
        gp_err_clear(err); /* no GPU CCH (or the device failed): the host's combine */
        rc = GP_OK;
    }
    size_t cells = (size_t)ks * p->kt, tcap = 0;
    if ((cx.sc && cx.loop && cx.done) || cx.sx) t = table_buf_take(p, cells ? cells : 1, &tcap);
    if (!t) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for a %u x %u table", ks, p->kt);
        goto done;
    }
    cx.t = t;
    const gp_graph *eg = g->turns ? ((const gp_turns *)g->turns)->tg : g;
    t1 = gp_now();
    if (ks && p->kt && (rc = gp_engine_table(p->e, eg, sv, ks, p->tv, p->kt, t, err))) goto done;
    t2 = gp_now();
    /* a few rows a chunk (a row is nt cells), every CPU */
    gp_parallel_for_dynamic(ns, (uint64_t)ns * p->nt >= 65536 ? 0 : 1, 0, combine_rows, &cx);
    if (cx.rc) {
        rc = cx.rc;
        if (err) *err = cx.err;
    }
    /* where a block's time goes (bench/gpu-matrix.sh reads these) */
    GP_LOG(GP_LOG_DEBUG,
           "event=table_block rows=%u cols=%u ends=%ux%u sources_ms=%.1f table_ms=%.1f "
           "combine_ms=%.1f",
           ns, p->nt, ks, p->kt, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (gp_now() - t2) * 1e3);
done:
    for (uint32_t i = 0; se && i < ns; i++) tends_free(&se[i]);
    free(se);
    tcands_free(&sc);
    free(sx);
    free(sv);
    table_buf_put(p, t, tcap);
    free(cx.loop);
    free(cx.done);
    return rc;
}

static int sssp_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint64_t max_dist,
                     uint64_t *dist, uint32_t *pred, gp_err *err) {
    if (g->turns) return sssp_turns(e, g, src, max_dist, dist, pred, err);
    uint32_t on[2], oa[2];
    uint64_t oc[2];
    uint32_t no = ends(g, src, 0, on, oc, oa);
    if (no == 1 && oc[0] == 0) return gp_engine_sssp(e, g, on[0], max_dist, dist, pred, err);
    uint64_t *td = malloc(sizeof *td * g->n);
    uint32_t *tp = pred ? malloc(sizeof *tp * g->n) : NULL;
    if (!td || (pred && !tp)) {
        free(td);
        free(tp);
        return gp_err_set(err, GP_ENOMEM, "out of memory for a %u-node tree", g->n);
    }
    for (uint32_t v = 0; v < g->n; v++) {
        dist[v] = GP_INF;
        if (pred) pred[v] = GP_NONE;
    }
    int rc = GP_OK;
    for (uint32_t i = 0; i < no; i++) {
        if (max_dist != GP_INF && oc[i] > max_dist) continue;
        uint64_t lim = max_dist == GP_INF ? GP_INF : max_dist - oc[i];
        rc = gp_engine_sssp(e, g, on[i], lim, td, tp, err);
        if (rc) break;
        for (uint32_t v = 0; v < g->n; v++) {
            if (td[v] == GP_INF) continue;
            uint64_t d = td[v] + oc[i];
            if (d < dist[v]) {
                dist[v] = d;
                if (pred) pred[v] = tp[v];
            }
        }
    }
    free(td);
    free(tp);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Closed arcs (graph.h GP_W_CLOSED, a per-request metric of engine/metric.h): a cost of
 * GP_W_CLOSED or more went through a closed arc, so it is no route. Every route that avoids them
 * costs less (2^32 - 1 stored units: 13 years in deciseconds), so the search stays exact.
 * ------------------------------------------------------------------------------------------- */

int gp_engine_route_snap(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                         int algo, gp_snap_route *out, gp_err *err) {
    int rc = route_snap(e, g, a, b, algo, out, err);
    if (rc == GP_OK && g->closed && out->dist != GP_INF && out->dist >= GP_W_CLOSED) {
        gp_snap_route_free(out);
        out->dist = GP_INF;
        out->first_arc = out->last_arc = GP_NONE;
    }
    return rc;
}

int gp_engine_table_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint32_t ns,
                         const gp_snap *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    gp_table_plan *p = gp_engine_table_plan_new(e, g, dst, nt, err);
    if (!p) return err ? err->code : GP_ENOMEM;
    int rc = gp_engine_table_plan_rows(p, src, ns, out, NULL, err);
    gp_engine_table_plan_free(p);
    return rc;
}

int gp_engine_sssp_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint64_t max_dist,
                        uint64_t *dist, uint32_t *pred, gp_err *err) {
    int rc = sssp_snap(e, g, src, max_dist, dist, pred, err);
    if (rc == GP_OK && g->closed)
        for (uint32_t v = 0; v < g->n; v++)
            if (dist[v] >= GP_W_CLOSED) {
                dist[v] = GP_INF;
                if (pred) pred[v] = GP_NONE;
            }
    return rc;
}

void gp_snap_from_hit(const gp_graph *g, double lon, double lat, const gp_seg_hit *h,
                      gp_snap *out) {
    uint32_t head = g->col[h->arc];
    memset(out, 0, sizeof *out);
    out->qlon = lon;
    out->qlat = lat;
    out->lon = h->lon;
    out->lat = h->lat;
    out->dist_m = gp_haversine_m(lon, lat, out->lon, out->lat);
    out->frac = h->frac;
    out->arc = h->arc;
    out->rarc = h->tail != head ? gp_graph_reverse_arc(g, h->arc) : GP_NONE;
    out->node = out->frac <= 0.5 ? h->tail : head;
}
