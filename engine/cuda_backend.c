/* cuda_backend.c - the CUDA backend: gp_backend_ops on the GPU, over a pool of CUDA streams.
 *
 *  - attach copies the graph's forward and reverse CSR to the GPU once (gp_dgraph, kernels/sssp.cu)
 *    and stores it in g->dev with g->dev_free, so it lives exactly as long as the graph: a reload
 *    attaches the new graph and the old copy goes when the last request on it drops its reference.
 *  - sssp / p2p / table run the SSSP kernels (kernels/sssp.h): near-far delta-stepping by
 *    default, the seed algorithm (Martin et al. 2009) with opts->sssp_variant = "seed".
 *  - apsp calls gp_cuda_apsp (kernels/fw.cu) on a pooled stream.
 *  - The pool: opts->streams slots, each a non-blocking stream plus a workspace sized on first use
 *    and reused (grown only for a larger graph or batch). A request takes a free slot, waiting at
 *    most opts->queue_wait_ms, else GP_EBUSY.
 *  - A CUDA error fails its request with GP_EDEVICE and the CUDA error's name; a sticky one (the
 *    context is lost) also marks the backend unhealthy, and the engine then answers on the CPU.
 *
 * Built without CUDA (no GP_HAVE_CUDA) only the "unsupported" answers remain.
 */
#include "engine/backend.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cudaError_t values the reasons below tell apart (driver_types.h; stable across CUDA releases). */
enum { CU_ERR_STUB_LIBRARY = 34, CU_ERR_INSUFFICIENT_DRIVER = 35, CU_ERR_NO_DEVICE = 100 };

int gp_cuda_have_driver(void) {
    /* the driver's user-space library; the container toolkit mounts it only with --gpus */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) return 0;
    dlclose(h);
    return 1;
}

void gp_cuda_unavailable_reason(int cuda_error, int count, int have_driver, const char *detail,
                                char *buf, size_t size) {
    if (!have_driver)
        snprintf(buf, size,
                 "no NVIDIA GPU found (no NVIDIA driver: libcuda.so.1 is not installed)");
    else if (cuda_error == CU_ERR_NO_DEVICE || (cuda_error == 0 && count <= 0))
        snprintf(buf, size, "no NVIDIA GPU found (the driver sees no device)");
    else if (cuda_error == CU_ERR_STUB_LIBRARY)
        snprintf(buf, size, "no NVIDIA GPU found (only the CUDA stub library, no driver)");
    else if (cuda_error == CU_ERR_INSUFFICIENT_DRIVER)
        snprintf(buf, size,
                 "the NVIDIA driver is too old for this build's CUDA runtime (%s); "
                 "update the driver",
                 detail && *detail ? detail : "insufficient driver");
    else snprintf(buf, size, "CUDA is unusable: %s", detail && *detail ? detail : "unknown error");
}

int gp_cuda_devices_parse(const char *spec, int dflt, int count, int *out, gp_err *err) {
    if (!spec || !*spec) {
        if (count >= 0 && (dflt < 0 || dflt >= count)) goto missing_dflt;
        out[0] = dflt;
        return 1;
    }
    if (strcmp(spec, "all") == 0) {
        int n = count < 0 ? 0 : count < GP_CUDA_MAX_DEVICES ? count : GP_CUDA_MAX_DEVICES;
        for (int i = 0; i < n; i++) out[i] = i;
        return n;
    }
    int n = 0;
    for (const char *p = spec; *p;) {
        while (*p == ' ') p++;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        const char *q = end;
        while (*q == ' ') q++;
        if (end == p || !isdigit((unsigned char)*p) || errno || v > 1024 || (*q && *q != ',')) {
            gp_err_set(err, GP_EINVAL,
                       "cuda_devices: '%s' is not 'all' or a list of device ordinals (at '%.16s')",
                       spec, p);
            return -1;
        }
        if (n == GP_CUDA_MAX_DEVICES) {
            gp_err_set(err, GP_EINVAL, "cuda_devices: more than %d devices in '%s'",
                       GP_CUDA_MAX_DEVICES, spec);
            return -1;
        }
        if (count >= 0 && v >= count) {
            gp_err_set(err, GP_EINVAL, "cuda_devices: CUDA device %ld does not exist (%d found)", v,
                       count);
            return -1;
        }
        out[n++] = (int)v;
        p = *q ? q + 1 : q;
        if (*q && !*p) {
            gp_err_set(err, GP_EINVAL, "cuda_devices: '%s' ends with a comma", spec);
            return -1;
        }
    }
    if (n == 0) {
        gp_err_set(err, GP_EINVAL, "cuda_devices: '%s' lists no device", spec);
        return -1;
    }
    return n;
missing_dflt:
    gp_err_set(err, GP_EINVAL, "CUDA device %d does not exist (%d found)", dflt, count);
    return -1;
}

