/* import.c - `gpath import FILE [--profile car|bicycle|foot|truck] -o OUT.gpath`.
 *
 * Loads the input through gp_graph_load with progress lines on (the OSM loader prints its phases:
 * read, split, collapse, turn restrictions, graph), computes the CCH order of road-sized graphs
 * (engine/cch.h; the snapshot section "cch.order"), writes the snapshot (graph/snapshot.h) and
 * prints one JSON line: snapshot, source, profile, nodes, edges, version, build and write seconds.
 * The input may be given bare (the first argument that is not an option) or as --graph SPEC; the
 * bare form is why the command parses its own argv (run_argv) before the shared table parser.
 */
#include "cli/import.h"

#include "engine/cch.h"
#include "engine/engine.h"
#include "graph/turns.h"
#include "graph/snapshot.h"
#include "server/config.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gp_cli_opt import_opts[] = {
    {"graph", 'g', "SPEC",
     "the input: FILE.osm.pbf, FILE.osm, osm:PATH?profile=P, or any graph spec (may be given bare)",
     "monaco.osm.pbf", GP_OPT_REQUIRED},
    GP_CLI_OPT_PROFILE,
    {"out", 'o', "FILE.gpath", "the snapshot to write (replaced atomically)", "monaco.gpath",
     GP_OPT_REQUIRED},
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    {"turn-costs", 0, "on|off",
     "the model the snapshot is for (serve's config key turn_costs): on (default) keeps OSM turn "
     "restrictions for the turn graph, off makes node copies for them",
     "off", 0},
    {"cch-order", 0, "METHOD",
     "the CCH order stored for road-sized graphs: nd (default: parallel nested dissection), "
     "metis (one METIS_NodeND call) or flow (nd with Inertial Flow parts on the turn graph); "
     "serve's config key cch_order",
     "metis", 0},
};
static const char *const import_ex[] = {
    "gpath import region.osm.pbf --profile car -o region.gpath",
    "gpath route --graph region.gpath --from 1 --to 2   # maps the snapshot", NULL};

