/* osm_profile.c - the car, bicycle and foot profiles as declarative tables, and their evaluation.
 *
 * Rules (docs/graphs.md's OpenStreetMap section and tests/test_osm.c repeat them):
 *  - A way is routable when its highway=* value has a row in the profile's class table, or it is a
 *    route=ferry and the profile has a ferry speed; area=yes ways are never routable.
 *  - Access: the profile's access keys are read from general to specific (car: access, vehicle,
 *    motor_vehicle, motorcar; bicycle: access, vehicle, bicycle; foot: access, foot); the most
 *    specific one present decides. A value in access_deny (no, private, agricultural, forestry,
 *    emergency, psv, delivery, and for vehicles customers) refuses the way; any other value
 *    (yes, permissive, designated, destination, ...) allows it. So access=private bars a car but
 *    access=private + foot=yes lets a pedestrian through; destination is allowed.
 *  - Speed: the class's speed, or a tagged maxspeed (maxspeed:forward / :backward per direction),
 *    capped by the class's max_kmh; "none", "signals" and country codes keep the class speed.
 *  - Oneway (car and bicycle; pedestrians ignore it): oneway=yes|1|true forward only, -1|reverse
 *    backward only, reversible|alternating not routable, no|0|false two-way. Untagged, the
 *    implied oneways apply: highway=motorway, motorway_link, junction=roundabout|circular.
 *    Bicycles also read oneway:bicycle (more specific) and ride both ways on
 *    cycleway=opposite|opposite_lane|opposite_track.
 *  - Ferries: route=ferry at the ferry speed, or when duration=* is tagged, that duration spread
 *    over the way by length; class "ferry".
 *  - Barriers: a node barrier=* stops a car unless it is one of the passable kinds (gate,
 *    lift_gate, cattle_grid, border_control, toll_booth, sally_port, entrance, height_restrictor,
 *    arch, no); a bicycle only at wall, fence, hedge, sump_buster; a pedestrian only at wall,
 *    fence, hedge. Access tags on the node (same keys)
 *    override: a denying value blocks, any other lets the mode pass.
 *  - Turn restrictions: cars obey restriction=* and restriction:motorcar / :motor_vehicle,
 *    bicycles restriction=* and restriction:bicycle, pedestrians none; except=* naming the mode
 *    exempts it; restriction:conditional is ignored (counted in the import log).
 */
#include "graph/osm_profile.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------- */
/* The tables                                                                                    */
/* ------------------------------------------------------------------------------------------- */

/* Car: speeds as OSRM's car profile (km/h), caps at common legal limits. */
static const gp_osm_class CAR_CLASSES[] = {
    {"motorway", GP_ROAD_MOTORWAY, 90, 130},
    {"motorway_link", GP_ROAD_MOTORWAY, 45, 80},
    {"trunk", GP_ROAD_TRUNK, 85, 110},
    {"trunk_link", GP_ROAD_TRUNK, 40, 80},
    {"primary", GP_ROAD_PRIMARY, 65, 100},
    {"primary_link", GP_ROAD_PRIMARY, 30, 60},
    {"secondary", GP_ROAD_SECONDARY, 55, 100},
    {"secondary_link", GP_ROAD_SECONDARY, 25, 60},
    {"tertiary", GP_ROAD_TERTIARY, 40, 80},
    {"tertiary_link", GP_ROAD_TERTIARY, 20, 50},
    {"unclassified", GP_ROAD_UNCLASSIFIED, 25, 80},
    {"road", GP_ROAD_UNCLASSIFIED, 25, 80},
    {"residential", GP_ROAD_RESIDENTIAL, 25, 50},
    {"living_street", GP_ROAD_LIVING_STREET, 10, 20},
    {"service", GP_ROAD_SERVICE, 15, 30},
    {NULL, 0, 0, 0},
};

/* Bicycle: no motorways or trunks; footways and pedestrian zones at pushing speed; maxspeed
 * can only lower a class speed (cap = class speed). */
