/* test_repair.c - LFA and TI-LFA repair paths (engine/repair.h) on hand-drawn networks with
 * literal expectations worked out by hand: a 5-router ring where LFAs protect half of the
 * destinations (node-protecting) and TI-LFA all of them (a PQ node), RFC 7490's kind of ring with
 * one heavy link where a router has no LFA but a TI-LFA repair [node P, adjacency P->Q], a square
 * with a diagonal where the LFA protects the link but not the node (node repair: one adjacency
 * segment), a pendant router that nothing protects, the kept-routers filter and the row limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/progress.h"
#include "engine/repair.h"
#include "tests/netops_test.h"

typedef struct arc {
    int64_t u, v;
    uint32_t w;
} arc;

/* Undirected graph with external ids 1..n (internal = id - 1), its tables and repairs. */
typedef struct net {
    gp_graph *g;
    gp_rt *t;
    gp_repair *r;
} net;

static net make(uint32_t n, const arc *a, size_t na, const uint8_t *keep, uint64_t max_rows,
                int expect_rc) {
    gp_err err;
    gp_builder *b = routers_builder(n);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(gp_builder_add_arc(b, a[i].u, a[i].v, a[i].w, &err), GP_OK);
        assert_int_equal(gp_builder_add_arc(b, a[i].v, a[i].u, a[i].w, &err), GP_OK);
    }
    net x = {0};
    x.g = routers_finish(b, 0);
    if (gp_rt_build(E, x.g, 0, 2, 0, &x.t, &err) != GP_OK) fail_msg("tables: %s", err.msg);
    gp_repair_opts o = {
        .threads = 2, .node_protection = 1, .keep_paths = 1, .keep = keep, .max_entries = max_rows};
    int rc = gp_repair_compute(x.t, &o, &x.r, &err);
    assert_int_equal(rc, expect_rc);
    return x;
}

static void drop(net *x) {
    gp_repair_free(x->r);
    gp_rt_free(x->t);
    gp_graph_unref(x->g);
}

/* The entry of router s (ext id) for destination d via primary next hop e. */
static const gp_repair_entry *entry(const net *x, int64_t s, int64_t d, int64_t e) {
    const gp_repair_router *R = &x->r->r[s - 1];
    for (size_t k = 0; k < R->ne; k++)
        if (R->e[k].dest == (uint32_t)(d - 1) && R->e[k].nh == (uint32_t)(e - 1)) return &R->e[k];
    fail_msg("router %lld: no repair row for destination %lld via %lld", (long long)s, (long long)d,
             (long long)e);
    return NULL;
}

/* Segments of a repair as text: "node:5 adj:5-4" (ext ids = internal + 1). */
static void segs_text(const net *x, int64_t s, const gp_tilfa *ti, char *out, size_t cap) {
    const gp_repair_router *R = &x->r->r[s - 1];
    size_t len = 0;
    out[0] = 0;
    for (uint32_t k = 0; k < ti->nseg; k++) {
        const gp_repair_seg *sg = &R->seg[ti->seg_off + k];
        if (sg->b == GP_NONE)
            len += (size_t)snprintf(out + len, cap - len, "%snode:%u", k ? " " : "", sg->a + 1);
        else
            len += (size_t)snprintf(out + len, cap - len, "%sadj:%u-%u", k ? " " : "", sg->a + 1,
                                    sg->b + 1);
    }
}

static void path_text(const net *x, int64_t s, const gp_tilfa *ti, char *out, size_t cap) {
    const gp_repair_router *R = &x->r->r[s - 1];
    size_t len = 0;
    out[0] = 0;
    for (uint32_t k = 0; k < ti->path_len; k++)
        len += (size_t)snprintf(out + len, cap - len, "%s%u", k ? "," : "",
                                R->path[ti->path_off + k] + 1);
}

