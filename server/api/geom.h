/* geom.h - geometry helpers of the OSRM-compatible API (server/api/geom.c): Google's encoded
 * polyline format (precision 5 = OSRM's `polyline`, 6 = `polyline6`), Douglas-Peucker line
 * simplification, bearings, and a growable point list. Pure functions on plain arrays: no graph,
 * no HTTP, so tests can hold them to the format's published examples.
 */
#ifndef GP_OSRM_GEOM_H
#define GP_OSRM_GEOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A growable list of lon/lat points. */
typedef struct gp_pts {
    double *lon, *lat;
    size_t n, cap;
} gp_pts;
/* Appends (lon, lat); skips a point equal to the last one when dedupe. -1 when out of memory. */
int gp_pts_add(gp_pts *p, double lon, double lat, int dedupe);
void gp_pts_free(gp_pts *p);

/* Encodes n points (lat first, as the format wants) with 10^precision; malloc'd NUL-terminated
 * string, NULL when out of memory. */
char *gp_polyline_encode(const double *lon, const double *lat, size_t n, int precision);
/* Decodes an encoded polyline into *out (appended). Returns the number of points, or -1 when the
 * text is not a well-formed polyline (truncated value, character outside '?'..'~'). */
long gp_polyline_decode(const char *s, size_t len, int precision, gp_pts *out);

/* Douglas-Peucker: keep[i] = 1 for the points kept (the ends always) so that no dropped point is
 * farther than tol_m metres from the kept line (equirectangular metres around each segment). */
void gp_simplify_dp(const double *lon, const double *lat, size_t n, double tol_m, uint8_t *keep);

/* Initial bearing from a to b, degrees clockwise from north in [0, 360). */
double gp_bearing_deg(double lon1, double lat1, double lon2, double lat2);

#ifdef __cplusplus
}
#endif
#endif
