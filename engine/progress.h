/* progress.h - how far a long engine call has got: a shared counter that computing threads bump
 * cheaply and any other thread polls (the CLI's progress bar, a recomputation job's status).
 *
 * The owner (CLI command, job runner) creates a gp_progress and makes it the calling thread's
 * current one (gp_progress_set), like the deadline of graph/gp.h; every backend reads
 * gp_progress_get() once at entry and hands the pointer to its worker threads. A call that does
 * measurable work opens a phase with gp_progress_begin(p, total_units) and adds units as they
 * finish (one relaxed atomic add per unit: a source of a table, a tile row of a Floyd-Warshall
 * round, a chunk of routers). A caller running several calls one after the other gives each its
 * share of the whole with gp_progress_span (ecmp.c: distances [0, 0.5), next hops [0.5, 1)).
 *
 * gp_progress_fraction is the share of the work done, monotone while the owner runs and strictly
 * below 1 until gp_progress_finish: a poller never sees "100%" for a call still running. Every
 * function accepts NULL (no progress wanted) and is then a no-op.
 */
#ifndef GP_PROGRESS_H
#define GP_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_progress {
    atomic_uint_fast64_t done;           /* units finished in the current phase */
    atomic_uint_fast64_t total;          /* units of the current phase (0: not begun) */
    atomic_uint_fast32_t lo_ppm, hi_ppm; /* the phase's share of the whole, parts per million */
    atomic_uint_fast32_t best_ppm;       /* highest fraction reported so far (monotone) */
    atomic_int finished;
    atomic_int cancel; /* set by gp_progress_cancel: the work stops at its next check */
    char label[32];    /* what runs ("apsp", "table"), for display; set by the owner */
} gp_progress;

/* Zeroes p: span [0, 1), nothing begun; label may be NULL. Not while others use p. */
void gp_progress_init(gp_progress *p, const char *label);
/* Back to span [0, 1), nothing begun, fraction 0, with atomic stores: for a counter that pollers
 * may be reading (a new stage of the same work); keeps the label. */
void gp_progress_reset(gp_progress *p);
/* The calling thread's current progress (NULL: none). Backends read it once per call. */
void gp_progress_set(gp_progress *p);
gp_progress *gp_progress_get(void);
/* The share [lo, hi) of the whole that the next phase(s) cover (0 <= lo <= hi <= 1). */
void gp_progress_span(gp_progress *p, double lo, double hi);
/* Starts a phase of total units (>= 1) inside the current span. */
void gp_progress_begin(gp_progress *p, uint64_t total);
/* k more units done (any thread). */
static inline void gp_progress_add(gp_progress *p, uint64_t k) {
    if (p) atomic_fetch_add_explicit(&p->done, k, memory_order_relaxed);
}
/* Asks the work reporting to p to stop (any thread; a job's DELETE): long loops that report to
 * p look at gp_progress_cancelled between units and end with GP_ECANCELLED. Kept by
 * gp_progress_reset. */
static inline void gp_progress_cancel(gp_progress *p) {
    if (p) atomic_store_explicit(&p->cancel, 1, memory_order_relaxed);
}
static inline int gp_progress_cancelled(gp_progress *p) {
    return p && atomic_load_explicit(&p->cancel, memory_order_relaxed);
}
/* Marks the whole as done: the fraction becomes 1. */
void gp_progress_finish(gp_progress *p);
/* Fraction of the whole done, in [0, 1); exactly 1 only after gp_progress_finish. */
double gp_progress_fraction(gp_progress *p);

#ifdef __cplusplus
}
#endif
#endif
