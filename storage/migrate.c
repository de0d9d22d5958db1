/* migrate.c - applies the embedded migrations (migrate.h) to an SQLite database. The PostgreSQL
 * side lives in pg.c, next to the libpq code. */
#include "storage/migrate.h"

#include <sqlite3.h>
#include <string.h>

int gp_migration_latest(const char *db) {
    int v = 0;
    for (const gp_migration *m = gp_migrations; m->db; m++)
        if (strcmp(m->db, db) == 0 && m->version > v) v = m->version;
    return v;
}

static int exec(sqlite3 *db, const char *sql, gp_err *err) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        gp_err_set(err, GP_EDB, "sqlite: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return GP_EDB;
    }
    return GP_OK;
}

static int current_version(sqlite3 *db, int *out, gp_err *err) {
    sqlite3_stmt *st = NULL;
    *out = 0;
    if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(version), 0) FROM schema_version", -1, &st,
                           NULL) != SQLITE_OK)
        return gp_err_set(err, GP_EDB, "sqlite: reading schema_version: %s", sqlite3_errmsg(db));
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return gp_err_set(err, GP_EDB, "sqlite: reading schema_version: %s", sqlite3_errmsg(db));
    return GP_OK;
}

int gp_migrate_sqlite(sqlite3 *db, gp_err *err) {
    int rc = exec(db,
                  "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                  "name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
                  err);
    if (rc) return rc;
    int have;
    if ((rc = current_version(db, &have, err))) return rc;
    int latest = gp_migration_latest("sqlite");
    if (have > latest)
        return gp_err_set(err, GP_EDB,
                          "cache database schema version %d is newer than this gpath knows (%d): "
                          "use a newer gpath or another cache_path",
                          have, latest);
    /* Apply in ascending order; gp_migrations is generated from a sorted file list. */
    for (const gp_migration *m = gp_migrations; m->db; m++) {
        if (strcmp(m->db, "sqlite") != 0 || m->version <= have) continue;
        if ((rc = exec(db, "BEGIN IMMEDIATE", err))) return rc;
        /* Re-check inside the write lock: another process may have migrated meanwhile. */
        int now;
        if ((rc = current_version(db, &now, err))) goto rollback;
        if (now >= m->version) {
            exec(db, "COMMIT", NULL);
            continue;
        }
        if ((rc = exec(db, m->sql, err))) goto rollback;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "INSERT INTO schema_version (version, name) VALUES (?, ?)", -1,
                               &st, NULL) != SQLITE_OK) {
            rc = gp_err_set(err, GP_EDB, "sqlite: %s", sqlite3_errmsg(db));
            goto rollback;
        }
        sqlite3_bind_int(st, 1, m->version);
        sqlite3_bind_text(st, 2, m->name, -1, SQLITE_STATIC);
        int src = sqlite3_step(st);
        sqlite3_finalize(st);
        if (src != SQLITE_DONE) {
            rc = gp_err_set(err, GP_EDB, "sqlite: recording migration %s: %s", m->name,
                            sqlite3_errmsg(db));
            goto rollback;
        }
        if ((rc = exec(db, "COMMIT", err))) goto rollback;
        GP_LOG(GP_LOG_INFO, "cache database: applied migration %s", m->name);
        continue;
    rollback:
        exec(db, "ROLLBACK", NULL);
        if (err) {
            char tmp[sizeof err->msg];
            memcpy(tmp, err->msg, sizeof tmp);
            gp_err_set(err, rc, "migration %s: %s", m->name, tmp);
        }
        return rc;
    }
    return GP_OK;
}
