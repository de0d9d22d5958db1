/* engine.h - the query engine: a primary backend (CUDA or CPU, from --backend auto|cuda|cpu) with
 * the CPU backend behind it as the fallback.
 *
 * Each gp_engine_* call runs on the primary backend; when it answers GP_EUNSUPPORTED, or a device
 * error after which the backend reports itself unhealthy (a sticky CUDA error), the call is re-run
 * on the CPU backend and later calls go straight to the CPU. Non-sticky device errors fail the call.
 * GP_ETIMEOUT (the caller's deadline passed) is returned as is, never re-run on the CPU.
 */
#ifndef GP_ENGINE_H
#define GP_ENGINE_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_engine {
    gp_backend *primary;  /* == cpu when the CPU backend is in use */
    gp_backend *cpu;
    int primary_failed;   /* set (atomically) once the primary is out of service */
    char cpu_reason[256]; /* backend auto on the CPU: why ("no NVIDIA GPU found ..."), else "" */
} gp_engine;

/* backend: "auto" (CUDA when a GPU is usable, else CPU), "cuda" (error without a GPU), "cpu". */
gp_engine *gp_engine_new(const char *backend, int cpu_threads, const gp_cuda_opts *cuda,
                         gp_err *err);
void gp_engine_free(gp_engine *e);
/* Name of the backend answering now: "cuda" or "cpu". */
const char *gp_engine_backend(gp_engine *e);
void gp_engine_info(gp_engine *e, gp_backend_info *out);

int gp_engine_attach(gp_engine *e, gp_graph *g, gp_err *err);
int gp_engine_sssp(gp_engine *e, const gp_graph *g, uint32_t src, uint64_t max_dist,
                   uint64_t *dist, uint32_t *pred, gp_err *err);
int gp_engine_p2p(gp_engine *e, const gp_graph *g, uint32_t s, uint32_t t, int algo,
                  gp_path *path, gp_err *err);
int gp_engine_table(gp_engine *e, const gp_graph *g, const uint32_t *src, uint32_t ns,
                    const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err);
int gp_engine_apsp(gp_engine *e, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
