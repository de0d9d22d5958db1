/* bench_planning.c - exhaustive failure analysis with a full random demand matrix: every single
 * link and every single router failed in turn, ECMP link loads under each (engine/planning.h),
 * the incremental and the full strategy on the same scenarios (results checked equal), and the
 * base-load pass on the GPU against the CPU (kernels/planload.cu) when a device is present, and
 * the gpu strategy on every scenario (at most --gpu-max of each kind; checked equal to the
 * incremental results of the scenarios both ran; "-" without a device).
 *
 *   bench_planning [--backend auto|cpu|cuda] [--max-scenarios N] [--full-max N] [--threads T]
 *                  [--seconds S] [--gpu-max N] GRAPH_SPEC...
 * A spec "mesh:N:LINKS[:SEED]" generates a router network of N routers and LINKS links (a ring
 * plus random chords, OSPF-like costs from {1, 2, 5, 10, 20, 100}, 10 Gbit/s each); anything else
 * goes to gp_graph_load (links without a capacity get 10 Gbit/s). Demands: every ordered pair of
 * routers, a volume uniform in [0, 10) Mbit/s (seeded). Scenarios past --max-scenarios of each kind
 * are not run, nor those left when a strategy has used --seconds (default 60; the full strategy
 * half of it): the time for all of them is extrapolated from those that ran (marked "est."); the
 * full strategy runs at most --full-max scenarios of each kind. One markdown row per graph
 * and kind.
 */
#include "engine/planning.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gp_graph *gen_mesh(uint32_t n, uint32_t links, uint64_t seed, gp_err *err) {
    static const uint32_t costs[] = {1, 2, 5, 10, 10, 10, 20, 100};
    gp_builder *b = gp_builder_new(1.0);
    if (!b) return NULL;
    uint64_t s = seed * 7919 + n;
    for (uint32_t v = 0; v < n; v++) gp_builder_add_node(b, v, 0, 0, 0, NULL, err);
    for (uint32_t k = 0; k < links; k++) {
        uint32_t u = k < n ? k : (uint32_t)(gp_splitmix64(&s) % n);
        uint32_t v = k < n ? (k + 1) % n : (uint32_t)(gp_splitmix64(&s) % n);
        if (u == v) v = (u + 1) % n;
        uint32_t w = costs[gp_splitmix64(&s) % 8];
        gp_builder_add_arc(b, u, v, w, err);
        gp_builder_add_arc(b, v, u, w, err);
    }
    return gp_builder_finish(b, "mesh-gen", "gen", 0, err);
}

/* Runs scenarios sc[0 .. *n) in growing chunks (8, 16, 32, ...) until budget seconds have gone;
 * *n becomes the number run, *per the seconds per scenario (the base-load pass of each call
 * excluded). 1 on success. */
static int timed(gp_engine *e, const gp_rt *t, const gp_demands *d, const double *cap,
                 const gp_fail *sc, size_t *n, int strategy, int threads, double budget,
                 gp_scenario_result *res, double *per, gp_err *err) {
    size_t done = 0, chunk = 8;
    double spent = 0;
    while (done < *n && (done == 0 || spent < budget)) {
        size_t k = *n - done < chunk ? *n - done : chunk;
        gp_plan_stats st = {0};
        if (gp_plan_failures(e, t, d, cap, sc + done, k, strategy, threads, res + done, NULL, &st,
                             err) != GP_OK)
            return 0;
        spent += st.seconds - st.base_s;
        done += k;
        chunk *= 2;
    }
    *n = done;
    *per = done ? spent / (double)done : 0;
    return 1;
}

static const char *short_name(const char *spec) {
    const char *p = spec + strlen(spec);
    int slashes = 0;
    while (p > spec && !(p[-1] == '/' && ++slashes == 2)) p--;
    return p;
}

static int same(const gp_scenario_result *a, const gp_scenario_result *b, double tot) {
    double eps = 1e-9 * (tot + 1);
    return a->changed_pairs == b->changed_pairs && a->disconnected_pairs == b->disconnected_pairs &&
           (a->worst_utilization - b->worst_utilization) < 1e-9 &&
           (b->worst_utilization - a->worst_utilization) < 1e-9 &&
           (a->unrouted_volume - b->unrouted_volume) < eps &&
           (b->unrouted_volume - a->unrouted_volume) < eps;
}

