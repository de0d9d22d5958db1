/* bench_cch.c - the CCH on the CPU (engine/cch*.c) beside the CPU backend's Dijkstra family, for
 * machines without a GPU (bench/cpu-cch.sh; the GPU lab is bench/lab_cch.cu).
 *
 *   bench_cch [--reps N] [--queries N] [--p2p-only] [--perfect | --perfect-ab] [--order nd|metis]
 *             SPEC...   (any gp_graph_load spec; the size guard is off; --order: the order method,
 *             config cch_order, default nd)
 *
 * Per graph: order (METIS) and contraction seconds, CCH size; customization with all threads and
 * after 1% of the arc costs change; p2p (median / p90 of --queries random pairs, path unpacked) vs
 * the CPU backend's AUTO; one-to-all PHAST vs Dijkstra (one thread each); tables 100x100 and
 * 1000x1000 with buckets vs the CPU backend's table (100x100 only). Every CCH answer timed is
 * checked against the reference it is compared with. --p2p-only stops after p2p (its line then also
 * gives the mean path length and elimination-tree nodes visited, and the time without unpacking;
 * then p2p between 2 x 2 ends with start / end costs, as a snapped route asks).
 * --perfect-ab adds after p2p the perfect customization (perfect_ab: its time beside the basic one,
 * the arcs it keeps, p2p with and without the pruned arcs on the same pairs), the rest running
 * without the pruned arcs; --perfect the same, the rest (PHAST, buckets) with them.
 */
#include "engine/cch.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;
static volatile uint64_t sink; /* keeps results the compiler could drop */
static uint64_t rs = 0x77;
static uint64_t rnd(void) {
    uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double pct(double *v, int n, double p) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmpd);
    int i = (int)(p * n);
    return v[i >= n ? n - 1 : i];
}

/* This thread's CPU time in microseconds: unlike wall time it does not count the time other
 * processes hold the CPU, which on a shared machine swamps a 50 us query. */
static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what, const gp_err *e) {
    fprintf(stderr, "bench_cch: %s: %s\n", what, e->msg);
    exit(2);
}

/* Perfect customization (gp_cch_perfect): its time on all threads and on one beside the basic
 * customization's, the arcs it keeps, and p2p with and without the pruned query arcs on the same
 * nq pairs, interleaved pair by pair (the pruned arcs set aside and put back), passes times: the
 * lowest median and p90 of the passes, wall and this thread's CPU time. Every pair's distance must
 * be the same both ways. Leaves c with the pruned arcs when on, else without. */
static void perfect_ab(gp_cch *c, int reps, int nq, int passes, int on) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t n = c->n, m = c->topo->m;
    double pv[64], p1 = 0, bv[64];
    for (int r = 0; r < reps; r++) {
        if (gp_cch_customize(c, 0, &err)) die("customize", &err);
        bv[r] = c->custom_s * 1e3;
        if (gp_cch_perfect(c, 0, &err)) die("perfect", &err);
        pv[r] = c->perfect_s * 1e3;
    }
    if (gp_cch_customize(c, 1, &err)) die("customize", &err);
    double b1 = c->custom_s * 1e3;
    if (gp_cch_perfect(c, 1, &err)) die("perfect", &err);
    p1 = c->perfect_s * 1e3;
    double pall = pct(pv, reps, 0.5), ball = pct(bv, reps, 0.5);
    uint32_t kf = c->q[1].first[n], kb = c->q[0].first[n];
    uint32_t ff = 0, fb = 0; /* finite basic arcs */
    for (uint32_t e = 0; e < m; e++) ff += c->fw[e] != GP_CCH_INF, fb += c->bw[e] != GP_CCH_INF;
    printf("- perfect customization: all threads %.1f ms, 1 thread %.1f ms (basic customization: "
           "all threads %.1f ms, 1 thread %.1f ms); query arcs kept: up %u of %u edges (%.1f%%), "
           "down %u (%.1f%%); %u / %u finite before\n",
           pall, p1, ball, b1, kf, m, 100.0 * kf / m, kb, 100.0 * kb / m, ff, fb);
    gp_cch_arcs *saved = c->q;
    double *v[2], *cy[2], lo50[2] = {1e30, 1e30}, lo90[2] = {1e30, 1e30}, loc[2] = {1e30, 1e30};
    for (int k = 0; k < 2; k++)
        v[k] = malloc(sizeof(double) * (size_t)nq), cy[k] = malloc(sizeof(double) * (size_t)nq);
    uint64_t rs0 = rs;
    for (int pass = 0; pass < passes; pass++) {
        rs = rs0;
        for (int q = 0; q < nq; q++) {
            uint32_t s = (uint32_t)(rnd() % n), tt = (uint32_t)(rnd() % n);
            uint64_t dist[2];
            for (int k0 = 0; k0 < 2; k0++) {
                int k = (q + pass) % 2 ? 1 - k0 : k0; /* alternate which goes first */
                c->q = k ? saved : NULL;
                gp_path p;
                double c0 = cpu_us(), a = gp_now();
                if (gp_cch_p2p(c, s, tt, &p, &err)) die("p2p", &err);
                v[k][q] = (gp_now() - a) * 1e6;
                cy[k][q] = cpu_us() - c0;
                dist[k] = p.dist;
                gp_path_free(&p);
            }
            if (dist[0] != dist[1]) failures++;
        }
        for (int k = 0; k < 2; k++) {
            double m50 = pct(v[k], nq, 0.5), m90 = pct(v[k], nq, 0.9), mc = pct(cy[k], nq, 0.5);
            if (m50 < lo50[k]) lo50[k] = m50;
            if (m90 < lo90[k]) lo90[k] = m90;
            if (mc < loc[k]) loc[k] = mc;
        }
    }
    printf("- p2p with / without the perfect pruning (%d pairs, interleaved, lowest of %d passes): "
           "median %.1f / %.1f us (%.2fx), p90 %.1f / %.1f us, CPU time median %.1f / %.1f us "
           "(%.2fx)\n",
           nq, passes, lo50[1], lo50[0], lo50[0] / lo50[1], lo90[1], lo90[0], loc[1], loc[0],
           loc[0] / loc[1]);
    for (int k = 0; k < 2; k++) free(v[k]), free(cy[k]);
    c->q = saved;
    if (!on && gp_cch_customize(c, 0, &err)) die("customize", &err); /* drops the arcs */
}

