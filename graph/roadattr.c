/* roadattr.c - what a graph's weights mean and what its arcs carry besides a weight.
 *
 * Every graph names its weight unit (gp_graph.unit_name / unit_s): the generator's weights are
 * travel times in deciseconds, topology loaders count hops (or a bandwidth-derived cost), OSM
 * imports travel times in deciseconds, and every other format "cost" (the input's own units,
 * unknown to gpath). Road attributes (length, name, ref, class, shape points) exist on OSM
 * graphs and their snapshots; the accessors here answer for every graph, falling back to the
 * straight line between the end nodes where the graph has coordinates and no shape.
 */
#include "graph/graph_internal.h"
#include "graph/spatial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[GP_ROAD_CLASS_COUNT] = {
    "unknown",  "motorway",     "trunk",       "primary", "secondary",
    "tertiary", "unclassified", "residential", "service", "living_street",
    "track",    "path",         "cycleway",    "footway", "ferry"};

const char *gp_road_class_name(int c) {
    return c >= 0 && c < GP_ROAD_CLASS_COUNT ? class_names[c] : "unknown";
}

static const char *const place_names[GP_PLACE_KIND_COUNT] = {
    NULL, "city", "town", "village", "suburb", "quarter", "neighbourhood", "hamlet"};

const char *gp_place_kind_name(int k) {
    return k > 0 && k < GP_PLACE_KIND_COUNT ? place_names[k] : NULL;
}

int gp_place_kind_of(const char *v) {
    for (int k = 1; v && k < GP_PLACE_KIND_COUNT; k++)
        if (!strcmp(v, place_names[k])) return k;
    return 0;
}

enum { PLACE_FIXED = 8 + 8 + 4 + 1 }; /* a record's bytes before its name */

int gp_place_append(uint8_t **buf, uint64_t *len, uint64_t *cap, const gp_place_rec *p) {
    size_t nl = strlen(p->name) + 1;
    if (*len + PLACE_FIXED + nl > *cap) {
        uint64_t c = *cap ? *cap * 2 : 1024;
        while (c < *len + PLACE_FIXED + nl) c *= 2;
        uint8_t *b = realloc(*buf, c);
        if (!b) return GP_ENOMEM;
        *buf = b;
        *cap = c;
    }
    uint8_t *o = *buf + *len, kind = (uint8_t)p->kind;
    memcpy(o, &p->lon, 8);
    memcpy(o + 8, &p->lat, 8);
    memcpy(o + 16, &p->population, 4);
    memcpy(o + 20, &kind, 1);
    memcpy(o + PLACE_FIXED, p->name, nl);
    *len += PLACE_FIXED + nl;
    return GP_OK;
}

int gp_graph_place_next(const gp_graph *g, uint64_t *off, gp_place_rec *p) {
    if (!g->places || *off + PLACE_FIXED >= g->places_len) return 0;
    const uint8_t *r = g->places + *off;
    const uint8_t *nul = memchr(r + PLACE_FIXED, 0, g->places_len - *off - PLACE_FIXED);
    if (!nul) return 0;
    memcpy(&p->lon, r, 8);
    memcpy(&p->lat, r + 8, 8);
    memcpy(&p->population, r + 16, 4);
    p->kind = r[20];
    p->name = (const char *)r + PLACE_FIXED;
    *off = (uint64_t)(nul + 1 - g->places);
    return 1;
}

void gp_graph_set_unit(gp_graph *g, const char *unit_name, double unit_s) {
    snprintf(g->unit_name, sizeof g->unit_name, "%s", unit_name ? unit_name : "cost");
    g->unit_s = unit_s > 0 ? unit_s : 0;
}

