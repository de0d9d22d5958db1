/* netops.c - network-operations endpoints: OSPF-style routing tables with ECMP next-hop sets,
 * link cost changes (new graph versions), failure what-ifs and recomputation jobs.
 *
 * Tables come from engine/ecmp.h and are kept per graph version: a small in-process LRU
 * (NETOPS_LRU entries, tables over NETOPS_LRU_MAX_BYTES are not kept), then the results of
 * finished jobs, then the SQLite matrix cache (the all-pairs distance matrix, the same entry the
 * apsp endpoint uses: kind apsp without next hops, keyed by the graph version), and only then a
 * fresh computation on the engine (GPU APSP when present), whose distances are stored in that
 * cache. Graphs over max_apsp_nodes routers are refused with 413 TooBig.
 *
 * PATCH .../links derives and attaches a new graph version (engine/change.h gp_engine_change_links,
 * as what-if does), updates the tables incrementally from the old version's when those are at hand
 * (else computes them), caches them, and publishes the new version through the registry
 * (gp_registry_replace) if nobody changed the graph meanwhile (else 503 Busy: retry). A reload
 * re-reads the graph's source and so drops patched costs.
 * Jobs (engine/jobs.h) run on one worker started on first use; their distances land in the
 * SQLite cache when it is on (the job status says "stored": "sqlite" or "memory").
 */
#include "server/v1/netops.h"

#include "engine/change.h"
#include "engine/jobs.h"
#include "graph/parallel.h"
#include "storage/cache.h"
#include "server/cache.h"
#include "server/api/netops_json.h"
#include "server/api/params.h"
#include "server/http/json.h"
#include "server/v1/params.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NETOPS_LRU 4
#define NETOPS_LRU_MAX_BYTES (1ULL << 30)
#define NETOPS_JOBS_KEEP 16

static struct {
    pthread_mutex_t mu;
    gp_rt *lru[NETOPS_LRU]; /* most recent first */
    gp_jobs *jobs;
    int stopped;
} ns = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint32_t ecmp_max_cfg(void) {
    const gp_config *c = gp_http_config();
    return c && c->ecmp_max > 0 ? (uint32_t)c->ecmp_max : GP_ECMP_MAX_DEFAULT;
}

static uint64_t max_nodes_cfg(void) {
    const gp_config *c = gp_http_config();
    return c && c->max_apsp_nodes > 0 ? (uint64_t)c->max_apsp_nodes : UINT64_MAX;
}

static void lru_put(gp_rt *t) {
    if (gp_rt_bytes(t->g) > NETOPS_LRU_MAX_BYTES) return;
    pthread_mutex_lock(&ns.mu);
    if (!ns.stopped) {
        int k = 0;
        while (k < NETOPS_LRU && ns.lru[k] && ns.lru[k]->g->hash != t->g->hash) k++;
        if (k == NETOPS_LRU) k = NETOPS_LRU - 1;
        gp_rt *drop = ns.lru[k];
        memmove(&ns.lru[1], &ns.lru[0], (size_t)k * sizeof ns.lru[0]);
        ns.lru[0] = gp_rt_ref(t);
        gp_rt_free(drop);
    }
    pthread_mutex_unlock(&ns.mu);
}

static gp_rt *lru_get(uint64_t hash) {
    gp_rt *t = NULL;
    pthread_mutex_lock(&ns.mu);
    for (int k = 0; k < NETOPS_LRU && !t; k++)
        if (ns.lru[k] && ns.lru[k]->g->hash == hash && ns.lru[k]->ecmp_max == ecmp_max_cfg())
            t = gp_rt_ref(ns.lru[k]);
    pthread_mutex_unlock(&ns.mu);
    return t;
}

static int store_dist(void *ctx, const char *graph, const gp_graph *g, const uint64_t *dist) {
    (void)ctx;
    gp_cache *c = gp_srv_cache();
    if (!c) return 0;
    gp_cache_key k = {.graph = graph,
                      .graph_hash = g->hash,
                      .kind = GP_CACHE_APSP,
                      .ns = g->n,
                      .nt = g->n,
                      .next_hops = 0};
    gp_err err;
    return gp_cache_put(c, &k, dist, NULL, &err) == GP_OK;
}

static gp_jobs *jobs_get(gp_err *err) {
    pthread_mutex_lock(&ns.mu);
    if (!ns.jobs && !ns.stopped)
        ns.jobs = gp_jobs_new(gp_http_engine(), ecmp_max_cfg(), 0, NETOPS_JOBS_KEEP, store_dist,
                              NULL, err);
    else if (!ns.jobs) gp_err_set(err, GP_EBUSY, "the service is stopping");
    gp_jobs *j = ns.jobs;
    pthread_mutex_unlock(&ns.mu);
    return j;
}

static void downs_free(void);

void gp_srv_netops_stop(void) {
    downs_free();
    pthread_mutex_lock(&ns.mu);
    ns.stopped = 1;
    gp_jobs *j = ns.jobs;
    ns.jobs = NULL;
    gp_rt *lru[NETOPS_LRU];
    memcpy(lru, ns.lru, sizeof lru);
    memset(ns.lru, 0, sizeof ns.lru);
    pthread_mutex_unlock(&ns.mu);
    gp_jobs_free(j);
    for (int k = 0; k < NETOPS_LRU; k++) gp_rt_free(lru[k]);
}

/* ---- parameters (server/api/params.h) ---- */
static const gp_param routing_table_params[] = {
    {"router", GP_PT_ROUTER, GP_IN_QUERY, 0, 0, 0, NULL},
    {"router_name", GP_PT_STR, GP_IN_QUERY, 0, 0, 256, NULL},
};
static const gp_endpoint routing_table_ep =
    GP_ENDPOINT("routing-table", routing_table_params, GP_BODY_NONE, NULL);
static const gp_endpoint routing_tables_ep = GP_ENDPOINT_NONE("routing-tables");
static const gp_endpoint routers_ep = GP_ENDPOINT_NONE("routers");
static const gp_endpoint links_ep = GP_ENDPOINT_NONE("links");
static const gp_param links_patch_params[] = {
    {"links", GP_PT_JSON, GP_IN_BODY, 1, 0, 0, NULL},
};
static const gp_endpoint links_patch_ep = GP_ENDPOINT(
    "PATCH links", links_patch_params, GP_BODY_REQUIRED,
    "{\"links\": [{\"link\": [u, v], \"cost\": c} | {\"link\": [u, v], \"down\": true}, ...]}");
