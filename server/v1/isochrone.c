/* isochrone.c - isochrones: GET /v1/graphs/{graph}/isochrone?lon=..&lat=..&contours=300,600,900
 * (seconds; contours_type=distance for metres; points=lon,lat;lon,lat for several origins).
 *
 * Method, per origin:
 *  1. Snap the point (engine/snap.h) and run ONE one-to-all from it with a cutoff at the largest
 *     contour (gp_engine_sssp_snap with max_dist, which the GPU backend serves). Distance contours
 *     measure metres along the fastest paths (the shortest-path tree), so that search has no
 *     cutoff.
 *  2. For each contour C, every arc u->v with value(u) <= C is reached up to the fraction
 *     (C - value(u)) / value(arc) of its length; the reached part of its geometry (shape points
 *     included) is rasterised onto a grid whose cell is 1/200 of the reached extent (at least
 *     10 m), the same grid for all contours of an origin.
 *  3. Morphological closing: dilate by 3 cells, erode by 2 (square structuring element), which
 *     fills city blocks between reached roads and keeps large unreached areas (parks, water,
 *     roads too slow to reach) as holes.
 *  4. Cells touching only at a corner are joined by filling one more cell, so the boundary has no
 *     saddle and every ring is simple; then marching squares on the cell grid (cell-edge boundary
 *     tracing): counter-clockwise rings are outer boundaries, clockwise ones holes, each hole
 *     given to the smallest outer ring containing it (RFC 7946 winding).
 *     Rings are simplified by Douglas-Peucker at half a cell.
 * Answer: a GeoJSON FeatureCollection, one Feature per (origin, contour), largest contour first,
 * geometry a MultiPolygon, properties {contour, contours_type, point_index, lon, lat, cell_m}.
 */
#include "server/v1/isochrone.h"

#include "graph/spatial.h"
#include "server/api/arcs.h"
#include "server/api/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEG_M (GP_EARTH_RADIUS_M * M_PI / 180)

typedef struct grid {
    int w, h;
    double lon0, lat0, dlon, dlat; /* cell (0,0)'s south-west corner, cell size in degrees */
    uint8_t *a;
} grid;

static void mark(grid *g, double lon, double lat) {
    int x = (int)floor((lon - g->lon0) / g->dlon), y = (int)floor((lat - g->lat0) / g->dlat);
    if (x >= 0 && y >= 0 && x < g->w && y < g->h) g->a[(size_t)y * g->w + x] = 1;
}

/* Marks the cells along segment a-b (samples every half cell). */
static void mark_seg(grid *g, double ax, double ay, double bx, double by) {
    double steps = fmax(fabs(bx - ax) / g->dlon, fabs(by - ay) / g->dlat) * 2 + 1;
    int n = steps > 1e6 ? 1000000 : (int)steps;
    for (int i = 0; i <= n; i++) mark(g, ax + (bx - ax) * i / n, ay + (by - ay) * i / n);
}

/* Square dilation (grow = 1) or erosion (grow = 0) by k cells, separable. */
static void morph(grid *g, int k, int grow, uint8_t *tmp) {
    int w = g->w, h = g->h;
    for (int pass = 0; pass < 2; pass++) {
        const uint8_t *src = pass ? tmp : g->a;
        uint8_t *dst = pass ? g->a : tmp;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int v = grow ? 0 : 1;
                for (int d = -k; d <= k; d++) {
                    int xx = pass ? x : x + d, yy = pass ? y + d : y;
                    int in = xx >= 0 && yy >= 0 && xx < w && yy < h ? src[(size_t)yy * w + xx] : 0;
                    if (grow ? in : !in) {
                        v = grow ? 1 : 0;
                        break;
                    }
                }
                dst[(size_t)y * w + x] = (uint8_t)v;
            }
    }
}

static int cell(const grid *g, int x, int y) {
    return x >= 0 && y >= 0 && x < g->w && y < g->h && g->a[(size_t)y * g->w + x];
}

/* Fills one empty cell of every 2 x 2 block whose filled cells touch only at a corner, until none
 * is left (filling only grows the area, so this ends): the boundary then has no saddle vertex and
 * every traced ring is simple. */
static void unpinch(grid *g) {
    for (int pass = 0, changed = 1; changed && pass < 64; pass++) {
        changed = 0;
        for (int y = 0; y + 1 < g->h; y++)
            for (int x = 0; x + 1 < g->w; x++) {
                int a = cell(g, x, y), b = cell(g, x + 1, y), c = cell(g, x, y + 1),
                    d = cell(g, x + 1, y + 1);
                if (a == d && b == c && a != b) {
                    g->a[(size_t)y * g->w + x + (a ? 1 : 0)] = 1; /* join the diagonal pair */
                    changed = 1;
                }
            }
    }
}

