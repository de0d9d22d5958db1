/* daemon.c - the libmicrohttpd daemon and the request pipeline: per-request state (decoded path,
 * query and headers copied out of the connection), protocol limits (body, request target and
 * header sizes, NUL bytes, read deadline, connections per client), routing over the static table
 * of server/routes.c, bearer-token checks, graph lookup, one access-log line and counts per
 * request, graceful stop (the handler toolkit's accessors and answers, THE error writer among
 * them, are server/http/request.c's). The same pipeline runs without sockets (gp_http_dispatch)
 * for tests and the fuzzer.
 *
 * MHD protocol: the URI-log callback allocates the request state when the request line arrives
 * (with the raw target's length); the access handler is then called once with the headers (we
 * copy them and check limits), once per body chunk (appended while under max_body_bytes,
 * discarded past it, bounded by max_discard_bytes), then with *upload_data_size == 0 when the
 * body is complete: we answer then, so a client that is still sending reads its error instead of
 * a broken pipe. The completion callback logs, counts and frees the state (including the graph
 * reference, so a graph replaced by a reload is freed only after its last response went out).
 * Connections are tracked from accept to close (NOTIFY_CONNECTION) for the read deadline: a
 * watchdog thread shuts down the socket of a connection that has not delivered a whole request
 * within request_read_timeout_s, however slowly it trickles bytes.
 *
 * Connections come from the front end (server/http/front.c), which owns the listening socket and
 * refuses, in JSON, every first request head that libmicrohttpd 0.9.75 (Debian 12) would answer
 * itself with HTML (or, for a malformed Content-Length, with its status line twice); the daemon
 * runs with MHD_USE_NO_LISTEN_SOCKET and a connection memory pool sized for any head the front
 * end lets through. A second daemon with a small pool (GP_HEAD_SMALL_POOL, from malloc: the big
 * one is mmap'd per connection) serves the connections whose first request closes them, when
 * that head fits it: the library never parses another head there. Later requests of a
 * keep-alive connection reach the library directly: the pool still gives oversize ones our JSON
 * 414/431, and the Content-Length guard below answers a malformed length once. What stays the
 * library's own answer on such later requests: a request line or head past the pool, a malformed
 * header or request line, and errors in a chunked body (chunk syntax, trailers), which no head
 * check can see - one HTML answer each, never two - and the guard's undecided case (see there).
 */
#include "server/http/http.h"

#include "server/http/front.h"
#include "server/http/internal.h"
#include "server/http/head.h"
#include "server/http/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---- the running service ---- */
/* A connection, from accept to close (MHD socket context), for the read deadline. */
struct gp_conn {
    gp_conn *prev, *next;
    int fd;
    /* reading, read_start, killed and in_request are atomics: written by the connection's thread
     * several times a request, read by the watchdog (a mutex per write was taken by every request
     * of every thread) */
    int reading; /* waiting for (the rest of) a request: the deadline runs */
    double read_start;
    int killed;     /* the watchdog shut it down */
    int saw_nul;    /* the unescape callback decoded a %00 for the current request */
    int in_request; /* a request line arrived since the last answer (else: idle keep-alive) */
    void *acct;     /* the front end's count of this connection (gp_front_release) */
    int in_head;    /* between its request line and the handler's first call (this thread):
                     * 1 listed for the Content-Length guard, 2 past its list */
    struct MHD_Connection *mhd; /* the library's connection (the guard reads its headers) */
    char client[64];
};

struct gp_http {
    struct MHD_Daemon *d;  /* connections that may carry several requests: the big pool */
    struct MHD_Daemon *d1; /* connections whose first request closes them: a small pool */
    gp_front *front;       /* accepts, checks the first head, hands connections to d or d1 */
    unsigned port;
    pthread_t watchdog;
    int has_watchdog;
};

static struct {
    const gp_config *cfg;
    gp_engine *engine;
    gp_registry *reg;
    int active;         /* requests between their headers and completion (atomic) */
    int stopping;       /* set at shutdown: answers carry Connection: close */
    pthread_mutex_t mu; /* guards the startup fields */
    int startup_done;
    char pending[GP_CONFIG_MAX_GRAPHS][65];
    int npending;
    struct {
        char name[65];
        char msg[600];
    } failed[GP_CONFIG_MAX_GRAPHS]; /* start-up loads that failed and have not recovered */
    int nfailed;
    pthread_mutex_t conn_mu; /* guards the connection list (its reading fields are atomics) */
    pthread_cond_t conn_cv;  /* wakes the watchdog at stop */
    gp_conn *conns;
    int watchdog_stop;
    int cl_guard; /* libmicrohttpd 0.9.x: the Content-Length guard of mhd_log is on */
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER,
         .conn_mu = PTHREAD_MUTEX_INITIALIZER,
         .conn_cv = PTHREAD_COND_INITIALIZER};

const gp_config *gp_http_config(void) { return srv.cfg; }
gp_engine *gp_http_engine(void) { return srv.engine; }
gp_registry *gp_http_registry(void) { return srv.reg; }
int gp_http_stopping(void) { return __atomic_load_n(&srv.stopping, __ATOMIC_RELAXED); }

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

/* ---- bearer tokens ---- */
/* 1 when the Authorization header carries tok (compared in constant time); 0 and *missing = 1
 * when there is no bearer token at all. */
static int bearer_is(gp_req *r, const char *tok, int *missing) {
    const char *h = gp_req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    *missing = !h || strncasecmp(h, "Bearer ", 7) != 0;
    if (*missing || !tok[0]) return 0;
    const char *given = h + 7;
    while (*given == ' ') given++;
    size_t gl = strlen(given), tl = strlen(tok);
    unsigned char diff = (unsigned char)(gl != tl);
    for (size_t i = 0; i < gl; i++) diff |= (unsigned char)(given[i] ^ tok[i % tl]);
    return diff == 0;
}

