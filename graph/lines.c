/* lines.c - the line reader behind the text loaders: plain or gzip files through zlib, read in
 * large blocks and split in place, so loaders see one NUL-terminated line at a time with its line
 * number and truncated gzip streams are reported instead of silently ending the input.
 */
#include "graph/graph_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define LINES_BUF (4u << 20)
#define LINES_MAX (1u << 20)

struct gp_lines {
    gzFile gz;
    char *buf;
    size_t cap;        /* bytes of buf (plus one for a NUL): grows up to LINES_BUF */
    size_t start, end; /* unread bytes are buf[start..end) */
    int eof;
    uint64_t lineno;
    uint64_t bytes, file_size; /* read so far (decompressed); on disk (0: unknown) */
    const gp_load_opts *o;
    char path[400];
};

gp_lines *gp_lines_open(const char *path, const gp_load_opts *o, gp_err *err) {
    if (gp_load_check_file(path, o, err)) return NULL;
    gp_lines *r = calloc(1, sizeof *r);
    if (!r) {
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    r->o = o;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) r->file_size = (uint64_t)st.st_size;
    /* small files get a small buffer (it grows for long lines, up to LINES_BUF) */
    r->cap = r->file_size && r->file_size < LINES_BUF / 4 ? (size_t)r->file_size * 2 + 4096
                                                          : LINES_BUF;
    r->buf = malloc(r->cap + 1);
    if (!r->buf) {
        free(r);
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    errno = 0;
    r->gz = gzopen(path, "rb");
    if (!r->gz) {
        gp_err_set(err, GP_EIO, "%s: cannot open: %s", path,
                   errno ? strerror(errno) : "out of memory");
        free(r->buf);
        free(r);
        return NULL;
    }
    gzbuffer(r->gz, 1u << 18);
    return r;
}

/* Reads more input after moving the unread tail to the front. 0 ok, <0 error. */
static int fill(gp_lines *r, gp_err *err) {
    size_t rest = r->end - r->start;
    if (r->start) memmove(r->buf, r->buf + r->start, rest);
    r->start = 0;
    r->end = rest;
    if (r->end == r->cap && r->cap < LINES_BUF) { /* one partial line fills the buffer: grow it */
        size_t nc = r->cap * 4 < LINES_BUF ? r->cap * 4 : LINES_BUF;
        char *nb = realloc(r->buf, nc + 1);
        if (!nb)
            return -gp_err_set(err, GP_ENOMEM, "%s:%llu: out of memory", r->path,
                               (unsigned long long)r->lineno + 1);
        r->buf = nb;
        r->cap = nc;
    }
    while (!r->eof && r->end < r->cap) {
        gp_err e2;
        if (gp_load_check_time(r->o, &e2))
            return -gp_err_set(err, e2.code, "%s:%llu: %s", r->path,
                               (unsigned long long)r->lineno + 1, e2.msg);
        int got = gzread(r->gz, r->buf + r->end, (unsigned)(r->cap - r->end));
        int zerr = Z_OK;
        const char *zmsg = gzerror(r->gz, &zerr);
        if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
            if (zerr == Z_ERRNO) zmsg = strerror(errno);
            return -gp_err_set(err, zerr == Z_BUF_ERROR ? GP_EPARSE : GP_EIO,
                               "%s:%llu: %s (file truncated or damaged)", r->path,
                               (unsigned long long)r->lineno + 1, zmsg ? zmsg : "read error");
        }
        if (got == 0) {
            r->eof = 1;
            break;
        }
        r->end += (size_t)got;
        r->bytes += (uint64_t)got;
        if (r->o && r->o->max_bytes && r->bytes > r->o->max_bytes)
            return -gp_err_set(err, GP_ETOOBIG,
                               "%s:%llu: input is over max_graph_bytes = %llu bytes (after "
                               "decompression)",
                               r->path, (unsigned long long)r->lineno + 1,
                               (unsigned long long)r->o->max_bytes);
        /* one block with a newline is enough to go on */
        if (memchr(r->buf + r->end - (size_t)got, '\n', (size_t)got)) break;
    }
    return 0;
}

int gp_lines_next(gp_lines *r, char **line, size_t *len, gp_err *err) {
    for (;;) {
        char *s = r->buf + r->start;
        char *nl = r->end > r->start ? memchr(s, '\n', r->end - r->start) : NULL;
        if (nl || (r->eof && r->end > r->start)) {
            char *e = nl ? nl : r->buf + r->end;
            size_t l = (size_t)(e - s);
            if (l > LINES_MAX)
                return -gp_err_set(err, GP_EPARSE, "%s:%llu: line longer than %u bytes", r->path,
                                   (unsigned long long)r->lineno + 1, LINES_MAX);
            if (memchr(s, '\0', l))
                return -gp_err_set(err, GP_EPARSE,
                                   "%s:%llu: NUL byte: binary data, not a text graph", r->path,
                                   (unsigned long long)r->lineno + 1);
            r->start = nl ? (size_t)(nl - r->buf) + 1 : r->end;
            if (l && s[l - 1] == '\r') l--;
            s[l] = '\0';
            r->lineno++;
            *line = s;
            *len = l;
            return 1;
        }
        if (r->eof) return 0;
        if (r->end - r->start > LINES_MAX)
            return -gp_err_set(err, GP_EPARSE, "%s:%llu: line longer than %u bytes", r->path,
                               (unsigned long long)r->lineno + 1, LINES_MAX);
        int rc = fill(r, err);
        if (rc) return rc;
    }
}

uint64_t gp_lines_number(const gp_lines *r) { return r->lineno; }
uint64_t gp_lines_bytes(const gp_lines *r) { return r->bytes; }
uint64_t gp_lines_file_size(const gp_lines *r) { return r->file_size; }

void gp_lines_close(gp_lines *r) {
    if (!r) return;
    if (r->gz) gzclose(r->gz);
    free(r->buf);
    free(r);
}

int gp_read_all(const char *path, const gp_load_opts *o, char **out, size_t *len, gp_err *err) {
    *out = NULL;
    *len = 0;
    gp_lines *r = gp_lines_open(path, o, err);
    if (!r) return err ? err->code : GP_EIO;
    /* the reader's block buffer grows into the whole input; fill() enforces the guards */
    size_t cap = r->cap;
    int rc = GP_OK;
    for (;;) {
        if (r->end == cap) {
            size_t nc = cap * 2;
            char *nb = realloc(r->buf, nc + 1);
            if (!nb) {
                rc = gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
                break;
            }
            r->buf = nb;
            cap = r->cap = nc;
        }
        gp_err e2;
        if ((rc = gp_load_check_time(o, &e2))) {
            gp_err_set(err, rc, "%s: %s", path, e2.msg);
            break;
        }
        int got = gzread(r->gz, r->buf + r->end,
                         (unsigned)(cap - r->end < (1u << 30) ? cap - r->end : (1u << 30)));
        int zerr = Z_OK;
        gzerror(r->gz, &zerr);
        if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
            rc = gp_err_set(err, GP_EIO, "%s: read error (file truncated or damaged)", path);
            break;
        }
        if (got == 0) break;
        r->end += (size_t)got;
        if (o && o->max_bytes && r->end > o->max_bytes) {
            rc = gp_err_set(err, GP_ETOOBIG,
                            "%s: input is over max_graph_bytes = %llu bytes (after decompression)",
                            path, (unsigned long long)o->max_bytes);
            break;
        }
    }
    if (rc == GP_OK) {
        r->buf[r->end] = '\0';
        *out = r->buf;
        *len = r->end;
        r->buf = NULL;
    }
    gp_lines_close(r);
    return rc;
}
