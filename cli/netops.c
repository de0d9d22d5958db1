/* netops.c - `gpath routing-tables` and `gpath what-if`: one-shot routing-table and failure
 * what-if answers on stdout as JSON (the same documents as the HTTP endpoints, server/api/netops_json.h).
 *
 * routing-tables prints HTTP's document {"graph", "version", "backend", "ecmp_max", "weight_unit",
 * "routers", "tables": [router, ...]} (with --router: GET .../routing-table's, the header members
 * then the router's). what-if prints HTTP's what-if document {"graph", "version",
 * "what_if_version", "count", "changes": [...]} (server/api/netops_json.h, the graph named by its spec);
 * with --each-link it fails every link (each unordered router pair joined by an arc) in turn and
 * prints one line per link: {"link": [u, v], "changes": [...]} (used by tests/test_netops_ref.sh).
 * Routers are given by id or name (server/api/params.h). Options and help come from the tables below
 * (cli/args.h). Usage errors exit 2, failures 1; an unknown router or a link between
 * routers that are not joined prints HTTP's error document (UnknownNode, NotFound: --fail-link,
 * --set-cost and --fail-router named as the body fields fail_links[i], set_costs[i].link,
 * fail_routers[i]) and exits 2.
 */
#include "cli/netops.h"

#include "engine/change.h"
#include "engine/ecmp.h"
#include "engine/planning.h"
#include "engine/progress.h"
#include "engine/repair.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "server/api/netops_json.h"
#include "server/api/params.h"
#include "server/api/repair_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(int code, const char *fmt, const char *a) {
    gp_cli_progress_clear();
    fputs("gpath: ", stderr);
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return code;
}

static int write_out(gp_sbuf *s) {
    if (s->oom) return die(1, "%s", "out of memory");
    if (s->len && fwrite(s->p, 1, s->len, stdout) != s->len) return die(1, "%s", "write error");
    gp_sbuf_reset(s);
    return 0;
}

static void put_changes(gp_sbuf *s, const gp_rt *a, const gp_rt *b, const gp_rt_pair *p, size_t np,
                        uint32_t *scratch) {
    gp_sbuf_add(s, "[", 1);
    for (size_t k = 0; k < np; k++) {
        if (k) gp_sbuf_add(s, ",", 1);
        gp_nj_change(s, a, b, p[k], scratch);
    }
    gp_sbuf_add(s, "]", 1);
}

/* Tables after a change set, and the diff against base, into s: HTTP's whole what-if document
 * when graph (its name) is given, else the changes array only. scratch: 2 x gp_nj_scratch. */
static int what_if_once(gp_engine *e, const gp_rt *base, const gp_link_change *ch, size_t nch,
                        const int64_t *fr, size_t nfr, const char *graph, gp_sbuf *s,
                        uint32_t *scratch, gp_err *err) {
    gp_graph *g2 = NULL;
    gp_rt *t2 = NULL;
    gp_rt_pair *p = NULL;
    size_t np = 0;
    int rc = gp_engine_change_links(e, base->g, ch, nch, fr, nfr, &g2, NULL, err);
    if (rc == GP_OK) rc = gp_rt_update(e, base, g2, GP_RT_AUTO, 0, &t2, NULL, err);
    if (rc == GP_OK) rc = gp_rt_diff(base, t2, &p, &np, err);
    if (rc == GP_OK && graph) gp_nj_what_if(s, graph, base, t2, p, np, scratch);
    else if (rc == GP_OK) put_changes(s, base, t2, p, np, scratch);
    free(p);
    gp_rt_free(t2);
    gp_graph_unref(g2);
    return rc;
}

