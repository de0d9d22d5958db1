/* turns.c - the turn-expanded graph of a road graph and the profiles' turn-cost tables
 * (graph/turns.h is the contract).
 *
 * Build: the bearing of each arc's first and last segment, the number of roads at each node
 * (counted over a node and its copies made for turn restrictions, by distinct neighbour), the
 * opposite arc of each arc (U-turns); then one CSR row per road arc a listing the allowed turns
 * a -> b, b ascending, so the rows are sorted as gp_graph_complete expects.
 */
#include "graph/turns.h"

#include "graph/graph_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OSRM v6 profiles' values (car.lua: turn_penalty, turn_bias, u_turn_penalty; lib/obstacles.lua:
 * traffic signal 2 s, stop 2 s, give way 1 s; bicycle.lua; foot.lua). */
static const gp_turn_costs tables[] = {
    {"car", GP_TURN_ANGLE_SIGMOID, 7.5, 1.075, 0, 20.0, 2.0, 2.0, 1.0, 0},
    {"bicycle", GP_TURN_ANGLE_SQUARE, 6.0, 1.4, 1, 20.0, 2.0, 0.0, 0.0, 0},
    {"foot", GP_TURN_ANGLE_NONE, 0.0, 1.0, 0, 2.0, 2.0, 0.0, 0.0, 1},
};

const gp_turn_costs *gp_turn_costs_find(const char *profile) {
    for (size_t i = 0; profile && i < sizeof tables / sizeof tables[0]; i++)
        if (strcmp(tables[i].profile, profile) == 0) return &tables[i];
    return NULL;
}

static int bad_value(double v) { return !isfinite(v) || v < 0 || v > 3600; }

int gp_turn_costs_check(const gp_turn_costs *t, gp_err *err) {
    const char *p = t->profile ? t->profile : "?";
    if (t->angle_model < GP_TURN_ANGLE_NONE || t->angle_model > GP_TURN_ANGLE_SQUARE)
        return gp_err_set(err, GP_EINVAL, "turn costs of profile %s: unknown angle model %d", p,
                          t->angle_model);
    const struct {
        const char *name;
        double v;
    } vals[] = {{"turn_penalty", t->turn_s},
                {"u_turn_penalty", t->u_turn_s},
                {"traffic_signal_penalty", t->signal_s},
                {"stop_penalty", t->stop_s},
                {"give_way_penalty", t->give_way_s}};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (bad_value(vals[i].v))
            return gp_err_set(err, GP_EINVAL,
                              "turn costs of profile %s: %s = %g cannot be applied (expected "
                              "0..3600 seconds)",
                              p, vals[i].name, vals[i].v);
    if (!isfinite(t->bias) || !(t->bias > 0))
        return gp_err_set(err, GP_EINVAL,
                          "turn costs of profile %s: turn_bias = %g cannot be applied (expected "
                          "a positive number)",
                          p, t->bias);
    return GP_OK;
}

double gp_turn_cost_s(const gp_turn_costs *t, double angle, uint32_t roads, int uturn,
                      uint8_t node_flags) {
    double s = 0;
    if (uturn) angle = 180;
    if (node_flags & GP_NODE_SIGNAL) s += t->signal_s;
    if (node_flags & GP_NODE_STOP) s += t->stop_s;
    if (node_flags & GP_NODE_GIVE_WAY) s += t->give_way_s;
    if (t->every_turn || roads > 2 || uturn) {
        if (t->angle_model == GP_TURN_ANGLE_SIGMOID) {
            double b = t->bias;
            s += angle >= 0 ? t->turn_s / (1 + exp(-((13 / b) * angle / 180 - 6.5 * b)))
                            : t->turn_s / (1 + exp(-((13 * b) * -angle / 180 - 6.5 / b)));
        } else if (t->angle_model == GP_TURN_ANGLE_SQUARE) {
            double x = angle / 90;
            s += angle >= 0 ? x * x * t->turn_s / t->bias : x * x * t->turn_s * t->bias;
        }
    }
    if (uturn) s += t->u_turn_s;
    if (t->signal_replaces && (node_flags & GP_NODE_SIGNAL)) s = t->signal_s;
    return s;
}

