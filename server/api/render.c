/* render.c - JSON rendering of query answers (see render.h for the shapes and conventions).
 *
 * Two paths produce the same JSON: cJSON trees for small answers that callers may extend, and a
 * growing text buffer for big matrices / trees (10^6+ numbers), which cJSON renders slowly.
 * Numbers are formatted here in one place (dist_str / id_str) so both paths agree digit for digit.
 */
#include "server/api/render.h"

#include "graph/spatial.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Largest integer a double holds exactly: beyond it numbers go through cJSON raw text. */
#define EXACT_DOUBLE_INT 9007199254740992.0

/* Decimal digits of v into buf (size >= 21); the same text as "%" PRIu64, without printf's cost,
 * which dominated rendering large (cached) tables. Two digits per division, 32-bit arithmetic
 * for the common values below 2^32. */
static const char DIGITS2[] = "00010203040506070809101112131415161718192021222324252627282930313233"
                              "34353637383940414243444546474849505152535455565758596061626364656667"
                              "6869707172737475767778798081828384858687888990919293949596979899";
static int u64_str(uint64_t v, char *buf) {
    /* count the digits first, then write them in place from the end: no temporary to copy */
    int n = 1;
    for (uint64_t q = v; q >= 10; q /= 10) n++;
    char *p = buf + n;
    *p = 0;
    while (v > UINT32_MAX) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, DIGITS2 + 2 * r, 2);
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        uint32_t r = w % 100;
        w /= 100;
        p -= 2;
        memcpy(p, DIGITS2 + 2 * r, 2);
    }
    if (w >= 10) {
        p -= 2;
        memcpy(p, DIGITS2 + 2 * w, 2);
    } else {
        *--p = (char)('0' + w);
    }
    return n;
}

int gp_render_dist_str(const gp_graph *g, uint64_t d, char *buf, size_t size) {
    if (d == GP_INF) return snprintf(buf, size, "null");
    if (size >= 21 && g->scale == 1.0) return u64_str(d, buf);
    /* a whole number of input units below 1e15 prints as its digits under %.15g too */
    uint64_t sc = (uint64_t)g->scale;
    if (size >= 21 && g->scale >= 1.0 && (double)sc == g->scale && d % sc == 0 &&
        d / sc < 1000000000000000ull)
        return u64_str(d / sc, buf);
    double v = (double)d / g->scale;
    /* shortest of %.15g / %.17g that reads back to the same double */
    int len = snprintf(buf, size, "%.15g", v);
    if (strtod(buf, NULL) != v) len = snprintf(buf, size, "%.17g", v);
    return len;
}

/* |v| without an unsigned wrap (INT64_MIN included). */
static inline uint64_t mag64(int64_t v) { return v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v; }

static int id_str(const gp_graph *g, uint32_t v, char *buf, size_t size) {
    if (v == GP_NONE || v >= g->n) return snprintf(buf, size, "null");
    int64_t id = gp_graph_orig_id(g, v);
    if (size < 22) return snprintf(buf, size, "%" PRId64, id);
    if (id >= 0) return u64_str((uint64_t)id, buf);
    buf[0] = '-';
    return 1 + u64_str(mag64(id), buf + 1);
}

