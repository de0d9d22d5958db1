/* config.c - `gpath serve` configuration: one declarative table of keys (name, type, default,
 * bounds, doc; a few keys also have a short flag) drives defaults, the INI file (inih), GPATH_* environment variables,
 * --key flags, `gpath serve --help` (the same option rows as every gpath subcommand,
 * cli/args.h), typo suggestions for unknown flags, and `--print-config`: the effective
 * configuration with each value's source, which with nothing set is the documented example file
 * (config/gpath.conf.example).
 */
#include "server/config.h"

#include "engine/backend.h"
#include "server/api/suggest.h"
#include "server/registry.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { CT_STR, CT_LONG };

typedef struct gp_config_key {
    const char *name;
    int type;
    size_t off;
    size_t size; /* CT_STR: buffer size */
    const char *def;
    long min, max; /* CT_LONG bounds */
    const char *doc;
} gp_config_key;

#define S(field) CT_STR, offsetof(gp_config, field), sizeof(((gp_config *)0)->field)
#define L(field) CT_LONG, offsetof(gp_config, field), 0

/* The one table. Docs are written as comment lines of the example file. */
static const gp_config_key keys[] = {
    {"listen", S(listen), "0.0.0.0", 0, 0,
     "Address to listen on, IPv4 or IPv6 (127.0.0.1 or ::1: loopback only; :: all IPv6)."},
    {"port", L(port), "8080", 0, 65535,
     "TCP port; 0 picks a free ephemeral port (see --port-file)."},
    {"threads", L(threads), "0", 0, 1024,
     "HTTP worker threads (libmicrohttpd thread pool); 0 = max(8, 2 x online CPUs)."},
    {"accept_threads", L(accept_threads), "0", 0, 64,
     "Threads that accept connections and check each one's first request head before the HTTP "
     "workers take it; 0 = a quarter of the online CPUs, 1 to 4."},
    {"engine_threads", L(engine_threads), "0", 0, 1024,
     "CPU backend worker threads; 0 = number of online CPUs."},
    {"backend", S(backend), "auto", 0, 0,
     "Query backend: auto (CUDA when a GPU is usable, else CPU), cuda, or cpu."},
    {"cuda_device", L(cuda_device), "0", 0, 64, "CUDA device ordinal."},
    {"cuda_streams", L(cuda_streams), "8", 1, 256,
     "CUDA stream-pool size: GPU requests in flight at once."},
    {"cuda_queue_wait_ms", L(cuda_queue_wait_ms), "2000", 0, 600000,
     "How long a request waits for a free CUDA stream before 503 Busy."},
    {"cuda_variant", S(cuda_variant), "auto", 0, 0,
     "GPU SSSP kernel variant: auto (fastest) or seed (Martin et al. 2009)."},
    {"cuda_devices", S(cuda_devices), "", 0, 0,
     "GPUs used: empty = cuda_device alone, all, or ordinals (0,1); tables split their rows "
     "over them, trees take turns (docs/gpu.md). A missing device is refused at start-up."},
    {"max_body_bytes", L(max_body_bytes), "1048576", 1024, 1073741824,
     "Largest request body accepted; larger ones get 413 TooBig."},
    {"max_table_cells", L(max_table_cells), "1000000", 1, 1000000000,
     "Largest distance table (sources x targets) of POST /v1/graphs/{graph}/table; 413 past it."},
    {"max_binary_table_cells", L(max_binary_table_cells), "100000000", 1, 1000000000000,
     "Largest table answered as a NumPy .npy array (Accept: application/x-npy) on /v1 and "
     "/table/v1: it is streamed in blocks, so memory does not grow with it; 413 / TooBig past it."},
    {"matrix_block_cells", L(matrix_block_cells), "4194304", 1024, 1073741824,
     "Cells computed and sent per block of a streamed .npy table, per GPU of cuda_devices (the "
     "server holds a few blocks: 4 to 12 bytes a cell each)."},
    {"matrix_job_block_cells", L(matrix_job_block_cells), "33554432", 1024, 1073741824,
     "Cells computed per block of a matrix job, per GPU of cuda_devices: larger than a streamed "
     "answer's (no first byte waits on it), so that a GPU's sweep serves more sources at once."},
    {"matrix_job_dir", S(matrix_job_dir), "gpath-matrix-jobs", 0, 0,
     "Directory of matrix jobs' records and .npy results (relative to the working directory; "
     "made when missing); empty turns POST /v1/graphs/{graph}/matrix-jobs off (501)."},
    {"max_matrix_job_cells", L(max_matrix_job_cells), "10000000000", 1, 1000000000000,
     "Largest matrix job (sources x targets); 413 past it. The result takes 4 bytes a cell on "
     "disk."},
    {"matrix_job_keep_s", L(matrix_job_keep_s), "86400", 1, 31536000,
     "How long an ended matrix job and its result file are kept."},
    {"max_apsp_nodes", L(max_apsp_nodes), "2048", 1, 65536,
     "Largest graph (nodes) POST /v1/graphs/{graph}/apsp answers; 413 past it."},
    {"max_nearest", L(max_nearest), "100", 1, 100000,
     "Largest `number` of GET /v1/graphs/{graph}/nearest."},
    {"max_snap_m", L(max_snap_m), "1000", 0, 20000000,
     "Default snapping radius (metres) of coordinates given as lon,lat: farther than this from "
     "every road segment is 400 NoSegment. A request may pass its own `radius`."},
    {"max_connections", L(max_connections), "1024", 1, 1000000,
     "Concurrent client connections accepted."},
    {"connection_timeout_s", L(connection_timeout_s), "30", 1, 86400,
     "Idle keep-alive / slow-client connection timeout in seconds."},
    {"request_timeout_ms", L(request_timeout_ms), "30000", 0, 86400000,
     "Compute time limit per query (route, sssp, table, apsp, routing tables, what-if): 504 "
     "Timeout past it; 0 = none."},
    {"shutdown_grace_s", L(shutdown_grace_s), "30", 0, 3600,
     "On SIGTERM/SIGINT: seconds to let requests in flight finish; queries still computing "
     "after it are cancelled (504 Timeout, \"shutting down\") and the process exits."},
    {"cache_path", S(cache_path), "gpath-cache.sqlite", 0, 0,
     "SQLite matrix cache file (relative to the working directory); empty disables the cache."},
    {"cache_budget_mb", L(cache_budget_mb), "1024", 0, 1048576,
     "Cache size budget in MiB; least recently used entries are evicted past it."},
    {"admin_token", S(admin_token), "", 0, 0,
     "Bearer token of the /admin endpoints; empty disables them (403 AdminDisabled)."},
    {"log_level", S(log_level), "info", 0, 0, "error, warn, info (one line per request) or debug."},
    {"ecmp_max", L(ecmp_max), "64", 1, 4096,
     "Most equal-cost next hops listed per destination in routing tables."},
    {"max_failure_scenarios", L(max_failure_scenarios), "100000", 1, 100000000,
     "Most scenarios of one POST /v1/graphs/{graph}/failure-analysis (every link pair of a large "
     "network is past it: 413, or give link_pairs_sample and a seed)."},
    {"max_listed_pairs", L(max_listed_pairs), "1000", 1, 10000000,
     "Most changed (router, destination) pairs listed per scenario of a failure analysis asked "
     "with list_pairs (pairs_truncated past it; the counts stay whole)."},
    {"max_demands", L(max_demands), "4000000", 1, 1000000000,
     "Most rows of a demand matrix (PUT /v1/graphs/{graph}/demands); 413 past it."},
    {"repair_max_rows", L(repair_max_rows), "200000", 1, 100000000,
     "POST .../repair-paths: most repair rows (router, destination, primary next hop) in one "
     "answer; 413 TooBig past it (ask for fewer routers or summary)."},
    /* OSRM API, map page, isochrones (server/osrm/, server/v1/isochrone.c, map.c) */
    {"osrm_max_table_size", L(osrm_max_table_size), "100", 1, 100000,
     "OSRM /table: sources x destinations at most this squared (OSRM's --max-table-size); "
     "400 TooBig past it."},
    {"osrm_max_route_size", L(osrm_max_route_size), "500", 2, 100000,
     "OSRM /route: most coordinates (OSRM's --max-viaroute-size)."},
    {"osrm_max_trip_size", L(osrm_max_trip_size), "100", 2, 10000,
     "OSRM /trip: most coordinates (OSRM's --max-trip-size; the TSP heuristic is O(n^3))."},
    {"osrm_max_nearest_size", L(osrm_max_nearest_size), "100", 1, 10000,
     "OSRM /nearest: largest `number` (OSRM's --max-nearest-size)."},
    {"osrm_default_radius_m", L(osrm_default_radius_m), "0", 0, 20000000,
     "OSRM services: snapping radius in metres when a request gives no `radiuses`; 0 = "
     "unlimited (OSRM's default)."},
    {"osrm_max_match_size", L(osrm_max_match_size), "10000", 2, 1000000,
     "OSRM /match and the batch match endpoint: most points of one trace (OSRM's "
     "--max-matching-size is 100); 400 TooBig past it."},
    {"match_max_radius_m", L(match_max_radius_m), "200", 0, 100000,
     "Map matching: largest `radiuses` value in metres (OSRM's --max-matching-radius); a point "
     "searches 3x its radius for roads; 0 = unlimited. 400 TooBig past it."},
    {"match_max_candidates", L(match_max_candidates), "8", 1, 64,
     "Map matching: most candidate roads per point, nearest first."},
    {"match_max_traces", L(match_max_traces), "10000", 1, 10000000,
     "POST /v1/graphs/{graph}/match: most traces in one request; 400 past it."},
    {"match_max_batch_points", L(match_max_batch_points), "2000000", 2, 1000000000,
     "POST /v1/graphs/{graph}/match: most points of all traces of one request together; 400 "
     "past it (max_body_bytes bounds the body first)."},
    {"gpu_match_min_traces", L(gpu_match_min_traces), "64", 0, 10000000,
     "Batch map matching on the CUDA backend: batches of this many traces or more search "
     "between consecutive points on the GPU, smaller ones on the CPU (same answers); 0: all."},
    {"map_page", S(map_page), "on", 0, 0,
     "on: serve the map page (MapLibre GL JS, embedded by `make web`) at /, the Leaflet Routing "
     "Machine page at /lrm and their assets at /web/...; off (recommended in production): those "
     "paths answer 404."},
    {"isochrone_max_contours", L(isochrone_max_contours), "10", 1, 100,
     "GET /v1/graphs/{graph}/isochrone: most contours per request."},
    {"isochrone_max_points", L(isochrone_max_points), "16", 1, 1000,
     "GET /v1/graphs/{graph}/isochrone: most origin points per request (one one-to-all each)."},
    {"overview_max_edges", L(overview_max_edges), "200000", 100, 100000000,
     "GET /v1/graphs/{graph}/overview.geojson: most road lines; larger networks are merged on a "
     "grid until they fit."},
    {"tile_cache_mb", L(tile_cache_mb), "64", 0, 1048576,
     "Vector tiles (/tile/v1, /v1/graphs/{graph}/tiles): MiB of encoded tiles kept per process, "
     "least recently used dropped first, keyed by graph version; 0 = no cache."},
    {"tile_max_features", L(tile_max_features), "200000", 100, 100000000,
     "Vector tiles: most features in one tile; a tile that would hold more answers 400 TooBig "
     "(ask a higher zoom)."},
    {"max_connections_per_ip", L(max_connections_per_ip), "64", 0, 1000000,
     "Concurrent connections one client address may hold, so one client cannot take every "
     "slot; 0 = no limit (behind a reverse proxy every client has the proxy's address)."},
    {"max_buffered_answer_bytes", L(max_buffered_answer_bytes), "1073741824", 0, 1L << 50,
     "Bytes of answers (64 KiB or more) held for clients still reading them, all connections "
     "together; a larger answer past it is 503 Busy. 0 = none."},
    {"log_requests_per_s", L(log_requests_per_s), "1000", 0, 100000000,
     "Access log lines per second at most; past it lines are dropped and counted "
     "(event=request_log_suppressed). 0 = no limit."},
    {"connection_reserve", L(connection_reserve), "32", 0, 100000,
     "Connections past max_connections for clients whose first request head is complete within "
     "1 s (probes, short queries) while slow clients hold every regular slot."},
    {"request_read_timeout_s", L(request_read_timeout_s), "30", 0, 86400,
     "A connection must deliver a whole request (headers and body) within this many seconds of "
     "opening or of its previous answer, however slowly it trickles; else it is closed. 0 = "
     "none."},
    {"max_url_bytes", L(max_url_bytes), "8192", 256, 65536,
     "Longest request target (path and query); longer ones get 414 UriTooLong."},
    {"max_header_bytes", L(max_header_bytes), "16384", 1024, 65536,
     "Largest request header block (names and values); larger ones get 431 HeadersTooLarge."},
    {"max_discard_bytes", L(max_discard_bytes), "16777216", 0, 1073741824,
     "Bodies over max_body_bytes are read and dropped up to this size so the client reads its "
     "413 (bigger ones, and Expect: 100-continue, are answered at once)."},
    {"cors_origins", S(cors_origins), "*", 0, 0,
     "Browser origins allowed to call the API (CORS): * (any), a comma list of origins "
     "(https://a.example,https://b.example), or empty (none). Never applied to /admin paths."},
    {"gzip_min_bytes", L(gzip_min_bytes), "1024", 0, 1073741824,
     "Answers of at least this many bytes (and streamed answers) are gzip-compressed for "
     "clients that send Accept-Encoding: gzip; 0 = never compress."},
    {"operator_token", S(operator_token), "", 0, 0,
     "Bearer token of the calls that change what gpath answers (PATCH /v1/graphs/{graph}/links); "
     "admin_token is accepted too. With neither set these calls answer 403 OperatorDisabled."},
    {"cch", S(cch), "auto", 0, 0,
     "CCH (contraction hierarchy) for route AUTO, sssp, table: auto (>= cch_min_nodes), on, off."},
    {"cch_perfect", S(cch_perfect), "auto", 0, 0,
     "CCH perfect customization (drops arcs on no shortest route from the queries): auto (in "
     "the background, the graph answering meanwhile), on (before the graph answers), off."},
    {"turn_costs", S(turn_costs), "on", 0, 0,
     "Turn costs on road graphs with a profile (OSM imports): on (an edge-based turn graph answers "
     "every query, docs/graphs.md) or off (the node-based road graph, no turn cost)."},
    {"traffic_speed_files", S(traffic_speed_files), "", 0, 0,
     "Segment speed files in OSRM's format (from_osm_id,to_osm_id,speed_kmh[,rate]) applied to "
     "graphs as live traffic, GRAPH=PATH pairs separated by spaces; re-read when they change "
     "(docs/traffic.md)."},
    {"traffic_turn_files", S(traffic_turn_files), "", 0, 0,
     "Turn penalty files in OSRM's format (from_osm_id,via_osm_id,to_osm_id,penalty_s[,weight]), "
     "GRAPH=PATH pairs separated by spaces; re-read when they change (needs turn_costs = on)."},
    {"traffic_poll_s", L(traffic_poll_s), "10", 0, 86400,
     "How often the traffic files are checked for a change (mtime, size); 0 = never read them."},
    {"traffic_ttl_s", L(traffic_ttl_s), "0", 0, 31536000,
     "Default expiry of traffic (POSTed and file sets) in seconds; a POST's ttl_s overrides it; "
     "0 = never expires."},
    {"query_nice", L(query_nice), "5", 0, 19,
     "Nice value of the request threads; traffic, new metrics and cost changes run on threads "
     "at the server's priority, ahead of queries on saturated CPUs; 0 = the same priority."},
    {"cch_spare_max_mb", L(cch_spare_max_mb), "2048", 0, 1L << 30,
     "CCHs whose metric arrays (40 B a CCH edge) fit this many MiB keep a spare set mapped for "
     "the next new metric (exclude, vehicle, first traffic version); 0 = never."},
    {"metric_cache_size", L(metric_cache_size), "16", 1, 4096,
     "Per-request metrics (exclude=, vehicle_* limits) kept customized, least recently used "
     "dropped first; each holds two weight arrays (and its turn graph's and CCH's)."},
    {"gpu_table_min_cells", L(gpu_table_min_cells), "250000", 0, 1L << 40,
     "CCH tables of fewer cells (candidates x candidates) are computed on the CPU, larger ones on "
     "the GPU; 0: all on the GPU."},
    {"cch_min_nodes", L(cch_min_nodes), "10000", 0, 2000000000,
     "With cch = auto: the smallest graph (nodes) that gets a CCH at load (a turn graph: from "
     "1024 turn nodes when that is lower)."},
    {"cch_max_triangles_per_node", L(cch_max_triangles_per_node), "200", 0, 1000000,
     "CCH size guard: not built past this many triangles per node (grids); 0 = no guard."},
    {"cch_order", S(cch_order), "nd", 0, 0,
     "CCH order: nd (parallel nested dissection), metis (one METIS_NodeND call, slower) or "
     "flow (on turn graphs nd with Inertial Flow parts and flow-refined separators: fewer "
     "triangles, a longer order)."},
    /* graph loads: an admin token may name any spec, so what a load may read and cost is bounded */
    {"load_timeout_s", L(load_timeout_s), "900", 0, 86400,
     "Time limit of one graph load (reading, building); past it the load stops, 503 "
     "SourceUnavailable, the old graph keeps serving; 0 = none."},
    {"max_graph_bytes", L(max_graph_bytes), "17179869184", 0, 4611686018427387904L,
     "Largest input a load reads, bytes after decompression (file or PostgreSQL rows); 413 "
     "TooBig past it; 0 = none."},
    {"max_graph_nodes", L(max_graph_nodes), "100000000", 0, 4294967294L,
     "Most nodes a loaded graph may have (also caps gen:N); 413 TooBig past it; 0 = none."},
    {"max_graph_arcs", L(max_graph_arcs), "500000000", 0, 4294967294L,
     "Most arcs a loaded graph may have; 413 TooBig past it; 0 = none."},
    {"max_concurrent_loads", L(max_concurrent_loads), "4", 1, 256,
     "Graph loads running at once (a stopped load counts until its thread ends); 503 Busy past "
     "it."},
    {"load_paths", S(load_paths), "", 0, 0,
     "Colon-separated directories admin loads may read (realpath: no '..' or symlink escape; 403 "
     "outside); empty = the configured graphs' directories plus data_dir."},
    {"data_dir", S(data_dir), "", 0, 0,
     "A directory of graph files admin loads may read (added to the default load_paths); empty = "
     "none."},
    {"load_pg_hosts", S(load_pg_hosts), "", 0, 0,
     "Comma-separated PostgreSQL hosts (HOST or HOST:PORT) admin loads may use (403 for others); "
     "empty = the hosts of the configured PostgreSQL graphs."},
};
#define NKEYS (sizeof keys / sizeof keys[0])
_Static_assert(NKEYS <= GP_CONFIG_MAX_KEYS, "raise GP_CONFIG_MAX_KEYS in config.h");

