/* load.c - gp_graph_load_from: turns a graph spec into a graph by choosing the loader.
 *
 * graph/ reads files and runs the generators; a source that lives above it (PostgreSQL,
 * storage/source.c) is handed in as a gp_spec_source table, so this floor depends on nothing
 * above it. A spec is "FORMAT:PATH" (dimacs, csv, graphml, sndlib, rocketfuel), "gen:N[:SEED]" or
 * "grid:N[:SEED]" (the built-in generators, seed 1 by default), a spec one of the given sources
 * claims (e.g. "postgresql://..."), or a bare path whose extension names the format: .gr / .gr.gz
 * (DIMACS), .csv (pgRouting CSV), .graphml (Topology Zoo), .txt (SNDlib native), .intra
 * (Rocketfuel weights), .osm / .osm.pbf (OpenStreetMap, "?profile=car|bicycle|foot|truck" may follow),
 * .gpath (a snapshot written by `gpath import`, graph/snapshot.h). The graph's source field
 * records the spec with any password redacted (gp_spec_redact, the one redaction every place that
 * shows or logs a spec uses). Options a format has no use for (a scale on integer DIMACS, OSM,
 * snapshots or the generator, a cost rule outside the router topologies) are refused, not
 * ignored. The file a spec names is checked against the load's guards (gp_load_check_file) before
 * any loader opens it, and the node and arc caps are checked on every graph returned.
 */
#include "graph/graph.h"
#include "graph/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef gp_graph *(*loader_fn)(const char *path, const gp_load_opts *o, gp_err *err);

typedef struct loader {
    const char *format;  /* the prefix without ':' */
    const char *exts[3]; /* bare-path extensions, longest first */
    loader_fn fn;        /* NULL: not available in this build */
    int scale_ok;        /* the format takes a fixed-point scale */
    int rule_ok;         /* the format takes a cost rule (router topologies) */
} loader;

static const loader loaders[] = {
    {"dimacs", {".gr.gz", ".gr", NULL}, gp_load_dimacs, 0, 0},
    {"csv", {".csv.gz", ".csv", NULL}, gp_load_csv, 1, 0},
    {"graphml", {".graphml", NULL, NULL}, gp_load_graphml, 1, 1},
    {"sndlib", {".txt.gz", ".txt", NULL}, gp_load_sndlib, 1, 1},
    {"rocketfuel", {".intra", NULL, NULL}, gp_load_rocketfuel, 1, 1},
    {"osm", {".osm.pbf", ".pbf", ".osm"}, gp_load_osm, 0, 0},
    {"gpath", {".gpath", NULL, NULL}, gp_load_snapshot, 0, 0},
};
#define NLOADERS (sizeof loaders / sizeof loaders[0])

/* 1 when s ends with suffix, not counting an OSM "?profile=NAME" query at its end. */
static int ends_with(const char *s, const char *suffix) {
    const char *q = strstr(s, "?profile=");
    size_t a = q ? (size_t)(q - s) : strlen(s), b = strlen(suffix);
    return a >= b && strncmp(s + a - b, suffix, b) == 0;
}

/* Refuses options the format has no use for (they would be silently ignored otherwise). */
static int check_opts(const char *format, int scale_ok, int rule_ok, const gp_load_opts *o,
                      gp_err *err) {
    if (o->scale > 0 && !scale_ok)
        return gp_err_set(err, GP_EINVAL,
                          "%s: a scale does not apply (the format's weights are integers)", format);
    if (o->cost_rule && *o->cost_rule && !rule_ok)
        return gp_err_set(err, GP_EINVAL,
                          "%s: cost_rule '%.32s' does not apply (cost rules are for graphml, "
                          "sndlib and rocketfuel topologies)",
                          format, o->cost_rule);
    if (o->ref_bandwidth > 0 && !rule_ok)
        return gp_err_set(err, GP_EINVAL, "%s: ref_bandwidth does not apply", format);
    return GP_OK;
}

