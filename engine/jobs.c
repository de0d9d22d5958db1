/* jobs.c - the recomputation job runner (contract in jobs.h): a FIFO of jobs, one worker thread,
 * a bounded list of finished jobs. All job records live in one array guarded by a mutex; the
 * worker computes outside the lock into one gp_progress (engine/progress.h) that gp_jobs_get
 * polls for the running job, so progress is the share of the work done and below 1 until the job
 * (the build and the store callback) has ended.
 */
#include "engine/jobs.h"

#include "engine/progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_QUEUED 64

typedef struct job {
    gp_job_status st;
    gp_graph *g; /* queued/running: referenced */
    gp_rt *rt;   /* done: referenced */
} job;

struct gp_jobs {
    gp_engine *e;
    uint32_t ecmp_max;
    uint64_t max_bytes;
    int keep;
    gp_jobs_store_fn store;
    void *store_ctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t worker;
    int started, stop;
    job *jobs; /* ascending ids */
    size_t njobs, cap;
    uint64_t next_id;
    uint64_t running; /* id of the job the worker runs, 0 when idle */
    gp_progress prog; /* the running job's progress (written by the worker outside the lock) */
};

const char *gp_job_state_name(int s) {
    switch (s) {
    case GP_JOB_QUEUED: return "queued";
    case GP_JOB_RUNNING: return "running";
    case GP_JOB_DONE: return "done";
    default: return "failed";
    }
}

static job *find(gp_jobs *j, uint64_t id) {
    for (size_t i = 0; i < j->njobs; i++)
        if (j->jobs[i].st.id == id) return &j->jobs[i];
    return NULL;
}

/* Forgets the oldest finished jobs beyond keep (lock held). */
static void trim(gp_jobs *j) {
    size_t finished = 0;
    for (size_t i = 0; i < j->njobs; i++) finished += j->jobs[i].st.state >= GP_JOB_DONE;
    for (size_t i = 0; i < j->njobs && finished > (size_t)j->keep;) {
        if (j->jobs[i].st.state < GP_JOB_DONE) {
            i++;
            continue;
        }
        gp_rt_free(j->jobs[i].rt);
        gp_graph_unref(j->jobs[i].g);
        memmove(&j->jobs[i], &j->jobs[i + 1], (j->njobs - i - 1) * sizeof *j->jobs);
        j->njobs--;
        finished--;
    }
}

static void *worker_main(void *arg) {
    gp_jobs *j = arg;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        job *next = NULL;
        while (!j->stop) {
            for (size_t i = 0; i < j->njobs && !next; i++)
                if (j->jobs[i].st.state == GP_JOB_QUEUED) next = &j->jobs[i];
            if (next) break;
            pthread_cond_wait(&j->cond, &j->lock);
        }
        if (j->stop) break;
        next->st.state = GP_JOB_RUNNING;
        next->st.started_at = gp_now();
        uint64_t id = next->st.id;
        gp_graph *g = next->g;
        char name[65];
        memcpy(name, next->st.graph, sizeof name);
        gp_progress_init(&j->prog, "routing-tables");
        j->running = id;
        pthread_mutex_unlock(&j->lock);

        gp_rt *rt = NULL;
        gp_err err;
        gp_err_clear(&err);
        gp_progress_set(&j->prog);
        int rc = gp_rt_build(j->e, g, j->ecmp_max, 0, j->max_bytes, &rt, &err);
        gp_progress_set(NULL);
        int stored = 0;
        if (rc == GP_OK && j->store) stored = j->store(j->store_ctx, name, g, rt->dist);

        pthread_mutex_lock(&j->lock);
        j->running = 0;
        job *jb = find(j, id); /* the array may have moved */
        if (jb) {
            jb->st.finished_at = gp_now();
            if (rc == GP_OK) {
                jb->st.state = GP_JOB_DONE;
                jb->st.progress = 1;
                jb->st.apsp_s = rt->apsp_s;
                jb->st.ecmp_s = rt->ecmp_s;
                memcpy(jb->st.backend, rt->backend, sizeof jb->st.backend);
                jb->st.stored = stored;
                jb->rt = rt;
                rt = NULL;
            } else {
                jb->st.state = GP_JOB_FAILED;
                jb->st.progress = gp_progress_fraction(&j->prog); /* how far it got */
                snprintf(jb->st.error, sizeof jb->st.error, "%s", err.msg);
            }
            gp_graph_unref(jb->g);
            jb->g = NULL;
            trim(j);
        }
        gp_rt_free(rt);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

gp_jobs *gp_jobs_new(gp_engine *e, uint32_t ecmp_max, uint64_t max_bytes, int keep,
                     gp_jobs_store_fn store, void *store_ctx, gp_err *err) {
    gp_jobs *j = calloc(1, sizeof *j);
    if (!j) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    j->e = e;
    j->ecmp_max = ecmp_max;
    j->max_bytes = max_bytes;
    j->keep = keep < 1 ? 1 : keep;
    j->store = store;
    j->store_ctx = store_ctx;
    j->next_id = 1;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->cond, NULL);
    if (pthread_create(&j->worker, NULL, worker_main, j) != 0) {
        gp_err_set(err, GP_ENOMEM, "cannot start the job worker thread");
        pthread_mutex_destroy(&j->lock);
        pthread_cond_destroy(&j->cond);
        free(j);
        return NULL;
    }
    j->started = 1;
    return j;
}

