/* cch.c - customizable contraction hierarchies on the CPU (see cch.h for the model): the lifecycle
 * (topologies and gp_cchs built, shared and freed), the process-wide topology cache, the pooled
 * query workspaces and the serialised order. The other parts, a file each beside it:
 *  - order: nested dissection (METIS) on the undirected skeleton, once per topology (cch_order.c);
 *  - contraction: chordal completion, levels, lower triangles (cch_contract.c);
 *  - customization: basic and perfect, on threads (cch_custom.c);
 *  - queries: p2p, one-to-all (PHAST), many-to-many (buckets): cch_query.c.
 * Query workspaces (rank-indexed distance and parent arrays) are pooled per topology and reset
 * along the elimination-tree paths they touched, so a p2p query costs O(search space), not O(n).
 */
#include "engine/cch_internal.h"
#include "graph/parallel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int gp_cch_threads(int threads) {
    if (threads <= 0) threads = gp_cpu_count();
    return threads > 256 ? 256 : threads;
}

/* malloc for the arrays queries read at random (witnesses, query arcs, weights, the elimination
 * tree, workspaces): transparent huge pages asked for (where the system leaves them to madvise)
 * on the 2 MiB pages inside, before anything is written, so that a query's scattered reads miss
 * the TLB less (p2p 3-5% faster on NY and BAY). */
void *gp_cch_big_malloc(size_t bytes) {
    void *p = malloc(bytes);
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)1 << 21;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (p && b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
    return p;
}

static void pool_free(void *pv);

/* The weight and witness arrays of one gp_cch (topo->m edges each; wit twice). A cost change
 * makes a gp_cch a version, and the one it replaces is freed soon after: its arrays are kept
 * as the topology's spare (one set) for the next, so that the next cost change writes into
 * pages already mapped instead of faulting in fresh zeroed ones (clear_page was a third of the
 * CPU time from PATCH to the new CCH on the 1 M-node map). */
typedef struct wbufs {
    uint32_t *ofw, *obw, *fw, *bw, *fmid, *bmid;
    uint64_t *wit;
    uint32_t *delta; /* gp_cch.delta of the arrays' last user, or NULL */
    uint32_t ndelta;
    uint64_t delta_base;
    uint64_t hash; /* the graph hash of the arrays' last user (its version's metric) */
    int pinned;    /* page-locked for the device (gp_cch.pinned) */
    int warm;      /* no version's: gp_cch_warm_spare's */
} wbufs;

static void wbufs_free(wbufs *b, int whole) {
    if (!b) return;
    if (b->pinned) {
        void *a[7] = {b->ofw, b->obw, b->fw, b->bw, b->fmid, b->bmid, b->wit};
        gp_cch_host_unpin(a, 7);
    }
    free(b->ofw);
    free(b->obw);
    free(b->fw);
    free(b->bw);
    free(b->fmid);
    free(b->bmid);
    free(b->wit);
    free(b->delta);
    if (whole) free(b);
}

void gp_cch_topo_unref(gp_cch_topo *t) {
    if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    wbufs_free(t->spare, 1);
    pool_free(t->pool);
    free(t->rank);
    free(t->order);
    free(t->up_first);
    free(t->up_head);
    free(t->up_tail);
    free(t->parent);
    free(t->tri_first);
    free(t->tri);
    free(t->adir);
    free(t->level_first);
    free(t);
}

uint64_t gp_cch_topo_bytes(const gp_cch_topo *t) {
    if (!t) return 0;
    return (uint64_t)t->n * 4 * 4 + (uint64_t)t->m * (4 * 2 + 1) + ((uint64_t)t->m + 1) * 8 +
           t->ntri * 8 + ((uint64_t)t->nlevels + 1) * 4;
}

/* ---------------------------------------------------------------------------------------------
 * Topology cache */

#define CACHE_MAX 4
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static gp_cch_topo *cache[CACHE_MAX];

static void cache_put(gp_cch_topo *t) {
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&cache_mu);
    gp_cch_topo *drop = cache[CACHE_MAX - 1];
    memmove(cache + 1, cache, (CACHE_MAX - 1) * sizeof *cache);
    cache[0] = t;
    pthread_mutex_unlock(&cache_mu);
    gp_cch_topo_unref(drop);
}

