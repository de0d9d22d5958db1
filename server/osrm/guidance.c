/* guidance.c - OSRM route steps (turn-by-turn guidance) of a leg, as OSRM v6 builds them with its
 * default options.
 *
 * A leg opens with `depart` and closes with `arrive` (modifier: the side the destination lies
 * on, when it lies 5 m or more off the road). At every node between two pieces of the leg the
 * junction is read from the graph: every road at the node with its bearing (aimed at the road's
 * representative point, as OSRM reads a road's direction; where only two roads meet, at its first
 * point more than 1 m along it), whether it may be entered, and the arriving
 * and leaving ones. A new step starts when OSRM would announce something:
 *  - entering a roundabout (junction=roundabout or circular arcs): `roundabout`, `rotary` (the
 *    ring has one name, not a name of a road joining it, and a radius over 15 m; or a named
 *    junction=circular) or `roundabout turn` (radius 15 m or less, at most four ring nodes, each
 *    joined by one road at most), with `exit` (each road that
 *    leaves the ring counts once, right to left at one node) and the exit road's name; a
 *    roundabout or rotary keeps the modifier of the turn onto the ring and is followed by
 *    `exit roundabout` / `exit rotary` at the exit node (same exit number); a roundabout turn is
 *    one step whose modifier is its entry against its exit;
 *  - where there is a choice: from a motorway or trunk onto its link `off ramp`, from another
 *    road onto a motorway or trunk link `on ramp` (a link of a lesser road is no ramp: `turn`);
 *    from a link onto a motorway or trunk another road joins `merge` (modifier: the side merged
 *    to);
 *  - two similar ways ahead (each within 50 degrees of straight, within 25 degrees of each
 *    other), neither obvious, and not the one keeping the name arrived on being 10 degrees
 *    straighter than the other, `fork`;
 *  - a change of road that OSRM announces (its requiresNameAnnounced rule, in renamed()):
 *    `end of road` at a T where nothing goes on ahead (when the road arrived by passed another
 *    junction in the step, as OSRM's answers show), `new name` straight on or without a choice,
 *    `turn` otherwise;
 *  - the same road where the way taken is not the obvious one `continue`, another road there
 *    `turn`. Obvious: the straightest way, within 45 degrees, 30 degrees straighter than the
 *    next; or the road that keeps its name within 25 degrees of straight when every other way
 *    is a lesser road turning off by 25 degrees or more. A bend of one road (no other road at the node) makes no step.
 * A maneuver followed within 30 m by a bend at a junction that makes no step becomes one maneuver
 * (collapse_suppressed), and such a bend followed within 30 m by a step where there is one way on
 * becomes that step, at the bend (as OSRM collapses its steps).
 * Modifiers come from the turn angle t (degrees, right positive) in OSRM's buckets: straight
 * (|t| <= 20), slight (20-40), plain (40-120), sharp (120-179), uturn (beyond).
 * Every step lists its intersections: the maneuver's, then each node passed where three or more
 * roads meet (and every node of a roundabout passed), with bearings, entry, in, out, classes of
 * the road taken (toll, motorway (motorway and its links), ferry, restricted, tunnel) and lanes
 * from the arriving road's turn:lanes (indications; valid: the lanes naming the direction taken,
 * else those on its side). A step carries the road's name, ref, pronunciation, destinations
 * ("ref: destination", OSRM's form), exits (junction:ref) and, for rotaries, rotary_name and
 * rotary_pronunciation. Pieces of zero length at a leg's ends (a waypoint exactly on a node)
 * make no step.
 */
#include "server/osrm/internal.h"

#include "graph/spatial.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RING (GP_ARC_ROUNDABOUT | GP_ARC_CIRCULAR)
#define MAXR 32

static double norm180(double d) {
    d = fmod(d + 540.0, 360.0) - 180.0;
    return d <= -180 ? d + 360 : d;
}

static const char *modifier_of(double t) {
    double a = fabs(t);
    int right = t > 0;
    if (a <= 20) return "straight";
    if (a >= 179) return "uturn";
    if (a <= 40) return right ? "slight right" : "slight left";
    if (a <= 120) return right ? "right" : "left";
    return right ? "sharp right" : "sharp left";
}

/* The roads at a node: bearing away from it, whether the route may leave that way, the arc out
 * and the arc in along it (GP_NONE when none). */
typedef struct jroad {
    double b;
    int entry;
    uint32_t out, in;
} jroad;
typedef struct junction {
    int n, in_ix, out_ix;
    jroad r[MAXR];
} junction;

static int road_at(junction *J, double b) {
    for (int k = 0; k < J->n; k++)
        if (fabs(norm180(J->r[k].b - b)) < 1) return k;
    if (J->n == MAXR) return -1;
    J->r[J->n] = (jroad){b, 0, GP_NONE, GP_NONE};
    return J->n++;
}

static double arc_bearing(const gp_graph *g, uint32_t a, uint32_t x, int along, int close);

/* The nodes joined to x by an arc either way (OSRM's out-degree of the node-based graph, where
 * a one-way road has an edge both ways), counting up to 3. */
static int node_degree(const gp_graph *g, uint32_t x) {
    uint32_t seen[3];
    int n = 0;
    for (uint32_t a = g->row[x]; a < g->row[x + 1] && n < 3; a++) {
        int dup = g->col[a] == x;
        for (int k = 0; k < n; k++) dup |= seen[k] == g->col[a];
        if (!dup) seen[n++] = g->col[a];
    }
    for (uint32_t i = g->rrow[x]; i < g->rrow[x + 1] && n < 3; i++) {
        int dup = g->rcol[i] == x;
        for (int k = 0; k < n; k++) dup |= seen[k] == g->rcol[i];
        if (!dup) seen[n++] = g->rcol[i];
    }
    return n;
}

/* The roads at node x. Where two roads meet at most, OSRM reads their directions from the first
 * point more than 1 m along each (its coordinate close to the turn), elsewhere from the
 * representative point (arc_bearing). */
static void junction_at(const gp_graph *g, uint32_t x, uint32_t in_arc, uint32_t out_arc,
                        junction *J) {
    J->n = 0;
    J->in_ix = J->out_ix = -1;
    int close = node_degree(g, x) <= 2;
    for (uint32_t a = g->row[x]; a < g->row[x + 1]; a++) {
        if (g->col[a] == x) continue;
        int k = road_at(J, arc_bearing(g, a, x, 1, close));
        if (k < 0) continue;
        J->r[k].entry = 1;
        if (J->r[k].out == GP_NONE || a == out_arc) J->r[k].out = a;
        if (a == out_arc) J->out_ix = k;
    }
    for (uint32_t i = g->rrow[x]; i < g->rrow[x + 1]; i++) {
        uint32_t y = g->rcol[i];
        if (y == x) continue;
        for (uint32_t a = g->row[y]; a < g->row[y + 1]; a++) {
            if (g->col[a] != x) continue;
            int k = road_at(J, arc_bearing(g, a, x, 0, close));
            if (k < 0) continue;
            if (J->r[k].in == GP_NONE || a == in_arc) J->r[k].in = a;
            if (a == in_arc) J->in_ix = k;
        }
    }
}

