/* handlers.c - the query and status endpoints of the HTTP service: /health, /ready, /metrics,
 * /v1/graphs[/{graph}] and the graph queries route, nearest, sssp, table and apsp. Each answer is
 * a whole document of server/api/render.h (gp_render_*_doc), the one the CLI prints for the same
 * query, carrying the graph's name and version so clients can tell which version of a reloaded
 * graph answered; places resolve through server/api/params.h's gp_place_snap, as the CLI's do.
 */
#include "server/v1/handlers.h"

#include "engine/metric.h"
#include "graph/spatial.h"
#include "storage/cache.h"
#include "server/cache.h"
#include "server/http/http.h"
#include "server/metrics.h"
#include "server/api/params.h"
#include "server/v1/params.h"
#include "server/v1/traffic.h"
#include "server/api/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sends a whole document of server/api/render.h (malloc'd text, ownership taken; NULL: out of
 * memory). */
static void send_doc(gp_req *r, char *doc, size_t len) {
    if (!doc) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    gp_http_send(r, 200, "application/json", doc, len);
}

/* ---- status ---- */
void gp_h_health(gp_req *r) {
    cJSON *o = cJSON_CreateObject();
    gp_engine *e = gp_http_engine();
    gp_backend_info info;
    memset(&info, 0, sizeof info);
    if (e) gp_engine_info(e, &info);
    char why[256];
    int ready = gp_http_ready(why, sizeof why);
    cJSON_AddStringToObject(o, "status", info.healthy || !e ? "ok" : "degraded");
    cJSON_AddBoolToObject(o, "ready", ready);
    cJSON_AddStringToObject(o, "backend", e ? gp_engine_backend(e) : "none");
    cJSON_AddStringToObject(o, "device", info.device);
    cJSON_AddNumberToObject(o, "threads", info.threads);
    if (e && strcmp(gp_engine_backend(e), "cuda") == 0) {
        cJSON *gpu = cJSON_AddObjectToObject(o, "gpu");
        cJSON_AddStringToObject(gpu, "name", info.device);
        cJSON_AddNumberToObject(gpu, "memory_total_bytes", (double)info.mem_total);
        cJSON_AddNumberToObject(gpu, "memory_used_bytes", (double)info.mem_used);
        cJSON_AddBoolToObject(gpu, "healthy", info.healthy);
        /* cuda_devices: the ordinals in use, the first one's first */
        cJSON *devs = cJSON_AddArrayToObject(gpu, "devices");
        for (int i = 0; i < info.ndevices && i < GP_CUDA_MAX_DEVICES; i++)
            cJSON_AddItemToArray(devs, cJSON_CreateNumber(info.devices[i]));
    }
    cJSON *graphs = cJSON_AddArrayToObject(o, "graphs");
    enum { CAP = 256 };
    gp_graph **gs = malloc(sizeof *gs * CAP);
    char(*names)[65] = malloc(sizeof *names * CAP);
    int n = gs && names ? gp_registry_list(gp_http_registry(), gs, names, CAP) : 0;
    for (int i = 0; i < n; i++) {
        cJSON_AddItemToArray(graphs, cJSON_CreateString(names[i]));
        gp_graph_unref(gs[i]);
    }
    free(gs);
    free(names);
    gp_http_json(r, 200, o);
}

void gp_h_ready(gp_req *r) {
    char why[1100];
    if (!gp_http_ready(why, sizeof why)) {
        gp_http_error(r, GP_HC_NOT_READY, "not ready: %s", why);
        return;
    }
    int count = 0;
    gp_registry_stats(gp_http_registry(), NULL, NULL, &count);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", "ready");
    cJSON_AddNumberToObject(o, "graphs", count);
    gp_http_json(r, 200, o);
}

