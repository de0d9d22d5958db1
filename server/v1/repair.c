/* repair.c - POST /v1/graphs/{graph}/repair-paths: loop-free alternates (RFC 5286) and TI-LFA
 * repair segment lists (RFC 9855) for every router, per protected link and node and per
 * destination, with the coverage per router and for the network (engine/repair.h).
 *
 * The base all-pairs distances are the routing tables' (server/v1/netops.h gp_srv_netops_tables:
 * cached per graph version, GPU APSP when present); the post-convergence trees run on the CPU
 * threads. The answer is the document of server/api/repair_json.h (the CLI's `gpath repair` too):
 * coverage for every router, repair rows for the routers asked for ("routers"; all by default,
 * none with "summary": true), in JSON or CSV ("format"). Answers over repair_max_rows rows are
 * refused with 413 TooBig before any work; unknown routers are 400 UnknownNode naming the field.
 *
 * POST /v1/graphs/{graph}/repair-jobs takes the same body as a job (202, Location
 * /v1/repair-jobs/{id}: state, progress; .../result: the synchronous answer's bytes; DELETE
 * cancels), as failure-analysis and matrix jobs do. Both forms keep their answer in the SQLite
 * cache (storage/cache.h documents) under the graph's version and the normalized request (graph
 * name, routers kept, summary, node protection, paths, format): a repeat is read back (the
 * synchronous answer with X-Gpath-Cache: hit, a job done at once with "cached": true). Jobs run one
 * at a time on their own thread; the last RP_KEEP ended ones are kept.
 */
#include "server/v1/repair.h"

#include "engine/progress.h"
#include "engine/repair.h"
#include "server/api/params.h"
#include "server/api/repair_json.h"
#include "server/cache.h"
#include "server/v1/netops.h"
#include "server/v1/params.h"
#include "storage/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gp_param repair_params[] = {
    {"routers", GP_PT_JSON, GP_IN_BODY, 0, 0, 0, NULL},
    {"summary", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
    {"node_protection", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
    {"paths", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
    {"format", GP_PT_ENUM, GP_IN_ANY, 0, 0, 0, "json|csv"},
};
static const gp_endpoint repair_ep =
    GP_ENDPOINT("repair-paths", repair_params, GP_BODY_OPTIONAL,
                "{\"routers\": [r, ...], \"summary\": false, \"node_protection\": true, "
                "\"paths\": false, \"format\": \"json\"}");

static uint64_t max_rows_cfg(void) {
    const gp_config *c = gp_http_config();
    return c && c->repair_max_rows > 0 ? (uint64_t)c->repair_max_rows : 200000;
}

/* keep[] from the "routers" array (400 naming routers[i] on a bad entry); 0 when set. */
static int parse_routers(gp_req *r, const cJSON *a, uint8_t *keep) {
    if (!cJSON_IsArray(a)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "'routers' must be an array of router ids or names");
        return -1;
    }
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
        char what[48];
        snprintf(what, sizeof what, "routers[%d]", i++);
        gp_place p;
        gp_err e;
        if (gp_json_router(it, &p, what, &e)) {
            gp_http_error(r, e.code == GP_EPARSE ? GP_HC_INVALID_JSON : GP_HC_INVALID_QUERY, "%s",
                          e.msg);
            return -1;
        }
        uint32_t v = gp_req_router(r, &p, what);
        if (v == GP_NONE) return -1;
        keep[v] = 1;
    }
    return 0;
}

/* A parsed repair request. */
typedef struct rp_in {
    gp_repair_opts o;
    uint8_t *keep;
    int csv;
    char *req; /* the normalized request: the cache key */
} rp_in;

static void rp_in_free(rp_in *in) {
    if (!in) return;
    free(in->keep);
    free(in->req);
    memset(in, 0, sizeof *in);
}

/* Parses the body (answering 4xx / 5xx itself: -1) and builds the normalized request. */
/* The routers kept (n flags), as two independent hashes modulo 2^64 (FNV-1a and a
 * multiply-xorshift; tests/ubsan.ignorelist lists this function). */
static void keep_hash(const uint8_t *keep, uint32_t n, uint64_t h[2]) {
    uint64_t h1 = 1469598103934665603ULL, h2 = 0x726570616972ULL;
    for (uint32_t v = 0; v < n; v++) {
        h1 = (h1 ^ keep[v]) * 1099511628211ULL;
        h2 = (h2 + keep[v] + 1) * 0x9e3779b97f4a7c15ULL;
        h2 ^= h2 >> 29;
    }
    h[0] = h1, h[1] = h2;
}

