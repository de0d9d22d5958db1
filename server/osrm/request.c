/* request.c - what every service of the OSRM family shares about a request (contract in
 * internal.h): OSRM's error body, {profile} resolved to a served graph, {coordinates} and the
 * options every service takes (radiuses, bearings, approaches, hints, snapping), coordinates
 * snapped to road segments, index lists, and the waypoint objects of the answers. The handlers
 * (osrm.c, trip.c) and the route builder (route.c) call it; it calls none of them.
 */
#include "server/osrm/internal.h"

#include "graph/spatial.h"
#include "server/api/render.h"
#include "server/http/json.h"

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
    else if (err->code == GP_ETOOBIG) gp_osrm_error(r, 400, "TooBig", "%s", msg);
    else if (err->code == GP_ENOROUTE) gp_osrm_error(r, 400, "NoRoute", "%s", msg);
    else gp_osrm_error(r, gp_http_code_status(c), gp_http_code_name(c), "%s", msg);
}

/* ---- profile -> graph ---- */
static const struct {
    const char *alias, *profile;
} aliases[] = {{"driving", "car"},  {"car", "car"},         {"cycling", "bicycle"},
               {"bike", "bicycle"}, {"bicycle", "bicycle"}, {"walking", "foot"},
               {"foot", "foot"},    {"truck", "truck"},     {"hgv", "truck"}};

int gp_osrm_pick_graph(const char *profile, const double *lon, const double *lat, uint32_t n,
                       gp_graph **out, char name[65], char *why, size_t size) {
    gp_registry *reg = gp_http_registry();
    *out = NULL;
    why[0] = '\0';
    if ((*out = gp_registry_get(reg, profile))) {
        snprintf(name, 65, "%s", profile);
        return GP_OSRM_PICK_OK;
    }
    const char *want = NULL;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(aliases[i].alias, profile)) want = aliases[i].profile;
    enum { CAP = 256 };
    gp_graph **gs = malloc(sizeof *gs * CAP);
    char(*names)[65] = malloc(sizeof *names * CAP);
    double area[CAP];
    int total = gs && names ? gp_registry_list(reg, gs, names, CAP) : 0;
    int cand[CAP], nc = 0, pick = -1, rc = GP_OSRM_PICK_OK;
    for (int i = 0; want && i < total; i++)
        if (!strcmp(gs[i]->profile, want)) cand[nc++] = i;
    /* in[c * n + k]: candidate c holds coordinate k */
    uint8_t *in = nc > 1 && n ? malloc((size_t)n * (size_t)nc) : NULL;
    if (nc == 0 && total == 1) pick = 0; /* the only graph answers every profile */
    else if (nc == 1 || (nc > 1 && n == 0)) pick = cand[0];
    else if (nc > 1 && !in) {
        rc = GP_OSRM_PICK_NOGRAPH;
        snprintf(why, size, "out of memory choosing among the regions of profile '%s'", profile);
    } else if (nc > 1) {
        /* several regions: the smallest road area holding every coordinate */
        for (int c = 0; c < nc; c++) {
            uint8_t *row = in + (size_t)c * n;
            area[c] = INFINITY;
            if (gp_registry_coverage(reg, names[cand[c]], lon, lat, n, row, &area[c]))
                memset(row, 0, n);
            uint32_t k = 0;
            while (k < n && row[k]) k++;
            if (k == n && (pick < 0 || area[c] < area[pick])) pick = c;
        }
        if (pick >= 0) pick = cand[pick];
    }
    if (pick < 0 && nc > 1 && in) {
        /* a coordinate in none answers NoSegment; else they lie in different regions */
        int first[CAP] = {0}; /* first[c]: 1 + the first coordinate in candidate c */
        uint32_t lost = n;
        for (uint32_t k = 0; k < n && lost == n; k++) {
            int found = 0;
            for (int c = 0; c < nc; c++)
                if (in[(size_t)c * n + k]) {
                    found = 1;
                    if (!first[c]) first[c] = (int)k + 1;
                }
            if (!found) lost = k;
        }
        size_t w = 0;
        if (lost < n) {
            rc = GP_OSRM_PICK_NONE;
            w = (size_t)snprintf(why, size,
                                 "coordinate %u: %.6f,%.6f lies in no region served "
                                 "for profile '%s' (",
                                 lost, lon[lost], lat[lost], profile);
            for (int c = 0; c < nc && w < size; c++)
                w += (size_t)snprintf(why + w, size - w, "%s'%s'", c ? ", " : "", names[cand[c]]);
            if (w < size) snprintf(why + w, size - w, ")");
        } else {
            rc = GP_OSRM_PICK_MIXED;
            w = (size_t)snprintf(why, size, "the coordinates lie in different regions (");
            for (int shown = 0, last = 0; w < size; shown++) { /* by coordinate order */
                int c = -1;
                for (int j = 0; j < nc; j++)
                    if (first[j] > last && (c < 0 || first[j] < first[c])) c = j;
                if (c < 0) break;
                last = first[c];
                w += (size_t)snprintf(why + w, size - w, "%scoordinate %d in '%s'",
                                      shown ? ", " : "", first[c] - 1, names[cand[c]]);
            }
            if (w < size)
                snprintf(why + w, size - w,
                         ") and no graph served for profile '%s' holds them all: one request "
                         "routes within one region",
                         profile);
        }
    }
    if (pick < 0 && rc == GP_OSRM_PICK_OK) {
        rc = GP_OSRM_PICK_NOGRAPH;
        snprintf(why, size,
                 "profile '%s' names no served graph and no graph has that routing profile "
                 "(GET /v1/graphs lists them)",
                 profile);
    }
    for (int i = 0; i < total; i++) {
        if (i == pick) {
            *out = gs[i];
            snprintf(name, 65, "%s", names[i]);
        } else {
            gp_graph_unref(gs[i]);
        }
    }
    free(gs);
    free(names);
    free(in);
    return rc;
}

