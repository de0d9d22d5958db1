/* test_snapshot.c - graph snapshots (graph/snapshot.c): an OSM graph with restrictions and a
 * generated graph with node names survive write + map unchanged (arrays, attributes, original
 * ids, units, profile, content hash, answers); extra named sections are written, added, replaced
 * and read back; sections of unknown type are skipped; damaged and foreign files are refused
 * with messages naming the problem (bad magic, other format version, truncation, a flipped byte
 * in a section, a checksum-valid file with an out-of-range arc head); turn restrictions kept for
 * the turn model round-trip and damaged records are refused; link capacities (router topologies)
 * round-trip, a graph without them loads without. Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "graph/graph_internal.h"
#include "graph/snapshot.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/gpath-snap-XXXXXX";

static int setup(void **state) {
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void same_array(const void *a, const void *b, size_t bytes) {
    assert_true((a == NULL) == (b == NULL));
    if (a) assert_memory_equal(a, b, bytes);
}

static void expect_same_graph(const gp_graph *a, const gp_graph *b) {
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->m, b->m);
    uint64_t n = a->n, m = a->m;
    same_array(a->row, b->row, (n + 1) * 4);
    same_array(a->col, b->col, m * 4);
    same_array(a->w, b->w, m * 4);
    same_array(a->rrow, b->rrow, (n + 1) * 4);
    same_array(a->rcol, b->rcol, m * 4);
    same_array(a->ext, b->ext, n * 8);
    same_array(a->lon, b->lon, n * 8);
    same_array(a->lat, b->lat, n * 8);
    same_array(a->arc_len_m, b->arc_len_m, m * 4);
    same_array(a->arc_name, b->arc_name, m * 4);
    same_array(a->arc_class, b->arc_class, m);
    same_array(a->arc_shape, b->arc_shape, (m + 1) * 4);
    if (a->arc_shape) same_array(a->shape_lon, b->shape_lon, a->arc_shape[m] * 8);
    if (a->arc_shape) same_array(a->shape_osm_id, b->shape_osm_id, a->arc_shape[m] * 8);
    same_array(a->osm_id, b->osm_id, n * 8);
    assert_int_equal(a->restr_len, b->restr_len);
    same_array(a->restr, b->restr, a->restr_len * 4);
    assert_int_equal(a->strtab_len, b->strtab_len);
    same_array(a->strtab, b->strtab, a->strtab_len);
    assert_true((a->names == NULL) == (b->names == NULL));
    for (uint32_t i = 0; a->names && i < a->n; i++) {
        assert_true((a->names[i] == NULL) == (b->names[i] == NULL));
        if (a->names[i]) assert_string_equal(a->names[i], b->names[i]);
    }
    assert_string_equal(a->version, b->version);
    assert_string_equal(a->unit_name, b->unit_name);
    assert_true(a->unit_s == b->unit_s);
    assert_string_equal(a->profile, b->profile);
    assert_true(a->scale == b->scale);
    assert_int_equal(a->max_w, b->max_w);
    assert_true((a->spatial == NULL) == (b->spatial == NULL));
}

static void test_round_trip_osm(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load("osm:tests/data/osm/turns.osm?profile=car", NULL, &err);
    assert_non_null(g);
    char path[256], spec[300];
    tmp_path(path, sizeof path, "turns.gpath");
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    snprintf(spec, sizeof spec, "gpath:%s", path);
    gp_graph *h = gp_graph_load(spec, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    expect_same_graph(g, h);
    assert_string_equal(h->format, "osm");
    assert_non_null(h->shape_osm_id); /* the optional section of the shape points' node ids */
    assert_non_null(h->map_base);
    /* answers on the mapped graph: the restricted left turn still detours (456 ds) */
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    assert_int_equal(gp_engine_attach(e, h, &err), GP_OK);
    gp_path p = {0};
    assert_int_equal(
        gp_engine_p2p(e, h, gp_graph_index(h, 101), gp_graph_index(h, 103), GP_P2P_ASTAR, &p, &err),
        GP_OK);
    assert_int_equal(p.dist, 456);
    gp_path_free(&p);
    gp_engine_free(e);
    gp_graph_unref(h);
    /* a bare *.gpath path works too */
    h = gp_graph_load(path, NULL, &err);
    assert_non_null(h);
    gp_graph_unref(h);
    gp_graph_unref(g);
}

