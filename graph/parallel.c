/* parallel.c - dynamic parallel-for and fork-join (contract in parallel.h), on plain pthreads:
 * threads are started per call (tens of microseconds each), which the callers' work (an index
 * build, a table of routing rows) dwarfs.
 */
#include "graph/parallel.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct dyn_job {
    void (*fn)(void *ctx, uint64_t begin, uint64_t end);
    void *ctx;
    uint64_t n, chunk;
    atomic_uint_fast64_t next;
} dyn_job;

static void *dyn_worker(void *arg) {
    dyn_job *j = arg;
    for (;;) {
        uint64_t b = atomic_fetch_add(&j->next, j->chunk);
        if (b >= j->n) break;
        j->fn(j->ctx, b, b + j->chunk < j->n ? b + j->chunk : j->n);
    }
    return NULL;
}

void gp_parallel_for_dynamic(uint64_t n, int nthreads, uint64_t max_chunk,
                             void (*fn)(void *ctx, uint64_t begin, uint64_t end), void *ctx) {
    if (nthreads <= 0) nthreads = gp_cpu_count();
    if (nthreads > GP_PARALLEL_MAX_THREADS) nthreads = GP_PARALLEL_MAX_THREADS;
    if ((uint64_t)nthreads > n) nthreads = n ? (int)n : 1;
    dyn_job j = {.fn = fn, .ctx = ctx, .n = n, .chunk = n / ((uint64_t)nthreads * 8) + 1};
    if (max_chunk && j.chunk > max_chunk) j.chunk = max_chunk;
    atomic_init(&j.next, 0);
    pthread_t tid[GP_PARALLEL_MAX_THREADS];
    int started[GP_PARALLEL_MAX_THREADS] = {0};
    /* a thread that cannot start leaves its chunks to the others */
    for (int t = 1; t < nthreads; t++)
        started[t] = pthread_create(&tid[t], NULL, dyn_worker, &j) == 0;
    dyn_worker(&j);
    for (int t = 1; t < nthreads; t++)
        if (started[t]) pthread_join(tid[t], NULL);
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
