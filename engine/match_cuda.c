/* match_cuda.c - the transition tables of many prepared traces on the GPU (gp_match_fill_cuda,
 * engine/match.h): the road graph (weights, tails, CSR, each arc's metres as engine/match.c
 * computes them) and its turn graph, uploaded by the first batch on a graph and kept with it
 * (gp_graph.mdev; a reweighted version uploads its weights alone), then, in groups of traces
 * whose tables fit a memory budget, the candidates and the rows, runs kernels/match.cu and copies
 * each trace's table back; rows the device's fixed scratch could not hold run again on the CPU
 * (gp_match_fill). Built without CUDA, or on a machine without a device, it answers
 * GP_EUNSUPPORTED.
 */
#include "engine/match.h"

#include <stdio.h>
#include <string.h>

#ifndef GP_HAVE_CUDA
int gp_match_fill_cuda(const gp_graph *g, gp_match_prep *const *pr, size_t count,
                       gp_match_gpu_stats *st, gp_err *err) {
    (void)g, (void)pr, (void)count, (void)st;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
#else

#include "kernels/match.h"

#include "graph/turns.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* One batch on the device at a time: concurrent requests would each hold a scratch of up to
 * 3.8 GB; their CPU passes (candidates, Viterbi) still overlap. */
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;

#define MATCH_THREADS 32768u        /* threads (each with its scratch: ~270 KB) */
#define GROUP_BUDGET (512ull << 20) /* table + rows bytes of one group of traces */

static int dev_err(gp_err *err, cudaError_t ce, const char *what) {
    return gp_err_set(err, GP_EDEVICE, "CUDA error %s: %s", what, cudaGetErrorString(ce));
}

/* cudaMalloc + copy of n bytes (n may be 0); frees nothing on failure (the caller frees). */
static cudaError_t put(void **d, const void *h, size_t n) {
    cudaError_t ce = cudaMalloc(d, n ? n : 8);
    if (ce == cudaSuccess && n) ce = cudaMemcpy(*d, h, n, cudaMemcpyHostToDevice);
    return ce;
}

enum { D_ROW, D_COL, D_W, D_TAIL, D_LEN, D_TROW, D_TCOL, D_TW, D_TARC, D_GRAPH };
enum { R_CARC, R_CRARC, R_CFRAC, R_SRC, R_TGT, R_K, R_WB, R_MB, R_OUT, R_TW, R_TM, R_OVER, R_N };

/* Runs traces pr[0 .. count) (their tables allocated) as one launch; a trace with rows past the
 * device's scratch gets redo[i] (its rows' flags, for gp_match_fill once the device is free),
 * the others are filled. */
static int run_group(const gp_match_dev_graph *dg, void *scratch, uint32_t nthreads,
                     gp_match_prep *const *pr, size_t count, uint8_t **redo, gp_match_gpu_stats *st,
                     gp_err *err) {
    size_t C = 0, R = 0, T = 0;
    for (size_t i = 0; i < count; i++) {
        C += pr[i]->off[pr[i]->n];
        R += pr[i]->njobs;
        T += pr[i]->ntab;
    }
    if (!R) {
        for (size_t i = 0; i < count; i++) pr[i]->filled = 1;
        return GP_OK;
    }
    uint32_t *carc = malloc(4 * (C + 1)), *crarc = malloc(4 * (C + 1));
    double *cfrac = malloc(8 * (C + 1));
    uint32_t *src = malloc(4 * R), *tgt = malloc(4 * R), *kk = malloc(4 * R);
    double *wb = malloc(8 * R), *mb = malloc(8 * R);
    uint64_t *out = malloc(8 * R);
    uint8_t *over = malloc(R);
    double *tw = malloc(8 * (T + 1)), *tm = malloc(8 * (T + 1));
    void *d[R_N] = {0};
    int rc = GP_ENOMEM;
    if (!carc || !crarc || !cfrac || !src || !tgt || !kk || !wb || !mb || !out || !over || !tw ||
        !tm) {
        gp_err_set(err, GP_ENOMEM, "out of memory for the GPU's matching rows");
        goto done;
    }
    size_t c0 = 0, r = 0, t0 = 0;
    for (size_t i = 0; i < count; i++) {
        const gp_match_prep *p = pr[i];
        for (uint32_t c = 0; c < p->off[p->n]; c++) {
            carc[c0 + c] = p->c[c].arc;
            crarc[c0 + c] = p->c[c].rarc;
            cfrac[c0 + c] = p->c[c].frac;
        }
        for (uint32_t t = 1; t < p->n; t++) { /* rows in gp_match_fill's order */
            if (p->tab[t] == SIZE_MAX) continue;
            uint32_t k = p->off[t + 1] - p->off[t];
            for (uint32_t c = p->off[t - 1]; c < p->off[t]; c++, r++) {
                src[r] = (uint32_t)(c0 + c);
                tgt[r] = (uint32_t)(c0 + p->off[t]);
                kk[r] = k;
                wb[r] = p->wb[t];
                mb[r] = p->mb[t];
                out[r] = t0 + p->tab[t] + (uint64_t)(c - p->off[t - 1]) * k;
            }
        }
        c0 += p->off[p->n];
        t0 += p->ntab;
    }
    const void *h[R_N] = {carc, crarc, cfrac, src, tgt, kk, wb, mb, out, NULL, NULL, NULL};
    size_t sz[R_N] = {4 * C, 4 * C, 8 * C, 4 * R, 4 * R, 4 * R,
                      8 * R, 8 * R, 8 * R, 8 * T, 8 * T, R};
    cudaError_t ce = cudaSuccess;
    for (int i = 0; i < R_N && ce == cudaSuccess; i++)
        ce = h[i] ? put(&d[i], h[i], sz[i]) : cudaMalloc(&d[i], sz[i] ? sz[i] : 8);
    if (ce != cudaSuccess) {
        rc = dev_err(err, ce, "uploading the matching rows");
        goto done;
    }
    gp_match_dev_rows dr = {.count = (uint32_t)R,
                            .carc = d[R_CARC],
                            .crarc = d[R_CRARC],
                            .cfrac = d[R_CFRAC],
                            .src = d[R_SRC],
                            .tgt = d[R_TGT],
                            .k = d[R_K],
                            .wb = d[R_WB],
                            .mb = d[R_MB],
                            .out = d[R_OUT],
                            .tw_out = d[R_TW],
                            .tm_out = d[R_TM],
                            .overflow = d[R_OVER]};
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, 0);
    uint32_t nt = R < nthreads ? (uint32_t)R : nthreads;
    ce = (cudaError_t)gp_cuda_match_rows(dg, &dr, scratch, nt, NULL);
    cudaEventRecord(e1, 0);
    if (ce == cudaSuccess) ce = cudaDeviceSynchronize();
    float ms = 0;
    if (ce == cudaSuccess) cudaEventElapsedTime(&ms, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    st->gpu_ms += ms;
    st->rows += R;
    if (ce == cudaSuccess) ce = cudaMemcpy(tw, d[R_TW], 8 * T, cudaMemcpyDeviceToHost);
    if (ce == cudaSuccess) ce = cudaMemcpy(tm, d[R_TM], 8 * T, cudaMemcpyDeviceToHost);
    if (ce == cudaSuccess) ce = cudaMemcpy(over, d[R_OVER], R, cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        rc = dev_err(err, ce, "running the matching searches");
        goto done;
    }
    rc = GP_OK;
    t0 = r = 0;
    for (size_t i = 0; i < count && rc == GP_OK; i++) {
        gp_match_prep *p = pr[i];
        memcpy(p->tw, tw + t0, 8 * p->ntab);
        memcpy(p->tm, tm + t0, 8 * p->ntab);
        uint64_t again = 0;
        for (size_t j = 0; j < p->njobs; j++) again += over[r + j] != 0;
        /* rows past the device's scratch: the CPU's search (its map and heap grow), later */
        if (again && !(redo[i] = malloc(p->njobs)))
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the matching rows");
        else if (again) memcpy(redo[i], over + r, p->njobs);
        p->filled = rc == GP_OK && !again;
        st->redone += again;
        t0 += p->ntab;
        r += p->njobs;
    }
done:
    for (int i = 0; i < R_N; i++) cudaFree(d[i]);
    free(carc);
    free(crarc);
    free(cfrac);
    free(src);
    free(tgt);
    free(kk);
    free(wb);
    free(mb);
    free(out);
    free(over);
    free(tw);
    free(tm);
    return rc;
}

/* A graph's device copy for matching (gp_graph.mdev): the owner's (gp_graph_owner) holds the
 * topology, tails, lengths and turn-node arcs that its reweighted versions share, and its own
 * weights; a version's only its weights (D_W, D_TW; the other slots NULL). Made by the first GPU
 * batch on the graph, under device_lock, so that a batch costs no upload of the graph (on the
 * road-like 24M map that upload took about a second per request); released with the graph. */
typedef struct mdev {
    void *d[D_GRAPH];
    int device; /* the CUDA device it lives on */
} mdev;

static void mdev_free(void *p) {
    mdev *x = p;
    if (!x) return;
    int cur = 0;
    cudaGetDevice(&cur);
    cudaSetDevice(x->device);
    for (int i = 0; i < D_GRAPH; i++) cudaFree(x->d[i]);
    cudaSetDevice(cur);
    free(x);
}

/* g's device copy (topo: also the shared part, g being the owner), made on the current device. */
static mdev *mdev_make(const gp_graph *g, int topo, gp_err *err) {
    const gp_turns *turns = g->turns;
    const gp_graph *tg = turns ? turns->tg : NULL;
    uint32_t m = g->m, tn = tg ? tg->n : 0;
    size_t tm = tg ? tg->m : 0;
    mdev *x = calloc(1, sizeof *x);
    uint32_t *tail = NULL, *tarc = NULL;
    double *len = NULL;
    if (!x) goto oom;
    cudaGetDevice(&x->device);
    if (topo) {
        tail = malloc(4 * ((size_t)m + 1)), tarc = malloc(4 * ((size_t)tn + 1));
        len = malloc(8 * ((size_t)m + 1));
        if (!tail || !tarc || !len) goto oom;
        for (uint32_t u = 0; u < g->n; u++)
            for (uint32_t e = g->row[u]; e < g->row[u + 1]; e++) tail[e] = u;
        for (uint32_t a = 0; a < m; a++) { /* engine/match.c's arc_len */
            double l = gp_graph_arc_length_m(g, a);
            len[a] = isfinite(l) ? l : 0;
        }
        for (uint32_t x2 = 0; x2 < tn; x2++) tarc[x2] = gp_turns_arc(turns, x2);
    }
    const void *h[D_GRAPH] = {g->row,
                              g->col,
                              g->w,
                              tail,
                              len,
                              tg ? tg->row : NULL,
                              tg ? tg->col : NULL,
                              tg ? tg->w : NULL,
                              tarc};
    size_t sz[D_GRAPH] = {
        4 * ((size_t)g->n + 1),        4 * (size_t)m, 4 * (size_t)m, 4 * (size_t)m, 8 * (size_t)m,
        tg ? 4 * ((size_t)tn + 1) : 0, 4 * tm,        4 * tm,        4 * (size_t)tn};
    cudaError_t ce = cudaSuccess;
    for (int i = 0; i < D_GRAPH && ce == cudaSuccess; i++)
        if (topo || i == D_W || i == D_TW) ce = put(&x->d[i], h[i], sz[i]);
    free(tail);
    free(tarc);
    free(len);
    if (ce != cudaSuccess) {
        dev_err(err, ce, "uploading the graph for matching");
        mdev_free(x);
        return NULL;
    }
    return x;
oom:
    free(tail);
    free(tarc);
    free(len);
    free(x);
    gp_err_set(err, GP_ENOMEM, "out of memory for the GPU's matching graph");
    return NULL;
}

/* g's device copy (*x) and its owner's (*own), made where missing (under device_lock). */
static int mdev_get(const gp_graph *g, const mdev **own, const mdev **x, gp_err *err) {
    gp_graph *o = (gp_graph *)gp_graph_owner(g), *v = (gp_graph *)g;
    gp_err e;
    gp_err_clear(&e);
    if (!o->mdev) {
        if (!(o->mdev = mdev_make(o, 1, &e))) goto fail;
        o->mdev_free = mdev_free;
    }
    if (v != o && !v->mdev) {
        cudaSetDevice(((const mdev *)o->mdev)->device);
        if (!(v->mdev = mdev_make(v, 0, &e))) goto fail;
        v->mdev_free = mdev_free;
    }
    *own = o->mdev;
    *x = v->mdev;
    return GP_OK;
fail:
    return gp_err_set(err, e.code, "%s", e.msg);
}

int gp_match_fill_cuda(const gp_graph *g, gp_match_prep *const *pr, size_t count,
                       gp_match_gpu_stats *st, gp_err *err) {
    gp_match_gpu_stats st0;
    if (!st) st = &st0;
    memset(st, 0, sizeof *st);
    int devs = 0;
    if (cudaGetDeviceCount(&devs) != cudaSuccess || devs < 1) {
        cudaGetLastError();
        return gp_err_set(err, GP_EUNSUPPORTED, "no CUDA device");
    }
    size_t rows = 0;
    for (size_t i = 0; i < count; i++) rows += pr[i]->njobs;
    uint32_t nthreads = rows < MATCH_THREADS ? (uint32_t)(rows ? rows : 1) : MATCH_THREADS;
    uint8_t **redo = calloc(count ? count : 1, sizeof *redo);
    if (!redo) return gp_err_set(err, GP_ENOMEM, "out of memory for the matching rows");
    double t0 = gp_now();
    pthread_mutex_lock(&device_lock);
    double t1 = gp_now();
    const gp_graph *tg = g->turns ? ((const gp_turns *)g->turns)->tg : NULL;
    void *scratch = NULL;
    int rc = GP_OK, cur = 0;
    cudaGetDevice(&cur);
    const mdev *own = NULL, *x = NULL;
    if ((rc = mdev_get(g, &own, &x, err)) != GP_OK) goto done;
    cudaSetDevice(own->device); /* where the graph lives (the thread's device restored after) */
    cudaError_t ce = cudaMalloc(&scratch, gp_cuda_match_scratch_bytes(nthreads));
    if (ce == cudaSuccess) ce = cudaMemset(scratch, 0xFF, gp_cuda_match_keys_bytes(nthreads));
    if (ce != cudaSuccess) {
        rc = dev_err(err, ce, "allocating the matching scratch");
        goto done;
    }
    gp_match_dev_graph dg = {.turns = tg != NULL,
                             .row = own->d[D_ROW],
                             .col = own->d[D_COL],
                             .w = x->d[D_W],
                             .tail = own->d[D_TAIL],
                             .len = own->d[D_LEN],
                             .trow = own->d[D_TROW],
                             .tcol = own->d[D_TCOL],
                             .tw = x->d[D_TW],
                             .tarc = own->d[D_TARC]};
    size_t first = 0, bytes = 0;
    for (size_t i = 0; i <= count && rc == GP_OK; i++) {
        size_t b = i < count ? pr[i]->ntab * 16 + pr[i]->njobs * 45 : 0;
        if (i == count || (i > first && bytes + b > GROUP_BUDGET)) {
            rc = run_group(&dg, scratch, nthreads, pr + first, i - first, redo + first, st, err);
            first = i;
            bytes = 0;
        }
        if (i < count && rc == GP_OK) {
            rc = gp_match_table_alloc(pr[i], err);
            bytes += b;
        }
    }
done:
    cudaFree(scratch);
    cudaSetDevice(cur);
    double t2 = gp_now();
    pthread_mutex_unlock(&device_lock);
    st->wait_ms = (t1 - t0) * 1e3;
    st->hold_ms = (t2 - t1) * 1e3;
    for (size_t i = 0; i < count; i++) { /* with the device free for the next batch */
        if (redo[i] && rc == GP_OK) rc = gp_match_fill(g, pr[i], redo[i], err);
        free(redo[i]);
    }
    free(redo);
    st->redo_ms = (gp_now() - t2) * 1e3;
    return rc;
}
#endif
