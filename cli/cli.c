/* cli.c - the gpath command: the list of subcommands, `gpath --help` / `--version`, and the
 * one-shot queries route, nearest, sssp, table, apsp, info and gen.
 *
 * Each query loads the graph named by --graph (any spec gp_graph_load accepts), answers on an
 * engine (--backend auto|cuda|cpu) and prints on stdout the document HTTP answers for the same
 * request, built by the same function of server/api/render.h, with "graph" naming the graph by its
 * --graph spec. Places (--from, --to, --source, --sources, --targets) are node ids or lon,lat
 * coordinates, parsed and snapped (--radius) by HTTP's own code (server/api/params.h, engine/snap.h).
 * Options, `gpath SUB --help` and typo suggestions come from each command's table
 * (cli/args.h). Exit statuses: 0, 1 failure while answering, 2 bad usage or input
 * ("gpath: <message>" on stderr; for a problem HTTP answers with an error document - unknown
 * node, no segment within the radius, no coordinates, a malformed place - that document on
 * stdout too), 3 no route (the NoRoute error document on stdout). Long work shows progress on
 * stderr (cli/progress.h) unless --quiet.
 */
#include "cli/cli.h"

#include "engine/snap.h"
#include "graph/spatial.h"
#include "cli/import.h"
#include "cli/netops.h"
#include "cli/progress.h"
#include "cli/serve.h"
#include "server/config.h"
#include "server/http/http.h"
#include "server/api/params.h"
#include "server/api/render.h"
#include "server/api/suggest.h"
#include "storage/source.h"

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
    /* turn costs on (the default): OSM turn restrictions go into the turn model (graph/turns.h),
     * off: node copies for the node-based model */
    const char *tcm = gp_cli_str(a, "turn-costs");
    lo.restrictions_as_turns = !(tcm && strcmp(tcm, "off") == 0);
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
    /* one query per process: a CCH's preprocessing (seconds on road graphs) would not pay */
    if (*e) gp_engine_set_cch(*e, "off", 0, GP_CCH_MAX_TRI_PER_NODE, NULL);
    const char *tc = gp_cli_str(a, "turn-costs");
    if (*e && tc && gp_engine_set_turn_costs(*e, tc, &err) != GP_OK) {
        gp_engine_free(*e);
        *e = NULL;
        gp_graph_unref(*g);
        *g = NULL;
        return gp_cli_usage_error("--turn-costs: %s", err.msg);
    }
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

/* The snapping radius: --radius, else the configuration table's max_snap_m (HTTP's default). */
static int cli_radius(const gp_cli_args *a, double *radius) {
    gp_config *defaults = malloc(sizeof *defaults);
    if (!defaults) return gp_cli_usage_error("out of memory");
    gp_config_defaults(defaults);
    double def = (double)defaults->max_snap_m;
    free(defaults);
    return gp_cli_double(a, "radius", def, 0, 2e7, radius);
}

int gp_cli_answer_error(int hcode, const char *msg) {
    gp_cli_progress_clear();
    fprintf(stderr, "gpath: %s\n", msg);
    int rc = gp_cli_print_json(gp_render_error_doc(gp_http_code_name(hcode), msg));
    if (rc) return rc;
    return hcode == GP_HC_NO_ROUTE   ? GP_CLI_EXIT_NO_ROUTE
           : hcode >= GP_HC_INTERNAL ? GP_CLI_EXIT_FAIL
                                     : GP_CLI_EXIT_USAGE;
}

/* --opt's place (a node id or lon,lat) as a position, through the /v1 API's parser and resolver
 * (server/api/params.h) with HTTP's parameter name `what` in messages; errors as gp_cli_answer_error. */
static int cli_place(const gp_cli_args *a, const gp_graph *g, const char *opt, const char *what,
                     double radius, gp_snap *out, int *is_coord) {
    gp_place p;
    gp_err err;
    char msg[1024];
    int code;
    if (gp_parse_place(gp_cli_str(a, opt), &p, what, &err))
        return gp_cli_answer_error(GP_HC_INVALID_QUERY, err.msg);
    if (is_coord) *is_coord = p.is_coord;
    if (gp_place_snap(g, gp_cli_str(a, "graph"), &p, what, radius, out, &code, msg, sizeof msg))
        return gp_cli_answer_error(code, msg);
    return 0;
}