int gp_http_admin_ok(gp_req *r) {
    const char *tok = srv.cfg ? srv.cfg->admin_token : "";
    if (!tok[0]) {
        gp_http_error(r, GP_HC_ADMIN_DISABLED,
                      "admin endpoints are disabled: set admin_token (or GPATH_ADMIN_TOKEN)");
        return 0;
    }
    int missing;
    if (bearer_is(r, tok, &missing)) return 1;
    if (missing) {
        gp_req_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"gpath-admin\"");
        gp_http_error(r, GP_HC_UNAUTHORIZED, "admin endpoint: send 'Authorization: Bearer TOKEN'");
    } else {
        gp_http_error(r, GP_HC_FORBIDDEN, "admin endpoint: wrong bearer token");
    }
    return 0;
}

int gp_http_operator_ok(gp_req *r) {
    const char *op = srv.cfg ? srv.cfg->operator_token : "";
    const char *adm = srv.cfg ? srv.cfg->admin_token : "";
    if (!op[0] && !adm[0]) {
        gp_http_error(r, GP_HC_OPERATOR_DISABLED,
                      "%s %s changes what gpath answers and is disabled: set operator_token (or "
                      "GPATH_OPERATOR_TOKEN) or admin_token, and send 'Authorization: Bearer "
                      "TOKEN'",
                      r->method, r->path);
        return 0;
    }
    int missing, m2;
    if (bearer_is(r, op, &missing) | bearer_is(r, adm, &m2)) return 1;
    if (missing) {
        gp_req_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"gpath-operator\"");
        gp_http_error(r, GP_HC_UNAUTHORIZED,
                      "%s %s changes what gpath answers: send 'Authorization: Bearer TOKEN' "
                      "(operator_token or admin_token)",
                      r->method, r->path);
    } else {
        gp_http_error(r, GP_HC_FORBIDDEN, "wrong bearer token for %s %s", r->method, r->path);
    }
    return 0;
}

/* ---- routing ---- */
/* Matches path against pattern; on success fills r's params (r NULL: only tells). The walk reads
 * the path in place: only the route that matches copies it (r->segs), not every pattern tried. */
static int match(const char *pattern, const char *path, gp_req *r) {
    int np = 0;
    const char *p = pattern, *s = path;
    struct {
        char name[32];
        size_t off, len; /* the value: path[off, off + len) */
    } params[MAX_PARAMS];
    for (;;) {
        if (*p != '/' || *s != '/') return 0;
        p++;
        s++;
        const char *pe = strchr(p, '/');
        size_t plen = pe ? (size_t)(pe - p) : strlen(p);
        const char *se = strchr(s, '/');
        size_t slen = se ? (size_t)(se - s) : strlen(s);
        if (plen > 2 && p[0] == '{' && p[plen - 1] == '}') {
            if (slen == 0 || np == MAX_PARAMS) return 0;
            size_t nl = plen - 2 < 31 ? plen - 2 : 31;
            memcpy(params[np].name, p + 1, nl);
            params[np].name[nl] = '\0';
            params[np].off = (size_t)(s - path);
            params[np].len = slen;
            np++;
        } else if (plen != slen || memcmp(p, s, plen) != 0) {
            return 0;
        }
        p += plen;
        s += slen;
        if (*p == '\0' && *s == '\0') break;
        if (*p == '\0' || *s == '\0') return 0;
    }
    if (!r) return 1;
    size_t pl = strlen(path);
    char *segs = malloc(pl + 1);
    if (!segs) return 0;
    memcpy(segs, path, pl + 1);
    free(r->segs);
    r->segs = segs;
    r->nparams = np;
    for (int i = 0; i < np; i++) {
        segs[params[i].off + params[i].len] = '\0'; /* the captured segment ends */
        memcpy(r->params[i].name, params[i].name, sizeof params[i].name);
        r->params[i].value = segs + params[i].off;
    }
    return 1;
}

/* OPTIONS: the CORS preflight (and a plain Allow listing) for a path that exists. */
static void preflight(gp_req *r, const char *allow) {
    const char *origin = gp_req_header(r, "Origin");
    if (gp_http_is_admin_path(r->path)) {
        gp_http_error(r, GP_HC_FORBIDDEN,
                      "no CORS on /admin paths: admin calls are not made "
                      "from browsers");
        return;
    }
    char methods[160];
    snprintf(methods, sizeof methods, "%s, OPTIONS", allow);
    gp_req_add_header(r, MHD_HTTP_HEADER_ALLOW, methods);
    if (origin) {
        if (!gp_cors_match(srv.cfg->cors_origins, origin)) {
            gp_http_error(r, GP_HC_FORBIDDEN,
                          "origin '%.200s' is not allowed (cors_origins = "
                          "'%.200s')",
                          origin, srv.cfg->cors_origins);
            return;
        }
        gp_req_add_header(r, "Access-Control-Allow-Methods", methods);
        gp_req_add_header(r, "Access-Control-Allow-Headers",
                          "Authorization, Content-Type, X-Request-Id");
        gp_req_add_header(r, "Access-Control-Max-Age", "600");
    }
    gp_http_send_buf(r, 204, "text/plain", NULL, 0);
}

