/* tilecache.h - how vector tiles are answered, shared by OSRM's /tile/v1 (server/osrm/tile.c) and
 * gpath's basemap tiles (server/v1/tiles.c), implemented in server/tilecache.c: a bounded
 * least-recently-used cache of encoded tiles (config tile_cache_mb), keyed by a text that names
 * the graph version, the tile family and z/x/y, so a new graph version (reload, traffic) is a new
 * key and old tiles age out; an ETag per tile (its content hash) with If-None-Match answered 304;
 * gzip (Content-Encoding) for clients that accept it when it is smaller, compressed once and kept.
 */
#ifndef GP_SRV_TILECACHE_H
#define GP_SRV_TILECACHE_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds a tile: malloc'd bytes (*len of them; an empty tile is a non-NULL pointer and 0) or NULL
 * with err filled. */
typedef char *(*gp_tile_build_fn)(void *ctx, size_t *len, gp_err *err);

/* Answers tile `key` with content type ctype: from the cache, else built by build(ctx) and
 * stored. Adds ETag, Cache-Control: no-cache (clients revalidate: the graph may change), Vary:
 * Accept-Encoding and X-Gpath-Cache: hit|miss. GP_OK once answered; the build's error code
 * (nothing answered, err filled) for the caller to answer in its API's error form. */
int gp_tile_answer(gp_req *r, const char *key, const char *ctype, gp_tile_build_fn build, void *ctx,
                   gp_err *err);
/* Drops every cached tile (tests). */
void gp_tile_cache_clear(void);

#ifdef __cplusplus
}
#endif
#endif
