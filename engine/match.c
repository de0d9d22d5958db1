/* match.c - map matching (engine/match.h is the contract): candidates per point, bounded
 * one-to-many searches between the candidates of consecutive points, Viterbi, splitting.
 *
 * A candidate is a snapped position (engine/snap.h) driven either way where its road allows: a
 * directed state (arc, fraction along it). A search from a candidate's states runs Dijkstra by
 * weight on the road graph, or on its turn graph (nodes = road arcs, graph/turns.h) when the graph
 * has turn costs, carrying the metres of the least-weight path; a target state (arc b, fraction q)
 * is reached at the tail of b plus q of it (on the turn graph: through a turn into b), or directly
 * along the same arc. Visited nodes live in a small hash map, so a bounded search costs what it
 * visits whatever the graph's size.
 *
 * gp_match_trace is gp_match_prepare (candidates, emissions, each step's bounds) then gp_match_run
 * (Viterbi). The searches of consecutive steps can run before Viterbi into the prepared trace's
 * table (gp_match_fill here, gp_match_fill_cuda on the GPU, engine/match_cuda.c): the same searches
 * with the same bounds, so the same answers; steps after a dropped point search during Viterbi.
 */
#include "engine/match.h"

#include "graph/spatial.h"
#include "graph/turns.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void gp_match_opts_default(gp_match_opts *o) {
    o->sigma_m = 5;
    o->radius_mult = 3;
    o->max_radius_m = 0;
    o->beta = 10;
    o->max_speed_mps = 50;
    o->max_delta_m = 2000;
    o->max_candidates = 8;
    o->max_broken = 10;
    o->split_gaps = 1;
}

void gp_match_free(gp_match *m) {
    if (!m) return;
    free(m->matching);
    free(m->alternatives);
    free(m->snap);
    free(m->confidence);
    free(m->length_m);
    memset(m, 0, sizeof *m);
}

/* ---- the bounded search ---- */
typedef struct hitem {
    double d;
    uint32_t v;
} hitem;

/* A search target's directed states (states()), and on the road graph each state's arc's tail. */
typedef struct tstates {
    uint32_t n, arc[2], tail[2];
    double f[2];
} tstates;

typedef struct search {
    const gp_graph *g, *tg; /* tg: the turn graph, or NULL */
    const gp_turns *turns;  /* with tg: its node -> road arc map (gp_turns_arc) */
    uint32_t *key;          /* cap slots, GP_NONE empty */
    double *d, *m;
    double *len;       /* on the turn graph: the metres of the node's road arc, < 0 not yet */
    uint32_t *pn, *pa; /* parent node, arc driven into the node (road arc) */
    uint8_t *done;
    uint32_t cap, used;
    uint32_t *touched;
    hitem *h;
    size_t nh, hcap;
    tstates *ts; /* search_run's targets' states, tcap of them */
    uint32_t tcap;
} search;

static void search_free(search *s) {
    if (!s) return;
    free(s->key);
    free(s->d);
    free(s->m);
    free(s->len);
    free(s->pn);
    free(s->pa);
    free(s->done);
    free(s->touched);
    free(s->h);
    free(s->ts);
}

static int search_alloc(search *s, uint32_t cap) {
    s->key = malloc(sizeof *s->key * cap);
    s->d = malloc(sizeof *s->d * cap);
    s->m = malloc(sizeof *s->m * cap);
    s->len = malloc(sizeof *s->len * cap);
    s->pn = malloc(sizeof *s->pn * cap);
    s->pa = malloc(sizeof *s->pa * cap);
    s->done = malloc(cap);
    s->touched = malloc(sizeof *s->touched * cap);
    if (!s->key || !s->d || !s->m || !s->len || !s->pn || !s->pa || !s->done || !s->touched)
        return -1;
    for (uint32_t i = 0; i < cap; i++) s->key[i] = GP_NONE;
    s->cap = cap;
    s->used = 0;
    return 0;
}

/* s searches g (on its turn graph when g has turn costs). */
static void search_on(search *s, const gp_graph *g) {
    const gp_turns *turns = g->turns;
    s->g = g;
    s->turns = turns;
    s->tg = turns ? turns->tg : NULL;
}

static void search_reset(search *s) {
    for (uint32_t i = 0; i < s->used; i++) s->key[s->touched[i]] = GP_NONE;
    s->used = 0;
    s->nh = 0;
}

static inline uint32_t slot_of(const search *s, uint32_t v) {
    /* Fibonacci hashing in 64 bits: no unsigned wrap-around */
    uint32_t i = (uint32_t)(((uint64_t)v * 2654435761u) >> 13) & (s->cap - 1);
    while (s->key[i] != GP_NONE && s->key[i] != v) i = (i + 1) & (s->cap - 1);
    return i;
}

