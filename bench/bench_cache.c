/* bench_cache.c - the SQLite matrix cache's read path: stores one N x N distance table
 * (storage/cache.c) in a fresh cache file and times repeated warm gp_cache_get calls of it (the
 * "cached table" answer of POST /table, without HTTP and rendering). Prints the median and p90
 * milliseconds and MB/s; used to measure what reading the cache with read() instead of a 256 MiB
 * mmap costs (bench/results/DATE-MACHINE-cache-read.md). Every get is checked against the stored matrix.
 *
 *   bench_cache [N] [REPS]     defaults: 1000 (1,000,000 cells, 8 MB) and 50
 */
#include "storage/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000;
    int reps = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 50;
    if (n == 0 || reps <= 0) {
        fprintf(stderr, "usage: bench_cache [N] [REPS]\n");
        return 2;
    }
    char dir[] = "/tmp/gpath-bench-cache-XXXXXX", path[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/cache.db", dir);
    uint32_t *ids = malloc(n * sizeof *ids);
    size_t cells = (size_t)n * n;
    uint64_t *d = malloc(cells * 8), *got = malloc(cells * 8);
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!ids || !d || !got || !ms) return 1;
    for (uint32_t i = 0; i < n; i++) ids[i] = i * 7;
    for (size_t i = 0; i < cells; i++) d[i] = (i * 2654435761u) % 1000003u;
    gp_err err;
    gp_cache *c = gp_cache_open(path, 1ull << 31, &err);
    if (!c) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    gp_cache_key k = {.graph = "bench",
                      .graph_hash = 42,
                      .kind = GP_CACHE_TABLE,
                      .src = ids,
                      .ns = n,
                      .dst = ids,
                      .nt = n};
    if (gp_cache_put(c, &k, d, NULL, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    gp_cache_close(c); /* checkpoint: the rows live in the main file, as in a long-running cache */
    c = gp_cache_open(path, 1ull << 31, &err);
    if (!c || gp_cache_get(c, &k, got, NULL) != GP_OK) return 1; /* warm-up */
    for (int r = 0; r < reps; r++) {
        memset(got, 0, cells * 8);
        double t0 = gp_now();
        int rc = gp_cache_get(c, &k, got, NULL);
        ms[r] = (gp_now() - t0) * 1e3;
        if (rc != GP_OK || memcmp(got, d, cells * 8) != 0) {
            fprintf(stderr, "get %d: wrong answer\n", r);
            return 1;
        }
    }
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    double med = ms[reps / 2], p90 = ms[(reps * 9) / 10 < reps ? (reps * 9) / 10 : reps - 1];
    printf("%ux%u table (%.1f MB): median %.3f ms, p90 %.3f ms, %.0f MB/s (%d gets)\n", n, n,
           cells * 8 / 1e6, med, p90, cells * 8 / 1e6 / (med / 1e3), reps);
    gp_cache_close(c);
    unlink(path);
    char side[80];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    rmdir(dir);
    free(ids);
    free(d);
    free(got);
    free(ms);
    return 0;
}
