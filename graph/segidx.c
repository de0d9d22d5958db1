/* segidx.c - the road-segment index (contract in segidx.h): a bounding-volume hierarchy over the
 * pieces of every arc's polyline, on the unit sphere.
 *
 * Geometry is done on the unit sphere: a segment piece (two consecutive points of an arc's
 * polyline: tail, shape points, head) is the minor great-circle arc between two unit vectors, and
 * the nearest point of it to a query vector q is q projected onto the piece's great-circle plane
 * (renormalised) when that lands between the ends, else the nearer end. Chord length is monotone
 * in great-circle distance, so comparing chords is comparing distances, anywhere on the globe.
 *
 * The index is a static bounding-volume hierarchy over the pieces: ranges [lo, hi) of a
 * permutation of the pieces split at their middle on the widest axis of the pieces' centres, each
 * tree node (heap numbering, children 2k+1 / 2k+2) holding the axis-aligned 3D box of its pieces.
 * A piece's box is the box of its two ends widened by the arc's sagitta 1 - cos(theta / 2), since
 * the great-circle arc bulges outward from its chord by at most that; float boxes are rounded
 * outward. A query descends nearer child first and prunes boxes farther than the best piece so far
 * (or than the radius), so it is exact. Two-way roads are indexed once: an arc u -> v with u > v
 * is skipped when its reverse (gp_graph_reverse_arc: v -> u along the same geometry) exists; that
 * arc stands for both.
 *
 * The index is built on first use under one process-wide lock, published with a release store
 * into gp_graph.snap, and freed with the graph (gp_graph.snap_free). Memory: 12 bytes per piece
 * plus about 12 bytes per piece of boxes. The top levels build on up to 8 threads (about 1 s per
 * million pieces on one core).
 */
#include "graph/segidx.h"

#include "graph/parallel.h"
#include "graph/spatial.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LEAF 8
#define RAD2DEG (180.0 / 3.14159265358979323846)

typedef struct seg {
    uint32_t arc, tail, piece; /* piece k of arc (0 .. shape points) */
} seg;

struct gp_segidx {
    uint32_t cnt;   /* pieces */
    seg *segs;      /* permutation of the pieces, leaves' ranges contiguous */
    float *box;     /* 6 floats per tree node: min x, y, z, max x, y, z */
    uint64_t nodes; /* tree nodes allocated */
};

static inline double dot3(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void cross3(const double a[3], const double b[3], double c[3]) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double dist2(const double a[3], const double b[3]) {
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return dx * dx + dy * dy + dz * dz;
}

/* Great-circle metres of a chord length between unit vectors. */
static inline double chord_m(double chord2) {
    double c = sqrt(chord2) * 0.5;
    if (c > 1) c = 1;
    return 2.0 * asin(c) * GP_EARTH_RADIUS_M;
}

/* The lon/lat of piece k's ends of arc a (tail t). */
/* Where the lon/lat of piece k's ends of arc a (tail t) are stored. */
static void piece_at(const gp_graph *g, uint32_t a, uint32_t t, uint32_t k, const double **alon,
                     const double **alat, const double **blon, const double **blat) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
    *alon = k == 0 ? &g->lon[t] : &sx[k - 1];
    *alat = k == 0 ? &g->lat[t] : &sy[k - 1];
    *blon = k == ns ? &g->lon[g->col[a]] : &sx[k];
    *blat = k == ns ? &g->lat[g->col[a]] : &sy[k];
}

static void piece_ends(const gp_graph *g, uint32_t a, uint32_t t, uint32_t k, double *alon,
                       double *alat, double *blon, double *blat) {
    const double *ax, *ay, *bx, *by;
    piece_at(g, a, t, k, &ax, &ay, &bx, &by);
    *alon = *ax;
    *alat = *ay;
    *blon = *bx;
    *blat = *by;
}

/* The unit vector of the road point stored at lon / lat, through memo m (NULL: none). */
static void unit_at(gp_seg_memo *m, const double *lon, const double *lat, double v[3]) {
    if (!m) {
        gp_unit_vec(*lon, *lat, v);
        return;
    }
    size_t i = (size_t)(((uintptr_t)lon / sizeof *lon) % GP_SEG_MEMO_PTS);
    if (m->pt[i] != lon) {
        gp_unit_vec(*lon, *lat, m->vec[i]);
        m->pt[i] = lon;
    }
    memcpy(v, m->vec[i], sizeof m->vec[i]);
}

