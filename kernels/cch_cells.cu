/* cch_cells.cu - a turn-cost table's cells on the GPU (kernels/cch_cells.h): RPHAST's ends' table
 * stays in d->outbuf, a thread per cell takes the cheapest pair of its row's and column's ends,
 * and only the cells come back (float32, or the stored units). The cell's rule is engine/snap.c's
 * cell_turns, term for term (the same 64-bit sums, the same double division), so that a cell is
 * bit for bit the host's.
 *
 * The columns (a table plan's: every block of one answer) are uploaded once per key; a block's
 * rows are packed into one buffer and sent with one copy.
 */
#include "kernels/cch_cells.h"
#include "kernels/cch_internal.cuh"

#include <string.h>

namespace {

/* gp_dcch_ends as the kernel reads it (device pointers into a packed buffer) */
struct dev_ends {
    const uint32_t *first, *ix, *node, *arc, *rarc;
    const u64 *cost;
    const int64_t *orig;
};

} // namespace

struct dcch_cells {
    uint64_t key; /* the columns held (0: none) */
    uint32_t nt;
    dev_ends c;                 /* ... their device view (into cols) */
    unsigned char *cols, *rows; /* device: packed ends */
    size_t cols_cap, rows_cap;
    u64 *out; /* the cells (float32 or u64: as many bytes as u64 ones) */
    size_t out_cap;
    gp_dcch_fix *fix;
    size_t fix_cap;
    uint32_t *nfix;
    unsigned char *host; /* host: ends packed for their copy */
    size_t host_cap;
};

namespace {

constexpr int64_t NOT_AT_NODE = INT64_MIN;
constexpr uint32_t NO_ARC = 0xffffffffu; /* GP_NONE */

/* Bytes of e packed: the 8-byte arrays first (cost, orig), then the 4-byte ones. */
size_t packed_bytes(const gp_dcch_ends *e) {
    const size_t n = e->n, nc = e->first[e->n] - e->first[0];
    return nc * 8 + n * 8 + 4 * (n + 1 + (e->ix ? nc : 0) + nc + n + (e->rarc ? n : 0));
}

/* e packed into buf, its ends from e->first[0] on (first[] counted from there); *v: the same
 * layout's pointers from base (the device copy of buf). */
void pack(const gp_dcch_ends *e, unsigned char *buf, const unsigned char *base, dev_ends *v) {
    const size_t n = e->n, f0 = e->first[0], nc = e->first[e->n] - f0;
    size_t at = 0;
    auto put = [&](const void *src, size_t bytes) -> const void * {
        if (bytes) memcpy(buf + at, src, bytes);
        const void *p = base + at;
        at += bytes;
        return p;
    };
    v->cost = (const u64 *)put(e->cost + f0, nc * 8);
    v->orig = (const int64_t *)put(e->orig, n * 8);
    uint32_t *first = (uint32_t *)(buf + at);
    v->first = (const uint32_t *)put(e->first, (n + 1) * 4);
    for (size_t i = 0; i <= n; i++) first[i] -= (uint32_t)f0;
    v->ix = e->ix ? (const uint32_t *)put(e->ix + f0, nc * 4) : NULL;
    v->node = (const uint32_t *)put(e->node + f0, nc * 4);
    v->arc = (const uint32_t *)put(e->arc, n * 4);
    v->rarc = e->rarc ? (const uint32_t *)put(e->rarc, n * 4) : NULL;
}

template <typename C> __device__ __forceinline__ C no_route() { return (C) ~(C)0; }

__device__ __forceinline__ u64 tcost(u64 oc, u64 d, u64 sub) {
    if (d == INF64) return INF64;
    const u64 x = oc + d;
    return x >= sub ? x - sub : 0;
}

/* A cell's cost as the answer holds it: float32 in the graph's unit (NaN: no route), or the
 * stored units. */
__device__ __forceinline__ void put(float *out, uint64_t x, u64 v, double scale) {
    out[x] = v == INF64 ? __int_as_float(0x7fc00000) : (float)((double)v / scale);
}
__device__ __forceinline__ void put(u64 *out, uint64_t x, u64 v, double) { out[x] = v; }

/* Cell (i, j) of nrows x nt from the ends' table t (row ends x kt, the row ends in order). */
template <typename C, typename O>
__global__ void cells(uint32_t nrows, uint32_t nt, uint32_t kt, const C *__restrict__ t, dev_ends r,
                      dev_ends c, u64 closed_from, double scale, O *out, gp_dcch_fix *fix,
                      uint32_t fix_cap, uint32_t *nfix) {
    const uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= (uint64_t)nrows * nt) return;
    const uint32_t i = (uint32_t)(x / nt), j = (uint32_t)(x % nt);
    const int64_t oi = r.orig[i];
    if (oi != NOT_AT_NODE && oi == c.orig[j]) { /* one node: 0 */
        out[x] = 0;
        return;
    }
    const uint32_t ca = c.arc[j], ra = r.arc[i], rr = r.rarc[i];
    /* the row's position on the column's arc: the direct way along it, the host's */
    bool host = ra != NO_ARC && ca != NO_ARC && (ca == ra || (rr != NO_ARC && ca == rr));
    u64 best = INF64;
    const uint32_t q0 = c.first[j], q1 = c.first[j + 1];
    for (uint32_t p = r.first[i]; p < r.first[i + 1]; p++) {
        const C *row = t + (size_t)p * kt;
        const u64 oc = r.cost[p];
        const uint32_t on = r.node[p];
        for (uint32_t q = q0; q < q1; q++) {
            u64 v;
            if (on != c.node[q]) {
                const C d = row[c.ix[q]];
                v = tcost(oc, d == no_route<C>() ? INF64 : (u64)d, c.cost[q]);
            } else if (oc >= c.cost[q]) {
                v = oc - c.cost[q];
            } else { /* around and back: the host's search */
                host = true;
                continue;
            }
            if (v < best) best = v;
        }
    }
    if (host) {
        const uint32_t at = atomicAdd(nfix, 1u);
        if (at < fix_cap) fix[at] = gp_dcch_fix{(uint64_t)x, (uint64_t)best};
        out[x] = 0;
        return;
    }
    if (closed_from && best >= closed_from) best = INF64;
    put(out, x, best, scale);
}

