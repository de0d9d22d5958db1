/* test_hostile.c - the graph loaders against hostile inputs (issue 11): a spec given over the admin
 * API may name any file, a device or FIFO, or a tiny file whose header asks for gigabytes.
 *
 * Checked: no loader quotes the bytes it read in an error (a secret-looking file through every
 * format); the allow-list of directories (outside, '..', a symlink out, a missing file inside vs
 * outside); regular files only (a FIFO is refused at once instead of blocking, /dev/zero too);
 * max_bytes (a gzip bomb stops after the limit), max_nodes / max_arcs, the deadline and the
 * cancel flag; DIMACS header counts as bounded hints ("p sp 50000000 0" is refused, not built);
 * options a format has no use for refused; the scale picked over every cost; the one spec
 * redaction.
 */
#include "graph/graph.h"
#include "storage/source.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[256], inside_dir[300], outside_dir[300];

static int setup(void **state) {
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/gp_hostile_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(inside_dir, sizeof inside_dir, "%s/in", tmpdir);
    snprintf(outside_dir, sizeof outside_dir, "%s/out", tmpdir);
    if (mkdir(inside_dir, 0700) || mkdir(outside_dir, 0700)) return -1;
    return 0;
}

static void rm_tree(const char *d) {
    DIR *dir = opendir(d);
    if (!dir) return;
    struct dirent *e;
    char p[800];
    while ((e = readdir(dir))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
        else unlink(p);
    }
    closedir(dir);
    rmdir(d);
}

static int teardown(void **state) {
    (void)state;
    rm_tree(tmpdir);
    return 0;
}

static const char *write_file(const char *dir, const char *name, const char *text) {
    static char p[8][700];
    static int k;
    char *out = p[k++ % 8];
    snprintf(out, 700, "%s/%s", dir, name);
    FILE *f = fopen(out, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return out;
}

static gp_graph *load(const char *spec, const gp_load_opts *o, gp_err *err) {
    gp_err_clear(err);
    return gp_graph_load(spec, o, err);
}

/* The first line of /etc/shadow and a line of an environment, through every format: the error
 * names the file and line and what is wrong, never the secret. */
static void test_no_file_bytes_in_errors(void **state) {
    (void)state;
    static const char *const secrets[] = {
        "root:$6$SECRETsalt$SECRETHASHSECRETHASH:19000:0:99999:7:::\n",
        "DB_PASSWORD=SECRETenv123\nPATH=/usr/bin\n",
        "SECRET SECRET SECRET\n",
        "source,target,cost\nSECRET1,2,3\n",
        "source,target,cost,reverse_cost,x1,y1,x2,y2\n1,2,SECRETc,SECRETr,SECRETx,1,2,2\n",
        "p sp 3 1\na 1 2 SECRETw\n",
        "NODES (\n  SECRETnode ( 1 2 )\n)\nLINKS (\n  L1 ( SECRETnode SECRETother ) 0 0 0 0 ( "
        ")\n)\n",
        "<?xml version=\"1.0\"?><graphml><graph><node id=\"SECRETid\"/></graph></graphml>\n",
        "<?xml version=\"1.0\"?><graphml><graph><SECRETtag></graph></graphml>\n",
    };
    static const char *const formats[] = {"dimacs", "csv", "sndlib", "rocketfuel", "graphml"};
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "secret%zu", i);
        const char *p = write_file(inside_dir, name, secrets[i]);
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
            char spec[800];
            snprintf(spec, sizeof spec, "%s:%s", formats[f], p);
            gp_err err;
            gp_graph *g = load(spec, NULL, &err);
            if (g) { /* a secret that happens to be a valid graph is fine; no message to check */
                gp_graph_unref(g);
                continue;
            }
            if (strstr(err.msg, "SECRET"))
                fail_msg("%s: the error quotes the file: %s", spec, err.msg);
            if (!strstr(err.msg, p))
                fail_msg("%s: the error does not name the file: %s", spec, err.msg);
        }
    }
}

