/* planning.h - network planning over routing tables (engine/ecmp.h): link loads of a demand
 * matrix under OSPF / IS-IS ECMP splitting, and exhaustive failure analysis (every link, router,
 * shared-risk group or pair of links failed in turn, the loads recomputed for each).
 *
 * Links: the directed links of a gp_rt are its distinct neighbour entries, link l = u -> nb[l]
 * for nb_off[u] <= l < nb_off[u + 1] (the cheapest parallel arc's weight nbw[l]). Loads,
 * capacities and failure masks are arrays over those L = nb_off[n] links.
 *
 * Loads (per destination t, as routers forward): the next hops of u towards t are the ECMP set of
 * the routing tables (capped at the tables' ecmp_max, lowest ids first); the traffic that u
 * originates or receives for t is split equally over them. It is accumulated in a topological
 * order of the shortest-path DAG towards t (Kahn's order: a router forwards once every router
 * sending it traffic for t has). A demand whose source cannot reach its destination, or whose
 * source or destination has failed, is unrouted. Demands from a router to itself carry no load.
 *
 * Failure analysis: per scenario the destinations whose shortest-path DAG uses a failed link
 * (or a failed router, or is a failed router) are the only ones whose routing changes. The
 * incremental strategy recomputes only their distance columns (one reverse Dijkstra on the failed
 * network each) and their load contributions (the base loads minus their old contribution plus
 * the new); the full strategy recomputes every destination's column (a reverse Dijkstra each, on
 * the CPU) and loads. Both give the same answer; auto picks full when 9 in 10 destinations
 * are affected on average (a sample of 8 scenarios), else incremental. The gpu strategy runs the
 * incremental one on the device (engine/planning_cuda.c, kernels/planload.cu): the touched
 * (scenario, destination) pairs of a batch of scenarios (as many as their load vectors fit a
 * 1 GiB budget) each take one thread block that recomputes the distance column on the failed
 * network (only the routers whose every shortest path crosses the failure, by Bellman-Ford rounds
 * among them), moves the destination's traffic from its base flows (computed once per
 * destination) to the new DAG on the links whose share changes, and counts changed and
 * disconnected pairs; the worst link and top list of each scenario are found on the device too;
 * auto picks gpu when the engine's primary backend is CUDA.
 * Scenarios run in parallel on CPU threads (each scenario on one thread: results do not depend on
 * the thread count).
 */
#ifndef GP_PLANNING_H
#define GP_PLANNING_H

#include "engine/ecmp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A demand matrix grouped by destination: the demands towards t are src/vol[off[t]..off[t+1]). */
typedef struct gp_demands {
    uint32_t n;
    uint32_t *off; /* n + 1 */
    uint32_t *src;
    double *vol;
    size_t count;
    double total; /* sum of volumes */
} gp_demands;

/* Groups count rows (internal indices < n, volumes >= 0; rows of the same pair add up). */
int gp_demands_build(uint32_t n, const uint32_t *src, const uint32_t *dst, const double *vol,
                     size_t count, gp_demands **out, gp_err *err);
void gp_demands_free(gp_demands *d); /* accepts NULL */

/* Number of directed links of t (nb_off[n]). */
static inline uint32_t gp_plan_links(const gp_rt *t) { return t->nb_off[t->n]; }
/* Tail of link l (binary search over nb_off). */
uint32_t gp_plan_link_tail(const gp_rt *t, uint32_t l);
/* Link l = u -> v, or GP_NONE. */
uint32_t gp_plan_link_find(const gp_rt *t, uint32_t u, uint32_t v);

/* Capacity of every link from the graph's per-arc capacities (gp_graph arc_cap, bit/s): the sum
 * over the arcs u -> v of the cheapest weight (the parallel arcs that carry traffic); 0 (unknown)
 * when the graph has none or one of those arcs has none. cap: L entries. */
void gp_plan_link_caps(const gp_rt *t, double *cap);

/* A set of failures: links by link index (both directions are failed by the caller listing both,
 * see gp_plan_fail_link) and routers by internal index. */
typedef struct gp_fail {
    const uint32_t *links; /* directed link indices */
    uint32_t nlinks;
    const uint32_t *routers;
    uint32_t nrouters;
} gp_fail;

/* Loads of every link (load[L], zeroed first) under the demands, no failures. unrouted (may be
 * NULL): a flag per grouped demand (d->src order) set to 1 when that demand is unrouted;
 * *unrouted_vol (may be NULL) their total volume. threads 0 = online CPUs. */
int gp_plan_load(const gp_rt *t, const gp_demands *d, int threads, double *load, uint8_t *unrouted,
                 double *unrouted_vol, gp_err *err);

/* gp_plan_load on the GPU (engine/planning_cuda.c, kernels/planload.cu): the same loads (to the
 * last bits of double addition) and unrouted volume, without per-demand flags; *gpu_ms (may be
 * NULL) the device time of the kernels. GP_EUNSUPPORTED without CUDA or a device. */
int gp_plan_load_cuda(const gp_rt *t, const gp_demands *d, double *load, double *unrouted_vol,
                      double *gpu_ms, gp_err *err);

enum gp_plan_strategy { GP_PLAN_AUTO = 0, GP_PLAN_INCREMENTAL, GP_PLAN_FULL, GP_PLAN_GPU };
const char *gp_plan_strategy_name(int s); /* "auto", "incremental", "full", "gpu" */
/* The strategy named s, or -1. */
int gp_plan_strategy_parse(const char *s);

