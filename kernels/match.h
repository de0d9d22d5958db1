/* match.h - the GPU searches of map matching (kernels/match.cu) behind a plain-C interface, used by
 * engine/match_cuda.c (gp_match_fill_cuda).
 *
 * One thread per row of a trace's transition table (engine/match.h): the bounded search of
 * engine/match.c's search_run from one candidate to the k candidates of the next point, the same
 * operations in the same order in doubles (a hash map of visited nodes with the same Fibonacci
 * hashing, the same binary heap, the .cu compiled without fused multiply-adds), so the weights and
 * metres are the CPU's bit for bit. Each thread has fixed scratch (GP_MATCH_DEV_SLOTS hash slots,
 * GP_MATCH_DEV_HEAP heap entries) and loops over rows; a row that needs more sets its overflow
 * byte and the host runs it again on the CPU. Plain C: the stream is passed as void *.
 */
#ifndef GP_CUDA_MATCH_H
#define GP_CUDA_MATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GP_MATCH_DEV_SLOTS 4096u
#define GP_MATCH_DEV_HEAP 8192u

/* Device pointers of the road graph (and its turn graph when turns is set). */
typedef struct gp_match_dev_graph {
    int turns;
    const uint32_t *row, *col, *w, *tail; /* road graph CSR; tail: each arc's tail */
    const double *len;                    /* each road arc's metres (engine/match.c's arc_len) */
    const uint32_t *trow, *tcol, *tw;     /* the turn graph's CSR (nodes = road arcs) */
    const uint32_t *tarc;                 /* each tg node's road arc (gp_turns_arc) */
} gp_match_dev_graph;

/* The rows: candidate c is (carc[c], crarc[c], cfrac[c]) (GP_NONE arcs: no state); row r searches
 * from candidate src[r] to candidates tgt[r] .. tgt[r] + k[r] - 1 with bounds wb[r], mb[r] and
 * writes weights / metres to tw_out / tm_out[out[r] .. + k[r]). */
typedef struct gp_match_dev_rows {
    uint32_t count;
    const uint32_t *carc, *crarc;
    const double *cfrac;
    const uint32_t *src, *tgt, *k;
    const double *wb, *mb;
    const uint64_t *out;
    double *tw_out, *tm_out;
    uint8_t *overflow; /* count: 1 where the scratch was too small */
} gp_match_dev_rows;

/* Device scratch bytes for nthreads threads (keys must start as 0xFF bytes: cudaMemset). */
size_t gp_cuda_match_scratch_bytes(uint32_t nthreads);
/* Byte offset of the keys in the scratch (to set them to 0xFF once). */
size_t gp_cuda_match_keys_bytes(uint32_t nthreads);
/* Runs every row with nthreads threads on stream; 0 or a cudaError_t. */
int gp_cuda_match_rows(const gp_match_dev_graph *g, const gp_match_dev_rows *r, void *scratch,
                       uint32_t nthreads, void *stream);

#ifdef __cplusplus
}
#endif
#endif
