/* repair.h - IP fast-reroute repair paths for every router: loop-free alternates (RFC 5286) and
 * TI-LFA repair segment lists (RFC 9855), per protected link, per protected node and per
 * destination, with the coverage per router and for the network.
 *
 * Notation: d(x,y) is the base all-pairs distance (the gp_rt's matrix: gp_engine_apsp, the GPU when
 * present); w(x,y) the cheapest arc x->y. The point of local repair (PLR) S protects, for every
 * destination D != S that it reaches, each primary next hop E (w(S,E) + d(E,D) = d(S,D): the whole
 * ECMP set, uncapped). The protected resource X is the link S-E (every arc S->E and E->S) or the
 * node E (node protection; only where D != E).
 *
 * LFA (RFC 5286): a neighbour N of S, N != E, is a loop-free alternate when
 *   (1) d(N,D) < d(N,S) + d(S,D)            (loop-free: link-protecting)
 * it is downstream when (2) d(N,D) < d(S,D), and node-protecting when also
 *   (3) d(N,D) < d(N,E) + d(E,D).
 * The LFA reported is the node-protecting one if any, then the one of lowest w(S,N) + d(N,D), then
 * the lowest id. A destination is LFA-protected (link) at S when every primary next hop has a
 * link-protecting LFA; node-protected when every one has a node-protecting LFA.
 *
 * TI-LFA (RFC 9855), all spaces taken on the pre-failure shortest paths ("avoids X": no shortest
 * path, equal-cost splits included, crosses X; for a link: neither d(x,S) + w(S,E) + d(E,y) nor
 * d(x,E) + w(E,S) + d(S,y) equals d(x,y); for a node: x, y != E and d(x,E) + d(E,y) > d(x,y)):
 * - P-space P(R,X): the nodes y that R reaches by shortest paths that all avoid X. Extended
 *   P-space P'(S,X): P(S,X) and the P-spaces of S's neighbours N reached over a link other than X
 *   (N != E).
 * - Q-space Q(D,X): the nodes y whose shortest paths to D all avoid X.
 * - Post-convergence path: the shortest path S = v0, v1, ..., vk = D on the topology without X.
 *   Among equal-cost paths the one of fewest hops, and then, read backwards from D, at each node
 *   the predecessor of lowest id (a deterministic choice; any equal-cost path is a valid one).
 * - Repair: the packet leaves S over the link to v1 (the post-convergence next hop, which is
 *   never across X), then the segment list walks the path greedily from c = v1 until it reaches
 *   the Q node vq, the first node of the path in Q(D,X): a node segment to the furthest path node
 *   vj (j <= q) of P(c,X), or, when c's shortest paths to the next path node cross X, the
 *   adjacency segment c->v(c+1). The P node is where the first segment lands (v1 itself when v1
 *   is in Q: zero segments, the LFA-like case); a P node in Q is a PQ node (one node segment);
 *   [node P, adjacency P->Q] is RFC 7490's classic case; longer lists where needed. From Q the
 *   packet follows Q's own shortest path to D, which avoids X. A destination is TI-LFA-protected
 *   when D stays reachable without X for every primary next hop.
 *
 * Computation: per router S and neighbour E that is a primary next hop somewhere, one shortest-
 * path tree from S on the topology without the link S-E and one without the node E (RFC 9855's
 * post-convergence SPFs, the "1 + 3N" of a router, here on CPU threads over the immutable graph);
 * P/Q membership and LFA inequalities are O(1) reads of the base matrix. Routers run in parallel on
 * `threads` threads; progress goes to the calling thread's gp_progress (engine/progress.h), one
 * unit per router; gp_progress_cancel on it stops the routers not begun (GP_ECANCELLED).
 */
#ifndef GP_ENGINE_REPAIR_H
#define GP_ENGINE_REPAIR_H

#include "engine/ecmp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One segment of a repair list: a node segment to a (b == GP_NONE), or the adjacency a->b. */
typedef struct gp_repair_seg {
    uint32_t a, b;
} gp_repair_seg;

/* A TI-LFA repair for one protected resource (internal node indices). */
typedef struct gp_tilfa {
    uint64_t cost;     /* post-convergence distance S->D; GP_INF: unreachable without X */
    uint32_t next_hop; /* v1, the post-convergence next hop (GP_NONE when unreachable) */
    uint32_t p, q;     /* P node and Q node (GP_NONE when unreachable) */
    uint32_t seg_off;  /* segments seg[seg_off .. seg_off + nseg) of the router's result */
    uint32_t nseg;
    uint32_t path_off; /* post-convergence path v0..vk: path[path_off .. path_off + path_len) */
    uint32_t path_len; /* 0 when paths were not kept or D is unreachable without X */
} gp_tilfa;

enum { GP_LFA_NODE = 1, GP_LFA_DOWNSTREAM = 2 };

/* One (router S, primary next hop E, destination D). */
typedef struct gp_repair_entry {
    uint32_t dest, nh;
    uint32_t lfa;      /* the chosen LFA (GP_NONE: none) */
    uint32_t lfa_bits; /* GP_LFA_NODE, GP_LFA_DOWNSTREAM of the chosen LFA */
    gp_tilfa link;     /* X = link S-E */
    gp_tilfa node;     /* X = node E; cost GP_INF and nothing else when D == E or node is off */
    int node_applies;  /* 1 when node protection was computed (D != E, node protection on) */
} gp_repair_entry;

/* Coverage counts of one router (destinations D != S that it reaches). */
typedef struct gp_repair_cov {
    uint32_t dests;      /* reachable destinations */
    uint32_t lfa_link;   /* every primary next hop has a link-protecting LFA */
    uint32_t tilfa_link; /* every primary next hop has a TI-LFA link repair */
    uint32_t node_dests; /* destinations none of whose primary next hops is D itself */
    uint32_t lfa_node;   /* of those: every primary next hop has a node-protecting LFA */
    uint32_t tilfa_node; /* of those: every primary next hop has a TI-LFA node repair */
} gp_repair_cov;

typedef struct gp_repair_router {
    gp_repair_cov cov;
    gp_repair_entry *e; /* kept routers only: entries by (dest, nh) ascending */
    size_t ne;
    gp_repair_seg *seg;
    size_t nseg;
    uint32_t *path;
    size_t npath;
} gp_repair_router;

typedef struct gp_repair_opts {
    int threads;          /* 0 = online CPUs */
    int node_protection;  /* 1: node repairs and node LFAs too */
    int keep_paths;       /* 1: keep post-convergence paths of kept routers */
    const uint8_t *keep;  /* n flags: routers whose entries are kept; NULL = all */
    int lists_for_all;    /* 1: compute the repair lists of routers not kept too (then drop them:
                             benchmarks); 0: those get coverage only (reachability) */
    uint64_t max_entries; /* 0 = none: GP_ETOOBIG when the kept entries would exceed it */
} gp_repair_opts;

typedef struct gp_repair {
    const gp_rt *t; /* the base tables (not referenced: keep them alive) */
    uint32_t n;
    gp_repair_router *r; /* n */
    gp_repair_cov total; /* sums over the routers */
    uint64_t spf_runs;   /* post-convergence shortest-path trees computed */
    uint64_t rows;       /* repair rows (router, destination, next hop) computed in full */
    double seconds;      /* time of gp_repair_compute */
} gp_repair;

/* Repairs of every router of t's graph. *out freed with gp_repair_free. */
int gp_repair_compute(const gp_rt *t, const gp_repair_opts *o, gp_repair **out, gp_err *err);
void gp_repair_free(gp_repair *r); /* accepts NULL */

#ifdef __cplusplus
}
#endif
#endif