static const char *arc_name(const gp_graph *g, uint32_t a) {
    const char *s = a == GP_NONE ? NULL : gp_graph_arc_name(g, a);
    return s ? s : "";
}
static const char *arc_ref(const gp_graph *g, uint32_t a) {
    const char *s = a == GP_NONE ? NULL : gp_graph_arc_ref(g, a);
    return s ? s : "";
}
static int arc_cls(const gp_graph *g, uint32_t a) {
    return g->arc_class && a != GP_NONE ? g->arc_class[a] : GP_ROAD_UNKNOWN;
}
static unsigned arc_flags(const gp_graph *g, uint32_t a) {
    return a == GP_NONE ? 0u : gp_graph_arc_flags(g, a);
}

/* ---- a road's direction at a junction (OSRM's representative coordinate) ----
 * OSRM does not read a road's direction from its first metre: it picks one point along the road
 * (its extractor's representative coordinate) and takes the bearing to it. The rules, in order:
 * a straight arc (no shape point) its far end; a ring arc the point 2 m along; a minor road
 * (service, track, path... OSRM's may_be_ignored) the point 10 m along; a first segment longer
 * than the lanes' width plus 10 m its first shape point; else, on the first 40 m plus the lanes'
 * width: the end when the road stays within half a lane of the straight line to it, the point
 * 5 m along when it starts straight for the lanes' width plus 10 m, the line fitted through the
 * points (moved onto the junction) when they all lie within 0.35 lanes of it, the second
 * segment moved onto the junction when the first is only a lane offset, the first 6 m when the
 * road curves away at once, the line fitted past the junction's lanes, and the point 10 m along
 * last. Lanes: two, widened by 2.5 for motorways and ramps, 2 for trunks, 1.5 for primaries;
 * a lane is 3.25 m. Points are in metres east / north of the junction. */
#define LANE_W 3.25
#define RMAX 48
typedef struct rpt {
    double x, y;
} rpt;

static double rdist(rpt a, rpt b) { return hypot(b.x - a.x, b.y - a.y); }

/* Distance of p from the line through a and b (from a when they coincide), the segment's
 * projection clamped as OSRM's projectPointOnSegment does. */
static double rdev(rpt a, rpt b, rpt p) {
    double dx = b.x - a.x, dy = b.y - a.y, L = dx * dx + dy * dy;
    double t = L > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / L : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypot(p.x - a.x - t * dx, p.y - a.y - t * dy);
}
static double rmaxdev(const rpt *p, int n, rpt a, rpt b) {
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, rdev(a, b, p[i]));
    return m;
}

/* The point `len` metres along the polyline (its end when shorter). */
static rpt rat(const rpt *p, int n, double len) {
    double walked = 0;
    for (int i = 1; i < n; i++) {
        double d = rdist(p[i - 1], p[i]);
        if (walked + d >= len && d > 0) {
            double f = (len - walked) / d;
            return (rpt){p[i - 1].x + f * (p[i].x - p[i - 1].x),
                         p[i - 1].y + f * (p[i].y - p[i - 1].y)};
        }
        walked += d;
    }
    return p[n - 1];
}

/* Cuts the polyline at `len` metres (the last point interpolated); its new count. */
static int rtrim(rpt *p, int n, double len) {
    double walked = 0;
    for (int i = 1; i < n; i++) {
        double d = rdist(p[i - 1], p[i]);
        if (walked + d >= len) {
            p[i] = rat(p + i - 1, 2, len - walked);
            return i + 1;
        }
        walked += d;
    }
    return n;
}

/* The least-squares line through the points (its principal axis), as the projections of the
 * first and the last point onto it. */
static void rfit(const rpt *p, int n, rpt *a, rpt *b) {
    double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
    for (int i = 0; i < n; i++) mx += p[i].x / n, my += p[i].y / n;
    for (int i = 0; i < n; i++) {
        double dx = p[i].x - mx, dy = p[i].y - my;
        sxx += dx * dx, syy += dy * dy, sxy += dx * dy;
    }
    double th = 0.5 * atan2(2 * sxy, sxx - syy), ux = cos(th), uy = sin(th);
    double t0 = (p[0].x - mx) * ux + (p[0].y - my) * uy,
           t1 = (p[n - 1].x - mx) * ux + (p[n - 1].y - my) * uy;
    *a = (rpt){mx + t0 * ux, my + t0 * uy};
    *b = (rpt){mx + t1 * ux, my + t1 * uy};
}

/* The direction base -> head moved onto the junction (the origin): head less 90% of base. */
static rpt rcorrect(rpt base, rpt head) {
    if (rdist(base, head) < 2) return head;
    return (rpt){head.x - 0.9 * base.x, head.y - 0.9 * base.y};
}

static double sturn(rpt a, rpt b, rpt c) { /* the turn at b, degrees (right positive) */
    double h1 = atan2(b.x - a.x, b.y - a.y), h2 = atan2(c.x - b.x, c.y - b.y);
    return norm180((h2 - h1) * 180 / M_PI);
}

/* Whether the road curves away from the junction (OSRM's IsCurve): it turns by more than 20
 * degrees over its length, every point on one side, the distance from the chord rising then
 * falling, its peak neither in the first 35% nor below a lane's reach (roads over 10 m), and
 * no straight stretch of 30% of its length in it. */
static int rcurve(const rpt *p, const double *seg, int n, double len, double lw) {
    if (fabs(sturn(p[0], p[1],
                   (rpt){p[1].x + p[n - 1].x - p[n - 2].x, p[1].y + p[n - 1].y - p[n - 2].y})) <=
        20)
        return 0;
    rpt a = p[0], b = p[n - 1];
    double cx = b.x - a.x, cy = b.y - a.y;
    int side = cx * (p[1].y - a.y) - cy * (p[1].x - a.x) > 0;
    for (int i = 2; i < n - 1; i++)
        if ((cx * (p[i].y - a.y) - cy * (p[i].x - a.x) > 0) != side) return 0;
    int peak = n - 1;
    double dmax = 0;
    if (n == 3) peak = 1, dmax = rdev(a, b, p[1]);
    else if (n > 3) {
        int i = 1;
        while (i + 1 < n && rdev(a, b, p[i]) < rdev(a, b, p[i + 1])) i++;
        if (i + 1 < n) {
            peak = i, dmax = rdev(a, b, p[i]);
            for (int j = i; j + 1 < n; j++)
                if (!(rdev(a, b, p[j]) > rdev(a, b, p[j + 1]))) return 0;
        }
    }
    double to_peak = 0;
    for (int i = 0; i <= peak; i++) to_peak += seg[i];
    if ((to_peak <= 0.35 * len || dmax < fmax(0.3 * lw, 0.5 * LANE_W)) && len > 10) return 0;
    int last_straight = 0;
    double straight = fmax(0, seg[1] - lw);
    for (int i = 1; i + 2 < n; i++) { /* the turns at points i and i + 1 */
        double prev = sturn(p[i - 1], p[i], p[i + 1]), cur = sturn(p[i], p[i + 1], p[i + 2]);
        if (fabs(prev) > 25 && fabs(cur) > 25 && (prev > 0) != (cur > 0)) return 0;
        int is_straight = fabs(cur) < 5;
        if (is_straight) {
            straight += seg[i + 1];
            if (last_straight && straight > 0.3 * len) return 0;
        } else if (straight > 0.3 * len) {
            return 0;
        } else {
            straight = seg[i + 1];
        }
        last_straight = is_straight;
    }
    return len > 2 * lw;
}