static int run(const gp_cli_args *a) {
    const char *order_name = gp_cli_str(a, "cch-order");
    int omode = gp_cch_order_parse(order_name);
    if (omode < 0)
        return gp_cli_usage_error("--cch-order: '%s' is not an order (nd, metis or flow)",
                                  order_name);
    gp_cch_set_order(omode, 0);
    gp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.progress = 1;
    double t0 = gp_now();
    gp_graph *g;
    int rc = gp_cli_setup(a, &lo, &g, NULL);
    if (rc) return rc;
    double t1 = gp_now();
    const char *out = gp_cli_str(a, "out");
    gp_err err;
    gp_err_clear(&err);
    /* road-sized graphs: the CCH order (--cch-order) goes into the snapshot, so serving skips it;
     * for a road graph with a profile also the order of its turn graph (turn costs, engine.h) */
    gp_snap_extra x[2];
    void *order[2] = {NULL, NULL};
    uint32_t nx = 0;
    gp_turns *T = NULL;
    const char *tcm = gp_cli_str(a, "turn-costs");
    if (tcm && strcmp(tcm, "on") && strcmp(tcm, "off")) {
        gp_graph_unref(g);
        return gp_cli_usage_error("--turn-costs: '%s' is not on or off", tcm);
    }
    const gp_turn_costs *tc = tcm && !strcmp(tcm, "off") ? NULL : gp_turn_costs_find(g->profile);
    if (tc && g->m >= GP_CCH_MIN_NODES_DEFAULT &&
        (!(T = gp_turns_build(g, tc, &err)) ||
         (omode == GP_CCH_ORDER_FLOW && gp_turns_add_xy(T, g, &err) != GP_OK))) {
        gp_turns_free(T);
        gp_graph_unref(g);
        return gp_cli_fail_err(&err);
    }
    for (int k = 0; k < 2; k++) {
        const gp_graph *h = k ? (T ? T->tg : NULL) : g;
        if (!h || h->n < GP_CCH_MIN_NODES_DEFAULT) continue;
        double to = gp_now();
        uint32_t *rank = malloc((size_t)h->n * sizeof *rank);
        x[nx].name = k ? GP_TURNS_CCH_SNAPSHOT_SECTION : GP_CCH_SNAPSHOT_SECTION;
        if (!rank || gp_cch_order(h, rank, &err) != GP_OK ||
            gp_cch_order_encode(rank, h, &order[nx], &x[nx].size, &err) != GP_OK) {
            free(rank);
            free(order[0]);
            gp_turns_free(T);
            gp_graph_unref(g);
            return gp_cli_fail_err(&err);
        }
        free(rank);
        x[nx].data = order[nx];
        nx++;
        fprintf(stderr, "[import %6.2fs] CCH order%s (%s) in %.2f s\n", gp_now() - t0,
                k ? " of the turn graph" : "",
                omode == GP_CCH_ORDER_METIS                    ? "one METIS_NodeND call"
                : omode == GP_CCH_ORDER_FLOW && k && h->cch_xy ? "nested dissection, flow parts"
                                                               : "nested dissection",
                gp_now() - to);
    }
    gp_turns_free(T);
    rc = gp_snapshot_write(g, out, x, nx, &err);
    free(order[0]);
    free(order[1]);
    if (rc != GP_OK) {
        gp_graph_unref(g);
        return gp_cli_fail_err(&err);
    }
    double t2 = gp_now();
    fprintf(stderr, "[import %6.2fs] wrote %s in %.2f s\n", t2 - t0, out, t2 - t1);
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddStringToObject(j, "snapshot", out) ||
        !cJSON_AddStringToObject(j, "source", gp_cli_str(a, "graph")) ||
        !cJSON_AddStringToObject(j, "profile", g->profile) ||
        !cJSON_AddNumberToObject(j, "nodes", g->n) || !cJSON_AddNumberToObject(j, "edges", g->m) ||
        !cJSON_AddStringToObject(j, "version", g->version) ||
        !cJSON_AddNumberToObject(j, "build_seconds", t1 - t0) ||
        !cJSON_AddNumberToObject(j, "write_seconds", t2 - t1)) {
        cJSON_Delete(j);
        j = NULL;
    }
    gp_graph_unref(g);
    return gp_cli_print_json(j);
}

/* 1 when argument s is an option of the table that takes its value from the next argument. */
static int takes_next(const char *s) {
    if (s[0] != '-' || strchr(s, '=')) return 0;
    for (size_t i = 0; i < GP_CLI_NOPTS(import_opts); i++) {
        const gp_cli_opt *o = &import_opts[i];
        if ((s[1] == '-' && strcmp(s + 2, o->name) == 0) || (s[1] == o->short_name && !s[2]))
            return o->arg != NULL;
    }
    return 0;
}

/* argv[0] is "import": the first bare argument (not an option, nor an option's value) becomes
 * --graph, then the shared table parser runs. */
static int run_argv(int argc, char **argv) {
    int lvl = gp_config_env_log_level();
    gp_log_level = lvl >= 0 ? lvl : GP_LOG_WARN;
    char **v = calloc((size_t)argc + 3, sizeof *v);
    if (!v) return gp_cli_usage_error("out of memory");
    int n = 0, bare = 0;
    v[n++] = "gpath";
    v[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-' && !bare && !takes_next(argv[i - 1])) {
            v[n++] = "--graph";
            bare = 1;
        }
        v[n++] = argv[i];
    }
    gp_cli_args *a = NULL;
    int rc = gp_cli_parse(&gp_cli_import, n, v, &a);
    if (!rc && a) rc = run(a);
    gp_cli_args_free(a);
    free(v);
    fflush(stdout);
    return rc;
}

const gp_cli_cmd gp_cli_import = {"import",    "build a graph once and write a .gpath snapshot",
                                  import_opts, GP_CLI_NOPTS(import_opts),
                                  import_ex,   run,
                                  run_argv};
