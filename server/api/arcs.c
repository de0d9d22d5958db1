/* arcs.c - where answers meet a graph's arcs (contract in arcs.h): the points of an arc between
 * two fractions of its length, the projection of a coordinate onto an arc, and OSRM's snapping
 * rule that a route should not start or end on a road cut off from the network.
 *
 * The rule: a coordinate whose nearest segment lies outside the graph's big strongly connected
 * components (a private parking loop, a one-way stub, a fragment cut by the extract's border)
 * snaps instead to the nearest segment inside one, when one lies within the radius (as
 * osrm-routed does with its "big component" phantom nodes). Big means at least 1000 nodes, OSRM's
 * --small-component-size default; on a map where no component is that big every coordinate keeps
 * its nearest road (as OSRM: its big-component search then finds nothing). Without this, random
 * coordinates in Monaco fail with NoRoute one time in ten; with it, as with OSRM, almost never.
 * The OSRM services add OSRM's other half of the rule (server/osrm/request.c): when every
 * coordinate's nearest road lies in one and the same small component, all keep it. The components (graph/scc.h) are computed once per graph version and kept in a
 * small cache keyed by the graph's pointer and content hash, under a mutex; a graph freed and
 * replaced by another at the same address with the same hash has the same components. Versions
 * that differ in weights only (gp_graph_reweight: PATCH .../links) share their base's entry.
 */
#include "server/api/arcs.h"

#include "graph/scc.h"
#include "graph/spatial.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The arc's polyline: tail u (GP_NONE: looked up), shape points, head. */
static int arc_line(const gp_graph *g, uint32_t arc, uint32_t u, gp_pts *p) {
    if (u == GP_NONE) u = gp_graph_arc_tail(g, arc);
    uint32_t v = g->col[arc];
    const double *sx, *sy;
    uint32_t k = gp_graph_arc_shape(g, arc, &sx, &sy);
    if (gp_pts_add(p, g->lon[u], g->lat[u], 0)) return -1;
    for (uint32_t i = 0; i < k; i++)
        if (gp_pts_add(p, sx[i], sy[i], 0)) return -1;
    return gp_pts_add(p, g->lon[v], g->lat[v], 0);
}

/* Cumulative lengths of a polyline (cum[0] = 0), malloc'd; NULL when out of memory. */
static double *cum_len(const gp_pts *p) {
    double *c = malloc(sizeof *c * (p->n ? p->n : 1));
    if (!c) return NULL;
    c[0] = 0;
    for (size_t i = 1; i < p->n; i++)
        c[i] = c[i - 1] + gp_haversine_m(p->lon[i - 1], p->lat[i - 1], p->lon[i], p->lat[i]);
    return c;
}

/* Point at fraction f of the polyline's length. */
static void at_frac(const gp_pts *p, const double *c, double f, double *x, double *y) {
    double total = c[p->n - 1], t = f * total;
    size_t i = 1;
    while (i < p->n - 1 && c[i] < t) i++;
    double seg = c[i] - c[i - 1], r = seg > 0 ? (t - c[i - 1]) / seg : 0;
    if (r < 0) r = 0;
    if (r > 1) r = 1;
    *x = p->lon[i - 1] + r * (p->lon[i] - p->lon[i - 1]);
    *y = p->lat[i - 1] + r * (p->lat[i] - p->lat[i - 1]);
}

int gp_arc_points_from(const gp_graph *g, uint32_t arc, uint32_t u, double f0, double f1,
                       gp_pts *out) {
    gp_pts line;
    memset(&line, 0, sizeof line);
    double *c = NULL;
    int rc = -1;
    if (arc_line(g, arc, u, &line) || !(c = cum_len(&line))) goto done;
    double total = c[line.n - 1], x, y;
    if (total <= 0) { /* a zero-length arc: its two (equal) ends */
        rc = gp_pts_add(out, line.lon[0], line.lat[0], 0) ||
                     gp_pts_add(out, line.lon[line.n - 1], line.lat[line.n - 1], 0)
                 ? -1
                 : 0;
        goto done;
    }
    at_frac(&line, c, f0, &x, &y);
    if (gp_pts_add(out, x, y, 0)) goto done;
    double lo = f0 < f1 ? f0 : f1, hi = f0 < f1 ? f1 : f0;
    for (size_t k = 1; k + 1 < line.n; k++) {
        size_t i = f0 <= f1 ? k : line.n - 1 - k;
        double fi = c[i] / total;
        if (fi > lo && fi < hi && gp_pts_add(out, line.lon[i], line.lat[i], 0)) goto done;
    }
    at_frac(&line, c, f1, &x, &y);
    rc = gp_pts_add(out, x, y, 0);
done:
    free(c);
    gp_pts_free(&line);
    return rc;
}

int gp_arc_points(const gp_graph *g, uint32_t arc, double f0, double f1, gp_pts *out) {
    return gp_arc_points_from(g, arc, GP_NONE, f0, f1, out);
}

