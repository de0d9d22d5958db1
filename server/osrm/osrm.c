/* osrm.c - the OSRM v1 HTTP API on gpath's graphs: route, table and nearest (trip in trip.c),
 * with OSRM's URL form, options, response shapes and error codes, so OSRM clients (Leaflet Routing
 * Machine's osrmv1 router, osrm-frontend, plain HTTP clients) work unchanged.
 *
 * {profile} names a served graph, or one of OSRM's profile aliases (driving/car, cycling/bike/
 * bicycle, walking/foot) resolving to the graph whose gp_graph.profile matches; with exactly one
 * graph served, any profile resolves to it. Coordinates snap to road segments through
 * engine/snap.h, and routes and tables run through gp_engine_*_snap, so these answers equal
 * gpath's own /v1 answers on the same graph. Errors are OSRM's: HTTP 400 with {"code":
 * "InvalidQuery" | "InvalidValue" | "InvalidOptions" | "NoSegment" | "NoRoute" | "TooBig" | ...,
 * "message": ...}; engine failures keep their status (504 Timeout, 503 Busy, 500).
 */
#include "server/osrm/osrm.h"

#include "graph/spatial.h"
#include "server/api/render.h"
#include "server/osrm/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */
void gp_osrm_error(gp_req *r, int status, const char *code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", code);
    cJSON_AddStringToObject(o, "message", msg);
    gp_http_json(r, status, o);
}

void gp_osrm_error_err(gp_req *r, const gp_err *err) {
    int c = gp_http_code_of(err->code);
    const char *msg = err->msg[0] ? err->msg : gp_status_name(err->code);
    if (err->code == GP_EINVAL || err->code == GP_EPARSE)
        gp_osrm_error(r, 400, "InvalidValue", "%s", msg);
    else if (err->code == GP_ETOOBIG)
        gp_osrm_error(r, 400, "TooBig", "%s", msg);
    else if (err->code == GP_ENOROUTE)
        gp_osrm_error(r, 400, "NoRoute", "%s", msg);
    else
        gp_osrm_error(r, gp_http_code_status(c), gp_http_code_name(c), "%s", msg);
}

/* ---- numbers ---- */
/* x to a multiple of unit (1, 0.1, 1e-6: units whose inverse is an integer), as the double
 * nearest that decimal (k / 10, not k * 0.1, which can be an ulp off and then prints 17 digits) */
/* ---- profile -> graph ---- */
static const struct {
    const char *alias, *profile;
} aliases[] = {{"driving", "car"},    {"car", "car"},     {"cycling", "bicycle"},
               {"bike", "bicycle"},   {"bicycle", "bicycle"}, {"walking", "foot"},
               {"foot", "foot"}};

/* Referenced graph for profile, its name in name[65]; NULL when none. */
static gp_graph *resolve_profile(const char *profile, char *name) {
    gp_registry *reg = gp_http_registry();
    gp_graph *g = gp_registry_get(reg, profile);
    if (g) {
        snprintf(name, 65, "%s", profile);
        return g;
    }
    const char *want = NULL;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(aliases[i].alias, profile)) want = aliases[i].profile;
    enum { CAP = 256 };
    gp_graph **gs = malloc(sizeof *gs * CAP);
    char(*names)[65] = malloc(sizeof *names * CAP);
    int n = gs && names ? gp_registry_list(reg, gs, names, CAP) : 0;
    int pick = -1;
    for (int i = 0; want && i < n && pick < 0; i++)
        if (!strcmp(gs[i]->profile, want)) pick = i;
    if (pick < 0 && n == 1) pick = 0; /* the only graph answers every profile */
    for (int i = 0; i < n; i++) {
        if (i == pick) {
            g = gs[i];
            snprintf(name, 65, "%s", names[i]);
        } else {
            gp_graph_unref(gs[i]);
        }
    }
    free(gs);
    free(names);
    return g;
}

/* ---- options ---- */
/* Writes a JSON value in OSRM's text form: arrays joined by ';' (nested arrays by ','), numbers
 * as %.17g, strings as is, booleans true/false, null as the empty item (the default). */
static int json_text(const cJSON *v, char *buf, size_t size, char sep) {
    size_t k = 0;
    if (cJSON_IsArray(v)) {
        const cJSON *e;
        int first = 1;
        cJSON_ArrayForEach(e, v) {
            if (!first && k + 1 < size) buf[k++] = sep;
            first = 0;
            if (k >= size - 1) return -1;
            int w = json_text(e, buf + k, size - k, ',');
            if (w < 0) return -1;
            k += (size_t)w;
        }
        buf[k] = '\0';
        return (int)k;
    }
    int w;
    if (cJSON_IsNumber(v))
        w = snprintf(buf, size, "%.17g", v->valuedouble);
    else if (cJSON_IsString(v))
        w = snprintf(buf, size, "%s", v->valuestring);
    else if (cJSON_IsBool(v))
        w = snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        w = snprintf(buf, size, "%s", ""); /* a per-coordinate default: radius, bearing, ... */
    else
        return -1;
    return w < 0 || (size_t)w >= size ? -1 : w;
}

const char *gp_osrm_opt(gp_osrm_req *q, const char *name, char *buf, size_t size) {
    if (!q->body) return gp_req_query(q->r, name);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(q->body, name);
    if (!v || !buf || json_text(v, buf, size, ';') < 0) return NULL;
    return buf;
}

