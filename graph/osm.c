/* osm.c - gp_load_osm: an OpenStreetMap extract (.osm.pbf / .osm) to a routable road graph for one
 * profile (car, bicycle, foot; graph/osm_profile.c).
 *
 * Steps (each reports a progress line when opts->progress is set):
 *  1. Read (graph/osm_read.h): every node's position (16 bytes a node), the ways the profile can
 *     use (evaluated as they stream by: direction, speed, name, ref, class), blocking barrier
 *     nodes and the type=restriction relations the profile obeys.
 *  2. Split: a way node becomes a graph node when two ways share it, at a way's ends, at a
 *     blocking barrier, at a turn restriction's via node or via way end, and beside a node missing
 *     from the extract; each way becomes edges between consecutive graph nodes whose shape keeps
 *     every node in between. A closed way is cut in two at its middle shape point.
 *  3. Collapse: a graph node where exactly two edges meet, with the same name, ref, class and
 *     allowed directions, and no barrier or restriction, is folded into a shape point of one
 *     longer edge (degree-2 chains across ways), never closing an edge onto itself.
 *  4. Arcs: one per allowed direction of an edge, weighted by travel time in deciseconds
 *     (length / speed, or a ferry's tagged duration, rounded once per arc, at least 1), with its
 *     length, name, ref, class and shape. No arc leaves a blocking barrier.
 *  5. Turn restrictions (from way, a via node or one or more via ways, to way): with
 *     opts->restrictions_as_turns (turn costs on) kept as arc sequences in gp_graph.restr for the
 *     turn model (restr_records; graph/turns.c applies them); otherwise by local turn expansion
 *     (turn_expand, via_way_expand: node copies, one via way at most), so the node graph obeys
 *     them in every algorithm and backend unchanged.
 *  6. Build: gp_builder with road attributes; weights in deciseconds (unit_s 0.1), scale 1.
 * Node ids are OSM node ids; copies made for restrictions get ids below every OSM id (-1, -2, ...
 * for files with positive ids) and keep their original's id in osm_id[] and its coordinates.
 */
#include "graph/graph_internal.h"
#include "graph/osm_profile.h"
#include "graph/osm_read.h"
#include "graph/spatial.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* node flags */
#define F_PIN 1u    /* a graph node */
#define F_HARD 2u   /* never collapsed (barrier, restriction, loop cut) */
#define F_BLOCK 4u  /* blocking barrier: no arc leaves it */
#define F_NODE 8u   /* an end of an edge after the collapse */
#define F_ADDED 16u /* declared to the builder */
/* node tags the turn model charges (graph/turns.h): such a node stays a graph node (F_HARD) */
#define F_SIGNAL 32u    /* highway=traffic_signals */
#define F_STOP 64u      /* highway=stop */
#define F_GIVE_WAY 128u /* highway=give_way */

typedef struct onode {
    int64_t id;
    int32_t lon7, lat7; /* degrees * 1e7, as OSM stores them */
} onode;

typedef struct oway {
    int64_t id;
    uint64_t ref0; /* first entry in refs */
    uint32_t nref;
    uint32_t name, ref; /* offsets into the local strings (0: none) */
    uint8_t cls;
    uint8_t restricted;        /* 1: access=destination / private / ... (gp_osm_way_eval), either
                                  direction; arc_restricted() gives it per arc */
    float fwd_mps, bwd_mps;    /* 0: direction not allowed */
    float ferry_s;             /* whole-way ferry duration, < 0: none */
    uint8_t gflags;            /* GP_ARC_* bits */
    uint8_t lim[GP_LIMITS];    /* vehicle limits (gp_osm_way_limits), 0: none */
    uint32_t guide_f, guide_b; /* guidance records along / against the node order (0: none) */
} oway;

typedef struct orestr {
    int kind;         /* GP_OSM_TURN_NO / ONLY */
    int64_t from, to; /* way ids */
    char via_type;    /* 'n' or 'w' */
    int64_t via;      /* node or (first) way id */
    uint32_t nvia;    /* via ways: their ids in order are octx.rvia[via0 .. via0 + nvia) */
    uint64_t via0;
} orestr;

typedef struct oedge {
    uint32_t u, v;
    uint64_t s0; /* interior shape nodes: shp[s0 .. s0 + ns) from u to v */
    uint32_t ns;
    uint32_t way_u, way_v; /* way index at the u / v end */
    double len, tf, tb;    /* metres; seconds u->v, v->u (< 0: not allowed) */
    uint8_t wrev;          /* 1: u -> v runs against way_u's node order */
} oedge;

typedef struct octx {
    const gp_osm_profile *p;
    const char *path;
    int progress;
    double t0;
    /* nodes */
    onode *nodes;
    uint64_t nn, ncap;
    int unsorted;
    int64_t *blocked;
    uint64_t nblocked, bcap;
    int64_t *marked; /* nodes with F_SIGNAL / F_STOP / F_GIVE_WAY (in markfl) */
    uint8_t *markfl;
    uint64_t nmarked, mcap, mcap2;
    /* ways */
    oway *ways;
    uint64_t nw, wcap;
    int64_t *refs;
    uint64_t nrefs, rcap;
    char *str;
    uint64_t strlen_, strcap;
    /* relations */
    orestr *restr;
    uint64_t nr, rrcap;
    int64_t *rvia; /* via way ids of the restrictions, in relation member order */
    uint64_t nrvia, rviacap;
    uint64_t n_conditional, n_unsupported, n_ways_seen;
    /* node lookup buckets (build_buckets) */
    uint64_t *bstart, nbuckets;
    int bshift;
    const gp_load_opts *guard; /* max_bytes and the deadline, checked while reading */
    /* place nodes with a name (gp_graph.places records) */
    uint8_t *places;
    uint64_t places_len, places_cap;
} octx;

#define grow gp_grow

static void progress(const octx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const octx *c, const char *fmt, ...) {
    if (!c->progress) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[osm %7.2fs] ", gp_now() - c->t0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint32_t add_str(octx *c, const char *s) {
    if (!s || !*s) return 0;
    size_t l = strlen(s) + 1;
    if (c->strlen_ + l >= UINT32_MAX || grow((void **)&c->str, &c->strcap, c->strlen_ + l, 1))
        return UINT32_MAX;
    if (c->strlen_ == 0) c->str[c->strlen_++] = '\0';
    uint32_t off = (uint32_t)c->strlen_;
    memcpy(c->str + off, s, l);
    c->strlen_ += l;
    return off;
}

/* ---------------------------------------------------------------------------------------------
 * 1. Reading
 * ------------------------------------------------------------------------------------------- */

static int on_node(void *ctx, int64_t id, double lon, double lat, const gp_osm_tag *tags,
                   uint32_t ntags, gp_err *err) {
    octx *c = ctx;
    if (grow((void **)&c->nodes, &c->ncap, c->nn + 1, sizeof *c->nodes))
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory at node %lld", c->path, (long long)id);
    if (c->nn && id <= c->nodes[c->nn - 1].id) c->unsorted = 1;
    c->nodes[c->nn++] = (onode){id, (int32_t)lround(lon * 1e7), (int32_t)lround(lat * 1e7)};
    if (ntags && gp_osm_node_blocks(c->p, tags, ntags)) {
        if (grow((void **)&c->blocked, &c->bcap, c->nblocked + 1, sizeof *c->blocked))
            return gp_err_set(err, GP_ENOMEM, "%s: out of memory", c->path);
        c->blocked[c->nblocked++] = id;
    }
    uint8_t mk = 0;
    for (uint32_t i = 0; i < ntags; i++)
        if (strcmp(tags[i].key, "highway") == 0)
            mk = strcmp(tags[i].value, "traffic_signals") == 0 ? F_SIGNAL
                 : strcmp(tags[i].value, "stop") == 0          ? F_STOP
                 : strcmp(tags[i].value, "give_way") == 0      ? F_GIVE_WAY
                                                               : 0;
    if (mk) {
        if (grow((void **)&c->marked, &c->mcap, c->nmarked + 1, sizeof *c->marked) ||
            grow((void **)&c->markfl, &c->mcap2, c->nmarked + 1, sizeof *c->markfl))
            return gp_err_set(err, GP_ENOMEM, "%s: out of memory", c->path);
        c->marked[c->nmarked] = id;
        c->markfl[c->nmarked++] = mk;
    }
    const char *place = NULL, *name = NULL, *pop = NULL;
    for (uint32_t i = 0; i < ntags; i++) {
        if (!strcmp(tags[i].key, "place")) place = tags[i].value;
        else if (!strcmp(tags[i].key, "name")) name = tags[i].value;
        else if (!strcmp(tags[i].key, "population")) pop = tags[i].value;
    }
    int kind = place && name && *name ? gp_place_kind_of(place) : 0;
    if (kind) {
        uint64_t people = 0; /* digits only: "12 345" and "12,345" are seen in OSM */
        for (const char *q = pop; q && *q && people < UINT32_MAX; q++)
            if (*q >= '0' && *q <= '9') people = people * 10 + (uint64_t)(*q - '0');
            else if (*q != ' ' && *q != ',' && *q != '.') break;
        gp_place_rec pl = {lon, lat, people > UINT32_MAX ? UINT32_MAX : (uint32_t)people, kind,
                           name};
        if (gp_place_append(&c->places, &c->places_len, &c->places_cap, &pl))
            return gp_err_set(err, GP_ENOMEM, "%s: out of memory", c->path);
    }
    if (c->progress && c->nn % 10000000 == 0)
        progress(c, "read %llu M nodes", (unsigned long long)(c->nn / 1000000));
    return GP_OK;
}

