/* serve.c - `gpath serve`: reads the configuration, starts the engine and the HTTP daemon, loads
 * the configured graphs in a background thread (GET /ready answers 503 until they are in; one that
 * cannot be read stops serve with exit status 1 and a message naming it, but a PostgreSQL source
 * stays retried on NOTIFY), and on SIGTERM/SIGINT stops gracefully: stop accepting, let requests in flight finish (up to
 * shutdown_grace_s), stop the daemon, free graphs and the engine (GPU memory), exit 0.
 */
#include "server/serve.h"

#include "engine/metric.h"
#include "graph/parallel.h"
#include "server/config.h"
#include "server/cache.h"
#include "server/v1/mjobs.h"
#include "server/v1/netops.h"
#include "server/v1/planning.h"
#include "server/v1/repair.h"
#include "server/v1/traffic.h"
#include "server/http/http.h"
#include "server/metrics.h"
#include "server/registry.h"
#include "storage/pg.h"
#include "storage/source.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;
/* A start-up graph from a file (or any source but PostgreSQL, whose loads are retried on NOTIFY)
 * could not be read (missing, unreadable, malformed): serve stops with exit status 1 rather than
 * run without it. */
static volatile sig_atomic_t startup_failed;

/* Set by the start-up loader thread when it has returned (shutdown waits for it, boundedly). */
static int loader_done;

/* After the shutdown grace and the unwinding of cancelled queries, how long the rest of the stop
 * may take before the process exits regardless (s). */
#define HARD_STOP_EXTRA_S 7.0
/* How long shutdown waits for a start-up load to give up once the daemon has stopped (s): the
 * load is cancelled at SIGTERM, but building a hierarchy (order, contraction) has no cancel
 * point, so the process does not wait for it. */
#define LOADER_WAIT_S 1.0
/* Threads that build new metrics and cost changes for the request threads (graph/parallel.h
 * gp_runner_run): two, so that a cost change does not hold up a new exclude key. */
#define RUNNERS 2

static double hard_stop_at;
static int hard_stop_code;
static int shutdown_finished;

/* Ends the process when the stop overruns shutdown_grace_s plus the unwinding time: work that has
 * no cancel point (a hierarchy being built for a reload request, a GPU kernel) does not hold the
 * process for as long as it runs. */
static void *hard_stop_watch(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&shutdown_finished, __ATOMIC_ACQUIRE) && gp_now() < hard_stop_at) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (__atomic_load_n(&shutdown_finished, __ATOMIC_ACQUIRE)) return NULL;
    GP_LOG(GP_LOG_WARN,
           "event=shutdown_forced reason=\"work without a cancel point outlived "
           "shutdown_grace_s and the unwinding time\" code=%d",
           hard_stop_code);
    fflush(stderr);
    fflush(stdout);
    _exit(hard_stop_code);
}

/* Waits up to s seconds for the start-up loader thread to return; 1 when it has. */
static int loader_wait(double s) {
    double t0 = gp_now();
    while (!__atomic_load_n(&loader_done, __ATOMIC_ACQUIRE) && gp_now() - t0 < s) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return __atomic_load_n(&loader_done, __ATOMIC_ACQUIRE);
}

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1; /* the main loop does the rest */
}

typedef struct loader {
    const gp_config *cfg;
    gp_registry *reg;
    int port; /* the bound port, for the address printed once the graphs are in */
} loader;

/* Prints the address to open once the start-up graphs are in: a loopback address as it is, any
 * other as localhost (the machine's own browser), an IPv6 one in brackets. */
static void print_url(const gp_config *cfg, int port) {
    const char *h = cfg->listen;
    int any = !h[0] || !strcmp(h, "0.0.0.0") || !strcmp(h, "::");
    int v6 = !any && strchr(h, ':');
    fprintf(stderr, "gpath: serving on http://%s%s%s:%d/ (the map page; /docs: the API)%s\n",
            v6 ? "[" : "", any ? "localhost" : h, v6 ? "]" : "", port,
            any ? ", on every interface" : "");
}

