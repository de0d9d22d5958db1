/* trip.c - OSRM's trip service: a travelling-salesman tour over the snapped coordinates.
 *
 * One n x n table (gp_engine_table_snap) gives the travel costs. The tour is built by nearest
 * neighbour (from every allowed start when the start is free) and improved by 2-opt (segment
 * reversal) and Or-opt (moving a run of 1-3 stops elsewhere) until no move helps, each move
 * evaluated on the asymmetric costs (reversing a one-way street matters). roundtrip=true closes
 * the tour (returns to the start); source=first fixes the start, destination=last the end. As in
 * OSRM, roundtrip=false needs source=first or destination=last (else 400 NotImplemented); a round
 * trip over coordinates that cannot all reach each other (islands) becomes one trip per group of
 * mutually reachable coordinates (trips_index), and a one-way trip across them answers NoTrips.
 */
#include "server/osrm/osrm.h"

#include "server/osrm/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct tsp {
    uint32_t n;
    const double *c; /* n x n */
    int roundtrip, fix_start, fix_end;
} tsp;

static double tour_cost(const tsp *t, const uint32_t *o) {
    double s = 0;
    for (uint32_t i = 0; i + 1 < t->n; i++) s += t->c[(size_t)o[i] * t->n + o[i + 1]];
    if (t->roundtrip && t->n > 1) s += t->c[(size_t)o[t->n - 1] * t->n + o[0]];
    return s;
}

/* Nearest neighbour from start; the fixed end (when any) goes last. */
static void nearest_neighbour(const tsp *t, uint32_t start, uint32_t *o, uint8_t *used) {
    uint32_t n = t->n, k = 0;
    memset(used, 0, n);
    o[k++] = start;
    used[start] = 1;
    if (t->fix_end) used[n - 1] = 1;
    while (k < n - (t->fix_end && start != n - 1 ? 1u : 0u)) {
        uint32_t cur = o[k - 1], best = UINT32_MAX;
        double bd = 0;
        for (uint32_t j = 0; j < n; j++) {
            if (used[j]) continue;
            double d = t->c[(size_t)cur * n + j];
            if (best == UINT32_MAX || d < bd) {
                best = j;
                bd = d;
            }
        }
        if (best == UINT32_MAX) break;
        o[k++] = best;
        used[best] = 1;
    }
    if (t->fix_end && start != n - 1) o[k++] = n - 1;
}

static void reverse(uint32_t *o, uint32_t i, uint32_t j) {
    while (i < j) {
        uint32_t x = o[i];
        o[i++] = o[j];
        o[j--] = x;
    }
}

/* 2-opt and Or-opt until no move improves; positions lo..hi may change. */
static void improve(const tsp *t, uint32_t *o, uint32_t *tmp) {
    uint32_t n = t->n, lo = t->fix_start ? 1 : 0, hi = t->fix_end ? n - 2 : n - 1;
    if (n < 4 || hi <= lo) return;
    double best = tour_cost(t, o);
    for (int pass = 0, better = 1; better && pass < 100; pass++) {
        better = 0;
        for (uint32_t i = lo; i < hi; i++)
            for (uint32_t j = i + 1; j <= hi; j++) {
                reverse(o, i, j);
                double c = tour_cost(t, o);
                if (c < best - 1e-9) {
                    best = c;
                    better = 1;
                } else {
                    reverse(o, i, j);
                }
            }
        for (uint32_t len = 1; len <= 3; len++)
            for (uint32_t i = lo; i + len - 1 <= hi; i++)
                for (uint32_t p = lo; p + len - 1 <= hi; p++) {
                    if (p == i) continue;
                    /* move o[i..i+len) so that it starts at position p of the result */
                    uint32_t k = 0;
                    for (uint32_t x = 0; x < n; x++)
                        if (x < i || x >= i + len) tmp[k++] = o[x];
                    memmove(tmp + p + len, tmp + p, sizeof *tmp * (n - len - p));
                    memcpy(tmp + p, o + i, sizeof *tmp * len);
                    double c = tour_cost(t, tmp);
                    if (c < best - 1e-9) {
                        best = c;
                        better = 1;
                        memcpy(o, tmp, sizeof *o * n);
                    }
                }
    }
}