static int parse_bool(const char *s, int *out) {
    if (!strcmp(s, "true")) *out = 1;
    else if (!strcmp(s, "false")) *out = 0;
    else return -1;
    return 0;
}

/* Splits s by sep into at most max parts (pointers into the modified s). */
static uint32_t split(char *s, char sep, char **parts, uint32_t max) {
    uint32_t k = 0;
    for (;;) {
        if (k == max) return max + 1;
        parts[k++] = s;
        char *e = strchr(s, sep);
        if (!e) return k;
        *e = '\0';
        s = e + 1;
    }
}

static int parse_double(const char *s, double *out) {
    char *end = NULL;
    if (!*s) return -1;
    *out = strtod(s, &end);
    return *end || !isfinite(*out) ? -1 : 0;
}

/* Parses {coordinates}. */
static int parse_coords(gp_osrm_req *q, const char *text, long max, const char *key) {
    gp_pts pts;
    memset(&pts, 0, sizeof pts);
    size_t len = strlen(text);
    if (len > 5 && !strcmp(text + len - 5, ".json")) len -= 5;
    int prec = !strncmp(text, "polyline6(", 10) ? 6 : !strncmp(text, "polyline(", 9) ? 5 : 0;
    if (prec) {
        size_t open = prec == 6 ? 10 : 9;
        if (len <= open || text[len - 1] != ')' ||
            gp_polyline_decode(text + open, len - open - 1, prec, &pts) <= 0) {
            gp_pts_free(&pts);
            gp_osrm_error(q->r, 400, "InvalidUrl", "coordinates: malformed encoded polyline");
            return 0;
        }
    } else {
        char *copy = strndup(text, len);
        if (!copy) {
            gp_osrm_error(q->r, 500, "InternalError", "out of memory");
            return 0;
        }
        char *s = copy;
        for (uint32_t i = 0; *s || i == 0; i++) {
            char *e = strchr(s, ';');
            if (e) *e = '\0';
            char *comma = strchr(s, ',');
            double lon, lat;
            if (!comma || (*comma = '\0', parse_double(s, &lon) || parse_double(comma + 1, &lat))) {
                free(copy);
                gp_pts_free(&pts);
                gp_osrm_error(q->r, 400, "InvalidUrl",
                              "coordinates: item %u is not 'lon,lat' (expected "
                              "lon,lat;lon,lat;... or polyline(...))",
                              i);
                return 0;
            }
            if (gp_pts_add(&pts, lon, lat, 0)) break;
            if (!e) break;
            s = e + 1;
        }
        free(copy);
    }
    for (size_t i = 0; i < pts.n; i++) {
        if (pts.lon[i] < -180 || pts.lon[i] > 180 || pts.lat[i] < -90 || pts.lat[i] > 90) {
            gp_osrm_error(q->r, 400, "InvalidValue",
                          "coordinates[%zu] = %.6f,%.6f: longitude must be in [-180, 180] and "
                          "latitude in [-90, 90]",
                          i, pts.lon[i], pts.lat[i]);
            gp_pts_free(&pts);
            return 0;
        }
    }
    if ((long)pts.n > max) {
        gp_osrm_error(q->r, 400, "TooBig", "%zu coordinates exceed %s = %ld", pts.n,
                      key[0] ? key : "this service's limit", max);
        gp_pts_free(&pts);
        return 0;
    }
    q->n = (uint32_t)pts.n;
    q->lon = pts.lon;
    q->lat = pts.lat;
    return 1;
}

int gp_osrm_req_init(gp_osrm_req *q, gp_req *r, const char *coords, long max_coords,
                     const char *limit_key) {
    memset(q, 0, sizeof *q);
    q->r = r;
    q->generate_hints = 1;
    const char *profile = gp_req_param(r, "profile");
    if (gp_req_json(r)) {
        if (!cJSON_IsObject(gp_req_json(r))) {
            gp_osrm_error(r, 400, "InvalidQuery", "the request body must be a JSON object");
            return 0;
        }
        q->body = gp_req_json(r);
    }
    q->g = resolve_profile(profile ? profile : "", q->graph_name);
    if (!q->g) {
        gp_osrm_error(r, 400, "InvalidQuery",
                      "profile '%s' names no served graph and no graph has that routing profile "
                      "(GET /v1/graphs lists them)",
                      profile ? profile : "");
        return 0;
    }
    if (!q->g->lon || !q->g->spatial) {
        gp_osrm_error(r, 400, "InvalidQuery", "graph '%s' has no coordinates", q->graph_name);
        return 0;
    }
    char buf[64];
    const char *v;
    if (!coords) {
        const cJSON *c = q->body ? cJSON_GetObjectItemCaseSensitive(q->body, "coordinates") : NULL;
        char *text = c ? malloc(64 * (size_t)cJSON_GetArraySize(c) + 64) : NULL;
        if (!c || !cJSON_IsArray(c) || !text ||
            json_text(c, text, 64 * (size_t)cJSON_GetArraySize(c) + 64, ';') <= 0) {
            free(text);
            gp_osrm_error(r, 400, "InvalidQuery",
                          "body field 'coordinates' must be an array of [lon, lat] pairs");
            return 0;
        }
        int ok = parse_coords(q, text, max_coords, limit_key);
        free(text);
        if (!ok) return 0;
    } else if (!parse_coords(q, coords, max_coords, limit_key)) {
        return 0;
    }
    q->geometries = GP_GEOM_POLYLINE;
    if ((v = gp_osrm_opt(q, "geometries", buf, sizeof buf))) {
        if (!strcmp(v, "polyline")) q->geometries = GP_GEOM_POLYLINE;
        else if (!strcmp(v, "polyline6")) q->geometries = GP_GEOM_POLYLINE6;
        else if (!strcmp(v, "geojson")) q->geometries = GP_GEOM_GEOJSON;
        else {
            gp_osrm_error(r, 400, "InvalidOptions",
                          "geometries must be polyline, polyline6 or geojson, got '%.32s'", v);
            return 0;
        }
    }
    const char *flags[] = {"skip_waypoints", "generate_hints"};
    int *outs[] = {&q->skip_waypoints, &q->generate_hints};
    for (int i = 0; i < 2; i++)
        if ((v = gp_osrm_opt(q, flags[i], buf, sizeof buf)) && parse_bool(v, outs[i])) {
            gp_osrm_error(r, 400, "InvalidOptions", "%s must be true or false, got '%.32s'",
                          flags[i], v);
            return 0;
        }
    if ((v = gp_osrm_opt(q, "exclude", buf, sizeof buf)) && *v) {
        gp_osrm_error(r, 400, "InvalidValue",
                      "exclude=%.64s: graph '%s' defines no exclusion classes", v, q->graph_name);
        return 0;
    }
    if ((v = gp_osrm_opt(q, "snapping", buf, sizeof buf))) {
        q->snap_any = !strcmp(v, "any");
        if (!q->snap_any && strcmp(v, "default")) {
            gp_osrm_error(r, 400, "InvalidOptions", "snapping must be default or any");
            return 0;
        }
    }
    /* hints are accepted and not needed: gpath snaps again (it is as fast as decoding a hint) */
    return 1;
}

