/* graph.h - the CSR graph model every backend reads.
 *
 * A directed weighted graph: forward CSR (row, col, w) and its reverse (in-arcs), built once by a
 * gp_builder and immutable afterwards, so any number of threads may read it. Nodes have dense
 * internal indices 0..n-1 assigned in ascending order of their external 64-bit ids (the ids of the
 * input file or table); gp_graph_index() maps external -> internal through an open-addressing hash.
 *
 * Weights: non-negative uint32 "stored units". Inputs with fractional costs are converted with a
 * per-graph fixed-point scale: weight = round(cost * scale); answers are divided by scale again so
 * they come back in the input's units. A cost whose scaled value exceeds UINT32_MAX, or which
 * rounds with a relative error over 1/1000 (e.g. 0.0001 at scale 1000 becomes 0), is rejected: the
 * message names the scale to use. Path lengths are uint64 and never overflow.
 *
 * Lifetime: gp_graph objects are reference counted (gp_graph_ref/unref) so a reload can swap the
 * served graph while requests in flight finish on the old one. A backend may attach device state
 * (dev, dev_free) that is released with the graph.
 */
#ifndef GP_GRAPH_H
#define GP_GRAPH_H

#include "graph/gp.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Default fixed-point scales: DIMACS and hop-count topologies are integer (1); CSV and PostgreSQL
 * costs are commonly metres or seconds as doubles, kept to 1/1000 of a unit. */
#define GP_SCALE_INTEGER 1.0
#define GP_SCALE_DEFAULT_FRACTIONAL 1000.0

/* External id -> internal index. Two layouts (use gp_graph_index, not the fields):
 *  - dense ids (max - min < 4n + 1024, e.g. DIMACS 1..N): keys == NULL and vals[id - base] for
 *    base <= id < base + span (GP_NONE where no node);
 *  - otherwise open addressing: keys/vals of mask + 1 slots, empty slot has vals == GP_NONE. */
typedef struct gp_idmap {
    int64_t *keys;
    uint32_t *vals;
    uint64_t mask; /* capacity - 1, capacity a power of two (hash layout) */
    int64_t base;  /* smallest id (dense layout) */
    uint64_t span; /* entries of vals (dense layout) */
} gp_idmap;

struct gp_spatial; /* graph/spatial.h */

/* Vehicle limits (arc_limits): metres in 0.1 m steps for the first three, tonnes in 0.5 t
 * steps for the last two; a stored 1..255 is that many steps (an arc limit over 25.5 m or
 * 127.5 t is stored as none). */
