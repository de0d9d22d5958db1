/* snapshot.c - writing and mapping gpath snapshots (format in snapshot.h).
 *
 * Writing lays the graph's arrays out as sections behind a header and a section table; loading
 * reads the file into private read-only memory (not a file mapping: see map_checked), checks it (header, bounds, checksums, sizes, structural invariants
 * such as CSR offsets and heads in range, so even a crafted file cannot make a query read out of
 * bounds), points the graph's arrays into the mapping and lets gp_graph_complete rebuild what is
 * cheap to rebuild: the id map and the spatial index (the reverse CSR is stored). The content
 * hash is recomputed and must equal the stored one.
 */
#include "graph/snapshot.h"

#include "graph/graph_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    S_META = 1,
    S_ROW,
    S_COL,
    S_W,
    S_RROW,
    S_RCOL,
    S_RW,
    S_EXT,
    S_LON,
    S_LAT,
    S_ARC_LEN,
    S_ARC_NAME,
    S_ARC_REF,
    S_ARC_CLASS,
    S_ARC_SHAPE,
    S_SHAPE_LON,
    S_SHAPE_LAT,
    S_STRTAB,
    S_OSM_ID,
    S_NAMES,
    S_SHAPE_OSM_ID, /* optional: older files have none (readers skip types they do not know) */
    S_NODE_FLAGS,   /* optional: older snapshots have none */
    S_ARC_FLAGS,    /* optional: snapshots before them load without */
    S_ARC_GUIDE,
    S_RESTR,      /* optional: turn restrictions for the turn model (gp_graph.restr) */
    S_ARC_LIMITS, /* optional: vehicle limits (m * GP_LIMITS bytes), older snapshots have none */
    S_PLACES,     /* optional: OSM place records for map labels (gp_graph.places) */
    S_ARC_CAP,    /* optional: link capacities in bit/s (m doubles, gp_graph.arc_cap) */
    S_KNOWN_END
};

#define BOM 0x01020304u
#define ALIGN 64u
#define SUM_SEED 0x736e617073686f74ULL /* "snapshot" */

typedef struct snap_header {
    char magic[8];
    uint32_t version;
    uint32_t bom;
    uint32_t nsections;
    uint32_t reserved;
    uint64_t file_size;
    uint64_t table_off;
    uint64_t graph_hash;
    uint64_t table_sum;
    uint8_t pad[8];
} snap_header;

typedef struct snap_entry {
    uint32_t type;
    char name[24];
    uint32_t reserved;
    uint64_t offset, size, sum;
    uint8_t pad[8];
} snap_entry;

typedef struct snap_meta {
    uint32_t n, m;
    double scale, unit_s;
    uint64_t hash;
    int32_t directed;
    uint32_t reserved;
    char unit_name[16], profile[16], format[16];
    char source[512];
} snap_meta;

_Static_assert(sizeof(snap_header) == 64, "snapshot header is 64 bytes");
_Static_assert(sizeof(snap_entry) == 64, "snapshot table entry is 64 bytes");

/* A section to write: type, name (extras), bytes. */
typedef struct wsec {
    uint32_t type;
    const char *name;
    const void *data;
    uint64_t size;
} wsec;

