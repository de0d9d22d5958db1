/* cch.h - customizable contraction hierarchies (Dibbelt, Strasser, Wagner 2016; the survey of
 * Blaesius et al. 2025): a metric-independent topology (nested-dissection order, chordal supergraph,
 * lower triangles, levels) built once per graph shape, a per-metric customization (CPU threads or
 * the GPU, engine/cch_cuda.c), and queries: p2p (elimination-tree search, paths unpacked to original
 * arcs), one-to-all (PHAST), many-to-many (buckets).
 *
 * Model. The CCH lives on the undirected skeleton of the directed graph (self-loops dropped). Nodes
 * are renumbered by rank: rank 0 is eliminated first. Every skeleton edge and fill edge {x, y} with
 * rank x < rank y is one "CCH edge" with two weights: up (x -> y) and down (y -> x); parallel arcs
 * keep the minimum, a missing direction is GP_CCH_INF. Edge ids are grouped by the lower endpoint,
 * heads ascending, and ranks are grouped by level (level = 1 + the largest level of a lower
 * neighbour, 0 without one), so each level's nodes and edges are contiguous id ranges: customization
 * runs level by level bottom-up, the PHAST sweep level by level top-down.
 *
 * Weights are uint32 (GP_CCH_INF = none); customization sums saturate. A shortcut whose every
 * candidate overflowed uint32 would be wrong, so customization then fails with GP_ETOOBIG and the
 * engine keeps the Dijkstra family for that graph. Query distances are uint64 (GP_INF unreachable).
 *
 * Directions. The topology keeps, per edge, which directions the arcs it was built from have
 * (adir), and lists only the lower triangles that can give a finite weight in some direction under
 * some metric over those arcs: v of {x, y} is kept when x -> v -> y or y -> v -> x can be driven
 * through lower ranks (a path of the graph's arcs, found bottom-up over the triangles); the others
 * are INF + something in both directions whatever the weights, so leaving them out changes no
 * weight and no witness (the first triangle realising a weight stays the first). On a turn graph
 * (graph/turns.h), whose arcs are turns, half of the triangles go; on a road graph a few.
 *
 * Sharing. A gp_cch_topo is immutable and reference counted. Topologies are kept in a small
 * process-wide cache: a graph whose every arc is a CCH edge of a cached topology with the same node
 * count, in a direction the topology was built with (the same graph after PATCH .../links, a
 * what-if with links down, a new metric) reuses it, and only the customization runs. gp_cch_order_encode / gp_cch_order_decode store the order (the
 * only expensive part: METIS) in a snapshot section so that a restart skips it.
 *
 * Threads. A gp_cch is immutable after customization; queries take a workspace from a pool, so any
 * number of threads may query it at once.
 */
#ifndef GP_CCH_H
#define GP_CCH_H

#include "graph/graph.h"
#include "engine/backend.h"
#include "kernels/cch_cells.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_CCH_INF UINT32_MAX
#define GP_CCH_DIR_UP 1u   /* gp_cch_topo adir: an arc from the lower to the higher end */
#define GP_CCH_DIR_DOWN 2u /* an arc from the higher to the lower end */

typedef struct gp_cch_topo {
    uint32_t n;          /* nodes */
    uint32_t m;          /* CCH edges (undirected, lower -> higher rank) */
    uint64_t ntri;       /* lower triangles over all edges (those kept, see Directions) */
    uint64_t ntri_all;   /* lower triangles before the directed pruning */
    uint32_t *rank;      /* node -> rank */
    uint32_t *order;     /* rank -> node */
    uint32_t *up_first;  /* n+1: edges of rank x are up_first[x]..up_first[x+1]-1 */
    uint32_t *up_head;   /* m: the higher endpoint (rank), ascending per x */
    uint32_t *up_tail;   /* m: the lower endpoint (rank) */
    uint32_t *parent;    /* n: elimination-tree parent (lowest upper neighbour) or GP_NONE */
    uint64_t *tri_first; /* m+1: lower triangles of edge e are tri[2*tri_first[e] ...] */
    uint32_t *tri;       /* 2*ntri: (edge {v,x}, edge {v,y}) per lower triangle v of {x,y} */
    uint8_t *adir;       /* m: GP_CCH_DIR_UP (an arc lower -> higher end) | GP_CCH_DIR_DOWN among
                          * the arcs of the graph the topology was built from */
    uint32_t nlevels;
    uint32_t *level_first; /* nlevels+1: ranks of level L are level_first[L]..level_first[L+1]-1 */
    uint32_t width;        /* largest up-degree (bounds query work) */
    uint32_t height;       /* longest elimination-tree path (levels) */
    double order_s;        /* seconds: nested dissection (0 when loaded) */
    double contract_s;     /* seconds: chordal completion, triangles, levels */
    int refs;              /* atomic */
    void *pool;            /* query workspaces (cch.c), shared by the gp_cchs over this topology */
    void *spare;           /* the weight arrays of a freed gp_cch over it, for the next (cch.c) */
    int warming; /* atomic: gp_cch_warm_spare's thread is filling spare (2: with a copy) */
    void *warm;  /* that copy's job while it runs, which gp_cch_prepare helps (cch.c) */
} gp_cch_topo;

