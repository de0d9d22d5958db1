/* http_front.c - the accepting front end (see http_front.h). One thread, one epoll set: the
 * listening socket (level-triggered) and the connections held until their first request head is
 * in (edge-triggered: a peek consumes nothing, so a level-triggered socket would stay readable).
 * Each readable edge costs an FIONREAD and, when bytes arrived, one MSG_PEEK of at most
 * gp_head_max_bytes + 1 into a buffer of this thread; a slow client never blocks the loop.
 *
 * Why: libmicrohttpd 0.9.75 (Debian 12) answers the protocol errors it finds before our handler
 * runs with its own HTML, and a malformed Content-Length with its status line and headers twice
 * (parse_connection_headers queues the error, then the state machine goes on and builds the
 * header block again; fixed in libmicrohttpd 1.0). Refusing those heads here, before the daemon
 * reads a byte, gives every such answer the project's JSON body once.
 *
 * Accounting: each client address has a count of its connections, here or in the daemon (the
 * daemon's own per-IP limit is off). A socket handed over sits in a table by descriptor until
 * the daemon's connection-started notification adopts it; should the daemon close it without
 * that notification (it does on allocation failure), the next accept that returns the same
 * descriptor proves the old socket closed and releases it.
 *
 * A refused head is answered, the socket's write side shut, and the rest of the request read and
 * dropped for up to 2 s (or max_discard_bytes) before the close, so the client reads the answer
 * instead of a reset.
 */
#include "http_front.h"

#include "http.h"
#include "http_head.h"
#include "http_util.h"
#include "metrics.h"
#include "render.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define LINGER_S 2.0
#define SWEEP_S 0.25

/* ---- connection counts (shared with the daemon's threads) ---- */
typedef struct ipent {
    struct ipent *next;
    unsigned char key[17]; /* family byte + address */
    long count;
} ipent;

#define IP_BUCKETS 4096