/* Bearing (degrees clockwise from north) from (x1, y1) to (x2, y2), lon/lat; NAN when equal. */
static double bearing(double x1, double y1, double x2, double y2) {
    double dx = (x2 - x1) * cos((y1 + y2) * 0.5 * M_PI / 180), dy = y2 - y1;
    if (dx == 0 && dy == 0) return NAN;
    return atan2(dx, dy) * 180 / M_PI;
}

/* Bearings of the first (out) and last (in) segment of every arc. */
static void arc_bearings(const gp_graph *g, float *first, float *last) {
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            const double *sx, *sy;
            uint32_t k = gp_graph_arc_shape(g, a, &sx, &sy);
            double fx = k ? sx[0] : g->lon[v], fy = k ? sy[0] : g->lat[v];
            double lx = k ? sx[k - 1] : g->lon[u], ly = k ? sy[k - 1] : g->lat[u];
            first[a] = (float)bearing(g->lon[u], g->lat[u], fx, fy);
            last[a] = (float)bearing(lx, ly, g->lon[v], g->lat[v]);
        }
}

typedef struct orig_ix {
    int64_t orig;
    uint32_t v;
} orig_ix;

static int cmp_orig(const void *a, const void *b) {
    const orig_ix *x = a, *y = b;
    if (x->orig != y->orig) return x->orig < y->orig ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Roads meeting at each node: distinct neighbours (by original id) over the arcs in and out of
 * the node and of its copies. 0 on success, -1 out of memory. */
static int count_roads(const gp_graph *g, uint32_t *roads) {
    const uint32_t n = g->n;
    orig_ix *ix = malloc(sizeof *ix * n);
    uint64_t cap = 64;
    int64_t *nb = malloc(sizeof *nb * cap);
    if (!ix || !nb) goto oom;
    for (uint32_t v = 0; v < n; v++) ix[v] = (orig_ix){gp_graph_orig_id(g, v), v};
    if (g->osm_id) qsort(ix, n, sizeof *ix, cmp_orig);
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && ix[j].orig == ix[i].orig) j++;
        uint64_t k = 0;
        for (uint32_t q = i; q < j; q++) {
            uint32_t v = ix[q].v;
            uint64_t need = k + (g->row[v + 1] - g->row[v]) + (g->rrow[v + 1] - g->rrow[v]);
            if (need > cap) {
                while (cap < need) cap *= 2;
                int64_t *t = realloc(nb, sizeof *nb * cap);
                if (!t) goto oom;
                nb = t;
            }
            for (uint32_t a = g->row[v]; a < g->row[v + 1]; a++)
                nb[k++] = gp_graph_orig_id(g, g->col[a]);
            for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++)
                nb[k++] = gp_graph_orig_id(g, g->rcol[a]);
        }
        qsort(nb, k, sizeof *nb, cmp_i64);
        uint32_t d = 0;
        for (uint64_t q = 0; q < k; q++)
            if (!q || nb[q] != nb[q - 1]) d++;
        for (uint32_t q = i; q < j; q++) roads[ix[q].v] = d;
        i = j;
    }
    free(ix);
    free(nb);
    return 0;
oom:
    free(ix);
    free(nb);
    return -1;
}

/* Is b (out of head(a)) arc a driven back: to a's tail (or a copy of it made for turn
 * restrictions, which gp_graph_reverse_arc does not see) along the same shape points reversed? */
static int is_u_turn(const gp_graph *g, const uint32_t *tail, uint32_t a, uint32_t b) {
    if (gp_graph_orig_id(g, g->col[b]) != gp_graph_orig_id(g, tail[a])) return 0;
    const double *ax, *ay, *bx, *by;
    uint32_t k = gp_graph_arc_shape(g, a, &ax, &ay);
    if (gp_graph_arc_shape(g, b, &bx, &by) != k) return 0;
    for (uint32_t i = 0; i < k; i++)
        if (bx[i] != ax[k - 1 - i] || by[i] != ay[k - 1 - i]) return 0;
    return 1;
}

