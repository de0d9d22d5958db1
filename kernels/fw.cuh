/* fw.cuh - internals of the GPU blocked Floyd-Warshall (kernels/fw.cu) shared with the kernel lab
 * (bench/lab_fw.cu), which times the solver on matrices generated on the device. C++ (nvcc) only:
 * the service reaches the solver through the plain-C kernels/fw.h.
 *
 * A plan owns the device matrix (npad x npad elements of the chosen kind, row-major, padded with
 * isolated nodes), the optional next-hop matrix (npad x npad uint32) and the two panel buffers the
 * min-plus kernel reads each round. All work is queued on the plan's stream.
 */
#ifndef GP_FW_CUH
#define GP_FW_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/fw.h"

/* Element kinds (same numbering as gp_cuda_apsp_opts.kind). */
enum { GP_FW_U16 = 1, GP_FW_U32 = 2, GP_FW_U64 = 3 };

typedef struct gp_fw_plan {
    int kind;       /* GP_FW_U16 / U32 / U64 */
    int next;       /* 1: next-hop matrix kept alongside */
    uint32_t n;     /* real nodes */
    uint32_t npad;  /* n rounded up to the round block */
    uint32_t block; /* round block (pivot width): 256 for u16, 128 otherwise */
    uint64_t inf;   /* "unreachable" in matrix element units */
    int zshift;     /* stored lengths are d << zshift | hops (next hops with zero-weight arcs) */
    size_t esize;   /* bytes per matrix element */
    void *d;        /* npad*npad elements */
    uint32_t *nx;   /* npad*npad next hops, or NULL */
    void *rowp;     /* block x npad/epw words: the pivot row panel, as the kernels read it */
    void *colp; /* block x npad words: the pivot column panel, transposed (packed / duplicated) */
    cudaStream_t stream;
    float *prof_ms; /* lab: when set, gp_fw_solve adds each phase's milliseconds: [0] pivot,
                     * [1] pivot row/column tiles (with their panel copies), [2] panel copies
                     * for the rest, [3] the rest (phase 3) */
} gp_fw_plan;

/* Chooses the kind (kind 0: automatic from the bound (n-1)*max_w), checks the device memory and
 * allocates. GP_EINVAL when a forced kind cannot hold the bound, GP_ETOOBIG over the memory. */
int gp_fw_plan_init(gp_fw_plan *p, uint32_t n, uint64_t bound, int kind, int next,
                    cudaStream_t stream, gp_err *err);
void gp_fw_plan_free(gp_fw_plan *p);
/* Bytes of device memory a plan of this shape needs (matrix, next, panels). */
uint64_t gp_fw_plan_bytes(uint32_t n, int kind, int next);
/* The kind the automatic choice makes for a bound. */
int gp_fw_auto_kind(uint64_t bound, int next);
/* Runs every round on the plan's matrix (already initialised). Queued; no synchronisation. */
int gp_fw_solve(gp_fw_plan *p, gp_err *err);
/* Lab: fills the matrix with a random graph: arc i->j (i != j) present with probability density,
 * weight in [1, max_w]; diagonal 0; padding isolated. next is set to j on arcs. The arc and its
 * weight are gp_fw_arc(), so the host can recompute any row for a reference. */
static __host__ __device__ inline uint64_t gp_fw_hash(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}
static inline uint64_t gp_fw_thresh(double density) {
    double d = density < 0 ? 0 : density > 1 ? 1 : density;
    return (uint64_t)(d * 9007199254740992.0); /* 2^53 */
}
/* Weight of arc i -> j in the random fill (0 when absent). */
static __host__ __device__ inline uint32_t gp_fw_arc(uint64_t i, uint64_t j, uint32_t npad,
                                                     uint32_t n, uint64_t thresh, uint32_t max_w,
                                                     uint64_t seed) {
    uint64_t t = i * npad + j;
    uint64_t h = gp_fw_hash(t * 0x9e3779b97f4a7c15ull + seed);
    bool arc = i != j && i < n && j < n && (h >> 11) < thresh;
    return arc ? 1 + (uint32_t)(h % max_w) : 0;
}
int gp_fw_fill_random(gp_fw_plan *p, double density, uint32_t max_w, uint64_t seed, gp_err *err);
/* Lab: copies row r's distances (n entries, GP_INF for unreachable) and next hops (may be NULL). */
int gp_fw_read_row(gp_fw_plan *p, uint32_t r, uint64_t *dist, uint32_t *next, gp_err *err);
const char *gp_fw_kind_name(int kind);

#endif
