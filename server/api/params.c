/* params.c - the /v1 API's parameter layer (contract in params.h): one table-driven parser for
 * the query string and the JSON body, strict value parsers, and the resolution of places and
 * routers against the request's graph.
 */
#include "server/api/params.h"

#include "server/api/suggest.h"

#include "graph/parallel.h"
#include "graph/spatial.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- strict parsers ---- */

int gp_parse_i64(const char *s, int64_t *out) {
    if (!s) return -1;
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    if (*p < '0' || *p > '9') return -1;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return -1;
    errno = 0;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = x;
    return 0;
}

/* Length of the strict number at s (0 when none): sign, digits[.digits], exponent. */
static size_t num_len(const char *s) {
    size_t i = 0, d = 0;
    if (s[i] == '-' || s[i] == '+') i++;
    while (s[i] >= '0' && s[i] <= '9') i++, d++;
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9') i++, d++;
    }
    if (!d) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1, e = 0;
        if (s[j] == '-' || s[j] == '+') j++;
        while (s[j] >= '0' && s[j] <= '9') j++, e++;
        if (e) i = j;
    }
    return i;
}

static int num_at(const char *s, size_t len, double *out) {
    char buf[64];
    if (len == 0 || len >= sizeof buf || num_len(s) != len) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    errno = 0;
    double x = strtod(buf, NULL);
    if (!isfinite(x) || errno == ERANGE) return -1;
    *out = x;
    return 0;
}

int gp_parse_num(const char *s, double *out) { return s ? num_at(s, strlen(s), out) : -1; }

int gp_parse_lonlat(const char *s, double *lon, double *lat, const char *what, gp_err *err) {
    const char *comma = s ? strchr(s, ',') : NULL;
    double x, y;
    if (!comma || num_at(s, (size_t)(comma - s), &x) || gp_parse_num(comma + 1, &y))
        return gp_err_set(err, GP_EINVAL,
                          "'%s' must be a node id or a coordinate lon,lat (longitude first, "
                          "decimal degrees), got '%.64s'",
                          what, s ? s : "");
    if (x < -180 || x > 180 || y < -90 || y > 90)
        return gp_err_set(err, GP_EINVAL,
                          "'%s': %.64s is not a coordinate: longitude comes first and lies in "
                          "[-180, 180], latitude in [-90, 90]",
                          what, s);
    *lon = x;
    *lat = y;
    return GP_OK;
}

int gp_parse_place(const char *s, gp_place *out, const char *what, gp_err *err) {
    memset(out, 0, sizeof *out);
    if (s && strchr(s, ',')) {
        out->is_coord = 1;
        return gp_parse_lonlat(s, &out->lon, &out->lat, what, err);
    }
    if (gp_parse_i64(s, &out->id))
        return gp_err_set(
            err, GP_EINVAL,
            "'%s' must be a node id (an integer) or a coordinate lon,lat, got '%.64s'", what,
            s ? s : "");
    return GP_OK;
}

int gp_parse_places(const char *s, gp_place **out, uint32_t *count, const char *what, gp_err *err) {
    size_t n = 1;
    for (const char *q = s; *q; q++) n += *q == ';';
    gp_place *list = calloc(n, sizeof *list);
    if (!list) return gp_err_set(err, GP_ENOMEM, "out of memory");
    const char *q = s;
    for (size_t k = 0; k < n; k++) {
        const char *semi = strchr(q, ';');
        size_t l = semi ? (size_t)(semi - q) : strlen(q);
        char item[96], name[80];
        snprintf(name, sizeof name, "%s[%zu]", what, k);
        if (l >= sizeof item) l = sizeof item - 1;
        memcpy(item, q, l);
        item[l] = 0;
        if (gp_parse_place(item, &list[k], name, err)) {
            free(list);
            return err->code;
        }
        q = semi ? semi + 1 : q + l;
    }
    *out = list;
    *count = (uint32_t)n;
    return GP_OK;
}

