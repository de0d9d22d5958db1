/* roadlike.c - prints the road-likeness measures of graphs (bench/roadlike.h: mean degree, hop
 * diameter, METIS nested-dissection fill and operation count) as Markdown table rows, one per
 * graph spec; bench/cpu-roadlike.sh wraps it into a results file.
 *
 *   roadlike [--header] [--seeds K] [--no-nd] SPEC...
 * Options apply to the specs after them. --seeds K: the best of K METIS orderings (default
 * ROADLIKE_ND_SEEDS); --no-nd: no ordering (the fill columns print "-"). SPEC is gen:N[:SEED],
 * grid:N[:SEED] or a DIMACS file (.gr / .gr.gz): the program calls the generators and the DIMACS
 * loader itself rather than gp_graph_load, so it links none of the other loaders' libraries
 * (libxml2, libpq: with -Wl,--as-needed it runs where only zlib and libmetis are installed).
 * GPATH_LOG_LEVEL=debug logs the generator's and the CSR build's phase times on stderr. Exit 1
 * when a graph cannot be loaded or measured.
 */
#include "bench/roadlike.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gen:N[:SEED] / grid:N[:SEED] -> the generator's graph, else a DIMACS file. */
static gp_graph *load(const char *spec, gp_err *err) {
    int grid = strncmp(spec, "grid:", 5) == 0;
    if (grid || strncmp(spec, "gen:", 4) == 0) {
        char *end;
        unsigned long long n = strtoull(spec + (grid ? 5 : 4), &end, 10), seed = 1;
        if (*end == ':') seed = strtoull(end + 1, &end, 10);
        if (*end) {
            gp_err_set(err, GP_EINVAL, "%s: expected gen:N[:SEED] or grid:N[:SEED]", spec);
            return NULL;
        }
        return grid ? gp_generate_grid(n, seed, err) : gp_generate_road(n, seed, err);
    }
    return gp_load_dimacs(spec, NULL, err);
}

int main(int argc, char **argv) {
    int seeds = ROADLIKE_ND_SEEDS, rc = 0;
    int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL")); /* debug: the generator's phases */
    if (lvl >= 0) gp_log_level = lvl;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-nd") == 0) {
            seeds = 0;
            continue;
        }
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            seeds = (int)strtol(argv[++i], NULL, 10);
            continue;
        }
        if (strcmp(argv[i], "--header") == 0) {
            printf("| graph | nodes | arcs | mean degree | hop diameter | components | ND fill | "
                   "fill / node | "
                   "ND operation count | METIS seeds | load / generate s | one ND s |\n");
            printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
                   "---: |\n");
            fflush(stdout);
            continue;
        }
        gp_err err;
        double t0 = gp_now();
        gp_graph *g = load(argv[i], &err);
        double load_s = gp_now() - t0;
        if (!g) {
            fprintf(stderr, "roadlike: %s\n", err.msg);
            rc = 1;
            continue;
        }
        roadlike r;
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        if (roadlike_measure(g, seeds, &r)) {
            fprintf(stderr, "roadlike: %s: out of memory or METIS failed\n", argv[i]);
            rc = 1;
        } else if (seeds > 0) {
            printf(
                "| %s | %llu | %llu | %.3f | %u | %u | %.4g | %.2f | %.4g | %d | %.2f | %.2f |\n",
                name, (unsigned long long)r.n, (unsigned long long)r.arcs, r.mean_degree,
                r.hop_diameter, r.components, r.fill, r.fill / (double)r.n, r.opc, seeds, load_s,
                r.nd_seconds);
        } else {
            printf("| %s | %llu | %llu | %.3f | %u | %u | - | - | - | 0 | %.2f | - |\n", name,
                   (unsigned long long)r.n, (unsigned long long)r.arcs, r.mean_degree,
                   r.hop_diameter, r.components, load_s);
        }
        fflush(stdout);
        gp_graph_unref(g);
    }
    return rc;
}
