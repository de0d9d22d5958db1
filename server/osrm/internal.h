/* internal.h - what the files of the OSRM handler family (server/osrm/) share: OSRM's error
 * body and the parsed request (graph resolved from {profile}, snapped coordinates, options) of
 * request.c, and route legs built from snapped routes and their JSON (route.c, alt.c). The
 * handlers (osrm.c, trip.c) call both; route.c calls request.c; request.c calls neither. Not used
 * outside that family.
 *
 * Units: a graph's weights are stored units; OSRM's `duration` is seconds = cost * unit_s when the
 * weights are travel times (graph.h), else the cost itself in the input's units (documented);
 * `distance` is metres along the road geometry; `weight` is gp_osrm_weight's (seconds on graphs of
 * travel times, as OSRM's).
 */
#ifndef GP_OSRM_INTERNAL_H
#define GP_OSRM_INTERNAL_H

#include "engine/metric.h"
#include "engine/snap.h"
#include "server/http/http.h"
#include "server/api/arcs.h"
#include "server/api/geom.h"
#include "server/api/render.h"
#include "server/http/json.h"

#include <cjson/cJSON.h>

/* OSRM's error answer: HTTP status (400 for every OSRM code but internal errors) and
 * {"code": code, "message": ...}. */
void gp_osrm_error(gp_req *r, int status, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Maps an engine failure (gp_err) to OSRM's codes: timeouts, busy and device errors keep their
 * HTTP status with gpath's code names. */
void gp_osrm_error_err(gp_req *r, const gp_err *err);

/* Output geometry format. */
enum { GP_GEOM_POLYLINE = 0, GP_GEOM_POLYLINE6, GP_GEOM_GEOJSON };

/* A parsed OSRM request. The getter reads an option: the query string for GET, body fields turned
 * into OSRM's text form for POST. */
typedef struct gp_osrm_req {
    gp_req *r;
    gp_graph *g; /* referenced; released by gp_osrm_req_free */
    char graph_name[65];
    const cJSON *body; /* POST body, or NULL */
    uint32_t n;        /* coordinates */
    double *lon, *lat;
    gp_snap *snap;  /* n snapped positions (after gp_osrm_snap_all) */
    int geometries; /* GP_GEOM_* */
    int skip_waypoints, generate_hints;
    int snap_any;    /* snapping=any: small components too (gp_snap_big) */
    double *bearing; /* after gp_osrm_snap_all: n pairs (bearing, range), bearing -1 when none */
    /* exclude= and vehicle_* (engine/metric.h): g is then the metric of base under key */
    gp_metric_key key;
    gp_graph *base; /* the graph asked for (referenced) when g is a metric, else NULL */
    int no_points;  /* gp_osrm_route_legs builds legs without their line (pts empty): nothing of
                     * the answer reads it (route: no overview, steps, annotations, alternatives) */
} gp_osrm_req;
/* Why no route joins snapped positions a and b under the request's key: the exclude class or
 * vehicle limit that alone leaves none ("vehicle_height=4"), or the whole key; "" when the graph
 * itself has no route either. */
void gp_osrm_closed_why(gp_osrm_req *q, const gp_snap *a, const gp_snap *b, char *buf, size_t size);

/* What gp_osrm_pick_graph found. */
enum {
    GP_OSRM_PICK_OK = 0,
    GP_OSRM_PICK_NOGRAPH, /* profile names no graph and no graph has that profile: InvalidQuery */
    GP_OSRM_PICK_NONE,    /* a coordinate lies in no region of the profile: NoSegment */
    GP_OSRM_PICK_MIXED    /* the coordinates lie in different regions: InvalidQuery */
};
/* The graph that {profile} names for coordinates lon/lat[0..n): a served graph of that name; else
 * among the graphs whose gp_graph.profile is the alias's (driving/car -> car, cycling/bike ->
 * bicycle, walking/foot -> foot, truck/hgv -> truck) the one whose road area (the registry's
 * coverage grid, gp_registry_coverage) holds every coordinate, the smallest such area when several
 * do; one graph of that profile is picked whatever the coordinates (snapping answers then), and
 * with n == 0 the first by name. With exactly one graph served, any profile resolves to it. On
 * GP_OSRM_PICK_OK *out holds a reference and name[65] its name; otherwise *out is NULL and why
 * says what failed, naming the regions (the caller answers; tiles may answer an empty tile). */
int gp_osrm_pick_graph(const char *profile, const double *lon, const double *lat, uint32_t n,
                       gp_graph **out, char name[65], char *why, size_t size);

/* OSRM's turn type and modifier (internal names, as the tile service's turns layer writes them:
 * "turn", "new name", "(suppressed)", "enter roundabout", ...) of driving arc A then arc B at
 * their node, t the turn angle (degrees, -180..180, positive right); guidance.c. */
const char *gp_osrm_turn_type(const gp_graph *g, uint32_t A, uint32_t B, double t,
                              const char **mod);
/* 1 for a graph whose weights are no travel times nor road costs (router topologies: hops, or a
 * cost rule of graphml / sndlib / rocketfuel): the OSRM services refuse it (400 InvalidQuery
 * naming it) rather than answer hops as seconds. */
int gp_osrm_no_durations(const gp_graph *g);
/* OSRM's `weight_name` and `weight`: on graphs of travel times the weight is seconds (as OSRM's,
 * whose car weight is its duration plus penalties gpath does not have), named as OSRM's profiles
 * name it (car "routability", bicycle "cyclability", others "duration"); on other graphs the cost
 * in input units, named by the unit ("metres", "cost"). */
const char *gp_osrm_weight_name(const gp_graph *g);
double gp_osrm_weight(const gp_graph *g, uint64_t cost);

/* Resolves {profile}, parses {coordinates} ("lon,lat;..." or "polyline(...)"/"polyline6(...)",
 * an optional ".json" suffix) and the options every service shares. max_coords is the service's
 * limit (its config key named in the error). On failure answers and returns 0. */
/* The version the answer names as data_version: the graph asked for, also when q->g is a
 * per-request metric of it (exclude=, vehicle_*). */
#define GP_OSRM_DATA_VERSION(q) ((q)->base ? (q)->base->version : (q)->g->version)
int gp_osrm_req_init(gp_osrm_req *q, gp_req *r, const char *coords, long max_coords,
                     const char *limit_key);
void gp_osrm_req_free(gp_osrm_req *q);
/* An option's text (query string or POST body), NULL when absent. A POST string is returned as
 * is; other POST values are written into buf, and one that does not fit (or an object) reads as
 * a text no option accepts, so the option's check answers 400 naming it (never "absent"). */
const char *gp_osrm_opt(gp_osrm_req *q, const char *name, char *buf, size_t size);
/* Snaps every coordinate honouring radiuses, bearings and approaches (each, and hints, none or
 * one item per coordinate, read whole); answers NoSegment / InvalidValue / InvalidOptions and
 * returns 0 on failure. */
int gp_osrm_snap_all(gp_osrm_req *q);
/* 1 when OSRM's service (route, table, nearest, trip) knows option name (request.c's table: the
 * options every service shares and the service's own); gp_osrm_req_init answers any other with
 * 400 InvalidQuery naming it. */
int gp_osrm_option_known(const char *service, const char *name);
/* 1 when the road of snapped position s (its arc, or the arc's reverse when the road is two-way)
 * runs within range degrees of bearing want at s (whole degrees, as OSRM). */
int gp_osrm_bearing_fits(const gp_graph *g, const gp_snap *s, double want, double range);
/* Parses a decimal number (strtod, the whole text); 0 on success. */
int gp_osrm_parse_double(const char *s, double *out);
/* Parses an index list option ("0;2;5", a POST array, or "all"), read whole whatever its length:
 * at most n entries, each an index below n (leading zeros allowed, as OSRM). *idx malloc'd (NULL
 * + *k = n for all/absent). On a bad list answers 400 InvalidOptions naming it, returns 0. */
int gp_osrm_index_list(gp_osrm_req *q, const char *name, uint32_t n, uint32_t **idx, uint32_t *k);

/* A waypoint object {hint?, distance, name, location} for snapped position s. */
cJSON *gp_osrm_waypoint(const gp_osrm_req *q, const gp_snap *s);
/* gp_osrm_waypoint's text written straight into b, the object left open (no closing brace) for
 * the caller's members. */
void gp_osrm_waypoint_write(gp_json_out *b, const gp_osrm_req *q, const gp_snap *s);

/* ---- legs (route.c) ---- */
/* A piece of one arc traversed from fraction f0 to f1 of its length. */
typedef struct gp_osrm_piece {
    uint32_t arc;
    uint32_t tail; /* the arc's tail (gp_graph_arc_tail, known when the leg is built) */
    double f0, f1;
    uint64_t cost; /* stored units */
    double dist_m;
    size_t p0, p1; /* its points in the leg's point list */
} gp_osrm_piece;

typedef struct gp_osrm_leg {
    gp_pts pts;
    gp_osrm_piece *pc;
    size_t npc, cap; /* pieces, allocated */
    uint64_t cost;
    double dist_m;
    const gp_snap *a, *b;
} gp_osrm_leg;

/* Builds the leg of route rt between snapped positions a and b. -1 when out of memory. */
int gp_osrm_leg_build(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                      const gp_snap_route *rt, gp_osrm_leg *leg);
/* gp_osrm_leg_build, without the leg's line (pts empty; the pieces' lengths and costs the same)
 * when !points: for an answer that reads no line (!gp_osrm_opts_lines). */
int gp_osrm_leg_build_lines(const gp_graph *g, const gp_snap *a, const gp_snap *b,
                            const gp_snap_route *rt, int points, gp_osrm_leg *leg);
void gp_osrm_leg_free(gp_osrm_leg *leg);
/* Appends leg x to leg m (x is freed, also on failure); m ends where x ends. -1 when out of
 * memory (m is then freed too). */
int gp_osrm_leg_append(gp_osrm_leg *m, gp_osrm_leg *x);
/* Up to max_alt alternatives to the best leg between its two positions (alt.c) into out;
 * returns the count. Engine failures just mean fewer alternatives. */
size_t gp_osrm_alternatives(gp_osrm_req *q, const gp_osrm_leg *best, size_t max_alt,
                            gp_osrm_leg *out);

/* 1 when leg drives an arc and then the same road back (a U-turn inside the leg; node copies of
 * turn restrictions count as their original node). */
int gp_osrm_leg_has_uturn(const gp_graph *g, const gp_osrm_leg *leg);

typedef struct gp_osrm_route_opts {
    int steps;
    int overview; /* 0 false, 1 simplified, 2 full */
    int ann_duration, ann_distance, ann_nodes, ann_speed, ann_weight, ann_datasources;
    int continue_straight; /* -1 default (the profile's: true for car), 0 false, 1 true; the
                              legs follow it (gp_osrm_continue_straight) */
} gp_osrm_route_opts;
/* 1 when a route object under options o reads its legs' lines (overview, steps, annotations). */
int gp_osrm_opts_lines(const gp_osrm_route_opts *o);
/* The OSRM route object {geometry?, legs, weight_name, weight, duration, distance} of nleg legs. */
cJSON *gp_osrm_route_json(const gp_osrm_req *q, const gp_osrm_leg *legs, size_t nleg,
                          const gp_osrm_route_opts *o);
/* gp_osrm_route_json's text written straight into b (steps and annotations through their trees),
 * the object left open (no closing brace) for the caller's members. */
void gp_osrm_route_write(gp_json_out *b, const gp_osrm_req *q, const gp_osrm_leg *legs, size_t nleg,
                         const gp_osrm_route_opts *o);
/* A geometry in the request's format (polyline, polyline6 or GeoJSON) of n points. */
cJSON *gp_osrm_geometry_json(const gp_osrm_req *q, const double *lon, const double *lat, size_t n);
/* OSRM's mode of the graph's profile: "driving", "cycling" or "walking". */
const char *gp_osrm_mode(const gp_graph *g);
/* Appends the steps of a leg (depart ... arrive, guidance.c) to arr; summary gets the leg's
 * summary (its two longest named roads, in route order). */
void gp_osrm_leg_steps(const gp_osrm_req *q, const gp_osrm_leg *leg, cJSON *arr, char *summary,
                       size_t size);
/* Parses steps / overview / annotations; answers and returns 0 on a bad value. */
int gp_osrm_route_opts_parse(gp_osrm_req *q, gp_osrm_route_opts *o);
/* Routes between snapped positions s[order[i]] and s[order[i+1]] into legs[0..k-2], the legs
 * chosen together under continue_straight when straight (gp_engine_route_via); on failure
 * answers (NoRoute / engine error) and returns 0, legs freed. */
int gp_osrm_route_legs(gp_osrm_req *q, const uint32_t *order, uint32_t k, int straight,
                       gp_osrm_leg *legs);
/* continue_straight of the request (validated before): true 1, false 0, default the profile's
 * (OSRM v6: car 1, bicycle and foot 0). */
int gp_osrm_continue_straight(gp_osrm_req *q);

#endif
