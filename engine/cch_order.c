/* cch_order.c - the CCH's metric-independent order (cch.h): nested dissection by METIS, either as
 * one METIS_NodeND call or computed in parallel (gp_cch_order_nd).
 *
 * The parallel dissection. A subproblem is a connected subgraph with a range of ranks. Above
 * `leaf` nodes it is split by a METIS vertex separator (METIS_ComputeVertexSeparator: the
 * multilevel node bisection METIS_NodeND itself runs at every level of its dissection); the
 * separator takes the top ranks of the range and every connected component left after removing
 * it becomes a subproblem with its own contiguous range below (as METIS_NodeND with
 * METIS_OPTION_CCORDER would do). At or below `leaf` nodes a subproblem is ordered by
 * METIS_NodeND. Subproblems of at least 16 leaves are separated on their kernel (trees peeled,
 * chains of degree-2 nodes contracted: kernel_separator), which halves the critical path on large
 * road graphs (the top bisection is the serial part). Subproblems go to a pool of threads, largest
 * first. A subproblem's ranks depend
 * only on its graph (each METIS call seeds its generator itself, see below), never on which
 * thread ran it or when: the order is the same for any thread count. The whole graph is split into
 * its connected components first (isolated nodes are components of one node).
 *
 * METIS 5.1 from several threads at once (read in METIS 5.1 / GKlib: libmetis/ometis.c,
 * options.c, util.c, GKlib memory.c, error.c, random.c; and Debian's libmetis.so.5 itself):
 *  - no shared graph state: every API call builds its own ctrl_t / graph_t and workspace;
 *  - GKlib's allocation core (gkmcore) and the setjmp buffers gk_sigtrap uses for errors are
 *    __thread (Debian's library: gk_jbufs, gk_jbuf, gk_cur_jbufs are TLS symbols);
 *  - the random generator is NOT per thread: Debian builds GKlib without USE_GKRAND, so
 *    gk_randinit / gk_randint32 are libc srand() / rand() (libmetis.so.5 imports rand@GLIBC and
 *    srand@GLIBC): one process-wide state. SetupCtrl seeds it (InitRandom(seed), default 4321) at
 *    the start of every METIS_NodeND / METIS_ComputeVertexSeparator, so calls one after another
 *    are deterministic, but calls at once interleave their draws: valid orders that change from
 *    run to run. This file therefore defines rand() and srand() itself, with per-thread state and
 *    glibc's algorithm (the TYPE_3 additive generator of random_r, so that a METIS call gets the
 *    same numbers as before and gp_cch_order_metis is unchanged). The executable's definitions
 *    interpose libc's for libmetis.so (the linker exports them because a shared library in the
 *    link references them); gp_cch_order_nd checks at run time that they do (dlsym) and otherwise
 *    runs its subproblems on one thread, which gives the same order, only slower. rand() is then
 *    per thread in the whole process (allowed: the C standard does not require rand to be
 *    thread-safe; nothing else in gpath calls it);
 *  - gk_sigtrap / gk_siguntrap (METIS_NodeND; METIS_ComputeVertexSeparator does not trap) set and
 *    restore the process-wide SIGABRT and SIGTERM handlers: concurrent calls may restore them in
 *    the wrong order. Orders are computed one at a time (a mutex) and the parallel one puts both
 *    handlers back when it ends. Out of memory inside METIS may abort the process instead of
 *    returning METIS_ERROR_MEMORY (as it does in METIS_ComputeVertexSeparator anyway).
 */
#include "engine/cch_internal.h"

#include <dlfcn.h>
#include <metis.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* idx_t is 32-bit in Debian's libmetis (IDXTYPEWIDTH 32): the CSR arrays are passed as is */
_Static_assert(sizeof(idx_t) == sizeof(uint32_t), "libmetis with 32-bit idx_t expected");

/* ---------------------------------------------------------------------------------------------
 * rand / srand per thread (see the top of the file) */

typedef struct tls_rand {
    int32_t s[31];
    int f, r, seeded;
} tls_rand;
static __thread tls_rand trand;

static uint32_t trand_next(tls_rand *t) {
    uint32_t v = (uint32_t)t->s[t->f] + (uint32_t)t->s[t->r];
    t->s[t->f] = (int32_t)v;
    t->f = t->f == 30 ? 0 : t->f + 1;
    t->r = t->r == 30 ? 0 : t->r + 1;
    return v >> 1;
}

void srand(unsigned seed) {
    tls_rand *t = &trand;
    if (seed == 0) seed = 1;
    int32_t word = (int32_t)seed;
    t->s[0] = word;
    for (int i = 1; i < 31; i++) { /* 16807 * word % (2^31 - 1) without overflow (glibc) */
        long hi = word / 127773, lo = word % 127773;
        word = (int32_t)(16807 * lo - 2836 * hi);
        if (word < 0) word += 2147483647;
        t->s[i] = word;
    }
    t->f = 3;
    t->r = 0;
    t->seeded = 1;
    for (int i = 0; i < 310; i++) trand_next(t);
}

int rand(void) {
    if (!trand.seeded) srand(1);
    return (int)trand_next(&trand);
}

/* Whether libmetis draws from the functions above (see the top of the file). */
static int rand_per_thread(void) {
    return dlsym(RTLD_DEFAULT, "rand") == (void *)rand &&
           dlsym(RTLD_DEFAULT, "srand") == (void *)srand;
}

/* ---------------------------------------------------------------------------------------------
 * Skeleton and the single call */

