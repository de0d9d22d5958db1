/* test_traffic.c - engine/traffic.h: OSRM speed and turn penalty files parsed (whole or nothing,
 * the failing line named) and applied to tests/data/osm/traffic.osm (Main 1-2-3-6, Detour
 * 1-4-5-3; docs/traffic.md) on the CPU engine with the CCH on and off: literal route costs in
 * deciseconds, the version sharing its base's arrays, closures, unknown entries. Run from the
 * repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/snap.h"
#include "engine/traffic.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "graph/osmseg.h"
#include "graph/turns.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OSM "tests/data/osm/traffic.osm"

static void parse_fails(int turns, const char *text, const char *want) {
    gp_err err = {0};
    void *out = (void *)1;
    size_t n = 7;
    int rc = turns ? gp_traffic_parse_turns(text, strlen(text), (gp_turn_entry **)&out, &n, &err)
                   : gp_traffic_parse_speeds(text, strlen(text), (gp_speed_entry **)&out, &n, &err);
    assert_int_equal(rc, GP_EINVAL);
    assert_null(out);
    assert_int_equal(n, 0);
    if (!strstr(err.msg, want)) fail_msg("'%s' does not say '%s'", err.msg, want);
}

static void test_parse(void **st) {
    (void)st;
    gp_err err = {0};
    gp_speed_entry *sp = NULL;
    size_t n = 0;
    const char *ok = "1,2,5\r\n\n2,1,0,\n3,4,12.5,30.3\n5,6,7,,junk,more\n-8,9,1";
    assert_int_equal(gp_traffic_parse_speeds(ok, strlen(ok), &sp, &n, &err), GP_OK);
    assert_int_equal(n, 5);
    assert_true(sp[0].from == 1 && sp[0].to == 2 && sp[0].kmh == 5);
    assert_true(sp[1].from == 2 && sp[1].to == 1 && sp[1].kmh == 0);
    assert_true(sp[2].kmh == 12.5 && sp[3].from == 5 && sp[4].from == -8);
    free(sp);
    /* spaces and tabs around fields, signs, 19 digits, a speed in exponent form */
    const char *sp2 = "\t10 , +11 ,\t42 \n9223372036854775807,-12,1e1\n";
    assert_int_equal(gp_traffic_parse_speeds(sp2, strlen(sp2), &sp, &n, &err), GP_OK);
    assert_int_equal(n, 2);
    assert_true(sp[0].from == 10 && sp[0].to == 11 && sp[0].kmh == 42);
    assert_true(sp[1].from == INT64_MAX && sp[1].to == -12 && sp[1].kmh == 10);
    free(sp);
    parse_fails(0, "1,2,5\n1 2,3,4\n", "line 2: the node ids");
    parse_fails(0, "1,2,5\n1,2,--4\n", "line 2: speed_kmh");
    parse_fails(0, "1,2,5\n3,x,7\n", "line 2: the node ids");
    parse_fails(0, "1,2,5\n\n4,5\n", "line 3: expected from_osm_id");
    parse_fails(0, "1,2,-1\n", "line 1: speed_kmh");
    parse_fails(0, "1,2,inf\n", "line 1: speed_kmh");
    parse_fails(0, "1,2,5,fast\n", "line 1: rate");
    parse_fails(0, "1,2,5,0\n", "line 1: rate");
    parse_fails(0, "\n\n", "no line");
    parse_fails(1, "5,3,6\n", "line 1: expected from_osm_id,via_osm_id");
    parse_fails(1, "5,3,6,x\n", "line 1: penalty_s");
    parse_fails(1, "5,3,6,1\n5,3,6,1,w\n", "line 2: weight");
    /* a file of 200,000 lines (3 MB, read in parts on several threads): every entry in file
     * order, and an error names the file's line, the first bad one */
    {
        size_t cap = 200000 * 32, len = 0;
        char *big = malloc(cap);
        assert_non_null(big);
        for (int i = 0; i < 200000; i++)
            len += (size_t)snprintf(big + len, cap - len, i % 7 ? "%d,%d,%d\n" : "%d,%d,%d\r\n\n",
                                    i + 1, i + 2, i % 97);
        gp_speed_entry *bs = NULL;
        size_t bn = 0;
        assert_int_equal(gp_traffic_parse_speeds(big, len, &bs, &bn, &err), GP_OK);
        assert_int_equal(bn, 200000);
        for (size_t i = 0; i < bn; i++)
            if (bs[i].from != (int64_t)i + 1 || bs[i].to != (int64_t)i + 2 ||
                bs[i].kmh != (double)(i % 97))
                fail_msg("entry %zu: %lld,%lld,%g", i, (long long)bs[i].from, (long long)bs[i].to,
                         bs[i].kmh);
        free(bs);
        /* line 171,428 (of 228,572: a blank line follows every 7th entry) made bad */
        char *p = big;
        for (int line = 1; line < 171428; line++) p = strchr(p, '\n') + 1;
        char *q = strchr(p, ',');
        *q = ';'; /* the line's first comma */
        char *r = strstr(big + len / 5, "\n") + 1;
        char *rq = strchr(r, ',');
        char keep = rq[1];
        rq[1] = 'x'; /* an earlier line, in another part: the first error */
        bs = (gp_speed_entry *)1;
        assert_int_equal(gp_traffic_parse_speeds(big, len, &bs, &bn, &err), GP_EINVAL);
        assert_null(bs);
        size_t want = 1;
        for (char *c = big; c < r; c++) want += *c == '\n';
        char msg[64];
        snprintf(msg, sizeof msg, "line %zu: ", want);
        if (!strstr(err.msg, msg)) fail_msg("'%s' does not say '%s'", err.msg, msg);
        rq[1] = keep;
        assert_int_equal(gp_traffic_parse_speeds(big, len, &bs, &bn, &err), GP_EINVAL);
        if (!strstr(err.msg, "line 171428: ")) fail_msg("'%s' is not line 171428", err.msg);
        free(big);
    }
    gp_turn_entry *tp = NULL;
    const char *t = "5,3,6,600\n1,3,6,-2,,junk\n";
    assert_int_equal(gp_traffic_parse_turns(t, strlen(t), &tp, &n, &err), GP_OK);
    assert_int_equal(n, 2);
    assert_true(tp[0].via == 3 && tp[0].penalty_s == 600 && tp[1].penalty_s == -2);
    free(tp);
}

