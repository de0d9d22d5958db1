/* handlers.c - the query and status endpoints of the HTTP service: /health, /ready, /metrics,
 * /v1/graphs[/{graph}] and the graph queries route, nearest, sssp, table and apsp. Answers are
 * rendered by server/render.c (the same shapes as the CLI) with the graph's name and version
 * added, so clients can tell which version of a reloaded graph answered.
 */
#include "handlers.h"

#include "../graph/spatial.h"
#include "../storage/cache.h"
#include "h_cache.h"
#include "http.h"
#include "metrics.h"
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sends a compact JSON object text ("{...}", malloc'd, ownership taken) with "graph" and
 * "version" spliced in front of its fields. */
static void send_obj_with_version(gp_req *r, char *text, size_t len) {
    if (!text) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    const gp_graph *g = gp_req_graph(r);
    char head[160];
    int hl = snprintf(head, sizeof head, "{\"graph\":\"%s\",\"version\":\"%s\"%s",
                      gp_req_graph_name(r), g->version, len > 2 ? "," : "");
    if (hl < 0 || (size_t)hl >= sizeof head) hl = 0;
    char *out = malloc((size_t)hl + len + 1);
    if (!out) {
        free(text);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    memcpy(out, head, (size_t)hl);
    memcpy(out + hl, text + 1, len - 1); /* drop the opening brace */
    size_t n = (size_t)hl + len - 1;
    out[n++] = '\n';
    free(text);
    gp_http_send(r, 200, "application/json", out, n);
}

static void add_version(gp_req *r, cJSON *o) {
    if (!o) return;
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(o, "version", gp_req_graph(r)->version);
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

/* ---- graphs ---- */
void gp_h_graphs(gp_req *r) {
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
    gp_http_json(r, 200, gp_render_graph_info(gp_req_graph(r), gp_req_graph_name(r)));
}

/* ---- queries ---- */
static int parse_algo(gp_req *r, int *algo) {
    const char *a = gp_req_query(r, "algo");
    if (!a || !*a || !strcmp(a, "auto")) *algo = GP_P2P_AUTO;
    else if (!strcmp(a, "dijkstra")) *algo = GP_P2P_DIJKSTRA;
    else if (!strcmp(a, "bidir")) *algo = GP_P2P_BIDIR;
    else if (!strcmp(a, "astar")) *algo = GP_P2P_ASTAR;
    else {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "query parameter 'algo' must be auto, dijkstra, bidir or astar, got '%.32s'",
                      a);
        return 0;
    }
    if (*algo == GP_P2P_ASTAR && !gp_req_graph(r)->lon) {
        gp_http_error(r, GP_HC_NO_COORDINATES, "algo=astar needs coordinates; graph '%s' has none",
                      gp_req_graph_name(r));
        return 0;
    }
    return 1;
}

void gp_h_route(gp_req *r) {
    gp_err err;
    int64_t from, to;
    int algo;
    if (gp_req_query_i64(r, "from", 1, 0, INT64_MIN, INT64_MAX, &from, &err) ||
        gp_req_query_i64(r, "to", 1, 0, INT64_MIN, INT64_MAX, &to, &err)) {
        gp_http_error_err(r, GP_HC_INVALID_QUERY, &err);
        return;
    }
    if (!parse_algo(r, &algo)) return;
    uint32_t s = gp_req_node(r, from, "from");
    if (s == GP_NONE) return;
    uint32_t t = gp_req_node(r, to, "to");
    if (t == GP_NONE) return;
    gp_graph *g = gp_req_graph(r);
    gp_path p;
    memset(&p, 0, sizeof p);
    int rc = gp_engine_p2p(gp_http_engine(), g, s, t, algo, &p, &err);
    if (rc) {
        gp_path_free(&p);
        gp_http_error_err(r, -1, &err);
        return;
    }
    if (p.dist == GP_INF) {
        gp_path_free(&p);
        char msg[1200]; /* shared with the CLI's NoRoute document (server/render.c) */
        gp_render_no_route_msg(msg, sizeof msg, from, to, gp_req_graph_name(r));
        gp_http_error(r, GP_HC_NO_ROUTE, "%s", msg);
        return;
    }
    cJSON *o = gp_render_route(g, s, t, &p);
    gp_path_free(&p);
    add_version(r, o);
    gp_http_json(r, 200, o);
}

void gp_h_nearest(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_err err;
    double lon, lat;
    int64_t k;
    if (gp_req_query_double(r, "lon", 1, 0, -180, 180, &lon, &err) ||
        gp_req_query_double(r, "lat", 1, 0, -90, 90, &lat, &err) ||
        gp_req_query_i64(r, "number", 0, 1, 1, gp_http_config()->max_nearest, &k, &err)) {
        gp_http_error_err(r, GP_HC_INVALID_QUERY, &err);
        return;
    }
    if (!g->lon || !g->spatial) {
        gp_http_error(r, GP_HC_NO_COORDINATES, "graph '%s' has no node coordinates",
                      gp_req_graph_name(r));
        return;
    }
    uint32_t *nodes = malloc(sizeof *nodes * (size_t)k);
    double *metres = malloc(sizeof *metres * (size_t)k);
    int n = nodes && metres ? gp_spatial_nearest(g->spatial, g, lon, lat, (uint32_t)k, nodes,
                                                 metres)
                            : -1;
    if (n < 0) {
        free(nodes);
        free(metres);
        gp_http_error(r, GP_HC_INTERNAL, "nearest-node lookup failed");
        return;
    }
    cJSON *o = cJSON_CreateObject();
    add_version(r, o);
    cJSON_AddNumberToObject(o, "lon", lon);
    cJSON_AddNumberToObject(o, "lat", lat);
    cJSON *arr = cJSON_AddArrayToObject(o, "nodes");
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "id", gp_render_node(g, nodes[i]));
        cJSON_AddNumberToObject(e, "distance_m", metres[i]);
        cJSON_AddNumberToObject(e, "lon", g->lon[nodes[i]]);
        cJSON_AddNumberToObject(e, "lat", g->lat[nodes[i]]);
        cJSON_AddItemToArray(arr, e);
    }
    free(nodes);
    free(metres);
    gp_http_json(r, 200, o);
}

