/* registry.h - the served graphs by name (server/registry.c).
 *
 * Each name maps to the current gp_graph plus the spec and options it was loaded from. Readers
 * take a reference (gp_registry_get) and release it with gp_graph_unref when done; a (re)load
 * builds the new graph beside the old one, attaches it to the engine, then swaps the pointer under
 * the registry mutex, so requests in flight finish on the old version and new ones see the new
 * one. A failed load changes nothing and returns the loader's error. Loads are serialised.
 */
#ifndef GP_REGISTRY_H
#define GP_REGISTRY_H

#include "../engine/engine.h"
#include "../graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_registry gp_registry;

/* Source of a graph: the spec and loader options (strings copied). */
typedef struct gp_graph_source {
    char spec[1024];
    double scale;          /* <= 0: the format's default */
    int undirected;
    char cost_rule[16];    /* "" = loader default */
    double ref_bandwidth;  /* <= 0: loader default */
} gp_graph_source;

gp_registry *gp_registry_new(gp_engine *engine);
void gp_registry_free(gp_registry *r); /* drops every graph; accepts NULL */

/* The graph called name with a new reference, or NULL. */
gp_graph *gp_registry_get(gp_registry *r, const char *name);
/* Loads src as name (new or replacing). *replaced is set to 1 when a previous version existed.
 * On failure the previous version (if any) keeps serving. */
int gp_registry_load(gp_registry *r, const char *name, const gp_graph_source *src, int *replaced,
                     gp_err *err);
/* Swaps in g (a derived version of name's graph, e.g. after link cost changes; added for
 * server/h_netops.c) if name's current version is still expect_hash. g gains a reference held by
 * the registry; the recorded source is kept, so a reload re-reads the file and drops the changes.
 * GP_ENOTFOUND when name is absent, GP_EBUSY when another change or reload came first. */
int gp_registry_replace(gp_registry *r, const char *name, gp_graph *g, uint64_t expect_hash,
                        gp_err *err);
/* Re-reads name's recorded source. GP_ENOTFOUND when there is no such graph. */
int gp_registry_reload(gp_registry *r, const char *name, gp_err *err);
/* Removes name (requests holding a reference finish on it). GP_ENOTFOUND when absent. */
int gp_registry_remove(gp_registry *r, const char *name, gp_err *err);
/* Snapshot: up to cap graphs with a reference each and their names (copied into names[i], 65
 * bytes each), sorted by name; returns the count. Caller unrefs each graph. */
int gp_registry_list(gp_registry *r, gp_graph **graphs, char (*names)[65], int cap);
/* The recorded source of name (copied), GP_ENOTFOUND when absent. */
int gp_registry_source(gp_registry *r, const char *name, gp_graph_source *out);
/* Number of successful / failed (re)loads and the count of served graphs. */
void gp_registry_stats(gp_registry *r, uint64_t *loads_ok, uint64_t *loads_failed, int *count);

#ifdef __cplusplus
}
#endif
#endif
