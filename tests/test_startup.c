/* test_startup.c - what the start-up line says when the CPU answers under backend auto: "no
 * NVIDIA GPU found" when there is no GPU or no driver at all (the CUDA runtime reports a missing
 * libcuda.so.1 as an "insufficient driver", which must not read as a driver-version complaint),
 * "too old" only when a driver is installed; and the engine keeps that reason for serve's
 * event=engine line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/engine.h"

static void test_reasons(void **state) {
    (void)state;
    char b[256];
    /* cudaErrorInsufficientDriver (35) without libcuda.so.1: no driver, so no GPU */
    gp_cuda_unavailable_reason(
        35, 0, 0, "CUDA driver version is insufficient for CUDA runtime version", b, sizeof b);
    assert_non_null(strstr(b, "no NVIDIA GPU found"));
    assert_null(strstr(b, "insufficient"));
    assert_null(strstr(b, "too old"));
    assert_non_null(strstr(b, "libcuda.so.1"));
    /* the same error with a driver installed: it really is too old */
    gp_cuda_unavailable_reason(
        35, 0, 1, "CUDA driver version is insufficient for CUDA runtime version", b, sizeof b);
    assert_non_null(strstr(b, "too old"));
    assert_null(strstr(b, "no NVIDIA GPU found"));
    /* cudaErrorNoDevice (100), or success with zero devices: a driver but no GPU */
    gp_cuda_unavailable_reason(100, 0, 1, "no CUDA-capable device is detected", b, sizeof b);
    assert_non_null(strstr(b, "no NVIDIA GPU found"));
    gp_cuda_unavailable_reason(0, 0, 1, "", b, sizeof b);
    assert_non_null(strstr(b, "no NVIDIA GPU found"));
    /* cudaErrorStubLibrary (34): the toolkit's stub, no driver */
    gp_cuda_unavailable_reason(34, 0, 1, "stub", b, sizeof b);
    assert_non_null(strstr(b, "no NVIDIA GPU found"));
    /* anything else names the CUDA error */
    gp_cuda_unavailable_reason(999, 0, 1, "unknown error", b, sizeof b);
    assert_non_null(strstr(b, "unknown error"));
}

static void test_engine_reason(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_engine *e = gp_engine_new("auto", 1, NULL, &err);
    assert_non_null(e);
    if (strcmp(gp_engine_backend(e), "cuda") == 0) {
        assert_string_equal(e->cpu_reason, ""); /* a GPU answers: nothing to explain */
    } else {
        assert_true(e->cpu_reason[0] != '\0');
        if (gp_cuda_compiled() && !gp_cuda_have_driver())
            assert_non_null(strstr(e->cpu_reason, "no NVIDIA GPU found"));
    }
    gp_engine_free(e);
    /* --backend cpu asked for: no reason to give */
    e = gp_engine_new("cpu", 1, NULL, &err);
    assert_non_null(e);
    assert_string_equal(e->cpu_reason, "");
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_engine_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