enum { GP_LIM_HEIGHT = 0, GP_LIM_WIDTH, GP_LIM_LENGTH, GP_LIM_WEIGHT, GP_LIM_AXLELOAD, GP_LIMITS };
static inline double gp_limit_quantum(int k) { return k < GP_LIM_WEIGHT ? 0.1 : 0.5; }
typedef struct gp_graph {
    uint32_t n;        /* nodes */
    uint32_t m;        /* arcs */
    uint32_t *row;     /* n+1 offsets into col/w: out-arcs of u are row[u]..row[u+1]-1 */
    uint32_t *col;     /* m arc heads, sorted by (tail, head, weight) */
    uint32_t *w;       /* m arc weights (stored units) */
    uint32_t *rrow;    /* reverse CSR: in-arcs of v are rrow[v]..rrow[v+1]-1 */
    uint32_t *rcol;    /* m arc tails */
    uint32_t *rw;      /* m weights */
    int64_t *ext;      /* n external ids, ascending */
    gp_idmap idmap;    /* external id -> internal index */
    double *lon, *lat; /* n coordinates, or NULL when the input has none */
    char **names;      /* n node names (entries may be NULL), or NULL */
    double scale;      /* stored weight = round(cost * scale) */
    uint32_t max_w;   /* largest arc weight (a version's: at least its largest, graph.c reweight) */
    uint64_t hash;    /* content hash: ids, arcs, weights, scale (the graph's version) */
    char version[17]; /* hash as 16 hex digits */
    char source[512]; /* the spec it was loaded from */
    char format[16];  /* "dimacs", "csv", "gen", ... */
    int directed_input;         /* 0 when the input was undirected (every edge became two arcs) */
    struct gp_spatial *spatial; /* nearest-node index, built when coordinates exist */
    double loaded_at;           /* wall-clock seconds since the epoch */
    /* What the weights mean (graph/roadattr.c documents the defaults per format): unit_name is
     * "deciseconds", "seconds", "metres", "hops" or "cost" (unknown units); unit_s is the number
     * of seconds one unit of cost lasts when the cost is a travel time, else 0. */
    char unit_name[16];
    double unit_s;
    char profile[16]; /* routing profile of an OSM graph ("car", "bicycle", "foot"), else "" */
    /* Road attributes (OSM imports and snapshots fill them; every array may be NULL and the
     * gp_graph_arc_* accessors below then fall back to what the graph knows). Arc-indexed arrays
     * follow the forward CSR order: arc a is one of row[u]..row[u+1]-1. Owned by the graph. */
    float *arc_len_m;    /* m: length along the road's geometry, metres */
    uint32_t *arc_name;  /* m: offset into strtab of the road's name (0: none) */
    uint32_t *arc_ref;   /* m: offset into strtab of the road's ref, e.g. "A1" (0: none) */
    uint8_t *arc_class;  /* m: enum gp_road_class */
    uint8_t *arc_flags;  /* m: GP_ARC_* bits (roundabout, link, toll, ...); NULL: none known */
    uint32_t *arc_guide; /* m: offset into strtab of the arc's guidance record (0: none), the
                            fields of enum gp_guide_field for this direction of travel joined
                            by GP_GUIDE_SEP (gp_graph_arc_guide reads one) */
    uint32_t *arc_shape; /* m + 1: the interior shape points of arc a (tail to head, the end
                             nodes' own coordinates not repeated) are shape_lon/lat[arc_shape[a]
                             .. arc_shape[a + 1]) */
    double *shape_lon, *shape_lat;
    int64_t *shape_osm_id; /* arc_shape[m]: the original (OSM) node id of each shape point, or
                              NULL (graphs from formats without ids, snapshots older than it) */
    char *strtab;          /* NUL-terminated strings back to back; offset 0 holds "" */
    uint64_t strtab_len;
    int64_t *osm_id;     /* n: original (e.g. OSM) node id of each node when nodes were split
                             for turn restrictions (copies share their original's id); NULL when
                             ext[] are the original ids */
    uint8_t *node_flags; /* n: GP_NODE_* bits (traffic signals, stop, give way) of OSM nodes,
                            read by the turn model (graph/turns.h); NULL when no node has one */
    /* Turn restrictions kept for the turn model (graph/turns.h applies them) when the loader made
     * no node copies for them (gp_load_opts.restrictions_as_turns): records back to back, each
     * [kind (GP_RESTR_NO / GP_RESTR_ONLY), k, arc_0 .. arc_{k-1}], k >= 2 forward-CSR arcs: arc_0
     * the from arc (into the via node or the first via way), arc_1 .. arc_{k-2} the path along
     * the via ways in order, arc_{k-1} the to arc. no: that arc sequence is never driven; only:
     * after arc_0 .. arc_{k-2} the next arc is one of the only records' to arcs with that same
     * prefix. NULL when none; part of the content hash and of snapshots. */
    uint32_t *restr;
    uint64_t restr_len;  /* uint32 entries of restr */
    double *arc_cap;     /* m: capacity of arc a in bit/s from a router topology (GraphML link
                            speeds, SNDlib capacities; 0: unknown), NULL when none is known. Not
                            part of the content hash (routing does not depend on it); read by
                            engine/planning.h for link utilization */
    uint8_t *arc_limits; /* m * GP_LIMITS: the vehicle limits of arc a (OSM maxheight, maxwidth,
                            maxlength, maxweight, maxaxleload) at arc_limits[a * GP_LIMITS + k],
                            quantized by gp_limit_quantum and rounded down; 0: none. NULL when
                            no arc has one (per-request limits, engine/metric.h) */
    /* A graph loaded from a snapshot (graph/snapshot.h) points into the file's read-only
     * mapping; its arrays there are not freed, map_unmap(map_base, map_len) releases them. */
    /* OSM place nodes kept for map labels (graph/osm.c: place=city, town, village, suburb,
     * quarter, neighbourhood or hamlet with a name): records back to back, read with
     * gp_graph_place_next; NULL when none. Not part of the content hash (routing ignores them);
     * part of snapshots. */
    uint8_t *places;
    uint64_t places_len;
    void *map_base;
    uint64_t map_len;
    void (*map_unmap)(void *base, uint64_t len);
    int refs;  /* reference count (atomic) */
    void *dev; /* backend device state, or NULL */
    void (*dev_free)(void *dev);
    void *cch; /* engine/cch.h state (customizable contraction hierarchy), or NULL */
    void (*cch_free)(void *cch);
    /* Road-segment index (graph/segidx.h), built at attach or on the first snap and released
     * with the graph through snap_free. */
    void *snap;
    void (*snap_free)(void *snap);
    /* OSM-segment index (graph/osmseg.h: the arcs of a directed segment between OSM node ids),
     * built on the first speed file applied and released with the graph through osmseg_free. */
    void *osmseg;
    void (*osmseg_free)(void *osmseg);
    /* The map matcher's device copy (engine/match_cuda.c), made by the first GPU batch on this
     * graph and released with it through mdev_free: a reweighted version's holds its weights,
     * its base's the topology they share. NULL until then. */
    void *mdev;
    void (*mdev_free)(void *mdev);
    /* Turn costs (graph/turns.h): the turn-expanded graph built at attach (engine/engine.c) for a
     * road graph with a profile, released with the graph through turns_free; NULL when none. */
    void *turns;
    void (*turns_free)(void *turns);
    /* 2n planar coordinates for the CCH order's inertial flow (engine/cch_flow.c), set on a turn
     * graph (its arcs' midpoints, owned by its gp_turns); NULL for other graphs. */
    const float *cch_xy;
    /* A reweighted version (gp_graph_reweight) owns only w and rw: every other array, the names,
     * the spatial index and the snap index are those of base, the graph it shares them with
     * (referenced; never itself a reweighted version). NULL for a graph that owns everything. */
    struct gp_graph *base;
    /* A reweighted version may list the nodes outside of which its arc weights are base's:
     * diff_tails (ascending, distinct, owned), ndiff_tails of them; NULL when not known. A new
     * version's CCH metric is then mapped from its predecessor's over those nodes' arcs alone
     * (engine/cch_custom.c gp_cch_map_metric_from). */
    uint32_t *diff_tails;
    uint32_t ndiff_tails;
    /* And the arcs (forward positions, ascending, distinct, owned) outside of which its weights
     * are base's: diff_arcs, ndiff_arcs of them (a superset is allowed); NULL when not known. The
     * turn graph of a version is then reweighted over those arcs alone (graph/turns.h). */
    uint32_t *diff_arcs;
    uint32_t ndiff_arcs;
    /* 1 for a per-request metric (engine/metric.h: exclude=, vehicle limits): its arcs of weight
     * GP_W_CLOSED are closed, and a route or table cell costing GP_W_CLOSED or more is no route
     * (engine/snap.c). 0 for every other graph. */
    int closed;
} gp_graph;
/* The weight of a closed arc in a per-request metric: the CCH reads it as "no arc" (GP_CCH_INF),
 * the Dijkstra family as a cost no real route reaches. */
