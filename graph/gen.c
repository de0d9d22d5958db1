/* gen.c - the grid generator (grid:N[:SEED]) and the DIMACS writer.
 *
 * gp_generate_grid(n, seed) lays n nodes on a grid of cols = ceil(sqrt(n)) columns (the last row
 * partial) centred near lon 8.5, lat 47.3 with ~100 m spacing and each node jittered by up to 30%
 * of the spacing. Neighbouring nodes are joined by two-way streets; about 5% of the local streets
 * are missing and about 3% are one-way. Every 8th row/column is an arterial (50 km/h) and every
 * 16th a major road (80 km/h); local streets are 30 km/h. Arc weights are travel times in
 * deciseconds, round(great-circle length / speed * 10), at least 1. External ids are 1..n.
 * Everything derives from splitmix64 of (seed, node or edge number), so the graph is identical for
 * the same (n, seed) whatever the thread count; the CSR is written directly (neighbours of a node
 * are generated in ascending index order) in parallel.
 */
#include "graph/graph_internal.h"
#include "graph/spatial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_LON0 8.5
#define GEN_LAT0 47.3
#define GEN_SPACING_M 100.0

typedef struct gen_ctx {
    uint64_t n, cols, rows, seed;
    double dlon, dlat;
    gp_graph *g;
    double *coslat; /* cos(latitude) per node, for street lengths */
    int pass;       /* 0: coordinates, 1: out-degrees, 2: arcs */
} gen_ctx;

static inline uint64_t gen_hash(uint64_t seed, uint64_t key) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL ^ gp_mix64(key + 0x632be59bd9b4e019ULL);
    return gp_splitmix64(&s);
}

/* Street between node a and b = a + 1 (horizontal, h = 1) or b = a + cols (vertical, h = 0).
 * Returns a bitmask: 1 = arc a->b exists, 2 = arc b->a exists; *kmh receives its speed. */
static unsigned street(const gen_ctx *c, uint64_t a, int horizontal, double *kmh) {
    uint64_t line = horizontal ? a / c->cols : a % c->cols; /* the row or column it runs along */
    uint64_t h = gen_hash(c->seed, 2 * a + (uint64_t)horizontal);
    if (line % 16 == 0) {
        *kmh = 80;
        return 3;
    }
    if (line % 8 == 0) {
        *kmh = 50;
        return 3;
    }
    *kmh = 30;
    if (h % 1000 < 50) return 0;                             /* missing street */
    if ((h >> 12) % 1000 < 30) return (h >> 24) & 1 ? 1 : 2; /* one-way */
    return 3;
}

/* Travel time in deciseconds along the street a-b. The length is the haversine formula with
 * sin x ~ x and asin x ~ x, exact to ~1e-10 relative for streets of ~100 m (1.6e-5 rad) and free of
 * trigonometric calls. */
static inline uint32_t travel_ds(const gen_ctx *c, uint64_t a, uint64_t b, double kmh) {
    const gp_graph *g = c->g;
    const double rad = 3.14159265358979323846 / 180.0;
    double dp = (g->lat[b] - g->lat[a]) * rad, dl = (g->lon[b] - g->lon[a]) * rad;
    double m = GP_EARTH_RADIUS_M * sqrt(dp * dp + c->coslat[a] * c->coslat[b] * dl * dl);
    long long r = llround(m / (kmh / 3.6) * 10.0);
    return r < 1 ? 1u : (uint32_t)r;
}

