/* traffic.c - live traffic (contract in traffic.h; docs/traffic.md): per served graph, the sets
 * of entries in force (one per POST or configured file, in the order they came), each with its
 * source, time and expiry. Any change (a POST, a DELETE, an expiry, a file re-read, a reload of
 * the graph) builds the metric again from the base's profile weights and every set in force
 * (engine/traffic.h gp_traffic_apply: a reweighted version, customized, never a rebuild) and
 * publishes it (gp_registry_replace). One mutex serializes the applies; a set is added only when
 * its version was published, so a refused file changes nothing. Every apply runs on the traffic
 * thread (a POST hands its parsed set over and waits): at the server's priority, while the
 * request threads run at query_nice.
 */
#include "server/v1/traffic.h"

#include "engine/traffic.h"
#include "server/api/render.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { KIND_SPEEDS = 0, KIND_TURNS = 1, MAX_GRAPHS = 64, MAX_FILES = 32 };
static const char *const kind_name[] = {"speeds", "turn_penalties"};

typedef struct tr_set {
    int kind;
    char source[1040];             /* "POST" or "file:PATH" */
    double applied_at, expires_at; /* wall seconds; expires_at 0: never */
    size_t n, unknown;
    void *entries; /* gp_speed_entry or gp_turn_entry */
    int replaced;  /* while a newer set that replaces it is applied: left out */
} tr_set;

typedef struct tr_graph {
    char name[65];
    tr_set *sets;
    int nsets;
    gp_graph *owner;  /* the base the version was built on (referenced): a reload changes it */
    char version[17]; /* the version published */
    double parse_ms;  /* the file being applied: its parse (POST), for the debug log */
} tr_graph;

typedef struct tr_file {
    char graph[65];
    int kind;
    char path[1024];
    struct timespec mtime;
    off_t size;
    int seen; /* mtime read once */
} tr_file;

/* A POSTed set to apply, handed to the traffic thread (it runs at the server's priority, the
 * request threads at query_nice: daemon.c), which answers in it. */
typedef struct tr_job {
    char graph[65];
    tr_set s;
    gp_traffic_stats st;
    char prev[17], ver[17];
    gp_err err;
    double parse_ms;
    int rc, done;
    size_t unknown;
} tr_job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv, done_cv;
    tr_job *job;
    tr_graph g[MAX_GRAPHS];
    tr_file f[MAX_FILES];
    int nf;
    double poll_s;
    int running, stop;
    pthread_t th;
} T = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .cv = PTHREAD_COND_INITIALIZER,
       .done_cv = PTHREAD_COND_INITIALIZER};

static double wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static tr_graph *find_graph(const char *name, int create) {
    tr_graph *empty = NULL;
    for (int i = 0; i < MAX_GRAPHS; i++) {
        if (T.g[i].name[0] && strcmp(T.g[i].name, name) == 0) return &T.g[i];
        if (!empty && !T.g[i].name[0]) empty = &T.g[i];
    }
    if (!create || !empty) return NULL;
    snprintf(empty->name, sizeof empty->name, "%s", name);
    return empty;
}

static void set_free(tr_set *s) { free(s->entries); }

/* Builds name's metric from every set of tg that is not past `now`, skipping none; publishes it.
 * Per set, `unknown` is refreshed. On failure nothing is published and err says why. */