#define GP_W_CLOSED UINT32_MAX

/* Incremental construction. Nodes are created on first mention (arc or add_node); coordinates and
 * names are optional per node. Arcs are kept as given (parallel arcs and self-loops included). */
typedef struct gp_builder gp_builder;
struct gp_load_opts; /* below */

gp_builder *gp_builder_new(double scale);
void gp_builder_free(gp_builder *b);
/* Declares a node; coordinates only when has_coord; name may be NULL (copied). Re-declaring a node
 * updates its coordinates / name. */
int gp_builder_add_node(gp_builder *b, int64_t id, int has_coord, double lon, double lat,
                        const char *name, gp_err *err);
int gp_builder_add_arc(gp_builder *b, int64_t u, int64_t v, uint32_t w, gp_err *err);
/* Road attributes of one arc (gp_builder_add_road_arc); strings and shape arrays are copied. */
typedef struct gp_road_attr {
    double len_m;                        /* length along the geometry, metres */
    const char *name, *ref;              /* may be NULL */
    int cls;                             /* enum gp_road_class */
    uint32_t nshape;                     /* interior shape points, tail to head */
    const double *shape_lon, *shape_lat; /* nshape each */
    const int64_t *shape_osm_id;         /* nshape original node ids, or NULL (none known) */
    unsigned flags;                      /* GP_ARC_* bits */
    const char *guide;                   /* guidance record (see arc_guide), may be NULL */
    uint8_t limits[GP_LIMITS];           /* vehicle limits (see arc_limits), 0: none */
} gp_road_attr;
/* An arc with road attributes. Once any arc has them, the graph gets every arc_* array (arcs
 * added without them: length 0, no name or ref, class unknown, no shape) and the strings table; the
 * attributes follow their arcs through gp_builder_finish's sort and enter the content hash. The
 * graph gets shape_osm_id when any arc came with shape ids (shape points of arcs without: 0). */
int gp_builder_add_road_arc(gp_builder *b, int64_t u, int64_t v, uint32_t w, const gp_road_attr *ra,
                            gp_err *err);
/* Records that node id stands for original node osm_id (a copy made for turn restrictions).
 * The graph gets osm_id[] when any node was given one (the others keep their own id). */
