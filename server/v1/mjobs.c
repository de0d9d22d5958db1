/* mjobs.c - matrix jobs (contract in mjobs.h): tables of up to max_matrix_job_cells cells
 * (10^5 x 10^5 by default) computed by one background worker in blocks of matrix_job_block_cells,
 * written to disk as a .npy file (float32, the /v1 table's distances in the graph's weight unit,
 * NaN for no route) and served from there with Range requests; memory holds three blocks (two
 * computed while one is written).
 *
 * On disk, in matrix_job_dir: ID.json (the job's record, rewritten at each change of state),
 * ID.npy.part while it runs, renamed to ID.npy once every row is written. The directory is read
 * at the first matrix-job request after a start: a job a previous process left queued or running
 * is reported failed and its partial file deleted, so nothing half-written is ever served. Ended
 * jobs and their files are deleted matrix_job_keep_s after they ended. Job ids go on from the
 * largest on disk.
 */
#include "server/v1/mjobs.h"

#include "server/api/render.h"
#include "server/v1/params.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

enum { MJ_QUEUED, MJ_RUNNING, MJ_DONE, MJ_FAILED, MJ_CANCELLED, MJ_NSTATES };
static const char *const state_names[MJ_NSTATES] = {"queued", "running", "done", "failed",
                                                    "cancelled"};
#define MJ_MAX_QUEUED 16
#define RUN_CANCELLED 1000 /* run_job: stopped between blocks (not a GP_E* status) */

typedef struct mjob {
    uint64_t id;
    int state, cancel;
    char graph[65], version[17], unit[32];
    uint32_t ns, nt, rows_done;
    double submitted_at, started_at, finished_at; /* wall-clock seconds (kept across restarts) */
    char error[512];
    gp_graph *g; /* referenced, with the snapped places, until the job ran */
    gp_snap *ss, *ts;
    struct mjob *next; /* newest first */
} mjob;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int th_started, stop, loaded;
    mjob *head;
    uint64_t last_id;
} mj = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double wall_now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static const char *dir(void) { return gp_http_config()->matrix_job_dir; }

static void job_path(char *out, size_t size, uint64_t id, const char *ext) {
    snprintf(out, size, "%s/%" PRIu64 "%s", dir(), id, ext);
}

static void put_time(cJSON *o, const char *name, double t) {
    char ts[32];
    if (t <= 0) {
        cJSON_AddNullToObject(o, name);
        return;
    }
    gp_render_iso8601(t, ts, sizeof ts);
    cJSON_AddStringToObject(o, name, ts);
}

/* The job as JSON: its record on disk (times as numbers) or its answer (ISO-8601 times, links). */
static cJSON *job_json(const mjob *j, int answer) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)j->id);
    cJSON_AddStringToObject(o, "state", state_names[j->state]);
    cJSON_AddStringToObject(o, "graph", j->graph);
    cJSON_AddStringToObject(o, "version", j->version);
    cJSON_AddStringToObject(o, "weight_unit", j->unit);
    cJSON_AddNumberToObject(o, "sources", j->ns);
    cJSON_AddNumberToObject(o, "targets", j->nt);
    cJSON_AddNumberToObject(o, "rows_done", j->rows_done);
    if (!answer) {
        cJSON_AddNumberToObject(o, "submitted_at", j->submitted_at);
        cJSON_AddNumberToObject(o, "started_at", j->started_at);
        cJSON_AddNumberToObject(o, "finished_at", j->finished_at);
        cJSON_AddStringToObject(o, "error", j->error);
        return o;
    }
    double progress = j->state == MJ_DONE ? 1 : j->ns ? (double)j->rows_done / j->ns : 0;
    if (j->state != MJ_DONE && progress >= 1) progress = 0.999;
    cJSON_AddNumberToObject(o, "progress", progress);
    put_time(o, "submitted_at", j->submitted_at);
    put_time(o, "started_at", j->started_at);
    put_time(o, "finished_at", j->finished_at);
    long keep = gp_http_config()->matrix_job_keep_s;
    put_time(o, "expires_at", j->finished_at > 0 ? j->finished_at + keep : 0);
    if (j->error[0]) cJSON_AddStringToObject(o, "error", j->error);
    char link[96];
    snprintf(link, sizeof link, "/v1/matrix-jobs/%" PRIu64, j->id);
    cJSON_AddStringToObject(o, "status", link);
    if (j->state == MJ_DONE) {
        char res[112];
        snprintf(res, sizeof res, "%s/result", link);
        cJSON_AddStringToObject(o, "result", res);
        cJSON_AddNumberToObject(o, "bytes", 128 + 4.0 * j->ns * j->nt);
    }
    return o;
}

