/* turns.c - the turn-expanded graph of a road graph and the profiles' turn-cost tables
 * (graph/turns.h is the contract).
 *
 * Build: the bearing of each arc's first and last segment, the number of roads at each node
 * (counted over a node and its copies made for turn restrictions, by distinct neighbour), the
 * opposite arc of each arc (U-turns); then one CSR row per road arc a listing the allowed turns
 * a -> b, b ascending, so the rows are sorted as gp_graph_complete expects.
 */
#include "graph/turns.h"

#include "graph/parallel.h"

#include "graph/graph_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OSRM v6 profiles' values (car.lua: turn_penalty, turn_bias, u_turn_penalty; lib/obstacles.lua:
 * traffic signal 2 s, stop 2 s, give way 1 s; bicycle.lua; foot.lua). */
static const gp_turn_costs tables[] = {
    {"car", GP_TURN_ANGLE_SIGMOID, 7.5, 1.075, 0, 20.0, 2.0, 2.0, 1.0, 0},
    {"truck", GP_TURN_ANGLE_SIGMOID, 7.5, 1.075, 0, 20.0, 2.0, 2.0, 1.0, 0}, /* as car's */
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

/* ---- turn restrictions: the automaton over the restrictions' arc sequences ----------------
 * States: 0 .. m - 1 the road arcs (a drive whose last arc is a and whose history matches no
 * longer prefix), m + j the explicit states, prefixes a_0 .. a_i (i >= 1) of a restriction's
 * from + via arcs (its arcs but the last). fail(q) is the state of the longest proper suffix of
 * q's sequence (Aho-Corasick); a road-arc state's is none. A rule (state, kind, to arc) says what
 * may follow a drive ending in that state's sequence. */
typedef struct rule {
    uint32_t state, kind, to;
} rule;

typedef struct automaton {
    uint32_t m;                    /* road arcs */
    uint32_t nst, stcap;           /* explicit states */
    uint32_t *parent, *arc, *fail; /* per explicit state */
    uint64_t *hkey;                /* (parent state << 32 | arc) + 1, 0 empty */
    uint32_t *hval;
    uint64_t hmask;
    rule *rules;
    uint64_t nrules;
    uint8_t *has_rule; /* m: road-arc states with rules */
} automaton;

static void automaton_free(automaton *A) {
    if (!A) return;
    free(A->parent);
    free(A->arc);
    free(A->fail);
    free(A->hkey);
    free(A->hval);
    free(A->rules);
    free(A->has_rule);
}

static uint32_t child(const automaton *A, uint32_t q, uint32_t a) {
    uint64_t key = ((uint64_t)q << 32 | a) + 1;
    for (uint64_t h = gp_mix64(key) & A->hmask;; h = (h + 1) & A->hmask) {
        if (!A->hkey[h]) return GP_NONE;
        if (A->hkey[h] == key) return A->hval[h];
    }
}

/* The state after driving a from state q (q == GP_NONE: no history). */
static uint32_t next_state(const automaton *A, uint32_t q, uint32_t a) {
    while (q != GP_NONE) {
        uint32_t c = A->nst ? child(A, q, a) : GP_NONE;
        if (c != GP_NONE) return c;
        q = q < A->m ? GP_NONE : A->fail[q - A->m];
    }
    return a;
}

static int cmp_rule(const void *x, const void *y) {
    const rule *p = x, *q = y;
    if (p->state != q->state) return p->state < q->state ? -1 : 1;
    return p->to < q->to ? -1 : p->to > q->to;
}

/* Builds the automaton of g->restr; 0, or -1 out of memory. Records whose arcs do not chain are
 * counted in *bad and skipped. */
static int automaton_build(const gp_graph *g, automaton *A, uint32_t *bad) {
    memset(A, 0, sizeof *A);
    A->m = g->m;
    *bad = 0;
    uint64_t words = 0, nrec = 0;
    for (uint64_t i = 0; i + 1 < g->restr_len; i += 2 + g->restr[i + 1]) {
        words += g->restr[i + 1];
        nrec++;
    }
    uint64_t hcap = 16;
    while (hcap < 2 * words + 16) hcap *= 2;
    A->hmask = hcap - 1;
    A->hkey = calloc(hcap, sizeof *A->hkey);
    A->hval = malloc(hcap * sizeof *A->hval);
    A->rules = malloc((nrec ? nrec : 1) * sizeof *A->rules);
    A->has_rule = calloc(A->m ? A->m : 1, 1);
    A->stcap = (uint32_t)(words ? words : 1);
    A->parent = malloc(A->stcap * sizeof *A->parent);
    A->arc = malloc(A->stcap * sizeof *A->arc);
    A->fail = malloc(A->stcap * sizeof *A->fail);
    if (!A->hkey || !A->hval || !A->rules || !A->has_rule || !A->parent || !A->arc || !A->fail)
        return -1;
    for (uint64_t i = 0; i + 1 < g->restr_len; i += 2 + g->restr[i + 1]) {
        const uint32_t k = g->restr[i + 1], *r = g->restr + i + 2;
        int ok = k >= 2 && i + 2 + k <= g->restr_len;
        for (uint32_t j = 0; ok && j < k; j++)
            ok = r[j] < g->m && (!j || gp_graph_arc_tail(g, r[j]) == g->col[r[j - 1]]);
        if (!ok) {
            (*bad)++;
            continue;
        }
        uint32_t q = r[0];
        for (uint32_t j = 1; j + 1 < k; j++) { /* the prefix's states */
            uint32_t c = child(A, q, r[j]);
            if (c == GP_NONE) {
                c = A->m + A->nst;
                A->parent[A->nst] = q;
                A->arc[A->nst++] = r[j];
                uint64_t key = ((uint64_t)q << 32 | r[j]) + 1, h = gp_mix64(key) & A->hmask;
                while (A->hkey[h]) h = (h + 1) & A->hmask;
                A->hkey[h] = key;
                A->hval[h] = c;
            }
            q = c;
        }
        A->rules[A->nrules++] = (rule){q, g->restr[i], r[k - 1]};
        if (q < A->m) A->has_rule[q] = 1;
    }
    qsort(A->rules, A->nrules, sizeof *A->rules, cmp_rule);
    /* failure links by depth (a state's suffix states are shorter, so theirs are known) */
    uint32_t *depth = malloc(sizeof *depth * (A->nst ? A->nst : 1)), maxd = 0;
    if (!depth) return -1;
    for (uint32_t j = 0; j < A->nst; j++) { /* parents are made before their children */
        uint32_t p = A->parent[j];
        depth[j] = p < A->m ? 2 : depth[p - A->m] + 1;
        maxd = depth[j] > maxd ? depth[j] : maxd;
    }
    for (uint32_t d = 2; d <= maxd; d++)
        for (uint32_t j = 0; j < A->nst; j++) {
            if (depth[j] != d) continue;
            uint32_t p = A->parent[j];
            A->fail[j] = next_state(A, p < A->m ? GP_NONE : A->fail[p - A->m], A->arc[j]);
        }
    free(depth);
    return 0;
}

/* Rules of state q: rules[*first .. return). */
static uint64_t rules_of(const automaton *A, uint32_t q, uint64_t *first) {
    uint64_t lo = 0, hi = A->nrules;
    if (q < A->m && !A->has_rule[q]) return *first = 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (A->rules[mid].state < q) lo = mid + 1;
        else hi = mid;
    }
    uint64_t e = lo;
    while (e < A->nrules && A->rules[e].state == q) e++;
    *first = lo;
    return e;
}

