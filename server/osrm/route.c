/* route.c - OSRM route objects from snapped routes: legs cut into pieces of arcs (partial
 * at the snapped ends), the route's geometry (full, or Douglas-Peucker simplified), annotations
 * per segment of the line (as OSRM), and turn-by-turn steps.
 *
 * Steps: guidance.c.
 */
#include "server/osrm/internal.h"

#include "graph/spatial.h"
#include "server/http/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- legs ---- */
/* The points of arc (tail u) appended to the leg as they are (the first one left out when the leg
 * has points: it is the previous piece's last), when the arc has no zero-length segment and
 * positive length; 0 (nothing appended) otherwise, or out of memory with some appended (the
 * caller tells them apart by pts.n). */
static int whole_arc(const gp_graph *g, uint32_t arc, uint32_t u, gp_osrm_leg *leg, size_t before) {
    const double *sx, *sy;
    uint32_t v = g->col[arc], k = gp_graph_arc_shape(g, arc, &sx, &sy);
    double px = g->lon[u], py = g->lat[u];
    for (uint32_t i = 0; i <= k; i++) {
        double x = i < k ? sx[i] : g->lon[v], y = i < k ? sy[i] : g->lat[v];
        if (x == px && y == py) return 0; /* a zero-length segment */
        px = x;
        py = y;
    }
    if (!before && gp_pts_add(&leg->pts, g->lon[u], g->lat[u], 0)) return 0;
    for (uint32_t i = 0; i < k; i++)
        if (gp_pts_add(&leg->pts, sx[i], sy[i], 0)) return 0;
    return gp_pts_add(&leg->pts, g->lon[v], g->lat[v], 0) == 0;
}

/* Appends the piece of arc (tail u, GP_NONE: looked up) from fraction f0 to f1. A route over a
 * large map has thousands: the piece array grows geometrically, and a whole arc's points (tail,
 * shape, head) are copied as they are when no segment of it has zero length (the fraction walk of
 * arc_points, which gives the same points, drops the repeats of such a segment). */
static int add_piece(const gp_graph *g, gp_osrm_leg *leg, uint32_t arc, uint32_t u, double f0,
                     double f1, uint64_t cost, int points) {
    if (leg->npc == leg->cap) {
        size_t cap = leg->cap ? 2 * leg->cap : 8; /* a matched trace's legs have a few */
        gp_osrm_piece *pc = realloc(leg->pc, sizeof *pc * cap);
        if (!pc) return -1;
        leg->pc = pc;
        leg->cap = cap;
    }
    if (u == GP_NONE) u = gp_graph_arc_tail(g, arc);
    gp_osrm_piece *p = &leg->pc[leg->npc];
    p->arc = arc;
    p->tail = u;
    p->f0 = f0;
    p->f1 = f1;
    p->cost = cost;
    p->dist_m = fabs(f1 - f0) * gp_graph_arc_length_m(g, arc);
    if (!isfinite(p->dist_m)) p->dist_m = 0;
    if (!points) { /* a leg without its line: the piece's length and cost only */
        p->p0 = p->p1 = 0;
        leg->npc++;
        leg->cost += cost;
        leg->dist_m += p->dist_m;
        return 0;
    }
    size_t before = leg->pts.n;
    if (f0 == 0 && f1 == 1 && whole_arc(g, arc, u, leg, before)) {
        p->p0 = before ? before - 1 : 0;
        p->p1 = leg->pts.n - 1;
        leg->npc++;
        leg->cost += cost;
        leg->dist_m += p->dist_m;
        return 0;
    }
    if (leg->pts.n > before) return -1; /* out of memory in whole_arc */
    gp_pts tmp;
    memset(&tmp, 0, sizeof tmp);
    if (gp_arc_points_from(g, arc, u, f0, f1, &tmp)) {
        gp_pts_free(&tmp);
        return -1;
    }
    /* join: the piece's first point is the previous piece's last one */
    p->p0 = before ? before - 1 : 0;
    for (size_t i = before ? 1 : 0; i < tmp.n; i++)
        if (gp_pts_add(&leg->pts, tmp.lon[i], tmp.lat[i], 0)) {
            gp_pts_free(&tmp);
            return -1;
        }
    gp_pts_free(&tmp);
    p->p1 = leg->pts.n - 1;
    leg->npc++;
    leg->cost += cost;
    leg->dist_m += p->dist_m;
    return 0;
}