/* e packed on the host (x->host) and copied to the device buffer *dev; its view in *v. */
int upload(dcch_cells *x, cudaStream_t s, const gp_dcch_ends *e, unsigned char **dev, size_t *cap,
           dev_ends *v, gp_err *err) {
    int rc = GP_OK;
    const size_t bytes = packed_bytes(e);
    if (x->host_cap < bytes) {
        unsigned char *h = (unsigned char *)realloc(x->host, bytes);
        if (!h) return gp_err_set(err, GP_ENOMEM, "out of memory for a table's ends");
        x->host = h;
        x->host_cap = bytes;
    }
    CK(grow(dev, cap, bytes), "allocating a table's ends");
    pack(e, x->host, (const unsigned char *)*dev, v);
    /* synchronous: x->host is packed again by the next call */
    CK(cudaMemcpyAsync(*dev, x->host, bytes, cudaMemcpyHostToDevice, s), "table ends");
    CK(cudaStreamSynchronize(s), "table ends");
out:
    return rc;
}

template <typename C, typename O>
int launch(gp_dcch *d, cudaStream_t s, uint32_t nrows, const dev_ends &r, u64 closed_from,
           double scale, gp_err *err) {
    int rc = GP_OK;
    dcch_cells *x = d->cells;
    const uint64_t n = (uint64_t)nrows * x->nt;
    CK(cudaMemsetAsync(x->nfix, 0, 4, s), "table cells");
    if (n) {
        const unsigned nb = blocks_for(n);
        cells<C, O><<<nb, BIG_THREADS, 0, s>>>(nrows, x->nt, d->r_nt, (const C *)d->outbuf, r, x->c,
                                               closed_from, scale, (O *)x->out, x->fix,
                                               (uint32_t)x->fix_cap, x->nfix);
        CKL("table cells");
    }
out:
    return rc;
}

int launch_any(gp_dcch *d, cudaStream_t s, int w64, uint32_t nrows, const dev_ends &r,
               u64 closed_from, double scale, gp_err *err) {
    if (scale > 0)
        return w64 ? launch<u64, float>(d, s, nrows, r, closed_from, scale, err)
                   : launch<uint32_t, float>(d, s, nrows, r, closed_from, scale, err);
    return w64 ? launch<u64, u64>(d, s, nrows, r, closed_from, scale, err)
               : launch<uint32_t, u64>(d, s, nrows, r, closed_from, scale, err);
}

} // namespace

