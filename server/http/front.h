/* front.h - the accepting front end of the HTTP service (server/http/front.c): it owns the
 * listening socket, holds each new connection until its first request head has arrived (read
 * with MSG_PEEK, so nothing is consumed), answers a head that libmicrohttpd would answer with its
 * own HTML itself (JSON, Connection: close; see head.h), and hands every other connection to
 * the daemon (server/http/daemon.c's handoff, MHD_add_connection). It also keeps the per-client and
 * total connection counts for the connections it holds and those the daemon holds (handed over
 * with gp_front_adopt / gp_front_release from the daemon's connection notifications), and closes
 * held connections past request_read_timeout_s (from accept) or connection_timeout_s (idle).
 */
#ifndef GP_HTTP_FRONT_H
#define GP_HTTP_FRONT_H

#include "graph/gp.h"
#include "server/config.h"

#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_front gp_front;

/* Hands a connection (non-blocking socket) to the daemon: 0 when it took it, -1 when it refused
 * it (it has closed the socket then). one_shot: its first request closes it and that head fits
 * a pool of GP_HEAD_SMALL_POOL bytes (head.h). Called on the accepting threads. */
typedef int (*gp_front_handoff_fn)(void *ctx, int fd, const struct sockaddr *addr,
                                   socklen_t addrlen, int one_shot);

/* Binds cfg->listen:cfg->port (IPv4 or IPv6; an IPv6 socket is IPv6-only) and starts the
 * front end's accept_threads threads. NULL with err set when the address is bad or cannot be
 * bound. */
gp_front *gp_front_start(const gp_config *cfg, gp_front_handoff_fn handoff, void *ctx, gp_err *err);
unsigned gp_front_port(const gp_front *f);
/* Stops accepting (the listening socket is closed: new connections are refused), closes the
 * connections not yet handed over, joins the threads and frees f. Connections the daemon holds
 * are not touched. NULL is fine. */
void gp_front_stop(gp_front *f);

/* The daemon took socket fd (its connection-started notification): returns the accounting token
 * of the connection (NULL when it did not come from the front end) and the time it was accepted
 * in *accepted_at (left alone then). Thread-safe. */
void *gp_front_adopt(int fd, double *accepted_at);
/* The daemon closed an adopted connection: its client's count drops. NULL is fine. */
void gp_front_release(void *token);

/* Writes the JSON error answer for code (server/errors.h: the error table and document, with
 * Connection: close and a fresh X-Request-Id, copied to rid) to socket fd without blocking,
 * then shuts its write side. Returns the body bytes sent. */
ssize_t gp_front_send_error(int fd, int code, const char *msg, char *rid, size_t rid_size);
/* The access-log line and metrics of an answer written that way ("front=1" or how=1). */
void gp_front_log_answer(const char *method, const char *path, int code, size_t bytes, double dt,
                         const char *client, const char *rid, const char *how);

#ifdef __cplusplus
}
#endif
#endif