/* Fraction of position s along arc (s->arc or its opposite s->rarc). */
static double frac_on(const gp_snap *s, uint32_t arc) {
    return arc == s->arc ? s->frac : 1 - s->frac;
}

static uint64_t end_cost(const gp_graph *g, const gp_snap *s, uint32_t node, int origin) {
    uint32_t nd[2];
    uint64_t c[2], best = GP_INF;
    uint32_t k = origin ? gp_snap_origins(g, s, nd, c) : gp_snap_dests(g, s, nd, c);
    for (uint32_t i = 0; i < k; i++)
        if (nd[i] == node && c[i] < best) best = c[i];
    return best == GP_INF ? 0 : best;
}

/* gp_osrm_leg_build, without the leg's line (pts) when !points: the pieces' lengths and costs are
 * the same, from the arcs' lengths (a route answer without overview, steps or annotations reads
 * nothing else, and copying the points was a tenth of its CPU time). */
static int leg_build(const gp_graph *g, const gp_snap *a, const gp_snap *b, const gp_snap_route *rt,
                     gp_osrm_leg *leg, int points) {
    memset(leg, 0, sizeof *leg);
    leg->a = a;
    leg->b = b;
    const gp_path *p = &rt->path;
    if (p->len == 0) {
        if (rt->first_arc != GP_NONE) { /* both positions on one arc */
            uint32_t arc = rt->first_arc;
            if (add_piece(g, leg, arc, GP_NONE, frac_on(a, arc), frac_on(b, arc), rt->dist, points))
                return -1;
        } else if (points && (gp_pts_add(&leg->pts, a->lon, a->lat, 0) ||
                              gp_pts_add(&leg->pts, b->lon, b->lat, 0))) {
            return -1;
        }
        return 0;
    }
    uint64_t used = 0, first = 0, last = 0;
    if (rt->first_arc != GP_NONE) first = end_cost(g, a, p->nodes[0], 1);
    if (rt->last_arc != GP_NONE) last = end_cost(g, b, p->nodes[p->len - 1], 0);
    /* the ends take what the route's total leaves after the network part */
    if (rt->dist >= p->dist && first + last != rt->dist - p->dist) {
        uint64_t rest = rt->dist - p->dist;
        if (rt->last_arc != GP_NONE) {
            first = first > rest ? rest : first;
            last = rest - first;
        } else {
            first = rest;
        }
    }
    if (rt->first_arc != GP_NONE) {
        if (add_piece(g, leg, rt->first_arc, GP_NONE, frac_on(a, rt->first_arc), 1, first, points))
            return -1;
        used += first;
    } else if (points && gp_pts_add(&leg->pts, g->lon[p->nodes[0]], g->lat[p->nodes[0]], 0)) {
        return -1;
    }
    /* the route's own arcs when it has them (turn costs: each piece also carries the cost of
     * the turn into it) */
    uint32_t prev = rt->first_arc;
    for (uint32_t i = 0; i + 1 < p->len; i++) {
        uint32_t arc = rt->arcs ? rt->arcs[i] : gp_graph_find_arc(g, p->nodes[i], p->nodes[i + 1]);
        if (arc == GP_NONE) continue;
        uint64_t c = g->w[arc] + gp_snap_turn_cost(g, prev, arc);
        if (add_piece(g, leg, arc, p->nodes[i], 0, 1, c, points)) return -1;
        used += c;
        prev = arc;
    }
    if (rt->last_arc != GP_NONE) {
        last += gp_snap_turn_cost(g, prev, rt->last_arc);
        if (add_piece(g, leg, rt->last_arc, GP_NONE, 0, frac_on(b, rt->last_arc), last, points))
            return -1;
        used += last;
    }
    if (points && leg->pts.n == 1 && gp_pts_add(&leg->pts, b->lon, b->lat, 0)) return -1;
    leg->cost = rt->dist; /* == used unless an end cost was unknown */
    (void)used;
    return 0;
}