void gp_cch_cache_clear(void) {
    gp_cch_topo *old[CACHE_MAX];
    pthread_mutex_lock(&cache_mu);
    memcpy(old, cache, sizeof old);
    memset(cache, 0, sizeof cache);
    pthread_mutex_unlock(&cache_mu);
    for (int i = 0; i < CACHE_MAX; i++) gp_cch_topo_unref(old[i]);
}

/* ---------------------------------------------------------------------------------------------
 * Workspaces */

typedef struct cpool {
    pthread_mutex_t mu;
    gp_cch_ws *free;
    uint32_t n;
} cpool;

static void cws_free(gp_cch_ws *w) {
    if (!w) return;
    free(w->df);
    free(w->db);
    free(w->pf);
    free(w->pb);
    free(w->of);
    free(w->ob);
    free(w->sweep);
    free(w->bhead);
    free(w->uit);
    free(w->ukid);
    free(w->upos);
    free(w);
}

gp_cch_ws *gp_cch_ws_get(const gp_cch *c, gp_err *err) {
    cpool *p = c->pool;
    pthread_mutex_lock(&p->mu);
    gp_cch_ws *w = p->free;
    if (w) p->free = w->next;
    pthread_mutex_unlock(&p->mu);
    if (w) return w;
    uint32_t n = p->n;
    w = calloc(1, sizeof *w);
    if (w) {
        w->df = gp_cch_big_malloc((size_t)n * sizeof *w->df);
        w->db = gp_cch_big_malloc((size_t)n * sizeof *w->db);
        w->pf = gp_cch_big_malloc((size_t)n * sizeof *w->pf);
        w->pb = gp_cch_big_malloc((size_t)n * sizeof *w->pb);
        w->of = malloc(n);
        w->ob = malloc(n);
    }
    if (!w || !w->df || !w->db || !w->pf || !w->pb || !w->of || !w->ob) {
        cws_free(w);
        gp_err_set(err, GP_ENOMEM, "out of memory for a CCH query workspace");
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) w->df[i] = w->db[i] = GP_INF;
    return w;
}

/* Room for k nodes in w's unpacking tree. */
int gp_cch_ws_reserve(gp_cch_ws *w, uint32_t k) {
    if (k <= w->ucap) return 0;
    uint32_t nc = k < 1024 ? 1024 : k + k / 2;
    uint32_t *a = realloc(w->uit, (size_t)nc * 4);
    if (a) w->uit = a;
    uint32_t *b = a ? realloc(w->ukid, (size_t)nc * 4) : NULL;
    if (b) w->ukid = b;
    uint32_t *p = b ? realloc(w->upos, (size_t)nc * 4) : NULL;
    if (p) w->upos = p;
    if (!p) return -1;
    w->ucap = nc;
    return 0;
}

void gp_cch_ws_put(const gp_cch *c, gp_cch_ws *w) {
    cpool *p = c->pool;
    pthread_mutex_lock(&p->mu);
    w->next = p->free;
    p->free = w;
    pthread_mutex_unlock(&p->mu);
}

/* ---------------------------------------------------------------------------------------------
 * Construction */

/* The workspace pool of topology t, shared by every gp_cch over it: a workspace holds no metric
 * (a query leaves it as it found it), so a new graph version's first query takes a warm one
 * instead of allocating and clearing n-sized arrays. Created with
 * the first gp_cch; freed with the topology (gp_cch_topo_unref). */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static cpool *topo_pool(gp_cch_topo *t) {
    pthread_mutex_lock(&pool_mu);
    cpool *p = t->pool;
    if (!p && (p = calloc(1, sizeof *p))) {
        pthread_mutex_init(&p->mu, NULL);
        p->n = t->n;
        t->pool = p;
    }
    pthread_mutex_unlock(&pool_mu);
    return p;
}

