/* counters.c - the service's request counters (contract in counters.h). */
#include "server/http/counters.h"

#include "server/http/http.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const double gp_count_buckets[GP_COUNTS_NBUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

static gp_route_counts *stats; /* gp_nroutes + 1 */
struct gp_counts gp_counts;

#define MAX_NAMED 64
static struct {
    const char *name, *help;
    uint64_t value;
} named[MAX_NAMED];
static int nnamed;
static pthread_mutex_t named_mu = PTHREAD_MUTEX_INITIALIZER;

static void add(uint64_t *p, uint64_t d) { __atomic_fetch_add(p, d, __ATOMIC_RELAXED); }
uint64_t gp_count_get(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

int gp_metrics_init(void) {
    if (stats) return GP_OK;
    stats = calloc(gp_nroutes + 1, sizeof *stats);
    return stats ? GP_OK : GP_ENOMEM;
}

void gp_metrics_free(void) {
    free(stats);
    stats = NULL;
}

void gp_metrics_request(size_t route, int status, double seconds) {
    if (!stats) return;
    if (route > gp_nroutes) route = gp_nroutes;
    gp_route_counts *s = &stats[route];
    if (status >= 0 && status < GP_COUNTS_NSTATUS) add(&s->status[status], 1);
    size_t b = 0;
    while (b < GP_COUNTS_NBUCKETS && seconds > gp_count_buckets[b]) b++;
    add(&s->bucket[b], 1);
    add(&s->sum_us, (uint64_t)(seconds * 1e6));
    add(&s->count, 1);
}

void gp_metrics_cache(int hit) { add(hit ? &gp_counts.cache_hits : &gp_counts.cache_misses, 1); }
void gp_metrics_reload(int ok) { add(ok ? &gp_counts.reloads_ok : &gp_counts.reloads_failed, 1); }

void gp_metrics_count(const char *name, const char *help, uint64_t delta) {
    for (int i = 0; i < __atomic_load_n(&nnamed, __ATOMIC_ACQUIRE); i++)
        if (strcmp(named[i].name, name) == 0) {
            add(&named[i].value, delta);
            return;
        }
    pthread_mutex_lock(&named_mu);
    int i = 0;
    while (i < nnamed && strcmp(named[i].name, name) != 0) i++;
    if (i == nnamed && nnamed < MAX_NAMED) {
        named[i].name = name;
        named[i].help = help;
        __atomic_store_n(&nnamed, nnamed + 1, __ATOMIC_RELEASE);
    }
    if (i < nnamed) add(&named[i].value, delta);
    pthread_mutex_unlock(&named_mu);
}

const gp_route_counts *gp_counters_route(size_t i) {
    return stats && i <= gp_nroutes ? &stats[i] : NULL;
}

int gp_counters_named(size_t i, const char **name, const char **help, uint64_t *value) {
    if (i >= (size_t)__atomic_load_n(&nnamed, __ATOMIC_ACQUIRE)) return 0;
    *name = named[i].name;
    *help = named[i].help;
    *value = gp_count_get(&named[i].value);
    return 1;
}
