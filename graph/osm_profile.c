/* osm_profile.c - the car, bicycle and foot profiles as declarative tables, and their evaluation.
 *
 * The rules are those of OSRM v6's car.lua, bicycle.lua and foot.lua (profiles/ of the OSRM
 * release), row by row; docs/graphs.md's profile section lists them and tests/test_osm.c checks
 * each with a literal expectation (tests/data/osm/rules.osm). In evaluation order:
 *  - Blocked ways: the "blocked" key=value tags (car: area=yes, oneway=reversible, impassable=yes,
 *    status=impassable, highway=steps|construction|proposed, railway=construction), any proposed=*
 *    tag, a construction=* value other than no|widening|minor (car, bicycle), service=
 *    emergency_access (car).
 *  - Vehicle size (car, 2.0 m high, 1.9 m wide, 4.8 m long, 2 t): maxheight(:physical) below
 *    2.0 m, maxwidth(:physical) / width / est_width up to 1.9 m, maxlength below 4.8 m, maxweight
 *    below 2 t close the direction (KEY:forward / KEY:backward per direction).
 *  - Access: the first tagged key of the profile's hierarchy decides (car: motorcar,
 *    motor_vehicle, vehicle, access; bicycle: bicycle, vehicle, access; foot: foot, access). A
 *    denied value closes the direction, except the car's private / delivery / destination /
 *    customers on road classes (motorway .. service): those stay routable and are marked
 *    restricted (OSRM keeps them out of through routes with a turn penalty; gpath records the bit
 *    per arc for the turn model). hov=designated, or hov:lanes(:forward|:backward) with every
 *    lane designated, marks a car way (direction) restricted too.
 *  - Oneway: the first tagged key of the profile's list (car: oneway:motorcar,
 *    oneway:motor_vehicle, oneway:vehicle, oneway; bicycle: oneway:bicycle, oneway; foot:
 *    oneway:foot only): yes|1|true forward only, -1 backward only; untagged (or any value but the
 *    profile's "no" values) highway=motorway and junction=roundabout|circular are one-way (car,
 *    bicycle). Bicycles ride both ways on cycleway(:left|:right)=opposite*.
 *  - Speed: route=ferry (5 km/h; car shuttle_train 10) and bridge=movable (5 km/h) first, their
 *    duration=* for the whole way when tagged; else the class's speed; else, for a class with no
 *    speed or another highway=* value, the profile's default speed when an access tag allows it
 *    (car 10, bicycle 15, foot 5 km/h).
 *  - Bicycle pushing at 4 km/h (foot=no aside) where riding is not allowed (against a oneway, on
 *    a footway / pedestrian / steps / pier at their push speed, bicycle=dismount).
 *  - Maxspeed (car): maxspeed:advisory, maxspeed, source:maxspeed, maxspeed:type (per direction)
 *    replace the class speed at 80% (speed_reduction); numbers are read as OSRM reads them
 *    (leading digits, mph times 1.609), zone codes from the table (DE:urban 50, AT:rural 100,
 *    none 140, DE:motorway no limit, ...). Bicycles: maxspeed only lowers the speed.
 *  - Caps: surface, tracktype and smoothness tables (car; bicycle and foot surface).
 *  - Weight factors (car; the duration keeps the speed): service=alley|parking|parking_aisle|
 *    driveway|drive-through|drive-thru 0.5, width <= 3 m or lanes <= 1 on a two-way way 0.5,
 *    oneway=alternating 0.4, side_road=yes|rotary 0.8; the smallest applies.
 *  - Barriers (nodes): an access tag of the hierarchy decides first (a denied value stops, the
 *    car's restricted values do not); else barrier=* stops a car unless passable (gate,
 *    lift_gate, cattle_grid, border_control, toll_booth, sally_port, entrance, height_restrictor,
 *    arch, no; a height_restrictor below 2.0 m stops), a rising bollard, a lowered / flush kerb or
 *    a kerb on a highway=crossing; bicycles and pedestrians stop only at yes, wall, fence.
 *  - Turn restrictions: cars obey restriction=* and restriction:vehicle / :motor_vehicle /
 *    :motorcar; except=* naming the mode exempts it; restriction:conditional is ignored (counted
 *    in the import log). Bicycles and pedestrians obey none (use_turn_restrictions is false in
 *    bicycle.lua and foot.lua).
 */
#include "graph/osm_profile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------- */
/* The tables                                                                                    */
/* ------------------------------------------------------------------------------------------- */

/* Car: car.lua's speeds (km/h). Rows of speed 0 are routable only with an access tag that allows
 * cars (motor_vehicle=yes on a track: 10 km/h); highway=road is one of them (not in car.lua). */
static const gp_osm_class CAR_CLASSES[] = {
    {"highway", "motorway", GP_ROAD_MOTORWAY, 90, GP_OSM_RIDE},
    {"highway", "motorway_link", GP_ROAD_MOTORWAY, 45, GP_OSM_RIDE},
    {"highway", "trunk", GP_ROAD_TRUNK, 85, GP_OSM_RIDE},
    {"highway", "trunk_link", GP_ROAD_TRUNK, 40, GP_OSM_RIDE},
    {"highway", "primary", GP_ROAD_PRIMARY, 65, GP_OSM_RIDE},
    {"highway", "primary_link", GP_ROAD_PRIMARY, 30, GP_OSM_RIDE},
    {"highway", "secondary", GP_ROAD_SECONDARY, 55, GP_OSM_RIDE},
    {"highway", "secondary_link", GP_ROAD_SECONDARY, 25, GP_OSM_RIDE},
    {"highway", "tertiary", GP_ROAD_TERTIARY, 40, GP_OSM_RIDE},
    {"highway", "tertiary_link", GP_ROAD_TERTIARY, 20, GP_OSM_RIDE},
    {"highway", "unclassified", GP_ROAD_UNCLASSIFIED, 25, GP_OSM_RIDE},
    {"highway", "residential", GP_ROAD_RESIDENTIAL, 25, GP_OSM_RIDE},
    {"highway", "living_street", GP_ROAD_LIVING_STREET, 10, GP_OSM_RIDE},
    {"highway", "service", GP_ROAD_SERVICE, 15, GP_OSM_RIDE},
    {"highway", "road", GP_ROAD_UNCLASSIFIED, 0, GP_OSM_RIDE},
    {"highway", "track", GP_ROAD_TRACK, 0, GP_OSM_RIDE},
    {"highway", "path", GP_ROAD_PATH, 0, GP_OSM_RIDE},
    {"highway", "bridleway", GP_ROAD_PATH, 0, GP_OSM_RIDE},
    {"highway", "cycleway", GP_ROAD_CYCLEWAY, 0, GP_OSM_RIDE},
    {"highway", "footway", GP_ROAD_FOOTWAY, 0, GP_OSM_RIDE},
    {"highway", "pedestrian", GP_ROAD_FOOTWAY, 0, GP_OSM_RIDE},
    {NULL, NULL, 0, 0, 0},
};

