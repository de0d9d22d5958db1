/* ecmp.h - OSPF-style routing tables with equal-cost multipath, from all-pairs distances.
 *
 * For router i and destination j the table holds d(i,j) and the complete ECMP next-hop set
 *   { k in out(i), k != i : w(i,k) + d(k,j) == d(i,j) }
 * where w(i,k) is the cheapest arc i->k (parallel arcs give one next hop; self-loops never are
 * one). Sets are capped at ecmp_max entries (FRR's 64 / BIRD's 16 style), keeping the lowest node
 * indices (= lowest external ids). Unreachable: dist GP_INF, no next hops; i == j: 0, none.
 *
 * Representation: dist is the n*n all-pairs matrix (gp_engine_apsp: the GPU when present). Router i
 * has deg(i) distinct out-neighbours nb[nb_off[i]..nb_off[i+1]) (ascending, with the cheapest
 * weight nbw); its next-hop sets are bitmasks over that list, E(i) bytes per destination (1, 2,
 * 4 or 8 for up to 8/16/32/64 neighbours, else whole 64-bit words), destination j at
 * mask + mask_off[i] + j*E(i). Extraction runs on a thread pool.
 *
 * Cost changes (graph/change.h, gp_graph_change_links) make a new graph version;
 * gp_rt_update derives the new tables from the old ones, recomputing only affected rows when that
 * is cheaper (see ecmp.c), or recomputing everything. gp_rt_diff lists the (router, destination)
 * pairs whose distance or next-hop set differ between two tables of the same router set.
 * A gp_rt is immutable after construction and may be read by any number of threads.
 */
#ifndef GP_ECMP_H
#define GP_ECMP_H

#include "engine/engine.h"
#include "graph/change.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_ECMP_MAX_DEFAULT 64

typedef struct gp_rt {
    gp_graph *g; /* the graph (a reference held by the tables) */
    uint32_t n;
    uint32_t ecmp_max;
    uint64_t *dist;     /* n*n */
    uint32_t *nb_off;   /* n+1 */
    uint32_t *nb;       /* distinct out-neighbours, ascending per router */
    uint32_t *nbw;      /* cheapest arc weight to each */
    uint64_t *mask_off; /* n+1, in bytes (8-aligned router blocks) */
    uint8_t *mask;
    double apsp_s;    /* seconds spent on distances (APSP, or incremental rows) */
    double ecmp_s;    /* seconds spent extracting next-hop sets */
    char backend[16]; /* engine backend that computed the distances ("cache" when loaded) */
    int refs;         /* reference count (atomic); gp_rt_free drops one */
} gp_rt;

/* Builds the tables of g (takes its own reference). ecmp_max 0 = GP_ECMP_MAX_DEFAULT. threads 0 =
 * online CPUs. max_bytes (0 = none): refuse with GP_ETOOBIG when dist+masks would exceed it.
 * Reports to the calling thread's gp_progress (engine/progress.h), if any: distances fill the
 * span [0, 0.5), next-hop extraction [0.5, 1); it never calls gp_progress_finish (the owner does,
 * once its own work after the build is done too). */
int gp_rt_build(gp_engine *e, gp_graph *g, uint32_t ecmp_max, int threads, uint64_t max_bytes,
                gp_rt **out, gp_err *err);
/* Tables from precomputed all-pairs distances of g (n*n, copied), e.g. from the matrix cache. */
int gp_rt_from_dist(gp_graph *g, const uint64_t *dist, uint32_t ecmp_max, int threads, gp_rt **out,
                    gp_err *err);
/* Reference counting: tables are immutable, so holders may share them across threads.
 * gp_rt_free releases one reference and frees on the last; accepts NULL. */
gp_rt *gp_rt_ref(gp_rt *t);
void gp_rt_free(gp_rt *t);

/* Bytes gp_rt_build would allocate for g. */
uint64_t gp_rt_bytes(const gp_graph *g);

static inline uint64_t gp_rt_dist(const gp_rt *t, uint32_t i, uint32_t j) {
    return t->dist[(uint64_t)i * t->n + j];
}
/* The next hops of i towards j as internal indices, ascending, into out (room for deg(i) or
 * ecmp_max entries, whichever is smaller; GP_ECMP_MAX_DEFAULT always suffices for the default).
 * Returns the count. */
uint32_t gp_rt_next_hops(const gp_rt *t, uint32_t i, uint32_t j, uint32_t *out);

enum gp_rt_strategy { GP_RT_AUTO = 0, GP_RT_INCREMENTAL, GP_RT_FULL };

typedef struct gp_rt_update_stats {
    int strategy;            /* what ran: GP_RT_INCREMENTAL or GP_RT_FULL */
    uint32_t arcs_increased; /* (u,v) pairs whose cheapest weight went up (or removed) */
    uint32_t arcs_decreased;
    uint32_t rows_recomputed;     /* sources re-run with SSSP (incremental) */
    uint32_t rows_changed;        /* routers whose distance row changed */
    uint32_t routers_reextracted; /* routers whose next-hop sets were re-extracted */
    double seconds;
} gp_rt_update_stats;

/* Tables for g2 (same routers as old->g: same n and external ids; g2 is referenced) derived from
 * old. AUTO picks incremental when the affected sources are fewer than half of the routers. */
int gp_rt_update(gp_engine *e, const gp_rt *old, gp_graph *g2, int strategy, int threads,
                 gp_rt **out, gp_rt_update_stats *st, gp_err *err);

typedef struct gp_rt_pair {
    uint32_t router, dest;
} gp_rt_pair;
/* Pairs (i, j) whose distance or next-hop set (as node sets) differs between a and b, router-major
 * ascending. *out malloc'd (free()); a and b must have the same routers. */
int gp_rt_diff(const gp_rt *a, const gp_rt *b, gp_rt_pair **out, size_t *count, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
