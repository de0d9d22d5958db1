/* tiles.c - gpath's basemap: vector tiles of a road graph, their TileJSON and a MapLibre style.
 *   GET /v1/graphs/{graph}/tiles/{z}/{x}/{y}.mvt   Mapbox Vector Tile 2.1, z 0..22
 *   GET /v1/graphs/{graph}/tiles.json              TileJSON 3.0.0 (bounds, zooms, layers)
 *   GET /v1/graphs/{graph}/style.json              a MapLibre GL style drawing those tiles
 *
 * Layers (docs/api.md, "Basemap tiles"):
 *  - roads: one line per road (a two-way road once, from its lower-numbered arc; id = arc + 1)
 *    with class (gp_road_class_name), name and ref when known, oneway (bool). Small classes
 *    appear from a zoom on (CLASS_MINZOOM: motorways at every zoom, residential streets from 12,
 *    paths from 14), and lines are simplified (Douglas-Peucker, to about a quarter of a pixel);
 *  - places: the OSM place nodes the import kept (gp_graph.places) with class (city, town,
 *    village, suburb, quarter, neighbourhood, hamlet), name and population when known, larger
 *    places from lower zooms.
 * Lines are clipped to the tile plus a 64-unit buffer of its 4096. A tile outside the graph is 200
 * with an empty body; z/x/y out of range is 400 InvalidQuery; a tile over tile_max_features
 * features is 413 TooBig. Tiles are cached per graph version with an ETag and gzip
 * (server/tilecache.h). The style needs no glyph server: it names the font "sans-serif" and
 * leaves out "glyphs", which MapLibre GL JS 5.11 and later read as "draw labels with local
 * fonts".
 */
#include "server/v1/tiles.h"

#include "graph/spatial.h"
#include "server/api/arcs.h"
#include "server/api/geom.h"
#include "server/api/mvt.h"
#include "server/tilecache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ZOOM = 22, TILEJSON_MAXZOOM = 16 };
#define BUFFER 64.0

/* The zoom from which each road class is drawn (indexed by enum gp_road_class). */
static const uint8_t CLASS_MINZOOM[GP_ROAD_CLASS_COUNT] = {
    [GP_ROAD_UNKNOWN] = 12,       [GP_ROAD_MOTORWAY] = 0,     [GP_ROAD_TRUNK] = 4,
    [GP_ROAD_PRIMARY] = 7,        [GP_ROAD_SECONDARY] = 9,    [GP_ROAD_TERTIARY] = 10,
    [GP_ROAD_UNCLASSIFIED] = 11,  [GP_ROAD_RESIDENTIAL] = 12, [GP_ROAD_SERVICE] = 13,
    [GP_ROAD_LIVING_STREET] = 13, [GP_ROAD_TRACK] = 13,       [GP_ROAD_PATH] = 14,
    [GP_ROAD_CYCLEWAY] = 14,      [GP_ROAD_FOOTWAY] = 14,     [GP_ROAD_FERRY] = 6};
/* The zoom from which each place kind is drawn (enum gp_place_kind). */
static const uint8_t PLACE_MINZOOM[GP_PLACE_KIND_COUNT] = {
    [GP_PLACE_CITY] = 0,    [GP_PLACE_TOWN] = 7,     [GP_PLACE_VILLAGE] = 10,
    [GP_PLACE_SUBURB] = 11, [GP_PLACE_QUARTER] = 12, [GP_PLACE_NEIGHBOURHOOD] = 13,
    [GP_PLACE_HAMLET] = 12};

typedef struct base_job {
    const gp_graph *g;
    uint32_t z, x, y;
    long max_features;
    double lon0, lat0, lon1, lat1; /* the tile with its buffer, degrees */
} base_job;

