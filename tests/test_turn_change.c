/* test_turn_change.c - a cost change with turn costs on (engine/change.h, graph/turns.h
 * gp_turns_reweight): after each of several PATCH-like changes in a row, the new version's turn
 * graph has exactly the weights of a turn graph built from scratch on the new road weights, its
 * CCH (on the topology of the first version, customized partially from the first version's:
 * engine/cch.h gp_cch.prev) has every weight and witness of a full customization and answers
 * every route as the Dijkstra family does on the same version, and changing the links back gives the first version again;
 * with turn costs off, a chain of such changes maps each CCH metric over the nodes its version
 * lists (gp_graph diff_tails) to a full mapping's.
 * On a generated road graph (always) and on Monaco (data/osm, `make data`; skipped without it).
 * The GPU twin is test_gpu_turn_change.c. Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/cch.h"
#include "engine/change.h"
#include "graph/graph_internal.h" /* gp_splitmix64 */
#include "graph/turns.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t next_rand(uint64_t *s) { return gp_splitmix64(s) >> 33; }

/* The turn graph of version g against one built from scratch on g's road weights. */
static void same_as_scratch(const gp_graph *g) {
    const gp_turns *T = g->turns;
    assert_non_null(T);
    gp_err err = {0};
    gp_turns *S = gp_turns_build(g, T->costs, &err);
    if (!S) fail_msg("scratch turn graph: %s", err.msg);
    assert_int_equal(S->tg->n, T->tg->n);
    assert_int_equal(S->tg->m, T->tg->m);
    assert_memory_equal(S->tg->col, T->tg->col, sizeof *S->tg->col * S->tg->m);
    for (uint32_t k = 0; k < S->tg->m; k++)
        if (S->tg->w[k] != T->tg->w[k] || S->tg->rw[k] != T->tg->rw[k])
            fail_msg("turn %u: weight %u / %u, from scratch %u / %u", k, T->tg->w[k], T->tg->rw[k],
                     S->tg->w[k], S->tg->rw[k]);
    gp_turns_free(S);
}

/* The version's CCH (metric mapped and customized from its base's: partially when few edges
 * change, which must be the case when partial is set) against the metric mapped from every arc
 * and a full customization: every weight and witness the same. */
static void same_as_full(const gp_graph *tg);

static void partial_as_full(const gp_graph *g, int partial) {
    const gp_graph *tg = ((const gp_turns *)g->turns)->tg;
    assert_non_null(tg->cch);
    if (partial) assert_int_equal(((const gp_cch *)tg->cch)->custom_partial, 1);
    same_as_full(tg);
}

/* The CCH of graph tg against the metric mapped from every arc and a full customization. */
static void same_as_full(const gp_graph *tg) {
    const gp_cch *c = tg->cch;
    assert_non_null(c);
    gp_err err = {0};
    gp_cch *f = NULL;
    assert_int_equal(gp_cch_prepare(tg, &f, &err), GP_OK);
    f->prev = NULL; /* the full pass, on the metric mapped from every arc */
    assert_int_equal(gp_cch_map_metric(f, tg, &err), GP_OK);
    assert_int_equal(gp_cch_customize(f, 2, &err), GP_OK);
    assert_int_equal(f->custom_partial, 0);
    size_t m = c->topo->m;
    assert_memory_equal(c->ofw, f->ofw, m * 4);
    assert_memory_equal(c->obw, f->obw, m * 4);
    assert_memory_equal(c->fw, f->fw, m * 4);
    assert_memory_equal(c->bw, f->bw, m * 4);
    assert_memory_equal(c->fmid, f->fmid, m * 4);
    assert_memory_equal(c->bmid, f->bmid, m * 4);
    assert_memory_equal(c->wit, f->wit, m * 16);
    gp_cch_free(f);
}

/* gp_cch_customize_partial on version g's turn graph: when partial, every edge outside the list
 * it returns has the base's weights and witnesses (so the GPU path, which copies the base's
 * device arrays and scatters the list, gets the whole metric), the list ascending, and the result
 * the engine's; given up, the customized arrays are the base's. */
