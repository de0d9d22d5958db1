/* cache.h - the SQLite distance-matrix cache: answers a repeated `table` or `apsp` request without
 * recomputing it.
 *
 * One row per matrix or document (migrations/sqlite/0001-cache.sql; documents: below). The key is the graph's version (its content
 * hash) + the request kind + a hash of the source/target index lists + the next-hop flag, so a
 * reloaded graph whose content changed can never be answered from an old matrix. The blob starts with
 * a header (magic, format version, graph hash, kind, shape, element type, checksum) and stores the
 * exact source/target lists; every read checks all of it against the request, and any mismatch is a
 * miss (the bad row is deleted), never a crash or a wrong answer.
 *
 * Durability: WAL journal with synchronous=NORMAL: a put whose call returned survives a crash of the
 * process (kill -9); a torn write is never visible (SQLite's atomic commit, plus the checksum).
 * Size: a byte budget; after each put the least recently used rows are evicted until the total is
 * under it. A matrix larger than the whole budget is not stored.
 * Nothing is memory-mapped: the file is read with read() (mmap_size=0) and held with an exclusive
 * lock, so the WAL index lives in this process's heap and no PATH-shm exists; truncating, emptying,
 * write-protecting or deleting the files under a running server cannot raise SIGBUS.
 * Damage: a cache file SQLite reports as corrupt, not a database or unreadable (at open or later,
 * e.g. truncated under the running server) is renamed to PATH.corrupt-YYYYmmddTHHMMSSZ with a
 * logged warning and a new one is created; the calls meanwhile answer "miss". A cache that cannot be
 * opened at all stays disabled (every get misses) and says why in its stats; one locked by another
 * process is tried again every 10 s (on get/put). Only a database newer than this binary's schema
 * is refused at open.
 * Sharing: one process per file (the exclusive lock lasts until gp_cache_close); within it, one
 * connection guarded by a mutex, and any number of threads may share a gp_cache.
 */
#ifndef GP_CACHE_H
#define GP_CACHE_H

#include "graph/gp.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_cache gp_cache;

enum gp_cache_kind { GP_CACHE_TABLE = 1, GP_CACHE_APSP = 2, GP_CACHE_DOC = 3 };

/* What a matrix answers. For GP_CACHE_TABLE the matrix is ns x nt (row-major, dist(src[i],dst[j]));
 * for GP_CACHE_APSP it is n x n with src/dst NULL and ns = nt = n. next_hops: the entry also holds
 * an ns x nt uint32 next-hop matrix (apsp). Indices are the graph's internal node indices, which
 * a graph version fixes. */
typedef struct gp_cache_key {
    const char *graph;   /* served graph name (for purge by name); not part of the key */
    uint64_t graph_hash; /* gp_graph.hash: the graph's version */
    int kind;            /* enum gp_cache_kind */
    const uint32_t *src; /* GP_CACHE_TABLE: ns sources */
    uint32_t ns;
    const uint32_t *dst; /* GP_CACHE_TABLE: nt targets */
    uint32_t nt;
    int next_hops;
} gp_cache_key;

typedef struct gp_cache_stats {
    int enabled; /* 0 when the cache could not be opened (see error) */
    uint64_t entries;
    uint64_t bytes; /* sum of stored blob sizes */
    uint64_t budget;
    uint64_t hits, misses;                /* since this process opened the cache */
    uint64_t puts, evictions, recoveries; /* recoveries: corrupt files moved aside */
    char path[512];
    char error[512]; /* why the cache is disabled, or "" */
} gp_cache_stats;

/* Opens (creating and migrating as needed) the cache at path with a byte budget (0 = unlimited).
 * NULL with err filled only when the file's schema is newer than this binary's; other failures give
 * a disabled cache (logged). */
gp_cache *gp_cache_open(const char *path, uint64_t budget_bytes, gp_err *err);
void gp_cache_close(gp_cache *c); /* accepts NULL */

/* Looks a matrix up. Hit: GP_OK with dist (ns*nt) and, when key->next_hops, next (ns*nt) filled.
 * Miss (absent, damaged, mismatched, disabled): GP_ENOTFOUND. c may be NULL (always a miss). */
int gp_cache_get(gp_cache *c, const gp_cache_key *key, uint64_t *dist, uint32_t *next);
/* Stores a matrix (replacing one with the same key), then evicts to the budget. next is read only
 * when key->next_hops. Failures are logged and returned, never fatal to the caller's request. */
int gp_cache_put(gp_cache *c, const gp_cache_key *key, const uint64_t *dist, const uint32_t *next,
                 gp_err *err);
/* Documents: a computed answer (a failure analysis, repair paths) kept under the graph version and
 * the request's canonical text req, which the entry stores and every read compares (a hash
 * collision is a miss, never another request's answer). kind names the answer ("failure-analysis",
 * "repair"); data is any bytes. They share the matrices' budget, LRU eviction and purges.
 * get: GP_OK with *data (malloc'd, NUL-terminated, the caller frees) and *len; else GP_ENOTFOUND. */
int gp_cache_get_doc(gp_cache *c, uint64_t graph_hash, const char *kind, const char *req,
                     char **data, size_t *len);
int gp_cache_put_doc(gp_cache *c, const char *graph, uint64_t graph_hash, const char *kind,
                     const char *req, const void *data, size_t len, gp_err *err);
/* Deletes every entry (which == NULL or ""), or those of one graph name or version (16 hex digits).
 * *deleted (may be NULL) gets the number of entries removed. */
int gp_cache_purge(gp_cache *c, const char *which, uint64_t *deleted, gp_err *err);
/* Deletes the entries of graph name whose version is not graph_hash (after a reload). */
int gp_cache_purge_stale(gp_cache *c, const char *graph, uint64_t graph_hash, gp_err *err);
void gp_cache_stats_get(gp_cache *c, gp_cache_stats *out);

#ifdef __cplusplus
}
#endif
#endif
