/* source.h - where graphs come from: the one spec dispatcher that knows every source gpath reads,
 * the file formats and generators of graph/ (graph/graph.h, gp_graph_load_from) and PostgreSQL
 * (storage/pg.h).
 *
 * A spec is what graph/graph.h's gp_graph_load_from takes, or a PostgreSQL URI
 * ("postgresql://..." or "postgres://...", storage/pg.h documents its parameters). This is the
 * header the command line, the server's registry and the tests include to load a graph; graph/
 * alone cannot load a PostgreSQL spec.
 */
#ifndef GP_SOURCE_H
#define GP_SOURCE_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads a graph from any spec (gp_graph_load_from with every source above graph/). opts may be
 * NULL. Never returns a partial graph: NULL and err filled on any error. */
gp_graph *gp_graph_load(const char *spec, const gp_load_opts *opts, gp_err *err);
/* The file a spec reads ("dimacs:/x.gr" -> "/x.gr", a bare path as is), or NULL for gen:, grid:
 * and PostgreSQL specs. Points into spec. */
const char *gp_spec_path(const char *spec);
/* 1 when spec is a PostgreSQL URI (postgresql:// or postgres://). */
int gp_spec_is_pg(const char *spec);

#ifdef __cplusplus
}
#endif
#endif
