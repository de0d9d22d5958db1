/* pg.c - the PostgreSQL graph source (contract in pg.h): spec parsing, gpath's PostgreSQL
 * migrations, and the loader that reads pgRouting edge rows through a server-side cursor (text
 * format, FETCH in batches, so a table of millions of edges never sits in one result) into a
 * gp_builder.
 *
 * Only the user's own edges_sql is sent as given (it is their query, as pgRouting takes it); a table
 * name is quoted with PQescapeIdentifier and everything else is a parameterised statement.
 */
#include "pg.h"

#include "migrate.h"

#include <ctype.h>
#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_ROWS 50000

/* ---- spec parsing ------------------------------------------------------------------------------ */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* %XX-decodes n bytes of s into a new string (libpq's URI rules: '+' is not a space). */
static char *url_decode(const char *s, size_t n, gp_err *err) {
    char *out = malloc(n + 1);
    if (!out) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int a = i + 1 < n ? hexval((unsigned char)s[i + 1]) : -1;
            int b = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
            if (a < 0 || b < 0) {
                free(out);
                gp_err_set(err, GP_EINVAL, "PostgreSQL spec: bad %%-escape in a parameter value");
                return NULL;
            }
            out[o++] = (char)(a * 16 + b);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
    if (strlen(out) != o) {
        free(out);
        gp_err_set(err, GP_EINVAL, "PostgreSQL spec: a parameter value decodes to a NUL byte");
        return NULL;
    }
    return out;
}

/* The spec for people: a password in the authority or a password= parameter becomes "***". */
static void redact(const char *uri, char *out, size_t cap) {
    size_t o = 0;
    const char *p = uri;
    const char *auth = strstr(uri, "://");
    const char *at = NULL, *colon = NULL;
    if (auth) {
        auth += 3;
        const char *end = auth + strcspn(auth, "/?");
        for (const char *q = auth; q < end; q++)
            if (*q == '@') at = q;
        if (at)
            for (const char *q = auth; q < at; q++)
                if (*q == ':') {
                    colon = q;
                    break;
                }
    }
    while (*p && o + 1 < cap) {
        if (colon && p == colon + 1) {
            o += (size_t)snprintf(out + o, cap - o, "***");
            p = at;
            continue;
        }
        if (p > uri && (p[-1] == '?' || p[-1] == '&') && strncmp(p, "password=", 9) == 0) {
            o += (size_t)snprintf(out + o, cap - o, "password=***");
            p += 9 + strcspn(p + 9, "&");
            continue;
        }
        out[o++] = *p++;
    }
    if (o >= cap) o = cap - 1;
    out[o] = 0;
}

void gp_pg_spec_free(gp_pg_spec *s) {
    if (!s) return;
    free(s->conninfo);
    free(s->table);
    free(s->edges_sql);
    s->conninfo = s->table = s->edges_sql = NULL;
}

int gp_pg_spec_parse(const char *uri, gp_pg_spec *s, gp_err *err) {
    memset(s, 0, sizeof *s);
    s->directed = -1;
    if (!uri || (strncmp(uri, "postgresql://", 13) != 0 && strncmp(uri, "postgres://", 11) != 0))
        return gp_err_set(err, GP_EINVAL, "not a PostgreSQL URI (postgresql://...)");
    redact(uri, s->shown, sizeof s->shown);
    size_t len = strlen(uri);
    s->conninfo = malloc(len + 1);
    if (!s->conninfo) return gp_err_set(err, GP_ENOMEM, "out of memory");
    const char *q = strchr(uri, '?');
    size_t base = q ? (size_t)(q - uri) : len;
    memcpy(s->conninfo, uri, base);
    size_t o = base;
    int first = 1;
    const char *p = q ? q + 1 : NULL;
    while (p && *p) {
        size_t n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);
        size_t kl = eq ? (size_t)(eq - p) : n;
        const char *v = eq ? eq + 1 : p + n;
        size_t vl = eq ? n - kl - 1 : 0;
        char **slot = NULL;
        if (kl == 5 && strncmp(p, "table", 5) == 0) slot = &s->table;
        else if (kl == 9 && strncmp(p, "edges_sql", 9) == 0) slot = &s->edges_sql;
        if (slot) {
            free(*slot);
            if (!(*slot = url_decode(v, vl, err))) goto fail;
        } else if (kl == 8 && strncmp(p, "directed", 8) == 0) {
            char *d = url_decode(v, vl, err);
            if (!d) goto fail;
            if (!strcmp(d, "true") || !strcmp(d, "1")) s->directed = 1;
            else if (!strcmp(d, "false") || !strcmp(d, "0")) s->directed = 0;
            else {
                gp_err_set(err, GP_EINVAL, "PostgreSQL spec: directed=%s: use true or false", d);
                free(d);
                goto fail;
            }
            free(d);
        } else if (kl == 5 && strncmp(p, "scale", 5) == 0) {
            char *d = url_decode(v, vl, err), *end = NULL;
            if (!d) goto fail;
            errno = 0;
            s->scale = strtod(d, &end);
            int bad = errno || end == d || *end || !(s->scale > 0) || !isfinite(s->scale);
            free(d);
            if (bad) {
                gp_err_set(err, GP_EINVAL, "PostgreSQL spec: scale must be a positive number");
                goto fail;
            }
        } else if (n) { /* a libpq parameter: kept verbatim */
            s->conninfo[o++] = first ? '?' : '&';
            memcpy(s->conninfo + o, p, n);
            o += n;
            first = 0;
        }
        p += n;
        if (*p == '&') p++;
    }
    s->conninfo[o] = 0;
    if (s->table && s->edges_sql) {
        gp_err_set(err, GP_EINVAL, "PostgreSQL spec: give table= or edges_sql=, not both");
        goto fail;
    }
    if ((s->table && !*s->table) || (s->edges_sql && !*s->edges_sql)) {
        gp_err_set(err, GP_EINVAL, "PostgreSQL spec: table= / edges_sql= is empty");
        goto fail;
    }
    return GP_OK;
fail:
    gp_pg_spec_free(s);
    return err ? err->code : GP_EINVAL;
}

