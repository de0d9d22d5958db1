/* metric.c - per-request metrics and their LRU cache (contract in metric.h). */
#include "engine/metric.h"

#include "graph/osm_profile.h"
#include "graph/parallel.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gp_metric_key_empty(const gp_metric_key *k) {
    if (!k) return 1;
    if (k->exclude) return 0;
    for (int i = 0; i < GP_LIMITS; i++)
        if (k->veh[i]) return 0;
    return 1;
}

int gp_metric_vehicle(int k, double v, uint8_t *out, gp_err *err) {
    double q = gp_limit_quantum(k);
    if (!(v > 0) || !isfinite(v) || v > 255 * q)
        return gp_err_set(err, GP_EINVAL, "must be a number above 0 and at most %g %s", 255 * q,
                          k < GP_LIM_WEIGHT ? "m" : "t");
    double steps = ceil(v / q - 1e-9);
    *out = (uint8_t)(steps < 1 ? 1 : steps);
    return GP_OK;
}

static const char *const VEHICLE_PARAM[GP_LIMITS] = {
    "vehicle_height", "vehicle_width", "vehicle_length", "vehicle_weight", "vehicle_axleload"};

const char *gp_metric_vehicle_param(int k) {
    return k >= 0 && k < GP_LIMITS ? VEHICLE_PARAM[k] : "";
}

int gp_metric_parse_vehicle(int k, const char *text, uint8_t *out, gp_err *err) {
    char *end = NULL;
    double v = text && *text ? strtod(text, &end) : NAN;
    gp_err e;
    if (!end || *end || gp_metric_vehicle(k, v, out, &e))
        return gp_err_set(err, GP_EINVAL, "%s=%.32s: must be a number above 0 and at most %g (%s)",
                          VEHICLE_PARAM[k], text ? text : "", 255 * gp_limit_quantum(k),
                          k < GP_LIM_WEIGHT ? "metres" : "tonnes");
    return GP_OK;
}

int gp_metric_parse_exclude(const gp_graph *g, const char *text, int osrm_sets, unsigned *bits,
                            gp_err *err) {
    *bits = 0;
    const gp_osm_profile *p = g->arc_class ? gp_osm_profile_find(g->profile) : NULL;
    /* a road graph without a profile (gen:N's road classes): every class, one at a time on OSRM */
    static const char *const all[] = {"motorway", "toll", "ferry", NULL};
    const char *const *list = p ? p->excludable : g->arc_class ? all : NULL;
    const char *pname = p ? p->name : "of road classes";
    unsigned allowed = 0;
    char names[96] = "";
    for (size_t i = 0; list && list[i]; i++) {
        allowed |= gp_osm_class_bit(list[i]);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 list[i]);
    }
    if (!text || !*text) return GP_OK;
    if (!allowed)
        return gp_err_set(err, GP_EINVAL, "exclude=%.64s: graph '%s' defines no exclusion classes",
                          text, g->profile[0] ? g->profile : g->format);
    unsigned count = 0;
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), s);
        unsigned b = len < sizeof name ? gp_osm_class_bit(name) : 0;
        if (!(b & allowed))
            return gp_err_set(err, GP_EINVAL,
                              "exclude=%.64s: '%.31s' is no exclusion class of profile %s (%s)",
                              text, name, pname, names);
        *bits |= b;
        count++;
        s += len;
        if (*s) s++;
    }
    /* OSRM: the set asked for must be one of the profile's excludable sets, and car.lua's are
     * single classes */
    if (osrm_sets && count != 1)
        return gp_err_set(err, GP_EINVAL,
                          "exclude=%.64s: Exclude flag combination is not supported (profile %s "
                          "excludes one class at a time: %s)",
                          text, pname, names);
    return GP_OK;
}

void gp_metric_key_text(const gp_metric_key *k, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    static const char *const cls[] = {"motorway", "toll", "ferry"};
    for (int i = 0; i < 3 && n < size; i++)
        if (k->exclude & gp_osm_class_bit(cls[i]))
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "exclude=", cls[i]);
    for (int i = 0; i < GP_LIMITS && n < size; i++)
        if (k->veh[i])
            n += (size_t)snprintf(buf + n, size - n, "%s%s=%g", n ? " " : "", VEHICLE_PARAM[i],
                                  k->veh[i] * gp_limit_quantum(i));
}

int gp_metric_arc_closed(const gp_graph *g, uint32_t a, const gp_metric_key *k) {
    if (k->exclude && (gp_osm_arc_classes(g, a) & k->exclude)) return 1;
    const uint8_t *lim = gp_graph_arc_limits(g, a);
    for (int i = 0; lim && i < GP_LIMITS; i++)
        if (lim[i] && k->veh[i] > lim[i]) return 1;
    if (k->veh[GP_LIM_WEIGHT] * gp_limit_quantum(GP_LIM_WEIGHT) > GP_METRIC_HGV_T &&
        (gp_graph_arc_flags(g, a) & GP_ARC_HGV_NO))
        return 1;
    return 0;
}