static int apply_locked(tr_graph *tg, gp_traffic_stats *st, char *prev, char *ver, gp_err *err) {
    gp_registry *reg = gp_http_registry();
    int rc = GP_OK;
    double t0 = gp_now();
    for (int attempt = 0; attempt < 3; attempt++) {
        gp_graph *g = gp_registry_get(reg, tg->name);
        if (!g) return gp_err_set(err, GP_ENOTFOUND, "no graph '%s'", tg->name);
        size_t ns = 0, nt = 0;
        for (int i = 0; i < tg->nsets; i++)
            if (!tg->sets[i].replaced)
                *(tg->sets[i].kind == KIND_SPEEDS ? &ns : &nt) += tg->sets[i].n;
        gp_speed_entry *sp = malloc(sizeof *sp * (ns ? ns : 1));
        gp_turn_entry *tp = malloc(sizeof *tp * (nt ? nt : 1));
        unsigned char *ks = malloc(ns ? ns : 1), *kt = malloc(nt ? nt : 1);
        gp_graph *g2 = NULL;
        if (!sp || !tp || !ks || !kt) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
        } else {
            size_t is = 0, it = 0;
            for (int i = 0; i < tg->nsets; i++) {
                tr_set *s = &tg->sets[i];
                if (s->replaced) continue;
                if (s->kind == KIND_SPEEDS)
                    memcpy(sp + is, s->entries, s->n * sizeof *sp), is += s->n;
                else memcpy(tp + it, s->entries, s->n * sizeof *tp), it += s->n;
            }
            rc = gp_traffic_apply(gp_http_engine(), g, sp, ns, tp, nt, &g2, ks, kt, st, err);
        }
        if (rc == GP_OK) {
            size_t is = 0, it = 0;
            for (int i = 0; i < tg->nsets; i++) {
                tr_set *s = &tg->sets[i];
                if (s->replaced) continue;
                const unsigned char *k = s->kind == KIND_SPEEDS ? ks + is : kt + it;
                s->unknown = 0;
                for (size_t j = 0; j < s->n; j++) s->unknown += !k[j];
                *(s->kind == KIND_SPEEDS ? &is : &it) += s->n;
            }
            double tp0 = gp_now();
            /* g2 == g: the weights g serves already (engine/traffic.h): nothing to publish */
            if (g2 != g) rc = gp_registry_replace(reg, tg->name, g2, g->hash, err);
            st->publish_ms = (gp_now() - tp0) * 1e3;
        }
        if (rc == GP_OK) {
            if (prev) snprintf(prev, 17, "%s", g->version);
            if (ver) snprintf(ver, 17, "%s", g2->version);
            snprintf(tg->version, sizeof tg->version, "%s", g2->version);
            gp_graph_unref(tg->owner);
            tg->owner = gp_graph_ref((gp_graph *)gp_graph_owner(g2));
            GP_LOG(GP_LOG_INFO,
                   "event=traffic_applied graph=%s from=%s to=%s speeds=%zu turns=%zu "
                   "arcs_changed=%u arcs_closed=%u turns_changed=%u build_ms=%.1f attach_ms=%.1f",
                   tg->name, g->version, g2->version, ns, nt, st->arcs_changed, st->arcs_closed,
                   st->turns_changed, st->build_ms, st->attach_ms);
            /* a version's phases, each in its own field (docs/operators.md; the map / turns /
             * customization phases are event=traffic_phases and event=cch_phases before it) */
            GP_LOG(GP_LOG_DEBUG,
                   "event=traffic_version graph=%s to=%s parse_ms=%.1f merge_ms=%.1f build_ms=%.1f "
                   "attach_ms=%.1f publish_ms=%.1f total_ms=%.1f",
                   tg->name, g2->version, tg->parse_ms,
                   (gp_now() - t0) * 1e3 - st->build_ms - st->attach_ms - st->publish_ms,
                   st->build_ms, st->attach_ms, st->publish_ms,
                   tg->parse_ms + (gp_now() - t0) * 1e3);
            tg->parse_ms = 0;
        }
        gp_graph_unref(g2);
        gp_graph_unref(g);
        free(sp);
        free(tp);
        free(ks);
        free(kt);
        if (rc != GP_EBUSY) break; /* another change came first: build again on it */
        gp_err_clear(err);
    }
    return rc;
}

/* Removes the sets of tg for which drop(set) is 1; the count removed. */
static int remove_sets(tr_graph *tg, int (*drop)(const tr_set *, const void *), const void *arg) {
    int k = 0, removed = 0;
    for (int i = 0; i < tg->nsets; i++) {
        if (drop(&tg->sets[i], arg)) {
            set_free(&tg->sets[i]);
            removed++;
        } else tg->sets[k++] = tg->sets[i];
    }
    tg->nsets = k;
    return removed;
}

/* The set view of s (engine/traffic.h). */
static gp_traffic_set view_of(const tr_set *s) {
    return (gp_traffic_set){s->kind == KIND_TURNS, s->entries, s->n};
}

/* The set views of sets[0..n); NULL when out of memory. */
static gp_traffic_set *set_view(const tr_set *sets, int n) {
    gp_traffic_set *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    for (int i = 0; v && i < n; i++) v[i] = view_of(&sets[i]);
    return v;
}

/* Marks `replaced` the sets that the newest set of tg replaces for good: it has every segment and
 * turn of theirs, and it is in force as long as they are (it expires no sooner). They are left
 * out of its version, and removed once it is published. */
