/* guard.c - what a load may read and for how long: the checks behind gp_load_opts' guards.
 *
 * A spec given over the admin API is untrusted input: it may name any file the process can read,
 * a FIFO or device that never ends, or a tiny file whose header asks for gigabytes. Every loader
 * calls gp_load_check_file before it opens a file (allow-list through realpath, so neither '..' nor a
 * symlink escapes it; regular files only; the size against max_bytes) and gp_load_check_time at
 * cheap points (every input block, every 64 Ki arcs), so a load stops with a message naming the
 * limit instead of running on. The caps on nodes and arcs live in the builder (gp_builder_guard).
 */
#include "graph/graph_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Canonical form of path: realpath when it exists, else realpath of its directory plus the last
 * component (so a missing file inside an allowed directory is reported as missing, and one outside
 * as forbidden, without telling which files exist). 0 ok, -1 when even the directory is missing. */
static int canonical(const char *path, char *out) {
    if (realpath(path, out)) return 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) return -1;
    char dir[PATH_MAX];
    size_t dl = slash ? (size_t)(slash - path) : 0;
    if (dl >= sizeof dir) return -1;
    if (slash && dl == 0) snprintf(dir, sizeof dir, "/");
    else if (slash) memcpy(dir, path, dl), dir[dl] = '\0';
    else snprintf(dir, sizeof dir, ".");
    char rdir[PATH_MAX];
    if (!realpath(dir, rdir)) return -1;
    int n = snprintf(out, PATH_MAX, "%s/%s", strcmp(rdir, "/") ? rdir : "", base);
    return n > 0 && n < PATH_MAX ? 0 : -1;
}

/* 1 when the canonical path lies inside one of the ':'-separated directories. */
static int inside(const char *real, const char *dirs) {
    const char *p = dirs;
    while (*p) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX], rdir[PATH_MAX];
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, p, n);
            dir[n] = '\0';
            if (realpath(dir, rdir)) {
                size_t rl = strlen(rdir);
                if (strcmp(rdir, "/") == 0) return 1;
                if (strncmp(real, rdir, rl) == 0 && real[rl] == '/') return 1;
            }
        }
        p += n;
        if (*p == ':') p++;
    }
    return 0;
}

int gp_load_check_file(const char *path, const gp_load_opts *o, gp_err *err) {
    if (!o) return GP_OK;
    if (o->allow_dirs) {
        char real[PATH_MAX];
        if (canonical(path, real) || !inside(real, o->allow_dirs))
            return gp_err_set(err, GP_EFORBIDDEN,
                              "%s: outside the directories graphs may be loaded from (config "
                              "load_paths)",
                              path);
    }
    struct stat st;
    if (stat(path, &st) != 0) return GP_OK; /* the open that follows reports it */
    if (o->regular_only && !S_ISREG(st.st_mode))
        return gp_err_set(err, GP_EINVAL,
                          "%s: not a regular file (FIFOs, devices and directories are refused)",
                          path);
    if (o->max_bytes && S_ISREG(st.st_mode) && (uint64_t)st.st_size > o->max_bytes)
        return gp_err_set(err, GP_ETOOBIG, "%s: %llu bytes is over max_graph_bytes = %llu", path,
                          (unsigned long long)st.st_size, (unsigned long long)o->max_bytes);
    return GP_OK;
}

int gp_load_check_time(const gp_load_opts *o, gp_err *err) {
    if (!o) return GP_OK;
    if (o->cancel && __atomic_load_n(o->cancel, __ATOMIC_RELAXED))
        return gp_err_set(err, GP_ETIMEOUT,
                          "load stopped: past load_timeout_s = %g s or the server is stopping",
                          o->timeout_s);
    if (o->deadline > 0 && gp_now() > o->deadline)
        return gp_err_set(err, GP_ETIMEOUT, "load exceeded load_timeout_s = %g s", o->timeout_s);
    return GP_OK;
}
