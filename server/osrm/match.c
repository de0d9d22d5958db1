/* match.c - map matching over HTTP: OSRM's GET /match/v1/{profile}/{coordinates} (and POST
 * /match/v1/{profile} with a JSON body), and gpath's batch POST /v1/graphs/{graph}/match (JSON
 * {"traces": [...]} or NDJSON, a trace a line), which answers every trace as /match/v1 does.
 *
 * The model is engine/match.h's; each matching's route is assembled from routes between its
 * consecutive matched positions exactly as /route/v1 builds legs (route.c: gp_osrm_leg_build,
 * gp_osrm_route_json: the same steps, annotations and geometry). Batch traces run in parallel on
 * the engine's CPU threads; on a CUDA engine, a batch of gpu_match_min_traces traces or more first
 * prepares every trace and runs the searches between consecutive points of all of them on the GPU
 * (gp_match_fill_cuda), then answers each from its table. docs/osrm.md (match) and docs/api.md (batch) document both.
 */
#include "server/osrm/osrm.h"

#include "engine/match.h"
#include "graph/parallel.h"
#include "graph/spatial.h"
#include "server/config.h"
#include "server/errors.h"
#include "server/http/json.h"
#include "server/osrm/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One trace as asked. */
typedef struct trace {
    uint32_t n;
    double *lon, *lat;
    double *ts;      /* n seconds, or NULL */
    double *radius;  /* n metres (NAN: default), or NULL */
    double *bearing; /* 2n (bearing, range), bearing < 0 none; or NULL */
} trace;

static void trace_free(trace *t) {
    if (!t) return;
    free(t->lon);
    free(t->lat);
    free(t->ts);
    free(t->radius);
    free(t->bearing);
    memset(t, 0, sizeof *t);
}

/* The options every trace of a request shares. */
typedef struct match_opts {
    gp_osrm_route_opts ro;
    int tidy, split;
    uint32_t *wp; /* waypoint indices, ascending, or NULL: every point */
    uint32_t nwp;
} match_opts;

/* A failure of one trace: HTTP status, OSRM code, message. */
typedef struct fail {
    int status;
    char code[32];
    char msg[320];
} fail;

static cJSON *fail_set(fail *f, int status, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static cJSON *fail_set(fail *f, int status, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    f->status = status;
    snprintf(f->code, sizeof f->code, "%s", code);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
    return NULL;
}

/* Checks a trace against the limits and the rules: counts, order of timestamps, radiuses. */
static int trace_check(const trace *t, fail *f) {
    const gp_config *cfg = gp_http_config();
    if (t->n < 2)
        return !!fail_set(f, 400, "InvalidQuery", "match needs at least 2 coordinates, got %u",
                          t->n);
    if ((long)t->n > cfg->osrm_max_match_size)
        return !!fail_set(f, 400, "TooBig",
                          "Too many trace coordinates: %u, the limit is %ld (osrm_max_match_size)",
                          t->n, cfg->osrm_max_match_size);
    for (uint32_t i = 0; t->ts && i < t->n; i++) {
        if (!isfinite(t->ts[i]) || t->ts[i] < 0)
            return !!fail_set(f, 400, "InvalidValue",
                              "timestamps[%u] must be a non-negative number of seconds", i);
        if (i && t->ts[i] < t->ts[i - 1])
            return !!fail_set(f, 400, "InvalidValue",
                              "timestamps must not decrease: timestamps[%u] = %.0f comes after "
                              "%.0f",
                              i, t->ts[i], t->ts[i - 1]);
    }
    for (uint32_t i = 0; t->radius && i < t->n; i++) {
        double r = t->radius[i];
        if (isnan(r)) continue;
        if (!(r >= 0) || !isfinite(r))
            return !!fail_set(f, 400, "InvalidValue",
                              "radiuses[%u] must be a non-negative number of metres", i);
        if (cfg->match_max_radius_m > 0 && r > (double)cfg->match_max_radius_m)
            return !!fail_set(f, 400, "TooBig",
                              "radiuses[%u] = %g m is over the limit of %ld m "
                              "(match_max_radius_m)",
                              i, r, cfg->match_max_radius_m);
    }
    return 1;
}

/* ---- numbers from a request: a GET list "a;b;c" or a POST array ---- */

/* Reads list option name as n numbers into *out (NULL when absent): GET "a;b;;c" (an empty item
 * NAN), POST [a, b, null, c]; "unlimited" reads as INFINITY where unlimited is set. 0 with f set
 * on a bad list. */
static int num_list(const char *text, const cJSON *arr, const char *name, uint32_t n, int unlimited,
                    double **out, fail *f) {
    *out = NULL;
    if (!text && !arr) return 1;
    double *v = malloc(sizeof *v * (n ? n : 1));
    if (!v) return !!fail_set(f, 500, "InternalError", "out of memory");
    uint32_t k = 0;
    if (arr) {
        if (!cJSON_IsArray(arr)) {
            free(v);
            return !!fail_set(f, 400, "InvalidOptions", "%s must be an array", name);
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, arr) {
            if (k == n) {
                k++;
                break;
            }
            if (cJSON_IsNumber(e)) v[k] = e->valuedouble;
            else if (cJSON_IsNull(e)) v[k] = NAN;
            else if (unlimited && cJSON_IsString(e) && !strcmp(e->valuestring, "unlimited"))
                v[k] = INFINITY;
            else {
                free(v);
                return !!fail_set(f, 400, "InvalidValue", "%s[%u] must be a number", name, k);
            }
            k++;
        }
    } else {
        const char *s = text;
        for (;;) {
            const char *e = strchr(s, ';');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            if (k < n) {
                char item[64];
                if (len >= sizeof item) len = sizeof item - 1;
                memcpy(item, s, len);
                item[len] = '\0';
                if (!len) v[k] = NAN;
                else if (unlimited && !strcmp(item, "unlimited")) v[k] = INFINITY;
                else if (gp_osrm_parse_double(item, &v[k])) {
                    free(v);
                    return !!fail_set(f, 400, "InvalidValue", "%s[%u] must be a number, got '%s'",
                                      name, k, item);
                }
            }
            k++;
            if (!e) break;
            s = e + 1;
        }
    }
    if (k != n) {
        free(v);
        return !!fail_set(f, 400, "InvalidOptions",
                          "%s has %u item%s but there are %u coordinates (one each)", name, k,
                          k == 1 ? "" : "s", n);
    }
    *out = v;
    return 1;
}

/* Bearings "b,r;;b,r" (GET) or [[b, r], null, ...] (POST) into 2n numbers. */
static int bearing_list(const char *text, const cJSON *arr, uint32_t n, double **out, fail *f) {
    *out = NULL;
    if (!text && !arr) return 1;
    double *v = malloc(sizeof *v * 2 * (n ? n : 1));
    if (!v) return !!fail_set(f, 500, "InternalError", "out of memory");
    uint32_t k = 0;
    int bad = 0;
    const cJSON *e = arr && cJSON_IsArray(arr) ? arr->child : NULL;
    const char *s = text;
    if (arr && !cJSON_IsArray(arr)) bad = 1;
    while (!bad && (arr ? e != NULL : s != NULL)) {
        double b = -1, r = 180;
        if (arr) {
            if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 &&
                cJSON_IsNumber(cJSON_GetArrayItem(e, 0)) &&
                cJSON_IsNumber(cJSON_GetArrayItem(e, 1))) {
                b = cJSON_GetArrayItem(e, 0)->valuedouble;
                r = cJSON_GetArrayItem(e, 1)->valuedouble;
            } else if (!cJSON_IsNull(e)) {
                bad = 1;
            }
            e = e->next;
        } else {
            const char *end = strchr(s, ';');
            size_t len = end ? (size_t)(end - s) : strlen(s);
            if (len) {
                char item[64];
                if (len >= sizeof item) len = sizeof item - 1;
                memcpy(item, s, len);
                item[len] = '\0';
                char *c = strchr(item, ',');
                if (!c) bad = 1;
                else {
                    *c = '\0';
                    bad = gp_osrm_parse_double(item, &b) || gp_osrm_parse_double(c + 1, &r);
                }
            }
            s = end ? end + 1 : NULL;
        }
        if (!bad && b != -1 && (b < 0 || b > 360 || r < 0 || r > 180)) bad = 1;
        if (bad) break;
        if (k < n) {
            v[2 * k] = b;
            v[2 * k + 1] = r;
        }
        k++;
    }
    if (bad || k != n) {
        free(v);
        return !!fail_set(f, 400, "InvalidOptions",
                          bad ? "bearings[%u] must be 'bearing,range' with bearing in [0, 360] "
                                "and range in [0, 180]"
                              : "bearings must have one item per coordinate (item %u)",
                          k);
    }
    *out = v;
    return 1;
}

