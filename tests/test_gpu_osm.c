/* test_gpu_osm.c - the CUDA backend on imported OpenStreetMap graphs (graph/osm.c) against the
 * CPU backend: one-to-all trees (distances equal, predecessors realising them), point-to-point
 * routes and many-to-many tables on the hand-written files of tests/data/osm (one-ways, turn
 * restrictions expanded into node copies, barriers) and on Monaco and Liechtenstein for every
 * profile ($GPATH_DATA/osm, skipped when absent), directly and through a .gpath snapshot (the
 * mapped graph is what `serve` uploads). Routes through restriction copies must give the same
 * detours on the GPU: e.g. turns.osm car 101 -> 103 is 456 ds, not the forbidden 273.
 * Without a GPU (or in a build without CUDA) every test skips with "no CUDA device: GPU tests
 * skipped"; GPATH_REQUIRE_GPU=1 turns that into a failure. Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/backend.h"
#include "graph/snapshot.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gp_backend *cpu, *gpu;
static char no_gpu_msg[600];

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!gpu) {                                                                                \
            const char *r = getenv("GPATH_REQUIRE_GPU");                                           \
            if (r && strcmp(r, "1") == 0) fail_msg("GPATH_REQUIRE_GPU=1 but %s", no_gpu_msg);      \
            print_message("no CUDA device: GPU tests skipped (%s)\n", no_gpu_msg);                 \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static int setup(void **state) {
    (void)state;
    gp_err err = {0};
    cpu = gp_cpu_backend_new(2, &err);
    if (!cpu) return -1;
    gp_cuda_opts o = {0, 2, 500, NULL, NULL};
    gpu = gp_cuda_backend_new(&o, &err);
    if (!gpu) snprintf(no_gpu_msg, sizeof no_gpu_msg, "%s", err.msg);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    gp_backend_destroy(gpu);
    gp_backend_destroy(cpu);
    return 0;
}

static gp_graph *load(const char *spec) {
    gp_err err = {0};
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    if (gpu->ops->attach && gpu->ops->attach(gpu, g, &err))
        fail_msg("attach %s: %s", spec, err.msg);
    return g;
}

/* Trees from a few sources, routes and a table: GPU == CPU. */
static void compare(const gp_graph *g, const char *what) {
    gp_err err = {0};
    const uint32_t n = g->n;
    uint64_t *ref = malloc((size_t)n * 8), *d = malloc((size_t)n * 8);
    uint32_t *pred = malloc((size_t)n * 4);
    assert_true(ref && d && pred);
    uint32_t src[6], dst[6];
    for (int k = 0; k < 6; k++) {
        src[k] = (uint32_t)(((uint64_t)k * 7919u + 3) % n);
        dst[k] = (uint32_t)(((uint64_t)k * 104729u + 11) % n);
    }
    for (int k = 0; k < 6; k++) {
        assert_int_equal(cpu->ops->sssp(cpu, g, src[k], GP_INF, ref, NULL, &err), GP_OK);
        int rc = gpu->ops->sssp(gpu, g, src[k], GP_INF, d, pred, &err);
        if (rc) fail_msg("%s: GPU sssp: %s", what, err.msg);
        for (uint32_t v = 0; v < n; v++) {
            if (d[v] != ref[v])
                fail_msg("%s: src %u: dist[%u] = %llu on the GPU, %llu on the CPU", what, src[k], v,
                         (unsigned long long)d[v], (unsigned long long)ref[v]);
            if (v == src[k] || d[v] == GP_INF) continue;
            uint32_t p = pred[v];
            int ok = 0;
            for (uint32_t e = p < n ? g->row[p] : 0; p < n && e < g->row[p + 1] && !ok; e++)
                ok = g->col[e] == v && d[p] + g->w[e] == d[v];
            if (!ok)
                fail_msg("%s: pred[%u] = %u does not realise %llu", what, v, p,
                         (unsigned long long)d[v]);
        }
        gp_path a = {0}, b = {0};
        assert_int_equal(cpu->ops->p2p(cpu, g, src[k], dst[k], GP_P2P_DIJKSTRA, &a, &err), GP_OK);
        if (gpu->ops->p2p(gpu, g, src[k], dst[k], GP_P2P_AUTO, &b, &err))
            fail_msg("%s: GPU p2p: %s", what, err.msg);
        if (a.dist != b.dist)
            fail_msg("%s: route %u -> %u: %llu on the GPU, %llu on the CPU", what, src[k], dst[k],
                     (unsigned long long)b.dist, (unsigned long long)a.dist);
        gp_path_free(&a);
        gp_path_free(&b);
    }
    uint64_t t1[36], t2[36];
    assert_int_equal(cpu->ops->table(cpu, g, src, 6, dst, 6, t1, &err), GP_OK);
    if (gpu->ops->table(gpu, g, src, 6, dst, 6, t2, &err))
        fail_msg("%s: GPU table: %s", what, err.msg);
    assert_memory_equal(t1, t2, sizeof t1);
    free(ref);
    free(d);
    free(pred);
}

static void test_hand_written(void **state) {
    (void)state;
    NEED_GPU();
    static const char *files[] = {"turns.osm", "viaway.osm", "access.osm", "oneway.osm"};
    static const char *profiles[] = {"car", "bicycle", "foot"};
    for (int f = 0; f < 4; f++)
        for (int p = 0; p < 3; p++) {
            char spec[256];
            snprintf(spec, sizeof spec, "osm:tests/data/osm/%s?profile=%s", files[f], profiles[p]);
            gp_graph *g = load(spec);
            compare(g, spec);
            gp_graph_unref(g);
        }
    /* the restricted left turn detours on the GPU too */
    gp_graph *g = load("osm:tests/data/osm/turns.osm?profile=car");
    gp_err err = {0};
    gp_path pth = {0};
    assert_int_equal(gpu->ops->p2p(gpu, g, gp_graph_index(g, 101), gp_graph_index(g, 103),
                                   GP_P2P_AUTO, &pth, &err),
                     GP_OK);
    assert_int_equal(pth.dist, 456);
    gp_path_free(&pth);
    gp_graph_unref(g);
}

static void test_extracts(void **state) {
    (void)state;
    NEED_GPU();
    const char *data = getenv("GPATH_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/osm/monaco.osm.pbf", data ? data : "");
    if (!data || access(path, R_OK) != 0) {
        print_message("GPATH_DATA has no osm/monaco.osm.pbf: OSM extracts skipped\n");
        skip();
    }
    static const char *files[] = {"monaco.osm.pbf", "liechtenstein-latest.osm.pbf"};
    static const char *profiles[] = {"car", "bicycle", "foot"};
    char snap[] = "/tmp/gpath-gpu-osm-XXXXXX.gpath";
    int fd = mkstemps(snap, 6);
    assert_true(fd >= 0);
    close(fd);
    for (int f = 0; f < 2; f++)
        for (int p = 0; p < 3; p++) {
            char spec[1200];
            snprintf(spec, sizeof spec, "osm:%s/osm/%s?profile=%s", data, files[f], profiles[p]);
            gp_graph *g = load(spec);
            compare(g, spec);
            gp_err err = {0};
            assert_int_equal(gp_snapshot_write(g, snap, NULL, 0, &err), GP_OK);
            gp_graph_unref(g);
            g = load(snap);
            compare(g, snap);
            gp_graph_unref(g);
        }
    remove(snap);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_written),
        cmocka_unit_test(test_extracts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