static struct {
    pthread_mutex_t mu;
    ipent *bucket[IP_BUCKETS];
    long total;
    struct transit {
        ipent *ip;
        double accepted;
    } *transit; /* by descriptor: handed to the daemon, not yet adopted */
    size_t ntransit;
} counts = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void addr_key(const struct sockaddr *sa, unsigned char key[17]) {
    memset(key, 0, 17);
    if (sa->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        key[0] = 6;
        memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

static unsigned key_hash(const unsigned char key[17]) {
    unsigned h = 2166136261u;
    for (int i = 0; i < 17; i++) h = (h ^ key[i]) * 16777619u;
    return h % IP_BUCKETS;
}

/* Under counts.mu: one connection of ip less. */
static void ip_drop(ipent *ip) {
    counts.total--;
    if (--ip->count > 0) return;
    ipent **pp = &counts.bucket[key_hash(ip->key)];
    while (*pp && *pp != ip) pp = &(*pp)->next;
    if (*pp) *pp = ip->next;
    free(ip);
}

void *gp_front_adopt(int fd, double *accepted_at) {
    ipent *ip = NULL;
    pthread_mutex_lock(&counts.mu);
    if (fd >= 0 && (size_t)fd < counts.ntransit && counts.transit[fd].ip) {
        ip = counts.transit[fd].ip;
        if (accepted_at) *accepted_at = counts.transit[fd].accepted;
        counts.transit[fd].ip = NULL;
    }
    pthread_mutex_unlock(&counts.mu);
    return ip;
}

void gp_front_release(void *token) {
    if (!token) return;
    pthread_mutex_lock(&counts.mu);
    ip_drop(token);
    pthread_mutex_unlock(&counts.mu);
}

/* ---- the front end ---- */
typedef struct held {
    struct held *prev, *next;
    int fd;
    ipent *ip;
    double accepted, last;
    size_t seen;      /* bytes available at the last peek */
    int polled;       /* in the epoll set (a head that arrived with the accept never is) */
    int lingering;    /* answered: reading and dropping until EOF */
    double linger_until;
    size_t drained;
    struct sockaddr_storage sa;
    socklen_t salen;
    char client[64];
} held;

struct gp_front {
    const gp_config *cfg;
    gp_front_handoff_fn handoff;
    void *ctx;
    int lfd, efd, wake;
    pthread_t thread;
    int stop;
    held *list;
    gp_head_limits lim;
    size_t max;
    char *buf;
    unsigned port;
};

static void held_unlink(gp_front *f, held *h) {
    if (h->prev) h->prev->next = h->next;
    else f->list = h->next;
    if (h->next) h->next->prev = h->prev;
}

static void held_close(gp_front *f, held *h) {
    held_unlink(f, h);
    close(h->fd); /* leaves the epoll set with it */
    pthread_mutex_lock(&counts.mu);
    ip_drop(h->ip);
    pthread_mutex_unlock(&counts.mu);
    free(h);
}

ssize_t gp_front_send_error(int fd, int code, const char *msg, char *rid, size_t rid_size) {
    int status = gp_http_code_status(code);
    char head[400];
    gp_request_id_new(rid, rid_size);
    cJSON *o = gp_render_error_doc(gp_http_code_name(code), msg);
    char *body = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    size_t blen = body ? strlen(body) : 0;
    if (body) body[blen++] = '\n'; /* cJSON allocated blen+1 bytes */
    const char *reason = MHD_get_reason_phrase_for((unsigned)status);
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: "
                      "%zu\r\nConnection: close\r\nX-Request-Id: %s\r\n\r\n",
                      status, reason && *reason ? reason : "Error", blen, rid);
    struct iovec iov[2] = {{head, (size_t)hl}, {body ? body : (char *)"", blen}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t sent = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    free(body);
    shutdown(fd, SHUT_WR);
    return sent > hl ? sent - hl : 0;
}

void gp_front_log_answer(const char *method, const char *path, int code, size_t bytes, double dt,
                         const char *client, const char *rid, const char *how) {
    char m[64], p[300], c[80];
    gp_log_escape(method && *method ? method : "-", method && *method ? strlen(method) : 1, m,
                  sizeof m);
    gp_log_escape(path && *path ? path : "-", path && *path ? strlen(path) : 1, p, sizeof p);
    gp_log_escape(client, strlen(client), c, sizeof c);
    gp_metrics_request(gp_nroutes, gp_http_code_status(code), dt);
    gp_log_set_request_id(rid);
    GP_LOG(GP_LOG_INFO,
           "event=request method=%s path=%s status=%d bytes=%zu duration_ms=%.3f code=%s %s=1 "
           "client=%s",
           m, p, gp_http_code_status(code), bytes, dt * 1e3, gp_http_code_name(code), how,
           c[0] ? c : "-");
    gp_log_set_request_id(NULL);
}

/* The JSON error answer, one access-log line and the request metrics, then the lingering close
 * (the caller drains). */
static void answer(held *h, const gp_head_verdict *v) {
    char rid[32];
    ssize_t n = gp_front_send_error(h->fd, v->code, v->msg, rid, sizeof rid);
    double now = gp_now();
    h->lingering = 1;
    h->linger_until = now + LINGER_S;
    gp_front_log_answer(v->method, v->target, v->code, n > 0 ? (size_t)n : 0, now - h->accepted,
                        h->client, rid, "front");
}

/* Reads and drops what an answered client still sends; closes at its EOF or past the cap. */
static void drain(gp_front *f, held *h) {
    for (;;) {
        ssize_t k = recv(h->fd, f->buf, f->max + 1, MSG_DONTWAIT);
        if (k > 0) {
            h->drained += (size_t)k;
            if (h->drained > (size_t)f->cfg->max_discard_bytes) break;
            continue;
        }
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k < 0 && errno == EINTR) continue;
        break;
    }
    held_close(f, h);
}

/* Waits for the next edge on h (adding it to the epoll set, which then reports bytes that came
 * meanwhile as a first edge). 0, or -1 when h had to be closed. */
static int poll_more(gp_front *f, held *h) {
    if (h->polled) return 0;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = h};
    if (epoll_ctl(f->efd, EPOLL_CTL_ADD, h->fd, &ev) != 0) {
        held_close(f, h);
        return -1;
    }
    h->polled = 1;
    return 0;
}