/* The cost of the route from OSM node 1 to OSM node 6 (deciseconds). */
static uint64_t cost_1_6(gp_engine *e, const gp_graph *g) {
    gp_snap a, b;
    gp_err err = {0};
    gp_snap_at_node(g, gp_graph_index(g, 1), &a);
    gp_snap_at_node(g, gp_graph_index(g, 6), &b);
    gp_snap_route r;
    assert_int_equal(gp_engine_route_snap(e, g, &a, &b, GP_P2P_AUTO, &r, &err), GP_OK);
    uint64_t d = r.dist;
    gp_snap_route_free(&r);
    uint64_t t[1];
    assert_int_equal(gp_engine_table_snap(e, g, &a, 1, &b, 1, t, &err), GP_OK);
    assert_int_equal(t[0], d); /* a table cell and a route of one version agree */
    return d;
}

static gp_graph *apply(gp_engine *e, const gp_graph *g, const char *speeds, const char *turns,
                       gp_traffic_stats *st) {
    gp_err err = {0};
    gp_speed_entry *sp = NULL;
    gp_turn_entry *tp = NULL;
    size_t ns = 0, nt = 0;
    if (speeds)
        assert_int_equal(gp_traffic_parse_speeds(speeds, strlen(speeds), &sp, &ns, &err), 0);
    if (turns) assert_int_equal(gp_traffic_parse_turns(turns, strlen(turns), &tp, &nt, &err), 0);
    gp_graph *g2 = NULL;
    int rc = gp_traffic_apply(e, g, sp, ns, tp, nt, &g2, NULL, NULL, st, &err);
    if (rc != GP_OK) fail_msg("%s", err.msg);
    free(sp);
    free(tp);
    return g2;
}