static void test_round_trip_names(void **state) {
    (void)state;
    gp_err err = {0};
    gp_builder *b = gp_builder_new(1000.0);
    assert_int_equal(gp_builder_add_node(b, 5, 1, 8.5, 47.3, "Zurich", &err), GP_OK);
    assert_int_equal(gp_builder_add_node(b, 7, 0, 0, 0, NULL, &err), GP_OK);
    assert_int_equal(gp_builder_add_node(b, 9, 1, 7.4, 46.9, "Bern", &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 5, 9, 1500, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 9, 7, 2, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "named", "csv", 0, &err);
    assert_non_null(g);
    char path[256];
    tmp_path(path, sizeof path, "named.gpath");
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    gp_graph *h = gp_load_snapshot(path, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    expect_same_graph(g, h);
    assert_int_equal(h->directed_input, 0);
    assert_string_equal(h->names[0], "Zurich");
    gp_graph_unref(h);
    gp_graph_unref(g);

    g = gp_graph_load("gen:2000:3", NULL, &err);
    assert_non_null(g);
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    h = gp_load_snapshot(path, NULL, &err);
    assert_non_null(h);
    expect_same_graph(g, h);
    gp_graph_unref(h);
    gp_graph_unref(g);
}

/* Link capacities (the S_ARC_CAP section) survive write + map; without them none appear. */
static void test_capacities(void **state) {
    (void)state;
    gp_err err = {0};
    gp_builder *b = gp_builder_new(1.0);
    for (int64_t i = 1; i <= 3; i++)
        assert_int_equal(gp_builder_add_node(b, i, 0, 0, 0, NULL, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 1, 2, 10, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 2, 3, 5, &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 3, 1, 1, &err), GP_OK);
    gp_graph *g = gp_builder_finish(b, "caps", "graphml", 0, &err);
    assert_non_null(g);
    char path[256];
    tmp_path(path, sizeof path, "caps.gpath");
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    gp_graph *h = gp_load_snapshot(path, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    assert_null(h->arc_cap);
    gp_graph_unref(h);
    g->arc_cap = calloc(g->m, sizeof *g->arc_cap);
    for (uint32_t a = 0; a < g->m; a++) g->arc_cap[a] = 1e9 * (a + 1) + 0.5;
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    h = gp_load_snapshot(path, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    expect_same_graph(g, h);
    assert_non_null(h->arc_cap);
    for (uint32_t a = 0; a < g->m; a++) assert_true(h->arc_cap[a] == 1e9 * (a + 1) + 0.5);
    gp_graph_unref(h);
    gp_graph_unref(g);
    remove(path);
}

static void test_extra_sections(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load("tests/data/osm/access.osm", NULL, &err);
    assert_non_null(g);
    char path[256];
    tmp_path(path, sizeof path, "extra.gpath");
    uint32_t order[4] = {3, 1, 0, 2};
    gp_snap_extra x = {"cch.order", order, sizeof order};
    assert_int_equal(gp_snapshot_write(g, path, &x, 1, &err), GP_OK);
    assert_int_equal(gp_snapshot_add_section(path, "note", "hello", 6, &err), GP_OK);
    uint32_t order2[2] = {9, 8};
    assert_int_equal(gp_snapshot_add_section(path, "cch.order", order2, sizeof order2, &err),
                     GP_OK);
    assert_int_equal(gp_snapshot_add_section(path, "a-name-that-is-far-too-long", "x", 1, &err),
                     GP_EINVAL);
    gp_graph *h = gp_load_snapshot(path, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    expect_same_graph(g, h);
    uint64_t size = 0;
    const uint32_t *o = gp_snapshot_section(h, "cch.order", &size);
    assert_non_null(o);
    assert_int_equal(size, sizeof order2);
    assert_int_equal(o[0], 9);
    assert_string_equal(gp_snapshot_section(h, "note", &size), "hello");
    assert_null(gp_snapshot_section(h, "missing", &size));
    assert_null(gp_snapshot_section(g, "note", &size)); /* not a mapped graph */
    gp_graph_unref(h);
    gp_graph_unref(g);
}

/* Reads a whole file. */
static unsigned char *slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)*len);
    assert_int_equal(fread(buf, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    return buf;
}
static void spit(const char *path, const unsigned char *buf, long len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
}

static void expect_refused(const char *path, const char *what) {
    gp_err err = {0};
    assert_null(gp_load_snapshot(path, NULL, &err));
    assert_int_equal(err.code, GP_EPARSE);
    if (!strstr(err.msg, what)) fail_msg("message '%s' lacks '%s'", err.msg, what);
}

/* Offsets of the header fields and table entries (snapshot.c's layout). */
#define H_VERSION 8
#define H_NSECT 16
#define H_TABLE_OFF 32
#define H_TABLE_SUM 48
#define E_TYPE 0
#define E_OFFSET 32
#define E_SIZE 40
#define E_SUM 48

static void test_damaged(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load("tests/data/osm/oneway.osm", NULL, &err);
    assert_non_null(g);
    char path[256], bad[256];
    tmp_path(path, sizeof path, "good.gpath");
    tmp_path(bad, sizeof bad, "bad.gpath");
    gp_snap_extra x = {"future", "zz", 2};
    assert_int_equal(gp_snapshot_write(g, path, &x, 1, &err), GP_OK);
    long len;
    unsigned char *orig = slurp(path, &len), *buf = malloc((size_t)len);

    memcpy(buf, orig, (size_t)len);
    memcpy(buf, "NOTSNAPS", 8);
    spit(bad, buf, len);
    expect_refused(bad, "not a gpath snapshot (bad magic)");
    expect_refused("tests/data/osm/oneway.osm", "bad magic");

    memcpy(buf, orig, (size_t)len);
    buf[H_VERSION] = 9;
    spit(bad, buf, len);
    expect_refused(bad, "format version 9");

    spit(bad, orig, len - 100);
    expect_refused(bad, "truncated");

    memcpy(buf, orig, (size_t)len);
    uint64_t huge = UINT64_MAX - 8; /* a table offset that wraps around when added to */
    memcpy(buf + H_TABLE_OFF, &huge, 8);
    spit(bad, buf, len);
    expect_refused(bad, "section table out of bounds");

    /* a flipped byte in the last section's data */
    uint32_t ns;
    memcpy(&ns, orig + H_NSECT, 4);
    memcpy(buf, orig, (size_t)len);
    uint64_t off, size;
    memcpy(&off, orig + 64 + 64 * (ns - 2) + E_OFFSET, 8); /* the section before "future" */
    memcpy(&size, orig + 64 + 64 * (ns - 2) + E_SIZE, 8);
    buf[off + size / 2] ^= 0x40;
    spit(bad, buf, len);
    expect_refused(bad, "checksum mismatch in section");

    /* an unknown section type (a newer writer's) is skipped; table checksum fixed up */
    memcpy(buf, orig, (size_t)len);
    uint32_t t = 77;
    memcpy(buf + 64 + 64 * (ns - 1) + E_TYPE, &t, 4);
    uint64_t sum = gp_hash_bytes(0x736e617073686f74ULL, buf + 64, 64ull * ns);
    memcpy(buf + H_TABLE_SUM, &sum, 8);
    spit(bad, buf, len);
    gp_graph *h = gp_load_snapshot(bad, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    assert_null(gp_snapshot_section(h, "future", NULL));
    gp_graph_unref(h);

    /* checksums valid but an arc head out of range: the structure check refuses it */
    memcpy(buf, orig, (size_t)len);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t type;
        memcpy(&type, buf + 64 + 64 * i + E_TYPE, 4);
        if (type != 3) continue; /* the forward heads */
        memcpy(&off, buf + 64 + 64 * i + E_OFFSET, 8);
        memcpy(&size, buf + 64 + 64 * i + E_SIZE, 8);
        uint32_t big = 1000000;
        memcpy(buf + off, &big, 4);
        uint64_t s2 = gp_hash_bytes(0x736e617073686f74ULL, buf + off, size);
        memcpy(buf + 64 + 64 * i + E_SUM, &s2, 8);
    }
    sum = gp_hash_bytes(0x736e617073686f74ULL, buf + 64, 64ull * ns);
    memcpy(buf + H_TABLE_SUM, &sum, 8);
    spit(bad, buf, len);
    expect_refused(bad, "inconsistent graph structure");

    gp_err e2 = {0};
    assert_null(gp_load_snapshot("/nonexistent/x.gpath", NULL, &e2));
    assert_int_equal(e2.code, GP_EIO);
    free(buf);
    free(orig);
    gp_graph_unref(g);
}

/* A junk file is refused after reading its 64-byte header: a 1 GiB (sparse) file with a foreign
 * magic costs no 1 GiB read nor memory (the whole file was read first before), and neither does a
 * snapshot whose header names another size or version. */
static void test_header_first(void **state) {
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "junk.gpath");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite("JUNKJUNKJUNKJUNK", 1, 16, f), 16);
    fclose(f);
    assert_int_equal(truncate(path, 1ll << 30), 0);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = gp_now();
    expect_refused(path, "bad magic");
    double dt = gp_now() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    long grew_kb = ru1.ru_maxrss - ru0.ru_maxrss;
    if (grew_kb > 64 * 1024)
        fail_msg("refusing a 1 GiB junk file raised peak RSS by %ld KiB", grew_kb);
    if (dt > 0.5) fail_msg("refusing a 1 GiB junk file took %.2f s", dt);
    unlink(path);
}

/* Rewrites the table entry of the first section of `type` (offset, then the section's and the
 * table's checksums) in buf, a snapshot of len bytes. */
static void move_section(unsigned char *buf, uint32_t type, int64_t delta) {
    uint32_t ns;
    memcpy(&ns, buf + H_NSECT, 4);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t t;
        uint64_t off, size;
        memcpy(&t, buf + 64 + 64 * i + E_TYPE, 4);
        if (t != type) continue;
        memcpy(&off, buf + 64 + 64 * i + E_OFFSET, 8);
        memcpy(&size, buf + 64 + 64 * i + E_SIZE, 8);
        off = (uint64_t)((int64_t)off + delta);
        memcpy(buf + 64 + 64 * i + E_OFFSET, &off, 8);
        uint64_t sum = gp_hash_bytes(0x736e617073686f74ULL, buf + off, size);
        memcpy(buf + 64 + 64 * i + E_SUM, &sum, 8);
        break;
    }
    uint64_t tsum = gp_hash_bytes(0x736e617073686f74ULL, buf + 64, 64ull * ns);
    memcpy(buf + H_TABLE_SUM, &tsum, 8);
}

/* The offset of the first section of that type in a snapshot image, 0 when it has none. */
static uint64_t section_off(const unsigned char *buf, uint32_t type) {
    uint32_t ns;
    memcpy(&ns, buf + H_NSECT, 4);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t t;
        uint64_t off;
        memcpy(&t, buf + 64 + 64 * i + E_TYPE, 4);
        if (t != type) continue;
        memcpy(&off, buf + 64 + 64 * i + E_OFFSET, 8);
        return off;
    }
    return 0;
}