int gp_json_i64(const cJSON *v, int64_t min, int64_t max, int64_t *out, const char *what,
                gp_err *err) {
    if (!cJSON_IsNumber(v)) return gp_err_set(err, GP_EPARSE, "'%s' must be an integer", what);
    double d = v->valuedouble;
    /* range first: converting a double outside int64 is undefined behaviour */
    if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return gp_err_set(err, GP_EINVAL, "'%s' must be an integer in [%lld, %lld], got %g", what,
                          (long long)min, (long long)max, d);
    int64_t x = (int64_t)d;
    if (x < min || x > max)
        return gp_err_set(err, GP_EINVAL, "'%s' must be in [%lld, %lld], got %lld", what,
                          (long long)min, (long long)max, (long long)x);
    *out = x;
    return GP_OK;
}

int gp_json_num(const cJSON *v, double min, double max, double *out, const char *what,
                gp_err *err) {
    if (!cJSON_IsNumber(v)) return gp_err_set(err, GP_EPARSE, "'%s' must be a number", what);
    double d = v->valuedouble;
    if (!isfinite(d) || d < min || d > max)
        return gp_err_set(err, GP_EINVAL, "'%s' must be a number in [%g, %g], got %.17g", what, min,
                          max, d);
    *out = d;
    return GP_OK;
}

int gp_json_place(const cJSON *v, gp_place *out, const char *what, gp_err *err) {
    memset(out, 0, sizeof *out);
    if (cJSON_IsString(v)) return gp_parse_place(v->valuestring, out, what, err);
    if (cJSON_IsArray(v)) {
        const cJSON *x = v->child, *y = x ? x->next : NULL;
        /* a wrong length or element type is a JSON fault; nested coordinate arrays (a list where
         * a place is expected) a refused value (docs/api.md "Errors") */
        int nested = cJSON_IsArray(x) || cJSON_IsArray(y);
        if (nested || cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(x) || !cJSON_IsNumber(y))
            return gp_err_set(err, nested ? GP_EINVAL : GP_EPARSE,
                              "'%s': a coordinate is [lon, lat], two numbers", what);
        char buf[80];
        snprintf(buf, sizeof buf, "%.17g,%.17g", x->valuedouble, y->valuedouble);
        out->is_coord = 1;
        if (!isfinite(x->valuedouble) || !isfinite(y->valuedouble))
            return gp_err_set(err, GP_EINVAL, "'%s': coordinates must be finite", what);
        return gp_parse_lonlat(buf, &out->lon, &out->lat, what, err);
    }
    if (cJSON_IsNumber(v)) return gp_json_i64(v, INT64_MIN, INT64_MAX, &out->id, what, err);
    return gp_err_set(err, GP_EPARSE,
                      "'%s' must be a node id (integer) or a coordinate ([lon, lat] or "
                      "\"lon,lat\")",
                      what);
}

int gp_json_router(const cJSON *v, gp_place *out, const char *what, gp_err *err) {
    memset(out, 0, sizeof *out);
    if (cJSON_IsString(v)) {
        if (!v->valuestring[0]) return gp_err_set(err, GP_EINVAL, "'%s' is empty", what);
        out->name = v->valuestring;
        return GP_OK;
    }
    if (cJSON_IsNumber(v)) return gp_json_i64(v, INT64_MIN, INT64_MAX, &out->id, what, err);
    return gp_err_set(err, GP_EPARSE, "'%s' must be a router id (integer) or name (string)", what);
}

int gp_json_only(const cJSON *obj, const char *what, gp_err *err, ...) {
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        va_list ap;
        va_start(ap, err);
        int known = 0;
        for (const char *n; !known && (n = va_arg(ap, const char *));)
            known = it->string && strcmp(it->string, n) == 0;
        va_end(ap);
        if (!known) {
            gp_err_set(err, GP_EINVAL, "unknown field '%s.%.64s'", what,
                       it->string ? it->string : "");
            return 0;
        }
    }
    return 1;
}

/* ---- hints for names other routers use ---- */