/* Short flags of the most used keys (the rest are long only). */
static const struct {
    char c;
    const char *key;
} short_keys[] = {{'p', "port"}, {'b', "backend"}, {'l', "listen"}};

/* --help examples for keys whose default is empty (the others show their default). */
static const struct {
    const char *key, *example;
} examples[] = {{"admin_token", "\"$(openssl rand -hex 32)\""}};

static const char *example_of(const gp_config_key *k) {
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++)
        if (strcmp(examples[i].key, k->name) == 0) return examples[i].example;
    return k->def[0] ? k->def : "VALUE";
}

static char short_of(const char *key) {
    for (size_t i = 0; i < sizeof short_keys / sizeof short_keys[0]; i++)
        if (strcmp(short_keys[i].key, key) == 0) return short_keys[i].c;
    return 0;
}

static const gp_config_key *find_key(const char *name) {
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0) return &keys[i];
    return NULL;
}

static int set_key(gp_config *cfg, const gp_config_key *k, const char *value, const char *where,
                   gp_err *err) {
    char *field = (char *)cfg + k->off;
    if (k->type == CT_STR) {
        size_t len = strlen(value);
        if (len >= k->size)
            return gp_err_set(err, GP_EINVAL, "%s: %s is too long (%zu bytes, at most %zu)", where,
                              k->name, len, k->size - 1);
        memcpy(field, value, len + 1);
        return GP_OK;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end != '\0')
        return gp_err_set(err, GP_EINVAL, "%s: %s must be an integer, got '%s'", where, k->name,
                          value);
    if (v < k->min || v > k->max)
        return gp_err_set(err, GP_EINVAL, "%s: %s must be in [%ld, %ld], got %ld", where, k->name,
                          k->min, k->max, v);
    memcpy(field, &v, sizeof v);
    return GP_OK;
}