static void pool_free(void *pv) {
    cpool *p = pv;
    if (!p) return;
    while (p->free) {
        gp_cch_ws *w = p->free;
        p->free = w->next;
        cws_free(w);
    }
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void gp_cch_free(void *pc) {
    gp_cch *c = pc;
    if (!c) return;
    gp_cch_perfect_drop(c); /* stops a background pass, which reads the weights */
    if (c->gpu && c->gpu_free) c->gpu_free(c->gpu);
    free(c->mchg);
    /* never customized (a restore pending): arrays that are no version's, not a spare */
    int stale = c->pend != NULL;
    if (c->pend_owned) free((void *)c->pend);
    wbufs set = {c->ofw,   c->obw,    c->fw,         c->bw,         c->fmid,   c->bmid, c->wit,
                 c->delta, c->ndelta, c->delta_base, c->graph_hash, c->pinned, 0},
          *b = NULL;
    if (!stale && set.ofw && set.obw && set.fw && set.bw && set.fmid && set.bmid && set.wit &&
        (b = malloc(sizeof *b)) != NULL) {
        *b = set;
        /* the latest freed set is the spare (the next version's predecessor is likely its
         * successor, whose delta list leads back to it); one there before goes, a prepared one
         * (gp_cch_warm_spare) too */
        wbufs_free(__atomic_exchange_n(&c->topo->spare, b, __ATOMIC_ACQ_REL), 1);
    } else {
        wbufs_free(&set, 0); /* a partial set (out of memory in cch_over), or no memory */
    }
    gp_cch_topo_unref(c->topo);
    free(c);
}

uint64_t gp_cch_bytes(const gp_cch *c) {
    /* ofw obw fw bw, fmid bmid (4 bytes each), wit (16) per edge; query arcs (12 each) */
    if (!c) return 0;
    uint64_t q = 0;
    const gp_cch_arcs *pq = gp_cch_published(c);
    for (int d = 0; pq && d < 2; d++)
        q += ((uint64_t)c->n + 1) * 4 + (uint64_t)pq[d].first[c->n] * 12;
    return (uint64_t)c->topo->m * 40 + q + gp_cch_topo_bytes(c->topo);
}

/* The weight and witness arrays of a new gp_cch written once on all CPUs: their pages are faulted
 * in by threads together rather than one by one by the copy from the GPU (a driver thread) and
 * the witness pass. */
static void first_touch(void *cv, uint64_t lo, uint64_t hi) {
    gp_cch *c = cv;
    size_t k = (size_t)(hi - lo);
    memset(c->fw + lo, 0, k * 4);
    memset(c->bw + lo, 0, k * 4);
    memset(c->fmid + lo, 0, k * 4);
    memset(c->bmid + lo, 0, k * 4);
    memset(c->wit + 2 * (size_t)lo, 0, k * 16);
}

/* The customized CCH the new version g's metric and customization start from, when it is over
 * topology t (a cost change): pg's, the version g was made from (both versions of one base), else
 * the base's; *from gets the graph whose weights it has. */
static const gp_cch *base_cch(const gp_cch_topo *t, const gp_graph *g, const gp_graph *pg,
                              const gp_graph **from) {
    const gp_cch *pc = pg && pg != g && g->base && gp_graph_owner(pg) == g->base ? pg->cch : NULL;
    if (pc && pc->topo == t && pc->n == g->n && pc->m == g->m && pc->ofw && pc->fw && !pc->prev) {
        *from = pg;
        return pc;
    }
    const gp_cch *bc = g->base ? g->base->cch : NULL;
    *from = g->base;
    return bc && bc->topo == t && bc->n == g->n && bc->m == g->m && bc->ofw && bc->fw ? bc : NULL;
}

/* A gp_cch over topology t (referenced) with g's metric; GP_EINVAL when g does not fit t. */
static int cch_over(gp_cch_topo *t, const gp_graph *g, const gp_graph *pg, gp_cch **out,
                    gp_err *err) {
    gp_cch *c = calloc(1, sizeof *c);
    cpool *p = topo_pool(t);
    if (!c || !p) {
        free(c);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH");
    }
    c->pool = p;
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
    c->topo = t;
    c->n = g->n;
    c->m = g->m;
    c->graph_hash = g->hash;
    size_t m = (size_t)t->m + 1;
    wbufs *b = __atomic_exchange_n(&t->spare, NULL, __ATOMIC_ACQ_REL);
    if (b) { /* every array is written before it is read: map_metric, customization */
        c->ofw = b->ofw, c->obw = b->obw, c->fw = b->fw, c->bw = b->bw;
        c->fmid = b->fmid, c->bmid = b->bmid, c->wit = b->wit;
        c->pinned = b->pinned;
        c->reused = !b->warm;
        c->spare_gone = c->spare_warm = b->warm;
    } else {
        /* huge pages for all of them: a new metric (an exclude key) has no spare, and its 1 GB
         * (gen:1M with turn costs) faulted in 4 KiB pages took a third of its attach */
        c->spare_gone = 1;
        c->ofw = gp_cch_big_malloc(m * 4);
        c->obw = gp_cch_big_malloc(m * 4);
        c->fw = gp_cch_big_malloc(m * 4);
        c->bw = gp_cch_big_malloc(m * 4);
        c->fmid = gp_cch_big_malloc(m * 4);
        c->bmid = gp_cch_big_malloc(m * 4);
        c->wit = gp_cch_big_malloc(m * 16);
    }
    int rc;
    if (!c->ofw || !c->obw || !c->fw || !c->bw || !c->fmid || !c->bmid || !c->wit) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for CCH weights (%u edges)", t->m);
    } else {
        const gp_graph *from = NULL;
        c->prev = base_cch(t, g, pg, &from);
        const gp_cch *p = c->prev;
        /* with a predecessor the arrays are copied from the predecessor's (in parallel; on the
         * GPU's diff path while the device customizes): they fault in then, not twice */
        if (!b && !p) gp_parallel_for(t->m, t->m >= (1u << 20) ? 0 : 1, first_touch, c);
        /* spare arrays that are prev's but at a list of edges, restored instead of copying
         * every array: those of a version customized from prev (its delta), or those of prev's
         * own predecessor (a chain of changes: prev's delta). The original weights here (the
         * metric is mapped over them); the customized ones later, while the device customizes
         * (gp_cch pend: 10-15 ms of 1.6 M edges on gen:1M with turns) */
        const uint32_t *list = NULL;
        uint32_t nlist = 0;
        double t0 = gp_now();
        if (p && b && b->delta && b->delta_base == p->graph_hash)
            list = b->delta, nlist = b->ndelta, c->pend_owned = 1, b->delta = NULL;
        else if (p && b && p->delta && p->delta_base == b->hash)
            list = p->delta, nlist = p->ndelta; /* p's: p outlives c's customization */
        if (list) {
            gp_cch_restore_from(c, p, list, nlist, GP_CCH_RESTORE_METRIC);
            c->pend = list, c->npend = nlist, c->pend_from = p;
            c->from_prev = c->listed = 1;
        }
        if (b) free(b->delta);
        double t1 = gp_now();
        if (p) rc = gp_cch_map_metric_from(c, g, p, from, err);
        else rc = gp_cch_map_metric(c, g, err);
        c->restore_s = t1 - t0, c->map_s = gp_now() - t1;
    }
    free(b);
    if (rc) {
        gp_cch_free(c);
        return rc;
    }
    *out = c;
    return GP_OK;
}

