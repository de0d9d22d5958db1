/* test_http_head.c - the front end's request-head check (server/http/head.c): complete and
 * partial heads, each refusal with its HTTP code and the words of its message, heads split at
 * every byte (never a verdict before the bytes that decide it), the limits at their edges, and
 * the connection-buffer size derived from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/http/http.h"
#include "server/http/head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gp_head_limits LIM = {8192, 16384};

static int check(const char *s, size_t n, int eof, gp_head_verdict *v) {
    return gp_head_check(s, n, eof, &LIM, v);
}

/* The head s (NUL-terminated) refused with code, its message holding word. */
static void refused(const char *s, int code, const char *word) {
    gp_head_verdict v;
    int r = check(s, strlen(s), 0, &v);
    if (r != GP_HEAD_BAD || v.code != code || !strstr(v.msg, word))
        fail_msg("head '%.60s': verdict %d code %d msg '%s' (wanted code %d with '%s')", s, r,
                 v.code, v.msg, code, word);
}

static void test_good_heads(void **state) {
    (void)state;
    gp_head_verdict v;
    const char *h = "GET /v1/graphs/t/route?from=1&to=5 HTTP/1.1\r\nHost: x\r\n"
                    "Content-Length: 0\r\nCookie: a=1; b=2\r\n\r\nBODY";
    assert_int_equal(check(h, strlen(h), 0, &v), GP_HEAD_OK);
    assert_int_equal(v.head_len, strlen(h) - 4);
    assert_string_equal(v.method, "GET");
    assert_string_equal(v.target, "/v1/graphs/t/route"); /* no query in the log field */
    /* what libmicrohttpd accepts: empty lines first, bare LF, no space after the colon, empty
     * values, repeated spaces in the request line, an odd method, HTTP/1.0, identical lengths */
    const char *ok[] = {
        "\r\n\nGET / HTTP/1.1\nHost:x\nX-Empty:\n\n",
        "GET   /a   HTTP/1.0\r\n\r\n",
        "FOO\"BAR%x /health HTTP/1.1\r\n\r\n",
        "POST /t HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 02\r\n\r\n{}",
        "POST /t HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n",
        "GET /health HTTP/1.9\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (check(ok[i], strlen(ok[i]), 0, &v) != GP_HEAD_OK)
            fail_msg("refused '%s': %s", ok[i], v.msg);
}

static void test_refusals(void **state) {
    (void)state;
    refused("GARBAGE\r\n\r\n", GP_HC_INVALID_QUERY, "request line");
    refused("GET /health\r\n\r\n", GP_HC_INVALID_QUERY, "request line");
    refused(" /health HTTP/1.1\r\n\r\n", GP_HC_INVALID_QUERY, "request line");
    refused("GET /health HTTP/2.0\r\n\r\n", GP_HC_INVALID_QUERY, "HTTP/2.0");
    refused("GET /health HTTP/0.9\r\n\r\n", GP_HC_INVALID_QUERY, "not supported");
    refused("GET /health HTTP/1.1x\r\n\r\n", GP_HC_INVALID_QUERY, "HTTP version");
    refused("GET /health http/1.1\r\n\r\n", GP_HC_INVALID_QUERY, "HTTP version");
    refused("GET /health HTTP/1.1\r\nbad line\r\n\r\n", GP_HC_INVALID_QUERY, "no colon");
    refused("GET /health HTTP/1.1\r\n: v\r\n\r\n", GP_HC_INVALID_QUERY, "header name");
    refused("GET /health HTTP/1.1\r\nHost : x\r\n\r\n", GP_HC_INVALID_QUERY, "header name");
    refused("GET /health HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", GP_HC_INVALID_QUERY, "folding");
    refused("GET /health HTTP/1.1\r\nX: a\rb\r\n\r\n", GP_HC_INVALID_QUERY, "CR");
    refused("GET /he\rlth HTTP/1.1\r\n\r\n", GP_HC_INVALID_QUERY, "CR");
    refused("POST /t HTTP/1.1\r\nContent-Length: -1\r\n\r\n", GP_HC_INVALID_QUERY, "'-1'");
    refused("POST /t HTTP/1.1\r\nContent-Length: 12abc\r\n\r\n", GP_HC_INVALID_QUERY, "decimal");
    refused("POST /t HTTP/1.1\r\nContent-Length: 2 \r\n\r\n", GP_HC_INVALID_QUERY, "decimal");
    refused("POST /t HTTP/1.1\r\nContent-Length: +2\r\n\r\n", GP_HC_INVALID_QUERY, "decimal");
    refused("POST /t HTTP/1.1\r\nContent-Length:\r\n\r\n", GP_HC_INVALID_QUERY, "empty");
    refused("POST /t HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", GP_HC_TOO_BIG,
            "max_body_bytes");
    refused("POST /t HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
            GP_HC_INVALID_QUERY, "conflicting");
    refused("POST /t HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
            GP_HC_INVALID_QUERY, "both");
    refused("POST /t HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", GP_HC_INVALID_QUERY,
            "Transfer-Encoding");
    refused("POST /t HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            GP_HC_INVALID_QUERY, "Transfer-Encoding");
    /* 18446744073709551615 = 2^64 - 1 is a number the library parses; the handler's 413 then */
    gp_head_verdict v;
    const char *max = "POST /t HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n";
    assert_int_equal(check(max, strlen(max), 0, &v), GP_HEAD_OK);
    /* NUL anywhere in the head, even before its line is complete */
    const char nul[] = "GET /a\0b HTTP/1.1\r\n\r\n";
    assert_int_equal(check(nul, sizeof nul - 1, 0, &v), GP_HEAD_BAD);
    assert_non_null(strstr(v.msg, "NUL"));
    assert_int_equal(check(nul, 8, 0, &v), GP_HEAD_BAD);
    const char nulh[] = "GET / HTTP/1.1\r\nX: a\0";
    assert_int_equal(check(nulh, sizeof nulh - 1, 0, &v), GP_HEAD_BAD);
}

/* Every prefix of a good head is "more" (and a refusal once the client has closed); every
 * prefix of a bad one is "more" until the deciding byte. */
static void test_prefixes(void **state) {
    (void)state;
    gp_head_verdict v;
    const char *h = "GET /v1/graphs/t/route?from=1&to=5 HTTP/1.1\r\nHost: x\r\nA: b\r\n\r\n";
    size_t n = strlen(h);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(check(h, i, 0, &v), GP_HEAD_MORE);
        assert_int_equal(check(h, i, 1, &v), GP_HEAD_BAD);
        assert_int_equal(v.code, GP_HC_INVALID_QUERY);
        assert_non_null(strstr(v.msg, "closed"));
    }
    assert_int_equal(check(h, n, 1, &v), GP_HEAD_OK);
    const char *b = "POST /t HTTP/1.1\r\nContent-Length: 1x\r\n\r\n";
    size_t decide = strstr(b, "1x\r\n") - b + 4; /* the line is whole with its LF */
    for (size_t i = 0; i < strlen(b); i++)
        assert_int_equal(check(b, i, 0, &v), i < decide ? GP_HEAD_MORE : GP_HEAD_BAD);
}

static char *repeat(const char *pre, const char *unit, size_t times, const char *post) {
    size_t n = strlen(pre) + strlen(unit) * times + strlen(post);
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t k = 0, lu = strlen(unit);
    memcpy(s, pre, strlen(pre));
    k += strlen(pre);
    for (size_t i = 0; i < times; i++, k += lu) memcpy(s + k, unit, lu);
    memcpy(s + k, post, strlen(post) + 1);
    return s;
}

static void test_limits(void **state) {
    (void)state;
    static const struct {
        const char *pre, *unit;
        size_t times;
        const char *post;
        int verdict, code;
        const char *words;
    } cases[] = {
        /* the target: max_url_bytes passes, one more is 414 */
        {"GET /", "a", 8191, " HTTP/1.1\r\n\r\n", GP_HEAD_OK, 0, ""},
        {"GET /", "a", 8192, " HTTP/1.1\r\n\r\n", GP_HEAD_BAD, GP_HC_URI_TOO_LONG,
         "request target of 8193 bytes exceeds max_url_bytes = 8192"},
        /* a request line without its end, past what the check reads: 414 without waiting */
        {"GET /", "a", 9300, "", GP_HEAD_BAD, GP_HC_URI_TOO_LONG, "max_url_bytes"},
        /* headers: counted as the handler does (name + value + 4) */
        {"GET / HTTP/1.1\r\nX: ", "b", 16384 - 5, "\r\n\r\n", GP_HEAD_OK, 0, ""},
        {"GET / HTTP/1.1\r\nX: ", "b", 16384 - 4, "\r\n\r\n", GP_HEAD_BAD, GP_HC_HEADERS_TOO_LARGE,
         "request headers of 16385 bytes exceed max_header_bytes"},
        /* an unfinished head past the most the check reads */
        {"GET / HTTP/1.1\r\nX: ", "b", 8192 + 1024 + 16384 + 1024, "", GP_HEAD_BAD,
         GP_HC_HEADERS_TOO_LARGE, "max_header_bytes"},
        /* records: many small headers, arguments or cookies */
        {"GET / HTTP/1.1\r\n", "a:\r\n", 3000, "\r\n", GP_HEAD_BAD, GP_HC_HEADERS_TOO_LARGE,
         "3000 headers"},
        {"GET /?", "a&", 4000, " HTTP/1.1\r\n\r\n", GP_HEAD_BAD, GP_HC_HEADERS_TOO_LARGE,
         "4001 query parameters"},
        {"GET /?", "a&", 100, " HTTP/1.1\r\n\r\n", GP_HEAD_OK, 0, ""},
        {"GET / HTTP/1.1\r\nCookie: ", "a=1;", 1000, "\r\n\r\n", GP_HEAD_BAD,
         GP_HC_HEADERS_TOO_LARGE, "1001 cookies"},
    };
    assert_int_equal(gp_head_max_bytes(&LIM), 8192 + 1024 + 16384 + 1024);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = repeat(cases[i].pre, cases[i].unit, cases[i].times, cases[i].post);
        gp_head_verdict v;
        int r = check(t, strlen(t), 0, &v);
        if (r != cases[i].verdict ||
            (r == GP_HEAD_BAD && (v.code != cases[i].code || !strstr(v.msg, cases[i].words))))
            fail_msg("case %zu ('%s' + %zu x '%s'): verdict %d code %d '%s'", i, cases[i].pre,
                     cases[i].times, cases[i].unit, r, v.code, v.msg);
        free(t);
    }
}

