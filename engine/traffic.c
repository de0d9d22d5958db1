/* traffic.c - segment speed and turn penalty files (contract in traffic.h): parsing with line
 * numbers, mapping OSM node pairs onto road arcs (tail, shape points, head) and turns onto the
 * turn graph, and the new metric version as a reweighted graph attached to the engine.
 */
#include "engine/traffic.h"

#include "graph/spatial.h"
#include "graph/turns.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Parsing
 * ------------------------------------------------------------------------------------------- */

enum { MAX_FIELDS = 8 };

/* Splits line s (len bytes) at commas into at most MAX_FIELDS fields (the last keeps the rest). */
static int split(const char *s, size_t len, const char **f, size_t *fl) {
    int k = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || (s[i] == ',' && k < MAX_FIELDS - 1)) {
            f[k] = s + start;
            fl[k] = i - start;
            k++;
            start = i + 1;
        }
    }
    return k;
}

/* Copies field (trimmed of spaces) into buf; 0 when it does not fit. */
static int field_text(const char *f, size_t fl, char *buf, size_t cap) {
    while (fl && (*f == ' ' || *f == '\t')) f++, fl--;
    while (fl && (f[fl - 1] == ' ' || f[fl - 1] == '\t')) fl--;
    if (fl >= cap) return 0;
    memcpy(buf, f, fl);
    buf[fl] = 0;
    return 1;
}

static int parse_id(const char *f, size_t fl, int64_t *out) {
    char buf[32], *end;
    if (!field_text(f, fl, buf, sizeof buf) || !buf[0]) return 0;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno) return 0;
    *out = (int64_t)v;
    return 1;
}

/* A finite number; blank_ok: an empty field is accepted (*blank = 1). */
static int parse_num(const char *f, size_t fl, double *out, int blank_ok, int *blank) {
    char buf[64], *end;
    if (blank) *blank = 0;
    if (!field_text(f, fl, buf, sizeof buf)) return 0;
    if (!buf[0]) {
        if (blank) *blank = 1;
        return blank_ok;
    }
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* Calls one(line, fields) for each non-empty line; stops at the first failure (its status). */
typedef int (*line_fn)(void *ctx, size_t line, const char **f, const size_t *fl, int nf,
                       gp_err *err);
static int each_line(const char *text, size_t len, line_fn one, void *ctx, gp_err *err) {
    size_t pos = 0, line = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, l = end - pos;
        line++;
        if (l && text[pos + l - 1] == '\r') l--;
        if (l) {
            if (memchr(text + pos, 0, l))
                return gp_err_set(err, GP_EINVAL, "line %zu: a NUL byte", line);
            const char *f[MAX_FIELDS];
            size_t fl[MAX_FIELDS];
            int nf = split(text + pos, l, f, fl);
            int rc = one(ctx, line, f, fl, nf, err);
            if (rc != GP_OK) return rc;
        }
        pos = end + 1;
    }
    return GP_OK;
}

typedef struct vec {
    void *a;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *v) {
    if (v->n == v->cap) {
        size_t c = v->cap ? v->cap * 2 : 64;
        void *p = realloc(v->a, c * v->size);
        if (!p) return NULL;
        v->a = p;
        v->cap = c;
    }
    return (char *)v->a + v->size * v->n++;
}

static int speed_line(void *ctx, size_t line, const char **f, const size_t *fl, int nf,
                      gp_err *err) {
    gp_speed_entry s;
    double rate;
    int blank;
    if (nf < 3)
        return gp_err_set(err, GP_EINVAL,
                          "line %zu: expected from_osm_id,to_osm_id,speed_kmh[,rate], got %d "
                          "field%s",
                          line, nf, nf == 1 ? "" : "s");
    if (!parse_id(f[0], fl[0], &s.from) || !parse_id(f[1], fl[1], &s.to))
        return gp_err_set(err, GP_EINVAL, "line %zu: the node ids must be integers", line);
    if (!parse_num(f[2], fl[2], &s.kmh, 0, NULL) || s.kmh < 0)
        return gp_err_set(err, GP_EINVAL, "line %zu: speed_kmh must be a number >= 0", line);
    if (nf >= 4 && (!parse_num(f[3], fl[3], &rate, 1, &blank) || (!blank && !(rate > 0))))
        return gp_err_set(err, GP_EINVAL, "line %zu: rate must be empty or a number > 0", line);
    gp_speed_entry *p = vec_push(ctx);
    if (!p) return gp_err_set(err, GP_ENOMEM, "out of memory reading the speed file");
    *p = s;
    return GP_OK;
}

