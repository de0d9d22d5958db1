/* test_gpu_sssp.c - the CUDA backend's SSSP, point-to-point and table (kernels/sssp.cu through
 * engine/cuda_backend.c) against the CPU backend: both variants (near-far and the seed algorithm)
 * distance for distance on random graphs with zero weights, unreachable nodes, self-loops and
 * parallel arcs, with and without a distance limit; predecessors that realise the distances and
 * lead back to the source; a generated road graph; DIMACS rome99 when GPATH_DATA has it; p2p paths
 * made of real arcs; tables (also in several batches) equal to the CPU's; the stream pool's
 * GP_EBUSY after a bounded wait; and, last, a sticky device error marking the backend unhealthy
 * and the engine answering on the CPU.
 * Without a GPU (or in a build without CUDA) every test skips with "no CUDA device: GPU tests
 * skipped"; GPATH_REQUIRE_GPU=1 turns that into a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/backend.h"
#include "kernels/sssp.h"
#include "engine/engine.h"
#include "storage/source.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gp_backend *cpu, *gnf, *gseed;
static char no_gpu_msg[600];

static int require_gpu(void) {
    const char *r = getenv("GPATH_REQUIRE_GPU");
    return r && strcmp(r, "1") == 0;
}

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!gnf) {                                                                                \
            if (require_gpu()) fail_msg("GPATH_REQUIRE_GPU=1 but %s", no_gpu_msg);                 \
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
    gnf = gp_cuda_backend_new(&o, &err);
    if (!gnf) {
        snprintf(no_gpu_msg, sizeof no_gpu_msg, "%s", err.msg);
        return 0;
    }
    gp_cuda_opts os = {0, 1, 500, "seed", NULL};
    gseed = gp_cuda_backend_new(&os, &err);
    return gseed ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    gp_backend_destroy(gseed);
    gp_backend_destroy(gnf);
    gp_backend_destroy(cpu);
    return 0;
}

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n nodes (ids 1..n, so some have no arcs), ~deg*n arcs, weights 0..maxw (zeros included),
 * self-loops and parallel arcs. */
static gp_graph *random_graph(uint32_t n, uint32_t deg, uint32_t maxw, uint64_t seed) {
    rng_state = seed;
    gp_err err = {0};
    gp_builder *b = gp_builder_new(1.0);
    assert_non_null(b);
    for (uint32_t i = 1; i <= n; i++)
        assert_int_equal(gp_builder_add_node(b, i, 0, 0, 0, NULL, &err), GP_OK);
    uint64_t m = (uint64_t)n * deg;
    for (uint64_t k = 0; k < m; k++) {
        uint32_t u = 1 + (uint32_t)(rnd() % n), v;
        uint64_t r = rnd() % 100;
        if (r < 3) v = u;                                         /* self-loop */
        else if (r < 60) v = 1 + (uint32_t)((u + rnd() % 7) % n); /* local: long paths */
        else v = 1 + (uint32_t)(rnd() % n);
        if (u > n * 9 / 10) continue;               /* the last tenth: no out-arcs */
        if (v > n * 19 / 20) v = 1 + (v % (n / 2)); /* the last 5%: unreachable */
        uint32_t w = (rnd() % 8 == 0) ? 0 : (uint32_t)(rnd() % (maxw + 1));
        assert_int_equal(gp_builder_add_arc(b, u, v, w, &err), GP_OK);
        if (rnd() % 20 == 0) assert_int_equal(gp_builder_add_arc(b, u, v, w + 1, &err), GP_OK);
    }
    gp_graph *g = gp_builder_finish(b, "test:random", "test", 1, &err);
    if (!g) fail_msg("building a random graph: %s", err.msg);
    return g;
}

/* pred realises dist (an arc pred->v of weight dist[v]-dist[pred]) and walks back to src. */
static void check_pred(const gp_graph *g, uint32_t src, const uint64_t *dist,
                       const uint32_t *pred) {
    for (uint32_t v = 0; v < g->n; v++) {
        if (v == src || dist[v] == GP_INF) {
            if (pred[v] != GP_NONE) fail_msg("pred[%u] = %u, expected none", v, pred[v]);
            continue;
        }
        uint32_t p = pred[v];
        if (p >= g->n)
            fail_msg("node %u (dist %llu) has no predecessor", v, (unsigned long long)dist[v]);
        int ok = 0;
        for (uint32_t e = g->row[p]; e < g->row[p + 1] && !ok; e++)
            ok = g->col[e] == v && dist[p] != GP_INF && dist[p] + g->w[e] == dist[v];
        if (!ok)
            fail_msg("pred[%u] = %u does not realise dist %llu", v, p, (unsigned long long)dist[v]);
    }
    for (uint32_t v = 0; v < g->n; v++) { /* chains end at the source */
        if (dist[v] == GP_INF) continue;
        uint32_t x = v, steps = 0;
        while (x != src && steps++ <= g->n) x = pred[x];
        if (x != src) fail_msg("predecessor chain from %u does not reach the source %u", v, src);
    }
}