static const gp_osm_class BICYCLE_CLASSES[] = {
    {"cycleway", GP_ROAD_CYCLEWAY, 18, 18},
    {"primary", GP_ROAD_PRIMARY, 15, 15},
    {"primary_link", GP_ROAD_PRIMARY, 15, 15},
    {"secondary", GP_ROAD_SECONDARY, 15, 15},
    {"secondary_link", GP_ROAD_SECONDARY, 15, 15},
    {"tertiary", GP_ROAD_TERTIARY, 15, 15},
    {"tertiary_link", GP_ROAD_TERTIARY, 15, 15},
    {"unclassified", GP_ROAD_UNCLASSIFIED, 15, 15},
    {"road", GP_ROAD_UNCLASSIFIED, 15, 15},
    {"residential", GP_ROAD_RESIDENTIAL, 15, 15},
    {"living_street", GP_ROAD_LIVING_STREET, 10, 10},
    {"service", GP_ROAD_SERVICE, 15, 15},
    {"track", GP_ROAD_TRACK, 12, 12},
    {"path", GP_ROAD_PATH, 12, 12},
    {"bridleway", GP_ROAD_PATH, 8, 8},
    {"footway", GP_ROAD_FOOTWAY, 6, 6},
    {"pedestrian", GP_ROAD_FOOTWAY, 6, 6},
    {NULL, 0, 0, 0},
};

/* Foot: walking speed everywhere walkable (no motorways, trunks); maxspeed ignored. */
static const gp_osm_class FOOT_CLASSES[] = {
    {"primary", GP_ROAD_PRIMARY, 5, 0},
    {"primary_link", GP_ROAD_PRIMARY, 5, 0},
    {"secondary", GP_ROAD_SECONDARY, 5, 0},
    {"secondary_link", GP_ROAD_SECONDARY, 5, 0},
    {"tertiary", GP_ROAD_TERTIARY, 5, 0},
    {"tertiary_link", GP_ROAD_TERTIARY, 5, 0},
    {"unclassified", GP_ROAD_UNCLASSIFIED, 5, 0},
    {"road", GP_ROAD_UNCLASSIFIED, 5, 0},
    {"residential", GP_ROAD_RESIDENTIAL, 5, 0},
    {"living_street", GP_ROAD_LIVING_STREET, 5, 0},
    {"service", GP_ROAD_SERVICE, 5, 0},
    {"track", GP_ROAD_TRACK, 5, 0},
    {"path", GP_ROAD_PATH, 5, 0},
    {"bridleway", GP_ROAD_PATH, 5, 0},
    {"cycleway", GP_ROAD_CYCLEWAY, 5, 0},
    {"footway", GP_ROAD_FOOTWAY, 5, 0},
    {"pedestrian", GP_ROAD_FOOTWAY, 5, 0},
    {"steps", GP_ROAD_FOOTWAY, 2, 0},
    {NULL, 0, 0, 0},
};

static const char *const CAR_ACCESS[] = {"access", "vehicle", "motor_vehicle", "motorcar", NULL};
static const char *const BICYCLE_ACCESS[] = {"access", "vehicle", "bicycle", NULL};
static const char *const FOOT_ACCESS[] = {"access", "foot", NULL};
static const char *const VEHICLE_DENY[] = {
    "no", "private", "agricultural", "forestry", "emergency", "psv", "delivery", "customers", NULL};
static const char *const FOOT_DENY[] = {"no",       "private",   "agricultural",
                                        "forestry", "emergency", NULL};
static const char *const CAR_ONEWAY[] = {"oneway", NULL};
static const char *const BICYCLE_ONEWAY[] = {"oneway", "oneway:bicycle", NULL};
static const char *const IMPLIED_ONEWAY[] = {"highway=motorway", "highway=motorway_link",
                                             "junction=roundabout", "junction=circular", NULL};
static const char *const BICYCLE_TWOWAY[] = {"cycleway=opposite", "cycleway=opposite_lane",
                                             "cycleway=opposite_track", NULL};
static const char *const NONE[] = {NULL};
static const char *const CAR_BARRIER_PASS[] = {
    "gate",       "lift_gate",  "cattle_grid", "border_control",
    "toll_booth", "sally_port", "entrance",    "height_restrictor",
    "arch",       "no",         NULL};
static const char *const BICYCLE_BARRIER_BLOCK[] = {"wall", "fence", "hedge", "sump_buster", NULL};
static const char *const FOOT_BARRIER_BLOCK[] = {"wall", "fence", "hedge", NULL};
static const char *const CAR_RESTRICTIONS[] = {"restriction", "restriction:motorcar",
                                               "restriction:motor_vehicle", NULL};
static const char *const CAR_EXCEPT[] = {"motorcar", "motor_vehicle", "vehicle", NULL};
static const char *const BICYCLE_RESTRICTIONS[] = {"restriction", "restriction:bicycle", NULL};
static const char *const BICYCLE_EXCEPT[] = {"bicycle", "vehicle", NULL};

