/* bench_turnpatch.c - time from a cost change to its first answer on a road graph, with turn costs
 * on and off (engine/change.h gp_engine_change_links, then one route on the new version), the path
 * PATCH .../links takes in the service without HTTP.
 *
 *   bench_turnpatch [--threads N] [--reps N] [--links N|F,..] [--turns on,off]
 *                   [--backend cpu|auto] [--phases] SPEC   (an OSM file; profile car)
 *
 * Per turn-cost mode: the attach of the loaded graph (the CCH built: order, contraction,
 * customization; not part of a cost change), then per --links value (default 1; a value F below
 * 1 means F x arcs / 2 links, e.g. 0.01 for 1% of the arcs) --reps changes in a row of that many
 * random road links (cost halved; the first link is one of the route asked afterwards; the
 * versions pile up on the loaded graph, as PATCHes do in the service), each timed as
 * change_ms (the new graph version: road weights, hash), attach_ms (the turn graph's weights, the
 * CCH's metric and customization: gp_engine_attach), query_ms (the first route on the new
 * version) and the total; medians printed as a Markdown row. --phases logs the engine's own
 * breakdown (event=attach, turns_ready, cch_ready at debug level) on stderr. Every answer is
 * checked against the Dijkstra family on the same version (exit status 1 on a difference).
 * Perfect customization is off (a background pass would share the CPUs with the next change).
 */
#include "engine/change.h"
#include "storage/source.h"
#include "bench/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const gp_err *e) {
    fprintf(stderr, "bench_turnpatch: %s: %s\n", what, e->msg);
    exit(2);
}

/* The road arc whose tail is node u with the most arcs out, among a few random draws: a link in
 * the well-connected part of the map. */
static uint32_t pick_arc(const gp_graph *g, uint64_t *s) {
    uint32_t best = 0, bd = 0;
    for (int k = 0; k < 16; k++) {
        uint32_t u = (uint32_t)(bench_rng(s) % g->n), d = g->row[u + 1] - g->row[u];
        if (d > bd) bd = d, best = g->row[u] + (uint32_t)(bench_rng(s) % d);
    }
    return best;
}

