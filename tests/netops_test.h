/* netops_test.h - what the router-network cmocka tests share (test_netops.c, test_planning.c,
 * test_repair.c, test_gpu_planning.c): the CPU engine E made once per group (setup / teardown)
 * and a builder holding routers with external ids 1..n (internal = id - 1). Header-only: each test
 * program includes it once, after cmocka.h.
 */
#ifndef GP_TESTS_NETOPS_TEST_H
#define GP_TESTS_NETOPS_TEST_H

#include "engine/engine.h"
#include "graph/graph.h"

static gp_engine *E;

static int setup(void **state) {
    (void)state;
    gp_err err;
    E = gp_engine_new("cpu", 2, NULL, &err);
    return E ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    gp_engine_free(E);
    return 0;
}

/* A builder with routers 1..n (no coordinates, no names). */
static gp_builder *routers_builder(uint32_t n) {
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    assert_non_null(b);
    for (uint32_t i = 1; i <= n; i++)
        assert_int_equal(gp_builder_add_node(b, i, 0, 0, 0, NULL, &err), GP_OK);
    return b;
}

/* The graph of b (directed: arcs as added, else as an undirected input); fails the test on error. */
static gp_graph *routers_finish(gp_builder *b, int directed) {
    gp_err err;
    gp_graph *g = gp_builder_finish(b, "test", "test", directed, &err);
    if (!g) fail_msg("builder: %s", err.msg);
    return g;
}

#endif