/* ---- one trace ---- */
static int bearing_ok(double b, double want, double range) {
    double d = fmod(fabs(b - want), 360);
    if (d > 180) d = 360 - d;
    return d <= range;
}

typedef struct bfilter {
    double want, range;
} bfilter;

/* A road piece fits a point's bearing when it runs within range of it in a direction of travel
 * (either way on a two-way road), as /route/v1's bearings filter roads. */
static int piece_fits(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                      double a_lat, double b_lon, double b_lat) {
    (void)tail;
    const bfilter *f = ctx;
    double b = gp_bearing_deg(a_lon, a_lat, b_lon, b_lat);
    if (bearing_ok(b, f->want, f->range)) return 1;
    return bearing_ok(b + 180, f->want, f->range) && gp_graph_reverse_arc(g, arc) != GP_NONE;
}

/* The kept points (tidy: a point within 10 m of the last kept one is left out, the last point
 * always kept, replacing a kept one that near it). *k set; keep[i] 1 for kept. */
static void tidy_points(const trace *t, int tidy, uint8_t *keep) {
    uint32_t last = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        keep[i] = 1;
        if (!tidy || !i) continue;
        double d = gp_haversine_m(t->lon[last], t->lat[last], t->lon[i], t->lat[i]);
        if (d >= 10) {
            last = i;
            continue;
        }
        if (i + 1 < t->n) keep[i] = 0;
        else if (last) keep[last] = 0; /* the trace's end stays its end */
    }
}

static int is_waypoint(const match_opts *mo, uint32_t i) {
    if (!mo->wp) return 1;
    for (uint32_t k = 0; k < mo->nwp; k++)
        if (mo->wp[k] == i) return 1;
    return 0;
}

/* The legs of one matching through points idx[0..k): a leg per pair of consecutive points,
 * appended into one between waypoints (without their lines where q->no_points), the routes
 * searched in ms (NULL: each its own memory). Returns the leg count, or -1 with f set. */