static const gp_param what_if_params[] = {
    {"fail_links", GP_PT_JSON, GP_IN_BODY, 0, 0, 0, NULL},
    {"fail_routers", GP_PT_JSON, GP_IN_BODY, 0, 0, 0, NULL},
    {"set_costs", GP_PT_JSON, GP_IN_BODY, 0, 0, 0, NULL},
};
static const gp_endpoint what_if_ep =
    GP_ENDPOINT("what-if", what_if_params, GP_BODY_REQUIRED,
                "{\"fail_links\": [[u, v], ...], \"fail_routers\": [r, ...], \"set_costs\": "
                "[{\"link\": [u, v], \"cost\": c}, ...]} (any of them; routers by id or name)");
static const gp_endpoint jobs_post_ep = GP_ENDPOINT_NONE("jobs");
static const gp_endpoint job_get_ep = GP_ENDPOINT_NONE("jobs/{id}");

static void answer_err(gp_req *r, const gp_err *err) {
    if (err->code == GP_ETOOBIG) gp_http_error(r, GP_HC_TOO_BIG, "%s", err->msg);
    else gp_http_error_err(r, GP_HC_INVALID_QUERY, err);
}

/* The routing tables of g (the request's graph), referenced; NULL after answering an error. */
gp_rt *gp_srv_netops_tables(gp_req *r, gp_graph *g) {
    gp_rt *t = lru_get(g->hash);
    if (t) return t;
    gp_err err;
    gp_err_clear(&err);
    pthread_mutex_lock(&ns.mu);
    gp_jobs *j = ns.jobs;
    if (j) t = gp_jobs_result_for(j, g->hash);
    pthread_mutex_unlock(&ns.mu);
    if (t && t->ecmp_max == ecmp_max_cfg()) {
        lru_put(t);
        return t;
    }
    gp_rt_free(t);
    t = NULL;
    if (g->n > max_nodes_cfg()) {
        gp_http_error(r, GP_HC_TOO_BIG,
                      "routing tables need all-pairs distances: %u routers is over max_apsp_nodes "
                      "(%llu)",
                      g->n, (unsigned long long)max_nodes_cfg());
        return NULL;
    }
    uint64_t *dist = malloc((size_t)g->n * g->n * sizeof *dist);
    if (dist && gp_srv_cache_lookup(r, GP_CACHE_APSP, NULL, g->n, NULL, g->n, 0, dist, NULL)) {
        if (gp_rt_from_dist(g, dist, ecmp_max_cfg(), 0, &t, &err) != GP_OK) t = NULL;
    }
    free(dist);
    if (!t) {
        if (gp_rt_build(gp_http_engine(), g, ecmp_max_cfg(), 0, 0, &t, &err) != GP_OK) {
            answer_err(r, &err);
            return NULL;
        }
        gp_srv_cache_store(r, GP_CACHE_APSP, NULL, g->n, NULL, g->n, 0, t->dist, NULL);
    }
    lru_put(t);
    return t;
}

static void add_header_members(gp_sbuf *s, gp_req *r, const gp_rt *t) {
    gp_nj_header(s, gp_req_graph_name(r), t); /* the CLI's too (server/api/netops_json.h) */
}

static void send_sbuf(gp_req *r, int status, gp_sbuf *s) {
    if (s->oom) {
        gp_sbuf_free(s);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory rendering the response");
        return;
    }
    gp_sbuf_add(s, "\n", 1);
    gp_http_send(r, status, "application/json", s->p, s->len); /* takes the buffer */
    s->p = NULL;
    s->len = s->cap = 0;
}

void gp_h_routing_table(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &routing_table_ep, &args)) return;
    const gp_arg *ra = gp_args_get(&args, "router"), *na = gp_args_get(&args, "router_name");
    uint32_t i;
    if (ra->present && na->present) {
        gp_http_error(r, GP_HC_INVALID_QUERY, "give either 'router' or 'router_name', not both");
        return;
    }
    if (na->present) {
        i = GP_NONE;
        for (uint32_t v = 0; v < g->n && i == GP_NONE; v++)
            if (gp_graph_name(g, v) && strcmp(gp_graph_name(g, v), na->s) == 0) i = v;
        if (i == GP_NONE) {
            gp_http_error(r, GP_HC_UNKNOWN_NODE, "router_name: no router named '%.64s'", na->s);
            return;
        }
    } else if (ra->present) {
        if ((i = gp_req_router(r, &ra->place, "router")) == GP_NONE) return;
    } else {
        gp_http_error(
            r, GP_HC_INVALID_QUERY,
            "missing query parameter 'router' (a router id or name; or router_name=NAME)");
        return;
    }
    gp_rt *t = gp_srv_netops_tables(r, g);
    if (!t) return;
    uint32_t *scratch = malloc((size_t)gp_nj_scratch(t) * sizeof *scratch);
    gp_sbuf s = {0};
    gp_sbuf hdr = {0};
    if (scratch) {
        add_header_members(&hdr, r, t);
        gp_nj_router(&s, t, i, hdr.p, scratch);
    }
    gp_sbuf_free(&hdr);
    free(scratch);
    gp_rt_free(t);
    if (!scratch) s.oom = 1;
    send_sbuf(r, 200, &s);
}

/* ---- streamed all-routers tables ---- */

typedef struct tstream {
    gp_rt *t;
    uint32_t next; /* next router to render */
    int state;     /* 0 header pending, 1 routers, 2 closing written, 3 done */
    gp_sbuf buf;
    size_t off; /* bytes of buf already sent */
    uint32_t *scratch;
} tstream;

static long tstream_fill(void *ctx, char *out, size_t max) {
    tstream *s = ctx;
    while (s->off == s->buf.len) {
        gp_sbuf_reset(&s->buf);
        s->off = 0;
        if (s->state == 1) {
            /* render a batch of routers (~64 KiB or more) */
            while (s->next < s->t->n && s->buf.len < 65536) {
                if (s->next) gp_sbuf_add(&s->buf, ",", 1);
                gp_nj_router(&s->buf, s->t, s->next++, NULL, s->scratch);
            }
            if (s->next == s->t->n) {
                gp_sbuf_add(&s->buf, "]}\n", 3);
                s->state = 2;
            }
        } else if (s->state == 2) {
            s->state = 3;
        }
        if (s->buf.oom) return -1;
        if (s->state == 3 && s->buf.len == 0) return 0;
    }
    size_t k = s->buf.len - s->off < max ? s->buf.len - s->off : max;
    memcpy(out, s->buf.p + s->off, k);
    s->off += k;
    return (long)k;
}