static int turn_line(void *ctx, size_t line, const char **f, const size_t *fl, int nf,
                     gp_err *err) {
    gp_turn_entry t;
    double weight;
    int blank;
    if (nf < 4)
        return gp_err_set(err, GP_EINVAL,
                          "line %zu: expected from_osm_id,via_osm_id,to_osm_id,penalty_s[,weight], "
                          "got %d field%s",
                          line, nf, nf == 1 ? "" : "s");
    if (!parse_id(f[0], fl[0], &t.from) || !parse_id(f[1], fl[1], &t.via) ||
        !parse_id(f[2], fl[2], &t.to))
        return gp_err_set(err, GP_EINVAL, "line %zu: the node ids must be integers", line);
    if (!parse_num(f[3], fl[3], &t.penalty_s, 0, NULL))
        return gp_err_set(err, GP_EINVAL, "line %zu: penalty_s must be a number", line);
    if (nf >= 5 && !parse_num(f[4], fl[4], &weight, 1, &blank))
        return gp_err_set(err, GP_EINVAL, "line %zu: weight must be empty or a number", line);
    gp_turn_entry *p = vec_push(ctx);
    if (!p) return gp_err_set(err, GP_ENOMEM, "out of memory reading the turn penalty file");
    *p = t;
    return GP_OK;
}

static int parse_all(const char *text, size_t len, line_fn one, size_t size, void **out, size_t *n,
                     const char *what, gp_err *err) {
    vec v = {.size = size};
    *out = NULL;
    *n = 0;
    int rc = each_line(text, len, one, &v, err);
    if (rc == GP_OK && v.n == 0) rc = gp_err_set(err, GP_EINVAL, "the %s has no line", what);
    if (rc != GP_OK) {
        free(v.a);
        return rc;
    }
    *out = v.a;
    *n = v.n;
    return GP_OK;
}

int gp_traffic_parse_speeds(const char *text, size_t len, gp_speed_entry **out, size_t *n,
                            gp_err *err) {
    return parse_all(text, len, speed_line, sizeof **out, (void **)out, n, "speed file", err);
}

int gp_traffic_parse_turns(const char *text, size_t len, gp_turn_entry **out, size_t *n,
                           gp_err *err) {
    return parse_all(text, len, turn_line, sizeof **out, (void **)out, n, "turn penalty file", err);
}

/* ---------------------------------------------------------------------------------------------
 * Lookup tables: entries sorted by their ids, the last entry of a key kept
 * ------------------------------------------------------------------------------------------- */

typedef struct key3 {
    int64_t a, b, c;
    size_t idx;  /* the entry kept (the last one of its key) */
    int matched; /* some segment or turn of the graph is this key */
} key3;

static int cmp_key(const key3 *p, const key3 *q) {
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->c != q->c) return p->c < q->c ? -1 : 1;
    return 0;
}

static int cmp_key_idx(const void *x, const void *y) {
    const key3 *p = x, *q = y;
    int c = cmp_key(p, q);
    return c ? c : (p->idx > q->idx) - (p->idx < q->idx);
}

/* Sorts k[0..n) and keeps the last entry of each key; the count kept. */
static size_t dedupe(key3 *k, size_t n) {
    qsort(k, n, sizeof *k, cmp_key_idx);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        if (nk && cmp_key(&k[nk - 1], &k[i]) == 0) k[nk - 1] = k[i];
        else k[nk++] = k[i];
    }
    return nk;
}

static key3 *find(key3 *k, size_t n, int64_t a, int64_t b, int64_t c) {
    key3 q = {.a = a, .b = b, .c = c};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&k[mid], &q) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && cmp_key(&k[lo], &q) == 0 ? &k[lo] : NULL;
}

/* The set of the first ids of keys (open addressing, a power of two of slots, 0 marks an empty
 * slot: id 0 is kept aside): one probe per point tells most points of the graph apart from the
 * file's before any binary search. */
typedef struct idset {
    int64_t *slot;
    size_t mask;
    int has_zero;
} idset;

static uint64_t mix64(uint64_t h, uint64_t x);
static inline size_t id_hash(int64_t x) { return (size_t)mix64(0, (uint64_t)x); }

static int idset_build(idset *s, const key3 *k, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    s->slot = calloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    s->has_zero = 0;
    if (!s->slot) return -1;
    for (size_t i = 0; i < n; i++) {
        if (k[i].a == 0) {
            s->has_zero = 1;
            continue;
        }
        size_t h = id_hash(k[i].a) & s->mask;
        while (s->slot[h] && s->slot[h] != k[i].a) h = (h + 1) & s->mask;
        s->slot[h] = k[i].a;
    }
    return 0;
}

