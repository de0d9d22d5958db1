/* tile.c - OSRM's tile service: GET /tile/v1/{profile}/tile(x,y,z).mvt, a Mapbox Vector Tile of
 * the routing graph as OSRM v6 draws it (its debug map and several frontends read it), z 12..19.
 *
 * Layers, property keys and value types are OSRM's (engine/plugins/tile.cpp):
 *  - speeds: one line per road segment (two consecutive points of an arc's geometry) and
 *    direction, id 1, 2, ...: speed (uint, km/h, at most 127), is_small (bool: off the big
 *    strongly connected components, as OSRM's tiny components), datasource (string: "lua profile",
 *    "traffic" where a speed update changed the arc), weight and duration (double, seconds, the
 *    arc's share by length in OSRM's tenths), name (string, "" when none), rate (double, metres per
 *    tenth of weight as OSRM computes it), is_startpoint (bool: false on ferries);
 *  - turns (z >= 15, graphs with turn costs): a point at each intersection per allowed turn
 *    except U-turns: bearing_in and turn_angle (sint, degrees), cost and weight (float, seconds of
 *    the turn's own cost, graph/turns.h), type and modifier (string: OSRM's internal turn type
 *    names as guidance.c decides them);
 *  - osmnodes: a point per OSM node of the roads in the tile, id = the node's OSM id;
 *  - internal-nodes: written empty (OSRM draws segregated dual-carriageway pieces there; gpath
 *    does not classify them).
 * Lines are clipped to the tile plus a 128-unit buffer of its 4096 (OSRM's). A tile where the
 * graph has no road is 200 with an empty body (as OSRM); a zoom outside 12..19 or x / y outside
 * the zoom's range is 400 InvalidOptions; a tile over tile_max_features features is 400 TooBig.
 * Tiles are cached per graph version (server/tilecache.h).
 */
#include "server/osrm/osrm.h"

#include "graph/spatial.h"
#include "graph/turns.h"
#include "server/api/mvt.h"
#include "server/osrm/internal.h"
#include "server/tilecache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER 128.0
enum { MIN_ZOOM = 12, MAX_ZOOM = 19, MIN_ZOOM_TURNS = 15 };

typedef struct tile_job {
    gp_graph *g;
    uint32_t z, x, y;
    long max_features;
    /* the tile's box in degrees, widened by 10% of its size on each side (OSRM's query box) */
    double lon0, lat0, lon1, lat1;
} tile_job;

/* Point i (0 .. shape count + 1) of arc a's polyline: its tail u, shape points, head. */
static void arc_pt(const gp_graph *g, uint32_t a, uint32_t u, uint32_t k, const double *sx,
                   const double *sy, uint32_t i, double *lon, double *lat) {
    if (i == 0) {
        *lon = g->lon[u];
        *lat = g->lat[u];
    } else if (i <= k) {
        *lon = sx[i - 1];
        *lat = sy[i - 1];
    } else {
        *lon = g->lon[g->col[a]];
        *lat = g->lat[g->col[a]];
    }
}

static int seg_in_box(const tile_job *j, double ax, double ay, double bx, double by) {
    return fmax(ax, bx) >= j->lon0 && fmin(ax, bx) <= j->lon1 && fmax(ay, by) >= j->lat0 &&
           fmin(ay, by) <= j->lat1;
}

/* 1 when arc a's bounding box overlaps the query box. */
static int arc_in_box(const tile_job *j, const gp_graph *g, uint32_t a, uint32_t u) {
    double b[4];
    gp_arc_bbox(g, a, u, b);
    return b[2] >= j->lon0 && b[0] <= j->lon1 && b[3] >= j->lat0 && b[1] <= j->lat1;
}

typedef struct osmnode {
    int64_t id;
    int32_t x, y;
} osmnode;

static int cmp_osmnode(const void *a, const void *b) {
    const osmnode *p = a, *q = b;
    return p->id < q->id ? -1 : p->id > q->id;
}

typedef struct nodes {
    osmnode *v;
    size_t n, cap;
    int oom;
} nodes;

static void node_add(nodes *s, const tile_job *j, int64_t id, double lon, double lat) {
    double px, py;
    gp_tile_project(j->z, j->x, j->y, GP_MVT_EXTENT, lon, lat, &px, &py);
    if (s->oom || px < -BUFFER || py < -BUFFER || px > GP_MVT_EXTENT + BUFFER ||
        py > GP_MVT_EXTENT + BUFFER)
        return;
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 256;
        osmnode *v = realloc(s->v, c * sizeof *v);
        if (!v) {
            s->oom = 1;
            return;
        }
        s->v = v;
        s->cap = c;
    }
    s->v[s->n++] = (osmnode){id, (int32_t)lround(px), (int32_t)lround(py)};
}