/* Nearest point x of the minor great-circle arc a -> b to q; returns the squared chord q-x.
 * *at_end: 0 interior, 1 a, 2 b. */
static double piece_near(const double q[3], const double a[3], const double b[3], double x[3],
                         int *at_end) {
    double n[3];
    cross3(a, b, n);
    double nn = sqrt(dot3(n, n));
    if (nn > 1e-15) {
        double qn = dot3(q, n) / (nn * nn);
        double p[3] = {q[0] - qn * n[0], q[1] - qn * n[1], q[2] - qn * n[2]};
        double pl = sqrt(dot3(p, p));
        if (pl > 1e-15) {
            p[0] /= pl;
            p[1] /= pl;
            p[2] /= pl;
            double c1[3], c2[3];
            cross3(a, p, c1);
            cross3(p, b, c2);
            if (dot3(c1, n) >= 0 && dot3(c2, n) >= 0) {
                memcpy(x, p, sizeof p);
                *at_end = 0;
                return dist2(q, x);
            }
        }
    }
    double da = dist2(q, a), db = dist2(q, b);
    if (da <= db) {
        memcpy(x, a, 3 * sizeof *x);
        *at_end = 1;
        return da;
    }
    memcpy(x, b, 3 * sizeof *x);
    *at_end = 2;
    return db;
}

/* The angles of piece_near's x on arc a -> b: *t from a to x, *len from a to b (radians). Apart
 * from piece_near (two atan2) since a walk measures many pieces and places few. */
static void piece_angles(const double a[3], const double b[3], const double x[3], int at_end,
                         double *t, double *len) {
    double n[3];
    cross3(a, b, n);
    *len = atan2(sqrt(dot3(n, n)), dot3(a, b));
    if (at_end) {
        *t = at_end == 1 ? 0 : *len;
        return;
    }
    double c1[3];
    cross3(a, x, c1);
    *t = atan2(sqrt(dot3(c1, c1)), dot3(a, x));
    if (*t > *len) *t = *len;
}

/* piece_near and piece_angles. */
static double piece_nearest(const double q[3], const double a[3], const double b[3], double x[3],
                            double *t, double *len, int *at_end) {
    double d2 = piece_near(q, a, b, x, at_end);
    piece_angles(a, b, x, *at_end, t, len);
    return d2;
}

/* ---- build ---- */

typedef struct bent {
    float lo[3], hi[3], c[3];
    seg s;
} bent;

