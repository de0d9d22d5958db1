/* osmseg.c - the OSM-segment index (contract in osmseg.h): every segment of every arc as (first
 * point's OSM id, arc, piece), sorted by the id (an LSD radix sort over the bytes in which the ids
 * differ), so that a lookup is a binary search and a walk over the segments starting there.
 */
#include "graph/osmseg.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct ent {
    uint64_t key; /* the first point's id, sign bit flipped: unsigned order is signed order */
    int64_t to;   /* the second point's id (a lookup reads no graph array) */
    uint32_t arc, piece;
} ent;

struct gp_osmseg {
    uint64_t n;
    ent *e;
    /* a directory over the key range: the entries of keys in [lo + b * width, lo + (b + 1) *
     * width) are e[dir[b] .. dir[b + 1]), so a lookup searches one bucket, not the whole array
     * (the array is 58 MB on a 1M-node map: a binary search there is 20 cache misses) */
    uint64_t lo, width, nb;
    uint64_t *dir;
};

static inline uint64_t key_of(int64_t id) { return (uint64_t)id ^ (1ULL << 63); }

static inline uint32_t points(const gp_graph *g, uint32_t a) {
    if (!g->shape_osm_id || !g->arc_shape) return 0;
    return g->arc_shape[a + 1] - g->arc_shape[a];
}

/* The OSM id of point i >= 1 of arc a (1 .. ns: shape points, ns + 1: the head). */
static inline int64_t point_after(const gp_graph *g, uint32_t a, uint32_t ns, uint32_t i) {
    return i > ns ? gp_graph_orig_id(g, g->col[a]) : g->shape_osm_id[g->arc_shape[a] + i - 1];
}

static void idx_free(void *p) {
    gp_osmseg *x = p;
    if (!x) return;
    free(x->dir);
    free(x->e);
    free(x);
}

/* Sorts e[0..n) by key, stably, 8 bits a pass over the bytes in which some keys differ. */
static int radix_sort(ent *e, uint64_t n) {
    if (n < 2) return 0;
    uint64_t diff = 0;
    for (uint64_t i = 1; i < n; i++) diff |= e[i].key ^ e[0].key;
    ent *tmp = malloc(sizeof *tmp * n);
    if (!tmp) return -1;
    ent *src = e, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        if (!((diff >> shift) & 0xff)) continue;
        uint64_t cnt[257] = {0};
        for (uint64_t i = 0; i < n; i++) cnt[((src[i].key >> shift) & 0xff) + 1]++;
        for (int b = 0; b < 256; b++) cnt[b + 1] += cnt[b];
        for (uint64_t i = 0; i < n; i++) dst[cnt[(src[i].key >> shift) & 0xff]++] = src[i];
        ent *t = src;
        src = dst;
        dst = t;
    }
    if (src != e) memcpy(e, src, sizeof *e * n);
    free(tmp);
    return 0;
}

static gp_osmseg *idx_build(const gp_graph *g, gp_err *err) {
    uint64_t n = 0;
    for (uint32_t a = 0; a < g->m; a++) n += (uint64_t)points(g, a) + 1;
    gp_osmseg *x = calloc(1, sizeof *x);
    if (x) x->e = malloc(sizeof *x->e * (n ? n : 1));
    if (!x || !x->e) {
        idx_free(x);
        gp_err_set(err, GP_ENOMEM, "out of memory for the OSM-segment index (%llu segments)",
                   (unsigned long long)n);
        return NULL;
    }
    uint64_t k = 0;
    for (uint32_t u = 0; u < g->n; u++) {
        uint64_t tail = key_of(gp_graph_orig_id(g, u));
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t ns = points(g, a);
            x->e[k++] = (ent){tail, point_after(g, a, ns, 1), a, 0};
            for (uint32_t i = 1; i <= ns; i++)
                x->e[k++] = (ent){key_of(g->shape_osm_id[g->arc_shape[a] + i - 1]),
                                  point_after(g, a, ns, i + 1), a, i};
        }
    }
    x->n = k;
    x->nb = 1;
    while (x->nb < k / 4) x->nb *= 2;
    x->dir = malloc(sizeof *x->dir * (x->nb + 1));
    if (!x->dir || radix_sort(x->e, k) != 0) {
        idx_free(x);
        gp_err_set(err, GP_ENOMEM, "out of memory sorting the OSM-segment index");
        return NULL;
    }
    x->lo = k ? x->e[0].key : 0;
    uint64_t span = k ? x->e[k - 1].key - x->lo : 0; /* keys lo .. lo + span */
    x->width = span / x->nb + 1;                     /* (key - lo) / width < nb for every key */
    memset(x->dir, 0, sizeof *x->dir * (x->nb + 1));
    for (uint64_t i = 0; i < k; i++) x->dir[(x->e[i].key - x->lo) / x->width + 1]++;
    for (uint64_t b = 0; b < x->nb; b++) x->dir[b + 1] += x->dir[b];
    return x;
}

static pthread_mutex_t idx_lock = PTHREAD_MUTEX_INITIALIZER;

const gp_osmseg *gp_osmseg_get(const gp_graph *g, gp_err *err) {
    g = gp_graph_owner(g);
    gp_graph *mg = (gp_graph *)g; /* a cache beside the immutable graph */
    gp_osmseg *x = __atomic_load_n((gp_osmseg **)&mg->osmseg, __ATOMIC_ACQUIRE);
    if (x) return x;
    pthread_mutex_lock(&idx_lock);
    x = mg->osmseg;
    if (!x) {
        double t0 = gp_now();
        x = idx_build(g, err);
        if (x) {
            mg->osmseg_free = idx_free;
            __atomic_store_n((gp_osmseg **)&mg->osmseg, x, __ATOMIC_RELEASE);
            GP_LOG(GP_LOG_INFO, "event=osmseg_index graph=%s segments=%llu build_ms=%.1f mib=%.1f",
                   g->version, (unsigned long long)x->n, (gp_now() - t0) * 1e3,
                   (double)x->n * sizeof *x->e / 1048576.0);
        }
    }
    pthread_mutex_unlock(&idx_lock);
    return x;
}

uint64_t gp_osmseg_count(const gp_osmseg *x) { return x ? x->n : 0; }

uint32_t gp_osmseg_find(const gp_osmseg *x, int64_t from, int64_t to, gp_osmseg_hit *out,
                        uint32_t cap) {
    uint64_t key = key_of(from);
    if (!x->n || key < x->lo || (key - x->lo) / x->width >= x->nb) return 0;
    uint64_t b = (key - x->lo) / x->width, lo = x->dir[b], hi = x->dir[b + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (x->e[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    uint32_t found = 0;
    for (uint64_t i = lo; i < x->n && x->e[i].key == key; i++) {
        if (x->e[i].to != to) continue;
        if (found < cap) out[found] = (gp_osmseg_hit){x->e[i].arc, x->e[i].piece};
        found++;
    }
    return found;
}