int gp_osrm_no_durations(const gp_graph *g) {
    static const char *topo[] = {"graphml", "sndlib", "rocketfuel"};
    if (!strcmp(g->unit_name, "hops")) return 1;
    for (size_t i = 0; i < sizeof topo / sizeof topo[0]; i++)
        if (!strcmp(g->format, topo[i])) return 1;
    return 0;
}

const char *gp_osrm_weight_name(const gp_graph *g) {
    if (g->unit_s <= 0) return g->unit_name[0] ? g->unit_name : "cost";
    if (!strcmp(g->profile, "car")) return "routability"; /* car.lua's weight_name */
    if (!strcmp(g->profile, "bicycle")) return "cyclability";
    return "duration"; /* foot.lua's, and OSRM's default */
}

double gp_osrm_weight(const gp_graph *g, uint64_t cost) {
    return g->unit_s > 0 ? gp_cost_seconds(g, cost) : gp_graph_cost(g, cost);
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
    if (cJSON_IsNumber(v)) w = snprintf(buf, size, "%.17g", v->valuedouble);
    else if (cJSON_IsString(v)) w = snprintf(buf, size, "%s", v->valuestring);
    else if (cJSON_IsBool(v)) w = snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        w = snprintf(buf, size, "%s", ""); /* a per-coordinate default: radius, bearing, ... */
    else return -1;
    return w < 0 || (size_t)w >= size ? -1 : w;
}

/* What a POST option that has no text form of its buffer's size reads as: no option's value, so
 * the option's own check answers 400 naming it (never "absent", which would take the default). */
static const char unreadable[] = "(a JSON value that is not this option's)";

const char *gp_osrm_opt(gp_osrm_req *q, const char *name, char *buf, size_t size) {
    if (!q->body) return gp_req_query(q->r, name);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(q->body, name);
    if (!v) return NULL;
    if (cJSON_IsString(v)) return v->valuestring; /* as long as it is */
    if (!buf || json_text(v, buf, size, ';') < 0) return unreadable;
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

/* The length of json_text's form of v; -1 when it has none (an object). */
static long text_len(const cJSON *v) {
    if (cJSON_IsArray(v)) {
        long k = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            long w = text_len(e);
            if (w < 0) return -1;
            k += w + (e != v->child);
        }
        return k;
    }
    if (cJSON_IsNumber(v)) return snprintf(NULL, 0, "%.17g", v->valuedouble);
    if (cJSON_IsString(v)) return (long)strlen(v->valuestring);
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v) ? 4 : 5;
    return cJSON_IsNull(v) ? 0 : -1;
}

/* An option's list, item by item: a GET value split at ';', a POST array's elements in text form
 * (a nested array joined by ','; a scalar is a one-item list), sized from the value: nothing is
 * cut. 1 with the items (free l->item and l->text), 0 when absent, -1 after answering. */
typedef struct opt_list {
    char **item;
    uint32_t n;
    char *text;
} opt_list;