int main(int argc, char **argv) {
    const char *backend = "auto";
    size_t max_scen = 1000000, full_max = 200, gpu_max = 1000000;
    double budget = 60;
    int threads = 0, first = 1, rc = 0;
    for (; first + 1 < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (strcmp(argv[first], "--backend") == 0) backend = argv[first + 1];
        else if (strcmp(argv[first], "--max-scenarios") == 0)
            max_scen = strtoull(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--full-max") == 0)
            full_max = strtoull(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--threads") == 0)
            threads = (int)strtol(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--seconds") == 0) budget = strtod(argv[first + 1], NULL);
        else if (strcmp(argv[first], "--gpu-max") == 0)
            gpu_max = strtoull(argv[first + 1], NULL, 10);
    }
    gp_err err;
    gp_engine *e = gp_engine_new(backend, 0, NULL, &err);
    if (!e) {
        fprintf(stderr, "bench_planning: %s\n", err.msg);
        return 1;
    }
    printf("Backend for the routing tables: %s; failure scenarios on %d CPU threads.\n\n",
           gp_engine_backend(e), threads ? threads : gp_cpu_count());
    printf(
        "| graph | routers | links | kind | scenarios | tables ms | base load CPU ms | base load "
        "GPU ms | incremental s (all) | scen/s | full s (all) | scen/s | GPU s (all) | kernel s | "
        "touched / scenario | scen/s | auto picks | equal |\n");
    printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
           "---: | "
           "---: | ---: | ---: | --- | --- |\n");
    fflush(stdout);
    for (int a = first; a < argc; a++) {
        unsigned long long n = 0, nl = 0, seed = 1;
        gp_graph *g;
        if (sscanf(argv[a], "mesh:%llu:%llu:%llu", &n, &nl, &seed) >= 2)
            g = gen_mesh((uint32_t)n, (uint32_t)nl, seed, &err);
        else g = gp_graph_load(argv[a], NULL, &err);
        if (!g) {
            fprintf(stderr, "bench_planning: %s: %s\n", argv[a], err.msg);
            rc = 1;
            continue;
        }
        gp_rt *t = NULL;
        double t0 = gp_now();
        if (gp_engine_attach(e, g, &err) || gp_rt_build(e, g, 0, 0, 0, &t, &err)) {
            fprintf(stderr, "bench_planning: %s: %s\n", argv[a], err.msg);
            gp_graph_unref(g);
            rc = 1;
            continue;
        }
        double tables_ms = (gp_now() - t0) * 1e3;
        uint32_t N = t->n, L = gp_plan_links(t);
        size_t nd = (size_t)N * N;
        uint32_t *src = malloc(nd * sizeof *src), *dst = malloc(nd * sizeof *dst);
        double *vol = malloc(nd * sizeof *vol), *cap = malloc(((size_t)L + 1) * sizeof *cap);
        double *load = malloc(((size_t)L + 1) * sizeof *load);
        uint64_t s = 42;
        size_t k = 0;
        for (uint32_t i = 0; i < N; i++)
            for (uint32_t j = 0; j < N; j++)
                if (i != j)
                    src[k] = i, dst[k] = j, vol[k++] = (double)(gp_splitmix64(&s) % 10000) * 1e3;
        gp_demands *d = NULL;
        if (gp_demands_build(N, src, dst, vol, k, &d, &err)) {
            fprintf(stderr, "bench_planning: %s\n", err.msg);
            return 1;
        }
        free(src), free(dst), free(vol);
        gp_plan_link_caps(t, cap);
        for (uint32_t l = 0; l < L; l++)
            if (!(cap[l] > 0)) cap[l] = 10e9;
        double lost = 0, gms = -1;
        t0 = gp_now();
        gp_plan_load(t, d, threads, load, NULL, &lost, &err);
        double cpu_ms = (gp_now() - t0) * 1e3, base_s = cpu_ms / 1e3;
        double *gl = malloc(((size_t)L + 1) * sizeof *gl), glost = 0;
        char gpu_col[64] = "-";
        if (gp_plan_load_cuda(t, d, gl, &glost, &gms, &err) == GP_OK) {
            int ok = 1;
            for (uint32_t l = 0; l < L; l++)
                if (gl[l] - load[l] > 1e-9 * d->total || load[l] - gl[l] > 1e-9 * d->total) ok = 0;
            snprintf(gpu_col, sizeof gpu_col, "%.2f%s", gms, ok ? "" : " (DIFFERS)");
            if (!ok) rc = 1;
        }
        free(gl);
        /* scenarios: every link (u < v), every router */
        uint32_t *pool = malloc(((size_t)L * 2 + N + 1) * sizeof *pool);
        gp_fail *links = malloc(((size_t)L + 1) * sizeof *links),
                *routers = malloc(((size_t)N + 1) * sizeof *routers);
        size_t nls = 0;
        uint32_t kk = 0;
        for (uint32_t u = 0; u < N; u++)
            for (uint32_t l = t->nb_off[u]; l < t->nb_off[u + 1]; l++) {
                uint32_t v = t->nb[l];
                if (v < u && gp_plan_link_find(t, v, u) != GP_NONE) continue;
                uint32_t k0 = kk;
                gp_plan_fail_link(t, u, v, pool, &kk);
                links[nls++] = (gp_fail){.links = pool + k0, .nlinks = kk - k0};
            }
        for (uint32_t v = 0; v < N; v++) {
            pool[kk + v] = v;
            routers[v] = (gp_fail){.routers = pool + kk + v, .nrouters = 1};
        }
        for (int kind = 0; kind < 2; kind++) {
            gp_fail *sc = kind ? routers : links;
            size_t all = kind ? N : nls, run = all < max_scen ? all : max_scen,
                   frun = run < full_max ? run : full_max;
            gp_scenario_result *ri = calloc(run + 1, sizeof *ri),
                               *rf = calloc(frun + 1, sizeof *rf), *ra = calloc(8, sizeof *ra);
            gp_plan_stats sa = {0};
            double ti = 0, tf = 0;
            int ok =
                timed(e, t, d, cap, sc, &run, GP_PLAN_INCREMENTAL, threads, budget, ri, &ti,
                      &err) &&
                timed(e, t, d, cap, sc, &frun, GP_PLAN_FULL, threads, budget / 2, rf, &tf, &err) &&
                gp_plan_failures(e, t, d, cap, sc, run < 8 ? run : 8, GP_PLAN_AUTO, threads, ra,
                                 NULL, &sa, &err) == GP_OK;
            if (frun > run) frun = run;
            int eq = ok;
            for (size_t i = 0; i < frun && eq; i++) eq = same(&ri[i], &rf[i], d->total);
            /* the GPU strategy on every scenario (at most gpu_max), checked against incremental */
            size_t grun = all < gpu_max ? all : gpu_max;
            gp_scenario_result *rg = calloc(grun + 1, sizeof *rg);
            gp_plan_stats sg = {0};
            char gcol[160] = "- | - | - | -";
            if (ok && gp_plan_failures(e, t, d, cap, sc, grun, GP_PLAN_GPU, threads, rg, NULL, &sg,
                                       &err) == GP_OK) {
                double per = grun ? (sg.seconds - sg.base_s) / (double)grun : 0;
                for (size_t i = 0; i < grun && i < run && eq; i++)
                    eq = same(&ri[i], &rg[i], d->total);
                snprintf(gcol, sizeof gcol, "%.3f%s | %.3f | %.0f | %.0f",
                         base_s + per * (double)all, grun < all ? " est." : "", sg.gpu_s,
                         grun ? (double)sg.affected_sum / (double)grun : 0, per > 0 ? 1 / per : 0);
            }
            free(rg);
            if (!eq) rc = 1;
            printf("| %s | %u | %zu | %s | %zu | %.1f | %.2f | %s | %.3f%s | %.0f | %.2f%s | %.1f "
                   "| %s | %s | "
                   "%s |\n",
                   strncmp(argv[a], "mesh:", 5) ? short_name(argv[a]) : argv[a], N, nls,
                   kind ? "routers" : "links", all, tables_ms, cpu_ms, gpu_col,
                   base_s + ti * (double)all, run < all ? " est." : "", ti > 0 ? 1 / ti : 0,
                   base_s + tf * (double)all, frun < all ? " est." : "", tf > 0 ? 1 / tf : 0, gcol,
                   gp_plan_strategy_name(sa.strategy),
                   !ok  ? err.msg
                   : eq ? "yes"
                        : "NO");
            fflush(stdout);
            free(ri), free(rf), free(ra);
        }
        free(pool), free(links), free(routers), free(cap), free(load);
        gp_demands_free(d);
        gp_rt_free(t);
        gp_graph_unref(g);
    }
    gp_engine_free(e);
    return rc;
}
