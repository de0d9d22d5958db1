/* topo.c - cost rules and link insertion shared by the router-topology loaders (see topo.h). */
#include "graph/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gp_topo_rule(const gp_load_opts *o, int dflt, const char *native_name, const char *format,
                 int *rule, gp_err *err) {
    const char *r = o ? o->cost_rule : NULL;
    if (!r || !*r) {
        *rule = dflt;
        return GP_OK;
    }
    if (strcmp(r, "hops") == 0) *rule = GP_RULE_HOPS;
    else if (strcmp(r, "bandwidth") == 0 && dflt != GP_RULE_NATIVE) *rule = GP_RULE_BANDWIDTH;
    else if (native_name && strcmp(r, native_name) == 0) *rule = GP_RULE_NATIVE;
    else if (dflt == GP_RULE_NATIVE)
        return gp_err_set(err, GP_EINVAL, "%s: unknown cost rule '%s' (use %s or hops)", format, r,
                          native_name);
    else
        return gp_err_set(err, GP_EINVAL, "%s: unknown cost rule '%s' (use hops or bandwidth%s%s)",
                          format, r, native_name ? " or " : "", native_name ? native_name : "");
    return GP_OK;
}

double gp_topo_ref_bw(const gp_load_opts *o) {
    return (o && o->ref_bandwidth > 0) ? o->ref_bandwidth : 100e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bw_cost(double ref, double bw) {
    double c = floor(ref / bw);
    if (c < 1) c = 1;
    if (c > 65535) c = 65535;
    return c;
}

void gp_topo_costs(gp_topo_link *links, size_t n, int rule, double ref) {
    if (rule == GP_RULE_HOPS) {
        for (size_t i = 0; i < n; i++) links[i].cost = 1;
        return;
    }
    if (rule != GP_RULE_BANDWIDTH) return;
    size_t known = 0;
    for (size_t i = 0; i < n; i++)
        if (links[i].bw > 0) known++;
    double fill = 1;
    if (known) {
        double *c = malloc(known * sizeof *c);
        if (c) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (links[i].bw > 0) c[k++] = bw_cost(ref, links[i].bw);
            qsort(c, known, sizeof *c, cmp_double);
            fill = c[(known - 1) / 2]; /* lower median */
            free(c);
        }
    }
    for (size_t i = 0; i < n; i++)
        links[i].cost = links[i].bw > 0 ? bw_cost(ref, links[i].bw) : fill;
}

/* The first arc u -> v of weight w whose capacity is not set yet (-1), GP_NONE when none. */
static uint32_t free_arc(const gp_graph *g, const double *cap, uint32_t u, uint32_t v, uint32_t w) {
    uint32_t any = GP_NONE;
    for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++)
        if (g->col[a] == v && cap[a] < 0) {
            if (g->w[a] == w) return a;
            if (any == GP_NONE) any = a;
        }
    return any;
}

int gp_topo_set_caps(gp_graph *g, const gp_topo_link *links, size_t n, gp_err *err) {
    size_t known = 0;
    for (size_t i = 0; i < n; i++) known += links[i].bw > 0;
    if (!known || !g) return GP_OK;
    double *cap = malloc(((size_t)g->m + 1) * sizeof *cap);
    if (!cap) return gp_err_set(err, GP_ENOMEM, "out of memory for link capacities");
    for (uint32_t a = 0; a < g->m; a++) cap[a] = -1;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = gp_graph_index(g, links[i].u), v = gp_graph_index(g, links[i].v);
        if (u == GP_NONE || v == GP_NONE) continue;
        for (int dir = 0; dir < 1 + (links[i].both != 0); dir++) {
            uint32_t x = dir ? v : u, y = dir ? u : v, w = GP_NONE;
            for (uint32_t a = g->row[x]; a < g->row[x + 1] && w == GP_NONE; a++)
                if (g->col[a] == y) w = g->w[a];
            uint32_t a = free_arc(g, cap, x, y, w);
            if (a != GP_NONE) cap[a] = links[i].bw > 0 ? links[i].bw : 0;
        }
    }
    for (uint32_t a = 0; a < g->m; a++)
        if (cap[a] < 0) cap[a] = 0;
    g->arc_cap = cap;
    return GP_OK;
}

int gp_topo_add_links(gp_builder *b, const gp_topo_link *links, size_t n, const char *path,
                      gp_err *err) {
    for (size_t i = 0; i < n; i++) {
        uint32_t w;
        gp_err e;
        if (gp_builder_cost(b, links[i].cost, &w, &e) != GP_OK)
            return gp_err_set(err, GP_EPARSE, "%s:%ld: %s", path, links[i].line, e.msg);
        if (gp_builder_add_arc(b, links[i].u, links[i].v, w, &e) != GP_OK ||
            (links[i].both && gp_builder_add_arc(b, links[i].v, links[i].u, w, &e) != GP_OK))
            return gp_err_set(err, e.code, "%s:%ld: %s", path, links[i].line, e.msg);
    }
    return GP_OK;
}
