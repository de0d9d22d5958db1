/* spatial.c - the nearest-node index: a static k-d tree over unit vectors on the sphere.
 *
 * Layout is implicit: idx[] is a permutation of the indexed nodes; a subtree is a range [lo, hi)
 * of it; an internal range (more than LEAF entries) splits at mid = lo + (hi - lo) / 2 on the
 * dimension dim[mid] (the widest of x, y, z over the range): entry mid is the split point, every
 * entry of [lo, mid) is <= it and every entry of [mid + 1, hi) >= it on that dimension. Only idx and dim (5 bytes per node) are kept: unit
 * vectors are recomputed from lon/lat during queries, so the index costs little next to the graph.
 * The top levels are built on parallel threads.
 */
#include "spatial.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LEAF 8
#define DEG2RAD (3.14159265358979323846 / 180.0)

struct gp_spatial {
    uint32_t cnt;
    uint32_t *idx;
    uint8_t *dim;
};

double gp_haversine_m(double lon1, double lat1, double lon2, double lat2) {
    double p1 = lat1 * DEG2RAD, p2 = lat2 * DEG2RAD;
    double dp = p2 - p1, dl = (lon2 - lon1) * DEG2RAD;
    double sp = sin(dp * 0.5), sl = sin(dl * 0.5);
    double a = sp * sp + cos(p1) * cos(p2) * sl * sl;
    if (a > 1) a = 1;
    return 2.0 * GP_EARTH_RADIUS_M * asin(sqrt(a));
}

static inline void unit_vec(double lon, double lat, double v[3]) {
    double la = lat * DEG2RAD, lo = lon * DEG2RAD;
    double cl = cos(la);
    v[0] = cl * cos(lo);
    v[1] = cl * sin(lo);
    v[2] = sin(la);
}


/* ---- build ---- */

typedef struct build_ctx {
    uint32_t *idx;
    uint8_t *dim;
    const double *key[3]; /* unit-vector coordinates by node */
} build_ctx;

/* Reorders a[lo..hi) so that a[k] holds the k-th smallest key, smaller-or-equal keys before it and
 * greater-or-equal after it (Hoare quickselect, median-of-three pivot). */