void gp_config_defaults(gp_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NKEYS; i++) set_key(cfg, &keys[i], keys[i].def, "default", NULL);
}

/* Adds or replaces NAME in the list. */
static int add_graph(gp_config *cfg, const char *name, const char *spec, const char *where,
                     gp_err *err) {
    if (!gp_registry_name_ok(name))
        return gp_err_set(err, GP_EINVAL,
                          "%s: graph name '%s' must be 1-64 characters of [A-Za-z0-9_.-], not . "
                          "or ..",
                          where, name);
    size_t sl = strlen(spec);
    if (sl == 0 || sl >= sizeof cfg->graphs[0].spec)
        return gp_err_set(err, GP_EINVAL, "%s: graph '%s' needs a spec of 1-%zu bytes", where, name,
                          sizeof cfg->graphs[0].spec - 1);
    int i = 0;
    while (i < cfg->ngraphs && strcmp(cfg->graphs[i].name, name) != 0) i++;
    if (i == cfg->ngraphs) {
        if (cfg->ngraphs == GP_CONFIG_MAX_GRAPHS)
            return gp_err_set(err, GP_EINVAL, "%s: more than %d graphs", where,
                              GP_CONFIG_MAX_GRAPHS);
        cfg->ngraphs++;
    }
    snprintf(cfg->graphs[i].name, sizeof cfg->graphs[i].name, "%s", name);
    memcpy(cfg->graphs[i].spec, spec, sl + 1);
    return GP_OK;
}

