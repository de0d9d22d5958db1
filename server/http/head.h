/* head.h - the request-head check of the accepting front end (server/http/front.c): a pure
 * function over the bytes a new connection has sent so far that says "wait for more", "hand the
 * connection to libmicrohttpd" or "answer this error ourselves". It refuses exactly what
 * libmicrohttpd 0.9.75 would otherwise answer with its own HTML (or, for a bad Content-Length,
 * with its status line written twice): request lines and heads past its connection buffer,
 * header and argument counts past that buffer, malformed header lines, malformed, overflowing or
 * conflicting Content-Length, and a few request-smuggling shapes it would accept silently
 * (Content-Length beside Transfer-Encoding, obsolete line folding, bare CR, NUL bytes). No
 * sockets and no libmicrohttpd here: tests/test_http_head.c and the fuzzer call it directly.
 */
#ifndef GP_HTTP_HEAD_H
#define GP_HTTP_HEAD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a request line beyond max_url_bytes (method, spaces, version). */
#define GP_HEAD_LINE_SLACK 1024
/* Bytes of a head beyond the request line and max_header_bytes (separators, spacing). */
#define GP_HEAD_HEADER_SLACK 1024
/* What one header, query argument or cookie costs in libmicrohttpd's connection buffer (its
 * 56-byte record, aligned), counted against gp_head_record_budget. */
#define GP_HEAD_RECORD_BYTES 64

typedef struct gp_head_limits {
    long max_url_bytes;    /* request target (as the handler's 414) */
    long max_header_bytes; /* header block, counted as the handler does (431) */
} gp_head_limits;

/* The most bytes the check ever needs to see: a head not complete within them is refused. */
size_t gp_head_max_bytes(const gp_head_limits *lim);

/* Bytes of libmicrohttpd records (GP_HEAD_RECORD_BYTES per header, query argument and cookie,
 * plus a copy of the Cookie value) a head may need: 16 KiB, 256 fields (Apache's default
 * LimitRequestFields is 100). */
size_t gp_head_record_budget(const gp_head_limits *lim);

/* The libmicrohttpd connection memory (MHD_OPTION_CONNECTION_MEMORY_LIMIT) that holds any head
 * gp_head_check lets through: it reads into half of it and takes the records from the other. */
size_t gp_head_pool_bytes(const gp_head_limits *lim);

/* The connection memory of the daemon that serves connections closing after their first request
 * (gp_head_verdict.closes): the most libmicrohttpd 0.9.75 takes from malloc. A larger pool is
 * mmap'd, faulted in and unmapped for every connection (a TLB shootdown on every CPU the process
 * runs on), which is what one request per connection paid for most. */
#define GP_HEAD_SMALL_POOL 32768
/* Bytes of an answer's header block beside what it echoes from the request (Origin): the
 * library's status line, Date, Content-Length and Connection, and the handler's own fields. */
#define GP_HEAD_ANSWER_BYTES 2048

enum { GP_HEAD_MORE = 0, GP_HEAD_OK = 1, GP_HEAD_BAD = 2 };

typedef struct gp_head_verdict {
    int code;         /* GP_HEAD_BAD: the error code (enum gp_http_code of server/http/http.h) */
    char msg[300];    /* GP_HEAD_BAD: the message for the JSON body */
    size_t head_len;  /* GP_HEAD_OK: bytes up to and including the empty line */
    size_t records;   /* GP_HEAD_OK: record bytes the library needs for it (see above) */
    int closes;       /* GP_HEAD_OK: the library closes the connection after this request (a
                       * Connection header with the token "close", or HTTP/1.0 without
                       * "Keep-Alive"), so it never parses another head there */
    char method[32];  /* the method, when the request line was complete (for the log) */
    char target[128]; /* the start of the target's path (no query), likewise */
} gp_head_verdict;

/* Checks buf[0..n), everything the connection has sent so far; eof: the client closed its side
 * (nothing more will come). Returns GP_HEAD_MORE, GP_HEAD_OK or GP_HEAD_BAD (v filled). */
int gp_head_check(const char *buf, size_t n, int eof, const gp_head_limits *lim,
                  gp_head_verdict *v);

/* The framing headers of one request (Content-Length, Transfer-Encoding), fed one header at a
 * time: by gp_head_check on a connection's first head, and by the daemon on every later request
 * of a keep-alive connection (from libmicrohttpd's parsed header list, duplicates included), so a
 * request hidden behind ambiguous framing is never served. Start from {0}. */
typedef struct gp_head_framing {
    int have_cl, have_te;
    unsigned long long cl;
} gp_head_framing;

/* One header (name[0..nl), value[0..vl) without surrounding blanks); other names pass. Returns
 * GP_HEAD_OK, or GP_HEAD_BAD with v's code and msg set: a malformed or overflowing Content-Length,
 * one that conflicts with an earlier one, a Transfer-Encoding other than one "chunked". */
int gp_head_framing_add(gp_head_framing *f, const char *name, size_t nl, const char *value,
                        size_t vl, gp_head_verdict *v);
/* After the last header: GP_HEAD_BAD when both Content-Length and Transfer-Encoding came. */
int gp_head_framing_end(const gp_head_framing *f, gp_head_verdict *v);

/* 1 when a connection pool of pool bytes holds the head checked into v (GP_HEAD_OK) and its
 * answer: the head, its records and an answer header block that echoes it all within one half
 * of the pool (the library reads into the other). */
int gp_head_fits_pool(const gp_head_verdict *v, size_t pool);

#ifdef __cplusplus
}
#endif
#endif
