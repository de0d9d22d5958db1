/* lab_sssp.cu - the SSSP kernel lab: validates every GPU variant against the CPU backend, then
 * times them (bench/gpu-sssp.sh runs it and writes bench/results/DATE-GPU-gpu-sssp.md).
 *
 *   lab_sssp [--data DIR] [--reps N] [--sizes N,N,..] [--sweep] [--sanitize] [--seed-max N]
 *
 *   --sanitize   small graphs only, every operation and variant once, checked (for
 *                compute-sanitizer memcheck / racecheck); exit status 1 on any mismatch
 *   default      1. random graphs (zero weights, self-loops, parallel arcs, unreachable nodes):
 *                   seed and near-far distance for distance vs the CPU, predecessors realise them;
 *                2. DIMACS rome99, NY, BAY from DIR/dimacs (default ../shared/data): the
 *                   reference/ answers (single-source reached/sum/max, 100 p2p distances) and the
 *                   CPU's distance arrays; generated road graphs (--sizes, default 1M,10M,24M)
 *                   vs the CPU from one source;
 *                3. --sweep: near-far bucket width x grid size on BAY and the generated graphs,
 *                   bucket x grid x batch for tables on BAY; the fastest settings are reported
 *                   (and re-validated), the timings below use the defaults of kernels/sssp.cu;
 *                4. one-to-all timings, median of --reps (default 5) random sources: device time
 *                   by CUDA events (dist + pred), end-to-end (plus the copy of dist and pred to
 *                   the host), the seed (graphs up to --seed-max nodes, default 1.1M), the CPU
 *                   backend with 1 thread and with every core;
 *                5. table 100x100 and 1000x1000 on BAY (end-to-end through the backend, and with
 *                   the table sweep's choice), checked against the CPU backend's table, with the
 *                   CPU's times.
 *
 * Versions (H100 80GB HBM3, CUDA 13.0, 132 SMs; built by the Makefile:
 *   nvcc -O3 -std=c++17 -lineinfo -Xcompiler -fPIC -gencode=arch=compute_90a,code=sm_90a
 *        -gencode=arch=compute_90,code=compute_90 -I. -o lab_sssp bench/lab_sssp.cu libgpath.a ...
 * device ms, median of 5 random sources, dist + pred; CPU = the CPU backend's Dijkstra):
 *   seed  Martin et al. 2009, 3 kernels per settled distance: NY 3650 ms (228,834 iterations),
 *         BAY 5147 ms (290,259), gen 1M 2627 ms (66,765; one run). Not run at 10M / 24M.
 *   v1    near-far, thread per queue item, read before atomicMin (delta inf, 132 blocks):
 *         NY 12.6, BAY 19.6, gen 1M 16.7, 10M 53.5, 24M 84.9 ms; +chaining: slower everywhere
 *         (24M: 335 ms at delta 64, 12 s at delta inf); table 100x100 on BAY 107 ms.
 *   v2    near-far, warp-cooperative arc expansion, no read before atomicMin (defaults: delta 64,
 *         132 blocks): NY 4.2, BAY 7.7, gen 1M 6.0, 10M 19.1, 24M 33.3 ms (CPU: 53, 57, 258,
 *         4667, 13735 ms); table on BAY (delta 16, 264 blocks, batches <= 512): 100x100 33 ms,
 *         1000x1000 232 ms (CPU 16 threads: 445 ms, 3877 ms).
 * Details and the sweeps: bench/results/2026-11-21-NVIDIA-H100-80GB-HBM3-gpu-sssp.md.
 */
#include "engine/backend.h"
#include "bench/lab_common.h"
#include "kernels/sssp.h"
#include "storage/source.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <unistd.h>
#include <vector>

struct Lab {
    gp_backend *cpu1 = nullptr, *cpuN = nullptr, *gpu = nullptr;
    gp_sssp_ws *ws = nullptr;
    int ncores = 1;
    int reps = 5;
    uint32_t seed_max = 1100000;
    gp_sssp_params tuned = {GP_SSSP_NEARFAR, 0, 0, 0};
    gp_sssp_params tuned_table = {GP_SSSP_NEARFAR, 0, 0, 0};
    std::string tuned_desc = "the defaults (kernels/sssp.cu): delta = 64 x mean arc weight, one "
                             "block per SM";
};

