/* lab_cch.cu - the CCH kernel lab: validates GPU customization, PHAST and RPHAST against the CPU
 * (engine/cch.c, itself held to Dijkstra by tests/test_cch.c), then times every query type beside
 * today's engines in the same run (bench/gpu-cch.sh writes bench/results/DATE-GPU-gpu-cch.md).
 *
 *   lab_cch [--data DIR] [--graphs SPEC,..] [--reps N] [--queries N] [--plot FILE] [--small]
 *           [--fast] [--plans BASExRATIOxBINCAP[xMODE],..] [--order nd|metis] [--compare-metis]
 *           [--p2p-checks N] [--nf-table-max K] [--phast-only] [--variants KEY,..]
 *
 *   --small   two generated graphs (road-like and grid, 2,000 nodes), and the road-like one again
 *             with 2 KiB of shared memory per plan bin (GPATH_CCH_PLAN_SMEM: bins that do not fit)
 *             and a many-phase plan (4x4x64): every GPU operation once, checked; exit status 1 on
 *             a mismatch (for compute-sanitizer memcheck / racecheck)
 *   --fast    no near-far runs and no timed Dijkstra (Dijkstra still checks PHAST on 2 sources)
 *   --phast-only  no p2p queries and no tables (customization and one-to-all only)
 *   --variants  time only these of the sweep variants (step 4 below), by key: nobord, nopass,
 *             pmb7, pmb12, pmb14, pf1, pf2, nosort, nogather, noflat, nowmulti, before, wkw2,
 *             wkw8, wkw16, w64, allcells, nograph, nowarps, block, chains (default: all)
 *   --plans   PHAST also through these plans (engine/cch_plan.h thresholds base, base*ratio, ...;
 *             nodes per bin; MODE the sweep flags, engine/cch.h gp_cch_gpu_sweep, default 0),
 *             each checked against the CPU
 *   --order   the CCH order (engine/cch_order.c): nd, the parallel nested dissection on all CPUs
 *             (default), or metis, one METIS_NodeND call
 *   --compare-metis  with --order nd: also the single METIS_NodeND call on each graph, its time
 *             and its contraction's size beside the parallel order's (not for 24M nodes: minutes)
 *   --p2p-checks N  p2p queries checked against (and timed beside) the CPU backend's AUTO
 *             (default 20; each costs a Dijkstra-family search over the graph)
 *   --nf-table-max K  the near-far table baseline only for tables of at most K x K (a 1000 x 1000
 *             near-far table on 24M nodes takes a thousand one-to-all searches)
 *   GPATH_LOG_LEVEL=debug  the order's and the contraction's phase times on stderr
 *   default   graphs DIR/dimacs/USA-road-d.NY.gr.gz and BAY, the road-like generator at
 *             gen:1000000 and gen:4000000, the grid-like one at grid:10000, grid:30000,
 *             grid:100000 (--graphs replaces the list: any gp_graph_load spec). The size guard
 *             (cch_max_triangles_per_node) is lifted so grids are measured too. Per graph:
 *             1. order and contraction seconds, CCH edges, triangles, levels, MiB;
 *             2. customization: CPU (all threads) and GPU (device ms and end-to-end, checked
 *                bit-identical), and after changing 1% of the arc costs (GPU checked again);
 *             3. p2p: CCH query with path unpacking (CPU, median / p90 of --queries pairs, the
 *                first 20 checked against Dijkstra) vs the CPU backend's AUTO (A* / bidir);
 *             4. one-to-all: GPU PHAST 1 source and 16 sources per sweep (device ms, end-to-end)
 *                through the service's sweep (the plan with its top table and piece tables,
 *                warp bins for one source, the launches as a CUDA graph) and, on the same
 *                sources, the plan with its top table only (no piece tables), the plan without
 *                tables and the level sweep (the ratios; each variant checked against CPU PHAST
 *                on its own: a failing one prints FAIL, the others are still timed, exit status
 *                1), issue 18's variants (without the graph, without warp bins, neither, chains;
 *                each checked the same way), the plan's per-phase device times (stderr,
 *                GPATH_CCH_PLAN_PROFILE: per phase its path, bins, largest bin and piece, shared
 *                memory, blocks per SM, GB/s), CPU PHAST,
 *                vs near-far GPU SSSP (device ms) and CPU Dijkstra; every GPU tree checked;
 *             5. tables 100x100 and 1000x1000: GPU RPHAST, CPU buckets vs near-far GPU tables
 *                (and the CPU backend's Dijkstra table at 100x100); checked.
 *             --plot FILE: one line per graph: name n dijkstra_ms nearfar_ms cch_p2p_us phast_ms.
 *
 * Versions: kernels/cch.cu's header lists them with their H100 numbers (v1 thread-per-item
 * sweeps, v2 warp-per-item with the top levels in shared memory, v3 one cooperative kernel below
 * the top, v4 the plan sweep); the full runs are
 * bench/results/2026-11-25-NVIDIA-H100-80GB-HBM3-gpu-cch*.md and ...-gpu-phast.md.
 */
#include "engine/backend.h"
#include "engine/cch.h"
#include "engine/cuda_sssp.h"