uint32_t gp_graph_arc_tail(const gp_graph *g, uint32_t a) {
    uint32_t lo = 0, hi = g->n; /* invariant: row[lo] <= a < row[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->row[mid] <= a) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The first arc u -> v in u's row (sorted by head, then weight), GP_NONE when none. */
static uint32_t first_arc(const gp_graph *g, uint32_t u, uint32_t v) {
    if (u >= g->n || v >= g->n) return GP_NONE;
    /* arcs of u are sorted by (head, weight) as built; a reweighted version (live traffic,
     * engine/traffic.h) may have reordered the weights of parallel arcs: the cheapest wins */
    uint32_t lo = g->row[u], hi = g->row[u + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= g->row[u + 1] || g->col[lo] != v) return GP_NONE;
    uint32_t best = lo;
    for (uint32_t a = lo + 1; a < g->row[u + 1] && g->col[a] == v; a++)
        if (g->w[a] < g->w[best]) best = a;
    return best;
}

uint32_t gp_graph_find_arc(const gp_graph *g, uint32_t u, uint32_t v) {
    /* the first arc to v is the cheapest; in a per-request metric (engine/metric.h) the closed
     * ones keep their place, so the cheapest is the first open one */
    uint32_t a = first_arc(g, u, v);
    if (a == GP_NONE || !g->closed) return a;
    for (uint32_t b = a; b < g->row[u + 1] && g->col[b] == v; b++)
        if (g->w[b] != GP_W_CLOSED) return b;
    return a;
}

uint32_t gp_graph_reverse_arc(const gp_graph *g, uint32_t a) {
    uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
    uint32_t r = first_arc(g, v, u);
    if (r == GP_NONE || !g->arc_shape || !g->shape_lon) return gp_graph_find_arc(g, v, u);
    const double *ax, *ay;
    uint32_t k = gp_graph_arc_shape(g, a, &ax, &ay);
    for (; r < g->row[v + 1] && g->col[r] == u; r++) { /* cheapest first */
        const double *rx, *ry;
        if (gp_graph_arc_shape(g, r, &rx, &ry) != k) continue;
        uint32_t i = 0;
        while (i < k && rx[i] == ax[k - 1 - i] && ry[i] == ay[k - 1 - i]) i++;
        if (i == k) return r;
    }
    return GP_NONE;
}

double gp_graph_arc_length_m(const gp_graph *g, uint32_t a) {
    if (g->arc_len_m) return g->arc_len_m[a];
    if (!g->lon) return NAN;
    uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
    const double *sx, *sy;
    uint32_t k = gp_graph_arc_shape(g, a, &sx, &sy);
    double len = 0, px = g->lon[u], py = g->lat[u];
    for (uint32_t i = 0; i < k; i++) {
        len += gp_haversine_m(px, py, sx[i], sy[i]);
        px = sx[i];
        py = sy[i];
    }
    return len + gp_haversine_m(px, py, g->lon[v], g->lat[v]);
}

const char *gp_graph_arc_guide(const gp_graph *g, uint32_t a, int f, size_t *len) {
    *len = 0;
    const char *s = g->arc_guide ? gp_graph_str(g, g->arc_guide[a]) : NULL;
    for (int k = 0; s && k < f; k++) {
        s = strchr(s, GP_GUIDE_SEP);
        if (s) s++;
    }
    if (!s) return NULL;
    const char *e = strchr(s, GP_GUIDE_SEP);
    *len = e ? (size_t)(e - s) : strlen(s);
    return *len ? s : NULL;
}

double gp_graph_arc_duration_s(const gp_graph *g, uint32_t a) {
    return g->unit_s > 0 ? gp_graph_cost(g, g->w[a]) * g->unit_s : NAN;
}

uint64_t gp_graph_roadattr_memory(const gp_graph *g) {
    uint64_t m = g->m, bytes = 0;
    if (g->arc_len_m) bytes += m * sizeof(float);
    if (g->arc_name) bytes += m * sizeof(uint32_t);
    if (g->arc_ref) bytes += m * sizeof(uint32_t);
    if (g->arc_class) bytes += m;
    if (g->arc_flags) bytes += m;
    if (g->arc_limits) bytes += (uint64_t)m * GP_LIMITS;
    if (g->arc_guide) bytes += m * sizeof(uint32_t);
    if (g->arc_shape) {
        bytes += (m + 1) * sizeof(uint32_t);
        bytes += (uint64_t)g->arc_shape[m] * 2 * sizeof(double);
        if (g->shape_osm_id) bytes += (uint64_t)g->arc_shape[m] * sizeof(int64_t);
    }
    bytes += g->strtab_len;
    if (g->osm_id) bytes += (uint64_t)g->n * sizeof(int64_t);
    if (g->node_flags) bytes += g->n;
    return bytes;
}

/* ---------------------------------------------------------------------------------------------
 * Attribute buffer of a builder: per-arc columns in insertion order, shape points back to back,
 * and a strings table with interning (one copy of each distinct name / ref).
 * ------------------------------------------------------------------------------------------- */

struct gp_attrbuf {
    uint64_t na, acap;
    float *len;
    uint32_t *name, *ref, *shape; /* shape[i]: first shape point of arc i */
    uint32_t *guide;
    uint8_t *cls, *flags;
    uint8_t *lim;                         /* GP_LIMITS per arc */
    int any_flags, any_guide, any_limits; /* some arc has flags / a guidance record / limits */
    uint64_t ns, scap;
    double *slon, *slat;
    int64_t *sid; /* shape points' original ids (0: unknown), NULL until an arc brings some */
    char *st;     /* strings table, offset 0 = "" */
    uint64_t stlen, stcap;
    uint32_t *sh; /* intern hash: string offsets, 0 = empty slot */
    uint64_t shmask, shcount;
    uint64_t bad_utf8; /* names interned with invalid UTF-8 repaired (U+FFFD) */
};

gp_attrbuf *gp_attrbuf_new(void) {
    gp_attrbuf *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->st = malloc(1024);
    if (!a->st) {
        free(a);
        return NULL;
    }
    a->st[0] = '\0';
    a->stlen = 1;
    a->stcap = 1024;
    return a;
}

void gp_attrbuf_free(gp_attrbuf *a) {
    if (!a) return;
    free(a->len);
    free(a->name);
    free(a->ref);
    free(a->shape);
    free(a->cls);
    free(a->flags);
    free(a->lim);
    free(a->guide);
    free(a->slon);
    free(a->slat);
    free(a->sid);
    free(a->st);
    free(a->sh);
    free(a);
}

/* Reallocates *p to cap elements of sz bytes; -1 (and *p untouched) on failure. */
static int buf_grow(void **p, uint64_t cap, size_t sz) {
    void *q = realloc(*p, (size_t)(cap * sz));
    if (!q) return -1;
    *p = q;
    return 0;
}

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Offset of s in the strings table, adding it when new; 0 for NULL / ""; UINT32_MAX on OOM or
 * when the table would pass 4 GiB. */
static uint32_t intern_valid(gp_attrbuf *a, const char *s);

/* A name is JSON text in answers: invalid UTF-8 (a PBF or XML file can carry any bytes) is
 * replaced byte by byte with U+FFFD before it is interned, and counted. */
static uint32_t intern(gp_attrbuf *a, const char *s) {
    if (!s || !*s) return 0;
    size_t n = strlen(s);
    if (gp_utf8_invalid(s, n) < 0) return intern_valid(a, s);
    char *fix = malloc(3 * n + 1);
    if (!fix) return UINT32_MAX;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = gp_utf8_seq((const unsigned char *)s + i, n - i);
        if (k) memcpy(fix + o, s + i, k), o += k, i += k;
        else memcpy(fix + o, "\xef\xbf\xbd", 3), o += 3, i++;
    }
    fix[o] = '\0';
    a->bad_utf8++;
    uint32_t off = intern_valid(a, fix);
    free(fix);
    return off;
}