#ifndef GP_HAVE_CUDA
/* Built without nvcc: there is no CUDA backend. */
gp_backend *gp_cuda_backend_new(const gp_cuda_opts *opts, gp_err *err) {
    (void)opts;
    gp_err_set(err, GP_EUNSUPPORTED, "this gpath was built without CUDA (nvcc not found at build)");
    return NULL;
}
int gp_cuda_compiled(void) { return 0; }
#else

#include "kernels/fw.h"
#include "kernels/sssp.h"
#include "engine/progress.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gp_cuda_compiled(void) { return 1; }

typedef struct slot {
    cudaStream_t stream;
    gp_sssp_ws *ws;
    int busy;
} slot;

typedef struct cuda_impl {
    int device;
    int ndevices; /* cuda_devices, devices[0] == device */
    int devices[GP_CUDA_MAX_DEVICES];
    int nslots;
    slot *slots;
    int queue_wait_ms;
    gp_sssp_params params;
    pthread_mutex_t mu;   /* guards slots[].busy and attach */
    pthread_cond_t freed; /* CLOCK_MONOTONIC */
    int healthy;          /* atomic */
    char name[128];
    uint64_t mem_total;
} cuda_impl;

static cuda_impl *impl_of(gp_backend *b) { return (cuda_impl *)b->impl; }

static int device_error(cudaError_t e, const char *what, gp_err *err) {
    return gp_err_set(err, GP_EDEVICE, "CUDA error during %s: %s (%s)", what, cudaGetErrorName(e),
                      cudaGetErrorString(e));
}

/* Takes a free slot, waiting up to queue_wait_ms. Every query op comes through here first, so
 * this is also where a caller already past its deadline (request_timeout_ms) is turned away; the
 * table's batch loop checks again between batches (kernels/sssp.cu). */
static int slot_get(cuda_impl *c, slot **out, gp_err *err) {
    if (gp_deadline_expired()) return gp_deadline_error(err);
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    long ms = c->queue_wait_ms > 0 ? c->queue_wait_ms : 0;
    dl.tv_sec += ms / 1000;
    dl.tv_nsec += (ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->mu);
    for (;;) {
        for (int i = 0; i < c->nslots; i++) {
            if (!c->slots[i].busy) {
                c->slots[i].busy = 1;
                pthread_mutex_unlock(&c->mu);
                *out = &c->slots[i];
                /* the current device is per host thread */
                cudaError_t e = cudaSetDevice(c->device);
                if (e != cudaSuccess) {
                    pthread_mutex_lock(&c->mu);
                    c->slots[i].busy = 0;
                    pthread_cond_signal(&c->freed);
                    pthread_mutex_unlock(&c->mu);
                    return device_error(e, "cudaSetDevice", err);
                }
                return GP_OK;
            }
        }
        if (ms == 0 || pthread_cond_timedwait(&c->freed, &c->mu, &dl) == ETIMEDOUT) {
            int all_busy = 1;
            for (int i = 0; i < c->nslots; i++) all_busy &= c->slots[i].busy;
            if (all_busy) {
                pthread_mutex_unlock(&c->mu);
                return gp_err_set(err, GP_EBUSY,
                                  "all %d GPU streams are busy (waited %d ms); retry later",
                                  c->nslots, c->queue_wait_ms);
            }
        }
    }
}

static void slot_put(cuda_impl *c, slot *s, int rc) {
    if (rc == GP_EDEVICE && gp_cuda_device_broken()) {
        if (__atomic_exchange_n(&c->healthy, 0, __ATOMIC_ACQ_REL))
            GP_LOG(GP_LOG_ERROR, "cuda backend: sticky device error, GPU marked unhealthy");
    }
    pthread_mutex_lock(&c->mu);
    s->busy = 0;
    pthread_cond_signal(&c->freed);
    pthread_mutex_unlock(&c->mu);
}