/* Sorts a[b, e) (short lists: insertion sort) and moves its distinct values to a[out, ...)
 * (out <= b); returns the end of those. */
static uint32_t sort_unique(uint32_t *a, uint32_t b, uint32_t e, uint32_t out) {
    for (uint32_t i = b + 1; i < e; i++) {
        uint32_t x = a[i], j = i;
        while (j > b && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
    for (uint32_t i = b; i < e; i++)
        if (i == b || a[i] != a[i - 1]) a[out++] = a[i];
    return out;
}

int gp_cch_skeleton(const gp_graph *g, uint32_t **first_out, uint32_t **adj_out, gp_err *err) {
    uint32_t n = g->n;
    uint32_t *first = calloc((size_t)n + 1, sizeof *first);
    uint32_t *adj = malloc(((size_t)g->m * 2 + 1) * sizeof *adj);
    if (!first || !adj) goto oom;
    for (uint32_t u = 0; u < n; u++) {
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == u) continue;
            first[u + 1]++;
            first[v + 1]++;
        }
    }
    for (uint32_t u = 0; u < n; u++) first[u + 1] += first[u];
    uint32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    if (!pos) goto oom;
    memcpy(pos, first, ((size_t)n + 1) * sizeof *pos);
    for (uint32_t u = 0; u < n; u++) {
        for (uint32_t a = g->row[u]; a < g->row[u + 1]; a++) {
            uint32_t v = g->col[a];
            if (v == u) continue;
            adj[pos[u]++] = v;
            adj[pos[v]++] = u;
        }
    }
    free(pos);
    /* sort + unique each list, compacting in place */
    uint32_t out = 0;
    for (uint32_t u = 0; u < n; u++) {
        uint32_t b = first[u], e = first[u + 1];
        first[u] = out;
        out = sort_unique(adj, b, e, out);
    }
    first[n] = out;
    *first_out = first;
    *adj_out = adj;
    return GP_OK;
oom:
    free(first);
    free(adj);
    return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH skeleton of %u nodes", n);
}

static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER; /* one order at a time (top) */

/* cch_internal.h */
int gp_cch_nodend(uint32_t n, uint32_t *first, uint32_t *adj, const uint32_t *gid, uint32_t lo,
                  uint32_t *rank, gp_err *err) {
    idx_t nv = (idx_t)n, opts[METIS_NOPTIONS];
    idx_t *perm = malloc((size_t)n * sizeof *perm), *iperm = malloc((size_t)n * sizeof *iperm);
    if (!perm || !iperm) {
        free(perm);
        free(iperm);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the METIS order");
    }
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_NUMBERING] = 0;
    int mr = METIS_NodeND(&nv, (idx_t *)first, (idx_t *)adj, NULL, opts, perm, iperm);
    if (mr == METIS_OK)
        for (uint32_t v = 0; v < n; v++) rank[gid ? gid[v] : v] = lo + (uint32_t)iperm[v];
    free(perm);
    free(iperm);
    if (mr != METIS_OK)
        return gp_err_set(err, mr == METIS_ERROR_MEMORY ? GP_ENOMEM : GP_EINVAL,
                          "METIS_NodeND failed (%d) on %u nodes", mr, n);
    return GP_OK;
}

