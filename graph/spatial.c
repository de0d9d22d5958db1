/* spatial.c - the nearest-node index: a static k-d tree over unit vectors on the sphere.
 *
 * Layout is implicit: idx[] is a permutation of the indexed nodes; a subtree is a range [lo, hi)
 * of it; an internal range (more than LEAF entries) splits at mid = lo + (hi - lo) / 2 on the
 * dimension dim[mid] (the widest of x, y, z over the subtree's cell): entry mid is the split point, every
 * entry of [lo, mid) is <= it and every entry of [mid + 1, hi) >= it on that dimension (compared
 * as floats while building; queries allow for the float rounding). Only idx and dim (5 bytes per node) are kept: unit
 * vectors are recomputed from lon/lat during queries, so the index costs little next to the graph.
 * The top levels are built on parallel threads.
 */
#include "graph/spatial.h"
#include "graph/graph_internal.h"
#include "graph/parallel.h"

#include <math.h>
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

/* ---- build ---- */

/* Build-time point: the unit vector as floats next to the node, so partitioning streams through
 * memory. The float split values differ from the exact (double) ones by at most 2^-24; queries
 * widen their pruning bound by SLACK to stay exact. */
typedef struct bpt {
    float c[3];
    uint32_t node;
} bpt;

#define SLACK 2.5e-7

typedef struct build_ctx {
    bpt *pts;
    uint8_t *dim;
} build_ctx;

/* Reorders a[lo..hi) so that a[k] holds the k-th smallest on dimension d, smaller-or-equal before
 * it and greater-or-equal after it (Hoare quickselect, median-of-three pivot). */
static void select_kth(bpt *a, int d, int64_t lo, int64_t hi, int64_t k) {
    hi--; /* inclusive */
    while (hi > lo) {
        if (hi - lo < 16) {
            for (int64_t i = lo + 1; i <= hi; i++) {
                bpt t = a[i];
                int64_t j = i;
                while (j > lo && a[j - 1].c[d] > t.c[d]) {
                    a[j] = a[j - 1];
                    j--;
                }
                a[j] = t;
            }
            return;
        }
        int64_t mid = lo + (hi - lo) / 2;
        float x = a[lo].c[d], y = a[mid].c[d], z = a[hi].c[d];
        float pv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i].c[d] < pv) i++;
            while (a[j].c[d] > pv) j--;
            if (i <= j) {
                bpt t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        /* [lo..j] <= pv, [i..hi] >= pv, (j, i) == pv */
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* A subtree's range and its cell: bounds on every dimension inherited from the splits above (a
 * superset of the points' bounding box, so no scan is needed to pick the split dimension). */
typedef struct cell {
    int64_t lo, hi;
    float mn[3], mx[3];
    int depth;
} cell;

static void build_range(build_ctx *c, cell k);

typedef struct build_job {
    build_ctx *c;
    cell k;
} build_job;

static void build_task(void *arg) {
    build_job *j = arg;
    build_range(j->c, j->k);
}

static void build_range(build_ctx *c, cell k) {
    while (k.hi - k.lo > LEAF) {
        int d = 0;
        for (int e = 1; e < 3; e++)
            if (k.mx[e] - k.mn[e] > k.mx[d] - k.mn[d]) d = e;
        int64_t mid = k.lo + (k.hi - k.lo) / 2;
        select_kth(c->pts, d, k.lo, k.hi, mid);
        c->dim[mid] = (uint8_t)d;
        float split = c->pts[mid].c[d];
        cell left = k, right = k;
        left.hi = mid;
        left.mx[d] = split;
        right.lo = mid + 1;
        right.mn[d] = split;
        left.depth = right.depth = k.depth + 1;
        /* left half on a new thread near the top of large trees */
        if (k.depth < 4 && k.hi - k.lo > (1 << 16)) {
            build_job jl = {c, left}, jr = {c, right};
            gp_parallel_two(build_task, &jl, &jr);
            return;
        }
        build_range(c, left);
        k = right;
    }
}

typedef struct unit_ctx {
    const gp_graph *g;
    bpt *pts;
} unit_ctx;

static void unit_fill(void *ctx, uint64_t begin, uint64_t end) {
    unit_ctx *c = ctx;
    for (uint64_t v = begin; v < end; v++) {
        double lon = c->g->lon[v], lat = c->g->lat[v], u[3];
        if (!(isfinite(lon) && isfinite(lat))) {
            c->pts[v].node = GP_NONE;
            continue;
        }
        gp_unit_vec(lon, lat, u);
        c->pts[v] = (bpt){{(float)u[0], (float)u[1], (float)u[2]}, (uint32_t)v};
    }
}

struct gp_spatial *gp_spatial_build(const gp_graph *g, gp_err *err) {
    struct gp_spatial *s = calloc(1, sizeof *s);
    bpt *pts = NULL;
    if (!s) goto oom;
    s->idx = malloc((size_t)(g->n ? g->n : 1) * sizeof *s->idx);
    s->dim = calloc((size_t)(g->n ? g->n : 1), 1);
    pts = malloc((size_t)(g->n ? g->n : 1) * sizeof *pts);
    if (!s->idx || !s->dim || !pts) goto oom;
    /* unit vectors on parallel threads, then the nodes without coordinates squeezed out */
    unit_ctx uc = {g, pts};
    gp_parallel_for(g->n, 0, unit_fill, &uc);
    uint32_t cnt = 0;
    for (uint32_t v = 0; v < g->n; v++)
        if (pts[v].node != GP_NONE) pts[cnt++] = pts[v];
    s->cnt = cnt;
    build_ctx c = {pts, s->dim};
    cell root = {0, cnt, {2, 2, 2}, {-2, -2, -2}, 0};
    for (uint32_t i = 0; i < cnt; i++)
        for (int d = 0; d < 3; d++) {
            root.mn[d] = pts[i].c[d] < root.mn[d] ? pts[i].c[d] : root.mn[d];
            root.mx[d] = pts[i].c[d] > root.mx[d] ? pts[i].c[d] : root.mx[d];
        }
    build_range(&c, root);
    for (uint32_t i = 0; i < cnt; i++) s->idx[i] = pts[i].node;
    free(pts);
    if (cnt && cnt < g->n) { /* give back the slots of nodes without coordinates */
        uint32_t *ni = realloc(s->idx, (size_t)cnt * sizeof *s->idx);
        uint8_t *nd = realloc(s->dim, cnt);
        if (ni) s->idx = ni;
        if (nd) s->dim = nd;
    }
    return s;
oom:
    free(pts);
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

static inline int cand_less(cand a, cand b) {
    return a.d2 < b.d2 || (a.d2 == b.d2 && a.node < b.node);
}

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
    gp_unit_vec(h->g->lon[v], h->g->lat[v], u);
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
        /* the far side lies at least |diff| - SLACK away on dimension d */
        double gap = fabs(diff) - SLACK;
        if (diff < 0) {
            knn_range(h, lo, mid);
            if (h->size == h->k && gap > 0 && gap * gap > h->heap[0].d2) return;
            lo = mid + 1;
        } else {
            knn_range(h, mid + 1, hi);
            if (h->size == h->k && gap > 0 && gap * gap > h->heap[0].d2) return;
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
    if (!isfinite(lon) || !isfinite(lat) || lat < -90 || lat > 90 || lon < -360 || lon > 360)
        return -1;
    if (k > s->cnt) k = s->cnt;
    knn h = {s, g, {0, 0, 0}, NULL, k, 0};
    gp_unit_vec(lon, lat, h.q);
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
