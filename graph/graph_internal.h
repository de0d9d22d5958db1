/* graph_internal.h - helpers shared by the graph module's own files (builder, generator, loaders,
 * spatial index). Not part of the public contract; other modules include graph.h only.
 */
#ifndef GP_GRAPH_INTERNAL_H
#define GP_GRAPH_INTERNAL_H

#include "graph.h"

#include <stddef.h>
#include <stdint.h>

/* splitmix64 step: advances *state and returns the next 64-bit value. */
static inline uint64_t gp_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Stateless mix of a key (splitmix64 finaliser). */
static inline uint64_t gp_mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Completes a graph whose n, m, row, col, w, ext (ascending), scale and optional lon/lat/names
 * are filled: builds the reverse CSR, the id map, max_w, the content hash and version, the
 * spatial index (when lon/lat exist), loaded_at and refs = 1, and records source/format/directed.
 * On failure frees g entirely and returns NULL with err filled. */
gp_graph *gp_graph_complete(gp_graph *g, const char *source, const char *format, int directed,
                            gp_err *err);

/* Runs fn(ctx, begin, end) over [0, n) split into contiguous chunks on up to nthreads worker
 * threads (0 = online CPUs, capped at 16). Falls back to one call on the caller's thread for small
 * n or when threads cannot be started. */
void gp_parallel_for(uint64_t n, int nthreads, void (*fn)(void *ctx, uint64_t begin, uint64_t end),
                     void *ctx);

/* Wall-clock seconds since the epoch. */
double gp_wall_now(void);

#endif
