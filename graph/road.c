/* road.c - the built-in road-like generator (gen:N[:SEED]) and its OSM XML writer.
 *
 * A grid (graph/gen.c, grid:N) is the worst case for every shortest-path hierarchy: its
 * separators grow as sqrt(n). Road networks are settlements joined by a sparse rural network, so
 * their nested-dissection separators are small. This generator builds that shape:
 *
 *  1. Settlement sizes: rank-size (Zipf) from the largest city (ROAD_SMAX_FRAC of the settled
 *     nodes) down, each varied by up to 25%, then villages of ROAD_SMIN..5 ROAD_SMIN nodes (Pareto
 *     law, index ROAD_PARETO) until ROAD_SETTLED_FRAC of the n nodes are settled; a graph too small
 *     for two settlements is one town of n nodes.
 *  2. Layout of each settlement: a town is one neighbourhood, a jittered street grid; a city is a
 *     grid of arterial roads whose cells each hold a neighbourhood joined to the surrounding
 *     arterials at one to four entrances (suburban streets reach the main roads in few places),
 *     around a downtown (ROAD_DOWNTOWN_FRAC of its intersections, at most ROAD_DOWNTOWN_MAX) where
 *     every street continues across the arterials: one continuous grid, as in old city centres.
 *     In a neighbourhood every column street and the two outer rows are two-way; inner row streets
 *     are sometimes missing or one-way. A street segment has a dead-end side street (cul-de-sac)
 *     with probability ROAD_CDS. Shape points (degree-2 nodes) fill each settlement up to its
 *     exact size. The degree mix this gives (gen:264346: 17% degree 1, 25% degree 2, 40% degree
 *     3, 18% degree 4) is the DIMACS graphs' (NY: 16%, 15%, 47%, 22%; BAY: 23%, 20%, 44%, 13%).
 *  3. Settlements are placed by dart throwing (largest first, no overlap) on a square map, the
 *     largest city at its centre.
 *  4. Rural roads: the Gabriel graph of the settlement centres (a subset of the Delaunay
 *     triangulation, found among each centre's ROAD_KNN nearest), thinned towards the relative
 *     neighbourhood graph: RNG edges are primary roads, the other Gabriel edges are kept with
 *     probability ROAD_GABRIEL_KEEP as secondary roads. Barriers (rivers, ridges: straight segments
 *     across the map) are crossed by a road with probability ROAD_BRIDGE only; a Kruskal pass over
 *     the dropped candidates (shortest first) reconnects what the thinning and the barriers cut.
 *  5. Motorways: the relative neighbourhood graph of the largest cities.
 *  6. The remaining nodes become shape points of rural roads and motorways, spread by length.
 *
 * Coordinates are metres on a plane around lon 8.5, lat 47.3, converted to lon/lat
 * (equirectangular); arc weights are travel times in deciseconds, round(great-circle length /
 * class speed * 10), at least 1 (motorway 110, primary 80, secondary 70 km/h, city arterials
 * (tertiary) 50, residential 30). Every road is two-way except some residential inner-row streets,
 * whose ends stay connected both ways through the two-way columns: the graph is strongly connected.
 * External ids are 1..n: settlements largest first (node 1 is a street corner of the largest city,
 * node 2 its neighbour on the same street), then rural shape points.
 *
 * Everything derives from splitmix64 hashes of (seed, object), so the graph is identical for the
 * same (n, seed) whatever the thread count: settlements and roads are written into ranges fixed
 * by prefix sums before any thread starts, and each CSR row is sorted afterwards.
 */
#include "graph/graph_internal.h"
#include "graph/spatial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROAD_LON0 8.5
#define ROAD_LAT0 47.3
#define ROAD_PI 3.14159265358979323846

#define ROAD_SETTLED_FRAC 0.96 /* nodes in settlements; the rest are rural shape points */
#define ROAD_PARETO 1.1        /* settlement size law: P(size > s) ~ s^-1.1 */
#define ROAD_SMIN 40           /* smallest settlement (nodes) */
#define ROAD_SMAX_FRAC 0.12    /* largest settlement, of the settled nodes (up to ROAD_REGION_N) */
#define ROAD_REGION_N 264346   /* nodes of a region: NY's; larger maps have many (see sizes()) */
#define ROAD_ZIPF_SHARE 0.8    /* settled nodes in towns and cities above villages (larger maps) */
#define ROAD_CORE_FRAC 0.86   /* intersections of a settlement, of its nodes (rest: shape points) */
#define ROAD_TOWN_CORE 160    /* a settlement with fewer intersections is one neighbourhood */
#define ROAD_CDS 0.22         /* street segments with a cul-de-sac */
#define ROAD_ROW_MISSING 0.25 /* inner row street segments missing */
#define ROAD_ROW_ONEWAY 0.08  /* inner row street segments one-way */
#define ROAD_DOWNTOWN_FRAC 0.5 /* a city's intersections in its downtown grid... */
#define ROAD_DOWNTOWN_MAX 9000 /* ...up to this many */
#define ROAD_ENTRANCE 0.6      /* each side of a city neighbourhood has an entrance */
#define ROAD_KNN 10            /* Gabriel candidates per settlement */
#define ROAD_GABRIEL_KEEP 0.35 /* Gabriel edges that are not RNG edges kept */
#define ROAD_BRIDGE 0.12       /* rural roads crossing a barrier kept */
#define ROAD_MAP_DENSITY 0.12  /* settlement footprints, of the map's area */

double gp_gen_class_kmh(int c) {
    switch (c) {
    case GP_ROAD_MOTORWAY: return 110;
    case GP_ROAD_PRIMARY: return 80;
    case GP_ROAD_SECONDARY: return 70;
    case GP_ROAD_TERTIARY: return 50;
    case GP_ROAD_RESIDENTIAL: return 30;
    default: return 0;
    }
}

/* hash of (seed, tag, a, b) */
static inline uint64_t rh(uint64_t seed, uint64_t tag, uint64_t a, uint64_t b) {
    return gp_mix64(seed * 0x9e3779b97f4a7c15ULL ^
                    gp_mix64(tag * 0xd6e8feb86659fd93ULL ^
                             gp_mix64(a * 0xa0761d6478bd642fULL ^ gp_mix64(b + 1))));
}
static inline double ru(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

enum {
    T_SIZE = 1,
    T_LAYOUT,
    T_NB,
    T_JIT,
    T_ROW,
    T_CDS,
    T_ENT,
    T_PLACE,
    T_KEEP,
    T_BARRIER,
    T_SHAPE
};

/* A settlement. Local node numbering: the neighbourhoods in cell order (each: its intersections
 * row-major, then its cul-de-sac nodes), then (cities) the arterial corners (ax+1)*(ay+1)
 * row-major, the horizontal arterial midpoints ax*(ay+1), the vertical ones (ax+1)*ay, then the
 * shape points. */
typedef struct stl {
    double x, y;     /* centre, metres */
    double hx, hy;   /* half extents */
    double sp;       /* street spacing */
    double cw, ch;   /* city: arterial cell size */
    uint32_t ax, ay; /* city: arterial cells per axis; 0 for a town */
    uint32_t tx, ty; /* town: neighbourhood intersections per axis; city: largest side (tx) */
    uint32_t dt;     /* city: downtown side in cells (0: none) */
    uint64_t size;   /* nodes, exactly */
    uint64_t core;   /* intersections, cul-de-sacs and arterial nodes */
    uint64_t art0;   /* local index of the first arterial corner */
    uint64_t segs;   /* street segments (each may carry shape points) */
    uint64_t cds;    /* cul-de-sacs */
    uint64_t base;   /* first global node */
    uint64_t ebase;  /* first global edge */
} stl;

/* A road between two settlements: rural (primary/secondary) or motorway. */
typedef struct link {
    uint32_t a, b;   /* settlements */
    uint32_t ga, gb; /* gate nodes (global) */
    uint8_t cls;
    uint64_t shape; /* shape points */
    uint64_t base;  /* first shape node */
    uint64_t ebase; /* first edge */
    double len;
} link;

typedef struct road_ctx {
    uint64_t n, seed;
    stl *s;
    uint32_t ns;
    link *l;
    uint32_t nl;
    gp_roadnet *net;
    uint64_t first_item; /* emit_item: item offset of the current pool */
} road_ctx;

/* ---------------------------------------------------------------------------------------------
 * work pool: items handed out one at a time to gp_parallel_for's threads (settlements differ in
 * size by orders of magnitude, so static chunks would leave threads idle)
 * ------------------------------------------------------------------------------------------- */

typedef struct pool {
    uint64_t next, n;
    void (*fn)(void *ctx, uint64_t item);
    void *ctx;
} pool;

static void pool_worker(void *vp, uint64_t begin, uint64_t end) {
    (void)begin;
    (void)end;
    pool *p = vp;
    for (;;) {
        uint64_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n) return;
        p->fn(p->ctx, i);
    }
}