int gp_osrm_leg_build(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                      const gp_snap_route *rt, gp_osrm_leg *leg) {
    return leg_build(g, a, b, rt, leg, 1);
}

int gp_osrm_leg_build_lines(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                            const gp_snap_route *rt, int points, gp_osrm_leg *leg) {
    return leg_build(g, a, b, rt, leg, points);
}

int gp_osrm_opts_lines(const gp_osrm_route_opts *o) {
    return o->overview || o->steps || o->ann_duration || o->ann_distance || o->ann_nodes ||
           o->ann_speed || o->ann_weight || o->ann_datasources;
}

void gp_osrm_leg_free(gp_osrm_leg *leg) {
    if (!leg) return;
    gp_pts_free(&leg->pts);
    free(leg->pc);
    memset(leg, 0, sizeof *leg);
}

int gp_osrm_leg_append(gp_osrm_leg *m, gp_osrm_leg *x) {
    size_t base = m->pts.n ? m->pts.n - 1 : 0;
    gp_osrm_piece *pc = realloc(m->pc, sizeof *pc * (m->npc + x->npc + 1));
    int bad = !pc;
    if (pc) {
        m->pc = pc;
        m->cap = m->npc + x->npc + 1;
    }
    for (size_t p = 0; !bad && p < x->npc; p++) {
        m->pc[m->npc] = x->pc[p];
        m->pc[m->npc].p0 += base;
        m->pc[m->npc].p1 += base;
        m->npc++;
    }
    for (size_t p = 1; !bad && p < x->pts.n; p++)
        bad = gp_pts_add(&m->pts, x->pts.lon[p], x->pts.lat[p], 0);
    m->cost += x->cost;
    m->dist_m += x->dist_m;
    m->b = x->b;
    gp_osrm_leg_free(x);
    if (bad) gp_osrm_leg_free(m);
    return bad ? -1 : 0;
}

int gp_osrm_continue_straight(gp_osrm_req *q) {
    char buf[16];
    const char *v = gp_osrm_opt(q, "continue_straight", buf, sizeof buf);
    if (v && !strcmp(v, "true")) return 1;
    if (v && !strcmp(v, "false")) return 0;
    /* default: the profile's continue_straight_at_waypoint (OSRM v6: car true, bicycle and foot
     * false) */
    return !strcmp(q->g->profile, "car");
}

int gp_osrm_route_legs(gp_osrm_req *q, const uint32_t *order, uint32_t k, int straight,
                       gp_osrm_leg *legs) {
    gp_snap *s = malloc(sizeof *s * (k ? k : 1));
    gp_snap_route *rt = calloc(k ? k : 1, sizeof *rt);
    gp_err err;
    gp_err_clear(&err);
    int rc = s && rt ? GP_OK : gp_err_set(&err, GP_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < k; i++) s[i] = q->snap[order[i]];
    if (!rc)
        rc = gp_engine_route_via(gp_http_engine(), q->g, s, k, straight, GP_P2P_AUTO, rt, &err);
    free(s);
    if (rc) {
        free(rt);
        gp_osrm_error_err(q->r, &err);
        return 0;
    }
    uint32_t built = 0, ok = 1;
    for (uint32_t i = 0; i + 1 < k; i++) {
        const gp_snap *a = &q->snap[order[i]], *b = &q->snap[order[i + 1]];
        if (ok && rt[i].dist == GP_INF) {
            ok = 0;
            char why[160] = "";
            gp_osrm_closed_why(q, a, b, why, sizeof why);
            if (*why)
                gp_osrm_error(q->r, 400, "NoRoute",
                              "Impossible route between points %u and %u: %s closes every path "
                              "between them in graph '%s' (there is one without it)",
                              order[i], order[i + 1], why, q->graph_name);
            else
                gp_osrm_error(q->r, 400, "NoRoute",
                              "Impossible route between points %u and %u: no path in graph '%s'",
                              order[i], order[i + 1], q->graph_name);
        } else if (ok && leg_build(q->g, a, b, &rt[i], &legs[i], !q->no_points)) {
            ok = 0;
            gp_osrm_leg_free(&legs[i]);
            gp_osrm_error(q->r, 500, "InternalError", "out of memory building the route");
        } else if (ok) {
            built++;
        }
        gp_snap_route_free(&rt[i]);
    }
    free(rt);
    if (!ok)
        for (uint32_t j = 0; j < built; j++) gp_osrm_leg_free(&legs[j]);
    return ok;
}