int gp_builder_set_osm_id(gp_builder *b, int64_t id, int64_t osm_id, gp_err *err);
/* Node attributes for node_flags (OSM node tags the turn model charges; graph/turns.h). */
enum {
    GP_NODE_SIGNAL = 1u,  /* highway=traffic_signals */
    GP_NODE_STOP = 2u,    /* highway=stop */
    GP_NODE_GIVE_WAY = 4u /* highway=give_way */
};
/* ORs GP_NODE_* bits into node id's flags (the node is created when new). The graph gets
 * node_flags[] when any node was given a non-zero value; they follow their nodes through
 * gp_builder_finish and enter the content hash. */
int gp_builder_set_node_flags(gp_builder *b, int64_t id, uint8_t flags, gp_err *err);
enum { GP_RESTR_NO = 1, GP_RESTR_ONLY = 2 };
/* A turn restriction for gp_graph.restr: kind GP_RESTR_*, k >= 2 arcs given by their insertion
 * index (the order of gp_builder_add_road_arc calls, from 0), translated to forward-CSR arcs by
 * gp_builder_finish. The graph gets restr when any was given. */
int gp_builder_add_restriction(gp_builder *b, int kind, const uint64_t *arcs, uint32_t k,
                               gp_err *err);
/* Converts a cost in input units to a stored weight under the builder's scale (see above). */
int gp_builder_cost(const gp_builder *b, double cost, uint32_t *w, gp_err *err);
double gp_builder_scale(const gp_builder *b);
uint32_t gp_builder_nodes(const gp_builder *b);
uint64_t gp_builder_arcs(const gp_builder *b);
/* Optional capacity hint (e.g. from a DIMACS `p` line): pre-sizes node and arc storage and the
 * direct id table for ids 0..nodes. Never required; a wrong hint only costs memory. */
int gp_builder_reserve(gp_builder *b, uint64_t nodes, uint64_t arcs, gp_err *err);
/* Applies o's max_nodes / max_arcs caps and its deadline / cancel flag (checked every 64 Ki arcs)
 * to the builder; o must outlive it. NULL: none. */
void gp_builder_guard(gp_builder *b, const struct gp_load_opts *o);
/* Builds the immutable graph (refs = 1) and frees the builder in every case. An empty graph (no
 * node) is an error. source/format are recorded in the graph. */
gp_graph *gp_builder_finish(gp_builder *b, const char *source, const char *format, int directed,
                            gp_err *err);

/* A new version of g with other arc weights: w (m, forward CSR order) and rw (m, reverse CSR
 * order, the same weights) are taken over (freed on error too); nodes, arcs, ids, coordinates,
 * names, road attributes, profile, unit and source are g's, shared rather than copied (see
 * gp_graph.base), so a cost change on a large road graph costs two weight arrays. Its version
 * (hash) is derived from the base's and the new weights rather than the whole content: the same
 * weights over the same base give the same version, the base's own weights the base's version.
 * Parallel arcs u -> v must stay sorted by weight (give them equal weights). refs = 1. */
gp_graph *gp_graph_reweight(const gp_graph *g, uint32_t *w, uint32_t *rw, gp_err *err);
/* gp_graph_reweight with the version given rather than hashed from the weights: for a graph whose
 * weights are a function of another graph's version (a turn graph's of its road graph's,
 * graph/turns.h), so that a cost change reads no weight array to name the version. max_w >= 0:
 * the version's max_w, a bound the caller knows (its base's largest weight and the largest it
 * changed: the consumers, overflow guards, need no more), so that no pass reads every weight;
 * -1: read from w. */
gp_graph *gp_graph_reweight_versioned(const gp_graph *g, uint32_t *w, uint32_t *rw, uint64_t hash,
                                      int64_t max_w, gp_err *err);
/* An array of m weights for a new version (malloc'd memory): one that a released version gave back
 * when there is one of that size, so that a version a second (live traffic) does not fault in
 * fresh pages for every array (56 MB a version on a 1M-node OSM map with turns). Released
 * versions give their w and rw back (gp_graph_destroy); at most GP_WEIGHTS_KEPT arrays are kept,
 * the rest freed. NULL when out of memory. */
#define GP_WEIGHTS_KEPT 8
uint32_t *gp_weights_alloc(uint32_t m);
/* Gives w (m weights, malloc'd) back to the pool, or frees it when the pool is full. */
void gp_weights_release(uint32_t *w, uint32_t m);
/* g's w and rw copied into w and rw (g->m entries each), on all CPUs for a large graph: a new
 * version's weights before its changes. */
void gp_weights_copy(const gp_graph *g, uint32_t *w, uint32_t *rw);
/* A new version's w and rw, holding g's weights (its arrays to change): arrays that a released
 * version of g gave back restored to g's weights at the nodes of its diff_tails (gp_graph_destroy),
 * when there are such (g owns its arrays), else pooled or new ones filled by gp_weights_copy -
 * so that a version a second does not copy every weight (2 x 480 MB a version of road-like 24M's
 * turn graph). *copied (may be NULL): how many of the two were copied. 0, or -1 when out of
 * memory (*w and *rw NULL). */