/* A (router, destination) pair whose ECMP next-hop set a scenario changes. */
typedef struct gp_plan_pair {
    uint32_t router, dst;  /* internal indices */
    uint32_t disconnected; /* 1: the router no longer reaches the destination */
} gp_plan_pair;

/* One scenario's outcome. */
typedef struct gp_scenario_result {
    uint64_t changed_pairs;      /* (router, destination), router != destination, whose next-hop
                                    set (as node sets) changed, disconnected ones included */
    uint64_t disconnected_pairs; /* reachable before, not after (failed routers' pairs included) */
    double unrouted_volume;      /* demand volume that cannot be routed */
    double worst_utilization;    /* max load / capacity over links of known capacity; -1: none */
    uint32_t worst_link;         /* that link (or the most loaded one when no capacity is known);
                                    GP_NONE when nothing carries load */
    double worst_load;           /* load on worst_link */
    uint32_t affected;           /* destinations whose routing changed */
    uint32_t top[8];             /* the most loaded links, GP_NONE past the end */
    double top_load[8];
    /* with list_max (gp_plan_failures_opts): the first min(changed_pairs, list_max) changed
     * pairs by destination, then router (malloc'd, NULL when none; gp_plan_results_free) */
    gp_plan_pair *pairs;
    uint32_t npairs;
    int pairs_truncated; /* changed_pairs > list_max */
} gp_scenario_result;

/* Frees the pair lists of n results (the array itself stays the caller's). */
void gp_plan_results_free(gp_scenario_result *res, size_t n); /* accepts NULL */

typedef struct gp_plan_stats {
    int strategy; /* what ran: GP_PLAN_INCREMENTAL, GP_PLAN_FULL or GP_PLAN_GPU */
    double seconds;
    double base_s;          /* base loads */
    uint64_t columns;       /* destination columns recomputed */
    uint64_t accumulations; /* per-destination load passes */
    uint64_t affected_sum;  /* sum of affected destinations over scenarios */
    double gpu_s;           /* gpu: device time of the scenario kernels */
    uint32_t batches;       /* gpu: scenario batches */
} gp_plan_stats;

/* Runs nscen scenarios: scenario s fails links sc[s] / routers. cap: L capacities (0 unknown),
 * may be NULL. res: nscen entries. The base loads (no failure) go to base_load when not NULL (L
 * entries). e: the engine (may be NULL; auto runs on the GPU when its primary backend is CUDA).
 * GP_PLAN_GPU without CUDA or a device: GP_EUNSUPPORTED. Progress: the calling
 * thread's gp_progress, one unit per scenario (and one for the base loads); gp_progress_cancel on
 * it stops the scenarios (between scenarios on the CPU, between batches on the GPU) with
 * GP_ECANCELLED, res then partly filled (free it as usual). */
int gp_plan_failures(gp_engine *e, const gp_rt *t, const gp_demands *d, const double *cap,
                     const gp_fail *sc, size_t nscen, int strategy, int threads,
                     gp_scenario_result *res, double *base_load, gp_plan_stats *st, gp_err *err);

/* gp_plan_failures with options: list_max > 0 lists each scenario's changed pairs (at most
 * list_max, the same from every strategy). o may be NULL (no lists). */
typedef struct gp_plan_opts {
    uint32_t list_max;
} gp_plan_opts;
int gp_plan_failures_opts(gp_engine *e, const gp_rt *t, const gp_demands *d, const double *cap,
                          const gp_fail *sc, size_t nscen, int strategy, int threads,
                          const gp_plan_opts *o, gp_scenario_result *res, double *base_load,
                          gp_plan_stats *st, gp_err *err);

/* Lists scenario f's changed pairs into r (pairs, npairs, pairs_truncated; r's counts are left
 * alone) on the CPU: the gpu strategy's path for scenarios past list_max. -1 out of memory. */
int gp_plan_list_pairs(const gp_rt *t, const gp_fail *f, uint32_t list_max, gp_scenario_result *r);

/* Appends both directions of the link between routers u and v (internal) to links[*k]; returns
 * the number appended (0 when they are not joined). */
uint32_t gp_plan_fail_link(const gp_rt *t, uint32_t u, uint32_t v, uint32_t *links, uint32_t *k);

/* The scenarios on the GPU after the base loads (base, base_lost): gp_plan_failures' gpu
 * strategy (engine/planning_cuda.c; list_max as gp_plan_opts'; threads: the CPU threads that
 * list again the scenarios with more than list_max changed pairs). GP_EUNSUPPORTED without CUDA
 * or a device. */
int gp_plan_failures_cuda(const gp_rt *t, const gp_demands *d, const double *cap, const gp_fail *sc,
                          size_t nscen, const double *base, double base_lost, int threads,
                          uint32_t list_max, gp_scenario_result *res, gp_plan_stats *st,
                          gp_err *err);

/* Does scenario f touch destination dst's shortest-path DAG (base distances)? dead_router: a
 * mask of f's routers. *transit (may be NULL): whether traffic of a live router crosses a failed
 * element (its distances change). */
int gp_plan_touches(const gp_rt *t, const gp_fail *f, uint32_t dst, const uint8_t *dead_router,
                    int *transit);
/* A scenario's result from its loads (rounding residue and failed links zeroed in place). */
void gp_plan_finish(const gp_rt *t, const gp_demands *d, const double *cap, const gp_fail *f,
                    double *load, double lost, gp_scenario_result *r);

/* Worst utilization / link of a load vector (as in gp_scenario_result). */
void gp_plan_worst(const gp_rt *t, const double *load, const double *cap, gp_scenario_result *r);

#ifdef __cplusplus
}
#endif
#endif