#include <cuda_runtime.h>
#include <sys/resource.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL: ");                                                                      \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static void die(const char *what, const gp_err &e) {
    fprintf(stderr, "lab_cch: %s: %s\n", what, e.msg);
    exit(2);
}

static uint64_t rs = 0x1ab;
static uint64_t rnd() {
    uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
static double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(p * v.size()))];
}

struct lab {
    gp_backend *cpu = NULL, *cpu1 = NULL;
    gp_sssp_ws *ws = NULL;
    int reps = 7, queries = 1000, p2p_checks = 20;
    uint32_t nf_table_max = UINT32_MAX; /* --nf-table-max: near-far tables up to this size only */
    bool fast = false;                           /* --fast: no near-far runs, no timed Dijkstra */
    bool metis = false;                          /* --order metis */
    bool compare = false;                        /* --compare-metis */
    bool phast_only = false;                     /* --phast-only: no p2p, no tables */
    std::vector<std::string> variants;           /* --variants: the sweep variants to time */
    std::vector<std::vector<uint32_t>> plans; /* --plans: base x ratio x bin cap (x mode) */
    FILE *plot = NULL;
};

/* GPU customization equals the CPU's (c holds the CPU result on entry). */
static void check_gpu_custom(gp_cch *c, const char *what) {
    gp_err err;
    gp_err_clear(&err);
    size_t m = c->topo->m;
    std::vector<uint32_t> fw(c->fw, c->fw + m), bw(c->bw, c->bw + m), fm(c->fmid, c->fmid + m),
        bm(c->bmid, c->bmid + m);
    if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
    CHECK(memcmp(fw.data(), c->fw, m * 4) == 0 && memcmp(bw.data(), c->bw, m * 4) == 0 &&
              memcmp(fm.data(), c->fmid, m * 4) == 0 && memcmp(bm.data(), c->bmid, m * 4) == 0,
          "%s: GPU customization (weights, witnesses) differs from the CPU's", what);
}