int gp_weights_dup(const gp_graph *g, uint32_t **w, uint32_t **rw, int *copied);
/* The largest of w[0..n) (0 for none), on all CPUs from 2^20 entries. */
uint32_t gp_weights_max(const uint32_t *w, uint32_t n);
/* Sorts a[0..n) ascending (LSD radix: two 16-bit passes, or from 2^17 entries three 11-bit ones
 * on all CPUs); -1 when out of memory. */
int gp_sort_u32(uint32_t *a, uint32_t n);
/* Sorts a[0..n) ascending and drops repeats: how many are kept, or -1 when out of memory. */
int64_t gp_sort_unique_u32(uint32_t *a, uint32_t n);
/* The sorted distinct union of old[0..nold), tails[0..ntails) and the tails of the arcs into
 * heads[0..nheads) of g (its reverse arrays), malloc'd, its size in *nout; NULL when out of
 * memory. Lists gp_graph diff_tails. */
uint32_t *gp_graph_tails_union(const gp_graph *g, const uint32_t *heads, uint32_t nheads,
                               const uint32_t *tails, uint32_t ntails, const uint32_t *old,
                               uint32_t nold, uint32_t *nout);
/* The graph that owns g's shared arrays: g->base, else g itself. */
static inline const gp_graph *gp_graph_owner(const gp_graph *g) { return g->base ? g->base : g; }

gp_graph *gp_graph_ref(gp_graph *g);
void gp_graph_unref(gp_graph *g); /* frees on the last reference; accepts NULL */

/* External id -> internal index, GP_NONE when absent. */
uint32_t gp_graph_index(const gp_graph *g, int64_t ext_id);
/* Bytes held by the graph on the host (arrays, id map, names, spatial index). */
uint64_t gp_graph_memory(const gp_graph *g);
/* Stored path length -> input units. */
static inline double gp_graph_cost(const gp_graph *g, uint64_t d) { return (double)d / g->scale; }

/* A node's name, or NULL. */
static inline const char *gp_graph_name(const gp_graph *g, uint32_t v) {
    return g->names ? g->names[v] : NULL;
}

/* Road classes for arc_class (OSM highway=* values, coarsened). */
enum gp_road_class {
    GP_ROAD_UNKNOWN = 0,
    GP_ROAD_MOTORWAY,
    GP_ROAD_TRUNK,
    GP_ROAD_PRIMARY,
    GP_ROAD_SECONDARY,
    GP_ROAD_TERTIARY,
    GP_ROAD_UNCLASSIFIED,
    GP_ROAD_RESIDENTIAL,
    GP_ROAD_SERVICE,
    GP_ROAD_LIVING_STREET,
    GP_ROAD_TRACK,
    GP_ROAD_PATH,
    GP_ROAD_CYCLEWAY,
    GP_ROAD_FOOTWAY,
    GP_ROAD_FERRY,
    GP_ROAD_CLASS_COUNT
};
const char *gp_road_class_name(int c); /* "motorway", ...; "unknown" out of range */

/* Place kinds of gp_graph.places, largest first (OSM place=*). */
enum gp_place_kind {
    GP_PLACE_CITY = 1,
    GP_PLACE_TOWN,
    GP_PLACE_VILLAGE,
    GP_PLACE_SUBURB,
    GP_PLACE_QUARTER,
    GP_PLACE_NEIGHBOURHOOD,
    GP_PLACE_HAMLET,
    GP_PLACE_KIND_COUNT
};
/* OSM's name of a place kind ("city", ...), NULL out of range; gp_place_kind_of is the inverse
 * (0 for a value not kept). */
const char *gp_place_kind_name(int k);
int gp_place_kind_of(const char *osm_value);
/* One place record: lon, lat (8 bytes each), population (4, 0 unknown), kind (1), the name
 * NUL-terminated; unaligned, host byte order. */
typedef struct gp_place_rec {
    double lon, lat;
    uint32_t population;
    int kind;
    const char *name; /* into g->places */
} gp_place_rec;
/* Appends a record to *buf (len / cap bytes, grown with realloc). GP_OK or GP_ENOMEM. */
int gp_place_append(uint8_t **buf, uint64_t *len, uint64_t *cap, const gp_place_rec *p);
/* Reads the record at *off of g->places into p and moves *off past it: 1, or 0 at the end or at
 * a record that does not fit (a damaged section reads as shorter). */
int gp_graph_place_next(const gp_graph *g, uint64_t *off, gp_place_rec *p);