/* The speeds layer; the OSM nodes of the segments drawn go to *ns. -1 past max features. */
static int speeds_layer(const tile_job *j, gp_mvt *t, nodes *ns) {
    const gp_graph *g = j->g;
    const uint8_t *big = NULL;
    const uint32_t *comp = NULL;
    gp_snap_components(g, &comp, &big);
    const gp_graph *base = g->base;
    uint64_t id = 1;
    gp_mvt_layer(t, "speeds", GP_MVT_EXTENT);
    for (uint32_t u = 0; u < g->n; u++) {
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            if (g->col[a] == u || !arc_in_box(j, g, a, u)) continue;
            const double *sx, *sy;
            uint32_t k = gp_graph_arc_shape(g, a, &sx, &sy);
            double total = 0, lo, la, lo2, la2;
            for (uint32_t i = 0; i <= k; i++) {
                arc_pt(g, a, u, k, sx, sy, i, &lo, &la);
                arc_pt(g, a, u, k, sx, sy, i + 1, &lo2, &la2);
                total += gp_haversine_m(lo, la, lo2, la2);
            }
            double dur_ds = gp_graph_arc_duration_s(g, a) * 10,
                   wgt_ds = gp_osrm_weight(g, g->w[a]) * 10;
            if (!(total > 0) || !isfinite(dur_ds)) continue;
            const char *name = gp_graph_arc_name(g, a);
            int small = !big || !big[u] || !big[g->col[a]];
            int ferry = g->arc_class && g->arc_class[a] == GP_ROAD_FERRY;
            const char *ds = base && base->w[a] != g->w[a] ? "traffic" : "lua profile";
            for (uint32_t i = 0; i <= k; i++) {
                arc_pt(g, a, u, k, sx, sy, i, &lo, &la);
                arc_pt(g, a, u, k, sx, sy, i + 1, &lo2, &la2);
                if (!seg_in_box(j, lo, la, lo2, la2)) continue;
                double len = gp_haversine_m(lo, la, lo2, la2);
                double seg_dur = round(dur_ds * len / total), seg_w = round(wgt_ds * len / total);
                if (seg_dur <= 0) continue; /* OSRM draws no segment of zero duration */
                double px[2], py[2];
                gp_tile_project(j->z, j->x, j->y, GP_MVT_EXTENT, lo, la, &px[0], &py[0]);
                gp_tile_project(j->z, j->x, j->y, GP_MVT_EXTENT, lo2, la2, &px[1], &py[1]);
                gp_mvt_feature(t, GP_MVT_LINESTRING, id);
                if (!gp_mvt_line_clip(t, px, py, 2, -BUFFER, GP_MVT_EXTENT + BUFFER)) continue;
                double speed = round(len / seg_dur * 36);
                gp_mvt_prop_uint(t, "speed", speed > 127 ? 127 : (uint64_t)speed);
                gp_mvt_prop_bool(t, "is_small", small);
                gp_mvt_prop_str(t, "datasource", ds);
                /* OSRM keeps these values as floats: the same numbers (0.2 is 0.2000000029...) */
                gp_mvt_prop_double(t, "weight", (float)(seg_w / 10));
                gp_mvt_prop_double(t, "duration", (float)(seg_dur / 10));
                gp_mvt_prop_str(t, "name", name ? name : "");
                gp_mvt_prop_double(t, "rate",
                                   (float)(seg_w > 0 ? round(len / seg_w * 10) / 10 : 0));
                gp_mvt_prop_bool(t, "is_startpoint", !ferry);
                gp_mvt_commit(t);
                if ((long)gp_mvt_count(t) > j->max_features) return -1;
                id++;
                if (i == 0) node_add(ns, j, gp_graph_orig_id(g, u), lo, la);
                if (i == k) node_add(ns, j, gp_graph_orig_id(g, g->col[a]), lo2, la2);
                if (i + 1 <= k && g->shape_osm_id)
                    node_add(ns, j, g->shape_osm_id[g->arc_shape[a] + i], lo2, la2);
            }
        }
    }
    return 0;
}

typedef struct turn {
    int32_t x, y;
    int bearing_in, angle;
    float cost;
    const char *type, *mod;
} turn;

/* The turns at the intersections in the tile (arcs A into a node inside the clip box, each
 * allowed turn A -> B but U-turns); *out malloc'd. -1 when out of memory. */