static const struct {
    const char *word, *alt, *why;
} hints[] = {
    {"destinations", "targets|to", "OSRM's destinations are gpath's targets"},
    {"destination", "to|targets", NULL},
    {"dest", "to", NULL},
    {"target", "to|targets", NULL},
    {"src", "source|from|sources", NULL},
    {"dst", "to|targets", NULL},
    {"origin", "from|source|sources", NULL},
    {"origins", "sources", NULL},
    {"coordinates", "from|sources", "one place per parameter: a node id or lon,lat"},
    {"start", "from|source", NULL},
    {"end", "to", NULL},
    {"alternatives", NULL,
     "/v1 answers the one shortest route; alternatives come from the OSRM service on the "
     "same server: /route/v1/{graph}/{lon,lat;lon,lat}?alternatives=true"},
    {"profile", NULL,
     "a graph has one cost model fixed when it is loaded (its weight_unit in GET "
     "/v1/graphs/{graph}); serve another graph for another profile"},
    {"costing", NULL,
     "a graph's costs are fixed when it is loaded (Valhalla's costing has no "
     "equivalent)"},
    {"vehicle", NULL, "a graph's costs are fixed when it is loaded"},
    {"steps", NULL,
     "/v1 routes have 'path' (node ids) and 'geometry'; turn-by-turn steps come from "
     "the OSRM service on the same server: /route/v1/{graph}/{lon,lat;lon,lat}?steps=true"},
    {"instructions", NULL,
     "turn-by-turn instructions come from the OSRM service on the same server: "
     "/route/v1/{graph}/{lon,lat;lon,lat}?steps=true"},
    {"overview", NULL,
     "/v1's geometry is the full GeoJSON LineString; /route/v1 has overview=simplified"},
    {"geometries", NULL,
     "/v1's geometry is GeoJSON; /route/v1 has geometries=polyline|polyline6|geojson"},
    {"points_encoded", NULL,
     "/v1's geometry is GeoJSON; /route/v1 has geometries=polyline|polyline6|geojson"},
    {"annotations", NULL,
     "answers always carry weight, weight_unit and, where the graph knows "
     "them, duration_s and length_m"},
    {"radiuses", "radius", "one radius in metres for every coordinate"},
    {"lat", NULL,
     "give a coordinate as one value lon,lat (longitude first, the OSRM order), "
     "e.g. from=7.4246,43.7384"},
    {"lon", NULL,
     "give a coordinate as one value lon,lat (longitude first), e.g. "
     "from=7.4246,43.7384"},
    {"lng", NULL, "give a coordinate as one value lon,lat (longitude first)"},
    {"latitude", NULL, "give a coordinate as one value lon,lat (longitude first)"},
    {"longitude", NULL, "give a coordinate as one value lon,lat (longitude first)"},
    {"point", NULL, "give a coordinate as one value lon,lat (longitude first) in from / to"},
    {"loc", NULL, "give a coordinate as one value lon,lat (longitude first) in from / to"},
    {"algorithm", "algo", NULL},
    {"k", "number", NULL},
    {"limit", "number", NULL},
    {"router_id", "router", NULL},
    {"max_dist", "max_weight", NULL},
};

static int allowed(const gp_endpoint *ep, const char *name, int in) {
    for (size_t i = 0; i < ep->nparams; i++)
        if (strcmp(ep->params[i].name, name) == 0 && (ep->params[i].in & in)) return 1;
    return 0;
}

