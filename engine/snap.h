/* snap.h - coordinates to positions on the road network, and queries that start or end there.
 *
 * A coordinate snaps to the nearest point of the nearest routable segment (great-circle distance),
 * not to the nearest node: on a graph with coordinates every arc is a segment (a polyline through
 * its shape points when the graph has them, graph.h), and the snapped position lies on the arc
 * tail -> head at fraction `frac` of its length, and on the opposite arc when the road is two-way.
 * Queries from / to snapped positions add the partial travel cost of the snapped segment: an origin
 * enters the network at the head of its arc (cost (1 - frac) * w) or, on a two-way road, at the
 * tail through the opposite arc (cost frac * w'); a destination is reached symmetrically. Two
 * positions on the same arc in the driving direction are joined along it directly.
 * Routing goes through the engine's p2p / table / sssp calls, so every backend and speed-up
 * technique serves snapped queries too. On a graph with turn costs (g->turns, graph/turns.h) the
 * same calls run on its turn graph, whose nodes are road arcs: engine/snap.c maps positions and
 * nodes to them and back (the route's arcs, node distances as the best arc into each node; with
 * turn costs sssp's pred[v] is the tail of that arc, dist[v] may exceed dist[pred] + w by the
 * turn cost, and the pred chain is a path to v but not always its turn-aware route).
 *
 * Implemented in engine/snap.c, over the graph's segment index (graph/segidx.h: built at attach
 * through gp_segidx_prepare, or else on the first snap of a graph). Thread-safe.
 */
#ifndef GP_SNAP_H
#define GP_SNAP_H

#include "engine/engine.h"
#include "graph/segidx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_snap {
    double qlon, qlat; /* the coordinate asked for */
    double lon, lat;   /* the snapped position */
    double dist_m;     /* great-circle distance between the two, metres */
    uint32_t node;     /* the end node of the snapped segment nearest the position */
    uint32_t arc;      /* arc the position lies on (tail -> head), GP_NONE when snapped to a node */
    uint32_t rarc;     /* the opposite arc (head -> tail) on a two-way road, else GP_NONE */
    double frac;       /* position along `arc` from its tail, 0..1, by length */
} gp_snap;

/* Snaps (lon, lat) within radius_m metres. GP_EINVAL for an invalid coordinate or a graph without
 * coordinates; GP_ENOTFOUND when no segment lies within radius_m (the message names the distance
 * to the nearest one, which also reveals swapped latitude / longitude). */
int gp_snap_point(const gp_graph *g, double lon, double lat, double radius_m, gp_snap *out,
                  gp_err *err);

/* gp_snap_point among the pieces filter f accepts (graph/segidx.h's gp_segidx_nearest_if): the
 * nearest qualifying road within radius_m; GP_ENOTFOUND when none qualifies there. */
int gp_snap_point_if(const gp_graph *g, double lon, double lat, double radius_m, gp_seg_filter f,
                     void *ctx, gp_snap *out, gp_err *err);
/* The checks gp_snap_point_if makes before it searches: GP_OK with *x g's segment index
 * (graph/segidx.h), else its code and err (GP_EINVAL for an invalid coordinate or a graph without
 * coordinates, GP_ENOTFOUND for a graph without road segments, GP_ENOMEM). */
int gp_snap_index(const gp_graph *g, double lon, double lat, const gp_segidx **x, gp_err *err);
/* The snapped position of a segment index hit for the coordinate (lon, lat) asked for (what
 * gp_snap_point_if answers from the index's nearest qualifying piece). */
void gp_snap_from_hit(const gp_graph *g, double lon, double lat, const gp_seg_hit *h, gp_snap *out);

/* The position of node v itself (arc GP_NONE, dist_m 0): how a query by node id takes part in the
 * calls below. (Not in the integrator's first draft of this header; added by engine/snap.c.) */
void gp_snap_at_node(const gp_graph *g, uint32_t v, gp_snap *out);

/* Where a query leaving / reaching a snapped position enters / leaves the network: up to two
 * nodes with the stored-unit cost between the position and the node. Returns the count. */
