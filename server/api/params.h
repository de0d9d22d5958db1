/* params.h - the /v1 API's one parameter layer: a declarative table of the parameters each
 * endpoint accepts, parsed identically from the query string and the JSON body.
 *
 * An endpoint declares its parameters (name, type, where it may appear, required, bounds, enum
 * choices) in a static gp_param array and calls gp_params() first thing. That call rejects, with a
 * 400 naming the culprit: unknown names (with a hint for the words other routers use:
 * `destinations` -> `targets`, `alternatives`, `profile`, `steps`, `lat`/`lon`, ...), a name
 * given twice (repeated in the query string, twice in the body, or in both), empty values, values
 * with leading or trailing junk (" 1", "1x"), numbers out of range (checked before any conversion
 * to an integer, so 1e300 never reaches a cast), malformed JSON bodies and bytes after the JSON
 * value. Errors: InvalidQuery for query-string and value problems, InvalidJson for a body that is
 * not a JSON object or a field of the wrong JSON type.
 *
 * Values:
 *  - place: a node id ("42", JSON 42) or a coordinate "lon,lat" (longitude first, the OSRM order;
 *    JSON "7.42,43.73" or [7.42, 43.73]). Resolved against the graph with gp_req_snap(): node ids
 *    through the id map (400 UnknownNode), coordinates snapped to the nearest road segment within
 *    the radius (400 NoSegment beyond it, naming the distance; 400 NoCoordinates on a graph
 *    without coordinates).
 *  - places: a list of places, a JSON array or in the query string separated by ';'.
 *  - router: a node id or a node name (JSON number or string; a string is looked up as a name
 *    first, then read as an id), resolved with gp_req_router().
 * The text and JSON parsers are exported for endpoints with their own syntax (the OSRM API).
 */
#ifndef GP_PARAMS_H
#define GP_PARAMS_H

#include "graph/change.h"
#include "engine/snap.h"
#include "server/errors.h"

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gp_ptype {
    GP_PT_PLACE,  /* node id or lon,lat */
    GP_PT_PLACES, /* list of places (min..max entries; max 0: no limit) */
    GP_PT_INT,    /* integer in [min, max] */
    GP_PT_NUM,    /* finite number in [min, max] */
    GP_PT_ENUM,   /* one of `choices` ("a|b|c"); the value's index in gp_arg.e */
    GP_PT_BOOL,   /* query: true|false|1|0|yes|no; JSON: true / false */
    GP_PT_STR,    /* non-empty string of at most max bytes (0: 256) */
    GP_PT_ROUTER, /* router id or name */
    GP_PT_JSON    /* body only: any JSON value, checked by the handler (gp_json_* helpers) */
};

enum { GP_IN_QUERY = 1, GP_IN_BODY = 2, GP_IN_ANY = 3 };

typedef struct gp_param {
    const char *name;
    int type;
    int in; /* GP_IN_* */
    int required;
    double min, max;
    const char *choices; /* GP_PT_ENUM */
} gp_param;

/* What the body of an endpoint may be. */
enum { GP_BODY_NONE = 0, GP_BODY_OPTIONAL, GP_BODY_REQUIRED };

typedef struct gp_endpoint {
    const char *name; /* for messages: "route", "table" */
    const gp_param *params;
    size_t nparams;
    int body;            /* GP_BODY_* (GP_BODY_NONE: a JSON body is not read) */
    const char *example; /* shown when a required body is missing, e.g. {"sources": [1, 2]} */
} gp_endpoint;

/* Table initialisers: GP_ENDPOINT("table", table_params, GP_BODY_REQUIRED, "{...}"), and
 * GP_ENDPOINT_NONE("routers") for an endpoint that takes no parameter at all. */
#define GP_ENDPOINT(name, params, body, example)                                                   \
    { name, params, sizeof params / sizeof params[0], body, example }
#define GP_ENDPOINT_NONE(name)                                                                     \
    { name, NULL, 0, GP_BODY_NONE, NULL }

typedef struct gp_place {
    int is_coord;
    int64_t id;       /* node id (!is_coord, name == NULL) */
    double lon, lat;  /* is_coord */
    const char *name; /* a router given by name or as text (points into the request) */
} gp_place;

typedef struct gp_arg {
    int present;
    int in;         /* GP_IN_QUERY or GP_IN_BODY: where it was given */
    int64_t i;      /* INT */
    double d;       /* NUM */
    int e;          /* ENUM index, BOOL 0/1 */
    const char *s;  /* STR (points into the request) */
    gp_place place; /* PLACE, ROUTER */
    gp_place *list; /* PLACES (owned by gp_args) */
    uint32_t nlist;
    const cJSON *json; /* the body value (BODY), for GP_PT_JSON */
} gp_arg;

#define GP_PARAMS_MAX 16

typedef struct gp_args {
    const gp_endpoint *ep;
    gp_arg v[GP_PARAMS_MAX]; /* in the order of ep->params */
} gp_args;

/* What the parser reads of a request: its method, raw body and parsed JSON body (NULL when empty
 * or not read), and its query string's decoded pairs through query_each(req, fn, ctx). */