static void route_request(gp_req *r) {
    char allow[128] = "";
    int path_known = 0;
    for (size_t i = 0; i < gp_nroutes; i++) {
        if (!match(gp_routes[i].pattern, r->path, NULL)) continue;
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
    if (path_known && strcmp(r->method, "OPTIONS") == 0) {
        preflight(r, allow);
    } else if (path_known) {
        gp_req_add_header(r, MHD_HTTP_HEADER_ALLOW, allow);
        gp_http_error(r, GP_HC_METHOD_NOT_ALLOWED, "%s %s: allowed methods are %s", r->method,
                      r->path, allow);
    } else {
        gp_http_error(r, GP_HC_NOT_FOUND, "no endpoint at %s (see openapi.yaml)", r->path);
    }
}

int gp_req_parse_json(gp_req *r) {
    if (r->json || r->body_len == 0) return 1;
    const char *end = NULL;
    r->json = cJSON_ParseWithLengthOpts(r->body, r->body_len, &end, 0);
    if (r->json) return 1;
    size_t off = end && end >= r->body ? (size_t)(end - r->body) : 0;
    gp_http_error(r, GP_HC_INVALID_JSON, "request body is not valid JSON (near byte %zu)", off);
    return 0;
}

static void dispatch(gp_req *r) {
    const gp_route *rt = &gp_routes[r->route];
    if ((rt->flags & GP_ROUTE_ADMIN) && !gp_http_admin_ok(r)) return;
    if ((rt->flags & GP_ROUTE_OPERATOR) && !gp_http_operator_ok(r)) return;
    if (rt->flags & GP_ROUTE_GRAPH) {
        const char *name = gp_req_param(r, "graph");
        r->graph_name = name;
        r->graph = name ? gp_registry_get(srv.reg, name) : NULL;
        if (!r->graph) {
            if (name && gp_http_loading(name))
                gp_http_error(r, GP_HC_NOT_READY, "graph '%s' is still loading", name);
            else
                gp_http_error(r, GP_HC_UNKNOWN_GRAPH,
                              "no graph named '%s' (GET /v1/graphs lists "
                              "them)",
                              name ? name : "");
            return;
        }
    }
    if ((rt->flags & GP_ROUTE_JSON) && !gp_req_parse_json(r)) return;
    /* query handlers run under the compute deadline (thread-local: this MHD thread only) */
    int timed = (rt->flags & GP_ROUTE_QUERY) && srv.cfg && srv.cfg->request_timeout_ms > 0;
    if (timed) gp_deadline_set(gp_now() + (double)srv.cfg->request_timeout_ms / 1e3);
    rt->handler(r);
    if (timed) gp_deadline_set(0);
    if (!r->answered)
        gp_http_error(r, GP_HC_INTERNAL, "the handler of %s %s gave no answer", rt->method,
                      rt->pattern);
}

/* ---- the request pipeline, shared by the daemon and gp_http_dispatch ---- */
static gp_req *req_new(void) {
    gp_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->t0 = gp_now();
    r->route = -1;
    r->err_code = -1;
    return r;
}

/* Remembers an error to answer once the body is in (so the client reads it); the connection is
 * closed after it (a client that sent this is not one to keep talking to). */
static void reject(gp_req *r, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void reject(gp_req *r, int code, const char *fmt, ...) {
    if (r->pending) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->pending_msg, sizeof r->pending_msg, fmt, ap);
    va_end(ap);
    r->pending = code + 1;
    r->close = 1;
}

static void answer_pending(gp_req *r) { gp_http_error(r, r->pending - 1, "%s", r->pending_msg); }

/* The headers are in (method, path, args and headers copied into r): request id, limits. */
static void req_begin(gp_req *r) {
    r->begun = 1;
    __atomic_fetch_add(&srv.active, 1, __ATOMIC_RELAXED); /* a stop waits for it */
    const char *id = gp_req_header(r, "X-Request-Id");
    if (id && gp_request_id_ok(id)) snprintf(r->request_id, sizeof r->request_id, "%s", id);
    else gp_request_id_new(r->request_id, sizeof r->request_id);
    gp_log_set_request_id(r->request_id);
    const char *ae = gp_req_header(r, "Accept-Encoding");
    r->gzip_ok = ae && gp_accepts_gzip(ae);
    const gp_config *cfg = srv.cfg;
    size_t hbytes = 0;
    for (int i = 0; i < r->nhdrs; i++) hbytes += strlen(r->hdrs[i].k) + r->hdrs[i].vlen + 4;
    if (r->saw_nul)
        reject(r, GP_HC_INVALID_QUERY, "the request path or query holds a NUL byte (%%00)");
    for (int i = 0; i < r->nargs; i++)
        if (r->args[i].v && memchr(r->args[i].v, 0, r->args[i].vlen))
            reject(r, GP_HC_INVALID_QUERY, "query parameter '%.64s' holds a NUL byte (%%00)",
                   r->args[i].k);
    if (r->target_len > (size_t)cfg->max_url_bytes)
        reject(r, GP_HC_URI_TOO_LONG, "request target of %zu bytes exceeds max_url_bytes = %ld",
               r->target_len, cfg->max_url_bytes);
    if (hbytes > (size_t)cfg->max_header_bytes)
        reject(r, GP_HC_HEADERS_TOO_LARGE,
               "request headers of %zu bytes exceed max_header_bytes = %ld", hbytes,
               cfg->max_header_bytes);
    /* framing headers on every request, not only a connection's first (the front end's head
     * check): on a keep-alive connection libmicrohttpd alone parsed this head, and a request
     * hidden behind conflicting Content-Length headers or Content-Length beside chunked would
     * be served next; refused here, the connection closes after the 400 */
    gp_head_framing fr = {0, 0, 0};
    gp_head_verdict hv;
    int framing = GP_HEAD_OK;
    for (int i = 0; i < r->nhdrs && framing == GP_HEAD_OK; i++)
        framing = gp_head_framing_add(&fr, r->hdrs[i].k, strlen(r->hdrs[i].k),
                                      r->hdrs[i].v ? r->hdrs[i].v : "", r->hdrs[i].vlen, &hv);
    if (framing == GP_HEAD_OK) framing = gp_head_framing_end(&fr, &hv);
    if (framing != GP_HEAD_OK) {
        r->pending = 0; /* ahead of any other complaint: the body's length is not known */
        reject(r, hv.code, "%s", hv.msg);
        return;
    }
    const char *cl = gp_req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(cl, &end, 10);
        if (end != cl && *cl != '-' && !errno && v > (unsigned long long)cfg->max_body_bytes) {
            r->too_big = 1;
            r->pending = 0; /* the size is the first thing to say */
            reject(r, GP_HC_TOO_BIG, "request body of %llu bytes exceeds max_body_bytes = %ld", v,
                   cfg->max_body_bytes);
            const char *expect = gp_req_header(r, MHD_HTTP_HEADER_EXPECT);
            /* a client waiting for 100 Continue gets the answer now and sends nothing; a body
             * too big even to discard is answered now and the connection closed */
            if ((expect && strcasecmp(expect, "100-continue") == 0) ||
                v > (unsigned long long)cfg->max_discard_bytes) {
                r->close = 1;
                answer_pending(r);
            }
        }
    }
}