/* ---- connection helpers ---------------------------------------------------------------------- */

/* Copies a libpq message without its trailing newline(s). */
static const char *pgmsg(const char *m, char *buf, size_t cap) {
    snprintf(buf, cap, "%s", m ? m : "unknown error");
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
    return buf;
}

/* Server notices ("relation already exists, skipping") go to the debug log, not stderr. */
static void on_notice(void *arg, const char *msg) {
    (void)arg;
    char m[400];
    GP_LOG(GP_LOG_DEBUG, "PostgreSQL notice: %s", pgmsg(msg, m, sizeof m));
}

static PGconn *connect_db(const gp_pg_spec *s, gp_err *err) {
    PGconn *c = PQconnectdb(s->conninfo);
    if (!c) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    PQsetNoticeProcessor(c, on_notice, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        char m[400];
        gp_err_set(err, GP_EDB, "PostgreSQL %s: %s", s->shown, pgmsg(PQerrorMessage(c), m, sizeof m));
        PQfinish(c);
        return NULL;
    }
    return c;
}

/* Runs a statement expecting status want; fills err with the server's message otherwise. */
static int run(PGconn *c, const char *sql, int np, const char *const *params, ExecStatusType want,
               PGresult **res, const char *what, gp_err *err) {
    PGresult *r = np ? PQexecParams(c, sql, np, NULL, params, NULL, NULL, 0) : PQexec(c, sql);
    if (PQresultStatus(r) != want) {
        char m[400];
        gp_err_set(err, GP_EDB, "PostgreSQL: %s: %s", what, pgmsg(PQerrorMessage(c), m, sizeof m));
        PQclear(r);
        return GP_EDB;
    }
    if (res) *res = r;
    else PQclear(r);
    return GP_OK;
}

