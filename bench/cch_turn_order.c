/* cch_turn_order.c - the turn graph's CCH order lab: the nested dissection on the turn graph
 * itself (gp_cch_order_nd, the product's order before) against the order derived from the road
 * graph's edge cuts (gp_cch_order_turns, Buchhold et al. 2020) and an Inertial Flow nested
 * dissection (order_flow below, lab only), in time and in quality, with the customization and the
 * queries built on each (bench/cpu-cch-turn-order.sh writes
 * bench/results/DATE-MACHINE-cch-turn-order.md).
 *
 *   cch_turn_order [--threads N] [--leaf L,L,..] [--no-cuts] [--flow B,B,..] [--flow-leaf L]
 *                  [--flow-pick smallest|expansion] [--flow-dirs 4|8] [--flow-metis-above N]
 *                  [--queries Q] SPEC...
 *                  (road graphs with coordinates and travel times: OSM files, gen:N)
 *
 * --no-cuts leaves out the derived order's rows; --flow adds one Inertial Flow row per fraction B
 * (percent of the nodes in the source and in the sink set), with parts of at most --flow-leaf
 * nodes (default 256) ordered by METIS_NodeND, 4 (default) or 8 directions, and the cut picked as
 * the smallest (default; ties: the more balanced) or the one of least expansion (separator size
 * over the smaller side's); --flow-metis-above N separates parts above N nodes by METIS instead
 * (METIS_ComputeVertexSeparator, as nd's top levels) and only the smaller ones by flow.
 *
 * Per graph: its car turn graph (graph/turns.h), then one Markdown row per order: order seconds
 * (wall, N threads; the derived order runs on one), contraction seconds, CCH edges, lower
 * triangles (the customization's operations), levels, widest up-degree, CPU customization ms
 * (N threads, median of 3), p2p query microseconds (mean over Q random pairs, one thread) and
 * the query's elimination-tree work. Every order's p2p distances must equal the first order's on
 * the same pairs (else the row says DIFFERS and the exit status is 1). The size guard is off.
 */
#include "engine/cch.h"
#include "graph/turns.h"
#include "storage/source.h"
#include "bench/bench_util.h"

#include <math.h>
#include <metis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const gp_err *e) {
    fprintf(stderr, "cch_turn_order: %s: %s\n", what, e->msg);
    exit(2);
}

/* Builds the CCH of tg on rank (through the topology cache, as a snapshot's order is), customizes
 * it and runs the queries; prints the row; dist[q] filled (or checked against when check). */
static int measure(const char *name, const char *what, const gp_graph *tg, const uint32_t *rank,
                   double order_s, int threads, const uint32_t *qs, uint32_t nq, uint64_t *dist,
                   int check) {
    gp_err err;
    gp_err_clear(&err);
    void *enc = NULL;
    uint64_t esz = 0;
    gp_cch_cache_clear();
    double t0 = gp_now();
    if (gp_cch_order_encode(rank, tg, &enc, &esz, &err) ||
        gp_cch_order_decode(tg, enc, esz, &err)) /* contraction into the cache */
        die("contraction", &err);
    double contract_s = gp_now() - t0;
    free(enc);
    gp_cch *c = NULL;
    if (gp_cch_prepare(tg, &c, &err)) die("prepare", &err);
    double cm[3];
    for (int r = 0; r < 3; r++) {
        if (gp_cch_customize(c, threads, &err)) die("customize", &err);
        cm[r] = c->custom_s * 1e3;
    }
    qsort(cm, 3, sizeof *cm, bench_cmp_d);
    int bad = 0;
    t0 = gp_now();
    uint64_t work = 0;
    for (uint32_t q = 0; q < nq; q++) {
        gp_path p;
        memset(&p, 0, sizeof p);
        if (gp_cch_p2p(c, qs[2 * q], qs[2 * q + 1], &p, &err)) die("p2p", &err);
        work += p.settled;
        if (check && p.dist != dist[q]) bad = 1;
        if (!check) dist[q] = p.dist;
        gp_path_free(&p);
    }
    double q_us = nq ? (gp_now() - t0) * 1e6 / nq : 0;
    const gp_cch_topo *t = c->topo;
    printf("| %s | %s | %.2f | %.2f | %u | %llu | %u | %u | %.1f | %.1f | %.0f | %s |\n", name,
           what, order_s, contract_s, t->m, (unsigned long long)t->ntri, t->nlevels, t->width,
           cm[1], q_us, nq ? (double)work / nq : 0, check ? (bad ? "DIFFERS" : "same") : "-");
    fflush(stdout);
    gp_cch_free(c);
    gp_cch_cache_clear();
    return bad;
}