/* A body chunk. Returns 0 to drop the connection: allocation failure, or a body (chunked, of no
 * declared length) discarded past max_discard_bytes - libmicrohttpd 0.9.75 would not send an
 * answer queued in the middle of an upload anyway. */
static int req_body(gp_req *r, const char *data, size_t n) {
    r->seen += n;
    if (r->answered) return 1;
    const gp_config *cfg = srv.cfg;
    if (!r->too_big && r->body_len + n > (size_t)cfg->max_body_bytes) {
        r->too_big = 1;
        free(r->body);
        r->body = NULL;
        r->body_len = r->body_cap = 0;
        r->pending = 0;
        reject(r, GP_HC_TOO_BIG, "request body exceeds max_body_bytes = %ld", cfg->max_body_bytes);
    }
    if (r->too_big || r->pending) {
        if (r->seen > (unsigned long long)cfg->max_discard_bytes) {
            r->close = 1;
            return 0;
        }
        return 1;
    }
    if (r->body_len + n + 1 > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 4096;
        while (cap < r->body_len + n + 1) cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b) return 0;
        r->body = b;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return 1;
}

/* The body is complete: answer. */
static void req_finish(gp_req *r) {
    if (r->answered) return;
    if (r->pending) {
        answer_pending(r);
        return;
    }
    route_request(r);
    if (!r->answered) dispatch(r);
}

/* Rate limit of the access log (config log_requests_per_s): 1 when this request's line may be
 * written. A flood of requests cannot flood the log: lines past the limit in one second are
 * counted, and the first line of a later second says how many were dropped. Within a second every
 * request only increments atomics (a mutex here was taken by every request of every thread); the
 * first request of a new second takes the lock to start it. */
static int access_line_allowed(void) {
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static long sec = -1, n = 0, dropped = 0;
    long limit = srv.cfg ? srv.cfg->log_requests_per_s : 0;
    if (limit <= 0) return 1;
    long now = (long)gp_now(), report = 0;
    /* seconds only go forward: a late thread's older second counts in the current one */
    if (__atomic_load_n(&sec, __ATOMIC_ACQUIRE) < now) {
        pthread_mutex_lock(&mu);
        if (__atomic_load_n(&sec, __ATOMIC_RELAXED) < now) {
            report = __atomic_exchange_n(&dropped, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&n, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&sec, now, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&mu);
    }
    int ok = __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED) < limit;
    if (!ok) __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
    if (report)
        GP_LOG(GP_LOG_WARN,
               "event=request_log_suppressed count=%ld limit=%ld msg=\"access lines dropped past "
               "log_requests_per_s\"",
               report, limit);
    return ok;
}

/* The answer went out (or the connection died): one log line, metrics, free. */
static void req_end(gp_req *r, int aborted) {
    if (r->begun) {
        double dt = gp_now() - r->t0;
        gp_metrics_request(r->route >= 0 ? (size_t)r->route : gp_nroutes, r->status, dt);
        if (GP_LOG_INFO <= gp_log_level && access_line_allowed()) { /* built only when written */
            char method[64], path[512], query[1024], client[80];
            gp_log_escape(r->method ? r->method : "", r->method ? strlen(r->method) : 0, method,
                          sizeof method);
            gp_log_escape(r->path ? r->path : "", r->path ? strlen(r->path) : 0, path, sizeof path);
            gp_log_escape(r->client, strlen(r->client), client, sizeof client);
            /* the query as key=value pairs, secrets redacted, escaped as one token */
            size_t q = 0;
            query[0] = '\0';
            for (int i = 0; i < r->nargs && q + 16 < sizeof query; i++) {
                char k[256], v[512];
                gp_log_escape(r->args[i].k, strlen(r->args[i].k), k, sizeof k);
                if (gp_query_key_secret(r->args[i].k)) snprintf(v, sizeof v, "REDACTED");
                else gp_log_escape(r->args[i].v ? r->args[i].v : "", r->args[i].vlen, v, sizeof v);
                int w = snprintf(query + q, sizeof query - q, "%s%s%s%s", i ? "&" : "", k,
                                 r->args[i].v ? "=" : "", r->args[i].v ? v : "");
                if (w < 0) break;
                q += (size_t)w < sizeof query - q ? (size_t)w : sizeof query - q - 1;
            }
            gp_log_set_request_id(r->request_id);
            GP_LOG(GP_LOG_INFO,
                   "event=request method=%s path=%s status=%d bytes=%zu duration_ms=%.3f%s%s%s%s"
                   "%s client=%s",
                   method, path, r->status, r->bytes, dt * 1e3, r->err_code >= 0 ? " code=" : "",
                   r->err_code >= 0 ? gp_http_code_name(r->err_code) : "",
                   aborted ? " aborted=1" : "", query[0] ? " query=" : "", query,
                   client[0] ? client : "-");
            gp_log_set_request_id(NULL);
        }
    }
    gp_http_buffered_release(r);
    gp_graph_unref(r->graph);
    int trim = r->trim;
    cJSON_Delete(r->json);
    free(r->body);
    free(r->segs);
    free(r->method);
    free(r->path);
    gp_kv_free(r->args, r->nargs);
    gp_kv_free(r->hdrs, r->nhdrs);
    for (int i = 0; i < r->nheaders; i++) {
        free(r->headers[i][0]);
        free(r->headers[i][1]);
    }
    if (r->begun) __atomic_fetch_sub(&srv.active, 1, __ATOMIC_RELAXED);
    free(r);
    if (trim) malloc_trim(0); /* the old version's arrays are free now */
}

