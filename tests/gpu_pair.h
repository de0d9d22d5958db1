/* gpu_pair.h - the engine pair of the GPU-against-CPU tests (test_gpu_turns, test_gpu_traffic,
 * test_gpu_metric): a CPU engine without the CCH (the reference: plain Dijkstra) and a CUDA engine
 * with it, made by gpu_pair_setup; need_gpu() says whether the GPU half can run, skipping with
 * "no CUDA device: GPU tests skipped (why)", or failing when GPATH_REQUIRE_GPU=1. Include it after
 * cmocka.h and engine/engine.h. */
#ifndef GP_TESTS_GPU_PAIR_H
#define GP_TESTS_GPU_PAIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gp_engine *gpu, *cpu;
static char no_gpu_msg[600];

static int gpu_pair_setup(void **state) {
    (void)state;
    gp_err err = {0};
    cpu = gp_engine_new("cpu", 2, NULL, &err);
    if (!cpu || gp_engine_set_cch(cpu, "off", 0, 0, &err)) return -1;
    gpu = gp_engine_new("cuda", 2, NULL, &err);
    if (!gpu) snprintf(no_gpu_msg, sizeof no_gpu_msg, "%s", err.msg);
    else if (gp_engine_set_cch(gpu, "on", 0, 0, &err)) return -1;
    return 0;
}

static int gpu_pair_teardown(void **state) {
    (void)state;
    gp_engine_free(gpu);
    gp_engine_free(cpu);
    return 0;
}

static int need_gpu(void) {
    if (gpu) return 1;
    const char *r = getenv("GPATH_REQUIRE_GPU");
    if (r && strcmp(r, "1") == 0) fail_msg("GPATH_REQUIRE_GPU=1 but %s", no_gpu_msg);
    print_message("no CUDA device: GPU tests skipped (%s)\n", no_gpu_msg);
    return 0;
}

/* spec loaded twice, *gg attached to the GPU engine and *gc to the CPU one (fails the test when
 * either does not load or attach). */
static inline void gpu_pair_load(const char *spec, gp_graph **gg, gp_graph **gc) {
    gp_err err = {0};
    *gg = gp_graph_load(spec, NULL, &err);
    *gc = *gg ? gp_graph_load(spec, NULL, &err) : NULL;
    if (!*gg || !*gc) fail_msg("%s: %s", spec, err.msg);
    if (gp_engine_attach(gpu, *gg, &err) != GP_OK || gp_engine_attach(cpu, *gc, &err) != GP_OK)
        fail_msg("%s: attach: %s", spec, err.msg);
}

#endif