/* Sections whose offset is not a multiple of 64 (what the writer lays out) are refused, with
 * checksums that hold: the arrays are used in place, so one would be a misaligned load. */
static void test_misaligned(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load("tests/data/osm/oneway.osm", NULL, &err);
    assert_non_null(g);
    char path[256], bad[256];
    tmp_path(path, sizeof path, "align.gpath");
    tmp_path(bad, sizeof bad, "align-bad.gpath");
    gp_snap_extra x = {"future", "zz", 2};
    assert_int_equal(gp_snapshot_write(g, path, &x, 1, &err), GP_OK);
    long len;
    unsigned char *orig = slurp(path, &len);
    const int64_t deltas[] = {4, 1, -4};
    const uint32_t types[] = {GP_SNAP_EXTRA, 11 /* arc lengths */, 10 /* latitudes */};
    for (int k = 0; k < 3; k++) {
        unsigned char *buf = malloc((size_t)len);
        memcpy(buf, orig, (size_t)len);
        move_section(buf, types[k], deltas[k]);
        spit(bad, buf, len);
        expect_refused(bad, "misaligned");
        free(buf);
    }
    free(orig);
    gp_graph_unref(g);
}

/* Road names and node names that are not UTF-8 are refused at load, naming the byte (they went
 * into JSON answers as they were); names an importer passes are repaired. */
