/* cch_order.c - the CCH order lab: one METIS_NodeND call (gp_cch_order_metis) against the parallel
 * nested dissection (gp_cch_order_nd), in time and in quality, and the contraction built on each
 * (bench/cpu-cch-order.sh writes bench/results/DATE-MACHINE-cch-order.md).
 *
 *   cch_order [--threads N,N,..] [--leaf L] [--no-metis] SPEC...   (any gp_graph_load spec)
 *
 * Per graph one Markdown row per order: the single call, then the parallel order at each thread
 * count (default: 1 and all online CPUs; its ranks must be the same at every count, else the row
 * says DIFFERS and the exit status is 1). Columns: order seconds (wall), contraction seconds
 * (gp_cch_topo_build), CCH edges (the fill of the elimination: edges of the chordal completion),
 * lower triangles (the customization's operation count), levels (elimination-tree height), widest
 * up-degree, and the peak resident memory of the order and of the contraction (VmHWM, reset before
 * each through /proc/self/clear_refs; "-" where the kernel does not allow the reset). The quality
 * ratios are parallel / single. --no-metis skips the single call (for graphs where it is too slow).
 * The size guard is off.
 */
#include "engine/cch.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const gp_err *e) {
    fprintf(stderr, "cch_order: %s: %s\n", what, e->msg);
    exit(2);
}

/* Peak RSS (MiB) since the last reset, or -1. */
static int hwm_ok;
static void hwm_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    hwm_ok = f && fputs("5", f) >= 0;
    if (f && fclose(f) != 0) hwm_ok = 0;
}
static double hwm_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = strtod(line + 6, NULL);
    if (f) fclose(f);
    return hwm_ok && kb >= 0 ? kb / 1024 : -1;
}

static void fmt_mib(char *buf, size_t n, double v) {
    if (v < 0) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.0f", v);
}