static void delta_complete(const gp_graph *g) {
    const gp_graph *tg = ((const gp_turns *)g->turns)->tg;
    const gp_cch *c = tg->cch;
    gp_err err = {0};
    gp_cch *f = NULL;
    assert_int_equal(gp_cch_prepare(tg, &f, &err), GP_OK);
    const gp_cch *p = f->prev;
    assert_non_null(p);
    uint32_t *edges = NULL, n = 0;
    assert_int_equal(gp_cch_customize_partial(f, 2, 0, &edges, &n, &err), GP_OK);
    if (!f->custom_partial) { /* gave up: no list, the caller customizes in full */
        assert_null(edges);
        gp_cch_free(f);
        return;
    }
    assert_null(f->prev);
    assert_true(n > 0);
    size_t m = c->topo->m;
    uint8_t *in = calloc(m, 1);
    assert_non_null(in);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(edges[i] < m);
        if (i) assert_true(edges[i - 1] < edges[i]);
        in[edges[i]] = 1;
    }
    for (size_t e = 0; e < m; e++)
        if (!in[e] &&
            (f->ofw[e] != p->ofw[e] || f->obw[e] != p->obw[e] || f->fw[e] != p->fw[e] ||
             f->bw[e] != p->bw[e] || f->fmid[e] != p->fmid[e] || f->bmid[e] != p->bmid[e]))
            fail_msg("edge %zu differs from the base's but is not in the list of %u", e, n);
    assert_memory_equal(f->fw, c->fw, m * 4);
    assert_memory_equal(f->bmid, c->bmid, m * 4);
    assert_memory_equal(f->wit, c->wit, m * 16);
    assert_ptr_equal(edges, f->delta); /* owned by f */
    assert_int_equal(n, f->ndelta);
    free(in);
    gp_cch_free(f);
    /* a pass that gives up at once (a budget of one triangle) leaves the customized arrays the
     * base's (c->from_prev), as the GPU's diff path needs */
    assert_int_equal(gp_cch_prepare(tg, &f, &err), GP_OK);
    p = f->prev;
    assert_int_equal(gp_cch_customize_partial(f, 2, 1, &edges, &n, &err), GP_OK);
    assert_int_equal(f->custom_partial, 0);
    assert_null(edges);
    if (f->from_prev) { /* it started (else: too many seeds, nothing written) */
        assert_memory_equal(f->fw, p->fw, m * 4);
        assert_memory_equal(f->bw, p->bw, m * 4);
        assert_memory_equal(f->fmid, p->fmid, m * 4);
        assert_memory_equal(f->bmid, p->bmid, m * 4);
        assert_memory_equal(f->wit, p->wit, m * 16);
    } else {
        fail_msg("a change of 6 links: the partial pass did not start");
    }
    gp_cch_free(f);
}

/* Routes between npairs random node pairs: the engine's choice (the turn graph's CCH) against
 * the Dijkstra family, on version g. */
static void cch_as_dijkstra(gp_engine *e, const gp_graph *g, uint32_t npairs, uint64_t *seed) {
    const gp_turns *T = g->turns;
    assert_non_null(T->tg->cch); /* the CCH answers, not a fallback */
    gp_err err = {0};
    for (uint32_t q = 0; q < npairs; q++) {
        uint32_t s = (uint32_t)(next_rand(seed) % g->n), t = (uint32_t)(next_rand(seed) % g->n);
        gp_path a = {0}, b = {0};
        assert_int_equal(gp_engine_p2p(e, g, s, t, GP_P2P_AUTO, &a, &err), GP_OK);
        assert_int_equal(gp_engine_p2p(e, g, s, t, GP_P2P_DIJKSTRA, &b, &err), GP_OK);
        if (a.dist != b.dist)
            fail_msg("version %s route %u -> %u: CCH %llu, Dijkstra %llu", g->version, s, t,
                     (unsigned long long)a.dist, (unsigned long long)b.dist);
        gp_path_free(&a);
        gp_path_free(&b);
    }
}

/* Five changes in a row of nlinks random links each (costs x0.25 .. x4, one set to 0), each
 * checked; then the first version's costs back. */
