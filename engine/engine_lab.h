/* engine_lab.h - the engine's test and lab knobs: code paths the tests hold against each other
 * and the benches compare (the CCH queries' AVX-512 relaxation, the Floyd-Warshall row update's
 * AVX2 version, the A* heap; the GPU CCH's tuning, gp_cch_gpu_sweep). Lab and test code only:
 * the service never calls the setters and runs with the defaults, which are the product's
 * behaviour (`make lint` rejects including a *_lab.h from server/, cli/ or storage/). Nothing here
 * reads the environment.
 *
 * Process-wide. cch_simd takes effect at the next CCH query; cpu_avx2 and astar_binary when a CPU
 * backend is created (gp_cpu_backend_new), as the tests create one per case.
 */
#ifndef GP_ENGINE_LAB_H
#define GP_ENGINE_LAB_H

#include "engine/cch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_engine_lab {
    int cch_simd;     /* 1 (default): CCH queries relax 8 arcs at a time with AVX-512 where the CPU
                       * has AVX-512F and VL (engine/cch_query.c); 0: the scalar loop only */
    int cpu_avx2;     /* 1 (default): APSP's row update with AVX2 where the CPU has it
                       * (engine/cpu_apsp.c); 0: the portable loop (the reference) */
    int astar_binary; /* 0 (default): A* on the radix heap, the binary heap only when rounding makes
                       * the bound inconsistent; 1: always the binary heap (engine/cpu_dijkstra.c) */
} gp_engine_lab;

/* The defaults: the product's behaviour. */
void gp_engine_lab_defaults(gp_engine_lab *o);
/* Sets every knob from o (NULL: the defaults). */
void gp_engine_lab_set(const gp_engine_lab *o);
/* The knobs now in force. */
void gp_engine_lab_get(gp_engine_lab *o);

/* The GPU CCH's tuning (kernels/cch_lab.h's gp_dcch_tune, the tuning the service never does): sets the process-wide
 * options to t (NULL: the defaults) and applies them to c's device state: the sweep's fields at
 * once, the plan's by rebuilding c's plan into a topology part of its own where they differ from
 * its current one's (the shared part stays as it is for the others; with levels the plan is left
 * as it is). GP_EUNSUPPORTED without device state or CUDA. */
struct gp_dcch_tune;
int gp_cch_gpu_sweep(const gp_cch *c, const struct gp_dcch_tune *t, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