/* ---------------------------------------------------------------------------------------------
 * Inertial Flow nested dissection (the lab's third order; Schild and Sommer, "On Balanced
 * Separators in Road Networks", SEA 2015). A connected subproblem above `leaf` nodes is split by a
 * minimum node separator: for each of 4 directions (0, 45, 90, 135 degrees) its nodes are sorted
 * by their projection on the line, the first fraction b of them is the source set and the last
 * fraction b the sink set, and a maximum flow with unit node capacities (nodes split into in -> out
 * of capacity 1, edges of unbounded capacity, the source and sink sets contracted to one node
 * each; Dinic) gives a minimum separator between them. The direction with the smallest separator
 * wins (ties: the more balanced one; of the two minimum cuts of a flow, the one nearest the source
 * and the one nearest the sink, the more balanced). The separator takes the top ranks of the
 * range; the components left below it recurse with contiguous ranges. Parts of at most leaf nodes,
 * and a part no direction can cut (a source next to a sink), are ordered by METIS_NodeND, as the
 * leaves of gp_cch_order_nd are. A turn-graph node's coordinates are the midpoint of its road
 * arc. One thread, deterministic. */

#define FLOW_INF (1u << 30)

typedef struct flow_net { /* the residual network of one direction, CSR with reverse arcs */
    uint32_t nn, na;
    uint32_t *first, *head, *rev, *cap, *pos;
    int32_t *level;
    uint32_t *queue, *it, *stack;
} flow_net;

typedef struct flow_ctx {
    const uint32_t *first, *adj; /* the turn graph's skeleton */
    const double *x, *y;
    uint32_t *loc; /* local id in the current subproblem, else GP_NONE */
    uint32_t *rank;
    double b;
    uint32_t leaf;
    int pick_exp; /* pick the cut of least expansion (separator / smaller side), else smallest */
    int ndirs;    /* 4 or 8 directions */
    uint32_t metis_above; /* parts above this many nodes get a METIS separator instead */
    uint32_t seps, leaves, fallbacks, top_sep;
} flow_ctx;

typedef struct flow_sub {
    uint32_t *nodes; /* tg nodes */
    uint32_t n, lo;
} flow_sub;

typedef struct proj_key {
    double p;
    uint32_t i;
} proj_key;

static int proj_cmp(const void *a, const void *b) {
    const proj_key *x = a, *y = b;
    if (x->p != y->p) return (x->p > y->p) - (x->p < y->p);
    return (x->i > y->i) - (x->i < y->i);
}

static void *xmalloc(size_t sz) {
    void *p = malloc(sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "cch_turn_order: out of memory (%zu bytes)\n", sz);
        exit(2);
    }
    return p;
}

/* METIS_NodeND on the local CSR (lfirst, ladj) of nodes[0..n): ranks lo .. lo+n-1. */
static void flow_leaf(flow_ctx *c, const uint32_t *nodes, uint32_t n, const uint32_t *lfirst,
                      const uint32_t *ladj, uint32_t lo) {
    c->leaves++;
    if (n < 3 || lfirst[n] == 0) {
        for (uint32_t i = 0; i < n; i++) c->rank[nodes[i]] = lo + i;
        return;
    }
    idx_t nv = (idx_t)n, opts[METIS_NOPTIONS];
    idx_t *perm = xmalloc((size_t)n * sizeof *perm), *iperm = xmalloc((size_t)n * sizeof *iperm);
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_NUMBERING] = 0;
    if (METIS_NodeND(&nv, (idx_t *)lfirst, (idx_t *)ladj, NULL, opts, perm, iperm) != METIS_OK) {
        fprintf(stderr, "cch_turn_order: METIS_NodeND failed on %u nodes\n", n);
        exit(2);
    }
    for (uint32_t i = 0; i < n; i++) c->rank[nodes[i]] = lo + (uint32_t)iperm[i];
    free(perm);
    free(iperm);
}

