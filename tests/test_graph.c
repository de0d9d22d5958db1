/* test_graph.c - the graph module: CSR builder, id map, content hash, reference counting, cost
 * scaling, the DIMACS and CSV loaders (every malformed-input case checked for its "FILE:LINE:"
 * message), gzip input, the grid generator and DIMACS writer, the load dispatcher, the spatial
 * index against brute force, and the real data sets under $GPATH_DATA (skipped when absent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "graph/graph.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "graph/parallel.h"
#include "graph/spatial.h"
#include "storage/source.h"

/* ---------------------------------------------------------------------------------------------
 * helpers */

static char tmpdir[256];

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double rnd01(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static int setup_tmp(void **state) {
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/gp_test_graph_XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state) {
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes content to tmpdir/name and returns the full path (static buffer per call slot). */
static const char *write_tmp(const char *name, const char *content) {
    static char paths[8][512];
    static int slot;
    char *p = paths[slot++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    return p;
}

/* Asserts that loading spec fails with a message naming "PATH:LINE:" and containing what. */
static void expect_fail(const char *spec, const char *path, long line, const char *what) {
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (g) {
        gp_graph_unref(g);
        fail_msg("%s: loaded although it is malformed (expected '%s')", spec, what);
    }
    assert_int_not_equal(err.code, GP_OK);
    char want[600];
    if (line > 0) snprintf(want, sizeof want, "%s:%ld:", path, line);
    else snprintf(want, sizeof want, "%s", path);
    if (!strstr(err.msg, want)) fail_msg("message '%s' does not name '%s'", err.msg, want);
    if (!strstr(err.msg, what)) fail_msg("message '%s' does not say '%s'", err.msg, what);
}

/* A malformed input, the line its error must name and what the message must say. */
typedef struct bad_case {
    const char *text;
    long line;
    const char *what;
} bad_case;

static void run_bad_cases(const bad_case *cases, size_t n, const char *ext) {
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu.%s", i, ext);
        const char *p = write_tmp(name, cases[i].text);
        expect_fail(p, p, cases[i].line, cases[i].what);
    }
}

static gp_graph *load_ok(const char *spec, const gp_load_opts *o) {
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_graph_load(spec, o, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    return g;
}

/* Checks the CSR invariants every consumer relies on. */
static void check_csr(const gp_graph *g) {
    assert_int_equal(g->row[0], 0);
    assert_int_equal(g->row[g->n], g->m);
    assert_int_equal(g->rrow[0], 0);
    assert_int_equal(g->rrow[g->n], g->m);
    uint32_t max_w = 0;
    for (uint32_t i = 1; i < g->n; i++) assert_true(g->ext[i - 1] < g->ext[i]);
    for (uint32_t u = 0; u < g->n; u++) {
        assert_true(g->row[u] <= g->row[u + 1]);
        assert_int_equal(gp_graph_index(g, g->ext[u]), u);
        for (uint32_t i = g->row[u]; i < g->row[u + 1]; i++) {
            assert_true(g->col[i] < g->n);
            if (g->w[i] > max_w) max_w = g->w[i];
            if (i > g->row[u])
                assert_true(g->col[i - 1] < g->col[i] ||
                            (g->col[i - 1] == g->col[i] && g->w[i - 1] <= g->w[i]));
        }
    }
    assert_int_equal(g->max_w, max_w);
    /* reverse CSR holds exactly the forward arcs: compare multisets through a count per
     * (tail, head, weight) using a checksum over arcs plus a per-node count check */
    uint64_t fsum = 0, rsum = 0;
    uint32_t *indeg = calloc(g->n + 1, sizeof *indeg);
    assert_non_null(indeg);
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t i = g->row[u]; i < g->row[u + 1]; i++) {
            indeg[g->col[i]]++;
            uint64_t key = ((uint64_t)u * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)g->col[i] << 21) ^
                           g->w[i];
            fsum += key * 0xbf58476d1ce4e5b9ULL + (key >> 17);
        }
    for (uint32_t v = 0; v < g->n; v++) {
        assert_int_equal(g->rrow[v + 1] - g->rrow[v], indeg[v]);
        for (uint32_t i = g->rrow[v]; i < g->rrow[v + 1]; i++) {
            uint32_t u = g->rcol[i];
            uint64_t key = ((uint64_t)u * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)v << 21) ^ g->rw[i];
            rsum += key * 0xbf58476d1ce4e5b9ULL + (key >> 17);
            if (i > g->rrow[v]) assert_true(g->rcol[i - 1] <= g->rcol[i]);
        }
    }
    free(indeg);
    assert_true(fsum == rsum);
    assert_int_equal(strlen(g->version), 16);
    assert_true(gp_graph_memory(g) > 0);
}

/* Out-arcs of external u as "head:w" list, for literal comparisons. */
static void arcs_of(const gp_graph *g, int64_t u, char *buf, size_t cap) {
    buf[0] = '\0';
    uint32_t x = gp_graph_index(g, u);
    assert_int_not_equal(x, GP_NONE);
    size_t len = 0;
    for (uint32_t i = g->row[x]; i < g->row[x + 1]; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld:%u", i > g->row[x] ? " " : "",
                                (long long)g->ext[g->col[i]], g->w[i]);
}

/* ---------------------------------------------------------------------------------------------
 * builder */

