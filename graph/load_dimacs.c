/* load_dimacs.c - 9th DIMACS Implementation Challenge shortest-path graphs (.gr, optionally gzip).
 *
 * Format: "c ..." comments, one "p sp NODES ARCS" line, then "a TAIL HEAD WEIGHT" lines with node
 * ids 1..NODES and non-negative integer weights (scale 1). Every node 1..NODES exists, isolated or
 * not. When a sibling coordinate file exists (X.gr -> X.co or X.co.gz; X.gr.gz -> X.co.gz or X.co),
 * its "p aux sp co NODES" / "v ID X Y" lines give lon = X / 1e6, lat = Y / 1e6. Any deviation is
 * an error "FILE:LINE: what is wrong" (never quoting the bytes read: a spec may name a file that is
 * not a graph) and no graph is returned.
 *
 * The counts of the 'p' line are hints, not allocations: storage is reserved for at most as many
 * nodes / arcs as the file has bytes, and the isolated nodes 1..NODES that no arc mentions (they
 * exist by definition) are created only after the arcs, when NODES <= DIMACS_FREE_NODES +
 * DIMACS_NODES_PER_BYTE x bytes read; a 16-byte "p sp 50000000 0" is refused instead of building
 * a 50 M-node graph. max_graph_nodes / max_graph_arcs (gp_load_opts) cap the counts.
 */
#include "graph/graph_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_LINES 10000000ULL
#define DIMACS_FREE_NODES 65536ULL
#define DIMACS_NODES_PER_BYTE 16ULL

/* Reads the .co file into the builder. */
static int load_coords(gp_builder *b, const char *path, uint64_t nodes, const gp_load_opts *o,
                       gp_err *err) {
    gp_lines *r = gp_lines_open(path, o, err);
    if (!r) return err ? err->code : GP_EIO;
    int rc = GP_OK;
    uint64_t pline = 0;
    char *line;
    size_t len;
    int got;
    while ((got = gp_lines_next(r, &line, &len, err)) == 1) {
        uint64_t ln = gp_lines_number(r);
        if (o->progress && ln % PROGRESS_LINES == 0)
            fprintf(stderr, "%s: %llu lines\n", path, (unsigned long long)ln);
        const char *p = line;
        if (len == 0 || line[0] == 'c') continue;
        if (line[0] == 'p') {
            int64_t cnt;
            p = line + 1;
            if (pline) {
                rc = gp_err_set(err, GP_EPARSE, "%s:%llu: second 'p' line (first on line %llu)",
                                path, (unsigned long long)ln, (unsigned long long)pline);
                goto out;
            }
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "aux sp co", 9) != 0 || (p += 9, gp_parse_i64(&p, &cnt)) != 0 ||
                !gp_rest_blank(p)) {
                rc = gp_err_set(err, GP_EPARSE,
                                "%s:%llu: bad 'p' line: expected 'p aux sp co NODES'", path,
                                (unsigned long long)ln);
                goto out;
            }
            if ((uint64_t)cnt != nodes) {
                rc = gp_err_set(
                    err, GP_EPARSE,
                    "%s:%llu: coordinate file declares %lld nodes but the graph has %llu", path,
                    (unsigned long long)ln, (long long)cnt, (unsigned long long)nodes);
                goto out;
            }
            pline = ln;
            continue;
        }
        if (line[0] != 'v' || (line[1] != ' ' && line[1] != '\t')) {
            rc = gp_err_set(err, GP_EPARSE,
                            "%s:%llu: unexpected line: expected 'c', 'p aux sp co' or 'v' lines",
                            path, (unsigned long long)ln);
            goto out;
        }
        if (!pline) {
            rc = gp_err_set(err, GP_EPARSE, "%s:%llu: coordinate before the 'p aux sp co' line",
                            path, (unsigned long long)ln);
            goto out;
        }
        int64_t id, x, y;
        p = line + 1;
        if (gp_parse_i64(&p, &id) || gp_parse_i64(&p, &x) || gp_parse_i64(&p, &y) ||
            !gp_rest_blank(p)) {
            rc = gp_err_set(err, GP_EPARSE, "%s:%llu: bad coordinate line: expected 'v ID X Y'",
                            path, (unsigned long long)ln);
            goto out;
        }
        if (id < 1 || (uint64_t)id > nodes) {
            rc = gp_err_set(err, GP_EPARSE, "%s:%llu: node id %lld out of range 1..%llu", path,
                            (unsigned long long)ln, (long long)id, (unsigned long long)nodes);
            goto out;
        }
        gp_err e2;
        if (gp_builder_add_node(b, id, 1, (double)x / 1e6, (double)y / 1e6, NULL, &e2)) {
            rc = gp_err_set(err, e2.code, "%s:%llu: %s", path, (unsigned long long)ln, e2.msg);
            goto out;
        }
    }
    if (got < 0) {
        rc = -got;
        goto out;
    }
    if (!pline)
        rc = gp_err_set(err, GP_EPARSE, "%s:%llu: no 'p aux sp co NODES' line", path,
                        (unsigned long long)(gp_lines_number(r) ? gp_lines_number(r) : 1));