void gp_h_metrics(gp_req *r) {
    size_t len = 0;
    char *text = gp_metrics_render(&len);
    gp_http_send(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

/* ---- parameters of each endpoint (server/api/params.h) ---- */
#define RADIUS                                                                                     \
    { "radius", GP_PT_NUM, GP_IN_ANY, 0, 0, 20000000, NULL }

/* per-request metrics (engine/metric.h): exclusion classes and the vehicle's dimensions */
#define METRIC_PARAMS                                                                              \
    {"exclude", GP_PT_STR, GP_IN_ANY, 0, 0, 64, NULL},                                             \
        {"vehicle_height", GP_PT_NUM, GP_IN_ANY, 0, 0, 25.5, NULL},                                \
        {"vehicle_width", GP_PT_NUM, GP_IN_ANY, 0, 0, 25.5, NULL},                                 \
        {"vehicle_length", GP_PT_NUM, GP_IN_ANY, 0, 0, 25.5, NULL},                                \
        {"vehicle_weight", GP_PT_NUM, GP_IN_ANY, 0, 0, 127.5, NULL}, {                             \
        "vehicle_axleload", GP_PT_NUM, GP_IN_ANY, 0, 0, 127.5, NULL                                \
    }

static const gp_endpoint graphs_ep = GP_ENDPOINT_NONE("GET /v1/graphs");
static const gp_endpoint graph_ep = GP_ENDPOINT_NONE("GET /v1/graphs/{graph}");

static const gp_param route_params[] = {
    {"from", GP_PT_PLACE, GP_IN_QUERY, 1, 0, 0, NULL},
    {"to", GP_PT_PLACE, GP_IN_QUERY, 1, 0, 0, NULL},
    {"algo", GP_PT_ENUM, GP_IN_QUERY, 0, 0, 0, "auto|dijkstra|bidir|astar"},
    RADIUS,
    METRIC_PARAMS,
};
static const gp_endpoint route_ep = GP_ENDPOINT("route", route_params, GP_BODY_NONE, NULL);

static const gp_param nearest_params[] = {
    {"lon", GP_PT_NUM, GP_IN_QUERY, 1, -180, 180, NULL},
    {"lat", GP_PT_NUM, GP_IN_QUERY, 1, -90, 90, NULL},
    {"number", GP_PT_INT, GP_IN_QUERY, 0, 1, 1e9, NULL},
    RADIUS,
};
static const gp_endpoint nearest_ep = GP_ENDPOINT("nearest", nearest_params, GP_BODY_NONE, NULL);

static const gp_param sssp_params[] = {
    {"source", GP_PT_PLACE, GP_IN_QUERY, 1, 0, 0, NULL},
    {"max_weight", GP_PT_NUM, GP_IN_QUERY, 0, 0, 1e300, NULL},
    {"max_distance", GP_PT_NUM, GP_IN_QUERY, 0, 0, 1e300, NULL}, /* before 0.3: max_weight */
    RADIUS,
};
static const gp_endpoint sssp_ep = GP_ENDPOINT("sssp", sssp_params, GP_BODY_NONE, NULL);

static const gp_param table_params[] = {
    {"sources", GP_PT_PLACES, GP_IN_BODY, 1, 1, 0, NULL},
    {"targets", GP_PT_PLACES, GP_IN_BODY, 0, 1, 0, NULL},
    RADIUS,
    METRIC_PARAMS,
};
static const gp_endpoint table_ep =
    GP_ENDPOINT("table", table_params, GP_BODY_REQUIRED,
                "{\"sources\": [1, [7.4246, 43.7384]], \"targets\": [2, \"7.42,43.73\"]}");

static const gp_param apsp_params[] = {
    {"next_hops", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
};
static const gp_endpoint apsp_ep = GP_ENDPOINT("apsp", apsp_params, GP_BODY_OPTIONAL, NULL);

/* ---- graphs ---- */
void gp_h_graphs(gp_req *r) {
    gp_args args;
    if (gp_params(r, &graphs_ep, &args)) return;
    enum { CAP = 256 };
    gp_graph **gs = malloc(sizeof *gs * CAP);
    char(*names)[65] = malloc(sizeof *names * CAP);
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = o ? cJSON_AddArrayToObject(o, "graphs") : NULL;
    if (!gs || !names || !arr) {
        free(gs);
        free(names);
        cJSON_Delete(o);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return;
    }
    int n = gp_registry_list(gp_http_registry(), gs, names, CAP);
    for (int i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, gp_render_graph_info(gs[i], names[i]));
        gp_graph_unref(gs[i]);
    }
    free(gs);
    free(names);
    gp_http_json(r, 200, o);
}

void gp_h_graph(gp_req *r) {
    gp_args args;
    if (gp_params(r, &graph_ep, &args)) return;
    cJSON *o = gp_render_graph_info(gp_req_graph(r), gp_req_graph_name(r));
    cJSON *t = o ? gp_srv_traffic_info(gp_req_graph_name(r)) : NULL;
    if (t) cJSON_AddItemToObject(o, "traffic", t); /* only while traffic is in force */
    gp_http_json(r, 200, o);
}

/* ---- queries ---- */

/* exclude= and vehicle_* of a request: *m = the metric of g under them (referenced; g itself
 * when none), key in *k. Answers 400 naming the parameter and returns -1 on a bad value. */
static int req_metric(gp_req *r, const gp_args *args, gp_graph *g, gp_metric_key *k, gp_graph **m) {
    gp_err err;
    memset(k, 0, sizeof *k);
    *m = NULL;
    const gp_arg *ex = gp_args_get(args, "exclude");
    if (ex->present && gp_metric_parse_exclude(g, ex->s, 0, &k->exclude, &err)) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "%s", err.msg);
        return -1;
    }
    for (int i = 0; i < GP_LIMITS; i++) {
        const gp_arg *v = gp_args_get(args, gp_metric_vehicle_param(i));
        if (v->present && gp_metric_vehicle(i, v->d, &k->veh[i], &err)) {
            gp_http_error(r, GP_HC_INVALID_QUERY, "%s=%g: %s", gp_metric_vehicle_param(i), v->d,
                          err.msg);
            return -1;
        }
    }
    if (gp_metric_get(gp_http_engine(), g, k, m, &err)) {
        gp_http_error_err(r, -1, &err);
        return -1;
    }
    return 0;
}

