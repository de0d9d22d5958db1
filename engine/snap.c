/* snap.c - snapping coordinates to road segments, and routing from / to snapped positions
 * (engine/snap.h is the contract).
 *
 * Geometry is done on the unit sphere: a segment piece (two consecutive points of an arc's
 * polyline: tail, shape points, head) is the minor great-circle arc between two unit vectors, and
 * the nearest point of it to a query vector q is q projected onto the piece's great-circle plane
 * (renormalised) when that lands between the ends, else the nearer end. Chord length is monotone
 * in great-circle distance, so comparing chords is comparing distances, anywhere on the globe.
 *
 * The segment index is a static bounding-volume hierarchy over the pieces: ranges [lo, hi) of a
 * permutation of the pieces split at their middle on the widest axis of the pieces' centres, each
 * tree node (heap numbering, children 2k+1 / 2k+2) holding the axis-aligned 3D box of its pieces.
 * A piece's box is the box of its two ends widened by the arc's sagitta 1 - cos(theta / 2), since
 * the great-circle arc bulges outward from its chord by at most that; float boxes are rounded
 * outward. A query descends nearer child first and prunes boxes farther than the best piece so far
 * (or than the radius), so it is exact. Two-way roads are indexed once: an arc u -> v with u > v
 * is skipped when its reverse (gp_graph_reverse_arc: v -> u along the same geometry) exists; that
 * arc stands for both and names this one as `rarc`.
 *
 * The index is built on the first snap of a graph under one process-wide lock, published with a
 * release store into gp_graph.snap, and freed with the graph (gp_graph.snap_free). Memory: 12
 * bytes per piece plus about 12 bytes per piece of boxes. The top levels build on up to 8
 * threads (about 1 s per million pieces on one core).
 */
#include "engine/snap.h"

#include "graph/spatial.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEAF 8
#define DEG2RAD (3.14159265358979323846 / 180.0)
#define RAD2DEG (180.0 / 3.14159265358979323846)

typedef struct seg {
    uint32_t arc, tail, piece; /* piece k of arc (0 .. shape points) */
} seg;

typedef struct snapidx {
    uint32_t cnt;   /* pieces */
    seg *segs;      /* permutation of the pieces, leaves' ranges contiguous */
    float *box;     /* 6 floats per tree node: min x, y, z, max x, y, z */
    uint64_t nodes; /* tree nodes allocated */
} snapidx;

static inline void unit_vec(double lon, double lat, double v[3]) {
    double la = lat * DEG2RAD, lo = lon * DEG2RAD;
    double cl = cos(la);
    v[0] = cl * cos(lo);
    v[1] = cl * sin(lo);
    v[2] = sin(la);
}

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
static void piece_ends(const gp_graph *g, uint32_t a, uint32_t t, uint32_t k, double *alon,
                       double *alat, double *blon, double *blat) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
    if (k == 0) {
        *alon = g->lon[t];
        *alat = g->lat[t];
    } else {
        *alon = sx[k - 1];
        *alat = sy[k - 1];
    }
    if (k == ns) {
        *blon = g->lon[g->col[a]];
        *blat = g->lat[g->col[a]];
    } else {
        *blon = sx[k];
        *blat = sy[k];
    }
}

/* Nearest point x of the minor great-circle arc a -> b to q; returns the squared chord q-x and
 * sets *t to the angle a -> x, *len to the angle a -> b (radians). *at_end: 0 interior, 1 a, 2 b. */
static double piece_nearest(const double q[3], const double a[3], const double b[3], double x[3],
                            double *t, double *len, int *at_end) {
    double n[3];
    cross3(a, b, n);
    double nn = sqrt(dot3(n, n));
    *len = atan2(nn, dot3(a, b));
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
                *t = atan2(sqrt(dot3(c1, c1)), dot3(a, p));
                if (*t > *len) *t = *len;
                *at_end = 0;
                return dist2(q, x);
            }
        }
    }
    double da = dist2(q, a), db = dist2(q, b);
    if (da <= db) {
        memcpy(x, a, 3 * sizeof *x);
        *t = 0;
        *at_end = 1;
        return da;
    }
    memcpy(x, b, 3 * sizeof *x);
    *t = *len;
    *at_end = 2;
    return db;
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
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Subtrees of the first PAR_NODES tree nodes (the top three levels, up to 8 threads) with at
 * least PAR_MIN pieces are built in parallel. */
