/* http.h - the HTTP service's toolkit for request handlers (server/http/request.c, daemon.c) and
 * its route table (server/routes.c).
 *
 * A handler is `void h(gp_req *r)`. It reads the request through the accessors below and answers
 * exactly once with gp_http_json / gp_http_text / gp_http_error (a handler that answers nothing
 * gets a 500 InternalError). The dispatcher has already, per the route's flags:
 *  - GP_ROUTE_GRAPH: resolved the {graph} path segment to a referenced gp_graph (gp_req_graph),
 *    released after the response (404 UnknownGraph / 503 NotReady otherwise);
 *  - GP_ROUTE_JSON:  parsed the body into a cJSON tree (gp_req_json; NULL for an empty body,
 *    400 InvalidJson when it does not parse), freed after the response (a route without it may
 *    read the text first and parse on demand: gp_req_parse_json);
 *  - GP_ROUTE_ADMIN: checked the bearer token (403 AdminDisabled, 401 Unauthorized, 403 Forbidden);
 *  - GP_ROUTE_OPERATOR: checked the bearer token against operator_token or admin_token (403
 *    OperatorDisabled when neither is set, 401, 403): calls that change what gpath answers.
 * Before any route: bodies are capped at max_body_bytes (413 TooBig), request targets at
 * max_url_bytes (414 UriTooLong), header blocks at max_header_bytes (431 HeadersTooLarge), and a
 * NUL byte (%00) in the decoded path or query is refused (400 InvalidQuery). Every answer carries
 * X-Request-Id, CORS headers for allowed origins (never on /admin), and is gzip-compressed when
 * the client accepts it and the body is at least gzip_min_bytes (streams too).
 *
 * Adding an endpoint: write the handler in your own file, declare it in your own header, and add
 * one line to the table in server/routes.c (plus the path to openapi.yaml; tests/check_openapi.py
 * compares them). Error codes (GP_HC_*) and THE error document are in server/errors.h.
 */
#ifndef GP_HTTP_H
#define GP_HTTP_H

#include "engine/engine.h"
#include "graph/graph.h"
#include "server/config.h"
#include "server/http/counters.h" /* gp_metrics_count & co., for handlers */
#include "server/http/json.h"
#include "server/errors.h"
#include "server/registry.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_req gp_req;
typedef void (*gp_handler)(gp_req *r);

enum {
    GP_ROUTE_GRAPH = 1,    /* resolve {graph} to a referenced graph */
    GP_ROUTE_JSON = 2,     /* parse the body as JSON */
    GP_ROUTE_ADMIN = 4,    /* bearer-token protected */
    GP_ROUTE_QUERY = 8,    /* runs under the request_timeout_ms deadline (504 Timeout past it) */
    GP_ROUTE_OPERATOR = 16 /* changes what gpath answers: operator_token or admin_token */
};

typedef struct gp_route {
    const char *method;  /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *pattern; /* "/v1/graphs/{graph}/route": {name} matches one non-empty segment */
    gp_handler handler;
    int flags;
} gp_route;
extern const gp_route gp_routes[]; /* server/routes.c */
extern const size_t gp_nroutes;

/* ---- request accessors (valid until the handler returns) ---- */
const char *gp_req_method(const gp_req *r);
const char *gp_req_path(const gp_req *r);
/* A {name} path segment of the matched pattern, or NULL. */
const char *gp_req_param(const gp_req *r, const char *name);
/* A query-string argument (URL-decoded), or NULL when absent. */
const char *gp_req_query(const gp_req *r, const char *name);
/* Calls fn(ctx, name, value) for every query-string argument in order, repeats included (value
 * NULL for a bare "?flag"); returns the count. Used by server/api/params.c. */
typedef void (*gp_req_arg_fn)(void *ctx, const char *name, const char *value);
unsigned gp_req_query_each(const gp_req *r, gp_req_arg_fn fn, void *ctx);
/* A request header, or NULL. */
const char *gp_req_header(const gp_req *r, const char *name);
/* The raw body (NUL-terminated; len excludes the NUL) - empty string when none. */
const char *gp_req_body(const gp_req *r, size_t *len);
/* The parsed body for GP_ROUTE_JSON routes; NULL when the body was empty. Owned by the request. */
cJSON *gp_req_json(const gp_req *r);
/* The body parsed on demand (once; the dispatcher's for GP_ROUTE_JSON): 1 with
 * gp_req_json set (NULL for an empty body), or 0 with the 400 InvalidJson answered. */
int gp_req_parse_json(gp_req *r);
/* The referenced graph for GP_ROUTE_GRAPH routes, and its registry name. */
gp_graph *gp_req_graph(const gp_req *r);
const char *gp_req_graph_name(const gp_req *r);

/* Typed query getters. Return GP_OK with *out set; when the parameter is absent, GP_OK with *out
 * = def if !required, else GP_EINVAL; GP_EINVAL when malformed or outside [min, max]. err's
 * message names the parameter. Answer with gp_http_error_err(r, GP_HC_INVALID_QUERY, &err). */