/* Whether the first segment (or the straight start) is only a lane offset and the road runs
 * straight after it (OSRM's IsDirectOffset). */
static int roffset(const rpt *p, const double *seg, int n, int si, double sd, double len,
                   double lanes) {
    int oi = si > 1 ? si : 1;
    if (oi + 1 >= n) return 0;
    double w = 0;
    for (int i = 0; i <= oi; i++) w += seg[i];
    if (w - 0.5 * lanes * LANE_W >= LANE_W) return 0;
    if (len < 16) return 0;
    if (len - fmax(sd, seg[1]) < 0.1 * len) return 0;
    int e = oi;
    while (e < n && seg[e] < 30) e++;
    e = e + 1 < n ? e + 1 : n;
    return rmaxdev(p + oi, e - oi, p[oi], p[e - 1]) < 0.5 * LANE_W;
}

static rpt representative(rpt *p, int n, unsigned flags, int cls) {
    if (n <= 2) return p[n - 1];
    if (flags & RING) return rat(p, n, 2);
    if (cls == GP_ROAD_UNKNOWN ||
        (cls >= GP_ROAD_SERVICE && cls != GP_ROAD_LIVING_STREET && cls != GP_ROAD_FERRY))
        return p[rtrim(p, n, 10) - 1];
    double factor = cls == GP_ROAD_MOTORWAY || (flags & GP_ARC_LINK && cls <= GP_ROAD_TRUNK) ? 2.5
                    : cls == GP_ROAD_TRUNK                                                   ? 2.0
                    : cls == GP_ROAD_PRIMARY                                                 ? 1.5
                                                                                             : 1.0;
    double lanes = factor * 2, lw = lanes * LANE_W;
    if (rdist(p[0], p[1]) > lw + 10) return p[1];
    n = rtrim(p, n, 40 + lw);
    double seg[RMAX], len = 0;
    seg[0] = 0;
    for (int i = 1; i < n; i++) len += seg[i] = rdist(p[i - 1], p[i]);
    if (n == 2 || len <= 2) return p[n - 1];
    if (rmaxdev(p, n, p[0], p[n - 1]) < 0.5 * LANE_W)
        return rdist(p[0], p[n - 1]) == 0 ? rat(p, n, 2) : p[n - 1];
    double sd = seg[1];
    int si = 2;
    for (; si < n; si++) {
        if (rmaxdev(p, si, p[0], p[si]) < 0.25 * LANE_W) sd += seg[si];
        else break;
    }
    si--;
    if (sd >= lw + 10) return rat(p, n, 5);
    rpt ra, rb;
    rfit(p, n, &ra, &rb);
    if (rmaxdev(p, n, ra, rb) < 0.35 * LANE_W) return rcorrect(ra, rb);
    if (roffset(p, seg, n, si, sd, len, lanes)) {
        int oi = si > 1 ? si : 1;
        return rcorrect(p[oi], p[oi + 1]);
    }
    if (rcurve(p, seg, n, len, lw)) return rcorrect(rat(p, n, 4), rat(p, n, 6));
    double cut = 0.8 * lw, skip = 0.8 * cut, walked = 0;
    int k = 0;
    while (k + 1 < n && walked + seg[k + 1] <= skip) walked += seg[++k];
    if (n - k >= 2 && len >= cut + 2) {
        rpt q[RMAX];
        int m = 0;
        q[m++] = rat(p + k, n - k, skip - walked);
        for (int i = k + 1; i < n; i++) q[m++] = p[i];
        rfit(q, m, &ra, &rb);
        if (m >= 2 && rmaxdev(q, m, ra, rb) < 0.5 * LANE_W) return rcorrect(ra, rb);
    }
    return rat(p, n, 10);
}

/* Bearing from node x along arc a (x its tail; toward its head) or against it (x its head;
 * toward its tail), to the road's representative point (above), or with `close` to its first
 * point more than 1 m away. */
static double arc_bearing(const gp_graph *g, uint32_t a, uint32_t x, int along, int close) {
    const double *sx, *sy;
    uint32_t k = gp_graph_arc_shape(g, a, &sx, &sy),
             far = along ? g->col[a] : gp_graph_arc_tail(g, a);
    double x0 = g->lon[x], y0 = g->lat[x], kx = cos(y0 * M_PI / 180) * M_PI / 180 * 6371008.8,
           ky = M_PI / 180 * 6371008.8;
    rpt p[RMAX];
    int n = 0;
    p[n++] = (rpt){0, 0};
    double walked = 0;
    for (uint32_t i = 0; i <= k && n < RMAX && walked < 80; i++) {
        uint32_t j = along ? i : k - i; /* the i-th point away from x: shape[j], or the far end */
        double qx = i < k ? sx[along ? j : j - 1] : g->lon[far],
               qy = i < k ? sy[along ? j : j - 1] : g->lat[far];
        rpt q = {(qx - x0) * kx, (qy - y0) * ky};
        if (q.x == p[n - 1].x && q.y == p[n - 1].y) continue;
        walked += rdist(p[n - 1], q);
        p[n++] = q;
    }
    if (n < 2) return 0;
    int c = 1;
    while (close && c + 1 < n && rdist(p[0], p[c]) <= 1) c++;
    rpt r = close ? p[c] : representative(p, n, arc_flags(g, a), arc_cls(g, a));
    if (r.x == 0 && r.y == 0) r = p[1];
    return fmod(atan2(r.x, r.y) * 180 / M_PI + 360, 360);
}

static int prefix_of(const char *a, const char *b) { /* a starts with b or b with a */
    size_t la = strlen(a), lb = strlen(b);
    return !strncmp(a, b, la < lb ? la : lb);
}

/* Whether OSRM announces the change of road from arc a to arc b (its requiresNameAnnounced, less
 * the suffix table): not when the names are equal (or one begins the other) and the refs are
 * contained in one another or absent, nor when the name is dropped with the ref kept; always
 * from a road without name and ref to one with either, and from a ref alone to a name alone. */