void gp_osrm_req_free(gp_osrm_req *q) {
    free(q->lon);
    free(q->lat);
    free(q->snap);
    gp_graph_unref(q->g);
    memset(q, 0, sizeof *q);
}

/* Reads a per-coordinate list option ("a;b;;c", empty items allowed) into n strings. */
static char *per_coord(gp_osrm_req *q, const char *name, char **parts, int *present) {
    *present = 0;
    size_t cap = 32 * (size_t)q->n + 64;
    const char *qv = q->body ? NULL : gp_req_query(q->r, name);
    if (qv && strlen(qv) + 1 > cap) cap = strlen(qv) + 1;
    char *buf = malloc(cap);
    if (!buf) {
        gp_osrm_error(q->r, 500, "InternalError", "out of memory");
        return NULL;
    }
    const char *v = gp_osrm_opt(q, name, buf, cap);
    if (!v) return buf;
    if (v != buf) snprintf(buf, cap, "%s", v);
    *present = 1;
    uint32_t k = split(buf, ';', parts, q->n);
    if (k != q->n) {
        gp_osrm_error(q->r, 400, "InvalidOptions",
                      "%s has %u items for %u coordinates (one per coordinate, ';'-separated)",
                      name, k > q->n ? q->n + 1 : k, q->n);
        free(buf);
        return NULL;
    }
    return buf;
}

/* Keeps only the direction `arc` (dir 0) or `rarc` (dir 1) at snapped position s. */
static void keep_direction(gp_snap *s, int dir) {
    if (dir == 0) {
        s->rarc = GP_NONE;
    } else if (s->rarc != GP_NONE) {
        s->arc = s->rarc;
        s->rarc = GP_NONE;
        s->frac = 1 - s->frac;
    }
}

/* Bearing of travel along s->arc at the snapped position (toward the arc's next point). */
static double arc_bearing_at(const gp_graph *g, const gp_snap *s) {
    gp_pts p;
    memset(&p, 0, sizeof p);
    double b = 0;
    if (gp_arc_points(g, s->arc, s->frac, 1, &p) == 0 && p.n >= 2)
        b = gp_bearing_deg(p.lon[0], p.lat[0], p.lon[1], p.lat[1]);
    else if (gp_arc_points(g, s->arc, 0, 1, &p) == 0 && p.n >= 2)
        b = gp_bearing_deg(p.lon[0], p.lat[0], p.lon[p.n - 1], p.lat[p.n - 1]);
    gp_pts_free(&p);
    return b;
}

static int bearing_ok(double b, double want, double range) {
    double d = fabs(fmod(b - want + 540, 360) - 180);
    return d <= range;
}