/* The slot of v, created (label infinite) when absent; GP_NONE when out of memory. */
static uint32_t slot_get(search *s, uint32_t v) {
    if (2 * (s->used + 1) > s->cap) {
        search big;
        memset(&big, 0, sizeof big);
        if (search_alloc(&big, s->cap * 2)) {
            search_free(&big);
            return GP_NONE;
        }
        for (uint32_t i = 0; i < s->used; i++) {
            uint32_t o = s->touched[i], k = slot_of(&big, s->key[o]);
            big.key[k] = s->key[o];
            big.d[k] = s->d[o];
            big.m[k] = s->m[o];
            big.len[k] = s->len[o];
            big.pn[k] = s->pn[o];
            big.pa[k] = s->pa[o];
            big.done[k] = s->done[o];
            big.touched[big.used++] = k;
        }
        free(s->key);
        free(s->d);
        free(s->m);
        free(s->len);
        free(s->pn);
        free(s->pa);
        free(s->done);
        free(s->touched);
        s->key = big.key;
        s->d = big.d;
        s->m = big.m;
        s->len = big.len;
        s->pn = big.pn;
        s->pa = big.pa;
        s->done = big.done;
        s->touched = big.touched;
        s->cap = big.cap;
    }
    uint32_t i = slot_of(s, v);
    if (s->key[i] == GP_NONE) {
        s->key[i] = v;
        s->d[i] = INFINITY;
        s->m[i] = INFINITY;
        s->len[i] = -1;
        s->done[i] = 0;
        s->touched[s->used++] = i;
    }
    return i;
}

static int heap_push(search *s, double d, uint32_t v) {
    if (s->nh == s->hcap) {
        size_t nc = s->hcap ? 2 * s->hcap : 256;
        hitem *h = realloc(s->h, sizeof *h * nc);
        if (!h) return -1;
        s->h = h;
        s->hcap = nc;
    }
    size_t i = s->nh++;
    while (i > 0 && s->h[(i - 1) / 2].d > d) {
        s->h[i] = s->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->h[i] = (hitem){d, v};
    return 0;
}

static hitem heap_pop(search *s) {
    hitem top = s->h[0], last = s->h[--s->nh];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nh) break;
        if (c + 1 < s->nh && s->h[c + 1].d < s->h[c].d) c++;
        if (s->h[c].d >= last.d) break;
        s->h[i] = s->h[c];
        i = c;
    }
    if (s->nh) s->h[i] = last;
    return top;
}

/* Relaxes node v (its slot k) to (d, m), reached from node pn through road arc pa; -1 when out of
 * memory. */
static int relax_slot(search *s, uint32_t k, uint32_t v, double d, double m, uint32_t pn,
                      uint32_t pa) {
    if (s->done[k] || d >= s->d[k]) return 0;
    s->d[k] = d;
    s->m[k] = m;
    s->pn[k] = pn;
    s->pa[k] = pa;
    return heap_push(s, d, v);
}

static int relax(search *s, uint32_t v, double d, double m, uint32_t pn, uint32_t pa) {
    uint32_t k = slot_get(s, v);
    return k == GP_NONE ? -1 : relax_slot(s, k, v, d, m, pn, pa);
}

/* A candidate's directed states: (arc, fraction from its tail); up to two. */
static uint32_t states(const gp_graph *g, const gp_snap *c, uint32_t arc[2], double f[2]) {
    (void)g;
    uint32_t k = 0;
    if (c->arc == GP_NONE) return 0;
    arc[k] = c->arc;
    f[k++] = c->frac;
    if (c->rarc != GP_NONE) {
        arc[k] = c->rarc;
        f[k++] = 1 - c->frac;
    }
    return k;
}

static inline double arc_w(const gp_graph *g, uint32_t a) { return (double)g->w[a]; }

static inline double arc_len(const gp_graph *g, uint32_t a) {
    double l = gp_graph_arc_length_m(g, a);
    return isfinite(l) ? l : 0;
}

/* Route metres from candidate src to each of the k candidates tgt (INFINITY when not reached
 * within the bounds): out_m[j], best_w[j] its weight; via[j] (when via is not NULL) the settled
 * node the route to tgt[j] leaves the network at (GP_NONE: directly along one arc) and tarc[j]
 * the arc it ends on. -1 when out of memory. */
