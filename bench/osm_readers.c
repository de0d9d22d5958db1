/* osm_readers.c - the two OSM readers gpath could use, measured on the same file: libosmium
 * (through graph/osm_read.h, what the importer uses) and readosm (Debian libreadosm, a C library).
 * Each pass does the same work per object: count it, look at every tag (a strcmp of the key as a
 * profile would) and sum the node references of ways. Prints one markdown table row per reader:
 * median seconds over REPS passes, objects per second and the object counts.
 *   osm_readers FILE [REPS] [osmium|readosm|both]
 */
#include "graph/osm_read.h"

#include <readosm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tally {
    uint64_t nodes, ways, rels, tags, refs, highway;
} tally;

static void look(tally *t, const char *key) {
    t->tags++;
    t->highway += strcmp(key, "highway") == 0;
}

static int o_node(void *ctx, int64_t id, double lon, double lat, const gp_osm_tag *tags, uint32_t n,
                  gp_err *err) {
    (void)id, (void)lon, (void)lat, (void)err;
    tally *t = ctx;
    t->nodes++;
    for (uint32_t i = 0; i < n; i++) look(t, tags[i].key);
    return 0;
}
static int o_way(void *ctx, int64_t id, const int64_t *refs, uint32_t nrefs, const gp_osm_tag *tags,
                 uint32_t n, gp_err *err) {
    (void)id, (void)refs, (void)err;
    tally *t = ctx;
    t->ways++;
    t->refs += nrefs;
    for (uint32_t i = 0; i < n; i++) look(t, tags[i].key);
    return 0;
}
static int o_rel(void *ctx, int64_t id, const gp_osm_member *m, uint32_t nm, const gp_osm_tag *tags,
                 uint32_t n, gp_err *err) {
    (void)id, (void)m, (void)nm, (void)err;
    tally *t = ctx;
    t->rels++;
    for (uint32_t i = 0; i < n; i++) look(t, tags[i].key);
    return 0;
}

static int r_node(const void *u, const readosm_node *nd) {
    tally *t = (tally *)u;
    t->nodes++;
    for (int i = 0; i < nd->tag_count; i++) look(t, nd->tags[i].key);
    return READOSM_OK;
}
static int r_way(const void *u, const readosm_way *w) {
    tally *t = (tally *)u;
    t->ways++;
    t->refs += (uint64_t)w->node_ref_count;
    for (int i = 0; i < w->tag_count; i++) look(t, w->tags[i].key);
    return READOSM_OK;
}
static int r_rel(const void *u, const readosm_relation *r) {
    tally *t = (tally *)u;
    t->rels++;
    for (int i = 0; i < r->tag_count; i++) look(t, r->tags[i].key);
    return READOSM_OK;
}

static int run(int which, const char *path, tally *t) {
    memset(t, 0, sizeof *t);
    if (which == 0) {
        gp_osm_callbacks cb = {t, o_node, o_way, o_rel, NULL};
        gp_err err = {0};
        if (gp_osm_read(path, &cb, &err)) {
            fprintf(stderr, "libosmium: %s\n", err.msg);
            return -1;
        }
        return 0;
    }
    const void *h = NULL;
    int rc = readosm_open(path, &h);
    if (rc == READOSM_OK) rc = readosm_parse(h, t, r_node, r_way, r_rel);
    if (h) readosm_close(h);
    if (rc != READOSM_OK) fprintf(stderr, "readosm: error %d on %s\n", rc, path);
    return rc == READOSM_OK ? 0 : -1;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: osm_readers FILE [REPS] [osmium|readosm|both]\n");
        return 2;
    }
    int reps = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 3;
    if (reps < 1 || reps > 50) reps = 3;
    const char *which = argc > 3 ? argv[3] : "both";
    static const char *names[2] = {"libosmium 2 (C++, via graph/osm_read.h)", "readosm (C)"};
    for (int r = 0; r < 2; r++) {
        if ((r == 0 && !strcmp(which, "readosm")) || (r == 1 && !strcmp(which, "osmium"))) continue;
        double t[50];
        tally ty;
        for (int k = 0; k < reps; k++) {
            double t0 = gp_now();
            if (run(r, argv[1], &ty)) return 1;
            t[k] = gp_now() - t0;
        }
        qsort(t, (size_t)reps, sizeof t[0], cmp_d);
        double med = t[reps / 2];
        printf("| %s | %.3f | %.2f M | %llu | %llu | %llu | %llu |\n", names[r], med,
               (double)(ty.nodes + ty.ways + ty.rels) / med / 1e6, (unsigned long long)ty.nodes,
               (unsigned long long)ty.ways, (unsigned long long)ty.rels,
               (unsigned long long)ty.refs);
    }
    return 0;
}