static long matching_legs(const gp_osrm_req *q, gp_match_search *ms, const uint32_t *idx,
                          uint32_t k, const match_opts *mo, const uint32_t *orig, gp_osrm_leg *legs,
                          fail *f) {
    long nl = 0;
    for (uint32_t i = 0; i + 1 < k; i++) {
        const gp_snap *a = &q->snap[idx[i]], *b = &q->snap[idx[i + 1]];
        gp_snap_route rt;
        gp_err err;
        gp_osrm_leg leg;
        memset(&rt, 0, sizeof rt);
        /* the route the model scored; the engine's where that search cannot tell */
        int rc = gp_match_route_in(ms, q->g, a, b, &rt, &err);
        if (rc) {
            gp_snap_route_free(&rt);
            rc = gp_engine_route_snap(gp_http_engine(), q->g, a, b, GP_P2P_AUTO, &rt, &err);
        }
        int bad = rc || rt.dist == GP_INF ||
                  gp_osrm_leg_build_lines(q->g, a, b, &rt, !q->no_points, &leg);
        gp_snap_route_free(&rt);
        if (!bad && i > 0 && !is_waypoint(mo, orig[idx[i]])) {
            bad = gp_osrm_leg_append(&legs[nl - 1], &leg);
            if (bad) nl--; /* the merged leg is gone too */
        } else if (!bad) {
            legs[nl++] = leg;
        }
        if (bad) {
            for (long j = 0; j < nl; j++) gp_osrm_leg_free(&legs[j]);
            if (rc) fail_set(f, 500, "InternalError", "%s", err.msg);
            else
                fail_set(f, 500, "InternalError",
                         "no route between matched points %u and %u of graph '%s'", orig[idx[i]],
                         orig[idx[i + 1]], q->graph_name);
            return -1;
        }
    }
    return nl;
}

/* The model's options for mo. */
static void model_opts(const match_opts *mo, gp_match_opts *o) {
    gp_match_opts_default(o);
    o->max_candidates = (uint32_t)gp_http_config()->match_max_candidates;
    o->split_gaps = mo->split;
}

/* The points of t the model sees (tidy keeps them) into p (bearing filters in bf), ts (when t
 * has timestamps) and orig (each kept point's index in t); returns their count. */
static uint32_t trace_points(const trace *t, const match_opts *mo, uint8_t *keep, gp_match_point *p,
                             bfilter *bf, double *ts, uint32_t *orig) {
    tidy_points(t, mo->tidy, keep);
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        if (!keep[i]) continue;
        p[k].lon = t->lon[i];
        p[k].lat = t->lat[i];
        p[k].accuracy_m = t->radius ? t->radius[i] : NAN;
        if (t->bearing && t->bearing[2 * i] >= 0) {
            bf[k].want = t->bearing[2 * i];
            bf[k].range = t->bearing[2 * i + 1];
            p[k].filter = piece_fits;
            p[k].filter_ctx = &bf[k];
        }
        if (ts) ts[k] = t->ts[i];
        orig[k++] = i;
    }
    return k;
}

/* Matches trace t on base's graph with options mo and writes OSRM's answer {code: Ok, matchings,
 * tracepoints} into b: 1 (b bad when out of memory), or 0 with f set and nothing written. pre:
 * NULL, or t prepared (gp_match_prepare, its table filled on the GPU) by the batch. */
static int match_trace(const gp_osrm_req *base, const trace *t, const match_opts *mo,
                       const gp_match_prep *pre, fail *f, gp_json_out *b) {
    if (!trace_check(t, f)) return 0;
    uint32_t n = t->n;
    if (mo->wp && (!mo->nwp || mo->wp[0] != 0 || mo->wp[mo->nwp - 1] != n - 1))
        return !!fail_set(f, 400, "InvalidValue",
                          "waypoints must include the first and the last coordinate (0 and %u)",
                          n - 1);
    gp_match_opts o;
    model_opts(mo, &o);
    uint8_t *keep = malloc(n);
    uint32_t *orig = malloc(sizeof *orig * n), *idx = malloc(sizeof *idx * n);
    uint32_t *wpi = malloc(sizeof *wpi * n); /* waypoint index of each kept point in its route */
    gp_match_point *p = calloc(n, sizeof *p);
    bfilter *bf = calloc(n, sizeof *bf);
    double *ts = t->ts ? malloc(sizeof *ts * n) : NULL;
    gp_osrm_leg *legs = calloc(n, sizeof *legs);
    int ok = 0;
    size_t start = b->len;
    gp_match_search *ws = NULL;
    gp_match m;
    memset(&m, 0, sizeof m);
    if (!keep || !orig || !idx || !wpi || !p || !bf || (t->ts && !ts) || !legs) {
        fail_set(f, 500, "InternalError", "out of memory");
        goto out;
    }
    uint32_t k = trace_points(t, mo, keep, p, bf, ts, orig);
    gp_err err;
    int rc = pre && pre->off && pre->n == k ? gp_match_run(base->g, p, ts, &o, pre, &m, &err)
                                            : gp_match_trace(base->g, p, k, ts, &o, &m, &err);
    if (rc) {
        if (err.code == GP_EINVAL) fail_set(f, 400, "InvalidValue", "%s", err.msg);
        else fail_set(f, 500, "InternalError", "%s", err.msg);
        goto out;
    }
    if (!m.nmatch) {
        fail_set(f, 400, "NoMatch",
                 "Could not match the trace: no two consecutive points lie on connected roads "
                 "within their search radius (%g m by default: 3 x 5 m GPS accuracy; give "
                 "radiuses)",
                 3 * o.sigma_m);
        goto out;
    }
    gp_osrm_req q = *base; /* the trace's positions for the renderers */
    q.snap = m.snap;
    q.no_points = !gp_osrm_opts_lines(&mo->ro);
    ws = gp_match_search_new(); /* the legs' searches (NULL: each allocates its own) */
    /* written straight: the bytes of the tree {code, matchings, tracepoints} gp_json_print wrote */
    gp_json_put_lit(b, "{\"code\":\"Ok\",\"matchings\":[");
    for (uint32_t mi = 0; mi < m.nmatch; mi++) {
        uint32_t c = 0;
        for (uint32_t i = 0; i < k; i++)
            if (m.matching[i] == mi) idx[c++] = i;
        long nl = matching_legs(&q, ws, idx, c, mo, orig, legs, f);
        if (nl < 0) goto out;
        uint32_t w = 0;
        for (uint32_t j = 0; j < c; j++) {
            int is_wp = j == 0 || j + 1 == c || is_waypoint(mo, orig[idx[j]]);
            wpi[idx[j]] = is_wp ? w++ : GP_NONE;
        }
        if (mi) gp_json_put_lit(b, ",");
        gp_osrm_route_write(b, &q, legs, (size_t)nl, &mo->ro);
        gp_json_put_lit(b, ",\"confidence\":");
        gp_json_put_num(b, gp_round_unit(m.confidence[mi], 1e-6));
        gp_json_put_lit(b, "}");
        for (long j = 0; j < nl; j++) gp_osrm_leg_free(&legs[j]);
    }
    if (mo->wp) { /* waypoints name points of the route: a split or a dropped one cannot be */
        for (uint32_t i = 0; i < k; i++)
            if (is_waypoint(mo, orig[i]) && (m.matching[i] != 0 || m.nmatch > 1)) {
                fail_set(f, 400, "NoMatch",
                         "waypoint %u could not be matched onto one route with the others (the "
                         "trace splits or drops it)",
                         orig[i]);
                goto out;
            }
    }
    gp_json_put_lit(b, "],\"tracepoints\":[");
    uint32_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i) gp_json_put_lit(b, ",");
        if (j < k && orig[j] < i) j++;
        if (j >= k || orig[j] != i || m.matching[j] == GP_NONE) {
            gp_json_put_lit(b, "null");
            continue;
        }
        gp_osrm_waypoint_write(b, &q, &m.snap[j]);
        gp_json_put_lit(b, ",\"alternatives_count\":");
        gp_json_put_num(b, m.alternatives[j]);
        gp_json_put_lit(b, ",\"matchings_index\":");
        gp_json_put_num(b, m.matching[j]);
        if (wpi[j] != GP_NONE) { /* (none for a point inside a leg: waypoints=...) */
            gp_json_put_lit(b, ",\"waypoint_index\":");
            gp_json_put_num(b, wpi[j]);
        }
        gp_json_put_lit(b, "}");
    }
    gp_json_put_lit(b, "]}");
    ok = 1;