static uint32_t to_units(const gp_graph *g, double s) {
    double u = s / g->unit_s * g->scale;
    return u <= 0 ? 0 : (uint32_t)llround(u);
}

gp_turns *gp_turns_build(const gp_graph *g, const gp_turn_costs *t, gp_err *err) {
    double t0 = gp_now();
    if (gp_turn_costs_check(t, err)) return NULL;
    if (!g->lon || !g->lat) {
        gp_err_set(err, GP_EINVAL, "graph %s: turn costs need coordinates", g->source);
        return NULL;
    }
    if (!(g->unit_s > 0)) {
        gp_err_set(err, GP_EINVAL, "graph %s: turn costs need travel-time weights (unit %s)",
                   g->source, g->unit_name);
        return NULL;
    }
    const uint32_t n = g->n, m = g->m;
    gp_turns *T = calloc(1, sizeof *T);
    float *bfirst = malloc(sizeof *bfirst * (m ? m : 1));
    float *blast = malloc(sizeof *blast * (m ? m : 1));
    uint32_t *roads = malloc(sizeof *roads * n);
    uint32_t *tail = malloc(sizeof *tail * (m ? m : 1));
    gp_graph *tg = calloc(1, sizeof *tg);
    if (!T || !bfirst || !blast || !roads || !tail || !tg) goto oom;
    arc_bearings(g, bfirst, blast);
    if (count_roads(g, roads)) goto oom;
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) tail[a] = u;

            /* allowed turns a -> b: every b out of head(a) but the U-turn, which only a dead end (one
     * road) or a way with no other continuation allows */
#define ALLOWED(a, b, v)                                                                           \
    (roads[v] <= 1 || g->row[(v) + 1] - g->row[v] == 1 || !is_u_turn(g, tail, a, b))
    tg->n = m;
    tg->row = malloc(sizeof *tg->row * ((size_t)m + 1));
    if (!tg->row) goto oom;
    uint64_t cnt = 0;
    for (uint32_t a = 0; a < m; a++) {
        tg->row[a] = (uint32_t)cnt;
        uint32_t v = g->col[a];
        for (uint32_t b = g->row[v]; b < g->row[v + 1]; b++) cnt += ALLOWED(a, b, v);
        if (cnt > UINT32_MAX - 1) {
            gp_err_set(err, GP_ETOOBIG,
                       "graph %s: the turn graph would have over 2^32 - 1 turns (%u road arcs)",
                       g->source, m);
            goto fail;
        }
    }
    tg->row[m] = (uint32_t)cnt;
    tg->m = (uint32_t)cnt;
    tg->col = malloc(sizeof *tg->col * (cnt ? cnt : 1));
    tg->w = malloc(sizeof *tg->w * (cnt ? cnt : 1));
    tg->ext = malloc(sizeof *tg->ext * (m ? m : 1));
    if (!tg->col || !tg->w || !tg->ext) goto oom;
    uint64_t k = 0, uturns = 0;
    for (uint32_t a = 0; a < m; a++) {
        tg->ext[a] = a;
        uint32_t v = g->col[a];
        uint8_t fl = g->node_flags ? g->node_flags[v] : 0;
        for (uint32_t b = g->row[v]; b < g->row[v + 1]; b++) {
            if (!ALLOWED(a, b, v)) continue;
            int ut = is_u_turn(g, tail, a, b);
            uturns += ut;
            double ang = 0;
            if (!isnan(blast[a]) && !isnan(bfirst[b])) {
                ang = fmod((double)bfirst[b] - (double)blast[a] + 540.0, 360.0) - 180.0;
                if (ang == -180) ang = 180;
            }
            uint64_t w = (uint64_t)to_units(g, gp_turn_cost_s(t, ang, roads[v], ut, fl)) + g->w[b];
            if (w > UINT32_MAX) {
                gp_err_set(err, GP_ETOOBIG, "graph %s: a turn cost over 2^32 - 1 units", g->source);
                goto fail;
            }
            tg->col[k] = b;
            tg->w[k++] = (uint32_t)w;
        }
    }