static inline float f_down(double x) {
    float f = (float)x;
    return (double)f > x ? nextafterf(f, -INFINITY) : f;
}
static inline float f_up(double x) {
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

/* Reorders e[lo..hi) so that e[k] is the k-th smallest centre on dimension d (quickselect). */
static void select_kth(bent *e, int d, int64_t lo, int64_t hi, int64_t k) {
    hi--;
    while (hi > lo) {
        float pv = e[lo + (hi - lo) / 2].c[d];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (e[i].c[d] < pv) i++;
            while (e[j].c[d] > pv) j--;
            if (i <= j) {
                bent t = e[i];
                e[i] = e[j];
                e[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* Subtrees of the first PAR_NODES tree nodes (the top three levels, up to 8 threads) with at
 * least PAR_MIN pieces are built in parallel. */
#define PAR_NODES 7
#define PAR_MIN 65536
typedef struct build_job {
    gp_segidx *x;
    bent *e;
    uint64_t k;
    int64_t lo, hi;
} build_job;
static void build_task(void *arg);

static void build_node(gp_segidx *x, bent *e, uint64_t k, int64_t lo, int64_t hi) {
    float *b = x->box + 6 * k;
    float cl[3] = {INFINITY, INFINITY, INFINITY}, ch[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int d = 0; d < 3; d++) {
        b[d] = INFINITY;
        b[3 + d] = -INFINITY;
    }
    for (int64_t i = lo; i < hi; i++)
        for (int d = 0; d < 3; d++) {
            if (e[i].lo[d] < b[d]) b[d] = e[i].lo[d];
            if (e[i].hi[d] > b[3 + d]) b[3 + d] = e[i].hi[d];
            if (e[i].c[d] < cl[d]) cl[d] = e[i].c[d];
            if (e[i].c[d] > ch[d]) ch[d] = e[i].c[d];
        }
    if (hi - lo <= LEAF) return;
    int dim = 0;
    for (int d = 1; d < 3; d++)
        if (ch[d] - cl[d] > ch[dim] - cl[dim]) dim = d;
    int64_t mid = lo + (hi - lo) / 2;
    select_kth(e, dim, lo, hi, mid);
    /* the two halves are independent: big ones near the root build on their own threads */
    if (k < PAR_NODES && hi - lo >= PAR_MIN) {
        build_job left = {x, e, 2 * k + 1, lo, mid}, right = {x, e, 2 * k + 2, mid, hi};
        gp_parallel_two(build_task, &left, &right);
        return;
    }
    build_node(x, e, 2 * k + 1, lo, mid);
    build_node(x, e, 2 * k + 2, mid, hi);
}

static void build_task(void *arg) {
    build_job *b = arg;
    build_node(b->x, b->e, b->k, b->lo, b->hi);
}

/* 1 when arc a (u -> v) stands in the index for its road (see the header comment): a two-way
 * road is the pair a / gp_graph_reverse_arc(a) (the same geometry reversed; two different roads
 * between the same nodes are two one-way roads), indexed from its lower-numbered tail. */
static int indexed_arc(const gp_graph *g, uint32_t a, uint32_t u, uint32_t v) {
    if (u > v && gp_graph_reverse_arc(g, a) != GP_NONE) return 0;
    return !isnan(g->lon[u]) && !isnan(g->lon[v]);
}

static void idx_free(void *p) {
    gp_segidx *x = p;
    if (!x) return;
    free(x->segs);
    free(x->box);
    free(x);
}

static gp_segidx *idx_build(const gp_graph *g, gp_err *err) {
    uint64_t cnt = 0;
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            if (!indexed_arc(g, a, u, g->col[a])) continue;
            const double *sx, *sy;
            cnt += gp_graph_arc_shape(g, a, &sx, &sy) + 1;
        }
    if (cnt > UINT32_MAX) {
        gp_err_set(err, GP_ETOOBIG, "snap: %llu road pieces exceed the index's limit",
                   (unsigned long long)cnt);
        return NULL;
    }
    gp_segidx *x = calloc(1, sizeof *x);
    bent *e = cnt ? malloc(sizeof *e * cnt) : NULL;
    if (!x || (cnt && !e)) goto oom;
    x->cnt = (uint32_t)cnt;
    uint64_t i = 0;
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            if (!indexed_arc(g, a, u, g->col[a])) continue;
            const double *sx, *sy;
            uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
            for (uint32_t k = 0; k <= ns; k++, i++) {
                double alon, alat, blon, blat, pa[3], pb[3];
                piece_ends(g, a, u, k, &alon, &alat, &blon, &blat);
                gp_unit_vec(alon, alat, pa);
                gp_unit_vec(blon, blat, pb);
                double half = 0.5 * sqrt(dist2(pa, pb)); /* sin(theta / 2) */
                if (half > 1) half = 1;
                double sag = 1.0 - sqrt(1.0 - half * half) + 1e-12;
                for (int d = 0; d < 3; d++) {
                    double lo = pa[d] < pb[d] ? pa[d] : pb[d], hi = pa[d] < pb[d] ? pb[d] : pa[d];
                    e[i].lo[d] = f_down(lo - sag);
                    e[i].hi[d] = f_up(hi + sag);
                    e[i].c[d] = (float)(0.5 * (pa[d] + pb[d]));
                }
                e[i].s = (seg){a, u, k};
            }
        }
    /* tree depth: the smallest D with ceil(cnt / 2^D) <= LEAF */
    int depth = 0;
    while (((cnt + ((uint64_t)1 << depth) - 1) >> depth) > LEAF) depth++;
    x->nodes = (uint64_t)2 << depth;
    x->box = malloc(sizeof *x->box * 6 * x->nodes);
    x->segs = malloc(sizeof *x->segs * (cnt ? cnt : 1));
    if (!x->box || !x->segs) goto oom;
    if (cnt) build_node(x, e, 0, 0, (int64_t)cnt);
    for (i = 0; i < cnt; i++) x->segs[i] = e[i].s;
    free(e);
    return x;
oom:
    free(e);
    idx_free(x);
    gp_err_set(err, GP_ENOMEM, "snap: out of memory for the segment index of %llu pieces",
               (unsigned long long)cnt);
    return NULL;
}

static pthread_mutex_t idx_lock = PTHREAD_MUTEX_INITIALIZER;

const gp_segidx *gp_segidx_get(const gp_graph *g, gp_err *err) {
    /* the index is a cache beside the immutable graph; a reweighted version shares its base's
     * (the index holds geometry and arc ids, no weights) */
    g = gp_graph_owner(g);
    gp_graph *mg = (gp_graph *)g;
    gp_segidx *x = __atomic_load_n((gp_segidx **)&mg->snap, __ATOMIC_ACQUIRE);
    if (x) return x;
    pthread_mutex_lock(&idx_lock);
    x = mg->snap;
    if (!x) {
        double t0 = gp_now();
        x = idx_build(g, err);
        if (x) {
            mg->snap_free = idx_free;
            __atomic_store_n((gp_segidx **)&mg->snap, x, __ATOMIC_RELEASE);
            GP_LOG(GP_LOG_INFO, "snap index for %s: %u pieces in %.3fs", g->source, x->cnt,
                   gp_now() - t0);
        }
    }
    pthread_mutex_unlock(&idx_lock);
    return x;
}

int gp_segidx_prepare(const gp_graph *g, gp_err *err) {
    if (!g->lon || !g->lat || g->m == 0) return GP_OK;
    return gp_segidx_get(g, err) ? GP_OK : (err && err->code ? err->code : GP_ENOMEM);
}

uint32_t gp_segidx_pieces(const gp_segidx *x) { return x->cnt; }

/* ---- query ---- */

typedef struct best {
    double d2; /* squared chord of the best piece, or the radius bound */
    int found;
    seg s;
    double x[3], t, len;
    int at_end;
    double pa[3], pb[3]; /* the piece's ends (gp_segidx_nearest_each: t and len once given) */
} best;

typedef struct query {
    const gp_graph *g;
    const gp_segidx *x;
    double q[3];
    best b;
    gp_seg_filter f; /* NULL: every piece */
    void *fctx;
} query;

static inline int seg_less(seg a, seg b) {
    return a.arc < b.arc || (a.arc == b.arc && a.piece < b.piece);
}

static void offer(query *qr, seg s) {
    double alon, alat, blon, blat, pa[3], pb[3], xv[3], t, len;
    int at_end;
    piece_ends(qr->g, s.arc, s.tail, s.piece, &alon, &alat, &blon, &blat);
    gp_unit_vec(alon, alat, pa);
    gp_unit_vec(blon, blat, pb);
    double d2 = piece_nearest(qr->q, pa, pb, xv, &t, &len, &at_end);
    if (d2 > qr->b.d2 || (d2 == qr->b.d2 && qr->b.found && !seg_less(s, qr->b.s))) return;
    if (qr->f && !qr->f(qr->fctx, qr->g, s.arc, s.tail, alon, alat, blon, blat)) return;
    qr->b = (best){d2, 1, s, {xv[0], xv[1], xv[2]}, t, len, at_end, {0, 0, 0}, {0, 0, 0}};
}

static inline double box_d2(const float *b, const double q[3]) {
    double s = 0;
    for (int d = 0; d < 3; d++) {
        double g = 0;
        if (q[d] < b[d]) g = b[d] - q[d];
        else if (q[d] > b[3 + d]) g = q[d] - b[3 + d];
        s += g * g;
    }
    return s;
}

static void search(query *qr, uint64_t k, int64_t lo, int64_t hi) {
    if (box_d2(qr->x->box + 6 * k, qr->q) > qr->b.d2) return;
    if (hi - lo <= LEAF) {
        for (int64_t i = lo; i < hi; i++) offer(qr, qr->x->segs[i]);
        return;
    }
    int64_t mid = lo + (hi - lo) / 2;
    double dl = box_d2(qr->x->box + 6 * (2 * k + 1), qr->q);
    double dr = box_d2(qr->x->box + 6 * (2 * k + 2), qr->q);
    if (dl <= dr) {
        search(qr, 2 * k + 1, lo, mid);
        search(qr, 2 * k + 2, mid, hi);
    } else {
        search(qr, 2 * k + 2, mid, hi);
        search(qr, 2 * k + 1, lo, mid);
    }
}

/* Nearest piece to (lon, lat) within chord bound2 (squared); 0 when none. */
static int nearest(const gp_graph *g, const gp_segidx *x, double lon, double lat, double bound2,
                   gp_seg_filter f, void *fctx, query *qr) {
    memset(qr, 0, sizeof *qr);
    qr->g = g;
    qr->f = f;
    qr->fctx = fctx;
    qr->x = x;
    gp_unit_vec(lon, lat, qr->q);
    qr->b.d2 = bound2;
    if (x->cnt) search(qr, 0, 0, x->cnt);
    return qr->b.found;
}

/* The angle of piece i of arc a (tail t), given the unit vector pa of its start: pb becomes its
 * end's (the next piece's start). */
static double piece_angle(const gp_graph *g, gp_seg_memo *m, uint32_t a, uint32_t t, uint32_t i,
                          const double pa[3], double pb[3]) {
    const double *alon, *alat, *blon, *blat;
    double c[3];
    piece_at(g, a, t, i, &alon, &alat, &blon, &blat);
    unit_at(m, blon, blat, pb);
    cross3(pa, pb, c);
    return atan2(sqrt(dot3(c, c)), dot3(pa, pb));
}

/* The angle along arc a (tail t) of its pieces before piece k, and its whole length. */
static void arc_angles(const gp_graph *g, uint32_t a, uint32_t t, uint32_t k, double *before,
                       double *total) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
    *before = *total = 0;
    double pa[3], pb[3];
    gp_unit_vec(g->lon[t], g->lat[t], pa);
    for (uint32_t i = 0; i <= ns; i++) {
        double ang = piece_angle(g, NULL, a, t, i, pa, pb);
        memcpy(pa, pb, sizeof pa); /* a piece starts where the one before it ends */
        if (i < k) *before += ang;
        *total += ang;
    }
}

void gp_seg_memo_free(gp_seg_memo *m) {
    if (!m) return;
    for (int i = 0; i < GP_SEG_MEMO; i++) free(m->cum[i]);
    memset(m, 0, sizeof *m);
}

/* arc_angles through memo m (NULL: none); the sums are arc_angles' own, added in its order. */
static void arc_angles_memo(const gp_graph *g, gp_seg_memo *m, uint32_t a, uint32_t t, uint32_t k,
                            double *before, double *total) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy), i = a % GP_SEG_MEMO;
    if (m && !(m->n[i] && m->arc[i] == a)) { /* the slot takes this arc */
        m->n[i] = 0;
        if (m->cap[i] < ns + 2) {
            uint32_t cap = ns + 2 > 32 ? ns + 2 : 32;
            double *c = realloc(m->cum[i], sizeof *c * cap);
            if (c) m->cum[i] = c, m->cap[i] = cap;
        }
        if (m->cap[i] >= ns + 2) {
            double pa[3], pb[3], *c = m->cum[i];
            unit_at(m, &g->lon[t], &g->lat[t], pa);
            c[0] = 0;
            for (uint32_t j = 0; j <= ns; j++) {
                c[j + 1] = c[j] + piece_angle(g, m, a, t, j, pa, pb);
                memcpy(pa, pb, sizeof pa);
            }
            m->arc[i] = a;
            m->n[i] = ns + 1;
        }
    }
    if (!m || !m->n[i]) {
        arc_angles(g, a, t, k, before, total);
        return;
    }
    *before = m->cum[i][k];
    *total = m->cum[i][ns + 1];
}

