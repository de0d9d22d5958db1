/* test_deadline.c - the per-request compute deadline (config request_timeout_ms): the thread-local
 * deadline of graph/gp.c, every CPU backend operation giving up with GP_ETIMEOUT once it has passed
 * (Dijkstra, bidirectional, A* on both heaps, sssp, multi-threaded table, multi-threaded blocked
 * Floyd-Warshall), the same operations answering normally with no deadline or an ample one, and the
 * engine never re-running a timed-out call on the CPU.
 *
 * Work handed to a runner thread (graph/parallel.h gp_runner_run: new metrics and cost changes,
 * off the request threads' lower priority) carries the request's deadline and log request id
 * there, runs at the runners' priority, and runs on the caller's thread from a runner or when no
 * runner runs.
 *
 * The outcomes are certain, not timed: an "expired" deadline lies in the past before the call
 * starts, an "ample" one an hour ahead. Under ASan the expired runs also show that stopping early
 * leaks nothing (workspaces, threads, barriers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_lab.h"
#include "engine/engine.h"
#include "graph/parallel.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static gp_backend *cpu(int threads) {
    gp_err err;
    gp_backend *b = gp_cpu_backend_new(threads, &err);
    if (!b) fail_msg("cpu backend: %s", err.msg);
    return b;
}

static void *read_deadline(void *arg) {
    double *out = arg;
    *out = gp_deadline_get();
    return NULL;
}

static void test_thread_local(void **state) {
    (void)state;
    assert_true(gp_deadline_get() == 0);
    assert_int_equal(gp_deadline_expired(), 0);
    double now = gp_now();
    gp_deadline_set(now + 3600);
    assert_true(gp_deadline_get() == now + 3600);
    assert_int_equal(gp_deadline_expired(), 0);
    /* another thread has its own (unset) deadline */
    double seen = -1;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_deadline, &seen), 0);
    pthread_join(th, NULL);
    assert_true(seen == 0);
    /* the message names the limit it was set with and the config key */
    gp_deadline_set(gp_now() + 2.0);
    gp_err err;
    gp_err_clear(&err);
    assert_int_equal(gp_deadline_error(&err), GP_ETIMEOUT);
    assert_int_equal(err.code, GP_ETIMEOUT);
    assert_non_null(strstr(err.msg, "time limit of 2000 ms"));
    assert_non_null(strstr(err.msg, "request_timeout_ms"));
    gp_deadline_set(now - 1);
    assert_int_equal(gp_deadline_expired(), 1);
    gp_deadline_set(0);
    assert_true(gp_deadline_get() == 0);
    assert_int_equal(gp_deadline_expired(), 0);
    /* negative means none too */
    gp_deadline_set(-5);
    assert_int_equal(gp_deadline_expired(), 0);
}

/* Runs every operation of b on g under the current deadline; expect is GP_ETIMEOUT or GP_OK. With
 * GP_OK the results are compared with ref_* (computed without a deadline) when those are given. */
static void run_all(gp_backend *b, const gp_graph *g, int expect, const uint64_t *ref_sssp,
                    const uint64_t *ref_table) {
    gp_err err;
    uint32_t n = g->n;
    uint64_t *dist = malloc((size_t)n * sizeof *dist);
    uint32_t *pred = malloc((size_t)n * sizeof *pred);
    assert_non_null(dist);
    assert_non_null(pred);
    gp_err_clear(&err);
    assert_int_equal(b->ops->sssp(b, g, 0, GP_INF, dist, pred, &err), expect);
    if (expect == GP_ETIMEOUT) {
        assert_int_equal(err.code, GP_ETIMEOUT);
        assert_non_null(strstr(err.msg, "time limit"));
    } else if (ref_sssp) {
        assert_memory_equal(dist, ref_sssp, (size_t)n * sizeof *dist);
    }
    for (int algo = GP_P2P_AUTO; algo <= GP_P2P_ASTAR; algo++) {
        gp_path p;
        gp_err_clear(&err);
        assert_int_equal(b->ops->p2p(b, g, 0, n - 1, algo, &p, &err), expect);
        if (expect == GP_ETIMEOUT) {
            assert_int_equal(err.code, GP_ETIMEOUT);
            assert_non_null(strstr(err.msg, "request_timeout_ms"));
        } else {
            if (ref_sssp) assert_true(p.dist == ref_sssp[n - 1]);
            gp_path_free(&p);
        }
    }
    /* a table big enough to run on every thread */
    enum { NS = 40, NT = 30 };
    uint32_t src[NS], dst[NT];
    for (uint32_t i = 0; i < NS; i++) src[i] = (i * 7919u) % n;
    for (uint32_t j = 0; j < NT; j++) dst[j] = (j * 104729u + 3) % n;
    uint64_t *tab = malloc(sizeof *tab * NS * NT);
    assert_non_null(tab);
    gp_err_clear(&err);
    assert_int_equal(b->ops->table(b, g, src, NS, dst, NT, tab, &err), expect);
    if (expect == GP_ETIMEOUT) {
        assert_int_equal(err.code, GP_ETIMEOUT);
        assert_non_null(strstr(err.msg, "request_timeout_ms"));
    } else if (ref_table) {
        assert_memory_equal(tab, ref_table, sizeof *tab * NS * NT);
    }
    free(tab);
    free(dist);
    free(pred);
}