static gp_graph *random_graph(uint32_t n, uint32_t deg, uint32_t maxw, uint64_t seed) {
    lab_rng = seed;
    gp_err err = {0, {0}};
    gp_builder *b = gp_builder_new(1.0);
    for (uint32_t i = 1; i <= n; i++) gp_builder_add_node(b, i, 0, 0, 0, NULL, &err);
    uint64_t m = (uint64_t)n * deg;
    for (uint64_t k = 0; k < m; k++) {
        uint32_t u = 1 + (uint32_t)(rnd() % n), v;
        uint64_t r = rnd() % 100;
        if (r < 3) v = u;
        else if (r < 60) v = 1 + (uint32_t)((u + rnd() % 7) % n);
        else v = 1 + (uint32_t)(rnd() % n);
        if (u > n * 9 / 10) continue;
        if (v > n * 19 / 20) v = 1 + (v % (n / 2));
        uint32_t w = (rnd() % 8 == 0) ? 0 : (uint32_t)(rnd() % (maxw + 1));
        gp_builder_add_arc(b, u, v, w, &err);
        if (rnd() % 20 == 0) gp_builder_add_arc(b, u, v, w + 1, &err);
    }
    gp_graph *g = gp_builder_finish(b, "lab:random", "test", 1, &err);
    if (!g) die("random graph", err);
    return g;
}

/* Distances equal the reference; pred realises them and leads to src. Returns 1 when good. */
static int check_tree(const gp_graph *g, uint32_t src, const uint64_t *ref, const uint64_t *d,
                      const uint32_t *pred, const char *what) {
    for (uint32_t v = 0; v < g->n; v++)
        if (d[v] != ref[v]) {
            CHECK(0, "%s: src %u dist[%u] = %llu, CPU %llu", what, src, v, (unsigned long long)d[v],
                  (unsigned long long)ref[v]);
            return 0;
        }
    if (!pred) return 1;
    for (uint32_t v = 0; v < g->n; v++) {
        if (v == src || d[v] == GP_INF) {
            if (pred[v] != GP_NONE) {
                CHECK(0, "%s: pred[%u] should be none", what, v);
                return 0;
            }
            continue;
        }
        uint32_t p = pred[v];
        int ok = p < g->n;
        if (ok) {
            ok = 0;
            for (uint32_t e = g->row[p]; e < g->row[p + 1] && !ok; e++)
                ok = g->col[e] == v && d[p] + g->w[e] == d[v];
        }
        if (!ok) {
            CHECK(0, "%s: pred[%u] = %u does not realise the distance", what, v, p);
            return 0;
        }
    }
    std::vector<uint8_t> ok(g->n, 0); /* chains reach src: memoised walk */
    ok[src] = 1;
    std::vector<uint32_t> stack;
    for (uint32_t v = 0; v < g->n; v++) {
        if (d[v] == GP_INF || ok[v]) continue;
        uint32_t x = v;
        stack.clear();
        while (!ok[x] && stack.size() <= g->n) {
            stack.push_back(x);
            x = pred[x];
            if (x == GP_NONE) break;
        }
        if (x == GP_NONE || !ok[x]) {
            CHECK(0, "%s: predecessor chain from %u does not reach %u", what, v, src);
            return 0;
        }
        for (uint32_t y : stack) ok[y] = 1;
    }
    return 1;
}

/* One source: GPU (params p) vs CPU reference. */
static int validate_one(Lab &L, const gp_graph *g, const gp_dgraph *dg, const gp_sssp_params &p,
                        uint32_t src, const char *what) {
    std::vector<uint64_t> ref(g->n), d(g->n, 0xabababababababab);
    std::vector<uint32_t> pred(g->n, 0xabababab);
    gp_err err = {0, {0}};
    if (L.cpu1->ops->sssp(L.cpu1, g, src, GP_INF, ref.data(), NULL, &err)) die("cpu sssp", err);
    gp_sssp_stats st;
    int rc = gp_cuda_sssp(L.ws, dg, &p, src, GP_INF, d.data(), pred.data(), &st, &err);
    if (rc) {
        CHECK(0, "%s: gpu sssp: %s", what, err.msg);
        return 0;
    }
    return check_tree(g, src, ref.data(), d.data(), pred.data(), what);
}

