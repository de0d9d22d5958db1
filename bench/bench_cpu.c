/* bench_cpu.c - CPU backend benchmark: graph generation/load, one-to-all SSSP, point-to-point
 * (Dijkstra, bidirectional, A*), a many-to-many table (all threads and one thread) and blocked
 * Floyd-Warshall APSP with and without next hops. Prints Markdown tables (medians over repeated
 * runs, thread counts named, ratios against the plain baselines) on stdout; bench/cpu-engine.sh
 * wraps it into a results file. Every timed answer is cross-checked (bidir / A* / table against
 * Dijkstra), so a wrong fast number cannot be reported.
 *
 *   bench_cpu [--graph SPEC] [--apsp-graph SPEC] [--threads N] [--reps R] [--pairs P]
 *             [--table K] [--scaling N,N,...] [--scaling-out FILE] [--skip-apsp]
 * Defaults: gen:1000000:1, gen:2000:1, all online CPUs, 5 reps, 20 pairs, 100x100 table.
 */
#include "engine/backend.h"
#include "storage/source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng = 0x5eed;
static uint64_t rnd(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The 1-minute load average, so a results file shows whether the machine was shared. */
static double loadavg(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    double med, min, max;
    int n;
} stats;

static stats summarize(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    stats s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1], n};
    return s;
}

static void row(const char *what, int threads, stats s, const char *note) {
    printf("| %s | %d | %.4f | %.4f | %.4f | %d | %s |\n", what, threads, s.med, s.min, s.max, s.n,
           note);
}

static void die(const char *what, const gp_err *e) {
    fprintf(stderr, "bench_cpu: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

static long num_arg(const char *s, const char *opt) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0) {
        fprintf(stderr, "bench_cpu: %s needs a positive integer, got '%s'\n", opt, s);
        exit(2);
    }
    return v;
}

/* One-to-all SSSP median over reps random sources on one thread. */
static stats time_sssp(gp_backend *b1, const gp_graph *g, int reps) {
    gp_err err;
    uint64_t *dist = malloc((size_t)g->n * sizeof *dist);
    uint32_t *pred = malloc((size_t)g->n * sizeof *pred);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!dist || !pred || !t) die("out of memory", NULL);
    b1->ops->sssp(b1, g, 0, GP_INF, dist, pred, &err); /* warm: workspace allocation */
    for (int r = 0; r < reps; r++) {
        uint32_t s = (uint32_t)(rnd() % g->n);
        double t0 = gp_now();
        if (b1->ops->sssp(b1, g, s, GP_INF, dist, pred, &err) != GP_OK) die("sssp", &err);
        t[r] = gp_now() - t0;
    }
    stats st = summarize(t, reps);
    free(dist);
    free(pred);
    free(t);
    return st;
}