/* Moves snapped positions off the closed arcs of metric m (gp_metric_snap_open); answers 400
 * NoRoute naming what closes the road and returns -1 when no open road is within radius. */
static int req_snap_open(gp_req *r, gp_graph *m, const gp_metric_key *k, gp_snap *s, uint32_t n,
                         const char *what, double radius) {
    gp_err err;
    for (uint32_t i = 0; i < n; i++) {
        int rc = gp_metric_snap_open(m, &s[i], radius > 0 ? radius : 4e7, &err);
        if (rc == GP_ENOTFOUND) {
            char key[160], label[80];
            gp_metric_key_text(k, key, sizeof key);
            if (n > 1) snprintf(label, sizeof label, "%s[%u]", what, i);
            else snprintf(label, sizeof label, "%s", what);
            gp_http_error(r, GP_HC_NO_ROUTE,
                          "%s: every road within the snapping radius is closed by %s", label, key);
            return -1;
        }
        if (rc) {
            gp_http_error_err(r, -1, &err);
            return -1;
        }
    }
    return 0;
}

/* The route of a request on metric m of g (g itself without exclude= / vehicle_*). */
static void route_on(gp_req *r, const gp_args *args, gp_graph *g, gp_graph *m,
                     const gp_metric_key *key) {
    int algo = gp_args_get(args, "algo")->present ? gp_args_get(args, "algo")->e : GP_P2P_AUTO;
    if (algo == GP_P2P_ASTAR && !g->lon) {
        gp_http_error(r, GP_HC_NO_COORDINATES, "algo=astar needs coordinates; graph '%s' has none",
                      gp_req_graph_name(r));
        return;
    }
    double radius = gp_req_radius(args);
    const gp_place *from = &gp_args_get(args, "from")->place, *to = &gp_args_get(args, "to")->place;
    gp_snap a, b;
    if (gp_req_snap(r, from, "from", radius, &a) || gp_req_snap(r, to, "to", radius, &b)) return;
    if (req_snap_open(r, m, key, &a, 1, "from", radius) ||
        req_snap_open(r, m, key, &b, 1, "to", radius))
        return;
    gp_snap_route sr;
    gp_err err;
    if (gp_engine_route_snap(gp_http_engine(), m, &a, &b, algo, &sr, &err)) {
        gp_http_error_err(r, -1, &err);
        return;
    }
    if (sr.dist == GP_INF) {
        char fa[160], fb[160]; /* as the CLI describes them (server/api/render.c) */
        gp_render_place_desc(fa, sizeof fa, g, from->is_coord, &a);
        gp_render_place_desc(fb, sizeof fb, g, to->is_coord, &b);
        gp_snap_route_free(&sr);
        char msg[1200]; /* shared with the CLI's NoRoute document (server/api/render.c) */
        gp_render_no_route_msg(msg, sizeof msg, fa, fb, gp_req_graph_name(r));
        char kt[160] = "";
        if (m != g) gp_metric_key_text(key, kt, sizeof kt);
        gp_http_error(r, GP_HC_NO_ROUTE, "%s%s%s%s", msg, *kt ? " (with " : "", kt, *kt ? ")" : "");
        return;
    }
    cJSON *o = gp_render_route_doc(m, gp_req_graph_name(r), &a, &b, &sr); /* = the CLI's */
    if (o && m != g) /* the data version is the graph's; the metric only filters it */
        cJSON_ReplaceItemInObjectCaseSensitive(o, "version", cJSON_CreateString(g->version));
    gp_snap_route_free(&sr);
    gp_http_json(r, 200, o);
}

