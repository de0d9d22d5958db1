/* cch_internal.h - what the CCH's own files share: engine/cch.c (lifecycle, topology cache,
 * query workspaces, the serialised order), engine/cch_contract.c (contraction),
 * engine/cch_custom.c (customization, perfect customization) and engine/cch_query.c (queries).
 * Not part of the contract: other modules include engine/cch.h only.
 */
#ifndef GP_CCH_INTERNAL_H
#define GP_CCH_INTERNAL_H

#include "engine/cch.h"

#include <stddef.h>
#include <stdint.h>

/* METIS_NodeND on the CSR (n >= 2, at least one edge): rank[gid[i]] = lo + position of i (gid
 * NULL: the identity). cch_order.c. */
int gp_cch_nodend(uint32_t n, uint32_t *first, uint32_t *adj, const uint32_t *gid, uint32_t lo,
                  uint32_t *rank, gp_err *err);
/* Orders the part (first, adj: CSR over n local ids, gid: the graph's node of each) into
 * rank[gid[i]] = lo .. lo + n - 1 by Inertial Flow nested dissection on xy (indexed by the
 * graph's node ids), parts of at most o->leaf nodes by METIS_NodeND (cch_flow.c); the counts of
 * separators and of parts no direction could cut into *nseps, *nfallbacks (may be NULL). */
int gp_cch_flow_part(uint32_t n, const uint32_t *first, const uint32_t *adj, const uint32_t *gid,
                     const float *xy, const gp_cch_flow_opts *o, uint32_t lo, uint32_t *rank,
                     uint32_t *nseps, uint32_t *nfallbacks, gp_err *err);

/* Refines the separator sep[v] != 0 of the connected graph (first, adj) of n nodes in a corridor
 * around it (cch_flow.c): a minimum node separator among it and, on each side, the nodes
 * nearest it, up to a fraction alpha of that side; rewrites sep when that one is smaller. Its
 * size (the given one's when unchanged), UINT32_MAX out of memory. */
uint32_t gp_cch_flow_refine(uint32_t n, const uint32_t *first, const uint32_t *adj, uint8_t *sep,
                            double alpha);

/* malloc for the arrays queries read at random, with transparent huge pages asked for (cch.c). */
void *gp_cch_big_malloc(size_t bytes);

/* c's query arcs as published (a background perfect pass may set them at any time). */
static inline const gp_cch_arcs *gp_cch_published(const gp_cch *c) {
    return __atomic_load_n(&c->q, __ATOMIC_ACQUIRE);
}

/* The CCH edge {lo, hi} (ranks, lo < hi), or GP_NONE. */
static inline uint32_t gp_cch_find_edge(const gp_cch_topo *t, uint32_t lo, uint32_t hi) {
    uint32_t a = t->up_first[lo], b = t->up_first[lo + 1];
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (t->up_head[mid] < hi) a = mid + 1;
        else b = mid;
    }
    return a < t->up_first[lo + 1] && t->up_head[a] == hi ? a : GP_NONE;
}

/* A packed witness (gp_cch.wit) of an original arc: GP_CCH_WIT_ORIG | the node (original id) it
 * leads to; of a shortcut: e1 << 32 | e2 of its triangle. One 8-byte read per unpacking step. */
#define GP_CCH_WIT_ORIG (1ULL << 63)

/* A query workspace (rank-indexed, reset along the elimination-tree paths a query touched), from
 * the pool of c's topology (cch.c): get one (NULL out of memory, err filled), put it back as it was
 * found; gp_cch_ws_reserve makes room for k nodes in its unpacking tree (-1 out of memory). */
typedef struct gp_cch_ws {
    uint64_t *df, *db;           /* n, GP_INF when untouched */
    uint32_t *pf, *pb;           /* n: the rank whose arc reached the node (GP_NONE) */
    uint8_t *of, *ob;            /* n: the end a label of a query between sets comes from (read only
                                  * where df / db is set) */
    uint64_t *sweep;             /* n, PHAST (allocated on first use) */
    uint32_t *bhead;             /* n, tables: a rank's first bucket entry (GP_NONE; first use) */
    uint32_t *uit, *ukid, *upos; /* ucap each: path unpacking's tree (unpack) */
    uint32_t ucap;
    struct gp_cch_ws *next;
} gp_cch_ws;

gp_cch_ws *gp_cch_ws_get(const gp_cch *c, gp_err *err);
void gp_cch_ws_put(const gp_cch *c, gp_cch_ws *w);
int gp_cch_ws_reserve(gp_cch_ws *w, uint32_t k);

/* Stops a background perfect pass and drops the query arcs, which new weights make stale
 * (cch_custom.c; gp_cch_free calls it). */
void gp_cch_perfect_drop(gp_cch *c);
/* c's original weights for g, a version of the graph whose customized CCH p is over c's topology
 * (p = pg->cch, pg g's base or the version g was made from): p's copied, the arcs whose weight
 * differs from pg's mapped again (cch_custom.c; the result is gp_cch_map_metric's), the slots
 * that changed listed in c->mchg. GP_ENOMEM only for the list. */
int gp_cch_map_metric_from(gp_cch *c, const gp_graph *g, const gp_cch *p, const gp_graph *pg,
                           gp_err *err);
/* c's arrays, which are p's but at the n edges of delta, made p's (cch_custom.c): the original
 * weights (GP_CCH_RESTORE_METRIC) and / or the customized ones (GP_CCH_RESTORE_CUSTOM): the spare
 * of a version customized from p, for the next version from p; a partial pass that gave up (the
 * customized ones). */
#define GP_CCH_RESTORE_METRIC 1
#define GP_CCH_RESTORE_CUSTOM 2
void gp_cch_restore_from(gp_cch *c, const gp_cch *p, const uint32_t *delta, uint32_t n, int what);
/* The restore of c's customized arrays that gp_cch_prepare left pending (gp_cch pend): done, so
 * that they are prev's (c->from_prev). Every customization calls it before it reads or writes
 * them; the device's (cch_cuda.c) while the device customizes. Nothing when none is pending. */
void gp_cch_restore_pending(gp_cch *c);

/* Unlocks n host arrays page-locked for the device (cch_cuda.c; nothing without CUDA): before
 * a pinned set of weight arrays is freed. */
void gp_cch_host_unpin(void *const *arrays, int n);

/* c's customized arrays (fw, bw, fmid, bmid, wit) made p's (over c's topology), copied on all
 * CPUs; c->from_prev set (cch_custom.c). */
void gp_cch_custom_copy(gp_cch *c, const gp_cch *p);

#endif
