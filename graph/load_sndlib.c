/* load_sndlib.c - SNDlib native network files (version 1.0; plain or gzip, read through zlib).
 *
 * NODES ( name ( lon lat ) ... ): routers get ids 0..n-1 in the order listed, names kept.
 * Coordinates are kept only when every node's pair is a valid longitude/latitude (some instances,
 * e.g. atlanta, give drawing coordinates instead; then the graph has none).
 * LINKS ( id ( src dst ) pre_cap pre_cap_cost routing_cost setup_cost ( {mod_cap mod_cost}* ) ):
 * undirected, two arcs each. Cost rules (graph/topo.h): "hops" (default, 1 per link), "bandwidth"
 * (capacity = pre-installed capacity when > 0, else the largest module capacity; in the META
 * section's unit: BITSPERSEC, KBITPERSEC, MBITPERSEC, GBITPERSEC; MBITPERSEC when not given, SNDlib's
 * usual unit), or "routing" (the routing_cost field, fractional, at scale 1000 unless opts->scale;
 * it is 0 in most instances, see the data's SOURCE.md). Other sections (DEMANDS, ...) are skipped.
 * Read through the guarded line reader (graph/lines.c); node names are found through a hash;
 * errors say what is wrong without quoting the file.
 */
#include "graph/graph_internal.h"
#include "graph/topo.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 1024

typedef struct node_ent {
    char *name;
    double lon, lat;
} node_ent;

/* Splits line into tokens written NUL-terminated into buf (at least 2 * strlen(line) + 2 bytes);
 * '(' and ')' are tokens of their own; a '#' starts a comment. Returns the count (max + 1 when
 * there are more than max). */
static int tokenize(const char *line, char *buf, char **tok, int max) {
    int n = 0;
    const char *p = line;
    char *o = buf;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') break;
        if (n == max) return max + 1;
        tok[n++] = o;
        if (*p == '(' || *p == ')') {
            *o++ = *p++;
        } else {
            while (*p && !isspace((unsigned char)*p) && *p != '(' && *p != ')' && *p != '#')
                *o++ = *p++;
        }
        *o++ = '\0';
    }
    return n;
}

static int num(const char *s, double *v) {
    char *end;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*v);
}

/* Name -> node index: open addressing over indices into nodes (-1 empty), rebuilt when half full. */
typedef struct name_set {
    int *slot;
    size_t mask;
} name_set;

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a; the multiply wraps by design */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int find_node(const name_set *hs, const node_ent *nodes, const char *name) {
    if (!hs->slot) return -1;
    for (size_t i = name_hash(name) & hs->mask;; i = (i + 1) & hs->mask) {
        if (hs->slot[i] < 0) return -1;
        if (strcmp(nodes[hs->slot[i]].name, name) == 0) return hs->slot[i];
    }
}

/* Indexes nodes[n - 1] (nodes 0..n-2 are indexed). 0 ok, -1 out of memory. */
static int index_node(name_set *hs, const node_ent *nodes, size_t n) {
    if (!hs->slot || 2 * n > hs->mask + 1) {
        size_t cap = hs->slot ? (hs->mask + 1) * 2 : 256;
        int *ns = malloc(cap * sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < cap; i++) ns[i] = -1;
        free(hs->slot);
        hs->slot = ns;
        hs->mask = cap - 1;
        for (size_t k = 0; k + 1 < n; k++) {
            size_t i = name_hash(nodes[k].name) & hs->mask;
            while (hs->slot[i] >= 0) i = (i + 1) & hs->mask;
            hs->slot[i] = (int)k;
        }
    }
    size_t i = name_hash(nodes[n - 1].name) & hs->mask;
    while (hs->slot[i] >= 0) i = (i + 1) & hs->mask;
    hs->slot[i] = (int)(n - 1);
    return 0;
}