static void tstream_done(void *ctx) {
    tstream *s = ctx;
    gp_rt_free(s->t);
    gp_sbuf_free(&s->buf);
    free(s->scratch);
    free(s);
}

void gp_h_routing_tables(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &routing_tables_ep, &args)) return;
    gp_rt *t = gp_srv_netops_tables(r, g);
    if (!t) return;
    tstream *s = calloc(1, sizeof *s);
    if (s) s->scratch = malloc((size_t)gp_nj_scratch(t) * sizeof *s->scratch);
    if (!s || !s->scratch) {
        if (s) free(s);
        gp_rt_free(t);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return;
    }
    s->t = t;
    gp_sbuf_add(&s->buf, "{", 1);
    add_header_members(&s->buf, r, t);
    gp_sbuf_printf(&s->buf, "\"routers\":%u,\"tables\":[", g->n);
    s->state = g->n ? 1 : 2;
    if (!g->n) gp_sbuf_add(&s->buf, "]}\n", 3);
    gp_http_stream(r, 200, "application/json", tstream_fill, tstream_done, s);
}

/* ---- body parsing: every error names the field the client sent ---- */

/* Answers a gp_json_* failure: InvalidJson for a wrong JSON type, InvalidQuery for a bad value. */
static void json_fail(gp_req *r, const gp_err *e) {
    gp_http_error(r, e->code == GP_EPARSE ? GP_HC_INVALID_JSON : GP_HC_INVALID_QUERY, "%s", e->msg);
}

/* A router reference (id or name) -> external id; answers 400 on failure. */
static int router_json(gp_req *r, const cJSON *j, const char *what, int64_t *id) {
    gp_place p;
    gp_err e;
    if (gp_json_router(j, &p, what, &e)) {
        json_fail(r, &e);
        return -1;
    }
    uint32_t v = gp_req_router(r, &p, what);
    if (v == GP_NONE) return -1;
    *id = gp_req_graph(r)->ext[v];
    return 0;
}

/* [u, v] of router ids or names -> external ids of a link that exists (404 NotFound naming the
 * field when the routers are not joined); answers the error and returns -1. */
static int parse_link(gp_req *r, const cJSON *a, const char *what, int64_t *u, int64_t *v) {
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2) {
        gp_http_error(r, GP_HC_INVALID_JSON, "%s must be [router, router] (ids or names)", what);
        return -1;
    }
    char w[96];
    snprintf(w, sizeof w, "%s[0]", what);
    if (router_json(r, a->child, w, u)) return -1;
    snprintf(w, sizeof w, "%s[1]", what);
    if (router_json(r, a->child->next, w, v)) return -1;
    char msg[512]; /* the CLI's message too (server/api/params.h) */
    if (!gp_link_joined(gp_req_graph(r), what, *u, *v, msg, sizeof msg)) {
        gp_http_error(r, GP_HC_NOT_FOUND, "%s", msg);
        return -1;
    }
    return 0;
}

/* A link cost: a number >= 0 that the graph's fixed-point scale can store. */
static int parse_cost(gp_req *r, const cJSON *c, const char *what, double *out) {
    char w[96];
    snprintf(w, sizeof w, "%s.cost", what);
    gp_err e;
    if (!c) {
        gp_http_error(r, GP_HC_INVALID_JSON, "%s is missing", w);
        return -1;
    }
    if (gp_json_num(c, 0, INFINITY, out, w, &e)) {
        json_fail(r, &e);
        return -1;
    }
    double scale = gp_req_graph(r)->scale, most = (double)UINT32_MAX / (scale > 0 ? scale : 1);
    if (*out > most) { /* the builder's advice (a smaller --scale) is no help to a request */
        gp_http_error(r, GP_HC_INVALID_QUERY,
                      "%s: %g is over the largest cost this graph stores, %.9g (its weights are "
                      "integers of cost x %g below 2^32)",
                      w, *out, most, scale);
        return -1;
    }
    gp_builder *b = gp_builder_new(scale);
    uint32_t wt;
    int rc = b ? gp_builder_cost(b, *out, &wt, &e) : gp_err_set(&e, GP_ENOMEM, "out of memory");
    gp_builder_free(b);
    if (rc) {
        gp_http_error(r, rc == GP_ENOMEM ? GP_HC_INTERNAL : GP_HC_INVALID_QUERY, "%s: %s", w,
                      e.msg);
        return -1;
    }
    return 0;
}

/* Links taken down by PATCH .../links, per graph name, valid for the version they lead to (a
 * reload or another source's version drops them): what GET .../links lists as "down". */
#define DOWN_GRAPHS 16
typedef struct down_link {
    int64_t u, v;
    uint64_t w_uv, w_vu; /* stored weights before (GP_INF: no arc that way) */
} down_link;
static struct {
    pthread_mutex_t mu;
    struct {
        char graph[65];
        uint64_t hash;
        size_t n;
        down_link *l;
    } g[DOWN_GRAPHS];
} downs = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t arc_w(const gp_graph *g, uint32_t u, uint32_t v) {
    uint32_t a = gp_graph_find_arc(g, u, v);
    return a == GP_NONE ? GP_INF : g->w[a];
}

static void downs_free(void) {
    pthread_mutex_lock(&downs.mu);
    for (int k = 0; k < DOWN_GRAPHS; k++) {
        free(downs.g[k].l);
        memset(&downs.g[k], 0, sizeof downs.g[k]);
    }
    pthread_mutex_unlock(&downs.mu);
}

