/* metric.h - per-request metrics: a road graph's current weights with the arcs a request may not
 * use closed (exclude=motorway,toll; vehicle_height=4 ...), customized like any cost change and
 * kept in a bounded least-recently-used cache.
 *
 * A metric is a reweighted version of the graph the request pinned (gp_graph_reweight: only the
 * two weight arrays are new; a PATCH or traffic version is a graph like any other here) whose
 * closed arcs weigh GP_W_CLOSED, marked closed (graph.h). Attaching it (gp_engine_attach) gives it
 * the reweighted turn graph, in which every turn into a closed arc is closed too, and its CCH
 * customization (on the GPU when CUDA is primary); the CCH reads a closed arc as no arc, the
 * Dijkstra family as a cost no real route reaches, and engine/snap.c answers a cost of
 * GP_W_CLOSED or more as no route, so answers are exactly those of the graph without the arcs.
 *
 * Cache: keyed by the graph (its version hash and identity) and the key below; entries hold a
 * reference to both, so a new base version never meets an old metric; entries whose graph only
 * the cache still holds (replaced, removed) are released when a metric is built, and the least
 * recently used entry past the capacity (config metric_cache_size). Thread-safe; a metric is
 * built under the cache's lock (concurrent first requests for one key build it once).
 */
#ifndef GP_ENGINE_METRIC_H
#define GP_ENGINE_METRIC_H

#include "engine/engine.h"
#include "engine/snap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a request closes: exclusion classes (graph/osm_profile.h GP_OSM_CLASS_* bits) and the
 * vehicle's dimensions quantized as graph.h's arc_limits (rounded up; 0: not given). An arc is
 * closed when it has an excluded class, a limit below the vehicle's (an arc limit of 0 is none),
 * or hgv=no and the vehicle weighs over GP_METRIC_HGV_T tonnes. */
typedef struct gp_metric_key {
    unsigned exclude;
    uint8_t veh[GP_LIMITS];
} gp_metric_key;
#define GP_METRIC_HGV_T 3.5

/* 1 when the key closes nothing (the graph itself answers). */
int gp_metric_key_empty(const gp_metric_key *k);
/* Quantizes a vehicle dimension (metres or tonnes, > 0) of limit k, rounding up; GP_EINVAL when
 * it is not a finite positive number or past the largest storable limit. */
int gp_metric_vehicle(int k, double v, uint8_t *out, gp_err *err);
/* The request parameter of limit k: "vehicle_height", "vehicle_width", "vehicle_length",
 * "vehicle_weight", "vehicle_axleload". */
const char *gp_metric_vehicle_param(int k);
/* Parses vehicle_* text (a decimal number: metres or tonnes) into *out; GP_EINVAL naming the
 * parameter otherwise. */
int gp_metric_parse_vehicle(int k, const char *text, uint8_t *out, gp_err *err);
/* Parses an exclude list ("motorway,toll") for graph g into *bits: every name must be an
 * exclusion class of g's profile (its excludable list; a road graph without a profile, gen:N's,
 * has all three). osrm_sets: the list must also be one of
 * the profile's excludable sets, as OSRM requires (car.lua: one class at a time). GP_EINVAL with
 * a message naming the value and the classes allowed otherwise. An empty list: no bits. */
int gp_metric_parse_exclude(const gp_graph *g, const char *list, int osrm_sets, unsigned *bits,
                            gp_err *err);
/* The key as request parameters ("exclude=motorway&vehicle_height=4"), for messages. */
void gp_metric_key_text(const gp_metric_key *k, char *buf, size_t size);
/* 1 when arc a of g is closed under k. */
int gp_metric_arc_closed(const gp_graph *g, uint32_t a, const gp_metric_key *k);

/* Moves snapped position s of metric m off its closed arcs: a closed direction of a two-way road
 * is dropped; a road closed both ways makes s snap again to the nearest road open in some
 * direction within radius_m of the coordinate. GP_ENOTFOUND when there is none (s unchanged);
 * GP_OK otherwise (also on a graph that is no metric). */
int gp_metric_snap_open(const gp_graph *m, gp_snap *s, double radius_m, gp_err *err);

/* Sets the cache capacity (config metric_cache_size, >= 1; default GP_METRIC_CACHE_DEFAULT);
 * entries past it are released now. */
#define GP_METRIC_CACHE_DEFAULT 16
void gp_metric_cache_size(unsigned n);
/* Drops every cached metric (a graph unloaded, tests). */
void gp_metric_cache_clear(void);
/* Counts since start: metrics built, cache hits, entries now. */
void gp_metric_cache_stats(uint64_t *built, uint64_t *hits, unsigned *entries);

/* *out = the metric of g under k, referenced (release with gp_graph_unref): g itself when k is
 * empty or closes no arc of g, else the cached metric, built and attached to e on first use. Errors are
 * gp_graph_reweight's and gp_engine_attach's. */
int gp_metric_get(gp_engine *e, gp_graph *g, const gp_metric_key *k, gp_graph **out, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