typedef struct ring {
    gp_pts p;    /* closed: first point repeated last; grid vertex coordinates */
    double area; /* signed, > 0 counter-clockwise */
    int parent;  /* for holes: index of the outer ring */
} ring;

/* Traces every boundary of the grid into rings (vertex coordinates in cell units). Directed
 * edges keep the filled cell on their left. */
static int trace(const grid *g, ring **out, int *nout) {
    int W = g->w + 1, H = g->h + 1;
    /* for each vertex, up to 2 outgoing edges: direction 0 E, 1 N, 2 W, 3 S */
    uint8_t *out_dirs = calloc((size_t)W * H, 1);
    if (!out_dirs) return -1;
    for (int y = -1; y < g->h; y++)
        for (int x = -1; x < g->w; x++) {
            /* horizontal edge between cell (x, y) below and (x, y+1) above, at vertex row y+1 */
            if (x >= 0) {
                int below = cell(g, x, y), above = cell(g, x, y + 1);
                if (below && !above) out_dirs[(size_t)(y + 1) * W + x + 1] |= 1 << 2; /* west */
                if (!below && above) out_dirs[(size_t)(y + 1) * W + x] |= 1 << 0;     /* east */
            }
            if (y >= 0) {
                int left = cell(g, x, y), right = cell(g, x + 1, y);
                if (left && !right) out_dirs[(size_t)y * W + x + 1] |= 1 << 1;       /* north */
                if (!left && right) out_dirs[(size_t)(y + 1) * W + x + 1] |= 1 << 3; /* south */
            }
        }
    static const int dx[4] = {1, 0, -1, 0}, dy[4] = {0, 1, 0, -1};
    ring *rs = NULL;
    int nr = 0;
    /* start at vertices with one outgoing edge (never saddles) first: a ring then ends where
     * it started */
    for (int pass = 0; pass < 2; pass++)
        for (size_t v0 = 0; v0 < (size_t)W * H; v0++) {
            while (out_dirs[v0] && (pass || (out_dirs[v0] & (out_dirs[v0] - 1)) == 0)) {
                ring r;
                memset(&r, 0, sizeof r);
                int x = (int)(v0 % W), y = (int)(v0 / W), d = -1;
                for (;;) {
                    uint8_t m = out_dirs[(size_t)y * W + x];
                    if (!m || (d >= 0 && (size_t)y * W + x == v0)) break;
                    int nd = -1;
                    if (d < 0) {
                        for (int k = 0; k < 4 && nd < 0; k++)
                            if (m & (1 << k)) nd = k;
                    } else {
                        /* a saddle (only if unpinch gave up): prefer a left turn, then straight,
                     * then right, which keeps the boundary around one filled cell */
                        int pref[3] = {(d + 1) & 3, d, (d + 3) & 3};
                        for (int k = 0; k < 3 && nd < 0; k++)
                            if (m & (1 << pref[k])) nd = pref[k];
                        if (nd < 0) break;
                    }
                    if (nd != d && gp_pts_add(&r.p, x, y, 0)) break;
                    out_dirs[(size_t)y * W + x] &= (uint8_t) ~(1 << nd);
                    x += dx[nd];
                    y += dy[nd];
                    d = nd;
                }
                if (r.p.n >= 3) {
                    gp_pts_add(&r.p, r.p.lon[0], r.p.lat[0], 0);
                    double a = 0;
                    for (size_t i = 0; i + 1 < r.p.n; i++)
                        a += r.p.lon[i] * r.p.lat[i + 1] - r.p.lon[i + 1] * r.p.lat[i];
                    r.area = a / 2;
                    r.parent = -1;
                    ring *t = realloc(rs, sizeof *t * (nr + 1));
                    if (!t) {
                        gp_pts_free(&r.p);
                        break;
                    }
                    rs = t;
                    rs[nr++] = r;
                } else {
                    gp_pts_free(&r.p);
                }
            }
        }
    free(out_dirs);
    *out = rs;
    *nout = nr;
    return 0;
}

static int inside(const gp_pts *p, double x, double y) {
    int in = 0;
    for (size_t i = 0, j = p->n - 1; i < p->n; j = i++)
        if ((p->lat[i] > y) != (p->lat[j] > y) &&
            x < (p->lon[j] - p->lon[i]) * (y - p->lat[i]) / (p->lat[j] - p->lat[i]) + p->lon[i])
            in = !in;
    return in;
}

