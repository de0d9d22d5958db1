/* config.h - `gpath serve` configuration (server/config.c).
 *
 * One declarative table (name, type, default, doc) describes every key; the layers apply in the
 * order defaults < config file (INI, parsed by inih) < environment GPATH_<KEY> < command-line flags.
 * Graphs to load at start come from the file's [graphs] section (NAME = SPEC lines), the env
 * GPATH_GRAPHS ("NAME=SPEC NAME=SPEC") or repeated --graph NAME=SPEC flags; the highest layer that
 * names any graph replaces the lower layers' list. With none anywhere: default = gen:100000.
 */
#ifndef GP_CONFIG_H
#define GP_CONFIG_H

#include "graph/gp.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GP_CONFIG_MAX_GRAPHS 64
#define GP_CONFIG_MAX_KEYS 128

/* Where a value came from (--print-config shows it). */
enum { GP_CONFIG_SRC_DEFAULT = 0, GP_CONFIG_SRC_FILE, GP_CONFIG_SRC_ENV, GP_CONFIG_SRC_FLAG };

typedef struct gp_config_graph {
    char name[65];
    char spec[1024];
} gp_config_graph;

typedef struct gp_config {
    char listen[128];
    long port;
    long threads;
    long accept_threads;
    long engine_threads;
    char backend[16];
    long cuda_device;
    long cuda_streams;
    long cuda_queue_wait_ms;
    char cuda_variant[16];
    char cuda_devices[128];
    long max_body_bytes;
    long max_table_cells;
    long max_binary_table_cells;
    char matrix_job_dir[1024];
    long max_matrix_job_cells;
    long matrix_job_keep_s;
    long matrix_block_cells;
    long matrix_job_block_cells;
    long max_apsp_nodes;
    long max_nearest;
    long max_snap_m;
    long max_connections;
    long connection_timeout_s;
    long request_timeout_ms;
    long shutdown_grace_s;
    char cache_path[1024];
    long cache_budget_mb;
    char admin_token[256];
    char log_level[16];
    long ecmp_max;
    long max_failure_scenarios;
    long max_listed_pairs;
    long max_demands;
    long repair_max_rows;
    /* OSRM API, map page, isochrones (server/osrm/, server/v1/isochrone.c, map.c) */
    long osrm_max_table_size;
    long osrm_max_route_size;
    long osrm_max_trip_size;
    long osrm_max_nearest_size;
    long osrm_default_radius_m;
    long osrm_max_match_size;
    long match_max_radius_m;
    long match_max_candidates;
    long match_max_traces;
    long match_max_batch_points;
    long gpu_match_min_traces;
    char map_page[8];
    long isochrone_max_contours;
    long isochrone_max_points;
    long overview_max_edges;
    long tile_cache_mb; /* vector tiles (server/tilecache.c) */
    long tile_max_features;
    /* HTTP protocol limits, CORS, compression, operator token (server/http/daemon.c) */
    long max_connections_per_ip;
    long connection_reserve;
    long log_requests_per_s;
    long max_buffered_answer_bytes;
    long request_read_timeout_s;
    long max_url_bytes;
    long max_header_bytes;
    long max_discard_bytes;
    char cors_origins[1024];
    long gzip_min_bytes;
    char operator_token[256];
    char cch[8];
    char cch_perfect[8];
    char turn_costs[8];
    long metric_cache_size;
    long cch_spare_max_mb;
    long query_nice;
    long cch_min_nodes;
    long gpu_table_min_cells;
    long cch_max_triangles_per_node;
    char cch_order[8];
    long load_timeout_s;
    long max_graph_bytes;
    long max_graph_nodes;
    long max_graph_arcs;
    long max_concurrent_loads;
    char load_paths[4096];
    char data_dir[1024];
    char load_pg_hosts[1024];
    /* live traffic (server/v1/traffic.c, docs/traffic.md) */
    char traffic_speed_files[4096];
    char traffic_turn_files[4096];
    long traffic_poll_s;
    long traffic_ttl_s;
    char port_file[1024]; /* flag only: write the bound port here */
    int ngraphs;
    gp_config_graph graphs[GP_CONFIG_MAX_GRAPHS];
    /* Provenance, for --print-config (after every value, so comparing configurations up to
     * ngraphs compares values only): GP_CONFIG_SRC_* of each key in table order, of the graph
     * list, and the config file's path. */
    unsigned char key_src[GP_CONFIG_MAX_KEYS];
    unsigned char graphs_src;
    char config_path[1024];
} gp_config;

/* Fills cfg from all layers. argv[0] is "serve". Flags: --key-with-dashes VALUE, --key=VALUE, and
 * the short forms of the table (-p PORT, -b BACKEND, -g NAME=SPEC, -c FILE). Returns GP_OK, or
 * GP_EINVAL with err naming the bad key, value, flag (an unknown one with the closest known flag:
 * "unknown flag --prot; did you mean --port?") or file line. *action is set to 0 (serve), 1
 * (--help asked), 2 (--print-routes), 3 (--print-config). */
int gp_config_load(gp_config *cfg, int argc, char **argv, int *action, gp_err *err);
/* Sets defaults only. */
void gp_config_defaults(gp_config *cfg);
/* Writes cfg as a documented INI file that gpath reads back: every key with its doc, its source
 * ("# source: default", "file PATH", "env GPATH_PORT", "flag --port") and its value; secrets
 * print as <redacted>: a set *_token key as a commented-out line (read back, it stays unset rather
 * than becoming the placeholder), the password of a graph URI in place. */
void gp_config_write(FILE *f, const gp_config *cfg);
/* gp_config_write of the defaults: the documented example (config/gpath.conf.example). */
void gp_config_write_example(FILE *f);
/* The environment of the one-shot commands, read here like every GPATH_* variable: the log level
 * GPATH_LOG_LEVEL (gp_log_level_parse; -1 when unset or unknown) and the progress line interval
 * GPATH_PROGRESS_INTERVAL in seconds (def when unset, or not within [0.001, 3600]). */
int gp_config_env_log_level(void);
double gp_config_env_progress_interval(double def);

/* One flag of `gpath serve`, as its --help shows it (cli/serve.c writes the help). */
typedef struct gp_config_flag {
    const char *name;    /* without the dashes: "port", "print-config" */
    char short_name;     /* 'p' for -p, or 0 */
    const char *arg;     /* value placeholder ("N", "VALUE", "FILE"); NULL: takes no value */
    const char *help;    /* for a key: its doc, default and environment variable */
    const char *example; /* an example value, or NULL */
    int repeat;          /* may be given several times */
} gp_config_flag;
/* The i-th flag of `gpath serve`: every key as --key-with-dashes in table order, then the flags
 * that are not keys (--config, --graph, --port-file, --print-config, --print-routes). Returns 0
 * past the last (or when size < GP_CONFIG_FLAG_BUF). The strings of a key's flag are written into
 * buf, the others are static. */
#define GP_CONFIG_FLAG_BUF (64 + 1024)
int gp_config_flag_at(size_t i, gp_config_flag *f, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