static inline const uint8_t *gp_graph_arc_limits(const gp_graph *g, uint32_t a) {
    return g->arc_limits ? g->arc_limits + (size_t)a * GP_LIMITS : NULL;
}
/* Per-arc flags (arc_flags), from OSM way tags. */
enum {
    GP_ARC_ROUNDABOUT = 1u,  /* junction=roundabout */
    GP_ARC_CIRCULAR = 2u,    /* junction=circular */
    GP_ARC_LINK = 4u,        /* highway=*_link (a ramp) */
    GP_ARC_TOLL = 8u,        /* toll=yes */
    GP_ARC_TUNNEL = 16u,     /* tunnel=* (not no) */
    GP_ARC_RESTRICTED = 32u, /* access / motor_vehicle / vehicle = destination, delivery, ... */
    GP_ARC_HGV_NO = 64u,     /* hgv=no (closed to vehicles over 3.5 t, engine/metric.h) */
    GP_ARC_HGV_DEST = 128u,  /* hgv=destination (or delivery / private) */
};
/* Fields of an arc's guidance record (arc_guide), in this order, separated by GP_GUIDE_SEP. */
enum gp_guide_field {
    GP_GUIDE_DESTINATION = 0, /* destination[:forward|:backward] */
    GP_GUIDE_DEST_REF,        /* destination:ref[:forward|:backward] */
    GP_GUIDE_LANES,           /* turn:lanes[:forward|:backward] */
    GP_GUIDE_PRONUNCIATION,   /* name:pronunciation */
    GP_GUIDE_EXITS,           /* junction:ref */
    GP_GUIDE_FIELDS
};
#define GP_GUIDE_SEP '\x1f'
/* Field f of arc a's guidance record: a pointer into strtab (not NUL-terminated: *len bytes), or
 * NULL (and *len 0) when the arc has none. */
const char *gp_graph_arc_guide(const gp_graph *g, uint32_t a, int f, size_t *len);
static inline unsigned gp_graph_arc_flags(const gp_graph *g, uint32_t a) {
    return g->arc_flags ? g->arc_flags[a] : 0u;
}

/* Road-attribute accessors (graph/roadattr.c). Arc indices are forward CSR indices. */
static inline const char *gp_graph_str(const gp_graph *g, uint32_t off) {
    return g->strtab && off && off < g->strtab_len ? g->strtab + off : NULL;
}
static inline const char *gp_graph_arc_name(const gp_graph *g, uint32_t a) {
    return g->arc_name ? gp_graph_str(g, g->arc_name[a]) : NULL;
}
static inline const char *gp_graph_arc_ref(const gp_graph *g, uint32_t a) {
    return g->arc_ref ? gp_graph_str(g, g->arc_ref[a]) : NULL;
}
/* Tail of arc a (binary search over row). */
uint32_t gp_graph_arc_tail(const gp_graph *g, uint32_t a);
/* The cheapest arc u -> v (lowest weight, then lowest index), GP_NONE when there is none. */
uint32_t gp_graph_find_arc(const gp_graph *g, uint32_t u, uint32_t v);
/* The arc that is arc a driven the other way: head -> tail along the same geometry (the same
 * shape points reversed), the cheapest such; GP_NONE when the road is one-way there. Two
 * different roads between the same two nodes (common in OSM graphs: a one-way street and a
 * detour) are not each other's reverse; without shapes every head -> tail arc is. */
uint32_t gp_graph_reverse_arc(const gp_graph *g, uint32_t a);
/* Interior shape points of arc a: sets *lon / *lat (may be NULL pointers when the count is 0).
 * Inline: the segment index and the legs read it per piece. */
static inline uint32_t gp_graph_arc_shape(const gp_graph *g, uint32_t a, const double **lon,
                                          const double **lat) {
    if (!g->arc_shape || !g->shape_lon) {
        *lon = *lat = NULL;
        return 0;
    }
    uint32_t b = g->arc_shape[a], e = g->arc_shape[a + 1];
    *lon = g->shape_lon + b;
    *lat = g->shape_lat + b;
    return e - b;
}
/* Length of arc a in metres: arc_len_m when present, else the great-circle length through its
 * shape points when the graph has coordinates, else NAN. */
double gp_graph_arc_length_m(const gp_graph *g, uint32_t a);
/* Travel time of arc a in seconds when the weights are times (unit_s > 0), else NAN. */
double gp_graph_arc_duration_s(const gp_graph *g, uint32_t a);
/* Original node id of node v: osm_id[v] when present, else ext[v]. */
static inline int64_t gp_graph_orig_id(const gp_graph *g, uint32_t v) {
    return g->osm_id ? g->osm_id[v] : g->ext[v];
}
/* Sets unit_name / unit_s (unit_s 0 for units that are not times). */
void gp_graph_set_unit(gp_graph *g, const char *unit_name, double unit_s);

