/* engine.c - the query engine: routes each call to the primary backend (CUDA or CPU) and re-runs it
 * on the CPU backend when the primary cannot answer (see engine.h for the rules).
 *
 * The CPU backend always exists (it is the fallback). With "auto" the CUDA backend is tried and a
 * missing GPU / CPU-only build quietly selects the CPU; with "cuda" that is an error. Once the
 * primary reports a sticky device error (info.healthy == 0) it is marked failed (atomically, a
 * warning logged once) and every later call goes straight to the CPU.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gp_engine *gp_engine_new(const char *backend, int cpu_threads, const gp_cuda_opts *cuda,
                         gp_err *err) {
    if (!backend || !*backend) backend = "auto";
    int want_cuda = 0, need_cuda = 0;
    if (strcmp(backend, "auto") == 0) {
        want_cuda = 1;
    } else if (strcmp(backend, "cuda") == 0) {
        want_cuda = need_cuda = 1;
    } else if (strcmp(backend, "cpu") != 0) {
        gp_err_set(err, GP_EINVAL, "unknown backend '%s' (expected auto, cuda or cpu)", backend);
        return NULL;
    }
    gp_engine *e = calloc(1, sizeof *e);
    if (!e) {
        gp_err_set(err, GP_ENOMEM, "out of memory creating the engine");
        return NULL;
    }
    e->cpu = gp_cpu_backend_new(cpu_threads, err);
    if (!e->cpu) goto fail;
    e->primary = e->cpu;
    if (want_cuda) {
        gp_err cerr;
        gp_err_clear(&cerr);
        gp_backend *g = gp_cuda_backend_new(cuda, &cerr); /* NULL: the backend's defaults */
        if (g) {
            e->primary = g;
        } else if (need_cuda) {
            gp_err_set(err, cerr.code ? cerr.code : GP_EUNSUPPORTED,
                       "--backend cuda: no usable CUDA backend: %s",
                       cerr.msg[0] ? cerr.msg : "unavailable");
            goto fail;
        } else {
            /* quietly: info level, one line, the reason in plain words */
            snprintf(e->cpu_reason, sizeof e->cpu_reason, "%.255s",
                     cerr.msg[0] ? cerr.msg : "no CUDA backend");
            GP_LOG(GP_LOG_INFO, "backend auto: using the CPU: %s", e->cpu_reason);
        }
    }
    return e;
fail:
    gp_engine_free(e);
    return NULL;
}

void gp_engine_free(gp_engine *e) {
    if (!e) return;
    if (e->primary && e->primary != e->cpu) gp_backend_destroy(e->primary);
    gp_backend_destroy(e->cpu);
    free(e);
}

/* The backend to try first for this call. */
static gp_backend *first(gp_engine *e) {
    if (e->primary == e->cpu) return e->cpu;
    if (__atomic_load_n(&e->primary_failed, __ATOMIC_ACQUIRE)) return e->cpu;
    return e->primary;
}

const char *gp_engine_backend(gp_engine *e) {
    return first(e) == e->cpu ? "cpu" : "cuda";
}

void gp_engine_info(gp_engine *e, gp_backend_info *out) {
    gp_backend *b = first(e);
    b->ops->info(b, out);
}

/* Decides whether a failed primary call is re-run on the CPU: GP_EUNSUPPORTED always; a device
 * error only when the backend now reports itself unhealthy (then the primary is retired). */
static int should_fall_back(gp_engine *e, gp_backend *b, int rc, const gp_err *err) {
    if (b == e->cpu || rc == GP_OK) return 0;
    if (rc == GP_EUNSUPPORTED) {
        GP_LOG(GP_LOG_DEBUG, "primary backend: %s; answering on the CPU",
               err && err->msg[0] ? err->msg : "unsupported");
        return 1;
    }
    if (rc == GP_EDEVICE) {
        gp_backend_info in;
        memset(&in, 0, sizeof in);
        b->ops->info(b, &in);
        if (!in.healthy) {
            int expected = 0;
            if (__atomic_compare_exchange_n(&e->primary_failed, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                GP_LOG(GP_LOG_WARN,
                       "backend %s is out of service after a device error (%s); "
                       "all queries now run on the CPU",
                       in.name, err && err->msg[0] ? err->msg : "device error");
            return 1;
        }
    }
    return 0;
}

int gp_engine_attach(gp_engine *e, gp_graph *g, gp_err *err) {
    gp_backend *b = first(e);
    int rc = GP_OK;
    if (b != e->cpu && b->ops->attach) {
        rc = b->ops->attach(b, g, err);
        if (should_fall_back(e, b, rc, err)) {
            gp_err_clear(err);
            rc = GP_OK; /* the CPU answers for this graph */
        }
    }
    /* the CPU backend prepares too (A* bound): it is the fallback for every graph */
    if (rc == GP_OK && e->cpu->ops->attach) rc = e->cpu->ops->attach(e->cpu, g, err);
    return rc;
}

/* Runs CALL on the first backend, then once more on the CPU when should_fall_back says so. */
#define ENGINE_DISPATCH(e, err, CALL)                                                              \
    do {                                                                                           \
        gp_backend *b_ = first(e);                                                                 \
        int rc_ = b_->ops->CALL;                                                                   \
        if (should_fall_back(e, b_, rc_, err)) {                                                   \
            gp_err_clear(err);                                                                     \
            b_ = (e)->cpu;                                                                         \
            rc_ = b_->ops->CALL;                                                                   \
        }                                                                                          \
        return rc_;                                                                                \
    } while (0)

int gp_engine_sssp(gp_engine *e, const gp_graph *g, uint32_t src, uint64_t max_dist,
                   uint64_t *dist, uint32_t *pred, gp_err *err) {
    ENGINE_DISPATCH(e, err, sssp(b_, g, src, max_dist, dist, pred, err));
}

int gp_engine_p2p(gp_engine *e, const gp_graph *g, uint32_t s, uint32_t t, int algo,
                  gp_path *path, gp_err *err) {
    ENGINE_DISPATCH(e, err, p2p(b_, g, s, t, algo, path, err));
}

int gp_engine_table(gp_engine *e, const gp_graph *g, const uint32_t *src, uint32_t ns,
                    const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    ENGINE_DISPATCH(e, err, table(b_, g, src, ns, dst, nt, out, err));
}

int gp_engine_apsp(gp_engine *e, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err) {
    ENGINE_DISPATCH(e, err, apsp(b_, g, dist, next, err));
}
