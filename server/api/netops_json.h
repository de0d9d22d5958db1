/* netops_json.h - JSON text for routing tables and what-if changes, written straight into a
 * growable buffer (tables can hold millions of routes, too many for a cJSON tree). Shared by the
 * CLI (cli/netops.c) and the HTTP handlers (server/v1/netops.c), so both print one format:
 *   router:  {"router": ID, "name": "...", "routes": [{"destination": ID, "destination_name": N,
 *             "distance": D|null, "next_hops": [ID, ...], "next_hop_names": [N, ...]}, ...]}
 *   change:  {"router": ID, "router_name": N, "destination": ID, "destination_name": N,
 *             "before": {"distance", "next_hops", "next_hop_names"}, "after": {...}}
 * Names (N: a string, or null for an unnamed router) only when the graph has names.
 *   what-if: {"graph", "version", "what_if_version", "count", "changes": [change, ...]}
 * IDs are external node ids; distances are in the graph's input units.
 */
#ifndef GP_NETOPS_JSON_H
#define GP_NETOPS_JSON_H

#include "engine/ecmp.h"

#include <stddef.h>

typedef struct gp_sbuf {
    char *p;
    size_t len, cap;
    int oom; /* set once an allocation failed; the text is then incomplete */
} gp_sbuf;

void gp_sbuf_free(gp_sbuf *s);
void gp_sbuf_reset(gp_sbuf *s); /* len = 0, keeps the allocation */
void gp_sbuf_add(gp_sbuf *s, const char *txt, size_t len);
void gp_sbuf_printf(gp_sbuf *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void gp_sbuf_json_str(gp_sbuf *s, const char *str); /* quoted and escaped */

/* {"distance": D|null, "next_hops": [...]} of (i, j). scratch: room for t->ecmp_max ids. */
void gp_nj_route(gp_sbuf *s, const gp_rt *t, uint32_t i, uint32_t j, uint32_t *scratch);
/* One router's whole table (see above). extra (may be NULL): JSON members with a trailing comma
 * written first, e.g. "\"graph\":\"g\",". */
void gp_nj_router(gp_sbuf *s, const gp_rt *t, uint32_t i, const char *extra, uint32_t *scratch);
/* The members a routing-table document opens with (HTTP's and the CLI's), a trailing comma
 * included: "graph": NAME, "version", "backend", "ecmp_max", "weight_unit". Then the whole tables
 * are {header "routers": N, "tables": [router, ...]} and one router's {header router members}. */
void gp_nj_header(gp_sbuf *s, const char *graph, const gp_rt *t);
/* One change object for pair p between tables a (before) and b (after). */
void gp_nj_change(gp_sbuf *s, const gp_rt *a, const gp_rt *b, gp_rt_pair p, uint32_t *scratch);
/* The what-if document, HTTP's and the CLI's: {"graph": NAME, "version": a's graph version,
 * "what_if_version": b's, "count": np, "changes": [change, ...]} for the pairs p that differ
 * between a (before) and b (after). scratch: gp_nj_scratch(a) + gp_nj_scratch(b) entries. */
void gp_nj_what_if(gp_sbuf *s, const char *graph, const gp_rt *a, const gp_rt *b,
                   const gp_rt_pair *p, size_t np, uint32_t *scratch);
/* Scratch size (entries) the writers need for t. */
uint32_t gp_nj_scratch(const gp_rt *t);

/* Routers by text (HTTP's demand rows and the CLI's demand files): a name index of g. */
typedef struct gp_nj_names {
    const gp_graph *g;
    uint32_t *idx; /* routers with a name, by name */
    uint32_t k;
} gp_nj_names;
int gp_nj_names_init(gp_nj_names *nm, const gp_graph *g); /* -1: out of memory */
void gp_nj_names_free(gp_nj_names *nm);
/* A router named by text: its name, else an integer id; GP_NONE when neither. */
uint32_t gp_nj_names_find(const gp_nj_names *nm, const char *s);
/* A demand row by external ids. */
typedef struct gp_nj_demand {
    int64_t s, d;
    double v;
} gp_nj_demand;
/* Parses CSV "source,destination,volume" (a header line optional, '#' comments; routers by name or
 * id; volume >= 0) into *out (malloc'd, *n rows, at most max). -1 with err naming the line. */
int gp_nj_demands_csv(const gp_nj_names *nm, const char *body, size_t len, gp_nj_demand **out,
                      size_t *n, size_t max, char *err, size_t ecap);

#endif