/* clang-format off */
#define NETOPS_LOAD_OPTS                                                                           \
    {"cost-rule", 'r', "RULE",                                                                     \
     "link costs: hops (default) or bandwidth (GraphML, SNDlib), routing (SNDlib), weights "      \
     "(Rocketfuel default)",                                                                       \
     "bandwidth", 0},                                                                              \
        {"ref-bandwidth", 0, "BPS", "reference bandwidth of the bandwidth rule (default 100e9)",   \
         "10e9", 0},                                                                               \
        GP_CLI_OPT_SCALE,                                                                          \
        {"ecmp-max", 'm', "N", "most equal-cost next hops listed per destination (default 64)",    \
         "16", 0},                                                                                 \
        GP_CLI_OPT_BACKEND, GP_CLI_OPT_QUIET
/* clang-format on */

static const gp_cli_opt rt_opts[] = {
    GP_CLI_OPT_GRAPH,
    {"router", 'R', "R", "print only this router's table (by id or name)", "Chicago", 0},
    NETOPS_LOAD_OPTS,
};
static const char *const rt_ex[] = {
    "gpath routing-tables -g graphml:Abilene.graphml --cost-rule bandwidth",
    "gpath routing-tables --graph 1239/weights.intra --router 3", NULL};

static const gp_cli_opt wi_opts[] = {
    GP_CLI_OPT_GRAPH,
    {"fail-link", 'L', "U,V", "take the link between routers U and V down (ids or names)", "12,40",
     GP_OPT_REPEAT},
    {"fail-router", 'F', "R", "take router R (id or name) and all its links down", "7",
     GP_OPT_REPEAT},
    {"set-cost", 'C', "U,V,COST", "give the link U-V the cost COST (both directions)", "3,4,10",
     GP_OPT_REPEAT},
    {"each-link", 0, NULL, "fail every link in turn: one line {\"link\", \"changes\"} per link",
     NULL, 0},
    NETOPS_LOAD_OPTS,
};
static const char *const wi_ex[] = {
    "gpath what-if -g 1239/weights.intra --fail-link 12,40 --fail-router 7 --set-cost 3,4,10",
    "gpath what-if --graph graphml:Abilene.graphml --each-link", NULL};

static const gp_cli_opt ll_opts[] = {
    GP_CLI_OPT_GRAPH,
    {"demands", 'D', "FILE",
     "demand matrix: CSV source,destination,volume (routers by id or name, header optional)",
     "demands.csv", GP_OPT_REQUIRED},
    NETOPS_LOAD_OPTS,
};
static const char *const ll_ex[] = {
    "gpath link-loads -g graphml:Abilene.graphml --demands demands.csv",
    "gpath link-loads --graph 1239/weights.intra -D tm.csv --ecmp-max 16", NULL};

/* Loads the graph with the topology options (progress on stderr from here on). */
static int netops_load(const gp_cli_args *a, gp_cli_progress **pr, gp_graph **g, gp_engine **e) {
    gp_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.cost_rule = gp_cli_str(a, "cost-rule");
    uint64_t ecmp_max;
    int rc;
    if ((rc = gp_cli_double(a, "ref-bandwidth", 0, 1e-9, 1e18, &lo.ref_bandwidth)) ||
        (rc = gp_cli_u64(a, "ecmp-max", GP_ECMP_MAX_DEFAULT, 1, 1000000, &ecmp_max)))
        return rc;
    *pr = gp_cli_progress_start(!gp_cli_flag(a, "quiet"));
    gp_cli_progress_stage(*pr, "loading graph");
    return gp_cli_setup(a, &lo, g, e);
}

/* The end of every command: stops the progress display, frees s, the tables, the graph and the
 * engine (all may be NULL); returns rc. */
static int netops_end(int rc, gp_cli_progress *pr, gp_sbuf *s, gp_rt *t, gp_graph *g,
                      gp_engine *e) {
    gp_cli_progress_stop(pr);
    gp_sbuf_free(s);
    gp_rt_free(t);
    gp_graph_unref(g);
    gp_engine_free(e);
    return rc;
}