static int check_healthy(cuda_impl *c, gp_err *err) {
    if (__atomic_load_n(&c->healthy, __ATOMIC_ACQUIRE)) return GP_OK;
    return gp_err_set(err, GP_EDEVICE, "the GPU is out of service after a sticky CUDA error");
}

static int cuda_attach(gp_backend *b, gp_graph *g, gp_err *err) {
    cuda_impl *c = impl_of(b);
    int rc = check_healthy(c, err);
    if (rc) return rc;
    pthread_mutex_lock(&c->mu);
    if (!g->dev) {
        cudaError_t e = cudaSetDevice(c->device);
        if (e != cudaSuccess) {
            rc = device_error(e, "cudaSetDevice", err);
        } else {
            gp_dgraph *dg = NULL;
            rc = gp_dgraph_new(g, &dg, err);
            if (rc == GP_OK) {
                g->dev_free = gp_dgraph_free;
                g->dev = dg;
                GP_LOG(GP_LOG_INFO, "cuda: graph %s resident on the GPU (%.1f MiB)", g->version,
                       (double)gp_dgraph_bytes(dg) / 1048576.0);
            }
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (rc == GP_EDEVICE && gp_cuda_device_broken())
        __atomic_store_n(&c->healthy, 0, __ATOMIC_RELEASE);
    return rc;
}

/* The graph's device copy, attaching on first use (the graph is immutable; only dev is set). */
static int dgraph_of(gp_backend *b, const gp_graph *g, const gp_dgraph **out, gp_err *err) {
    if (!g->dev) {
        int rc = cuda_attach(b, (gp_graph *)g, err);
        if (rc) return rc;
    }
    *out = (const gp_dgraph *)g->dev;
    return GP_OK;
}

static int cuda_sssp(gp_backend *b, const gp_graph *g, uint32_t src, uint64_t max_dist,
                     uint64_t *dist, uint32_t *pred, gp_err *err) {
    cuda_impl *c = impl_of(b);
    const gp_dgraph *dg;
    slot *s;
    int rc = check_healthy(c, err);
    if (rc || (rc = dgraph_of(b, g, &dg, err)) || (rc = slot_get(c, &s, err))) return rc;
    rc = gp_cuda_sssp(s->ws, dg, &c->params, src, max_dist, dist, pred, NULL, err);
    slot_put(c, s, rc);
    return rc;
}

static int cuda_p2p(gp_backend *b, const gp_graph *g, uint32_t s_, uint32_t t, int algo,
                    gp_path *path, gp_err *err) {
    cuda_impl *c = impl_of(b);
    const gp_dgraph *dg;
    slot *s;
    if (algo == GP_P2P_ASTAR && (!g->lon || !g->lat))
        return gp_err_set(err, GP_EUNSUPPORTED, "A* needs node coordinates; this graph has none");
    if (algo < GP_P2P_AUTO || algo > GP_P2P_ASTAR)
        return gp_err_set(err, GP_EINVAL, "unknown point-to-point algorithm %d", algo);
    /* Every algorithm gives the same shortest distance; the GPU answers each with near-far
     * stopping once t is settled. */
    int rc = check_healthy(c, err);
    if (rc || (rc = dgraph_of(b, g, &dg, err)) || (rc = slot_get(c, &s, err))) return rc;
    path->settled = 0;
    rc =
        gp_cuda_p2p(s->ws, dg, &c->params, s_, t, &path->dist, &path->nodes, &path->len, NULL, err);
    slot_put(c, s, rc);
    return rc;
}

static int cuda_table(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                      const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    cuda_impl *c = impl_of(b);
    const gp_dgraph *dg;
    slot *s;
    int rc = check_healthy(c, err);
    if (rc || (rc = dgraph_of(b, g, &dg, err)) || (rc = slot_get(c, &s, err))) return rc;
    /* With a progress counter (CLI, jobs), sources go in chunks of at least 1024 (many kernel
     * batches each, so the GPU stays as busy) and each chunk counts when its rows are back. */
    gp_progress *prog = gp_progress_get();
    uint32_t chunk = ns;
    if (prog && ns > 2048) chunk = ns / 32 > 1024 ? ns / 32 : 1024;
    gp_progress_begin(prog, ns);
    for (uint32_t i0 = 0; rc == GP_OK && i0 < ns; i0 += chunk) {
        uint32_t k = ns - i0 < chunk ? ns - i0 : chunk;
        rc = gp_cuda_table(s->ws, dg, &c->params, src + i0, k, dst, nt, out + (size_t)i0 * nt, NULL,
                           err);
        if (rc == GP_OK) gp_progress_add(prog, k);
    }
    slot_put(c, s, rc);
    return rc;
}

static int cuda_apsp(gp_backend *b, const gp_graph *g, uint64_t *dist, uint32_t *next,
                     gp_err *err) {
    cuda_impl *c = impl_of(b);
    slot *s;
    int rc = check_healthy(c, err);
    if (rc || (rc = slot_get(c, &s, err))) return rc;
    /* one unit: the whole matrix is one call that ends with the copy back */
    gp_progress *prog = gp_progress_get();
    gp_progress_begin(prog, 1);
    rc = gp_cuda_apsp((void *)s->stream, g, dist, next, err);
    if (rc == GP_OK) gp_progress_add(prog, 1);
    slot_put(c, s, rc);
    return rc;
}

static void cuda_info(gp_backend *b, gp_backend_info *out) {
    cuda_impl *c = impl_of(b);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "cuda");
    snprintf(out->device, sizeof out->device, "%.127s", c->name);
    out->threads = c->nslots;
    out->mem_total = c->mem_total;
    out->healthy = __atomic_load_n(&c->healthy, __ATOMIC_ACQUIRE);
    out->ndevices = c->ndevices;
    memcpy(out->devices, c->devices, sizeof c->devices);
    if (out->healthy) {
        size_t fr = 0, tot = 0;
        if (cudaSetDevice(c->device) == cudaSuccess && cudaMemGetInfo(&fr, &tot) == cudaSuccess) {
            out->mem_total = tot;
            out->mem_used = tot - fr;
        }
    }
}

static void cuda_destroy(gp_backend *b) {
    if (!b) return;
    cuda_impl *c = impl_of(b);
    if (c) {
        cudaSetDevice(c->device);
        for (int i = 0; c->slots && i < c->nslots; i++) {
            gp_sssp_ws_free(c->slots[i].ws);
            if (c->slots[i].stream) cudaStreamDestroy(c->slots[i].stream);
        }
        free(c->slots);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->freed);
        free(c);
    }
    free(b);
}