int main(int argc, char **argv) {
    const char *spec = "gen:1000000:1", *apsp_spec = "gen:2000:1", *scaling = NULL,
               *scaling_out = NULL;
    int threads = gp_cpu_count(), reps = 5, pairs = 20, tk = 100, skip_apsp = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--skip-apsp") == 0) {
            skip_apsp = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_cpu: unknown or incomplete option '%s' (see the file header)\n",
                    a);
            return 2;
        }
        i++;
        if (strcmp(a, "--graph") == 0) spec = v;
        else if (strcmp(a, "--apsp-graph") == 0) apsp_spec = v;
        else if (strcmp(a, "--threads") == 0) threads = (int)num_arg(v, a);
        else if (strcmp(a, "--reps") == 0) reps = (int)num_arg(v, a);
        else if (strcmp(a, "--pairs") == 0) pairs = (int)num_arg(v, a);
        else if (strcmp(a, "--table") == 0) tk = (int)num_arg(v, a);
        else if (strcmp(a, "--scaling") == 0) scaling = v;
        else if (strcmp(a, "--scaling-out") == 0) scaling_out = v;
        else {
            fprintf(stderr, "bench_cpu: unknown option '%s'\n", a);
            return 2;
        }
    }
    gp_err err;
    gp_backend *b1 = gp_cpu_backend_new(1, &err), *bn = gp_cpu_backend_new(threads, &err);
    if (!b1 || !bn) die("backend", &err);
    gp_backend_info info;
    bn->ops->info(bn, &info);
    printf("CPU backend on %s; multi-threaded runs use %d threads, single-threaded runs 1.\n"
           "Times in seconds: median, min, max over the repetitions. Load average at start: %.1f "
           "(a value above the core count means other work shared the machine).\n\n",
           info.device, info.threads, loadavg());

    /* ---- load / generate */
    int lreps = reps < 3 ? reps : 3;
    double *lt = malloc((size_t)lreps * sizeof *lt);
    gp_graph *g = NULL;
    for (int r = 0; r < lreps; r++) {
        gp_graph_unref(g);
        double t0 = gp_now();
        g = gp_graph_load(spec, NULL, &err);
        lt[r] = gp_now() - t0;
        if (!g) die(spec, &err);
    }
    printf("## Graph `%s`: %u nodes, %u arcs%s\n\n", spec, g->n, g->m,
           g->lon ? ", with coordinates" : "");
    printf("| measurement | threads | median s | min s | max s | runs | notes |\n");
    printf("|---|---|---|---|---|---|---|\n");
    row("load (gp_graph_load)", 0, summarize(lt, lreps), "0 = the loader's own threading");
    free(lt);

    /* ---- SSSP */
    stats sssp = time_sssp(b1, g, reps);
    char note[256];
    snprintf(note, sizeof note, "one-to-all Dijkstra (radix heap), random sources; %.1f M nodes/s",
             g->n / sssp.med / 1e6);
    row("SSSP one-to-all", 1, sssp, note);

    /* ---- p2p */
    uint32_t *ps = malloc((size_t)pairs * sizeof *ps), *pt = malloc((size_t)pairs * sizeof *pt);
    for (int k = 0; k < pairs; k++) {
        ps[k] = (uint32_t)(rnd() % g->n);
        pt[k] = (uint32_t)(rnd() % g->n);
    }
    static const char *algo_name[] = {"auto", "Dijkstra (early exit)", "bidirectional Dijkstra",
                                      "A* (great-circle bound)"};
    double *tp = malloc((size_t)pairs * sizeof *tp), *sp = malloc((size_t)pairs * sizeof *sp);
    uint64_t *ref = malloc((size_t)pairs * sizeof *ref);
    double med_dij = 0, med_settled_dij = 0;
    int algo_max = g->lon ? GP_P2P_ASTAR : GP_P2P_BIDIR;
    if (g->lon) { /* attach computes the A* bound's factor on all threads (done at load) */
        double t0 = gp_now();
        if (bn->ops->attach && bn->ops->attach(bn, g, &err) != GP_OK) die("attach", &err);
        double t1 = gp_now() - t0;
        stats once = {t1, t1, t1, 1};
        row("attach (A* bound: one scan of all arcs)", threads, once,
            "done once per graph at load; the 1-thread row below pays it on its first A* call");
    }
    if (g->lon) { /* the first A* call on a graph computes and caches the bound's factor */
        gp_path p;
        double t0 = gp_now();
        if (b1->ops->p2p(b1, g, ps[0], pt[0], GP_P2P_ASTAR, &p, &err) != GP_OK) die("A*", &err);
        double t1 = gp_now() - t0;
        gp_path_free(&p);
        stats once = {t1, t1, t1, 1};
        row("p2p A*, first call on the graph", 1, once,
            "includes the one-off scan of all arcs for the bound (cached afterwards)");
    }
    for (int algo = GP_P2P_DIJKSTRA; algo <= algo_max; algo++) {
        for (int k = 0; k < pairs; k++) {
            gp_path p;
            double t0 = gp_now();
            if (b1->ops->p2p(b1, g, ps[k], pt[k], algo, &p, &err) != GP_OK) die("p2p", &err);
            tp[k] = gp_now() - t0;
            sp[k] = (double)p.settled;
            if (algo == GP_P2P_DIJKSTRA) ref[k] = p.dist;
            else if (p.dist != ref[k]) {
                fprintf(stderr, "bench_cpu: %s disagrees with Dijkstra on pair %d\n",
                        algo_name[algo], k);
                return 1;
            }
            gp_path_free(&p);
        }
        stats st = summarize(tp, pairs), ss = summarize(sp, pairs);
        if (algo == GP_P2P_DIJKSTRA) {
            med_dij = st.med;
            med_settled_dij = ss.med;
            snprintf(note, sizeof note, "%d random pairs; median %.0f nodes settled", pairs,
                     ss.med);
        } else {
            snprintf(note, sizeof note,
                     "%d random pairs; median %.0f settled; %.1fx faster than Dijkstra (medians), "
                     "%.1fx fewer settled",
                     pairs, ss.med, med_dij / st.med, med_settled_dij / ss.med);
        }
        char what[64];
        snprintf(what, sizeof what, "p2p %s", algo_name[algo]);
        row(what, 1, st, note);
    }
    free(tp);
    free(sp);
    free(ref);
    free(ps);
    free(pt);

    /* ---- table */
    uint32_t *src = malloc((size_t)tk * sizeof *src), *dst = malloc((size_t)tk * sizeof *dst);
    uint64_t *out = malloc((size_t)tk * tk * sizeof *out),
             *out1 = malloc((size_t)tk * tk * sizeof *out1);
    for (int k = 0; k < tk; k++) {
        src[k] = (uint32_t)(rnd() % g->n);
        dst[k] = (uint32_t)(rnd() % g->n);
    }
    double *tt = malloc((size_t)reps * sizeof *tt);
    stats tabs[2];
    gp_backend *tb[2] = {bn, b1};
    for (int which = 0; which < 2; which++) {
        for (int r = 0; r < reps; r++) {
            double t0 = gp_now();
            if (tb[which]->ops->table(tb[which], g, src, (uint32_t)tk, dst, (uint32_t)tk,
                                      which ? out1 : out, &err) != GP_OK)
                die("table", &err);
            tt[r] = gp_now() - t0;
        }
        tabs[which] = summarize(tt, reps);
    }
    if (memcmp(out, out1, (size_t)tk * tk * sizeof *out) != 0) {
        fprintf(stderr, "bench_cpu: multi-threaded table differs from single-threaded\n");
        return 1;
    }
    char what[64];
    snprintf(what, sizeof what, "table %dx%d", tk, tk);
    snprintf(note, sizeof note,
             "one Dijkstra per source, early stop at the last target; %.2fx the "
             "1-thread time",
             tabs[1].med / tabs[0].med);
    row(what, threads, tabs[0], note);
    row(what, 1, tabs[1], "baseline for the row above");
    free(tt);
    free(src);
    free(dst);
    free(out);
    free(out1);

    /* ---- SSSP scaling (for the plot) */
    if (scaling) {
        FILE *so = scaling_out ? fopen(scaling_out, "w") : NULL;
        printf("\n### SSSP one-to-all time vs graph size (1 thread)\n\n");
        printf("| graph | nodes | arcs | median s | min s | max s | runs "
               "|\n|---|---|---|---|---|---|---|\n");
        char *copy = strdup(scaling), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char gs[64];
            snprintf(gs, sizeof gs, "gen:%s:1", tok);
            gp_graph *h = gp_graph_load(gs, NULL, &err);
            if (!h) die(gs, &err);
            stats st = time_sssp(b1, h, reps);
            printf("| `%s` | %u | %u | %.4f | %.4f | %.4f | %d |\n", gs, h->n, h->m, st.med, st.min,
                   st.max, st.n);
            if (so) fprintf(so, "%u %.6f %.6f %.6f\n", h->n, st.med, st.min, st.max);
            gp_graph_unref(h);
        }
        free(copy);
        if (so) fclose(so);
    }
    gp_graph_unref(g);

    /* ---- APSP */
    if (!skip_apsp) {
        gp_graph *a = gp_graph_load(apsp_spec, NULL, &err);
        if (!a) die(apsp_spec, &err);
        size_t nn = (size_t)a->n * a->n;
        uint64_t *d = malloc(nn * sizeof *d), *d2 = malloc(nn * sizeof *d2);
        uint32_t *nx = malloc(nn * sizeof *nx);
        if (!d || !d2 || !nx) die("out of memory for APSP", NULL);
        printf("\n## APSP on `%s`: %u nodes, %u arcs (blocked Floyd-Warshall, 64x64 tiles)\n\n",
               apsp_spec, a->n, a->m);
        printf("| measurement | threads | median s | min s | max s | runs | notes |\n");
        printf("|---|---|---|---|---|---|---|\n");
        double *ta = malloc((size_t)reps * sizeof *ta);
        stats st[3];
        for (int mode = 0; mode < 3; mode++) {
            gp_backend *b = mode == 2 ? b1 : bn;
            for (int r = 0; r < reps; r++) {
                double t0 = gp_now();
                if (b->ops->apsp(b, a, mode == 1 ? d2 : d, mode == 1 ? nx : NULL, &err) != GP_OK)
                    die("apsp", &err);
                ta[r] = gp_now() - t0;
            }
            st[mode] = summarize(ta, reps);
            if (mode == 2) break;
            if (mode == 1 && memcmp(d, d2, nn * sizeof *d) != 0) {
                fprintf(stderr, "bench_cpu: APSP with next hops changed the distances\n");
                return 1;
            }
        }
        double gups = (double)a->n * a->n * a->n / st[0].med / 1e9;
        snprintf(note, sizeof note, "distances only; %.2f G relaxations/s", gups);
        row("APSP", threads, st[0], note);
        snprintf(note, sizeof note, "with next-hop matrix; %.2fx the distance-only time",
                 st[1].med / st[0].med);
        row("APSP + next hops", threads, st[1], note);
        snprintf(note, sizeof note, "distances only; baseline: multi-threaded is %.2fx faster",
                 st[2].med / st[0].med);
        row("APSP", 1, st[2], note);
        /* spot check against SSSP */
        uint64_t *sd = malloc((size_t)a->n * sizeof *sd);
        for (int k = 0; k < 5; k++) {
            uint32_t s = (uint32_t)(rnd() % a->n);
            b1->ops->sssp(b1, a, s, GP_INF, sd, NULL, &err);
            if (memcmp(sd, d + (size_t)s * a->n, a->n * sizeof *sd) != 0) {
                fprintf(stderr, "bench_cpu: APSP row %u differs from SSSP\n", s);
                return 1;
            }
        }
        free(sd);
        free(ta);
        free(d);
        free(d2);
        free(nx);
        gp_graph_unref(a);
    }
    printf("\nLoad average at the end: %.1f\n", loadavg());
    gp_backend_destroy(b1);
    gp_backend_destroy(bn);
    return 0;
}