/* ---- options ---- */
int gp_osrm_route_opts_parse(gp_osrm_req *q, gp_osrm_route_opts *o) {
    memset(o, 0, sizeof *o);
    o->overview = 1;
    char buf[128];
    const char *v;
    if ((v = gp_osrm_opt(q, "steps", buf, sizeof buf))) {
        if (!strcmp(v, "true")) o->steps = 1;
        else if (strcmp(v, "false")) {
            gp_osrm_error(q->r, 400, "InvalidOptions", "steps must be true or false");
            return 0;
        }
    }
    o->continue_straight = -1;
    if ((v = gp_osrm_opt(q, "continue_straight", buf, sizeof buf)) && strcmp(v, "default"))
        o->continue_straight = !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : -1;
    if ((v = gp_osrm_opt(q, "overview", buf, sizeof buf))) {
        if (!strcmp(v, "false")) o->overview = 0;
        else if (!strcmp(v, "simplified")) o->overview = 1;
        else if (!strcmp(v, "full")) o->overview = 2;
        else {
            gp_osrm_error(q->r, 400, "InvalidOptions",
                          "overview must be simplified, full or false, got '%.32s'", v);
            return 0;
        }
    }
    if ((v = gp_osrm_opt(q, "annotations", buf, sizeof buf))) {
        char *tmp = strdup(v); /* every item, however long the list */
        if (!tmp) {
            gp_osrm_error(q->r, 500, "InternalError", "out of memory");
            return 0;
        }
        if (!strcmp(tmp, "true")) {
            o->ann_duration = o->ann_distance = o->ann_nodes = o->ann_speed = o->ann_weight =
                o->ann_datasources = 1;
        } else if (strcmp(tmp, "false")) {
            for (char *sv = NULL, *t = strtok_r(tmp, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
                if (!strcmp(t, "duration")) o->ann_duration = 1;
                else if (!strcmp(t, "distance")) o->ann_distance = 1;
                else if (!strcmp(t, "nodes")) o->ann_nodes = 1;
                else if (!strcmp(t, "speed")) o->ann_speed = 1;
                else if (!strcmp(t, "weight")) o->ann_weight = 1;
                else if (!strcmp(t, "datasources")) o->ann_datasources = 1;
                else {
                    gp_osrm_error(q->r, 400, "InvalidOptions",
                                  "annotations: '%.32s' is not one of true, false, duration, "
                                  "distance, nodes, speed, weight, datasources",
                                  t);
                    free(tmp);
                    return 0;
                }
            }
        }
        free(tmp);
    }
    return 1;
}

/* ---- JSON ---- */
cJSON *gp_osrm_geometry_json(const gp_osrm_req *q, const double *lon, const double *lat, size_t n) {
    if (q->geometries == GP_GEOM_GEOJSON) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "LineString");
        cJSON *c = cJSON_AddArrayToObject(o, "coordinates");
        for (size_t i = 0; i < n; i++) {
            cJSON *pt = cJSON_CreateArray();
            cJSON_AddItemToArray(pt, cJSON_CreateNumber(gp_round_unit(lon[i], 1e-6)));
            cJSON_AddItemToArray(pt, cJSON_CreateNumber(gp_round_unit(lat[i], 1e-6)));
            cJSON_AddItemToArray(c, pt);
        }
        return o;
    }
    char *s = gp_polyline_encode(lon, lat, n, q->geometries == GP_GEOM_POLYLINE6 ? 6 : 5);
    cJSON *o = cJSON_CreateString(s ? s : "");
    free(s);
    return o;
}

