/* test_http_util.c - the HTTP layer's pure helpers (server/http/util.c: percent-decoding with NUL
 * detection, UTF-8 repair, log escaping, secret query keys, request ids, Accept-Encoding, CORS
 * origin matching, gzip) and the in-process request pipeline (gp_http_dispatch in server/http/daemon.c)
 * on a small generated graph: the same decoding, limits, routing and answer post-processing as a
 * request off a socket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/config.h"
#include "server/http/http.h"
#include "server/http/util.h"
#include "server/registry.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void test_url_decode(void **state) {
    (void)state;
    char s[64];
    int nul = 0;
    snprintf(s, sizeof s, "a%%20b+c%%2x%%");
    size_t n = gp_url_decode(s, strlen(s), 0, &nul);
    assert_string_equal(s, "a b+c%2x%");
    assert_int_equal(n, strlen(s));
    assert_int_equal(nul, 0);
    snprintf(s, sizeof s, "a+b%%41");
    gp_url_decode(s, strlen(s), 1, &nul);
    assert_string_equal(s, "a bA");
    snprintf(s, sizeof s, "ny%%00x");
    n = gp_url_decode(s, strlen(s), 0, &nul);
    assert_int_equal(nul, 1);
    assert_int_equal(n, 4);
    assert_memory_equal(s, "ny\0x", 4);
}

static void test_utf8_repair(void **state) {
    (void)state;
    char out[64];
    assert_int_equal(gp_utf8_repair("plain \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", out, sizeof out),
                     0);
    assert_string_equal(out, "plain \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80");
    /* a lone continuation byte, a truncated sequence, an overlong '/', a surrogate, > U+10FFFF */
    assert_int_equal(gp_utf8_repair("a\x80"
                                    "b\xc3"
                                    "c\xc0\xaf"
                                    "d\xed\xa0\x80"
                                    "e\xf4\x90\x80\x80",
                                    out, sizeof out),
                     1);
    assert_string_equal(out, "a\xef\xbf\xbd"
                             "b\xef\xbf\xbd"
                             "c\xef\xbf\xbd\xef\xbf\xbd"
                             "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                             "e\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    char small[6];
    gp_utf8_repair("ab\xc3\xa9\xc3\xa9", small, sizeof small); /* cut at a character boundary */
    assert_string_equal(small, "ab\xc3\xa9");
}

static void test_log_fields(void **state) {
    (void)state;
    char out[64];
    gp_log_escape("GE T\"\\%\n\x01\xff", 10, out, sizeof out);
    assert_string_equal(out, "GE%20T%22%5C%25%0A%01%FF");
    assert_true(gp_query_key_secret("token"));
    assert_true(gp_query_key_secret("API_KEY"));
    assert_true(gp_query_key_secret("password"));
    assert_false(gp_query_key_secret("from"));
    assert_false(gp_query_key_secret("router_name"));
}

static void test_request_id(void **state) {
    (void)state;
    assert_true(gp_request_id_ok("abc-1.2:3_x"));
    assert_false(gp_request_id_ok(""));
    assert_false(gp_request_id_ok("a b"));
    assert_false(gp_request_id_ok("a\"b"));
    char long_id[80];
    memset(long_id, 'a', 65);
    long_id[65] = '\0';
    assert_false(gp_request_id_ok(long_id));
    long_id[64] = '\0';
    assert_true(gp_request_id_ok(long_id));
    char a[17], b[17];
    gp_request_id_new(a, sizeof a);
    gp_request_id_new(b, sizeof b);
    assert_int_equal(strlen(a), 16);
    assert_true(gp_request_id_ok(a));
    assert_string_not_equal(a, b);
}

static void test_addr_str(void **state) {
    (void)state;
    char out[64];
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    const char *v4[] = {"0.0.0.0", "127.0.0.1", "10.20.30.40", "255.255.255.255", "1.99.100.9"};
    for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
        assert_int_equal(inet_pton(AF_INET, v4[i], &a4.sin_addr), 1);
        gp_addr_str((const struct sockaddr *)&a4, out, sizeof out);
        assert_string_equal(out, v4[i]);
    }
    gp_addr_str((const struct sockaddr *)&a4, out, 8); /* too small: inet_ntop's refusal */
    assert_string_equal(out, "");
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr), 1);
    gp_addr_str((const struct sockaddr *)&a6, out, sizeof out);
    assert_string_equal(out, "2001:db8::1");
    struct sockaddr other = {.sa_family = AF_UNIX};
    gp_addr_str(&other, out, sizeof out);
    assert_string_equal(out, "");
    gp_addr_str(NULL, out, sizeof out);
    assert_string_equal(out, "");
}

