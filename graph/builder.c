/* builder.c - the graph builder (graph.h gp_builder_*): nodes in first-mention order and arcs as
 * (tail, head, weight) triples of builder indices, cost scaling, and the finish that turns them
 * into a CSR graph.
 *
 * Lookups of external ids go through a direct array for small non-negative ids (the common DIMACS
 * / pgRouting case: ids 1..N) and an open-addressing hash for the rest. Finishing renumbers nodes in
 * ascending external-id order and lays the arcs out with a counting sort by tail (O(m)), then sorts
 * each row by (head, weight) (gp_graph_sort_rows) and hands the graph to gp_graph_complete
 * (graph.c: reverse CSR, id map, hash), so building scales to ~100M arcs in seconds.
 */
#include "graph/graph_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define grow gp_grow

/* ---------------------------------------------------------------------------------------------
 * Builder
 * ------------------------------------------------------------------------------------------- */

/* Ids in [0, DIRECT_SLACK + 4 * nodes) go to the direct array when it can grow to cover them. */
#define DIRECT_SLACK (1u << 16)
/* Largest direct array (entries): 2^31 ids = 8 GiB of uint32 would be silly; stop at 2^28. */
#define DIRECT_MAX (1ull << 28)

struct gp_builder {
    double scale;
    /* nodes, in first-mention order */
    uint64_t nn, ncap;
    int64_t *ids;
    double *lon, *lat; /* NULL until a node has coordinates; NaN for nodes without */
    char **names;      /* NULL until a node has a name */
    uint64_t ncoord_cap, nname_cap;
    /* external id -> builder index */
    uint32_t *direct; /* direct[id] for 0 <= id < dcap, GP_NONE when absent */
    uint64_t dcap;
    int64_t *hkeys; /* open addressing, hvals GP_NONE = empty */
    uint32_t *hvals;
    uint64_t hmask, hcount;
    /* arcs */
    uint64_t na, acap;
    uint32_t *au, *av, *aw;
    const gp_load_opts *guard; /* caps, deadline, cancel flag (gp_builder_guard), or NULL */
    gp_attrbuf *attr;          /* road attributes, NULL until the first gp_builder_add_road_arc */
    /* gp_builder_set_osm_id: (builder index, original id) pairs */
    uint64_t nosm, osmcap;
    uint32_t *osm_ix;
    int64_t *osm_orig;
    /* gp_builder_set_node_flags: (builder index, flags) pairs */
    uint64_t nnf, nfcap;
    uint32_t *nf_ix;
    uint8_t *nf_val;
    /* gp_builder_add_restriction: records as gp_graph.restr, arcs as insertion indices */
    uint32_t *restr;
    uint64_t nrestr, restrcap;
};

void gp_builder_guard(gp_builder *b, const gp_load_opts *o) { b->guard = o; }

gp_builder *gp_builder_new(double scale) {
    if (!(scale > 0) || !isfinite(scale)) scale = 1.0;
    gp_builder *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->scale = scale;
    return b;
}

void gp_builder_free(gp_builder *b) {
    if (!b) return;
    if (b->names) {
        for (uint64_t i = 0; i < b->nn; i++) free(b->names[i]);
        free(b->names);
    }
    free(b->ids);
    free(b->lon);
    free(b->lat);
    free(b->direct);
    free(b->hkeys);
    free(b->hvals);
    free(b->au);
    free(b->av);
    free(b->aw);
    gp_attrbuf_free(b->attr);
    free(b->osm_ix);
    free(b->osm_orig);
    free(b->nf_ix);
    free(b->nf_val);
    free(b->restr);
    free(b);
}

double gp_builder_scale(const gp_builder *b) { return b->scale; }
void gp_builder_set_scale(gp_builder *b, double scale) {
    if (scale > 0 && isfinite(scale)) b->scale = scale;
}
uint32_t gp_builder_nodes(const gp_builder *b) { return (uint32_t)b->nn; }
uint64_t gp_builder_arcs(const gp_builder *b) { return b->na; }