static void select_kth(uint32_t *a, const double *key, int64_t lo, int64_t hi, int64_t k) {
    hi--; /* inclusive */
    while (hi > lo) {
        if (hi - lo < 16) {
            for (int64_t i = lo + 1; i <= hi; i++) {
                uint32_t t = a[i];
                double kt = key[t];
                int64_t j = i;
                while (j > lo && key[a[j - 1]] > kt) {
                    a[j] = a[j - 1];
                    j--;
                }
                a[j] = t;
            }
            return;
        }
        int64_t mid = lo + (hi - lo) / 2;
        double x = key[a[lo]], y = key[a[mid]], z = key[a[hi]];
        double pv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (key[a[i]] < pv) i++;
            while (key[a[j]] > pv) j--;
            if (i <= j) {
                uint32_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        /* [lo..j] <= pv, [i..hi] >= pv, (j, i) == pv */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

static void build_range(build_ctx *c, int64_t lo, int64_t hi, int depth);

typedef struct build_job {
    build_ctx *c;
    int64_t lo, hi;
    int depth;
} build_job;

static void *build_thread(void *arg) {
    build_job *j = arg;
    build_range(j->c, j->lo, j->hi, j->depth);
    return NULL;
}

static void build_range(build_ctx *c, int64_t lo, int64_t hi, int depth) {
    while (hi - lo > LEAF) {
        double mn[3] = {2, 2, 2}, mx[3] = {-2, -2, -2};
        for (int64_t i = lo; i < hi; i++) {
            uint32_t v = c->idx[i];
            for (int d = 0; d < 3; d++) {
                double x = c->key[d][v];
                if (x < mn[d]) mn[d] = x;
                if (x > mx[d]) mx[d] = x;
            }
        }
        int d = 0;
        for (int e = 1; e < 3; e++)
            if (mx[e] - mn[e] > mx[d] - mn[d]) d = e;
        int64_t mid = lo + (hi - lo) / 2;
        select_kth(c->idx, c->key[d], lo, hi, mid);
        c->dim[mid] = (uint8_t)d;
        depth++;
        /* left half on a new thread near the top of large trees */
        if (depth <= 3 && hi - lo > (1 << 17)) {
            build_job j = {c, lo, mid, depth};
            pthread_t t;
            if (pthread_create(&t, NULL, build_thread, &j) == 0) {
                build_range(c, mid + 1, hi, depth);
                pthread_join(t, NULL);
                return;
            }
        }
        build_range(c, lo, mid, depth);
        lo = mid + 1;
    }
}

struct gp_spatial *gp_spatial_build(const gp_graph *g, gp_err *err) {
    struct gp_spatial *s = calloc(1, sizeof *s);
    double *key = NULL;
    if (!s) goto oom;
    uint32_t cnt = 0;
    for (uint32_t v = 0; v < g->n; v++)
        if (isfinite(g->lon[v]) && isfinite(g->lat[v])) cnt++;
    s->cnt = cnt;
    s->idx = malloc((size_t)(cnt ? cnt : 1) * sizeof *s->idx);
    s->dim = calloc((size_t)(cnt ? cnt : 1), 1);
    key = malloc((size_t)g->n * 3 * sizeof *key);
    if (!s->idx || !s->dim || !key) goto oom;
    cnt = 0;
    for (uint32_t v = 0; v < g->n; v++) {
        if (!(isfinite(g->lon[v]) && isfinite(g->lat[v]))) continue;
        s->idx[cnt++] = v;
        double u[3];
        unit_vec(g->lon[v], g->lat[v], u);
        key[v] = u[0];
        key[(size_t)g->n + v] = u[1];
        key[2 * (size_t)g->n + v] = u[2];
    }
    build_ctx c = {s->idx, s->dim, {key, key + g->n, key + 2 * (size_t)g->n}};
    build_range(&c, 0, cnt, 0);
    free(key);
    return s;
oom:
    free(key);
    gp_spatial_free(s);
    gp_err_set(err, GP_ENOMEM, "out of memory building the spatial index (%u nodes)", g->n);
    return NULL;
}

void gp_spatial_free(struct gp_spatial *s) {
    if (!s) return;
    free(s->idx);
    free(s->dim);
    free(s);
}

uint64_t gp_spatial_memory(const struct gp_spatial *s) {
    return s ? sizeof *s + (uint64_t)s->cnt * (sizeof(uint32_t) + 1) : 0;
}

uint32_t gp_spatial_count(const struct gp_spatial *s) { return s ? s->cnt : 0; }

/* ---- query ---- */

typedef struct cand {
    double d2;
    uint32_t node;
} cand;

typedef struct knn {
    const struct gp_spatial *s;
    const gp_graph *g;
    double q[3];
    cand *heap; /* max-heap on (d2, node) */
    uint32_t k, size;
} knn;

static inline int cand_less(cand a, cand b) { return a.d2 < b.d2 || (a.d2 == b.d2 && a.node < b.node); }

static void heap_offer(knn *h, double d2, uint32_t node) {
    cand c = {d2, node};
    if (h->size < h->k) {
        uint32_t i = h->size++;
        while (i > 0) {
            uint32_t p = (i - 1) / 2;
            if (!cand_less(h->heap[p], c)) break;
            h->heap[i] = h->heap[p];
            i = p;
        }
        h->heap[i] = c;
        return;
    }
    if (!cand_less(c, h->heap[0])) return;
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, big = i;
        cand bc = c;
        if (l < h->size && cand_less(bc, h->heap[l])) {
            big = l;
            bc = h->heap[l];
        }
        if (r < h->size && cand_less(bc, h->heap[r])) big = r;
        if (big == i) break;
        h->heap[i] = h->heap[big];
        i = big;
    }
    h->heap[i] = c;
}

static inline void offer_node(knn *h, uint32_t v, double u[3]) {
    unit_vec(h->g->lon[v], h->g->lat[v], u);
    double dx = u[0] - h->q[0], dy = u[1] - h->q[1], dz = u[2] - h->q[2];
    heap_offer(h, dx * dx + dy * dy + dz * dz, v);
}

static void knn_range(knn *h, int64_t lo, int64_t hi) {
    double u[3];
    while (hi - lo > LEAF) {
        int64_t mid = lo + (hi - lo) / 2;
        int d = h->s->dim[mid];
        offer_node(h, h->s->idx[mid], u);
        double diff = h->q[d] - u[d];
        if (diff < 0) {
            knn_range(h, lo, mid);
            if (h->size == h->k && diff * diff > h->heap[0].d2) return;
            lo = mid + 1;
        } else {
            knn_range(h, mid + 1, hi);
            if (h->size == h->k && diff * diff > h->heap[0].d2) return;
            hi = mid;
        }
    }
    for (int64_t i = lo; i < hi; i++) offer_node(h, h->s->idx[i], u);
}

typedef struct res {
    double m;
    uint32_t node;
} res;

static int cmp_res(const void *a, const void *b) {
    const res *x = a, *y = b;
    if (x->m != y->m) return x->m < y->m ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

int gp_spatial_nearest(const struct gp_spatial *s, const gp_graph *g, double lon, double lat,
                       uint32_t k, uint32_t *out_nodes, double *out_metres) {
    if (!s || !g || k == 0 || s->cnt == 0) return 0;
    if (!isfinite(lon) || !isfinite(lat) || lat < -90 || lat > 90 || lon < -360 || lon > 360) return -1;
    if (k > s->cnt) k = s->cnt;
    knn h = {s, g, {0, 0, 0}, NULL, k, 0};
    unit_vec(lon, lat, h.q);
    cand local[64];
    h.heap = k <= 64 ? local : malloc((size_t)k * sizeof *h.heap);
    res *r = malloc((size_t)k * sizeof *r);
    if (!h.heap || !r) {
        if (h.heap != local) free(h.heap);
        free(r);
        return -1;
    }
    knn_range(&h, 0, s->cnt);
    for (uint32_t i = 0; i < h.size; i++) {
        uint32_t v = h.heap[i].node;
        r[i].node = v;
        r[i].m = gp_haversine_m(lon, lat, g->lon[v], g->lat[v]);
    }
    qsort(r, h.size, sizeof *r, cmp_res);
    for (uint32_t i = 0; i < h.size; i++) {
        out_nodes[i] = r[i].node;
        if (out_metres) out_metres[i] = r[i].m;
    }
    int cnt = (int)h.size;
    if (h.heap != local) free(h.heap);
    free(r);
    return cnt;
}