static void test_accept_encoding_and_cors(void **state) {
    (void)state;
    assert_true(gp_accepts_gzip("gzip"));
    assert_true(gp_accepts_gzip("deflate, GZIP;q=0.5"));
    assert_true(gp_accepts_gzip("*"));
    assert_false(gp_accepts_gzip("gzip;q=0"));
    assert_false(gp_accepts_gzip("deflate, br"));
    assert_false(gp_accepts_gzip("xgzip"));
    assert_false(gp_accepts_gzip(""));
    assert_int_equal(gp_cors_match("*", "https://a.example"), 1);
    assert_int_equal(gp_cors_match("https://a.example, https://b.example", "https://b.example"), 2);
    assert_int_equal(gp_cors_match("https://a.example", "https://a.example.evil"), 0);
    assert_int_equal(gp_cors_match("", "https://a.example"), 0);
}

static void test_gzip_roundtrip(void **state) {
    (void)state;
    char in[5000];
    for (size_t i = 0; i < sizeof in; i++) in[i] = (char)('a' + i % 7);
    size_t zl = 0;
    char *z = gp_gzip(in, sizeof in, &zl);
    assert_non_null(z);
    assert_true(zl < sizeof in / 4);
    char back[6000];
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit2(&s, 15 + 16), Z_OK);
    s.next_in = (Bytef *)z;
    s.avail_in = (uInt)zl;
    s.next_out = (Bytef *)back;
    s.avail_out = sizeof back;
    assert_int_equal(inflate(&s, Z_FINISH), Z_STREAM_END);
    assert_int_equal(s.total_out, sizeof in);
    assert_memory_equal(back, in, sizeof in);
    inflateEnd(&s);
    free(z);
}

/* ---- in-process dispatch ---- */
static gp_config cfg;
static gp_engine *engine;
static gp_registry *reg;

static int setup(void **state) {
    (void)state;
    gp_config_defaults(&cfg);
    gp_log_level = GP_LOG_ERROR;
    cfg.cache_path[0] = '\0';
    cfg.max_body_bytes = 2048;
    snprintf(cfg.operator_token, sizeof cfg.operator_token, "op");
    gp_err err;
    gp_err_clear(&err);
    engine = gp_engine_new("cpu", 1, NULL, &err);
    if (!engine) return -1;
    reg = gp_registry_new(engine);
    gp_graph_source src;
    memset(&src, 0, sizeof src);
    snprintf(src.spec, sizeof src.spec, "gen:400");
    if (!reg || gp_registry_load(reg, "g", &src, NULL, &err)) return -1;
    gp_http_startup_begin(&cfg);
    gp_http_startup_end();
    return gp_http_attach(&cfg, engine, reg);
}

static int teardown(void **state) {
    (void)state;
    gp_registry_free(reg);
    gp_engine_free(engine);
    return 0;
}

/* The error code of a JSON error answer (static buffer). */
static const char *code_of(const gp_http_answer *a) {
    static char code[64];
    cJSON *j = cJSON_ParseWithLength(a->body, a->len);
    assert_non_null(j);
    cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "code");
    snprintf(code, sizeof code, "%s", cJSON_IsString(c) ? c->valuestring : "?");
    cJSON_Delete(j);
    return code;
}

