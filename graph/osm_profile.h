/* osm_profile.h - routing profiles for OpenStreetMap data: which ways a car, a bicycle or a
 * pedestrian may use, in which directions and how fast, which node barriers stop them and which
 * turn restrictions they obey.
 *
 * Each profile is one declarative table (graph/osm_profile.c, where every rule is documented next
 * to its row); the functions below evaluate an object's tags against it. Evaluating is pure: the
 * tables are constant and any number of threads may evaluate at once.
 */
#ifndef GP_OSM_PROFILE_H
#define GP_OSM_PROFILE_H

#include "graph/graph.h"
#include "graph/osm_read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One routable highway=* value. */
typedef struct gp_osm_class {
    const char *highway; /* the highway=* value */
    int cls;             /* enum gp_road_class */
    double kmh;          /* speed without a maxspeed tag */
    double max_kmh;      /* a tagged maxspeed is used up to this cap (0: maxspeed is ignored) */
} gp_osm_class;

typedef struct gp_osm_profile {
    const char *name;                  /* "car", "bicycle", "foot" */
    const gp_osm_class *classes;       /* routable highway values, ended by highway NULL */
    const char *const *access_keys;    /* general to specific; the most specific one tagged
                                               decides (e.g. access, vehicle, motor_vehicle) */
    const char *const *access_deny;    /* values of those keys that refuse the way / node */
    const char *const *oneway_keys;    /* oneway tags obeyed, general to specific; NULL: none */
    const char *const *implied_oneway; /* "key=value" tags implying oneway=yes */
    const char *const *twoway;         /* "key=value" tags cancelling a oneway for the mode */
    double ferry_kmh;                  /* route=ferry speed without duration=*; 0: no ferries */
    int barrier_blocks_by_default;     /* 1: every barrier=* blocks but those listed in
                                               barrier_list; 0: only those listed block */
    const char *const *barrier_list;
    const char *const *restriction_keys;   /* turn-restriction tags obeyed; NULL: none */
    const char *const *restriction_except; /* except=* values that exempt this mode */
} gp_osm_profile;

/* The profile of that name, or NULL. gp_osm_profile_names() lists them ("car|bicycle|foot"). */
const gp_osm_profile *gp_osm_profile_find(const char *name);
const char *gp_osm_profile_names(void);

/* What a way is for a profile. */
typedef struct gp_osm_way_eval {
    int routable;     /* 0: ignore the way */
    int cls;          /* enum gp_road_class */
    double fwd_mps;   /* speed along the way's node order, metres per second; 0: not allowed */
    double bwd_mps;   /* against it; 0: not allowed */
    double ferry_s;   /* route=ferry with duration=*: seconds for the whole way; else -1 */
    const char *name; /* name=* / ref=* (pointers into the tags), NULL when untagged */
    const char *ref;
} gp_osm_way_eval;

void gp_osm_eval_way(const gp_osm_profile *p, const gp_osm_tag *tags, uint32_t ntags,
                     gp_osm_way_eval *out);
/* 1 when a node with these tags (a barrier=*, maybe with access tags) stops the profile. */
int gp_osm_node_blocks(const gp_osm_profile *p, const gp_osm_tag *tags, uint32_t ntags);

/* A type=restriction relation for a profile: GP_OSM_TURN_NO / GP_OSM_TURN_ONLY, or 0 when it does
 * not apply (another mode, exempted by except=*, not a restriction). *conditional is set when
 * the only restriction tag is a restriction:conditional one (ignored, counted by the caller). */
enum { GP_OSM_TURN_NO = 1, GP_OSM_TURN_ONLY = 2 };
int gp_osm_eval_restriction(const gp_osm_profile *p, const gp_osm_tag *tags, uint32_t ntags,
                            int *conditional);

/* Parsers shared with tests: km/h of a maxspeed value ("50", "30 mph", "50 km/h"; -1 for "none",
 * "signals", country codes and anything else), seconds of a duration ("HH:MM", "HH:MM:SS", "MM",
 * "PT1H30M"; -1 when not one). */
double gp_osm_parse_maxspeed(const char *v);
double gp_osm_parse_duration(const char *v);

#ifdef __cplusplus
}
#endif
#endif