static double piece_duration(const gp_graph *g, const gp_osrm_piece *p) {
    return gp_cost_seconds(g, p->cost);
}

const char *gp_osrm_mode(const gp_graph *g) {
    if (!strcmp(g->profile, "bicycle")) return "cycling";
    if (!strcmp(g->profile, "foot")) return "walking";
    return "driving";
}

/* ---- annotations: one entry per segment of the leg's line, as OSRM's ---- */
/* Original node id of vertex k of arc's line (0 tail, 1..ns shape points, ns + 1 head); 0 for a
 * shape point whose id the graph does not know (graphs without shape_osm_id). */
static int64_t vertex_id(const gp_graph *g, uint32_t arc, uint32_t u, uint32_t k, uint32_t ns) {
    if (k == 0) return gp_graph_orig_id(g, u);
    if (k == ns + 1) return gp_graph_orig_id(g, g->col[arc]);
    return g->shape_osm_id ? g->shape_osm_id[g->arc_shape[arc] + k - 1] : 0;
}

/* The node ids of piece p's points, as add_piece lays them out (gp_arc_points_from's walk: the
 * point at f0, the vertices strictly between f0 and f1, the point at f1): a point between two
 * vertices takes the id of the vertex behind it at the start and ahead of it at the end (OSRM's
 * `nodes` lists the segment ends the leg drives on). Writes at most cap ids; returns the count. */
static size_t piece_ids(const gp_graph *g, const gp_osrm_piece *p, int64_t *out, size_t cap) {
    const double *sx, *sy;
    uint32_t u = p->tail, v = g->col[p->arc], ns = gp_graph_arc_shape(g, p->arc, &sx, &sy);
    size_t n = (size_t)ns + 2, k = 0;
    double *c = malloc(sizeof *c * n);
    if (!c || cap < 2) {
        free(c);
        return 0;
    }
    c[0] = 0;
    for (size_t i = 1; i < n; i++) {
        double x0 = i == 1 ? g->lon[u] : sx[i - 2], y0 = i == 1 ? g->lat[u] : sy[i - 2];
        double x1 = i == n - 1 ? g->lon[v] : sx[i - 1], y1 = i == n - 1 ? g->lat[v] : sy[i - 1];
        c[i] = c[i - 1] + gp_haversine_m(x0, y0, x1, y1);
    }
    double total = c[n - 1];
    if (total <= 0) {
        out[0] = vertex_id(g, p->arc, u, 0, ns);
        out[1] = vertex_id(g, p->arc, u, ns + 1, ns);
        free(c);
        return 2;
    }
    int fwd = p->f0 <= p->f1;
    for (int end = 0; end < 2; end++) {
        double f = end ? p->f1 : p->f0, t = f * total;
        size_t i = 1;
        while (i < n - 1 && c[i] < t) i++;
        double seg = c[i] - c[i - 1], r = seg > 0 ? (t - c[i - 1]) / seg : 0;
        /* behind at the start, ahead at the end, in the direction of travel */
        int ahead = end == fwd;
        size_t vtx = r >= 1 ? i : r <= 0 ? i - 1 : ahead ? i : i - 1;
        int64_t id = vertex_id(g, p->arc, u, (uint32_t)vtx, ns);
        if (!end) {
            out[k++] = id;
            double lo = fwd ? p->f0 : p->f1, hi = fwd ? p->f1 : p->f0;
            for (size_t j = 1; j + 1 < n; j++) {
                size_t x = fwd ? j : n - 1 - j;
                double fx = c[x] / total;
                if (fx > lo && fx < hi && k + 1 < cap) out[k++] = vertex_id(g, p->arc, u, x, ns);
            }
        } else {
            out[k++] = id;
        }
    }
    free(c);
    return k;
}

/* Appends x's tenths to arr as the difference of rounded running sums: entries are multiples of
 * 0.1 and add up to the rounded total exactly (the leg's own value). *run is the running sum. */
