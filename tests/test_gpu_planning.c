/* test_gpu_planning.c - the GPU pass of ECMP link loads (kernels/planload.cu through
 * gp_plan_load_cuda) equal to the CPU's gp_plan_load on random networks with random demands (ties
 * and unreachable routers included), on a generated 1,000-router network, and with the ecmp_max cap
 * biting; the failure scenarios on the GPU (gp_plan_failures, strategy gpu) equal to the CPU's
 * incremental strategy: every single link, every single router and random groups of links, the
 * changed and disconnected pairs exactly (and their lists, cut at list_max or whole), loads and
 * utilizations to rounding. Skips without a CUDA device (GPATH_REQUIRE_GPU=1 makes that a
 * failure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/planning.h"
#include "engine/progress.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "tests/netops_test.h"

static uint64_t rng(uint64_t *s) { return gp_splitmix64(s); }

/* n routers, a random tree plus extra chords of weights 1..wmax (ties), every 17th router left
 * out (its demands are unrouted). */
static gp_graph *random_net(uint32_t n, uint32_t chords, uint32_t wmax, uint64_t *seed) {
    gp_err err;
    gp_builder *b = routers_builder(n);
    for (uint32_t i = 2; i <= n; i++) {
        if (i % 17 == 0) continue;
        int64_t u = 1 + (int64_t)(rng(seed) % (i - 1));
        if (u % 17 == 0) u = 1;
        uint32_t w = 1 + (uint32_t)(rng(seed) % wmax);
        assert_int_equal(gp_builder_add_arc(b, u, i, w, &err), GP_OK);
        assert_int_equal(gp_builder_add_arc(b, i, u, w, &err), GP_OK);
    }
    for (uint32_t c = 0; c < chords; c++) {
        int64_t u = 1 + (int64_t)(rng(seed) % n), v = 1 + (int64_t)(rng(seed) % n);
        if (u == v || u % 17 == 0 || v % 17 == 0) continue;
        uint32_t w = 1 + (uint32_t)(rng(seed) % wmax);
        assert_int_equal(gp_builder_add_arc(b, u, v, w, &err), GP_OK);
        assert_int_equal(gp_builder_add_arc(b, v, u, w, &err), GP_OK);
    }
    gp_graph *g = routers_finish(b, 0);
    return g;
}

/* 8 n random rows (sources and destinations uniform, volumes 0 .. 124.875). */
static gp_demands *random_demands(uint32_t n, uint64_t *seed) {
    size_t k = (size_t)n * 8;
    uint32_t *s = malloc(k * sizeof *s), *d = malloc(k * sizeof *d);
    double *v = malloc(k * sizeof *v);
    for (size_t i = 0; i < k; i++) {
        s[i] = (uint32_t)(rng(seed) % n);
        d[i] = (uint32_t)(rng(seed) % n);
        v[i] = (double)(rng(seed) % 1000) / 8;
    }
    gp_demands *dm = NULL;
    gp_err err;
    assert_int_equal(gp_demands_build(n, s, d, v, k, &dm, &err), GP_OK);
    free(s);
    free(d);
    free(v);
    return dm;
}

static void compare(uint32_t n, uint32_t chords, uint32_t wmax, uint32_t ecmp_max, uint64_t seed) {
    gp_graph *g = random_net(n, chords, wmax, &seed);
    gp_rt *t = NULL;
    gp_err err;
    assert_int_equal(gp_rt_build(E, g, ecmp_max, 2, 0, &t, &err), GP_OK);
    gp_demands *dm = random_demands(n, &seed);
    uint32_t L = gp_plan_links(t);
    double *a = calloc(L + 1, sizeof *a), *b = calloc(L + 1, sizeof *b), la = 0, lb = 0, ms = 0;
    assert_int_equal(gp_plan_load(t, dm, 2, a, NULL, &la, &err), GP_OK);
    if (gp_plan_load_cuda(t, dm, b, &lb, &ms, &err) != GP_OK) fail_msg("GPU: %s", err.msg);
    for (uint32_t l = 0; l < L; l++)
        if (fabs(a[l] - b[l]) > 1e-9 * (dm->total + 1))
            fail_msg("n %u link %u: CPU %.17g GPU %.17g", n, l, a[l], b[l]);
    assert_true(fabs(la - lb) <= 1e-9 * (dm->total + 1));
    if (n >= 17) assert_true(la > 0); /* every 17th router is isolated: its demands are lost */
    print_message("n %u links %u: GPU %.3f ms\n", n, L, ms);
    free(a);
    free(b);
    gp_demands_free(dm);
    gp_rt_free(t);
    gp_graph_unref(g);
}