/* New bytes (or the client's EOF) on a held connection, or its accept: check the head seen so
 * far. */
static void on_ready(gp_front *f, held *h, uint32_t events) {
    if (h->lingering) {
        drain(f, h);
        return;
    }
    if (events & EPOLLERR) {
        held_close(f, h);
        return;
    }
    int eof = (events & (EPOLLRDHUP | EPOLLHUP)) != 0;
    int avail = 0;
    if (ioctl(h->fd, FIONREAD, &avail) != 0) avail = (int)f->max + 1;
    size_t want = (size_t)avail < f->max + 1 ? (size_t)avail : f->max + 1;
    if (want == h->seen && !eof) {
        poll_more(f, h);
        return;
    }
    ssize_t k = want ? recv(h->fd, f->buf, want, MSG_PEEK | MSG_DONTWAIT) : 0;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        poll_more(f, h);
        return;
    }
    if (k <= 0 && (k < 0 || eof)) { /* reset, or closed without a byte */
        held_close(f, h);
        return;
    }
    h->seen = (size_t)k;
    h->last = gp_now();
    gp_head_verdict v;
    int r = gp_head_check(f->buf, (size_t)k, eof, &f->lim, &v);
    if (r == GP_HEAD_MORE) {
        poll_more(f, h);
        return;
    }
    if (r == GP_HEAD_BAD) {
        answer(h, &v);
        if (poll_more(f, h) == 0) drain(f, h);
        return;
    }
    /* a good head: the daemon takes the socket (and its count, via the transit table) */
    if (h->polled) epoll_ctl(f->efd, EPOLL_CTL_DEL, h->fd, NULL);
    held_unlink(f, h);
    int fd = h->fd;
    pthread_mutex_lock(&counts.mu);
    int ok = 1;
    if ((size_t)fd >= counts.ntransit) {
        size_t n = (size_t)fd + 1024;
        struct transit *t = realloc(counts.transit, n * sizeof *t);
        if (t) {
            memset(t + counts.ntransit, 0, (n - counts.ntransit) * sizeof *t);
            counts.transit = t;
            counts.ntransit = n;
        } else {
            ok = 0;
        }
    }
    if (ok) counts.transit[fd] = (struct transit){h->ip, h->accepted};
    pthread_mutex_unlock(&counts.mu);
    if (!ok) { /* out of memory: the connection cannot be tracked, so it is not served */
        close(fd);
        pthread_mutex_lock(&counts.mu);
        ip_drop(h->ip);
        pthread_mutex_unlock(&counts.mu);
        free(h);
        return;
    }
    int one_shot = v.closes && gp_head_fits_pool(&v, GP_HEAD_SMALL_POOL);
    if (f->handoff(f->ctx, fd, (const struct sockaddr *)&h->sa, h->salen, one_shot) != 0) {
        /* refused and closed by the daemon; not adopted unless it notified first */
        pthread_mutex_lock(&counts.mu);
        if (counts.transit[fd].ip == h->ip) {
            counts.transit[fd].ip = NULL;
            ip_drop(h->ip);
        }
        pthread_mutex_unlock(&counts.mu);
    }
    free(h);
}

static void refuse(int fd, const char *client, const char *why) {
    close(fd);
    char c[80];
    gp_log_escape(client, strlen(client), c, sizeof c);
    GP_LOG(GP_LOG_WARN, "event=connection_refused client=%s reason=%s", c[0] ? c : "-", why);
}