static uint32_t hash_find(const gp_builder *b, int64_t id) {
    if (!b->hcount) return GP_NONE;
    for (uint64_t s = gp_id_hash(id) & b->hmask;; s = (s + 1) & b->hmask) {
        if (b->hvals[s] == GP_NONE) return GP_NONE;
        if (b->hkeys[s] == id) return b->hvals[s];
    }
}

static int hash_put(gp_builder *b, int64_t id, uint32_t v) {
    if (!b->hvals || (b->hcount + 1) * 2 > b->hmask + 1) {
        uint64_t cap = b->hvals ? (b->hmask + 1) * 2 : 1024;
        int64_t *nk = malloc(cap * sizeof *nk);
        uint32_t *nv = malloc(cap * sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        memset(nv, 0xff, cap * sizeof *nv);
        uint64_t mask = cap - 1;
        if (b->hvals)
            for (uint64_t i = 0; i <= b->hmask; i++) {
                if (b->hvals[i] == GP_NONE) continue;
                uint64_t s = gp_id_hash(b->hkeys[i]) & mask;
                while (nv[s] != GP_NONE) s = (s + 1) & mask;
                nk[s] = b->hkeys[i];
                nv[s] = b->hvals[i];
            }
        free(b->hkeys);
        free(b->hvals);
        b->hkeys = nk;
        b->hvals = nv;
        b->hmask = mask;
    }
    uint64_t s = gp_id_hash(id) & b->hmask;
    while (b->hvals[s] != GP_NONE) s = (s + 1) & b->hmask;
    b->hkeys[s] = id;
    b->hvals[s] = v;
    b->hcount++;
    return 0;
}

/* Grows the direct array to cover ids < need (need <= DIRECT_MAX). */
static int direct_grow(gp_builder *b, uint64_t need) {
    uint64_t nc = b->dcap ? b->dcap : 1024;
    while (nc < need) nc *= 2;
    if (nc > DIRECT_MAX) nc = DIRECT_MAX;
    uint32_t *d = realloc(b->direct, nc * sizeof *d);
    if (!d) return -1;
    memset(d + b->dcap, 0xff, (nc - b->dcap) * sizeof *d);
    b->direct = d;
    b->dcap = nc;
    return 0;
}

/* Builder index of id, creating the node when new; GP_NONE with err filled on failure.
 * An id lives either in the direct array or in the hash; ids put in the hash while the direct
 * array was smaller stay there, so a direct miss falls back to the hash. */
static uint32_t node_of(gp_builder *b, int64_t id, gp_err *err) {
    if (id >= 0 && (uint64_t)id < b->dcap) {
        uint32_t v = b->direct[id];
        if (v != GP_NONE) return v;
    }
    uint32_t v = hash_find(b, id);
    if (v != GP_NONE) return v;
    /* new node */
    if (b->nn >= (uint64_t)GP_NONE - 1) {
        gp_err_set(err, GP_ETOOBIG, "too many nodes (limit %u)", GP_NONE - 1);
        return GP_NONE;
    }
    if (b->guard && b->guard->max_nodes && b->nn >= b->guard->max_nodes) {
        gp_err_set(err, GP_ETOOBIG, "more than max_graph_nodes = %llu nodes",
                   (unsigned long long)b->guard->max_nodes);
        return GP_NONE;
    }
    if (grow((void **)&b->ids, &b->ncap, b->nn + 1, sizeof *b->ids)) goto oom;
    if (b->lon && b->ncoord_cap < b->ncap) {
        uint64_t c1 = b->ncoord_cap, c2 = b->ncoord_cap;
        if (grow((void **)&b->lon, &c1, b->ncap, sizeof(double)) ||
            grow((void **)&b->lat, &c2, b->ncap, sizeof(double)))
            goto oom;
        b->ncoord_cap = c1 < c2 ? c1 : c2;
    }
    if (b->names && b->nname_cap < b->ncap) {
        if (grow((void **)&b->names, &b->nname_cap, b->ncap, sizeof(char *))) goto oom;
    }
    v = (uint32_t)b->nn;
    if (id >= 0 && (uint64_t)id < b->dcap) {
        b->direct[id] = v;
    } else if (id >= 0 && (uint64_t)id < DIRECT_MAX &&
               (uint64_t)id < DIRECT_SLACK + 4 * (b->nn + 1)) {
        if (direct_grow(b, (uint64_t)id + 1)) goto oom;
        b->direct[id] = v;
    } else if (hash_put(b, id, v)) {
        goto oom;
    }
    b->ids[v] = id;
    if (b->lon) b->lon[v] = b->lat[v] = NAN;
    if (b->names) b->names[v] = NULL;
    b->nn++;
    return v;
oom:
    gp_err_set(err, GP_ENOMEM, "out of memory adding node %lld", (long long)id);
    return GP_NONE;
}

int gp_builder_reserve(gp_builder *b, uint64_t nodes, uint64_t arcs, gp_err *err) {
    if (nodes && grow((void **)&b->ids, &b->ncap, nodes, sizeof *b->ids)) goto oom;
    if (nodes + 1 <= DIRECT_MAX && b->dcap < nodes + 1 && direct_grow(b, nodes + 1)) goto oom;
    if (arcs > b->acap) {
        uint64_t c1 = b->acap, c2 = b->acap, c3 = b->acap;
        if (grow((void **)&b->au, &c1, arcs, 4) || grow((void **)&b->av, &c2, arcs, 4) ||
            grow((void **)&b->aw, &c3, arcs, 4))
            goto oom;
        b->acap = arcs;
    }
    return GP_OK;
oom:
    return gp_err_set(err, GP_ENOMEM, "out of memory reserving %llu nodes / %llu arcs",
                      (unsigned long long)nodes, (unsigned long long)arcs);
}

int gp_builder_add_node(gp_builder *b, int64_t id, int has_coord, double lon, double lat,
                        const char *name, gp_err *err) {
    uint32_t v = node_of(b, id, err);
    if (v == GP_NONE) return err ? err->code : GP_ENOMEM;
    if (has_coord) {
        if (!isfinite(lon) || !isfinite(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90)
            return gp_err_set(err, GP_EPARSE, "node %lld: coordinates (%g, %g) are not a lon/lat",
                              (long long)id, lon, lat);
        if (!b->lon) {
            b->lon = malloc(b->ncap * sizeof(double));
            b->lat = malloc(b->ncap * sizeof(double));
            if (!b->lon || !b->lat) {
                free(b->lon);
                free(b->lat);
                b->lon = b->lat = NULL;
                return gp_err_set(err, GP_ENOMEM, "out of memory for coordinates");
            }
            b->ncoord_cap = b->ncap;
            for (uint64_t i = 0; i < b->nn; i++) b->lon[i] = b->lat[i] = NAN;
        }
        b->lon[v] = lon;
        b->lat[v] = lat;
    }
    if (name) {
        if (!b->names) {
            b->names = calloc(b->ncap, sizeof(char *));
            if (!b->names) return gp_err_set(err, GP_ENOMEM, "out of memory for names");
            b->nname_cap = b->ncap;
        }
        char *copy = strdup(name);
        if (!copy) return gp_err_set(err, GP_ENOMEM, "out of memory for names");
        free(b->names[v]);
        b->names[v] = copy;
    }
    return GP_OK;
}

int gp_builder_add_arc(gp_builder *b, int64_t u, int64_t v, uint32_t w, gp_err *err) {
    if (b->na >= UINT32_MAX)
        return gp_err_set(err, GP_ETOOBIG, "too many arcs (limit %u)", UINT32_MAX - 1);
    if (b->guard) {
        if (b->guard->max_arcs && b->na >= b->guard->max_arcs)
            return gp_err_set(err, GP_ETOOBIG, "more than max_graph_arcs = %llu arcs",
                              (unsigned long long)b->guard->max_arcs);
        int rc;
        if ((b->na & 0xffff) == 0 && (rc = gp_load_check_time(b->guard, err))) return rc;
    }
    uint32_t iu = node_of(b, u, err);
    if (iu == GP_NONE) return err ? err->code : GP_ENOMEM;
    uint32_t iv = node_of(b, v, err);
    if (iv == GP_NONE) return err ? err->code : GP_ENOMEM;
    if (b->na >= b->acap) {
        uint64_t c1 = b->acap, c2 = b->acap, c3 = b->acap;
        if (grow((void **)&b->au, &c1, b->na + 1, 4) || grow((void **)&b->av, &c2, b->na + 1, 4) ||
            grow((void **)&b->aw, &c3, b->na + 1, 4))
            return gp_err_set(err, GP_ENOMEM, "out of memory at arc %llu",
                              (unsigned long long)b->na);
        b->acap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
    }
    if (b->attr && gp_attrbuf_push(b->attr, NULL))
        return gp_err_set(err, GP_ENOMEM, "out of memory at arc %llu", (unsigned long long)b->na);
    b->au[b->na] = iu;
    b->av[b->na] = iv;
    b->aw[b->na] = w;
    b->na++;
    return GP_OK;
}

/* 1 when a non-negative cost is stored at scale without overflow and within 1/1000 (the rule of
 * gp_builder_cost). */
static int cost_fits(double cost, double scale) {
    double s = cost * scale;
    if (!(s < 4294967295.5)) return 0;
    return !(cost > 0 && fabs((double)llround(s) - s) > 1e-3 * s);
}

void gp_scale_fit_init(gp_scale_fit *f) {
    memset(f, 0, sizeof *f);
    f->integral = 1;
    f->ok = (1u << 10) - 1;
}

void gp_scale_fit_add(gp_scale_fit *f, double cost) {
    if (!(cost >= 0) || !isfinite(cost)) return;
    f->n++;
    if (cost != floor(cost)) f->integral = 0;
    if (cost > 0 && (f->min_pos == 0 || cost < f->min_pos)) f->min_pos = cost;
    if (cost > f->max) f->max = cost;
    double sc = 1;
    for (int k = 0; k < 10; k++, sc *= 10)
        if ((f->ok >> k & 1u) && !cost_fits(cost, sc)) f->ok &= ~(1u << k);
}

int gp_scale_fit_pick(const gp_scale_fit *f, double *scale, gp_err *err) {
    if (f->integral && (f->ok & 1u)) {
        *scale = GP_SCALE_INTEGER;
        return GP_OK;
    }
    if (f->ok & (1u << 3)) {
        *scale = GP_SCALE_DEFAULT_FRACTIONAL;
        return GP_OK;
    }
    double sc = 1;
    for (int k = 0; k < 10; k++, sc *= 10)
        if (f->ok >> k & 1u) {
            *scale = sc;
            return GP_OK;
        }
    return gp_err_set(
        err, GP_EPARSE,
        "no fixed-point scale from 1 to 1e9 keeps every cost within 1/1000 and under "
        "%u: costs range from %g to %g (give an explicit scale, or rescale the costs)",
        UINT32_MAX, f->min_pos, f->max);
}

int gp_builder_add_road_arc(gp_builder *b, int64_t u, int64_t v, uint32_t w, const gp_road_attr *ra,
                            gp_err *err) {
    if (!b->attr) { /* first arc with attributes: the arcs before it get empty ones */
        b->attr = gp_attrbuf_new();
        for (uint64_t i = 0; b->attr && i < b->na; i++)
            if (gp_attrbuf_push(b->attr, NULL)) {
                gp_attrbuf_free(b->attr);
                b->attr = NULL;
            }
        if (!b->attr) return gp_err_set(err, GP_ENOMEM, "out of memory for road attributes");
    }
    gp_attrbuf *a = b->attr;
    b->attr = NULL; /* the plain arc must not push an empty record */
    int rc = gp_builder_add_arc(b, u, v, w, err);
    b->attr = a;
    if (rc) return rc;
    if (gp_attrbuf_push(a, ra)) {
        b->na--; /* keep arcs and attributes in step */
        return gp_err_set(err, GP_ENOMEM, "out of memory for road attributes at arc %llu",
                          (unsigned long long)b->na);
    }
    return GP_OK;
}

int gp_builder_set_osm_id(gp_builder *b, int64_t id, int64_t osm_id, gp_err *err) {
    uint32_t v = node_of(b, id, err);
    if (v == GP_NONE) return err ? err->code : GP_ENOMEM;
    uint64_t c1 = b->osmcap, c2 = b->osmcap;
    if (grow((void **)&b->osm_ix, &c1, b->nosm + 1, sizeof *b->osm_ix) ||
        grow((void **)&b->osm_orig, &c2, b->nosm + 1, sizeof *b->osm_orig))
        return gp_err_set(err, GP_ENOMEM, "out of memory for original node ids");
    b->osmcap = c1 < c2 ? c1 : c2;
    b->osm_ix[b->nosm] = v;
    b->osm_orig[b->nosm++] = osm_id;
    return GP_OK;
}

int gp_builder_set_node_flags(gp_builder *b, int64_t id, uint8_t flags, gp_err *err) {
    if (!flags) return GP_OK;
    uint32_t v = node_of(b, id, err);
    if (v == GP_NONE) return err ? err->code : GP_ENOMEM;
    uint64_t c1 = b->nfcap, c2 = b->nfcap;
    if (grow((void **)&b->nf_ix, &c1, b->nnf + 1, sizeof *b->nf_ix) ||
        grow((void **)&b->nf_val, &c2, b->nnf + 1, sizeof *b->nf_val))
        return gp_err_set(err, GP_ENOMEM, "out of memory for node flags");
    b->nfcap = c1 < c2 ? c1 : c2;
    b->nf_ix[b->nnf] = v;
    b->nf_val[b->nnf++] = flags;
    return GP_OK;
}

int gp_builder_add_restriction(gp_builder *b, int kind, const uint64_t *arcs, uint32_t k,
                               gp_err *err) {
    if ((kind != GP_RESTR_NO && kind != GP_RESTR_ONLY) || k < 2)
        return gp_err_set(err, GP_EINVAL, "a turn restriction needs a kind and at least 2 arcs");
    for (uint32_t i = 0; i < k; i++)
        if (arcs[i] >= b->na)
            return gp_err_set(err, GP_EINVAL, "turn restriction: no arc %llu (%llu arcs so far)",
                              (unsigned long long)arcs[i], (unsigned long long)b->na);
    if (grow((void **)&b->restr, &b->restrcap, b->nrestr + 2 + k, sizeof *b->restr))
        return gp_err_set(err, GP_ENOMEM, "out of memory for turn restrictions");
    b->restr[b->nrestr++] = (uint32_t)kind;
    b->restr[b->nrestr++] = k;
    for (uint32_t i = 0; i < k; i++) b->restr[b->nrestr++] = (uint32_t)arcs[i];
    return GP_OK;
}

int gp_builder_cost(const gp_builder *b, double cost, uint32_t *w, gp_err *err) {
    if (isnan(cost) || isinf(cost))
        return gp_err_set(err, GP_EPARSE, "cost %g is not a finite number", cost);
    if (cost < 0) return gp_err_set(err, GP_EPARSE, "cost %g is negative", cost);
    double s = cost * b->scale;
    if (!(s < 4294967295.5))
        return gp_err_set(err, GP_EPARSE,
                          "cost %g at scale %g exceeds the largest stored weight %u; use a smaller "
                          "--scale (at most %g)",
                          cost, b->scale, UINT32_MAX, floor((double)UINT32_MAX / cost));
    long long r = llround(s);
    if (cost > 0 && fabs((double)r - s) > 1e-3 * s) {
        /* the smallest power-of-ten scale keeping 1/1000 relative precision */
        double need = b->scale;
        while (need < 1e15 && fabs((double)llround(cost * need) - cost * need) > 1e-3 * cost * need)
            need *= 10;
        return gp_err_set(err, GP_EPARSE,
                          "cost %g loses precision at scale %g (stored as %lld); use a larger "
                          "--scale (e.g. %g)",
                          cost, b->scale, r, need);
    }
    *w = (uint32_t)r;
    return GP_OK;
}

/* qsort comparators */
static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
typedef struct id_ix {
    int64_t id;
    uint32_t ix;
} id_ix;
static int cmp_id_ix(const void *a, const void *b) {
    int64_t x = ((const id_ix *)a)->id, y = ((const id_ix *)b)->id;
    return x < y ? -1 : x > y;
}

/* Sorts by id: LSD radix sort in four 16-bit passes over the sign-flipped key (passes where every
 * key has the same digit are skipped), qsort for small inputs or when scratch memory is short. */
static void sort_id_ix(id_ix *a, uint64_t n) {
    id_ix *tmp = n >= 4096 ? malloc(n * sizeof *tmp) : NULL;
    uint64_t *count = tmp ? malloc(65536 * sizeof *count) : NULL;
    if (!count) {
        free(tmp);
        qsort(a, (size_t)n, sizeof *a, cmp_id_ix);
        return;
    }
    id_ix *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (uint64_t i = 0; i < n; i++)
            count[(((uint64_t)src[i].id ^ (1ULL << 63)) >> shift) & 0xffff]++;
        if (count[(((uint64_t)src[0].id ^ (1ULL << 63)) >> shift) & 0xffff] == n) continue;
        uint64_t sum = 0;
        for (int d = 0; d < 65536; d++) {
            uint64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[count[(((uint64_t)src[i].id ^ (1ULL << 63)) >> shift) & 0xffff]++] = src[i];
        id_ix *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(count);
    free(tmp);
}

/* Sorts arcs [lo, hi) of one row by (head, weight); tmp holds hi - lo uint64 scratch. */
static void sort_row(uint32_t *col, uint32_t *w, uint64_t lo, uint64_t hi, uint64_t *tmp) {
    uint64_t len = hi - lo;
    if (len < 2) return;
    int sorted = 1;
    for (uint64_t i = lo + 1; i < hi && sorted; i++)
        if (col[i] < col[i - 1] || (col[i] == col[i - 1] && w[i] < w[i - 1])) sorted = 0;
    if (sorted) return;
    if (len <= 24) {
        for (uint64_t i = lo + 1; i < hi; i++) {
            uint32_t c = col[i], x = w[i];
            uint64_t j = i;
            while (j > lo && (col[j - 1] > c || (col[j - 1] == c && w[j - 1] > x))) {
                col[j] = col[j - 1];
                w[j] = w[j - 1];
                j--;
            }
            col[j] = c;
            w[j] = x;
        }
        return;
    }
    for (uint64_t i = 0; i < len; i++) tmp[i] = ((uint64_t)col[lo + i] << 32) | w[lo + i];
    qsort(tmp, (size_t)len, sizeof *tmp, cmp_u64);
    for (uint64_t i = 0; i < len; i++) {
        col[lo + i] = (uint32_t)(tmp[i] >> 32);
        w[lo + i] = (uint32_t)tmp[i];
    }
}

/* Sorting every row of a CSR (row, col, w) by (col, w) on parallel threads. */
typedef struct rowsort_ctx {
    const uint32_t *row;
    uint32_t *col, *w;
    uint32_t maxdeg; /* longest row, for the scratch buffer */
    int failed;
} rowsort_ctx;

static void rowsort_range(void *vctx, uint64_t begin, uint64_t end) {
    rowsort_ctx *c = vctx;
    uint64_t *tmp = c->maxdeg > 24 ? malloc((size_t)c->maxdeg * sizeof *tmp) : NULL;
    if (c->maxdeg > 24 && !tmp) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (uint64_t u = begin; u < end; u++) sort_row(c->col, c->w, c->row[u], c->row[u + 1], tmp);
    free(tmp);
}

int gp_graph_sort_rows(const uint32_t *row, uint32_t *col, uint32_t *w, uint32_t n,
                       uint32_t maxdeg) {
    rowsort_ctx rc = {row, col, w, maxdeg, 0};
    gp_parallel_for(n, 0, rowsort_range, &rc);
    return rc.failed ? -1 : 0;
}

/* Row sort that carries each arc's builder index (origin) along, ordered by (head, weight,
 * origin) so arcs with attributes keep a deterministic order. */
typedef struct arc3 {
    uint32_t col, w, origin;
} arc3;
static int cmp_arc3(const void *a, const void *b) {
    const arc3 *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    if (x->w != y->w) return x->w < y->w ? -1 : 1;
    return x->origin < y->origin ? -1 : x->origin > y->origin;
}
static int sort_rows_origin(const uint32_t *row, uint32_t *col, uint32_t *w, uint32_t *origin,
                            uint32_t n, uint32_t maxdeg) {
    arc3 *tmp = malloc((size_t)(maxdeg ? maxdeg : 1) * sizeof *tmp);
    if (!tmp) return -1;
    for (uint32_t u = 0; u < n; u++) {
        uint32_t lo = row[u], len = row[u + 1] - row[u];
        if (len < 2) continue;
        for (uint32_t i = 0; i < len; i++) tmp[i] = (arc3){col[lo + i], w[lo + i], origin[lo + i]};
        qsort(tmp, len, sizeof *tmp, cmp_arc3);
        for (uint32_t i = 0; i < len; i++) {
            col[lo + i] = tmp[i].col;
            w[lo + i] = tmp[i].w;
            origin[lo + i] = tmp[i].origin;
        }
    }
    free(tmp);
    return 0;
}

gp_graph *gp_builder_finish(gp_builder *b, const char *source, const char *format, int directed,
                            gp_err *err) {
    gp_graph *g = NULL;
    uint32_t *remap = NULL, *perm = NULL, *cursor = NULL, *origin = NULL;
    id_ix *hs = NULL;
    if (!b) {
        gp_err_set(err, GP_EINVAL, "no builder");
        return NULL;
    }
    if (b->nn == 0) {
        gp_err_set(err, GP_EPARSE, "%s: empty graph (no node)", source ? source : "graph");
        goto fail;
    }
    const uint32_t n = (uint32_t)b->nn;
    const uint32_t m = (uint32_t)b->na;
    g = calloc(1, sizeof *g);
    remap = malloc((size_t)n * sizeof *remap);
    perm = malloc((size_t)n * sizeof *perm);
    if (!g || !remap || !perm) goto oom;

    /* 1. ascending external-id order: the direct array is sorted by construction; hash ids are
     *    sorted separately and merged in. */
    uint64_t nh = 0;
    if (b->hcount) {
        hs = malloc(b->hcount * sizeof *hs);
        if (!hs) goto oom;
        for (uint64_t s = 0; s <= b->hmask; s++)
            if (b->hvals[s] != GP_NONE) hs[nh++] = (id_ix){b->hkeys[s], b->hvals[s]};
        sort_id_ix(hs, nh);
    }
    {
        uint64_t k = 0, h = 0;
        for (uint64_t id = 0; id < b->dcap; id++) {
            uint32_t v = b->direct[id];
            if (v == GP_NONE) continue;
            while (h < nh && hs[h].id < (int64_t)id) perm[k++] = hs[h++].ix;
            perm[k++] = v;
        }
        while (h < nh) perm[k++] = hs[h++].ix;
        free(hs);
        hs = NULL;
        free(b->direct);
        b->direct = NULL;
        b->dcap = 0;
    }
    for (uint32_t k = 0; k < n; k++) remap[perm[k]] = k;

    /* 2. node arrays in internal order */
    g->n = n;
    g->m = m;
    g->scale = b->scale;
    g->ext = malloc((size_t)n * sizeof *g->ext);
    if (!g->ext) goto oom;
    for (uint32_t k = 0; k < n; k++) g->ext[k] = b->ids[perm[k]];
    if (b->nosm) {
        g->osm_id = malloc((size_t)n * sizeof *g->osm_id);
        if (!g->osm_id) goto oom;
        memcpy(g->osm_id, g->ext, (size_t)n * sizeof *g->osm_id);
        for (uint64_t i = 0; i < b->nosm; i++) g->osm_id[remap[b->osm_ix[i]]] = b->osm_orig[i];
    }
    if (b->nnf) {
        g->node_flags = calloc(n, 1);
        if (!g->node_flags) goto oom;
        for (uint64_t i = 0; i < b->nnf; i++) g->node_flags[remap[b->nf_ix[i]]] |= b->nf_val[i];
    }
    if (b->lon) {
        g->lon = malloc((size_t)n * sizeof(double));
        g->lat = malloc((size_t)n * sizeof(double));
        if (!g->lon || !g->lat) goto oom;
        for (uint32_t k = 0; k < n; k++) {
            g->lon[k] = b->lon[perm[k]];
            g->lat[k] = b->lat[perm[k]];
        }
        free(b->lon);
        free(b->lat);
        b->lon = b->lat = NULL;
    }
    if (b->names) {
        g->names = malloc((size_t)n * sizeof(char *));
        if (!g->names) goto oom;
        for (uint32_t k = 0; k < n; k++) {
            g->names[k] = b->names[perm[k]];
            b->names[perm[k]] = NULL; /* ownership moves to the graph */
        }
    }
    free(perm);
    perm = NULL;

    /* 3. forward CSR: counting sort by tail */
    g->row = calloc((size_t)n + 1, sizeof *g->row);
    g->col = malloc((size_t)(m ? m : 1) * sizeof *g->col);
    g->w = malloc((size_t)(m ? m : 1) * sizeof *g->w);
    cursor = malloc((size_t)n * sizeof *cursor);
    if (!g->row || !g->col || !g->w || !cursor) goto oom;
    if ((b->attr || b->nrestr) && !(origin = malloc((size_t)(m ? m : 1) * sizeof *origin)))
        goto oom;
    for (uint32_t i = 0; i < m; i++) g->row[remap[b->au[i]] + 1]++;
    uint32_t maxdeg = 0;
    for (uint32_t u = 0; u < n; u++) {
        if (g->row[u + 1] > maxdeg) maxdeg = g->row[u + 1];
        g->row[u + 1] += g->row[u];
    }
    memcpy(cursor, g->row, (size_t)n * sizeof *cursor);
    for (uint32_t i = 0; i < m; i++) {
        uint32_t p = cursor[remap[b->au[i]]]++;
        g->col[p] = remap[b->av[i]];
        g->w[p] = b->aw[i];
        if (origin) origin[p] = i;
    }
    free(cursor);
    cursor = NULL;
    free(remap);
    remap = NULL;
    free(b->au);
    free(b->av);
    free(b->aw);
    b->au = b->av = b->aw = NULL;

    /* 4. rows sorted by (head, weight); with road attributes by (head, weight, insertion order),
     *    and the attributes laid out in the same order */
    if (origin) {
        if (sort_rows_origin(g->row, g->col, g->w, origin, n, maxdeg) ||
            (b->attr && gp_attrbuf_emit(b->attr, g, origin)))
            goto oom;
        if (b->nrestr) { /* insertion index -> CSR arc, through origin's inverse */
            uint32_t *inv = malloc((size_t)(m ? m : 1) * sizeof *inv);
            if (!inv) goto oom;
            for (uint32_t p = 0; p < m; p++) inv[origin[p]] = p;
            for (uint64_t i = 0; i < b->nrestr; i += 2 + b->restr[i + 1])
                for (uint32_t j = 0; j < b->restr[i + 1]; j++)
                    b->restr[i + 2 + j] = inv[b->restr[i + 2 + j]];
            free(inv);
            g->restr = b->restr;
            g->restr_len = b->nrestr;
            b->restr = NULL;
        }
        free(origin);
        origin = NULL;
    } else if (gp_graph_sort_rows(g->row, g->col, g->w, n, maxdeg)) {
        goto oom;
    }

    gp_builder_free(b);
    return gp_graph_complete(g, source, format, directed, err);

oom:
    gp_err_set(err, GP_ENOMEM, "out of memory building the graph (%llu nodes, %llu arcs)",
               (unsigned long long)b->nn, (unsigned long long)b->na);
fail:
    free(hs);
    free(remap);
    free(perm);
    free(cursor);
    free(origin);
    gp_graph_destroy(g);
    gp_builder_free(b);
    return NULL;
}