static double cpu_s(void) { /* this process, all threads */
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct row {
    double order_s, order_cpu, span, contract_s, contract_cpu, order_mib, contract_mib;
    uint32_t m, nlevels, width;
    uint64_t ntri;
} row;

/* Contraction on rank; fills r. */
static void contract(const gp_graph *g, const uint32_t *rank, row *r) {
    gp_err err;
    gp_err_clear(&err);
    gp_cch_topo *t = NULL;
    hwm_reset();
    double t0 = gp_now(), c0 = cpu_s();
    if (gp_cch_topo_build(g, rank, &t, &err)) die("contraction", &err);
    r->contract_s = gp_now() - t0;
    r->contract_cpu = cpu_s() - c0;
    r->contract_mib = hwm_mib();
    r->m = t->m;
    r->ntri = t->ntri;
    r->nlevels = t->nlevels;
    r->width = t->width;
    gp_cch_topo_unref(t);
}

/* Predicted wall seconds on P threads from the CPU seconds: max(work / P, span). */
static double predict(const row *r, int p) {
    double w = r->order_cpu / p;
    return r->span > w ? r->span : w;
}

static void print_row(const char *name, const char *what, const row *r, const row *base,
                      const char *note) {
    char om[32], cm[32], q[96] = "-", ct[48] = "-", qual[32] = "-", lv[32] = "-", wd[32] = "-";
    fmt_mib(om, sizeof om, r->order_mib);
    fmt_mib(cm, sizeof cm, r->contract_mib);
    if (r->m) {
        snprintf(ct, sizeof ct, "%.2f (%.2f)", r->contract_s, r->contract_cpu);
        snprintf(qual, sizeof qual, "%u | %llu", r->m, (unsigned long long)r->ntri);
        snprintf(lv, sizeof lv, "%u", r->nlevels);
        snprintf(wd, sizeof wd, "%u", r->width);
    } else {
        snprintf(qual, sizeof qual, "- | -");
        snprintf(cm, sizeof cm, "-");
    }
    if (base && r->m)
        snprintf(q, sizeof q, "%.3f / %.3f / %.2f / %.1fx", (double)r->m / base->m,
                 (double)r->ntri / (double)base->ntri, (double)r->nlevels / base->nlevels,
                 base->order_cpu / predict(r, 16));
    else if (base) snprintf(q, sizeof q, "wall %.1fx", base->order_s / r->order_s);
    printf("| %s | %s | %.2f | %.2f | %.2f | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
           name, what, r->order_s, r->order_cpu, r->span, predict(r, 16), ct, qual, lv, wd, om, cm,
           q, note);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int threads[16], nthreads = 0, metis = 1, rc = 0;
    uint32_t leaf = 0;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *p = argv[++i], *end;
            while (*p && nthreads < 16) {
                threads[nthreads++] = (int)strtol(p, &end, 10);
                p = *end == ',' ? end + 1 : end;
                if (end == p && *p) break;
            }
        } else if (!strcmp(argv[i], "--leaf") && i + 1 < argc) {
            leaf = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--no-metis")) {
            metis = 0;
        } else {
            fprintf(stderr, "usage: cch_order [--threads N,..] [--leaf L] [--no-metis] SPEC...\n");
            return 2;
        }
    }
    if (!nthreads) {
        threads[nthreads++] = 1;
        if (gp_cch_threads(0) > 1) threads[nthreads++] = gp_cch_threads(0);
    }
    gp_cch_set_max_tri_per_node(0);
    int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL")); /* debug: the ND's phases */
    if (lvl >= 0) gp_log_level = lvl;
    printf("| graph | order | order wall s | order CPU s (work) | span CPU s | 16 threads s "
           "(predicted) | contraction wall s (CPU s) | CCH edges | triangles | levels | widest "
           "up-degree | order peak MiB | contraction peak MiB | parallel / single: edges / "
           "triangles / levels / speed at 16 threads | ranks |\n");
    printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
           "---: | --- | --- |\n");
    for (; i < argc; i++) {
        gp_err err;
        gp_err_clear(&err);
        double t0 = gp_now();
        gp_graph *g = gp_graph_load(argv[i], NULL, &err);
        if (!g) die(argv[i], &err);
        double load_s = gp_now() - t0;
        const char *slash = strrchr(argv[i], '/');
        char name[128];
        snprintf(name, sizeof name, "%s (%u nodes, %u arcs, loaded in %.1f s)",
                 slash ? slash + 1 : argv[i], g->n, g->m, load_s);
        uint32_t n = g->n;
        uint32_t *rank = malloc((size_t)n * sizeof *rank),
                 *first = malloc((size_t)n * sizeof *first);
        if (!rank || !first) return 2;
        row base, r;
        if (metis) {
            memset(&base, 0, sizeof base);
            hwm_reset();
            t0 = gp_now();
            double c0 = cpu_s();
            if (gp_cch_order_metis(g, rank, &err)) die("metis", &err);
            base.order_s = gp_now() - t0;
            base.order_cpu = base.span = cpu_s() - c0;
            base.order_mib = hwm_mib();
            contract(g, rank, &base);
            print_row(name, "METIS_NodeND (one call)", &base, NULL, "-");
        }
        for (int k = 0; k < nthreads; k++) {
            memset(&r, 0, sizeof r);
            hwm_reset();
            t0 = gp_now();
            gp_cch_nd_stats st;
            if (gp_cch_order_nd(g, threads[k], leaf, rank, &st, &err)) die("nd", &err);
            r.order_s = gp_now() - t0;
            r.order_cpu = st.work_s;
            r.span = st.span_s;
            r.order_mib = hwm_mib();
            const char *note = "-";
            if (k == 0) {
                memcpy(first, rank, (size_t)n * sizeof *rank);
                contract(g, rank, &r);
            } else if (memcmp(first, rank, (size_t)n * sizeof *rank) != 0) {
                note = "DIFFERS from 1 thread";
                rc = 1;
            } else {
                note = "same as 1 thread";
            }
            char what[64];
            snprintf(what, sizeof what, "parallel ND, %d threads, leaf %u", st.threads,
                     leaf ? leaf : GP_CCH_ND_LEAF);
            print_row(name, what, &r, metis ? &base : NULL, note); /* k > 0: the same contraction */
        }
        free(rank);
        free(first);
        gp_graph_unref(g);
    }
    return rc;
}