/* The arcs queries relax in one direction after perfect customization (gp_cch_perfect): per rank
 * x, arcs first[x]..first[x+1]-1, each with its head (rank), weight and CCH edge id (for the
 * witnesses). */
typedef struct gp_cch_arcs {
    uint32_t *first; /* n+1; NULL: no perfect pass, queries relax every CCH edge */
    uint32_t *head, *w, *edge;
} gp_cch_arcs;

/* A customized CCH for one graph (one metric). */
typedef struct gp_cch {
    gp_cch_topo *topo;   /* referenced */
    uint32_t n, m;       /* the graph's n and m (sanity) */
    uint64_t graph_hash; /* the graph it was built for */
    uint32_t *ofw, *obw; /* topo->m: cheapest original arc x->y / y->x per edge, GP_CCH_INF none */
    uint32_t *fw, *bw;   /* topo->m: customized up / down weights */
    uint32_t *fmid, *bmid; /* topo->m: witness of fw / bw: offset of the first lower triangle
                            * realising it within the edge's triangles, GP_NONE = original arc */
    uint64_t *wit;         /* 2 * topo->m: the witnesses packed for unpacking (cch_internal.h):
                            * [2e] of bw, [2e+1] of fw, side by side because unpacking a shortcut
                            * reads one of each of two edges with the same lower end (neighbouring
                            * ids) */
    gp_cch_arcs *q;        /* query arcs of gp_cch_perfect, [1] up over fw, [0] down over bw, or
                            * NULL; published atomically (a background pass sets it while queries
                            * run; they read it once) */
    double perfect_s;      /* seconds of the perfect pass that set q (0: none) */
    void *perfect_bg;      /* the background pass (cch_custom.c) or NULL */
    int perfect_holds;     /* gp_cch_perfect_hold's count (cch_custom.c's lock) */
    double custom_s;       /* seconds of the last customization */
    int custom_partial;    /* 1: the last one was partial (from prev, cch_custom.c) */
    /* The customized CCH of the graph this one's graph is a version of (gp_graph.base), over the
     * same topology, set by gp_cch_prepare, whose metric is mapped from it (only the arcs whose
     * weight changed again): the first gp_cch_customize starts from its weights
     * and customizes again only the edges a changed weight reaches (exact; the full pass when
     * that would cost more), then clears it. NULL: none. */
    const struct gp_cch *prev;
    /* After a partial customization (gp_cch_customize_partial; ascending) or
     * gp_cch_gpu_customize_diff (in no order): the ndelta edges where this CCH's arrays may
     * differ from prev's, and prev's graph hash (delta_base); NULL
     * otherwise. They go with the arrays to the topology's spare when c is freed, so that the
     * next version on that spare restores only these edges from its predecessor (the same base)
     * instead of copying every array (from_prev 1: the arrays are the predecessor's already). */
    uint32_t *delta;
    uint32_t ndelta;
    uint64_t delta_base;
    int from_prev;
    /* The customized arrays of a spare restored later than its original weights (cch.c): they
     * are pend_from's but at the npend edges of pend (owned when pend_owned), until
     * gp_cch_restore_pending; the device customizes meanwhile (cch_cuda.c). NULL: none. */
    const uint32_t *pend;
    uint32_t npend;
    int pend_owned;
    const struct gp_cch *pend_from;
    double restore_s, map_s; /* gp_cch_prepare's restore of a spare, its metric mapping */
    double spare_wait_s;     /* ... and its wait for a prepared copy under way (cch.c) */
    int pinned; /* the weight and witness arrays are page-locked (cch_cuda.c; unlocked when freed) */
    int reused; /* ... and came from the topology's spare (cch.c): a set in the cycle of versions */
    int spare_gone; /* the topology's spare is empty since c's prepare (it took a prepared one, or
                     * found none): gp_cch_warm_spare may fill it again */
    int spare_warm; /* c's arrays were a prepared spare (gp_cch_warm_spare) */
    int listed;     /* ... were prev's but at a list of edges (restored, not copied whole) */
    /* The edges whose original weights (ofw / obw) differ from prev's, ascending, set by
     * gp_cch_prepare(_from) when prev is set (mchg_ok 1; the metric is prev's but at these), so
     * that the partial pass seeds from them and the device scatters them instead of uploading the
     * whole metric; mchg_ok 0: not known (every edge is compared). Owned by c. */
    uint32_t *mchg;
    uint32_t nmchg;
    int mchg_ok;
    char custom_on[8]; /* "cpu" or "gpu" */
    int reused_topo;   /* 1 when the topology came from the cache */
    void *gpu;         /* engine/cch_cuda.c state (device copies), or NULL */
    void (*gpu_free)(void *gpu);
    void *pool; /* query workspaces (cch.c): topo->pool */
} gp_cch;