static int rp_parse(gp_req *r, rp_in *in) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    memset(in, 0, sizeof *in);
    if (gp_params(r, &repair_ep, &args)) return -1;
    const gp_arg *ra = gp_args_get(&args, "routers"), *sa = gp_args_get(&args, "summary"),
                 *na = gp_args_get(&args, "node_protection"), *pa = gp_args_get(&args, "paths"),
                 *fa = gp_args_get(&args, "format");
    in->csv = fa->present && fa->e == 1;
    if (ra->present || (sa->present && sa->e)) {
        if (!(in->keep = calloc((size_t)g->n + 1, 1))) {
            gp_http_error(r, GP_HC_INTERNAL, "out of memory");
            return -1;
        }
        if (ra->present && parse_routers(r, ra->json, in->keep)) return -1;
        if (sa->present && sa->e) memset(in->keep, 0, (size_t)g->n + 1);
    }
    in->o = (gp_repair_opts){.node_protection = !na->present || na->e,
                             .keep_paths = pa->present && pa->e,
                             .keep = in->keep,
                             .max_entries = max_rows_cfg()};
    uint64_t h[2] = {0, 0};
    if (in->keep) keep_hash(in->keep, g->n, h);
    gp_sbuf b = {0};
    gp_sbuf_printf(&b, "repair/1 graph=%s version=%s node_protection=%d paths=%d format=%s ",
                   gp_req_graph_name(r), g->version, in->o.node_protection, in->o.keep_paths,
                   in->csv ? "csv" : "json");
    if (in->keep)
        gp_sbuf_printf(&b, "routers=%016llx%016llx", (unsigned long long)h[0],
                       (unsigned long long)h[1]);
    else gp_sbuf_printf(&b, "routers=all");
    gp_sbuf_add(&b, "", 1);
    if (b.oom) {
        gp_sbuf_free(&b);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return -1;
    }
    in->req = b.p;
    return 0;
}

/* The answer of in on t (rendered; *out malloc'd), or an error with its HTTP code in *hc. */
static int rp_run(const gp_rt *t, const char *graph, const rp_in *in, gp_sbuf *out, int *hc,
                  gp_err *err) {
    gp_repair *rep = NULL;
    *hc = GP_HC_INTERNAL;
    if (gp_repair_compute(t, &in->o, &rep, err) != GP_OK) {
        if (err->code == GP_ETOOBIG) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            *hc = GP_HC_TOO_BIG;
            gp_err_set(err, GP_ETOOBIG, "%.400s (repair_max_rows, or \"summary\": true)", msg);
        }
        return -1;
    }
    if (in->csv) gp_rj_csv(out, t, rep, in->o.node_protection, NULL, NULL);
    else gp_rj_json(out, graph, t, rep, in->o.node_protection, NULL, NULL);
    gp_repair_free(rep);
    if (out->oom) {
        gp_sbuf_free(out);
        return gp_err_set(err, GP_ENOMEM, "out of memory rendering the response");
    }
    return 0;
}

static const char *rp_type(int csv) { return csv ? "text/csv; charset=utf-8" : "application/json"; }

void gp_h_repair_paths(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    rp_in in;
    gp_rt *t = NULL;
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    char *doc = NULL;
    size_t len = 0;
    int hc;
    if (rp_parse(r, &in)) goto done;
    if (gp_srv_cache()) {
        int hit = gp_cache_get_doc(gp_srv_cache(), gp_srv_cache_version(g), "repair", in.req, &doc,
                                   &len) == GP_OK;
        gp_req_add_header(r, "X-Gpath-Cache", hit ? "hit" : "miss");
        if (hit) {
            gp_http_send(r, 200, rp_type(in.csv), doc, len); /* takes the buffer */
            goto done;
        }
    }
    if (!(t = gp_srv_netops_tables(r, g))) goto done;
    if (rp_run(t, gp_req_graph_name(r), &in, &s, &hc, &err)) {
        gp_http_error_err(r, hc, &err);
        goto done;
    }
    gp_cache_put_doc(gp_srv_cache(), gp_req_graph_name(r), gp_srv_cache_version(g), "repair",
                     in.req, s.p, s.len, &err); /* logged inside; the answer goes out anyway */
    gp_http_send(r, 200, rp_type(in.csv), s.p, s.len); /* takes the buffer */
    s.p = NULL;
done:
    gp_sbuf_free(&s);
    gp_rt_free(t);
    rp_in_free(&in);
}

/* ---- repair jobs ---- */

#define RP_KEEP 16

enum { RJ_QUEUED, RJ_RUNNING, RJ_DONE, RJ_FAILED, RJ_CANCELLED };
static const char *const rj_states[] = {"queued", "running", "done", "failed", "cancelled"};