static cJSON *ring_json(const grid *g, const gp_pts *p) {
    uint8_t *keep = malloc(p->n);
    if (keep) {
        /* DP in cell units: 0.5 cell; convert to metres for gp_simplify_dp's metric plane */
        gp_pts geo;
        memset(&geo, 0, sizeof geo);
        for (size_t i = 0; i < p->n; i++)
            gp_pts_add(&geo, g->lon0 + p->lon[i] * g->dlon, g->lat0 + p->lat[i] * g->dlat, 0);
        gp_simplify_dp(geo.lon, geo.lat, geo.n, 0.5 * g->dlat * DEG_M, keep);
        size_t k = 0;
        for (size_t i = 0; i < p->n; i++) k += keep[i];
        if (k < 4) memset(keep, 1, p->n);
        gp_pts_free(&geo);
    }
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < p->n; i++) {
        if (keep && !keep[i]) continue;
        cJSON *pt = cJSON_CreateArray();
        cJSON_AddItemToArray(
            pt, cJSON_CreateNumber(gp_round_unit(g->lon0 + p->lon[i] * g->dlon, 1e-6)));
        cJSON_AddItemToArray(
            pt, cJSON_CreateNumber(gp_round_unit(g->lat0 + p->lat[i] * g->dlat, 1e-6)));
        cJSON_AddItemToArray(a, pt);
    }
    free(keep);
    return a;
}

/* The MultiPolygon coordinates of the grid's filled area. */
static cJSON *polygons(const grid *g) {
    ring *rs = NULL;
    int nr = 0;
    cJSON *mp = cJSON_CreateArray();
    if (trace(g, &rs, &nr)) return mp;
    for (int i = 0; i < nr; i++) {
        if (rs[i].area >= 0) continue;
        double bx = (rs[i].p.lon[0] + rs[i].p.lon[1]) / 2,
               by = (rs[i].p.lat[0] + rs[i].p.lat[1]) / 2;
        double best = INFINITY;
        for (int j = 0; j < nr; j++)
            if (rs[j].area > 0 && rs[j].area < best && rs[j].area > -rs[i].area &&
                inside(&rs[j].p, bx, by)) {
                best = rs[j].area;
                rs[i].parent = j;
            }
    }
    for (int j = 0; j < nr; j++) {
        if (rs[j].area <= 0) continue;
        cJSON *poly = cJSON_CreateArray();
        cJSON_AddItemToArray(poly, ring_json(g, &rs[j].p));
        for (int i = 0; i < nr; i++)
            if (rs[i].area < 0 && rs[i].parent == j)
                cJSON_AddItemToArray(poly, ring_json(g, &rs[i].p));
        cJSON_AddItemToArray(mp, poly);
    }
    for (int i = 0; i < nr; i++) gp_pts_free(&rs[i].p);
    free(rs);
    return mp;
}

/* value of each node (seconds / cost units, or metres along the tree); NAN when unreached */
static void node_values(const gp_graph *g, const gp_snap *s, const uint64_t *dist,
                        const uint32_t *pred, int metres, double *val, uint32_t *stack) {
    for (uint32_t v = 0; v < g->n; v++) val[v] = NAN;
    for (uint32_t v = 0; v < g->n; v++) {
        if (dist[v] == GP_INF) continue;
        if (!metres) {
            val[v] = gp_cost_seconds(g, dist[v]);
            continue;
        }
        uint32_t k = 0, x = v;
        while (isnan(val[x]) && pred[x] != GP_NONE && k < g->n) {
            stack[k++] = x;
            x = pred[x];
        }
        if (isnan(val[x])) { /* a root: where the search entered the network */
            double len = s->arc != GP_NONE ? gp_graph_arc_length_m(g, s->arc) : 0;
            val[x] = s->arc == GP_NONE     ? 0
                     : x == g->col[s->arc] ? (1 - s->frac) * len
                                           : s->frac * len;
            if (!isfinite(val[x])) val[x] = 0;
        }
        while (k) {
            uint32_t y = stack[--k], arc = gp_graph_find_arc(g, pred[y], y);
            double len = arc != GP_NONE ? gp_graph_arc_length_m(g, arc) : 0;
            val[y] = val[pred[y]] + (isfinite(len) ? len : 0);
        }
    }
}