static int validate_p2p(Lab &L, const gp_graph *g, const gp_dgraph *dg, const gp_sssp_params &p,
                        uint32_t s, uint32_t t, uint64_t expect, const char *what) {
    gp_path path = {0, nullptr, 0, 0};
    gp_err err = {0, {0}};
    int rc = gp_cuda_p2p(L.ws, dg, &p, s, t, &path.dist, &path.nodes, &path.len, NULL, &err);
    if (rc) {
        CHECK(0, "%s: gpu p2p: %s", what, err.msg);
        return 0;
    }
    int good = path.dist == expect;
    CHECK(good, "%s: p2p %u->%u = %llu, expected %llu", what, s, t, (unsigned long long)path.dist,
          (unsigned long long)expect);
    if (good && path.dist != GP_INF) {
        uint64_t sum = 0;
        good = path.len >= 1 && path.nodes[0] == s && path.nodes[path.len - 1] == t;
        for (uint32_t i = 0; good && i + 1 < path.len; i++) {
            uint64_t best = GP_INF;
            uint32_t u = path.nodes[i], v = path.nodes[i + 1];
            for (uint32_t e = g->row[u]; e < g->row[u + 1]; e++)
                if (g->col[e] == v && g->w[e] < best) best = g->w[e];
            good = best != GP_INF;
            sum += good ? best : 0;
        }
        good = good && sum == path.dist;
        CHECK(good, "%s: p2p %u->%u path is not a shortest path", what, s, t);
    }
    gp_path_free(&path);
    return good;
}

static int validate_table(Lab &L, const gp_graph *g, const gp_dgraph *dg, const gp_sssp_params &p,
                          uint32_t ns, uint32_t nt, const char *what) {
    std::vector<uint32_t> src(ns), dst(nt);
    for (auto &x : src) x = (uint32_t)(rnd() % g->n);
    for (auto &x : dst) x = (uint32_t)(rnd() % g->n);
    std::vector<uint64_t> ref((size_t)ns * nt), out((size_t)ns * nt, 0xabababababababab);
    gp_err err = {0, {0}};
    if (L.cpuN->ops->table(L.cpuN, g, src.data(), ns, dst.data(), nt, ref.data(), &err))
        die("cpu table", err);
    if (gp_cuda_table(L.ws, dg, &p, src.data(), ns, dst.data(), nt, out.data(), NULL, &err)) {
        CHECK(0, "%s: gpu table: %s", what, err.msg);
        return 0;
    }
    int good = ref == out;
    CHECK(good, "%s: table %ux%u differs from the CPU", what, ns, nt);
    return good;
}

static gp_dgraph *upload(const gp_graph *g) {
    gp_dgraph *dg = nullptr;
    gp_err err = {0, {0}};
    if (gp_dgraph_new(g, &dg, &err)) die("upload", err);
    return dg;
}

static const gp_sssp_params SEED = {GP_SSSP_SEED, 0, 0, 0};

/* ---- 1. random graphs */
static void validate_random(Lab &L, int small) {
    struct C {
        uint32_t n, deg, maxw;
    } cases[] = {{2, 1, 3},    {100, 3, 10},       {1000, 4, 1000},
                 {3000, 3, 5}, {20000, 5, 100000}, {2000, 40, 50}};
    int n_ok = 0, n_all = 0;
    const gp_sssp_params var[] = {L.tuned,
                                  {GP_SSSP_NEARFAR, 0, 0, 0},
                                  {GP_SSSP_NEARFAR, 1, 3, 0},
                                  {GP_SSSP_NEARFAR, 16, 0, 0},
                                  SEED};
    for (auto &c : cases) {
        if (small && c.n > 1000) continue;
        gp_graph *g = random_graph(c.n, c.deg, c.maxw, c.n * 7 + c.deg);
        gp_dgraph *dg = upload(g);
        for (auto &p : var)
            for (int k = 0; k < 2; k++) {
                uint32_t s = (uint32_t)(rnd() % g->n);
                n_all += 2;
                n_ok += validate_one(L, g, dg, p, s, "random");
                std::vector<uint64_t> ref(g->n);
                gp_err err = {0, {0}};
                uint32_t t = (uint32_t)(rnd() % g->n);
                L.cpu1->ops->sssp(L.cpu1, g, s, GP_INF, ref.data(), NULL, &err);
                n_ok += validate_p2p(L, g, dg, p, s, t, ref[t], "random");
            }
        n_all++;
        n_ok += validate_table(L, g, dg, L.tuned, 19, 23, "random");
        gp_dgraph_free(dg);
        gp_graph_unref(g);
    }
    printf("| random graphs (6 shapes, 5 settings incl. seed) | %d / %d checks equal the CPU |\n",
           n_ok, n_all);
}