static int search_run(search *s, const gp_snap *src, const gp_snap *tgt, uint32_t k, double wbound,
                      double mbound, double *best_w, double *out_m, uint32_t *via, uint32_t *tarc) {
    const gp_graph *g = s->g;
    uint32_t sa[2];
    double sf[2];
    uint32_t ns = states(g, src, sa, sf);
    search_reset(s);
    if (k > s->tcap) { /* the targets' states, once per search (not per node settled) */
        tstates *t = realloc(s->ts, sizeof *t * k);
        if (!t) return -1;
        s->ts = t;
        s->tcap = k;
    }
    for (uint32_t j = 0; j < k; j++) {
        tstates *t = &s->ts[j];
        t->n = states(g, &tgt[j], t->arc, t->f);
        for (uint32_t y = 0; !s->tg && y < t->n; y++) t->tail[y] = gp_graph_arc_tail(g, t->arc[y]);
    }
    for (uint32_t j = 0; j < k; j++) {
        const uint32_t *ta = s->ts[j].arc;
        const double *tf = s->ts[j].f;
        best_w[j] = INFINITY;
        out_m[j] = INFINITY;
        for (uint32_t x = 0; x < ns; x++)
            for (uint32_t y = 0; y < s->ts[j].n; y++)
                if (sa[x] == ta[y] && tf[y] >= sf[x]) {
                    double w = (tf[y] - sf[x]) * arc_w(g, sa[x]);
                    if (w < best_w[j]) {
                        best_w[j] = w;
                        out_m[j] = (tf[y] - sf[x]) * arc_len(g, sa[x]);
                        if (via) via[j] = GP_NONE, tarc[j] = sa[x];
                    }
                }
    }
    for (uint32_t x = 0; x < ns; x++) {
        uint32_t v = s->tg ? sa[x] : g->col[sa[x]];
        if (relax(s, v, (1 - sf[x]) * arc_w(g, sa[x]), (1 - sf[x]) * arc_len(g, sa[x]), GP_NONE,
                  sa[x]))
            return -1;
    }
    while (s->nh) {
        hitem it = heap_pop(s);
        uint32_t ks = slot_of(s, it.v);
        if (s->done[ks] || it.d > s->d[ks]) continue;
        s->done[ks] = 1;
        if (it.d > wbound) break;
        double worst = 0;
        for (uint32_t j = 0; j < k; j++)
            if (best_w[j] > worst) worst = best_w[j];
        if (it.d >= worst) break; /* every target's value is final */
        double d = it.d, m = s->m[ks];
        if (!s->tg) {
            for (uint32_t j = 0; j < k; j++) { /* targets whose arc leaves v */
                const uint32_t *ta = s->ts[j].arc;
                const double *tf = s->ts[j].f;
                for (uint32_t y = 0; y < s->ts[j].n; y++) {
                    if (s->ts[j].tail[y] != it.v) continue;
                    double w = d + tf[y] * arc_w(g, ta[y]);
                    if (w < best_w[j]) {
                        best_w[j] = w;
                        out_m[j] = m + tf[y] * arc_len(g, ta[y]);
                        if (via) via[j] = it.v, tarc[j] = ta[y];
                    }
                }
            }
            for (uint32_t e = g->row[it.v]; e < g->row[it.v + 1]; e++) {
                double nm = m + arc_len(g, e);
                if (nm > mbound) continue;
                if (relax(s, g->col[e], d + g->w[e], nm, it.v, e)) return -1;
            }
        } else {
            const gp_graph *tg = s->tg;
            for (uint32_t e = tg->row[it.v]; e < tg->row[it.v + 1]; e++) {
                /* tg node b drives road arc ra (b itself, or a restriction's duplicate of it) */
                uint32_t b = tg->col[e], ra = gp_turns_arc(s->turns, b);
                double turn = (double)tg->w[e] - arc_w(g, ra);
                if (turn < 0) turn = 0;
                for (uint32_t j = 0; j < k; j++) { /* a turn into a target's arc */
                    const uint32_t *ta = s->ts[j].arc;
                    const double *tf = s->ts[j].f;
                    for (uint32_t y = 0; y < s->ts[j].n; y++) {
                        if (ta[y] != ra) continue;
                        double w = d + turn + tf[y] * arc_w(g, ra);
                        if (w < best_w[j]) {
                            best_w[j] = w;
                            out_m[j] = m + tf[y] * arc_len(g, ra);
                            if (via) via[j] = it.v, tarc[j] = ra;
                        }
                    }
                }
                /* each road arc's metres once per search (a haversine through its shape) */
                uint32_t kb = slot_get(s, b);
                if (kb == GP_NONE) return -1;
                if (s->done[kb]) continue;
                if (s->len[kb] < 0) s->len[kb] = arc_len(g, ra);
                double nm = m + s->len[kb];
                if (nm > mbound) continue;
                if (relax_slot(s, kb, b, d + tg->w[e], nm, it.v, ra)) return -1;
            }
        }
    }
    return 0;
}

/* ---- candidates ---- */
/* A candidate taken: its road (the arc the segment index names, and the opposite arc), the piece
 * of the arc's polyline it lies on, and once asked for (lo != GP_NONE) its pass through the search
 * circle: pieces lo .. hi, the vertices between them within the radius. */
typedef struct cand_taken {
    uint32_t arc, rarc, piece, lo, hi;
} cand_taken;

typedef struct cand_filter {
    const gp_match_point *p;
    double radius_m;
    double kx, ky;    /* metres per degree of longitude and of latitude at the point */
    cand_taken *skip; /* the candidates already taken */
    uint32_t nskip;
} cand_filter;

/* Vertex i of arc a's polyline (tail t, ns shape points sx / sy): its tail, its shape points, its
 * head. */
