/* npy.c - matrices answered as NumPy .npy arrays (version 1.0, little-endian float32, C order),
 * computed and sent in blocks of rows: the handler gives the shape and a function that fills a
 * block of rows; the stream writes the 128-byte header at once (the client's first bytes), then
 * asks for one block at a time as the connection drains (the length is known: Content-Length,
 * no compression), so the server holds two blocks, never
 * the matrix (issue 34: 10,000 x 10,000 is 400 MB as float32, 700 MB as JSON text).
 *
 * Each block runs under its own compute deadline (request_timeout_ms from the block's start, as a
 * query handler does), on a thread of the stream's own one block ahead of the connection (two
 * blocks held: the next one's searches overlap the last one's sending); a block that fails (a
 * timeout, the server shutting down, an engine error) ends the stream without its last bytes:
 * the array is then shorter than its header says, which numpy.load and npyjs refuse, and the log
 * names the rows. Nothing is cached.
 */
#include "server/http/http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blocks are computed on a thread of the stream's own, one ahead of the one being sent (two
 * buffers): the next block's searches overlap the connection draining the last. */
typedef struct npy_stream {
    gp_http_rows_fn rows;
    void (*done)(void *ctx);
    void *ctx;
    uint32_t ns, nt, block, nblocks;
    double timeout_s;
    char head[128];
    float *blk[2];
    uint32_t blk_k[2]; /* rows in the buffer */
    int blk_state[2];  /* 0 free, 1 ready, -1 failed (the block's error in err) */
    uint32_t made;     /* blocks the producer finished */
    uint32_t sent;     /* blocks npy_fill finished sending */
    gp_err err;
    uint32_t err_row0, err_k;
    int cancel, started;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *buf; /* what is being sent: head or a block */
    int cur;         /* the buffer being sent, -1 the header */
    size_t len, off;
} npy_stream;

static void *npy_producer(void *arg) {
    npy_stream *s = arg;
    for (uint32_t b = 0; b < s->nblocks; b++) {
        int slot = (int)(b & 1);
        pthread_mutex_lock(&s->mu);
        while (!s->cancel && s->blk_state[slot] != 0) pthread_cond_wait(&s->cv, &s->mu);
        int stop = s->cancel;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        uint32_t row0 = b * s->block;
        uint32_t k = s->ns - row0 < s->block ? s->ns - row0 : s->block;
        gp_err err = {0};
        if (s->timeout_s > 0) gp_deadline_set(gp_now() + s->timeout_s);
        int rc = s->rows(s->ctx, row0, k, s->blk[slot], &err);
        gp_deadline_set(0);
        pthread_mutex_lock(&s->mu);
        s->blk_k[slot] = k;
        s->blk_state[slot] = rc ? -1 : 1;
        if (rc) s->err = err, s->err_row0 = row0, s->err_k = k;
        s->made = b + 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (rc) break;
    }
    return NULL;
}

size_t gp_npy_header(char out[128], uint32_t rows, uint32_t cols) {
    /* magic, version 1.0, header length (LE uint16), dict padded with spaces, ending in '\n',
     * so that magic + length + dict is a multiple of 64 bytes (numpy's alignment) */
    char dict[118];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%u, %u), }", rows, cols);
    size_t total = 128, hl = total - 10;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)(hl & 0xff);
    out[9] = (char)(hl >> 8);
    memset(out + 10, ' ', hl);
    memcpy(out + 10, dict, (size_t)n);
    out[total - 1] = '\n';
    return total;
}

/* The next block from the producer (waiting for it); 0 when all are sent, -1 when it failed. */
static int npy_next(npy_stream *s) {
    if (s->cur >= 0) { /* the buffer just sent is free again */
        pthread_mutex_lock(&s->mu);
        s->blk_state[s->cur] = 0;
        s->sent++;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    if (s->sent >= s->nblocks) return 0;
    int slot = (int)(s->sent & 1);
    pthread_mutex_lock(&s->mu);
    while (s->blk_state[slot] == 0) pthread_cond_wait(&s->cv, &s->mu);
    int st = s->blk_state[slot];
    pthread_mutex_unlock(&s->mu);
    if (st < 0) {
        GP_LOG(GP_LOG_WARN,
               "event=matrix_stream_failed rows=%u-%u of=%u error=\"%s\" msg=\"the .npy answer "
               "was cut short\"",
               s->err_row0, s->err_row0 + s->err_k - 1, s->ns, s->err.msg);
        return -1;
    }
    s->cur = slot;
    s->buf = (const char *)s->blk[slot];
    s->len = (size_t)s->blk_k[slot] * s->nt * sizeof(float);
    s->off = 0;
    return 1;
}

static long npy_fill(void *ctx, char *out, size_t max) {
    npy_stream *s = ctx;
    while (s->off == s->len) {
        int rc = npy_next(s);
        if (rc <= 0) return rc;
    }
    size_t k = s->len - s->off < max ? s->len - s->off : max;
    memcpy(out, s->buf + s->off, k);
    s->off += k;
    return (long)k;
}

static void npy_done(void *ctx) {
    npy_stream *s = ctx;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->cancel = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL); /* a block being computed finishes first */
    }
    if (s->done) s->done(s->ctx);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->blk[0]);
    free(s->blk[1]);
    free(s);
}

int gp_http_accepts_npy(const gp_req *r) {
    const char *a = gp_req_header(r, "Accept");
    return a && strstr(a, "application/x-npy") != NULL;
}

uint32_t gp_http_npy_block(uint32_t rows, uint32_t cols) {
    const gp_config *cfg = gp_http_config();
    long target = cfg && cfg->matrix_block_cells > 0 ? cfg->matrix_block_cells : 1L << 22;
    target *= gp_engine_devices(gp_http_engine()); /* a block's rows are split over the GPUs */
    uint32_t block = cols ? (uint32_t)(target / cols) : rows;
    if (block < 1) block = 1;
    if (block > rows) block = rows ? rows : 1;
    return block;
}

void gp_http_npy(gp_req *r, uint32_t rows, uint32_t cols, gp_http_rows_fn fill_rows,
                 void (*done)(void *ctx), void *ctx) {
    const gp_config *cfg = gp_http_config();
    npy_stream *s = calloc(1, sizeof *s);
    uint32_t block = gp_http_npy_block(rows, cols);
    size_t bytes = (size_t)block * (cols ? cols : 1) * sizeof(float);
    if (s) {
        s->blk[0] = malloc(bytes);
        s->blk[1] = malloc(bytes);
    }
    if (!s || !s->blk[0] || !s->blk[1]) {
        if (s) free(s->blk[0]), free(s->blk[1]);
        free(s);
        if (done) done(ctx);
        gp_http_error(r, GP_HC_INTERNAL, "out of memory for a block of %u x %u cells", block, cols);
        return;
    }
    s->rows = fill_rows;
    s->done = done;
    s->ctx = ctx;
    s->ns = rows;
    s->nt = cols;
    s->block = block;
    s->nblocks = rows ? (rows + block - 1) / block : 0;
    s->timeout_s = cfg && cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms / 1e3 : 0;
    s->len = gp_npy_header(s->head, rows, cols);
    s->buf = s->head;
    s->cur = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (s->nblocks) {
        s->started = pthread_create(&s->th, NULL, npy_producer, s) == 0;
        if (!s->started) {
            npy_done(s);
            gp_http_error(r, GP_HC_INTERNAL, "no thread to compute the matrix's blocks");
            return;
        }
    }
    gp_http_stream_sized(r, 200, "application/x-npy",
                         s->len + (uint64_t)rows * cols * sizeof(float), npy_fill, npy_done, s);
}
