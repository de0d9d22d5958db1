/* bench_netops.c - routing tables (APSP + ECMP next-hop sets) for every router, and cost-change
 * recompute strategies (incremental vs full), on real and generated router topologies.
 *
 *   bench_netops [--backend auto|cpu|cuda] [--reps N] [--changes N] [--check 0|1] GRAPH_SPEC...
 * A spec "router:N[:SEED]" generates a router-like topology (below); anything else goes to
 * gp_graph_load. Prints one markdown table row per graph: routers, arcs, median APSP ms, median
 * ECMP ms, median total, then for single-link cost increases / decreases / link downs the median
 * ms of the incremental and the full strategy (each checked equal to the other), and the winner.
 * With --check 1 (default) the tables are also compared with the CPU backend's (on a GPU machine:
 * GPU all-pairs against CPU Dijkstra); any difference fails the run.
 *
 * Router-like generator: a ring backbone of sqrt(N) core routers with chords, each remaining
 * router dual-homed to two cores or aggregation routers, OSPF-like costs from {1, 2, 5, 10, 20,
 * 100} (so there are equal-cost paths to find), deterministic for (N, SEED).
 */
#include "engine/change.h"
#include "engine/ecmp.h"
#include "storage/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static gp_graph *gen_router(uint32_t n, uint64_t seed, gp_err *err) {
    static const uint32_t costs[] = {1, 2, 5, 10, 10, 10, 20, 100};
    gp_builder *b = gp_builder_new(1.0);
    if (!b) return NULL;
    uint32_t core = (uint32_t)sqrt((double)n);
    if (core < 3) core = 3;
    uint64_t s = seed * 7919 + n;
    for (uint32_t v = 0; v < n; v++) gp_builder_add_node(b, v, 0, 0, 0, NULL, err);
#define LINK(a, c_)                                                                                \
    do {                                                                                           \
        uint32_t w_ = (c_);                                                                        \
        gp_builder_add_arc(b, (a), v, w_, err);                                                    \
        gp_builder_add_arc(b, v, (a), w_, err);                                                    \
    } while (0)
    for (uint32_t v = 0; v < core && v < n; v++) {
        if (v) LINK(v - 1, 10);
        if (v > 2 && rng(&s) % 3 == 0) LINK((uint32_t)(rng(&s) % (v - 1)), costs[rng(&s) % 8]);
    }
    if (core < n) {
        uint32_t v = core - 1;
        LINK(0, 10);
    }
    for (uint32_t v = core; v < n; v++) {
        uint32_t a = (uint32_t)(rng(&s) % v), c = (uint32_t)(rng(&s) % v);
        uint32_t w = costs[rng(&s) % 8];
        LINK(a, w);
        if (c != a) LINK(c, w);
    }
#undef LINK
    return gp_builder_finish(b, "router-gen", "gen", 0, err);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n ? v[n / 2] : 0;
}

/* The last two path components ("1239/weights.intra", "graphml/Kdl.graphml"). */
static const char *short_name(const char *spec) {
    const char *p = spec + strlen(spec);
    int slashes = 0;
    while (p > spec && !(p[-1] == '/' && ++slashes == 2)) p--;
    return p;
}

static int same_tables(const gp_rt *a, const gp_rt *b) {
    gp_rt_pair *p = NULL;
    size_t np = 1;
    gp_err err;
    if (gp_rt_diff(a, b, &p, &np, &err) != GP_OK) return 0;
    free(p);
    return np == 0;
}

