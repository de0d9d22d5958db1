/* registry.h - the served graphs by name (server/registry.c).
 *
 * Each name maps to the current gp_graph plus the spec and options it was loaded from. Readers
 * take a reference (gp_registry_get) and release it with gp_graph_unref when done. Every new
 * version, (re)loaded or derived (gp_registry_replace), takes one publish path: built beside the
 * old one, attached to the engine, then swapped in under the registry mutex, so requests in flight
 * finish on the old version and new ones see the new one. A failed load or replace changes
 * nothing and returns the loader's (or the attach's) error.
 *
 * Bounded loads: a (re)load or removal holds only its own name (per-graph, so a stuck load never
 * blocks other graphs), and the reading itself runs on a detached worker thread under the limits
 * of gp_registry_limits (time, bytes, nodes, arcs, allow-lists). The caller waits until the worker
 * is done, the time limit passes, or gp_registry_cancel (shutdown); then it gives up with
 * GP_ETIMEOUT, sets the worker's cancel flag and leaves it to finish alone (it touches nothing but
 * its own job), so neither other graphs nor shutdown ever wait on a source that does not answer.
 */
#ifndef GP_REGISTRY_H
#define GP_REGISTRY_H

#include "engine/engine.h"
#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_registry gp_registry;

/* Source of a graph: the spec and loader options (strings copied). */
typedef struct gp_graph_source {
    char spec[1024];
    double scale; /* <= 0: the format's default */
    int undirected;
    char cost_rule[16];   /* "" = loader default */
    double ref_bandwidth; /* <= 0: loader default */
    int trusted;          /* configured by the operator (at start): FIFOs and devices allowed */
} gp_graph_source;

/* Limits applied to every load (0 / "" = none). */
typedef struct gp_registry_limits {
    double load_timeout_s; /* config load_timeout_s */
    uint64_t max_bytes;    /* max_graph_bytes */
    uint64_t max_nodes;    /* max_graph_nodes */
    uint64_t max_arcs;     /* max_graph_arcs */
    int max_loads;         /* load workers alive at once (max_concurrent_loads): GP_EBUSY past */
    char allow_dirs[4096]; /* ':'-separated (load_paths); "" allows no file */
    char allow_pg_hosts[1024]; /* ','-separated (load_pg_hosts); "" allows no database */
} gp_registry_limits;
/* The allow-lists and regular_only apply to untrusted sources (admin loads) once limits are set;
 * trusted ones (the operator's configured graphs) are bounded by time, bytes, nodes and arcs only. */

gp_registry *gp_registry_new(gp_engine *engine);
/* Sets the limits (copied); before serving. */
void gp_registry_set_limits(gp_registry *r, const gp_registry_limits *l);
/* Makes every waiting and future load give up at once (shutdown). */
void gp_registry_cancel(gp_registry *r);
/* 1 when name is a safe graph name: 1-64 characters of [A-Za-z0-9_.-], not "." or "..". */
int gp_registry_name_ok(const char *name);
void gp_registry_free(gp_registry *r); /* drops every graph; accepts NULL */

/* The graph called name with a new reference, or NULL. */
gp_graph *gp_registry_get(gp_registry *r, const char *name);
/* Loads src as name (new or replacing). *replaced is set to 1 when a previous version existed.
 * On failure the previous version (if any) keeps serving. */
int gp_registry_load(gp_registry *r, const char *name, const gp_graph_source *src, int *replaced,
                     gp_err *err);
/* Publishes g (a version derived from name's graph, e.g. engine/change.h gp_engine_change_links
 * after link cost changes) if name's current version is still expect_hash: the same path as a
 * load, attach (gp_engine_attach keeps what g already holds, so a version attached by
 * gp_engine_change_links costs nothing more), then swap. g gains a reference held by the
 * registry; the recorded source is kept, so a reload re-reads the file and drops the changes.
 * GP_ENOTFOUND when name is absent, GP_EBUSY when another change or reload came first, or the
 * attach's error; on failure the current version keeps serving. */
int gp_registry_replace(gp_registry *r, const char *name, gp_graph *g, uint64_t expect_hash,
                        gp_err *err);
/* Re-reads name's recorded source. GP_ENOTFOUND when there is no such graph. */
int gp_registry_reload(gp_registry *r, const char *name, gp_err *err);
/* Removes name (requests holding a reference finish on it). GP_ENOTFOUND when absent. */
int gp_registry_remove(gp_registry *r, const char *name, gp_err *err);
/* Snapshot: up to cap graphs with a reference each and their names (copied into names[i], 65
 * bytes each), sorted by name; returns the count. Caller unrefs each graph. */
int gp_registry_list(gp_registry *r, gp_graph **graphs, char (*names)[65], int cap);
/* Regions: for a graph with a routing profile (gp_graph.profile) and coordinates, publishing
 * builds a coarse coverage grid of its roads (cells of about 1 km holding a node or a piece of
 * road; a point is in when its cell or a neighbour is). Sets in[k] to 1 when (lon[k], lat[k])
 * lies in name's road area, else 0, and *area_km2 (may be NULL) to that area. GP_ENOTFOUND (in
 * untouched) when name is absent or has no grid. */
int gp_registry_coverage(gp_registry *r, const char *name, const double *lon, const double *lat,
                         uint32_t n, uint8_t *in, double *area_km2);
/* The recorded source of name (copied), GP_ENOTFOUND when absent. */
int gp_registry_source(gp_registry *r, const char *name, gp_graph_source *out);
/* Number of successful / failed (re)loads and the count of served graphs. */
void gp_registry_stats(gp_registry *r, uint64_t *loads_ok, uint64_t *loads_failed, int *count);

#ifdef __cplusplus
}
#endif
#endif