static void test_builder_small(void **state) {
    (void)state;
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    assert_non_null(b);
    /* arcs in scrambled order, with parallel arcs and self-loops */
    assert_int_equal(gp_builder_add_arc(b, 30, 10, 7, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 10, 20, 5, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 10, 20, 2, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 10, 10, 1, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 10, 30, 9, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 10, 20, 5, &err), GP_OK);
    assert_int_equal(gp_builder_add_node(b, 25, 0, 0, 0, "lonely", &err), GP_OK);
    assert_int_equal(gp_builder_nodes(b), 4);
    assert_int_equal(gp_builder_arcs(b), 6);
    gp_graph *g = gp_builder_finish(b, "hand", "test", 1, &err);
    assert_non_null(g);
    assert_int_equal(g->n, 4);
    assert_int_equal(g->m, 6);
    assert_int_equal(g->ext[0], 10);
    assert_int_equal(g->ext[1], 20);
    assert_int_equal(g->ext[2], 25);
    assert_int_equal(g->ext[3], 30);
    char buf[256];
    arcs_of(g, 10, buf, sizeof buf);
    assert_string_equal(buf, "10:1 20:2 20:5 20:5 30:9");
    arcs_of(g, 30, buf, sizeof buf);
    assert_string_equal(buf, "10:7");
    arcs_of(g, 25, buf, sizeof buf);
    assert_string_equal(buf, "");
    assert_int_equal(g->max_w, 9);
    assert_int_equal(g->rrow[gp_graph_index(g, 20) + 1] - g->rrow[gp_graph_index(g, 20)], 3);
    assert_non_null(g->names);
    assert_string_equal(gp_graph_name(g, 2), "lonely");
    assert_null(gp_graph_name(g, 0));
    assert_null(g->lon);
    assert_null(g->spatial);
    assert_string_equal(g->source, "hand");
    assert_string_equal(g->format, "test");
    assert_int_equal(g->refs, 1);
    assert_true(g->loaded_at > 1e9);
    assert_int_equal(gp_graph_index(g, 11), GP_NONE); /* inside the dense id range */
    assert_int_equal(gp_graph_index(g, 9), GP_NONE);
    assert_int_equal(gp_graph_index(g, 31), GP_NONE);
    assert_int_equal(gp_graph_index(g, INT64_MIN), GP_NONE);
    assert_int_equal(gp_graph_index(g, INT64_MAX), GP_NONE);
    check_csr(g);
    gp_graph_unref(g);
}

static void test_builder_one_node_and_empty(void **state) {
    (void)state;
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_add_node(b, 42, 1, 8.5, 47.3, NULL, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "one", "test", 1, &err);
    assert_non_null(g);
    assert_int_equal(g->n, 1);
    assert_int_equal(g->m, 0);
    assert_int_equal(gp_graph_index(g, 42), 0);
    assert_non_null(g->spatial);
    uint32_t near;
    double metres;
    assert_int_equal(gp_spatial_nearest(g->spatial, g, 8.5, 47.3, 3, &near, &metres), 1);
    assert_int_equal(near, 0);
    assert_true(metres < 1e-6);
    check_csr(g);
    gp_graph_unref(g);

    b = gp_builder_new(1.0);
    gp_err_clear(&err);
    assert_null(gp_builder_finish(b, "nothing", "test", 1, &err));
    assert_non_null(strstr(err.msg, "empty graph"));

    b = gp_builder_new(1.0);
    assert_int_not_equal(gp_builder_add_node(b, 1, 1, 200.0, 0, NULL, &err), GP_OK);
    gp_builder_free(b);
    gp_builder_free(NULL);
    gp_graph_unref(NULL);
}

static void test_idmap_sparse_ids(void **state) {
    (void)state;
    gp_err err;
    enum { N = 20000 };
    int64_t *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);
    ids[0] = INT64_MIN;
    ids[1] = INT64_MAX;
    ids[2] = -1;
    ids[3] = 0;
    ids[4] = (int64_t)1 << 40;
    ids[5] = 7;
    for (int i = 6; i < N; i++) {
        /* mix of small dense, negative and huge ids; duplicates rejected below */
        uint64_t r = rnd();
        ids[i] = (r & 3) == 0   ? (int64_t)(r >> 40)
                 : (r & 3) == 1 ? -(int64_t)(r >> 20)
                 : (r & 3) == 2 ? (int64_t)(r >> 1)
                                : (int64_t)(r % 100000);
        for (int j = 0; j < 3 && ids[i] == ids[i - 1]; j++) ids[i]++;
    }
    gp_builder *b = gp_builder_new(1.0);
    for (int i = 0; i < N; i++)
        assert_int_equal(gp_builder_add_arc(b, ids[i], ids[(i * 7 + 3) % N], (uint32_t)i, &err),
                         GP_OK);
    uint32_t nodes = gp_builder_nodes(b);
    gp_graph *g = gp_builder_finish(b, "ids", "test", 1, &err);
    assert_non_null(g);
    assert_int_equal(g->n, nodes);
    assert_int_equal(g->ext[0], INT64_MIN);
    assert_int_equal(g->ext[g->n - 1], INT64_MAX);
    for (int i = 0; i < N; i++) {
        uint32_t x = gp_graph_index(g, ids[i]);
        assert_int_not_equal(x, GP_NONE);
        assert_true(g->ext[x] == ids[i]);
    }
    assert_int_equal(gp_graph_index(g, INT64_MIN + 1), GP_NONE);
    assert_int_equal(gp_graph_index(g, -2), GP_NONE);
    check_csr(g);
    gp_graph_unref(g);
    free(ids);
}

