/* fuzz_load.h - shared by the loader harnesses (tests/fuzz/fuzz_<format>.c): loads the fuzzer's
 * bytes as a graph file of one format, the way an admin load reads an untrusted file.
 *
 * The loaders take paths, so the input is written to a memfd and loaded as /proc/self/fd/N (a
 * regular file: regular_only passes) under the guards of an admin load with small caps, so a
 * header that asks for millions of nodes is refused the way the server refuses it, not built.
 * Any crash, leak or undefined behaviour fails the run; an input the loader rejects is fine.
 */
#ifndef GP_FUZZ_LOAD_H
#define GP_FUZZ_LOAD_H

#include "graph/graph.h"
#include "storage/source.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The graph of the bytes (NULL when the loader rejects them), checked; restrictions_as_turns as
 * gp_load_opts' (OSM). The caller releases it. */
static gp_graph *gp_fuzz_load_graph(const char *format, const uint8_t *data, size_t size,
                                    int restrictions_as_turns) {
    int fd = memfd_create("gpath-fuzz", 0);
    if (fd < 0) return NULL;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    char spec[64];
    snprintf(spec, sizeof spec, "%s:/proc/self/fd/%d", format, fd);
    gp_load_opts o = {0};
    o.regular_only = 1;
    o.max_bytes = 4u << 20;
    o.max_nodes = 1u << 20;
    o.max_arcs = 1u << 20;
    o.restrictions_as_turns = restrictions_as_turns;
    gp_err err;
    gp_graph *g = gp_graph_load(spec, &o, &err);
    if (g) {
        /* touch what a query would: the id map and the reverse CSR */
        for (uint32_t v = 0; v < g->n; v++)
            if (gp_graph_index(g, g->ext[v]) != v) __builtin_trap();
        if (g->rrow[g->n] != g->m || g->row[g->n] != g->m) __builtin_trap();
    }
    close(fd);
    return g;
}

static int gp_fuzz_load(const char *format, const uint8_t *data, size_t size) {
    gp_graph_unref(gp_fuzz_load_graph(format, data, size, 0));
    return 0;
}

#endif