static inline void arc_vertex(const gp_graph *g, uint32_t a, uint32_t t, uint32_t ns,
                              const double *sx, const double *sy, uint32_t i, double *lon,
                              double *lat) {
    *lon = i == 0 ? g->lon[t] : i <= ns ? sx[i - 1] : g->lon[g->col[a]];
    *lat = i == 0 ? g->lat[t] : i <= ns ? sy[i - 1] : g->lat[g->col[a]];
}

/* 1 when (lon, lat) lies within f's radius of its point (metres on the local plane: the circle is
 * at most a few hundred metres wide). */
static inline int in_circle(const cand_filter *f, double lon, double lat) {
    double dx = (lon - f->p->lon) * f->kx, dy = (lat - f->p->lat) * f->ky;
    return dx * dx + dy * dy <= f->radius_m * f->radius_m;
}

/* Fills c's pass (c->lo, c->hi): the pieces on from c->piece either way while the vertex between
 * two lies within f's radius (a piece's points lie no farther than its ends, so the road between
 * two pieces stays within the circle when the vertices between them do). */
static void cand_pass(const cand_filter *f, const gp_graph *g, uint32_t tail, cand_taken *c) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, c->arc, &sx, &sy);
    double lon, lat;
    c->lo = c->hi = c->piece;
    for (; c->lo > 0; c->lo--) {
        arc_vertex(g, c->arc, tail, ns, sx, sy, c->lo, &lon, &lat);
        if (!in_circle(f, lon, lat)) break;
    }
    for (; c->hi < ns; c->hi++) {
        arc_vertex(g, c->arc, tail, ns, sx, sy, c->hi + 1, &lon, &lat);
        if (!in_circle(f, lon, lat)) break;
    }
}

/* 1 when the piece of c's arc (tail t) that starts at (a_lon, a_lat) lies on c's pass (a road
 * through the same point twice, its pieces there taken for the pass's, keeps one candidate). */
static int on_pass(const gp_graph *g, const cand_taken *c, uint32_t t, double a_lon, double a_lat) {
    const double *sx, *sy;
    gp_graph_arc_shape(g, c->arc, &sx, &sy);
    for (uint32_t i = c->lo; i <= c->hi; i++) /* piece i starts at vertex i (not the head) */
        if ((i ? sx[i - 1] : g->lon[t]) == a_lon && (i ? sy[i - 1] : g->lat[t]) == a_lat) return 1;
    return 0;
}

/* A piece may give a candidate unless its road already gave one on the same pass through the
 * search circle: a road that leaves the circle and comes back (a hairpin, a loop) gives a
 * candidate per pass, the nearest point of each, since positions on two passes lie far apart
 * along the road (the nearer pass alone would make a point driven on the other one cost a
 * transition through the whole bend, or none within the bounds). */
static int cand_ok(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                   double a_lat, double b_lon, double b_lat) {
    cand_filter *f = ctx;
    for (uint32_t i = 0; i < f->nskip; i++) {
        cand_taken *c = &f->skip[i];
        if (c->rarc == arc) return 0;
        if (c->arc != arc) continue;
        if (c->lo == GP_NONE) cand_pass(f, g, tail, c);
        if (on_pass(g, c, tail, a_lon, a_lat)) return 0;
    }
    return !f->p->filter ||
           f->p->filter(f->p->filter_ctx, g, arc, tail, a_lon, a_lat, b_lon, b_lat);
}

static double accuracy(const gp_match_point *p, const gp_match_opts *o) {
    return isfinite(p->accuracy_m) && p->accuracy_m > 0 ? p->accuracy_m : o->sigma_m;
}

/* Taking the hits of one point's search as candidates: one per road and pass (cand_ok). */
typedef struct cand_take {
    const gp_graph *g;
    const gp_match_point *p;
    cand_filter *f;
    cand_taken *skip; /* f's */
    gp_snap *out;
    uint32_t k, max;
} cand_take;

static int cand_take_hit(void *ctx, const gp_seg_hit *h) {
    cand_take *c = ctx;
    gp_snap s;
    gp_snap_from_hit(c->g, c->p->lon, c->p->lat, h, &s);
    if (s.arc == GP_NONE) return 0;
    c->skip[c->f->nskip++] = (cand_taken){s.arc, s.rarc, h->piece, GP_NONE, GP_NONE}; /* taken */
    c->out[c->k++] = s;
    return c->k < c->max;
}

/* Up to o->max_candidates roads within the point's search radius into out, nearest first; the
 * count, or -1 with err set (an invalid coordinate, out of memory). One walk of the segment index
 * gives them (gp_segidx_nearest_each): the nearest road, then the nearest other road or other
 * pass of a road taken (cand_ok), and so on, as repeated gp_snap_point_if calls skipping the
 * passes taken would. skip: room for o->max_candidates. */
