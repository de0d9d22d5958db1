/* mvt.c - the Mapbox Vector Tile 2.1 encoder of mvt.h: protobuf wire format written by hand
 * (varints, length-delimited fields, fixed 32/64-bit values), per-layer key and value tables
 * deduplicated through an open-addressing hash of their encoded bytes, geometry commands with
 * zigzag deltas, and Liang-Barsky clipping of lines to a tile's buffered box.
 */
#include "server/api/mvt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

/* Encoded entries (keys: the string; values: a Value message) deduplicated by their bytes. */
typedef struct table {
    buf data;
    size_t *off; /* n + 1 offsets into data */
    uint32_t n, cap;
    uint32_t *slot; /* mask + 1 slots: entry index + 1, 0 empty */
    uint32_t mask;
} table;

struct gp_mvt {
    buf out;      /* finished layers, as Tile.layers fields */
    buf features; /* the current layer's finished features, as Layer.features fields */
    table keys, values;
    char *name;
    uint32_t extent;
    int in_layer, in_feature, oom;
    /* the current feature */
    int type;
    uint64_t id;
    uint32_t *tags, *geom;
    size_t ntags, capt, ngeom, capg;
    int64_t cx, cy; /* the geometry cursor */
    size_t movepos; /* point features: the MoveTo command's index in geom */
    size_t npoints;
    size_t count; /* features written */
};

/* ---- bytes ---- */
static int grow(gp_mvt *t, void **p, size_t *cap, size_t need, size_t elem) {
    if (t->oom) return 0;
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) {
        t->oom = 1;
        return 0;
    }
    *p = q;
    *cap = c;
    return 1;
}

static void b_bytes(gp_mvt *t, buf *b, const void *s, size_t k) {
    if (!grow(t, (void **)&b->p, &b->cap, b->n + k, 1)) return;
    if (k) memcpy(b->p + b->n, s, k);
    b->n += k;
}

