/* planning.c - network-planning endpoints (contract in planning.h, behaviour in
 * docs/operators.md): a demand matrix and link-capacity overrides per served graph name, ECMP
 * link loads (POST .../load) and failure-analysis jobs over every link, router, shared-risk group
 * or link pair (engine/planning.h), on the routing tables netops.c keeps per graph version.
 *
 * Demands and capacity overrides live in memory per graph name (a reload keeps them: they name
 * routers by external id); their content hash is the demand version that answers and jobs carry.
 * Every bad row is refused with 400 naming it, and nothing changes. Failure analyses run one at a
 * time on their own thread with progress (engine/progress.h); the last PL_KEEP finished ones are
 * kept, and a request for the same graph version, demand version and scenario list reuses a done
 * one.
 */
#include "server/v1/planning.h"

#include "engine/planning.h"
#include "engine/progress.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "server/api/netops_json.h"
#include "server/cache.h"
#include "server/v1/netops.h"
#include "storage/cache.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PL_GRAPHS 16
#define PL_KEEP 16

typedef struct cap_row {
    int64_t u, v;
    double c;
} cap_row;
typedef struct pl_graph {
    char name[65];
    gp_nj_demand *rows;
    size_t nrows;
    cap_row *caps;
    size_t ncaps;
    char dver[17]; /* demand version ("" when none) */
} pl_graph;

typedef struct pl_job {
    uint64_t id;
    int state; /* queued, running, done, failed (GP_JOB_* of engine/jobs.h's numbering), cancelled */
    char graph[65], version[17], dver[17];
    char *req;  /* the normalized request (request_text): the in-memory and SQLite cache key */
    int cached; /* the result came from the SQLite cache */
    gp_progress prog;
    double submitted, started, finished;
    cJSON *result;
    char *csv;
    char error[600];
    /* inputs, released when the job ends */
    gp_rt *t;
    gp_demands *d;
    double *cap;
    gp_fail *sc;
    uint32_t *pool;  /* failed links (directed) and routers of all scenarios */
    uint32_t *pairs; /* per scenario: failed undirected links as (u, v) internal pairs */
    uint32_t *pair_off;
    uint8_t *kind;
    size_t nscen;
    int strategy;
    uint32_t list_max; /* list_pairs: max_listed_pairs; 0 without */
} pl_job;

enum { K_LINK, K_ROUTER, K_SRLG, K_PAIR, K_LIST };
static const char *const kind_names[] = {"link", "router", "srlg", "link_pair", "scenario"};
static const char *const state_names[] = {"queued", "running", "done", "failed", "cancelled"};

static struct {
    pthread_mutex_t mu;
    pthread_mutex_t run; /* one analysis at a time */
    pthread_cond_t idle;
    pl_graph g[PL_GRAPHS];
    pl_job *jobs[PL_KEEP * 2];
    size_t njobs;
    uint64_t next_id;
    int active; /* threads started and not finished */
} pl = {.mu = PTHREAD_MUTEX_INITIALIZER,
        .run = PTHREAD_MUTEX_INITIALIZER,
        .idle = PTHREAD_COND_INITIALIZER,
        .next_id = 1};

static const gp_config *cfg(void) { return gp_http_config(); }

/* ---- demand state ---- */

/* ---- persistence: demands and capacity overrides of a graph in a file next to the SQLite
 * cache (cache_path + ".planning." + graph name; none when the cache is off) ---- */

static const char state_magic[8] = "GPPLAN1";

static int state_path(const char *name, char *out, size_t cap) {
    const char *c = cfg() ? cfg()->cache_path : "";
    if (!c[0] || strcmp(c, ":memory:") == 0) return -1;
    return snprintf(out, cap, "%s.planning.%s", c, name) < (int)cap ? 0 : -1;
}

/* Writes s's rows and overrides (a temporary file renamed over the old), or removes the file when
 * there are none. Best effort: a failure leaves the state in memory only. */
static void state_save(const pl_graph *s) {
    char path[1200], tmp[1210];
    if (state_path(s->name, path, sizeof path)) return;
    if (!s->nrows && !s->ncaps) {
        remove(path);
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    uint64_t nr = s->nrows, nc = s->ncaps;
    int ok = fwrite(state_magic, 8, 1, f) == 1 && fwrite(&nr, 8, 1, f) == 1 &&
             (!nr || fwrite(s->rows, sizeof *s->rows, nr, f) == nr) && fwrite(&nc, 8, 1, f) == 1 &&
             (!nc || fwrite(s->caps, sizeof *s->caps, nc, f) == nc);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path)) remove(tmp);
}

/* Reads name's saved state into s (empty on any problem: a damaged file is ignored). */
static void state_load(pl_graph *s) {
    char path[1200], magic[8];
    uint64_t nr = 0, nc = 0;
    if (state_path(s->name, path, sizeof path)) return;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    gp_nj_demand *rows = NULL;
    cap_row *caps = NULL;
    int ok = fread(magic, 8, 1, f) == 1 && memcmp(magic, state_magic, 8) == 0 &&
             fread(&nr, 8, 1, f) == 1 && nr < ((uint64_t)1 << 32) &&
             (rows = malloc((nr + 1) * sizeof *rows)) &&
             (!nr || fread(rows, sizeof *rows, nr, f) == nr) && fread(&nc, 8, 1, f) == 1 &&
             nc < ((uint64_t)1 << 32) && (caps = malloc((nc + 1) * sizeof *caps)) &&
             (!nc || fread(caps, sizeof *caps, nc, f) == nc);
    for (uint64_t i = 0; ok && i < nr; i++) ok = rows[i].v >= 0 && isfinite(rows[i].v);
    for (uint64_t i = 0; ok && i < nc; i++) ok = caps[i].c > 0 && isfinite(caps[i].c);
    fclose(f);
    if (!ok) {
        free(rows);
        free(caps);
        return;
    }
    s->rows = rows, s->nrows = nr, s->caps = caps, s->ncaps = nc;
}

static void version_only(pl_graph *s);

/* The state of graph name: in memory, else read from its file (a restart keeps it); create: a
 * free slot for a new one. */
static pl_graph *slot(const char *name, int create) {
    pl_graph *free_slot = NULL;
    for (int i = 0; i < PL_GRAPHS; i++) {
        if (pl.g[i].name[0] && strcmp(pl.g[i].name, name) == 0) return &pl.g[i];
        if (!pl.g[i].name[0] && !free_slot) free_slot = &pl.g[i];
    }
    if (!free_slot) return NULL;
    snprintf(free_slot->name, sizeof free_slot->name, "%s", name);
    state_load(free_slot);
    if (!create && !free_slot->nrows && !free_slot->ncaps) {
        free(free_slot->rows), free(free_slot->caps);
        memset(free_slot, 0, sizeof *free_slot);
        return NULL;
    }
    version_only(free_slot);
    return free_slot;
}

static uint64_t pl_hash(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* After a change: the new demand version, and the state saved for a restart. */
static void set_version(pl_graph *s) {
    version_only(s);
    state_save(s);
}

static void version_only(pl_graph *s) {
    if (!s->nrows && !s->ncaps) {
        s->dver[0] = 0;
        return;
    }
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < s->nrows; i++) {
        h = pl_hash(h, &s->rows[i].s, 8);
        h = pl_hash(h, &s->rows[i].d, 8);
        h = pl_hash(h, &s->rows[i].v, 8);
    }
    h = pl_hash(h, "caps", 4);
    for (size_t i = 0; i < s->ncaps; i++) {
        h = pl_hash(h, &s->caps[i].u, 8);
        h = pl_hash(h, &s->caps[i].v, 8);
        h = pl_hash(h, &s->caps[i].c, 8);
    }
    snprintf(s->dver, sizeof s->dver, "%016llx", (unsigned long long)h);
}

/* A JSON router reference (id number or name string) -> internal index; err names what. */
static uint32_t json_router(const gp_nj_names *nm, const cJSON *j, const char *what, char *err,
                            size_t cap) {
    uint32_t v = GP_NONE;
    if (cJSON_IsNumber(j)) {
        double x = j->valuedouble;
        if (x == floor(x) && fabs(x) < 9e15) v = gp_graph_index(nm->g, (int64_t)x);
        if (v == GP_NONE) snprintf(err, cap, "%s: unknown router %.17g", what, x);
    } else if (cJSON_IsString(j)) {
        v = gp_nj_names_find(nm, j->valuestring);
        if (v == GP_NONE) snprintf(err, cap, "%s: unknown router '%.100s'", what, j->valuestring);
    } else {
        snprintf(err, cap, "%s must be a router id or name", what);
    }
    return v;
}

static void add_router(cJSON *o, const char *key, const char *name_key, const gp_graph *g,
                       uint32_t v) {
    cJSON_AddNumberToObject(o, key, (double)g->ext[v]);
    const char *nm = gp_graph_name(g, v);
    if (nm) cJSON_AddStringToObject(o, name_key, nm);
    else cJSON_AddNullToObject(o, name_key);
}