static void *load_graphs(void *arg) {
    loader *l = arg;
    for (int i = 0; i < l->cfg->ngraphs && !stop_requested; i++) {
        gp_graph_source src;
        memset(&src, 0, sizeof src);
        snprintf(src.spec, sizeof src.spec, "%s", l->cfg->graphs[i].spec);
        src.trusted = 1; /* the operator's own configuration */
        gp_err err;
        gp_err_clear(&err);
        int rc = gp_registry_load(l->reg, l->cfg->graphs[i].name, &src, NULL, &err);
        if (rc)
            GP_LOG(GP_LOG_ERROR, "event=startup_load_failed graph=%s error=\"%s\"",
                   l->cfg->graphs[i].name, err.msg);
        /* unreadable: not a source that stalled past load_timeout_s or found the loaders busy
         * (an admin reload may bring those in; /ready names them meanwhile) */
        if (rc && rc != GP_ETIMEOUT && rc != GP_EBUSY && !stop_requested &&
            !gp_spec_is_pg(src.spec)) {
            char shown[1024];
            gp_spec_redact(src.spec, shown, sizeof shown);
            fprintf(stderr, "gpath serve: graph '%s' cannot be read from %s: %s\n",
                    l->cfg->graphs[i].name, shown, err.msg);
            startup_failed = 1;
            stop_requested = 1;
            break;
        }
        if (rc) gp_srv_storage_note_failed(l->cfg->graphs[i].name); /* a NOTIFY may retry it */
        gp_http_startup_graph(l->cfg->graphs[i].name, rc == GP_OK, err.msg);
    }
    gp_http_startup_end();
    if (!stop_requested) {
        GP_LOG(GP_LOG_INFO, "event=startup_done");
        print_url(l->cfg, l->port);
    }
    __atomic_store_n(&loader_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Appends s to the sep-separated list in out unless it is there already. */
static void list_add(char *out, size_t cap, char sep, const char *s) {
    size_t n = strlen(out), l = strlen(s);
    for (const char *p = out; *p;) {
        size_t k = strcspn(p, (char[]){sep, 0});
        if (k == l && strncmp(p, s, l) == 0) return;
        p += k;
        if (*p) p++;
    }
    if (n + l + 2 <= cap) snprintf(out + n, cap - n, "%s%s", n ? (char[]){sep, 0} : "", s);
}

/* The load limits and allow-lists from the configuration: load_paths defaults to the directories
 * of the configured file graphs plus data_dir, load_pg_hosts to the configured databases' hosts. */
static void registry_limits(const gp_config *cfg, gp_registry_limits *l) {
    memset(l, 0, sizeof *l);
    l->load_timeout_s = (double)cfg->load_timeout_s;
    l->max_bytes = (uint64_t)cfg->max_graph_bytes;
    l->max_nodes = (uint64_t)cfg->max_graph_nodes;
    l->max_arcs = (uint64_t)cfg->max_graph_arcs;
    l->max_loads = (int)cfg->max_concurrent_loads;
    snprintf(l->allow_dirs, sizeof l->allow_dirs, "%s", cfg->load_paths);
    snprintf(l->allow_pg_hosts, sizeof l->allow_pg_hosts, "%s", cfg->load_pg_hosts);
    for (int i = 0; i < cfg->ngraphs; i++) {
        const char *spec = cfg->graphs[i].spec, *path = gp_spec_path(spec);
        if (!cfg->load_paths[0] && path) {
            char dir[1024];
            const char *slash = strrchr(path, '/');
            if (!slash) snprintf(dir, sizeof dir, ".");
            else if (slash == path) snprintf(dir, sizeof dir, "/");
            else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
            list_add(l->allow_dirs, sizeof l->allow_dirs, ':', dir);
        }
        if (!cfg->load_pg_hosts[0] && gp_spec_is_pg(spec))
            gp_pg_spec_hosts(spec, l->allow_pg_hosts, sizeof l->allow_pg_hosts);
    }
    if (!cfg->load_paths[0] && cfg->data_dir[0])
        list_add(l->allow_dirs, sizeof l->allow_dirs, ':', cfg->data_dir);
}

static int write_port_file(const char *path, unsigned port) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "%u\n", port);
    if (fclose(f) != 0) return -1;
    return rename(tmp, path); /* readers never see a half-written file */
}