/* Asserts a repair: cost (GP_INF: none), P, Q (ext ids, 0 = none), segments and path text. */
static void expect_ti(const net *x, int64_t s, const gp_tilfa *ti, uint64_t cost, int64_t p,
                      int64_t q, const char *segs, const char *path) {
    char buf[256];
    assert_int_equal(ti->cost, cost);
    if (cost == GP_INF) return;
    assert_int_equal(ti->p + 1, p);
    assert_int_equal(ti->q + 1, q);
    segs_text(x, s, ti, buf, sizeof buf);
    assert_string_equal(buf, segs);
    path_text(x, s, ti, buf, sizeof buf);
    assert_string_equal(buf, path);
}

static void expect_cov(const gp_repair_cov *c, uint32_t dests, uint32_t lfa_link,
                       uint32_t tilfa_link, uint32_t node_dests, uint32_t lfa_node,
                       uint32_t tilfa_node) {
    assert_int_equal(c->dests, dests);
    assert_int_equal(c->lfa_link, lfa_link);
    assert_int_equal(c->tilfa_link, tilfa_link);
    assert_int_equal(c->node_dests, node_dests);
    assert_int_equal(c->lfa_node, lfa_node);
    assert_int_equal(c->tilfa_node, tilfa_node);
}

/* Ring 1-2-3-4-5-1, every link cost 1. At router 1: destination 3 (via 2) has the node-protecting
 * LFA 5 (d(5,3) = 2 < d(5,1) + d(1,3) = 3 and < d(5,2) + d(2,3) = 3), not downstream (2 = 2);
 * destination 2 has no LFA (d(5,2) = 2 = d(5,1) + d(1,2)); without the link 1-2 the path is
 * 1,5,4,3,2 and 4 is the first node whose shortest path to 2 avoids the link, reached from 5 by a
 * node segment: a PQ node. */
static void test_ring(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}, {5, 1, 1}};
    net x = make(5, a, 5, NULL, 0, GP_OK);
    const gp_repair_entry *e = entry(&x, 1, 3, 2);
    assert_int_equal(e->lfa + 1, 5);
    assert_int_equal(e->lfa_bits, GP_LFA_NODE);
    expect_ti(&x, 1, &e->link, 3, 5, 5, "", "1,5,4,3");
    assert_true(e->node_applies);
    expect_ti(&x, 1, &e->node, 3, 5, 5, "", "1,5,4,3");
    e = entry(&x, 1, 2, 2);
    assert_int_equal(e->lfa, GP_NONE);
    expect_ti(&x, 1, &e->link, 4, 4, 4, "node:4", "1,5,4,3,2");
    assert_false(e->node_applies); /* the destination is the protected neighbour */
    e = entry(&x, 1, 5, 5);
    assert_int_equal(e->lfa, GP_NONE);
    expect_ti(&x, 1, &e->link, 4, 3, 3, "node:3", "1,2,3,4,5");
    assert_int_equal(x.r->r[0].ne, 4); /* one primary next hop per destination */
    expect_cov(&x.r->r[0].cov, 4, 2, 4, 2, 2, 2);
    expect_cov(&x.r->total, 20, 10, 20, 10, 10, 10);
    drop(&x);
}

/* 1-2-3-4 cost 1 each, 4-5 cost 10, 5-6-1 cost 1: router 1 reaches 3 via 2 (cost 2; the other way
 * costs 13). Its other neighbour 6 reaches 3 through 1 (d(6,3) = 3 = d(6,1) + d(1,3)): no LFA.
 * Without the link 1-2: path 1,6,5,4,3; 5 is in 6's P-space (direct, cost 1) but 4 is not
 * (d(6,4) = 4 through 1-2); 4 is the first node in 3's Q-space; 5 reaches 4 only through 1-2
 * (cost 5 < 10), so the list is [node 5, adjacency 5->4]: P = 5, Q = 4. The same for the node 2. */
