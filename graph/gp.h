/* gp.h - gpath's common definitions: status codes, the error record, "unreachable" and
 * "no predecessor", and the one level-gated log macro.
 *
 * Every fallible function returns an int status (GP_OK or a GP_E* code) and fills a caller-owned
 * gp_err with a message a person can act on (file and line for loaders, the parameter for requests).
 *
 * Every function whose name ends in _free, _unref, _close, _stop or _destroy accepts NULL and then
 * does nothing; one that releases what a caller-owned struct holds (gp_path_free, gp_args_free, ...)
 * leaves it zeroed, so a second call is harmless too.
 */
#ifndef GP_H
#define GP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A path length no node reaches. Distances are uint64 path lengths in stored (scaled) weight units. */
#define GP_INF UINT64_MAX
/* Predecessor / next hop of a node that has none (the source itself, or unreachable). */
#define GP_NONE UINT32_MAX

enum gp_status {
    GP_OK = 0,
    GP_EINVAL,       /* bad argument or request: 400 */
    GP_ENOMEM,       /* allocation failed: 500 */
    GP_EIO,          /* file or socket I/O: 500 (loaders: 400 when the file is missing) */
    GP_EPARSE,       /* malformed input data: 400 / loader error */
    GP_ENOTFOUND,    /* unknown graph or node: 404 / 400 */
    GP_ETOOBIG,      /* over a configured limit: 413 */
    GP_EDEVICE,      /* CUDA error: 500, maybe sticky */
    GP_EBUSY,        /* all workers busy past the bounded wait: 503 */
    GP_EUNSUPPORTED, /* the backend or build cannot do this */
    GP_ENOROUTE,     /* target unreachable from source */
    GP_EDB,          /* database error */
    GP_ETIMEOUT,     /* over the configured time limit */
    GP_EFORBIDDEN,   /* outside an allow-list (load_paths, load_pg_hosts): 403 */
    GP_EUNAVAILABLE, /* a source that is down or does not answer (database unreachable): 503 */
    GP_ECANCELLED    /* the owner cancelled the work (a job's DELETE, shutdown): no answer */
};

typedef struct gp_err {
    int code;
    char msg[512];
} gp_err;

/* Fills err (may be NULL) with code and a printf-style message; returns code. */
int gp_err_set(gp_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void gp_err_clear(gp_err *err);
/* Stable upper-camel name of a status code, e.g. "InvalidQuery", for JSON error bodies. */
const char *gp_status_name(int code);

/* Logging: one line per call on stderr, "ts level msg". Level from config / env. */
enum { GP_LOG_ERROR = 0, GP_LOG_WARN = 1, GP_LOG_INFO = 2, GP_LOG_DEBUG = 3 };
extern int gp_log_level;
void gp_log_write(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#define GP_LOG(level, ...)                                                                         \
    do {                                                                                           \
        if ((level) <= gp_log_level) gp_log_write((level), __VA_ARGS__);                           \
    } while (0)
int gp_log_level_parse(const char *s); /* "error|warn|info|debug" -> level, -1 if unknown */
/* The calling thread's request id (the HTTP layer sets it around each request; NULL or "" clears
 * it): while set, every log line of this thread ends with " request_id=ID". */
void gp_log_set_request_id(const char *id);

/* Monotonic clock in seconds. */
double gp_now(void);

/* Online CPUs (at least 1): the one CPU count every module uses (graph/graph.c). */
int gp_cpu_count(void);

/* Runs fn(ctx, begin, end) over [0, n) split into nthreads contiguous chunks (one call each) on
 * up to nthreads threads, the caller's among them (0 = online CPUs, capped at 16;
 * graph/parallel.c): whichever thread runs takes the next chunk, and the call returns once every
 * chunk is done, whether or not a thread it started has run yet. Falls back to one call on the
 * caller's thread for small n (under 65536 items a thread), and to the caller's thread alone when
 * threads cannot be started. */
void gp_parallel_for(uint64_t n, int nthreads, void (*fn)(void *ctx, uint64_t begin, uint64_t end),
                     void *ctx);

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 when s[0] starts none (overlong
 * forms, surrogates and code points past U+10FFFF are invalid). */
size_t gp_utf8_seq(const unsigned char *s, size_t n);
/* Offset of the first byte of s[0..n) that starts no valid UTF-8 sequence, -1 when all is valid
 * (NUL bytes count as valid). */
int64_t gp_utf8_invalid(const char *s, size_t n);

/* Per-thread query deadline (config request_timeout_ms): an absolute gp_now() time, 0 = none.
 * The HTTP dispatcher sets it around each query handler; backends read it at the entry of an
 * operation (gp_deadline_get), hand the value to their own worker threads explicitly (it is
 * thread-local), check it at cheap points and give up with GP_ETIMEOUT. */
void gp_deadline_set(double abs_deadline);
double gp_deadline_get(void);
/* 1 when this thread's deadline is set and has passed, or when every deadline was cut
 * (gp_deadline_cut_all). */
int gp_deadline_expired(void);
/* 1 when `deadline` (a value read with gp_deadline_get, 0 = none) has passed, or when every
 * deadline was cut: the test worker threads make on the value their job carries. */
int gp_deadline_passed(double deadline);
/* Process-wide: from now on every deadline counts as passed, those already handed to worker
 * threads included, so in-flight queries give up at their next check (shutdown_grace_s over).
 * Never undone; async-signal-safe (one atomic store). */
void gp_deadline_cut_all(void);
/* Fills err with GP_ETIMEOUT and "query exceeded the time limit of N ms ..." (N from the limit
 * this thread's deadline was set with; "the server is shutting down" once cut); returns
 * GP_ETIMEOUT. */
int gp_deadline_error(gp_err *err);

/* A thread's request context (its deadline, the time that was set, its log request id), to run a
 * request's work on another thread as if on the request's (graph/parallel.h gp_runner_run). */
typedef struct gp_thread_ctx {
    double deadline, deadline_set_at;
    char request_id[65];
} gp_thread_ctx;
void gp_thread_ctx_save(gp_thread_ctx *c);
void gp_thread_ctx_restore(const gp_thread_ctx *c);

#ifdef __cplusplus
}
#endif
#endif