/* Options for loading. scale <= 0 means the format's default. */
typedef struct gp_load_opts {
    double scale;
    int undirected;        /* force undirected (CSV: pgRouting directed=false, each cost and
                                reverse_cost >= 0 gives arcs both ways) */
    int progress;          /* print progress lines for large inputs */
    const char *cost_rule; /* topology loaders: "hops" (default) or "bandwidth" */
    double ref_bandwidth;  /* bits/s for the bandwidth rule (default 100e9) */
    const char *profile;   /* OSM: "car" (default), "bicycle" or "foot"; a spec's
                                ?profile=NAME wins */
    /* Guards for untrusted specs (the server fills them from its config; 0 / NULL = none). Every
     * refusal names the limit. */
    uint64_t max_bytes;         /* input bytes read, after decompression: GP_ETOOBIG past it */
    uint64_t max_nodes;         /* nodes in the graph: GP_ETOOBIG past it */
    uint64_t max_arcs;          /* arcs in the graph: GP_ETOOBIG past it */
    double deadline;            /* gp_now() time past which the load stops with GP_ETIMEOUT */
    double timeout_s;           /* the limit behind deadline, for the message */
    const int *cancel;          /* read atomically: non-zero stops the load with GP_ETIMEOUT */
    int regular_only;           /* refuse anything but regular files (FIFOs, devices) */
    const char *allow_dirs;     /* ':'-separated directories every file read must resolve into
                                (realpath: no escape through '..' or symlinks): GP_EFORBIDDEN;
                                NULL: any, "": none */
    const char *allow_pg_hosts; /* ','-separated hosts (or host:port) a PostgreSQL spec may name:
                                   GP_EFORBIDDEN otherwise; NULL: any, "": none */
    int restrictions_as_turns;  /* OSM: 1 = turn restrictions kept as a list (gp_graph.restr)
                                   for the turn model (turn costs on), no node copies; 0 = node
                                   copies (the node-based model of turn_costs=off) */
} gp_load_opts;

/* Checks a file about to be read against o's guards (allow_dirs, regular_only, max_bytes against
 * its size). GP_OK, or GP_EFORBIDDEN / GP_EINVAL / GP_ETOOBIG / GP_EIO with err filled. A path
 * outside allow_dirs is refused whether or not it exists (no probing). o may be NULL. */
int gp_load_check_file(const char *path, const gp_load_opts *o, gp_err *err);
/* GP_OK while the load may go on; GP_ETIMEOUT (err names load_timeout_s, or says the load was
 * cancelled) once o's deadline has passed or its cancel flag is set. o may be NULL. */
int gp_load_check_time(const gp_load_opts *o, gp_err *err);
/* Copies spec for people into out: a password in a URI's user:PASSWORD@ part, a password=VALUE
 * query parameter, or a password=VALUE / password = 'VALUE' conninfo pair becomes "***". The one
 * redaction used wherever a spec is shown or logged. */
void gp_spec_redact(const char *spec, char *out, size_t cap);
/* Picks a fixed-point scale that fits every cost of an input in one pass: feed each cost with
 * gp_scale_fit_add, then gp_scale_fit_pick gives 1 when all are integers (and fit), else 1000 when
 * every cost keeps 1/1000 precision at 1000 and fits, else the smallest power of ten (1 .. 1e9) that
 * does; GP_EPARSE naming the smallest and largest cost when none does. */
typedef struct gp_scale_fit {
    int integral;
    uint32_t ok; /* bit k: every cost so far fits scale 10^k (k = 0..9) */
    double min_pos, max;
    uint64_t n;
} gp_scale_fit;
void gp_scale_fit_init(gp_scale_fit *f);
void gp_scale_fit_add(gp_scale_fit *f, double cost); /* negative costs (no arc) are ignored */
int gp_scale_fit_pick(const gp_scale_fit *f, double *scale, gp_err *err);

/* A graph source that lives above graph/ (storage/source.c: PostgreSQL), handed to
 * gp_graph_load_from: the specs it claims, its loader, the options it takes (others are refused,
 * as for the file formats) and how the "cannot tell the graph format" message names it. */
typedef struct gp_spec_source {
    const char *format; /* in messages: "postgresql" */
    const char *hint;   /* the prefix the message lists: "postgresql://" */
    int (*claims)(const char *spec);
    gp_graph *(*load)(const char *spec, const struct gp_load_opts *o, gp_err *err);
    int scale_ok, rule_ok; /* it takes a fixed-point scale / a cost rule */
} gp_spec_source;