typedef void (*gp_param_pair_fn)(void *ctx, const char *name, const char *value);
typedef struct gp_param_src {
    const char *method;
    const char *body;
    size_t body_len;
    const cJSON *json;
    void (*query_each)(const void *req, gp_param_pair_fn fn, void *ctx);
    const void *req;
} gp_param_src;
/* Parses a request against ep. GP_OK, or -1 with *hcode the GP_HC_* code of the 400 and its
 * message in msg (nothing to free). */
int gp_params_parse(const gp_param_src *src, const gp_endpoint *ep, gp_args *a, int *hcode,
                    char *msg, size_t cap);
void gp_args_free(gp_args *a);
/* The argument of parameter `name` (which must be declared in the endpoint; absent ones have
 * present == 0). */
const gp_arg *gp_args_get(const gp_args *a, const char *name);

/* ---- parsers (exported for endpoints with their own syntax) ---- */
/* Strict text: an optional '-' / '+', digits, nothing else (no blanks); in range. 0 / -1. */
int gp_parse_i64(const char *s, int64_t *out);
/* Strict decimal number (optional sign, digits, '.', exponent); finite. 0 / -1. */
int gp_parse_num(const char *s, double *out);
/* "lon,lat": two strict numbers, longitude in [-180, 180], latitude in [-90, 90]. GP_EINVAL with
 * err naming `what` otherwise. */
int gp_parse_lonlat(const char *s, double *lon, double *lat, const char *what, gp_err *err);
/* A node id or "lon,lat". */
int gp_parse_place(const char *s, gp_place *out, const char *what, gp_err *err);
/* Places separated by ';' (the query-string form of a places list; the CLI's --sources): a
 * malloc'd array of *count places, each named `what`[k] in messages. */
int gp_parse_places(const char *s, gp_place **out, uint32_t *count, const char *what, gp_err *err);
/* JSON: an integer node id, "id" or "lon,lat" string, or [lon, lat]. */
int gp_json_place(const cJSON *v, gp_place *out, const char *what, gp_err *err);
/* JSON number that is an integer in [min, max], range-checked before conversion. */
int gp_json_i64(const cJSON *v, int64_t min, int64_t max, int64_t *out, const char *what,
                gp_err *err);
/* JSON number, finite, in [min, max]. */
int gp_json_num(const cJSON *v, double min, double max, double *out, const char *what, gp_err *err);
/* JSON router reference: integer id or string (name, or id as text). */
int gp_json_router(const cJSON *v, gp_place *out, const char *what, gp_err *err);

/* 1 when obj (a JSON object) has only members named in the NULL-terminated list; else fills err
 * naming the first other member (as `what`.member) and returns 0. */
int gp_json_only(const cJSON *obj, const char *what, gp_err *err, ...);

/* ---- resolution against a graph, shared by HTTP and the CLI ---- */
/* A place of graph g (named gname in messages) as a position: a node id through the id map, a
 * coordinate snapped within radius_m. 0, or -1 with *hcode the GP_HC_* error (UnknownNode,
 * NoCoordinates, NoSegment, InvalidQuery) and its message in msg (the /v1 API's error document,
 * which the CLI prints too). */
int gp_place_snap(const gp_graph *g, const char *gname, const gp_place *p, const char *what,
                  double radius_m, gp_snap *out, int *hcode, char *msg, size_t cap);
/* Every place of a list (named field[i] in messages), as gp_place_snap; malloc'd, or NULL with
 * *hcode and msg filled. */
gp_snap *gp_places_snap(const gp_graph *g, const char *gname, const gp_place *list, uint32_t n,
                        const char *field, double radius_m, int *hcode, char *msg, size_t cap);
/* sssp's max_distance (input units) as an inclusive limit in g's stored units. */
uint64_t gp_max_distance_limit(const gp_graph *g, double max_distance);

/* The UnknownNode message for a router text that gp_router_lookup does not find (HTTP's, the
 * CLI's). */
void gp_unknown_router_msg(char *buf, size_t cap, const char *what, const char *text,
                           const char *gname);
/* A node of g by name, else (for text that is an integer) by id; GP_NONE when neither. */
uint32_t gp_router_lookup(const gp_graph *g, const char *text);
/* 1 when routers u and v (external ids) are joined by an arc either way; else 0 with HTTP's
 * NotFound message for the link `what` in msg. */
int gp_link_joined(const gp_graph *g, const char *what, int64_t u, int64_t v, char *msg,
                   size_t cap);
/* The CLI's link arguments "U,V" (with_cost 0: a link down) or "U,V,COST" (with_cost 1), routers
 * by name or id (a name must not contain a comma), resolved as HTTP resolves the link `what`
 * ("fail_links[0]", "set_costs[0].link") of graph gname: GP_OK, or an error in err with *hcode
 * the GP_HC_* code HTTP answers with that message: InvalidQuery (syntax), UnknownNode (a router,
 * named what[0] / what[1]), NotFound (the routers are not joined). */
int gp_link_text(const gp_graph *g, const char *gname, const char *text, int with_cost,
                 const char *what, gp_link_change *out, int *hcode, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
