/* test_http_json.c - gp_json_print (server/http/json.c) writes exactly cJSON_PrintUnformatted's
 * text: numbers of every kind (the fast decimals of up to 6 places and their edges, integers
 * around int's range, tiny, huge, NaN and infinities, random doubles), strings with every byte
 * value and escape, nested and empty containers, raw items, keys; and fails where cJSON fails.
 * gp_json_append writes the same text after what a buffer holds; members added under literal keys
 * (gp_json_add_*) print as cJSON_Add*ToObject's; gp_json_put_* write the same text straight; gp_json_scan_num reads numbers as strtod does,
 * bit for bit, and stops where JSON's grammar does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/http/json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints x both ways and compares (x is freed). */
static void same(cJSON *x) {
    char *want = cJSON_PrintUnformatted(x);
    size_t n = 0;
    char *got = gp_json_print(x, &n);
    assert_non_null(want);
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_int_equal(n, strlen(want));
    char *buf = NULL; /* appended twice: into an empty buffer, then after text */
    size_t len = 0, cap = 0;
    assert_int_equal(gp_json_append(x, &buf, &len, &cap), 0);
    assert_int_equal(gp_json_append(x, &buf, &len, &cap), 0);
    assert_int_equal(len, 2 * n);
    assert_true(cap >= len + 2);
    assert_memory_equal(buf, want, n);
    assert_memory_equal(buf + n, want, n);
    free(buf);
    gp_json_out o = {0}; /* written straight after text: the tree, then the value itself */
    gp_json_put_lit(&o, "x");
    gp_json_put_tree(&o, x);
    if (cJSON_IsNumber(x)) gp_json_put_num(&o, x->valuedouble);
    else if (cJSON_IsString(x)) gp_json_put_str(&o, x->valuestring);
    else gp_json_put_tree(&o, x);
    assert_false(o.bad);
    assert_int_equal(o.len, 1 + 2 * n);
    assert_true(o.cap >= o.len + 2);
    assert_memory_equal(o.p, "x", 1);
    assert_memory_equal(o.p + 1, want, n);
    assert_memory_equal(o.p + 1 + n, want, n);
    free(o.p);
    got[n] = '\n'; /* the answer writer's use of the spare bytes */
    got[n + 1] = '\0';
    cJSON_free(want);
    free(got);
    cJSON_Delete(x);
}

static void same_number(double d) { same(cJSON_CreateNumber(d)); }

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { /* xorshift64; the left shifts drop the high bits explicitly */
    rng ^= (rng & ((1ull << 51) - 1)) << 13;
    rng ^= rng >> 7;
    rng ^= (rng & ((1ull << 47) - 1)) << 17;
    return rng;
}
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static void test_numbers(void **state) {
    (void)state;
    const double fixed[] = {0,
                            -0.0,
                            1,
                            -1,
                            0.1,
                            -0.1,
                            0.5,
                            1076.4,
                            13136.7,
                            281.207636,
                            9.523714,
                            47.100057,
                            -47.100057,
                            1e-4,
                            -1e-4,
                            9.99e-5,
                            1.5e-4,
                            0.000123,
                            0.0001234567,
                            1e9,
                            -1e9,
                            999999999.999999,
                            999999999.9999999,
                            123456789.123456,
                            2147483647,
                            2147483648.0,
                            -2147483648.0,
                            -2147483649.0,
                            2147483647.5,
                            1e15,
                            1e16,
                            123456789012345678.0,
                            1e300,
                            -1e300,
                            DBL_MAX,
                            DBL_MIN,
                            5e-324,
                            1.0 / 3,
                            2.0 / 3,
                            0.1 + 0.2,
                            100.05,
                            0.30000000000000004,
                            1e-7,
                            3.14159265358979,
                            NAN,
                            INFINITY,
                            -INFINITY};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) same_number(fixed[i]);
    for (int i = 0; i < 200000; i++) {
        /* decimals of 0..7 places (what gp_round_unit gives) and raw doubles, 10^-6 .. 10^12 */
        double mag = pow(10, (double)(next() % 19) - 6), x = (unit() - 0.3) * mag;
        int places = (int)(next() % 9);
        double p = pow(10, places);
        same_number(places == 8 ? x : round(x * p) / p);
    }
    for (int i = 0; i < 20000; i++) { /* any bit pattern */
        uint64_t bits = next();
        double d;
        memcpy(&d, &bits, sizeof d);
        same_number(d);
    }
}

static void test_strings(void **state) {
    (void)state;
    char s[256];
    for (int i = 1; i < 256; i++) s[i - 1] = (char)i;
    s[255] = '\0';
    same(cJSON_CreateString(s));
    same(cJSON_CreateString(""));
    same(
        cJSON_CreateString("R\xc3\xbcttigass \"quoted\" back\\slash /slash\t\n\r\b\f\x01\x1f\x7f"));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "k\"ey\n", "v");
    cJSON_AddStringToObject(o, "", "empty key");
    same(o);
}

