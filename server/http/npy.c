/* npy.c - matrices answered as NumPy .npy arrays (version 1.0, little-endian float32, C order),
 * computed and sent in blocks of rows: the handler gives the shape and a function that fills a
 * block of rows; the stream writes the 128-byte header at once (the client's first bytes), then
 * asks for one block at a time as the connection drains (the length is known: Content-Length,
 * no compression), so the server holds three blocks, never the matrix (issue 34: 10,000 x 10,000
 * is 400 MB as float32, 700 MB as JSON text).
 *
 * Each block runs under its own compute deadline (request_timeout_ms from the block's start, as a
 * query handler does), on two threads of the stream's own ahead of the connection (one block's
 * searches overlap another's combine and the last one's sending); a block that fails (a
 * timeout, the server shutting down, an engine error) ends the stream without its last bytes:
 * the array is then shorter than its header says, which numpy.load and npyjs refuse, and the log
 * names the rows. Nothing is cached.
 */
#include "server/http/http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blocks are computed on `workers` threads of the ring's own (worker w takes blocks w,
 * w + workers, ...), into a ring of workers + 1 buffers (block b in slot b % nslots), ahead of
 * the one being consumed: one block's searches overlap another's combine and the consumer's
 * sending or writing of the last. A worker waits for its slot to be consumed; blocks are handed
 * out in order. */
#define NPY_SLOTS (GP_HTTP_NPY_WORKERS + 1)

struct gp_npy_blocks {
    gp_http_rows_fn rows;
    void *ctx;
    uint32_t ns, nt, block, nblocks;
    int workers, nslots;
    double timeout_s;
    float *blk[NPY_SLOTS];
    uint32_t blk_k[NPY_SLOTS]; /* rows in the buffer */
    uint32_t blk_b[NPY_SLOTS]; /* the block it holds (when ready) */
    int blk_state[NPY_SLOTS];  /* 0 free, 1 ready, -1 failed (the block's error in err) */
    uint32_t sent;             /* blocks the consumer is done with */
    int cur;                   /* the slot handed out last, -1 none */
    gp_err err;
    uint32_t err_row0, err_k;
    int cancel, started;
    pthread_t th[GP_HTTP_NPY_WORKERS];
    struct npy_worker {
        struct gp_npy_blocks *s;
        int w;
    } wk[GP_HTTP_NPY_WORKERS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *npy_producer(void *arg) {
    struct npy_worker *me = arg;
    gp_npy_blocks *s = me->s;
    for (uint32_t b = (uint32_t)me->w; b < s->nblocks; b += (uint32_t)s->workers) {
        int slot = (int)(b % (uint32_t)s->nslots);
        pthread_mutex_lock(&s->mu);
        /* the slot is block b's once block b - nslots is consumed (and not before: a worker
         * ahead must not take the slot of an earlier block another worker has not placed yet) */
        while (!s->cancel && (s->blk_state[slot] != 0 || b >= s->sent + (uint32_t)s->nslots))
            pthread_cond_wait(&s->cv, &s->mu);
        int stop = s->cancel;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        uint32_t row0 = b * s->block;
        uint32_t k = s->ns - row0 < s->block ? s->ns - row0 : s->block;
        gp_err err = {0};
        if (s->timeout_s > 0) gp_deadline_set(gp_now() + s->timeout_s);
        int rc = s->rows(s->ctx, me->w, row0, k, s->blk[slot], &err);
        gp_deadline_set(0);
        pthread_mutex_lock(&s->mu);
        s->blk_k[slot] = k;
        s->blk_b[slot] = b;
        s->blk_state[slot] = rc ? -1 : 1;
        if (rc) {
            s->err = err, s->err_row0 = row0, s->err_k = k;
            s->cancel = 1; /* the others stop too: the answer ends at this block */
        }
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (rc) break;
    }
    return NULL;
}

void gp_npy_blocks_free(gp_npy_blocks *s) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->cancel = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int w = 0; w < s->started; w++) pthread_join(s->th[w], NULL); /* blocks finish first */
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    for (int i = 0; i < NPY_SLOTS; i++) free(s->blk[i]);
    free(s);
}

