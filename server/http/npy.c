/* npy.c - matrices answered as NumPy .npy arrays (version 1.0, little-endian float32, C order),
 * computed and sent in blocks of rows: the handler gives the shape and a function that fills a
 * block of rows; the stream writes the 128-byte header at once (the client's first bytes), then
 * asks for one block at a time as the connection drains (the length is known: Content-Length,
 * no compression), so the server holds one block, never
 * the matrix (issue 34: 10,000 x 10,000 is 400 MB as float32, 700 MB as JSON text).
 *
 * Each block runs under its own compute deadline (request_timeout_ms from the block's start, as a
 * query handler does), on the daemon thread that feeds the connection; a block that fails (a
 * timeout, the server shutting down, an engine error) ends the stream without its last bytes:
 * the array is then shorter than its header says, which numpy.load and npyjs refuse, and the log
 * names the rows. Nothing is cached.
 */
#include "server/http/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct npy_stream {
    gp_http_rows_fn rows;
    void (*done)(void *ctx);
    void *ctx;
    uint32_t ns, nt, block, next;
    double timeout_s;
    double handed; /* gp_now() when the last block was handed to the connection */
    char head[128];
    float *blk;
    const char *buf; /* what is being sent: head or blk */
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

static long npy_fill(void *ctx, char *out, size_t max) {
    npy_stream *s = ctx;
    if (s->off == s->len) {
        if (s->next >= s->ns) return 0;
        uint32_t k = s->ns - s->next < s->block ? s->ns - s->next : s->block;
        gp_err err = {0};
        double t0 = gp_now();
        if (s->timeout_s > 0) gp_deadline_set(t0 + s->timeout_s);
        int rc = s->rows(s->ctx, s->next, k, s->blk, &err);
        gp_deadline_set(0);
        /* the time since the previous block was handed over: the connection's writing of it */
        GP_LOG(GP_LOG_DEBUG, "event=npy_block rows=%u-%u compute_ms=%.1f write_ms=%.1f", s->next,
               s->next + k - 1, (gp_now() - t0) * 1e3,
               s->handed > 0 ? (t0 - s->handed) * 1e3 : 0.0);
        s->handed = gp_now();
        if (rc) {
            GP_LOG(GP_LOG_WARN,
                   "event=matrix_stream_failed rows=%u-%u of=%u error=\"%s\" msg=\"the .npy answer "
                   "was cut short\"",
                   s->next, s->next + k - 1, s->ns, err.msg);
            return -1;
        }
        s->buf = (const char *)s->blk;
        s->len = (size_t)k * s->nt * sizeof(float);
        s->off = 0;
        s->next += k;
        if (!s->len) return 0;
    }
    size_t k = s->len - s->off < max ? s->len - s->off : max;
    memcpy(out, s->buf + s->off, k);
    s->off += k;
    return (long)k;
}

static void npy_done(void *ctx) {
    npy_stream *s = ctx;
    if (s->done) s->done(s->ctx);
    free(s->blk);
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
    float *blk = s ? malloc((size_t)block * (cols ? cols : 1) * sizeof *blk) : NULL;
    if (!blk) {
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
    s->blk = blk;
    s->timeout_s = cfg && cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms / 1e3 : 0;
    s->len = gp_npy_header(s->head, rows, cols);
    s->buf = s->head;
    gp_http_stream_sized(r, 200, "application/x-npy",
                         s->len + (uint64_t)rows * cols * sizeof(float), npy_fill, npy_done, s);
}