out:
    gp_lines_close(r);
    return rc;
}

/* The coordinate file next to gr_path, if one exists: fills out and returns 1. */
static int sibling_co(const char *gr_path, char *out, size_t cap) {
    size_t l = strlen(gr_path);
    size_t base;
    if (l > 6 && strcmp(gr_path + l - 6, ".gr.gz") == 0) base = l - 6;
    else if (l > 3 && strcmp(gr_path + l - 3, ".gr") == 0) base = l - 3;
    else return 0;
    if (base + 7 > cap) return 0;
    static const char *const exts[] = {".co", ".co.gz"};
    int gz = strcmp(gr_path + base, ".gr.gz") == 0;
    for (int i = 0; i < 2; i++) {
        memcpy(out, gr_path, base);
        snprintf(out + base, cap - base, "%s", exts[gz ? 1 - i : i]);
        if (access(out, R_OK) == 0) return 1;
    }
    return 0;
}

gp_graph *gp_load_dimacs(const char *path, const gp_load_opts *opts, gp_err *err) {
    static const gp_load_opts defaults = {0};
    const gp_load_opts *o = opts ? opts : &defaults;
    gp_builder *b = NULL;
    gp_lines *r = gp_lines_open(path, o, err);
    if (!r) return NULL;
    b = gp_builder_new(GP_SCALE_INTEGER);
    if (!b) {
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    gp_builder_guard(b, o);
    uint64_t nodes = 0, arcs = 0, seen = 0, pline = 0;
    char *line;
    size_t len;
    int got;
    while ((got = gp_lines_next(r, &line, &len, err)) == 1) {
        uint64_t ln = gp_lines_number(r);
        if (o->progress && ln % PROGRESS_LINES == 0)
            fprintf(stderr, "%s: %llu lines, %llu arcs\n", path, (unsigned long long)ln,
                    (unsigned long long)seen);
        const char *p = line + 1;
        if (line[0] == 'a' && (line[1] == ' ' || line[1] == '\t')) {
            int64_t u, v, w;
            if (!pline) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: arc before the 'p sp NODES ARCS' line", path,
                           (unsigned long long)ln);
                goto fail;
            }
            if (gp_parse_i64(&p, &u) || gp_parse_i64(&p, &v)) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: bad arc line: expected 'a TAIL HEAD WEIGHT'",
                           path, (unsigned long long)ln);
                goto fail;
            }
            int wr = gp_parse_i64(&p, &w);
            if (wr == 0 && w < 0) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: weight %lld is negative", path,
                           (unsigned long long)ln, (long long)w);
                goto fail;
            }
            if (wr == -2 || (wr == 0 && w > (int64_t)UINT32_MAX)) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: weight exceeds %u", path,
                           (unsigned long long)ln, UINT32_MAX);
                goto fail;
            }
            if (wr) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: weight is not a non-negative integer", path,
                           (unsigned long long)ln);
                goto fail;
            }
            if (!gp_rest_blank(p)) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: unexpected text after the weight", path,
                           (unsigned long long)ln);
                goto fail;
            }
            if (u < 1 || (uint64_t)u > nodes || v < 1 || (uint64_t)v > nodes) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: node id %lld out of range 1..%llu", path,
                           (unsigned long long)ln,
                           (long long)(u < 1 || (uint64_t)u > nodes ? u : v),
                           (unsigned long long)nodes);
                goto fail;
            }
            if (++seen > arcs) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: more arcs than the %llu declared on line %llu",
                           path, (unsigned long long)ln, (unsigned long long)arcs,
                           (unsigned long long)pline);
                goto fail;
            }
            if (gp_builder_add_arc(b, u, v, (uint32_t)w, err)) goto fail;
            continue;
        }
        if (len == 0 || line[0] == 'c') continue;
        if (line[0] == 'p' && (line[1] == ' ' || line[1] == '\t')) {
            int64_t n, m;
            if (pline) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: second 'p' line (first on line %llu)", path,
                           (unsigned long long)ln, (unsigned long long)pline);
                goto fail;
            }
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "sp", 2) != 0 || (p += 2, gp_parse_i64(&p, &n)) ||
                gp_parse_i64(&p, &m) || !gp_rest_blank(p) || n < 0 || m < 0) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: bad 'p' line: expected 'p sp NODES ARCS'",
                           path, (unsigned long long)ln);
                goto fail;
            }
            if (n == 0) {
                gp_err_set(err, GP_EPARSE, "%s:%llu: empty graph (0 nodes)", path,
                           (unsigned long long)ln);
                goto fail;
            }
            if ((uint64_t)n >= GP_NONE || (uint64_t)m >= UINT32_MAX) {
                gp_err_set(err, GP_ETOOBIG,
                           "%s:%llu: %lld nodes / %lld arcs is over the limit (%u)", path,
                           (unsigned long long)ln, (long long)n, (long long)m, UINT32_MAX - 1);
                goto fail;
            }
            if ((o->max_nodes && (uint64_t)n > o->max_nodes) ||
                (o->max_arcs && (uint64_t)m > o->max_arcs)) {
                gp_err_set(err, GP_ETOOBIG,
                           "%s:%llu: %lld nodes / %lld arcs is over max_graph_nodes = %llu / "
                           "max_graph_arcs = %llu",
                           path, (unsigned long long)ln, (long long)n, (long long)m,
                           (unsigned long long)o->max_nodes, (unsigned long long)o->max_arcs);
                goto fail;
            }
            nodes = (uint64_t)n;
            arcs = (uint64_t)m;
            pline = ln;
            /* hints bounded by the input's size: an arc line takes at least 8 bytes */
            uint64_t cap = gp_lines_file_size(r) ? gp_lines_file_size(r) : 1u << 20;
            if (gp_builder_reserve(b, nodes + 1 < cap ? nodes + 1 : cap, arcs < cap ? arcs : cap,
                                   err))
                goto fail;
            continue;
        }
        gp_err_set(err, GP_EPARSE, "%s:%llu: unexpected line: expected 'c', 'p sp' or 'a' lines",
                   path, (unsigned long long)ln);
        goto fail;
    }
    if (got < 0) goto fail;
    uint64_t last = gp_lines_number(r) ? gp_lines_number(r) : 1;
    uint64_t bytes = gp_lines_bytes(r);
    gp_lines_close(r);
    r = NULL;
    if (!pline) {
        gp_err_set(err, GP_EPARSE, "%s:%llu: no 'p sp NODES ARCS' line", path,
                   (unsigned long long)last);
        goto fail;
    }
    if (seen != arcs) {
        gp_err_set(err, GP_EPARSE,
                   "%s:%llu: file ends after %llu arcs but line %llu declares %llu (truncated?)",
                   path, (unsigned long long)last, (unsigned long long)seen,
                   (unsigned long long)pline, (unsigned long long)arcs);
        goto fail;
    }
    if (nodes > DIMACS_FREE_NODES + DIMACS_NODES_PER_BYTE * bytes) {
        gp_err_set(err, GP_ETOOBIG,
                   "%s:%llu: the 'p' line declares %llu nodes but the file has only %llu bytes "
                   "(at most %llu + %llu per byte are accepted: nodes no arc mentions still cost "
                   "memory)",
                   path, (unsigned long long)pline, (unsigned long long)nodes,
                   (unsigned long long)bytes, DIMACS_FREE_NODES, DIMACS_NODES_PER_BYTE);
        goto fail;
    }
    for (uint64_t id = 1; id <= nodes; id++) /* nodes 1..N exist, with an arc or not */
        if (gp_builder_add_node(b, (int64_t)id, 0, 0, 0, NULL, err)) goto fail;
    char co[1024];
    if (sibling_co(path, co, sizeof co) && load_coords(b, co, nodes, o, err)) goto fail;
    return gp_builder_finish(b, path, "dimacs", 1, err);
fail:
    gp_lines_close(r);
    gp_builder_free(b);
    return NULL;
}