/* The prepared copy's job: its edges in chunks, claimed by warm_main's threads and by a new
 * version's prepare that would otherwise wait (wait_warm_copy); referenced by both while t->warm
 * points to it (warm_mu). */
#define WARM_CHUNK (1u << 20)
typedef struct warm_job {
    gp_cch_topo *t; /* referenced */
    gp_graph *from; /* referenced, or NULL */
    void *a[7];     /* the set's arrays, and from's CCH's (c) */
    const void *c[7];
    uint64_t m, nchunks;
    uint64_t next, done; /* atomic: chunks claimed, chunks copied */
    int refs;            /* atomic */
} warm_job;

static pthread_mutex_t warm_mu = PTHREAD_MUTEX_INITIALIZER;

static void warm_unref(warm_job *j) {
    if (!j || __atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL)) return;
    gp_graph_unref(j->from);
    gp_cch_topo_unref(j->t);
    free(j);
}

/* Chunks of the seven arrays (the witnesses: 16 bytes an edge) copied until none is left. */
static void warm_claim(warm_job *j) {
    for (;;) {
        uint64_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (k >= j->nchunks) return;
        uint64_t lo = k * WARM_CHUNK, hi = lo + WARM_CHUNK < j->m ? lo + WARM_CHUNK : j->m;
        for (int i = 0; i < 7; i++) {
            size_t w = i < 6 ? 4 : 16;
            memcpy((char *)j->a[i] + lo * w, (const char *)j->c[i] + lo * w, (size_t)(hi - lo) * w);
        }
        __atomic_add_fetch(&j->done, 1, __ATOMIC_RELEASE);
    }
}