static void expect_code(const char *spec, const gp_load_opts *o, int code, const char *what) {
    gp_err err;
    gp_graph *g = load(spec, o, &err);
    if (g) {
        gp_graph_unref(g);
        fail_msg("%s: loaded, expected code %d (%s)", spec, code, what);
    }
    if (err.code != code) fail_msg("%s: code %d, expected %d: %s", spec, err.code, code, err.msg);
    if (what && !strstr(err.msg, what))
        fail_msg("%s: message '%s' lacks '%s'", spec, err.msg, what);
}

static void test_allow_dirs(void **state) {
    (void)state;
    const char *good = write_file(inside_dir, "g.gr", "p sp 2 1\na 1 2 5\n");
    write_file(outside_dir, "x.gr", "p sp 2 1\na 1 2 5\n");
    gp_load_opts o = {0};
    o.allow_dirs = inside_dir;
    char spec[900];
    snprintf(spec, sizeof spec, "dimacs:%s", good);
    gp_err err;
    gp_graph *g = load(spec, &o, &err);
    assert_non_null(g);
    gp_graph_unref(g);
    snprintf(spec, sizeof spec, "dimacs:%s/x.gr", outside_dir);
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    snprintf(spec, sizeof spec, "dimacs:%s/../out/x.gr", inside_dir); /* '..' */
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    char link[800], target[800];
    snprintf(link, sizeof link, "%s/link.gr", inside_dir); /* a symlink out */
    snprintf(target, sizeof target, "%s/x.gr", outside_dir);
    assert_int_equal(symlink(target, link), 0);
    snprintf(spec, sizeof spec, "dimacs:%s", link);
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    snprintf(spec, sizeof spec, "sndlib:/etc/passwd");
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    snprintf(spec, sizeof spec, "dimacs:/proc/self/environ");
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    /* a missing file: inside, it is missing; outside, it is forbidden (no probing) */
    snprintf(spec, sizeof spec, "dimacs:%s/none.gr", inside_dir);
    expect_code(spec, &o, GP_EIO, "cannot open");
    snprintf(spec, sizeof spec, "dimacs:%s/none.gr", outside_dir);
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    snprintf(spec, sizeof spec, "dimacs:/no/such/dir/none.gr");
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
    /* the DIMACS sibling coordinate file is read under the same rule: a .co symlinked out */
    write_file(outside_dir, "c.co", "p aux sp co 2\nv 1 1 1\nv 2 2 2\n");
    const char *c = write_file(inside_dir, "c.gr", "p sp 2 1\na 1 2 5\n");
    snprintf(link, sizeof link, "%s/c.co", inside_dir);
    snprintf(target, sizeof target, "%s/c.co", outside_dir);
    assert_int_equal(symlink(target, link), 0);
    snprintf(spec, sizeof spec, "dimacs:%s", c);
    expect_code(spec, &o, GP_EFORBIDDEN, "c.co");
    /* "" allows nothing */
    o.allow_dirs = "";
    snprintf(spec, sizeof spec, "dimacs:%s", good);
    expect_code(spec, &o, GP_EFORBIDDEN, "load_paths");
}

static void test_regular_files_only(void **state) {
    (void)state;
    char fifo[700];
    snprintf(fifo, sizeof fifo, "%s/pipe.gr", inside_dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    gp_load_opts o = {0};
    o.regular_only = 1;
    static const char *const formats[] = {"dimacs", "csv", "sndlib", "rocketfuel", "graphml"};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        char spec[800];
        snprintf(spec, sizeof spec, "%s:%s", formats[f], fifo); /* would block in open() */
        expect_code(spec, &o, GP_EINVAL, "not a regular file");
        snprintf(spec, sizeof spec, "%s:/dev/zero", formats[f]);
        expect_code(spec, &o, GP_EINVAL, "not a regular file");
    }
    expect_code(inside_dir, &o, GP_EINVAL, NULL); /* no format: a directory */
}

/* Without regular_only (the command line), /dev/zero is still bounded: one over-long line of NUL
 * bytes, or max_bytes. SNDlib spun forever on it before; Rocketfuel grew one line to gigabytes. */