/* Value of tag key, or NULL. */
static const char *tag_of(const gp_osm_tag *tags, uint32_t ntags, const char *key) {
    for (uint32_t i = 0; i < ntags; i++)
        if (strcmp(tags[i].key, key) == 0) return tags[i].value;
    return NULL;
}

/* Guidance flags of a way (GP_ARC_*): junction, ramps, toll, tunnel (restricted access comes
 * from the profile's evaluation, on_way). */
static unsigned way_gflags(const gp_osm_tag *tags, uint32_t ntags) {
    unsigned f = 0;
    const char *v = tag_of(tags, ntags, "junction");
    if (v && !strcmp(v, "roundabout")) f |= GP_ARC_ROUNDABOUT;
    if (v && !strcmp(v, "circular")) f |= GP_ARC_CIRCULAR;
    v = tag_of(tags, ntags, "highway");
    size_t l = v ? strlen(v) : 0;
    if (l > 5 && !strcmp(v + l - 5, "_link")) f |= GP_ARC_LINK;
    if ((v = tag_of(tags, ntags, "toll")) && !strcmp(v, "yes")) f |= GP_ARC_TOLL;
    if ((v = tag_of(tags, ntags, "tunnel")) && strcmp(v, "no")) f |= GP_ARC_TUNNEL;
    /* heavy goods vehicles (per-request vehicle_weight, engine/metric.h) */
    if ((v = tag_of(tags, ntags, "hgv")) && !strcmp(v, "no")) f |= GP_ARC_HGV_NO;
    if (v && (!strcmp(v, "destination") || !strcmp(v, "delivery") || !strcmp(v, "private")))
        f |= GP_ARC_HGV_DEST;
    return f;
}

/* The guidance record (enum gp_guide_field, GP_GUIDE_SEP between fields) of a way for one
 * direction (fwd: along its node order) in buf; "" when every field is empty. turn:lanes without
 * a direction applies to a one-way road's direction only, as in OSRM's car profile. */
static const char *way_guide(const gp_osm_tag *tags, uint32_t ntags, int fwd, int oneway, char *buf,
                             size_t cap) {
    const char *dir = fwd ? ":forward" : ":backward";
    char key[64];
    const char *f[GP_GUIDE_FIELDS] = {NULL};
    static const char *const base[2] = {"destination", "destination:ref"};
    for (int k = 0; k < 2; k++) {
        snprintf(key, sizeof key, "%s%s", base[k], dir);
        f[k] = tag_of(tags, ntags, key);
        if (!f[k]) f[k] = tag_of(tags, ntags, base[k]);
    }
    snprintf(key, sizeof key, "turn:lanes%s", dir);
    f[GP_GUIDE_LANES] = tag_of(tags, ntags, key);
    if (!f[GP_GUIDE_LANES] && oneway) f[GP_GUIDE_LANES] = tag_of(tags, ntags, "turn:lanes");
    f[GP_GUIDE_PRONUNCIATION] = tag_of(tags, ntags, "name:pronunciation");
    f[GP_GUIDE_EXITS] = tag_of(tags, ntags, "junction:ref");
    size_t at = 0;
    int any = 0;
    buf[0] = '\0';
    for (int k = 0; k < GP_GUIDE_FIELDS; k++) {
        const char *v = f[k] ? f[k] : "";
        any |= *v != 0;
        int w = snprintf(buf + at, cap - at, "%s%s", k ? "\x1f" : "", v);
        if (w < 0 || (size_t)w >= cap - at) break; /* cut: the fields that fit */
        for (int i = k ? 1 : 0; i < w; i++) /* a separator inside a value would shift fields */
            if (buf[at + i] == GP_GUIDE_SEP) buf[at + i] = ' ';
        at += (size_t)w;
    }
    if (!any) buf[0] = '\0';
    return buf;
}

static int on_way(void *ctx, int64_t id, const int64_t *refs, uint32_t nrefs,
                  const gp_osm_tag *tags, uint32_t ntags, gp_err *err) {
    octx *c = ctx;
    c->n_ways_seen++;
    if (nrefs < 2) return GP_OK;
    gp_osm_way_eval e;
    gp_osm_eval_way(c->p, tags, ntags, &e);
    if (!e.routable || (e.fwd_mps <= 0 && e.bwd_mps <= 0)) return GP_OK;
    if (grow((void **)&c->ways, &c->wcap, c->nw + 1, sizeof *c->ways) ||
        grow((void **)&c->refs, &c->rcap, c->nrefs + nrefs, sizeof *c->refs))
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory at way %lld", c->path, (long long)id);
    oway *w = &c->ways[c->nw];
    w->id = id;
    w->ref0 = c->nrefs;
    w->nref = nrefs;
    w->name = add_str(c, e.name);
    w->ref = add_str(c, e.ref);
    if (w->name == UINT32_MAX || w->ref == UINT32_MAX)
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory for names", c->path);
    w->cls = (uint8_t)e.cls;
    w->restricted = (uint8_t)(e.fwd_restricted || e.bwd_restricted);
    w->fwd_mps = (float)e.fwd_mps;
    w->bwd_mps = (float)e.bwd_mps;
    w->ferry_s = (float)e.ferry_s;
    w->gflags = (uint8_t)(way_gflags(tags, ntags) | (w->restricted ? GP_ARC_RESTRICTED : 0u));
    gp_osm_way_limits(tags, ntags, w->lim);
    char gbuf[1024];
    w->guide_f = add_str(c, way_guide(tags, ntags, 1, e.bwd_mps <= 0, gbuf, sizeof gbuf));
    w->guide_b = add_str(c, way_guide(tags, ntags, 0, e.fwd_mps <= 0, gbuf, sizeof gbuf));
    if (w->guide_f == UINT32_MAX || w->guide_b == UINT32_MAX)
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory for names", c->path);
    memcpy(c->refs + c->nrefs, refs, nrefs * sizeof *refs);
    c->nrefs += nrefs;
    c->nw++;
    return GP_OK;
}

static int on_relation(void *ctx, int64_t id, const gp_osm_member *mem, uint32_t nmem,
                       const gp_osm_tag *tags, uint32_t ntags, gp_err *err) {
    octx *c = ctx;
    int cond = 0;
    int kind = gp_osm_eval_restriction(c->p, tags, ntags, &cond);
    if (cond) c->n_conditional++;
    if (!kind) return GP_OK;
    orestr r = {kind, 0, 0, 0, 0, 0, c->nrvia};
    int nfrom = 0, nto = 0, nvn = 0, nvw = 0;
    for (uint32_t i = 0; i < nmem; i++) {
        const char *role = mem[i].role;
        if (!strcmp(role, "from") && mem[i].type == 'w') {
            r.from = mem[i].ref;
            nfrom++;
        } else if (!strcmp(role, "to") && mem[i].type == 'w') {
            r.to = mem[i].ref;
            nto++;
        } else if (!strcmp(role, "via") && (mem[i].type == 'n' || mem[i].type == 'w')) {
            if (!r.via_type) r.via = mem[i].ref;
            r.via_type = mem[i].type;
            if (mem[i].type == 'n') {
                nvn++;
                continue;
            }
            nvw++;
            if (grow((void **)&c->rvia, &c->rviacap, c->nrvia + 1, sizeof *c->rvia))
                return gp_err_set(err, GP_ENOMEM, "%s: out of memory", c->path);
            c->rvia[c->nrvia++] = mem[i].ref;
        }
    }
    r.nvia = (uint32_t)nvw;
    /* one from, one to, and one via node or one or more via ways (in order); anything else is
     * not supported */
    if (nfrom != 1 || nto != 1 || (nvn + nvw) == 0 || (nvn && (nvn > 1 || nvw))) {
        c->n_unsupported++;
        c->nrvia = r.via0;
        GP_LOG(GP_LOG_DEBUG, "%s: restriction %lld: %d from, %d via, %d to members: skipped",
               c->path, (long long)id, nfrom, nvn + nvw, nto);
        return GP_OK;
    }
    if (grow((void **)&c->restr, &c->rrcap, c->nr + 1, sizeof *c->restr))
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory", c->path);
    c->restr[c->nr++] = r;
    return GP_OK;
}

static int cmp_onode(const void *a, const void *b) {
    int64_t x = ((const onode *)a)->id, y = ((const onode *)b)->id;
    return x < y ? -1 : x > y;
}

