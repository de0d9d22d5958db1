/* load_csv.c - pgRouting-style edge lists as CSV (plain or gzip).
 *
 * The first line is a header naming the columns (case-insensitive, any order, extra columns
 * ignored): source, target and cost are required; id, reverse_cost and x1, y1, x2, y2 are optional.
 * Each row is one edge. Directed (the default): cost >= 0 gives the arc source->target and
 * reverse_cost >= 0 the arc target->source; a negative (or empty reverse_cost) value means no arc.
 * Undirected (opts->undirected, pgRouting's directed=false): each of cost / reverse_cost that is
 * >= 0 gives arcs in both directions. x1,y1 / x2,y2 are the lon/lat of source / target (empty =
 * unknown). Fields may be double-quoted.
 *
 * Scale: opts->scale when > 0; otherwise the one gp_scale_fit picks for every cost of the file (1
 * when all are integers, else 1000 when it fits, else the power of ten that does). The whole file
 * is read before any arc is converted, so the rule sees every cost. Errors are "FILE:LINE: what is
 * wrong", naming the column but never quoting the field; no graph is returned then.
 */
#include "graph/graph_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROGRESS_LINES 10000000ULL
#define MAX_FIELDS 256

enum { C_SOURCE, C_TARGET, C_COST, C_REVERSE, C_X1, C_Y1, C_X2, C_Y2, C_ID, C_NCOLS };
static const char *const col_names[C_NCOLS] = {
    "source", "target", "cost", "reverse_cost", "x1", "y1", "x2", "y2", "id"};

typedef struct edge_rec {
    int64_t u, v;
    double cost, rcost; /* < 0: no arc */
    uint64_t line;
} edge_rec;

/* Splits a CSV line in place into fields (blanks around unquoted fields trimmed, "" inside quotes
 * unescaped). Returns the field count, or -1 (too many), -2 (unterminated quote), -3 (text after a
 * closing quote). */
static int split_csv(char *line, char **f, int maxf) {
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == maxf) return -1;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '"') {
            char *out = ++p;
            f[n++] = out;
            for (;;) {
                if (!*p) return -2;
                if (*p == '"') {
                    if (p[1] == '"') {
                        *out++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *out++ = *p++;
            }
            while (*p == ' ' || *p == '\t') p++;
            if (*p == ',') {
                *out = '\0';
                p++;
                continue;
            }
            if (!*p) {
                *out = '\0';
                return n;
            }
            return -3;
        }
        f[n++] = p;
        char *c = strchr(p, ',');
        char *e = c ? c : p + strlen(p);
        char *next = c ? c + 1 : NULL;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
        *e = '\0';
        if (!next) return n;
        p = next;
    }
}