int gp_segidx_nearest(const gp_segidx *x, const gp_graph *g, double lon, double lat,
                      double radius_m, gp_seg_hit *out) {
    return gp_segidx_nearest_if(x, g, lon, lat, radius_m, NULL, NULL, out);
}

/* The squared chord bound of a radius in metres (INFINITY: over any chord of the unit sphere). */
static double radius_bound2(double radius_m) {
    double bound2 = 5.0; /* over any chord of the unit sphere (at most 2) squared */
    if (radius_m < INFINITY) {
        double ang = radius_m / GP_EARTH_RADIUS_M;
        double ch = ang >= 3.14159265358979323846 ? 2.0 : 2.0 * sin(ang * 0.5);
        bound2 = ch * ch * (1 + 1e-9) + 1e-18;
    }
    return bound2;
}

/* The hit of piece b.s, whose nearest point to the query is b: 0 when it lies past radius_m. */
static int hit_of(const gp_graph *g, const best *b, double radius_m, gp_seg_memo *memo,
                  gp_seg_hit *out) {
    if (chord_m(b->d2) > radius_m) return 0;
    seg s = b->s;
    out->arc = s.arc;
    out->tail = s.tail;
    out->piece = s.piece;
    out->chord_m = chord_m(b->d2);
    if (b->at_end) {
        /* exact coordinates of the end, free of the round trip through the unit vector */
        double alon, alat, blon, blat;
        piece_ends(g, s.arc, s.tail, s.piece, &alon, &alat, &blon, &blat);
        out->lon = b->at_end == 1 ? alon : blon;
        out->lat = b->at_end == 1 ? alat : blat;
    } else {
        double z = b->x[2];
        if (z > 1) z = 1;
        if (z < -1) z = -1;
        out->lat = asin(z) * RAD2DEG;
        out->lon = atan2(b->x[1], b->x[0]) * RAD2DEG;
    }
    double before, total;
    arc_angles_memo(g, memo, s.arc, s.tail, s.piece, &before, &total);
    double fr = total > 0 ? (before + b->t) / total : 0;
    out->frac = fr < 0 ? 0 : fr > 1 ? 1 : fr;
    return 1;
}