/* ---- PUT / GET / DELETE demands ---- */

static int parse_json_demands(const gp_nj_names *nm, const cJSON *j, gp_nj_demand **out, size_t *n,
                              size_t max, char *err, size_t ecap) {
    const cJSON *arr = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "demands") : j;
    if (!cJSON_IsArray(arr)) {
        snprintf(err, ecap,
                 "body must be {\"demands\": [{\"source\": s, \"destination\": d, "
                 "\"volume\": v}, ...]} or CSV source,destination,volume");
        return -1;
    }
    size_t k = (size_t)cJSON_GetArraySize(arr), i = 0;
    if (k > max) {
        snprintf(err, ecap, "more than max_demands (%zu) rows", max);
        return -1;
    }
    gp_nj_demand *rows = malloc((k + 1) * sizeof *rows);
    if (!rows) return -1;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        char what[64];
        snprintf(what, sizeof what, "demands[%zu]", i);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "source"),
                    *d = cJSON_GetObjectItemCaseSensitive(it, "destination"),
                    *v = cJSON_GetObjectItemCaseSensitive(it, "volume");
        if (!cJSON_IsObject(it) || !s || !d || !v) {
            snprintf(err, ecap, "%s must be {\"source\": s, \"destination\": d, \"volume\": v}",
                     what);
            free(rows);
            return -1;
        }
        char w2[80];
        snprintf(w2, sizeof w2, "%s.source", what);
        uint32_t si = json_router(nm, s, w2, err, ecap);
        snprintf(w2, sizeof w2, "%s.destination", what);
        uint32_t di = si == GP_NONE ? GP_NONE : json_router(nm, d, w2, err, ecap);
        if (si == GP_NONE || di == GP_NONE) {
            free(rows);
            return -1;
        }
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
            snprintf(err, ecap, "%s.volume must be a number >= 0", what);
            free(rows);
            return -1;
        }
        rows[i++] = (gp_nj_demand){nm->g->ext[si], nm->g->ext[di], v->valuedouble};
    }
    *out = rows;
    *n = i;
    return 0;
}

static void answer_state(gp_req *r, int status, const pl_graph *s, const char *extra,
                         double extra_v) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(o, "version", gp_req_graph(r)->version);
    if (s && s->dver[0]) cJSON_AddStringToObject(o, "demand_version", s->dver);
    else cJSON_AddNullToObject(o, "demand_version");
    double tot = 0;
    for (size_t i = 0; s && i < s->nrows; i++) tot += s->rows[i].v;
    cJSON_AddNumberToObject(o, "demands", s ? (double)s->nrows : 0);
    cJSON_AddNumberToObject(o, "total_volume", tot);
    cJSON_AddNumberToObject(o, "capacity_overrides", s ? (double)s->ncaps : 0);
    if (extra) cJSON_AddNumberToObject(o, extra, extra_v);
    gp_http_json(r, status, o);
}

void gp_h_demands_put(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    size_t len = 0;
    const char *body = gp_req_body(r, &len);
    const char *ct = gp_req_header(r, "Content-Type");
    size_t max = cfg() && cfg()->max_demands > 0 ? (size_t)cfg()->max_demands : 4000000;
    gp_nj_names nm;
    if (gp_nj_names_init(&nm, g)) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return;
    }
    char err[256] = "";
    gp_nj_demand *rows = NULL;
    size_t n = 0;
    int rc;
    while (len && (*body == ' ' || *body == '\n' || *body == '\r' || *body == '\t')) body++, len--;
    if (!len) {
        gp_nj_names_free(&nm);
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "the body must be {\"demands\": [...]} or CSV source,destination,volume "
                      "(DELETE removes the demands)");
        return;
    }
    if ((ct && strstr(ct, "csv")) || (body[0] != '{' && body[0] != '[')) {
        rc = gp_nj_demands_csv(&nm, body, len, &rows, &n, max, err, sizeof err);
    } else {
        cJSON *j = cJSON_ParseWithLength(body, len);
        if (!j) {
            gp_http_error(r, GP_HC_INVALID_JSON, "the body is neither JSON nor CSV");
            gp_nj_names_free(&nm);
            return;
        }
        rc = parse_json_demands(&nm, j, &rows, &n, max, err, sizeof err);
        cJSON_Delete(j);
    }
    gp_nj_names_free(&nm);
    if (rc) {
        gp_http_error(r, strstr(err, "max_demands") ? GP_HC_TOO_BIG : GP_HC_INVALID_QUERY,
                      "%s (nothing changed)", err[0] ? err : "out of memory");
        return;
    }
    pthread_mutex_lock(&pl.mu);
    pl_graph *s = slot(gp_req_graph_name(r), 1);
    if (!s) {
        pthread_mutex_unlock(&pl.mu);
        free(rows);
        gp_http_error(r, GP_HC_TOO_BIG, "demand matrices are kept for %d graphs at most",
                      PL_GRAPHS);
        return;
    }
    free(s->rows);
    s->rows = rows;
    s->nrows = n;
    set_version(s);
    answer_state(r, 200, s, NULL, 0);
    pthread_mutex_unlock(&pl.mu);
}

void gp_h_demands_get(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    const char *fmt = gp_req_query(r, "format");
    int csv = fmt && strcmp(fmt, "csv") == 0;
    if (fmt && !csv && strcmp(fmt, "json") != 0) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "format must be json or csv, got '%.32s'", fmt);
        return;
    }
    pthread_mutex_lock(&pl.mu);
    pl_graph *s = slot(gp_req_graph_name(r), 0);
    if (csv) {
        gp_sbuf b = {0};
        gp_sbuf_printf(&b, "source,destination,volume\n");
        for (size_t i = 0; s && i < s->nrows; i++)
            gp_sbuf_printf(&b, "%lld,%lld,%.17g\n", (long long)s->rows[i].s,
                           (long long)s->rows[i].d, s->rows[i].v);
        pthread_mutex_unlock(&pl.mu);
        if (b.oom) {
            gp_sbuf_free(&b);
            gp_http_error(r, GP_HC_INTERNAL, "out of memory");
            return;
        }
        gp_http_send(r, 200, "text/csv", b.p, b.len);
        return;
    }
    cJSON *o = cJSON_CreateObject(), *a;
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    if (s && s->dver[0]) cJSON_AddStringToObject(o, "demand_version", s->dver);
    else cJSON_AddNullToObject(o, "demand_version");
    a = cJSON_AddArrayToObject(o, "demands");
    for (size_t i = 0; s && i < s->nrows; i++) {
        cJSON *x = cJSON_CreateObject();
        uint32_t u = gp_graph_index(g, s->rows[i].s), v = gp_graph_index(g, s->rows[i].d);
        cJSON_AddNumberToObject(x, "source", (double)s->rows[i].s);
        cJSON_AddNumberToObject(x, "destination", (double)s->rows[i].d);
        if (u != GP_NONE && gp_graph_name(g, u))
            cJSON_AddStringToObject(x, "source_name", gp_graph_name(g, u));
        if (v != GP_NONE && gp_graph_name(g, v))
            cJSON_AddStringToObject(x, "destination_name", gp_graph_name(g, v));
        cJSON_AddNumberToObject(x, "volume", s->rows[i].v);
        cJSON_AddItemToArray(a, x);
    }
    a = cJSON_AddArrayToObject(o, "capacities");
    for (size_t i = 0; s && i < s->ncaps; i++) {
        cJSON *x = cJSON_CreateObject(), *l = cJSON_AddArrayToObject(x, "link");
        cJSON_AddItemToArray(l, cJSON_CreateNumber((double)s->caps[i].u));
        cJSON_AddItemToArray(l, cJSON_CreateNumber((double)s->caps[i].v));
        cJSON_AddNumberToObject(x, "capacity", s->caps[i].c);
        cJSON_AddItemToArray(a, x);
    }
    pthread_mutex_unlock(&pl.mu);
    gp_http_json(r, 200, o);
}

void gp_h_demands_delete(gp_req *r) {
    pthread_mutex_lock(&pl.mu);
    pl_graph *s = slot(gp_req_graph_name(r), 0);
    size_t n = s ? s->nrows : 0;
    if (s) {
        free(s->rows);
        s->rows = NULL;
        s->nrows = 0;
        set_version(s);
    }
    answer_state(r, 200, s, "deleted", (double)n);
    pthread_mutex_unlock(&pl.mu);
}