/* Builds the routing tables of the loaded graph. */
static int netops_tables(const gp_cli_args *a, gp_cli_progress *pr, gp_graph *g, gp_engine *e,
                         gp_rt **t) {
    uint64_t ecmp_max;
    int rc = gp_cli_u64(a, "ecmp-max", GP_ECMP_MAX_DEFAULT, 1, 1000000, &ecmp_max);
    if (rc) return rc;
    gp_cli_progress_stage(pr, "routing tables");
    gp_err err;
    gp_err_clear(&err);
    if (gp_rt_build(e, g, (uint32_t)ecmp_max, 0, 0, t, &err) != GP_OK) return die(1, "%s", err.msg);
    gp_cli_progress_stage(pr, "writing answer");
    return 0;
}

static int cmd_routing_tables(const gp_cli_args *a) {
    gp_cli_progress *pr = NULL;
    gp_engine *e = NULL;
    gp_graph *g = NULL;
    gp_rt *t = NULL;
    uint32_t *scratch = NULL;
    gp_sbuf s = {0};
    const char *router = gp_cli_str(a, "router");
    int rc = netops_load(a, &pr, &g, &e);
    if (!rc) rc = netops_tables(a, pr, g, e, &t);
    if (rc) goto done;
    scratch = malloc((size_t)gp_nj_scratch(t) * sizeof *scratch);
    if (!scratch) {
        rc = die(1, "%s", "out of memory");
        goto done;
    }
    if (router) {
        uint32_t i = gp_router_lookup(g, router); /* by name, else id (server/api/params.h) */
        if (i == GP_NONE) {                       /* HTTP's UnknownNode document */
            char msg[512];
            gp_unknown_router_msg(msg, sizeof msg, "router", router, gp_cli_str(a, "graph"));
            rc = gp_cli_answer_error(GP_HC_UNKNOWN_NODE, msg);
            goto done;
        }
        gp_sbuf hdr = {0}; /* HTTP's routing-table document (server/api/netops_json.h) */
        gp_nj_header(&hdr, gp_cli_str(a, "graph"), t);
        gp_nj_router(&s, t, i, hdr.oom ? NULL : hdr.p, scratch);
        s.oom |= hdr.oom;
        gp_sbuf_free(&hdr);
        gp_sbuf_add(&s, "\n", 1);
        rc = write_out(&s);
        goto done;
    }
    gp_sbuf_add(&s, "{", 1); /* HTTP's routing-tables document */
    gp_nj_header(&s, gp_cli_str(a, "graph"), t);
    gp_sbuf_printf(&s, "\"routers\":%u,\"tables\":[", g->n);
    for (uint32_t i = 0; i < g->n; i++) {
        if (i) gp_sbuf_add(&s, ",", 1);
        gp_nj_router(&s, t, i, NULL, scratch);
        if (s.len > (1u << 20) && (rc = write_out(&s))) goto done;
    }
    gp_sbuf_add(&s, "]}\n", 3);
    rc = write_out(&s);
done:
    free(scratch);
    return netops_end(rc, pr, &s, t, g, e);
}