static int open_arc(void *ctx, const gp_graph *g, uint32_t arc, uint32_t tail, double a_lon,
                    double a_lat, double b_lon, double b_lat) {
    (void)ctx, (void)tail, (void)a_lon, (void)a_lat, (void)b_lon, (void)b_lat;
    uint32_t r = gp_graph_reverse_arc(g, arc);
    return g->w[arc] != GP_W_CLOSED || (r != GP_NONE && g->w[r] != GP_W_CLOSED);
}

int gp_metric_snap_open(const gp_graph *m, gp_snap *s, double radius_m, gp_err *err) {
    if (!m->closed || s->arc == GP_NONE) return GP_OK;
    int fwd = m->w[s->arc] != GP_W_CLOSED, bwd = s->rarc != GP_NONE && m->w[s->rarc] != GP_W_CLOSED;
    if (fwd && !bwd) s->rarc = GP_NONE;
    else if (bwd && !fwd) {
        s->arc = s->rarc;
        s->rarc = GP_NONE;
        s->frac = 1 - s->frac;
    }
    if (fwd || bwd) return GP_OK;
    gp_snap t;
    int rc = gp_snap_point_if(m, s->qlon, s->qlat, radius_m, open_arc, NULL, &t, err);
    if (rc) return rc;
    *s = t;
    return gp_metric_snap_open(m, s, radius_m, err);
}

/* The arcs of nodes [lo, hi) closed under k: w and rw (the reverse CSR's entry) at GP_W_CLOSED;
 * distinct arcs write distinct entries, so ranges run in parallel (2 M arcs took ~30 ms on one
 * thread, gen:1M's roads). */
typedef struct close_job {
    const gp_graph *g;
    const gp_metric_key *k;
    uint32_t *w, *rw;
    uint64_t closed; /* atomic */
} close_job;

static void close_range(void *ctx, uint64_t lo, uint64_t hi) {
    close_job *j = ctx;
    const gp_graph *g = j->g;
    uint64_t closed = 0;
    for (uint32_t u = (uint32_t)lo; u < hi; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            if (!gp_metric_arc_closed(g, a, j->k)) continue;
            closed++;
            j->w[a] = GP_W_CLOSED;
            /* its reverse-CSR entry: parallel arcs u -> v keep one order in both (by weight), so
             * the i-th of them forward is the i-th of them in v's in-arcs */
            uint32_t v = g->col[a], ord = 0;
            for (uint32_t b = g->row[u]; b < a; b++) ord += g->col[b] == v;
            for (uint32_t r = g->rrow[v]; r < g->rrow[v + 1]; r++) {
                if (g->rcol[r] != u) continue;
                if (ord == 0) {
                    j->rw[r] = GP_W_CLOSED;
                    break;
                }
                ord--;
            }
        }
    __atomic_add_fetch(&j->closed, closed, __ATOMIC_RELAXED);
}

/* g's weights with the arcs closed under k at GP_W_CLOSED, as a reweighted version. */
static inline uint64_t mix64(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* g's weights with the arcs closed under k at GP_W_CLOSED, as a reweighted version whose version
 * follows from g's and k (no pass over the weights: the same key on the same graph, the same
 * version). */
static gp_graph *build(const gp_graph *g, const gp_metric_key *k, gp_err *err) {
    uint32_t m = g->m;
    uint32_t *w = gp_weights_alloc(m), *rw = gp_weights_alloc(m);
    if (!w || !rw) {
        gp_weights_release(w, m);
        gp_weights_release(rw, m);
        gp_err_set(err, GP_ENOMEM, "out of memory for a metric of %u arcs", m);
        return NULL;
    }
    gp_weights_copy(g, w, rw);
    close_job j = {g, k, w, rw, 0};
    gp_parallel_for(g->n, m >= (1u << 18) ? 0 : 1, close_range, &j);
    if (!j.closed) { /* nothing to close: the graph itself answers */
        gp_weights_release(w, m);
        gp_weights_release(rw, m);
        return gp_graph_ref((gp_graph *)g);
    }
    uint64_t vh = mix64(g->hash, 0x6d6574726963ULL);
    vh = mix64(vh, k->exclude);
    for (int i = 0; i < GP_LIMITS; i++) vh = mix64(vh, (uint64_t)k->veh[i] << 8 | (unsigned)i);
    gp_graph *h = gp_graph_reweight_versioned(g, w, rw, vh, -1, err);
    if (h) h->closed = 1;
    return h;
}

