/* parallel.h - the two shapes of parallel work that gp_parallel_for (graph/gp.h: a loop over
 * [0, n) in equal contiguous chunks, at least 65536 items a thread) cannot take.
 *
 *  - gp_parallel_for_dynamic: uneven items (a router's row costs its degree) handed out a chunk
 *    at a time to a worker count the caller decides, however small n is;
 *  - gp_parallel_two: recursive fork-join, e.g. the two halves of a tree under construction.
 *
 * Both run part of the work on the caller's thread and fall back to running everything there
 * when threads cannot be started, so they never fail. Thread counts of 0 mean gp_cpu_count().
 * The loops return when their items are done, not when every thread they started has run (on a
 * loaded machine a new thread may wait milliseconds for a CPU; it then finds nothing left).
 */
#ifndef GP_PARALLEL_H
#define GP_PARALLEL_H

#include "graph/gp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads gp_parallel_for_dynamic starts (the caller's included). */
#define GP_PARALLEL_MAX_THREADS 64

/* Runs fn(ctx, begin, end) over [0, n) on nthreads threads (0 = online CPUs; capped at
 * GP_PARALLEL_MAX_THREADS and at n), the caller's thread among them: each takes the next chunk of
 * n / (8 * nthreads) + 1 items (at most max_chunk when max_chunk > 0) until none is left, so
 * threads that get cheap items take more of them. Returns when every item is done. */
void gp_parallel_for_dynamic(uint64_t n, int nthreads, uint64_t max_chunk,
                             void (*fn)(void *ctx, uint64_t begin, uint64_t end), void *ctx);

/* Runs fn(a) on a new thread and fn(b) on the caller's, and returns when both are done; when no
 * thread can be started, runs fn(a) then fn(b) on the caller's. */
void gp_parallel_two(void (*fn)(void *task), void *a, void *b);

/* Runs fn(arg) on a detached thread of its own (background work that nobody waits for): 0, or -1
 * when no thread could be started (fn is not run). */
int gp_thread_detached(void *(*fn)(void *), void *arg);

/* Work that every request waits for (a new per-request metric, a cost change), handed from
 * threads that run at a lower priority (the server's request threads at query_nice) to threads
 * that keep the priority of the one that started them:
 *  - gp_runner_start starts n of them (call it before any thread lowers its priority; threads
 *    inherit their creator's): 0, or -1 when none could be started;
 *  - gp_runner_run runs fn(arg) on one of them and returns when it is done; on the caller's
 *    thread when none runs, or when the caller is one of them;
 *  - gp_runner_stop lets the queued work finish and stops them. */
int gp_runner_start(int n);
void gp_runner_run(void (*fn)(void *), void *arg);
void gp_runner_stop(void);

#ifdef __cplusplus
}
#endif
#endif