/* Truck (heavy goods vehicle, no OSRM profile): car.lua's classes at the speeds of a truck over
 * 3.5 t in the EU (80 km/h on motorways, every speed capped at 80 by max_kmh, tagged
 * maxspeed:hgv first), slower on the smaller roads. */
static const gp_osm_class TRUCK_CLASSES[] = {
    {"highway", "motorway", GP_ROAD_MOTORWAY, 80, GP_OSM_RIDE},
    {"highway", "motorway_link", GP_ROAD_MOTORWAY, 40, GP_OSM_RIDE},
    {"highway", "trunk", GP_ROAD_TRUNK, 70, GP_OSM_RIDE},
    {"highway", "trunk_link", GP_ROAD_TRUNK, 35, GP_OSM_RIDE},
    {"highway", "primary", GP_ROAD_PRIMARY, 60, GP_OSM_RIDE},
    {"highway", "primary_link", GP_ROAD_PRIMARY, 25, GP_OSM_RIDE},
    {"highway", "secondary", GP_ROAD_SECONDARY, 50, GP_OSM_RIDE},
    {"highway", "secondary_link", GP_ROAD_SECONDARY, 20, GP_OSM_RIDE},
    {"highway", "tertiary", GP_ROAD_TERTIARY, 35, GP_OSM_RIDE},
    {"highway", "tertiary_link", GP_ROAD_TERTIARY, 20, GP_OSM_RIDE},
    {"highway", "unclassified", GP_ROAD_UNCLASSIFIED, 25, GP_OSM_RIDE},
    {"highway", "residential", GP_ROAD_RESIDENTIAL, 20, GP_OSM_RIDE},
    {"highway", "living_street", GP_ROAD_LIVING_STREET, 10, GP_OSM_RIDE},
    {"highway", "service", GP_ROAD_SERVICE, 10, GP_OSM_RIDE},
    {"highway", "road", GP_ROAD_UNCLASSIFIED, 0, GP_OSM_RIDE},
    {"highway", "track", GP_ROAD_TRACK, 0, GP_OSM_RIDE},
    {NULL, NULL, 0, 0, 0},
};

/* Bicycle: bicycle.lua's bicycle_speeds, platform, amenity speeds (ridden) and pedestrian /
 * man_made speeds (pushed). No motorways or trunks without an allowing access tag. */
static const gp_osm_class BICYCLE_CLASSES[] = {
    {"highway", "cycleway", GP_ROAD_CYCLEWAY, 15, GP_OSM_RIDE},
    {"highway", "primary", GP_ROAD_PRIMARY, 15, GP_OSM_RIDE},
    {"highway", "primary_link", GP_ROAD_PRIMARY, 15, GP_OSM_RIDE},
    {"highway", "secondary", GP_ROAD_SECONDARY, 15, GP_OSM_RIDE},
    {"highway", "secondary_link", GP_ROAD_SECONDARY, 15, GP_OSM_RIDE},
    {"highway", "tertiary", GP_ROAD_TERTIARY, 15, GP_OSM_RIDE},
    {"highway", "tertiary_link", GP_ROAD_TERTIARY, 15, GP_OSM_RIDE},
    {"highway", "residential", GP_ROAD_RESIDENTIAL, 15, GP_OSM_RIDE},
    {"highway", "unclassified", GP_ROAD_UNCLASSIFIED, 15, GP_OSM_RIDE},
    {"highway", "living_street", GP_ROAD_LIVING_STREET, 15, GP_OSM_RIDE},
    {"highway", "road", GP_ROAD_UNCLASSIFIED, 15, GP_OSM_RIDE},
    {"highway", "service", GP_ROAD_SERVICE, 15, GP_OSM_RIDE},
    {"highway", "track", GP_ROAD_TRACK, 12, GP_OSM_RIDE},
    {"highway", "path", GP_ROAD_PATH, 13, GP_OSM_RIDE},
    {"railway", "platform", GP_ROAD_FOOTWAY, 4, GP_OSM_RIDE},
    {"public_transport", "platform", GP_ROAD_FOOTWAY, 4, GP_OSM_RIDE},
    {"amenity", "parking", GP_ROAD_SERVICE, 10, GP_OSM_RIDE},
    {"amenity", "parking_entrance", GP_ROAD_SERVICE, 10, GP_OSM_RIDE},
    {"highway", "footway", GP_ROAD_FOOTWAY, 4, GP_OSM_PUSH},
    {"highway", "pedestrian", GP_ROAD_FOOTWAY, 4, GP_OSM_PUSH},
    {"highway", "steps", GP_ROAD_FOOTWAY, 2, GP_OSM_PUSH},
    {"man_made", "pier", GP_ROAD_FOOTWAY, 4, GP_OSM_PUSH},
    {"highway", "bridleway", GP_ROAD_PATH, 0, GP_OSM_RIDE},
    {"highway", "motorway", GP_ROAD_MOTORWAY, 0, GP_OSM_RIDE},
    {"highway", "trunk", GP_ROAD_TRUNK, 0, GP_OSM_RIDE},
    {NULL, NULL, 0, 0, 0},
};

/* Foot: foot.lua's walking speed (5 km/h) on every listed way, steps included. */
static const gp_osm_class FOOT_CLASSES[] = {
    {"highway", "primary", GP_ROAD_PRIMARY, 5, GP_OSM_RIDE},
    {"highway", "primary_link", GP_ROAD_PRIMARY, 5, GP_OSM_RIDE},
    {"highway", "secondary", GP_ROAD_SECONDARY, 5, GP_OSM_RIDE},
    {"highway", "secondary_link", GP_ROAD_SECONDARY, 5, GP_OSM_RIDE},
    {"highway", "tertiary", GP_ROAD_TERTIARY, 5, GP_OSM_RIDE},
    {"highway", "tertiary_link", GP_ROAD_TERTIARY, 5, GP_OSM_RIDE},
    {"highway", "unclassified", GP_ROAD_UNCLASSIFIED, 5, GP_OSM_RIDE},
    {"highway", "residential", GP_ROAD_RESIDENTIAL, 5, GP_OSM_RIDE},
    {"highway", "road", GP_ROAD_UNCLASSIFIED, 5, GP_OSM_RIDE},
    {"highway", "living_street", GP_ROAD_LIVING_STREET, 5, GP_OSM_RIDE},
    {"highway", "service", GP_ROAD_SERVICE, 5, GP_OSM_RIDE},
    {"highway", "track", GP_ROAD_TRACK, 5, GP_OSM_RIDE},
    {"highway", "path", GP_ROAD_PATH, 5, GP_OSM_RIDE},
    {"highway", "steps", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"highway", "pedestrian", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"highway", "platform", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"highway", "footway", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"highway", "pier", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"railway", "platform", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"amenity", "parking", GP_ROAD_SERVICE, 5, GP_OSM_RIDE},
    {"amenity", "parking_entrance", GP_ROAD_SERVICE, 5, GP_OSM_RIDE},
    {"man_made", "pier", GP_ROAD_FOOTWAY, 5, GP_OSM_RIDE},
    {"leisure", "track", GP_ROAD_PATH, 5, GP_OSM_RIDE},
    {"highway", "cycleway", GP_ROAD_CYCLEWAY, 0, GP_OSM_RIDE},
    {"highway", "bridleway", GP_ROAD_PATH, 0, GP_OSM_RIDE},
    {NULL, NULL, 0, 0, 0},
};