static void base_outside_list(const gp_graph *h, int r);

static void run(const char *cch) {
    gp_err err = {0};
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, cch, 0, 0, &err), GP_OK);
    gp_graph *g = gp_graph_load(OSM, NULL, &err);
    if (!g) fail_msg("%s", err.msg);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_non_null(g->turns);
    assert_int_equal(cost_1_6(e, g), 653); /* Main: 1179.4 m at 65 km/h */
    gp_traffic_stats st;
    /* 1 -> 2 at 5 km/h: half of the arc 1 -> 3 at 5 km/h, the Detour wins */
    gp_graph *g1 = apply(e, g, "1,2,5\n", NULL, &st);
    assert_int_equal(st.arcs_changed, 1);
    assert_int_equal(st.speeds_unknown, 0);
    assert_ptr_equal(g1->base, g); /* shares the base's arrays */
    assert_ptr_equal(g1->col, g->col);
    assert_true(strcmp(g1->version, g->version) != 0);
    assert_int_equal(cost_1_6(e, g1), 1023);
    /* Main's 1 -> 3 is parallel to Detour's: its reverse entry, not Detour's, has the new weight */
    base_outside_list(g1, 1);
    assert_int_equal(g1->ndiff_tails, 1);
    {
        uint32_t u = gp_graph_index(g, 1), v = gp_graph_index(g, 3), nf = 0, nr = 0, nrw = 0;
        for (uint32_t k = g->row[u]; k < g->row[u + 1]; k++) nf += g->col[k] == v;
        for (uint32_t k = g->rrow[v]; k < g->rrow[v + 1]; k++)
            if (g->rcol[k] == u) nr++, nrw += g1->rw[k] != g->rw[k];
        assert_int_equal(nf, 2);
        assert_int_equal(nr, 2);
        assert_int_equal(nrw, 1);
    }
    /* 20,000 unknown segments around two entries of 1 -> 2 (the last one wins): the same
     * version as g1's, the unknown ones counted */
    {
        size_t cap = 20000 * 32 + 64, len = 0;
        char *big = malloc(cap);
        len += (size_t)snprintf(big + len, cap - len, "1,2,99\n");
        for (int i = 0; i < 20000; i++)
            len += (size_t)snprintf(big + len, cap - len, "%d,%d,%d\n", 1000000 + i, 2000000 + i,
                                    10 + i % 90);
        len += (size_t)snprintf(big + len, cap - len, "1,2,5\n");
        gp_graph *gb = apply(e, g, big, NULL, &st);
        assert_int_equal(st.speeds_unknown, 20000);
        assert_int_equal(st.arcs_changed, 1);
        assert_string_equal(gb->version, g1->version);
        gp_graph_unref(gb);
        free(big);
    }
    /* the same file again: the version serving already, no new one */
    gp_graph *same = apply(e, g1, "1,2,5\n", NULL, &st);
    assert_ptr_equal(same, g1);
    gp_graph_unref(same);
    /* a turn penalty of 600 s on 5 -> 3 -> 6: Main again, slowed (283.0 + 43.6 s) */
    gp_graph *g2 = apply(e, g1, "1,2,5\n", "5,3,6,600\n", &st);
    assert_int_equal(st.turns_changed, 1);
    assert_int_equal(cost_1_6(e, g2), 3266);
    assert_true(strcmp(g2->version, g1->version) != 0);
    /* 2 -> 3 closed, unknown segments and turns counted */
    gp_graph *g3 = apply(e, g, "2,3,0\n1,3,50\n9,9,9\n", "1,3,6,9\n", &st);
    assert_int_equal(st.arcs_closed, 1);
    assert_int_equal(st.speeds_unknown, 2);
    assert_int_equal(st.turns_unknown, 1);
    assert_int_equal(cost_1_6(e, g3), 1023);
    /* the same speeds again: the same version; none: the base's version */
    gp_graph *g4 = apply(e, g2, "1,2,5\n", NULL, &st);
    assert_string_equal(g4->version, g1->version);
    gp_graph *g5 = apply(e, g2, NULL, NULL, &st);
    assert_string_equal(g5->version, g->version);
    assert_int_equal(cost_1_6(e, g5), 653);
    gp_graph *gs[] = {g1, g2, g3, g4, g5, g};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) gp_graph_unref(gs[i]);
    gp_engine_free(e);
}

