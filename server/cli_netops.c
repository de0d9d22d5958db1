/* cli_netops.c - `gpath routing-tables` and `gpath what-if`: one-shot routing-table and failure
 * what-if answers on stdout as JSON (the same documents as the HTTP endpoints, server/netops_json.h).
 *
 * routing-tables prints {"graph", "version", "routers", "backend", "tables": [router, ...]} (or one
 * router object with --router). what-if prints {"version_before", "version_after", "changes": [...]};
 * with --each-link it fails every link (each unordered router pair joined by an arc) in turn and
 * prints one line per link: {"link": [u, v], "changes": [...]} (used by tests/test_netops_ref.sh).
 * Usage errors exit 2, failures 1.
 */
#include "cli_netops.h"

#include "../engine/ecmp.h"
#include "netops_json.h"
#include "params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

int gp_cli_netops_is(const char *cmd) {
    return cmd && (strcmp(cmd, "routing-tables") == 0 || strcmp(cmd, "what-if") == 0);
}

static void usage(FILE *f) {
    fputs("usage:\n"
          "  gpath routing-tables --graph SPEC [--router R] [--cost-rule RULE]\n"
          "        [--ref-bandwidth BPS] [--scale S] [--ecmp-max N] [--backend auto|cuda|cpu]\n"
          "  gpath what-if --graph SPEC [--fail-link U,V]... [--fail-router R]...\n"
          "        [--set-cost U,V,COST]... [--each-link] [load options as above]\n"
          "Routers (R, U, V) by id or by name.\n"
          "RULE: hops (default) or bandwidth (GraphML, SNDlib), routing (SNDlib), weights\n"
          "(Rocketfuel default). Prints JSON on stdout.\n",
          f);
}

static int die(int code, const char *fmt, const char *a) {
    fputs("gpath: ", stderr);
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return code;
}