int main(int argc, char **argv) {
    const char *backend = "auto";
    int reps = 5, changes = 5, check = 1;
    gp_err err;
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (first + 1 >= argc) break;
        if (strcmp(argv[first], "--backend") == 0) backend = argv[first + 1];
        else if (strcmp(argv[first], "--reps") == 0) reps = (int)strtol(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--changes") == 0)
            changes = (int)strtol(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--check") == 0)
            check = (int)strtol(argv[first + 1], NULL, 10);
    }
    if (reps < 1) reps = 1;
    gp_engine *e = gp_engine_new(backend, 0, NULL, &err);
    if (!e) {
        fprintf(stderr, "bench_netops: %s\n", err.msg);
        return 1;
    }
    gp_engine *cpu = check ? gp_engine_new("cpu", 0, NULL, &err) : NULL;
    printf("backend: %s%s\n\n", gp_engine_backend(e),
           cpu ? " (tables checked against the CPU backend)" : "");
    printf(
        "| graph | routers | arcs | APSP ms | ECMP ms | total ms | cost up: incr / full ms (rows) "
        "| cost down: incr / full ms | link down: incr / full ms | winner |\n");
    printf("|---|---:|---:|---:|---:|---:|---|---|---|---|\n");
    int rc = 0;
    for (int a = first; a < argc; a++) {
        gp_graph *g = NULL;
        unsigned long long n, seed = 1;
        if (sscanf(argv[a], "router:%llu:%llu", &n, &seed) >= 1)
            g = gen_router((uint32_t)n, seed, &err);
        else g = gp_graph_load(argv[a], NULL, &err);
        if (!g || gp_engine_attach(e, g, &err) != GP_OK) {
            fprintf(stderr, "bench_netops: %s: %s\n", argv[a], err.msg);
            gp_graph_unref(g);
            rc = 1;
            continue;
        }
        double *ta = calloc((size_t)reps, sizeof *ta), *te = calloc((size_t)reps, sizeof *te),
               *tt = calloc((size_t)reps, sizeof *tt);
        gp_rt *t = NULL;
        for (int r = 0; r < reps + 1; r++) { /* first run warms up (device upload, page faults) */
            gp_rt_free(t);
            t = NULL;
            double t0 = gp_now();
            if (gp_rt_build(e, g, 0, 0, 0, &t, &err) != GP_OK) {
                fprintf(stderr, "bench_netops: %s: %s\n", argv[a], err.msg);
                rc = 1;
                break;
            }
            if (r)
                ta[r - 1] = t->apsp_s * 1e3, te[r - 1] = t->ecmp_s * 1e3,
                       tt[r - 1] = (gp_now() - t0) * 1e3;
        }
        if (!t) goto next;
        if (cpu) {
            gp_rt *tc = NULL;
            if (gp_rt_build(cpu, g, 0, 0, 0, &tc, &err) != GP_OK || !same_tables(t, tc)) {
                fprintf(stderr, "bench_netops: %s: tables differ from the CPU backend's%s%s\n",
                        argv[a], tc ? "" : ": ", tc ? "" : err.msg);
                rc = 1;
            }
            gp_rt_free(tc);
        }
        /* cost changes on random links: up x4, down to 1, down (removed) */
        double inc_i[3][64], inc_f[3][64];
        uint64_t rows[3] = {0};
        int nc = changes > 64 ? 64 : changes, bad = 0;
        uint64_t s = 12345;
        for (int kind = 0; kind < 3; kind++)
            for (int c = 0; c < nc; c++) {
                uint32_t u;
                do u = (uint32_t)(rng(&s) % g->n);
                while (t->nb_off[u + 1] == t->nb_off[u]);
                uint32_t k = t->nb_off[u] + (uint32_t)(rng(&s) % (t->nb_off[u + 1] - t->nb_off[u]));
                gp_link_change ch = {.u = g->ext[u],
                                     .v = g->ext[t->nb[k]],
                                     .down = kind == 2,
                                     .cost = kind == 0 ? gp_graph_cost(g, t->nbw[k]) * 4 + 1 : 1};
                gp_graph *g2 = NULL;
                gp_rt *ti = NULL, *tf = NULL;
                gp_rt_update_stats st;
                if (gp_engine_change_links(e, g, &ch, 1, NULL, 0, &g2, NULL, &err) != GP_OK ||
                    gp_rt_update(e, t, g2, GP_RT_INCREMENTAL, 0, &ti, &st, &err) != GP_OK) {
                    fprintf(stderr, "bench_netops: change: %s\n", err.msg);
                    bad = 1;
                } else {
                    inc_i[kind][c] = st.seconds * 1e3;
                    rows[kind] += st.rows_recomputed;
                    if (gp_rt_update(e, t, g2, GP_RT_FULL, 0, &tf, &st, &err) != GP_OK) bad = 1;
                    else inc_f[kind][c] = st.seconds * 1e3;
                    if (tf && !same_tables(ti, tf)) {
                        fprintf(stderr, "bench_netops: incremental != full on %s\n", argv[a]);
                        bad = 1;
                    }
                }
                gp_rt_free(ti);
                gp_rt_free(tf);
                gp_graph_unref(g2);
            }
        if (bad) rc = 1;
        double mi[3], mf[3];
        int inc_wins = 0;
        for (int kind = 0; kind < 3; kind++) {
            mi[kind] = median(inc_i[kind], nc);
            mf[kind] = median(inc_f[kind], nc);
            inc_wins += mi[kind] < mf[kind];
        }
        printf("| %s | %u | %u | %.2f | %.2f | %.2f | %.2f / %.2f (%.0f rows) | %.2f / %.2f | "
               "%.2f / %.2f | %s |\n",
               short_name(argv[a]), g->n, g->m, median(ta, reps), median(te, reps),
               median(tt, reps), mi[0], mf[0], nc ? (double)rows[0] / nc : 0, mi[1], mf[1], mi[2],
               mf[2],
               inc_wins == 3 ? "incremental (all 3)"
               : inc_wins    ? "mixed"
                             : "full");
        fflush(stdout);
    next:
        gp_rt_free(t);
        free(ta);
        free(te);
        free(tt);
        gp_graph_unref(g);
    }
    gp_engine_free(cpu);
    gp_engine_free(e);
    return rc;
}