/* ---- 2. DIMACS with reference answers */
struct RefLine {
    char kind;
    int64_t s, t;
    long long dist;
    long long reached, sum, max;
};

static std::vector<RefLine> read_ref(const std::string &path) {
    std::vector<RefLine> out;
    FILE *f = fopen(path.c_str(), "r");
    if (!f) return out;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        RefLine r = {0, 0, 0, 0, 0, 0, 0};
        long long a, b, c, d2, e2;
        if (sscanf(line, "d %lld %lld %lld", &a, &b, &c) == 3) {
            r.kind = 'd';
            r.s = a;
            r.t = b;
            r.dist = c;
            out.push_back(r);
        } else if (sscanf(line, "s %lld reached %lld sum %lld max %lld", &a, &b, &c, &d2) == 4) {
            r.kind = 's';
            r.s = a;
            r.reached = b;
            r.sum = c;
            r.max = d2;
            out.push_back(r);
        }
        (void)e2;
    }
    fclose(f);
    return out;
}

static gp_graph *load(const std::string &spec) {
    gp_err err = {0, {0}};
    double t0 = gp_now();
    gp_graph *g = gp_graph_load(spec.c_str(), NULL, &err);
    if (!g) {
        printf("| %s | not loaded: %s |\n", spec.c_str(), err.msg);
        return nullptr;
    }
    fprintf(stderr, "loaded %s: %u nodes, %u arcs in %.1f s\n", spec.c_str(), g->n, g->m,
            gp_now() - t0);
    return g;
}

static void validate_dimacs(Lab &L, const gp_graph *g, const gp_dgraph *dg, const std::string &ref,
                            const char *name) {
    std::vector<RefLine> lines = read_ref(ref);
    if (lines.empty()) {
        printf("| %s reference | missing (%s) |\n", name, ref.c_str());
        return;
    }
    int ok = 0, all = 0, seed_ok = 0, seed_all = 0;
    for (auto &r : lines) {
        uint32_t s = gp_graph_index(g, r.s);
        if (r.kind == 's') {
            std::vector<uint64_t> d(g->n);
            std::vector<uint32_t> pred(g->n);
            gp_err err = {0, {0}};
            all++;
            if (gp_cuda_sssp(L.ws, dg, &L.tuned, s, GP_INF, d.data(), pred.data(), NULL, &err)) {
                CHECK(0, "%s: sssp: %s", name, err.msg);
                continue;
            }
            long long reached = 0, sum = 0, mx = 0;
            for (uint32_t v = 0; v < g->n; v++)
                if (d[v] != GP_INF) {
                    reached++;
                    sum += (long long)d[v];
                    mx = std::max(mx, (long long)d[v]);
                }
            int good = reached == r.reached && sum == r.sum && mx == r.max;
            CHECK(good, "%s: s %lld: reached %lld sum %lld max %lld, expected %lld %lld %lld", name,
                  (long long)r.s, reached, sum, mx, r.reached, r.sum, r.max);
            all++;
            ok += good + validate_one(L, g, dg, L.tuned, s, name); /* and the CPU's array */
            if (seed_all == 0 || g->n < 10000) { /* the slow baseline: one source on big graphs */
                seed_all++;
                seed_ok += validate_one(L, g, dg, SEED, s, name);
            }
        } else {
            all++;
            ok +=
                validate_p2p(L, g, dg, L.tuned, s, gp_graph_index(g, r.t), (uint64_t)r.dist, name);
        }
    }
    printf("| %s: reference answers (%zu lines) and CPU arrays, near-far | %d / %d equal |\n", name,
           lines.size(), ok, all);
    printf("| %s: seed vs CPU | %d / %d sources equal |\n", name, seed_ok, seed_all);
}

/* ---- 3. sweep */
static double time_nf(Lab &L, const gp_dgraph *dg, const gp_sssp_params &p,
                      const std::vector<uint32_t> &srcs, uint32_t *iters) {
    std::vector<double> t;
    gp_err err = {0, {0}};
    for (uint32_t s : srcs) {
        gp_sssp_stats st;
        if (gp_cuda_sssp(L.ws, dg, &p, s, GP_INF, NULL, NULL, &st, &err)) die("sweep", err);
        t.push_back(st.gpu_ms);
        if (iters) *iters = st.iterations;
    }
    return median(t);
}

