/* test_change.c - a cost change as one engine operation and its publication: gp_engine_change_links
 * (engine/change.h) derives a version with its own hash, attached (its CCH customized) and leaves
 * the graph it came from untouched, failing cleanly on a link or router that does not exist; the
 * registry's one publish path (server/registry.h) attaches what gp_registry_replace is given, as it
 * attaches a load, and keeps the contracts: GP_EBUSY when the version moved meanwhile,
 * GP_ENOTFOUND for an unknown name, the old version serving after a refused replace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/change.h"
#include "server/registry.h"
#include "storage/source.h"

static gp_engine *E;

/* The CPU engine with the CCH on every graph: attach leaves a visible mark (g->cch). */
static int setup(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_log_level = GP_LOG_ERROR;
    E = gp_engine_new("cpu", 2, NULL, &err);
    if (!E || gp_engine_set_cch(E, "on", 0, 0, &err) != GP_OK ||
        gp_engine_set_cch_perfect(E, "off", &err) != GP_OK)
        return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    gp_engine_free(E);
    return 0;
}

static gp_graph *load_gen(void) {
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_graph_load("gen:400", NULL, &err);
    if (!g) fail_msg("gen:400: %s", err.msg);
    return g;
}

/* The first arc of node 0 that is not a self-loop, as a cost change to its cost + 7. */
static gp_link_change first_link(const gp_graph *g, uint32_t *u, uint32_t *v) {
    *u = 0;
    uint32_t a = g->row[0];
    while (a < g->row[1] && g->col[a] == 0) a++;
    assert_true(a < g->row[1]);
    *v = g->col[a];
    gp_link_change ch = {.u = g->ext[*u], .v = g->ext[*v], .cost = gp_graph_cost(g, g->w[a]) + 7};
    return ch;
}

static void test_change_derives_and_attaches(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = load_gen();
    assert_int_equal(gp_engine_attach(E, g, &err), GP_OK);
    assert_non_null(g->cch);
    const void *cch0 = g->cch;
    uint64_t hash0 = g->hash;
    uint32_t *w0 = malloc((size_t)g->m * sizeof *w0);
    assert_non_null(w0);
    memcpy(w0, g->w, (size_t)g->m * sizeof *w0);

    uint32_t u, v;
    gp_link_change ch = first_link(g, &u, &v);
    gp_graph *g2 = NULL;
    gp_change_stats st = {-1, -1};
    assert_int_equal(gp_engine_change_links(E, g, &ch, 1, NULL, 0, &g2, &st, &err), GP_OK);
    assert_non_null(g2);
    assert_true(g2 != g);
    assert_true(g2->hash != g->hash);
    assert_string_not_equal(g2->version, g->version);
    assert_non_null(g2->cch); /* attached: its own CCH, customized for the new costs */
    assert_true(g2->cch != g->cch);
    assert_true(st.change_ms >= 0 && st.attach_ms >= 0);
    uint32_t a2 = gp_graph_find_arc(g2, u, v);
    assert_int_not_equal(a2, GP_NONE);
    assert_true(g2->w[a2] > g->w[gp_graph_find_arc(g, u, v)]);
    /* the new version answers through its CCH with the new cost */
    gp_path p;
    assert_int_equal(gp_engine_p2p(E, g2, u, v, GP_P2P_AUTO, &p, &err), GP_OK);
    gp_path q;
    assert_int_equal(gp_engine_p2p(E, g2, u, v, GP_P2P_DIJKSTRA, &q, &err), GP_OK);
    assert_int_equal(p.dist, q.dist);
    gp_path_free(&p);
    gp_path_free(&q);

    /* the old graph is unchanged */
    assert_true(g->hash == hash0);
    assert_ptr_equal(g->cch, cch0);
    assert_memory_equal(g->w, w0, (size_t)g->m * sizeof *w0);
    gp_graph_unref(g2);

    /* a failed router: every arc at it removed, the router kept */
    int64_t fr = g->ext[v];
    assert_int_equal(gp_engine_change_links(E, g, NULL, 0, &fr, 1, &g2, NULL, &err), GP_OK);
    assert_int_equal(g2->n, g->n);
    uint32_t vi = gp_graph_index(g2, fr);
    assert_int_equal(g2->row[vi + 1] - g2->row[vi], 0);
    assert_int_equal(g2->rrow[vi + 1] - g2->rrow[vi], 0);
    assert_non_null(g2->cch);
    gp_graph_unref(g2);

    /* errors: nothing derived, nothing attached */
    gp_link_change unk = {.u = g->ext[0], .v = 1000000, .cost = 1};
    g2 = g;
    assert_int_equal(gp_engine_change_links(E, g, &unk, 1, NULL, 0, &g2, NULL, &err), GP_ENOTFOUND);
    assert_null(g2);
    gp_link_change neg = ch;
    neg.cost = -1;
    assert_int_equal(gp_engine_change_links(E, g, &neg, 1, NULL, 0, &g2, NULL, &err), GP_EINVAL);
    assert_null(g2);
    int64_t nobody = 1000000;
    assert_int_equal(gp_engine_change_links(E, g, NULL, 0, &nobody, 1, &g2, NULL, &err),
                     GP_ENOTFOUND);
    assert_null(g2);
    assert_memory_equal(g->w, w0, (size_t)g->m * sizeof *w0);
    free(w0);
    gp_graph_unref(g);
}