/* Adds arc u -> v of capacity cp and its reverse (pass 0 counts, pass 1 places). */
static void net_arc(flow_net *f, int pass, uint32_t u, uint32_t v, uint32_t cp) {
    if (!pass) {
        f->first[u + 1]++;
        f->first[v + 1]++;
        return;
    }
    uint32_t a = f->pos[u]++, r = f->pos[v]++;
    f->head[a] = v, f->cap[a] = cp, f->rev[a] = r;
    f->head[r] = u, f->cap[r] = 0, f->rev[r] = a;
}

/* Dinic from node 0 to node 1 until the flow exceeds bound; the flow. */
static uint32_t net_maxflow(flow_net *f, uint32_t bound) {
    uint32_t flow = 0;
    for (;;) {
        for (uint32_t v = 0; v < f->nn; v++) f->level[v] = -1;
        uint32_t qh = 0, qt = 0;
        f->queue[qt++] = 0;
        f->level[0] = 0;
        while (qh < qt && f->level[1] < 0) {
            uint32_t u = f->queue[qh++];
            for (uint32_t a = f->first[u]; a < f->first[u + 1]; a++) {
                uint32_t v = f->head[a];
                if (f->cap[a] && f->level[v] < 0) {
                    f->level[v] = f->level[u] + 1;
                    f->queue[qt++] = v;
                }
            }
        }
        if (f->level[1] < 0) return flow;
        for (uint32_t v = 0; v < f->nn; v++) f->it[v] = f->first[v];
        /* blocking flow: paths one unit at a time (every path crosses a unit in -> out arc) */
        for (;;) {
            uint32_t sp = 0, u = 0; /* stack holds the arcs of the path */
            while (u != 1) {
                uint32_t a = f->it[u];
                for (; a < f->first[u + 1]; a++)
                    if (f->cap[a] && f->level[f->head[a]] == f->level[u] + 1) break;
                f->it[u] = a;
                if (a == f->first[u + 1]) { /* dead end */
                    if (u == 0) break;
                    f->level[u] = -1;
                    u = f->head[f->rev[f->stack[--sp]]];
                    f->it[u]++;
                    continue;
                }
                f->stack[sp++] = a;
                u = f->head[a];
            }
            if (u != 1) break;
            for (uint32_t k = 0; k < sp; k++) {
                f->cap[f->stack[k]]--;
                f->cap[f->rev[f->stack[k]]]++;
            }
            if (++flow > bound) return flow;
        }
    }
}

/* Residual reachability: from node 0 forwards (dir 0) or to node 1 backwards (dir 1), into
 * level (1 = reached). */
static void net_reach(flow_net *f, int dir) {
    for (uint32_t v = 0; v < f->nn; v++) f->level[v] = 0;
    uint32_t qh = 0, qt = 0, s = dir ? 1 : 0;
    f->queue[qt++] = s;
    f->level[s] = 1;
    while (qh < qt) {
        uint32_t u = f->queue[qh++];
        for (uint32_t a = f->first[u]; a < f->first[u + 1]; a++) {
            uint32_t v = f->head[a];
            uint32_t c = dir ? f->cap[f->rev[a]] : f->cap[a];
            if (c && !f->level[v]) {
                f->level[v] = 1;
                f->queue[qt++] = v;
            }
        }
    }
}

/* The inertial-flow separator of the connected local graph (lfirst, ladj) of n nodes: marks
 * sep[i] = 1 and returns its size, 0 when no direction gives one. */