out:
    if (!ok && !b->bad) b->len = start; /* (the partial text dropped) */
    gp_match_search_free(ws);
    gp_match_free(&m);
    free(keep);
    free(orig);
    free(idx);
    free(wpi);
    free(p);
    free(bf);
    free(ts);
    free(legs);
    return ok;
}

/* ---- options ---- */

/* Parses gaps, tidy, waypoints and the route options of q (GET query or JSON body). 0 with f set
 * on a bad one (the route options answer themselves: f->status 0). */
static int match_opts_parse(gp_osrm_req *q, uint32_t n, match_opts *mo, fail *f) {
    memset(mo, 0, sizeof *mo);
    mo->split = 1;
    if (!gp_osrm_route_opts_parse(q, &mo->ro)) {
        f->status = 0;
        return 0;
    }
    char buf[32];
    const char *v;
    if ((v = gp_osrm_opt(q, "gaps", buf, sizeof buf))) {
        if (!strcmp(v, "ignore")) mo->split = 0;
        else if (strcmp(v, "split"))
            return !!fail_set(f, 400, "InvalidOptions", "gaps must be split or ignore");
    }
    if ((v = gp_osrm_opt(q, "tidy", buf, sizeof buf))) {
        if (!strcmp(v, "true")) mo->tidy = 1;
        else if (strcmp(v, "false"))
            return !!fail_set(f, 400, "InvalidOptions", "tidy must be true or false");
    }
    if (gp_osrm_opt(q, "waypoints", buf, sizeof buf)) {
        if (!gp_osrm_index_list(q, "waypoints", n, &mo->wp, &mo->nwp)) {
            f->status = 0;
            return 0;
        }
        if (mo->wp && mo->tidy) {
            free(mo->wp);
            mo->wp = NULL;
            return !!fail_set(f, 400, "InvalidValue",
                              "waypoints cannot be used with tidy=true (tidy may leave a "
                              "waypoint out)");
        }
        for (uint32_t i = 1; mo->wp && i < mo->nwp; i++)
            if (mo->wp[i] <= mo->wp[i - 1]) {
                free(mo->wp);
                mo->wp = NULL;
                return !!fail_set(f, 400, "InvalidValue", "waypoints must be ascending");
            }
    }
    return 1;
}

static void answer_fail(gp_req *r, const fail *f) {
    if (f->status) gp_osrm_error(r, f->status, f->code, "%s", f->msg);
}