static void run(const char *spec, gp_backend *cpu, gp_backend *cpu1, int reps, int nq, int p2p_only,
                int perfect) {
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) die(spec, &err);
    const char *name = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
    uint32_t n = g->n;
    gp_cch_cache_clear();
    gp_cch *c = NULL;
    double t0 = gp_now();
    if (gp_cch_new(g, 0, &c, &err)) die("cch", &err);
    const gp_cch_topo *t = c->topo;
    printf("\n## %s: %u nodes, %u arcs\n\n", name, n, g->m);
    printf("- preprocessing: order %.2f s, contraction %.2f s, total with the first customization "
           "%.2f s; %u CCH edges, %llu triangles, %u levels; %.1f MiB\n",
           t->order_s, t->contract_s, gp_now() - t0, t->m, (unsigned long long)t->ntri, t->nlevels,
           gp_cch_bytes(c) / 1048576.0);
    double *v = malloc(sizeof(double) * (size_t)(nq > 64 ? nq : 64));
    for (int r = 0; r < reps; r++) {
        if (gp_cch_customize(c, 0, &err)) die("customize", &err);
        v[r] = c->custom_s * 1e3;
    }
    double cust = pct(v, reps, 0.5);
    for (uint32_t e = 0; e < t->m; e++)
        if (c->ofw[e] != GP_CCH_INF && rnd() % 100 == 0) c->ofw[e] = c->ofw[e] / 2 * 3 + 1;
    if (gp_cch_customize(c, 0, &err)) die("customize", &err);
    printf("- customization (all threads): %.1f ms; after 1%% cost changes %.1f ms\n", cust,
           c->custom_s * 1e3);
    if (gp_cch_map_metric(c, g, &err) || gp_cch_customize(c, 0, &err)) die("customize", &err);
    double *b = malloc(sizeof(double) * 64);
    int nb = 0;
    uint64_t rs0 = rs, plen = 0, settled = 0;
    for (int q = 0; q < nq; q++) {
        uint32_t s = (uint32_t)(rnd() % n), tt = (uint32_t)(rnd() % n);
        gp_path p;
        double a = gp_now();
        if (gp_cch_p2p(c, s, tt, &p, &err)) die("p2p", &err);
        v[q] = (gp_now() - a) * 1e6;
        plen += p.len;
        settled += p.settled;
        if (nb < 20) {
            gp_path p2;
            a = gp_now();
            if (cpu->ops->p2p(cpu, g, s, tt, GP_P2P_AUTO, &p2, &err)) die("p2p ref", &err);
            b[nb++] = (gp_now() - a) * 1e6;
            if (p2.dist != p.dist) failures++;
            gp_path_free(&p2);
        }
        gp_path_free(&p);
    }
    double p50 = pct(v, nq, 0.5), p90 = pct(v, nq, 0.9), ref = pct(b, nb, 0.5);
    printf(
        "- p2p: CCH median %.1f us, p90 %.1f us (%d pairs); CPU backend AUTO %.0f us (%d): %.0fx\n",
        p50, p90, nq, ref, nb, ref / p50);
    if (perfect) perfect_ab(c, reps, nq, 5, perfect > 0);
    if (p2p_only) {
        /* the same pairs again, distances only (gp_cch_upward both ways, meeting by rank) */
        uint32_t h = t->height + 1, *rf = malloc(h * 4), *rb = malloc(h * 4);
        uint64_t *df = malloc(h * 8), *db = malloc(h * 8);
        rs = rs0;
        for (int q = 0; q < nq; q++) {
            uint32_t s = (uint32_t)(rnd() % n), tt = (uint32_t)(rnd() % n);
            double a = gp_now();
            int kf = gp_cch_upward(c, s, 1, rf, df), kb = gp_cch_upward(c, tt, 0, rb, db);
            uint64_t best = GP_INF;
            for (int i = 0, j = 0; i < kf && j < kb;) {
                if (rf[i] == rb[j] && df[i] + db[j] < best) best = df[i] + db[j];
                if (rf[i] <= rb[j]) i++;
                else j++;
            }
            v[q] = (gp_now() - a) * 1e6;
            sink += best;
        }
        double up50 = pct(v, nq, 0.5);
        /* the p2p pairs again, 5 passes: the lowest median is the least disturbed by other
         * processes on a shared machine */
        double low = p50, *cy = malloc(sizeof(double) * (size_t)nq), lowcy = 0;
        for (int pass = 0; pass < 12; pass++) {
            rs = rs0;
            for (int q = 0; q < nq; q++) {
                uint32_t s = (uint32_t)(rnd() % n), tt = (uint32_t)(rnd() % n);
                gp_path p;
                double c0 = cpu_us();
                double a = gp_now();
                if (gp_cch_p2p(c, s, tt, &p, &err)) die("p2p", &err);
                v[q] = (gp_now() - a) * 1e6;
                cy[q] = cpu_us() - c0;
                gp_path_free(&p);
            }
            double m = pct(v, nq, 0.5), mc = pct(cy, nq, 0.5);
            if (m < low) low = m;
            if (pass == 0 || mc < lowcy) lowcy = mc;
        }
        printf("- p2p: lowest median of 13 passes %.1f us, CPU time %.1f us (this thread; "
               "lowest median of 12); mean path %.0f nodes, %.0f elimination-tree nodes visited; "
               "two upward searches without pruning nor unpacking: median %.1f us\n",
               low, lowcy, (double)plen / nq, (double)settled / nq, up50);
        /* between sets, as a snapped route asks (engine/snap.c): ends {s, s'} and {t, t'} (s', t'
         * random too) with start / end costs, checked against the four pairs' queries */
        double lowm = 0, lowmc = 0;
        for (int pass = 0; pass < 5; pass++) {
            rs = rs0 + 1;
            for (int q = 0; q < nq; q++) {
                uint32_t S[2], T[2];
                for (int k = 0; k < 2; k++)
                    S[k] = (uint32_t)(rnd() % n), T[k] = (uint32_t)(rnd() % n);
                uint64_t so[2] = {0, rnd() % 1000}, to[2] = {rnd() % 1000, 0};
                gp_path p;
                double c0 = cpu_us(), a = gp_now();
                if (gp_cch_p2p_multi(c, S, so, 2, T, to, 2, &p, NULL, NULL, &err))
                    die("p2p_multi", &err);
                v[q] = (gp_now() - a) * 1e6;
                cy[q] = cpu_us() - c0;
                if (pass == 0) {
                    uint64_t ref = GP_INF;
                    for (int i = 0; i < 4; i++) {
                        gp_path p1;
                        if (gp_cch_p2p(c, S[i / 2], T[i % 2], &p1, &err)) die("p2p", &err);
                        if (p1.dist != GP_INF && p1.dist + so[i / 2] + to[i % 2] < ref)
                            ref = p1.dist + so[i / 2] + to[i % 2];
                        gp_path_free(&p1);
                    }
                    if (ref != p.dist) failures++;
                }
                gp_path_free(&p);
            }
            double m = pct(v, nq, 0.5), mc = pct(cy, nq, 0.5);
            if (pass == 0 || m < lowm) lowm = m;
            if (pass == 0 || mc < lowmc) lowmc = mc;
        }
        free(cy);
        printf(
            "- p2p between 2 x 2 ends with start / end costs (gp_cch_p2p_multi, a snapped route's "
            "query): lowest median of 5 passes %.1f us, CPU time %.1f us\n",
            lowm, lowmc);
        free(rf), free(rb), free(df), free(db);
        free(v), free(b);
        gp_cch_free(c);
        gp_graph_unref(g);
        return;
    }
    uint64_t *d1 = malloc((size_t)n * 8), *d2 = malloc((size_t)n * 8);
    double ph[8], dj[8];
    int nr = reps < 8 ? reps : 8;
    for (int r = 0; r < nr; r++) {
        uint32_t s = (uint32_t)(rnd() % n);
        double a = gp_now();
        if (gp_cch_sssp(c, s, GP_INF, d1, &err)) die("phast", &err);
        ph[r] = (gp_now() - a) * 1e3;
        a = gp_now();
        if (cpu1->ops->sssp(cpu1, g, s, GP_INF, d2, NULL, &err)) die("dijkstra", &err);
        dj[r] = (gp_now() - a) * 1e3;
        if (memcmp(d1, d2, (size_t)n * 8)) failures++;
    }
    double mph = pct(ph, nr, 0.5), mdj = pct(dj, nr, 0.5);
    printf("- one-to-all (1 thread): PHAST %.2f ms, Dijkstra %.1f ms (%.1fx)\n", mph, mdj,
           mdj / mph);
    uint32_t sizes[2] = {100, 1000};
    for (int si = 0; si < 2; si++) {
        uint32_t k = sizes[si] < n ? sizes[si] : n;
        uint32_t *S = malloc(k * 4), *T = malloc(k * 4);
        uint64_t *o1 = malloc((size_t)k * k * 8), *o2 = malloc((size_t)k * k * 8);
        for (uint32_t i = 0; i < k; i++) S[i] = (uint32_t)(rnd() % n), T[i] = (uint32_t)(rnd() % n);
        double a = gp_now();
        if (gp_cch_table(c, S, k, T, k, 0, o1, &err)) die("buckets", &err);
        double tb = (gp_now() - a) * 1e3, td = 0;
        if (si == 0) {
            a = gp_now();
            if (cpu->ops->table(cpu, g, S, k, T, k, o2, &err)) die("table", &err);
            td = (gp_now() - a) * 1e3;
            if (memcmp(o1, o2, (size_t)k * k * 8)) failures++;
            printf("- table %ux%u: buckets %.1f ms; CPU backend (Dijkstra, all threads) %.0f ms "
                   "(%.0fx)\n",
                   k, k, tb, td, td / tb);
        } else {
            printf("- table %ux%u: buckets %.1f ms\n", k, k, tb);
        }
        free(S), free(T), free(o1), free(o2);
    }
    fflush(stdout);
    free(v), free(b), free(d1), free(d2);
    gp_cch_free(c);
    gp_graph_unref(g);
}