int gp_req_query_i64(const gp_req *r, const char *name, int required, int64_t def, int64_t min,
                     int64_t max, int64_t *out, gp_err *err);
int gp_req_query_double(const gp_req *r, const char *name, int required, double def, double min,
                        double max, double *out, gp_err *err);
/* "true|false|1|0|yes|no". */
int gp_req_query_bool(const gp_req *r, const char *name, int def, int *out, gp_err *err);

/* Resolves an external node id to an internal index of the request's graph; on failure answers
 * 400 UnknownNode naming `what` ("from", "sources[3]") and returns GP_NONE. */
uint32_t gp_req_node(gp_req *r, int64_t ext_id, const char *what);

/* ---- responses (exactly one per request) ---- */
/* Sends body (takes ownership of the tree, prints it compactly, frees it). NULL body -> 500. */
void gp_http_json(gp_req *r, int status, cJSON *body);
/* Sends the written JSON text o (server/http/json.h) as gp_http_json sends a tree's: ownership of
 * o->p taken; a bad text (out of memory) answers 500. */
void gp_http_json_out(gp_req *r, int status, gp_json_out *o);
/* Sends a copy of len bytes with the given content type. */
void gp_http_text(gp_req *r, int status, const char *content_type, const char *buf, size_t len);
/* Sends buf (malloc'd; ownership taken, freed after sending, also on failure). */
void gp_http_send(gp_req *r, int status, const char *content_type, char *buf, size_t len);
/* Streams a response of unknown length (chunked), for bodies too big to build in memory (added
 * for server/v1/netops.c). fill writes up to max bytes into buf and returns the count, 0 at the end,
 * or -1 to abort the connection; it runs on the daemon's threads after the handler returned, so
 * ctx must own what it reads. done(ctx) runs exactly once, when the response ends or is dropped
 * (also when it could not be queued). */
typedef long (*gp_http_fill_fn)(void *ctx, char *buf, size_t max);
void gp_http_stream(gp_req *r, int status, const char *content_type, gp_http_fill_fn fill,
                    void (*done)(void *ctx), void *ctx);
/* Counts `bytes` a streamed answer holds until its client has read it (the arrays it is rendered
 * from) against max_buffered_answer_bytes, as buffered answers are counted: 0 when counted
 * (give them back with gp_http_held_drop from the stream's done), -1 when the total would pass
 * the limit (r is then answered 503 Busy naming it). Small holds and in-process requests are not
 * counted (*held = 0). */
int gp_http_held_take(gp_req *r, size_t bytes, size_t *held);
void gp_http_held_drop(size_t held);
/* The same for a body of known length (sent as Content-Length, never compressed; UINT64_MAX:
 * unknown): fill must give exactly size bytes, or fail (-1: the connection is cut). */
void gp_http_stream_sized(gp_req *r, int status, const char *content_type, uint64_t size,
                          gp_http_fill_fn fill, void (*done)(void *ctx), void *ctx);
/* Matrices as NumPy .npy (server/http/npy.c): fill_rows(ctx, worker, row0, k, out, err) writes
 * rows row0 .. row0+k-1 (k * cols float32, row-major) or fails (GP_E*, err filled); it runs on
 * `workers` threads of the answer's own after the handler returned (blocks in turn: worker w the
 * w-th of every `workers`), ahead of the connection, a block of about matrix_block_cells cells
 * at a time, each under its own request_timeout_ms; done(ctx) runs exactly once at the end,
 * after every worker stopped. */
typedef int (*gp_http_rows_fn)(void *ctx, int worker, uint32_t row0, uint32_t k, float *out,
                               gp_err *err);
/* Blocks computed at once at most (gp_http_npy's workers): a fill_rows called with worker w
 * works in buffers of its own for w; calls of one worker come one at a time. */
#define GP_HTTP_NPY_WORKERS 2
/* The rows of one block gp_http_npy asks fill_rows for (at least 1, at most rows): the buffers
 * a fill_rows works in are sized from it. */
uint32_t gp_http_npy_block(uint32_t rows, uint32_t cols);
void gp_http_npy(gp_req *r, uint32_t rows, uint32_t cols, int workers, gp_http_rows_fn fill_rows,
                 void (*done)(void *ctx), void *ctx);
/* The ring behind gp_http_npy, for other consumers of a matrix's blocks (matrix jobs):
 * fill_rows on `workers` threads (at most GP_HTTP_NPY_WORKERS), blocks of `block` rows computed
 * ahead of the consumer, each under its own timeout_s (0: none). NULL (err set) when no memory
 * or thread. */
typedef struct gp_npy_blocks gp_npy_blocks;
gp_npy_blocks *gp_npy_blocks_start(uint32_t rows, uint32_t cols, uint32_t block, int workers,
                                   double timeout_s, gp_http_rows_fn fill_rows, void *ctx,
                                   gp_err *err);