static void test_trees(void **state) {
    (void)state;
    same(cJSON_CreateObject());
    same(cJSON_CreateArray());
    same(cJSON_CreateNull());
    same(cJSON_CreateTrue());
    same(cJSON_CreateFalse());
    const char *doc =
        "{\"code\":\"Ok\",\"routes\":[{\"legs\":[{\"steps\":[],\"summary\":\"\",\"weight\":1076.4,"
        "\"duration\":1076.4,\"distance\":13136.7}],\"weight_name\":\"routability\"}],"
        "\"waypoints\":"
        "[{\"hint\":\"34-IFPjzhsMVCQAAZisAjAEA\",\"distance\":281.207636,\"name\":\"Oberfeld\","
        "\"location\":[9.523714,47.100057]},{\"a\":[[],{},[null,true,false,[[1,2],[3]]]]}],"
        "\"n\":-12,\"big\":1e300,\"tiny\":1e-300,\"x\":0.1}";
    same(cJSON_Parse(doc));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "raw", cJSON_CreateRaw("[1,2.50,\"x\"]"));
    cJSON *a = cJSON_AddArrayToObject(o, "deep");
    for (int i = 0; i < 50; i++) {
        cJSON *b = cJSON_CreateArray();
        cJSON_AddItemToArray(a, b);
        cJSON_AddItemToArray(b, cJSON_CreateNumber(i * 0.1));
        a = b;
    }
    same(o);
    /* a long document: the buffer grows */
    cJSON *big = cJSON_CreateArray();
    for (int i = 0; i < 100000; i++) cJSON_AddItemToArray(big, cJSON_CreateNumber(i / 7.0));
    same(big);
}

static void test_failures(void **state) {
    (void)state;
    cJSON *o = cJSON_CreateObject();
    cJSON *raw = cJSON_CreateRaw("1");
    free(raw->valuestring); /* a raw item without text: cJSON refuses to print it */
    raw->valuestring = NULL;
    cJSON_AddItemToObject(o, "r", raw);
    assert_null(cJSON_PrintUnformatted(o));
    assert_null(gp_json_print(o, NULL));
    cJSON *bad = cJSON_CreateNull();
    bad->type = cJSON_Invalid; /* no known type */
    assert_null(cJSON_PrintUnformatted(bad));
    assert_null(gp_json_print(bad, NULL));
    assert_null(gp_json_print(NULL, NULL));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    assert_int_equal(gp_json_append(o, &buf, &len, &cap), -1);
    assert_int_equal(len, 0); /* nothing appended */
    free(buf);
    gp_json_out w = {0}; /* written straight: bad, and nothing more written after */
    gp_json_put_tree(&w, o);
    assert_true(w.bad);
    assert_false(w.oom);
    size_t at = w.len;
    gp_json_put_lit(&w, "more");
    gp_json_put_num(&w, 1.5);
    assert_int_equal(w.len, at);
    free(w.p);
    gp_json_out w2 = {0};
    gp_json_put_tree(&w2, NULL);
    assert_true(w2.bad);
    free(w2.p);
    cJSON_Delete(bad);
    cJSON_Delete(o);
}

static void test_literal_keys(void **state) {
    (void)state;
    cJSON *want = cJSON_CreateObject(), *got = cJSON_CreateObject();
    cJSON_AddNumberToObject(want, "distance", 12.5);
    cJSON_AddStringToObject(want, "name", "Stra\"sse");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(want, "location"), cJSON_CreateNumber(9.5));
    assert_non_null(gp_json_add_number(got, "distance", 12.5));
    assert_non_null(gp_json_add_string(got, "name", "Stra\"sse"));
    cJSON_AddItemToArray(gp_json_add_array(got, "location"), cJSON_CreateNumber(9.5));
    char *w = cJSON_PrintUnformatted(want), *g = gp_json_print(got, NULL);
    assert_string_equal(g, w);
    cJSON_free(w);
    free(g);
    cJSON_Delete(want);
    cJSON_Delete(got); /* the literal keys are not freed */
}

/* n random decimals (sign, up to 21 digits, some exponents) read by gp_json_scan_num == strtod */
static void test_scan_numbers(void **state) {
    (void)state;
    char buf[80];
    for (int it = 0; it < 300000; it++) {
        int k = 0, id = (int)(next() % 10), fd = (int)(next() % 12);
        if (next() % 4 == 0) buf[k++] = '-';
        buf[k++] = next() % 3 ? (char)('1' + next() % 9) : '0';
        for (int i = 0; buf[k - 1] != '0' && i < id; i++) buf[k++] = (char)('0' + next() % 10);
        if (fd) buf[k++] = '.';
        for (int i = 0; i < fd; i++) buf[k++] = (char)('0' + next() % 10);
        if (next() % 10 == 0) k += snprintf(buf + k, 8, "e%d", (int)(next() % 41) - 20);
        buf[k] = '\0';
        gp_json_scan s = {buf, buf + k};
        double got, want = strtod(buf, NULL);
        assert_int_equal(gp_json_scan_num(&s, &got), 1);
        assert_ptr_equal(s.p, buf + k);
        assert_memory_equal(&got, &want, sizeof got);
    }
    const char *stop[] = {" 12,", "-0]", "0.5}", "1e5-3", "01"}; /* taken up to the first of */
    const size_t at[] = {3, 2, 3, 3, 1};
    for (int i = 0; i < 5; i++) {
        gp_json_scan s = {stop[i], stop[i] + strlen(stop[i])};
        double v;
        assert_int_equal(gp_json_scan_num(&s, &v), 1);
        assert_ptr_equal(s.p, stop[i] + at[i]);
    }
    const char *bad[] = {"", "-", "+1", ".5", "1.", "1e", "1e+", "x", "NaN"};
    for (int i = 0; i < 9; i++) {
        gp_json_scan s = {bad[i], bad[i] + strlen(bad[i])};
        double v;
        assert_int_equal(gp_json_scan_num(&s, &v), 0);
        assert_ptr_equal(s.p, bad[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),      cmocka_unit_test(test_strings),
        cmocka_unit_test(test_trees),        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_literal_keys), cmocka_unit_test(test_scan_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