static int candidates(const gp_graph *g, const gp_match_point *p, const gp_match_opts *o,
                      gp_snap *out, cand_taken *skip, gp_seg_memo *memo, gp_err *err) {
    double radius = o->radius_mult * accuracy(p, o);
    if (o->max_radius_m > 0 && radius > o->max_radius_m) radius = o->max_radius_m;
    if (!(radius >= 0)) radius = 0;
    const gp_segidx *x;
    gp_err e;
    int rc = gp_snap_index(g, p->lon, p->lat, &x, &e); /* the coordinate and the graph checked */
    if (rc == GP_ENOTFOUND) return 0;
    if (rc) {
        if (err) *err = e;
        return -1;
    }
    if (!o->max_candidates) return 0;
    double ky = GP_EARTH_RADIUS_M * 3.14159265358979323846 / 180;
    cand_filter f = {p, radius, ky * cos(p->lat * 3.14159265358979323846 / 180), ky, skip, 0};
    cand_take c = {g, p, &f, skip, out, 0, o->max_candidates};
    if (gp_segidx_nearest_each(x, g, p->lon, p->lat, radius, cand_ok, &f, cand_take_hit, &c, memo) <
        0) {
        gp_err_set(err, GP_ENOMEM, "out of memory finding a point's candidates");
        return -1;
    }
    return (int)c.k;
}

/* ---- Viterbi ---- */
typedef struct model {
    uint32_t n, *off;   /* candidates of point t: off[t] .. off[t + 1] */
    gp_snap *c;         /* all candidates */
    double *emis, *vit; /* log probabilities; vit -INFINITY: unreached */
    uint32_t *par;      /* parent candidate (flat index), GP_NONE at a matching's start */
    double *len;        /* route metres from the parent */
} model;

static void start_at(model *md, uint32_t t) {
    for (uint32_t i = md->off[t]; i < md->off[t + 1]; i++) {
        md->vit[i] = md->emis[i];
        md->par[i] = GP_NONE;
        md->len[i] = 0;
    }
}