#define PAR_NODES 7
#define PAR_MIN 65536
typedef struct build_task {
    snapidx *x;
    bent *e;
    uint64_t k;
    int64_t lo, hi;
} build_task;
static void *build_thread(void *arg);

static void build_node(snapidx *x, bent *e, uint64_t k, int64_t lo, int64_t hi) {
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
    build_task left = {x, e, 2 * k + 1, lo, mid};
    pthread_t t;
    int threaded = k < PAR_NODES && hi - lo >= PAR_MIN && pthread_create(&t, NULL, build_thread, &left) == 0;
    if (!threaded) build_node(x, e, 2 * k + 1, lo, mid);
    build_node(x, e, 2 * k + 2, mid, hi);
    if (threaded) pthread_join(t, NULL);
}

static void *build_thread(void *arg) {
    build_task *b = arg;
    build_node(b->x, b->e, b->k, b->lo, b->hi);
    return NULL;
}

/* 1 when arc a (u -> v) stands in the index for its road (see the header comment): a two-way
 * road is the pair a / gp_graph_reverse_arc(a) (the same geometry reversed; two different roads
 * between the same nodes are two one-way roads), indexed from its lower-numbered tail. */
static int indexed_arc(const gp_graph *g, uint32_t a, uint32_t u, uint32_t v) {
    if (u > v && gp_graph_reverse_arc(g, a) != GP_NONE) return 0;
    return !isnan(g->lon[u]) && !isnan(g->lon[v]);
}

static void idx_free(void *p) {
    snapidx *x = p;
    if (!x) return;
    free(x->segs);
    free(x->box);
    free(x);
}