static void match_answer(gp_req *r, const char *coords) {
    gp_osrm_req q;
    trace t;
    match_opts mo;
    fail f;
    memset(&t, 0, sizeof t);
    memset(&mo, 0, sizeof mo);
    memset(&f, 0, sizeof f);
    const gp_config *cfg = gp_http_config();
    if (!gp_osrm_req_init(&q, r, coords, cfg->osrm_max_match_size, "osrm_max_match_size")) goto out;
    t.n = q.n;
    if (!match_opts_parse(&q, q.n, &mo, &f)) {
        answer_fail(r, &f);
        goto out;
    }
    const cJSON *b = q.body;
    const char *qs = b ? NULL : gp_req_query(r, "timestamps");
    if (!num_list(qs, b ? cJSON_GetObjectItemCaseSensitive(b, "timestamps") : NULL, "timestamps",
                  q.n, 0, &t.ts, &f) ||
        !num_list(b ? NULL : gp_req_query(r, "radiuses"),
                  b ? cJSON_GetObjectItemCaseSensitive(b, "radiuses") : NULL, "radiuses", q.n, 1,
                  &t.radius, &f) ||
        !bearing_list(b ? NULL : gp_req_query(r, "bearings"),
                      b ? cJSON_GetObjectItemCaseSensitive(b, "bearings") : NULL, q.n, &t.bearing,
                      &f)) {
        answer_fail(r, &f);
        goto out;
    }
    for (uint32_t i = 0; t.ts && i < q.n; i++)
        if (isnan(t.ts[i])) {
            gp_osrm_error(r, 400, "InvalidValue", "timestamps[%u] is empty", i);
            goto out;
        }
    for (uint32_t i = 0; t.radius && i < q.n; i++)
        if (isinf(t.radius[i])) t.radius[i] = NAN; /* unlimited: the default accuracy */
    t.lon = q.lon;
    t.lat = q.lat;
    gp_json_out o = {0};
    int ok = match_trace(&q, &t, &mo, NULL, &f, &o);
    t.lon = t.lat = NULL; /* q's */
    if (ok) gp_http_json_out(r, 200, &o);
    else {
        free(o.p);
        answer_fail(r, &f);
    }
out:
    trace_free(&t);
    free(mo.wp);
    gp_osrm_req_free(&q);
}

void gp_h_osrm_match(gp_req *r) { match_answer(r, gp_req_param(r, "coordinates")); }

void gp_h_osrm_match_post(gp_req *r) {
    if (!gp_req_json(r)) {
        gp_osrm_error(r, 400, "InvalidQuery",
                      "POST /match/v1/{profile} needs a JSON body {\"coordinates\": [[lon, lat], "
                      "...], \"timestamps\": [...], \"radiuses\": [...], ...}");
        return;
    }
    match_answer(r, NULL);
}

/* ---- batch: POST /v1/graphs/{graph}/match ---- */

/* The last checks of a parsed trace: timestamps not null, unlimited radiuses the default. */
static int trace_finish(trace *t, fail *f) {
    for (uint32_t i = 0; t->ts && i < t->n; i++)
        if (isnan(t->ts[i])) return !!fail_set(f, 400, "InvalidValue", "timestamps[%u] is null", i);
    for (uint32_t i = 0; t->radius && i < t->n; i++)
        if (isinf(t->radius[i])) t->radius[i] = NAN;
    return 1;
}

/* A trace object {"coordinates": [[lon, lat], ...], "timestamps"?, "radiuses"?} into t. */
static int trace_parse(const cJSON *o, trace *t, fail *f) {
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(o))
        return !!fail_set(f, 400, "InvalidQuery", "a trace must be a JSON object");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "coordinates"), *e;
    if (!cJSON_IsArray(c))
        return !!fail_set(f, 400, "InvalidQuery",
                          "a trace needs 'coordinates': an array of [lon, lat] pairs");
    const cJSON *fl;
    cJSON_ArrayForEach(fl, o) {
        if (strcmp(fl->string, "coordinates") && strcmp(fl->string, "timestamps") &&
            strcmp(fl->string, "radiuses"))
            return !!fail_set(f, 400, "InvalidQuery",
                              "unknown trace field '%.64s': a trace takes coordinates, "
                              "timestamps and radiuses",
                              fl->string);
    }
    int n = cJSON_GetArraySize(c);
    long max = gp_http_config()->osrm_max_match_size;
    if (n > max)
        return !!fail_set(f, 400, "TooBig",
                          "Too many trace coordinates: %d, the limit is %ld (osrm_max_match_size)",
                          n, max);
    t->n = (uint32_t)n;
    t->lon = malloc(sizeof *t->lon * (n ? n : 1));
    t->lat = malloc(sizeof *t->lat * (n ? n : 1));
    if (!t->lon || !t->lat) return !!fail_set(f, 500, "InternalError", "out of memory");
    uint32_t i = 0;
    cJSON_ArrayForEach(e, c) {
        const cJSON *x = cJSON_GetArrayItem(e, 0), *y = cJSON_GetArrayItem(e, 1);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(x) ||
            !cJSON_IsNumber(y) || x->valuedouble < -180 || x->valuedouble > 180 ||
            y->valuedouble < -90 || y->valuedouble > 90)
            return !!fail_set(f, 400, "InvalidValue",
                              "coordinates[%u] must be [lon, lat] with longitude -180..180 and "
                              "latitude -90..90",
                              i);
        t->lon[i] = x->valuedouble;
        t->lat[i++] = y->valuedouble;
    }
    if (!num_list(NULL, cJSON_GetObjectItemCaseSensitive(o, "timestamps"), "timestamps", t->n, 0,
                  &t->ts, f) ||
        !num_list(NULL, cJSON_GetObjectItemCaseSensitive(o, "radiuses"), "radiuses", t->n, 1,
                  &t->radius, f))
        return 0;
    return trace_finish(t, f);
}

/* ---- NDJSON trace lines without cJSON ----
 * A batch line is nearly always a plain trace object: numbers in arrays. lines_fast reads such a
 * line straight into its trace (no tree of a node and a malloc per number; numbers through
 * gp_json_scan_num, cJSON's doubles); anything else, and any line trace_parse would refuse, is left
 * to cJSON and trace_parse as before, so the traces and the errors are the same. */
/* Appends v to the array a of *n (room *cap); -1 when out of memory. */
static int push_num(double **a, uint32_t *n, uint32_t *cap, double v) {
    if (*n == *cap) {
        uint32_t nc = *cap ? 2 * *cap : 64;
        double *na = realloc(*a, sizeof *na * nc);
        if (!na) return -1;
        *a = na;
        *cap = nc;
    }
    (*a)[(*n)++] = v;
    return 0;
}

/* A JSON array of numbers into *a (count *n; an empty one holds room for one): 0 when the text
 * is not one. */
