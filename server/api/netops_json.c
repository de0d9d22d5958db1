/* netops_json.c - JSON writers for routing tables and what-if changes (see netops_json.h). */
#include "server/api/netops_json.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_sbuf_free(gp_sbuf *s) {
    if (!s) return;
    free(s->p);
    s->p = NULL;
    s->len = s->cap = 0;
}

void gp_sbuf_reset(gp_sbuf *s) {
    s->len = 0;
    if (s->p) s->p[0] = '\0';
}

static int reserve(gp_sbuf *s, size_t extra) {
    if (s->oom) return -1;
    if (s->len + extra + 1 <= s->cap) return 0;
    size_t c = s->cap ? s->cap : 4096;
    while (c < s->len + extra + 1) c *= 2;
    char *p = realloc(s->p, c);
    if (!p) {
        s->oom = 1;
        return -1;
    }
    s->p = p;
    s->cap = c;
    return 0;
}

void gp_sbuf_add(gp_sbuf *s, const char *txt, size_t len) {
    if (reserve(s, len)) return;
    memcpy(s->p + s->len, txt, len);
    s->len += len;
    s->p[s->len] = '\0';
}

void gp_sbuf_printf(gp_sbuf *s, const char *fmt, ...) {
    va_list ap;
    for (int pass = 0; pass < 2; pass++) {
        size_t room = s->cap > s->len ? s->cap - s->len : 0;
        va_start(ap, fmt);
        int k = vsnprintf(room ? s->p + s->len : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if ((size_t)k < room) {
            s->len += (size_t)k;
            return;
        }
        if (reserve(s, (size_t)k)) return;
    }
}

void gp_sbuf_json_str(gp_sbuf *s, const char *str) {
    gp_sbuf_add(s, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
        if (*c == '"' || *c == '\\') {
            char e[2] = {'\\', (char)*c};
            gp_sbuf_add(s, e, 2);
        } else if (*c < 0x20) {
            gp_sbuf_printf(s, "\\u%04x", *c);
        } else {
            gp_sbuf_add(s, (const char *)c, 1);
        }
    }
    gp_sbuf_add(s, "\"", 1);
}

uint32_t gp_nj_scratch(const gp_rt *t) {
    uint32_t m = 1;
    for (uint32_t i = 0; i < t->n; i++)
        if (t->nb_off[i + 1] - t->nb_off[i] > m) m = t->nb_off[i + 1] - t->nb_off[i];
    return m;
}

static void put_dist(gp_sbuf *s, const gp_rt *t, uint64_t d) {
    if (d == GP_INF) gp_sbuf_add(s, "null", 4);
    else if (t->g->scale == 1.0) gp_sbuf_printf(s, "%llu", (unsigned long long)d);
    else gp_sbuf_printf(s, "%.15g", gp_graph_cost(t->g, d));
}

/* A node's name as a JSON string, null when it has none. */
static void put_name(gp_sbuf *s, const gp_graph *g, uint32_t v) {
    const char *n = gp_graph_name(g, v);
    if (n) gp_sbuf_json_str(s, n);
    else gp_sbuf_add(s, "null", 4);
}

/* ,"<key>":"name" when the graph has names. */
static void put_name_member(gp_sbuf *s, const gp_graph *g, const char *key, uint32_t v) {
    if (!g->names) return;
    gp_sbuf_printf(s, ",\"%s\":", key);
    put_name(s, g, v);
}

static void put_route_body(gp_sbuf *s, const gp_rt *t, uint32_t i, uint32_t j, uint32_t *scratch) {
    gp_sbuf_add(s, "\"weight\":", 9);
    put_dist(s, t, gp_rt_dist(t, i, j));
    gp_sbuf_add(s, ",\"next_hops\":[", 14);
    uint32_t c = gp_rt_next_hops(t, i, j, scratch);
    for (uint32_t k = 0; k < c; k++)
        gp_sbuf_printf(s, k ? ",%lld" : "%lld", (long long)t->g->ext[scratch[k]]);
    gp_sbuf_add(s, "]", 1);
    if (!t->g->names) return;
    gp_sbuf_printf(s, ",\"next_hop_names\":[");
    for (uint32_t k = 0; k < c; k++) {
        if (k) gp_sbuf_add(s, ",", 1);
        put_name(s, t->g, scratch[k]);
    }
    gp_sbuf_add(s, "]", 1);
}

void gp_nj_route(gp_sbuf *s, const gp_rt *t, uint32_t i, uint32_t j, uint32_t *scratch) {
    gp_sbuf_add(s, "{", 1);
    put_route_body(s, t, i, j, scratch);
    gp_sbuf_add(s, "}", 1);
}

void gp_nj_router(gp_sbuf *s, const gp_rt *t, uint32_t i, const char *extra, uint32_t *scratch) {
    const gp_graph *g = t->g;
    gp_sbuf_add(s, "{", 1);
    if (extra) gp_sbuf_add(s, extra, strlen(extra));
    gp_sbuf_printf(s, "\"router\":%lld,", (long long)g->ext[i]);
    if (gp_graph_name(g, i)) {
        gp_sbuf_add(s, "\"name\":", 7);
        gp_sbuf_json_str(s, gp_graph_name(g, i));
        gp_sbuf_add(s, ",", 1);
    }
    gp_sbuf_add(s, "\"routes\":[", 10);
    for (uint32_t j = 0; j < t->n; j++) {
        gp_sbuf_printf(s, j ? ",{\"destination\":%lld" : "{\"destination\":%lld",
                       (long long)g->ext[j]);
        put_name_member(s, g, "destination_name", j);
        gp_sbuf_add(s, ",", 1);
        put_route_body(s, t, i, j, scratch);
        gp_sbuf_add(s, "}", 1);
    }
    gp_sbuf_add(s, "]}", 2);
}

void gp_nj_change(gp_sbuf *s, const gp_rt *a, const gp_rt *b, gp_rt_pair p, uint32_t *scratch) {
    gp_sbuf_printf(s, "{\"router\":%lld", (long long)a->g->ext[p.router]);
    put_name_member(s, a->g, "router_name", p.router);
    gp_sbuf_printf(s, ",\"destination\":%lld", (long long)a->g->ext[p.dest]);
    put_name_member(s, a->g, "destination_name", p.dest);
    gp_sbuf_add(s, ",\"before\":", 10);
    gp_nj_route(s, a, p.router, p.dest, scratch);
    gp_sbuf_add(s, ",\"after\":", 9);
    gp_nj_route(s, b, p.router, p.dest, scratch);
    gp_sbuf_add(s, "}", 1);
}

void gp_nj_header(gp_sbuf *s, const char *graph, const gp_rt *t) {
    gp_sbuf_add(s, "\"graph\":", 8);
    gp_sbuf_json_str(s, graph);
    gp_sbuf_printf(s, ",\"version\":\"%s\",\"backend\":\"%s\",\"ecmp_max\":%u,\"weight_unit\":",
                   t->g->version, t->backend, t->ecmp_max);
    gp_sbuf_json_str(s, t->g->unit_name);
    gp_sbuf_add(s, ",", 1);
}

void gp_nj_what_if(gp_sbuf *s, const char *graph, const gp_rt *a, const gp_rt *b,
                   const gp_rt_pair *p, size_t np, uint32_t *scratch) {
    gp_sbuf_add(s, "{\"graph\":", 9);
    gp_sbuf_json_str(s, graph);
    gp_sbuf_printf(s, ",\"version\":\"%s\",\"what_if_version\":\"%s\",\"count\":%zu,\"changes\":[",
                   a->g->version, b->g->version, np);
    for (size_t k = 0; k < np; k++) {
        if (k) gp_sbuf_add(s, ",", 1);
        gp_nj_change(s, a, b, p[k], scratch);
    }
    gp_sbuf_add(s, "]}", 2);
}

/* ---- routers by name, demand files ---- */

static const gp_graph *sort_g;
static int cmp_name(const void *a, const void *b) {
    return strcmp(sort_g->names[*(const uint32_t *)a], sort_g->names[*(const uint32_t *)b]);
}

int gp_nj_names_init(gp_nj_names *nm, const gp_graph *g) {
    nm->g = g;
    nm->k = 0;
    nm->idx = malloc(((size_t)g->n + 1) * sizeof *nm->idx);
    if (!nm->idx) return -1;
    for (uint32_t v = 0; v < g->n && g->names; v++)
        if (g->names[v]) nm->idx[nm->k++] = v;
    static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&sort_mu);
    sort_g = g;
    qsort(nm->idx, nm->k, sizeof *nm->idx, cmp_name);
    pthread_mutex_unlock(&sort_mu);
    return 0;
}