static void add_tenths(cJSON *arr, double *run, double x) {
    long long before = llround(*run * 10);
    *run += x;
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)(llround(*run * 10) - before) / 10));
}

static cJSON *annotation_json(const gp_osrm_req *q, const gp_osrm_leg *leg,
                              const gp_osrm_route_opts *o) {
    const gp_graph *g = q->g;
    const gp_pts *P = &leg->pts;
    cJSON *a = cJSON_CreateObject();
    cJSON *dur = o->ann_duration ? cJSON_AddArrayToObject(a, "duration") : NULL;
    cJSON *dist = o->ann_distance ? cJSON_AddArrayToObject(a, "distance") : NULL;
    cJSON *wt = o->ann_weight ? cJSON_AddArrayToObject(a, "weight") : NULL;
    cJSON *sp = o->ann_speed ? cJSON_AddArrayToObject(a, "speed") : NULL;
    cJSON *nodes = o->ann_nodes ? cJSON_AddArrayToObject(a, "nodes") : NULL;
    cJSON *ds = o->ann_datasources ? cJSON_AddArrayToObject(a, "datasources") : NULL;
    if (ds) {
        cJSON *md = cJSON_AddObjectToObject(a, "metadata");
        cJSON *dn = cJSON_AddArrayToObject(md, "datasource_names");
        cJSON_AddItemToArray(dn, cJSON_CreateString("profile"));
    }
    double run_t = 0, run_d = 0, run_w = 0;
    int64_t *ids = nodes ? calloc(P->n ? P->n : 1, sizeof *ids) : NULL, *tmp = NULL;
    for (size_t i = 0; i < leg->npc; i++) {
        const gp_osrm_piece *p = &leg->pc[i];
        double t = piece_duration(g, p), w = gp_osrm_weight(g, p->cost), len = 0;
        for (size_t k = p->p0; k < p->p1; k++)
            len += gp_haversine_m(P->lon[k], P->lat[k], P->lon[k + 1], P->lat[k + 1]);
        size_t nseg = p->p1 - p->p0;
        for (size_t k = p->p0; k < p->p1; k++) {
            /* the piece's duration, weight and length split by the segment's share of its
             * great-circle length (evenly when the piece has none) */
            double sl = gp_haversine_m(P->lon[k], P->lat[k], P->lon[k + 1], P->lat[k + 1]);
            double share = len > 0 ? sl / len : 1.0 / (double)nseg;
            if (dur) add_tenths(dur, &run_t, t * share);
            if (wt) add_tenths(wt, &run_w, w * share);
            if (dist) add_tenths(dist, &run_d, p->dist_m * share);
            if (sp)
                cJSON_AddItemToArray(
                    sp, cJSON_CreateNumber(t > 0 ? gp_round_unit(p->dist_m / t, 0.1) : 0));
            if (ds) cJSON_AddItemToArray(ds, cJSON_CreateNumber(0));
        }
        if (ids) {
            size_t want = p->p1 - p->p0 + 1;
            int64_t *nt = realloc(tmp, sizeof *tmp * (want + 2));
            if (!nt) continue;
            tmp = nt;
            size_t got = piece_ids(g, p, tmp, want + 2);
            for (size_t k = 0; k < want; k++) /* a count that differs: the ends' ids */
                ids[p->p0 + k] = got == want ? tmp[k]
                                 : k         ? gp_graph_orig_id(g, g->col[p->arc])
                                             : gp_graph_orig_id(g, p->tail);
        }
    }
    if (leg->npc == 0 && P->n >= 2) { /* both ends on one node: one segment of 0 */
        cJSON *arrs[] = {dur, dist, wt, sp, ds};
        for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++)
            if (arrs[k]) cJSON_AddItemToArray(arrs[k], cJSON_CreateNumber(0));
        if (ids) ids[0] = gp_graph_orig_id(g, leg->a->node);
        if (ids) ids[1] = gp_graph_orig_id(g, leg->b->node);
    }
    for (size_t k = 0; ids && k < P->n; k++)
        cJSON_AddItemToArray(nodes, cJSON_CreateNumber((double)ids[k]));
    free(ids);
    free(tmp);
    return a;
}