static gp_graph *run_loader(const loader *l, const char *path, const gp_load_opts *o, gp_err *err) {
    if (check_opts(l->format, l->scale_ok, l->rule_ok, o, err)) return NULL;
    if (!*path) {
        gp_err_set(err, GP_EINVAL, "%s: no path given", l->format);
        return NULL;
    }
    if (!l->fn) {
        gp_err_set(err, GP_EUNSUPPORTED, "%s: the %s loader is not available in this build", path,
                   l->format);
        return NULL;
    }
    /* the guards, before any loader opens the file (the file of an OSM spec ends at ?profile=) */
    char file[4096];
    const char *q = strstr(path, "?profile=");
    size_t fl = q ? (size_t)(q - path) : strlen(path);
    if (fl >= sizeof file) {
        gp_err_set(err, GP_EINVAL, "%s: path too long", l->format);
        return NULL;
    }
    memcpy(file, path, fl);
    file[fl] = '\0';
    if (gp_load_check_file(file, o, err)) return NULL;
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
static gp_graph *load_gen(const char *spec, const char *kind, const char *arg,
                          const gp_load_opts *o, gp_err *err) {
    if (check_opts(kind, 0, 0, o, err)) return NULL;
    const char *colon = strchr(arg, ':');
    size_t nlen = colon ? (size_t)(colon - arg) : strlen(arg);
    uint64_t n, seed = 1;
    if (parse_u64(arg, nlen, &n)) {
        gp_err_set(err, GP_EINVAL, "%.64s: expected %s:N[:SEED] with N a node count", spec, kind);
        return NULL;
    }
    if (colon && parse_u64(colon + 1, strlen(colon + 1), &seed)) {
        gp_err_set(err, GP_EINVAL, "%.64s: SEED in %s:N[:SEED] must be an unsigned integer", spec,
                   kind);
        return NULL;
    }
    if (o->max_nodes && n > o->max_nodes) {
        gp_err_set(err, GP_ETOOBIG, "%s:%llu is over max_graph_nodes = %llu nodes", kind,
                   (unsigned long long)n, (unsigned long long)o->max_nodes);
        return NULL;
    }
    return strcmp(kind, "grid") == 0 ? gp_generate_grid(n, seed, err)
                                     : gp_generate_road(n, seed, err);
}

/* The loader a file spec names (prefix or extension), with *path set; NULL when none does. */
static const loader *spec_loader(const char *spec, const char **path) {
    *path = spec;
    for (size_t i = 0; i < NLOADERS; i++) {
        size_t fl = strlen(loaders[i].format);
        if (strncmp(spec, loaders[i].format, fl) == 0 && spec[fl] == ':') {
            *path = spec + fl + 1;
            return &loaders[i];
        }
    }
    for (size_t i = 0; i < NLOADERS; i++)
        for (int e = 0; e < 3 && loaders[i].exts[e]; e++)
            if (ends_with(spec, loaders[i].exts[e])) return &loaders[i];
    return NULL;
}

/* The source of more[0..nmore) that claims spec, or NULL. */
static const gp_spec_source *claimed(const char *spec, const gp_spec_source *more, size_t nmore) {
    for (size_t i = 0; i < nmore; i++)
        if (more[i].claims(spec)) return &more[i];
    return NULL;
}

const char *gp_graph_spec_file(const char *spec, const gp_spec_source *more, size_t nmore) {
    if (!spec || strncmp(spec, "gen:", 4) == 0 || strncmp(spec, "grid:", 5) == 0 ||
        claimed(spec, more, nmore))
        return NULL;
    const char *path;
    return spec_loader(spec, &path) ? path : NULL;
}

/* Length of the password value at p (a conninfo value may be single-quoted with \' escapes). */
static size_t secret_len(const char *p) {
    if (*p != '\'') return strcspn(p, "& \t\n");
    size_t i = 1;
    while (p[i] && p[i] != '\'') i += p[i] == '\\' && p[i + 1] ? 2 : 1;
    return p[i] ? i + 1 : i;
}

void gp_spec_redact(const char *spec, char *out, size_t cap) {
    if (!cap) return;
    size_t o = 0;
    const char *colon = NULL, *at = NULL;
    const char *auth = strstr(spec, "://");
    if (auth) { /* user:PASSWORD@host - the last '@' of the authority */
        auth += 3;
        const char *end = auth + strcspn(auth, "/?#");
        for (const char *q = auth; q < end; q++)
            if (*q == '@') at = q;
        colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    }
    const char *p = spec;
    while (*p && o + 1 < cap) {
        if (colon && p == colon + 1) {
            o += (size_t)snprintf(out + o, cap - o, "***");
            p = at;
            continue;
        }
        if ((p == spec || strchr("?& \t", p[-1])) && strncasecmp(p, "password", 8) == 0) {
            const char *q = p + 8;
            while (*q == ' ' || *q == '\t') q++;
            if (*q == '=') {
                q++;
                while (*q == ' ' || *q == '\t') q++;
                o += (size_t)snprintf(out + o, cap - o, "password=***");
                p = q + secret_len(q);
                continue;
            }
        }
        out[o++] = *p++;
    }
    if (o >= cap) o = cap - 1;
    out[o] = '\0';
}

gp_graph *gp_graph_load_from(const char *spec, const gp_load_opts *opts, const gp_spec_source *more,
                             size_t nmore, gp_err *err) {
    static const gp_load_opts defaults = {0};
    const gp_load_opts *o = opts ? opts : &defaults;
    gp_err_clear(err);
    if (!spec || !*spec) {
        gp_err_set(err, GP_EINVAL, "no graph spec given");
        return NULL;
    }
    gp_graph *g = NULL;
    const gp_spec_source *src;
    if (strncmp(spec, "gen:", 4) == 0) {
        g = load_gen(spec, "gen", spec + 4, o, err);
    } else if (strncmp(spec, "grid:", 5) == 0) {
        g = load_gen(spec, "grid", spec + 5, o, err);
    } else if ((src = claimed(spec, more, nmore))) {
        if (!check_opts(src->format, src->scale_ok, src->rule_ok, o, err))
            g = src->load(spec, o, err);
    } else {
        const char *path;
        const loader *l = spec_loader(spec, &path);
        if (!l) {
            char shown[256], hints[128] = "";
            gp_spec_redact(spec, shown, sizeof shown);
            for (size_t i = 0, k = 0; i < nmore && k < sizeof hints; i++)
                k += (size_t)snprintf(hints + k, sizeof hints - k, ", %s", more[i].hint);
            gp_err_set(err, GP_EINVAL,
                       "%s: cannot tell the graph format; use a prefix (dimacs:, csv:, graphml:, "
                       "sndlib:, rocketfuel:, osm:, gpath:, gen:N[:SEED], grid:N[:SEED]%s) or an "
                       "extension (.gr, .gr.gz, .csv, .graphml, .txt, .intra, .osm, .osm.pbf, "
                       ".gpath)",
                       shown, hints);
            return NULL;
        }
        g = run_loader(l, path, o, err);
    }
    if (g && ((o->max_nodes && g->n > o->max_nodes) || (o->max_arcs && g->m > o->max_arcs))) {
        /* loaders that build through gp_builder stop at the cap; this catches the others */
        gp_err_set(err, GP_ETOOBIG,
                   "%s: %u nodes / %u arcs is over max_graph_nodes = %llu / "
                   "max_graph_arcs = %llu",
                   g->format, g->n, g->m, (unsigned long long)o->max_nodes,
                   (unsigned long long)o->max_arcs);
        gp_graph_unref(g);
        return NULL;
    }
    if (g) gp_spec_redact(spec, g->source, sizeof g->source);
    return g;
}