/* One source on one GPU backend vs the CPU. */
static void check_sssp(gp_backend *gb, const gp_graph *g, uint32_t src, uint64_t maxd) {
    uint64_t *ref = malloc((size_t)g->n * 8), *d = malloc((size_t)g->n * 8);
    uint32_t *pred = malloc((size_t)g->n * 4);
    assert_non_null(ref);
    assert_non_null(d);
    assert_non_null(pred);
    gp_err err = {0};
    assert_int_equal(cpu->ops->sssp(cpu, g, src, maxd, ref, NULL, &err), GP_OK);
    memset(d, 0xab, (size_t)g->n * 8);
    memset(pred, 0xab, (size_t)g->n * 4);
    int rc = gb->ops->sssp(gb, g, src, maxd, d, pred, &err);
    if (rc != GP_OK) fail_msg("GPU sssp from %u: %s", src, err.msg);
    for (uint32_t v = 0; v < g->n; v++)
        if (d[v] != ref[v])
            fail_msg("src %u max %llu: dist[%u] = %llu on the GPU, %llu on the CPU", src,
                     (unsigned long long)maxd, v, (unsigned long long)d[v],
                     (unsigned long long)ref[v]);
    check_pred(g, src, d, pred);
    free(ref);
    free(d);
    free(pred);
}

static void check_p2p(gp_backend *gb, const gp_graph *g, uint32_t s, uint32_t t) {
    gp_path pc = {0}, pg = {0};
    gp_err err = {0};
    assert_int_equal(cpu->ops->p2p(cpu, g, s, t, GP_P2P_DIJKSTRA, &pc, &err), GP_OK);
    int rc = gb->ops->p2p(gb, g, s, t, GP_P2P_AUTO, &pg, &err);
    if (rc != GP_OK) fail_msg("GPU p2p %u->%u: %s", s, t, err.msg);
    if (pg.dist != pc.dist)
        fail_msg("p2p %u->%u: %llu on the GPU, %llu on the CPU", s, t, (unsigned long long)pg.dist,
                 (unsigned long long)pc.dist);
    if (pg.dist == GP_INF) {
        assert_int_equal(pg.len, 0);
    } else {
        assert_true(pg.len >= 1);
        assert_int_equal(pg.nodes[0], s);
        assert_int_equal(pg.nodes[pg.len - 1], t);
        uint64_t sum = 0;
        for (uint32_t i = 0; i + 1 < pg.len; i++) {
            uint32_t u = pg.nodes[i], v = pg.nodes[i + 1];
            uint64_t best = GP_INF;
            for (uint32_t e = g->row[u]; e < g->row[u + 1]; e++)
                if (g->col[e] == v && g->w[e] < best) best = g->w[e];
            if (best == GP_INF) fail_msg("p2p %u->%u: path step %u->%u is no arc", s, t, u, v);
            sum += best;
        }
        if (sum != pg.dist)
            fail_msg("p2p %u->%u: path length %llu != dist %llu", s, t, (unsigned long long)sum,
                     (unsigned long long)pg.dist);
    }
    gp_path_free(&pc);
    gp_path_free(&pg);
}

static void test_random(void **state) {
    (void)state;
    NEED_GPU();
    static const struct {
        uint32_t n, deg, maxw;
    } cases[] = {{1, 0, 1},    {2, 1, 3},         {50, 3, 10},  {300, 4, 1000},
                 {2000, 3, 5}, {5000, 5, 100000}, {700, 40, 50}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gp_graph *g =
            random_graph(cases[c].n < 2 ? 2 : cases[c].n, cases[c].deg, cases[c].maxw, 11 + c);
        for (int k = 0; k < 3; k++) {
            uint32_t src = (uint32_t)(rnd() % g->n);
            check_sssp(gnf, g, src, GP_INF);
            check_sssp(gseed, g, src, GP_INF);
            check_p2p(gnf, g, src, (uint32_t)(rnd() % g->n));
            check_p2p(gseed, g, src, (uint32_t)(rnd() % g->n));
        }
        check_sssp(gnf, g, 0, 3 * cases[c].maxw);
        check_sssp(gseed, g, 0, 3 * cases[c].maxw);
        gp_graph_unref(g);
    }
}

