/* engine.c - the query engine: routes each call to the primary backend (CUDA or CPU) and re-runs it
 * on the CPU backend when the primary cannot answer (see engine.h for the rules).
 *
 * The CPU backend always exists (it is the fallback). With "auto" the CUDA backend is tried and a
 * missing GPU / CPU-only build quietly selects the CPU; with "cuda" that is an error. Once the
 * primary reports a sticky device error (info.healthy == 0) it is marked failed (atomically, a
 * warning logged once) and every later call goes straight to the CPU.
 */
#include "engine/engine.h"

#include "graph/snapshot.h"
#include "graph/osmseg.h"
#include "graph/segidx.h"
#include "engine/cch.h"
#include "engine/snap.h"
#include "graph/turns.h"

#include <pthread.h>
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
    e->cpu_threads = cpu_threads;
    e->cch_mode = GP_CCH_AUTO;
    e->cch_min_nodes = GP_CCH_MIN_NODES_DEFAULT;
    e->cch_perfect = GP_CCH_AUTO;
    e->cch_spare_max = (uint64_t)GP_CCH_SPARE_MAX_MB << 20;
    e->cuda_device = cuda ? cuda->device : 0;
    e->cuda_devices[0] = e->cuda_device;
    e->turn_costs = 1;
    e->cpu = gp_cpu_backend_new(cpu_threads, err);
    if (!e->cpu) goto fail;
    e->primary = e->cpu;
    if (want_cuda) {
        gp_err cerr;
        gp_err_clear(&cerr);
        gp_backend *g = gp_cuda_backend_new(cuda, &cerr); /* NULL: the backend's defaults */
        if (g) {
            e->primary = g;
            gp_backend_info in;
            g->ops->info(g, &in);
            e->ncuda_devices = in.ndevices > 0 ? in.ndevices : 1;
            memcpy(e->cuda_devices, in.devices, sizeof e->cuda_devices);
            if (in.ndevices <= 0) e->cuda_devices[0] = e->cuda_device;
            e->cuda_device = e->cuda_devices[0];
        } else if (need_cuda ||
                   (cerr.code == GP_EINVAL && cuda && cuda->devices && *cuda->devices)) {
            /* a bad cuda_devices list is refused at start-up, also with backend auto */
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

const char *gp_engine_backend(gp_engine *e) { return first(e) == e->cpu ? "cpu" : "cuda"; }

int gp_engine_devices(gp_engine *e) {
    return e && first(e) != e->cpu && e->ncuda_devices > 1 ? e->ncuda_devices : 1;
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

/* "auto" (or NULL), "on", "off" -> GP_CCH_*, -1 for anything else. */
static int cch_mode_of(const char *mode) {
    if (!mode || strcmp(mode, "auto") == 0) return GP_CCH_AUTO;
    if (strcmp(mode, "on") == 0) return GP_CCH_ON;
    if (strcmp(mode, "off") == 0) return GP_CCH_OFF;
    return -1;
}

int gp_engine_set_cch(gp_engine *e, const char *mode, uint32_t min_nodes, uint32_t max_tri_per_node,
                      gp_err *err) {
    int m = cch_mode_of(mode);
    if (m < 0)
        return gp_err_set(err, GP_EINVAL, "unknown cch mode '%s' (expected auto, on or off)", mode);
    e->cch_mode = m;
    e->cch_min_nodes = min_nodes;
    gp_cch_set_max_tri_per_node(max_tri_per_node);
    return GP_OK;
}

void gp_engine_set_cch_spare(gp_engine *e, uint64_t max_mb) { e->cch_spare_max = max_mb << 20; }

int gp_engine_set_cch_perfect(gp_engine *e, const char *mode, gp_err *err) {
    int m = cch_mode_of(mode);
    if (m < 0)
        return gp_err_set(err, GP_EINVAL,
                          "unknown cch_perfect mode '%s' (expected auto, on or off)", mode);
    e->cch_perfect = m;
    return GP_OK;
}

void gp_engine_set_gpu_table_min_cells(gp_engine *e, uint64_t cells) {
    e->gpu_table_min_cells = cells;
}

int gp_engine_set_turn_costs(gp_engine *e, const char *mode, gp_err *err) {
    if (mode && strcmp(mode, "on") == 0) e->turn_costs = 1;
    else if (mode && strcmp(mode, "off") == 0) e->turn_costs = 0;
    else
        return gp_err_set(err, GP_EINVAL, "unknown turn_costs '%s' (expected on or off)",
                          mode ? mode : "");
    return GP_OK;
}

static int attach_from(gp_engine *e, gp_graph *g, const gp_graph *pred, int closes, gp_err *err);

/* Builds g's turn graph (or reweights its base's) and attaches it; GP_OK with g->turns set, or
 * the error. */
static int attach_turns(gp_engine *e, gp_graph *g, const gp_graph *pred, gp_err *err) {
    const gp_turn_costs *tc = gp_turn_costs_find(g->profile);
    if (!tc)
        return gp_err_set(err, GP_EINVAL, "graph %s: no turn costs for profile '%s'", g->source,
                          g->profile);
    double t0 = gp_now();
    const gp_graph *owner = gp_graph_owner(g);
    gp_turns *T = g->base && owner->turns ? gp_turns_reweight(owner->turns, g, err)
                                          : gp_turns_build(g, tc, err);
    if (!T) return err ? err->code : GP_ENOMEM;
    double t1 = gp_now(); /* the rest (order from the snapshot, CCH, device) is the attach */
    /* a snapshot may carry the turn graph's CCH order (gpath import) */
    uint64_t osz = 0;
    const void *ord = gp_snapshot_section(owner, GP_TURNS_CCH_SNAPSHOT_SECTION, &osz);
    /* the flow order reads the turn graph's coordinates (made only for it: 8 bytes a node) */
    if (!ord && gp_cch_order_mode() == GP_CCH_ORDER_FLOW && gp_turns_add_xy(T, g, err) != GP_OK) {
        gp_turns_free(T);
        return err ? err->code : GP_ENOMEM;
    }
    gp_err oerr;
    gp_err_clear(&oerr);
    if (ord && !g->base && gp_cch_order_decode(T->tg, ord, osz, &oerr) != GP_OK)
        GP_LOG(GP_LOG_WARN, "event=cch_order_ignored graph=%s turns=1 reason=\"%s\"", g->version,
               oerr.msg);
    /* the predecessor's turn graph: the CCH customizes from its (engine.h gp_engine_attach_from) */
    const gp_turns *PT = pred && pred != g ? pred->turns : NULL;
    int rc = attach_from(e, T->tg, PT ? PT->tg : NULL, g->closed, err);
    if (rc != GP_OK) {
        gp_turns_free(T);
        return rc;
    }
    const gp_cch *c = T->tg->cch;
    GP_LOG(GP_LOG_INFO,
           "event=turns_ready graph=%s profile=%s road_nodes=%u road_arcs=%u turn_nodes=%u "
           "turn_arcs=%u u_turns=%llu restricted_turns=%llu restriction_nodes=%u "
           "restriction_copies=%u %s_ms=%.1f attach_ms=%.1f cch=%s mib=%.1f",
           g->version, tc->profile, g->n, g->m, T->tg->n, T->tg->m, (unsigned long long)T->u_turns,
           (unsigned long long)T->restr_turns, T->ndups, T->ncopies, g->base ? "reweight" : "build",
           (t1 - t0) * 1e3, (gp_now() - t1) * 1e3, c ? "yes" : "no",
           (double)gp_turns_memory(T) / 1048576.0);
    g->turns = T;
    g->turns_free = gp_turns_free;
    return GP_OK;
}

int gp_engine_set_cch_order(gp_engine *e, const char *order, gp_err *err) {
    (void)e; /* the order is process-wide, as the size guard is */
    int m = gp_cch_order_parse(order);
    if (m < 0)
        return gp_err_set(err, GP_EINVAL, "unknown cch_order '%s' (expected nd, metis or flow)",
                          order);
    gp_cch_set_order(m, 0);
    return GP_OK;
}

static int on_gpu_state(const gp_cch *c) { return gp_cch_gpu_count(c) > 0; }

/* Builds and customizes g's CCH when the policy says so. Failure is not an error of the load: the
 * graph is served by the Dijkstra family (logged). closes: g is a per-request metric (exclude,
 * vehicle limits: graph.h gp_graph.closed) or its turn graph. */
static void attach_cch(gp_engine *e, gp_graph *g, const gp_graph *pred, int closes) {
    /* auto: a turn graph (graph/turns.h) answers every table of its road graph, and the Dijkstra
     * family is 10x+ slower there than its CCH at any size worth one (Liechtenstein's 7k turn
     * nodes: 1000 x 1000 in 4.7 s vs 0.34 s), so it gets one from GP_CCH_TURN_MIN_NODES turn
     * nodes (or cch_min_nodes when lower) */
    uint32_t min = e->cch_min_nodes;
    if (strcmp(g->format, "turns") == 0 && min > GP_CCH_TURN_MIN_NODES) min = GP_CCH_TURN_MIN_NODES;
    if (g->cch || e->cch_mode == GP_CCH_OFF || (e->cch_mode == GP_CCH_AUTO && g->n < min)) return;
    double t0 = gp_now();
    gp_err err;
    gp_err_clear(&err);
    gp_cch *c = NULL;
    /* a snapshot may carry the order (gpath import): then no METIS here */
    uint64_t osz = 0;
    const void *ord = gp_snapshot_section(g, GP_CCH_SNAPSHOT_SECTION, &osz);
    if (ord && gp_cch_order_decode(g, ord, osz, &err) != GP_OK) {
        GP_LOG(GP_LOG_WARN, "event=cch_order_ignored graph=%s reason=\"%s\"", g->version, err.msg);
        gp_err_clear(&err);
    }
    int rc = gp_cch_prepare_from(g, pred, &c, &err);
    double prepare_s =
        gp_now() - t0; /* the topology (cached, or ordered and contracted), the metric */
    double partial_s = 0, gpu_s = 0, cpu_s = 0, t1 = t0;
    const char *gpu_path = "none"; /* delta, diff, full */
    if (rc == GP_OK) {
        int on_gpu = 0, host_done = 0;
        /* a cost change on the GPU: customized on the host from the predecessor (partially) and
         * the device state built from the predecessor's; a large change customizes in full on
         * the device */
        const gp_cch *prev = c->prev;
        /* the host's attempt only for a short known list of changed metric entries (a few
         * links PATCHed): a speed file's (1% of gen:1M's segments, ~20k entries under the
         * partial pass's 0.1% limit) reaches far, and the serial attempt took 67 ms (p50) and
         * gave up before the device pass ran anyway (bench/results/
         * 2026-11-28-NVIDIA-H200-traffic-phases.md, partial=0): such a list goes to the device
         * at once */
        /* nor for a per-request metric: it closes whole classes of roads (motorways, tolls,
         * ferries, every bridge under a height), which reach the top separators; on gen:1M with
         * turn costs the host gave up on each exclude key after 45-48 ms (bench/results/
         * 2026-11-29-NVIDIA-H200-metric-first.md) */
        int try_host = c->mchg_ok && c->nmchg <= c->topo->m / 16384 + 64 && !closes;
        if (first(e) != e->cpu && prev && prev->gpu && try_host) {
            uint32_t *edges = NULL, nedges = 0;
            t1 = gp_now();
            /* a small budget (about 30 ms of one CPU thread on gen:1M turns): a change that
             * reaches further is cheaper as a full pass on the device */
            rc = gp_cch_customize_partial(c, e->cpu_threads,
                                          (c->topo->ntri + c->topo->m) / 128 + 1024, &edges,
                                          &nedges, &err);
            partial_s = gp_now() - t1;
            host_done = rc == GP_OK && c->custom_partial;
            c->prev = NULL; /* tried: when not partial, the full pass follows */
            gpu_path = "none";
            if (host_done) {
                gpu_path = "delta";
                t1 = gp_now();
                on_gpu = gp_cch_gpu_customize_delta(c, prev, edges, nedges, e->cuda_device, &err) ==
                         GP_OK;
                gpu_s = gp_now() - t1;
                if (!on_gpu)
                    GP_LOG(GP_LOG_WARN, "cch: GPU state from the predecessor failed (%s)", err.msg);
                gp_err_clear(&err);
            }
        }
        t1 = gp_now();
        /* too large for the host, or given up: the full pass on the device from prev's device
         * state (the changed metric entries scattered), fetching only what differs from prev's */
        if (rc == GP_OK && !on_gpu && !host_done && prev && prev->gpu && first(e) != e->cpu) {
            on_gpu = gp_cch_gpu_customize_diff(c, prev, e->cuda_device, &err) == GP_OK;
            gpu_path = "diff";
            if (!on_gpu)
                GP_LOG(GP_LOG_DEBUG, "cch: GPU customization with a diff: %s; in full", err.msg);
            gp_err_clear(&err);
        }
        if (rc == GP_OK && !on_gpu && !host_done && first(e) != e->cpu) {
            gpu_path = "full";
            on_gpu = gp_cch_gpu_customize(c, e->cuda_device, &err) == GP_OK;
            if (!on_gpu)
                GP_LOG(GP_LOG_WARN, "cch: GPU customization failed (%s); customizing on the CPU",
                       err.msg);
            gp_err_clear(&err);
        }
        if (!host_done) gpu_s = gp_now() - t1;
        t1 = gp_now();
        if (rc == GP_OK && !on_gpu && !host_done) rc = gp_cch_customize(c, e->cpu_threads, &err);
        cpu_s = gp_now() - t1;
        c->prev = NULL; /* customized: the predecessor may go (a later version may start from c) */
    }
    if (rc != GP_OK) {
        GP_LOG(GP_LOG_WARN, "event=cch_skipped graph=%s reason=\"%s\"", g->version, err.msg);
        gp_cch_free(c);
        return;
    }
    /* every device (cuda_devices): the same metric on the others before the graph answers */
    for (int i = 1; on_gpu_state(c) && i < e->ncuda_devices; i++) {
        if (gp_cch_gpu_replicate(c, e->cuda_devices[i], &err) != GP_OK) {
            GP_LOG(GP_LOG_WARN,
                   "event=cch_replica_skipped graph=%s device=%d reason=\"%s\" (this version "
                   "answers on the other devices)",
                   g->version, e->cuda_devices[i], err.msg);
            gp_err_clear(&err);
        }
    }
    /* perfect customization prunes the query arcs; the basic CCH answers exactly without them:
     * on = before the graph answers, auto = in the background (a failure only logs) */
    if (e->cch_perfect != GP_CCH_OFF &&
        (e->cch_perfect == GP_CCH_ON ? gp_cch_perfect(c, e->cpu_threads, &err)
                                     : gp_cch_perfect_start(c, e->cpu_threads, &err)) != GP_OK) {
        GP_LOG(GP_LOG_WARN, "event=cch_perfect_skipped graph=%s reason=\"%s\"", g->version,
               err.msg);
        gp_err_clear(&err);
    }
    double perfect_start_s = gp_now() - t1 - cpu_s;
    g->cch = c;
    g->cch_free = gp_cch_free;
    /* the next new metric over this topology finds its arrays mapped, as a copy of g's */
    if (c->spare_gone) gp_cch_warm_spare(c->topo, e->cch_spare_max, g);
    int perfect_done = __atomic_load_n(&c->q, __ATOMIC_ACQUIRE) != NULL; /* may run meanwhile */
    gp_cch_gpu_stats gs;
    int on_device = gp_cch_gpu_stats_get(c, &gs) == 0;
    if (on_device && gs.whole) gpu_path = "whole"; /* the diff path, every array fetched */
    GP_LOG(GP_LOG_INFO,
           "event=cch_ready graph=%s nodes=%u cch_edges=%u triangles=%llu triangles_all=%llu "
           "levels=%u topology=%s "
           "order_s=%.3f contract_s=%.3f prepare_s=%.4f customize_s=%.4f on=%s gpu_topology=%s "
           "gpu_attach_s=%.4f gpu_customize_s=%.4f gpu_device_ms=%.2f witnesses_s=%.4f "
           "perfect=%s perfect_s=%.4f total_s=%.3f mib=%.1f",
           g->version, g->n, c->topo->m, (unsigned long long)c->topo->ntri,
           (unsigned long long)c->topo->ntri_all, c->topo->nlevels,
           c->reused_topo ? "reused" : "new", c->reused_topo ? 0.0 : c->topo->order_s,
           c->reused_topo ? 0.0 : c->topo->contract_s, prepare_s, c->custom_s, c->custom_on,
           !on_device       ? "none"
           : gs.topo_shared ? "shared"
                            : "new",
           gs.attach_s, gs.customize_s, gs.device_ms, gs.witnesses_s,
           perfect_done    ? "done"
           : c->perfect_bg ? "background"
                           : "off",
           perfect_done ? c->perfect_s : 0.0, gp_now() - t0, (double)gp_cch_bytes(c) / 1048576.0);
    /* where a cost change's customization went, phase by phase (docs/operators.md) */
    GP_LOG(GP_LOG_DEBUG,
           "event=cch_phases graph=%s prepare_ms=%.1f spare_wait_ms=%.1f listed=%d restore_ms=%.1f "
           "map_ms=%.1f "
           "changed=%lld "
           "partial_ms=%.1f partial=%d gpu_ms=%.1f "
           "gpu_path=%s gpu_spare=%d gpu_edges=%u gpu_state_ms=%.1f "
           "gpu_customize_ms=%.1f gpu_device_ms=%.2f gpu_run_ms=%.1f gpu_count_ms=%.1f "
           "gpu_copy_ms=%.1f "
           "gpu_busy_ms=%.1f gpu_fetch_ms=%.1f witnesses_ms=%.1f cpu_customize_ms=%.1f "
           "perfect_start_ms=%.1f total_ms=%.1f",
           g->version, prepare_s * 1e3, c->spare_wait_s * 1e3, c->listed, c->restore_s * 1e3,
           c->map_s * 1e3, c->mchg_ok ? (long long)c->nmchg : -1LL, partial_s * 1e3,
           c->custom_partial, gpu_s * 1e3, gpu_path, gs.spare, gs.scattered, gs.attach_s * 1e3,
           gs.customize_s * 1e3, (double)gs.device_ms, gs.run_s * 1e3, gs.count_s * 1e3,
           gs.copy_s * 1e3, gs.busy_s * 1e3, gs.fetch_s * 1e3, gs.witnesses_s * 1e3, cpu_s * 1e3,
           perfect_start_s * 1e3, (gp_now() - t0) * 1e3);
}

int gp_engine_attach(gp_engine *e, gp_graph *g, gp_err *err) {
    return gp_engine_attach_from(e, g, NULL, err);
}

void gp_engine_hold_background(const gp_graph *g, int hold) {
    if (!g) return;
    gp_cch_perfect_hold(g->cch, hold);
    const gp_turns *T = g->turns;
    if (T && T->tg) gp_cch_perfect_hold(T->tg->cch, hold);
}

int gp_engine_attach_from(gp_engine *e, gp_graph *g, const gp_graph *pred, gp_err *err) {
    return attach_from(e, g, pred, g->closed, err);
}

static int attach_from(gp_engine *e, gp_graph *g, const gp_graph *pred, int closes, gp_err *err) {
    gp_backend *b = first(e);
    int rc = GP_OK;
    /* a reweighted version of a graph already on the device (a cost change) gets its device copy
     * on first use (near-far SSSP; the CCH answers routes, PHAST and tables without it): not on
     * the path from the cost change to its first answer */
    int lazy = g->base && g->base->dev;
    double t0 = gp_now(), t1, t2, t3;
    if (b != e->cpu && b->ops->attach && !lazy) {
        rc = b->ops->attach(b, g, err);
        if (should_fall_back(e, b, rc, err)) {
            gp_err_clear(err);
            rc = GP_OK; /* the CPU answers for this graph */
        }
    }
    /* the CPU backend prepares too (A* bound): it is the fallback for every graph */
    t1 = gp_now();
    if (rc == GP_OK && e->cpu->ops->attach) rc = e->cpu->ops->attach(e->cpu, g, err);
    t2 = gp_now();
    /* turn costs: the turn graph answers every query, the road graph needs no CCH of its own */
    if (rc == GP_OK && e->turn_costs && g->profile[0] && !g->turns)
        rc = attach_turns(e, g, pred, err);
    if (rc == GP_OK && !e->turn_costs && g->restr && !g->base)
        GP_LOG(GP_LOG_WARN,
               "event=turn_restrictions_ignored graph=%s reason=\"loaded for turn costs (its turn "
               "restrictions live in the turn graph); turn_costs=off routes without them: load "
               "or import it with turn costs off\"",
               g->version);
    if (rc == GP_OK && !g->turns) attach_cch(e, g, pred, closes);
    t3 = gp_now();
    /* the segment index of coordinate queries, now rather than at the first one */
    gp_err serr;
    gp_err_clear(&serr);
    if (rc == GP_OK && gp_segidx_prepare(g, &serr) != GP_OK)
        GP_LOG(GP_LOG_WARN, "event=snap_index_deferred graph=%s reason=\"%s\"", g->version,
               serr.msg);
    /* the OSM-segment index of live traffic (graph/osmseg.h) for a road graph of travel times,
     * now rather than on the first speed file (440 ms under load on gen:1M) */
    gp_err_clear(&serr);
    if (rc == GP_OK && !g->base && g->profile[0] && g->unit_s > 0 && !gp_osmseg_get(g, &serr))
        GP_LOG(GP_LOG_WARN, "event=osmseg_index_deferred graph=%s reason=\"%s\"", g->version,
               serr.msg);
    GP_LOG(GP_LOG_DEBUG,
           "event=attach graph=%s device_ms=%.1f cpu_ms=%.1f cch_ms=%.1f snap_ms=%.1f", g->version,
           (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (gp_now() - t3) * 1e3);
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

/* The CCH answers: GPU when it holds the customized CCH and the primary is healthy. */
static int cch_gpu(gp_engine *e, const gp_cch *c) { return c->gpu && first(e) != e->cpu; }

int gp_engine_sssp(gp_engine *e, const gp_graph *g, uint32_t src, uint64_t max_dist, uint64_t *dist,
                   uint32_t *pred, gp_err *err) {
    if (g->turns && src < g->n) { /* turn costs: through the turn graph (engine/snap.c) */
        gp_snap s;
        gp_snap_at_node(g, src, &s);
        return gp_engine_sssp_snap(e, g, &s, max_dist, dist, pred, err);
    }
    const gp_cch *c = g->cch;
    /* PHAST touches every node: with a distance limit the pruned Dijkstra family is cheaper */
    if (c && src < g->n && max_dist == GP_INF) {
        int rc = GP_EUNSUPPORTED;
        if (cch_gpu(e, c)) {
            /* round-robin over the devices holding this version */
            int nd = gp_cch_gpu_count(c);
            unsigned k = nd > 1 ? __atomic_fetch_add(&e->rr, 1, __ATOMIC_RELAXED) % (unsigned)nd
                                : 0;
            rc = gp_cch_gpu_sssp_on(c, (int)k, &src, 1, dist, err);
        }
        if (rc != GP_OK && rc != GP_ETIMEOUT) {
            gp_err_clear(err);
            rc = gp_cch_sssp(c, src, max_dist, dist, err);
        }
        if (rc == GP_OK && pred) rc = gp_cch_pred(g, src, dist, pred, err);
        return rc;
    }
    ENGINE_DISPATCH(e, err, sssp(b_, g, src, max_dist, dist, pred, err));
}

int gp_engine_p2p(gp_engine *e, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
                  gp_err *err) {
    if (g->turns && s < g->n && t < g->n) {
        gp_snap a, b;
        gp_snap_route r;
        gp_snap_at_node(g, s, &a);
        gp_snap_at_node(g, t, &b);
        memset(path, 0, sizeof *path);
        int rc = gp_engine_route_snap(e, g, &a, &b, algo, &r, err);
        if (rc) return rc;
        path->dist = r.dist;
        if (s == t) {
            path->dist = 0;
            path->nodes = malloc(sizeof *path->nodes);
            if (!path->nodes) return gp_err_set(err, GP_ENOMEM, "out of memory");
            path->nodes[0] = s;
            path->len = 1;
        } else if (r.dist != GP_INF) {
            path->nodes = r.path.nodes;
            path->len = r.path.len;
            r.path.nodes = NULL;
            r.path.len = 0;
        }
        path->settled = r.path.settled;
        gp_snap_route_free(&r);
        return GP_OK;
    }
    if (algo == GP_P2P_AUTO && g->cch) return gp_cch_p2p(g->cch, s, t, path, err);
    ENGINE_DISPATCH(e, err, p2p(b_, g, s, t, algo, path, err));
}

/* One device's share of a table: rows [r0, r0 + k) on device state i (its own host thread). */
typedef struct table_share {
    const gp_cch *c;
    int i;
    uint32_t r0, k;
    const void *job; /* table_job or cells_job */
    int (*run)(struct table_share *s);
    double deadline;
    int rc;
    gp_err err;
    gp_dcch_fix *fix; /* cells: the share's cells for the host */
    uint32_t nfix;
} table_share;

static void *table_share_main(void *arg) {
    table_share *s = arg;
    gp_deadline_set(s->deadline);
    gp_err_clear(&s->err);
    s->rc = s->run(s);
    return NULL;
}

/* The rows of a table split into contiguous shares, one per device holding c and one host thread
 * each (the caller's runs the first), each writing its rows in place; the first error in row
 * order is the answer. */
static int table_shares(const gp_cch *c, uint32_t ns, const void *job, int (*run)(table_share *s),
                        table_share *sh, int nd, gp_err *err) {
    pthread_t th[GP_CUDA_MAX_DEVICES];
    int started[GP_CUDA_MAX_DEVICES] = {0};
    double deadline = gp_deadline_get();
    for (int i = 0; i < nd; i++) {
        uint32_t r0 = (uint32_t)((uint64_t)ns * (uint64_t)i / (uint64_t)nd);
        uint32_t r1 = (uint32_t)((uint64_t)ns * (uint64_t)(i + 1) / (uint64_t)nd);
        sh[i] = (table_share){
            .c = c, .i = i, .r0 = r0, .k = r1 - r0, .job = job, .run = run, .deadline = deadline};
    }
    for (int i = 1; i < nd; i++)
        started[i] = pthread_create(&th[i], NULL, table_share_main, &sh[i]) == 0;
    table_share_main(&sh[0]);
    for (int i = 1; i < nd; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else table_share_main(&sh[i]); /* no thread to be had: on this one, in turn */
    }
    for (int i = 0; i < nd; i++) {
        if (sh[i].rc != GP_OK) {
            if (err) *err = sh[i].err;
            return sh[i].rc;
        }
    }
    return GP_OK;
}

static int table_devices_count(const gp_cch *c, uint32_t ns) {
    int nd = gp_cch_gpu_count(c);
    if (nd > GP_CUDA_MAX_DEVICES) nd = GP_CUDA_MAX_DEVICES;
    if ((uint32_t)nd > ns) nd = (int)ns;
    return nd;
}

typedef struct table_job {
    const uint32_t *src, *dst;
    uint32_t nt;
    uint64_t *out;
} table_job;

static int table_share_run(table_share *s) {
    const table_job *j = s->job;
    return gp_cch_gpu_table_on(s->c, s->i, j->src + s->r0, s->k, j->dst, j->nt,
                               j->out + (size_t)s->r0 * j->nt, &s->err);
}

/* The GPU table on every device holding c (table_shares). One device (or a single row):
 * gp_cch_gpu_table as before. */
static int table_devices(const gp_cch *c, const uint32_t *src, uint32_t ns, const uint32_t *dst,
                         uint32_t nt, uint64_t *out, gp_err *err) {
    int nd = table_devices_count(c, ns);
    if (nd <= 1) return gp_cch_gpu_table(c, src, ns, dst, nt, out, err);
    table_share sh[GP_CUDA_MAX_DEVICES];
    table_job j = {src, dst, nt, out};
    return table_shares(c, ns, &j, table_share_run, sh, nd, err);
}

typedef struct cells_job {
    const uint32_t *dst;
    uint32_t kt;
    uint64_t key, closed_from;
    const gp_dcch_ends *rows, *cols;
    double scale;
    void *out; /* float32 cells (scale > 0) or uint64 ones */
} cells_job;

static int cells_share_run(table_share *s) {
    const cells_job *j = s->job;
    gp_dcch_ends part = gp_dcch_ends_part(j->rows, s->r0, s->k);
    return gp_cch_gpu_cells_on(
        s->c, s->i, j->dst, j->kt, j->key, &part, j->cols, j->closed_from, j->scale,
        (unsigned char *)j->out + (size_t)s->r0 * j->cols->n * gp_dcch_cell_bytes(j->scale),
        &s->fix, &s->nfix, &s->err);
}

int gp_engine_table_cells(gp_engine *e, const gp_graph *tg, const uint32_t *dst, uint32_t kt,
                          uint64_t key, const gp_dcch_ends *rows, const gp_dcch_ends *cols,
                          uint64_t closed_from, double scale, void *out, gp_dcch_fix **fix,
                          uint32_t *nfix, gp_err *err) {
    const gp_cch *c = tg->cch;
    *fix = NULL;
    *nfix = 0;
    if (!c || !cch_gpu(e, c) || (uint64_t)rows->n * cols->n < e->gpu_table_min_cells)
        return GP_EUNSUPPORTED;
    int nd = table_devices_count(c, rows->n);
    if (nd < 1) nd = 1;
    table_share sh[GP_CUDA_MAX_DEVICES];
    cells_job j = {dst, kt, key, closed_from, rows, cols, scale, out};
    int rc = table_shares(c, rows->n, &j, cells_share_run, sh, nd, err);
    size_t n = 0;
    for (int i = 0; i < nd; i++) n += sh[i].nfix;
    gp_dcch_fix *all = rc == GP_OK && n ? malloc(sizeof *all * n) : NULL;
    if (rc == GP_OK && n && !all) rc = gp_err_set(err, GP_ENOMEM, "out of memory for table cells");
    for (int i = 0, at = 0; i < nd; i++) {
        for (uint32_t x = 0; all && x < sh[i].nfix; x++)
            all[at++] = (gp_dcch_fix){sh[i].fix[x].cell + (uint64_t)sh[i].r0 * cols->n,
                                      sh[i].fix[x].partial};
        free(sh[i].fix);
    }
    if (rc == GP_OK) {
        *fix = all;
        *nfix = (uint32_t)n;
    }
    return rc;
}

int gp_engine_table(gp_engine *e, const gp_graph *g, const uint32_t *src, uint32_t ns,
                    const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err) {
    if (g->turns) {
        gp_snap *ss = malloc(sizeof *ss * (ns ? ns : 1)), *ts = malloc(sizeof *ts * (nt ? nt : 1));
        int rc = ss && ts ? GP_OK : gp_err_set(err, GP_ENOMEM, "out of memory");
        for (uint32_t i = 0; !rc && i < ns; i++) gp_snap_at_node(g, src[i], &ss[i]);
        for (uint32_t j = 0; !rc && j < nt; j++) gp_snap_at_node(g, dst[j], &ts[j]);
        if (!rc) rc = gp_engine_table_snap(e, g, ss, ns, ts, nt, out, err);
        free(ss);
        free(ts);
        return rc;
    }
    const gp_cch *c = g->cch;
    if (c) {
        int rc = GP_EUNSUPPORTED;
        if (cch_gpu(e, c) && (uint64_t)ns * nt >= e->gpu_table_min_cells)
            rc = table_devices(c, src, ns, dst, nt, out, err);
        if (rc != GP_OK && rc != GP_ETIMEOUT && rc != GP_EINVAL) {
            gp_err_clear(err);
            rc = gp_cch_table(c, src, ns, dst, nt, e->cpu_threads, out, err);
        }
        return rc;
    }
    ENGINE_DISPATCH(e, err, table(b_, g, src, ns, dst, nt, out, err));
}

int gp_engine_apsp(gp_engine *e, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err) {
    ENGINE_DISPATCH(e, err, apsp(b_, g, dist, next, err));
}
