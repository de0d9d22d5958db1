/* repair_json.c - JSON and CSV text of LFA / TI-LFA repair paths (format in repair_json.h). */
#include "server/api/repair_json.h"

#include <string.h>

#define FLUSH_AT (1u << 20)

static void put_cost(gp_sbuf *s, const gp_graph *g, uint64_t d) {
    if (d >= GP_INF) gp_sbuf_add(s, "null", 4);
    else if (g->scale == 1.0) gp_sbuf_printf(s, "%llu", (unsigned long long)d);
    else gp_sbuf_printf(s, "%.15g", gp_graph_cost(g, d));
}

static void put_id(gp_sbuf *s, const gp_graph *g, uint32_t v) {
    if (v == GP_NONE) gp_sbuf_add(s, "null", 4);
    else gp_sbuf_printf(s, "%lld", (long long)g->ext[v]);
}

/* "key":ID and, when the graph has names, ,"key_name":"..." */
static void put_node(gp_sbuf *s, const gp_graph *g, const char *key, uint32_t v) {
    gp_sbuf_printf(s, "\"%s\":", key);
    put_id(s, g, v);
    if (!g->names) return;
    gp_sbuf_printf(s, ",\"%s_name\":", key);
    const char *nm = v == GP_NONE ? NULL : gp_graph_name(g, v);
    if (nm) gp_sbuf_json_str(s, nm);
    else gp_sbuf_add(s, "null", 4);
}

static void put_share(gp_sbuf *s, const char *key, uint32_t k, uint32_t of) {
    if (of) gp_sbuf_printf(s, ",\"%s_share\":%.6f", key, (double)k / of);
    else gp_sbuf_printf(s, ",\"%s_share\":null", key);
}

static void put_cov(gp_sbuf *s, const gp_repair_cov *c, int node) {
    gp_sbuf_printf(s,
                   "\"destinations\":%u,\"lfa_link\":%u,\"tilfa_link\":%u,\"node_destinations\":%u,"
                   "\"lfa_node\":%u,\"tilfa_node\":",
                   c->dests, c->lfa_link, c->tilfa_link, c->node_dests, c->lfa_node);
    if (node) gp_sbuf_printf(s, "%u", c->tilfa_node);
    else gp_sbuf_add(s, "null", 4);
    put_share(s, "lfa_link", c->lfa_link, c->dests);
    put_share(s, "tilfa_link", c->tilfa_link, c->dests);
    put_share(s, "lfa_node", c->lfa_node, c->node_dests);
    if (node) put_share(s, "tilfa_node", c->tilfa_node, c->node_dests);
    else gp_sbuf_add(s, ",\"tilfa_node_share\":null", 24);
}

static void put_tilfa(gp_sbuf *s, const gp_graph *g, const gp_repair_router *R, const gp_tilfa *x) {
    gp_sbuf_add(s, "{\"cost\":", 8);
    put_cost(s, g, x->cost);
    gp_sbuf_add(s, ",", 1);
    put_node(s, g, "next_hop", x->next_hop);
    gp_sbuf_add(s, ",", 1);
    put_node(s, g, "p_node", x->p);
    gp_sbuf_add(s, ",", 1);
    put_node(s, g, "q_node", x->q);
    gp_sbuf_add(s, ",\"segments\":[", 13);
    for (uint32_t k = 0; k < x->nseg; k++) {
        const gp_repair_seg *sg = &R->seg[x->seg_off + k];
        if (k) gp_sbuf_add(s, ",", 1);
        if (sg->b == GP_NONE) {
            gp_sbuf_add(s, "{", 1);
            put_node(s, g, "node", sg->a);
            gp_sbuf_add(s, "}", 1);
        } else {
            gp_sbuf_printf(s, "{\"adjacency\":[%lld,%lld]}", (long long)g->ext[sg->a],
                           (long long)g->ext[sg->b]);
        }
    }
    gp_sbuf_add(s, "]", 1);
    if (x->path_len) {
        gp_sbuf_add(s, ",\"path\":[", 9);
        for (uint32_t k = 0; k < x->path_len; k++)
            gp_sbuf_printf(s, "%s%lld", k ? "," : "", (long long)g->ext[R->path[x->path_off + k]]);
        gp_sbuf_add(s, "]", 1);
    }
    gp_sbuf_add(s, "}", 1);
}

static int maybe_flush(gp_sbuf *s, int (*flush)(void *, gp_sbuf *), void *ctx) {
    return flush && s->len > FLUSH_AT ? flush(ctx, s) : 0;
}