static int roads_layer(const base_job *j, gp_mvt *t) {
    const gp_graph *g = j->g;
    gp_pts p = {0};
    uint8_t *keep = NULL;
    size_t keep_cap = 0;
    double *px = NULL, *py = NULL;
    double mid = (j->lat0 + j->lat1) / 2 * M_PI / 180;
    double tol_m = 40075016.7 * cos(mid) / ldexp(1, (int)j->z) / GP_MVT_EXTENT * 4;
    int rc = 0;
    gp_mvt_layer(t, "roads", GP_MVT_EXTENT);
    for (uint32_t u = 0; u < g->n && !rc; u++) {
        for (uint32_t a = g->row[u]; a < g->row[u + 1] && !rc; a++) {
            uint32_t v = g->col[a];
            int cls = g->arc_class ? g->arc_class[a] : GP_ROAD_UNKNOWN;
            if (v == u || cls >= GP_ROAD_CLASS_COUNT || j->z < CLASS_MINZOOM[cls]) continue;
            double bb[4];
            gp_arc_bbox(g, a, u, bb);
            if (bb[2] < j->lon0 || bb[0] > j->lon1 || bb[3] < j->lat0 || bb[1] > j->lat1) continue;
            uint32_t r = gp_graph_reverse_arc(g, a);
            if (r != GP_NONE && r < a) continue; /* the road is drawn from its other arc */
            p.n = 0;
            if (gp_arc_points_from(g, a, u, 0, 1, &p)) {
                rc = GP_ENOMEM;
                break;
            }
            if (p.n > keep_cap) {
                keep_cap = p.n * 2;
                uint8_t *k2 = realloc(keep, keep_cap);
                double *x2 = k2 ? realloc(px, keep_cap * sizeof *px) : NULL;
                double *y2 = x2 ? realloc(py, keep_cap * sizeof *py) : NULL;
                if (k2) keep = k2;
                if (x2) px = x2;
                if (y2) py = y2;
                if (!y2) {
                    rc = GP_ENOMEM;
                    break;
                }
            }
            gp_simplify_dp(p.lon, p.lat, p.n, tol_m, keep);
            size_t k = 0;
            for (size_t i = 0; i < p.n; i++) {
                if (!keep[i]) continue;
                gp_tile_project(j->z, j->x, j->y, GP_MVT_EXTENT, p.lon[i], p.lat[i], &px[k],
                                &py[k]);
                k++;
            }
            gp_mvt_feature(t, GP_MVT_LINESTRING, (uint64_t)a + 1);
            if (!gp_mvt_line_clip(t, px, py, k, -BUFFER, GP_MVT_EXTENT + BUFFER)) continue;
            gp_mvt_prop_str(t, "class", gp_road_class_name(cls));
            gp_mvt_prop_str(t, "name", gp_graph_arc_name(g, a));
            gp_mvt_prop_str(t, "ref", gp_graph_arc_ref(g, a));
            gp_mvt_prop_bool(t, "oneway", r == GP_NONE);
            gp_mvt_commit(t);
            if ((long)gp_mvt_count(t) > j->max_features) rc = GP_ETOOBIG;
        }
    }
    gp_pts_free(&p);
    free(keep);
    free(px);
    free(py);
    return rc;
}

static void places_layer(const base_job *j, gp_mvt *t) {
    gp_mvt_layer(t, "places", GP_MVT_EXTENT);
    uint64_t off = 0, id = 0;
    gp_place_rec pl;
    while (gp_graph_place_next(j->g, &off, &pl)) {
        id++;
        if (pl.kind <= 0 || pl.kind >= GP_PLACE_KIND_COUNT || j->z < PLACE_MINZOOM[pl.kind])
            continue;
        double x, y;
        gp_tile_project(j->z, j->x, j->y, GP_MVT_EXTENT, pl.lon, pl.lat, &x, &y);
        if (x < 0 || y < 0 || x >= GP_MVT_EXTENT || y >= GP_MVT_EXTENT) continue;
        gp_mvt_feature(t, GP_MVT_POINT, id);
        gp_mvt_point(t, (int32_t)lround(x), (int32_t)lround(y));
        gp_mvt_prop_str(t, "class", gp_place_kind_name(pl.kind));
        gp_mvt_prop_str(t, "name", pl.name);
        if (pl.population) gp_mvt_prop_uint(t, "population", pl.population);
        gp_mvt_commit(t);
    }
}

