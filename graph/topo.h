/* topo.h - shared by the router-topology loaders (graph/load_graphml.c, graph/load_sndlib.c,
 * graph/load_rocketfuel.c): the link list they collect and the cost rules applied to it.
 *
 * Cost rules (gp_load_opts.cost_rule):
 *  - "hops" (default): every link costs 1.
 *  - "bandwidth": OSPF's reference-bandwidth rule, cost = min(65535, max(1, floor(ref / bw))) with
 *    ref = opts->ref_bandwidth (default 100e9 bit/s) and bw the link's speed in bit/s. A link whose
 *    speed is unknown gets the lower median of the costs of the links whose speed is known (so an
 *    undocumented link is neither free nor a barrier); when no link has a speed, every link costs 1.
 * Private to the loaders: not part of the public graph API.
 */
#ifndef GP_TOPO_H
#define GP_TOPO_H

#include "graph/graph.h"

typedef struct gp_topo_link {
    int64_t u, v; /* external node ids */
    double bw;    /* bit/s; <= 0 when unknown */
    double cost;  /* rule-specific raw cost (input units), filled by the loader or the rule */
    int both;     /* 1: undirected link (two arcs), 0: one arc u->v */
    long line;    /* source line, for messages */
} gp_topo_link;

enum { GP_RULE_HOPS = 0, GP_RULE_BANDWIDTH = 1, GP_RULE_NATIVE = 2 };

/* Parses opts->cost_rule: NULL/"" -> dflt; "hops", "bandwidth"; native_name (may be NULL) names the
 * format's own metric (e.g. "weights", "routing"). Unknown rule: GP_EINVAL naming the choices. */
int gp_topo_rule(const gp_load_opts *o, int dflt, const char *native_name, const char *format,
                 int *rule, gp_err *err);
/* Reference bandwidth for the bandwidth rule: opts->ref_bandwidth when > 0, else 100e9. */
double gp_topo_ref_bw(const gp_load_opts *o);
/* Fills links[i].cost under rule hops or bandwidth (see above). */
void gp_topo_costs(gp_topo_link *links, size_t n, int rule, double ref);
/* Adds every link as one or two arcs (costs converted with the builder's scale). Errors name the
 * file and line. */
int gp_topo_add_links(gp_builder *b, const gp_topo_link *links, size_t n, const char *path,
                      gp_err *err);

/* After gp_builder_finish: g->arc_cap from links[i].bw (each link's arcs u -> v, and v -> u when
 * both, matched by weight among parallel arcs); left NULL when no link has a speed. */
int gp_topo_set_caps(gp_graph *g, const gp_topo_link *links, size_t n, gp_err *err);

#endif