/* Bucket index over the sorted node ids: bucket b = (id - min) >> shift holds the nodes
 * bstart[b] .. bstart[b + 1] - 1, so a lookup is a binary search over a handful of nodes instead
 * of the whole (cache-missing) array. */
static int build_buckets(octx *c) {
    if (!c->nn) return 0;
    uint64_t span = (uint64_t)(c->nodes[c->nn - 1].id - c->nodes[0].id) + 1;
    uint64_t nb = 1;
    while (nb < c->nn / 4 && nb < (1u << 24)) nb *= 2;
    int shift = 0;
    while ((span >> shift) >= nb) shift++;
    nb = (span >> shift) + 1;
    c->bstart = malloc((nb + 1) * sizeof *c->bstart);
    if (!c->bstart) return -1;
    c->bshift = shift;
    c->nbuckets = nb;
    uint64_t k = 0;
    for (uint64_t b = 0; b <= nb; b++) {
        while (k < c->nn && ((uint64_t)(c->nodes[k].id - c->nodes[0].id) >> shift) < b) k++;
        c->bstart[b] = k;
    }
    return 0;
}

/* Index of node id, GP_NONE when the extract lacks it. */
static uint32_t node_ix(const octx *c, int64_t id) {
    if (!c->nn || id < c->nodes[0].id || id > c->nodes[c->nn - 1].id) return GP_NONE;
    uint64_t b = (uint64_t)(id - c->nodes[0].id) >> c->bshift;
    uint64_t lo = c->bstart[b], hi = c->bstart[b + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (c->nodes[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->nn && c->nodes[lo].id == id ? (uint32_t)lo : GP_NONE;
}

typedef struct way_key {
    int64_t id;
    uint32_t ix;
} way_key;
static int cmp_way_key(const void *a, const void *b) {
    int64_t x = ((const way_key *)a)->id, y = ((const way_key *)b)->id;
    return x < y ? -1 : x > y;
}
static uint32_t way_ix(const way_key *k, uint64_t n, int64_t id) {
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (k[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && k[lo].id == id ? k[lo].ix : GP_NONE;
}

static inline double nlon(const octx *c, uint32_t i) { return c->nodes[i].lon7 * 1e-7; }
static inline double nlat(const octx *c, uint32_t i) { return c->nodes[i].lat7 * 1e-7; }
static inline double seg_m(const octx *c, uint32_t a, uint32_t b) {
    return gp_haversine_m(nlon(c, a), nlat(c, a), nlon(c, b), nlat(c, b));
}

/* ---------------------------------------------------------------------------------------------
 * 2-3. Edges and the degree-2 collapse
 * ------------------------------------------------------------------------------------------- */

typedef struct edges {
    oedge *e;
    uint64_t n, cap;
    uint32_t *shp;
    uint64_t ns, scap;
} edges;

static int push_edge(edges *E, const oedge *e, const uint32_t *shape) {
    if (grow((void **)&E->e, &E->cap, E->n + 1, sizeof *E->e) ||
        grow((void **)&E->shp, &E->scap, E->ns + e->ns, sizeof *E->shp))
        return -1;
    E->e[E->n] = *e;
    E->e[E->n].s0 = E->ns;
    if (e->ns) memcpy(E->shp + E->ns, shape, e->ns * sizeof *shape);
    E->ns += e->ns;
    E->n++;
    return 0;
}

/* Times of a piece of way w of length len (way length wlen). */
static void piece_times(const oway *w, double len, double wlen, double *tf, double *tb) {
    if (w->ferry_s >= 0) {
        double t = wlen > 0 ? w->ferry_s * len / wlen : w->ferry_s;
        *tf = w->fwd_mps > 0 ? t : -1;
        *tb = w->bwd_mps > 0 ? t : -1;
        return;
    }
    *tf = w->fwd_mps > 0 ? len / w->fwd_mps : -1;
    *tb = w->bwd_mps > 0 ? len / w->bwd_mps : -1;
}

/* Emits the piece pts[0..k) (node indices) of way wi as an edge; a closed piece is cut at its
 * middle shape point (flags[] marks the cut node). */
static int emit_piece(octx *c, edges *E, uint8_t *flags, uint32_t wi, const uint32_t *pts,
                      uint32_t k, double wlen) {
    if (k < 2) return 0;
    if (pts[0] == pts[k - 1]) {
        if (k < 3) return 0; /* u -> u with nothing between */
        uint32_t mid = k / 2;
        flags[pts[mid]] |= F_PIN | F_HARD;
        if (emit_piece(c, E, flags, wi, pts, mid + 1, wlen)) return -1;
        return emit_piece(c, E, flags, wi, pts + mid, k - mid, wlen);
    }
    oedge e;
    memset(&e, 0, sizeof e);
    e.u = pts[0];
    e.v = pts[k - 1];
    e.ns = k - 2;
    e.way_u = e.way_v = wi;
    for (uint32_t i = 1; i < k; i++) e.len += seg_m(c, pts[i - 1], pts[i]);
    piece_times(&c->ways[wi], e.len, wlen, &e.tf, &e.tb);
    return push_edge(E, &e, pts + 1);
}

/* Splits every way into edges at graph nodes. */
static int split_ways(octx *c, const uint32_t *wix, uint8_t *flags, edges *E) {
    uint32_t *pts = NULL;
    uint64_t pcap = 0;
    for (uint64_t wi = 0; wi < c->nw; wi++) {
        const oway *w = &c->ways[wi];
        const uint32_t *r = wix + w->ref0;
        if (grow((void **)&pts, &pcap, w->nref, sizeof *pts)) goto oom;
        double wlen = 0; /* the whole way's length: only a ferry's duration needs it */
        for (uint32_t i = 1; w->ferry_s >= 0 && i < w->nref; i++)
            if (r[i] != GP_NONE && r[i - 1] != GP_NONE) wlen += seg_m(c, r[i - 1], r[i]);
        uint32_t k = 0;
        for (uint32_t i = 0; i < w->nref; i++) {
            uint32_t x = r[i];
            if (x == GP_NONE) { /* gap: the piece so far ends (its end was pinned) */
                if (emit_piece(c, E, flags, (uint32_t)wi, pts, k, wlen)) goto oom;
                k = 0;
                continue;
            }
            if (k && pts[k - 1] == x) continue; /* repeated node */
            pts[k++] = x;
            if (k > 1 && (flags[x] & F_PIN)) {
                if (emit_piece(c, E, flags, (uint32_t)wi, pts, k, wlen)) goto oom;
                pts[0] = x;
                k = 1;
            }
        }
        if (emit_piece(c, E, flags, (uint32_t)wi, pts, k, wlen)) goto oom;
    }
    free(pts);
    return 0;
oom:
    free(pts);
    return -1;
}

/* Directions of edge e seen leaving node x: *out allowed away from x, *in allowed into x. */
static void dirs_from(const oedge *e, uint32_t x, int *out, int *in) {
    if (e->u == x) {
        *out = e->tf >= 0;
        *in = e->tb >= 0;
    } else {
        *out = e->tb >= 0;
        *in = e->tf >= 0;
    }
}

static const char *way_str(const octx *c, uint32_t off) { return c->str ? c->str + off : ""; }

/* Edges a and b (meeting at x) carry the same attributes: name, ref, class, guidance flags (a
 * roundabout's nodes where a road joins stay nodes) and guidance records for each direction of
 * travel through x. Edges here are still pieces of one way each, u -> v in its node order. */
static int same_attrs(const octx *c, const oedge *a, const oedge *b, uint32_t x) {
    const oway *wa = &c->ways[a->way_u], *wb = &c->ways[b->way_u];
    if (wa->cls != wb->cls || wa->gflags != wb->gflags || wa->restricted != wb->restricted ||
        memcmp(wa->lim, wb->lim, GP_LIMITS) || strcmp(way_str(c, wa->name), way_str(c, wb->name)) ||
        strcmp(way_str(c, wa->ref), way_str(c, wb->ref)))
        return 0;
    /* travelling a -> x -> b: a along its way when it ends at x, b when it starts there */
    int af = a->v == x, bf = b->u == x;
    uint32_t a1 = af ? wa->guide_f : wa->guide_b, a2 = af ? wa->guide_b : wa->guide_f;
    uint32_t b1 = bf ? wb->guide_f : wb->guide_b, b2 = bf ? wb->guide_b : wb->guide_f;
    return strcmp(way_str(c, a1), way_str(c, b1)) == 0 &&
           strcmp(way_str(c, a2), way_str(c, b2)) == 0;
}

/* Folds degree-2 graph nodes into shape points: edges E in, merged edges out. */
static int collapse(octx *c, uint8_t *flags, edges *E, edges *out) {
    const uint64_t nn = c->nn;
    uint8_t *deg = calloc(nn ? nn : 1, 1);
    uint32_t *at = malloc((nn ? nn : 1) * 2 * sizeof *at);
    uint8_t *used = calloc(E->n ? E->n : 1, 1);
    uint32_t *chain = NULL, *shape = NULL;
    uint8_t *crev = NULL;
    uint64_t ccap = 0, scap = 0, rcap = 0;
    if (!deg || !at || !used) goto oom;
    for (uint64_t i = 0; i < E->n; i++) {
        uint32_t ends[2] = {E->e[i].u, E->e[i].v};
        for (int k = 0; k < 2; k++) {
            uint32_t x = ends[k];
            if (deg[x] < 2) at[2 * (uint64_t)x + deg[x]] = (uint32_t)i;
            if (deg[x] < 255) deg[x]++;
        }
    }
    /* mergeable: exactly two edge ends, not hard, both edges alike in attributes and directions */
    for (uint64_t x = 0; x < nn; x++) {
        if (deg[x] != 2 || (flags[x] & F_HARD)) {
            if (deg[x] == 2) deg[x] = 3; /* not mergeable */
            continue;
        }
        const oedge *a = &E->e[at[2 * x]], *b = &E->e[at[2 * x + 1]];
        int ao, ai, bo, bi;
        dirs_from(a, (uint32_t)x, &ao, &ai);
        dirs_from(b, (uint32_t)x, &bo, &bi);
        /* travelling a -> x -> b needs "into x" on a to match "out of x" on b, and back */
        if (at[2 * x] == at[2 * x + 1] || ai != bo || bi != ao || !same_attrs(c, a, b, (uint32_t)x))
            deg[x] = 3;
    }
#define MERGEABLE(x) (deg[x] == 2)
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t i = 0; i < E->n; i++) {
            if (used[i]) continue;
            const oedge *e0 = &E->e[i];
            uint32_t start;
            if (!MERGEABLE(e0->u)) start = e0->u;
            else if (!MERGEABLE(e0->v)) start = e0->v;
            else if (pass == 1) start = e0->u; /* a ring of mergeable nodes: cut it at u */
            else continue;
            /* walk from start along e0 through mergeable nodes */
            uint64_t k = 0;
            uint32_t cur = (uint32_t)i, x = start;
            for (;;) {
                if (grow((void **)&chain, &ccap, k + 1, sizeof *chain) ||
                    grow((void **)&crev, &rcap, k + 1, 1))
                    goto oom;
                const oedge *e = &E->e[cur];
                chain[k] = cur;
                crev[k] = e->u != x;
                k++;
                used[cur] = 1;
                x = crev[k - 1] ? e->u : e->v;
                if (!MERGEABLE(x) || x == start) break;
                const uint32_t *two = at + 2 * (uint64_t)x;
                uint32_t nx = two[0] == cur ? two[1] : two[0];
                if (used[nx]) break;
                cur = nx;
            }
            /* never close onto itself: the last edge of a loop stays separate */
            uint64_t parts[2] = {k, 0};
            if (x == start && k >= 2) {
                parts[0] = k - 1;
                parts[1] = 1;
            }
            uint64_t off = 0;
            for (int pi = 0; pi < 2 && parts[pi]; pi++) {
                uint64_t len = parts[pi];
                oedge m;
                memset(&m, 0, sizeof m);
                uint64_t ns = 0;
                for (uint64_t j = off; j < off + len; j++) {
                    const oedge *e = &E->e[chain[j]];
                    int rv = crev[j];
                    if (grow((void **)&shape, &scap, ns + e->ns + 1, sizeof *shape)) goto oom;
                    if (j > off) shape[ns++] = rv ? e->v : e->u; /* the folded node */
                    for (uint32_t s = 0; s < e->ns; s++)
                        shape[ns++] = E->shp[e->s0 + (rv ? e->ns - 1 - s : s)];
                    double tf = rv ? e->tb : e->tf, tb = rv ? e->tf : e->tb;
                    if (j == off) {
                        m.u = rv ? e->v : e->u;
                        m.way_u = rv ? e->way_v : e->way_u;
                        m.wrev = (uint8_t)(rv ^ e->wrev);
                        m.tf = tf;
                        m.tb = tb;
                    } else {
                        m.tf = m.tf >= 0 && tf >= 0 ? m.tf + tf : -1;
                        m.tb = m.tb >= 0 && tb >= 0 ? m.tb + tb : -1;
                    }
                    m.v = rv ? e->u : e->v;
                    m.way_v = rv ? e->way_u : e->way_v;
                    m.len += e->len;
                }
                m.ns = (uint32_t)ns;
                if (push_edge(out, &m, shape)) goto oom;
                off += len;
            }
        }
    }
#undef MERGEABLE
    int rc = 0;
    if (0) {
    oom:
        rc = -1;
    }
    free(deg);
    free(at);
    free(used);
    free(chain);
    free(crev);
    free(shape);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * 4-5. Arcs and turn restrictions
 * ------------------------------------------------------------------------------------------- */

typedef struct oarc {
    uint32_t tail, head; /* node indices; >= nn: copies (nn + k) */
    uint32_t edge;
    uint8_t rev;   /* 1: the edge's v -> u */
    uint32_t w;    /* deciseconds */
    uint32_t orig; /* the arc this one duplicates (itself for originals) */
} oarc;

typedef struct arcs {
    oarc *a;
    uint64_t n, cap;
} arcs;

static int push_arc(arcs *A, oarc a) {
    if (A->n >= UINT32_MAX - 1 || grow((void **)&A->a, &A->cap, A->n + 1, sizeof *A->a)) return -1;
    A->a[A->n++] = a;
    return 0;
}

static uint32_t ds_of(double s) {
    double d = floor(s * 10.0 + 0.5);
    if (d < 1) d = 1;
    if (d > 4e9) d = 4e9;
    return (uint32_t)d;
}

/* way index at the head / tail end of an arc */
static inline uint32_t arc_head_way(const edges *E, const oarc *a) {
    const oedge *e = &E->e[a->edge];
    return a->rev ? e->way_u : e->way_v;
}
static inline uint32_t arc_tail_way(const edges *E, const oarc *a) {
    const oedge *e = &E->e[a->edge];
    return a->rev ? e->way_v : e->way_u;
}

/* 1 when arc a runs on a restricted way (car: access=private / delivery / destination /
 * customers, hov=designated): OSRM keeps such ways routable but puts max_turn_weight on a turn
 * from an unrestricted way into a restricted one, so they carry no through traffic. The degree-2
 * collapse never merges restricted with unrestricted pieces, so the bit holds for a whole arc.
 * The turn model (graph/turns.c) reads it; without turn costs it is recorded and unused. */
static inline int arc_restricted(const octx *c, const edges *E, const oarc *a) {
    return c->ways[arc_tail_way(E, a)].restricted != 0;
}

typedef struct copy_rec {
    uint32_t of;   /* the original node index */
    uint8_t added; /* declared to the builder */
} copy_rec;

/* Turn expansion for via-node restrictions. For a via node x, every in-arc coming off a
 * restriction's from way (a "restricted entry") is redirected to a copy of x made for it; the
 * copy has x's position and OSM id and a duplicate of each of x's out-arcs that the entry's
 * restrictions allow (no_*: all but those onto the to way; only_*: only those). x itself keeps
 * its unrestricted in-arcs and every out-arc, so routes starting at x are not limited, and a
 * route reaches x over any entry it may use. Duplicated arcs that are themselves restricted
 * entries of another via node lead to that node's copy for the arc they duplicate. Returns the
 * number of copies made, or -1 on OOM. */
typedef struct via_req {
    uint32_t x, from_way, to_way;
    int kind;
} via_req;
static int cmp_via(const void *a, const void *b) {
    const via_req *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x;
}

static int64_t turn_expand(octx *c, const edges *E, arcs *A, const way_key *wk, uint64_t nwk,
                           copy_rec **copies_out, uint64_t *nrestr_applied) {
    const uint64_t nn = c->nn;
    via_req *req = NULL;
    uint64_t nreq = 0, rcap = 0;
    for (uint64_t i = 0; i < c->nr; i++) {
        const orestr *r = &c->restr[i];
        if (r->via_type != 'n') continue; /* via ways: via_way_expand */
        uint32_t x = node_ix(c, r->via), fw = way_ix(wk, nwk, r->from), tw = way_ix(wk, nwk, r->to);
        if (x == GP_NONE || fw == GP_NONE || tw == GP_NONE) continue; /* not routable here */
        if (grow((void **)&req, &rcap, nreq + 1, sizeof *req)) return -1;
        req[nreq++] = (via_req){x, fw, tw, r->kind};
    }
    *copies_out = NULL;
    if (!nreq) {
        free(req);
        return 0;
    }
    qsort(req, nreq, sizeof *req, cmp_via);
    /* in / out arc lists of the via nodes only: a mark per node, then one scan of the arcs */
    uint32_t *slot = malloc(nn * sizeof *slot); /* via node -> index into vias */
    uint64_t nvia = 0;
    if (!slot) goto oom;
    memset(slot, 0xff, nn * sizeof *slot);
    for (uint64_t i = 0; i < nreq; i++)
        if (slot[req[i].x] == GP_NONE) slot[req[i].x] = (uint32_t)nvia++;
    uint32_t *ioff = calloc(nvia + 1, sizeof *ioff), *ooff = calloc(nvia + 1, sizeof *ooff);
    if (!ioff || !ooff) goto oom2;
    const uint64_t m0 = A->n;
    for (uint64_t i = 0; i < m0; i++) {
        if (slot[A->a[i].head] != GP_NONE) ioff[slot[A->a[i].head] + 1]++;
        if (slot[A->a[i].tail] != GP_NONE) ooff[slot[A->a[i].tail] + 1]++;
    }
    for (uint64_t v = 0; v < nvia; v++) {
        ioff[v + 1] += ioff[v];
        ooff[v + 1] += ooff[v];
    }
    uint32_t *ins = malloc((ioff[nvia] + 1) * sizeof *ins);
    uint32_t *outs = malloc((ooff[nvia] + 1) * sizeof *outs);
    uint32_t *ic = malloc((nvia + 1) * sizeof *ic), *oc = malloc((nvia + 1) * sizeof *oc);
    uint32_t *redirect = malloc(m0 * sizeof *redirect);
    copy_rec *copies = NULL;
    uint64_t ncopies = 0, ccap = 0;
    uint8_t *forbid = NULL;
    uint64_t fcap = 0;
    if (!ins || !outs || !ic || !oc || !redirect) goto oom3;
    memcpy(ic, ioff, nvia * sizeof *ic);
    memcpy(oc, ooff, nvia * sizeof *oc);
    for (uint64_t i = 0; i < m0; i++) {
        if (slot[A->a[i].head] != GP_NONE) ins[ic[slot[A->a[i].head]]++] = (uint32_t)i;
        if (slot[A->a[i].tail] != GP_NONE) outs[oc[slot[A->a[i].tail]]++] = (uint32_t)i;
    }
    memset(redirect, 0xff, m0 * sizeof *redirect);
    uint64_t applied = 0;
    for (uint64_t r0 = 0; r0 < nreq;) {
        uint64_t r1 = r0;
        while (r1 < nreq && req[r1].x == req[r0].x) r1++;
        uint32_t x = req[r0].x, sv = slot[x];
        const uint32_t *in = ins + ioff[sv], *out = outs + ooff[sv];
        uint32_t nin = ioff[sv + 1] - ioff[sv], nout = ooff[sv + 1] - ooff[sv];
        if (grow((void **)&forbid, &fcap, nout ? nout : 1, 1)) goto oom3;
        for (uint32_t a = 0; a < nin; a++) {
            uint32_t ai = in[a];
            uint32_t hw = arc_head_way(E, &A->a[ai]);
            memset(forbid, 0, nout ? nout : 1);
            int any = 0;
            for (uint64_t r = r0; r < r1; r++) {
                if (req[r].from_way != hw) continue;
                any = 1;
                applied++;
                /* from and to the same way (no_u_turn): only turning back onto the arc's own
                 * tail is the maneuver; going on along a way that passes x stays allowed */
                int uturn = req[r].from_way == req[r].to_way;
                for (uint32_t o = 0; o < nout; o++) {
                    const oarc *oa = &A->a[out[o]];
                    int onto = arc_tail_way(E, oa) == req[r].to_way &&
                               (!uturn || oa->head == A->a[ai].tail);
                    if (req[r].kind == GP_OSM_TURN_NO ? onto : !onto) forbid[o] = 1;
                }
            }
            if (!any) continue;
            /* a copy of x for this entry, with the allowed out-arcs */
            if (grow((void **)&copies, &ccap, ncopies + 1, sizeof *copies)) goto oom3;
            uint32_t cx = (uint32_t)(nn + ncopies);
            copies[ncopies++] = (copy_rec){x, 0};
            redirect[ai] = cx;
            for (uint32_t o = 0; o < nout; o++) {
                if (forbid[o]) continue;
                oarc d = A->a[out[o]];
                d.tail = cx;
                d.orig = out[o];
                if (push_arc(A, d)) goto oom3;
            }
        }
        r0 = r1;
    }
    /* entries (originals and their duplicates) lead to the copies made for them */
    for (uint64_t i = 0; i < A->n; i++) {
        uint32_t o = A->a[i].orig;
        if (o < m0 && redirect[o] != GP_NONE) A->a[i].head = redirect[o];
    }
    *nrestr_applied = applied;
    free(req);
    free(slot);
    free(ioff);
    free(ooff);
    free(ins);
    free(outs);
    free(ic);
    free(oc);
    free(redirect);
    free(forbid);
    *copies_out = copies;
    return (int64_t)ncopies;
oom3:
    free(ins);
    free(outs);
    free(ic);
    free(oc);
    free(redirect);
    free(copies);
    free(forbid);
oom2:
    free(ioff);
    free(ooff);
oom:
    free(slot);
    free(req);
    return -1;
}

/* Turn expansion for via-way restrictions (from way F, via way W, to way T): the graph nodes
 * along W, g0 .. gk from F's end to T's end, are copied once for the restriction; entries from F
 * into g0 lead to the copy of g0, each copy keeps its original's out-arcs with the arc along W
 * leading to the next copy instead, and the last copy's out-arcs are filtered as a via node's
 * would be (no_*: not onto T; only_*: only onto T). Leaving W early stays allowed. Restrictions
 * whose ways do not meet end to end, or whose via way cannot be driven from F to T, change
 * nothing (counted as unsupported / moot). Entries already redirected to a via-node copy are
 * not expanded again. Returns the copies added, -1 on OOM. */
static int64_t via_way_expand(octx *c, const edges *E, arcs *A, const way_key *wk, uint64_t nwk,
                              const uint32_t *wix, const uint8_t *flags, copy_rec **copies,
                              uint64_t *ncopies, uint64_t *applied) {
    uint64_t nvw = 0;
    for (uint64_t i = 0; i < c->nr; i++) nvw += c->restr[i].via_type == 'w';
    if (!nvw) return 0;
    const uint64_t nn = c->nn, m0 = A->n, N = nn + *ncopies;
    uint32_t *off = calloc(N + 1, sizeof *off), *adj = malloc((m0 ? m0 : 1) * sizeof *adj);
    uint32_t *seq = NULL, *path = NULL, *cur = NULL;
    uint64_t seqcap = 0, pcap = 0, ccap = *ncopies;
    int64_t added = 0;
    if (!off || !adj) goto oom;
    for (uint64_t i = 0; i < m0; i++) off[A->a[i].tail + 1]++;
    for (uint64_t v = 0; v < N; v++) off[v + 1] += off[v];
    cur = malloc((N ? N : 1) * sizeof *cur);
    if (!cur) goto oom;
    memcpy(cur, off, N * sizeof *cur);
    for (uint64_t i = 0; i < m0; i++) adj[cur[A->a[i].tail]++] = (uint32_t)i;
    for (uint64_t ri = 0; ri < c->nr; ri++) {
        const orestr *r = &c->restr[ri];
        if (r->via_type != 'w') continue;
        if (r->nvia != 1) { /* several via ways: the turn model only (restr_records) */
            c->n_unsupported++;
            continue;
        }
        uint32_t F = way_ix(wk, nwk, r->from), W = way_ix(wk, nwk, r->via),
                 T = way_ix(wk, nwk, r->to);
        if (F == GP_NONE || W == GP_NONE || T == GP_NONE) continue; /* not routable here */
        const uint32_t *wr = wix + c->ways[W].ref0, *fr = wix + c->ways[F].ref0,
                       *tr = wix + c->ways[T].ref0;
        uint32_t wn = c->ways[W].nref, fn = c->ways[F].nref, tn = c->ways[T].nref;
        if (grow((void **)&seq, &seqcap, wn, sizeof *seq)) goto oom;
        uint32_t k = 0;
        int gap = 0;
        for (uint32_t i = 0; i < wn; i++) {
            if (wr[i] == GP_NONE) gap = 1;
            else if ((flags[wr[i]] & F_NODE) && (!k || seq[k - 1] != wr[i])) seq[k++] = wr[i];
        }
#define IS_END(x, r, n) ((x) == (r)[0] || (x) == (r)[(n)-1])
        if (!gap && k >= 2 && !(IS_END(seq[0], fr, fn) && IS_END(seq[k - 1], tr, tn))) {
            for (uint32_t i = 0; i < k / 2; i++) { /* F may meet W at its last node */
                uint32_t t = seq[i];
                seq[i] = seq[k - 1 - i];
                seq[k - 1 - i] = t;
            }
        }
        if (gap || k < 2 || !IS_END(seq[0], fr, fn) || !IS_END(seq[k - 1], tr, tn)) {
            c->n_unsupported++;
            continue;
        }
#undef IS_END
        /* the arcs along W from seq[0] to seq[k-1] */
        if (grow((void **)&path, &pcap, k, sizeof *path)) goto oom;
        uint32_t i;
        for (i = 0; i + 1 < k; i++) {
            path[i] = GP_NONE;
            for (uint32_t j = off[seq[i]]; j < off[seq[i] + 1]; j++) {
                const oarc *a = &A->a[adj[j]];
                if (a->head == seq[i + 1] && arc_tail_way(E, a) == W) path[i] = adj[j];
            }
            if (path[i] == GP_NONE) break;
        }
        if (i + 1 < k) continue; /* W cannot be driven from F towards T: nothing to forbid */
        /* copies g0' .. gk' */
        uint32_t first = (uint32_t)(nn + *ncopies);
        if (grow((void **)copies, &ccap, *ncopies + k, sizeof **copies)) goto oom;
        for (i = 0; i < k; i++) (*copies)[(*ncopies)++] = (copy_rec){seq[i], 0};
        added += k;
        for (i = 0; i < k; i++) {
            for (uint32_t j = off[seq[i]]; j < off[seq[i] + 1]; j++) {
                oarc d = A->a[adj[j]];
                d.tail = first + i;
                d.orig = adj[j];
                if (i + 1 < k) {
                    if (adj[j] == path[i]) d.head = first + i + 1;
                } else {
                    int onto = arc_tail_way(E, &A->a[adj[j]]) == T;
                    if (r->kind == GP_OSM_TURN_NO ? onto : !onto) continue;
                }
                if (push_arc(A, d)) goto oom;
            }
        }
        /* entries from F into g0 (not from W itself) lead to g0' */
        for (uint64_t j = 0; j < m0; j++) {
            oarc *a = &A->a[j];
            if (a->head == seq[0] && arc_head_way(E, a) == F && arc_tail_way(E, a) != W) {
                a->head = first;
                (*applied)++;
            }
        }
    }
    free(off);
    free(adj);
    free(cur);
    free(seq);
    free(path);
    return added;
oom:
    free(off);
    free(adj);
    free(cur);
    free(seq);
    free(path);
    return -1;
}

/* Turn restrictions as records for the turn model (gp_graph.restr, graph/turns.h), no node
 * copies: per restriction and per pair of a from arc and a to arc, [kind, k, from arc, via path
 * arcs..., to arc] in loader arc indices (the builder's insertion indices) appended to *out.
 * Via node x: from arcs are x's in-arcs off the from way, to arcs its out-arcs onto the to way
 * (from == to: only the one back onto the from arc's tail). Via ways W1 .. Wj (relation order):
 * the graph nodes along each, chained end to end from an end of the from way to an end of the
 * to way; the path is the arcs along them (each driven in that direction), the from arcs the
 * in-arcs of the first node off the from way (not along W1), the to arcs the out-arcs of the
 * last node onto the to way. Ways that do not meet end to end are counted unsupported; a via
 * path that cannot be driven, or an only_* with no to arc, changes nothing. -1: out of memory. */
static int restr_records(octx *c, const edges *E, const arcs *A, const way_key *wk, uint64_t nwk,
                         const uint32_t *wix, const uint8_t *flags, uint64_t **out, uint64_t *nout,
                         uint64_t *applied) {
    const uint64_t nn = c->nn, m = A->n;
    uint32_t *off = calloc(nn + 1, sizeof *off), *roff = calloc(nn + 1, sizeof *roff);
    uint32_t *adj = malloc((m ? m : 1) * sizeof *adj), *radj = malloc((m ? m : 1) * sizeof *radj);
    uint32_t *cur = malloc((nn ? nn : 1) * sizeof *cur),
             *rcur = malloc((nn ? nn : 1) * sizeof *cur);
    uint32_t *seq = NULL, *path = NULL, *tos = NULL;
    uint64_t seqcap = 0, pcap = 0, tcap = 0, ocap = *nout;
    int rc = -1;
    if (!off || !roff || !adj || !radj || !cur || !rcur) goto done;
    for (uint64_t i = 0; i < m; i++) {
        off[A->a[i].tail + 1]++;
        roff[A->a[i].head + 1]++;
    }
    for (uint64_t v = 0; v < nn; v++) {
        off[v + 1] += off[v];
        roff[v + 1] += roff[v];
    }
    memcpy(cur, off, nn * sizeof *cur);
    memcpy(rcur, roff, nn * sizeof *rcur);
    for (uint64_t i = 0; i < m; i++) {
        adj[cur[A->a[i].tail]++] = (uint32_t)i;
        radj[rcur[A->a[i].head]++] = (uint32_t)i;
    }
    for (uint64_t ri = 0; ri < c->nr; ri++) {
        const orestr *r = &c->restr[ri];
        uint32_t F = way_ix(wk, nwk, r->from), T = way_ix(wk, nwk, r->to);
        if (F == GP_NONE || T == GP_NONE) continue; /* not routable here */
        uint32_t k = 0, np = 0, W1 = GP_NONE;
        if (r->via_type == 'n') {
            uint32_t x = node_ix(c, r->via);
            if (x == GP_NONE || !(flags[x] & F_NODE)) continue;
            if (grow((void **)&seq, &seqcap, 1, sizeof *seq)) goto done;
            seq[k++] = x;
        } else {
            /* the graph nodes along each via way, chained end to end from F to T */
            const uint32_t *fr = wix + c->ways[F].ref0, *tr = wix + c->ways[T].ref0;
            uint32_t fn = c->ways[F].nref, tn = c->ways[T].nref;
            int bad = 0;
            for (uint32_t vi = 0; vi < r->nvia && !bad; vi++) {
                uint32_t W = way_ix(wk, nwk, c->rvia[r->via0 + vi]);
                if (W == GP_NONE) {
                    bad = 2; /* not routable here */
                    break;
                }
                if (!vi) W1 = W;
                const uint32_t *wr = wix + c->ways[W].ref0;
                uint32_t wn = c->ways[W].nref, k0 = k;
                if (grow((void **)&seq, &seqcap, k + wn, sizeof *seq)) goto done;
                for (uint32_t i = 0; i < wn && !bad; i++) {
                    if (wr[i] == GP_NONE) bad = 1;
                    else if ((flags[wr[i]] & F_NODE) && (k == k0 || seq[k - 1] != wr[i]))
                        seq[k++] = wr[i];
                }
                if (bad || k - k0 < 2) {
                    bad = 1;
                    break;
                }
#define IS_END(x, rr, n) ((x) == (rr)[0] || (x) == (rr)[(n)-1])
                /* this way runs from the previous one's end (or an end of F) */
                int fwd = vi ? seq[k0] == seq[k0 - 1] : IS_END(seq[k0], fr, fn);
                int bwd = vi ? seq[k - 1] == seq[k0 - 1] : IS_END(seq[k - 1], fr, fn);
                if (fwd && bwd && !vi && r->nvia == 1) fwd = IS_END(seq[k - 1], tr, tn);
                if (!fwd && !bwd) {
                    bad = 1;
                    break;
                }
                if (!fwd)
                    for (uint32_t i = 0; i < (k - k0) / 2; i++) {
                        uint32_t t = seq[k0 + i];
                        seq[k0 + i] = seq[k - 1 - i];
                        seq[k - 1 - i] = t;
                    }
                if (vi) { /* the shared end once */
                    memmove(seq + k0, seq + k0 + 1, (k - k0 - 1) * sizeof *seq);
                    k--;
                }
                /* the arcs along W, in this direction */
                if (grow((void **)&path, &pcap, k, sizeof *path)) goto done;
                for (uint32_t i = vi ? k0 - 1 : k0; i + 1 < k && !bad; i++) {
                    path[np] = GP_NONE;
                    for (uint32_t j = off[seq[i]]; j < off[seq[i] + 1]; j++)
                        if (A->a[adj[j]].head == seq[i + 1] && arc_tail_way(E, &A->a[adj[j]]) == W)
                            path[np] = adj[j];
                    if (path[np++] == GP_NONE) bad = 3; /* W cannot be driven this way */
                }
            }
            if (!bad && !IS_END(seq[k - 1], tr, tn)) bad = 1;
#undef IS_END
            if (bad == 1) c->n_unsupported++;
            if (bad) continue;
        }
        uint32_t x0 = seq[0], xl = seq[k - 1];
        for (uint32_t j = roff[x0]; j < roff[x0 + 1]; j++) {
            const oarc *fa = &A->a[radj[j]];
            if (arc_head_way(E, fa) != F || (np && arc_tail_way(E, fa) == W1)) continue;
            if (np && fa->tail == seq[1]) continue; /* back along the via way */
            uint32_t nt = 0;
            for (uint32_t q = off[xl]; q < off[xl + 1]; q++) {
                const oarc *oa = &A->a[adj[q]];
                if (arc_tail_way(E, oa) != T) continue;
                /* from and to the same way (no_u_turn): only turning back onto the arc's own
                 * tail is the maneuver; going on along a way that passes x stays allowed */
                if (!np && F == T && oa->head != fa->tail) continue;
                if (grow((void **)&tos, &tcap, nt + 1, sizeof *tos)) goto done;
                tos[nt++] = adj[q];
            }
            if (!nt) continue; /* nothing to forbid, or an only_* that cannot be obeyed */
            (*applied)++;
            for (uint32_t q = 0; q < nt; q++) {
                if (grow((void **)out, &ocap, *nout + 4 + np, sizeof **out)) goto done;
                uint64_t *o = *out + *nout;
                o[0] = r->kind == GP_OSM_TURN_NO ? GP_RESTR_NO : GP_RESTR_ONLY;
                o[1] = 2 + np;
                o[2] = radj[j];
                for (uint32_t i = 0; i < np; i++) o[3 + i] = path[i];
                o[3 + np] = tos[q];
                *nout += 4 + np;
            }
        }
    }
    rc = 0;
done:
    free(off);
    free(roff);
    free(adj);
    free(radj);
    free(cur);
    free(rcur);
    free(seq);
    free(path);
    free(tos);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The loader
 * ------------------------------------------------------------------------------------------- */

static void octx_free(octx *c) {
    if (!c) return;
    free(c->nodes);
    free(c->blocked);
    free(c->marked);
    free(c->markfl);
    free(c->ways);
    free(c->refs);
    free(c->str);
    free(c->restr);
    free(c->rvia);
    free(c->bstart);
    free(c->places);
}

/* Splits "PATH?profile=NAME" into the path (copied to buf) and the profile name (or NULL). */
static int split_spec(const char *spec, char *buf, size_t cap, const char **profile, gp_err *err) {
    const char *q = strstr(spec, "?profile=");
    size_t l = q ? (size_t)(q - spec) : strlen(spec);
    if (l + 1 > cap) return gp_err_set(err, GP_EINVAL, "osm: path too long");
    memcpy(buf, spec, l);
    buf[l] = '\0';
    *profile = q ? q + 9 : NULL;
    return GP_OK;
}

/* The decoded size of the input against max_graph_bytes (the file's own size was checked before
 * the read: a 611 KB .osm.gz inflated to 600 MB), and the load deadline, after every block. */
static int on_decoded(void *ctx, uint64_t bytes, gp_err *err) {
    const octx *c = ctx;
    const gp_load_opts *o = c->guard;
    if (o && o->max_bytes && bytes > o->max_bytes)
        return gp_err_set(err, GP_ETOOBIG,
                          "%s: the OSM data decodes to more than max_graph_bytes = %llu bytes "
                          "(%llu decoded so far)",
                          c->path, (unsigned long long)o->max_bytes, (unsigned long long)bytes);
    return gp_load_check_time(o, err);
}

gp_graph *gp_load_osm(const char *spec, const gp_load_opts *o, gp_err *err) {
    static const gp_load_opts defaults = {0};
    if (!o) o = &defaults;
    char path[1024];
    const char *pname = NULL;
    if (split_spec(spec, path, sizeof path, &pname, err)) return NULL;
    if (!pname) pname = o->profile && *o->profile ? o->profile : "car";
    const gp_osm_profile *prof = gp_osm_profile_find(pname);
    if (!prof) {
        gp_err_set(err, GP_EINVAL, "%s: unknown profile '%s' (expected %s)", path, pname,
                   gp_osm_profile_names());
        return NULL;
    }
    if (gp_osm_profile_check(prof, err)) return NULL; /* a rule that cannot be applied */
    octx c;
    memset(&c, 0, sizeof c);
    c.p = prof;
    c.path = path;
    c.progress = o->progress;
    c.t0 = gp_now();
    gp_builder *b = NULL;
    uint32_t *wix = NULL;
    uint8_t *flags = NULL;
    way_key *wk = NULL;
    edges E0, E;
    arcs A;
    copy_rec *copies = NULL;
    uint64_t *rrec = NULL; /* turn restriction records (restr_records) */
    memset(&E0, 0, sizeof E0);
    memset(&E, 0, sizeof E);
    memset(&A, 0, sizeof A);
    double *slon = NULL, *slat = NULL;
    int64_t *sid = NULL; /* the shape points' OSM node ids (annotations=nodes lists them) */
    uint64_t shcap = 0, shcap2 = 0, shcap3 = 0;

    /* 1. read */
    c.guard = o;
    gp_osm_callbacks cb = {&c, on_node, on_way, on_relation, on_decoded};
    if (gp_osm_read(path, &cb, err)) goto fail;
    double tr = gp_now() - c.t0;
    progress(&c,
             "read %llu nodes, %llu ways (%llu routable for %s), %llu restrictions in %.2f s "
             "(%.0f k objects/s)",
             (unsigned long long)c.nn, (unsigned long long)c.n_ways_seen, (unsigned long long)c.nw,
             prof->name, (unsigned long long)c.nr, tr,
             (double)(c.nn + c.n_ways_seen) / (tr > 0 ? tr : 1e-9) / 1e3);
    if (c.unsorted) qsort(c.nodes, c.nn, sizeof *c.nodes, cmp_onode);
    if (build_buckets(&c)) goto oom;
    if (!c.nw) {
        gp_err_set(err, GP_EPARSE, "%s: no way the %s profile can use", path, prof->name);
        goto fail;
    }

    /* 2. graph nodes and edges */
    wix = malloc(c.nrefs * sizeof *wix);
    flags = calloc(c.nn ? c.nn : 1, 1);
    uint8_t *cnt = calloc(c.nn ? c.nn : 1, 1);
    if (!wix || !flags || !cnt) {
        free(cnt);
        goto oom;
    }
    for (uint64_t i = 0; i < c.nrefs; i++) {
        uint32_t x = node_ix(&c, c.refs[i]);
        wix[i] = x;
        if (x != GP_NONE && cnt[x] < 2) cnt[x]++;
    }
    free(c.refs);
    c.refs = NULL;
    uint64_t way_nodes = 0; /* distinct nodes of routable ways */
    for (uint64_t x = 0; x < c.nn; x++) {
        way_nodes += cnt[x] > 0;
        if (cnt[x] >= 2) flags[x] |= F_PIN;
    }
    free(cnt);
    uint64_t missing = 0;
    for (uint64_t wi = 0; wi < c.nw; wi++) {
        const uint32_t *r = wix + c.ways[wi].ref0;
        uint32_t k = c.ways[wi].nref;
        for (uint32_t i = 0; i < k; i++) {
            if (r[i] == GP_NONE) {
                missing++;
                if (i > 0 && r[i - 1] != GP_NONE) flags[r[i - 1]] |= F_PIN;
                if (i + 1 < k && r[i + 1] != GP_NONE) flags[r[i + 1]] |= F_PIN;
            }
        }
        if (r[0] != GP_NONE) flags[r[0]] |= F_PIN;
        if (r[k - 1] != GP_NONE) flags[r[k - 1]] |= F_PIN;
    }
    for (uint64_t i = 0; i < c.nblocked; i++) {
        uint32_t x = node_ix(&c, c.blocked[i]);
        if (x != GP_NONE) flags[x] |= F_PIN | F_HARD | F_BLOCK;
    }
    for (uint64_t i = 0; i < c.nmarked; i++) {
        uint32_t x = node_ix(&c, c.marked[i]);
        if (x != GP_NONE) flags[x] |= F_PIN | F_HARD | c.markfl[i];
    }
    wk = malloc((c.nw ? c.nw : 1) * sizeof *wk);
    if (!wk) goto oom;
    for (uint64_t i = 0; i < c.nw; i++) wk[i] = (way_key){c.ways[i].id, (uint32_t)i};
    qsort(wk, c.nw, sizeof *wk, cmp_way_key);
    for (uint64_t i = 0; i < c.nr; i++) {
        const orestr *r = &c.restr[i];
        if (r->via_type == 'n') {
            uint32_t x = node_ix(&c, r->via);
            if (x != GP_NONE) flags[x] |= F_PIN | F_HARD;
        }
        /* the ends of from / to / via ways stay graph nodes */
        for (uint32_t k = 0; k < 2 + r->nvia; k++) {
            int64_t id = k == 0 ? r->from : k == 1 ? r->to : c.rvia[r->via0 + k - 2];
            uint32_t wi = way_ix(wk, c.nw, id);
            if (wi == GP_NONE) continue;
            const uint32_t *rr = wix + c.ways[wi].ref0;
            uint32_t n = c.ways[wi].nref;
            if (rr[0] != GP_NONE) flags[rr[0]] |= F_HARD;
            if (rr[n - 1] != GP_NONE) flags[rr[n - 1]] |= F_HARD;
        }
    }
    if (split_ways(&c, wix, flags, &E0)) goto oom;
    uint64_t pinned = 0;
    for (uint64_t x = 0; x < c.nn; x++) pinned += (flags[x] & F_PIN) != 0;
    progress(&c,
             "split: %llu nodes read, %llu graph nodes, %llu edges (%llu refs to nodes outside "
             "the extract)",
             (unsigned long long)c.nn, (unsigned long long)pinned, (unsigned long long)E0.n,
             (unsigned long long)missing);

    /* 3. collapse degree-2 chains */
    if (collapse(&c, flags, &E0, &E)) goto oom;
    free(E0.e);
    free(E0.shp);
    memset(&E0, 0, sizeof E0);
    uint64_t gnodes = 0;
    for (uint64_t i = 0; i < E.n; i++) {
        flags[E.e[i].u] |= F_NODE;
        flags[E.e[i].v] |= F_NODE;
    }
    for (uint64_t x = 0; x < c.nn; x++) gnodes += (flags[x] & F_NODE) != 0;
    progress(&c,
             "collapse: %llu graph nodes, %llu edges, %llu shape points; node compression "
             "ratio %.3f (graph nodes / %llu way nodes)",
             (unsigned long long)gnodes, (unsigned long long)E.n, (unsigned long long)E.ns,
             way_nodes ? (double)gnodes / (double)way_nodes : 0.0, (unsigned long long)way_nodes);

    /* 4. arcs */
    for (uint64_t i = 0; i < E.n; i++) {
        const oedge *e = &E.e[i];
        if (e->tf >= 0 && !(flags[e->u] & F_BLOCK) &&
            push_arc(&A, (oarc){e->u, e->v, (uint32_t)i, 0, ds_of(e->tf), (uint32_t)A.n}))
            goto oom;
        if (e->tb >= 0 && !(flags[e->v] & F_BLOCK) &&
            push_arc(&A, (oarc){e->v, e->u, (uint32_t)i, 1, ds_of(e->tb), (uint32_t)A.n}))
            goto oom;
    }

    /* 5. turn restrictions: records for the turn model, or node copies */
    uint64_t applied = 0, nrrec = 0;
    int64_t ncopies = 0;
    if (o->restrictions_as_turns) {
        if (restr_records(&c, &E, &A, wk, c.nw, wix, flags, &rrec, &nrrec, &applied)) goto oom;
    } else {
        ncopies = turn_expand(&c, &E, &A, wk, c.nw, &copies, &applied);
        if (ncopies < 0) goto oom;
        uint64_t nc = (uint64_t)ncopies;
        int64_t nvc = via_way_expand(&c, &E, &A, wk, c.nw, wix, flags, &copies, &nc, &applied);
        if (nvc < 0) goto oom;
        ncopies += nvc;
    }
    free(wix);
    wix = NULL;
    if (o->restrictions_as_turns)
        progress(&c,
                 "turn restrictions: %llu relations for %s, %llu restricted entries kept for the "
                 "turn model (%llu words); %llu unsupported (odd members, ways not meeting end "
                 "to end), %llu conditional ignored",
                 (unsigned long long)c.nr, prof->name, (unsigned long long)applied,
                 (unsigned long long)nrrec, (unsigned long long)c.n_unsupported,
                 (unsigned long long)c.n_conditional);
    else
        progress(&c,
                 "turn restrictions: %llu relations for %s, %llu restricted entries, %lld node "
                 "copies; %llu unsupported (odd members, ways not meeting end to end), %llu "
                 "conditional ignored",
                 (unsigned long long)c.nr, prof->name, (unsigned long long)applied,
                 (long long)ncopies, (unsigned long long)c.n_unsupported,
                 (unsigned long long)c.n_conditional);
    if (c.n_conditional)
        GP_LOG(GP_LOG_INFO, "%s: %llu restriction:conditional relations ignored", path,
               (unsigned long long)c.n_conditional);

    /* 6. build; copies get the ids below every OSM id (-1, -2, ... unless the file has negative
     * ids, as files of editors not yet uploaded do) */
    const int64_t copy_base = (c.nn && c.nodes[0].id < 0 ? c.nodes[0].id : 0) - 1;
    b = gp_builder_new(1.0);
    if (!b) goto oom;
    gp_builder_guard(b, o); /* the load's node / arc caps and deadline */
    for (uint64_t i = 0; i < A.n; i++) {
        const oarc *a = &A.a[i];
        uint32_t nodes2[2] = {a->tail, a->head};
        int64_t ids2[2];
        for (int k = 0; k < 2; k++) { /* each node declared once, with its position */
            uint32_t x = nodes2[k];
            int copy = x >= c.nn;
            uint32_t orig = copy ? copies[x - c.nn].of : x;
            ids2[k] = copy ? copy_base - (int64_t)(x - c.nn) : c.nodes[x].id;
            if (copy ? copies[x - c.nn].added : (flags[x] & F_ADDED)) continue;
            if (gp_builder_add_node(b, ids2[k], 1, nlon(&c, orig), nlat(&c, orig), NULL, err))
                goto fail;
            if (copy && gp_builder_set_osm_id(b, ids2[k], c.nodes[orig].id, err)) goto fail;
            uint8_t nf = flags[orig];
            if ((nf & (F_SIGNAL | F_STOP | F_GIVE_WAY)) &&
                gp_builder_set_node_flags(b, ids2[k],
                                          (uint8_t)((nf & F_SIGNAL ? GP_NODE_SIGNAL : 0) |
                                                    (nf & F_STOP ? GP_NODE_STOP : 0) |
                                                    (nf & F_GIVE_WAY ? GP_NODE_GIVE_WAY : 0)),
                                          err))
                goto fail;
            if (copy) copies[x - c.nn].added = 1;
            else flags[x] |= F_ADDED;
        }
        const oedge *e = &E.e[a->edge];
        const oway *w = &c.ways[e->way_u];
        if (grow((void **)&slon, &shcap, e->ns ? e->ns : 1, sizeof *slon) ||
            grow((void **)&slat, &shcap2, e->ns ? e->ns : 1, sizeof *slat) ||
            grow((void **)&sid, &shcap3, e->ns ? e->ns : 1, sizeof *sid))
            goto oom;
        for (uint32_t s = 0; s < e->ns; s++) {
            uint32_t x = E.shp[e->s0 + (a->rev ? e->ns - 1 - s : s)];
            slon[s] = nlon(&c, x);
            slat[s] = nlat(&c, x);
            sid[s] = c.nodes[x].id;
        }
        gp_road_attr ra = {e->len,
                           c.str && w->name ? c.str + w->name : NULL,
                           c.str && w->ref ? c.str + w->ref : NULL,
                           w->cls,
                           e->ns,
                           slon,
                           slat,
                           sid,
                           w->gflags,
                           NULL,
                           {0}};
        uint32_t goff = (a->rev ^ e->wrev) ? w->guide_b : w->guide_f;
        ra.guide = c.str && goff ? c.str + goff : NULL;
        memcpy(ra.limits, w->lim, GP_LIMITS);
        if (gp_builder_add_road_arc(b, ids2[0], ids2[1], a->w, &ra, err)) goto fail;
    }
    /* loader arc i is the builder's insertion index i */
    for (uint64_t i = 0; i < nrrec; i += 2 + rrec[i + 1])
        if (gp_builder_add_restriction(b, (int)rrec[i], rrec + i + 2, (uint32_t)rrec[i + 1], err))
            goto fail;
    free(rrec);
    rrec = NULL;
    uint64_t total_refs = 0;
    for (uint64_t i = 0; i < c.nw; i++) total_refs += c.ways[i].nref;
    free(slon);
    free(slat);
    free(sid);
    slon = slat = NULL;
    sid = NULL;
    free(A.a);
    free(E.e);
    free(E.shp);
    free(flags);
    free(wk);
    free(copies);
    memset(&A, 0, sizeof A);
    memset(&E, 0, sizeof E);
    flags = NULL;
    wk = NULL;
    copies = NULL;
    uint8_t *places = c.places;
    uint64_t places_len = c.places_len;
    c.places = NULL;
    octx_free(&c);
    gp_graph *g = gp_builder_finish(b, spec, "osm", 1, err);
    b = NULL;
    if (!g) {
        free(places);
        return NULL;
    }
    g->places = places;
    g->places_len = places_len;
    gp_graph_set_unit(g, "deciseconds", 0.1);
    snprintf(g->profile, sizeof g->profile, "%s", prof->name);
    progress(&c,
             "graph: %u nodes, %u arcs, %llu shape points (from %llu way node references); "
             "%.1f MB",
             g->n, g->m, g->arc_shape ? (unsigned long long)g->arc_shape[g->m] : 0ULL,
             (unsigned long long)total_refs, (double)gp_graph_memory(g) / 1e6);
    return g;

oom:
    gp_err_set(err, GP_ENOMEM, "%s: out of memory importing OSM data", path);
fail:
    gp_builder_free(b);
    free(slon);
    free(slat);
    free(sid);
    free(wix);
    free(flags);
    free(wk);
    free(copies);
    free(rrec);
    free(A.a);
    free(E0.e);
    free(E0.shp);
    free(E.e);
    free(E.shp);
    octx_free(&c);
    return NULL;
}
