/* engine_lab.c - the storage of the CPU engine's test and lab knobs (engine/engine_lab.h): one
 * process-wide set, read with relaxed atomics (a query reads cch_simd while a test may set it).
 */
#include "engine/engine_lab.h"

static gp_engine_lab knobs = {1, 1, 0};

void gp_engine_lab_defaults(gp_engine_lab *o) {
    o->cch_simd = 1;
    o->cpu_avx2 = 1;
    o->astar_binary = 0;
}

void gp_engine_lab_set(const gp_engine_lab *o) {
    gp_engine_lab d;
    gp_engine_lab_defaults(&d);
    if (!o) o = &d;
    __atomic_store_n(&knobs.cch_simd, o->cch_simd ? 1 : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&knobs.cpu_avx2, o->cpu_avx2 ? 1 : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&knobs.astar_binary, o->astar_binary ? 1 : 0, __ATOMIC_RELAXED);
}

void gp_engine_lab_get(gp_engine_lab *o) {
    o->cch_simd = __atomic_load_n(&knobs.cch_simd, __ATOMIC_RELAXED);
    o->cpu_avx2 = __atomic_load_n(&knobs.cpu_avx2, __ATOMIC_RELAXED);
    o->astar_binary = __atomic_load_n(&knobs.astar_binary, __ATOMIC_RELAXED);
}
