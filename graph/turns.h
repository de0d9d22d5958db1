/* turns.h - turn costs: the turn-expanded (edge-based) graph of a road graph.
 *
 * A road graph g (OSM import, profile car / bicycle / foot) has no cost for turning. Its turn
 * graph tg is a plain gp_graph whose node a is road arc a of g (forward CSR index: "has driven
 * arc a, standing at its head") and whose arcs are the allowed turns a -> b (head(a) == tail(b)),
 * weighted turn_cost(a, b) + w(b). Any algorithm that routes g routes tg unchanged (Dijkstra
 * family, CCH on CPU and GPU, PHAST / RPHAST), so every query type gets turn costs; engine/snap.c
 * maps positions and nodes of g to nodes of tg and back.
 *
 * Turn costs follow OSRM v6's profiles (car.lua, bicycle.lua, foot.lua), declared in C here
 * (gp_turn_costs) and documented in docs/graphs.md:
 *  - the angle cost: the turn angle between the last segment of a and the first of b, in
 *    -180..180 degrees, positive to the right; car: turn_s / (1 + exp(-(13 / bias * angle / 180
 *    - 6.5 * bias))) for right turns, turn_s / (1 + exp(-(13 * bias * -angle / 180 - 6.5 / bias)))
 *    for left turns (right-hand traffic), charged only where more than two roads meet or on a
 *    U-turn; bicycle: (angle / 90)^2 * turn_s / bias (right) or * bias (left) on every turn;
 *    foot: none;
 *  - a U-turn (b is a driven the other way) exists only at a dead end (one road at the node) or
 *    where a has no other way on; it adds u_turn_s and has angle 180;
 *  - a traffic signal / stop / give-way sign at the node (g->node_flags) adds signal_s / stop_s /
 *    give_way_s (foot: a signal's cost replaces the rest, as foot.lua does).
 * Each turn cost is rounded once to the graph's stored units (deciseconds).
 *
 * Turn restrictions (g->restr, kept by the OSM loader when turn costs are on; graph/graph.h) are
 * part of the model, as in OSRM's edge-based graph: a via-node restriction removes turns (no_*:
 * the turn onto the to arc; only_*: every turn but onto the to arcs); a via-way restriction (one
 * or more via ways) duplicates the tg nodes along its via path for the drives that enter it from
 * the from arc, so that only the forbidden continuation is missing there. The duplicates are the
 * states of an Aho-Corasick automaton over the restrictions' arc sequences: a tg node past the
 * road arcs is "has driven road arc dup_arc[i], after a prefix of some restriction's from + via
 * path", and every restriction whose prefix is a suffix of that drive applies to its turns. A
 * road graph with node copies for restrictions (turn_costs off at load, older snapshots) keeps
 * them: a query reaching a node may end at its copies (gp_turns_copies).
 *
 * Turn costs belong to the metric: a reweighted version of g (gp_graph_reweight, a PATCH or
 * what-if) gets the reweighted version of tg, gp_turns_reweight, with the same topology (the CCH
 * topology cache reuses it) and weights turn + the new w(b). The turn cost of tg arc k is kept in
 * the base turn graph: base tg w[k] - base g w[head k].
 */
#ifndef GP_TURNS_H
#define GP_TURNS_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GP_TURN_ANGLE_NONE = 0, GP_TURN_ANGLE_SIGMOID = 1, GP_TURN_ANGLE_SQUARE = 2 };

/* A profile's turn-cost table (seconds). */
typedef struct gp_turn_costs {
    const char *profile; /* "car", "bicycle", "foot" */
    int angle_model;     /* GP_TURN_ANGLE_* */
    double turn_s;       /* turn_penalty: the most an angle costs */
    double bias;         /* turn_bias (> 0): right turns cheaper than left turns when > 1 */
    int every_turn;      /* angle cost on every turn (bicycle), else only where > 2 roads meet or
                            on a U-turn (car) */
    double u_turn_s, signal_s, stop_s, give_way_s;
    int signal_replaces; /* foot.lua: a signal's cost is the whole turn cost */
} gp_turn_costs;

/* The table of a profile, NULL when the profile has none (unknown name). */
const gp_turn_costs *gp_turn_costs_find(const char *profile);
/* GP_OK, or GP_EINVAL naming the first value that cannot be applied (negative, not finite, bias
 * not positive, unknown angle model). */