int gp_segidx_nearest_if(const gp_segidx *x, const gp_graph *g, double lon, double lat,
                         double radius_m, gp_seg_filter f, void *ctx, gp_seg_hit *out) {
    query qr;
    if (!nearest(g, x, lon, lat, radius_bound2(radius_m), f, ctx, &qr)) return 0;
    return hit_of(g, &qr.b, radius_m, NULL, out);
}

/* ---- pieces nearest first (gp_segidx_nearest_each) ----
 * A best-first walk of the tree (Hjaltason & Samet's incremental nearest neighbours): one heap
 * holds tree nodes keyed by their box's squared distance and pieces keyed by their own, the
 * nearest on top, a node before a piece at the same key (it may hold a piece of the same
 * distance and a lower arc), pieces at the same distance by arc, then piece. A piece on top is
 * then nearer than everything not yet taken, in gp_segidx_nearest_if's order. */
typedef struct near_item {
    double d2;
    uint32_t a, b; /* node: its range [a, b) of the pieces; piece: its index in the list */
    uint64_t k;    /* node: its number; piece: UINT64_MAX */
} near_item;

typedef struct near_walk {
    near_item *h;
    size_t nh, cap;
    best *p; /* the pieces met */
    size_t np, pcap;
    near_item h0[64];
    best p0[32];
} near_walk;