uint32_t gp_snap_origins(const gp_graph *g, const gp_snap *s, uint32_t node[2], uint64_t cost[2]);
uint32_t gp_snap_dests(const gp_graph *g, const gp_snap *s, uint32_t node[2], uint64_t cost[2]);

/* A route between two snapped positions. */
typedef struct gp_snap_route {
    uint64_t dist; /* stored units, partial segments included; GP_INF: no route */
    gp_path path;  /* nodes from the entry node to the exit node; len 0 when the positions lie
                        on one arc and the direct way along it is the answer */
    uint32_t first_arc, last_arc; /* the arcs the route starts / ends on (partially), or GP_NONE */
    uint32_t *arcs; /* path.len - 1 road arcs: arcs[i] runs path.nodes[i] -> path.nodes[i + 1];
                       set on a graph with turn costs (the turn graph chooses among parallel
                       arcs), else NULL (then the cheapest arc between the nodes) */
} gp_snap_route;
void gp_snap_route_free(gp_snap_route *r);

/* The turn cost (stored units) of turning from road arc a into road arc b on a graph with turn
 * costs; 0 without turn costs, for GP_NONE arcs or a turn the turn graph does not have. Renderers
 * charge it to the piece of b, so that a route's pieces add up to its total. */
uint64_t gp_snap_turn_cost(const gp_graph *g, uint32_t a, uint32_t b);

int gp_engine_route_snap(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                         int algo, gp_snap_route *out, gp_err *err);
/* Routes through k >= 2 positions: leg i from s[i] to s[i + 1] into legs[0 .. k - 2], each as
 * gp_engine_route_snap's (dist GP_INF: no route for that leg; free each leg). straight (OSRM's
 * continue_straight=true) on a graph with turn costs: at every via position the route goes on
 * in the direction it arrived, no U-turn there: on an arc it leaves along the arc it came on,
 * at a node by a turn of the turn graph from the arc it came in on (its cost in the next leg).
 * The legs are chosen together (the cheapest sum over the via positions' directions). With
 * straight 0, without turn costs, or when no such route exists, each leg is routed alone. */
int gp_engine_route_via(gp_engine *e, const gp_graph *g, const gp_snap *s, uint32_t k, int straight,
                        int algo, gp_snap_route *legs, gp_err *err);
/* out[i * nt + j]: stored-unit cost from src[i] to dst[j], GP_INF when unreachable. */
int gp_engine_table_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint32_t ns,
                         const gp_snap *dst, uint32_t nt, uint64_t *out, gp_err *err);
/* A table plan: the targets of a table resolved once (their distinct ends, with turn costs their
 * candidate EBG nodes), for any number of blocks of sources (a streamed .npy answer, a matrix
 * job): gp_engine_table_plan_rows fills ns rows against the plan's targets, the same cells as
 * gp_engine_table_snap (which is one plan, one block), either as stored units into out or, with
 * out NULL, as float32 in the graph's unit (gp_graph_cost; NaN where there is no route) into
 * outf. With turn costs and a GPU CCH (gp_engine_table_cells) the candidates are combined into
 * cells on the device, the few cells that need a search or the way along one arc finished on the
 * CPU's threads; otherwise the combine runs on the CPU's threads. dst is the caller's and
 * must outlive the plan; g and e too. Blocks of one plan may run at once on several
 * threads (the plan is read-only once made). */
typedef struct gp_table_plan gp_table_plan;
gp_table_plan *gp_engine_table_plan_new(gp_engine *e, const gp_graph *g, const gp_snap *dst,
                                        uint32_t nt, gp_err *err);
int gp_engine_table_plan_rows(gp_table_plan *p, const gp_snap *src, uint32_t ns, uint64_t *out,
                              float *outf, gp_err *err);
void gp_engine_table_plan_free(gp_table_plan *p);
/* One-to-all from a snapped position: dist[v] for every node (pred as gp_engine_sssp). */
int gp_engine_sssp_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint64_t max_dist,
                        uint64_t *dist, uint32_t *pred, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