static int cmd_what_if(const gp_cli_args *a) {
    size_t nl = gp_cli_all(a, "fail-link", NULL, 0), nc = gp_cli_all(a, "set-cost", NULL, 0),
           nr = gp_cli_all(a, "fail-router", NULL, 0);
    const char **vals = calloc(nl + nc + nr + 1, sizeof *vals);
    gp_link_change *ch = calloc(nl + nc + 1, sizeof *ch);
    int64_t *fr = calloc(nr + 1, sizeof *fr);
    gp_cli_progress *pr = NULL;
    gp_engine *e = NULL;
    gp_graph *g = NULL;
    gp_rt *t = NULL;
    uint32_t *scratch = NULL;
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    int rc = 0;
    if (!vals || !ch || !fr) {
        rc = die(1, "%s", "out of memory");
        goto done;
    }
    if ((rc = netops_load(a, &pr, &g, &e))) goto done;
    /* routers by name or id (server/api/params.h), so once the graph is loaded; before the tables */
    size_t nch = 0;
    gp_cli_all(a, "fail-link", vals, nl);
    gp_cli_all(a, "set-cost", vals + nl, nc);
    /* named as HTTP's body fields, with HTTP's error documents (server/api/params.h) */
    const char *spec = gp_cli_str(a, "graph");
    for (size_t i = 0; i < nl + nc; i++, nch++) {
        char what[64];
        int code;
        if (i < nl) snprintf(what, sizeof what, "fail_links[%zu]", i);
        else snprintf(what, sizeof what, "set_costs[%zu].link", i - nl);
        if (gp_link_text(g, spec, vals[i], i >= nl, what, &ch[nch], &code, &err) != GP_OK) {
            rc = gp_cli_answer_error(code, err.msg);
            goto done;
        }
    }
    gp_cli_all(a, "fail-router", vals, nr);
    for (size_t i = 0; i < nr; i++) {
        uint32_t v = gp_router_lookup(g, vals[i]);
        if (v == GP_NONE) {
            char what[64], msg[512];
            snprintf(what, sizeof what, "fail_routers[%zu]", i);
            gp_unknown_router_msg(msg, sizeof msg, what, vals[i], spec);
            rc = gp_cli_answer_error(GP_HC_UNKNOWN_NODE, msg);
            goto done;
        }
        fr[i] = g->ext[v];
    }
    if ((rc = netops_tables(a, pr, g, e, &t))) goto done;
    scratch = malloc(2 * (size_t)gp_nj_scratch(t) * sizeof *scratch);
    if (!scratch) {
        rc = die(1, "%s", "out of memory");
        goto done;
    }
    if (gp_cli_flag(a, "each-link")) {
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t k = t->nb_off[u]; k < t->nb_off[u + 1]; k++) {
                uint32_t v = t->nb[k];
                /* each unordered pair once: from its lower end, or from v when v has no arc back */
                int back = 0;
                for (uint32_t b = t->nb_off[v]; b < t->nb_off[v + 1]; b++) back |= t->nb[b] == u;
                if (back && v < u) continue;
                gp_link_change one = {.u = g->ext[u], .v = g->ext[v], .down = 1};
                gp_sbuf_printf(&s, "{\"link\":[%lld,%lld],\"changes\":", (long long)g->ext[u],
                               (long long)g->ext[v]);
                if (what_if_once(e, t, &one, 1, NULL, 0, NULL, &s, scratch, &err) != GP_OK) {
                    rc = die(1, "%s", err.msg);
                    goto done;
                }
                gp_sbuf_add(&s, "}\n", 2);
                if ((rc = write_out(&s))) goto done;
            }
        goto done;
    }
    /* HTTP's what-if document (server/api/netops_json.h), the graph named by its spec */
    if (what_if_once(e, t, ch, nch, fr, nr, gp_cli_str(a, "graph"), &s, scratch, &err) != GP_OK) {
        rc = die(err.code == GP_ENOTFOUND || err.code == GP_EINVAL ? GP_CLI_EXIT_USAGE : 1, "%s",
                 err.msg);
        goto done;
    }
    gp_sbuf_add(&s, "\n", 1);
    rc = write_out(&s);
done:
    free(scratch);
    free(vals);
    free(ch);
    free(fr);
    return netops_end(rc, pr, &s, t, g, e);
}

static const gp_cli_opt rp_opts[] = {
    GP_CLI_OPT_GRAPH,
    {"router", 'R', "R", "list only the repairs of this router (id or name)", "7", GP_OPT_REPEAT},
    {"format", 'f', "FMT", "json (default) or csv (the repairs only)", "csv", 0},
    {"summary", 0, NULL, "coverage only: no repairs listed", NULL, 0},
    {"link-only", 0, NULL, "link protection only (no node repairs)", NULL, 0},
    {"paths", 0, NULL, "list each repair's post-convergence path", NULL, 0},
    NETOPS_LOAD_OPTS,
};
static const char *const rp_ex[] = {
    "gpath repair -g 1239/weights.intra --summary",
    "gpath repair --graph graphml:Abilene.graphml --router Chicago --format csv", NULL};

static int flush_stdout(void *ctx, gp_sbuf *s) {
    (void)ctx;
    return write_out(s);
}