/* ---- libmicrohttpd glue ---- */
static void head_end(gp_conn *c);

static gp_conn *conn_of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? (gp_conn *)ci->socket_context : NULL;
}

static void conn_reading(gp_conn *c, int reading) {
    if (!c) return;
    if (reading) {
        double now = gp_now();
        __atomic_store_n(&c->in_request, 0, __ATOMIC_RELAXED);
        __atomic_store(&c->read_start, &now, __ATOMIC_RELAXED);
    }
    /* release: the watchdog that sees reading also sees its read_start */
    __atomic_store_n(&c->reading, reading, __ATOMIC_RELEASE);
}

static double read_start_of(gp_conn *c) {
    double t;
    __atomic_load(&c->read_start, &t, __ATOMIC_RELAXED);
    return t;
}

static int conn_expired(gp_conn *c) {
    if (!c || srv.cfg->request_read_timeout_s <= 0) return 0;
    return __atomic_load_n(&c->killed, __ATOMIC_RELAXED) ||
           (__atomic_load_n(&c->reading, __ATOMIC_ACQUIRE) &&
            gp_now() - read_start_of(c) > (double)srv.cfg->request_read_timeout_s);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    (void)cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        gp_conn *c = calloc(1, sizeof *c);
        if (!c) return;
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        c->fd = fi ? (int)fi->connect_fd : -1;
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        gp_addr_str(ai ? ai->client_addr : NULL, c->client, sizeof c->client);
        c->mhd = conn;
        c->read_start = gp_now();
        /* the request deadline runs from the accept, in the front end */
        c->acct = gp_front_adopt(c->fd, &c->read_start);
        pthread_mutex_lock(&srv.conn_mu);
        c->reading = 1;
        c->next = srv.conns;
        if (srv.conns) srv.conns->prev = c;
        srv.conns = c;
        pthread_mutex_unlock(&srv.conn_mu);
        *socket_context = c;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        gp_conn *c = *socket_context;
        if (!c) return;
        /* unlinked before the daemon closes the fd: the watchdog never touches a reused fd */
        pthread_mutex_lock(&srv.conn_mu);
        if (c->prev) c->prev->next = c->next;
        else srv.conns = c->next;
        if (c->next) c->next->prev = c->prev;
        pthread_mutex_unlock(&srv.conn_mu);
        head_end(c);
        gp_front_release(c->acct);
        free(c);
        *socket_context = NULL;
    }
}

/* Shuts down connections that have not delivered a whole request in time; the daemon then sees
 * the socket end and closes it on its own thread. */
static void *watchdog(void *arg) {
    (void)arg;
    pthread_mutex_lock(&srv.conn_mu);
    while (!srv.watchdog_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv.conn_cv, &srv.conn_mu, &ts);
        double now = gp_now(), limit = (double)srv.cfg->request_read_timeout_s;
        for (gp_conn *c = srv.conns; c; c = c->next)
            if (__atomic_load_n(&c->reading, __ATOMIC_ACQUIRE) &&
                !__atomic_load_n(&c->killed, __ATOMIC_RELAXED) && c->fd >= 0 &&
                now - read_start_of(c) > limit) {
                __atomic_store_n(&c->killed, 1, __ATOMIC_RELAXED);
                shutdown(c->fd, SHUT_RDWR);
                char client[80];
                gp_log_escape(c->client, strlen(c->client), client, sizeof client);
                /* a connection idle between requests is ordinary keep-alive housekeeping */
                int in_request = __atomic_load_n(&c->in_request, __ATOMIC_RELAXED);
                GP_LOG(in_request ? GP_LOG_WARN : GP_LOG_DEBUG,
                       "event=read_timeout client=%s limit_s=%ld in_request=%d msg=\"no complete "
                       "request in time (request_read_timeout_s): connection closed\"",
                       client[0] ? client : "-", srv.cfg->request_read_timeout_s, in_request);
            }
    }
    pthread_mutex_unlock(&srv.conn_mu);
    return NULL;
}

