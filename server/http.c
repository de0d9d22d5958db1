/* http.c - the libmicrohttpd daemon: request state, body accumulation under a hard cap, routing
 * over the static table of server/routes.c, bearer-token check, graph lookup, THE error writer,
 * response helpers, one log line and metrics per request, graceful stop.
 *
 * MHD protocol: the access handler is called first with *con_cls == NULL (we allocate the request
 * state and match the route), then once per body chunk (appended while under max_body_bytes,
 * dropped past it), then with *upload_data_size == 0 when the body is complete: we answer then.
 * The completion callback logs, counts and frees the state (including the graph reference, so a
 * graph replaced by a reload is freed only after its last response went out).
 */
#include "http.h"

#include "metrics.h"
#include "render.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- error codes: the one table (keep openapi.yaml's ErrorCode enum in step) ---- */
static const struct {
    const char *name;
    int status;
} codes[GP_HC_COUNT] = {
    [GP_HC_INVALID_QUERY] = {"InvalidQuery", 400},
    [GP_HC_INVALID_JSON] = {"InvalidJson", 400},
    [GP_HC_UNKNOWN_NODE] = {"UnknownNode", 400},
    [GP_HC_NO_COORDINATES] = {"NoCoordinates", 400},
    [GP_HC_NO_SEGMENT] = {"NoSegment", 400},
    [GP_HC_UNAUTHORIZED] = {"Unauthorized", 401},
    [GP_HC_FORBIDDEN] = {"Forbidden", 403},
    [GP_HC_ADMIN_DISABLED] = {"AdminDisabled", 403},
    [GP_HC_UNKNOWN_GRAPH] = {"UnknownGraph", 404},
    [GP_HC_NOT_FOUND] = {"NotFound", 404},
    [GP_HC_NO_ROUTE] = {"NoRoute", 400},
    [GP_HC_METHOD_NOT_ALLOWED] = {"MethodNotAllowed", 405},
    [GP_HC_TOO_BIG] = {"TooBig", 413},
    [GP_HC_LOAD_FAILED] = {"LoadFailed", 422},
    [GP_HC_INTERNAL] = {"InternalError", 500},
    [GP_HC_DEVICE_ERROR] = {"DeviceError", 500},
    [GP_HC_DATABASE_ERROR] = {"DatabaseError", 500},
    [GP_HC_UNSUPPORTED] = {"Unsupported", 501},
    [GP_HC_NOT_READY] = {"NotReady", 503},
    [GP_HC_BUSY] = {"Busy", 503},
    [GP_HC_TIMEOUT] = {"Timeout", 504},
    [GP_HC_SOURCE_UNAVAILABLE] = {"SourceUnavailable", 503},
};

const char *gp_http_code_name(int code) {
    return code >= 0 && code < GP_HC_COUNT ? codes[code].name : "InternalError";
}
int gp_http_code_status(int code) {
    return code >= 0 && code < GP_HC_COUNT ? codes[code].status : 500;
}

int gp_http_code_of(int s) {
    switch (s) {
    case GP_EINVAL: return GP_HC_INVALID_QUERY;
    case GP_EPARSE: return GP_HC_INVALID_QUERY;
    case GP_ENOTFOUND: return GP_HC_NOT_FOUND;
    case GP_ETOOBIG: return GP_HC_TOO_BIG;
    case GP_EDEVICE: return GP_HC_DEVICE_ERROR;
    case GP_EBUSY: return GP_HC_BUSY;
    case GP_EUNSUPPORTED: return GP_HC_UNSUPPORTED;
    case GP_ENOROUTE: return GP_HC_NO_ROUTE;
    case GP_EDB: return GP_HC_DATABASE_ERROR;
    case GP_ETIMEOUT: return GP_HC_TIMEOUT;
    default: return GP_HC_INTERNAL;
    }
}

/* ---- the running service ---- */
#define MAX_PARAMS 4
#define MAX_HEADERS 8