static gp_graph *small_graph(uint32_t w_of_last, double scale, int reversed_order) {
    gp_err err;
    gp_builder *b = gp_builder_new(scale);
    static const int64_t arcs[][3] = {{1, 2, 4}, {2, 3, 5}, {3, 1, 6}, {1, 3, 9}, {5, 1, 2}};
    const int na = 5;
    for (int k = 0; k < na; k++) {
        int i = reversed_order ? na - 1 - k : k;
        uint32_t w = i == na - 1 ? w_of_last : (uint32_t)arcs[i][2];
        assert_int_equal(gp_builder_add_arc(b, arcs[i][0], arcs[i][1], w, &err), GP_OK);
    }
    gp_graph *g = gp_builder_finish(b, "small", "test", 1, &err);
    assert_non_null(g);
    return g;
}

static void test_hash_and_refcount(void **state) {
    (void)state;
    gp_graph *a = small_graph(2, 1.0, 0), *b = small_graph(2, 1.0, 1);
    gp_graph *c = small_graph(3, 1.0, 0), *d = small_graph(2, 1000.0, 0);
    assert_true(a->hash == b->hash); /* insertion order does not matter */
    assert_string_equal(a->version, b->version);
    assert_true(a->hash != c->hash); /* one weight changed */
    assert_true(a->hash != d->hash); /* scale changed */
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)a->hash);
    assert_string_equal(hex, a->version);

    /* plain reference counting (dev_free is covered below) */
    assert_ptr_equal(gp_graph_ref(a), a);
    assert_int_equal(a->refs, 2);
    gp_graph_unref(a);
    assert_int_equal(a->refs, 1);
    gp_graph_unref(a);
    gp_graph_unref(b);
    gp_graph_unref(c);
    gp_graph_unref(d);
}

static int dev_frees;
static void count_free(void *p) {
    assert_ptr_equal(p, &dev_frees);
    dev_frees++;
}

static void test_dev_free_on_last_unref(void **state) {
    (void)state;
    gp_graph *g = small_graph(2, 1.0, 0);
    g->dev = &dev_frees;
    g->dev_free = count_free;
    dev_frees = 0;
    gp_graph_ref(g);
    gp_graph_ref(g);
    gp_graph_unref(g);
    gp_graph_unref(g);
    assert_int_equal(dev_frees, 0);
    gp_graph_unref(g);
    assert_int_equal(dev_frees, 1);
}

static void test_cost_scaling(void **state) {
    (void)state;
    gp_err err;
    uint32_t w = 0;
    gp_builder *b = gp_builder_new(1000.0);
    assert_int_equal(gp_builder_cost(b, 1.5, &w, &err), GP_OK);
    assert_int_equal(w, 1500);
    assert_int_equal(gp_builder_cost(b, 0.0, &w, &err), GP_OK);
    assert_int_equal(w, 0);
    assert_int_equal(gp_builder_cost(b, 1.2344, &w, &err), GP_OK); /* 0.03% off */
    assert_int_equal(w, 1234);
    assert_int_equal(gp_builder_cost(b, 0.0123, &w, &err), GP_EPARSE); /* 12 is 2.4% off */
    assert_int_equal(gp_builder_cost(b, 4294967.295, &w, &err), GP_OK);
    assert_int_equal(w, UINT32_MAX);
    /* too big for 32 bits at this scale */
    assert_int_equal(gp_builder_cost(b, 5e6, &w, &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "smaller --scale"));
    /* positive cost rounding to 0: precision lost */
    assert_int_equal(gp_builder_cost(b, 0.0001, &w, &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "larger --scale"));
    assert_non_null(strstr(err.msg, "0.0001"));
    assert_int_equal(gp_builder_cost(b, -1.0, &w, &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "negative"));
    assert_int_equal(gp_builder_cost(b, NAN, &w, &err), GP_EPARSE);
    assert_int_equal(gp_builder_cost(b, INFINITY, &w, &err), GP_EPARSE);
    assert_true(gp_builder_scale(b) == 1000.0);
    gp_builder_free(b);
    b = gp_builder_new(1.0);
    assert_int_equal(gp_builder_cost(b, 2.5, &w, &err), GP_EPARSE); /* 3 is 20% off */
    assert_int_equal(gp_builder_cost(b, 1000.4, &w, &err), GP_OK);  /* 0.04% off */
    assert_int_equal(w, 1000);
    gp_builder_free(b);
}

/* ---------------------------------------------------------------------------------------------
 * DIMACS */

