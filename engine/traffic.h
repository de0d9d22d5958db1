/* traffic.h - live traffic in OSRM's file formats (engine/traffic.c): segment speed files and turn
 * penalty files parsed, mapped onto a road graph and applied as a new metric version.
 *
 * Speeds: lines `from_osm_id,to_osm_id,speed_kmh[,rate[,anything]]`, one directed segment between
 * two consecutive OSM nodes of a way (osrm-contract --segment-speed-file). A road arc of gpath
 * collapses a chain of OSM nodes (its tail, its shape points, its head), so a segment is the part
 * of one arc between two of them: the arc's new time is the sum over its segments, a segment with
 * a speed taking length / speed, the others their share (by length) of the arc's profile time.
 * Speed 0 closes the segment (GP_TRAFFIC_CLOSED, as OSRM makes it unroutable). gpath routes by
 * duration, so `rate` (OSRM's weight of non-duration profiles) is checked and otherwise unused.
 *
 * Turn penalties: lines `from_osm_id,via_osm_id,to_osm_id,penalty_s[,weight[,anything]]` (osrm-
 * contract --turn-penalty-file): the turn from the segment from->via onto the segment via->to costs
 * penalty_s instead of the profile's turn cost (negative penalties count as 0). They change the
 * arcs of the turn graph (graph/turns.h) and need it (turn_costs = on).
 *
 * Applying: a version of the graph's base (its profile weights) with every entry given (a later
 * entry of the same segment or turn wins), derived as gp_graph_reweight (snap index, names,
 * shapes shared with the base), its turn graph as gp_turns_reweight plus the penalties, attached
 * to the engine (CCH customization, on the GPU where there is one): never a rebuild. The caller
 * publishes it (server/registry.h gp_registry_replace).
 */
#ifndef GP_ENGINE_TRAFFIC_H
#define GP_ENGINE_TRAFFIC_H

#include "engine/engine.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The weight of a closed arc: the CCH reads it as "no arc". */
#define GP_TRAFFIC_CLOSED UINT32_MAX

typedef struct gp_speed_entry {
    int64_t from, to; /* OSM node ids, directed */
    double kmh;       /* >= 0; 0 closes the segment */
} gp_speed_entry;

typedef struct gp_turn_entry {
    int64_t from, via, to; /* OSM node ids */
    double penalty_s;      /* seconds (finite) */
} gp_turn_entry;

/* Parses a whole file (text, len bytes, not necessarily NUL-terminated). *out (malloc'd) and *n
 * set on GP_OK; on a malformed line GP_EINVAL with err "line N: ..." and nothing returned. Empty
 * lines and a trailing \r are accepted; a file without any entry is GP_EINVAL. */
int gp_traffic_parse_speeds(const char *text, size_t len, gp_speed_entry **out, size_t *n,
                            gp_err *err);
int gp_traffic_parse_turns(const char *text, size_t len, gp_turn_entry **out, size_t *n,
                           gp_err *err);

/* What one application did. */
typedef struct gp_traffic_stats {
    size_t speeds_unknown;  /* speed entries matching no segment of the graph */
    size_t turns_unknown;   /* turn entries matching no turn */
    uint32_t arcs_changed;  /* road arcs whose weight changed */
    uint32_t arcs_closed;   /* road arcs closed (a segment at speed 0) */
    uint32_t turns_changed; /* turn-graph arcs given a penalty */
    double build_ms;        /* mapping and weights */
    double attach_ms;       /* engine attach (customization) */
    double publish_ms;      /* the version made the graph's (server: the registry's swap) */
} gp_traffic_stats;

/* *out = the base of g (gp_graph_owner) with speeds sp[0..ns) and turn penalties tp[0..nt)
 * applied, attached to e; the caller owns the reference. known_sp / known_tp (may be NULL) get 1
 * for each entry that matched. When the weights come out as g's own (the same version: a file
 * sent again, an expiry that newer files cover), *out is g itself (another reference) and nothing
 * is customized. GP_EINVAL when g's weights are no times (unit_s == 0), when turn penalties are
 * given and g has no turn graph (turn costs off), or when a weight overflows. */
int gp_traffic_apply(gp_engine *e, const gp_graph *g, const gp_speed_entry *sp, size_t ns,
                     const gp_turn_entry *tp, size_t nt, gp_graph **out, unsigned char *known_sp,
                     unsigned char *known_tp, gp_traffic_stats *st, gp_err *err);

/* One set of entries in force (a file, a POST), in the order the sets came: a later set's entry
 * of a segment or turn wins over an earlier one's. */
typedef struct gp_traffic_set {
    int turns;           /* 0: gp_speed_entry, 1: gp_turn_entry */
    const void *entries; /* n of them */
    size_t n;
} gp_traffic_set;

/* For each set i of sets[0..nsets) with drop[i]: covered[i] = 1 when every segment and turn of
 * it is also in a later set that is not dropped (so that taking it out changes nothing in force:
 * a file expiring under newer ones, or one that a newer file with a later expiry replaces), else
 * 0. Returns the count of dropped sets not covered (0: dropping them all changes nothing), -1
 * when out of memory. */
int gp_traffic_covered(const gp_traffic_set *sets, int nsets, const unsigned char *drop,
                       unsigned char *covered);

#ifdef __cplusplus
}
#endif
#endif
