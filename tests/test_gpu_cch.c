/* test_gpu_cch.c - the CCH on the GPU (kernels/cch*.cu through engine/cch_cuda.c): GPU customization
 * bit-identical to the CPU's (also a second metric on the same device state), PHAST with 1 and 16
 * sources per sweep equal to the CPU backend's Dijkstra (the plan sweep with the default and a
 * many-phase plan, and the level sweep; after the second metric too), RPHAST tables equal to Dijkstra tables
 * (repeated targets, several batches), and the engine with the CUDA backend answering route AUTO,
 * sssp and table through the GPU CCH exactly (also graph versions sharing their topology's device
 * part); the GPU customization dropping a perfect pass's
 * query arcs and the queries relaxing those of a pass after it; random graphs, a road-like (gen:)
 * and a grid-like (grid:) generated graph, and DIMACS NY and BAY and the Liechtenstein OSM extract
 * (car) when $GPATH_DATA has them.
 * Without a GPU (or in a build without CUDA) every test skips with "no CUDA device: GPU tests
 * skipped"; GPATH_REQUIRE_GPU=1 turns that into a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/engine.h"
#include "engine/engine_lab.h"
#include "kernels/cch_lab.h"
#include "tests/real_graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static gp_backend *cpu, *gpu;
static char no_gpu_msg[600];
/* the service's sweep with warp bins in phases of any size (the service uses them only in
 * phases of a bin per SM at least, which these small graphs seldom have: the block sweep) and
 * flat phases gathered however small; set in main, the base of every variant below */
static gp_dcch_tune tests_tune;