static uint32_t flow_separator(flow_ctx *c, const uint32_t *nodes, uint32_t n,
                               const uint32_t *lfirst, const uint32_t *ladj, uint8_t *sep) {
    static const double dirs[8][2] = {{1, 0},
                                      {0.92387953251128674, 0.38268343236508978},
                                      {0.70710678118654752, 0.70710678118654752},
                                      {0.38268343236508978, 0.92387953251128674},
                                      {0, 1},
                                      {-0.38268343236508978, 0.92387953251128674},
                                      {-0.70710678118654752, 0.70710678118654752},
                                      {-0.92387953251128674, 0.38268343236508978}};
    uint32_t k = (uint32_t)(c->b * n);
    if (k < 1) k = 1;
    if (2 * k >= n) return 0;
    proj_key *key = xmalloc((size_t)n * sizeof *key);
    uint8_t *cls = xmalloc(n), *best = xmalloc(n);
    uint32_t *mid = xmalloc((size_t)n * sizeof *mid);
    uint32_t nm = n - 2 * k, best_size = UINT32_MAX;
    double best_bal = -1, best_exp = 1e300;
    flow_net f;
    memset(&f, 0, sizeof f);
    f.nn = 2 + 2 * nm;
    f.first = xmalloc(((size_t)f.nn + 1) * sizeof *f.first);
    f.pos = xmalloc(((size_t)f.nn + 1) * sizeof *f.pos);
    f.level = xmalloc((size_t)f.nn * sizeof *f.level);
    f.queue = xmalloc((size_t)f.nn * sizeof *f.queue);
    f.it = xmalloc((size_t)f.nn * sizeof *f.it);
    f.stack = xmalloc((size_t)f.nn * sizeof *f.stack);
    size_t acap = 2 * ((size_t)nm + lfirst[n]) + 2;
    f.head = xmalloc(acap * sizeof *f.head);
    f.rev = xmalloc(acap * sizeof *f.rev);
    f.cap = xmalloc(acap * sizeof *f.cap);
    for (int d = 0; d < 8; d += c->ndirs == 8 ? 1 : 2) {
        for (uint32_t i = 0; i < n; i++) {
            key[i].p = dirs[d][0] * c->x[nodes[i]] + dirs[d][1] * c->y[nodes[i]];
            key[i].i = i;
        }
        qsort(key, n, sizeof *key, proj_cmp);
        for (uint32_t r = 0; r < n; r++) {
            uint32_t i = key[r].i;
            cls[i] = r < k ? 0 : r >= n - k ? 1 : 2;
            mid[i] = r < k || r >= n - k ? GP_NONE : r - k;
        }
        int touch = 0; /* a source next to a sink: no node separator between them */
        for (uint32_t i = 0; i < n && !touch; i++)
            if (cls[i] == 0)
                for (uint32_t e = lfirst[i]; e < lfirst[i + 1]; e++) touch |= cls[ladj[e]] == 1;
        if (touch) continue;
        /* S = 0, T = 1, in(i) = 2 + 2 mid, out(i) = in(i) + 1 */
        for (int pass = 0; pass < 2; pass++) {
            if (pass) {
                for (uint32_t v = 0; v < f.nn; v++) f.first[v + 1] += f.first[v];
                memcpy(f.pos, f.first, ((size_t)f.nn + 1) * sizeof *f.pos);
            } else {
                memset(f.first, 0, ((size_t)f.nn + 1) * sizeof *f.first);
            }
            for (uint32_t i = 0; i < n; i++) {
                if (cls[i] == 2) net_arc(&f, pass, 2 + 2 * mid[i], 3 + 2 * mid[i], 1);
                if (cls[i] == 1) continue;
                for (uint32_t e = lfirst[i]; e < lfirst[i + 1]; e++) {
                    uint32_t j = ladj[e];
                    if (cls[j] != 2 && !(cls[i] == 2 && cls[j] == 1)) continue;
                    uint32_t u = cls[i] == 0 ? 0 : 3 + 2 * mid[i];
                    uint32_t v = cls[j] == 1 ? 1 : 2 + 2 * mid[j];
                    net_arc(&f, pass, u, v, FLOW_INF);
                }
            }
        }
        f.na = f.first[f.nn];
        /* a cut beats the best only below its bound: least expansion needs a flow of at most
         * best_exp * n / 2 (the smaller side has at most n / 2 nodes) */
        uint32_t bound = best_size;
        if (c->pick_exp)
            bound = best_exp * n / 2 < UINT32_MAX - 1 ? (uint32_t)(best_exp * n / 2)
                                                      : UINT32_MAX - 1;
        uint32_t flow = net_maxflow(&f, bound);
        if (flow > best_size) continue;
        /* the two minimum cuts: nearest the sources (forward reach) and nearest the sinks */
        for (int side = 0; side < 2; side++) {
            net_reach(&f, side);
            uint32_t ns = 0, na = k; /* separator, nodes on the source side */
            for (uint32_t i = 0; i < n; i++) {
                if (cls[i] != 2) continue;
                int in = f.level[2 + 2 * mid[i]], out = f.level[3 + 2 * mid[i]];
                int s = side ? out && !in : in && !out;
                ns += s;
                if (!s) na += side ? !out : out;
            }
            if (ns != flow) {
                fprintf(stderr, "cch_turn_order: separator of %u nodes for a flow of %u\n", ns,
                        flow);
                exit(2);
            }
            uint32_t rest = n - ns, small = na < rest - na ? na : rest - na;
            double bal = rest ? (double)small / rest : 0;
            double ex = small ? (double)ns / small : 1e300;
            if (c->pick_exp ? ex < best_exp
                            : ns < best_size || (ns == best_size && bal > best_bal)) {
                best_exp = ex;
                best_size = ns;
                best_bal = bal;
                for (uint32_t i = 0; i < n; i++) {
                    int in = cls[i] == 2 && f.level[2 + 2 * mid[i]];
                    int out = cls[i] == 2 && f.level[3 + 2 * mid[i]];
                    best[i] = cls[i] == 2 && (side ? out && !in : in && !out);
                }
            }
        }
    }
    uint32_t size = best_size == UINT32_MAX ? 0 : best_size;
    if (size) memcpy(sep, best, n);
    free(key);
    free(cls);
    free(best);
    free(mid);
    free(f.first);
    free(f.pos);
    free(f.level);
    free(f.queue);
    free(f.it);
    free(f.stack);
    free(f.head);
    free(f.rev);
    free(f.cap);
    return size;
}