static char *build_base(void *ctx, size_t *len, gp_err *err) {
    const base_job *j = ctx;
    gp_mvt *t = gp_mvt_new();
    if (!t) {
        gp_err_set(err, GP_ENOMEM, "out of memory building a tile");
        return NULL;
    }
    int rc = roads_layer(j, t);
    if (rc) {
        gp_mvt_free(t);
        if (rc == GP_ETOOBIG)
            gp_err_set(err, GP_ETOOBIG,
                       "tile %u/%u/%u holds more than %ld features (tile_max_features): ask a "
                       "higher zoom",
                       j->z, j->x, j->y, j->max_features);
        else gp_err_set(err, rc, "out of memory building a tile");
        return NULL;
    }
    places_layer(j, t);
    char *out = gp_mvt_finish_drawn(t, gp_mvt_count(t), len);
    if (!out) gp_err_set(err, GP_ENOMEM, "out of memory encoding a tile");
    return out;
}

/* Parses a tile coordinate segment: decimal digits, then suffix (may be ""). */
static int parse_coord(const char *s, const char *suffix, uint32_t *out) {
    if (!s || *s < '0' || *s > '9') return 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (v > 0xffffffffUL || strcmp(end, suffix)) return 0;
    *out = (uint32_t)v;
    return 1;
}

static int graph_has_map(gp_req *r, const gp_graph *g) {
    if (g->lon) return 1;
    gp_http_error(r, GP_HC_NO_COORDINATES,
                  "graph '%s' has no coordinates: there is nothing to draw on a map",
                  gp_req_graph_name(r));
    return 0;
}

void gp_h_base_tile(gp_req *r) {
    const gp_graph *g = gp_req_graph(r);
    base_job j = {.g = g};
    if (!parse_coord(gp_req_param(r, "z"), "", &j.z) ||
        !parse_coord(gp_req_param(r, "x"), "", &j.x) ||
        !parse_coord(gp_req_param(r, "y"), ".mvt", &j.y)) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "a tile is /tiles/{z}/{x}/{y}.mvt with whole numbers z, x and y");
        return;
    }
    if (j.z > MAX_ZOOM || !gp_tile_valid(j.z, j.x, j.y)) {
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "tile %u/%u/%u does not exist: z is 0..%d and x, y are below 2^z", j.z, j.x,
                      j.y, MAX_ZOOM);
        return;
    }
    if (!graph_has_map(r, g)) return;
    j.max_features = gp_http_config()->tile_max_features;
    double lon0, lat0, lon1, lat1;
    gp_tile_bounds(j.z, j.x, j.y, &lon0, &lat0, &lon1, &lat1);
    double bx = (lon1 - lon0) * BUFFER / GP_MVT_EXTENT, by = (lat1 - lat0) * BUFFER / GP_MVT_EXTENT;
    j.lon0 = lon0 - bx;
    j.lon1 = lon1 + bx;
    j.lat0 = lat0 - by;
    j.lat1 = lat1 + by;
    char key[160];
    snprintf(key, sizeof key, "base:%s:%s:%u/%u/%u", gp_req_graph_name(r), g->version, j.z, j.x,
             j.y);
    gp_err err = {0};
    if (gp_tile_answer(r, key, "application/vnd.mapbox-vector-tile", build_base, &j, &err))
        gp_http_error_err(r, GP_HC_INTERNAL, &err);
}

/* ---- TileJSON and style ---- */
/* "http://host" from the request (X-Forwarded-Proto https kept), "" without a Host header. */
static void origin_of(gp_req *r, char *buf, size_t size) {
    const char *host = gp_req_header(r, "Host"), *proto = gp_req_header(r, "X-Forwarded-Proto");
    if (!host || strpbrk(host, "\"\\ /")) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, size, "%s://%s", proto && !strcmp(proto, "https") ? "https" : "http", host);
}