static void run_graph(lab &L, const char *spec, bool small) {
    gp_err err;
    gp_err_clear(&err);
    double t0 = gp_now();
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) die(spec, err);
    double load_s = gp_now() - t0;
    gp_dgraph *dgr = NULL; /* near-far baseline */
    if (gp_dgraph_new(g, &dgr, &err)) die("graph upload", err);
    const char *name = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
    uint32_t n = g->n;
    printf("\n## %s: %u nodes, %u arcs (loaded in %.1f s)\n\n", name, n, g->m, load_s);
    fflush(stdout);
    gp_cch_cache_clear();
    gp_cch *c = NULL;
    t0 = gp_now();
    if (gp_cch_new(g, 0, &c, &err)) die("cch", err);
    double build_s = gp_now() - t0;
    const gp_cch_topo *t = c->topo;
    char how[64];
    if (L.metis) snprintf(how, sizeof how, "one METIS_NodeND call");
    else snprintf(how, sizeof how, "parallel nested dissection, %d threads", gp_cch_threads(0));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("- preprocessing: order (%s) %.2f s, contraction %.2f s, first customization "
           "%.3f s, total %.2f s; %u CCH edges (%.2f per node), %llu triangles, %u levels, widest "
           "up-degree %u; CCH memory %.1f MiB (graph %.1f MiB); process peak RSS so far %.0f MiB\n",
           how, t->order_s, t->contract_s, c->custom_s, build_s, t->m, (double)t->m / n,
           (unsigned long long)t->ntri, t->nlevels, t->width, gp_cch_bytes(c) / 1048576.0,
           gp_graph_memory(g) / 1048576.0, ru.ru_maxrss / 1024.0);
    if (L.compare && !L.metis) { /* the single call on the same graph */
        std::vector<uint32_t> rank(n);
        gp_cch_topo *ts = NULL;
        double a = gp_now();
        if (gp_cch_order_metis(g, rank.data(), &err)) die("metis order", err);
        double ord = gp_now() - a;
        a = gp_now();
        if (gp_cch_topo_build(g, rank.data(), &ts, &err)) die("contraction", err);
        printf("- the single METIS_NodeND call: order %.2f s (parallel %.1fx faster), contraction "
               "%.2f s; %u CCH edges, %llu triangles, %u levels, widest up-degree %u (parallel / "
               "single: edges %.3f, triangles %.3f, levels %.2f)\n",
               ord, ord / t->order_s, gp_now() - a, ts->m, (unsigned long long)ts->ntri,
               ts->nlevels, ts->width, (double)t->m / ts->m, (double)t->ntri / (double)ts->ntri,
               (double)t->nlevels / ts->nlevels);
        gp_cch_topo_unref(ts);
    }
    fflush(stdout);
    /* customization */
    std::vector<double> cc, cg, cge;
    int reps = small ? 1 : L.reps;
    for (int r = 0; r < reps; r++) {
        if (gp_cch_customize(c, 0, &err)) die("customize", err);
        cc.push_back(c->custom_s * 1e3);
    }
    check_gpu_custom(c, name);
    for (int r = 0; r < reps; r++) {
        if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
        cg.push_back(gp_cch_gpu_last_ms(c));
        cge.push_back(c->custom_s * 1e3);
    }
    /* 1% of the arcs' costs change */
    std::vector<uint32_t> ofw(c->ofw, c->ofw + t->m), obw(c->obw, c->obw + t->m);
    uint32_t changed = 0;
    for (uint32_t e = 0; e < t->m; e++) {
        if (c->ofw[e] != GP_CCH_INF && rnd() % 100 == 0) c->ofw[e] = c->ofw[e] / 2 * 3 + 1, changed++;
        if (c->obw[e] != GP_CCH_INF && rnd() % 100 == 0) c->obw[e] = c->obw[e] / 2 * 3 + 1, changed++;
    }
    t0 = gp_now();
    if (gp_cch_customize(c, 0, &err)) die("customize 1%", err);
    double cpu1 = (gp_now() - t0) * 1e3;
    check_gpu_custom(c, "after 1% changes");
    double gpu1 = gp_cch_gpu_last_ms(c), gpu1e = c->custom_s * 1e3;
    memcpy(c->ofw, ofw.data(), (size_t)t->m * 4);
    memcpy(c->obw, obw.data(), (size_t)t->m * 4);
    if (gp_cch_gpu_customize(c, 0, &err)) die("gpu customize", err);
    printf("- customization: CPU (all threads) %.1f ms; GPU %.2f ms device, %.1f ms end-to-end "
           "(metric upload + copy back); after changing %u arc costs (1%%): CPU %.1f ms, GPU %.2f ms "
           "device / %.1f ms end-to-end; GPU == CPU bit for bit\n",
           median(cc), median(cg), median(cge), changed, cpu1, gpu1, gpu1e);
    fflush(stdout);

    /* p2p: timed after a warm-up over as many other random pairs (untimed), as in a service that
     * answers routes one after another; the customization and the checks before it left the
     * caches cold */
    int nq = small ? 50 : L.queries;
    auto warm_up = [&](const char *what) {
        for (int q = 0; q < nq; q++) {
            gp_path p;
            if (gp_cch_p2p(c, (uint32_t)(rnd() % n), (uint32_t)(rnd() % n), &p, &err)) die(what, err);
            gp_path_free(&p);
        }
    };
    std::vector<double> qp, qb;
    if (L.phast_only) nq = 0; /* --phast-only: no p2p */
    else warm_up("p2p warm-up");
    std::vector<uint32_t> qs(nq), qt(nq);
    std::vector<uint64_t> qd(nq);
    for (int q = 0; q < nq; q++) {
        uint32_t s = (uint32_t)(rnd() % n), tt = (uint32_t)(rnd() % n);
        gp_path p;
        double a = gp_now();
        if (gp_cch_p2p(c, s, tt, &p, &err)) die("p2p", err);
        qp.push_back((gp_now() - a) * 1e6);
        qs[q] = s;
        qt[q] = tt;
        qd[q] = p.dist;
        if (q < (small ? 50 : L.p2p_checks)) {
            gp_path p2;
            a = gp_now();
            if (L.cpu->ops->p2p(L.cpu, g, s, tt, GP_P2P_AUTO, &p2, &err)) die("p2p ref", err);
            qb.push_back((gp_now() - a) * 1e6);
            CHECK(p.dist == p2.dist, "%s: p2p %u->%u cch %llu dijkstra %llu", name, s, tt,
                  (unsigned long long)p.dist, (unsigned long long)p2.dist);
            gp_path_free(&p2);
        }
        gp_path_free(&p);
    }
    if (nq) printf("- p2p (CPU, one thread, path unpacked to original arcs): CCH median %.1f us, p90 %.1f "
           "us over %d random pairs (after a warm-up over %d others); CPU backend AUTO (%s) median "
           "%.0f us over %zu: %.0fx\n",
           median(qp), pct(qp, 0.9), nq, nq, g->lon ? "A*" : "bidirectional Dijkstra", median(qb),
           qb.size(), median(qb) / median(qp));
    if (nq) { /* the same pairs over perfect customization's pruned arcs: what the service answers with
       * once its background pass is through (cch_perfect = auto, the default) */
        double a = gp_now();
        if (gp_cch_perfect(c, 0, &err)) die("perfect customization", err);
        double perfect_ms = (gp_now() - a) * 1e3;
        warm_up("p2p warm-up (perfect)");
        std::vector<double> qq;
        for (int q = 0; q < nq; q++) {
            gp_path p;
            a = gp_now();
            if (gp_cch_p2p(c, qs[q], qt[q], &p, &err)) die("p2p (perfect)", err);
            qq.push_back((gp_now() - a) * 1e6);
            CHECK(p.dist == qd[q], "%s: p2p %u->%u perfect %llu basic %llu", name, qs[q], qt[q],
                  (unsigned long long)p.dist, (unsigned long long)qd[q]);
            gp_path_free(&p);
        }
        printf("- p2p over perfect customization's pruned arcs (the service's default, cch_perfect="
               "auto): median %.1f us, p90 %.1f us over the same pairs, after a warm-up over as many "
               "others (%.2fx the basic arcs'); the "
               "perfect pass %.0f ms (all threads), keeping %u + %u of %u + %u arcs\n",
               median(qq), pct(qq, 0.9), median(qq) / median(qp), perfect_ms, c->q[1].first[n],
               c->q[0].first[n], t->m, t->m);
    }

    /* one-to-all: the plan sweep (default) and the level sweep on the same sources; then the
     * plan variants of --plans */
    std::vector<uint64_t> dg((size_t)n * 16), dc(n), dn(n);
    std::vector<std::vector<uint32_t>> srcs(reps, std::vector<uint32_t>(16));
    for (auto &v : srcs)
        for (auto &x : v) x = (uint32_t)(rnd() % n);
    std::vector<double> ph1, ph1e, ph16, ph16e, phc, nf, dj, lv1, lv16;
    /* one mode: k=1 and k=16 per rep, each k=1 tree and rows 0, 5, 10, 15 of the first k=16 sweep
     * checked against CPU PHAST */
    auto one_to_all = [&](const char *what, std::vector<double> &t1, std::vector<double> *t1e,
                          std::vector<double> &t16, std::vector<double> *t16e, bool cpu_time) {
        for (int r = 0; r < reps; r++) {
            uint32_t *src = srcs[r].data();
            double a = gp_now();
            if (gp_cch_gpu_sssp(c, src, 1, dg.data(), &err)) die("phast", err);
            if (t1e) t1e->push_back((gp_now() - a) * 1e3);
            t1.push_back(gp_cch_gpu_last_ms(c));
            a = gp_now();
            if (gp_cch_sssp(c, src[0], GP_INF, dc.data(), &err)) die("cpu phast", err);
            if (cpu_time) phc.push_back((gp_now() - a) * 1e3);
            CHECK(memcmp(dc.data(), dg.data(), (size_t)n * 8) == 0, "%s: GPU PHAST (%s) != CPU PHAST",
                  name, what);
            a = gp_now();
            if (gp_cch_gpu_sssp(c, src, 16, dg.data(), &err)) die("phast16", err);
            if (t16e) t16e->push_back((gp_now() - a) * 1e3);
            t16.push_back(gp_cch_gpu_last_ms(c));
            if (r == 0) {
                for (int i = 0; i < 16; i += 5) {
                    if (gp_cch_sssp(c, src[i], GP_INF, dc.data(), &err)) die("cpu phast", err);
                    CHECK(memcmp(dc.data(), dg.data() + (size_t)i * n, (size_t)n * 8) == 0,
                          "%s: PHAST x16 (%s) row %d != CPU", name, what, i);
                }
            }
        }
    };
    /* the service's sweep: the plan with both tables, the table phases flat, warp bins (for 1 and
     * for 16 sources) reading only the last phase's cells with an entry, the launches as one CUDA
     * graph, the warp bins' output stored in node order within a bin, the largest flat phases
     * gathered for several sources, the warp bins of 4 sources a warp walking passes, in the
     * order of their smallest node (SVC = GP_DCCH_SWEEP_BORDER | _PASSES | _GATHER | _OSORT |
     * _FLAT | _WMULTI | _SKIP | _WARPS | _GRAPH, the flags gp_dcch_new sets) */
    const int SVC = 32768 | 16384 | 8192 | 4096 | 2048 | 256 | 64 | 32 | 16;
    if (gp_cch_gpu_sweep(c, SVC, 0, 0, 0, &err)) die("plan sweep", err);
    one_to_all("plan with top and piece tables", ph1, &ph1e, ph16, &ph16e, true);
    std::vector<double> tp1, tp16; /* the plan with its top table only (mode 3), same sources */
    if (gp_cch_gpu_sweep(c, 3 | SVC, 0, 0, 0, &err)) die("plan sweep", err);
    one_to_all("plan without piece tables", tp1, NULL, tp16, NULL, false);
    std::vector<double> nt1, nt16; /* the plan without tables (mode 2), same sources */
    if (gp_cch_gpu_sweep(c, 2 | SVC, 0, 0, 0, &err)) die("plan sweep", err);
    one_to_all("plan without tables", nt1, NULL, nt16, NULL, false);
    /* issue 18's variants of the service's sweep (engine/cuda_cch.h), same sources, each
     * checked against CPU PHAST: without the flat table phases (2048), without warp bins for
     * several sources (256), neither (the sweep before them: 64 | 32 | 16), 2 sources per warp
     * (GPATH_CCH_WKW=2), 64-bit warp-bin cells (1024), the last phase reading every cell (64),
     * without the CUDA graph (16), without warp bins (32 and 256), the block sweep launch by
     * launch (0), chains (4 | 16; measured at 84c3c70 and after: they lost) */
    struct xvar {
        const char *key, *name; /* key: --variants picks by it */
        int mode;
        const char *env, *val; /* an environment variable set for the variant (NULL: none) */
        std::vector<double> t1, t16;
    };
    std::vector<xvar> all = {
        {"nobord", "warp bins in plan order", SVC & ~32768, NULL, NULL, {}, {}},
        {"nopass", "warp bins step by step", SVC & ~16384, NULL, NULL, {}, {}},
        {"pmb7", "passes at 7 blocks per SM", SVC, "GPATH_CCH_PMB", "7", {}, {}},
        {"pmb12", "passes at 12 blocks of 4 warps", SVC, "GPATH_CCH_PMB", "12", {}, {}},
        {"pmb14", "passes at 14 blocks of 4 warps", SVC, "GPATH_CCH_PMB", "14", {}, {}},
        {"pf1", "passes prefetching the inner arcs", SVC, "GPATH_CCH_PREFETCH", "1", {}, {}},
        {"pf2", "passes prefetching all arcs", SVC, "GPATH_CCH_PREFETCH", "2", {}, {}},
        {"nosort", "output in position order", SVC & ~4096, NULL, NULL, {}, {}},
        {"nogather", "flat phases by atomics", SVC & ~8192, NULL, NULL, {}, {}},
        {"noflat", "without flat table phases", SVC & ~2048, NULL, NULL, {}, {}},
        {"nowmulti", "without warp bins for k > 1", SVC & ~256, NULL, NULL, {}, {}},
        {"before", "neither (the sweep before)", 64 | 32 | 16, NULL, NULL, {}, {}},
        {"wkw2", "2 sources a warp", SVC, "GPATH_CCH_WKW", "2", {}, {}},
        {"wkw8", "8 sources a warp", SVC, "GPATH_CCH_WKW", "8", {}, {}},
        {"wkw16", "16 sources a warp", SVC, "GPATH_CCH_WKW", "16", {}, {}},
        {"w64", "64-bit warp-bin cells", SVC | 1024, NULL, NULL, {}, {}},
        {"allcells", "reading every cell", SVC & ~64, NULL, NULL, {}, {}},
        {"nograph", "without the graph", SVC & ~16, NULL, NULL, {}, {}},
        {"nowarps", "without warp bins", SVC & ~(32 | 256), NULL, NULL, {}, {}},
        {"block", "block sweep, launch by launch", 0, NULL, NULL, {}, {}},
        {"chains", "chains + graph", 4 | 16, NULL, NULL, {}, {}}};
    std::vector<xvar> xv;
    for (auto &v : all) { /* --variants KEY,..: those only (default: all) */
        bool on = L.variants.empty();
        for (auto &k : L.variants) on |= k == v.key;
        if (on) xv.push_back(v);
    }
    for (auto &v : xv) {
        if (v.env) setenv(v.env, v.val, 1);
        if (gp_cch_gpu_sweep(c, v.mode, 0, 0, 0, &err)) die("plan sweep variant", err);
        one_to_all(v.name, v.t1, NULL, v.t16, NULL, false);
        if (v.env) unsetenv(v.env);
    }
    if (!small) { /* where the plan sweep's time goes: per-phase device times (stderr) */
        fflush(stdout);
        setenv("GPATH_CCH_PLAN_PROFILE", "1", 1);
        for (int mode : {SVC & ~16, SVC & ~16 & ~16384, 64 | 32, 0}) { /* (one by one: no graph) */
            if (gp_cch_gpu_sweep(c, mode, 0, 0, 0, &err)) die("plan sweep", err);
            for (uint32_t k : {1u, 16u})
                if (gp_cch_gpu_sssp(c, srcs[0].data(), k, dg.data(), &err)) die("phast profile", err);
        }
        unsetenv("GPATH_CCH_PLAN_PROFILE");
    }
    if (gp_cch_gpu_sweep(c, 1, 0, 0, 0, &err)) die("level sweep", err);
    one_to_all("levels", lv1, NULL, lv16, NULL, false);
    if (gp_cch_gpu_sweep(c, SVC, 0, 0, 0, &err)) die("plan sweep", err);
    for (int r = 0; r < reps && !L.fast; r++) { /* the older engines, from the same sources */
        uint32_t s0 = srcs[r][0];
        if (gp_cch_sssp(c, s0, GP_INF, dc.data(), &err)) die("cpu phast", err);
        gp_sssp_stats st;
        memset(&st, 0, sizeof st);
        gp_sssp_params p = {GP_SSSP_NEARFAR, 0, 0, 0};
        if (gp_cuda_sssp(L.ws, dgr, &p, s0, GP_INF, r == 0 ? dn.data() : NULL, NULL, &st, &err))
            die("near-far", err);
        nf.push_back(st.gpu_ms);
        if (r == 0) {
            CHECK(memcmp(dn.data(), dc.data(), (size_t)n * 8) == 0, "%s: PHAST != near-far", name);
        }
        if (r < 3) {
            double a = gp_now();
            if (L.cpu1->ops->sssp(L.cpu1, g, s0, GP_INF, dn.data(), NULL, &err)) die("dijkstra", err);
            dj.push_back((gp_now() - a) * 1e3);
            CHECK(memcmp(dn.data(), dc.data(), (size_t)n * 8) == 0, "%s: PHAST != Dijkstra", name);
        }
    }
    if (L.fast) {
        dn.assign(n, 0);
        for (int r = 0; r < std::min(reps, 2); r++) { /* Dijkstra still checks PHAST */
            if (gp_cch_sssp(c, srcs[r][0], GP_INF, dc.data(), &err)) die("cpu phast", err);
            if (L.cpu->ops->sssp(L.cpu, g, srcs[r][0], GP_INF, dn.data(), NULL, &err))
                die("dijkstra", err);
            CHECK(memcmp(dn.data(), dc.data(), (size_t)n * 8) == 0, "%s: PHAST != Dijkstra", name);
        }
        printf("- one-to-all: GPU PHAST %.3f ms device (%.2f ms end-to-end with the upward search "
               "and the %.1f MB copy to the host); 16 sources per sweep %.3f ms device per tree "
               "(%.2f ms end-to-end per tree); CPU PHAST (1 thread) %.1f ms; (--fast: no near-far, "
               "no timed Dijkstra)\n",
               median(ph1), median(ph1e), n * 8 / 1e6, median(ph16) / 16, median(ph16e) / 16,
               median(phc));
    } else {
        printf("- one-to-all: GPU PHAST %.3f ms device (%.2f ms end-to-end with the upward search "
               "and the %.1f MB copy to the host); 16 sources per sweep %.3f ms device per tree "
               "(%.2f ms end-to-end per tree); CPU PHAST (1 thread) %.1f ms; near-far GPU SSSP "
               "%.2f ms device (%.0fx PHAST); CPU Dijkstra (1 thread) %.0f ms (%.0fx PHAST)\n",
               median(ph1), median(ph1e), n * 8 / 1e6, median(ph16) / 16, median(ph16e) / 16,
               median(phc), median(nf), median(nf) / median(ph1), median(dj),
               median(dj) / median(ph1));
    }
    printf("- PHAST sweep, plan vs levels (same sources, same run; device ms): 1 source %.3f vs "
           "%.3f (%.2fx); 16 per sweep %.3f vs %.3f ms per tree (%.2fx)\n",
           median(ph1), median(lv1), median(lv1) / median(ph1), median(ph16) / 16,
           median(lv16) / 16, median(lv16) / median(ph16));
    printf("- PHAST sweep, plan with vs without its piece tables (top table in both; same sources, "
           "same run; device ms): 1 source %.3f vs %.3f (%.2fx); 16 per sweep %.3f vs %.3f ms per "
           "tree (%.2fx)\n",
           median(ph1), median(tp1), median(tp1) / median(ph1), median(ph16) / 16,
           median(tp16) / 16, median(tp16) / median(ph16));
    printf("- PHAST sweep, plan with vs without any table (same sources, same run; device ms): "
           "1 source %.3f vs %.3f (%.2fx); 16 per sweep %.3f vs %.3f ms per tree (%.2fx)\n",
           median(ph1), median(nt1), median(nt1) / median(ph1), median(ph16) / 16,
           median(nt16) / 16, median(nt16) / median(ph16));
    printf("- PHAST sweep, issue 18 variants (default plan; same sources, same run; device ms; "
           "the service's sweep (\"default\": flat table phases, warp bins for 1 and 16 sources "
           "reading only the last phase's cells with an entry, CUDA graph) / variant in "
           "parentheses, > 1 = the variant is faster): 1 source default %.3f",
           median(ph1));
    for (auto &v : xv)
        printf(", %s %.3f (%.2fx)", v.name, median(v.t1), median(ph1) / median(v.t1));
    printf("; 16 per sweep per tree default %.3f", median(ph16) / 16);
    for (auto &v : xv)
        printf(", %s %.3f (%.2fx)", v.name, median(v.t16) / 16, median(ph16) / median(v.t16));
    printf("\n");
    fflush(stdout);
    for (auto &v : L.plans) { /* plan variants: base x ratio x bin cap (x mode) */
        if (gp_cch_gpu_sweep(c, (int)v[3], v[0], v[1], v[2], &err)) die("plan variant", err);
        std::vector<double> v1, v16;
        one_to_all("plan variant", v1, NULL, v16, NULL, false);
        printf("- plan %ux%ux%u mode %u: 1 source %.3f ms, 16 per sweep %.3f ms per tree "
               "(device)\n", v[0], v[1], v[2], v[3], median(v1), median(v16) / 16);
        if (getenv("GPATH_CCH_PLAN_PROFILE_PLANS")) { /* where this plan's time goes (stderr) */
            fflush(stdout);
            setenv("GPATH_CCH_PLAN_PROFILE", "1", 1);
            for (uint32_t k : {1u, 16u})
                if (gp_cch_gpu_sssp(c, srcs[0].data(), k, dg.data(), &err)) die("phast profile", err);
            unsetenv("GPATH_CCH_PLAN_PROFILE");
        }
        fflush(stdout);
    }
    if (!L.plans.empty() && gp_cch_gpu_sweep(c, SVC, 256, 16, 0, &err)) die("plan", err);
    /* (a plan variant's own topology part: back to the default plan, mode 0 as before it) */
    if (small) { /* many phases and small bins: 4 x 4, 64 nodes per bin */
        if (gp_cch_gpu_sweep(c, 0, 4, 4, 64, &err)) die("plan variant", err);
        std::vector<double> v1, v16;
        one_to_all("plan 4x4x64", v1, NULL, v16, NULL, false);
        if (gp_cch_gpu_sweep(c, 64 | 48, 4, 4, 64, &err)) die("plan variant", err); /* skip, warps, graph */
        one_to_all("plan 4x4x64, warps", v1, NULL, v16, NULL, false);
        /* flat table phases and warp bins for 16 sources (4, then 1 a warp); 32-bit cells
         * saturating (then again with 64-bit ones); 64-bit cells; the default plan */
        if (gp_cch_gpu_sweep(c, 2048 | 256 | 64 | 48, 4, 4, 64, &err)) die("plan variant", err);
        one_to_all("plan 4x4x64, flat, warps for k > 1", v1, NULL, v16, NULL, false);
        setenv("GPATH_CCH_WKW", "1", 1);
        one_to_all("plan 4x4x64, flat, warps for k > 1, 1 a warp", v1, NULL, v16, NULL, false);
        unsetenv("GPATH_CCH_WKW");
        setenv("GPATH_CCH_SAT", "300", 1);
        if (gp_cch_gpu_sweep(c, 2048 | 256 | 64 | 48, 4, 4, 64, &err)) die("plan variant", err);
        one_to_all("plan 4x4x64, saturating", v1, NULL, v16, NULL, false);
        unsetenv("GPATH_CCH_SAT");
        if (gp_cch_gpu_sweep(c, 1024 | 256 | 64 | 48, 4, 4, 64, &err)) die("plan variant", err);
        one_to_all("plan 4x4x64, warps for k > 1, 64-bit cells", v1, NULL, v16, NULL, false);
        if (gp_cch_gpu_sweep(c, SVC, 0, 0, 0, &err)) die("plan variant", err);
        one_to_all("default plan", v1, NULL, v16, NULL, false);
        if (gp_cch_gpu_sweep(c, SVC, 256, 16, 0, &err)) die("plan", err);
    }

    /* tables */
    uint32_t sizes[2] = {100, 1000};
    for (int si = 0; si < (L.phast_only ? 0 : small ? 1 : 2); si++) { /* (--phast-only: none) */
        uint32_t k = sizes[si];
        if (k > n) k = n;
        std::vector<uint32_t> S(k), T(k);
        std::vector<uint64_t> o1((size_t)k * k), o2((size_t)k * k), o3((size_t)k * k);
        std::vector<double> tg, tgd, tc, tn;
        for (int r = 0; r < (small ? 1 : std::min(reps, 3)); r++) {
            for (uint32_t i = 0; i < k; i++) S[i] = (uint32_t)(rnd() % n), T[i] = (uint32_t)(rnd() % n);
            double a = gp_now();
            if (gp_cch_gpu_table(c, S.data(), k, T.data(), k, o1.data(), &err)) die("rphast", err);
            tg.push_back((gp_now() - a) * 1e3);
            tgd.push_back(gp_cch_gpu_last_ms(c));
            a = gp_now();
            if (gp_cch_table(c, S.data(), k, T.data(), k, 0, o2.data(), &err)) die("buckets", err);
            tc.push_back((gp_now() - a) * 1e3);
            CHECK(o1 == o2, "%s: RPHAST %ux%u != buckets", name, k, k);
            gp_sssp_stats st;
            memset(&st, 0, sizeof st);
            gp_sssp_params p = {GP_SSSP_NEARFAR, 0, 0, 0};
            if (r == 0 && !L.fast && k <= L.nf_table_max) {
                a = gp_now();
                if (gp_cuda_table(L.ws, dgr, &p, S.data(), k, T.data(), k,
                                  o3.data(), &st, &err))
                    die("near-far table", err);
                tn.push_back((gp_now() - a) * 1e3);
                CHECK(o1 == o3, "%s: RPHAST %ux%u != near-far table", name, k, k);
            }
        }
        if (L.fast || k > L.nf_table_max)
            printf("- table %ux%u: GPU RPHAST %.2f ms end-to-end (%.2f ms device); CPU buckets "
                   "(all threads) %.1f ms%s\n",
                   k, k, median(tg), median(tgd), median(tc),
                   L.fast ? "" : "; near-far table not run (--nf-table-max)");
        else
            printf("- table %ux%u: GPU RPHAST %.2f ms end-to-end (%.2f ms device); CPU buckets (all "
                   "threads) %.1f ms; near-far GPU table %.0f ms (%.0fx RPHAST)\n",
                   k, k, median(tg), median(tgd), median(tc), median(tn), median(tn) / median(tg));
        fflush(stdout);
    }
    if (L.plot)
        fprintf(L.plot, "%s %u %.3f %.3f %.3f %.4f\n", name, n, median(dj), median(nf), median(qp),
                median(ph1));
    gp_cch_free(c);
    gp_dgraph_free(dgr);
    gp_graph_unref(g);
}