static void unknown_msg(const gp_endpoint *ep, const char *name, int in, char *buf, size_t cap) {
    const char *where = in == GP_IN_QUERY ? "query parameter" : "body field";
    int k = snprintf(buf, cap, "unknown %s '%.64s'", where, name);
    const char *hint = NULL, *alt = NULL;
    char altbuf[32];
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (strcasecmp(hints[i].word, name) == 0) {
            hint = hints[i].why;
            /* the first alternative this endpoint accepts */
            for (const char *p = hints[i].alt; p && *p && !alt;) {
                const char *bar = strchr(p, '|');
                size_t l = bar ? (size_t)(bar - p) : strlen(p);
                if (l < sizeof altbuf) {
                    memcpy(altbuf, p, l);
                    altbuf[l] = 0;
                    if (allowed(ep, altbuf, GP_IN_ANY)) alt = altbuf;
                }
                p = bar ? bar + 1 : p + l;
            }
            break;
        }
    if (!alt && !hint) { /* a typo of an accepted name? */
        size_t best = 3;
        for (size_t i = 0; i < ep->nparams; i++) {
            size_t e = gp_edit_distance(name, ep->params[i].name);
            if (e < best && e < strlen(ep->params[i].name)) best = e, alt = ep->params[i].name;
        }
    }
    if (k > 0 && (size_t)k < cap && alt)
        k += snprintf(buf + k, cap - (size_t)k, " (did you mean '%s'?%s%s)", alt, hint ? " " : "",
                      hint ? hint : "");
    else if (k > 0 && (size_t)k < cap && hint)
        k += snprintf(buf + k, cap - (size_t)k, " (%s)", hint);
    if (k > 0 && (size_t)k < cap) {
        k += snprintf(buf + k, cap - (size_t)k, "; %s accepts ", ep->name);
        int any = 0;
        for (size_t i = 0; i < ep->nparams && k > 0 && (size_t)k < cap; i++) {
            if (!(ep->params[i].in & in)) continue;
            k += snprintf(buf + k, cap - (size_t)k, "%s%s", any ? ", " : "", ep->params[i].name);
            any = 1;
        }
        if (!any && k > 0 && (size_t)k < cap) snprintf(buf + k, cap - (size_t)k, "no %ss", where);
    }
}

/* ---- the table-driven parser ---- */

typedef struct pctx {
    const gp_endpoint *ep;
    gp_args *a;
    int code; /* first error: GP_HC_* (-1 none) */
    char msg[768];
} pctx;

