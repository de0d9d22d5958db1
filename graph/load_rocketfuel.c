/* load_rocketfuel.c - Rocketfuel ISP maps, `weights.intra` (also `latencies.intra`): one directed
 * arc per line, "NAME NAME METRIC", the metric being the inferred OSPF weight (or latency in ms).
 *
 * Routers get ids 0..n-1 in ascending byte order of their names (stable whatever the line order),
 * and keep their names. Cost rules: "weights" (default: the file's metric; fractional metrics such as
 * 22.5 are stored at scale 1000, integer-only files at scale 1, unless opts->scale) or "hops" (1 per
 * arc). The files carry no bandwidths, so "bandwidth" is rejected. Bad lines: file:line errors.
 * Read through the guarded line reader (graph/lines.c: 1 MiB lines, max_bytes, deadline).
 */
#include "graph/graph_internal.h"
#include "graph/topo.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rf_arc {
    char *u, *v;
    double metric;
    long line;
} rf_arc;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int64_t name_id(char **sorted, size_t n, const char *name) {
    char **p = bsearch(&name, sorted, n, sizeof *sorted, cmp_str);
    return p ? (int64_t)(p - sorted) : -1;
}

gp_graph *gp_load_rocketfuel(const char *path, const gp_load_opts *o, gp_err *err) {
    gp_graph *g = NULL;
    gp_builder *b = NULL;
    gp_lines *f = NULL;
    rf_arc *arcs = NULL;
    size_t na = 0, capa = 0;
    char **names = NULL;
    size_t nn = 0;
    gp_topo_link *links = NULL;
    char *line = NULL;
    size_t len = 0;
    long ln = 0;
    int rule, integral = 1, got;

    if (gp_topo_rule(o, GP_RULE_NATIVE, "weights", "rocketfuel", &rule, err) != GP_OK) return NULL;
    if (!(f = gp_lines_open(path, o, err))) return NULL;
    while ((got = gp_lines_next(f, &line, &len, err)) == 1) {
        ln = (long)gp_lines_number(f);
        char *save = NULL, *fld[4];
        int nf = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t && nf < 4;
             t = strtok_r(NULL, " \t\r\n", &save))
            fld[nf++] = t;
        if (nf == 0 || fld[0][0] == '#') continue;
        char *end = NULL;
        double m = nf == 3 ? strtod(fld[2], &end) : 0;
        if (nf != 3 || end == fld[2] || *end || !isfinite(m) || m < 0) {
            gp_err_set(err, GP_EPARSE,
                       "%s:%ld: expected 'ROUTER ROUTER METRIC' with a non-negative metric", path,
                       ln);
            goto done;
        }
        if (m != floor(m)) integral = 0;
        if (na == capa) {
            size_t c = capa ? capa * 2 : 1024;
            rf_arc *x = realloc(arcs, c * sizeof *x);
            if (!x) goto oom;
            arcs = x;
            capa = c;
        }
        arcs[na].u = strdup(fld[0]);
        arcs[na].v = strdup(fld[1]);
        arcs[na].metric = m;
        arcs[na].line = ln;
        na++;
        if (!arcs[na - 1].u || !arcs[na - 1].v) goto oom;
    }
    if (got < 0) goto done;
    if (na == 0) {
        gp_err_set(err, GP_EPARSE, "%s:%ld: no arcs", path, ln);
        goto done;
    }
    names = malloc(2 * na * sizeof *names);
    links = malloc(na * sizeof *links);
    if (!names || !links) goto oom;
    for (size_t i = 0; i < na; i++) names[2 * i] = arcs[i].u, names[2 * i + 1] = arcs[i].v;
    qsort(names, 2 * na, sizeof *names, cmp_str);
    for (size_t i = 0; i < 2 * na; i++)
        if (nn == 0 || strcmp(names[nn - 1], names[i]) != 0) names[nn++] = names[i];
    double scale = o && o->scale > 0                       ? o->scale
                   : (rule == GP_RULE_NATIVE && !integral) ? GP_SCALE_DEFAULT_FRACTIONAL
                                                           : GP_SCALE_INTEGER;
    b = gp_builder_new(scale);
    if (!b) goto oom;
    gp_builder_guard(b, o);
    for (size_t i = 0; i < nn; i++) {
        gp_err e;
        if (gp_builder_add_node(b, (int64_t)i, 0, 0, 0, names[i], &e) != GP_OK) {
            gp_err_set(err, e.code, "%s: %s", path, e.msg);
            goto done;
        }
    }
    for (size_t i = 0; i < na; i++)
        links[i] = (gp_topo_link){.u = name_id(names, nn, arcs[i].u),
                                  .v = name_id(names, nn, arcs[i].v),
                                  .bw = -1,
                                  .cost = rule == GP_RULE_NATIVE ? arcs[i].metric : 1,
                                  .both = 0,
                                  .line = arcs[i].line};
    if (gp_topo_add_links(b, links, na, path, err) != GP_OK) goto done;
    g = gp_builder_finish(b, path, "rocketfuel", 1, err);
    if (g) gp_graph_set_unit(g, rule == GP_RULE_HOPS ? "hops" : "cost", 0);
    b = NULL;
    goto done;
oom:
    gp_err_set(err, GP_ENOMEM, "%s:%ld: out of memory", path, ln);
done:
    gp_lines_close(f);
    gp_builder_free(b);
    for (size_t i = 0; i < na; i++) {
        free(arcs[i].u);
        free(arcs[i].v);
    }
    free(arcs);
    free(names);
    free(links);
    return g;
}