static int cmd_repair(const gp_cli_args *a) {
    size_t nr = gp_cli_all(a, "router", NULL, 0);
    const char **vals = calloc(nr + 1, sizeof *vals);
    const char *fmt = gp_cli_str(a, "format");
    gp_cli_progress *pr = NULL;
    gp_engine *e = NULL;
    gp_graph *g = NULL;
    gp_rt *t = NULL;
    gp_repair *rep = NULL;
    uint8_t *keep = NULL;
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    int rc = 0, csv = fmt && strcmp(fmt, "csv") == 0;
    if (fmt && !csv && strcmp(fmt, "json") != 0) {
        free(vals);
        return die(GP_CLI_EXIT_USAGE, "--format: '%s' is not json or csv", fmt);
    }
    if (!vals) return die(1, "%s", "out of memory");
    if ((rc = netops_load(a, &pr, &g, &e))) goto done;
    if (nr || gp_cli_flag(a, "summary")) {
        if (!(keep = calloc((size_t)g->n + 1, 1))) {
            rc = die(1, "%s", "out of memory");
            goto done;
        }
        gp_cli_all(a, "router", vals, nr);
        for (size_t i = 0; i < nr; i++) {
            uint32_t v = gp_router_lookup(g, vals[i]);
            if (v == GP_NONE) { /* HTTP's UnknownNode document */
                char what[64], msg[512];
                snprintf(what, sizeof what, "routers[%zu]", i);
                gp_unknown_router_msg(msg, sizeof msg, what, vals[i], gp_cli_str(a, "graph"));
                rc = gp_cli_answer_error(GP_HC_UNKNOWN_NODE, msg);
                goto done;
            }
            keep[v] = 1;
        }
    }
    if ((rc = netops_tables(a, pr, g, e, &t))) goto done;
    gp_cli_progress_stage(pr, "repair paths");
    gp_repair_opts o = {.node_protection = !gp_cli_flag(a, "link-only"),
                        .keep_paths = gp_cli_flag(a, "paths"),
                        .keep = keep};
    if (gp_repair_compute(t, &o, &rep, &err) != GP_OK) {
        rc = die(1, "%s", err.msg);
        goto done;
    }
    gp_cli_progress_stage(pr, "writing answer");
    if (csv) rc = gp_rj_csv(&s, t, rep, o.node_protection, flush_stdout, NULL);
    else rc = gp_rj_json(&s, gp_cli_str(a, "graph"), t, rep, o.node_protection, flush_stdout, NULL);
    if (!rc) rc = write_out(&s);
    else rc = 1;
done:
    gp_repair_free(rep);
    free(keep);
    free(vals);
    return netops_end(rc, pr, &s, t, g, e);
}