int gp_osrm_snap_all(gp_osrm_req *q) {
    char *rad[1024], *bea[1024], *app[1024];
    char **rp = q->n <= 1024 ? rad : calloc(q->n, sizeof *rp);
    char **bp = q->n <= 1024 ? bea : calloc(q->n, sizeof *bp);
    char **ap = q->n <= 1024 ? app : calloc(q->n, sizeof *ap);
    int ok = 0, hr = 0, hb = 0, ha = 0;
    char *rbuf = NULL, *bbuf = NULL, *abuf = NULL;
    q->snap = calloc(q->n ? q->n : 1, sizeof *q->snap);
    if (!rp || !bp || !ap || !q->snap) {
        gp_osrm_error(q->r, 500, "InternalError", "out of memory");
        goto done;
    }
    if (!(rbuf = per_coord(q, "radiuses", rp, &hr)) || !(bbuf = per_coord(q, "bearings", bp, &hb)) ||
        !(abuf = per_coord(q, "approaches", ap, &ha)))
        goto done;
    double def_radius = (double)gp_http_config()->osrm_default_radius_m;
    if (def_radius <= 0) def_radius = 4e7; /* unlimited: more than any distance on Earth */
    for (uint32_t i = 0; i < q->n; i++) {
        double radius = def_radius, want = -1, range = 180;
        if (hr && *rp[i] && strcmp(rp[i], "unlimited")) {
            if (parse_double(rp[i], &radius) || radius < 0) {
                gp_osrm_error(q->r, 400, "InvalidOptions",
                              "radiuses[%u] must be a non-negative number or 'unlimited'", i);
                goto done;
            }
        }
        if (hb && *bp[i]) {
            char *c = strchr(bp[i], ',');
            if (!c || (*c = '\0', parse_double(bp[i], &want) || parse_double(c + 1, &range)) ||
                want < 0 || want > 360 || range < 0 || range > 180) {
                gp_osrm_error(q->r, 400, "InvalidOptions",
                              "bearings[%u] must be 'bearing,range' with bearing in [0, 360] and "
                              "range in [0, 180]",
                              i);
                goto done;
            }
        }
        int approach = 0; /* 0 unrestricted, 1 curb, 2 opposite */
        if (ha && *ap[i]) {
            if (!strcmp(ap[i], "curb")) approach = 1;
            else if (!strcmp(ap[i], "opposite")) approach = 2;
            else if (strcmp(ap[i], "unrestricted")) {
                gp_osrm_error(q->r, 400, "InvalidOptions",
                              "approaches[%u] must be curb, opposite or unrestricted", i);
                goto done;
            }
        }
        gp_err err;
        gp_snap *s = &q->snap[i];
        int rc = gp_snap_point(q->g, q->lon[i], q->lat[i], radius, s, &err);
        if (rc == GP_ENOTFOUND) {
            gp_osrm_error(q->r, 400, "NoSegment", "Could not find a matching segment for coordinate "
                          "%u: %s", i, err.msg);
            goto done;
        }
        if (rc) {
            gp_osrm_error_err(q->r, &err);
            goto done;
        }
        if (!q->snap_any) gp_snap_big(q->g, s, radius);
        if (s->arc == GP_NONE) continue; /* snapped onto a node: no direction to restrict */
        if (want >= 0) {
            int fwd = bearing_ok(arc_bearing_at(q->g, s), want, range);
            int bwd = 0;
            if (s->rarc != GP_NONE) {
                gp_snap t = *s;
                keep_direction(&t, 1);
                bwd = bearing_ok(arc_bearing_at(q->g, &t), want, range);
            }
            if (!fwd && !bwd) {
                gp_osrm_error(q->r, 400, "NoSegment",
                              "Could not find a matching segment for coordinate %u: the nearest "
                              "road does not run within %g degrees of bearing %g",
                              i, range, want);
                goto done;
            }
            if (fwd != bwd) keep_direction(s, fwd ? 0 : 1);
        }
        if (approach && s->rarc != GP_NONE) {
            /* right-hand traffic: the curb side of arc tail->head is its right */
            uint32_t u = gp_graph_arc_tail(q->g, s->arc), v = q->g->col[s->arc];
            double dx = q->g->lon[v] - q->g->lon[u], dy = q->g->lat[v] - q->g->lat[u];
            double cross = dx * (s->qlat - s->lat) - dy * (s->qlon - s->lon);
            int right = cross < 0;
            if (cross != 0) keep_direction(s, (approach == 1) == right ? 0 : 1);
        }
    }
    ok = 1;
done:
    free(rbuf);
    free(bbuf);
    free(abuf);
    if (rp != rad) free(rp);
    if (bp != bea) free(bp);
    if (ap != app) free(ap);
    return ok;
}

int gp_osrm_index_list(gp_osrm_req *q, const char *name, uint32_t n, uint32_t **idx, uint32_t *k) {
    *idx = NULL;
    *k = n;
    size_t cap = 12 * (size_t)n + 64;
    char *buf = malloc(cap);
    if (!buf) {
        gp_osrm_error(q->r, 500, "InternalError", "out of memory");
        return 0;
    }
    const char *v = gp_osrm_opt(q, name, buf, cap);
    if (!v || !strcmp(v, "all")) {
        free(buf);
        return 1;
    }
    if (v != buf) snprintf(buf, cap, "%s", v);
    uint32_t *out = malloc(sizeof *out * ((size_t)n + 1));
    uint32_t m = 0;
    char *s = buf;
    int ok = out != NULL;
    while (ok) {
        char *e = strchr(s, ';');
        if (e) *e = '\0';
        char *end = NULL;
        long x = strtol(s, &end, 10);
        if (!*s || *end || x < 0 || x >= (long)n || m == n) {
            gp_osrm_error(q->r, 400, "InvalidOptions",
                          "%s: '%.16s' is not an index of the %u coordinates", name, s, n);
            free(out);
            free(buf);
            return 0;
        }
        out[m++] = (uint32_t)x;
        if (!e) break;
        s = e + 1;
    }
    free(buf);
    *idx = out;
    *k = m;
    return 1;
}

/* ---- waypoints ---- */
static const char *snap_name(const gp_graph *g, const gp_snap *s) {
    const char *nm = s->arc != GP_NONE ? gp_graph_arc_name(g, s->arc) : NULL;
    return nm ? nm : "";
}