#undef ALLOWED
    free(bfirst);
    free(blast);
    free(roads);
    free(tail);
    bfirst = blast = NULL;
    roads = tail = NULL;
    if (g->osm_id) { /* the copies, by original id */
        uint32_t c = 0;
        for (uint32_t v = 0; v < n; v++) c += g->osm_id[v] != g->ext[v];
        orig_ix *cx = malloc(sizeof *cx * (c ? c : 1));
        T->copy_orig = malloc(sizeof *T->copy_orig * (c ? c : 1));
        T->copy_node = malloc(sizeof *T->copy_node * (c ? c : 1));
        if (!cx || !T->copy_orig || !T->copy_node) {
            free(cx);
            goto oom;
        }
        c = 0;
        for (uint32_t v = 0; v < n; v++)
            if (g->osm_id[v] != g->ext[v]) cx[c++] = (orig_ix){g->osm_id[v], v};
        qsort(cx, c, sizeof *cx, cmp_orig);
        for (uint32_t i = 0; i < c; i++) T->copy_orig[i] = cx[i].orig, T->copy_node[i] = cx[i].v;
        T->ncopies = c;
        free(cx);
    }
    tg->scale = g->scale;
    gp_graph_set_unit(tg, g->unit_name, g->unit_s);
    /* no profile: the turn graph has no turn graph of its own */
    char src[600];
    snprintf(src, sizeof src, "turns:%s", g->version);
    T->tg = gp_graph_complete(tg, src, "turns", 1, err);
    tg = NULL; /* freed by gp_graph_complete on failure */
    if (!T->tg) goto fail;
    T->costs = t;
    T->u_turns = uturns;
    T->build_s = gp_now() - t0;
    return T;
oom:
    gp_err_set(err, GP_ENOMEM, "graph %s: out of memory for the turn graph (%u road arcs)",
               g->source, m);
fail:
    free(bfirst);
    free(blast);
    free(roads);
    free(tail);
    if (tg) gp_graph_destroy(tg);
    if (T) {
        free(T->copy_orig);
        free(T->copy_node);
    }
    free(T);
    return NULL;
}

/* The turn graph's weights over the road weights of g, from the base turn graph's (base road
 * weights bw): only the turns onto a road arc whose weight differs from the base's change (turn
 * cost + w(b)): rows copied, those turns patched. */
typedef struct rew_job {
    const gp_graph *btg;
    const uint32_t *bw, *nw; /* road weights: base, new */
    uint32_t *w, *rw;
    int overflow; /* a turn's weight over 2^32 - 1 (atomic) */
} rew_job;

static void rew_copy(void *jv, uint64_t lo, uint64_t hi) {
    rew_job *j = jv;
    memcpy(j->w + lo, j->btg->w + lo, (size_t)(hi - lo) * sizeof *j->w);
    memcpy(j->rw + lo, j->btg->rw + lo, (size_t)(hi - lo) * sizeof *j->rw);
}

/* Road arcs [lo, hi): the turns onto each changed one. A road arc's turns in (reverse order) are
 * its own range of rw; in forward order each is the one entry for it in its tail's row (no
 * parallel turns), so ranges of road arcs write disjoint entries. */