int gp_serve_main(int argc, char **argv, void (*usage)(FILE *f)) {
    gp_config *cfg = malloc(sizeof *cfg);
    if (!cfg) return 1;
    gp_err err;
    gp_err_clear(&err);
    int action = 0, code = 1;
    gp_engine *engine = NULL;
    gp_registry *reg = NULL;
    gp_http *http = NULL;
    pthread_t th;
    int th_started = 0;
    if (gp_config_load(cfg, argc, argv, &action, &err)) {
        fprintf(stderr, "gpath serve: %s\n", err.msg);
        code = 2;
        goto out;
    }
    if (action == 1) {
        if (usage) usage(stdout);
        code = 0;
        goto out;
    }
    if (action == 2) {
        for (size_t i = 0; i < gp_nroutes; i++)
            printf("%s %s\n", gp_routes[i].method, gp_routes[i].pattern);
        code = 0;
        goto out;
    }
    if (action == 3) {
        gp_config_write(stdout, cfg);
        code = 0;
        goto out;
    }
    gp_log_level = gp_log_level_parse(cfg->log_level);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    gp_cuda_opts cuda = {(int)cfg->cuda_device, (int)cfg->cuda_streams,
                         (int)cfg->cuda_queue_wait_ms, cfg->cuda_variant, cfg->cuda_devices};
    engine = gp_engine_new(cfg->backend, (int)cfg->engine_threads, &cuda, &err);
    if (!engine) {
        GP_LOG(GP_LOG_ERROR, "event=engine_failed error=\"%s\"", err.msg);
        goto out;
    }
    if (gp_engine_set_cch(engine, cfg->cch, (uint32_t)cfg->cch_min_nodes,
                          (uint32_t)cfg->cch_max_triangles_per_node, &err) != GP_OK ||
        gp_engine_set_cch_perfect(engine, cfg->cch_perfect, &err) != GP_OK ||
        gp_engine_set_turn_costs(engine, cfg->turn_costs, &err) != GP_OK ||
        gp_engine_set_cch_order(engine, cfg->cch_order, &err) != GP_OK) {
        GP_LOG(GP_LOG_ERROR, "event=config_failed error=\"%s\"", err.msg);
        goto out;
    }
    gp_engine_set_gpu_table_min_cells(engine, (uint64_t)cfg->gpu_table_min_cells);
    if (engine->cpu_reason[0])
        GP_LOG(GP_LOG_INFO, "event=engine backend=%s reason=\"%s\"", gp_engine_backend(engine),
               engine->cpu_reason);
    else GP_LOG(GP_LOG_INFO, "event=engine backend=%s", gp_engine_backend(engine));
    gp_metric_cache_size((unsigned)cfg->metric_cache_size);
    gp_engine_set_cch_spare(engine, (uint64_t)cfg->cch_spare_max_mb);
    reg = gp_registry_new(engine);
    if (!reg) goto out;
    {
        gp_registry_limits lim;
        registry_limits(cfg, &lim);
        gp_registry_set_limits(reg, &lim);
        GP_LOG(GP_LOG_INFO, "event=load_limits load_paths=\"%s\" load_pg_hosts=\"%s\"",
               lim.allow_dirs, lim.allow_pg_hosts);
    }
    if (gp_srv_storage_start(cfg, reg, &err)) { /* cache + PostgreSQL reload listeners */
        GP_LOG(GP_LOG_ERROR, "event=storage_failed error=\"%s\"", err.msg);
        goto out;
    }
    /* new metrics and cost changes at this thread's priority, the requests at query_nice */
    if (cfg->query_nice > 0 && gp_runner_start(RUNNERS) != 0)
        GP_LOG(GP_LOG_WARN, "event=runners_failed reason=\"no thread could be started: new "
                            "metrics and cost changes run at query_nice\"");
    gp_http_startup_begin(cfg);
    http = gp_http_start(cfg, engine, reg, &err);
    if (!http) {
        GP_LOG(GP_LOG_ERROR, "event=listen_failed error=\"%s\"", err.msg);
        goto out;
    }
    if (cfg->port_file[0] && write_port_file(cfg->port_file, gp_http_port(http))) {
        GP_LOG(GP_LOG_ERROR, "event=port_file_failed path=%s", cfg->port_file);
        goto out;
    }
    if (gp_srv_traffic_start(cfg, &err)) { /* expiry, traffic files, reapply after reloads */
        GP_LOG(GP_LOG_ERROR, "event=traffic_failed error=\"%s\"", err.msg);
        goto out;
    }
    loader ld = {cfg, reg, gp_http_port(http)};
    if (pthread_create(&th, NULL, load_graphs, &ld) != 0) {
        GP_LOG(GP_LOG_ERROR, "event=thread_failed");
        goto out;
    }
    th_started = 1;
    while (!stop_requested) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    GP_LOG(GP_LOG_INFO, "event=shutdown");
    code = startup_failed ? 1 : 0;
    {
        pthread_t hs;
        hard_stop_code = code;
        hard_stop_at = gp_now() + (double)cfg->shutdown_grace_s + HARD_STOP_EXTRA_S;
        if (pthread_create(&hs, NULL, hard_stop_watch, NULL) == 0) pthread_detach(hs);
    }
out:
    if (reg) gp_registry_cancel(reg); /* loads in progress give up: shutdown never waits on one */
    gp_srv_traffic_stop(); /* its thread, then its state (while the registry is reachable) */
    gp_http_stop(http, cfg->shutdown_grace_s);
    if (th_started && !loader_wait(LOADER_WAIT_S)) {
        /* the start-up load is past its last cancel point (building the hierarchy): its result
         * would be thrown away, so the process ends now rather than when it is built; the
         * cache's WAL and the matrix jobs' files survive an exit at any point */
        GP_LOG(GP_LOG_INFO, "event=shutdown_load_abandoned code=%d", code);
        gp_srv_storage_stop();
        GP_LOG(GP_LOG_INFO, "event=stopped code=%d", code);
        fflush(stderr);
        fflush(stdout);
        _exit(code);
    }
    if (th_started) pthread_join(th, NULL);
    /* failure analyses use the routing tables and the engine */
    gp_srv_planning_stop();
    gp_srv_repair_stop();
    gp_srv_netops_stop(); /* job worker, cached routing tables (before the engine goes) */
    gp_srv_mjobs_stop();  /* the matrix job worker (a running job is recorded failed) */
    gp_runner_stop();
    gp_srv_storage_stop();
    gp_metric_cache_clear(); /* the metrics' device state goes before the engine */
    gp_registry_free(reg);
    gp_engine_free(engine);
    gp_metrics_free();
    __atomic_store_n(&shutdown_finished, 1, __ATOMIC_RELEASE);
    if (http) GP_LOG(GP_LOG_INFO, "event=stopped code=%d", code);
    free(cfg);
    return code;
}