void gp_h_sssp(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_err err;
    int64_t source;
    double maxd;
    if (gp_req_query_i64(r, "source", 1, 0, INT64_MIN, INT64_MAX, &source, &err) ||
        gp_req_query_double(r, "max_distance", 0, -1, 0, 1e300, &maxd, &err)) {
        gp_http_error_err(r, GP_HC_INVALID_QUERY, &err);
        return;
    }
    uint32_t s = gp_req_node(r, source, "source");
    if (s == GP_NONE) return;
    uint64_t limit = GP_INF;
    if (maxd >= 0) {
        /* d / scale <= max_distance  <=>  d <= floor(max_distance * scale) for integer d; the
         * epsilon absorbs the binary representation of decimal limits (0.3 * 1000). */
        double x = floor(maxd * g->scale * (1 + 1e-12) + 1e-9);
        limit = x >= 1.8e19 ? GP_INF - 1 : (uint64_t)x;
    }
    uint64_t *dist = malloc(sizeof *dist * g->n);
    uint32_t *pred = malloc(sizeof *pred * g->n);
    if (!dist || !pred) {
        free(dist);
        free(pred);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory for a %u-node tree", g->n);
        return;
    }
    int rc = gp_engine_sssp(gp_http_engine(), g, s, limit, dist, pred, &err);
    if (rc) {
        free(dist);
        free(pred);
        gp_http_error_err(r, -1, &err);
        return;
    }
    size_t len = 0;
    char *text = gp_render_sssp_text(g, s, dist, pred, &len);
    free(dist);
    free(pred);
    send_obj_with_version(r, text, len);
}

/* Reads body field `field` as an array of node ids into internal indices (malloc'd). Answers
 * the error itself and returns -1; 0 with *out = NULL, *n = 0 when the field is absent. */