/* 1 when item a comes before item b */
static int near_before(const near_walk *w, const near_item *a, const near_item *b) {
    if (a->d2 != b->d2) return a->d2 < b->d2;
    int an = a->k != UINT64_MAX, bn = b->k != UINT64_MAX;
    if (an || bn) return an > bn;
    return seg_less(w->p[a->a].s, w->p[b->a].s);
}

/* Grows a buffer that starts in the walk itself (local) to hold one more of n items of size sz. */
static int near_grow(void **buf, size_t *cap, size_t n, size_t sz, void *local) {
    if (n < *cap) return 0;
    size_t nc = 2 * *cap;
    void *nb = *buf == local ? malloc(sz * nc) : realloc(*buf, sz * nc);
    if (!nb) return -1;
    if (*buf == local) memcpy(nb, local, sz * n);
    *buf = nb;
    *cap = nc;
    return 0;
}

static int near_push(near_walk *w, near_item it) {
    void *h = w->h;
    if (near_grow(&h, &w->cap, w->nh, sizeof *w->h, w->h0)) return -1;
    w->h = h;
    size_t i = w->nh++;
    while (i > 0 && near_before(w, &it, &w->h[(i - 1) / 2])) {
        w->h[i] = w->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->h[i] = it;
    return 0;
}

static near_item near_pop(near_walk *w) {
    near_item top = w->h[0], last = w->h[--w->nh];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= w->nh) break;
        if (c + 1 < w->nh && near_before(w, &w->h[c + 1], &w->h[c])) c++;
        if (!near_before(w, &w->h[c], &last)) break;
        w->h[i] = w->h[c];
        i = c;
    }
    if (w->nh) w->h[i] = last;
    return top;
}