static void fail(pctx *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void fail(pctx *c, int code, const char *fmt, ...) {
    if (c->code >= 0) return;
    c->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
}

static void fail_err(pctx *c, const gp_err *e, int in) {
    fail(c, e->code == GP_EPARSE && in == GP_IN_BODY ? GP_HC_INVALID_JSON : GP_HC_INVALID_QUERY,
         "%s", e->msg);
}

static int find_param(const gp_endpoint *ep, const char *name) {
    for (size_t i = 0; i < ep->nparams; i++)
        if (strcmp(ep->params[i].name, name) == 0) return (int)i;
    return -1;
}

/* Claims parameter `name` given in `in`; the index, or -1 after recording the error. */
static int claim(pctx *c, const char *name, int in) {
    int i = find_param(c->ep, name);
    if (i < 0 || !(c->ep->params[i].in & in)) {
        char m[700];
        unknown_msg(c->ep, name, in, m, sizeof m);
        fail(c, GP_HC_INVALID_QUERY, "%s", m);
        return -1;
    }
    gp_arg *v = &c->a->v[i];
    if (v->present) {
        fail(c, GP_HC_INVALID_QUERY, "'%s' is given more than once (%s)", name,
             v->in != in         ? "in the query string and in the body"
             : in == GP_IN_QUERY ? "repeated in the query string"
                                 : "twice in the body");
        return -1;
    }
    v->present = 1;
    v->in = in;
    return i;
}

static int choice(const char *choices, const char *s) {
    size_t n = strlen(s);
    int k = 0;
    for (const char *p = choices; *p; k++) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (l == n && strncmp(p, s, n) == 0) return k;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static void check_int(pctx *c, const gp_param *p, int64_t x) {
    if ((double)x < p->min || (double)x > p->max)
        fail(c, GP_HC_INVALID_QUERY, "'%s' must be in [%.0f, %.0f], got %lld", p->name, p->min,
             p->max, (long long)x);
}

static void check_num(pctx *c, const gp_param *p, double x) {
    if (x < p->min || x > p->max)
        fail(c, GP_HC_INVALID_QUERY, "'%s' must be in [%g, %g], got %g", p->name, p->min, p->max,
             x);
}

static void check_count(pctx *c, const gp_param *p, uint32_t n) {
    if (n == 0 || (double)n < p->min)
        fail(c, GP_HC_INVALID_QUERY, "'%s' must not be empty", p->name);
    else if (p->max > 0 && (double)n > p->max)
        fail(c, GP_HC_INVALID_QUERY, "'%s' has %u entries; at most %.0f", p->name, n, p->max);
}

static gp_place *list_alloc(pctx *c, gp_arg *v, size_t n) {
    v->list = calloc(n ? n : 1, sizeof *v->list);
    if (!v->list) fail(c, GP_HC_INTERNAL, "out of memory");
    return v->list;
}

static void parse_text(pctx *c, int i, const char *s) {
    const gp_param *p = &c->ep->params[i];
    gp_arg *v = &c->a->v[i];
    gp_err e;
    if (!s || !*s) {
        fail(c, GP_HC_INVALID_QUERY, "query parameter '%s' is empty", p->name);
        return;
    }
    switch (p->type) {
    case GP_PT_PLACE:
        if (gp_parse_place(s, &v->place, p->name, &e)) fail_err(c, &e, GP_IN_QUERY);
        break;
    case GP_PT_PLACES:
        if (gp_parse_places(s, &v->list, &v->nlist, p->name, &e)) fail_err(c, &e, GP_IN_QUERY);
        else check_count(c, p, v->nlist);
        break;
    case GP_PT_INT:
        if (gp_parse_i64(s, &v->i))
            fail(c, GP_HC_INVALID_QUERY, "query parameter '%s' must be an integer, got '%.64s'",
                 p->name, s);
        else check_int(c, p, v->i);
        break;
    case GP_PT_NUM:
        if (gp_parse_num(s, &v->d))
            fail(c, GP_HC_INVALID_QUERY, "query parameter '%s' must be a number, got '%.64s'",
                 p->name, s);
        else check_num(c, p, v->d);
        break;
    case GP_PT_ENUM:
        if ((v->e = choice(p->choices, s)) < 0)
            fail(c, GP_HC_INVALID_QUERY, "query parameter '%s' must be one of %s, got '%.64s'",
                 p->name, p->choices, s);
        break;
    case GP_PT_BOOL:
        if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes")) v->e = 1;
        else if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no")) v->e = 0;
        else
            fail(c, GP_HC_INVALID_QUERY, "query parameter '%s' must be true or false, got '%.64s'",
                 p->name, s);
        break;
    case GP_PT_STR:
        if (strlen(s) > (p->max > 0 ? (size_t)p->max : 256))
            fail(c, GP_HC_INVALID_QUERY, "query parameter '%s' is too long", p->name);
        v->s = s;
        break;
    case GP_PT_ROUTER: v->place.name = s; break;
    default: fail(c, GP_HC_INVALID_QUERY, "'%s' is not a query parameter", p->name);
    }
}

static void parse_json(pctx *c, int i, const cJSON *j) {
    const gp_param *p = &c->ep->params[i];
    gp_arg *v = &c->a->v[i];
    gp_err e;
    v->json = j;
    switch (p->type) {
    case GP_PT_PLACE:
        if (gp_json_place(j, &v->place, p->name, &e)) fail_err(c, &e, GP_IN_BODY);
        break;
    case GP_PT_PLACES: {
        if (!cJSON_IsArray(j)) {
            fail(c, GP_HC_INVALID_JSON, "'%s' must be an array of node ids or coordinates",
                 p->name);
            return;
        }
        int n = cJSON_GetArraySize(j), k = 0;
        if (!list_alloc(c, v, (size_t)n)) return;
        const cJSON *it;
        cJSON_ArrayForEach(it, j) {
            char what[80];
            snprintf(what, sizeof what, "%s[%d]", p->name, k);
            if (gp_json_place(it, &v->list[k], what, &e)) {
                fail_err(c, &e, GP_IN_BODY);
                return;
            }
            k++;
        }
        v->nlist = (uint32_t)n;
        check_count(c, p, v->nlist);
        break;
    }
    case GP_PT_INT:
        if (gp_json_i64(j, INT64_MIN, INT64_MAX, &v->i, p->name, &e)) fail_err(c, &e, GP_IN_BODY);
        else check_int(c, p, v->i);
        break;
    case GP_PT_NUM:
        if (gp_json_num(j, -INFINITY, INFINITY, &v->d, p->name, &e)) fail_err(c, &e, GP_IN_BODY);
        else check_num(c, p, v->d);
        break;
    case GP_PT_ENUM:
        if (!cJSON_IsString(j) || (v->e = choice(p->choices, j->valuestring)) < 0)
            fail(c, cJSON_IsString(j) ? GP_HC_INVALID_QUERY : GP_HC_INVALID_JSON,
                 "'%s' must be one of %s", p->name, p->choices);
        break;
    case GP_PT_BOOL:
        if (!cJSON_IsBool(j)) fail(c, GP_HC_INVALID_JSON, "'%s' must be true or false", p->name);
        v->e = cJSON_IsTrue(j);
        break;
    case GP_PT_STR:
        if (!cJSON_IsString(j) || !j->valuestring[0])
            fail(c, GP_HC_INVALID_JSON, "'%s' must be a non-empty string", p->name);
        else v->s = j->valuestring;
        break;
    case GP_PT_ROUTER:
        if (gp_json_router(j, &v->place, p->name, &e)) fail_err(c, &e, GP_IN_BODY);
        break;
    default: /* GP_PT_JSON: the handler checks it */ break;
    }
}

static void on_query(void *ctx, const char *name, const char *value) {
    pctx *c = ctx;
    if (c->code >= 0) return;
    int i = claim(c, name, GP_IN_QUERY);
    if (i >= 0) parse_text(c, i, value);
}

/* Offset just past the JSON value that starts at body (after blanks), or 0 when it is not an
 * object / array (the parser has accepted the body already; only its end is wanted here). */
static size_t json_end(const char *s, size_t len) {
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) i++;
    if (i == len || (s[i] != '{' && s[i] != '[')) return 0;
    int depth = 0, str = 0;
    for (; i < len; i++) {
        char ch = s[i];
        if (str) {
            if (ch == '\\') i++;
            else if (ch == '"') str = 0;
        } else if (ch == '"') {
            str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) return i + 1;
        }
    }
    return 0;
}