static void on_accept(gp_front *f, int fd, const struct sockaddr_storage *ss, socklen_t len) {
    char client[64] = "";
    const struct sockaddr *sa = (const struct sockaddr *)ss;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, client, sizeof client);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, client, sizeof client);
    unsigned char key[17];
    addr_key(sa, key);
    const gp_config *cfg = f->cfg;
    pthread_mutex_lock(&counts.mu);
    if ((size_t)fd < counts.ntransit && counts.transit[fd].ip) { /* closed without notification */
        ip_drop(counts.transit[fd].ip);
        counts.transit[fd].ip = NULL;
    }
    ipent *ip = counts.bucket[key_hash(key)];
    while (ip && memcmp(ip->key, key, sizeof key) != 0) ip = ip->next;
    const char *why = NULL;
    if (counts.total >= cfg->max_connections) why = "max_connections";
    else if (cfg->max_connections_per_ip > 0 && ip && ip->count >= cfg->max_connections_per_ip)
        why = "max_connections_per_ip";
    else if (!ip && (ip = calloc(1, sizeof *ip)) != NULL) {
        memcpy(ip->key, key, sizeof key);
        ip->next = counts.bucket[key_hash(key)];
        counts.bucket[key_hash(key)] = ip;
    }
    if (!why && !ip) why = "out of memory";
    if (!why) {
        ip->count++;
        counts.total++;
    }
    pthread_mutex_unlock(&counts.mu);
    if (why) {
        refuse(fd, client, why);
        return;
    }
    held *h = calloc(1, sizeof *h);
    if (!h) {
        close(fd);
        pthread_mutex_lock(&counts.mu);
        ip_drop(ip);
        pthread_mutex_unlock(&counts.mu);
        return;
    }
    h->fd = fd;
    h->ip = ip;
    h->accepted = h->last = gp_now();
    memcpy(&h->sa, ss, len);
    h->salen = len;
    snprintf(h->client, sizeof h->client, "%s", client);
    h->next = f->list;
    if (f->list) f->list->prev = h;
    f->list = h;
    /* the request often came with the connection: then it goes to the daemon at once */
    on_ready(f, h, 0);
}

/* Deadlines of held connections: the whole head within request_read_timeout_s of the accept,
 * no silence longer than connection_timeout_s, an answered client gone within LINGER_S. */
static void sweep(gp_front *f, double now) {
    const gp_config *cfg = f->cfg;
    for (held *h = f->list, *next; h; h = next) {
        next = h->next;
        if (h->lingering) {
            if (now > h->linger_until) held_close(f, h);
            continue;
        }
        if (cfg->request_read_timeout_s > 0 &&
            now - h->accepted > (double)cfg->request_read_timeout_s) {
            char client[80];
            gp_log_escape(h->client, strlen(h->client), client, sizeof client);
            int in_request = h->seen > 0;
            GP_LOG(in_request ? GP_LOG_WARN : GP_LOG_DEBUG,
                   "event=read_timeout client=%s limit_s=%ld in_request=%d msg=\"no complete "
                   "request in time (request_read_timeout_s): connection closed\"",
                   client[0] ? client : "-", cfg->request_read_timeout_s, in_request);
            held_close(f, h);
        } else if (now - h->last > (double)cfg->connection_timeout_s) {
            held_close(f, h);
        }
    }
}

