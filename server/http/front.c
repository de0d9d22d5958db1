/* front.c - the accepting front end (see front.h). accept_threads threads, each with
 * its own epoll set: the one listening socket (level-triggered, EPOLLEXCLUSIVE: a new connection
 * wakes one waiting thread) and the connections that thread accepted and holds until their first
 * request head is in (edge-triggered: a peek consumes nothing, so a level-triggered socket would
 * stay readable). The accept peeks at once; each later readable edge costs an FIONREAD and, when
 * bytes arrived, one MSG_PEEK of at most gp_head_max_bytes + 1 into a buffer of that thread; a
 * slow client never blocks a loop.
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
#include "server/http/front.h"

#include "server/errors.h"
#include "server/http/counters.h"
#include "server/http/head.h"
#include "server/http/util.h"

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
/* A connection in the reserve (connection_reserve, past max_connections) has this long to send its
 * whole first head: a probe or a short request gets through while trickling clients hold every
 * regular slot (1,100 of them over 20 addresses kept /health away for 31 s). */
#define RESERVE_HEAD_S 1.0

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
        unsigned long seq; /* which handoff: a failed one clears only its own entry */
    } * transit;           /* by descriptor: handed to the daemon, not yet adopted */
    size_t ntransit;
    unsigned long seq;
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
    size_t seen;   /* bytes available at the last peek */
    int polled;    /* in the epoll set (a head that arrived with the accept never is) */
    int lingering; /* answered: reading and dropping until EOF */
    int reserve;   /* admitted past max_connections: its head must be in within RESERVE_HEAD_S */
    double linger_until;
    size_t drained;
    struct sockaddr_storage sa;
    socklen_t salen;
    char client[64];
} held;

/* One accepting thread: its epoll set (the shared listening socket, EPOLLEXCLUSIVE, and the
 * connections it holds), its held list and its peek buffer. */
typedef struct loop {
    gp_front *f;
    int efd, wake;
    pthread_t thread;
    int started;
    held *list;
    char *buf;
} loop;

struct gp_front {
    const gp_config *cfg;
    gp_front_handoff_fn handoff;
    void *ctx;
    int lfd;
    int stop;
    gp_head_limits lim;
    size_t max;
    unsigned port;
    int nloops;
    loop *loops;
};

static void held_unlink(loop *l, held *h) {
    if (h->prev) h->prev->next = h->next;
    else l->list = h->next;
    if (h->next) h->next->prev = h->prev;
}

static void held_close(loop *l, held *h) {
    if (!h) return;
    held_unlink(l, h);
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
    gp_metrics_request(GP_ROUTE_UNMATCHED, gp_http_code_status(code), dt);
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
static void drain(loop *l, held *h) {
    for (;;) {
        ssize_t k = recv(h->fd, l->buf, l->f->max + 1, MSG_DONTWAIT);
        if (k > 0) {
            h->drained += (size_t)k;
            if (h->drained > (size_t)l->f->cfg->max_discard_bytes) break;
            continue;
        }
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k < 0 && errno == EINTR) continue;
        break;
    }
    held_close(l, h);
}

/* Waits for the next edge on h (adding it to the epoll set, which then reports bytes that came
 * meanwhile as a first edge). 0, or -1 when h had to be closed. */
static int poll_more(loop *l, held *h) {
    if (h->polled) return 0;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = h};
    if (epoll_ctl(l->efd, EPOLL_CTL_ADD, h->fd, &ev) != 0) {
        held_close(l, h);
        return -1;
    }
    h->polled = 1;
    return 0;
}

/* New bytes (or the client's EOF) on a held connection, or its accept: check the head seen so
 * far. */
