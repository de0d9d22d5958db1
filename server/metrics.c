/* metrics.c - the service's Prometheus counters and the text exposition of GET /metrics.
 *
 * Also gpath_build_info{version,commit,backend,gpu} (version: the VERSION file via version.h;
 * commit: `git describe --always --dirty` passed by the Makefile as GPATH_COMMIT) and the
 * standard process_* metrics read from /proc at scrape time, as Prometheus client libraries
 * export them.
 *
 * Per route (the table index of server/routes.c; one extra slot for unmatched paths): request
 * counts by HTTP status and a latency histogram. Plus cache hits/misses (storage increments them
 * through gp_metrics_cache), graph (re)loads, named counters other modules add, and gauges read at
 * scrape time (graph sizes, GPU memory). The counters themselves live below, in the transport
 * (server/http/counters.h), which increments them; this file only reads and renders them.
 */
#include "server/metrics.h"

#include "server/http/counters.h"
#include "server/http/http.h"
#include "server/version.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef GPATH_COMMIT
#define GPATH_COMMIT "unknown"
#endif

/* ---- text exposition ---- */
typedef struct buf {
    char *p;
    size_t len, cap;
    int failed;
} buf;

static void bprintf(buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void bprintf(buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* A label value with \\, " and newlines escaped per the exposition format. */
static void label_escape(const char *s, char *out, size_t size) {
    size_t o = 0;
    for (; *s && o + 3 < size; s++) {
        if (*s == '\\' || *s == '"') out[o++] = '\\', out[o++] = *s;
        else if (*s == '\n') out[o++] = '\\', out[o++] = 'n';
        else out[o++] = *s;
    }
    out[o] = '\0';
}

/* process_* metrics from /proc/self (Linux). Each is left out when its source is unreadable. */
static void process_metrics(buf *b) {
    long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    char st[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(st, 1, sizeof st - 1, f) : 0;
    if (f) fclose(f);
    st[n] = '\0';
    const char *p = strrchr(st, ')'); /* the command name may hold spaces */
    unsigned long long utime = 0, stime = 0, start = 0, vsize = 0;
    long long rss = 0;
    int ok = p && tck > 0 &&
             sscanf(p + 2,
                    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d "
                    "%*d %*d %*d %llu %llu %lld",
                    &utime, &stime, &start, &vsize, &rss) == 5;
    if (ok) {
        bprintf(b,
                "# HELP process_cpu_seconds_total Total user and system CPU time spent in "
                "seconds.\n# TYPE process_cpu_seconds_total counter\n"
                "process_cpu_seconds_total %.2f\n",
                (double)(utime + stime) / (double)tck);
        bprintf(b,
                "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
                "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n",
                vsize);
        bprintf(b,
                "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                "# TYPE process_resident_memory_bytes gauge\n"
                "process_resident_memory_bytes %lld\n",
                rss * (long long)page);
        unsigned long long btime = 0;
        FILE *s = fopen("/proc/stat", "r");
        char line[256];
        while (s && fgets(line, sizeof line, s))
            if (sscanf(line, "btime %llu", &btime) == 1) break;
        if (s) fclose(s);
        if (btime)
            bprintf(b,
                    "# HELP process_start_time_seconds Start time of the process since unix "
                    "epoch in seconds.\n# TYPE process_start_time_seconds gauge\n"
                    "process_start_time_seconds %.2f\n",
                    (double)btime + (double)start / (double)tck);
    }
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        long fds = 0;
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') fds++;
        closedir(d);
        bprintf(b,
                "# HELP process_open_fds Number of open file descriptors.\n"
                "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
                fds - 1); /* less the directory's own descriptor */
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        bprintf(b,
                "# HELP process_max_fds Maximum number of open file descriptors.\n"
                "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n",
                rl.rlim_cur == RLIM_INFINITY ? 0ull : (unsigned long long)rl.rlim_cur);
}

static void route_labels(size_t i, char *out, size_t size) {
    if (i < gp_nroutes)
        snprintf(out, size, "method=\"%s\",endpoint=\"%s\"", gp_routes[i].method,
                 gp_routes[i].pattern);
    else snprintf(out, size, "method=\"any\",endpoint=\"unmatched\"");
}

char *gp_metrics_render(size_t *len) {
    buf b = {malloc(65536), 0, 65536, 0};
    if (!b.p) return NULL;
    char lab[300];
    bprintf(&b, "# HELP gpath_http_requests_total HTTP requests answered, by endpoint and status.\n"
                "# TYPE gpath_http_requests_total counter\n");
    for (size_t i = 0; gp_counters_route(0) && i <= gp_nroutes; i++) {
        const gp_route_counts *rc = gp_counters_route(i);
        route_labels(i, lab, sizeof lab);
        for (int s = 0; s < GP_COUNTS_NSTATUS; s++) {
            uint64_t v = gp_count_get(&rc->status[s]);
            if (v)
                bprintf(&b, "gpath_http_requests_total{%s,status=\"%d\"} %llu\n", lab, s,
                        (unsigned long long)v);
        }
    }
    bprintf(&b, "# HELP gpath_http_request_duration_seconds Request latency, first byte in to "
                "last byte out.\n# TYPE gpath_http_request_duration_seconds histogram\n");
    for (size_t i = 0; gp_counters_route(0) && i <= gp_nroutes; i++) {
        const gp_route_counts *rc = gp_counters_route(i);
        uint64_t count = gp_count_get(&rc->count);
        if (!count) continue;
        route_labels(i, lab, sizeof lab);
        uint64_t cum = 0;
        for (size_t k = 0; k <= GP_COUNTS_NBUCKETS; k++) {
            cum += gp_count_get(&rc->bucket[k]);
            if (k < GP_COUNTS_NBUCKETS)
                bprintf(&b, "gpath_http_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", lab,
                        gp_count_buckets[k], (unsigned long long)cum);
            else
                bprintf(&b, "gpath_http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n",
                        lab, (unsigned long long)cum);
        }
        bprintf(&b, "gpath_http_request_duration_seconds_sum{%s} %.6f\n", lab,
                (double)gp_count_get(&rc->sum_us) / 1e6);
        bprintf(&b, "gpath_http_request_duration_seconds_count{%s} %llu\n", lab,
                (unsigned long long)count);
    }
    bprintf(&b,
            "# HELP gpath_cache_hits_total Matrix cache lookups answered from the cache.\n"
            "# TYPE gpath_cache_hits_total counter\ngpath_cache_hits_total %llu\n"
            "# HELP gpath_cache_misses_total Matrix cache lookups that had to compute.\n"
            "# TYPE gpath_cache_misses_total counter\ngpath_cache_misses_total %llu\n",
            (unsigned long long)gp_count_get(&gp_counts.cache_hits),
            (unsigned long long)gp_count_get(&gp_counts.cache_misses));
    bprintf(&b,
            "# HELP gpath_graph_reloads_total Admin graph loads and reloads, by result.\n"
            "# TYPE gpath_graph_reloads_total counter\n"
            "gpath_graph_reloads_total{result=\"ok\"} %llu\n"
            "gpath_graph_reloads_total{result=\"failed\"} %llu\n",
            (unsigned long long)gp_count_get(&gp_counts.reloads_ok),
            (unsigned long long)gp_count_get(&gp_counts.reloads_failed));
    const char *name, *help;
    uint64_t value;
    for (size_t i = 0; gp_counters_named(i, &name, &help, &value); i++)
        bprintf(&b,
                "# HELP gpath_%s_total %s\n# TYPE gpath_%s_total counter\ngpath_%s_total %llu\n",
                name, help ? help : name, name, name, (unsigned long long)value);

    gp_registry *reg = gp_http_registry();
    if (reg) {
        enum { CAP = 256 };
        gp_graph **gs = malloc(sizeof *gs * CAP);
        char(*names)[65] = malloc(sizeof *names * CAP);
        int n = gs && names ? gp_registry_list(reg, gs, names, CAP) : 0;
        bprintf(&b,
                "# HELP gpath_graphs Graphs served.\n# TYPE gpath_graphs gauge\n"
                "gpath_graphs %d\n",
                n);
        bprintf(&b, "# HELP gpath_graph_nodes Nodes of a served graph.\n"
                    "# TYPE gpath_graph_nodes gauge\n");
        for (int i = 0; i < n; i++)
            bprintf(&b, "gpath_graph_nodes{graph=\"%s\"} %u\n", names[i], gs[i]->n);
        bprintf(&b, "# HELP gpath_graph_edges Arcs of a served graph.\n"
                    "# TYPE gpath_graph_edges gauge\n");
        for (int i = 0; i < n; i++)
            bprintf(&b, "gpath_graph_edges{graph=\"%s\"} %u\n", names[i], gs[i]->m);
        bprintf(&b, "# HELP gpath_graph_host_bytes Host memory held by a served graph.\n"
                    "# TYPE gpath_graph_host_bytes gauge\n");
        for (int i = 0; i < n; i++)
            bprintf(&b, "gpath_graph_host_bytes{graph=\"%s\"} %llu\n", names[i],
                    (unsigned long long)gp_graph_memory(gs[i]));
        for (int i = 0; i < n; i++) gp_graph_unref(gs[i]);
        free(gs);
        free(names);
    }
    gp_engine *e = gp_http_engine();
    if (e) {
        gp_backend_info info;
        memset(&info, 0, sizeof info);
        gp_engine_info(e, &info);
        bprintf(&b,
                "# HELP gpath_backend_info The backend answering queries.\n"
                "# TYPE gpath_backend_info gauge\ngpath_backend_info{backend=\"%s\"} 1\n"
                "# HELP gpath_gpu_memory_used_bytes GPU memory in use (0 on the CPU backend).\n"
                "# TYPE gpath_gpu_memory_used_bytes gauge\ngpath_gpu_memory_used_bytes %llu\n"
                "# HELP gpath_gpu_memory_total_bytes GPU memory (0 on the CPU backend).\n"
                "# TYPE gpath_gpu_memory_total_bytes gauge\ngpath_gpu_memory_total_bytes %llu\n"
                "# HELP gpath_backend_healthy 0 after a sticky device error.\n"
                "# TYPE gpath_backend_healthy gauge\ngpath_backend_healthy %d\n",
                gp_engine_backend(e), (unsigned long long)info.mem_used,
                (unsigned long long)info.mem_total, info.healthy);
    }
    {
        char backend[32] = "none", gpu[260] = "none";
        if (e) {
            gp_backend_info info;
            memset(&info, 0, sizeof info);
            gp_engine_info(e, &info);
            label_escape(gp_engine_backend(e), backend, sizeof backend);
            if (strcmp(gp_engine_backend(e), "cuda") == 0 && info.device[0])
                label_escape(info.device, gpu, sizeof gpu);
        }
        char version[64], commit[128];
        label_escape(GPATH_VERSION, version, sizeof version);
        label_escape(GPATH_COMMIT, commit, sizeof commit);
        bprintf(&b,
                "# HELP gpath_build_info The running build: version, git commit, backend and "
                "GPU (none on the CPU backend).\n# TYPE gpath_build_info gauge\n"
                "gpath_build_info{version=\"%s\",commit=\"%s\",backend=\"%s\",gpu=\"%s\"} 1\n",
                version, commit, backend, gpu);
    }
    process_metrics(&b);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