int gp_rj_json(gp_sbuf *s, const char *graph, const gp_rt *t, const gp_repair *r,
               int node_protection, int (*flush)(void *ctx, gp_sbuf *s), void *ctx) {
    const gp_graph *g = t->g;
    gp_sbuf_add(s, "{\"graph\":", 9);
    gp_sbuf_json_str(s, graph);
    gp_sbuf_printf(s, ",\"version\":\"%s\",\"backend\":\"%s\",\"weight_unit\":", g->version,
                   t->backend);
    gp_sbuf_json_str(s, g->unit_name);
    gp_sbuf_printf(s, ",\"routers\":%u,\"node_protection\":%s,\"coverage\":{", r->n,
                   node_protection ? "true" : "false");
    put_cov(s, &r->total, node_protection);
    gp_sbuf_printf(s, "},\"spf_runs\":%llu,\"compute_ms\":%.3f,\"per_router\":[",
                   (unsigned long long)r->spf_runs, r->seconds * 1e3);
    for (uint32_t i = 0; i < r->n; i++) {
        gp_sbuf_add(s, i ? ",{" : "{", i ? 2 : 1);
        put_node(s, g, "router", i);
        gp_sbuf_add(s, ",", 1);
        put_cov(s, &r->r[i].cov, node_protection);
        gp_sbuf_add(s, "}", 1);
        if (maybe_flush(s, flush, ctx)) return -1;
    }
    gp_sbuf_add(s, "],\"repairs\":[", 13);
    int first = 1;
    for (uint32_t i = 0; i < r->n; i++) {
        const gp_repair_router *R = &r->r[i];
        for (size_t k = 0; k < R->ne; k++) {
            const gp_repair_entry *e = &R->e[k];
            gp_sbuf_add(s, first ? "{" : ",{", first ? 1 : 2);
            first = 0;
            put_node(s, g, "router", i);
            gp_sbuf_add(s, ",", 1);
            put_node(s, g, "destination", e->dest);
            gp_sbuf_add(s, ",", 1);
            put_node(s, g, "primary_next_hop", e->nh);
            gp_sbuf_add(s, ",\"weight\":", 10);
            put_cost(s, g, gp_rt_dist(t, i, e->dest));
            gp_sbuf_add(s, ",", 1);
            put_node(s, g, "lfa", e->lfa);
            gp_sbuf_printf(s, ",\"lfa_node_protecting\":%s,\"lfa_downstream\":%s,\"link_repair\":",
                           e->lfa_bits & GP_LFA_NODE ? "true" : "false",
                           e->lfa_bits & GP_LFA_DOWNSTREAM ? "true" : "false");
            put_tilfa(s, g, R, &e->link);
            gp_sbuf_add(s, ",\"node_repair\":", 15);
            if (e->node_applies) put_tilfa(s, g, R, &e->node);
            else gp_sbuf_add(s, "null", 4);
            gp_sbuf_add(s, "}", 1);
            if (maybe_flush(s, flush, ctx)) return -1;
        }
    }
    gp_sbuf_add(s, "]}\n", 3);
    return 0;
}

/* A CSV field: the name quoted when it needs it, empty when none. */
static void csv_name(gp_sbuf *s, const gp_graph *g, uint32_t v) {
    const char *nm = v == GP_NONE ? NULL : gp_graph_name(g, v);
    if (!nm) return;
    if (!strpbrk(nm, ",\"\r\n")) {
        gp_sbuf_add(s, nm, strlen(nm));
        return;
    }
    gp_sbuf_add(s, "\"", 1);
    for (const char *p = nm; *p; p++) {
        if (*p == '"') gp_sbuf_add(s, "\"\"", 2);
        else gp_sbuf_add(s, p, 1);
    }
    gp_sbuf_add(s, "\"", 1);
}

static void csv_id_name(gp_sbuf *s, const gp_graph *g, uint32_t v) {
    if (v != GP_NONE) gp_sbuf_printf(s, "%lld", (long long)g->ext[v]);
    gp_sbuf_add(s, ",", 1);
    csv_name(s, g, v);
    gp_sbuf_add(s, ",", 1);
}

static void csv_row(gp_sbuf *s, const gp_rt *t, const gp_repair_router *R, uint32_t i,
                    const gp_repair_entry *e, int node) {
    const gp_graph *g = t->g;
    const gp_tilfa *x = node ? &e->node : &e->link;
    csv_id_name(s, g, i);
    csv_id_name(s, g, e->dest);
    csv_id_name(s, g, e->nh);
    gp_sbuf_add(s, node ? "node," : "link,", 5);
    put_cost(s, g, gp_rt_dist(t, i, e->dest));
    gp_sbuf_add(s, ",", 1);
    uint32_t lfa = node && !(e->lfa_bits & GP_LFA_NODE) ? GP_NONE : e->lfa;
    csv_id_name(s, g, lfa);
    if (x->cost < GP_INF) put_cost(s, g, x->cost);
    gp_sbuf_add(s, ",", 1);
    csv_id_name(s, g, x->next_hop);
    csv_id_name(s, g, x->p);
    csv_id_name(s, g, x->q);
    for (uint32_t k = 0; k < x->nseg; k++) {
        const gp_repair_seg *sg = &R->seg[x->seg_off + k];
        if (sg->b == GP_NONE)
            gp_sbuf_printf(s, "%snode:%lld", k ? " " : "", (long long)g->ext[sg->a]);
        else
            gp_sbuf_printf(s, "%sadj:%lld-%lld", k ? " " : "", (long long)g->ext[sg->a],
                           (long long)g->ext[sg->b]);
    }
    gp_sbuf_add(s, "\n", 1);
}

int gp_rj_csv(gp_sbuf *s, const gp_rt *t, const gp_repair *r, int node_protection,
              int (*flush)(void *ctx, gp_sbuf *s), void *ctx) {
    static const char head[] =
        "router,router_name,destination,destination_name,primary_next_hop,primary_next_hop_name,"
        "protection,weight,lfa,lfa_name,repair_cost,next_hop,next_hop_name,p_node,p_node_name,"
        "q_node,q_node_name,segments\n";
    gp_sbuf_add(s, head, sizeof head - 1);
    for (uint32_t i = 0; i < r->n; i++) {
        const gp_repair_router *R = &r->r[i];
        for (size_t k = 0; k < R->ne; k++) {
            csv_row(s, t, R, i, &R->e[k], 0);
            if (node_protection && R->e[k].node_applies) csv_row(s, t, R, i, &R->e[k], 1);
            if (maybe_flush(s, flush, ctx)) return -1;
        }
    }
    return 0;
}