static void apsp_once(gp_backend *b, const gp_graph *g, int expect, const uint64_t *ref) {
    gp_err err;
    size_t cells = (size_t)g->n * g->n;
    uint64_t *d = malloc(cells * sizeof *d);
    uint32_t *nx = malloc(cells * sizeof *nx);
    assert_non_null(d);
    assert_non_null(nx);
    for (int with_next = 0; with_next < 2; with_next++) {
        gp_err_clear(&err);
        assert_int_equal(b->ops->apsp(b, g, d, with_next ? nx : NULL, &err), expect);
        if (expect == GP_ETIMEOUT) {
            assert_int_equal(err.code, GP_ETIMEOUT);
            assert_non_null(strstr(err.msg, "request_timeout_ms"));
        } else if (ref) {
            assert_memory_equal(d, ref, cells * sizeof *d);
        }
    }
    free(d);
    free(nx);
}

/* Every CPU op: expired -> GP_ETIMEOUT; none or ample -> the same answers as without a deadline.
 * Both A* heaps are covered (the engine lab's astar_binary is read when a backend is created). */
static void test_cpu_ops(void **state) {
    (void)state;
    gp_err err;
    gp_graph *g = gp_generate_road(3000, 5, &err);
    assert_non_null(g);
    assert_non_null(g->lon);
    gp_graph *small = gp_generate_road(300, 6, &err); /* APSP: 5 tiles of 64, 4 threads */
    assert_non_null(small);
    for (int heap = 0; heap < 2; heap++) {
        gp_engine_lab lab;
        gp_engine_lab_defaults(&lab);
        lab.astar_binary = heap;
        gp_engine_lab_set(&lab);
        gp_backend *b = cpu(4);
        gp_engine_lab_set(NULL);
        assert_int_equal(b->ops->attach(b, g, &err), GP_OK);
        /* references, no deadline */
        gp_deadline_set(0);
        uint64_t *rs = malloc((size_t)g->n * sizeof *rs);
        uint64_t *rt = malloc(sizeof *rt * 40 * 30);
        uint64_t *ra = malloc(sizeof *ra * small->n * small->n);
        assert_non_null(rs);
        assert_non_null(rt);
        assert_non_null(ra);
        assert_int_equal(b->ops->sssp(b, g, 0, GP_INF, rs, NULL, &err), GP_OK);
        uint32_t src[40], dst[30];
        for (uint32_t i = 0; i < 40; i++) src[i] = (i * 7919u) % g->n;
        for (uint32_t j = 0; j < 30; j++) dst[j] = (j * 104729u + 3) % g->n;
        assert_int_equal(b->ops->table(b, g, src, 40, dst, 30, rt, &err), GP_OK);
        assert_int_equal(b->ops->apsp(b, small, ra, NULL, &err), GP_OK);
        run_all(b, g, GP_OK, rs, rt);
        apsp_once(b, small, GP_OK, ra);
        /* expired before the call: nothing runs to completion */
        gp_deadline_set(gp_now() - 1.0);
        run_all(b, g, GP_ETIMEOUT, NULL, NULL);
        apsp_once(b, small, GP_ETIMEOUT, NULL);
        /* the pooled workspaces came back clean: answers are right again afterwards */
        gp_deadline_set(gp_now() + 3600.0);
        run_all(b, g, GP_OK, rs, rt);
        apsp_once(b, small, GP_OK, ra);
        gp_deadline_set(0);
        run_all(b, g, GP_OK, rs, rt);
        free(rs);
        free(rt);
        free(ra);
        gp_backend_destroy(b);
    }
    gp_graph_unref(g);
    gp_graph_unref(small);
}

/* A primary backend that always times out: the engine must answer GP_ETIMEOUT without re-running
 * the call on the CPU (a timed-out query is not a reason to redo all its work). */