static void warm_copy(void *jv, uint64_t lo, uint64_t hi) {
    (void)lo, (void)hi;
    warm_claim(jv);
}

/* warm_claim on every CPU (one item a thread; gp_parallel_for would stop at 16). */
static void warm_run(warm_job *j) {
    int nt = gp_cpu_count();
    if (nt > GP_PARALLEL_MAX_THREADS) nt = GP_PARALLEL_MAX_THREADS;
    gp_parallel_for_dynamic((uint64_t)(nt > 0 ? nt : 1), 0, 1, warm_copy, j);
}

/* From's arrays as a prepared copy can be made of: c, not pending a restore. */
static const gp_cch *warm_source(const gp_cch_topo *t, const gp_graph *from) {
    const gp_cch *f = from ? from->cch : NULL;
    return f && f->topo == t && !f->pend && f->ofw && f->fw && f->wit ? f : NULL;
}

static void *warm_main(void *arg) {
    warm_job *wj = arg;
    gp_cch_topo *t = wj->t;
    const gp_cch *f = warm_source(t, wj->from);
    size_t m = (size_t)t->m + 1;
    double t0 = gp_now();
    /* zeros below the requests; a copy at their priority: the next version waits for it */
    if (!f) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    wbufs *b = calloc(1, sizeof *b);
    if (b && !__atomic_load_n(&t->spare, __ATOMIC_ACQUIRE)) {
        b->warm = 1;
        b->ofw = gp_cch_big_malloc(m * 4), b->obw = gp_cch_big_malloc(m * 4);
        b->fw = gp_cch_big_malloc(m * 4), b->bw = gp_cch_big_malloc(m * 4);
        b->fmid = gp_cch_big_malloc(m * 4), b->bmid = gp_cch_big_malloc(m * 4);
        b->wit = gp_cch_big_malloc(m * 16);
        void *none = NULL;
        if (b->ofw && b->obw && b->fw && b->bw && b->fmid && b->bmid && b->wit) {
            /* zeros written once here, on this thread alone: the serving threads keep the CPUs;
             * or a copy of from's arrays, which a version customized from it takes with an empty
             * list to restore (cch_over) rather than copying every array on its way: on every
             * CPU, so that it is there for the next version (a speed file a second; from is not
             * freed before the copy is done), and on the CPUs of a version that comes meanwhile
             * (wait_warm_copy: 22 GB on road-like 24M with turn costs) */
            void *a[7] = {b->ofw, b->obw, b->fw, b->bw, b->fmid, b->bmid, b->wit};
            memcpy(wj->a, a, sizeof a);
            if (f) {
                const void *c[7] = {f->ofw, f->obw, f->fw, f->bw, f->fmid, f->bmid, f->wit};
                memcpy(wj->c, c, sizeof c);
                wj->m = m;
                wj->nchunks = (m + WARM_CHUNK - 1) / WARM_CHUNK;
                pthread_mutex_lock(&warm_mu);
                t->warm = wj;
                pthread_mutex_unlock(&warm_mu);
                warm_run(wj);
                pthread_mutex_lock(&warm_mu);
                t->warm = NULL;
                pthread_mutex_unlock(&warm_mu);
                /* chunks a helper claimed may still be under way */
                while (__atomic_load_n(&wj->done, __ATOMIC_ACQUIRE) < wj->nchunks) usleep(200);
            } else {
                for (int i = 0; i < 7; i++) memset(a[i], 0, i < 6 ? m * 4 : m * 16);
            }
            if (f && (b->delta = malloc(4)) != NULL) {
                b->ndelta = 0;
                b->delta_base = b->hash = f->graph_hash;
            }
            int kept = __atomic_compare_exchange_n(&t->spare, &none, b, 0, __ATOMIC_ACQ_REL,
                                                   __ATOMIC_ACQUIRE);
            GP_LOG(GP_LOG_DEBUG, "event=cch_spare_warm what=%s bytes=%llu kept=%d ms=%.1f",
                   f ? "copy" : "zeros", (unsigned long long)m * 40, kept, (gp_now() - t0) * 1e3);
            if (kept) b = NULL; /* the topology's now */
        }
    }
    wbufs_free(b, 1); /* none made, or a freed version's came first */
    __atomic_store_n(&t->warming, 0, __ATOMIC_RELEASE);
    warm_unref(wj);
    return NULL;
}