void gp_dcch_cells_free(gp_dcch *d) {
    dcch_cells *x = d ? d->cells : NULL;
    if (!x) return;
    cudaFree(x->cols);
    cudaFree(x->rows);
    cudaFree(x->out);
    cudaFree(x->fix);
    cudaFree(x->nfix);
    free(x->host);
    free(x);
    d->cells = NULL;
}

extern "C" int gp_dcch_cells_cols(gp_dcch *d, void *stream, uint64_t key, const gp_dcch_ends *cols,
                                  gp_err *err) {
    if (!d->cells && !(d->cells = (dcch_cells *)calloc(1, sizeof(dcch_cells))))
        return gp_err_set(err, GP_ENOMEM, "out of memory for a table's cells");
    dcch_cells *x = d->cells;
    if (key && x->key == key) return GP_OK;
    x->key = 0;
    int rc = upload(x, (cudaStream_t)stream, cols, &x->cols, &x->cols_cap, &x->c, err);
    if (rc == GP_OK) {
        x->key = key;
        x->nt = cols->n;
    }
    return rc;
}

extern "C" int gp_dcch_cells(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                             const uint32_t *init_local, const uint64_t *init_dist,
                             const gp_dcch_ends *rows, uint64_t closed_from, double scale,
                             void *out, gp_dcch_fix **fix, uint32_t *nfix, int *w64_out, float *ms,
                             gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    dcch_cells *x = d->cells;
    int rc = GP_OK, w64 = 0;
    uint32_t nf = 0;
    dev_ends r;
    const size_t ncells = (size_t)rows->n * (x ? x->nt : 0);
    float ms_cells = 0;
    *fix = NULL;
    *nfix = 0;
    if (!x || !x->key) return gp_err_set(err, GP_EINVAL, "table cells without their columns");
    if (rows->first[rows->n] - rows->first[0] != k)
        return gp_err_set(err, GP_EINVAL, "table cells: %u sources for %u row ends", k,
                          rows->first[rows->n] - rows->first[0]);
    if (ms) *ms = 0;
    if (k && /* rows without an end (none reachable) need no ends' table */
        (rc = gp_dcch_rphast_dev(d, s, k, init_first, init_local, init_dist, &w64, ms, err)) !=
            GP_OK)
        return rc;
    if ((rc = upload(x, s, rows, &x->rows, &x->rows_cap, &r, err)) != GP_OK) return rc;
    CK(grow(&x->out, &x->out_cap, scale > 0 ? ncells / 2 + 1 : ncells + 1),
       "allocating the table cells");
    if (!x->nfix) CK(cudaMalloc((void **)&x->nfix, 4), "allocating the table cells");
    if (!x->fix) CK(grow(&x->fix, &x->fix_cap, (size_t)rows->n * 4 + 1024), "table cells");
    CK(cudaEventRecord(d->ev0, s), "table cells");
    for (int pass = 0; pass < 2; pass++) {
        if ((rc = launch_any(d, s, w64, rows->n, r, closed_from, scale, err)) != GP_OK) goto out;
        CK(cudaMemcpyAsync(&nf, x->nfix, 4, cudaMemcpyDeviceToHost, s), "table cells");
        CK(cudaStreamSynchronize(s), "table cells");
        if (nf <= x->fix_cap) break;
        /* more cells for the host than the list holds: again with room for all */
        CK(grow(&x->fix, &x->fix_cap, (size_t)nf), "allocating the table cells");
    }
    if (nf > x->fix_cap) {
        rc = gp_err_set(err, GP_EDEVICE, "table cells: %u cells for the host", nf);
        goto out;
    }
    CK(cudaEventRecord(d->ev1, s), "table cells");
    if (ncells)
        CK(cudaMemcpyAsync(out, x->out, ncells * gp_dcch_cell_bytes(scale), cudaMemcpyDeviceToHost,
                           s),
           "table cells");
    if (nf) {
        *fix = (gp_dcch_fix *)malloc(sizeof(gp_dcch_fix) * nf);
        if (!*fix) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for %u table cells", nf);
            goto out;
        }
        CK(cudaMemcpyAsync(*fix, x->fix, sizeof(gp_dcch_fix) * nf, cudaMemcpyDeviceToHost, s),
           "table cells");
    }
    CK(cudaStreamSynchronize(s), "table cells");
    *nfix = nf;
    *w64_out = w64;
    if (ms && cudaEventElapsedTime(&ms_cells, d->ev0, d->ev1) == cudaSuccess) *ms += ms_cells;
out:
    if (rc) {
        free(*fix);
        *fix = NULL;
        *nfix = 0;
    }
    return rc;
}