static snapidx *idx_build(const gp_graph *g, gp_err *err) {
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
    snapidx *x = calloc(1, sizeof *x);
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
                unit_vec(alon, alat, pa);
                unit_vec(blon, blat, pb);
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

static const snapidx *get_index(const gp_graph *g, gp_err *err) {
    /* the index is a cache beside the immutable graph; a reweighted version shares its base's
     * (the index holds geometry and arc ids, no weights) */
    g = gp_graph_owner(g);
    gp_graph *mg = (gp_graph *)g;
    snapidx *x = __atomic_load_n((snapidx **)&mg->snap, __ATOMIC_ACQUIRE);
    if (x) return x;
    pthread_mutex_lock(&idx_lock);
    x = mg->snap;
    if (!x) {
        double t0 = gp_now();
        x = idx_build(g, err);
        if (x) {
            mg->snap_free = idx_free;
            __atomic_store_n((snapidx **)&mg->snap, x, __ATOMIC_RELEASE);
            GP_LOG(GP_LOG_INFO, "snap index for %s: %u pieces in %.3fs", g->source, x->cnt,
                   gp_now() - t0);
        }
    }
    pthread_mutex_unlock(&idx_lock);
    return x;
}

int gp_snap_prepare(const gp_graph *g, gp_err *err) {
    if (!g->lon || !g->lat || g->m == 0) return GP_OK;
    return get_index(g, err) ? GP_OK : (err && err->code ? err->code : GP_ENOMEM);
}

/* ---- query ---- */

typedef struct best {
    double d2;       /* squared chord of the best piece, or the radius bound */
    int found;
    seg s;
    double x[3], t, len;
    int at_end;
} best;

typedef struct query {
    const gp_graph *g;
    const snapidx *x;
    double q[3];
    best b;
} query;

static inline int seg_less(seg a, seg b) {
    return a.arc < b.arc || (a.arc == b.arc && a.piece < b.piece);
}

static void offer(query *qr, seg s) {
    double alon, alat, blon, blat, pa[3], pb[3], xv[3], t, len;
    int at_end;
    piece_ends(qr->g, s.arc, s.tail, s.piece, &alon, &alat, &blon, &blat);
    unit_vec(alon, alat, pa);
    unit_vec(blon, blat, pb);
    double d2 = piece_nearest(qr->q, pa, pb, xv, &t, &len, &at_end);
    if (d2 > qr->b.d2 || (d2 == qr->b.d2 && qr->b.found && !seg_less(s, qr->b.s))) return;
    qr->b = (best){d2, 1, s, {xv[0], xv[1], xv[2]}, t, len, at_end};
}

static inline double box_d2(const float *b, const double q[3]) {
    double s = 0;
    for (int d = 0; d < 3; d++) {
        double g = 0;
        if (q[d] < b[d])
            g = b[d] - q[d];
        else if (q[d] > b[3 + d])
            g = q[d] - b[3 + d];
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
static int nearest(const gp_graph *g, const snapidx *x, double lon, double lat, double bound2,
                   query *qr) {
    memset(qr, 0, sizeof *qr);
    qr->g = g;
    qr->x = x;
    unit_vec(lon, lat, qr->q);
    qr->b.d2 = bound2;
    if (x->cnt) search(qr, 0, 0, x->cnt);
    return qr->b.found;
}

static int valid_coord(double lon, double lat) {
    return isfinite(lon) && isfinite(lat) && lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90;
}

/* The angle along arc a (tail t) of its pieces before piece k, and its whole length. */
static void arc_angles(const gp_graph *g, uint32_t a, uint32_t t, uint32_t k, double *before,
                       double *total) {
    const double *sx, *sy;
    uint32_t ns = gp_graph_arc_shape(g, a, &sx, &sy);
    *before = *total = 0;
    for (uint32_t i = 0; i <= ns; i++) {
        double alon, alat, blon, blat, pa[3], pb[3], c[3];
        piece_ends(g, a, t, i, &alon, &alat, &blon, &blat);
        unit_vec(alon, alat, pa);
        unit_vec(blon, blat, pb);
        cross3(pa, pb, c);
        double ang = atan2(sqrt(dot3(c, c)), dot3(pa, pb));
        if (i < k) *before += ang;
        *total += ang;
    }
}

int gp_snap_point(const gp_graph *g, double lon, double lat, double radius_m, gp_snap *out,
                  gp_err *err) {
    if (!valid_coord(lon, lat))
        return gp_err_set(err, GP_EINVAL,
                          "coordinate %.6f,%.6f is not a valid lon,lat (longitude -180..180, "
                          "latitude -90..90)",
                          lon, lat);
    if (!g->lon)
        return gp_err_set(err, GP_EINVAL, "graph %s has no coordinates to snap to", g->source);
    const snapidx *x = get_index(g, err);
    if (!x) return err ? err->code : GP_ENOMEM;
    if (!x->cnt)
        return gp_err_set(err, GP_ENOTFOUND, "graph %s has no road segments with coordinates",
                          g->source);
    if (!(radius_m >= 0)) radius_m = 0;
    double ang = radius_m / GP_EARTH_RADIUS_M;
    double ch = ang >= 3.14159265358979323846 ? 2.0 : 2.0 * sin(ang * 0.5);
    double bound2 = ch * ch * (1 + 1e-9) + 1e-18;
    query qr;
    if (!nearest(g, x, lon, lat, bound2, &qr) || chord_m(qr.b.d2) > radius_m) {
        nearest(g, x, lon, lat, 5.0, &qr);
        double far = chord_m(qr.b.d2);
        char hint[200] = "";
        query sw;
        if (fabs(lon) <= 90 && nearest(g, x, lat, lon, bound2, &sw) &&
            chord_m(sw.b.d2) <= radius_m)
            snprintf(hint, sizeof hint,
                     "; %.6f,%.6f (the two numbers swapped) lies %.2f m from a road: coordinates "
                     "are longitude,latitude",
                     lat, lon, chord_m(sw.b.d2));
        return gp_err_set(err, GP_ENOTFOUND,
                          "no road segment within %.2f m of %.6f,%.6f (lon,lat): the nearest is "
                          "%.2f m away%s",
                          radius_m, lon, lat, far, hint);
    }
    seg s = qr.b.s;
    uint32_t head = g->col[s.arc];
    memset(out, 0, sizeof *out);
    out->qlon = lon;
    out->qlat = lat;
    if (qr.b.at_end) {
        /* exact coordinates of the end, free of the round trip through the unit vector */
        double alon, alat, blon, blat;
        piece_ends(g, s.arc, s.tail, s.piece, &alon, &alat, &blon, &blat);
        out->lon = qr.b.at_end == 1 ? alon : blon;
        out->lat = qr.b.at_end == 1 ? alat : blat;
    } else {
        double z = qr.b.x[2];
        if (z > 1) z = 1;
        if (z < -1) z = -1;
        out->lat = asin(z) * RAD2DEG;
        out->lon = atan2(qr.b.x[1], qr.b.x[0]) * RAD2DEG;
    }
    out->dist_m = gp_haversine_m(lon, lat, out->lon, out->lat);
    double before, total;
    arc_angles(g, s.arc, s.tail, s.piece, &before, &total);
    double f = total > 0 ? (before + qr.b.t) / total : 0;
    out->frac = f < 0 ? 0 : f > 1 ? 1 : f;
    out->arc = s.arc;
    out->rarc = s.tail != head ? gp_graph_reverse_arc(g, s.arc) : GP_NONE;
    out->node = out->frac <= 0.5 ? s.tail : head;
    return GP_OK;
}

void gp_snap_at_node(const gp_graph *g, uint32_t v, gp_snap *out) {
    memset(out, 0, sizeof *out);
    out->qlon = out->lon = g->lon ? g->lon[v] : NAN;
    out->qlat = out->lat = g->lat ? g->lat[v] : NAN;
    out->node = v;
    out->arc = out->rarc = GP_NONE;
}

static inline uint64_t part(double f, uint32_t w) {
    double c = f * (double)w;
    return c <= 0 ? 0 : (uint64_t)llround(c);
}

/* Entry (dir 0: origin) or exit (dir 1: destination) points of s, with the arc used. A position at
 * an end of its arc (frac 0 or 1) is that node, reachable at no cost in every direction. */
static uint32_t ends(const gp_graph *g, const gp_snap *s, int dir, uint32_t node[2],
                     uint64_t cost[2], uint32_t arc[2]) {
    if (s->arc == GP_NONE || s->frac <= 0 || s->frac >= 1) {
        node[0] = s->arc == GP_NONE ? s->node
                  : s->frac <= 0    ? gp_graph_arc_tail(g, s->arc)
                                    : g->col[s->arc];
        cost[0] = 0;
        arc[0] = GP_NONE;
        return 1;
    }
    uint32_t tail = gp_graph_arc_tail(g, s->arc), head = g->col[s->arc], k = 0;
    /* origin: forward to the head, or back to the tail through rarc; destination: from the tail
     * forward, or from the head back through rarc */
    node[k] = dir ? tail : head;
    cost[k] = part(dir ? s->frac : 1 - s->frac, g->w[s->arc]);
    arc[k++] = s->arc;
    if (s->rarc != GP_NONE) {
        node[k] = dir ? head : tail;
        cost[k] = part(dir ? 1 - s->frac : s->frac, g->w[s->rarc]);
        arc[k++] = s->rarc;
    }
    return k;
}

uint32_t gp_snap_origins(const gp_graph *g, const gp_snap *s, uint32_t node[2], uint64_t cost[2]) {
    uint32_t arc[2];
    return ends(g, s, 0, node, cost, arc);
}

uint32_t gp_snap_dests(const gp_graph *g, const gp_snap *s, uint32_t node[2], uint64_t cost[2]) {
    uint32_t arc[2];
    return ends(g, s, 1, node, cost, arc);
}

void gp_snap_route_free(gp_snap_route *r) {
    if (r) gp_path_free(&r->path);
}

/* The direct way from a to b along their common arc: cost, or GP_INF when they do not share an
 * arc or the road does not run that way; *arc: the arc driven. */
static uint64_t direct(const gp_graph *g, const gp_snap *a, const gp_snap *b, uint32_t *arc) {
    *arc = GP_NONE;
    if (a->arc == GP_NONE || b->arc == GP_NONE) return GP_INF;
    double fb;
    if (b->arc == a->arc)
        fb = b->frac;
    else if (a->rarc != GP_NONE && b->arc == a->rarc)
        fb = 1 - b->frac;
    else
        return GP_INF;
    if (fb >= a->frac) {
        *arc = a->arc;
        return part(fb - a->frac, g->w[a->arc]);
    }
    if (a->rarc == GP_NONE) return GP_INF;
    *arc = a->rarc;
    return part(a->frac - fb, g->w[a->rarc]);
}

static inline uint64_t add3(uint64_t a, uint64_t d, uint64_t b) {
    return d == GP_INF ? GP_INF : a + d + b;
}

int gp_engine_route_snap(gp_engine *e, const gp_graph *g, const gp_snap *a, const gp_snap *b,
                         int algo, gp_snap_route *out, gp_err *err) {
    memset(out, 0, sizeof *out);
    out->dist = GP_INF;
    out->first_arc = out->last_arc = GP_NONE;
    uint32_t on[2], dn[2], oa[2], da[2];
    uint64_t oc[2], dc[2];
    uint32_t no = ends(g, a, 0, on, oc, oa), nd = ends(g, b, 1, dn, dc, da);
    uint32_t darc;
    uint64_t dd = direct(g, a, b, &darc);
    if (dd != GP_INF) {
        out->dist = dd;
        out->first_arc = out->last_arc = darc;
    }
    if (algo == GP_P2P_AUTO && g->cch) {
        /* the CCH takes every entry and exit node at once: one query instead of one per pair */
        gp_path p;
        uint32_t i, j;
        int rc = gp_cch_p2p_multi(g->cch, on, oc, no, dn, dc, nd, &p, &i, &j, err);
        if (rc) {
            gp_snap_route_free(out);
            return rc;
        }
        if (p.dist < out->dist) {
            out->dist = p.dist;
            p.dist -= oc[i] + dc[j]; /* the path's own part, as gp_engine_p2p's */
            out->path = p;
            out->first_arc = oa[i];
            out->last_arc = da[j];
        } else {
            gp_path_free(&p);
        }
        no = 0; /* answered */
    }
    for (uint32_t i = 0; i < no; i++)
        for (uint32_t j = 0; j < nd; j++) {
            if (out->dist != GP_INF && oc[i] + dc[j] >= out->dist) continue;
            gp_path p;
            memset(&p, 0, sizeof p);
            if (on[i] == dn[j]) {
                p.dist = 0;
                p.len = 1;
                p.nodes = malloc(sizeof *p.nodes);
                if (!p.nodes) {
                    gp_snap_route_free(out);
                    return gp_err_set(err, GP_ENOMEM, "out of memory");
                }
                p.nodes[0] = on[i];
            } else {
                int rc = gp_engine_p2p(e, g, on[i], dn[j], algo, &p, err);
                if (rc) {
                    gp_path_free(&p);
                    gp_snap_route_free(out);
                    return rc;
                }
            }
            uint64_t tot = add3(oc[i], p.dist, dc[j]);
            if (tot < out->dist) {
                gp_path_free(&out->path);
                out->path = p;
                out->dist = tot;
                out->first_arc = oa[i];
                out->last_arc = da[j];
            } else {
                gp_path_free(&p);
            }
        }
    if (out->dist == GP_INF) {
        gp_path_free(&out->path);
        out->first_arc = out->last_arc = GP_NONE;
    }
    return GP_OK;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t find_u32(const uint32_t *v, uint32_t n, uint32_t key) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The distinct entry (dir 0) or exit (dir 1) nodes of n positions, sorted; count in *k. */
static uint32_t *distinct_ends(const gp_graph *g, const gp_snap *s, uint32_t n, int dir,
                               uint32_t *k) {
    uint32_t *v = malloc(sizeof *v * 2 * (size_t)(n ? n : 1));
    if (!v) return NULL;
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node[2], arc[2];
        uint64_t cost[2];
        uint32_t m = ends(g, &s[i], dir, node, cost, arc);
        for (uint32_t j = 0; j < m; j++) v[c++] = node[j];
    }
    qsort(v, c, sizeof *v, cmp_u32);
    uint32_t u = 0;
    for (uint32_t i = 0; i < c; i++)
        if (!u || v[u - 1] != v[i]) v[u++] = v[i];
    *k = u;
    return v;
}

/* The ends of n positions resolved once: up to two (entry or exit) nodes each as indices into the
 * sorted distinct list v of k nodes, with their partial-arc costs. */
typedef struct ends_ix {
    uint32_t cnt;
    uint32_t ix[2];
    uint64_t cost[2];
} ends_ix;

static ends_ix *resolve_ends(const gp_graph *g, const gp_snap *s, uint32_t n, int dir,
                             const uint32_t *v, uint32_t k) {
    ends_ix *x = malloc(sizeof *x * (n ? n : 1));
    if (!x) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node[2], arc[2];
        x[i].cnt = ends(g, &s[i], dir, node, x[i].cost, arc);
        for (uint32_t a = 0; a < x[i].cnt; a++) x[i].ix[a] = find_u32(v, k, node[a]);
    }
    return x;
}

int gp_engine_table_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint32_t ns,
                         const gp_snap *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    uint32_t ks = 0, kt = 0;
    uint32_t *sv = distinct_ends(g, src, ns, 0, &ks);
    uint32_t *tv = distinct_ends(g, dst, nt, 1, &kt);
    size_t cells = (size_t)ks * kt;
    uint64_t *t = sv && tv ? malloc(sizeof *t * (cells ? cells : 1)) : NULL;
    ends_ix *se = t ? resolve_ends(g, src, ns, 0, sv, ks) : NULL;
    ends_ix *de = se ? resolve_ends(g, dst, nt, 1, tv, kt) : NULL;
    int rc = GP_OK;
    if (!de) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for a %u x %u table", ks, kt);
        goto done;
    }
    if (ks && kt) {
        rc = gp_engine_table(e, g, sv, ks, tv, kt, t, err);
        if (rc) goto done;
    }
    /* each cell: the cheapest entry x exit pair (the table's node rows and columns resolved
     * above, once per position), or the direct way along an arc both lie on */
    for (uint32_t i = 0; i < ns; i++) {
        const ends_ix *a = &se[i];
        for (uint32_t j = 0; j < nt; j++) {
            const ends_ix *b = &de[j];
            uint32_t darc;
            uint64_t bestd = direct(g, &src[i], &dst[j], &darc);
            for (uint32_t p = 0; p < a->cnt; p++) {
                const uint64_t *row = t + (size_t)a->ix[p] * kt;
                for (uint32_t q = 0; q < b->cnt; q++) {
                    uint64_t d = add3(a->cost[p], row[b->ix[q]], b->cost[q]);
                    if (d < bestd) bestd = d;
                }
            }
            out[(size_t)i * nt + j] = bestd;
        }
    }
done:
    free(se);
    free(de);
    free(sv);
    free(tv);
    free(t);
    return rc;
}