/* Records that g2 (derived from g by changes ch) has the down links of g plus those of ch. */
static void downs_record(const char *graph, const gp_graph *g, const gp_graph *g2,
                         const gp_link_change *ch, size_t nch) {
    pthread_mutex_lock(&downs.mu);
    int k = 0, free_k = -1;
    while (k < DOWN_GRAPHS && strcmp(downs.g[k].graph, graph) != 0) {
        if (free_k < 0 && !downs.g[k].graph[0]) free_k = k;
        k++;
    }
    if (k == DOWN_GRAPHS) k = free_k >= 0 ? free_k : 0;
    size_t keep = downs.g[k].hash == g->hash && strcmp(downs.g[k].graph, graph) == 0 ? downs.g[k].n
                                                                                     : 0;
    size_t add = 0;
    for (size_t i = 0; i < nch; i++) add += ch[i].down;
    down_link *l = NULL;
    if (keep + add == 0 || !(l = realloc(downs.g[k].l, (keep + add) * sizeof *l))) {
        /* nothing down (or out of memory: at worst GET .../links misses a down link) */
        free(downs.g[k].l);
        keep = add = 0;
    }
    size_t n = keep;
    for (size_t i = 0; l && i < nch; i++)
        if (ch[i].down) {
            uint32_t u = gp_graph_index(g, ch[i].u), v = gp_graph_index(g, ch[i].v);
            l[n++] = (down_link){ch[i].u, ch[i].v, arc_w(g, u, v), arc_w(g, v, u)};
        }
    snprintf(downs.g[k].graph, sizeof downs.g[k].graph, "%s", graph);
    downs.g[k].hash = g2->hash;
    downs.g[k].n = n;
    downs.g[k].l = l;
    pthread_mutex_unlock(&downs.mu);
}

/* A link as both of its ends (smaller first) and its place in the request. */
typedef struct link_at {
    int64_t a, b;
    size_t idx;
} link_at;

static int cmp_link_at(const void *x, const void *y) {
    const link_at *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

/* One change per link and request: a link named twice (either way round) is 400 naming both
 * entries (the last silently won, and both were counted in links_changed). Answers, returns -1. */
static int duplicate_links(gp_req *r, const gp_link_change *ch, size_t n) {
    link_at *l = malloc((n ? n : 1) * sizeof *l);
    if (!l) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        l[i] = (link_at){ch[i].u < ch[i].v ? ch[i].u : ch[i].v,
                         ch[i].u < ch[i].v ? ch[i].v : ch[i].u, i};
    qsort(l, n, sizeof *l, cmp_link_at);
    int rc = 0;
    for (size_t i = 1; i < n && !rc; i++)
        if (l[i].a == l[i - 1].a && l[i].b == l[i - 1].b) {
            gp_http_error(r, GP_HC_INVALID_QUERY,
                          "links[%zu] and links[%zu] both change the link between %lld and %lld: "
                          "one change per link in a request",
                          l[i - 1].idx, l[i].idx, (long long)l[i].a, (long long)l[i].b);
            rc = -1;
        }
    free(l);
    return rc;
}

/* The common form of a PATCH .../links entry checked without answering: {"link": [U, V], "cost":
 * C} or {"link": [U, V], "down": true} with U, V numeric ids of routers joined by a link and C a
 * cost the graph stores. Entries in ranges on threads (10,000 entries of a 1% change: 19 ms one at
 * a time on the 1M map); an entry of any other form (names, errors) is left to the request's
 * thread, which answers its errors in order. */
typedef struct fast_job {
    const gp_graph *g;
    const cJSON *const *items;
    gp_link_change *ch;
    double most;
    int slow; /* atomic: an entry not of the common form */
} fast_job;

static int fast_id(const gp_graph *g, const cJSON *v, int64_t *id) {
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < -9.2e18 || d > 9.2e18) return 0;
    *id = (int64_t)d;
    return gp_graph_index(g, *id) != GP_NONE;
}

/* The largest cost g stores (parse_cost's bound). */
static double cost_most(const gp_graph *g) {
    return (double)UINT32_MAX / (g->scale > 0 ? g->scale : 1);
}

/* 1 when routers u and v of g are joined by a link and cost (unless down) is one g stores. */
static int fast_ok(const gp_graph *g, double most, const gp_link_change *c) {
    uint32_t iu = gp_graph_index(g, c->u), iv = gp_graph_index(g, c->v);
    if (iu == GP_NONE || iv == GP_NONE) return 0;
    if (gp_graph_find_arc(g, iu, iv) == GP_NONE && gp_graph_find_arc(g, iv, iu) == GP_NONE)
        return 0;
    return c->down || (isfinite(c->cost) && c->cost >= 0 && c->cost <= most);
}

static int fast_entry(const fast_job *j, const cJSON *it, gp_link_change *out) {
    const cJSON *l = NULL, *c = NULL, *d = NULL, *x;
    if (!cJSON_IsObject(it)) return 0;
    cJSON_ArrayForEach(x, it) {
        if (!x->string) return 0;
        if (!strcmp(x->string, "link") && !l) l = x;
        else if (!strcmp(x->string, "cost") && !c) c = x;
        else if (!strcmp(x->string, "down") && !d) d = x;
        else return 0;
    }
    if (!cJSON_IsArray(l) || !l->child || !l->child->next || l->child->next->next) return 0;
    int64_t u, v;
    if (!fast_id(j->g, l->child, &u) || !fast_id(j->g, l->child->next, &v)) return 0;
    *out = (gp_link_change){.u = u, .v = v};
    if (cJSON_IsTrue(d) && !c) out->down = 1;
    else if (!c || d || !cJSON_IsNumber(c)) return 0;
    else out->cost = c->valuedouble;
    return fast_ok(j->g, j->most, out);
}

static void fast_range(void *jv, uint64_t lo, uint64_t hi) {
    fast_job *j = jv;
    for (uint64_t i = lo; i < hi && !__atomic_load_n(&j->slow, __ATOMIC_RELAXED); i++)
        if (!fast_entry(j, j->items[i], &j->ch[i])) __atomic_store_n(&j->slow, 1, __ATOMIC_RELAXED);
}

/* The common form read straight from the body's text: {"links": [E, ...]}, each E an object of
 * "link": [U, V] and "cost": C or "down": true (any order), U and V integers of at most 15
 * digits (cJSON's doubles hold them exactly), C a JSON number, JSON whitespace anywhere; every
 * entry a link of g with a cost g stores, checked on all CPUs. Anything else (names, other
 * keys, escapes, a query string, an error) is left to links_json, which answers as before. */
static int scan_lit(gp_json_scan *t, const char *lit) {
    gp_json_scan_ws(t);
    size_t n = strlen(lit);
    if ((size_t)(t->e - t->p) < n || memcmp(t->p, lit, n) != 0) return 0;
    t->p += n;
    return 1;
}