struct gp_req {
    struct MHD_Connection *conn;
    const char *method, *path;
    double t0;
    long route; /* index into gp_routes, -1 when unmatched */
    int nparams;
    struct {
        char name[32];
        const char *value; /* points into segs */
    } params[MAX_PARAMS];
    char *segs; /* copy of the path, split into segments */
    char *body;
    size_t body_len, body_cap;
    int too_big;
    cJSON *json;
    gp_graph *graph;
    const char *graph_name;
    int answered;
    int status;
    size_t bytes;
    int err_code; /* -1 when the answer was not an error */
    int nheaders;
    char *headers[MAX_HEADERS][2];
};

struct gp_http {
    struct MHD_Daemon *d;
    unsigned port;
};

static struct {
    const gp_config *cfg;
    gp_engine *engine;
    gp_registry *reg;
    int active;   /* requests between first call and completion (atomic) */
    int stopping; /* set at shutdown: answers carry Connection: close */
    pthread_mutex_t mu; /* guards the startup fields */
    int startup_done;
    char pending[GP_CONFIG_MAX_GRAPHS][65];
    int npending;
    struct {
        char name[65];
        char msg[600];
    } failed[GP_CONFIG_MAX_GRAPHS]; /* start-up loads that failed and have not recovered */
    int nfailed;
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER};

const gp_config *gp_http_config(void) { return srv.cfg; }
gp_engine *gp_http_engine(void) { return srv.engine; }
gp_registry *gp_http_registry(void) { return srv.reg; }

void gp_http_startup_begin(const gp_config *cfg) {
    pthread_mutex_lock(&srv.mu);
    srv.npending = 0;
    for (int i = 0; i < cfg->ngraphs && i < GP_CONFIG_MAX_GRAPHS; i++)
        snprintf(srv.pending[srv.npending++], 65, "%s", cfg->graphs[i].name);
    srv.startup_done = 0;
    srv.nfailed = 0;
    pthread_mutex_unlock(&srv.mu);
}

void gp_http_startup_graph(const char *name, int ok, const char *msg) {
    pthread_mutex_lock(&srv.mu);
    for (int i = 0; i < srv.npending; i++)
        if (strcmp(srv.pending[i], name) == 0) {
            srv.npending--;
            memmove(srv.pending[i], srv.pending[srv.npending], 65);
            break;
        }
    if (!ok && srv.nfailed < GP_CONFIG_MAX_GRAPHS) {
        snprintf(srv.failed[srv.nfailed].name, sizeof srv.failed[0].name, "%s", name);
        snprintf(srv.failed[srv.nfailed].msg, sizeof srv.failed[0].msg, "%s", msg);
        srv.nfailed++;
    }
    pthread_mutex_unlock(&srv.mu);
}

void gp_http_startup_end(void) {
    pthread_mutex_lock(&srv.mu);
    srv.startup_done = 1;
    pthread_mutex_unlock(&srv.mu);
}

void gp_http_startup_recovered(const char *name) {
    pthread_mutex_lock(&srv.mu);
    for (int i = 0; i < srv.nfailed; i++)
        if (strcmp(srv.failed[i].name, name) == 0) {
            srv.failed[i] = srv.failed[--srv.nfailed];
            break;
        }
    pthread_mutex_unlock(&srv.mu);
}

int gp_http_ready(char *why, size_t size) {
    pthread_mutex_lock(&srv.mu);
    int ready = srv.startup_done && srv.nfailed == 0;
    if (!ready && why) {
        if (srv.nfailed)
            snprintf(why, size, "graph '%s' failed to load at start: %s%s", srv.failed[0].name,
                     srv.failed[0].msg, srv.nfailed > 1 ? " (and other graphs failed too)" : "");
        else if (srv.npending) snprintf(why, size, "loading graph '%s'", srv.pending[0]);
        else snprintf(why, size, "starting");
    }
    pthread_mutex_unlock(&srv.mu);
    return ready;
}

int gp_http_loading(const char *name) {
    pthread_mutex_lock(&srv.mu);
    int loading = 0;
    for (int i = 0; i < srv.npending; i++)
        if (strcmp(srv.pending[i], name) == 0) loading = 1;
    pthread_mutex_unlock(&srv.mu);
    return loading;
}