/* Percent-decoding for the path and the query (MHD has already turned '+' into ' ' in query
 * arguments); notes a decoded NUL on the connection so the request is refused. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s) {
    (void)cls;
    int nul = 0;
    size_t n = gp_url_decode(s, strlen(s), 0, &nul);
    if (nul) {
        gp_conn *c = conn_of(conn);
        if (c) c->saw_nul = 1;
    }
    return n;
}

/* ---- the Content-Length guard for later requests of a connection ----
 * The front end checks only the first request head of a connection; later ones (keep-alive) are
 * parsed by libmicrohttpd alone, and 0.9.75 answers a malformed or overflowing Content-Length
 * there with its status line and headers twice (parse_connection_headers queues the error, the
 * state machine then builds the header block again). It logs the problem before it queues
 * anything, on the thread that owns the connection, after the head's lines are in the
 * connection's header list, and every connection stays on one thread. So the culprit is among
 * this thread's connections between their request line and their handler (listed here), and it
 * is the one whose Content-Length header fails the library's own rule (1 to 20 decimal digits
 * that fit 64 bits). mhd_log then writes our JSON answer to it and shuts its write side; the
 * library's own answer then fails to send and it closes the connection. Only when two listed
 * connections of the thread both hold a bad Content-Length at that moment (two such clients at
 * once, one head still arriving) is it undecided: the library's double answer goes out as before
 * and is logged. */
#define GUARD_HEADS 32
static __thread gp_conn *tl_head[GUARD_HEADS]; /* connections of this thread in their head */
static __thread int tl_listed;                 /* entries of tl_head */
static __thread int tl_unlisted;               /* in their head past GUARD_HEADS: undecided */
static __thread int tl_untracked;              /* a connection without a record: no guard here */

static void head_begin(gp_conn *c) {
    if (!c) {
        tl_untracked = 1;
        return;
    }
    if (c->in_head) return;
    if (tl_listed < GUARD_HEADS) {
        c->in_head = 1;
        tl_head[tl_listed++] = c;
    } else {
        c->in_head = 2;
        tl_unlisted++;
    }
}

static void head_end(gp_conn *c) {
    if (!c || !c->in_head) return;
    if (c->in_head == 2) {
        tl_unlisted--;
    } else {
        for (int i = 0; i < tl_listed; i++)
            if (tl_head[i] == c) {
                tl_head[i] = tl_head[--tl_listed];
                break;
            }
    }
    c->in_head = 0;
}

/* libmicrohttpd's rule for a Content-Length value: all decimal digits, at least one, in 64 bits */
static int content_length_ok(const char *v) {
    if (!*v) return 0;
    uint64_t x = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9') return 0;
        unsigned d = (unsigned)(*v - '0');
        if (x > (UINT64_MAX - d) / 10) return 0;
        x = x * 10 + d;
    }
    return 1;
}

static void guard_content_length(int too_large) {
    gp_conn *c = NULL;
    int culprits = 0;
    for (int i = 0; i < tl_listed; i++) {
        gp_conn *h = tl_head[i];
        const char *v = h->mhd ? MHD_lookup_connection_value(h->mhd, MHD_HEADER_KIND,
                                                             MHD_HTTP_HEADER_CONTENT_LENGTH)
                               : NULL;
        if (v && !content_length_ok(v)) c = h, culprits++;
    }
    if (tl_untracked || tl_unlisted || culprits != 1 || c->fd < 0) {
        GP_LOG(GP_LOG_WARN,
               "event=httpd_double_answer msg=\"a bad Content-Length on a later "
               "request of a connection while another connection of the same thread holds one "
               "too; libmicrohttpd answers it (twice) itself\"");
        return;
    }
    char rid[32];
    int code = too_large ? GP_HC_TOO_BIG : GP_HC_INVALID_QUERY;
    double t0 = gp_now();
    ssize_t n = gp_front_send_error(
        c->fd, code,
        too_large ? "Content-Length is past any body this server reads (max_body_bytes)"
                  : "Content-Length is not a decimal byte count",
        rid, sizeof rid);
    gp_front_log_answer(NULL, NULL, code, n > 0 ? (size_t)n : 0, gp_now() - t0, c->client, rid,
                        "guard");
}

/* The request line arrived: allocate the request state (becomes *con_cls). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)cls;
    gp_conn *c = conn_of(conn);
    head_begin(c);
    gp_req *r = req_new();
    if (!r) return NULL;
    r->conn = conn;
    r->target_len = strlen(uri);
    r->c = c;
    if (c) {
        c->saw_nul = 0;
        __atomic_store_n(&c->in_request, 1, __ATOMIC_RELAXED);
        snprintf(r->client, sizeof r->client, "%s", c->client);
    }
    return r;
}

typedef struct copy_ctx {
    kv **arr;
    int *n;
    int failed;
} copy_ctx;

static enum MHD_Result copy_kv(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                               const char *value, size_t value_size) {
    (void)kind;
    copy_ctx *c = cls;
    if (gp_kv_add(c->arr, c->n, key, key_size, value, value ? value_size : 0)) c->failed = 1;
    return c->failed ? MHD_NO : MHD_YES;
}

/* The request threads at query_nice (once each: Linux keeps a nice value per thread, and the
 * threads a request starts inherit it), below the thread that applies changes (traffic). */