/* 1 when the turn onto b is forbidden after a drive in state q: a no rule onto b, or only rules
 * none of which is onto b, in q or a suffix state of q. */
static int forbidden(const automaton *A, uint32_t q, uint32_t b) {
    for (; q != GP_NONE; q = q < A->m ? GP_NONE : A->fail[q - A->m]) {
        uint64_t f, e = rules_of(A, q, &f);
        int only = 0, only_b = 0;
        for (uint64_t i = f; i < e; i++) {
            if (A->rules[i].kind == GP_RESTR_NO && A->rules[i].to == b) return 1;
            if (A->rules[i].kind == GP_RESTR_ONLY) {
                only = 1;
                only_b |= A->rules[i].to == b;
            }
        }
        if (only && !only_b) return 1;
    }
    return 0;
}

typedef struct tcol {
    uint32_t col, w;
} tcol;

static int cmp_tcol(const void *x, const void *y) {
    const tcol *p = x, *q = y;
    if (p->col != q->col) return p->col < q->col ? -1 : 1;
    return p->w < q->w ? -1 : p->w > q->w;
}

/* T->xy (turns.h): each tg node's road arc's midpoint, longitude scaled by the cosine of the
 * mean latitude. */
int gp_turns_add_xy(gp_turns *T, const gp_graph *g, gp_err *err) {
    if (!T || T->base || T->xy || !g->lon || !g->lat) return GP_OK; /* (a version: the base's) */
    uint32_t tn = T->tg->n;
    float *xy = malloc(((size_t)tn + 1) * 2 * sizeof *xy);
    uint32_t *tail = malloc(((size_t)g->m + 1) * sizeof *tail);
    if (!xy || !tail) {
        free(xy);
        free(tail);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the turn graph's coordinates");
    }
    double lat0 = 0;
    for (uint32_t v = 0; v < g->n; v++) lat0 += g->lat[v];
    double kx = cos((g->n ? lat0 / g->n : 0) * M_PI / 180);
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) tail[a] = u;
    for (uint32_t x = 0; x < tn; x++) {
        uint32_t a = gp_turns_arc(T, x), s = tail[a], h = g->col[a];
        xy[2 * (size_t)x] = (float)(kx * (g->lon[s] + g->lon[h]) / 2);
        xy[2 * (size_t)x + 1] = (float)((g->lat[s] + g->lat[h]) / 2);
    }
    free(tail);
    T->xy = xy;
    T->tg->cch_xy = xy;
    return GP_OK;
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
    automaton au;
    memset(&au, 0, sizeof au);
    gp_turns *T = calloc(1, sizeof *T);
    float *bfirst = malloc(sizeof *bfirst * (m ? m : 1));
    float *blast = malloc(sizeof *blast * (m ? m : 1));
    uint32_t *roads = malloc(sizeof *roads * n);
    uint32_t *tail = malloc(sizeof *tail * (m ? m : 1));
    gp_graph *tg = calloc(1, sizeof *tg);
    tcol *rowbuf = NULL;
    uint64_t rbcap = 0;
    if (!T || !bfirst || !blast || !roads || !tail || !tg) goto oom;
    arc_bearings(g, bfirst, blast);
    if (count_roads(g, roads)) goto oom;
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) tail[a] = u;
    if (g->restr && automaton_build(g, &au, &T->restr_bad)) goto oom;
    if ((uint64_t)m + au.nst > UINT32_MAX - 1) {
        gp_err_set(err, GP_ETOOBIG, "graph %s: the turn graph would have over 2^32 - 1 nodes",
                   g->source);
        goto fail;
    }
    const uint32_t N = m + au.nst; /* tg nodes: the road arcs, then the restriction states */

    /* allowed turns a -> b: every b out of head(a) but the U-turn, which only a dead end (one
     * road) or a way with no other continuation allows */
