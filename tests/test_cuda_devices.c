/* test_cuda_devices.c - the cuda_devices setting (every GPU of the host, engine/backend.h): its
 * parser (empty = cuda_device alone, "all", lists with spaces and repeats, bad entries and ordinals
 * past the device count refused naming them) and the config key (`gpath serve --cuda-devices`
 * refusing a bad list at start-up, the value kept as written). CPU only: the devices themselves
 * are tested by test_gpu_multi. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/backend.h"
#include "server/config.h"

#include <stdlib.h>
#include <string.h>

static void expect_list(const char *spec, int dflt, int count, int n, const int *want) {
    int out[GP_CUDA_MAX_DEVICES];
    gp_err err = {0};
    int got = gp_cuda_devices_parse(spec, dflt, count, out, &err);
    if (got != n)
        fail_msg("'%s': %d devices (want %d): %s", spec ? spec : "(null)", got, n, err.msg);
    for (int i = 0; i < n; i++) assert_int_equal(out[i], want[i]);
}

static void expect_bad(const char *spec, int count, const char *words) {
    int out[GP_CUDA_MAX_DEVICES];
    gp_err err = {0};
    assert_int_equal(gp_cuda_devices_parse(spec, 0, count, out, &err), -1);
    assert_int_equal(err.code, GP_EINVAL);
    if (!strstr(err.msg, words)) fail_msg("'%s': error '%s' lacks '%s'", spec, err.msg, words);
}

static void test_parse(void **state) {
    (void)state;
    expect_list(NULL, 0, 1, 1, (int[]){0});
    expect_list("", 3, 4, 1, (int[]){3});
    expect_list("all", 0, 4, 4, (int[]){0, 1, 2, 3});
    expect_list("all", 0, 1, 1, (int[]){0});
    expect_list("all", 0, -1, 0, NULL); /* the count unknown (config): syntax only */
    expect_list("0,0", 0, 1, 2, (int[]){0, 0});
    expect_list(" 1 , 0", 0, 2, 2, (int[]){1, 0});
    expect_list("7", 0, -1, 1, (int[]){7});
    expect_bad("2", 2, "CUDA device 2 does not exist (2 found)");
    expect_bad("0,1,5", 4, "CUDA device 5 does not exist (4 found)");
    expect_bad("0,x", -1, "at 'x'");
    expect_bad("-1", -1, "not 'all' or a list");
    expect_bad("0;1", -1, "not 'all' or a list");
    expect_bad("0,", -1, "ends with a comma");
    expect_bad("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", -1, "more than 16 devices");
    int out[GP_CUDA_MAX_DEVICES];
    gp_err err = {0};
    /* the default device past the count: refused as cuda_device always was */
    assert_int_equal(gp_cuda_devices_parse("", 2, 1, out, &err), -1);
    assert_non_null(strstr(err.msg, "CUDA device 2 does not exist"));
}

static int load(const char *value, gp_config *cfg, gp_err *err) {
    int action = 0;
    char *argv[] = {"serve", "--cuda-devices", (char *)value};
    return gp_config_load(cfg, 3, argv, &action, err);
}

static void test_config_key(void **state) {
    (void)state;
    gp_config *cfg = malloc(sizeof *cfg);
    assert_non_null(cfg);
    gp_err err = {0};
    int action = 0;
    assert_int_equal(gp_config_load(cfg, 1, (char *[]){"serve"}, &action, &err), GP_OK);
    assert_string_equal(cfg->cuda_devices, ""); /* default: cuda_device alone, as before */
    assert_int_equal(load("all", cfg, &err), GP_OK);
    assert_string_equal(cfg->cuda_devices, "all");
    assert_int_equal(load("0,0", cfg, &err), GP_OK);
    assert_string_equal(cfg->cuda_devices, "0,0");
    assert_int_equal(load("0,gpu1", cfg, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "cuda_devices"));
    assert_non_null(strstr(err.msg, "gpu1"));
    free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_config_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