void gp_h_route(gp_req *r) {
    gp_graph *g = gp_req_graph(r), *m = NULL;
    gp_args args;
    gp_metric_key key;
    if (gp_params(r, &route_ep, &args)) return;
    if (req_metric(r, &args, g, &key, &m)) return;
    route_on(r, &args, g, m, &key);
    gp_graph_unref(m);
}

void gp_h_nearest(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &nearest_ep, &args)) return;
    double lon = gp_args_get(&args, "lon")->d, lat = gp_args_get(&args, "lat")->d;
    long maxk = gp_http_config()->max_nearest;
    int64_t k = gp_args_get(&args, "number")->present ? gp_args_get(&args, "number")->i : 1;
    if (k > maxk) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "query parameter 'number' must be in [1, %ld], got %lld", maxk, (long long)k);
        return;
    }
    if (!g->lon || !g->spatial) {
        gp_http_error(r, GP_HC_NO_COORDINATES, "graph '%s' has no node coordinates",
                      gp_req_graph_name(r));
        return;
    }
    uint32_t *nodes = malloc(sizeof *nodes * (size_t)k);
    double *metres = malloc(sizeof *metres * (size_t)k);
    int n = nodes && metres
                ? gp_spatial_nearest(g->spatial, g, lon, lat, (uint32_t)k, nodes, metres)
                : -1;
    if (n < 0) {
        free(nodes);
        free(metres);
        gp_http_error(r, GP_HC_INTERNAL, "nearest-node lookup failed");
        return;
    }
    gp_snap s;
    gp_err err;
    int rc = gp_snap_point(g, lon, lat, gp_req_radius(&args), &s, &err);
    /* the CLI's nearest document too (server/api/render.c); NULL: gp_http_json answers 500 */
    cJSON *o = gp_render_nearest_doc(g, gp_req_graph_name(r), lon, lat, nodes, metres, n,
                                     rc == GP_OK ? &s : NULL);
    free(nodes);
    free(metres);
    gp_http_json(r, 200, o);
}

