/* registry.c - name -> current graph, swapped atomically under a mutex (see registry.h).
 *
 * The table is a small array (graphs are few); lookups hold the mutex only for the pointer copy and
 * the reference increment. A (re)load or removal first takes its graph's name (a per-name busy
 * slot, waited for under the load time limit), so two reloads of one graph cannot interleave while
 * other graphs load freely; the slow part (reading the source, building CSR) runs on a detached
 * worker thread holding a reference-counted job, and the caller waits for it with a deadline. Loads
 * and derived versions (gp_registry_replace) then take one publish path on the caller's thread:
 * attach to the engine, then swap. Queries never wait for a reload.
 */
#include "server/registry.h"
#include "graph/spatial.h"
#include "storage/source.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GP_REGISTRY_MAX 256

/* A coarse coverage grid of a graph's roads: cells of cell degrees from (lon0, lat0), one bit
 * each, set where a node, shape point or a sample along a road segment lies. A point is covered
 * when its cell or one of the eight around it is set, so the covered area reaches one to two cells
 * beyond the roads and a point in the gap between two extracts lies in neither. */
typedef struct coverage {
    double lon0, lat0, cell;
    uint32_t nx, ny;
    uint8_t *bits;
    double area_km2; /* the set cells' area */
} coverage;

typedef struct entry {
    char name[65];
    gp_graph *g;
    gp_graph_source src;
    coverage *cov; /* of g, for graphs with a routing profile and coordinates; else NULL */
} entry;

struct gp_registry {
    pthread_mutex_t mu; /* guards entries, n, counters, busy names */
    pthread_cond_t cv;  /* a busy name was released (CLOCK_MONOTONIC) */
    gp_engine *engine;
    entry entries[GP_REGISTRY_MAX];
    int n;
    uint64_t loads_ok, loads_failed;
    char busy[GP_REGISTRY_MAX][65]; /* names being loaded or removed */
    int nbusy;
    int cancelled; /* gp_registry_cancel */
    int limited;   /* gp_registry_set_limits called: allow-lists apply */
    gp_registry_limits lim;
};

/* Load workers alive, across registries (a worker outlives the call that started it). */
static int live_workers;

int gp_registry_name_ok(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 64 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.') return 0;
    return 1;
}

/* ---- coverage ---- */
enum { COV_MAX_CELLS = 1 << 24 }; /* 2 MiB of bits at most: the cell grows to fit */
#define COV_CELL_DEG 0.01         /* about 1.1 km of latitude */

static void cov_free(coverage *c) {
    if (c) free(c->bits);
    free(c);
}

static int cov_xy(const coverage *c, double lon, double lat, int64_t *x, int64_t *y) {
    if (!isfinite(lon) || !isfinite(lat)) return 0;
    *x = (int64_t)floor((lon - c->lon0) / c->cell);
    *y = (int64_t)floor((lat - c->lat0) / c->cell);
    return 1;
}

static void cov_set(coverage *c, double lon, double lat) {
    int64_t x, y;
    if (!cov_xy(c, lon, lat, &x, &y) || x < 0 || y < 0 || x >= c->nx || y >= c->ny) return;
    uint64_t i = (uint64_t)y * c->nx + (uint64_t)x;
    c->bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}

static int cov_get(const coverage *c, int64_t x, int64_t y) {
    if (x < 0 || y < 0 || x >= c->nx || y >= c->ny) return 0;
    uint64_t i = (uint64_t)y * c->nx + (uint64_t)x;
    return (c->bits[i >> 3] >> (i & 7)) & 1;
}

/* Marks the cells along the segment a-b, sampled every half cell. */
static void cov_segment(coverage *c, double lon1, double lat1, double lon2, double lat2) {
    double span = fmax(fabs(lon2 - lon1), fabs(lat2 - lat1));
    if (!isfinite(span)) return;
    uint64_t k = (uint64_t)ceil(span / (c->cell * 0.5));
    if (k > 1000000) k = 1000000; /* a segment across the world marks its samples only */
    for (uint64_t s = 0; s <= k; s++) {
        double t = k ? (double)s / (double)k : 0;
        cov_set(c, lon1 + (lon2 - lon1) * t, lat1 + (lat2 - lat1) * t);
    }
}

