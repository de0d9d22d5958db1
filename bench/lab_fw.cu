/* lab_fw.cu - kernel lab for the GPU blocked Floyd-Warshall (kernels/fw.cu): validates every
 * matrix kind with and without next hops against the CPU backend, then times the solver.
 *
 *   lab_fw [--quick] [--sanitize] [--sizes N,N,...] [--reps R] [--skip-cpu]
 *
 * 1. validate: random graphs (tests/apsp_check.h) for n = 1, 2, 31, 33, 100, 1000, 4097 at several
 *    densities, with unreachable pairs, zero-weight, parallel arcs and self-loops; every kind
 *    (auto, u16, u32, u64) x (distances only, with next hops) through gp_cuda_apsp_ex against the
 *    CPU backend's apsp: distances exactly equal, next hops realise them, next-hop walks end.
 * 2. time: random dense matrices generated on the device (density 0.5, weights 1..100; the u16
 *    rows use unit weights so the 16-bit kind holds them, hence n <= 32767 there), the solve
 *    alone, CUDA events, median of --reps (default 3); T updates/s = n^3 / time. After each size
 *    up to 12500, two rows are checked against a dense Dijkstra on the host.
 * 3. the seed thesis case (n = 12,500, complete graph) and the end-to-end API (graph in, uint64
 *    matrix out) next to the CPU backend's Floyd-Warshall at n = 2000 and 4096.
 * --sanitize: only small validation cases (for compute-sanitizer). --quick: smaller sizes.
 *
 * Built by the Makefile (bench/*.cu) as $(BUILD)/bench/lab_fw:
 *   nvcc -O3 -std=c++17 -lineinfo -Xcompiler -fPIC -gencode=arch=compute_90a,code=sm_90a
 *        -gencode=arch=compute_90,code=compute_90 -I. -o $(BUILD)/bench/lab_fw bench/lab_fw.cu
 *        $(BUILD)/libgpath.a <the Makefile's LDLIBS> -lpthread
 * and run by bench/gpu-apsp.sh. Versions (H100 80GB HBM3, CUDA 13.0; medians of 3; n^3 / time):
 *   v1  2-stage cp.async min-plus tiles; pivot closed one element per thread in shared memory
 *       (an index division per element): n=4096 4.55 T/s, n=12500 dense 0.169 s. The pivot cost
 *       ~330 us per round on one SM.
 *   v2  register-blocked pivot (one barrier per k), 3-stage pipeline, one barrier per chunk:
 *       u32 13.86 / 14.13 / 14.42 T/s at n = 16384 / 24000 / 32768; next hops 13.06 / 13.51 /
 *       13.88; u16 26.1 / 27.7 / 28.8; n=12500 dense 0.148 s (0.1595 s with next hops).
 *   v3  next hops written directly in phase 3 (no gather-then-write barrier): slower, 12.70 T/s
 *       at 16384 and 0.164 s at 12500 (each gather stalls on its store); reverted.
 *   v4  pivot next hops kept in shared memory (v2 spilled at 64 registers): next hops 13.10 /
 *       13.53 / 13.89 T/s, n=12500 0.1587 s. Phase 3 alone: 14.64 T/s (u32) and 14.18 (next) at
 *       32768, 89% / 86% of the 16.5 T/s ceiling; pivot + row/column tiles + panel copies
 *       2.3% of the time (bench/results/2026-11-21-NVIDIA-H100-80GB-HBM3-gpu-apsp.md).
 */
#include "engine/backend.h"
#include "bench/lab_common.h"
#include "kernels/fw.h"
#include "kernels/fw.cuh"
#include "tests/apsp_check.h"

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vector>

static gp_backend *cpu;

/* ---------------------------------------------------------------------------------------------
 * 1. validation */

