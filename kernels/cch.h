/* cch.h - the CCH on the GPU (kernels/cch*.cu) behind a plain-C interface, used by
 * engine/cch_cuda.c and the kernel lab (bench/lab_cch.cu). The kernels: kernels/cch.cu (device
 * state, upload, the sweep plan's layout), cch_customize.cu (customization and the plan's
 * tables), cch_sweep.cu (the PHAST plan sweep), cch_query.cu (the level sweep, RPHAST); the
 * lab and the tests tune them through kernels/cch_lab.h, the service never does.
 *
 * A gp_dcch_topo is the device part of one CCH topology (engine/cch.h gp_cch_topo, handed down as
 * the plain gp_dcch_topo_src below): the upward CSR by rank, lower triangles, rank -> node, levels,
 * and the PHAST sweep plan (kernels/cch_plan.h, built by the engine) with the layouts of its
 * tables. It is built once per topology and device and shared, read-only and reference counted,
 * by every gp_dcch on that topology: a cost change on a graph (a new graph version with the same
 * topology) uploads and customizes only a metric.
 * A gp_dcch is the device copy of one customized CCH: a reference to its gp_dcch_topo, the original
 * and customized weights, the plan's weights and tables, and a workspace for the sweeps. Every
 * call takes the cudaStream_t to run on (as void *) and is synchronous on it; one gp_dcch is used
 * by one caller at a time (engine/cch_cuda.c holds a mutex); gp_dcchs sharing a gp_dcch_topo may
 * run at once.
 *
 *  - customize: level by level bottom-up, one warp per CCH edge (lanes over its lower triangles,
 *    a warp min-reduction); consecutive small levels are run by one block in one launch with a
 *    barrier between levels, so the narrow top of the hierarchy costs no launch per level.
 *  - phast: k sources at once; distances as an n x k matrix (sources adjacent, so the threads of
 *    one node read neighbouring words); the upward search results (from the CPU) are scattered
 *    in, then the sweep: the plan (kernels/cch_plan.h; docs/gpu.md "CCH on the GPU"), a launch per
 *    phase (the top phases from a table, phases with piece tables flat, the others as warp bins
 *    or a block per bin), or levels top-down where the plan cannot serve k sources (its indices
 *    are 32-bit). Output in node order, one row per source.
 *  - rphast: the level sweep on a restricted graph (the upward closure of a target set, in local
 *    ids, uploaded once per table by rphast_prepare), then only the targets' entries come back.
 */
#ifndef GP_KERNELS_CCH_H
#define GP_KERNELS_CCH_H

#include "graph/gp.h"
#include "kernels/cch_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_dcch_topo gp_dcch_topo;
typedef struct gp_dcch gp_dcch;

/* A CCH topology as its device part reads it (engine/cch.h gp_cch_topo's fields: the order, the
 * upward CSR, triangles, levels), and the hooks through which the part keeps it and has its sweep plan
 * built, filled by engine/cch_cuda.c. The arrays are host memory owned by owner (opaque here);
 * a device part holds owner with ref and lets it go with unref, and asks plan for its sweep plan
 * (built on the host from the topology) whenever it builds one, handing it back to plan_free. */
typedef struct gp_dcch_topo_src {
    uint32_t n, m, nlevels;
    uint64_t ntri;
    const uint32_t *order;       /* n: rank -> node */
    const uint32_t *up_first;    /* n+1 */
    const uint32_t *up_head;     /* m */
    const uint64_t *tri_first;   /* m+1 */
    const uint32_t *tri;         /* 2*ntri */
    const uint32_t *level_first; /* nlevels+1 */
    void *owner;
    void (*ref)(void *owner);
    void (*unref)(void *owner);
    int (*plan)(void *owner, const gp_dcch_plan_req *rq, gp_dcch_plan *out, gp_err *err);
    void (*plan_free)(gp_dcch_plan *pl);
} gp_dcch_topo_src;

/* Uploads topology t to the current device and builds its sweep plan with its top table's and
 * piece tables' layouts. *out holds one reference and one on t->owner (t itself is copied). */
int gp_dcch_topo_new(const gp_dcch_topo_src *t, void *stream, gp_dcch_topo **out, gp_err *err);
void gp_dcch_topo_ref(gp_dcch_topo *t);
void gp_dcch_topo_unref(gp_dcch_topo *t); /* accepts NULL; frees with the last reference */
uint64_t gp_dcch_topo_bytes(const gp_dcch_topo *t);
/* A device CCH on the topology part t (referenced) with the original weights ofw / obw (host,
 * t's m entries each; engine/cch.h gp_cch) uploaded; not customized yet. owner: the owner of the
 * weights' topology, checked against t's (GP_EINVAL for another topology's part). */
int gp_dcch_new(gp_dcch_topo *t, const void *owner, const uint32_t *ofw, const uint32_t *obw,
                void *stream, gp_dcch **out, gp_err *err);
void gp_dcch_free(gp_dcch *d);            /* accepts NULL; drops its topology part's reference */
uint64_t gp_dcch_bytes(const gp_dcch *d); /* its own bytes plus its topology part's */
/* Replaces the original weights (a new metric on the same topology). */
int gp_dcch_set_metric(gp_dcch *d, void *stream, const uint32_t *ofw, const uint32_t *obw,
                       gp_err *err);
/* The same from src's original weights (one topology part, GP_EINVAL otherwise; src only read):
 * copied on the device, then nupd edges overwritten from upd (host; 3 words per edge: id, ofw,
 * obw): a cost change uploads its changed entries, not the whole metric. */