static void query_priority(void) {
    static __thread int done;
    if (done) return;
    done = 1;
    if (srv.cfg && srv.cfg->query_nice > 0)
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), (int)srv.cfg->query_nice);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    (void)cls;
    (void)version;
    query_priority();
    gp_req *r = *con_cls;
    if (!r) { /* the URI callback could not allocate */
        r = req_new();
        if (!r) return MHD_NO;
        r->conn = conn;
        r->target_len = strlen(url);
        *con_cls = r;
    }
    if (!r->begun) {
        head_end(r->c ? r->c : conn_of(conn));
        r->method = strdup(method);
        r->path = strdup(url);
        copy_ctx ca = {&r->args, &r->nargs, 0}, ch = {&r->hdrs, &r->nhdrs, 0};
        MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, copy_kv, &ca);
        MHD_get_connection_values_n(conn, MHD_HEADER_KIND, copy_kv, &ch);
        if (!r->method || !r->path || ca.failed || ch.failed) return MHD_NO;
        if (r->c) r->saw_nul = r->c->saw_nul;
        req_begin(r);
        if (r->answered) conn_reading(r->c, 0);
        gp_log_set_request_id(NULL);
        return MHD_YES;
    }
    gp_log_set_request_id(r->request_id);
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        int ok = !conn_expired(r->c) && req_body(r, upload_data, n);
        gp_log_set_request_id(NULL);
        return ok ? MHD_YES : MHD_NO;
    }
    conn_reading(r->c, 0);
    req_finish(r);
    gp_log_set_request_id(NULL);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls;
    gp_req *r = *con_cls;
    head_end(r && r->c ? r->c : conn_of(conn));
    if (!r) return;
    *con_cls = NULL;
    conn_reading(r->c ? r->c : conn_of(conn), 1); /* the next request's clock starts now */
    req_end(r, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    char line[512], esc[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    gp_log_escape(line, n, esc, sizeof esc);
    GP_LOG(GP_LOG_WARN, "event=httpd msg=%s", esc);
    /* libmicrohttpd 0.9.75's words, logged before it queues its (double) answer */
    static const char bad_cl[] = "Failed to parse `Content-Length' header";
    static const char big_cl[] = "Too large value of 'Content-Length' header";
    if (srv.cl_guard && strncmp(line, bad_cl, sizeof bad_cl - 1) == 0) guard_content_length(0);
    if (srv.cl_guard && strncmp(line, big_cl, sizeof big_cl - 1) == 0) guard_content_length(1);
}

/* ---- in-process requests ---- */
/* Splits "k=v&k2=v2" (raw) into decoded args. */
static int parse_args(gp_req *r, const char *q) {
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        if (len) {
            char *seg = malloc(len + 1);
            if (!seg) return GP_ENOMEM;
            memcpy(seg, q, len);
            seg[len] = '\0';
            char *eq = strchr(seg, '=');
            if (eq) *eq = '\0';
            size_t kl = gp_url_decode(seg, strlen(seg), 1, &r->saw_nul);
            size_t vl = eq ? gp_url_decode(eq + 1, strlen(eq + 1), 1, &r->saw_nul) : 0;
            int rc = gp_kv_add(&r->args, &r->nargs, seg, kl, eq ? eq + 1 : NULL, vl);
            free(seg);
            if (rc) return rc;
        }
        q += len;
        if (*q == '&') q++;
    }
    return GP_OK;
}

int gp_http_attach(const gp_config *cfg, gp_engine *e, gp_registry *reg) {
    srv.cfg = cfg;
    srv.engine = e;
    srv.reg = reg;
    srv.stopping = 0;
    return gp_metrics_init();
}

int gp_http_dispatch(const char *method, const char *target, const char *const *headers,
                     const char *body, size_t len, gp_http_answer *out) {
    memset(out, 0, sizeof *out);
    gp_req *r = req_new();
    if (!r) return GP_ENOMEM;
    r->local = out;
    snprintf(r->client, sizeof r->client, "in-process");
    r->target_len = strlen(target);
    const char *qm = strchr(target, '?');
    size_t pl = qm ? (size_t)(qm - target) : strlen(target);
    r->method = strdup(method);
    r->path = malloc(pl + 1);
    int rc = r->method && r->path ? GP_OK : GP_ENOMEM;
    if (!rc) {
        memcpy(r->path, target, pl);
        gp_url_decode(r->path, pl, 0, &r->saw_nul);
        if (qm) rc = parse_args(r, qm + 1);
    }
    for (int i = 0; !rc && headers && headers[i] && headers[i + 1]; i += 2)
        rc = gp_kv_add(&r->hdrs, &r->nhdrs, headers[i], strlen(headers[i]), headers[i + 1],
                       strlen(headers[i + 1]));
    if (rc) {
        req_end(r, 1);
        return rc;
    }
    req_begin(r);
    int cut = 0;
    for (size_t off = 0; off < len && !r->answered && !cut;) {
        size_t n = len - off < 4096 ? len - off : 4096;
        cut = !req_body(r, body + off, n);
        off += n;
    }
    req_finish(r); /* a body the daemon would have cut off: still answered here, for tests */
    if (!r->answered) gp_http_send_buf(r, 500, "text/plain", NULL, 0);
    req_end(r, 0);
    return GP_OK;
}

void gp_http_answer_free(gp_http_answer *a) {
    if (!a) return;
    free(a->body);
    for (int i = 0; i < a->nheaders; i++) {
        free(a->headers[i][0]);
        free(a->headers[i][1]);
    }
    memset(a, 0, sizeof *a);
}

const char *gp_http_answer_header(const gp_http_answer *a, const char *name) {
    for (int i = 0; i < a->nheaders; i++)
        if (a->headers[i][0] && strcasecmp(a->headers[i][0], name) == 0) return a->headers[i][1];
    return NULL;
}

/* ---- the daemon ---- */
/* The front end's handoff: a daemon takes a connection whose first head passed the check. */
static int handoff(void *ctx, int fd, const struct sockaddr *addr, socklen_t addrlen,
                   int one_shot) {
    gp_http *h = ctx;
    return MHD_add_connection(one_shot ? h->d1 : h->d, fd, addr, addrlen) == MHD_YES ? 0 : -1;
}