/* ---- migrations --------------------------------------------------------------------------------- */

static int migrate_conn(PGconn *c, gp_err *err) {
    int latest = gp_migration_latest("postgres");
    for (const gp_migration *m = gp_migrations;; m++) {
        /* one pass per migration (and a final check), each in its own transaction under a
         * transaction-scoped advisory lock so concurrent gpath processes apply it once */
        int rc;
        if ((rc = run(c, "BEGIN", 0, NULL, PGRES_COMMAND_OK, NULL, "BEGIN", err))) return rc;
        PGresult *r = NULL;
        if ((rc = run(c, "SELECT pg_advisory_xact_lock(7320190455172716544)", 0, NULL,
                      PGRES_TUPLES_OK, NULL, "migration lock", err)) ||
            (rc = run(c,
                      "CREATE SCHEMA IF NOT EXISTS gpath; CREATE TABLE IF NOT EXISTS "
                      "gpath.schema_version (version integer PRIMARY KEY, name text NOT NULL, "
                      "applied_at timestamptz NOT NULL DEFAULT now())",
                      0, NULL, PGRES_COMMAND_OK, NULL, "creating gpath.schema_version", err)) ||
            (rc = run(c, "SELECT COALESCE(MAX(version), 0) FROM gpath.schema_version", 0, NULL,
                      PGRES_TUPLES_OK, &r, "reading gpath.schema_version", err)))
            goto rollback;
        int have = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
        if (have > latest) {
            rc = gp_err_set(err, GP_EDB,
                            "PostgreSQL schema gpath is at version %d, newer than this gpath knows "
                            "(%d): use a newer gpath",
                            have, latest);
            goto rollback;
        }
        while (m->db && (strcmp(m->db, "postgres") != 0 || m->version <= have)) m++;
        if (!m->db) return run(c, "COMMIT", 0, NULL, PGRES_COMMAND_OK, NULL, "COMMIT", err);
        char what[96], ver[16];
        snprintf(what, sizeof what, "migration %s", m->name);
        snprintf(ver, sizeof ver, "%d", m->version);
        const char *params[2] = {ver, m->name};
        if ((rc = run(c, m->sql, 0, NULL, PGRES_COMMAND_OK, NULL, what, err)) ||
            (rc = run(c, "INSERT INTO gpath.schema_version (version, name) VALUES ($1::int, $2)",
                      2, params, PGRES_COMMAND_OK, NULL, what, err)) ||
            (rc = run(c, "COMMIT", 0, NULL, PGRES_COMMAND_OK, NULL, what, err)))
            goto rollback;
        GP_LOG(GP_LOG_INFO, "PostgreSQL: applied migration %s", m->name);
        continue;
    rollback:
        PQclear(PQexec(c, "ROLLBACK"));
        return rc;
    }
}

int gp_pg_migrate(const char *uri, gp_err *err) {
    gp_pg_spec s;
    int rc = gp_pg_spec_parse(uri, &s, err);
    if (rc) return rc;
    PGconn *c = connect_db(&s, err);
    rc = c ? migrate_conn(c, err) : (err ? err->code : GP_EDB);
    PQfinish(c);
    gp_pg_spec_free(&s);
    return rc;
}

/* ---- loading ------------------------------------------------------------------------------------ */

/* Builds `"schema"."table"` from NAME (split at dots; each part quoted literally). */
static char *quote_table(PGconn *c, const char *name, gp_err *err) {
    size_t cap = strlen(name) * 2 + 16, o = 0;
    char *out = malloc(cap);
    if (!out) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    const char *p = name;
    for (;;) {
        size_t n = strcspn(p, ".");
        char *q = n ? PQescapeIdentifier(c, p, n) : NULL;
        if (!q) {
            free(out);
            gp_err_set(err, GP_EINVAL, "PostgreSQL spec: bad table name \"%s\"", name);
            return NULL;
        }
        size_t ql = strlen(q);
        if (o + ql + 2 > cap) {
            cap = (o + ql + 2) * 2;
            char *t = realloc(out, cap);
            if (!t) {
                PQfreemem(q);
                free(out);
                gp_err_set(err, GP_ENOMEM, "out of memory");
                return NULL;
            }
            out = t;
        }
        memcpy(out + o, q, ql);
        o += ql;
        PQfreemem(q);
        if (!p[n]) break;
        out[o++] = '.';
        p += n + 1;
    }
    out[o] = 0;
    return out;
}