/* Loads a graph from a spec: "dimacs:PATH", "csv:PATH", "gen:N[:SEED]", "grid:N[:SEED]",
 * "graphml:PATH", "sndlib:PATH", "rocketfuel:PATH", "osm:PATH", "gpath:PATH", a spec one of
 * more[0..nmore) claims, or a bare PATH whose extension chooses the format (.gr, .gr.gz, .csv,
 * .graphml, .txt (SNDlib), .intra, .osm, .osm.pbf, .gpath). opts may be NULL. Never returns a
 * partial graph: NULL and err filled on any error. The loader every source goes through:
 * storage/source.h's gp_graph_load is this with every source gpath knows. */
gp_graph *gp_graph_load_from(const char *spec, const gp_load_opts *opts, const gp_spec_source *more,
                             size_t nmore, gp_err *err);
/* The file a spec reads ("dimacs:/x.gr" -> "/x.gr", a bare path as is), or NULL for gen:, grid:
 * and specs one of more[0..nmore) claims. Points into spec. */
const char *gp_graph_spec_file(const char *spec, const gp_spec_source *more, size_t nmore);

/* Format-specific loaders (graph/load_*.c), used by gp_graph_load_from.
 * DIMACS: "p sp N M" / "a U V W", integer weights, scale 1, nodes 1..N; coordinates from a sibling
 *   .co / .co.gz ("v ID X Y", lon/lat times 1e6) when present. gzip read transparently.
 * CSV (pgRouting): header required; columns by name source,target,cost[,reverse_cost][,id]
 *   [,x1,y1,x2,y2], others ignored; cost / reverse_cost < 0 = no arc. Scale: opts->scale when > 0,
 *   else 1 when every non-negative cost in the file is an integer, else
 *   GP_SCALE_DEFAULT_FRACTIONAL.
 * Errors name "FILE:LINE: what is wrong". */
gp_graph *gp_load_dimacs(const char *path, const gp_load_opts *o, gp_err *err);
gp_graph *gp_load_csv(const char *path, const gp_load_opts *o, gp_err *err);
/* Router topologies (graph/load_graphml.c, load_sndlib.c, load_rocketfuel.c; cost rules in
 * graph/topo.h): Topology Zoo GraphML, SNDlib native, Rocketfuel weights.intra. */
gp_graph *gp_load_graphml(const char *path, const gp_load_opts *o, gp_err *err);
gp_graph *gp_load_sndlib(const char *path, const gp_load_opts *o, gp_err *err);
gp_graph *gp_load_rocketfuel(const char *path, const gp_load_opts *o, gp_err *err);
/* OpenStreetMap (graph/osm.c): .osm.pbf / .osm through libosmium; path may end in
 *   "?profile=car|bicycle|foot|truck". Travel times in deciseconds, road attributes, degree-2 chains
 *   collapsed into shaped arcs, turn restrictions by local turn expansion (docs/graphs.md, OpenStreetMap). */
gp_graph *gp_load_osm(const char *path, const gp_load_opts *o, gp_err *err);
/* Road-like generator (graph/road.c, spec gen:N[:SEED]): towns and cities of power-law sizes as
 * street grids, rural roads on a thinned Gabriel graph of the settlements, motorways between the
 * largest cities, barriers crossed in few places; lon/lat coordinates, travel times in
 * deciseconds by road class (arc_class set); exactly n nodes, strongly connected, deterministic
 * for (n, seed); 100 <= n <= 100M. */
gp_graph *gp_generate_road(uint64_t n, uint64_t seed, gp_err *err);
/* The previous generator (graph/gen.c, spec grid:N[:SEED]): a jittered grid of n nodes with
 * arterials every 8th and 16th line, some streets missing or one-way; deterministic for (n, seed). */
gp_graph *gp_generate_grid(uint64_t n, uint64_t seed, gp_err *err);
/* The speed (km/h) the road-like generator gives a road class: motorway 110, primary 80,
 * secondary 70, tertiary (city arterials) 50, residential 30; 0 for the classes it does not use.
 * Its graphs carry arc_class. */
double gp_gen_class_kmh(int cls);
/* Writes gen:n:seed as OSM XML: nodes 1..n with lat/lon, one way per road with highway=*,
 * maxspeed (km/h, the speed its travel times use), oneway=yes where one-way and oneway=no on
 * two-way motorways (which OSM otherwise takes as one-way). */
int gp_write_road_osm(uint64_t n, uint64_t seed, const char *path, gp_err *err);
/* Writes a graph as DIMACS .gr (+ .co when it has coordinates; co_path may be NULL). */
int gp_write_dimacs(const gp_graph *g, const char *gr_path, const char *co_path, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