int gp_params_parse(const gp_param_src *src, const gp_endpoint *ep, gp_args *a, int *hcode,
                    char *msg, size_t cap) {
    memset(a, 0, sizeof *a);
    a->ep = ep;
    pctx c = {.ep = ep, .a = a, .code = -1};
    if (ep->nparams > GP_PARAMS_MAX) fail(&c, GP_HC_INTERNAL, "too many parameters declared");
    if (c.code < 0) src->query_each(src->req, on_query, &c);
    const cJSON *body = ep->body != GP_BODY_NONE ? src->json : NULL;
    if (c.code < 0 && ep->body == GP_BODY_NONE && strcmp(src->method, "GET") != 0) {
        /* a body nobody reads is refused, except an empty one or {} */
        size_t len = src->body_len, i = 0;
        const char *raw = src->body;
        char sig[3] = {0};
        for (int n = 0; i < len; i++)
            if (raw[i] != ' ' && raw[i] != '\t' && raw[i] != '\r' && raw[i] != '\n') {
                if (n == 2) break;
                sig[n++] = raw[i];
            }
        if (sig[0] && (i < len || strcmp(sig, "{}") != 0))
            fail(&c, GP_HC_INVALID_JSON,
                 "%s takes no request body (its parameters go in the query "
                 "string)",
                 ep->name);
    }
    if (c.code < 0 && ep->body == GP_BODY_REQUIRED && !body)
        fail(&c, GP_HC_INVALID_JSON, "request body must be a JSON object%s%s",
             ep->example ? ", e.g. " : "", ep->example ? ep->example : "");
    if (c.code < 0 && body) {
        size_t len = src->body_len;
        const char *raw = src->body;
        size_t end = json_end(raw, len);
        size_t k = end;
        while (k < len && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\r' || raw[k] == '\n'))
            k++;
        if (!cJSON_IsObject(body))
            fail(&c, GP_HC_INVALID_JSON, "request body must be a JSON object%s%s",
                 ep->example ? ", e.g. " : "", ep->example ? ep->example : "");
        else if (end == 0 || k < len)
            fail(&c, GP_HC_INVALID_JSON,
                 "request body has bytes after its JSON value (from byte %zu): send one JSON "
                 "object",
                 end);
        const cJSON *it;
        cJSON_ArrayForEach(it, body) {
            if (c.code >= 0) break;
            int i = claim(&c, it->string ? it->string : "", GP_IN_BODY);
            if (i >= 0) parse_json(&c, i, it);
        }
    }
    for (size_t i = 0; c.code < 0 && i < ep->nparams; i++)
        if (ep->params[i].required && !a->v[i].present)
            fail(&c, ep->params[i].in == GP_IN_BODY ? GP_HC_INVALID_JSON : GP_HC_INVALID_QUERY,
                 "missing %s '%s'",
                 ep->params[i].in == GP_IN_BODY ? "body field" : "query parameter",
                 ep->params[i].name);
    if (c.code >= 0) {
        gp_args_free(a);
        *hcode = c.code;
        snprintf(msg, cap, "%s", c.msg);
        return -1;
    }
    return GP_OK;
}

void gp_args_free(gp_args *a) {
    if (!a) return;
    for (size_t i = 0; i < GP_PARAMS_MAX; i++) {
        free(a->v[i].list);
        a->v[i].list = NULL;
    }
}

const gp_arg *gp_args_get(const gp_args *a, const char *name) {
    static const gp_arg none;
    int i = a->ep ? find_param(a->ep, name) : -1;
    return i >= 0 ? &a->v[i] : &none;
}

/* ---- resolution ---- */

int gp_place_snap(const gp_graph *g, const char *gname, const gp_place *p, const char *what,
                  double radius_m, gp_snap *out, int *hcode, char *msg, size_t cap) {
    if (!p->is_coord) {
        uint32_t v = gp_graph_index(g, p->id);
        if (v == GP_NONE) {
            *hcode = GP_HC_UNKNOWN_NODE;
            snprintf(msg, cap, "%s: node %lld is not in graph '%s'", what, (long long)p->id, gname);
            return -1;
        }
        gp_snap_at_node(g, v, out);
        return 0;
    }
    if (!g->lon) {
        *hcode = GP_HC_NO_COORDINATES;
        snprintf(msg, cap, "%s: graph '%s' has no coordinates; give a node id instead of %.6f,%.6f",
                 what, gname, p->lon, p->lat);
        return -1;
    }
    gp_err err;
    int rc = gp_snap_point(g, p->lon, p->lat, radius_m, out, &err);
    if (rc == GP_OK) return 0;
    *hcode = rc == GP_ENOTFOUND ? GP_HC_NO_SEGMENT
             : rc == GP_EINVAL  ? GP_HC_INVALID_QUERY
                                : gp_http_code_of(rc);
    snprintf(msg, cap, "%s: %s", what, err.msg);
    return -1;
}

typedef struct snap_job {
    const gp_graph *g;
    const char *gname, *field;
    const gp_place *list;
    double radius_m;
    gp_snap *s;
    uint8_t *bad;
} snap_job;

static void snap_range(void *ctx, uint64_t lo, uint64_t hi) {
    snap_job *j = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        int code;
        char msg[8];
        j->bad[i] = gp_place_snap(j->g, j->gname, &j->list[i], "", j->radius_m, &j->s[i], &code,
                                  msg, sizeof msg) != 0;
    }
}

