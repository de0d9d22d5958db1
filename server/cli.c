/* cli.c - the one-shot subcommands of the gpath command: route, sssp, table, apsp, info and gen.
 *
 * Each loads the graph named by --graph (any spec gp_graph_load accepts), answers one query on an
 * engine (--backend auto|cuda|cpu) and prints the JSON of server/render.h on stdout, so a CLI
 * answer and an HTTP answer are the same document. Bad input (unknown option or node id, missing
 * parameter, unreadable graph) prints "gpath: <message>" on stderr and exits 2; a failure while
 * answering exits 1.
 */
#include "cli.h"

#include "../engine/engine.h"
#include "../graph/snapshot.h"
#include "cli_netops.h"
#include "render.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

typedef struct opts {
    const char *graph, *from, *to, *source, *max_distance, *sources, *targets, *algo, *backend,
        *threads, *scale, *nodes, *seed, *out, *max_nodes, *profile;
    int next_hops, undirected, help;
} opts;

typedef struct optdef {
    const char *name;
    int takes_value;
    size_t offset; /* into opts: const char * for values, int for flags */
    const char *help; /* "ARG|description" (ARG empty for flags) */
} optdef;

#define OV(f) offsetof(opts, f)
static const optdef OPTDEFS[] = {
    {"graph", 1, OV(graph), "SPEC|graph to load: dimacs:PATH, csv:PATH, gen:N[:SEED], PATH, ..."},
    {"from", 1, OV(from), "ID|route source node (external id)"},
    {"to", 1, OV(to), "ID|route target node"},
    {"source", 1, OV(source), "ID|one-to-all source node"},
    {"max-distance", 1, OV(max_distance), "D|stop the tree at distance D (input units)"},
    {"sources", 1, OV(sources), "ID,ID,...|table source nodes"},
    {"targets", 1, OV(targets), "ID,ID,...|table target nodes (default: the sources)"},
    {"next-hops", 0, OV(next_hops), "|also print the next-hop matrix"},
    {"algo", 1, OV(algo), "A|dijkstra|bidir|astar (default: the backend's choice)"},
    {"backend", 1, OV(backend), "B|auto|cuda|cpu (default auto)"},
    {"threads", 1, OV(threads), "N|CPU threads (default: all cores)"},
    {"scale", 1, OV(scale), "S|fixed-point scale for fractional costs"},
    {"undirected", 0, OV(undirected), "|treat every edge as two arcs"},
    {"nodes", 1, OV(nodes), "N|nodes to generate (>= 100)"},
    {"seed", 1, OV(seed), "S|generator seed (default 1)"},
    {"out", 1, OV(out), "FILE.gr|DIMACS output (coordinates go to FILE.co)"},
    {"max-nodes", 1, OV(max_nodes), "N|refuse graphs above N nodes (default 20000: 4.8 GB)"},
    {"profile", 1, OV(profile), "P|OSM routing profile: car (default), bicycle or foot"},
    {"help", 0, OV(help), "|this help"},
};
#define NOPTS (sizeof OPTDEFS / sizeof OPTDEFS[0])

typedef struct cmd {
    const char *name;
    int (*run)(const opts *o);
    const char *summary;
    const char *options; /* space-separated option names it accepts */
    const char *example;
} cmd;

static int cmd_route(const opts *o);
static int cmd_sssp(const opts *o);
static int cmd_table(const opts *o);
static int cmd_apsp(const opts *o);
static int cmd_info(const opts *o);
static int cmd_gen(const opts *o);
static int cmd_import(const opts *o);