/* A JSON number (integer: -?digits, at most 15 of them) into *out. */
static int scan_num(gp_json_scan *t, int integer, double *out) {
    gp_json_scan_ws(t);
    const char *p = t->p, *e = t->e;
    int neg = p < e && *p == '-';
    p += neg;
    const char *d0 = p;
    if (p >= e || *p < '0' || *p > '9' || (*p == '0' && p + 1 < e && p[1] >= '0' && p[1] <= '9'))
        return 0;
    int64_t v = 0;
    while (p < e && *p >= '0' && *p <= '9' && p - d0 < 16) v = v * 10 + (*p++ - '0');
    if (p - d0 > 15 || (p < e && *p >= '0' && *p <= '9')) return 0; /* beyond exact doubles */
    int frac = p < e && (*p == '.' || *p == 'e' || *p == 'E');
    if (!frac) {
        *out = neg ? -(double)v : (double)v;
        t->p = p;
        return 1;
    }
    if (integer) return 0;
    return gp_json_scan_num(t, out); /* the whole number again, as cJSON reads it */
}

/* One entry into *c: 1, or 0 when not of the common form. */
static int scan_entry(gp_json_scan *t, gp_link_change *c) {
    int l = 0, k = 0, d = 0;
    double u, v;
    *c = (gp_link_change){0};
    if (!gp_json_scan_char(t, '{')) return 0;
    do {
        if (scan_lit(t, "\"link\"")) {
            if (l++ || !gp_json_scan_char(t, ':') || !gp_json_scan_char(t, '[') ||
                !scan_num(t, 1, &u) || !gp_json_scan_char(t, ',') || !scan_num(t, 1, &v) ||
                !gp_json_scan_char(t, ']'))
                return 0;
            c->u = (int64_t)u, c->v = (int64_t)v;
        } else if (scan_lit(t, "\"cost\"")) {
            if (k++ || !gp_json_scan_char(t, ':') || !scan_num(t, 0, &c->cost)) return 0;
        } else if (scan_lit(t, "\"down\"")) {
            if (d++ || !gp_json_scan_char(t, ':') || !scan_lit(t, "true")) return 0;
            c->down = 1;
        } else {
            return 0;
        }
    } while (gp_json_scan_char(t, ','));
    return gp_json_scan_char(t, '}') && l && k + d == 1;
}

typedef struct text_job {
    const gp_graph *g;
    const gp_link_change *ch;
    double most;
    int bad; /* atomic */
} text_job;

static void text_range(void *jv, uint64_t lo, uint64_t hi) {
    text_job *j = jv;
    for (uint64_t i = lo; i < hi && !__atomic_load_n(&j->bad, __ATOMIC_RELAXED); i++)
        if (!fast_ok(j->g, j->most, &j->ch[i])) __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);
}

static void no_arg(void *ctx, const char *name, const char *value) {
    (void)ctx, (void)name, (void)value;
}

/* 1 with *out (n entries, malloc'd) when the whole body is of the common form and valid; else 0,
 * nothing answered. */
static int links_text(gp_req *r, const gp_graph *g, gp_link_change **out, int *nout) {
    size_t len = 0;
    const char *body = gp_req_body(r, &len);
    unsigned nargs = gp_req_query_each(r, no_arg, NULL);
    *out = NULL;
    *nout = 0;
    if (!body || !len || nargs || len > (size_t)INT32_MAX) return 0;
    gp_json_scan t = {body, body + len};
    if (!gp_json_scan_char(&t, '{') || !scan_lit(&t, "\"links\"") || !gp_json_scan_char(&t, ':') ||
        !gp_json_scan_char(&t, '['))
        return 0;
    size_t cap = len / 24 + 1, n = 0; /* an entry takes at least 24 bytes of text */
    gp_link_change *ch = malloc(cap * sizeof *ch);
    int ok = ch != NULL;
    while (ok) {
        if (n == cap || !scan_entry(&t, &ch[n])) ok = 0;
        else n++;
        if (ok && !gp_json_scan_char(&t, ',')) break;
    }
    ok = ok && n > 0 && gp_json_scan_char(&t, ']') && gp_json_scan_char(&t, '}');
    gp_json_scan_ws(&t);
    ok = ok && t.p == t.e;
    if (ok) {
        text_job j = {g, ch, cost_most(g), 0};
        gp_parallel_for((uint64_t)n, n >= 4096 ? 0 : 1, text_range, &j);
        ok = !j.bad;
    }
    if (!ok) {
        free(ch);
        return 0;
    }
    *out = ch;
    *nout = (int)n;
    return 1;
}

/* The body's changes the JSON way (any form; names resolved; the first bad entry answered):
 * 0 with *out (n entries, malloc'd), or -1 answered. */
static int links_json(gp_req *r, gp_graph *g, gp_link_change **out, int *nout) {
    gp_args args;
    *out = NULL;
    *nout = 0;
    if (!gp_req_parse_json(r) || gp_params(r, &links_patch_ep, &args)) return -1;
    const cJSON *links = gp_args_get(&args, "links")->json;
    if (!cJSON_IsArray(links) || cJSON_GetArraySize(links) == 0) {
        gp_http_error(r, GP_HC_INVALID_JSON, "'links' must be a non-empty array, e.g. %s",
                      links_patch_ep.example);
        return -1;
    }
    int n = cJSON_GetArraySize(links), k = 0;
    gp_link_change *ch = calloc((size_t)n, sizeof *ch);
    gp_err err;
    gp_err_clear(&err);
    if (!ch) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        return -1;
    }
    const cJSON *it;
    /* the common form on all CPUs; any other, or an error, one entry at a time below */
    const cJSON **items = malloc((size_t)n * sizeof *items);
    if (items) {
        cJSON_ArrayForEach(it, links) items[k++] = it;
        fast_job fj = {g, items, ch, cost_most(g), 0};
        gp_parallel_for((uint64_t)n, n >= 4096 ? 0 : 1, fast_range, &fj);
        free(items);
        k = fj.slow ? 0 : n;
        if (!k) memset(ch, 0, (size_t)n * sizeof *ch);
    }
    for (it = k ? NULL : links->child; it; it = it->next) {
        char what[48], lw[64];
        snprintf(what, sizeof what, "links[%d]", k);
        snprintf(lw, sizeof lw, "%s.link", what);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(it, "link"),
                    *c = cJSON_GetObjectItemCaseSensitive(it, "cost"),
                    *d = cJSON_GetObjectItemCaseSensitive(it, "down");
        if (!cJSON_IsObject(it) || !l) {
            gp_http_error(r, GP_HC_INVALID_JSON, "%s must be an object with \"link\"", what);
            goto fail;
        }
        if (!gp_json_only(it, what, &err, "link", "cost", "down", NULL)) {
            gp_http_error(r, GP_HC_INVALID_QUERY, "%s", err.msg);
            goto fail;
        }
        if (parse_link(r, l, lw, &ch[k].u, &ch[k].v)) goto fail;
        if (cJSON_IsTrue(d) && !c) {
            ch[k].down = 1;
        } else if (c && !d) {
            if (parse_cost(r, c, what, &ch[k].cost)) goto fail;
        } else {
            gp_http_error(r, GP_HC_INVALID_JSON, "%s needs either \"cost\" or \"down\": true",
                          what);
            goto fail;
        }
        k++;
    }
    *out = ch;
    *nout = k;
    return 0;