/* Solves t into order o (n entries). */
static void solve(const tsp *t, uint32_t *o) {
    uint32_t n = t->n;
    uint32_t *cand = malloc(sizeof *cand * n), *tmp = malloc(sizeof *tmp * n);
    uint8_t *used = malloc(n);
    if (!cand || !tmp || !used) { /* out of memory: input order is still a valid tour */
        for (uint32_t i = 0; i < n; i++) o[i] = i;
        free(cand);
        free(tmp);
        free(used);
        return;
    }
    double best = -1;
    uint32_t starts = t->fix_start ? 1 : n;
    for (uint32_t s = 0; s < starts; s++) {
        if (t->fix_end && !t->fix_start && s == n - 1 && n > 1) continue;
        nearest_neighbour(t, s, cand, used);
        double c = tour_cost(t, cand);
        if (best < 0 || c < best) {
            best = c;
            memcpy(o, cand, sizeof *o * n);
        }
    }
    improve(t, o, tmp);
    free(cand);
    free(tmp);
    free(used);
}

void gp_h_osrm_trip(gp_req *r) {
    gp_osrm_req q;
    uint64_t *cost = NULL;
    double *c = NULL;
    uint32_t *order = NULL;
    gp_osrm_leg *legs = NULL;
    if (!gp_osrm_req_init(&q, r, gp_req_param(r, "coordinates"),
                          gp_http_config()->osrm_max_trip_size, "osrm_max_trip_size"))
        goto out;
    gp_osrm_route_opts ro;
    if (!gp_osrm_route_opts_parse(&q, &ro)) goto out;
    char buf[32];
    const char *v;
    int roundtrip = 1, src_first = 0, dst_last = 0;
    if ((v = gp_osrm_opt(&q, "roundtrip", buf, sizeof buf))) {
        if (!strcmp(v, "false")) roundtrip = 0;
        else if (strcmp(v, "true")) {
            gp_osrm_error(r, 400, "InvalidOptions", "roundtrip must be true or false");
            goto out;
        }
    }
    if ((v = gp_osrm_opt(&q, "source", buf, sizeof buf))) {
        if (!strcmp(v, "first")) src_first = 1;
        else if (strcmp(v, "any")) {
            gp_osrm_error(r, 400, "InvalidOptions", "source must be any or first");
            goto out;
        }
    }
    if ((v = gp_osrm_opt(&q, "destination", buf, sizeof buf))) {
        if (!strcmp(v, "last")) dst_last = 1;
        else if (strcmp(v, "any")) {
            gp_osrm_error(r, 400, "InvalidOptions", "destination must be any or last");
            goto out;
        }
    }
    if (!roundtrip && !src_first && !dst_last) {
        gp_osrm_error(r, 400, "NotImplemented",
                      "roundtrip=false needs source=first or destination=last");
        goto out;
    }
    if (q.n < 2) {
        gp_osrm_error(r, 400, "InvalidQuery", "trip needs at least 2 coordinates, got %u", q.n);
        goto out;
    }
    if (!gp_osrm_snap_all(&q)) goto out;
    uint32_t n = q.n;
    cost = malloc(sizeof *cost * (size_t)n * n);
    c = malloc(sizeof *c * (size_t)n * n);
    order = malloc(sizeof *order * (n + 1));
    legs = calloc(n + 1, sizeof *legs);
    if (!cost || !c || !order || !legs) {
        gp_osrm_error(r, 500, "InternalError", "out of memory");
        goto out;
    }
    gp_err err;
    if (gp_engine_table_snap(gp_http_engine(), q.g, q.snap, n, q.snap, n, cost, &err)) {
        gp_osrm_error_err(r, &err);
        goto out;
    }
    /* round trips: one trip per group of mutually reachable coordinates, as OSRM does for
     * coordinates on disconnected islands (the table's costs are already transitive) */
    uint32_t *comp = malloc(sizeof *comp * n), *mem = malloc(sizeof *mem * n);
    uint32_t *pos = malloc(sizeof *pos * n), ncomp = 0;
    if (!comp || !mem || !pos) {
        free(comp);
        free(mem);
        free(pos);
        gp_osrm_error(r, 500, "InternalError", "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) comp[i] = GP_NONE;
    for (uint32_t i = 0; i < n; i++) {
        if (comp[i] != GP_NONE) continue;
        for (uint32_t j = i; j < n; j++)
            if (comp[j] == GP_NONE && cost[(size_t)i * n + j] != GP_INF &&
                cost[(size_t)j * n + i] != GP_INF)
                comp[j] = ncomp;
        ncomp++;
    }
    if (!roundtrip && ncomp > 1) {
        free(comp);
        free(mem);
        free(pos);
        gp_osrm_error(r, 400, "NoTrips",
                      "No trip visiting all destinations possible: some coordinates cannot reach "
                      "each other in graph '%s' (only a round trip splits into several trips)",
                      q.graph_name);
        goto out;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", "Ok");
    cJSON_AddStringToObject(o, "data_version", GP_OSRM_DATA_VERSION(&q));
    cJSON *trips = cJSON_AddArrayToObject(o, "trips");
    int failed = 0;
    for (uint32_t ci = 0; ci < ncomp && !failed; ci++) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (comp[i] == ci) mem[k++] = i; /* ascending: coordinate 0 / n-1 stay first / last */
        for (uint32_t x = 0; x < k; x++)
            for (uint32_t y = 0; y < k; y++)
                c[(size_t)x * k + y] = (double)cost[(size_t)mem[x] * n + mem[y]];
        int has_last = mem[k - 1] == n - 1, has_first = mem[0] == 0;
        int fix_end = dst_last && has_last;
        /* a cycle is the same from any of its stops: fix its start unless only the end is fixed */
        int fix_start = roundtrip ? !fix_end || (src_first && has_first) : src_first;
        tsp t = {k, c, roundtrip, fix_start, fix_end};
        solve(&t, order);
        for (uint32_t x = 0; x < k; x++) {
            order[x] = mem[order[x]];
            pos[order[x]] = x;
        }
        uint32_t stops = k;
        if (roundtrip) order[stops++] = order[0];
        if (stops < 2) order[stops++] = order[0]; /* a lone stop: a trip of one empty leg */
        if (!gp_osrm_route_legs(&q, order, stops, 0, legs)) {
            failed = 1;
            break;
        }
        cJSON_AddItemToArray(trips, gp_osrm_route_json(&q, legs, stops - 1, &ro));
        for (uint32_t i = 0; i + 1 < stops; i++) gp_osrm_leg_free(&legs[i]);
    }
    if (failed) { /* gp_osrm_route_legs answered */
        cJSON_Delete(o);
    } else {
        if (!q.skip_waypoints) {
            cJSON *wps = cJSON_AddArrayToObject(o, "waypoints");
            for (uint32_t i = 0; i < n; i++) {
                cJSON *w = gp_osrm_waypoint(&q, &q.snap[i]);
                cJSON_AddNumberToObject(w, "waypoint_index", pos[i]);
                cJSON_AddNumberToObject(w, "trips_index", comp[i]);
                cJSON_AddItemToArray(wps, w);
            }
        }
        gp_http_json(r, 200, o);
    }
    free(comp);
    free(mem);
    free(pos);
out:
    free(cost);
    free(c);
    free(order);
    free(legs);
    gp_osrm_req_free(&q);
}