static void test_dispatch(void **state) {
    (void)state;
    gp_http_answer a;
    assert_int_equal(
        gp_http_dispatch("GET", "/v1/graphs/g/route?from=1&to=%3350", NULL, NULL, 0, &a), GP_OK);
    assert_int_equal(a.status, 200);
    assert_non_null(gp_http_answer_header(&a, "X-Request-Id"));
    gp_http_answer_free(&a);
    /* an argument without '=' reaches the handlers as a bare flag (value NULL), and the /v1
     * parameter layer (server/api/params.c) refuses it as empty */
    gp_http_dispatch("GET", "/v1/graphs/g/route?from=1&to=50&algo", NULL, NULL, 0, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(code_of(&a), "InvalidQuery");
    gp_http_answer_free(&a);
    /* NUL in the path and in a value */
    gp_http_dispatch("GET", "/v1/graphs/g%00x/route?from=1&to=2", NULL, NULL, 0, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(code_of(&a), "InvalidQuery");
    gp_http_answer_free(&a);
    gp_http_dispatch("GET", "/v1/graphs/g/route?from=1%00junk&to=2", NULL, NULL, 0, &a);
    assert_int_equal(a.status, 400);
    gp_http_answer_free(&a);
    /* invalid UTF-8 echoed in a message: still JSON */
    gp_http_dispatch("GET", "/v1/graphs/g%FF/route?from=1&to=2", NULL, NULL, 0, &a);
    assert_int_equal(a.status, 404);
    assert_string_equal(code_of(&a), "UnknownGraph");
    assert_non_null(strstr(a.body, "\xef\xbf\xbd"));
    gp_http_answer_free(&a);
    /* body cap */
    static char big[5000];
    memset(big, ' ', sizeof big);
    gp_http_dispatch("POST", "/v1/graphs/g/table", NULL, big, sizeof big, &a);
    assert_int_equal(a.status, 413);
    assert_string_equal(code_of(&a), "TooBig");
    gp_http_answer_free(&a);
    /* operator token */
    const char *none[] = {"Content-Type", "application/json", NULL};
    const char *body = "{\"links\":[{\"link\":[1,2],\"cost\":3}]}";
    gp_http_dispatch("PATCH", "/v1/graphs/g/links", none, body, strlen(body), &a);
    assert_int_equal(a.status, 401);
    gp_http_answer_free(&a);
    /* request id taken when sane; gzip when accepted and big enough */
    const char *h[] = {"X-Request-Id",      "abc-9", "Accept-Encoding", "gzip", "Origin",
                       "https://a.example", NULL};
    gp_http_dispatch("GET", "/v1/graphs/g/sssp?source=1", h, NULL, 0, &a);
    assert_int_equal(a.status, 200);
    assert_string_equal(gp_http_answer_header(&a, "X-Request-Id"), "abc-9");
    assert_string_equal(gp_http_answer_header(&a, "Content-Encoding"), "gzip");
    assert_string_equal(gp_http_answer_header(&a, "Access-Control-Allow-Origin"), "*");
    assert_true(a.len > 18 && (unsigned char)a.body[0] == 0x1f && (unsigned char)a.body[1] == 0x8b);
    gp_http_answer_free(&a);
    /* preflight; none on /admin */
    const char *pf[] = {"Origin", "https://a.example", "Access-Control-Request-Method", "POST",
                        NULL};
    gp_http_dispatch("OPTIONS", "/v1/graphs/g/table", pf, NULL, 0, &a);
    assert_int_equal(a.status, 204);
    assert_non_null(strstr(gp_http_answer_header(&a, "Access-Control-Allow-Methods"), "POST"));
    gp_http_answer_free(&a);
    gp_http_dispatch("OPTIONS", "/admin/cache", pf, NULL, 0, &a);
    assert_int_equal(a.status, 403);
    assert_null(gp_http_answer_header(&a, "Access-Control-Allow-Origin"));
    gp_http_answer_free(&a);
    /* a long request target */
    static char target[10000];
    snprintf(target, sizeof target, "/v1/graphs?");
    memset(target + 11, 'a', sizeof target - 12);
    gp_http_dispatch("GET", target, NULL, NULL, 0, &a);
    assert_int_equal(a.status, 414);
    assert_string_equal(code_of(&a), "UriTooLong");
    gp_http_answer_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_decode),
        cmocka_unit_test(test_utf8_repair),
        cmocka_unit_test(test_log_fields),
        cmocka_unit_test(test_request_id),
        cmocka_unit_test(test_addr_str),
        cmocka_unit_test(test_accept_encoding_and_cors),
        cmocka_unit_test(test_gzip_roundtrip),
        cmocka_unit_test_setup_teardown(test_dispatch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