int gp_cch_order_metis(const gp_graph *g, uint32_t *rank, gp_err *err) {
    uint32_t *first, *adj;
    int rc = gp_cch_skeleton(g, &first, &adj, err);
    if (rc) return rc;
    uint32_t n = g->n;
    if (first[n] == 0 || n < 2) {
        for (uint32_t v = 0; v < n; v++) rank[v] = v;
    } else {
        pthread_mutex_lock(&order_mu);
        rc = gp_cch_nodend(n, first, adj, NULL, 0, rank, err);
        pthread_mutex_unlock(&order_mu);
    }
    free(first);
    free(adj);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Parallel nested dissection */

typedef struct sub {
    uint32_t n, lo;  /* nodes; first rank of the range lo .. lo+n-1 */
    uint32_t *first; /* n+1, CSR over local ids, neighbour lists ascending */
    uint32_t *adj;
    uint32_t *gid; /* n: the graph's node of each local id */
    double path;   /* CPU seconds of the subproblems above it (the critical path to it) */
    double t0;     /* thread CPU clock when its work began */
} sub;

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct ndjob {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sub **heap; /* pending subproblems, a max-heap on n */
    size_t len, cap;
    size_t active; /* subproblems being worked on */
    int failed;
    gp_cch_nd_stats st; /* under mu */
    gp_err err;
    uint32_t leaf;
    uint32_t *rank;
    const float *xy; /* flow leaves (gp_cch_order_nd_flow), else NULL */
    const gp_cch_flow_opts *fo;
    double refine; /* METIS separators refined in a corridor of this fraction (0: not) */
} ndjob;

static void sub_free(sub *s) {
    if (!s) return;
    free(s->first);
    free(s->adj);
    free(s->gid);
    free(s);
}

/* under j->mu */
static int heap_push(ndjob *j, sub *s) {
    if (j->len == j->cap) {
        size_t nc = j->cap ? j->cap * 2 : 64;
        sub **nh = realloc(j->heap, nc * sizeof *nh);
        if (!nh) return -1;
        j->heap = nh;
        j->cap = nc;
    }
    size_t i = j->len++;
    while (i > 0 && j->heap[(i - 1) / 2]->n < s->n) {
        j->heap[i] = j->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    j->heap[i] = s;
    return 0;
}

static sub *heap_pop(ndjob *j) {
    sub *top = j->heap[0], *last = j->heap[--j->len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= j->len) break;
        if (c + 1 < j->len && j->heap[c + 1]->n > j->heap[c]->n) c++;
        if (j->heap[c]->n <= last->n) break;
        j->heap[i] = j->heap[c];
        i = c;
    }
    if (j->len) j->heap[i] = last;
    return top;
}

static void fail(ndjob *j, const gp_err *e) {
    pthread_mutex_lock(&j->mu);
    if (!j->failed) j->err = *e;
    j->failed = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

/* Connected components of s without the nodes with comp[v] == SEP (set by the caller; every other
 * entry must be NOSEEN): comp[v] = component, numbered by their smallest local id; returns the
 * count. queue: n entries. */
#define NOSEEN UINT32_MAX
#define SEP (UINT32_MAX - 1)
/* Subproblems of at least this many leaves are separated on their kernel (kernel_separator). */
#define KERNEL_LEAVES 16
static uint32_t components(const sub *s, uint32_t *comp, uint32_t *queue) {
    uint32_t nc = 0;
    for (uint32_t r = 0; r < s->n; r++) {
        if (comp[r] != NOSEEN) continue;
        uint32_t qh = 0, qt = 0;
        queue[qt++] = r;
        comp[r] = nc;
        while (qh < qt) {
            uint32_t u = queue[qh++];
            for (uint32_t i = s->first[u]; i < s->first[u + 1]; i++) {
                uint32_t v = s->adj[i];
                if (comp[v] == NOSEEN) {
                    comp[v] = nc;
                    queue[qt++] = v;
                }
            }
        }
        nc++;
    }
    return nc;
}

/* The components of s (comp, nc) as subproblems with consecutive ranges from s->lo, in component
 * order; one-node components are ranked here. Local ids keep their relative order. Separator nodes
 * (comp SEP) are left out. cnt, pos: scratch of 2 * nc and n entries. */
static int split(ndjob *j, const sub *s, const uint32_t *comp, uint32_t nc, uint32_t *cnt,
                 uint32_t *pos, gp_err *err) {
    uint32_t *start = cnt + nc; /* first rank of each component */
    memset(cnt, 0, (size_t)nc * sizeof *cnt);
    for (uint32_t v = 0; v < s->n; v++)
        if (comp[v] != SEP) pos[v] = cnt[comp[v]]++;
    sub **kid = calloc(nc, sizeof *kid);
    uint64_t *edges = calloc(nc, sizeof *edges);
    if (!kid || !edges) goto oom;
    for (uint32_t v = 0; v < s->n; v++) {
        if (comp[v] == SEP) continue;
        for (uint32_t i = s->first[v]; i < s->first[v + 1]; i++)
            edges[comp[v]] += comp[s->adj[i]] != SEP;
    }
    uint32_t lo = s->lo;
    for (uint32_t c = 0; c < nc; c++) {
        start[c] = lo;
        if (cnt[c] > 1) {
            sub *k = kid[c] = calloc(1, sizeof *k);
            if (!k) goto oom;
            k->n = cnt[c];
            k->lo = lo;
            k->first = malloc(((size_t)k->n + 1) * sizeof *k->first);
            k->adj = malloc((edges[c] + 1) * sizeof *k->adj);
            k->gid = malloc((size_t)k->n * sizeof *k->gid);
            if (!k->first || !k->adj || !k->gid) goto oom;
            k->first[0] = 0;
        }
        lo += cnt[c];
    }
    for (uint32_t v = 0; v < s->n; v++) {
        if (comp[v] == SEP) continue;
        sub *k = kid[comp[v]];
        if (!k) { /* alone */
            j->rank[s->gid[v]] = start[comp[v]];
            continue;
        }
        uint32_t p = pos[v], e = k->first[p];
        k->gid[p] = s->gid[v];
        for (uint32_t i = s->first[v]; i < s->first[v + 1]; i++)
            if (comp[s->adj[i]] != SEP) k->adj[e++] = pos[s->adj[i]];
        k->first[p + 1] = e;
    }
    double path = s->path + thread_cpu() - s->t0;
    pthread_mutex_lock(&j->mu);
    j->st.splits++;
    if (path > j->st.span_s) j->st.span_s = path;
    int bad = 0;
    for (uint32_t c = 0; c < nc; c++) {
        if (!kid[c]) continue;
        kid[c]->path = path;
        if (heap_push(j, kid[c])) bad = 1, sub_free(kid[c]);
        kid[c] = NULL;
    }
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    free(kid);
    free(edges);
    if (bad) return gp_err_set(err, GP_ENOMEM, "out of memory in the nested dissection");
    return GP_OK;
oom:
    if (kid)
        for (uint32_t c = 0; c < nc; c++) sub_free(kid[c]);
    free(kid);
    free(edges);
    return gp_err_set(err, GP_ENOMEM, "out of memory in the nested dissection");
}

/* The separator of a large connected subproblem, computed on its kernel: road networks hang trees
 * (16-19% of the nodes of NY and gen:N) and run chains of degree-2 nodes (24-43%) between their
 * junctions, and neither needs to be in a separator (cutting a chain costs one node, as cutting a
 * junction at its end does). So trees are peeled off, each chain of the rest is replaced by an edge
 * between the junctions at its ends, and METIS separates the junction graph (2-3x smaller; unit
 * weights: METIS minimises the separator's weight, so weighing junctions by the nodes they stand
 * for made it pick 2-3x more of the light ones; balanced in junctions, the parts come out balanced
 * enough). Marks the separator in comp (SEP, the rest NOSEEN) and returns its size; 0 when s has no
 * usable kernel (a tree, a cycle, one junction): the caller separates s itself; -1 on an error. */
static int64_t kernel_separator(const sub *s, uint32_t *comp, gp_err *err) {
    uint32_t n = s->n, kn = 0;
    uint64_t km = 0;
    const uint32_t *first = s->first, *adj = s->adj;
    uint32_t *deg = malloc((size_t)n * sizeof *deg), *q = malloc((size_t)n * sizeof *q);
    uint32_t *kid = malloc((size_t)n * sizeof *kid);
    uint32_t *kof = NULL, *kfirst = NULL, *kadj = NULL;
    idx_t *kpart = NULL;
    int64_t nsep = 0;
    if (!deg || !q || !kid) goto oom;
    /* peel the trees: comp[v] = 1 once v is queued; deg ends as the degree in the core */
    uint32_t qt = 0;
    for (uint32_t v = 0; v < n; v++) {
        deg[v] = first[v + 1] - first[v];
        comp[v] = deg[v] <= 1;
        if (deg[v] <= 1) q[qt++] = v;
    }
    for (uint32_t h = 0; h < qt; h++) {
        uint32_t v = q[h];
        for (uint32_t i = first[v]; i < first[v + 1]; i++) {
            uint32_t u = adj[i];
            if (!comp[u] && --deg[u] <= 1) comp[u] = 1, q[qt++] = u;
        }
    }
    for (uint32_t v = 0; v < n; v++) kid[v] = !comp[v] && deg[v] >= 3 ? kn++ : GP_NONE;
    if (kn < 2) goto out; /* a tree, a cycle, one junction */
    kof = malloc((size_t)kn * sizeof *kof);
    kfirst = malloc(((size_t)kn + 1) * sizeof *kfirst);
    kadj = malloc(((size_t)first[n] + 1) * sizeof *kadj); /* at most one per edge end */
    kpart = malloc((size_t)kn * sizeof *kpart);
    if (!kof || !kfirst || !kadj || !kpart) goto oom;
    /* junction edges, junction by junction (so the CSR is built in order): each core edge leaving
     * a junction, followed along its chain to the junction at the other end */
    for (uint32_t a = 0; a < n; a++) {
        if (kid[a] == GP_NONE) continue;
        kof[kid[a]] = a;
        uint32_t b = (uint32_t)km;
        kfirst[kid[a]] = b;
        for (uint32_t i = first[a]; i < first[a + 1]; i++) {
            uint32_t prev = a, cur = adj[i];
            if (comp[cur]) continue;
            while (kid[cur] == GP_NONE) { /* a chain node: two core neighbours */
                uint32_t next = GP_NONE;
                for (uint32_t k = first[cur]; k < first[cur + 1] && next == GP_NONE; k++)
                    if (!comp[adj[k]] && adj[k] != prev) next = adj[k];
                if (next == GP_NONE)
                    goto out; /* not a core (cannot happen); s is separated plainly */
                prev = cur;
                cur = next;
            }
            if (cur != a) kadj[km++] = kid[cur];
        }
        km = sort_unique(kadj, b, (uint32_t)km, b);
    }
    kfirst[kn] = (uint32_t)km;
    if (km == 0) goto out;
    idx_t nv = (idx_t)kn, opts[METIS_NOPTIONS], sepsize = 0;
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_NUMBERING] = 0;
    int mr = METIS_ComputeVertexSeparator(&nv, (idx_t *)kfirst, (idx_t *)kadj, NULL, opts, &sepsize,
                                          kpart);
    if (mr != METIS_OK) {
        nsep = -1;
        gp_err_set(err, mr == METIS_ERROR_MEMORY ? GP_ENOMEM : GP_EINVAL,
                   "METIS_ComputeVertexSeparator failed (%d) on a kernel of %u nodes", mr, kn);
        goto out;
    }
    for (uint32_t v = 0; v < n; v++) comp[v] = NOSEEN;
    for (uint32_t k = 0; k < kn; k++)
        if (kpart[k] == 2) comp[kof[k]] = SEP, nsep++;
    goto out;
oom:
    nsep = -1;
    gp_err_set(err, GP_ENOMEM, "out of memory for the kernel of %u nodes", n);
out:
    free(deg);
    free(q);
    free(kid);
    free(kof);
    free(kfirst);
    free(kadj);
    free(kpart);
    return nsep;
}

/* One subproblem: a leaf for METIS_NodeND, or split into components, or by a separator. */
static int dissect(ndjob *j, sub *s, gp_err *err) {
    uint32_t n = s->n;
    if (s->first[n] == 0) { /* no edges (only the whole graph can be so; its nodes stay in order) */
        for (uint32_t v = 0; v < n; v++) j->rank[s->gid[v]] = s->lo + v;
        return GP_OK;
    }
    if (n <= j->leaf) {
        uint32_t fs = 0, ff = 0;
        int rc = j->xy ? gp_cch_flow_part(n, s->first, s->adj, s->gid, j->xy, j->fo, s->lo, j->rank,
                                          &fs, &ff, err)
                       : gp_cch_nodend(n, s->first, s->adj, s->gid, s->lo, j->rank, err);
        double path = s->path + thread_cpu() - s->t0;
        pthread_mutex_lock(&j->mu);
        j->st.leaves++;
        j->st.flow_seps += fs;
        j->st.flow_fallbacks += ff;
        if (path > j->st.span_s) j->st.span_s = path;
        pthread_mutex_unlock(&j->mu);
        return rc;
    }
    uint32_t *comp = malloc((size_t)n * sizeof *comp), *queue = malloc((size_t)n * sizeof *queue);
    uint32_t *cnt = NULL;
    int rc = GP_OK;
    if (!comp || !queue) goto oom;
    for (uint32_t v = 0; v < n; v++) comp[v] = NOSEEN;
    uint32_t nc = components(s, comp, queue);
    if (nc == 1) { /* connected: a vertex separator takes the top of the range */
        int64_t ks = 0;
        if ((uint64_t)n >= (uint64_t)j->leaf * KERNEL_LEAVES) { /* large: on the kernel */
            double ts = gp_now();
            ks = kernel_separator(s, comp, err);
            if (ks < 0) {
                rc = err ? err->code : GP_ENOMEM;
                goto out;
            }
            if (s->path == 0) /* the top */
                GP_LOG(GP_LOG_DEBUG,
                       "cch_order_nd top separator of %u nodes (kernel): %u nodes, %.2f s", n,
                       (uint32_t)ks, gp_now() - ts);
        }
        uint32_t nsep = (uint32_t)ks;
        if (nsep == 0) {
            idx_t nv = (idx_t)n, opts[METIS_NOPTIONS], sepsize = 0;
            METIS_SetDefaultOptions(opts);
            opts[METIS_OPTION_NUMBERING] = 0;
            idx_t *part = (idx_t *)queue; /* queue is free until components() runs again */
            double ts = gp_now();
            int mr = METIS_ComputeVertexSeparator(&nv, (idx_t *)s->first, (idx_t *)s->adj, NULL,
                                                  opts, &sepsize, part);
            if (mr != METIS_OK) {
                rc = gp_err_set(err, mr == METIS_ERROR_MEMORY ? GP_ENOMEM : GP_EINVAL,
                                "METIS_ComputeVertexSeparator failed (%d) on %u nodes", mr, n);
                goto out;
            }
            if (s->path == 0) /* the top */
                GP_LOG(GP_LOG_DEBUG, "cch_order_nd top separator of %u nodes: %.2f s", n,
                       gp_now() - ts);
            for (uint32_t v = 0; v < n; v++) {
                comp[v] = part[v] == 2 ? SEP : NOSEEN;
                nsep += part[v] == 2;
            }
        }
        if (j->refine > 0 && nsep > 0 && nsep < n) { /* a smaller one nearby */
            uint8_t *sep = malloc(n);
            if (!sep) goto oom;
            for (uint32_t v = 0; v < n; v++) sep[v] = comp[v] == SEP;
            const uint32_t r = gp_cch_flow_refine(n, s->first, s->adj, sep, j->refine);
            if (r == UINT32_MAX) {
                free(sep);
                goto oom;
            }
            if (r < nsep) {
                for (uint32_t v = 0; v < n; v++) comp[v] = sep[v] ? SEP : NOSEEN;
                pthread_mutex_lock(&j->mu);
                j->st.refined++;
                j->st.refine_saved += nsep - r;
                pthread_mutex_unlock(&j->mu);
                if (s->path == 0)
                    GP_LOG(GP_LOG_DEBUG, "cch_order_nd top separator refined: %u -> %u nodes", nsep,
                           r);
                nsep = r;
            }
            free(sep);
        }
        if (nsep == 0 || nsep == n) { /* no separator: METIS_NodeND orders it whole */
            rc = gp_cch_nodend(n, s->first, s->adj, s->gid, s->lo, j->rank, err);
            goto out;
        }
        uint32_t r = s->lo + n - nsep;
        for (uint32_t v = 0; v < n; v++)
            if (comp[v] == SEP) j->rank[s->gid[v]] = r++;
        nc = components(s, comp, queue);
    }
    cnt = malloc(2 * (size_t)nc * sizeof *cnt);
    if (!cnt) goto oom;
    rc = split(j, s, comp, nc, cnt, queue, err);
out:
    free(comp);
    free(queue);
    free(cnt);
    return rc;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory in the nested dissection of %u nodes", n);
    goto out;
}

static void *nd_worker(void *arg) {
    ndjob *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->len && j->active && !j->failed) pthread_cond_wait(&j->cv, &j->mu);
        if (j->failed || (!j->len && !j->active)) break;
        sub *s = heap_pop(j);
        j->active++;
        pthread_mutex_unlock(&j->mu);
        gp_err e;
        gp_err_clear(&e);
        s->t0 = thread_cpu();
        int rc = dissect(j, s, &e); /* pushes its parts before it counts itself done */
        double dt = thread_cpu() - s->t0;
        sub_free(s);
        if (rc) fail(j, &e);
        pthread_mutex_lock(&j->mu);
        j->st.work_s += dt;
        j->active--;
        if (!j->active && !j->len) pthread_cond_broadcast(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

int gp_cch_order_nd(const gp_graph *g, int threads, uint32_t leaf, uint32_t *rank,
                    gp_cch_nd_stats *stats, gp_err *err) {
    return gp_cch_order_nd_flow(g, threads, leaf, NULL, NULL, rank, stats, err);
}

int gp_cch_order_nd_flow(const gp_graph *g, int threads, uint32_t leaf, const float *xy,
                         const gp_cch_flow_opts *opts, uint32_t *rank, gp_cch_nd_stats *stats,
                         gp_err *err) {
    static const gp_cch_flow_opts flow_default = GP_CCH_FLOW_DEFAULT;
    uint32_t n = g->n;
    double t0 = gp_now(), c0 = thread_cpu();
    sub *top = calloc(1, sizeof *top);
    if (!top) return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH order");
    int rc = gp_cch_skeleton(g, &top->first, &top->adj, err);
    if (rc) {
        free(top);
        return rc;
    }
    GP_LOG(GP_LOG_DEBUG, "cch_order_nd skeleton of %u nodes: %.2f s", n, gp_now() - t0);
    top->n = n;
    top->gid = malloc(((size_t)n + 1) * sizeof *top->gid);
    if (!top->gid) {
        sub_free(top);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH order");
    }
    for (uint32_t v = 0; v < n; v++) top->gid[v] = v;
    ndjob j;
    memset(&j, 0, sizeof j);
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    j.leaf = leaf ? (leaf < 16 ? 16 : leaf) : GP_CCH_ND_LEAF;
    j.rank = rank;
    j.xy = xy;
    j.fo = opts ? opts : &flow_default;
    /* the service's nd (no coordinates, no options) as before; flow, or options given: theirs */
    j.refine = opts || xy ? j.fo->refine : 0;
    gp_err_clear(&j.err);
    pthread_mutex_lock(&order_mu);
    int nt = gp_cch_threads(threads);
    if (nt > 1 && !rand_per_thread()) nt = 1; /* the same order, one METIS call at a time */
    struct sigaction old_abrt, old_term;
    sigaction(SIGABRT, NULL, &old_abrt);
    sigaction(SIGTERM, NULL, &old_term);
    j.active = 1; /* the top, split by this thread before the others start */
    gp_err e;
    gp_err_clear(&e);
    top->t0 = c0; /* the skeleton is on the critical path too */
    rc = dissect(&j, top, &e);
    sub_free(top);
    j.st.top_s = thread_cpu() - c0;
    j.st.work_s += j.st.top_s;
    if (j.st.top_s > j.st.span_s) j.st.span_s = j.st.top_s;
    j.active = 0;
    if (rc) {
        j.failed = 1;
        j.err = e;
    }
    pthread_t th[256];
    int started = 0;
    for (int i = 1; i < nt && j.len > 0 && !j.failed; i++) {
        if (pthread_create(&th[started], NULL, nd_worker, &j) != 0) break;
        started++;
    }
    nd_worker(&j);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    sigaction(SIGABRT, &old_abrt, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    pthread_mutex_unlock(&order_mu);
    j.st.threads = nt;
    j.st.wall_s = gp_now() - t0;
    GP_LOG(GP_LOG_DEBUG,
           "cch_order_nd nodes=%u threads=%d leaf=%u splits=%u leaves=%u flow=%s flow_seps=%u "
           "flow_fallbacks=%u top_cpu_s=%.2f work_cpu_s=%.2f span_cpu_s=%.2f wall_s=%.2f",
           n, nt, j.leaf, j.st.splits, j.st.leaves, xy ? "yes" : "no", j.st.flow_seps,
           j.st.flow_fallbacks, j.st.top_s, j.st.work_s, j.st.span_s, j.st.wall_s);
    if (stats) *stats = j.st;
    while (j.len) sub_free(heap_pop(&j));
    free(j.heap);
    pthread_mutex_destroy(&j.mu);
    pthread_cond_destroy(&j.cv);
    if (j.failed) {
        if (err) *err = j.err;
        return j.err.code ? j.err.code : GP_ENOMEM;
    }
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The configured order */

static int order_mode = GP_CCH_ORDER_ND; /* GP_CCH_ORDER_* (config cch_order) */
static uint32_t order_leaf;

void gp_cch_set_order(int mode, uint32_t leaf) {
    __atomic_store_n(&order_leaf, leaf, __ATOMIC_RELAXED);
    __atomic_store_n(&order_mode, mode, __ATOMIC_RELEASE);
}

int gp_cch_order_mode(void) { return __atomic_load_n(&order_mode, __ATOMIC_ACQUIRE); }

int gp_cch_order_parse(const char *name) {
    if (!name || !*name || strcmp(name, "nd") == 0) return GP_CCH_ORDER_ND;
    if (strcmp(name, "metis") == 0) return GP_CCH_ORDER_METIS;
    if (strcmp(name, "flow") == 0) return GP_CCH_ORDER_FLOW;
    return -1;
}

int gp_cch_order(const gp_graph *g, uint32_t *rank, gp_err *err) {
    int mode = __atomic_load_n(&order_mode, __ATOMIC_ACQUIRE);
    if (mode == GP_CCH_ORDER_METIS) return gp_cch_order_metis(g, rank, err);
    return gp_cch_order_nd_flow(g, 0, __atomic_load_n(&order_leaf, __ATOMIC_RELAXED),
                                mode == GP_CCH_ORDER_FLOW ? g->cch_xy : NULL, NULL, rank, NULL,
                                err);
}

/* ---------------------------------------------------------------------------------------------
 * The turn graph's order from the road graph's cuts (gp_cch_order_turns)
 *
 * Buchhold, Wagner, Zeitz, Zuendorf, "Customizable Contraction Hierarchies with Turn Costs"
 * (ATMOS 2020): a node of the turn graph is a road arc, so an edge cut of the road graph is a
 * vertex separator of the turn graph (every turn path from one side to the other drives a cut
 * arc). The dissection therefore runs on the road graph, 2.5x smaller: a subproblem is a set R
 * of road nodes owning the turn-graph nodes T(R) (arcs with both ends in R) and a rank range of
 * |T(R)|; METIS_PartGraphRecursive bisects R (node weight: 1 + arcs out of it inside R, edge
 * weight: arcs between the two ends, so the cut's weight is the separator's size); the cut
 * arcs take the top ranks of the range, the two sides recurse below them. Subproblems of at
 * most `leaf` turn-graph nodes are ordered by METIS_NodeND on the turn graph itself. One thread,
 * deterministic (each METIS call seeds itself). */

typedef struct tsub {
    uint32_t *nodes; /* road nodes of R */
    uint32_t n, lo;  /* |R|, first rank */
} tsub;

/* Orders T(R) by METIS_NodeND on the turn graph's skeleton (tfirst, tadj) restricted to it. */
static int turn_leaf(const uint32_t *tfirst, const uint32_t *tadj, const uint32_t *tn, uint32_t cnt,
                     uint32_t lo, uint32_t *loc, uint32_t *rank, gp_err *err) {
    if (cnt < 3) {
        for (uint32_t i = 0; i < cnt; i++) rank[tn[i]] = lo + i;
        return GP_OK;
    }
    for (uint32_t i = 0; i < cnt; i++) loc[tn[i]] = i;
    uint64_t ne = 0;
    for (uint32_t i = 0; i < cnt; i++)
        for (uint32_t k = tfirst[tn[i]]; k < tfirst[tn[i] + 1]; k++) ne += loc[tadj[k]] != GP_NONE;
    uint32_t *first = malloc(((size_t)cnt + 1) * sizeof *first);
    uint32_t *adj = malloc((ne + 1) * sizeof *adj);
    int rc = GP_OK;
    if (!first || !adj) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the turn graph's order");
    } else {
        ne = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            first[i] = (uint32_t)ne;
            for (uint32_t k = tfirst[tn[i]]; k < tfirst[tn[i] + 1]; k++)
                if (loc[tadj[k]] != GP_NONE) adj[ne++] = loc[tadj[k]];
        }
        first[cnt] = (uint32_t)ne;
        if (ne) rc = gp_cch_nodend(cnt, first, adj, tn, lo, rank, err);
        else
            for (uint32_t i = 0; i < cnt; i++) rank[tn[i]] = lo + i;
    }
    for (uint32_t i = 0; i < cnt; i++) loc[tn[i]] = GP_NONE;
    free(first);
    free(adj);
    return rc;
}

/* Weighted CSR of the road graph induced by R (local ids through loc): neighbours over arcs
 * both ways, edge weight = arcs between the two, node weight 1 + arcs out inside R. Bisected by
 * METIS into side[] (0/1). */
static int turn_bisect(const gp_graph *g, const tsub *s, const uint32_t *loc, idx_t *side,
                       gp_err *err) {
    uint32_t n = s->n;
    uint64_t cap = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = s->nodes[i];
        cap += (g->row[v + 1] - g->row[v]) + (g->rrow[v + 1] - g->rrow[v]);
    }
    idx_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj), *adj = malloc((cap + 1) * sizeof *adj);
    idx_t *ew = malloc((cap + 1) * sizeof *ew), *vw = malloc(((size_t)n + 1) * sizeof *vw);
    int rc = GP_OK;
    if (!xadj || !adj || !ew || !vw) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the turn graph's order");
        goto done;
    }
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = s->nodes[i], b = (uint32_t)k, out = 0;
        xadj[i] = (idx_t)k;
        for (uint32_t a = g->row[v]; a < g->row[v + 1]; a++)
            if (loc[g->col[a]] != GP_NONE && g->col[a] != v)
                adj[k++] = (idx_t)loc[g->col[a]], out++;
        for (uint32_t a = g->rrow[v]; a < g->rrow[v + 1]; a++)
            if (loc[g->rcol[a]] != GP_NONE && g->rcol[a] != v) adj[k++] = (idx_t)loc[g->rcol[a]];
        vw[i] = 1 + (idx_t)out;
        /* sort (short lists), then merge runs into (neighbour, count) */
        for (uint32_t x = b + 1; x < k; x++) {
            idx_t y = adj[x];
            uint32_t z = x;
            while (z > b && adj[z - 1] > y) adj[z] = adj[z - 1], z--;
            adj[z] = y;
        }
        uint32_t o = b;
        for (uint32_t x = b; x < k; x++) {
            if (x > b && adj[x] == adj[x - 1]) {
                ew[o - 1]++;
                continue;
            }
            adj[o] = adj[x];
            ew[o++] = 1;
        }
        k = o;
    }
    xadj[n] = (idx_t)k;
    idx_t nv = (idx_t)n, ncon = 1, np = 2, cut = 0, opts[METIS_NOPTIONS];
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_NUMBERING] = 0;
    opts[METIS_OPTION_UFACTOR] = 100; /* 10% imbalance for a smaller cut */
    int mr = METIS_PartGraphRecursive(&nv, &ncon, xadj, adj, vw, NULL, ew, &np, NULL, NULL, opts,
                                      &cut, side);
    if (mr != METIS_OK)
        rc = gp_err_set(err, mr == METIS_ERROR_MEMORY ? GP_ENOMEM : GP_EINVAL,
                        "METIS_PartGraphRecursive failed (%d) on %u road nodes", mr, n);
