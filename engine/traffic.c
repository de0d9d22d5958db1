/* traffic.c - segment speed and turn penalty files (contract in traffic.h): parsing with line
 * numbers, mapping OSM node pairs onto road arcs (tail, shape points, head) and turns onto the
 * turn graph, and the new metric version as a reweighted graph attached to the engine.
 */
#include "engine/traffic.h"
#include "engine/cch.h"

#include "graph/osmseg.h"
#include "graph/parallel.h"
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

/* A field of 1 to 18 decimal digits with an optional sign, spaces or tabs around (the common
 * form, read without a copy): 1 with *out set, 0 for any other form (parse_id / parse_num read
 * those as before, so the same fields are accepted). */
static int plain_int(const char *f, size_t fl, int64_t *out) {
    while (fl && (*f == ' ' || *f == '\t')) f++, fl--;
    while (fl && (f[fl - 1] == ' ' || f[fl - 1] == '\t')) fl--;
    int neg = fl && *f == '-';
    if (fl && (*f == '-' || *f == '+')) f++, fl--;
    if (!fl || fl > 18) return 0;
    int64_t v = 0;
    for (size_t i = 0; i < fl; i++) {
        if (f[i] < '0' || f[i] > '9') return 0;
        v = v * 10 + (f[i] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

static int parse_id(const char *f, size_t fl, int64_t *out) {
    if (plain_int(f, fl, out)) return 1;
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
    int64_t iv;
    if (blank) *blank = 0;
    if (plain_int(f, fl, &iv)) {
        *out = (double)iv; /* exact: under 2^60 */
        return 1;
    }
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

/* Calls one(line, fields) for each non-empty line, numbered from line0 + 1; stops at the first
 * failure (its status). */
typedef int (*line_fn)(void *ctx, size_t line, const char **f, const size_t *fl, int nf,
                       gp_err *err);
static int each_line(const char *text, size_t len, size_t line0, line_fn one, void *ctx,
                     gp_err *err) {
    size_t pos = 0, line = line0;
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

/* A file of a few MB (road-like 24M: 480k lines, 40 ms on one CPU) is read in parts on all CPUs:
 * parts end at line ends; each part's lines are counted first, so that an error names the line
 * of the file, and the first part that fails gives the error (the file's first bad line). */
#define PARSE_PARTS 64
#define PARSE_PART_MIN (1u << 18)
typedef struct parse_job {
    const char *text;
    size_t at[PARSE_PARTS + 1]; /* part k: text[at[k], at[k + 1]) */
    size_t line0[PARSE_PARTS + 1];
    line_fn one;
    vec v[PARSE_PARTS];
    int rc[PARSE_PARTS];
    gp_err err[PARSE_PARTS];
} parse_job;

static void count_parts(void *jv, uint64_t lo, uint64_t hi) {
    parse_job *j = jv;
    for (uint64_t k = lo; k < hi; k++) {
        size_t n = 0;
        for (const char *p = j->text + j->at[k], *e = j->text + j->at[k + 1];
             (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
            n++;
        j->line0[k + 1] = n;
    }
}

static void parse_parts(void *jv, uint64_t lo, uint64_t hi) {
    parse_job *j = jv;
    for (uint64_t k = lo; k < hi; k++)
        j->rc[k] = each_line(j->text + j->at[k], j->at[k + 1] - j->at[k], j->line0[k], j->one,
                             &j->v[k], &j->err[k]);
}

static int parse_all(const char *text, size_t len, line_fn one, size_t size, void **out, size_t *n,
                     const char *what, gp_err *err) {
    *out = NULL;
    *n = 0;
    parse_job *j = calloc(1, sizeof *j);
    if (!j) return gp_err_set(err, GP_ENOMEM, "out of memory reading the %s", what);
    j->text = text;
    j->one = one;
    int parts = len >= (size_t)PARSE_PARTS * PARSE_PART_MIN ? PARSE_PARTS
                                                            : (int)(len / PARSE_PART_MIN) + 1;
    for (int k = 1; k < parts; k++) { /* each part from the line after its share's start */
        size_t p = len * (size_t)k / (size_t)parts;
        const char *nl = p < len ? memchr(text + p, '\n', len - p) : NULL;
        p = nl ? (size_t)(nl - text) + 1 : len;
        j->at[k] = p > j->at[k - 1] ? p : j->at[k - 1];
    }
    j->at[parts] = len;
    for (int k = 0; k < parts; k++) j->v[k].size = size;
    gp_parallel_for_dynamic((uint64_t)parts, parts > 1 ? 0 : 1, 1, count_parts, j);
    for (int k = 0; k < parts; k++) j->line0[k + 1] += j->line0[k];
    gp_parallel_for_dynamic((uint64_t)parts, parts > 1 ? 0 : 1, 1, parse_parts, j);
    int rc = GP_OK;
    size_t total = 0;
    for (int k = 0; k < parts && rc == GP_OK; k++) {
        rc = j->rc[k];
        if (rc != GP_OK && err) *err = j->err[k];
        total += j->v[k].n;
    }
    if (rc == GP_OK && total == 0) rc = gp_err_set(err, GP_EINVAL, "the %s has no line", what);
    char *all = NULL;
    if (rc == GP_OK) { /* part 0's array grown to take the others */
        all = parts == 1 ? j->v[0].a : realloc(j->v[0].a, total * size);
        if (!all) rc = gp_err_set(err, GP_ENOMEM, "out of memory reading the %s", what);
        else j->v[0].a = NULL;
        size_t at = 0;
        for (int k = 1; all && k < parts; k++) {
            at += j->v[k - 1].n;
            if (j->v[k].n) memcpy(all + at * size, j->v[k].a, j->v[k].n * size);
        }
    }
    for (int k = 0; k < parts; k++) free(j->v[k].a);
    free(j);
    if (rc != GP_OK) return rc;
    *out = all;
    *n = total;
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
 * Lookup tables: the distinct keys of the entries in first-seen order, the last entry of a key
 * kept, found through an open-addressing hash (a file's cost is its entries, not their sort)
 * ------------------------------------------------------------------------------------------- */

typedef struct key3 {
    int64_t a, b, c;
    size_t idx;  /* the entry kept (the last one of its key) */
    int matched; /* some segment or turn of the graph is this key */
} key3;

typedef struct keyset {
    key3 *k;        /* the distinct keys */
    size_t n;       /* how many */
    uint32_t *slot; /* mask + 1 slots: key index + 1, 0 empty */
    size_t mask;
    uint32_t *of; /* per entry: the index of its key */
} keyset;

static uint64_t mix64(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0x100000001b3ULL;
}

static inline size_t key_hash(int64_t a, int64_t b, int64_t c) {
    uint64_t h = mix64(mix64(mix64(0, (uint64_t)a), (uint64_t)b), (uint64_t)c);
    h ^= h >> 33; /* murmur3's finalizer: the low bits index the table */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h;
}

static void keyset_free(keyset *s) {
    if (!s) return;
    free(s->k);
    free(s->slot);
    free(s->of);
    memset(s, 0, sizeof *s);
}

/* Fills a, b, c of k from entry i. */
typedef void (*key_fn)(const void *entries, size_t i, key3 *k);

/* An empty set with room for n keys; -1 when out of memory. */
static int keyset_init(keyset *s, size_t n) {
    memset(s, 0, sizeof *s);
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    s->k = malloc(sizeof *s->k * (n ? n : 1));
    s->slot = calloc(cap, sizeof *s->slot);
    s->of = malloc(sizeof *s->of * (n ? n : 1));
    s->mask = cap - 1;
    if (!s->k || !s->slot || !s->of || n >= UINT32_MAX) {
        keyset_free(s);
        return -1;
    }
    return 0;
}

/* Entry i of key q into s (room for it made by keyset_init): the index of its key, the entry
 * kept as the key's last. */
static uint32_t keyset_add(keyset *s, key3 q, size_t i) {
    size_t h = key_hash(q.a, q.b, q.c) & s->mask;
    for (;; h = (h + 1) & s->mask) {
        uint32_t x = s->slot[h];
        if (!x) {
            q.idx = i;
            s->k[s->n] = q;
            s->slot[h] = (uint32_t)++s->n;
            return (uint32_t)(s->n - 1);
        }
        key3 *e = &s->k[x - 1];
        if (e->a == q.a && e->b == q.b && e->c == q.c) {
            e->idx = i; /* the last entry of a key wins */
            return x - 1;
        }
    }
}

/* The keys of n entries; -1 when out of memory. */
static int keyset_build(keyset *s, const void *entries, size_t n, key_fn key) {
    if (keyset_init(s, n) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        key3 q = {0};
        key(entries, i, &q);
        s->of[i] = keyset_add(s, q, i);
    }
    return 0;
}

/* The keys of n entries on every CPU (a speed file of road-like 24M: about 500k lines, 30 ms on
 * one): each entry claims an empty slot or finds its key's (compare-and-swap on the slot, which
 * holds the first entry's index + 1 until the keys are numbered), the latest entry of a key kept
 * by an atomic maximum; then the keys numbered in slot order and each entry's key looked up. The
 * keys' order is the table's, not the file's: only for sets whose users do not depend on it (the
 * speeds: their arcs are sorted, their weights looked up). -1 when out of memory. From 2^18
 * lines: road-like 4M's 81k-line files took 6.5 ms p50 this way against 4.3 on one CPU (threads
 * started four times over, on a machine busy with routes). */
#define KEYSET_PAR_MIN (1u << 18)
#define KEYSET_PAR_CHUNKS 256
typedef struct kpar_job {
    keyset *s;
    const void *entries;
    size_t n;
    key_fn key;
    uint32_t *last;  /* per slot: the latest entry's index + 1, then its key's index */
    uint32_t *eslot; /* per entry: its key's slot */
    uint32_t cnt[KEYSET_PAR_CHUNKS + 1];
} kpar_job;

static void kpar_insert(void *jv, uint64_t lo, uint64_t hi) {
    kpar_job *j = jv;
    keyset *s = j->s;
    for (uint64_t i = lo; i < hi; i++) {
        key3 q = {0}, o = {0};
        j->key(j->entries, i, &q);
        size_t h = key_hash(q.a, q.b, q.c) & s->mask;
        for (;; h = (h + 1) & s->mask) {
            uint32_t x = __atomic_load_n(&s->slot[h], __ATOMIC_ACQUIRE), mine = (uint32_t)i + 1;
            if (!x && __atomic_compare_exchange_n(&s->slot[h], &x, mine, 0, __ATOMIC_ACQ_REL,
                                                  __ATOMIC_ACQUIRE))
                x = mine;
            if (x != mine) { /* another entry's: the same key? */
                j->key(j->entries, x - 1, &o);
                if (o.a != q.a || o.b != q.b || o.c != q.c) continue;
            }
            uint32_t cur = __atomic_load_n(&j->last[h], __ATOMIC_RELAXED);
            while (cur < mine && !__atomic_compare_exchange_n(&j->last[h], &cur, mine, 1,
                                                              __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
            j->eslot[i] = (uint32_t)h;
            break;
        }
    }
}

static void kpar_count(void *jv, uint64_t lo, uint64_t hi) {
    kpar_job *j = jv;
    size_t cap = j->s->mask + 1;
    for (uint64_t c = lo; c < hi; c++) {
        uint32_t k = 0;
        for (size_t h = cap * c / KEYSET_PAR_CHUNKS; h < cap * (c + 1) / KEYSET_PAR_CHUNKS; h++)
            k += j->s->slot[h] != 0;
        j->cnt[c + 1] = k;
    }
}

static void kpar_number(void *jv, uint64_t lo, uint64_t hi) {
    kpar_job *j = jv;
    keyset *s = j->s;
    size_t cap = s->mask + 1;
    for (uint64_t c = lo; c < hi; c++) {
        uint32_t k = j->cnt[c];
        for (size_t h = cap * c / KEYSET_PAR_CHUNKS; h < cap * (c + 1) / KEYSET_PAR_CHUNKS; h++) {
            if (!s->slot[h]) continue;
            key3 q = {0};
            j->key(j->entries, s->slot[h] - 1, &q);
            q.idx = j->last[h] - 1;
            s->k[k] = q;
            s->slot[h] = k + 1; /* from here on: the key's index + 1, as keyset_add's */
            k++;
        }
    }
}

static void kpar_of(void *jv, uint64_t lo, uint64_t hi) {
    kpar_job *j = jv;
    for (uint64_t i = lo; i < hi; i++) j->s->of[i] = j->s->slot[j->eslot[i]] - 1;
}

static int keyset_build_par(keyset *s, const void *entries, size_t n, key_fn key) {
    if (keyset_init(s, n) != 0) return -1;
    kpar_job *j = calloc(1, sizeof *j);
    uint32_t *last = calloc(s->mask + 1, sizeof *last), *eslot = malloc(sizeof *eslot * n);
    if (!j || !last || !eslot) {
        free(j);
        free(last);
        free(eslot);
        keyset_free(s);
        return -1;
    }
    *j = (kpar_job){.s = s, .entries = entries, .n = n, .key = key, .last = last, .eslot = eslot};
    gp_parallel_for_dynamic(n, 0, 0, kpar_insert, j);
    gp_parallel_for_dynamic(KEYSET_PAR_CHUNKS, 0, 1, kpar_count, j);
    for (int c = 0; c < KEYSET_PAR_CHUNKS; c++) j->cnt[c + 1] += j->cnt[c];
    s->n = j->cnt[KEYSET_PAR_CHUNKS];
    gp_parallel_for_dynamic(KEYSET_PAR_CHUNKS, 0, 1, kpar_number, j);
    gp_parallel_for_dynamic(n, 0, 0, kpar_of, j);
    free(j);
    free(last);
    free(eslot);
    return 0;
}

static key3 *keyset_find(const keyset *s, int64_t a, int64_t b, int64_t c) {
    for (size_t h = key_hash(a, b, c) & s->mask;; h = (h + 1) & s->mask) {
        uint32_t x = s->slot[h];
        if (!x) return NULL;
        key3 *e = &s->k[x - 1];
        if (e->a == a && e->b == b && e->c == c) return e;
    }
}

static void speed_key(const void *entries, size_t i, key3 *k) {
    const gp_speed_entry *e = (const gp_speed_entry *)entries + i;
    k->a = e->from, k->b = e->to;
}

static void turn_key(const void *entries, size_t i, key3 *k) {
    const gp_turn_entry *e = (const gp_turn_entry *)entries + i;
    k->a = e->from, k->b = e->via, k->c = e->to;
}

int gp_traffic_covered(const gp_traffic_set *sets, int nsets, const unsigned char *drop,
                       unsigned char *covered) {
    /* from the newest set back, the sets kept entering the key sets as they are passed */
    int first = nsets, left = 0;
    size_t room[2] = {0, 0};
    for (int i = nsets - 1; i >= 0; i--)
        if (drop[i]) first = i;
    for (int i = first + 1; i < nsets; i++)
        if (!drop[i]) room[sets[i].turns != 0] += sets[i].n;
    if (first == nsets) return 0;
    keyset ks[2];
    if (keyset_init(&ks[0], room[0]) != 0) return -1;
    if (keyset_init(&ks[1], room[1]) != 0) {
        keyset_free(&ks[0]);
        return -1;
    }
    for (int i = nsets - 1; i >= first; i--) {
        const int t = sets[i].turns != 0;
        key_fn key = t ? turn_key : speed_key;
        int all = 1;
        for (size_t j = 0; j < sets[i].n && all; j++) {
            key3 q = {0};
            key(sets[i].entries, j, &q);
            if (!drop[i]) keyset_add(&ks[t], q, j);
            else all = keyset_find(&ks[t], q.a, q.b, q.c) != NULL;
        }
        if (drop[i]) {
            covered[i] = (unsigned char)all;
            left += !all;
        }
    }
    keyset_free(&ks[0]);
    keyset_free(&ks[1]);
    return left;
}

/* ---------------------------------------------------------------------------------------------
 * Applying
 * ------------------------------------------------------------------------------------------- */

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

/* New weight of arc a (u -> v) of g under the speeds ks, some segment of which has one: returns 1
 * with *w set (GP_TRAFFIC_CLOSED for a closed one), -1 on overflow. */
static int arc_weight(const gp_graph *g, uint32_t a, uint32_t u, uint32_t v,
                      const gp_speed_entry *sp, const keyset *ks, uint32_t *w) {
    const double *slon = NULL, *slat = NULL;
    uint32_t ns = gp_graph_arc_shape(g, a, &slon, &slat);
    if (ns && !g->shape_osm_id) ns = 0; /* interior points without ids: the arc as one segment */
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
        key3 *e = keyset_find(ks, point_id(g, a, u, v, ns, i), point_id(g, a, u, v, ns, i + 1), 0);
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

/* Every segment a -> b into *buf (grown as needed to *cap entries; malloc'd, the caller frees
 * it): their count, or UINT32_MAX when out of memory. */
static uint32_t segs_all(const gp_osmseg *ix, int64_t a, int64_t b, gp_osmseg_hit **buf,
                         uint32_t *cap) {
    uint32_t n = gp_osmseg_find(ix, a, b, *buf, *cap);
    if (n <= *cap) return n;
    gp_osmseg_hit *m = realloc(*buf, sizeof *m * n);
    if (!m) return UINT32_MAX;
    *buf = m;
    *cap = n;
    return gp_osmseg_find(ix, a, b, m, n);
}

/* The segments of keys [lo, hi) through the index, in parallel: up to HITS of each. */
enum { HITS = 4 };
typedef struct find_job {
    const gp_osmseg *ix;
    const key3 *k;
    uint32_t *cnt;
    gp_osmseg_hit *hits; /* HITS per key */
} find_job;

static void find_range(void *ctx, uint64_t lo, uint64_t hi) {
    find_job *j = ctx;
    for (uint64_t i = lo; i < hi; i++)
        j->cnt[i] = gp_osmseg_find(j->ix, j->k[i].a, j->k[i].b, j->hits + i * HITS, HITS);
}

/* The arcs holding some segment of the speeds ks (graph/osmseg.h), ascending and distinct, into
 * *out (malloc'd); their count, or -1 when out of memory. */
static int64_t arcs_of(const gp_osmseg *ix, const keyset *ks, uint32_t **out) {
    const key3 *k = ks->k;
    size_t nk = ks->n, n = 0, cap = 0;
    uint32_t *cnt = malloc(sizeof *cnt * (nk ? nk : 1)), *arcs = NULL;
    gp_osmseg_hit *hits = malloc(sizeof *hits * HITS * (nk ? nk : 1)), *more = NULL;
    uint32_t mcap = 0;
    if (!cnt || !hits) goto oom;
    find_job fj = {ix, k, cnt, hits};
    gp_parallel_for_dynamic(nk, nk >= 2048 ? 0 : 1, 0, find_range, &fj);
    for (size_t i = 0; i < nk; i++) cap += cnt[i];
    if (cap >= UINT32_MAX || !(arcs = malloc(sizeof *arcs * (cap ? cap : 1)))) goto oom;
    for (size_t i = 0; i < nk; i++) {
        const gp_osmseg_hit *h = hits + i * HITS;
        if (cnt[i] > HITS) { /* a segment on many arcs (restriction copies): all of them */
            if (segs_all(ix, k[i].a, k[i].b, &more, &mcap) == UINT32_MAX) goto oom;
            h = more;
        }
        for (uint32_t x = 0; x < cnt[i]; x++) arcs[n++] = h[x].arc;
    }
    int64_t u = gp_sort_unique_u32(arcs, (uint32_t)n); /* ascending: as the CSR holds them */
    if (u < 0) goto oom;
    free(cnt);
    free(hits);
    free(more);
    *out = arcs;
    return u;
oom:
    free(arcs);
    free(cnt);
    free(hits);
    free(more);
    return -1;
}

/* The new weights of arcs[lo, hi) into nw[lo, hi) (r[i]: arc_weight's answer) and their tails,
 * in parallel. */
typedef struct arc_job {
    const gp_graph *g;
    const gp_speed_entry *sp;
    const keyset *ks;
    const uint32_t *arcs;
    uint32_t *nw, *tail;
    signed char *r;
    uint32_t *w, *rw; /* set_range: the version's */
} arc_job;

static void arc_range(void *ctx, uint64_t lo, uint64_t hi) {
    arc_job *j = ctx;
    const gp_graph *g = j->g;
    uint32_t u = lo < hi ? gp_graph_arc_tail(g, j->arcs[lo]) : 0;
    for (uint64_t i = lo; i < hi; i++) {
        uint32_t a = j->arcs[i]; /* ascending: the tail walks forward from the last one's */
        while (g->row[u + 1] <= a) u++;
        j->tail[i] = u;
        j->r[i] = (signed char)arc_weight(g, a, j->tail[i], g->col[a], j->sp, j->ks, &j->nw[i]);
    }
}

/* The changed arcs' new weights (arc_range's) written into the version's w, and into rw where an arc's reverse
 * entry is known (the one arc u -> v of its tail: its one entry of tail u in v's reverse row);
 * r[i] becomes 1 for an arc whose weight changed, 2 for one with parallel arcs u -> v, whose
 * reverse entry traffic_apply picks after, in arc order; 0 for one unchanged. Arcs are distinct,
 * so no entry is written twice. */
static void set_range(void *ctx, uint64_t lo, uint64_t hi) {
    arc_job *j = ctx;
    const gp_graph *g = j->g;
    for (uint64_t i = lo; i < hi; i++) {
        uint32_t a = j->arcs[i], x = j->nw[i], u = j->tail[i], v = g->col[a], par = 0;
        if (j->r[i] < 0) continue; /* too long: traffic_apply reports it */
        if (x == g->w[a]) {
            j->r[i] = 0;
            continue;
        }
        j->w[a] = x;
        for (uint32_t k = g->row[u]; k < g->row[u + 1]; k++) par += g->col[k] == v;
        j->r[i] = par > 1 ? 2 : 1;
        if (par > 1) continue;
        for (uint32_t k = g->rrow[v]; k < g->rrow[v + 1]; k++)
            if (g->rcol[k] == u) {
                j->rw[k] = x;
                break;
            }
    }
}

static inline uint32_t sat_add(uint32_t x, uint32_t y) {
    if (y == GP_TRAFFIC_CLOSED) return GP_TRAFFIC_CLOSED;
    uint64_t s = (uint64_t)x + y;
    return s >= GP_TRAFFIC_CLOSED ? GP_TRAFFIC_CLOSED - 1 : (uint32_t)s;
}

/* Every turn onto turn-graph node x closed. */
static void close_into(gp_graph *tg, uint32_t x) {
    for (uint32_t kr = tg->rrow[x]; kr < tg->rrow[x + 1]; kr++) {
        uint32_t a = tg->rcol[kr];
        tg->rw[kr] = GP_TRAFFIC_CLOSED;
        for (uint32_t k = tg->row[a]; k < tg->row[a + 1]; k++)
            if (tg->col[k] == x) tg->w[k] = GP_TRAFFIC_CLOSED;
    }
}

/* The penalty of turn entry e onto the turns leaving turn-graph node x (road arc a, u -> v) whose
 * next point is e's `to`. */
static void penalize(const gp_graph *base, const gp_graph *g2, gp_graph *tg, const gp_turns *BT,
                     uint32_t x, uint32_t v, key3 *e, const gp_turn_entry *tp, gp_traffic_stats *st,
                     uint64_t *h) {
    const double units_per_s = base->scale / base->unit_s;
    for (uint32_t k = tg->row[x]; k < tg->row[x + 1]; k++) {
        uint32_t y = tg->col[k], b = gp_turns_arc(BT, y), bv = base->col[b];
        if (point_id(base, b, v, bv, shape_ids(base, b), 1) != e->c) continue;
        e->matched = 1;
        double pen = tp[e->idx].penalty_s > 0 ? tp[e->idx].penalty_s : 0;
        double pu = floor(pen * units_per_s + 0.5);
        uint32_t val = sat_add(
            pu < (double)GP_TRAFFIC_CLOSED ? (uint32_t)pu : GP_TRAFFIC_CLOSED - 1, g2->w[b]);
        tg->w[k] = val;
        for (uint32_t kr = tg->rrow[y]; kr < tg->rrow[y + 1]; kr++)
            if (tg->rcol[kr] == x) tg->rw[kr] = val;
        *h = mix64(mix64(*h, k), val);
        st->turns_changed++;
    }
}

/* A growing list of turn-graph nodes: the tails of the turns a version may have changed. */
typedef struct tail_list {
    uint32_t *v;
    size_t n, cap;
    int oom;
} tail_list;

static void tails_push(tail_list *l, uint32_t x) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        uint32_t *v = cap < UINT32_MAX ? realloc(l->v, cap * sizeof *v) : NULL;
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = x;
}

/* The turn graph of g2 (a reweighted version of base whose weights differ from the base's only at
 * chg[0..nchg)): gp_turns_reweight_arcs, every turn into a closed arc closed, and the penalties of
 * tks, each found through the segment index ix (from -> via ends an arc at its head). *h
 * gets a hash of the turns changed. The turn graph lists the tails of every turn it may have
 * changed (gp_graph diff_tails): the turns onto the changed arcs' nodes and the penalized ones. */
static gp_turns *turns_of(const gp_graph *base, gp_graph *g2, const gp_osmseg *ix,
                          const uint32_t *chg, uint32_t nchg, const gp_turn_entry *tp,
                          const keyset *tks, gp_traffic_stats *st, uint64_t *h, gp_err *err) {
    key3 *tk = tks->k;
    size_t ntk = tks->n;
    const gp_turns *BT = base->turns;
    /* closed arcs weigh 0 while the turn graph is derived (turn + weight must not wrap), then
     * every turn into them is closed */
    uint32_t *closed = st->arcs_closed ? malloc(sizeof *closed * st->arcs_closed) : NULL;
    uint32_t nclosed = 0;
    if (st->arcs_closed && !closed) {
        gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
        return NULL;
    }
    for (uint32_t i = 0; closed && i < nchg; i++)
        if (g2->w[chg[i]] == GP_TRAFFIC_CLOSED) closed[nclosed++] = chg[i], g2->w[chg[i]] = 0;
    gp_turns *T = gp_turns_reweight_arcs(BT, g2, chg, nchg, err);
    for (uint32_t i = 0; i < nclosed; i++) g2->w[closed[i]] = GP_TRAFFIC_CLOSED;
    if (!T) {
        free(closed);
        return NULL;
    }
    gp_graph *tg = T->tg;
    tail_list tl = {0}, cl = {0}; /* penalized turns' tails; the closed arcs' nodes */
    for (uint32_t i = 0; i < nclosed; i++) {
        const uint32_t b = closed[i], *dup; /* its node, and its via-way duplicates */
        close_into(tg, b);
        tails_push(&cl, b);
        uint32_t nd = gp_turns_dups(BT, b, &dup);
        for (uint32_t d = 0; d < nd; d++) {
            close_into(tg, dup[d]);
            tails_push(&cl, dup[d]);
        }
    }
    free(closed);
    gp_osmseg_hit *hits = NULL;
    uint32_t hcap = 0;
    for (size_t i = 0; i < ntk; i++) {
        uint32_t nh = segs_all(ix, tk[i].a, tk[i].b, &hits, &hcap);
        if (nh == UINT32_MAX) {
            free(hits);
            free(tl.v);
            free(cl.v);
            gp_turns_free(T);
            gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
            return NULL;
        }
        for (uint32_t k = 0; k < nh; k++) {
            const uint32_t a = hits[k].arc, v = base->col[a], *dup;
            if (hits[k].piece != shape_ids(base, a))
                continue; /* from -> via must end at a's head */
            penalize(base, g2, tg, BT, a, v, &tk[i], tp, st, h);
            tails_push(&tl, a);
            uint32_t nd = gp_turns_dups(BT, a, &dup);
            for (uint32_t d = 0; d < nd; d++) {
                penalize(base, g2, tg, BT, dup[d], v, &tk[i], tp, st, h);
                tails_push(&tl, dup[d]);
            }
        }
    }
    free(hits);
    /* the reweight's list with these (out of memory: unknown, every node is read); the list
     * as it is when there are none (a speed file alone) */
    if (cl.n || tl.n || cl.oom || tl.oom) {
        uint32_t *dt = NULL, ndt = 0;
        if (tg->diff_tails && !tl.oom && !cl.oom)
            dt = gp_graph_tails_union(tg, cl.v, (uint32_t)cl.n, tl.v, (uint32_t)tl.n,
                                      tg->diff_tails, tg->ndiff_tails, &ndt);
        free(tg->diff_tails);
        tg->diff_tails = dt;
        tg->ndiff_tails = ndt;
    }
    free(tl.v);
    free(cl.v);
    if (nclosed || st->turns_changed) { /* weights raised past gp_turns_reweight's largest */
        tg->max_w = gp_weights_max(tg->w, tg->m); /* 120 M weights on road-like 24M's */
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
    if (gp_thread_detached(trim_main, NULL) != 0) atomic_store(&trimming, 0);
#endif
}

/* v[0..n) sorted and made distinct in a malloc'd copy (*nout its size); NULL when out of memory. */
static uint32_t *sorted_copy(const uint32_t *v, size_t n, uint32_t *nout) {
    uint32_t *c = malloc(sizeof *c * n + 4);
    if (!c) return NULL;
    if (n) memcpy(c, v, sizeof *c * n);
    size_t k = 1;
    while (k < n && c[k - 1] <= c[k]) k++;
    if (k >= n) { /* ascending already (the changed arcs, and so their tails): repeats dropped */
        uint32_t u = 0;
        for (size_t i = 0; i < n; i++)
            if (!u || c[u - 1] != c[i]) c[u++] = c[i];
        *nout = u;
        return c;
    }
    int64_t u = gp_sort_unique_u32(c, (uint32_t)n);
    if (u < 0) {
        free(c);
        return NULL;
    }
    *nout = (uint32_t)u;
    return c;
}

static int traffic_apply(gp_engine *e, const gp_graph *g, const gp_speed_entry *sp, size_t ns,
                         const gp_turn_entry *tp, size_t nt, gp_graph **out,
                         unsigned char *known_sp, unsigned char *known_tp, gp_traffic_stats *st,
                         gp_err *err) {
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
    double t0 = gp_now(), t_keys = t0, t_find = t0, t_weights = t0;
    int rc = GP_OK;
    keyset sks = {0}, tks = {0};
    uint32_t *w = NULL, *rw = NULL; /* the base's weights, then the speeds' */
    int wcopied = 0;
    if (gp_weights_dup(base, &w, &rw, &wcopied) != 0) w = rw = NULL;
    unsigned char *used = NULL;       /* reverse entries taken, when there are parallel arcs */
    uint32_t *chg = NULL, *nw = NULL; /* the arcs of the speeds; their new weights */
    uint32_t *ctail = NULL;           /* the changed arcs' tails (in nw) */
    signed char *res = NULL;
    int64_t nchg = 0;
    gp_graph *g2 = NULL;
    gp_turns *T = NULL;
    /* the speeds' keys on every CPU when there are many (their order is the table's) */
    if (!w || !rw ||
        (ns >= KEYSET_PAR_MIN ? keyset_build_par : keyset_build)(&sks, sp, ns, speed_key) != 0 ||
        keyset_build(&tks, tp, nt, turn_key) != 0) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
        goto fail;
    }
    size_t nsk = sks.n, ntk = tks.n;
    /* the segments of the entries, found through the index (not by reading every point) */
    const gp_osmseg *ix = nsk || ntk ? gp_osmseg_get(base, err) : NULL;
    if ((nsk || ntk) && !ix) {
        rc = err && err->code ? err->code : GP_ENOMEM;
        goto fail;
    }
    if (nsk) {
        t_keys = gp_now();
        nchg = arcs_of(ix, &sks, &chg);
        t_find = gp_now();
        if (nchg >= 0) {
            nw = malloc(sizeof *nw * 2 * (size_t)(nchg ? nchg : 1));
            res = malloc((size_t)(nchg ? nchg : 1));
        }
        if (nchg < 0 || !nw || !res) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
            goto fail;
        }
        /* each arc's new weight, in parallel (arc_job); then, in arc order, the changed ones and
         * their reverse entries: each changed arc takes the first entry of the reverse order from
         * its tail with the old weight not yet taken */
        arc_job j = {base, sp, &sks, chg, nw, nw + nchg, res, w, rw};
        ctail = j.tail;
        gp_parallel_for_dynamic((uint64_t)nchg, nchg >= 2048 ? 0 : 1, 0, arc_range, &j);
        t_weights = gp_now();
        /* the new weights in w and rw on all CPUs (~500k arcs of road-like 24M a file, each a few
         * rows read at random); then, in arc order, the changed ones kept and the reverse
         * entries of parallel arcs: each takes the first entry of the reverse order from its
         * tail with the old weight not yet taken */
        gp_parallel_for_dynamic((uint64_t)nchg, nchg >= 2048 ? 0 : 1, 0, set_range, &j);
        int64_t kept = 0;
        for (int64_t i = 0; i < nchg; i++) {
            uint32_t a = chg[i], x = nw[i];
            uint32_t u = j.tail[i], v = base->col[a];
            if (res[i] < 0) {
                rc = gp_err_set(err, GP_EINVAL,
                                "graph %s: a speed makes the arc %lld -> %lld too long to store",
                                base->source, (long long)base->ext[u], (long long)base->ext[v]);
                goto fail;
            }
            if (res[i] == 0) continue;
            j.tail[kept] = u; /* kept <= i: read already */
            chg[kept++] = a;
            st->arcs_closed += x == GP_TRAFFIC_CLOSED;
            if (res[i] != 2) continue;
            if (!used && !(used = calloc(base->m ? base->m : 1, 1))) {
                rc = gp_err_set(err, GP_ENOMEM, "out of memory applying traffic");
                goto fail;
            }
            for (uint32_t k = base->rrow[v]; k < base->rrow[v + 1]; k++)
                if (base->rcol[k] == u && !used[k] && base->rw[k] == base->w[a]) {
                    used[k] = 1;
                    rw[k] = x;
                    break;
                }
        }
        nchg = kept;
        st->arcs_changed = (uint32_t)kept;
    }
    double t_arcs = gp_now();
    /* the version from the base's and the arcs whose weight differs from it (ascending, each with
     * its weight): the same weights give the same version without a pass over every weight */
    uint64_t vh = base->hash;
    for (int64_t i = 0; i < nchg; i++) vh = mix64(mix64(vh, chg[i]), w[chg[i]]);
    if (nchg) vh = mix64(vh, 0x7370656564ULL);
    uint32_t mx = base->max_w; /* at least the version's largest weight (graph.h max_w) */
    for (int64_t i = 0; i < nchg; i++) mx = w[chg[i]] > mx ? w[chg[i]] : mx;
    g2 = gp_graph_reweight_versioned(base, w, rw, vh, mx, err);
    w = rw = NULL; /* taken over */
    if (!g2) {
        rc = err ? err->code : GP_ENOMEM;
        goto fail;
    }
    /* the changed arcs' tails (a road graph's CCH maps only their arcs) and the arcs (a cost
     * change on this version reweights its turn graph over them); unknown when out of memory */
    g2->diff_tails = sorted_copy(ctail, (size_t)nchg, &g2->ndiff_tails);
    g2->diff_arcs = sorted_copy(chg, (size_t)nchg, &g2->ndiff_arcs);
    if (base->turns) {
        uint64_t h = 0;
        T = turns_of(base, g2, ix, chg ? chg : (const uint32_t *)"", (uint32_t)nchg, tp, &tks, st,
                     &h, err);
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
    for (size_t i = 0; i < ns; i++) {
        int known = sks.k[sks.of[i]].matched;
        if (known_sp) known_sp[i] = (unsigned char)known;
        st->speeds_unknown += !known;
    }
    for (size_t i = 0; i < nt; i++) {
        int known = tks.k[tks.of[i]].matched;
        if (known_tp) known_tp[i] = (unsigned char)known;
        st->turns_unknown += !known;
    }
    g2->closed = st->arcs_closed > 0; /* closed arcs (speed 0): a cost through them is no route */
    double t1 = gp_now();
    st->build_ms = (t1 - t0) * 1e3;
    const gp_turns *GT = g->turns;
    if (g2->hash == g->hash && g2->closed == g->closed && !T == !GT &&
        (!T || T->tg->hash == GT->tg->hash)) {
        /* the weights g has already (an expiry the newer files cover, a file sent again): g
         * stays, with no customization and no new version */
        gp_turns_free(T);
        gp_graph_unref(g2);
        T = NULL;
        g2 = gp_graph_ref((gp_graph *)g);
        GP_LOG(GP_LOG_DEBUG, "event=traffic_phases graph=%s unchanged=1 build_ms=%.1f", g->version,
               st->build_ms);
        goto done;
    }
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
           "event=traffic_phases graph=%s arcs_ms=%.1f keys_ms=%.1f find_ms=%.1f weights_ms=%.1f "
           "turns_ms=%.1f build_ms=%.1f attach_ms=%.1f arcs_changed=%llu weights_copied=%d",
           g2->version, (t_arcs - t0) * 1e3, (t_keys - t0) * 1e3,
           nsk ? (t_find - t_keys) * 1e3 : 0.0, nsk ? (t_weights - t_find) * 1e3 : 0.0,
           (t1 - t_arcs) * 1e3, st->build_ms, st->attach_ms, (unsigned long long)st->arcs_changed,
           wcopied);
    trim_start();
done:
    *out = g2;
    keyset_free(&sks);
    keyset_free(&tks);
    free(used);
    free(chg);
    free(nw);
    free(res);
    return GP_OK;
fail:
    gp_turns_free(T);
    gp_graph_unref(g2);
    keyset_free(&sks);
    keyset_free(&tks);
    free(w);
    free(rw);
    free(used);
    free(chg);
    free(nw);
    free(res);
    return rc;
}

int gp_traffic_apply(gp_engine *e, const gp_graph *g, const gp_speed_entry *sp, size_t ns,
                     const gp_turn_entry *tp, size_t nt, gp_graph **out, unsigned char *known_sp,
                     unsigned char *known_tp, gp_traffic_stats *st, gp_err *err) {
    gp_engine_hold_background(g, 1); /* g's perfect pass waits: every CPU for the new version */
    int rc = traffic_apply(e, g, sp, ns, tp, nt, out, known_sp, known_tp, st, err);
    gp_engine_hold_background(g, 0);
    return rc;
}
