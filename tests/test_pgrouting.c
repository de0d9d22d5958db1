/* test_pgrouting.c - the CPU backend against pgRouting's own recorded answers on its documentation
 * sample network ($GPATH_DATA/pgrouting-sample; skipped with a message when absent).
 *
 * The .result files (psql transcripts, query blocks separated by "/ * -- qN * /" markers) are
 * parsed here, not hard-coded: each block's SQL says which function ran (pgr_dijkstra,
 * pgr_dijkstraCost, pgr_bdDijkstra, pgr_dijkstraCostMatrix, pgr_floydWarshall, pgr_johnson),
 * whether reverse_cost was selected, whether directed => false, whether only edges "id < 5" were
 * used, and which (source, target) pairs were asked (numbers, ARRAY[...], a VALUES list, or the
 * sample's `combinations` table printed by an earlier block). Graphs are built from
 * sampledata/edges.csv with pgRouting's semantics (negative cost = no arc; undirected = both
 * directions) and, for the full edge table, also through the real CSV loader. Every recorded
 * agg_cost must equal ours exactly; every asked pair pgRouting left out (no route) must be
 * unreachable for us; our paths must be valid with the same total.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "storage/source.h"

static char data_dir[1024];

typedef struct edge {
    int64_t id, s, t;
    double cost, rcost;
} edge;
static edge edges[64];
static int nedges;

/* ---------------------------------------------------------------------------------------------
 * files */

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[len] = '\0';
    fclose(f);
    return buf;
}

static int setup(void **state) {
    (void)state;
    const char *d = getenv("GPATH_DATA");
    if (!d) return 0;
    snprintf(data_dir, sizeof data_dir, "%s/pgrouting-sample", d);
    char path[1200];
    snprintf(path, sizeof path, "%s/sampledata/edges.csv", data_dir);
    char *csv = slurp(path);
    if (!csv) {
        data_dir[0] = '\0';
        return 0;
    }
    /* header: id,source,target,cost,reverse_cost,... */
    char *save = NULL;
    char *line = strtok_r(csv, "\n", &save);
    int col[5] = {-1, -1, -1, -1, -1};
    static const char *names[5] = {"id", "source", "target", "cost", "reverse_cost"};
    int k = 0;
    char *s2 = NULL;
    for (char *f = strtok_r(line, ",", &s2); f; f = strtok_r(NULL, ",", &s2), k++)
        for (int c = 0; c < 5; c++)
            if (strcmp(f, names[c]) == 0) col[c] = k;
    for (int c = 0; c < 5; c++)
        if (col[c] < 0) {
            free(csv);
            data_dir[0] = '\0';
            return -1;
        }
    while ((line = strtok_r(NULL, "\n", &save)) && nedges < 64) {
        double v[16] = {0};
        k = 0;
        char *p = line;
        while (k < 16) {
            v[k++] = strtod(p, &p);
            if (*p != ',') break;
            p++;
        }
        edge *e = &edges[nedges++];
        e->id = (int64_t)v[col[0]];
        e->s = (int64_t)v[col[1]];
        e->t = (int64_t)v[col[2]];
        e->cost = v[col[3]];
        e->rcost = v[col[4]];
    }
    free(csv);
    return 0;
}