/* A leg's distance (metres), duration (seconds) and weight, unrounded. */
static void leg_sums(const gp_graph *g, const gp_osrm_leg *leg, double *ld, double *lt,
                     double *lw) {
    *ld = *lt = 0;
    for (size_t i = 0; i < leg->npc; i++) {
        *ld += leg->pc[i].dist_m;
        *lt += piece_duration(g, &leg->pc[i]);
    }
    if (leg->npc == 0) *lt = gp_cost_seconds(g, leg->cost);
    *lw = gp_osrm_weight(g, leg->cost);
}

/* The route's overview line into all (empty, appended to): the legs' lines joined, simplified
 * (Douglas-Peucker, tolerance total_dist / 2000, at least 1 m) for overview 1. */
static void overview_line(const gp_osrm_leg *legs, size_t nleg, int overview, double total_dist,
                          gp_pts *all) {
    for (size_t l = 0; l < nleg; l++)
        for (size_t i = 0; i < legs[l].pts.n; i++)
            gp_pts_add(all, legs[l].pts.lon[i], legs[l].pts.lat[i], l > 0 && i == 0);
    uint8_t *keep = overview == 1 && all->n > 2 ? malloc(all->n) : NULL;
    if (!keep) return;
    double tol = total_dist / 2000 > 1 ? total_dist / 2000 : 1;
    gp_simplify_dp(all->lon, all->lat, all->n, tol, keep);
    size_t k = 0;
    for (size_t i = 0; i < all->n; i++)
        if (keep[i]) {
            all->lon[k] = all->lon[i];
            all->lat[k] = all->lat[i];
            k++;
        }
    all->n = k;
    free(keep);
}

static int has_annotation(const gp_osrm_route_opts *o) {
    return o->ann_duration || o->ann_distance || o->ann_nodes || o->ann_speed || o->ann_weight ||
           o->ann_datasources;
}

cJSON *gp_osrm_route_json(const gp_osrm_req *q, const gp_osrm_leg *legs, size_t nleg,
                          const gp_osrm_route_opts *o) {
    const gp_graph *g = q->g;
    cJSON *route = cJSON_CreateObject();
    double total_dist = 0, total_dur = 0, total_w = 0;
    cJSON *legs_a = cJSON_CreateArray();
    for (size_t l = 0; l < nleg; l++) {
        const gp_osrm_leg *leg = &legs[l];
        double ld, lt, lw;
        leg_sums(g, leg, &ld, &lt, &lw);
        cJSON *lj = cJSON_CreateObject(); /* literal keys: gp_json_add_* (a match has many legs) */
        cJSON *steps = gp_json_add_array(lj, "steps");
        char summary[512] = "";
        if (o->steps) gp_osrm_leg_steps(q, leg, steps, summary, sizeof summary);
        gp_json_add_string(lj, "summary", summary);
        if (has_annotation(o)) cJSON_AddItemToObject(lj, "annotation", annotation_json(q, leg, o));
        gp_json_add_number(lj, "weight", gp_round_unit(lw, 0.1));
        gp_json_add_number(lj, "duration", gp_round_unit(lt, 0.1));
        gp_json_add_number(lj, "distance", gp_round_unit(ld, 0.1));
        cJSON_AddItemToArray(legs_a, lj);
        total_dist += ld;
        total_dur += lt;
        total_w += lw;
    }
    if (o->overview) {
        gp_pts all;
        memset(&all, 0, sizeof all);
        overview_line(legs, nleg, o->overview, total_dist, &all);
        cJSON_AddItemToObject(route, "geometry", gp_osrm_geometry_json(q, all.lon, all.lat, all.n));
        gp_pts_free(&all);
    }
    cJSON_AddItemToObject(route, "legs", legs_a);
    cJSON_AddStringToObject(route, "weight_name", gp_osrm_weight_name(g));
    cJSON_AddNumberToObject(route, "weight", gp_round_unit(total_w, 0.1));
    cJSON_AddNumberToObject(route, "duration", gp_round_unit(total_dur, 0.1));
    cJSON_AddNumberToObject(route, "distance", gp_round_unit(total_dist, 0.1));
    return route;
}