void gp_h_capacities_patch(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    const cJSON *j = gp_req_json(r),
                *arr = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "links") : NULL;
    if (!cJSON_IsArray(arr)) {
        gp_http_error(r, GP_HC_INVALID_JSON,
                      "body must be {\"links\": [{\"link\": [u, v], \"capacity\": bit/s}, ...]}");
        return;
    }
    gp_nj_names nm;
    if (gp_nj_names_init(&nm, g)) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return;
    }
    size_t k = (size_t)cJSON_GetArraySize(arr), i = 0;
    cap_row *rows = malloc((k + 1) * sizeof *rows);
    char err[256] = "";
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        char what[64], w2[80];
        snprintf(what, sizeof what, "links[%zu]", i);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(it, "link"),
                    *c = cJSON_GetObjectItemCaseSensitive(it, "capacity");
        if (!rows || !cJSON_IsArray(l) || cJSON_GetArraySize(l) != 2) {
            snprintf(err, sizeof err, "%s.link must be [router, router]", what);
            break;
        }
        snprintf(w2, sizeof w2, "%s.link[0]", what);
        uint32_t u = json_router(&nm, l->child, w2, err, sizeof err);
        snprintf(w2, sizeof w2, "%s.link[1]", what);
        uint32_t v = u == GP_NONE ? GP_NONE : json_router(&nm, l->child->next, w2, err, sizeof err);
        if (u == GP_NONE || v == GP_NONE) break;
        if (gp_graph_find_arc(g, u, v) == GP_NONE && gp_graph_find_arc(g, v, u) == GP_NONE) {
            snprintf(err, sizeof err, "%s.link: routers %lld and %lld are not joined", what,
                     (long long)g->ext[u], (long long)g->ext[v]);
            break;
        }
        if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) || c->valuedouble <= 0) {
            snprintf(err, sizeof err, "%s.capacity must be a number > 0 (bit/s)", what);
            break;
        }
        rows[i++] = (cap_row){g->ext[u], g->ext[v], c->valuedouble};
    }
    gp_nj_names_free(&nm);
    if (err[0] || !rows) {
        free(rows);
        gp_http_error(r, GP_HC_INVALID_QUERY, "%s (nothing changed)",
                      err[0] ? err : "out of memory");
        return;
    }
    pthread_mutex_lock(&pl.mu);
    pl_graph *s = slot(gp_req_graph_name(r), 1);
    cap_row *all = s ? realloc(s->caps, (s->ncaps + i + 1) * sizeof *all) : NULL;
    if (!all) {
        pthread_mutex_unlock(&pl.mu);
        free(rows);
        gp_http_error(r, GP_HC_INTERNAL, "no room for capacities");
        return;
    }
    s->caps = all;
    for (size_t a = 0; a < i; a++) { /* replace an override of the same link, else append */
        size_t b = 0;
        while (b < s->ncaps && !((s->caps[b].u == rows[a].u && s->caps[b].v == rows[a].v) ||
                                 (s->caps[b].u == rows[a].v && s->caps[b].v == rows[a].u)))
            b++;
        s->caps[b] = rows[a];
        if (b == s->ncaps) s->ncaps++;
    }
    free(rows);
    set_version(s);
    answer_state(r, 200, s, NULL, 0);
    pthread_mutex_unlock(&pl.mu);
}

/* ---- inputs of a computation ---- */

typedef struct inputs {
    gp_rt *t;
    gp_demands *d;
    double *cap;
    gp_nj_demand *rows; /* the rows as stored (external ids) */
    size_t nrows;
    size_t missing; /* rows naming routers the graph version lacks (unrouted) */
    char dver[17];
} inputs;

static void inputs_free(inputs *in) {
    if (!in) return;
    gp_rt_free(in->t);
    gp_demands_free(in->d);
    free(in->cap);
    free(in->rows);
}

/* Tables, demands and capacities for the request's graph; answers the error and returns -1. */
static int inputs_get(gp_req *r, inputs *in) {
    memset(in, 0, sizeof *in);
    gp_graph *g = gp_req_graph(r);
    cap_row *caps = NULL;
    size_t ncaps = 0;
    pthread_mutex_lock(&pl.mu);
    pl_graph *s = slot(gp_req_graph_name(r), 0);
    if (s && s->nrows) {
        in->rows = malloc(s->nrows * sizeof *in->rows);
        caps = malloc((s->ncaps + 1) * sizeof *caps);
        if (in->rows && caps) {
            memcpy(in->rows, s->rows, s->nrows * sizeof *in->rows);
            if (s->ncaps) memcpy(caps, s->caps, s->ncaps * sizeof *caps);
            in->nrows = s->nrows;
            ncaps = s->ncaps;
            memcpy(in->dver, s->dver, sizeof in->dver);
        }
    }
    pthread_mutex_unlock(&pl.mu);
    if (!in->nrows) {
        free(caps);
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "graph '%s' has no demands: PUT /v1/graphs/%s/demands first",
                      gp_req_graph_name(r), gp_req_graph_name(r));
        return -1;
    }
    if (!(in->t = gp_srv_netops_tables(r, g))) {
        free(caps);
        inputs_free(in);
        return -1;
    }
    uint32_t L = gp_plan_links(in->t);
    uint32_t *src = malloc((in->nrows + 1) * sizeof *src), *dst = malloc((in->nrows + 1) * 4);
    double *vol = malloc((in->nrows + 1) * sizeof *vol);
    in->cap = malloc(((size_t)L + 1) * sizeof *in->cap);
    gp_err err;
    gp_err_clear(&err);
    int rc = -1;
    if (src && dst && vol && in->cap) {
        size_t k = 0;
        for (size_t i = 0; i < in->nrows; i++) {
            uint32_t u = gp_graph_index(g, in->rows[i].s), v = gp_graph_index(g, in->rows[i].d);
            if (u == GP_NONE || v == GP_NONE) {
                in->missing++;
                continue;
            }
            src[k] = u, dst[k] = v, vol[k++] = in->rows[i].v;
        }
        gp_plan_link_caps(in->t, in->cap);
        for (size_t i = 0; i < ncaps; i++) {
            uint32_t u = gp_graph_index(g, caps[i].u), v = gp_graph_index(g, caps[i].v);
            uint32_t a = gp_plan_link_find(in->t, u, v), b = gp_plan_link_find(in->t, v, u);
            if (a != GP_NONE) in->cap[a] = caps[i].c;
            if (b != GP_NONE) in->cap[b] = caps[i].c;
        }
        if (gp_demands_build(g->n, src, dst, vol, k, &in->d, &err) == GP_OK) rc = 0;
    } else {
        gp_err_set(&err, GP_ENOMEM, "out of memory");
    }
    free(src);
    free(dst);
    free(vol);
    free(caps);
    if (rc) {
        gp_http_error(r, GP_HC_INTERNAL, "%s", err.msg);
        inputs_free(in);
    }
    return rc;
}

/* {from, to, from_name, to_name, load, capacity, utilization} of link l. */
static cJSON *link_json(const gp_rt *t, uint32_t l, double load, const double *cap) {
    cJSON *x = cJSON_CreateObject();
    uint32_t u = gp_plan_link_tail(t, l), v = t->nb[l];
    cJSON_AddNumberToObject(x, "from", (double)t->g->ext[u]);
    cJSON_AddNumberToObject(x, "to", (double)t->g->ext[v]);
    const char *a = gp_graph_name(t->g, u), *b = gp_graph_name(t->g, v);
    if (a) cJSON_AddStringToObject(x, "from_name", a);
    else cJSON_AddNullToObject(x, "from_name");
    if (b) cJSON_AddStringToObject(x, "to_name", b);
    else cJSON_AddNullToObject(x, "to_name");
    cJSON_AddNumberToObject(x, "load", load);
    if (cap && cap[l] > 0) {
        cJSON_AddNumberToObject(x, "capacity", cap[l]);
        cJSON_AddNumberToObject(x, "utilization", load / cap[l]);
    } else {
        cJSON_AddNullToObject(x, "capacity");
        cJSON_AddNullToObject(x, "utilization");
    }
    return x;
}

static const double *sort_load, *sort_cap;
static int cmp_link(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double ux = sort_cap[x] > 0 ? sort_load[x] / sort_cap[x] : -1,
           uy = sort_cap[y] > 0 ? sort_load[y] / sort_cap[y] : -1;
    if (ux != uy) return ux < uy ? 1 : -1;
    if (sort_load[x] != sort_load[y]) return sort_load[x] < sort_load[y] ? 1 : -1;
    return (x > y) - (x < y);
}
static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;