static void test_dev_zero_bounded(void **state) {
    (void)state;
    gp_load_opts o = {0};
    o.max_bytes = 8u << 20;
    expect_code("sndlib:/dev/zero", NULL, GP_EPARSE, "/dev/zero:1:");
    expect_code("rocketfuel:/dev/zero", NULL, GP_EPARSE, "/dev/zero:1:");
    expect_code("dimacs:/dev/zero", &o, GP_EPARSE, "/dev/zero:1:");
    expect_code("graphml:/dev/zero", &o, GP_ETOOBIG, "max_graph_bytes");
}

static void test_max_bytes_after_decompression(void **state) {
    (void)state;
    char p[700];
    snprintf(p, sizeof p, "%s/bomb.gr.gz", inside_dir);
    gzFile z = gzopen(p, "wb9");
    assert_non_null(z);
    gzprintf(z, "p sp 2 1\na 1 2 5\n");
    char block[4096];
    memset(block, 'c', sizeof block);
    block[0] = 'c', block[1] = ' ';
    for (int i = 0; i < 1024; i++) { /* 4 MiB of comment lines, a few KiB on disk */
        block[sizeof block - 1] = '\n';
        gzwrite(z, block, sizeof block);
    }
    gzclose(z);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(st.st_size < 100000);
    gp_load_opts o = {0};
    o.max_bytes = 1u << 20;
    expect_code(p, &o, GP_ETOOBIG, "max_graph_bytes");
    o.max_bytes = 64u << 20;
    gp_err err;
    gp_graph *g = load(p, &o, &err);
    assert_non_null(g);
    gp_graph_unref(g);
    /* the on-disk size is checked before reading */
    const char *plain = write_file(inside_dir, "big.csv", "source,target,cost\n1,2,3\n2,3,4\n");
    o.max_bytes = 10;
    expect_code(plain, &o, GP_ETOOBIG, "max_graph_bytes = 10");
}

/* A gzip file gets a read buffer sized from its (small) size on disk; lines longer than that
 * grow it, up to the 1 MiB line limit. */
