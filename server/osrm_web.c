/* osrm_web.c - the map page and the road overview it draws.
 *
 * GET / and GET /web/{file} (/web/images/{file}) serve the bundled page from `web_root` (default:
 * the `web` directory beside the gpath binary, written by `make web`: Leaflet and Leaflet Routing
 * Machine from npm, pinned by web/package-lock.json, plus web/index.html and web/app.js; no CDN).
 * `map_page = off` turns them into 404s. File names are one path segment of [A-Za-z0-9._-] not
 * starting with a dot, so nothing outside web_root can be read.
 *
 * GET /v1/graphs/{graph}/overview.geojson draws the road network without map tiles: one Feature
 * (MultiLineString) per road class, each road once (a two-way road is one line). When the graph
 * has more roads than `overview_max_edges` (or ?max_edges=, smaller), nodes are merged on a grid
 * of cells, halved in resolution until the lines between distinct cells fit: a schematic of the
 * network whose size is bounded whatever the graph.
 */
#include "osrm.h"

#include "osrm_internal.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- static files ---- */
static int map_page_on(gp_req *r) {
    if (!strcmp(gp_http_config()->map_page, "on")) return 1;
    gp_http_error(r, GP_HC_NOT_FOUND, "the map page is off (map_page = off)");
    return 0;
}

static void web_dir(char *out, size_t size) {
    const char *root = gp_http_config()->web_root;
    if (root[0]) {
        snprintf(out, size, "%s", root);
        return;
    }
    char exe[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(out, size, "web");
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(out, size, "%s/web", exe);
}

static const char *content_type(const char *name) {
    static const struct {
        const char *ext, *type;
    } types[] = {{".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
                 {".css", "text/css; charset=utf-8"},   {".png", "image/png"},
                 {".svg", "image/svg+xml"},             {".json", "application/json"},
                 {".txt", "text/plain; charset=utf-8"}};
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(dot, types[i].ext)) return types[i].type;
    return "application/octet-stream";
}

static int safe_name(const char *s) {
    if (!s || !*s || *s == '.' || strlen(s) > 128) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

static void send_file(gp_req *r, const char *sub, const char *name) {
    char dir[PATH_MAX], path[PATH_MAX + 300];
    web_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s%s", dir, sub, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        gp_http_error(r, GP_HC_NOT_FOUND,
                      "web asset '%s%s' not found (build the map page with `make web`, or set "
                      "web_root)",
                      sub, name);
        return;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(buf);
        gp_http_error(r, GP_HC_INTERNAL, "could not read web asset '%s'", name);
        return;
    }
    fclose(f);
    gp_req_add_header(r, "Cache-Control", "no-cache");
    gp_http_send(r, 200, content_type(name), buf, (size_t)len);
}

void gp_h_map_page(gp_req *r) {
    if (map_page_on(r)) send_file(r, "", "index.html");
}

/* Serves {file} from web_root/sub. */
static void serve_named(gp_req *r, const char *sub) {
    if (!map_page_on(r)) return;
    const char *f = gp_req_param(r, "file");
    if (!safe_name(f)) {
        gp_http_error(r, GP_HC_NOT_FOUND, "no web asset named '%s%.64s'", sub, f ? f : "");
        return;
    }
    send_file(r, sub, f);
}

void gp_h_web_asset(gp_req *r) { serve_named(r, ""); }
void gp_h_web_image(gp_req *r) { serve_named(r, "images/"); }

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

/* 1 when arc a is the one that draws its road: a two-way road is drawn from its lower end. */
static int draws(const gp_graph *g, uint32_t u, uint32_t a) {
    uint32_t v = g->col[a];
    if (u == v) return 0;
    if (gp_graph_find_arc(g, u, v) != a) return 0; /* a parallel arc: the cheapest draws */
    return u < v || gp_graph_find_arc(g, v, u) == GP_NONE;
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
        sb_printf(b, "%s{\"type\":\"Feature\",\"properties\":{\"class\":\"%s\"},\"geometry\":"
                  "{\"type\":\"MultiLineString\",\"coordinates\":[",
                  nf ? "," : "", g->arc_class ? gp_road_class_name(c) : "road");
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
                if ((g->arc_class && g->arc_class[a] != c) || !draws(g, u, a)) continue;
                line.n = 0;
                if (gp_osrm_arc_points(g, a, 0, 1, &line)) continue;
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

/* Grid-merged: lines between the first nodes of distinct cells, each cell pair once. */
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
        sb_printf(b, "{\"type\":\"Feature\",\"properties\":{\"class\":\"merged\",\"cells\":%llu},"
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
                uint64_t key = lo * cells + hi + 1, h = key * 0x9E3779B97F4A7C15ull;
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
    free(cellrep);
    free(seen);
    return -1;
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
        gp_http_error(r, GP_HC_NO_COORDINATES, "graph '%s' has no coordinates", gp_req_graph_name(r));
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
    sb_printf(&b, "{\"type\":\"FeatureCollection\",\"graph\":\"%s\",\"version\":\"%s\","
              "\"roads\":%llu,\"merged\":%s,\"bbox\":[%.6f,%.6f,%.6f,%.6f],\"features\":[",
              gp_req_graph_name(r), g->version, (unsigned long long)roads,
              roads > (uint64_t)limit ? "true" : "false", minx, miny, maxx, maxy);
    if (roads <= (uint64_t)limit)
        full_lines(g, &b);
    else if (merged_lines(g, &b, (uint64_t)limit, minx, miny, maxx, maxy))
        b.oom = 1;
    sb_printf(&b, "]}\n");
    if (b.oom) {
        free(b.s);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the overview");
        return;
    }
    gp_http_send(r, 200, "application/geo+json", b.s, b.n);
}