void gp_h_load(gp_req *r) {
    inputs in;
    if (inputs_get(r, &in)) return;
    const gp_rt *t = in.t;
    uint32_t L = gp_plan_links(t);
    double *load = malloc(((size_t)L + 1) * sizeof *load), lost = 0;
    uint8_t *un = malloc(in.d->count + 1);
    uint32_t *order = malloc(((size_t)L + 1) * sizeof *order);
    gp_err err;
    double t0 = gp_now();
    if (!load || !un || !order || gp_plan_load(t, in.d, 0, load, un, &lost, &err) != GP_OK) {
        gp_http_error(r, GP_HC_INTERNAL, "link loads: out of memory");
        goto done;
    }
    double secs = gp_now() - t0;
    uint32_t k = 0;
    for (uint32_t l = 0; l < L; l++)
        if (load[l] > 0) order[k++] = l;
    pthread_mutex_lock(&sort_mu);
    sort_load = load, sort_cap = in.cap;
    qsort(order, k, sizeof *order, cmp_link);
    pthread_mutex_unlock(&sort_mu);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(o, "version", t->g->version);
    cJSON_AddStringToObject(o, "demand_version", in.dver);
    cJSON_AddNumberToObject(o, "demands", (double)in.nrows);
    cJSON_AddNumberToObject(o, "total_volume", in.d->total);
    cJSON_AddNumberToObject(o, "unrouted_volume", lost);
    cJSON_AddNumberToObject(o, "load_ms", secs * 1e3);
    cJSON *links = cJSON_AddArrayToObject(o, "links");
    for (uint32_t i = 0; i < k; i++)
        cJSON_AddItemToArray(links, link_json(t, order[i], load[order[i]], in.cap));
    cJSON *ua = cJSON_AddArrayToObject(o, "unrouted");
    for (uint32_t dst = 0; dst < t->n; dst++)
        for (uint32_t i = in.d->off[dst]; i < in.d->off[dst + 1]; i++) {
            if (!un[i]) continue;
            cJSON *x = cJSON_CreateObject();
            add_router(x, "source", "source_name", t->g, in.d->src[i]);
            add_router(x, "destination", "destination_name", t->g, dst);
            cJSON_AddNumberToObject(x, "volume", in.d->vol[i]);
            cJSON_AddItemToArray(ua, x);
        }
    if (in.missing) cJSON_AddNumberToObject(o, "rows_unknown_routers", (double)in.missing);
    gp_http_json(r, 200, o);
done:
    free(load);
    free(un);
    free(order);
    inputs_free(&in);
}

/* ---- failure analysis ---- */

static void job_inputs_free(pl_job *j) {
    if (!j) return;
    gp_rt_free(j->t);
    gp_demands_free(j->d);
    free(j->cap);
    free(j->sc);
    free(j->pool);
    free(j->pairs);
    free(j->pair_off);
    free(j->kind);
    j->t = NULL, j->d = NULL, j->cap = NULL, j->sc = NULL, j->pool = NULL, j->pairs = NULL;
    j->pair_off = NULL, j->kind = NULL;
}

static void job_free(pl_job *j) {
    if (!j) return;
    job_inputs_free(j);
    cJSON_Delete(j->result);
    free(j->csv);
    free(j->req);
    free(j);
}

static const gp_scenario_result *sort_res;
static int cmp_scen(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const gp_scenario_result *p = &sort_res[x], *q = &sort_res[y];
    if (p->worst_utilization != q->worst_utilization)
        return p->worst_utilization < q->worst_utilization ? 1 : -1;
    if (p->worst_load != q->worst_load) return p->worst_load < q->worst_load ? 1 : -1;
    if (p->unrouted_volume != q->unrouted_volume)
        return p->unrouted_volume < q->unrouted_volume ? 1 : -1;
    return (x > y) - (x < y);
}

static void csv_name(gp_sbuf *b, const gp_graph *g, uint32_t v) {
    const char *n = gp_graph_name(g, v);
    if (!n) {
        gp_sbuf_printf(b, "%lld", (long long)g->ext[v]);
        return;
    }
    gp_sbuf_add(b, "\"", 1);
    for (const char *p = n; *p; p++) gp_sbuf_add(b, *p == '"' ? "\"\"" : p, *p == '"' ? 2 : 1);
    gp_sbuf_add(b, "\"", 1);
}

/* list_pairs: the scenario's changed and disconnected pairs as [router, destination] by id and
 * by name, and whether max_listed_pairs cut them. */
static void pair_lists(cJSON *x, const gp_graph *g, const gp_scenario_result *r) {
    static const char *const keys[2][2] = {
        {"changed_pair_list", "changed_pair_list_names"},
        {"disconnected_pair_list", "disconnected_pair_list_names"}};
    for (int d = 0; d < 2; d++) {
        cJSON *ids = cJSON_AddArrayToObject(x, keys[d][0]),
              *names = cJSON_AddArrayToObject(x, keys[d][1]);
        for (uint32_t i = 0; i < r->npairs; i++) {
            if (d && !r->pairs[i].disconnected) continue;
            uint32_t v[2] = {r->pairs[i].router, r->pairs[i].dst};
            cJSON *e = cJSON_CreateArray(), *en = cJSON_CreateArray();
            for (int k = 0; k < 2; k++) {
                const char *nm = gp_graph_name(g, v[k]);
                cJSON_AddItemToArray(e, cJSON_CreateNumber((double)g->ext[v[k]]));
                cJSON_AddItemToArray(en, nm ? cJSON_CreateString(nm) : cJSON_CreateNull());
            }
            cJSON_AddItemToArray(ids, e);
            cJSON_AddItemToArray(names, en);
        }
    }
    cJSON_AddBoolToObject(x, "pairs_truncated", r->pairs_truncated);
}

static void build_result(pl_job *j, const gp_scenario_result *res, const gp_plan_stats *st) {
    const gp_rt *t = j->t;
    const gp_graph *g = t->g;
    uint32_t L = gp_plan_links(t);
    size_t *order = malloc((j->nscen + 1) * sizeof *order);
    uint32_t *bott = calloc((size_t)L + 1, sizeof *bott);
    if (!order || !bott) {
        free(order);
        free(bott);
        snprintf(j->error, sizeof j->error, "out of memory for the result");
        return;
    }
    for (size_t i = 0; i < j->nscen; i++) order[i] = i;
    pthread_mutex_lock(&sort_mu);
    sort_res = res;
    qsort(order, j->nscen, sizeof *order, cmp_scen);
    pthread_mutex_unlock(&sort_mu);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "graph", j->graph);
    cJSON_AddStringToObject(o, "version", j->version);
    cJSON_AddStringToObject(o, "demand_version", j->dver);
    cJSON_AddStringToObject(o, "strategy", gp_plan_strategy_name(st->strategy));
    cJSON_AddFalseToObject(o, "cached");
    cJSON_AddNumberToObject(o, "scenario_count", (double)j->nscen);
    cJSON_AddNumberToObject(o, "seconds", st->seconds);
    cJSON_AddNumberToObject(o, "scenarios_per_s", st->seconds > 0 ? j->nscen / st->seconds : 0);
    cJSON_AddNumberToObject(o, "columns_recomputed", (double)st->columns);
    if (st->strategy == GP_PLAN_GPU) cJSON_AddNumberToObject(o, "gpu_seconds", st->gpu_s);
    cJSON *sa = cJSON_AddArrayToObject(o, "scenarios");
    gp_sbuf b = {0};
    gp_sbuf_printf(&b, "rank,kind,failed_links,failed_routers,changed_pairs,disconnected_pairs,"
                       "unrouted_volume,worst_utilization,worst_from,worst_to,worst_from_name,"
                       "worst_to_name,worst_load\n");
    for (size_t k = 0; k < j->nscen; k++) {
        size_t i = order[k];
        const gp_scenario_result *r = &res[i];
        const gp_fail *f = &j->sc[i];
        if (r->worst_link != GP_NONE && r->worst_load > 0) bott[r->worst_link]++;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "rank", (double)(k + 1));
        cJSON_AddStringToObject(x, "kind", kind_names[j->kind[i]]);
        cJSON *fl = cJSON_AddArrayToObject(x, "failed_links"),
              *fln = cJSON_AddArrayToObject(x, "failed_link_names"),
              *fr = cJSON_AddArrayToObject(x, "failed_routers"),
              *frn = cJSON_AddArrayToObject(x, "failed_router_names");
        gp_sbuf_printf(&b, "%zu,%s,\"", k + 1, kind_names[j->kind[i]]);
        for (uint32_t p = j->pair_off[i]; p < j->pair_off[i + 1]; p++) {
            uint32_t u = j->pairs[2 * p], v = j->pairs[2 * p + 1];
            cJSON *e = cJSON_CreateArray(), *en = cJSON_CreateArray();
            cJSON_AddItemToArray(e, cJSON_CreateNumber((double)g->ext[u]));
            cJSON_AddItemToArray(e, cJSON_CreateNumber((double)g->ext[v]));
            cJSON_AddItemToArray(en, gp_graph_name(g, u) ? cJSON_CreateString(gp_graph_name(g, u))
                                                         : cJSON_CreateNull());
            cJSON_AddItemToArray(en, gp_graph_name(g, v) ? cJSON_CreateString(gp_graph_name(g, v))
                                                         : cJSON_CreateNull());
            cJSON_AddItemToArray(fl, e);
            cJSON_AddItemToArray(fln, en);
            gp_sbuf_printf(&b, "%s%lld-%lld", p > j->pair_off[i] ? " " : "", (long long)g->ext[u],
                           (long long)g->ext[v]);
        }
        gp_sbuf_printf(&b, "\",\"");
        for (uint32_t p = 0; p < f->nrouters; p++) {
            uint32_t v = f->routers[p];
            cJSON_AddItemToArray(fr, cJSON_CreateNumber((double)g->ext[v]));
            cJSON_AddItemToArray(frn, gp_graph_name(g, v) ? cJSON_CreateString(gp_graph_name(g, v))
                                                          : cJSON_CreateNull());
            gp_sbuf_printf(&b, "%s%lld", p ? " " : "", (long long)g->ext[v]);
        }
        cJSON_AddNumberToObject(x, "changed_pairs", (double)r->changed_pairs);
        cJSON_AddNumberToObject(x, "disconnected_pairs", (double)r->disconnected_pairs);
        cJSON_AddNumberToObject(x, "unrouted_volume", r->unrouted_volume);
        if (r->worst_utilization >= 0)
            cJSON_AddNumberToObject(x, "worst_utilization", r->worst_utilization);
        else cJSON_AddNullToObject(x, "worst_utilization");
        if (r->worst_link != GP_NONE)
            cJSON_AddItemToObject(x, "worst_link",
                                  link_json(t, r->worst_link, r->worst_load, j->cap));
        else cJSON_AddNullToObject(x, "worst_link");
        cJSON *tl = cJSON_AddArrayToObject(x, "top_links");
        for (int q = 0; q < 8 && r->top[q] != GP_NONE; q++)
            cJSON_AddItemToArray(tl, link_json(t, r->top[q], r->top_load[q], j->cap));
        cJSON_AddNumberToObject(x, "affected_destinations", r->affected);
        if (j->list_max) pair_lists(x, g, r);
        cJSON_AddItemToArray(sa, x);
        gp_sbuf_printf(&b, "\",%llu,%llu,%.17g,", (unsigned long long)r->changed_pairs,
                       (unsigned long long)r->disconnected_pairs, r->unrouted_volume);
        if (r->worst_utilization >= 0) gp_sbuf_printf(&b, "%.17g", r->worst_utilization);
        if (r->worst_link != GP_NONE) {
            uint32_t u = gp_plan_link_tail(t, r->worst_link), v = t->nb[r->worst_link];
            gp_sbuf_printf(&b, ",%lld,%lld,", (long long)g->ext[u], (long long)g->ext[v]);
            csv_name(&b, g, u);
            gp_sbuf_add(&b, ",", 1);
            csv_name(&b, g, v);
            gp_sbuf_printf(&b, ",%.17g\n", r->worst_load);
        } else {
            gp_sbuf_printf(&b, ",,,,,\n");
        }
    }
    /* the links that are the bottleneck in the most scenarios */
    cJSON *ba = cJSON_AddArrayToObject(o, "bottlenecks");
    for (int q = 0; q < 20; q++) {
        uint32_t best = GP_NONE;
        for (uint32_t l = 0; l < L; l++)
            if (bott[l] && (best == GP_NONE || bott[l] > bott[best])) best = l;
        if (best == GP_NONE) break;
        cJSON *x = link_json(t, best, 0, j->cap);
        cJSON_DeleteItemFromObject(x, "load");
        cJSON_DeleteItemFromObject(x, "utilization");
        cJSON_AddNumberToObject(x, "scenarios", bott[best]);
        cJSON_AddItemToArray(ba, x);
        bott[best] = 0;
    }
    free(order);
    free(bott);
    if (b.oom) {
        gp_sbuf_free(&b);
        cJSON_Delete(o);
        snprintf(j->error, sizeof j->error, "out of memory for the result");
        return;
    }
    gp_sbuf_add(&b, "", 1); /* NUL */
    j->result = o;
    j->csv = b.p;
}