void gp_jobs_free(gp_jobs *j) {
    if (!j) return;
    pthread_mutex_lock(&j->lock);
    j->stop = 1;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->lock);
    if (j->started) pthread_join(j->worker, NULL);
    for (size_t i = 0; i < j->njobs; i++) {
        gp_rt_free(j->jobs[i].rt);
        gp_graph_unref(j->jobs[i].g);
    }
    free(j->jobs);
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->cond);
    free(j);
}

int gp_jobs_submit(gp_jobs *j, const char *graph, gp_graph *g, uint64_t *id, gp_err *err) {
    pthread_mutex_lock(&j->lock);
    size_t waiting = 0;
    for (size_t i = 0; i < j->njobs; i++) waiting += j->jobs[i].st.state < GP_JOB_DONE;
    if (waiting >= MAX_QUEUED) {
        pthread_mutex_unlock(&j->lock);
        return gp_err_set(err, GP_EBUSY, "%zu recomputation jobs are already queued or running",
                          waiting);
    }
    if (j->njobs == j->cap) {
        size_t c = j->cap ? j->cap * 2 : 16;
        job *x = realloc(j->jobs, c * sizeof *x);
        if (!x) {
            pthread_mutex_unlock(&j->lock);
            return gp_err_set(err, GP_ENOMEM, "out of memory");
        }
        j->jobs = x;
        j->cap = c;
    }
    job *jb = &j->jobs[j->njobs++];
    memset(jb, 0, sizeof *jb);
    jb->st.id = j->next_id++;
    jb->st.state = GP_JOB_QUEUED;
    jb->st.submitted_at = gp_now();
    snprintf(jb->st.graph, sizeof jb->st.graph, "%s", graph ? graph : "");
    memcpy(jb->st.version, g->version, sizeof jb->st.version);
    jb->st.routers = g->n;
    jb->g = gp_graph_ref(g);
    *id = jb->st.id;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    return GP_OK;
}

int gp_jobs_get(gp_jobs *j, uint64_t id, gp_job_status *st, gp_rt **result, gp_err *err) {
    if (result) *result = NULL;
    pthread_mutex_lock(&j->lock);
    job *jb = find(j, id);
    if (!jb) {
        pthread_mutex_unlock(&j->lock);
        return gp_err_set(err, GP_ENOTFOUND, "no job %llu (unknown, or finished long ago)",
                          (unsigned long long)id);
    }
    if (st) {
        *st = jb->st;
        if (jb->st.state == GP_JOB_RUNNING && j->running == id)
            st->progress = gp_progress_fraction(&j->prog);
    }
    if (result && jb->rt) *result = gp_rt_ref(jb->rt);
    pthread_mutex_unlock(&j->lock);
    return GP_OK;
}

gp_rt *gp_jobs_result_for(gp_jobs *j, uint64_t graph_hash) {
    gp_rt *r = NULL;
    pthread_mutex_lock(&j->lock);
    for (size_t i = j->njobs; i > 0 && !r; i--)
        if (j->jobs[i - 1].rt && j->jobs[i - 1].rt->g->hash == graph_hash)
            r = gp_rt_ref(j->jobs[i - 1].rt);
    pthread_mutex_unlock(&j->lock);
    return r;
}