/* A METIS vertex separator of the connected local graph (as gp_cch_order_nd's, without the
 * kernel) into sep; its size. */
static uint32_t metis_separator(uint32_t n, uint32_t *lfirst, uint32_t *ladj, uint8_t *sep) {
    idx_t nv = (idx_t)n, opts[METIS_NOPTIONS], sepsize = 0;
    idx_t *part = xmalloc((size_t)n * sizeof *part);
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_NUMBERING] = 0;
    if (METIS_ComputeVertexSeparator(&nv, (idx_t *)lfirst, (idx_t *)ladj, NULL, opts, &sepsize,
                                     part) != METIS_OK) {
        fprintf(stderr, "cch_turn_order: METIS_ComputeVertexSeparator failed on %u nodes\n", n);
        exit(2);
    }
    uint32_t ns = 0;
    for (uint32_t i = 0; i < n; i++) ns += sep[i] = part[i] == 2;
    free(part);
    return ns;
}

/* rank[] of the turn graph tg by inertial-flow nested dissection with fraction b. */
static void order_flow(const gp_graph *g, const gp_turns *T, double b, uint32_t leaf, int pick_exp,
                       int ndirs, uint32_t metis_above, uint32_t *rank, flow_ctx *c) {
    const gp_graph *tg = T->tg;
    uint32_t *first, *adj, n = tg->n;
    gp_err err;
    gp_err_clear(&err);
    if (gp_cch_skeleton(tg, &first, &adj, &err)) die("skeleton", &err);
    double *x = xmalloc((size_t)n * sizeof *x), *y = xmalloc((size_t)n * sizeof *y);
    uint32_t *tail = xmalloc((size_t)g->m * sizeof *tail);
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) tail[a] = u;
    double lat0 = 0;
    for (uint32_t v = 0; v < g->n; v++) lat0 += g->lat[v];
    double kx = cos((g->n ? lat0 / g->n : 0) * 3.14159265358979323846 / 180);
    for (uint32_t v = 0; v < n; v++) {
        uint32_t a = gp_turns_arc(T, v), s = tail[a], h = g->col[a];
        x[v] = kx * (g->lon[s] + g->lon[h]) / 2;
        y[v] = (g->lat[s] + g->lat[h]) / 2;
    }
    free(tail);
    memset(c, 0, sizeof *c);
    c->first = first, c->adj = adj, c->x = x, c->y = y, c->rank = rank, c->b = b, c->leaf = leaf;
    c->pick_exp = pick_exp;
    c->ndirs = ndirs;
    c->metis_above = metis_above;
    c->loc = xmalloc((size_t)n * sizeof *c->loc);
    for (uint32_t v = 0; v < n; v++) c->loc[v] = GP_NONE;
    uint32_t nstack = 1, cap = 64;
    flow_sub *stack = xmalloc(cap * sizeof *stack);
    stack[0].nodes = xmalloc((size_t)n * sizeof *stack[0].nodes);
    for (uint32_t v = 0; v < n; v++) stack[0].nodes[v] = v;
    stack[0].n = n;
    stack[0].lo = 0;
    uint32_t *lfirst = xmalloc(((size_t)n + 1) * sizeof *lfirst);
    uint32_t *ladj = xmalloc(((size_t)first[n] + 1) * sizeof *ladj);
    uint32_t *comp = xmalloc((size_t)n * sizeof *comp), *queue = xmalloc((size_t)n * sizeof *queue);
    uint32_t *cnt = xmalloc(((size_t)n + 1) * sizeof *cnt);
    uint8_t *sep = xmalloc(n);
    while (nstack) {
        flow_sub s = stack[--nstack];
        uint32_t sn = s.n;
        for (uint32_t i = 0; i < sn; i++) c->loc[s.nodes[i]] = i;
        uint32_t e = 0; /* the induced local CSR */
        for (uint32_t i = 0; i < sn; i++) {
            lfirst[i] = e;
            uint32_t v = s.nodes[i];
            for (uint32_t k = first[v]; k < first[v + 1]; k++)
                if (c->loc[adj[k]] != GP_NONE) ladj[e++] = c->loc[adj[k]];
        }
        lfirst[sn] = e;
        for (uint32_t i = 0; i < sn; i++) c->loc[s.nodes[i]] = GP_NONE;
        for (uint32_t i = 0; i < sn; i++) sep[i] = 0;
        uint32_t nsep = 0, top = s.lo + sn;
        int whole = sn <= leaf; /* ordered by METIS_NodeND */
        if (!whole) {           /* a separator when connected (else just its components) */
            uint32_t qt = 1, qh = 0;
            for (uint32_t i = 0; i < sn; i++) comp[i] = GP_NONE;
            queue[0] = 0;
            comp[0] = 0;
            while (qh < qt)
                for (uint32_t k = lfirst[queue[qh]], u = queue[qh++]; k < lfirst[u + 1]; k++)
                    if (comp[ladj[k]] == GP_NONE) comp[ladj[k]] = 0, queue[qt++] = ladj[k];
            if (qt == sn) {
                nsep = sn > c->metis_above ? metis_separator(sn, lfirst, ladj, sep)
                                           : flow_separator(c, s.nodes, sn, lfirst, ladj, sep);
                if (!nsep) {
                    c->fallbacks++;
                    whole = 1;
                } else {
                    if (!c->seps) c->top_sep = nsep;
                    c->seps++;
                }
            }
        }
        if (whole) {
            flow_leaf(c, s.nodes, sn, lfirst, ladj, s.lo);
            free(s.nodes);
            continue;
        }
        for (uint32_t i = 0; i < sn; i++)
            if (sep[i]) c->rank[s.nodes[i]] = --top;
        /* components of the rest, each a subproblem with a contiguous range from s.lo */
        uint32_t nc = 0;
        for (uint32_t i = 0; i < sn; i++) comp[i] = sep[i] ? GP_NONE - 1 : GP_NONE;
        for (uint32_t r = 0; r < sn; r++) {
            if (comp[r] != GP_NONE) continue;
            uint32_t qh = 0, qt = 0;
            queue[qt++] = r;
            comp[r] = nc;
            while (qh < qt)
                for (uint32_t k = lfirst[queue[qh]], u = queue[qh++]; k < lfirst[u + 1]; k++)
                    if (comp[ladj[k]] == GP_NONE) comp[ladj[k]] = nc, queue[qt++] = ladj[k];
            cnt[nc++] = qt;
        }
        if (nstack + nc > cap) {
            while (nstack + nc > cap) cap *= 2;
            flow_sub *ns = realloc(stack, cap * sizeof *stack);
            if (!ns) {
                fprintf(stderr, "cch_turn_order: out of memory\n");
                exit(2);
            }
            stack = ns;
        }
        uint32_t lo = s.lo, base = nstack;
        for (uint32_t k = 0; k < nc; k++) {
            stack[base + k].nodes = xmalloc((size_t)cnt[k] * sizeof *stack[0].nodes);
            stack[base + k].n = 0;
            stack[base + k].lo = lo;
            lo += cnt[k];
        }
        if (lo != top) {
            fprintf(stderr, "cch_turn_order: ranges do not add up (%u != %u)\n", lo, top);
            exit(2);
        }
        for (uint32_t i = 0; i < sn; i++)
            if (!sep[i]) {
                flow_sub *k = &stack[base + comp[i]];
                k->nodes[k->n++] = s.nodes[i];
            }
        nstack += nc;
        free(s.nodes);
    }
    free(stack);
    free(lfirst);
    free(ladj);
    free(comp);
    free(queue);
    free(cnt);
    free(sep);
    free(c->loc);
    free(x);
    free(y);
    free(first);
    free(adj);
}