#define ALLOWED(a, b, v)                                                                           \
    (roads[v] <= 1 || g->row[(v) + 1] - g->row[v] == 1 || !is_u_turn(g, tail, a, b))
    tg->n = N;
    tg->row = malloc(sizeof *tg->row * ((size_t)N + 1));
    tg->ext = malloc(sizeof *tg->ext * (N ? N : 1));
    uint64_t ccap = (uint64_t)m + 16, k = 0, uturns = 0, removed = 0;
    tg->col = malloc(sizeof *tg->col * ccap);
    tg->w = malloc(sizeof *tg->w * ccap);
    if (!tg->row || !tg->ext || !tg->col || !tg->w) goto oom;
    for (uint32_t q = 0; q < N; q++) {
        const uint32_t a = q < m ? q : au.arc[q - m], v = g->col[a];
        tg->row[q] = (uint32_t)k;
        tg->ext[q] = q;
        uint8_t fl = g->node_flags ? g->node_flags[v] : 0;
        uint32_t deg = g->row[v + 1] - g->row[v], nr = 0;
        if (gp_grow((void **)&rowbuf, &rbcap, deg ? deg : 1, sizeof *rowbuf)) goto oom;
        int sorted = 1;
        for (uint32_t b = g->row[v]; b < g->row[v + 1]; b++) {
            if (!ALLOWED(a, b, v)) continue;
            if (au.nrules && forbidden(&au, q, b)) {
                removed++;
                continue;
            }
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
            uint32_t to = au.nst ? next_state(&au, q, b) : b;
            if (nr && to < rowbuf[nr - 1].col) sorted = 0;
            rowbuf[nr++] = (tcol){to, (uint32_t)w};
        }
        if (!sorted) qsort(rowbuf, nr, sizeof *rowbuf, cmp_tcol); /* rows sorted by head */
        if (k + nr > UINT32_MAX - 1) {
            gp_err_set(err, GP_ETOOBIG,
                       "graph %s: the turn graph would have over 2^32 - 1 turns (%u road arcs)",
                       g->source, m);
            goto fail;
        }
        if (k + nr > ccap) {
            while (ccap < k + nr) ccap *= 2;
            uint32_t *c2 = realloc(tg->col, sizeof *c2 * ccap);
            if (!c2) goto oom;
            tg->col = c2;
            uint32_t *w2 = realloc(tg->w, sizeof *w2 * ccap);
            if (!w2) goto oom;
            tg->w = w2;
        }
        for (uint32_t i = 0; i < nr; i++) tg->col[k] = rowbuf[i].col, tg->w[k++] = rowbuf[i].w;
    }