fail:
    free(ch);
    return -1;
}

/* A cost change's new version (gp_engine_change_links), run on a runner thread. */
typedef struct change_job {
    gp_graph *g;
    const gp_link_change *ch;
    size_t k;
    gp_graph **g2;
    gp_change_stats *cs;
    gp_err *err;
    int rc;
} change_job;

static void change_run(void *arg) {
    change_job *j = arg;
    j->rc =
        gp_engine_change_links(gp_http_engine(), j->g, j->ch, j->k, NULL, 0, j->g2, j->cs, j->err);
}

void gp_h_links_patch(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    double p0 = gp_now(); /* the body parsed, validated and resolved: parse_ms */
    gp_link_change *ch = NULL;
    int k = 0;
    gp_graph *g2 = NULL;
    gp_rt *old = NULL, *t2 = NULL;
    gp_rt_update_stats st = {0};
    gp_err err;
    gp_err_clear(&err);
    /* the common form straight from the text (a 1% change: 10,000 entries, 410 kB, which cJSON
     * took 5-10 ms to parse); anything else, or any error, the JSON way */
    int text = links_text(r, g, &ch, &k);
    if (!text && links_json(r, g, &ch, &k)) return;
    if (duplicate_links(r, ch, (size_t)k)) goto done;
    double c0 = gp_now();
    gp_change_stats cs;
    change_job cj = {g, ch, (size_t)k, &g2, &cs, &err, GP_OK};
    gp_runner_run(change_run, &cj); /* at the server's priority, not query_nice */
    if (cj.rc != GP_OK) {
        answer_err(r, &err); /* GP_ENOTFOUND (no such link): 404 NotFound */
        goto done;
    }
    double c1 = gp_now(); /* tables_ms: from here to the answer */
    /* new tables: incrementally from the old version's when they are at hand */
    old = lru_get(g->hash);
    if (g2->n <= max_nodes_cfg()) {
        int rc = old ? gp_rt_update(gp_http_engine(), old, g2, GP_RT_AUTO, 0, &t2, &st, &err)
                     : gp_rt_build(gp_http_engine(), g2, ecmp_max_cfg(), 0, 0, &t2, &err);
        if (rc != GP_OK) {
            answer_err(r, &err);
            goto done;
        }
        if (!old)
            st.strategy = GP_RT_FULL, st.rows_recomputed = g2->n,
            st.seconds = t2->apsp_s + t2->ecmp_s;
    }
    if (gp_registry_replace(gp_http_registry(), gp_req_graph_name(r), g2, g->hash, &err) != GP_OK) {
        answer_err(r, &err);
        goto done;
    }
    downs_record(gp_req_graph_name(r), g, g2, ch, (size_t)k);
    gp_req_trim_after(r); /* the old version is freed with the last request holding it */
    if (t2) {
        lru_put(t2);
        store_dist(NULL, gp_req_graph_name(r), g2, t2->dist);
    }
    GP_LOG(GP_LOG_INFO,
           "event=links_changed graph=%s from=%s to=%s links=%d shared=%d body=%s parse_ms=%.1f "
           "change_ms=%.1f attach_ms=%.1f tables_ms=%.1f",
           gp_req_graph_name(r), g->version, g2->version, k, g2->base != NULL,
           text ? "text" : "json", (c0 - p0) * 1e3, cs.change_ms, cs.attach_ms,
           (gp_now() - c1) * 1e3);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(o, "previous_version", g->version);
    cJSON_AddStringToObject(o, "version", g2->version);
    cJSON_AddStringToObject(o, "data_version", g2->version);
    cJSON_AddNumberToObject(o, "links_changed", k);
    if (t2) {
        cJSON *rc = cJSON_AddObjectToObject(o, "recompute");
        cJSON_AddStringToObject(rc, "strategy",
                                st.strategy == GP_RT_INCREMENTAL ? "incremental" : "full");
        cJSON_AddNumberToObject(rc, "rows_recomputed", st.rows_recomputed);
        cJSON_AddNumberToObject(rc, "rows_changed", st.rows_changed);
        cJSON_AddNumberToObject(rc, "routers_reextracted", st.routers_reextracted);
        cJSON_AddNumberToObject(rc, "ms", st.seconds * 1e3);
    }
    gp_http_json(r, 200, o);
done:
    free(ch);
    gp_rt_free(old);
    gp_rt_free(t2);
    gp_graph_unref(g2);
}