static void rew_patch(void *jv, uint64_t lo, uint64_t hi) {
    rew_job *j = jv;
    const gp_graph *t = j->btg;
    for (uint32_t b = (uint32_t)lo; b < (uint32_t)hi; b++) {
        if (j->nw[b] == j->bw[b]) continue;
        for (uint32_t r = t->rrow[b]; r < t->rrow[b + 1]; r++) {
            uint64_t x = (uint64_t)(t->rw[r] - j->bw[b]) + j->nw[b]; /* turn cost + new w(b) */
            if (x > UINT32_MAX) {
                __atomic_store_n(&j->overflow, 1, __ATOMIC_RELAXED);
                x = UINT32_MAX;
            }
            j->rw[r] = (uint32_t)x;
            uint32_t a = t->rcol[r];
            for (uint32_t k = t->row[a]; k < t->row[a + 1]; k++)
                if (t->col[k] == b) j->w[k] = (uint32_t)x;
        }
    }
}

gp_turns *gp_turns_reweight(const gp_turns *base, const gp_graph *g, gp_err *err) {
    double t0 = gp_now();
    const gp_graph *btg = gp_graph_owner(base->tg), *bg = gp_graph_owner(g);
    const uint32_t n = btg->n, m = btg->m;
    if (n != g->m) {
        gp_err_set(err, GP_EINVAL, "graph %s: its turn graph is of another graph", g->source);
        return NULL;
    }
    gp_turns *T = calloc(1, sizeof *T);
    uint32_t *w = malloc(sizeof *w * (m ? m : 1)), *rw = malloc(sizeof *rw * (m ? m : 1));
    if (!T || !w || !rw) {
        free(T);
        free(w);
        free(rw);
        gp_err_set(err, GP_ENOMEM, "out of memory for a new version of the turn graph");
        return NULL;
    }
    /* turn cost of tg arc k = base tg weight - base road weight of its head (built so: no
     * wrap-around), so the new weight is the base's plus the head's change */
    rew_job j = {btg, bg->w, g->w, w, rw, 0};
    gp_parallel_for(m, m >= (1u << 20) ? 0 : 1, rew_copy, &j);
    gp_parallel_for(n, n >= (1u << 20) ? 0 : 1, rew_patch, &j);
    if (j.overflow) {
        free(T);
        free(w);
        free(rw);
        gp_err_set(err, GP_ETOOBIG, "graph %s: a turn cost over 2^32 - 1 units", g->source);
        return NULL;
    }
    /* the version follows the road graph's (the same road weights, the same turn weights; the
     * base's own, the base's version): no pass over the turn weights */
    uint64_t h = g->hash == bg->hash ? btg->hash : btg->hash ^ g->hash ^ 0x7475726e73ULL;
    T->tg = gp_graph_reweight_versioned(btg, w, rw, h, err);
    if (!T->tg) {
        free(T);
        return NULL;
    }
    T->base = base->base ? (const gp_turns *)base->base : base;
    T->costs = base->costs;
    T->u_turns = base->u_turns;
    T->ncopies = base->ncopies;
    T->copy_orig = base->copy_orig; /* the base's (T->base keeps them) */
    T->copy_node = base->copy_node;
    T->build_s = gp_now() - t0;
    return T;
}

uint32_t gp_turns_copies(const gp_turns *t, const gp_graph *g, uint32_t v, uint32_t *first) {
    *first = 0;
    if (!t->ncopies) return 0;
    int64_t o = gp_graph_orig_id(g, v);
    uint32_t lo = 0, hi = t->ncopies;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->copy_orig[mid] < o) lo = mid + 1;
        else hi = mid;
    }
    uint32_t e = lo;
    while (e < t->ncopies && t->copy_orig[e] == o) e++;
    *first = lo;
    return e - lo;
}

void gp_turns_free(void *turns) {
    gp_turns *T = turns;
    if (!T) return;
    gp_graph_unref(T->tg);
    if (!T->base) {
        free(T->copy_orig);
        free(T->copy_node);
    }
    free(T);
}

uint64_t gp_turns_memory(const gp_turns *t) {
    if (!t || !t->tg) return 0;
    if (t->tg->base) return (uint64_t)t->tg->m * 8;
    return gp_graph_memory(t->tg);
}
