/* pg_listen.c - the LISTEN gpath_reload listener (contract in pg.h): one thread per listener with its
 * own connection, waiting in poll() on the connection's socket and on a stop pipe. Connects without
 * blocking (PQconnectStart/PQconnectPoll) so stopping never waits for an unreachable server, and
 * pings an idle connection every 30 s so a server that vanished without closing the socket is noticed.
 */
#include "storage/pg.h"

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDLE_PING_MS 30000
#define CONNECT_WAIT_MS 10000

struct gp_pg_listener {
    pthread_t thread;
    gp_pg_spec spec;
    void (*on_reload)(const char *payload, void *ctx);
    void *ctx;
    int stop_fd[2]; /* the stop pipe: stop() writes a byte */
    atomic_int stopping;
    atomic_int connected;
};

/* Waits for fd (events) or the stop pipe; returns 1 fd ready, 0 timeout, -1 stopping. */
static int wait_fd(gp_pg_listener *l, int fd, short events, int ms) {
    struct pollfd p[2] = {{.fd = l->stop_fd[0], .events = POLLIN}, {.fd = fd, .events = events}};
    int n = poll(p, fd >= 0 ? 2 : 1, ms);
    if (atomic_load(&l->stopping) || (n > 0 && (p[0].revents & POLLIN))) return -1;
    if (n < 0) return errno == EINTR ? 0 : -1;
    return n > 0 ? 1 : 0;
}

static void ignore_notice(void *arg, const char *msg) {
    (void)arg;
    GP_LOG(GP_LOG_DEBUG, "PostgreSQL notice: %s", msg);
}

/* Connects without blocking; NULL when it failed or the listener is stopping. */
static PGconn *connect_async(gp_pg_listener *l, char *why, size_t cap) {
    PGconn *c = PQconnectStart(l->spec.conninfo);
    if (!c) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    if (PQstatus(c) == CONNECTION_BAD) goto fail;
    PQsetNoticeProcessor(c, ignore_notice, NULL);
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    for (;;) {
        if (st == PGRES_POLLING_OK) return c;
        if (st == PGRES_POLLING_FAILED) goto fail;
        int w = wait_fd(l, PQsocket(c), st == PGRES_POLLING_READING ? POLLIN : POLLOUT,
                        CONNECT_WAIT_MS);
        if (w < 0) {
            snprintf(why, cap, "stopping");
            PQfinish(c);
            return NULL;
        }
        if (w == 0) {
            snprintf(why, cap, "connection timed out");
            PQfinish(c);
            return NULL;
        }
        st = PQconnectPoll(c);
    }
fail:
    snprintf(why, cap, "%s", PQerrorMessage(c));
    why[strcspn(why, "\n")] = 0;
    PQfinish(c);
    return NULL;
}

static void *listen_main(void *arg) {
    gp_pg_listener *l = arg;
    double backoff = 0.1;
    int missed = 0; /* notifications may have been lost: reload everything once connected */
    int warned = 0; /* one warning per outage */
    char why[512];
    while (!atomic_load(&l->stopping)) {
        PGconn *c = connect_async(l, why, sizeof why);
        PGresult *r = NULL;
        if (c) {
            r = PQexec(c, "LISTEN gpath_reload");
            if (PQresultStatus(r) != PGRES_COMMAND_OK) {
                snprintf(why, sizeof why, "LISTEN: %s", PQerrorMessage(c));
                why[strcspn(why, "\n")] = 0;
                PQfinish(c);
                c = NULL;
            }
            PQclear(r);
        }
        if (!c) {
            if (atomic_load(&l->stopping)) break;
            if (!warned)
                GP_LOG(GP_LOG_WARN, "LISTEN gpath_reload on %s: %s; retrying", l->spec.shown, why);
            warned = 1;
            missed = 1;
            if (wait_fd(l, -1, 0, (int)(backoff * 1000)) < 0) break;
            backoff = backoff * 2 > 5 ? 5 : backoff * 2;
            continue;
        }
        atomic_store(&l->connected, 1);
        GP_LOG(GP_LOG_INFO, "LISTEN gpath_reload on %s", l->spec.shown);
        backoff = 0.1;
        warned = 0;
        if (missed) l->on_reload("", l->ctx);
        missed = 0;
        int lost = 0;
        while (!lost) {
            int w = wait_fd(l, PQsocket(c), POLLIN, IDLE_PING_MS);
            if (w < 0) break;
            if (w == 0) { /* idle: make sure the server is still there */
                r = PQexec(c, "SELECT 1");
                lost = PQresultStatus(r) != PGRES_TUPLES_OK;
                PQclear(r);
            } else if (!PQconsumeInput(c) || PQstatus(c) != CONNECTION_OK) {
                lost = 1;
            }
            PGnotify *n;
            while ((n = PQnotifies(c))) {
                GP_LOG(GP_LOG_INFO, "NOTIFY gpath_reload '%s' from %s", n->extra, l->spec.shown);
                l->on_reload(n->extra, l->ctx);
                PQfreemem(n);
            }
        }
        atomic_store(&l->connected, 0);
        if (lost) {
            snprintf(why, sizeof why, "%s", PQerrorMessage(c));
            why[strcspn(why, "\n")] = 0;
            GP_LOG(GP_LOG_WARN, "LISTEN gpath_reload on %s: connection lost (%s); reconnecting",
                   l->spec.shown, why);
            warned = 1;
            missed = 1;
        }
        PQfinish(c);
    }
    return NULL;
}

gp_pg_listener *gp_pg_listen_start(const char *uri,
                                   void (*on_reload)(const char *payload, void *ctx), void *ctx,
                                   gp_err *err) {
    if (!on_reload) {
        gp_err_set(err, GP_EINVAL, "gp_pg_listen_start: no callback");
        return NULL;
    }
    gp_pg_listener *l = calloc(1, sizeof *l);
    if (!l) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    l->stop_fd[0] = l->stop_fd[1] = -1;
    if (gp_pg_spec_parse(uri, &l->spec, err)) goto fail;
    if (pipe2(l->stop_fd, O_CLOEXEC) != 0) {
        gp_err_set(err, GP_EIO, "pipe: %s", strerror(errno));
        goto fail;
    }
    l->on_reload = on_reload;
    l->ctx = ctx;
    if (pthread_create(&l->thread, NULL, listen_main, l) != 0) {
        gp_err_set(err, GP_ENOMEM, "cannot start the LISTEN thread");
        goto fail;
    }
    return l;
fail:
    if (l->stop_fd[0] >= 0) close(l->stop_fd[0]);
    if (l->stop_fd[1] >= 0) close(l->stop_fd[1]);
    gp_pg_spec_free(&l->spec);
    free(l);
    return NULL;
}

int gp_pg_listen_connected(const gp_pg_listener *l) {
    return l ? atomic_load(&((gp_pg_listener *)l)->connected) : 0;
}

void gp_pg_listen_stop(gp_pg_listener *l) {
    if (!l) return;
    atomic_store(&l->stopping, 1);
    char b = 1;
    if (write(l->stop_fd[1], &b, 1) < 0) { /* the flag alone still stops it at the next wake-up */
    }
    pthread_join(l->thread, NULL);
    close(l->stop_fd[0]);
    close(l->stop_fd[1]);
    gp_pg_spec_free(&l->spec);
    free(l);
}
