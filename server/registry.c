/* registry.c - name -> current graph, swapped atomically under a mutex (see registry.h).
 *
 * The table is a small array (graphs are few); lookups hold the mutex only for the pointer copy and
 * the reference increment. A separate load mutex serialises (re)loads so two reloads of the same
 * graph cannot interleave; the slow part (reading the file, building CSR, copying to the GPU) runs
 * without the table mutex, so queries never wait for a reload.
 */
#include "registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GP_REGISTRY_MAX 256

typedef struct entry {
    char name[65];
    gp_graph *g;
    gp_graph_source src;
} entry;

struct gp_registry {
    pthread_mutex_t mu;      /* guards entries, n, counters */
    pthread_mutex_t load_mu; /* serialises loads */
    gp_engine *engine;
    entry entries[GP_REGISTRY_MAX];
    int n;
    uint64_t loads_ok, loads_failed;
};

gp_registry *gp_registry_new(gp_engine *engine) {
    gp_registry *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->load_mu, NULL);
    r->engine = engine;
    return r;
}

void gp_registry_free(gp_registry *r) {
    if (!r) return;
    for (int i = 0; i < r->n; i++) gp_graph_unref(r->entries[i].g);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->load_mu);
    free(r);
}

static int find(gp_registry *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->entries[i].name, name) == 0) return i;
    return -1;
}

gp_graph *gp_registry_get(gp_registry *r, const char *name) {
    gp_graph *g = NULL;
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (i >= 0) g = gp_graph_ref(r->entries[i].g);
    pthread_mutex_unlock(&r->mu);
    return g;
}

int gp_registry_load(gp_registry *r, const char *name, const gp_graph_source *src, int *replaced,
                     gp_err *err) {
    if (strlen(name) >= sizeof r->entries[0].name)
        return gp_err_set(err, GP_EINVAL, "graph name '%s' is too long", name);
    pthread_mutex_lock(&r->load_mu);
    gp_load_opts o;
    memset(&o, 0, sizeof o);
    o.scale = src->scale;
    o.undirected = src->undirected;
    o.cost_rule = src->cost_rule[0] ? src->cost_rule : NULL;
    o.ref_bandwidth = src->ref_bandwidth;
    double t0 = gp_now();
    gp_graph *g = gp_graph_load(src->spec, &o, err);
    int rc = g ? GP_OK : (err && err->code ? err->code : GP_EIO);
    if (g && r->engine) {
        rc = gp_engine_attach(r->engine, g, err);
        if (rc) {
            gp_graph_unref(g);
            g = NULL;
        }
    }
    gp_graph *old = NULL;
    pthread_mutex_lock(&r->mu);
    if (g) {
        int i = find(r, name);
        if (i < 0 && r->n == GP_REGISTRY_MAX) {
            rc = gp_err_set(err, GP_ETOOBIG, "at most %d graphs can be served", GP_REGISTRY_MAX);
        } else {
            if (i < 0) {
                i = r->n++;
                memset(&r->entries[i], 0, sizeof r->entries[i]);
                snprintf(r->entries[i].name, sizeof r->entries[i].name, "%s", name);
            }
            old = r->entries[i].g;
            r->entries[i].g = g;
            r->entries[i].src = *src;
            g = NULL;
        }
    }
    if (rc) r->loads_failed++;
    else r->loads_ok++;
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&r->load_mu);
    if (replaced) *replaced = old != NULL;
    gp_graph_unref(g);   /* only when the table was full */
    gp_graph_unref(old); /* freed once the last request in flight drops it */
    if (rc == GP_OK)
        GP_LOG(GP_LOG_INFO, "event=graph_loaded graph=%s spec=%s seconds=%.3f", name, src->spec,
               gp_now() - t0);
    else
        GP_LOG(GP_LOG_WARN, "event=graph_load_failed graph=%s spec=%s error=\"%s\"", name,
               src->spec, err ? err->msg : "");
    return rc;
}

int gp_registry_replace(gp_registry *r, const char *name, gp_graph *g, uint64_t expect_hash,
                        gp_err *err) {
    gp_graph *old = NULL;
    int rc = GP_OK;
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (i < 0) {
        rc = gp_err_set(err, GP_ENOTFOUND, "no graph named '%s'", name);
    } else if (r->entries[i].g->hash != expect_hash) {
        rc = gp_err_set(err, GP_EBUSY, "graph '%s' changed meanwhile (now version %s); retry",
                        name, r->entries[i].g->version);
    } else {
        old = r->entries[i].g;
        r->entries[i].g = gp_graph_ref(g);
    }
    pthread_mutex_unlock(&r->mu);
    gp_graph_unref(old);
    return rc;
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
    pthread_mutex_lock(&r->load_mu);
    pthread_mutex_lock(&r->mu);
    int i = find(r, name);
    if (i >= 0) {
        old = r->entries[i].g;
        r->entries[i] = r->entries[r->n - 1];
        r->n--;
        memset(&r->entries[r->n], 0, sizeof r->entries[r->n]); /* no stale pointer left behind */
    }
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&r->load_mu);
    if (i < 0) return gp_err_set(err, GP_ENOTFOUND, "no graph named '%s'", name);
    gp_graph_unref(old);
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