static int require_gpu(void) {
    const char *r = getenv("GPATH_REQUIRE_GPU");
    return r && strcmp(r, "1") == 0;
}

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!gpu) {                                                                                \
            if (require_gpu()) fail_msg("GPATH_REQUIRE_GPU=1 but %s", no_gpu_msg);                 \
            print_message("no CUDA device: GPU tests skipped (%s)\n", no_gpu_msg);                 \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static int setup(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    cpu = gp_cpu_backend_new(2, &err);
    gp_cch_set_max_tri_per_node(0); /* random graphs are no road networks: no size guard */
    if (!cpu) return -1;
    gp_cuda_opts o = {0, 2, 500, NULL, NULL};
    gpu = gp_cuda_backend_new(&o, &err);
    if (!gpu) snprintf(no_gpu_msg, sizeof no_gpu_msg, "%s", err.msg);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    gp_backend_destroy(gpu);
    gp_backend_destroy(cpu);
    gp_cch_cache_clear();
    return 0;
}

static uint64_t rng_state = 0xc0ffee;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Random graph: ids 0..n-1, clustered arcs, zero weights, parallel arcs, self-loops. */
static gp_graph *random_graph(uint32_t n, uint32_t deg, uint32_t maxw) {
    gp_err err;
    gp_err_clear(&err);
    gp_builder *b = gp_builder_new(1.0);
    for (uint32_t i = 0; i < n; i++) gp_builder_add_node(b, i, 0, 0, 0, NULL, &err);
    for (uint64_t i = 0; i < (uint64_t)n * deg; i++) {
        uint32_t u = (uint32_t)(rnd() % n);
        uint32_t v = rnd() % 8 ? (uint32_t)((u + 1 + rnd() % 6) % n) : (uint32_t)(rnd() % n);
        gp_builder_add_arc(b, u, v, (uint32_t)(rnd() % (maxw + 1)), &err);
    }
    gp_graph *g = gp_builder_finish(b, "test", "test", 1, &err);
    if (!g) fail_msg("builder: %s", err.msg);
    return g;
}

/* GPU PHAST from src (k = 1, 16, 1, 16 for nk calls; 16 only where phast_sources allows) ==
 * Dijkstra on every row; what names the sweep in a failure. */
static void phast_rows(gp_cch *c, const gp_graph *g, const uint32_t *src, int nk, int phast_sources,
                       uint64_t *dg, uint64_t *dc, const char *what) {
    gp_err err;
    gp_err_clear(&err);
    const uint32_t n = g->n;
    for (int ki = 0; ki < nk; ki++) {
        const int k = ki % 2 ? 16 : 1;
        if (k > phast_sources) continue;
        if (gp_cch_gpu_sssp(c, src, (uint32_t)k, dg, &err) != GP_OK) fail_msg("phast: %s", err.msg);
        for (int i = 0; i < k; i++) {
            assert_int_equal(cpu->ops->sssp(cpu, g, src[i], GP_INF, dc, NULL, &err), GP_OK);
            for (uint32_t x = 0; x < n; x++)
                if (dc[x] != dg[(size_t)i * n + x])
                    fail_msg("phast (%s) k=%d src %u node %u: dijkstra %llu gpu %llu", what, k,
                             src[i], x, (unsigned long long)dc[x],
                             (unsigned long long)dg[(size_t)i * n + x]);
        }
    }
}

/* GPU customization == CPU customization; PHAST and RPHAST == Dijkstra. */
/* c's customized weights and witnesses (fmid, bmid) equal the reference's */
static void same_custom(const gp_cch *c, const uint32_t *fw, const uint32_t *bw, const uint32_t *fm,
                        const uint32_t *bm) {
    size_t m = c->topo->m;
    assert_memory_equal(fw, c->fw, m * 4);
    assert_memory_equal(bw, c->bw, m * 4);
    assert_memory_equal(fm, c->fmid, m * 4);
    assert_memory_equal(bm, c->bmid, m * 4);
}

static void check_gpu(const gp_graph *g, int phast_sources) {
    gp_err err;
    gp_err_clear(&err);
    gp_cch *c = NULL;
    if (gp_cch_new(g, 2, &c, &err) != GP_OK) fail_msg("cch: %s", err.msg);
    uint32_t m = c->topo->m, n = g->n;
    uint32_t *fw = malloc((size_t)m * 4 + 4), *bw = malloc((size_t)m * 4 + 4);
    uint32_t *fm = malloc((size_t)m * 4 + 4), *bm = malloc((size_t)m * 4 + 4);
    memcpy(fw, c->fw, (size_t)m * 4);
    memcpy(bw, c->bw, (size_t)m * 4);
    memcpy(fm, c->fmid, (size_t)m * 4);
    memcpy(bm, c->bmid, (size_t)m * 4);
    /* the packed witnesses as the host computed them (cch_custom.c witnesses_range) */
    uint64_t *wit = malloc((size_t)m * 16 + 16);
    memcpy(wit, c->wit, (size_t)m * 16);
    /* a perfect pass over the CPU's weights; the GPU customization drops its query arcs (stale),
     * one after it builds the same, and the queries below (p2p, the upward searches of PHAST and
     * RPHAST) relax them */
    assert_int_equal(gp_cch_perfect(c, 2, &err), GP_OK);
    uint32_t kept[2] = {c->q[0].first[n], c->q[1].first[n]};
    memset(c->fw, 0x5a, (size_t)m * 4);
    memset(c->bw, 0x5a, (size_t)m * 4);
    memset(c->fmid, 0x5a, (size_t)m * 4);
    memset(c->bmid, 0x5a, (size_t)m * 4);
    memset(c->wit, 0x5a, (size_t)m * 16);
    if (gp_cch_gpu_customize(c, 0, &err) != GP_OK) fail_msg("gpu customize: %s", err.msg);
    same_custom(c, fw, bw, fm, bm);
    /* the witnesses computed on the device (fetched so into page-locked sets, from the
     * topology's spare: not this first CCH's, which get the host's pass) == the host's */
    assert_memory_equal(wit, c->wit, (size_t)m * 16);
    assert_int_equal(c->pinned, 0);
    memset(c->wit, 0x5a, (size_t)m * 16);
    if (gp_cch_gpu_witnesses(c, c->wit, &err) != GP_OK) fail_msg("gpu witnesses: %s", err.msg);
    assert_memory_equal(wit, c->wit, (size_t)m * 16);
    assert_null(c->q);
    assert_int_equal(gp_cch_perfect(c, 2, &err), GP_OK);
    assert_int_equal(c->q[0].first[n], kept[0]);
    assert_int_equal(c->q[1].first[n], kept[1]);
    /* paths unpacked through the GPU's witnesses realise their distances */
    for (int q = 0; q < 20; q++) {
        uint32_t s = (uint32_t)(rnd() % n), t = (uint32_t)(rnd() % n);
        gp_path p, r;
        assert_int_equal(gp_cch_p2p(c, s, t, &p, &err), GP_OK);
        assert_int_equal(cpu->ops->p2p(cpu, g, s, t, GP_P2P_DIJKSTRA, &r, &err), GP_OK);
        assert_int_equal(p.dist, r.dist);
        uint64_t sum = 0;
        for (uint32_t i = 0; i + 1 < p.len; i++) {
            uint64_t best = UINT64_MAX;
            for (uint32_t a = g->row[p.nodes[i]]; a < g->row[p.nodes[i] + 1]; a++)
                if (g->col[a] == p.nodes[i + 1] && g->w[a] < best) best = g->w[a];
            assert_true(best != UINT64_MAX);
            sum += best;
        }
        if (p.dist != GP_INF) assert_int_equal(sum, p.dist);
        gp_path_free(&p);
        gp_path_free(&r);
    }
    /* PHAST, 1 and 16 sources per sweep, through the sweep's paths (kernels/cch_lab.h; each row
     * of sweeps[] its paths, tables and plan, the default plan where base, ratio and bin size
     * are 0): the block sweep with both tables, the level sweep, a plan of many phases and small
     * bins (2 x 2 x 8) with both tables, without tables and with the top table only, a plan of
     * 1024-node bins without tables, with the top table only and with both (reused device
     * buffers); warp bins (k = 1) on the many-phase plan without tables, on 1024-node bins and
     * as a graph on 256-node bins (a graph: k = 1, 16, 1, 16, the second call of each k
     * launching the captured graph again), the same three with the last phase reading only the
     * cells of bins with an entry (SKIP), the graph's k = 1, 16, 1, 16 leaving cells of the other
     * layout behind; 64-bit warp-bin cells (W64; on the many-phase plan, and with warp bins for
     * 16 sources as a graph on 1024-node bins, where 16 sources' cells do not fit a slot: the
     * block sweep); warp bins for 16 sources (WMULTI) with 4, 2 and 1 sources per warp (wkw; 0:
     * the default, 4) with the skip as a graph on the default plan, on the many-phase plan and
     * on 1024-node bins, without the skip on 256-node bins; the flat table phases (FLAT) on the
     * default plan as a graph, on the many-phase plan with warp bins for 16 sources, 2 a warp, on
     * 1024-node bins (block sweep elsewhere), and on a 4 x 4 plan of 64-node bins as a graph;
     * then with warp bins for 16 sources on the default plan, one source per warp on the 4 x 4
     * plan, 64-bit cells 2 a warp on the many-phase plan; the flat phases gathered (GATHER) on
     * the default plan, the many-phase plan, 1024-node bins and the 4 x 4 plan; the service's
     * paths on the default plan and again on the others. (The paths of every earlier test here
     * are the service's; the warp bins of 4 sources a warp with 32-bit cells run sweep_wpass,
     * the others sweep_warcs.) */
    uint32_t src[16];
    for (int i = 0; i < 16; i++) src[i] = (uint32_t)(rnd() % n);
    uint64_t *dg = malloc((size_t)n * 16 * 8), *dc = malloc((size_t)n * 8);
    enum {
        G = GP_DCCH_GRAPH,
        W = GP_DCCH_WARPS,
        SK = GP_DCCH_SKIP,
        WM = GP_DCCH_WMULTI,
        W64 = GP_DCCH_W64,
        FL = GP_DCCH_FLAT,
        GA = GP_DCCH_GATHER,
        ALL = GP_DCCH_PATHS_DEFAULT
    };
    enum { BOTH, LEVELS, NO_TABLES, TOP_ONLY }; /* the tables (or the level sweep) */
    static const struct {
        unsigned paths, tables;
        uint32_t base, ratio, cap, wkw;
    } sweeps[] = {{0, BOTH, 0, 0, 0, 0},
                  {0, LEVELS, 0, 0, 0, 0},
                  {0, BOTH, 2, 2, 8, 0},
                  {0, NO_TABLES, 2, 2, 8, 0},
                  {0, TOP_ONLY, 2, 2, 8, 0},
                  {0, NO_TABLES, 256, 16, 1024, 0},
                  {0, TOP_ONLY, 256, 16, 1024, 0},
                  {0, BOTH, 256, 16, 1024, 0},
                  {W, NO_TABLES, 2, 2, 8, 0},
                  {W, BOTH, 256, 16, 1024, 0},
                  {W | G, BOTH, 256, 16, 256, 0},
                  {W | SK, NO_TABLES, 2, 2, 8, 0},
                  {W | SK, BOTH, 256, 16, 1024, 0},
                  {W | SK | G, BOTH, 256, 16, 256, 0},
                  {W64 | W | SK, BOTH, 2, 2, 8, 0},
                  {W64 | WM | W | SK | G, BOTH, 256, 16, 1024, 0},
                  {WM | SK | W | G, BOTH, 0, 0, 0, 0},
                  {WM | SK | W, BOTH, 2, 2, 8, 2},
                  {WM | SK | W, BOTH, 256, 16, 1024, 1},
                  {WM | W | G, BOTH, 256, 16, 256, 4},
                  {FL | SK | W | G, BOTH, 0, 0, 0, 0},
                  {FL | WM | SK | W, BOTH, 2, 2, 8, 2},
                  {FL, BOTH, 256, 16, 1024, 0},
                  {FL | WM | SK | W | G, BOTH, 4, 4, 64, 0},
                  {FL | WM | SK | W | G, BOTH, 0, 0, 0, 0},
                  {WM | SK | W, BOTH, 4, 4, 64, 1},
                  {W64 | WM | SK | W, BOTH, 2, 2, 8, 2},
                  {GA | FL | WM | SK | W | G, BOTH, 0, 0, 0, 0},
                  {GA | FL | WM | SK | W, BOTH, 2, 2, 8, 2},
                  {GA | FL, BOTH, 256, 16, 1024, 0},
                  {GA | FL | WM | SK | W | G, BOTH, 4, 4, 64, 0},
                  {ALL, BOTH, 0, 0, 0, 0},
                  {FL | WM | SK | W, BOTH, 2, 2, 8, 0},
                  {WM | W | G, BOTH, 256, 16, 256, 0},
                  {FL | WM | SK | W | G, BOTH, 4, 4, 64, 0},
                  {FL | WM | SK | W, BOTH, 256, 16, 1024, 0}};
    const int nsweeps = (int)(sizeof sweeps / sizeof *sweeps);
    for (int v = 0; v < nsweeps; v++) {
        gp_dcch_tune tn = tests_tune;
        tn.paths = sweeps[v].paths;
        tn.levels = sweeps[v].tables == LEVELS;
        if (sweeps[v].tables == NO_TABLES) tn.top_max = 0;
        if (sweeps[v].tables == NO_TABLES || sweeps[v].tables == TOP_ONLY) tn.piece_max = 0;
        tn.plan_base = sweeps[v].base;
        tn.plan_ratio = sweeps[v].ratio;
        tn.bin_cap = sweeps[v].cap;
        if (sweeps[v].wkw) tn.wkw = sweeps[v].wkw;
        assert_int_equal(gp_cch_gpu_sweep(c, &tn, &err), GP_OK);
        char what[32];
        snprintf(what, sizeof what, "sweep %d", v);
        /* a graph: captured, then launched again */
        phast_rows(c, g, src, sweeps[v].paths & G ? 4 : 2, phast_sources, dg, dc, what);
    }
    /* 32-bit warp-bin cells saturating (sat: at 300 here, below most distances): the sweep
     * notices and runs again with 64-bit cells, for 1 and 16 sources (warp bins for both), equal
     * to Dijkstra; then with a saturation point no distance reaches (32-bit cells kept); each
     * with 4 sources a warp (sweep_wpass, whose sums saturate below 2^31) and with 2
     * (sweep_warcs) */
    for (int sv = 0; sv < 4; sv++) {
        gp_dcch_tune tn = tests_tune;
        tn.sat = sv & 1 ? 4000000000u : 300;
        if (sv & 2) tn.wkw = 2;
        assert_int_equal(gp_cch_gpu_sweep(c, &tn, &err), GP_OK);
        phast_rows(c, g, src, 4, phast_sources, dg, dc, sv & 1 ? "no saturation" : "saturating");
        /* RPHAST's 32-bit table cells the same way: saturating at 300, the table runs again
         * in 64-bit cells (and the next one of these targets at once); equal to the CPU's */
        uint32_t ts[9], tt[11];
        uint64_t e1[99], e2[99];
        for (int i = 0; i < 9; i++) ts[i] = (uint32_t)(rnd() % n);
        for (int i = 0; i < 11; i++) tt[i] = (uint32_t)(rnd() % n);
        assert_int_equal(cpu->ops->table(cpu, g, ts, 9, tt, 11, e1, &err), GP_OK);
        for (int r = 0; r < 2; r++) {
            memset(e2, 0, sizeof e2);
            if (gp_cch_gpu_table(c, ts, 9, tt, 11, e2, &err) != GP_OK)
                fail_msg("rphast (sat %u): %s", tn.sat, err.msg);
            assert_memory_equal(e1, e2, sizeof e1);
            gp_cch_gpu_stats st;
            assert_int_equal(gp_cch_gpu_stats_get(c, &st), 0);
            /* a cell of 300 or more was stored through a sum that saturated at 300 */
            int far = 0;
            for (int i = 0; i < 99; i++) far |= e1[i] != GP_INF && e1[i] >= 300;
            if (sv & 1 ? st.table64 : far && !st.table64)
                fail_msg("rphast (sat %u, run %d): %d-bit cells", tn.sat, r, st.table64 ? 64 : 32);
        }
    }
    assert_int_equal(gp_cch_gpu_sweep(c, &tests_tune, &err), GP_OK);
    /* RPHAST */
    uint32_t ns = 37, nt = 41;
    uint32_t s2[37], t2[41];
    for (uint32_t i = 0; i < ns; i++) s2[i] = (uint32_t)(rnd() % n);
    for (uint32_t i = 0; i < nt; i++) t2[i] = (uint32_t)(rnd() % n);
    t2[3] = t2[2];
    uint64_t *o1 = malloc(ns * nt * 8), *o2 = malloc(ns * nt * 8);
    assert_int_equal(cpu->ops->table(cpu, g, s2, ns, t2, nt, o1, &err), GP_OK);
    if (gp_cch_gpu_table(c, s2, ns, t2, nt, o2, &err) != GP_OK) fail_msg("rphast: %s", err.msg);
    assert_memory_equal(o1, o2, ns * nt * 8);
    /* again (device buffers reused), then a second metric on the same device state */
    memset(o2, 0, ns * nt * 8);
    assert_int_equal(gp_cch_gpu_table(c, s2, ns, t2, nt, o2, &err), GP_OK);
    assert_memory_equal(o1, o2, ns * nt * 8);
    for (uint32_t e = 0; e < m; e++) {
        if (rnd() % 10 == 0 && c->ofw[e] != GP_CCH_INF) c->ofw[e] = (uint32_t)(rnd() % 1000);
        if (rnd() % 10 == 0 && c->obw[e] != GP_CCH_INF) c->obw[e] = (uint32_t)(rnd() % 1000);
    }
    assert_int_equal(gp_cch_customize_serial(c->topo, c->ofw, c->obw, fw, bw, fm, bm, &err), GP_OK);
    assert_int_equal(gp_cch_gpu_customize(c, 0, &err), GP_OK);
    same_custom(c, fw, bw, fm, bm);
    /* the customization's edge classes (kernels/cch.cu edge_class) other than the service's: a
     * thread for every edge of up to 16 triangles and a block for every edge of more than 2,
     * none of either, a thread only for edges without triangles, each without chunks; then
     * every level launched alone cut into chunks (kernels/cch.cu topo_new) of 16, 5 and 300
     * edges, with those classes; each with programmatic dependent level launches or without
     * (the fifth column, custom_pdl), as a CUDA graph or launch by launch (the sixth); the same
     * weights and witnesses each time, twice (the block's packed reduction keeps the first
     * offset reaching the minimum), and the device's packed witnesses the host's */
    const uint32_t shapes[10][6] = {
        {17, 2, 0, 0, 1, 1}, {0, 0, 0, 0, 1, 1},   {1, 1, 0, 0, 1, 1},    {9, 256, 16, 1, 1, 1},
        {17, 2, 5, 1, 1, 1}, {0, 0, 300, 1, 1, 1}, {9, 256, 16, 1, 0, 1}, {9, 256, 16, 1, 1, 0},
        {17, 2, 5, 1, 0, 0}, {1, 1, 0, 0, 1, 0}};
    for (int k = 0; k < 10; k++) {
        gp_dcch_tune tn = tests_tune;
        tn.tiny_tri = shapes[k][0], tn.heavy_tri = shapes[k][1];
        tn.custom_chunk = shapes[k][2], tn.chunk_min = shapes[k][3];
        tn.custom_pdl = (int)shapes[k][4];
        tn.custom_graph = (int)shapes[k][5];
        assert_int_equal(gp_cch_gpu_sweep(c, &tn, &err), GP_OK);
        for (int r = 0; r < 2; r++) {
            memset(c->fw, 0x5a, (size_t)m * 4);
            memset(c->fmid, 0x5a, (size_t)m * 4);
            if (gp_cch_gpu_customize(c, 0, &err) != GP_OK) fail_msg("gpu customize: %s", err.msg);
            same_custom(c, fw, bw, fm, bm);
        }
        gp_cch_witnesses(c);
        if (gp_cch_gpu_witnesses(c, wit, &err) != GP_OK) fail_msg("gpu witnesses: %s", err.msg);
        assert_memory_equal(wit, c->wit, (size_t)m * 16);
    }
    assert_int_equal(gp_cch_gpu_sweep(c, &tests_tune, &err), GP_OK);
    /* ... and the device's witnesses of the new metric == the host pass over them */
    gp_cch_witnesses(c);
    if (gp_cch_gpu_witnesses(c, wit, &err) != GP_OK) fail_msg("gpu witnesses: %s", err.msg);
    assert_memory_equal(wit, c->wit, (size_t)m * 16);
    /* the plan's weights follow the new metric: PHAST equals the CPU's on it */
    if (gp_cch_gpu_sssp(c, src, 1, dg, &err) != GP_OK) fail_msg("phast: %s", err.msg);
    assert_int_equal(gp_cch_sssp(c, src[0], GP_INF, dc, &err), GP_OK);
    assert_memory_equal(dc, dg, (size_t)n * 8);
    free(o1);
    free(o2);
    free(dg);
    free(dc);
    free(fw);
    free(bw);
    free(fm);
    free(bm);
    free(wit);
    gp_cch_free(c);
}

static void test_random(void **state) {
    (void)state;
    NEED_GPU();
    uint32_t sizes[] = {1, 2, 50, 700, 5000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        gp_graph *g = random_graph(sizes[i], 3, i % 2 ? 9 : 5000);
        check_gpu(g, 16);
        gp_graph_unref(g);
    }
}

static void test_road(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_generate_road(60000, 5, &err);
    assert_non_null(g);
    check_gpu(g, 16);
    gp_graph_unref(g);
    g = gp_generate_grid(20000, 5, &err);
    assert_non_null(g);
    check_gpu(g, 16);
    gp_graph_unref(g);
}

/* A cost per (tail, head): added to every arc u -> v, it keeps parallel arcs sorted by weight. */
static uint32_t pair_cost(uint32_t u, uint32_t v, uint32_t salt) {
    uint64_t z = ((uint64_t)u << 32 | v) * 0x9e3779b97f4a7c15ULL + salt;
    return (uint32_t)((z >> 40) % 500);
}

/* A reweighted version of g (gp_graph_reweight: the same topology, other weights). */
static gp_graph *reweighted(const gp_graph *g, uint32_t salt) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t *w = malloc((size_t)g->m * 4 + 4), *rw = malloc((size_t)g->m * 4 + 4);
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
            w[a] = g->w[a] + pair_cost(u, g->col[a], salt);
    for (uint32_t v = 0; v < g->n; v++)
        for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++)
            rw[a] = g->rw[a] + pair_cost(g->rcol[a], v, salt);
    gp_graph *g2 = gp_graph_reweight(g, w, rw, &err);
    if (!g2) fail_msg("reweight: %s", err.msg);
    return g2;
}

