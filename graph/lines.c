/* lines.c - the line reader behind the text loaders: plain or gzip files through zlib, read in
 * large blocks and split in place, so loaders see one NUL-terminated line at a time with its line
 * number and truncated gzip streams are reported instead of silently ending the input.
 */
#include "graph_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LINES_BUF (4u << 20)
#define LINES_MAX (1u << 20)

struct gp_lines {
    gzFile gz;
    char *buf;
    size_t start, end; /* unread bytes are buf[start..end) */
    int eof;
    uint64_t lineno;
    char path[400];
};

gp_lines *gp_lines_open(const char *path, gp_err *err) {
    gp_lines *r = calloc(1, sizeof *r);
    if (!r) {
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    r->buf = malloc(LINES_BUF + 1);
    if (!r->buf) {
        free(r);
        gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    errno = 0;
    r->gz = gzopen(path, "rb");
    if (!r->gz) {
        gp_err_set(err, GP_EIO, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
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
    while (!r->eof && r->end < LINES_BUF) {
        int got = gzread(r->gz, r->buf + r->end, (unsigned)(LINES_BUF - r->end));
        int zerr = Z_OK;
        const char *zmsg = gzerror(r->gz, &zerr);
        if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
            if (zerr == Z_ERRNO)
                zmsg = strerror(errno);
            return -gp_err_set(err, zerr == Z_BUF_ERROR ? GP_EPARSE : GP_EIO,
                               "%s:%llu: %s (file truncated or damaged)", r->path,
                               (unsigned long long)r->lineno + 1, zmsg ? zmsg : "read error");
        }
        if (got == 0) {
            r->eof = 1;
            break;
        }
        r->end += (size_t)got;
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

void gp_lines_close(gp_lines *r) {
    if (!r) return;
    if (r->gz) gzclose(r->gz);
    free(r->buf);
    free(r);
}