static double arc_value(const gp_graph *g, uint32_t a, int metres) {
    double v = metres ? gp_graph_arc_length_m(g, a) : gp_cost_seconds(g, g->w[a]);
    return isfinite(v) ? v : 0;
}

void gp_h_isochrone(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    const gp_config *cfg = gp_http_config();
    double contours[128];
    int nc = 0;
    const char *cs = gp_req_query(r, "contours");
    const char *ct = gp_req_query(r, "contours_type");
    int metres = ct && !strcmp(ct, "distance");
    if (ct && !metres && strcmp(ct, "time")) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "contours_type must be time or distance");
        return;
    }
    if (!cs || !*cs) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "missing query parameter 'contours' (e.g. contours=300,600,900)");
        return;
    }
    for (const char *p = cs; *p;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v > 0) || !isfinite(v) || (*end && *end != ',')) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "contours must be positive numbers separated by "
                          "commas, got '%.64s'",
                          cs);
            return;
        }
        if (nc == cfg->isochrone_max_contours || nc == 128) {
            gp_http_error(r, GP_HC_TOO_BIG, "more than isochrone_max_contours = %ld contours",
                          cfg->isochrone_max_contours);
            return;
        }
        contours[nc++] = v;
        p = *end ? end + 1 : end;
    }
    for (int i = 1; i < nc; i++) /* ascending */
        for (int j = i; j > 0 && contours[j - 1] > contours[j]; j--) {
            double t = contours[j];
            contours[j] = contours[j - 1];
            contours[j - 1] = t;
        }
    /* origins: lon/lat, or points=lon,lat;lon,lat */
    gp_pts pts;
    memset(&pts, 0, sizeof pts);
    const char *ps = gp_req_query(r, "points");
    if (ps) {
        for (const char *p = ps; *p;) {
            char *end;
            double lon = strtod(p, &end);
            double lat = *end == ',' ? strtod(end + 1, &end) : NAN;
            if (!isfinite(lon) || !isfinite(lat) || (*end && *end != ';') || fabs(lon) > 180 ||
                fabs(lat) > 90) {
                gp_pts_free(&pts);
                gp_http_error(r, GP_HC_INVALID_QUERY,
                              "points must be lon,lat;lon,lat;... with valid coordinates");
                return;
            }
            gp_pts_add(&pts, lon, lat, 0);
            p = *end ? end + 1 : end;
        }
    } else {
        gp_err err;
        double lon, lat;
        if (gp_req_query_double(r, "lon", 1, 0, -180, 180, &lon, &err) ||
            gp_req_query_double(r, "lat", 1, 0, -90, 90, &lat, &err)) {
            gp_http_error_err(r, GP_HC_INVALID_QUERY, &err);
            return;
        }
        gp_pts_add(&pts, lon, lat, 0);
    }
    if (pts.n == 0 || (long)pts.n > cfg->isochrone_max_points) {
        int code = pts.n ? GP_HC_TOO_BIG : GP_HC_INVALID_QUERY; /* before the free clears n */
        gp_pts_free(&pts);
        gp_http_error(r, code, "isochrone takes 1 to isochrone_max_points = %ld points",
                      cfg->isochrone_max_points);
        return;
    }
    if (!g->lon || !g->spatial) {
        gp_pts_free(&pts);
        gp_http_error(r, GP_HC_NO_COORDINATES, "graph '%s' has no coordinates",
                      gp_req_graph_name(r));
        return;
    }
    uint64_t *dist = malloc(sizeof *dist * g->n);
    uint32_t *pred = malloc(sizeof *pred * g->n), *stack = malloc(sizeof *stack * g->n);
    double *val = malloc(sizeof *val * g->n);
    cJSON *fc = cJSON_CreateObject();
    cJSON_AddStringToObject(fc, "type", "FeatureCollection");
    cJSON *feats = cJSON_AddArrayToObject(fc, "features");
    grid gr;
    memset(&gr, 0, sizeof gr);
    uint8_t *tmp = NULL;
    if (!dist || !pred || !stack || !val) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory for a %u-node search", g->n);
        goto fail;
    }
    double radius = cfg->osrm_default_radius_m > 0 ? (double)cfg->osrm_default_radius_m : 4e7;
    for (size_t pi = 0; pi < pts.n; pi++) {
        gp_snap s;
        gp_err err;
        int rc = gp_snap_point(g, pts.lon[pi], pts.lat[pi], radius, &s, &err);
        if (rc) {
            gp_http_error_err(r, GP_HC_INVALID_QUERY, &err);
            goto fail;
        }
        gp_snap_big(g, &s, radius); /* as the OSRM services: not from a cut-off stub */
        double cmax = contours[nc - 1];
        uint64_t cutoff = GP_INF;
        if (!metres) {
            double units = (g->unit_s > 0 ? cmax / g->unit_s : cmax) * g->scale;
            cutoff = units >= 1.8e19 ? GP_INF - 1 : (uint64_t)ceil(units);
        }
        if (gp_engine_sssp_snap(gp_http_engine(), g, &s, cutoff, dist, pred, &err)) {
            gp_http_error_err(r, -1, &err);
            goto fail;
        }
        node_values(g, &s, dist, pred, metres, val, stack);
        /* grid from the reached extent at the largest contour */
        double minx = s.lon, maxx = s.lon, miny = s.lat, maxy = s.lat;
        for (uint32_t v = 0; v < g->n; v++)
            if (val[v] <= cmax) {
                minx = fmin(minx, g->lon[v]);
                maxx = fmax(maxx, g->lon[v]);
                miny = fmin(miny, g->lat[v]);
                maxy = fmax(maxy, g->lat[v]);
            }
        double kx = cos(s.lat * M_PI / 180);
        double ext_m = fmax((maxx - minx) * DEG_M * kx, (maxy - miny) * DEG_M);
        double cell_m = fmax(ext_m / 200, 10);
        gr.dlat = cell_m / DEG_M;
        gr.dlon = gr.dlat / fmax(kx, 0.01);
        gr.lon0 = minx - 6 * gr.dlon;
        gr.lat0 = miny - 6 * gr.dlat;
        gr.w = (int)ceil((maxx - minx) / gr.dlon) + 12;
        gr.h = (int)ceil((maxy - miny) / gr.dlat) + 12;
        free(gr.a);
        free(tmp);
        gr.a = malloc((size_t)gr.w * gr.h);
        tmp = malloc((size_t)gr.w * gr.h);
        if (!gr.a || !tmp) {
            gp_http_error(r, GP_HC_INTERNAL, "out of memory for the isochrone grid");
            goto fail;
        }
        for (int ci = nc - 1; ci >= 0; ci--) {
            double C = contours[ci];
            memset(gr.a, 0, (size_t)gr.w * gr.h);
            mark(&gr, s.lon, s.lat);
            gp_pts line;
            memset(&line, 0, sizeof line);
            for (uint32_t u = 0; u < g->n; u++) {
                if (!(val[u] <= C)) continue;
                mark(&gr, g->lon[u], g->lat[u]);
                for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                    double av = arc_value(g, a, metres);
                    double f = av > 0 ? (C - val[u]) / av : 1;
                    if (f > 1) f = 1;
                    line.n = 0;
                    if (gp_arc_points(g, a, 0, f, &line)) continue;
                    for (size_t i = 1; i < line.n; i++)
                        mark_seg(&gr, line.lon[i - 1], line.lat[i - 1], line.lon[i], line.lat[i]);
                }
            }
            gp_pts_free(&line);
            morph(&gr, 3, 1, tmp);
            morph(&gr, 2, 0, tmp);
            unpinch(&gr);
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "type", "Feature");
            cJSON *pr = cJSON_AddObjectToObject(f, "properties");
            cJSON_AddNumberToObject(pr, "contour", C);
            cJSON_AddStringToObject(pr, "contours_type", metres ? "distance" : "time");
            cJSON_AddNumberToObject(pr, "point_index", (double)pi);
            cJSON_AddNumberToObject(pr, "lon", gp_round_unit(s.lon, 1e-6));
            cJSON_AddNumberToObject(pr, "lat", gp_round_unit(s.lat, 1e-6));
            cJSON_AddNumberToObject(pr, "cell_m", gp_round_unit(cell_m, 0.1));
            cJSON *geo = cJSON_AddObjectToObject(f, "geometry");
            cJSON_AddStringToObject(geo, "type", "MultiPolygon");
            cJSON_AddItemToObject(geo, "coordinates", polygons(&gr));
            cJSON_AddItemToArray(feats, f);
        }
    }
    cJSON_AddStringToObject(fc, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(fc, "version", g->version);
    cJSON_AddStringToObject(fc, "data_version", g->version);
    gp_http_json(r, 200, fc);
    fc = NULL;
fail:
    cJSON_Delete(fc);
    free(gr.a);
    free(tmp);
    free(dist);
    free(pred);
    free(stack);
    free(val);
    gp_pts_free(&pts);
}