#define LOAD_OPTS "graph scale undirected backend threads profile"
static const cmd CMDS[] = {
    {"route", cmd_route, "shortest path between two nodes", LOAD_OPTS " from to algo",
     "gpath route --graph gen:10000:7 --from 1 --to 10000 --algo astar"},
    {"sssp", cmd_sssp, "shortest-path tree from one node", LOAD_OPTS " source max-distance",
     "gpath sssp --graph gen:10000 --source 1 --max-distance 600"},
    {"table", cmd_table, "many-to-many distance table", LOAD_OPTS " sources targets",
     "gpath table --graph gen:10000 --sources 1,5,9 --targets 100,200"},
    {"apsp", cmd_apsp, "all-pairs distances (Floyd-Warshall)", LOAD_OPTS " next-hops max-nodes",
     "gpath apsp --graph gen:400 --next-hops"},
    {"info", cmd_info, "describe a graph", "graph scale undirected", "gpath info --graph gen:10000"},
    {"gen", cmd_gen, "write a generated road graph as DIMACS .gr/.co", "nodes seed out",
     "gpath gen --nodes 100000 --seed 7 --out road.gr"},
    {"import", cmd_import, "build a graph once and write a .gpath snapshot (FILE -o OUT.gpath)",
     "graph profile scale undirected out",
     "gpath import region.osm.pbf --profile car -o region.gpath"},
};
#define NCMDS (sizeof CMDS / sizeof CMDS[0])