/* car.lua's maxspeed_table: zone codes that differ from the defaults below (0: no limit known,
 * the class speed stays). */
static const gp_osm_kv CAR_ZONES[] = {
    {"at:rural", 100},        {"at:trunk", 100},       {"be:motorway", 120},
    {"be-bru:rural", 70},     {"be-bru:urban", 30},    {"be-vlg:rural", 70},
    {"bg:motorway", 140},     {"by:urban", 60},        {"by:motorway", 110},
    {"ca-on:rural", 80},      {"ch:rural", 80},        {"ch:trunk", 100},
    {"ch:motorway", 120},     {"cz:trunk", 0},         {"cz:motorway", 0},
    {"de:living_street", 7},  {"de:rural", 100},       {"de:motorway", 0},
    {"dk:rural", 80},         {"es:trunk", 90},        {"fr:rural", 80},
    {"gb:nsl_single", 96.54}, {"gb:nsl_dual", 112.63}, {"gb:motorway", 112.63},
    {"nl:rural", 80},         {"nl:trunk", 100},       {"no:rural", 80},
    {"no:motorway", 110},     {"ph:urban", 40},        {"ph:rural", 80},
    {"ph:motorway", 100},     {"pl:rural", 100},       {"pl:expressway", 120},
    {"pl:motorway", 140},     {"ro:trunk", 100},       {"ru:living_street", 20},
    {"ru:urban", 60},         {"ru:motorway", 110},    {"uk:nsl_single", 96.54},
    {"uk:nsl_dual", 112.63},  {"uk:motorway", 112.63}, {"za:urban", 60},
    {"za:rural", 100},        {"none", 140},           {NULL, 0},
};
/* car.lua's maxspeed_table_default: any other "xx:TYPE". */
static const gp_osm_kv CAR_ZONE_TYPES[] = {
    {"urban", 50}, {"rural", 90}, {"trunk", 110}, {"motorway", 130}, {NULL, 0}};

/* Speed caps (km/h) by surface / tracktype / smoothness, car.lua. */
static const gp_osm_kv CAR_SURFACE[] = {
    {"cement", 80},      {"compacted", 80},   {"fine_gravel", 80}, {"paving_stones", 60},
    {"metal", 60},       {"bricks", 60},      {"grass", 40},       {"wood", 40},
    {"sett", 40},        {"grass_paver", 40}, {"gravel", 40},      {"unpaved", 40},
    {"ground", 40},      {"dirt", 40},        {"pebblestone", 40}, {"tartan", 40},
    {"cobblestone", 30}, {"clay", 30},        {"earth", 20},       {"stone", 20},
    {"rocky", 20},       {"sand", 20},        {"mud", 10},         {NULL, 0},
};
static const gp_osm_kv CAR_TRACKTYPE[] = {{"grade1", 60}, {"grade2", 40}, {"grade3", 30},
                                          {"grade4", 25}, {"grade5", 20}, {NULL, 0}};
static const gp_osm_kv CAR_SMOOTHNESS[] = {
    {"intermediate", 80}, {"bad", 40},       {"very_bad", 20}, {"horrible", 10},
    {"very_horrible", 5}, {"impassable", 0}, {NULL, 0}};
/* bicycle.lua's surface speeds (caps, km/h). */
static const gp_osm_kv BICYCLE_SURFACE[] = {
    {"asphalt", 15},
    {"chipseal", 15},
    {"concrete", 15},
    {"concrete_lanes", 15},
    {"wood", 10},
    {"metal", 10},
    {"cobblestone:flattened", 10},
    {"paving_stones", 10},
    {"compacted", 10},
    {"cobblestone", 7},
    {"unpaved", 6},
    {"fine_gravel", 10},
    {"gravel", 6},
    {"pebblestone", 6},
    {"grass_paver", 6},
    {"ground", 10},
    {"dirt", 8},
    {"earth", 6},
    {"grass", 6},
    {"mud", 3},
    {"sand", 3},
    {"woodchips", 3},
    {"sett", 9},
    {NULL, 0},
};
/* foot.lua's surface speeds: 75% / 50% of walking speed. */
static const gp_osm_kv FOOT_SURFACE[] = {{"fine_gravel", 3.75}, {"gravel", 3.75},
                                         {"pebblestone", 3.75}, {"mud", 2.5},
                                         {"sand", 2.5},         {NULL, 0}};
static const gp_osm_kv CAR_ROUTES[] = {{"ferry", 5}, {"shuttle_train", 10}, {NULL, 0}};
static const gp_osm_kv FERRY_ONLY[] = {{"ferry", 5}, {NULL, 0}};
static const gp_osm_kv MOVABLE_BRIDGE[] = {{"movable", 5}, {NULL, 0}};
static const gp_osm_kv CAR_SERVICE_FACTOR[] = {
    {"alley", 0.5},    {"parking", 0.5},       {"parking_aisle", 0.5},
    {"driveway", 0.5}, {"drive-through", 0.5}, {"drive-thru", 0.5},
    {NULL, 0}};
static const gp_osm_kv NO_KV[] = {{NULL, 0}};

static const char *const CAR_ACCESS[] = {"motorcar", "motor_vehicle", "vehicle", "access", NULL};
static const char *const TRUCK_ACCESS[] = {"hgv",     "goods",  "motor_vehicle",
                                           "vehicle", "access", NULL};
static const char *const TRUCK_ONEWAY[] = {"oneway:hgv", "oneway:motor_vehicle", "oneway:vehicle",
                                           "oneway", NULL};
static const char *const TRUCK_MAXSPEED[] = {"maxspeed:hgv",    "maxspeed:advisory", "maxspeed",
                                             "source:maxspeed", "maxspeed:type",     NULL};
static const char *const TRUCK_RESTRICTIONS[] = {
    "restriction", "restriction:vehicle", "restriction:motor_vehicle", "restriction:hgv", NULL};
static const char *const TRUCK_EXCEPT[] = {"hgv", "goods", "motor_vehicle", "vehicle", NULL};
static const char *const BICYCLE_ACCESS[] = {"bicycle", "vehicle", "access", NULL};
static const char *const FOOT_ACCESS[] = {"foot", "access", NULL};
static const char *const CAR_DENY[] = {
    "no",        "agricultural", "forestry", "emergency",   "psv",
    "customers", "private",      "delivery", "destination", NULL};
static const char *const CAR_RESTRICTED[] = {"private", "delivery", "destination", "customers",
                                             NULL};
static const char *const CAR_RESTRICTED_HIGHWAYS[] = {
    "motorway",     "motorway_link", "trunk",          "trunk_link", "primary",
    "primary_link", "secondary",     "secondary_link", "tertiary",   "tertiary_link",
    "residential",  "living_street", "unclassified",   "service",    NULL};