static void graph_bounds(const gp_graph *g, double b[4]) {
    b[0] = b[1] = INFINITY;
    b[2] = b[3] = -INFINITY;
    for (uint32_t v = 0; v < g->n; v++) {
        if (!isfinite(g->lon[v]) || !isfinite(g->lat[v])) continue;
        b[0] = fmin(b[0], g->lon[v]);
        b[1] = fmin(b[1], g->lat[v]);
        b[2] = fmax(b[2], g->lon[v]);
        b[3] = fmax(b[3], g->lat[v]);
    }
    if (!(b[0] <= b[2])) b[0] = b[1] = b[2] = b[3] = 0;
}

/* The zoom at which the bounds fill about a 1024-pixel view. */
static int fit_zoom(const double b[4]) {
    double w = fmax(b[2] - b[0], 1e-6) / 360, h = fmax(b[3] - b[1], 1e-6) / 170;
    int z = (int)floor(log2(4.0 / fmax(w, h)));
    return z < 0 ? 0 : z > 16 ? 16 : z;
}

static cJSON *numbers(const double *v, int n) { return cJSON_CreateDoubleArray(v, n); }

static cJSON *fields(const char *const *kv, int n) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < n; i++) cJSON_AddStringToObject(o, kv[2 * i], kv[2 * i + 1]);
    return o;
}

/* The source object both documents share: tiles URL, zooms, bounds. */
static cJSON *tile_source(gp_req *r, const gp_graph *g, int tilejson) {
    char origin[300], url[700];
    origin_of(r, origin, sizeof origin);
    snprintf(url, sizeof url, "%s/v1/graphs/%s/tiles/{z}/{x}/{y}.mvt", origin,
             gp_req_graph_name(r));
    double b[4];
    graph_bounds(g, b);
    cJSON *s = cJSON_CreateObject();
    if (tilejson) {
        cJSON_AddStringToObject(s, "tilejson", "3.0.0");
        cJSON_AddStringToObject(s, "name", gp_req_graph_name(r));
        cJSON_AddStringToObject(s, "version", g->version);
        if (g->profile[0]) /* an OpenStreetMap import */
            cJSON_AddStringToObject(s, "attribution", "© OpenStreetMap contributors");
        cJSON_AddStringToObject(s, "scheme", "xyz");
    } else {
        cJSON_AddStringToObject(s, "type", "vector");
    }
    cJSON *tiles = cJSON_AddArrayToObject(s, "tiles");
    cJSON_AddItemToArray(tiles, cJSON_CreateString(url));
    cJSON_AddNumberToObject(s, "minzoom", 0);
    cJSON_AddNumberToObject(s, "maxzoom", TILEJSON_MAXZOOM);
    cJSON_AddItemToObject(s, "bounds", numbers(b, 4));
    if (tilejson) {
        double c[3] = {(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, fit_zoom(b)};
        cJSON_AddItemToObject(s, "center", numbers(c, 3));
        static const char *const road_f[] = {"class",  "String: motorway, trunk, primary, ...",
                                             "name",   "String",
                                             "ref",    "String",
                                             "oneway", "Boolean"};
        static const char *const place_f[] = {
            "class", "String: city, town, village, ...", "name", "String", "population", "Number"};
        cJSON *vl = cJSON_AddArrayToObject(s, "vector_layers");
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "id", "roads");
        cJSON_AddItemToObject(l, "fields", fields(road_f, 4));
        cJSON_AddItemToArray(vl, l);
        l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "id", "places");
        cJSON_AddItemToObject(l, "fields", fields(place_f, 3));
        cJSON_AddItemToArray(vl, l);
    }
    return s;
}

void gp_h_base_tilejson(gp_req *r) {
    const gp_graph *g = gp_req_graph(r);
    if (graph_has_map(r, g)) gp_http_json(r, 200, tile_source(r, g, 1));
}