/* One daemon of the pipeline: threads workers, connection memory of pool bytes. */
static struct MHD_Daemon *daemon_start(const gp_config *cfg, long threads, size_t pool) {
    /* MHD_USE_TURBO (in 0.9.75 it only touches a connection's start and end): a new connection
     * is read at once and enters the worker's epoll set only when it would block (every head
     * handed over has arrived already), and the close skips shutdown(SHUT_WR), which close()
     * does the same as: three system calls less per connection. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_TURBO;
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)cfg->connection_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(cfg->max_connections + cfg->connection_reserve),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
}

gp_http *gp_http_start(const gp_config *cfg, gp_engine *e, gp_registry *reg, gp_err *err) {
    if (gp_http_attach(cfg, e, reg)) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    gp_http *h = calloc(1, sizeof *h);
    if (!h) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    /* The front end (server/http/front.c) owns the listening socket: the daemons only serve the
     * connections it hands over (MHD_add_connection), so libmicrohttpd never answers a first
     * request head with its own HTML. Per-client limits are counted there too.
     * More threads than CPUs: a handler blocks its thread (and that thread's connections) for the
     * whole query, so slow queries (APSP, big trees) must leave threads free for quick ones, and
     * the GPU's stream pool needs several requests in flight. */
    long threads = cfg->threads;
    if (threads <= 0) {
        long ncpu = gp_cpu_count();
        threads = ncpu > 4 ? 2 * ncpu : 8;
    }
    /* The connection's memory pool holds the request line, headers and their records: sized for
     * any head the front end lets through (head.h), so none gets the library's HTML. A
     * connection whose first request closes it never shows the library another head, so when
     * that head fits GP_HEAD_SMALL_POOL it goes to a second daemon with that pool, which the
     * library takes from malloc instead of mapping and unmapping it per connection. */
    gp_head_limits lim = {cfg->max_url_bytes, cfg->max_header_bytes};
    h->d = daemon_start(cfg, threads, gp_head_pool_bytes(&lim));
    h->d1 = h->d ? daemon_start(cfg, threads, GP_HEAD_SMALL_POOL) : NULL;
    if (!h->d1) {
        if (h->d) MHD_stop_daemon(h->d);
        free(h);
        gp_err_set(err, GP_EIO, "cannot start the HTTP daemon (%s)",
                   errno ? strerror(errno) : "libmicrohttpd failed to start");
        return NULL;
    }
    const char *ver = MHD_get_version();
    srv.cl_guard = ver && strncmp(ver, "0.9.", 4) == 0;
    h->front = gp_front_start(cfg, handoff, h, err);
    if (!h->front) {
        MHD_stop_daemon(h->d1);
        MHD_stop_daemon(h->d);
        free(h);
        return NULL;
    }
    if (cfg->request_read_timeout_s > 0) {
        srv.watchdog_stop = 0;
        h->has_watchdog = pthread_create(&h->watchdog, NULL, watchdog, NULL) == 0;
        if (!h->has_watchdog)
            GP_LOG(GP_LOG_WARN, "event=watchdog msg=\"cannot start the read-deadline thread\"");
    }
    h->port = gp_front_port(h->front);
    GP_LOG(GP_LOG_INFO, "event=listening address=%s port=%u threads=%ld", cfg->listen, h->port,
           threads);
    return h;
}

unsigned gp_http_port(const gp_http *h) { return h ? h->port : 0; }

/* After the grace, how long cancelled queries get to unwind before the daemon is stopped anyway
 * (MHD then waits for its threads: work with no deadline check, a GPU kernel, ends first). */
#define CUT_WAIT_S 5.0

void gp_http_stop(gp_http *h, double grace_s) {
    if (!h) return;
    __atomic_store_n(&srv.stopping, 1, __ATOMIC_RELAXED);
    /* new connections are refused from here on; those the daemon holds finish their requests */
    gp_front_stop(h->front);
    double t0 = gp_now();
    int waited = 0;
    while (__atomic_load_n(&srv.active, __ATOMIC_RELAXED) > 0 && gp_now() - t0 < grace_s) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        waited = 1;
    }
    int left = __atomic_load_n(&srv.active, __ATOMIC_RELAXED);
    GP_LOG(GP_LOG_INFO, "event=stopping waited_ms=%.0f in_flight_left=%d",
           waited ? (gp_now() - t0) * 1e3 : 0.0, left);
    if (left > 0) {
        /* the grace is over: every query still computing gives up at its next deadline check
         * (GP_ETIMEOUT, answered 504 "shutting down") instead of running to its own deadline or,
         * with request_timeout_ms = 0, to its end; the wait below is for that unwinding only */
        gp_deadline_cut_all();
        double t1 = gp_now();
        while (__atomic_load_n(&srv.active, __ATOMIC_RELAXED) > 0 && gp_now() - t1 < CUT_WAIT_S) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        GP_LOG(GP_LOG_INFO, "event=cancelled in_flight=%d unwound_ms=%.0f in_flight_left=%d", left,
               (gp_now() - t1) * 1e3, __atomic_load_n(&srv.active, __ATOMIC_RELAXED));
    }
    if (h->has_watchdog) {
        pthread_mutex_lock(&srv.conn_mu);
        srv.watchdog_stop = 1;
        pthread_cond_signal(&srv.conn_cv);
        pthread_mutex_unlock(&srv.conn_mu);
        pthread_join(h->watchdog, NULL);
    }
    MHD_stop_daemon(h->d1);
    MHD_stop_daemon(h->d);
    free(h);
    srv.engine = NULL;
    srv.reg = NULL;
}
