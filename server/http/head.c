/* head.c - the request-head check of the accepting front end (see head.h): one pass
 * over the lines seen so far, mirroring how libmicrohttpd 0.9.75 splits them (LF or CRLF ends a
 * line, empty lines before the request line are skipped, the version is the last word of the
 * request line, a header is NAME ':' OWS VALUE) so that whatever passes here is parsed by the
 * library without one of its own error answers. The 414/431 messages are the handler's
 * (server/http/daemon.c), so a client sees the same text whichever layer refused it.
 */
#include "server/http/head.h"

#include "server/errors.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

size_t gp_head_max_bytes(const gp_head_limits *lim) {
    return (size_t)lim->max_url_bytes + GP_HEAD_LINE_SLACK + (size_t)lim->max_header_bytes +
           GP_HEAD_HEADER_SLACK;
}

size_t gp_head_record_budget(const gp_head_limits *lim) {
    (void)lim;
    return 256 * GP_HEAD_RECORD_BYTES;
}

size_t gp_head_pool_bytes(const gp_head_limits *lim) {
    /* The library reads into half of the pool (and may fill that half with body bytes); the
     * records, the Cookie copy and, later, the answer's header block (16 KiB kept for it) come
     * from the other half. The pool is zeroed for every request, so it is no larger than that. */
    size_t head = gp_head_max_bytes(lim), rest = gp_head_record_budget(lim) + 16384;
    return 2 * (head > rest ? head : rest);
}

static int bad(gp_head_verdict *v, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int bad(gp_head_verdict *v, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    v->code = code;
    return GP_HEAD_BAD;
}

/* Copies at most size-1 bytes of s[0..len) for a message: printable ASCII kept, others '?'. */
static const char *quote(const char *s, size_t len, char *out, size_t size) {
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < size; i++)
        out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    out[k] = '\0';
    return out;
}

/* A problem with the bytes of one line: NUL, or a CR that does not end it. */
static int line_bytes_bad(const char *s, size_t len, gp_head_verdict *v) {
    if (memchr(s, '\0', len))
        return bad(v, GP_HC_INVALID_QUERY, "the request head holds a NUL byte");
    if (memchr(s, '\r', len))
        return bad(v, GP_HC_INVALID_QUERY, "the request head holds a CR not followed by LF");
    return 0;
}

static int ieq(const char *s, size_t len, const char *name) {
    return strlen(name) == len && strncasecmp(s, name, len) == 0;
}

/* Request line: METHOD SP TARGET SP HTTP/1.x (libmicrohttpd skips repeated spaces and takes the
 * last word as the version). *nargs = the query arguments it would record. */
static int request_line(const char *s, size_t len, const gp_head_limits *lim, size_t *nargs,
                        int *http10, gp_head_verdict *v) {
    char q[64];
    if (line_bytes_bad(s, len, v)) return GP_HEAD_BAD;
    const char *sp = memchr(s, ' ', len), *end = s + len;
    if (!sp || sp == s)
        return bad(v, GP_HC_INVALID_QUERY,
                   "malformed request line '%s' (expected 'METHOD "
                   "TARGET HTTP/1.1')",
                   quote(s, len, q, sizeof q));
    quote(s, (size_t)(sp - s), v->method, sizeof v->method);
    const char *ts = sp;
    while (ts < end && *ts == ' ') ts++;
    const char *ve = end;
    while (ve > ts && ve[-1] == ' ') ve--;
    const char *vs = ve;
    while (vs > ts && vs[-1] != ' ') vs--;
    if (vs <= ts)
        return bad(v, GP_HC_INVALID_QUERY,
                   "malformed request line '%s' (expected 'METHOD "
                   "TARGET HTTP/1.1')",
                   quote(s, len, q, sizeof q));
    const char *te = vs;
    while (te > ts && te[-1] == ' ') te--;
    size_t tlen = (size_t)(te - ts);
    const char *qm = memchr(ts, '?', tlen);
    /* for the log: the path only (the query may carry secrets; the access log redacts those) */
    quote(ts, qm ? (size_t)(qm - ts) : tlen, v->target, sizeof v->target);
    size_t vlen = (size_t)(ve - vs);
    if (vlen != 8 || memcmp(vs, "HTTP/", 5) != 0 || vs[5] < '0' || vs[5] > '9' || vs[6] != '.' ||
        vs[7] < '0' || vs[7] > '9')
        return bad(v, GP_HC_INVALID_QUERY, "malformed HTTP version '%s' (expected HTTP/1.1)",
                   quote(vs, vlen, q, sizeof q));
    if (vs[5] != '1')
        return bad(v, GP_HC_INVALID_QUERY,
                   "HTTP version '%s' is not supported (HTTP/1.0 and "
                   "HTTP/1.1 are)",
                   quote(vs, vlen, q, sizeof q));
    *http10 = vs[7] == '0';
    if (tlen > (size_t)lim->max_url_bytes)
        return bad(v, GP_HC_URI_TOO_LONG,
                   "request target of %zu bytes exceeds max_url_bytes = "
                   "%ld",
                   tlen, lim->max_url_bytes);
    *nargs = 0;
    if (qm) {
        *nargs = 1;
        for (const char *c = qm + 1; c < te; c++) *nargs += *c == '&';
    }
    return GP_HEAD_OK;
}