static void test_road(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err = {0};
    gp_graph *g = gp_generate_road(40000, 3, &err);
    if (!g) fail_msg("gen: %s", err.msg);
    for (int k = 0; k < 3; k++) {
        uint32_t s = (uint32_t)((k * 7919u + 17) % g->n);
        check_sssp(gnf, g, s, GP_INF);
        check_p2p(gnf, g, s, (uint32_t)((k * 104729u + 5) % g->n));
    }
    check_sssp(gseed, g, 123, GP_INF);
    check_sssp(gnf, g, 77, 5000);
    gp_graph_unref(g);
}

static void test_rome(void **state) {
    (void)state;
    NEED_GPU();
    const char *data = getenv("GPATH_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/dimacs/rome99.gr", data ? data : "");
    if (!data || access(path, R_OK) != 0) {
        print_message("GPATH_DATA has no dimacs/rome99.gr: rome99 test skipped\n");
        skip();
    }
    gp_err err = {0};
    char spec[1100];
    snprintf(spec, sizeof spec, "dimacs:%s", path);
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("loading rome99: %s", err.msg);
    for (uint32_t s = 0; s < g->n; s += 701) {
        check_sssp(gnf, g, s, GP_INF);
        check_sssp(gseed, g, s, GP_INF);
        check_p2p(gnf, g, s, (s * 31 + 9) % g->n);
    }
    gp_graph_unref(g);
}

static void check_table(gp_backend *gb, const gp_graph *g, uint32_t ns, uint32_t nt) {
    uint32_t *src = malloc(ns * 4), *dst = malloc(nt * 4);
    uint64_t *ref = malloc((size_t)ns * nt * 8), *out = malloc((size_t)ns * nt * 8);
    assert_true(src && dst && ref && out);
    for (uint32_t i = 0; i < ns; i++) src[i] = (uint32_t)(rnd() % g->n);
    for (uint32_t j = 0; j < nt; j++) dst[j] = (uint32_t)(rnd() % g->n);
    if (ns > 2) src[1] = src[0]; /* a repeated source */
    gp_err err = {0};
    assert_int_equal(cpu->ops->table(cpu, g, src, ns, dst, nt, ref, &err), GP_OK);
    memset(out, 0xab, (size_t)ns * nt * 8);
    int rc = gb->ops->table(gb, g, src, ns, dst, nt, out, &err);
    if (rc != GP_OK) fail_msg("GPU table %ux%u: %s", ns, nt, err.msg);
    for (size_t k = 0; k < (size_t)ns * nt; k++)
        if (out[k] != ref[k])
            fail_msg("table[%zu][%zu] = %llu on the GPU, %llu on the CPU", k / nt, k % nt,
                     (unsigned long long)out[k], (unsigned long long)ref[k]);
#ifdef GP_HAVE_CUDA
    /* the same through several small batches */
    gp_sssp_ws *ws = gp_sssp_ws_new(NULL, 1, 0, &err);
    gp_dgraph *dg = NULL;
    assert_non_null(ws);
    assert_int_equal(gp_dgraph_new(g, &dg, &err), GP_OK);
    gp_sssp_params p = {GP_SSSP_NEARFAR, 0, 2, 7};
    gp_sssp_stats st;
    memset(out, 0xab, (size_t)ns * nt * 8);
    rc = gp_cuda_table(ws, dg, &p, src, ns, dst, nt, out, &st, &err);
    if (rc != GP_OK) fail_msg("batched table: %s", err.msg);
    assert_int_equal(st.batches, (ns + 6) / 7);
    assert_memory_equal(out, ref, (size_t)ns * nt * 8);
    gp_dgraph_free(dg);
    gp_sssp_ws_free(ws);
#endif
    free(src);
    free(dst);
    free(ref);
    free(out);
}

static void test_table(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err = {0};
    gp_graph *g = gp_generate_road(20000, 5, &err);
    if (!g) fail_msg("gen: %s", err.msg);
    rng_state = 99;
    check_table(gnf, g, 37, 53);
    check_table(gnf, g, 1, 1);
    gp_graph_unref(g);
    g = random_graph(3000, 4, 100, 5);
    check_table(gnf, g, 20, 30);
    gp_graph_unref(g);
}