/* A list of places: ';' between places as in HTTP's query strings ("1;7.42,43.73"); a value
 * without ';' made only of integers is the list of node ids "1,2,3". Positions malloc'd. */
static int cli_places(const gp_cli_args *a, const gp_graph *g, const char *value, const char *what,
                      double radius, gp_snap **out, uint32_t *n) {
    char *text = strdup(value);
    if (!text) return gp_cli_usage_error("out of memory");
    if (!strchr(text, ';')) {
        int ids = 1;
        char *copy = strdup(text), *save = NULL;
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
             t = strtok_r(NULL, ",", &save)) {
            int64_t x;
            ids &= gp_parse_i64(t, &x) == 0;
        }
        if (copy && ids)
            for (char *q = text; *q; q++) *q = *q == ',' ? ';' : *q;
        free(copy);
    }
    gp_place *list = NULL;
    gp_err err;
    char msg[1024];
    int code, rc = 0;
    if (gp_parse_places(text, &list, n, what, &err))
        rc = gp_cli_answer_error(GP_HC_INVALID_QUERY, err.msg);
    else if (!(*out = gp_places_snap(g, gp_cli_str(a, "graph"), list, *n, what, radius, &code, msg,
                                     sizeof msg)))
        rc = gp_cli_answer_error(code, msg);
    free(list);
    free(text);
    return rc;
}