/* The coverage grid of g's nodes and road geometry; NULL when g has no coordinates (or no
 * memory: the graph is then picked as if it covered nothing but a request naming it). */
static coverage *cov_build(const gp_graph *g) {
    if (!g->lon || !g->lat || g->n == 0) return NULL;
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (uint32_t u = 0; u < g->n; u++) {
        if (!isfinite(g->lon[u]) || !isfinite(g->lat[u])) continue;
        x0 = fmin(x0, g->lon[u]), x1 = fmax(x1, g->lon[u]);
        y0 = fmin(y0, g->lat[u]), y1 = fmax(y1, g->lat[u]);
    }
    if (!(x0 <= x1 && y0 <= y1)) return NULL;
    coverage *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->cell = COV_CELL_DEG;
    while ((floor((x1 - x0) / c->cell) + 1) * (floor((y1 - y0) / c->cell) + 1) > COV_MAX_CELLS)
        c->cell *= 2;
    c->lon0 = x0, c->lat0 = y0;
    c->nx = (uint32_t)floor((x1 - x0) / c->cell) + 1;
    c->ny = (uint32_t)floor((y1 - y0) / c->cell) + 1;
    c->bits = calloc(((uint64_t)c->nx * c->ny + 7) / 8, 1);
    if (!c->bits) {
        cov_free(c);
        return NULL;
    }
    for (uint32_t u = 0; u < g->n; u++) {
        cov_set(c, g->lon[u], g->lat[u]);
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            double px = g->lon[u], py = g->lat[u];
            if (g->arc_shape && g->shape_lon && g->shape_lat)
                for (uint32_t s = g->arc_shape[a]; s < g->arc_shape[a + 1]; s++) {
                    cov_segment(c, px, py, g->shape_lon[s], g->shape_lat[s]);
                    px = g->shape_lon[s], py = g->shape_lat[s];
                }
            cov_segment(c, px, py, g->lon[g->col[a]], g->lat[g->col[a]]);
        }
    }
    const double km_per_deg = GP_EARTH_RADIUS_M * 3.14159265358979323846 / 180.0 / 1000.0;
    for (uint32_t y = 0; y < c->ny; y++) {
        double lat = c->lat0 + (y + 0.5) * c->cell;
        double cell_km2 = c->cell * km_per_deg * c->cell * km_per_deg * cos(lat * 3.14159265 / 180);
        for (uint32_t x = 0; x < c->nx; x++)
            if (cov_get(c, x, y)) c->area_km2 += cell_km2;
    }
    return c;
}

static int cov_holds(const coverage *c, double lon, double lat) {
    int64_t x, y;
    if (!cov_xy(c, lon, lat, &x, &y)) return 0;
    for (int64_t dy = -1; dy <= 1; dy++)
        for (int64_t dx = -1; dx <= 1; dx++)
            if (cov_get(c, x + dx, y + dy)) return 1;
    return 0;
}

/* 1 when a's and b's coordinates are the same (a derived version keeps its graph's grid). */
static int same_coords(const gp_graph *a, const gp_graph *b) {
    if (a->n != b->n || a->m != b->m || !a->lon || !b->lon || !a->lat || !b->lat) return 0;
    if (a->lon == b->lon && a->lat == b->lat && a->shape_lon == b->shape_lon) return 1;
    return !memcmp(a->lon, b->lon, sizeof *a->lon * a->n) &&
           !memcmp(a->lat, b->lat, sizeof *a->lat * a->n) && !a->shape_lon == !b->shape_lon;
}

gp_registry *gp_registry_new(gp_engine *engine) {
    gp_registry *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    r->engine = engine;
    return r;
}

void gp_registry_set_limits(gp_registry *r, const gp_registry_limits *l) {
    pthread_mutex_lock(&r->mu);
    r->lim = *l;
    r->limited = 1;
    pthread_mutex_unlock(&r->mu);
}