static void test_registry_replace_attaches(void **state) {
    (void)state;
    gp_err err;
    gp_err_clear(&err);
    gp_registry *r = gp_registry_new(E);
    assert_non_null(r);
    gp_graph_source src;
    memset(&src, 0, sizeof src);
    snprintf(src.spec, sizeof src.spec, "gen:400");
    int replaced = -1;
    assert_int_equal(gp_registry_load(r, "g", &src, &replaced, &err), GP_OK);
    assert_int_equal(replaced, 0);
    gp_graph *g = gp_registry_get(r, "g");
    assert_non_null(g);
    assert_non_null(g->cch); /* a load is attached */

    /* a derived version that nobody attached */
    uint32_t u, v;
    gp_link_change ch = first_link(g, &u, &v);
    gp_graph *g2 = NULL;
    assert_int_equal(gp_graph_change_links(g, &ch, 1, NULL, 0, &g2, &err), GP_OK);
    assert_null(g2->cch);

    /* refused: nothing attached, the old version keeps serving */
    assert_int_equal(gp_registry_replace(r, "g", g2, g->hash + 1, &err), GP_EBUSY);
    assert_int_equal(gp_registry_replace(r, "nope", g2, g->hash, &err), GP_ENOTFOUND);
    assert_null(g2->cch);
    gp_graph *cur = gp_registry_get(r, "g");
    assert_ptr_equal(cur, g);
    gp_graph_unref(cur);

    /* published: attached, then swapped in; the recorded source kept */
    assert_int_equal(gp_registry_replace(r, "g", g2, g->hash, &err), GP_OK);
    assert_non_null(g2->cch);
    cur = gp_registry_get(r, "g");
    assert_ptr_equal(cur, g2);
    gp_graph_unref(cur);
    gp_graph_source got;
    assert_int_equal(gp_registry_source(r, "g", &got), GP_OK);
    assert_string_equal(got.spec, "gen:400");
    /* a second change from the old version comes too late */
    assert_int_equal(gp_registry_replace(r, "g", g2, g->hash, &err), GP_EBUSY);

    /* a version from gp_engine_change_links is published as it is (its CCH kept) */
    gp_graph *g3 = NULL;
    ch.cost += 1;
    assert_int_equal(gp_engine_change_links(E, g2, &ch, 1, NULL, 0, &g3, NULL, &err), GP_OK);
    const void *cch3 = g3->cch;
    assert_non_null(cch3);
    assert_int_equal(gp_registry_replace(r, "g", g3, g2->hash, &err), GP_OK);
    assert_ptr_equal(g3->cch, cch3);
    cur = gp_registry_get(r, "g");
    assert_ptr_equal(cur, g3);
    gp_graph_unref(cur);

    /* a reload re-reads the source: the changes are gone */
    assert_int_equal(gp_registry_reload(r, "g", &err), GP_OK);
    cur = gp_registry_get(r, "g");
    assert_true(cur->hash == g->hash);
    assert_non_null(cur->cch);
    gp_graph_unref(cur);

    gp_graph_unref(g3);
    gp_graph_unref(g2);
    gp_graph_unref(g);
    gp_registry_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_change_derives_and_attaches),
        cmocka_unit_test(test_registry_replace_attaches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
