/* cli.c - the gpath command: the list of subcommands, `gpath --help` / `--version`, and the
 * one-shot queries route, nearest, sssp, table, apsp, info and gen.
 *
 * Each query loads the graph named by --graph (any spec gp_graph_load accepts), answers on an
 * engine (--backend auto|cuda|cpu) and prints the JSON of server/render.h on stdout, so a CLI
 * answer and an HTTP answer are the same document (HTTP adds "graph" and "version"). Options,
 * `gpath SUB --help` and typo suggestions come from each command's table (server/cli_args.h).
 * Exit statuses: 0, 1 failure while answering, 2 bad usage or input ("gpath: <message>" on
 * stderr), 3 no route (the NoRoute error document on stdout, as HTTP answers it). Long work shows
 * progress on stderr (server/cli_progress.h) unless --quiet.
 */
#include "cli.h"

#include "../engine/snap.h"
#include "../graph/spatial.h"
#include "cli_import.h"
#include "cli_netops.h"
#include "cli_progress.h"
#include "config.h"
#include "render.h"
#include "serve.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared helpers ---- */

int gp_cli_fail_err(const gp_err *e) {
    gp_cli_progress_clear();
    fprintf(stderr, "gpath: %s\n", e->msg[0] ? e->msg : gp_status_name(e->code));
    /* bad requests are usage errors (2); the rest (memory, device, I/O mid-answer) are 1 */
    switch (e->code) {
    case GP_EINVAL:
    case GP_EPARSE:
    case GP_ENOTFOUND:
    case GP_EIO:
    case GP_EUNSUPPORTED:
    case GP_ETOOBIG: return GP_CLI_EXIT_USAGE;
    default: return GP_CLI_EXIT_FAIL;
    }
}

int gp_cli_print_json(cJSON *j) {
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!s) {
        fputs("gpath: out of memory rendering the answer\n", stderr);
        return GP_CLI_EXIT_FAIL;
    }
    puts(s);
    free(s);
    return 0;
}

static int print_text(char *s) {
    if (!s) {
        fputs("gpath: out of memory rendering the answer\n", stderr);
        return GP_CLI_EXIT_FAIL;
    }
    puts(s);
    free(s);
    return 0;
}

/* --profile must be what the graph was built with: it applies to OSM files, and a snapshot keeps
 * the profile it was imported with. */
static int check_profile(const gp_cli_args *a, const gp_graph *g) {
    const char *p = gp_cli_str(a, "profile"), *spec = gp_cli_str(a, "graph");
    if (!p || strcmp(p, g->profile) == 0) return 0;
    if (!g->profile[0])
        return gp_cli_usage_error("--profile applies to OpenStreetMap graphs; %s is a %s graph",
                                  spec, g->format);
    return gp_cli_usage_error("--profile %s: %s was built with the %s profile (re-import it with "
                              "--profile %s)",
                              p, spec, g->profile, p);
}

int gp_cli_setup(const gp_cli_args *a, const gp_load_opts *lo_in, gp_graph **g, gp_engine **e) {
    *g = NULL;
    if (e) *e = NULL;
    gp_load_opts lo;
    if (lo_in) lo = *lo_in;
    else memset(&lo, 0, sizeof lo);
    lo.undirected |= gp_cli_flag(a, "undirected");
    lo.profile = gp_cli_str(a, "profile");
    int rc;
    if (gp_cli_str(a, "scale")) {
        if ((rc = gp_cli_double(a, "scale", 0, 1e-9, 1e12, &lo.scale))) return rc;
    }
    uint64_t threads = 0;
    if (e && (rc = gp_cli_u64(a, "threads", 0, 0, 1024, &threads))) return rc;
    const char *backend = gp_cli_str(a, "backend");
    if (!backend) backend = "auto";
    if (e && strcmp(backend, "auto") && strcmp(backend, "cuda") && strcmp(backend, "cpu"))
        return gp_cli_usage_error("--backend: unknown backend '%s' (auto, cuda or cpu)", backend);
    gp_err err;
    gp_err_clear(&err);
    *g = gp_graph_load(gp_cli_str(a, "graph"), &lo, &err);
    if (!*g) return gp_cli_fail_err(&err);
    if ((rc = check_profile(a, *g)) != 0) {
        gp_graph_unref(*g);
        *g = NULL;
        return rc;
    }
    if (!e) return 0;
    *e = gp_engine_new(backend, (int)threads, NULL, &err);
    if (!*e || gp_engine_attach(*e, *g, &err) != GP_OK) {
        rc = gp_cli_fail_err(&err);
        gp_engine_free(*e);
        *e = NULL;
        gp_graph_unref(*g);
        *g = NULL;
        return rc;
    }
    return 0;
}