static void mark_replaced(tr_graph *tg) {
    const int n = tg->nsets;
    if (n < 2) return; /* no older set */
    const tr_set *s = &tg->sets[n - 1];
    gp_traffic_set *v = malloc(sizeof *v * (size_t)n);
    int *at = malloc(sizeof *at * (size_t)n), k = 0;
    unsigned char *drop = malloc((size_t)n), *cov = calloc((size_t)n, 1);
    for (int i = 0; v && at && drop && cov && i < n - 1; i++) {
        const tr_set *o = &tg->sets[i];
        if (o->kind == s->kind &&
            (s->expires_at <= 0 || (o->expires_at > 0 && o->expires_at <= s->expires_at)))
            at[k] = i, v[k] = view_of(o), drop[k++] = 1;
    }
    if (k) { /* those against the newest alone: the others may expire sooner */
        v[k] = view_of(s), drop[k] = 0;
        if (gp_traffic_covered(v, k + 1, drop, cov) >= 0)
            for (int j = 0; j < k; j++) tg->sets[at[j]].replaced = cov[j];
    }
    free(v);
    free(at);
    free(drop);
    free(cov);
}

static int drop_replaced(const tr_set *s, const void *arg) {
    (void)arg;
    return s->replaced;
}

/* Adds s to tg and applies; on failure removes it again (and frees its entries). The sets it
 * replaces (mark_replaced) go when it is published. */
static int add_and_apply(tr_graph *tg, tr_set *s, gp_traffic_stats *st, char *prev, char *ver,
                         gp_err *err) {
    tr_set *ns = realloc(tg->sets, sizeof *ns * (size_t)(tg->nsets + 1));
    if (!ns) {
        set_free(s);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    tg->sets = ns;
    tg->sets[tg->nsets++] = *s;
    mark_replaced(tg);
    int rc = apply_locked(tg, st, prev, ver, err);
    if (rc != GP_OK) {
        set_free(&tg->sets[--tg->nsets]);
        for (int i = 0; i < tg->nsets; i++) tg->sets[i].replaced = 0;
    } else {
        /* in force from now: its ttl counts from here, so that a file serves its ttl_s however
         * long the new version took (a first version of road-like 24M: seconds) */
        tr_set *a = &tg->sets[tg->nsets - 1];
        double now = wall();
        if (a->expires_at > 0) a->expires_at = now + (a->expires_at - a->applied_at);
        a->applied_at = now;
        int removed = remove_sets(tg, drop_replaced, NULL);
        if (removed)
            GP_LOG(GP_LOG_INFO, "event=traffic_replaced graph=%s sets=%d version=%s", tg->name,
                   removed, tg->version);
    }
    return rc;
}

static int drop_kind(const tr_set *s, const void *arg) { return s->kind == *(const int *)arg; }
static int drop_expired(const tr_set *s, const void *arg) {
    return s->expires_at > 0 && s->expires_at <= *(const double *)arg;
}

static int parse(int kind, const char *text, size_t len, tr_set *s, gp_err *err) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return kind == KIND_SPEEDS
               ? gp_traffic_parse_speeds(text, len, (gp_speed_entry **)&s->entries, &s->n, err)
               : gp_traffic_parse_turns(text, len, (gp_turn_entry **)&s->entries, &s->n, err);
}

/* ---- endpoints ---- */

static void answer_err(gp_req *r, const gp_err *err) {
    if (err->code == GP_ENOMEM) gp_http_error(r, GP_HC_INTERNAL, "%s", err->msg);
    else gp_http_error_err(r, GP_HC_INVALID_QUERY, err);
}

static cJSON *answer_doc(const char *graph, const char *prev, const char *ver,
                         const gp_traffic_stats *st) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "graph", graph);
    cJSON_AddStringToObject(o, "previous_version", prev);
    cJSON_AddStringToObject(o, "version", ver);
    cJSON_AddStringToObject(o, "data_version", ver);
    cJSON_AddNumberToObject(o, "arcs_changed", st->arcs_changed);
    cJSON_AddNumberToObject(o, "arcs_closed", st->arcs_closed);
    cJSON_AddNumberToObject(o, "turns_changed", st->turns_changed);
    cJSON_AddNumberToObject(o, "build_ms", st->build_ms);
    cJSON_AddNumberToObject(o, "attach_ms", st->attach_ms);
    return o;
}

