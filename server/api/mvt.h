/* mvt.h - a small Mapbox Vector Tile 2.1 encoder (server/api/mvt.c): the protobuf of a tile with
 * named layers of point and line features, each with an optional id and typed properties (keys
 * and values deduplicated per layer into the layer's tables), geometry as MoveTo / LineTo commands
 * with zigzag-encoded deltas in tile units; plus the Web Mercator arithmetic of slippy-map tiles
 * (z/x/y as OpenStreetMap numbers them) and line clipping to a tile's buffered box.
 *
 * Pure functions on plain values: no graph, no HTTP. tests/test_mvt.c holds the bytes to the
 * specification; tests/test_tiles.sh decodes served tiles with @mapbox/vector-tile.
 *
 * Use: gp_mvt_new; per layer gp_mvt_layer; per feature gp_mvt_feature, its gp_mvt_prop_* and its
 * geometry (gp_mvt_point, gp_mvt_line or gp_mvt_line_clip), gp_mvt_commit (a feature without
 * geometry is dropped); gp_mvt_finish gives the bytes. Every call after an allocation failure is
 * a no-op and gp_mvt_finish then answers NULL.
 */
#ifndef GP_API_MVT_H
#define GP_API_MVT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GP_MVT_POINT = 1, GP_MVT_LINESTRING = 2 };
#define GP_MVT_EXTENT 4096

typedef struct gp_mvt gp_mvt;

gp_mvt *gp_mvt_new(void);    /* NULL when out of memory */
void gp_mvt_free(gp_mvt *t); /* accepts NULL */
/* Ends the current layer (a layer without features is still written) and starts layer name
 * with the given extent (tile units per side, GP_MVT_EXTENT). */
void gp_mvt_layer(gp_mvt *t, const char *name, uint32_t extent);
/* Starts a feature of type GP_MVT_* in the current layer; id 0 writes none. */
void gp_mvt_feature(gp_mvt *t, int type, uint64_t id);
/* Properties of the current feature, by value type (MVT Value fields string, float, double,
 * sint, uint, bool). A NULL string writes nothing. */
void gp_mvt_prop_str(gp_mvt *t, const char *key, const char *v);
void gp_mvt_prop_float(gp_mvt *t, const char *key, float v);
void gp_mvt_prop_double(gp_mvt *t, const char *key, double v);
void gp_mvt_prop_sint(gp_mvt *t, const char *key, int64_t v);
void gp_mvt_prop_uint(gp_mvt *t, const char *key, uint64_t v);
void gp_mvt_prop_bool(gp_mvt *t, const char *key, int v);
/* A point of a point feature (several make a multipoint). */
void gp_mvt_point(gp_mvt *t, int32_t x, int32_t y);
/* A part of a line feature: n points xy[2i], xy[2i+1]; consecutive equal points are merged and a
 * part with fewer than two distinct points is skipped. */
void gp_mvt_line(gp_mvt *t, const int32_t *xy, size_t n);
/* The line through n points (tile units, fractional) clipped to the box [lo, hi] on both axes,
 * each piece inside it added as a part (rounded to whole units). Returns the parts added. */
size_t gp_mvt_line_clip(gp_mvt *t, const double *x, const double *y, size_t n, double lo,
                        double hi);
/* Ends the current feature: written when it has geometry, else dropped. Returns 1 when written. */
int gp_mvt_commit(gp_mvt *t);
/* Features written so far in the whole tile. */
size_t gp_mvt_count(const gp_mvt *t);
/* Ends the last layer and returns the tile (malloc'd, *len bytes; a tile of no layer is 0 bytes,
 * a non-NULL pointer); frees t. NULL when out of memory. */
char *gp_mvt_finish(gp_mvt *t, size_t *len);

/* gp_mvt_finish when drawn > 0, else an empty tile (0 bytes, non-NULL; t freed): a tile where
 * nothing of the graph lies is answered with an empty body, as OSRM does. NULL when out of
 * memory. */
char *gp_mvt_finish_drawn(gp_mvt *t, size_t drawn, size_t *len);

/* ---- slippy-map tiles (Web Mercator) ---- */
/* 1 when z/x/y names a tile: z <= 30, x and y < 2^z. */
int gp_tile_valid(uint32_t z, uint32_t x, uint32_t y);
/* Tile z/x/y's bounds in degrees. */
void gp_tile_bounds(uint32_t z, uint32_t x, uint32_t y, double *min_lon, double *min_lat,
                    double *max_lon, double *max_lat);
/* (lon, lat) in the tile's units: (0, 0) its north-west corner, (extent, extent) south-east. */
void gp_tile_project(uint32_t z, uint32_t x, uint32_t y, uint32_t extent, double lon, double lat,
                     double *px, double *py);

#ifdef __cplusplus
}
#endif
#endif