static const gp_backend_ops cuda_ops = {
    .attach = cuda_attach,
    .sssp = cuda_sssp,
    .p2p = cuda_p2p,
    .table = cuda_table,
    .apsp = cuda_apsp,
    .info = cuda_info,
    .destroy = cuda_destroy,
};

gp_backend *gp_cuda_backend_new(const gp_cuda_opts *opts, gp_err *err) {
    gp_cuda_opts def = {0, 4, 1000, NULL, NULL};
    if (!opts) opts = &def;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        /* without libcuda.so.1 the runtime reports an "insufficient driver": tell that apart from
         * a driver that really is too old */
        char why[256];
        gp_cuda_unavailable_reason((int)e, count, gp_cuda_have_driver(),
                                   e != cudaSuccess ? cudaGetErrorString(e) : "", why, sizeof why);
        gp_err_set(err, GP_EUNSUPPORTED, "%s", why);
        return NULL;
    }
    int devs[GP_CUDA_MAX_DEVICES];
    int ndevs = gp_cuda_devices_parse(opts->devices, opts->device, count, devs, err);
    if (ndevs < 0) return NULL;
    if (opts->streams < 1 || opts->streams > 256) {
        gp_err_set(err, GP_EINVAL, "cuda_streams must be 1..256 (got %d)", opts->streams);
        return NULL;
    }
    gp_sssp_params params = {GP_SSSP_NEARFAR, 0, 0, 0};
    if (opts->sssp_variant && strcmp(opts->sssp_variant, "seed") == 0) {
        params.variant = GP_SSSP_SEED;
    } else if (opts->sssp_variant && strcmp(opts->sssp_variant, "auto") != 0 &&
               strcmp(opts->sssp_variant, "nearfar") != 0) {
        gp_err_set(err, GP_EINVAL, "unknown cuda_variant '%s' (expected auto, nearfar or seed)",
                   opts->sssp_variant);
        return NULL;
    }
    gp_backend *b = calloc(1, sizeof *b);
    cuda_impl *c = calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        gp_err_set(err, GP_ENOMEM, "out of memory creating the CUDA backend");
        return NULL;
    }
    b->ops = &cuda_ops;
    b->impl = c;
    c->device = devs[0];
    c->ndevices = ndevs;
    memcpy(c->devices, devs, sizeof devs);
    c->nslots = opts->streams;
    c->queue_wait_ms = opts->queue_wait_ms;
    c->params = params;
    c->healthy = 1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->freed, &ca);
    pthread_condattr_destroy(&ca);
    c->slots = calloc((size_t)c->nslots, sizeof *c->slots);
    if (!c->slots) {
        gp_err_set(err, GP_ENOMEM, "out of memory creating the CUDA stream pool");
        goto fail;
    }
    struct cudaDeviceProp prop;
    if ((e = cudaSetDevice(c->device)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&prop, c->device)) != cudaSuccess) {
        device_error(e, "opening the GPU", err);
        goto fail;
    }
    if (!prop.cooperativeLaunch) {
        gp_err_set(err, GP_EUNSUPPORTED, "GPU %s cannot launch cooperative kernels", prop.name);
        goto fail;
    }
    for (int i = 1; i < ndevs; i++) {
        struct cudaDeviceProp p2;
        if ((e = cudaGetDeviceProperties(&p2, devs[i])) != cudaSuccess) {
            device_error(e, "opening a GPU of cuda_devices", err);
            goto fail;
        }
        if (!p2.cooperativeLaunch) {
            gp_err_set(err, GP_EUNSUPPORTED, "GPU %d (%s) cannot launch cooperative kernels",
                       devs[i], p2.name);
            goto fail;
        }
    }
    snprintf(c->name, sizeof c->name, "%.127s", prop.name);
    c->mem_total = prop.totalGlobalMem;
    /* each stream's batched runs may use a share of the memory left after graphs: a quarter of
     * the device, split over the pool, at most 4 GiB each */
    uint64_t budget = prop.totalGlobalMem / 4 / (uint64_t)c->nslots;
    if (budget > (4ULL << 30)) budget = 4ULL << 30;
    for (int i = 0; i < c->nslots; i++) {
        if ((e = cudaStreamCreateWithFlags(&c->slots[i].stream, cudaStreamNonBlocking)) !=
            cudaSuccess) {
            device_error(e, "creating the stream pool", err);
            goto fail;
        }
        c->slots[i].ws = gp_sssp_ws_new((void *)c->slots[i].stream, c->nslots, budget, err);
        if (!c->slots[i].ws) goto fail;
    }
    char list[GP_CUDA_MAX_DEVICES * 6 + 1] = "";
    for (int i = 0, o = 0; i < ndevs; i++)
        o += snprintf(list + o, sizeof list - (size_t)o, "%s%d", i ? "," : "", devs[i]);
    GP_LOG(GP_LOG_INFO, "cuda backend: %s, %.1f GiB, %d streams, sssp variant %s, devices %s",
           c->name, (double)c->mem_total / 1073741824.0, c->nslots,
           params.variant == GP_SSSP_SEED ? "seed" : "near-far", list);
    return b;
fail:
    cuda_destroy(b);
    return NULL;
}

int gp_cuda_backend_debug_hold(gp_backend *b, int take, gp_err *err) {
    cuda_impl *c = impl_of(b);
    if (take) {
        slot *s;
        return slot_get(c, &s, err);
    }
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->nslots; i++) {
        if (c->slots[i].busy) {
            c->slots[i].busy = 0;
            pthread_cond_signal(&c->freed);
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return GP_OK;
}

int gp_cuda_backend_inject_fault(gp_backend *b, gp_err *err) {
    cuda_impl *c = impl_of(b);
    slot *s;
    int rc = slot_get(c, &s, err);
    if (rc) return rc;
    rc = gp_cuda_debug_fault(s->ws, err);
    slot_put(c, s, rc);
    return rc;
}
#endif