static void pool_run(uint64_t n, void (*fn)(void *, uint64_t), void *ctx) {
    pool p = {0, n, fn, ctx};
    /* gp_parallel_for starts one thread per 65536 of its range, up to the online CPUs */
    gp_parallel_for(n < 16 ? n * 65536 : 16 * 65536, 0, pool_worker, &p);
}

/* ---------------------------------------------------------------------------------------------
 * settlement walker: counts (w->out == NULL) or writes a settlement's nodes and edges
 * ------------------------------------------------------------------------------------------- */

typedef struct walker {
    const road_ctx *c;
    const stl *s;
    uint32_t si;          /* settlement index */
    gp_roadnet *out;      /* NULL: count only */
    uint64_t core;        /* core nodes allocated so far */
    uint64_t segs;        /* segments so far */
    uint64_t edges;       /* edges written so far */
    uint64_t shape_next;  /* shape points allocated so far */
    uint64_t shape_total; /* size - core */
    uint64_t cds;         /* cul-de-sacs so far */
    uint64_t art0;        /* local index of the first arterial corner */
} walker;

static void put_edge(walker *w, uint64_t u, uint64_t v, int cls, int dir) {
    if (w->out) {
        uint64_t e = w->s->ebase + w->edges;
        w->out->eu[e] = (uint32_t)u;
        w->out->ev[e] = (uint32_t)v;
        w->out->ecls[e] = (uint8_t)cls;
        w->out->edir[e] = (uint8_t)dir;
    }
    w->edges++;
}

static void set_xy(walker *w, uint64_t local, double x, double y) {
    if (!w->out) return;
    w->out->x[w->s->base + local] = x;
    w->out->y[w->s->base + local] = y;
}

/* A street from local node u to local node v (dir: 1 u->v, 2 v->u, 3 both), carrying its share
 * of the settlement's shape points, laid on the straight line with a little sideways jitter. With
 * probability ROAD_CDS a dead-end side street (cul-de-sac) branches off at its middle: a T-junction
 * node m on the street and the dead end d. */