/* External id -> internal index, or a usage error naming the id and the option. */
static int node_of(const gp_graph *g, const char *s, const char *opt, uint32_t *v) {
    char *end;
    long long id = strtoll(s, &end, 10);
    if (end == s || *end) return gp_cli_usage_error("--%s: '%s' is not an integer node id", opt, s);
    *v = gp_graph_index(g, id);
    if (*v == GP_NONE)
        return gp_cli_usage_error("--%s: unknown node id %lld (not in the graph)", opt, id);
    return 0;
}

/* Comma-separated ids -> malloc'd internal indices. */
static int node_list(const gp_graph *g, const char *s, const char *opt, uint32_t **out,
                     uint32_t *count) {
    uint32_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    uint32_t *v = malloc((size_t)cap * sizeof *v);
    char *copy = strdup(s);
    if (!v || !copy) {
        free(v);
        free(copy);
        return gp_cli_usage_error("out of memory");
    }
    uint32_t k = 0;
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (!*tok) continue;
        rc = node_of(g, tok, opt, &v[k]);
        if (!rc) k++;
    }
    free(copy);
    if (!rc && k == 0) rc = gp_cli_usage_error("--%s: no node ids given", opt);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *count = k;
    return 0;
}

/* Starts the progress reporter (unless --quiet) and loads; the stage then is the caller's. */
static int setup_with_progress(const gp_cli_args *a, gp_cli_progress **pr, gp_graph **g,
                               gp_engine **e) {
    *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    gp_cli_progress_stage(*pr, "loading graph");
    int rc = gp_cli_setup(a, NULL, g, e);
    if (rc) {
        gp_cli_progress_stop(*pr);
        *pr = NULL;
    }
    return rc;
}

/* ---- route ---- */

