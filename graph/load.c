/* load.c - gp_graph_load: turns a graph spec into a graph by choosing the loader.
 *
 * A spec is "FORMAT:PATH" (dimacs, csv, graphml, sndlib, rocketfuel), "gen:N[:SEED]" (the built-in
 * generator, seed 1 by default), a PostgreSQL URI ("postgresql://..." or "postgres://..."), or a
 * bare path whose extension names the format: .gr / .gr.gz (DIMACS), .csv (pgRouting CSV),
 * .graphml (Topology Zoo), .txt (SNDlib native), .intra (Rocketfuel weights), .osm / .osm.pbf
 * (OpenStreetMap, "?profile=car|bicycle|foot" may follow), .gpath (a snapshot written by
 * `gpath import`, graph/snapshot.h). The graph's source
 * field records the spec as given.
 */
#include "graph.h"
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef gp_graph *(*loader_fn)(const char *path, const gp_load_opts *o, gp_err *err);

typedef struct loader {
    const char *format;  /* the prefix without ':' */
    const char *exts[3]; /* bare-path extensions, longest first */
    loader_fn fn;        /* NULL: not available in this build */
} loader;

static const loader loaders[] = {
    {"dimacs", {".gr.gz", ".gr", NULL}, gp_load_dimacs},
    {"csv", {".csv.gz", ".csv", NULL}, gp_load_csv},
    {"graphml", {".graphml", NULL, NULL}, gp_load_graphml},
    {"sndlib", {".txt.gz", ".txt", NULL}, gp_load_sndlib},
    {"rocketfuel", {".intra", NULL, NULL}, gp_load_rocketfuel},
    {"osm", {".osm.pbf", ".pbf", ".osm"}, gp_load_osm},
    {"gpath", {".gpath", NULL, NULL}, gp_load_snapshot},
};

/* 1 when s ends with suffix, not counting an OSM "?profile=NAME" query at its end. */
static int ends_with(const char *s, const char *suffix) {
    const char *q = strstr(s, "?profile=");
    size_t a = q ? (size_t)(q - s) : strlen(s), b = strlen(suffix);
    return a >= b && strncmp(s + a - b, suffix, b) == 0;
}

static gp_graph *run_loader(const loader *l, const char *path, const gp_load_opts *o, gp_err *err) {
    if (!*path) {
        gp_err_set(err, GP_EINVAL, "%s: no path given", l->format);
        return NULL;
    }
    if (!l->fn) {
        gp_err_set(err, GP_EUNSUPPORTED, "%s: the %s loader is not available in this build", path,
                   l->format);
        return NULL;
    }
    return l->fn(path, o, err);
}

/* Parses an unsigned decimal number filling the whole of [s, end); -1 when it is not one. */
static int parse_u64(const char *s, size_t len, uint64_t *out) {
    if (len == 0 || len > 20) return -1;
    char buf[24];
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (buf[i] < '0' || buf[i] > '9') return -1;
    errno = 0;
    char *e;
    unsigned long long v = strtoull(buf, &e, 10);
    if (errno || *e) return -1;
    *out = v;
    return 0;
}

/* gen:N[:SEED] (road-like) and grid:N[:SEED]; kind is the prefix without its colon. */
static gp_graph *load_gen(const char *spec, const char *kind, const char *arg, gp_err *err) {
    const char *colon = strchr(arg, ':');
    size_t nlen = colon ? (size_t)(colon - arg) : strlen(arg);
    uint64_t n, seed = 1;
    if (parse_u64(arg, nlen, &n)) {
        gp_err_set(err, GP_EINVAL, "%s: expected %s:N[:SEED] with N a node count", spec, kind);
        return NULL;
    }
    if (colon && parse_u64(colon + 1, strlen(colon + 1), &seed)) {
        gp_err_set(err, GP_EINVAL, "%s: SEED in %s:N[:SEED] must be an unsigned integer", spec, kind);
        return NULL;
    }
    return strcmp(kind, "grid") == 0 ? gp_generate_grid(n, seed, err) : gp_generate_road(n, seed, err);
}

gp_graph *gp_graph_load(const char *spec, const gp_load_opts *opts, gp_err *err) {
    static const gp_load_opts defaults = {0};
    const gp_load_opts *o = opts ? opts : &defaults;
    gp_err_clear(err);
    if (!spec || !*spec) {
        gp_err_set(err, GP_EINVAL, "no graph spec given");
        return NULL;
    }
    gp_graph *g = NULL;
    const size_t nl = sizeof loaders / sizeof loaders[0];
    if (strncmp(spec, "gen:", 4) == 0) {
        g = load_gen(spec, "gen", spec + 4, err);
    } else if (strncmp(spec, "grid:", 5) == 0) {
        g = load_gen(spec, "grid", spec + 5, err);
    } else if (strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0) {
        g = gp_load_postgres(spec, o, err);
    } else {
        const loader *l = NULL;
        const char *path = spec;
        for (size_t i = 0; i < nl && !l; i++) {
            size_t fl = strlen(loaders[i].format);
            if (strncmp(spec, loaders[i].format, fl) == 0 && spec[fl] == ':') {
                l = &loaders[i];
                path = spec + fl + 1;
            }
        }
        for (size_t i = 0; i < nl && !l; i++)
            for (int e = 0; e < 3 && loaders[i].exts[e] && !l; e++)
                if (ends_with(spec, loaders[i].exts[e])) l = &loaders[i];
        if (!l) {
            gp_err_set(err, GP_EINVAL,
                       "%s: cannot tell the graph format; use a prefix (dimacs:, csv:, graphml:, "
                       "sndlib:, rocketfuel:, osm:, gpath:, gen:N[:SEED], grid:N[:SEED], "
                       "postgresql://) or an extension (.gr, .gr.gz, .csv, .graphml, .txt, .intra, "
                       ".osm, .osm.pbf, .gpath)",
                       spec);
            return NULL;
        }
        g = run_loader(l, path, o, err);
    }
    if (g) snprintf(g->source, sizeof g->source, "%s", spec);
    return g;
}