static int renamed(const gp_graph *g, uint32_t a, uint32_t b) {
    const char *fn = arc_name(g, a), *tn = arc_name(g, b), *fr = arc_ref(g, a), *tr = arc_ref(g, b);
    if (!*fn && !*fr) return *tn || *tr;
    int names_empty = !*fn && !*tn, names_equal = prefix_of(fn, tn);
    int name_removed = *fn && !*tn, refs_empty = !*fr && !*tr;
    int ref_contained = !*fr || !*tr || strstr(fr, tr) || strstr(tr, fr);
    int obvious = (names_empty && refs_empty) || (names_equal && (ref_contained || refs_empty)) ||
                  (name_removed && (ref_contained || refs_empty));
    int needs = !*fn && *fr && *tn && !*tr;
    return !obvious || needs;
}

/* ---- JSON pieces ---- */
static cJSON *loc_json(double lon, double lat) {
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(gp_round_unit(lon, 1e-6)));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(gp_round_unit(lat, 1e-6)));
    return a;
}

/* The lane indication names of OSRM for one turn:lanes value ("none" for an empty one). */
static const char *lane_ind(const char *s, size_t n) {
    static const char *const osm[] = {
        "through",    "left",        "right",   "slight_left",   "slight_right",
        "sharp_left", "sharp_right", "reverse", "merge_to_left", "merge_to_right"};
    static const char *const out[] = {
        "straight",   "left",        "right", "slight left",   "slight right",
        "sharp left", "sharp right", "uturn", "merge to left", "merge to right"};
    for (size_t k = 0; k < sizeof osm / sizeof *osm; k++)
        if (strlen(osm[k]) == n && !strncmp(s, osm[k], n)) return out[k];
    return "none";
}

/* Adds "lanes" to intersection it from the turn:lanes of the arriving arc: each lane's
 * indications, valid when one of them names the direction taken (mod); when no lane names it,
 * lanes naming a direction on the same side (or none, going straight) are the valid ones. */
static void lanes_json(const gp_graph *g, uint32_t in_arc, const char *mod, cJSON *it) {
    size_t len;
    const char *s = in_arc == GP_NONE ? NULL : gp_graph_arc_guide(g, in_arc, GP_GUIDE_LANES, &len);
    if (!s) return;
    cJSON *la = cJSON_AddArrayToObject(it, "lanes");
    int any_exact = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t i = 0;
        int lane = 0;
        while (i <= len) {
            size_t e = i;
            while (e < len && s[e] != '|') e++;
            cJSON *ind = pass ? cJSON_CreateArray() : NULL;
            int exact = 0, side = 0;
            for (size_t j = i; j <= e;) {
                size_t k = j;
                while (k < e && s[k] != ';') k++;
                const char *nm = lane_ind(s + j, k - j);
                if (ind) cJSON_AddItemToArray(ind, cJSON_CreateString(nm));
                if (!strcmp(nm, mod)) exact = 1;
                else if ((strstr(nm, "right") && strstr(mod, "right")) ||
                         (strstr(nm, "left") && strstr(mod, "left")) ||
                         (!strcmp(nm, "none") && !strcmp(mod, "straight")))
                    side = 1;
                j = k + 1;
            }
            if (!pass) any_exact |= exact;
            else {
                cJSON *l = cJSON_CreateObject();
                cJSON_AddItemToObject(l, "indications", ind);
                cJSON_AddBoolToObject(l, "valid", any_exact ? exact : side);
                cJSON_AddItemToArray(la, l);
            }
            lane++;
            i = e + 1;
        }
    }
}

/* The intersection object at node x (junction J), arriving by in_arc and leaving by out_arc
 * (either GP_NONE at a leg's end: then only the road itself is listed). */
