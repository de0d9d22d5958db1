/* test_gpu_apsp.c - the GPU blocked Floyd-Warshall (gp_cuda_apsp, kernels/fw.cu) against the CPU
 * backend's all-pairs: exact distances, next hops that realise them and whose walks end, for
 * n = 1, 2, 31, 33, 100 and 1000, sparse graphs with unreachable pairs, zero-weight arcs, parallel
 * arcs and self-loops, every matrix kind (16-bit, 32-bit, 64-bit) with and without next hops, and
 * a forced kind too narrow for the weights refused instead of answered wrongly, and a matrix over
 * the device memory refused with the limit named.
 * Without a GPU (or in a build without CUDA) every test skips with a message; GPATH_REQUIRE_GPU=1
 * turns that into a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/backend.h"
#include "kernels/fw.h"
#include "tests/apsp_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gpu_ok;
static gp_backend *cpu;

static int require_gpu(void) {
    const char *r = getenv("GPATH_REQUIRE_GPU");
    return r && strcmp(r, "1") == 0;
}

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!gpu_ok) {                                                                             \
            if (require_gpu()) fail_msg("GPATH_REQUIRE_GPU=1 but no usable CUDA device");          \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

#ifdef GP_HAVE_CUDA
/* Runs one kind (with / without next) and checks it against the reference distances. */
static void check_kind(const gp_graph *g, const uint64_t *ref, int kind, int with_next) {
    size_t nn = (size_t)g->n * g->n;
    uint64_t *d = malloc(nn * sizeof *d);
    uint32_t *nx = with_next ? malloc(nn * sizeof *nx) : NULL;
    assert_non_null(d);
    memset(d, 0xab, nn * sizeof *d); /* poison: every entry must be written */
    if (nx) memset(nx, 0xab, nn * sizeof *nx);
    gp_err err = {0};
    gp_cuda_apsp_opts o = {kind};
    gp_cuda_apsp_stats st;
    memset(&st, 0, sizeof st);
    int rc = gp_cuda_apsp_ex(NULL, g, d, nx, &o, &st, &err);
    char msg[512] = "";
    if (rc != GP_OK) fail_msg("n=%u kind=%d next=%d: %s", g->n, kind, with_next, err.msg);
    if (!apc_equal(g->n, d, ref, msg, sizeof msg))
        fail_msg("n=%u kind=%d next=%d: %s", g->n, st.kind, with_next, msg);
    if (nx && !apc_next_ok(g, d, nx, msg, sizeof msg))
        fail_msg("n=%u kind=%d: %s", g->n, st.kind, msg);
    free(d);
    free(nx);
}

/* The reference, then auto and every forced kind that can hold the graph's bound. */
static void check_graph(gp_graph *g) {
    assert_non_null(g);
    size_t nn = (size_t)g->n * g->n;
    uint64_t *ref = malloc(nn * sizeof *ref);
    uint32_t *rnx = malloc(nn * sizeof *rnx);
    assert_non_null(ref);
    assert_non_null(rnx);
    gp_err err = {0};
    assert_int_equal(cpu->ops->apsp(cpu, g, ref, rnx, &err), GP_OK);
    uint64_t bound = gp_cuda_apsp_bound(g, 0, NULL), bound_next = gp_cuda_apsp_bound(g, 1, NULL);
    check_kind(g, ref, GP_APSP_AUTO, 0);
    check_kind(g, ref, GP_APSP_AUTO, 1);
    if (bound < 0x7fff) check_kind(g, ref, GP_APSP_U16, 0);
    if (bound < 0x7fffffff) check_kind(g, ref, GP_APSP_U32, 0);
    if (bound_next < 0xffffff) check_kind(g, ref, GP_APSP_U32, 1);
    check_kind(g, ref, GP_APSP_U64, 0);
    check_kind(g, ref, GP_APSP_U64, 1);
    free(ref);
    free(rnx);
    gp_graph_unref(g);
}
#endif