/* "NAME=SPEC" */
static int add_graph_pair(gp_config *cfg, const char *pair, const char *where, gp_err *err) {
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair)
        return gp_err_set(err, GP_EINVAL, "%s: graph '%s' must be NAME=SPEC", where, pair);
    char name[80];
    size_t nl = (size_t)(eq - pair);
    if (nl >= sizeof name) nl = sizeof name - 1;
    memcpy(name, pair, nl);
    name[nl] = '\0';
    return add_graph(cfg, name, eq + 1, where, err);
}

typedef struct ini_ctx {
    gp_config *cfg;
    const char *path;
    gp_config graphs; /* graphs of the file, applied only if it names any */
    gp_err err;
    int failed;
} ini_ctx;

static int ini_cb(void *user, const char *section, const char *name, const char *value) {
    ini_ctx *c = user;
    if (c->failed) return 1;
    char where[1200];
    snprintf(where, sizeof where, "%s [%s] %s", c->path, section, name);
    int rc;
    if (strcmp(section, "graphs") == 0) {
        rc = add_graph(&c->graphs, name, value, where, &c->err);
    } else if (section[0] == '\0' || strcmp(section, "server") == 0) {
        const gp_config_key *k = find_key(name);
        rc = k ? set_key(c->cfg, k, value, where, &c->err)
               : gp_err_set(&c->err, GP_EINVAL, "%s: unknown key '%s'", c->path, name);
        if (k && rc == GP_OK) c->cfg->key_src[k - keys] = GP_CONFIG_SRC_FILE;
    } else {
        rc = gp_err_set(&c->err, GP_EINVAL,
                        "%s: unknown section [%s] (keys go at the top or in [server]; graphs in "
                        "[graphs])",
                        c->path, section);
    }
    if (rc) c->failed = 1;
    return rc ? 0 : 1;
}