/* gp_osrm_geometry_json's text written straight. */
static void geometry_write(gp_json_out *b, const gp_osrm_req *q, const gp_pts *P) {
    if (q->geometries == GP_GEOM_GEOJSON) {
        gp_json_put_lit(b, "{\"type\":\"LineString\",\"coordinates\":[");
        for (size_t i = 0; i < P->n; i++) {
            if (i) gp_json_put_lit(b, ",");
            gp_json_put_lit(b, "[");
            gp_json_put_num(b, gp_round_unit(P->lon[i], 1e-6));
            gp_json_put_lit(b, ",");
            gp_json_put_num(b, gp_round_unit(P->lat[i], 1e-6));
            gp_json_put_lit(b, "]");
        }
        gp_json_put_lit(b, "]}");
        return;
    }
    char *s = gp_polyline_encode(P->lon, P->lat, P->n, q->geometries == GP_GEOM_POLYLINE6 ? 6 : 5);
    gp_json_put_str(b, s);
    free(s);
}

/* ,"weight":w,"duration":t,"distance":d in tenths (a leg's and a route's last members). */
static void totals_write(gp_json_out *b, double w, double t, double d) {
    gp_json_put_lit(b, ",\"weight\":");
    gp_json_put_num(b, gp_round_unit(w, 0.1));
    gp_json_put_lit(b, ",\"duration\":");
    gp_json_put_num(b, gp_round_unit(t, 0.1));
    gp_json_put_lit(b, ",\"distance\":");
    gp_json_put_num(b, gp_round_unit(d, 0.1));
}

void gp_osrm_route_write(gp_json_out *b, const gp_osrm_req *q, const gp_osrm_leg *legs, size_t nleg,
                         const gp_osrm_route_opts *o) {
    const gp_graph *g = q->g;
    double total_dist = 0, total_dur = 0, total_w = 0, ld, lt, lw;
    gp_json_put_lit(b, "{");
    if (o->overview) { /* the geometry comes first, its tolerance from the route's length */
        for (size_t l = 0; l < nleg; l++) {
            leg_sums(g, &legs[l], &ld, &lt, &lw);
            total_dist += ld;
        }
        gp_pts all;
        memset(&all, 0, sizeof all);
        overview_line(legs, nleg, o->overview, total_dist, &all);
        gp_json_put_lit(b, "\"geometry\":");
        geometry_write(b, q, &all);
        gp_json_put_lit(b, ",");
        gp_pts_free(&all);
        total_dist = 0;
    }
    gp_json_put_lit(b, "\"legs\":[");
    for (size_t l = 0; l < nleg; l++) {
        const gp_osrm_leg *leg = &legs[l];
        leg_sums(g, leg, &ld, &lt, &lw);
        char summary[512] = "";
        if (l) gp_json_put_lit(b, ",");
        gp_json_put_lit(b, "{\"steps\":");
        if (o->steps) {
            cJSON *steps = cJSON_CreateArray();
            if (steps) gp_osrm_leg_steps(q, leg, steps, summary, sizeof summary);
            gp_json_put_tree(b, steps);
            cJSON_Delete(steps);
        } else {
            gp_json_put_lit(b, "[]");
        }
        gp_json_put_lit(b, ",\"summary\":");
        gp_json_put_str(b, summary);
        if (has_annotation(o)) {
            cJSON *a = annotation_json(q, leg, o);
            gp_json_put_lit(b, ",\"annotation\":");
            gp_json_put_tree(b, a);
            cJSON_Delete(a);
        }
        totals_write(b, lw, lt, ld);
        gp_json_put_lit(b, "}");
        total_dist += ld;
        total_dur += lt;
        total_w += lw;
    }
    gp_json_put_lit(b, "],\"weight_name\":");
    gp_json_put_str(b, gp_osrm_weight_name(g));
    totals_write(b, total_w, total_dur, total_dist);
}
