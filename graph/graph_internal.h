/* graph_internal.h - helpers shared by the graph module's own files (graph, builder, generator,
 * loaders, spatial index). Not part of the public contract; other modules include graph.h only.
 */
#ifndef GP_GRAPH_INTERNAL_H
#define GP_GRAPH_INTERNAL_H

#include "graph/graph.h"

#include <stddef.h>
#include <stdint.h>

/* splitmix64 step: advances *state and returns the next 64-bit value. */
static inline uint64_t gp_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Stateless mix of a key (splitmix64 finaliser). */
static inline uint64_t gp_mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The hash of an external id in the builder's and the id map's open addressing. */
static inline uint64_t gp_id_hash(int64_t id) { return gp_mix64((uint64_t)id); }

/* Sorts every row of a CSR (row, col, w) by (col, w) on threads (builder.c); 0, or -1 when scratch
 * memory ran out. */
int gp_graph_sort_rows(const uint32_t *row, uint32_t *col, uint32_t *w, uint32_t n,
                       uint32_t maxdeg);
/* Frees g and everything it owns whatever its reference count: a graph being built (graph.c). */
void gp_graph_destroy(gp_graph *g);

/* Completes a graph whose n, m, row, col, w, ext (ascending), scale and optional lon/lat/names
 * are filled: builds the reverse CSR (unless rrow, rcol and rw are all given), the id map, max_w, the content hash and version, the
 * spatial index (when lon/lat exist), loaded_at and refs = 1, and records source/format/directed.
 * On failure frees g entirely and returns NULL with err filled. */
gp_graph *gp_graph_complete(gp_graph *g, const char *source, const char *format, int directed,
                            gp_err *err);

/* The road-like generator's output before it becomes a CSR graph (graph/road.c): coordinates and
 * an undirected edge list with a road class (enum gp_road_class) and a direction per edge. The edges of
 * one road (a street with its shape points, a rural road) are consecutive and continue each other
 * (ev[e] == eu[e + 1]). */
typedef struct gp_roadnet {
    uint64_t n, ne;
    double *x, *y;        /* n lon / lat */
    uint32_t *eu, *ev;    /* ne edge ends, 0-based nodes */
    uint8_t *ecls;        /* ne road classes */
    uint8_t *edir;        /* ne: 1 eu->ev only, 2 ev->eu only, 3 both ways */
    uint32_t settlements; /* towns and cities */
    uint32_t links;       /* rural roads and motorways between them */
    double map_km;        /* side of the square map */
} gp_roadnet;

/* Builds the road network of gen:n:seed (see graph/road.c); NULL with err filled on bad n or OOM. */
gp_roadnet *gp_roadnet_build(uint64_t n, uint64_t seed, gp_err *err);
void gp_roadnet_free(gp_roadnet *r); /* accepts NULL */

/* Per-arc road attributes collected by a builder (graph/roadattr.c): arcs are pushed in the
 * builder's arc order; emit lays them out in CSR order through origin[p], the builder arc index
 * of CSR position p, and fills g's arc_* arrays, shape points and strings table. */
typedef struct gp_attrbuf gp_attrbuf;
gp_attrbuf *gp_attrbuf_new(void);
void gp_attrbuf_free(gp_attrbuf *a);                        /* accepts NULL */
int gp_attrbuf_push(gp_attrbuf *a, const gp_road_attr *ra); /* ra NULL: no attributes; -1 OOM */
int gp_attrbuf_emit(gp_attrbuf *a, gp_graph *g, const uint32_t *origin); /* -1 OOM */

/* Host bytes of the road attributes (graph/roadattr.c). */
uint64_t gp_graph_roadattr_memory(const gp_graph *g);

/* Sets the builder's scale; only before any cost has been converted with it. */
void gp_builder_set_scale(gp_builder *b, double scale);

/* 64-bit content hash of a byte range chained from h (the graph version's hash function; not
 * cryptographic). */
uint64_t gp_hash_bytes(uint64_t h, const void *data, uint64_t len);

/* Grows *p (elements of size sz) to hold at least need elements, capacity doubling from 1024;
 * -1 (and *p, *cap untouched) when memory runs out. */
int gp_grow(void **p, uint64_t *cap, uint64_t need, size_t sz);

/* Wall-clock seconds since the epoch. */
double gp_wall_now(void);

/* Line reader for text inputs, plain or gzip (zlib reads both). Lines come back NUL-terminated
 * without their "\n" / "\r\n", numbered from 1. A line longer than 1 MiB is an error. */
typedef struct gp_lines gp_lines;
/* NULL with err filled (GP_EIO, "PATH: cannot open: reason") when the file cannot be opened, or
 * when o's guards refuse it (gp_load_check_file). o (may be NULL) must outlive the reader: its
 * max_bytes, deadline and cancel flag are checked on every block read. */
gp_lines *gp_lines_open(const char *path, const gp_load_opts *o, gp_err *err);
/* 1 with *line / *len set, 0 at the end of the input, or a GP_E* code (negated) with err filled
 * ("PATH:LINE: ...") on a read error or a truncated gzip stream. The line stays valid until the
 * next call and may be modified in place by the caller. */
int gp_lines_next(gp_lines *r, char **line, size_t *len, gp_err *err);
/* Number of the line last returned (0 before the first). */
uint64_t gp_lines_number(const gp_lines *r);
/* Bytes read so far (after decompression) and the file's size on disk (0 when unknown). */
uint64_t gp_lines_bytes(const gp_lines *r);
uint64_t gp_lines_file_size(const gp_lines *r);
void gp_lines_close(gp_lines *r);
/* Reads a whole file (plain or gzip) into a malloc'd NUL-terminated buffer under the same guards
 * as the line reader. GP_OK with *out / *len set (caller frees), else a GP_E* code with err. */
int gp_read_all(const char *path, const gp_load_opts *o, char **out, size_t *len, gp_err *err);

/* Parses one whitespace-delimited signed decimal integer token at *p (leading blanks skipped) and
 * advances *p past it. 0 ok; -1 not an integer (e.g. "1.5", "x", nothing left); -2 out of range. */
static inline int gp_parse_i64(const char **p, int64_t *out) {
    const char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    int neg = 0;
    if (*s == '-' || *s == '+') neg = *s++ == '-';
    if (*s < '0' || *s > '9') return -1;
    uint64_t v = 0;
    int over = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) over = 1;
        v = v * 10 + d;
    }
    if (*s && *s != ' ' && *s != '\t') return -1;
    if (over || v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) return -2;
    /* -(v - 1) - 1 reaches INT64_MIN without an unsigned wrap */
    *out = neg ? (v ? -(int64_t)(v - 1) - 1 : 0) : (int64_t)v;
    *p = s;
    return 0;
}

/* Copies the whitespace-delimited token at p (at most cap - 1 bytes) into buf, for messages. */
static inline const char *gp_token(const char *p, char *buf, size_t cap) {
    while (*p == ' ' || *p == '\t') p++;
    size_t i = 0;
    while (p[i] && p[i] != ' ' && p[i] != '\t' && i + 1 < cap) {
        buf[i] = p[i];
        i++;
    }
    buf[i] = '\0';
    return buf;
}

/* 1 when only blanks remain at p. */
static inline int gp_rest_blank(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return *p == '\0';
}

#endif
