/* progress.c - the stderr progress reporter of the one-shot commands (contract in
 * progress.h). The computing threads only bump the shared counter; this reporter thread does
 * all the clock reading and writing, so progress costs the computation nothing measurable. */
#include "cli/progress.h"

#include "engine/progress.h"
#include "graph/gp.h"
#include "server/config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct gp_cli_progress {
    gp_progress counter;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, started, enabled, tty;
    const char *label; /* current stage, under mu */
    double t0, interval;
    int drawn, lines;
};

/* 1 while a bar is on the terminal's current line (the reporter writes it, errors clear it) */
static atomic_int bar_on_line;

void gp_cli_progress_clear(void) {
    if (atomic_exchange(&bar_on_line, 0)) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

static void draw_bar(gp_cli_progress *p, const char *label, double frac, int counted, double el) {
    char bar[31];
    int fill = counted ? (int)(frac * 30) : 0;
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : (counted ? '.' : ' ');
    bar[30] = '\0';
    if (counted)
        fprintf(stderr, "\r\033[Kgpath: %-16s [%s] %3d%%  %.1f s", label, bar, (int)(frac * 100),
                el);
    else fprintf(stderr, "\r\033[Kgpath: %-16s %.1f s", label, el);
    fflush(stderr);
    p->drawn = 1;
    atomic_store(&bar_on_line, 1);
}

static void write_line(gp_cli_progress *p, const char *label, double frac, int counted, double el) {
    if (counted)
        fprintf(stderr, "gpath: progress %s %d%% after %.1f s\n", label, (int)(frac * 100), el);
    else fprintf(stderr, "gpath: progress %s after %.1f s\n", label, el);
    fflush(stderr);
    p->lines++;
}

static void *reporter(void *arg) {
    gp_cli_progress *p = arg;
    /* a terminal redraws often; a log gets a line per interval (a short interval, e.g. in tests,
     * shortens the terminal's delays too) */
    double tick = p->tty ? (p->interval < 0.2 ? p->interval : 0.2) : p->interval;
    double first = p->tty ? (p->interval < 0.5 ? p->interval : 0.5) : p->interval;
    double next = p->t0 + first;
    pthread_mutex_lock(&p->mu);
    while (p->running) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double now = gp_now(), wait = next - now;
        if (wait > 0) {
            long ns = (long)(wait * 1e9);
            ts.tv_sec += ns / 1000000000L;
            ts.tv_nsec += ns % 1000000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            continue;
        }
        next = now + tick;
        const char *label = p->label ? p->label : "working";
        /* written without the lock: a stalled terminal (or a reader that does not read) stalls
         * this thread only, never the command's stage changes */
        pthread_mutex_unlock(&p->mu);
        int counted = atomic_load(&p->counter.total) > 0;
        double frac = gp_progress_fraction(&p->counter);
        if (p->tty) draw_bar(p, label, frac, counted, now - p->t0);
        else write_line(p, label, frac, counted, now - p->t0);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gp_cli_progress *gp_cli_progress_start(int enabled) {
    gp_cli_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    gp_progress_init(&p->counter, NULL);
    gp_progress_set(&p->counter);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->t0 = gp_now();
    p->enabled = enabled;
    p->tty = isatty(STDERR_FILENO);
    p->interval = gp_config_env_progress_interval(2.0);
    if (enabled) {
        p->running = 1;
        p->started = pthread_create(&p->th, NULL, reporter, p) == 0;
        if (!p->started) p->running = 0;
    }
    return p;
}

void gp_cli_progress_stage(gp_cli_progress *p, const char *label) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    gp_progress_reset(&p->counter); /* the reporter may be reading it */
    p->label = label;
    pthread_mutex_unlock(&p->mu);
}

void gp_cli_progress_stop(gp_cli_progress *p) {
    if (!p) return;
    gp_progress_set(NULL);
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->running = 0;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
    }
    if (p->drawn) gp_cli_progress_clear();
    if (p->lines) {
        fprintf(stderr, "gpath: progress done after %.1f s\n", gp_now() - p->t0);
        fflush(stderr);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