static void test_bad_utf8(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_graph_load("tests/data/osm/oneway.osm", NULL, &err);
    assert_non_null(g);
    assert_true(g->strtab_len > 2);
    char path[256], bad[256];
    tmp_path(path, sizeof path, "utf8.gpath");
    tmp_path(bad, sizeof bad, "utf8-bad.gpath");
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    long len;
    unsigned char *buf = slurp(path, &len);
    uint64_t soff = section_off(buf, 18); /* the strings */
    assert_true(soff > 0);
    buf[soff + 1] = 0xff; /* the first name's first byte */
    move_section(buf, 18, 0);
    spit(bad, buf, len);
    expect_refused(bad, "invalid UTF-8 in the road names at byte 1");
    free(buf);
    gp_graph_unref(g);

    gp_builder *b = gp_builder_new(1000.0);
    assert_int_equal(gp_builder_add_node(b, 5, 1, 8.5, 47.3, "Z\xc3\xbcrich", &err), GP_OK);
    assert_int_equal(gp_builder_add_node(b, 9, 1, 7.4, 46.9, "Bern", &err), GP_OK);
    assert_int_equal(gp_builder_add_arc(b, 5, 9, 1500, &err), GP_OK);
    g = gp_builder_finish(b, "named", "csv", 0, &err);
    assert_non_null(g);
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    buf = slurp(path, &len);
    for (long i = 0; i + 1 < len; i++)
        if (buf[i] == 0xc3 && buf[i + 1] == 0xbc) buf[i + 1] = 'u'; /* a cut sequence */
    move_section(buf, 20, 0);
    spit(bad, buf, len);
    expect_refused(bad, "invalid UTF-8 in the node names at byte 1");
    free(buf);
    gp_graph_unref(g);

    /* what an importer (OSM XML, PBF) hands the builder is repaired instead: U+FFFD per bad byte,
     * so the snapshot written from it loads */
    b = gp_builder_new(1000.0);
    assert_int_equal(gp_builder_add_node(b, 1, 1, 8.5, 47.3, NULL, &err), GP_OK);
    assert_int_equal(gp_builder_add_node(b, 2, 1, 8.6, 47.3, NULL, &err), GP_OK);
    gp_road_attr ra = {100, "Rue\xff de\xc3", "A\xe2\x82", 0, 0, NULL, NULL, NULL, 0, NULL, {0}};
    assert_int_equal(gp_builder_add_road_arc(b, 1, 2, 10, &ra, &err), GP_OK);
    g = gp_builder_finish(b, "roads", "osm", 1, &err);
    assert_non_null(g);
    assert_string_equal(g->strtab + g->arc_name[0], "Rue\xef\xbf\xbd de\xef\xbf\xbd");
    assert_string_equal(g->strtab + g->arc_ref[0], "A\xef\xbf\xbd\xef\xbf\xbd");
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    gp_graph *h = gp_load_snapshot(path, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    gp_graph_unref(h);
    gp_graph_unref(g);
}

/* Turn restrictions kept for the turn model (gp_graph.restr, viaways.osm: [no, 4, from, via,
 * via, to]) go through a snapshot; a record naming an arc the graph lacks, or an unknown kind, is
 * refused by the structure check though its checksums hold. */
static void test_restrictions(void **state) {
    (void)state;
    gp_err err = {0};
    gp_load_opts o = {.restrictions_as_turns = 1};
    gp_graph *g = gp_graph_load("osm:tests/data/osm/viaways.osm?profile=car", &o, &err);
    assert_non_null(g);
    assert_int_equal(g->restr_len, 6);
    char path[256], bad[256];
    tmp_path(path, sizeof path, "restr.gpath");
    tmp_path(bad, sizeof bad, "restr-bad.gpath");
    assert_int_equal(gp_snapshot_write(g, path, NULL, 0, &err), GP_OK);
    gp_graph *h = gp_load_snapshot(path, NULL, &err);
    if (!h) fail_msg("%s", err.msg);
    expect_same_graph(g, h);
    gp_graph_unref(h);
    long len;
    unsigned char *orig = slurp(path, &len), *buf = malloc((size_t)len);
    static const struct {
        uint32_t word, value; /* a word of the record and what it becomes */
    } bads[] = {{2, 1000000}, {0, 7}, {1, 9}};
    uint64_t roff = section_off(orig, 25); /* the turn restrictions */
    assert_true(roff > 0);
    for (size_t k = 0; k < sizeof bads / sizeof bads[0]; k++) {
        memcpy(buf, orig, (size_t)len);
        memcpy(buf + roff + 4 * bads[k].word, &bads[k].value, 4);
        move_section(buf, 25, 0);
        spit(bad, buf, len);
        expect_refused(bad, "inconsistent graph structure");
    }
    free(buf);
    free(orig);
    gp_graph_unref(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_osm), cmocka_unit_test(test_round_trip_names),
        cmocka_unit_test(test_extra_sections), cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_restrictions),   cmocka_unit_test(test_header_first),
        cmocka_unit_test(test_capacities),     cmocka_unit_test(test_misaligned),
        cmocka_unit_test(test_bad_utf8),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