/* ---- accessors ---- */
const char *gp_req_method(const gp_req *r) { return r->method; }
const char *gp_req_path(const gp_req *r) { return r->path; }
const char *gp_req_param(const gp_req *r, const char *name) {
    for (int i = 0; i < r->nparams; i++)
        if (strcmp(r->params[i].name, name) == 0) return r->params[i].value;
    return NULL;
}
const char *gp_req_query(const gp_req *r, const char *name) {
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}
typedef struct query_each {
    gp_req_arg_fn fn;
    void *ctx;
    unsigned n;
} query_each;
static enum MHD_Result query_each_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value) {
    (void)kind;
    query_each *q = cls;
    q->n++;
    q->fn(q->ctx, key ? key : "", value);
    return MHD_YES;
}
unsigned gp_req_query_each(const gp_req *r, gp_req_arg_fn fn, void *ctx) {
    query_each q = {fn, ctx, 0};
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_each_cb, &q);
    return q.n;
}
const char *gp_req_header(const gp_req *r, const char *name) {
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}
const char *gp_req_body(const gp_req *r, size_t *len) {
    if (len) *len = r->body_len;
    return r->body ? r->body : "";
}
cJSON *gp_req_json(const gp_req *r) { return r->json; }
gp_graph *gp_req_graph(const gp_req *r) { return r->graph; }
const char *gp_req_graph_name(const gp_req *r) { return r->graph_name; }
int gp_req_answered(const gp_req *r) { return r->answered; }

/* *v = the parameter, or NULL when absent or empty (GP_EINVAL then if required). */
static int query_value(const gp_req *r, const char *name, int required, const char **v,
                       gp_err *err) {
    *v = gp_req_query(r, name);
    if (*v && !**v) *v = NULL;
    if (!*v && required) return gp_err_set(err, GP_EINVAL, "missing query parameter '%s'", name);
    return GP_OK;
}

int gp_req_query_i64(const gp_req *r, const char *name, int required, int64_t def, int64_t min,
                     int64_t max, int64_t *out, gp_err *err) {
    const char *v;
    if (query_value(r, name, required, &v, err)) return GP_EINVAL;
    if (!v) {
        *out = def;
        return GP_OK;
    }
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0')
        return gp_err_set(err, GP_EINVAL, "query parameter '%s' must be an integer, got '%.64s'",
                          name, v);
    if (x < min || x > max)
        return gp_err_set(err, GP_EINVAL,
                          "query parameter '%s' must be in [%lld, %lld], got %lld", name,
                          (long long)min, (long long)max, x);
    *out = x;
    return GP_OK;
}

int gp_req_query_double(const gp_req *r, const char *name, int required, double def, double min,
                        double max, double *out, gp_err *err) {
    const char *v;
    if (query_value(r, name, required, &v, err)) return GP_EINVAL;
    if (!v) {
        *out = def;
        return GP_OK;
    }
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || x != x)
        return gp_err_set(err, GP_EINVAL, "query parameter '%s' must be a number, got '%.64s'",
                          name, v);
    if (x < min || x > max)
        return gp_err_set(err, GP_EINVAL, "query parameter '%s' must be in [%g, %g], got %g",
                          name, min, max, x);
    *out = x;
    return GP_OK;
}

int gp_req_query_bool(const gp_req *r, const char *name, int def, int *out, gp_err *err) {
    const char *v = gp_req_query(r, name);
    if (!v || !*v) {
        *out = def;
        return GP_OK;
    }
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) *out = 1;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no")) *out = 0;
    else
        return gp_err_set(err, GP_EINVAL, "query parameter '%s' must be true or false, got '%.64s'",
                          name, v);
    return GP_OK;
}

uint32_t gp_req_node(gp_req *r, int64_t ext_id, const char *what) {
    uint32_t v = r->graph ? gp_graph_index(r->graph, ext_id) : GP_NONE;
    if (v == GP_NONE)
        gp_http_error(r, GP_HC_UNKNOWN_NODE, "%s: node %lld is not in graph '%s'", what,
                      (long long)ext_id, r->graph_name ? r->graph_name : "?");
    return v;
}

