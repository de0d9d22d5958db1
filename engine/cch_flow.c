/* cch_flow.c - Inertial Flow nested dissection of one subproblem of the CCH order
 * (gp_cch_flow_part, cch_internal.h; Schild and Sommer, "On Balanced Separators in Road Networks",
 * SEA 2015). gp_cch_order_nd calls it for its leaves when the graph has planar coordinates
 * (gp_graph.cch_xy: a turn graph's arc midpoints) and the order is `flow`; METIS's vertex
 * separators stay above the leaves.
 *
 * A connected part above opts->leaf nodes is split by a minimum node separator: for each of 4 or
 * 8 directions its nodes are sorted by their projection on the line, the first fraction b of them
 * is the source set and the last fraction b the sink set, and a maximum flow with unit node
 * capacities (nodes split into in -> out of capacity 1, edges of unbounded capacity, the source
 * and sink sets contracted to one node each; Dinic) gives a minimum separator between them. Of
 * the two minimum cuts of each flow (nearest the sources, nearest the sinks) the one of least
 * expansion (separator / smaller side) wins, or with least_expansion 0 the smallest (ties: the
 * more balanced). The separator takes the top ranks of the range; the components left below it
 * recurse with contiguous ranges. Parts of at most leaf nodes, and a part no direction can cut (a
 * source next to a sink), are ordered by METIS_NodeND. One thread, deterministic.
 *
 * On the car turn graph of road-like 100k, nd with flow leaves had 27% fewer triangles than nd
 * with METIS_NodeND leaves, after the directed pruning (bench/cch_turn_order --flow).
 */
#include "engine/cch_internal.h"

#include <stdlib.h>
#include <string.h>

#define FLOW_INF (1u << 30)

typedef struct flow_net { /* the residual network of one direction, CSR with reverse arcs */
    uint32_t nn, na;
    uint32_t *first, *head, *rev, *cap, *pos;
    int32_t *level;
    uint32_t *queue, *it, *stack;
} flow_net;

typedef struct proj_key {
    float p;
    uint32_t i;
} proj_key;

static int proj_cmp(const void *a, const void *b) {
    const proj_key *x = a, *y = b;
    if (x->p != y->p) return (x->p > y->p) - (x->p < y->p);
    return (x->i > y->i) - (x->i < y->i);
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

static void net_free(flow_net *f) {
    if (!f) return;
    free(f->first);
    free(f->pos);
    free(f->level);
    free(f->queue);
    free(f->it);
    free(f->stack);
    free(f->head);
    free(f->rev);
    free(f->cap);
}

/* Allocates f for nm inner nodes (in and out each, plus the source 0 and the sink 1) and at
 * most acap arcs; 0, or -1 out of memory (net_free frees what it got). */
static int net_alloc(flow_net *f, uint32_t nm, size_t acap) {
    f->nn = 2 + 2 * nm;
    f->first = malloc(((size_t)f->nn + 1) * sizeof *f->first);
    f->pos = malloc(((size_t)f->nn + 1) * sizeof *f->pos);
    f->level = malloc((size_t)f->nn * sizeof *f->level);
    f->queue = malloc((size_t)f->nn * sizeof *f->queue);
    f->it = malloc((size_t)f->nn * sizeof *f->it);
    f->stack = malloc((size_t)f->nn * sizeof *f->stack);
    f->head = malloc(acap * sizeof *f->head);
    f->rev = malloc(acap * sizeof *f->rev);
    f->cap = malloc(acap * sizeof *f->cap);
    return f->first && f->pos && f->level && f->queue && f->it && f->stack && f->head && f->rev &&
                   f->cap
               ? 0
               : -1;
}

/* The network of the graph (first, adj) of n nodes whose node i is a source (cls 0), a sink (1)
 * or inner (2, number mid[i]): S = 0, T = 1, in(i) = 2 + 2 mid, out(i) = in(i) + 1, a unit arc
 * in -> out per inner node and unbounded arcs along the graph's edges into inner nodes and from
 * inner nodes into sinks. */
static void net_build(flow_net *f, uint32_t n, const uint32_t *first, const uint32_t *adj,
                      const uint8_t *cls, const uint32_t *mid) {
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            for (uint32_t v = 0; v < f->nn; v++) f->first[v + 1] += f->first[v];
            memcpy(f->pos, f->first, ((size_t)f->nn + 1) * sizeof *f->pos);
        } else {
            memset(f->first, 0, ((size_t)f->nn + 1) * sizeof *f->first);
        }
        for (uint32_t i = 0; i < n; i++) {
            if (cls[i] == 2) net_arc(f, pass, 2 + 2 * mid[i], 3 + 2 * mid[i], 1);
            if (cls[i] == 1) continue;
            for (uint32_t e = first[i]; e < first[i + 1]; e++) {
                uint32_t j = adj[e];
                if (cls[j] != 2 && !(cls[i] == 2 && cls[j] == 1)) continue;
                uint32_t u = cls[i] == 0 ? 0 : 3 + 2 * mid[i];
                uint32_t v = cls[j] == 1 ? 1 : 2 + 2 * mid[j];
                net_arc(f, pass, u, v, FLOW_INF);
            }
        }
    }
    f->na = f->first[f->nn];
}