/* An opaque hint: base64url of (graph version, arc, position); OSRM clients echo it back. */
static void make_hint(const gp_graph *g, const gp_snap *s, char out[32]) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char raw[18];
    uint64_t h = g->hash;
    uint32_t a = s->arc != GP_NONE ? s->arc : s->node, f = (uint32_t)(s->frac * 4294967295.0);
    memcpy(raw, &h, 8);
    memcpy(raw + 8, &a, 4);
    memcpy(raw + 12, &f, 4);
    raw[16] = s->arc != GP_NONE;
    raw[17] = 0;
    int k = 0;
    for (int i = 0; i < 18; i += 3) {
        uint32_t v = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | raw[i + 2];
        for (int j = 3; j >= 0; j--) out[k++] = b64[(v >> (6 * j)) & 63];
    }
    out[k] = '\0';
}

cJSON *gp_osrm_waypoint(const gp_osrm_req *q, const gp_snap *s) {
    cJSON *w = cJSON_CreateObject();
    if (q->generate_hints) {
        char hint[32];
        make_hint(q->g, s, hint);
        cJSON_AddStringToObject(w, "hint", hint);
    }
    cJSON_AddNumberToObject(w, "distance", gp_round_unit(s->dist_m, 1e-6));
    cJSON_AddStringToObject(w, "name", snap_name(q->g, s));
    cJSON *loc = cJSON_AddArrayToObject(w, "location");
    cJSON_AddItemToArray(loc, cJSON_CreateNumber(gp_round_unit(s->lon, 1e-6)));
    cJSON_AddItemToArray(loc, cJSON_CreateNumber(gp_round_unit(s->lat, 1e-6)));
    return w;
}

static cJSON *waypoints_json(const gp_osrm_req *q, const uint32_t *idx, uint32_t k) {
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < k; i++)
        cJSON_AddItemToArray(a, gp_osrm_waypoint(q, &q->snap[idx ? idx[i] : i]));
    return a;
}

static cJSON *ok_object(void) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", "Ok");
    return o;
}