/* The SELECT for a table: pgRouting's columns that exist in it. */
static char *table_query(PGconn *c, const char *name, gp_err *err) {
    char *qt = quote_table(c, name, err);
    if (!qt) return NULL;
    const char *params[1] = {qt};
    PGresult *r = NULL;
    char what[300];
    snprintf(what, sizeof what, "table %s", name);
    if (run(c,
            "SELECT attname::text FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 "
            "AND NOT attisdropped",
            1, params, PGRES_TUPLES_OK, &r, what, err)) {
        free(qt);
        return NULL;
    }
    int have[9] = {0};
    static const char *const cols[9] = {"id", "source", "target", "cost", "reverse_cost",
                                        "x1", "y1", "x2", "y2"};
    for (int i = 0; i < PQntuples(r); i++)
        for (int k = 0; k < 9; k++)
            if (strcmp(PQgetvalue(r, i, 0), cols[k]) == 0) have[k] = 1;
    PQclear(r);
    for (int k = 0; k < 4; k++)
        if (!have[k]) {
            gp_err_set(err, GP_EPARSE,
                       "PostgreSQL table %s has no column %s (pgRouting's edge columns: id, "
                       "source, target, cost[, reverse_cost][, x1, y1, x2, y2])",
                       name, cols[k]);
            free(qt);
            return NULL;
        }
    int xy = have[5] && have[6] && have[7] && have[8];
    size_t cap = strlen(qt) + 128;
    char *sql = malloc(cap);
    if (sql)
        snprintf(sql, cap, "SELECT id, source, target, cost%s%s FROM %s",
                 have[4] ? ", reverse_cost" : "", xy ? ", x1, y1, x2, y2" : "", qt);
    else
        gp_err_set(err, GP_ENOMEM, "out of memory");
    free(qt);
    return sql;
}

typedef struct colmap {
    int id, source, target, cost, rcost, x1, y1, x2, y2;
} colmap;

static int parse_i64(const PGresult *r, int row, int col, const char *name, uint64_t rowno,
                     int64_t *out, gp_err *err) {
    if (PQgetisnull(r, row, col))
        return gp_err_set(err, GP_EPARSE, "PostgreSQL edges: row %llu: %s is NULL",
                          (unsigned long long)rowno, name);
    const char *v = PQgetvalue(r, row, col);
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end)
        return gp_err_set(err, GP_EPARSE,
                          "PostgreSQL edges: row %llu: %s = '%s' is not an integer (pgRouting "
                          "takes ANY-INTEGER)",
                          (unsigned long long)rowno, name, v);
    *out = x;
    return GP_OK;
}

static int parse_f64(const PGresult *r, int row, int col, const char *name, uint64_t rowno,
                     int allow_null, double *out, int *isnull, gp_err *err) {
    *isnull = PQgetisnull(r, row, col);
    if (*isnull) {
        if (allow_null) return GP_OK;
        return gp_err_set(err, GP_EPARSE, "PostgreSQL edges: row %llu: %s is NULL",
                          (unsigned long long)rowno, name);
    }
    const char *v = PQgetvalue(r, row, col);
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || isnan(x))
        return gp_err_set(err, GP_EPARSE, "PostgreSQL edges: row %llu: %s = '%s' is not a number",
                          (unsigned long long)rowno, name, v);
    *out = x;
    return GP_OK;
}