/* ---- results kept in the SQLite cache (storage/cache.h documents): under the graph's cache
 * version, keyed by the normalized request (demand version included); the entry holds the result's
 * JSON, a NUL, then its CSV ---- */

static void result_store(const pl_job *j) {
    gp_cache *c = gp_srv_cache();
    char *js = c && j->t ? cJSON_PrintUnformatted(j->result) : NULL;
    if (!js) return;
    size_t a = strlen(js) + 1, b = strlen(j->csv);
    char *doc = malloc(a + b);
    if (doc) {
        memcpy(doc, js, a);
        memcpy(doc + a, j->csv, b);
        gp_err err;
        gp_cache_put_doc(c, j->graph, gp_srv_cache_version(j->t->g), "failure-analysis", j->req,
                         doc, a + b, &err); /* logged inside; the job is done anyway */
    }
    free(doc);
    free(js);
}

/* j's result and CSV from the cache (j->req, graph g); 0 on a hit. */
static int result_load(pl_job *j, const gp_graph *g) {
    char *doc = NULL;
    size_t len = 0;
    if (gp_cache_get_doc(gp_srv_cache(), gp_srv_cache_version(g), "failure-analysis", j->req, &doc,
                         &len) != GP_OK)
        return -1;
    size_t a = strnlen(doc, len);
    cJSON *o = a < len ? cJSON_ParseWithLength(doc, a) : NULL;
    char *csv = o ? malloc(len - a) : NULL;
    if (!csv) {
        cJSON_Delete(o);
        free(doc);
        return -1;
    }
    memcpy(csv, doc + a + 1, len - a - 1);
    csv[len - a - 1] = 0;
    free(doc);
    cJSON_ReplaceItemInObjectCaseSensitive(o, "cached", cJSON_CreateTrue());
    j->result = o;
    j->csv = csv;
    j->cached = 1;
    return 0;
}

static void *job_main(void *arg) {
    pl_job *j = arg;
    pthread_mutex_lock(&pl.run);
    pthread_mutex_lock(&pl.mu);
    int go = !gp_progress_cancelled(&j->prog); /* a DELETE while queued: never runs */
    j->state = go ? 1 : 4;
    j->started = gp_now();
    pthread_mutex_unlock(&pl.mu);
    gp_scenario_result *res = go ? calloc(j->nscen + 1, sizeof *res) : NULL;
    gp_plan_stats st = {0};
    gp_err err;
    gp_err_clear(&err);
    gp_progress_set(&j->prog);
    gp_plan_opts po = {.list_max = j->list_max};
    int rc = !go   ? GP_ECANCELLED
             : res ? gp_plan_failures_opts(gp_http_engine(), j->t, j->d, j->cap, j->sc, j->nscen,
                                           j->strategy, 0, &po, res, NULL, &st, &err)
                   : gp_err_set(&err, GP_ENOMEM, "out of memory");
    gp_progress_set(NULL);
    if (rc == GP_OK && !gp_progress_cancelled(&j->prog)) build_result(j, res, &st);
    else snprintf(j->error, sizeof j->error, "%s", err.msg);
    gp_plan_results_free(res, j->nscen);
    free(res);
    if (j->result) result_store(j);
    pthread_mutex_lock(&pl.mu);
    j->finished = gp_now();
    j->state = j->result ? 2 : gp_progress_cancelled(&j->prog) ? 4 : 3;
    if (!j->result && !j->error[0]) snprintf(j->error, sizeof j->error, "failed");
    if (j->result) gp_progress_finish(&j->prog);
    job_inputs_free(j);
    pl.active--;
    pthread_cond_broadcast(&pl.idle);
    pthread_mutex_unlock(&pl.mu);
    pthread_mutex_unlock(&pl.run);
    return NULL;
}

/* Scenario builder: appends scenarios with their failed links (as pairs) and routers. */
typedef struct sbuild {
    const gp_rt *t;
    size_t n, cap;
    uint32_t *pairs, npairs, pcap; /* 2 per pair */
    uint32_t *routers, nr, rcap;
    uint32_t *pair_off, *r_off; /* n + 1 */
    uint8_t *kind;
    int oom;
} sbuild;

static void sb_grow(void **p, uint32_t *cap, uint32_t need, size_t el, int *oom) {
    if (need <= *cap) return;
    uint32_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *x = realloc(*p, (size_t)c * el);
    if (!x) *oom = 1;
    else *p = x, *cap = c;
}

static void sb_begin(sbuild *b, int kind) {
    if (b->n + 2 > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 256;
        uint32_t *a = realloc(b->pair_off, (c + 1) * sizeof *a);
        if (a) b->pair_off = a;
        uint32_t *r = realloc(b->r_off, (c + 1) * sizeof *r);
        if (r) b->r_off = r;
        uint8_t *k = realloc(b->kind, c + 1);
        if (k) b->kind = k;
        if (!a || !r || !k) {
            b->oom = 1;
            return;
        }
        b->cap = c;
    }
    b->pair_off[b->n] = b->npairs;
    b->r_off[b->n] = b->nr;
    b->kind[b->n++] = (uint8_t)kind;
    b->pair_off[b->n] = b->npairs;
    b->r_off[b->n] = b->nr;
}

static void sb_link(sbuild *b, uint32_t u, uint32_t v) {
    sb_grow((void **)&b->pairs, &b->pcap, 2 * (b->npairs + 1), sizeof *b->pairs, &b->oom);
    if (b->oom) return;
    b->pairs[2 * b->npairs] = u;
    b->pairs[2 * b->npairs + 1] = v;
    b->pair_off[b->n] = ++b->npairs;
}

