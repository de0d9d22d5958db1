/* progress.c - the progress counter of engine/progress.h. Units are added with relaxed atomics;
 * the fraction is computed by the poller, so the computing threads never take a lock or a clock. */
#include "engine/progress.h"

#include <stdio.h>
#include <string.h>

/* The largest fraction reported before gp_progress_finish: 999999 ppm ("99.9999%"). */
#define PPM_MAX_RUNNING 999999u

static _Thread_local gp_progress *tl_progress;

void gp_progress_set(gp_progress *p) { tl_progress = p; }
gp_progress *gp_progress_get(void) { return tl_progress; }

void gp_progress_init(gp_progress *p, const char *label) {
    if (!p) return;
    atomic_init(&p->done, 0);
    atomic_init(&p->total, 0);
    atomic_init(&p->lo_ppm, 0);
    atomic_init(&p->hi_ppm, 1000000);
    atomic_init(&p->best_ppm, 0);
    atomic_init(&p->finished, 0);
    atomic_init(&p->cancel, 0);
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
}

void gp_progress_reset(gp_progress *p) {
    if (!p) return;
    atomic_store(&p->total, 0);
    atomic_store(&p->done, 0);
    atomic_store(&p->lo_ppm, 0);
    atomic_store(&p->hi_ppm, 1000000);
    atomic_store(&p->finished, 0);
    atomic_store(&p->best_ppm, 0);
}

static uint32_t to_ppm(double f) {
    if (!(f > 0)) return 0;
    if (f >= 1) return 1000000;
    return (uint32_t)(f * 1e6);
}

void gp_progress_span(gp_progress *p, double lo, double hi) {
    if (!p) return;
    uint32_t l = to_ppm(lo), h = to_ppm(hi);
    if (h < l) h = l;
    /* the new span starts where the old one ended at the latest: nothing begun yet */
    atomic_store(&p->total, 0);
    atomic_store(&p->done, 0);
    atomic_store(&p->lo_ppm, l);
    atomic_store(&p->hi_ppm, h);
}

void gp_progress_begin(gp_progress *p, uint64_t total) {
    if (!p) return;
    atomic_store(&p->total, 0); /* a poller between the two stores sees the span's start */
    atomic_store(&p->done, 0);
    atomic_store(&p->total, total ? total : 1);
}

void gp_progress_finish(gp_progress *p) {
    if (!p) return;
    atomic_store(&p->finished, 1);
    atomic_store(&p->best_ppm, 1000000);
}

double gp_progress_fraction(gp_progress *p) {
    if (!p) return 0;
    if (atomic_load(&p->finished)) return 1;
    uint64_t total = atomic_load(&p->total), done = atomic_load(&p->done);
    uint32_t lo = atomic_load(&p->lo_ppm), hi = atomic_load(&p->hi_ppm);
    uint64_t ppm = lo;
    if (total) {
        if (done > total) done = total;
        ppm = lo + (uint64_t)((double)(hi - lo) * ((double)done / (double)total));
    }
    if (ppm > PPM_MAX_RUNNING) ppm = PPM_MAX_RUNNING;
    /* monotone for every poller: never below what was already reported */
    uint_fast32_t best = atomic_load(&p->best_ppm);
    while (ppm > best && !atomic_compare_exchange_weak(&p->best_ppm, &best, (uint_fast32_t)ppm)) {
    }
    if (ppm < best) ppm = best;
    if (ppm > PPM_MAX_RUNNING && !atomic_load(&p->finished)) ppm = PPM_MAX_RUNNING;
    return (double)ppm / 1e6;
}