static void test_dimacs_valid_and_coords(void **state) {
    (void)state;
    const char *gr = write_tmp("ok.gr", "c a comment\n"
                                        "p sp 4 5\n"
                                        "c another\n"
                                        "a 1 2 10\n"
                                        "a 2 3 20\r\n"
                                        "a 3 1 0\n"
                                        "a 1 2 3\n"
                                        "a 2 2 4");
    gp_graph *g = load_ok(gr, NULL);
    assert_int_equal(g->n, 4); /* node 4 is isolated but exists */
    assert_int_equal(g->m, 5);
    assert_true(g->scale == 1.0);
    assert_string_equal(g->format, "dimacs");
    assert_null(g->lon);
    char buf[128];
    arcs_of(g, 1, buf, sizeof buf);
    assert_string_equal(buf, "2:3 2:10");
    check_csr(g);
    gp_graph_unref(g);

    write_tmp("ok.co", "c coords\np aux sp co 4\nv 1 8500000 47300000\nv 2 8501000 47300000\n"
                       "v 3 -73530767 41085396\nv 4 0 0\n");
    g = load_ok(gr, NULL);
    assert_non_null(g->lon);
    assert_true(fabs(g->lon[2] - (-73.530767)) < 1e-9);
    assert_true(fabs(g->lat[2] - 41.085396) < 1e-9);
    assert_non_null(g->spatial);
    uint32_t near[2];
    assert_int_equal(gp_spatial_nearest(g->spatial, g, 8.5004, 47.3, 2, near, NULL), 2);
    assert_int_equal(near[0], 0);
    assert_int_equal(near[1], 1);
    gp_graph_unref(g);

    const char *co = write_tmp("ok.co", "p aux sp co 4\nv 9 1 1\n");
    char spec[600];
    snprintf(spec, sizeof spec, "dimacs:%s", gr);
    expect_fail(spec, co, 2, "out of range");
    co = write_tmp("ok.co", "p aux sp co 5\n");
    expect_fail(gr, co, 1, "declares 5 nodes");
    co = write_tmp("ok.co", "v 1 1 1\n");
    expect_fail(gr, co, 1, "before the 'p aux sp co' line");
    co = write_tmp("ok.co", "p aux sp co 4\nv 1 x 1\n");
    expect_fail(gr, co, 2, "bad coordinate line");
    unlink(co);
}

static void test_dimacs_malformed(void **state) {
    (void)state;
    static const bad_case cases[] = {
        {"c only comments\n", 1, "no 'p sp NODES ARCS' line"},
        {"", 1, "no 'p sp NODES ARCS' line"},
        {"c x\na 1 2 3\np sp 2 1\n", 2, "arc before the 'p sp NODES ARCS' line"},
        {"p sp 2 1\na 1 2 3\np sp 2 1\n", 3, "second 'p' line (first on line 1)"},
        {"p sp 2\n", 1, "bad 'p' line"},
        {"p max 2 1\n", 1, "bad 'p' line"},
        {"p sp 0 0\n", 1, "empty graph"},
        {"p sp 3 3\na 1 2 1\na 2 3 1\n", 3, "file ends after 2 arcs but line 1 declares 3"},
        {"p sp 3 1\na 1 2 1\na 2 3 1\n", 3, "more arcs than the 1 declared on line 1"},
        {"p sp 3 2\na 1 2 1\na 2 3 -4\n", 3, "weight -4 is negative"},
        {"p sp 3 2\na 1 2 1.5\na 2 3 4\n", 2, "weight is not a non-negative integer"},
        {"p sp 3 1\na 1 2 4294967296\n", 2, "exceeds 4294967295"},
        {"p sp 3 1\na 1 4 1\n", 2, "node id 4 out of range 1..3"},
        {"p sp 3 1\na 0 2 1\n", 2, "node id 0 out of range 1..3"},
        {"p sp 3 1\na 1 x 1\n", 2, "bad arc line"},
        {"p sp 3 1\na 1 2\n", 2, "is not a non-negative integer"},
        {"p sp 3 1\na 1 2 3 4\n", 2, "unexpected text after the weight"},
        {"p sp 3 1\nx 1 2 3\n", 2, "unexpected line: expected 'c', 'p sp' or 'a' lines"},
    };
    run_bad_cases(cases, sizeof cases / sizeof cases[0], "gr");
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.gr", tmpdir);
    expect_fail(missing, missing, 0, "cannot open");
}

static void test_dimacs_gzip(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/z.gr.gz", tmpdir);
    gzFile z = gzopen(path, "wb");
    assert_non_null(z);
    gzprintf(z, "c gzip\np sp 1000 2000\n");
    for (int i = 0; i < 2000; i++)
        gzprintf(z, "a %d %d %d\n", i % 1000 + 1, (i * 37) % 1000 + 1, i);
    gzclose(z);
    gp_graph *g = load_ok(path, NULL);
    assert_int_equal(g->n, 1000);
    assert_int_equal(g->m, 2000);
    assert_int_equal(g->max_w, 1999);
    check_csr(g);
    gp_graph_unref(g);

    /* truncated gzip stream: an error, never a partial graph */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    gp_err err;
    assert_null(gp_graph_load(path, NULL, &err));
    assert_non_null(strstr(err.msg, path));
}

/* ---------------------------------------------------------------------------------------------
 * CSV */