static int lex_nums(gp_json_scan *x, double **a, uint32_t *n) {
    uint32_t cap = 0;
    double v;
    if (!gp_json_scan_char(x, '[')) return 0;
    if (!gp_json_scan_char(x, ']')) {
        do {
            if (!gp_json_scan_num(x, &v) || push_num(a, n, &cap, v)) return 0;
        } while (gp_json_scan_char(x, ','));
        if (!gp_json_scan_char(x, ']')) return 0;
    }
    return *a || (*a = malloc(sizeof **a)) != NULL;
}

/* The coordinates' array [[lon, lat], ...] into t (its n, lon, lat): 0 when the text is not one. */
static int lex_coords(gp_json_scan *x, trace *t) {
    uint32_t cap = 0, cap2 = 0, n2 = 0;
    double lon, lat;
    if (!gp_json_scan_char(x, '[')) return 0;
    if (!gp_json_scan_char(x, ']')) {
        do {
            if (!gp_json_scan_char(x, '[') || !gp_json_scan_num(x, &lon) ||
                !gp_json_scan_char(x, ',') || !gp_json_scan_num(x, &lat) ||
                !gp_json_scan_char(x, ']') || push_num(&t->lon, &t->n, &cap, lon) ||
                push_num(&t->lat, &n2, &cap2, lat))
                return 0;
        } while (gp_json_scan_char(x, ','));
        if (!gp_json_scan_char(x, ']')) return 0;
    }
    return (t->lon || (t->lon = malloc(sizeof *t->lon)) != NULL) &&
           (t->lat || (t->lat = malloc(sizeof *t->lat)) != NULL);
}

/* Line s (len bytes) into t when it is a trace object of numbers that trace_parse would take as
 * it is; else 0 with t empty (cJSON and trace_parse then read the line). */
static int lines_fast(const char *s, size_t len, trace *t) {
    gp_json_scan x = {s, s + len};
    uint32_t nts = 0, nrad = 0, seen = 0;
    memset(t, 0, sizeof *t);
    int ok = gp_json_scan_char(&x, '{'), more = ok; /* ({}: trace_parse's error) */
    while (ok && more) {
        ok = gp_json_scan_char(&x, '"');
        const char *k = x.p;
        while (ok && x.p < x.e && *x.p != '"' && *x.p != '\\') x.p++;
        size_t kl = (size_t)(x.p - k);
        uint32_t bit = kl == 11 && !memcmp(k, "coordinates", 11)  ? 1
                       : kl == 10 && !memcmp(k, "timestamps", 10) ? 2
                       : kl == 8 && !memcmp(k, "radiuses", 8)     ? 4
                                                                  : 0;
        ok = ok && bit && !(seen & bit) && gp_json_scan_char(&x, '"') && gp_json_scan_char(&x, ':');
        if (ok)
            ok = bit == 1   ? lex_coords(&x, t)
                 : bit == 2 ? lex_nums(&x, &t->ts, &nts)
                            : lex_nums(&x, &t->radius, &nrad);
        seen |= bit;
        more = ok && gp_json_scan_char(&x, ',');
    }
    ok = ok && gp_json_scan_char(&x, '}') && (seen & 1);
    gp_json_scan_ws(&x);
    ok = ok && x.p == x.e && (long)t->n <= gp_http_config()->osrm_max_match_size;
    ok = ok && (!(seen & 2) || nts == t->n) && (!(seen & 4) || nrad == t->n);
    for (uint32_t i = 0; ok && i < t->n; i++)
        ok = t->lon[i] >= -180 && t->lon[i] <= 180 && t->lat[i] >= -90 && t->lat[i] <= 90;
    fail f;
    if (ok && trace_finish(t, &f)) return 1;
    trace_free(t);
    return 0;
}

typedef struct batch {
    const gp_osrm_req *q;
    const match_opts *mo;
    trace *tr;
    fail *fl;           /* per trace: status set when parsing failed already */
    gp_json_out *res;   /* per trace: its answer's text */
    gp_match_prep *pre; /* per trace, on the GPU path: candidates and table (else NULL) */
} batch;

/* The GPU path's first pass: candidates and the table's layout of each trace (a trace that
 * fails here is left unprepared and fails the same way in batch_run). */
static void batch_prepare(void *ctx, uint64_t begin, uint64_t end) {
    batch *b = ctx;
    gp_match_opts o;
    model_opts(b->mo, &o);
    for (uint64_t i = begin; i < end; i++) {
        const trace *t = &b->tr[i];
        fail f;
        memset(&f, 0, sizeof f);
        if (b->fl[i].status || !trace_check(t, &f)) continue;
        uint32_t n = t->n;
        uint8_t *keep = malloc(n);
        uint32_t *orig = malloc(sizeof *orig * n);
        gp_match_point *p = calloc(n, sizeof *p);
        bfilter *bf = calloc(n, sizeof *bf);
        double *ts = t->ts ? malloc(sizeof *ts * n) : NULL;
        if (keep && orig && p && bf && (!t->ts || ts)) {
            uint32_t k = trace_points(t, b->mo, keep, p, bf, ts, orig);
            gp_err err;
            if (gp_match_prepare(b->q->g, p, k, ts, &o, &b->pre[i], &err))
                memset(&b->pre[i], 0, sizeof b->pre[i]);
        }
        free(keep);
        free(orig);
        free(p);
        free(bf);
        free(ts);
    }
}

