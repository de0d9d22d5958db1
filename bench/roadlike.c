/* roadlike.c - prints the road-likeness measures of graphs (bench/roadlike.h: mean degree, hop
 * diameter, METIS nested-dissection fill and operation count) as Markdown table rows, one per
 * graph spec; bench/cpu-roadlike.sh wraps it into a results file.
 *
 *   roadlike [--no-nd] [--header] SPEC...
 * SPEC is any graph spec (gen:N[:SEED], grid:N[:SEED], a DIMACS .gr.gz, ...). Exit 1 when a graph
 * cannot be loaded or measured.
 */
#include "roadlike.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    int nd = 1, rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-nd") == 0) {
            nd = 0;
            continue;
        }
        if (strcmp(argv[i], "--header") == 0) {
            printf("| graph | nodes | arcs | mean degree | hop diameter | components | ND fill nnz(L) | "
                   "fill / node | ND operation count | load s | ND s |\n");
            printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
            fflush(stdout);
            continue;
        }
        gp_err err;
        double t0 = gp_now();
        gp_graph *g = gp_graph_load(argv[i], NULL, &err);
        double load_s = gp_now() - t0;
        if (!g) {
            fprintf(stderr, "roadlike: %s\n", err.msg);
            rc = 1;
            continue;
        }
        roadlike r;
        if (roadlike_measure(g, nd, &r)) {
            fprintf(stderr, "roadlike: %s: out of memory or METIS failed\n", argv[i]);
            rc = 1;
        } else if (nd) {
            printf("| %s | %llu | %llu | %.3f | %u | %u | %.4g | %.2f | %.4g | %.2f | %.2f |\n", argv[i],
                   (unsigned long long)r.n, (unsigned long long)r.arcs, r.mean_degree, r.hop_diameter,
                   r.components, r.fill, r.fill / (double)r.n, r.opc, load_s, r.nd_seconds);
        } else {
            printf("| %s | %llu | %llu | %.3f | %u | %u | - | - | - | %.2f | - |\n", argv[i],
                   (unsigned long long)r.n, (unsigned long long)r.arcs, r.mean_degree, r.hop_diameter,
                   r.components, load_s);
        }
        fflush(stdout);
        gp_graph_unref(g);
    }
    return rc;
}