/* Size guard. A CCH is worth it on graphs with small separators (road networks: NY has 5 CCH
 * edges and 39 lower triangles per node); on grid-like graphs fill-in explodes (a 100,000-node grid
 * has 21 edges and 1,126 triangles per node, a 1M-node grid would need ~8 GB of triangles). Building
 * stops with GP_ETOOBIG once the CCH passes max_tri_per_node triangles per node or
 * max(16, max_tri_per_node / 8) edges per node (graphs under 2^22 triangles are always built), and
 * the engine serves such a graph with the Dijkstra family. Default GP_CCH_MAX_TRI_PER_NODE; 0 lifts
 * the guard (the lab). Process-wide; set it before loading graphs (config
 * cch_max_triangles_per_node). */
#define GP_CCH_MAX_TRI_PER_NODE 200
void gp_cch_set_max_tri_per_node(uint32_t max_tri_per_node);
/* The queries relax 8 arcs at a time with AVX-512 where the CPU has it; tests and benches turn
 * that off through engine/engine_lab.h (cch_simd). */

/* Orders (engine/cch_order.c): rank[v] = elimination position; ties, isolated nodes and
 * disconnected graphs are handled; n >= 1.
 * gp_cch_order_metis: one METIS_NodeND call on the skeleton (one thread).
 * gp_cch_order_nd: the same nested dissection in parallel: vertex separators (METIS; above 16
 * leaves on the graph without its trees and with its degree-2 chains contracted) split the
 * graph's connected components into components recursively on threads workers (0 = all CPUs),
 * each separator ranked above its parts, and parts of at most leaf nodes (0 = GP_CCH_ND_LEAF)
 * ordered by METIS_NodeND. The order does not depend on the thread count; a graph of at most leaf
 * nodes gets gp_cch_order_metis's order.
 * gp_cch_order: the one gp_cch_new / gp_cch_prepare use, per gp_cch_set_order (process-wide;
 * default GP_CCH_ORDER_ND; config cch_order through gp_engine_set_cch_order).
 * gp_cch_order_parse: "nd" (NULL or "" too), "metis" or "flow" -> GP_CCH_ORDER_*, -1 for anything
 * else. */
#define GP_CCH_ND_LEAF 32768
enum { GP_CCH_ORDER_ND = 0, GP_CCH_ORDER_METIS = 1, GP_CCH_ORDER_FLOW = 2 };
int gp_cch_order_metis(const gp_graph *g, uint32_t *rank, gp_err *err);
/* What the parallel order did (stats may be NULL): CPU seconds of the first split (serial: the
 * skeleton, the components, the top separator), of all subproblems together (work), and of the
 * costliest chain of subproblems from the top to a leaf (span: no thread count gets the order
 * below it; about max(work / threads, span) for enough threads); wall seconds. */
