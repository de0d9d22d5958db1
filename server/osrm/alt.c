/* alt.c - alternative routes for OSRM's `alternatives` (two coordinates, as in OSRM), by via
 * nodes: a route a -> v -> b through a node v off the best route is an alternative when it costs at
 * most 1.3 times the best (OSRM's default stretch is 1.25-1.4) and shares at most 70% of its length
 * with the best route and the alternatives already taken.
 *
 * Steps: (1) one one-to-all from a with a cutoff at 1.3 x the best cost gives d(a, v); (2) nodes with
 * d(a, v) between 20% and 80% of the best cost, off the best route by at least max(50 m, 8% of the
 * crow-fly distance), are sampled (deterministically, at most 24); (3) one table (via nodes -> b,
 * gp_engine_table_snap, batched on the GPU) gives d(v, b); (4) candidates by increasing
 * d(a, v) + d(v, b) are routed through their via node and checked for sharing, until enough are
 * taken or 8 were tried. Every alternative is a real shortest a -> v and v -> b route.
 */
#include "server/osrm/internal.h"

#include "graph/spatial.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRETCH 1.3
#define MAX_SHARED 0.7
#define VIAS 24
#define TRIES 8

typedef struct via {
    uint32_t v;
    uint64_t total;
} via;

static int via_cmp(const void *x, const void *y) {
    const via *a = x, *b = y;
    return a->total < b->total ? -1 : a->total > b->total ? 1 : (a->v > b->v) - (a->v < b->v);
}

static void mark_leg(const gp_graph *g, const gp_osrm_leg *leg, uint8_t *on) {
    for (size_t i = 0; i < leg->npc; i++) {
        on[leg->pc[i].tail] = 1;
        on[g->col[leg->pc[i].arc]] = 1;
    }
}

/* Share of leg's length on arcs whose both ends are marked. */
static double shared(const gp_graph *g, const gp_osrm_leg *leg, const uint8_t *on) {
    double s = 0, t = 0;
    for (size_t i = 0; i < leg->npc; i++) {
        t += leg->pc[i].dist_m;
        if (on[leg->pc[i].tail] && on[g->col[leg->pc[i].arc]]) s += leg->pc[i].dist_m;
    }
    return t > 0 ? s / t : 1;
}

/* One step of a 64-bit linear congruential generator (Knuth's MMIX constants): it wraps modulo
 * 2^64 by design (tests/ubsan.ignorelist). */
static uint64_t lcg_next(uint64_t s) { return s * 6364136223846793005ull + 1442695040888963407ull; }

size_t gp_osrm_alternatives(gp_osrm_req *q, const gp_osrm_leg *best, size_t max_alt,
                            gp_osrm_leg *out) {
    const gp_graph *g = q->g;
    const gp_snap *a = best->a, *b = best->b;
    uint64_t C = best->cost;
    size_t got = 0;
    if (!max_alt || C == 0 || C == GP_INF || best->npc == 0) return 0;
    uint64_t *dist = malloc(sizeof *dist * g->n), *dvb = malloc(sizeof *dvb * VIAS);
    uint8_t *on = calloc(g->n, 1);
    via *cand = malloc(sizeof *cand * VIAS);
    gp_snap *vs = malloc(sizeof *vs * VIAS);
    gp_err err;
    uint64_t cutoff = (uint64_t)((double)C * STRETCH);
    if (!dist || !dvb || !on || !cand || !vs ||
        gp_engine_sssp_snap(gp_http_engine(), g, a, cutoff, dist, NULL, &err))
        goto done;
    mark_leg(g, best, on);
    /* the best route's points, thinned, for the off-route test */
    size_t step = best->pts.n / 200 + 1;
    double crow = gp_haversine_m(a->lon, a->lat, b->lon, b->lat);
    double min_off = fmax(50, 0.08 * crow);
    uint32_t nc = 0;
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ g->hash;
    for (uint32_t tries = 0; tries < 20000 && nc < VIAS; tries++) {
        seed = lcg_next(seed);
        uint32_t v = (uint32_t)((seed >> 33) % g->n);
        if (on[v] || dist[v] == GP_INF || (double)dist[v] < 0.2 * (double)C ||
            (double)dist[v] > 0.8 * (double)C || isnan(g->lon[v]))
            continue;
        double off = INFINITY;
        for (size_t i = 0; i < best->pts.n; i += step)
            off =
                fmin(off, gp_haversine_m(g->lon[v], g->lat[v], best->pts.lon[i], best->pts.lat[i]));
        if (off < min_off) continue;
        int dup = 0;
        for (uint32_t k = 0; k < nc; k++) dup |= cand[k].v == v;
        if (dup) continue;
        cand[nc].v = v;
        gp_snap_at_node(g, v, &vs[nc]);
        nc++;
    }
    if (!nc || gp_engine_table_snap(gp_http_engine(), g, vs, nc, b, 1, dvb, &err)) goto done;
    for (uint32_t k = 0; k < nc; k++)
        cand[k].total = dvb[k] == GP_INF ? GP_INF : dist[cand[k].v] + dvb[k];
    qsort(cand, nc, sizeof *cand, via_cmp);
    for (uint32_t k = 0; k < nc && k < TRIES && got < max_alt; k++) {
        if (cand[k].total == GP_INF || (double)cand[k].total > (double)C * STRETCH) break;
        gp_snap s;
        gp_snap_at_node(g, cand[k].v, &s);
        gp_snap_route r1, r2;
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        gp_osrm_leg l1, l2;
        int ok = !gp_engine_route_snap(gp_http_engine(), g, a, &s, GP_P2P_AUTO, &r1, &err) &&
                 !gp_engine_route_snap(gp_http_engine(), g, &s, b, GP_P2P_AUTO, &r2, &err) &&
                 r1.dist != GP_INF && r2.dist != GP_INF && !gp_osrm_leg_build(g, a, &s, &r1, &l1);
        if (ok && gp_osrm_leg_build(g, &s, b, &r2, &l2)) {
            gp_osrm_leg_free(&l1);
            ok = 0;
        }
        gp_snap_route_free(&r1);
        gp_snap_route_free(&r2);
        if (!ok) continue;
        l1.b = b; /* the via node is no waypoint: one leg a -> b */
        if (gp_osrm_leg_append(&l1, &l2) || shared(g, &l1, on) > MAX_SHARED) {
            gp_osrm_leg_free(&l1);
            continue;
        }
        mark_leg(g, &l1, on);
        out[got++] = l1;
    }
done:
    free(dist);
    free(dvb);
    free(on);
    free(cand);
    free(vs);
    return got;
}