#define NEED_DATA()                                                                                \
    do {                                                                                           \
        if (!data_dir[0]) {                                                                        \
            printf("SKIP: $GPATH_DATA/pgrouting-sample is absent (set GPATH_DATA to the shared "   \
                   "data directory)\n");                                                           \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* pgRouting's graph: cost >= 0 gives s->t, reverse_cost >= 0 (when selected) t->s; undirected
 * adds the opposite arc of each. max_id > 0 keeps edges with id < max_id. */
static gp_graph *build(int with_rev, int undirected, int64_t max_id) {
    gp_err err;
    gp_builder *b = gp_builder_new(1.0);
    for (int i = 0; i < nedges; i++) {
        const edge *e = &edges[i];
        if (max_id > 0 && e->id >= max_id) continue;
        assert_int_equal(gp_builder_add_node(b, e->s, 0, 0, 0, NULL, &err), GP_OK);
        assert_int_equal(gp_builder_add_node(b, e->t, 0, 0, 0, NULL, &err), GP_OK);
        double c[2] = {e->cost, with_rev ? e->rcost : -1};
        for (int dir = 0; dir < 2; dir++) {
            if (c[dir] < 0) continue;
            uint32_t w;
            assert_int_equal(gp_builder_cost(b, c[dir], &w, &err), GP_OK);
            int64_t u = dir ? e->t : e->s, v = dir ? e->s : e->t;
            assert_int_equal(gp_builder_add_arc(b, u, v, w, &err), GP_OK);
            if (undirected) assert_int_equal(gp_builder_add_arc(b, v, u, w, &err), GP_OK);
        }
    }
    gp_graph *g = gp_builder_finish(b, "pgrouting-sample", "csv", !undirected, &err);
    if (!g) fail_msg("building the sample graph: %s", err.msg);
    return g;
}

/* ---------------------------------------------------------------------------------------------
 * .result parsing */

/* start_vid / end_vid of a result without that column (the query had a single value) */
#define ANY_VID INT64_MIN

typedef struct row {
    int64_t start, end, node;
    int path_seq;
    double agg;
} row;

typedef struct block {
    char name[16];
    char *sql;     /* text between the marker and the table header */
    int has_table; /* a header line was found */
    int has_node;  /* node / path_seq columns present */
    int ncols;
    char cols[12][24];
    row *rows;
    int nrows;
} block;

typedef struct pairs {
    int64_t s[64], t[64];
    int n;
} pairs;

static pairs combinations; /* from the `SELECT source, target FROM combinations` block */

static void trim(char *s) {
    size_t l = strlen(s);
    while (l && isspace((unsigned char)s[l - 1])) s[--l] = '\0';
    size_t i = 0;
    while (isspace((unsigned char)s[i])) i++;
    memmove(s, s + i, strlen(s + i) + 1);
}

/* Splits "a | b | c" into trimmed fields; returns the count. */
static int split_bar(char *line, char out[][24], int max) {
    int n = 0;
    char *save = NULL;
    for (char *f = strtok_r(line, "|", &save); f && n < max; f = strtok_r(NULL, "|", &save)) {
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s", f);
        trim(tmp);
        size_t l = strlen(tmp);
        if (l > 23) l = 23; /* column names and values here are short */
        memcpy(out[n], tmp, l);
        out[n++][l] = '\0';
    }
    return n;
}

static int colix(const block *b, const char *name) {
    for (int i = 0; i < b->ncols; i++)
        if (strcmp(b->cols[i], name) == 0) return i;
    return -1;
}

/* Parses the whole transcript into blocks (caller frees with free_blocks). */
static block *parse_result(char *text, int *nblocks) {
    int cap = 256, n = 0;
    block *bl = calloc((size_t)cap, sizeof *bl);
    char *p = text;
    while ((p = strstr(p, "/* -- q")) != NULL) {
        block *b = &bl[n++];
        assert_true(n < cap);
        p += 6;
        size_t k = 0;
        while (p[k] && p[k] != ' ' && p[k] != '*' && k < 15) k++;
        snprintf(b->name, sizeof b->name, "%.*s", (int)k, p);
        char *end = strstr(p, "/* -- q");
        size_t blen = end ? (size_t)(end - p) : strlen(p);
        char *body = strndup(p, blen);
        /* find the header: a line followed by a line of dashes and pluses */
        char *save = NULL;
        char *prev = NULL;
        size_t sqllen = 0;
        int in_rows = 0;
        b->sql = calloc(1, blen + 1);
        for (char *line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (!in_rows && line[0] == '-' && strchr(line, '+') && prev) {
                char hdr[512];
                snprintf(hdr, sizeof hdr, "%s", prev);
                b->ncols = split_bar(hdr, b->cols, 12);
                b->has_table = 1;
                in_rows = 1;
                b->rows = calloc(512, sizeof *b->rows);
                b->has_node = colix(b, "node") >= 0 && colix(b, "path_seq") >= 0;
                /* the header line was appended to sql: cut it */
                char *h = strstr(b->sql, prev);
                if (h) *h = '\0';
                prev = NULL;
                continue;
            }
            if (in_rows) {
                if (line[0] == '(') break; /* "(N rows)" */
                char f[12][24];
                int nf = split_bar(line, f, 12);
                if (nf != b->ncols) continue;
                if (b->ncols == 2 && strcmp(b->cols[0], "source") == 0) {
                    /* the combinations table */
                    combinations.s[combinations.n] = strtoll(f[0], NULL, 10);
                    combinations.t[combinations.n++] = strtoll(f[1], NULL, 10);
                    continue;
                }
                int cs = colix(b, "start_vid"), ce = colix(b, "end_vid"), ca = colix(b, "agg_cost");
                if (ca < 0) continue;
                row *r = &b->rows[b->nrows++];
                assert_true(b->nrows < 512);
                /* one-source / one-target queries of some functions omit the column */
                r->start = cs >= 0 ? strtoll(f[cs], NULL, 10) : ANY_VID;
                r->end = ce >= 0 ? strtoll(f[ce], NULL, 10) : ANY_VID;
                r->agg = strtod(f[ca], NULL);
                if (b->has_node) {
                    r->node = strtoll(f[colix(b, "node")], NULL, 10);
                    r->path_seq = (int)strtol(f[colix(b, "path_seq")], NULL, 10);
                }
                continue;
            }
            size_t l = strlen(line);
            memcpy(b->sql + sqllen, line, l);
            sqllen += l;
            b->sql[sqllen++] = '\n';
            b->sql[sqllen] = '\0';
            prev = line;
        }
        free(body);
        p = end ? end : p + blen;
    }
    *nblocks = n;
    return bl;
}

static void free_blocks(block *bl, int n) {
    for (int i = 0; i < n; i++) {
        free(bl[i].sql);
        free(bl[i].rows);
    }
    free(bl);
}

/* Parses "6" or "ARRAY[6, 1]" at *p into ids; advances *p; returns count (0: not a group). */
static int parse_group(const char **p, int64_t *out, int max) {
    const char *s = *p;
    while (*s == ' ' || *s == ',' || *s == '\n') s++;
    int n = 0;
    if (strncasecmp(s, "ARRAY[", 6) == 0) {
        s += 6;
        while (*s && *s != ']') {
            char *e;
            long long v = strtoll(s, &e, 10);
            if (e == s) {
                s++;
                continue;
            }
            if (n < max) out[n++] = v;
            s = e;
        }
        if (*s == ']') s++;
    } else if (isdigit((unsigned char)*s)) {
        char *e;
        out[n++] = strtoll(s, &e, 10);
        s = e;
    }
    *p = s;
    return n;
}

/* The (s, t) pairs a pgr_dijkstra-family query asked for. */
static void asked_pairs(const char *sql, pairs *out) {
    out->n = 0;
    const char *q = strchr(sql, '\'');
    assert_non_null(q);
    q = strchr(q + 1, '\''); /* end of the edges SQL */
    assert_non_null(q);
    q++;
    const char *q2 = strchr(q, '\'');
    if (q2) { /* a combinations SQL */
        const char *v = strstr(q2, "VALUES");
        if (v) {
            for (const char *s = v; (s = strchr(s, '(')) != NULL; s++) {
                char *e;
                long long a = strtoll(s + 1, &e, 10);
                if (e == s + 1 || *e != ',') continue;
                long long b = strtoll(e + 1, NULL, 10);
                out->s[out->n] = a;
                out->t[out->n++] = b;
            }
        } else {
            assert_true(strstr(q2, "combinations") != NULL);
            assert_true(combinations.n > 0);
            *out = combinations;
        }
        return;
    }
    int64_t src[16], dst[16];
    int ns = parse_group(&q, src, 16), nt = parse_group(&q, dst, 16);
    assert_true(ns > 0 && nt > 0);
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nt; j++) {
            out->s[out->n] = src[i];
            out->t[out->n++] = dst[j];
        }
}

/* Query options from the SQL text. */
static void sql_opts(const char *sql, int *with_rev, int *undirected, int64_t *max_id) {
    *with_rev = strstr(sql, "reverse_cost") != NULL;
    *undirected = strstr(sql, "false") != NULL;
    *max_id = strcasestr(sql, "id < 5") ? 5 : 0;
}

/* Reads and parses DATA/pgrouting-sample/REL; *text backs the blocks (free both). */
static block *load_result(const char *rel, char **text, int *nb) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    *text = slurp(path);
    if (!*text) fail_msg("cannot read %s", path);
    return parse_result(*text, nb);
}