static void test_heavy_ring(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 10}, {5, 6, 1}, {6, 1, 1}};
    net x = make(6, a, 6, NULL, 0, GP_OK);
    const gp_repair_entry *e = entry(&x, 1, 3, 2);
    assert_int_equal(e->lfa, GP_NONE);
    expect_ti(&x, 1, &e->link, 13, 5, 4, "node:5 adj:5-4", "1,6,5,4,3");
    assert_true(e->node_applies);
    expect_ti(&x, 1, &e->node, 13, 5, 4, "node:5 adj:5-4", "1,6,5,4,3");
    /* destination 4 (via 2, cost 3): without 1-2 the path is 1,6,5,4 and 4 itself is the Q node */
    e = entry(&x, 1, 4, 2);
    assert_int_equal(e->lfa, GP_NONE);
    expect_ti(&x, 1, &e->link, 12, 5, 4, "node:5 adj:5-4", "1,6,5,4");
    drop(&x);
}

/* Square 1-2-3 with 1-4, 4-2 (cost 1) and 4-3 (cost 5), and a pendant router 5 on 1. Router 1
 * reaches 3 via 2 (cost 2); 4 is an LFA (d(4,3) = 2 < d(4,1) + d(1,3) = 3) that protects the link
 * but not the node 2 (d(4,3) = d(4,2) + d(2,3)), nor is it downstream. Without the link 1-2: path
 * 1,4,2,3 and 4 is already in Q: no segment. Without the node 2: path 1,4,3 whose only way from
 * 4 to 3 avoiding 2 is the adjacency 4->3. Destination 5 hangs on the link 1-5: no repair. */
static void test_link_not_node(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1}, {2, 3, 1}, {1, 4, 1}, {4, 2, 1}, {4, 3, 5}, {1, 5, 1}};
    net x = make(5, a, 6, NULL, 0, GP_OK);
    const gp_repair_entry *e = entry(&x, 1, 3, 2);
    assert_int_equal(e->lfa + 1, 4);
    assert_int_equal(e->lfa_bits, 0);
    expect_ti(&x, 1, &e->link, 3, 4, 4, "", "1,4,2,3");
    expect_ti(&x, 1, &e->node, 6, 4, 3, "adj:4-3", "1,4,3");
    e = entry(&x, 1, 5, 5);
    assert_int_equal(e->lfa, GP_NONE);
    expect_ti(&x, 1, &e->link, GP_INF, 0, 0, "", "");
    /* router 1: destinations 2..5; LFA (link) for 2 (via 4: d(4,2) = 1 < 1 + 1) and 3 and 4 (via
     * 2), none for 5; TI-LFA for 2, 3, 4; node protection only for 3 (2, 4, 5 are next hops) */
    expect_cov(&x.r->r[0].cov, 4, 3, 3, 1, 0, 1);
    drop(&x);
}

/* Only kept routers hold rows (coverage for all); the row limit refuses before any work. */
static void test_keep_and_limit(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}, {5, 1, 1}};
    uint8_t keep[5] = {0, 0, 1, 0, 0};
    net x = make(5, a, 5, keep, 4, GP_OK);
    for (int i = 0; i < 5; i++) assert_int_equal(x.r->r[i].ne, i == 2 ? 4 : 0);
    expect_cov(&x.r->r[0].cov, 4, 2, 4, 2, 2, 2);
    drop(&x);
    x = make(5, a, 5, NULL, 19, GP_ETOOBIG); /* 20 rows */
    assert_null(x.r);
    drop(&x);
}

/* Cancelled (a repair job's DELETE): no router is computed, GP_ECANCELLED, no result. */
static void test_cancel(void **state) {
    (void)state;
    arc a[] = {{1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}, {5, 1, 1}};
    gp_progress p;
    gp_progress_init(&p, "test");
    gp_progress_cancel(&p);
    gp_progress_set(&p);
    net x = make(5, a, 5, NULL, 0, GP_ECANCELLED);
    gp_progress_set(NULL);
    assert_null(x.r);
    assert_int_equal(atomic_load(&p.done), 0);
    drop(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),          cmocka_unit_test(test_heavy_ring),
        cmocka_unit_test(test_link_not_node), cmocka_unit_test(test_keep_and_limit),
        cmocka_unit_test(test_cancel),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