static void test_long_lines_in_small_gzip(void **state) {
    (void)state;
    char p[700];
    snprintf(p, sizeof p, "%s/longline.gr.gz", inside_dir);
    gzFile z = gzopen(p, "wb9");
    assert_non_null(z);
    gzputs(z, "c ");
    for (int i = 0; i < 300000; i++) gzputc(z, 'x');
    gzputs(z, "\np sp 2 1\na 1 2 5\n");
    gzclose(z);
    gp_err err;
    gp_graph *g = load(p, NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(g->m, 1);
    gp_graph_unref(g);
    z = gzopen(p, "wb9");
    assert_non_null(z);
    gzputs(z, "c ");
    for (int i = 0; i < 1200000; i++) gzputc(z, 'x');
    gzputs(z, "\np sp 2 1\na 1 2 5\n");
    gzclose(z);
    expect_code(p, NULL, GP_EPARSE, "line longer than 1048576 bytes");
}

/* GraphML with a DTD: no entity is expanded or fetched (XXE, billion laughs); the document is
 * refused. */
static void test_graphml_dtd_refused(void **state) {
    (void)state;
    char target[700], text[1600], spec[800];
    snprintf(target, sizeof target, "%s/x.gr", outside_dir);
    write_file(outside_dir, "x.gr", "SECRETxxe\n");
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml [<!ENTITY x SYSTEM \"file://%s\">\n"
             "<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>\n"
             "<graphml><key attr.name=\"label\" for=\"node\" id=\"d0\"/><graph>\n"
             "<node id=\"1\"><data key=\"d0\">&x;&b;</data></node></graph></graphml>\n",
             target);
    const char *p = write_file(inside_dir, "xxe.graphml", text);
    snprintf(spec, sizeof spec, "graphml:%s", p);
    gp_err err;
    gp_graph *g = load(spec, NULL, &err);
    if (g) {
        const char *name = gp_graph_name(g, 0);
        if (name && strstr(name, "SECRET")) fail_msg("external entity expanded: %s", name);
        gp_graph_unref(g);
        fail_msg("a GraphML document with a DTD was loaded");
    }
    assert_non_null(strstr(err.msg, "DTD"));
    assert_null(strstr(err.msg, "SECRET"));
}

static void test_node_arc_caps(void **state) {
    (void)state;
    const char *p = write_file(inside_dir, "caps.csv", "source,target,cost\n1,2,1\n2,3,1\n3,4,1\n");
    gp_load_opts o = {0};
    o.max_nodes = 3;
    expect_code(p, &o, GP_ETOOBIG, "max_graph_nodes = 3");
    o.max_nodes = 0;
    o.max_arcs = 2;
    expect_code(p, &o, GP_ETOOBIG, "max_graph_arcs = 2");
    const char *d = write_file(inside_dir, "caps.gr", "p sp 10 1\na 1 2 3\n");
    o.max_arcs = 0;
    o.max_nodes = 5;
    expect_code(d, &o, GP_ETOOBIG, "max_graph_nodes = 5");
    o.max_nodes = 5;
    expect_code("gen:1000", &o, GP_ETOOBIG, "max_graph_nodes = 5");
}

static void test_deadline_and_cancel(void **state) {
    (void)state;
    char p[700];
    snprintf(p, sizeof p, "%s/long.gr", inside_dir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fprintf(f, "p sp 1000 200000\n");
    for (int i = 0; i < 200000; i++)
        fprintf(f, "a %d %d %d\n", i % 1000 + 1, (i * 7) % 1000 + 1, i);
    fclose(f);
    gp_load_opts o = {0};
    o.deadline = gp_now() - 1; /* already past */
    o.timeout_s = 7;
    expect_code(p, &o, GP_ETIMEOUT, "load_timeout_s = 7");
    int cancel = 1;
    o.deadline = 0;
    o.cancel = &cancel;
    expect_code(p, &o, GP_ETIMEOUT, "stopped");
    cancel = 0;
    gp_err err;
    gp_graph *g = load(p, &o, &err);
    assert_non_null(g);
    assert_int_equal(g->m, 200000);
    gp_graph_unref(g);
}

/* Header counts are hints: 16 bytes cannot ask for a 50 M-node graph, nor 4 GiB of arcs. */
static void test_dimacs_header_hints(void **state) {
    (void)state;
    const char *p = write_file(inside_dir, "tiny.gr", "p sp 50000000 0\n");
    expect_code(p, NULL, GP_ETOOBIG, "declares 50000000 nodes but the file has only 16 bytes");
    p = write_file(inside_dir, "tiny2.gr", "p sp 300000000 1\na 1 2 3\n");
    expect_code(p, NULL, GP_ETOOBIG, "declares 300000000 nodes but the file has only 25 bytes");
    p = write_file(inside_dir, "tiny3.gr",
                   "p sp 3 300000000\na 1 2 3\n"); /* 3.6 GB of arcs asked */
    expect_code(p, NULL, GP_EPARSE, "file ends after 1 arcs but line 1 declares 300000000");
    /* isolated nodes within the bound still exist by definition */
    p = write_file(inside_dir, "iso.gr", "p sp 1000 1\na 1 2 3\n");
    gp_err err;
    gp_graph *g = load(p, NULL, &err);
    assert_non_null(g);
    assert_int_equal(g->n, 1000);
    assert_int_not_equal(gp_graph_index(g, 1000), GP_NONE);
    gp_graph_unref(g);
}

static void test_options_that_do_not_apply(void **state) {
    (void)state;
    const char *p = write_file(inside_dir, "o.gr", "p sp 2 1\na 1 2 5\n");
    char spec[800];
    snprintf(spec, sizeof spec, "dimacs:%s", p);
    gp_load_opts o = {0};
    o.scale = 1000;
    expect_code(spec, &o, GP_EINVAL, "scale does not apply");
    expect_code("gen:100", &o, GP_EINVAL, "scale does not apply");
    o.scale = 0;
    o.cost_rule = "bogus";
    expect_code("gen:100", &o, GP_EINVAL, "cost_rule 'bogus' does not apply");
    expect_code(spec, &o, GP_EINVAL, "cost_rule");
    expect_code("postgresql://h/db?table=t", &o, GP_EINVAL, "cost_rule");
    const char *s = write_file(inside_dir, "o.txt",
                               "NODES (\n a ( 1 2 )\n b ( 3 4 )\n)\nLINKS (\n"
                               " L ( a b ) 0 0 0 0 ( )\n)\n");
    snprintf(spec, sizeof spec, "sndlib:%s", s);
    expect_code(spec, &o, GP_EINVAL, "unknown cost rule");
}

/* One pass over the costs picks the scale: tiny and fractional costs load instead of failing at the
 * first row that does not fit the default. */
static void test_scale_fit(void **state) {
    (void)state;
    const char *p = write_file(inside_dir, "frac.csv", "source,target,cost\n1,2,0.5\n2,3,0.0001\n");
    gp_err err;
    gp_graph *g = load(p, NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_true(g->scale == 1e4);
    gp_graph_unref(g);
    gp_scale_fit f;
    gp_scale_fit_init(&f);
    gp_scale_fit_add(&f, 3);
    gp_scale_fit_add(&f, -1);
    gp_scale_fit_add(&f, 4e9);
    double sc;
    assert_int_equal(gp_scale_fit_pick(&f, &sc, &err), GP_OK);
    assert_true(sc == 1);
    gp_scale_fit_add(&f, 0.25);
    assert_int_equal(gp_scale_fit_pick(&f, &sc, &err), GP_EPARSE); /* 4e9 * 10 overflows */
    gp_scale_fit_init(&f);
    gp_scale_fit_add(&f, 0.25);
    gp_scale_fit_add(&f, 12.5);
    assert_int_equal(gp_scale_fit_pick(&f, &sc, &err), GP_OK);
    assert_true(sc == 1000); /* the default when it fits */
}

static void test_redaction(void **state) {
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"postgresql://alice:s3cret@db:5432/gis?table=edges",
         "postgresql://alice:***@db:5432/gis?table=edges"},
        {"postgres://u:p%40ss:w@h/d", "postgres://u:***@h/d"},
        {"postgresql://h/d?password=s3cret&table=t", "postgresql://h/d?password=***&table=t"},
        {"postgresql://h/d?table=t&PASSWORD=s3cret", "postgresql://h/d?table=t&password=***"},
        {"host=h password=s3cret dbname=d", "host=h password=*** dbname=d"},
        {"host=h password = 'se cr\\'et' dbname=d", "host=h password=*** dbname=d"},
        {"postgresql://alice@h/d", "postgresql://alice@h/d"},
        {"dimacs:/data/x.gr", "dimacs:/data/x.gr"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[300];
        gp_spec_redact(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].out);
    }
    char small[8];
    gp_spec_redact("postgresql://a:b@c/d", small, sizeof small);
    assert_int_equal(strlen(small), 7);
    assert_string_equal(gp_spec_path("dimacs:/a/b.gr"), "/a/b.gr");
    assert_string_equal(gp_spec_path("/a/b.csv"), "/a/b.csv");
    assert_null(gp_spec_path("gen:100"));
    assert_null(gp_spec_path("postgresql://h/d"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_file_bytes_in_errors),
        cmocka_unit_test(test_allow_dirs),
        cmocka_unit_test(test_regular_files_only),
        cmocka_unit_test(test_dev_zero_bounded),
        cmocka_unit_test(test_max_bytes_after_decompression),
        cmocka_unit_test(test_long_lines_in_small_gzip),
        cmocka_unit_test(test_graphml_dtd_refused),
        cmocka_unit_test(test_node_arc_caps),
        cmocka_unit_test(test_deadline_and_cancel),
        cmocka_unit_test(test_dimacs_header_hints),
        cmocka_unit_test(test_options_that_do_not_apply),
        cmocka_unit_test(test_scale_fit),
        cmocka_unit_test(test_redaction),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