static void sweep(Lab &L, const gp_dgraph *dg, const char *name, int n_src, uint32_t n,
                  gp_sssp_params *best_out, double *best_ms) {
    std::vector<uint32_t> srcs;
    for (int i = 0; i < n_src; i++) srcs.push_back((uint32_t)(rnd() % n));
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const double deltas[] = {4, 16, 64, -1};
    const int blocks[] = {sms, 2 * sms, 4 * sms};
    printf("\n#### sweep on %s (device ms, median of %d sources; dist only)\n\n", name, n_src);
    printf("| delta x mean w | blocks | ms | rounds |\n|---|---|---|---|\n");
    double best = 1e30;
    for (double dm : deltas)
        for (int bl : blocks) {
            gp_sssp_params p = {GP_SSSP_NEARFAR, dm, bl, 0};
            uint32_t it = 0;
            double ms = time_nf(L, dg, p, srcs, &it);
            printf("| %s | %d | %.2f | %u |\n", dm < 0 ? "inf" : std::to_string((int)dm).c_str(),
                   bl, ms, it);
            if (ms < best) {
                best = ms;
                *best_out = p;
            }
        }
    *best_ms = best;
    const gp_sssp_params def = {GP_SSSP_NEARFAR, 0, 0, 0};
    uint32_t it = 0;
    const double dms = time_nf(L, dg, def, srcs, &it);
    printf("\nFastest on %s: delta %s, %d blocks, %.2f ms; the defaults: %.2f ms (%u rounds)\n",
           name, best_out->delta_mul < 0 ? "inf" : std::to_string((int)best_out->delta_mul).c_str(),
           best_out->blocks, best, dms, it);
    fflush(stdout);
}

/* table k x k through gp_cuda_table with params p: end-to-end ms, median of reps */
static double time_table_p(Lab &L, const gp_graph *g, const gp_dgraph *dg, const gp_sssp_params &p,
                           uint32_t k, int reps, uint32_t *batches,
                           std::vector<uint64_t> *keep = nullptr) {
    std::vector<uint32_t> src(k), dst(k);
    lab_rng = 4242 + k;
    for (auto &x : src) x = (uint32_t)(rnd() % g->n);
    for (auto &x : dst) x = (uint32_t)(rnd() % g->n);
    std::vector<uint64_t> out((size_t)k * k);
    std::vector<double> t;
    gp_err err = {0, {0}};
    for (int i = 0; i < reps; i++) {
        gp_sssp_stats st;
        double t0 = gp_now();
        if (gp_cuda_table(L.ws, dg, &p, src.data(), k, dst.data(), k, out.data(), &st, &err))
            die("table", err);
        t.push_back((gp_now() - t0) * 1e3);
        if (batches) *batches = st.batches;
    }
    if (keep) *keep = out;
    return median(t);
}

static void sweep_table(Lab &L, const gp_graph *g, const gp_dgraph *dg) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    printf("\n#### table sweep on BAY (ms end-to-end, median of 3)\n\n");
    printf(
        "| table | delta x mean w | blocks | batch | ms | batches |\n|---|---|---|---|---|---|\n");
    const double deltas[] = {8, 16, 32};
    const int blocks[] = {sms, 2 * sms};
    const int batch[] = {256, 512};
    double best = 1e30;
    for (double dm : deltas)
        for (int bl : blocks)
            for (int ba : batch) {
                gp_sssp_params p = {GP_SSSP_NEARFAR, dm, bl, ba};
                uint32_t nb = 0;
                double t100 = time_table_p(L, g, dg, p, 100, 3, &nb);
                printf("| 100x100 | %s | %d | %d | %.1f | %u |\n",
                       dm < 0 ? "inf" : std::to_string((int)dm).c_str(), bl, ba, t100, nb);
                double t1k = time_table_p(L, g, dg, p, 1000, 3, &nb);
                printf("| 1000x1000 | %s | %d | %d | %.1f | %u |\n",
                       dm < 0 ? "inf" : std::to_string((int)dm).c_str(), bl, ba, t1k, nb);
                if (t1k + 10 * t100 < best) {
                    best = t1k + 10 * t100;
                    L.tuned_table = p;
                }
                fflush(stdout);
            }
    printf("\nChosen for tables (least 1000x1000 + 10 x 100x100): delta %s, blocks %d, batch %d\n",
           L.tuned_table.delta_mul < 0 ? "inf" : std::to_string(L.tuned_table.delta_mul).c_str(),
           L.tuned_table.blocks, L.tuned_table.batch);
}

