/* osm_read.h - streaming OpenStreetMap reader behind a plain-C interface.
 *
 * Reads .osm.pbf and .osm (XML, also .osm.gz / .osm.bz2) through libosmium (graph/osm_read.cpp,
 * the only C++ file of the graph module) and hands every node, way and relation to C callbacks in
 * file order. Strings passed to a callback (tag keys and values, member roles) live only for that
 * call. libosmium decodes PBF blocks on a pool of worker threads; the callbacks themselves run on
 * the calling thread, one at a time.
 */
#ifndef GP_OSM_READ_H
#define GP_OSM_READ_H

#include "graph/gp.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_osm_tag {
    const char *key, *value;
} gp_osm_tag;

typedef struct gp_osm_member {
    char type; /* 'n' node, 'w' way, 'r' relation */
    int64_t ref;
    const char *role;
} gp_osm_member;

/* A callback returns 0 to go on, or a GP_E* code (with err filled) to stop the read, which then
 * returns that code. A NULL callback skips that kind of object (not even decoded when possible). */
typedef struct gp_osm_callbacks {
    void *ctx;
    int (*node)(void *ctx, int64_t id, double lon, double lat, const gp_osm_tag *tags,
                uint32_t ntags, gp_err *err);
    int (*way)(void *ctx, int64_t id, const int64_t *refs, uint32_t nrefs, const gp_osm_tag *tags,
               uint32_t ntags, gp_err *err);
    int (*relation)(void *ctx, int64_t id, const gp_osm_member *members, uint32_t nmembers,
                    const gp_osm_tag *tags, uint32_t ntags, gp_err *err);
    /* Called after each decoded block with the bytes decoded so far (libosmium's object buffers:
     * what a .osm.gz, .osm.bz2 or PBF inflates to, whatever the file's size); nonzero stops the
     * read like a callback's code (max_graph_bytes, the load deadline). May be NULL. */
    int (*decoded)(void *ctx, uint64_t bytes, gp_err *err);
} gp_osm_callbacks;

/* Reads the file at path (format from the name: .osm.pbf / .pbf, .osm, .osm.gz, .osm.bz2; any
 * other name is sniffed: '<' starts XML, else PBF). GP_OK, or GP_EIO (cannot open), GP_EPARSE
 * (malformed file, with libosmium's message), GP_ENOMEM, or a callback's code. */
int gp_osm_read(const char *path, const gp_osm_callbacks *cb, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
