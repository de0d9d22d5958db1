/* cpu_backend.c - the CPU backend: the reference implementation of every gp_backend_ops operation
 * and the fallback behind the CUDA backend. This file holds its lifecycle and the workspace pool;
 * sssp, p2p and table are in engine/cpu_dijkstra.c, apsp in engine/cpu_apsp.c.
 *
 *  - sssp: Dijkstra with a radix heap (monotone integer keys; decrease-key by re-insertion);
 *    max_dist prunes relaxations past the limit, so every node it reports is settled with its
 *    exact distance.
 *  - p2p: unidirectional Dijkstra stopping when the target is settled; bidirectional Dijkstra over
 *    the forward and reverse CSR (stops when top_f + top_b >= best meeting distance); A* with a
 *    great-circle lower bound (haversine metres times the smallest weight-per-metre of any arc,
 *    computed once per graph at attach, or on first use, and cached; none when a node lacks
 *    coordinates), on the radix heap while the bound is consistent, else on a binary heap with
 *    decrease-key that reopens nodes, so float rounding never costs exactness. AUTO is
 *    bidirectional.
 *  - table: one Dijkstra per source on a pool of threads, each stopping once all targets settle.
 *  - apsp: blocked Floyd-Warshall on threads (pivot tile, then its row and column tiles, then the
 *    rest, per round) with an optional next-hop matrix; tiles at the edge are clipped to n. With
 *    next hops, paths are ordered by (length, hops) so zero-weight cycles cannot make next-hop
 *    walks loop. The row update has an AVX2 version chosen at run time.
 *
 * Workspaces (n-sized distance / predecessor / heap-position arrays) are pooled in the backend and
 * reset through a list of touched nodes, so a query costs O(nodes touched), not O(n), after the
 * first use. Every call is thread-safe; the graph is only read.
 */
#include "engine/cpu_internal.h"
#include "engine/engine_lab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ws_free(gp_cpu_ws *w) {
    if (!w) return;
    free(w->dist);
    free(w->pred);
    free(w->hpos);
    free(w->mark);
    free(w->aux);
    free(w->heap);
    free(w->touched);
    for (int i = 0; i < RADIX_BUCKETS; i++) free(w->rb[i].e);
    free(w);
}

/* Grows w to hold n nodes, resetting its arrays. */
static int ws_reserve(gp_cpu_ws *w, uint32_t n) {
    if (w->cap >= n) return GP_OK;
    size_t cap = n ? n : 1;
    uint64_t *d = realloc(w->dist, cap * sizeof *d);
    if (d) w->dist = d;
    uint32_t *p = realloc(w->pred, cap * sizeof *p);
    if (p) w->pred = p;
    uint32_t *h = realloc(w->hpos, cap * sizeof *h);
    if (h) w->hpos = h;
    gp_cpu_hent *hp = realloc(w->heap, cap * sizeof *hp);
    if (hp) w->heap = hp;
    uint32_t *t = realloc(w->touched, cap * sizeof *t);
    if (t) w->touched = t;
    if (!d || !p || !h || !hp || !t) return GP_ENOMEM;
    for (size_t i = 0; i < cap; i++) {
        w->dist[i] = GP_INF;
        w->pred[i] = GP_NONE;
        w->hpos[i] = ST_UNSEEN;
    }
    w->cap = (uint32_t)cap;
    w->hsize = 0;
    w->ntouched = 0;
    return GP_OK;
}

/* The table's target marks, allocated on first use (cleared, stamp restarted). */
int gp_cpu_ws_need_mark(gp_cpu_ws *w) {
    if (w->mark_cap >= w->cap) return GP_OK;
    free(w->mark);
    w->mark = calloc(w->cap, sizeof *w->mark);
    if (!w->mark) {
        w->mark_cap = 0;
        return GP_ENOMEM;
    }
    w->mark_cap = w->cap;
    w->stamp = 0;
    return GP_OK;
}

/* A*'s per-node bound cache, allocated on first use (entries are written before being read). */
int gp_cpu_ws_need_aux(gp_cpu_ws *w) {
    if (w->aux_cap >= w->cap) return GP_OK;
    free(w->aux);
    w->aux = malloc((size_t)w->cap * sizeof *w->aux);
    if (!w->aux) {
        w->aux_cap = 0;
        return GP_ENOMEM;
    }
    w->aux_cap = w->cap;
    return GP_OK;
}