/* ---- 4. one-to-all timings */
static void time_graph(Lab &L, const gp_graph *g, const gp_dgraph *dg, const char *name) {
    std::vector<uint32_t> srcs;
    lab_rng = 777 + g->n;
    for (int i = 0; i < L.reps; i++) srcs.push_back((uint32_t)(rnd() % g->n));
    std::vector<uint64_t> d(g->n);
    std::vector<uint32_t> pred(g->n);
    std::vector<double> nf_dev, nf_dist, nf_e2e, seed_dev, c1, cN;
    uint32_t rounds = 0, seed_iters = 0;
    gp_err err = {0, {0}};
    for (uint32_t s : srcs) {
        gp_sssp_stats st;
        if (gp_cuda_sssp(L.ws, dg, &L.tuned, s, GP_INF, NULL, NULL, &st, &err)) die("nf", err);
        nf_dist.push_back(st.gpu_ms);
        double t0 = gp_now();
        if (gp_cuda_sssp(L.ws, dg, &L.tuned, s, GP_INF, d.data(), pred.data(), &st, &err))
            die("nf", err);
        nf_e2e.push_back((gp_now() - t0) * 1e3);
        nf_dev.push_back(st.gpu_ms);
        rounds = st.iterations;
    }
    const int cpu_reps = g->n >= 5000000 ? 3 : L.reps;
    for (int i = 0; i < cpu_reps; i++) {
        double t0 = gp_now();
        if (L.cpu1->ops->sssp(L.cpu1, g, srcs[i], GP_INF, d.data(), pred.data(), &err))
            die("cpu", err);
        c1.push_back((gp_now() - t0) * 1e3);
        t0 = gp_now();
        if (L.cpuN->ops->sssp(L.cpuN, g, srcs[i], GP_INF, d.data(), pred.data(), &err))
            die("cpu", err);
        cN.push_back((gp_now() - t0) * 1e3);
    }
    std::string seed_s = "not run (see notes)";
    if (g->n <= L.seed_max) {
        const int sr = g->n > 500000 ? 1 : L.reps;
        for (int i = 0; i < sr; i++) {
            gp_sssp_stats st;
            if (gp_cuda_sssp(L.ws, dg, &SEED, srcs[i], GP_INF, NULL, pred.data(), &st, &err))
                die("seed", err);
            seed_dev.push_back(st.gpu_ms);
            seed_iters = st.iterations;
        }
        char b[96];
        snprintf(b, sizeof b, "%.1f (%u iters%s)", median(seed_dev), seed_iters,
                 sr == 1 ? ", 1 run" : "");
        seed_s = b;
    }
    double best_cpu = std::min(median(c1), median(cN));
    printf("| %s | %u | %.2f | %.2f | %.2f | %u | %s | %.1f | %.1f | %.0fx |\n", name, g->n,
           median(nf_dist), median(nf_dev), median(nf_e2e), rounds, seed_s.c_str(), median(c1),
           median(cN), best_cpu / median(nf_dev));
    fflush(stdout);
}

