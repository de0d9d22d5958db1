/* test_progress.c - the progress counter (engine/progress.h) and its users: fractions within a
 * span, monotone and strictly below 1 until finished; the CPU backend's table (a unit per source)
 * and Floyd-Warshall APSP (a unit per tile row per round) count every unit of their work; the
 * routing-table job's progress while the job is still running (its store callback) is at least the
 * build's share and below 1, and exactly 1 once it is done.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/ecmp.h"
#include "engine/jobs.h"
#include "engine/progress.h"

static void test_fraction(void **state) {
    (void)state;
    gp_progress p;
    gp_progress_init(&p, "x");
    assert_true(gp_progress_fraction(&p) == 0);
    gp_progress_begin(&p, 10);
    gp_progress_add(&p, 5);
    assert_true(gp_progress_fraction(&p) > 0.49 && gp_progress_fraction(&p) < 0.51);
    gp_progress_add(&p, 5);
    double f = gp_progress_fraction(&p);
    assert_true(f > 0.999 && f < 1); /* all units of the phase, but not finished */
    gp_progress_add(&p, 50);         /* over-counting never reaches 1 either */
    assert_true(gp_progress_fraction(&p) < 1);
    /* a later, smaller span cannot move the fraction backwards */
    gp_progress_span(&p, 0.2, 0.4);
    assert_true(gp_progress_fraction(&p) >= f);
    gp_progress_finish(&p);
    assert_true(gp_progress_fraction(&p) == 1);

    gp_progress_init(&p, NULL);
    gp_progress_span(&p, 0.5, 1.0);
    assert_true(gp_progress_fraction(&p) > 0.49 && gp_progress_fraction(&p) < 0.51);
    gp_progress_begin(&p, 4);
    gp_progress_add(&p, 2);
    assert_true(gp_progress_fraction(&p) > 0.74 && gp_progress_fraction(&p) < 0.76);

    /* NULL: no progress wanted, every call a no-op */
    gp_progress_begin(NULL, 3);
    gp_progress_add(NULL, 1);
    gp_progress_span(NULL, 0, 1);
    gp_progress_finish(NULL);
    assert_true(gp_progress_fraction(NULL) == 0);
    gp_progress_set(NULL);
    assert_null(gp_progress_get());
}

static gp_graph *road(uint32_t n) {
    gp_err err;
    gp_graph *g = gp_generate_road(n, 3, &err);
    if (!g) fail_msg("gen: %s", err.msg);
    return g;
}

static void test_cpu_units(void **state) {
    (void)state;
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    gp_graph *g = road(1000);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    gp_progress p;
    gp_progress_init(&p, "table");
    gp_progress_set(&p);
    uint32_t src[37], dst[5];
    for (uint32_t i = 0; i < 37; i++) src[i] = i * 7;
    for (uint32_t i = 0; i < 5; i++) dst[i] = 900 + i;
    uint64_t out[37 * 5];
    assert_int_equal(gp_engine_table(e, g, src, 37, dst, 5, out, &err), GP_OK);
    assert_int_equal((int)atomic_load(&p.total), 37);
    assert_int_equal((int)atomic_load(&p.done), 37);
    assert_true(gp_progress_fraction(&p) < 1);

    size_t nn = (size_t)g->n * g->n;
    uint64_t *d = malloc(nn * sizeof *d);
    assert_non_null(d);
    gp_progress_init(&p, "apsp");
    assert_int_equal(gp_engine_apsp(e, g, d, NULL, &err), GP_OK);
    uint64_t total = atomic_load(&p.total);
    assert_true(total >= 1);
    assert_int_equal((int)atomic_load(&p.done), (int)total); /* every tile row of every round */
    assert_true(gp_progress_fraction(&p) > 0.999 && gp_progress_fraction(&p) < 1);
    gp_progress_set(NULL);
    /* without a current progress nothing is counted anywhere */
    gp_progress_init(&p, "none");
    assert_int_equal(gp_engine_table(e, g, src, 37, dst, 5, out, &err), GP_OK);
    assert_int_equal((int)atomic_load(&p.done), 0);
    free(d);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* The store callback runs on the worker after the build, while the job is still "running". */
typedef struct probe {
    gp_jobs *jobs;
    uint64_t id;
    int calls;
    int state;
    double progress;
} probe;

static probe P;

static int store_probe(void *ctx, const char *graph, const gp_graph *g, const uint64_t *dist) {
    (void)graph, (void)g, (void)dist;
    probe *pr = ctx;
    gp_job_status st;
    gp_err err;
    if (gp_jobs_get(pr->jobs, pr->id, &st, NULL, &err) == GP_OK) {
        pr->state = st.state;
        pr->progress = st.progress;
    }
    pr->calls++;
    return 0;
}

static void test_job_progress(void **state) {
    (void)state;
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    gp_graph *g = road(400);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    memset(&P, 0, sizeof P);
    gp_jobs *j = gp_jobs_new(e, 0, 0, 4, store_probe, &P, &err);
    assert_non_null(j);
    P.jobs = j;
    P.id = 1; /* a new runner's first job (set before the worker can reach the callback) */
    uint64_t id = 0;
    assert_int_equal(gp_jobs_submit(j, "road", g, &id, &err), GP_OK);
    assert_int_equal((int)id, 1);
    gp_job_status st;
    double last = 0;
    for (;;) {
        assert_int_equal(gp_jobs_get(j, id, &st, NULL, &err), GP_OK);
        if (st.state >= GP_JOB_DONE) break;
        assert_true(st.progress >= last); /* monotone */
        assert_true(st.progress < 1);     /* never 1 while running */
        last = st.progress;
    }
    assert_int_equal(st.state, GP_JOB_DONE);
    assert_true(st.progress == 1);
    assert_int_equal(P.calls, 1);
    assert_int_equal(P.state, GP_JOB_RUNNING);
    /* the build (distances and next hops) is done by then, the job is not */
    assert_true(P.progress >= 0.99);
    assert_true(P.progress < 1);
    gp_jobs_free(j);
    gp_graph_unref(g);
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fraction),
        cmocka_unit_test(test_cpu_units),
        cmocka_unit_test(test_job_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
