/* roadattr.c - what a graph's weights mean and what its arcs carry besides a weight.
 *
 * Every graph names its weight unit (gp_graph.unit_name / unit_s): the generator's weights are
 * travel times in deciseconds, topology loaders count hops (or a bandwidth-derived cost), OSM
 * imports travel times in deciseconds, and every other format "cost" (the input's own units,
 * unknown to gpath). Road attributes (length, name, ref, class, shape points) exist on OSM
 * graphs and their snapshots; the accessors here answer for every graph, falling back to the
 * straight line between the end nodes where the graph has coordinates and no shape.
 */
#include "graph_internal.h"
#include "spatial.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const class_names[GP_ROAD_CLASS_COUNT] = {
    "unknown", "motorway", "trunk", "primary", "secondary", "tertiary", "unclassified",
    "residential", "service", "living_street", "track", "path", "cycleway", "footway", "ferry"};

const char *gp_road_class_name(int c) {
    return c >= 0 && c < GP_ROAD_CLASS_COUNT ? class_names[c] : "unknown";
}

void gp_graph_set_unit(gp_graph *g, const char *unit_name, double unit_s) {
    snprintf(g->unit_name, sizeof g->unit_name, "%s", unit_name ? unit_name : "cost");
    g->unit_s = unit_s > 0 ? unit_s : 0;
}

uint32_t gp_graph_arc_tail(const gp_graph *g, uint32_t a) {
    uint32_t lo = 0, hi = g->n; /* invariant: row[lo] <= a < row[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->row[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint32_t gp_graph_find_arc(const gp_graph *g, uint32_t u, uint32_t v) {
    if (u >= g->n || v >= g->n) return GP_NONE;
    /* arcs of u are sorted by (head, weight): the first arc to v is the cheapest */
    uint32_t lo = g->row[u], hi = g->row[u + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->row[u + 1] && g->col[lo] == v ? lo : GP_NONE;
}

uint32_t gp_graph_arc_shape(const gp_graph *g, uint32_t a, const double **lon, const double **lat) {
    if (!g->arc_shape || !g->shape_lon) {
        *lon = *lat = NULL;
        return 0;
    }
    uint32_t b = g->arc_shape[a], e = g->arc_shape[a + 1];
    *lon = g->shape_lon + b;
    *lat = g->shape_lat + b;
    return e - b;
}

double gp_graph_arc_length_m(const gp_graph *g, uint32_t a) {
    if (g->arc_len_m) return g->arc_len_m[a];
    if (!g->lon) return NAN;
    uint32_t u = gp_graph_arc_tail(g, a), v = g->col[a];
    const double *sx, *sy;
    uint32_t k = gp_graph_arc_shape(g, a, &sx, &sy);
    double len = 0, px = g->lon[u], py = g->lat[u];
    for (uint32_t i = 0; i < k; i++) {
        len += gp_haversine_m(px, py, sx[i], sy[i]);
        px = sx[i];
        py = sy[i];
    }
    return len + gp_haversine_m(px, py, g->lon[v], g->lat[v]);
}

double gp_graph_arc_duration_s(const gp_graph *g, uint32_t a) {
    return g->unit_s > 0 ? gp_graph_cost(g, g->w[a]) * g->unit_s : NAN;
}

uint64_t gp_graph_roadattr_memory(const gp_graph *g) {
    uint64_t m = g->m, bytes = 0;
    if (g->arc_len_m) bytes += m * sizeof(float);
    if (g->arc_name) bytes += m * sizeof(uint32_t);
    if (g->arc_ref) bytes += m * sizeof(uint32_t);
    if (g->arc_class) bytes += m;
    if (g->arc_shape) {
        bytes += (m + 1) * sizeof(uint32_t);
        bytes += (uint64_t)g->arc_shape[m] * 2 * sizeof(double);
    }
    bytes += g->strtab_len;
    if (g->osm_id) bytes += (uint64_t)g->n * sizeof(int64_t);
    return bytes;
}
