/* params.c - the /v1 parameter layer (server/api/params.h) bound to an HTTP request: gp_params
 * reads the request's query string and body through the handler toolkit and answers the 400
 * itself; places and routers resolve against the request's graph (the declarations are in
 * server/api/params.h's last section).
 */
#include "server/api/params.h"
#include "server/v1/params.h"

#include "server/http/http.h"

#include <stdio.h>
#include <stdlib.h>

static void query_each(const void *req, gp_param_pair_fn fn, void *ctx) {
    gp_req_query_each(req, fn, ctx);
}

int gp_params(gp_req *r, const gp_endpoint *ep, gp_args *a) {
    gp_param_src src = {gp_req_method(r), NULL, 0, NULL, query_each, r};
    src.body = gp_req_body(r, &src.body_len);
    src.json = ep->body != GP_BODY_NONE ? gp_req_json(r) : NULL;
    int code;
    char msg[768];
    if (gp_params_parse(&src, ep, a, &code, msg, sizeof msg) == 0) return GP_OK;
    gp_http_error(r, code, "%s", msg);
    return -1;
}

double gp_req_radius(const gp_args *a) {
    const gp_arg *r = gp_args_get(a, "radius");
    if (r->present) return r->d;
    const gp_config *c = gp_http_config();
    return c ? (double)c->max_snap_m : 1000.0;
}

int gp_req_snap(gp_req *r, const gp_place *p, const char *what, double radius_m, gp_snap *out) {
    int code;
    char msg[1024];
    if (gp_place_snap(gp_req_graph(r), gp_req_graph_name(r), p, what, radius_m, out, &code, msg,
                      sizeof msg) == 0)
        return GP_OK;
    gp_http_error(r, code, "%s", msg);
    return -1;
}

uint32_t gp_req_router(gp_req *r, const gp_place *p, const char *what) {
    if (!p->name) return gp_req_node(r, p->id, what);
    gp_graph *g = gp_req_graph(r);
    uint32_t v = gp_router_lookup(g, p->name);
    if (v == GP_NONE) {
        char msg[512];
        gp_unknown_router_msg(msg, sizeof msg, what, p->name, gp_req_graph_name(r));
        gp_http_error(r, GP_HC_UNKNOWN_NODE, "%s", msg);
    }
    return v;
}

gp_snap *gp_req_snap_list(gp_req *r, const gp_arg *v, const char *field, double radius) {
    int code;
    char msg[1024];
    gp_snap *s = gp_places_snap(gp_req_graph(r), gp_req_graph_name(r), v->list, v->nlist, field,
                                radius, &code, msg, sizeof msg);
    if (!s) gp_http_error(r, code, "%s", msg);
    return s;
}

int gp_req_table_places(gp_req *r, const gp_endpoint *ep, long limit, const char *limit_key,
                        gp_snap **ss, uint32_t *ns, gp_snap **ts, uint32_t *nt) {
    gp_args args;
    *ss = *ts = NULL;
    if (gp_params(r, ep, &args)) return -1;
    const gp_arg *sa = gp_args_get(&args, "sources"), *ta = gp_args_get(&args, "targets");
    if (!ta->present) ta = sa;
    *ns = sa->nlist;
    *nt = ta->nlist;
    uint64_t cells = (uint64_t)*ns * *nt;
    if (cells > (uint64_t)limit) {
        gp_http_error(r, GP_HC_TOO_BIG, "%u sources x %u targets = %llu cells exceeds %s = %ld",
                      *ns, *nt, (unsigned long long)cells, limit_key, limit);
        gp_args_free(&args);
        return -1;
    }
    double radius = gp_req_radius(&args);
    *ss = gp_req_snap_list(r, sa, "sources", radius);
    *ts = *ss ? gp_req_snap_list(r, ta, ta == sa ? "sources" : "targets", radius) : NULL;
    gp_args_free(&args);
    if (*ts) return GP_OK;
    free(*ss);
    *ss = NULL;
    return -1;
}