done:
    free(xadj);
    free(adj);
    free(ew);
    free(vw);
    return rc;
}

int gp_cch_order_turns(const gp_graph *g, const gp_graph *tg, uint32_t leaf, uint32_t *rank,
                       gp_err *err) {
    if (tg->n != g->m)
        return gp_err_set(err, GP_EINVAL, "turn graph of %u nodes for a road graph of %u arcs",
                          tg->n, g->m);
    if (!leaf) leaf = GP_CCH_TURN_LEAF;
    uint32_t *tfirst = NULL, *tadj = NULL, *loc = NULL, *tloc = NULL, *tn = NULL;
    tsub *stack = NULL;
    idx_t *side = NULL;
    uint32_t nstack = 0, cap = 64;
    int rc = gp_cch_skeleton(tg, &tfirst, &tadj, err);
    if (rc) return rc;
    loc = malloc(((size_t)g->n + 1) * sizeof *loc);
    tloc = malloc(((size_t)tg->n + 1) * sizeof *tloc);
    tn = malloc(((size_t)tg->n + 1) * sizeof *tn);
    side = malloc(((size_t)g->n + 1) * sizeof *side);
    stack = malloc(cap * sizeof *stack);
    if (!loc || !tloc || !tn || !side || !stack) goto oom;
    for (uint32_t v = 0; v < g->n; v++) loc[v] = GP_NONE;
    for (uint32_t a = 0; a < tg->n; a++) tloc[a] = GP_NONE;
    stack[0].nodes = malloc(((size_t)g->n + 1) * sizeof *stack[0].nodes);
    if (!stack[0].nodes) goto oom;
    for (uint32_t v = 0; v < g->n; v++) stack[0].nodes[v] = v;
    stack[0].n = g->n;
    stack[0].lo = 0;
    nstack = 1;
    pthread_mutex_lock(&order_mu);
    while (nstack && rc == GP_OK) {
        tsub s = stack[--nstack];
        for (uint32_t i = 0; i < s.n; i++) loc[s.nodes[i]] = i;
        uint32_t cnt = 0; /* T(R) into tn */
        for (uint32_t i = 0; i < s.n; i++)
            for (uint32_t a = g->row[s.nodes[i]]; a < g->row[s.nodes[i] + 1]; a++)
                if (loc[g->col[a]] != GP_NONE) tn[cnt++] = a;
        if (cnt <= leaf || s.n < 4) {
            for (uint32_t i = 0; i < s.n; i++) loc[s.nodes[i]] = GP_NONE;
            rc = turn_leaf(tfirst, tadj, tn, cnt, s.lo, tloc, rank, err);
            free(s.nodes);
            continue;
        }
        rc = turn_bisect(g, &s, loc, side, err);
        uint32_t ns[2] = {0, 0}, nt[2] = {0, 0}, cut_lo = s.lo + cnt;
        for (uint32_t i = 0; rc == GP_OK && i < s.n; i++) ns[side[i] != 0]++;
        /* the cut arcs take the top of the range; the sides' arcs are ranked in their leaves */
        for (uint32_t i = 0; rc == GP_OK && ns[0] && ns[1] && i < s.n; i++) {
            uint32_t v = s.nodes[i];
            for (uint32_t a = g->row[v]; a < g->row[v + 1]; a++) {
                uint32_t w = g->col[a];
                if (loc[w] == GP_NONE) continue;
                if (side[loc[w]] == side[i]) nt[side[i] != 0]++;
                else rank[a] = --cut_lo;
            }
        }
        for (uint32_t i = 0; i < s.n; i++) loc[s.nodes[i]] = GP_NONE;
        if (rc != GP_OK) {
            free(s.nodes);
            break;
        }
        if (ns[0] == 0 || ns[1] == 0) { /* METIS could not split it: order it whole */
            rc = turn_leaf(tfirst, tadj, tn, cnt, s.lo, tloc, rank, err);
            free(s.nodes);
            continue;
        }
        if (nstack + 2 > cap) {
            tsub *t2 = realloc(stack, (size_t)cap * 2 * sizeof *stack);
            if (!t2) {
                free(s.nodes);
                pthread_mutex_unlock(&order_mu);
                goto oom;
            }
            stack = t2;
            cap *= 2;
        }
        uint32_t *p0 = malloc(((size_t)ns[0] + 1) * sizeof *p0);
        uint32_t *p1 = malloc(((size_t)ns[1] + 1) * sizeof *p1);
        if (!p0 || !p1) {
            free(p0);
            free(p1);
            free(s.nodes);
            pthread_mutex_unlock(&order_mu);
            goto oom;
        }
        uint32_t k0 = 0, k1 = 0;
        for (uint32_t i = 0; i < s.n; i++) {
            if (side[i]) p1[k1++] = s.nodes[i];
            else p0[k0++] = s.nodes[i];
        }
        free(s.nodes);
        stack[nstack++] = (tsub){p0, k0, s.lo};
        stack[nstack++] = (tsub){p1, k1, s.lo + nt[0]};
    }
    pthread_mutex_unlock(&order_mu);
    if (0) {
    oom:
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the turn graph's order");
    }
    while (nstack) free(stack[--nstack].nodes);
    free(stack);
    free(side);
    free(tn);
    free(tloc);
    free(loc);
    free(tfirst);
    free(tadj);
    return rc;
}