int gp_engine_sssp_snap(gp_engine *e, const gp_graph *g, const gp_snap *src, uint64_t max_dist,
                        uint64_t *dist, uint32_t *pred, gp_err *err) {
    uint32_t on[2], oa[2];
    uint64_t oc[2];
    uint32_t no = ends(g, src, 0, on, oc, oa);
    if (no == 1 && oc[0] == 0) return gp_engine_sssp(e, g, on[0], max_dist, dist, pred, err);
    uint64_t *td = malloc(sizeof *td * g->n);
    uint32_t *tp = pred ? malloc(sizeof *tp * g->n) : NULL;
    if (!td || (pred && !tp)) {
        free(td);
        free(tp);
        return gp_err_set(err, GP_ENOMEM, "out of memory for a %u-node tree", g->n);
    }
    for (uint32_t v = 0; v < g->n; v++) {
        dist[v] = GP_INF;
        if (pred) pred[v] = GP_NONE;
    }
    int rc = GP_OK;
    for (uint32_t i = 0; i < no; i++) {
        if (max_dist != GP_INF && oc[i] > max_dist) continue;
        uint64_t lim = max_dist == GP_INF ? GP_INF : max_dist - oc[i];
        rc = gp_engine_sssp(e, g, on[i], lim, td, tp, err);
        if (rc) break;
        for (uint32_t v = 0; v < g->n; v++) {
            if (td[v] == GP_INF) continue;
            uint64_t d = td[v] + oc[i];
            if (d < dist[v]) {
                dist[v] = d;
                if (pred) pred[v] = tp[v];
            }
        }
    }
    free(td);
    free(tp);
    return rc;
}