static void changes(gp_engine *e, gp_graph *g) {
    gp_err err = {0};
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_non_null(g->turns);
    const gp_graph *first_tg = ((const gp_turns *)g->turns)->tg;
    uint64_t seed = 11;
    enum { NL = 6 };
    gp_link_change ch[NL], undo[5 * NL];
    size_t nundo = 0;
    gp_graph *cur = gp_graph_ref(g);
    for (int r = 0; r < 5; r++) {
        for (int k = 0; k < NL; k++) {
            uint32_t a = (uint32_t)(next_rand(&seed) % cur->m), u = gp_graph_arc_tail(cur, a);
            uint32_t v = cur->col[a];
            double c = (double)cur->w[a] / cur->scale;
            double f = (double)(1 + next_rand(&seed) % 16) / 4;
            ch[k] = (gp_link_change){cur->ext[u], cur->ext[v], 0,
                                     k == 0 && r == 2 ? 0 : (double)(uint64_t)(c * f)};
            /* the first version's cost of the link (both directions get the new one) */
            undo[nundo++] = (gp_link_change){cur->ext[u], cur->ext[v], 0, c};
            (void)v;
        }
        gp_graph *nx = NULL;
        gp_change_stats st;
        if (gp_engine_change_links(e, cur, ch, NL, NULL, 0, &nx, &st, &err) != GP_OK)
            fail_msg("change %d: %s", r, err.msg);
        assert_non_null(nx->turns);
        /* the change held cur's background work and let it go again */
        const gp_cch *hc = ((const gp_turns *)cur->turns)->tg->cch;
        assert_non_null(hc);
        assert_int_equal(hc->perfect_holds, 0);
        gp_engine_hold_background(cur, 1);
        assert_int_equal(hc->perfect_holds, 1);
        gp_engine_hold_background(cur, 0);
        assert_int_equal(hc->perfect_holds, 0);
        /* the version lists what it changed: its turn graph reweighted over those arcs alone */
        assert_non_null(nx->diff_arcs);
        assert_non_null(nx->diff_tails);
        /* the same topology: the turn graph is a version of the first one's */
        assert_ptr_equal(gp_graph_owner(((const gp_turns *)nx->turns)->tg), first_tg);
        same_as_scratch(nx);
        partial_as_full(nx, r == 0); /* the first: 6 links off the base */
        delta_complete(nx);
        cch_as_dijkstra(e, nx, 60, &seed);
        gp_graph_unref(cur);
        cur = nx;
    }
    /* undo in reverse order: the first change of a link restores its original cost last */
    gp_link_change back[5 * NL];
    for (size_t i = 0; i < nundo; i++) back[i] = undo[nundo - 1 - i];
    gp_graph *orig = NULL;
    if (gp_engine_change_links(e, cur, back, nundo, NULL, 0, &orig, NULL, &err) != GP_OK)
        fail_msg("undo: %s", err.msg);
    same_as_scratch(orig);
    gp_graph_unref(cur);
    gp_graph_unref(orig);
}

static gp_engine *cpu_engine(void);

/* A chain of 20 one-link changes, each made from the version before it (as PATCHes pile up in
 * the service): each version's CCH is customized partially from its predecessor's (engine.h
 * gp_engine_attach_from; not from the base's, so the changes do not accumulate), with every
 * weight and witness of a full customization and the routes of the Dijkstra family. The metric's
 * list of changed edges (gp_cch.mchg) is exactly the edges whose original weights differ from the
 * predecessor's. */
static void chain(gp_engine *e, gp_graph *g) {
    gp_err err = {0};
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    uint64_t seed = 29;
    gp_graph *cur = gp_graph_ref(g);
    for (int r = 0; r < 20; r++) {
        uint32_t a = (uint32_t)(next_rand(&seed) % cur->m), u = gp_graph_arc_tail(cur, a);
        double c = (double)cur->w[a] / cur->scale, f = (double)(1 + next_rand(&seed) % 16) / 4;
        gp_link_change ch = {cur->ext[u], cur->ext[cur->col[a]], 0, (double)(uint64_t)(c * f)};
        gp_graph *nx = NULL;
        if (gp_engine_change_links(e, cur, &ch, 1, NULL, 0, &nx, NULL, &err) != GP_OK)
            fail_msg("chain change %d: %s", r, err.msg);
        const gp_graph *ptg = ((const gp_turns *)cur->turns)->tg;
        const gp_cch *pc = ptg->cch, *c2 = ((const gp_turns *)nx->turns)->tg->cch;
        assert_non_null(c2);
        assert_ptr_equal(c2->topo, pc->topo);
        if (nx->hash != cur->hash) {
            if (!c2->custom_partial) fail_msg("chain change %d: not customized partially", r);
            assert_true(c2->delta_base == ptg->hash); /* from the predecessor, not the base */
        }
        assert_true(c2->mchg_ok);
        uint32_t k = 0;
        for (uint32_t x = 0; x < c2->topo->m; x++) {
            int changed = c2->ofw[x] != pc->ofw[x] || c2->obw[x] != pc->obw[x];
            int listed = k < c2->nmchg && c2->mchg[k] == x;
            if (changed != listed)
                fail_msg("chain change %d: edge %u changed %d listed %d", r, x, changed, listed);
            k += listed;
        }
        assert_int_equal(k, c2->nmchg);
        partial_as_full(nx, 0);
        cch_as_dijkstra(e, nx, 20, &seed);
        gp_graph_unref(cur);
        cur = nx;
    }
    gp_graph_unref(cur);
}