static const char *const BICYCLE_ALLOW[] = {"yes", "permissive", "designated", NULL};
static const char *const BICYCLE_DENY[] = {
    "no", "private", "agricultural", "forestry", "delivery", "use_sidepath", NULL};
static const char *const FOOT_DENY[] = {"no",      "agricultural", "forestry",
                                        "private", "delivery",     NULL};
static const char *const CAR_ONEWAY[] = {"oneway:motorcar", "oneway:motor_vehicle",
                                         "oneway:vehicle", "oneway", NULL};
static const char *const BICYCLE_ONEWAY[] = {"oneway:bicycle", "oneway", NULL};
static const char *const FOOT_ONEWAY[] = {"oneway:foot", NULL};
static const char *const CAR_ONEWAY_NO[] = {"no", NULL};
static const char *const BICYCLE_ONEWAY_NO[] = {"no", "0", "false", NULL};
static const char *const IMPLIED_ONEWAY[] = {"highway=motorway", "junction=roundabout",
                                             "junction=circular", NULL};
static const char *const BICYCLE_TWOWAY[] = {"cycleway=opposite",
                                             "cycleway=opposite_lane",
                                             "cycleway=opposite_track",
                                             "cycleway:left=opposite",
                                             "cycleway:left=opposite_lane",
                                             "cycleway:left=opposite_track",
                                             "cycleway:right=opposite",
                                             "cycleway:right=opposite_lane",
                                             "cycleway:right=opposite_track",
                                             NULL};
static const char *const CAR_MAXSPEED[] = {"maxspeed:advisory", "maxspeed", "source:maxspeed",
                                           "maxspeed:type", NULL};
static const char *const BICYCLE_MAXSPEED[] = {"maxspeed", NULL};
static const char *const CAR_BLOCKED[] = {
    "area=yes",          "oneway=reversible",    "impassable=yes",
    "status=impassable", "highway=steps",        "highway=construction",
    "highway=proposed",  "railway=construction", NULL};
static const char *const CAR_RESTRICTED_TAGS[] = {"hov=designated", NULL};
static const char *const BICYCLE_BLOCKED[] = {"impassable=yes",       "status=impassable",
                                              "highway=construction", "highway=proposed",
                                              "highway=impassable",   NULL};
static const char *const FOOT_BLOCKED[] = {"impassable=yes", "status=impassable",
                                           "highway=proposed", "highway=impassable", NULL};
static const char *const PROPOSED[] = {"proposed", NULL};
static const char *const CONSTRUCTION_OK[] = {"no", "widening", "minor", NULL};
static const char *const CAR_SERVICE_FORBIDDEN[] = {"emergency_access", NULL};
static const char *const NONE[] = {NULL};
static const char *const CAR_BARRIER_PASS[] = {
    "gate",       "lift_gate",  "cattle_grid", "border_control",
    "toll_booth", "sally_port", "entrance",    "height_restrictor",
    "arch",       "no",         NULL};
static const char *const WALK_BARRIER_BLOCK[] = {"yes", "wall", "fence", NULL};
static const char *const CAR_RESTRICTIONS[] = {"restriction", "restriction:vehicle",
                                               "restriction:motor_vehicle", "restriction:motorcar",
                                               NULL};
static const char *const CAR_EXCEPT[] = {"motorcar", "motor_vehicle", "vehicle", NULL};

/* car.lua's `excludable` sets (each a single class). */
static const char *const CAR_EXCLUDABLE[] = {"toll", "motorway", "ferry", NULL};

/* What the motor-vehicle profiles (car, truck) share: car.lua's rules. */
#define MOTOR_VEHICLE_COMMON                                                                       \
    .default_kmh = 10, .access_directional = 1, .access_allow = NULL, .access_deny = CAR_DENY,     \
    .access_restricted = CAR_RESTRICTED, .restricted_highways = CAR_RESTRICTED_HIGHWAYS,           \
    .restricted_tags = CAR_RESTRICTED_TAGS, .restricted_lanes = "hov:lanes",                       \
    .oneway_no = CAR_ONEWAY_NO, .implied_oneway = IMPLIED_ONEWAY, .twoway = NONE,                  \
    .speed_reduction = 0.8, .maxspeed_zones = CAR_ZONES, .maxspeed_types = CAR_ZONE_TYPES,         \
    .surface_kmh = CAR_SURFACE, .tracktype_kmh = CAR_TRACKTYPE, .smoothness_kmh = CAR_SMOOTHNESS,  \
    .route_kmh = CAR_ROUTES, .bridge_kmh = MOVABLE_BRIDGE, .blocked = CAR_BLOCKED,                 \
    .blocked_keys = PROPOSED, .construction_ok = CONSTRUCTION_OK,                                  \
    .service_forbidden = CAR_SERVICE_FORBIDDEN, .service_factor = CAR_SERVICE_FACTOR,              \
    .side_road_factor = 0.8, .narrow_factor = 0.5, .alternating_factor = 0.4, .push_kmh = 0,       \
    .barrier_blocks_by_default = 1, .barrier_list = CAR_BARRIER_PASS,                              \
    .node_rules = GP_OSM_NODE_KERB_OK