/* ---- 5. tables through the backend */
static void time_table(Lab &L, const gp_graph *g, uint32_t k) {
    std::vector<uint32_t> src(k), dst(k);
    lab_rng = 4242 + k;
    for (auto &x : src) x = (uint32_t)(rnd() % g->n);
    for (auto &x : dst) x = (uint32_t)(rnd() % g->n);
    std::vector<uint64_t> out((size_t)k * k), ref((size_t)k * k);
    gp_err err = {0, {0}};
    std::vector<double> tg, tc;
    for (int i = 0; i < L.reps; i++) {
        double t0 = gp_now();
        if (L.gpu->ops->table(L.gpu, g, src.data(), k, dst.data(), k, out.data(), &err))
            die("gpu table", err);
        tg.push_back((gp_now() - t0) * 1e3);
    }
    const int cr = k >= 1000 ? 1 : 3;
    for (int i = 0; i < cr; i++) {
        double t0 = gp_now();
        if (L.cpuN->ops->table(L.cpuN, g, src.data(), k, dst.data(), k, ref.data(), &err))
            die("cpu table", err);
        tc.push_back((gp_now() - t0) * 1e3);
    }
    int good = out == ref;
    CHECK(good, "table %ux%u differs from the CPU", k, k);
    uint32_t nb = 0;
    std::vector<uint64_t> out2;
    double tuned =
        time_table_p(L, g, (const gp_dgraph *)g->dev, L.tuned_table, k, L.reps, &nb, &out2);
    good = good && out2 == ref;
    printf("| %ux%u | %.1f | %.1f (%u batches) | %.0f (%d run%s) | %s |\n", k, k, median(tg), tuned,
           nb, median(tc), cr, cr > 1 ? "s" : "", good ? "equal" : "DIFFERENT");
    fflush(stdout);
}

