/* source.c - where graphs come from (contract in source.h): the table of sources above graph/
 * (PostgreSQL), handed to graph/'s loader, which runs the checks every load shares.
 */
#include "storage/source.h"

#include "storage/pg.h"

#include <string.h>

int gp_spec_is_pg(const char *spec) {
    return strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0;
}

/* PostgreSQL takes a scale (costs are often fractional), no cost rule. */
static const gp_spec_source sources[] = {
    {"postgresql", "postgresql://", gp_spec_is_pg, gp_load_postgres, 1, 0},
};
#define NSOURCES (sizeof sources / sizeof sources[0])

gp_graph *gp_graph_load(const char *spec, const gp_load_opts *opts, gp_err *err) {
    return gp_graph_load_from(spec, opts, sources, NSOURCES, err);
}

const char *gp_spec_path(const char *spec) { return gp_graph_spec_file(spec, sources, NSOURCES); }