/* ---- route ---- */
void gp_h_osrm_route(gp_req *r) {
    gp_osrm_req q;
    const gp_config *cfg = gp_http_config();
    if (!gp_osrm_req_init(&q, r, gp_req_param(r, "coordinates"), cfg->osrm_max_route_size,
                          "osrm_max_route_size"))
        goto out;
    gp_osrm_route_opts o;
    if (!gp_osrm_route_opts_parse(&q, &o)) goto out;
    if (q.n < 2) {
        gp_osrm_error(r, 400, "InvalidQuery", "route needs at least 2 coordinates, got %u", q.n);
        goto out;
    }
    char buf[64];
    const char *v = gp_osrm_opt(&q, "alternatives", buf, sizeof buf);
    size_t n_alt = 0; /* alternatives wanted besides the best route */
    if (v && !strcmp(v, "true")) {
        n_alt = 1;
    } else if (v && strcmp(v, "false")) {
        char *end;
        long k = strtol(v, &end, 10);
        if (!*v || *end || k < 0 || k > 10) {
            gp_osrm_error(r, 400, "InvalidOptions",
                          "alternatives must be true, false or a number 0..10");
            goto out;
        }
        n_alt = k > 3 ? 3 : (size_t)k; /* up to N alternatives, at most 3 (osrm-routed's default) */
    }
    if ((v = gp_osrm_opt(&q, "continue_straight", buf, sizeof buf)) && strcmp(v, "default") &&
        strcmp(v, "true") && strcmp(v, "false")) {
        gp_osrm_error(r, 400, "InvalidOptions", "continue_straight must be default, true or false");
        goto out;
    }
    if (!gp_osrm_snap_all(&q)) goto out;
    /* waypoints=i;j;...: legs only between these coordinates (the others are via points) */
    uint32_t *wpi = NULL, nwp = 0;
    if (!gp_osrm_index_list(&q, "waypoints", q.n, &wpi, &nwp)) goto out;
    if (wpi && (nwp < 2 || wpi[0] != 0 || wpi[nwp - 1] != q.n - 1)) {
        free(wpi);
        gp_osrm_error(r, 400, "InvalidValue",
                      "waypoints must start with 0 and end with the last coordinate's index");
        goto out;
    }
    uint32_t *order = malloc(sizeof *order * q.n);
    gp_osrm_leg *legs = calloc(q.n, sizeof *legs);
    if (!order || !legs) {
        free(order);
        free(legs);
        free(wpi);
        gp_osrm_error(r, 500, "InternalError", "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < q.n; i++) order[i] = i;
    if (gp_osrm_route_legs(&q, order, q.n, legs)) {
        size_t nleg = q.n - 1;
        int oom = 0;
        if (wpi) { /* merge the legs between consecutive waypoints */
            size_t out_i = 0;
            for (uint32_t w = 0; w + 1 < nwp; w++) {
                gp_osrm_leg m = legs[wpi[w]];
                for (uint32_t j = wpi[w] + 1; j < wpi[w + 1]; j++) {
                    if (oom) gp_osrm_leg_free(&legs[j]);
                    else if (gp_osrm_leg_append(&m, &legs[j])) oom = 1;
                }
                legs[out_i++] = m;
            }
            nleg = out_i;
        }
        size_t nalt = 0;
        gp_osrm_leg alt[10];
        if (!oom && n_alt && q.n == 2) nalt = gp_osrm_alternatives(&q, &legs[0], n_alt, alt);
        cJSON *res = ok_object();
        cJSON *routes = cJSON_AddArrayToObject(res, "routes");
        cJSON_AddItemToArray(routes, gp_osrm_route_json(&q, legs, nleg, &o));
        for (size_t i = 0; i < nalt; i++) {
            cJSON_AddItemToArray(routes, gp_osrm_route_json(&q, &alt[i], 1, &o));
            gp_osrm_leg_free(&alt[i]);
        }
        if (!q.skip_waypoints)
            cJSON_AddItemToObject(res, "waypoints", waypoints_json(&q, wpi, wpi ? nwp : q.n));
        for (size_t i = 0; i < nleg; i++) gp_osrm_leg_free(&legs[i]);
        gp_http_json(r, 200, res);
    }
    free(wpi);
    free(order);
    free(legs);
out:
    gp_osrm_req_free(&q);
}

/* ---- table ---- */
/* Metres along the shortest-path tree of one source (pred from gp_engine_sssp_snap) to snapped
 * destination b, whose network cost is want (the table's answer). */
static double tree_metres(const gp_graph *g, const gp_snap *a, const gp_snap *b, const uint64_t *dist,
                          const uint32_t *pred, uint64_t want) {
    uint32_t node[2];
    uint64_t cost[2];
    uint32_t k = gp_snap_dests(g, b, node, cost), best = GP_NONE;
    uint64_t bd = GP_INF;
    for (uint32_t i = 0; i < k; i++)
        if (dist[node[i]] != GP_INF && dist[node[i]] + cost[i] < bd) {
            bd = dist[node[i]] + cost[i];
            best = i;
        }
    if (a->arc != GP_NONE && (bd == GP_INF || bd > want) &&
        (b->arc == a->arc || b->arc == a->rarc || b->rarc == a->arc))
        return fabs(b->frac - (b->arc == a->arc ? a->frac : 1 - a->frac)) *
               gp_graph_arc_length_m(g, a->arc); /* the direct way along one arc */
    if (best == GP_NONE) return NAN;
    uint32_t v = node[best];
    double m = 0;
    if (b->arc != GP_NONE) {
        double len = gp_graph_arc_length_m(g, b->arc);
        m += v == gp_graph_arc_tail(g, b->arc) ? b->frac * len : (1 - b->frac) * len;
    }
    for (uint32_t hops = 0; pred[v] != GP_NONE && hops < g->n; hops++) {
        uint32_t arc = gp_graph_find_arc(g, pred[v], v);
        if (arc != GP_NONE) m += gp_graph_arc_length_m(g, arc);
        v = pred[v];
    }
    if (a->arc != GP_NONE) {
        double len = gp_graph_arc_length_m(g, a->arc);
        m += v == g->col[a->arc] ? (1 - a->frac) * len : a->frac * len;
    }
    return m;
}

static void table_answer(gp_req *r, int post) {
    gp_osrm_req q;
    const gp_config *cfg = gp_http_config();
    long max = cfg->osrm_max_table_size;
    uint32_t *si = NULL, *di = NULL, ns = 0, nt = 0;
    gp_snap *src = NULL, *dst = NULL;
    uint64_t *cost = NULL, *dist = NULL;
    uint32_t *pred = NULL;
    double *metres = NULL;
    char buf[64];
    const char *v;
    /* OSRM limits the table's size (sources x destinations <= max^2), not the coordinates;
     * URL and body sizes bound those */
    if (!gp_osrm_req_init(&q, r, post ? NULL : gp_req_param(r, "coordinates"), 1L << 20, ""))
        goto out;
    if (!gp_osrm_index_list(&q, "sources", q.n, &si, &ns) ||
        !gp_osrm_index_list(&q, "destinations", q.n, &di, &nt))
        goto out;
    int want_dur = 1, want_dist = 0;
    if ((v = gp_osrm_opt(&q, "annotations", buf, sizeof buf))) {
        want_dur = strstr(v, "duration") != NULL;
        want_dist = strstr(v, "distance") != NULL;
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s", v);
        for (char *sv = NULL, *t = strtok_r(tmp, ",", &sv); t; t = strtok_r(NULL, ",", &sv))
            if (strcmp(t, "duration") && strcmp(t, "distance")) want_dur = want_dist = 0;
        if (!want_dur && !want_dist) {
            gp_osrm_error(r, 400, "InvalidOptions",
                          "annotations must be duration, distance or duration,distance");
            goto out;
        }
    }
    double fallback = 0, scale_factor = 1;
    if ((v = gp_osrm_opt(&q, "fallback_speed", buf, sizeof buf)) &&
        (parse_double(v, &fallback) || fallback <= 0)) {
        gp_osrm_error(r, 400, "InvalidOptions", "fallback_speed must be a positive number (m/s)");
        goto out;
    }
    if ((v = gp_osrm_opt(&q, "scale_factor", buf, sizeof buf)) &&
        (parse_double(v, &scale_factor) || scale_factor <= 0)) {
        gp_osrm_error(r, 400, "InvalidOptions", "scale_factor must be a positive number");
        goto out;
    }
    int fb_snapped = 0;
    if ((v = gp_osrm_opt(&q, "fallback_coordinate", buf, sizeof buf))) {
        if (!strcmp(v, "snapped")) fb_snapped = 1;
        else if (strcmp(v, "input")) {
            gp_osrm_error(r, 400, "InvalidOptions", "fallback_coordinate must be input or snapped");
            goto out;
        }
    }
    if ((uint64_t)ns * nt > (uint64_t)max * (uint64_t)max) {
        gp_osrm_error(r, 400, "TooBig",
                      "table of %u sources x %u destinations exceeds osrm_max_table_size = %ld "
                      "(at most %ld coordinates, or sources x destinations <= %ld^2)",
                      ns, nt, max, max, max);
        goto out;
    }
    if (q.n < 1) {
        gp_osrm_error(r, 400, "InvalidQuery", "table needs at least one coordinate");
        goto out;
    }
    if (!gp_osrm_snap_all(&q)) goto out;
    src = malloc(sizeof *src * ns);
    dst = malloc(sizeof *dst * nt);
    cost = malloc(sizeof *cost * (size_t)ns * nt);
    if (!src || !dst || !cost) {
        gp_osrm_error(r, 500, "InternalError", "out of memory for a %u x %u table", ns, nt);
        goto out;
    }
    for (uint32_t i = 0; i < ns; i++) src[i] = q.snap[si ? si[i] : i];
    for (uint32_t j = 0; j < nt; j++) dst[j] = q.snap[di ? di[j] : j];
    gp_err err;
    if (gp_engine_table_snap(gp_http_engine(), q.g, src, ns, dst, nt, cost, &err)) {
        gp_osrm_error_err(r, &err);
        goto out;
    }
    if (want_dist) {
        metres = malloc(sizeof *metres * (size_t)ns * nt);
        dist = malloc(sizeof *dist * q.g->n);
        pred = malloc(sizeof *pred * q.g->n);
        if (!metres || !dist || !pred) {
            gp_osrm_error(r, 500, "InternalError", "out of memory for table distances");
            goto out;
        }
        for (uint32_t i = 0; i < ns; i++) {
            /* the tree need not reach past the row's farthest destination */
            uint64_t cutoff = 0;
            for (uint32_t j = 0; j < nt; j++) {
                uint64_t c = cost[(size_t)i * nt + j];
                if (c != GP_INF && c > cutoff) cutoff = c;
            }
            if (gp_engine_sssp_snap(gp_http_engine(), q.g, &src[i], cutoff, dist, pred, &err)) {
                gp_osrm_error_err(r, &err);
                goto out;
            }
            for (uint32_t j = 0; j < nt; j++) {
                uint64_t c = cost[(size_t)i * nt + j];
                metres[(size_t)i * nt + j] =
                    c == GP_INF ? NAN : tree_metres(q.g, &src[i], &dst[j], dist, pred, c);
            }
        }
    }
    cJSON *o = ok_object();
    cJSON *durs = want_dur ? cJSON_AddArrayToObject(o, "durations") : NULL;
    cJSON *dists = want_dist ? cJSON_AddArrayToObject(o, "distances") : NULL;
    cJSON *fbc = fallback > 0 ? cJSON_CreateArray() : NULL;
    /* rows written as raw JSON text (a 1000 x 1000 table is a million numbers: cJSON items
     * printed one by one cost more than the table itself) */
    double *rowd = malloc(sizeof *rowd * (nt ? nt : 1)), *rowm = malloc(sizeof *rowm * (nt ? nt : 1));
    for (uint32_t i = 0; rowd && rowm && i < ns; i++) {
        for (uint32_t j = 0; j < nt; j++) {
            size_t c = (size_t)i * nt + j;
            if (cost[c] != GP_INF) {
                rowd[j] = gp_round_unit(gp_cost_seconds(q.g, cost[c]) * scale_factor, 0.1);
                rowm[j] = metres && isfinite(metres[c]) ? gp_round_unit(metres[c], 0.1) : NAN;
            } else if (fallback > 0) {
                const gp_snap *a = &src[i], *b = &dst[j];
                double crow = fb_snapped ? gp_haversine_m(a->lon, a->lat, b->lon, b->lat)
                                         : gp_haversine_m(a->qlon, a->qlat, b->qlon, b->qlat);
                rowd[j] = gp_round_unit(crow / fallback * scale_factor, 0.1);
                rowm[j] = gp_round_unit(crow, 0.1);
                cJSON *cell = cJSON_CreateArray();
                cJSON_AddItemToArray(cell, cJSON_CreateNumber(i));
                cJSON_AddItemToArray(cell, cJSON_CreateNumber(j));
                cJSON_AddItemToArray(fbc, cell);
            } else {
                rowd[j] = rowm[j] = NAN;
            }
        }
        cJSON *rd = durs ? gp_render_number_row(rowd, nt) : NULL;
        cJSON *rm = dists ? gp_render_number_row(rowm, nt) : NULL;
        if ((durs && !rd) || (dists && !rm)) {
            cJSON_Delete(rd);
            cJSON_Delete(rm);
            free(rowd);
            rowd = NULL; /* the out-of-memory answer below */
            break;
        }
        if (rd) cJSON_AddItemToArray(durs, rd);
        if (rm) cJSON_AddItemToArray(dists, rm);
    }
    int rows_ok = rowd && rowm;
    free(rowd);
    free(rowm);
    if (!rows_ok) {
        cJSON_Delete(o);
        cJSON_Delete(fbc);
        gp_osrm_error(r, 500, "InternalError", "out of memory for a %u x %u table", ns, nt);
        goto out;
    }
    if (fbc) cJSON_AddItemToObject(o, "fallback_speed_cells", fbc);
    if (!q.skip_waypoints) {
        cJSON_AddItemToObject(o, "sources", waypoints_json(&q, si, ns));
        cJSON_AddItemToObject(o, "destinations", waypoints_json(&q, di, nt));
    }
    gp_http_json(r, 200, o);
out:
    free(si);
    free(di);
    free(src);
    free(dst);
    free(cost);
    free(dist);
    free(pred);
    free(metres);
    gp_osrm_req_free(&q);
}

void gp_h_osrm_table(gp_req *r) { table_answer(r, 0); }

void gp_h_osrm_table_post(gp_req *r) {
    if (!gp_req_json(r)) {
        gp_osrm_error(r, 400, "InvalidQuery",
                      "POST /table/v1/{profile} needs a JSON body {\"coordinates\": [[lon, lat], "
                      "...], \"sources\": [...], \"destinations\": [...], ...}");
        return;
    }
    table_answer(r, 1);
}

/* ---- nearest ---- */
typedef struct near_cand {
    gp_snap s;
    uint32_t u, v; /* segment ends, u < v */
} near_cand;

static int cand_cmp(const void *x, const void *y) {
    const near_cand *a = x, *b = y;
    if (a->s.dist_m != b->s.dist_m) return a->s.dist_m < b->s.dist_m ? -1 : 1;
    return a->u != b->u ? (a->u < b->u ? -1 : 1) : (a->v < b->v ? -1 : a->v > b->v);
}

void gp_h_osrm_nearest(gp_req *r) {
    gp_osrm_req q;
    near_cand *c = NULL;
    uint32_t *nodes = NULL;
    if (!gp_osrm_req_init(&q, r, gp_req_param(r, "coordinates"), 2, "")) goto out;
    if (q.n != 1) {
        gp_osrm_error(r, 400, "InvalidQuery", "nearest takes exactly one coordinate");
        goto out;
    }
    char buf[32];
    const char *v = gp_osrm_opt(&q, "number", buf, sizeof buf);
    long k = 1, max = gp_http_config()->osrm_max_nearest_size;
    if (v) {
        char *end;
        k = strtol(v, &end, 10);
        if (!*v || *end || k < 1) {
            gp_osrm_error(r, 400, "InvalidOptions", "number must be an integer >= 1");
            goto out;
        }
        if (k > max) {
            gp_osrm_error(r, 400, "TooBig", "number = %ld exceeds osrm_max_nearest_size = %ld", k,
                          max);
            goto out;
        }
    }
    if (!gp_osrm_snap_all(&q)) goto out;
    const gp_graph *g = q.g;
    /* candidates: the snapped segment, then segments at the nodes nearest to the point */
    uint32_t kn = (uint32_t)(k * 4 + 8);
    if (kn > g->n) kn = g->n;
    nodes = malloc(sizeof *nodes * kn);
    size_t cap = (size_t)kn * 32; /* up to 16 out- and 16 in-arcs per node */
    c = malloc(sizeof *c * cap);
    if (!nodes || !c) {
        gp_osrm_error(r, 500, "InternalError", "out of memory");
        goto out;
    }
    int got = gp_spatial_nearest(g->spatial, g, q.lon[0], q.lat[0], kn, nodes, NULL);
    size_t nc = 0;
    for (int i = 0; i < got; i++) {
        uint32_t x = nodes[i];
        for (int dir = 0; dir < 2; dir++) {
            uint32_t b = dir ? g->rrow[x] : g->row[x], e = dir ? g->rrow[x + 1] : g->row[x + 1];
            for (uint32_t a = b; a < e && a - b < 16 && nc < cap; a++) {
                uint32_t y = dir ? g->rcol[a] : g->col[a];
                uint32_t arc = dir ? gp_graph_find_arc(g, y, x) : a;
                if (arc == GP_NONE || x == y) continue;
                near_cand *cc = &c[nc];
                cc->u = x < y ? x : y;
                cc->v = x < y ? y : x;
                gp_arc_project(g, arc, q.lon[0], q.lat[0], &cc->s);
                nc++;
            }
        }
    }
    qsort(c, nc, sizeof *c, cand_cmp);
    cJSON *o = ok_object();
    cJSON *wps = cJSON_AddArrayToObject(o, "waypoints");
    /* the first answer is the snapped position the other services use */
    const gp_snap *s0 = &q.snap[0];
    uint32_t u0 = s0->arc != GP_NONE ? gp_graph_arc_tail(g, s0->arc) : s0->node;
    uint32_t v0 = s0->arc != GP_NONE ? g->col[s0->arc] : s0->node;
    long out_n = 0;
    for (size_t i = 0; i <= nc && out_n < k; i++) {
        const gp_snap *s = i == 0 ? s0 : &c[i - 1].s;
        uint32_t u = i == 0 ? u0 : c[i - 1].u, w = i == 0 ? v0 : c[i - 1].v;
        if (i > 0) {
            if ((u == u0 && w == v0) || (u == v0 && w == u0)) continue;
            if (i > 1 && c[i - 2].u == u && c[i - 2].v == w) continue;
        }
        cJSON *wp = gp_osrm_waypoint(&q, s);
        cJSON *ns = cJSON_AddArrayToObject(wp, "nodes");
        cJSON_AddItemToArray(ns, cJSON_CreateNumber((double)gp_graph_orig_id(g, u)));
        cJSON_AddItemToArray(ns, cJSON_CreateNumber((double)gp_graph_orig_id(g, w)));
        cJSON_AddItemToArray(wps, wp);
        out_n++;
    }
    gp_http_json(r, 200, o);
out:
    free(nodes);
    free(c);
    gp_osrm_req_free(&q);
}