static long collect_turns(const tile_job *j, turn **out) {
    const gp_graph *g = j->g;
    const gp_turns *ts = g->turns;
    *out = NULL;
    if (!ts || !ts->tg) return 0;
    const gp_graph *tg = ts->tg, *btg = ts->base ? ts->base->tg : tg, *bg = gp_graph_owner(g);
    size_t n = 0, cap = 0;
    turn *v = NULL;
    for (uint32_t u = 0; u < g->n; u++) {
        for (uint32_t A = g->row[u]; A < g->row[u + 1]; A++) {
            uint32_t x = g->col[A];
            if (x == u || g->lon[x] < j->lon0 || g->lon[x] > j->lon1 || g->lat[x] < j->lat0 ||
                g->lat[x] > j->lat1)
                continue;
            double px, py;
            gp_tile_project(j->z, j->x, j->y, GP_MVT_EXTENT, g->lon[x], g->lat[x], &px, &py);
            if (px <= -BUFFER || py <= -BUFFER || px >= GP_MVT_EXTENT + BUFFER ||
                py >= GP_MVT_EXTENT + BUFFER)
                continue;
            const double *sx, *sy;
            uint32_t k = gp_graph_arc_shape(g, A, &sx, &sy);
            double flo, fla; /* the point before the intersection along A */
            arc_pt(g, A, u, k, sx, sy, k, &flo, &fla);
            int b_in = (int)gp_bearing_deg(flo, fla, g->lon[x], g->lat[x]);
            for (uint32_t e = tg->row[A]; e < tg->row[A + 1]; e++) {
                uint32_t B = gp_turns_arc(ts, tg->col[e]);
                const double *bx, *by;
                uint32_t kb = gp_graph_arc_shape(g, B, &bx, &by);
                double tlo, tla; /* the point after it along B */
                arc_pt(g, B, x, kb, bx, by, 1, &tlo, &tla);
                if (tlo == flo && tla == fla) continue; /* a U-turn */
                int b_out = (int)gp_bearing_deg(g->lon[x], g->lat[x], tlo, tla);
                int ang = b_out - b_in;
                while (ang > 180) ang -= 360;
                while (ang < -180) ang += 360;
                if (n == cap) {
                    cap = cap ? cap * 2 : 256;
                    turn *w = realloc(v, cap * sizeof *w);
                    if (!w) {
                        free(v);
                        return -1;
                    }
                    v = w;
                }
                double c = (double)btg->w[e] - (double)bg->w[B];
                turn *t = &v[n++];
                t->x = (int32_t)lround(px);
                t->y = (int32_t)lround(py);
                t->bearing_in = b_in;
                t->angle = ang;
                t->cost = (float)(c > 0 ? gp_osrm_weight(g, (uint64_t)c) : 0);
                t->type = gp_osrm_turn_type(g, A, B, ang, &t->mod);
            }
        }
    }
    *out = v;
    return (long)n;
}

static char *build_tile(void *ctx, size_t *len, gp_err *err) {
    const tile_job *j = ctx;
    gp_mvt *t = gp_mvt_new();
    nodes ns = {0};
    if (!t) goto oom;
    if (speeds_layer(j, t, &ns) < 0) {
        gp_mvt_free(t);
        free(ns.v);
        gp_err_set(err, GP_ETOOBIG,
                   "tile(%u,%u,%u) holds more than %ld features (tile_max_features): ask a "
                   "higher zoom",
                   j->x, j->y, j->z, j->max_features);
        return NULL;
    }
    size_t drawn = gp_mvt_count(t);
    if (j->z >= MIN_ZOOM_TURNS) {
        turn *tv;
        long nt = collect_turns(j, &tv);
        if (nt < 0) goto oom;
        if (nt > 0) gp_mvt_layer(t, "turns", GP_MVT_EXTENT);
        for (long i = 0; i < nt; i++) {
            gp_mvt_feature(t, GP_MVT_POINT, (uint64_t)i + 1);
            gp_mvt_point(t, tv[i].x, tv[i].y);
            gp_mvt_prop_sint(t, "bearing_in", tv[i].bearing_in);
            gp_mvt_prop_sint(t, "turn_angle", tv[i].angle);
            gp_mvt_prop_float(t, "cost", tv[i].cost);
            gp_mvt_prop_float(t, "weight", tv[i].cost);
            gp_mvt_prop_str(t, "type", tv[i].type);
            gp_mvt_prop_str(t, "modifier", tv[i].mod);
            gp_mvt_commit(t);
        }
        free(tv);
    }
    if (ns.oom) goto oom;
    if (ns.n) qsort(ns.v, ns.n, sizeof *ns.v, cmp_osmnode);
    gp_mvt_layer(t, "osmnodes", GP_MVT_EXTENT);
    for (size_t i = 0; i < ns.n; i++) {
        if (i && ns.v[i].id == ns.v[i - 1].id) continue;
        gp_mvt_feature(t, GP_MVT_POINT, (uint64_t)ns.v[i].id);
        gp_mvt_point(t, ns.v[i].x, ns.v[i].y);
        gp_mvt_commit(t);
    }
    free(ns.v);
    ns.v = NULL;
    gp_mvt_layer(t, "internal-nodes", GP_MVT_EXTENT);
    char *out = gp_mvt_finish_drawn(t, drawn, len);
    if (!out) gp_err_set(err, GP_ENOMEM, "out of memory encoding a tile");
    return out;
oom:
    gp_mvt_free(t);
    free(ns.v);
    gp_err_set(err, GP_ENOMEM, "out of memory building a tile");
    return NULL;
}