static cJSON *intersection_json(const gp_graph *g, uint32_t x, const junction *J, uint32_t in_arc,
                                uint32_t out_arc, const char *mod) {
    cJSON *it = cJSON_CreateObject();
    cJSON_AddItemToObject(it, "location", loc_json(g->lon[x], g->lat[x]));
    int ord[MAXR], bs[MAXR], n = J->n;
    for (int k = 0; k < n; k++) {
        ord[k] = k;
        bs[k] = (int)lround(J->r[k].b) % 360;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && bs[ord[j - 1]] > bs[ord[j]]; j--) {
            int t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    cJSON *ba = cJSON_AddArrayToObject(it, "bearings"), *ea = cJSON_AddArrayToObject(it, "entry");
    int in = -1, out = -1;
    for (int i = 0; i < n; i++) {
        int k = ord[i];
        cJSON_AddItemToArray(ba, cJSON_CreateNumber(bs[k]));
        cJSON_AddItemToArray(ea, cJSON_CreateBool(J->r[k].entry && k != J->in_ix));
        if (k == J->in_ix) in = i;
        if (k == J->out_ix) out = i;
    }
    if (in >= 0) cJSON_AddNumberToObject(it, "in", in);
    if (out >= 0) cJSON_AddNumberToObject(it, "out", out);
    unsigned f = arc_flags(g, out_arc);
    int cls = arc_cls(g, out_arc);
    if (out_arc != GP_NONE && (f & (GP_ARC_TOLL | GP_ARC_TUNNEL | GP_ARC_RESTRICTED) ||
                               cls == GP_ROAD_MOTORWAY || cls == GP_ROAD_FERRY)) {
        cJSON *c = cJSON_AddArrayToObject(it, "classes");
        if (f & GP_ARC_TOLL) cJSON_AddItemToArray(c, cJSON_CreateString("toll"));
        if (cls == GP_ROAD_MOTORWAY) cJSON_AddItemToArray(c, cJSON_CreateString("motorway"));
        if (cls == GP_ROAD_FERRY) cJSON_AddItemToArray(c, cJSON_CreateString("ferry"));
        if (f & GP_ARC_RESTRICTED) cJSON_AddItemToArray(c, cJSON_CreateString("restricted"));
        if (f & GP_ARC_TUNNEL) cJSON_AddItemToArray(c, cJSON_CreateString("tunnel"));
    }
    if (in_arc != GP_NONE && out_arc != GP_NONE && mod) lanes_json(g, in_arc, mod, it);
    return it;
}

/* An end's intersection: one road, the one the leg leaves (depart) or arrives by (arrive). */
static cJSON *end_intersection(double lon, double lat, double b, int depart) {
    cJSON *it = cJSON_CreateObject();
    cJSON_AddItemToObject(it, "location", loc_json(lon, lat));
    cJSON *ba = cJSON_AddArrayToObject(it, "bearings"), *ea = cJSON_AddArrayToObject(it, "entry");
    cJSON_AddItemToArray(ba, cJSON_CreateNumber((int)lround(depart ? b : b + 180) % 360));
    cJSON_AddItemToArray(ea, cJSON_CreateBool(1));
    cJSON_AddNumberToObject(it, depart ? "out" : "in", 0);
    return it;
}

/* ---- decisions ---- */
typedef struct step {
    size_t s, e; /* pieces [s, e) */
    const char *type, *mod;
    int exit;       /* > 0: exit number */
    uint32_t ring;  /* an arc of the rotary (rotary_name), GP_NONE otherwise */
    uint32_t named; /* arc whose name / ref / destinations the step carries */
    double bb, ba;  /* bearing before / after */
    cJSON *its;     /* intersections */
} step;

/* Roads joining ring node y that are not the ring: its neighbours over arcs either way that are
 * not ring arcs, each counted once. */
static int ring_roads(const gp_graph *g, uint32_t y) {
    uint32_t seen[16];
    int n = 0;
    for (uint32_t a = g->row[y]; a < g->row[y + 1]; a++) {
        if (arc_flags(g, a) & RING) continue;
        int dup = 0;
        for (int k = 0; k < n; k++) dup |= seen[k] == g->col[a];
        if (!dup && n < 16) seen[n++] = g->col[a];
    }
    for (uint32_t i = g->rrow[y]; i < g->rrow[y + 1]; i++) {
        uint32_t z = g->rcol[i];
        int ring = 0, dup = 0;
        for (uint32_t a = g->row[z]; a < g->row[z + 1]; a++)
            if (g->col[a] == y && (arc_flags(g, a) & RING)) ring = 1;
        for (int k = 0; k < n; k++) dup |= seen[k] == z;
        if (!ring && !dup && n < 16) seen[n++] = z;
    }
    return n;
}

/* Kind of the roundabout entered by ring arc a at node x: 0 roundabout, 1 rotary, 2 roundabout
 * turn (OSRM's rule: a rotary has one name, not shared by a road joining it, and a radius over
 * 15 m, or is a named junction=circular; a roundabout turn has a radius of 15 m or less, at most
 * four ring nodes, each joined by one road at most). */
static int ring_kind(const gp_graph *g, uint32_t a0) {
    const char *nm = arc_name(g, a0);
    int one_name = *nm != 0, circular = (arc_flags(g, a0) & GP_ARC_CIRCULAR) != 0, shared = 0;
    double len = 0;
    int nodes = 0, limited = 1; /* ring nodes; each joined by one road at most */
    uint32_t x0 = gp_graph_arc_tail(g, a0), a = a0;
    for (int steps = 0; steps < 256; steps++) {
        len += gp_graph_arc_length_m(g, a);
        if (strcmp(arc_name(g, a), nm)) one_name = 0;
        uint32_t y = g->col[a], next = GP_NONE;
        nodes++;
        if (ring_roads(g, y) > 1) limited = 0;
        for (uint32_t b = g->row[y]; b < g->row[y + 1]; b++) {
            if (arc_flags(g, b) & RING) {
                if (next == GP_NONE) next = b;
            } else if (*nm && !strcmp(arc_name(g, b), nm)) {
                shared = 1;
            }
        }
        if (y == x0 || next == GP_NONE) break;
        a = next;
    }
    double radius = len / (2 * M_PI);
    if (one_name && (circular || (!shared && radius > 15))) return 1;
    return radius <= 15 && nodes <= 4 && limited ? 2 : 0;
}

/* Exits leaving the ring at node x (junction J, arriving by a ring arc): roads that may be
 * entered and are not ring arcs, not the road arrived by. With taken >= 0, only those to the right
 * of road `taken` (passed before it, driving on the right). */
static int ring_exits(const gp_graph *g, const junction *J, double b_in, int taken) {
    int c = 0;
    double tt = taken >= 0 ? norm180(J->r[taken].b - b_in) : 0;
    for (int k = 0; k < J->n; k++) {
        if (!J->r[k].entry || k == J->in_ix || k == taken) continue;
        if (arc_flags(g, J->r[k].out) & RING) continue;
        if (taken >= 0 && norm180(J->r[k].b - b_in) <= tt) continue;
        c++;
    }
    return c;
}

/* What OSRM announces at node x between arc A (arriving) and arc B (leaving), neither on a ring:
 * the step type and modifier, or NULL for no step. */
static const char *decide(const gp_graph *g, const junction *J, uint32_t A, uint32_t B, double t,
                          int passed_junction, const char **mod) {
    *mod = modifier_of(t);
    unsigned fa = arc_flags(g, A), fb = arc_flags(g, B);
    int ca = arc_cls(g, A), cb = arc_cls(g, B);
    int hiA = ca == GP_ROAD_MOTORWAY || ca == GP_ROAD_TRUNK,
        hiB = cb == GP_ROAD_MOTORWAY || cb == GP_ROAD_TRUNK;
    int ren = renamed(g, A, B);
    double b_in = J->in_ix >= 0 ? fmod(J->r[J->in_ix].b + 180, 360) : 0;
    /* the ways on: roads that may be entered, not the one arrived by */
    int ne = 0, best = -1, second = -1, same_name = 0;
    double dbest = 999, dsecond = 999;
    for (int k = 0; k < J->n; k++) {
        if (!J->r[k].entry || k == J->in_ix) continue;
        ne++;
        double d = fabs(norm180(J->r[k].b - b_in));
        if (k != J->out_ix && !strcmp(arc_name(g, J->r[k].out), arc_name(g, A)) && *arc_name(g, A))
            same_name = 1;
        if (d < dbest) {
            dsecond = dbest;
            second = best;
            dbest = d;
            best = k;
        } else if (d < dsecond) {
            dsecond = d;
            second = k;
        }
    }
    (void)second;
    if (!(fa & GP_ARC_LINK) && (fb & GP_ARC_LINK) && hiB && ne >= 2) {
        if (fabs(t) <= 20) *mod = t < 0 ? "slight left" : "slight right";
        return hiA ? "off ramp" : "on ramp";
    }
    if ((fa & GP_ARC_LINK) && !(fb & GP_ARC_LINK) && hiB) {
        int joins = 0; /* another road arrives that goes on along B */
        for (int k = 0; k < J->n; k++)
            if (k != J->in_ix && k != J->out_ix && J->r[k].in != GP_NONE &&
                !(arc_flags(g, J->r[k].in) & GP_ARC_LINK))
                joins = 1;
        if (joins) { /* the side merged to: from a ramp on the right, to the left */
            *mod = t > 0 ? "slight left" : "slight right";
            return "merge";
        }
    }
    if (ne <= 1) { /* no choice */
        if (!ren) return NULL;
        return fabs(t) <= 45 || J->n < 3 ? "new name" : "turn";
    }
    int obvious =
        J->out_ix == best && dbest <= 45 &&
        (dsecond - dbest >= 30 || (!ren && !same_name && dbest <= 30 && dsecond - dbest >= 10));
    /* the road keeps its name within 25 degrees of straight (OSRM's fuzzy angle: a named road
     * turning further at a T is announced, `continue`), every other way on is a lesser road (a
     * lower class) and none goes on within 25 degrees of straight */
    if (!ren && !same_name && *arc_name(g, A) && !strcmp(arc_name(g, A), arc_name(g, B)) &&
        fabs(t) <= 25) {
        int rival = 0;
        for (int k = 0; k < J->n; k++)
            if (J->r[k].entry && k != J->in_ix && k != J->out_ix &&
                (fabs(norm180(J->r[k].b - b_in)) < 25 || arc_cls(g, J->r[k].out) <= cb))
                rival = 1;
        if (!rival) obvious = 1;
    }
    /* fork: exactly two ways on, both ahead and alike, neither keeping the name arrived on */
    /* (a way keeping the name arrived on makes no fork when it is 10 degrees straighter than
     * the other) */
    int keeps_best = best >= 0 && *arc_name(g, A) &&
                     !strcmp(arc_name(g, J->r[best].out), arc_name(g, A));
    if (ne == 2 && dbest <= 50 && dsecond <= 50 && dsecond - dbest < 25 && J->n <= 4 && !obvious &&
        !(keeps_best && dsecond - dbest >= 10)) {
        *mod = t < 0 ? "slight left" : "slight right";
        int other = -1;
        for (int k = 0; k < J->n; k++)
            if (J->r[k].entry && k != J->in_ix && k != J->out_ix) other = k;
        if (other >= 0) {
            double to = norm180(J->r[other].b - b_in);
            *mod = t < to ? "slight left" : "slight right";
        }
        return "fork";
    }
    if (!ren) {
        if (obvious || J->n < 3) return NULL;
        return strcmp(arc_name(g, A), arc_name(g, B)) ? "turn" : "continue";
    }
    /* a T: nothing goes on ahead, roads to the left and the right */
    int ahead = 0, left = 0, right = 0;
    for (int k = 0; k < J->n; k++) {
        if (k == J->in_ix) continue;
        double d = norm180(J->r[k].b - b_in);
        if (fabs(d) < 35) ahead = 1;
        else if (d > 0) right = 1;
        else left = 1;
    }
    if (!ahead && left && right && fabs(t) >= 45 && fabs(t) <= 135 && passed_junction) {
        *mod = t < 0 ? "left" : "right";
        return "end of road";
    }
    if (fabs(t) <= 20 && obvious) return "new name";
    return "turn";
}

/* ---- steps ---- */
static double piece_seconds(const gp_graph *g, const gp_osrm_piece *p) {
    return gp_cost_seconds(g, p->cost);
}

static void add_guide_field(const gp_graph *g, uint32_t a, int f, cJSON *s, const char *key) {
    size_t len;
    const char *v = gp_graph_arc_guide(g, a, f, &len);
    if (!v) return;
    char *t = strndup(v, len);
    if (t) cJSON_AddStringToObject(s, key, t);
    free(t);
}

static cJSON *step_json(const gp_osrm_req *q, const gp_osrm_leg *leg, const step *st) {
    const gp_graph *g = q->g;
    size_t p0 = leg->pc[st->s].p0, p1 = leg->pc[st->e - 1].p1;
    double dist = 0, dur = 0, wt = 0;
    for (size_t k = st->s; k < st->e; k++) {
        dist += leg->pc[k].dist_m;
        dur += piece_seconds(g, &leg->pc[k]);
        wt += gp_osrm_weight(g, leg->pc[k].cost);
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(
        s, "geometry", gp_osrm_geometry_json(q, leg->pts.lon + p0, leg->pts.lat + p0, p1 - p0 + 1));
    cJSON *m = cJSON_AddObjectToObject(s, "maneuver");
    cJSON_AddNumberToObject(m, "bearing_after", lround(st->ba) % 360);
    cJSON_AddNumberToObject(m, "bearing_before", lround(st->bb) % 360);
    cJSON_AddItemToObject(m, "location", loc_json(leg->pts.lon[p0], leg->pts.lat[p0]));
    if (st->mod) cJSON_AddStringToObject(m, "modifier", st->mod);
    cJSON_AddStringToObject(m, "type", st->type);
    if (st->exit > 0) cJSON_AddNumberToObject(m, "exit", st->exit);
    cJSON_AddStringToObject(s, "mode", gp_osrm_mode(g));
    cJSON_AddStringToObject(s, "driving_side", "right");
    uint32_t a = st->named;
    cJSON_AddStringToObject(s, "name", arc_name(g, a));
    if (*arc_ref(g, a)) cJSON_AddStringToObject(s, "ref", arc_ref(g, a));
    add_guide_field(g, a, GP_GUIDE_PRONUNCIATION, s, "pronunciation");
    size_t dl, rl;
    const char *d = gp_graph_arc_guide(g, a, GP_GUIDE_DESTINATION, &dl),
               *r = gp_graph_arc_guide(g, a, GP_GUIDE_DEST_REF, &rl);
    if (d || r) { /* OSRM: "ref1, ref2: dest1, dest2" */
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s%s%.*s", (int)rl, r ? r : "", r && d ? ": " : "", (int)dl,
                 d ? d : "");
        for (char *c = buf; (c = strchr(c, ';'));) {
            size_t l = strlen(c);
            if (l + 1 >= sizeof buf - (size_t)(c - buf)) break;
            memmove(c + 1, c, l + 1);
            c[0] = ',';
            c[1] = ' ';
            c += 2;
        }
        cJSON_AddStringToObject(s, "destinations", buf);
    }
    add_guide_field(g, a, GP_GUIDE_EXITS, s, "exits");
    if (st->ring != GP_NONE) {
        cJSON_AddStringToObject(s, "rotary_name", arc_name(g, st->ring));
        size_t pl;
        if (gp_graph_arc_guide(g, st->ring, GP_GUIDE_PRONUNCIATION, &pl))
            add_guide_field(g, st->ring, GP_GUIDE_PRONUNCIATION, s, "rotary_pronunciation");
    }
    cJSON_AddItemToObject(s, "intersections", st->its);
    cJSON_AddNumberToObject(s, "weight", gp_round_unit(wt, 0.1));
    cJSON_AddNumberToObject(s, "duration", gp_round_unit(dur, 0.1));
    cJSON_AddNumberToObject(s, "distance", gp_round_unit(dist, 0.1));
    return s;
}

/* Bearing of the leg's line leaving point i (forward) or arriving at it (backward). */
static double bearing_out(const gp_pts *p, size_t i, size_t end) {
    for (size_t j = i + 1; j <= end && j < p->n; j++)
        if (p->lon[j] != p->lon[i] || p->lat[j] != p->lat[i])
            return gp_bearing_deg(p->lon[i], p->lat[i], p->lon[j], p->lat[j]);
    return 0;
}
static double bearing_in(const gp_pts *p, size_t i, size_t start) {
    for (size_t j = i; j > start;) {
        j--; /* (never below start: no unsigned wrap) */
        if (p->lon[j] != p->lon[i] || p->lat[j] != p->lat[i])
            return gp_bearing_deg(p->lon[j], p->lat[j], p->lon[i], p->lat[i]);
    }
    return 0;
}

static int ways_on(const junction *J) { /* roads that may be entered, not the one arrived by */
    int n = 0;
    for (int k = 0; k < J->n; k++) n += J->r[k].entry && k != J->in_ix;
    return n;
}

static int is_ring_type(const char *type) {
    return !strncmp(type, "roundabout", 10) || !strcmp(type, "rotary") ||
           !strncmp(type, "exit ", 5);
}

/* OSRM's maneuverSucceededBySuppressedDirection: a maneuver followed within 30 m (no junction of
 * three roads or more between) by a junction where the road bends on without a step (OSRM's
 * suppressed turn, `mod` not straight, on the maneuver's side or the maneuver straight) becomes
 * one maneuver at the first junction, its modifier from the angle between the way in there and
 * the way out at the second (ba), unless that is within 12.5 degrees of straight; a `new name`
 * that turns so becomes a `turn`. Forks and merges keep theirs. */
static int collapse_suppressed(const gp_osrm_leg *leg, step *p, size_t i, const char *mod,
                               double ba) {
    if (!strcmp(p->type, "depart") || is_ring_type(p->type) || !strcmp(mod, "straight") ||
        !strcmp(mod, "uturn") || (p->mod && !strcmp(p->mod, "uturn")))
        return 0;
    if (cJSON_GetArraySize(p->its) != 1) return 0;
    double dist = 0;
    for (size_t k = p->s; k < i; k++) dist += leg->pc[k].dist_m;
    if (dist > 30) return 0;
    const char *pm = p->mod ? p->mod : "straight";
    int same_side = !strcmp(pm, "straight") || (strstr(pm, "left") && strstr(mod, "left")) ||
                    (strstr(pm, "right") && strstr(mod, "right"));
    if (!same_side || !strcmp(p->type, "fork") || !strcmp(p->type, "merge")) return 0;
    double total = norm180(ba - p->bb);
    if (fabs(total) < 12.5) return 1; /* OSRM keeps the first turn's angle */
    p->mod = modifier_of(total);
    if (!strcmp(p->type, "new name") && strcmp(p->mod, "straight")) p->type = "turn";
    return 1;
}

static void summary_add(const char *nm, double dist, size_t at, const char *best[2], double len[2],
                        size_t pos[2]) {
    if (!*nm) return;
    for (int s = 0; s < 2; s++)
        if (best[s] && !strcmp(best[s], nm)) {
            len[s] += dist;
            return;
        }
    int slot = len[0] < len[1] ? 0 : 1;
    if (dist > len[slot]) {
        best[slot] = nm;
        len[slot] = dist;
        pos[slot] = at;
    }
}

void gp_osrm_leg_steps(const gp_osrm_req *q, const gp_osrm_leg *leg, cJSON *arr, char *summary,
                       size_t size) {
    const gp_graph *g = q->g;
    const gp_pts *P = &leg->pts;
    summary[0] = '\0';
    size_t last_pt = P->n ? P->n - 1 : 0;
    /* pieces of zero length at the ends (a waypoint on a node) make no step */
    size_t lo = 0, hi = leg->npc;
    while (lo < hi && leg->pc[lo].dist_m <= 0) lo++;
    while (hi > lo && leg->pc[hi - 1].dist_m <= 0) hi--;
    step *st = hi > lo ? calloc(2 * (hi - lo) + 2, sizeof *st) : NULL;
    size_t ns = 0;
    if (hi > lo && !st) return;
    if (hi > lo) {
        const gp_osrm_piece *p = &leg->pc[lo];
        double b = bearing_out(P, p->p0, p->p1);
        st[0] = (step){lo, hi, "depart", NULL, 0, GP_NONE, p->arc, 0, b, cJSON_CreateArray()};
        cJSON_AddItemToArray(st[0].its, end_intersection(P->lon[p->p0], P->lat[p->p0], b, 1));
        ns = 1;
    }
    int on_ring = 0, kind = 0, passed = 0;
    size_t ring_step = 0, sup = 0; /* sup: the piece after the last suppressed turn, 0 none */
    double sup_bb = 0;
    const char *sup_mod = NULL;
    for (size_t i = lo + 1; i < hi; i++) {
        const gp_osrm_piece *pa = &leg->pc[i - 1], *pb = &leg->pc[i];
        uint32_t A = pa->arc, B = pb->arc, x = pb->tail;
        double b_in = bearing_in(P, pb->p0, pa->p0), b_out = bearing_out(P, pb->p0, pb->p1);
        junction J;
        junction_at(g, x, A, B, &J);
        /* the turn as the junction's roads read it (LOOK metres on), else the line's */
        double t = J.in_ix >= 0 && J.out_ix >= 0 ? norm180(J.r[J.out_ix].b - J.r[J.in_ix].b - 180)
                                                 : norm180(b_out - b_in);
        int rA = (arc_flags(g, A) & RING) != 0, rB = (arc_flags(g, B) & RING) != 0;
        const char *type = NULL, *mod = modifier_of(t);
        int ex = 0;
        uint32_t ring = GP_NONE;
        if (!rA && rB) { /* entering a ring */
            on_ring = 1;
            passed = 0;
            kind = ring_kind(g, B);
            type = kind == 1 ? "rotary" : kind == 2 ? "roundabout turn" : "roundabout";
            if (kind == 1) ring = B;
            ring_step = ns;
        } else if (rA && rB) { /* on the ring: exits passed */
            passed += ring_exits(g, &J, b_in, -1);
        } else if (rA && !rB && on_ring) { /* leaving it */
            on_ring = 0;
            ex = passed + ring_exits(g, &J, b_in, J.out_ix) + 1;
            step *rs = &st[ring_step];
            rs->exit = ex;
            rs->named = B;
            /* a roundabout turn's modifier: its entry against its exit (a roundabout's and a
             * rotary's stay the turn onto the ring) */
            if (kind == 2)
                rs->mod = modifier_of(norm180((J.out_ix >= 0 ? J.r[J.out_ix].b : b_out) - rs->bb));
            if (kind != 2) {
                type = kind == 1 ? "exit rotary" : "exit roundabout";
            }
        } else if (!rA && !rB) {
            type = decide(g, &J, A, B, t, cJSON_GetArraySize(st[ns - 1].its) >= 2, &mod);
            int merged = !type && J.n >= 3 && J.out_ix >= 0 &&
                         collapse_suppressed(leg, &st[ns - 1], i, mod, J.r[J.out_ix].b);
            if (!type && J.n >= 3 && !merged && J.in_ix >= 0 && strcmp(mod, "straight")) {
                sup = i; /* a junction without a step where the road turns: OSRM's suppressed */
                sup_bb = fmod(J.r[J.in_ix].b + 180, 360);
                sup_mod = mod;
            } else if (!type && J.n >= 3) {
                sup = 0;
            }
        }
        if (rA || rB) sup = 0;
        double ba = J.out_ix >= 0 ? J.r[J.out_ix].b : b_out;
        /* OSRM's closeChoicelessTurnAfterTurn: a suppressed turn followed within 30 m by a step
         * at a junction with one way on: one step at the suppressed junction (its intersection
         * moves into it), the angle from the way in there to the way out here (the suppressed
         * turn's own within 12.5 degrees of straight); `new name` when straight, else `continue`
         * on the road of the step before, `turn` off it */
        cJSON *moved = NULL;
        size_t start = i;
        double bb_at = J.in_ix >= 0 ? fmod(J.r[J.in_ix].b + 180, 360) : b_in;
        if (type && sup > st[ns - 1].s && !is_ring_type(type) && strcmp(type, "fork") &&
            strcmp(type, "merge") && ways_on(&J) == 1) {
            double dist = 0;
            for (size_t k = sup; k < i; k++) dist += leg->pc[k].dist_m;
            if (dist <= 30 && strcmp(mod, "uturn")) {
                double total = norm180(ba - sup_bb);
                mod = fabs(total) < 12.5 ? sup_mod : modifier_of(total);
                type = !strcmp(mod, "straight")           ? "new name"
                       : !renamed(g, st[ns - 1].named, B) ? "continue"
                                                          : "turn";
                moved = cJSON_DetachItemFromArray(st[ns - 1].its,
                                                  cJSON_GetArraySize(st[ns - 1].its) - 1);
                start = sup;
                bb_at = sup_bb;
            }
        }
        if (type) {
            sup = 0;
            st[ns - 1].e = start;
            /* the maneuver's bearings as the junction reads its roads (OSRM's) */
            st[ns] = (step){start, hi, type, mod, ex, ring, B, bb_at, ba, cJSON_CreateArray()};
            if (moved) cJSON_AddItemToArray(st[ns].its, moved);
            ns++;
        }
        if (type || J.n >= 3 || rA || rB) {
            const step *cur = &st[ns - 1];
            cJSON_AddItemToArray(cur->its, intersection_json(g, x, &J, A, B, modifier_of(t)));
        }
    }
    const char *best_name[2] = {NULL, NULL};
    double best_len[2] = {-1, -1};
    size_t best_at[2] = {0, 0};
    for (size_t k = 0; k < ns; k++) {
        double dist = 0;
        for (size_t j = st[k].s; j < st[k].e; j++) dist += leg->pc[j].dist_m;
        summary_add(arc_name(g, st[k].named), dist, k, best_name, best_len, best_at);
        cJSON_AddItemToArray(arr, step_json(q, leg, &st[k]));
    }
    if (ns == 0) { /* both ends at one point */
        double b = P->n >= 2 ? bearing_out(P, 0, last_pt) : 0;
        step d = {0, 0, "depart", NULL, 0, GP_NONE, GP_NONE, 0, b, cJSON_CreateArray()};
        cJSON_AddItemToArray(d.its, end_intersection(P->lon[0], P->lat[0], b, 1));
        cJSON *s = cJSON_CreateObject();
        cJSON_AddItemToObject(s, "geometry", gp_osrm_geometry_json(q, P->lon, P->lat, P->n));
        cJSON *m = cJSON_AddObjectToObject(s, "maneuver");
        cJSON_AddNumberToObject(m, "bearing_after", lround(b) % 360);
        cJSON_AddNumberToObject(m, "bearing_before", 0);
        cJSON_AddItemToObject(m, "location", loc_json(P->lon[0], P->lat[0]));
        cJSON_AddStringToObject(m, "type", "depart");
        cJSON_AddStringToObject(s, "mode", gp_osrm_mode(g));
        cJSON_AddStringToObject(s, "driving_side", "right");
        cJSON_AddStringToObject(s, "name", leg->npc ? arc_name(g, leg->pc[0].arc) : "");
        cJSON_AddItemToObject(s, "intersections", d.its);
        cJSON_AddNumberToObject(s, "weight", 0);
        cJSON_AddNumberToObject(s, "duration", 0);
        cJSON_AddNumberToObject(s, "distance", 0);
        cJSON_AddItemToArray(arr, s);
    }
    free(st);
    /* arrive: at the end of the last piece with a length */
    size_t end_pt = hi > lo ? leg->pc[hi - 1].p1 : last_pt;
    size_t start_pt = hi > lo ? leg->pc[hi - 1].p0 : 0;
    double b_last = end_pt ? bearing_in(P, end_pt, start_pt < end_pt ? start_pt : 0) : 0;
    const char *side = NULL;
    if (end_pt && leg->b->dist_m >= 5) {
        double r = M_PI / 180, dx = sin(b_last * r), dy = cos(b_last * r);
        double px = (leg->b->qlon - P->lon[end_pt]) * cos(P->lat[end_pt] * r),
               py = leg->b->qlat - P->lat[end_pt];
        side = dx * py - dy * px > 0 ? "left" : "right";
    }
    uint32_t la = hi > lo ? leg->pc[hi - 1].arc : leg->npc ? leg->pc[0].arc : GP_NONE;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToObject(s, "geometry",
                          gp_osrm_geometry_json(q, (double[]){P->lon[end_pt], P->lon[end_pt]},
                                                (double[]){P->lat[end_pt], P->lat[end_pt]}, 2));
    cJSON *m = cJSON_AddObjectToObject(s, "maneuver");
    cJSON_AddNumberToObject(m, "bearing_after", 0);
    cJSON_AddNumberToObject(m, "bearing_before", lround(b_last) % 360);
    cJSON_AddItemToObject(m, "location", loc_json(P->lon[end_pt], P->lat[end_pt]));
    if (side) cJSON_AddStringToObject(m, "modifier", side);
    cJSON_AddStringToObject(m, "type", "arrive");
    cJSON_AddStringToObject(s, "mode", gp_osrm_mode(g));
    cJSON_AddStringToObject(s, "driving_side", "right");
    cJSON_AddStringToObject(s, "name", arc_name(g, la));
    if (*arc_ref(g, la)) cJSON_AddStringToObject(s, "ref", arc_ref(g, la));
    cJSON *its = cJSON_AddArrayToObject(s, "intersections");
    cJSON_AddItemToArray(its, end_intersection(P->lon[end_pt], P->lat[end_pt], b_last, 0));
    cJSON_AddNumberToObject(s, "weight", 0);
    cJSON_AddNumberToObject(s, "duration", 0);
    cJSON_AddNumberToObject(s, "distance", 0);
    cJSON_AddItemToArray(arr, s);
    int first = best_name[0] && best_name[1] ? (best_at[0] < best_at[1] ? 0 : 1)
                : best_name[0]               ? 0
                                             : 1;
    if (best_name[first]) {
        snprintf(summary, size, "%s", best_name[first]);
        if (best_name[1 - first])
            snprintf(summary + strlen(summary), size - strlen(summary), ", %s",
                     best_name[1 - first]);
    }
}

/* ---- the tile service's turns layer ---- */
const char *gp_osrm_turn_type(const gp_graph *g, uint32_t A, uint32_t B, double t,
                              const char **mod) {
    unsigned ra = arc_flags(g, A) & RING, rb = arc_flags(g, B) & RING;
    *mod = modifier_of(t);
    if (ra && rb) return "(stay on roundabout)";
    if (rb) return "enter roundabout";
    if (ra) return "exit roundabout";
    junction J;
    junction_at(g, g->col[A], A, B, &J);
    const char *type = decide(g, &J, A, B, t, 1, mod);
    return type ? type : J.n < 3 ? "(noturn)" : "(suppressed)";
}
