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

static cJSON *waypoints_json(const gp_osrm_req *q, const uint32_t *idx, uint32_t k) {
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < k; i++)
        cJSON_AddItemToArray(a, gp_osrm_waypoint(q, &q->snap[idx ? idx[i] : i]));
    return a;
}

/* {"code": "Ok", "data_version": the version of the graph the whole request was pinned to} */
static cJSON *ok_object(const gp_osrm_req *q) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", "Ok");
    cJSON_AddStringToObject(o, "data_version", GP_OSRM_DATA_VERSION(q));
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
    /* waypoints=i;j;...: legs only between these coordinates (the others are via points the route
     * passes through, still listed in the answer's waypoints, as OSRM's) */
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
    q.no_points = !n_alt && !gp_osrm_opts_lines(&o);
    if (gp_osrm_route_legs(&q, order, q.n, gp_osrm_continue_straight(&q), legs)) {
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
        cJSON *res = ok_object(&q);
        cJSON *routes = cJSON_AddArrayToObject(res, "routes");
        cJSON_AddItemToArray(routes, gp_osrm_route_json(&q, legs, nleg, &o));
        for (size_t i = 0; i < nalt; i++) {
            cJSON_AddItemToArray(routes, gp_osrm_route_json(&q, &alt[i], 1, &o));
            gp_osrm_leg_free(&alt[i]);
        }
        if (!q.skip_waypoints)
            /* every coordinate, the via points of `waypoints` too (as osrm-routed answers) */
            cJSON_AddItemToObject(res, "waypoints", waypoints_json(&q, NULL, q.n));
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
static double tree_metres(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                          const uint64_t *dist, const uint32_t *pred, uint64_t want) {
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

/* What a table cell answers, shared by the JSON and the .npy answers. */
typedef struct table_cells {
    gp_graph *g;
    const gp_snap *src, *dst;
    uint32_t nt;
    double fallback, scale_factor; /* fallback_speed (m/s, 0 = none), scale_factor */
    int fb_snapped;                /* fallback_coordinate=snapped */
} table_cells;

/* Crow-fly metres of cell (i, j): between the input or the snapped coordinates. */
static double cell_crow(const table_cells *t, uint32_t i, uint32_t j) {
    const gp_snap *a = &t->src[i], *b = &t->dst[j];
    return t->fb_snapped ? gp_haversine_m(a->lon, a->lat, b->lon, b->lat)
                         : gp_haversine_m(a->qlon, a->qlat, b->qlon, b->qlat);
}

/* Seconds of cell (i, j) of network cost c (OSRM's tenths), the fallback's estimate when there
 * is no route (*fb = 1), else NaN. */
static double cell_duration(const table_cells *t, uint32_t i, uint32_t j, uint64_t c, int *fb) {
    *fb = 0;
    if (c != GP_INF) return gp_round_unit(gp_cost_seconds(t->g, c) * t->scale_factor, 0.1);
    if (!(t->fallback > 0)) return NAN;
    *fb = 1;
    return gp_round_unit(cell_crow(t, i, j) / t->fallback * t->scale_factor, 0.1);
}

/* 1 when every routed cell of t's table answers its cost itself as tenths of a second: weights in
 * deciseconds, no fixed-point scale, scale_factor 1 (then cell_duration(c) is the double nearest
 * c / 10, and tenths_row writes what gp_render_number_row writes for it). */
static int cells_are_tenths(const table_cells *t) {
    return t->g->unit_s == 0.1 && t->g->scale == 1.0 && t->scale_factor == 1.0;
}

/* Row costs[0..nt) as a raw JSON array of seconds (cells_are_tenths: cost c is c / 10 s), written
 * with a digit-pair formatter into buf (room for 32 bytes a cell + 3); cells without a route or
 * past 10^15 tenths go through cell_duration (fallback, null) and gp_render_number_row's format.
 * The fallback cells are appended to fbc as in the general path. NULL: out of memory. */
static cJSON *tenths_row(const table_cells *t, uint32_t i, const uint64_t *costs, char *buf,
                         cJSON *fbc) {
    static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930313233"
                             "34353637383940414243444546474849505152535455565758596061626364656667"
                             "6869707172737475767778798081828384858687888990919293949596979899";
    char *p = buf;
    *p++ = '[';
    for (uint32_t j = 0; j < t->nt; j++) {
        if (j) *p++ = ',';
        uint64_t c = costs[j];
        if (c >= 1000000000000000ull) { /* no route (GP_INF), or beyond the digit path */
            int fb;
            double v = cell_duration(t, i, j, c, &fb);
            if (fb && fbc) {
                cJSON *cell = cJSON_CreateArray();
                cJSON_AddItemToArray(cell, cJSON_CreateNumber(i));
                cJSON_AddItemToArray(cell, cJSON_CreateNumber(j));
                cJSON_AddItemToArray(fbc, cell);
            }
            cJSON *one = gp_render_number_row(&v, 1); /* "[x]" */
            if (!one) return NULL;
            const char *txt = one->valuestring;
            size_t len = strlen(txt);
            memcpy(p, txt + 1, len - 2);
            p += len - 2;
            cJSON_Delete(one);
            continue;
        }
        uint64_t w = c / 10;
        char tmp[20], *q = tmp + sizeof tmp;
        while (w >= 100) {
            q -= 2;
            memcpy(q, d2 + 2 * (w % 100), 2);
            w /= 100;
        }
        if (w >= 10) {
            q -= 2;
            memcpy(q, d2 + 2 * w, 2);
        } else {
            *--q = (char)('0' + w);
        }
        size_t len = (size_t)(tmp + sizeof tmp - q);
        memcpy(p, q, len);
        p += len;
        if (c % 10) {
            *p++ = '.';
            *p++ = (char)('0' + c % 10);
        }
    }
    *p++ = ']';
    *p = 0;
    return cJSON_CreateRaw(buf);
}

/* Metres of row i (costs crow[nt]) into out[nt]: along source i's shortest-path tree (dist, pred:
 * g->n each), the crow-fly metres for fallback cells, NaN where there is no route. */
static int row_metres(const table_cells *t, uint32_t i, const uint64_t *crow, uint64_t *dist,
                      uint32_t *pred, double *out, gp_err *err) {
    /* the tree need not reach past the row's farthest destination */
    uint64_t cutoff = 0;
    for (uint32_t j = 0; j < t->nt; j++)
        if (crow[j] != GP_INF && crow[j] > cutoff) cutoff = crow[j];
    int rc = gp_engine_sssp_snap(gp_http_engine(), t->g, &t->src[i], cutoff, dist, pred, err);
    for (uint32_t j = 0; !rc && j < t->nt; j++) {
        double m = crow[j] == GP_INF
                       ? (t->fallback > 0 ? cell_crow(t, i, j) : NAN)
                       : tree_metres(t->g, &t->src[i], &t->dst[j], dist, pred, crow[j]);
        out[j] = isfinite(m) ? gp_round_unit(m, 0.1) : NAN;
    }
    return rc;
}

/* ---- the table as .npy (Accept: application/x-npy), streamed in blocks of sources ---- */
typedef struct npy_osrm {
    table_cells t; /* t.g referenced, src / dst owned */
    int want_dist;
    uint64_t *cost[GP_HTTP_NPY_WORKERS], *dist; /* a block per worker; distances: one worker */
    uint32_t *pred;
    double *metres;
    gp_table_plan *plan; /* the targets resolved once, before the first block */
} npy_osrm;

static int npy_osrm_rows(void *ctx, int worker, uint32_t row0, uint32_t k, float *out,
                         gp_err *err) {
    npy_osrm *m = ctx;
    const table_cells *t = &m->t;
    uint64_t *cost = m->cost[worker];
    if (!m->want_dist && cells_are_tenths(t)) {
        /* costs in tenths as float32 (combined on the device where it can): exact below 2^24
         * tenths (19 days), so cell_duration's c / 10 is (double)f / 10; a block with a larger
         * cell takes the stored units below */
        int rc = gp_engine_table_plan_rows(m->plan, t->src + row0, k, NULL, out, err), big = 0;
        if (rc) return rc;
        for (uint32_t i = 0; i < k; i++) {
            float *orow = out + (size_t)i * t->nt;
            int fb;
            for (uint32_t j = 0; j < t->nt; j++) {
                const float f = orow[j];
                big |= f >= 16777216.0f;
                orow[j] = isnan(f) ? (float)cell_duration(t, row0 + i, j, GP_INF, &fb)
                                   : (float)((double)f / 10);
            }
        }
        if (!big) return 0;
    }
    int rc = gp_engine_table_plan_rows(m->plan, t->src + row0, k, cost, NULL, err);
    for (uint32_t i = 0; !rc && i < k; i++) {
        const uint64_t *crow = cost + (size_t)i * t->nt;
        float *orow = out + (size_t)i * t->nt;
        if (m->want_dist) {
            rc = row_metres(t, row0 + i, crow, m->dist, m->pred, m->metres, err);
            for (uint32_t j = 0; !rc && j < t->nt; j++) orow[j] = (float)m->metres[j];
        } else {
            int fb;
            for (uint32_t j = 0; j < t->nt; j++)
                orow[j] = (float)cell_duration(t, row0 + i, j, crow[j], &fb);
        }
    }
    return rc;
}

static void npy_osrm_done(void *ctx) {
    npy_osrm *m = ctx;
    gp_engine_table_plan_free(m->plan);
    gp_graph_unref(m->t.g);
    free((void *)m->t.src);
    free((void *)m->t.dst);
    for (int w = 0; w < GP_HTTP_NPY_WORKERS; w++) free(m->cost[w]);
    free(m->dist);
    free(m->pred);
    free(m->metres);
    free(m);
}

/* Takes *src and *dst (set to NULL). */
static void npy_osrm_answer(gp_req *r, const char *version, const table_cells *t, uint32_t ns,
                            int want_dist, gp_snap **src, gp_snap **dst) {
    size_t rows = gp_http_npy_block(ns, t->nt); /* the rows gp_http_npy asks for at a time */
    npy_osrm *m = calloc(1, sizeof *m);
    int workers = want_dist ? 1 : GP_HTTP_NPY_WORKERS, ok = m != NULL;
    if (m) {
        m->t = *t;
        m->want_dist = want_dist;
        for (int w = 0; ok && w < workers; w++)
            ok = (m->cost[w] = malloc(sizeof *m->cost[w] * rows * (t->nt ? t->nt : 1))) != NULL;
        if (want_dist) {
            m->dist = malloc(sizeof *m->dist * t->g->n);
            m->pred = malloc(sizeof *m->pred * t->g->n);
            m->metres = malloc(sizeof *m->metres * (t->nt ? t->nt : 1));
        }
    }
    gp_err err = {0};
    /* the targets resolved once, before any block (blocks run on several threads) */
    if (ok)
        ok = (m->plan = gp_engine_table_plan_new(gp_http_engine(), t->g, *dst, t->nt, &err)) !=
             NULL;
    if (!ok || (want_dist && (!m->dist || !m->pred || !m->metres))) {
        for (int w = 0; m && w < GP_HTTP_NPY_WORKERS; w++) free(m->cost[w]);
        if (m) gp_engine_table_plan_free(m->plan), free(m->dist), free(m->pred), free(m->metres);
        free(m);
        gp_osrm_error(r, 500, "InternalError", "out of memory for a block of %zu x %u cells", rows,
                      t->nt);
        return;
    }
    m->t.g = gp_graph_ref(t->g);
    gp_req_add_header(r, "X-Data-Version", version); /* the JSON answers' data_version */
    m->t.src = *src;
    m->t.dst = *dst;
    *src = *dst = NULL;
    gp_http_npy(r, ns, t->nt, workers, npy_osrm_rows, npy_osrm_done, m);
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
        /* every item, however long the list */
        for (const char *t = v; *t; t += strcspn(t, ",")) {
            t += *t == ',';
            size_t w = strcspn(t, ",");
            if (!(w == 8 && !strncmp(t, "duration", 8)) && !(w == 8 && !strncmp(t, "distance", 8)))
                want_dur = want_dist = 0;
        }
        if (!want_dur && !want_dist) {
            gp_osrm_error(r, 400, "InvalidOptions",
                          "annotations must be duration, distance or duration,distance");
            goto out;
        }
    }
    double fallback = 0, scale_factor = 1;
    if ((v = gp_osrm_opt(&q, "fallback_speed", buf, sizeof buf)) &&
        (gp_osrm_parse_double(v, &fallback) || fallback <= 0)) {
        gp_osrm_error(r, 400, "InvalidOptions", "fallback_speed must be a positive number (m/s)");
        goto out;
    }
    if ((v = gp_osrm_opt(&q, "scale_factor", buf, sizeof buf)) &&
        (gp_osrm_parse_double(v, &scale_factor) || !(scale_factor > 0) || scale_factor > 1e9)) {
        /* bounded so that every scaled duration stays a finite number (1e308 made them null) */
        gp_osrm_error(r, 400, "InvalidOptions", "scale_factor must be a positive number up to 1e9");
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
    int npy = gp_http_accepts_npy(r);
    if (npy && want_dur && want_dist) {
        gp_osrm_error(r, 400, "InvalidOptions",
                      "a .npy answer holds one matrix: annotations=duration or "
                      "annotations=distance");
        goto out;
    }
    if (npy && (uint64_t)ns * nt > (uint64_t)cfg->max_binary_table_cells) {
        gp_osrm_error(r, 400, "TooBig",
                      "table of %u sources x %u destinations exceeds max_binary_table_cells = %ld",
                      ns, nt, cfg->max_binary_table_cells);
        goto out;
    }
    if (!npy && (uint64_t)ns * nt > (uint64_t)max * (uint64_t)max) {
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
    /* the whole table's costs for the JSON answer only (a .npy answer is computed in blocks) */
    cost = npy ? NULL : malloc(sizeof *cost * (size_t)ns * nt);
    if (!src || !dst || (!npy && !cost)) {
        gp_osrm_error(r, 500, "InternalError", "out of memory for a %u x %u table", ns, nt);
        goto out;
    }
    for (uint32_t i = 0; i < ns; i++) src[i] = q.snap[si ? si[i] : i];
    for (uint32_t j = 0; j < nt; j++) dst[j] = q.snap[di ? di[j] : j];
    table_cells tc = {q.g, src, dst, nt, fallback, scale_factor, fb_snapped};
    if (npy) {
        npy_osrm_answer(r, GP_OSRM_DATA_VERSION(&q), &tc, ns, want_dist, &src, &dst);
        goto out;
    }
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
        for (uint32_t i = 0; i < ns; i++)
            if (row_metres(&tc, i, cost + (size_t)i * nt, dist, pred, metres + (size_t)i * nt,
                           &err)) {
                gp_osrm_error_err(r, &err);
                goto out;
            }
    }
    cJSON *o = ok_object(&q);
    cJSON *durs = want_dur ? cJSON_AddArrayToObject(o, "durations") : NULL;
    cJSON *dists = want_dist ? cJSON_AddArrayToObject(o, "distances") : NULL;
    cJSON *fbc = fallback > 0 ? cJSON_CreateArray() : NULL;
    /* rows written as raw JSON text (a 1000 x 1000 table is a million numbers: cJSON items
     * printed one by one cost more than the table itself) */
    double *rowd = malloc(sizeof *rowd * (nt ? nt : 1)),
           *rowm = malloc(sizeof *rowm * (nt ? nt : 1));
    /* durations alone in tenths of a second (OSM car / bicycle / foot graphs): digits straight
     * from the costs */
    char *tbuf = durs && !dists && cells_are_tenths(&tc) ? malloc((size_t)nt * 32 + 3) : NULL;
    for (uint32_t i = 0; tbuf && rowd && i < ns; i++) {
        cJSON *rd = tenths_row(&tc, i, cost + (size_t)i * nt, tbuf, fbc);
        if (!rd) {
            free(rowd);
            rowd = NULL;
            break;
        }
        cJSON_AddItemToArray(durs, rd);
    }
    for (uint32_t i = 0; !tbuf && rowd && rowm && i < ns; i++) {
        for (uint32_t j = 0; j < nt; j++) {
            size_t c = (size_t)i * nt + j;
            int fb;
            rowd[j] = cell_duration(&tc, i, j, cost[c], &fb);
            rowm[j] = metres ? metres[c] : NAN;
            if (fb) {
                cJSON *cell = cJSON_CreateArray();
                cJSON_AddItemToArray(cell, cJSON_CreateNumber(i));
                cJSON_AddItemToArray(cell, cJSON_CreateNumber(j));
                cJSON_AddItemToArray(fbc, cell);
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
    free(tbuf);
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
                /* bearings filter every answer (as OSRM's) */
                if (q.bearing[0] >= 0 &&
                    !gp_osrm_bearing_fits(g, &cc->s, q.bearing[0], q.bearing[1]))
                    continue;
                nc++;
            }
        }
    }
    qsort(c, nc, sizeof *c, cand_cmp);
    cJSON *o = ok_object(&q);
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