/* Batches of at least gpu_match_min_traces traces on a CUDA engine: the searches of every
 * trace's consecutive points run together on the GPU before the traces are answered. A GPU
 * failure leaves the tables unfilled: the traces then search on the CPU (the same answers).
 * The log line `event=match_gpu` gives the request's phases: candidates and tables' layout on
 * the CPU (prepare_ms), the device pass (fill_ms: waiting for the device wait_ms, holding it
 * hold_ms, of which gpu_ms in kernels; then redo_ms for the rows past the device's scratch,
 * redone of rows, on the CPU); the answers follow (event=match_batch: run_ms, and total_ms from
 * before the prepare). */
static void batch_gpu(batch *b, size_t nl) {
    gp_engine *e = gp_http_engine();
    const gp_config *cfg = gp_http_config();
    if (strcmp(gp_engine_backend(e), "cuda") || nl < (size_t)cfg->gpu_match_min_traces) return;
    double t0 = gp_now();
    gp_match_prep *pre = calloc(nl, sizeof *pre);
    gp_match_prep **ptr = malloc(sizeof *ptr * nl);
    if (!pre || !ptr) {
        free(pre);
        free(ptr);
        return;
    }
    b->pre = pre;
    gp_parallel_for_dynamic(nl, e->cpu_threads, 4, batch_prepare, b);
    size_t np = 0;
    for (size_t i = 0; i < nl; i++)
        if (pre[i].off) ptr[np++] = &pre[i];
    gp_err err;
    gp_match_gpu_stats st;
    double t1 = gp_now();
    if (gp_match_fill_cuda(b->q->g, ptr, np, &st, &err))
        gp_log_write(GP_LOG_WARN, "match batch: the GPU's searches failed (%s); the CPU runs them",
                     err.msg);
    else
        gp_log_write(GP_LOG_INFO,
                     "event=match_gpu traces=%zu prepare_ms=%.1f fill_ms=%.1f wait_ms=%.1f "
                     "hold_ms=%.1f gpu_ms=%.2f redo_ms=%.1f rows=%llu redone=%llu",
                     np, (t1 - t0) * 1e3, (gp_now() - t1) * 1e3, st.wait_ms, st.hold_ms, st.gpu_ms,
                     st.redo_ms, (unsigned long long)st.rows, (unsigned long long)st.redone);
    free(ptr);
}

/* A failed trace's answer {"code", "message"}. */
static void fail_write(gp_json_out *o, const fail *f) {
    gp_json_put_lit(o, "{\"code\":");
    gp_json_put_str(o, f->code);
    gp_json_put_lit(o, ",\"message\":");
    gp_json_put_str(o, f->msg);
    gp_json_put_lit(o, "}");
}

static void batch_run(void *ctx, uint64_t begin, uint64_t end) {
    batch *b = ctx;
    for (uint64_t i = begin; i < end; i++) {
        gp_json_out *o = &b->res[i];
        gp_json_out_reserve(
            o, 256 + 256 * (size_t)b->tr[i].n); /* about a point's text, overview=false */
        if (b->fl[i].status ||
            !match_trace(b->q, &b->tr[i], b->mo, b->pre ? &b->pre[i] : NULL, &b->fl[i], o))
            fail_write(o, &b->fl[i]);
    }
}

static const char batch_opts[] = " traces steps annotations geometries overview gaps tidy ";