static void b_varint(gp_mvt *t, buf *b, uint64_t v) {
    uint8_t tmp[10];
    size_t k = 0;
    do {
        tmp[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[k] |= 0x80;
        k++;
    } while (v);
    b_bytes(t, b, tmp, k);
}

/* A field key: field number and wire type (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit). */
static void b_tag(gp_mvt *t, buf *b, uint32_t field, uint32_t wire) {
    b_varint(t, b, (uint64_t)field << 3 | wire);
}

static void b_lenfield(gp_mvt *t, buf *b, uint32_t field, const void *s, size_t k) {
    b_tag(t, b, field, 2);
    b_varint(t, b, k);
    b_bytes(t, b, s, k);
}

static uint32_t zigzag32(int64_t v) {
    return v < 0 ? (uint32_t)(((uint64_t)(-v) << 1) - 1) : (uint32_t)((uint64_t)v << 1);
}
static uint64_t zigzag64(int64_t v) {
    return v < 0 ? (((uint64_t)(-(v + 1))) << 1) + 1 : (uint64_t)v << 1;
}

/* ---- deduplicated tables ---- */
static uint32_t mvt_hash(const uint8_t *s, size_t k) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < k; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

static void table_free(table *tb) {
    if (!tb) return;
    free(tb->data.p);
    free(tb->off);
    free(tb->slot);
    memset(tb, 0, sizeof *tb);
}

static int table_rehash(gp_mvt *t, table *tb) {
    uint32_t size = tb->mask ? (tb->mask + 1) * 2 : 64;
    uint32_t *s = calloc(size, sizeof *s);
    if (!s) {
        t->oom = 1;
        return 0;
    }
    for (uint32_t i = 0; i < tb->n; i++) {
        uint32_t h = mvt_hash(tb->data.p + tb->off[i], tb->off[i + 1] - tb->off[i]) & (size - 1);
        while (s[h]) h = (h + 1) & (size - 1);
        s[h] = i + 1;
    }
    free(tb->slot);
    tb->slot = s;
    tb->mask = size - 1;
    return 1;
}

/* The index of entry enc[0..k) in tb, added when new; UINT32_MAX when out of memory. */
static uint32_t table_index(gp_mvt *t, table *tb, const uint8_t *enc, size_t k) {
    if (t->oom) return UINT32_MAX;
    if ((tb->n + 1) * 2 > tb->mask + 1 && !table_rehash(t, tb)) return UINT32_MAX;
    uint32_t h = mvt_hash(enc, k) & tb->mask;
    for (; tb->slot[h]; h = (h + 1) & tb->mask) {
        uint32_t i = tb->slot[h] - 1;
        size_t len = tb->off[i + 1] - tb->off[i];
        if (len == k && !memcmp(tb->data.p + tb->off[i], enc, k)) return i;
    }
    size_t cap = tb->cap;
    if (!grow(t, (void **)&tb->off, &cap, (size_t)tb->n + 2, sizeof *tb->off)) return UINT32_MAX;
    tb->cap = (uint32_t)cap;
    if (tb->n == 0) tb->off[0] = 0;
    b_bytes(t, &tb->data, enc, k);
    if (t->oom) return UINT32_MAX;
    tb->off[tb->n + 1] = tb->data.n;
    tb->slot[h] = ++tb->n;
    return tb->n - 1;
}

/* ---- tile and layers ---- */
gp_mvt *gp_mvt_new(void) { return calloc(1, sizeof(gp_mvt)); }

void gp_mvt_free(gp_mvt *t) {
    if (!t) return;
    free(t->out.p);
    free(t->features.p);
    table_free(&t->keys);
    table_free(&t->values);
    free(t->name);
    free(t->tags);
    free(t->geom);
    free(t);
}

static void end_layer(gp_mvt *t) {
    if (!t->in_layer) return;
    if (t->in_feature) gp_mvt_commit(t);
    buf l = {0};
    b_tag(t, &l, 15, 0); /* version */
    b_varint(t, &l, 2);
    b_lenfield(t, &l, 1, t->name, strlen(t->name));
    b_bytes(t, &l, t->features.p, t->features.n);
    for (uint32_t i = 0; i < t->keys.n; i++)
        b_lenfield(t, &l, 3, t->keys.data.p + t->keys.off[i], t->keys.off[i + 1] - t->keys.off[i]);
    for (uint32_t i = 0; i < t->values.n; i++)
        b_lenfield(t, &l, 4, t->values.data.p + t->values.off[i],
                   t->values.off[i + 1] - t->values.off[i]);
    b_tag(t, &l, 5, 0); /* extent */
    b_varint(t, &l, t->extent);
    b_lenfield(t, &t->out, 3, l.p, l.n);
    free(l.p);
    t->features.n = 0;
    table_free(&t->keys);
    table_free(&t->values);
    free(t->name);
    t->name = NULL;
    t->in_layer = 0;
}

void gp_mvt_layer(gp_mvt *t, const char *name, uint32_t extent) {
    end_layer(t);
    if (t->oom) return;
    t->name = strdup(name);
    if (!t->name) {
        t->oom = 1;
        return;
    }
    t->extent = extent;
    t->in_layer = 1;
}

void gp_mvt_feature(gp_mvt *t, int type, uint64_t id) {
    if (t->in_feature) gp_mvt_commit(t);
    t->in_feature = 1;
    t->type = type;
    t->id = id;
    t->ntags = t->ngeom = t->npoints = 0;
    t->cx = t->cy = 0;
}

static void push(gp_mvt *t, uint32_t **a, size_t *n, size_t *cap, uint32_t v) {
    if (!grow(t, (void **)a, cap, *n + 1, sizeof **a)) return;
    (*a)[(*n)++] = v;
}

/* Adds property key = value (vbytes: an encoded Value message). */
static void prop(gp_mvt *t, const char *key, const uint8_t *vbytes, size_t vk) {
    if (!t->in_feature || t->oom) return;
    uint32_t ki = table_index(t, &t->keys, (const uint8_t *)key, strlen(key));
    uint32_t vi = table_index(t, &t->values, vbytes, vk);
    if (ki == UINT32_MAX || vi == UINT32_MAX) return;
    push(t, &t->tags, &t->ntags, &t->capt, ki);
    push(t, &t->tags, &t->ntags, &t->capt, vi);
}

void gp_mvt_prop_str(gp_mvt *t, const char *key, const char *v) {
    if (!v) return;
    buf b = {0};
    b_lenfield(t, &b, 1, v, strlen(v));
    prop(t, key, b.p, b.n);
    free(b.p);
}

/* A Value of a fixed-width field: wire 5 (4 bytes) or 1 (8 bytes), little-endian. */
static void prop_fixed(gp_mvt *t, const char *key, uint32_t field, uint64_t bits, int width) {
    uint8_t v[9];
    v[0] = (uint8_t)(field << 3 | (width == 4 ? 5u : 1u));
    for (int i = 0; i < width; i++) v[1 + i] = (uint8_t)(bits >> (8 * i));
    prop(t, key, v, (size_t)width + 1);
}

void gp_mvt_prop_float(gp_mvt *t, const char *key, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    prop_fixed(t, key, 2, bits, 4);
}

void gp_mvt_prop_double(gp_mvt *t, const char *key, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    prop_fixed(t, key, 3, bits, 8);
}

static void prop_varint(gp_mvt *t, const char *key, uint32_t field, uint64_t v) {
    buf b = {0};
    b_tag(t, &b, field, 0);
    b_varint(t, &b, v);
    prop(t, key, b.p, b.n);
    free(b.p);
}

void gp_mvt_prop_sint(gp_mvt *t, const char *key, int64_t v) {
    prop_varint(t, key, 6, zigzag64(v));
}
void gp_mvt_prop_uint(gp_mvt *t, const char *key, uint64_t v) { prop_varint(t, key, 5, v); }
void gp_mvt_prop_bool(gp_mvt *t, const char *key, int v) { prop_varint(t, key, 7, v ? 1 : 0); }

static void cmd(gp_mvt *t, uint32_t id, uint32_t count) {
    push(t, &t->geom, &t->ngeom, &t->capg, (id & 7) | count << 3);
}

static void delta(gp_mvt *t, int64_t x, int64_t y) {
    push(t, &t->geom, &t->ngeom, &t->capg, zigzag32(x - t->cx));
    push(t, &t->geom, &t->ngeom, &t->capg, zigzag32(y - t->cy));
    t->cx = x;
    t->cy = y;
}

void gp_mvt_point(gp_mvt *t, int32_t x, int32_t y) {
    if (!t->in_feature || t->oom) return;
    if (t->npoints == 0) {
        t->movepos = t->ngeom;
        cmd(t, 1, 1);
    } else if (t->movepos < t->ngeom) {
        t->geom[t->movepos] = 1u | (uint32_t)(t->npoints + 1) << 3;
    }
    delta(t, x, y);
    t->npoints++;
}

void gp_mvt_line(gp_mvt *t, const int32_t *xy, size_t n) {
    if (!t->in_feature || t->oom) return;
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || xy[2 * i] != xy[2 * i - 2] || xy[2 * i + 1] != xy[2 * i - 1]) distinct++;
    if (distinct < 2) return;
    cmd(t, 1, 1);
    delta(t, xy[0], xy[1]);
    cmd(t, 2, (uint32_t)(distinct - 1));
    for (size_t i = 1; i < n; i++)
        if (xy[2 * i] != xy[2 * i - 2] || xy[2 * i + 1] != xy[2 * i - 1])
            delta(t, xy[2 * i], xy[2 * i + 1]);
}