int gp_segidx_nearest_each(const gp_segidx *x, const gp_graph *g, double lon, double lat,
                           double radius_m, gp_seg_filter f, void *fctx, gp_seg_each each,
                           void *ectx, gp_seg_memo *memo) {
    near_walk w;
    w.h = w.h0;
    w.cap = sizeof w.h0 / sizeof *w.h0;
    w.p = w.p0;
    w.pcap = sizeof w.p0 / sizeof *w.p0;
    w.nh = w.np = 0;
    double q[3], bound2 = radius_bound2(radius_m);
    gp_unit_vec(lon, lat, q);
    int given = 0, rc = 0;
    if (x->cnt) {
        double d = box_d2(x->box, q);
        if (d <= bound2) rc = near_push(&w, (near_item){d, 0, x->cnt, 0});
    }
    while (!rc && w.nh) {
        near_item it = near_pop(&w);
        if (it.k == UINT64_MAX) { /* the nearest piece not yet given */
            best *b = &w.p[it.a];
            double alon, alat, blon, blat;
            piece_ends(g, b->s.arc, b->s.tail, b->s.piece, &alon, &alat, &blon, &blat);
            if (f && !f(fctx, g, b->s.arc, b->s.tail, alon, alat, blon, blat)) continue;
            piece_angles(b->pa, b->pb, b->x, b->at_end, &b->t, &b->len);
            gp_seg_hit hit;
            if (!hit_of(g, b, radius_m, memo, &hit)) break; /* the rest lie farther still */
            given++;
            if (!each(ectx, &hit)) break;
            continue;
        }
        if (it.b - it.a <= LEAF) {
            double pa[3], pb[3];
            seg prev = {GP_NONE, GP_NONE, 0};
            for (uint32_t i = it.a; i < it.b && !rc; i++) {
                seg s = x->segs[i];
                const double *alon, *alat, *blon, *blat;
                best b = {0, 1, s, {0, 0, 0}, 0, 0, 0, {0, 0, 0}, {0, 0, 0}};
                piece_at(g, s.arc, s.tail, s.piece, &alon, &alat, &blon, &blat);
                /* the next piece of the same arc starts where the last one ended */
                if (s.arc == prev.arc && s.piece == prev.piece + 1) memcpy(pa, pb, sizeof pa);
                else unit_at(memo, alon, alat, pa);
                unit_at(memo, blon, blat, pb);
                prev = s;
                b.d2 = piece_near(q, pa, pb, b.x, &b.at_end); /* (the angles once given) */
                if (b.d2 > bound2) continue;
                memcpy(b.pa, pa, sizeof pa);
                memcpy(b.pb, pb, sizeof pb);
                void *pp = w.p;
                if (near_grow(&pp, &w.pcap, w.np, sizeof *w.p, w.p0)) {
                    rc = -1;
                    break;
                }
                w.p = pp;
                w.p[w.np] = b;
                rc = near_push(&w, (near_item){b.d2, (uint32_t)w.np++, 0, UINT64_MAX});
            }
            continue;
        }
        uint32_t mid = it.a + (it.b - it.a) / 2;
        uint64_t kl = 2 * it.k + 1, kr = 2 * it.k + 2;
        double dl = box_d2(x->box + 6 * kl, q), dr = box_d2(x->box + 6 * kr, q);
        if (dl <= bound2) rc = near_push(&w, (near_item){dl, it.a, mid, kl});
        if (!rc && dr <= bound2) rc = near_push(&w, (near_item){dr, mid, it.b, kr});
    }
    if (w.h != w.h0) free(w.h);
    if (w.p != w.p0) free(w.p);
    return rc ? -1 : given;
}