static void test_csv_valid(void **state) {
    (void)state;
    gp_err err;
    /* integral costs: scale 1; extra columns ignored; columns in any order */
    const char *p = write_tmp("a.csv", "id,target,source,cost,reverse_cost,capacity\n"
                                       "1,2,1,5,-1,9\n"
                                       "2,3,2,4,7,9\n"
                                       "3,1,3,-1,-1,9\n");
    gp_graph *g = load_ok(p, NULL);
    assert_true(g->scale == 1.0);
    assert_int_equal(g->n, 3);
    assert_int_equal(g->m, 3);
    assert_int_equal(g->directed_input, 1);
    char buf[128];
    arcs_of(g, 1, buf, sizeof buf);
    assert_string_equal(buf, "2:5");
    arcs_of(g, 3, buf, sizeof buf);
    assert_string_equal(buf, "2:7");
    gp_graph_unref(g);

    /* undirected: each direction's cost also gives the opposite arc */
    gp_load_opts o = {0};
    o.undirected = 1;
    char spec[600];
    snprintf(spec, sizeof spec, "csv:%s", p);
    g = load_ok(spec, &o);
    assert_int_equal(g->m, 6);
    assert_int_equal(g->directed_input, 0);
    arcs_of(g, 1, buf, sizeof buf);
    assert_string_equal(buf, "2:5");
    arcs_of(g, 2, buf, sizeof buf);
    assert_string_equal(buf, "1:5 3:4 3:7");
    check_csr(g);
    gp_graph_unref(g);

    /* fractional costs: default scale 1000; quoted fields; coordinates */
    p = write_tmp("b.csv", "source,target,cost,x1,y1,x2,y2\n"
                           "10,20,0.5,8.5,47.3,8.6,47.4\n"
                           "\"20\",30,1.25,8.6,47.4,,\n");
    g = load_ok(p, NULL);
    assert_true(g->scale == 1000.0);
    arcs_of(g, 10, buf, sizeof buf);
    assert_string_equal(buf, "20:500");
    arcs_of(g, 20, buf, sizeof buf);
    assert_string_equal(buf, "30:1250");
    assert_non_null(g->lon);
    assert_true(fabs(g->lon[1] - 8.6) < 1e-12 && fabs(g->lat[1] - 47.4) < 1e-12);
    assert_true(isnan(g->lon[2])); /* node 30 has no coordinates */
    assert_int_equal(gp_spatial_count(g->spatial), 2);
    assert_true(fabs(gp_graph_cost(g, 1750) - 1.75) < 1e-12);
    gp_graph_unref(g);

    /* explicit scale */
    o.undirected = 0;
    o.scale = 100;
    g = load_ok(p, &o);
    assert_true(g->scale == 100.0);
    arcs_of(g, 20, buf, sizeof buf);
    assert_string_equal(buf, "30:125");
    gp_graph_unref(g);
    o.scale = 10; /* 1.25 -> 12.5 -> 13 is 4% off: rejected, naming the line */
    assert_null(gp_graph_load(p, &o, &err));
    assert_non_null(strstr(err.msg, "b.csv:3: cost 1.25 loses precision at scale 10"));
}

static void test_csv_malformed(void **state) {
    (void)state;
    static const bad_case cases[] = {
        {"", 1, "empty file"},
        {"1,2,3\n", 1, "bad header: no 'source' column"},
        {"source,target\n1,2\n", 1, "bad header: no 'cost' column"},
        {"source,target,cost,cost\n", 1, "column 'cost' appears twice"},
        {"source,target,cost,x1,y1\n", 1, "coordinates need all of x1,y1,x2,y2"},
        {"source,target,cost\n", 1, "empty graph"},
        {"source,target,cost\n\n1,2,3\nsource,target,cost\n", 4, "duplicate header line"},
        {"source,target,cost\n1,2,3\n2,3\n", 3, "2 fields where the header has 3"},
        {"source,target,cost\n1,2,3\n2,3,x\n", 3, "cost is not a finite number"},
        {"source,target,cost\n1,2,nan\n", 2, "cost is not a finite number"},
        {"source,target,cost\n1.5,2,3\n", 2, "source is not an integer node id"},
        {"source,target,cost\n1,b,3\n", 2, "target is not an integer node id"},
        {"source,target,cost,reverse_cost\n1,2,3,q\n", 2, "reverse_cost is not a finite number"},
        {"source,target,cost\n1,2,\"3\n", 2, "unterminated quoted field"},
        {"source,target,cost\n1,2,1e9\n2,3,0.0001\n", 0, "costs range from 0.0001 to 1e+09"},
        {"source,target,cost\n1,2,1e12\n", 0, "no fixed-point scale from 1 to 1e9"},
        {"source,target,cost,x1,y1,x2,y2\n1,2,3,a,1,2,2\n", 2, "are not numbers"},
        {"source,target,cost,x1,y1,x2,y2\n1,2,3,500,1,2,2\n", 2, "not a lon/lat"},
    };
    run_bad_cases(cases, sizeof cases / sizeof cases[0], "csv");
}

/* ---------------------------------------------------------------------------------------------
 * generator, writer, dispatcher */

