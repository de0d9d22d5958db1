/* cache.h - the service's use of storage/ (server/cache.c): its start-up and shutdown, the SQLite
 * matrix cache behind the table and apsp endpoints (its /admin/cache endpoints are in
 * server/v1/admin.c), and the LISTEN gpath_reload listeners that reload PostgreSQL graphs.
 */
#ifndef GP_SRV_CACHE_H
#define GP_SRV_CACHE_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the cache (cfg->cache_path, "" = off; cfg->cache_budget_mb) and starts one LISTEN
 * gpath_reload listener per distinct PostgreSQL database among the configured graphs. Fails only
 * when the cache file's schema is newer than this binary's (the message says so). */
int gp_srv_storage_start(const gp_config *cfg, gp_registry *reg, gp_err *err);
/* Stops the listeners and closes the cache; call before freeing the registry. Idempotent. */
void gp_srv_storage_stop(void);
/* serve.c's start-up loader: name failed to load; a later successful reload clears it in /ready. */
void gp_srv_storage_note_failed(const char *name);

/* For the table (GP_CACHE_TABLE: src/ns x dst/nt) and apsp (GP_CACHE_APSP: src = dst = NULL, ns =
 * nt = n) handlers of the request's graph. lookup fills dist (and next when next_hops) and
 * returns 1 on a hit; it adds the response header X-Gpath-Cache: hit|miss (none when the cache is
 * off) and counts the lookup in /metrics. store saves a freshly computed matrix (errors logged). */
int gp_srv_cache_lookup(gp_req *r, int kind, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                        uint32_t nt, int next_hops, uint64_t *dist, uint32_t *next);
void gp_srv_cache_store(gp_req *r, int kind, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                        uint32_t nt, int next_hops, const uint64_t *dist, const uint32_t *next);

/* The process-wide cache (NULL when off), for work outside a request such as the routing-table
 * jobs of server/v1/netops.c and the /admin/cache endpoints (storage/cache.h is thread-safe). */
struct gp_cache *gp_srv_cache(void);
/* The version g's cached answers are kept under (the content hash, told apart with turn costs): a
 * reload purges the graph name's entries of other versions. */
uint64_t gp_srv_cache_version(const gp_graph *g);

#ifdef __cplusplus
}
#endif
#endif
