/* parallel.c - dynamic parallel-for and fork-join (contract in parallel.h), on plain pthreads:
 * threads are started per call (tens of microseconds each), which the callers' work (an index
 * build, a table of routing rows) dwarfs; they keep the caller's priority (a speed file's
 * apply, ahead of the request threads at query_nice).
 */
#include "graph/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* A parallel loop's chunks, claimed one at a time by whichever of its threads runs: the caller
 * returns when every chunk is done, not when every thread it started has run, so a thread that a
 * loaded machine schedules late (a speed file's apply while every CPU routes) finds nothing left
 * and costs the caller nothing. The job is shared by the caller and the (detached) threads and
 * freed by the last of them. Chunk k is [n k / nchunks, n (k + 1) / nchunks) for the even split
 * (gp_parallel_for: each chunk one call, as before), [k chunk, (k + 1) chunk) for the dynamic
 * one. */
typedef struct pjob {
    void (*fn)(void *ctx, uint64_t begin, uint64_t end);
    void *ctx;
    uint64_t n, chunk, nchunks; /* chunk 0: the even split */
    atomic_uint_fast64_t next, done;
    atomic_int refs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
} pjob;

static uint64_t pjob_bound(const pjob *j, uint64_t k) {
    if (!j->chunk) return j->n * k / j->nchunks;
    return k * j->chunk < j->n ? k * j->chunk : j->n;
}

static void pjob_work(pjob *j) {
    for (;;) {
        uint64_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->nchunks) return;
        j->fn(j->ctx, pjob_bound(j, k), pjob_bound(j, k + 1));
        if (atomic_fetch_add(&j->done, 1) + 1 == j->nchunks) {
            pthread_mutex_lock(&j->mu);
            j->finished = 1;
            pthread_cond_broadcast(&j->cv);
            pthread_mutex_unlock(&j->mu);
        }
    }
}

static void pjob_unref(pjob *j) {
    if (!j) return;
    if (atomic_fetch_sub(&j->refs, 1) != 1) return;
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

static void *pjob_main(void *arg) {
    pjob_work(arg);
    pjob_unref(arg);
    return NULL;
}

/* Runs the chunks on nthreads threads, the caller's among them; on the caller's alone when the
 * job cannot be allocated or no thread starts. */
static void pjob_run(void (*fn)(void *, uint64_t, uint64_t), void *ctx, uint64_t n, uint64_t chunk,
                     uint64_t nchunks, int nthreads) {
    pjob *j = malloc(sizeof *j);
    if (!j) {
        pjob tmp = {.fn = fn, .ctx = ctx, .n = n, .chunk = chunk, .nchunks = nchunks};
        for (uint64_t k = 0; k < nchunks; k++)
            fn(ctx, pjob_bound(&tmp, k), pjob_bound(&tmp, k + 1));
        return;
    }
    *j = (pjob){.fn = fn, .ctx = ctx, .n = n, .chunk = chunk, .nchunks = nchunks};
    atomic_init(&j->next, 0);
    atomic_init(&j->done, 0);
    atomic_init(&j->refs, 1);
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    for (int t = 1; t < nthreads && atomic_load(&j->next) < nchunks; t++) {
        atomic_fetch_add(&j->refs, 1);
        if (gp_thread_detached(pjob_main, j) != 0) {
            atomic_fetch_sub(&j->refs, 1); /* its chunks go to the others */
            break;
        }
    }
    pjob_work(j);
    pthread_mutex_lock(&j->mu);
    while (!j->finished) pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
    pjob_unref(j);
}

void gp_parallel_for(uint64_t n, int nthreads, void (*fn)(void *ctx, uint64_t begin, uint64_t end),
                     void *ctx) {
    if (nthreads <= 0) nthreads = gp_cpu_count();
    if (nthreads > 16) nthreads = 16;
    if ((uint64_t)nthreads > n / 65536) nthreads = (int)(n / 65536);
    if (nthreads <= 1) {
        if (n) fn(ctx, 0, n);
        return;
    }
    pjob_run(fn, ctx, n, 0, (uint64_t)nthreads, nthreads);
}

void gp_parallel_for_dynamic(uint64_t n, int nthreads, uint64_t max_chunk,
                             void (*fn)(void *ctx, uint64_t begin, uint64_t end), void *ctx) {
    if (!n) return;
    if (nthreads <= 0) nthreads = gp_cpu_count();
    if (nthreads > GP_PARALLEL_MAX_THREADS) nthreads = GP_PARALLEL_MAX_THREADS;
    if ((uint64_t)nthreads > n) nthreads = (int)n;
    uint64_t chunk = n / ((uint64_t)nthreads * 8) + 1;
    if (max_chunk && chunk > max_chunk) chunk = max_chunk;
    if (nthreads <= 1) {
        for (uint64_t b = 0; b < n; b += chunk) fn(ctx, b, b + chunk < n ? b + chunk : n);
        return;
    }
    pjob_run(fn, ctx, n, chunk, (n + chunk - 1) / chunk, nthreads);
}

typedef struct two_job {
    void (*fn)(void *task);
    void *task;
} two_job;

static void *two_main(void *arg) {
    two_job *j = arg;
    j->fn(j->task);
    return NULL;
}

void gp_parallel_two(void (*fn)(void *task), void *a, void *b) {
    two_job ja = {fn, a};
    pthread_t t;
    if (pthread_create(&t, NULL, two_main, &ja) != 0) {
        fn(a);
        fn(b);
        return;
    }
    fn(b);
    pthread_join(t, NULL);
}

int gp_thread_detached(void *(*fn)(void *), void *arg) {
    pthread_t th;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) return -1;
    int rc = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
                     pthread_create(&th, &at, fn, arg) == 0
                 ? 0
                 : -1;
    pthread_attr_destroy(&at);
    return rc;
}