/* The engine's answers on g (PHAST, a table, routes) equal the CPU backend's Dijkstra. */
static void check_engine_answers(gp_engine *e, const gp_graph *g) {
    gp_err err;
    gp_err_clear(&err);
    uint32_t n = g->n;
    uint64_t *d1 = malloc((size_t)n * 8), *d2 = malloc((size_t)n * 8);
    uint32_t *p = malloc((size_t)n * 4);
    for (int q = 0; q < 5; q++) {
        uint32_t s = (uint32_t)(rnd() % n), t = (uint32_t)(rnd() % n);
        assert_int_equal(gp_engine_sssp(e, g, s, GP_INF, d2, p, &err), GP_OK);
        assert_int_equal(cpu->ops->sssp(cpu, g, s, GP_INF, d1, NULL, &err), GP_OK);
        assert_memory_equal(d1, d2, (size_t)n * 8);
        gp_path a, b;
        assert_int_equal(gp_engine_p2p(e, g, s, t, GP_P2P_AUTO, &a, &err), GP_OK);
        assert_int_equal(cpu->ops->p2p(cpu, g, s, t, GP_P2P_DIJKSTRA, &b, &err), GP_OK);
        assert_int_equal(a.dist, b.dist);
        gp_path_free(&a);
        gp_path_free(&b);
    }
    uint32_t src[5], dst[7];
    for (int i = 0; i < 5; i++) src[i] = (uint32_t)(rnd() % n);
    for (int i = 0; i < 7; i++) dst[i] = (uint32_t)(rnd() % n);
    uint64_t o1[35], o2[35];
    assert_int_equal(gp_engine_table(e, g, src, 5, dst, 7, o2, &err), GP_OK);
    assert_int_equal(cpu->ops->table(cpu, g, src, 5, dst, 7, o1, &err), GP_OK);
    assert_memory_equal(o1, o2, sizeof o1);
    free(d1);
    free(d2);
    free(p);
}

