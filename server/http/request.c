/* request.c - the handler toolkit of server/http/http.h on the transport's side: the request
 * accessors, typed query values, the answers (gp_http_json / text / error, streamed bodies gzip-
 * compressed on the fly) and their shared post-processing (request id, CORS, gzip). The
 * per-request state is filled by the daemon (server/http/daemon.c; internal.h).
 */
#include "server/http/internal.h"

#include "server/http/json.h"
#include "server/http/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* ---- accessors ---- */
const char *gp_req_method(const gp_req *r) { return r->method; }
const char *gp_req_path(const gp_req *r) { return r->path; }
const char *gp_req_param(const gp_req *r, const char *name) {
    for (int i = 0; i < r->nparams; i++)
        if (strcmp(r->params[i].name, name) == 0) return r->params[i].value;
    return NULL;
}
const char *gp_req_query(const gp_req *r, const char *name) {
    for (int i = 0; i < r->nargs; i++)
        if (strcmp(r->args[i].k, name) == 0) return r->args[i].v;
    return NULL;
}
unsigned gp_req_query_each(const gp_req *r, gp_req_arg_fn fn, void *ctx) {
    for (int i = 0; i < r->nargs; i++) fn(ctx, r->args[i].k, r->args[i].v);
    return (unsigned)r->nargs;
}
const char *gp_req_header(const gp_req *r, const char *name) {
    for (int i = 0; i < r->nhdrs; i++)
        if (strcasecmp(r->hdrs[i].k, name) == 0) return r->hdrs[i].v;
    return NULL;
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
        return gp_err_set(err, GP_EINVAL, "query parameter '%s' must be in [%lld, %lld], got %lld",
                          name, (long long)min, (long long)max, x);
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
        return gp_err_set(err, GP_EINVAL, "query parameter '%s' must be in [%g, %g], got %g", name,
                          min, max, x);
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

/* Appends a copy of key/value (value of vlen bytes; NULL for a query argument without '=', which
 * reads as absent, as libmicrohttpd has it) to a kv array. */
int gp_kv_add(kv **arr, int *n, const char *k, size_t klen, const char *v, size_t vlen) {
    kv *a = realloc(*arr, sizeof *a * (size_t)(*n + 1));
    if (!a) return GP_ENOMEM;
    *arr = a;
    char *kc = malloc(klen + 1), *vc = v ? malloc(vlen + 1) : NULL;
    if (!kc || (v && !vc)) {
        free(kc);
        free(vc);
        return GP_ENOMEM;
    }
    memcpy(kc, k, klen);
    kc[klen] = '\0';
    if (vc) {
        if (vlen) memcpy(vc, v, vlen);
        vc[vlen] = '\0';
    }
    a[*n] = (kv){kc, vc, vlen};
    (*n)++;
    return GP_OK;
}

void gp_kv_free(kv *a, int n) {
    if (!a) return;
    for (int i = 0; i < n; i++) {
        free(a[i].k);
        free(a[i].v);
    }
    free(a);
}

/* ---- responses ---- */
void gp_req_trim_after(gp_req *r) { r->trim = 1; }

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

int gp_http_is_admin_path(const char *path) {
    return strncmp(path, "/admin", 6) == 0 && (path[6] == '\0' || path[6] == '/');
}

/* CORS headers of an answer (never on /admin paths); returns 1 when the answer varies with
 * Origin (a list of origins is configured). */
static int add_cors(gp_req *r) {
    const char *origin = gp_req_header(r, "Origin");
    if (!origin || !gp_http_config() || gp_http_is_admin_path(r->path)) return 0;
    int m = gp_cors_match(gp_http_config()->cors_origins, origin);
    if (m == 1) gp_req_add_header(r, "Access-Control-Allow-Origin", "*");
    if (m == 2) gp_req_add_header(r, "Access-Control-Allow-Origin", origin);
    if (m) gp_req_add_header(r, "Access-Control-Expose-Headers", "X-Request-Id");
    return m != 1 && gp_http_config()->cors_origins[0];
}

static int compressible(const char *ctype) {
    return strncmp(ctype, "application/json", 16) == 0 || strncmp(ctype, "text/", 5) == 0 ||
           strncmp(ctype, "application/yaml", 16) == 0 ||
           strncmp(ctype, "application/javascript", 22) == 0;
}

/* ---- streamed bodies (optionally gzip-compressed on the fly) ---- */
typedef struct stream_ctx {
    gp_http_fill_fn fill;
    void (*done)(void *ctx);
    void *ctx;
    size_t *bytes; /* the request's byte count (valid while the daemon reads) */
    uint64_t size; /* the body's length when known (Content-Length), else MHD_SIZE_UNKNOWN */
    int gz, in_eof, finished;
    z_stream z;
    char *in;
} stream_ctx;

#define GZ_IN 65536

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    stream_ctx *s = cls;
    if (!s->gz) {
        long k = s->fill(s->ctx, buf, max);
        if (k < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (k == 0) return MHD_CONTENT_READER_END_OF_STREAM;
        *s->bytes += (size_t)k;
        return (ssize_t)k;
    }
    if (s->finished) return MHD_CONTENT_READER_END_OF_STREAM;
    if (max > (1u << 30)) max = 1u << 30;
    for (;;) {
        if (s->z.avail_in == 0 && !s->in_eof) {
            long k = s->fill(s->ctx, s->in, GZ_IN);
            if (k < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
            if (k == 0) s->in_eof = 1;
            s->z.next_in = (Bytef *)s->in;
            s->z.avail_in = (uInt)k;
        }
        s->z.next_out = (Bytef *)buf;
        s->z.avail_out = (uInt)max;
        int rc = deflate(&s->z, s->in_eof ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) return MHD_CONTENT_READER_END_WITH_ERROR;
        size_t produced = max - s->z.avail_out;
        if (rc == Z_STREAM_END) s->finished = 1;
        if (produced) {
            *s->bytes += produced;
            return (ssize_t)produced;
        }
        if (s->finished) return MHD_CONTENT_READER_END_OF_STREAM;
    }
}

static void stream_free(void *cls) {
    stream_ctx *s = cls;
    if (!s) return;
    if (s->done) s->done(s->ctx);
    if (s->gz) deflateEnd(&s->z);
    free(s->in);
    free(s);
}

/* Queues the answer: buf (malloc'd, ownership taken) or, when s != NULL, the stream. Adds the
 * request id, CORS and compression headers; in-process requests capture it in r->local. */
static void emit(gp_req *r, int status, const char *ctype, char *buf, size_t len, stream_ctx *s) {
    if (r->answered) {
        GP_LOG(GP_LOG_ERROR, "event=bug msg=\"second answer dropped\"");
        free(buf);
        if (s) stream_free(s);
        return;
    }
    r->answered = 1;
    r->status = status;
    gp_req_add_header(r, "X-Request-Id", r->request_id);
    int vary_origin = add_cors(r);
    long min = gp_http_config() ? gp_http_config()->gzip_min_bytes : 0;
    int vary_ae = min > 0 && compressible(ctype) && (s || len >= (size_t)min);
    if (vary_origin || vary_ae)
        gp_req_add_header(r, "Vary",
                          vary_origin && vary_ae ? "Origin, Accept-Encoding"
                          : vary_origin          ? "Origin"
                                                 : "Accept-Encoding");
    if (vary_ae) {
        if (r->gzip_ok && s) {
            s->in = malloc(GZ_IN);
            if (s->in &&
                deflateInit2(&s->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
                s->gz = 1;
                gp_req_add_header(r, "Content-Encoding", "gzip");
            }
        } else if (r->gzip_ok) {
            size_t zl = 0;
            char *z = gp_gzip(buf, len, &zl);
            if (z && zl < len) {
                free(buf);
                buf = z;
                len = zl;
                gp_req_add_header(r, "Content-Encoding", "gzip");
            } else {
                free(z);
            }
        }
    }
    if (s) s->bytes = &r->bytes;
    else r->bytes = len;
    if (r->local) {
        gp_http_answer *a = r->local;
        a->status = status;
        snprintf(a->content_type, sizeof a->content_type, "%s", ctype);
        for (int i = 0; i < r->nheaders && a->nheaders < 16; i++) {
            a->headers[a->nheaders][0] = strdup(r->headers[i][0]);
            a->headers[a->nheaders][1] = strdup(r->headers[i][1]);
            a->nheaders++;
        }
        if (s) { /* drain the stream, as the daemon would */
            size_t cap = 65536, n = 0;
            char *out = malloc(cap);
            for (;;) {
                if (!out) break;
                if (cap - n < 65536) {
                    char *o = cap >= STREAM_LOCAL_CAP ? NULL : realloc(out, cap * 2);
                    if (!o) {
                        free(out);
                        out = NULL;
                        break;
                    }
                    out = o;
                    cap *= 2;
                }
                ssize_t k = stream_read(s, n, out + n, cap - n);
                if (k == MHD_CONTENT_READER_END_OF_STREAM) break;
                if (k < 0) { /* aborted: the client would see a cut connection */
                    a->status = 0;
                    break;
                }
                n += (size_t)k;
            }
            stream_free(s);
            a->body = out;
            a->len = out ? n : 0;
            if (!out) a->status = 0;
        } else {
            a->body = buf;
            a->len = len;
        }
        return;
    }
    struct MHD_Response *resp;
    if (s)
        resp = MHD_create_response_from_callback(s->gz ? MHD_SIZE_UNKNOWN : s->size, 64 * 1024,
                                                 stream_read, s, stream_free);
    else
        resp = MHD_create_response_from_buffer(
            len, buf ? buf : (char *)"", buf ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        if (s) stream_free(s);
        else free(buf);
        r->status = 500;
        return;
    }
    if (status != 204) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    for (int i = 0; i < r->nheaders; i++)
        MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
    if (r->close || gp_http_stopping())
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (MHD_queue_response(r->conn, (unsigned)status, resp) != MHD_YES) r->status = 500;
    MHD_destroy_response(
        resp); /* a stream's ctx is freed via stream_free when the daemon is done */
}

/* Bytes of buffered answers the daemon holds until their clients read them (all connections). */
static size_t g_buffered;
/* Answers below this are never refused for the buffered total (errors, small answers). */
#define BUFFERED_MIN (64u << 10)

void gp_http_buffered_release(gp_req *r) {
    if (r->buffered) __atomic_sub_fetch(&g_buffered, r->buffered, __ATOMIC_RELAXED);
    r->buffered = 0;
}

int gp_http_held_take(gp_req *r, size_t bytes, size_t *held) {
    const gp_config *cfg = gp_http_config();
    *held = 0;
    if (bytes < BUFFERED_MIN || r->local || r->answered || !cfg ||
        cfg->max_buffered_answer_bytes <= 0)
        return 0;
    /* clients that never read pin whole answers (600 of them: 3.1 GB for 30 s): the total is
     * bounded, past it a large answer is refused with 503 until readers catch up */
    size_t total = __atomic_add_fetch(&g_buffered, bytes, __ATOMIC_RELAXED);
    if (total > (size_t)cfg->max_buffered_answer_bytes) {
        __atomic_sub_fetch(&g_buffered, bytes, __ATOMIC_RELAXED);
        gp_http_error(r, GP_HC_BUSY,
                      "answers waiting for their clients to read them hold "
                      "max_buffered_answer_bytes = %ld; this one (%zu bytes) would pass it, "
                      "retry",
                      cfg->max_buffered_answer_bytes, bytes);
        return -1;
    }
    *held = bytes;
    return 0;
}

void gp_http_held_drop(size_t held) {
    if (held) __atomic_sub_fetch(&g_buffered, held, __ATOMIC_RELAXED);
}

void gp_http_send_buf(gp_req *r, int status, const char *ctype, char *buf, size_t len) {
    if (buf) {
        size_t held;
        if (gp_http_held_take(r, len, &held)) {
            free(buf);
            return;
        }
        r->buffered = held;
    }
    emit(r, status, ctype, buf, len, NULL);
}

void gp_http_send(gp_req *r, int status, const char *content_type, char *buf, size_t len) {
    if (!buf) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    gp_http_send_buf(r, status, content_type, buf, len);
}

void gp_http_stream(gp_req *r, int status, const char *content_type, gp_http_fill_fn fill,
                    void (*done)(void *ctx), void *ctx) {
    gp_http_stream_sized(r, status, content_type, UINT64_MAX, fill, done, ctx);
}

void gp_http_stream_sized(gp_req *r, int status, const char *content_type, uint64_t size,
                          gp_http_fill_fn fill, void (*done)(void *ctx), void *ctx) {
    stream_ctx *s = calloc(1, sizeof *s);
    if (!s || r->answered) {
        free(s);
        if (done) done(ctx);
        if (!r->answered) gp_http_send_buf(r, 500, "text/plain", NULL, 0);
        return;
    }
    s->fill = fill;
    s->done = done;
    s->ctx = ctx;
    s->size = size == UINT64_MAX ? MHD_SIZE_UNKNOWN : size;
    s->bytes = &r->bytes;
    emit(r, status, content_type, NULL, 0, s);
}

void gp_http_text(gp_req *r, int status, const char *content_type, const char *buf, size_t len) {
    char *copy = malloc(len + 1);
    if (!copy) {
        gp_http_send_buf(r, 500, "text/plain", NULL, 0);
        return;
    }
    memcpy(copy, buf, len);
    gp_http_send_buf(r, status, content_type, copy, len);
}

void gp_http_json(gp_req *r, int status, cJSON *body) {
    size_t n = 0;
    char *s = body ? gp_json_print(body, &n) : NULL; /* cJSON_PrintUnformatted's text, faster */
    cJSON_Delete(body);
    if (!s) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    s[n++] = '\n'; /* gp_json_print leaves room: the NUL becomes a newline for curl users */
    gp_http_send_buf(r, status, "application/json", s, n);
}

void gp_http_json_out(gp_req *r, int status, gp_json_out *o) {
    if (o->bad || !o->p) {
        free(o->p);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    o->p[o->len++] = '\n'; /* a written text keeps room for two more bytes */
    gp_http_send_buf(r, status, "application/json", o->p, o->len);
}

/* THE error writer. The message may quote request bytes (paths, parameters, graph names): it is
 * repaired to valid UTF-8 first, so the body always parses as JSON. */
void gp_http_error(gp_req *r, int code, const char *fmt, ...) {
    char raw[1024], msg[1024 * 3 + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gp_utf8_repair(raw, msg, sizeof msg);
    if (code < 0 || code >= GP_HC_COUNT) code = GP_HC_INTERNAL;
    r->err_code = code;
    if (gp_http_code_status(code) == 503)
        gp_req_add_header(r, "Retry-After", "1");                 /* NotReady, Busy */
    cJSON *o = gp_render_error_doc(gp_http_code_name(code), msg); /* the CLI prints the same */
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s) {
        gp_http_send_buf(r, gp_http_code_status(code), "application/json", NULL, 0);
        return;
    }
    size_t n = strlen(s);
    s[n] = '\n';
    gp_http_send_buf(r, gp_http_code_status(code), "application/json", s, n + 1);
    if (gp_log_level >= GP_LOG_DEBUG) {
        char esc[1024];
        gp_log_escape(msg, strlen(msg), esc, sizeof esc);
        GP_LOG(GP_LOG_DEBUG, "event=error code=%s message=%s", gp_http_code_name(code), esc);
    }
}

void gp_http_error_err(gp_req *r, int fallback_code, const gp_err *err) {
    int c = gp_http_code_of(err->code);
    if (fallback_code >= 0 && (err->code == GP_EINVAL || err->code == GP_EPARSE)) c = fallback_code;
    gp_http_error(r, c, "%s", err->msg[0] ? err->msg : gp_status_name(err->code));
}