static void validate_graph(gp_graph *g, const char *label) {
    if (!g) {
        CHECK(0, "%s: graph build failed", label);
        return;
    }
    uint32_t n = g->n;
    size_t nn = (size_t)n * n;
    std::vector<uint64_t> ref(nn), d(nn);
    std::vector<uint32_t> nx(nn);
    gp_err err = {0};
    double t0 = gp_now();
    if (cpu->ops->apsp(cpu, g, ref.data(), NULL, &err) != GP_OK) {
        CHECK(0, "%s: cpu apsp: %s", label, err.msg);
        gp_graph_unref(g);
        return;
    }
    double tcpu = gp_now() - t0;
    int zs = 0;
    uint64_t bound = gp_cuda_apsp_bound(g, 0, NULL), bound_next = gp_cuda_apsp_bound(g, 1, &zs);
    printf("validate %-26s n=%-5u m=%-9u bound=%llu (next: %llu, zshift %d) cpu %.3fs:", label, n,
           g->m, (unsigned long long)bound, (unsigned long long)bound_next, zs, tcpu);
    for (int kind = 0; kind <= 3; kind++)
        for (int next = 0; next <= 1; next++) {
            if (kind == GP_APSP_U16 && next) continue;
            uint64_t lim = kind == GP_APSP_U16   ? 0x7fff
                           : kind == GP_APSP_U32 ? (next ? 0xffffff : 0x7fffffff)
                                                 : UINT64_MAX;
            std::fill(d.begin(), d.end(), 0xababababababababull);
            std::fill(nx.begin(), nx.end(), 0xabababab);
            gp_cuda_apsp_opts o = {kind};
            gp_cuda_apsp_stats st;
            memset(&st, 0, sizeof st);
            gp_err e2 = {0};
            int rc = gp_cuda_apsp_ex(NULL, g, d.data(), next ? nx.data() : NULL, &o, &st, &e2);
            if (kind != 0 &&
                (next ? bound_next : bound) >= lim) { /* must be refused, never answered wrongly */
                CHECK(rc == GP_EINVAL, "%s kind %d: expected refusal, got %d", label, kind, rc);
                continue;
            }
            char msg[512] = "";
            if (rc != GP_OK) {
                CHECK(0, "%s kind %d next %d: %s", label, kind, next, e2.msg);
                continue;
            }
            if (!apc_equal(n, d.data(), ref.data(), msg, sizeof msg)) {
                CHECK(0, "%s %s next %d: %s", label, gp_fw_kind_name(st.kind), next, msg);
                continue;
            }
            if (next && !apc_next_ok(g, d.data(), nx.data(), msg, sizeof msg)) {
                CHECK(0, "%s %s next: %s", label, gp_fw_kind_name(st.kind), msg);
                continue;
            }
            printf(" %s%s%s ok %.1fms", kind == 0 ? "auto=" : "", gp_fw_kind_name(st.kind),
                   next ? "+next" : "", st.solve_s * 1e3);
        }
    printf("\n");
    fflush(stdout);
    gp_graph_unref(g);
}

static void validate(int sanitize, int quick) {
    gp_err err = {0};
    static const uint32_t ns[] = {1, 2, 31, 33, 100, 300, 1000, 4097};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        uint32_t n = ns[i];
        if (sanitize && n > 300) break;
        if (quick && n > 1000) break;
        if (!sanitize && n == 300) continue;
        char l[64];
        snprintf(l, sizeof l, "sparse(2/n,w1..100)");
        validate_graph(apc_graph(n, n > 1 ? 2.0 / n : 0, 1, 100, 100 + i, &err), l);
        snprintf(l, sizeof l, "zeros(p=%.2f,w0..3)", n <= 100 ? 0.3 : 0.02);
        validate_graph(apc_graph(n, n <= 100 ? 0.3 : 0.02, 0, 3, 200 + i, &err), l);
        if (n <= 1000) {
            validate_graph(apc_graph(n, 0.9, 1, 1000000, 300 + i, &err), "dense(0.9,w1..1e6)");
            validate_graph(apc_graph(n, 0.5, 1, 8, 400 + i, &err), "dense(0.5,w1..8)");
        } else {
            validate_graph(apc_graph(n, 0.3, 1, 100, 500 + i, &err), "dense(0.3,w1..100)");
        }
    }
    /* path lengths beyond 32 bits: the 64-bit kind */
    validate_graph(apc_graph(200, 0.1, 3000000000u, 4294967295u, 7, &err), "wide(w3e9..4.29e9)");
}