typedef struct rp_job {
    uint64_t id;
    int state, cancel, cached;
    char graph[65], version[17];
    uint64_t cache_version;
    rp_in in;
    gp_rt *t; /* released when the job ends */
    gp_progress prog;
    char *out; /* the answer */
    size_t len;
    char error[600];
} rp_job;

static struct {
    pthread_mutex_t mu, run; /* run: one job at a time */
    pthread_cond_t idle;
    rp_job *jobs[RP_KEEP * 2];
    size_t njobs;
    uint64_t next_id;
    int active;
} rj = {.mu = PTHREAD_MUTEX_INITIALIZER,
        .run = PTHREAD_MUTEX_INITIALIZER,
        .idle = PTHREAD_COND_INITIALIZER,
        .next_id = 1};

static void rj_free(rp_job *j) {
    if (!j) return;
    gp_rt_free(j->t);
    rp_in_free(&j->in);
    free(j->out);
    free(j);
}

static void *rj_main(void *arg) {
    rp_job *j = arg;
    pthread_mutex_lock(&rj.run);
    pthread_mutex_lock(&rj.mu);
    int go = !j->cancel;
    j->state = go ? RJ_RUNNING : RJ_CANCELLED;
    pthread_mutex_unlock(&rj.mu);
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    int hc, rc = -1;
    if (go) {
        gp_progress_set(&j->prog);
        rc = rp_run(j->t, j->graph, &j->in, &s, &hc, &err);
        gp_progress_set(NULL);
        if (rc == 0)
            gp_cache_put_doc(gp_srv_cache(), j->graph, j->cache_version, "repair", j->in.req, s.p,
                             s.len, &err);
    }
    pthread_mutex_lock(&rj.mu);
    if (go && j->cancel) j->state = RJ_CANCELLED; /* the result is dropped */
    else if (go && rc == 0) {
        j->state = RJ_DONE;
        j->out = s.p, j->len = s.len, s.p = NULL;
        gp_progress_finish(&j->prog);
    } else if (go) {
        j->state = RJ_FAILED;
        snprintf(j->error, sizeof j->error, "%s", err.msg[0] ? err.msg : "failed");
    }
    gp_rt_free(j->t);
    j->t = NULL;
    rj.active--;
    pthread_cond_broadcast(&rj.idle);
    pthread_mutex_unlock(&rj.mu);
    pthread_mutex_unlock(&rj.run);
    gp_sbuf_free(&s);
    return NULL;
}

static cJSON *rj_json(rp_job *j) {
    char loc[64];
    snprintf(loc, sizeof loc, "/v1/repair-jobs/%llu", (unsigned long long)j->id);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "job", (double)j->id);
    cJSON_AddStringToObject(o, "status", loc);
    cJSON_AddStringToObject(o, "state", rj_states[j->state]);
    cJSON_AddNumberToObject(o, "progress",
                            j->state == RJ_DONE ? 1 : gp_progress_fraction(&j->prog));
    cJSON_AddStringToObject(o, "graph", j->graph);
    cJSON_AddStringToObject(o, "version", j->version);
    cJSON_AddBoolToObject(o, "cached", j->cached);
    cJSON_AddStringToObject(o, "format", j->in.csv ? "csv" : "json");
    if (j->state == RJ_DONE) {
        snprintf(loc, sizeof loc, "/v1/repair-jobs/%llu/result", (unsigned long long)j->id);
        cJSON_AddStringToObject(o, "result", loc);
    }
    if (j->state == RJ_FAILED) cJSON_AddStringToObject(o, "error", j->error);
    return o;
}

/* Makes room for one more job (rj.mu held); -1 when full of unfinished ones. */
static int rj_keep(void) {
    while (rj.njobs >= RP_KEEP) {
        size_t drop = rj.njobs;
        for (size_t i = 0; i < rj.njobs && drop == rj.njobs; i++)
            if (rj.jobs[i]->state >= RJ_DONE) drop = i;
        if (drop == rj.njobs) break;
        rj_free(rj.jobs[drop]);
        memmove(&rj.jobs[drop], &rj.jobs[drop + 1], (rj.njobs - drop - 1) * sizeof rj.jobs[0]);
        rj.njobs--;
    }
    return rj.njobs >= RP_KEEP * 2 ? -1 : 0;
}