/* The bucket width and the grid size change the schedule, never the answer. */
static void test_params(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    gp_err err = {0};
    gp_graph *g = random_graph(4000, 4, 500, 21);
    uint64_t *ref = malloc((size_t)g->n * 8), *d = malloc((size_t)g->n * 8);
    uint32_t *pred = malloc((size_t)g->n * 4);
    assert_int_equal(cpu->ops->sssp(cpu, g, 3, GP_INF, ref, NULL, &err), GP_OK);
    gp_sssp_ws *ws = gp_sssp_ws_new(NULL, 1, 0, &err);
    gp_dgraph *dg = NULL;
    assert_non_null(ws);
    assert_int_equal(gp_dgraph_new(g, &dg, &err), GP_OK);
    static const gp_sssp_params ps[] = {{GP_SSSP_NEARFAR, 0.1, 1, 0},
                                        {GP_SSSP_NEARFAR, 1, 3, 0},
                                        {GP_SSSP_NEARFAR, -1, 0, 0},
                                        {GP_SSSP_NEARFAR, 4, 0, 0},
                                        {GP_SSSP_SEED, 0, 0, 0}};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        gp_sssp_stats st;
        memset(d, 0xab, (size_t)g->n * 8);
        int rc = gp_cuda_sssp(ws, dg, &ps[i], 3, GP_INF, d, pred, &st, &err);
        if (rc != GP_OK) fail_msg("params %zu: %s", i, err.msg);
        assert_memory_equal(d, ref, (size_t)g->n * 8);
        check_pred(g, 3, d, pred);
        assert_true(st.iterations > 0);
    }
    gp_dgraph_free(dg);
    gp_sssp_ws_free(ws);
    free(ref);
    free(d);
    free(pred);
    gp_graph_unref(g);
#endif
}

/* A graph released while attached frees its device copy; a new one attaches. */
static void test_attach_reload(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err = {0};
    for (int k = 0; k < 3; k++) {
        gp_graph *g = random_graph(1000 + 100 * k, 3, 50, 40 + k);
        assert_int_equal(gnf->ops->attach(gnf, g, &err), GP_OK);
        assert_non_null(g->dev);
        assert_non_null(g->dev_free);
        check_sssp(gnf, g, 1, GP_INF);
        gp_graph_unref(g);
    }
    gp_backend_info in;
    gnf->ops->info(gnf, &in);
    assert_string_equal(in.name, "cuda");
    assert_int_equal(in.threads, 2);
    assert_true(in.mem_total > 0);
    assert_int_equal(in.healthy, 1);
}

#ifdef GP_HAVE_CUDA
typedef struct releaser {
    gp_backend *b;
    int ms;
} releaser;
static void *release_later(void *arg) {
    releaser *r = arg;
    usleep((useconds_t)r->ms * 1000);
    gp_err err = {0};
    gp_cuda_backend_debug_hold(r->b, 0, &err);
    return NULL;
}
#endif

/* An expired request deadline (gp_deadline_set) stops GPU queries with GP_ETIMEOUT, and the
 * backend answers normally again once it is cleared. */
static void test_deadline(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err = {0};
    gp_graph *g = gp_generate_road(20000, 7, &err);
    if (!g) fail_msg("gen: %s", err.msg);
    if (gnf->ops->attach && gnf->ops->attach(gnf, g, &err)) fail_msg("attach: %s", err.msg);
    uint32_t src[4] = {0, 1, 2, 3}, dst[3] = {10, 100, 1000};
    uint64_t out[12];
    uint64_t *dist = malloc((size_t)g->n * sizeof *dist);
    assert_non_null(dist);
    gp_deadline_set(gp_now() - 1.0);
    assert_int_equal(gnf->ops->table(gnf, g, src, 4, dst, 3, out, &err), GP_ETIMEOUT);
    assert_int_equal(gnf->ops->sssp(gnf, g, 0, GP_INF, dist, NULL, &err), GP_ETIMEOUT);
    gp_deadline_set(0);
    assert_int_equal(gnf->ops->table(gnf, g, src, 4, dst, 3, out, &err), GP_OK);
    assert_int_equal(gnf->ops->sssp(gnf, g, 0, GP_INF, dist, NULL, &err), GP_OK);
    for (int j = 0; j < 3; j++) assert_int_equal(out[j], dist[dst[j]]);
    free(dist);
    gp_graph_unref(g);
}