/* Writes j's record atomically (a temporary file renamed over it). Called with mj.mu held. */
static void record_write(const mjob *j) {
    char path[1200], tmp[1210];
    job_path(path, sizeof path, j->id, ".json");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cJSON *o = job_json(j, 0);
    char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    FILE *f = txt ? fopen(tmp, "w") : NULL;
    int ok = f && fputs(txt, f) >= 0;
    if (f && fclose(f)) ok = 0;
    if (ok && rename(tmp, path) == 0) {
        free(txt);
        return;
    }
    GP_LOG(GP_LOG_WARN, "event=matrix_job_record_failed job=%" PRIu64 " path=%s error=\"%s\"",
           j->id, path, strerror(errno));
    if (f) unlink(tmp);
    free(txt);
}

static void files_remove(uint64_t id) {
    char p[1200];
    const char *ext[] = {".json", ".npy", ".npy.part"};
    for (int i = 0; i < 3; i++) {
        job_path(p, sizeof p, id, ext[i]);
        unlink(p);
    }
}

static void job_release(mjob *j) {
    gp_graph_unref(j->g);
    free(j->ss);
    free(j->ts);
    j->g = NULL;
    j->ss = j->ts = NULL;
}

static void end_job(mjob *j, int state, const char *why) {
    j->state = state;
    j->finished_at = wall_now();
    if (why) snprintf(j->error, sizeof j->error, "%s", why);
    record_write(j);
}

static const char *str_of(const cJSON *o, const char *name) {
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
    return v ? v : "";
}

/* Reads the records a previous process left (once, with mj.mu held); GP_OK, or err filled when
 * the directory cannot be made or read. */
static int load_dir(gp_err *err) {
    if (mj.loaded) return GP_OK;
    if (!dir()[0])
        return gp_err_set(err, GP_EUNSUPPORTED, "matrix jobs are off (matrix_job_dir is empty)");
    if (mkdir(dir(), 0755) && errno != EEXIST)
        return gp_err_set(err, GP_EIO, "matrix_job_dir '%s': %s", dir(), strerror(errno));
    DIR *d = opendir(dir());
    if (!d) return gp_err_set(err, GP_EIO, "matrix_job_dir '%s': %s", dir(), strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        unsigned long long id = strtoull(e->d_name, &end, 10);
        if (!id || strcmp(end, ".json")) continue;
        char path[1200];
        job_path(path, sizeof path, id, ".json");
        FILE *f = fopen(path, "r");
        char buf[4096];
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[n] = 0;
        cJSON *o = cJSON_Parse(buf);
        mjob *j = o ? calloc(1, sizeof *j) : NULL;
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "state");
        if (!j || !cJSON_IsString(st)) {
            GP_LOG(GP_LOG_WARN, "event=matrix_job_record_unreadable path=%s", path);
            cJSON_Delete(o);
            free(j);
            continue;
        }
        j->id = id;
        for (int s = 0; s < MJ_NSTATES; s++)
            if (!strcmp(st->valuestring, state_names[s])) j->state = s;
#define STR(f) snprintf(j->f, sizeof j->f, "%s", str_of(o, #f))
#define NUM(f) j->f = cJSON_GetNumberValue(cJSON_GetObjectItem(o, #f))
        STR(graph);
        STR(version);
        STR(error);
        NUM(submitted_at);
        NUM(started_at);
        NUM(finished_at);
        j->ns = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "sources"));
        j->nt = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "targets"));
        j->rows_done = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "rows_done"));
        snprintf(j->unit, sizeof j->unit, "%s", str_of(o, "weight_unit"));