/* Reads a whole file (NUL-terminated); NULL on failure. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap + 1);
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *x = realloc(buf, 2 * cap + 1);
            if (!x) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = x, cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0, *len = n;
    return buf;
}

/* HTTP's POST .../load document: every loaded directed link, the unrouted volume. */
static int cmd_link_loads(const gp_cli_args *a) {
    gp_cli_progress *pr = NULL;
    gp_engine *e = NULL;
    gp_graph *g = NULL;
    gp_rt *t = NULL;
    gp_sbuf s = {0};
    gp_nj_names nm = {0};
    gp_nj_demand *rows = NULL;
    gp_demands *d = NULL;
    uint32_t *src = NULL, *dst = NULL;
    double *vol = NULL, *load = NULL, *cap = NULL, lost = 0;
    size_t len = 0, n = 0;
    char *text = NULL, msg[300];
    int rc = netops_load(a, &pr, &g, &e);
    if (!rc) rc = netops_tables(a, pr, g, e, &t);
    if (rc) goto done;
    if (!(text = read_file(gp_cli_str(a, "demands"), &len))) {
        rc = die(1, "cannot read the demand file %s", gp_cli_str(a, "demands"));
        goto done;
    }
    if (gp_nj_names_init(&nm, g) ||
        gp_nj_demands_csv(&nm, text, len, &rows, &n, (size_t)1 << 32, msg, sizeof msg)) {
        rc = die(2, "demand file: %s", msg);
        goto done;
    }
    uint32_t L = gp_plan_links(t);
    src = malloc((n + 1) * sizeof *src), dst = malloc((n + 1) * sizeof *dst);
    vol = malloc((n + 1) * sizeof *vol), load = malloc(((size_t)L + 1) * sizeof *load);
    cap = malloc(((size_t)L + 1) * sizeof *cap);
    gp_err err;
    if (!src || !dst || !vol || !load || !cap) {
        rc = die(1, "%s", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        src[i] = gp_graph_index(g, rows[i].s), dst[i] = gp_graph_index(g, rows[i].d),
        vol[i] = rows[i].v;
    if (gp_demands_build(g->n, src, dst, vol, n, &d, &err) ||
        gp_plan_load(t, d, 0, load, NULL, &lost, &err)) {
        rc = die(1, "%s", err.msg);
        goto done;
    }
    gp_plan_link_caps(t, cap);
    gp_sbuf_printf(&s, "{\"graph\":");
    gp_sbuf_json_str(&s, gp_cli_str(a, "graph"));
    gp_sbuf_printf(&s,
                   ",\"version\":\"%s\",\"demands\":%zu,\"total_volume\":%.17g,"
                   "\"unrouted_volume\":%.17g,\"links\":[",
                   g->version, n, d->total, lost);
    int first = 1;
    for (uint32_t l = 0; l < L; l++) {
        if (!(load[l] > 0)) continue;
        uint32_t u = gp_plan_link_tail(t, l), v = t->nb[l];
        gp_sbuf_printf(&s, "%s{\"from\":%lld,\"to\":%lld,\"from_name\":", first ? "" : ",",
                       (long long)g->ext[u], (long long)g->ext[v]);
        if (gp_graph_name(g, u)) gp_sbuf_json_str(&s, gp_graph_name(g, u));
        else gp_sbuf_printf(&s, "null");
        gp_sbuf_printf(&s, ",\"to_name\":");
        if (gp_graph_name(g, v)) gp_sbuf_json_str(&s, gp_graph_name(g, v));
        else gp_sbuf_printf(&s, "null");
        if (cap[l] > 0)
            gp_sbuf_printf(&s, ",\"load\":%.17g,\"capacity\":%.17g,\"utilization\":%.17g}", load[l],
                           cap[l], load[l] / cap[l]);
        else gp_sbuf_printf(&s, ",\"load\":%.17g,\"capacity\":null,\"utilization\":null}", load[l]);
        first = 0;
    }
    gp_sbuf_add(&s, "]}\n", 3);
    rc = write_out(&s);
done:
    gp_nj_names_free(&nm);
    free(text);
    free(rows);
    free(src);
    free(dst);
    free(vol);
    free(load);
    free(cap);
    gp_demands_free(d);
    return netops_end(rc, pr, &s, t, g, e);
}

/* clang-format off */
const gp_cli_cmd gp_cli_repair = {
    "repair", "LFA and TI-LFA repair paths and coverage for every router", rp_opts,
    GP_CLI_NOPTS(rp_opts), rp_ex, cmd_repair, NULL};
const gp_cli_cmd gp_cli_routing_tables = {
    "routing-tables", "OSPF-style routing tables with ECMP next hops", rt_opts,
    GP_CLI_NOPTS(rt_opts), rt_ex, cmd_routing_tables, NULL};
const gp_cli_cmd gp_cli_link_loads = {
    "link-loads", "ECMP link loads of a demand matrix (OSPF equal split)", ll_opts,
    GP_CLI_NOPTS(ll_opts), ll_ex, cmd_link_loads, NULL};
const gp_cli_cmd gp_cli_what_if = {
    "what-if", "routing changes after link/router failures or cost changes", wi_opts,
    GP_CLI_NOPTS(wi_opts), wi_ex, cmd_what_if, NULL};
/* clang-format on */