void gp_arc_project(const gp_graph *g, uint32_t arc, double lon, double lat, gp_snap *s) {
    memset(s, 0, sizeof *s);
    s->qlon = lon;
    s->qlat = lat;
    s->arc = arc;
    s->rarc = GP_NONE;
    gp_pts line;
    memset(&line, 0, sizeof line);
    double *c = NULL;
    uint32_t u = gp_graph_arc_tail(g, arc), v = g->col[arc];
    s->node = u;
    s->lon = g->lon[u];
    s->lat = g->lat[u];
    s->dist_m = gp_haversine_m(lon, lat, s->lon, s->lat);
    if (arc_line(g, arc, u, &line) || !(c = cum_len(&line))) goto done;
    double best = INFINITY, total = c[line.n - 1];
    double kx = cos(lat * M_PI / 180);
    for (size_t i = 1; i < line.n; i++) {
        double ax = line.lon[i - 1], ay = line.lat[i - 1], bx = line.lon[i], by = line.lat[i];
        double dx = (bx - ax) * kx, dy = by - ay, px = (lon - ax) * kx, py = lat - ay;
        double l2 = dx * dx + dy * dy, t = l2 > 0 ? (px * dx + py * dy) / l2 : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        double x = ax + t * (bx - ax), y = ay + t * (by - ay);
        double d = gp_haversine_m(lon, lat, x, y);
        if (d < best) {
            best = d;
            s->lon = x;
            s->lat = y;
            s->dist_m = d;
            double along = c[i - 1] + t * (c[i] - c[i - 1]);
            s->frac = total > 0 ? along / total : 0;
        }
    }
    s->node = s->frac <= 0.5 ? u : v;
done:
    free(c);
    gp_pts_free(&line);
}

enum { CACHE = 8 };
static struct {
    const gp_graph *g;
    uint64_t hash;
    uint32_t *comp;
    uint8_t *big;
    uint64_t used;
} cache[CACHE];
static uint64_t tick;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* OSRM's --small-component-size default: strongly connected components with fewer nodes are
 * avoided when snapping, when a bigger one is within reach. */
#define SMALL_COMPONENT 1000

/* comp[] and big[] of g, computed now when the cache has none (out of memory: 0). */
static int components(const gp_graph *g, uint32_t *n_out, uint32_t **comp_out, uint8_t **big_out) {
    uint32_t n = g->n, count = 0;
    uint32_t *comp = malloc(sizeof *comp * (n ? n : 1)), *size = malloc(sizeof *size * (n ? n : 1));
    uint8_t *big = calloc(n ? n : 1, 1);
    gp_err err;
    int ok = comp && size && big && gp_graph_scc(g, comp, size, &count, &err) == GP_OK;
    for (uint32_t v = 0; ok && v < n; v++) big[v] = size[comp[v]] >= SMALL_COMPONENT;
    free(size);
    if (!ok) {
        free(comp);
        free(big);
        return 0;
    }
    *n_out = n;
    *comp_out = comp;
    *big_out = big;
    return 1;
}

/* The cached arrays of g (valid while the cache entry lives: callers hold the mutex only while
 * looking it up, so entries are never freed, only reused for another graph after CACHE newer
 * graphs; a request in flight that long is not a concern for 8 entries of distinct graph
 * versions). */
int gp_snap_components(const gp_graph *g, const uint32_t **comp, const uint8_t **big) {
    g = gp_graph_owner(g); /* a reweighted version has its base's arcs, so its components */
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < CACHE && slot < 0; i++)
        if (cache[i].g == g && cache[i].hash == g->hash && cache[i].big) slot = i;
    if (slot < 0) {
        uint32_t n, *c;
        uint8_t *b;
        if (!components(g, &n, &c, &b)) {
            pthread_mutex_unlock(&mu);
            return 0;
        }
        slot = 0;
        for (int i = 1; i < CACHE; i++)
            if (cache[i].used < cache[slot].used) slot = i;
        free(cache[slot].big);
        free(cache[slot].comp);
        cache[slot].g = g;
        cache[slot].hash = g->hash;
        cache[slot].big = b;
        cache[slot].comp = c;
    }
    cache[slot].used = ++tick;
    *comp = cache[slot].comp;
    *big = cache[slot].big;
    pthread_mutex_unlock(&mu);
    return 1;
}

int gp_snap_in_big(const gp_graph *g, const gp_snap *s, const uint8_t *big) {
    return s->arc != GP_NONE ? big[gp_graph_arc_tail(g, s->arc)] && big[g->col[s->arc]]
                             : big[s->node];
}

int gp_snap_big_filter(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                       double a_lat, double b_lon, double b_lat) {
    const uint8_t *big = ctx;
    (void)a_lon, (void)a_lat, (void)b_lon, (void)b_lat;
    return big[tail] && big[g->col[arc]];
}

int gp_snap_big(const gp_graph *g, gp_snap *s, double radius_m) {
    const uint32_t *comp;
    const uint8_t *big;
    if (!gp_snap_components(g, &comp, &big) || gp_snap_in_big(g, s, big)) return 0;
    gp_snap best;
    gp_err err;
    if (gp_snap_point_if(g, s->qlon, s->qlat, radius_m, gp_snap_big_filter, (void *)big, &best,
                         &err) != GP_OK)
        return 0; /* no big component within reach: the nearest road stays */
    *s = best;
    return 1;
}

void gp_arc_bbox(const gp_graph *g, uint32_t arc, uint32_t u, double box[4]) {
    const double *sx, *sy;
    uint32_t k = gp_graph_arc_shape(g, arc, &sx, &sy), v = g->col[arc];
    box[0] = fmin(g->lon[u], g->lon[v]);
    box[2] = fmax(g->lon[u], g->lon[v]);
    box[1] = fmin(g->lat[u], g->lat[v]);
    box[3] = fmax(g->lat[u], g->lat[v]);
    for (uint32_t i = 0; i < k; i++) {
        box[0] = fmin(box[0], sx[i]);
        box[2] = fmax(box[2], sx[i]);
        box[1] = fmin(box[1], sy[i]);
        box[3] = fmax(box[3], sy[i]);
    }
}