static uint64_t align_up(uint64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* Writes header + table + sections to path via a temporary file. */
static int write_sections(const char *path, uint64_t graph_hash, const wsec *s, uint32_t ns,
                          gp_err *err) {
    snap_entry *tab = calloc(ns ? ns : 1, sizeof *tab);
    if (!tab) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
    uint64_t off = align_up(sizeof(snap_header) + (uint64_t)ns * sizeof(snap_entry));
    for (uint32_t i = 0; i < ns; i++) {
        tab[i].type = s[i].type;
        snprintf(tab[i].name, sizeof tab[i].name, "%s", s[i].name ? s[i].name : "");
        tab[i].offset = off;
        tab[i].size = s[i].size;
        tab[i].sum = gp_hash_bytes(SUM_SEED, s[i].data, s[i].size);
        off = align_up(off + s[i].size);
    }
    snap_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, GP_SNAP_MAGIC, 8);
    h.version = GP_SNAP_VERSION;
    h.bom = BOM;
    h.nsections = ns;
    h.file_size = off;
    h.table_off = sizeof h;
    h.graph_hash = graph_hash;
    h.table_sum = gp_hash_bytes(SUM_SEED, tab, (uint64_t)ns * sizeof *tab);

    size_t pl = strlen(path) + 32;
    char *tmp = malloc(pl);
    if (!tmp) {
        free(tab);
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
    }
    snprintf(tmp, pl, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int rc = GP_OK;
    if (!f) {
        rc = gp_err_set(err, GP_EIO, "%s: cannot create: %s", tmp, strerror(errno));
        goto done;
    }
    static const char zeros[ALIGN];
    uint64_t at = 0;
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && (ns == 0 || fwrite(tab, sizeof *tab, ns, f) == ns);
    at = sizeof h + (uint64_t)ns * sizeof *tab;
    for (uint32_t i = 0; ok && i < ns; i++) {
        if (tab[i].offset > at) ok = fwrite(zeros, 1, tab[i].offset - at, f) == tab[i].offset - at;
        at = tab[i].offset;
        if (ok && s[i].size) ok = fwrite(s[i].data, 1, s[i].size, f) == s[i].size;
        at += s[i].size;
    }
    if (ok && off > at) ok = fwrite(zeros, 1, off - at, f) == off - at;
    if (fclose(f) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        rc = gp_err_set(err, GP_EIO, "%s: cannot write the snapshot: %s", path, strerror(errno));
        remove(tmp);
    }
done:
    free(tmp);
    free(tab);
    return rc;
}

int gp_snapshot_write(const gp_graph *g, const char *path, const gp_snap_extra *extra,
                      uint32_t nextra, gp_err *err) {
    const uint64_t n = g->n, m = g->m;
    snap_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.n = g->n;
    meta.m = g->m;
    meta.scale = g->scale;
    meta.unit_s = g->unit_s;
    meta.hash = g->hash;
    meta.directed = g->directed_input;
    snprintf(meta.unit_name, sizeof meta.unit_name, "%s", g->unit_name);
    snprintf(meta.profile, sizeof meta.profile, "%s", g->profile);
    snprintf(meta.format, sizeof meta.format, "%s", g->format);
    snprintf(meta.source, sizeof meta.source, "%s", g->source);

    /* node names: n + 1 offsets into the characters that follow (equal offsets: no name) */
    char *names = NULL;
    uint64_t names_size = 0;
    if (g->names) {
        uint64_t chars = 0;
        for (uint64_t i = 0; i < n; i++) chars += g->names[i] ? strlen(g->names[i]) + 1 : 0;
        names_size = (n + 1) * sizeof(uint64_t) + chars;
        names = malloc(names_size);
        if (!names) return gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        uint64_t *offs = (uint64_t *)names, c = 0;
        char *txt = names + (n + 1) * sizeof(uint64_t);
        for (uint64_t i = 0; i < n; i++) {
            offs[i] = c;
            if (g->names[i]) {
                size_t l = strlen(g->names[i]) + 1;
                memcpy(txt + c, g->names[i], l);
                c += l;
            }
        }
        offs[n] = c;
    }
    uint64_t ns = g->arc_shape ? g->arc_shape[m] : 0;
    wsec s[S_KNOWN_END + 64];
    uint32_t k = 0;
#define SEC(t, p, sz)                                                                              \
    do {                                                                                           \
        if (p) s[k++] = (wsec){(t), NULL, (p), (sz)};                                              \
    } while (0)
    s[k++] = (wsec){S_META, NULL, &meta, sizeof meta};
    SEC(S_ROW, g->row, (n + 1) * 4);
    SEC(S_COL, g->col, m * 4);
    SEC(S_W, g->w, m * 4);
    SEC(S_RROW, g->rrow, (n + 1) * 4);
    SEC(S_RCOL, g->rcol, m * 4);
    SEC(S_RW, g->rw, m * 4);
    SEC(S_EXT, g->ext, n * 8);
    SEC(S_LON, g->lon, n * 8);
    SEC(S_LAT, g->lat, n * 8);
    SEC(S_ARC_LEN, g->arc_len_m, m * 4);
    SEC(S_ARC_NAME, g->arc_name, m * 4);
    SEC(S_ARC_REF, g->arc_ref, m * 4);
    SEC(S_ARC_CLASS, g->arc_class, m);
    SEC(S_ARC_SHAPE, g->arc_shape, (m + 1) * 4);
    if (g->arc_shape) {
        SEC(S_SHAPE_LON, g->shape_lon, ns * 8);
        SEC(S_SHAPE_LAT, g->shape_lat, ns * 8);
        SEC(S_SHAPE_OSM_ID, g->shape_osm_id, ns * 8);
    }
    SEC(S_STRTAB, g->strtab, g->strtab_len);
    SEC(S_OSM_ID, g->osm_id, n * 8);
    SEC(S_NAMES, names, names_size);
    SEC(S_NODE_FLAGS, g->node_flags, n);
    SEC(S_ARC_FLAGS, g->arc_flags, m);
    SEC(S_ARC_GUIDE, g->arc_guide, m * 4);
    SEC(S_RESTR, g->restr, g->restr_len * 4);
    SEC(S_ARC_LIMITS, g->arc_limits, m * GP_LIMITS);
    SEC(S_PLACES, g->places, g->places_len);
    SEC(S_ARC_CAP, g->arc_cap, m * 8);
#undef SEC
    int rc = GP_OK;
    if (nextra > 64) {
        rc = gp_err_set(err, GP_EINVAL, "%s: at most 64 extra sections", path);
    } else {
        for (uint32_t i = 0; i < nextra && !rc; i++) {
            if (!extra[i].name || !*extra[i].name || strlen(extra[i].name) > 23)
                rc = gp_err_set(err, GP_EINVAL, "%s: extra section names are 1..23 bytes", path);
            s[k++] = (wsec){GP_SNAP_EXTRA, extra[i].name, extra[i].data, extra[i].size};
        }
    }
    if (!rc) rc = write_sections(path, g->hash, s, k, err);
    free(names);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------- */

typedef struct mapped {
    const char *path;
    unsigned char *base;
    uint64_t len;
    const snap_header *h;
    const snap_entry *tab;
} mapped;

static void unmap(void *base, uint64_t len) { munmap(base, (size_t)len); }

/* The header's own checks, on the 64 bytes read before anything else (a junk or foreign file of
 * any size is refused after one small read) and again on the copy read with the rest. */
static int check_header(const char *path, const snap_header *h, uint64_t len, gp_err *err) {
    if (memcmp(h->magic, GP_SNAP_MAGIC, 8) != 0)
        return gp_err_set(err, GP_EPARSE, "%s: not a gpath snapshot (bad magic)", path);
    if (h->bom != BOM)
        return gp_err_set(err, GP_EPARSE,
                          "%s: snapshot written on a machine of the other byte order", path);
    if (h->version != GP_SNAP_VERSION)
        return gp_err_set(err, GP_EPARSE,
                          "%s: snapshot format version %u; this gpath reads version %u "
                          "(re-import the source)",
                          path, h->version, GP_SNAP_VERSION);
    if (h->file_size != len)
        return gp_err_set(err, GP_EPARSE,
                          "%s: damaged snapshot: %llu bytes, the header says %llu "
                          "(truncated?)",
                          path, (unsigned long long)len, (unsigned long long)h->file_size);
    if (h->nsections > 4096 || h->table_off < sizeof *h || h->table_off > len ||
        (uint64_t)h->nsections * sizeof(snap_entry) > len - h->table_off)
        return gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: section table out of bounds",
                          path);
    if (h->table_off % ALIGN)
        return gp_err_set(err, GP_EPARSE,
                          "%s: damaged snapshot: section table at byte %llu is misaligned "
                          "(sections start at multiples of %u)",
                          path, (unsigned long long)h->table_off, ALIGN);
    return GP_OK;
}

/* Reads path (after its header passed check_header) and checks the table and every section's
 * bounds, alignment and checksum. o: max_bytes (the file's size) and the deadline, checked
 * between 64 MiB reads; NULL = none. */
static int map_checked(const char *path, const gp_load_opts *o, mapped *mp, gp_err *err) {
    memset(mp, 0, sizeof *mp);
    mp->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gp_err_set(err, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return gp_err_set(err, GP_EIO, "%s: cannot stat: %s", path, strerror(errno));
    }
    uint64_t len = (uint64_t)st.st_size;
    snap_header hdr;
    if (len < sizeof(snap_header) || pread(fd, &hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr) {
        close(fd);
        return gp_err_set(err, GP_EPARSE,
                          "%s: not a gpath snapshot (%llu bytes, shorter than the "
                          "header)",
                          path, (unsigned long long)len);
    }
    int rc = check_header(path, &hdr, len, err);
    if (!rc && o && o->max_bytes && len > o->max_bytes)
        rc = gp_err_set(err, GP_ETOOBIG, "%s: %llu bytes is over max_graph_bytes = %llu", path,
                        (unsigned long long)len, (unsigned long long)o->max_bytes);
    if (rc) {
        close(fd);
        return rc;
    }
    /* Read into private memory rather than mapping the file: a file mapping faults (SIGBUS, the
     * whole server) when the file is truncated or rewritten in place under a running server,
     * and populating it does not help (truncation unmaps page-cache pages). The load reads every
     * byte for the checksums anyway; the graph then lives in anonymous memory like one built by
     * any other loader, and the file can change freely. */
    void *base =
        mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        close(fd);
        return gp_err_set(err, GP_ENOMEM, "%s: cannot allocate %llu bytes: %s", path,
                          (unsigned long long)len, strerror(errno));
    }
    for (uint64_t off = 0; off < len && !rc;) {
        uint64_t want = len - off < (64u << 20) ? len - off : (64u << 20);
        ssize_t k = pread(fd, (char *)base + off, (size_t)want, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = k < 0 ? errno : 0;
            rc = gp_err_set(err, GP_EIO, "%s: cannot read: %s", path,
                            e ? strerror(e) : "the file became shorter while it was read");
            break;
        }
        off += (uint64_t)k;
        rc = gp_load_check_time(o, err);
    }
    close(fd);
    if (rc) {
        munmap(base, (size_t)len);
        return rc;
    }
    mprotect(base, (size_t)len, PROT_READ); /* the graph's arrays stay read-only */
    mp->base = base;
    mp->len = len;
    const snap_header *h = base;
    /* the copy read with the rest is the one used: checked again (the file may have changed) */
    rc = check_header(path, h, len, err);
    if (!rc && gp_hash_bytes(SUM_SEED, (const char *)base + h->table_off,
                             (uint64_t)h->nsections * sizeof(snap_entry)) != h->table_sum)
        rc = gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: section table checksum mismatch",
                        path);
    if (!rc) {
        mp->h = h;
        mp->tab = (const snap_entry *)((const char *)base + h->table_off);
        for (uint32_t i = 0; i < h->nsections && !rc; i++) {
            const snap_entry *e = &mp->tab[i];
            char name[24];
            snprintf(name, sizeof name, "%.23s", e->name);
            if (e->offset > len || e->size > len - e->offset)
                rc = gp_err_set(err, GP_EPARSE,
                                "%s: damaged snapshot: section %u (type %u%s%s) "
                                "lies beyond the end of the file",
                                path, i, e->type, name[0] ? ", " : "", name);
            else if (e->offset % ALIGN)
                /* the arrays are used in place: a misaligned one is a misaligned load */
                rc = gp_err_set(err, GP_EPARSE,
                                "%s: damaged snapshot: section %u (type %u%s%s) at byte %llu is "
                                "misaligned (sections start at multiples of %u)",
                                path, i, e->type, name[0] ? ", " : "", name,
                                (unsigned long long)e->offset, ALIGN);
            else if (gp_hash_bytes(SUM_SEED, mp->base + e->offset, e->size) != e->sum)
                rc = gp_err_set(err, GP_EPARSE,
                                "%s: damaged snapshot: checksum mismatch in section "
                                "%u (type %u%s%s)",
                                path, i, e->type, name[0] ? ", " : "", name);
        }
    }
    if (rc) {
        munmap(base, (size_t)len);
        memset(mp, 0, sizeof *mp);
    }
    return rc;
}