static inline int idset_has(const idset *s, int64_t x) {
    if (x == 0) return s->has_zero;
    for (size_t h = id_hash(x) & s->mask; s->slot[h]; h = (h + 1) & s->mask)
        if (s->slot[h] == x) return 1;
    return 0;
}

/* 1 when some key starts with (a, b). */
static int has_prefix(const key3 *k, size_t n, int64_t a, int64_t b) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].a < a || (k[mid].a == a && k[mid].b < b)) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && k[lo].a == a && k[lo].b == b;
}

/* ---------------------------------------------------------------------------------------------
 * Applying
 * ------------------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0x100000001b3ULL;
}

/* The OSM id of point i of arc a (u -> v): 0 = tail, 1..ns = shape points, ns + 1 = head. */
static int64_t point_id(const gp_graph *g, uint32_t a, uint32_t u, uint32_t v, uint32_t ns,
                        uint32_t i) {
    if (i == 0) return gp_graph_orig_id(g, u);
    if (i > ns) return gp_graph_orig_id(g, v);
    return g->shape_osm_id[g->arc_shape[a] + i - 1];
}

/* Interior points of arc a with OSM ids (0 when the graph has none: the arc is one segment). */
static uint32_t shape_ids(const gp_graph *g, uint32_t a) {
    const double *x, *y;
    uint32_t ns = gp_graph_arc_shape(g, a, &x, &y);
    return g->shape_osm_id ? ns : 0;
}

static void point_xy(const gp_graph *g, uint32_t u, uint32_t v, uint32_t ns, const double *slon,
                     const double *slat, uint32_t i, double *x, double *y) {
    if (i == 0 || i > ns) {
        uint32_t w = i == 0 ? u : v;
        *x = g->lon[w];
        *y = g->lat[w];
    } else {
        *x = slon[i - 1];
        *y = slat[i - 1];
    }
}

/* New weight of arc a (u -> v) of g under the speeds k[0..nk); returns 1 when some segment of it
 * has a speed (then *w is set: GP_TRAFFIC_CLOSED for a closed one), 0 when none, -1 on overflow. */
static int arc_weight(const gp_graph *g, uint32_t a, uint32_t u, uint32_t v,
                      const gp_speed_entry *sp, key3 *k, size_t nk, const idset *from,
                      uint32_t *w) {
    const double *slon = NULL, *slat = NULL;
    uint32_t ns = gp_graph_arc_shape(g, a, &slon, &slat);
    if (ns && !g->shape_osm_id) ns = 0; /* interior points without ids: the arc as one segment */
    int any = 0;
    for (uint32_t i = 0; i <= ns && !any; i++) {
        int64_t p = point_id(g, a, u, v, ns, i);
        any = idset_has(from, p) && find(k, nk, p, point_id(g, a, u, v, ns, i + 1), 0) != NULL;
    }
    if (!any) return 0;
    const int xy = g->lon && g->lat && !isnan(g->lon[u]) && !isnan(g->lon[v]);
    double total = 0, len[1024];
    double *lens = ns + 1 <= 1024 ? len : malloc(sizeof *lens * (ns + 1));
    if (!lens) return -1;
    for (uint32_t i = 0; i <= ns; i++) {
        double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
        if (xy) {
            point_xy(g, u, v, ns, slon, slat, i, &x0, &y0);
            point_xy(g, u, v, ns, slon, slat, i + 1, &x1, &y1);
        }
        lens[i] = xy ? gp_haversine_m(x0, y0, x1, y1) : 1.0;
        total += lens[i];
    }
    const double units_per_s = g->scale / g->unit_s;
    double sum = 0;
    int closed = 0;
    for (uint32_t i = 0; i <= ns; i++) {
        key3 *e = find(k, nk, point_id(g, a, u, v, ns, i), point_id(g, a, u, v, ns, i + 1), 0);
        if (e) {
            __atomic_store_n(&e->matched, 1, __ATOMIC_RELAXED); /* arcs run in parallel */
            double kmh = sp[e->idx].kmh;
            if (kmh <= 0) closed = 1;
            else sum += lens[i] / (kmh / 3.6) * units_per_s;
        } else {
            sum += total > 0 ? g->w[a] * lens[i] / total : (double)g->w[a] / (ns + 1);
        }
    }
    if (lens != len) free(lens);
    if (closed) {
        *w = GP_TRAFFIC_CLOSED;
        return 1;
    }
    double r = floor(sum + 0.5);
    if (!(r < (double)GP_TRAFFIC_CLOSED)) return -1;
    *w = (uint32_t)r;
    return 1;
}