static const gp_cli_opt route_opts[] = {
    GP_CLI_OPT_GRAPH,
    GP_CLI_OPT_PROFILE,
    {"from", 'f', "ID", "source node (the graph's own id)", "1", GP_OPT_REQUIRED},
    {"to", 't', "ID", "target node", "250", GP_OPT_REQUIRED},
    {"algo", 'a', "A", "auto, dijkstra, bidir or astar (A* needs coordinates; default auto)",
     "astar", 0},
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const route_ex[] = {
    "gpath route -g gen:10000:7 -f 1 -t 250 --algo astar   # path + GeoJSON geometry",
    "gpath route --graph road.gr --from 1 --to 99999 --backend cpu", NULL};

static int cmd_route(const gp_cli_args *a) {
    int algo = GP_P2P_AUTO;
    const char *al = gp_cli_str(a, "algo");
    if (al) {
        if (strcmp(al, "dijkstra") == 0) algo = GP_P2P_DIJKSTRA;
        else if (strcmp(al, "bidir") == 0) algo = GP_P2P_BIDIR;
        else if (strcmp(al, "astar") == 0) algo = GP_P2P_ASTAR;
        else if (strcmp(al, "auto") != 0)
            return gp_cli_usage_error("--algo: unknown algorithm '%s' (auto, dijkstra, bidir or "
                                      "astar)",
                                      al);
    }
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    int rc = setup_with_progress(a, &pr, &g, &e);
    if (rc) return rc;
    gp_cli_progress_stage(pr, "route");
    uint32_t s, t;
    if (algo == GP_P2P_ASTAR && !g->lon) {
        rc = gp_cli_usage_error("--algo astar needs coordinates; graph '%s' has none",
                                gp_cli_str(a, "graph"));
    } else if (!(rc = node_of(g, gp_cli_str(a, "from"), "from", &s)) &&
               !(rc = node_of(g, gp_cli_str(a, "to"), "to", &t))) {
        /* the HTTP route's own path (engine/snap.h with nodes as positions), so the document is
         * the same as GET .../route?from=&to= */
        gp_snap sa, sb;
        gp_snap_at_node(g, s, &sa);
        gp_snap_at_node(g, t, &sb);
        gp_snap_route sr;
        memset(&sr, 0, sizeof sr);
        gp_err err;
        gp_err_clear(&err);
        if (gp_engine_route_snap(e, g, &sa, &sb, algo, &sr, &err) != GP_OK) {
            rc = gp_cli_fail_err(&err);
        } else if (sr.dist == GP_INF) {
            /* HTTP's NoRoute document, the graph named by its spec as `info` names it */
            char fa[64], fb[64], msg[1200];
            gp_render_node_desc(fa, sizeof fa, g->ext[s]);
            gp_render_node_desc(fb, sizeof fb, g->ext[t]);
            gp_render_no_route_msg(msg, sizeof msg, fa, fb, gp_cli_str(a, "graph"));
            gp_cli_progress_clear();
            fprintf(stderr, "gpath: %s\n", msg);
            rc = gp_cli_print_json(gp_render_no_route(fa, fb, gp_cli_str(a, "graph")));
            if (rc == 0) rc = GP_CLI_EXIT_NO_ROUTE;
        } else {
            rc = gp_cli_print_json(gp_render_route_snap(g, &sa, &sb, &sr));
        }
        gp_snap_route_free(&sr);
    }
    gp_cli_progress_stop(pr);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

/* ---- nearest ---- */

static const gp_cli_opt nearest_opts[] = {
    GP_CLI_OPT_GRAPH,
    GP_CLI_OPT_PROFILE,
    {"lon", 'x', "LON", "longitude of the point, degrees in [-180, 180]", "8.5", GP_OPT_REQUIRED},
    {"lat", 'y', "LAT", "latitude of the point, degrees in [-90, 90]", "47.3", GP_OPT_REQUIRED},
    {"number", 'n', "K", "how many nodes, nearest first (default 1)", "3", 0},
    {"radius", 'r', "M",
     "the waypoint (nearest road position) only within M metres (default: max_snap_m, 1000)",
     "250", 0},
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const nearest_ex[] = {
    "gpath nearest -g gen:10000:7 --lon 8.5 --lat 47.3 -n 3",
    "gpath nearest --graph osm/monaco.osm.pbf --lon 7.4246 --lat 43.7384", NULL};

static int cmd_nearest(const gp_cli_args *a) {
    double lon, lat, radius;
    uint64_t k;
    gp_config *defaults = malloc(sizeof *defaults); /* the snapping radius of the config table */
    if (!defaults) return gp_cli_usage_error("out of memory");
    gp_config_defaults(defaults);
    double def_radius = (double)defaults->max_snap_m;
    free(defaults);
    int rc;
    if ((rc = gp_cli_double(a, "lon", 0, -180, 180, &lon)) ||
        (rc = gp_cli_double(a, "lat", 0, -90, 90, &lat)) ||
        (rc = gp_cli_u64(a, "number", 1, 1, 1000000, &k)) ||
        (rc = gp_cli_double(a, "radius", def_radius, 0, 2e7, &radius)))
        return rc;
    gp_graph *g;
    gp_cli_progress *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    gp_cli_progress_stage(pr, "loading graph");
    rc = gp_cli_setup(a, NULL, &g, NULL);
    gp_cli_progress_stop(pr);
    if (rc) return rc;
    if (!g->lon || !g->spatial) {
        rc = gp_cli_usage_error("nearest: graph '%s' has no node coordinates",
                                gp_cli_str(a, "graph"));
        gp_graph_unref(g);
        return rc;
    }
    if (k > g->n) k = g->n;
    uint32_t *nodes = malloc(sizeof *nodes * (size_t)(k ? k : 1));
    double *metres = malloc(sizeof *metres * (size_t)(k ? k : 1));
    int n = nodes && metres ? gp_spatial_nearest(g->spatial, g, lon, lat, (uint32_t)k, nodes, metres)
                            : -1;
    if (n < 0) {
        fputs("gpath: nearest-node lookup failed (out of memory)\n", stderr);
        rc = GP_CLI_EXIT_FAIL;
    } else {
        gp_snap s;
        gp_err err;
        int sr = gp_snap_point(g, lon, lat, radius, &s, &err);
        rc = gp_cli_print_json(gp_render_nearest(g, lon, lat, nodes, metres, n,
                                                 sr == GP_OK ? &s : NULL));
    }
    free(nodes);
    free(metres);
    gp_graph_unref(g);
    return rc;
}

/* ---- sssp ---- */

static const gp_cli_opt sssp_opts[] = {
    GP_CLI_OPT_GRAPH,
    GP_CLI_OPT_PROFILE,
    {"source", 's', "ID", "the tree's root node", "1", GP_OPT_REQUIRED},
    {"max-distance", 'd', "D", "stop the tree at distance D (input units)", "600", 0},
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const sssp_ex[] = {
    "gpath sssp -g gen:10000:7 -s 1 --max-distance 600   # the nodes within 60 s", NULL};

static int cmd_sssp(const gp_cli_args *a) {
    double maxd;
    int rc = gp_cli_double(a, "max-distance", -1, 0, 1e300, &maxd);
    if (rc) return rc;
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    if ((rc = setup_with_progress(a, &pr, &g, &e))) return rc;
    gp_cli_progress_stage(pr, "sssp");
    uint32_t s;
    uint64_t *dist = NULL;
    uint32_t *pred = NULL;
    if (!(rc = node_of(g, gp_cli_str(a, "source"), "source", &s))) {
        uint64_t limit = GP_INF;
        if (maxd >= 0) {
            /* stored units; the tiny slack keeps D exactly representable in input units inclusive */
            double lim = floor(maxd * g->scale * (1.0 + 1e-12));
            limit = lim >= 1.8e19 ? GP_INF : (uint64_t)lim;
        }
        dist = malloc((size_t)g->n * sizeof *dist);
        pred = malloc((size_t)g->n * sizeof *pred);
        gp_err err;
        gp_err_clear(&err);
        if (!dist || !pred) {
            rc = gp_cli_usage_error("out of memory for %u distances", g->n);
        } else if (gp_engine_sssp(e, g, s, limit, dist, pred, &err) != GP_OK) {
            rc = gp_cli_fail_err(&err);
        } else {
            gp_cli_progress_stage(pr, "writing answer");
            rc = print_text(gp_render_sssp_text(g, s, dist, pred, NULL));
        }
    }
    gp_cli_progress_stop(pr);
    free(dist);
    free(pred);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

/* ---- table ---- */

static const gp_cli_opt table_opts[] = {
    GP_CLI_OPT_GRAPH,
    GP_CLI_OPT_PROFILE,
    {"sources", 's', "ID,ID,...", "source nodes, one row each", "1,5000", GP_OPT_REQUIRED},
    {"targets", 't', "ID,ID,...", "target nodes, one column each (default: the sources)",
     "250,9999", 0},
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const table_ex[] = {
    "gpath table -g gen:10000:7 -s 1,5000 -t 250,9999",
    "gpath table --graph road.gr --sources 1,2,3   # 3 x 3", NULL};

static int cmd_table(const gp_cli_args *a) {
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    int rc = setup_with_progress(a, &pr, &g, &e);
    if (rc) return rc;
    uint32_t *src = NULL, *dst = NULL, ns = 0, nt = 0;
    uint64_t *out = NULL;
    const char *tg = gp_cli_str(a, "targets");
    rc = node_list(g, gp_cli_str(a, "sources"), "sources", &src, &ns);
    if (!rc) rc = node_list(g, tg ? tg : gp_cli_str(a, "sources"), tg ? "targets" : "sources",
                            &dst, &nt);
    if (!rc) {
        out = malloc((size_t)ns * nt * sizeof *out);
        gp_err err;
        gp_err_clear(&err);
        gp_cli_progress_stage(pr, "table");
        if (!out) {
            rc = gp_cli_usage_error("out of memory for a %u x %u table", ns, nt);
        } else if (gp_engine_table(e, g, src, ns, dst, nt, out, &err) != GP_OK) {
            rc = gp_cli_fail_err(&err);
        } else {
            gp_cli_progress_stage(pr, "writing answer");
            rc = print_text(gp_render_table_text(g, src, ns, dst, nt, out, NULL));
        }
    }
    gp_cli_progress_stop(pr);
    free(src);
    free(dst);
    free(out);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

/* ---- apsp ---- */

static const gp_cli_opt apsp_opts[] = {
    GP_CLI_OPT_GRAPH,
    {"next-hops", 'N', NULL, "also print the next-hop matrix", NULL, 0},
    {"max-nodes", 0, "N", "refuse graphs above N nodes (default 20000: a 4.8 GB answer)", "50000",
     0},
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const apsp_ex[] = {"gpath apsp -g gen:100:7 --next-hops   # Floyd-Warshall",
                                      "gpath apsp --graph gen:6000 >d.json   # progress on stderr",
                                      NULL};

static int cmd_apsp(const gp_cli_args *a) {
    uint64_t max_nodes;
    int rc = gp_cli_u64(a, "max-nodes", 20000, 1, UINT32_MAX, &max_nodes);
    if (rc) return rc;
    int want_next = gp_cli_flag(a, "next-hops");
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    if ((rc = setup_with_progress(a, &pr, &g, &e))) return rc;
    if (g->n > max_nodes) {
        gp_cli_progress_stop(pr);
        rc = gp_cli_usage_error("apsp: the graph has %u nodes, over the limit of %llu (an n x n "
                                "matrix of %.1f GB); raise it with --max-nodes",
                                g->n, (unsigned long long)max_nodes,
                                (double)g->n * g->n * 12 / 1e9);
        gp_engine_free(e);
        gp_graph_unref(g);
        return rc;
    }
    size_t nn = (size_t)g->n * g->n;
    uint64_t *dist = malloc(nn * sizeof *dist);
    uint32_t *next = want_next ? malloc(nn * sizeof *next) : NULL;
    gp_err err;
    gp_err_clear(&err);
    gp_cli_progress_stage(pr, "apsp");
    if (!dist || (want_next && !next)) {
        rc = gp_cli_usage_error("apsp: out of memory for a %u x %u matrix", g->n, g->n);
    } else if (gp_engine_apsp(e, g, dist, next, &err) != GP_OK) {
        rc = gp_cli_fail_err(&err);
    } else {
        gp_cli_progress_stage(pr, "writing answer");
        rc = print_text(gp_render_apsp_text(g, dist, next, NULL));
    }
    gp_cli_progress_stop(pr);
    free(dist);
    free(next);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

/* ---- info, gen ---- */

static const gp_cli_opt info_opts[] = {GP_CLI_OPT_GRAPH, GP_CLI_OPT_PROFILE, GP_CLI_OPT_SCALE,
                                       GP_CLI_OPT_UNDIRECTED, GP_CLI_OPT_QUIET};
static const char *const info_ex[] = {"gpath info -g gen:10000:7", NULL};

static int cmd_info(const gp_cli_args *a) {
    gp_graph *g;
    gp_cli_progress *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    gp_cli_progress_stage(pr, "loading graph");
    int rc = gp_cli_setup(a, NULL, &g, NULL);
    gp_cli_progress_stop(pr);
    if (rc) return rc;
    rc = gp_cli_print_json(gp_render_graph_info(g, gp_cli_str(a, "graph")));
    gp_graph_unref(g);
    return rc;
}

static const gp_cli_opt gen_opts[] = {
    {"nodes", 'n', "N", "nodes to generate (100..100,000,000)", "100000", GP_OPT_REQUIRED},
    {"seed", 's', "S", "generator seed (default 1): same N and seed, same graph", "7", 0},
    {"out", 'o', "FILE.gr", "DIMACS output; coordinates go to FILE.co", "road.gr",
     GP_OPT_REQUIRED},
    GP_CLI_OPT_QUIET,
};
static const char *const gen_ex[] = {
    "gpath gen -n 100000 -s 7 -o road.gr   # writes road.gr + road.co",
    "gpath route --graph road.gr --from 1 --to 99999   # read back", NULL};

static int cmd_gen(const gp_cli_args *a) {
    uint64_t n, seed;
    int rc;
    if ((rc = gp_cli_u64(a, "nodes", 0, 0, UINT64_MAX, &n)) ||
        (rc = gp_cli_u64(a, "seed", 1, 0, UINT64_MAX, &seed)))
        return rc;
    const char *outp = gp_cli_str(a, "out");
    size_t l = strlen(outp);
    char *co = malloc(l + 4);
    if (!co) return gp_cli_usage_error("out of memory");
    if (l > 3 && strcmp(outp + l - 3, ".gr") == 0)
        snprintf(co, l + 4, "%.*s.co", (int)(l - 3), outp);
    else
        snprintf(co, l + 4, "%s.co", outp);
    gp_err err;
    gp_err_clear(&err);
    gp_cli_progress *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    gp_cli_progress_stage(pr, "generating graph");
    gp_graph *g = gp_generate_road(n, seed, &err);
    if (!g) {
        gp_cli_progress_stop(pr);
        free(co);
        return gp_cli_fail_err(&err);
    }
    gp_cli_progress_stage(pr, "writing DIMACS");
    rc = gp_write_dimacs(g, outp, co, &err);
    gp_cli_progress_stop(pr);
    if (rc != GP_OK) {
        rc = gp_cli_fail_err(&err);
    } else {
        cJSON *j = cJSON_CreateObject();
        if (j && cJSON_AddNumberToObject(j, "nodes", g->n) &&
            cJSON_AddNumberToObject(j, "edges", g->m) && cJSON_AddStringToObject(j, "graph", outp) &&
            cJSON_AddStringToObject(j, "coordinates", co) &&
            cJSON_AddStringToObject(j, "version", g->version)) {
            rc = gp_cli_print_json(j);
        } else {
            cJSON_Delete(j);
            rc = gp_cli_print_json(NULL);
        }
    }
    free(co);
    gp_graph_unref(g);
    return rc;
}

static const gp_cli_cmd cmd_defs[] = {
    {"route", "shortest path between two nodes", route_opts, GP_CLI_NOPTS(route_opts), route_ex,
     cmd_route, NULL},
    {"nearest", "the nodes nearest to a point (lon, lat)", nearest_opts,
     GP_CLI_NOPTS(nearest_opts), nearest_ex, cmd_nearest, NULL},
    {"sssp", "shortest-path tree from one node", sssp_opts, GP_CLI_NOPTS(sssp_opts), sssp_ex,
     cmd_sssp, NULL},
    {"table", "many-to-many distance table", table_opts, GP_CLI_NOPTS(table_opts), table_ex,
     cmd_table, NULL},
    {"apsp", "all-pairs distances (Floyd-Warshall)", apsp_opts, GP_CLI_NOPTS(apsp_opts), apsp_ex,
     cmd_apsp, NULL},
    {"info", "describe a graph", info_opts, GP_CLI_NOPTS(info_opts), info_ex, cmd_info, NULL},
    {"gen", "write a generated road graph as DIMACS .gr/.co", gen_opts, GP_CLI_NOPTS(gen_opts),
     gen_ex, cmd_gen, NULL},
};

/* Every subcommand, in `gpath --help` order. Add yours here (one line). */
static const gp_cli_cmd *const commands[] = {
    &gp_cli_serve, /* server/config.c: options from the configuration table */
    &cmd_defs[0],  /* route */
    &cmd_defs[1],  /* nearest */
    &cmd_defs[2],  /* sssp */
    &cmd_defs[3],  /* table */
    &cmd_defs[4],  /* apsp */
    &gp_cli_routing_tables, /* server/cli_netops.c */
    &gp_cli_what_if,
    &cmd_defs[5], /* info */
    &cmd_defs[6], /* gen */
    &gp_cli_import, /* server/cli_import.c */
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage_main(FILE *f) {
    fprintf(f, "usage: gpath COMMAND [OPTIONS]   (gpath COMMAND --help: its options, with "
               "examples)\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-15s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\n  --version       print the version\n  --help          this list\n\n"
               "Output is JSON on stdout; errors go to stderr. Exit status: 0 ok, 1 failure, 2 bad "
               "usage or\ninput, 3 no route.\n");
}

int gp_cli_main(int argc, char **argv) {
    if (argc < 2) {
        usage_main(stderr);
        return GP_CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        if (argc >= 3)
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(commands[i]->name, argv[2]) == 0) {
                    if (commands[i]->run_argv) {
                        char *hv[] = {argv[2], "--help", NULL};
                        return commands[i]->run_argv(2, hv);
                    }
                    gp_cli_help(commands[i], stdout);
                    return 0;
                }
        usage_main(stdout);
        return 0;
    }
    if (strcmp(sub, "--version") == 0 || strcmp(sub, "-V") == 0 || strcmp(sub, "version") == 0) {
        printf("gpath %s (%s backend compiled)\n", GPATH_VERSION,
               gp_cuda_compiled() ? "cuda and cpu" : "cpu only");
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const gp_cli_cmd *c = commands[i];
        if (strcmp(c->name, sub) != 0) continue;
        if (c->run_argv) return c->run_argv(argc - 1, argv + 1);
        /* one-shot commands keep stderr for problems: warnings and up unless GPATH_LOG_LEVEL says */
        int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL"));
        gp_log_level = lvl >= 0 ? lvl : GP_LOG_WARN;
        gp_cli_args *a;
        int rc = gp_cli_parse(c, argc, argv, &a);
        if (!a) return rc;
        rc = c->run(a);
        gp_cli_args_free(a);
        fflush(stdout);
        return rc;
    }
    const char *names[64];
    for (size_t i = 0; i < NCOMMANDS && i < 64; i++) names[i] = commands[i]->name;
    const char *s = gp_cli_suggest(sub, names, NCOMMANDS);
    if (s) fprintf(stderr, "gpath: unknown command '%s'; did you mean '%s'?\n\n", sub, s);
    else fprintf(stderr, "gpath: unknown command '%s'\n\n", sub);
    usage_main(stderr);
    return GP_CLI_EXIT_USAGE;
}