/* The next block in row order (the one handed out before is given back): 1 with *buf (*bytes
 * long), *row0 and *k set; 0 when every block was handed out; -1 when a block failed (then
 * gp_npy_blocks_error says which rows and why; the workers stop). */
int gp_npy_blocks_next(gp_npy_blocks *b, const float **buf, size_t *bytes, uint32_t *row0,
                       uint32_t *k);
const gp_err *gp_npy_blocks_error(const gp_npy_blocks *b, uint32_t *row0, uint32_t *k);
/* Stops the workers (each finishes its block first) and frees the ring. */
void gp_npy_blocks_free(gp_npy_blocks *b);
/* 1 when the request's Accept header names application/x-npy. */
int gp_http_accepts_npy(const gp_req *r);
/* The 128-byte .npy header of a rows x cols float32 array; its length. */
size_t gp_npy_header(char out[128], uint32_t rows, uint32_t cols);
/* THE error writer: {"code": NAME, "message": ...} with the code's HTTP status. */
void gp_http_error(gp_req *r, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Error from a gp_err: code chosen by gp_http_code_of(err->code) unless fallback_code >= 0 is
 * given for GP_EINVAL/GP_EPARSE; the message is err->msg. */
void gp_http_error_err(gp_req *r, int fallback_code, const gp_err *err);
/* Adds a response header to the response about to be sent (call before gp_http_*). */
void gp_req_add_header(gp_req *r, const char *name, const char *value);
/* Asks for the allocator's free memory to be returned to the system (malloc_trim) once r is done
 * and its graph reference dropped: for requests that replace a graph version (PATCH links), whose
 * old arrays glibc would otherwise keep (RSS 0.32 -> 1.1 GB after 879 PATCHes, no leak). */
void gp_req_trim_after(gp_req *r);
/* 1 once the handler has answered. */
int gp_req_answered(const gp_req *r);

/* ---- the running service (valid while gp_serve_main runs) ---- */
const gp_config *gp_http_config(void);
gp_engine *gp_http_engine(void);
gp_registry *gp_http_registry(void);
/* 1 when every graph configured at start has loaded; else 0 and why (loading / failed). */
int gp_http_ready(char *why, size_t size);
/* 1 while name is still waiting to be loaded at start (requests get 503 NotReady). */
int gp_http_loading(const char *name);
/* Startup bookkeeping, called by serve.c's loader thread. */
void gp_http_startup_begin(const gp_config *cfg);
void gp_http_startup_graph(const char *name, int ok, const char *msg);
void gp_http_startup_end(void);
/* A graph whose start-up load failed has loaded since (a retried PostgreSQL load, an admin PUT):
 * /ready no longer waits for it. No effect for a name that did not fail. */
void gp_http_startup_recovered(const char *name);
/* Checks the admin bearer token; on failure answers (401/403) and returns 0. GP_ROUTE_ADMIN routes
 * need not call it. */
int gp_http_admin_ok(gp_req *r);

/* Checks the operator bearer token (operator_token or admin_token); on failure answers
 * (403 OperatorDisabled / 401 / 403) and returns 0. GP_ROUTE_OPERATOR routes need not call it. */
int gp_http_operator_ok(gp_req *r);

/* ---- in-process requests (tests, tests/fuzz/fuzz_request.c) ---- */
/* An answer captured without a socket. */
typedef struct gp_http_answer {
    int status;
    char content_type[64];
    char *body; /* malloc'd, len bytes (a streamed answer is drained into it) */
    size_t len;
    int nheaders;
    char *headers[16][2]; /* name, value (malloc'd) */
} gp_http_answer;
/* Makes cfg/e/reg the running service's without listening (gp_http_start calls it). */
int gp_http_attach(const gp_config *cfg, gp_engine *e, gp_registry *reg);
/* Runs one request through the same decoding, limits, routing, auth, dispatch and answer
 * post-processing (request id, CORS, gzip) as a request read off a socket: target is the raw
 * request target ("/v1/graphs/g/route?from=1&to=%32"), headers a NULL-terminated list of name,
 * value pairs (may be NULL), body len bytes. Returns GP_OK with *out filled (free it with
 * gp_http_answer_free), GP_ENOMEM. Needs gp_http_attach first. */
int gp_http_dispatch(const char *method, const char *target, const char *const *headers,
                     const char *body, size_t len, gp_http_answer *out);
void gp_http_answer_free(gp_http_answer *a);
/* The value of an answer header (case-insensitive name), or NULL. */
const char *gp_http_answer_header(const gp_http_answer *a, const char *name);

/* ---- the HTTP daemon (server/http/daemon.c), used by serve.c ---- */
typedef struct gp_http gp_http;
/* Starts listening (port 0: ephemeral). */
gp_http *gp_http_start(const gp_config *cfg, gp_engine *e, gp_registry *reg, gp_err *err);
unsigned gp_http_port(const gp_http *h);
/* Stops accepting, waits up to grace_s for requests in flight, stops the daemon, frees. */
void gp_http_stop(gp_http *h, double grace_s);

#ifdef __cplusplus
}
#endif
#endif