/* Applies job j's set (lock held): as a POST did on its own thread before. */
static void run_job(tr_job *j) {
    gp_err_clear(&j->err);
    tr_graph *tg = find_graph(j->graph, 1);
    if (tg) tg->parse_ms = j->parse_ms;
    j->rc = tg ? add_and_apply(tg, &j->s, &j->st, j->prev, j->ver, &j->err)
               : (set_free(&j->s), gp_err_set(&j->err, GP_ENOMEM, "too many graphs with traffic"));
    j->unknown = j->rc == GP_OK ? tg->sets[tg->nsets - 1].unknown : 0;
    if (tg && !tg->nsets && j->rc != GP_OK) { /* its first set failed: the slot is free again */
        free(tg->sets);
        gp_graph_unref(tg->owner);
        memset(tg, 0, sizeof *tg);
    }
    j->done = 1;
}

static void post(gp_req *r, int kind) {
    const gp_config *cfg = gp_http_config();
    double ttl = (double)cfg->traffic_ttl_s;
    const char *t = gp_req_query(r, "ttl_s");
    if (t) {
        char *end;
        errno = 0;
        ttl = strtod(t, &end);
        if (!*t || *end || errno || !isfinite(ttl) || ttl < 0 || ttl > 31536000) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "ttl_s must be a number of seconds 0..31536000 (0: no expiry), got '%s'",
                          t);
            return;
        }
    }
    size_t len = 0;
    const char *body = gp_req_body(r, &len);
    tr_set s;
    gp_err err;
    gp_err_clear(&err);
    if (!body || !len) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "the body must be a %s file (text/csv)",
                      kind == KIND_SPEEDS ? "segment speed" : "turn penalty");
        return;
    }
    double t_parse = gp_now();
    if (parse(kind, body, len, &s, &err) != GP_OK) {
        gp_http_error(r, err.code == GP_ENOMEM ? GP_HC_INTERNAL : GP_HC_INVALID_QUERY,
                      "%s file: %s (nothing applied)",
                      kind == KIND_SPEEDS ? "segment speed" : "turn penalty", err.msg);
        return;
    }
    t_parse = (gp_now() - t_parse) * 1e3;
    snprintf(s.source, sizeof s.source, "POST");
    s.applied_at = wall();
    s.expires_at = ttl > 0 ? s.applied_at + ttl : 0;
    size_t n = s.n;
    tr_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.graph, sizeof j.graph, "%s", gp_req_graph_name(r));
    j.s = s;
    j.parse_ms = t_parse;
    pthread_mutex_lock(&T.mu);
    if (T.running) { /* one job at a time, on the traffic thread */
        while (T.job) pthread_cond_wait(&T.done_cv, &T.mu);
        T.job = &j;
        pthread_cond_broadcast(&T.cv);
        while (!j.done) pthread_cond_wait(&T.done_cv, &T.mu);
    } else {
        run_job(&j);
    }
    pthread_mutex_unlock(&T.mu);
    int rc = j.rc;
    err = j.err;
    gp_traffic_stats st = j.st;
    char *prev = j.prev, *ver = j.ver;
    size_t unknown = j.unknown;
    if (rc != GP_OK) {
        answer_err(r, &err);
        return;
    }
    gp_req_trim_after(r);
    cJSON *o = answer_doc(gp_req_graph_name(r), prev, ver, &st);
    cJSON_AddNumberToObject(o, "entries", (double)n);
    cJSON_AddNumberToObject(o, "unknown", (double)unknown);
    if (ttl > 0) cJSON_AddNumberToObject(o, "ttl_s", ttl);
    else cJSON_AddNullToObject(o, "ttl_s");
    gp_http_json(r, 200, o);
}

static void del(gp_req *r, int kind) {
    gp_traffic_stats st;
    memset(&st, 0, sizeof st);
    char prev[17] = "", ver[17] = "";
    gp_err err;
    gp_err_clear(&err);
    int rc = GP_OK, removed = 0;
    pthread_mutex_lock(&T.mu);
    tr_graph *tg = find_graph(gp_req_graph_name(r), 0);
    if (tg) {
        removed = remove_sets(tg, drop_kind, &kind);
        rc = apply_locked(tg, &st, prev, ver, &err);
    }
    pthread_mutex_unlock(&T.mu);
    if (rc != GP_OK) {
        answer_err(r, &err);
        return;
    }
    if (!tg) {
        const gp_graph *g = gp_req_graph(r);
        snprintf(prev, sizeof prev, "%s", g->version);
        snprintf(ver, sizeof ver, "%s", g->version);
    }
    gp_req_trim_after(r);
    cJSON *o = answer_doc(gp_req_graph_name(r), prev, ver, &st);
    cJSON_AddNumberToObject(o, "sets_removed", removed);
    gp_http_json(r, 200, o);
}

