/* scc.c - OSRM's snapping rule that a route should not start or end on a road cut off from
 * the network: a coordinate whose nearest segment lies outside the graph's largest strongly
 * connected component (a private parking loop, a one-way stub, a fragment cut by the extract's
 * border) snaps instead to the nearest segment inside one, when one lies within the radius (as
 * osrm-routed does with its "big component" phantom nodes). Big means at least 1000 nodes, OSRM's
 * --small-component-size default, or the largest component's size when none is that big. Without this, random coordinates in
 * Monaco fail with NoRoute one time in ten; with it, as with OSRM, almost never.
 *
 * The component is computed once per graph version (iterative Kosaraju: a post-order of the
 * forward CSR, then the reverse CSR in reverse post-order; O(n + m)) and kept in a small cache
 * keyed by the graph's pointer and content hash, under a mutex; a graph freed and replaced by
 * another at the same address with the same hash has the same components. Versions that differ
 * in weights only (gp_graph_reweight: PATCH .../links) share their base's entry.
 */
#include "server/osrm/internal.h"

#include "graph/spatial.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { CACHE = 8 };
static struct {
    const gp_graph *g;
    uint64_t hash;
    uint8_t *big;
    uint64_t used;
} cache[CACHE];
static uint64_t tick;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* OSRM's --small-component-size default: strongly connected components with fewer nodes are
 * avoided when snapping (unless no component is that big: then the largest ones count as big). */
#define SMALL_COMPONENT 1000

/* big[v] = 1 for the nodes of big strongly connected components; NULL when out of memory. */
static uint8_t *largest_scc(const gp_graph *g) {
    uint32_t n = g->n;
    uint32_t *order = malloc(sizeof *order * n), *stack = malloc(sizeof *stack * n);
    uint32_t *edge = malloc(sizeof *edge * n), *comp = malloc(sizeof *comp * n);
    uint8_t *big = calloc(n, 1);
    if (!order || !stack || !edge || !comp || !big) {
        free(big);
        big = NULL;
        goto done;
    }
    for (uint32_t v = 0; v < n; v++) comp[v] = GP_NONE;
    /* 1: post-order of the forward graph (comp doubles as the visited mark: 0 = seen) */
    uint32_t no = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (comp[r] != GP_NONE) continue;
        uint32_t sp = 0;
        stack[sp++] = r;
        comp[r] = 0;
        edge[r] = g->row[r];
        while (sp) {
            uint32_t v = stack[sp - 1];
            if (edge[v] < g->row[v + 1]) {
                uint32_t w = g->col[edge[v]++];
                if (comp[w] == GP_NONE) {
                    comp[w] = 0;
                    edge[w] = g->row[w];
                    stack[sp++] = w;
                }
            } else {
                order[no++] = v;
                sp--;
            }
        }
    }
    /* 2: the reverse graph in reverse post-order: each tree is one component */
    for (uint32_t v = 0; v < n; v++) comp[v] = GP_NONE;
    uint32_t best_size = 0, c = 0;
    for (uint32_t i1 = n; i1 > 0; i1--) { /* i = n-1 .. 0 without an unsigned wrap */
        uint32_t r = order[i1 - 1];
        if (comp[r] != GP_NONE) continue;
        uint32_t sp = 0, size = 0;
        stack[sp++] = r;
        comp[r] = c;
        while (sp) {
            uint32_t v = stack[--sp];
            size++;
            for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++) {
                uint32_t w = g->rcol[a];
                if (comp[w] == GP_NONE) {
                    comp[w] = c;
                    stack[sp++] = w;
                }
            }
        }
        if (size > best_size) best_size = size;
        edge[c] = size; /* edge[] is free now: component sizes by id */
        c++;
    }
    uint32_t min_size = best_size < SMALL_COMPONENT ? best_size : SMALL_COMPONENT;
    for (uint32_t v = 0; v < n; v++) big[v] = edge[comp[v]] >= min_size;
done:
    free(order);
    free(stack);
    free(edge);
    free(comp);
    return big;
}

/* The cached membership array of g (valid while the cache entry lives: callers hold the mutex
 * only while looking it up, so entries are never freed, only reused for another graph after
 * CACHE newer graphs; a request in flight that long is not a concern for 8 entries of distinct
 * graph versions). */
static const uint8_t *big_of(const gp_graph *g) {
    g = gp_graph_owner(g); /* a reweighted version has its base's arcs, so its components */
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < CACHE && slot < 0; i++)
        if (cache[i].g == g && cache[i].hash == g->hash && cache[i].big) slot = i;
    if (slot < 0) {
        uint8_t *big = largest_scc(g);
        if (!big) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        slot = 0;
        for (int i = 1; i < CACHE; i++)
            if (cache[i].used < cache[slot].used) slot = i;
        free(cache[slot].big);
        cache[slot].g = g;
        cache[slot].hash = g->hash;
        cache[slot].big = big;
    }
    cache[slot].used = ++tick;
    const uint8_t *big = cache[slot].big;
    pthread_mutex_unlock(&mu);
    return big;
}

int gp_osrm_snap_big(const gp_graph *g, gp_snap *s, double radius_m) {
    const uint8_t *big = big_of(g);
    if (!big) return 0;
    int inside = s->arc != GP_NONE ? big[gp_graph_arc_tail(g, s->arc)] && big[g->col[s->arc]]
                                   : big[s->node];
    if (inside) return 0;
    gp_snap best;
    best.dist_m = -1;
    for (uint32_t k = 64; k <= 4096 && best.dist_m < 0; k *= 8) {
        uint32_t kk = k < g->n ? k : g->n;
        uint32_t *nodes = malloc(sizeof *nodes * kk);
        int got = nodes ? gp_spatial_nearest(g->spatial, g, s->qlon, s->qlat, kk, nodes, NULL) : 0;
        for (int i = 0; i < got; i++) {
            uint32_t x = nodes[i];
            if (!big[x]) continue;
            for (uint32_t a = g->row[x]; a < g->row[x + 1]; a++) {
                if (!big[g->col[a]] || g->col[a] == x) continue;
                gp_snap c;
                gp_osrm_project(g, a, s->qlon, s->qlat, &c);
                if (best.dist_m < 0 || c.dist_m < best.dist_m) best = c;
            }
        }
        free(nodes);
        if (kk == g->n) break;
    }
    if (best.dist_m < 0 || best.dist_m > radius_m) return 0;
    best.rarc = gp_graph_reverse_arc(g, best.arc);
    *s = best;
    return 1;
}