gp_snap *gp_places_snap(const gp_graph *g, const char *gname, const gp_place *list, uint32_t n,
                        const char *field, double radius_m, int *hcode, char *msg, size_t cap) {
    gp_snap *s = malloc(sizeof *s * (n ? n : 1));
    uint8_t *bad = n >= 512 ? calloc(n, 1) : NULL;
    if (!s || (n >= 512 && !bad)) {
        free(s);
        free(bad);
        *hcode = GP_HC_INTERNAL;
        snprintf(msg, cap, "out of memory");
        return NULL;
    }
    /* many places (a large table): snapped on all CPUs first, then the first that fails (in
     * order) again on this thread for its message */
    if (bad) {
        snap_job j = {g, gname, field, list, radius_m, s, bad};
        gp_parallel_for_dynamic(n, 0, 0, snap_range, &j);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (bad && !bad[i]) continue;
        char what[64];
        snprintf(what, sizeof what, "%s[%u]", field, i);
        if (gp_place_snap(g, gname, &list[i], what, radius_m, &s[i], hcode, msg, cap)) {
            free(s);
            free(bad);
            return NULL;
        }
    }
    free(bad);
    return s;
}

uint64_t gp_max_distance_limit(const gp_graph *g, double d) {
    /* d / scale <= max_distance  <=>  x <= floor(max_distance * scale) for integer x; the epsilon
     * absorbs the binary representation of decimal limits (0.3 * 1000). */
    double x = floor(d * g->scale * (1 + 1e-12) + 1e-9);
    return x >= 1.8e19 ? GP_INF - 1 : (uint64_t)x;
}