#undef ALLOWED
    tg->row[N] = (uint32_t)k;
    tg->m = (uint32_t)k;
    T->narcs = m;
    T->ndups = au.nst;
    T->restr_turns = removed;
    if (au.nst) { /* the duplicates: their road arcs, and the index by road arc */
        T->dup_arc = au.arc;
        au.arc = NULL;
        T->dup_by_arc = malloc(sizeof *T->dup_by_arc * au.nst);
        orig_ix *dx = malloc(sizeof *dx * au.nst);
        if (!T->dup_by_arc || !dx) {
            free(dx);
            goto oom;
        }
        for (uint32_t j = 0; j < au.nst; j++) dx[j] = (orig_ix){T->dup_arc[j], m + j};
        qsort(dx, au.nst, sizeof *dx, cmp_orig);
        for (uint32_t j = 0; j < au.nst; j++) T->dup_by_arc[j] = dx[j].v;
        free(dx);
    }
    automaton_free(&au);
    memset(&au, 0, sizeof au);
    free(rowbuf);
    free(bfirst);
    free(blast);
    free(roads);
    free(tail);
    rowbuf = NULL;
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
    automaton_free(&au);
    free(rowbuf);
    free(bfirst);
    free(blast);
    free(roads);
    free(tail);
    if (tg) gp_graph_destroy(tg);
    if (T) {
        free(T->copy_orig);
        free(T->copy_node);
        free(T->dup_arc);
        free(T->dup_by_arc);
    }
    free(T);
    return NULL;
}

/* A turn cost plus the weight of the arc turned into: a closed arc (GP_W_CLOSED, a per-request
 * metric) keeps every turn into it closed; other sums saturate below GP_W_CLOSED. */
static inline uint32_t turn_plus(uint32_t turn, uint32_t w) {
    if (w == GP_W_CLOSED) return GP_W_CLOSED;
    uint64_t s = (uint64_t)turn + w;
    return s >= GP_W_CLOSED ? GP_W_CLOSED - 1 : (uint32_t)s;
}

/* The turn graph's weights over the road weights of g, from the base turn graph's (base road
 * weights bw): only the turns onto a turn-graph node whose road arc's weight differs from the
 * base's change (turn cost + w(b)): rows copied, those turns patched. */
typedef struct rew_job {
    const gp_turns *base;
    const gp_graph *btg;
    const uint32_t *bw, *nw; /* road weights: base, new */
    const uint32_t *arcs;    /* the road arcs to look at (NULL: every turn-graph node) */
    uint32_t *w, *rw;
    uint32_t max; /* the largest weight written (atomic) */
} rew_job;

