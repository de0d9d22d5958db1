/* geom.c - encoded polylines, Douglas-Peucker simplification and bearings for the
 * OSRM-compatible API (geom.h).
 *
 * Polyline format (Google, as OSRM uses it): each coordinate pair is written as the difference to
 * the previous one, latitude first, each value round(x * 10^precision) zig-zag encoded (v << 1,
 * inverted when negative) and cut into 5-bit chunks, low first, each chunk + 63 with 0x20 set on
 * every chunk but the last. Rounding happens on the absolute values (the differences of rounded
 * values), so a long line accumulates no error.
 */
#include "server/api/geom.h"

#include "graph/spatial.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gp_pts_add(gp_pts *p, double lon, double lat, int dedupe) {
    if (dedupe && p->n && p->lon[p->n - 1] == lon && p->lat[p->n - 1] == lat) return 0;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        double *a = realloc(p->lon, cap * sizeof *a);
        if (!a) return -1;
        p->lon = a;
        double *b = realloc(p->lat, cap * sizeof *b);
        if (!b) return -1;
        p->lat = b;
        p->cap = cap;
    }
    p->lon[p->n] = lon;
    p->lat[p->n] = lat;
    p->n++;
    return 0;
}

void gp_pts_free(gp_pts *p) {
    if (!p) return;
    free(p->lon);
    free(p->lat);
    memset(p, 0, sizeof *p);
}

static size_t put_value(char *out, int64_t v) {
    uint64_t u = v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
    size_t k = 0;
    while (u >= 0x20) {
        out[k++] = (char)((0x20 | (u & 0x1f)) + 63);
        u >>= 5;
    }
    out[k++] = (char)(u + 63);
    return k;
}

char *gp_polyline_encode(const double *lon, const double *lat, size_t n, int precision) {
    double f = pow(10, precision);
    char *s = malloc(n * 24 + 1); /* <= 11 chars per value for |v| < 2^53 */
    if (!s) return NULL;
    size_t k = 0;
    int64_t plat = 0, plon = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t a = (int64_t)llround(lat[i] * f), o = (int64_t)llround(lon[i] * f);
        k += put_value(s + k, a - plat);
        k += put_value(s + k, o - plon);
        plat = a;
        plon = o;
    }
    s[k] = '\0';
    return s;
}

/* Reads one value at *i; -1 when malformed. Values are bounded to 35 bits (7 chunks; a delta of
 * 360 degrees at precision 6 needs 30): the running sums then cannot overflow (no signed
 * overflow on crafted input, which 13 chunks of 5 bits and a few additions reached). */
#define POLY_MAX_SHIFT 30
static int get_value(const char *s, size_t len, size_t *i, int64_t *out) {
    uint64_t u = 0;
    int shift = 0;
    for (;;) {
        if (*i >= len || shift > POLY_MAX_SHIFT) return -1;
        int c = (unsigned char)s[(*i)++];
        if (c < 63 || c > 126) return -1;
        c -= 63;
        u |= (uint64_t)(c & 0x1f) << shift;
        shift += 5;
        if (!(c & 0x20)) break;
    }
    *out = (u & 1) ? (int64_t) ~(u >> 1) : (int64_t)(u >> 1);
    return 0;
}

long gp_polyline_decode(const char *s, size_t len, int precision, gp_pts *out) {
    double f = pow(10, precision);
    int64_t a = 0, o = 0;
    size_t i = 0;
    long n = 0;
    while (i < len) {
        int64_t da, d0;
        if (get_value(s, len, &i, &da) || get_value(s, len, &i, &d0)) return -1;
        a += da;
        o += d0;
        if (gp_pts_add(out, (double)o / f, (double)a / f, 0)) return -1;
        n++;
    }
    return n;
}

/* Distance in metres from p to segment a-b, on a local equirectangular plane around a. */
static double seg_dist_m(double px, double py, double ax, double ay, double bx, double by) {
    double k = cos(ay * M_PI / 180) * GP_EARTH_RADIUS_M * M_PI / 180;
    double m = GP_EARTH_RADIUS_M * M_PI / 180;
    double x = (px - ax) * k, y = (py - ay) * m, dx = (bx - ax) * k, dy = (by - ay) * m;
    double l2 = dx * dx + dy * dy, t = l2 > 0 ? (x * dx + y * dy) / l2 : 0;
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    return hypot(x - t * dx, y - t * dy);
}

void gp_simplify_dp(const double *lon, const double *lat, size_t n, double tol_m, uint8_t *keep) {
    if (n == 0) return;
    memset(keep, 0, n);
    keep[0] = keep[n - 1] = 1;
    if (n < 3) return;
    /* explicit stack of [lo, hi] ranges: no recursion depth limit on long routes */
    size_t *stack = malloc(sizeof *stack * 2 * n);
    if (!stack) {
        memset(keep, 1, n); /* out of memory: keep everything, still a correct line */
        return;
    }
    size_t sp = 0;
    stack[sp++] = 0;
    stack[sp++] = n - 1;
    while (sp) {
        size_t hi = stack[--sp], lo = stack[--sp];
        double best = -1;
        size_t bi = lo;
        for (size_t i = lo + 1; i < hi; i++) {
            double d = seg_dist_m(lon[i], lat[i], lon[lo], lat[lo], lon[hi], lat[hi]);
            if (d > best) {
                best = d;
                bi = i;
            }
        }
        if (best > tol_m) {
            keep[bi] = 1;
            if (bi - lo > 1) {
                stack[sp++] = lo;
                stack[sp++] = bi;
            }
            if (hi - bi > 1) {
                stack[sp++] = bi;
                stack[sp++] = hi;
            }
        }
    }
    free(stack);
}

double gp_bearing_deg(double lon1, double lat1, double lon2, double lat2) {
    double r = M_PI / 180, p1 = lat1 * r, p2 = lat2 * r, dl = (lon2 - lon1) * r;
    double y = sin(dl) * cos(p2), x = cos(p1) * sin(p2) - sin(p1) * cos(p2) * cos(dl);
    double b = atan2(y, x) / r;
    b = fmod(b + 360, 360);
    return b >= 360 ? 0 : b;
}