void gp_registry_cancel(gp_registry *r) {
    pthread_mutex_lock(&r->mu);
    r->cancelled = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void gp_registry_free(gp_registry *r) {
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        gp_graph_unref(r->entries[i].g);
        cov_free(r->entries[i].cov);
    }
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

/* Absolute CLOCK_MONOTONIC time min(deadline, now + 100 ms) for a timed wait. */
static struct timespec wait_until(double deadline) {
    double now = gp_now(), t = now + 0.1;
    if (deadline > 0 && deadline < t) t = deadline;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* gp_now is CLOCK_MONOTONIC too */
    double add = t - now;
    if (add < 0) add = 0;
    long ns = ts.tv_nsec + (long)(add * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    return ts;
}

static int busy_index(const gp_registry *r, const char *name) {
    for (int i = 0; i < r->nbusy; i++)
        if (strcmp(r->busy[i], name) == 0) return i;
    return -1;
}

/* Takes name's busy slot, waiting for another load or removal of it until deadline. */
static int acquire_name(gp_registry *r, const char *name, double deadline, gp_err *err) {
    int rc = GP_OK;
    pthread_mutex_lock(&r->mu);
    while (busy_index(r, name) >= 0 && !r->cancelled && !(deadline > 0 && gp_now() >= deadline)) {
        struct timespec ts = wait_until(deadline);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    if (r->cancelled) rc = gp_err_set(err, GP_ETIMEOUT, "the server is stopping");
    else if (busy_index(r, name) >= 0)
        rc = gp_err_set(err, GP_EBUSY,
                        "another load or removal of graph '%s' is still running after "
                        "load_timeout_s = %g s",
                        name, r->lim.load_timeout_s);
    else if (r->nbusy == GP_REGISTRY_MAX)
        rc = gp_err_set(err, GP_EBUSY, "%d loads are in progress", GP_REGISTRY_MAX);
    else snprintf(r->busy[r->nbusy++], sizeof r->busy[0], "%s", name);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static void release_name(gp_registry *r, const char *name) {
    pthread_mutex_lock(&r->mu);
    int i = busy_index(r, name);
    if (i >= 0) {
        if (i != r->nbusy - 1) memcpy(r->busy[i], r->busy[r->nbusy - 1], sizeof r->busy[0]);
        r->nbusy--;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* One load on a worker thread. Two references: the waiting caller's and the worker's; whoever
 * drops the last frees it (and a graph nobody took). The worker touches nothing else. */
typedef struct load_job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs, done;
    int cancel; /* read by the loader through o.cancel */
    char spec[1024], cost_rule[16], allow_dirs[4096], allow_pg_hosts[1024];
    gp_load_opts o;
    gp_graph *g;
    gp_err err;
} load_job;

static void job_release(load_job *j) {
    pthread_mutex_lock(&j->mu);
    int last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (!last) return;
    gp_graph_unref(j->g);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

static void *job_main(void *arg) {
    load_job *j = arg;
    gp_err e;
    gp_err_clear(&e);
    gp_graph *g = gp_graph_load(j->spec, &j->o, &e);
    if (!g && !e.code) gp_err_set(&e, GP_EIO, "load failed");
    pthread_mutex_lock(&j->mu);
    j->g = g;
    j->err = e;
    j->done = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    __atomic_sub_fetch(&live_workers, 1, __ATOMIC_SEQ_CST);
    job_release(j);
    return NULL;
}

static int cancelled(gp_registry *r) {
    pthread_mutex_lock(&r->mu);
    int c = r->cancelled;
    pthread_mutex_unlock(&r->mu);
    return c;
}

/* Runs gp_graph_load(src) on a worker under the limits; *out gets the graph. */
static int load_bounded(gp_registry *r, const gp_graph_source *src, double deadline, gp_graph **out,
                        gp_err *err) {
    *out = NULL;
    pthread_mutex_lock(&r->mu);
    gp_registry_limits lim = r->lim;
    int guarded = r->limited && !src->trusted;
    pthread_mutex_unlock(&r->mu);
    if (lim.max_loads > 0 &&
        __atomic_add_fetch(&live_workers, 1, __ATOMIC_SEQ_CST) > lim.max_loads) {
        __atomic_sub_fetch(&live_workers, 1, __ATOMIC_SEQ_CST);
        return gp_err_set(err, GP_EBUSY,
                          "%d graph loads are still running (max_concurrent_loads = %d)",
                          lim.max_loads, lim.max_loads);
    }
    if (lim.max_loads <= 0) __atomic_add_fetch(&live_workers, 1, __ATOMIC_SEQ_CST);
    load_job *j = calloc(1, sizeof *j);
    if (!j) {
        __atomic_sub_fetch(&live_workers, 1, __ATOMIC_SEQ_CST);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&j->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    j->refs = 2;
    snprintf(j->spec, sizeof j->spec, "%s", src->spec);
    snprintf(j->cost_rule, sizeof j->cost_rule, "%s", src->cost_rule);
    snprintf(j->allow_dirs, sizeof j->allow_dirs, "%s", lim.allow_dirs);
    snprintf(j->allow_pg_hosts, sizeof j->allow_pg_hosts, "%s", lim.allow_pg_hosts);
    gp_load_opts *o = &j->o;
    o->scale = src->scale;
    o->undirected = src->undirected;
    o->cost_rule = j->cost_rule[0] ? j->cost_rule : NULL;
    o->ref_bandwidth = src->ref_bandwidth;
    o->max_bytes = lim.max_bytes;
    o->max_nodes = lim.max_nodes;
    o->max_arcs = lim.max_arcs;
    o->deadline = deadline;
    o->timeout_s = lim.load_timeout_s;
    o->cancel = &j->cancel;
    o->regular_only = guarded;
    o->allow_dirs = guarded ? j->allow_dirs : NULL;
    o->allow_pg_hosts = guarded ? j->allow_pg_hosts : NULL;
    /* turn costs on (the default): OSM turn restrictions go into the turn model, not node copies */
    o->restrictions_as_turns = !r->engine || r->engine->turn_costs;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int started = pthread_create(&th, &at, job_main, j) == 0;
    pthread_attr_destroy(&at);
    if (!started)
        job_main(j); /* no thread to be had: run it here, unbounded, rather than not at all */
    int rc;
    pthread_mutex_lock(&j->mu);
    while (!j->done && !(deadline > 0 && gp_now() >= deadline)) {
        if (cancelled(r)) break;
        struct timespec ts = wait_until(deadline);
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
    }
    if (j->done) {
        *out = j->g;
        j->g = NULL;
        rc = *out ? GP_OK : j->err.code;
        if (err && !*out) *err = j->err;
    } else {
        __atomic_store_n(&j->cancel, 1, __ATOMIC_SEQ_CST);
        rc = cancelled(r) ? gp_err_set(err, GP_ETIMEOUT, "the server is stopping")
                          : gp_err_set(err, GP_ETIMEOUT,
                                       "reading the source took longer than load_timeout_s = %g "
                                       "s; the load was stopped",
                                       lim.load_timeout_s);
    }
    pthread_mutex_unlock(&j->mu);
    job_release(j);
    return rc;
}

static int find(gp_registry *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->entries[i].name, name) == 0) return i;
    return -1;
}

int gp_registry_coverage(gp_registry *r, const char *name, const double *lon, const double *lat,
                         uint32_t n, uint8_t *in, double *area_km2) {
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    const coverage *c = i >= 0 ? r->entries[i].cov : NULL;
    if (c) {
        for (uint32_t k = 0; k < n; k++) in[k] = (uint8_t)cov_holds(c, lon[k], lat[k]);
        if (area_km2) *area_km2 = c->area_km2;
    }
    pthread_mutex_unlock(&r->mu);
    return c ? GP_OK : GP_ENOTFOUND;
}

gp_graph *gp_registry_get(gp_registry *r, const char *name) {
    gp_graph *g = NULL;
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (i >= 0) g = gp_graph_ref(r->entries[i].g);
    pthread_mutex_unlock(&r->mu);
    return g;
}

/* Replacing name needs it present at version expect_hash (under r->mu). */
static int check_current(gp_registry *r, int i, const char *name, uint64_t expect_hash,
                         gp_err *err) {
    if (i < 0) return gp_err_set(err, GP_ENOTFOUND, "no graph named '%s'", name);
    if (r->entries[i].g->hash != expect_hash)
        return gp_err_set(err, GP_EBUSY, "graph '%s' changed meanwhile (now version %s); retry",
                          name, r->entries[i].g->version);
    return GP_OK;
}

/* The one publish path, for loads (src: the source g was read from, recorded with it) and derived
 * versions (src NULL: name must exist at version expect_hash, its recorded source is kept). First
 * attach: gp_engine_attach keeps what g already holds (its device copy, CCH, indexes), so a
 * version that gp_engine_change_links attached costs nothing more here. Then swap under the mutex;
 * the registry takes its own reference to g and the old version goes when the last request in
 * flight drops it. On failure nothing changes. */
static int publish(gp_registry *r, const char *name, gp_graph *g, const gp_graph_source *src,
                   uint64_t expect_hash, int *replaced, gp_err *err) {
    int rc = GP_OK;
    if (!src) { /* no work on a version that could not be swapped in anyway */
        pthread_mutex_lock(&r->mu);
        rc = check_current(r, find(r, name), name, expect_hash, err);
        pthread_mutex_unlock(&r->mu);
        if (rc) return rc;
    }
    if (r->engine && (rc = gp_engine_attach(r->engine, g, err)) != GP_OK) return rc;
    /* the coverage grid, for the OSRM aliases' pick among regions: kept from the current
     * version when the coordinates are the same (a derived version), else built here */
    gp_graph *cur = gp_registry_get(r, name);
    coverage *cov = NULL, *old_cov = NULL;
    int keep_cov = cur && g->profile[0] && same_coords(cur, g);
    if (!keep_cov && g->profile[0]) cov = cov_build(g);
    gp_graph_unref(cur);
    gp_graph *old = NULL;
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (!src) {
        rc = check_current(r, i, name, expect_hash, err);
    } else if (i < 0 && r->n == GP_REGISTRY_MAX) {
        rc = gp_err_set(err, GP_ETOOBIG, "at most %d graphs can be served", GP_REGISTRY_MAX);
    } else if (i < 0) {
        i = r->n++;
        memset(&r->entries[i], 0, sizeof r->entries[i]);
        snprintf(r->entries[i].name, sizeof r->entries[i].name, "%s", name);
    }
    if (rc == GP_OK) {
        old = r->entries[i].g;
        r->entries[i].g = gp_graph_ref(g);
        if (src) r->entries[i].src = *src;
        if (!keep_cov || !old || !same_coords(old, g)) { /* old may differ from cur by now */
            old_cov = r->entries[i].cov;
            r->entries[i].cov = keep_cov ? NULL : cov;
            cov = NULL;
        }
    }
    pthread_mutex_unlock(&r->mu);
    if (replaced) *replaced = old != NULL;
    gp_graph_unref(old);
    cov_free(cov);
    cov_free(old_cov);
    return rc;
}

int gp_registry_load(gp_registry *r, const char *name, const gp_graph_source *src, int *replaced,
                     gp_err *err) {
    if (replaced) *replaced = 0;
    if (!gp_registry_name_ok(name))
        return gp_err_set(
            err, GP_EINVAL,
            "graph name '%.80s' must be 1-64 characters of [A-Za-z0-9_.-], not . or ..", name);
    char shown[1024];
    gp_spec_redact(src->spec, shown, sizeof shown);
    double t0 = gp_now();
    pthread_mutex_lock(&r->mu);
    double timeout = r->lim.load_timeout_s;
    pthread_mutex_unlock(&r->mu);
    double deadline = timeout > 0 ? t0 + timeout : 0;
    int rc = acquire_name(r, name, deadline, err);
    if (rc) {
        GP_LOG(GP_LOG_WARN, "event=graph_load_failed graph=%s spec=%s error=\"%s\"", name, shown,
               err ? err->msg : "");
        return rc;
    }
    gp_graph *g = NULL;
    rc = load_bounded(r, src, deadline, &g, err);
    if (g) rc = publish(r, name, g, src, 0, replaced, err);
    gp_graph_unref(g); /* the registry holds its own reference once published */
    pthread_mutex_lock(&r->mu);
    if (rc) r->loads_failed++;
    else r->loads_ok++;
    pthread_mutex_unlock(&r->mu);
    release_name(r, name);
    if (rc == GP_OK)
        GP_LOG(GP_LOG_INFO, "event=graph_loaded graph=%s spec=%s seconds=%.3f", name, shown,
               gp_now() - t0);
    else
        GP_LOG(GP_LOG_WARN, "event=graph_load_failed graph=%s spec=%s error=\"%s\"", name, shown,
               err ? err->msg : "");
    return rc;
}

int gp_registry_replace(gp_registry *r, const char *name, gp_graph *g, uint64_t expect_hash,
                        gp_err *err) {
    return publish(r, name, g, NULL, expect_hash, NULL, err);
}

int gp_registry_source(gp_registry *r, const char *name, gp_graph_source *out) {
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (i >= 0) *out = r->entries[i].src;
    pthread_mutex_unlock(&r->mu);
    return i >= 0 ? GP_OK : GP_ENOTFOUND;
}

int gp_registry_reload(gp_registry *r, const char *name, gp_err *err) {
    gp_graph_source src;
    if (gp_registry_source(r, name, &src))
        return gp_err_set(err, GP_ENOTFOUND, "no graph named '%s'", name);
    return gp_registry_load(r, name, &src, NULL, err);
}

int gp_registry_remove(gp_registry *r, const char *name, gp_err *err) {
    gp_graph *old = NULL;
    coverage *old_cov = NULL;
    pthread_mutex_lock(&r->mu);
    double timeout = r->lim.load_timeout_s;
    pthread_mutex_unlock(&r->mu);
    int rc = acquire_name(r, name, timeout > 0 ? gp_now() + timeout : 0, err);
    if (rc) return rc;
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (i >= 0) {
        old = r->entries[i].g;
        old_cov = r->entries[i].cov;
        r->entries[i] = r->entries[r->n - 1];
        r->n--;
        memset(&r->entries[r->n], 0, sizeof r->entries[r->n]); /* no stale pointer left behind */
    }
    pthread_mutex_unlock(&r->mu);
    release_name(r, name);
    if (i < 0) return gp_err_set(err, GP_ENOTFOUND, "no graph named '%s'", name);
    gp_graph_unref(old);
    cov_free(old_cov);
    GP_LOG(GP_LOG_INFO, "event=graph_removed graph=%s", name);
    return GP_OK;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

int gp_registry_list(gp_registry *r, gp_graph **graphs, char (*names)[65], int cap) {
    entry *tmp = malloc(sizeof(entry) * GP_REGISTRY_MAX);
    if (!tmp) return 0;
    pthread_mutex_lock(&r->mu);
    int n = r->n;
    for (int i = 0; i < n; i++) {
        tmp[i] = r->entries[i];
        gp_graph_ref(tmp[i].g);
    }
    pthread_mutex_unlock(&r->mu);
    qsort(tmp, (size_t)n, sizeof *tmp, by_name);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (k < cap) {
            graphs[k] = tmp[i].g;
            memcpy(names[k], tmp[i].name, sizeof tmp[i].name);
            k++;
        } else {
            gp_graph_unref(tmp[i].g);
        }
    }
    free(tmp);
    return k;
}

void gp_registry_stats(gp_registry *r, uint64_t *loads_ok, uint64_t *loads_failed, int *count) {
    pthread_mutex_lock(&r->mu);
    if (loads_ok) *loads_ok = r->loads_ok;
    if (loads_failed) *loads_failed = r->loads_failed;
    if (count) *count = r->n;
    pthread_mutex_unlock(&r->mu);
}