typedef struct gp_cch_nd_stats {
    double top_s, work_s, span_s, wall_s;
    uint32_t splits, leaves;
    uint32_t flow_seps, flow_fallbacks; /* flow leaves: separators, parts METIS ordered whole */
    uint32_t refined;                   /* METIS separators made smaller by the corridor flow */
    uint64_t refine_saved;              /* ... the nodes they lost */
    int threads;                        /* used */
} gp_cch_nd_stats;
int gp_cch_order_nd(const gp_graph *g, int threads, uint32_t leaf, uint32_t *rank,
                    gp_cch_nd_stats *stats, gp_err *err);
/* The same dissection with its leaves (parts of at most leaf nodes) ordered by Inertial Flow
 * nested dissection (engine/cch_flow.c) on planar coordinates xy (2 floats a node, e.g.
 * gp_graph.cch_xy) instead of METIS_NodeND; leaf UINT32_MAX: the whole graph by flow (one thread).
 * opts NULL: GP_CCH_FLOW_DEFAULT. Deterministic, the same for any thread count.
 * GP_CCH_ORDER_FLOW (config cch_order = flow) is this on graphs with cch_xy (turn graphs), nd on
 * the others. */
typedef struct gp_cch_flow_opts {
    double b;            /* source and sink sets: this fraction of the part's nodes each */
    int ndirs;           /* 4 or 8 directions */
    int least_expansion; /* 1: the cut of least separator / smaller side; 0: the smallest */
    uint32_t leaf;       /* parts of at most this many nodes: METIS_NodeND */
    double refine;       /* METIS's separators above the leaves refined by a maximum flow in a
                          * corridor of this fraction of each side's nodes around them (0: not
                          * refined; engine/cch_internal.h gp_cch_flow_refine); with xy NULL and
                          * opts given, nd's METIS_NodeND leaves with refined separators above */
} gp_cch_flow_opts;
#define GP_CCH_FLOW_DEFAULT                                                                        \
    { 0.2, 8, 1, 16, 0.25 }
int gp_cch_order_nd_flow(const gp_graph *g, int threads, uint32_t leaf, const float *xy,
                         const gp_cch_flow_opts *opts, uint32_t *rank, gp_cch_nd_stats *stats,
                         gp_err *err);
int gp_cch_order(const gp_graph *g, uint32_t *rank, gp_err *err);
/* The order of a turn graph tg (graph/turns.h: node a = arc a of the road graph g) derived from
 * g's edge cuts (Buchhold, Wagner, Zeitz, Zuendorf, ATMOS 2020): the road graph is bisected
 * recursively (METIS_PartGraphRecursive, the cut weighted by the arcs it crosses), the arcs of
 * each cut are the turn graph's separator at that level, ranked above the arcs of both sides;
 * parts of at most leaf turn-graph nodes (0 = GP_CCH_TURN_LEAF) are ordered by METIS_NodeND on
 * the turn graph. rank has tg->n entries. GP_EINVAL when tg->n != g->m. */
#define GP_CCH_TURN_LEAF 256
int gp_cch_order_turns(const gp_graph *g, const gp_graph *tg, uint32_t leaf, uint32_t *rank,
                       gp_err *err);
void gp_cch_set_order(int mode, uint32_t leaf); /* mode GP_CCH_ORDER_*; leaf for ND (0 default) */
int gp_cch_order_parse(const char *name);
int gp_cch_order_mode(void); /* the mode gp_cch_set_order set: GP_CCH_ORDER_* */
/* Shared by the order and the contraction: the undirected skeleton of g as CSR (neighbour lists
 * ascending, no duplicates or self-loops); and threads, or all online CPUs for 0 (at most 256). */
int gp_cch_skeleton(const gp_graph *g, uint32_t **first, uint32_t **adj, gp_err *err);
int gp_cch_threads(int threads);
/* Topology from an order (contraction). threads 0 = all CPUs. */
int gp_cch_topo_build(const gp_graph *g, const uint32_t *rank, gp_cch_topo **out, gp_err *err);
void gp_cch_topo_unref(gp_cch_topo *t); /* accepts NULL */
uint64_t gp_cch_topo_bytes(const gp_cch_topo *t);

