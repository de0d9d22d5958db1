/* cch_turn_order.c - the turn graph's CCH order lab: the nested dissection on the turn graph
 * itself (gp_cch_order_nd, the product's order before) against the order derived from the road
 * graph's edge cuts (gp_cch_order_turns, Buchhold et al. 2020) and Inertial Flow nested
 * dissection (gp_cch_order_nd_flow, engine/cch_flow.c: the service's cch_order = flow), in time
 * and in quality, with the customization and the queries built on each
 * (bench/cpu-cch-turn-order.sh writes bench/results/DATE-MACHINE-cch-turn-order.md).
 *
 *   cch_turn_order [--threads N] [--leaf L,L,..] [--no-cuts] [--flow B,B,..] [--flow-leaf L]
 *                  [--flow-pick smallest|expansion] [--flow-dirs 4|8] [--flow-metis-above N]
 *                  [--flow-refine A] [--nd-refine A] [--queries Q] SPEC...
 *                  (road graphs with coordinates and travel times: OSM files, gen:N)
 *
 * --no-cuts leaves out the derived order's rows; --flow adds one Inertial Flow row per fraction B
 * (percent of the nodes in the source and in the sink set), with parts of at most --flow-leaf
 * nodes (default 256) ordered by METIS_NodeND, 4 (default) or 8 directions, and the cut picked as
 * the smallest (default; ties: the more balanced) or the one of least expansion (separator size
 * over the smaller side's); the whole graph is dissected by flow (one thread), or with
 * --flow-metis-above N only nd's parts of at most N nodes (nd's METIS separators above them, on
 * N threads: the service's cch_order = flow is N = 32768, b 20%, 8 directions, least expansion,
 * leaf 16); --flow-refine A refines those METIS separators by a maximum flow in a corridor of A
 * percent of each side's nodes around them (gp_cch_flow_opts.refine); --nd-refine A adds a row
 * of nd with its own METIS separators so refined (METIS_NodeND leaves). A turn-graph node's
 * coordinates are its road arc's midpoint (gp_turns.xy).
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
    double refine = 0, nd_refine = 0;
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
        } else if (!strcmp(argv[i], "--nd-refine") && i + 1 < argc) {
            nd_refine = strtod(argv[++i], NULL) / 100;
        } else if (!strcmp(argv[i], "--flow-refine") && i + 1 < argc) {
            refine = strtod(argv[++i], NULL) / 100;
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
                            "[--flow-dirs 4|8] [--flow-metis-above N] [--flow-refine A] "
                            "[--nd-refine A] [--queries Q] SPEC...\n");
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
        if (!T || gp_turns_add_xy(T, g, &err)) die("turn graph", &err);
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
        if (nd_refine > 0) { /* nd with its METIS separators refined (no coordinates) */
            gp_cch_flow_opts fo = GP_CCH_FLOW_DEFAULT;
            fo.refine = nd_refine;
            gp_cch_nd_stats rs;
            t0 = gp_now();
            if (gp_cch_order_nd_flow(tg, threads, 0, NULL, &fo, rank, &rs, &err))
                die("nd refined", &err);
            fprintf(stderr, "nd refined: %u METIS splits (%u refined, %llu nodes fewer)\n",
                    rs.splits, rs.refined, (unsigned long long)rs.refine_saved);
            snprintf(what, sizeof what, "ND, separators refined %.0f%% (%d threads)",
                     nd_refine * 100, rs.threads);
            rc |= measure(name, what, tg, rank, gp_now() - t0, threads, qs, nq, dist, 1);
        }
        for (uint32_t k = 0; k < nleaves && !no_cuts; k++) {
            t0 = gp_now();
            if (gp_cch_order_turns(g, tg, leaves[k], rank, &err)) die("derived", &err);
            snprintf(what, sizeof what, "road cuts, leaf %u (1 thread)",
                     leaves[k] ? leaves[k] : GP_CCH_TURN_LEAF);
            rc |= measure(name, what, tg, rank, gp_now() - t0, threads, qs, nq, dist, 1);
        }
        for (uint32_t k = 0; k < nflows; k++) {
            gp_cch_flow_opts fo = {flows[k], ndirs, pick_exp, flow_leaf_n, refine};
            gp_cch_nd_stats fs;
            t0 = gp_now();
            if (gp_cch_order_nd_flow(tg, threads, metis_above, tg->cch_xy, &fo, rank, &fs, &err))
                die("flow order", &err);
            double fsec = gp_now() - t0;
            if (!is_permutation(rank, tg->n)) {
                fprintf(stderr, "cch_turn_order: the flow order is not a permutation\n");
                return 2;
            }
            fprintf(stderr,
                    "flow b=%.0f%%: %u flow separators, %u METIS splits (%u refined, %llu nodes "
                    "fewer), %u parts, %u fallbacks, %.1f s\n",
                    flows[k] * 100, fs.flow_seps, fs.splits, fs.refined,
                    (unsigned long long)fs.refine_saved, fs.leaves, fs.flow_fallbacks, fsec);
            snprintf(what, sizeof what, "inertial flow, b %.0f%%, %d directions, %s, leaf %u%s",
                     flows[k] * 100, ndirs, pick_exp ? "least expansion" : "smallest cut",
                     flow_leaf_n,
                     metis_above == UINT32_MAX ? ""
                     : refine > 0              ? ", METIS above, refined"
                                               : ", METIS above");
            rc |= measure(name, what, tg, rank, fsec, threads, qs, nq, dist, 1);
        }
        free(rank);
        free(qs);
        free(dist);
        gp_turns_free(T);
        gp_graph_unref(g);
    }
    return rc;
}