static int fail_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("gpath: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

static int fail_err(const gp_err *e) {
    fprintf(stderr, "gpath: %s\n", e->msg[0] ? e->msg : gp_status_name(e->code));
    /* bad requests are usage errors (2); the rest (memory, device, I/O mid-answer) are 1 */
    switch (e->code) {
    case GP_EINVAL:
    case GP_EPARSE:
    case GP_ENOTFOUND:
    case GP_EIO:
    case GP_EUNSUPPORTED:
    case GP_ETOOBIG: return EXIT_USAGE;
    default: return 1;
    }
}

static void usage_main(FILE *f) {
    fprintf(f, "usage: gpath COMMAND [OPTIONS]   (gpath COMMAND --help for its options)\n\n");
    fprintf(f, "  %-8s %s\n", "serve", "run the HTTP service (gpath serve --help)");
    for (size_t i = 0; i < NCMDS; i++) fprintf(f, "  %-8s %s\n", CMDS[i].name, CMDS[i].summary);
    fprintf(f, "  %-8s %s\n", "routing-tables", "OSPF-style routing tables with ECMP next hops");
    fprintf(f, "  %-8s %s\n", "what-if", "routing changes after link/router failures or cost changes");
    fprintf(f, "\n  --version  print the version\n\nOutput is JSON on stdout; errors go to stderr "
               "with a non-zero exit status.\n");
}

static int accepts(const cmd *c, const char *name) {
    size_t l = strlen(name);
    for (const char *p = c->options; (p = strstr(p, name)) != NULL; p += l)
        if ((p == c->options || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0')) return 1;
    return strcmp(name, "help") == 0;
}

static void usage_cmd(const cmd *c, FILE *f) {
    fprintf(f, "usage: gpath %s [OPTIONS]\n%s\n\n", c->name, c->summary);
    for (size_t i = 0; i < NOPTS; i++) {
        if (!accepts(c, OPTDEFS[i].name)) continue;
        const char *h = OPTDEFS[i].help, *bar = strchr(h, '|');
        char left[48];
        snprintf(left, sizeof left, "--%s %.*s", OPTDEFS[i].name, (int)(bar - h), h);
        fprintf(f, "  %-24s %s\n", left, bar + 1);
    }
    fprintf(f, "\nexample: %s\n", c->example);
}

/* Parses argv[2..] into o for command c; returns 0 or an exit code. */
static int parse(const cmd *c, int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        /* `import` takes its input as a bare argument and -o for --out */
        if (strcmp(c->name, "import") == 0 && strncmp(a, "-", 1) != 0 && !o->graph) {
            o->graph = a;
            continue;
        }
        if (strcmp(a, "-o") == 0 && accepts(c, "out")) a = "--out";
        if (strncmp(a, "--", 2) != 0)
            return fail_usage("%s: unexpected argument '%s' (options start with --)", c->name, a);
        a += 2;
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        const optdef *d = NULL;
        for (size_t k = 0; k < NOPTS; k++)
            if (strlen(OPTDEFS[k].name) == nl && strncmp(OPTDEFS[k].name, a, nl) == 0) d = &OPTDEFS[k];
        if (!d || !accepts(c, d->name))
            return fail_usage("%s: unknown option '--%.*s' (see gpath %s --help)", c->name, (int)nl,
                              a, c->name);
        char *base = (char *)o;
        if (!d->takes_value) {
            if (eq) return fail_usage("%s: option --%s takes no value", c->name, d->name);
            *(int *)(base + d->offset) = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return fail_usage("%s: option --%s needs a value", c->name, d->name);
        *(const char **)(base + d->offset) = v;
    }
    return 0;
}

/* Strict integer / number parsing with the option named in errors. */
static int parse_i64(const char *s, const char *what, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return fail_usage("%s: '%s' is not an integer", what, s);
    *out = v;
    return 0;
}

static int parse_u64(const char *s, const char *what, uint64_t *out) {
    char *end;
    errno = 0;
    if (*s == '-') return fail_usage("%s: '%s' must not be negative", what, s);
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end) return fail_usage("%s: '%s' is not a non-negative integer", what, s);
    *out = v;
    return 0;
}

static int parse_double(const char *s, const char *what, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return fail_usage("%s: '%s' is not a number", what, s);
    *out = v;
    return 0;
}

static int need(const char *v, const char *cmdname, const char *opt) {
    if (v) return 0;
    return fail_usage("%s: missing parameter --%s (see gpath %s --help)", cmdname, opt, cmdname);
}

/* External id -> internal index, or a usage error naming the id and the option. */
static int node_of(const gp_graph *g, const char *s, const char *opt, uint32_t *v) {
    int64_t id = 0;
    char what[64];
    snprintf(what, sizeof what, "--%s", opt);
    int rc = parse_i64(s, what, &id);
    if (rc) return rc;
    *v = gp_graph_index(g, id);
    if (*v == GP_NONE)
        return fail_usage("--%s: unknown node id %" PRId64 " (not in the graph)", opt, id);
    return 0;
}

/* Comma-separated ids -> malloc'd internal indices. */
static int node_list(const gp_graph *g, const char *s, const char *opt, uint32_t **out,
                     uint32_t *count) {
    uint32_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    uint32_t *v = malloc((size_t)cap * sizeof *v);
    if (!v) return fail_usage("out of memory");
    char *copy = strdup(s);
    if (!copy) {
        free(v);
        return fail_usage("out of memory");
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
    if (!rc && k == 0) rc = fail_usage("--%s: no node ids given", opt);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *count = k;
    return 0;
}

/* Loads the graph and creates the engine the query runs on. */
static int setup(const opts *o, const char *cmdname, int with_engine, gp_graph **g, gp_engine **e) {
    *g = NULL;
    if (e) *e = NULL;
    int rc = need(o->graph, cmdname, "graph");
    if (rc) return rc;
    gp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.undirected = o->undirected;
    lo.profile = o->profile;
    if (o->scale) {
        rc = parse_double(o->scale, "--scale", &lo.scale);
        if (rc) return rc;
        if (lo.scale <= 0) return fail_usage("--scale: must be positive, got %s", o->scale);
    }
    int threads = 0;
    if (with_engine && o->threads) {
        uint64_t t = 0;
        rc = parse_u64(o->threads, "--threads", &t);
        if (rc) return rc;
        if (t > 1024) return fail_usage("--threads: %s is too many (at most 1024)", o->threads);
        threads = (int)t;
    }
    const char *backend = o->backend ? o->backend : "auto";
    if (with_engine && strcmp(backend, "auto") && strcmp(backend, "cuda") && strcmp(backend, "cpu"))
        return fail_usage("--backend: unknown backend '%s' (auto, cuda or cpu)", backend);
    gp_err err;
    gp_err_clear(&err);
    *g = gp_graph_load(o->graph, &lo, &err);
    if (!*g) return fail_err(&err);
    if (!with_engine) return 0;
    *e = gp_engine_new(backend, threads, NULL, &err);
    if (!*e || gp_engine_attach(*e, *g, &err) != GP_OK) {
        rc = fail_err(&err);
        gp_engine_free(*e);
        *e = NULL;
        gp_graph_unref(*g);
        *g = NULL;
        return rc;
    }
    return 0;
}

static int print_json(cJSON *j) {
    if (!j) return fail_usage("out of memory rendering the answer");
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s) return fail_usage("out of memory rendering the answer");
    puts(s);
    free(s);
    return 0;
}

static int print_text(char *s) {
    if (!s) return fail_usage("out of memory rendering the answer");
    puts(s);
    free(s);
    return 0;
}

static int cmd_route(const opts *o) {
    int rc = need(o->from, "route", "from");
    if (!rc) rc = need(o->to, "route", "to");
    int algo = GP_P2P_AUTO;
    if (!rc && o->algo) {
        if (strcmp(o->algo, "dijkstra") == 0) algo = GP_P2P_DIJKSTRA;
        else if (strcmp(o->algo, "bidir") == 0) algo = GP_P2P_BIDIR;
        else if (strcmp(o->algo, "astar") == 0) algo = GP_P2P_ASTAR;
        else if (strcmp(o->algo, "auto") != 0)
            rc = fail_usage("--algo: unknown algorithm '%s' (dijkstra, bidir or astar)", o->algo);
    }
    if (rc) return rc;
    gp_graph *g;
    gp_engine *e;
    if ((rc = setup(o, "route", 1, &g, &e))) return rc;
    uint32_t s, t;
    if (!(rc = node_of(g, o->from, "from", &s)) && !(rc = node_of(g, o->to, "to", &t))) {
        gp_path p;
        memset(&p, 0, sizeof p);
        gp_err err;
        gp_err_clear(&err);
        if (gp_engine_p2p(e, g, s, t, algo, &p, &err) != GP_OK)
            rc = fail_err(&err);
        else
            rc = print_json(gp_render_route(g, s, t, &p));
        gp_path_free(&p);
    }
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

static int cmd_sssp(const opts *o) {
    int rc = need(o->source, "sssp", "source");
    double maxd = -1;
    if (!rc && o->max_distance) {
        rc = parse_double(o->max_distance, "--max-distance", &maxd);
        if (!rc && maxd < 0) rc = fail_usage("--max-distance: must not be negative, got %s",
                                             o->max_distance);
    }
    if (rc) return rc;
    gp_graph *g;
    gp_engine *e;
    if ((rc = setup(o, "sssp", 1, &g, &e))) return rc;
    uint32_t s;
    uint64_t *dist = NULL;
    uint32_t *pred = NULL;
    if (!(rc = node_of(g, o->source, "source", &s))) {
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
        if (!dist || !pred)
            rc = fail_usage("out of memory for %u distances", g->n);
        else if (gp_engine_sssp(e, g, s, limit, dist, pred, &err) != GP_OK)
            rc = fail_err(&err);
        else
            rc = print_text(gp_render_sssp_text(g, s, dist, pred, NULL));
    }
    free(dist);
    free(pred);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

static int cmd_table(const opts *o) {
    int rc = need(o->sources, "table", "sources");
    if (rc) return rc;
    gp_graph *g;
    gp_engine *e;
    if ((rc = setup(o, "table", 1, &g, &e))) return rc;
    uint32_t *src = NULL, *dst = NULL, ns = 0, nt = 0;
    uint64_t *out = NULL;
    rc = node_list(g, o->sources, "sources", &src, &ns);
    if (!rc) rc = node_list(g, o->targets ? o->targets : o->sources,
                            o->targets ? "targets" : "sources", &dst, &nt);
    if (!rc) {
        out = malloc((size_t)ns * nt * sizeof *out);
        gp_err err;
        gp_err_clear(&err);
        if (!out)
            rc = fail_usage("out of memory for a %u x %u table", ns, nt);
        else if (gp_engine_table(e, g, src, ns, dst, nt, out, &err) != GP_OK)
            rc = fail_err(&err);
        else
            rc = print_text(gp_render_table_text(g, src, ns, dst, nt, out, NULL));
    }
    free(src);
    free(dst);
    free(out);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

static int cmd_apsp(const opts *o) {
    gp_graph *g;
    gp_engine *e;
    uint64_t max_nodes = 20000;
    int rc = o->max_nodes ? parse_u64(o->max_nodes, "--max-nodes", &max_nodes) : 0;
    if (rc) return rc;
    if ((rc = setup(o, "apsp", 1, &g, &e))) return rc;
    if (g->n > max_nodes) {
        rc = fail_usage("apsp: the graph has %u nodes, over the limit of %llu (an n x n matrix "
                        "of %.1f GB); raise it with --max-nodes",
                        g->n, (unsigned long long)max_nodes, (double)g->n * g->n * 12 / 1e9);
        gp_engine_free(e);
        gp_graph_unref(g);
        return rc;
    }
    size_t nn = (size_t)g->n * g->n;
    uint64_t *dist = malloc(nn * sizeof *dist);
    uint32_t *next = o->next_hops ? malloc(nn * sizeof *next) : NULL;
    gp_err err;
    gp_err_clear(&err);
    if (!dist || (o->next_hops && !next))
        rc = fail_usage("apsp: out of memory for a %u x %u matrix", g->n, g->n);
    else if (gp_engine_apsp(e, g, dist, next, &err) != GP_OK)
        rc = fail_err(&err);
    else
        rc = print_text(gp_render_apsp_text(g, dist, next, NULL));
    free(dist);
    free(next);
    gp_engine_free(e);
    gp_graph_unref(g);
    return rc;
}

static int cmd_info(const opts *o) {
    gp_graph *g;
    int rc = setup(o, "info", 0, &g, NULL);
    if (rc) return rc;
    rc = print_json(gp_render_graph_info(g, o->graph));
    gp_graph_unref(g);
    return rc;
}

static int cmd_gen(const opts *o) {
    int rc = need(o->nodes, "gen", "nodes");
    if (!rc) rc = need(o->out, "gen", "out");
    uint64_t n = 0, seed = 1;
    if (!rc) rc = parse_u64(o->nodes, "--nodes", &n);
    if (!rc && o->seed) rc = parse_u64(o->seed, "--seed", &seed);
    if (rc) return rc;
    size_t l = strlen(o->out);
    char *co = malloc(l + 4);
    if (!co) return fail_usage("out of memory");
    if (l > 3 && strcmp(o->out + l - 3, ".gr") == 0)
        snprintf(co, l + 4, "%.*s.co", (int)(l - 3), o->out);
    else
        snprintf(co, l + 4, "%s.co", o->out);
    gp_err err;
    gp_err_clear(&err);
    gp_graph *g = gp_generate_road(n, seed, &err);
    if (!g) {
        free(co);
        return fail_err(&err);
    }
    if (gp_write_dimacs(g, o->out, co, &err) != GP_OK) {
        rc = fail_err(&err);
    } else {
        cJSON *j = cJSON_CreateObject();
        if (j && cJSON_AddNumberToObject(j, "nodes", g->n) && cJSON_AddNumberToObject(j, "edges", g->m) &&
            cJSON_AddStringToObject(j, "graph", o->out) &&
            cJSON_AddStringToObject(j, "coordinates", co) &&
            cJSON_AddStringToObject(j, "version", g->version)) {
            rc = print_json(j);
        } else {
            cJSON_Delete(j);
            rc = fail_usage("out of memory");
        }
    }
    free(co);
    gp_graph_unref(g);
    return rc;
}

/* Loads the input (any spec; progress lines on stderr) and writes it as a snapshot. */
static int cmd_import(const opts *o) {
    int rc = need(o->graph, "import", "graph (or a bare FILE)");
    if (!rc) rc = need(o->out, "import", "out (-o)");
    if (rc) return rc;
    gp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.undirected = o->undirected;
    lo.profile = o->profile;
    lo.progress = 1;
    if (o->scale) {
        rc = parse_double(o->scale, "--scale", &lo.scale);
        if (rc) return rc;
    }
    gp_err err;
    gp_err_clear(&err);
    double t0 = gp_now();
    gp_graph *g = gp_graph_load(o->graph, &lo, &err);
    if (!g) return fail_err(&err);
    double t1 = gp_now();
    if (gp_snapshot_write(g, o->out, NULL, 0, &err) != GP_OK) {
        gp_graph_unref(g);
        return fail_err(&err);
    }
    double t2 = gp_now();
    fprintf(stderr, "[import %6.2fs] wrote %s in %.2f s\n", t2 - t0, o->out, t2 - t1);
    cJSON *j = cJSON_CreateObject();
    if (j && cJSON_AddStringToObject(j, "snapshot", o->out) &&
        cJSON_AddStringToObject(j, "source", o->graph) &&
        cJSON_AddStringToObject(j, "profile", g->profile) &&
        cJSON_AddNumberToObject(j, "nodes", g->n) && cJSON_AddNumberToObject(j, "edges", g->m) &&
        cJSON_AddStringToObject(j, "version", g->version) &&
        cJSON_AddNumberToObject(j, "build_seconds", t1 - t0) &&
        cJSON_AddNumberToObject(j, "write_seconds", t2 - t1)) {
        rc = print_json(j);
    } else {
        cJSON_Delete(j);
        rc = fail_usage("out of memory");
    }
    gp_graph_unref(g);
    return rc;
}

int gp_cli_main(int argc, char **argv) {
    if (argc < 2) {
        usage_main(stderr);
        return EXIT_USAGE;
    }
    const char *sub = argv[1];
    /* one-shot commands keep stderr for problems: warnings and up unless GPATH_LOG_LEVEL says */
    int lvl = gp_log_level_parse(getenv("GPATH_LOG_LEVEL"));
    gp_log_level = lvl >= 0 ? lvl : GP_LOG_WARN;
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        if (argc >= 3)
            for (size_t i = 0; i < NCMDS; i++)
                if (strcmp(CMDS[i].name, argv[2]) == 0) {
                    usage_cmd(&CMDS[i], stdout);
                    return 0;
                }
        usage_main(stdout);
        return 0;
    }
    if (strcmp(sub, "--version") == 0 || strcmp(sub, "version") == 0) {
        printf("gpath %s (%s backend compiled)\n", GPATH_VERSION,
               gp_cuda_compiled() ? "cuda and cpu" : "cpu only");
        return 0;
    }
    if (gp_cli_netops_is(sub)) return gp_cli_netops_main(argc, argv); /* server/cli_netops.c */
    for (size_t i = 0; i < NCMDS; i++) {
        if (strcmp(CMDS[i].name, sub) != 0) continue;
        opts o;
        int rc = parse(&CMDS[i], argc, argv, &o);
        if (rc) return rc;
        if (o.help) {
            usage_cmd(&CMDS[i], stdout);
            return 0;
        }
        return CMDS[i].run(&o);
    }
    fprintf(stderr, "gpath: unknown command '%s'\n\n", sub);
    usage_main(stderr);
    return EXIT_USAGE;
}