void gp_cch_warm_spare(gp_cch_topo *t, uint64_t max_bytes, gp_graph *from) {
    if (!t || (uint64_t)t->m * 40 > max_bytes || __atomic_load_n(&t->spare, __ATOMIC_ACQUIRE))
        return;
    /* warming: 1 zeros, 2 a copy of from's (gp_cch_prepare_from waits for those); the same
     * test of from as warm_main's, so that no version waits for zeros */
    int idle = 0;
    if (!__atomic_compare_exchange_n(&t->warming, &idle, warm_source(t, from) ? 2 : 1, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    warm_job *wj = calloc(1, sizeof *wj);
    if (!wj) {
        __atomic_store_n(&t->warming, 0, __ATOMIC_RELEASE);
        return;
    }
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
    wj->t = t;
    wj->from = gp_graph_ref(from);
    wj->refs = 1;
    if (gp_thread_detached(warm_main, wj) == 0) return;
    __atomic_store_n(&t->warming, 0, __ATOMIC_RELEASE);
    warm_unref(wj);
}

int gp_cch_new(const gp_graph *g, int threads, gp_cch **out, gp_err *err) {
    gp_cch *c = NULL;
    int rc = gp_cch_prepare(g, &c, err);
    if (rc) return rc;
    rc = gp_cch_customize(c, threads, err);
    if (rc) {
        gp_cch_free(c);
        return rc;
    }
    *out = c;
    return GP_OK;
}

int gp_cch_prepare(const gp_graph *g, gp_cch **out, gp_err *err) {
    return gp_cch_prepare_from(g, NULL, out, err);
}

/* A copy of a serving version's arrays under way on a cached topology of g's size (warm_main, a
 * speed file ago): its remaining chunks copied here too, on every CPU, then waited for (at most
 * 5 s) before the cache's lock is taken, as the new version would copy as much itself, into fresh
 * pages. The seconds it took. */
static double wait_warm_copy(const gp_graph *g) {
    gp_cch_topo *t = NULL;
    double t0 = gp_now();
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CACHE_MAX && !t; i++)
        if (cache[i] && cache[i]->n == g->n &&
            __atomic_load_n(&cache[i]->warming, __ATOMIC_ACQUIRE) == 2) {
            t = cache[i];
            __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
        }
    pthread_mutex_unlock(&cache_mu);
    if (!t) return 0;
    pthread_mutex_lock(&warm_mu);
    warm_job *wj = t->warm;
    if (wj) __atomic_add_fetch(&wj->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&warm_mu);
    if (wj) {
        /* next runs past the end once every chunk is claimed */
        if (__atomic_load_n(&wj->next, __ATOMIC_RELAXED) < wj->nchunks) warm_run(wj);
        warm_unref(wj);
    }
    for (int i = 0; i < 5000 && __atomic_load_n(&t->warming, __ATOMIC_ACQUIRE) == 2 &&
                    !__atomic_load_n(&t->spare, __ATOMIC_ACQUIRE);
         i++)
        usleep(1000);
    gp_cch_topo_unref(t);
    return gp_now() - t0;
}

int gp_cch_prepare_from(const gp_graph *g, const gp_graph *pg, gp_cch **out, gp_err *err) {
    gp_cch *c = NULL;
    int rc;
    double waited = wait_warm_copy(g);
    /* a cached topology that covers every arc of g */
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CACHE_MAX && !c; i++) {
        if (!cache[i] || cache[i]->n != g->n) continue;
        gp_err e2;
        gp_err_clear(&e2);
        if (cch_over(cache[i], g, pg, &c, &e2) == GP_OK) {
            gp_cch_topo *hit = cache[i];
            memmove(cache + 1, cache, (size_t)i * sizeof *cache);
            cache[0] = hit;
            c->reused_topo = 1;
        }
    }
    pthread_mutex_unlock(&cache_mu);
    if (!c) {
        uint32_t *rank = malloc((size_t)g->n * sizeof *rank);
        if (!rank) return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH order");
        double t0 = gp_now();
        gp_cch_topo *t = NULL;
        rc = gp_cch_order(g, rank, err);
        double ord = gp_now() - t0;
        if (rc == GP_OK) rc = gp_cch_topo_build(g, rank, &t, err);
        free(rank);
        if (rc) return rc;
        t->order_s = ord;
        rc = cch_over(t, g, pg, &c, err);
        if (rc == GP_OK) cache_put(t);
        gp_cch_topo_unref(t);
        if (rc) return rc;
    }
    c->spare_wait_s = waited;
    *out = c; /* c->prev: the base's CCH when g is a version over the same topology (cch_over) */
    return GP_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Serialised order */

#define ORDER_MAGIC "GPCCHORD"
#define ORDER_VERSION 1u

static uint64_t fingerprint(const gp_graph *g) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ g->n ^ ((uint64_t)g->m << 32);
    for (uint32_t i = 0; i <= g->n; i++) h = (h ^ g->row[i]) * 0x100000001b3ull;
    for (uint32_t i = 0; i < g->m; i++) h = (h ^ g->col[i]) * 0x100000001b3ull;
    return h;
}