typedef struct fake {
    int calls;
} fake;
static int f_sssp(gp_backend *b, const gp_graph *g, uint32_t s, uint64_t md, uint64_t *d,
                  uint32_t *p, gp_err *err) {
    (void)g, (void)s, (void)md, (void)d, (void)p;
    ((fake *)b->impl)->calls++;
    return gp_deadline_error(err);
}
static int f_p2p(gp_backend *b, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
                 gp_err *err) {
    (void)g, (void)s, (void)t, (void)algo;
    path->nodes = NULL;
    path->len = 0;
    ((fake *)b->impl)->calls++;
    return gp_deadline_error(err);
}
static int f_table(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                   const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    (void)g, (void)src, (void)ns, (void)dst, (void)nt, (void)out;
    ((fake *)b->impl)->calls++;
    return gp_deadline_error(err);
}
static int f_apsp(gp_backend *b, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err) {
    (void)g, (void)dist, (void)next;
    ((fake *)b->impl)->calls++;
    return gp_deadline_error(err);
}
static void f_info(gp_backend *b, gp_backend_info *out) {
    (void)b;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "fake");
    out->healthy = 1;
}
static void f_destroy(gp_backend *b) { (void)b; }
static const gp_backend_ops FAKE_OPS = {NULL, f_sssp, f_p2p, f_table, f_apsp, f_info, f_destroy};

static void test_engine_no_fallback(void **state) {
    (void)state;
    gp_err err;
    gp_graph *g = gp_generate_road(200, 7, &err);
    assert_non_null(g);
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    /* the CPU engine itself: a timeout passes straight through */
    gp_deadline_set(gp_now() - 1.0);
    uint32_t s = 0, t = 5;
    uint64_t tab = 0;
    assert_int_equal(gp_engine_table(e, g, &s, 1, &t, 1, &tab, &err), GP_ETIMEOUT);
    /* a primary that times out: no CPU rerun (the CPU would answer OK with no deadline) */
    gp_deadline_set(0);
    fake f = {0};
    gp_backend fb = {&FAKE_OPS, &f};
    e->primary = &fb;
    uint64_t *d = malloc((size_t)g->n * g->n * sizeof *d);
    assert_non_null(d);
    gp_path p;
    assert_int_equal(gp_engine_sssp(e, g, 0, GP_INF, d, NULL, &err), GP_ETIMEOUT);
    assert_int_equal(gp_engine_p2p(e, g, 0, 5, GP_P2P_AUTO, &p, &err), GP_ETIMEOUT);
    assert_int_equal(gp_engine_table(e, g, &s, 1, &t, 1, &tab, &err), GP_ETIMEOUT);
    assert_int_equal(gp_engine_apsp(e, g, d, NULL, &err), GP_ETIMEOUT);
    assert_int_equal(err.code, GP_ETIMEOUT);
    assert_int_equal(f.calls, 4);
    assert_int_equal(e->primary_failed, 0);
    free(d);
    e->primary = e->cpu; /* the fake is not heap-owned */
    gp_engine_free(e);
    gp_graph_unref(g);
}

typedef struct run_seen {
    pthread_t self;
    double deadline;
    int nice;
    int nested_inline; /* a gp_runner_run from the runner ran on the runner */
} run_seen;

static void seen_nested(void *arg) { *(pthread_t *)arg = pthread_self(); }

static void seen(void *arg) {
    run_seen *s = arg;
    s->self = pthread_self();
    s->deadline = gp_deadline_get();
    errno = 0;
    s->nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    pthread_t inner = 0;
    gp_runner_run(seen_nested, &inner);
    s->nested_inline = pthread_equal(inner, pthread_self());
}

static void *lowered_caller(void *arg) {
    run_seen *s = arg;
    /* as a request thread at query_nice (5 below the runners') */
    int nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)) + 5;
    assert_int_equal(setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice), 0);
    gp_deadline_set(123456.0);
    gp_runner_run(seen, s);
    gp_deadline_set(0);
    return NULL;
}

static void test_runner(void **state) {
    (void)state;
    run_seen s = {0};
    /* none started: on the caller's thread */
    gp_runner_run(seen, &s);
    assert_true(pthread_equal(s.self, pthread_self()));
    int base = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    assert_int_equal(gp_runner_start(2), 0);
    pthread_t t;
    memset(&s, 0, sizeof s);
    assert_int_equal(pthread_create(&t, NULL, lowered_caller, &s), 0);
    pthread_join(t, NULL);
    assert_false(pthread_equal(s.self, t));
    assert_false(pthread_equal(s.self, pthread_self()));
    assert_true(s.deadline == 123456.0); /* the caller's, carried */
    assert_int_equal(s.nice, base);      /* the runners', not the caller's */
    assert_true(s.nested_inline);
    /* the runner forgets the request once done: its next job without a deadline sees none */
    memset(&s, 0, sizeof s);
    gp_runner_run(seen, &s);
    assert_true(s.deadline == 0);
    assert_false(pthread_equal(s.self, pthread_self()));
    gp_runner_stop();
    memset(&s, 0, sizeof s);
    gp_runner_run(seen, &s); /* stopped: the caller's thread again */
    assert_true(pthread_equal(s.self, pthread_self()));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_local),
        cmocka_unit_test(test_runner),
        cmocka_unit_test(test_cpu_ops),
        cmocka_unit_test(test_engine_no_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
