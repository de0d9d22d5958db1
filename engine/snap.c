/* snap.c - snapping coordinates to road segments, and routing from / to snapped positions
 * (engine/snap.h is the contract).
 *
 * The nearest point of the road geometry comes from the graph's segment index (graph/segidx.h);
 * this file turns it into a position on the network (the arc, its opposite on a two-way road, the
 * fraction along it) and adds the partial costs of the snapped segments to the engine's queries.
 */
#include "engine/snap.h"

#include "graph/segidx.h"
#include "graph/spatial.h"

#include <math.h>
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

int gp_snap_point_if(const gp_graph *g, double lon, double lat, double radius_m, gp_seg_filter f,
                     void *ctx, gp_snap *out, gp_err *err) {
    if (!valid_coord(lon, lat))
        return gp_err_set(err, GP_EINVAL,
                          "coordinate %.6f,%.6f is not a valid lon,lat (longitude -180..180, "
                          "latitude -90..90)",
                          lon, lat);
    if (!g->lon)
        return gp_err_set(err, GP_EINVAL, "graph %s has no coordinates to snap to", g->source);
    const gp_segidx *x = gp_segidx_get(g, err);
    if (!x) return err ? err->code : GP_ENOMEM;
    if (!gp_segidx_pieces(x))
        return gp_err_set(err, GP_ENOTFOUND, "graph %s has no road segments with coordinates",
                          g->source);
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
    uint32_t head = g->col[h.arc];
    memset(out, 0, sizeof *out);
    out->qlon = lon;
    out->qlat = lat;
    out->lon = h.lon;
    out->lat = h.lat;
    out->dist_m = gp_haversine_m(lon, lat, out->lon, out->lat);
    out->frac = h.frac;
    out->arc = h.arc;
    out->rarc = h.tail != head ? gp_graph_reverse_arc(g, h.arc) : GP_NONE;
    out->node = out->frac <= 0.5 ? h.tail : head;
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
    if (r) gp_path_free(&r->path);
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

int gp_engine_route_snap(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                         int algo, gp_snap_route *out, gp_err *err) {
    memset(out, 0, sizeof *out);
    out->dist = GP_INF;
    out->first_arc = out->last_arc = GP_NONE;
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

int gp_engine_table_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint32_t ns,
                         const gp_snap *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    uint32_t ks = 0, kt = 0;
    uint32_t *sv = distinct_ends(g, src, ns, 0, &ks);
    uint32_t *tv = distinct_ends(g, dst, nt, 1, &kt);
    size_t cells = (size_t)ks * kt;
    uint64_t *t = sv && tv ? malloc(sizeof *t * (cells ? cells : 1)) : NULL;
    ends_ix *se = t ? resolve_ends(g, src, ns, 0, sv, ks) : NULL;
    ends_ix *de = se ? resolve_ends(g, dst, nt, 1, tv, kt) : NULL;
    int rc = GP_OK;
    if (!de) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for a %u x %u table", ks, kt);
        goto done;
    }
    if (ks && kt) {
        rc = gp_engine_table(e, g, sv, ks, tv, kt, t, err);
        if (rc) goto done;
    }
    /* each cell: the cheapest entry x exit pair (the table's node rows and columns resolved
     * above, once per position), or the direct way along an arc both lie on */
    for (uint32_t i = 0; i < ns; i++) {
        const ends_ix *a = &se[i];
        for (uint32_t j = 0; j < nt; j++) {
            const ends_ix *b = &de[j];
            uint32_t darc;
            uint64_t bestd = direct(g, &src[i], &dst[j], &darc);
            for (uint32_t p = 0; p < a->cnt; p++) {
                const uint64_t *row = t + (size_t)a->ix[p] * kt;
                for (uint32_t q = 0; q < b->cnt; q++) {
                    uint64_t d = add3(a->cost[p], row[b->ix[q]], b->cost[q]);
                    if (d < bestd) bestd = d;
                }
            }
            out[(size_t)i * nt + j] = bestd;
        }
    }
done:
    free(se);
    free(de);
    free(sv);
    free(tv);
    free(t);
    return rc;
}

int gp_engine_sssp_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint64_t max_dist,
                        uint64_t *dist, uint32_t *pred, gp_err *err) {
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
