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
                          gp_scenario_result *res, gp_plan_stats *st, gp_err *err) {
    (void)t, (void)d, (void)cap, (void)sc, (void)nscen, (void)base, (void)base_lost, (void)res;
    (void)threads, (void)st;
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
} fbatch;

static void fbatch_free(fbatch *b) {
    if (!b) return;
    free(b->foff), free(b->flinks), free(b->roff), free(b->frouters);
    free(b->iscen), free(b->idst), free(b->affected), free(b->lost);
}

/* The results of a batch from its loads, on CPU threads (gp_plan_finish per scenario). */
typedef struct fin_ctx {
    const gp_rt *t;
    const gp_demands *d;
    const double *cap;
    const gp_fail *sc;
    gp_scenario_result *res;
    double *loads, *lost;
    const unsigned long long *cnt;
    const uint32_t *affected;
    uint32_t nb;
    atomic_uint next;
} fin_ctx;

static void *fin_worker(void *arg) {
    fin_ctx *c = arg;
    uint32_t L = gp_plan_links(c->t);
    for (uint32_t k; (k = atomic_fetch_add(&c->next, 1)) < c->nb;) {
        gp_scenario_result *r = &c->res[k];
        memset(r, 0, sizeof *r);
        r->changed_pairs = c->cnt[k];
        r->disconnected_pairs = c->cnt[c->nb + k];
        r->affected = c->affected[k];
        gp_plan_finish(c->t, c->d, c->cap, &c->sc[k], c->loads + (size_t)k * L, c->lost[k], r);
    }
    return NULL;
}

static void finish_all(fin_ctx *c, int threads) {
    int T = threads > 0 ? threads : gp_cpu_count();
    if (T > 64) T = 64;
    if ((uint32_t)T > c->nb / 16 + 1) T = (int)(c->nb / 16 + 1);
    pthread_t th[64];
    int started[64] = {0};
    for (int k = 1; k < T; k++) started[k] = pthread_create(&th[k], NULL, fin_worker, c) == 0;
    fin_worker(c);
    for (int k = 1; k < T; k++)
        if (started[k]) pthread_join(th[k], NULL);
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

int gp_plan_failures_cuda(const gp_rt *t, const gp_demands *d, const double *cap, const gp_fail *sc,
                          size_t nscen, const double *base, double base_lost, int threads,
                          gp_scenario_result *res, gp_plan_stats *st, gp_err *err) {
    if (no_device(err)) return GP_EUNSUPPORTED;
    uint32_t n = t->n, L = gp_plan_links(t);
    size_t per = (size_t)L * 8 + 8;
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
    double *loads = malloc((size_t)nbmax * L * 8 + 8);
    unsigned long long *cnt = malloc((size_t)nbmax * 16);
    uint8_t *dead = calloc((size_t)n + 1, 1);
    if (!b.foff || !b.roff || !b.flinks || !b.frouters || !b.affected || !b.lost || !loads ||
        !cnt || !dead) {
        fbatch_free(&b), free(loads), free(cnt), free(dead);
        return gp_err_set(err, GP_ENOMEM, "out of memory for failure analysis");
    }
    gp_progress *prog = gp_progress_get();
    void *p[7] = {0},
         *q[8] = {0}; /* q: foff flinks roff frouters loads+lost counts scratch items */
    size_t qcap[8] = {0};
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    gp_plan_dev in;
    double gpu_s = 0;
    uint64_t items = 0;
    uint32_t batches = 0;
    cudaError_t ce = cudaStreamCreate(&s);
    if (ce == cudaSuccess) ce = upload(t, d, p, &in, s);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e0);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e1);
    int rc = GP_OK;
    for (size_t s0 = 0; s0 < nscen && ce == cudaSuccess && rc == GP_OK; s0 += nbmax) {
        uint32_t nb = nscen - s0 < nbmax ? (uint32_t)(nscen - s0) : nbmax;
        if (fbatch_fill(t, sc, s0, nb, dead, &b)) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for failure analysis");
            break;
        }
        uint32_t nblocks = b.ni < FAIL_BLOCKS ? (uint32_t)b.ni : FAIL_BLOCKS;
        while (nblocks > 64 && gp_cuda_plan_fail_scratch_bytes(n, L, nblocks) > FAIL_SCRATCH)
            nblocks /= 2;
        size_t need[8] = {((size_t)nb + 1) * 4,
                          b.nl * 4 + 4,
                          ((size_t)nb + 1) * 4,
                          b.nr * 4 + 4,
                          (size_t)nb * per,
                          (size_t)nb * 16,
                          gp_cuda_plan_fail_scratch_bytes(n, L, nblocks ? nblocks : 1),
                          b.ni * 8 + 8};
        for (int i = 0; i < 8 && ce == cudaSuccess; i++)
            if (need[i] > qcap[i]) { /* grow (the first batch is the largest but for lists) */
                cudaFree(q[i]);
                q[i] = NULL;
                ce = cudaMalloc(&q[i], need[i]);
                qcap[i] = ce == cudaSuccess ? need[i] : 0;
            }
        double *dl = q[4], *dlost = dl + (size_t)nb * L;
        unsigned long long *dc = q[5];
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
                              .disconnected = dc + nb};
        if (ce == cudaSuccess) ce = cudaEventRecord(e0, s);
        if (ce == cudaSuccess) ce = (cudaError_t)gp_cuda_plan_fail(&in, &f, nblocks, q[6], s);
        if (ce == cudaSuccess) ce = cudaEventRecord(e1, s);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(loads, dl, (size_t)nb * L * 8, cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(b.lost, dlost, (size_t)nb * 8, cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(cnt, dc, (size_t)nb * 16, cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(s);
        float ms = 0;
        if (ce == cudaSuccess && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess)
            gpu_s += ms / 1e3;
        if (ce != cudaSuccess) break;
        fin_ctx fc = {.t = t,
                      .d = d,
                      .cap = cap,
                      .sc = sc + s0,
                      .res = res + s0,
                      .loads = loads,
                      .lost = b.lost,
                      .cnt = cnt,
                      .affected = b.affected,
                      .nb = nb};
        atomic_init(&fc.next, 0);
        finish_all(&fc, threads);
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
        st->accumulations = 2 * items;
        st->affected_sum = items;
        st->gpu_s = gpu_s;
        st->batches = batches;
    }
    for (int i = 0; i < 7; i++) cudaFree(p[i]);
    for (int i = 0; i < 8; i++) cudaFree(q[i]);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    fbatch_free(&b), free(loads), free(cnt), free(dead);
    return rc;
}
#endif