/* The connection buffer: half of it holds any head the check passes, the other its records and
 * the answer's header block. */
static void test_pool_size(void **state) {
    (void)state;
    const gp_head_limits lims[] = {{8192, 16384}, {256, 1024}, {65536, 65536}};
    for (size_t i = 0; i < sizeof lims / sizeof *lims; i++) {
        size_t max = gp_head_max_bytes(&lims[i]), rec = gp_head_record_budget(&lims[i]);
        assert_true(max >= (size_t)(lims[i].max_url_bytes + lims[i].max_header_bytes));
        assert_true(gp_head_pool_bytes(&lims[i]) >= 2 * max);
        assert_true(gp_head_pool_bytes(&lims[i]) >= 2 * (rec + 16384));
    }
}

/* Whether the library closes the connection after the request (the token as libmicrohttpd
 * compares it), and the small pool's bound on the head and its records. */
static void test_closes_and_small_pool(void **state) {
    (void)state;
    const struct {
        const char *head;
        int closes;
    } cases[] = {
        {"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nconnection:CLOSE\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nConnection: Upgrade , close \t\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nConnection: ,,close,\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", 1},
        {"GET / HTTP/1.1\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nConnection: closed\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nConnection: xclose\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nConnection: \"close\"\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nX-Connection: close\r\n\r\n", 0},
        {"GET / HTTP/1.1\r\nX: Connection: close\r\n\r\n", 0},
        {"GET / HTTP/1.9\r\n\r\n", 0},
        {"GET / HTTP/1.0\r\n\r\n", 1},
        {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 0},
        {"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gp_head_verdict v;
        if (check(cases[i].head, strlen(cases[i].head), 0, &v) != GP_HEAD_OK ||
            v.closes != cases[i].closes)
            fail_msg("'%s': closes %d, wanted %d", cases[i].head, v.closes, cases[i].closes);
    }
    /* an ordinary head fits; one with a long header or many fields does not */
    gp_head_verdict v;
    const char *h = "GET /v1/graphs/t/route?from=1&to=5 HTTP/1.1\r\nHost: x\r\n"
                    "Connection: close\r\n\r\n";
    assert_int_equal(check(h, strlen(h), 0, &v), GP_HEAD_OK);
    assert_int_equal(v.records, 4 * GP_HEAD_RECORD_BYTES);
    assert_true(gp_head_fits_pool(&v, GP_HEAD_SMALL_POOL));
    /* the edge: 2 x head + records + the answer's own fields = half the pool */
    size_t fixed = strlen("GET / HTTP/1.1\r\nX: \r\n\r\n");
    size_t room = GP_HEAD_SMALL_POOL / 2 - GP_HEAD_ANSWER_BYTES - GP_HEAD_RECORD_BYTES;
    for (size_t extra = 0; extra < 2; extra++) {
        size_t n = room / 2 - fixed + extra;
        char *t = repeat("GET / HTTP/1.1\r\nX: ", "b", n, "\r\n\r\n");
        assert_int_equal(check(t, strlen(t), 0, &v), GP_HEAD_OK);
        assert_int_equal(gp_head_fits_pool(&v, GP_HEAD_SMALL_POOL), !extra);
        free(t);
    }
    /* the big pool holds any head the check passes */
    char *t = repeat("GET / HTTP/1.1\r\nX: ", "b", 16000, "\r\n\r\n");
    assert_int_equal(check(t, strlen(t), 0, &v), GP_HEAD_OK);
    assert_false(gp_head_fits_pool(&v, GP_HEAD_SMALL_POOL));
    free(t);
    t = repeat("GET / HTTP/1.1\r\n", "a:\r\n", 200, "\r\n");
    assert_int_equal(check(t, strlen(t), 0, &v), GP_HEAD_OK);
    assert_int_equal(v.records, 200 * GP_HEAD_RECORD_BYTES);
    assert_false(gp_head_fits_pool(&v, GP_HEAD_SMALL_POOL));
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_heads), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_prefixes),   cmocka_unit_test(test_limits),
        cmocka_unit_test(test_pool_size),  cmocka_unit_test(test_closes_and_small_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