/* ---------------------------------------------------------------------------------------------
 * checks */

static double cost_of(const gp_graph *g, uint64_t d) {
    return d == GP_INF ? -1 : gp_graph_cost(g, d);
}

typedef struct tally {
    int values, unreachable, paths, same_paths;
} tally;

/* One p2p-family result file: every asked pair against our Dijkstra, bidirectional and table. */
static void check_p2p_file(const char *rel, tally *total) {
    tally tl_ = {0}, *t = &tl_;
    char *text;
    int nb;
    block *bl = load_result(rel, &text, &nb);
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    int queries = 0;
    for (int i = 0; i < nb; i++) {
        block *b = &bl[i];
        if (!b->has_table || strcasestr(b->sql, "pgr_TSP") ||
            !(strcasestr(b->sql, "pgr_dijkstra(") || strcasestr(b->sql, "pgr_dijkstraCost(") ||
              strcasestr(b->sql, "pgr_bdDijkstra(") || strcasestr(b->sql, "pgr_bdDijkstraCost(")))
            continue;
        queries++;
        int with_rev, undirected;
        int64_t max_id;
        sql_opts(b->sql, &with_rev, &undirected, &max_id);
        gp_graph *g = build(with_rev, undirected, max_id);
        pairs ask;
        asked_pairs(b->sql, &ask);
        for (int k = 0; k < ask.n; k++) {
            int64_t s = ask.s[k], tt = ask.t[k];
            if (s == tt) continue; /* pgRouting answers nothing for s == t */
            /* their rows for this pair, in path order */
            double agg = -1;
            int64_t their[64];
            int tl = 0;
            for (int r = 0; r < b->nrows; r++) {
                if ((b->rows[r].start != s && b->rows[r].start != ANY_VID) ||
                    (b->rows[r].end != tt && b->rows[r].end != ANY_VID))
                    continue;
                if (b->has_node && tl < 64) their[tl++] = b->rows[r].node;
                agg = b->rows[r].agg; /* the last row carries the total */
            }
            uint32_t si = gp_graph_index(g, s), ti = gp_graph_index(g, tt);
            assert_true(si != GP_NONE && ti != GP_NONE);
            uint64_t tab;
            assert_int_equal(gp_engine_table(e, g, &si, 1, &ti, 1, &tab, &err), GP_OK);
            if (cost_of(g, tab) != agg)
                fail_msg("%s %s: %lld -> %lld: pgRouting %g, table %g", rel, b->name, (long long)s,
                         (long long)tt, agg, cost_of(g, tab));
            if (agg < 0) t->unreachable++;
            else t->values++;
            for (int algo = GP_P2P_DIJKSTRA; algo <= GP_P2P_BIDIR; algo++) {
                gp_path p;
                assert_int_equal(gp_engine_p2p(e, g, si, ti, algo, &p, &err), GP_OK);
                if (cost_of(g, p.dist) != agg)
                    fail_msg("%s %s: %lld -> %lld: pgRouting %g, ours (algo %d) %g", rel, b->name,
                             (long long)s, (long long)tt, agg, algo, cost_of(g, p.dist));
                if (agg >= 0) {
                    /* valid path with the same total */
                    assert_int_equal(p.nodes[0], si);
                    assert_int_equal(p.nodes[p.len - 1], ti);
                    uint64_t sum = 0;
                    for (uint32_t x = 0; x + 1 < p.len; x++) {
                        uint64_t best = GP_INF;
                        for (uint32_t a = g->row[p.nodes[x]]; a < g->row[p.nodes[x] + 1]; a++)
                            if (g->col[a] == p.nodes[x + 1] && g->w[a] < best) best = g->w[a];
                        assert_true(best != GP_INF);
                        sum += best;
                    }
                    assert_int_equal(sum, p.dist);
                    if (b->has_node && algo == GP_P2P_DIJKSTRA) {
                        int same = (int)p.len == tl;
                        for (int x = 0; same && x < tl; x++) same = g->ext[p.nodes[x]] == their[x];
                        t->paths++;
                        t->same_paths += same;
                    }
                }
                gp_path_free(&p);
            }
        }
        gp_graph_unref(g);
    }
    assert_true(queries > 0);
    printf("%s: %d queries, %d pairs equal to pgRouting, %d unreachable as in pgRouting\n", rel,
           queries, t->values, t->unreachable);
    total->values += t->values;
    total->unreachable += t->unreachable;
    total->paths += t->paths;
    total->same_paths += t->same_paths;
    gp_engine_free(e);
    free_blocks(bl, nb);
    free(text);
}

