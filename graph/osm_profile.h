/* osm_profile.h - routing profiles for OpenStreetMap data: which ways a car, a bicycle or a
 * pedestrian may use, in which directions and how fast, which node barriers stop them and which
 * turn restrictions they obey. The rules are those of OSRM v6's car.lua, bicycle.lua and foot.lua,
 * declared as data (no Lua).
 *
 * Each profile is one declarative table (graph/osm_profile.c, where every rule is documented next
 * to its row; docs/graphs.md lists them); the functions below evaluate an object's tags against
 * it. Evaluating is pure: the tables are constant and any number of threads may evaluate at once.
 */
#ifndef GP_OSM_PROFILE_H
#define GP_OSM_PROFILE_H

#include "graph/graph.h"
#include "graph/osm_read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One tag value with a number (a speed in km/h, a factor), lists end with value NULL. */
typedef struct gp_osm_kv {
    const char *value;
    double v;
} gp_osm_kv;

/* One routable key=value (highway=primary, railway=platform, amenity=parking, ...). */
typedef struct gp_osm_class {
    const char *key;   /* "highway", "railway", "amenity", "man_made", "leisure", ... */
    const char *value; /* its value */
    int cls;           /* enum gp_road_class */
    double kmh;        /* speed on it; 0: routable only with an access tag (at default_kmh) */
    int kind;          /* GP_OSM_RIDE, or GP_OSM_PUSH: a bicycle is pushed here at kmh */
} gp_osm_class;
enum { GP_OSM_RIDE = 0, GP_OSM_PUSH = 1 };

/* Node rules beyond the barrier list (node_rules bits). */
enum {
    GP_OSM_NODE_KERB_OK = 1,     /* barrier=kerb with kerb=lowered|flush, or highway=crossing */
    GP_OSM_NODE_CROSSING_OK = 2, /* a denying access tag on a highway=crossing node does not stop */
};

typedef struct gp_osm_profile {
    const char *name;            /* "car", "bicycle", "foot" */
    const gp_osm_class *classes; /* ended by key NULL */
    double default_kmh; /* another highway=* value (or a class of kmh 0) with an allowing access
                           tag; 0: none */
    const char *const *access_keys;  /* most specific first; the first one tagged decides */
    int access_directional;          /* 1: KEY:forward / KEY:backward are read too */
    const char *const *access_allow; /* values giving default_kmh; NULL: any value not denied */
    const char *const *access_deny;  /* values refusing the way (or its direction) */
    const char *const *access_restricted; /* denied values that keep the way routable but
                                             restricted (no through traffic), on the highways of
                                             restricted_highways */
    const char *const *restricted_highways;
    const char *const *restricted_tags; /* "key=value" tags marking a way restricted */
    /* KEY (also KEY:forward / :backward) whose lanes, split at "|", all "designated" mark that
     * direction restricted (car: hov:lanes); NULL: none */
    const char *restricted_lanes;
    const char *const *oneway_keys;       /* most specific first; NULL: oneways are ignored */
    const char *const *oneway_no;         /* values of those keys that cancel an implied oneway */
    const char *const *implied_oneway;    /* "key=value" tags implying oneway=yes */
    const char *const *twoway;            /* "key=value" tags cancelling a oneway for the mode */
    const char *const *maxspeed_keys;     /* most specific first, each also :forward / :backward */
    double speed_reduction;               /* factor on a tagged maxspeed; 0: maxspeed only lowers */
    const gp_osm_kv *maxspeed_zones;      /* "de:urban" (lower case) -> km/h, 0: no limit known */
    const gp_osm_kv *maxspeed_types;      /* "urban" -> km/h for any other "xx:urban" */
    const gp_osm_kv *surface_kmh;         /* caps by surface=* */
    const gp_osm_kv *tracktype_kmh;       /* caps by tracktype=* */
    const gp_osm_kv *smoothness_kmh;      /* caps by smoothness=* (0: impassable) */
    const gp_osm_kv *route_kmh;           /* route=ferry, shuttle_train: class ferry */
    const gp_osm_kv *bridge_kmh;          /* bridge=movable */
    const char *const *blocked;           /* "key=value" tags that make a way unroutable */
    const char *const *blocked_keys;      /* keys that make a way unroutable whatever their value */
    const char *const *construction_ok;   /* construction=* values that do not block; NULL: the
                                           construction key is not read */
    const char *const *service_forbidden; /* service=* values that make a way unroutable */
    const gp_osm_kv *service_factor;      /* weight factor by service=* */
    double side_road_factor;              /* weight factor of side_road=yes|rotary; 0: none */
    double narrow_factor;      /* weight factor for width <= 3 or one lane both ways; 0: none */
    double alternating_factor; /* weight factor of oneway=alternating; 0: none */
    double vehicle_height, vehicle_width, vehicle_length, vehicle_weight_kg; /* 0: not checked */
    double push_kmh; /* bicycle: pushing speed where riding is not allowed; 0: none */
    double max_kmh;  /* cap on every speed, tagged maxspeed included (truck); 0: none */
    int barrier_blocks_by_default; /* 1: every barrier=* blocks but those listed in
                                      barrier_list; 0: only those listed block */
    const char *const *barrier_list;
    int node_rules;                        /* GP_OSM_NODE_* bits */
    const char *const *restriction_keys;   /* turn-restriction tags obeyed; NULL: none */
    const char *const *restriction_except; /* except=* values that exempt this mode */
    /* exclusion classes (GP_OSM_CLASS_* names) a request may exclude, OSRM's `excludable` list:
     * the OSRM API takes one of them at a time (car.lua's sets are single classes), /v1 any
     * combination. NULL: none. */
    const char *const *excludable;
} gp_osm_profile;