/* Whether a header value holds token as one of its comma-separated elements, compared as
 * libmicrohttpd's MHD_str_has_token_caseless_ does (spaces and tabs around an element skipped,
 * ASCII case ignored). */
static int has_token(const char *s, size_t len, const char *token) {
    size_t tl = strlen(token), i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) i++;
        size_t b = i;
        while (i < len && s[i] != ',') i++;
        size_t e = i;
        while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) e--;
        if (e - b == tl && strncasecmp(s + b, token, tl) == 0) return 1;
    }
    return 0;
}

/* A Content-Length value as libmicrohttpd reads it: digits only (its leading OWS is already
 * skipped; trailing spaces are an error there too). */
static int content_length(const char *s, size_t len, int *have, unsigned long long *cl,
                          gp_head_verdict *v) {
    char q[48];
    unsigned long long x = 0;
    int overflow = 0;
    if (len == 0)
        return bad(v, GP_HC_INVALID_QUERY,
                   "Content-Length is empty (expected a decimal byte "
                   "count)");
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return bad(v, GP_HC_INVALID_QUERY, "Content-Length '%s' is not a decimal byte count",
                       quote(s, len, q, sizeof q));
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10) overflow = 1;
        else x = x * 10 + d;
    }
    if (overflow)
        return bad(v, GP_HC_TOO_BIG,
                   "Content-Length '%s' is past any body this server reads "
                   "(max_body_bytes)",
                   quote(s, len, q, sizeof q));
    if (*have && x != *cl)
        return bad(v, GP_HC_INVALID_QUERY, "conflicting Content-Length headers (%llu and %llu)",
                   *cl, x);
    *have = 1;
    *cl = x;
    return 0;
}

int gp_head_framing_add(gp_head_framing *f, const char *name, size_t nl, const char *val, size_t vl,
                        gp_head_verdict *v) {
    char q[48];
    if (ieq(name, nl, "Content-Length"))
        return content_length(val, vl, &f->have_cl, &f->cl, v) ? GP_HEAD_BAD : GP_HEAD_OK;
    if (ieq(name, nl, "Transfer-Encoding")) {
        if (f->have_te || !ieq(val, vl, "chunked"))
            return bad(v, GP_HC_INVALID_QUERY,
                       "Transfer-Encoding '%s' is not supported "
                       "(one 'chunked' is)",
                       quote(val, vl, q, sizeof q));
        f->have_te = 1;
    }
    return GP_HEAD_OK;
}

int gp_head_framing_end(const gp_head_framing *f, gp_head_verdict *v) {
    if (f->have_cl && f->have_te)
        return bad(v, GP_HC_INVALID_QUERY,
                   "a request with both Content-Length and "
                   "Transfer-Encoding is refused (ambiguous body length)");
    return GP_HEAD_OK;
}

/* The line at *pos: *s and *len (its CR before LF dropped). Returns 1 and moves *pos past the
 * LF when the line is complete, 0 (the bytes so far in *len) when no LF came yet. */
static int next_line(const char *buf, size_t n, size_t *pos, const char **s, size_t *len) {
    *s = buf + *pos;
    const char *lf = memchr(*s, '\n', n - *pos);
    *len = lf ? (size_t)(lf - *s) : n - *pos;
    if (!lf) return 0;
    *pos += *len + 1;
    if (*len && (*s)[*len - 1] == '\r') (*len)--;
    return 1;
}

/* A line without its LF yet: wait for more, unless it already holds a NUL or nothing more can
 * come. */
static int incomplete(const char *s, size_t len, int eof, const char *what, gp_head_verdict *v) {
    if (memchr(s, '\0', len))
        return bad(v, GP_HC_INVALID_QUERY, "the request head holds a NUL byte");
    if (eof)
        return bad(v, GP_HC_INVALID_QUERY,
                   "the connection closed before the request %s was "
                   "complete",
                   what);
    return GP_HEAD_MORE;
}