/* "a,b,,c" -> {"a", "b", "c"} (empty items dropped) */
static std::vector<std::string> split_commas(const char *list) {
    std::vector<std::string> out;
    const std::string s(list);
    for (size_t a = 0; a <= s.size();) {
        size_t b = s.find(',', a);
        if (b == std::string::npos) b = s.size();
        if (b > a) out.push_back(s.substr(a, b - a));
        a = b + 1;
    }
    return out;
}

int main(int argc, char **argv) {
    const char *data = "../shared/data", *graphs = NULL, *plot = NULL;
    lab L;
    bool small = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
        else if (!strcmp(argv[i], "--graphs") && i + 1 < argc) graphs = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) L.reps = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc) L.queries = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--plot") && i + 1 < argc) plot = argv[++i];
        else if (!strcmp(argv[i], "--small")) small = true;
        else if (!strcmp(argv[i], "--fast")) L.fast = true;
        else if (!strcmp(argv[i], "--compare-metis")) L.compare = true;
        else if (!strcmp(argv[i], "--phast-only")) L.phast_only = true;
        else if (!strcmp(argv[i], "--variants") && i + 1 < argc)
            L.variants = split_commas(argv[++i]);
        else if (!strcmp(argv[i], "--p2p-checks") && i + 1 < argc)
            L.p2p_checks = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--nf-table-max") && i + 1 < argc)
            L.nf_table_max = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--order") && i + 1 < argc) {
            const char *o = argv[++i];
            if (strcmp(o, "nd") && strcmp(o, "metis")) {
                fprintf(stderr, "lab_cch: --order wants nd or metis\n");
                return 2;
            }
            L.metis = !strcmp(o, "metis");
        }
        else if (!strcmp(argv[i], "--plans") && i + 1 < argc) {
            char *save = NULL;
            for (char *tok = strtok_r(argv[++i], ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                unsigned a = 0, b = 0, cc = 0, md = 0;
                int got = sscanf(tok, "%ux%ux%ux%u", &a, &b, &cc, &md);
                if (got < 3 || !a || b < 2 || !cc || (md & 3) == 1) {
                    fprintf(stderr, "lab_cch: --plans wants BASExRATIOxBINCAP[xMODE],...\n");
                    return 2;
                }
                L.plans.push_back({a, b, cc, md});
            }
        }
        else {
            fprintf(stderr, "usage: lab_cch [--data DIR] [--graphs SPEC,..] [--reps N] "
                            "[--queries N] [--plot FILE] [--small] [--fast] [--plans BxRxC,..] "
                            "[--order nd|metis] [--compare-metis] [--p2p-checks N] [--nf-table-max K] "
                            "[--phast-only] [--variants KEY,..]\n");
            return 2;
        }
    }
    gp_err err;
    gp_err_clear(&err);
    gp_cch_set_max_tri_per_node(0);
    int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL")); /* debug: order / contraction phases */
    if (lvl >= 0) gp_log_level = lvl;
    gp_cch_set_order(L.metis ? GP_CCH_ORDER_METIS : GP_CCH_ORDER_ND, 0);
    L.cpu = gp_cpu_backend_new(0, &err);
    L.cpu1 = gp_cpu_backend_new(1, &err);
    gp_backend *cuda = gp_cuda_backend_new(NULL, &err);
    if (!L.cpu || !L.cpu1 || !cuda) die("backends", err);
    L.ws = gp_sssp_ws_new(NULL, 1, 0, &err);
    if (!L.ws) die("workspace", err);
    if (plot && !(L.plot = fopen(plot, "w"))) {
        fprintf(stderr, "lab_cch: cannot write %s\n", plot);
        return 2;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("GPU %s (%d SMs), CPU threads: all online\n", prop.name, prop.multiProcessorCount);
    std::vector<std::string> specs;
    if (small) {
        setenv("GPATH_CCH_WBIN_MIN", "0", 1); /* warp bins in every phase they fit (sanitizers) */
        setenv("GPATH_CCH_WMULTI_MIN", "0", 1);
        setenv("GPATH_CCH_GATHER_MIN", "0", 1);
        specs.push_back("gen:2000:7");
        specs.push_back("grid:2000:7");
        specs.push_back("smem:gen:2000:7"); /* again, with 2 KiB of shared memory per plan bin */
    } else if (graphs) {
        specs = split_commas(graphs);
    } else {
        const char *ny[] = {"USA-road-d.NY.gr.gz", "USA-road-d.BAY.gr.gz"};
        for (const char *f : ny) {
            std::string p = std::string(data) + "/dimacs/" + f;
            FILE *fp = fopen(p.c_str(), "rb");
            if (fp) {
                fclose(fp);
                specs.push_back(p);
            } else {
                printf("(%s not found: skipped)\n", p.c_str());
            }
        }
        for (const char *sp : {"gen:1000000", "gen:4000000", "grid:10000", "grid:30000", "grid:100000"})
            specs.push_back(sp);
    }
    for (auto &s : specs) {
        if (s.compare(0, 5, "smem:") == 0) { /* the plan sweep's bins that do not fit */
            setenv("GPATH_CCH_PLAN_SMEM", "2048", 1);
            run_graph(L, s.c_str() + 5, small);
            unsetenv("GPATH_CCH_PLAN_SMEM");
        } else {
            run_graph(L, s.c_str(), small);
        }
    }
    if (L.plot) fclose(L.plot);
    printf("\n%s (%d failures)\n", failures ? "FAILED" : "OK", failures);
    gp_sssp_ws_free(L.ws);
    gp_backend_destroy(cuda);
    gp_backend_destroy(L.cpu);
    gp_backend_destroy(L.cpu1);
    return failures ? 1 : 0;
}