static void on_ready(loop *l, held *h, uint32_t events) {
    gp_front *f = l->f;
    if (h->lingering) {
        drain(l, h);
        return;
    }
    if (events & EPOLLERR) {
        held_close(l, h);
        return;
    }
    int eof = (events & (EPOLLRDHUP | EPOLLHUP)) != 0;
    /* the accept peeks at once (the head usually came with the connection); a later edge asks
     * FIONREAD first, so that only new bytes cost a peek */
    int avail = (int)f->max + 1;
    if (h->polled && ioctl(h->fd, FIONREAD, &avail) != 0) avail = (int)f->max + 1;
    size_t want = (size_t)avail < f->max + 1 ? (size_t)avail : f->max + 1;
    if (want == h->seen && !eof) {
        poll_more(l, h);
        return;
    }
    ssize_t k = want ? recv(h->fd, l->buf, want, MSG_PEEK | MSG_DONTWAIT) : 0;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        poll_more(l, h);
        return;
    }
    if (k <= 0 && (k < 0 || eof)) { /* reset, or closed without a byte */
        held_close(l, h);
        return;
    }
    h->seen = (size_t)k;
    h->last = gp_now();
    gp_head_verdict v;
    int r = gp_head_check(l->buf, (size_t)k, eof, &f->lim, &v);
    if (r == GP_HEAD_MORE) {
        poll_more(l, h);
        return;
    }
    if (r == GP_HEAD_BAD) {
        answer(h, &v);
        if (poll_more(l, h) == 0) drain(l, h);
        return;
    }
    /* a good head: the daemon takes the socket (and its count, via the transit table) */
    if (h->polled) epoll_ctl(l->efd, EPOLL_CTL_DEL, h->fd, NULL);
    held_unlink(l, h);
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
    unsigned long seq = ++counts.seq;
    if (ok) counts.transit[fd] = (struct transit){h->ip, h->accepted, seq};
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
        /* refused and closed by the daemon; not adopted unless it notified first. Another
         * thread may have accepted the descriptor again since (and released this entry). */
        pthread_mutex_lock(&counts.mu);
        if (counts.transit[fd].ip && counts.transit[fd].seq == seq) {
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

static void on_accept(loop *l, int fd, const struct sockaddr_storage *ss, socklen_t len) {
    char client[64] = "";
    const struct sockaddr *sa = (const struct sockaddr *)ss;
    gp_addr_str(sa, client, sizeof client);
    unsigned char key[17];
    addr_key(sa, key);
    const gp_config *cfg = l->f->cfg;
    pthread_mutex_lock(&counts.mu);
    if ((size_t)fd < counts.ntransit && counts.transit[fd].ip) { /* closed without notification */
        ip_drop(counts.transit[fd].ip);
        counts.transit[fd].ip = NULL;
    }
    ipent *ip = counts.bucket[key_hash(key)];
    while (ip && memcmp(ip->key, key, sizeof key) != 0) ip = ip->next;
    const char *why = NULL;
    int reserve = counts.total >= cfg->max_connections;
    if (counts.total >= cfg->max_connections + cfg->connection_reserve)
        why = cfg->connection_reserve ? "max_connections and connection_reserve"
                                      : "max_connections";
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
    h->reserve = reserve;
    h->accepted = h->last = gp_now();
    memcpy(&h->sa, ss, len);
    h->salen = len;
    snprintf(h->client, sizeof h->client, "%s", client);
    h->next = l->list;
    if (l->list) l->list->prev = h;
    l->list = h;
    /* the request often came with the connection: then it goes to the daemon at once */
    on_ready(l, h, 0);
}

/* Deadlines of held connections: the whole head within request_read_timeout_s of the accept,
 * no silence longer than connection_timeout_s, an answered client gone within LINGER_S. */
static void sweep(loop *l, double now) {
    const gp_config *cfg = l->f->cfg;
    for (held *h = l->list, *next; h; h = next) {
        next = h->next;
        if (h->lingering) {
            if (now > h->linger_until) held_close(l, h);
            continue;
        }
        if (h->reserve && now - h->accepted > RESERVE_HEAD_S) {
            char client[80];
            gp_log_escape(h->client, strlen(h->client), client, sizeof client);
            GP_LOG(GP_LOG_WARN,
                   "event=reserve_timeout client=%s msg=\"admitted past max_connections, no "
                   "complete request head within %.0f s: connection closed\"",
                   client[0] ? client : "-", RESERVE_HEAD_S);
            held_close(l, h);
        } else if (cfg->request_read_timeout_s > 0 &&
                   now - h->accepted > (double)cfg->request_read_timeout_s) {
            char client[80];
            gp_log_escape(h->client, strlen(h->client), client, sizeof client);
            int in_request = h->seen > 0;
            GP_LOG(in_request ? GP_LOG_WARN : GP_LOG_DEBUG,
                   "event=read_timeout client=%s limit_s=%ld in_request=%d msg=\"no complete "
                   "request in time (request_read_timeout_s): connection closed\"",
                   client[0] ? client : "-", cfg->request_read_timeout_s, in_request);
            held_close(l, h);
        } else if (now - h->last > (double)cfg->connection_timeout_s) {
            held_close(l, h);
        }
    }
}

static void *front_main(void *arg) {
    loop *l = arg;
    gp_front *f = l->f;
    struct epoll_event evs[64];
    double last_sweep = gp_now();
    while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
        int n = epoll_wait(l->efd, evs, 64, (int)(SWEEP_S * 1000));
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &l->wake) continue;
            if (p != &f->lfd) {
                on_ready(l, p, evs[i].events);
                continue;
            }
            for (;;) {
                struct sockaddr_storage ss;
                socklen_t len = sizeof ss;
                int fd =
                    accept4(f->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0) {
                    on_accept(l, fd, &ss, len);
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
            sweep(l, now);
            last_sweep = now;
        }
    }
    while (l->list) held_close(l, l->list);
    return NULL;
}

