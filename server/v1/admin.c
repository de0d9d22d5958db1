/* admin.c - the bearer-token protected graph administration endpoints: PUT /admin/graphs/{graph}
 * (load or replace from a source spec), POST /admin/graphs/{graph}/reload (re-read the recorded
 * source) and DELETE /admin/graphs/{graph}. Loads go through the registry, which builds the new
 * graph beside the old one and swaps under the load limits (registry.h); a failed load leaves the
 * old graph serving. The answer says whose fault it was: 400 a bad spec or option, 403 a file or
 * host outside the allow-lists, 413 over a size limit, 422 LoadFailed bad content, 503
 * SourceUnavailable (Retry-After) a database that is down or a load past load_timeout_s, 503 Busy
 * too many loads at once. Beside them the matrix cache's GET /admin/cache (statistics) and
 * DELETE /admin/cache[?graph=NAME|VERSION] (purge).
 */
#include "server/v1/handlers.h"

#include "storage/cache.h"
#include "server/cache.h"
#include "server/http/http.h"
#include "server/api/params.h"
#include "server/v1/params.h"
#include "server/api/render.h"

#include <inttypes.h>
#include <string.h>

/* The HTTP error for a failed (re)load's status. */
static int load_error_code(int rc) {
    switch (rc) {
    case GP_EINVAL: return GP_HC_INVALID_QUERY;
    case GP_EFORBIDDEN: return GP_HC_FORBIDDEN;
    case GP_ETOOBIG: return GP_HC_TOO_BIG;
    case GP_ETIMEOUT:
    case GP_EUNAVAILABLE: return GP_HC_SOURCE_UNAVAILABLE;
    case GP_EBUSY: return GP_HC_BUSY;
    default: return GP_HC_LOAD_FAILED;
    }
}

/* Answers with the graph's info plus the load's facts. */
static void answer_loaded(gp_req *r, const char *name, int status, int replaced,
                          const char *previous) {
    gp_graph *g = gp_registry_get(gp_http_registry(), name);
    if (!g) { /* deleted by a concurrent admin call */
        gp_http_error(r, GP_HC_UNKNOWN_GRAPH, "graph '%s' was removed meanwhile", name);
        return;
    }
    cJSON *o = gp_render_graph_info(g, name);
    if (o) {
        cJSON_AddBoolToObject(o, "replaced", replaced);
        if (previous && previous[0]) cJSON_AddStringToObject(o, "previous_version", previous);
        else cJSON_AddNullToObject(o, "previous_version");
    }
    gp_graph_unref(g);
    gp_http_json(r, status, o);
}

static void current_version(const char *name, char *out, size_t size) {
    gp_graph *g = gp_registry_get(gp_http_registry(), name);
    snprintf(out, size, "%s", g ? g->version : "");
    gp_graph_unref(g);
}

static int str_field(gp_req *r, const cJSON *b, const char *field, const char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, field);
    *out = NULL;
    if (!v) return 1;
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
        gp_http_error(r, cJSON_IsString(v) ? GP_HC_INVALID_QUERY : GP_HC_INVALID_JSON,
                      "'%s' must be a non-empty string", field);
        return 0;
    }
    *out = v->valuestring;
    return 1;
}

static int num_field(gp_req *r, const cJSON *b, const char *field, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, field);
    if (!v) return 1;
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !(v->valuedouble <= 1e15)) {
        gp_http_error(r, cJSON_IsNumber(v) ? GP_HC_INVALID_QUERY : GP_HC_INVALID_JSON,
                      "'%s' must be a positive number up to 1e15", field);
        return 0;
    }
    *out = v->valuedouble;
    return 1;
}

void gp_h_admin_put(gp_req *r) {
    const char *name = gp_req_param(r, "graph");
    if (!gp_registry_name_ok(name)) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "graph name '%.80s' must be 1-64 characters of [A-Za-z0-9_.-], not . or ..",
                      name);
        return;
    }
    cJSON *b = gp_req_json(r);
    if (!cJSON_IsObject(b)) {
        gp_http_error(r, GP_HC_INVALID_JSON,
                      "body must be a JSON object such as {\"spec\": \"dimacs:/data/x.gr\"} or "
                      "{\"path\": \"/data/x.gr\", \"format\": \"dimacs\"}");
        return;
    }
    gp_err ferr = {0};
    if (!gp_json_only(b, "body", &ferr, "spec", "path", "format", "cost_rule", "scale",
                      "ref_bandwidth", "undirected", NULL)) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "%s", ferr.msg);
        return;
    }
    gp_graph_source src;
    memset(&src, 0, sizeof src);
    const char *spec, *path, *format, *rule;
    if (!str_field(r, b, "spec", &spec) || !str_field(r, b, "path", &path) ||
        !str_field(r, b, "format", &format) || !str_field(r, b, "cost_rule", &rule) ||
        !num_field(r, b, "scale", &src.scale) ||
        !num_field(r, b, "ref_bandwidth", &src.ref_bandwidth))
        return;
    const cJSON *und = cJSON_GetObjectItemCaseSensitive(b, "undirected");
    if (und && !cJSON_IsBool(und)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "'undirected' must be true or false");
        return;
    }
    src.undirected = cJSON_IsTrue(und);
    if (spec && path) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "give either 'spec' or 'path' (with 'format')");
        return;
    }
    int n;
    if (spec) n = snprintf(src.spec, sizeof src.spec, "%s", spec);
    else if (path && format) n = snprintf(src.spec, sizeof src.spec, "%s:%s", format, path);
    else if (path) n = snprintf(src.spec, sizeof src.spec, "%s", path);
    else {
        gp_http_error(r, GP_HC_INVALID_JSON, "missing body field 'spec' (or 'path')");
        return;
    }
    if (n < 0 || (size_t)n >= sizeof src.spec) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "source spec longer than %zu bytes",
                      sizeof src.spec - 1);
        return;
    }
    if (rule) {
        size_t rl = strlen(rule);
        if (rl >= sizeof src.cost_rule) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "unknown cost_rule (use hops, bandwidth, or "
                          "the format's own: weights, routing)");
            return;
        }
        memcpy(src.cost_rule, rule, rl + 1);
    }
    char prev[32];
    current_version(name, prev, sizeof prev);
    gp_err err;
    gp_err_clear(&err);
    int replaced = 0;
    int rc = gp_registry_load(gp_http_registry(), name, &src, &replaced, &err);
    gp_metrics_reload(rc == GP_OK);
    if (rc) {
        gp_http_error(r, load_error_code(rc), "loading '%s' failed, %s: %s", name,
                      prev[0] ? "the previous version keeps serving" : "nothing was loaded",
                      err.msg);
        return;
    }
    gp_http_startup_recovered(name); /* a start-up failure fixed by hand: /ready recovers */
    answer_loaded(r, name, replaced ? 200 : 201, replaced, prev);
}

