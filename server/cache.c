/* cache.c - the service's side of storage/ (contract in cache.h): its start-up and shutdown, one
 * process-wide gp_cache consulted by the table and apsp handlers (and read by the /admin/cache
 * endpoints of server/v1/admin.c), and the PostgreSQL reload listeners.
 *
 * Reloads from a NOTIFY run on the listener's thread: the payload names a graph (or is empty for
 * every PostgreSQL graph of that database); each matching graph is re-read from its recorded
 * source, or, when it failed to load at start (PostgreSQL was down), loaded from its configured
 * spec, which is how a failed start is retried: the listener reconnects with backoff and then asks
 * for a reload of everything. A failed reload leaves the old version serving. After a successful
 * reload the cache drops the graph's matrices of other versions (they could never be served anyway:
 * the key holds the version).
 */
#include "server/cache.h"

#include "storage/cache.h"
#include "storage/pg.h"
#include "server/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTENERS 16

typedef struct watch {
    char conninfo[1024]; /* the database, gpath's parameters removed */
    gp_pg_listener *l;
} watch;

static struct {
    pthread_mutex_t mu; /* guards failed[] */
    gp_cache *cache;
    const gp_config *cfg;
    gp_registry *reg;
    int nwatch;
    watch w[MAX_LISTENERS];
    char failed[GP_CONFIG_MAX_GRAPHS][65]; /* configured graphs whose start-up load failed */
    int nfailed;
} st = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int is_pg(const char *spec) {
    return strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0;
}

/* The libpq part of a PostgreSQL spec, "" when it is not one or does not parse. */
static void conninfo_of(const char *spec, char *out, size_t cap) {
    out[0] = 0;
    gp_pg_spec s;
    if (!is_pg(spec) || gp_pg_spec_parse(spec, &s, NULL)) return;
    snprintf(out, cap, "%s", s.conninfo);
    gp_pg_spec_free(&s);
}

/* ---- reloads from NOTIFY ---------------------------------------------------------------------- */

/* The version a cached answer is kept under: the graph's, told apart with turn costs (config
 * turn_costs), whose answers differ from the same graph's without. */
static uint64_t cache_hash(const gp_graph *g) {
    return g->hash ^ (g->turns ? 0x7475726e636f7374ULL : 0);
}

static void reload_one(const char *name, const char *cfg_spec) {
    gp_err err;
    gp_err_clear(&err);
    gp_graph *old = gp_registry_get(st.reg, name);
    int rc;
    if (old) {
        gp_graph_unref(old);
        rc = gp_registry_reload(st.reg, name, &err);
    } else {
        gp_graph_source src;
        memset(&src, 0, sizeof src);
        snprintf(src.spec, sizeof src.spec, "%s", cfg_spec);
        src.trusted = 1; /* a configured graph */
        rc = gp_registry_load(st.reg, name, &src, NULL, &err);
    }
    gp_metrics_reload(rc == GP_OK);
    if (rc) {
        GP_LOG(GP_LOG_ERROR, "event=pg_reload_failed graph=%s error=\"%s\"", name, err.msg);
        return;
    }
    gp_graph *g = gp_registry_get(st.reg, name);
    if (g) {
        GP_LOG(GP_LOG_INFO, "event=pg_reload graph=%s version=%s nodes=%u arcs=%u", name,
               g->version, g->n, g->m);
        gp_cache_purge_stale(st.cache, name, cache_hash(g), NULL);
        gp_graph_unref(g);
    }
    /* a graph that failed at start is now in: /ready may turn green */
    pthread_mutex_lock(&st.mu);
    for (int i = 0; i < st.nfailed; i++)
        if (strcmp(st.failed[i], name) == 0) {
            memmove(st.failed[i], st.failed[--st.nfailed], sizeof st.failed[i]);
            pthread_mutex_unlock(&st.mu);
            gp_http_startup_recovered(name);
            return;
        }
    pthread_mutex_unlock(&st.mu);
}