void gp_h_speeds_post(gp_req *r) { post(r, KIND_SPEEDS); }
void gp_h_turns_post(gp_req *r) { post(r, KIND_TURNS); }
void gp_h_speeds_delete(gp_req *r) { del(r, KIND_SPEEDS); }
void gp_h_turns_delete(gp_req *r) { del(r, KIND_TURNS); }

cJSON *gp_srv_traffic_info(const char *name) {
    cJSON *o = NULL;
    pthread_mutex_lock(&T.mu);
    tr_graph *tg = find_graph(name, 0);
    if (tg && tg->nsets) {
        double now = wall();
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "version", tg->version);
        cJSON *arr[2] = {cJSON_AddArrayToObject(o, kind_name[0]),
                         cJSON_AddArrayToObject(o, kind_name[1])};
        for (int i = 0; i < tg->nsets; i++) {
            const tr_set *s = &tg->sets[i];
            cJSON *e = cJSON_CreateObject();
            char ts[32];
            cJSON_AddStringToObject(e, "source", s->source);
            cJSON_AddNumberToObject(e, "entries", (double)s->n);
            cJSON_AddNumberToObject(e, "unknown", (double)s->unknown);
            gp_render_iso8601(s->applied_at, ts, sizeof ts);
            cJSON_AddStringToObject(e, "applied_at", ts);
            cJSON_AddNumberToObject(e, "age_s", floor(now - s->applied_at));
            if (s->expires_at > 0) {
                gp_render_iso8601(s->expires_at, ts, sizeof ts);
                cJSON_AddStringToObject(e, "expires_at", ts);
            } else cJSON_AddNullToObject(e, "expires_at");
            cJSON_AddItemToArray(arr[s->kind], e);
        }
    }
    pthread_mutex_unlock(&T.mu);
    return o;
}

/* ---- the background thread: expiry, configured files, reloads ---- */

static void check_file(tr_file *f) {
    struct stat sb;
    if (stat(f->path, &sb) != 0) return; /* absent (yet): nothing to read */
    if (f->seen && sb.st_mtim.tv_sec == f->mtime.tv_sec && sb.st_mtim.tv_nsec == f->mtime.tv_nsec &&
        sb.st_size == f->size)
        return;
    gp_graph *g = gp_registry_get(gp_http_registry(), f->graph);
    if (!g) return; /* not loaded yet: read when it is */
    gp_graph_unref(g);
    f->seen = 1;
    f->mtime = sb.st_mtim;
    f->size = sb.st_size;
    FILE *fp = fopen(f->path, "rb");
    char *text = NULL;
    size_t len = 0;
    if (fp && sb.st_size >= 0 && (text = malloc((size_t)sb.st_size + 1)))
        len = fread(text, 1, (size_t)sb.st_size, fp);
    if (fp) fclose(fp);
    gp_err err;
    gp_err_clear(&err);
    tr_set s;
    char source[1040];
    snprintf(source, sizeof source, "file:%s", f->path);
    if (!text) {
        GP_LOG(GP_LOG_WARN, "event=traffic_file_failed graph=%s file=%s error=\"cannot read\"",
               f->graph, f->path);
        return;
    }
    if (parse(f->kind, text, len, &s, &err) != GP_OK) {
        free(text);
        GP_LOG(GP_LOG_WARN, "event=traffic_file_failed graph=%s file=%s error=\"%s\" kept=previous",
               f->graph, f->path, err.msg);
        return;
    }
    free(text);
    snprintf(s.source, sizeof s.source, "%s", source);
    s.applied_at = wall();
    s.expires_at = T.running && gp_http_config()->traffic_ttl_s > 0
                       ? s.applied_at + (double)gp_http_config()->traffic_ttl_s
                       : 0;
    tr_graph *tg = find_graph(f->graph, 1);
    if (!tg) {
        set_free(&s);
        return;
    }
    /* the file's previous set goes; if the new one fails, it is put back */
    tr_set *old = NULL;
    int oi = -1;
    for (int i = 0; i < tg->nsets; i++)
        if (strcmp(tg->sets[i].source, source) == 0) oi = i;
    tr_set keep;
    if (oi >= 0) {
        keep = tg->sets[oi];
        old = &keep;
        memmove(&tg->sets[oi], &tg->sets[oi + 1], sizeof *tg->sets * (size_t)(tg->nsets - oi - 1));
        tg->nsets--;
    }
    gp_traffic_stats st;
    if (add_and_apply(tg, &s, &st, NULL, NULL, &err) != GP_OK) {
        GP_LOG(GP_LOG_WARN, "event=traffic_file_failed graph=%s file=%s error=\"%s\" kept=previous",
               f->graph, f->path, err.msg);
        if (old) {
            tr_set *ns = realloc(tg->sets, sizeof *ns * (size_t)(tg->nsets + 1));
            if (ns) {
                tg->sets = ns;
                memmove(&ns[oi + 1], &ns[oi], sizeof *ns * (size_t)(tg->nsets - oi));
                ns[oi] = keep;
                tg->nsets++;
            } else set_free(&keep);
        }
        return;
    }
    if (old) set_free(old);
}