gp_graph *gp_load_sndlib(const char *path, const gp_load_opts *o, gp_err *err) {
    gp_graph *g = NULL;
    gp_builder *b = NULL;
    gp_lines *f = NULL;
    name_set hs = {NULL, 0};
    node_ent *nodes = NULL;
    size_t nn = 0, capn = 0;
    gp_topo_link *links = NULL;
    size_t nl = 0, capl = 0;
    double unit = 1e6;
    int rule;
    char *line = NULL, *buf = NULL;
    size_t len = 0, bufcap = 0;
    char *tok[MAX_TOK];
    enum { S_NONE, S_META, S_NODES, S_LINKS, S_SKIP } sec = S_NONE;
    long ln = 0, depth = 0;
    int got;
    int saw_header = 0, saw_nodes = 0, saw_links = 0;

    if (gp_topo_rule(o, GP_RULE_HOPS, "routing", "sndlib", &rule, err) != GP_OK) return NULL;
    if (!(f = gp_lines_open(path, o, err))) return NULL;
    while ((got = gp_lines_next(f, &line, &len, err)) == 1) {
        ln = (long)gp_lines_number(f);
        if (2 * len + 2 > bufcap) {
            char *nb = realloc(buf, 2 * len + 2);
            if (!nb) goto oom;
            buf = nb;
            bufcap = 2 * len + 2;
        }
        if (line[0] == '?') {
            if (strstr(line, "SNDlib native format")) saw_header = 1;
            continue;
        }
        int nt = tokenize(line, buf, tok, MAX_TOK);
        if (nt == 0) continue;
        if (nt > MAX_TOK) {
            gp_err_set(err, GP_EPARSE, "%s:%ld: too many fields", path, ln);
            goto done;
        }
        if (sec == S_NONE) {
            if (nt == 2 && strcmp(tok[1], "(") == 0) {
                if (strcmp(tok[0], "META") == 0) sec = S_META;
                else if (strcmp(tok[0], "NODES") == 0) sec = S_NODES, saw_nodes = 1;
                else if (strcmp(tok[0], "LINKS") == 0) sec = S_LINKS, saw_links = 1;
                else sec = S_SKIP, depth = 1;
                continue;
            }
            gp_err_set(err, GP_EPARSE, "%s:%ld: expected a section header like 'NODES ('", path,
                       ln);
            goto done;
        }
        if (sec == S_SKIP) { /* other sections (ADMISSIBLE_PATHS, ...) nest parentheses */
            for (int k = 0; k < nt; k++) depth += (tok[k][0] == '(') - (tok[k][0] == ')');
            if (depth <= 0) sec = S_NONE;
            continue;
        }
        if (nt == 1 && strcmp(tok[0], ")") == 0) {
            sec = S_NONE;
            continue;
        }
        if (sec == S_META) {
            if (nt >= 3 && strcmp(tok[0], "unit") == 0 && strcmp(tok[1], "=") == 0) {
                if (strcmp(tok[2], "BITSPERSEC") == 0) unit = 1;
                else if (strcmp(tok[2], "KBITPERSEC") == 0) unit = 1e3;
                else if (strcmp(tok[2], "MBITPERSEC") == 0) unit = 1e6;
                else if (strcmp(tok[2], "GBITPERSEC") == 0) unit = 1e9;
                else {
                    gp_err_set(err, GP_EPARSE,
                               "%s:%ld: unknown capacity unit (BITSPERSEC, KBITPERSEC, MBITPERSEC "
                               "or GBITPERSEC)",
                               path, ln);
                    goto done;
                }
            }
            continue;
        }
        if (sec == S_NODES) {
            double lon, lat;
            if (nt != 5 || strcmp(tok[1], "(") || strcmp(tok[4], ")") || !num(tok[2], &lon) ||
                !num(tok[3], &lat)) {
                gp_err_set(err, GP_EPARSE, "%s:%ld: node line must be 'NAME ( LON LAT )'", path,
                           ln);
                goto done;
            }
            if (find_node(&hs, nodes, tok[0]) >= 0) {
                gp_err_set(err, GP_EPARSE, "%s:%ld: a node of this name is already declared", path,
                           ln);
                goto done;
            }
            if (nn == capn) {
                size_t cap = capn ? capn * 2 : 64;
                node_ent *x = realloc(nodes, cap * sizeof *x);
                if (!x) goto oom;
                nodes = x;
                capn = cap;
            }
            nodes[nn].name = strdup(tok[0]);
            if (!nodes[nn].name) goto oom;
            nodes[nn].lon = lon;
            nodes[nn].lat = lat;
            nn++;
            if (index_node(&hs, nodes, nn)) goto oom;
            continue;
        }
        /* S_LINKS: id ( u v ) pre pre_cost routing setup ( caps... ) */
        double pre, pre_cost, routing, setup;
        if (nt < 11 || strcmp(tok[1], "(") || strcmp(tok[4], ")") || !num(tok[5], &pre) ||
            !num(tok[6], &pre_cost) || !num(tok[7], &routing) || !num(tok[8], &setup) ||
            strcmp(tok[9], "(") || strcmp(tok[nt - 1], ")") || (nt - 11) % 2) {
            gp_err_set(err, GP_EPARSE,
                       "%s:%ld: link line must be 'ID ( SRC DST ) PRE_CAP PRE_COST ROUTING_COST "
                       "SETUP_COST ( {CAP COST}* )'",
                       path, ln);
            goto done;
        }
        int u = find_node(&hs, nodes, tok[2]), v = find_node(&hs, nodes, tok[3]);
        if (u < 0 || v < 0) {
            gp_err_set(err, GP_EPARSE, "%s:%ld: the link's %s node is not declared in NODES", path,
                       ln, u < 0 ? "source" : "target");
            goto done;
        }
        double cap = pre > 0 ? pre : 0;
        for (int i = 10; i + 1 < nt - 1; i += 2) {
            double mc, mcost;
            if (!num(tok[i], &mc) || !num(tok[i + 1], &mcost)) {
                gp_err_set(err, GP_EPARSE, "%s:%ld: bad module: CAPACITY COST must be numbers",
                           path, ln);
                goto done;
            }
            if (pre <= 0 && mc > cap) cap = mc;
        }
        if (routing < 0) {
            gp_err_set(err, GP_EPARSE, "%s:%ld: negative routing cost", path, ln);
            goto done;
        }
        if (nl == capl) {
            size_t c = capl ? capl * 2 : 128;
            gp_topo_link *x = realloc(links, c * sizeof *x);
            if (!x) goto oom;
            links = x;
            capl = c;
        }
        links[nl++] = (gp_topo_link){.u = u,
                                     .v = v,
                                     .bw = cap > 0 ? cap * unit : -1,
                                     .cost = routing,
                                     .both = 1,
                                     .line = ln};
    }
    if (got < 0) goto done;
    if (!saw_header && !saw_nodes) {
        gp_err_set(err, GP_EPARSE,
                   "%s:1: not an SNDlib native file (no '?SNDlib native format' "
                   "header and no NODES section)",
                   path);
        goto done;
    }
    if (sec != S_NONE) {
        gp_err_set(err, GP_EPARSE, "%s:%ld: section not closed with ')' at end of file", path, ln);
        goto done;
    }
    if (nn == 0 || !saw_links) {
        gp_err_set(err, GP_EPARSE, "%s:%ld: no %s section", path, ln, nn ? "LINKS" : "NODES");
        goto done;
    }
    b = gp_builder_new(o && o->scale > 0        ? o->scale
                       : rule == GP_RULE_NATIVE ? GP_SCALE_DEFAULT_FRACTIONAL
                                                : GP_SCALE_INTEGER);
    if (!b) goto oom;
    gp_builder_guard(b, o);
    int geo = 1;
    for (size_t i = 0; i < nn; i++)
        if (!(nodes[i].lon >= -180 && nodes[i].lon <= 180 && nodes[i].lat >= -90 &&
              nodes[i].lat <= 90))
            geo = 0;
    for (size_t i = 0; i < nn; i++) {
        gp_err e;
        if (gp_builder_add_node(b, (int64_t)i, geo, nodes[i].lon, nodes[i].lat, nodes[i].name,
                                &e) != GP_OK) {
            gp_err_set(err, e.code, "%s: %s", path, e.msg);
            goto done;
        }
    }
    gp_topo_costs(links, nl, rule, gp_topo_ref_bw(o));
    if (gp_topo_add_links(b, links, nl, path, err) != GP_OK) goto done;
    g = gp_builder_finish(b, path, "sndlib", 0, err);
    if (g) gp_graph_set_unit(g, rule == GP_RULE_HOPS ? "hops" : "cost", 0);
    if (g && gp_topo_set_caps(g, links, nl, err) != GP_OK) {
        gp_graph_unref(g);
        g = NULL;
    }
    b = NULL;
    goto done;
oom:
    gp_err_set(err, GP_ENOMEM, "%s:%ld: out of memory", path, ln);
done:
    gp_lines_close(f);
    free(buf);
    free(hs.slot);
    gp_builder_free(b);
    for (size_t i = 0; i < nn; i++) free(nodes[i].name);
    free(nodes);
    free(links);
    return g;
}
