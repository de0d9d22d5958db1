/* change.c - gp_graph_change_links: a new version of a graph with links down, other link costs
 * or routers failed (contract in change.h).
 *
 * Cost changes only: a reweighted version (gp_graph_reweight) sharing every array but the two
 * weight arrays with the graph. Links down or failed routers: a new graph through the builder,
 * every node kept (with its coordinates, name and original id) and every surviving arc copied with
 * its road attributes, under the same source, format, unit and profile. When one link is changed
 * several times in one request, the last change wins.
 */
#include "graph/change.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct chg_key {
    uint32_t a, b; /* a <= b, internal */
    size_t idx;    /* position in the request: the last change of a link wins */
} chg_key;

static int cmp_chg(const void *x, const void *y) {
    const chg_key *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

static int has_arc(const gp_graph *g, uint32_t u, uint32_t v) {
    for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
        if (g->col[a] == v) return 1;
    return 0;
}

/* Sets every arc u -> v of g to weight x in w (forward order) and rw (reverse order); the
 * forward positions go to arcs[*narcs...] when arcs is not NULL. */
static void set_link(const gp_graph *g, uint32_t *w, uint32_t *rw, uint32_t u, uint32_t v,
                     uint32_t x, uint32_t *arcs, uint32_t *narcs) {
    for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
        if (g->col[a] == v) {
            w[a] = x;
            if (arcs) arcs[(*narcs)++] = a;
        }
    for (uint32_t k = g->rrow[v]; k < g->rrow[v + 1]; k++)
        if (g->rcol[k] == u) rw[k] = x;
}

/* The lists of a reweighted version h of g that changed the links keys[0..nk) (gp_graph
 * diff_tails, diff_arcs): g's (none when g is the base), the links' ends and their arcs added;
 * left unknown when g's are, when the arcs would be more than a quarter of the graph's (a full
 * pass costs no more then) or out of memory. */
static void version_lists(const gp_graph *g, gp_graph *h, const uint32_t *arcs, uint32_t narcs,
                          const chg_key *keys, size_t nk) {
    int known = !g->base || (g->diff_tails && g->diff_arcs);
    uint64_t na = (uint64_t)narcs + (g->base ? g->ndiff_arcs : 0);
    uint64_t nt = 2 * (uint64_t)nk + (g->base ? g->ndiff_tails : 0);
    if (!known || na > g->m / 4 + 1024 || nt >= UINT32_MAX) return;
    uint32_t *a = malloc(na * 4 + 4), *t = malloc(nt * 4 + 4);
    if (!a || !t) {
        free(a);
        free(t);
        return;
    }
    memcpy(a, arcs, (size_t)narcs * 4);
    if (g->base) memcpy(a + narcs, g->diff_arcs, (size_t)g->ndiff_arcs * 4);
    for (size_t k = 0; k < nk; k++) t[2 * k] = keys[k].a, t[2 * k + 1] = keys[k].b;
    if (g->base) memcpy(t + 2 * nk, g->diff_tails, (size_t)g->ndiff_tails * 4);
    int64_t ua = gp_sort_unique_u32(a, (uint32_t)na), ut = gp_sort_unique_u32(t, (uint32_t)nt);
    if (ua < 0 || ut < 0) {
        free(a);
        free(t);
        return;
    }
    h->diff_arcs = a, h->ndiff_arcs = (uint32_t)ua;
    h->diff_tails = t, h->ndiff_tails = (uint32_t)ut;
}

/* Adds arc a of g (u -> v) to b with weight w, with its road attributes when g has them. */
static int add_arc_like(gp_builder *b, const gp_graph *g, uint32_t a, uint32_t u, uint32_t v,
                        uint32_t w, gp_err *e) {
    if (!g->arc_len_m && !g->arc_name && !g->arc_ref && !g->arc_class && !g->arc_shape)
        return gp_builder_add_arc(b, g->ext[u], g->ext[v], w, e);
    gp_road_attr ra = {.len_m = g->arc_len_m ? g->arc_len_m[a] : 0,
                       .name = gp_graph_arc_name(g, a),
                       .ref = gp_graph_arc_ref(g, a),
                       .cls = g->arc_class ? g->arc_class[a] : GP_ROAD_UNKNOWN,
                       .flags = gp_graph_arc_flags(g, a),
                       .guide = g->arc_guide ? gp_graph_str(g, g->arc_guide[a]) : NULL};
    if (g->arc_limits) memcpy(ra.limits, gp_graph_arc_limits(g, a), GP_LIMITS);
    ra.nshape = gp_graph_arc_shape(g, a, &ra.shape_lon, &ra.shape_lat);
    if (g->shape_osm_id && ra.nshape) ra.shape_osm_id = g->shape_osm_id + g->arc_shape[a];
    return gp_builder_add_road_arc(b, g->ext[u], g->ext[v], w, &ra, e);
}

/* Link capacities (arc_cap) follow their arcs into the new version: the k-th arc u -> v of h is
 * the k-th arc u -> v of g (a pair's arcs are kept or removed together). */
static int carry_caps(const gp_graph *g, gp_graph *h, gp_err *err) {
    const double *cap = gp_graph_owner(g)->arc_cap;
    if (!(h->arc_cap = calloc((size_t)h->m + 1, sizeof *h->arc_cap)))
        return gp_err_set(err, GP_ENOMEM, "out of memory for link capacities");
    for (uint32_t u = 0; u < h->n; u++) {
        uint32_t gu = gp_graph_index(g, h->ext[u]);
        if (gu == GP_NONE) continue;
        for (uint32_t a = h->row[u]; a < h->row[u + 1]; a++) {
            uint32_t v = h->col[a], gv = gp_graph_index(g, h->ext[v]), k = 0;
            for (uint32_t b = h->row[u]; b < a; b++) k += h->col[b] == v;
            for (uint32_t b = g->row[gu]; b < g->row[gu + 1]; b++) {
                if (g->col[b] != gv) continue;
                if (k == 0) {
                    h->arc_cap[a] = cap[b];
                    break;
                }
                k--;
            }
        }
    }
    return GP_OK;
}

/* The changes ch[lo, hi) checked: keys[k] the link's ends (.a GP_NONE when change k is bad:
 * an unknown router, no such link, a cost the graph cannot store), wnew[k] its weight. */
typedef struct check_job {
    const gp_graph *g;
    const gp_link_change *ch;
    const gp_builder *b;
    chg_key *keys;
    uint32_t *wnew;
} check_job;

static void check_range(void *jv, uint64_t lo, uint64_t hi) {
    check_job *j = jv;
    for (uint64_t k = lo; k < hi; k++) {
        const gp_link_change *c = &j->ch[k];
        uint32_t u = gp_graph_index(j->g, c->u), v = gp_graph_index(j->g, c->v);
        gp_err e;
        int ok =
            u != GP_NONE && v != GP_NONE && (has_arc(j->g, u, v) || has_arc(j->g, v, u)) &&
            (c->down || (c->cost >= 0 && gp_builder_cost(j->b, c->cost, &j->wnew[k], &e) == GP_OK));
        j->keys[k] = ok ? (chg_key){.a = u < v ? u : v, .b = u < v ? v : u, .idx = (size_t)k}
                        : (chg_key){.a = GP_NONE, .b = GP_NONE, .idx = (size_t)k};
    }
}

/* The links keys[lo, hi) (distinct) set to their new weights in w and rw, each way; their forward
 * arcs appended to arcs (atomically) when arcs is not NULL. */
typedef struct set_job {
    const gp_graph *g;
    const chg_key *keys;
    const uint32_t *wnew;
    uint32_t *w, *rw, *arcs, narcs;
} set_job;

static void set_range(void *jv, uint64_t lo, uint64_t hi) {
    set_job *j = jv;
    uint32_t buf[64];
    for (uint64_t k = lo; k < hi; k++) {
        uint32_t a = j->keys[k].a, b = j->keys[k].b, x = j->wnew[j->keys[k].idx], n = 0;
        uint32_t *to = j->arcs ? buf : NULL;
        uint64_t deg =
            (uint64_t)(j->g->row[a + 1] - j->g->row[a]) + (j->g->row[b + 1] - j->g->row[b]);
        if (deg > 64) to = NULL; /* a hub: its arcs straight into the list */
        set_link(j->g, j->w, j->rw, a, b, x, to, &n);
        set_link(j->g, j->w, j->rw, b, a, x, to, &n);
        if (j->arcs && !to) { /* listed one by one */
            for (uint32_t q = j->g->row[a]; q < j->g->row[a + 1]; q++)
                if (j->g->col[q] == b)
                    j->arcs[__atomic_fetch_add(&j->narcs, 1, __ATOMIC_RELAXED)] = q;
            for (uint32_t q = j->g->row[b]; q < j->g->row[b + 1]; q++)
                if (j->g->col[q] == a)
                    j->arcs[__atomic_fetch_add(&j->narcs, 1, __ATOMIC_RELAXED)] = q;
        } else if (n) {
            uint32_t at = __atomic_fetch_add(&j->narcs, n, __ATOMIC_RELAXED);
            memcpy(j->arcs + at, buf, (size_t)n * 4);
        }
    }
}

int gp_graph_change_links(const gp_graph *g, const gp_link_change *ch, size_t nch,
                          const int64_t *fail_routers, size_t nfail, gp_graph **out, gp_err *err) {
    chg_key *keys = NULL;
    uint32_t *wnew = NULL;
    unsigned char *dead = NULL;
    gp_builder *b = NULL;
    int rc = GP_OK;
    keys = malloc((nch ? nch : 1) * sizeof *keys);
    wnew = malloc((nch ? nch : 1) * sizeof *wnew);
    dead = calloc(g->n ? g->n : 1, 1);
    b = gp_builder_new(g->scale);
    if (!keys || !wnew || !dead || !b) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory");
        goto done;
    }
    /* each change checked, on all CPUs for many (a 1% change: 10,000); the first bad one in
     * request order is the error */
    check_job cj = {g, ch, b, keys, wnew};
    gp_parallel_for(nch, nch >= 4096 ? 0 : 1, check_range, &cj);
    for (size_t k = 0; k < nch; k++) {
        if (keys[k].a != GP_NONE) continue;
        uint32_t u = gp_graph_index(g, ch[k].u), v = gp_graph_index(g, ch[k].v);
        if (u == GP_NONE || v == GP_NONE) {
            rc = gp_err_set(err, GP_ENOTFOUND, "links[%zu]: unknown router %lld", k,
                            (long long)(u == GP_NONE ? ch[k].u : ch[k].v));
        } else if (!has_arc(g, u, v) && !has_arc(g, v, u)) {
            rc = gp_err_set(err, GP_ENOTFOUND, "links[%zu]: no link between %lld and %lld", k,
                            (long long)ch[k].u, (long long)ch[k].v);
        } else {
            gp_err e = {0};
            if (ch[k].cost >= 0) gp_builder_cost(b, ch[k].cost, &wnew[k], &e);
            rc = gp_err_set(err, GP_EINVAL, "links[%zu]: bad cost %g%s%s", k, ch[k].cost,
                            ch[k].cost >= 0 ? ": " : " (must be >= 0)",
                            ch[k].cost >= 0 ? e.msg : "");
        }
        goto done;
    }
    qsort(keys, nch, sizeof *keys, cmp_chg);
    /* keep the last change of each link */
    size_t nk = 0;
    for (size_t k = 0; k < nch; k++) {
        if (nk && keys[nk - 1].a == keys[k].a && keys[nk - 1].b == keys[k].b)
            keys[nk - 1] = keys[k];
        else keys[nk++] = keys[k];
    }
    for (size_t k = 0; k < nfail; k++) {
        uint32_t r = gp_graph_index(g, fail_routers[k]);
        if (r == GP_NONE) {
            rc = gp_err_set(err, GP_ENOTFOUND, "fail_routers[%zu]: unknown router %lld", k,
                            (long long)fail_routers[k]);
            goto done;
        }
        dead[r] = 1;
    }
    int costs_only = nfail == 0;
    for (size_t k = 0; k < nk; k++) costs_only = costs_only && !ch[keys[k].idx].down;
    if (costs_only) {
        /* the same arcs with other weights: a reweighted version sharing everything else */
        uint32_t *w = NULL, *rw = NULL;
        if (gp_weights_dup(g, &w, &rw, NULL) != 0) w = rw = NULL;
        /* the forward arcs set, for the version's lists (at most a link's parallel arcs each
         * way; unknown when out of memory) */
        uint64_t cap = 0;
        for (size_t k = 0; k < nk; k++)
            cap += (uint64_t)(g->row[keys[k].a + 1] - g->row[keys[k].a]) +
                   (g->row[keys[k].b + 1] - g->row[keys[k].b]);
        uint32_t *arcs = cap < UINT32_MAX ? malloc(cap * 4 + 4) : NULL, narcs = 0;
        if (w && rw) {
            set_job sj = {g, keys, wnew, w, rw, arcs, 0};
            gp_parallel_for(nk, nk >= 4096 ? 0 : 1, set_range, &sj);
            narcs = sj.narcs;
        } else {
            gp_weights_release(w, g->m), gp_weights_release(rw, g->m);
            w = rw = NULL; /* gp_graph_reweight reports it */
        }
        *out = gp_graph_reweight(g, w, rw, err);
        if (*out && arcs) version_lists(g, *out, arcs, narcs, keys, nk);
        free(arcs);
        if (!*out) rc = err ? err->code : GP_ENOMEM;
        goto done;
    }
    gp_err e;
    for (uint32_t v = 0; v < g->n; v++) {
        const int has = g->lon && g->lat && !isnan(g->lon[v]) && !isnan(g->lat[v]);
        if ((rc = gp_builder_add_node(b, g->ext[v], has, has ? g->lon[v] : 0, has ? g->lat[v] : 0,
                                      gp_graph_name(g, v), &e)) != GP_OK) {
            rc = gp_err_set(err, rc, "%s", e.msg);
            goto done;
        }
    }
    for (uint32_t v = 0; g->osm_id && v < g->n; v++)
        if (g->osm_id[v] != g->ext[v] &&
            (rc = gp_builder_set_osm_id(b, g->ext[v], g->osm_id[v], &e)) != GP_OK) {
            rc = gp_err_set(err, rc, "%s", e.msg);
            goto done;
        }
    for (uint32_t v = 0; g->node_flags && v < g->n; v++)
        if ((rc = gp_builder_set_node_flags(b, g->ext[v], g->node_flags[v], &e)) != GP_OK) {
            rc = gp_err_set(err, rc, "%s", e.msg);
            goto done;
        }
    for (uint32_t u = 0; u < g->n; u++) {
        if (dead[u]) continue;
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a], w = g->w[a];
            if (dead[v]) continue;
            if (nk) {
                chg_key q = {.a = u < v ? u : v, .b = u < v ? v : u, .idx = 0};
                size_t lo = 0, hi = nk;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (keys[mid].a < q.a || (keys[mid].a == q.a && keys[mid].b < q.b))
                        lo = mid + 1;
                    else hi = mid;
                }
                if (lo < nk && keys[lo].a == q.a && keys[lo].b == q.b) {
                    if (ch[keys[lo].idx].down) continue;
                    w = wnew[keys[lo].idx];
                }
            }
            if ((rc = add_arc_like(b, g, a, u, v, w, &e)) != GP_OK) {
                rc = gp_err_set(err, rc, "%s", e.msg);
                goto done;
            }
        }
    }
    *out = gp_builder_finish(b, g->source, g->format, g->directed_input, err);
    b = NULL;
    if (!*out) {
        rc = err ? err->code : GP_ENOMEM;
    } else {
        gp_graph_set_unit(*out, g->unit_name, g->unit_s); /* the same cost rule */
        memcpy((*out)->profile, g->profile, sizeof g->profile);
        if (gp_graph_owner(g)->arc_cap && (rc = carry_caps(g, *out, err)) != GP_OK) {
            gp_graph_unref(*out);
            *out = NULL;
        }
    }
done:
    gp_builder_free(b);
    free(keys);
    free(wnew);
    free(dead);
    return rc;
}
