/* planning_cuda.c - ECMP link loads and failure scenarios on the GPU (gp_plan_load_cuda,
 * gp_plan_failures_cuda, engine/planning.h): uploads the routing tables' links, their all-pairs
 * matrix and the demands, runs kernels/planload.cu over the destinations (loads) or over the
 * touched (scenario, destination) pairs of batches of scenarios, and copies the results back.
 * Built without CUDA, or on a machine without a device, it answers GP_EUNSUPPORTED.
 */
#include "engine/planning.h"

#include <stdio.h>
#include <string.h>

#ifndef GP_HAVE_CUDA
int gp_plan_load_cuda(const gp_rt *t, const gp_demands *d, double *load, double *unrouted_vol,
                      double *gpu_ms, gp_err *err) {
    (void)t, (void)d, (void)load, (void)unrouted_vol, (void)gpu_ms;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}

int gp_plan_failures_cuda(const gp_rt *t, const gp_demands *d, const double *cap, const gp_fail *sc,
                          size_t nscen, const double *base, double base_lost, int threads,
                          uint32_t list_max, gp_scenario_result *res, gp_plan_stats *st,
                          gp_err *err) {
    (void)t, (void)d, (void)cap, (void)sc, (void)nscen, (void)base, (void)base_lost, (void)res;
    (void)threads, (void)st, (void)list_max;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
#else

#include "kernels/planload.h"

#include "engine/progress.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SCRATCH_BUDGET (256ull << 20)
#define LOADS_BUDGET (1ull << 30) /* per-scenario load vectors of one batch */
#define FAIL_BLOCKS 4096u         /* thread blocks of the scenario kernel at most */
#define FAIL_SCRATCH (1ull << 30) /* their scratch */

/* The tables' links, distances and the demands on the device: p[0..6] (cudaFree each). */
static cudaError_t upload(const gp_rt *t, const gp_demands *d, void *p[7], gp_plan_dev *in,
                          cudaStream_t s) {
    uint32_t n = t->n, L = gp_plan_links(t);
    size_t sz[7] = {((size_t)n + 1) * 4, (size_t)L * 4 + 4, (size_t)L * 4 + 4, (size_t)n * n * 8,
                    ((size_t)n + 1) * 4, d->count * 4 + 4,  d->count * 8 + 8};
    const void *src[7] = {t->nb_off, t->nb, t->nbw, t->dist, d->off, d->src, d->vol};
    size_t cp[7] = {((size_t)n + 1) * 4, (size_t)L * 4, (size_t)L * 4, (size_t)n * n * 8,
                    ((size_t)n + 1) * 4, d->count * 4,  d->count * 8};
    cudaError_t ce = cudaSuccess;
    for (int i = 0; i < 7 && ce == cudaSuccess; i++) ce = cudaMalloc(&p[i], sz[i]);
    for (int i = 0; i < 7 && ce == cudaSuccess; i++)
        if (cp[i]) ce = cudaMemcpyAsync(p[i], src[i], cp[i], cudaMemcpyHostToDevice, s);
    *in = (gp_plan_dev){.n = n,
                        .distT = NULL,
                        .flow = NULL,
                        .ecmp_max = t->ecmp_max,
                        .nb_off = p[0],
                        .nb = p[1],
                        .nbw = p[2],
                        .dist = p[3],
                        .doff = p[4],
                        .dsrc = p[5],
                        .dvol = p[6]};
    return ce;
}

static int no_device(gp_err *err) {
    int devs = 0;
    if (cudaGetDeviceCount(&devs) == cudaSuccess && devs > 0) return 0;
    cudaGetLastError();
    gp_err_set(err, GP_EUNSUPPORTED, "no CUDA device");
    return 1;
}

int gp_plan_load_cuda(const gp_rt *t, const gp_demands *d, double *load, double *unrouted_vol,
                      double *gpu_ms, gp_err *err) {
    if (no_device(err)) return GP_EUNSUPPORTED;
    uint32_t n = t->n, L = gp_plan_links(t);
    uint32_t batch = n ? n : 1;
    while (batch > 1 && gp_cuda_plan_scratch_bytes(n, batch) > SCRATCH_BUDGET) batch /= 2;
    void *p[9] = {0};
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = GP_OK;
    gp_plan_dev in;
    cudaError_t ce = cudaStreamCreate(&s);
    if (ce == cudaSuccess) ce = upload(t, d, p, &in, s);
    if (ce == cudaSuccess) ce = cudaMalloc(&p[7], (size_t)L * 8 + 8);
    if (ce == cudaSuccess) ce = cudaMalloc(&p[8], gp_cuda_plan_scratch_bytes(n, batch));
    double *dload = p[7], lost = 0;
    if (ce == cudaSuccess) ce = cudaMemsetAsync(dload, 0, (size_t)L * 8 + 8, s); /* load + lost */
    if (ce == cudaSuccess) ce = cudaEventCreate(&e0);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e1);
    if (ce == cudaSuccess) ce = cudaEventRecord(e0, s);
    for (uint32_t d0 = 0; d0 < n && ce == cudaSuccess; d0 += batch) {
        uint32_t k = n - d0 < batch ? n - d0 : batch;
        ce = (cudaError_t)gp_cuda_plan_load(&in, d0, k, dload, dload + L, p[8], s);
    }
    if (ce == cudaSuccess) ce = cudaEventRecord(e1, s);
    if (ce == cudaSuccess)
        ce = cudaMemcpyAsync(load, dload, (size_t)L * 8, cudaMemcpyDeviceToHost, s);
    if (ce == cudaSuccess) ce = cudaMemcpyAsync(&lost, dload + L, 8, cudaMemcpyDeviceToHost, s);
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
    float ms = 0;
    if (ce == cudaSuccess && gpu_ms && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess)
        *gpu_ms = ms;
    if (ce != cudaSuccess)
        rc = gp_err_set(err, GP_EDEVICE, "link loads on the GPU: %s", cudaGetErrorString(ce));
    else if (unrouted_vol) *unrouted_vol = lost;
    for (int i = 0; i < 9; i++) cudaFree(p[i]);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
#endif

#ifdef GP_HAVE_CUDA
/* One batch of scenarios [s0, s0 + nb) on the host side: failure lists and touched pairs. */
typedef struct fbatch {
    uint32_t *foff, *flinks, *roff, *frouters, *iscen, *idst, *affected;
    size_t nl, nr, ni, cap_items;
    double *lost;
    gp_plan_fin *fin;
    unsigned long long *list;
    unsigned int *nlisted;
} fbatch;

static void fbatch_free(fbatch *b) {
    if (!b) return;
    free(b->foff), free(b->flinks), free(b->roff), free(b->frouters);
    free(b->iscen), free(b->idst), free(b->affected), free(b->lost);
    free(b->fin), free(b->list), free(b->nlisted);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Scenario k's lists from the kernel's appends (nl of them, keys destination << 33 | router << 1 |
 * disconnected): sorted, as run_scenario lists them; -1 out of memory. */
static int take_list(unsigned long long *keys, uint32_t nl, gp_scenario_result *r) {
    if (!nl) return 0;
    qsort(keys, nl, sizeof *keys, cmp_u64);
    r->pairs = malloc((size_t)nl * sizeof *r->pairs);
    if (!r->pairs) return -1;
    for (uint32_t i = 0; i < nl; i++)
        r->pairs[i] = (gp_plan_pair){.router = (uint32_t)(keys[i] >> 1 & 0xffffffffu),
                                     .dst = (uint32_t)(keys[i] >> 33),
                                     .disconnected = (uint32_t)(keys[i] & 1)};
    r->npairs = nl;
    return 0;
}

/* Lists scenarios s0 .. s0 + nb - 1 and their touched destinations; -1 out of memory. */
static int fbatch_fill(const gp_rt *t, const gp_fail *sc, size_t s0, uint32_t nb, uint8_t *dead,
                       fbatch *b) {
    b->nl = b->nr = b->ni = 0;
    b->foff[0] = b->roff[0] = 0;
    for (uint32_t k = 0; k < nb; k++) {
        const gp_fail *f = &sc[s0 + k];
        if (f->nlinks) memcpy(b->flinks + b->nl, f->links, (size_t)f->nlinks * 4);
        if (f->nrouters) memcpy(b->frouters + b->nr, f->routers, (size_t)f->nrouters * 4);
        b->nl += f->nlinks;
        b->nr += f->nrouters;
        b->foff[k + 1] = (uint32_t)b->nl;
        b->roff[k + 1] = (uint32_t)b->nr;
        for (uint32_t i = 0; i < f->nrouters; i++) dead[f->routers[i]] = 1;
        b->affected[k] = 0;
        /* links only: the rows of each failed link's ends, read along (gp_plan_touches' rule) */
        uint32_t nt = f->nrouters || f->nlinks > 8 ? 0 : f->nlinks, tail[8], head[8];
        for (uint32_t i = 0; i < nt; i++)
            tail[i] = gp_plan_link_tail(t, f->links[i]), head[i] = t->nb[f->links[i]];
        for (uint32_t dst = 0; dst < t->n; dst++) {
            int hit = 0;
            for (uint32_t i = 0; i < nt && !hit; i++) {
                uint64_t du = t->dist[(uint64_t)tail[i] * t->n + dst],
                         dk = t->dist[(uint64_t)head[i] * t->n + dst];
                hit = tail[i] != head[i] && dk != GP_INF && dk + t->nbw[f->links[i]] == du;
            }
            if (nt ? !hit : !gp_plan_touches(t, f, dst, dead, NULL)) continue;
            if (b->ni == b->cap_items) {
                size_t c = b->cap_items * 2 + 1024;
                uint32_t *x = realloc(b->iscen, c * 4), *y = x ? realloc(b->idst, c * 4) : NULL;
                if (x) b->iscen = x;
                if (!y) return -1;
                b->idst = y;
                b->cap_items = c;
            }
            b->iscen[b->ni] = k;
            b->idst[b->ni++] = dst;
            b->affected[k]++;
        }
        for (uint32_t i = 0; i < f->nrouters; i++) dead[f->routers[i]] = 0;
    }
    return 0;
}

/* Scenarios whose kernel list overflowed, listed again on CPU threads (gp_plan_list_pairs). */
typedef struct relist_ctx {
    const gp_rt *t;
    const gp_fail *sc;
    gp_scenario_result *res;
    const unsigned int *nlisted;
    uint32_t nb, list_max;
    atomic_uint next;
    atomic_int failed;
} relist_ctx;

static void *relist_worker(void *arg) {
    relist_ctx *c = arg;
    for (uint32_t k; (k = atomic_fetch_add(&c->next, 1)) < c->nb;)
        if (c->nlisted[k] > c->list_max &&
            gp_plan_list_pairs(c->t, &c->sc[k], c->list_max, &c->res[k]))
            atomic_store(&c->failed, 1);
    return NULL;
}

static int relist(const gp_rt *t, const gp_fail *sc, gp_scenario_result *res,
                  const unsigned int *nlisted, uint32_t nb, uint32_t list_max, int threads) {
    uint32_t over = 0;
    for (uint32_t k = 0; k < nb; k++) over += nlisted[k] > list_max;
    if (!over) return 0;
    relist_ctx c = {
        .t = t, .sc = sc, .res = res, .nlisted = nlisted, .nb = nb, .list_max = list_max};
    atomic_init(&c.next, 0);
    atomic_init(&c.failed, 0);
    int T = threads > 0 ? threads : gp_cpu_count();
    if (T > 64) T = 64;
    if ((uint32_t)T > over) T = (int)over;
    pthread_t th[64];
    int started[64] = {0};
    for (int k = 1; k < T; k++) started[k] = pthread_create(&th[k], NULL, relist_worker, &c) == 0;
    relist_worker(&c);
    for (int k = 1; k < T; k++)
        if (started[k]) pthread_join(th[k], NULL);
    return atomic_load(&c.failed) ? -1 : 0;
}

/* The base flows of every destination on the device (in->flow, n x n) by the load kernel, and
 * the transposed distances (in->distT): the scenario kernel's inputs. p[0..2]: cudaFree each. */
static cudaError_t prepare(const gp_rt *t, gp_plan_dev *in, void *p[3], cudaStream_t s) {
    uint32_t n = t->n, L = gp_plan_links(t), batch = n ? n : 1;
    while (batch > 1 && gp_cuda_plan_scratch_bytes(n, batch) > SCRATCH_BUDGET) batch /= 2;
    size_t nn = (size_t)n * n * 8 + 8;
    cudaError_t ce = cudaMalloc(&p[0], nn);
    if (ce == cudaSuccess) ce = cudaMalloc(&p[1], nn);
    if (ce == cudaSuccess)
        ce = cudaMalloc(&p[2], gp_cuda_plan_scratch_bytes(n, batch) + (size_t)L * 8 + 16);
    if (ce != cudaSuccess) return ce;
    in->distT = p[0];
    in->flow = p[1];
    ce = (cudaError_t)gp_cuda_plan_transpose(in->dist, p[0], n, s);
    if (ce == cudaSuccess) ce = cudaMemsetAsync(p[1], 0, nn, s);
    /* the loads themselves (and their unrouted volume) land past the scratch, unused */
    double *ld =
        (double *)((char *)p[2] + ((gp_cuda_plan_scratch_bytes(n, batch) + 7) & ~(size_t)7));
    for (uint32_t d0 = 0; d0 < n && ce == cudaSuccess; d0 += batch) {
        uint32_t k = n - d0 < batch ? n - d0 : batch;
        ce = (cudaError_t)gp_cuda_plan_load(in, d0, k, ld, ld + L, p[2], s);
    }
    return ce;
}

int gp_plan_failures_cuda(const gp_rt *t, const gp_demands *d, const double *cap, const gp_fail *sc,
                          size_t nscen, const double *base, double base_lost, int threads,
                          uint32_t list_max, gp_scenario_result *res, gp_plan_stats *st,
                          gp_err *err) {
    if (no_device(err)) return GP_EUNSUPPORTED;
    uint32_t n = t->n, L = gp_plan_links(t);
    size_t per = (size_t)L * 8 + 8 + (size_t)list_max * 8 + 4;
    uint32_t nbmax = (uint32_t)(LOADS_BUDGET / per);
    if (nbmax < 1) nbmax = 1;
    if (nbmax > nscen) nbmax = (uint32_t)(nscen ? nscen : 1);
    size_t maxl = 0, maxr = 0; /* failure-list lengths of the largest batch */
    for (size_t s0 = 0; s0 < nscen; s0 += nbmax) {
        size_t nl = 0, nr = 0;
        for (size_t k = s0; k < nscen && k < s0 + nbmax; k++)
            nl += sc[k].nlinks, nr += sc[k].nrouters;
        if (nl > maxl) maxl = nl;
        if (nr > maxr) maxr = nr;
    }
    fbatch b = {0};
    b.foff = malloc(((size_t)nbmax + 1) * 4);
    b.roff = malloc(((size_t)nbmax + 1) * 4);
    b.flinks = malloc((maxl + 1) * 4);
    b.frouters = malloc((maxr + 1) * 4);
    b.affected = malloc((size_t)nbmax * 4);
    b.lost = malloc((size_t)nbmax * 8);
    b.fin = malloc((size_t)nbmax * sizeof *b.fin);
    if (list_max) {
        b.list = malloc((size_t)nbmax * list_max * 8);
        b.nlisted = malloc((size_t)nbmax * 4);
    }
    unsigned long long *cnt = malloc((size_t)nbmax * 16);
    uint8_t *dead = calloc((size_t)n + 1, 1);
    if (!b.foff || !b.roff || !b.flinks || !b.frouters || !b.affected || !b.lost || !b.fin ||
        (list_max && (!b.list || !b.nlisted)) || !cnt || !dead) {
        fbatch_free(&b), free(cnt), free(dead);
        return gp_err_set(err, GP_ENOMEM, "out of memory for failure analysis");
    }
    gp_progress *prog = gp_progress_get();
    /* q: foff flinks roff frouters loads+lost counts scratch items fin list+nlisted */
    void *p[7] = {0}, *pf[3] = {0}, *q[10] = {0}, *dcap = NULL;
    size_t qcap[10] = {0};
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    gp_plan_dev in;
    double gpu_s = 0, eps = 1e-9 * (d->total > 0 ? d->total : 1);
    uint64_t items = 0;
    uint32_t batches = 0;
    cudaError_t ce = cudaStreamCreate(&s);
    if (ce == cudaSuccess) ce = upload(t, d, p, &in, s);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e0);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e1);
    if (ce == cudaSuccess) ce = cudaEventRecord(e0, s);
    if (ce == cudaSuccess) ce = prepare(t, &in, pf, s);
    if (ce == cudaSuccess) ce = cudaEventRecord(e1, s);
    if (ce == cudaSuccess && cap) ce = cudaMalloc(&dcap, (size_t)L * 8 + 8);
    if (ce == cudaSuccess && cap)
        ce = cudaMemcpyAsync(dcap, cap, (size_t)L * 8, cudaMemcpyHostToDevice, s);
    float ms0 = 0;
    if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
    if (ce == cudaSuccess && cudaEventElapsedTime(&ms0, e0, e1) == cudaSuccess) gpu_s += ms0 / 1e3;
    int rc = GP_OK;
    for (size_t s0 = 0; s0 < nscen && ce == cudaSuccess && rc == GP_OK; s0 += nbmax) {
        uint32_t nb = nscen - s0 < nbmax ? (uint32_t)(nscen - s0) : nbmax;
        if (gp_progress_cancelled(prog)) {
            rc = gp_err_set(err, GP_ECANCELLED, "failure analysis cancelled");
            break;
        }
        if (fbatch_fill(t, sc, s0, nb, dead, &b)) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for failure analysis");
            break;
        }
        uint32_t nblocks = b.ni < FAIL_BLOCKS ? (uint32_t)b.ni : FAIL_BLOCKS;
        while (nblocks > 64 && gp_cuda_plan_fail_scratch_bytes(n, L, nblocks) > FAIL_SCRATCH)
            nblocks /= 2;
        size_t need[10] = {((size_t)nb + 1) * 4,
                           b.nl * 4 + 4,
                           ((size_t)nb + 1) * 4,
                           b.nr * 4 + 4,
                           (size_t)nb * ((size_t)L * 8 + 8),
                           (size_t)nb * 16,
                           gp_cuda_plan_fail_scratch_bytes(n, L, nblocks ? nblocks : 1),
                           b.ni * 8 + 8,
                           (size_t)nb * sizeof(gp_plan_fin),
                           list_max ? (size_t)nb * ((size_t)list_max * 8 + 4) : 8};
        for (int i = 0; i < 10 && ce == cudaSuccess; i++)
            if (need[i] > qcap[i]) { /* grow (the first batch is the largest but for lists) */
                cudaFree(q[i]);
                q[i] = NULL;
                ce = cudaMalloc(&q[i], need[i]);
                qcap[i] = ce == cudaSuccess ? need[i] : 0;
            }
        if (ce != cudaSuccess) break;
        double *dl = q[4], *dlost = dl + (size_t)nb * L;
        unsigned long long *dc = q[5], *dlist = list_max ? q[9] : NULL;
        unsigned int *dnl = list_max ? (unsigned int *)(dlist + (size_t)nb * list_max) : NULL;
        uint32_t *ditems = q[7];
        for (uint32_t k = 0; k < nb; k++) b.lost[k] = base_lost;
        const void *hs[4] = {b.foff, b.flinks, b.roff, b.frouters};
        for (int i = 0; i < 4 && ce == cudaSuccess; i++)
            ce = cudaMemcpyAsync(q[i], hs[i], need[i] - (i % 2 ? 4 : 0), cudaMemcpyHostToDevice, s);
        if (ce == cudaSuccess && b.ni)
            ce = cudaMemcpyAsync(ditems, b.iscen, b.ni * 4, cudaMemcpyHostToDevice, s);
        if (ce == cudaSuccess && b.ni)
            ce = cudaMemcpyAsync(ditems + b.ni, b.idst, b.ni * 4, cudaMemcpyHostToDevice, s);
        if (ce == cudaSuccess) /* base loads into slot 0, then doubling copies */
            ce = cudaMemcpyAsync(dl, base, (size_t)L * 8, cudaMemcpyHostToDevice, s);
        for (uint32_t have = 1; have < nb && ce == cudaSuccess; have *= 2) {
            uint32_t k = nb - have < have ? nb - have : have;
            ce = cudaMemcpyAsync(dl + (size_t)have * L, dl, (size_t)k * L * 8,
                                 cudaMemcpyDeviceToDevice, s);
        }
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(dlost, b.lost, (size_t)nb * 8, cudaMemcpyHostToDevice, s);
        if (ce == cudaSuccess) ce = cudaMemsetAsync(dc, 0, (size_t)nb * 16, s);
        if (ce == cudaSuccess && list_max) ce = cudaMemsetAsync(dnl, 0, (size_t)nb * 4, s);
        gp_plan_fail_dev f = {.item_scen = ditems,
                              .item_dst = ditems + b.ni,
                              .nitems = (uint32_t)b.ni,
                              .foff = q[0],
                              .flinks = q[1],
                              .roff = q[2],
                              .frouters = q[3],
                              .loads = dl,
                              .lost = dlost,
                              .changed = dc,
                              .disconnected = dc + nb,
                              .list = dlist,
                              .nlisted = dnl,
                              .list_max = list_max};
        if (ce == cudaSuccess) ce = cudaEventRecord(e0, s);
        if (ce == cudaSuccess) ce = (cudaError_t)gp_cuda_plan_fail(&in, &f, nblocks, q[6], s);
        if (ce == cudaSuccess)
            ce = (cudaError_t)gp_cuda_plan_finish(&in, &f, nb, dcap, eps, q[8], s);
        if (ce == cudaSuccess) ce = cudaEventRecord(e1, s);
        if (ce == cudaSuccess)
            ce =
                cudaMemcpyAsync(b.fin, q[8], (size_t)nb * sizeof *b.fin, cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(cnt, dc, (size_t)nb * 16, cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess && list_max)
            ce = cudaMemcpyAsync(b.nlisted, dnl, (size_t)nb * 4, cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess && list_max)
            ce = cudaMemcpyAsync(b.list, dlist, (size_t)nb * list_max * 8, cudaMemcpyDeviceToHost,
                                 s);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
        float ms = 0;
        if (ce == cudaSuccess && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess)
            gpu_s += ms / 1e3;
        if (ce != cudaSuccess) break;
        for (uint32_t k = 0; k < nb && rc == GP_OK; k++) {
            gp_scenario_result *r = &res[s0 + k];
            const gp_plan_fin *x = &b.fin[k];
            memset(r, 0, sizeof *r);
            r->changed_pairs = cnt[k];
            r->disconnected_pairs = cnt[nb + k];
            r->affected = b.affected[k];
            r->unrouted_volume = x->lost;
            r->worst_utilization = x->worst_utilization;
            r->worst_link = x->worst_link;
            r->worst_load = x->worst_load;
            memcpy(r->top, x->top, sizeof r->top);
            memcpy(r->top_load, x->top_load, sizeof r->top_load);
            if (!list_max || !r->changed_pairs || b.nlisted[k] > list_max) continue;
            if (take_list(b.list + (size_t)k * list_max, b.nlisted[k], r))
                rc = gp_err_set(err, GP_ENOMEM, "out of memory for the pair lists");
        }
        /* past list_max the kernel kept an arbitrary subset: the CPU lists those scenarios */
        if (list_max && rc == GP_OK &&
            relist(t, sc + s0, res + s0, b.nlisted, nb, list_max, threads))
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the pair lists");
        items += b.ni;
        batches++;
        gp_progress_add(prog, nb);
    }
    if (ce != cudaSuccess && rc == GP_OK)
        rc =
            gp_err_set(err, GP_EDEVICE, "failure scenarios on the GPU: %s", cudaGetErrorString(ce));
    if (st) {
        st->strategy = GP_PLAN_GPU;
        st->columns = items;
        st->accumulations = items;
        st->affected_sum = items;
        st->gpu_s = gpu_s;
        st->batches = batches;
    }
    for (int i = 0; i < 7; i++) cudaFree(p[i]);
    for (int i = 0; i < 3; i++) cudaFree(pf[i]);
    for (int i = 0; i < 10; i++) cudaFree(q[i]);
    cudaFree(dcap);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    fbatch_free(&b), free(cnt), free(dead);
    return rc;
}
#endif