/* Parses "tile(x,y,z).mvt"; 1 on success. */
static int parse_tile(const char *s, uint32_t *x, uint32_t *y, uint32_t *z) {
    unsigned long v[3];
    if (strncmp(s, "tile(", 5)) return 0;
    s += 5;
    for (int i = 0; i < 3; i++) {
        if (*s < '0' || *s > '9') return 0;
        char *end;
        v[i] = strtoul(s, &end, 10);
        if (v[i] > 0xffffffffUL || *end != (i < 2 ? ',' : ')')) return 0;
        s = end + 1;
    }
    if (strcmp(s, ".mvt")) return 0;
    *x = (uint32_t)v[0];
    *y = (uint32_t)v[1];
    *z = (uint32_t)v[2];
    return 1;
}

void gp_h_osrm_tile(gp_req *r) {
    const char *profile = gp_req_param(r, "profile"), *spec = gp_req_param(r, "tile");
    tile_job j = {0};
    if (!spec || !parse_tile(spec, &j.x, &j.y, &j.z)) {
        gp_osrm_error(r, 400, "InvalidUrl",
                      "the tile service's URL ends in tile(x,y,z).mvt, got '%.64s'",
                      spec ? spec : "");
        return;
    }
    if (j.z < MIN_ZOOM || j.z > MAX_ZOOM || !gp_tile_valid(j.z, j.x, j.y)) {
        gp_osrm_error(r, 400, "InvalidOptions",
                      "Invalid coordinates: tile(%u,%u,%u) needs zoom %d..%d (as OSRM) and x, y "
                      "below 2^zoom",
                      j.x, j.y, j.z, MIN_ZOOM, MAX_ZOOM);
        return;
    }
    char name[65] = "", why[256];
    /* several graphs of the profile: the one whose road area holds the tile's centre (the
     * smallest such area, gp_osrm_pick_graph); a tile in no region is empty, as OSRM's outside
     * its data */
    double c0, c1, c2, c3;
    gp_tile_bounds(j.z, j.x, j.y, &c0, &c1, &c2, &c3);
    double clon = (c0 + c2) / 2, clat = (c1 + c3) / 2;
    int pick =
        gp_osrm_pick_graph(profile ? profile : "", &clon, &clat, 1, &j.g, name, why, sizeof why);
    if (pick == GP_OSRM_PICK_NONE) {
        gp_http_text(r, 200, "application/x-protobuf", "", 0);
        return;
    }
    if (pick != GP_OSRM_PICK_OK) {
        gp_osrm_error(r, 400, "InvalidQuery", "%s", why);
        return;
    }
    if (!j.g->lon || gp_osrm_no_durations(j.g)) {
        gp_osrm_error(r, 400, "InvalidQuery",
                      "graph '%s' has no %s: the tile service draws road speeds on a map", name,
                      j.g->lon ? "travel times" : "coordinates");
        gp_graph_unref(j.g);
        return;
    }
    j.max_features = gp_http_config()->tile_max_features;
    double lon0, lat0, lon1, lat1;
    gp_tile_bounds(j.z, j.x, j.y, &lon0, &lat0, &lon1, &lat1);
    double bx = (lon1 - lon0) * 0.1, by = (lat1 - lat0) * 0.1;
    j.lon0 = lon0 - bx;
    j.lon1 = lon1 + bx;
    j.lat0 = lat0 - by;
    j.lat1 = lat1 + by;
    char key[160];
    snprintf(key, sizeof key, "osrm:%s:%s:%u/%u/%u", name, j.g->version, j.z, j.x, j.y);
    gp_err err = {0};
    if (gp_tile_answer(r, key, "application/x-protobuf", build_tile, &j, &err))
        gp_osrm_error_err(r, &err);
    gp_graph_unref(j.g);
}