void gp_h_sssp(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &sssp_ep, &args)) return;
    gp_snap s;
    if (gp_req_snap(r, &gp_args_get(&args, "source")->place, "source", gp_req_radius(&args), &s))
        return;
    uint64_t limit = GP_INF;
    const gp_arg *mw = gp_args_get(&args, "max_weight"), *md = gp_args_get(&args, "max_distance");
    if (mw->present && md->present) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "give max_weight (in the graph's weight_unit) or its old name "
                      "max_distance, not both");
        return;
    }
    if (mw->present || md->present) limit = gp_max_distance_limit(g, (mw->present ? mw : md)->d);
    uint64_t *dist = malloc(sizeof *dist * g->n);
    uint32_t *pred = malloc(sizeof *pred * g->n);
    if (!dist || !pred) {
        free(dist);
        free(pred);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory for a %u-node tree", g->n);
        return;
    }
    gp_err err;
    int rc = gp_engine_sssp_snap(gp_http_engine(), g, &s, limit, dist, pred, &err);
    if (rc) {
        free(dist);
        free(pred);
        gp_http_error_err(r, -1, &err);
        return;
    }
    size_t len = 0;
    char *doc = gp_render_sssp_doc(g, gp_req_graph_name(r), &s, dist, pred, &len); /* = the CLI's */
    free(dist);
    free(pred);
    send_doc(r, doc, len);
}

/* Resolves a list argument to positions (malloc'd); answers the error and returns NULL. */
/* ---- a table as .npy, streamed in blocks of sources (server/http/npy.c) ---- */
typedef struct npy_table {
    gp_graph *g; /* referenced for the stream's lifetime */
    gp_snap *ss, *ts;
    uint32_t nt;
    gp_table_plan *plan; /* the targets resolved once, before the first block */
} npy_table;

static int npy_table_rows(void *ctx, int worker, uint32_t row0, uint32_t k, float *out,
                          gp_err *err) {
    npy_table *t = ctx;
    (void)worker;
    return gp_engine_table_plan_rows(t->plan, t->ss + row0, k, NULL, out, err);
}

static void npy_table_done(void *ctx) {
    npy_table *t = ctx;
    gp_engine_table_plan_free(t->plan);
    gp_graph_unref(t->g);
    free(t->ss);
    free(t->ts);
    free(t);
}

/* Takes ss and ts. The cells are the JSON answer's "weights" (the weight in weight_unit, as
 * the X-Weight-Unit header says), NaN where there is no route. */
static void npy_table_answer(gp_req *r, gp_graph *g, gp_snap *ss, uint32_t ns, gp_snap *ts,
                             uint32_t nt) {
    gp_err err = {0};
    npy_table *t = calloc(1, sizeof *t);
    /* the targets resolved once, before any block (blocks run on several threads) */
    if (t && !(t->plan = gp_engine_table_plan_new(gp_http_engine(), g, ts, nt, &err))) {
        free(t);
        t = NULL;
    }
    if (!t) {
        free(ss);
        free(ts);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory for a table of %u x %u cells", ns, nt);
        return;
    }
    t->g = gp_graph_ref(g);
    t->ss = ss;
    t->ts = ts;
    t->nt = nt;
    gp_req_add_header(r, "X-Weight-Unit", g->unit_name);
    /* the JSON answers' data_version: the request's graph, not a per-request metric of it */
    gp_req_add_header(r, "X-Data-Version", gp_req_graph(r)->version);
    gp_http_npy(r, ns, nt, GP_HTTP_NPY_WORKERS, npy_table_rows, npy_table_done, t);
}