typedef struct run_job {
    void (*fn)(void *);
    void *arg;
    gp_thread_ctx ctx; /* the caller's deadline and request id, the runner's while it runs */
    int done;
    struct run_job *next;
} run_job;

enum { RUNNERS_MAX = 8 };

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv, done_cv;
    run_job *head, *tail;
    pthread_t th[RUNNERS_MAX];
    int n, stop;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .cv = PTHREAD_COND_INITIALIZER,
       .done_cv = PTHREAD_COND_INITIALIZER};

static _Thread_local int is_runner;

static void *runner_main(void *arg) {
    (void)arg;
    const gp_thread_ctx none = {0};
    is_runner = 1;
    pthread_mutex_lock(&R.mu);
    for (;;) {
        run_job *j = R.head;
        if (!j) {
            if (R.stop) break;
            pthread_cond_wait(&R.cv, &R.mu);
            continue;
        }
        R.head = j->next;
        if (!R.head) R.tail = NULL;
        pthread_mutex_unlock(&R.mu);
        gp_thread_ctx_restore(&j->ctx);
        j->fn(j->arg);
        gp_thread_ctx_restore(&none);
        pthread_mutex_lock(&R.mu);
        j->done = 1;
        pthread_cond_broadcast(&R.done_cv);
    }
    pthread_mutex_unlock(&R.mu);
    return NULL;
}

int gp_runner_start(int n) {
    if (n > RUNNERS_MAX) n = RUNNERS_MAX;
    pthread_mutex_lock(&R.mu);
    R.stop = 0;
    while (R.n < n && pthread_create(&R.th[R.n], NULL, runner_main, NULL) == 0) R.n++;
    int rc = R.n > 0 ? 0 : -1;
    pthread_mutex_unlock(&R.mu);
    return rc;
}

void gp_runner_run(void (*fn)(void *), void *arg) {
    pthread_mutex_lock(&R.mu);
    if (is_runner || !R.n || R.stop) {
        pthread_mutex_unlock(&R.mu);
        fn(arg);
        return;
    }
    run_job j = {.fn = fn, .arg = arg};
    gp_thread_ctx_save(&j.ctx);
    if (R.tail) R.tail->next = &j;
    else R.head = &j;
    R.tail = &j;
    pthread_cond_signal(&R.cv);
    while (!j.done) pthread_cond_wait(&R.done_cv, &R.mu);
    pthread_mutex_unlock(&R.mu);
}

void gp_runner_stop(void) {
    pthread_mutex_lock(&R.mu);
    R.stop = 1;
    int n = R.n;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
    for (int i = 0; i < n; i++) pthread_join(R.th[i], NULL);
    pthread_mutex_lock(&R.mu);
    R.n = 0;
    pthread_mutex_unlock(&R.mu);
}