int main(int argc, char **argv) {
    int reps = 5, nq = 1000, first = 1, p2p_only = 0, perfect = 0, order = GP_CCH_ORDER_ND;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--reps") && first + 1 < argc)
            reps = (int)strtol(argv[++first], NULL, 10);
        else if (!strcmp(argv[first], "--queries") && first + 1 < argc)
            nq = (int)strtol(argv[++first], NULL, 10);
        else if (!strcmp(argv[first], "--p2p-only")) p2p_only = 1;
        else if (!strcmp(argv[first], "--perfect")) perfect = 1;
        else if (!strcmp(argv[first], "--perfect-ab")) perfect = -1;
        else if (!strcmp(argv[first], "--order") && first + 1 < argc)
            order = gp_cch_order_parse(argv[++first]);
        else break;
    }
    if (first >= argc || reps < 1 || reps > 64 || nq < 1 || order < 0) {
        fprintf(stderr, "usage: bench_cch [--reps N (1..64)] [--queries N] [--p2p-only] "
                        "[--perfect | --perfect-ab] [--order nd|metis] SPEC...\n");
        return 2;
    }
    gp_err err;
    gp_err_clear(&err);
    gp_cch_set_max_tri_per_node(0);
    gp_cch_set_order(order, 0);
    gp_backend *cpu = gp_cpu_backend_new(0, &err), *cpu1 = gp_cpu_backend_new(1, &err);
    if (!cpu || !cpu1) die("backend", &err);
    for (int i = first; i < argc; i++) run(argv[i], cpu, cpu1, reps, nq, p2p_only, perfect);
    printf("\n%s (%d mismatches against the references)\n", failures ? "FAILED" : "OK", failures);
    gp_backend_destroy(cpu);
    gp_backend_destroy(cpu1);
    return failures ? 1 : 0;
}