static int load_file(gp_config *cfg, const char *path, gp_err *err) {
    ini_ctx *c = calloc(1, sizeof *c);
    if (!c) return gp_err_set(err, GP_ENOMEM, "out of memory reading %s", path);
    c->cfg = cfg;
    c->path = path;
    int line = ini_parse(path, ini_cb, c);
    int rc = GP_OK;
    if (c->failed) {
        rc = gp_err_set(err, GP_EINVAL, "config %s line %d", c->err.msg, line);
    } else if (line == -1) {
        rc = gp_err_set(err, GP_EINVAL, "config file %s: cannot open", path);
    } else if (line != 0) {
        rc = gp_err_set(err, GP_EINVAL, "config file %s line %d: syntax error", path, line);
    } else if (c->graphs.ngraphs > 0) {
        cfg->ngraphs = c->graphs.ngraphs;
        memcpy(cfg->graphs, c->graphs.graphs, sizeof cfg->graphs);
        cfg->graphs_src = GP_CONFIG_SRC_FILE;
    }
    free(c);
    return rc;
}

static int load_env(gp_config *cfg, gp_err *err) {
    for (size_t i = 0; i < NKEYS; i++) {
        char env[64] = "GPATH_";
        size_t n = strlen(keys[i].name);
        for (size_t j = 0; j < n && 6 + j < sizeof env - 1; j++)
            env[6 + j] = (char)toupper((unsigned char)keys[i].name[j]);
        const char *v = getenv(env);
        if (v && set_key(cfg, &keys[i], v, env, err)) return err ? err->code : GP_EINVAL;
        if (v) cfg->key_src[i] = GP_CONFIG_SRC_ENV;
    }
    const char *gs = getenv("GPATH_GRAPHS");
    if (gs && *gs) {
        gp_config tmp;
        tmp.ngraphs = 0;
        char *copy = strdup(gs), *save = NULL;
        if (!copy) return gp_err_set(err, GP_ENOMEM, "out of memory");
        int rc = GP_OK;
        for (char *tok = strtok_r(copy, " \t\n", &save); tok && !rc;
             tok = strtok_r(NULL, " \t\n", &save))
            rc = add_graph_pair(&tmp, tok, "GPATH_GRAPHS", err);
        free(copy);
        if (rc) return rc;
        cfg->ngraphs = tmp.ngraphs;
        memcpy(cfg->graphs, tmp.graphs, sizeof cfg->graphs);
        cfg->graphs_src = GP_CONFIG_SRC_ENV;
    }
    return GP_OK;
}