#undef STR
#undef NUM
        cJSON_Delete(o);
        if (isnan(j->finished_at)) j->finished_at = 0;
        char part[1200];
        job_path(part, sizeof part, id, ".npy.part");
        unlink(part); /* never served */
        if (j->state == MJ_QUEUED || j->state == MJ_RUNNING)
            end_job(j, MJ_FAILED, "the server stopped before the job ended; submit it again");
        job_path(path, sizeof path, id, ".npy");
        if (j->state == MJ_DONE && access(path, R_OK)) end_job(j, MJ_FAILED, "result file lost");
        j->next = mj.head;
        mj.head = j;
        if (id > mj.last_id) mj.last_id = id;
    }
    closedir(d);
    mj.loaded = 1;
    return GP_OK;
}

/* Forgets ended jobs past matrix_job_keep_s, files included (mj.mu held). */
static void expire(void) {
    double now = wall_now(), keep = (double)gp_http_config()->matrix_job_keep_s;
    for (mjob **p = &mj.head; *p;) {
        mjob *j = *p;
        if (j->state >= MJ_DONE && j->finished_at > 0 && now > j->finished_at + keep) {
            files_remove(j->id);
            *p = j->next;
            job_release(j);
            free(j);
        } else {
            p = &j->next;
        }
    }
}

/* ---- the worker ---- */
typedef struct job_fill {
    mjob *j;
    gp_table_plan *plan; /* the targets resolved once for the whole job */
} job_fill;

/* A block of j's rows (gp_http_rows_fn: on the ring's threads, two at once). */
static int job_rows(void *ctx, int worker, uint32_t row0, uint32_t k, float *out, gp_err *err) {
    (void)worker;
    job_fill *jf = ctx;
    return gp_engine_table_plan_rows(jf->plan, jf->j->ss + row0, k, NULL, out, err);
}

/* Computes j's rows into its .part file and renames it; GP_OK, RUN_CANCELLED, or an error. The
 * blocks are computed on the ring of gp_http_npy (server/http/npy.c: two ahead of the one being
 * written, so one block's searches overlap another's combine and the disk), written in order. */
