/* migrate.h - numbered schema migrations for gpath's databases (SQLite cache, PostgreSQL schema).
 *
 * The SQL lives in migrations/<db>/NNNN-name.sql and is compiled into the binary (the Makefile runs
 * storage/embed-migrations.sh into the build directory), so nothing is looked up at run time.
 * Each migration is applied in its own transaction together with its row in the database's
 * schema-version table; a database whose recorded version is newer than the newest migration this
 * binary carries is refused (GP_EDB) with a message naming both versions.
 */
#ifndef GP_MIGRATE_H
#define GP_MIGRATE_H

#include "graph/gp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_migration {
    const char *db;   /* "sqlite" or "postgres": the migrations/ subdirectory */
    int version;      /* NNNN */
    const char *name; /* "NNNN-name" */
    const char *sql;
} gp_migration;

/* All embedded migrations, terminated by an entry with db == NULL (generated file). */
extern const gp_migration gp_migrations[];

/* Newest migration version for db ("sqlite" / "postgres"), 0 when there is none. */
int gp_migration_latest(const char *db);

struct sqlite3;
/* Brings an open SQLite database to the latest "sqlite" schema. Refuses a newer database. */
int gp_migrate_sqlite(struct sqlite3 *db, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