static void test_tiny(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    gp_err err = {0};
    /* n = 1: one node, a self-loop */
    gp_builder *b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_arc(b, 5, 5, 3, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "t", "gen", 1, &err);
    assert_non_null(g);
    uint64_t d1 = 7;
    uint32_t n1 = 7;
    assert_int_equal(gp_cuda_apsp(NULL, g, &d1, &n1, &err), GP_OK);
    assert_int_equal(d1, 0);
    assert_int_equal(n1, GP_NONE);
    gp_graph_unref(g);
    /* n = 2: one arc 0 -> 1, nothing back */
    b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_arc(b, 0, 1, 9, &err), GP_OK);
    g = gp_builder_finish(b, "t", "gen", 1, &err);
    uint64_t d[4];
    uint32_t nx[4];
    assert_int_equal(gp_cuda_apsp(NULL, g, d, nx, &err), GP_OK);
    assert_int_equal(d[0], 0);
    assert_int_equal(d[1], 9);
    assert_true(d[2] == GP_INF);
    assert_int_equal(d[3], 0);
    assert_int_equal(nx[0], GP_NONE);
    assert_int_equal(nx[1], 1);
    assert_int_equal(nx[2], GP_NONE);
    assert_int_equal(nx[3], GP_NONE);
    check_graph(g);
    /* n = 2: zero-weight arcs both ways */
    b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_arc(b, 0, 1, 0, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 1, 0, 0, &err), GP_OK);
    check_graph(gp_builder_finish(b, "t", "gen", 1, &err));
    check_graph(apc_graph(1, 0.0, 1, 1, 1, &err));
#endif
}

static void test_random(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    static const uint32_t ns[] = {2, 31, 33, 100, 1000};
    gp_err err = {0};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        uint32_t n = ns[i];
        /* sparse (about 2 arcs per node: unreachable pairs), weights 1..100 */
        check_graph(apc_graph(n, 2.0 / n, 1, 100, 11 + i, &err));
        /* medium density, many zero-weight arcs and ties */
        check_graph(apc_graph(n, n < 100 ? 0.3 : 0.05, 0, 3, 23 + i, &err));
        if (n <= 100) /* dense, wide weights (32-bit kinds, or 64-bit when they cannot hold) */
            check_graph(apc_graph(n, 0.9, 1, 1000000, 37 + i, &err));
    }
#endif
}

static void test_wide_weights(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    gp_err err = {0};
    /* (n-1) * max_w beyond 32 bits: auto takes the 64-bit kind; a forced 32-bit kind is refused */
    gp_graph *g = apc_graph(64, 0.2, 4000000000u, 4294967295u, 5, &err);
    assert_non_null(g);
    uint64_t *d = malloc((size_t)64 * 64 * sizeof *d);
    gp_cuda_apsp_opts o = {GP_APSP_U32};
    assert_int_equal(gp_cuda_apsp_ex(NULL, g, d, NULL, &o, NULL, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "do not fit"));
    o.kind = GP_APSP_U16;
    gp_err e2 = {0};
    uint32_t *nx = malloc((size_t)64 * 64 * sizeof *nx);
    assert_int_equal(gp_cuda_apsp_ex(NULL, g, d, nx, &o, NULL, &e2), GP_EINVAL);
    free(nx);
    free(d);
    check_graph(g);
#endif
}

static void test_too_big(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    /* 300,000 nodes with next hops need about 720 GB on the GPU: refused with the limit named,
     * before anything is allocated or written (the outputs here are deliberately tiny). */
    gp_err err = {0};
    gp_builder *b = gp_builder_new(1.0);
    for (int64_t i = 0; i < 300000; i++)
        assert_int_equal(gp_builder_add_node(b, i, 0, 0, 0, NULL, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 0, 1, 1, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "t", "gen", 1, &err);
    assert_non_null(g);
    uint64_t d = 0;
    uint32_t nx = 0;
    assert_int_equal(gp_cuda_apsp(NULL, g, &d, &nx, &err), GP_ETOOBIG);
    assert_non_null(strstr(err.msg, "largest n"));
    gp_graph_unref(g);
#endif
}

int main(void) {
    gp_err err = {0};
#ifdef GP_HAVE_CUDA
    gpu_ok = gp_cuda_apsp_devices() > 0;
#endif
    if (!gpu_ok) {
#ifdef GP_HAVE_CUDA
        printf("no CUDA device: GPU tests skipped\n");
#else
        printf("built without CUDA: GPU tests skipped\n");
#endif
    } else {
        cpu = gp_cpu_backend_new(0, &err);
        if (!cpu) {
            fprintf(stderr, "cpu backend: %s\n", err.msg);
            return 1;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_wide_weights),
        cmocka_unit_test(test_too_big),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gp_backend_destroy(cpu);
    return rc;
}