static int have_gpu(void) {
    gp_graph *g = random_net(4, 0, 1, &(uint64_t){1});
    gp_rt *t = NULL;
    gp_err err;
    gp_demands *dm = NULL;
    uint32_t z = 0;
    double v = 0, load[8];
    int ok = gp_rt_build(E, g, 0, 1, 0, &t, &err) == GP_OK &&
             gp_demands_build(4, &z, &z, &v, 1, &dm, &err) == GP_OK;
    int rc = ok ? gp_plan_load_cuda(t, dm, load, NULL, NULL, &err) : GP_EINVAL;
    gp_demands_free(dm);
    gp_rt_free(t);
    gp_graph_unref(g);
    if (rc == GP_OK) return 1;
    const char *r = getenv("GPATH_REQUIRE_GPU");
    if (r && strcmp(r, "1") == 0) fail_msg("GPATH_REQUIRE_GPU=1 but %s", err.msg);
    print_message("no CUDA device: GPU tests skipped (%s)\n", err.msg);
    return 0;
}

static void test_gpu_equals_cpu(void **state) {
    (void)state;
    if (!have_gpu()) skip();
    for (uint64_t seed = 1; seed <= 20; seed++)
        compare(5 + (uint32_t)(seed * 7 % 60), 40, 1 + (uint32_t)(seed % 4), 0, seed);
    compare(1000, 4000, 3, 0, 99); /* 1,000 routers, 5,000 links */
    compare(300, 2000, 1, 2, 7);   /* hop counts: wide ties, the cap at 2 biting */
}

/* Every single link, every single router and n / 4 random groups of 3 links failed (every
 * stride-th of those: the CPU reference is slow on the large networks), on the GPU and on the CPU
 * threads: equal. */
static void compare_failures(uint32_t n, uint32_t chords, uint32_t wmax, uint32_t ecmp_max,
                             uint64_t seed, uint32_t stride) {
    gp_graph *g = random_net(n, chords, wmax, &seed);
    gp_rt *t = NULL;
    gp_err err;
    assert_int_equal(gp_rt_build(E, g, ecmp_max, 2, 0, &t, &err), GP_OK);
    gp_demands *dm = random_demands(n, &seed);
    uint32_t L = gp_plan_links(t), ng = n / 4;
    double *cap = malloc((L + 1) * sizeof *cap);
    for (uint32_t l = 0; l < L; l++) cap[l] = l % 5 ? 1000 + (double)(l % 7) * 100 : 0;
    uint32_t *links = malloc(((size_t)L * 2 + ng * 6 + 1) * sizeof *links), nl = 0;
    uint32_t *routers = malloc(((size_t)n + 1) * sizeof *routers);
    gp_fail *sc = calloc((size_t)L + n + ng + 1, sizeof *sc);
    size_t ns = 0;
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
            if (t->nb[l] < u) continue; /* each undirected link once */
            uint32_t at = nl;
            gp_plan_fail_link(t, u, t->nb[l], links, &nl);
            sc[ns++] = (gp_fail){.links = links + at, .nlinks = nl - at};
        }
    for (uint32_t u = 0; u < n; u++) {
        routers[u] = u;
        sc[ns++] = (gp_fail){.routers = routers + u, .nrouters = 1};
    }
    for (uint32_t i = 0; i < ng && L; i++) {
        uint32_t at = nl;
        for (int j = 0; j < 3; j++) {
            uint32_t l = (uint32_t)(rng(&seed) % L);
            gp_plan_fail_link(t, gp_plan_link_tail(t, l), t->nb[l], links, &nl);
        }
        sc[ns++] = (gp_fail){.links = links + at, .nlinks = nl - at};
    }
    size_t kept = 0;
    for (size_t i = 0; i < ns; i += stride) sc[kept++] = sc[i];
    ns = kept;
    gp_scenario_result *a = calloc(ns + 1, sizeof *a), *b = calloc(ns + 1, sizeof *b);
    gp_plan_stats st = {0};
    gp_plan_opts o = {.list_max = 1 + (uint32_t)(seed % 40)}; /* lists: some cut, some whole */
    assert_int_equal(gp_plan_failures_opts(E, t, dm, cap, sc, ns, GP_PLAN_INCREMENTAL, 2, &o, a,
                                           NULL, NULL, &err),
                     GP_OK);
    if (gp_plan_failures_opts(E, t, dm, cap, sc, ns, GP_PLAN_GPU, 2, &o, b, NULL, &st, &err) !=
        GP_OK)
        fail_msg("GPU: %s", err.msg);
    assert_int_equal(st.strategy, GP_PLAN_GPU);
    double eps = 1e-9 * (dm->total + 1);
    for (size_t i = 0; i < ns; i++) {
        const gp_scenario_result *x = &a[i], *y = &b[i];
        if (x->changed_pairs != y->changed_pairs ||
            x->disconnected_pairs != y->disconnected_pairs || x->affected != y->affected ||
            fabs(x->unrouted_volume - y->unrouted_volume) > eps ||
            fabs(x->worst_utilization - y->worst_utilization) > 1e-9 ||
            fabs(x->worst_load - y->worst_load) > eps)
            fail_msg("n %u scenario %zu: CPU changed %llu disc %llu aff %u lost %.17g worst %.17g "
                     "(%.17g); GPU %llu %llu %u %.17g %.17g (%.17g)",
                     n, i, (unsigned long long)x->changed_pairs,
                     (unsigned long long)x->disconnected_pairs, x->affected, x->unrouted_volume,
                     x->worst_utilization, x->worst_load, (unsigned long long)y->changed_pairs,
                     (unsigned long long)y->disconnected_pairs, y->affected, y->unrouted_volume,
                     y->worst_utilization, y->worst_load);
        if (x->npairs != y->npairs || x->pairs_truncated != y->pairs_truncated ||
            (x->npairs && memcmp(x->pairs, y->pairs, x->npairs * sizeof *x->pairs)))
            fail_msg("n %u scenario %zu: listed pairs CPU %u (cut %d) GPU %u (cut %d) differ", n, i,
                     x->npairs, x->pairs_truncated, y->npairs, y->pairs_truncated);
        for (int j = 0; j < 8; j++)
            if (fabs(x->top_load[j] - y->top_load[j]) > eps)
                fail_msg("n %u scenario %zu: top load %d CPU %.17g GPU %.17g", n, i, j,
                         x->top_load[j], y->top_load[j]);
    }
    print_message("n %u links %u: %zu scenarios on the GPU, %.3f ms device, %u batches\n", n, L, ns,
                  st.gpu_s * 1e3, st.batches);
    gp_plan_results_free(a, ns);
    gp_plan_results_free(b, ns);
    free(a);
    free(b);
    free(sc);
    free(links);
    free(routers);
    free(cap);
    gp_demands_free(dm);
    gp_rt_free(t);
    gp_graph_unref(g);
}