/* After net_reach(f, side): whether inner node i is in the minimum cut nearest the source (side
 * 0) or the sink (side 1); *src: whether it lies on the source's side otherwise. */
static int net_cut(const flow_net *f, int side, uint32_t mid, int *src) {
    const int in = f->level[2 + 2 * mid], out = f->level[3 + 2 * mid];
    const int s = side ? out && !in : in && !out;
    *src = !s && (side ? !out : out);
    return s;
}

/* The inertial-flow separator of the connected graph (lfirst, ladj) of n nodes whose coordinates
 * are xy[2 * gid[i]], xy[2 * gid[i] + 1]: marks sep[i] = 1 and returns its size, 0 when no
 * direction gives one; UINT32_MAX out of memory. */
static uint32_t flow_separator(const gp_cch_flow_opts *o, const float *xy, const uint32_t *gid,
                               uint32_t n, const uint32_t *lfirst, const uint32_t *ladj,
                               uint8_t *sep) {
    static const float dirs[8][2] = {{1, 0},
                                     {0.92387953f, 0.38268343f},
                                     {0.70710678f, 0.70710678f},
                                     {0.38268343f, 0.92387953f},
                                     {0, 1},
                                     {-0.38268343f, 0.92387953f},
                                     {-0.70710678f, 0.70710678f},
                                     {-0.92387953f, 0.38268343f}};
    uint32_t k = (uint32_t)(o->b * n);
    if (k < 1) k = 1;
    if (2 * k >= n) return 0;
    uint32_t nm = n - 2 * k, best_size = UINT32_MAX;
    double best_bal = -1, best_exp = 1e300;
    flow_net f;
    memset(&f, 0, sizeof f);
    proj_key *key = malloc((size_t)n * sizeof *key);
    uint8_t *cls = malloc(n), *best = malloc(n);
    uint32_t *mid = malloc((size_t)n * sizeof *mid);
    uint32_t size = UINT32_MAX;
    if (!key || !cls || !best || !mid || net_alloc(&f, nm, 2 * ((size_t)nm + lfirst[n]) + 2))
        goto out;
    for (int d = 0; d < 8; d += o->ndirs == 8 ? 1 : 2) {
        for (uint32_t i = 0; i < n; i++) {
            key[i].p =
                dirs[d][0] * xy[2 * (size_t)gid[i]] + dirs[d][1] * xy[2 * (size_t)gid[i] + 1];
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
        net_build(&f, n, lfirst, ladj, cls, mid);
        /* a cut beats the best only below its bound: least expansion needs a flow of at most
         * best_exp * n / 2 (the smaller side has at most n / 2 nodes) */
        uint32_t bound = best_size;
        if (o->least_expansion)
            bound = best_exp * n / 2 < UINT32_MAX - 1 ? (uint32_t)(best_exp * n / 2)
                                                      : UINT32_MAX - 1;
        uint32_t flow = net_maxflow(&f, bound);
        if (flow > best_size) continue;
        /* the two minimum cuts: nearest the sources (forward reach) and nearest the sinks */
        for (int side = 0; side < 2; side++) {
            net_reach(&f, side);
            uint32_t ns = 0, na = k; /* separator, nodes on the source side */
            for (uint32_t i = 0; i < n; i++) {
                int src = 0;
                if (cls[i] == 2) ns += net_cut(&f, side, mid[i], &src), na += src;
            }
            if (ns != flow) continue; /* not a minimum cut (cannot happen): not taken */
            uint32_t rest = n - ns, small = na < rest - na ? na : rest - na;
            double bal = rest ? (double)small / rest : 0;
            double ex = small ? (double)ns / small : 1e300;
            if (o->least_expansion ? ex < best_exp
                                   : ns < best_size || (ns == best_size && bal > best_bal)) {
                best_exp = ex;
                best_size = ns;
                best_bal = bal;
                for (uint32_t i = 0; i < n; i++) {
                    int src;
                    best[i] = cls[i] == 2 && net_cut(&f, side, mid[i], &src);
                }
            }
        }
    }
    size = best_size == UINT32_MAX ? 0 : best_size;
    if (size) memcpy(sep, best, n);
out:
    free(key);
    free(cls);
    free(best);
    free(mid);
    net_free(&f);
    return size;
}

/* Corridor refinement of a separator (gp_cch_flow_refine, cch_internal.h): the sides are the
 * components of the rest, heaviest first, each to the lighter side; the corridor is the
 * separator and, on each side, the nodes nearest it (breadth-first layers) up to a fraction
 * alpha of that side's nodes; the rest of each side is contracted to the source (side 0) or the
 * sink (side 1), and a maximum flow with unit node capacities gives a minimum separator inside
 * the corridor, of which the more balanced of the two minimum cuts is taken when it is smaller
 * than the given one. */
uint32_t gp_cch_flow_refine(uint32_t n, const uint32_t *first, const uint32_t *adj, uint8_t *sep,
                            double alpha) {
    uint32_t ns0 = 0, nc = 0, res = UINT32_MAX;
    for (uint32_t v = 0; v < n; v++) ns0 += sep[v] != 0;
    if (!ns0 || ns0 >= n) return ns0;
    uint32_t *comp = malloc(((size_t)n + 1) * sizeof *comp);
    uint32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
    uint32_t *dist = malloc(((size_t)n + 1) * sizeof *dist);
    uint32_t *cnt = NULL, *ord = NULL, *mid = NULL;
    uint8_t *side = NULL, *cls = NULL;
    flow_net f;
    memset(&f, 0, sizeof f);
    if (!comp || !queue || !dist) goto out;
    for (uint32_t v = 0; v < n; v++) comp[v] = sep[v] ? GP_NONE - 1 : GP_NONE;
    for (uint32_t r = 0; r < n; r++) { /* components of the rest; their sizes in dist[c] */
        if (comp[r] != GP_NONE) continue;
        uint32_t qh = 0, qt = 0;
        queue[qt++] = r;
        comp[r] = nc;
        while (qh < qt)
            for (uint32_t k = first[queue[qh]], u = queue[qh++]; k < first[u + 1]; k++)
                if (comp[adj[k]] == GP_NONE) comp[adj[k]] = nc, queue[qt++] = adj[k];
        dist[nc++] = qt;
    }
    if (nc < 2) {
        res = ns0;
        goto out;
    }
    cnt = malloc((size_t)nc * sizeof *cnt);
    ord = malloc((size_t)nc * sizeof *ord);
    side = malloc(nc);
    if (!cnt || !ord || !side) goto out;
    memcpy(cnt, dist, (size_t)nc * sizeof *cnt);
    for (uint32_t c = 0; c < nc; c++) ord[c] = c;
    for (uint32_t c = 1; c < nc; c++) { /* heaviest first (insertion sort: few components) */
        uint32_t x = ord[c], i = c;
        while (i && cnt[ord[i - 1]] < cnt[x]) ord[i] = ord[i - 1], i--;
        ord[i] = x;
    }
    uint64_t tot[2] = {0, 0};
    for (uint32_t i = 0; i < nc; i++) {
        const int sd = tot[1] < tot[0];
        side[ord[i]] = (uint8_t)sd;
        tot[sd] += cnt[ord[i]];
    }
    /* layers from the separator; a side's corridor: whole layers while within alpha of it */
    uint32_t qh = 0, qt = 0;
    for (uint32_t v = 0; v < n; v++) {
        dist[v] = sep[v] ? 0 : GP_NONE;
        if (sep[v]) queue[qt++] = v;
    }
    while (qh < qt)
        for (uint32_t k = first[queue[qh]], u = queue[qh++]; k < first[u + 1]; k++)
            if (dist[adj[k]] == GP_NONE) dist[adj[k]] = dist[u] + 1, queue[qt++] = adj[k];
    uint32_t depth[2] = {0, 0};
    for (int sd = 0; sd < 2; sd++) { /* queue holds the nodes by layer */
        const uint64_t cap = (uint64_t)(alpha * (double)tot[sd]);
        uint64_t in = 0;
        uint32_t i = ns0;
        while (i < qt) {
            const uint32_t d = dist[queue[i]];
            uint64_t layer = 0;
            uint32_t e = i;
            for (; e < qt && dist[queue[e]] == d; e++) layer += side[comp[queue[e]]] == sd;
            if (in + layer > cap) break;
            in += layer, depth[sd] = d, i = e;
        }
    }
    /* cls: 0 source (side 0 beyond its corridor), 1 sink, 2 in the corridor */
    cls = malloc(n);
    mid = malloc(((size_t)n + 1) * sizeof *mid);
    if (!cls || !mid) goto out;
    uint32_t nm = 0, nsrc = 0;
    for (uint32_t v = 0; v < n; v++) {
        const int sd = sep[v] ? -1 : side[comp[v]];
        cls[v] = sd < 0 || dist[v] <= depth[sd] ? 2 : (uint8_t)sd;
        mid[v] = cls[v] == 2 ? nm++ : GP_NONE;
        nsrc += cls[v] == 0;
    }
    if (!nsrc || nsrc + nm == n) { /* a side entirely in the corridor: nothing to cut from */
        res = ns0;
        goto out;
    }
    if (net_alloc(&f, nm, 2 * ((size_t)nm + first[n]) + 2)) goto out;
    net_build(&f, n, first, adj, cls, mid);
    const uint32_t flow = net_maxflow(&f, ns0);
    res = ns0;
    if (flow >= ns0) goto out;
    /* the two minimum cuts: nearest the source, nearest the sink; the more balanced */
    double best_bal = -1;
    int best_side = -1;
    for (int sd = 0; sd < 2; sd++) {
        net_reach(&f, sd);
        uint32_t cut = 0, na = nsrc;
        for (uint32_t v = 0; v < n; v++) {
            int src = 0;
            if (cls[v] == 2) cut += net_cut(&f, sd, mid[v], &src), na += src;
        }
        if (cut != flow) continue;
        const uint32_t rest = n - cut, small = na < rest - na ? na : rest - na;
        const double bal = rest ? (double)small / rest : 0;
        if (bal > best_bal) best_bal = bal, best_side = sd;
    }
    if (best_side < 0) goto out;
    net_reach(&f, best_side);
    for (uint32_t v = 0; v < n; v++) {
        int src;
        sep[v] = cls[v] == 2 && net_cut(&f, best_side, mid[v], &src);
    }
    res = flow;
out:
    free(comp);
    free(queue);
    free(dist);
    free(cnt);
    free(ord);
    free(side);
    free(cls);
    free(mid);
    net_free(&f);
    return res;
}

typedef struct flow_sub {
    uint32_t *nodes; /* local ids of the part's nodes */
    uint32_t n, lo;
} flow_sub;

int gp_cch_flow_part(uint32_t n, const uint32_t *first, const uint32_t *adj, const uint32_t *gid,
                     const float *xy, const gp_cch_flow_opts *o, uint32_t lo, uint32_t *rank,
                     uint32_t *nseps, uint32_t *nfallbacks, gp_err *err) {
    uint32_t nstack = 1, cap = 64, seps = 0, fallbacks = 0;
    int rc = GP_OK;
    flow_sub *stack = malloc(cap * sizeof *stack);
    uint32_t *loc = malloc(((size_t)n + 1) * sizeof *loc);
    uint32_t *lfirst = malloc(((size_t)n + 1) * sizeof *lfirst);
    uint32_t *ladj = malloc(((size_t)first[n] + 1) * sizeof *ladj);
    uint32_t *lgid = malloc(((size_t)n + 1) * sizeof *lgid);
    uint32_t *comp = malloc(((size_t)n + 1) * sizeof *comp);
    uint32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
    uint32_t *cnt = malloc(((size_t)n + 1) * sizeof *cnt);
    uint8_t *sep = malloc((size_t)n + 1);
    if (stack) stack[0].nodes = malloc(((size_t)n + 1) * sizeof *stack[0].nodes);
    if (!stack || !stack[0].nodes || !loc || !lfirst || !ladj || !lgid || !comp || !queue || !cnt ||
        !sep) {
        if (stack) free(stack[0].nodes);
        nstack = 0;
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the flow order of %u nodes", n);
        goto done;
    }
    for (uint32_t v = 0; v < n; v++) stack[0].nodes[v] = v, loc[v] = GP_NONE;
    stack[0].n = n;
    stack[0].lo = lo;
    while (nstack && rc == GP_OK) {
        flow_sub s = stack[--nstack];
        uint32_t sn = s.n;
        for (uint32_t i = 0; i < sn; i++) loc[s.nodes[i]] = i, lgid[i] = gid[s.nodes[i]];
        uint32_t e = 0; /* the induced local CSR */
        for (uint32_t i = 0; i < sn; i++) {
            lfirst[i] = e;
            uint32_t v = s.nodes[i];
            for (uint32_t k = first[v]; k < first[v + 1]; k++)
                if (loc[adj[k]] != GP_NONE) ladj[e++] = loc[adj[k]];
        }
        lfirst[sn] = e;
        for (uint32_t i = 0; i < sn; i++) loc[s.nodes[i]] = GP_NONE;
        for (uint32_t i = 0; i < sn; i++) sep[i] = 0;
        uint32_t nsep = 0, top = s.lo + sn;
        int whole = sn <= o->leaf || e == 0; /* ordered by METIS_NodeND */
        if (!whole) { /* a separator when connected (else just its components) */
            uint32_t qt = 1, qh = 0;
            for (uint32_t i = 0; i < sn; i++) comp[i] = GP_NONE;
            queue[0] = 0;
            comp[0] = 0;
            while (qh < qt)
                for (uint32_t k = lfirst[queue[qh]], u = queue[qh++]; k < lfirst[u + 1]; k++)
                    if (comp[ladj[k]] == GP_NONE) comp[ladj[k]] = 0, queue[qt++] = ladj[k];
            if (qt == sn) {
                nsep = flow_separator(o, xy, lgid, sn, lfirst, ladj, sep);
                if (nsep == UINT32_MAX) {
                    free(s.nodes);
                    rc = gp_err_set(err, GP_ENOMEM, "out of memory for a flow separator");
                    break;
                }
                if (!nsep) whole = 1, fallbacks++;
                else seps++;
            }
        }
        if (whole) {
            if (sn < 3 || e == 0)
                for (uint32_t i = 0; i < sn; i++) rank[lgid[i]] = s.lo + i;
            else rc = gp_cch_nodend(sn, lfirst, ladj, lgid, s.lo, rank, err);
            free(s.nodes);
            continue;
        }
        for (uint32_t i = 0; i < sn; i++)
            if (sep[i]) rank[lgid[i]] = --top;
        /* components of the rest, each a part with a contiguous range from s.lo */
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
            uint32_t nc2 = cap;
            while (nstack + nc > nc2) nc2 *= 2;
            flow_sub *ns = realloc(stack, nc2 * sizeof *stack);
            if (!ns) {
                free(s.nodes);
                rc = gp_err_set(err, GP_ENOMEM, "out of memory for the flow order");
                break;
            }
            stack = ns;
            cap = nc2;
        }
        uint32_t at = s.lo, base = nstack;
        for (uint32_t c = 0; c < nc; c++) {
            stack[base + c].nodes = malloc(((size_t)cnt[c] + 1) * sizeof *stack[0].nodes);
            stack[base + c].n = 0;
            stack[base + c].lo = at;
            at += cnt[c];
            if (!stack[base + c].nodes) rc = GP_ENOMEM;
        }
        nstack += nc;
        if (rc != GP_OK) {
            free(s.nodes);
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the flow order");
            break;
        }
        for (uint32_t i = 0; i < sn; i++)
            if (!sep[i]) {
                flow_sub *p = &stack[base + comp[i]];
                p->nodes[p->n++] = s.nodes[i];
            }
        free(s.nodes);
    }
done:
    while (nstack) free(stack[--nstack].nodes);
    free(stack);
    free(loc);
    free(lfirst);
    free(ladj);
    free(lgid);
    free(comp);
    free(queue);
    free(cnt);
    free(sep);
    if (nseps) *nseps = seps;
    if (nfallbacks) *nfallbacks = fallbacks;
    return rc;
}