int gp_turn_costs_check(const gp_turn_costs *t, gp_err *err);
/* Cost in seconds of one turn: angle (degrees, -180..180, positive right), roads meeting at the
 * node, uturn (1: b is a driven back), node flags (GP_NODE_*) of the node. */
double gp_turn_cost_s(const gp_turn_costs *t, double angle, uint32_t roads, int uturn,
                      uint8_t node_flags);

/* A road graph's turn graph (hung off the road graph as g->turns, released with it). */
typedef struct gp_turns {
    gp_graph *tg; /* node a = road arc a; owns its arrays, or is a reweighted version */
    const struct gp_turns *base; /* the turns of g's base (reweighted g), else NULL */
    const gp_turn_costs *costs;
    uint64_t u_turns; /* U-turn arcs (at dead ends) */
    /* copies of nodes made for turn restrictions (g->osm_id): copy_node[i] stands for OSM node
     * copy_orig[i], sorted by (copy_orig, copy_node); shared with the reweighted versions */
    uint32_t ncopies;
    int64_t *copy_orig;
    uint32_t *copy_node;
    /* tg nodes narcs .. tg->n - 1 duplicate road arcs for via-way restrictions: tg node narcs + i
     * stands for road arc dup_arc[i]; dup_by_arc lists those tg nodes sorted by road arc (then
     * node). Shared with the reweighted versions. */
    uint32_t narcs; /* g->m */
    uint32_t ndups;
    uint32_t *dup_arc;
    uint32_t *dup_by_arc;
    /* 2 * tg->n: planar coordinates of each tg node (its road arc's midpoint, longitude scaled
     * by the cosine of the mean latitude), tg's cch_xy for the CCH order's inertial flow (engine/
     * cch_flow.c), made by gp_turns_add_xy (only the flow order reads them: 8 bytes a node);
     * NULL before, or without coordinates. Shared with the reweighted versions made after. */
    float *xy;
    uint64_t restr_turns; /* turns removed by restrictions (over every tg node) */
    uint32_t restr_bad;   /* g->restr records that do not chain (tail(a_i+1) != head(a_i)) */
    double build_s;
} gp_turns;

/* The road arc tg node x stands for. */
static inline uint32_t gp_turns_arc(const gp_turns *t, uint32_t x) {
    return x < t->narcs ? x : t->dup_arc[x - t->narcs];
}
/* The duplicates of road arc a (tg nodes other than a standing for it), as *nodes[0 .. count). */
uint32_t gp_turns_dups(const gp_turns *t, uint32_t a, const uint32_t **nodes);

/* Builds g's turn graph with the costs t (checked first). g needs coordinates (angles); its
 * weights must be times (unit_s > 0). NULL with err filled on error. */
gp_turns *gp_turns_build(const gp_graph *g, const gp_turn_costs *t, gp_err *err);
/* The turn graph of g, a reweighted version of the graph base->tg was built for (g->base): the
 * same topology, weights turn + g's new arc weights; over g's diff_arcs alone when g lists them
 * (graph/graph.h). NULL with err filled on error. */
gp_turns *gp_turns_reweight(const gp_turns *base, const gp_graph *g, gp_err *err);
/* The same when every road arc whose weight in g differs from the base's is among arcs[0..narcs)
 * (distinct; others may be listed too): only their turns are looked at (a speed file's arcs, not
 * every arc of the graph). arcs NULL: gp_turns_reweight. */
gp_turns *gp_turns_reweight_arcs(const gp_turns *base, const gp_graph *g, const uint32_t *arcs,
                                 uint32_t narcs, gp_err *err);
/* The copies of node v (not v itself) of the graph t was built for, as a range of copy_node
 * (*first set); their count. A query reaching node v may end at any of them. */
uint32_t gp_turns_copies(const gp_turns *t, const gp_graph *g, uint32_t v, uint32_t *first);
/* Makes T->xy from g (the road graph T was built for) when absent and sets it as T->tg->cch_xy,
 * for the flow order (engine/cch.h GP_CCH_ORDER_FLOW). GP_OK (also when g has no coordinates:
 * the order then goes without them), or GP_ENOMEM. */
int gp_turns_add_xy(gp_turns *T, const gp_graph *g, gp_err *err);
void gp_turns_free(void *turns); /* accepts NULL; matches gp_graph.turns_free */
/* Bytes of the turn graph on the host (its arrays; 0 for the shared ones of a reweighted one). */
uint64_t gp_turns_memory(const gp_turns *t);

#ifdef __cplusplus
}
#endif
#endif