static const gp_osm_profile PROFILES[] = {
    {
        .name = "car",
        .classes = CAR_CLASSES,
        .access_keys = CAR_ACCESS,
        .oneway_keys = CAR_ONEWAY,
        .maxspeed_keys = CAR_MAXSPEED,
        .vehicle_height = 2.0,
        .vehicle_width = 1.9,
        .vehicle_length = 4.8,
        .vehicle_weight_kg = 2000,
        .restriction_keys = CAR_RESTRICTIONS,
        .restriction_except = CAR_EXCEPT,
        .excludable = CAR_EXCLUDABLE,
        MOTOR_VEHICLE_COMMON,
    },
    {
        .name = "bicycle",
        .classes = BICYCLE_CLASSES,
        .default_kmh = 15,
        .access_keys = BICYCLE_ACCESS,
        .access_directional = 0,
        .access_allow = BICYCLE_ALLOW,
        .access_deny = BICYCLE_DENY,
        .access_restricted = NONE,
        .restricted_highways = NONE,
        .restricted_tags = NONE,
        .oneway_keys = BICYCLE_ONEWAY,
        .oneway_no = BICYCLE_ONEWAY_NO,
        .implied_oneway = IMPLIED_ONEWAY,
        .twoway = BICYCLE_TWOWAY,
        .maxspeed_keys = BICYCLE_MAXSPEED,
        .speed_reduction = 0,
        .maxspeed_zones = NO_KV,
        .maxspeed_types = NO_KV,
        .surface_kmh = BICYCLE_SURFACE,
        .tracktype_kmh = NO_KV,
        .smoothness_kmh = NO_KV,
        .route_kmh = FERRY_ONLY,
        .bridge_kmh = MOVABLE_BRIDGE,
        .blocked = BICYCLE_BLOCKED,
        .blocked_keys = PROPOSED,
        .construction_ok = CONSTRUCTION_OK,
        .service_forbidden = NONE,
        .service_factor = NO_KV,
        .push_kmh = 4,
        .barrier_blocks_by_default = 0,
        .barrier_list = WALK_BARRIER_BLOCK,
        .node_rules = GP_OSM_NODE_CROSSING_OK,
        .restriction_keys = NULL,
        .restriction_except = NONE,
    },
    {
        .name = "foot",
        .classes = FOOT_CLASSES,
        .default_kmh = 5,
        .access_keys = FOOT_ACCESS,
        .access_directional = 1,
        .access_allow = NULL,
        .access_deny = FOOT_DENY,
        .access_restricted = NONE,
        .restricted_highways = NONE,
        .restricted_tags = NONE,
        .oneway_keys = FOOT_ONEWAY,
        .oneway_no = CAR_ONEWAY_NO,
        .implied_oneway = NONE,
        .twoway = NONE,
        .maxspeed_keys = NONE,
        .speed_reduction = 0,
        .maxspeed_zones = NO_KV,
        .maxspeed_types = NO_KV,
        .surface_kmh = FOOT_SURFACE,
        .tracktype_kmh = NO_KV,
        .smoothness_kmh = NO_KV,
        .route_kmh = FERRY_ONLY,
        .bridge_kmh = NO_KV,
        .blocked = FOOT_BLOCKED,
        .blocked_keys = PROPOSED,
        .construction_ok = NULL,
        .service_forbidden = NONE,
        .service_factor = NO_KV,
        .push_kmh = 0,
        .barrier_blocks_by_default = 0,
        .barrier_list = WALK_BARRIER_BLOCK,
        .node_rules = 0,
        .restriction_keys = NULL,
        .restriction_except = NONE,
    },
    {
        .name = "truck",
        .classes = TRUCK_CLASSES,
        .access_keys = TRUCK_ACCESS,
        .oneway_keys = TRUCK_ONEWAY,
        .maxspeed_keys = TRUCK_MAXSPEED,
        .max_kmh = 80,
        /* no vehicle_* here: each request gives its own */
        .restriction_keys = TRUCK_RESTRICTIONS,
        .restriction_except = TRUCK_EXCEPT,
        .excludable = CAR_EXCLUDABLE,
        MOTOR_VEHICLE_COMMON,
    },
};

const gp_osm_profile *gp_osm_profile_find(const char *name) {
    for (size_t i = 0; i < sizeof PROFILES / sizeof PROFILES[0]; i++)
        if (name && strcmp(PROFILES[i].name, name) == 0) return &PROFILES[i];
    return NULL;
}

const char *gp_osm_profile_names(void) { return "car|bicycle|foot|truck"; }

static const struct {
    const char *name;
    unsigned bit;
} CLASS_BITS[] = {{"motorway", GP_OSM_CLASS_MOTORWAY},
                  {"toll", GP_OSM_CLASS_TOLL},
                  {"ferry", GP_OSM_CLASS_FERRY}};

unsigned gp_osm_class_bit(const char *name) {
    for (size_t i = 0; name && i < sizeof CLASS_BITS / sizeof CLASS_BITS[0]; i++)
        if (!strcmp(CLASS_BITS[i].name, name)) return CLASS_BITS[i].bit;
    return 0;
}

unsigned gp_osm_arc_classes(const gp_graph *g, uint32_t a) {
    unsigned c = 0;
    if (g->arc_class && g->arc_class[a] == GP_ROAD_MOTORWAY) c |= GP_OSM_CLASS_MOTORWAY;
    if (g->arc_class && g->arc_class[a] == GP_ROAD_FERRY) c |= GP_OSM_CLASS_FERRY;
    if (gp_graph_arc_flags(g, a) & GP_ARC_TOLL) c |= GP_OSM_CLASS_TOLL;
    return c;
}

unsigned gp_osm_profile_classes(const gp_osm_profile *p) {
    unsigned c = 0;
    for (size_t i = 0; p && p->excludable && p->excludable[i]; i++)
        c |= gp_osm_class_bit(p->excludable[i]);
    return c;
}

/* ------------------------------------------------------------------------------------------- */
/* Checking a profile                                                                            */
/* ------------------------------------------------------------------------------------------- */

static int bad_kmh(double v) { return !isfinite(v) || v < 0; }
static int bad_factor(double v) { return !isfinite(v) || v < 0 || v > 1; }

static int check_kv(const gp_osm_profile *p, const char *table, const gp_osm_kv *kv, int factor,
                    gp_err *err) {
    for (; kv && kv->value; kv++)
        if (factor ? bad_factor(kv->v) || kv->v == 0 : bad_kmh(kv->v))
            return gp_err_set(err, GP_EINVAL, "profile %s: %s row '%s' has %g (want %s)", p->name,
                              table, kv->value, kv->v, factor ? "a factor in (0, 1]" : "km/h >= 0");
    return GP_OK;
}

int gp_osm_profile_check(const gp_osm_profile *p, gp_err *err) {
    if (!p || !p->name || !p->classes || !p->access_keys || !p->access_deny)
        return gp_err_set(err, GP_EINVAL, "profile %s: no class table or access keys",
                          p && p->name ? p->name : "(unnamed)");
    for (const gp_osm_class *c = p->classes; c->key; c++) {
        if (!c->value || bad_kmh(c->kmh) || c->cls <= GP_ROAD_UNKNOWN ||
            c->cls >= GP_ROAD_CLASS_COUNT || (c->kind != GP_OSM_RIDE && c->kind != GP_OSM_PUSH) ||
            (c->kind == GP_OSM_PUSH && c->kmh <= 0))
            return gp_err_set(err, GP_EINVAL,
                              "profile %s: class row %s=%s cannot be applied (speed %g km/h, "
                              "class %d, kind %d)",
                              p->name, c->key, c->value ? c->value : "(null)", c->kmh, c->cls,
                              c->kind);
    }
    struct {
        const char *name;
        double v;
        int factor;
    } nums[] = {{"default_kmh", p->default_kmh, 0},
                {"speed_reduction", p->speed_reduction, 1},
                {"side_road_factor", p->side_road_factor, 1},
                {"narrow_factor", p->narrow_factor, 1},
                {"alternating_factor", p->alternating_factor, 1},
                {"vehicle_height", p->vehicle_height, 0},
                {"vehicle_width", p->vehicle_width, 0},
                {"vehicle_length", p->vehicle_length, 0},
                {"vehicle_weight_kg", p->vehicle_weight_kg, 0},
                {"push_kmh", p->push_kmh, 0}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (nums[i].factor ? bad_factor(nums[i].v) : bad_kmh(nums[i].v))
            return gp_err_set(err, GP_EINVAL, "profile %s: %s = %g cannot be applied (want %s)",
                              p->name, nums[i].name, nums[i].v,
                              nums[i].factor ? "0 (none) or a factor in (0, 1]" : ">= 0");
    if (check_kv(p, "maxspeed_zones", p->maxspeed_zones, 0, err) ||
        check_kv(p, "maxspeed_types", p->maxspeed_types, 0, err) ||
        check_kv(p, "surface_kmh", p->surface_kmh, 0, err) ||
        check_kv(p, "tracktype_kmh", p->tracktype_kmh, 0, err) ||
        check_kv(p, "smoothness_kmh", p->smoothness_kmh, 0, err) ||
        check_kv(p, "route_kmh", p->route_kmh, 0, err) ||
        check_kv(p, "bridge_kmh", p->bridge_kmh, 0, err) ||
        check_kv(p, "service_factor", p->service_factor, 1, err))
        return err->code;
    const char *const *kvlists[] = {p->implied_oneway, p->twoway, p->blocked, p->restricted_tags};
    for (size_t i = 0; i < sizeof kvlists / sizeof kvlists[0]; i++)
        for (const char *const *s = kvlists[i]; s && *s; s++)
            if (!strchr(*s, '=') || **s == '=')
                return gp_err_set(err, GP_EINVAL,
                                  "profile %s: tag rule '%s' cannot be applied (want key=value)",
                                  p->name, *s);
    return GP_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Evaluation                                                                                    */
/* ------------------------------------------------------------------------------------------- */

static const char *tag(const gp_osm_tag *t, uint32_t n, const char *key) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(t[i].key, key) == 0) return t[i].value;
    return NULL;
}

