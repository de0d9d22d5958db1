/* jobs.h - recomputation jobs: routing tables of a whole (large) network computed in the
 * background.
 *
 * gp_jobs_submit queues a job for a graph version and returns its id at once; one worker thread
 * runs jobs in submission order (each already uses the whole GPU or every CPU core), reporting
 * progress as the fraction of work done (engine/progress.h: distances are the first half, counted
 * per source or Floyd-Warshall tile row, next-hop extraction the second, per router), strictly
 * below 1 until the job has ended (stored included) and exactly 1 once it is done. A
 * finished job holds its gp_rt in memory (the last `keep` finished jobs are kept; older ones are
 * forgotten and their ids answer GP_ENOTFOUND) and hands the distance matrix to the optional store
 * callback (the service stores it in the SQLite matrix cache, keyed by the graph version, so the
 * routing-table endpoints and later jobs find it after a restart too).
 * Thread-safe; gp_jobs_free drops queued jobs and waits for the running one.
 */
#ifndef GP_JOBS_H
#define GP_JOBS_H

#include "engine/ecmp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_jobs gp_jobs;

enum gp_job_state { GP_JOB_QUEUED = 0, GP_JOB_RUNNING, GP_JOB_DONE, GP_JOB_FAILED };
const char *gp_job_state_name(int state); /* "queued", "running", "done", "failed" */

typedef struct gp_job_status {
    uint64_t id;
    int state;
    double progress;  /* share of the work done: < 1 until the job ends, 1 when done */
    char graph[65];   /* the served graph's name */
    char version[17]; /* the graph version it ran on */
    uint32_t routers;
    double submitted_at, started_at, finished_at; /* gp_now() seconds; 0 when not yet */
    double apsp_s, ecmp_s;
    char backend[16];
    int stored;      /* 1 when the store callback kept the result durably */
    char error[512]; /* failed jobs */
} gp_job_status;

/* Stores the distances of a finished job (g's n*n matrix); returns 1 when kept durably. Runs on the
 * worker thread. */
typedef int (*gp_jobs_store_fn)(void *ctx, const char *graph, const gp_graph *g,
                                const uint64_t *dist);

/* keep: finished jobs remembered (>= 1). store may be NULL (results stay in memory only). */
gp_jobs *gp_jobs_new(gp_engine *e, uint32_t ecmp_max, uint64_t max_bytes, int keep,
                     gp_jobs_store_fn store, void *store_ctx, gp_err *err);
void gp_jobs_free(gp_jobs *j); /* accepts NULL */

/* Queues a job for g (referenced until the job ends). GP_EBUSY when max_queued jobs wait. */
int gp_jobs_submit(gp_jobs *j, const char *graph, gp_graph *g, uint64_t *id, gp_err *err);
/* Status of job id; *result (may be NULL) gets a reference to the tables of a done job (release
 * with gp_rt_free), else NULL. GP_ENOTFOUND for unknown or forgotten ids. */
int gp_jobs_get(gp_jobs *j, uint64_t id, gp_job_status *st, gp_rt **result, gp_err *err);
/* The newest done job's tables for this graph version, referenced, or NULL. */
gp_rt *gp_jobs_result_for(gp_jobs *j, uint64_t graph_hash);

#ifdef __cplusplus
}
#endif
#endif