static void test_apply_cch(void **st) {
    (void)st;
    run("on");
}

static void test_apply_dijkstra(void **st) {
    (void)st;
    run("off");
}

static void test_turns_need_turn_costs(void **st) {
    (void)st;
    gp_err err = {0};
    gp_engine *e = gp_engine_new("cpu", 1, NULL, &err);
    assert_int_equal(gp_engine_set_turn_costs(e, "off", &err), GP_OK);
    gp_graph *g = gp_graph_load(OSM, NULL, &err);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    gp_turn_entry t = {5, 3, 6, 600};
    gp_graph *g2 = NULL;
    assert_int_equal(gp_traffic_apply(e, g, NULL, 0, &t, 1, &g2, NULL, NULL, NULL, &err),
                     GP_EINVAL);
    assert_null(g2);
    assert_non_null(strstr(err.msg, "turn costs"));
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* The OSM id of point i of arc a (u -> v): the tail, the shape points with ids, the head. */
static int64_t point(const gp_graph *g, uint32_t a, uint32_t u, uint32_t ns, uint32_t i) {
    if (i == 0) return gp_graph_orig_id(g, u);
    if (i > ns) return gp_graph_orig_id(g, g->col[a]);
    return g->shape_osm_id[g->arc_shape[a] + i - 1];
}

/* graph/osmseg.h against a search of every segment: each segment (arc, piece) is found by its two
 * ids, with every other segment of the same ids and none else, in arc order; ids of no segment
 * find nothing. Maps with shape points, negative ids, restriction copies. */
static void test_osmseg_index(void **st) {
    (void)st;
    const char *maps[] = {OSM, "tests/data/osm/negative.osm", "tests/data/osm/viaway.osm",
                          "tests/data/osm/collapse.osm", "tests/data/osm/guidance.osm"};
    for (size_t f = 0; f < sizeof maps / sizeof maps[0]; f++) {
        gp_err err = {0};
        gp_graph *g = gp_graph_load(maps[f], NULL, &err);
        if (!g) fail_msg("%s: %s", maps[f], err.msg);
        const gp_osmseg *x = gp_osmseg_get(g, &err);
        assert_non_null(x);
        assert_ptr_equal(gp_osmseg_get(g, &err), x); /* built once */
        uint64_t segs = 0, shaped = 0;
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                uint32_t ns = g->shape_osm_id ? g->arc_shape[a + 1] - g->arc_shape[a] : 0;
                shaped += ns > 0;
                for (uint32_t i = 0; i <= ns; i++, segs++) {
                    int64_t from = point(g, a, u, ns, i), to = point(g, a, u, ns, i + 1);
                    gp_osmseg_hit hit[64];
                    uint32_t nh = gp_osmseg_find(x, from, to, hit, 64), want = 0, seen = 0;
                    for (uint32_t v = 0; v < g->n; v++)
                        for (uint32_t b = g->row[v]; b < g->row[v + 1]; b++) {
                            uint32_t nb = g->shape_osm_id ? g->arc_shape[b + 1] - g->arc_shape[b]
                                                          : 0;
                            for (uint32_t k = 0; k <= nb; k++) {
                                if (point(g, b, v, nb, k) != from ||
                                    point(g, b, v, nb, k + 1) != to)
                                    continue;
                                assert_true(want < nh && want < 64);
                                assert_int_equal(hit[want].arc, b); /* in arc, then piece order */
                                assert_int_equal(hit[want].piece, k);
                                seen += b == a && k == i;
                                want++;
                            }
                        }
                    assert_int_equal(nh, want);
                    assert_int_equal(seen, 1);
                }
            }
        assert_int_equal(gp_osmseg_count(x), segs);
        gp_osmseg_hit h;
        assert_int_equal(gp_osmseg_find(x, INT64_MAX, 1, &h, 1), 0);
        assert_int_equal(gp_osmseg_find(x, INT64_MIN, 1, &h, 1), 0);
        assert_int_equal(gp_osmseg_find(x, point(g, 0, 0, 0, 0), INT64_MIN, &h, 1), 0);
        print_message("%s: %llu segments, %llu arcs with shape points\n", maps[f],
                      (unsigned long long)segs, (unsigned long long)shaped);
        gp_graph_unref(g);
    }
}