uint32_t gp_router_lookup(const gp_graph *g, const char *text) {
    if (!text) return GP_NONE;
    for (uint32_t v = 0; g->names && v < g->n; v++)
        if (g->names[v] && strcmp(g->names[v], text) == 0) return v;
    int64_t id;
    return gp_parse_i64(text, &id) == 0 ? gp_graph_index(g, id) : GP_NONE;
}

/* The router named by text[0..len) into *id (external); 0 after filling err / hcode (HTTP's
 * UnknownNode, the router named `what`[k]). */
static int router_span(const gp_graph *g, const char *gname, const char *text, size_t len,
                       const char *what, int k, int64_t *id, int *hcode, gp_err *err) {
    char buf[256], w[160];
    if (len >= sizeof buf) len = sizeof buf - 1;
    memcpy(buf, text, len);
    buf[len] = 0;
    uint32_t v = gp_router_lookup(g, buf);
    if (v == GP_NONE) {
        snprintf(w, sizeof w, "%s[%d]", what, k);
        *hcode = GP_HC_UNKNOWN_NODE;
        err->code = GP_EINVAL;
        gp_unknown_router_msg(err->msg, sizeof err->msg, w, buf, gname);
        return 0;
    }
    *id = g->ext[v];
    return 1;
}

int gp_link_joined(const gp_graph *g, const char *what, int64_t u, int64_t v, char *msg,
                   size_t cap) {
    uint32_t iu = gp_graph_index(g, u), iv = gp_graph_index(g, v);
    if (gp_graph_find_arc(g, iu, iv) != GP_NONE || gp_graph_find_arc(g, iv, iu) != GP_NONE)
        return 1;
    const char *nu = gp_graph_name(g, iu), *nv = gp_graph_name(g, iv);
    snprintf(msg, cap, "%s: no link between %lld%s%s%s and %lld%s%s%s", what, (long long)u,
             nu ? " (" : "", nu ? nu : "", nu ? ")" : "", (long long)v, nv ? " (" : "",
             nv ? nv : "", nv ? ")" : "");
    return 0;
}

int gp_link_text(const gp_graph *g, const char *gname, const char *text, int with_cost,
                 const char *what, gp_link_change *out, int *hcode, gp_err *err) {
    const char *c1 = strchr(text, ','), *c2 = with_cost && c1 ? strrchr(text, ',') : NULL;
    const char *end2 = with_cost ? c2 : text + strlen(text);
    double cost = 0;
    *hcode = GP_HC_INVALID_QUERY;
    if (!c1 || (with_cost && (c2 == c1 || gp_parse_num(c2 + 1, &cost) || cost < 0)))
        return gp_err_set(err, GP_EINVAL, "%s: '%.128s': expected %s (routers by id or name)", what,
                          text, with_cost ? "U,V,COST with COST >= 0" : "U,V");
    *out = (gp_link_change){.down = !with_cost, .cost = cost};
    if (!router_span(g, gname, text, (size_t)(c1 - text), what, 0, &out->u, hcode, err) ||
        !router_span(g, gname, c1 + 1, (size_t)(end2 - c1 - 1), what, 1, &out->v, hcode, err))
        return GP_EINVAL;
    if (!gp_link_joined(g, what, out->u, out->v, err->msg, sizeof err->msg)) {
        *hcode = GP_HC_NOT_FOUND;
        return err->code = GP_ENOTFOUND;
    }
    return GP_OK;
}

void gp_unknown_router_msg(char *buf, size_t cap, const char *what, const char *text,
                           const char *gname) {
    snprintf(buf, cap, "%s: no router named or numbered '%.64s' in graph '%s'", what, text, gname);
}
