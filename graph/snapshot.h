/* snapshot.h - gpath's binary graph snapshot: import once (e.g. an OSM extract, `gpath import`),
 * then load in a fraction of the time (one read of the file, no parsing).
 *
 * Layout (little-endian host order, every offset 64-byte aligned):
 *   header   64 bytes: magic "GPATHSNP", format version, byte-order mark, section count, file
 *            size, offset of the section table, the graph's content hash, the table's checksum
 *   table    one 64-byte entry per section: type, name (23 chars + NUL), offset, size, checksum
 *   sections the graph's arrays as they lie in memory (forward and reverse CSR, ids, coordinates,
 *            road attributes, strings, original ids, node names) and any named extra sections
 * Each section carries a 64-bit checksum of its bytes; the loader checks the magic, the version,
 * the byte order, every section's bounds against the file size, every checksum, the sizes the
 * node and arc counts imply and, after rebuilding the id map and the spatial index, the content
 * hash. A damaged or foreign file is refused with a message naming what is wrong.
 * Section types the reader does not know are skipped, so newer writers can add sections (the
 * format version changes only when old readers would misread a file). Named extra sections
 * (type GP_SNAP_EXTRA, e.g. "cch.order") carry data of other modules: write them with
 * gp_snapshot_write / gp_snapshot_add_section and read them from a loaded graph with
 * gp_snapshot_section.
 */
#ifndef GP_SNAPSHOT_H
#define GP_SNAPSHOT_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_SNAP_MAGIC "GPATHSNP"
#define GP_SNAP_VERSION 1u
/* Section type of named extra sections. */
#define GP_SNAP_EXTRA 1000u

typedef struct gp_snap_extra {
    const char *name; /* at most 23 bytes, unique within a file */
    const void *data;
    uint64_t size;
} gp_snap_extra;

/* Writes g and nextra extra sections to path (through a temporary file renamed into place, so a
 * reader never sees a half-written snapshot). */
int gp_snapshot_write(const gp_graph *g, const char *path, const gp_snap_extra *extra,
                      uint32_t nextra, gp_err *err);
/* Adds (or replaces) one named section in an existing snapshot, keeping everything else. */
int gp_snapshot_add_section(const char *path, const char *name, const void *data, uint64_t size,
                            gp_err *err);
/* Loads a snapshot ("gpath:PATH" and "*.gpath" specs go here), read into private read-only
 * memory, so the file may be replaced or truncated under a running server. NULL with err filled:
 * GP_EIO when it cannot be opened, GP_EPARSE when it is damaged or not a snapshot. */
gp_graph *gp_load_snapshot(const char *path, const gp_load_opts *o, gp_err *err);
/* The named extra section of a graph loaded from a snapshot: a pointer into its memory (valid
 * while the graph lives) and its size, or NULL when the graph has no such section. */
const void *gp_snapshot_section(const gp_graph *g, const char *name, uint64_t *size);

#ifdef __cplusplus
}
#endif
#endif