/* ---- responses ---- */
void gp_req_add_header(gp_req *r, const char *name, const char *value) {
    if (r->nheaders == MAX_HEADERS) return;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return;
    }
    r->headers[r->nheaders][0] = n;
    r->headers[r->nheaders][1] = v;
    r->nheaders++;
}

/* Queues buf (malloc'd, ownership taken) as the answer. */
static void send_buf(gp_req *r, int status, const char *ctype, char *buf, size_t len) {
    if (r->answered) {
        GP_LOG(GP_LOG_ERROR, "event=bug path=%s msg=\"second answer dropped\"", r->path);
        free(buf);
        return;
    }
    r->answered = 1;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, buf ? buf : (char *)"", buf ? MHD_RESPMEM_MUST_FREE
                                                                       : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(buf);
        r->status = 500;
        return;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    for (int i = 0; i < r->nheaders; i++)
        MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
    if (__atomic_load_n(&srv.stopping, __ATOMIC_RELAXED))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    r->status = status;
    r->bytes = len;
    if (MHD_queue_response(r->conn, (unsigned)status, resp) != MHD_YES) r->status = 500;
    MHD_destroy_response(resp);
}

void gp_http_send(gp_req *r, int status, const char *content_type, char *buf, size_t len) {
    if (!buf) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    send_buf(r, status, content_type, buf, len);
}

typedef struct stream_ctx {
    gp_http_fill_fn fill;
    void (*done)(void *ctx);
    void *ctx;
} stream_ctx;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    stream_ctx *s = cls;
    long k = s->fill(s->ctx, buf, max);
    if (k < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (k == 0) return MHD_CONTENT_READER_END_OF_STREAM;
    return (ssize_t)k;
}

static void stream_free(void *cls) {
    stream_ctx *s = cls;
    if (s->done) s->done(s->ctx);
    free(s);
}

void gp_http_stream(gp_req *r, int status, const char *content_type, gp_http_fill_fn fill,
                    void (*done)(void *ctx), void *ctx) {
    stream_ctx *s = malloc(sizeof *s);
    if (!s || r->answered) {
        free(s);
        if (done) done(ctx);
        if (!r->answered) send_buf(r, 500, "text/plain", NULL, 0);
        return;
    }
    *s = (stream_ctx){fill, done, ctx};
    r->answered = 1;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, s, stream_free);
    if (!resp) {
        stream_free(s);
        r->status = 500;
        return;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    for (int i = 0; i < r->nheaders; i++)
        MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
    if (__atomic_load_n(&srv.stopping, __ATOMIC_RELAXED))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    r->status = status;
    if (MHD_queue_response(r->conn, (unsigned)status, resp) != MHD_YES) r->status = 500;
    MHD_destroy_response(resp); /* frees s via stream_free once the daemon is done with it */
}

void gp_http_text(gp_req *r, int status, const char *content_type, const char *buf, size_t len) {
    char *copy = malloc(len + 1);
    if (!copy) {
        send_buf(r, 500, "text/plain", NULL, 0);
        return;
    }
    memcpy(copy, buf, len);
    send_buf(r, status, content_type, copy, len);
}

void gp_http_json(gp_req *r, int status, cJSON *body) {
    char *s = body ? cJSON_PrintUnformatted(body) : NULL;
    cJSON_Delete(body);
    if (!s) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    size_t n = strlen(s);
    if (n + 1 < ((size_t)-1)) {
        s[n] = '\n'; /* cJSON allocated n+1 bytes: replace the NUL by a newline for curl users */
        n++;
    }
    send_buf(r, status, "application/json", s, n);
}

void gp_http_error(gp_req *r, int code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (code < 0 || code >= GP_HC_COUNT) code = GP_HC_INTERNAL;
    r->err_code = code;
    if (codes[code].status == 503) gp_req_add_header(r, "Retry-After", "1"); /* NotReady, Busy */
    cJSON *o = gp_render_error_doc(codes[code].name, msg); /* the CLI prints the same */
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s) {
        send_buf(r, codes[code].status, "application/json", NULL, 0);
        return;
    }
    size_t n = strlen(s);
    s[n] = '\n';
    send_buf(r, codes[code].status, "application/json", s, n + 1);
    GP_LOG(GP_LOG_DEBUG, "event=error path=%s code=%s message=\"%s\"", r->path, codes[code].name,
           msg);
}