/* Whether rank is a permutation of 0 .. n-1. */
static int is_permutation(const uint32_t *rank, uint32_t n) {
    uint8_t *seen = calloc(n ? n : 1, 1);
    int ok = seen != NULL;
    for (uint32_t v = 0; ok && v < n; v++) {
        ok = rank[v] < n && !seen[rank[v]];
        if (ok) seen[rank[v]] = 1;
    }
    free(seen);
    return ok;
}

int main(int argc, char **argv) {
    int threads = 0, rc = 0, i = 1;
    uint32_t leaves[8] = {0}, nleaves = 0, nq = 1000, nflows = 0, flow_leaf_n = 256;
    double flows[8];
    int no_cuts = 0, pick_exp = 0, ndirs = 4;
    uint32_t metis_above = UINT32_MAX;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = (int)strtol(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--queries") && i + 1 < argc) {
            nq = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--flow") && i + 1 < argc) {
            char *p = argv[++i], *end;
            while (*p && nflows < 8) {
                flows[nflows++] = strtod(p, &end) / 100;
                if (end == p) break;
                p = *end == ',' ? end + 1 : end;
            }
        } else if (!strcmp(argv[i], "--flow-leaf") && i + 1 < argc) {
            flow_leaf_n = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--flow-pick") && i + 1 < argc) {
            pick_exp = !strcmp(argv[++i], "expansion");
        } else if (!strcmp(argv[i], "--flow-dirs") && i + 1 < argc) {
            ndirs = strtol(argv[++i], NULL, 10) == 8 ? 8 : 4;
        } else if (!strcmp(argv[i], "--flow-metis-above") && i + 1 < argc) {
            metis_above = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--no-cuts")) {
            no_cuts = 1;
        } else if (!strcmp(argv[i], "--leaf") && i + 1 < argc) {
            char *p = argv[++i], *end;
            while (*p && nleaves < 8) {
                leaves[nleaves++] = (uint32_t)strtoul(p, &end, 10);
                if (end == p) break;
                p = *end == ',' ? end + 1 : end;
            }
        } else {
            fprintf(stderr, "usage: cch_turn_order [--threads N] [--leaf L,L,..] [--no-cuts] "
                            "[--flow B,B,..] [--flow-leaf L] [--flow-pick smallest|expansion] "
                            "[--flow-dirs 4|8] [--flow-metis-above N] [--queries Q] SPEC...\n");
            return 2;
        }
    }
    if (!nleaves) leaves[nleaves++] = GP_CCH_TURN_LEAF;
    gp_cch_set_max_tri_per_node(0);
    int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL"));
    if (lvl >= 0) gp_log_level = lvl;
    printf("| graph | order | order s | contraction s | CCH edges | triangles | levels | widest "
           "up-degree | CPU customization ms | p2p us | p2p work | distances |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (; i < argc; i++) {
        gp_err err;
        gp_err_clear(&err);
        gp_graph *g = gp_graph_load(argv[i], NULL, &err);
        if (!g) die(argv[i], &err);
        gp_turns *T = gp_turns_build(g, gp_turn_costs_find("car"), &err);
        if (!T) die("turn graph", &err);
        const gp_graph *tg = T->tg;
        const char *slash = strrchr(argv[i], '/');
        char name[160];
        snprintf(name, sizeof name, "%s: %u road nodes, %u arcs; turn graph %u nodes, %u arcs",
                 slash ? slash + 1 : argv[i], g->n, g->m, tg->n, tg->m);
        uint32_t *rank = malloc((size_t)tg->n * sizeof *rank);
        uint32_t *qs = malloc((size_t)nq * 2 * sizeof *qs + 8);
        uint64_t *dist = malloc((size_t)nq * sizeof *dist + 8);
        if (!rank || !qs || !dist) return 2;
        uint64_t seed = 7;
        for (uint32_t q = 0; q < 2 * nq; q++) qs[q] = (uint32_t)(bench_rng(&seed) % tg->n);
        double t0 = gp_now();
        gp_cch_nd_stats st;
        if (gp_cch_order_nd(tg, threads, 0, rank, &st, &err)) die("nd", &err);
        char what[96];
        snprintf(what, sizeof what, "ND on the turn graph (%d threads)", st.threads);
        rc |= measure(name, what, tg, rank, gp_now() - t0, threads, qs, nq, dist, 0);
        for (uint32_t k = 0; k < nleaves && !no_cuts; k++) {
            t0 = gp_now();
            if (gp_cch_order_turns(g, tg, leaves[k], rank, &err)) die("derived", &err);
            snprintf(what, sizeof what, "road cuts, leaf %u (1 thread)",
                     leaves[k] ? leaves[k] : GP_CCH_TURN_LEAF);
            rc |= measure(name, what, tg, rank, gp_now() - t0, threads, qs, nq, dist, 1);
        }
        for (uint32_t k = 0; k < nflows; k++) {
            flow_ctx fc;
            t0 = gp_now();
            order_flow(g, T, flows[k], flow_leaf_n, pick_exp, ndirs, metis_above, rank, &fc);
            double fs = gp_now() - t0;
            if (!is_permutation(rank, tg->n)) {
                fprintf(stderr, "cch_turn_order: the flow order is not a permutation\n");
                return 2;
            }
            fprintf(stderr,
                    "flow b=%.0f%%: %u separators (first %u nodes), %u leaves, %u fallbacks, "
                    "%.1f s\n",
                    flows[k] * 100, fc.seps, fc.top_sep, fc.leaves, fc.fallbacks, fs);
            snprintf(what, sizeof what, "inertial flow, b %.0f%%, %d directions, %s, leaf %u%s",
                     flows[k] * 100, ndirs, pick_exp ? "least expansion" : "smallest cut",
                     flow_leaf_n, metis_above != UINT32_MAX ? ", METIS above" : "");
            rc |= measure(name, what, tg, rank, fs, threads, qs, nq, dist, 1);
        }
        free(rank);
        free(qs);
        free(dist);
        gp_turns_free(T);
        gp_graph_unref(g);
    }
    return rc;
}