/* Flags that are not keys (handled by gp_config_load itself). */
static const gp_config_flag extra_flags[] = {
    {"config", 'c', "FILE", "INI configuration file (also env GPATH_CONFIG)",
     "config/gpath.conf.example", 0},
    {"graph", 'g', "NAME=SPEC",
     "graph to load at start, repeatable (replaces the file's [graphs] and GPATH_GRAPHS)",
     "road=dimacs:USA-road-d.NY.gr.gz", 1},
    {"port-file", 0, "FILE", "write the bound port to FILE once listening (use with --port 0)",
     "/run/gpath.port", 0},
    {"print-config", 0, NULL,
     "print the effective configuration, each value with its source, secrets redacted", NULL, 0},
    {"print-routes", 0, NULL, "print the HTTP route table", NULL, 0},
};
#define NEXTRA (sizeof extra_flags / sizeof extra_flags[0])

static void key_to_flag(const char *key, char *flag, size_t size) {
    size_t n = strlen(key);
    if (n >= size) n = size - 1;
    for (size_t j = 0; j < n; j++) flag[j] = key[j] == '_' ? '-' : key[j];
    flag[n] = '\0';
}

static void env_name(const char *key, char *env, size_t size) {
    snprintf(env, size, "GPATH_");
    size_t n = strlen(key), o = 6;
    for (size_t j = 0; j < n && o + 1 < size; j++) env[o++] = (char)toupper((unsigned char)key[j]);
    env[o] = '\0';
}

int gp_config_env_log_level(void) { return gp_log_level_parse(getenv("GPATH_LOG_LEVEL")); }

double gp_config_env_progress_interval(double def) {
    const char *iv = getenv("GPATH_PROGRESS_INTERVAL");
    double v = iv && *iv ? strtod(iv, NULL) : def;
    return v >= 0.001 && v <= 3600 ? v : def;
}

int gp_config_flag_at(size_t i, gp_config_flag *f, char *buf, size_t size) {
    if (i >= NKEYS + NEXTRA) return 0;
    if (i >= NKEYS) {
        *f = extra_flags[i - NKEYS];
        return 1;
    }
    const gp_config_key *k = &keys[i];
    char env[80];
    char *help = buf + 64; /* the flag name in buf[0..64), the help after it */
    if (size < GP_CONFIG_FLAG_BUF) return 0;
    key_to_flag(k->name, buf, 64);
    env_name(k->name, env, sizeof env);
    snprintf(help, 1024, "%s Default: %s; env %s.", k->doc, k->def[0] ? k->def : "empty", env);
    *f = (gp_config_flag){buf,  short_of(k->name), k->type == CT_LONG ? "N" : "VALUE",
                          help, example_of(k),     0};
    return 1;
}

/* Secrets never leave the process: token keys, and the password of a URI (scheme://user:PW@). */
static int secret_key(const char *name) {
    size_t n = strlen(name);
    return (n >= 6 && strcmp(name + n - 6, "_token") == 0) || strstr(name, "password") != NULL;
}

static void redact_uri(const char *in, char *out, size_t size) {
    const char *scheme = strstr(in, "://"), *at = scheme ? strchr(scheme + 3, '@') : NULL;
    const char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - (scheme + 3))) : NULL;
    if (!colon) {
        snprintf(out, size, "%s", in);
        return;
    }
    snprintf(out, size, "%.*s:<redacted>%s", (int)(colon - in), in, at);
}

static const char *src_name(int src) {
    switch (src) {
    case GP_CONFIG_SRC_FILE: return "file";
    case GP_CONFIG_SRC_ENV: return "env";
    case GP_CONFIG_SRC_FLAG: return "flag";
    default: return "default";
    }
}