/* Removes the sets of tg past `now`; their count. Sets whose every entry a newer set in force
 * has too leave what is in force as it was (a feed's file expiring under its successors): then,
 * unless `rebuild`, no version is built (engine/traffic.h gp_traffic_drop_changes) and 0 is
 * returned. */
static int expire(tr_graph *tg, double now, int rebuild) {
    int any = 0;
    for (int i = 0; i < tg->nsets; i++) any |= drop_expired(&tg->sets[i], &now);
    if (!any) return 0;
    unsigned char *drop = rebuild ? NULL : malloc((size_t)tg->nsets);
    unsigned char *cov = rebuild ? NULL : calloc((size_t)tg->nsets, 1);
    int same = 0;
    double t0 = gp_now();
    if (drop && cov) {
        for (int i = 0; i < tg->nsets; i++)
            drop[i] = (unsigned char)drop_expired(&tg->sets[i], &now);
        gp_traffic_set *v = set_view(tg->sets, tg->nsets);
        same = v && gp_traffic_covered(v, tg->nsets, drop, cov) == 0;
        free(v);
    }
    free(drop);
    free(cov);
    int removed = remove_sets(tg, drop_expired, &now);
    if (!same) return removed;
    GP_LOG(GP_LOG_INFO,
           "event=traffic_expired graph=%s sets=%d version=%s unchanged=1 check_ms=%.1f", tg->name,
           removed, tg->version, (gp_now() - t0) * 1e3);
    return 0;
}

static void tick(void) {
    double now = wall();
    for (int i = 0; i < T.nf; i++) check_file(&T.f[i]);
    for (int i = 0; i < MAX_GRAPHS; i++) {
        tr_graph *tg = &T.g[i];
        if (!tg->name[0]) continue;
        gp_graph *g = gp_registry_get(gp_http_registry(), tg->name);
        if (!g) continue; /* not served (now): its traffic waits */
        /* a reload replaced the base: the traffic goes onto the new one */
        int reloaded = tg->nsets && gp_graph_owner(g) != tg->owner;
        gp_graph_unref(g);
        int expired = expire(tg, now, reloaded);
        if (!expired && !reloaded) continue;
        gp_err err;
        gp_err_clear(&err);
        gp_traffic_stats st;
        if (apply_locked(tg, &st, NULL, NULL, &err) != GP_OK)
            GP_LOG(GP_LOG_WARN, "event=traffic_reapply_failed graph=%s error=\"%s\"", tg->name,
                   err.msg);
    }
}

static void *run(void *arg) {
    (void)arg;
    double next_files = 0;
    pthread_mutex_lock(&T.mu);
    while (!T.stop) {
        if (T.job) { /* a POST waits for it */
            run_job(T.job);
            T.job = NULL;
            pthread_cond_broadcast(&T.done_cv);
            continue;
        }
        double now = wall();
        if (T.poll_s > 0 && now >= next_files) {
            tick();
            next_files = now + T.poll_s;
        } else {
            /* expiry and reloads every second; files every poll_s */
            int nf = T.nf;
            T.nf = 0;
            tick();
            T.nf = nf;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        if (!T.job && !T.stop) pthread_cond_timedwait(&T.cv, &T.mu, &ts);
    }
    pthread_mutex_unlock(&T.mu);
    return NULL;
}

/* Adds the NAME=PATH pairs of list (space-separated) as files of kind. */
static int add_files(const char *list, int kind, gp_err *err) {
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        size_t l = strcspn(p, " \t,");
        const char *eq = memchr(p, '=', l);
        if (!eq || eq == p || eq + 1 == p + l || (size_t)(eq - p) > 64 ||
            l - (size_t)(eq - p) > 1023)
            return gp_err_set(err, GP_EINVAL, "traffic_%s_files: '%.*s' must be GRAPH=PATH",
                              kind == KIND_SPEEDS ? "speed" : "turn", (int)l, p);
        if (T.nf == MAX_FILES)
            return gp_err_set(err, GP_EINVAL, "traffic files: at most %d", MAX_FILES);
        tr_file *f = &T.f[T.nf++];
        memset(f, 0, sizeof *f);
        f->kind = kind;
        snprintf(f->graph, sizeof f->graph, "%.*s", (int)(eq - p), p);
        snprintf(f->path, sizeof f->path, "%.*s", (int)(l - (size_t)(eq - p) - 1), eq + 1);
        p += l;
    }
    return GP_OK;
}