static int run_job(mjob *j, gp_err *err) {
    char part[1200], path[1200];
    job_path(part, sizeof part, j->id, ".npy.part");
    job_path(path, sizeof path, j->id, ".npy");
    /* matrix_job_block_cells per GPU: a block's rows are split over them (cuda_devices) */
    long target = gp_http_config()->matrix_job_block_cells * gp_engine_devices(gp_http_engine());
    uint64_t block = (uint64_t)target / (j->nt ? j->nt : 1);
    if (block > j->ns) block = j->ns; /* a small job: one block of its rows, not of the budget */
    if (block < 1) block = 1;
    gp_deadline_set(0); /* a job has no request deadline */
    job_fill jf = {j, gp_engine_table_plan_new(gp_http_engine(), j->g, j->ts, j->nt, err)};
    gp_npy_blocks *bl = NULL;
    FILE *f = NULL;
    char head[128];
    size_t hl = gp_npy_header(head, j->ns, j->nt);
    int rc = !jf.plan ? err->code : GP_OK;
    if (!rc && !(f = fopen(part, "wb")))
        rc = gp_err_set(err, GP_EIO, "%s: %s", part, strerror(errno));
    if (!rc && fwrite(head, 1, hl, f) != hl) rc = gp_err_set(err, GP_EIO, "%s: write failed", part);
    if (!rc && !(bl = gp_npy_blocks_start(j->ns, j->nt, (uint32_t)block, GP_HTTP_NPY_WORKERS, 0,
                                          job_rows, &jf, err)))
        rc = err->code;
    while (!rc) {
        const float *buf;
        size_t bytes;
        uint32_t r0, k;
        int st = gp_npy_blocks_next(bl, &buf, &bytes, &r0, &k);
        if (st == 0) break;
        if (st < 0) {
            *err = *gp_npy_blocks_error(bl, NULL, NULL);
            rc = err->code ? err->code : GP_EINVAL;
            break;
        }
        if (fwrite(buf, 1, bytes, f) != bytes)
            rc = gp_err_set(err, GP_EIO, "%s: write failed (disk full?)", part);
        pthread_mutex_lock(&mj.mu);
        if (!rc) j->rows_done = r0 + k;
        if (!rc && (j->cancel || mj.stop)) rc = RUN_CANCELLED;
        pthread_mutex_unlock(&mj.mu);
    }
    gp_npy_blocks_free(bl); /* the workers stop (each finishes its block) before the plan goes */
    if (f && fclose(f) && !rc) rc = gp_err_set(err, GP_EIO, "%s: %s", part, strerror(errno));
    if (!rc && rename(part, path)) rc = gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    if (rc) unlink(part);
    gp_engine_table_plan_free(jf.plan);
    return rc;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mj.mu);
    for (;;) {
        mjob *next = NULL;
        for (mjob *j = mj.head; j; j = j->next)
            if (j->state == MJ_QUEUED) next = j; /* the oldest */
        if (mj.stop) break;
        if (!next) {
            pthread_cond_wait(&mj.cv, &mj.mu);
            continue;
        }
        next->state = MJ_RUNNING;
        next->started_at = wall_now();
        record_write(next);
        pthread_mutex_unlock(&mj.mu);
        gp_err err = {0};
        double t0 = gp_now();
        int rc = run_job(next, &err);
        pthread_mutex_lock(&mj.mu);
        job_release(next);
        if (rc == RUN_CANCELLED && mj.stop && !next->cancel)
            end_job(next, MJ_FAILED, "the server stopped before the job ended; submit it again");
        else if (rc == RUN_CANCELLED) end_job(next, MJ_CANCELLED, NULL);
        else end_job(next, rc ? MJ_FAILED : MJ_DONE, rc ? err.msg : NULL);
        GP_LOG(rc ? GP_LOG_WARN : GP_LOG_INFO,
               "event=matrix_job job=%" PRIu64 " state=%s cells=%" PRIu64 " seconds=%.3f%s%s%s",
               next->id, state_names[next->state], (uint64_t)next->ns * next->nt, gp_now() - t0,
               rc ? " error=\"" : "", rc ? err.msg : "", rc ? "\"" : "");
    }
    pthread_mutex_unlock(&mj.mu);
    return NULL;
}

void gp_srv_mjobs_stop(void) {
    pthread_mutex_lock(&mj.mu);
    mj.stop = 1;
    pthread_cond_broadcast(&mj.cv);
    int started = mj.th_started;
    pthread_mutex_unlock(&mj.mu);
    if (started) pthread_join(mj.th, NULL);
    pthread_mutex_lock(&mj.mu);
    while (mj.head) {
        mjob *j = mj.head;
        mj.head = j->next;
        if (j->state == MJ_QUEUED)
            end_job(j, MJ_FAILED, "the server stopped before the job ended; submit it again");
        job_release(j);
        free(j);
    }
    mj.th_started = 0;
    pthread_mutex_unlock(&mj.mu);
}

/* ---- handlers ---- */
static const gp_param post_params[] = {
    {"sources", GP_PT_PLACES, GP_IN_BODY, 1, 1, 0, NULL},
    {"targets", GP_PT_PLACES, GP_IN_BODY, 0, 1, 0, NULL},
    {"radius", GP_PT_NUM, GP_IN_ANY, 0, 0, 1e7, NULL},
};
static const gp_endpoint post_ep = GP_ENDPOINT("matrix-jobs", post_params, GP_BODY_REQUIRED,
                                               "{\"sources\": [1, 2, 3], \"targets\": [4, 5]}");

/* Locks mj.mu, reads the directory once and expires old jobs; answers the error and returns 0
 * (unlocked) when matrix jobs cannot run. */
static int lock_loaded(gp_req *r) {
    gp_err err = {0};
    pthread_mutex_lock(&mj.mu);
    if (mj.stop) gp_err_set(&err, GP_EBUSY, "the service is stopping");
    else load_dir(&err);
    if (err.code) {
        pthread_mutex_unlock(&mj.mu);
        gp_http_error_err(r, -1, &err);
        return 0;
    }
    expire();
    return 1;
}