/* The new weights of the arcs of nodes [lo, hi) into w (w starts as the base's weights) and of
 * their reverse entries into rw (each changed arc takes the first entry of the reverse order from
 * its tail with the old weight not yet taken: only arcs of the same tail compete for an entry, so
 * the ranges run in parallel); the changed and closed arcs counted; an overflow's arc (the lowest
 * seen) in overflow. */
typedef struct arc_job {
    const gp_graph *g;
    const gp_speed_entry *sp;
    key3 *k;
    size_t nk;
    const idset *from;
    uint32_t *w, *rw;
    unsigned char *used;
    uint32_t overflow;
    uint32_t changed, closed; /* atomic */
} arc_job;

static void arc_range(void *ctx, uint64_t lo, uint64_t hi) {
    arc_job *j = ctx;
    const gp_graph *g = j->g;
    uint32_t changed = 0, closed = 0;
    for (uint32_t u = (uint32_t)lo; u < (uint32_t)hi; u++) {
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t x = 0, v = g->col[a];
            int r = arc_weight(g, a, u, v, j->sp, j->k, j->nk, j->from, &x);
            if (r < 0) {
                uint32_t cur = __atomic_load_n(&j->overflow, __ATOMIC_RELAXED);
                while (a < cur &&
                       !__atomic_compare_exchange_n(&j->overflow, &cur, a, 0, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
                }
                continue;
            }
            if (r == 0 || x == g->w[a]) continue;
            j->w[a] = x;
            changed++;
            closed += x == GP_TRAFFIC_CLOSED;
            for (uint32_t k = g->rrow[v]; k < g->rrow[v + 1]; k++)
                if (g->rcol[k] == u && !j->used[k] && g->rw[k] == g->w[a]) {
                    j->used[k] = 1;
                    j->rw[k] = x;
                    break;
                }
        }
    }
    __atomic_add_fetch(&j->changed, changed, __ATOMIC_RELAXED);
    __atomic_add_fetch(&j->closed, closed, __ATOMIC_RELAXED);
}

static inline uint32_t sat_add(uint32_t x, uint32_t y) {
    if (y == GP_TRAFFIC_CLOSED) return GP_TRAFFIC_CLOSED;
    uint64_t s = (uint64_t)x + y;
    return s >= GP_TRAFFIC_CLOSED ? GP_TRAFFIC_CLOSED - 1 : (uint32_t)s;
}

/* The turn graph of g2 (a reweighted version of base): gp_turns_reweight, every turn into a
 * closed arc closed, and the penalties of tk[0..ntk). *h gets a hash of the turns changed. */
