/* pg.h - PostgreSQL as a graph source: pgRouting-compatible edge tables read through libpq, gpath's
 * own schema (migrations/postgres), and the LISTEN gpath_reload listener (pg_listen.c).
 *
 * A PostgreSQL graph spec is a libpq connection URI plus gpath's own query parameters, which are
 * removed before connecting:
 *   table=NAME        an edge table (NAME may be schema-qualified, each part taken literally)
 *   edges_sql=SQL     a query returning pgRouting's columns (URL-encoded: %XX; '+' stays '+')
 *   directed=false    pgRouting's directed := false (every direction both ways)
 *   scale=S           fixed-point scale for the costs (default: the one that fits every cost,
 *                     gp_scale_fit: 1 for integers, else 1000, else the power of ten that fits)
 *   srid=N            the table's x1, y1, x2, y2 are in EPSG:N (projected, e.g. 3857 or a UTM
 *                     zone): transformed to lon/lat with PostGIS; without PostGIS, coordinates
 *                     outside lon/lat's range are refused
 *   srid=0            planar, no SRID: x1, y1, x2, y2 (or a geometry column's end points) are
 *                     x/y in the table's own units, not lon/lat; arc lengths are their Euclidean
 *                     lengths in those units and the graph has no lon/lat (no snapping by
 *                     coordinates, no great-circle lengths). A geometry column whose SRID is 0
 *                     is refused without srid=, the message naming srid=0 and srid=N
 * A table= whose geometry column (PostGIS geometry_columns) has an SRID other than 4326 has its
 * coordinates taken from the geometry's end points, transformed to EPSG:4326.
 * With neither table nor edges_sql, gpath's own table gpath.edges is read, after the migrations in
 * migrations/postgres have been applied (the only case in which gpath writes to the database).
 * The edge rows are pgRouting's: id, source, target, cost[, reverse_cost][, x1, y1, x2, y2]
 * (a table= in osm2pgrouting's layout, gid and cost_s without id, is read as gid, cost_s and
 * reverse_cost_s);
 * cost >= 0 gives the arc source->target, reverse_cost >= 0 the arc target->source, a negative
 * value no arc; undirected, each of them gives both directions (pgRouting's semantics exactly).
 */
#ifndef GP_PG_H
#define GP_PG_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_pg_spec {
    char *conninfo;  /* the URI without gpath's parameters (what libpq gets) */
    char *table;     /* decoded, or NULL */
    char *edges_sql; /* decoded, or NULL */
    int directed;    /* -1 unset, else 0/1 */
    double scale;    /* 0: unset */
    int srid;        /* 0: unset, else the EPSG code of a table's plain x1, y1, x2, y2 */
    int planar;      /* srid=0: x/y in the table's units, Euclidean lengths, no lon/lat */
    char shown[512]; /* the spec with any password replaced by "***", for logs and errors */
} gp_pg_spec;

/* Splits a spec into the libpq URI and gpath's parameters. */
int gp_pg_spec_parse(const char *uri, gp_pg_spec *out, gp_err *err);
void gp_pg_spec_free(gp_pg_spec *s); /* accepts NULL and a zeroed spec */

/* Checks that every host (and hostaddr) the spec names, with its port, is in allow (','-separated
 * "HOST" or "HOST:PORT" entries; a spec without a host counts as localhost); service= is refused.
 * GP_OK, GP_EFORBIDDEN naming the host, or GP_EINVAL for a spec libpq cannot parse. */
int gp_pg_check_hosts(const char *uri, const char *allow, gp_err *err);
/* Appends the hosts the spec names to the ','-separated list in out (cap bytes, NUL-terminated),
 * skipping those already there. */
int gp_pg_spec_hosts(const char *uri, char *out, size_t cap);

/* Loads a pgRouting edge table (the rows above) into a graph; uri is the whole postgresql:// spec.
 * storage/source.h's gp_graph_load calls it for PostgreSQL specs, after refusing the options it
 * has no use for (a cost rule). opts may be NULL. */
gp_graph *gp_load_postgres(const char *uri, const gp_load_opts *o, gp_err *err);

/* Applies migrations/postgres to the database (schema gpath, table gpath.schema_version); refuses a
 * database whose recorded version is newer than this binary's. */
int gp_pg_migrate(const char *uri, gp_err *err);

/* The LISTEN gpath_reload listener: a thread holding its own connection to the database named by
 * uri (gpath's parameters are ignored), calling on_reload(payload, ctx) from that thread for every
 * notification (payload: a graph name, or "" for every PostgreSQL graph). When the connection is lost
 * it reconnects with exponential backoff (0.1 s doubling to 5 s) and then calls on_reload("", ctx)
 * once, because notifications sent meanwhile were lost. Start fails only on a bad URI or no memory;
 * an unreachable server is retried in the background. */
typedef struct gp_pg_listener gp_pg_listener;
gp_pg_listener *gp_pg_listen_start(const char *uri,
                                   void (*on_reload)(const char *payload, void *ctx), void *ctx,
                                   gp_err *err);
/* 1 while the listener is connected and listening. */
int gp_pg_listen_connected(const gp_pg_listener *l);
/* Stops the thread and closes the connection; accepts NULL. */
void gp_pg_listen_stop(gp_pg_listener *l);

#ifdef __cplusplus
}
#endif
#endif
