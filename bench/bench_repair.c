/* bench_repair.c - LFA and TI-LFA repair paths for every router (engine/repair.h): base all-pairs
 * distances on the chosen backend (the GPU's APSP with cuda) plus the post-convergence trees on
 * all CPU threads, on real and generated router topologies.
 *
 *   bench_repair [--backend auto|cpu|cuda] [--reps N] [--threads N] [--check 0|1] GRAPH_SPEC...
 * A spec "routers:N:L[:SEED]" generates N routers and L links (below); anything else goes to
 * gp_graph_load. Prints one markdown table row per graph: routers, links, median ms of the base
 * APSP, of the repairs of every router (repair lists computed for all routers, link and node
 * protection, then dropped: 10,000 routers would hold 10^8 rows) and of both together, the trees grown, the rows and the
 * network coverage. With --check 1 the distances are compared with the CPU backend's first and
 * the repairs' coverage with a run on them; any difference fails the run.
 *
 * Generator: a ring through all N routers (2-connected), then L - N random chords between distinct
 * routers not yet joined, OSPF-like costs from {1, 2, 5, 10, 10, 10, 20, 100}; deterministic for
 * (N, L, SEED).
 */
#include "engine/repair.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static gp_graph *gen_links(uint32_t n, uint64_t links, uint64_t seed, gp_err *err) {
    static const uint32_t costs[] = {1, 2, 5, 10, 10, 10, 20, 100};
    gp_builder *b = gp_builder_new(1.0);
    if (!b || n < 3) return NULL;
    uint64_t s = seed * 7919 + n;
    for (uint32_t v = 0; v < n; v++) gp_builder_add_node(b, v, 0, 0, 0, NULL, err);
    uint64_t *seen = calloc(((uint64_t)n * n + 63) / 64, sizeof *seen);
    if (!seen) return NULL;
    uint64_t made = 0;
    for (uint64_t tries = 0; made < links && tries < links * 20; tries++) {
        uint32_t u, v;
        if (made < n) u = (uint32_t)made, v = (uint32_t)((made + 1) % n);
        else u = (uint32_t)(mix(&s) % n), v = (uint32_t)(mix(&s) % n);
        if (u == v) continue;
        uint64_t k = u < v ? (uint64_t)u * n + v : (uint64_t)v * n + u;
        if (seen[k / 64] >> (k % 64) & 1) continue;
        seen[k / 64] |= 1ULL << (k % 64);
        uint32_t w = made < n ? 10 : costs[mix(&s) % 8];
        gp_builder_add_arc(b, u, v, w, err);
        gp_builder_add_arc(b, v, u, w, err);
        made++;
    }
    free(seen);
    return gp_builder_finish(b, "router-gen", "gen", 0, err);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int same_cov(const gp_repair_cov *a, const gp_repair_cov *b) {
    return a->dests == b->dests && a->lfa_link == b->lfa_link && a->tilfa_link == b->tilfa_link &&
           a->node_dests == b->node_dests && a->lfa_node == b->lfa_node &&
           a->tilfa_node == b->tilfa_node;
}