static void test_busy(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    gp_err err = {0};
    gp_graph *g = random_graph(500, 3, 20, 77);
    gp_cuda_opts o0 = {0, 1, 0, NULL, NULL};
    gp_backend *b = gp_cuda_backend_new(&o0, &err);
    assert_non_null(b);
    uint64_t *d = malloc((size_t)g->n * 8);
    assert_int_equal(gp_cuda_backend_debug_hold(b, 1, &err), GP_OK);
    double t0 = gp_now();
    assert_int_equal(b->ops->sssp(b, g, 0, GP_INF, d, NULL, &err), GP_EBUSY);
    assert_true(strstr(err.msg, "busy") != NULL);
    assert_true(gp_now() - t0 < 0.5);
    assert_int_equal(gp_cuda_backend_debug_hold(b, 0, &err), GP_OK);
    assert_int_equal(b->ops->sssp(b, g, 0, GP_INF, d, NULL, &err), GP_OK);
    gp_backend_destroy(b);

    /* with a bounded wait: a slot freed within it serves the request, past it GP_EBUSY */
    gp_cuda_opts o1 = {0, 1, 300, NULL, NULL};
    b = gp_cuda_backend_new(&o1, &err);
    assert_non_null(b);
    assert_int_equal(gp_cuda_backend_debug_hold(b, 1, &err), GP_OK);
    t0 = gp_now();
    assert_int_equal(b->ops->sssp(b, g, 0, GP_INF, d, NULL, &err), GP_EBUSY);
    double waited = gp_now() - t0;
    assert_true(waited >= 0.25 && waited < 2.0);
    pthread_t th;
    releaser r = {b, 50};
    assert_int_equal(pthread_create(&th, NULL, release_later, &r), 0);
    assert_int_equal(b->ops->sssp(b, g, 0, GP_INF, d, NULL, &err), GP_OK);
    pthread_join(th, NULL);
    gp_backend_destroy(b);
    free(d);
    gp_graph_unref(g);
#endif
}

/* Last: the fault poisons this process's CUDA context for good. */
static void test_sticky_error(void **state) {
    (void)state;
    NEED_GPU();
#ifdef GP_HAVE_CUDA
    gp_err err = {0};
    gp_graph *g = random_graph(800, 3, 20, 88);
    gp_cuda_opts o = {0, 2, 100, NULL, NULL};
    gp_engine *e = gp_engine_new("cuda", 2, &o, &err);
    if (!e) fail_msg("engine: %s", err.msg);
    assert_string_equal(gp_engine_backend(e), "cuda");
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    uint64_t *d = malloc((size_t)g->n * 8), *ref = malloc((size_t)g->n * 8);
    assert_int_equal(cpu->ops->sssp(cpu, g, 5, GP_INF, ref, NULL, &err), GP_OK);
    assert_int_equal(gp_engine_sssp(e, g, 5, GP_INF, d, NULL, &err), GP_OK);
    assert_memory_equal(d, ref, (size_t)g->n * 8);

    int rc = gp_cuda_backend_inject_fault(e->primary, &err);
    assert_int_equal(rc, GP_EDEVICE);
    assert_true(strstr(err.msg, "CUDA error") != NULL);
    assert_true(gp_cuda_device_broken());
    gp_backend_info in;
    e->primary->ops->info(e->primary, &in);
    assert_int_equal(in.healthy, 0);
    /* the backend refuses; the engine answers on the CPU from now on */
    assert_int_equal(e->primary->ops->sssp(e->primary, g, 5, GP_INF, d, NULL, &err), GP_EDEVICE);
    memset(d, 0, (size_t)g->n * 8);
    assert_int_equal(gp_engine_sssp(e, g, 5, GP_INF, d, NULL, &err), GP_OK);
    assert_memory_equal(d, ref, (size_t)g->n * 8);
    assert_string_equal(gp_engine_backend(e), "cpu");
    free(d);
    free(ref);
    /* the device copy is not freed through a lost context; just drop the host graph */
    gp_graph_unref(g);
    gp_engine_free(e);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_road),
        cmocka_unit_test(test_rome),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_attach_reload),
        /* test_sticky_error poisons the CUDA context: it stays last */
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_busy),
        cmocka_unit_test(test_sticky_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