/* The accepting threads: accept_threads, or for 0 a quarter of the CPUs (1 to 4). */
static int loop_count(const gp_config *cfg) {
    long n = cfg->accept_threads;
    if (n <= 0) {
        n = gp_cpu_count() / 4;
        n = n < 1 ? 1 : n > 4 ? 4 : n;
    }
    return (int)n;
}

static void front_free(gp_front *f) {
    if (!f) return;
    for (int i = 0; i < f->nloops; i++) {
        loop *l = &f->loops[i];
        if (l->efd >= 0) close(l->efd);
        if (l->wake >= 0) close(l->wake);
        free(l->buf);
    }
    if (f->lfd >= 0) close(f->lfd);
    free(f->loops);
    free(f);
}

static void front_join(gp_front *f) {
    __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < f->nloops; i++) {
        loop *l = &f->loops[i];
        uint64_t one = 1;
        if (l->started && write(l->wake, &one, sizeof one) < 0) { /* the sweep wakes it anyway */
        }
    }
    for (int i = 0; i < f->nloops; i++)
        if (f->loops[i].started) pthread_join(f->loops[i].thread, NULL);
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
    int nloops = loop_count(cfg);
    if (!f || !(f->loops = calloc((size_t)nloops, sizeof *f->loops))) {
        free(f);
        gp_err_set(err, GP_ENOMEM, "out of memory");
        return NULL;
    }
    f->cfg = cfg;
    f->handoff = handoff;
    f->ctx = ctx;
    f->nloops = nloops;
    for (int i = 0; i < nloops; i++) f->loops[i] = (loop){.f = f, .efd = -1, .wake = -1};
    f->lim = (gp_head_limits){cfg->max_url_bytes, cfg->max_header_bytes};
    f->max = gp_head_max_bytes(&f->lim);
    errno = 0;
    int one = 1;
    f->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (f->lfd < 0) goto fail;
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
    /* every thread waits on the one listening socket; EPOLLEXCLUSIVE wakes one of them per new
     * connection instead of all */
    for (int i = 0; i < nloops; i++) {
        loop *l = &f->loops[i];
        l->buf = malloc(f->max + 1);
        l->efd = epoll_create1(EPOLL_CLOEXEC);
        l->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (!l->buf || l->efd < 0 || l->wake < 0) goto fail;
        struct epoll_event el = {.events = EPOLLIN | (nloops > 1 ? EPOLLEXCLUSIVE : 0),
                                 .data.ptr = &f->lfd};
        struct epoll_event ew = {.events = EPOLLIN, .data.ptr = &l->wake};
        if (epoll_ctl(l->efd, EPOLL_CTL_ADD, f->lfd, &el) != 0 ||
            epoll_ctl(l->efd, EPOLL_CTL_ADD, l->wake, &ew) != 0)
            goto fail;
    }
    for (int i = 0; i < nloops; i++) {
        if (pthread_create(&f->loops[i].thread, NULL, front_main, &f->loops[i]) != 0) goto fail;
        f->loops[i].started = 1;
    }
    return f;
fail:
    gp_err_set(err, GP_EIO, "cannot listen on %s:%ld (%s)", cfg->listen, cfg->port,
               errno ? strerror(errno) : "out of memory");
    front_join(f);
    front_free(f);
    return NULL;
}

unsigned gp_front_port(const gp_front *f) { return f ? f->port : 0; }

void gp_front_stop(gp_front *f) {
    if (!f) return;
    front_join(f);
    front_free(f);
}