/* Prints a text document (server/api/render.h's *_doc, newline included) and frees it. */
static int print_doc(char *doc, size_t len) {
    if (!doc) {
        fputs("gpath: out of memory rendering the answer\n", stderr);
        return GP_CLI_EXIT_FAIL;
    }
    int ok = fwrite(doc, 1, len, stdout) == len;
    free(doc);
    if (!ok) fputs("gpath: write error\n", stderr);
    return ok ? 0 : GP_CLI_EXIT_FAIL;
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

/* clang-format off */
#define OPT_RADIUS                                                                                 \
    {"radius", 'r', "M",                                                                           \
     "snap coordinates to a road segment within M metres (default: max_snap_m, 1000)", "250", 0}
/* clang-format on */

static const gp_cli_opt route_opts[] = {
    GP_CLI_OPT_GRAPH,
    GP_CLI_OPT_PROFILE,
    {"from", 'f', "PLACE", "start: a node id (the graph's own) or a coordinate lon,lat", "1",
     GP_OPT_REQUIRED},
    {"to", 't', "PLACE", "end: a node id or lon,lat (snapped as HTTP's to=)", "8.52,47.31",
     GP_OPT_REQUIRED},
    {"algo", 'a', "A", "auto, dijkstra, bidir or astar (A* needs coordinates; default auto)",
     "astar", 0},
    OPT_RADIUS,
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_TURN_COSTS,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const route_ex[] = {
    "gpath route -g gen:10000:7 -f 1 -t 250 --algo astar   # path + GeoJSON geometry",
    "gpath route --graph road.gr --from 1 --to 99999 --backend cpu",
    "gpath route -g gen:10000:7 -f 8.4705,47.2801 -t 8.52,47.31   # coordinates, lon first", NULL};

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
    double radius;
    int rc = cli_radius(a, &radius);
    if (rc) return rc;
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    if ((rc = setup_with_progress(a, &pr, &g, &e))) return rc;
    gp_cli_progress_stage(pr, "route");
    const char *spec = gp_cli_str(a, "graph");
    gp_snap sa, sb;
    int ca = 0, cb = 0;
    if (algo == GP_P2P_ASTAR && !g->lon) {
        char msg[600]; /* HTTP's NoCoordinates answer */
        snprintf(msg, sizeof msg, "algo=astar needs coordinates; graph '%s' has none", spec);
        rc = gp_cli_answer_error(GP_HC_NO_COORDINATES, msg);
    } else if (!(rc = cli_place(a, g, "from", "from", radius, &sa, &ca)) &&
               !(rc = cli_place(a, g, "to", "to", radius, &sb, &cb))) {
        /* the HTTP route's own path and document (engine/snap.h, server/api/render.h) */
        gp_snap_route sr;
        memset(&sr, 0, sizeof sr);
        gp_err err;
        gp_err_clear(&err);
        if (gp_engine_route_snap(e, g, &sa, &sb, algo, &sr, &err) != GP_OK) {
            rc = gp_cli_fail_err(&err);
        } else if (sr.dist == GP_INF) {
            /* HTTP's NoRoute document, the graph named by its spec as `info` names it */
            char fa[160], fb[160], msg[1200];
            gp_render_place_desc(fa, sizeof fa, g, ca, &sa);
            gp_render_place_desc(fb, sizeof fb, g, cb, &sb);
            gp_render_no_route_msg(msg, sizeof msg, fa, fb, spec);
            rc = gp_cli_answer_error(GP_HC_NO_ROUTE, msg);
        } else {
            rc = gp_cli_print_json(gp_render_route_doc(g, spec, &sa, &sb, &sr));
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
    OPT_RADIUS,
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
    int rc;
    if ((rc = gp_cli_double(a, "lon", 0, -180, 180, &lon)) ||
        (rc = gp_cli_double(a, "lat", 0, -90, 90, &lat)) ||
        (rc = gp_cli_u64(a, "number", 1, 1, 1000000, &k)) || (rc = cli_radius(a, &radius)))
        return rc;
    gp_graph *g;
    gp_cli_progress *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    gp_cli_progress_stage(pr, "loading graph");
    rc = gp_cli_setup(a, NULL, &g, NULL);
    gp_cli_progress_stop(pr);
    if (rc) return rc;
    if (!g->lon || !g->spatial) {
        char msg[600]; /* HTTP's NoCoordinates answer */
        snprintf(msg, sizeof msg, "graph '%s' has no node coordinates", gp_cli_str(a, "graph"));
        rc = gp_cli_answer_error(GP_HC_NO_COORDINATES, msg);
        gp_graph_unref(g);
        return rc;
    }
    if (k > g->n) k = g->n;
    uint32_t *nodes = malloc(sizeof *nodes * (size_t)(k ? k : 1));
    double *metres = malloc(sizeof *metres * (size_t)(k ? k : 1));
    int n = nodes && metres
                ? gp_spatial_nearest(g->spatial, g, lon, lat, (uint32_t)k, nodes, metres)
                : -1;
    if (n < 0) {
        fputs("gpath: nearest-node lookup failed (out of memory)\n", stderr);
        rc = GP_CLI_EXIT_FAIL;
    } else {
        gp_snap s;
        gp_err err;
        int sr = gp_snap_point(g, lon, lat, radius, &s, &err);
        rc = gp_cli_print_json(gp_render_nearest_doc(g, gp_cli_str(a, "graph"), lon, lat, nodes,
                                                     metres, n, sr == GP_OK ? &s : NULL));
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
    {"source", 's', "PLACE", "the tree's root: a node id or a coordinate lon,lat", "1",
     GP_OPT_REQUIRED},
    {"max-weight", 'w', "W", "stop the tree at weight W (the graph's weight unit)", "600", 0},
    {"max-distance", 'd', "W", "the old name of --max-weight (a weight, not metres)", "600", 0},
    OPT_RADIUS,
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_TURN_COSTS,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const sssp_ex[] = {
    "gpath sssp -g gen:10000:7 -s 1 --max-weight 600   # the nodes within 60 s", NULL};

static int cmd_sssp(const gp_cli_args *a) {
    double maxd, old, radius;
    int rc;
    if ((rc = gp_cli_double(a, "max-weight", -1, 0, 1e300, &maxd)) ||
        (rc = gp_cli_double(a, "max-distance", -1, 0, 1e300, &old)) ||
        (rc = cli_radius(a, &radius)))
        return rc;
    if (maxd >= 0 && old >= 0)
        return gp_cli_usage_error("give --max-weight or its old name --max-distance, not both");
    if (old >= 0) maxd = old;
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    if ((rc = setup_with_progress(a, &pr, &g, &e))) return rc;
    gp_cli_progress_stage(pr, "sssp");
    gp_snap s;
    uint64_t *dist = NULL;
    uint32_t *pred = NULL;
    if (!(rc = cli_place(a, g, "source", "source", radius, &s, NULL))) {
        uint64_t limit = maxd >= 0 ? gp_max_distance_limit(g, maxd) : GP_INF; /* as HTTP's */
        dist = malloc((size_t)g->n * sizeof *dist);
        pred = malloc((size_t)g->n * sizeof *pred);
        gp_err err;
        gp_err_clear(&err);
        if (!dist || !pred) {
            rc = gp_cli_usage_error("out of memory for %u distances", g->n);
        } else if (gp_engine_sssp_snap(e, g, &s, limit, dist, pred, &err) != GP_OK) {
            rc = gp_cli_fail_err(&err);
        } else {
            gp_cli_progress_stage(pr, "writing answer");
            size_t len = 0; /* HTTP's sssp document (server/api/render.h) */
            char *doc = gp_render_sssp_doc(g, gp_cli_str(a, "graph"), &s, dist, pred, &len);
            rc = print_doc(doc, len);
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
    {"sources", 's', "PLACES",
     "one row each: node ids 1,2,3, or places (id or lon,lat) separated by ';'",
     "'1;8.4705,47.2801'", GP_OPT_REQUIRED},
    {"targets", 't', "PLACES", "one column each, as --sources (default: the sources)", "250,9999",
     0},
    OPT_RADIUS,
    GP_CLI_OPT_BACKEND,
    GP_CLI_OPT_TURN_COSTS,
    GP_CLI_OPT_THREADS,
    GP_CLI_OPT_SCALE,
    GP_CLI_OPT_UNDIRECTED,
    GP_CLI_OPT_QUIET,
};
static const char *const table_ex[] = {
    "gpath table -g gen:10000:7 -s 1,5000 -t 250,9999",
    "gpath table --graph road.gr --sources 1,2,3   # 3 x 3",
    "gpath table -g gen:10000:7 -s '1;8.4705,47.2801' -t '500;8.52,47.31'   # ids and lon,lat",
    NULL};

static int cmd_table(const gp_cli_args *a) {
    double radius;
    int rc = cli_radius(a, &radius);
    if (rc) return rc;
    gp_graph *g;
    gp_engine *e;
    gp_cli_progress *pr;
    if ((rc = setup_with_progress(a, &pr, &g, &e))) return rc;
    gp_snap *ss = NULL, *ts = NULL;
    uint32_t ns = 0, nt = 0, *src = NULL, *dst = NULL;
    uint64_t *out = NULL;
    const char *tg = gp_cli_str(a, "targets");
    rc = cli_places(a, g, gp_cli_str(a, "sources"), "sources", radius, &ss, &ns);
    if (!rc)
        rc = cli_places(a, g, tg ? tg : gp_cli_str(a, "sources"), tg ? "targets" : "sources",
                        radius, &ts, &nt);
    if (!rc) {
        out = malloc((size_t)ns * nt * sizeof *out);
        src = malloc(sizeof *src * ns);
        dst = malloc(sizeof *dst * nt);
        gp_err err;
        gp_err_clear(&err);
        gp_cli_progress_stage(pr, "table");
        int by_node = 1; /* node ids only: the plain table, as HTTP computes it */
        for (uint32_t i = 0; src && i < ns; i++)
            src[i] = ss[i].node, by_node &= ss[i].arc == GP_NONE;
        for (uint32_t j = 0; dst && j < nt; j++)
            dst[j] = ts[j].node, by_node &= ts[j].arc == GP_NONE;
        if (!out || !src || !dst) {
            rc = gp_cli_usage_error("out of memory for a %u x %u table", ns, nt);
        } else if ((by_node ? gp_engine_table(e, g, src, ns, dst, nt, out, &err)
                            : gp_engine_table_snap(e, g, ss, ns, ts, nt, out, &err)) != GP_OK) {
            rc = gp_cli_fail_err(&err);
        } else {
            gp_cli_progress_stage(pr, "writing answer");
            size_t len = 0; /* HTTP's table document (server/api/render.h) */
            char *doc = gp_render_table_doc(g, gp_cli_str(a, "graph"), ss, ns, ts, nt, out, &len);
            rc = print_doc(doc, len);
        }
    }
    gp_cli_progress_stop(pr);
    free(ss);
    free(ts);
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
    GP_CLI_OPT_TURN_COSTS,
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
        size_t len = 0; /* HTTP's apsp document (server/api/render.h) */
        char *doc = gp_render_apsp_doc(g, gp_cli_str(a, "graph"), dist, next, &len);
        rc = print_doc(doc, len);
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
    {"out", 'o', "FILE.gr", "DIMACS output; coordinates go to FILE.co (needed unless --osm)",
     "road.gr", 0},
    {"osm", 0, "FILE.osm",
     "also (or instead) write OSM XML: ways with highway, maxspeed (km/h) and oneway", "road.osm",
     0},
    GP_CLI_OPT_QUIET,
};
static const char *const gen_ex[] = {
    "gpath gen -n 100000 -s 7 -o road.gr   # writes road.gr + road.co",
    "gpath gen -n 100000 --osm road.osm    # OSM XML (osmium cat road.osm -o road.osm.pbf)",
    "gpath route --graph road.gr --from 1 --to 99999   # read back", NULL};

static int cmd_gen(const gp_cli_args *a) {
    uint64_t n, seed;
    int rc;
    if ((rc = gp_cli_u64(a, "nodes", 0, 0, UINT64_MAX, &n)) ||
        (rc = gp_cli_u64(a, "seed", 1, 0, UINT64_MAX, &seed)))
        return rc;
    const char *outp = gp_cli_str(a, "out"), *osm = gp_cli_str(a, "osm");
    if (!outp && !osm) return gp_cli_usage_error("gen: missing parameter --out (or --osm)");
    size_t l = outp ? strlen(outp) : 0;
    char *co = malloc(l + 4);
    if (!co) return gp_cli_usage_error("out of memory");
    if (l > 3 && strcmp(outp + l - 3, ".gr") == 0)
        snprintf(co, l + 4, "%.*s.co", (int)(l - 3), outp);
    else snprintf(co, l + 4, "%s.co", outp ? outp : "");
    gp_err err;
    gp_err_clear(&err);
    gp_cli_progress *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    if (osm) {
        gp_cli_progress_stage(pr, "writing OSM XML");
        if (gp_write_road_osm(n, seed, osm, &err) != GP_OK) {
            gp_cli_progress_stop(pr);
            free(co);
            return gp_cli_fail_err(&err);
        }
    }
    gp_cli_progress_stage(pr, "generating graph");
    gp_graph *g = gp_generate_road(n, seed, &err);
    if (!g) {
        gp_cli_progress_stop(pr);
        free(co);
        return gp_cli_fail_err(&err);
    }
    gp_cli_progress_stage(pr, "writing DIMACS");
    rc = outp ? gp_write_dimacs(g, outp, co, &err) : GP_OK;
    gp_cli_progress_stop(pr);
    if (rc != GP_OK) {
        rc = gp_cli_fail_err(&err);
    } else {
        cJSON *j = cJSON_CreateObject();
        if (j && cJSON_AddNumberToObject(j, "nodes", g->n) &&
            cJSON_AddNumberToObject(j, "edges", g->m) &&
            (!outp || (cJSON_AddStringToObject(j, "graph", outp) &&
                       cJSON_AddStringToObject(j, "coordinates", co))) &&
            (!osm || cJSON_AddStringToObject(j, "osm", osm)) &&
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

/* clang-format off */
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
    {"gen", "write a generated road graph as DIMACS .gr/.co and/or OSM XML", gen_opts, GP_CLI_NOPTS(gen_opts),
     gen_ex, cmd_gen, NULL},
};

/* Every subcommand, in `gpath --help` order. Add yours here (one line). */
static const gp_cli_cmd *const commands[] = {
    &gp_cli_serve, /* cli/serve.c: options from the configuration table (server/config.c) */
    &cmd_defs[0],  /* route */
    &cmd_defs[1],  /* nearest */
    &cmd_defs[2],  /* sssp */
    &cmd_defs[3],  /* table */
    &cmd_defs[4],  /* apsp */
    &gp_cli_routing_tables, /* cli/netops.c */
    &gp_cli_what_if,
    &gp_cli_link_loads,
    &gp_cli_repair,
    &cmd_defs[5], /* info */
    &cmd_defs[6], /* gen */
    &gp_cli_import, /* cli/import.c */
};
/* clang-format on */
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
        int lvl = gp_config_env_log_level();
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
    const char *s = gp_suggest(sub, names, NCOMMANDS);
    if (s) fprintf(stderr, "gpath: unknown command '%s'; did you mean '%s'?\n\n", sub, s);
    else fprintf(stderr, "gpath: unknown command '%s'\n\n", sub);
    usage_main(stderr);
    return GP_CLI_EXIT_USAGE;
}