void gp_h_mjobs_post(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_snap *ss, *ts;
    uint32_t ns, nt;
    if (gp_req_table_places(r, &post_ep, gp_http_config()->max_matrix_job_cells,
                            "max_matrix_job_cells", NULL, &ss, &ns, &ts, &nt))
        return;
    mjob *j = ts ? calloc(1, sizeof *j) : NULL;
    if (!j) {
        if (ts) gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        free(ss);
        free(ts);
        return;
    }
    if (!lock_loaded(r)) {
        free(ss);
        free(ts);
        free(j);
        return;
    }
    int queued = 0;
    for (mjob *q = mj.head; q; q = q->next) queued += q->state <= MJ_RUNNING;
    if (queued >= MJ_MAX_QUEUED) {
        pthread_mutex_unlock(&mj.mu);
        gp_http_error(r, GP_HC_BUSY, "%d matrix jobs are queued or running; retry later", queued);
        free(ss);
        free(ts);
        free(j);
        return;
    }
    if (!mj.th_started && pthread_create(&mj.th, NULL, worker, NULL) == 0) mj.th_started = 1;
    j->id = ++mj.last_id;
    j->state = MJ_QUEUED;
    snprintf(j->graph, sizeof j->graph, "%s", gp_req_graph_name(r));
    snprintf(j->version, sizeof j->version, "%s", g->version);
    snprintf(j->unit, sizeof j->unit, "%s", g->unit_name);
    j->ns = ns;
    j->nt = nt;
    j->submitted_at = wall_now();
    j->g = gp_graph_ref(g);
    j->ss = ss;
    j->ts = ts;
    j->next = mj.head;
    mj.head = j;
    record_write(j);
    cJSON *o = job_json(j, 1);
    pthread_cond_signal(&mj.cv);
    int started = mj.th_started;
    pthread_mutex_unlock(&mj.mu);
    if (!started) {
        cJSON_Delete(o);
        gp_http_error(r, GP_HC_INTERNAL, "cannot start the matrix job worker");
        return;
    }
    char loc[64];
    snprintf(loc, sizeof loc, "/v1/matrix-jobs/%" PRIu64, j->id);
    gp_req_add_header(r, "Location", loc);
    gp_http_json(r, 202, o);
}

/* The job named by the {id} path segment with mj.mu held, or NULL with the error answered and
 * the lock released. */
static mjob *job_of(gp_req *r) {
    const char *ids = gp_req_param(r, "id");
    int64_t sid;
    if (!ids || gp_parse_i64(ids, &sid) || sid < 1 || ids[0] == '+') {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "matrix job id '%.64s' is not a job number (1, 2, ...)", ids ? ids : "");
        return NULL;
    }
    if (!lock_loaded(r)) return NULL;
    for (mjob *j = mj.head; j; j = j->next)
        if (j->id == (uint64_t)sid) return j;
    pthread_mutex_unlock(&mj.mu);
    gp_http_error(r, GP_HC_NOT_FOUND, "no matrix job %" PRId64 " (ended jobs are kept %ld s)", sid,
                  gp_http_config()->matrix_job_keep_s);
    return NULL;
}

void gp_h_mjob_get(gp_req *r) {
    mjob *j = job_of(r);
    if (!j) return;
    cJSON *o = job_json(j, 1);
    pthread_mutex_unlock(&mj.mu);
    gp_http_json(r, 200, o);
}

void gp_h_mjob_delete(gp_req *r) {
    mjob *j = job_of(r);
    if (!j) return;
    if (j->state == MJ_QUEUED) {
        job_release(j);
        end_job(j, MJ_CANCELLED, NULL);
    } else if (j->state == MJ_RUNNING) {
        j->cancel = 1; /* the worker stops before its next block */
    } else {
        files_remove(j->id);
        for (mjob **p = &mj.head; *p; p = &(*p)->next)
            if (*p == j) {
                *p = j->next;
                break;
            }
        cJSON *o = job_json(j, 1);
        cJSON_ReplaceItemInObject(o, "state", cJSON_CreateString("deleted"));
        free(j);
        pthread_mutex_unlock(&mj.mu);
        gp_http_json(r, 200, o);
        return;
    }
    cJSON *o = job_json(j, 1);
    if (j->cancel) cJSON_ReplaceItemInObject(o, "state", cJSON_CreateString("cancelling"));
    pthread_mutex_unlock(&mj.mu);
    gp_http_json(r, 200, o);
}

