/* spatial.h - nearest-node index over a graph's lon/lat coordinates, and great-circle distance.
 *
 * The index is a static k-d tree over the nodes' positions as unit vectors on the sphere: the chord
 * between two unit vectors grows monotonically with their great-circle distance, so nearest by
 * chord is exactly nearest by haversine distance, anywhere on the globe (no projection error near
 * the poles or across the antimeridian). It is built by gp_builder_finish when the graph has
 * coordinates, is immutable afterwards (any number of threads may query it) and is freed with the
 * graph. Nodes without coordinates (NaN) are not indexed.
 */
#ifndef GP_SPATIAL_H
#define GP_SPATIAL_H

#include "graph/graph.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Mean Earth radius (IUGG), metres. */
#define GP_EARTH_RADIUS_M 6371008.8

/* Great-circle distance in metres between two lon/lat points (degrees), haversine formula. */
double gp_haversine_m(double lon1, double lat1, double lon2, double lat2);

/* The unit vector of a lon/lat point (degrees): the chord between two of them grows with their
 * great-circle distance, which is what the nearest-node and road-segment indexes compare. */
static inline void gp_unit_vec(double lon, double lat, double v[3]) {
    const double deg2rad = 3.14159265358979323846 / 180.0;
    double la = lat * deg2rad, lo = lon * deg2rad;
    double cl = cos(la);
    v[0] = cl * cos(lo);
    v[1] = cl * sin(lo);
    v[2] = sin(la);
}

struct gp_spatial;

/* Builds the index over g's lon/lat (must be non-NULL). NULL with err filled on failure. */
struct gp_spatial *gp_spatial_build(const gp_graph *g, gp_err *err);
void gp_spatial_free(struct gp_spatial *s); /* accepts NULL */
uint64_t gp_spatial_memory(const struct gp_spatial *s);
/* Number of nodes indexed (those with coordinates). */
uint32_t gp_spatial_count(const struct gp_spatial *s);

/* The k nodes nearest to (lon, lat): fills out_nodes[0..r) (internal indices) and, when
 * out_metres is not NULL, out_metres[0..r) with their haversine distances, sorted by distance
 * (ties by node index). Returns r = min(k, nodes indexed); 0 when s is NULL; -1 when (lon, lat) is
 * not a valid coordinate or memory runs out. */
int gp_spatial_nearest(const struct gp_spatial *s, const gp_graph *g, double lon, double lat,
                       uint32_t k, uint32_t *out_nodes, double *out_metres);

#ifdef __cplusplus
}
#endif
#endif
