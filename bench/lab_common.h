/* lab_common.h - what the kernel labs (bench/lab_*.cu: one program per algorithm that validates
 * its GPU kernels against the CPU backend, then times them) share: the failure count and CHECK,
 * die, a seeded generator, medians and percentiles, comma lists. Header-only C++ (each lab is one
 * translation unit); a lab's exit status is 1 when failures > 0.
 */
#ifndef GP_BENCH_LAB_COMMON_H
#define GP_BENCH_LAB_COMMON_H

#include "graph/gp.h"

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <vector>

static int failures; /* CHECKs that failed */

/* A failed check: "FAIL: ..." on stdout, counted; the lab goes on. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL: ");                                                                      \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
        }                                                                                          \
    } while (0)

/* A step the lab cannot go on without failed: "FATAL: what: message", exit status 2. */
static inline void die(const char *what, const gp_err &e) {
    fflush(stdout);
    fprintf(stderr, "FATAL: %s: %s\n", what, e.msg);
    printf("FATAL: %s: %s\n", what, e.msg);
    exit(2);
}

/* splitmix64 from lab_rng (each lab seeds it once, so its sources and pairs repeat run to run) */
static uint64_t lab_rng = 0x1ab;
static inline uint64_t rnd() {
    uint64_t z = (lab_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The median (of an even count the mean of the middle two); 0 for none. */
static inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t k = v.size();
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* The p-quantile (0 <= p <= 1, the element at p * count); 0 for none. */
static inline double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(p * v.size()))];
}

/* "a,b,,c" -> {"a", "b", "c"} (empty items dropped) */
static inline std::vector<std::string> split_commas(const char *list) {
    std::vector<std::string> out;
    const std::string s(list);
    for (size_t a = 0; a <= s.size();) {
        size_t b = s.find(',', a);
        if (b == std::string::npos) b = s.size();
        if (b > a) out.push_back(s.substr(a, b - a));
        a = b + 1;
    }
    return out;
}

#endif