void gp_h_what_if(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &what_if_ep, &args)) return;
    const cJSON *fl = gp_args_get(&args, "fail_links")->json,
                *fr = gp_args_get(&args, "fail_routers")->json,
                *sc = gp_args_get(&args, "set_costs")->json;
    const char *bad = fl && !cJSON_IsArray(fl)   ? "fail_links"
                      : fr && !cJSON_IsArray(fr) ? "fail_routers"
                      : sc && !cJSON_IsArray(sc) ? "set_costs"
                                                 : NULL;
    if (bad || (!fl && !fr && !sc)) {
        gp_http_error(r, GP_HC_INVALID_JSON, "%s%s%s", bad ? "'" : "body must be ",
                      bad ? bad : what_if_ep.example, bad ? "' must be an array" : "");
        return;
    }
    int nl = fl ? cJSON_GetArraySize(fl) : 0, nr = fr ? cJSON_GetArraySize(fr) : 0,
        nc = sc ? cJSON_GetArraySize(sc) : 0, k = 0, kr = 0;
    gp_link_change *ch = calloc((size_t)(nl + nc) + 1, sizeof *ch);
    int64_t *routers = calloc((size_t)nr + 1, sizeof *routers);
    gp_graph *g2 = NULL;
    gp_rt *t = NULL, *t2 = NULL;
    gp_rt_pair *pairs = NULL;
    uint32_t *scratch = NULL;
    size_t np = 0;
    gp_sbuf s = {0};
    gp_err err;
    gp_err_clear(&err);
    if (!ch || !routers) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        goto done;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, fl) {
        char what[48];
        snprintf(what, sizeof what, "fail_links[%d]", k);
        if (parse_link(r, it, what, &ch[k].u, &ch[k].v)) goto done;
        ch[k++].down = 1;
    }
    int i = 0;
    cJSON_ArrayForEach(it, sc) {
        char what[48], lw[64];
        snprintf(what, sizeof what, "set_costs[%d]", i++);
        snprintf(lw, sizeof lw, "%s.link", what);
        if (!cJSON_IsObject(it)) {
            gp_http_error(r, GP_HC_INVALID_JSON, "%s must be {\"link\": [u, v], \"cost\": c}",
                          what);
            goto done;
        }
        if (!gp_json_only(it, what, &err, "link", "cost", NULL)) {
            gp_http_error(r, GP_HC_INVALID_QUERY, "%s", err.msg);
            goto done;
        }
        if (parse_link(r, cJSON_GetObjectItemCaseSensitive(it, "link"), lw, &ch[k].u, &ch[k].v) ||
            parse_cost(r, cJSON_GetObjectItemCaseSensitive(it, "cost"), what, &ch[k].cost))
            goto done;
        k++;
    }
    cJSON_ArrayForEach(it, fr) {
        char what[48];
        snprintf(what, sizeof what, "fail_routers[%d]", kr);
        if (router_json(r, it, what, &routers[kr])) goto done;
        kr++;
    }
    if (!(t = gp_srv_netops_tables(r, g))) goto done;
    if (gp_engine_change_links(gp_http_engine(), g, ch, (size_t)k, routers, (size_t)kr, &g2, NULL,
                               &err) != GP_OK ||
        gp_rt_update(gp_http_engine(), t, g2, GP_RT_AUTO, 0, &t2, NULL, &err) != GP_OK ||
        gp_rt_diff(t, t2, &pairs, &np, &err) != GP_OK) {
        answer_err(r, &err);
        goto done;
    }
    scratch = malloc((size_t)gp_nj_scratch(t2 ? t2 : t) * sizeof *scratch +
                     (size_t)gp_nj_scratch(t) * sizeof *scratch);
    if (!scratch) {
        gp_http_error(r, GP_HC_INTERNAL, "out of memory");
        goto done;
    }
    gp_nj_what_if(&s, gp_req_graph_name(r), t, t2, pairs, np, scratch); /* the CLI's too */
    send_sbuf(r, 200, &s);
done:
    gp_sbuf_free(&s);
    free(scratch);
    free(pairs);
    free(ch);
    free(routers);
    gp_rt_free(t);
    gp_rt_free(t2);
    gp_graph_unref(g2);
}

/* ---- operators' listings: routers and links with names, costs, state ---- */

/* 413 for graphs too big to list (these are for router topologies); 0 when listed. */
static int listing_too_big(gp_req *r, const gp_graph *g, const char *what) {
    if (g->n <= max_nodes_cfg()) return 0;
    gp_http_error(r, GP_HC_TOO_BIG,
                  "%s lists are for router topologies: graph '%s' has %u nodes, over "
                  "max_apsp_nodes (%llu)",
                  what, gp_req_graph_name(r), g->n, (unsigned long long)max_nodes_cfg());
    return 1;
}

static void put_listing_head(gp_sbuf *s, gp_req *r, const gp_graph *g) {
    gp_sbuf_add(s, "{\"graph\":", 9);
    gp_sbuf_json_str(s, gp_req_graph_name(r));
    gp_sbuf_printf(s, ",\"version\":\"%s\",\"weight_unit\":", g->version);
    gp_sbuf_json_str(s, g->unit_name);
}

static void put_opt_name(gp_sbuf *s, const gp_graph *g, uint32_t v) {
    if (gp_graph_name(g, v)) gp_sbuf_json_str(s, gp_graph_name(g, v));
    else gp_sbuf_add(s, "null", 4);
}

static void put_cost(gp_sbuf *s, const gp_graph *g, uint64_t w) {
    if (w == GP_INF) gp_sbuf_add(s, "null", 4);
    else if (g->scale == 1.0) gp_sbuf_printf(s, "%llu", (unsigned long long)w);
    else gp_sbuf_printf(s, "%.15g", gp_graph_cost(g, w));
}

void gp_h_routers(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &routers_ep, &args) || listing_too_big(r, g, "router")) return;
    gp_sbuf s = {0};
    put_listing_head(&s, r, g);
    gp_sbuf_printf(&s, ",\"count\":%u,\"routers\":[", g->n);
    for (uint32_t v = 0; v < g->n; v++) {
        uint32_t deg = 0; /* distinct neighbours, in or out */
        for (uint32_t a = g->row[v]; a < g->row[v + 1]; a++)
            deg += g->col[a] != v && (a == g->row[v] || g->col[a] != g->col[a - 1]);
        for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++)
            deg += g->rcol[a] != v && gp_graph_find_arc(g, v, g->rcol[a]) == GP_NONE &&
                   (a == g->rrow[v] || g->rcol[a] != g->rcol[a - 1]);
        gp_sbuf_printf(&s, "%s{\"id\":%lld,\"name\":", v ? "," : "", (long long)g->ext[v]);
        put_opt_name(&s, g, v);
        gp_sbuf_printf(&s, ",\"links\":%u,\"state\":\"%s\"", deg, deg ? "up" : "isolated");
        if (g->lon && !isnan(g->lon[v]))
            gp_sbuf_printf(&s, ",\"lon\":%.6f,\"lat\":%.6f", g->lon[v], g->lat[v]);
        gp_sbuf_add(&s, "}", 1);
    }
    gp_sbuf_add(&s, "]}", 2);
    send_sbuf(r, 200, &s);
}

