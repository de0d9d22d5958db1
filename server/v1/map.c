/* map.c - the map pages and the road overview they draw.
 *
 * GET / (the map page: MapLibre GL JS, web/index.html, app.js, app.css), GET /lrm (the Leaflet
 * Routing Machine page, web/lrm.html, for clients that use LRM) and GET /web/{file} (and
 * /web/images/{file}, where Leaflet's CSS looks for its images) serve the files compiled into the
 * binary (server/assets.h): `make web` bundles MapLibre GL JS, osrm-text-instructions, Leaflet and
 * Leaflet Routing Machine from npm (pinned by web/package-lock.json) with the pages
 * (web/bundle-map.sh); nothing comes from a CDN or from disk at run time. A build made without
 * `make web` answers 501 naming it; `map_page = off` turns the paths into 404s.
 *
 * GET /v1/graphs/{graph}/overview.geojson draws the road network without map tiles: one Feature
 * (MultiLineString) per road class, each road once (a two-way road is one line). When the graph
 * has more roads than `overview_max_edges` (or ?max_edges=, smaller), nodes are merged on a grid
 * of cells, halved in resolution until the lines between distinct cells fit: a schematic of the
 * network whose size is bounded whatever the graph.
 */
#include "server/v1/map.h"

#include "server/assets.h"
#include "server/api/arcs.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- static files ---- */
static int map_page_on(gp_req *r) {
    if (!strcmp(gp_http_config()->map_page, "on")) return 1;
    gp_http_error(r, GP_HC_NOT_FOUND, "the map page is off (map_page = off)");
    return 0;
}

/* Sends embedded asset `name` of the map page; openapi.yaml and docs.html belong to /docs. */
static void send_asset(gp_req *r, const char *name) {
    const gp_asset *a = name && strcmp(name, "openapi.yaml") && strcmp(name, "docs.html")
                            ? gp_asset_find(name)
                            : NULL;
    if (!a) {
        if (!gp_asset_find("index.html"))
            gp_http_error(r, GP_HC_UNSUPPORTED,
                          "this build has no map page: build with `make web` first (npm fetches "
                          "MapLibre GL JS, Leaflet and Leaflet Routing Machine)");
        else gp_http_error(r, GP_HC_NOT_FOUND, "no map page asset '%.64s'", name ? name : "");
        return;
    }
    gp_req_add_header(r, "Cache-Control", "no-cache");
    gp_http_text(r, 200, a->type, (const char *)a->data, (size_t)(a->end - a->data));
}

void gp_h_map_page(gp_req *r) {
    if (map_page_on(r)) send_asset(r, "index.html");
}

void gp_h_lrm_page(gp_req *r) {
    if (map_page_on(r)) send_asset(r, "lrm.html");
}

void gp_h_web_asset(gp_req *r) {
    if (map_page_on(r)) send_asset(r, gp_req_param(r, "file"));
}

/* ---- overview ---- */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->n + (size_t)w + 1) cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->oom = 1;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
}

/* 1 when arc a draws its road: a two-way road (a and its reverse, gp_graph_reverse_arc) is drawn
 * once, from its lower end; distinct roads between the same two nodes are each drawn. */
static int draws(const gp_graph *g, uint32_t u, uint32_t a) {
    uint32_t v = g->col[a];
    if (u == v && !gp_graph_arc_shape(g, a, &(const double *){0}, &(const double *){0})) return 0;
    return u < v || gp_graph_reverse_arc(g, a) == GP_NONE;
}

static void point(sbuf *b, int first, double lon, double lat) {
    sb_printf(b, "%s[%.6f,%.6f]", first ? "" : ",", lon, lat);
}

/* Full detail: one MultiLineString per class. */
static void full_lines(const gp_graph *g, sbuf *b) {
    int nclass = g->arc_class ? GP_ROAD_CLASS_COUNT : 1, nf = 0;
    gp_pts line;
    memset(&line, 0, sizeof line);
    for (int c = 0; c < nclass; c++) {
        size_t start = b->n;
        int any = 0;
        sb_printf(b,
                  "%s{\"type\":\"Feature\",\"properties\":{\"class\":\"%s\"},\"geometry\":"
                  "{\"type\":\"MultiLineString\",\"coordinates\":[",
                  nf ? "," : "", g->arc_class ? gp_road_class_name(c) : "road");
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                if ((g->arc_class && g->arc_class[a] != c) || !draws(g, u, a)) continue;
                line.n = 0;
                if (gp_arc_points(g, a, 0, 1, &line)) continue;
                sb_printf(b, "%s[", any ? "," : "");
                for (size_t i = 0; i < line.n; i++) point(b, i == 0, line.lon[i], line.lat[i]);
                sb_printf(b, "]");
                any = 1;
            }
        if (!any) {
            b->n = start;
            continue;
        }
        sb_printf(b, "]}}");
        nf++;
    }
    gp_pts_free(&line);
}

/* Fibonacci hashing of a cell-pair key: the multiplication wraps modulo 2^64 by design
 * (tests/ubsan.ignorelist). */
static uint64_t fib_hash(uint64_t key) { return key * 0x9E3779B97F4A7C15ull; }

/* Grid-merged: lines between the first nodes of distinct cells, each cell pair once; a limit no
 * grid keeps to gives one empty line set (the answer's bbox still says where the roads are). */