/* The grid generator (grid:N[:SEED]); the road-like one (gen:) has tests/test_roadlike.c. */
static void test_generator(void **state) {
    (void)state;
    gp_err err;
    static const uint64_t sizes[] = {100, 101, 1000, 12345};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        gp_graph *g = gp_generate_grid(sizes[s], 5, &err);
        assert_non_null(g);
        assert_int_equal(g->n, sizes[s]);
        assert_true(g->m > 3 * sizes[s]);
        assert_non_null(g->lon);
        assert_non_null(g->spatial);
        assert_int_equal(gp_spatial_count(g->spatial), g->n);
        for (uint32_t v = 0; v < g->n; v++) {
            assert_int_equal(g->ext[v], (int64_t)v + 1);
            assert_true(fabs(g->lon[v] - 8.5) < 1.0 && fabs(g->lat[v] - 47.3) < 1.0);
        }
        for (uint32_t i = 0; i < g->m; i++) assert_true(g->w[i] >= 1 && g->w[i] < 600);
        check_csr(g);
        gp_graph *h = gp_generate_grid(sizes[s], 5, &err);
        assert_true(g->hash == h->hash);
        assert_memory_equal(g->lon, h->lon, g->n * sizeof(double));
        gp_graph_unref(h);
        h = gp_generate_grid(sizes[s], 6, &err);
        assert_true(g->hash != h->hash);
        gp_graph_unref(h);
        gp_graph_unref(g);
    }
    assert_null(gp_generate_grid(99, 1, &err));
    assert_int_equal(err.code, GP_EINVAL);
    assert_null(gp_generate_grid(100000001ULL, 1, &err));

    /* the spec forms; default seed 1. grid:N is the generator gen:N was before it became
     * road-like (issue 18), arc for arc: the same content hash as then. */
    gp_graph *a = load_ok("grid:500", NULL), *b = load_ok("grid:500:1", NULL);
    gp_graph *c = gp_generate_grid(500, 1, &err);
    assert_true(a->hash == b->hash && a->hash == c->hash);
    assert_string_equal(a->version, "ae0d99789e67596a");
    assert_string_equal(a->format, "grid");
    assert_string_equal(a->source, "grid:500");
    gp_graph_unref(a);
    gp_graph_unref(b);
    gp_graph_unref(c);
    a = load_ok("gen:500", NULL);
    b = load_ok("gen:500:1", NULL);
    c = gp_generate_road(500, 1, &err);
    assert_true(a->hash == b->hash && a->hash == c->hash);
    assert_string_equal(a->format, "gen");
    assert_string_equal(a->source, "gen:500");
    check_csr(a);
    gp_graph_unref(a);
    gp_graph_unref(b);
    gp_graph_unref(c);
}

static void test_write_dimacs_roundtrip(void **state) {
    (void)state;
    gp_err err;
    /* the grid: no road attributes, which DIMACS cannot carry and the version includes */
    gp_graph *g = gp_generate_grid(2000, 9, &err);
    assert_non_null(g);
    char gr[600], co[600];
    snprintf(gr, sizeof gr, "%s/rt.gr", tmpdir);
    snprintf(co, sizeof co, "%s/rt.co", tmpdir);
    assert_int_equal(gp_write_dimacs(g, gr, co, &err), GP_OK);
    gp_graph *h = load_ok(gr, NULL);
    assert_true(g->hash == h->hash);
    assert_non_null(h->lon);
    for (uint32_t v = 0; v < g->n; v++) {
        assert_true(fabs(g->lon[v] - h->lon[v]) <= 0.6e-6);
        assert_true(fabs(g->lat[v] - h->lat[v]) <= 0.6e-6);
    }
    gp_graph_unref(h);
    gp_graph_unref(g);

    /* non-1..n ids are renumbered so the output stays valid DIMACS */
    g = small_graph(2, 1.0, 0);
    assert_int_equal(gp_write_dimacs(g, gr, NULL, &err), GP_OK);
    unlink(co);
    h = load_ok(gr, NULL);
    assert_int_equal(h->n, g->n);
    assert_int_equal(h->m, g->m);
    assert_memory_equal(h->w, g->w, g->m * sizeof(uint32_t));
    gp_graph_unref(h);
    gp_graph_unref(g);
}

static void test_dispatch(void **state) {
    (void)state;
    gp_err err;
    assert_null(gp_graph_load("", NULL, &err));
    assert_int_equal(err.code, GP_EINVAL);
    assert_null(gp_graph_load(NULL, NULL, &err));
    assert_null(gp_graph_load("gen:abc", NULL, &err));
    assert_non_null(strstr(err.msg, "gen:N[:SEED]"));
    assert_null(gp_graph_load("gen:1000:x", NULL, &err));
    assert_null(gp_graph_load("gen:1000:", NULL, &err));
    assert_null(gp_graph_load("grid:x", NULL, &err));
    assert_non_null(strstr(err.msg, "grid:N[:SEED]"));
    assert_null(gp_graph_load("roads.xyz", NULL, &err));
    assert_non_null(strstr(err.msg, "cannot tell the graph format"));
    assert_null(gp_graph_load("dimacs:", NULL, &err));
    /* the prefix wins over the extension */
    const char *p = write_tmp("looks.gr", "source,target,cost\n1,2,3\n");
    char spec[600];
    snprintf(spec, sizeof spec, "csv:%s", p);
    gp_graph *g = load_ok(spec, NULL);
    assert_int_equal(g->m, 1);
    assert_string_equal(g->format, "csv");
    assert_string_equal(g->source, spec);
    gp_graph_unref(g);
}

/* ---------------------------------------------------------------------------------------------
 * spatial index */

static void brute_nearest(const gp_graph *g, double lon, double lat, uint32_t k, double *out) {
    /* k smallest haversine distances, ascending (insertion into a small sorted array) */
    uint32_t have = 0;
    for (uint32_t v = 0; v < g->n; v++) {
        if (isnan(g->lon[v])) continue;
        double d = gp_haversine_m(lon, lat, g->lon[v], g->lat[v]);
        if (have == k && d >= out[k - 1]) continue;
        uint32_t i = have < k ? have++ : k - 1;
        while (i > 0 && out[i - 1] > d) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = d;
    }
}

