/* real_graphs.h - the real road graphs the CCH tests check (tests/test_cch.c on the CPU,
 * tests/test_gpu_cch.c on the GPU): DIMACS NY and BAY, and Liechtenstein's OSM roads with the car
 * profile (turn restrictions make copies of via nodes; one-way streets), from $GPATH_DATA.
 * Header-only. real_graph_load(i) loads graph i (0 .. REAL_GRAPHS - 1), or says it is absent
 * (print_message) and returns NULL; a graph that is there but fails to load fails the test. */
#ifndef GP_REAL_GRAPHS_H
#define GP_REAL_GRAPHS_H

#include "graph/graph.h"
#include "storage/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define REAL_GRAPHS 3
static const char *const real_graph_names[REAL_GRAPHS] = {"dimacs/USA-road-d.NY.gr.gz",
                                                          "dimacs/USA-road-d.BAY.gr.gz",
                                                          "osm/liechtenstein-latest.osm.pbf"};

static gp_graph *real_graph_load(int i) {
    const char *d = getenv("GPATH_DATA");
    char path[1024], spec[1100];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", d ? d : "", real_graph_names[i]);
    if (!d || stat(path, &st) != 0) {
        print_message("GPATH_DATA has no %s: skipped\n", real_graph_names[i]);
        return NULL;
    }
    snprintf(spec, sizeof spec, "%s%s", i == 2 ? "osm:" : "", path);
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) fail_msg("%s: %s", spec, err.msg);
    return g;
}

#endif