static int parse_i64(const char *s, long long *out) {
    char *end;
    if (!s || !*s) return 0;
    *out = strtoll(s, &end, 10);
    return *end == '\0';
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

/* Tables after a change set, and the diff against base; prints via s. */
static int what_if_once(gp_engine *e, const gp_rt *base, const gp_link_change *ch, size_t nch,
                        const int64_t *fr, size_t nfr, gp_sbuf *s, uint32_t *scratch,
                        const char **version_after, char *vbuf, gp_err *err) {
    gp_graph *g2 = NULL;
    gp_rt *t2 = NULL;
    gp_rt_pair *p = NULL;
    size_t np = 0;
    int rc = gp_graph_change_links(base->g, ch, nch, fr, nfr, &g2, err);
    if (rc == GP_OK) rc = gp_engine_attach(e, g2, err); /* e.g. the CSR onto the GPU */
    if (rc == GP_OK) rc = gp_rt_update(e, base, g2, GP_RT_AUTO, 0, &t2, NULL, err);
    if (rc == GP_OK) rc = gp_rt_diff(base, t2, &p, &np, err);
    if (rc == GP_OK) {
        if (version_after) {
            memcpy(vbuf, g2->version, 17);
            *version_after = vbuf;
        }
        put_changes(s, base, t2, p, np, scratch);
    }
    free(p);
    gp_rt_free(t2);
    gp_graph_unref(g2);
    return rc;
}

int gp_cli_netops_main(int argc, char **argv) {
    const char *cmd = argv[1], *spec = NULL, *router = NULL, *backend = "auto";
    gp_load_opts lo = {0};
    long long ecmp_max = GP_ECMP_MAX_DEFAULT;
    int each_link = 0, rc = 1;
    gp_link_change *ch = calloc((size_t)argc, sizeof *ch);
    int64_t *fr = calloc((size_t)argc, sizeof *fr);
    /* router arguments are resolved (by id or name) once the graph is loaded */
    const char **ch_txt = calloc((size_t)argc, sizeof *ch_txt), **ch_opt = calloc((size_t)argc, sizeof *ch_opt);
    const char **fr_txt = calloc((size_t)argc, sizeof *fr_txt);
    size_t nch = 0, nfr = 0;
    gp_engine *e = NULL;
    gp_graph *g = NULL;
    gp_rt *t = NULL;
    uint32_t *scratch = NULL;
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    if (!ch || !fr || !ch_txt || !ch_opt || !fr_txt) {
        rc = die(1, "%s", "out of memory");
        goto done;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (strcmp(a, "--each-link") == 0) {
            each_link = 1;
            takes = 0;
        } else if (!v) {
            rc = die(EXIT_USAGE, "%s needs a value (or unknown option; see --help)", a);
            goto done;
        } else if (strcmp(a, "--graph") == 0) {
            spec = v;
        } else if (strcmp(a, "--router") == 0) {
            router = v;
        } else if (strcmp(a, "--cost-rule") == 0) {
            lo.cost_rule = v;
        } else if (strcmp(a, "--backend") == 0) {
            backend = v;
        } else if (strcmp(a, "--ref-bandwidth") == 0 || strcmp(a, "--scale") == 0) {
            char *end;
            double x = strtod(v, &end);
            if (*end || !(x > 0)) {
                rc = die(EXIT_USAGE, "%s must be a positive number", a);
                goto done;
            }
            if (a[2] == 'r') lo.ref_bandwidth = x;
            else lo.scale = x;
        } else if (strcmp(a, "--ecmp-max") == 0) {
            if (!parse_i64(v, &ecmp_max) || ecmp_max < 1 || ecmp_max > 1000000) {
                rc = die(EXIT_USAGE, "%s", "--ecmp-max must be an integer >= 1");
                goto done;
            }
        } else if (strcmp(a, "--fail-router") == 0) {
            fr_txt[nfr++] = v;
        } else if (strcmp(a, "--fail-link") == 0 || strcmp(a, "--set-cost") == 0) {
            ch_opt[nch] = a;
            ch_txt[nch++] = v;
        } else {
            rc = die(EXIT_USAGE, "unknown option '%s' (see --help)", a);
            goto done;
        }
        i += takes;
    }
    if (!spec) {
        usage(stderr);
        rc = die(EXIT_USAGE, "%s", "--graph is required");
        goto done;
    }
    g = gp_graph_load(spec, &lo, &err);
    if (!g) {
        rc = die(EXIT_USAGE, "%s", err.msg);
        goto done;
    }
    /* routers by id or name (server/params.h), so after the graph is loaded */
    for (size_t k = 0; k < nch; k++)
        if (gp_link_text(g, ch_txt[k], strcmp(ch_opt[k], "--set-cost") == 0, &ch[k], &err)) {
            rc = die(EXIT_USAGE, "%s", err.msg);
            goto done;
        }
    for (size_t k = 0; k < nfr; k++) {
        uint32_t v = gp_router_lookup(g, fr_txt[k]);
        if (v == GP_NONE) {
            rc = die(EXIT_USAGE, "--fail-router '%s': no router of that name or id", fr_txt[k]);
            goto done;
        }
        fr[k] = g->ext[v];
    }
    e = gp_engine_new(backend, 0, NULL, &err);
    if (!e || gp_engine_attach(e, g, &err) != GP_OK) {
        rc = die(1, "%s", err.msg);
        goto done;
    }
    if (gp_rt_build(e, g, (uint32_t)ecmp_max, 0, 0, NULL, NULL, &t, &err) != GP_OK) {
        rc = die(1, "%s", err.msg);
        goto done;
    }
    scratch = malloc((size_t)gp_nj_scratch(t) * sizeof *scratch);
    if (!scratch) {
        rc = die(1, "%s", "out of memory");
        goto done;
    }
    if (strcmp(cmd, "routing-tables") == 0) {
        if (router) {
            uint32_t i = gp_router_lookup(g, router);
            if (i == GP_NONE) {
                rc = die(EXIT_USAGE, "--router %s: no router of that name or id", router);
                goto done;
            }
            gp_nj_router(&s, t, i, NULL, scratch);
            gp_sbuf_add(&s, "\n", 1);
            rc = write_out(&s);
            goto done;
        }
        gp_sbuf_add(&s, "{\"graph\":", 9);
        gp_sbuf_json_str(&s, spec);
        gp_sbuf_printf(&s, ",\"version\":\"%s\",\"routers\":%u,\"backend\":\"%s\",\"tables\":[",
                       g->version, g->n, t->backend);
        for (uint32_t i = 0; i < g->n; i++) {
            if (i) gp_sbuf_add(&s, ",", 1);
            gp_nj_router(&s, t, i, NULL, scratch);
            if (s.len > (1u << 20) && (rc = write_out(&s))) goto done;
        }
        gp_sbuf_add(&s, "]}\n", 3);
        rc = write_out(&s);
        goto done;
    }
    /* what-if */
    if (each_link) {
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t a = t->nb_off[u]; a < t->nb_off[u + 1]; a++) {
                uint32_t v = t->nb[a];
                /* each unordered pair once: from its lower end, or from v when v has no arc back */
                int back = 0;
                for (uint32_t b = t->nb_off[v]; b < t->nb_off[v + 1]; b++) back |= t->nb[b] == u;
                if (back && v < u) continue;
                gp_link_change one = {.u = g->ext[u], .v = g->ext[v], .down = 1};
                gp_sbuf_printf(&s, "{\"link\":[%lld,%lld],\"changes\":", (long long)g->ext[u],
                               (long long)g->ext[v]);
                if (what_if_once(e, t, &one, 1, NULL, 0, &s, scratch, NULL, NULL, &err) != GP_OK) {
                    rc = die(1, "%s", err.msg);
                    goto done;
                }
                gp_sbuf_add(&s, "}\n", 2);
                if ((rc = write_out(&s))) goto done;
            }
        rc = 0;
        goto done;
    }
    const char *vafter = NULL;
    char vbuf[17];
    gp_sbuf_printf(&s, "{\"version_before\":\"%s\",\"changes\":", g->version);
    if (what_if_once(e, t, ch, nch, fr, nfr, &s, scratch, &vafter, vbuf, &err) != GP_OK) {
        rc = die(err.code == GP_ENOTFOUND || err.code == GP_EINVAL ? EXIT_USAGE : 1, "%s", err.msg);
        goto done;
    }
    gp_sbuf_printf(&s, ",\"version_after\":\"%s\"}\n", vafter);
    rc = write_out(&s);
done:
    gp_sbuf_free(&s);
    free(scratch);
    gp_rt_free(t);
    gp_graph_unref(g);
    gp_engine_free(e);
    free(ch);
    free(fr);
    free(ch_txt);
    free(ch_opt);
    free(fr_txt);
    return rc;
}