static uint32_t point_of(const model *md, uint32_t ci) {
    uint32_t lo = 0, hi = md->n; /* the t with off[t] <= ci < off[t + 1] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (md->off[mid] <= ci) lo = mid;
        else hi = mid;
    }
    return lo;
}

static double confidence_of(double trace_m, double route_m) {
    if (trace_m < 1) return 1;
    double r = fabs(route_m / trace_m - 1);
    double on = exp(-r / 0.1), off = 0.02 * exp(-r);
    return on / (on + off);
}

/* Closes the matching that ends at point last (the best candidate there) and began at first:
 * backtracks, assigns its points. Returns 1 when it holds 2 points or more. */
static int close_matching(model *md, const gp_match_point *p, uint32_t first, uint32_t last,
                          gp_match *out) {
    uint32_t best = GP_NONE;
    for (uint32_t i = md->off[last]; i < md->off[last + 1]; i++)
        if (md->vit[i] > -INFINITY && (best == GP_NONE || md->vit[i] > md->vit[best])) best = i;
    if (best == GP_NONE) return 0;
    uint32_t count = 0;
    for (uint32_t ci = best; ci != GP_NONE; ci = md->par[ci]) count++;
    if (count < 2) return 0;
    uint32_t mi = out->nmatch;
    double trace_m = 0, route_m = 0;
    uint32_t next_t = GP_NONE;
    for (uint32_t ci = best; ci != GP_NONE; ci = md->par[ci]) {
        uint32_t t = point_of(md, ci);
        if (t < first) break;
        out->matching[t] = mi;
        out->snap[t] = md->c[ci];
        uint32_t alt = 0;
        for (uint32_t i = md->off[t]; i < md->off[t + 1]; i++) alt += md->vit[i] > -INFINITY;
        out->alternatives[t] = alt ? alt - 1 : 0;
        route_m += md->len[ci];
        if (next_t != GP_NONE)
            trace_m += gp_haversine_m(p[t].lon, p[t].lat, p[next_t].lon, p[next_t].lat);
        next_t = t;
    }
    out->confidence[mi] = confidence_of(trace_m, route_m);
    out->length_m[mi] = route_m;
    out->nmatch++;
    return 1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_step(const double *ts, uint32_t n) {
    if (!ts || n < 2) return 1;
    double *d = malloc(sizeof *d * (n - 1));
    if (!d) return 1;
    for (uint32_t i = 0; i + 1 < n; i++) d[i] = ts[i + 1] - ts[i];
    qsort(d, n - 1, sizeof *d, cmp_double);
    double med = d[(n - 1) / 2];
    free(d);
    return med < 1 ? 1 : med;
}

/* The first point at or after t with candidates (n when none), started as a matching's head. */
static uint32_t first_with_cands(model *md, uint32_t t) {
    while (t < md->n && md->off[t + 1] == md->off[t]) t++;
    if (t < md->n) start_at(md, t);
    return t;
}

void gp_match_prep_free(gp_match_prep *pr) {
    if (!pr) return;
    free(pr->off);
    free(pr->c);
    free(pr->emis);
    free(pr->wb);
    free(pr->mb);
    free(pr->tab);
    free(pr->tw);
    free(pr->tm);
    memset(pr, 0, sizeof *pr);
}

/* The bounds of the step from point a to point b: max delta, great-circle metres, weight bound. */
static void step_bounds(const gp_graph *g, const gp_match_point *p, const double *ts,
                        const gp_match_opts *o, uint32_t a, uint32_t b, double *delta, double *hav,
                        double *wb) {
    /* a step counts as one second at least: timestamps are whole seconds, and two fixes within
     * the same one are still a short hop apart (OSRM's delta, 0 there, drops the second fix) */
    double step = ts && ts[b] - ts[a] > 1 ? ts[b] - ts[a] : 1;
    double dl = ts ? step * o->max_speed_mps : o->max_delta_m;
    *delta = dl;
    *hav = gp_haversine_m(p[a].lon, p[a].lat, p[b].lon, p[b].lat);
    *wb = g->unit_s > 0 ? (*hav + dl) / 4 / g->unit_s : INFINITY;
}

int gp_match_prepare(const gp_graph *g, const gp_match_point *p, uint32_t n, const double *ts,
                     const gp_match_opts *o, gp_match_prep *pr, gp_err *err) {
    memset(pr, 0, sizeof *pr);
    if (!g->lon) return gp_err_set(err, GP_EINVAL, "graph %s has no coordinates", g->source);
    uint32_t K = o->max_candidates ? o->max_candidates : 1;
    size_t cap = (size_t)n * K;
    int rc = GP_ENOMEM;
    pr->n = n;
    pr->off = malloc(sizeof *pr->off * (n + 1));
    pr->c = malloc(sizeof *pr->c * (cap ? cap : 1));
    pr->wb = malloc(sizeof *pr->wb * (n ? n : 1));
    pr->mb = malloc(sizeof *pr->mb * (n ? n : 1));
    pr->tab = malloc(sizeof *pr->tab * (n ? n : 1));
    cand_taken *skip = malloc(sizeof *skip * K);
    gp_seg_memo *memo = calloc(1, sizeof *memo); /* the trace's points meet the same arcs */
    if (!pr->off || !pr->c || !pr->wb || !pr->mb || !pr->tab || !skip || !memo) goto fail;
    pr->off[0] = 0;
    for (uint32_t t = 0; t < n; t++) {
        int k = candidates(g, &p[t], o, pr->c + pr->off[t], skip, memo, err);
        if (k < 0) {
            rc = err ? err->code : GP_EINVAL;
            goto fail;
        }
        pr->off[t + 1] = pr->off[t] + (uint32_t)k;
    }
    size_t nc = pr->off[n] ? pr->off[n] : 1;
    pr->emis = malloc(sizeof *pr->emis * nc);
    if (!pr->emis) goto fail;
    for (uint32_t t = 0; t < n; t++) {
        double sg = accuracy(&p[t], o);
        for (uint32_t i = pr->off[t]; i < pr->off[t + 1]; i++) {
            double z = pr->c[i].dist_m / sg;
            pr->emis[i] = -log(sqrt(2 * 3.14159265358979323846) * sg) - 0.5 * z * z;
        }
    }
    /* the table's blocks: step t-1 -> t, a row of k(t) per source candidate at t-1 */
    for (uint32_t t = 0; t < n; t++) {
        pr->tab[t] = SIZE_MAX;
        if (t == 0) continue;
        size_t ka = pr->off[t] - pr->off[t - 1], kb = pr->off[t + 1] - pr->off[t];
        if (!ka || !kb) continue;
        double delta, hav;
        step_bounds(g, p, ts, o, t - 1, t, &delta, &hav, &pr->wb[t]);
        pr->mb[t] = hav + delta;
        pr->tab[t] = pr->ntab;
        pr->ntab += ka * kb;
        pr->njobs += ka;
    }
    rc = GP_OK;
fail:
    free(skip);
    gp_seg_memo_free(memo);
    free(memo);
    if (rc == GP_ENOMEM)
        gp_err_set(err, GP_ENOMEM, "out of memory matching a trace of %u points", n);
    if (rc) gp_match_prep_free(pr);
    return rc;
}

static int table_alloc(gp_match_prep *pr) {
    if (pr->tw) return 0;
    pr->tw = malloc(sizeof *pr->tw * (pr->ntab ? pr->ntab : 1));
    pr->tm = malloc(sizeof *pr->tm * (pr->ntab ? pr->ntab : 1));
    return pr->tw && pr->tm ? 0 : -1;
}

int gp_match_table_alloc(gp_match_prep *pr, gp_err *err) {
    if (table_alloc(pr))
        return gp_err_set(err, GP_ENOMEM, "out of memory for a trace's transition table");
    return GP_OK;
}

int gp_match_fill(const gp_graph *g, gp_match_prep *pr, const uint8_t *redo, gp_err *err) {
    search s;
    memset(&s, 0, sizeof s);
    search_on(&s, g);
    int rc = GP_ENOMEM;
    if (table_alloc(pr) || search_alloc(&s, 1024)) goto done;
    size_t job = 0;
    for (uint32_t t = 1; t < pr->n; t++) {
        if (pr->tab[t] == SIZE_MAX) continue;
        uint32_t k = pr->off[t + 1] - pr->off[t];
        for (uint32_t i = pr->off[t - 1]; i < pr->off[t]; i++, job++) {
            if (redo && !redo[job]) continue;
            size_t r = pr->tab[t] + (size_t)(i - pr->off[t - 1]) * k;
            if (search_run(&s, &pr->c[i], &pr->c[pr->off[t]], k, pr->wb[t], pr->mb[t], pr->tw + r,
                           pr->tm + r, NULL, NULL))
                goto done;
        }
    }
    pr->filled = 1;
    rc = GP_OK;
done:
    search_free(&s);
    if (rc) gp_err_set(err, rc, "out of memory filling a trace's transition table");
    return rc;
}

int gp_match_run(const gp_graph *g, const gp_match_point *p, const double *ts,
                 const gp_match_opts *o, const gp_match_prep *pr, gp_match *out, gp_err *err) {
    memset(out, 0, sizeof *out);
    uint32_t n = pr->n;
    search s;
    model md;
    memset(&s, 0, sizeof s);
    memset(&md, 0, sizeof md);
    search_on(&s, g);
    uint32_t K = o->max_candidates ? o->max_candidates : 1;
    int rc = GP_ENOMEM;
    out->n = n;
    out->matching = malloc(sizeof *out->matching * (n ? n : 1));
    out->alternatives = calloc(n ? n : 1, sizeof *out->alternatives);
    out->snap = calloc(n ? n : 1, sizeof *out->snap);
    out->confidence = malloc(sizeof *out->confidence * (n / 2 + 1));
    out->length_m = malloc(sizeof *out->length_m * (n / 2 + 1));
    md.n = n;
    md.off = pr->off;
    md.c = pr->c;
    md.emis = pr->emis;
    size_t nc = md.off[n] ? md.off[n] : 1;
    md.vit = malloc(sizeof *md.vit * nc);
    md.par = malloc(sizeof *md.par * nc);
    md.len = malloc(sizeof *md.len * nc);
    double *bw = malloc(sizeof *bw * K), *bm = malloc(sizeof *bm * K);
    uint32_t *stk = malloc(sizeof *stk * (n ? n : 1));
    if (!out->matching || !out->alternatives || !out->snap || !out->confidence || !out->length_m ||
        !md.vit || !md.par || !md.len || !bw || !bm || !stk || search_alloc(&s, 1024))
        goto fail;
    for (uint32_t t = 0; t < n; t++) out->matching[t] = GP_NONE;
    for (size_t i = 0; i < md.off[n]; i++) md.vit[i] = -INFINITY;
    double max_broken_s = median_step(ts, n) * o->max_broken;
    double log_beta = -log(o->beta);
    /* stk[0 .. ns): the matching's points the next point may be searched from, prev = the top;
     * last: its last matched point (where it closes), brk: the first point dropped since */
    uint32_t head = first_with_cands(&md, 0), prev = head, last = head, brk = GP_NONE, ns = 1;
    stk[0] = head;
    for (uint32_t t = head + 1; head < n && t <= n; t++) {
        int split = t == n;
        if (!split) {
            double step = ts ? ts[t] - ts[prev] : 1;
            int gap = ts && o->split_gaps ? step > max_broken_s : t - prev > o->max_broken;
            int reached = 0;
            if (!gap && md.off[t + 1] > md.off[t]) {
                double delta, hav, wb;
                step_bounds(g, p, ts, o, prev, t, &delta, &hav, &wb);
                uint32_t k = md.off[t + 1] - md.off[t];
                int table = pr->filled && prev + 1 == t && pr->tab[t] != SIZE_MAX;
                for (uint32_t i = md.off[prev]; i < md.off[prev + 1]; i++) {
                    if (md.vit[i] == -INFINITY) continue;
                    const double *rm = bm;
                    if (table) /* the same search, run before (gp_match_fill, the GPU) */
                        rm = pr->tm + pr->tab[t] + (size_t)(i - md.off[prev]) * k;
                    else if (search_run(&s, &md.c[i], &md.c[md.off[t]], k, wb, hav + delta, bw, bm,
                                        NULL, NULL))
                        goto fail;
                    for (uint32_t j = 0; j < k; j++) {
                        if (!isfinite(rm[j])) continue;
                        double dt = fabs(rm[j] - hav);
                        if (dt >= delta) continue;
                        uint32_t cj = md.off[t] + j;
                        double v = md.vit[i] + md.emis[cj] + log_beta - dt / o->beta;
                        if (v > md.vit[cj]) {
                            md.vit[cj] = v;
                            md.par[cj] = i;
                            md.len[cj] = rm[j];
                            reached = 1;
                        }
                    }
                }
            }
            if (reached) {
                prev = last = stk[ns++] = t;
                brk = GP_NONE;
                continue;
            }
            if (!gap) {
                if (md.off[t + 1] > md.off[t]) { /* dropped, and prev no longer trusted */
                    if (brk == GP_NONE) brk = t;
                    if (ns > 1) {
                        ns--;
                        prev = stk[ns - 1];
                    }
                }
                if (t - prev <= o->max_broken) continue;
            }
        }
        close_matching(&md, p, head, last, out);
        if (split && brk == GP_NONE) break;
        uint32_t again = brk != GP_NONE ? brk : t;
        brk = GP_NONE;
        head = prev = last = stk[0] = first_with_cands(&md, again);
        ns = 1;
        t = head; /* the loop's t++ goes on after the new head */
    }
    rc = GP_OK;
fail:
    if (rc == GP_ENOMEM)
        gp_err_set(err, GP_ENOMEM, "out of memory matching a trace of %u points", n);
    if (rc) gp_match_free(out);
    search_free(&s);
    free(md.vit);
    free(md.par);
    free(md.len);
    free(bw);
    free(bm);
    free(stk);
    return rc;
}

int gp_match_trace(const gp_graph *g, const gp_match_point *p, uint32_t n, const double *ts,
                   const gp_match_opts *o, gp_match *out, gp_err *err) {
    gp_match_prep pr;
    memset(out, 0, sizeof *out);
    int rc = gp_match_prepare(g, p, n, ts, o, &pr, err);
    if (rc) return rc;
    rc = gp_match_run(g, p, ts, o, &pr, out, err);
    gp_match_prep_free(&pr);
    return rc;
}

struct gp_match_search {
    search s;
};

gp_match_search *gp_match_search_new(void) {
    gp_match_search *ms = calloc(1, sizeof *ms);
    if (ms && search_alloc(&ms->s, 1024)) {
        search_free(&ms->s);
        free(ms);
        return NULL;
    }
    return ms;
}

void gp_match_search_free(gp_match_search *ms) {
    if (!ms) return;
    search_free(&ms->s);
    free(ms);
}

int gp_match_route(const gp_graph *g, const gp_snap *a, const gp_snap *b, gp_snap_route *out,
                   gp_err *err) {
    return gp_match_route_in(NULL, g, a, b, out, err);
}

int gp_match_route_in(gp_match_search *ms, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                      gp_snap_route *out, gp_err *err) {
    memset(out, 0, sizeof *out);
    out->dist = GP_INF;
    out->path.dist = GP_INF;
    out->first_arc = out->last_arc = GP_NONE;
    const gp_turns *turns = g->turns;
    search own, *sp = ms ? &ms->s : &own; /* a search_run starts from a reset search */
    if (!ms) memset(&own, 0, sizeof own);
    search_on(sp, g);
    double w, m;
    uint32_t via = GP_NONE, tarc = GP_NONE, n = 0;
    int rc = GP_ENOMEM;
    if ((!ms && search_alloc(sp, 1024)) ||
        search_run(sp, a, b, 1, INFINITY, INFINITY, &w, &m, &via, &tarc))
        goto done;
    rc = GP_ENOTFOUND;
    if (!isfinite(w)) goto done;
    out->dist = (uint64_t)llround(w);
    out->last_arc = tarc;
    if (via == GP_NONE) { /* along one arc */
        out->first_arc = tarc;
        out->last_arc = GP_NONE;
        out->path.dist = 0;
        rc = GP_OK;
        goto done;
    }
    /* the chain of settled nodes back to the start, and the arcs driven into them */
    for (uint32_t v = via; v != GP_NONE; v = sp->pn[slot_of(sp, v)]) n++;
    out->path.nodes = malloc(sizeof *out->path.nodes * n);
    uint32_t *arcs = malloc(sizeof *arcs * n); /* arcs[i]: the arc into chain node i */
    if (!out->path.nodes || !arcs) {
        free(arcs);
        rc = GP_ENOMEM;
        goto done;
    }
    uint32_t i = n;
    for (uint32_t v = via; v != GP_NONE; v = sp->pn[slot_of(sp, v)]) {
        i--;
        arcs[i] = sp->pa[slot_of(sp, v)];
        /* turn graph: node v drives road arc gp_turns_arc(v) */
        out->path.nodes[i] = sp->tg ? g->col[gp_turns_arc(turns, v)] : v;
    }
    out->first_arc = arcs[0]; /* the start's own arc, driven from the position to its head */
    memmove(arcs, arcs + 1, sizeof *arcs * (n - 1));
    out->arcs = arcs;
    out->path.len = n;
    uint64_t net = 0;
    uint32_t prev = out->first_arc;
    for (uint32_t j = 0; j + 1 < n; j++) {
        net += g->w[arcs[j]] + gp_snap_turn_cost(g, prev, arcs[j]);
        prev = arcs[j];
    }
    out->path.dist = net;
    rc = GP_OK;
done:
    if (!ms) search_free(&own);
    if (rc == GP_ENOMEM) gp_err_set(err, GP_ENOMEM, "out of memory routing a matched trace");
    else if (rc) gp_err_set(err, rc, "no route between the matched positions");
    if (rc) gp_snap_route_free(out);
    return rc;
}