void gp_h_match_batch(gp_req *r) {
    const gp_config *cfg = gp_http_config();
    const char *ct = gp_req_header(r, "Content-Type");
    int nd = ct && !strncmp(ct, "application/x-ndjson", 20);
    size_t blen = 0;
    const char *body = gp_req_body(r, &blen);
    cJSON *doc = NULL, **lines = NULL;
    size_t nl = 0;
    gp_osrm_req q;
    memset(&q, 0, sizeof q);
    q.r = r;
    q.g = gp_req_graph(r);
    snprintf(q.graph_name, sizeof q.graph_name, "%s", gp_req_graph_name(r));
    q.generate_hints = 0;
    q.geometries = GP_GEOM_POLYLINE;
    trace *tr = NULL;
    fail *fl = NULL;
    gp_json_out *res = NULL;
    match_opts mo;
    memset(&mo, 0, sizeof mo);
    if (!q.g->lon || gp_osrm_no_durations(q.g)) {
        gp_http_error(r, GP_HC_NO_COORDINATES,
                      "graph '%s' has no coordinates or no travel times: map matching needs "
                      "a road graph",
                      q.graph_name);
        return;
    }
    const cJSON *traces = NULL;
    if (nd) { /* a trace a line */
        size_t cap = 0;
        for (size_t at = 0; at < blen;) {
            const char *e = memchr(body + at, '\n', blen - at);
            size_t len = e ? (size_t)(e - (body + at)) : blen - at;
            size_t s = at;
            at += len + 1;
            while (len && (body[s + len - 1] == '\r' || body[s + len - 1] == ' ')) len--;
            if (!len) continue;
            if (nl == (size_t)cfg->match_max_traces) {
                gp_http_error(r, GP_HC_TOO_BIG,
                              "more than %ld traces in one request (match_max_traces)",
                              cfg->match_max_traces);
                goto out;
            }
            if (nl == cap) {
                size_t nc = cap ? 2 * cap : 64;
                cJSON **nlp = realloc(lines, sizeof *nlp * nc);
                if (nlp) lines = nlp;
                trace *ntr = nlp ? realloc(tr, sizeof *ntr * nc) : NULL;
                if (!ntr) {
                    gp_http_error(r, GP_HC_INTERNAL, "out of memory");
                    goto out;
                }
                tr = ntr;
                cap = nc;
            }
            /* a plain trace line read straight into its trace, else its cJSON tree */
            lines[nl] = NULL;
            if (lines_fast(body + s, len, &tr[nl])) {
                nl++;
                continue;
            }
            lines[nl] = cJSON_ParseWithLength(body + s, len);
            if (!lines[nl]) {
                gp_http_error(r, GP_HC_INVALID_JSON, "NDJSON line %zu is not valid JSON", nl + 1);
                goto out;
            }
            nl++;
        }
    } else {
        doc = body && blen ? cJSON_ParseWithLength(body, blen) : NULL;
        if (!cJSON_IsObject(doc)) {
            gp_http_error(r, GP_HC_INVALID_JSON,
                          "the body must be a JSON object {\"traces\": [{\"coordinates\": [[lon, "
                          "lat], ...], \"timestamps\"?: [...], \"radiuses\"?: [...]}, ...]}, or "
                          "NDJSON (Content-Type application/x-ndjson) a trace a line");
            goto out;
        }
        const cJSON *fd;
        cJSON_ArrayForEach(fd, doc) {
            char key[80];
            snprintf(key, sizeof key, " %.64s ", fd->string);
            if (!strstr(batch_opts, key)) {
                gp_http_error(r, GP_HC_INVALID_QUERY, "unknown field '%.64s': the body takes%s",
                              fd->string, batch_opts);
                goto out;
            }
        }
        traces = cJSON_GetObjectItemCaseSensitive(doc, "traces");
        if (!cJSON_IsArray(traces)) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "body field 'traces' must be an array of trace objects");
            goto out;
        }
        nl = (size_t)cJSON_GetArraySize(traces);
        if (nl > (size_t)cfg->match_max_traces) {
            gp_http_error(r, GP_HC_TOO_BIG,
                          "%zu traces is more than %ld in one request (match_max_traces)", nl,
                          cfg->match_max_traces);
            goto out;
        }
        q.body = doc;
    }
    /* options: the JSON body's fields, or the query string for NDJSON */
    char buf[32];
    const char *v = gp_osrm_opt(&q, "geometries", buf, sizeof buf);
    if (v) {
        if (!strcmp(v, "polyline6")) q.geometries = GP_GEOM_POLYLINE6;
        else if (!strcmp(v, "geojson")) q.geometries = GP_GEOM_GEOJSON;
        else if (strcmp(v, "polyline")) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "geometries must be polyline, polyline6 or geojson");
            goto out;
        }
    }
    fail f0;
    memset(&f0, 0, sizeof f0);
    if (!match_opts_parse(&q, 0, &mo, &f0)) {
        if (f0.status) gp_http_error(r, GP_HC_INVALID_QUERY, "%s", f0.msg);
        goto out; /* else answered (route options) */
    }
    if (!nl) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "no traces given");
        goto out;
    }
    if (!nd) tr = calloc(nl, sizeof *tr); /* (NDJSON: read with the lines) */
    fl = calloc(nl, sizeof *fl);
    res = calloc(nl, sizeof *res);
    if (!tr || !fl || !res) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        goto out;
    }
    uint64_t points = 0;
    const cJSON *te = traces ? traces->child : NULL;
    for (size_t i = 0; i < nl; i++) {
        if (!nd || lines[i]) trace_parse(nd ? lines[i] : te, &tr[i], &fl[i]);
        points += tr[i].n;
        if (te) te = te->next;
    }
    if (points > (uint64_t)cfg->match_max_batch_points) {
        gp_http_error(r, GP_HC_TOO_BIG,
                      "%llu points in one request is more than %ld (match_max_batch_points)",
                      (unsigned long long)points, cfg->match_max_batch_points);
        goto out;
    }
    batch b = {&q, &mo, tr, fl, res, NULL};
    double tb = gp_now();
    batch_gpu(&b, nl);
    double tr0 = gp_now();
    gp_parallel_for_dynamic(nl, gp_http_engine()->cpu_threads, 4, batch_run, &b);
    gp_log_write(GP_LOG_INFO,
                 "event=match_batch traces=%zu points=%llu gpu=%s run_ms=%.1f total_ms=%.1f", nl,
                 (unsigned long long)points, b.pre ? "yes" : "no", (gp_now() - tr0) * 1e3,
                 (gp_now() - tb) * 1e3);
    for (size_t i = 0; b.pre && i < nl; i++) gp_match_prep_free(&b.pre[i]);
    free(b.pre);
    /* the answers' texts joined: NDJSON a line each (a text cJSON would not print is left out, as
     * before), else {"code": "Ok", "results": [...]} */
    size_t total = 32;
    int oom = 0;
    for (size_t i = 0; i < nl; i++) {
        oom |= res[i].oom;
        if (!res[i].bad) total += res[i].len + 1;
        else if (!nd) oom = 1;
    }
    gp_json_out all = {0};
    if (!oom) gp_json_out_reserve(&all, total);
    if (!nd) gp_json_put_lit(&all, "{\"code\":\"Ok\",\"results\":[");
    for (size_t i = 0; !oom && i < nl; i++) {
        if (res[i].bad) continue;
        if (!nd && i) gp_json_put_lit(&all, ",");
        gp_json_put_raw(&all, res[i].p, res[i].len);
        if (nd) gp_json_put_lit(&all, "\n");
    }
    if (!nd) gp_json_put_lit(&all, "]}");
    if (oom || all.bad) {
        free(all.p);
        gp_http_error(r, GP_HC_INTERNAL,
                      nd ? "out of memory" : "out of memory rendering the response");
    } else if (nd) {
        gp_http_send(r, 200, "application/x-ndjson", all.p, all.len);
    } else {
        gp_http_json_out(r, 200, &all);
    }
out:
    for (size_t i = 0; tr && i < nl; i++) trace_free(&tr[i]);
    for (size_t i = 0; res && i < nl; i++) free(res[i].p);
    for (size_t i = 0; lines && i < nl; i++) cJSON_Delete(lines[i]);
    free(lines);
    free(tr);
    free(fl);
    free(res);
    free(mo.wp);
    cJSON_Delete(doc);
}