int gp_dcch_metric_from(gp_dcch *d, const gp_dcch *src, void *stream, uint32_t nupd,
                        const uint32_t *upd, gp_err *err);
/* Customizes on the device; fw / bw / fmid / bmid (host, topo->m entries; may be NULL) receive
 * the weights and witnesses (bit-identical to the CPU's). GP_ETOOBIG when a shortcut overflows
 * (as the CPU). ms: device time (may be NULL). */
int gp_dcch_customize(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw, uint32_t *fmid,
                      uint32_t *bmid, float *ms, gp_err *err);
/* d's weights from src's, both on one topology part (GP_EINVAL otherwise), for a version
 * customized on the host from src's (engine/cch.h gp_cch_gpu_customize_delta): src's original and
 * customized weights and witnesses copied on the device (src is only read: it may answer on its
 * own stream meanwhile), then nupd edges overwritten from upd (host; 7 words per edge: id, ofw,
 * obw, fw, bw, fmid, bmid; ids < m), then the plan's weights and tables derived as after
 * gp_dcch_customize. ms: device time (may be NULL). */
int gp_dcch_customize_from(gp_dcch *d, const gp_dcch *src, void *stream, uint32_t nupd,
                           const uint32_t *upd, float *ms, gp_err *err);
/* A full customization of d (gp_dcch_customize without the copy back), then the edges whose
 * original or customized weights or witnesses differ from base's (the same topology part), into
 * *out (page-locked memory that host(hctx, bytes) gives, at least bytes of it, or NULL when out of
 * memory: pageable memory took ~25 ms for 20 MB under load; GP_DCCH_DIFF_WORDS words per edge:
 * id, fw, bw, fmid, bmid, then the packed witnesses as gp_dcch_fetch writes them, backward then
 * forward, low word first - not the original weights, which the host has mapped itself; in no
 * order) and *nout. More than cap differ: GP_OK with *out NULL and *nout their count (d is
 * customized: the caller fetches every array, gp_dcch_weights). GP_ETOOBIG when a shortcut
 * overflows. busy (when not NULL) is called with arg once the levels and the plan's weights are
 * queued (not when those fail): the host's work while the device customizes (ms is the
 * device's time alone). wall_s (when not NULL): the host's seconds of the customization
 * (busy and the wait included), of the differences' count, and of their copy back. */
#define GP_DCCH_DIFF_WORDS 9
int gp_dcch_customize_diff(gp_dcch *d, const gp_dcch *base, void *stream, uint32_t cap,
                           void *(*host)(void *ctx, size_t bytes), void *hctx, uint32_t **out,
                           uint32_t *nout, float *ms, void (*busy)(void *), void *arg,
                           double wall_s[3], gp_err *err);
/* The topology part d is on (a pooled gp_dcch is reused only on the same one). */
const gp_dcch_topo *gp_dcch_part(const gp_dcch *d);
/* d's customized weights and witnesses to the host (m entries each; any may be NULL): tests. */
int gp_dcch_weights(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw, uint32_t *fmid,
                    uint32_t *bmid, gp_err *err);
/* The packed witness of an original arc (engine/cch_internal.h GP_CCH_WIT_ORIG). */
#define GP_DCCH_WIT_ORIG (1ULL << 63)
/* d's customized weights and witnesses as gp_dcch_weights, and with wit (host, 2m words; may be
 * NULL) the packed witnesses path unpacking reads (engine/cch_custom.c witnesses_range: wit[2e]
 * backward, wit[2e+1] forward), computed on the device from fmid / bmid: no host pass. */
int gp_dcch_fetch(gp_dcch *d, void *stream, uint32_t *fw, uint32_t *bw, uint32_t *fmid,
                  uint32_t *bmid, uint64_t *wit, gp_err *err);
/* PHAST for k sources: init_first (k+1) / init_rank / init_dist list each source's upward search
 * (ranks and distances); dist (host, k*n, may be NULL: the lab times the device alone) gets one
 * row per source in node order. */
int gp_dcch_phast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                  const uint32_t *init_rank, const uint64_t *init_dist, uint64_t *dist, float *ms,
                  gp_err *err);
/* RPHAST: the restricted graph (nsel local nodes in ascending rank; first (nsel+1) / head / wt its
 * upward arcs with down weights; nlev levels lev_first (nlev+1) in local ids) and the local ids of
 * the nt targets. */
int gp_dcch_rphast_prepare(gp_dcch *d, void *stream, uint32_t nsel, const uint32_t *first,
                           const uint32_t *head, const uint32_t *wt, uint32_t nlev,
                           const uint32_t *lev_first, uint32_t nt, const uint32_t *tgt,
                           gp_err *err);
/* k sources (init lists in local ids, as for phast): out (host, k x nt). */
int gp_dcch_rphast(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                   const uint32_t *init_local, const uint64_t *init_dist, uint64_t *out, float *ms,
                   gp_err *err);
/* The same in 32-bit cells (half the bytes a sweep moves): out (host, k x nt) holds 0xffffffff
 * for no route. *saturated: a distance reached 2^32 - 1, out is not the table, and gp_dcch_rphast
 * must answer it (it does for this target set from then on: saturated at once). */
int gp_dcch_rphast32(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                     const uint32_t *init_local, const uint64_t *init_dist, uint32_t *out,
                     int *saturated, float *ms, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