void gp_h_table(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    int npy = gp_http_accepts_npy(r);
    const gp_config *cfg = gp_http_config();
    gp_args args;
    gp_snap *ss, *ts;
    uint32_t ns, nt;
    if (gp_req_table_places(r, &table_ep, npy ? cfg->max_binary_table_cells : cfg->max_table_cells,
                            npy ? "max_binary_table_cells" : "max_table_cells", &args, &ss, &ns,
                            &ts, &nt))
        return;
    double radius = gp_req_radius(&args);
    const gp_arg *ta = gp_args_get(&args, "targets");
    const char *tname = ta->present ? "targets" : "sources";
    gp_metric_key key;
    gp_graph *m = NULL;
    int bad = req_metric(r, &args, g, &key, &m) ||
              req_snap_open(r, m, &key, ss, ns, "sources", radius) ||
              req_snap_open(r, m, &key, ts, nt, tname, radius);
    gp_args_free(&args);
    if (bad) {
        gp_graph_unref(m);
        free(ss);
        free(ts);
        return;
    }
    if (npy) {
        npy_table_answer(r, m, ss, ns, ts, nt);
        gp_graph_unref(m);
        return;
    }
    uint64_t cells = (uint64_t)ns * nt;
    uint32_t *src = ts ? malloc(sizeof *src * ns) : NULL,
             *dst = src ? malloc(sizeof *dst * nt) : NULL;
    uint64_t *out = dst ? malloc(sizeof *out * cells) : NULL;
    if (!ss || !ts) goto done;
    if (!out) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory for %llu cells", (unsigned long long)cells);
        goto done;
    }
    int by_node = m == g; /* node ids only, no metric of the request's: the matrix cache applies */
    for (uint32_t i = 0; i < ns; i++) src[i] = ss[i].node, by_node &= ss[i].arc == GP_NONE;
    for (uint32_t j = 0; j < nt; j++) dst[j] = ts[j].node, by_node &= ts[j].arc == GP_NONE;
    gp_err err;
    int hit = by_node && gp_srv_cache_lookup(r, GP_CACHE_TABLE, src, ns, dst, nt, 0, out, NULL);
    int rc = hit       ? GP_OK
             : by_node ? gp_engine_table(gp_http_engine(), g, src, ns, dst, nt, out, &err)
                       : gp_engine_table_snap(gp_http_engine(), m, ss, ns, ts, nt, out, &err);
    if (!rc && !hit && by_node)
        gp_srv_cache_store(r, GP_CACHE_TABLE, src, ns, dst, nt, 0, out, NULL);
    if (rc) {
        gp_http_error_err(r, -1, &err);
    } else {
        size_t len = 0; /* the CLI's document too */
        char *doc = gp_render_table_doc(g, gp_req_graph_name(r), ss, ns, ts, nt, out, &len);
        send_doc(r, doc, len);
    }
done:
    gp_graph_unref(m);
    free(out);
    free(src);
    free(dst);
    free(ss);
    free(ts);
}

/* ---- all pairs, streamed: rows rendered as the client reads them ---- */

typedef struct apsp_stream {
    gp_graph *g; /* a reference: a reload may swap the graph while the answer is read */
    uint64_t *dist;
    uint32_t *next;
    size_t held; /* counted against max_buffered_answer_bytes until done */
    char *open;  /* the opening text (head, nodes) */
    size_t open_len;
    uint32_t row; /* next row of the current part */
    int part;     /* 0 opening, 1 distances, 2 next hops, 3 closing written, 4 done */
    char *buf;    /* one rendered piece */
    size_t len, off;
} apsp_stream;

/* Renders the next piece into s->buf: the opening, a batch of rows, or the closing. */
static void apsp_piece(apsp_stream *s) {
    uint32_t n = s->g->n;
    size_t cap = GP_RENDER_DIST_ROW_BYTES(n) + GP_RENDER_ID_ROW_BYTES(n) + 32, len = 0;
    if (s->part == 0) {
        memcpy(s->buf, s->open, s->open_len + 1);
        len = s->open_len;
        s->part = 1;
        s->row = 0;
    }
    /* rows until ~64 KiB or the part ends (at least one row: the buffer holds one of each) */
    while ((s->part == 1 || s->part == 2) && (len == 0 || len + cap / 2 < 65536)) {
        if (s->row == n) {
            static const char mid[] = "],\"next_hops\":[";
            if (s->part == 1 && s->next) {
                memcpy(s->buf + len, mid, sizeof mid - 1);
                len += sizeof mid - 1;
                s->part = 2;
                s->row = 0;
                continue;
            }
            memcpy(s->buf + len, "]}\n", 3);
            len += 3;
            s->part = 3;
            break;
        }
        if (s->row) s->buf[len++] = ',';
        size_t i = (size_t)s->row++ * n;
        len += s->part == 1 ? gp_render_dist_row(s->g, s->dist + i, n, s->buf + len)
                            : gp_render_id_row(s->g, s->next + i, n, s->buf + len);
        if (len + cap / 2 >= 65536) break;
    }
    if (s->part == 3 && len == 0) s->part = 4;
    s->len = len;
    s->off = 0;
}