/* The order as a snapshot section (graph/snapshot.h, named GP_CCH_SNAPSHOT_SECTION): a magic, a
 * format version, n, a fingerprint of g's arcs and the ranks, little-endian. encode mallocs *out
 * (rank: any elimination order of g, e.g. topo->rank or gp_cch_order_metis's). decode checks the
 * record against g (GP_EPARSE for another graph or a damaged record: the caller recomputes) and
 * builds the topology into the cache, so that attaching g reuses it: `gpath import` writes the
 * section, gp_engine_attach reads it from a graph loaded from a snapshot. */
#define GP_CCH_SNAPSHOT_SECTION "cch.order"
int gp_cch_order_encode(const uint32_t *rank, const gp_graph *g, void **out, uint64_t *size,
                        gp_err *err);
int gp_cch_order_decode(const gp_graph *g, const void *data, uint64_t size, gp_err *err);

/* Fills topology t's spare (when it has none) on a thread of its own: one set of weight and
 * witness arrays (40 bytes a CCH edge) allocated on huge pages and written once, so that the next
 * gp_cch over t that no freed version gave its arrays to (a new exclude or vehicle metric, the
 * first traffic versions) finds mapped pages instead of faulting in fresh ones (the copy of 1 GB
 * on gen:1M with turn costs was the longest part of a new metric's attach). With from (a graph
 * whose CCH over t is customized; referenced until the copy is done) the set is a copy of from's
 * arrays (on every CPU at the requests' priority; gp_cch_prepare waits for it), listed
 * as from's with no difference: a version customized from from (a speed file on
 * it) then restores and maps only its changes instead of copying every array (on gen:4M with
 * turn costs the first two versions after start-up took 450 ms against 120). Not when a set is
 * larger than max_bytes. */
void gp_cch_warm_spare(gp_cch_topo *t, uint64_t max_bytes, gp_graph *from);

/* Builds (or reuses from the cache) the topology for g and customizes it on the CPU with threads
 * workers (0 = all CPUs). */
int gp_cch_new(const gp_graph *g, int threads, gp_cch **out, gp_err *err);
/* gp_cch_new without the customization (fw/bw unset): for a GPU customization. */
int gp_cch_prepare(const gp_graph *g, gp_cch **out, gp_err *err);
/* gp_cch_prepare for g, a version made from pg (a cost change of pg, the version serving; both
 * versions of one base): when pg's customized CCH is over the topology g gets, c->prev is it
 * rather than the base's, and the metric is pg's with the arcs whose weight differs from pg's
 * mapped again, so that a chain of small changes customizes each one from its predecessor.
 * pg NULL, or pg's CCH on another topology: gp_cch_prepare. */
int gp_cch_prepare_from(const gp_graph *g, const gp_graph *pg, gp_cch **out, gp_err *err);
void gp_cch_free(void *c); /* a gp_cch; accepts NULL; the signature of gp_graph.cch_free */
uint64_t gp_cch_bytes(const gp_cch *c);
/* Original arc weights of g into c->ofw/obw (minimum over parallel arcs); GP_EINVAL when an arc of
 * g is not a CCH edge. */
int gp_cch_map_metric(gp_cch *c, const gp_graph *g, gp_err *err);
/* CPU customization: fw/bw from ofw/obw, level by level, threads workers (0 = all CPUs). */
int gp_cch_customize(gp_cch *c, int threads, gp_err *err);
/* The partial customization of gp_cch_customize alone (c->prev set, over c's topology): GP_OK
 * with c->custom_partial 1 when c is customized from c->prev (its weights and witnesses
 * bit-identical to a full pass'; c->prev cleared), GP_OK with c->custom_partial 0 when it was not
 * tried or gave up (then the caller customizes in full: gp_cch_customize or on the GPU), an error
 * on overflow. When partial, c->delta lists the c->ndelta edges whose weights or witnesses may
 * differ from c->prev's, ascending (owned by c), and edges / nedges (may be NULL) get them too
 * (NULL / 0 otherwise): the GPU path (gp_cch_gpu_customize_delta) scatters them into a copy of
 * the predecessor's device state. */