void gp_h_admin_reload(gp_req *r) {
    const char *name = gp_req_param(r, "graph");
    char prev[32];
    current_version(name, prev, sizeof prev);
    if (!prev[0]) {
        gp_http_error(r, GP_HC_UNKNOWN_GRAPH, "no graph named '%s'", name);
        return;
    }
    gp_err err;
    gp_err_clear(&err);
    int rc = gp_registry_reload(gp_http_registry(), name, &err);
    gp_metrics_reload(rc == GP_OK);
    if (rc == GP_ENOTFOUND) {
        gp_http_error(r, GP_HC_UNKNOWN_GRAPH, "%s", err.msg);
        return;
    }
    if (rc) {
        gp_http_error(r, load_error_code(rc), "reloading '%s' failed, version %s keeps serving: %s",
                      name, prev, err.msg);
        return;
    }
    answer_loaded(r, name, 200, 1, prev);
}

void gp_h_admin_delete(gp_req *r) {
    const char *name = gp_req_param(r, "graph");
    gp_err err;
    int rc = gp_registry_remove(gp_http_registry(), name, &err);
    if (rc) {
        gp_http_error(r, rc == GP_ENOTFOUND ? GP_HC_UNKNOWN_GRAPH : load_error_code(rc), "%s",
                      err.msg);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddBoolToObject(o, "deleted", 1);
    gp_http_json(r, 200, o);
}

/* ---- /admin/cache: the matrix cache of server/cache.h --------------------------------------- */

static const gp_endpoint stats_ep = GP_ENDPOINT_NONE("GET /admin/cache");
static const gp_param purge_params[] = {{"graph", GP_PT_STR, GP_IN_QUERY, 0, 0, 256, NULL}};
static const gp_endpoint purge_ep =
    GP_ENDPOINT("DELETE /admin/cache", purge_params, GP_BODY_NONE, NULL);

void gp_h_cache_stats(gp_req *r) {
    gp_args args;
    if (gp_params(r, &stats_ep, &args)) return;
    gp_cache_stats cs;
    gp_cache_stats_get(gp_srv_cache(), &cs); /* off (NULL): "enabled": false */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "enabled", cs.enabled);
    cJSON_AddStringToObject(o, "path", cs.path);
    cJSON_AddNumberToObject(o, "entries", (double)cs.entries);
    cJSON_AddNumberToObject(o, "bytes", (double)cs.bytes);
    cJSON_AddNumberToObject(o, "budget_bytes", (double)cs.budget);
    cJSON_AddNumberToObject(o, "hits", (double)cs.hits);
    cJSON_AddNumberToObject(o, "misses", (double)cs.misses);
    uint64_t looks = cs.hits + cs.misses;
    if (looks) cJSON_AddNumberToObject(o, "hit_rate", (double)cs.hits / (double)looks);
    else cJSON_AddNullToObject(o, "hit_rate");
    cJSON_AddNumberToObject(o, "stores", (double)cs.puts);
    cJSON_AddNumberToObject(o, "evictions", (double)cs.evictions);
    cJSON_AddNumberToObject(o, "recoveries", (double)cs.recoveries);
    if (cs.error[0]) cJSON_AddStringToObject(o, "error", cs.error);
    gp_http_json(r, 200, o);
}

void gp_h_cache_purge(gp_req *r) {
    gp_args args;
    if (gp_params(r, &purge_ep, &args)) return;
    const char *which = gp_args_get(&args, "graph")->s; /* NULL: every graph */
    uint64_t n = 0;
    gp_err err;
    gp_err_clear(&err);
    if (gp_cache_purge(gp_srv_cache(), which, &n, &err)) {
        gp_http_error(r, GP_HC_DATABASE_ERROR, "%s", err.msg);
        return;
    }
    GP_LOG(GP_LOG_INFO, "event=cache_purge graph=%s deleted=%" PRIu64, which ? which : "*", n);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "deleted", (double)n);
    if (which) cJSON_AddStringToObject(o, "graph", which);
    else cJSON_AddNullToObject(o, "graph");
    gp_http_json(r, 200, o);
}