static void test_dijkstra(void **state) {
    (void)state;
    NEED_DATA();
    tally t = {0};
    check_p2p_file("dijkstra/dijkstra.result", &t);
    /* the documented examples are among them */
    assert_true(t.values >= 40);
    assert_true(t.unreachable >= 3);
    /* Ties: where several paths share the shortest total, pgRouting (Boost) and we may pick
     * different ones; every path of ours was checked valid with the same total above. */
    printf("paths identical to pgRouting's (others: equal-cost alternatives): %d of %d\n",
           t.same_paths, t.paths);
    assert_true(t.same_paths > 0);
}

static void test_dijkstra_cost_and_bidir(void **state) {
    (void)state;
    NEED_DATA();
    tally t = {0};
    check_p2p_file("dijkstra/dijkstraCost.result", &t);
    check_p2p_file("bdDijkstra/bdDijkstra.result", &t);
    check_p2p_file("bdDijkstra/bdDijkstraCost.result", &t);
    assert_true(t.values >= 30);
}

/* Matrix answers: pgr_dijkstraCostMatrix (table) and pgr_floydWarshall / pgr_johnson (APSP). */
static void check_matrix_file(const char *rel, int apsp) {
    char *text;
    int nb;
    block *bl = load_result(rel, &text, &nb);
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 3, NULL, &err);
    int queries = 0, checked = 0;
    for (int i = 0; i < nb; i++) {
        block *b = &bl[i];
        if (!b->has_table || strcasestr(b->sql, "pgr_TSP") || colix(b, "agg_cost") < 0 ||
            !(strcasestr(b->sql, "CostMatrix(") || strcasestr(b->sql, "pgr_floydWarshall(") ||
              strcasestr(b->sql, "pgr_johnson(")))
            continue;
        queries++;
        int with_rev, undirected;
        int64_t max_id;
        sql_opts(b->sql, &with_rev, &undirected, &max_id);
        gp_graph *g = build(with_rev, undirected, max_id);
        /* the nodes: all of the graph (APSP) or the IN (...) list */
        uint32_t nodes[64], k = 0;
        if (apsp) {
            for (uint32_t v = 0; v < g->n; v++) nodes[k++] = v;
        } else {
            const char *in = strstr(b->sql, "IN (");
            assert_non_null(in);
            for (const char *s = in + 4; *s && *s != ')';) {
                char *end;
                long long v = strtoll(s, &end, 10);
                if (end == s) {
                    s++;
                    continue;
                }
                nodes[k] = gp_graph_index(g, v);
                assert_true(nodes[k] != GP_NONE);
                k++;
                s = end;
            }
        }
        uint64_t *d = malloc((size_t)k * k * sizeof *d);
        if (apsp) {
            uint32_t *nx = malloc((size_t)k * k * sizeof *nx);
            assert_int_equal(gp_engine_apsp(e, g, d, nx, &err), GP_OK);
            free(nx);
        } else {
            assert_int_equal(gp_engine_table(e, g, nodes, k, nodes, k, d, &err), GP_OK);
        }
        for (uint32_t a = 0; a < k; a++)
            for (uint32_t c = 0; c < k; c++) {
                if (a == c) continue;
                int64_t s = g->ext[nodes[a]], t = g->ext[nodes[c]];
                double agg = -1;
                for (int r = 0; r < b->nrows; r++)
                    if (b->rows[r].start == s && b->rows[r].end == t) agg = b->rows[r].agg;
                double ours = cost_of(g, d[(size_t)a * k + c]);
                if (ours != agg)
                    fail_msg("%s %s: %lld -> %lld: pgRouting %g, ours %g", rel, b->name,
                             (long long)s, (long long)t, agg, ours);
                checked++;
            }
        /* every row pgRouting printed is one of our pairs */
        for (int r = 0; r < b->nrows; r++) {
            uint32_t s = gp_graph_index(g, b->rows[r].start), t = gp_graph_index(g, b->rows[r].end);
            assert_true(s != GP_NONE && t != GP_NONE);
        }
        free(d);
        gp_graph_unref(g);
    }
    assert_true(queries > 0);
    printf("%s: %d queries, %d ordered pairs equal to pgRouting's (absent rows = unreachable)\n",
           rel, queries, checked);
    gp_engine_free(e);
    free_blocks(bl, nb);
    free(text);
}

