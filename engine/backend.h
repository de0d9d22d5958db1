/* backend.h - the query engine's backend interface, implemented by the CPU backend (the reference,
 * engine/cpu_backend.c) and the CUDA backend (engine/cuda_backend.c).
 *
 * Contract shared by every backend (tests hold both to it):
 *  - distances are uint64 path lengths in stored weight units; GP_INF means unreachable;
 *  - predecessors / next hops are internal indices; GP_NONE means none (source, or unreachable);
 *  - a predecessor array always realises the returned distances (dist[pred[v]] + w = dist[v]);
 *  - output arrays are caller-allocated; a backend never keeps pointers to them;
 *  - every call is thread-safe for concurrent callers on the same backend and graph;
 *  - on failure a call returns a GP_E* code with err filled, and the outputs are unspecified.
 *  - a call honours the calling thread's deadline (gp_deadline_get, graph/gp.h) at cheap points
 *    and returns GP_ETIMEOUT (err from gp_deadline_error) once it has passed.
 * A backend that cannot do an operation returns GP_EUNSUPPORTED and the engine falls back to CPU.
 */
#ifndef GP_BACKEND_H
#define GP_BACKEND_H

#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Point-to-point algorithms. */
enum gp_p2p_algo {
    GP_P2P_AUTO = 0, /* the backend's best choice */
    GP_P2P_DIJKSTRA, /* unidirectional, stops when the target is settled */
    GP_P2P_BIDIR,    /* bidirectional Dijkstra */
    GP_P2P_ASTAR     /* A* with a great-circle bound; needs coordinates (else GP_EUNSUPPORTED) */
};

/* A path: nodes[0] = source ... nodes[len-1] = target (internal indices), owned by the path. */
typedef struct gp_path {
    uint64_t dist; /* GP_INF when there is no route (then len = 0) */
    uint32_t *nodes;
    uint32_t len;
    uint64_t settled; /* nodes settled, for statistics (0 when unknown) */
} gp_path;
void gp_path_free(gp_path *p);

typedef struct gp_backend_info {
    char name[16];      /* "cpu" or "cuda" */
    char device[128];   /* GPU name, or CPU model */
    int threads;        /* CPU threads, or CUDA streams */
    uint64_t mem_total; /* device memory bytes (0 for cpu) */
    uint64_t mem_used;
    int healthy;     /* 0 after a sticky device error */
    int ndevices;    /* CUDA devices in use (cuda_devices; 0 for cpu) */
    int devices[16]; /* their ordinals, the first one's first (it answers what is not spread) */
} gp_backend_info;

typedef struct gp_backend gp_backend;

typedef struct gp_backend_ops {
    /* Makes g resident for this backend (e.g. copies CSR to the GPU, storing g->dev). NULL: none. */
    int (*attach)(gp_backend *b, gp_graph *g, gp_err *err);
    /* One-to-all from src; stops expanding past max_dist (GP_INF: no limit; nodes beyond it are
     * reported unreachable). pred may be NULL. dist and pred have g->n entries. */
    int (*sssp)(gp_backend *b, const gp_graph *g, uint32_t src, uint64_t max_dist, uint64_t *dist,
                uint32_t *pred, gp_err *err);
    /* Shortest s-t path. No route: GP_OK with path->dist = GP_INF and len = 0. */
    int (*p2p)(gp_backend *b, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
               gp_err *err);
    /* out[i*nt + j] = dist(src[i], dst[j]); row-major ns x nt. */
    int (*table)(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                 const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err);
    /* All pairs: dist n*n row-major; next (may be NULL) n*n: next[i*n+j] = first node after i on a
     * shortest i->j path (j itself for a direct arc; GP_NONE when i == j or unreachable). */
    int (*apsp)(gp_backend *b, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err);
    void (*info)(gp_backend *b, gp_backend_info *out);
    void (*destroy)(gp_backend *b);
} gp_backend_ops;

struct gp_backend {
    const gp_backend_ops *ops;
    void *impl;
};

/* CPU backend with threads workers (0 = number of online CPUs). */
gp_backend *gp_cpu_backend_new(int threads, gp_err *err);

/* CUDA backend options (config: cuda_device, cuda_streams, cuda_queue_wait_ms, cuda_variant,
 * cuda_devices). */
typedef struct gp_cuda_opts {
    int device;               /* CUDA device ordinal */
    int streams;              /* stream-pool size (requests in flight on the GPU) */
    int queue_wait_ms;        /* bounded wait for a free stream before GP_EBUSY */
    const char *sssp_variant; /* "seed" (Martin et al. 2009) or NULL/"auto" for the fastest */
    const char *devices;      /* cuda_devices: NULL or "" = device alone, "all", or "0,1,..." */
} gp_cuda_opts;

/* Every GPU of the host (config cuda_devices): the first device holds the graphs' device copies
 * and answers what is not spread; each graph's CCH metric versions live on every listed device
 * (engine.c), tables split their rows across them and one-to-all trees go round-robin. A device
 * may be listed twice (two independent device states on one GPU: how the path is tested on a
 * machine with one GPU). */
#define GP_CUDA_MAX_DEVICES 16
/* Parses a cuda_devices value into out (at most GP_CUDA_MAX_DEVICES ordinals): NULL, "" -> dflt
 * alone; "all" -> 0..count-1; else a comma-separated list of ordinals (spaces allowed). count < 0:
 * the number of devices is unknown (syntax only; "all" then gives 0 entries). Returns the number
 * of entries, or -1 with err (GP_EINVAL) naming the bad entry or the ordinal that does not exist. */
int gp_cuda_devices_parse(const char *spec, int dflt, int count, int *out, gp_err *err);
/* NULL with err filled when there is no usable GPU or the build has no CUDA. */
gp_backend *gp_cuda_backend_new(const gp_cuda_opts *opts, gp_err *err);
/* 1 when this binary was built with the CUDA backend. */
int gp_cuda_compiled(void);
/* 1 when the NVIDIA driver's libcuda.so.1 can be loaded (dlopen). */
int gp_cuda_have_driver(void);
/* Why CUDA cannot be used, as one phrase for the start-up line: from cudaGetDeviceCount's error
 * number (0 = cudaSuccess) and device count, whether the driver library exists, and the CUDA
 * error's text (detail, may be NULL). "no NVIDIA GPU found (...)" when there is no GPU or no
 * driver at all; "the NVIDIA driver is too old ..." only when a driver is installed. */
void gp_cuda_unavailable_reason(int cuda_error, int count, int have_driver, const char *detail,
                                char *buf, size_t size);
/* CUDA backend test hook: injects a sticky device fault (kernels/sssp.h gp_cuda_debug_fault) on one
 * of b's streams. Returns the resulting status. */
int gp_cuda_backend_inject_fault(gp_backend *b, gp_err *err);
/* CUDA backend test hook: take = 1 occupies a pool slot as a request would (same bounded wait and
 * GP_EBUSY); take = 0 returns one occupied slot. */
int gp_cuda_backend_debug_hold(gp_backend *b, int take, gp_err *err);

static inline void gp_backend_destroy(gp_backend *b) {
    if (b) b->ops->destroy(b);
}

#ifdef __cplusplus
}
#endif
#endif
