/* cch_cuda.c - the GPU side of the CCH (engine/cch.h): device state per customized CCH, and
 * customization, PHAST and RPHAST through the launchers of kernels/cch*.cu (kernels/cch.h).
 *
 * The state (one stream, the device topology and weights, a sweep workspace grown on demand) hangs
 * off gp_cch.gpu and is freed with the CCH (so with its graph). Calls on one CCH are serialised by
 * the state's mutex; the upward searches of PHAST / RPHAST run on the calling CPU thread (they touch
 * a few hundred nodes) and only the sweeps run on the GPU. The PHAST sweep follows the topology's
 * sweep plan (engine/cch_plan.h), built on the host when the device copy is made: the topology goes
 * down to kernels/cch.h as a plain gp_dcch_topo_src whose hooks hold it and build its plan here.
 *
 * Built without CUDA (no GP_HAVE_CUDA) every call answers GP_EUNSUPPORTED.
 */
#include "engine/cch_internal.h"
#include "engine/cch_plan.h"
#include "engine/engine_lab.h"
#include "kernels/cch_lab.h"
#include "graph/parallel.h"

#include <string.h>

#ifndef GP_HAVE_CUDA
int gp_cch_gpu_customize(gp_cch *c, int device, gp_err *err) {
    (void)c;
    (void)device;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_customize_delta(gp_cch *c, const gp_cch *prev, const uint32_t *edges, uint32_t n,
                               int device, gp_err *err) {
    (void)c, (void)prev, (void)edges, (void)n, (void)device;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_customize_diff(gp_cch *c, const gp_cch *prev, int device, gp_err *err) {
    (void)c, (void)prev, (void)device;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_weights(const gp_cch *c, uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                       gp_err *err) {
    (void)c, (void)fw, (void)bw, (void)fmid, (void)bmid;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_witnesses(const gp_cch *c, uint64_t *wit, gp_err *err) {
    (void)c, (void)wit;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_sssp(const gp_cch *c, const uint32_t *src, uint32_t k, uint64_t *dist, gp_err *err) {
    (void)c, (void)src, (void)k, (void)dist;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                     uint32_t nt, uint64_t *out, gp_err *err) {
    (void)c, (void)src, (void)ns, (void)dst, (void)nt, (void)out;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_count(const gp_cch *c) {
    (void)c;
    return 0;
}
int gp_cch_gpu_device(const gp_cch *c, int i) {
    (void)c, (void)i;
    return -1;
}
int gp_cch_gpu_sssp_on(const gp_cch *c, int i, const uint32_t *src, uint32_t k, uint64_t *dist,
                       gp_err *err) {
    (void)i;
    return gp_cch_gpu_sssp(c, src, k, dist, err);
}
int gp_cch_gpu_table_on(const gp_cch *c, int i, const uint32_t *src, uint32_t ns,
                        const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    (void)i;
    return gp_cch_gpu_table(c, src, ns, dst, nt, out, err);
}
int gp_cch_gpu_cells_on(const gp_cch *c, int i, const uint32_t *dst, uint32_t kt, uint64_t key,
                        const gp_dcch_ends *rows, const gp_dcch_ends *cols, uint64_t closed_from,
                        double scale, void *out, gp_dcch_fix **fix, uint32_t *nfix, gp_err *err) {
    (void)c, (void)i, (void)dst, (void)kt, (void)key, (void)rows, (void)cols, (void)closed_from;
    (void)scale, (void)out;
    *fix = NULL;
    *nfix = 0;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_replicate(gp_cch *c, int device, gp_err *err) {
    (void)c, (void)device;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
int gp_cch_gpu_sweep(const gp_cch *c, const gp_dcch_tune *t, gp_err *err) {
    (void)c, (void)t;
    return gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA");
}
void gp_dcch_tune_defaults(gp_dcch_tune *t) { memset(t, 0, sizeof *t); }
int gp_dcch_edge_class(uint64_t ntri, const gp_dcch_tune *t) {
    (void)ntri, (void)t;
    return -1;
}
void gp_dcch_tune_set(const gp_dcch_tune *t) { (void)t; }
double gp_cch_gpu_last_ms(const gp_cch *c) {
    (void)c;
    return 0;
}
void gp_cch_host_unpin(void *const *arrays, int n) { (void)arrays, (void)n; }
int gp_cch_gpu_stats_get(const gp_cch *c, gp_cch_gpu_stats *st) {
    (void)c;
    memset(st, 0, sizeof *st);
    return -1;
}
#else

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>

#define MARK (GP_NONE - 1)

/* The device parts of topologies (kernels/cch.h gp_dcch_topo), one per topology and device,
 * kept while some CCH on the GPU uses them: a new graph version after a cost change (PATCH
 * .../links, a what-if) has its predecessor's topology, so attaching it uploads only its metric
 * while the predecessor still serves. An entry holds one reference to its part (each gp_dcch holds
 * another) and is dropped with its last user. The part references its gp_cch_topo, so a key's
 * address is not reused while the entry lives. */
typedef struct topo_entry {
    const gp_cch_topo *topo;
    int device;
    int users; /* under topo_mu */
    gp_dcch_topo *dt;
    /* the spare: the device state of the last version freed on this part (under topo_mu), taken
     * by the next version instead of allocating its own (a cost change makes a version, and its
     * predecessor goes soon after: with the one answering, a pool of two); freed with the entry */
    gp_dcch *spare;
    /* page-locked host memory the differences of a cost change come back into
     * (gp_dcch_customize_diff), under diff_mu while one is read: allocated with the entry (for
     * a 12th of the edges, 93 MB on the road-like 1M map with turn costs; grown when a change
     * needs more) and shared by its versions, so that a change does not wait for it
     * (cudaMallocHost of 70 MB took ~45 ms, once for each of the two device states in use) */
    pthread_mutex_t diff_mu;
    void *diff_buf;
    size_t diff_bytes;
    struct topo_entry *next;
} topo_entry;
static pthread_mutex_t topo_mu = PTHREAD_MUTEX_INITIALIZER;
static topo_entry *topo_parts;

/* The hooks of a topology's device part (kernels/cch.h gp_dcch_topo_src): owner is the
 * gp_cch_topo, referenced while the part lives, and the plan's builder. */
static void src_ref(void *owner) {
    __atomic_add_fetch(&((gp_cch_topo *)owner)->refs, 1, __ATOMIC_RELAXED);
}
static void src_unref(void *owner) { gp_cch_topo_unref(owner); }
static int src_plan(void *owner, const gp_dcch_plan_req *rq, gp_dcch_plan *out, gp_err *err) {
    return gp_cch_plan_make(owner, rq, out, err);
}

static void topo_src(const gp_cch_topo *t, gp_dcch_topo_src *src) {
    *src = (gp_dcch_topo_src){.n = t->n,
                              .m = t->m,
                              .nlevels = t->nlevels,
                              .ntri = t->ntri,
                              .order = t->order,
                              .up_first = t->up_first,
                              .up_head = t->up_head,
                              .tri_first = t->tri_first,
                              .tri = t->tri,
                              .level_first = t->level_first,
                              .owner = (void *)t,
                              .ref = src_ref,
                              .unref = src_unref,
                              .plan = src_plan,
                              .plan_free = gp_cch_plan_clear};
}

/* e's page-locked buffer for the differences replaced by one of want bytes, or NULL. */
static void *diff_alloc(topo_entry *e, size_t want) {
    if (e->diff_buf) cudaFreeHost(e->diff_buf);
    e->diff_buf = NULL;
    e->diff_bytes = 0;
    if (cudaMallocHost(&e->diff_buf, want) != cudaSuccess) {
        cudaGetLastError();
        e->diff_buf = NULL;
        return NULL;
    }
    e->diff_bytes = want;
    return e->diff_buf;
}

/* A page-locked buffer of at least bytes for the differences (under e->diff_mu), or NULL. */
static void *diff_host(void *ctx, size_t bytes) {
    topo_entry *e = ctx;
    return bytes <= e->diff_bytes ? e->diff_buf : diff_alloc(e, bytes / 4 * 5); /* room to grow */
}

/* The entry of (t, device) into *out, created (uploaded, plan built) when none is held; one more
 * user. The device must be current. The lock is held while a part is built, so one topology is uploaded
 * once however many graph versions attach at a time. */
static int topo_get(const gp_cch_topo *t, int device, cudaStream_t s, topo_entry **out, int *reused,
                    gp_err *err) {
    int rc = GP_OK;
    gp_dcch_topo_src src;
    topo_src(t, &src);
    pthread_mutex_lock(&topo_mu);
    topo_entry *e = topo_parts;
    while (e && (e->topo != t || e->device != device)) e = e->next;
    *reused = e != NULL;
    if (e) {
        e->users++;
    } else if (!(e = calloc(1, sizeof *e))) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the GPU CCH");
    } else if ((rc = gp_dcch_topo_new(&src, (void *)s, &e->dt, err)) != GP_OK) {
        free(e);
        e = NULL;
    } else {
        e->topo = t;
        e->device = device;
        e->users = 1;
        pthread_mutex_init(&e->diff_mu, NULL);
        e->next = topo_parts;
        topo_parts = e;
        /* the differences' buffer now, with the upload (a failure: the first change tries) */
        diff_alloc(e, ((size_t)t->m / 12 + 1024) * GP_DCCH_DIFF_WORDS * 4);
    }
    pthread_mutex_unlock(&topo_mu);
    *out = e;
    return rc;
}

static void topo_put(topo_entry *e) {
    if (!e) return;
    pthread_mutex_lock(&topo_mu);
    int last = --e->users == 0;
    if (last)
        for (topo_entry **pp = &topo_parts; *pp; pp = &(*pp)->next)
            if (*pp == e) {
                *pp = e->next;
                break;
            }
    pthread_mutex_unlock(&topo_mu);
    if (!last) return;
    cudaSetDevice(e->device);
    gp_dcch_free(e->spare);
    gp_dcch_topo_unref(e->dt);
    if (e->diff_buf) cudaFreeHost(e->diff_buf);
    pthread_mutex_destroy(&e->diff_mu);
    free(e);
}

/* The entry's spare when it is on the entry's part (gp_dcch_retune may have moved it), or NULL. */
static gp_dcch *spare_take(topo_entry *e) {
    pthread_mutex_lock(&topo_mu);
    gp_dcch *d = e->spare;
    e->spare = NULL;
    pthread_mutex_unlock(&topo_mu);
    if (d && gp_dcch_part(d) != e->dt) {
        gp_dcch_free(d);
        d = NULL;
    }
    return d;
}

/* d kept as the entry's spare (the caller holds a use of e and the device is current); freed
 * when the entry has one already. */
static void spare_put(topo_entry *e, gp_dcch *d) {
    pthread_mutex_lock(&topo_mu);
    gp_dcch *old = e->spare;
    if (!old) e->spare = d;
    pthread_mutex_unlock(&topo_mu);
    if (old) gp_dcch_free(d);
}

typedef struct cch_gpu {
    pthread_mutex_t mu;
    int device;
    cudaStream_t stream;
    topo_entry *te; /* the topology's device part this CCH uses */
    gp_dcch *d;
    float last_ms;
    int ok;              /* customized: d may serve as the topology's spare once c is freed */
    gp_cch_gpu_stats st; /* the last customization's */
    uint32_t *map;       /* n ranks -> RPHAST local id of the prepared targets' closure */
    /* the targets RPHAST is prepared for (the blocks of one streamed table ask with the same
     * targets: their closure is selected and uploaded once); tsel the closure map[] marks */
    uint32_t *tdst, *tsel;
    uint32_t tnt, tnsel;
    int tready;
    /* page-locked staging for RPHAST's results (grown on demand, kept): the copy from the device
     * runs at the bus's speed, then all CPUs move it into the caller's array (a copy into
     * pageable memory would be staged by the driver on one thread, and fault in fresh pages) */
    uint64_t *pin;
    size_t pin_cap;
    struct cch_gpu *next; /* the same metric on another device (cuda_devices), or NULL */
} cch_gpu;

static void gpu_free(void *p) {
    cch_gpu *g = p;
    if (!g) return;
    cch_gpu *next = g->next; /* replicas after the first state: its arrays are the spare */
    cudaSetDevice(g->device);
    if (g->ok && g->te && g->d) spare_put(g->te, g->d);
    else gp_dcch_free(g->d);
    topo_put(g->te);
    if (g->stream) cudaStreamDestroy(g->stream);
    pthread_mutex_destroy(&g->mu);
    free(g->map);
    free(g->tdst);
    free(g->tsel);
    if (g->pin) cudaFreeHost(g->pin);
    free(g);
    gpu_free(next);
}

static int cuda_err(cudaError_t e, const char *what, gp_err *err) {
    return gp_err_set(err, GP_EDEVICE, "CUDA error during %s: %s", what, cudaGetErrorName(e));
}

_Static_assert(GP_DCCH_WIT_ORIG == GP_CCH_WIT_ORIG, "one packed-witness flag");

/* c's weight and witness arrays page-locked (cudaHostRegister), once per set, when the set came
 * from the topology's spare: the sets of successive versions (speed files, cost changes) cycle
 * through it (engine/cch.c), so after the first versions every upload and fetch of a metric runs
 * at PCIe speed instead of through the driver's pageable staging. A set used once (a new exclude
 * metric, the first versions) is not locked: locking a set costs more than one pageable copy of
 * it. A set that cannot be locked stays pageable (correct, slower). */
static void host_pin(gp_cch *c) {
    if (c->pinned || !c->reused) return;
    size_t m = (size_t)c->topo->m + 1;
    void *a[7] = {c->ofw, c->obw, c->fw, c->bw, c->fmid, c->bmid, c->wit};
    size_t b[7] = {m * 4, m * 4, m * 4, m * 4, m * 4, m * 4, m * 16};
    for (int i = 0; i < 7; i++)
        if (cudaHostRegister(a[i], b[i], cudaHostRegisterPortable) != cudaSuccess) {
            cudaGetLastError();
            gp_cch_host_unpin(a, i);
            return;
        }
    c->pinned = 1;
}

void gp_cch_host_unpin(void *const *arrays, int n) {
    for (int i = 0; i < n; i++)
        if (arrays[i]) cudaHostUnregister(arrays[i]);
    cudaGetLastError();
}

/* A new device state for c on device: its stream, its topology's device part, and the device
 * arrays, the part's spare's when there is one, else allocated; ofw / obw (may be NULL: the
 * caller fills the device arrays) uploaded. */
static int gpu_state(gp_cch *c, int device, const uint32_t *ofw, const uint32_t *obw, cch_gpu **out,
                     gp_err *err) {
    double t0 = gp_now();
    cudaError_t e;
    int rc = GP_OK;
    cch_gpu *g = calloc(1, sizeof *g);
    *out = NULL;
    if (!g) return gp_err_set(err, GP_ENOMEM, "out of memory for the GPU CCH");
    pthread_mutex_init(&g->mu, NULL);
    g->device = device;
    if ((e = cudaSetDevice(device)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        rc = cuda_err(e, "opening the GPU for the CCH", err);
        gpu_free(g);
        return rc;
    }
    if ((rc = topo_get(c->topo, device, g->stream, &g->te, &g->st.topo_shared, err)) != GP_OK) {
        gpu_free(g);
        return rc;
    }
    g->d = spare_take(g->te);
    g->st.spare = g->d != NULL;
    if (g->d) rc = ofw && obw ? gp_dcch_set_metric(g->d, (void *)g->stream, ofw, obw, err) : GP_OK;
    else rc = gp_dcch_new(g->te->dt, c->topo, ofw, obw, (void *)g->stream, &g->d, err);
    if (rc != GP_OK) {
        gpu_free(g);
        return rc;
    }
    g->st.attach_s = gp_now() - t0;
    *out = g;
    return GP_OK;
}

int gp_cch_gpu_customize(gp_cch *c, int device, gp_err *err) {
    double t0 = gp_now();
    cch_gpu *g = c->gpu;
    int rc = GP_OK;
    gp_cch_restore_pending(c); /* every array comes back, but a failure customizes on the CPU */
    if (!g) {
        host_pin(c);
        if ((rc = gpu_state(c, device, c->ofw, c->obw, &g, err)) != GP_OK) return rc;
        c->gpu = g;
        c->gpu_free = gpu_free;
    } else {
        gpu_free(g->next); /* replicas on other devices hold the old metric: gone */
        g->next = NULL;
        pthread_mutex_lock(&g->mu);
        cudaSetDevice(g->device);
        rc = gp_dcch_set_metric(g->d, (void *)g->stream, c->ofw, c->obw, err);
        pthread_mutex_unlock(&g->mu);
        if (rc) goto fail;
        g->st.attach_s = 0;
        g->st.spare = 0;
    }
    g->ok = 0;
    g->st.delta = 0;
    g->st.diff = 0;
    g->st.scattered = 0;
    free(c->delta); /* the weights come back from the device: not a predecessor's with a delta */
    c->delta = NULL;
    c->ndelta = 0;
    c->from_prev = 0;
    gp_cch_perfect_drop(c); /* a background pass reads the arrays fetched into below */
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    double t1 = gp_now();
    rc = gp_dcch_customize(g->d, (void *)g->stream, NULL, NULL, NULL, NULL, &g->last_ms, err);
    double t2 = gp_now();
    /* the weights back, and into a page-locked set the packed witnesses computed on the device
     * (no host pass); into a pageable one the host's pass is quicker than their copy (16 bytes
     * an edge through the driver's staging) */
    if (rc == GP_OK)
        rc = gp_dcch_fetch(g->d, (void *)g->stream, c->fw, c->bw, c->fmid, c->bmid,
                           c->pinned ? c->wit : NULL, err);
    pthread_mutex_unlock(&g->mu);
    if (rc) goto fail;
    double t3 = gp_now();
    if (!c->pinned) gp_cch_witnesses(c);
    g->st.customize_s = t2 - t1;
    g->st.fetch_s = t3 - t2;
    g->st.witnesses_s = gp_now() - t3;
    g->st.device_ms = g->last_ms;
    g->ok = 1;
    c->custom_s = gp_now() - t0;
    snprintf(c->custom_on, sizeof c->custom_on, "gpu");
    return GP_OK;
fail:
    /* the host weights are not customized: no device state may answer queries either */
    gpu_free(c->gpu);
    c->gpu = NULL;
    c->gpu_free = NULL;
    return rc;
}

int gp_cch_gpu_customize_delta(gp_cch *c, const gp_cch *prev, const uint32_t *edges, uint32_t n,
                               int device, gp_err *err) {
    double t0 = gp_now();
    const cch_gpu *pg = prev ? prev->gpu : NULL;
    if (c->gpu || !pg || !pg->ok || pg->device != device || prev->topo != c->topo)
        return gp_err_set(err, GP_EINVAL, "no device state of the predecessor to start from");
    /* the edges' new values, as gp_dcch_customize_from takes them */
    uint32_t *upd = malloc((size_t)n * 28 + 28);
    if (!upd) return gp_err_set(err, GP_ENOMEM, "out of memory for the changed edges");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = edges[i], *u = upd + 7 * (size_t)i;
        u[0] = e, u[1] = c->ofw[e], u[2] = c->obw[e], u[3] = c->fw[e];
        u[4] = c->bw[e], u[5] = c->fmid[e], u[6] = c->bmid[e];
    }
    cch_gpu *g = NULL;
    int rc = gpu_state(c, device, NULL, NULL, &g, err);
    if (rc == GP_OK) {
        double t1 = gp_now();
        /* prev's device arrays are only read (immutable once customized; it answers meanwhile
         * on its own stream) */
        rc = gp_dcch_customize_from(g->d, pg->d, (void *)g->stream, n, upd, &g->last_ms, err);
        if (rc != GP_OK) {
            gpu_free(g);
        } else {
            g->ok = 1;
            g->st.delta = 1;
            g->st.scattered = n;
            g->st.customize_s = gp_now() - t1;
            g->st.witnesses_s = 0;
            g->st.device_ms = g->last_ms;
            c->gpu = g;
            c->gpu_free = gpu_free;
            c->custom_s += gp_now() - t0;
            snprintf(c->custom_on, sizeof c->custom_on, "gpu");
        }
    }
    free(upd);
    return rc;
}

/* c's metric onto its device state g: prev's device metric copied and the edges c->mchg lists
 * scattered (a cost change: a few entries rather than the whole metric over PCIe), else uploaded
 * whole. */
static int metric_to_device(gp_cch *c, cch_gpu *g, const cch_gpu *pg, gp_err *err) {
    if (!c->mchg_ok || !pg || !pg->ok || !pg->d || gp_dcch_part(pg->d) != gp_dcch_part(g->d))
        return gp_dcch_set_metric(g->d, (void *)g->stream, c->ofw, c->obw, err);
    uint32_t *upd = malloc((size_t)c->nmchg * 12 + 12);
    if (!upd) return gp_err_set(err, GP_ENOMEM, "out of memory for the changed metric");
    for (uint32_t i = 0; i < c->nmchg; i++) {
        uint32_t e = c->mchg[i];
        upd[3 * (size_t)i] = e;
        upd[3 * (size_t)i + 1] = c->ofw[e];
        upd[3 * (size_t)i + 2] = c->obw[e];
    }
    int rc = gp_dcch_metric_from(g->d, pg->d, (void *)g->stream, c->nmchg, upd, err);
    free(upd);
    return rc;
}

/* The device's differences upd (kernels/cch.h GP_DCCH_DIFF_WORDS an edge: id, fw, bw, fmid,
 * bmid, the packed witnesses) into c's host arrays, the edges into edges; distinct edges,
 * so ranges run in parallel. */
typedef struct diff_job {
    gp_cch *c;
    const uint32_t *upd;
    uint32_t *edges;
} diff_job;

static void diff_range(void *ctx, uint64_t lo, uint64_t hi) {
    diff_job *j = ctx;
    gp_cch *c = j->c;
    for (uint64_t i = lo; i < hi; i++) {
        const uint32_t *u = j->upd + (size_t)GP_DCCH_DIFF_WORDS * i;
        uint32_t e = u[0];
        j->edges[i] = e;
        c->fw[e] = u[1], c->bw[e] = u[2], c->fmid[e] = u[3], c->bmid[e] = u[4];
        c->wit[2 * (size_t)e] = (uint64_t)u[6] << 32 | u[5];
        c->wit[2 * (size_t)e + 1] = (uint64_t)u[8] << 32 | u[7];
    }
}

/* The host's work while the device customizes (gp_dcch_customize_diff): c's customized arrays
 * made prev's, the restore cch_over left pending or a copy of every array. */
typedef struct busy_job {
    gp_cch *c;
    const gp_cch *prev;
    double s;
    int ran; /* c's customized arrays are prev's (the differences still to come) */
} busy_job;

static void busy_restore(void *arg) {
    busy_job *b = arg;
    double t0 = gp_now();
    if (b->c->from_prev) gp_cch_restore_pending(b->c);
    else gp_cch_custom_copy(b->c, b->prev);
    b->s = gp_now() - t0;
    b->ran = 1;
}

/* The device's customization and the host's work (busy_restore) side by side: on road-like
 * 24M's turn graph the levels fill the launch queue, so the host's part, queued after the last
 * launch, ran 18 ms past the device's 66 ms. */
typedef struct diff_run {
    cch_gpu *g;
    const cch_gpu *pg;
    uint32_t cap;
    busy_job *bj;
    uint32_t *upd, n;
    double ph[3];
    gp_err *err;
    int rc;
} diff_run;

typedef struct diff_task {
    diff_run *r;
    int host; /* 1: busy_restore; 0: the device's customization */
} diff_task;

static void diff_side(void *tv) {
    diff_task *t = tv;
    diff_run *r = t->r;
    if (t->host) {
        busy_restore(r->bj);
        return;
    }
    r->rc = gp_dcch_customize_diff(r->g->d, r->pg->d, (void *)r->g->stream, r->cap, diff_host,
                                   r->g->te, &r->upd, &r->n, &r->g->last_ms, NULL, NULL, r->ph,
                                   r->err);
}

int gp_cch_gpu_customize_diff(gp_cch *c, const gp_cch *prev, int device, gp_err *err) {
    double t0 = gp_now();
    const cch_gpu *pg = prev ? prev->gpu : NULL;
    if (c->gpu || !pg || !pg->ok || pg->device != device || prev->topo != c->topo)
        return gp_err_set(err, GP_EINVAL, "no device state of the predecessor to diff against");
    cch_gpu *g = NULL;
    int rc = gpu_state(c, device, NULL, NULL, &g, err);
    if (rc != GP_OK) return rc;
    gp_cch_perfect_drop(c); /* the whole path fetches into the arrays a background pass reads */
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    if ((rc = metric_to_device(c, g, pg, err)) != GP_OK) {
        pthread_mutex_unlock(&g->mu);
        gpu_free(g);
        return rc;
    }
    g->st.attach_s = gp_now() - t0;
    double t1 = gp_now();
    uint32_t *upd = NULL, n = 0; /* the differences: the topology entry's page-locked memory */
    /* up to a quarter of the edges come back with their witnesses (9 words each) into arrays
     * that are prev's; more, and every customized array comes back (4 words an edge) and every
     * witness is computed */
    uint32_t cap = c->topo->m / 4 + 1024;
    busy_job bj = {c, prev, 0, 0};
    topo_entry *te = g->te;
    pthread_mutex_lock(&te->diff_mu); /* until the differences are read */
    diff_run dr = {g, pg, cap, &bj, NULL, 0, {0, 0, 0}, err, GP_OK};
    diff_task host = {&dr, 1}, dev = {&dr, 0};
    gp_parallel_two(diff_side, &host, &dev); /* the host's part on a thread of its own */
    rc = dr.rc, upd = dr.upd, n = dr.n;
    g->st.run_s = dr.ph[0], g->st.count_s = dr.ph[1], g->st.copy_s = dr.ph[2];
    int whole = rc == GP_OK && !upd && n > cap;
    double tf = gp_now();
    if (whole) {
        host_pin(c);
        rc = gp_dcch_fetch(g->d, (void *)g->stream, c->fw, c->bw, c->fmid, c->bmid,
                           c->pinned ? c->wit : NULL, err); /* as gp_cch_gpu_customize */
    }
    g->st.fetch_s = gp_now() - tf;
    pthread_mutex_unlock(&g->mu);
    uint32_t *edges = rc == GP_OK && !whole ? malloc((size_t)n * 4 + 4) : NULL;
    if (rc == GP_OK && !whole && !edges)
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the changes");
    if (rc != GP_OK) {
        pthread_mutex_unlock(&te->diff_mu); /* before g's use of te goes */
        gpu_free(g);
        return rc;
    }
    double t2 = gp_now();
    free(c->delta);
    c->delta = NULL;
    c->ndelta = 0;
    if (whole && !c->pinned) {
        gp_cch_witnesses(c);
    } else if (!whole) {
        /* c's customized arrays made prev's (busy_restore, beside the device's customization:
         * a copy of every array when they were not listed; not a second time here, 17.6 GB on
         * road-like 24M's turn graph), then the differences */
        if (!bj.ran && (!c->from_prev || c->pend)) gp_cch_custom_copy(c, prev);
        diff_job dj = {c, upd, edges};
        /* 450k on gen:1M turns, scattered writes: every CPU (the even split would give each 64k) */
        gp_parallel_for_dynamic(n, n >= (1u << 14) ? 0 : 1, 0, diff_range, &dj);
        c->delta = edges;
        c->ndelta = n;
        c->delta_base = prev->graph_hash;
    }
    pthread_mutex_unlock(&te->diff_mu);
    c->from_prev = 0;
    g->ok = 1;
    g->st.delta = 0;
    g->st.diff = !whole;
    g->st.whole = whole;
    g->st.scattered = whole ? 0 : n; /* here: fetched */
    g->st.customize_s = t2 - t1;
    g->st.witnesses_s = gp_now() - t2;
    g->st.device_ms = g->last_ms;
    g->st.busy_s = bj.s;
    c->gpu = g;
    c->gpu_free = gpu_free;
    c->custom_s = gp_now() - t0;
    snprintf(c->custom_on, sizeof c->custom_on, "gpu");
    return GP_OK;
}

int gp_cch_gpu_weights(const gp_cch *c, uint32_t *fw, uint32_t *bw, uint32_t *fmid, uint32_t *bmid,
                       gp_err *err) {
    cch_gpu *g = c->gpu;
    if (!g) return gp_err_set(err, GP_EUNSUPPORTED, "this CCH has no GPU state");
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    int rc = gp_dcch_weights(g->d, (void *)g->stream, fw, bw, fmid, bmid, err);
    pthread_mutex_unlock(&g->mu);
    return rc;
}

int gp_cch_gpu_witnesses(const gp_cch *c, uint64_t *wit, gp_err *err) {
    cch_gpu *g = c->gpu;
    if (!g) return gp_err_set(err, GP_EUNSUPPORTED, "this CCH has no GPU state");
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    int rc = gp_dcch_fetch(g->d, (void *)g->stream, NULL, NULL, NULL, NULL, wit, err);
    pthread_mutex_unlock(&g->mu);
    return rc;
}

double gp_cch_gpu_last_ms(const gp_cch *c) {
    cch_gpu *g = c->gpu;
    return g ? g->last_ms : 0;
}

int gp_cch_gpu_stats_get(const gp_cch *c, gp_cch_gpu_stats *st) {
    cch_gpu *g = c->gpu;
    memset(st, 0, sizeof *st);
    if (!g) return -1;
    *st = g->st;
    return 0;
}

int gp_cch_gpu_sweep(const gp_cch *c, const gp_dcch_tune *t, gp_err *err) {
    cch_gpu *g = c->gpu;
    if (!g) return gp_err_set(err, GP_EUNSUPPORTED, "this CCH has no GPU state");
    gp_dcch_tune_set(t);
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    int rc = gp_dcch_retune(g->d, (void *)g->stream, err);
    pthread_mutex_unlock(&g->mu);
    return rc;
}

/* Upward searches of k sources into init lists (first: k+1); filt (may be NULL) maps ranks to
 * the ids to store, GP_NONE / MARK dropping the entry. Many sources: on up to 8 threads, each
 * filling fixed-size slots, compacted afterwards. */
typedef struct up_job {
    const gp_cch *c;
    const uint32_t *src, *filt;
    uint32_t k;
    size_t per;
    uint32_t *ids, *cnt;
    uint64_t *dist;
    atomic_uint next;
    atomic_int oom;
} up_job;

static void *up_main(void *arg) {
    up_job *j = arg;
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->k) break;
        uint32_t *ids = j->ids + i * j->per;
        uint64_t *dist = j->dist + i * j->per;
        int cnt = gp_cch_upward(j->c, j->src[i], 1, ids, dist);
        if (cnt < 0) {
            atomic_store(&j->oom, 1);
            break;
        }
        uint32_t w = 0;
        for (int q = 0; q < cnt; q++) {
            uint32_t id = j->filt ? j->filt[ids[q]] : ids[q];
            if (id == GP_NONE || id == MARK) continue;
            ids[w] = id;
            dist[w++] = dist[q];
        }
        j->cnt[i] = w;
    }
    return NULL;
}

static int upward_lists(const gp_cch *c, const uint32_t *src, uint32_t k, const uint32_t *filt,
                        uint32_t **first_o, uint32_t **ids_o, uint64_t **dist_o, gp_err *err) {
    size_t per = (size_t)c->topo->height + 2;
    up_job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.src = src;
    j.filt = filt;
    j.k = k;
    j.per = per;
    atomic_init(&j.next, 0);
    atomic_init(&j.oom, 0);
    uint32_t *first = malloc(((size_t)k + 1) * 4);
    j.cnt = malloc((size_t)k * 4 + 4);
    j.ids = malloc((size_t)k * per * 4);
    j.dist = malloc((size_t)k * per * 8);
    if (!first || !j.cnt || !j.ids || !j.dist) goto oom;
    pthread_t th[7];
    int nth = k >= 64 ? 7 : 0, started = 0;
    for (int i = 0; i < nth; i++)
        if (pthread_create(&th[started], NULL, up_main, &j) == 0) started++;
    up_main(&j);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    if (atomic_load(&j.oom)) goto oom;
    first[0] = 0;
    for (uint32_t i = 0; i < k; i++) { /* compact the slots in place (moving left only) */
        memmove(j.ids + first[i], j.ids + i * per, (size_t)j.cnt[i] * 4);
        memmove(j.dist + first[i], j.dist + i * per, (size_t)j.cnt[i] * 8);
        first[i + 1] = first[i] + j.cnt[i];
    }
    free(j.cnt);
    *first_o = first;
    *ids_o = j.ids;
    *dist_o = j.dist;
    return GP_OK;
oom:
    free(first);
    free(j.cnt);
    free(j.ids);
    free(j.dist);
    return gp_err_set(err, GP_ENOMEM, "out of memory for upward searches");
}

static int sssp_on(const gp_cch *c, cch_gpu *g, const uint32_t *src, uint32_t k, uint64_t *dist,
                   gp_err *err) {
    if (!g) return gp_err_set(err, GP_EUNSUPPORTED, "this CCH has no GPU state");
    for (uint32_t i = 0; i < k; i++)
        if (src[i] >= c->n) return gp_err_set(err, GP_EINVAL, "source %u out of range", src[i]);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    uint32_t *first, *ids;
    uint64_t *d0;
    int rc = upward_lists(c, src, k, NULL, &first, &ids, &d0, err);
    if (rc) return rc;
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    rc = gp_dcch_phast(g->d, (void *)g->stream, k, first, ids, d0, dist, &g->last_ms, err);
    pthread_mutex_unlock(&g->mu);
    free(first);
    free(ids);
    free(d0);
    return rc;
}

/* The targets' RPHAST state on g (its mutex held): kept from the last call when it asked for the
 * same targets, else their elimination-tree closure selected (map[] marks it with local ids,
 * until the next other target set), its restricted graph built and uploaded. */
static int table_targets(const gp_cch *c, cch_gpu *g, const uint32_t *dst, uint32_t nt, int *reused,
                         gp_err *err) {
    const gp_cch_topo *t = c->topo;
    *reused = 0;
    if (g->tready && g->tnt == nt && memcmp(g->tdst, dst, (size_t)nt * 4) == 0) {
        *reused = 1;
        return GP_OK;
    }
    if (!g->map) {
        g->map = malloc((size_t)c->n * 4);
        if (!g->map) return gp_err_set(err, GP_ENOMEM, "out of memory for an RPHAST table");
        for (uint32_t i = 0; i < c->n; i++) g->map[i] = GP_NONE;
    }
    for (uint32_t i = 0; g->tsel && i < g->tnsel; i++) g->map[g->tsel[i]] = GP_NONE;
    free(g->tsel);
    free(g->tdst);
    g->tsel = g->tdst = NULL;
    g->tnsel = g->tnt = 0;
    g->tready = 0;
    int rc = GP_OK;
    uint32_t *sel = NULL, *rf = NULL, *rh = NULL, *rw = NULL, *lev = NULL, *tgt = NULL;
    uint32_t nsel = 0;
    /* the targets' upward closure: their elimination-tree ancestors */
    size_t cap = 1024;
    sel = malloc(cap * 4);
    if (!sel) goto oom;
    for (uint32_t j = 0; j < nt; j++) {
        for (uint32_t x = t->rank[dst[j]]; x != GP_NONE && g->map[x] == GP_NONE; x = t->parent[x]) {
            if (nsel == cap) {
                uint32_t *ns2 = realloc(sel, cap * 2 * 4);
                if (!ns2) goto oom;
                sel = ns2;
                cap *= 2;
            }
            g->map[x] = MARK;
            sel[nsel++] = x;
        }
    }
    if (gp_sort_u32(sel, nsel)) goto oom;
    for (uint32_t i = 0; i < nsel; i++) g->map[sel[i]] = i;
    uint64_t rm = 0;
    for (uint32_t i = 0; i < nsel; i++) rm += t->up_first[sel[i] + 1] - t->up_first[sel[i]];
    rf = malloc(((size_t)nsel + 1) * 4);
    rh = malloc((size_t)rm * 4 + 4);
    rw = malloc((size_t)rm * 4 + 4);
    lev = malloc(((size_t)t->nlevels + 2) * 4);
    tgt = malloc((size_t)nt * 4);
    g->tdst = malloc((size_t)nt * 4 + 4);
    if (!rf || !rh || !rw || !lev || !tgt || !g->tdst) goto oom;
    uint32_t k = 0, nlev = 0;
    for (uint32_t i = 0; i < nsel; i++) {
        rf[i] = k;
        for (uint32_t e = t->up_first[sel[i]]; e < t->up_first[sel[i] + 1]; e++) {
            rh[k] = g->map[t->up_head[e]];
            rw[k++] = c->bw[e];
        }
    }
    rf[nsel] = k;
    /* local level boundaries (empty levels dropped) */
    lev[nlev++] = 0;
    for (uint32_t L = 1, i = 0; L <= t->nlevels; L++) {
        while (i < nsel && sel[i] < t->level_first[L]) i++;
        if (i > lev[nlev - 1]) lev[nlev++] = i;
    }
    for (uint32_t j = 0; j < nt; j++) tgt[j] = g->map[t->rank[dst[j]]];
    rc = gp_dcch_rphast_prepare(g->d, (void *)g->stream, nsel, rf, rh, rw, nlev - 1, lev, nt, tgt,
                                err);
    if (rc == GP_OK) {
        memcpy(g->tdst, dst, (size_t)nt * 4);
        g->tnt = nt;
        g->tsel = sel;
        g->tnsel = nsel;
        g->tready = 1;
        sel = NULL;
    }
    goto done;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory for an RPHAST table");
done:
    if (sel) /* not prepared: no closure stays marked */
        for (uint32_t i = 0; i < nsel; i++) g->map[sel[i]] = GP_NONE;
    if (!g->tready) {
        free(g->tdst);
        g->tdst = NULL;
    }
    free(sel);
    free(rf);
    free(rh);
    free(rw);
    free(lev);
    free(tgt);
    return rc;
}

/* g's page-locked staging of at least cells results, or NULL (then the device copies straight
 * into the caller's array). Under g->mu. */
static uint64_t *staging(cch_gpu *g, size_t cells) {
    if (g->pin && g->pin_cap >= cells) return g->pin;
    if (g->pin) cudaFreeHost(g->pin);
    g->pin = NULL;
    g->pin_cap = 0;
    size_t cap = cells + cells / 4 + 1024;
    if (cudaHostAlloc((void **)&g->pin, cap * 8, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        g->pin = NULL;
        return NULL;
    }
    g->pin_cap = cap;
    return g->pin;
}

typedef struct copy_job {
    uint64_t *dst;
    const void *src;
    int narrow;
} copy_job;

static void copy_range(void *ctx, uint64_t begin, uint64_t end) {
    copy_job *j = ctx;
    if (!j->narrow) {
        memcpy(j->dst + begin, (const uint64_t *)j->src + begin, (size_t)(end - begin) * 8);
        return;
    }
    const uint32_t *s = j->src;
    for (uint64_t i = begin; i < end; i++) j->dst[i] = s[i] == UINT32_MAX ? GP_INF : s[i];
}

/* dst[0, n) = src[0, n) on all CPUs (tens of MB a block of a large table); narrow: src holds
 * 32-bit cells (UINT32_MAX no route). */
static void copy_out(uint64_t *dst, const void *src, size_t n, int narrow) {
    copy_job j = {dst, src, narrow};
    gp_parallel_for(n, 0, copy_range, &j);
}

/* Sources a batch of an RPHAST table on g's prepared targets: the n_sel x batch matrix within
 * 1 GiB, at most 1024. */
static uint32_t table_batch(const cch_gpu *g) {
    uint64_t per = (uint64_t)g->tnsel * 8 + 1;
    uint32_t batch = (uint32_t)((1ULL << 30) / per);
    if (batch > 1024) batch = 1024;
    return batch < 1 ? 1 : batch;
}

static int table_on(const gp_cch *c, cch_gpu *g, const uint32_t *src, uint32_t ns,
                    const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    if (!g) return gp_err_set(err, GP_EUNSUPPORTED, "this CCH has no GPU state");
    for (uint32_t i = 0; i < ns; i++)
        if (src[i] >= c->n) return gp_err_set(err, GP_EINVAL, "source %u out of range", src[i]);
    for (uint32_t i = 0; i < nt; i++)
        if (dst[i] >= c->n) return gp_err_set(err, GP_EINVAL, "target %u out of range", dst[i]);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    if (ns == 0 || nt == 0) return GP_OK;
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    double t0 = gp_now();
    int reused = 0;
    int rc = table_targets(c, g, dst, nt, &reused, err);
    double t1 = gp_now(), up_s = 0, copy_s = 0;
    const uint32_t batch = table_batch(g);
    double deadline = gp_deadline_get();
    float total = 0;
    for (uint32_t i0 = 0; rc == GP_OK && i0 < ns; i0 += batch) {
        uint32_t kb = ns - i0 < batch ? ns - i0 : batch;
        if (gp_deadline_passed(deadline)) {
            rc = gp_deadline_error(err);
            break;
        }
        uint32_t *first, *ids;
        uint64_t *d0;
        double u0 = gp_now();
        rc = upward_lists(c, src + i0, kb, g->map, &first, &ids, &d0, err);
        up_s += gp_now() - u0;
        if (rc) break;
        float ms = 0;
        size_t bc = (size_t)kb * nt;
        uint64_t *dst_rows = out + (size_t)i0 * nt, *stage = staging(g, bc);
        int sat = 1;
        if (stage) /* 32-bit cells, widened on the way out; 64-bit where one saturates */
            rc = gp_dcch_rphast32(g->d, (void *)g->stream, kb, first, ids, d0, (uint32_t *)stage,
                                  &sat, &ms, err);
        if (rc == GP_OK && sat)
            rc = gp_dcch_rphast(g->d, (void *)g->stream, kb, first, ids, d0,
                                stage ? stage : dst_rows, &ms, err);
        g->st.table64 = sat;
        if (rc == GP_OK && stage) {
            double c0 = gp_now();
            copy_out(dst_rows, stage, bc, !sat);
            copy_s += gp_now() - c0;
        }
        total += ms;
        free(first);
        free(ids);
        free(d0);
    }
    g->last_ms = total;
    GP_LOG(GP_LOG_DEBUG,
           "event=rphast_table device=%d sources=%u targets=%u closure=%u targets_ms=%.1f "
           "reused=%d upward_ms=%.1f device_ms=%.2f copy_ms=%.1f total_ms=%.1f",
           g->device, ns, nt, g->tnsel, (t1 - t0) * 1e3, reused, up_s * 1e3, total, copy_s * 1e3,
           (gp_now() - t0) * 1e3);
    pthread_mutex_unlock(&g->mu);
    return rc;
}

/* Every device (cuda_devices): replicas of c's device state on further devices, chained after
 * c->gpu, and the entry points that pick one. The replica's customization runs on its own device
 * from c's metric and is checked against c's host weights (they must be identical). */
int gp_cch_gpu_sssp(const gp_cch *c, const uint32_t *src, uint32_t k, uint64_t *dist, gp_err *err) {
    return sssp_on(c, c->gpu, src, k, dist, err);
}

int gp_cch_gpu_table(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                     uint32_t nt, uint64_t *out, gp_err *err) {
    return table_on(c, c->gpu, src, ns, dst, nt, out, err);
}

static cch_gpu *gpu_nth(const gp_cch *c, int i) {
    cch_gpu *g = c->gpu;
    while (g && i-- > 0) g = g->next;
    return g;
}

int gp_cch_gpu_count(const gp_cch *c) {
    int n = 0;
    for (const cch_gpu *g = c->gpu; g; g = g->next) n++;
    return n;
}

int gp_cch_gpu_device(const gp_cch *c, int i) {
    const cch_gpu *g = gpu_nth(c, i);
    return g ? g->device : -1;
}

int gp_cch_gpu_sssp_on(const gp_cch *c, int i, const uint32_t *src, uint32_t k, uint64_t *dist,
                       gp_err *err) {
    return sssp_on(c, gpu_nth(c, i), src, k, dist, err);
}

int gp_cch_gpu_table_on(const gp_cch *c, int i, const uint32_t *src, uint32_t ns,
                        const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    return table_on(c, gpu_nth(c, i), src, ns, dst, nt, out, err);
}

typedef struct bcopy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t size; /* bytes an item */
} bcopy_job;

static void bcopy_range(void *ctx, uint64_t begin, uint64_t end) {
    bcopy_job *j = ctx;
    memcpy(j->dst + begin * j->size, j->src + begin * j->size, (size_t)(end - begin) * j->size);
}

int gp_cch_gpu_cells_on(const gp_cch *c, int i, const uint32_t *dst, uint32_t kt, uint64_t key,
                        const gp_dcch_ends *rows, const gp_dcch_ends *cols, uint64_t closed_from,
                        double scale, void *out, gp_dcch_fix **fix, uint32_t *nfix, gp_err *err) {
    cch_gpu *g = gpu_nth(c, i);
    const size_t csize = gp_dcch_cell_bytes(scale);
    const uint32_t nt = cols->n, ne = rows->first[rows->n];
    gp_dcch_fix *all = NULL;
    size_t nall = 0, cap = 0;
    *fix = NULL;
    *nfix = 0;
    if (!g) return gp_err_set(err, GP_EUNSUPPORTED, "this CCH has no GPU state");
    for (uint32_t p = rows->first[0]; p < ne; p++)
        if (rows->node[p] >= c->n)
            return gp_err_set(err, GP_EINVAL, "source %u out of range", rows->node[p]);
    for (uint32_t j = 0; j < kt; j++)
        if (dst[j] >= c->n) return gp_err_set(err, GP_EINVAL, "target %u out of range", dst[j]);
    if (gp_deadline_expired()) return gp_deadline_error(err);
    if (rows->n == 0 || nt == 0) return GP_OK;
    pthread_mutex_lock(&g->mu);
    cudaSetDevice(g->device);
    double t0 = gp_now(), up_s = 0, copy_s = 0;
    int reused = 0;
    int rc = table_targets(c, g, dst, kt, &reused, err);
    if (rc == GP_OK) rc = gp_dcch_cells_cols(g->d, (void *)g->stream, key, cols, err);
    double t1 = gp_now();
    const uint32_t batch = table_batch(g); /* rows a batch while their ends fit it */
    double deadline = gp_deadline_get();
    float total = 0;
    for (uint32_t r0 = 0, r1; rc == GP_OK && r0 < rows->n; r0 = r1) {
        const uint32_t p0 = rows->first[r0];
        for (r1 = r0 + 1; r1 < rows->n && rows->first[r1 + 1] - p0 <= batch; r1++) {
        }
        if (gp_deadline_passed(deadline)) {
            rc = gp_deadline_error(err);
            break;
        }
        const uint32_t kb = rows->first[r1] - p0;
        const gp_dcch_ends part = gp_dcch_ends_part(rows, r0, r1 - r0);
        const size_t cells = (size_t)(r1 - r0) * nt;
        void *stage = staging(g, csize == 4 ? cells / 2 + 1 : cells);
        float ms = 0;
        if (!stage) {
            rc = gp_err_set(err, GP_ENOMEM, "out of page-locked memory for %zu table cells", cells);
            break;
        }
        uint32_t *first = NULL, *ids = NULL, nf = 0;
        uint64_t *d0 = NULL;
        int w64 = 0;
        gp_dcch_fix *f = NULL;
        double u0 = gp_now();
        if (kb) rc = upward_lists(c, rows->node + p0, kb, g->map, &first, &ids, &d0, err);
        up_s += gp_now() - u0;
        if (rc == GP_OK)
            rc = gp_dcch_cells(g->d, (void *)g->stream, kb, first, ids, d0, &part, closed_from,
                               scale, stage, &f, &nf, &w64, &ms, err);
        g->st.table64 = w64;
        free(first);
        free(ids);
        free(d0);
        if (rc == GP_OK && nf && nall + nf > cap) {
            size_t nc = (nall + nf) * 2;
            gp_dcch_fix *grown = realloc(all, nc * sizeof *all);
            if (!grown) rc = gp_err_set(err, GP_ENOMEM, "out of memory for %u table cells", nf);
            else all = grown, cap = nc;
        }
        if (rc == GP_OK) {
            for (uint32_t x = 0; x < nf; x++)
                all[nall++] = (gp_dcch_fix){f[x].cell + (uint64_t)r0 * nt, f[x].partial};
            double c0 = gp_now();
            bcopy_job j = {(unsigned char *)out + (size_t)r0 * nt * csize, stage, csize};
            gp_parallel_for(cells, 0, bcopy_range, &j);
            copy_s += gp_now() - c0;
        }
        free(f);
        total += ms;
    }
    g->last_ms = total;
    if (rc == GP_OK) g->st.cells++;
    GP_LOG(GP_LOG_DEBUG,
           "event=rphast_cells device=%d rows=%u ends=%u targets=%u cols=%u closure=%u "
           "targets_ms=%.1f reused=%d upward_ms=%.1f device_ms=%.2f copy_ms=%.1f host_cells=%zu "
           "total_ms=%.1f",
           g->device, rows->n, ne - rows->first[0], kt, nt, g->tnsel, (t1 - t0) * 1e3, reused,
           up_s * 1e3, total, copy_s * 1e3, nall, (gp_now() - t0) * 1e3);
    pthread_mutex_unlock(&g->mu);
    if (rc) {
        free(all);
        return rc;
    }
    *fix = all;
    *nfix = (uint32_t)nall;
    return GP_OK;
}

int gp_cch_gpu_replicate(gp_cch *c, int device, gp_err *err) {
    if (!c->gpu) return gp_err_set(err, GP_EINVAL, "this CCH has no GPU state to replicate");
    size_t m = c->topo->m;
    uint32_t *w = malloc(m * 16 + 16);
    if (!w) return gp_err_set(err, GP_ENOMEM, "out of memory for a GPU replica");
    cch_gpu *g = NULL;
    int rc = gpu_state(c, device, c->ofw, c->obw, &g, err);
    if (rc == GP_OK) {
        double t1 = gp_now();
        cudaSetDevice(device);
        rc = gp_dcch_customize(g->d, (void *)g->stream, w, w + m, w + 2 * m, w + 3 * m, &g->last_ms,
                               err);
        /* the weights answer the queries (witnesses may break ties otherwise: unused there) */
        if (rc == GP_OK && (memcmp(w, c->fw, m * 4) || memcmp(w + m, c->bw, m * 4)))
            rc = gp_err_set(err, GP_EDEVICE,
                            "the customization on CUDA device %d differs from the first device's",
                            device);
        g->st.customize_s = gp_now() - t1;
        g->st.device_ms = g->last_ms;
    }
    free(w);
    if (rc != GP_OK) {
        gpu_free(g);
        return rc;
    }
    g->ok = 1;
    cch_gpu *last = c->gpu;
    while (last->next) last = last->next;
    last->next = g;
    return GP_OK;
}
#endif