static void seg(walker *w, uint64_t u, uint64_t v, int cls, int dir) {
    uint64_t i = w->segs++;
    uint64_t hc = rh(w->c->seed, T_CDS, w->si, i);
    uint64_t m = 0, d = 0;
    int cds = ru(hc) < ROAD_CDS;
    if (cds) {
        m = w->core++;
        d = w->core++;
        w->cds++;
    }
    if (!w->out) return;
    uint64_t k = w->s->segs
                     ? ((i + 1) * w->shape_total) / w->s->segs - (i * w->shape_total) / w->s->segs
                     : 0;
    const uint64_t base = w->s->base;
    gp_roadnet *o = w->out;
    double x0 = o->x[base + u], y0 = o->y[base + u], x1 = o->x[base + v], y1 = o->y[base + v];
    uint64_t end = v;
    if (cds) { /* the street runs u .. m, then m - v; the dead end leaves m sideways */
        double t = 0.35 + 0.3 * ru(gp_mix64(hc)), side = (hc >> 60 & 1) ? 0.45 : -0.45;
        set_xy(w, m, x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
        set_xy(w, d, o->x[base + m] - (y1 - y0) * side, o->y[base + m] + (x1 - x0) * side);
        end = m;
        x1 = o->x[base + m];
        y1 = o->y[base + m];
    }
    uint64_t prev = base + u;
    for (uint64_t j = 0; j < k; j++) {
        uint64_t p = base + w->s->core + w->shape_next++;
        double t = (double)(j + 1) / (double)(k + 1);
        uint64_t h = rh(w->c->seed, T_SHAPE, p, 0);
        double side = (ru(h) - 0.5) * 0.08;
        o->x[p] = x0 + (x1 - x0) * t - (y1 - y0) * side;
        o->y[p] = y0 + (y1 - y0) * t + (x1 - x0) * side;
        put_edge(w, prev, p, cls, dir);
        prev = p;
    }
    put_edge(w, prev, base + end, cls, dir);
    if (cds) {
        put_edge(w, base + m, base + v, cls, dir);
        put_edge(w, base + m, base + d, GP_ROAD_RESIDENTIAL, 3);
    }
}

/* Arterial corner (i, j) of a city. */
static void corner_xy(const road_ctx *c, const stl *s, uint32_t si, uint32_t i, uint32_t j,
                      double *x, double *y) {
    uint64_t h = rh(c->seed, T_JIT, si, ((uint64_t)j << 32 | i) ^ 0x8000000000000000ULL);
    *x = s->x - s->ax * s->cw / 2 + i * s->cw + (ru(h) - 0.5) * 0.1 * s->cw;
    *y = s->y - s->ay * s->ch / 2 + j * s->ch + (ru(gp_mix64(h)) - 0.5) * 0.1 * s->ch;
}

/* Neighbourhood intersection (i, j) with origin (ox, oy). */
static void nb_xy(const road_ctx *c, const stl *s, uint32_t si, uint64_t local, uint32_t i,
                  uint32_t j, double ox, double oy, double *x, double *y) {
    uint64_t h = rh(c->seed, T_JIT, si, local);
    *x = ox + i * s->sp + (ru(h) - 0.5) * 0.3 * s->sp;
    *y = oy + j * s->sp + (ru(gp_mix64(h)) - 0.5) * 0.3 * s->sp;
}

/* City cell k's neighbourhood size. */
static void cell_dims(const road_ctx *c, const stl *s, uint32_t si, uint64_t k, uint32_t *nx,
                      uint32_t *ny) {
    uint64_t h = rh(c->seed, T_NB, si, k);
    uint32_t lo = s->tx / 2, span = s->tx - lo + 1;
    *nx = lo + (uint32_t)(h % span);
    *ny = lo + (uint32_t)((h >> 20) % span);
}

/* One neighbourhood of nx x ny intersections at origin (ox, oy); its first node gets the next
 * local index. Returns the local index of its first intersection. */
static uint64_t neighbourhood(walker *w, uint32_t nx, uint32_t ny, double ox, double oy) {
    const road_ctx *c = w->c;
    const stl *s = w->s;
    uint64_t first = w->core;
    w->core += (uint64_t)nx * ny;
    if (w->out)
        for (uint32_t j = 0; j < ny; j++)
            for (uint32_t i = 0; i < nx; i++) {
                double x, y;
                uint64_t loc = first + (uint64_t)j * nx + i;
                nb_xy(c, s, w->si, loc, i, j, ox, oy, &x, &y);
                set_xy(w, loc, x, y);
            }
    for (uint32_t j = 0; j < ny; j++)
        for (uint32_t i = 0; i < nx; i++) {
            uint64_t a = first + (uint64_t)j * nx + i;
            if (i + 1 < nx) { /* row street */
                int dir = 3;
                if (j > 0 && j + 1 < ny) {
                    double r = ru(rh(c->seed, T_ROW, w->si, a));
                    if (r < ROAD_ROW_MISSING) dir = 0;
                    else if (r < ROAD_ROW_MISSING + ROAD_ROW_ONEWAY) dir = (j & 1) ? 1 : 2;
                }
                if (dir) seg(w, a, a + 1, GP_ROAD_RESIDENTIAL, dir);
            }
            if (j + 1 < ny) seg(w, a, a + nx, GP_ROAD_RESIDENTIAL, 3); /* column street */
        }
    return first;
}

/* A city's arterial midpoints. Each arterial segment has one midpoint (horizontal segments
 * ax*(ay+1) after the corners, then vertical ones (ax+1)*ay); a segment bordering the downtown
 * (a dw x dh block of cells, centred, where the neighbourhoods are full tx x tx grids joined
 * across the arterials at every street) has tx of them, one per street crossing: position tx/2
 * is its ordinary midpoint, the other tx-1 follow all ordinary ones. */
typedef struct art_map {
    uint32_t ax, ay, q;
    uint32_t dc0, dw, dr0, dh; /* downtown cells [dc0, dc0+dw) x [dr0, dr0+dh); dw = 0: none */
    uint64_t extra;            /* extra midpoints */
} art_map;

static void art_init(art_map *m, const stl *s) {
    m->ax = s->ax;
    m->ay = s->ay;
    m->q = s->tx;
    uint32_t d = s->dt;
    if (d > s->ax) d = s->ax;
    if (d > s->ay) d = s->ay;
    m->dw = m->dh = d;
    m->dc0 = (s->ax - d) / 2;
    m->dr0 = (s->ay - d) / 2;
    m->extra = d ? ((uint64_t)(d + 1) * d * 2) * (m->q - 1) : 0;
}
static int art_in_downtown(const art_map *m, uint32_t ci, uint32_t cj) {
    return m->dw && ci >= m->dc0 && ci < m->dc0 + m->dw && cj >= m->dr0 && cj < m->dr0 + m->dh;
}
/* Whether the horizontal (hz) / vertical segment starting at corner (i, j) borders the downtown. */
static int art_downtown(const art_map *m, int hz, uint32_t i, uint32_t j) {
    if (!m->dw) return 0;
    if (hz) return i >= m->dc0 && i < m->dc0 + m->dw && j >= m->dr0 && j <= m->dr0 + m->dh;
    return i >= m->dc0 && i <= m->dc0 + m->dw && j >= m->dr0 && j < m->dr0 + m->dh;
}
/* Local index of midpoint t (0..q-1 along the segment) of the segment at corner (i, j). */
static uint64_t art_mid(const art_map *m, const stl *s, int hz, uint32_t i, uint32_t j,
                        uint32_t t) {
    const uint64_t nc = (uint64_t)(m->ax + 1) * (m->ay + 1), nh = (uint64_t)m->ax * (m->ay + 1);
    const uint64_t nv = (uint64_t)(m->ax + 1) * m->ay;
    if (t == m->q / 2 || !art_downtown(m, hz, i, j))
        return s->art0 + nc + (hz ? (uint64_t)j * m->ax + i : nh + (uint64_t)j * (m->ax + 1) + i);
    uint64_t k =
        hz ? (uint64_t)(j - m->dr0) * m->dw + (i - m->dc0)
           : (uint64_t)(m->dh + 1) * m->dw + (uint64_t)(j - m->dr0) * (m->dw + 1) + (i - m->dc0);
    return s->art0 + nc + nh + nv + k * (m->q - 1) + (t < m->q / 2 ? t : t - 1);
}

static void town_origin(const stl *s, double *ox, double *oy) {
    *ox = s->x - (s->tx - 1) * s->sp / 2;
    *oy = s->y - (s->ty - 1) * s->sp / 2;
}

/* Walks settlement si: counts into s (count mode) or writes it. */
static void walk(const road_ctx *c, uint32_t si, gp_roadnet *out, uint64_t *core, uint64_t *segs,
                 uint64_t *cds, uint64_t *art0) {
    const stl *s = &c->s[si];
    walker w = {c, s, si, out, 0, 0, 0, 0, out ? s->size - s->core : 0, 0, 0};
    if (s->ax == 0) {
        double ox, oy;
        town_origin(s, &ox, &oy);
        neighbourhood(&w, s->tx, s->ty, ox, oy);
    } else {
        const uint32_t ax = s->ax, ay = s->ay, q = s->tx;
        const uint64_t nc = (uint64_t)(ax + 1) * (ay + 1), nh = (uint64_t)ax * (ay + 1);
        const uint64_t nv = (uint64_t)(ax + 1) * ay;
        art_map am;
        art_init(&am, s);
        /* arterial coordinates first: entrances lead to their midpoints */
        if (out) {
            for (uint32_t j = 0; j <= ay; j++)
                for (uint32_t i = 0; i <= ax; i++) {
                    double x, y;
                    corner_xy(c, s, si, i, j, &x, &y);
                    set_xy(&w, s->art0 + (uint64_t)j * (ax + 1) + i, x, y);
                }
            const double *X = out->x + s->base, *Y = out->y + s->base;
            for (int hz = 1; hz >= 0; hz--)
                for (uint32_t j = 0; j + !hz <= ay; j++)
                    for (uint32_t i = 0; i + hz <= ax; i++) {
                        uint64_t a = s->art0 + (uint64_t)j * (ax + 1) + i,
                                 b = a + (hz ? 1 : ax + 1);
                        int dt = art_downtown(&am, hz, i, j);
                        for (uint32_t t = 0; t < (dt ? q : 1); t++) {
                            double f = dt ? ((s->cw - (q - 1) * s->sp) / 2 + t * s->sp) / s->cw
                                          : 0.5;
                            set_xy(&w, art_mid(&am, s, hz, i, j, dt ? t : q / 2),
                                   X[a] + (X[b] - X[a]) * f, Y[a] + (Y[b] - Y[a]) * f);
                        }
                    }
        }
        for (uint32_t cj = 0; cj < ay; cj++)
            for (uint32_t ci = 0; ci < ax; ci++) {
                uint64_t k = (uint64_t)cj * ax + ci;
                int dt = art_in_downtown(&am, ci, cj);
                uint32_t nx = q, ny = q;
                if (!dt) cell_dims(c, s, si, k, &nx, &ny);
                double ox = s->x - ax * s->cw / 2 + ci * s->cw + (s->cw - (nx - 1) * s->sp) / 2;
                double oy = s->y - ay * s->ch / 2 + cj * s->ch + (s->ch - (ny - 1) * s->sp) / 2;
                uint64_t f = neighbourhood(&w, nx, ny, ox, oy);
                if (dt) { /* downtown: every boundary street continues across the arterials */
                    for (uint32_t t = 0; t < q; t++) {
                        seg(&w, f + t, art_mid(&am, s, 1, ci, cj, t), GP_ROAD_RESIDENTIAL, 3);
                        seg(&w, f + (uint64_t)(q - 1) * q + t, art_mid(&am, s, 1, ci, cj + 1, t),
                            GP_ROAD_RESIDENTIAL, 3);
                        seg(&w, f + (uint64_t)t * q, art_mid(&am, s, 0, ci, cj, t),
                            GP_ROAD_RESIDENTIAL, 3);
                        seg(&w, f + (uint64_t)t * q + q - 1, art_mid(&am, s, 0, ci + 1, cj, t),
                            GP_ROAD_RESIDENTIAL, 3);
                    }
                    continue;
                }
                /* entrances: bottom, top, left, right; at least one */
                uint64_t h = rh(c->seed, T_ENT, si, k);
                unsigned sides = 0;
                for (int d = 0; d < 4; d++)
                    if (ru(gp_mix64(h + (uint64_t)d)) < ROAD_ENTRANCE) sides |= 1u << d;
                if (!sides) sides = 1u << (h % 4);
                if (sides & 1)
                    seg(&w, f + nx / 2, art_mid(&am, s, 1, ci, cj, q / 2), GP_ROAD_RESIDENTIAL, 3);
                if (sides & 2)
                    seg(&w, f + (uint64_t)(ny - 1) * nx + nx / 2,
                        art_mid(&am, s, 1, ci, cj + 1, q / 2), GP_ROAD_RESIDENTIAL, 3);
                if (sides & 4)
                    seg(&w, f + (uint64_t)(ny / 2) * nx, art_mid(&am, s, 0, ci, cj, q / 2),
                        GP_ROAD_RESIDENTIAL, 3);
                if (sides & 8)
                    seg(&w, f + (uint64_t)(ny / 2) * nx + nx - 1,
                        art_mid(&am, s, 0, ci + 1, cj, q / 2), GP_ROAD_RESIDENTIAL, 3);
            }
        /* the arterial grid: every segment, two-way, through its midpoint(s) */
        uint64_t a0 = w.art0 = w.core;
        w.core += nc + nh + nv + am.extra;
        for (int hz = 1; hz >= 0; hz--)
            for (uint32_t j = 0; j + !hz <= ay; j++)
                for (uint32_t i = 0; i + hz <= ax; i++) {
                    uint64_t a = a0 + (uint64_t)j * (ax + 1) + i, prev = a;
                    int dt = art_downtown(&am, hz, i, j);
                    for (uint32_t t = 0; t < (dt ? q : 1); t++) {
                        uint64_t m = a0 + art_mid(&am, s, hz, i, j, dt ? t : q / 2) - s->art0;
                        seg(&w, prev, m, GP_ROAD_TERTIARY, 3);
                        prev = m;
                    }
                    seg(&w, prev, a + (hz ? 1 : ax + 1), GP_ROAD_TERTIARY, 3);
                }
    }
    if (core) *core = w.core;
    if (segs) *segs = w.segs;
    if (cds) *cds = w.cds;
    if (art0) *art0 = s->ax ? w.art0 : w.core;
}

/* Nodes before shape points of a settlement's layout; sets art0 and segs. */
static void count_settlement(const road_ctx *c, uint32_t si) {
    stl *s = &c->s[si];
    uint64_t core, segs, cds, art0;
    walk(c, si, NULL, &core, &segs, &cds, &art0);
    s->core = core;
    s->segs = segs;
    s->cds = cds;
    s->art0 = art0;
}

/* Chooses the layout of settlement si (size set) so that its core fits in its size. */
static void plan_settlement(void *vc, uint64_t item) {
    road_ctx *c = vc;
    uint32_t si = (uint32_t)item;
    stl *s = &c->s[si];
    uint64_t h = rh(c->seed, T_LAYOUT, si, 0);
    s->sp = 80 + 60 * ru(h);
    double aspect = 0.7 + 0.6 * ru(gp_mix64(h));
    /* intersections: each brings ~1.8 street segments, each a cul-de-sac (2 nodes) with ROAD_CDS */
    const double per_x = 1 + 1.8 * 2 * ROAD_CDS;
    double core = (double)s->size * ROAD_CORE_FRAC / per_x;
    if (core < ROAD_TOWN_CORE) {
        s->ax = s->ay = 0;
        s->tx = (uint32_t)fmax(2, round(sqrt(core * aspect)));
        s->ty = (uint32_t)fmax(2, round(core / s->tx));
    } else {
        s->tx = 8 + (uint32_t)((h >> 40) % 8);
        double side = (s->tx / 2 + s->tx) / 2.0, q2 = (double)s->tx * s->tx + 2 * s->tx;
        s->dt = (uint32_t)floor(sqrt(fmin(ROAD_DOWNTOWN_FRAC * core, ROAD_DOWNTOWN_MAX) / q2));
        double cells =
            fmax(1, s->dt * s->dt + fmax(0, core - s->dt * s->dt * q2) / (side * side + 3));
        s->ax = (uint32_t)fmax(1, round(sqrt(cells * aspect)));
        s->ay = (uint32_t)fmax(1, round(cells / s->ax));
        s->cw = s->ch = (s->tx + 1) * s->sp;
    }
    for (;;) {
        count_settlement(c, si);
        if (s->core <= s->size) break;
        if (s->ax > 1 || s->ay > 1) { /* shrink the city */
            if (s->ax >= s->ay) s->ax--;
            else s->ay--;
        } else if (s->ax == 1) { /* one cell left: a town instead */
            s->ax = s->ay = 0;
            s->tx = s->ty = 4;
        } else if (s->tx > 2 || s->ty > 2) {
            if (s->tx >= s->ty) s->tx--;
            else s->ty--;
        } else {
            break; /* 2 x 2 town: at most 12 core nodes; sizes are >= ROAD_SMIN */
        }
    }
    if (s->ax) {
        s->hx = s->ax * s->cw / 2;
        s->hy = s->ay * s->ch / 2;
    } else {
        s->hx = (s->tx + 1) * s->sp / 2;
        s->hy = (s->ty + 1) * s->sp / 2;
    }
}

/* The gate of settlement si nearest to (tx, ty): a boundary arterial corner of a city, a boundary
 * intersection of a town. Returns the global node. */
static uint32_t gate(const road_ctx *c, uint32_t si, double tx, double ty) {
    const stl *s = &c->s[si];
    double best = INFINITY;
    uint64_t bl = 0;
    if (s->ax) {
        for (uint32_t j = 0; j <= s->ay; j++)
            for (uint32_t i = 0; i <= s->ax; i += (j == 0 || j == s->ay) ? 1 : s->ax) {
                double x, y;
                corner_xy(c, s, si, i, j, &x, &y);
                double d = (x - tx) * (x - tx) + (y - ty) * (y - ty);
                if (d < best) {
                    best = d;
                    bl = s->art0 + (uint64_t)j * (s->ax + 1) + i;
                }
            }
    } else {
        double ox, oy;
        town_origin(s, &ox, &oy);
        for (uint32_t j = 0; j < s->ty; j++)
            for (uint32_t i = 0; i < s->tx; i += (j == 0 || j + 1 == s->ty) ? 1 : s->tx - 1) {
                double x, y;
                uint64_t loc = (uint64_t)j * s->tx + i;
                nb_xy(c, s, si, loc, i, j, ox, oy, &x, &y);
                double d = (x - tx) * (x - tx) + (y - ty) * (y - ty);
                if (d < best) {
                    best = d;
                    bl = loc;
                }
            }
    }
    return (uint32_t)(s->base + bl);
}

/* ---------------------------------------------------------------------------------------------
 * placement and the rural network
 * ------------------------------------------------------------------------------------------- */

/* Uniform bucket grid over the map for settlement centres / footprints. */
typedef struct bgrid {
    double x0, y0, cell;
    uint32_t nx, ny;
    uint32_t *head, *next, *item; /* linked registrations */
    uint64_t used, cap;
} bgrid;

static int bg_init(bgrid *g, double x0, double y0, double side, double cell, uint64_t cap) {
    g->x0 = x0;
    g->y0 = y0;
    g->cell = cell;
    g->nx = g->ny = (uint32_t)fmin(8192, fmax(1, ceil(side / cell)));
    g->cell = side / g->nx;
    g->head = malloc((size_t)g->nx * g->ny * sizeof *g->head);
    g->next = malloc(cap * sizeof *g->next);
    g->item = malloc(cap * sizeof *g->item);
    g->used = 0;
    g->cap = cap;
    if (!g->head || !g->next || !g->item) return -1;
    memset(g->head, 0xff, (size_t)g->nx * g->ny * sizeof *g->head);
    return 0;
}
static void bg_free(bgrid *g) {
    if (!g) return;
    free(g->head);
    free(g->next);
    free(g->item);
}
static uint32_t bg_cx(const bgrid *g, double x) {
    double f = floor((x - g->x0) / g->cell);
    return f < 0 ? 0 : f >= g->nx ? g->nx - 1 : (uint32_t)f;
}
static uint32_t bg_cy(const bgrid *g, double y) {
    double f = floor((y - g->y0) / g->cell);
    return f < 0 ? 0 : f >= g->ny ? g->ny - 1 : (uint32_t)f;
}
static int bg_add(bgrid *g, uint32_t cx, uint32_t cy, uint32_t item) {
    if (g->used == g->cap) {
        uint64_t cap = g->cap * 2;
        uint32_t *nn = realloc(g->next, cap * sizeof *nn);
        if (!nn) return -1;
        g->next = nn;
        uint32_t *ni = realloc(g->item, cap * sizeof *ni);
        if (!ni) return -1;
        g->item = ni;
        g->cap = cap;
    }
    uint64_t c = (uint64_t)cy * g->nx + cx;
    g->item[g->used] = item;
    g->next[g->used] = g->head[c];
    g->head[c] = (uint32_t)g->used++;
    return 0;
}

/* Places settlements largest first: the largest at the map's centre (lon 8.5, lat 47.3), the others
 * at random points of a square map, rejecting overlaps (up to 60 tries each; the last try is
 * kept). Returns the map's side, or a negative value on OOM. */
static double place(road_ctx *c) {
    double area = 0, maxh = 0;
    for (uint32_t i = 0; i < c->ns; i++) {
        area += (2 * c->s[i].hx + 400) * (2 * c->s[i].hy + 400);
        maxh = fmax(maxh, fmax(c->s[i].hx, c->s[i].hy));
    }
    double side = fmax(sqrt(area / ROAD_MAP_DENSITY), 2 * maxh + 1000);
    if (c->ns == 1) {
        c->s[0].x = c->s[0].y = 0;
        return side;
    }
    double cell = fmax(side / 4096, 2 * c->s[c->ns / 2].hx + 400);
    bgrid g;
    if (bg_init(&g, -side / 2, -side / 2, side, cell, 4 * (uint64_t)c->ns + 1024)) {
        bg_free(&g);
        return -1;
    }
    for (uint32_t i = 0; i < c->ns; i++) {
        stl *s = &c->s[i];
        double rx = side / 2 - s->hx - 200, ry = side / 2 - s->hy - 200;
        for (int t = 0; t < 60 && i > 0; t++) { /* the largest city: the map's centre */
            uint64_t h = rh(c->seed, T_PLACE, i, (uint64_t)t);
            s->x = (ru(h) * 2 - 1) * rx;
            s->y = (ru(gp_mix64(h)) * 2 - 1) * ry;
            uint32_t x0 = bg_cx(&g, s->x - s->hx - 200), x1 = bg_cx(&g, s->x + s->hx + 200);
            uint32_t y0 = bg_cy(&g, s->y - s->hy - 200), y1 = bg_cy(&g, s->y + s->hy + 200);
            int clash = 0;
            for (uint32_t cy = y0; cy <= y1 && !clash; cy++)
                for (uint32_t cx = x0; cx <= x1 && !clash; cx++)
                    for (uint32_t r = g.head[(uint64_t)cy * g.nx + cx]; r != UINT32_MAX && !clash;
                         r = g.next[r]) {
                        const stl *o = &c->s[g.item[r]];
                        clash = fabs(o->x - s->x) < o->hx + s->hx + 400 &&
                                fabs(o->y - s->y) < o->hy + s->hy + 400;
                    }
            if (!clash) break;
        }
        uint32_t x0 = bg_cx(&g, s->x - s->hx - 200), x1 = bg_cx(&g, s->x + s->hx + 200);
        uint32_t y0 = bg_cy(&g, s->y - s->hy - 200), y1 = bg_cy(&g, s->y + s->hy + 200);
        for (uint32_t cy = y0; cy <= y1; cy++)
            for (uint32_t cx = x0; cx <= x1; cx++)
                if (bg_add(&g, cx, cy, i)) {
                    bg_free(&g);
                    return -1;
                }
    }
    bg_free(&g);
    return side;
}

static inline double d2(const stl *a, const stl *b) {
    return (a->x - b->x) * (a->x - b->x) + (a->y - b->y) * (a->y - b->y);
}

typedef struct cand {
    uint32_t a, b;
    double len;
    int kind; /* 0 RNG, 1 Gabriel only, 2 dropped */
} cand;

static int cand_cmp(const void *x, const void *y) {
    const cand *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return 0;
}
static int cand_len_cmp(const void *x, const void *y) {
    const cand *p = x, *q = y;
    if (p->len != q->len) return p->len < q->len ? -1 : 1;
    return cand_cmp(x, y);
}

static uint32_t uf_find(uint32_t *p, uint32_t x) {
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

/* 1 when segments p1-p2 and q1-q2 properly cross. */
static int crosses(double p1x, double p1y, double p2x, double p2y, double q1x, double q1y,
                   double q2x, double q2y) {
    double d1 = (p2x - p1x) * (q1y - p1y) - (p2y - p1y) * (q1x - p1x);
    double d2v = (p2x - p1x) * (q2y - p1y) - (p2y - p1y) * (q2x - p1x);
    double d3 = (q2x - q1x) * (p1y - q1y) - (q2y - q1y) * (p1x - q1x);
    double d4 = (q2x - q1x) * (p2y - q1y) - (q2y - q1y) * (p2x - q1x);
    return ((d1 > 0) != (d2v > 0)) && ((d3 > 0) != (d4 > 0));
}

/* Whether any centre other than a, b lies in the circle of diameter ab (Gabriel) or in the lune of
 * ab (RNG test): returns 2 when the lune is occupied, 1 when only... see kind in cand. */
static int empty_tests(const road_ctx *c, const bgrid *g, uint32_t a, uint32_t b, int *gabriel,
                       int *rng) {
    const stl *A = &c->s[a], *B = &c->s[b];
    double l2 = d2(A, B), l = sqrt(l2);
    double mx = (A->x + B->x) / 2, my = (A->y + B->y) / 2;
    *gabriel = *rng = 1;
    uint32_t x0 = bg_cx(g, mx - l), x1 = bg_cx(g, mx + l), y0 = bg_cy(g, my - l),
             y1 = bg_cy(g, my + l);
    for (uint32_t cy = y0; cy <= y1; cy++)
        for (uint32_t cx = x0; cx <= x1; cx++)
            for (uint32_t r = g->head[(uint64_t)cy * g->nx + cx]; r != UINT32_MAX; r = g->next[r]) {
                uint32_t k = g->item[r];
                if (k == a || k == b) continue;
                const stl *K = &c->s[k];
                double dm = (K->x - mx) * (K->x - mx) + (K->y - my) * (K->y - my);
                if (dm < l2 / 4) *gabriel = 0;
                if (d2(K, A) < l2 && d2(K, B) < l2) *rng = 0;
                if (!*gabriel && !*rng) return 0;
            }
    return 0;
}

/* Work of build_links on threads. */
typedef struct links_ctx {
    const road_ctx *c;
    const bgrid *g;
    cand *cs;
    uint32_t *have;    /* knn: candidates found per centre */
    const double *bar; /* kind: barrier segments */
    uint32_t nbar;
    uint32_t kk;  /* knn: neighbours wanted */
    uint64_t ncs; /* kind: candidates */
} links_ctx;

/* Centres [1024 chunk, +1024): their kk nearest (rings of buckets until the kk-th is closer than
 * the ring), as candidates in slots i*kk.. of cs. */
static void knn_chunk(void *vl, uint64_t chunk) {
    links_ctx *lc = vl;
    const road_ctx *c = lc->c;
    const bgrid *g = lc->g;
    const uint32_t kk = lc->kk;
    uint64_t end = (chunk + 1) * 1024 < c->ns ? (chunk + 1) * 1024 : c->ns;
    for (uint32_t i = (uint32_t)(chunk * 1024); i < end; i++) {
        uint32_t best[ROAD_KNN];
        double bd[ROAD_KNN];
        uint32_t have = 0;
        uint32_t cx = bg_cx(g, c->s[i].x), cy = bg_cy(g, c->s[i].y);
        for (uint32_t ring = 0;; ring++) {
            for (int64_t y = (int64_t)cy - ring; y <= (int64_t)cy + ring; y++)
                for (int64_t x = (int64_t)cx - ring; x <= (int64_t)cx + ring; x++) {
                    if (y < 0 || x < 0 || y >= g->ny || x >= g->nx) continue;
                    if (ring && y != (int64_t)cy - ring && y != (int64_t)cy + ring &&
                        x != (int64_t)cx - ring && x != (int64_t)cx + ring)
                        continue;
                    for (uint32_t r = g->head[(uint64_t)y * g->nx + x]; r != UINT32_MAX;
                         r = g->next[r]) {
                        uint32_t k = g->item[r];
                        if (k == i) continue;
                        double d = d2(&c->s[i], &c->s[k]);
                        if (have == kk && d >= bd[kk - 1]) continue;
                        uint32_t p = have < kk ? have++ : kk - 1;
                        while (p > 0 && (bd[p - 1] > d || (bd[p - 1] == d && best[p - 1] > k))) {
                            bd[p] = bd[p - 1];
                            best[p] = best[p - 1];
                            p--;
                        }
                        bd[p] = d;
                        best[p] = k;
                    }
                }
            double reach = ring * g->cell;
            if ((have == kk && bd[kk - 1] <= reach * reach) || (ring > g->nx && ring > g->ny))
                break;
        }
        for (uint32_t j = 0; j < have; j++) {
            cand *e = &lc->cs[(uint64_t)i * kk + j];
            e->a = i < best[j] ? i : best[j];
            e->b = i < best[j] ? best[j] : i;
        }
        lc->have[i] = have;
    }
}

/* Candidates [4096 chunk, +4096): length and kind (RNG, kept Gabriel, dropped; barriers). */
static void kind_chunk(void *vl, uint64_t chunk) {
    links_ctx *lc = vl;
    const road_ctx *c = lc->c;
    uint64_t end = (chunk + 1) * 4096 < lc->ncs ? (chunk + 1) * 4096 : lc->ncs;
    for (uint64_t i = chunk * 4096; i < end; i++) {
        cand *e = &lc->cs[i];
        const stl *A = &c->s[e->a], *B = &c->s[e->b];
        e->len = sqrt(d2(A, B));
        int gab, rng;
        empty_tests(c, lc->g, e->a, e->b, &gab, &rng);
        uint64_t h = rh(c->seed, T_KEEP, e->a, e->b);
        e->kind = rng ? 0 : (gab && ru(h) < ROAD_GABRIEL_KEEP) ? 1 : 2;
        for (uint32_t b = 0; b < lc->nbar && e->kind < 2; b++) {
            const double *s = lc->bar + 4 * b;
            if (crosses(A->x, A->y, B->x, B->y, s[0], s[1], s[2], s[3]) &&
                ru(gp_mix64(h ^ (b + 1))) >= ROAD_BRIDGE)
                e->kind = 2;
        }
    }
}

/* The rural roads and motorways: fills c->l / c->nl. */
static int build_links(road_ctx *c, double side) {
    const uint32_t ns = c->ns;
    if (ns < 2) return 0;
    double cell = side / fmax(1, floor(sqrt((double)ns)));
    bgrid g;
    cand *cs = NULL;
    uint32_t *uf = NULL;
    int rc = -1;
    uint64_t ncs = 0, capc = (uint64_t)ns * ROAD_KNN;
    if (bg_init(&g, -side / 2, -side / 2, side, cell, ns + 16)) goto done;
    for (uint32_t i = 0; i < ns; i++)
        if (bg_add(&g, bg_cx(&g, c->s[i].x), bg_cy(&g, c->s[i].y), i)) goto done;
    cs = malloc(capc * sizeof *cs);
    uf = malloc(ns * sizeof *uf);
    if (!cs || !uf) goto done;
    /* candidates: each centre's ROAD_KNN nearest, on threads into fixed slots, then compacted */
    {
        links_ctx lc = {c, &g, cs, NULL, NULL, 0, ns - 1 < ROAD_KNN ? ns - 1 : ROAD_KNN, 0};
        lc.have = malloc(ns * sizeof *lc.have);
        if (!lc.have) goto done;
        pool_run((ns + 1023) / 1024, knn_chunk, &lc);
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t j = 0; j < lc.have[i]; j++) cs[ncs++] = cs[(uint64_t)i * lc.kk + j];
        free(lc.have);
    }
    qsort(cs, ncs, sizeof *cs, cand_cmp);
    {
        uint64_t u = 0;
        for (uint64_t i = 0; i < ncs; i++)
            if (!u || cand_cmp(&cs[i], &cs[u - 1])) cs[u++] = cs[i];
        ncs = u;
    }
    /* barriers */
    uint32_t nbar = (uint32_t)round(sqrt((double)ns) / 6);
    double *bar = malloc((nbar ? nbar : 1) * 4 * sizeof *bar);
    if (!bar) goto done;
    for (uint32_t b = 0; b < nbar; b++) {
        uint64_t h = rh(c->seed, T_BARRIER, b, 0);
        double px = (ru(h) - 0.5) * side, py = (ru(gp_mix64(h)) - 0.5) * side;
        double ang = ru(gp_mix64(h + 1)) * ROAD_PI,
               half = (0.15 + 0.25 * ru(gp_mix64(h + 2))) * side;
        bar[4 * b] = px - cos(ang) * half;
        bar[4 * b + 1] = py - sin(ang) * half;
        bar[4 * b + 2] = px + cos(ang) * half;
        bar[4 * b + 3] = py + sin(ang) * half;
    }
    {
        links_ctx lc = {c, &g, cs, NULL, bar, nbar, 0, ncs};
        pool_run((ncs + 4095) / 4096, kind_chunk, &lc);
    }
    for (uint32_t i = 0; i < ns; i++) uf[i] = i;
    for (uint64_t i = 0; i < ncs; i++)
        if (cs[i].kind < 2) uf[uf_find(uf, cs[i].a)] = uf_find(uf, cs[i].b);
    free(bar);
    /* reconnect: dropped candidates, shortest first, where they join two components */
    qsort(cs, ncs, sizeof *cs, cand_len_cmp);
    for (uint64_t i = 0; i < ncs; i++) {
        cand *e = &cs[i];
        if (e->kind < 2) continue;
        uint32_t ra = uf_find(uf, e->a), rb = uf_find(uf, e->b);
        if (ra != rb) {
            uf[ra] = rb;
            e->kind = 1;
        }
    }
    /* a candidate graph in several pieces (rare): join each piece to its nearest outsider */
    uint64_t extra = 0;
    for (uint32_t i = 0; i < ns; i++)
        if (uf_find(uf, i) != uf_find(uf, 0)) extra++;
    cand *more = NULL;
    uint64_t nmore = 0;
    if (extra) {
        more = malloc(ns * sizeof *more);
        if (!more) goto done;
        for (uint32_t i = 1; i < ns; i++) {
            uint32_t ri = uf_find(uf, i);
            if (ri == uf_find(uf, 0) || ri != i) continue; /* one join per piece, from its root */
            double bd = INFINITY;
            uint32_t bk = 0, from = i;
            for (uint32_t a = 0; a < ns; a++) {
                if (uf_find(uf, a) != ri) continue;
                for (uint32_t k = 0; k < ns; k++) {
                    if (uf_find(uf, k) == ri) continue;
                    double d = d2(&c->s[a], &c->s[k]);
                    if (d < bd) {
                        bd = d;
                        bk = k;
                        from = a;
                    }
                }
            }
            more[nmore].a = from < bk ? from : bk;
            more[nmore].b = from < bk ? bk : from;
            more[nmore].len = sqrt(bd);
            more[nmore].kind = 1;
            nmore++;
            uf[uf_find(uf, i)] = uf_find(uf, bk);
        }
    }
    /* motorways: RNG of the largest cities (settlements are sorted by size) */
    uint32_t nm = (uint32_t)round(sqrt((double)ns) / 2);
    while (nm > 0 && c->s[nm - 1].ax == 0) nm--;
    if (nm < 3) nm = 0;
    uint64_t nlinks = nmore, mw = 0;
    for (uint64_t i = 0; i < ncs; i++) nlinks += cs[i].kind < 2;
    c->l = calloc(nlinks + (uint64_t)nm * 3 + 1, sizeof *c->l);
    if (!c->l) {
        free(more);
        goto done;
    }
    qsort(cs, ncs, sizeof *cs, cand_cmp);
    for (uint64_t i = 0; i < ncs + nmore; i++) {
        const cand *e = i < ncs ? &cs[i] : &more[i - ncs];
        if (e->kind == 2) continue;
        link *L = &c->l[c->nl++];
        L->a = e->a;
        L->b = e->b;
        L->cls = e->kind == 0 ? GP_ROAD_PRIMARY : GP_ROAD_SECONDARY;
    }
    free(more);
    for (uint32_t a = 0; a < nm; a++)
        for (uint32_t b = a + 1; b < nm; b++) {
            double l2 = d2(&c->s[a], &c->s[b]);
            int ok = 1;
            for (uint32_t k = 0; k < nm && ok; k++)
                if (k != a && k != b && d2(&c->s[k], &c->s[a]) < l2 && d2(&c->s[k], &c->s[b]) < l2)
                    ok = 0;
            if (!ok) continue;
            if (mw++ >= (uint64_t)nm * 3) continue; /* planar: < 3 nm edges */
            link *L = &c->l[c->nl++];
            L->a = a;
            L->b = b;
            L->cls = GP_ROAD_MOTORWAY;
        }
    rc = 0;
done:
    bg_free(&g);
    free(cs);
    free(uf);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * emission and the CSR
 * ------------------------------------------------------------------------------------------- */

static void emit_item(void *vc, uint64_t item) {
    road_ctx *c = vc;
    item += c->first_item;
    if (item < c->ns) {
        walk(c, (uint32_t)item, c->net, NULL, NULL, NULL, NULL);
        return;
    }
    const link *L = &c->l[item - c->ns];
    gp_roadnet *o = c->net;
    double x0 = o->x[L->ga], y0 = o->y[L->ga], x1 = o->x[L->gb], y1 = o->y[L->gb];
    /* a gentle bend: a sine arch of up to 6% of the length, plus jitter */
    uint64_t h = rh(c->seed, T_SHAPE, L->a, L->b ^ (uint64_t)L->cls << 40);
    double amp = (ru(h) - 0.5) * (L->cls == GP_ROAD_MOTORWAY ? 0.04 : 0.12);
    uint32_t prev = L->ga;
    uint64_t e = L->ebase;
    for (uint64_t j = 0; j < L->shape; j++) {
        uint64_t p = L->base + j;
        double t = (double)(j + 1) / (double)(L->shape + 1);
        double side =
            amp * sin(ROAD_PI * t) + (ru(gp_mix64(h + p)) - 0.5) * 0.3 / (double)(L->shape + 1);
        o->x[p] = x0 + (x1 - x0) * t - (y1 - y0) * side;
        o->y[p] = y0 + (y1 - y0) * t + (x1 - x0) * side;
        o->eu[e] = prev;
        o->ev[e] = (uint32_t)p;
        o->ecls[e] = L->cls;
        o->edir[e++] = 3;
        prev = (uint32_t)p;
    }
    o->eu[e] = prev;
    o->ev[e] = L->gb;
    o->ecls[e] = L->cls;
    o->edir[e] = 3;
}

typedef struct conv_ctx {
    gp_roadnet *net;
    double kx, ky;
} conv_ctx;

static void to_lonlat(void *vc, uint64_t begin, uint64_t end) {
    conv_ctx *c = vc;
    for (uint64_t i = begin; i < end; i++) {
        /* to 1e-7 degrees (~1 cm), the precision of OSM files: what gpath gen --osm writes is exact */
        c->net->x[i] = round((ROAD_LON0 + c->net->x[i] * c->kx) * 1e7) / 1e7;
        c->net->y[i] = round((ROAD_LAT0 + c->net->y[i] * c->ky) * 1e7) / 1e7;
    }
}

void gp_roadnet_free(gp_roadnet *r) {
    if (!r) return;
    free(r->x);
    free(r->y);
    free(r->eu);
    free(r->ev);
    free(r->ecls);
    free(r->edir);
    free(r);
}

static int stl_cmp(const void *x, const void *y) {
    const stl *a = x, *b = y;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return a->base < b->base ? -1 : a->base > b->base;
}

static int sizes(road_ctx *c) {
    const uint64_t n = c->n;
    uint64_t settled = (uint64_t)llround(ROAD_SETTLED_FRAC * (double)n);
    /* Up to NY's size (264,346 nodes) the largest city holds ROAD_SMAX_FRAC of the settled nodes
     * and the sizes fall as 1/rank. A larger map is a country of many such regions, not one
     * ever larger city: the largest grows as sqrt(n) only (gen:24000000: ~300,000 nodes, like the
     * New York region in the USA graph) and the rank-size exponent alpha < 1 is chosen so that the
     * cities above 2 ROAD_SMIN still hold ROAD_ZIPF_SHARE of the settled nodes (bisection on the
     * integral of x^-alpha). */
    double smax_d = ROAD_SMAX_FRAC * (double)settled, alpha = 1;
    if (n > ROAD_REGION_N) {
        smax_d *= sqrt((double)ROAD_REGION_N / (double)n);
        double lo = 0.2, hi = 1;
        for (int it = 0; it < 60; it++) {
            alpha = (lo + hi) / 2;
            double k = pow(smax_d / (2 * ROAD_SMIN), 1 / alpha);
            double sum = smax_d * (1 + (pow(k, 1 - alpha) - 1) / (1 - alpha));
            if (sum > ROAD_ZIPF_SHARE * (double)settled) lo = alpha;
            else hi = alpha;
        }
    }
    uint64_t smax = (uint64_t)fmax(ROAD_SMIN, smax_d);
    uint64_t cap = 64, sum = 0;
    c->s = calloc(cap, sizeof *c->s);
    if (!c->s) return -1;
    c->ns = 0;
    while (sum < settled) {
        /* rank-size (Zipf) for the towns and cities, each size varied by up to 25%; below
         * 2 ROAD_SMIN the villages follow the Pareto law from ROAD_SMIN, up to 5 ROAD_SMIN */
        uint64_t h = rh(c->seed, T_SIZE, c->ns, 0);
        double v = (double)smax * pow(c->ns + 1, -alpha);
        if (c->ns) v *= 0.8 + 0.45 * ru(h);
        if (v < 2 * ROAD_SMIN)
            v = fmin(5 * ROAD_SMIN, ROAD_SMIN * pow(1 - ru(gp_mix64(h)), -1.0 / ROAD_PARETO));
        uint64_t s = v > (double)smax ? smax : (uint64_t)v;
        if (settled - sum < s + ROAD_SMIN) s = settled - sum; /* the last one takes the rest */
        if (c->ns == cap) {
            cap *= 2;
            stl *ns = realloc(c->s, cap * sizeof *ns);
            if (!ns) return -1;
            c->s = ns;
        }
        memset(&c->s[c->ns], 0, sizeof *c->s);
        c->s[c->ns++].size = s;
        sum += s;
    }
    if (c->ns < 2) { /* one town holds everything */
        c->ns = 1;
        c->s[0].size = n;
    }
    /* largest first (ties: draw order, kept in base until the node bases are assigned) */
    for (uint32_t i = 0; i < c->ns; i++) c->s[i].base = i;
    qsort(c->s, c->ns, sizeof *c->s, stl_cmp);
    return 0;
}

gp_roadnet *gp_roadnet_build(uint64_t n, uint64_t seed, gp_err *err) {
    if (n < 100 || n > 100000000ULL) {
        gp_err_set(err, GP_EINVAL, "gen: node count %llu is outside 100..100000000",
                   (unsigned long long)n);
        return NULL;
    }
    road_ctx c = {0};
    c.n = n;
    c.seed = seed;
    gp_roadnet *net = calloc(1, sizeof *net);
    double t0 = gp_now();
    if (!net || sizes(&c)) goto oom;
    pool_run(c.ns, plan_settlement, &c);
    for (uint32_t i = 0; i < c.ns && i < 3; i++)
        GP_LOG(GP_LOG_DEBUG,
               "gen %llu: settlement %u: %llu nodes, %u x %u arterial cells, downtown %u x %u",
               (unsigned long long)n, i, (unsigned long long)c.s[i].size, c.s[i].ax, c.s[i].ay,
               c.s[i].dt, c.s[i].dt);
    double tp = gp_now();
    double side = place(&c);
    if (side < 0) goto oom;
    double tl = gp_now();
    uint64_t next = 0;
    for (uint32_t i = 0; i < c.ns; i++) {
        c.s[i].base = next;
        next += c.s[i].size;
    }
    if (build_links(&c, side)) goto oom;
    double t1 = gp_now();
    GP_LOG(GP_LOG_DEBUG, "gen %llu: sizes and layouts %.3fs, placement %.3fs, roads %.3fs",
           (unsigned long long)n, tp - t0, tl - tp, t1 - tl);
    /* shape points of rural roads and motorways: the nodes left, by length (motorways sparser) */
    uint64_t left = n - next, edges = 0;
    double total = 0;
    for (uint32_t i = 0; i < c.nl; i++) {
        link *L = &c.l[i];
        L->ga = gate(&c, L->a, c.s[L->b].x, c.s[L->b].y);
        L->gb = gate(&c, L->b, c.s[L->a].x, c.s[L->a].y);
        L->len = sqrt(d2(&c.s[L->a], &c.s[L->b])) * (L->cls == GP_ROAD_MOTORWAY ? 0.3 : 1.0);
        total += L->len;
    }
    double acc = 0;
    uint64_t given = 0;
    for (uint32_t i = 0; i < c.nl; i++) {
        link *L = &c.l[i];
        acc += L->len;
        uint64_t upto = i + 1 == c.nl ? left : (uint64_t)floor((double)left * acc / total);
        if (upto > left) upto = left;
        L->shape = upto > given ? upto - given : 0;
        given += L->shape;
    }
    if (c.nl == 0 && left) goto bad; /* one settlement holds all n */
    for (uint32_t i = 0; i < c.ns; i++) {
        c.s[i].ebase = edges;
        /* a segment: 1 edge per shape point + 1, and 2 more with a cul-de-sac */
        edges += c.s[i].segs + (c.s[i].size - c.s[i].core) + 2 * c.s[i].cds;
    }
    for (uint32_t i = 0; i < c.nl; i++) {
        c.l[i].base = next;
        next += c.l[i].shape;
        c.l[i].ebase = edges;
        edges += c.l[i].shape + 1;
    }
    if (next != n) goto bad;
    net->n = n;
    net->ne = edges;
    net->x = malloc(n * sizeof *net->x);
    net->y = malloc(n * sizeof *net->y);
    net->eu = malloc(edges * sizeof *net->eu);
    net->ev = malloc(edges * sizeof *net->ev);
    net->ecls = malloc(edges);
    net->edir = malloc(edges);
    if (!net->x || !net->y || !net->eu || !net->ev || !net->ecls || !net->edir) goto oom;
    c.net = net;
    pool_run(c.ns, emit_item, &c); /* settlements first: roads start at their gates */
    c.first_item = c.ns;
    pool_run(c.nl, emit_item, &c);
    conv_ctx cv = {net, 180.0 / ROAD_PI / (GP_EARTH_RADIUS_M * cos(ROAD_LAT0 * ROAD_PI / 180)),
                   180.0 / ROAD_PI / GP_EARTH_RADIUS_M};
    gp_parallel_for(n, 0, to_lonlat, &cv);
    net->settlements = c.ns;
    net->links = c.nl;
    net->map_km = side / 1000;
    GP_LOG(GP_LOG_DEBUG,
           "gen %llu: %u settlements, %u roads between them, map %.0f km; plan %.3fs, emit %.3fs",
           (unsigned long long)n, c.ns, c.nl, side / 1000, t1 - t0, gp_now() - t1);
    free(c.s);
    free(c.l);
    return net;
bad:
    gp_err_set(err, GP_EINVAL, "gen: node budget mismatch for %llu nodes", (unsigned long long)n);
    free(c.s);
    free(c.l);
    gp_roadnet_free(net);
    return NULL;
oom:
    free(c.s);
    free(c.l);
    gp_roadnet_free(net);
    gp_err_set(err, GP_ENOMEM, "gen: out of memory for %llu nodes", (unsigned long long)n);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * the graph
 * ------------------------------------------------------------------------------------------- */

typedef struct csr_ctx {
    const gp_roadnet *net;
    gp_graph *g;
    uint32_t *cursor;
    double *coslat;
} csr_ctx;

static void csr_count(void *vc, uint64_t begin, uint64_t end) {
    csr_ctx *c = vc;
    for (uint64_t e = begin; e < end; e++) {
        if (c->net->edir[e] & 1)
            __atomic_fetch_add(&c->g->row[c->net->eu[e] + 1], 1, __ATOMIC_RELAXED);
        if (c->net->edir[e] & 2)
            __atomic_fetch_add(&c->g->row[c->net->ev[e] + 1], 1, __ATOMIC_RELAXED);
    }
}

static void csr_coslat(void *vc, uint64_t begin, uint64_t end) {
    csr_ctx *c = vc;
    for (uint64_t i = begin; i < end; i++) c->coslat[i] = cos(c->net->y[i] * (ROAD_PI / 180.0));
}

/* Travel time in deciseconds, haversine length with sin x ~ x (exact to ~1e-7 relative for
 * roads of ~10 km) / class speed. */
static uint32_t arc_ds(const csr_ctx *c, uint32_t a, uint32_t b, int cls) {
    const gp_roadnet *r = c->net;
    const double rad = ROAD_PI / 180.0;
    double dp = (r->y[b] - r->y[a]) * rad, dl = (r->x[b] - r->x[a]) * rad;
    double m = GP_EARTH_RADIUS_M * sqrt(dp * dp + c->coslat[a] * c->coslat[b] * dl * dl);
    long long w = llround(m / (gp_gen_class_kmh(cls) / 3.6) * 10.0);
    return w < 1 ? 1u : (uint32_t)w;
}

static void csr_fill(void *vc, uint64_t begin, uint64_t end) {
    csr_ctx *c = vc;
    const gp_roadnet *r = c->net;
    gp_graph *g = c->g;
    for (uint64_t e = begin; e < end; e++) {
        uint32_t u = r->eu[e], v = r->ev[e];
        uint32_t w = arc_ds(c, u, v, r->ecls[e]);
        if (r->edir[e] & 1) {
            uint32_t p = __atomic_fetch_add(&c->cursor[u], 1, __ATOMIC_RELAXED);
            g->col[p] = v;
            g->w[p] = w;
            g->arc_class[p] = r->ecls[e];
        }
        if (r->edir[e] & 2) {
            uint32_t p = __atomic_fetch_add(&c->cursor[v], 1, __ATOMIC_RELAXED);
            g->col[p] = u;
            g->w[p] = w;
            g->arc_class[p] = r->ecls[e];
        }
    }
}

/* Sorts each row of [begin, end) by (head, weight, class) (insertion sort: rows are short), so
 * the CSR does not depend on the order threads filled it in. */
static void csr_sort(void *vc, uint64_t begin, uint64_t end) {
    csr_ctx *c = vc;
    gp_graph *g = c->g;
    for (uint64_t u = begin; u < end; u++)
        for (uint32_t i = g->row[u] + 1; i < g->row[u + 1]; i++) {
            uint32_t col = g->col[i], w = g->w[i];
            uint8_t cls = g->arc_class[i];
            uint32_t j = i;
            while (j > g->row[u] &&
                   (g->col[j - 1] > col ||
                    (g->col[j - 1] == col &&
                     (g->w[j - 1] > w || (g->w[j - 1] == w && g->arc_class[j - 1] > cls))))) {
                g->col[j] = g->col[j - 1];
                g->w[j] = g->w[j - 1];
                g->arc_class[j] = g->arc_class[j - 1];
                j--;
            }
            g->col[j] = col;
            g->w[j] = w;
            g->arc_class[j] = cls;
        }
}

gp_graph *gp_generate_road(uint64_t n, uint64_t seed, gp_err *err) {
    gp_roadnet *net = gp_roadnet_build(n, seed, err);
    if (!net) return NULL;
    double t0 = gp_now();
    gp_graph *g = calloc(1, sizeof *g);
    csr_ctx c = {net, g, NULL, NULL};
    if (!g) goto oom;
    g->n = (uint32_t)n;
    g->scale = 1.0;
    g->row = calloc(n + 1, sizeof *g->row);
    g->ext = malloc(n * sizeof *g->ext);
    c.coslat = malloc(n * sizeof *c.coslat);
    c.cursor = malloc(n * sizeof *c.cursor);
    if (!g->row || !g->ext || !c.coslat || !c.cursor) goto oom;
    gp_parallel_for(net->ne, 0, csr_count, &c);
    for (uint64_t i = 0; i < n; i++) {
        g->ext[i] = (int64_t)i + 1;
        g->row[i + 1] += g->row[i];
    }
    g->m = g->row[n];
    g->col = malloc(((size_t)g->m + 1) * sizeof *g->col);
    g->w = malloc(((size_t)g->m + 1) * sizeof *g->w);
    g->arc_class = malloc((size_t)g->m + 1);
    if (!g->col || !g->w || !g->arc_class) goto oom;
    memcpy(c.cursor, g->row, n * sizeof *c.cursor);
    gp_parallel_for(n, 0, csr_coslat, &c);
    gp_parallel_for(net->ne, 0, csr_fill, &c);
    gp_parallel_for(n, 0, csr_sort, &c);
    free(c.cursor);
    free(c.coslat);
    g->lon = net->x; /* the roadnet's coordinates become the graph's */
    g->lat = net->y;
    net->x = net->y = NULL;
    gp_roadnet_free(net);
    GP_LOG(GP_LOG_DEBUG, "gen %llu: CSR %.3fs", (unsigned long long)n, gp_now() - t0);
    char src[64];
    snprintf(src, sizeof src, "gen:%llu:%llu", (unsigned long long)n, (unsigned long long)seed);
    gp_graph_set_unit(g, "deciseconds", 0.1);
    return gp_graph_complete(g, src, "gen", 1, err);
oom:
    free(c.cursor);
    free(c.coslat);
    if (g) {
        free(g->row);
        free(g->ext);
        free(g->col);
        free(g->w);
        free(g->arc_class);
        free(g);
    }
    gp_roadnet_free(net);
    gp_err_set(err, GP_ENOMEM, "gen: out of memory for %llu nodes", (unsigned long long)n);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * OSM XML
 * ------------------------------------------------------------------------------------------- */

int gp_write_road_osm(uint64_t n, uint64_t seed, const char *path, gp_err *err) {
    gp_roadnet *r = gp_roadnet_build(n, seed, err);
    if (!r) return err && err->code ? err->code : GP_ENOMEM;
    FILE *f = fopen(path, "w");
    if (!f) {
        gp_roadnet_free(r);
        return gp_err_set(err, GP_EIO, "%s: cannot open for writing", path);
    }
    char *buf = malloc(1 << 20);
    if (buf) setvbuf(f, buf, _IOFBF, 1 << 20);
    double minx = INFINITY, maxx = -INFINITY, miny = INFINITY, maxy = -INFINITY;
    for (uint64_t i = 0; i < n; i++) {
        minx = fmin(minx, r->x[i]);
        maxx = fmax(maxx, r->x[i]);
        miny = fmin(miny, r->y[i]);
        maxy = fmax(maxy, r->y[i]);
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<osm version=\"0.6\" generator=\"gpath gen:%llu:%llu\">\n"
            " <bounds minlat=\"%.7f\" minlon=\"%.7f\" maxlat=\"%.7f\" maxlon=\"%.7f\"/>\n",
            (unsigned long long)n, (unsigned long long)seed, miny, minx, maxy, maxx);
    for (uint64_t i = 0; i < n; i++)
        fprintf(f, " <node id=\"%llu\" version=\"1\" lat=\"%.7f\" lon=\"%.7f\"/>\n",
                (unsigned long long)i + 1, r->y[i], r->x[i]);
    /* one way per run of consecutive edges that continue each other with the same class and
     * direction (a street with its shape points, a rural road); one-way runs point along traffic */
    uint64_t way = 0;
    for (uint64_t e = 0; e < r->ne;) {
        uint64_t end = e + 1;
        while (end < r->ne && r->eu[end] == r->ev[end - 1] && r->ecls[end] == r->ecls[e] &&
               r->edir[end] == r->edir[e])
            end++;
        fprintf(f, " <way id=\"%llu\" version=\"1\">\n", (unsigned long long)++way);
        if (r->edir[e] == 2) {
            fprintf(f, "  <nd ref=\"%u\"/>\n", r->ev[end - 1] + 1);
            for (uint64_t k = end; k-- > e;) fprintf(f, "  <nd ref=\"%u\"/>\n", r->eu[k] + 1);
        } else {
            fprintf(f, "  <nd ref=\"%u\"/>\n", r->eu[e] + 1);
            for (uint64_t k = e; k < end; k++) fprintf(f, "  <nd ref=\"%u\"/>\n", r->ev[k] + 1);
        }
        /* one-way: oneway=yes; two-way motorways say oneway=no (OSM implies oneway on them) */
        const char *ow = r->edir[e] != 3                  ? "  <tag k=\"oneway\" v=\"yes\"/>\n"
                         : r->ecls[e] == GP_ROAD_MOTORWAY ? "  <tag k=\"oneway\" v=\"no\"/>\n"
                                                          : "";
        fprintf(f,
                "  <tag k=\"highway\" v=\"%s\"/>\n  <tag k=\"maxspeed\" v=\"%.0f\"/>\n%s </way>\n",
                gp_road_class_name(r->ecls[e]), gp_gen_class_kmh(r->ecls[e]), ow);
        e = end;
    }
    fprintf(f, "</osm>\n");
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    free(buf);
    gp_roadnet_free(r);
    return bad ? gp_err_set(err, GP_EIO, "%s: write failed", path) : GP_OK;
}