int gp_head_check(const char *buf, size_t n, int eof, const gp_head_limits *lim,
                  gp_head_verdict *v) {
    memset(v, 0, sizeof *v);
    const size_t max = gp_head_max_bytes(lim);
    const size_t line_max = (size_t)lim->max_url_bytes + GP_HEAD_LINE_SLACK;
    size_t pos = 0, nargs = 0;
    int http10 = 0;
    /* the request line, after any empty lines */
    for (;;) {
        const char *s;
        size_t len;
        int complete = next_line(buf, n, &pos, &s, &len);
        if (len > line_max || (size_t)(s - buf) + len > max)
            return bad(v, GP_HC_URI_TOO_LONG,
                       "request line of more than %zu bytes: the request "
                       "target exceeds max_url_bytes = %ld",
                       len, lim->max_url_bytes);
        if (!complete) return incomplete(s, len, eof, "line", v);
        if (len == 0) continue;
        if (request_line(s, len, lim, &nargs, &http10, v) != GP_HEAD_OK) return GP_HEAD_BAD;
        break;
    }
    /* header lines up to the empty one */
    size_t hbytes = 0, nh = 0, ncookies = 0, cookie_bytes = 0;
    int close_tok = 0, keepalive_tok = 0;
    gp_head_framing fr = {0, 0, 0};
    char q[48];
    for (;;) {
        const char *s;
        size_t len;
        int complete = next_line(buf, n, &pos, &s, &len);
        if ((size_t)(s - buf) + len > max)
            return bad(v, GP_HC_HEADERS_TOO_LARGE,
                       "request head of more than %zu bytes: the "
                       "headers exceed max_header_bytes = %ld",
                       max, lim->max_header_bytes);
        if (!complete) return incomplete(s, len, eof, "headers", v);
        if (len == 0) break;
        if (line_bytes_bad(s, len, v)) return GP_HEAD_BAD;
        if (s[0] == ' ' || s[0] == '\t')
            return bad(v, GP_HC_INVALID_QUERY,
                       "header line '%s' continues the previous one "
                       "(obsolete line folding is refused)",
                       quote(s, len, q, sizeof q));
        const char *colon = memchr(s, ':', len);
        if (!colon)
            return bad(v, GP_HC_INVALID_QUERY, "malformed header line '%s' (no colon)",
                       quote(s, len, q, sizeof q));
        size_t nl = (size_t)(colon - s);
        if (nl == 0 || memchr(s, ' ', nl) || memchr(s, '\t', nl))
            return bad(v, GP_HC_INVALID_QUERY, "malformed header name in '%s'",
                       quote(s, len, q, sizeof q));
        const char *val = colon + 1, *end = s + len;
        while (val < end && (*val == ' ' || *val == '\t')) val++;
        size_t vl = (size_t)(end - val);
        nh++;
        hbytes += nl + vl + 4;
        if (gp_head_framing_add(&fr, s, nl, val, vl, v) != GP_HEAD_OK) return GP_HEAD_BAD;
        if (ieq(s, nl, "Connection")) {
            close_tok |= has_token(val, vl, "close");
            keepalive_tok |= has_token(val, vl, "Keep-Alive");
        } else if (ieq(s, nl, "Cookie")) {
            ncookies++;
            cookie_bytes += vl + 1;
            for (size_t i = 0; i < vl; i++) ncookies += val[i] == ';' || val[i] == ',';
        }
    }
    if (gp_head_framing_end(&fr, v) != GP_HEAD_OK) return GP_HEAD_BAD;
    if (hbytes > (size_t)lim->max_header_bytes)
        return bad(v, GP_HC_HEADERS_TOO_LARGE,
                   "request headers of %zu bytes exceed "
                   "max_header_bytes = %ld",
                   hbytes, lim->max_header_bytes);
    size_t records = GP_HEAD_RECORD_BYTES * (nh + nargs + ncookies) + cookie_bytes;
    if (records > gp_head_record_budget(lim))
        return bad(v, GP_HC_HEADERS_TOO_LARGE,
                   "request head with %zu headers, %zu query "
                   "parameters and %zu cookies: more fields than the connection buffer holds",
                   nh, nargs, ncookies);
    v->head_len = pos;
    v->records = records;
    v->closes = close_tok || (http10 && !keepalive_tok);
    return GP_HEAD_OK;
}

int gp_head_fits_pool(const gp_head_verdict *v, size_t pool) {
    return 2 * v->head_len + v->records + GP_HEAD_ANSWER_BYTES <= pool / 2;
}
