/* bench_util.h - small helpers shared by the CPU benchmark programs of bench/: a seeded
 * generator (splitmix64, the same sequence on every machine) and the median of a sample. */
#ifndef GP_BENCH_UTIL_H
#define GP_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>

static inline uint64_t bench_rng(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline int bench_cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; v[n / 2] (0 for none). */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_d);
    return n ? v[n / 2] : 0;
}

#endif