static void test_chain(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_generate_road(3000, 7, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car");
    gp_engine *e = cpu_engine();
    chain(e, g);
    gp_graph_unref(g);
    gp_engine_free(e);
}

static gp_engine *engine_turns(const char *on) {
    gp_err err = {0};
    gp_engine *e = gp_engine_new("cpu", 2, NULL, &err);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_cch(e, "on", 0, 0, &err), GP_OK);
    assert_int_equal(gp_engine_set_cch_perfect(e, "off", &err), GP_OK);
    assert_int_equal(gp_engine_set_turn_costs(e, on, &err), GP_OK);
    return e;
}

static gp_engine *cpu_engine(void) { return engine_turns("on"); }

/* Turn costs off: a chain of changes of 40 links each, each from the version before it (the
 * last one putting every link back): each version lists the nodes and arcs whose weights differ
 * from the base's (gp_graph diff_tails, diff_arcs: its predecessor's and its own links'), its CCH
 * metric is mapped from its predecessor's over those nodes alone, and every weight and witness
 * must be those of a full mapping and customization. */
static void test_chain_roads(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_generate_road(3000, 13, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car");
    gp_engine *e = engine_turns("off");
    assert_int_equal(gp_engine_attach(e, g, &err), GP_OK);
    assert_null(g->turns);
    enum { NL = 40, R = 5 };
    gp_link_change ch[NL], undo[R * NL];
    size_t nundo = 0;
    uint64_t seed = 31;
    gp_graph *cur = gp_graph_ref(g);
    for (int r = 0; r <= R; r++) {
        size_t n = r < R ? NL : nundo;
        for (size_t k = 0; r < R && k < NL; k++) { /* distinct links within a change */
            uint32_t a, u;
            int dup;
            do {
                a = (uint32_t)(next_rand(&seed) % cur->m), u = gp_graph_arc_tail(cur, a);
                dup = 0;
                for (size_t i = 0; i < k; i++)
                    dup |= (ch[i].u == cur->ext[u] && ch[i].v == cur->ext[cur->col[a]]) ||
                           (ch[i].v == cur->ext[u] && ch[i].u == cur->ext[cur->col[a]]);
            } while (dup);
            double c = (double)g->w[a] / g->scale, f = (double)(1 + next_rand(&seed) % 16) / 4;
            ch[k] =
                (gp_link_change){cur->ext[u], cur->ext[cur->col[a]], 0, (double)(uint64_t)(c * f)};
            undo[nundo++] = (gp_link_change){cur->ext[u], cur->ext[cur->col[a]], 0, c};
        }
        /* the last: every link back, the first change of a link last */
        gp_link_change *use = ch;
        gp_link_change back[R * NL];
        if (r == R) {
            for (size_t i = 0; i < nundo; i++) back[i] = undo[nundo - 1 - i];
            use = back;
        }
        gp_graph *nx = NULL; /* the undo names links several times: the last change wins */
        if (gp_engine_change_links(e, cur, use, n, NULL, 0, &nx, NULL, &err) != GP_OK)
            fail_msg("change %d: %s", r, err.msg);
        assert_non_null(nx->diff_tails);
        assert_non_null(nx->diff_arcs);
        for (uint32_t a = 0, k = 0; a < g->m; a++) { /* every differing arc listed */
            while (k < nx->ndiff_arcs && nx->diff_arcs[k] < a) k++;
            if (nx->w[a] != g->w[a] && (k == nx->ndiff_arcs || nx->diff_arcs[k] != a))
                fail_msg("change %d: arc %u differs from the base's, not listed", r, a);
        }
        same_as_full(nx);
        gp_graph_unref(cur);
        cur = nx;
    }
    gp_graph_unref(cur);
    gp_graph_unref(g);
    gp_engine_free(e);
}

static void test_generated(void **state) {
    (void)state;
    gp_err err = {0};
    gp_graph *g = gp_generate_road(3000, 5, &err);
    assert_non_null(g);
    snprintf(g->profile, sizeof g->profile, "car"); /* travel times and coordinates: a car map */
    gp_engine *e = cpu_engine();
    changes(e, g);
    gp_graph_unref(g);
    gp_engine_free(e);
}

static void test_monaco(void **state) {
    (void)state;
    const char *path = "data/osm/monaco.osm.pbf";
    if (access(path, R_OK) != 0) {
        print_message("no %s (make data): skipped\n", path);
        skip();
    }
    gp_err err = {0};
    gp_graph *g = gp_graph_load("osm:data/osm/monaco.osm.pbf?profile=car", NULL, &err);
    if (!g) fail_msg("monaco: %s", err.msg);
    gp_engine *e = cpu_engine();
    changes(e, g);
    gp_graph_unref(g);
    gp_engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_monaco),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_chain_roads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