/* Liang-Barsky: the part [*t0, *t1] of segment (x0,y0)-(x1,y1) inside [lo, hi]^2; 0 when none. */
static int clip_seg(double x0, double y0, double x1, double y1, double lo, double hi, double *t0,
                    double *t1) {
    double p[4] = {-(x1 - x0), x1 - x0, -(y1 - y0), y1 - y0};
    double q[4] = {x0 - lo, hi - x0, y0 - lo, hi - y0};
    double a = 0, b = 1;
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0) return 0;
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0) {
            if (r > a) a = r;
        } else if (r < b) {
            b = r;
        }
        if (a > b) return 0;
    }
    *t0 = a;
    *t1 = b;
    return 1;
}

typedef struct part {
    int32_t *xy;
    size_t n, cap;
} part;

static void part_add(gp_mvt *t, part *p, double x, double y) {
    if (!grow(t, (void **)&p->xy, &p->cap, 2 * (p->n + 1), sizeof *p->xy)) return;
    p->xy[2 * p->n] = (int32_t)lround(x);
    p->xy[2 * p->n + 1] = (int32_t)lround(y);
    p->n++;
}

/* Adds part p as a line part when it has two distinct points; empties it. Returns 1 if added. */
static int part_flush(gp_mvt *t, part *p) {
    size_t before = t->ngeom;
    if (p->n >= 2) gp_mvt_line(t, p->xy, p->n);
    p->n = 0;
    return t->ngeom > before;
}