static int in_list(const char *const *list, const char *v) {
    for (; v && list && *list; list++)
        if (strcmp(*list, v) == 0) return 1;
    return 0;
}

/* The number of value v in kv, or -1 when v is not listed. */
static double kv_find(const gp_osm_kv *kv, const char *v) {
    for (; v && kv && kv->value; kv++)
        if (strcmp(kv->value, v) == 0) return kv->v;
    return -1;
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

/* KEY:forward / KEY:backward / KEY over a sequence of keys, the first found in each direction
 * (OSRM's Tags.get_forward_backward_by_set). */
static void dir_values(const gp_osm_tag *t, uint32_t n, const char *const *keys, const char **fwd,
                       const char **bwd) {
    *fwd = *bwd = NULL;
    char buf[128];
    for (; keys && *keys; keys++) {
        if (!*fwd) {
            snprintf(buf, sizeof buf, "%s:forward", *keys);
            *fwd = tag(t, n, buf);
        }
        if (!*bwd) {
            snprintf(buf, sizeof buf, "%s:backward", *keys);
            *bwd = tag(t, n, buf);
        }
        if (!*fwd || !*bwd) {
            const char *common = tag(t, n, *keys);
            if (!*fwd) *fwd = common;
            if (!*bwd) *bwd = common;
        }
        if (*fwd && *bwd) break;
    }
}

/* The first tagged key of a sequence (OSRM's find_access_tag). */
static const char *first_value(const gp_osm_tag *t, uint32_t n, const char *const *keys) {
    for (; keys && *keys; keys++) {
        const char *v = tag(t, n, *keys);
        if (v) return v;
    }
    return NULL;
}

double gp_osm_parse_maxspeed(const char *v) {
    if (!v || !isdigit((unsigned char)*v)) return -1;
    double x = 0;
    for (const char *s = v; isdigit((unsigned char)*s); s++) x = x * 10 + (*s - '0');
    if (strstr(v, "mph") || strstr(v, "mp/h")) x *= 1.609;
    return x;
}

double gp_osm_maxspeed_kmh(const gp_osm_profile *p, const char *v) {
    if (!v) return 0;
    double x = gp_osm_parse_maxspeed(v);
    if (x >= 0) return x;
    char low[64];
    size_t l = strlen(v);
    if (l >= sizeof low) return 0;
    for (size_t i = 0; i <= l; i++) low[i] = (char)tolower((unsigned char)v[i]);
    double z = kv_find(p->maxspeed_zones, low);
    if (z >= 0) return z;
    /* "%a%a:(%a+)" anywhere in the value */
    for (size_t i = 0; i + 3 < l; i++) {
        if (isalpha((unsigned char)low[i]) && isalpha((unsigned char)low[i + 1]) &&
            low[i + 2] == ':' && isalpha((unsigned char)low[i + 3])) {
            char type[64];
            size_t k = 0;
            for (size_t j = i + 3; isalpha((unsigned char)low[j]) && k + 1 < sizeof type; j++)
                type[k++] = low[j];
            type[k] = '\0';
            z = kv_find(p->maxspeed_types, type);
            return z >= 0 ? z : 0;
        }
    }
    return 0;
}

/* The first number of a value ("2.5", "2,5 m"), -1 when none; *rest points after it. */
static double first_number(const char *v, const char **rest) {
    const char *s = v;
    while (*s && !isdigit((unsigned char)*s)) s++;
    if (!*s) return -1;
    double x = 0;
    for (; isdigit((unsigned char)*s); s++) x = x * 10 + (*s - '0');
    if ((*s == '.' || *s == ',') && isdigit((unsigned char)s[1])) {
        double f = 0.1;
        for (s++; isdigit((unsigned char)*s); s++, f /= 10) x += (*s - '0') * f;
    }
    *rest = s;
    return x;
}

double gp_osm_parse_meters(const char *v) {
    if (!v) return -1;
    const char *rest;
    double x = first_number(v, &rest);
    if (x < 0) return -1;
    const char *ft = strchr(v, '\'');
    if (ft) { /* feet'inches" */
        double inches = x * 12;
        const char *r2;
        double in = first_number(ft, &r2);
        if (in > 0) inches += (double)(long)in;
        return inches * 0.0254;
    }
    return x;
}

double gp_osm_parse_kg(const char *v) {
    if (!v) return -1;
    const char *rest;
    double x = first_number(v, &rest);
    if (x < 0) return -1;
    if (strstr(v, "lbs")) return x * 0.45359237;
    if (strstr(v, "kg")) return x;
    return x * 1000; /* tonnes */
}

/* One limit tag's value in metres (metric) or tonnes (!metric); -1 when it is none. */
static double limit_value(const char *v, int metric) {
    static const char *const none[] = {"none", "default", "below_default", "unsigned", "no-sign",
                                       "no",   NULL};
    if (!v || in_list(none, v) || !isdigit((unsigned char)*v)) return -1;
    if (metric) {
        double x = gp_osm_parse_meters(v);
        if (x > 0 && !strchr(v, '\'') && strstr(v, "ft")) x *= 0.3048;
        return x;
    }
    double kg = gp_osm_parse_kg(v);
    if (kg > 0 && strstr(v, "st") && !strstr(v, "lbs")) kg *= 0.90718474; /* short tons */
    return kg < 0 ? -1 : kg / 1000;
}

int gp_osm_way_limits(const gp_osm_tag *tags, uint32_t ntags, uint8_t out[GP_LIMITS]) {
    static const char *const keys[GP_LIMITS][2] = {{"maxheight:physical", "maxheight"},
                                                   {"maxwidth:physical", "maxwidth"},
                                                   {"maxlength", NULL},
                                                   {"maxweight", NULL},
                                                   {"maxaxleload", NULL}};
    int any = 0;
    for (int k = 0; k < GP_LIMITS; k++) {
        out[k] = 0;
        double x = -1;
        for (int j = 0; j < 2 && x < 0 && keys[k][j]; j++)
            x = limit_value(tag(tags, ntags, keys[k][j]), k < GP_LIM_WEIGHT);
        double steps = x > 0 ? floor(x / gp_limit_quantum(k) + 1e-9) : 0;
        if (steps >= 1 && steps <= 255) {
            out[k] = (uint8_t)steps;
            any = 1;
        }
    }
    return any;
}

/* maxheight values meaning "the default" (4.5 m, as OSRM's Measure). */
static double height_m(const char *v) {
    static const char *const dflt[] = {"default", "none", "no-sign", "unsigned", NULL};
    if (!v) return -1;
    if (in_list(dflt, v)) return 4.5;
    return gp_osm_parse_meters(v);
}

/* The leading integer of a value ("3.5" -> 3), -1 when it does not start with a digit (Lua's
 * tonumber(s:match("%d*"))). */
static double leading_int(const char *v) {
    if (!v || !isdigit((unsigned char)*v)) return -1;
    return (double)strtol(v, NULL, 10);
}

/* 1 when every '|'-separated lane of v is "designated" (OSRM's has_all_designated_hov_lanes). */
static int all_designated(const char *v) {
    if (!v) return 0;
    for (const char *s = v;;) {
        const char *bar = strchr(s, '|');
        size_t l = bar ? (size_t)(bar - s) : strlen(s);
        if (l != 10 || strncmp(s, "designated", 10) != 0) return 0;
        if (!bar) return 1;
        s = bar + 1;
    }
}

/* The class row of a way: the first row whose key=value is tagged. */
static const gp_osm_class *find_class(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n) {
    for (const gp_osm_class *k = p->classes; k->key; k++) {
        const char *v = tag(t, n, k->key);
        if (v && strcmp(v, k->value) == 0) return k;
    }
    return NULL;
}

static double cap(double kmh, const gp_osm_kv *table, const char *v) {
    double c = kv_find(table, v);
    return c >= 0 && c < kmh ? c : kmh;
}

void gp_osm_eval_way(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n, gp_osm_way_eval *o) {
    memset(o, 0, sizeof *o);
    o->ferry_s = -1;
    o->fwd_factor = o->bwd_factor = 1;
    const char *hw = tag(t, n, "highway");
    const char *route = tag(t, n, "route");
    const gp_osm_class *c = find_class(p, t, n);
    double route_kmh = kv_find(p->route_kmh, route);
    const char *bridge = tag(t, n, "bridge");
    double bridge_kmh = kv_find(p->bridge_kmh, bridge);
    if (!c && !(hw && *hw) && route_kmh <= 0) return; /* nothing that could be routable */

    /* blocked ways */
    if (has_kv(t, n, p->blocked)) return;
    for (const char *const *k = p->blocked_keys; k && *k; k++)
        if (tag(t, n, *k)) return;
    const char *construction = tag(t, n, "construction");
    if (p->construction_ok && construction && !in_list(p->construction_ok, construction)) return;
    const char *service = tag(t, n, "service");
    if (in_list(p->service_forbidden, service)) return;

    int ok[2] = {1, 1}; /* direction allowed: forward, backward */
    /* vehicle size: physical and legal limits */
    static const char *const HEIGHT[] = {"maxheight:physical", "maxheight", NULL};
    static const char *const WIDTH[] = {"maxwidth:physical", "maxwidth", "width", "est_width",
                                        NULL};
    static const char *const LENGTH[] = {"maxlength", NULL};
    static const char *const WEIGHT[] = {"maxweight", NULL};
    const char *dv[2];
    if (p->vehicle_height > 0) {
        dir_values(t, n, HEIGHT, &dv[0], &dv[1]);
        for (int d = 0; d < 2; d++) {
            double h = height_m(dv[d]);
            if (dv[d] && h >= 0 && h < p->vehicle_height) ok[d] = 0;
        }
    }
    if (p->vehicle_width > 0) {
        dir_values(t, n, WIDTH, &dv[0], &dv[1]);
        for (int d = 0; d < 2; d++) {
            double w = gp_osm_parse_meters(dv[d]);
            if (dv[d] && w >= 0 && w <= p->vehicle_width) ok[d] = 0;
        }
    }
    if (p->vehicle_length > 0) {
        dir_values(t, n, LENGTH, &dv[0], &dv[1]);
        for (int d = 0; d < 2; d++) {
            double l = gp_osm_parse_meters(dv[d]);
            if (dv[d] && l >= 0 && l < p->vehicle_length) ok[d] = 0;
        }
    }
    if (p->vehicle_weight_kg > 0) {
        dir_values(t, n, WEIGHT, &dv[0], &dv[1]);
        for (int d = 0; d < 2; d++) {
            double w = gp_osm_parse_kg(dv[d]);
            if (dv[d] && w >= 0 && w < p->vehicle_weight_kg) ok[d] = 0;
        }
    }

    /* access */
    const char *acc[2];
    if (p->access_directional) dir_values(t, n, p->access_keys, &acc[0], &acc[1]);
    else acc[0] = acc[1] = first_value(t, n, p->access_keys);
    int restricted[2] = {0, 0}, denied = 0;
    for (int d = 0; d < 2; d++) {
        if (in_list(p->restricted_highways, hw) && in_list(p->access_restricted, acc[d]))
            restricted[d] = 1;
        if (in_list(p->access_deny, acc[d]) && !restricted[d]) {
            ok[d] = 0;
            denied++;
        }
    }
    if (denied == 2 || (!p->access_directional && denied)) return;
    if (has_kv(t, n, p->restricted_tags)) restricted[0] = restricted[1] = 1;
    if (p->restricted_lanes) { /* KEY:forward / :backward, else KEY (OSRM reads it per oneway) */
        char buf[128];
        const char *common = tag(t, n, p->restricted_lanes);
        snprintf(buf, sizeof buf, "%s:forward", p->restricted_lanes);
        const char *lf = tag(t, n, buf);
        snprintf(buf, sizeof buf, "%s:backward", p->restricted_lanes);
        const char *lb = tag(t, n, buf);
        if (all_designated(lf ? lf : common)) restricted[0] = 1;
        if (all_designated(lb ? lb : common)) restricted[1] = 1;
    }

    /* oneway */
    int oneway = 0; /* 1 forward only, -1 backward only */
    int implied = has_kv(t, n, p->implied_oneway);
    const char *ow = p->oneway_keys ? first_value(t, n, p->oneway_keys) : NULL;
    if (ow && !strcmp(ow, "-1")) oneway = -1;
    else if (ow && (!strcmp(ow, "yes") || !strcmp(ow, "1") || !strcmp(ow, "true"))) oneway = 1;
    else if (implied && !in_list(p->oneway_no, ow)) oneway = 1;
    if (oneway && has_kv(t, n, p->twoway)) oneway = 0;
    int oneway_ok[2] = {oneway != -1, oneway != 1};

    /* speed: route / movable bridge, class, default with an allowing access tag */
    double kmh[2] = {-1, -1};
    int rideable_way = 0; /* OSRM's way_type_allows_pushing */
    double duration = -1;
    if (route_kmh > 0 || bridge_kmh > 0) {
        kmh[0] = kmh[1] = route_kmh > 0 ? route_kmh : bridge_kmh;
        double du = gp_osm_parse_duration(tag(t, n, "duration"));
        if (du >= 0) duration = du > 1 ? du : 1;
        o->cls = route_kmh > 0 ? GP_ROAD_FERRY : c ? c->cls : GP_ROAD_UNKNOWN;
        rideable_way = route_kmh <= 0;
    } else if (c && c->kind == GP_OSM_RIDE && c->kmh > 0) {
        kmh[0] = kmh[1] = c->kmh;
        o->cls = c->cls;
        rideable_way = 1;
    } else if (p->default_kmh > 0) {
        o->cls = c ? c->cls : GP_ROAD_UNKNOWN;
        for (int d = 0; d < 2; d++) {
            const char *a = acc[d];
            int allows =
                a && (p->access_allow ? in_list(p->access_allow, a) : !in_list(p->access_deny, a));
            if (allows) kmh[d] = p->default_kmh;
        }
        if (kmh[0] > 0 || kmh[1] > 0) rideable_way = 1;
    }
    for (int d = 0; d < 2; d++)
        if (!ok[d] || !oneway_ok[d] || kmh[d] <= 0) kmh[d] = -1;

    /* bicycle pushing where riding is not allowed */
    const char *foot = tag(t, n, "foot");
    if (p->push_kmh > 0 && !(foot && !strcmp(foot, "no"))) {
        double push[2] = {-1, -1};
        const char *ff = tag(t, n, "foot:forward"), *fb = tag(t, n, "foot:backward");
        if (c && c->kind == GP_OSM_PUSH) {
            push[0] = push[1] = c->kmh;
            o->cls = c->cls;
        } else if ((foot && !strcmp(foot, "yes")) || rideable_way) {
            push[0] = p->push_kmh;
            if (!implied) push[1] = p->push_kmh;
        } else {
            if (ff && !strcmp(ff, "yes")) push[0] = p->push_kmh;
            if (fb && !strcmp(fb, "yes")) push[1] = p->push_kmh;
        }
        for (int d = 0; d < 2; d++)
            if (kmh[d] <= 0 && push[d] > 0) kmh[d] = push[d];
        const char *bic = tag(t, n, "bicycle");
        if (bic && !strcmp(bic, "dismount")) kmh[0] = kmh[1] = p->push_kmh;
        if (!o->cls && c) o->cls = c->cls;
    }
    if (kmh[0] <= 0 && kmh[1] <= 0) return;

    /* maxspeed: replaces the speed at speed_reduction (car), or only lowers it */
    if (p->maxspeed_keys && p->maxspeed_keys[0]) {
        dir_values(t, n, p->maxspeed_keys, &dv[0], &dv[1]);
        for (int d = 0; d < 2; d++) {
            if (kmh[d] <= 0) continue;
            if (p->speed_reduction > 0) {
                double ms = gp_osm_maxspeed_kmh(p, dv[d]);
                if (ms > 0) kmh[d] = ms * p->speed_reduction;
            } else {
                double ms = gp_osm_parse_maxspeed(dv[d]);
                if (ms > 0 && ms < kmh[d]) kmh[d] = ms;
            }
        }
    }
    /* surface, tracktype, smoothness caps */
    const char *surface = tag(t, n, "surface"), *tracktype = tag(t, n, "tracktype"),
               *smooth = tag(t, n, "smoothness");
    for (int d = 0; d < 2; d++) {
        if (kmh[d] <= 0) continue;
        kmh[d] = cap(kmh[d], p->surface_kmh, surface);
        kmh[d] = cap(kmh[d], p->tracktype_kmh, tracktype);
        kmh[d] = cap(kmh[d], p->smoothness_kmh, smooth);
    }
    if (kmh[0] <= 0 && kmh[1] <= 0) return;

    /* weight factors (OSRM's routability rate; durations keep the speed) */
    double f = 1;
    double sf = kv_find(p->service_factor, service);
    if (sf > 0 && sf < f) f = sf;
    if (p->narrow_factor > 0) {
        double width = leading_int(tag(t, n, "width")), lanes = leading_int(tag(t, n, "lanes"));
        int both = kmh[0] > 0 && kmh[1] > 0;
        if ((width >= 0 && width <= 3) || (lanes >= 0 && lanes <= 1 && both))
            f = f < p->narrow_factor ? f : p->narrow_factor;
    }
    const char *plain_oneway = tag(t, n, "oneway");
    if (p->alternating_factor > 0 && plain_oneway && !strcmp(plain_oneway, "alternating"))
        f = f < p->alternating_factor ? f : p->alternating_factor;
    const char *side = tag(t, n, "side_road");
    if (p->side_road_factor > 0 && side && (!strcmp(side, "yes") || !strcmp(side, "rotary")))
        f = f < p->side_road_factor ? f : p->side_road_factor;

    for (int d = 0; d < 2; d++)
        if (p->max_kmh > 0 && kmh[d] > p->max_kmh) kmh[d] = p->max_kmh;
    o->fwd_mps = kmh[0] > 0 ? kmh[0] / 3.6 : 0;
    o->bwd_mps = kmh[1] > 0 ? kmh[1] / 3.6 : 0;
    o->fwd_factor = o->bwd_factor = f;
    o->fwd_restricted = restricted[0] && kmh[0] > 0;
    o->bwd_restricted = restricted[1] && kmh[1] > 0;
    o->ferry_s = duration;
    o->routable = 1;
    o->name = tag(t, n, "name");
    o->ref = tag(t, n, "ref");
}

int gp_osm_node_blocks(const gp_osm_profile *p, const gp_osm_tag *t, uint32_t n) {
    const char *acc = first_value(t, n, p->access_keys);
    const char *hw = tag(t, n, "highway");
    int crossing = hw && !strcmp(hw, "crossing");
    if (acc) {
        if ((p->node_rules & GP_OSM_NODE_CROSSING_OK) && crossing) return 0;
        return in_list(p->access_deny, acc) && !in_list(p->access_restricted, acc);
    }
    const char *b = tag(t, n, "barrier");
    if (!b) return 0;
    const char *bollard = tag(t, n, "bollard");
    if (bollard && !strcmp(bollard, "rising")) return 0;
    if (p->node_rules & GP_OSM_NODE_KERB_OK) {
        const char *kerb = tag(t, n, "kerb");
        if (kerb && (!strcmp(kerb, "lowered") || !strcmp(kerb, "flush"))) return 0;
        if (!strcmp(b, "kerb") && crossing) return 0;
    }
    if (p->vehicle_height > 0 && !strcmp(b, "height_restrictor")) {
        const char *mh = tag(t, n, "maxheight");
        double h = height_m(mh);
        if (mh && h >= 0 && h < p->vehicle_height) return 1;
    }
    int listed = in_list(p->barrier_list, b);
    return p->barrier_blocks_by_default ? !listed : listed;
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