/* The CCH of version g (its turn graph's with turn costs): its metric as a full mapping of g's
 * weights gives it, and its customized weights as a full customization's. */
static void cch_as_full(const gp_graph *g, int r) {
    const gp_graph *cg = g->turns ? ((const gp_turns *)g->turns)->tg : g;
    const gp_cch *c = cg->cch;
    assert_non_null(c);
    gp_err err = {0};
    gp_cch *f = NULL;
    assert_int_equal(gp_cch_prepare(cg, &f, &err), GP_OK);
    f->prev = NULL;
    assert_int_equal(gp_cch_map_metric(f, cg, &err), GP_OK);
    assert_int_equal(gp_cch_customize(f, 2, &err), GP_OK);
    for (uint32_t e = 0; e < c->topo->m; e++)
        if (c->ofw[e] != f->ofw[e] || c->obw[e] != f->obw[e] || c->fw[e] != f->fw[e] ||
            c->bw[e] != f->bw[e])
            fail_msg("version %d edge %u: metric %u/%u customized %u/%u, a full pass %u/%u %u/%u",
                     r, e, c->ofw[e], c->obw[e], c->fw[e], c->bw[e], f->ofw[e], f->obw[e], f->fw[e],
                     f->bw[e]);
    gp_cch_free(f);
}

/* Version h's weights are its base's outside its list (gp_graph diff_tails), in w and in rw: also
 * when its arrays are ones a released version gave back (gp_weights_dup), put back to the base's
 * weights at that version's own nodes. */
static void base_outside_list(const gp_graph *h, int r) {
    const gp_graph *b = h->base;
    assert_non_null(b);
    assert_non_null(h->diff_tails);
    unsigned char *in = calloc(b->n + 1, 1);
    assert_non_null(in);
    for (uint32_t i = 0; i < h->ndiff_tails; i++) in[h->diff_tails[i]] = 1;
    for (uint32_t k = 0; k < b->m; k++) /* max_w bounds every weight (graph.h) */
        if (h->w[k] > h->max_w)
            fail_msg("version %d arc %u: %u > max_w %u", r, k, h->w[k], h->max_w);
    for (uint32_t u = 0; u < b->n; u++)
        for (uint32_t k = b->row[u]; k < b->row[u + 1]; k++)
            if (!in[u] && h->w[k] != b->w[k])
                fail_msg("version %d arc %u of node %u (not listed): %u, the base's %u", r, k, u,
                         h->w[k], b->w[k]);
    /* rw is w in reverse order: per pair u -> v the same weights (parallel arcs: the same sum) */
    for (uint32_t u = 0; u < b->n; u++)
        for (uint32_t k = b->row[u]; k < b->row[u + 1]; k++) {
            uint32_t v = b->col[k];
            uint64_t fs = 0, rs = 0;
            for (uint32_t x = b->row[u]; x < b->row[u + 1]; x++)
                if (b->col[x] == v) fs += h->w[x];
            for (uint32_t x = b->rrow[v]; x < b->rrow[v + 1]; x++)
                if (b->rcol[x] == u) rs += h->rw[x];
            if (fs != rs)
                fail_msg("version %d pair %u -> %u: weights %llu forward, %llu reverse", r, u, v,
                         (unsigned long long)fs, (unsigned long long)rs);
        }
    for (uint32_t v = 0; v < b->n; v++)
        for (uint32_t k = b->rrow[v]; k < b->rrow[v + 1]; k++)
            if (!in[b->rcol[k]] && h->rw[k] != b->rw[k])
                fail_msg("version %d reverse entry %u (tail %u, not listed): %u, the base's %u", r,
                         k, b->rcol[k], h->rw[k], b->rw[k]);
    free(in);
}