void gp_h_repair_jobs_post(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    rp_job *j = calloc(1, sizeof *j);
    if (!j) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return;
    }
    if (rp_parse(r, &j->in)) {
        rj_free(j);
        return;
    }
    snprintf(j->graph, sizeof j->graph, "%s", gp_req_graph_name(r));
    memcpy(j->version, g->version, sizeof j->version);
    j->cache_version = gp_srv_cache_version(g);
    gp_progress_init(&j->prog, "repair");
    if (gp_cache_get_doc(gp_srv_cache(), j->cache_version, "repair", j->in.req, &j->out, &j->len) ==
        GP_OK) {
        j->state = RJ_DONE;
        j->cached = 1;
        gp_progress_finish(&j->prog);
    } else if (!(j->t = gp_srv_netops_tables(r, g))) {
        rj_free(j);
        return;
    }
    pthread_mutex_lock(&rj.mu);
    pthread_t th;
    if (rj_keep() || (!j->cached && pthread_create(&th, NULL, rj_main, j) != 0)) {
        pthread_mutex_unlock(&rj.mu);
        rj_free(j);
        gp_http_error(r, GP_HC_BUSY, "too many repair jobs queued: retry later");
        return;
    }
    if (!j->cached) {
        pthread_detach(th);
        rj.active++;
    }
    j->id = rj.next_id++;
    rj.jobs[rj.njobs++] = j;
    cJSON *o = rj_json(j);
    gp_req_add_header(r, "Location", cJSON_GetObjectItem(o, "status")->valuestring);
    pthread_mutex_unlock(&rj.mu);
    gp_http_json(r, j->cached ? 200 : 202, o);
}

/* The job named by the path's id (rj.mu held), or NULL having answered 400 / 404. */
static rp_job *rj_find(gp_req *r) {
    const char *ids = gp_req_param(r, "id");
    char *end;
    errno = 0;
    unsigned long long id = ids ? strtoull(ids, &end, 10) : 0;
    if (!ids || !*ids || *end || errno || !id || ids[0] == '+' || ids[0] == '-') {
        gp_http_error(r, GP_HC_INVALID_QUERY, "'%.64s' is not a repair job number", ids ? ids : "");
        return NULL;
    }
    for (size_t i = 0; i < rj.njobs; i++)
        if (rj.jobs[i]->id == id) return rj.jobs[i];
    gp_http_error(r, GP_HC_NOT_FOUND, "no repair job %llu", id);
    return NULL;
}

void gp_h_repair_job_get(gp_req *r) {
    pthread_mutex_lock(&rj.mu);
    rp_job *j = rj_find(r);
    cJSON *o = j ? rj_json(j) : NULL;
    pthread_mutex_unlock(&rj.mu);
    if (o) gp_http_json(r, 200, o);
}

void gp_h_repair_job_result(gp_req *r) {
    pthread_mutex_lock(&rj.mu);
    rp_job *j = rj_find(r);
    if (j && j->state != RJ_DONE)
        gp_http_error(r, GP_HC_NOT_FOUND, "repair job %llu has no result: state %s",
                      (unsigned long long)j->id, rj_states[j->state]);
    else if (j) gp_http_text(r, 200, rp_type(j->in.csv), j->out, j->len);
    pthread_mutex_unlock(&rj.mu);
}

void gp_h_repair_job_delete(gp_req *r) {
    pthread_mutex_lock(&rj.mu);
    rp_job *j = rj_find(r);
    cJSON *o = NULL;
    if (j && j->state < RJ_DONE) { /* queued: never runs; running: its result is dropped */
        j->cancel = 1;
        gp_progress_cancel(&j->prog); /* running: the engine stops before its next router */
        o = rj_json(j);
        cJSON_ReplaceItemInObject(o, "state", cJSON_CreateString("cancelling"));
    } else if (j) { /* ended: forgotten (a cached result stays in the SQLite cache) */
        o = rj_json(j);
        cJSON_ReplaceItemInObject(o, "state", cJSON_CreateString("deleted"));
        size_t i = 0;
        while (rj.jobs[i] != j) i++;
        memmove(&rj.jobs[i], &rj.jobs[i + 1], (rj.njobs - i - 1) * sizeof rj.jobs[0]);
        rj.njobs--;
        rj_free(j);
    }
    pthread_mutex_unlock(&rj.mu);
    if (o) gp_http_json(r, 200, o);
}

void gp_srv_repair_stop(void) {
    pthread_mutex_lock(&rj.mu);
    for (size_t i = 0; i < rj.njobs; i++) {
        rj.jobs[i]->cancel = 1;
        gp_progress_cancel(&rj.jobs[i]->prog);
    }
    while (rj.active) pthread_cond_wait(&rj.idle, &rj.mu);
    for (size_t i = 0; i < rj.njobs; i++) rj_free(rj.jobs[i]);
    rj.njobs = 0;
    pthread_mutex_unlock(&rj.mu);
}