int main(int argc, char **argv) {
    int threads = 0, reps = 5, phases = 0, i = 1, nseries = 0;
    double series[8];
    const char *turns = "on,off", *backend = "cpu";
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (!strcmp(argv[i], "--threads")) threads = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--links")) {
            char *p = argv[++i], *end;
            while (*p && nseries < 8) {
                series[nseries++] = strtod(p, &end);
                if (end == p) break;
                p = *end == ',' ? end + 1 : end;
            }
        } else if (!strcmp(argv[i], "--turns")) turns = argv[++i];
        else if (!strcmp(argv[i], "--backend")) backend = argv[++i];
        else if (!strcmp(argv[i], "--phases")) phases = 1;
        else break;
    }
    if (!nseries) series[nseries++] = 1;
    for (int k = 0; k < nseries; k++)
        if (!(series[k] > 0)) nseries = 0;
    if (i != argc - 1 || reps < 1 || reps > 100 || !nseries) {
        fprintf(stderr, "usage: bench_turnpatch [--threads N] [--reps N] [--links N|F,..] "
                        "[--turns on,off] [--backend cpu|auto] [--phases] OSMFILE\n");
        return 2;
    }
    gp_err err;
    gp_err_clear(&err);
    double t0;
    const char *slash = strrchr(argv[i], '/');
    printf("%s: %d change(s) in a row per series, medians\n\n", slash ? slash + 1 : argv[i], reps);
    printf("| turn costs | backend | links | attach s | change ms | attach ms | first answer ms | "
           "total ms |\n|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    int bad = 0, r0_printed = 0;
    char modes[32];
    snprintf(modes, sizeof modes, "%s", turns);
    for (char *save = NULL, *mode = strtok_r(modes, ",", &save); mode;
         mode = strtok_r(NULL, ",", &save)) {
        /* a fresh load per mode: the attach hangs the turn graph off the graph */
        gp_graph *g = gp_graph_load(argv[i], NULL, &err);
        if (!g) die(argv[i], &err);
        gp_engine *e = gp_engine_new(backend, threads, NULL, &err);
        if (!e || gp_engine_set_turn_costs(e, mode, &err) ||
            gp_engine_set_cch(e, "on", 0, GP_CCH_MAX_TRI_PER_NODE, &err) ||
            gp_engine_set_cch_perfect(e, "off", &err))
            die("engine", &err);
        gp_cch_cache_clear();
        if (phases) gp_log_level = GP_LOG_DEBUG;
        t0 = gp_now();
        gp_graph *cur = gp_graph_ref(g);
        if (!r0_printed++)
            fprintf(stderr, "%u nodes, %u arcs, profile %s\n", g->n, g->m, g->profile);
        if (gp_engine_attach(e, cur, &err)) die("attach", &err);
        double attach_s = gp_now() - t0;
        for (int sr = 0; sr < nseries; sr++) {
            int links = series[sr] < 1 ? (int)(series[sr] * g->m / 2) + 1 : (int)series[sr];
            double *cm = calloc((size_t)reps, sizeof *cm), *am = calloc((size_t)reps, sizeof *am);
            double *qm = calloc((size_t)reps, sizeof *qm), *tm = calloc((size_t)reps, sizeof *tm);
            gp_link_change *ch = calloc((size_t)links + 1, sizeof *ch);
            if (!cm || !am || !qm || !tm || !ch) {
                fprintf(stderr, "bench_turnpatch: out of memory\n");
                return 2;
            }
            uint64_t seed = 42;
            for (int r = 0; r < reps; r++) {
                uint32_t a0 = 0;
                for (int k = 0; k < links; k++) {
                    uint32_t a = pick_arc(cur, &seed), u = gp_graph_arc_tail(cur, a);
                    if (!k) a0 = a;
                    ch[k] = (gp_link_change){.u = cur->ext[u],
                                             .v = cur->ext[cur->col[a]],
                                             .cost = (double)(cur->w[a] / 2) / cur->scale};
                }
                uint32_t s = gp_graph_arc_tail(cur, a0), t = cur->col[a0];
                /* a route that crosses the link: from a node a few hops before its tail */
                for (int h = 0; h < 8; h++) {
                    uint32_t d = cur->rrow[s + 1] - cur->rrow[s];
                    if (!d) break;
                    s = cur->rcol[cur->rrow[s] + (uint32_t)(bench_rng(&seed) % d)];
                }
                gp_graph *g2 = NULL;
                gp_change_stats st;
                t0 = gp_now();
                if (gp_engine_change_links(e, cur, ch, (size_t)links, NULL, 0, &g2, &st, &err))
                    die("change", &err);
                double t1 = gp_now();
                gp_path p, ref;
                memset(&p, 0, sizeof p);
                memset(&ref, 0, sizeof ref);
                if (gp_engine_p2p(e, g2, s, t, GP_P2P_AUTO, &p, &err)) die("route", &err);
                double t2 = gp_now();
                if (gp_engine_p2p(e, g2, s, t, GP_P2P_DIJKSTRA, &ref, &err)) die("reference", &err);
                if (p.dist != ref.dist) {
                    fprintf(stderr, "bench_turnpatch: %s: route %u -> %u: %llu, Dijkstra %llu\n",
                            mode, s, t, (unsigned long long)p.dist, (unsigned long long)ref.dist);
                    bad = 1;
                }
                gp_path_free(&p);
                gp_path_free(&ref);
                cm[r] = st.change_ms;
                am[r] = st.attach_ms;
                qm[r] = (t2 - t1) * 1e3;
                tm[r] = (t2 - t0) * 1e3;
                gp_graph_unref(cur);
                cur = g2;
            }
            printf("| %s | %s | %d | %.2f | %.1f | %.1f | %.1f | %.1f |\n", mode,
                   gp_engine_backend(e), links, attach_s, bench_median(cm, reps),
                   bench_median(am, reps), bench_median(qm, reps), bench_median(tm, reps));
            fflush(stdout);
            free(cm);
            free(am);
            free(qm);
            free(tm);
            free(ch);
        }
        gp_log_level = GP_LOG_WARN;
        gp_graph_unref(cur);
        gp_graph_unref(g);
        gp_engine_free(e);
    }
    return bad;
}