size_t gp_mvt_line_clip(gp_mvt *t, const double *x, const double *y, size_t n, double lo,
                        double hi) {
    part p = {0};
    size_t parts = 0;
    for (size_t i = 0; i + 1 < n && !t->oom; i++) {
        double a, b;
        if (!clip_seg(x[i], y[i], x[i + 1], y[i + 1], lo, hi, &a, &b)) {
            parts += (size_t)part_flush(t, &p);
            continue;
        }
        double dx = x[i + 1] - x[i], dy = y[i + 1] - y[i];
        if (p.n == 0 || a > 0) {
            parts += (size_t)part_flush(t, &p);
            part_add(t, &p, x[i] + a * dx, y[i] + a * dy);
        }
        part_add(t, &p, x[i] + b * dx, y[i] + b * dy);
        if (b < 1) parts += (size_t)part_flush(t, &p);
    }
    parts += (size_t)part_flush(t, &p);
    free(p.xy);
    return parts;
}

int gp_mvt_commit(gp_mvt *t) {
    if (!t->in_feature) return 0;
    t->in_feature = 0;
    if (t->oom || !t->in_layer || t->ngeom == 0) return 0;
    buf f = {0};
    if (t->id) {
        b_tag(t, &f, 1, 0);
        b_varint(t, &f, t->id);
    }
    if (t->ntags) {
        buf k = {0};
        for (size_t i = 0; i < t->ntags; i++) b_varint(t, &k, t->tags[i]);
        b_lenfield(t, &f, 2, k.p, k.n);
        free(k.p);
    }
    b_tag(t, &f, 3, 0);
    b_varint(t, &f, (uint64_t)t->type);
    buf g = {0};
    for (size_t i = 0; i < t->ngeom; i++) b_varint(t, &g, t->geom[i]);
    b_lenfield(t, &f, 4, g.p, g.n);
    free(g.p);
    b_lenfield(t, &t->features, 2, f.p, f.n);
    free(f.p);
    if (t->oom) return 0;
    t->count++;
    return 1;
}

size_t gp_mvt_count(const gp_mvt *t) { return t->count; }

char *gp_mvt_finish(gp_mvt *t, size_t *len) {
    end_layer(t);
    char *out = NULL;
    if (!t->oom) {
        out = t->out.n ? (char *)t->out.p : malloc(1);
        if (t->out.n) t->out.p = NULL;
        *len = t->out.n;
    }
    gp_mvt_free(t);
    return out;
}

char *gp_mvt_finish_drawn(gp_mvt *t, size_t drawn, size_t *len) {
    if (drawn) return gp_mvt_finish(t, len);
    gp_mvt_free(t);
    *len = 0;
    return malloc(1);
}

/* ---- slippy-map tiles ---- */
int gp_tile_valid(uint32_t z, uint32_t x, uint32_t y) {
    return z <= 30 && x < (1u << z) && y < (1u << z);
}

static double tile_lat(double yn) { /* yn: 0 north edge .. 1 south edge of the world */
    return atan(sinh(M_PI * (1 - 2 * yn))) * 180 / M_PI;
}

void gp_tile_bounds(uint32_t z, uint32_t x, uint32_t y, double *min_lon, double *min_lat,
                    double *max_lon, double *max_lat) {
    double s = ldexp(1, (int)z);
    *min_lon = x / s * 360 - 180;
    *max_lon = (x + 1) / s * 360 - 180;
    *max_lat = tile_lat(y / s);
    *min_lat = tile_lat((y + 1) / s);
}

void gp_tile_project(uint32_t z, uint32_t x, uint32_t y, uint32_t extent, double lon, double lat,
                     double *px, double *py) {
    double s = ldexp(1, (int)z);
    if (lat > 85.0511287798) lat = 85.0511287798;
    if (lat < -85.0511287798) lat = -85.0511287798;
    double r = lat * M_PI / 180;
    double wx = (lon + 180) / 360 * s;
    double wy = (1 - log(tan(r) + 1 / cos(r)) / M_PI) / 2 * s;
    *px = (wx - x) * extent;
    *py = (wy - y) * extent;
}