static long apsp_fill(void *ctx, char *out, size_t max) {
    apsp_stream *s = ctx;
    if (s->off == s->len) {
        if (s->part >= 3) return 0;
        apsp_piece(s);
        if (s->len == 0) return 0;
    }
    size_t k = s->len - s->off < max ? s->len - s->off : max;
    memcpy(out, s->buf + s->off, k);
    s->off += k;
    return (long)k;
}

static void apsp_done(void *ctx) {
    apsp_stream *s = ctx;
    gp_http_held_drop(s->held);
    gp_graph_unref(s->g);
    free(s->dist);
    free(s->next);
    free(s->open);
    free(s->buf);
    free(s);
}

/* Answers dist (and next) as the all-pairs document, streamed; takes both arrays. */
static void apsp_send(gp_req *r, gp_graph *g, uint64_t *dist, uint32_t *next) {
    size_t cells = (size_t)g->n * g->n, held = 0;
    size_t bytes = cells * (sizeof *dist + (next ? sizeof *next : 0));
    apsp_stream *s = calloc(1, sizeof *s);
    if (s) {
        s->open = gp_render_apsp_open(g, gp_req_graph_name(r), &s->open_len);
        s->buf = malloc(s->open_len + 1 + 65536 + 2 * GP_RENDER_DIST_ROW_BYTES(g->n) +
                        2 * GP_RENDER_ID_ROW_BYTES(g->n) + 64);
    }
    if (!s || !s->open || !s->buf) {
        if (s) {
            free(s->open);
            free(s->buf);
            free(s);
        }
        free(dist);
        free(next);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    if (gp_http_held_take(r, bytes, &held)) { /* answered 503 */
        free(s->open);
        free(s->buf);
        free(s);
        free(dist);
        free(next);
        return;
    }
    s->g = gp_graph_ref(g);
    s->dist = dist;
    s->next = next;
    s->held = held;
    gp_http_stream(r, 200, "application/json", apsp_fill, apsp_done, s);
}

void gp_h_apsp(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &apsp_ep, &args)) return;
    int want_next = gp_args_get(&args, "next_hops")->present && gp_args_get(&args, "next_hops")->e;
    long limit = gp_http_config()->max_apsp_nodes;
    if ((long)g->n > limit) {
        gp_http_error(r, GP_HC_TOO_BIG,
                      "graph '%s' has %u nodes; apsp is limited to max_apsp_nodes = %ld",
                      gp_req_graph_name(r), g->n, limit);
        return;
    }
    size_t cells = (size_t)g->n * g->n;
    uint64_t *dist = malloc(sizeof *dist * cells);
    uint32_t *next = want_next ? malloc(sizeof *next * cells) : NULL;
    gp_err err;
    int ok = dist && (!want_next || next);
    int hit = ok &&
              gp_srv_cache_lookup(r, GP_CACHE_APSP, NULL, g->n, NULL, g->n, want_next, dist, next);
    int rc = hit  ? GP_OK
             : ok ? gp_engine_apsp(gp_http_engine(), g, dist, next, &err)
                  : gp_err_set(&err, GP_ENOMEM, "out of memory for %zu cells", cells);
    if (!rc && !hit)
        gp_srv_cache_store(r, GP_CACHE_APSP, NULL, g->n, NULL, g->n, want_next, dist, next);
    if (rc) {
        gp_http_error_err(r, -1, &err);
        free(dist);
        free(next);
        return;
    }
    apsp_send(r, g, dist, next); /* gp_render_apsp_doc's text (the CLI's), streamed */
}