/* Road styles: the classes drawn, line colour, width at zoom 10 and 18. */
static const struct {
    const char *id, *classes[4], *color;
    double w10, w18;
    int dashed;
} ROAD_STYLE[] = {
    {"road-path", {"path", "cycleway", "footway", "track"}, "#b0a89a", 0.5, 2, 1},
    {"road-service", {"service", "living_street"}, "#ffffff", 0.5, 5, 0},
    {"road-minor", {"residential", "unclassified", "unknown"}, "#ffffff", 0.8, 9, 0},
    {"road-tertiary", {"tertiary"}, "#fffbd0", 1.2, 11, 0},
    {"road-secondary", {"secondary"}, "#f7e68a", 1.5, 13, 0},
    {"road-primary", {"primary"}, "#fcc47a", 2, 14, 0},
    {"road-trunk", {"trunk"}, "#f59f6b", 2.5, 15, 0},
    {"road-motorway", {"motorway"}, "#e8785f", 3, 16, 0},
    {"road-ferry", {"ferry"}, "#6fa8dc", 1, 2, 1},
};

static cJSON *parse(const char *json) { return cJSON_Parse(json); }

static cJSON *class_filter(const char *const *classes) {
    cJSON *f = cJSON_CreateArray(), *get = parse("[\"get\", \"class\"]"),
          *lit = cJSON_CreateArray();
    cJSON_AddItemToArray(f, cJSON_CreateString("in"));
    cJSON_AddItemToArray(f, get);
    for (int i = 0; i < 4 && classes[i]; i++)
        cJSON_AddItemToArray(lit, cJSON_CreateString(classes[i]));
    cJSON *l = cJSON_CreateArray();
    cJSON_AddItemToArray(l, cJSON_CreateString("literal"));
    cJSON_AddItemToArray(l, lit);
    cJSON_AddItemToArray(f, l);
    return f;
}

static cJSON *width_expr(double w10, double w18) {
    char buf[160];
    snprintf(buf, sizeof buf,
             "[\"interpolate\", [\"exponential\", 1.6], [\"zoom\"], 5, %.2f, 10, %.2f, 18, %.2f]",
             w10 / 4, w10, w18);
    return parse(buf);
}

static cJSON *layer(const char *id, const char *type, const char *src_layer) {
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "id", id);
    cJSON_AddStringToObject(l, "type", type);
    if (src_layer) {
        cJSON_AddStringToObject(l, "source", "gpath");
        cJSON_AddStringToObject(l, "source-layer", src_layer);
    }
    return l;
}