int gp_cch_customize_partial(gp_cch *c, int threads, uint64_t max_work, uint32_t **edges,
                             uint32_t *nedges, gp_err *err);
/* (max_work: the triangles and edge searches after which the pass gives up, 0 = half of what
 * the full pass does per thread. Given up after it started, c's customized arrays are c->prev's
 * again and c->from_prev is 1, which gp_cch_gpu_customize_diff needs.) */
/* Rebuilds wit from fmid/bmid (done by gp_cch_customize; the GPU path calls it after copying new
 * fw/bw back) and drops the query arcs of an earlier gp_cch_perfect, which the new weights make
 * stale (so does gp_cch_customize). */
void gp_cch_witnesses(gp_cch *c);

/* Perfect customization (Dibbelt, Strasser, Wagner 2016, section 6), after a basic one (CPU or
 * GPU): nodes top-down, level by level on threads workers (0 = all CPUs), every edge relaxed over
 * its upper and intermediate triangles, gives each edge and direction the exact distance between
 * its ends. An arc whose basic weight is larger (or GP_CCH_INF) lies on no shortest up-down path
 * (every arc of a shortest path is one between its ends), so the queries (p2p, upward searches,
 * buckets, the upward half of PHAST) may drop it: c->q keeps the others, compacted per rank. fw/bw,
 * the witnesses and the PHAST / RPHAST sweeps (GPU included) stay basic: a kept arc's perfect weight
 * is its basic one. Fails only out of memory or past the request deadline (c then has no q). */
int gp_cch_perfect(gp_cch *c, int threads, gp_err *err);
/* The same pass on a thread of its own (threads workers), so that c answers at once with every
 * arc and switches to the pruned ones when they are ready; a failure leaves c without them.
 * gp_cch_customize, gp_cch_witnesses and gp_cch_free stop and join it; gp_cch_perfect_wait joins
 * it (tests, benches). Returns GP_OK or GP_ENOMEM (no thread: the caller may run gp_cch_perfect). */
int gp_cch_perfect_start(gp_cch *c, int threads, gp_err *err);
void gp_cch_perfect_wait(gp_cch *c);
/* Holds c's background pass before its next level (hold 1), one started later before its first,
 * or lets it go on (hold 0; holds count): a cost change derived from c runs on every CPU
 * meanwhile. Safe while c answers queries; gp_cch_free stops a held pass. */
void gp_cch_perfect_hold(const gp_cch *c, int hold);
/* Reference (single-threaded, rank by rank top-down) perfect weights of basic fw/bw into pfw/pbw
 * (topo->m each): the test oracle. */
void gp_cch_perfect_serial(const gp_cch_topo *t, const uint32_t *fw, const uint32_t *bw,
                           uint32_t *pfw, uint32_t *pbw);
/* Reference (single-threaded, edge by edge) customization into fw/bw/fmid/bmid: the test oracle. */
int gp_cch_customize_serial(const gp_cch_topo *t, const uint32_t *ofw, const uint32_t *obw,
                            uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                            gp_err *err);

/* Queries; node arguments are the graph's internal indices. */
int gp_cch_p2p(const gp_cch *c, uint32_t s, uint32_t t, gp_path *path, gp_err *err);
/* p2p between sets: the shortest of the routes from any src[i], starting at cost soff[i], to any
 * dst[j], adding doff[j] (NULL offsets: 0), in one elimination-tree query over the union of the
 * ends' tree paths (a snapped position enters and leaves the network at up to two nodes,
 * engine/snap.h). 1..GP_CCH_MAX_ENDS ends a side. path->dist includes the offsets; the path runs
 * from src[*si] to dst[*di] (si, di may be NULL); no route: dist GP_INF, *si = *di = GP_NONE. */
#define GP_CCH_MAX_ENDS 4
int gp_cch_p2p_multi(const gp_cch *c, const uint32_t *src, const uint64_t *soff, uint32_t ns,
                     const uint32_t *dst, const uint64_t *doff, uint32_t nd, gp_path *path,
                     uint32_t *si, uint32_t *di, gp_err *err);