/* "default", "file PATH", "env GPATH_PORT", "flag --port" */
static void src_text(const gp_config *cfg, int src, const char *key, char *out, size_t size) {
    char name[80];
    if (src == GP_CONFIG_SRC_ENV) env_name(key, name, sizeof name);
    else if (src == GP_CONFIG_SRC_FLAG) {
        name[0] = name[1] = '-';
        key_to_flag(key, name + 2, sizeof name - 2);
    } else if (src == GP_CONFIG_SRC_FILE) snprintf(name, sizeof name, "%.70s", cfg->config_path);
    else name[0] = '\0';
    snprintf(out, size, "%s%s%s", src_name(src), name[0] ? " " : "", name);
}

void gp_config_write(FILE *f, const gp_config *cfg) {
    fprintf(f, "# gpath.conf - configuration of `gpath serve`, written by `gpath serve "
               "--print-config`\n"
               "# (with nothing set: every key at its default, config/gpath.conf.example).\n"
               "#\n"
               "# Precedence: built-in defaults < this file (--config FILE or env GPATH_CONFIG)\n"
               "# < environment GPATH_<KEY> (e.g. GPATH_PORT=9090) < flags (--port 9090,\n"
               "# --key-with-dashes VALUE). Each key says where its value came from; secrets are\n"
               "# printed as <redacted>.\n\n"
               "[server]\n");
    for (size_t i = 0; i < NKEYS; i++) {
        const char *field = (const char *)cfg + keys[i].off;
        char val[1100], src[160];
        if (keys[i].type == CT_LONG) {
            long v;
            memcpy(&v, field, sizeof v);
            snprintf(val, sizeof val, "%ld", v);
        } else if (secret_key(keys[i].name) && field[0]) {
            /* commented out: a copy of this output used as a config file must not turn the
             * placeholder into a working (and guessable) token */
            src_text(cfg, cfg->key_src[i], keys[i].name, src, sizeof src);
            fprintf(f, "\n# %s\n# source: %s (value not shown)\n# %s = <redacted>\n", keys[i].doc,
                    src, keys[i].name);
            continue;
        } else {
            snprintf(val, sizeof val, "%s", field);
        }
        src_text(cfg, cfg->key_src[i], keys[i].name, src, sizeof src);
        fprintf(f, "\n# %s\n# source: %s\n%s = %s\n", keys[i].doc, src, keys[i].name, val);
    }
    char src[160];
    src_text(cfg, cfg->graphs_src, "graph", src, sizeof src);
    if (cfg->graphs_src == GP_CONFIG_SRC_ENV) snprintf(src, sizeof src, "env GPATH_GRAPHS");
    fprintf(f,
            "\n[graphs]\n"
            "# Graphs loaded at start, NAME = SPEC. SPEC is dimacs:PATH, csv:PATH, gen:N[:SEED],\n"
            "# graphml:PATH, sndlib:PATH, rocketfuel:PATH, postgresql://... or a PATH whose\n"
            "# extension picks the format. Env GPATH_GRAPHS=\"NAME=SPEC ...\" or --graph\n"
            "# NAME=SPEC flags replace this list. With no graph anywhere, gpath serves the\n"
            "# built-in generated road graph.\n"
            "# source: %s\n",
            src);
    for (int i = 0; i < cfg->ngraphs; i++) {
        char spec[1100];
        redact_uri(cfg->graphs[i].spec, spec, sizeof spec);
        fprintf(f, "%s = %s\n", cfg->graphs[i].name, spec);
    }
}

void gp_config_write_example(FILE *f) {
    gp_config *cfg = malloc(sizeof *cfg);
    if (!cfg) return;
    gp_config_defaults(cfg);
    cfg->ngraphs = 0;
    add_graph(cfg, "default", "gen:100000", "default", NULL);
    gp_config_write(f, cfg);
    free(cfg);
}

static void flag_to_key(const char *flag, char *key, size_t size) {
    size_t n = strlen(flag);
    if (n >= size) n = size - 1;
    for (size_t j = 0; j < n; j++) key[j] = flag[j] == '-' ? '_' : flag[j];
    key[n] = '\0';
}

/* Long name of a short flag (-p -> "port"), or NULL. */
static const char *short_flag(char c) {
    for (size_t i = 0; i < sizeof short_keys / sizeof short_keys[0]; i++)
        if (short_keys[i].c == c) return short_keys[i].key;
    for (size_t i = 0; i < NEXTRA; i++)
        if (extra_flags[i].short_name == c) return extra_flags[i].name;
    return NULL;
}

static int unknown_flag(const char *name, gp_err *err) {
    const char *cand[GP_CONFIG_MAX_KEYS + 8];
    char flags[GP_CONFIG_MAX_KEYS][64];
    size_t n = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        key_to_flag(keys[i].name, flags[i], sizeof flags[i]);
        cand[n++] = flags[i];
    }
    for (size_t i = 0; i < NEXTRA; i++) cand[n++] = extra_flags[i].name;
    cand[n++] = "help";
    const char *s = gp_suggest(name, cand, n);
    if (s)
        return gp_err_set(err, GP_EINVAL,
                          "unknown flag --%s; did you mean --%s? (see gpath serve "
                          "--help)",
                          name, s);
    return gp_err_set(err, GP_EINVAL, "unknown flag --%s (see gpath serve --help)", name);
}