int main(int argc, char **argv) {
    Lab L;
    std::string data = "../shared/data";
    std::vector<uint64_t> sizes = {1000000, 10000000, 24000000};
    int do_sweep = 0, sanitize = 0;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--data" && i + 1 < argc) data = argv[++i];
        else if (a == "--reps" && i + 1 < argc) L.reps = (int)strtol(argv[++i], NULL, 10);
        else if (a == "--seed-max" && i + 1 < argc)
            L.seed_max = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (a == "--sweep") do_sweep = 1;
        else if (a == "--sanitize") sanitize = 1;
        else if (a == "--sizes" && i + 1 < argc) {
            sizes.clear();
            std::string s = argv[++i];
            size_t p = 0;
            while (p < s.size()) {
                size_t q = s.find(',', p);
                if (q == std::string::npos) q = s.size();
                sizes.push_back(strtoull(s.substr(p, q - p).c_str(), NULL, 10));
                p = q + 1;
            }
        } else {
            fprintf(stderr,
                    "usage: %s [--data DIR] [--reps N] [--sizes N,..] [--sweep] "
                    "[--sanitize] [--seed-max N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (L.reps < 1) L.reps = 1;
    gp_err err = {0, {0}};
    L.ncores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    L.cpu1 = gp_cpu_backend_new(1, &err);
    L.cpuN = gp_cpu_backend_new(0, &err);
    gp_cuda_opts o = {0, 1, 1000, NULL, NULL};
    L.gpu = gp_cuda_backend_new(&o, &err);
    if (!L.cpu1 || !L.cpuN || !L.gpu) die("backends", err);
    L.ws = gp_sssp_ws_new(NULL, 1, 0, &err);
    if (!L.ws) die("workspace", err);
    gp_backend_info in;
    L.gpu->ops->info(L.gpu, &in);
    printf("GPU: %s, %.1f GiB; CPU backend threads: 1 and %d\n\n", in.device,
           (double)in.mem_total / 1073741824.0, L.ncores);

    if (sanitize) {
        printf("| check | result |\n|---|---|\n");
        validate_random(L, 1);
        gp_graph *g = gp_generate_road(1500, 1, &err);
        gp_dgraph *dg = upload(g);
        int ok =
            validate_one(L, g, dg, L.tuned, 5, "road") + validate_one(L, g, dg, SEED, 5, "road");
        std::vector<uint64_t> ref(g->n);
        L.cpu1->ops->sssp(L.cpu1, g, 5, GP_INF, ref.data(), NULL, &err);
        ok += validate_p2p(L, g, dg, L.tuned, 5, 1499, ref[1499], "road");
        ok += validate_table(L, g, dg, L.tuned, 9, 9, "road");
        printf("| road 1500 | %d / 4 |\n", ok);
        gp_dgraph_free(dg);
        gp_graph_unref(g);
        printf("\n%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
        return failures ? 1 : 0;
    }

    printf("### Validation against the CPU backend\n\n| check | result |\n|---|---|\n");
    validate_random(L, 0);
    const char *names[] = {"rome99", "NY", "BAY"};
    const char *files[] = {"rome99.gr", "USA-road-d.NY.gr.gz", "USA-road-d.BAY.gr.gz"};
    gp_graph *dimacs[3] = {nullptr, nullptr, nullptr};
    gp_dgraph *ddimacs[3] = {nullptr, nullptr, nullptr};
    for (int i = 0; i < 3; i++) {
        dimacs[i] = load("dimacs:" + data + "/dimacs/" + files[i]);
        if (!dimacs[i]) continue;
        ddimacs[i] = upload(dimacs[i]);
        validate_dimacs(L, dimacs[i], ddimacs[i],
                        data + "/dimacs/reference/" + names[i] + ".expected.txt", names[i]);
    }
    std::vector<gp_graph *> gens;
    std::vector<gp_dgraph *> dgens;
    for (uint64_t n : sizes) {
        double t0 = gp_now();
        gp_graph *g = gp_generate_road(n, 1, &err);
        if (!g) die("gen", err);
        fprintf(stderr, "generated %llu nodes in %.1f s\n", (unsigned long long)n, gp_now() - t0);
        gens.push_back(g);
        dgens.push_back(upload(g));
        int ok = validate_one(L, g, dgens.back(), L.tuned, (uint32_t)(n / 2 + 17), "gen");
        printf("| gen:%llu (one-to-all, dist + pred vs CPU) | %s |\n", (unsigned long long)n,
               ok ? "equal" : "DIFFERENT");
        fflush(stdout);
    }

    if (do_sweep) {
        gp_sssp_params best = L.tuned;
        double bms = 0;
        if (ddimacs[2]) sweep(L, ddimacs[2], "BAY", 3, dimacs[2]->n, &best, &bms);
        for (size_t i = 0; i < gens.size(); i++) {
            char nm[64];
            snprintf(nm, sizeof nm, "gen:%llu", (unsigned long long)gens[i]->n);
            sweep(L, dgens[i], nm, 3, gens[i]->n, &best, &bms);
        }
        if (ddimacs[2]) sweep_table(L, dimacs[2], ddimacs[2]);
        /* the setting fastest on the largest graph swept must give the same answers too */
        int ok = 1;
        for (size_t i = 0; i < gens.size(); i++)
            ok &= validate_one(L, gens[i], dgens[i], best, 3, "gen swept");
        if (dimacs[2]) ok &= validate_one(L, dimacs[2], ddimacs[2], best, 7, "BAY swept");
        printf(
            "\nFastest setting of the last sweep (delta %s, %d blocks, %.2f ms) re-validated: %s\n",
            best.delta_mul < 0 ? "inf" : std::to_string((int)best.delta_mul).c_str(), best.blocks,
            bms, ok ? "equal" : "DIFFERENT");
    }

    printf("\n### One-to-all (ms; GPU = CUDA events, median of %d random sources)\n\n", L.reps);
    printf("near-far setting: %s\n\n", L.tuned_desc.c_str());
    printf(
        "| graph | nodes | near-far dist only | near-far dist+pred | near-far end-to-end (+copy to "
        "host) | rounds | seed dist+pred (iters) | CPU 1 thread | CPU %d threads | speed-up vs "
        "best CPU |\n|---|---|---|---|---|---|---|---|---|---|\n",
        L.ncores);
    for (int i = 1; i < 3; i++)
        if (dimacs[i]) time_graph(L, dimacs[i], ddimacs[i], names[i]);
    for (size_t i = 0; i < gens.size(); i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "gen:%llu", (unsigned long long)gens[i]->n);
        time_graph(L, gens[i], dgens[i], nm);
    }
    for (size_t i = 0; i < gens.size(); i++) {
        gp_dgraph_free(dgens[i]);
        gp_graph_unref(gens[i]);
    }
    if (dimacs[2]) {
        printf("\n### Table on BAY (ms, end-to-end through the CUDA backend, median of %d; CPU "
               "backend with %d threads)\n\n| table | GPU backend (defaults) | GPU lab (table "
               "sweep's choice) | CPU | GPU = CPU |\n|---|---|---|---|---|\n",
               L.reps, L.ncores);
        time_table(L, dimacs[2], 100);
        time_table(L, dimacs[2], 1000);
    }
    for (int i = 0; i < 3; i++) {
        gp_dgraph_free(ddimacs[i]);
        gp_graph_unref(dimacs[i]);
    }
    gp_sssp_ws_free(L.ws);
    gp_backend_destroy(L.gpu);
    gp_backend_destroy(L.cpu1);
    gp_backend_destroy(L.cpuN);
    printf("\n%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
    return failures ? 1 : 0;
}