void gp_render_iso8601(double t, char *buf, size_t size) {
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---------------------------------------------------------------------------------------------
 * Text writer */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static int sb_reserve(sbuf *b, size_t more) {
    if (b->oom) return 0;
    if (b->len + more + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (!sb_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_dist(sbuf *b, const gp_graph *g, uint64_t d) {
    char buf[40];
    int n = gp_render_dist_str(g, d, buf, sizeof buf);
    sb_put(b, buf, (size_t)n);
}

static void sb_id(sbuf *b, const gp_graph *g, uint32_t v) {
    char buf[32];
    int n = id_str(g, v, buf, sizeof buf);
    sb_put(b, buf, (size_t)n);
}

static void sb_ids(sbuf *b, const gp_graph *g, const uint32_t *v, uint32_t k) {
    sb_str(b, "[");
    for (uint32_t i = 0; i < k; i++) {
        if (i) sb_str(b, ",");
        sb_id(b, g, v ? v[i] : i);
    }
    sb_str(b, "]");
}

/* ---------------------------------------------------------------------------------------------
 * Raw arrays: the text cJSON prints for an array of numbers, written directly into one raw item.
 * Documents that are only printed (the route answer) use them for their long arrays (path,
 * geometry), where an item, a malloc and a printf plus sscanf (cJSON's round-trip check) per
 * number took half of a route request's CPU time
 * (bench/results/2026-11-25-cpu2-AMD-EPYC-http-route-profile.md). The common numbers are written
 * here digit for digit as cJSON would; the others go through cJSON itself, so the text is always
 * cJSON's (tests/test_render_snap.c compares both forms). */

/* A number as cJSON prints it, through cJSON. */
static void sb_cjson_num(sbuf *b, double d) {
    cJSON *x = cJSON_CreateNumber(d);
    char *t = x ? cJSON_PrintUnformatted(x) : NULL;
    if (t) sb_str(b, t);
    else b->oom = 1;
    cJSON_free(t);
    cJSON_Delete(x);
}

/* gp_render_node's item as text: ids under 10^15 in magnitude print as their digits (cJSON's
 * %1.15g of an integer), as does an id past 2^53 (gp_render_node's raw text). */
static void sb_node(sbuf *b, const gp_graph *g, uint32_t v) {
    if (v != GP_NONE && v < g->n) {
        int64_t id = gp_graph_orig_id(g, v);
        if ((id <= -1000000000000000ll || id >= 1000000000000000ll) &&
            fabs((double)id) < EXACT_DOUBLE_INT) {
            sb_cjson_num(b, (double)id);
            return;
        }
    }
    sb_id(b, g, v);
}

/* A coordinate rounded to 6 decimals (gp_round6) as cJSON prints it. When d is the double nearest
 * k / 10^6 for an integer k and 10^-4 <= |d| < 10^9, %1.15g rounds d back to that decimal (k has
 * at most 15 digits; d is within half an ulp of it) and prints it without an exponent and without
 * trailing zeros, and it reads back as d, so cJSON keeps it; anything else goes through cJSON. */
static void sb_coord(sbuf *b, double d) {
    double a = fabs(d);
    if (!(a >= 1e-4 && a < 1e9)) {
        sb_cjson_num(b, d);
        return;
    }
    long long k = llround(d * 1e6);
    if ((double)k / 1e6 != d) {
        sb_cjson_num(b, d);
        return;
    }
    char buf[40], *p = buf;
    uint64_t u = mag64(k);
    if (k < 0) *p++ = '-';
    p += u64_str(u / 1000000, p);
    uint32_t f = (uint32_t)(u % 1000000);
    if (f) {
        *p++ = '.';
        for (uint32_t div = 100000; f; div /= 10) {
            *p++ = (char)('0' + f / div);
            f %= div;
        }
    }
    sb_put(b, buf, (size_t)(p - buf));
}

/* d as cJSON prints it, fast when d is the double nearest k / 10 for an integer k (what
 * gp_round_unit(x, 0.1) gives) and 10^-4 <= |d| < 10^14: as in sb_coord, %1.15g then prints that
 * decimal without an exponent or trailing zeros and it reads back as d; 0 is "0". */
static void sb_tenths(sbuf *b, double d) {
    if (d == 0) {
        sb_put(b, "0", 1);
        return;
    }
    double a = fabs(d);
    long long k = a >= 1e-4 && a < 1e14 ? llround(d * 10) : 0;
    if (!k || (double)k / 10 != d) {
        sb_cjson_num(b, d);
        return;
    }
    char buf[40], *p = buf;
    uint64_t u = mag64(k);
    if (k < 0) *p++ = '-';
    p += u64_str(u / 10, p);
    if (u % 10) {
        *p++ = '.';
        *p++ = (char)('0' + u % 10);
    }
    sb_put(b, buf, (size_t)(p - buf));
}

cJSON *gp_render_number_row(const double *v, uint32_t n) {
    sbuf b = {0};
    sb_str(&b, "[");
    for (uint32_t i = 0; i < n; i++) {
        if (i) sb_str(&b, ",");
        if (isnan(v[i])) sb_str(&b, "null");
        else sb_tenths(&b, v[i]);
    }
    sb_str(&b, "]");
    cJSON *x = b.oom ? NULL : cJSON_CreateRaw(b.p);
    free(b.p);
    return x;
}

/* The node ids v[0..k-1] as one raw JSON array (NULL: out of memory). Ids under 10^15 in
 * magnitude (all but the rarest) are written straight into room reserved for the longest. */
static cJSON *raw_nodes(const gp_graph *g, const uint32_t *v, uint32_t k) {
    enum { ROOM = 22 }; /* '-', 20 digits, ',' */
    sbuf b = {0};
    if (!sb_reserve(&b, (size_t)k * ROOM + 2)) return NULL;
    char *p = b.p;
    *p++ = '[';
    for (uint32_t i = 0; i < k; i++) {
        if (i) *p++ = ',';
        int64_t id = v[i] < g->n ? gp_graph_orig_id(g, v[i]) : 0;
        if (v[i] < g->n && id > -1000000000000000ll && id < 1000000000000000ll) {
            if (id < 0) *p++ = '-';
            p += u64_str(mag64(id), p);
            continue;
        }
        b.len = (size_t)(p - b.p);
        sb_node(&b, g, v[i]);
        if (!sb_reserve(&b, (size_t)(k - i) * ROOM + 2)) {
            free(b.p);
            return NULL;
        }
        p = b.p + b.len;
    }
    *p++ = ']';
    *p = '\0';
    cJSON *x = cJSON_CreateRaw(b.p);
    free(b.p);
    return x;
}

/* ---------------------------------------------------------------------------------------------
 * cJSON builders */

cJSON *gp_render_dist(const gp_graph *g, uint64_t d) {
    if (d == GP_INF) return cJSON_CreateNull();
    if (g->scale == 1.0) {
        if ((double)d <= EXACT_DOUBLE_INT) return cJSON_CreateNumber((double)d);
        char buf[32];
        gp_render_dist_str(g, d, buf, sizeof buf);
        return cJSON_CreateRaw(buf);
    }
    /* cJSON prints the same shortest round-tripping form as dist_str */
    return cJSON_CreateNumber((double)d / g->scale);
}

cJSON *gp_render_node(const gp_graph *g, uint32_t v) {
    if (v == GP_NONE || v >= g->n) return cJSON_CreateNull();
    /* original ids: a node copied for turn restrictions (OSM) reports its original's id */
    int64_t id = gp_graph_orig_id(g, v);
    if (fabs((double)id) < EXACT_DOUBLE_INT) return cJSON_CreateNumber((double)id);
    char buf[32];
    id_str(g, v, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

/* Adds item to parent (object when name, else array); returns 0 when item is NULL. */
static int put(cJSON *parent, const char *name, cJSON *item) {
    if (!item) return 0;
    if (name) cJSON_AddItemToObject(parent, name, item);
    else cJSON_AddItemToArray(parent, item);
    return 1;
}

cJSON *gp_render_route(const gp_graph *g, uint32_t from, uint32_t to, const gp_path *p) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int ok = put(o, "from", gp_render_node(g, from)) && put(o, "to", gp_render_node(g, to)) &&
             put(o, "weight", gp_render_dist(g, p ? p->dist : GP_INF)) &&
             cJSON_AddStringToObject(o, "weight_unit", g->unit_name) != NULL;
    /* distance: metres along the arcs, where the graph has lon/lat */
    double metres = p && p->dist != GP_INF && g->lon && g->lat ? 0 : NAN;
    for (uint32_t i = 1; ok && isfinite(metres) && i < p->len; i++) {
        uint32_t arc = gp_graph_find_arc(g, p->nodes[i - 1], p->nodes[i]);
        metres += arc != GP_NONE ? gp_graph_arc_length_m(g, arc) : NAN;
    }
    if (ok && isfinite(metres))
        ok = cJSON_AddNumberToObject(o, "distance", gp_round2(metres)) != NULL;
    cJSON *path = ok ? cJSON_CreateArray() : NULL;
    ok = ok && put(o, "path", path);
    uint32_t len = p && p->dist != GP_INF ? p->len : 0;
    for (uint32_t i = 0; ok && i < len; i++) ok = put(path, NULL, gp_render_node(g, p->nodes[i]));
    if (ok && g->lon && g->lat) {
        cJSON *geom = cJSON_CreateObject();
        ok = put(o, "geometry", geom) &&
             cJSON_AddStringToObject(geom, "type", "LineString") != NULL;
        cJSON *coords = ok ? cJSON_CreateArray() : NULL;
        ok = ok && put(geom, "coordinates", coords);
        for (uint32_t i = 0; ok && i < len; i++) {
            uint32_t v = p->nodes[i];
            double ll[2] = {g->lon[v], g->lat[v]};
            ok = put(coords, NULL, cJSON_CreateDoubleArray(ll, 2));
        }
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gp_render_sssp(const gp_graph *g, uint32_t src, const uint64_t *dist, const uint32_t *pred) {
    cJSON *o = cJSON_CreateObject();
    cJSON *nodes = cJSON_CreateArray(), *dists = cJSON_CreateArray(), *preds = cJSON_CreateArray();
    uint32_t reached = 0;
    int ok = o && nodes && dists && preds && put(o, "source", gp_render_node(g, src));
    for (uint32_t v = 0; ok && v < g->n; v++) {
        if (dist[v] == GP_INF) continue;
        reached++;
        ok = put(nodes, NULL, gp_render_node(g, v)) &&
             put(dists, NULL, gp_render_dist(g, dist[v])) &&
             put(preds, NULL, gp_render_node(g, pred ? pred[v] : GP_NONE));
    }
    if (ok) {
        ok = cJSON_AddNumberToObject(o, "reached", reached) != NULL;
        cJSON_AddItemToObject(o, "nodes", nodes);
        cJSON_AddItemToObject(o, "weights", dists);
        cJSON_AddItemToObject(o, "predecessors", preds);
        if (ok) return o;
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_Delete(o);
    cJSON_Delete(nodes);
    cJSON_Delete(dists);
    cJSON_Delete(preds);
    return NULL;
}

static cJSON *id_array(const gp_graph *g, const uint32_t *v, uint32_t k) {
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; a && i < k; i++)
        if (!put(a, NULL, gp_render_node(g, v[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

/* rows x cols matrix of weights as an array of arrays. */
static cJSON *dist_matrix(const gp_graph *g, const uint64_t *d, uint32_t rows, uint32_t cols) {
    cJSON *m = cJSON_CreateArray();
    int ok = m != NULL;
    for (uint32_t i = 0; ok && i < rows; i++) {
        cJSON *r = cJSON_CreateArray();
        ok = put(m, NULL, r);
        for (uint32_t j = 0; ok && j < cols; j++)
            ok = put(r, NULL, gp_render_dist(g, d[(size_t)i * cols + j]));
    }
    if (!ok) {
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}

cJSON *gp_render_table(const gp_graph *g, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                       uint32_t nt, const uint64_t *dist) {
    cJSON *o = cJSON_CreateObject();
    int ok = o && put(o, "sources", id_array(g, src, ns)) &&
             put(o, "targets", id_array(g, dst, nt)) &&
             put(o, "weights", dist_matrix(g, dist, ns, nt));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gp_render_apsp(const gp_graph *g, const uint64_t *dist, const uint32_t *next) {
    cJSON *o = cJSON_CreateObject();
    cJSON *nodes = cJSON_CreateArray();
    int ok = o && put(o, "nodes", nodes);
    for (uint32_t v = 0; ok && v < g->n; v++) ok = put(nodes, NULL, gp_render_node(g, v));
    ok = ok && put(o, "weights", dist_matrix(g, dist, g->n, g->n));
    if (ok && next) {
        cJSON *m = cJSON_CreateArray();
        ok = put(o, "next_hops", m);
        for (uint32_t i = 0; ok && i < g->n; i++) {
            cJSON *r = cJSON_CreateArray();
            ok = put(m, NULL, r);
            for (uint32_t j = 0; ok && j < g->n; j++)
                ok = put(r, NULL, gp_render_node(g, next[(size_t)i * g->n + j]));
        }
    }
    if (!ok) {
        if (!o) cJSON_Delete(nodes);
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gp_render_graph_info(const gp_graph *g, const char *name) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    char ts[32];
    gp_render_iso8601(g->loaded_at, ts, sizeof ts);
    int ok = cJSON_AddStringToObject(o, "name", name ? name : "") &&
             cJSON_AddNumberToObject(o, "nodes", g->n) &&
             cJSON_AddNumberToObject(o, "edges", g->m) &&
             cJSON_AddStringToObject(o, "version", g->version) &&
             cJSON_AddStringToObject(o, "data_version", g->version) &&
             cJSON_AddStringToObject(o, "source", g->source) &&
             cJSON_AddStringToObject(o, "format", g->format) &&
             cJSON_AddBoolToObject(o, "has_coordinates", g->lon != NULL && g->lat != NULL) &&
             cJSON_AddNumberToObject(o, "memory_bytes", (double)gp_graph_memory(g)) &&
             cJSON_AddNumberToObject(o, "scale", g->scale) &&
             cJSON_AddStringToObject(o, "loaded_at", ts) &&
             cJSON_AddStringToObject(o, "weight_unit", g->unit_name);
    /* the cost rule: seconds per unit for travel times, the routing profile of OSM imports */
    if (ok && g->unit_s > 0) ok = cJSON_AddNumberToObject(o, "unit_s", g->unit_s) != NULL;
    if (ok && g->profile[0]) ok = cJSON_AddStringToObject(o, "profile", g->profile) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gp_render_error(int code, const char *message) {
    return gp_render_error_doc(gp_status_name(code), message);
}

void gp_render_node_desc(char *buf, size_t size, int64_t id) {
    snprintf(buf, size, "node %" PRId64, id);
}

void gp_render_no_route_msg(char *buf, size_t size, const char *from, const char *to,
                            const char *graph) {
    snprintf(buf, size, "no route from %s to %s in graph '%s'", from, to, graph ? graph : "");
}

cJSON *gp_render_no_route(const char *from, const char *to, const char *graph) {
    char msg[1200];
    gp_render_no_route_msg(msg, sizeof msg, from, to, graph);
    return gp_render_error_doc(gp_status_name(GP_ENOROUTE), msg);
}

int gp_render_nearest_add(cJSON *o, const gp_graph *g, double lon, double lat,
                          const uint32_t *nodes, const double *metres, int n, const gp_snap *way) {
    cJSON *arr = NULL, *w = NULL;
    if (!o || !cJSON_AddNumberToObject(o, "lon", lon) || !cJSON_AddNumberToObject(o, "lat", lat) ||
        !(arr = cJSON_AddArrayToObject(o, "nodes")))
        return -1;
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject(), *id = gp_render_node(g, nodes[i]);
        if (!e || !id || !cJSON_AddItemToObject(e, "id", id) ||
            !cJSON_AddNumberToObject(e, "distance_m", gp_round2(metres[i])) ||
            !cJSON_AddNumberToObject(e, "lon", gp_round6(g->lon[nodes[i]])) ||
            !cJSON_AddNumberToObject(e, "lat", gp_round6(g->lat[nodes[i]])) ||
            !cJSON_AddItemToArray(arr, e)) {
            if (e && !id) cJSON_Delete(e);
            return -1;
        }
    }
    /* the nearest point of the road network, where a route from (lon, lat) would start */
    w = way ? gp_render_waypoint(g, way) : cJSON_CreateNull();
    return w && cJSON_AddItemToObject(o, "waypoint", w) ? 0 : -1;
}

/* ---------------------------------------------------------------------------------------------
 * Snapped queries: waypoints, routes between positions */

double gp_round6(double x) { return isfinite(x) ? round(x * 1e6) / 1e6 : x; }
double gp_round2(double x) { return isfinite(x) ? round(x * 1e2) / 1e2 : x; }

static cJSON *lonlat(double lon, double lat) {
    double ll[2] = {gp_round6(lon), gp_round6(lat)};
    return cJSON_CreateDoubleArray(ll, 2);
}

cJSON *gp_render_waypoint(const gp_graph *g, const gp_snap *s) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int has = isfinite(s->lon) && isfinite(s->lat);
    int ok = put(o, "location", has ? lonlat(s->lon, s->lat) : cJSON_CreateNull()) &&
             put(o, "node", gp_render_node(g, s->node)) &&
             cJSON_AddNumberToObject(o, "distance_m", gp_round2(s->dist_m)) != NULL;
    const char *name = s->arc != GP_NONE ? gp_graph_arc_name(g, s->arc) : NULL;
    if (ok && name) ok = cJSON_AddStringToObject(o, "name", name) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Position of s along arc a (0 at its tail), for a == s->arc or its opposite s->rarc. */
static double frac_on(const gp_snap *s, uint32_t a) { return a == s->arc ? s->frac : 1 - s->frac; }

/* Where the points of a route geometry go: [lon, lat] items of the cJSON array arr, or (arr NULL)
 * their text into sb, as cJSON would print them (a raw array, see sb_coord). */
typedef struct pts {
    cJSON *arr;
    sbuf *sb;
    uint32_t n;
} pts;

static int pts_put(pts *p, double lon, double lat) {
    if (p->arr) return put(p->arr, NULL, lonlat(lon, lat));
    sb_str(p->sb, p->n++ ? ",[" : "[[");
    sb_coord(p->sb, gp_round6(lon));
    sb_str(p->sb, ",");
    sb_coord(p->sb, gp_round6(lat));
    sb_str(p->sb, "]");
    return !p->sb->oom;
}

/* Appends the shape points of arc a whose position along it lies in (f0, f1) to coords. */
static int shape_between(const gp_graph *g, uint32_t a, double f0, double f1, pts *coords) {
    const double *sx, *sy;
    uint32_t k = gp_graph_arc_shape(g, a, &sx, &sy);
    if (!k) return 1;
    uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
    double total = gp_haversine_m(sx[k - 1], sy[k - 1], g->lon[v], g->lat[v]), at = 0;
    double px = g->lon[u], py = g->lat[u];
    for (uint32_t i = 0; i < k; i++) {
        total += gp_haversine_m(px, py, sx[i], sy[i]);
        px = sx[i];
        py = sy[i];
    }
    px = g->lon[u];
    py = g->lat[u];
    for (uint32_t i = 0; i < k; i++) {
        at += gp_haversine_m(px, py, sx[i], sy[i]);
        px = sx[i];
        py = sy[i];
        double f = total > 0 ? at / total : 0;
        if (f > f0 && f < f1 && !pts_put(coords, sx[i], sy[i])) return 0;
    }
    return 1;
}

/* Geometry of a snapped route: from a's position along first_arc, the path with each arc's shape
 * points, along last_arc to b's position. raw: the coordinates as one raw array (raw_nodes). */
static cJSON *snap_geometry(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                            const gp_snap_route *r, int raw) {
    sbuf sb = {0};
    pts pc = {raw ? NULL : cJSON_CreateArray(), &sb, 0}, *coords = &pc;
    cJSON *geom = cJSON_CreateObject();
    int ok = geom && (raw || pc.arr) && cJSON_AddStringToObject(geom, "type", "LineString");
    if (ok && !raw) ok = put(geom, "coordinates", pc.arr);
    if (!ok) {
        if (!geom || !cJSON_GetObjectItem(geom, "coordinates")) cJSON_Delete(pc.arr);
        cJSON_Delete(geom);
        return NULL;
    }
    if (raw) sb_reserve(&sb, ((size_t)r->path.len + 2) * 24);
    if (r->first_arc != GP_NONE) ok = pts_put(coords, a->lon, a->lat);
    if (ok && r->path.len == 0 && r->first_arc != GP_NONE) {
        double f0 = frac_on(a, r->first_arc), f1 = frac_on(b, r->first_arc);
        ok = shape_between(g, r->first_arc, f0, f1, coords);
    } else if (ok && r->first_arc != GP_NONE) {
        ok = shape_between(g, r->first_arc, frac_on(a, r->first_arc), 2, coords);
    }
    for (uint32_t i = 0; ok && i < r->path.len; i++) {
        uint32_t v = r->path.nodes[i];
        if (i) {
            uint32_t arc = r->arcs ? r->arcs[i - 1] : gp_graph_find_arc(g, r->path.nodes[i - 1], v);
            if (arc != GP_NONE) ok = shape_between(g, arc, -1, 2, coords);
        }
        ok = ok && pts_put(coords, g->lon[v], g->lat[v]);
    }
    if (ok && r->path.len && r->last_arc != GP_NONE)
        ok = shape_between(g, r->last_arc, -1, frac_on(b, r->last_arc), coords);
    if (ok && r->last_arc != GP_NONE) ok = pts_put(coords, b->lon, b->lat);
    if (ok && raw) {
        sb_str(&sb, pc.n ? "]" : "[]");
        ok = !sb.oom && put(geom, "coordinates", cJSON_CreateRaw(sb.p));
    }
    free(sb.p);
    if (!ok) {
        cJSON_Delete(geom);
        return NULL;
    }
    return geom;
}

/* Sum of per-arc amounts along a snapped route (metres with gp_graph_arc_length_m, seconds with
 * gp_graph_arc_duration_s), partial arcs pro rata; NAN when an arc's amount is unknown. known 0:
 * the amount is unknown for every arc of g (NAN as soon as the route passes one, without looking
 * the arcs up). */
static double snap_sum(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                       const gp_snap_route *r, double (*amount)(const gp_graph *, uint32_t),
                       int known) {
    if (!known)
        return r->first_arc != GP_NONE || r->last_arc != GP_NONE || r->path.len > 1 ? NAN : 0;
    if (r->path.len == 0 && r->first_arc != GP_NONE)
        return fabs(frac_on(b, r->first_arc) - frac_on(a, r->first_arc)) * amount(g, r->first_arc);
    double m = 0;
    if (r->first_arc != GP_NONE) m += (1 - frac_on(a, r->first_arc)) * amount(g, r->first_arc);
    /* with turn costs: the route's own arcs, and durations include the turns */
    int turns = r->arcs && amount == gp_graph_arc_duration_s && g->unit_s > 0;
    uint32_t prev = r->first_arc;
    for (uint32_t i = 1; i < r->path.len; i++) {
        uint32_t arc = r->arcs ? r->arcs[i - 1]
                               : gp_graph_find_arc(g, r->path.nodes[i - 1], r->path.nodes[i]);
        m += arc != GP_NONE ? amount(g, arc) : NAN;
        if (turns) m += (double)gp_snap_turn_cost(g, prev, arc) * g->unit_s / g->scale;
        prev = arc;
    }
    if (r->last_arc != GP_NONE) m += frac_on(b, r->last_arc) * amount(g, r->last_arc);
    if (turns && r->last_arc != GP_NONE)
        m += (double)gp_snap_turn_cost(g, prev, r->last_arc) * g->unit_s / g->scale;
    return m;
}

/* The route object; raw: its path and coordinates as raw arrays, for a document only printed. */
static cJSON *route_snap(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                         const gp_snap_route *r, int raw) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int ok = put(o, "from", gp_render_node(g, a->node)) &&
             put(o, "to", gp_render_node(g, b->node)) &&
             put(o, "weight", gp_render_dist(g, r->dist)) &&
             cJSON_AddStringToObject(o, "weight_unit", g->unit_name) != NULL;
    /* seconds: the weight itself when it is a travel time, else the arcs' own durations */
    double secs = r->dist == GP_INF ? NAN
                  : g->unit_s > 0   ? gp_graph_cost(g, r->dist) * g->unit_s
                                    : snap_sum(g, a, b, r, gp_graph_arc_duration_s, 0);
    if (ok && isfinite(secs))
        ok = cJSON_AddNumberToObject(o, "duration_s", gp_round2(secs)) != NULL;
    double len = r->dist != GP_INF
                     ? snap_sum(g, a, b, r, gp_graph_arc_length_m, g->arc_len_m || g->lon)
                     : NAN;
    if (ok && isfinite(len)) ok = cJSON_AddNumberToObject(o, "length_m", gp_round2(len)) != NULL;
    /* distance is metres only: present where the graph has lon/lat (a planar graph's length_m is
     * in its own units) */
    if (ok && isfinite(len) && g->lon && g->lat)
        ok = cJSON_AddNumberToObject(o, "distance", gp_round2(len)) != NULL;
    uint32_t plen = r->dist != GP_INF ? r->path.len : 0;
    cJSON *path = !ok ? NULL : raw ? raw_nodes(g, r->path.nodes, plen) : cJSON_CreateArray();
    ok = ok && put(o, "path", path);
    for (uint32_t i = 0; ok && !raw && i < plen; i++)
        ok = put(path, NULL, gp_render_node(g, r->path.nodes[i]));
    if (ok && g->lon && g->lat && r->dist != GP_INF)
        ok = put(o, "geometry", snap_geometry(g, a, b, r, raw));
    cJSON *wps = ok ? cJSON_CreateArray() : NULL;
    ok = ok && put(o, "waypoints", wps) && put(wps, NULL, gp_render_waypoint(g, a)) &&
         put(wps, NULL, gp_render_waypoint(g, b));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gp_render_route_snap(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                            const gp_snap_route *r) {
    return route_snap(g, a, b, r, 0);
}

/* ---------------------------------------------------------------------------------------------
 * Text documents */

static void sb_dist_matrix(sbuf *b, const gp_graph *g, const uint64_t *d, uint32_t rows,
                           uint32_t cols) {
    sb_str(b, "[");
    for (uint32_t i = 0; i < rows && !b->oom; i++) {
        sb_str(b, i ? ",[" : "[");
        const uint64_t *r = d + (size_t)i * cols;
        /* one reservation per row, cells written in place: a cell is at most 40 bytes with its
         * comma (the NUL gp_render_dist_str writes is overwritten by the next cell) */
        if (!sb_reserve(b, (size_t)cols * 41 + 2)) return;
        char *p = b->p + b->len;
        for (uint32_t j = 0; j < cols; j++) {
            if (j) *p++ = ',';
            p += gp_render_dist_str(g, r[j], p, 40);
        }
        b->len = (size_t)(p - b->p);
        b->p[b->len] = '\0';
        sb_str(b, "]");
    }
    sb_str(b, "]");
}

static char *sb_finish(sbuf *b, size_t *len) {
    if (b->oom || !sb_reserve(b, 0)) {
        free(b->p);
        return NULL;
    }
    b->p[b->len] = '\0';
    if (len) *len = b->len;
    return b->p;
}

char *gp_render_sssp_text(const gp_graph *g, uint32_t src, const uint64_t *dist,
                          const uint32_t *pred, size_t *len) {
    sbuf b = {0};
    uint32_t reached = 0;
    for (uint32_t v = 0; v < g->n; v++) reached += dist[v] != GP_INF;
    char head[64];
    sb_str(&b, "{\"source\":");
    sb_id(&b, g, src);
    snprintf(head, sizeof head, ",\"reached\":%u,\"nodes\":[", reached);
    sb_str(&b, head);
    /* three passes keep the arrays contiguous without temporary copies */
    int first = 1;
    for (uint32_t v = 0; v < g->n && !b.oom; v++)
        if (dist[v] != GP_INF) {
            if (!first) sb_str(&b, ",");
            first = 0;
            sb_id(&b, g, v);
        }
    sb_str(&b, "],\"weights\":[");
    first = 1;
    for (uint32_t v = 0; v < g->n && !b.oom; v++)
        if (dist[v] != GP_INF) {
            if (!first) sb_str(&b, ",");
            first = 0;
            sb_dist(&b, g, dist[v]);
        }
    sb_str(&b, "],\"predecessors\":[");
    first = 1;
    for (uint32_t v = 0; v < g->n && !b.oom; v++)
        if (dist[v] != GP_INF) {
            if (!first) sb_str(&b, ",");
            first = 0;
            sb_id(&b, g, pred ? pred[v] : GP_NONE);
        }
    sb_str(&b, "]}");
    return sb_finish(&b, len);
}

char *gp_render_table_text(const gp_graph *g, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                           uint32_t nt, const uint64_t *dist, size_t *len) {
    sbuf b = {0};
    sb_str(&b, "{\"sources\":");
    sb_ids(&b, g, src, ns);
    sb_str(&b, ",\"targets\":");
    sb_ids(&b, g, dst, nt);
    sb_str(&b, ",\"weights\":");
    sb_dist_matrix(&b, g, dist, ns, nt);
    sb_str(&b, "}");
    return sb_finish(&b, len);
}

char *gp_render_apsp_text(const gp_graph *g, const uint64_t *dist, const uint32_t *next,
                          size_t *len) {
    sbuf b = {0};
    sb_str(&b, "{\"nodes\":");
    sb_ids(&b, g, NULL, g->n);
    sb_str(&b, ",\"weights\":");
    sb_dist_matrix(&b, g, dist, g->n, g->n);
    if (next) {
        sb_str(&b, ",\"next_hops\":[");
        for (uint32_t i = 0; i < g->n && !b.oom; i++) {
            sb_str(&b, i ? ",[" : "[");
            const uint32_t *r = next + (size_t)i * g->n;
            for (uint32_t j = 0; j < g->n; j++) {
                if (j) sb_str(&b, ",");
                sb_id(&b, g, r[j]);
            }
            sb_str(&b, "]");
        }
        sb_str(&b, "]");
    }
    sb_str(&b, "}");
    return sb_finish(&b, len);
}

/* ---------------------------------------------------------------------------------------------
 * Whole documents: what HTTP answers and the CLI prints (graph = the graph's name on HTTP, its
 * --graph spec on the CLI) */

void gp_render_place_desc(char *buf, size_t size, const gp_graph *g, int is_coord,
                          const gp_snap *s) {
    if (is_coord)
        snprintf(buf, size, "%.6f,%.6f (snapped %.2f m to the road at node %" PRId64 ")", s->qlon,
                 s->qlat, s->dist_m, g->ext[s->node]);
    else gp_render_node_desc(buf, size, g->ext[s->node]);
}

/* {"graph": graph, "version": g's} */
static cJSON *doc_head(const gp_graph *g, const char *graph) {
    cJSON *o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, "graph", graph ? graph : "") ||
              !cJSON_AddStringToObject(o, "version", g->version) ||
              !cJSON_AddStringToObject(o, "data_version", g->version))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* head's members, then those of text (a compact "{...}" object), then a newline; both taken. */
static char *splice(cJSON *head, char *text, size_t len, size_t *outlen) {
    char *h = head ? cJSON_PrintUnformatted(head) : NULL;
    cJSON_Delete(head);
    size_t hl = h ? strlen(h) : 0;
    char *out = h && text && len >= 2 ? malloc(hl + len + 2) : NULL;
    if (out) {
        size_t n = hl - 1; /* head without its closing brace */
        memcpy(out, h, n);
        if (hl > 2 && len > 2) out[n++] = ',';
        memcpy(out + n, text + 1, len - 1); /* text without its opening brace */
        n += len - 1;
        out[n++] = '\n';
        out[n] = 0;
        if (outlen) *outlen = n;
    }
    free(h);
    free(text);
    return out;
}

/* the head with the weight's unit: "weight_unit" and, for travel times, "unit_s" */
static cJSON *doc_head_units(const gp_graph *g, const char *graph) {
    cJSON *o = doc_head(g, graph);
    if (o && (!cJSON_AddStringToObject(o, "weight_unit", g->unit_name) ||
              (g->unit_s > 0 && !cJSON_AddNumberToObject(o, "unit_s", g->unit_s)))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *waypoint_list(const gp_graph *g, const gp_snap *s, uint32_t n) {
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; a && i < n; i++)
        if (!put(a, NULL, gp_render_waypoint(g, &s[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

cJSON *gp_render_route_doc(const gp_graph *g, const char *graph, const gp_snap *a, const gp_snap *b,
                           const gp_snap_route *r) {
    cJSON *o = route_snap(g, a, b, r, 1);
    if (o && (!cJSON_AddStringToObject(o, "graph", graph ? graph : "") ||
              !cJSON_AddStringToObject(o, "version", g->version) ||
              !cJSON_AddStringToObject(o, "data_version", g->version))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *gp_render_nearest_doc(const gp_graph *g, const char *graph, double lon, double lat,
                             const uint32_t *nodes, const double *metres, int n,
                             const gp_snap *way) {
    cJSON *o = doc_head(g, graph);
    if (o && gp_render_nearest_add(o, g, lon, lat, nodes, metres, n, way)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *gp_render_sssp_doc(const gp_graph *g, const char *graph, const gp_snap *src,
                         const uint64_t *dist, const uint32_t *pred, size_t *len) {
    size_t tl = 0;
    char *text = gp_render_sssp_text(g, src->node, dist, pred, &tl);
    cJSON *head = doc_head_units(g, graph);
    if (head && !put(head, "waypoints", waypoint_list(g, src, 1))) {
        cJSON_Delete(head);
        head = NULL;
    }
    return splice(head, text, tl, len);
}

char *gp_render_table_doc(const gp_graph *g, const char *graph, const gp_snap *src, uint32_t ns,
                          const gp_snap *dst, uint32_t nt, const uint64_t *dist, size_t *len) {
    uint32_t *sv = malloc(sizeof *sv * (ns ? ns : 1)), *dv = malloc(sizeof *dv * (nt ? nt : 1));
    size_t tl = 0;
    char *text = NULL;
    if (sv && dv) {
        for (uint32_t i = 0; i < ns; i++) sv[i] = src[i].node;
        for (uint32_t j = 0; j < nt; j++) dv[j] = dst[j].node;
        text = gp_render_table_text(g, sv, ns, dv, nt, dist, &tl);
    }
    free(sv);
    free(dv);
    cJSON *head = doc_head_units(g, graph), *w = head ? cJSON_CreateObject() : NULL;
    if (!head || !put(head, "waypoints", w) || !put(w, "sources", waypoint_list(g, src, ns)) ||
        !put(w, "targets", waypoint_list(g, dst, nt))) {
        cJSON_Delete(head);
        head = NULL;
    }
    return splice(head, text, tl, len);
}

size_t gp_render_dist_row(const gp_graph *g, const uint64_t *row, uint32_t cols, char *out) {
    char *p = out;
    *p++ = '[';
    for (uint32_t j = 0; j < cols; j++) {
        if (j) *p++ = ',';
        p += gp_render_dist_str(g, row[j], p, 40);
    }
    *p++ = ']';
    *p = '\0';
    return (size_t)(p - out);
}

size_t gp_render_id_row(const gp_graph *g, const uint32_t *row, uint32_t cols, char *out) {
    char *p = out;
    *p++ = '[';
    for (uint32_t j = 0; j < cols; j++) {
        if (j) *p++ = ',';
        p += id_str(g, row ? row[j] : j, p, 32);
    }
    *p++ = ']';
    *p = '\0';
    return (size_t)(p - out);
}

char *gp_render_apsp_open(const gp_graph *g, const char *graph, size_t *len) {
    cJSON *head = doc_head(g, graph);
    char *h = head && cJSON_AddStringToObject(head, "weight_unit", g->unit_name)
                  ? cJSON_PrintUnformatted(head)
                  : NULL;
    cJSON_Delete(head);
    if (!h) return NULL;
    size_t hl = strlen(h);
    static const char mid[] = "\"nodes\":", tail[] = ",\"weights\":[";
    char *out = malloc(hl + sizeof mid + GP_RENDER_ID_ROW_BYTES(g->n) + sizeof tail);
    if (out) {
        size_t n = hl - 1; /* the head without its closing brace, then the text's members */
        memcpy(out, h, n);
        out[n++] = ',';
        memcpy(out + n, mid, sizeof mid - 1);
        n += sizeof mid - 1;
        n += gp_render_id_row(g, NULL, g->n, out + n);
        memcpy(out + n, tail, sizeof tail);
        *len = n + sizeof tail - 1;
    }
    free(h);
    return out;
}

char *gp_render_apsp_doc(const gp_graph *g, const char *graph, const uint64_t *dist,
                         const uint32_t *next, size_t *len) {
    size_t tl = 0;
    char *text = gp_render_apsp_text(g, dist, next, &tl);
    cJSON *head = doc_head(g, graph);
    if (head && !cJSON_AddStringToObject(head, "weight_unit", g->unit_name)) {
        cJSON_Delete(head);
        head = NULL;
    }
    return splice(head, text, tl, len);
}

double gp_round_unit(double x, double unit) {
    double inv = round(1 / unit);
    return inv >= 1 && fabs(inv * unit - 1) < 1e-12 ? round(x * inv) / inv : round(x / unit) * unit;
}

double gp_cost_seconds(const gp_graph *g, uint64_t cost) {
    double c = gp_graph_cost(g, cost);
    return g->unit_s > 0 ? c * g->unit_s : c;
}