static const gp_osm_profile PROFILES[] = {
    {"car", CAR_CLASSES, CAR_ACCESS, VEHICLE_DENY, CAR_ONEWAY, IMPLIED_ONEWAY, NONE, 5.0, 1,
     CAR_BARRIER_PASS, CAR_RESTRICTIONS, CAR_EXCEPT},
    {"bicycle", BICYCLE_CLASSES, BICYCLE_ACCESS, VEHICLE_DENY, BICYCLE_ONEWAY, IMPLIED_ONEWAY,
     BICYCLE_TWOWAY, 5.0, 0, BICYCLE_BARRIER_BLOCK, BICYCLE_RESTRICTIONS, BICYCLE_EXCEPT},
    {"foot", FOOT_CLASSES, FOOT_ACCESS, FOOT_DENY, NULL, NONE, NONE, 5.0, 0, FOOT_BARRIER_BLOCK,
     NULL, NONE},
};

const gp_osm_profile *gp_osm_profile_find(const char *name) {
    for (size_t i = 0; i < sizeof PROFILES / sizeof PROFILES[0]; i++)
        if (name && strcmp(PROFILES[i].name, name) == 0) return &PROFILES[i];
    return NULL;
}

const char *gp_osm_profile_names(void) { return "car|bicycle|foot"; }

/* ------------------------------------------------------------------------------------------- */
/* Evaluation                                                                                    */
/* ------------------------------------------------------------------------------------------- */

static const char *tag(const gp_osm_tag *t, uint32_t n, const char *key) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(t[i].key, key) == 0) return t[i].value;
    return NULL;
}

static int in_list(const char *const *list, const char *v) {
    for (; list && *list; list++)
        if (strcmp(*list, v) == 0) return 1;
    return 0;
}

/* 1 when any "key=value" of list is among the tags. */
static int has_kv(const gp_osm_tag *t, uint32_t n, const char *const *list) {
    for (; list && *list; list++) {
        const char *eq = strchr(*list, '=');
        for (uint32_t i = 0; i < n; i++)
            if (strncmp(t[i].key, *list, (size_t)(eq - *list)) == 0 &&
                t[i].key[eq - *list] == '\0' && strcmp(t[i].value, eq + 1) == 0)
                return 1;
    }
    return 0;
}

/* The most specific access value tagged, or NULL. */
static const char *access_value(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n) {
    const char *v = NULL;
    for (const char *const *k = p->access_keys; *k; k++) {
        const char *x = tag(t, n, *k);
        if (x) v = x;
    }
    return v;
}

double gp_osm_parse_maxspeed(const char *v) {
    if (!v) return -1;
    char *end;
    double x = strtod(v, &end);
    if (end == v || !(x > 0) || !isfinite(x)) return -1;
    while (*end == ' ') end++;
    if (*end == '\0' || strcmp(end, "km/h") == 0 || strcmp(end, "kmh") == 0 ||
        strcmp(end, "kph") == 0)
        return x;
    if (strcmp(end, "mph") == 0) return x * 1.609344;
    if (strcmp(end, "knots") == 0) return x * 1.852;
    return -1;
}

double gp_osm_parse_duration(const char *v) {
    if (!v || !*v) return -1;
    if (v[0] == 'P' && v[1] == 'T') { /* ISO 8601: PT1H30M, PT45M, PT20M30S */
        double total = 0;
        const char *s = v + 2;
        if (!*s) return -1;
        while (*s) {
            char *end;
            double x = strtod(s, &end);
            if (end == s || x < 0) return -1;
            if (*end == 'H') total += x * 3600;
            else if (*end == 'M') total += x * 60;
            else if (*end == 'S') total += x;
            else return -1;
            s = end + 1;
        }
        return total;
    }
    long part[3];
    int np = 0;
    const char *s = v;
    while (np < 3) {
        if (!isdigit((unsigned char)*s)) return -1;
        char *end;
        part[np++] = strtol(s, &end, 10);
        s = end;
        if (*s == '\0') break;
        if (*s != ':') return -1;
        s++;
    }
    if (*s) return -1;
    if (np == 1) return part[0] * 60.0;                    /* minutes */
    if (np == 2) return part[0] * 3600.0 + part[1] * 60.0; /* HH:MM */
    return part[0] * 3600.0 + part[1] * 60.0 + part[2];    /* HH:MM:SS */
}

/* Speed in km/h of a class for one direction: the tagged maxspeed (direction-specific first)
 * up to the class cap, else the class speed. */