int gp_config_load(gp_config *cfg, int argc, char **argv, int *action, gp_err *err) {
    gp_config_defaults(cfg);
    *action = 0;
    /* 1. the file: --config FILE (or --config=FILE, -c FILE) or GPATH_CONFIG */
    const char *path = getenv("GPATH_CONFIG");
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "-c") == 0) && i + 1 < argc)
            path = argv[++i];
        else if (strncmp(argv[i], "--config=", 9) == 0) path = argv[i] + 9;
    }
    int rc;
    if (path && *path) {
        snprintf(cfg->config_path, sizeof cfg->config_path, "%s", path);
        if ((rc = load_file(cfg, path, err))) return rc;
    }
    /* 2. environment */
    if ((rc = load_env(cfg, err))) return rc;
    /* 3. flags */
    gp_config flag_graphs;
    flag_graphs.ngraphs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *action = 1;
            return GP_OK;
        }
        if (strcmp(a, "--print-routes") == 0) {
            *action = 2;
            continue;
        }
        if (strcmp(a, "--print-config") == 0) {
            *action = 3;
            continue;
        }
        char name[64];
        const char *val = NULL;
        if (a[0] == '-' && a[1] && a[1] != '-' && a[2] == '\0') { /* -p 9090 */
            const char *longname = short_flag(a[1]);
            if (!longname)
                return gp_err_set(err, GP_EINVAL, "unknown flag %s (see gpath serve --help)", a);
            snprintf(name, sizeof name, "%s", longname);
            if (i + 1 >= argc) return gp_err_set(err, GP_EINVAL, "flag %s needs a value", a);
            val = argv[++i];
        } else if (strncmp(a, "--", 2) != 0) {
            return gp_err_set(err, GP_EINVAL, "unexpected argument '%s' (see gpath serve --help)",
                              a);
        } else {
            const char *eq = strchr(a + 2, '=');
            if (eq) {
                size_t n = (size_t)(eq - (a + 2));
                if (n >= sizeof name) n = sizeof name - 1;
                memcpy(name, a + 2, n);
                name[n] = '\0';
                val = eq + 1;
            } else {
                snprintf(name, sizeof name, "%s", a + 2);
                char key[64];
                flag_to_key(name, key, sizeof key);
                if (!find_key(key) && strcmp(key, "config") && strcmp(key, "graph") &&
                    strcmp(key, "port_file"))
                    return unknown_flag(name, err);
                if (i + 1 >= argc) return gp_err_set(err, GP_EINVAL, "flag %s needs a value", a);
                val = argv[++i];
            }
        }
        char key[64];
        flag_to_key(name, key, sizeof key);
        if (strcmp(key, "config") == 0) continue;
        if (strcmp(key, "graph") == 0) {
            if ((rc = add_graph_pair(&flag_graphs, val, "--graph", err))) return rc;
            continue;
        }
        if (strcmp(key, "port_file") == 0) {
            snprintf(cfg->port_file, sizeof cfg->port_file, "%s", val);
            continue;
        }
        const gp_config_key *k = find_key(key);
        if (!k) return unknown_flag(name, err);
        char where[80];
        snprintf(where, sizeof where, "--%s", name);
        if ((rc = set_key(cfg, k, val, where, err))) return rc;
        cfg->key_src[k - keys] = GP_CONFIG_SRC_FLAG;
    }
    if (flag_graphs.ngraphs > 0) {
        cfg->ngraphs = flag_graphs.ngraphs;
        memcpy(cfg->graphs, flag_graphs.graphs, sizeof cfg->graphs);
        cfg->graphs_src = GP_CONFIG_SRC_FLAG;
    }
    if (cfg->ngraphs == 0) add_graph(cfg, "default", "gen:100000", "default", NULL);
    /* cross-key checks */
    if (strcmp(cfg->backend, "auto") && strcmp(cfg->backend, "cuda") && strcmp(cfg->backend, "cpu"))
        return gp_err_set(err, GP_EINVAL, "backend must be auto, cuda or cpu, got '%s'",
                          cfg->backend);
    int devs[GP_CUDA_MAX_DEVICES]; /* the syntax here; the ordinals when the GPUs are opened */
    if (gp_cuda_devices_parse(cfg->cuda_devices, (int)cfg->cuda_device, -1, devs, err) < 0)
        return err ? err->code : GP_EINVAL;
    if (gp_log_level_parse(cfg->log_level) < 0)
        return gp_err_set(err, GP_EINVAL, "log_level must be error, warn, info or debug, got '%s'",
                          cfg->log_level);
    if (strcmp(cfg->map_page, "on") && strcmp(cfg->map_page, "off"))
        return gp_err_set(err, GP_EINVAL, "map_page must be on or off, got '%s'", cfg->map_page);
    return GP_OK;
}