/* An engine on the CUDA backend with the CCH on for every graph. */
static gp_engine *cch_engine(void) {
    gp_err err;
    gp_err_clear(&err);
    gp_engine *e = gp_engine_new("cuda", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    return e;
}

static void test_engine(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err;
    gp_err_clear(&err);
    gp_engine *e = cch_engine();
    gp_graph *g = random_graph(3000, 3, 100);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_non_null(g->cch);
    assert_non_null(((gp_cch *)g->cch)->gpu);
    assert_string_equal(((gp_cch *)g->cch)->custom_on, "gpu");
    check_engine_answers(e, g);
    gp_graph_unref(g);
    gp_engine_free(e);
}

static int topo_shared(const gp_cch *c) {
    gp_cch_gpu_stats st;
    assert_int_equal(gp_cch_gpu_stats_get(c, &st), 0);
    return st.topo_shared;
}

/* Graph versions of one topology (a cost change: PATCH .../links) share the topology's device
 * part: the second version reuses the first's, keeps answering after the first is gone, and
 * hands it on to a third; once no version holds it, a new attach uploads it again. */
static void test_versions(void **state) {
    (void)state;
    NEED_GPU();
    gp_err err;
    gp_err_clear(&err);
    gp_engine *e = cch_engine();
    gp_graph *g1 = gp_generate_road(20000, 7, &err);
    assert_non_null(g1);
    assert_int_equal(gp_engine_attach(e, g1, &err), GP_OK);
    gp_cch *c1 = g1->cch;
    assert_non_null(c1);
    assert_string_equal(c1->custom_on, "gpu");
    assert_int_equal(topo_shared(c1), 0);
    gp_graph *g2 = reweighted(g1, 1);
    assert_int_equal(gp_engine_attach(e, g2, &err), GP_OK);
    gp_cch *c2 = g2->cch;
    assert_non_null(c2);
    assert_ptr_equal(c2->topo, c1->topo);
    assert_string_equal(c2->custom_on, "gpu");
    assert_int_equal(topo_shared(c2), 1);
    check_engine_answers(e, g1); /* each version its own metric on the shared part */
    check_engine_answers(e, g2);
    gp_graph_unref(g1);
    check_engine_answers(e, g2);
    gp_graph *g3 = reweighted(g2, 2);
    assert_int_equal(gp_engine_attach(e, g3, &err), GP_OK);
    assert_int_equal(topo_shared(g3->cch), 1);
    gp_graph_unref(g2);
    check_engine_answers(e, g3);
    gp_graph_unref(g3);
    gp_graph *g4 = gp_generate_road(20000, 7, &err);
    assert_int_equal(gp_engine_attach(e, g4, &err), GP_OK);
    assert_non_null(g4->cch);
    assert_int_equal(topo_shared(g4->cch), 0);
    check_engine_answers(e, g4);
    gp_graph_unref(g4);
    gp_engine_free(e);
}

/* The real graphs: DIMACS NY and BAY, Liechtenstein's OSM roads (car profile). */
static void test_real(void **state) {
    (void)state;
    NEED_GPU();
    for (int i = 0; i < REAL_GRAPHS; i++) {
        gp_graph *g = real_graph_load(i);
        if (!g) continue;
        check_gpu(g, 16);
        gp_graph_unref(g);
    }
}

int main(void) {
    gp_dcch_tune_defaults(&tests_tune);
    tests_tune.wbin_per_sm = 0;
    tests_tune.wmulti_per_sm = 0;
    tests_tune.gather_min = 0;
    gp_dcch_tune_set(&tests_tune);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),   cmocka_unit_test(test_road), cmocka_unit_test(test_engine),
        cmocka_unit_test(test_versions), cmocka_unit_test(test_real),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