static int json_nodes(gp_req *r, const cJSON *body, const char *field, uint32_t **out,
                      uint32_t *n) {
    *out = NULL;
    *n = 0;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(body, field);
    if (!a) return 0;
    if (!cJSON_IsArray(a)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "'%s' must be an array of node ids", field);
        return -1;
    }
    int k = cJSON_GetArraySize(a);
    if (k == 0) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "'%s' must not be empty", field);
        return -1;
    }
    uint32_t *v = malloc(sizeof *v * (size_t)k);
    if (!v) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return -1;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        double d = e->valuedouble;
        if (!cJSON_IsNumber(e) || d != floor(d) || d < -9.2e18 || d > 9.2e18) {
            gp_http_error(r, GP_HC_INVALID_JSON, "%s[%d] must be an integer node id", field, i);
            free(v);
            return -1;
        }
        char what[64];
        snprintf(what, sizeof what, "%s[%d]", field, i);
        v[i] = gp_req_node(r, (int64_t)d, what);
        if (v[i] == GP_NONE) {
            free(v);
            return -1;
        }
        i++;
    }
    *out = v;
    *n = (uint32_t)k;
    return 0;
}

static int body_object(gp_req *r, int required) {
    cJSON *b = gp_req_json(r);
    if (!b && !required) return 1;
    if (!cJSON_IsObject(b)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "request body must be a JSON object%s",
                      required ? " (e.g. {\"sources\": [1, 2]})" : "");
        return 0;
    }
    return 1;
}

void gp_h_table(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    if (!body_object(r, 1)) return;
    cJSON *body = gp_req_json(r);
    uint32_t *src = NULL, *dst = NULL, ns = 0, nt = 0;
    if (json_nodes(r, body, "sources", &src, &ns)) return;
    if (!src) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "missing body field 'sources'");
        return;
    }
    if (json_nodes(r, body, "targets", &dst, &nt)) {
        free(src);
        return;
    }
    const uint32_t *tg = dst ? dst : src;
    if (!dst) nt = ns;
    uint64_t cells = (uint64_t)ns * nt;
    long limit = gp_http_config()->max_table_cells;
    if (cells > (uint64_t)limit) {
        gp_http_error(r, GP_HC_TOO_BIG,
                      "table of %u sources x %u targets = %llu cells exceeds max_table_cells = %ld",
                      ns, nt, (unsigned long long)cells, limit);
        free(src);
        free(dst);
        return;
    }
    uint64_t *out = malloc(sizeof *out * cells);
    gp_err err;
    int hit = out && gp_srv_cache_lookup(r, GP_CACHE_TABLE, src, ns, tg, nt, 0, out, NULL);
    int rc = hit ? GP_OK
             : out ? gp_engine_table(gp_http_engine(), g, src, ns, tg, nt, out, &err)
                   : gp_err_set(&err, GP_ENOMEM, "out of memory for %llu cells",
                                (unsigned long long)cells);
    if (!rc && !hit) gp_srv_cache_store(r, GP_CACHE_TABLE, src, ns, tg, nt, 0, out, NULL);
    if (rc) {
        gp_http_error_err(r, -1, &err);
    } else {
        size_t len = 0;
        char *text = gp_render_table_text(g, src, ns, tg, nt, out, &len);
        send_obj_with_version(r, text, len);
    }
    free(out);
    free(src);
    free(dst);
}

void gp_h_apsp(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    if (!body_object(r, 0)) return;
    int want_next = 0;
    const cJSON *nh = cJSON_GetObjectItemCaseSensitive(gp_req_json(r), "next_hops");
    if (nh) {
        if (!cJSON_IsBool(nh)) {
            gp_http_error(r, GP_HC_INVALID_JSON, "'next_hops' must be true or false");
            return;
        }
        want_next = cJSON_IsTrue(nh);
    }
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
    int hit = ok && gp_srv_cache_lookup(r, GP_CACHE_APSP, NULL, g->n, NULL, g->n, want_next, dist,
                                        next);
    int rc = hit ? GP_OK
             : ok ? gp_engine_apsp(gp_http_engine(), g, dist, next, &err)
                  : gp_err_set(&err, GP_ENOMEM, "out of memory for %zu cells", cells);
    if (!rc && !hit) gp_srv_cache_store(r, GP_CACHE_APSP, NULL, g->n, NULL, g->n, want_next, dist, next);
    if (rc) {
        gp_http_error_err(r, -1, &err);
    } else {
        size_t len = 0;
        char *text = gp_render_apsp_text(g, dist, next, &len);
        send_obj_with_version(r, text, len);
    }
    free(dist);
    free(next);
}