static int merged_lines(const gp_graph *g, sbuf *b, uint64_t limit, double minx, double miny,
                        double maxx, double maxy) {
    uint32_t *cellrep = NULL;
    uint64_t *seen = NULL;
    for (uint64_t side = (uint64_t)sqrt((double)limit) + 1; side >= 2; side /= 2) {
        uint64_t cells = side * side, cap = 1;
        while (cap < limit * 2) cap <<= 1;
        free(cellrep);
        free(seen);
        cellrep = malloc(sizeof *cellrep * cells);
        seen = calloc(cap, sizeof *seen);
        if (!cellrep || !seen) break;
        memset(cellrep, 0xff, sizeof *cellrep * cells);
        double sx = (maxx - minx) / (double)side * (1 + 1e-9) + 1e-12,
               sy = (maxy - miny) / (double)side * (1 + 1e-9) + 1e-12;
#define CELL_OF(v)                                                                                 \
    ((uint64_t)((g->lat[v] - miny) / sy) * side + (uint64_t)((g->lon[v] - minx) / sx))
        for (uint32_t v = 0; v < g->n; v++)
            if (!isnan(g->lon[v]) && cellrep[CELL_OF(v)] == GP_NONE) cellrep[CELL_OF(v)] = v;
        uint64_t count = 0;
        int over = 0;
        size_t start = b->n;
        sb_printf(b,
                  "{\"type\":\"Feature\",\"properties\":{\"class\":\"merged\",\"cells\":%llu},"
                  "\"geometry\":{\"type\":\"MultiLineString\",\"coordinates\":[",
                  (unsigned long long)side);
        for (uint32_t u = 0; u < g->n && !over; u++) {
            if (isnan(g->lon[u])) continue;
            uint64_t cu = CELL_OF(u);
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                uint32_t v = g->col[a];
                if (isnan(g->lon[v])) continue;
                uint64_t cv = CELL_OF(v);
                if (cu == cv) continue;
                uint64_t lo = cu < cv ? cu : cv, hi = cu < cv ? cv : cu;
                uint64_t key = lo * cells + hi + 1, h = fib_hash(key);
                uint64_t i = (h >> 17) & (cap - 1);
                while (seen[i] && seen[i] != key) i = (i + 1) & (cap - 1);
                if (seen[i]) continue;
                if (++count > limit) {
                    over = 1;
                    break;
                }
                seen[i] = key;
                uint32_t x = cellrep[lo], y = cellrep[hi];
                sb_printf(b, "%s[", count > 1 ? "," : "");
                point(b, 1, g->lon[x], g->lat[x]);
                point(b, 0, g->lon[y], g->lat[y]);
                sb_printf(b, "]");
            }
        }
#undef CELL_OF
        if (!over) {
            sb_printf(b, "]}}");
            free(cellrep);
            free(seen);
            return 0;
        }
        b->n = start;
    }
    int oom = !cellrep || !seen; /* the last grid could not be allocated */
    free(cellrep);
    free(seen);
    if (oom) return -1;
    /* no grid of two cells a side keeps to the limit (max_edges=1, say): the bbox alone */
    sb_printf(b, "{\"type\":\"Feature\",\"properties\":{\"class\":\"merged\",\"cells\":1},"
                 "\"geometry\":{\"type\":\"MultiLineString\",\"coordinates\":[]}}");
    return 0;
}

void gp_h_overview(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_err err;
    int64_t limit;
    long cfg_max = gp_http_config()->overview_max_edges;
    if (gp_req_query_i64(r, "max_edges", 0, cfg_max, 1, cfg_max, &limit, &err)) {
        gp_http_error_err(r, GP_HC_INVALID_QUERY, &err);
        return;
    }
    if (!g->lon) {
        gp_http_error(r, GP_HC_NO_COORDINATES, "graph '%s' has no coordinates",
                      gp_req_graph_name(r));
        return;
    }
    uint64_t roads = 0;
    double minx = INFINITY, miny = INFINITY, maxx = -INFINITY, maxy = -INFINITY;
    for (uint32_t u = 0; u < g->n; u++) {
        if (!isnan(g->lon[u])) {
            minx = fmin(minx, g->lon[u]);
            maxx = fmax(maxx, g->lon[u]);
            miny = fmin(miny, g->lat[u]);
            maxy = fmax(maxy, g->lat[u]);
        }
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) roads += (uint64_t)draws(g, u, a);
    }
    sbuf b = {0};
    sb_printf(&b,
              "{\"type\":\"FeatureCollection\",\"graph\":\"%s\",\"version\":\"%s\","
              "\"roads\":%llu,\"merged\":%s,\"bbox\":[%.6f,%.6f,%.6f,%.6f],\"features\":[",
              gp_req_graph_name(r), g->version, (unsigned long long)roads,
              roads > (uint64_t)limit ? "true" : "false", minx, miny, maxx, maxy);
    if (roads <= (uint64_t)limit) full_lines(g, &b);
    else if (merged_lines(g, &b, (uint64_t)limit, minx, miny, maxx, maxy)) b.oom = 1;
    sb_printf(&b, "]}\n");
    if (b.oom) {
        free(b.s);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the overview");
        return;
    }
    gp_http_send(r, 200, "application/geo+json", b.s, b.n);
}