/* ---------------------------------------------------------------------------------------------
 * 2. device timings */

/* Host reference for a random fill: dense Dijkstra from s (O(n^2)). */
static void host_row(const gp_fw_plan *p, uint64_t thresh, uint32_t max_w, uint64_t seed,
                     uint32_t s, std::vector<uint64_t> &dist) {
    uint32_t n = p->n;
    dist.assign(n, GP_INF);
    std::vector<char> done(n, 0);
    dist[s] = 0;
    for (uint32_t it = 0; it < n; it++) {
        uint32_t u = GP_NONE;
        uint64_t best = GP_INF;
        for (uint32_t v = 0; v < n; v++)
            if (!done[v] && dist[v] < best) best = dist[v], u = v;
        if (u == GP_NONE) break;
        done[u] = 1;
        for (uint32_t v = 0; v < n; v++) {
            uint32_t w = gp_fw_arc(u, v, p->npad, n, thresh, max_w, seed);
            if (w && best + w < dist[v]) dist[v] = best + w;
        }
    }
}

struct TimeRow {
    const char *mode;
    uint32_t n;
    double med_s, min_s, max_s;
    const char *check;
};
static std::vector<TimeRow> rows;

static void time_mode(const char *mode, int kind, int next, uint32_t n, double dens, uint32_t max_w,
                      int reps, cudaStream_t st, int profile = 0) {
    gp_fw_plan p;
    gp_err err = {0};
    uint64_t bound = (uint64_t)(n - 1) * max_w;
    if (gp_fw_plan_init(&p, n, bound, kind, next, st, &err) != GP_OK) {
        printf("time %s n=%u: %s\n", mode, n, err.msg);
        rows.push_back({mode, n, -1, -1, -1, "skipped: does not fit"});
        return;
    }
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> ts;
    const char *check = "-";
    for (int r = 0; r < reps; r++) {
        uint64_t seed = 1000 + r;
        if (gp_fw_fill_random(&p, dens, max_w, seed, &err) != GP_OK) break;
        cudaEventRecord(e0, st);
        if (gp_fw_solve(&p, &err) != GP_OK) break;
        cudaEventRecord(e1, st);
        cudaError_t ce = cudaEventSynchronize(e1);
        if (ce != cudaSuccess) {
            CHECK(0, "time %s n=%u: %s", mode, n, cudaGetErrorString(ce));
            break;
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        ts.push_back(ms / 1e3);
        if (r == reps - 1 && n <= 12500) { /* two rows against a host Dijkstra */
            check = "2 rows = host Dijkstra";
            std::vector<uint64_t> got(n), ref;
            std::vector<uint32_t> gnx(n);
            uint32_t srcs[2] = {0, n - 1};
            for (int q = 0; q < 2; q++) {
                if (gp_fw_read_row(&p, srcs[q], got.data(), next ? gnx.data() : NULL, &err) !=
                    GP_OK) {
                    CHECK(0, "read row: %s", err.msg);
                    break;
                }
                host_row(&p, gp_fw_thresh(dens), max_w, seed, srcs[q], ref);
                for (uint32_t j = 0; j < n; j++)
                    if (got[j] != ref[j]) {
                        CHECK(0, "time %s n=%u: row %u col %u = %llu, host %llu", mode, n, srcs[q],
                              j, (unsigned long long)got[j], (unsigned long long)ref[j]);
                        check = "MISMATCH";
                        break;
                    }
            }
        }
    }
    if (profile && !err.code && gp_fw_fill_random(&p, dens, max_w, 1, &err) == GP_OK) {
        float ph[5] = {0, 0, 0, 0, 0};
        p.prof_ms = ph;
        gp_fw_solve(&p, &err);
        cudaStreamSynchronize(st);
        p.prof_ms = NULL;
        double np = p.npad, B = p.block;
        double rest = (np - B) * (np - B) * np; /* phase-3 updates over all rounds */
        printf("phases %s n=%u (one profiled solve, events between phases): pivot %.1f ms, "
               "row/column tiles %.1f ms, panel copies %.1f ms, the rest %.1f ms = %.2f T "
               "updates/s on its own %.3g updates\n",
               mode, n, ph[0], ph[1], ph[2], ph[3], rest / (ph[3] / 1e3) / 1e12, rest);
    }
    if (err.code) CHECK(0, "time %s n=%u: %s", mode, n, err.msg);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    gp_fw_plan_free(&p);
    cudaStreamSynchronize(st);
    if (ts.empty()) return;
    std::sort(ts.begin(), ts.end());
    TimeRow tr = {mode, n, ts[ts.size() / 2], ts.front(), ts.back(), check};
    rows.push_back(tr);
    double nn = (double)n;
    printf("time %-10s n=%-6u median %.4fs (min %.4f max %.4f, %zu runs) %.2f T updates/s  %s\n",
           mode, n, tr.med_s, tr.min_s, tr.max_s, ts.size(), nn * nn * nn / tr.med_s / 1e12, check);
    fflush(stdout);
}

/* ---------------------------------------------------------------------------------------------
 * 3. end to end and CPU ratio */

static void api_vs_cpu(uint32_t n, int skip_cpu) {
    gp_err err = {0};
    gp_graph *g = apc_graph(n, 0.05, 1, 100, 77, &err);
    if (!g) {
        CHECK(0, "graph n=%u: %s", n, err.msg);
        return;
    }
    size_t nn = (size_t)n * n;
    std::vector<uint64_t> d(nn), ref;
    std::vector<uint32_t> nx(nn);
    double tc = -1;
    if (!skip_cpu) {
        ref.resize(nn);
        double t0 = gp_now();
        if (cpu->ops->apsp(cpu, g, ref.data(), NULL, &err) != GP_OK) CHECK(0, "cpu: %s", err.msg);
        tc = gp_now() - t0;
    }
    for (int next = 0; next <= 1; next++) {
        std::vector<double> tot, sol;
        gp_cuda_apsp_stats st;
        for (int r = 0; r < 3; r++) {
            memset(&st, 0, sizeof st);
            if (gp_cuda_apsp_ex(NULL, g, d.data(), next ? nx.data() : NULL, NULL, &st, &err) !=
                GP_OK) {
                CHECK(0, "api n=%u: %s", n, err.msg);
                break;
            }
            tot.push_back(st.total_s);
            sol.push_back(st.solve_s);
        }
        if (tot.empty()) continue;
        std::sort(tot.begin(), tot.end());
        std::sort(sol.begin(), sol.end());
        char msg[512] = "";
        const char *ok = "";
        if (!ref.empty()) ok = apc_equal(n, d.data(), ref.data(), msg, sizeof msg) ? "= cpu" : msg;
        printf("api n=%u %s kind=%s: end-to-end median %.4fs, solve %.4fs; cpu backend FW "
               "(distances, %d threads) %.3fs; ratio cpu/solve %.0fx, cpu/end-to-end %.0fx %s\n",
               n, next ? "dist+next" : "dist", gp_fw_kind_name(st.kind), tot[1], sol[1],
               (int)sysconf(_SC_NPROCESSORS_ONLN), tc, tc / sol[1], tc / tot[1], ok);
        if (!ref.empty() && ok[0] != '=') failures++;
    }
    gp_graph_unref(g);
    fflush(stdout);
}

/* Small networks: one pivot-block launch; the whole call's latency (median of 20). */
static void small_latency(uint32_t n) {
    gp_err err = {0};
    gp_graph *g = apc_graph(n, 0.1, 1, 10, 99, &err);
    if (!g) return;
    std::vector<uint64_t> d((size_t)n * n);
    std::vector<uint32_t> nx((size_t)n * n);
    std::vector<double> t;
    gp_cuda_apsp_stats st;
    for (int r = 0; r < 20; r++) {
        memset(&st, 0, sizeof st);
        if (gp_cuda_apsp_ex(NULL, g, d.data(), nx.data(), NULL, &st, &err) != GP_OK) {
            CHECK(0, "small n=%u: %s", n, err.msg);
            break;
        }
        t.push_back(st.total_s);
    }
    if (!t.empty()) {
        std::sort(t.begin(), t.end());
        printf("api n=%u dist+next kind=%s: end-to-end median %.3f ms (npad %u: one pivot-block "
               "launch, solve %.3f ms)\n",
               n, gp_fw_kind_name(st.kind), t[t.size() / 2] * 1e3, st.npad, st.solve_s * 1e3);
    }
    gp_graph_unref(g);
}

/* Over the device memory: refused with the limit named, before any allocation. */
static void too_big(void) {
    gp_fw_plan p;
    gp_err err = {0};
    int rc = gp_fw_plan_init(&p, 300000, 299999, 0, 1, NULL, &err);
    if (rc != GP_ETOOBIG) CHECK(0, "n=300000 with next hops: expected GP_ETOOBIG, got %d", rc);
    else printf("too big: %s\n", err.msg);
    if (rc == GP_OK) gp_fw_plan_free(&p);
}

int main(int argc, char **argv) {
    int sanitize = 0, quick = 0, reps = 3, skip_cpu = 0;
    std::vector<uint32_t> sizes = {4096, 8192, 16384, 24000, 32768};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sanitize")) sanitize = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--skip-cpu")) skip_cpu = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            sizes.clear();
            char *s = argv[++i], *save = NULL;
            for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save))
                sizes.push_back((uint32_t)strtoul(t, NULL, 10));
        } else {
            fprintf(stderr, "usage: lab_fw [--quick] [--sanitize] [--sizes N,...] [--reps R] "
                            "[--skip-cpu]\n");
            return 2;
        }
    }
    if (gp_cuda_apsp_devices() <= 0) {
        printf("no CUDA device: lab skipped\n");
        return 0;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("device: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount,
           prop.totalGlobalMem / 1073741824.0);
    gp_err err = {0};
    cpu = gp_cpu_backend_new(0, &err);
    if (!cpu) {
        fprintf(stderr, "cpu backend: %s\n", err.msg);
        return 1;
    }
    double t0 = gp_now();
    validate(sanitize, quick);
    too_big();
    printf("validation: %d failures (%.1fs)\n", failures, gp_now() - t0);
    if (sanitize) goto done;
    {
        if (quick) sizes = {2048, 4096};
        cudaStream_t st;
        cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
        time_mode("warmup", GP_FW_U32, 0, 2048, 0.5, 100, 1, st);
        rows.clear();
        for (uint32_t n : sizes) {
            int prof = n == 16384 || n == 32768;
            time_mode("u32", GP_FW_U32, 0, n, 0.5, 100, reps, st, prof);
            time_mode("u32+next", GP_FW_U32, 1, n, 0.5, 100, reps, st, prof);
            time_mode("u16", GP_FW_U16, 0, std::min<uint32_t>(n, 32767), 0.5, 1, reps, st, prof);
        }
        /* the seed thesis's largest case: n = 12,500, complete graph */
        time_mode("thesis-u32", GP_FW_U32, 0, 12500, 1.0, 100, reps, st);
        time_mode("thesis-next", GP_FW_U32, 1, 12500, 1.0, 100, reps, st);
        cudaStreamDestroy(st);
        small_latency(50);
        api_vs_cpu(2000, skip_cpu);
        if (!quick) api_vs_cpu(4096, skip_cpu);
        printf("\n| mode | n | median s | min s | max s | T updates/s | check |\n");
        printf("|---|---|---|---|---|---|---|\n");
        for (const TimeRow &r : rows) {
            if (r.med_s < 0) {
                printf("| %s | %u | - | - | - | - | %s |\n", r.mode, r.n, r.check);
                continue;
            }
            double nn = (double)r.n;
            printf("| %s | %u | %.4f | %.4f | %.4f | %.2f | %s |\n", r.mode, r.n, r.med_s, r.min_s,
                   r.max_s, nn * nn * nn / r.med_s / 1e12, r.check);
        }
    }
done:
    gp_backend_destroy(cpu);
    printf("\nlab_fw: %d failures\n", failures);
    return failures ? 1 : 0;
}