static gp_turns *turns_of(const gp_graph *base, gp_graph *g2, const gp_turn_entry *tp, key3 *tk,
                          size_t ntk, gp_traffic_stats *st, uint64_t *h, gp_err *err) {
    /* closed arcs weigh 0 while the turn graph is derived (turn + weight must not wrap), then
     * every turn into them is closed */
    unsigned char *closed = st->arcs_closed ? calloc(g2->m, 1) : NULL;
    if (st->arcs_closed && !closed) {
        gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
        return NULL;
    }
    for (uint32_t b = 0; closed && b < g2->m; b++)
        if (g2->w[b] == GP_TRAFFIC_CLOSED) closed[b] = 1, g2->w[b] = 0;
    gp_turns *T = gp_turns_reweight(base->turns, g2, err);
    for (uint32_t b = 0; closed && b < g2->m; b++)
        if (closed[b]) g2->w[b] = GP_TRAFFIC_CLOSED;
    if (!T) {
        free(closed);
        return NULL;
    }
    gp_graph *tg = T->tg;
    for (uint32_t b = 0; closed && b < g2->m; b++) {
        if (!closed[b]) continue;
        for (uint32_t kr = tg->rrow[b]; kr < tg->rrow[b + 1]; kr++) {
            uint32_t a = tg->rcol[kr];
            tg->rw[kr] = GP_TRAFFIC_CLOSED;
            for (uint32_t k = tg->row[a]; k < tg->row[a + 1]; k++)
                if (tg->col[k] == b) tg->w[k] = GP_TRAFFIC_CLOSED;
        }
    }
    const double units_per_s = base->scale / base->unit_s;
    for (uint32_t u = 0; ntk && u < base->n; u++) {
        for (uint32_t a = base->row[u]; a < base->row[u + 1]; a++) {
            uint32_t v = base->col[a];
            uint32_t ns = shape_ids(base, a);
            int64_t from = point_id(base, a, u, v, ns, ns), via = gp_graph_orig_id(base, v);
            if (!has_prefix(tk, ntk, from, via)) continue;
            for (uint32_t k = tg->row[a]; k < tg->row[a + 1]; k++) {
                uint32_t b = tg->col[k], bv = base->col[b];
                uint32_t bs = shape_ids(base, b);
                int64_t to = point_id(base, b, v, bv, bs, 1);
                key3 *e = find(tk, ntk, from, via, to);
                if (!e) continue;
                e->matched = 1;
                double pen = tp[e->idx].penalty_s > 0 ? tp[e->idx].penalty_s : 0;
                double pu = floor(pen * units_per_s + 0.5);
                uint32_t x =
                    sat_add(pu < (double)GP_TRAFFIC_CLOSED ? (uint32_t)pu : GP_TRAFFIC_CLOSED - 1,
                            g2->w[b]);
                tg->w[k] = x;
                for (uint32_t kr = tg->rrow[b]; kr < tg->rrow[b + 1]; kr++)
                    if (tg->rcol[kr] == a) tg->rw[kr] = x;
                *h = mix64(mix64(*h, k), x);
                st->turns_changed++;
            }
        }
    }
    free(closed);
    uint32_t mw = 0;
    for (uint32_t k = 0; k < tg->m; k++)
        if (tg->w[k] > mw) mw = tg->w[k];
    tg->max_w = mw;
    if (st->turns_changed || st->arcs_closed) {
        tg->hash = mix64(tg->hash, *h ^ 0x7475726e73ULL);
        snprintf(tg->version, sizeof tg->version, "%016llx", (unsigned long long)tg->hash);
    }
    return T;
}

/* The versions released since the last apply (road and turn weights, lists of 2-40 MB) went back
 * to malloc's arenas, where glibc keeps them (its mmap threshold grows to the size of the
 * largest block freed, up to 32 MB, and each server thread has an arena): their free pages go
 * back to the system on a thread of its own (one at a time; not on the path to the new version),
 * or a speed file a second grows the server's memory (2 GiB over 60 files on the 1M map). */
#ifdef __GLIBC__
static atomic_int trimming;

static void *trim_main(void *arg) {
    (void)arg;
    malloc_trim(0);
    atomic_store(&trimming, 0);
    return NULL;
}
#endif

static void trim_start(void) {
#ifdef __GLIBC__
    int idle = 0;
    if (!atomic_compare_exchange_strong(&trimming, &idle, 1)) return;
    pthread_t th;
    pthread_attr_t at;
    int ok = pthread_attr_init(&at) == 0;
    if (ok && pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
        pthread_create(&th, &at, trim_main, NULL) == 0) {
        pthread_attr_destroy(&at);
        return;
    }
    if (ok) pthread_attr_destroy(&at);
    atomic_store(&trimming, 0);
#endif
}