/* ---- the result file, with Range requests ---- */
typedef struct file_stream {
    int fd;
    uint64_t off, end; /* next byte, one past the last */
} file_stream;

static long file_fill(void *ctx, char *buf, size_t max) {
    file_stream *s = ctx;
    if (s->off >= s->end) return 0;
    size_t want = s->end - s->off < max ? (size_t)(s->end - s->off) : max;
    ssize_t k = pread(s->fd, buf, want, (off_t)s->off);
    if (k <= 0) return -1; /* the file shrank or went: cut the connection */
    s->off += (uint64_t)k;
    return (long)k;
}

static void file_done(void *ctx) {
    file_stream *s = ctx;
    close(s->fd);
    free(s);
}

/* Parses a single "bytes=a-b" / "bytes=a-" / "bytes=-n" range of a size-byte file: 1 with
 * [*a, *b] set, 0 when absent or not a single byte range (the whole file is sent), -1 when
 * unsatisfiable. */
static int parse_range(const char *h, uint64_t size, uint64_t *a, uint64_t *b) {
    if (!h || strncmp(h, "bytes=", 6) || strchr(h, ',')) return 0;
    const char *p = h + 6;
    char *end;
    if (*p == '-') {
        unsigned long long n = strtoull(p + 1, &end, 10);
        if (end == p + 1 || *end) return 0;
        if (!n || !size) return -1;
        *a = n >= size ? 0 : size - n;
        *b = size - 1;
        return 1;
    }
    unsigned long long x = strtoull(p, &end, 10);
    if (end == p || *end != '-') return 0;
    p = end + 1;
    unsigned long long y = size ? size - 1 : 0;
    if (*p) {
        y = strtoull(p, &end, 10);
        if (end == p || *end) return 0;
        if (y >= size) y = size - 1;
    }
    if (x >= size || y < x) return -1;
    *a = x;
    *b = y;
    return 1;
}

void gp_h_mjob_result(gp_req *r) {
    mjob *j = job_of(r);
    if (!j) return;
    int state = j->state;
    uint64_t id = j->id;
    pthread_mutex_unlock(&mj.mu);
    if (state != MJ_DONE) {
        gp_http_error(r, GP_HC_NOT_FOUND, "matrix job %" PRIu64 " has no result: it is %s", id,
                      state_names[state]);
        return;
    }
    char path[1200];
    job_path(path, sizeof path, id, ".npy");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    file_stream *s = fd >= 0 && fstat(fd, &st) == 0 ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        if (fd >= 0) close(fd);
        gp_http_error(r, GP_HC_INTERNAL, "matrix job %" PRIu64 ": %s", id, strerror(errno));
        return;
    }
    uint64_t size = (uint64_t)st.st_size, a = 0, b = size ? size - 1 : 0;
    int range = parse_range(gp_req_header(r, "Range"), size, &a, &b);
    char hdr[96];
    if (range < 0) {
        close(fd);
        free(s);
        snprintf(hdr, sizeof hdr, "bytes */%" PRIu64, size);
        gp_req_add_header(r, "Content-Range", hdr);
        gp_http_error(r, GP_HC_RANGE_NOT_SATISFIABLE,
                      "Range '%.64s' is outside the %" PRIu64 "-byte result",
                      gp_req_header(r, "Range"), size);
        return;
    }
    s->fd = fd;
    s->off = a;
    s->end = size ? b + 1 : 0;
    gp_req_add_header(r, "Accept-Ranges", "bytes");
    gp_req_add_header(r, "X-Data-Version", j->version);
    snprintf(hdr, sizeof hdr, "attachment; filename=\"matrix-%" PRIu64 ".npy\"", id);
    gp_req_add_header(r, "Content-Disposition", hdr);
    if (range) {
        snprintf(hdr, sizeof hdr, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, a, b, size);
        gp_req_add_header(r, "Content-Range", hdr);
    }
    gp_http_stream_sized(r, range ? 206 : 200, "application/x-npy", s->end - s->off, file_fill,
                         file_done, s);
}