static void put_link(gp_sbuf *s, const gp_graph *g, int first, int64_t u, int64_t v, uint64_t wf,
                     uint64_t wr, const char *state) {
    uint32_t iu = gp_graph_index(g, u), iv = gp_graph_index(g, v);
    gp_sbuf_printf(s, "%s{\"link\":[%lld,%lld],\"names\":[", first ? "" : ",", (long long)u,
                   (long long)v);
    put_opt_name(s, g, iu);
    gp_sbuf_add(s, ",", 1);
    put_opt_name(s, g, iv);
    gp_sbuf_add(s, "],\"cost\":", 9);
    put_cost(s, g, wf);
    gp_sbuf_add(s, ",\"reverse_cost\":", 16);
    put_cost(s, g, wr);
    gp_sbuf_printf(s, ",\"state\":\"%s\"}", state);
}

void gp_h_links(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &links_ep, &args) || listing_too_big(r, g, "link")) return;
    gp_sbuf s = {0};
    put_listing_head(&s, r, g);
    gp_sbuf_add(&s, ",\"links\":[", 10);
    int first = 1;
    size_t count = 0;
    for (uint32_t u = 0; u < g->n; u++)
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == u || (a > g->row[u] && g->col[a - 1] == v)) continue; /* loops, parallels */
            uint32_t back = gp_graph_find_arc(g, v, u);
            if (back != GP_NONE && v < u) continue; /* each link once, from its lower end */
            put_link(&s, g, first, g->ext[u], g->ext[v], g->w[a],
                     back != GP_NONE ? g->w[back] : GP_INF, "up");
            first = 0;
            count++;
        }
    pthread_mutex_lock(&downs.mu);
    for (int k = 0; k < DOWN_GRAPHS; k++)
        if (downs.g[k].hash == g->hash && strcmp(downs.g[k].graph, gp_req_graph_name(r)) == 0)
            for (size_t i = 0; i < downs.g[k].n; i++) {
                const down_link *d = &downs.g[k].l[i];
                put_link(&s, g, first, d->u, d->v, d->w_uv, d->w_vu, "down");
                first = 0;
                count++;
            }
    pthread_mutex_unlock(&downs.mu);
    gp_sbuf_printf(&s, "],\"count\":%zu}", count);
    send_sbuf(r, 200, &s);
}

void gp_h_jobs_post(gp_req *r) {
    gp_graph *g = gp_req_graph(r);
    gp_args args;
    if (gp_params(r, &jobs_post_ep, &args)) return;
    gp_err err;
    gp_err_clear(&err);
    if (g->n > max_nodes_cfg()) {
        gp_http_error(r, GP_HC_TOO_BIG, "%u routers is over max_apsp_nodes (%llu)", g->n,
                      (unsigned long long)max_nodes_cfg());
        return;
    }
    gp_jobs *j = jobs_get(&err);
    uint64_t id;
    if (!j || gp_jobs_submit(j, gp_req_graph_name(r), g, &id, &err) != GP_OK) {
        gp_http_error_err(r, -1, &err);
        return;
    }
    char loc[64];
    snprintf(loc, sizeof loc, "/v1/jobs/%llu", (unsigned long long)id);
    gp_req_add_header(r, "Location", loc);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "job", (double)id);
    cJSON_AddStringToObject(o, "status", loc);
    cJSON_AddStringToObject(o, "graph", gp_req_graph_name(r));
    cJSON_AddStringToObject(o, "version", g->version);
    cJSON_AddStringToObject(o, "data_version", g->version);
    gp_http_json(r, 202, o);
}

void gp_h_job_get(gp_req *r) {
    gp_args args;
    if (gp_params(r, &job_get_ep, &args)) return;
    const char *ids = gp_req_param(r, "id");
    int64_t sid;
    if (!ids || gp_parse_i64(ids, &sid) || sid < 1 || ids[0] == '+') {
        gp_http_error(r, GP_HC_INVALID_QUERY, "job id '%.64s' is not a job number (1, 2, ...)",
                      ids ? ids : "");
        return;
    }
    unsigned long long id = (unsigned long long)sid;
    gp_err err;
    gp_job_status st;
    pthread_mutex_lock(&ns.mu);
    gp_jobs *j = ns.jobs;
    int rc = j ? gp_jobs_get(j, id, &st, NULL, &err)
               : gp_err_set(&err, GP_ENOTFOUND, "no job %llu", id);
    pthread_mutex_unlock(&ns.mu);
    if (rc != GP_OK) {
        gp_http_error(r, GP_HC_NOT_FOUND, "%s", err.msg);
        return;
    }
    double now = gp_now();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "job", (double)st.id);
    cJSON_AddStringToObject(o, "state", gp_job_state_name(st.state));
    cJSON_AddNumberToObject(o, "progress", st.progress);
    cJSON_AddStringToObject(o, "graph", st.graph);
    cJSON_AddStringToObject(o, "version", st.version);
    cJSON_AddStringToObject(o, "data_version", st.version);
    cJSON_AddNumberToObject(o, "routers", st.routers);
    cJSON_AddNumberToObject(o, "age_s", now - st.submitted_at);
    if (st.started_at > 0)
        cJSON_AddNumberToObject(o, "run_s",
                                (st.finished_at > 0 ? st.finished_at : now) - st.started_at);
    if (st.state == GP_JOB_DONE) {
        cJSON *res = cJSON_AddObjectToObject(o, "result");
        char url[160];
        snprintf(url, sizeof url, "/v1/graphs/%s/routing-tables", st.graph);
        cJSON_AddStringToObject(res, "routing_tables", url);
        cJSON_AddNumberToObject(res, "routers", st.routers);
        cJSON_AddStringToObject(res, "backend", st.backend);
        cJSON_AddNumberToObject(res, "apsp_ms", st.apsp_s * 1e3);
        cJSON_AddNumberToObject(res, "ecmp_ms", st.ecmp_s * 1e3);
        cJSON_AddStringToObject(res, "stored", st.stored ? "sqlite" : "memory");
    } else if (st.state == GP_JOB_FAILED) {
        cJSON_AddStringToObject(o, "error", st.error);
    }
    gp_http_json(r, 200, o);
}