static int read_list(gp_osrm_req *q, const char *name, opt_list *l) {
    memset(l, 0, sizeof *l);
    const cJSON *v = q->body ? cJSON_GetObjectItemCaseSensitive(q->body, name) : NULL;
    const char *qv = q->body ? NULL : gp_req_query(q->r, name);
    if (cJSON_IsString(v)) qv = v->valuestring, v = NULL; /* OSRM's text form, as in a URL */
    if (!v && !qv) return 0;
    /* URL and body limits bound the counts far below 2^32 */
    size_t n = 1, len = qv ? strlen(qv) : 0;
    for (const char *c = qv; c && *c; c++) n += *c == ';';
    const cJSON *e = v, *end = NULL;
    if (v && cJSON_IsArray(v)) e = v->child, n = (size_t)cJSON_GetArraySize(v);
    else if (v) end = v->next;
    for (const cJSON *x = e; v && x != end; x = x->next) {
        long w = text_len(x);
        if (w < 0) {
            gp_osrm_error(q->r, 400, "InvalidQuery",
                          "body field '%s' must be a number, string, boolean, null or an array of "
                          "them",
                          name);
            return -1;
        }
        len += (size_t)w + 1;
    }
    l->item = malloc(sizeof *l->item * (n ? n : 1));
    l->text = malloc(len + 1);
    if (!l->item || !l->text) {
        free(l->item);
        free(l->text);
        memset(l, 0, sizeof *l);
        gp_osrm_error(q->r, 500, "InternalError", "out of memory");
        return -1;
    }
    if (qv) {
        memcpy(l->text, qv, len + 1);
        l->n = split(l->text, ';', l->item, (uint32_t)n);
        return 1;
    }
    size_t k = 0;
    for (const cJSON *x = e; x != end; x = x->next) {
        int w = json_text(x, l->text + k, len + 1 - k, ',');
        l->item[l->n++] = l->text + k;
        k += (size_t)(w < 0 ? 0 : w) + 1;
    }
    return 1;
}

static void free_list(opt_list *l) {
    free(l->item);
    free(l->text);
}

int gp_osrm_parse_double(const char *s, double *out) {
    char *end = NULL;
    if (!*s) return -1;
    *out = strtod(s, &end);
    return *end || !isfinite(*out) ? -1 : 0;
}

/* 1 when c is an array of [lon, lat] arrays of two numbers each: nested arrays ([[7.4, [43.7]]])
 * flattened to the same text as [[7.4, 43.7]] were accepted. */