/* PHAST on the CPU: dist (n, node order) from src; nodes past max_dist are GP_INF. */
int gp_cch_sssp(const gp_cch *c, uint32_t src, uint64_t max_dist, uint64_t *dist, gp_err *err);
/* Predecessors that realise dist (a BFS over tight arcs from src, so zero-weight cycles cannot
 * make loops). */
int gp_cch_pred(const gp_graph *g, uint32_t src, const uint64_t *dist, uint32_t *pred, gp_err *err);
/* Bucket-based many-to-many, sources on threads workers (0 = all CPUs). */
int gp_cch_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                 uint32_t nt, int threads, uint64_t *out, gp_err *err);

/* Upward elimination-tree search from node v over fw (dir 1) or bw (dir 0): the ranks of v's
 * ancestors reached (GP_INF ones left out) and their distances; returns the count (at most
 * topo->height + 1 entries are written), or -1 out of memory. */
int gp_cch_upward(const gp_cch *c, uint32_t v, int dir, uint32_t *ranks, uint64_t *dist);

/* Process-wide topology cache (entries kept, most recent first). */
void gp_cch_cache_clear(void);

/* GPU part (engine/cch_cuda.c over kernels/cch.h). Without CUDA they answer GP_EUNSUPPORTED.
 * gpu_customize uploads the topology and ofw/obw (once per gp_cch), customizes on the device and
 * copies fw/bw back to c (so CPU queries use them); then sssp and table run PHAST / RPHAST there.
 * The device state is guarded by a mutex inside c->gpu (GPU queries on one graph are serialised). */
int gp_cch_gpu_customize(gp_cch *c, int device, gp_err *err);
/* The device state of c, customized on the host from prev (gp_cch_customize_partial, whose
 * edges list this is), built from prev's device state: a copy on the device of prev's original
 * and customized weights and witnesses (immutable once customized: prev keeps answering), the n
 * edges' new values scattered in, the sweep plan's weights derived; nothing comes back to the
 * host (it has the values). The device arrays come from the topology's spare (the device state of
 * the last version freed) when there is one, so a cost change allocates nothing on the device.
 * GP_EINVAL when prev has no device state on that device or another topology's: the caller
 * customizes in full (gp_cch_gpu_customize). */
int gp_cch_gpu_customize_delta(gp_cch *c, const gp_cch *prev, const uint32_t *edges, uint32_t n,
                               int device, gp_err *err);
/* The full customization of c on the device (a change too large for the host's partial pass)
 * from prev's device state: prev's device metric copied and the edges c->mchg lists scattered
 * (not the whole metric uploaded, when c->mchg_ok), the device customization, then only the
 * edges whose values differ from prev's come back (and get their witnesses), into c's customized
 * host arrays made prev's (c->from_prev, else copied on the host), not every array; they become
 * c->delta. Over a quarter of the edges differ: every customized array comes back and every
 * witness is computed (gp_cch_gpu_stats.whole). Starts from the topology's spare device arrays
 * as gp_cch_gpu_customize_delta. GP_EINVAL when prev has no device state on that device or
 * another topology's: then the caller runs gp_cch_gpu_customize (c unchanged). */
int gp_cch_gpu_customize_diff(gp_cch *c, const gp_cch *prev, int device, gp_err *err);
/* The device's customized weights and witnesses of c copied into the host arrays (topo->m
 * entries each; any may be NULL), for the tests (device == host). GP_EUNSUPPORTED without
 * device state. */
int gp_cch_gpu_weights(const gp_cch *c, uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                       gp_err *err);
/* The packed witnesses (2m words) as the device computes them from its customized arrays (the
 * full and whole paths fetch them so into page-locked sets instead of a host pass): tests. */
int gp_cch_gpu_witnesses(const gp_cch *c, uint64_t *wit, gp_err *err);
int gp_cch_gpu_sssp(const gp_cch *c, const uint32_t *src, uint32_t k, uint64_t *dist,
                    gp_err *err); /* dist: k*n, row per source, node order */