int gp_srv_traffic_start(const gp_config *cfg, gp_err *err) {
    pthread_mutex_lock(&T.mu);
    T.nf = 0;
    T.poll_s = (double)cfg->traffic_poll_s;
    T.stop = 0;
    int rc = add_files(cfg->traffic_speed_files, KIND_SPEEDS, err);
    if (rc == GP_OK) rc = add_files(cfg->traffic_turn_files, KIND_TURNS, err);
    pthread_mutex_unlock(&T.mu);
    if (rc != GP_OK) return rc;
    if (pthread_create(&T.th, NULL, run, NULL) != 0)
        return gp_err_set(err, GP_ENOMEM, "cannot start the traffic thread");
    T.running = 1;
    return GP_OK;
}

void gp_srv_traffic_stop(void) {
    if (T.running) {
        pthread_mutex_lock(&T.mu);
        T.stop = 1;
        pthread_cond_signal(&T.cv);
        pthread_mutex_unlock(&T.mu);
        pthread_join(T.th, NULL);
        T.running = 0;
    }
    pthread_mutex_lock(&T.mu);
    if (T.job) { /* handed over as the thread stopped: its POST waits */
        run_job(T.job);
        T.job = NULL;
        pthread_cond_broadcast(&T.done_cv);
    }
    for (int i = 0; i < MAX_GRAPHS; i++) {
        tr_graph *tg = &T.g[i];
        for (int k = 0; k < tg->nsets; k++) set_free(&tg->sets[k]);
        free(tg->sets);
        gp_graph_unref(tg->owner);
        memset(tg, 0, sizeof *tg);
    }
    pthread_mutex_unlock(&T.mu);
}

/* ---- GET /v1/graphs/{graph}/traffic.geojson: the slowed (or sped-up) arcs ---- */

/* The latest expiry among the speed sets in force (0: one of them never expires, or none). */
static double speeds_expire_at(const char *name) {
    double at = 0;
    int any = 0, never = 0;
    pthread_mutex_lock(&T.mu);
    tr_graph *tg = find_graph(name, 0);
    for (int i = 0; tg && i < tg->nsets; i++) {
        if (tg->sets[i].kind != KIND_SPEEDS) continue;
        any = 1;
        if (tg->sets[i].expires_at <= 0) never = 1;
        else if (tg->sets[i].expires_at > at) at = tg->sets[i].expires_at;
    }
    pthread_mutex_unlock(&T.mu);
    return any && !never ? at : 0;
}

/* bbox=minlon,minlat,maxlon,maxlat into b; 0 when absent (b: the whole world), -1 when bad. */
static int parse_bbox(const char *t, double b[4]) {
    b[0] = -180, b[1] = -90, b[2] = 180, b[3] = 90;
    if (!t) return 0;
    const char *p = t;
    for (int k = 0; k < 4; k++) {
        char *end;
        errno = 0;
        b[k] = strtod(p, &end);
        if (end == p || errno || !isfinite(b[k]) || *end != (k < 3 ? ',' : '\0')) return -1;
        p = end + 1;
    }
    return b[0] <= b[2] && b[1] <= b[3] && fabs(b[0]) <= 180 && fabs(b[2]) <= 180 &&
                   fabs(b[1]) <= 90 && fabs(b[3]) <= 90
               ? 1
               : -1;
}

/* The arc's points (tail, shape, head) into a GeoJSON coordinate array; *hit set when one of
 * them lies in the bbox, or the arc's box crosses it. */