static int find_cols(const PGresult *r, colmap *m, gp_err *err) {
    m->id = PQfnumber(r, "id");
    m->source = PQfnumber(r, "source");
    m->target = PQfnumber(r, "target");
    m->cost = PQfnumber(r, "cost");
    m->rcost = PQfnumber(r, "reverse_cost");
    m->x1 = PQfnumber(r, "x1");
    m->y1 = PQfnumber(r, "y1");
    m->x2 = PQfnumber(r, "x2");
    m->y2 = PQfnumber(r, "y2");
    if (m->id < 0 || m->source < 0 || m->target < 0 || m->cost < 0)
        return gp_err_set(err, GP_EPARSE,
                          "PostgreSQL edges query must return columns id, source, target, cost "
                          "(optionally reverse_cost, x1, y1, x2, y2)");
    if (m->x1 < 0 || m->y1 < 0 || m->x2 < 0 || m->y2 < 0) m->x1 = -1;
    return GP_OK;
}

/* Adds the arcs (and coordinates) of one batch of rows. */
static int add_rows(gp_builder *b, const PGresult *r, const colmap *m, int directed,
                    uint64_t *rowno, gp_err *err) {
    int n = PQntuples(r);
    for (int i = 0; i < n; i++) {
        uint64_t rn = ++*rowno;
        int64_t id, s, t;
        double cost, rcost = -1, x1 = 0, y1 = 0, x2 = 0, y2 = 0;
        int null, rc, nx = 1;
        if ((rc = parse_i64(r, i, m->id, "id", rn, &id, err)) ||
            (rc = parse_i64(r, i, m->source, "source", rn, &s, err)) ||
            (rc = parse_i64(r, i, m->target, "target", rn, &t, err)) ||
            (rc = parse_f64(r, i, m->cost, "cost", rn, 0, &cost, &null, err)))
            return rc;
        if (m->rcost >= 0 &&
            (rc = parse_f64(r, i, m->rcost, "reverse_cost", rn, 0, &rcost, &null, err)))
            return rc;
        if (m->x1 >= 0) {
            int n1, n2, n3, n4;
            if ((rc = parse_f64(r, i, m->x1, "x1", rn, 1, &x1, &n1, err)) ||
                (rc = parse_f64(r, i, m->y1, "y1", rn, 1, &y1, &n2, err)) ||
                (rc = parse_f64(r, i, m->x2, "x2", rn, 1, &x2, &n3, err)) ||
                (rc = parse_f64(r, i, m->y2, "y2", rn, 1, &y2, &n4, err)))
                return rc;
            nx = n1 || n2 || n3 || n4;
        }
        int any = 0;
        uint32_t w;
        if (cost >= 0) {
            if ((rc = gp_builder_cost(b, cost, &w, err)) ||
                (rc = gp_builder_add_arc(b, s, t, w, err)) ||
                (!directed && (rc = gp_builder_add_arc(b, t, s, w, err))))
                goto row_error;
            any = 1;
        }
        if (rcost >= 0) {
            if ((rc = gp_builder_cost(b, rcost, &w, err)) ||
                (rc = gp_builder_add_arc(b, t, s, w, err)) ||
                (!directed && (rc = gp_builder_add_arc(b, s, t, w, err))))
                goto row_error;
            any = 1;
        }
        /* pgRouting builds its graph from usable edges only: an edge with no direction adds no
         * vertex, and neither do its coordinates */
        if (any && !nx &&
            ((rc = gp_builder_add_node(b, s, 1, x1, y1, NULL, err)) ||
             (rc = gp_builder_add_node(b, t, 1, x2, y2, NULL, err))))
            goto row_error;
        continue;
    row_error:
        if (err) {
            char tmp[sizeof err->msg];
            memcpy(tmp, err->msg, sizeof tmp);
            gp_err_set(err, rc, "PostgreSQL edges: row %llu (id %lld): %s", (unsigned long long)rn,
                       (long long)id, tmp);
        }
        return rc;
    }
    return GP_OK;
}