static void check_nearest(const gp_graph *g, double lon, double lat, uint32_t k) {
    uint32_t nodes[32];
    double metres[32], want[32];
    int r = gp_spatial_nearest(g->spatial, g, lon, lat, k, nodes, metres);
    uint32_t cnt = gp_spatial_count(g->spatial);
    assert_int_equal(r, k < cnt ? k : cnt);
    brute_nearest(g, lon, lat, (uint32_t)r, want);
    for (int i = 0; i < r; i++) {
        double d = gp_haversine_m(lon, lat, g->lon[nodes[i]], g->lat[nodes[i]]);
        assert_true(fabs(d - metres[i]) < 1e-9);
        if (i) assert_true(metres[i - 1] <= metres[i]);
        if (fabs(metres[i] - want[i]) > 1e-6 * (1 + want[i]))
            fail_msg("nearest #%d to (%.6f, %.6f): index %.6f m, brute force %.6f m", i, lon, lat,
                     metres[i], want[i]);
    }
}

static void test_spatial_vs_brute_force(void **state) {
    (void)state;
    gp_err err;
    /* a road grid: queries inside, at the edge and far outside */
    gp_graph *g = gp_generate_road(20000, 3, &err);
    assert_non_null(g);
    for (int q = 0; q < 300; q++) {
        double lon = 8.5 + (rnd01() - 0.5) * (q % 10 == 0 ? 40 : 0.3);
        double lat = 47.3 + (rnd01() - 0.5) * (q % 10 == 0 ? 40 : 0.2);
        check_nearest(g, lon, lat, (uint32_t)(1 + q % 17));
    }
    assert_int_equal(gp_spatial_nearest(g->spatial, g, NAN, 0, 1, (uint32_t[1]){0}, NULL), -1);
    assert_int_equal(gp_spatial_nearest(g->spatial, g, 0, 95, 1, (uint32_t[1]){0}, NULL), -1);
    assert_int_equal(gp_spatial_nearest(g->spatial, g, 0, 0, 0, NULL, NULL), 0);
    gp_graph_unref(g);

    /* the whole globe: poles, the antimeridian, duplicates, nodes without coordinates */
    gp_builder *b = gp_builder_new(1.0);
    for (int i = 0; i < 5000; i++) {
        double lon = rnd01() * 360 - 180, lat = asin(rnd01() * 2 - 1) * 180 / M_PI;
        if (i % 50 == 0) lon = 180.0 - rnd01() * 1e-3;
        if (i % 97 == 0) lat = 90;
        if (i % 13 == 0 && i) {
            assert_int_equal(gp_builder_add_node(b, i, 0, 0, 0, NULL, &err), GP_OK);
            continue;
        }
        if (i % 31 == 1) lon = 10, lat = 10; /* duplicates */
        assert_int_equal(gp_builder_add_node(b, i, 1, lon, lat, NULL, &err), GP_OK);
    }
    g = gp_builder_finish(b, "globe", "test", 1, &err);
    assert_non_null(g);
    assert_true(gp_spatial_count(g->spatial) < g->n);
    for (int q = 0; q < 300; q++) {
        double lon = rnd01() * 360 - 180, lat = rnd01() * 180 - 90;
        if (q % 7 == 0) lon = -180 + rnd01() * 1e-3;
        check_nearest(g, lon, lat, (uint32_t)(1 + q % 20));
    }
    check_nearest(g, 10, 10, 20);
    check_nearest(g, 0, 90, 5);
    check_nearest(g, 0, -90, 5);
    gp_graph_unref(g);

    assert_true(fabs(gp_haversine_m(0, 0, 0, 1) - 111195.08) < 0.1);
    assert_true(fabs(gp_haversine_m(179.9, 0, -179.9, 0) - gp_haversine_m(0, 0, 0.2, 0)) < 1e-6);
}

/* ---------------------------------------------------------------------------------------------
 * real data */

static const char *data_dir(void) {
    const char *d = getenv("GPATH_DATA");
    struct stat st;
    if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    return d;
}

static void test_real_dimacs(void **state) {
    (void)state;
    const char *d = data_dir();
    if (!d) {
        print_message("GPATH_DATA not set or missing: skipping real DIMACS graphs\n");
        skip();
    }
    char p[600];
    snprintf(p, sizeof p, "%s/dimacs/rome99.gr", d);
    gp_graph *g = load_ok(p, NULL);
    assert_int_equal(g->n, 3353);
    assert_int_equal(g->m, 8870);
    check_csr(g);
    gp_graph_unref(g);
    snprintf(p, sizeof p, "%s/dimacs/USA-road-d.NY.gr.gz", d);
    g = load_ok(p, NULL);
    assert_int_equal(g->n, 264346);
    assert_int_equal(g->m, 733846);
    check_csr(g);
    gp_graph_unref(g);
}

static void test_real_csv(void **state) {
    (void)state;
    const char *d = data_dir();
    if (!d) {
        print_message("GPATH_DATA not set or missing: skipping the pgRouting sample\n");
        skip();
    }
    char p[600];
    snprintf(p, sizeof p, "%s/pgrouting-sample/sampledata/edges.csv", d);
    gp_graph *g = load_ok(p, NULL);
    assert_int_equal(g->n, 17);
    assert_int_equal(g->m, 30);
    assert_true(g->scale == 1.0);
    assert_non_null(g->lon);
    check_csr(g);
    gp_graph_unref(g);
}