static void gen_range(void *vc, uint64_t begin, uint64_t end) {
    gen_ctx *c = vc;
    gp_graph *g = c->g;
    const uint64_t cols = c->cols, n = c->n;
    if (c->pass == 0) {
        for (uint64_t i = begin; i < end; i++) {
            uint64_t r = i / cols, col = i % cols;
            uint64_t h = gen_hash(c->seed, ~i);
            double jx = ((double)(h & 0xffffff) / 16777216.0 - 0.5) * 0.6;
            double jy = ((double)((h >> 24) & 0xffffff) / 16777216.0 - 0.5) * 0.6;
            g->ext[i] = (int64_t)i + 1;
            g->lat[i] = GEN_LAT0 + ((double)r - (double)c->rows / 2 + jy) * c->dlat;
            g->lon[i] = GEN_LON0 + ((double)col - (double)cols / 2 + jx) * c->dlon;
            c->coslat[i] = cos(g->lat[i] * (3.14159265358979323846 / 180.0));
        }
        return;
    }
    for (uint64_t i = begin; i < end; i++) {
        uint64_t col = i % cols;
        uint32_t deg = 0, p = c->pass == 2 ? g->row[i] : 0; /* row is being written in pass 1 */
        double kmh;
        /* neighbours in ascending index order: up, left, right, down */
        if (i >= cols && (street(c, i - cols, 0, &kmh) & 2)) {
            if (c->pass == 2) {
                g->col[p + deg] = (uint32_t)(i - cols);
                g->w[p + deg] = travel_ds(c, i, i - cols, kmh);
            }
            deg++;
        }
        if (col > 0 && (street(c, i - 1, 1, &kmh) & 2)) {
            if (c->pass == 2) {
                g->col[p + deg] = (uint32_t)(i - 1);
                g->w[p + deg] = travel_ds(c, i, i - 1, kmh);
            }
            deg++;
        }
        if (col + 1 < cols && i + 1 < n && (street(c, i, 1, &kmh) & 1)) {
            if (c->pass == 2) {
                g->col[p + deg] = (uint32_t)(i + 1);
                g->w[p + deg] = travel_ds(c, i, i + 1, kmh);
            }
            deg++;
        }
        if (i + cols < n && (street(c, i, 0, &kmh) & 1)) {
            if (c->pass == 2) {
                g->col[p + deg] = (uint32_t)(i + cols);
                g->w[p + deg] = travel_ds(c, i, i + cols, kmh);
            }
            deg++;
        }
        if (c->pass == 1) g->row[i + 1] = deg;
    }
}

gp_graph *gp_generate_grid(uint64_t n, uint64_t seed, gp_err *err) {
    if (n < 100 || n > 100000000ULL) {
        gp_err_set(err, GP_EINVAL, "grid: node count %llu is outside 100..100000000",
                   (unsigned long long)n);
        return NULL;
    }
    gp_graph *g = calloc(1, sizeof *g);
    if (!g) goto oom0;
    gen_ctx c = {0};
    c.n = n;
    c.seed = seed;
    c.cols = (uint64_t)ceil(sqrt((double)n));
    while (c.cols * c.cols < n) c.cols++;
    c.rows = (n + c.cols - 1) / c.cols;
    c.dlat = GEN_SPACING_M / (GP_EARTH_RADIUS_M * 3.14159265358979323846 / 180.0);
    c.dlon = c.dlat / cos(GEN_LAT0 * 3.14159265358979323846 / 180.0);
    c.g = g;
    g->n = (uint32_t)n;
    g->scale = 1.0;
    g->ext = malloc(n * sizeof *g->ext);
    g->lon = malloc(n * sizeof(double));
    g->lat = malloc(n * sizeof(double));
    g->row = calloc(n + 1, sizeof *g->row);
    c.coslat = malloc(n * sizeof(double));
    if (!g->ext || !g->lon || !g->lat || !g->row || !c.coslat) goto oom;
    double t0 = gp_now();
    c.pass = 0;
    gp_parallel_for(n, 0, gen_range, &c);
    double t1 = gp_now();
    c.pass = 1;
    gp_parallel_for(n, 0, gen_range, &c);
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++) {
        m += g->row[i + 1];
        g->row[i + 1] = (uint32_t)m;
    }
    g->m = (uint32_t)m;
    g->col = malloc((m ? m : 1) * sizeof *g->col);
    g->w = malloc((m ? m : 1) * sizeof *g->w);
    if (!g->col || !g->w) goto oom;
    double t2 = gp_now();
    c.pass = 2;
    gp_parallel_for(n, 0, gen_range, &c);
    free(c.coslat);
    GP_LOG(GP_LOG_DEBUG, "grid %llu: coordinates %.3fs, degrees %.3fs, arcs %.3fs",
           (unsigned long long)n, t1 - t0, t2 - t1, gp_now() - t2);
    char src[64];
    snprintf(src, sizeof src, "grid:%llu:%llu", (unsigned long long)n, (unsigned long long)seed);
    gp_graph_set_unit(g, "deciseconds", 0.1);
    return gp_graph_complete(g, src, "grid", 1, err);