/* Strips trailing blanks and semicolons so the query can sit inside DECLARE ... CURSOR FOR. */
static char *trim_query(const char *q, gp_err *err) {
    size_t n = strlen(q);
    while (n && (isspace((unsigned char)q[n - 1]) || q[n - 1] == ';')) n--;
    char *out = malloc(n + 1);
    if (!out) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(out, q, n);
    out[n] = 0;
    return out;
}

gp_graph *gp_load_postgres(const char *uri, const gp_load_opts *o, gp_err *err) {
    static const gp_load_opts defaults = {0};
    if (!o) o = &defaults;
    gp_pg_spec s;
    if (gp_pg_spec_parse(uri, &s, err)) return NULL;
    gp_graph *g = NULL;
    gp_builder *b = NULL;
    char *query = NULL, *decl = NULL;
    PGresult *r = NULL;
    int in_tx = 0;
    double t0 = gp_now();
    PGconn *c = connect_db(&s, err);
    if (!c) goto done;
    if (s.edges_sql) {
        query = trim_query(s.edges_sql, err);
    } else if (s.table) {
        query = table_query(c, s.table, err);
    } else {
        if (migrate_conn(c, err)) goto done;
        query = table_query(c, "gpath.edges", err);
    }
    if (!query) goto done;
    int directed = s.directed >= 0 ? s.directed : !o->undirected;
    double scale = o->scale > 0 ? o->scale : s.scale > 0 ? s.scale : GP_SCALE_DEFAULT_FRACTIONAL;
    if (!(b = gp_builder_new(scale))) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        goto done;
    }
    size_t dl = strlen(query) + 64;
    if (!(decl = malloc(dl))) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        goto done;
    }
    snprintf(decl, dl, "DECLARE gpath_edges NO SCROLL CURSOR FOR %s", query);
    if (run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, PGRES_COMMAND_OK, NULL,
            "BEGIN", err))
        goto done;
    in_tx = 1;
    if (run(c, decl, 0, NULL, PGRES_COMMAND_OK, NULL, s.edges_sql ? "edges_sql" : "edges query",
            err))
        goto done;
    colmap m;
    uint64_t rows = 0, next_report = 1000000;
    for (int first = 1;; first = 0) {
        char fetch[64];
        snprintf(fetch, sizeof fetch, "FETCH FORWARD %d FROM gpath_edges", FETCH_ROWS);
        if (run(c, fetch, 0, NULL, PGRES_TUPLES_OK, &r, "reading edges", err)) goto done;
        if (first && find_cols(r, &m, err)) goto done;
        if (PQntuples(r) == 0) break;
        if (add_rows(b, r, &m, directed, &rows, err)) goto done;
        PQclear(r);
        r = NULL;
        if (o->progress && rows >= next_report) {
            GP_LOG(GP_LOG_INFO, "PostgreSQL %s: %llu edges read (%.1f s)", s.shown,
                   (unsigned long long)rows, gp_now() - t0);
            next_report += 1000000;
        }
    }
    run(c, "COMMIT", 0, NULL, PGRES_COMMAND_OK, NULL, "COMMIT", NULL);
    in_tx = 0;
    if (gp_builder_nodes(b) == 0) {
        gp_err_set(err, GP_EPARSE, "PostgreSQL %s: the edges have no usable direction (%llu rows)",
                   s.shown, (unsigned long long)rows);
        goto done;
    }
    g = gp_builder_finish(b, s.shown, "postgresql", directed, err);
    b = NULL;
    if (g && o->progress)
        GP_LOG(GP_LOG_INFO, "PostgreSQL %s: %llu edges -> %u nodes, %u arcs in %.1f s", s.shown,
               (unsigned long long)rows, g->n, g->m, gp_now() - t0);
done:
    PQclear(r);
    if (in_tx && c) PQclear(PQexec(c, "ROLLBACK"));
    PQfinish(c);
    gp_builder_free(b);
    free(query);
    free(decl);
    gp_pg_spec_free(&s);
    return g;
}