static uint32_t intern_valid(gp_attrbuf *a, const char *s) {
    if ((a->shcount + 1) * 2 > a->shmask + 1) {
        uint64_t cap = a->sh ? (a->shmask + 1) * 2 : 1024;
        uint32_t *nh = calloc(cap, sizeof *nh);
        if (!nh) return UINT32_MAX;
        for (uint64_t i = 0; a->sh && i <= a->shmask; i++)
            if (a->sh[i]) {
                uint64_t j = str_hash(a->st + a->sh[i]) & (cap - 1);
                while (nh[j]) j = (j + 1) & (cap - 1);
                nh[j] = a->sh[i];
            }
        free(a->sh);
        a->sh = nh;
        a->shmask = cap - 1;
    }
    uint64_t j = str_hash(s) & a->shmask;
    for (; a->sh[j]; j = (j + 1) & a->shmask)
        if (strcmp(a->st + a->sh[j], s) == 0) return a->sh[j];
    size_t l = strlen(s) + 1;
    if (a->stlen + l >= UINT32_MAX) return UINT32_MAX;
    if (a->stlen + l > a->stcap) {
        uint64_t c = a->stcap * 2;
        while (c < a->stlen + l) c *= 2;
        if (buf_grow((void **)&a->st, c, 1)) return UINT32_MAX;
        a->stcap = c;
    }
    uint32_t off = (uint32_t)a->stlen;
    memcpy(a->st + off, s, l);
    a->stlen += l;
    a->sh[j] = off;
    a->shcount++;
    return off;
}