typedef struct entry {
    gp_graph *g; /* the graph it was built on (referenced) */
    uint64_t hash;
    gp_metric_key key;
    gp_graph *metric;
    uint64_t used; /* LRU clock */
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *cache;
static unsigned ncache, alloc, cap = GP_METRIC_CACHE_DEFAULT;
static uint64_t clock_, built, hits;

static int same_key(const gp_metric_key *a, const gp_metric_key *b) {
    return a->exclude == b->exclude && !memcmp(a->veh, b->veh, sizeof a->veh);
}

static void drop(unsigned i) {
    gp_graph_unref(cache[i].metric);
    gp_graph_unref(cache[i].g);
    cache[i] = cache[--ncache];
}

/* Releases least recently used entries until at most keep remain (lock held). */
static void trim(unsigned keep) {
    while (ncache > keep) {
        unsigned lru = 0;
        for (unsigned i = 1; i < ncache; i++)
            if (cache[i].used < cache[lru].used) lru = i;
        drop(lru);
    }
}

/* 1 when every reference to graph x is the cache's: its entries' own, their metrics (x itself for
 * a key that closes nothing) and their metrics' bases (lock held). */
static int only_cached(const gp_graph *x) {
    int held = 0;
    for (unsigned j = 0; j < ncache; j++)
        held += (cache[j].g == x) + (cache[j].metric == x) + (cache[j].metric->base == x);
    return __atomic_load_n(&x->refs, __ATOMIC_ACQUIRE) == held;
}

void gp_metric_cache_size(unsigned n) {
    pthread_mutex_lock(&mu);
    cap = n ? n : 1;
    trim(cap);
    pthread_mutex_unlock(&mu);
}

void gp_metric_cache_clear(void) {
    pthread_mutex_lock(&mu);
    trim(0);
    free(cache);
    cache = NULL;
    alloc = 0;
    pthread_mutex_unlock(&mu);
}

void gp_metric_cache_stats(uint64_t *b, uint64_t *h, unsigned *entries) {
    pthread_mutex_lock(&mu);
    if (b) *b = built;
    if (h) *h = hits;
    if (entries) *entries = ncache;
    pthread_mutex_unlock(&mu);
}

/* The metric of key k on g, built and customized (make_job: in, then out). */
typedef struct make_job {
    gp_engine *e;
    gp_graph *g;
    const gp_metric_key *k;
    gp_err *err;
    gp_graph *h;
    int rc;
    double t0, t1; /* the build's start and end */
} make_job;

static void make(void *arg) {
    make_job *j = arg;
    j->t0 = gp_now();
    gp_engine_hold_background(j->g, 1); /* g's perfect pass waits: every CPU for the metric */
    j->h = build(j->g, j->k, j->err);
    if (!j->h) j->rc = j->err ? j->err->code : GP_ENOMEM;
    j->t1 = gp_now();
    /* customized from g's CCH (its device state's diff path, as a cost change is): the metric
     * differs from g only at the closed arcs */
    if (j->h && j->h != j->g &&
        (j->rc = gp_engine_attach_from(j->e, j->h, j->g, j->err)) != GP_OK) {
        gp_graph_unref(j->h);
        j->h = NULL;
    }
    gp_engine_hold_background(j->g, 0);
}

int gp_metric_get(gp_engine *e, gp_graph *g, const gp_metric_key *k, gp_graph **out, gp_err *err) {
    *out = NULL;
    if (gp_metric_key_empty(k)) {
        *out = gp_graph_ref(g);
        return GP_OK;
    }
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < ncache; i++)
        if (cache[i].g == g && cache[i].hash == g->hash && same_key(&cache[i].key, k)) {
            cache[i].used = ++clock_;
            hits++;
            *out = gp_graph_ref(cache[i].metric);
            pthread_mutex_unlock(&mu);
            return GP_OK;
        }
    /* built at the server's priority, not the request thread's (graph/parallel.h) */
    make_job j = {e, g, k, err, NULL, GP_OK, 0, 0};
    gp_runner_run(make, &j);
    int rc = j.rc;
    gp_graph *h = j.h;
    double t0 = j.t0, t1 = j.t1;
    if (h) {
        char kt[160];
        gp_metric_key_text(k, kt, sizeof kt);
        GP_LOG(GP_LOG_INFO,
               "event=metric_ready graph=%s metric=%s key=\"%s\" build_ms=%.2f attach_ms=%.2f",
               g->version, h->version, kt, (t1 - t0) * 1e3, (gp_now() - t1) * 1e3);
        built++;
        /* metrics of graphs nobody holds any more (a version replaced, a graph removed: the cache
         * has the last reference, so no request can reach them) go first */
        for (unsigned i = ncache; i > 0; i--) /* downwards: drop() moves the last entry in */
            if (only_cached(cache[i - 1].g)) drop(i - 1);
        trim(cap - 1);
        if (ncache == alloc) {
            unsigned na = alloc ? 2 * alloc : 16;
            entry *c = realloc(cache, sizeof *c * na);
            if (c) {
                cache = c;
                alloc = na;
            }
        }
        if (ncache < alloc) /* else served uncached */
            cache[ncache++] = (entry){gp_graph_ref(g), g->hash, *k, gp_graph_ref(h), ++clock_};
        *out = h;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