/* Returns w to its reset state in O(touched). */
void gp_cpu_ws_reset(gp_cpu_ws *w) {
    for (uint32_t i = 0; i < w->ntouched; i++) {
        uint32_t v = w->touched[i];
        w->dist[v] = GP_INF;
        w->pred[v] = GP_NONE;
        w->hpos[v] = ST_UNSEEN;
    }
    w->ntouched = 0;
    w->hsize = 0;
    w->settled = 0;
    for (int i = 0; i < RADIX_BUCKETS; i++) w->rb[i].len = 0;
    w->rlast = 0;
    w->rsize = 0;
}

gp_cpu_ws *gp_cpu_ws_get(gp_cpu_impl *c, uint32_t n, gp_err *err) {
    pthread_mutex_lock(&c->lock);
    gp_cpu_ws *w = c->pool;
    if (w) {
        c->pool = w->next;
        c->pooled--;
    }
    pthread_mutex_unlock(&c->lock);
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w) {
            gp_err_set(err, GP_ENOMEM, "out of memory for a query workspace");
            return NULL;
        }
    }
    if (ws_reserve(w, n) != GP_OK) {
        ws_free(w);
        gp_err_set(err, GP_ENOMEM, "out of memory for a query workspace of %u nodes", n);
        return NULL;
    }
    w->next = NULL;
    return w;
}

/* Returns w to the pool; beyond POOL_SPARE + threads idle workspaces it is freed instead, so a
 * burst of concurrent queries does not pin its memory forever. */
#define POOL_SPARE 4
void gp_cpu_ws_put(gp_cpu_impl *c, gp_cpu_ws *w) {
    if (!w) return;
    gp_cpu_ws_reset(w);
    pthread_mutex_lock(&c->lock);
    if (c->pooled >= c->threads + POOL_SPARE) {
        pthread_mutex_unlock(&c->lock);
        ws_free(w);
        return;
    }
    w->next = c->pool;
    c->pool = w;
    c->pooled++;
    pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------------------------------------
 * Lifecycle */

static void cpu_info(gp_backend *b, gp_backend_info *out) {
    gp_cpu_impl *c = gp_cpu_impl_of(b);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "cpu");
    snprintf(out->device, sizeof out->device, "%s", c->model);
    out->threads = c->threads;
    out->healthy = 1;
}

static void cpu_destroy(gp_backend *b) {
    if (!b) return;
    gp_cpu_impl *c = gp_cpu_impl_of(b);
    if (c) {
        gp_cpu_ws *w = c->pool;
        while (w) {
            gp_cpu_ws *nx = w->next;
            ws_free(w);
            w = nx;
        }
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
    free(b);
}

static const gp_backend_ops cpu_ops = {
    .attach = gp_cpu_attach,
    .sssp = gp_cpu_sssp,
    .p2p = gp_cpu_p2p,
    .table = gp_cpu_table,
    .apsp = gp_cpu_apsp,
    .info = cpu_info,
    .destroy = cpu_destroy,
};

/* CPU model name from /proc/cpuinfo ("unknown CPU" when unreadable). */
static void read_cpu_model(char *buf, size_t len) {
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        char *p = strchr(line, ':');
        if (!p) continue;
        p++;
        while (*p == ' ' || *p == '\t') p++;
        size_t l = strcspn(p, "\n");
        snprintf(buf, len, "%.*s", (int)l, p);
        break;
    }
    fclose(f);
}

gp_backend *gp_cpu_backend_new(int threads, gp_err *err) {
    gp_backend *b = calloc(1, sizeof *b);
    gp_cpu_impl *c = calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        gp_err_set(err, GP_ENOMEM, "out of memory creating the CPU backend");
        return NULL;
    }
    if (threads <= 0) threads = gp_cpu_count();
    if (threads > 256) threads = 256;
    c->threads = threads;
    gp_engine_lab lab;
    gp_engine_lab_get(&lab);
    gp_cpu_apsp_select(lab.cpu_avx2);
    c->astar_binary = lab.astar_binary;
    pthread_mutex_init(&c->lock, NULL);
    read_cpu_model(c->model, sizeof c->model);
    b->ops = &cpu_ops;
    b->impl = c;
    return b;
}

void gp_path_free(gp_path *p) {
    if (!p) return;
    free(p->nodes);
    p->nodes = NULL;
    p->len = 0;
}