/* A chain of speed (and turn penalty) files, each applied to the version before it as the
 * service does: each version lists the nodes whose arcs it changed (gp_graph diff_tails), its
 * CCH metric is mapped from its predecessor's over the union of both lists alone, and must equal
 * a full mapping and customization of its weights: entries that come, change, close and go. */
static void chain(const char *turn_costs) {
    gp_err err = {0};
    gp_graph *g = gp_generate_road(3000, 11, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car"); /* travel times and coordinates */
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_set_cch_perfect(e, "off", &err), GP_OK);
    assert_int_equal(gp_engine_set_turn_costs(e, turn_costs, &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    int turns = g->turns != NULL;
    size_t ns = g->m / 50 + 1, nt = turns ? 20 : 0;
    gp_speed_entry *sp = calloc(ns, sizeof *sp);
    gp_turn_entry *tp = calloc(nt + 1, sizeof *tp);
    assert_true(sp && tp);
    uint64_t seed = 17;
    /* the topology's spare, a copy of the base's arrays (gp_cch_warm_spare) */
    const gp_graph *bg = g->turns ? ((const gp_turns *)g->turns)->tg : g;
    gp_cch_topo *topo = ((const gp_cch *)bg->cch)->topo;
    for (int i = 0; i < 500 && !__atomic_load_n(&topo->spare, __ATOMIC_ACQUIRE); i++) usleep(10000);
    assert_non_null(__atomic_load_n(&topo->spare, __ATOMIC_ACQUIRE));
    gp_graph *cur = gp_graph_ref(g);
    const uint32_t *gone[8] = {0}; /* the road weights of the versions released */
    int ngone = 0, reused = 0;
    for (int r = 0; r < 8; r++) {
        size_t nsr = r == 6 ? 0 : ns;      /* version 6: no speeds, the base's weights again */
        for (size_t i = 0; i < nsr; i++) { /* other segments each time; some closed */
            uint32_t a = (uint32_t)((gp_splitmix64(&seed) >> 33) % g->m);
            uint32_t u = gp_graph_arc_tail(g, a), sp_kmh = (uint32_t)(gp_splitmix64(&seed) % 90);
            sp[i] = (gp_speed_entry){gp_graph_orig_id(g, u), gp_graph_orig_id(g, g->col[a]),
                                     sp_kmh < 5 ? 0 : sp_kmh + 5};
        }
        size_t ntr = r % 2 ? nt : 0; /* penalties that come and go */
        for (size_t i = 0; i < ntr; i++) {
            uint32_t a = (uint32_t)((gp_splitmix64(&seed) >> 33) % g->m), v = g->col[a];
            uint32_t u = gp_graph_arc_tail(g, a);
            if (g->row[v] == g->row[v + 1]) continue;
            uint32_t b = g->row[v] + (uint32_t)(gp_splitmix64(&seed) % (g->row[v + 1] - g->row[v]));
            tp[i] = (gp_turn_entry){gp_graph_orig_id(g, u), gp_graph_orig_id(g, v),
                                    gp_graph_orig_id(g, g->col[b]), 120};
        }
        gp_graph *nx = NULL;
        gp_traffic_stats st;
        if (gp_traffic_apply(e, cur, sp, nsr, tp, ntr, &nx, NULL, NULL, &st, &err) != GP_OK)
            fail_msg("apply %d: %s", r, err.msg);
        const gp_graph *cg = nx->turns ? ((const gp_turns *)nx->turns)->tg : nx;
        if (nx != g) assert_non_null(cg->diff_tails); /* the list path */
        /* the first version takes the spare copied from the base: a list of no edge to restore
         * rather than a copy of every array (cch_as_full: its arrays are right) */
        if (r == 0) assert_int_equal(((const gp_cch *)cg->cch)->listed, 1);
        if (nx != g) {
            base_outside_list(nx, r);
            if (cg != nx) base_outside_list(cg, r);
            int seen = 0;
            for (int i = 0; i < ngone; i++) seen |= nx->w == gone[i];
            reused += seen;
        }
        cch_as_full(nx, r);
        if (cur != g) gone[ngone++] = cur->w;
        gp_graph_unref(cur);
        cur = nx;
    }
    /* from the third on, each version's road weights are the arrays of one released before */
    assert_int_equal(reused, 6);
    gp_graph_unref(cur);
    free(sp);
    free(tp);
    gp_graph_unref(g);
    gp_engine_free(e);
}

/* A file of more lines than the parallel key build's threshold (engine/traffic.c
 * KEYSET_PAR_MIN), each segment several times with other speeds and some segments unknown,
 * gives the weights, the version and the counts of the file of each segment's last line alone
 * (fewer lines: the serial build): the last line of a segment wins however the keys are built. */
static void test_many_lines_last_wins(void **st) {
    (void)st;
    gp_err err = {0};
    gp_graph *g = gp_generate_road(3000, 11, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car");
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_turn_costs(e, "off", &err), GP_OK);
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    const size_t na = 300000;
    gp_speed_entry *a = calloc(na, sizeof *a), *b = calloc(na, sizeof *b);
    unsigned char *ka = calloc(na, 1), *kb = calloc(na, 1);
    assert_true(a && b && ka && kb);
    uint64_t seed = 5;
    size_t unknown = 0;
    for (size_t i = 0; i < na; i++) {
        uint32_t r = (uint32_t)(gp_splitmix64(&seed) >> 33);
        if (r % 17 == 0) { /* a segment of no arc of the graph */
            a[i] = (gp_speed_entry){-1 - (int64_t)(r % 1000), -2, 30};
            unknown++;
            continue;
        }
        uint32_t arc = r % 400; /* few segments: each many times */
        uint32_t u = gp_graph_arc_tail(g, arc);
        a[i] = (gp_speed_entry){gp_graph_orig_id(g, u), gp_graph_orig_id(g, g->col[arc]),
                                10 + (uint32_t)(gp_splitmix64(&seed) % 90)};
    }
    /* each key's last line, in reverse order of the file (b's own order does not matter) */
    size_t nb = 0;
    for (size_t r = 0; r < na; r++) {
        size_t i = na - 1 - r;
        int dup = 0;
        for (size_t k = 0; k < nb && !dup; k++) dup = b[k].from == a[i].from && b[k].to == a[i].to;
        if (!dup) b[nb++] = a[i];
    }
    assert_true(na >= (1u << 18) && nb < (1u << 18));
    gp_graph *ga = NULL, *gb = NULL;
    gp_traffic_stats sa, sb;
    assert_int_equal(gp_traffic_apply(e, g, a, na, NULL, 0, &ga, ka, NULL, &sa, &err), GP_OK);
    assert_int_equal(gp_traffic_apply(e, g, b, nb, NULL, 0, &gb, kb, NULL, &sb, &err), GP_OK);
    assert_true(ga != g && gb != g);
    assert_string_equal(ga->version, gb->version);
    assert_memory_equal(ga->w, gb->w, (size_t)g->m * 4);
    assert_memory_equal(ga->rw, gb->rw, (size_t)g->m * 4);
    assert_int_equal(sa.arcs_changed, sb.arcs_changed);
    assert_int_equal(sa.speeds_unknown, unknown);
    for (size_t i = 0; i < na; i++) assert_int_equal(ka[i], a[i].from > 0);
    gp_graph_unref(ga);
    gp_graph_unref(gb);
    free(a);
    free(b);
    free(ka);
    free(kb);
    gp_graph_unref(g);
    gp_engine_free(e);
}

static void test_chain_turns(void **st) {
    (void)st;
    chain("on");
}

static void test_chain_roads(void **st) {
    (void)st;
    chain("off");
}

/* gp_traffic_covered: a dropped set is covered only when later sets kept have all its segments
 * and turns. */
static int covered(const gp_traffic_set *v, int n, unsigned char d0, unsigned char d1,
                   unsigned char d2, const char *want) {
    unsigned char d[3] = {d0, d1, d2}, c[3] = {9, 9, 9};
    int left = gp_traffic_covered(v, n, d, c);
    for (int i = 0; i < n; i++)
        if ((d[i] ? (char)('0' + c[i]) : '-') != want[i]) fail_msg("set %d: want '%s'", i, want);
    return left;
}

static void test_covered(void **st) {
    (void)st;
    const gp_speed_entry s12_34[] = {{1, 2, 5}, {3, 4, 5}},
                         s12_34_56[] = {{1, 2, 9}, {3, 4, 9}, {5, 6, 9}}, s12[] = {{1, 2, 7}},
                         s34[] = {{3, 4, 7}};
    const gp_turn_entry t123[] = {{1, 2, 3, 10}}, t124[] = {{1, 2, 4, 10}};
    gp_traffic_set a[3] = {{0, s12_34, 2}, {0, s12_34_56, 3}, {0, s12, 1}};
    assert_int_equal(covered(a, 2, 1, 0, 0, "1-"), 0);  /* the older under the newer */
    assert_int_equal(covered(a, 2, 0, 1, 0, "-0"), 1);  /* the newer over the older */
    assert_int_equal(covered(a, 2, 0, 0, 0, "--"), 0);  /* nothing dropped */
    assert_int_equal(covered(a, 3, 1, 1, 0, "00-"), 2); /* 3 -> 4, 5 -> 6 not covered */
    a[1] = (gp_traffic_set){0, s12, 1};
    assert_int_equal(covered(a, 2, 1, 0, 0, "0-"), 1); /* 3 -> 4 not covered */
    a[0] = (gp_traffic_set){0, s12, 1}, a[1] = (gp_traffic_set){0, s12_34, 2};
    assert_int_equal(covered(a, 2, 1, 1, 0, "00"), 2); /* the cover goes too */
    a[2] = (gp_traffic_set){0, s12_34_56, 3};
    assert_int_equal(covered(a, 3, 1, 1, 0, "11-"), 0); /* both under a third */
    gp_traffic_set j[3] = {{0, s12_34, 2}, {0, s12, 1}, {0, s34, 1}};
    assert_int_equal(covered(j, 3, 1, 0, 0, "1--"), 0); /* under two newer ones together */
    assert_int_equal(covered(j, 3, 0, 0, 1, "--0"), 1); /* the newest is covered by nothing */
    gp_traffic_set k[2] = {{0, s12, 1}, {1, t123, 1}};
    assert_int_equal(covered(k, 2, 1, 0, 0, "0-"), 1); /* a turn does not cover a segment */
    k[0] = (gp_traffic_set){1, t123, 1};
    assert_int_equal(covered(k, 2, 1, 0, 0, "1-"), 0); /* the same turn */
    k[1] = (gp_traffic_set){1, t124, 1};
    assert_int_equal(covered(k, 2, 1, 0, 0, "0-"), 1); /* another turn */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_turns),
        cmocka_unit_test(test_chain_roads),
        cmocka_unit_test(test_many_lines_last_wins),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_covered),
        cmocka_unit_test(test_osmseg_index),
        cmocka_unit_test(test_apply_cch),
        cmocka_unit_test(test_apply_dijkstra),
        cmocka_unit_test(test_turns_need_turn_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