static void test_gpu_failures_equal_cpu(void **state) {
    (void)state;
    if (!have_gpu()) skip();
    for (uint64_t seed = 1; seed <= 12; seed++)
        compare_failures(5 + (uint32_t)(seed * 7 % 60), 30, 1 + (uint32_t)(seed % 4), 0, seed, 1);
    compare_failures(300, 2000, 1, 2, 7, 5);    /* hop counts: wide ties, the cap at 2 biting */
    compare_failures(1000, 4000, 3, 0, 99, 50); /* 1,000 routers, 5,000 links */
}

/* A cancelled analysis (a job's DELETE) on the GPU strategy ends GP_ECANCELLED before its first
 * batch, with no scenario counted; the same call without the flag completes. */
static void test_gpu_cancel(void **state) {
    (void)state;
    if (!have_gpu()) skip();
    uint64_t seed = 5;
    gp_graph *g = random_net(200, 600, 3, &seed);
    gp_rt *t = NULL;
    gp_err err;
    assert_int_equal(gp_rt_build(E, g, 0, 2, 0, &t, &err), GP_OK);
    gp_demands *dm = random_demands(200, &seed);
    uint32_t L = gp_plan_links(t), nl = 0;
    uint32_t *links = malloc(((size_t)L * 2 + 1) * sizeof *links);
    gp_fail *sc = calloc((size_t)L + 1, sizeof *sc);
    size_t ns = 0;
    for (uint32_t u = 0; u < 200; u++)
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
            if (t->nb[l] < u) continue;
            uint32_t at = nl;
            gp_plan_fail_link(t, u, t->nb[l], links, &nl);
            sc[ns++] = (gp_fail){.links = links + at, .nlinks = nl - at};
        }
    gp_scenario_result *r = calloc(ns + 1, sizeof *r);
    for (int cancel = 1; cancel >= 0; cancel--) {
        gp_progress p;
        gp_progress_init(&p, "test");
        if (cancel) gp_progress_cancel(&p);
        gp_progress_set(&p);
        gp_plan_stats st = {0};
        int rc = gp_plan_failures(E, t, dm, NULL, sc, ns, GP_PLAN_GPU, 2, r, NULL, &st, &err);
        gp_progress_set(NULL);
        if (cancel) {
            assert_int_equal(rc, GP_ECANCELLED);
            assert_string_equal(err.msg, "failure analysis cancelled");
            assert_int_equal(st.batches, 0);
        } else {
            if (rc != GP_OK) fail_msg("GPU: %s", err.msg);
            assert_int_equal(st.strategy, GP_PLAN_GPU);
            assert_true(st.batches >= 1);
        }
        gp_plan_results_free(r, ns);
    }
    free(r);
    free(sc);
    free(links);
    gp_demands_free(dm);
    gp_rt_free(t);
    gp_graph_unref(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gpu_equals_cpu),
                                       cmocka_unit_test(test_gpu_failures_equal_cpu),
                                       cmocka_unit_test(test_gpu_cancel)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