static void on_reload(const char *payload, void *ctx) {
    const watch *w = ctx;
    char ci[1024], spec[1024];
    /* the configured graphs (including those that failed at start), by their current source */
    for (int i = 0; i < st.cfg->ngraphs; i++) {
        const char *name = st.cfg->graphs[i].name;
        if (payload[0] && strcmp(payload, name) != 0) continue;
        gp_graph_source src;
        if (gp_registry_source(st.reg, name, &src) == GP_OK)
            snprintf(spec, sizeof spec, "%s", src.spec);
        else snprintf(spec, sizeof spec, "%s", st.cfg->graphs[i].spec);
        conninfo_of(spec, ci, sizeof ci);
        if (ci[0] && strcmp(ci, w->conninfo) == 0) reload_one(name, spec);
    }
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

int gp_srv_storage_start(const gp_config *cfg, gp_registry *reg, gp_err *err) {
    st.cfg = cfg;
    st.reg = reg;
    if (cfg->cache_path[0]) {
        uint64_t budget = cfg->cache_budget_mb > 0 ? (uint64_t)cfg->cache_budget_mb << 20 : 0;
        st.cache = gp_cache_open(cfg->cache_path, budget, err);
        if (!st.cache) return err ? err->code : GP_EDB;
        gp_cache_stats cs;
        gp_cache_stats_get(st.cache, &cs);
        GP_LOG(GP_LOG_INFO,
               "event=cache path=%s entries=%" PRIu64 " bytes=%" PRIu64 " budget=%" PRIu64 "%s%s",
               cs.path, cs.entries, cs.bytes, cs.budget, cs.enabled ? "" : " disabled=", cs.error);
    }
    for (int i = 0; i < cfg->ngraphs; i++) {
        char ci[1024];
        conninfo_of(cfg->graphs[i].spec, ci, sizeof ci);
        if (!ci[0]) continue;
        int seen = 0;
        for (int k = 0; k < st.nwatch; k++) seen |= strcmp(st.w[k].conninfo, ci) == 0;
        if (seen) continue;
        if (st.nwatch == MAX_LISTENERS) {
            GP_LOG(GP_LOG_WARN, "event=pg_listen_skipped graph=%s reason=\"over %d databases\"",
                   cfg->graphs[i].name, MAX_LISTENERS);
            continue;
        }
        watch *w = &st.w[st.nwatch];
        snprintf(w->conninfo, sizeof w->conninfo, "%s", ci);
        gp_err lerr;
        w->l = gp_pg_listen_start(cfg->graphs[i].spec, on_reload, w, &lerr);
        if (!w->l) {
            GP_LOG(GP_LOG_WARN, "event=pg_listen_failed graph=%s error=\"%s\"", cfg->graphs[i].name,
                   lerr.msg);
            continue;
        }
        st.nwatch++;
    }
    return GP_OK;
}

void gp_srv_storage_note_failed(const char *name) {
    pthread_mutex_lock(&st.mu);
    if (st.nfailed < GP_CONFIG_MAX_GRAPHS)
        snprintf(st.failed[st.nfailed++], sizeof st.failed[0], "%s", name);
    pthread_mutex_unlock(&st.mu);
}

gp_cache *gp_srv_cache(void) { return st.cache; }

uint64_t gp_srv_cache_version(const gp_graph *g) { return cache_hash(g); }

void gp_srv_storage_stop(void) {
    for (int i = 0; i < st.nwatch; i++) gp_pg_listen_stop(st.w[i].l);
    st.nwatch = 0;
    gp_cache_close(st.cache);
    st.cache = NULL;
}

/* ---- the table / apsp handlers' cache ------------------------------------------------------------ */

static gp_cache_key make_key(gp_req *r, int kind, const uint32_t *src, uint32_t ns,
                             const uint32_t *dst, uint32_t nt, int next_hops) {
    gp_cache_key k = {.graph = gp_req_graph_name(r),
                      .graph_hash = cache_hash(gp_req_graph(r)),
                      .kind = kind,
                      .src = src,
                      .ns = ns,
                      .dst = dst,
                      .nt = nt,
                      .next_hops = next_hops};
    return k;
}

int gp_srv_cache_lookup(gp_req *r, int kind, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                        uint32_t nt, int next_hops, uint64_t *dist, uint32_t *next) {
    if (!st.cache) return 0;
    gp_cache_key k = make_key(r, kind, src, ns, dst, nt, next_hops);
    int hit = gp_cache_get(st.cache, &k, dist, next) == GP_OK;
    gp_metrics_cache(hit);
    gp_req_add_header(r, "X-Gpath-Cache", hit ? "hit" : "miss");
    return hit;
}

void gp_srv_cache_store(gp_req *r, int kind, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                        uint32_t nt, int next_hops, const uint64_t *dist, const uint32_t *next) {
    if (!st.cache) return;
    gp_cache_key k = make_key(r, kind, src, ns, dst, nt, next_hops);
    gp_err err;
    gp_cache_put(st.cache, &k, dist, next, &err); /* logged inside; the answer goes out anyway */
}