oom:
    free(c.coslat);
    free(g->ext);
    free(g->lon);
    free(g->lat);
    free(g->row);
    free(g->col);
    free(g->w);
    free(g);
oom0:
    gp_err_set(err, GP_ENOMEM, "grid: out of memory for %llu nodes", (unsigned long long)n);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * DIMACS writer
 * ------------------------------------------------------------------------------------------- */

/* Appends the decimal form of x to p; returns the new end. */
static char *put_i64(char *p, int64_t x) {
    char tmp[24];
    int k = 0;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        tmp[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) *p++ = '-';
    while (k) *p++ = tmp[--k];
    return p;
}

/* Buffered writer of "T A B C" lines (T one letter, A B C integers). */
enum { OUTBUF = 1 << 16 };
typedef struct outbuf {
    FILE *f;
    char buf[OUTBUF + 128];
    char *p;
    int failed;
} outbuf;

static void ob_flush(outbuf *o) {
    size_t len = (size_t)(o->p - o->buf);
    if (len && fwrite(o->buf, 1, len, o->f) != len) o->failed = 1;
    o->p = o->buf;
}

static void ob_line(outbuf *o, char tag, int64_t a, int64_t b, int64_t c) {
    char *p = o->p;
    *p++ = tag;
    *p++ = ' ';
    p = put_i64(p, a);
    *p++ = ' ';
    p = put_i64(p, b);
    *p++ = ' ';
    p = put_i64(p, c);
    *p++ = '\n';
    o->p = p;
    if (p - o->buf >= OUTBUF) ob_flush(o);
}

/* Flushes and closes; GP_EIO naming path when any write failed. */
static int ob_close(outbuf *o, const char *path, gp_err *err) {
    if (!o) return GP_OK;
    if (o->f) {
        ob_flush(o);
        if (fclose(o->f) != 0) o->failed = 1;
        o->f = NULL;
    }
    return o->failed ? gp_err_set(err, GP_EIO, "%s: write failed", path) : GP_OK;
}

int gp_write_dimacs(const gp_graph *g, const char *gr_path, const char *co_path, gp_err *err) {
    if (!g || !gr_path) return gp_err_set(err, GP_EINVAL, "write dimacs: no graph or path");
    /* DIMACS node ids are 1..n: keep the external ids when they already are, else renumber */
    int keep = 1;
    for (uint32_t i = 0; i < g->n && keep; i++) keep = g->ext[i] == (int64_t)i + 1;
    outbuf *o = malloc(sizeof *o);
    if (!o) return gp_err_set(err, GP_ENOMEM, "write dimacs: out of memory");
    o->p = o->buf;
    o->failed = 0;
    o->f = fopen(gr_path, "w");
    if (!o->f) {
        free(o);
        return gp_err_set(err, GP_EIO, "%s: cannot open for writing", gr_path);
    }
    fprintf(o->f, "c written by gpath from %s (version %s)\n", g->source, g->version);
    if (g->scale != 1.0) fprintf(o->f, "c weights are costs times scale %.17g\n", g->scale);
    if (!keep) fprintf(o->f, "c node ids renumbered 1..n in ascending order of the original ids\n");
    fprintf(o->f, "p sp %u %u\n", g->n, g->m);
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t i = g->row[u]; i < g->row[u + 1]; i++)
            ob_line(o, 'a', keep ? g->ext[u] : (int64_t)u + 1,
                    keep ? g->ext[g->col[i]] : (int64_t)g->col[i] + 1, g->w[i]);
    int rc = ob_close(o, gr_path, err);
    if (rc == GP_OK && co_path && g->lon) {
        o->f = fopen(co_path, "w");
        if (!o->f) {
            free(o);
            return gp_err_set(err, GP_EIO, "%s: cannot open for writing", co_path);
        }
        fprintf(o->f, "c coordinates written by gpath: lon/lat times 1e6\n");
        fprintf(o->f, "p aux sp co %u\n", g->n);
        for (uint32_t u = 0; u < g->n; u++)
            if (isfinite(g->lon[u]))
                ob_line(o, 'v', keep ? g->ext[u] : (int64_t)u + 1, llround(g->lon[u] * 1e6),
                        llround(g->lat[u] * 1e6));
        rc = ob_close(o, co_path, err);
    }
    free(o);
    return rc;
}
