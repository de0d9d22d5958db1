/* gp.c - status codes, error records and logging shared by every module. */
#include "graph/gp.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int gp_log_level = GP_LOG_INFO;

int gp_err_set(gp_err *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void gp_err_clear(gp_err *err) {
    if (err) {
        err->code = GP_OK;
        err->msg[0] = '\0';
    }
}

const char *gp_status_name(int code) {
    switch (code) {
    case GP_OK: return "Ok";
    case GP_EINVAL: return "InvalidQuery";
    case GP_ENOMEM: return "OutOfMemory";
    case GP_EIO: return "IOError";
    case GP_EPARSE: return "InvalidInput";
    case GP_ENOTFOUND: return "NotFound";
    case GP_ETOOBIG: return "TooBig";
    case GP_EDEVICE: return "DeviceError";
    case GP_EBUSY: return "Busy";
    case GP_EUNSUPPORTED: return "Unsupported";
    case GP_ENOROUTE: return "NoRoute";
    case GP_EDB: return "DatabaseError";
    case GP_ETIMEOUT: return "Timeout";
    case GP_EFORBIDDEN: return "Forbidden";
    case GP_EUNAVAILABLE: return "SourceUnavailable";
    case GP_ECANCELLED: return "Cancelled";
    default: return "InternalError";
    }
}

double gp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

size_t gp_utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t k;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) k = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) k = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) k = 4, cp = c & 0x07;
    else return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k;
}

int64_t gp_utf8_invalid(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = gp_utf8_seq(p + i, n - i);
        if (k == 0) return (int64_t)i;
        i += k;
    }
    return -1;
}

/* The calling thread's deadline and the time it was set (so the message can name the limit). */
static _Thread_local double tl_deadline, tl_deadline_set_at;

void gp_deadline_set(double abs_deadline) {
    tl_deadline = abs_deadline > 0 ? abs_deadline : 0;
    tl_deadline_set_at = tl_deadline > 0 ? gp_now() : 0;
}

double gp_deadline_get(void) { return tl_deadline; }

/* Set once by gp_deadline_cut_all (shutdown); read with relaxed loads at every check. */
static int g_deadlines_cut;

void gp_deadline_cut_all(void) { __atomic_store_n(&g_deadlines_cut, 1, __ATOMIC_RELAXED); }

int gp_deadline_passed(double deadline) {
    if (__atomic_load_n(&g_deadlines_cut, __ATOMIC_RELAXED)) return 1;
    return deadline > 0 && gp_now() >= deadline;
}

int gp_deadline_expired(void) { return gp_deadline_passed(tl_deadline); }

int gp_deadline_error(gp_err *err) {
    if (__atomic_load_n(&g_deadlines_cut, __ATOMIC_RELAXED))
        return gp_err_set(err, GP_ETIMEOUT,
                          "query cancelled: the server is shutting down (config shutdown_grace_s)");
    double ms = (tl_deadline - tl_deadline_set_at) * 1e3;
    if (tl_deadline > 0 && ms >= 0.5)
        return gp_err_set(err, GP_ETIMEOUT,
                          "query exceeded the time limit of %.0f ms (config request_timeout_ms)",
                          ms);
    return gp_err_set(err, GP_ETIMEOUT,
                      "query exceeded its time limit (config request_timeout_ms)");
}

static _Thread_local char tl_request_id[65];

void gp_log_set_request_id(const char *id) {
    size_t n = id ? strlen(id) : 0;
    if (n >= sizeof tl_request_id) n = sizeof tl_request_id - 1;
    if (n) memcpy(tl_request_id, id, n);
    tl_request_id[n] = '\0';
}

void gp_thread_ctx_save(gp_thread_ctx *c) {
    c->deadline = tl_deadline;
    c->deadline_set_at = tl_deadline_set_at;
    memcpy(c->request_id, tl_request_id, sizeof c->request_id);
}

void gp_thread_ctx_restore(const gp_thread_ctx *c) {
    tl_deadline = c->deadline;
    tl_deadline_set_at = c->deadline_set_at;
    memcpy(tl_request_id, c->request_id, sizeof tl_request_id);
}

void gp_log_write(int level, const char *fmt, ...) {
    static const char *names[] = {"error", "warn", "info", "debug"};
    char ts[32];
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s.%03ldZ level=%s %s%s%s\n", ts, now.tv_nsec / 1000000L,
            names[level < 0   ? 0
                  : level > 3 ? 3
                              : level],
            line, tl_request_id[0] ? " request_id=" : "", tl_request_id);
}

int gp_log_level_parse(const char *s) {
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (s && strcasecmp(s, names[i]) == 0) return i;
    return -1;
}