void gp_h_base_style(gp_req *r) {
    const gp_graph *g = gp_req_graph(r);
    if (!graph_has_map(r, g)) return;
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "version", 8);
    cJSON_AddStringToObject(st, "name", gp_req_graph_name(r));
    double b[4];
    graph_bounds(g, b);
    double c[2] = {(b[0] + b[2]) / 2, (b[1] + b[3]) / 2};
    cJSON_AddItemToObject(st, "center", numbers(c, 2));
    cJSON_AddNumberToObject(st, "zoom", fit_zoom(b));
    cJSON *srcs = cJSON_AddObjectToObject(st, "sources");
    cJSON_AddItemToObject(srcs, "gpath", tile_source(r, g, 0));
    cJSON *ls = cJSON_AddArrayToObject(st, "layers");
    cJSON *bg = layer("background", "background", NULL);
    cJSON_AddItemToObject(bg, "paint", parse("{\"background-color\": \"#f2efe9\"}"));
    cJSON_AddItemToArray(ls, bg);
    size_t nstyle = sizeof ROAD_STYLE / sizeof ROAD_STYLE[0];
    for (int casing = 1; casing >= 0; casing--) /* grey casings under every fill */
        for (size_t i = 0; i < nstyle; i++) {
            if (casing && ROAD_STYLE[i].dashed) continue;
            char id[48];
            snprintf(id, sizeof id, "%s%s", ROAD_STYLE[i].id, casing ? "-casing" : "");
            cJSON *l = layer(id, "line", "roads");
            cJSON_AddItemToObject(l, "filter", class_filter(ROAD_STYLE[i].classes));
            cJSON_AddItemToObject(l, "layout",
                                  parse("{\"line-cap\": \"round\", \"line-join\": \"round\"}"));
            cJSON *p = cJSON_AddObjectToObject(l, "paint");
            cJSON_AddStringToObject(p, "line-color", casing ? "#b9b2a5" : ROAD_STYLE[i].color);
            double k = casing ? 1.3 : 1;
            cJSON_AddItemToObject(
                p, "line-width", width_expr(ROAD_STYLE[i].w10 * k + casing, ROAD_STYLE[i].w18 * k));
            if (ROAD_STYLE[i].dashed) cJSON_AddItemToObject(p, "line-dasharray", parse("[2, 1.5]"));
            cJSON_AddItemToArray(ls, l);
        }
    /* labels: road names along the lines, refs on the larger roads, place names */
    cJSON *names = layer("road-names", "symbol", "roads");
    cJSON_AddItemToObject(names, "minzoom", cJSON_CreateNumber(13));
    cJSON_AddItemToObject(names, "filter", parse("[\"has\", \"name\"]"));
    cJSON_AddItemToObject(names, "layout",
                          parse("{\"symbol-placement\": \"line\", \"text-field\": [\"get\", "
                                "\"name\"], \"text-font\": [\"sans-serif\"], \"text-size\": "
                                "[\"interpolate\", [\"linear\"], [\"zoom\"], 13, 10, 18, 14]}"));
    cJSON_AddItemToObject(names, "paint",
                          parse("{\"text-color\": \"#444\", \"text-halo-color\": \"#fff\", "
                                "\"text-halo-width\": 1.5}"));
    cJSON_AddItemToArray(ls, names);
    cJSON *refs = layer("road-refs", "symbol", "roads");
    cJSON_AddItemToObject(refs, "minzoom", cJSON_CreateNumber(8));
    cJSON_AddItemToObject(
        refs, "filter",
        parse("[\"all\", [\"has\", \"ref\"], [\"in\", [\"get\", \"class\"], [\"literal\", "
              "[\"motorway\", \"trunk\", \"primary\", \"secondary\"]]]]"));
    cJSON_AddItemToObject(refs, "layout",
                          parse("{\"symbol-placement\": \"line\", \"symbol-spacing\": 400, "
                                "\"text-field\": [\"get\", \"ref\"], \"text-font\": "
                                "[\"sans-serif\"], \"text-size\": 11, \"text-rotation-alignment\": "
                                "\"viewport\"}"));
    cJSON_AddItemToObject(refs, "paint",
                          parse("{\"text-color\": \"#fff\", \"text-halo-color\": \"#b05a3c\", "
                                "\"text-halo-width\": 3}"));
    cJSON_AddItemToArray(ls, refs);
    cJSON *places = layer("place-names", "symbol", "places");
    cJSON_AddItemToObject(
        places, "layout",
        parse("{\"text-field\": [\"get\", \"name\"], \"text-font\": [\"sans-serif\"], "
              "\"text-size\": [\"match\", [\"get\", \"class\"], \"city\", 18, \"town\", 15, "
              "\"village\", 13, 12], \"text-transform\": [\"match\", [\"get\", \"class\"], "
              "[\"suburb\", \"quarter\", \"neighbourhood\"], \"uppercase\", \"none\"], "
              "\"text-letter-spacing\": 0.05, \"text-max-width\": 8}"));
    cJSON_AddItemToObject(places, "paint",
                          parse("{\"text-color\": \"#2b2b2b\", \"text-halo-color\": "
                                "\"rgba(255,255,255,0.9)\", \"text-halo-width\": 2}"));
    cJSON_AddItemToArray(ls, places);
    gp_http_json(r, 200, st);
}
