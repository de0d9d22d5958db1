/* pg.c - the PostgreSQL graph source (contract in pg.h): spec parsing, gpath's PostgreSQL
 * migrations, and the loader that reads pgRouting edge rows through a server-side cursor (text
 * format, FETCH in batches, so a table of millions of edges never sits in one result) into a
 * gp_builder.
 *
 * Only the user's own edges_sql is sent as given (it is their query, as pgRouting takes it); a table
 * name is quoted with PQescapeIdentifier and everything else is a parameterised statement.
 *
 * Bounded: every connection gets connect_timeout, TCP keepalives and a statement_timeout (derived
 * from the load's time limit; values the spec gives win), the FETCH loop checks the load's
 * deadline and max_bytes, and with an allow-list (gp_load_opts.allow_pg_hosts) a spec may name only
 * those hosts. A server that cannot be reached is GP_EUNAVAILABLE (an outage, not bad content).
 * The rows are read whole before any arc is made, so the scale is picked for every cost at once
 * (gp_scale_fit), and osm2pgrouting's `ways` table is read as it is (gid, cost_s, reverse_cost_s).
 */
#include "storage/pg.h"

#include "storage/migrate.h"

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
    gp_spec_redact(uri, s->shown, sizeof s->shown);
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
        } else if (kl == 4 && strncmp(p, "srid", 4) == 0) {
            char *d = url_decode(v, vl, err), *end = NULL;
            if (!d) goto fail;
            errno = 0;
            long sr = strtol(d, &end, 10);
            int bad = errno || end == d || *end || sr < 0 || sr > 999999;
            free(d);
            if (bad) {
                gp_err_set(err, GP_EINVAL,
                           "PostgreSQL spec: srid must be an EPSG code such as 3857 (the SRID of "
                           "the table's x1, y1, x2, y2), or 0 for planar x/y without SRID");
                goto fail;
            }
            s->srid = (int)sr;
            s->planar = sr == 0;
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
    if (s->srid && s->edges_sql) { /* srid=0 (planar) needs no transform: edges_sql takes it */
        gp_err_set(err, GP_EINVAL,
                   "PostgreSQL spec: srid= applies to table=; in edges_sql= transform the "
                   "coordinates with PostGIS's ST_Transform(..., 4326)");
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

/* The spec's own connect_timeout in seconds, 0 when it names none (or 0: libpq's "wait forever"). */
static double spec_connect_timeout(const char *conninfo) {
    PQconninfoOption *o = PQconninfoParse(conninfo, NULL);
    double v = 0;
    for (PQconninfoOption *p = o; p && p->keyword; p++)
        if (strcmp(p->keyword, "connect_timeout") == 0 && p->val) v = strtod(p->val, NULL);
    PQconninfoFree(o);
    return v > 0 ? v : 0;
}

/* Connects with bounded waits: our keepalives and statement_timeout come first, so the spec's own
 * values (expanded from dbname) override them; connect_timeout comes after it: a spec may lower
 * it, never disable (0) or raise it past min(10 s, the load's time left) - connect_timeout=0 let a
 * token holder hold a load slot for load_timeout_s against a server that never answers.
 * timeout_s <= 0: 10 s to connect, no statement timeout. */
static PGconn *connect_db(const gp_pg_spec *s, double timeout_s, gp_err *err) {
    char ct[16], opts[64];
    double cts = timeout_s > 0 && timeout_s < 10 ? timeout_s : 10;
    double own = spec_connect_timeout(s->conninfo);
    if (own > 0 && own < cts) cts = own;
    snprintf(ct, sizeof ct, "%d", cts < 2 ? 2 : (int)cts);
    snprintf(opts, sizeof opts, "-c statement_timeout=%lld",
             timeout_s > 0 ? (long long)(timeout_s * 1000) : 0LL);
    const char *const keys[] = {
        "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
        "options",    "dbname",          "connect_timeout",     NULL};
    const char *const vals[] = {"1", "10", "5", "3", opts, s->conninfo, ct, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (!c) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    PQsetNoticeProcessor(c, on_notice, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        char m[400];
        pgmsg(PQerrorMessage(c), m, sizeof m);
        /* refused, timed out, no route: an outage (503); a rejected login or database: an error */
        int outage = !strstr(m, "authentication") && !strstr(m, "does not exist") &&
                     !strstr(m, "password") && !strstr(m, "no pg_hba.conf entry");
        gp_err_set(err, outage ? GP_EUNAVAILABLE : GP_EDB, "PostgreSQL %s: %s%s", s->shown, m,
                   outage ? " (the database is unreachable)" : "");
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
        int code = PQstatus(c) == CONNECTION_BAD ? GP_EUNAVAILABLE : GP_EDB; /* lost the server */
        gp_err_set(err, code, "PostgreSQL: %s: %s", what, pgmsg(PQerrorMessage(c), m, sizeof m));
        PQclear(r);
        return code;
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
            (rc = run(c, "INSERT INTO gpath.schema_version (version, name) VALUES ($1::int, $2)", 2,
                      params, PGRES_COMMAND_OK, NULL, what, err)) ||
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
    PGconn *c = connect_db(&s, 0, err);
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

/* The SELECT for a table: pgRouting's columns that exist in it. osm2pgrouting's `ways` (no id, but
 * gid and cost_s: travel time in seconds; its `cost` is a length in degrees) is read as
 * gid AS id, cost_s AS cost, reverse_cost_s AS reverse_cost. Coordinates come out as lon/lat:
 * with PostGIS, a geometry column in another SRID gives its end points through ST_Transform, and
 * srid (the spec's, 0: none) transforms plain x1..y2; *plain is set when x1..y2 are read as they
 * are (the loader then refuses values that cannot be lon/lat). planar (srid=0): the geometry's end
 * points or x1..y2 as they are, nothing transformed; a geometry column with SRID 0 and neither
 * srid= option is refused, the message naming both. */
static char *table_query(PGconn *c, const char *name, int srid, int planar, int *plain,
                         gp_err *err) {
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
    enum { ID, SRC, TGT, COST, RCOST, X1, Y1, X2, Y2, GID, COST_S, RCOST_S, NC };
    int have[NC] = {0};
    static const char *const cols[NC] = {"id",           "source", "target", "cost",
                                         "reverse_cost", "x1",     "y1",     "x2",
                                         "y2",           "gid",    "cost_s", "reverse_cost_s"};
    for (int i = 0; i < PQntuples(r); i++)
        for (int k = 0; k < NC; k++)
            if (strcmp(PQgetvalue(r, i, 0), cols[k]) == 0) have[k] = 1;
    PQclear(r);
    int osm = !have[ID] && have[GID] && have[COST_S];
    const char *id = osm ? "gid AS id" : "id";
    const char *cost = osm ? "cost_s AS cost" : "cost";
    const char *rcost = osm ? (have[RCOST_S] ? ", reverse_cost_s AS reverse_cost" : "")
                            : (have[RCOST] ? ", reverse_cost" : "");
    int need[4] = {osm || have[ID], have[SRC], have[TGT], osm || have[COST]};
    for (int k = 0; k < 4; k++)
        if (!need[k]) {
            gp_err_set(err, GP_EPARSE,
                       "PostgreSQL table %s has no column %s (pgRouting's edge columns: id, "
                       "source, target, cost[, reverse_cost][, x1, y1, x2, y2]; or osm2pgrouting's "
                       "ways: gid, source, target, cost_s[, reverse_cost_s])",
                       name, cols[k]);
            free(qt);
            return NULL;
        }
    if (osm) GP_LOG(GP_LOG_INFO, "PostgreSQL table %s: osm2pgrouting layout (gid, cost_s)", name);
    int xy = have[X1] && have[Y1] && have[X2] && have[Y2];
    char coords[1200] = "", gcol[130] = "";
    int postgis = 0, gsrid = 0;
    if (run(c, "SELECT 1 FROM pg_extension WHERE extname = 'postgis'", 0, NULL, PGRES_TUPLES_OK, &r,
            "PostGIS check", err)) {
        free(qt);
        return NULL;
    }
    postgis = PQntuples(r) > 0;
    PQclear(r);
    if (postgis) {
        /* the first geometry column (quoted) and its SRID */
        if (run(c,
                "SELECT quote_ident(f_geometry_column::text), srid FROM geometry_columns WHERE "
                "format('%I.%I', f_table_schema, f_table_name)::regclass = $1::regclass "
                "ORDER BY f_geometry_column LIMIT 1",
                1, params, PGRES_TUPLES_OK, &r, what, err)) {
            free(qt);
            return NULL;
        }
        if (PQntuples(r) > 0 && PQgetlength(r, 0, 0) < (int)sizeof gcol) {
            snprintf(gcol, sizeof gcol, "%s", PQgetvalue(r, 0, 0));
            gsrid = (int)strtol(PQgetvalue(r, 0, 1), NULL, 10);
        }
        PQclear(r);
    }
    *plain = 0;
    if (postgis && *gcol && planar) {
        /* planar: the geometry's end points in its own units */
        const char *pt[2] = {"ST_StartPoint", "ST_EndPoint"};
        size_t o = 0;
        for (int k = 0; k < 4; k++)
            o += (size_t)snprintf(coords + o, sizeof coords - o,
                                  ", ST_%s(%s(ST_LineMerge(%s))) AS %c%d", k % 2 ? "Y" : "X",
                                  pt[k / 2], gcol, k % 2 ? 'y' : 'x', k / 2 + 1);
        GP_LOG(GP_LOG_INFO, "PostgreSQL table %s: planar x/y from %s (srid=0)", name, gcol);
    } else if (postgis && *gcol && gsrid == 0 && srid == 0) {
        gp_err_set(err, GP_EINVAL,
                   "PostgreSQL table %s: geometry column %s has no SRID (0), so its x/y may not "
                   "be lon/lat: give the spec option srid=0 for planar x/y (Euclidean lengths in "
                   "the table's units, no lon/lat) or srid=N for its projection (e.g. srid=3857)",
                   name, gcol);
        free(qt);
        return NULL;
    } else if (postgis && *gcol && gsrid != 4326 && (gsrid > 0 || srid > 0)) {
        /* a projected geometry (or one without SRID, given by srid=): its end points */
        int sr = gsrid > 0 ? gsrid : srid;
        const char *pt[2] = {"ST_StartPoint", "ST_EndPoint"};
        size_t o = 0;
        for (int k = 0; k < 4; k++)
            o += (size_t)snprintf(coords + o, sizeof coords - o,
                                  ", ST_%s(ST_Transform(ST_SetSRID(%s(ST_LineMerge(%s)), %d), "
                                  "4326)) AS %c%d",
                                  k % 2 ? "Y" : "X", pt[k / 2], gcol, sr, k % 2 ? 'y' : 'x',
                                  k / 2 + 1);
        GP_LOG(GP_LOG_INFO, "PostgreSQL table %s: coordinates from %s in EPSG:%d, transformed",
               name, gcol, sr);
    } else if (xy && srid > 0 && postgis) {
        size_t o = 0;
        for (int k = 0; k < 4; k++)
            o += (size_t)snprintf(coords + o, sizeof coords - o,
                                  ", ST_%s(ST_Transform(ST_SetSRID(ST_MakePoint(x%d, y%d), %d), "
                                  "4326)) AS %c%d",
                                  k % 2 ? "Y" : "X", k / 2 + 1, k / 2 + 1, srid, k % 2 ? 'y' : 'x',
                                  k / 2 + 1);
    } else if (xy) {
        snprintf(coords, sizeof coords, ", x1, y1, x2, y2");
        *plain = planar ? 0 : srid > 0 ? 2 : 1;
    } else if (srid > 0 || planar) {
        gp_err_set(err, GP_EINVAL,
                   "PostgreSQL spec: srid=%d, but table %s has neither x1, y1, x2, y2 nor a "
                   "geometry column (nothing to read as coordinates)",
                   srid, name);
        free(qt);
        return NULL;
    }
    size_t cap = strlen(qt) + strlen(coords) + 160;
    char *sql = malloc(cap);
    if (sql)
        snprintf(sql, cap, "SELECT %s, source, target, %s%s%s FROM %s", id, cost, rcost, coords,
                 qt);
    else gp_err_set(err, GP_ENOMEM, "out of memory");
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
                          "PostgreSQL edges: row %llu: %s is not an integer (pgRouting takes "
                          "ANY-INTEGER)",
                          (unsigned long long)rowno, name);
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
    if (end == v || *end || !isfinite(x))
        return gp_err_set(err, GP_EPARSE, "PostgreSQL edges: row %llu: %s is not a finite number",
                          (unsigned long long)rowno, name);
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

/* One edge row, kept until the scale is known. */
typedef struct pg_edge {
    int64_t id, s, t;
    double cost, rcost; /* < 0: no arc */
    double x1, y1, x2, y2;
    int has_xy;
    uint64_t row;
} pg_edge;

typedef struct edge_buf {
    pg_edge *e;
    uint64_t n, cap;
    uint64_t bytes; /* text bytes of the values read (against max_bytes) */
} edge_buf;

/* Parses one batch of rows into the buffer, feeding the costs to the scale picker. */
static int read_rows(edge_buf *eb, const PGresult *r, const colmap *m, gp_scale_fit *fit,
                     const gp_load_opts *o, int srid, gp_err *err) {
    int n = PQntuples(r), nf = PQnfields(r);
    if (eb->n + (uint64_t)n > eb->cap) {
        uint64_t nc = eb->cap ? eb->cap : 4096;
        while (nc < eb->n + (uint64_t)n) nc *= 2;
        pg_edge *x = realloc(eb->e, nc * sizeof *x);
        if (!x) return gp_err_set(err, GP_ENOMEM, "out of memory reading edges");
        eb->e = x;
        eb->cap = nc;
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nf; k++) eb->bytes += (uint64_t)PQgetlength(r, i, k);
        if (o->max_bytes && eb->bytes > o->max_bytes)
            return gp_err_set(err, GP_ETOOBIG,
                              "PostgreSQL edges: over max_graph_bytes = %llu bytes",
                              (unsigned long long)o->max_bytes);
        pg_edge *e = &eb->e[eb->n];
        uint64_t rn = eb->n + 1;
        int null, rc;
        e->rcost = -1;
        e->row = rn;
        if ((rc = parse_i64(r, i, m->id, "id", rn, &e->id, err)) ||
            (rc = parse_i64(r, i, m->source, "source", rn, &e->s, err)) ||
            (rc = parse_i64(r, i, m->target, "target", rn, &e->t, err)) ||
            (rc = parse_f64(r, i, m->cost, "cost", rn, 0, &e->cost, &null, err)))
            return rc;
        if (m->rcost >= 0 &&
            (rc = parse_f64(r, i, m->rcost, "reverse_cost", rn, 0, &e->rcost, &null, err)))
            return rc;
        e->has_xy = 0;
        if (m->x1 >= 0) {
            int n1, n2, n3, n4;
            if ((rc = parse_f64(r, i, m->x1, "x1", rn, 1, &e->x1, &n1, err)) ||
                (rc = parse_f64(r, i, m->y1, "y1", rn, 1, &e->y1, &n2, err)) ||
                (rc = parse_f64(r, i, m->x2, "x2", rn, 1, &e->x2, &n3, err)) ||
                (rc = parse_f64(r, i, m->y2, "y2", rn, 1, &e->y2, &n4, err)))
                return rc;
            e->has_xy = !(n1 || n2 || n3 || n4);
            if (srid >= 0 && e->has_xy &&
                (fabs(e->x1) > 180 || fabs(e->y1) > 90 || fabs(e->x2) > 180 || fabs(e->y2) > 90)) {
                char at[160];
                snprintf(at, sizeof at,
                         "PostgreSQL edges: row %llu: x1, y1, x2, y2 = %g, %g, %g, %g",
                         (unsigned long long)rn, e->x1, e->y1, e->x2, e->y2);
                if (srid > 0)
                    return gp_err_set(err, GP_EPARSE,
                                      "%s are not lon/lat, and srid=%d needs PostGIS to transform "
                                      "them (CREATE EXTENSION postgis in the database)",
                                      at, srid);
                return gp_err_set(err, GP_EPARSE,
                                  "%s are not lon/lat: give the table's projection with the spec "
                                  "option srid=N (e.g. srid=3857; transformed with PostGIS)",
                                  at);
            }
        }
        gp_scale_fit_add(fit, e->cost);
        gp_scale_fit_add(fit, e->rcost);
        eb->n++;
    }
    return GP_OK;
}

/* Adds the buffered edges' arcs (and coordinates) under the builder's scale. planar (srid=0): no
 * lon/lat; each arc carries the Euclidean length of its x1, y1 -> x2, y2 (the table's units) as its
 * road length (length_m), 0 where the row has no coordinates. */
static int add_arc(gp_builder *b, const pg_edge *e, int64_t u, int64_t v, uint32_t w, int planar,
                   gp_err *err) {
    if (!planar) return gp_builder_add_arc(b, u, v, w, err);
    gp_road_attr ra = {0};
    ra.len_m = e->has_xy ? hypot(e->x2 - e->x1, e->y2 - e->y1) : 0;
    return gp_builder_add_road_arc(b, u, v, w, &ra, err);
}

static int add_edges(gp_builder *b, const edge_buf *eb, int directed, int planar, gp_err *err) {
    for (uint64_t i = 0; i < eb->n; i++) {
        const pg_edge *e = &eb->e[i];
        int rc = GP_OK, any = 0;
        uint32_t w;
        if (e->cost >= 0) {
            if ((rc = gp_builder_cost(b, e->cost, &w, err)) ||
                (rc = add_arc(b, e, e->s, e->t, w, planar, err)) ||
                (!directed && (rc = add_arc(b, e, e->t, e->s, w, planar, err))))
                goto row_error;
            any = 1;
        }
        if (e->rcost >= 0) {
            if ((rc = gp_builder_cost(b, e->rcost, &w, err)) ||
                (rc = add_arc(b, e, e->t, e->s, w, planar, err)) ||
                (!directed && (rc = add_arc(b, e, e->s, e->t, w, planar, err))))
                goto row_error;
            any = 1;
        }
        /* pgRouting builds its graph from usable edges only: an edge with no direction adds no
         * vertex, and neither do its coordinates */
        if (any && e->has_xy && !planar &&
            ((rc = gp_builder_add_node(b, e->s, 1, e->x1, e->y1, NULL, err)) ||
             (rc = gp_builder_add_node(b, e->t, 1, e->x2, e->y2, NULL, err))))
            goto row_error;
        continue;
    row_error:
        if (err) {
            char tmp[sizeof err->msg];
            memcpy(tmp, err->msg, sizeof tmp);
            gp_err_set(err, rc, "PostgreSQL edges: row %llu (id %lld): %s",
                       (unsigned long long)e->row, (long long)e->id, tmp);
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

/* 1 when host (with port) matches an entry of the ','-separated list: "HOST" or "HOST:PORT". */
static int host_allowed(const char *list, const char *host, const char *port) {
    char hp[600];
    snprintf(hp, sizeof hp, "%s:%s", host, port);
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        while (n && (*p == ' ')) p++, n--;
        size_t m = n;
        while (m && p[m - 1] == ' ') m--;
        if (m && ((strlen(host) == m && strncmp(p, host, m) == 0) ||
                  (strlen(hp) == m && strncmp(p, hp, m) == 0)))
            return 1;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

/* Calls fn(ctx, host, port) for every host and hostaddr of the spec (libpq pairs the host and
 * port lists; one port may serve all; no host: localhost, libpq's local default). Stops at the
 * first non-zero return. service= is refused (it would name hosts we cannot see). */
static int each_host(const char *uri,
                     int (*fn)(void *ctx, const char *host, const char *port, const char *shown,
                               gp_err *err),
                     void *ctx, gp_err *err) {
    gp_pg_spec s;
    int rc = gp_pg_spec_parse(uri, &s, err);
    if (rc) return rc;
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(s.conninfo, &perr);
    if (!opts) {
        char m[300];
        rc = gp_err_set(err, GP_EINVAL, "PostgreSQL spec %s: %s", s.shown,
                        pgmsg(perr ? perr : "cannot be parsed", m, sizeof m));
        PQfreemem(perr);
        gp_pg_spec_free(&s);
        return rc;
    }
    const char *hosts = "", *addrs = "", *ports = "";
    for (PQconninfoOption *k = opts; k->keyword && !rc; k++) {
        if (!k->val || !*k->val) continue;
        if (!strcmp(k->keyword, "host")) hosts = k->val;
        else if (!strcmp(k->keyword, "hostaddr")) addrs = k->val;
        else if (!strcmp(k->keyword, "port")) ports = k->val;
        else if (!strcmp(k->keyword, "service") || !strcmp(k->keyword, "servicefile"))
            rc = gp_err_set(err, GP_EFORBIDDEN,
                            "PostgreSQL spec %s: %s= is not accepted while load_pg_hosts applies "
                            "(name the host)",
                            s.shown, k->keyword);
    }
    for (int pass = 0; pass < 2 && !rc; pass++) {
        const char *list = pass ? addrs : hosts;
        if (pass && !*list) break;
        const char *h = *list ? list : "localhost";
        const char *pp = ports;
        for (;;) {
            size_t hn = strcspn(h, ","), pn = strcspn(pp, ",");
            char host[256], port[32];
            snprintf(host, sizeof host, "%.*s", (int)(hn < 255 ? hn : 255), h);
            snprintf(port, sizeof port, "%.*s", (int)(pn ? (pn < 31 ? pn : 31) : 4),
                     pn ? pp : "5432");
            if ((rc = fn(ctx, host, port, s.shown, err))) break;
            if (!h[hn]) break;
            h += hn + 1;
            if (pp[pn]) pp += pn + 1;
        }
    }
    PQconninfoFree(opts);
    gp_pg_spec_free(&s);
    return rc;
}

static int check_one(void *ctx, const char *host, const char *port, const char *shown,
                     gp_err *err) {
    if (host_allowed(ctx, host, port)) return GP_OK;
    return gp_err_set(err, GP_EFORBIDDEN, "PostgreSQL spec %s: host %s:%s is not in load_pg_hosts",
                      shown, host, port);
}

int gp_pg_check_hosts(const char *uri, const char *allow, gp_err *err) {
    return each_host(uri, check_one, (void *)allow, err);
}

typedef struct host_list {
    char *out;
    size_t cap;
} host_list;

static int list_one(void *ctx, const char *host, const char *port, const char *shown, gp_err *err) {
    (void)port, (void)shown, (void)err;
    host_list *l = ctx;
    if (host_allowed(l->out, host, "")) return GP_OK; /* already listed */
    size_t n = strlen(l->out);
    snprintf(l->out + n, l->cap - n, "%s%s", n ? "," : "", host);
    return GP_OK;
}

int gp_pg_spec_hosts(const char *uri, char *out, size_t cap) {
    host_list l = {out, cap};
    return each_host(uri, list_one, &l, NULL);
}

gp_graph *gp_load_postgres(const char *uri, const gp_load_opts *o, gp_err *err) {
    static const gp_load_opts defaults = {0};
    if (!o) o = &defaults;
    if (o->allow_pg_hosts && gp_pg_check_hosts(uri, o->allow_pg_hosts, err)) return NULL;
    gp_pg_spec s;
    if (gp_pg_spec_parse(uri, &s, err)) return NULL;
    gp_graph *g = NULL;
    gp_builder *b = NULL;
    char *query = NULL, *decl = NULL;
    PGresult *r = NULL;
    edge_buf eb = {0};
    int in_tx = 0;
    double t0 = gp_now();
    double left = o->deadline > 0 ? o->deadline - t0 : 0;
    PGconn *c = connect_db(&s, o->deadline > 0 ? (left > 1 ? left : 1) : 0, err);
    if (!c) goto done;
    int plain = 1;
    if (s.edges_sql) {
        query = trim_query(s.edges_sql, err);
    } else if (s.table) {
        query = table_query(c, s.table, s.srid, s.planar, &plain, err);
    } else {
        if (migrate_conn(c, err)) goto done;
        query = table_query(c, "gpath.edges", s.srid, s.planar, &plain, err);
    }
    if (!query) goto done;
    int directed = s.directed >= 0 ? s.directed : !o->undirected;
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
    gp_scale_fit fit;
    gp_scale_fit_init(&fit);
    uint64_t next_report = 1000000;
    for (int first = 1;; first = 0) {
        char fetch[64];
        snprintf(fetch, sizeof fetch, "FETCH FORWARD %d FROM gpath_edges", FETCH_ROWS);
        gp_err e2;
        if (gp_load_check_time(o, &e2)) {
            gp_err_set(err, e2.code, "PostgreSQL %s: %s", s.shown, e2.msg);
            goto done;
        }
        if (run(c, fetch, 0, NULL, PGRES_TUPLES_OK, &r, "reading edges", err)) goto done;
        if (first && find_cols(r, &m, err)) goto done;
        if (PQntuples(r) == 0) break;
        if (read_rows(&eb, r, &m, &fit, o, plain && !s.planar ? s.srid : -1, err)) goto done;
        if (o->max_arcs && eb.n > o->max_arcs) {
            gp_err_set(err, GP_ETOOBIG, "PostgreSQL %s: more than max_graph_arcs = %llu edges",
                       s.shown, (unsigned long long)o->max_arcs);
            goto done;
        }
        PQclear(r);
        r = NULL;
        if (o->progress && eb.n >= next_report) {
            GP_LOG(GP_LOG_INFO, "PostgreSQL %s: %llu edges read (%.1f s)", s.shown,
                   (unsigned long long)eb.n, gp_now() - t0);
            next_report += 1000000;
        }
    }
    run(c, "COMMIT", 0, NULL, PGRES_COMMAND_OK, NULL, "COMMIT", NULL);
    in_tx = 0;
    /* the scale: given (option, then the spec's scale=), else the one that fits every cost */
    double scale = o->scale > 0 ? o->scale : s.scale;
    gp_err e2;
    if (!(scale > 0) && gp_scale_fit_pick(&fit, &scale, &e2)) {
        gp_err_set(err, e2.code, "PostgreSQL %s: %s", s.shown, e2.msg);
        goto done;
    }
    if (!(b = gp_builder_new(scale))) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        goto done;
    }
    gp_builder_guard(b, o);
    if (add_edges(b, &eb, directed, s.planar, err)) goto done;
    if (gp_builder_nodes(b) == 0) {
        gp_err_set(err, GP_EPARSE, "PostgreSQL %s: the edges have no usable direction (%llu rows)",
                   s.shown, (unsigned long long)eb.n);
        goto done;
    }
    g = gp_builder_finish(b, s.shown, "postgresql", directed, err);
    b = NULL;
    if (g && o->progress)
        GP_LOG(GP_LOG_INFO, "PostgreSQL %s: %llu edges -> %u nodes, %u arcs in %.1f s (scale %g)",
               s.shown, (unsigned long long)eb.n, g->n, g->m, gp_now() - t0, scale);
done:
    PQclear(r);
    if (in_tx && c) PQclear(PQexec(c, "ROLLBACK"));
    PQfinish(c);
    gp_builder_free(b);
    free(eb.e);
    free(query);
    free(decl);
    gp_pg_spec_free(&s);
    return g;
}