/* Parses a whole field as a finite double. */
static int parse_num(const char *s, double *out) {
    if (!*s) return -1;
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

gp_graph *gp_load_csv(const char *path, const gp_load_opts *opts, gp_err *err) {
    static const gp_load_opts defaults = {0};
    const gp_load_opts *o = opts ? opts : &defaults;
    gp_builder *b = NULL;
    edge_rec *recs = NULL;
    uint64_t nrec = 0, cap = 0;
    int col[C_NCOLS];
    int ncols = 0, have_header = 0;
    gp_scale_fit fit;
    gp_scale_fit_init(&fit);
    char *f[MAX_FIELDS];
    char *line;
    size_t len;
    int got;
    uint64_t ln = 0;
    for (int c = 0; c < C_NCOLS; c++) col[c] = -1;
    gp_lines *r = gp_lines_open(path, o, err);
    if (!r) return NULL;
    /* the builder's scale is set once every cost is known; nodes can be added now */
    b = gp_builder_new(1.0);
    if (!b) {
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    gp_builder_guard(b, o);
    while ((got = gp_lines_next(r, &line, &len, err)) == 1) {
        ln = gp_lines_number(r);
        if (o->progress && ln % PROGRESS_LINES == 0)
            fprintf(stderr, "%s: %llu lines\n", path, (unsigned long long)ln);
        int blank = 1;
        for (size_t i = 0; i < len && blank; i++) blank = line[i] == ' ' || line[i] == '\t';
        if (blank) continue;
        int nf = split_csv(line, f, MAX_FIELDS);
        if (nf < 0) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: %s", path, (unsigned long long)ln,
                       nf == -1   ? "more than 256 fields"
                       : nf == -2 ? "unterminated quoted field"
                                  : "text after a closing quote");
            goto fail;
        }
        if (!have_header) {
            for (int i = 0; i < nf; i++)
                for (int c = 0; c < C_NCOLS; c++)
                    if (strcasecmp(f[i], col_names[c]) == 0) {
                        if (col[c] >= 0) {
                            gp_err_set(err, GP_EPARSE,
                                       "%s:%llu: column '%s' appears twice in the header", path,
                                       (unsigned long long)ln, col_names[c]);
                            goto fail;
                        }
                        col[c] = i;
                    }
            for (int c = C_SOURCE; c <= C_COST; c++)
                if (col[c] < 0) {
                    gp_err_set(err, GP_EPARSE,
                               "%s:%llu: bad header: no '%s' column (the first line must name the "
                               "columns, at least source,target,cost)",
                               path, (unsigned long long)ln, col_names[c]);
                    goto fail;
                }
            int ncoord = (col[C_X1] >= 0) + (col[C_Y1] >= 0) + (col[C_X2] >= 0) + (col[C_Y2] >= 0);
            if (ncoord != 0 && ncoord != 4) {
                gp_err_set(err, GP_EPARSE,
                           "%s:%llu: bad header: coordinates need all of x1,y1,x2,y2", path,
                           (unsigned long long)ln);
                goto fail;
            }
            ncols = nf;
            have_header = 1;
            continue;
        }
        if (strcasecmp(f[col[C_SOURCE] < nf ? col[C_SOURCE] : 0], "source") == 0) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: duplicate header line", path,
                       (unsigned long long)ln);
            goto fail;
        }
        if (nf != ncols) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: %d fields where the header has %d", path,
                       (unsigned long long)ln, nf, ncols);
            goto fail;
        }
        edge_rec e = {0, 0, -1, -1, ln};
        const char *s = f[col[C_SOURCE]], *t = f[col[C_TARGET]];
        if (gp_parse_i64(&s, &e.u) || *s) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: source is not an integer node id", path,
                       (unsigned long long)ln);
            goto fail;
        }
        if (gp_parse_i64(&t, &e.v) || *t) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: target is not an integer node id", path,
                       (unsigned long long)ln);
            goto fail;
        }
        if (parse_num(f[col[C_COST]], &e.cost)) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: cost is not a finite number", path,
                       (unsigned long long)ln);
            goto fail;
        }
        if (col[C_REVERSE] >= 0 && *f[col[C_REVERSE]] && parse_num(f[col[C_REVERSE]], &e.rcost)) {
            gp_err_set(err, GP_EPARSE, "%s:%llu: reverse_cost is not a finite number", path,
                       (unsigned long long)ln);
            goto fail;
        }
        gp_scale_fit_add(&fit, e.cost);
        gp_scale_fit_add(&fit, e.rcost);
        /* nodes (with coordinates when given) */
        for (int end = 0; end < 2; end++) {
            int cx = col[end ? C_X2 : C_X1], cy = col[end ? C_Y2 : C_Y1];
            double x = 0, y = 0;
            int has = cx >= 0 && (*f[cx] || *f[cy]);
            if (has && (parse_num(f[cx], &x) || parse_num(f[cy], &y))) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: coordinates %s,%s are not numbers", path,
                           (unsigned long long)ln, col_names[end ? C_X2 : C_X1],
                           col_names[end ? C_Y2 : C_Y1]);
                goto fail;
            }
            gp_err e2;
            if (gp_builder_add_node(b, end ? e.v : e.u, has, x, y, NULL, &e2)) {
                gp_err_set(err, e2.code, "%s:%llu: %s", path, (unsigned long long)ln, e2.msg);
                goto fail;
            }
        }
        if (nrec == cap) {
            uint64_t nc = cap ? cap * 2 : 4096;
            edge_rec *q = realloc(recs, nc * sizeof *q);
            if (!q) {
                gp_err_set(err, GP_ENOMEM, "%s:%llu: out of memory", path, (unsigned long long)ln);
                goto fail;
            }
            recs = q;
            cap = nc;
        }
        recs[nrec++] = e;
    }
    if (got < 0) goto fail;
    uint64_t last = ln ? ln : 1;
    gp_lines_close(r);
    r = NULL;
    if (!have_header) {
        gp_err_set(err, GP_EPARSE,
                   "%s:%llu: empty file: expected a header line naming the columns "
                   "(source,target,cost[,reverse_cost][,x1,y1,x2,y2])",
                   path, (unsigned long long)last);
        goto fail;
    }
    if (nrec == 0) {
        gp_err_set(err, GP_EPARSE, "%s:%llu: empty graph: no edge rows after the header", path,
                   (unsigned long long)last);
        goto fail;
    }
    /* the scale rule, then the arcs */
    double scale = o->scale;
    gp_err e2;
    if (!(scale > 0) && gp_scale_fit_pick(&fit, &scale, &e2)) {
        gp_err_set(err, e2.code, "%s: %s", path, e2.msg);
        goto fail;
    }
    gp_builder_set_scale(b, scale);
    for (uint64_t i = 0; i < nrec; i++) {
        const edge_rec *e = &recs[i];
        for (int dir = 0; dir < 2; dir++) {
            double c = dir ? e->rcost : e->cost;
            if (c < 0) continue;
            uint32_t w;
            gp_err e2;
            if (gp_builder_cost(b, c, &w, &e2)) {
                gp_err_set(err, e2.code, "%s:%llu: %s%s", path, (unsigned long long)e->line,
                           dir ? "reverse_" : "", e2.msg);
                goto fail;
            }
            int64_t a = dir ? e->v : e->u, z = dir ? e->u : e->v;
            if (gp_builder_add_arc(b, a, z, w, err)) goto fail;
            if (o->undirected && gp_builder_add_arc(b, z, a, w, err)) goto fail;
        }
    }
    free(recs);
    return gp_builder_finish(b, path, "csv", !o->undirected, err);
fail:
    gp_lines_close(r);
    free(recs);
    gp_builder_free(b);
    return NULL;
}