static double dir_kmh(const gp_osm_class *c, const gp_osm_tag *t, uint32_t n, const char *dirkey) {
    if (c->max_kmh <= 0) return c->kmh;
    double ms = gp_osm_parse_maxspeed(tag(t, n, dirkey));
    if (ms < 0) ms = gp_osm_parse_maxspeed(tag(t, n, "maxspeed"));
    if (ms < 0) return c->kmh;
    return ms < c->max_kmh ? ms : c->max_kmh;
}

void gp_osm_eval_way(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n, gp_osm_way_eval *o) {
    memset(o, 0, sizeof *o);
    o->ferry_s = -1;
    const char *area = tag(t, n, "area");
    if (area && strcmp(area, "yes") == 0) return;
    const char *hw = tag(t, n, "highway");
    const char *route = tag(t, n, "route");
    const gp_osm_class *c = NULL;
    for (const gp_osm_class *k = p->classes; hw && k->highway; k++)
        if (strcmp(k->highway, hw) == 0) c = k;
    int ferry = !c && route && strcmp(route, "ferry") == 0 && p->ferry_kmh > 0;
    if (!c && !ferry) return;
    const char *acc = access_value(p, t, n);
    if (acc && in_list(p->access_deny, acc)) return;

    double fwd, bwd;
    if (ferry) {
        o->cls = GP_ROAD_FERRY;
        fwd = bwd = p->ferry_kmh;
        o->ferry_s = gp_osm_parse_duration(tag(t, n, "duration"));
    } else {
        o->cls = c->cls;
        fwd = dir_kmh(c, t, n, "maxspeed:forward");
        bwd = dir_kmh(c, t, n, "maxspeed:backward");
    }
    /* one-way rules: the most specific oneway key tagged, else the implied ones */
    if (p->oneway_keys) {
        const char *ow = NULL;
        for (const char *const *k = p->oneway_keys; *k; k++) {
            const char *x = tag(t, n, *k);
            if (x) ow = x;
        }
        int dir = 0; /* 0 both, 1 forward only, -1 backward only */
        if (ow) {
            if (!strcmp(ow, "yes") || !strcmp(ow, "1") || !strcmp(ow, "true")) dir = 1;
            else if (!strcmp(ow, "-1") || !strcmp(ow, "reverse")) dir = -1;
            else if (!strcmp(ow, "reversible") || !strcmp(ow, "alternating")) return;
        } else if (has_kv(t, n, p->implied_oneway)) {
            dir = 1;
        }
        if (dir && has_kv(t, n, p->twoway)) dir = 0;
        if (dir == 1) bwd = 0;
        if (dir == -1) fwd = 0;
    }
    o->fwd_mps = fwd / 3.6;
    o->bwd_mps = bwd / 3.6;
    o->routable = 1;
    o->name = tag(t, n, "name");
    o->ref = tag(t, n, "ref");
}

int gp_osm_node_blocks(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n) {
    const char *b = tag(t, n, "barrier");
    if (!b) return 0;
    const char *acc = access_value(p, t, n);
    if (acc) return in_list(p->access_deny, acc);
    int listed = in_list(p->barrier_list, b);
    return p->barrier_blocks_by_default ? !listed : listed;
}

int gp_osm_eval_restriction(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n,
                            int *conditional) {
    *conditional = 0;
    const char *type = tag(t, n, "type");
    if (!type || strcmp(type, "restriction") != 0 || !p->restriction_keys) return 0;
    const char *v = NULL;
    for (const char *const *k = p->restriction_keys; *k; k++) {
        const char *x = tag(t, n, *k);
        if (x) v = x;
    }
    if (!v) {
        for (uint32_t i = 0; i < n; i++)
            if (strncmp(t[i].key, "restriction", 11) == 0 && strstr(t[i].key, ":conditional"))
                *conditional = 1;
        return 0;
    }
    const char *ex = tag(t, n, "except");
    if (ex) { /* except=psv;bicycle */
        char buf[256];
        size_t l = strlen(ex);
        if (l < sizeof buf) {
            memcpy(buf, ex, l + 1);
            char *save = NULL;
            for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
                while (*tok == ' ') tok++;
                if (in_list(p->restriction_except, tok)) return 0;
            }
        }
    }
    if (strncmp(v, "no_", 3) == 0) return GP_OSM_TURN_NO;
    if (strncmp(v, "only_", 5) == 0) return GP_OSM_TURN_ONLY;
    return 0;
}