static const snap_entry *find(const mapped *mp, uint32_t type) {
    for (uint32_t i = 0; i < mp->h->nsections; i++)
        if (mp->tab[i].type == type) return &mp->tab[i];
    return NULL;
}

/* Section `type` with exactly `size` bytes (NULL when absent and optional); -1 on a wrong size or
 * a missing required section. */
static int section(const mapped *mp, uint32_t type, uint64_t size, int required, const char *what,
                   void **out, gp_err *err) {
    const snap_entry *e = find(mp, type);
    *out = NULL;
    if (!e) {
        if (required)
            return gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: no %s section", mp->path,
                              what);
        return GP_OK;
    }
    if (size != UINT64_MAX && e->size != size)
        return gp_err_set(err, GP_EPARSE,
                          "%s: damaged snapshot: %s section has %llu bytes, "
                          "expected %llu",
                          mp->path, what, (unsigned long long)e->size, (unsigned long long)size);
    *out = mp->base + e->offset;
    return GP_OK;
}

/* Structural checks a query relies on: CSR offsets, heads in range, ascending ids, string and
 * shape offsets in range. */
static int check_structure(const mapped *mp, const gp_graph *g, gp_err *err) {
    const uint32_t n = g->n, m = g->m;
    const uint32_t *rows[2] = {g->row, g->rrow}, *cols[2] = {g->col, g->rcol};
    for (int r = 0; r < 2; r++) {
        if (rows[r][0] != 0 || rows[r][n] != m) goto bad;
        for (uint32_t u = 0; u < n; u++)
            if (rows[r][u + 1] < rows[r][u]) goto bad;
        for (uint32_t i = 0; i < m; i++)
            if (cols[r][i] >= n) goto bad;
    }
    for (uint32_t v = 1; v < n; v++)
        if (g->ext[v] <= g->ext[v - 1]) goto bad;
    if (g->strtab &&
        (g->strtab_len == 0 || g->strtab[0] != '\0' || g->strtab[g->strtab_len - 1] != '\0'))
        goto bad;
    const uint32_t *offs[3] = {g->arc_name, g->arc_ref, g->arc_guide};
    for (int k = 0; k < 3; k++)
        if (offs[k])
            for (uint32_t i = 0; i < m; i++)
                if (offs[k][i] && offs[k][i] >= g->strtab_len) goto bad;
    if (g->arc_shape) {
        if (g->arc_shape[0] != 0) goto bad;
        for (uint32_t i = 0; i < m; i++)
            if (g->arc_shape[i + 1] < g->arc_shape[i]) goto bad;
    }
    /* turn restrictions: whole records, a known kind, k >= 2 arcs of the graph */
    for (uint64_t i = 0; g->restr && i < g->restr_len;) {
        if (i + 2 > g->restr_len || (g->restr[i] != GP_RESTR_NO && g->restr[i] != GP_RESTR_ONLY))
            goto bad;
        uint64_t k = g->restr[i + 1];
        if (k < 2 || k > g->restr_len - i - 2) goto bad;
        for (uint64_t j = 0; j < k; j++)
            if (g->restr[i + 2 + j] >= m) goto bad;
        i += 2 + k;
    }
    return GP_OK;
bad:
    return gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: inconsistent graph structure",
                      mp->path);
}

