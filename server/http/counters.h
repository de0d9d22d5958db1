/* counters.h - the service's request counters (server/http/counters.c): what the transport and
 * the handlers increment, and GET /metrics (server/metrics.c, above the transport) reads and
 * renders. Every counter is a lock-free atomic; the named-counter table takes a mutex only to add a
 * new name. Per route (the table index of server/routes.c; one extra slot, gp_nroutes, for
 * unmatched paths): request counts by HTTP status and a latency histogram.
 */
#ifndef GP_HTTP_COUNTERS_H
#define GP_HTTP_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GP_COUNTS_NSTATUS 600
#define GP_COUNTS_NBUCKETS 14
/* The latency histogram's upper bounds in seconds (the last bucket, +Inf, is implied). */
extern const double gp_count_buckets[GP_COUNTS_NBUCKETS];

typedef struct gp_route_counts {
    uint64_t status[GP_COUNTS_NSTATUS];
    uint64_t bucket[GP_COUNTS_NBUCKETS + 1]; /* last: +Inf */
    uint64_t sum_us;
    uint64_t count;
} gp_route_counts;

/* Process-wide totals (read them with gp_count_get). */
extern struct gp_counts {
    uint64_t cache_hits, cache_misses, reloads_ok, reloads_failed;
} gp_counts;

int gp_metrics_init(void); /* after the route table is known; idempotent */
void gp_metrics_free(void);
/* The route index of a request that matched no route (any index past the table counts so). */
#define GP_ROUTE_UNMATCHED ((size_t)-1)
/* One answered request; route: its index in gp_routes, or GP_ROUTE_UNMATCHED. */
void gp_metrics_request(size_t route, int status, double seconds);
void gp_metrics_cache(int hit); /* SQLite cache lookup: 1 hit, 0 miss */
/* A named counter exported as gpath_<name>_total (help printed once); up to 64 names. Call with
 * string literals (the pointers are kept). */
void gp_metrics_count(const char *name, const char *help, uint64_t delta);
void gp_metrics_reload(int ok);

/* ---- reading (GET /metrics) ---- */
uint64_t gp_count_get(const uint64_t *p);
/* Route i's counts (0 <= i <= gp_nroutes), or NULL before gp_metrics_init. */
const gp_route_counts *gp_counters_route(size_t i);
/* The i-th named counter: 1 with its name, help and value, 0 past the last. */
int gp_counters_named(size_t i, const char **name, const char **help, uint64_t *value);

#ifdef __cplusplus
}
#endif
#endif