/* gp_parallel_for and gp_parallel_for_dynamic (graph/parallel.c): every item exactly once, the
 * even split's chunks one call each with the same bounds as before, and many loops in a row (the
 * job shared with threads that may start after the loop returned: ASan sees any use after free). */
typedef struct count_job {
    unsigned char *seen;
    uint64_t calls, bad;
    uint64_t n, parts;
} count_job;

static void count_range(void *ctx, uint64_t lo, uint64_t hi) {
    count_job *j = ctx;
    for (uint64_t i = lo; i < hi; i++) __atomic_add_fetch(&j->seen[i], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&j->calls, 1, __ATOMIC_RELAXED);
    if (j->parts) { /* the even split: lo and hi are bounds n k / parts */
        int ok = 0;
        for (uint64_t k = 0; k < j->parts; k++)
            ok |= lo == j->n * k / j->parts && hi == j->n * (k + 1) / j->parts;
        if (!ok) __atomic_add_fetch(&j->bad, 1, __ATOMIC_RELAXED);
    }
}

static void test_parallel_loops(void **state) {
    (void)state;
    const uint64_t sizes[] = {0, 1, 7, 65536 * 2, 65536 * 4 + 3, 1000003};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        uint64_t n = sizes[s];
        unsigned char *seen = calloc(n + 1, 1);
        for (int threads = 0; threads <= 5; threads++) {
            count_job j = {seen, 0, 0, n, 0};
            memset(seen, 0, n + 1);
            int t = threads ? threads : gp_cpu_count();
            if (t > 16) t = 16;
            if ((uint64_t)t > n / 65536) t = (int)(n / 65536);
            j.parts = t > 1 ? (uint64_t)t : 0;
            gp_parallel_for(n, threads, count_range, &j);
            for (uint64_t i = 0; i < n; i++) assert_int_equal(seen[i], 1);
            assert_int_equal(j.bad, 0);
            assert_true(j.calls == (t > 1 ? (uint64_t)t : n ? 1 : 0));
            count_job d = {seen, 0, 0, n, 0};
            memset(seen, 0, n + 1);
            gp_parallel_for_dynamic(n, threads, threads == 3 ? 5 : 0, count_range, &d);
            for (uint64_t i = 0; i < n; i++) assert_int_equal(seen[i], 1);
        }
        free(seen);
    }
    unsigned char seen[200000];
    for (int r = 0; r < 500; r++) {
        count_job j = {seen, 0, 0, sizeof seen, 0};
        memset(seen, 0, sizeof seen);
        if (r & 1) gp_parallel_for(sizeof seen, 0, count_range, &j);
        else gp_parallel_for_dynamic(sizeof seen, 4, 0, count_range, &j);
        for (size_t i = 0; i < sizeof seen; i += 997) assert_int_equal(seen[i], 1);
    }
}

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* gp_sort_u32 on every CPU (a million entries and more) and on one (fewer): both orders equal
 * qsort's, over the whole 32-bit range and over small ranges full of repeats; the unique form
 * keeps one of each. */
static void test_sort_u32(void **st) {
    (void)st;
    const uint32_t sizes[] = {0, 1, 7, 1000, (1u << 17) - 1, 1u << 17, 1500007};
    uint64_t seed = 99;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        for (int range = 0; range < 3; range++) {
            uint32_t n = sizes[si];
            uint32_t *a = malloc((size_t)n * 4 + 4), *b = malloc((size_t)n * 4 + 4);
            assert_true(a && b);
            for (uint32_t i = 0; i < n; i++) {
                uint64_t x = gp_splitmix64(&seed);
                a[i] = range == 0   ? (uint32_t)(x >> 32)
                       : range == 1 ? (uint32_t)(x % 5000)
                                    : ~0u - (uint32_t)(x % 3);
                b[i] = a[i];
            }
            assert_int_equal(gp_sort_u32(a, n), 0);
            qsort(b, n, 4, cmp_u32);
            assert_memory_equal(a, b, (size_t)n * 4);
            int64_t u = gp_sort_unique_u32(a, n);
            int64_t k = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!k || b[k - 1] != b[i]) b[k++] = b[i];
            assert_int_equal(u, k);
            assert_memory_equal(a, b, (size_t)k * 4);
            free(a);
            free(b);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_small),
        cmocka_unit_test(test_parallel_loops),
        cmocka_unit_test(test_builder_one_node_and_empty),
        cmocka_unit_test(test_idmap_sparse_ids),
        cmocka_unit_test(test_hash_and_refcount),
        cmocka_unit_test(test_dev_free_on_last_unref),
        cmocka_unit_test(test_cost_scaling),
        cmocka_unit_test(test_dimacs_valid_and_coords),
        cmocka_unit_test(test_dimacs_malformed),
        cmocka_unit_test(test_dimacs_gzip),
        cmocka_unit_test(test_csv_valid),
        cmocka_unit_test(test_csv_malformed),
        cmocka_unit_test(test_generator),
        cmocka_unit_test(test_sort_u32),
        cmocka_unit_test(test_write_dimacs_roundtrip),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_spatial_vs_brute_force),
        cmocka_unit_test(test_real_dimacs),
        cmocka_unit_test(test_real_csv),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
