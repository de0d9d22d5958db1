/* repair.c - POST /v1/graphs/{graph}/repair-paths: loop-free alternates (RFC 5286) and TI-LFA
 * repair segment lists (RFC 9855) for every router, per protected link and node and per
 * destination, with the coverage per router and for the network (engine/repair.h).
 *
 * The base all-pairs distances are the routing tables' (server/v1/netops.h gp_srv_netops_tables:
 * cached per graph version, GPU APSP when present); the post-convergence trees run on the CPU
 * threads. The answer is the document of server/api/repair_json.h (the CLI's `gpath repair` too):
 * coverage for every router, repair rows for the routers asked for ("routers"; all by default,
 * none with "summary": true), in JSON or CSV ("format"). Answers over repair_max_rows rows are
 * refused with 413 TooBig before any work; unknown routers are 400 UnknownNode naming the field.
 */
#include "server/v1/repair.h"

#include "engine/repair.h"
#include "server/api/params.h"
#include "server/api/repair_json.h"
#include "server/v1/netops.h"
#include "server/v1/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gp_param repair_params[] = {
    {"routers", GP_PT_JSON, GP_IN_BODY, 0, 0, 0, NULL},
    {"summary", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
    {"node_protection", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
    {"paths", GP_PT_BOOL, GP_IN_ANY, 0, 0, 0, NULL},
    {"format", GP_PT_ENUM, GP_IN_ANY, 0, 0, 0, "json|csv"},
};
static const gp_endpoint repair_ep =
    GP_ENDPOINT("repair-paths", repair_params, GP_BODY_OPTIONAL,
                "{\"routers\": [r, ...], \"summary\": false, \"node_protection\": true, "
                "\"paths\": false, \"format\": \"json\"}");

static uint64_t max_rows_cfg(void) {
    const gp_config *c = gp_http_config();
    return c && c->repair_max_rows > 0 ? (uint64_t)c->repair_max_rows : 200000;
}

/* keep[] from the "routers" array (400 naming routers[i] on a bad entry); 0 when set. */
static int parse_routers(gp_req *r, const cJSON *a, uint8_t *keep) {
    if (!cJSON_IsArray(a)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "'routers' must be an array of router ids or names");
        return -1;
    }
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
        char what[48];
        snprintf(what, sizeof what, "routers[%d]", i++);
        gp_place p;
        gp_err e;
        if (gp_json_router(it, &p, what, &e)) {
            gp_http_error(r, e.code == GP_EPARSE ? GP_HC_INVALID_JSON : GP_HC_INVALID_QUERY, "%s",
                          e.msg);
            return -1;
        }
        uint32_t v = gp_req_router(r, &p, what);
        if (v == GP_NONE) return -1;
        keep[v] = 1;
    }
    return 0;
}

void gp_h_repair_paths(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &repair_ep, &args)) return;
    const gp_arg *ra = gp_args_get(&args, "routers"), *sa = gp_args_get(&args, "summary"),
                 *na = gp_args_get(&args, "node_protection"), *pa = gp_args_get(&args, "paths"),
                 *fa = gp_args_get(&args, "format");
    int csv = fa->present && fa->e == 1;
    uint8_t *keep = NULL;
    gp_rt *t = NULL;
    gp_repair *rep = NULL;
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    if (ra->present || (sa->present && sa->e)) {
        if (!(keep = calloc((size_t)g->n + 1, 1))) {
            gp_http_error(r, GP_HC_INTERNAL, "out of memory");
            goto done;
        }
        if (ra->present && parse_routers(r, ra->json, keep)) goto done;
        if (sa->present && sa->e) memset(keep, 0, (size_t)g->n + 1);
    }
    if (!(t = gp_srv_netops_tables(r, g))) goto done;
    gp_repair_opts o = {.node_protection = !na->present || na->e,
                        .keep_paths = pa->present && pa->e,
                        .keep = keep,
                        .max_entries = max_rows_cfg()};
    if (gp_repair_compute(t, &o, &rep, &err) != GP_OK) {
        if (err.code == GP_ETOOBIG)
            gp_http_error(r, GP_HC_TOO_BIG, "%s (repair_max_rows, or \"summary\": true)", err.msg);
        else gp_http_error_err(r, GP_HC_INTERNAL, &err);
        goto done;
    }
    if (csv) gp_rj_csv(&s, t, rep, o.node_protection, NULL, NULL);
    else gp_rj_json(&s, gp_req_graph_name(r), t, rep, o.node_protection, NULL, NULL);
    if (s.oom) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        goto done;
    }
    gp_http_send(r, 200, csv ? "text/csv; charset=utf-8" : "application/json", s.p,
                 s.len); /* takes the buffer */
    s.p = NULL;
done:
    gp_sbuf_free(&s);
    gp_repair_free(rep);
    gp_rt_free(t);
    free(keep);
}