void gp_http_error_err(gp_req *r, int fallback_code, const gp_err *err) {
    int c = gp_http_code_of(err->code);
    if (fallback_code >= 0 && (err->code == GP_EINVAL || err->code == GP_EPARSE))
        c = fallback_code;
    gp_http_error(r, c, "%s", err->msg[0] ? err->msg : gp_status_name(err->code));
}

/* ---- admin auth ---- */
int gp_http_admin_ok(gp_req *r) {
    const char *tok = srv.cfg ? srv.cfg->admin_token : "";
    if (!tok[0]) {
        gp_http_error(r, GP_HC_ADMIN_DISABLED,
                      "admin endpoints are disabled: set admin_token (or GPATH_ADMIN_TOKEN)");
        return 0;
    }
    const char *h = gp_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        gp_req_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"gpath-admin\"");
        gp_http_error(r, GP_HC_UNAUTHORIZED, "admin endpoint: send 'Authorization: Bearer TOKEN'");
        return 0;
    }
    const char *given = h + 7;
    while (*given == ' ') given++;
    size_t gl = strlen(given), tl = strlen(tok);
    unsigned char diff = (unsigned char)(gl != tl);
    for (size_t i = 0; i < gl; i++) diff |= (unsigned char)(given[i] ^ tok[i % tl]);
    if (diff) {
        gp_http_error(r, GP_HC_FORBIDDEN, "admin endpoint: wrong bearer token");
        return 0;
    }
    return 1;
}

/* ---- routing ---- */
/* Matches path against pattern; fills params on success. */
static int match(const char *pattern, const char *path, gp_req *r) {
    size_t pl = strlen(path);
    char *segs = malloc(pl + 1);
    if (!segs) return 0;
    memcpy(segs, path, pl + 1);
    int np = 0;
    const char *p = pattern;
    char *s = segs;
    struct {
        char name[32];
        const char *value;
    } params[MAX_PARAMS];
    for (;;) {
        if (*p != '/' || *s != '/') break;
        p++;
        s++;
        const char *pe = strchr(p, '/');
        size_t plen = pe ? (size_t)(pe - p) : strlen(p);
        char *se = strchr(s, '/');
        size_t slen = se ? (size_t)(se - s) : strlen(s);
        if (plen > 2 && p[0] == '{' && p[plen - 1] == '}') {
            if (slen == 0 || np == MAX_PARAMS) break;
            size_t nl = plen - 2 < 31 ? plen - 2 : 31;
            memcpy(params[np].name, p + 1, nl);
            params[np].name[nl] = '\0';
            params[np].value = s;
            np++;
        } else if (plen != slen || memcmp(p, s, plen) != 0) {
            break;
        }
        p += plen;
        s += slen;
        if (*p == '\0' && *s == '\0') {
            /* terminate the captured segments */
            for (int i = 0; i < np; i++) {
                char *v = (char *)params[i].value;
                char *e = strchr(v, '/');
                if (e) *e = '\0';
            }
            free(r->segs);
            r->segs = segs;
            r->nparams = np;
            for (int i = 0; i < np; i++) {
                memcpy(r->params[i].name, params[i].name, sizeof params[i].name);
                r->params[i].value = params[i].value;
            }
            return 1;
        }
        if (*p == '\0' || *s == '\0') break;
    }
    free(segs);
    return 0;
}

static void route_request(gp_req *r) {
    char allow[128] = "";
    int path_known = 0;
    for (size_t i = 0; i < gp_nroutes; i++) {
        gp_req probe;
        memset(&probe, 0, sizeof probe);
        if (!match(gp_routes[i].pattern, r->path, &probe)) continue;
        free(probe.segs);
        path_known = 1;
        if (strcmp(gp_routes[i].method, r->method) == 0) {
            match(gp_routes[i].pattern, r->path, r);
            r->route = (long)i;
            return;
        }
        size_t al = strlen(allow);
        snprintf(allow + al, sizeof allow - al, "%s%s", al ? ", " : "", gp_routes[i].method);
    }
    r->route = -1;
    if (path_known) {
        gp_req_add_header(r, MHD_HTTP_HEADER_ALLOW, allow);
        gp_http_error(r, GP_HC_METHOD_NOT_ALLOWED, "%s %s: allowed methods are %s", r->method,
                      r->path, allow);
    } else {
        gp_http_error(r, GP_HC_NOT_FOUND, "no endpoint at %s (see openapi.yaml)", r->path);
    }
}