int gp_traffic_apply(gp_engine *e, const gp_graph *g, const gp_speed_entry *sp, size_t ns,
                     const gp_turn_entry *tp, size_t nt, gp_graph **out, unsigned char *known_sp,
                     unsigned char *known_tp, gp_traffic_stats *st, gp_err *err) {
    const gp_graph *base = gp_graph_owner(g);
    gp_traffic_stats dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof *st);
    *out = NULL;
    if (!(base->unit_s > 0))
        return gp_err_set(err, GP_EINVAL,
                          "graph %s: its weights are %s, not travel times: speeds do not apply",
                          base->source, base->unit_name);
    if (nt && !base->turns)
        return gp_err_set(err, GP_EINVAL,
                          "graph %s has no turn costs (turn_costs = off, or no profile): turn "
                          "penalties need them",
                          base->source);
    double t0 = gp_now();
    int rc = GP_OK;
    key3 *sk = malloc(sizeof *sk * (ns ? ns : 1)), *tk = malloc(sizeof *tk * (nt ? nt : 1));
    uint32_t *w = malloc(sizeof *w * (base->m ? base->m : 1));
    uint32_t *rw = malloc(sizeof *rw * (base->m ? base->m : 1));
    unsigned char *used = calloc(base->m ? base->m : 1, 1);
    gp_graph *g2 = NULL;
    gp_turns *T = NULL;
    idset from = {0};
    if (!sk || !tk || !w || !rw || !used) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
        goto fail;
    }
    for (size_t i = 0; i < ns; i++) sk[i] = (key3){sp[i].from, sp[i].to, 0, i, 0};
    for (size_t i = 0; i < nt; i++) tk[i] = (key3){tp[i].from, tp[i].via, tp[i].to, i, 0};
    size_t nsk = dedupe(sk, ns), ntk = dedupe(tk, nt);
    if (idset_build(&from, sk, nsk) != 0) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
        goto fail;
    }
    memcpy(w, base->w, sizeof *w * base->m);
    memcpy(rw, base->rw, sizeof *rw * base->m);
    if (nsk) {
        /* every arc's new weight and its reverse entry, in parallel (arc_job) */
        arc_job j = {base, sp, sk, nsk, &from, w, rw, used, UINT32_MAX, 0, 0};
        gp_parallel_for(base->n, 0, arc_range, &j);
        st->arcs_changed = j.changed;
        st->arcs_closed = j.closed;
        if (j.overflow != UINT32_MAX) {
            uint32_t a = j.overflow, u = gp_graph_arc_tail(base, a);
            rc = gp_err_set(
                err, GP_EINVAL, "graph %s: a speed makes the arc %lld -> %lld too long to store",
                base->source, (long long)base->ext[u], (long long)base->ext[base->col[a]]);
            goto fail;
        }
    }
    double t_arcs = gp_now();
    g2 = gp_graph_reweight(base, w, rw, err);
    w = rw = NULL; /* taken over */
    if (!g2) {
        rc = err ? err->code : GP_ENOMEM;
        goto fail;
    }
    if (base->turns) {
        uint64_t h = 0;
        T = turns_of(base, g2, tp, tk, ntk, st, &h, err);
        if (!T) {
            rc = err ? err->code : GP_ENOMEM;
            goto fail;
        }
        if (st->turns_changed) {
            /* the road weights alone do not tell penalties apart: the version says them too */
            g2->hash = mix64(g2->hash, h);
            snprintf(g2->version, sizeof g2->version, "%016llx", (unsigned long long)g2->hash);
        }
    }
    for (size_t i = 0; i < ns && known_sp; i++) {
        key3 *k = find(sk, nsk, sp[i].from, sp[i].to, 0);
        known_sp[i] = k && k->matched;
    }
    for (size_t i = 0; i < ns; i++) {
        key3 *k = find(sk, nsk, sp[i].from, sp[i].to, 0);
        st->speeds_unknown += !(k && k->matched);
    }
    for (size_t i = 0; i < nt; i++) {
        key3 *k = find(tk, ntk, tp[i].from, tp[i].via, tp[i].to);
        if (known_tp) known_tp[i] = k && k->matched;
        st->turns_unknown += !(k && k->matched);
    }
    g2->closed = st->arcs_closed > 0; /* closed arcs (speed 0): a cost through them is no route */
    double t1 = gp_now();
    st->build_ms = (t1 - t0) * 1e3;
    if (T) {
        /* customized from the serving version's CCH (g's turn graph), not the base's: only the
         * arcs whose weight differs from g's count as changed (engine.h gp_engine_attach_from) */
        const gp_turns *PT = g->turns;
        rc = gp_engine_attach_from(e, T->tg, PT ? PT->tg : NULL, err);
        if (rc != GP_OK) goto fail;
        g2->turns = T;
        g2->turns_free = gp_turns_free;
        T = NULL;
    }
    rc = gp_engine_attach(e, g2, err);
    if (rc != GP_OK) goto fail;
    st->attach_ms = (gp_now() - t1) * 1e3;
    /* where the build went (docs/operators.md event=cch_phases has the attach's phases) */
    GP_LOG(GP_LOG_DEBUG,
           "event=traffic_phases graph=%s arcs_ms=%.1f turns_ms=%.1f build_ms=%.1f "
           "attach_ms=%.1f arcs_changed=%llu",
           g2->version, (t_arcs - t0) * 1e3, (t1 - t_arcs) * 1e3, st->build_ms, st->attach_ms,
           (unsigned long long)st->arcs_changed);
    trim_start();
    *out = g2;
    free(sk);
    free(tk);
    free(used);
    free(from.slot);
    return GP_OK;
fail:
    gp_turns_free(T);
    gp_graph_unref(g2);
    free(sk);
    free(tk);
    free(w);
    free(rw);
    free(used);
    free(from.slot);
    return rc;
}