static void test_cost_matrix(void **state) {
    (void)state;
    NEED_DATA();
    check_matrix_file("dijkstra/dijkstraCostMatrix.result", 0);
    check_matrix_file("bdDijkstra/bdDijkstraCostMatrix.result", 0);
}

static void test_floyd_warshall(void **state) {
    (void)state;
    NEED_DATA();
    check_matrix_file("allpairs/floydWarshall.result", 1);
    check_matrix_file("allpairs/johnson.result", 1);
}

/* The documented examples, spelled out (SOURCE.md), through the real CSV loader. */
static void test_loader_examples(void **state) {
    (void)state;
    NEED_DATA();
    char spec[1300];
    snprintf(spec, sizeof spec, "csv:%s/sampledata/edges.csv", data_dir);
    gp_err err;
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    static const struct {
        int undirected;
        int64_t s, t;
        double want;
    } ex[] = {{0, 6, 10, 5}, {0, 6, 17, 4}, {0, 1, 17, 5}, {0, 12, 10, 4},
              {0, 12, 7, 4}, {0, 6, 7, 1},  {1, 6, 10, 1}, {1, 1, 10, 4}};
    for (int und = 0; und < 2; und++) {
        gp_load_opts lo = {0};
        lo.undirected = und;
        gp_graph *g = gp_graph_load(spec, &lo, &err);
        if (!g) fail_msg("loading %s: %s", spec, err.msg);
        gp_graph *ref = build(1, und, 0);
        assert_int_equal(g->n, ref->n);
        assert_int_equal(g->m, ref->m);
        /* loader graph == test-built graph, pair by pair */
        size_t nn = (size_t)g->n * g->n;
        uint64_t *d1 = malloc(nn * sizeof *d1), *d2 = malloc(nn * sizeof *d2);
        assert_int_equal(gp_engine_apsp(e, g, d1, NULL, &err), GP_OK);
        assert_int_equal(gp_engine_apsp(e, ref, d2, NULL, &err), GP_OK);
        assert_memory_equal(d1, d2, nn * sizeof *d1);
        for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
            if (ex[i].undirected != und) continue;
            uint32_t s = gp_graph_index(g, ex[i].s), t = gp_graph_index(g, ex[i].t);
            gp_path p;
            assert_int_equal(gp_engine_p2p(e, g, s, t, GP_P2P_AUTO, &p, &err), GP_OK);
            assert_true(gp_graph_cost(g, p.dist) == ex[i].want);
            gp_path_free(&p);
        }
        free(d1);
        free(d2);
        gp_graph_unref(ref);
        gp_graph_unref(g);
    }
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loader_examples),         cmocka_unit_test(test_dijkstra),
        cmocka_unit_test(test_dijkstra_cost_and_bidir), cmocka_unit_test(test_cost_matrix),
        cmocka_unit_test(test_floyd_warshall),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