int gp_attrbuf_push(gp_attrbuf *a, const gp_road_attr *ra) {
    if (a->na >= a->acap) {
        uint64_t c = a->acap ? a->acap * 2 : 4096;
        if (buf_grow((void **)&a->len, c, sizeof *a->len) ||
            buf_grow((void **)&a->name, c, sizeof *a->name) ||
            buf_grow((void **)&a->ref, c, sizeof *a->ref) ||
            buf_grow((void **)&a->shape, c, sizeof *a->shape) ||
            buf_grow((void **)&a->cls, c, sizeof *a->cls) ||
            buf_grow((void **)&a->flags, c, sizeof *a->flags) ||
            buf_grow((void **)&a->lim, c, GP_LIMITS) ||
            buf_grow((void **)&a->guide, c, sizeof *a->guide))
            return -1;
        a->acap = c;
    }
    uint32_t ns = ra ? ra->nshape : 0;
    if (a->ns + ns >= UINT32_MAX) return -1;
    if (a->ns + ns > a->scap) {
        uint64_t c = a->scap ? a->scap * 2 : 4096;
        while (c < a->ns + ns) c *= 2;
        if (buf_grow((void **)&a->slon, c, sizeof(double)) ||
            buf_grow((void **)&a->slat, c, sizeof(double)) ||
            (a->sid && buf_grow((void **)&a->sid, c, sizeof(int64_t))))
            return -1;
        a->scap = c;
    }
    if (ns && ra->shape_osm_id && !a->sid) { /* the first arc with ids: earlier points get 0 */
        a->sid = calloc(a->scap ? a->scap : 1, sizeof(int64_t));
        if (!a->sid) return -1;
    }
    uint64_t i = a->na;
    a->len[i] = ra ? (float)ra->len_m : 0.0f;
    a->name[i] = ra ? intern(a, ra->name) : 0;
    a->ref[i] = ra ? intern(a, ra->ref) : 0;
    a->guide[i] = ra ? intern(a, ra->guide) : 0;
    if (a->name[i] == UINT32_MAX || a->ref[i] == UINT32_MAX || a->guide[i] == UINT32_MAX) return -1;
    a->flags[i] = ra ? (uint8_t)ra->flags : 0;
    a->any_flags |= a->flags[i] != 0;
    a->any_guide |= a->guide[i] != 0;
    for (int k = 0; k < GP_LIMITS; k++) {
        a->lim[i * GP_LIMITS + k] = ra ? ra->limits[k] : 0;
        a->any_limits |= a->lim[i * GP_LIMITS + k] != 0;
    }
    a->cls[i] = ra && ra->cls > 0 && ra->cls < GP_ROAD_CLASS_COUNT ? (uint8_t)ra->cls : 0;
    a->shape[i] = (uint32_t)a->ns;
    if (ns) {
        memcpy(a->slon + a->ns, ra->shape_lon, ns * sizeof(double));
        memcpy(a->slat + a->ns, ra->shape_lat, ns * sizeof(double));
        if (a->sid && ra->shape_osm_id)
            memcpy(a->sid + a->ns, ra->shape_osm_id, ns * sizeof(int64_t));
        else if (a->sid) memset(a->sid + a->ns, 0, ns * sizeof(int64_t));
    }
    a->ns += ns;
    a->na++;
    return 0;
}