static void dispatch(gp_req *r) {
    const gp_route *rt = &gp_routes[r->route];
    if ((rt->flags & GP_ROUTE_ADMIN) && !gp_http_admin_ok(r)) return;
    if (rt->flags & GP_ROUTE_GRAPH) {
        const char *name = gp_req_param(r, "graph");
        r->graph_name = name;
        r->graph = name ? gp_registry_get(srv.reg, name) : NULL;
        if (!r->graph) {
            if (name && gp_http_loading(name))
                gp_http_error(r, GP_HC_NOT_READY, "graph '%s' is still loading", name);
            else
                gp_http_error(r, GP_HC_UNKNOWN_GRAPH, "no graph named '%s' (GET /v1/graphs lists "
                              "them)", name ? name : "");
            return;
        }
    }
    if ((rt->flags & GP_ROUTE_JSON) && r->body_len > 0) {
        const char *end = NULL;
        r->json = cJSON_ParseWithLengthOpts(r->body, r->body_len, &end, 0);
        if (!r->json) {
            size_t off = end && end >= r->body ? (size_t)(end - r->body) : 0;
            gp_http_error(r, GP_HC_INVALID_JSON, "request body is not valid JSON (near byte %zu)",
                          off);
            return;
        }
    }
    /* query handlers run under the compute deadline (thread-local: this MHD thread only) */
    int timed = (rt->flags & GP_ROUTE_QUERY) && srv.cfg && srv.cfg->request_timeout_ms > 0;
    if (timed) gp_deadline_set(gp_now() + (double)srv.cfg->request_timeout_ms / 1e3);
    rt->handler(r);
    if (timed) gp_deadline_set(0);
    if (!r->answered)
        gp_http_error(r, GP_HC_INTERNAL, "the handler of %s %s gave no answer", rt->method,
                      rt->pattern);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    (void)cls;
    (void)version;
    gp_req *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r) return MHD_NO;
        r->conn = conn;
        r->method = method;
        r->path = url;
        r->t0 = gp_now();
        r->route = -1;
        r->err_code = -1;
        *con_cls = r;
        __atomic_fetch_add(&srv.active, 1, __ATOMIC_RELAXED);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end = NULL;
            unsigned long long v = strtoull(cl, &end, 10);
            if (end != cl && v > (unsigned long long)srv.cfg->max_body_bytes) {
                gp_http_error(r, GP_HC_TOO_BIG,
                              "request body of %llu bytes exceeds max_body_bytes = %ld", v,
                              srv.cfg->max_body_bytes);
                r->too_big = 1;
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (r->answered || r->too_big) return MHD_YES;
        if (r->body_len + n > (size_t)srv.cfg->max_body_bytes) {
            r->too_big = 1;
            free(r->body);
            r->body = NULL;
            r->body_len = 0;
            return MHD_YES;
        }
        if (r->body_len + n + 1 > r->body_cap) {
            size_t cap = r->body_cap ? r->body_cap : 4096;
            while (cap < r->body_len + n + 1) cap *= 2;
            char *b = realloc(r->body, cap);
            if (!b) return MHD_NO;
            r->body = b;
            r->body_cap = cap;
        }
        memcpy(r->body + r->body_len, upload_data, n);
        r->body_len += n;
        r->body[r->body_len] = '\0';
        return MHD_YES;
    }
    if (r->answered) return MHD_YES;
    if (r->too_big) {
        gp_http_error(r, GP_HC_TOO_BIG, "request body exceeds max_body_bytes = %ld",
                      srv.cfg->max_body_bytes);
        return MHD_YES;
    }
    route_request(r);
    if (!r->answered) dispatch(r);
    return MHD_YES;
}