static cJSON *arc_line(const gp_graph *g, uint32_t a, const double bb[4], int *hit) {
    const double *sx = NULL, *sy = NULL;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
    uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
    double lo0 = g->lon[u], la0 = g->lat[u], lo1 = lo0, la1 = la0;
    cJSON *c = cJSON_CreateArray();
    for (uint32_t i = 0; c && i < ns + 2; i++) {
        double x = i == 0 ? g->lon[u] : i <= ns ? sx[i - 1] : g->lon[v];
        double y = i == 0 ? g->lat[u] : i <= ns ? sy[i - 1] : g->lat[v];
        lo0 = fmin(lo0, x), lo1 = fmax(lo1, x), la0 = fmin(la0, y), la1 = fmax(la1, y);
        double ll[2] = {gp_round6(x), gp_round6(y)};
        cJSON_AddItemToArray(c, cJSON_CreateDoubleArray(ll, 2));
    }
    *hit = lo1 >= bb[0] && lo0 <= bb[2] && la1 >= bb[1] && la0 <= bb[3];
    return c;
}

void gp_h_traffic_geojson(gp_req *r) {
    const gp_graph *g = gp_req_graph(r), *base = gp_graph_owner(g);
    double bb[4];
    int has_bbox = parse_bbox(gp_req_query(r, "bbox"), bb);
    if (has_bbox < 0) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "bbox must be minlon,minlat,maxlon,maxlat in degrees (min <= max), got '%s'",
                      gp_req_query(r, "bbox"));
        return;
    }
    if (!g->lon || !g->lat) {
        gp_http_error(r, GP_HC_NO_COORDINATES, "graph '%s' has no coordinates",
                      gp_req_graph_name(r));
        return;
    }
    double exp_at = speeds_expire_at(gp_req_graph_name(r));
    cJSON *o = cJSON_CreateObject(), *fs = cJSON_CreateArray();
    char ts[32] = "";
    if (exp_at > 0) gp_render_iso8601(exp_at, ts, sizeof ts);
    cJSON_AddStringToObject(o, "type", "FeatureCollection");
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(o, "data_version", g->version);
    cJSON_AddStringToObject(o, "base_version", base->version);
    uint32_t slowed = 0, closed = 0;
    /* a version with traffic shares the base's arcs (gp_graph_reweight): only weights differ */
    int comparable = g != base && g->m == base->m && g->unit_s > 0;
    for (uint32_t a = 0; o && fs && comparable && a < g->m; a++) {
        if (g->w[a] == base->w[a]) continue;
        int hit = 1;
        cJSON *line = arc_line(g, a, bb, &hit);
        if (!hit) {
            cJSON_Delete(line);
            continue;
        }
        double len = gp_graph_arc_length_m(g, a);
        double t0 = gp_graph_cost(base, base->w[a]) * base->unit_s;
        int shut = g->w[a] == GP_TRAFFIC_CLOSED;
        double t1 = shut ? INFINITY : gp_graph_cost(g, g->w[a]) * g->unit_s;
        double v0 = t0 > 0 ? len / t0 * 3.6 : 0, v1 = shut || !(t1 > 0) ? 0 : len / t1 * 3.6;
        slowed += v1 < v0;
        closed += shut;
        cJSON *f = cJSON_CreateObject(), *geom = cJSON_CreateObject(), *p = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "type", "Feature");
        cJSON_AddStringToObject(geom, "type", "LineString");
        cJSON_AddItemToObject(geom, "coordinates", line);
        cJSON_AddItemToObject(f, "geometry", geom);
        cJSON_AddItemToObject(p, "from", gp_render_node(g, gp_graph_arc_tail(g, a)));
        cJSON_AddItemToObject(p, "to", gp_render_node(g, g->col[a]));
        cJSON_AddNumberToObject(p, "speed_kmh", round(v1 * 10) / 10);
        cJSON_AddNumberToObject(p, "profile_kmh", round(v0 * 10) / 10);
        cJSON_AddNumberToObject(p, "ratio", v0 > 0 ? round(v1 / v0 * 1000) / 1000 : 1);
        cJSON_AddBoolToObject(p, "closed", shut);
        cJSON_AddNumberToObject(p, "length_m", gp_round2(len));
        if (exp_at > 0) cJSON_AddStringToObject(p, "expires_at", ts);
        else cJSON_AddNullToObject(p, "expires_at");
        cJSON_AddItemToObject(f, "properties", p);
        cJSON_AddItemToArray(fs, f);
    }
    cJSON_AddNumberToObject(o, "slowed", slowed);
    cJSON_AddNumberToObject(o, "closed", closed);
    if (exp_at > 0) cJSON_AddStringToObject(o, "expires_at", ts);
    else cJSON_AddNullToObject(o, "expires_at");
    cJSON_AddItemToObject(o, "features", fs);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the traffic");
        return;
    }
    gp_http_send(r, 200, "application/geo+json", s, strlen(s)); /* takes s */
}