static void sb_router(sbuild *b, uint32_t v) {
    sb_grow((void **)&b->routers, &b->rcap, b->nr + 1, sizeof *b->routers, &b->oom);
    if (b->oom) return;
    b->routers[b->nr++] = v;
    b->r_off[b->n] = b->nr;
}

static void sb_free(sbuild *b) {
    if (!b) return;
    free(b->pairs);
    free(b->routers);
    free(b->pair_off);
    free(b->r_off);
    free(b->kind);
}

/* A link given as [u, v] in JSON -> internal pair (joined); err names what. */
static int json_link(const gp_nj_names *nm, const gp_rt *t, const cJSON *a, const char *what,
                     uint32_t *u, uint32_t *v, char *err, size_t cap) {
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2) {
        snprintf(err, cap, "%s must be [router, router]", what);
        return -1;
    }
    char w[176];
    snprintf(w, sizeof w, "%s[0]", what);
    if ((*u = json_router(nm, a->child, w, err, cap)) == GP_NONE) return -1;
    snprintf(w, sizeof w, "%s[1]", what);
    if ((*v = json_router(nm, a->child->next, w, err, cap)) == GP_NONE) return -1;
    if (gp_plan_link_find(t, *u, *v) == GP_NONE && gp_plan_link_find(t, *v, *u) == GP_NONE) {
        snprintf(err, cap, "%s: routers %lld and %lld are not joined", what,
                 (long long)t->g->ext[*u], (long long)t->g->ext[*v]);
        return -1;
    }
    return 0;
}

/* Adds the links of a JSON array [[u, v], ...] (what names it) to the open scenario. */
static int sb_links(sbuild *b, const gp_nj_names *nm, const cJSON *arr, const char *what, char *err,
                    size_t ecap) {
    int k = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, arr) {
        char w[160];
        uint32_t u, v;
        snprintf(w, sizeof w, "%s[%d]", what, k++);
        if (json_link(nm, b->t, l, w, &u, &v, err, ecap)) return -1;
        sb_link(b, u, v);
    }
    return 0;
}

static int opt_bool(const cJSON *j, const char *k, int def, char *err, size_t cap) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
    if (!x) return def;
    if (!cJSON_IsBool(x)) {
        snprintf(err, cap, "%s must be true or false", k);
        return -1;
    }
    return cJSON_IsTrue(x);
}

/* Fills the builder from the request body; returns 0, or 1 + an error code (GP_HC_*) with err
 * set. */
static int build_scenarios(const cJSON *j, const gp_rt *t, const gp_nj_names *nm, sbuild *b,
                           size_t max, char *err, size_t ecap) {
    static const char *const keys[] = {
        "links", "routers",   "srlgs",    "link_pairs", "link_pairs_sample",
        "seed",  "scenarios", "strategy", "list_pairs", NULL};
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
        int ok = 0;
        for (int k = 0; keys[k] && !ok; k++) ok = strcmp(it->string, keys[k]) == 0;
        if (!ok) {
            snprintf(err, ecap,
                     "unknown member '%.64s' (known: links, routers, srlgs, "
                     "link_pairs, link_pairs_sample, seed, scenarios, strategy, list_pairs)",
                     it->string);
            return 1 + GP_HC_INVALID_QUERY;
        }
    }
    const cJSON *explicit_list = cJSON_GetObjectItemCaseSensitive(j, "scenarios");
    int links = opt_bool(j, "links", explicit_list ? 0 : 1, err, ecap),
        routers = opt_bool(j, "routers", explicit_list ? 0 : 1, err, ecap),
        pairs = opt_bool(j, "link_pairs", 0, err, ecap);
    if (links < 0 || routers < 0 || pairs < 0) return 1 + GP_HC_INVALID_QUERY;
    /* every undirected link once: (u, v) with u < v, or a one-way u -> v */
    uint32_t nl = 0, *lk = malloc(((size_t)gp_plan_links(t) + 1) * 2 * sizeof *lk);
    if (!lk) return 1 + GP_HC_INTERNAL;
    for (uint32_t u = 0; u < t->n; u++)
        for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
            uint32_t v = t->nb[l];
            if (v == u || (v < u && gp_plan_link_find(t, v, u) != GP_NONE)) continue;
            lk[2 * nl] = u, lk[2 * nl + 1] = v, nl++;
        }
    uint64_t total = (links ? nl : 0) + (routers ? t->n : 0);
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(j, "srlgs"),
                *ps = cJSON_GetObjectItemCaseSensitive(j, "link_pairs_sample"),
                *sd = cJSON_GetObjectItemCaseSensitive(j, "seed");
    if ((sr && !cJSON_IsArray(sr)) || (explicit_list && !cJSON_IsArray(explicit_list))) {
        snprintf(err, ecap, "%s must be an array",
                 sr && !cJSON_IsArray(sr) ? "srlgs" : "scenarios");
        free(lk);
        return 1 + GP_HC_INVALID_QUERY;
    }
    total += (uint64_t)(sr ? cJSON_GetArraySize(sr) : 0) +
             (uint64_t)(explicit_list ? cJSON_GetArraySize(explicit_list) : 0);
    uint64_t npairs = pairs ? (uint64_t)nl * (nl ? nl - 1 : 0) / 2 : 0, sample = 0;
    if (ps) {
        if (!cJSON_IsNumber(ps) || ps->valuedouble < 1 ||
            ps->valuedouble != floor(ps->valuedouble)) {
            snprintf(err, ecap, "link_pairs_sample must be a count >= 1");
            free(lk);
            return 1 + GP_HC_INVALID_QUERY;
        }
        sample = (uint64_t)ps->valuedouble;
        if (sample < npairs) npairs = sample;
        pairs = 1;
    }
    uint64_t seed = 1;
    if (sd) {
        if (!cJSON_IsNumber(sd) || sd->valuedouble < 0 ||
            sd->valuedouble != floor(sd->valuedouble)) {
            snprintf(err, ecap, "seed must be an integer >= 0");
            free(lk);
            return 1 + GP_HC_INVALID_QUERY;
        }
        seed = (uint64_t)sd->valuedouble;
    }
    if (total + npairs > max) {
        snprintf(err, ecap,
                 "%llu scenarios is over max_failure_scenarios (%zu): give link_pairs_sample "
                 "(with a seed) or raise the limit",
                 (unsigned long long)(total + npairs), max);
        free(lk);
        return 1 + GP_HC_TOO_BIG;
    }
    if (links)
        for (uint32_t i = 0; i < nl; i++) sb_begin(b, K_LINK), sb_link(b, lk[2 * i], lk[2 * i + 1]);
    if (routers)
        for (uint32_t v = 0; v < t->n; v++) sb_begin(b, K_ROUTER), sb_router(b, v);
    int i = 0;
    cJSON_ArrayForEach(it, sr) {
        char what[96];
        snprintf(what, sizeof what, "srlgs[%d]", i++);
        if (!cJSON_IsArray(it) || !cJSON_GetArraySize(it)) {
            snprintf(err, ecap, "%s must be a non-empty array of links [u, v]", what);
            free(lk);
            return 1 + GP_HC_INVALID_QUERY;
        }
        sb_begin(b, K_SRLG);
        if (sb_links(b, nm, it, what, err, ecap)) {
            free(lk);
            return 1 + GP_HC_INVALID_QUERY;
        }
    }
    i = 0;
    cJSON_ArrayForEach(it, explicit_list) {
        char what[96];
        snprintf(what, sizeof what, "scenarios[%d]", i++);
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(it, "links"),
                    *fr = cJSON_GetObjectItemCaseSensitive(it, "routers");
        if (!cJSON_IsObject(it) || (fl && !cJSON_IsArray(fl)) || (fr && !cJSON_IsArray(fr)) ||
            (!fl && !fr)) {
            snprintf(err, ecap, "%s must be {\"links\": [[u, v], ...], \"routers\": [r, ...]}",
                     what);
            free(lk);
            return 1 + GP_HC_INVALID_QUERY;
        }
        sb_begin(b, K_LIST);
        char wl[112];
        snprintf(wl, sizeof wl, "%s.links", what);
        if (sb_links(b, nm, fl, wl, err, ecap)) {
            free(lk);
            return 1 + GP_HC_INVALID_QUERY;
        }
        int k = 0;
        const cJSON *l;
        cJSON_ArrayForEach(l, fr) {
            char w[160];
            snprintf(w, sizeof w, "%s.routers[%d]", what, k++);
            uint32_t v = json_router(nm, l, w, err, ecap);
            if (v == GP_NONE) {
                free(lk);
                return 1 + GP_HC_INVALID_QUERY;
            }
            sb_router(b, v);
        }
    }
    if (pairs && nl >= 2) {
        uint64_t all = (uint64_t)nl * (nl - 1) / 2;
        if (!sample || sample >= all) {
            for (uint32_t a = 0; a < nl; a++)
                for (uint32_t c = a + 1; c < nl; c++) {
                    sb_begin(b, K_PAIR);
                    sb_link(b, lk[2 * a], lk[2 * a + 1]);
                    sb_link(b, lk[2 * c], lk[2 * c + 1]);
                }
        } else { /* a seeded sample of distinct pairs (open addressing over pair numbers) */
            uint64_t hcap = 1;
            while (hcap < 2 * sample) hcap *= 2;
            uint64_t *set = malloc(hcap * sizeof *set);
            if (!set) {
                free(lk);
                return 1 + GP_HC_INTERNAL;
            }
            memset(set, 0xff, hcap * sizeof *set);
            for (uint64_t got = 0; got < sample;) {
                uint32_t a = (uint32_t)(gp_splitmix64(&seed) % nl),
                         c = (uint32_t)(gp_splitmix64(&seed) % nl);
                if (a == c) continue;
                if (a > c) {
                    uint32_t x = a;
                    a = c, c = x;
                }
                uint64_t key = (uint64_t)a * nl + c, h = gp_mix64(key) & (hcap - 1);
                while (set[h] != UINT64_MAX && set[h] != key) h = (h + 1) & (hcap - 1);
                if (set[h] == key) continue;
                set[h] = key;
                got++;
                sb_begin(b, K_PAIR);
                sb_link(b, lk[2 * a], lk[2 * a + 1]);
                sb_link(b, lk[2 * c], lk[2 * c + 1]);
            }
            free(set);
        }
    }
    free(lk);
    if (b->oom) return 1 + GP_HC_INTERNAL;
    if (!b->n) {
        snprintf(err, ecap, "no scenarios: ask for links, routers, srlgs, link_pairs or scenarios");
        return 1 + GP_HC_INVALID_QUERY;
    }
    return 0;
}