static void *front_main(void *arg) {
    gp_front *f = arg;
    struct epoll_event evs[64];
    double last_sweep = gp_now();
    while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
        int n = epoll_wait(f->efd, evs, 64, (int)(SWEEP_S * 1000));
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &f->wake) continue;
            if (p != &f->lfd) {
                on_ready(f, p, evs[i].events);
                continue;
            }
            for (;;) {
                struct sockaddr_storage ss;
                socklen_t len = sizeof ss;
                int fd = accept4(f->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0) {
                    on_accept(f, fd, &ss, len);
                    continue;
                }
                if (errno == EINTR || errno == ECONNABORTED) continue;
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                    /* out of descriptors: let closes happen rather than spin on the backlog */
                    GP_LOG(GP_LOG_WARN, "event=accept_failed msg=\"%s\"", strerror(errno));
                    struct timespec ts = {0, 50 * 1000 * 1000};
                    nanosleep(&ts, NULL);
                }
                break;
            }
        }
        double now = gp_now();
        if (now - last_sweep >= SWEEP_S) {
            sweep(f, now);
            last_sweep = now;
        }
    }
    while (f->list) held_close(f, f->list);
    return NULL;
}

gp_front *gp_front_start(const gp_config *cfg, gp_front_handoff_fn handoff, void *ctx,
                         gp_err *err) {
    struct sockaddr_storage ss;
    socklen_t slen;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, cfg->listen, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)cfg->port);
        slen = sizeof *a4;
    } else if (inet_pton(AF_INET6, cfg->listen, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)cfg->port);
        slen = sizeof *a6;
    } else {
        gp_err_set(err, GP_EINVAL, "listen: '%s' is not an IPv4 or IPv6 address", cfg->listen);
        return NULL;
    }
    gp_front *f = calloc(1, sizeof *f);
    if (!f) {
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    f->cfg = cfg;
    f->handoff = handoff;
    f->ctx = ctx;
    f->lfd = f->efd = f->wake = -1;
    f->lim = (gp_head_limits){cfg->max_url_bytes, cfg->max_header_bytes};
    f->max = gp_head_max_bytes(&f->lim);
    f->buf = malloc(f->max + 1);
    int one = 1;
    f->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (!f->buf || f->lfd < 0) goto fail;
    setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) setsockopt(f->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    /* the whole head must fit the receive buffer unread; the default (autotuned from 128 KiB)
     * holds the default limits' 26 KiB, larger max_url_bytes/max_header_bytes ask for more */
    if (f->max > 32768) {
        int rcv = (int)(4 * f->max);
        setsockopt(f->lfd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    }
    if (bind(f->lfd, (struct sockaddr *)&ss, slen) != 0 || listen(f->lfd, SOMAXCONN) != 0)
        goto fail;
    slen = sizeof ss;
    if (getsockname(f->lfd, (struct sockaddr *)&ss, &slen) == 0)
        f->port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    f->efd = epoll_create1(EPOLL_CLOEXEC);
    f->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (f->efd < 0 || f->wake < 0) goto fail;
    struct epoll_event el = {.events = EPOLLIN, .data.ptr = &f->lfd};
    struct epoll_event ew = {.events = EPOLLIN, .data.ptr = &f->wake};
    if (epoll_ctl(f->efd, EPOLL_CTL_ADD, f->lfd, &el) != 0 ||
        epoll_ctl(f->efd, EPOLL_CTL_ADD, f->wake, &ew) != 0)
        goto fail;
    if (pthread_create(&f->thread, NULL, front_main, f) != 0) goto fail;
    return f;
fail:
    gp_err_set(err, GP_EIO, "cannot listen on %s:%ld (%s)", cfg->listen, cfg->port,
               errno ? strerror(errno) : "out of memory");
    if (f->lfd >= 0) close(f->lfd);
    if (f->efd >= 0) close(f->efd);
    if (f->wake >= 0) close(f->wake);
    free(f->buf);
    free(f);
    return NULL;
}

unsigned gp_front_port(const gp_front *f) { return f ? f->port : 0; }

void gp_front_stop(gp_front *f) {
    if (!f) return;
    __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(f->wake, &one, sizeof one) < 0) { /* the 250 ms sweep wakes it anyway */
    }
    pthread_join(f->thread, NULL);
    close(f->lfd);
    close(f->efd);
    close(f->wake);
    free(f->buf);
    free(f);
}