gp_graph *gp_load_snapshot(const char *path, const gp_load_opts *o, gp_err *err) {
    double t0 = gp_now();
    mapped mp;
    if (map_checked(path, o, &mp, err)) return NULL;
    gp_graph *g = calloc(1, sizeof *g);
    if (!g) {
        munmap(mp.base, (size_t)mp.len);
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    g->map_base = mp.base;
    g->map_len = mp.len;
    g->map_unmap = unmap;
    snap_meta *meta;
    if (section(&mp, S_META, sizeof *meta, 1, "meta", (void **)&meta, err)) goto fail;
    const uint64_t n = meta->n, m = meta->m;
    g->n = meta->n;
    g->m = meta->m;
    g->scale = meta->scale;
    g->directed_input = meta->directed;
    char unit[17], fmt[17];
    snprintf(unit, sizeof unit, "%.16s", meta->unit_name);
    snprintf(fmt, sizeof fmt, "%.16s", meta->format);
    gp_graph_set_unit(g, unit, meta->unit_s);
    snprintf(g->profile, sizeof g->profile, "%.15s", meta->profile);
    if (n == 0) {
        gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: no nodes", path);
        goto fail;
    }
    if (section(&mp, S_ROW, (n + 1) * 4, 1, "row", (void **)&g->row, err) ||
        section(&mp, S_COL, m * 4, 1, "col", (void **)&g->col, err) ||
        section(&mp, S_W, m * 4, 1, "weight", (void **)&g->w, err) ||
        section(&mp, S_RROW, (n + 1) * 4, 1, "reverse row", (void **)&g->rrow, err) ||
        section(&mp, S_RCOL, m * 4, 1, "reverse col", (void **)&g->rcol, err) ||
        section(&mp, S_RW, m * 4, 1, "reverse weight", (void **)&g->rw, err) ||
        section(&mp, S_EXT, n * 8, 1, "node id", (void **)&g->ext, err) ||
        section(&mp, S_LON, n * 8, 0, "longitude", (void **)&g->lon, err) ||
        section(&mp, S_LAT, n * 8, 0, "latitude", (void **)&g->lat, err) ||
        section(&mp, S_ARC_LEN, m * 4, 0, "arc length", (void **)&g->arc_len_m, err) ||
        section(&mp, S_ARC_NAME, m * 4, 0, "arc name", (void **)&g->arc_name, err) ||
        section(&mp, S_ARC_REF, m * 4, 0, "arc ref", (void **)&g->arc_ref, err) ||
        section(&mp, S_ARC_CLASS, m, 0, "arc class", (void **)&g->arc_class, err) ||
        section(&mp, S_ARC_SHAPE, (m + 1) * 4, 0, "arc shape", (void **)&g->arc_shape, err) ||
        section(&mp, S_OSM_ID, n * 8, 0, "original id", (void **)&g->osm_id, err) ||
        section(&mp, S_NODE_FLAGS, n, 0, "node flags", (void **)&g->node_flags, err) ||
        section(&mp, S_ARC_FLAGS, m, 0, "arc flags", (void **)&g->arc_flags, err) ||
        section(&mp, S_ARC_GUIDE, m * 4, 0, "arc guidance", (void **)&g->arc_guide, err) ||
        section(&mp, S_ARC_LIMITS, m * GP_LIMITS, 0, "arc limits", (void **)&g->arc_limits, err) ||
        section(&mp, S_ARC_CAP, m * 8, 0, "link capacity", (void **)&g->arc_cap, err) ||
        section(&mp, S_STRTAB, UINT64_MAX, 0, "strings", (void **)&g->strtab, err) ||
        section(&mp, S_RESTR, UINT64_MAX, 0, "turn restrictions", (void **)&g->restr, err) ||
        section(&mp, S_PLACES, UINT64_MAX, 0, "places", (void **)&g->places, err))
        goto fail;
    if (g->restr) g->restr_len = find(&mp, S_RESTR)->size / 4;
    if (g->places) g->places_len = find(&mp, S_PLACES)->size;
    if (!g->lon != !g->lat) {
        gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: longitudes without latitudes", path);
        goto fail;
    }
    if (g->strtab) g->strtab_len = find(&mp, S_STRTAB)->size;
    if (g->arc_shape) {
        uint64_t ns = g->arc_shape[m];
        if (section(&mp, S_SHAPE_LON, ns * 8, 1, "shape longitude", (void **)&g->shape_lon, err) ||
            section(&mp, S_SHAPE_LAT, ns * 8, 1, "shape latitude", (void **)&g->shape_lat, err) ||
            section(&mp, S_SHAPE_OSM_ID, ns * 8, 0, "shape node id", (void **)&g->shape_osm_id,
                    err))
            goto fail;
    }
    if (check_structure(&mp, g, err)) goto fail;
    /* names reach JSON answers as they are: text that is not UTF-8 is refused here */
    int64_t bad_at = g->strtab ? gp_utf8_invalid(g->strtab, g->strtab_len) : -1;
    if (bad_at >= 0) {
        gp_err_set(err, GP_EPARSE,
                   "%s: damaged snapshot: invalid UTF-8 in the road names at byte %lld of the "
                   "strings section",
                   path, (long long)bad_at);
        goto fail;
    }
    const snap_entry *ne = find(&mp, S_NAMES);
    if (ne) {
        const uint64_t *offs = (const uint64_t *)(mp.base + ne->offset);
        const char *txt = (const char *)(offs + n + 1);
        if (ne->size < (n + 1) * 8 || offs[n] != ne->size - (n + 1) * 8 ||
            (offs[n] && txt[offs[n] - 1] != '\0')) {
            gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: node names section", path);
            goto fail;
        }
        g->names = calloc(n, sizeof *g->names);
        if (!g->names) goto oom;
        for (uint64_t i = 0; i < n; i++) {
            if (offs[i] > offs[i + 1] || offs[i + 1] > offs[n]) {
                gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: node names section", path);
                goto fail;
            }
            if (offs[i + 1] > offs[i]) g->names[i] = (char *)txt + offs[i];
        }
        bad_at = gp_utf8_invalid(txt, offs[n]);
        if (bad_at >= 0) {
            gp_err_set(err, GP_EPARSE,
                       "%s: damaged snapshot: invalid UTF-8 in the node names at byte %lld", path,
                       (long long)bad_at);
            goto fail;
        }
    }
    uint64_t want = meta->hash;
    char source[513];
    snprintf(source, sizeof source, "%.512s", meta->source);
    g = gp_graph_complete(g, path, fmt, meta->directed, err);
    if (!g) return NULL;
    if (g->hash != want) {
        gp_err_set(err, GP_EPARSE, "%s: damaged snapshot: content hash %s, the file says %016llx",
                   path, g->version, (unsigned long long)want);
        gp_graph_unref(g);
        return NULL;
    }
    GP_LOG(GP_LOG_INFO, "snapshot %s (imported from %s): %u nodes, %u arcs, %.1f MB read in %.3f s",
           path, source, g->n, g->m, (double)mp.len / 1e6, gp_now() - t0);
    return g;
oom:
    gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
fail:
    free(g->names);
    g->names = NULL;
    munmap(mp.base, (size_t)mp.len);
    free(g);
    return NULL;
}

const void *gp_snapshot_section(const gp_graph *g, const char *name, uint64_t *size) {
    if (!g || !g->map_base || !name) return NULL;
    const snap_header *h = g->map_base;
    const snap_entry *tab = (const snap_entry *)((const char *)g->map_base + h->table_off);
    for (uint32_t i = 0; i < h->nsections; i++)
        if (tab[i].type == GP_SNAP_EXTRA && strncmp(tab[i].name, name, sizeof tab[i].name) == 0) {
            if (size) *size = tab[i].size;
            return (const char *)g->map_base + tab[i].offset;
        }
    return NULL;
}

int gp_snapshot_add_section(const char *path, const char *name, const void *data, uint64_t size,
                            gp_err *err) {
    if (!name || !*name || strlen(name) > 23)
        return gp_err_set(err, GP_EINVAL, "%s: extra section names are 1..23 bytes", path);
    mapped mp;
    int rc = map_checked(path, NULL, &mp, err);
    if (rc) return rc;
    uint32_t ns = mp.h->nsections;
    wsec *s = calloc((size_t)ns + 1, sizeof *s);
    if (!s) {
        munmap(mp.base, (size_t)mp.len);
        return gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
    }
    char(*names)[24] = calloc((size_t)ns + 1, sizeof *names);
    uint32_t k = 0;
    for (uint32_t i = 0; names && i < ns; i++) {
        const snap_entry *e = &mp.tab[i];
        if (e->type == GP_SNAP_EXTRA && strncmp(e->name, name, sizeof e->name) == 0) continue;
        snprintf(names[k], sizeof names[k], "%.23s", e->name);
        s[k] = (wsec){e->type, names[k], mp.base + e->offset, e->size};
        k++;
    }
    if (!names) {
        rc = gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
    } else {
        s[k++] = (wsec){GP_SNAP_EXTRA, name, data, size};
        rc = write_sections(path, mp.h->graph_hash, s, k, err);
    }
    free(names);
    free(s);
    munmap(mp.base, (size_t)mp.len);
    return rc;
}