/* Exclusion classes of a road arc, read from the attributes every OSM import keeps (so snapshots
 * and the graph hash carry them already): motorway = highway=motorway / motorway_link (class
 * motorway), toll = toll=yes (GP_ARC_TOLL), ferry = route=ferry / shuttle_train (class ferry). */
enum { GP_OSM_CLASS_MOTORWAY = 1u, GP_OSM_CLASS_TOLL = 2u, GP_OSM_CLASS_FERRY = 4u };
/* The bit of a class name, 0 when it is none. */
unsigned gp_osm_class_bit(const char *name);
/* The class bits of arc a of g (0 on graphs without road attributes). */
unsigned gp_osm_arc_classes(const gp_graph *g, uint32_t a);
/* The bits of the classes profile p lets a request exclude (its excludable list); 0 for NULL. */
unsigned gp_osm_profile_classes(const gp_osm_profile *p);

/* The profile of that name, or NULL. gp_osm_profile_names() lists them
 * ("car|bicycle|foot|truck"). */
const gp_osm_profile *gp_osm_profile_find(const char *name);
const char *gp_osm_profile_names(void);

/* Checks a profile's tables: every speed finite and >= 0 (a class speed > 0 or 0 for "access
 * tag only"), factors in (0, 1], classes inside enum gp_road_class, lists ended. 0, or GP_EINVAL
 * with a message naming the profile, the table and the row. The loader checks before reading. */
int gp_osm_profile_check(const gp_osm_profile *p, gp_err *err);

/* What a way is for a profile. */
typedef struct gp_osm_way_eval {
    int routable;   /* 0: ignore the way */
    int cls;        /* enum gp_road_class */
    double fwd_mps; /* speed along the way's node order, metres per second; 0: not allowed */
    double bwd_mps; /* against it; 0: not allowed */
    double fwd_factor, bwd_factor;      /* OSRM's weight factor (service, side road, narrow,
                                      alternating penalties), 1 when none; durations ignore it */
    int fwd_restricted, bwd_restricted; /* 1: access private / destination / delivery /
                                           customers or all lanes hov: routable, but a route
                                           should only enter it to reach a place on it (OSRM:
                                           max_turn_weight when turning into it) */
    double ferry_s;   /* route=ferry or a movable bridge with duration=*: seconds for the whole
                         way; else -1 */
    const char *name; /* name=* / ref=* (pointers into the tags), NULL when untagged */
    const char *ref;
} gp_osm_way_eval;

void gp_osm_eval_way(const gp_osm_profile *p, const gp_osm_tag *tags, uint32_t ntags,
                     gp_osm_way_eval *out);
/* 1 when a node with these tags (a barrier=*, or an access tag) stops the profile. */
int gp_osm_node_blocks(const gp_osm_profile *p, const gp_osm_tag *tags, uint32_t ntags);

/* A type=restriction relation for a profile: GP_OSM_TURN_NO / GP_OSM_TURN_ONLY, or 0 when it does
 * not apply (another mode, exempted by except=*, not a restriction). *conditional is set when
 * the only restriction tag is a restriction:conditional one (ignored, counted by the caller). */
enum { GP_OSM_TURN_NO = 1, GP_OSM_TURN_ONLY = 2 };
int gp_osm_eval_restriction(const gp_osm_profile *p, const gp_osm_tag *tags, uint32_t ntags,
                            int *conditional);

/* Parsers shared with tests. gp_osm_parse_maxspeed: km/h of a numeric maxspeed as OSRM reads it
 * (the leading digits; "mph" or "mp/h" anywhere: times 1.609; other units are not converted),
 * -1 when it does not start with a digit. gp_osm_maxspeed_kmh: the same, else a zone code of the
 * profile's tables ("none", "DE:urban", "AT:rural": exact entries first, then the zone type of
 * any "xx:type"), 0 when unknown. gp_osm_parse_duration: seconds of "HH:MM", "HH:MM:SS", "MM",
 * "PT1H30M"; -1 when not one. gp_osm_parse_meters: "2.5", "2,5 m", "6'6\"" in metres, -1 when
 * not a number. gp_osm_parse_kg: "3.5" (tonnes), "3500 kg", "8000 lbs" in kg, -1 when not one. */
double gp_osm_parse_maxspeed(const char *v);
double gp_osm_maxspeed_kmh(const gp_osm_profile *p, const char *v);
double gp_osm_parse_duration(const char *v);
double gp_osm_parse_meters(const char *v);
double gp_osm_parse_kg(const char *v);

/* A way's vehicle limits (graph.h arc_limits, quantized, rounded down; 0: none) from maxheight,
 * maxwidth, maxlength (metres; "12'6\"", "12 ft", "3.5 m") and maxweight, maxaxleload (tonnes;
 * "7.5", "7500 kg", "16000 lbs"; "st" short tons), the :physical value when there is one for
 * height and width. "none", "default", "below_default", "unsigned", "no-sign", anything that is
 * no number and every *:conditional key are no limit; a limit of 0 or past 25.5 m / 127.5 t is
 * none too. Returns 1 when some limit is set. */
int gp_osm_way_limits(const gp_osm_tag *tags, uint32_t ntags, uint8_t out[GP_LIMITS]);

#ifdef __cplusplus
}
#endif
#endif