int gp_attrbuf_emit(gp_attrbuf *a, gp_graph *g, const uint32_t *origin) {
    uint64_t m = g->m, ns = a->ns;
    g->arc_len_m = malloc((m ? m : 1) * sizeof *g->arc_len_m);
    g->arc_name = malloc((m ? m : 1) * sizeof *g->arc_name);
    g->arc_ref = malloc((m ? m : 1) * sizeof *g->arc_ref);
    g->arc_class = malloc(m ? m : 1);
    g->arc_shape = malloc((m + 1) * sizeof *g->arc_shape);
    g->shape_lon = malloc((ns ? ns : 1) * sizeof(double));
    g->shape_lat = malloc((ns ? ns : 1) * sizeof(double));
    /* flags and guidance records only when some arc has them (graphs without keep their size,
     * hash and snapshot layout) */
    if (a->any_flags) g->arc_flags = malloc(m ? m : 1);
    if (a->any_guide) g->arc_guide = malloc((m ? m : 1) * sizeof *g->arc_guide);
    if (a->any_limits) g->arc_limits = malloc((m ? m : 1) * GP_LIMITS);
    if (a->sid) g->shape_osm_id = malloc((ns ? ns : 1) * sizeof(int64_t));
    if (!g->arc_len_m || !g->arc_name || !g->arc_ref || !g->arc_class || !g->arc_shape ||
        !g->shape_lon || !g->shape_lat || (a->sid && !g->shape_osm_id) ||
        (a->any_flags && !g->arc_flags) || (a->any_guide && !g->arc_guide) ||
        (a->any_limits && !g->arc_limits))
        return -1;
    uint32_t at = 0;
    for (uint64_t p = 0; p < m; p++) {
        uint32_t i = origin[p];
        g->arc_len_m[p] = a->len[i];
        g->arc_name[p] = a->name[i];
        g->arc_ref[p] = a->ref[i];
        g->arc_class[p] = a->cls[i];
        if (g->arc_flags) g->arc_flags[p] = a->flags[i];
        if (g->arc_guide) g->arc_guide[p] = a->guide[i];
        if (g->arc_limits)
            memcpy(g->arc_limits + p * GP_LIMITS, a->lim + (size_t)i * GP_LIMITS, GP_LIMITS);
        g->arc_shape[p] = at;
        uint32_t b = a->shape[i], e = i + 1 < a->na ? a->shape[i + 1] : (uint32_t)a->ns;
        if (e > b) {
            memcpy(g->shape_lon + at, a->slon + b, (size_t)(e - b) * sizeof(double));
            memcpy(g->shape_lat + at, a->slat + b, (size_t)(e - b) * sizeof(double));
            if (a->sid) memcpy(g->shape_osm_id + at, a->sid + b, (size_t)(e - b) * sizeof(int64_t));
        }
        at += e - b;
    }
    g->arc_shape[m] = at;
    if (a->bad_utf8)
        GP_LOG(GP_LOG_WARN,
               "event=names_repaired count=%llu msg=\"road names with invalid UTF-8: the bad bytes "
               "are replaced with U+FFFD\"",
               (unsigned long long)a->bad_utf8);
    g->strtab = a->st; /* ownership moves to the graph */
    g->strtab_len = a->stlen;
    a->st = NULL;
    return 0;
}
