/* serve.c - `gpath serve`. Placeholder until the HTTP service lands: loads the configured graph
 * (default: the built-in generated road graph) and reports it. */
#include "serve.h"

#include "../graph/graph.h"

#include <stdio.h>
#include <string.h>

int gp_serve_main(int argc, char **argv) {
    const char *spec = "gen:100000";
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--graph") == 0) spec = argv[i + 1];
    gp_err err;
    gp_graph *g = gp_graph_load(spec, NULL, &err);
    if (!g) {
        fprintf(stderr, "gpath serve: %s\n", err.msg);
        return 1;
    }
    printf("loaded %s: %u nodes, %u arcs; the HTTP service is not built yet\n", spec, g->n, g->m);
    gp_graph_unref(g);
    return 0;
}