/* Canonical JSON of j (object members sorted by name, at every depth) minus the top-level members
 * named in skip. */
static void canon(gp_sbuf *s, const cJSON *j, const char *const *skip) {
    if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        int obj = cJSON_IsObject(j), n = cJSON_GetArraySize(j), k = 0;
        const cJSON **m = malloc(((size_t)n + 1) * sizeof *m), *it;
        if (!m) {
            s->oom = 1;
            return;
        }
        cJSON_ArrayForEach(it, j) {
            int drop = 0;
            for (int q = 0; obj && skip && skip[q] && !drop; q++)
                drop = !strcmp(it->string, skip[q]);
            if (!drop) m[k++] = it;
        }
        for (int a = 1; obj && a < k; a++) /* insertion sort: a request has few members */
            for (int c = a; c > 0 && strcmp(m[c - 1]->string, m[c]->string) > 0; c--) {
                const cJSON *x = m[c];
                m[c] = m[c - 1], m[c - 1] = x;
            }
        gp_sbuf_add(s, obj ? "{" : "[", 1);
        for (int a = 0; a < k; a++) {
            if (a) gp_sbuf_add(s, ",", 1);
            if (obj) {
                cJSON *key = cJSON_CreateString(m[a]->string);
                char *kt = key ? cJSON_PrintUnformatted(key) : NULL;
                if (kt) gp_sbuf_printf(s, "%s:", kt);
                else s->oom = 1;
                free(kt);
                cJSON_Delete(key);
            }
            canon(s, m[a], NULL);
        }
        gp_sbuf_add(s, obj ? "}" : "]", 1);
        free(m);
        return;
    }
    char *v = cJSON_PrintUnformatted(j);
    if (v) gp_sbuf_add(s, v, strlen(v));
    else s->oom = 1;
    free(v);
}

/* The normalized request, the key of a result in memory and in the SQLite cache: the graph and
 * demand versions, the scenario list that was built (its length and two independent 64-bit hashes
 * of its kinds, links and routers: {} and {"links": true, "routers": true} are one question), and
 * every other member of the body but "strategy" (all strategies answer the same) as canonical
 * JSON, so that an option added later joins the key by itself. NULL when out of memory. */
static char *request_text(const cJSON *body, const sbuild *b, const char *version,
                          const char *dver) {
    static const char *const scen[] = {"links",      "routers",           "srlgs",
                                       "link_pairs", "link_pairs_sample", "seed",
                                       "scenarios",  "strategy",          NULL};
    uint64_t h1 = 1469598103934665603ULL, h2 = 0x736365656e6172ULL;
    const struct {
        const void *p;
        size_t n;
    } part[] = {{b->kind, b->n},
                {b->pair_off, (b->n + 1) * 4},
                {b->pairs, (size_t)b->npairs * 8},
                {b->r_off, (b->n + 1) * 4},
                {b->routers, (size_t)b->nr * 4}};
    for (size_t q = 0; q < sizeof part / sizeof part[0]; q++) {
        h1 = pl_hash(h1 ^ q, part[q].p, part[q].n);
        const unsigned char *c = part[q].p;
        for (size_t i = 0; i < part[q].n; i++) {
            h2 += c[i] + 1 + q;
            h2 = gp_mix64(h2);
        }
    }
    gp_sbuf s = {0};
    gp_sbuf_printf(
        &s, "failure-analysis/1 version=%s demands=%s scenarios=%zu:%016llx%016llx rest=", version,
        dver, b->n, (unsigned long long)h1, (unsigned long long)h2);
    canon(&s, body, scen);
    gp_sbuf_add(&s, "", 1);
    if (s.oom) {
        gp_sbuf_free(&s);
        return NULL;
    }
    return s.p;
}

/* Makes room in pl.jobs for one more (pl.mu held): forgets the oldest ended jobs past PL_KEEP;
 * -1 when PL_KEEP * 2 are kept and none has ended. */
static int job_keep(void) {
    while (pl.njobs >= PL_KEEP) {
        size_t drop = pl.njobs;
        for (size_t i = 0; i < pl.njobs && drop == pl.njobs; i++)
            if (pl.jobs[i]->state >= 2) drop = i;
        if (drop == pl.njobs) break;
        job_free(pl.jobs[drop]);
        memmove(&pl.jobs[drop], &pl.jobs[drop + 1], (pl.njobs - drop - 1) * sizeof pl.jobs[0]);
        pl.njobs--;
    }
    return pl.njobs >= PL_KEEP * 2 ? -1 : 0;
}

static void answer_job(gp_req *r, int status, pl_job *j) {
    char loc[64];
    snprintf(loc, sizeof loc, "/v1/failure-analysis/%llu", (unsigned long long)j->id);
    gp_req_add_header(r, "Location", loc);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "job", (double)j->id);
    cJSON_AddStringToObject(o, "status", loc);
    cJSON_AddStringToObject(o, "state", state_names[j->state]);
    cJSON_AddStringToObject(o, "graph", j->graph);
    cJSON_AddStringToObject(o, "version", j->version);
    cJSON_AddStringToObject(o, "demand_version", j->dver);
    cJSON_AddNumberToObject(o, "scenarios", (double)j->nscen);
    cJSON_AddBoolToObject(o, "cached", j->cached);
    gp_http_json(r, status, o);
}