static void put_le32(unsigned char *p, uint32_t x) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(x >> (8 * i));
}
static uint32_t get_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define ORDER_HDR 24

int gp_cch_order_encode(const uint32_t *rank, const gp_graph *g, void **out, uint64_t *size,
                        gp_err *err) {
    uint64_t sz = ORDER_HDR + (uint64_t)g->n * 4;
    unsigned char *p = malloc(sz);
    if (!p) return gp_err_set(err, GP_ENOMEM, "out of memory encoding the CCH order");
    memcpy(p, ORDER_MAGIC, 8);
    put_le32(p + 8, ORDER_VERSION);
    put_le32(p + 12, g->n);
    uint64_t fp = fingerprint(g);
    put_le32(p + 16, (uint32_t)fp);
    put_le32(p + 20, (uint32_t)(fp >> 32));
    for (uint32_t v = 0; v < g->n; v++) put_le32(p + ORDER_HDR + 4 * (uint64_t)v, rank[v]);
    *out = p;
    *size = sz;
    return GP_OK;
}

int gp_cch_order_decode(const gp_graph *g, const void *data, uint64_t size, gp_err *err) {
    const unsigned char *p = data;
    if (size < ORDER_HDR || memcmp(p, ORDER_MAGIC, 8) != 0)
        return gp_err_set(err, GP_EPARSE, "not a CCH order record");
    if (get_le32(p + 8) != ORDER_VERSION)
        return gp_err_set(err, GP_EPARSE, "CCH order record version %u (expected %u)",
                          get_le32(p + 8), ORDER_VERSION);
    uint64_t fp = (uint64_t)get_le32(p + 16) | (uint64_t)get_le32(p + 20) << 32;
    if (get_le32(p + 12) != g->n || fp != fingerprint(g))
        return gp_err_set(err, GP_EPARSE, "CCH order record is for another graph");
    if (size != ORDER_HDR + (uint64_t)g->n * 4)
        return gp_err_set(err, GP_EPARSE, "CCH order record has %llu bytes (expected %llu)",
                          (unsigned long long)size,
                          (unsigned long long)(ORDER_HDR + (uint64_t)g->n * 4));
    uint32_t *rank = malloc((size_t)g->n * sizeof *rank + 4);
    if (!rank) return gp_err_set(err, GP_ENOMEM, "out of memory for the CCH order");
    for (uint32_t v = 0; v < g->n; v++) rank[v] = get_le32(p + ORDER_HDR + 4 * (uint64_t)v);
    gp_cch_topo *t = NULL;
    int rc = gp_cch_topo_build(g, rank, &t, err); /* checks that rank is a permutation */
    free(rank);
    if (rc) return rc;
    cache_put(t);
    gp_cch_topo_unref(t);
    return GP_OK;
}