int main(int argc, char **argv) {
    const char *backend = "auto";
    int reps = 3, check = 1, threads = 0;
    gp_err err;
    int first = 1;
    for (; first + 1 < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        long v = strtol(argv[first + 1], NULL, 10);
        if (strcmp(argv[first], "--backend") == 0) backend = argv[first + 1];
        else if (strcmp(argv[first], "--reps") == 0) reps = (int)v;
        else if (strcmp(argv[first], "--check") == 0) check = (int)v;
        else if (strcmp(argv[first], "--threads") == 0) threads = (int)v;
    }
    if (reps < 1) reps = 1;
    gp_engine *e = gp_engine_new(backend, 0, NULL, &err);
    if (!e) {
        fprintf(stderr, "bench_repair: %s\n", err.msg);
        return 1;
    }
    gp_engine *cpu = check ? gp_engine_new("cpu", 0, NULL, &err) : NULL;
    printf("backend: %s%s\n\n", gp_engine_backend(e),
           cpu ? " (distances and coverage checked against the CPU backend)" : "");
    printf("| graph | routers | links | APSP ms | repairs ms | total ms | trees | rows | LFA link "
           "| TI-LFA link | LFA node | TI-LFA node |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int rc = 0;
    for (int a = first; a < argc; a++) {
        unsigned long long n, l, seed = 1;
        gp_graph *g = sscanf(argv[a], "routers:%llu:%llu:%llu", &n, &l, &seed) >= 2
                          ? gen_links((uint32_t)n, l, seed, &err)
                          : gp_graph_load(argv[a], NULL, &err);
        if (!g || gp_engine_attach(e, g, &err) != GP_OK) {
            fprintf(stderr, "bench_repair: %s: %s\n", argv[a], err.msg);
            gp_graph_unref(g);
            rc = 1;
            continue;
        }
        double *ta = calloc((size_t)reps, sizeof *ta), *tr = calloc((size_t)reps, sizeof *tr),
               *tt = calloc((size_t)reps, sizeof *tt);
        gp_rt *t = NULL;
        gp_repair *rep = NULL;
        /* every router's repair lists computed; none kept (10,000 routers hold ~10^8 rows) */
        uint8_t *none = calloc((size_t)g->n + 1, 1);
        gp_repair_opts o = {
            .threads = threads, .node_protection = 1, .keep = none, .lists_for_all = 1};
        for (int r = 0; r < reps + 1 && ta && tr && tt; r++) { /* run 0 warms up */
            gp_rt_free(t);
            gp_repair_free(rep);
            t = NULL;
            rep = NULL;
            double t0 = gp_now();
            if (gp_rt_build(e, g, 0, 0, 0, &t, &err) != GP_OK) break;
            double t1 = gp_now();
            if (gp_repair_compute(t, &o, &rep, &err) != GP_OK) break;
            double t2 = gp_now();
            if (r)
                ta[r - 1] = (t1 - t0) * 1e3, tr[r - 1] = (t2 - t1) * 1e3,
                       tt[r - 1] = (t2 - t0) * 1e3;
        }
        if (!rep) {
            fprintf(stderr, "bench_repair: %s: %s\n", argv[a], err.msg);
            rc = 1;
        } else {
            if (cpu) {
                gp_rt *tc = NULL;
                gp_repair *rc2 = NULL;
                int same = gp_rt_build(cpu, g, 0, 0, 0, &tc, &err) == GP_OK &&
                           memcmp(tc->dist, t->dist, (size_t)g->n * g->n * sizeof *t->dist) == 0 &&
                           gp_repair_compute(tc, &o, &rc2, &err) == GP_OK &&
                           same_cov(&rc2->total, &rep->total);
                gp_repair_free(rc2);
                gp_rt_free(tc);
                if (!same) {
                    fprintf(stderr, "bench_repair: %s: differs from the CPU backend\n", argv[a]);
                    rc = 1;
                }
            }
            uint64_t rows = rep->rows;
            qsort(ta, (size_t)reps, sizeof *ta, cmp_d);
            qsort(tr, (size_t)reps, sizeof *tr, cmp_d);
            qsort(tt, (size_t)reps, sizeof *tt, cmp_d);
            const gp_repair_cov *c = &rep->total;
            printf(
                "| %s | %u | %llu | %.1f | %.1f | %.1f | %llu | %llu | %.1f%% | %.1f%% | %.1f%% | "
                "%.1f%% |\n",
                strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a], g->n,
                (unsigned long long)(g->m / 2), ta[reps / 2], tr[reps / 2], tt[reps / 2],
                (unsigned long long)rep->spf_runs, (unsigned long long)rows,
                100.0 * c->lfa_link / (c->dests ? c->dests : 1),
                100.0 * c->tilfa_link / (c->dests ? c->dests : 1),
                100.0 * c->lfa_node / (c->node_dests ? c->node_dests : 1),
                100.0 * c->tilfa_node / (c->node_dests ? c->node_dests : 1));
            fflush(stdout);
        }
        gp_repair_free(rep);
        gp_rt_free(t);
        free(ta);
        free(tr);
        free(tt);
        free(none);
        gp_graph_unref(g);
    }
    gp_engine_free(cpu);
    gp_engine_free(e);
    return rc;
}