void gp_h_failure_post(gp_req *r) {
    const cJSON *body = gp_req_json(r);
    cJSON *empty = NULL;
    if (!body) body = empty = cJSON_CreateObject();
    if (!cJSON_IsObject(body)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "body must be a JSON object");
        return;
    }
    int strategy = GP_PLAN_AUTO;
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(body, "strategy");
    if (sv) {
        strategy = gp_plan_strategy_parse(cJSON_IsString(sv) ? sv->valuestring : "");
        if (strategy < 0) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "strategy must be auto, incremental, full or gpu");
            cJSON_Delete(empty);
            return;
        }
        const gp_engine *e = gp_http_engine();
        if (strategy == GP_PLAN_GPU && (!e || e->primary == e->cpu)) {
            gp_http_error(r, GP_HC_UNSUPPORTED, "strategy gpu: this server runs on the CPU");
            cJSON_Delete(empty);
            return;
        }
    }
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(body, "list_pairs");
    if (lp && !cJSON_IsBool(lp)) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "list_pairs must be true or false");
        cJSON_Delete(empty);
        return;
    }
    uint32_t list_max = 0;
    if (cJSON_IsTrue(lp))
        list_max = cfg() && cfg()->max_listed_pairs > 0 ? (uint32_t)cfg()->max_listed_pairs : 1000;
    inputs in;
    if (inputs_get(r, &in)) {
        cJSON_Delete(empty);
        return;
    }
    gp_nj_names nm;
    sbuild b = {.t = in.t};
    char err[256] = "";
    size_t max = cfg() && cfg()->max_failure_scenarios > 0 ? (size_t)cfg()->max_failure_scenarios
                                                           : 100000;
    int code = gp_nj_names_init(&nm, in.t->g)
                   ? GP_HC_INTERNAL
                   : build_scenarios(body, in.t, &nm, &b, max, err, sizeof err);
    gp_nj_names_free(&nm);
    char *req = code ? NULL : request_text(body, &b, in.t->g->version, in.dver);
    cJSON_Delete(empty);
    if (code || !req) {
        gp_http_error(r, code ? code - 1 : GP_HC_INTERNAL, "%s", err[0] ? err : "out of memory");
        goto fail;
    }
    /* a done (or queued, running) analysis of the same question is answered again */
    pthread_mutex_lock(&pl.mu);
    for (size_t i = 0; i < pl.njobs; i++)
        if (strcmp(pl.jobs[i]->req, req) == 0 && pl.jobs[i]->state < 3 &&
            !gp_progress_cancelled(&pl.jobs[i]->prog) &&
            strcmp(pl.jobs[i]->graph, gp_req_graph_name(r)) == 0) {
            answer_job(r, 200, pl.jobs[i]);
            pthread_mutex_unlock(&pl.mu);
            goto fail;
        }
    pthread_mutex_unlock(&pl.mu);
    pl_job *j = calloc(1, sizeof *j);
    if (j) {
        j->req = req, req = NULL;
        snprintf(j->graph, sizeof j->graph, "%s", gp_req_graph_name(r));
        memcpy(j->version, in.t->g->version, sizeof j->version);
        memcpy(j->dver, in.dver, sizeof j->dver);
        j->nscen = b.n;
        gp_progress_init(&j->prog, "failure-analysis");
        j->submitted = gp_now();
    }
    /* answered before from the SQLite cache: a new job, done at once */
    if (j && result_load(j, in.t->g) == 0) {
        j->state = 2;
        j->started = j->finished = j->submitted;
        gp_progress_finish(&j->prog);
        pthread_mutex_lock(&pl.mu);
        if (job_keep()) {
            pthread_mutex_unlock(&pl.mu);
            job_free(j);
            gp_http_error(r, GP_HC_BUSY, "too many failure analyses queued: retry later");
            goto fail;
        }
        j->id = pl.next_id++;
        pl.jobs[pl.njobs++] = j;
        answer_job(r, 200, j);
        pthread_mutex_unlock(&pl.mu);
        goto fail;
    }
    uint32_t nlinks = 2 * b.npairs;
    if (j) {
        j->sc = calloc(b.n + 1, sizeof *j->sc);
        j->pool = malloc(((size_t)nlinks + b.nr + 1) * sizeof *j->pool);
    }
    if (!j || !j->sc || !j->pool) {
        job_free(j);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        goto fail;
    }
    uint32_t k = 0;
    for (size_t s = 0; s < b.n; s++) {
        uint32_t k0 = k;
        for (uint32_t p = b.pair_off[s]; p < b.pair_off[s + 1]; p++)
            gp_plan_fail_link(in.t, b.pairs[2 * p], b.pairs[2 * p + 1], j->pool, &k);
        j->sc[s].links = j->pool + k0;
        j->sc[s].nlinks = k - k0;
    }
    uint32_t *rp = j->pool + k;
    if (b.nr) memcpy(rp, b.routers, b.nr * sizeof *rp);
    for (size_t s = 0; s < b.n; s++) {
        j->sc[s].routers = rp + b.r_off[s];
        j->sc[s].nrouters = b.r_off[s + 1] - b.r_off[s];
    }
    j->pairs = b.pairs, b.pairs = NULL;
    j->pair_off = b.pair_off, b.pair_off = NULL;
    j->kind = b.kind, b.kind = NULL;
    j->strategy = strategy;
    j->list_max = list_max;
    j->t = in.t, in.t = NULL;
    j->d = in.d, in.d = NULL;
    j->cap = in.cap, in.cap = NULL;
    pthread_mutex_lock(&pl.mu);
    pthread_t th;
    if (job_keep() || pthread_create(&th, NULL, job_main, j) != 0) {
        pthread_mutex_unlock(&pl.mu);
        job_free(j);
        gp_http_error(r, GP_HC_BUSY, "too many failure analyses queued: retry later");
        goto fail;
    }
    pthread_detach(th);
    j->id = pl.next_id++;
    pl.jobs[pl.njobs++] = j;
    pl.active++;
    answer_job(r, 202, j);
    pthread_mutex_unlock(&pl.mu);
fail:
    free(req);
    sb_free(&b);
    inputs_free(&in);
}

/* The GET document of job j (under pl.mu), its state said as `state`; the result when asked. */
static cJSON *job_json(pl_job *j, const char *state, int with_result) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "job", (double)j->id);
    cJSON_AddStringToObject(o, "state", state);
    cJSON_AddNumberToObject(o, "progress", j->state == 2 ? 1 : gp_progress_fraction(&j->prog));
    cJSON_AddStringToObject(o, "graph", j->graph);
    cJSON_AddStringToObject(o, "version", j->version);
    cJSON_AddStringToObject(o, "demand_version", j->dver);
    cJSON_AddNumberToObject(o, "scenarios", (double)j->nscen);
    cJSON_AddBoolToObject(o, "cached", j->cached);
    if (j->state == 3) cJSON_AddStringToObject(o, "error", j->error);
    if (j->state == 2 && with_result)
        cJSON_AddItemToObject(o, "result", cJSON_Duplicate(j->result, 1));
    return o;
}

/* The job number of the path's {id}; 0 after answering 400. */
static unsigned long long job_number(gp_req *r) {
    const char *ids = gp_req_param(r, "id");
    char *end;
    errno = 0;
    unsigned long long id = ids ? strtoull(ids, &end, 10) : 0;
    if (!ids || !*ids || *end || errno || !id || ids[0] == '+' || ids[0] == '-') {
        gp_http_error(r, GP_HC_INVALID_QUERY, "'%.64s' is not a failure-analysis job number",
                      ids ? ids : "");
        return 0;
    }
    return id;
}

/* DELETE /v1/failure-analysis/{id}: a queued job never runs, a running one stops between
 * scenarios (batches on the GPU) and ends "cancelled" without a result; an ended job is
 * forgotten (a result kept in the SQLite cache stays there). */
void gp_h_failure_delete(gp_req *r) {
    unsigned long long id = job_number(r);
    if (!id) return;
    pthread_mutex_lock(&pl.mu);
    size_t i = 0;
    while (i < pl.njobs && pl.jobs[i]->id != id) i++;
    if (i == pl.njobs) {
        pthread_mutex_unlock(&pl.mu);
        gp_http_error(r, GP_HC_NOT_FOUND, "no failure-analysis job %llu", id);
        return;
    }
    pl_job *j = pl.jobs[i];
    cJSON *o = job_json(j, j->state < 2 ? "cancelling" : "deleted", 0);
    if (j->state < 2) {
        gp_progress_cancel(&j->prog);
    } else {
        memmove(&pl.jobs[i], &pl.jobs[i + 1], (pl.njobs - i - 1) * sizeof pl.jobs[0]);
        pl.njobs--;
        job_free(j);
    }
    pthread_mutex_unlock(&pl.mu);
    gp_http_json(r, 200, o);
}

void gp_h_failure_get(gp_req *r) {
    const char *fmt = gp_req_query(r, "format");
    unsigned long long id = job_number(r);
    if (!id) return;
    int csv = fmt && strcmp(fmt, "csv") == 0;
    if (fmt && !csv && strcmp(fmt, "json") != 0) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "format must be json or csv, got '%.32s'", fmt);
        return;
    }
    pthread_mutex_lock(&pl.mu);
    pl_job *j = NULL;
    for (size_t i = 0; i < pl.njobs && !j; i++)
        if (pl.jobs[i]->id == id) j = pl.jobs[i];
    if (!j) {
        pthread_mutex_unlock(&pl.mu);
        gp_http_error(r, GP_HC_NOT_FOUND, "no failure-analysis job %llu", id);
        return;
    }
    if (csv) {
        if (j->state != 2) {
            pthread_mutex_unlock(&pl.mu);
            gp_http_error(r, GP_HC_NOT_FOUND, "job %llu has no result (yet): state %s", id,
                          state_names[j->state]);
            return;
        }
        gp_http_text(r, 200, "text/csv", j->csv, strlen(j->csv));
        pthread_mutex_unlock(&pl.mu);
        return;
    }
    cJSON *o = job_json(j, state_names[j->state], 1);
    pthread_mutex_unlock(&pl.mu);
    gp_http_json(r, 200, o);
}

void gp_srv_planning_stop(void) {
    pthread_mutex_lock(&pl.mu);
    for (size_t i = 0; i < pl.njobs; i++) gp_progress_cancel(&pl.jobs[i]->prog);
    while (pl.active) pthread_cond_wait(&pl.idle, &pl.mu);
    for (size_t i = 0; i < pl.njobs; i++) job_free(pl.jobs[i]);
    pl.njobs = 0;
    for (int i = 0; i < PL_GRAPHS; i++) {
        free(pl.g[i].rows);
        free(pl.g[i].caps);
        memset(&pl.g[i], 0, sizeof pl.g[i]);
    }
    pthread_mutex_unlock(&pl.mu);
}
