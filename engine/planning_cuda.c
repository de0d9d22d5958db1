/* planning_cuda.c - ECMP link loads on the GPU (gp_plan_load_cuda, engine/planning.h): uploads the
 * routing tables' links, their all-pairs matrix and the demands, runs kernels/planload.cu over the
 * destinations in batches that fit a scratch budget, and copies the loads back. Built without
 * CUDA, or on a machine without a device, it answers GP_EUNSUPPORTED.
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
#else

#include "kernels/planload.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>

#define SCRATCH_BUDGET (256ull << 20)

int gp_plan_load_cuda(const gp_rt *t, const gp_demands *d, double *load, double *unrouted_vol,
                      double *gpu_ms, gp_err *err) {
    int devs = 0;
    if (cudaGetDeviceCount(&devs) != cudaSuccess || devs < 1) {
        cudaGetLastError();
        return gp_err_set(err, GP_EUNSUPPORTED, "no CUDA device");
    }
    uint32_t n = t->n, L = gp_plan_links(t);
    uint32_t batch = n ? n : 1;
    while (batch > 1 && gp_cuda_plan_scratch_bytes(n, batch) > SCRATCH_BUDGET) batch /= 2;
    void *p[9] = {0};
    size_t sz[9] = {((size_t)n + 1) * 4, (size_t)L * 4 + 4,   (size_t)L * 4 + 4,
                    (size_t)n * n * 8,   ((size_t)n + 1) * 4, d->count * 4 + 4,
                    d->count * 8 + 8,    (size_t)L * 8 + 8,   gp_cuda_plan_scratch_bytes(n, batch)};
    const void *src[7] = {t->nb_off, t->nb, t->nbw, t->dist, d->off, d->src, d->vol};
    size_t cp[7] = {((size_t)n + 1) * 4, (size_t)L * 4, (size_t)L * 4, (size_t)n * n * 8,
                    ((size_t)n + 1) * 4, d->count * 4,  d->count * 8};
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = GP_OK;
    cudaError_t ce = cudaStreamCreate(&s);
    for (int i = 0; i < 9 && ce == cudaSuccess; i++) ce = cudaMalloc(&p[i], sz[i]);
    for (int i = 0; i < 7 && ce == cudaSuccess; i++)
        if (cp[i]) ce = cudaMemcpyAsync(p[i], src[i], cp[i], cudaMemcpyHostToDevice, s);
    double *dload = p[7], lost = 0;
    if (ce == cudaSuccess) ce = cudaMemsetAsync(dload, 0, sz[7], s); /* load[L] + lost */
    if (ce == cudaSuccess) ce = cudaEventCreate(&e0);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e1);
    if (ce == cudaSuccess) ce = cudaEventRecord(e0, s);
    gp_plan_dev in = {.n = n,
                      .ecmp_max = t->ecmp_max,
                      .nb_off = p[0],
                      .nb = p[1],
                      .nbw = p[2],
                      .dist = p[3],
                      .doff = p[4],
                      .dsrc = p[5],
                      .dvol = p[6]};
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