uint32_t gp_nj_names_find(const gp_nj_names *nm, const char *s) {
    uint32_t lo = 0, hi = nm->k;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(nm->g->names[nm->idx[mid]], s);
        if (c == 0) return nm->idx[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    char *end;
    errno = 0;
    long long id = strtoll(s, &end, 10);
    if (*s && !*end && !errno) return gp_graph_index(nm->g, id);
    return GP_NONE;
}

void gp_nj_names_free(gp_nj_names *nm) {
    if (!nm) return;
    free(nm->idx);
    nm->idx = NULL;
}

int gp_nj_demands_csv(const gp_nj_names *nm, const char *body, size_t len, gp_nj_demand **out,
                      size_t *n, size_t max, char *err, size_t ecap) {
    size_t cap = 0, k = 0;
    gp_nj_demand *rows = NULL;
    long line = 0;
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        line++;
        char buf[512];
        size_t l = (size_t)(e - p);
        if (l && p[l - 1] == '\r') l--;
        if (l >= sizeof buf) {
            snprintf(err, ecap, "line %ld: longer than %zu bytes", line, sizeof buf - 1);
            goto fail;
        }
        memcpy(buf, p, l);
        buf[l] = 0;
        p = e + 1;
        if (!l || buf[0] == '#') continue;
        char *f[3], *save = NULL, *tok = strtok_r(buf, ",", &save);
        int nf = 0;
        while (tok && nf < 3) f[nf++] = tok, tok = strtok_r(NULL, ",", &save);
        if (nf != 3 || tok) {
            snprintf(err, ecap, "line %ld: expected source,destination,volume", line);
            goto fail;
        }
        for (int i = 0; i < 3; i++) { /* trim */
            while (*f[i] == ' ' || *f[i] == '"') f[i]++;
            size_t fl = strlen(f[i]);
            while (fl && (f[i][fl - 1] == ' ' || f[i][fl - 1] == '"')) f[i][--fl] = 0;
        }
        if (line == 1 && strcmp(f[2], "volume") == 0) continue;
        uint32_t s = gp_nj_names_find(nm, f[0]), d = gp_nj_names_find(nm, f[1]);
        char *ve;
        double v = strtod(f[2], &ve);
        if (s == GP_NONE || d == GP_NONE) {
            snprintf(err, ecap, "line %ld: unknown router '%.100s'", line,
                     s == GP_NONE ? f[0] : f[1]);
            goto fail;
        }
        if (!*f[2] || *ve || !isfinite(v) || v < 0) {
            snprintf(err, ecap, "line %ld: volume '%.64s' is not a number >= 0", line, f[2]);
            goto fail;
        }
        if (k == max) {
            snprintf(err, ecap, "more than max_demands (%zu) rows", max);
            goto fail;
        }
        if (k == cap) {
            cap = cap ? 2 * cap : 1024;
            gp_nj_demand *x = realloc(rows, cap * sizeof *x);
            if (!x) goto fail;
            rows = x;
        }
        rows[k++] = (gp_nj_demand){nm->g->ext[s], nm->g->ext[d], v};
    }
    *out = rows;
    *n = k;
    return 0;
fail:
    free(rows);
    return -1;
}