gp_npy_blocks *gp_npy_blocks_start(uint32_t rows, uint32_t cols, uint32_t block, int workers,
                                   double timeout_s, gp_http_rows_fn fill_rows, void *ctx,
                                   gp_err *err) {
    if (block < 1) block = 1;
    uint32_t nblocks = rows ? (rows + block - 1) / block : 0;
    if (workers > GP_HTTP_NPY_WORKERS) workers = GP_HTTP_NPY_WORKERS;
    if (workers > (int)nblocks) workers = (int)nblocks;
    if (workers < 1) workers = 1;
    gp_npy_blocks *s = calloc(1, sizeof *s);
    size_t bytes = (size_t)block * (cols ? cols : 1) * sizeof(float);
    int ok = s != NULL;
    for (int i = 0; ok && i <= workers; i++) ok = (s->blk[i] = malloc(bytes)) != NULL;
    if (!ok) {
        for (int i = 0; s && i < NPY_SLOTS; i++) free(s->blk[i]);
        free(s);
        gp_err_set(err, GP_ENOMEM, "out of memory for a block of %u x %u cells", block, cols);
        return NULL;
    }
    s->rows = fill_rows;
    s->ctx = ctx;
    s->ns = rows;
    s->nt = cols;
    s->block = block;
    s->nblocks = nblocks;
    s->workers = workers;
    s->nslots = workers + 1;
    s->timeout_s = timeout_s;
    s->cur = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    for (int w = 0; w < (nblocks ? workers : 0); w++) {
        s->wk[w] = (struct npy_worker){s, w};
        if (pthread_create(&s->th[w], NULL, npy_producer, &s->wk[w]) != 0) break;
        s->started++;
    }
    if (nblocks && s->started < workers) {
        gp_npy_blocks_free(s);
        gp_err_set(err, GP_ENOMEM, "no thread to compute the matrix's blocks");
        return NULL;
    }
    return s;
}

int gp_npy_blocks_next(gp_npy_blocks *s, const float **buf, size_t *bytes, uint32_t *row0,
                       uint32_t *k) {
    if (s->cur >= 0) { /* the buffer handed out last is free again */
        pthread_mutex_lock(&s->mu);
        s->blk_state[s->cur] = 0;
        s->sent++;
        s->cur = -1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    if (s->sent >= s->nblocks) return 0;
    int slot = (int)(s->sent % (uint32_t)s->nslots);
    pthread_mutex_lock(&s->mu);
    /* the block due (or a failure of it or of an earlier one: then the workers stop) */
    while (s->blk_state[slot] == 0 && !(s->cancel && s->err_k)) pthread_cond_wait(&s->cv, &s->mu);
    int st = s->blk_state[slot] == 1 && s->blk_b[slot] == s->sent ? 1 : -1;
    pthread_mutex_unlock(&s->mu);
    if (st < 0) return -1;
    s->cur = slot;
    *buf = s->blk[slot];
    *bytes = (size_t)s->blk_k[slot] * s->nt * sizeof(float);
    if (row0) *row0 = s->sent * s->block;
    if (k) *k = s->blk_k[slot];
    return 1;
}

const gp_err *gp_npy_blocks_error(const gp_npy_blocks *s, uint32_t *row0, uint32_t *k) {
    if (row0) *row0 = s->err_row0;
    if (k) *k = s->err_k;
    return &s->err;
}

/* A streamed answer: the header, then the ring's blocks in order. */
typedef struct npy_stream {
    gp_npy_blocks *blocks;
    void (*done)(void *ctx);
    void *ctx;
    uint32_t ns;
    char head[128];
    const char *buf; /* what is being sent: head or a block */
    size_t len, off;
} npy_stream;

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

/* The next block from the ring (waiting for it); 0 when all are sent, -1 when it failed. */
static int npy_next(npy_stream *s) {
    uint32_t row0, k;
    int rc = gp_npy_blocks_next(s->blocks, (const float **)&s->buf, &s->len, &row0, &k);
    if (rc < 0) {
        const gp_err *e = gp_npy_blocks_error(s->blocks, &row0, &k);
        GP_LOG(GP_LOG_WARN,
               "event=matrix_stream_failed rows=%u-%u of=%u error=\"%s\" msg=\"the .npy answer "
               "was cut short\"",
               row0, row0 + k - 1, s->ns, e->msg);
    }
    s->off = 0;
    return rc;
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
    gp_npy_blocks_free(s->blocks); /* blocks finish first */
    if (s->done) s->done(s->ctx);
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

void gp_http_npy(gp_req *r, uint32_t rows, uint32_t cols, int workers, gp_http_rows_fn fill_rows,
                 void (*done)(void *ctx), void *ctx) {
    const gp_config *cfg = gp_http_config();
    npy_stream *s = calloc(1, sizeof *s);
    gp_err err = {0};
    double timeout_s = cfg && cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms / 1e3 : 0;
    if (s)
        s->blocks = gp_npy_blocks_start(rows, cols, gp_http_npy_block(rows, cols), workers,
                                        timeout_s, fill_rows, ctx, &err);
    else gp_err_set(&err, GP_ENOMEM, "out of memory for a .npy answer");
    if (!s || !s->blocks) {
        free(s);
        if (done) done(ctx);
        gp_http_error(r, GP_HC_INTERNAL, "%s", err.msg);
        return;
    }
    s->done = done;
    s->ctx = ctx;
    s->ns = rows;
    s->len = gp_npy_header(s->head, rows, cols);
    s->buf = s->head;
    gp_http_stream_sized(r, 200, "application/x-npy",
                         s->len + (uint64_t)rows * cols * sizeof(float), npy_fill, npy_done, s);
}