static void rew_max(rew_job *j, uint32_t mw) {
    uint32_t cur = __atomic_load_n(&j->max, __ATOMIC_RELAXED);
    while (mw > cur &&
           !__atomic_compare_exchange_n(&j->max, &cur, mw, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* The turns onto turn-graph node x (road arc b) for b's new weight. A node's turns in (reverse
 * order) are its own range of rw; in forward order each is the one entry for it in its tail's row
 * (no parallel turns), so different nodes write disjoint entries. */
static uint32_t patch_node(rew_job *j, uint32_t x, uint32_t b) {
    const gp_graph *t = j->btg;
    uint32_t mw = 0;
    for (uint32_t r = t->rrow[x]; r < t->rrow[x + 1]; r++) {
        uint32_t v = turn_plus(t->rw[r] - j->bw[b], j->nw[b]); /* turn cost + new w(b) */
        j->rw[r] = v;
        mw = v > mw ? v : mw;
        uint32_t a = t->rcol[r];
        for (uint32_t k = t->row[a]; k < t->row[a + 1]; k++)
            if (t->col[k] == x) j->w[k] = v;
    }
    return mw;
}

/* Turn-graph nodes [lo, hi) (road arcs, and the copies restrictions made of them): the turns onto
 * each whose road arc changed. */
static void rew_patch(void *jv, uint64_t lo, uint64_t hi) {
    rew_job *j = jv;
    uint32_t mw = 0, v;
    for (uint32_t x = (uint32_t)lo; x < (uint32_t)hi; x++) {
        uint32_t b = gp_turns_arc(j->base, x);
        if (j->nw[b] != j->bw[b] && (v = patch_node(j, x, b)) > mw) mw = v;
    }
    rew_max(j, mw);
}

/* Road arcs arcs[lo, hi) (distinct): the turns onto each one's turn-graph nodes (the arc's own and
 * its duplicates) when its weight changed. */
static void rew_patch_arcs(void *jv, uint64_t lo, uint64_t hi) {
    rew_job *j = jv;
    uint32_t mw = 0, v;
    for (uint64_t i = lo; i < hi; i++) {
        uint32_t b = j->arcs[i];
        if (j->nw[b] == j->bw[b]) continue;
        if ((v = patch_node(j, b, b)) > mw) mw = v;
        const uint32_t *dup;
        uint32_t nd = gp_turns_dups(j->base, b, &dup);
        for (uint32_t d = 0; d < nd; d++)
            if ((v = patch_node(j, dup[d], b)) > mw) mw = v;
    }
    rew_max(j, mw);
}

/* The tails of the turns the new turn graph tg changed against its base btg: those onto the
 * nodes of the road arcs whose weight changed (bw base, nw new; among arcs[0..narcs), or all)
 * and onto their duplicates (gp_graph diff_tails; unknown when out of memory). */
static void diff_tails(const gp_turns *base, const gp_graph *btg, gp_graph *tg, const uint32_t *bw,
                       const uint32_t *nw, const uint32_t *arcs, uint32_t narcs) {
    uint32_t cap = 1024, nh = 0, *h = malloc((size_t)cap * 4);
    uint32_t nb = arcs ? narcs : base->narcs;
    for (uint32_t i = 0; h && i < nb; i++) {
        uint32_t b = arcs ? arcs[i] : i;
        if (nw[b] == bw[b]) continue;
        const uint32_t *dup;
        uint32_t nd = gp_turns_dups(base, b, &dup);
        if (nh + nd + 1 > cap) {
            uint32_t *x = cap < UINT32_MAX / 4 - nd ? realloc(h, ((size_t)cap * 2 + nd) * 4) : NULL;
            if (!x) {
                free(h);
                h = NULL;
                break;
            }
            h = x, cap = cap * 2 + nd;
        }
        h[nh++] = b;
        for (uint32_t d = 0; d < nd; d++) h[nh++] = dup[d];
    }
    if (h) tg->diff_tails = gp_graph_tails_union(btg, h, nh, NULL, 0, NULL, 0, &tg->ndiff_tails);
    free(h);
}

static gp_turns *reweight(const gp_turns *base, const gp_graph *g, const uint32_t *arcs,
                          uint32_t narcs, gp_err *err) {
    double t0 = gp_now();
    const gp_graph *btg = gp_graph_owner(base->tg), *bg = gp_graph_owner(g);
    const uint32_t n = btg->n;
    if (base->narcs != g->m) {
        gp_err_set(err, GP_EINVAL, "graph %s: its turn graph is of another graph", g->source);
        return NULL;
    }
    gp_turns *T = calloc(1, sizeof *T);
    uint32_t *w = NULL, *rw = NULL;
    if (!T || gp_weights_dup(btg, &w, &rw, NULL) != 0) {
        free(T);
        gp_err_set(err, GP_ENOMEM, "out of memory for a new version of the turn graph");
        return NULL;
    }
    /* turn cost of tg arc k = base tg weight - base road weight of its head's road arc (built
     * so: no wrap-around), so the new weight is the base's plus the head's change */
    rew_job j = {base, btg, bg->w, g->w, arcs, w, rw, 0};
    if (arcs) gp_parallel_for_dynamic(narcs, narcs >= 4096 ? 0 : 1, 0, rew_patch_arcs, &j);
    else gp_parallel_for(n, n >= (1u << 20) ? 0 : 1, rew_patch, &j);
    /* the version follows the road graph's (the same road weights, the same turn weights; the
     * base's own, the base's version): no pass over the turn weights */
    uint64_t h = g->hash == bg->hash ? btg->hash : btg->hash ^ g->hash ^ 0x7475726e73ULL;
    /* its largest weight at most the base's or the largest patched (graph.h max_w) */
    T->tg =
        gp_graph_reweight_versioned(btg, w, rw, h, j.max > btg->max_w ? j.max : btg->max_w, err);
    if (!T->tg) {
        free(T);
        return NULL;
    }
    gp_graph *ntg = T->tg;
    diff_tails(base, btg, ntg, bg->w, g->w, arcs, narcs);
    *T = *base; /* costs, counts, copies and duplicates: the base's (T->base keeps them) */
    T->tg = ntg;
    ntg->cch_xy = T->xy;
    T->base = base->base ? (const gp_turns *)base->base : base;
    T->build_s = gp_now() - t0;
    return T;
}

gp_turns *gp_turns_reweight(const gp_turns *base, const gp_graph *g, gp_err *err) {
    /* a version that lists its arcs (a cost change's, gp_graph diff_arcs): over those alone */
    if (g->base && g->diff_arcs) return reweight(base, g, g->diff_arcs, g->ndiff_arcs, err);
    return reweight(base, g, NULL, 0, err);
}

gp_turns *gp_turns_reweight_arcs(const gp_turns *base, const gp_graph *g, const uint32_t *arcs,
                                 uint32_t narcs, gp_err *err) {
    return reweight(base, g, arcs, narcs, err);
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

uint32_t gp_turns_dups(const gp_turns *t, uint32_t a, const uint32_t **nodes) {
    *nodes = t->dup_by_arc;
    if (!t->ndups) return 0;
    uint32_t lo = 0, hi = t->ndups;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (gp_turns_arc(t, t->dup_by_arc[mid]) < a) lo = mid + 1;
        else hi = mid;
    }
    uint32_t e = lo;
    while (e < t->ndups && gp_turns_arc(t, t->dup_by_arc[e]) == a) e++;
    *nodes = t->dup_by_arc + lo;
    return e - lo;
}

void gp_turns_free(void *turns) {
    gp_turns *T = turns;
    if (!T) return;
    /* tg may outlive T (another reference): it must not keep T's coordinates */
    if (T->tg && T->tg->cch_xy == T->xy) T->tg->cch_xy = NULL;
    gp_graph_unref(T->tg);
    if (!T->base) {
        free(T->xy);
        free(T->copy_orig);
        free(T->copy_node);
        free(T->dup_arc);
        free(T->dup_by_arc);
    }
    free(T);
}

uint64_t gp_turns_memory(const gp_turns *t) {
    if (!t || !t->tg) return 0;
    if (t->tg->base) return (uint64_t)t->tg->m * 8;
    return gp_graph_memory(t->tg) + (uint64_t)t->ndups * 8 + /* + dup_arc, dup_by_arc */
           (t->xy ? (uint64_t)t->tg->n * 8 : 0);
}