static int pairs_only(const cJSON *c) {
    if (!cJSON_IsArray(c)) return 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, c) {
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 || !cJSON_IsNumber(it->child) ||
            !cJSON_IsNumber(it->child->next))
            return 0;
    }
    return 1;
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
            if (!comma || (*comma = '\0', gp_osrm_parse_double(s, &lon) ||
                                              gp_osrm_parse_double(comma + 1, &lat))) {
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

/* The options each OSRM service knows, as osrm-routed v5/v6 parses them (its grammar answers any
 * other name with InvalidQuery): the ones every service shares, then each service's own. The one
 * table of them (docs/osrm.md lists the same). */
static const char common_opts[] =
    " bearings radiuses generate_hints hints approaches exclude snapping skip_waypoints "
    "vehicle_height vehicle_width vehicle_length vehicle_weight vehicle_axleload ";
static const struct {
    const char *service; /* the path's first segment */
    const char *opts;    /* its own options, space-separated with a space at each end */
} service_opts[] = {
    {"route", " alternatives steps annotations geometries overview continue_straight waypoints "},
    {"table", " sources destinations annotations fallback_speed fallback_coordinate "
              "scale_factor coordinates "}, /* coordinates: the POST body's */
    {"nearest", " number "},
    {"trip", " roundtrip source destination steps annotations geometries overview "},
    {"match", " timestamps gaps tidy waypoints steps annotations geometries overview "
              "coordinates "},
};

/* The service's option list (NULL for a path that is no OSRM service). */
static const char *opts_of(const char *service) {
    for (size_t i = 0; i < sizeof service_opts / sizeof service_opts[0]; i++)
        if (!strcmp(service_opts[i].service, service)) return service_opts[i].opts;
    return NULL;
}

int gp_osrm_option_known(const char *service, const char *name) {
    const char *own = opts_of(service);
    size_t len = strlen(name);
    if (!len || strchr(name, ' ')) return 0;
    for (int k = 0; k < 2; k++) {
        const char *t = k ? own : common_opts;
        for (const char *f = t ? strstr(t, name) : NULL; f; f = strstr(f + 1, name))
            if (f[-1] == ' ' && f[len] == ' ') return 1;
    }
    return 0;
}

typedef struct unknown_acc {
    const char *service;
    char names[256];
    unsigned count;
} unknown_acc;

static void note_unknown(unknown_acc *u, const char *name) {
    if (!*name || gp_osrm_option_known(u->service, name)) return; /* "?&a=1": no option */
    size_t k = strlen(u->names);
    if (u->count < 4 && k + strlen(name) + 8 < sizeof u->names)
        snprintf(u->names + k, sizeof u->names - k, "%s'%.64s'", k ? ", " : "", name);
    u->count++;
}

static void query_arg(void *ctx, const char *name, const char *value) {
    (void)value;
    note_unknown(ctx, name);
}

/* Answers 400 InvalidQuery naming the options (query string or POST body fields) the request's
 * service does not know, as osrm-routed refuses them; 1 when there is none. */
static int check_options(gp_osrm_req *q) {
    const char *path = gp_req_path(q->r);
    char service[16] = "";
    if (path && path[0] == '/') {
        size_t k = strcspn(path + 1, "/");
        if (k < sizeof service) memcpy(service, path + 1, k), service[k] = '\0';
    }
    if (!opts_of(service)) return 1; /* not called from an OSRM service path */
    unknown_acc u;
    memset(&u, 0, sizeof u);
    u.service = service;
    if (q->body) {
        const cJSON *f;
        cJSON_ArrayForEach(f, q->body) note_unknown(&u, f->string ? f->string : "");
    }
    gp_req_query_each(q->r, query_arg, &u);
    if (!u.count) return 1;
    gp_osrm_error(q->r, 400, "InvalidQuery",
                  "unknown option%s %s%s: the %s service takes%sand%s(as OSRM)",
                  u.count > 1 ? "s" : "", u.names, u.count > 4 ? " ..." : "", service,
                  opts_of(service), common_opts);
    return 0;
}

/* exclude= and vehicle_*: q->g becomes the metric (engine/metric.h) of the graph asked for. 1,
 * or 0 after answering 400 InvalidValue naming the parameter. */
static int metric_opts(gp_osrm_req *q) {
    char buf[128];
    const char *v;
    gp_err err;
    if ((v = gp_osrm_opt(q, "exclude", buf, sizeof buf)) && *v &&
        gp_metric_parse_exclude(q->g, v, 1, &q->key.exclude, &err)) {
        gp_osrm_error(q->r, 400, "InvalidValue", "%s", err.msg);
        return 0;
    }
    for (int k = 0; k < GP_LIMITS; k++)
        if ((v = gp_osrm_opt(q, gp_metric_vehicle_param(k), buf, sizeof buf)) &&
            gp_metric_parse_vehicle(k, v, &q->key.veh[k], &err)) {
            gp_osrm_error(q->r, 400, "InvalidValue", "%s", err.msg);
            return 0;
        }
    if (gp_metric_key_empty(&q->key)) return 1;
    gp_graph *m = NULL;
    if (gp_metric_get(gp_http_engine(), q->g, &q->key, &m, &err)) {
        gp_osrm_error_err(q->r, &err);
        return 0;
    }
    q->base = q->g;
    q->g = m;
    return 1;
}

void gp_osrm_closed_why(gp_osrm_req *q, const gp_snap *a, const gp_snap *b, char *buf,
                        size_t size) {
    buf[0] = '\0';
    if (!q->base) return;
    gp_engine *e = gp_http_engine();
    gp_err err;
    gp_snap_route rt;
    int none = gp_engine_route_snap(e, q->base, a, b, GP_P2P_AUTO, &rt, &err) || rt.dist == GP_INF;
    gp_snap_route_free(&rt);
    if (none) return;
    /* the one part of the key that alone leaves no route, else the whole key */
    gp_metric_key parts[3 + GP_LIMITS];
    unsigned np = 0;
    for (unsigned bit = 1; bit <= 4; bit <<= 1)
        if (q->key.exclude & bit) parts[np++] = (gp_metric_key){.exclude = bit};
    for (int k = 0; k < GP_LIMITS; k++)
        if (q->key.veh[k]) {
            memset(&parts[np], 0, sizeof parts[np]);
            parts[np++].veh[k] = q->key.veh[k];
        }
    for (unsigned i = 0; np > 1 && i < np; i++) {
        gp_graph *m = NULL;
        if (gp_metric_get(e, q->base, &parts[i], &m, &err)) continue;
        none = gp_engine_route_snap(e, m, a, b, GP_P2P_AUTO, &rt, &err) || rt.dist == GP_INF;
        gp_snap_route_free(&rt);
        gp_graph_unref(m);
        if (none) {
            gp_metric_key_text(&parts[i], buf, size);
            return;
        }
    }
    gp_metric_key_text(&q->key, buf, size);
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
    if (!check_options(q)) return 0;
    char buf[64];
    const char *v;
    if (!coords) {
        const cJSON *c = q->body ? cJSON_GetObjectItemCaseSensitive(q->body, "coordinates") : NULL;
        long len = pairs_only(c) ? text_len(c) : -1; /* sized from the value */
        char *text = len > 0 ? malloc((size_t)len + 2) : NULL;
        if (!text || json_text(c, text, (size_t)len + 2, ';') <= 0) {
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
    char why[1024];
    int pick = gp_osrm_pick_graph(profile ? profile : "", q->lon, q->lat, q->n, &q->g,
                                  q->graph_name, why, sizeof why);
    if (pick) {
        gp_osrm_error(r, 400, pick == GP_OSRM_PICK_NONE ? "NoSegment" : "InvalidQuery", "%s%s",
                      pick == GP_OSRM_PICK_NONE ? "Could not find a matching segment for " : "",
                      why);
        return 0;
    }
    if (gp_osrm_no_durations(q->g)) {
        gp_osrm_error(r, 400, "InvalidQuery",
                      "graph '%s' has no travel times: its weights are %s (a router topology, "
                      "format %s), and the OSRM services answer durations in seconds; ask "
                      "/v1/graphs/%s/route or /table for its costs",
                      q->graph_name, q->g->unit_name, q->g->format, q->graph_name);
        return 0;
    }
    if (!q->g->lon || !q->g->spatial) {
        gp_osrm_error(r, 400, "InvalidQuery", "graph '%s' has no coordinates", q->graph_name);
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
    if (!metric_opts(q)) return 0;
    if ((v = gp_osrm_opt(q, "snapping", buf, sizeof buf))) {
        q->snap_any = !strcmp(v, "any");
        if (!q->snap_any && strcmp(v, "default")) {
            gp_osrm_error(r, 400, "InvalidOptions", "snapping must be default or any");
            return 0;
        }
    }
    return 1;
}

void gp_osrm_req_free(gp_osrm_req *q) {
    if (!q) return;
    free(q->lon);
    free(q->lat);
    free(q->snap);
    free(q->bearing);
    gp_graph_unref(q->g);
    gp_graph_unref(q->base);
    memset(q, 0, sizeof *q);
}

/* Reads a per-coordinate list option ("a;b;;c", empty items allowed): none or one item per
 * coordinate. 1 (l->n = 0 when absent), or 0 after answering. */
static int per_coord(gp_osrm_req *q, const char *name, opt_list *l) {
    int rc = read_list(q, name, l);
    if (rc <= 0) return rc == 0;
    if (l->n != q->n) {
        gp_osrm_error(q->r, 400, "InvalidOptions",
                      "%s has %u items for %u coordinates (one per coordinate, ';'-separated)",
                      name, l->n, q->n);
        free_list(l);
        memset(l, 0, sizeof *l);
        return 0;
    }
    return 1;
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

/* Bearing of travel along s->arc at the snapped position: toward the arc's next point, or, at the
 * arc's very end, along its last piece. */
static double arc_bearing_at(const gp_graph *g, const gp_snap *s) {
    gp_pts p;
    memset(&p, 0, sizeof p);
    double b = 0;
    int found = 0;
    if (gp_arc_points(g, s->arc, s->frac, 1, &p) == 0)
        for (size_t i = 1; i < p.n && !found; i++)
            if (p.lon[i] != p.lon[0] || p.lat[i] != p.lat[0]) {
                b = gp_bearing_deg(p.lon[0], p.lat[0], p.lon[i], p.lat[i]);
                found = 1;
            }
    gp_pts_free(&p);
    memset(&p, 0, sizeof p);
    if (!found && gp_arc_points(g, s->arc, 0, s->frac, &p) == 0)
        for (size_t i = p.n; i-- > 1 && !found;)
            if (p.lon[i - 1] != p.lon[p.n - 1] || p.lat[i - 1] != p.lat[p.n - 1]) {
                b = gp_bearing_deg(p.lon[i - 1], p.lat[i - 1], p.lon[p.n - 1], p.lat[p.n - 1]);
                found = 1;
            }
    gp_pts_free(&p);
    return b;
}

/* b within range degrees of want, b in whole degrees (as OSRM's CheckInBounds takes it). */
static int bearing_ok(double b, double want, double range) {
    double d = fabs(fmod(round(b) - want + 540, 360) - 180);
    return d <= range;
}

/* The roads a coordinate may snap to: within `range` degrees of bearing `want` (want < 0: any) in
 * one of its directions of travel, and on big[]'s nodes when big is set. */
typedef struct snap_filter {
    double want, range;
    const uint8_t *big;
} snap_filter;

static int snap_ok(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                   double a_lat, double b_lon, double b_lat) {
    const snap_filter *f = ctx;
    /* a metric's closed road (both directions) is no place to start or end (as OSRM's exclude) */
    if (g->closed && g->w[arc] == GP_W_CLOSED) {
        uint32_t r = gp_graph_reverse_arc(g, arc);
        if (r == GP_NONE || g->w[r] == GP_W_CLOSED) return 0;
    }
    if (f->big && !gp_snap_big_filter((void *)f->big, g, arc, tail, a_lon, a_lat, b_lon, b_lat))
        return 0;
    if (f->want < 0) return 1;
    double b = gp_bearing_deg(a_lon, a_lat, b_lon, b_lat);
    if (bearing_ok(b, f->want, f->range)) return 1;
    return bearing_ok(b + 180, f->want, f->range) && gp_graph_reverse_arc(g, arc) != GP_NONE;
}

int gp_osrm_bearing_fits(const gp_graph *g, const gp_snap *s, double want, double range) {
    if (s->arc == GP_NONE) return 1;
    if (bearing_ok(arc_bearing_at(g, s), want, range)) return 1;
    gp_snap t = *s;
    t.arc = gp_graph_reverse_arc(g, s->arc);
    t.frac = 1 - s->frac;
    return t.arc != GP_NONE && bearing_ok(arc_bearing_at(g, &t), want, range);
}

/* What of the request's key closes arc a of the graph asked for ("vehicle_height=3.9"). */
static void closed_by(const gp_osrm_req *q, uint32_t a, char *buf, size_t size) {
    gp_metric_key part;
    for (unsigned bit = 1; bit <= 4; bit <<= 1) {
        memset(&part, 0, sizeof part);
        part.exclude = q->key.exclude & bit;
        if (part.exclude && gp_metric_arc_closed(q->base, a, &part)) {
            gp_metric_key_text(&part, buf, size);
            return;
        }
    }
    for (int k = 0; k < GP_LIMITS; k++) {
        memset(&part, 0, sizeof part);
        part.veh[k] = q->key.veh[k];
        if (part.veh[k] && gp_metric_arc_closed(q->base, a, &part)) {
            gp_metric_key_text(&part, buf, size);
            return;
        }
    }
    gp_metric_key_text(&q->key, buf, size);
}

/* With a metric, coordinate i snaps to the nearest road the request may use (snap_ok), which
 * must lie no farther than GP_OSRM_CLOSED_SNAP_M beyond the nearest road of all: when the nearest
 * road is closed and no open one lies that near, answers 400 NoRoute naming what closes it and
 * returns 0. */
#define GP_OSRM_CLOSED_SNAP_M 1000.0
static int metric_near(gp_osrm_req *q, uint32_t i, double radius) {
    gp_snap s0;
    gp_err err;
    if (gp_snap_point(q->base, q->lon[i], q->lat[i], radius, &s0, &err)) return 1; /* later */
    double near = s0.dist_m + GP_OSRM_CLOSED_SNAP_M;
    gp_snap s1;
    if (gp_snap_point_if(q->g, q->lon[i], q->lat[i], near < radius ? near : radius, snap_ok,
                         &(snap_filter){-1, 180, NULL}, &s1, &err) != GP_ENOTFOUND)
        return 1;
    char why[128] = "";
    if (s0.arc != GP_NONE) closed_by(q, s0.arc, why, sizeof why);
    else gp_metric_key_text(&q->key, why, sizeof why);
    gp_osrm_error(q->r, 400, "NoRoute",
                  "Impossible route from coordinate %u: %s closes the road it lies on (%.0f m "
                  "away) and no road open to it lies within %.0f m more",
                  i, why, s0.dist_m, GP_OSRM_CLOSED_SNAP_M);
    return 0;
}

int gp_osrm_snap_all(gp_osrm_req *q) {
    opt_list rl, bl, al, hl;
    memset(&rl, 0, sizeof rl);
    bl = al = hl = rl;
    int ok = 0;
    q->snap = calloc(q->n ? q->n : 1, sizeof *q->snap);
    /* OSRM's phantom nodes: the nearest road, and the nearest on a big component (alt) */
    gp_snap *alt = calloc(q->n ? q->n : 1, sizeof *alt);
    double *wants = q->bearing = malloc(sizeof *wants * (q->n ? q->n : 1) * 2);
    int *approaches = malloc(sizeof *approaches * (q->n ? q->n : 1));
    const uint32_t *comp = NULL;
    const uint8_t *big = NULL;
    int all_tiny = 1, one_comp = 1;
    if (!q->snap_any && !gp_snap_components(q->g, &comp, &big)) big = NULL;
    if (!q->snap || !alt || !wants || !approaches) {
        gp_osrm_error(q->r, 500, "InternalError", "out of memory");
        goto done;
    }
    /* hints are counted and not needed: gpath snaps again (as fast as decoding a hint) */
    if (!per_coord(q, "radiuses", &rl) || !per_coord(q, "bearings", &bl) ||
        !per_coord(q, "approaches", &al) || !per_coord(q, "hints", &hl))
        goto done;
    char **rp = rl.item, **bp = bl.item, **ap = al.item;
    int hr = rl.n > 0, hb = bl.n > 0, ha = al.n > 0;
    double def_radius = (double)gp_http_config()->osrm_default_radius_m;
    if (def_radius <= 0) def_radius = 4e7; /* unlimited: more than any distance on Earth */
    for (uint32_t i = 0; i < q->n; i++) {
        double radius = def_radius, want = -1, range = 180;
        if (hr && *rp[i] && strcmp(rp[i], "unlimited")) {
            if (gp_osrm_parse_double(rp[i], &radius) || radius < 0) {
                gp_osrm_error(q->r, 400, "InvalidOptions",
                              "radiuses[%u] must be a non-negative number or 'unlimited'", i);
                goto done;
            }
        }
        if (hb && *bp[i]) {
            char *c = strchr(bp[i], ',');
            if (!c ||
                (*c = '\0',
                 gp_osrm_parse_double(bp[i], &want) || gp_osrm_parse_double(c + 1, &range)) ||
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
        snap_filter sf = {want, range, NULL};
        if (q->base && !metric_near(q, i, radius)) goto done;
        /* bearings choose among the roads within the radius, nearest first (as OSRM) */
        int rc = gp_snap_point_if(q->g, q->lon[i], q->lat[i], radius,
                                  want >= 0 || q->g->closed ? snap_ok : NULL, &sf, s, &err);
        if (rc == GP_ENOTFOUND) {
            gp_osrm_error(q->r, 400, "NoSegment",
                          "Could not find a matching segment for coordinate "
                          "%u: %s%s",
                          i, err.msg,
                          want >= 0 ? " (within the bearing range and the radius)" : "");
            goto done;
        }
        if (rc) {
            gp_osrm_error_err(q->r, &err);
            goto done;
        }
        alt[i] = *s;
        if (big && !gp_snap_in_big(q->g, s, big)) {
            sf.big = big; /* no big component within reach: alt stays the nearest road */
            if (gp_snap_point_if(q->g, q->lon[i], q->lat[i], radius, snap_ok, &sf, &alt[i], &err))
                alt[i] = *s;
        }
        if (big) {
            uint32_t c = comp[s->arc != GP_NONE ? gp_graph_arc_tail(q->g, s->arc) : s->node];
            uint32_t c0 = comp[q->snap[0].arc != GP_NONE ? gp_graph_arc_tail(q->g, q->snap[0].arc)
                                                         : q->snap[0].node];
            all_tiny &= !gp_snap_in_big(q->g, s, big);
            one_comp &= c == c0;
        }
        wants[2 * i] = want;
        wants[2 * i + 1] = range;
        approaches[i] = approach;
    }
    /* OSRM's rule: when every nearest road lies in one and the same small component, all keep
     * it; otherwise each takes the nearest road on a big component within its radius */
    for (uint32_t i = 0; big && !(all_tiny && one_comp) && i < q->n; i++) q->snap[i] = alt[i];
    for (uint32_t i = 0; i < q->n; i++) {
        gp_snap *s = &q->snap[i];
        double want = wants[2 * i], range = wants[2 * i + 1];
        int approach = approaches[i];
        if (s->arc == GP_NONE) continue; /* snapped onto a node: no direction to restrict */
        if (q->g->closed && s->rarc != GP_NONE &&
            (q->g->w[s->arc] == GP_W_CLOSED) != (q->g->w[s->rarc] == GP_W_CLOSED))
            keep_direction(s, q->g->w[s->arc] == GP_W_CLOSED);
        if (want >= 0) {
            int fwd = bearing_ok(arc_bearing_at(q->g, s), want, range);
            int bwd = 0;
            if (s->rarc != GP_NONE) {
                gp_snap t = *s;
                keep_direction(&t, 1);
                bwd = bearing_ok(arc_bearing_at(q->g, &t), want, range);
            }
            /* (neither at a piece's very end, where the road bends: both directions stay) */
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
    free(alt);
    free(approaches);
    free_list(&rl);
    free_list(&bl);
    free_list(&al);
    free_list(&hl);
    return ok;
}

/* Reads a list item as an index below n: decimal digits only, leading zeros allowed (OSRM reads
 * them as numbers). */
static int parse_index(const char *s, uint32_t n, uint32_t *out) {
    uint64_t x = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        x = x * 10 + (uint64_t)(*s - '0');
        if (x >= n) return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

int gp_osrm_index_list(gp_osrm_req *q, const char *name, uint32_t n, uint32_t **idx, uint32_t *k) {
    *idx = NULL;
    *k = n;
    opt_list l;
    int rc = read_list(q, name, &l);
    if (rc <= 0) return rc == 0;
    if (l.n == 1 && !strcmp(l.item[0], "all")) {
        free_list(&l);
        return 1;
    }
    uint32_t *out = NULL;
    if (l.n == 0) {
        gp_osrm_error(q->r, 400, "InvalidOptions", "%s: an empty list (indexes or all)", name);
    } else if (l.n > n) {
        gp_osrm_error(q->r, 400, "InvalidOptions",
                      "%s: %u entries for %u coordinates (at most one per coordinate)", name, l.n,
                      n);
    } else if (!(out = malloc(sizeof *out * l.n))) {
        gp_osrm_error(q->r, 500, "InternalError", "out of memory");
    } else {
        for (uint32_t i = 0; i < l.n; i++) {
            if (parse_index(l.item[i], n, &out[i])) {
                size_t len = strlen(l.item[i]);
                gp_osrm_error(q->r, 400, "InvalidOptions",
                              "%s[%u] = '%.32s%s' is not an index of the %u coordinates (0 to %u)",
                              name, i, l.item[i], len > 32 ? "..." : "", n, n ? n - 1 : 0);
                free(out);
                out = NULL;
                break;
            }
        }
    }
    if (out) *k = l.n;
    *idx = out;
    free_list(&l);
    return out != NULL;
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
    /* literal keys: gp_json_add_* (a match answers a waypoint a point) */
    gp_json_add_number(w, "distance", gp_round_unit(s->dist_m, 1e-6));
    gp_json_add_string(w, "name", snap_name(q->g, s));
    cJSON *loc = gp_json_add_array(w, "location");
    cJSON_AddItemToArray(loc, cJSON_CreateNumber(gp_round_unit(s->lon, 1e-6)));
    cJSON_AddItemToArray(loc, cJSON_CreateNumber(gp_round_unit(s->lat, 1e-6)));
    return w;
}

void gp_osrm_waypoint_write(gp_json_out *b, const gp_osrm_req *q, const gp_snap *s) {
    gp_json_put_lit(b, "{");
    if (q->generate_hints) {
        char hint[32];
        make_hint(q->g, s, hint);
        gp_json_put_lit(b, "\"hint\":");
        gp_json_put_str(b, hint);
        gp_json_put_lit(b, ",");
    }
    gp_json_put_lit(b, "\"distance\":");
    gp_json_put_num(b, gp_round_unit(s->dist_m, 1e-6));
    gp_json_put_lit(b, ",\"name\":");
    gp_json_put_str(b, snap_name(q->g, s));
    gp_json_put_lit(b, ",\"location\":[");
    gp_json_put_num(b, gp_round_unit(s->lon, 1e-6));
    gp_json_put_lit(b, ",");
    gp_json_put_num(b, gp_round_unit(s->lat, 1e-6));
    gp_json_put_lit(b, "]");
}
