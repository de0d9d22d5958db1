/* internal.h - what the files of the HTTP transport (server/http/daemon.c, request.c) share: the
 * per-request state behind the handler toolkit's gp_req and the helpers both sides call. Not used
 * outside server/http/.
 */
#ifndef GP_HTTP_INTERNAL_H
#define GP_HTTP_INTERNAL_H

#include "server/http/http.h"

#include <microhttpd.h>
#include <stddef.h>

#define MAX_PARAMS 4
#define MAX_HEADERS 16
#define STREAM_LOCAL_CAP (256u << 20) /* in-process: largest streamed answer drained */

typedef struct kv {
    char *k, *v; /* v may hold NULs before its terminator (vlen bytes) */
    size_t vlen;
} kv;

typedef struct gp_conn gp_conn; /* a connection's tracking record (daemon.c) */

struct gp_req {
    struct MHD_Connection *conn; /* NULL for in-process requests */
    gp_conn *c;                  /* the connection's tracking record (NULL in-process) */
    gp_http_answer *local;       /* in-process: the answer goes here */
    char *method, *path;
    size_t target_len; /* the raw request target's length */
    double t0;
    long route; /* index into gp_routes, -1 when unmatched */
    int begun;  /* the headers were seen (first access-handler call) */
    int nparams;
    struct {
        char name[32];
        const char *value; /* points into segs */
    } params[MAX_PARAMS];
    char *segs; /* copy of the path, split into segments */
    kv *args, *hdrs;
    int nargs, nhdrs;
    int saw_nul;
    char *body;
    size_t body_len, body_cap;
    int too_big;             /* body over max_body_bytes: discarding it */
    unsigned long long seen; /* body bytes received (kept and discarded) */
    int pending;             /* an error to answer once the body is in: */
    char pending_msg[300];
    int close;   /* answer with Connection: close */
    int gzip_ok; /* the client accepts gzip */
    cJSON *json;
    gp_graph *graph;
    const char *graph_name;
    int answered;
    int status;
    size_t bytes;
    int trim;        /* gp_req_trim_after: malloc_trim once freed */
    size_t buffered; /* bytes of this answer counted in the global buffered total (0: none) */
    int err_code;    /* -1 when the answer was not an error */
    int nheaders;
    char *headers[MAX_HEADERS][2];
    char request_id[65];
    char client[64];
};

/* Appends a key/value copy to *arr (v may be NULL); -1 when out of memory. */
/* Gives back r's share of the buffered-answer total (max_buffered_answer_bytes) once the daemon
 * is done with its answer (sent, or the connection gone). */
void gp_http_buffered_release(gp_req *r);
int gp_kv_add(kv **arr, int *n, const char *k, size_t klen, const char *v, size_t vlen);
void gp_kv_free(kv *a, int n);
/* 1 for /admin paths (no CORS there). */
int gp_http_is_admin_path(const char *path);
/* Queues the answer (buf malloc'd, taken; NULL for an empty body) with the shared
 * post-processing: request id, CORS, gzip, Connection: close when stopping. */
void gp_http_send_buf(gp_req *r, int status, const char *ctype, char *buf, size_t len);
/* 1 once the service is stopping (answers then carry Connection: close). */
int gp_http_stopping(void);

#endif