/* Copies s for a key=value log field: bytes that would break the line's parsing (space, control,
 * quote, backslash, %, non-ASCII: MHD hands us the decoded path) become %XX. */
static void log_escape(const char *s, char *out, size_t size) {
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *s && o + 4 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '%') {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)conn;
    gp_req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    double dt = gp_now() - r->t0;
    gp_metrics_request(r->route >= 0 ? (size_t)r->route : gp_nroutes, r->status, dt);
    char path[512];
    log_escape(r->path, path, sizeof path);
    GP_LOG(GP_LOG_INFO,
           "event=request method=%s path=%s status=%d bytes=%zu duration_ms=%.3f%s%s%s", r->method,
           path, r->status, r->bytes, dt * 1e3, r->err_code >= 0 ? " code=" : "",
           r->err_code >= 0 ? codes[r->err_code].name : "",
           toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " aborted=1");
    gp_graph_unref(r->graph);
    cJSON_Delete(r->json);
    free(r->body);
    free(r->segs);
    for (int i = 0; i < r->nheaders; i++) {
        free(r->headers[i][0]);
        free(r->headers[i][1]);
    }
    free(r);
    __atomic_fetch_sub(&srv.active, 1, __ATOMIC_RELAXED);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    GP_LOG(GP_LOG_WARN, "event=httpd msg=\"%s\"", line);
}

gp_http *gp_http_start(const gp_config *cfg, gp_engine *e, gp_registry *reg, gp_err *err) {
    srv.cfg = cfg;
    srv.engine = e;
    srv.reg = reg;
    srv.stopping = 0;
    if (gp_metrics_init()) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    gp_http *h = calloc(1, sizeof *h);
    if (!h) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    const struct sockaddr *addr;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    if (inet_pton(AF_INET, cfg->listen, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)cfg->port);
        addr = (const struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, cfg->listen, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)cfg->port);
        addr = (const struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        free(h);
        gp_err_set(err, GP_EINVAL, "listen: '%s' is not an IPv4 or IPv6 address", cfg->listen);
        return NULL;
    }
    /* More threads than CPUs: a handler blocks its thread (and that thread's connections) for the
     * whole query, so slow queries (APSP, big trees) must leave threads free for quick ones, and
     * the GPU's stream pool needs several requests in flight. */
    long threads = cfg->threads;
    if (threads <= 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        threads = ncpu > 4 ? 2 * ncpu : 8;
    }
    h->d = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)cfg->connection_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)cfg->max_connections, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (!h->d) {
        free(h);
        gp_err_set(err, GP_EIO, "cannot listen on %s:%ld (%s)", cfg->listen, cfg->port,
                   errno ? strerror(errno) : "libmicrohttpd failed to start");
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : (unsigned)cfg->port;
    GP_LOG(GP_LOG_INFO, "event=listening address=%s port=%u threads=%ld", cfg->listen, h->port,
           threads);
    return h;
}

unsigned gp_http_port(const gp_http *h) { return h ? h->port : 0; }

void gp_http_stop(gp_http *h, double grace_s) {
    if (!h) return;
    __atomic_store_n(&srv.stopping, 1, __ATOMIC_RELAXED);
    MHD_socket fd = MHD_quiesce_daemon(h->d);
    /* The worker threads drop the listening socket at their next loop turn (woken through the
     * ITC); close it after that so new connections are refused rather than left in the backlog. */
    struct timespec turn = {0, 100 * 1000 * 1000};
    nanosleep(&turn, NULL);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    double t0 = gp_now();
    int waited = 0;
    while (__atomic_load_n(&srv.active, __ATOMIC_RELAXED) > 0 && gp_now() - t0 < grace_s) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        waited = 1;
    }
    int left = __atomic_load_n(&srv.active, __ATOMIC_RELAXED);
    GP_LOG(GP_LOG_INFO, "event=stopping waited_ms=%.0f in_flight_left=%d", waited ?
           (gp_now() - t0) * 1e3 : 0.0, left);
    MHD_stop_daemon(h->d);
    free(h);
    srv.engine = NULL;
    srv.reg = NULL;
}