int gp_cch_gpu_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                     uint32_t nt, uint64_t *out, gp_err *err);
/* Device milliseconds of the last gpu call on c (CUDA events), for the lab and benches. */
double gp_cch_gpu_last_ms(const gp_cch *c);
/* Every device (engine cuda_devices): gp_cch_gpu_replicate adds a device state of c on device (c
 * has one already: the first device's), customized there from c's metric and checked equal to
 * c's customized weights; GP_EINVAL without a first state. The states are numbered from 0 (the
 * first, c->gpu) to gp_cch_gpu_count(c) - 1 and freed with c; gp_cch_gpu_device is state i's
 * CUDA ordinal (-1: none). gp_cch_gpu_sssp_on / _table_on are gp_cch_gpu_sssp / _table on
 * state i (GP_EUNSUPPORTED past the last); calls on different states run concurrently. */
int gp_cch_gpu_replicate(gp_cch *c, int device, gp_err *err);
int gp_cch_gpu_count(const gp_cch *c);
int gp_cch_gpu_device(const gp_cch *c, int i);
int gp_cch_gpu_sssp_on(const gp_cch *c, int i, const uint32_t *src, uint32_t k, uint64_t *dist,
                       gp_err *err);
int gp_cch_gpu_table_on(const gp_cch *c, int i, const uint32_t *src, uint32_t ns,
                        const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err);
/* A turn table's cells on device state i (kernels/cch_cells.h): RPHAST from the rows' ends to the
 * kt distinct targets dst (c's nodes: the turn graph's), the columns' ends (cols->ix index dst)
 * kept on the device under key (a table plan's, unique in the process) for the next call, and
 * each cell combined there. out: rows->n x cols->n cells as kernels/cch_cells.h gp_dcch_cells
 * writes them (scale > 0: float32 cost / scale; scale 0: uint64 costs); the cells the host
 * finishes hold 0 and are listed in *fix (cell = row * cols->n + column; malloc'd, *nfix
 * entries). */
int gp_cch_gpu_cells_on(const gp_cch *c, int i, const uint32_t *dst, uint32_t kt, uint64_t key,
                        const gp_dcch_ends *rows, const gp_dcch_ends *cols, uint64_t closed_from,
                        double scale, void *out, gp_dcch_fix **fix, uint32_t *nfix, gp_err *err);
/* Where the last GPU customization of c spent its time (wall seconds), for logs and benches:
 * topo_shared 1 when its topology's device part (upload, sweep plan; shared by the graph versions
 * customized on one topology, kernels/cch.h) was already on the device when c's device state
 * was set up, 0 when c built it; attach_s: setting up c's device state (0 after the first
 * customization); customize_s: customization with the copy of the weights back to the host;
 * device_ms: its device time; witnesses_s: the unpacking witnesses on the CPU. Returns -1 (and
 * zeroes st) without device state. */
typedef struct gp_cch_gpu_stats {
    int topo_shared;
    double attach_s, customize_s, witnesses_s;
    double fetch_s; /* the customized arrays and the device-computed witnesses back to the host */
    float device_ms;
    /* delta: 1 when the last customization was gp_cch_gpu_customize_delta (scattered: its
     * edges; attach_s then setting up the device state, customize_s the copy, scatter and plan
     * weights); diff: 1 when it was gp_cch_gpu_customize_diff (scattered: the edges fetched);
     * spare: 1 when the device arrays came from the topology's spare */
    int delta, diff, spare;
    int whole; /* gp_cch_gpu_customize_diff with too many differences: every array came back */
    uint32_t scattered;
    /* the host's restore of its arrays while the device customized (gp_cch_gpu_customize_diff) */
    double busy_s;
    /* gp_cch_gpu_customize_diff's host seconds: the customization (busy and the wait included),
     * the differences' count, their copy back (kernels/cch.h gp_dcch_customize_diff) */
    double run_s, count_s, copy_s;
    /* the last RPHAST table (not a customization's): 1 when its sweep ran in 64-bit cells (a
     * 32-bit one saturated, or no page-locked staging), 0 in 32-bit ones */
    int table64;
    /* tables whose cells were combined on this device (gp_cch_gpu_cells_on), kept across
     * customizations */
    uint64_t cells;
} gp_cch_gpu_stats;
int gp_cch_gpu_stats_get(const gp_cch *c, gp_cch_gpu_stats *st);

#ifdef __cplusplus
}
#endif
#endif
