/* fuzz_request.c - libFuzzer harness for gpath's HTTP request path, without sockets: each input
 * is one request, "METHOD TARGET\n" then "Name: value\n" header lines, an empty line, and the
 * body (the rest), run through gp_http_dispatch - the same percent-decoding, NUL and size limits,
 * routing, token checks, JSON parsing, handlers and answer post-processing (request id, CORS,
 * gzip, streamed bodies drained) as a request off the socket. The service holds two small
 * generated road graphs "g" and "t" (gen:100, two seeds) and a small OSM map "o"
 * (tests/data/osm/match.osm, turn costs on: traffic files and /match) on the CPU backend; the
 * harness runs from the repository root (tests/fuzz/run.sh does); the operator token is
 * "op" (so PATCH links is reachable); admin calls stay disabled (they load graphs from paths).
 * Every answer must be a known status with a JSON body that parses (error bodies included).
 *
 * Build (graph/osm_read.cpp is C++: compile it with clang++ too, and link with clang++ so that
 * UBSan's C++ runtime comes along):
 *   make CC=clang CXX=clang++ NVCC= SAN="-fsanitize=fuzzer-no-link,address,undefined" \
 *     BUILD=build-fuzz build-fuzz/libgpath.a
 *   PK="libmicrohttpd libcjson inih libpq sqlite3 zlib libxml-2.0"
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE \
 *     $(pkg-config --cflags $PK) -c tests/fuzz/fuzz_request.c -o build-fuzz/fuzz_request.o
 *   clang++ -g -fsanitize=fuzzer,address,undefined build-fuzz/fuzz_request.o \
 *     build-fuzz/libgpath.a $(pkg-config --libs $PK) -lmetis -lexpat -lbz2 -lm -pthread \
 *     -o build-fuzz/fuzz_request
 *   mkdir -p /tmp/fuzz-request && build-fuzz/fuzz_request -max_total_time=30 /tmp/fuzz-request \
 *     tests/fuzz/corpus/request      (new inputs go to the first, scratch directory)
 */
#include "server/config.h"
#include "server/http/http.h"
#include "server/registry.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FUZZ_HEADERS 16

static gp_config cfg;
static gp_engine *engine;
static gp_registry *reg;

static void load(const char *name, const char *spec) {
    gp_graph_source src;
    memset(&src, 0, sizeof src);
    snprintf(src.spec, sizeof src.spec, "%s", spec);
    gp_err err;
    gp_err_clear(&err);
    if (gp_registry_load(reg, name, &src, NULL, &err)) {
        fprintf(stderr, "fuzz_request: cannot load %s: %s\n", spec, err.msg);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    gp_config_defaults(&cfg);
    gp_log_level = GP_LOG_ERROR; /* no access log per input */
    snprintf(cfg.operator_token, sizeof cfg.operator_token, "op");
    cfg.cache_path[0] = '\0';
    cfg.max_body_bytes = 65536;
    cfg.max_discard_bytes = 131072;
    cfg.max_table_cells = 400;
    cfg.max_binary_table_cells = 400;
    cfg.max_matrix_job_cells = 400;
    static char jobs[] = "/tmp/gpath-fuzz-mjobs-XXXXXX"; /* matrix jobs write here, not in . */
    if (!mkdtemp(jobs)) abort();
    snprintf(cfg.matrix_job_dir, sizeof cfg.matrix_job_dir, "%s", jobs);
    cfg.max_apsp_nodes = 64;
    cfg.request_timeout_ms = 2000;
    snprintf(cfg.cors_origins, sizeof cfg.cors_origins, "https://a.example,https://b.example");
    gp_err err;
    gp_err_clear(&err);
    engine = gp_engine_new("cpu", 1, NULL, &err);
    reg = engine ? gp_registry_new(engine) : NULL;
    if (!reg) {
        fprintf(stderr, "fuzz_request: no engine: %s\n", err.msg);
        abort();
    }
    load("g", "gen:100");
    load("t", "gen:100:7");
    load("o", "osm:tests/data/osm/match.osm"); /* OSM with turn costs: traffic and /match */
    gp_http_startup_begin(&cfg);
    gp_http_startup_end();
    if (gp_http_attach(&cfg, engine, reg)) abort();
    return 0;
}

/* Next line of [*p, end): returns a malloc'd copy without the line end, advances *p. */
static char *line(const uint8_t **p, const uint8_t *end) {
    const uint8_t *s = *p, *e = s;
    while (e < end && *e != '\n') e++;
    size_t n = (size_t)(e - s);
    if (n && s[n - 1] == '\r') n--;
    char *out = malloc(n + 1);
    if (!out) abort();
    memcpy(out, s, n);
    out[n] = '\0';
    *p = e < end ? e + 1 : e;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p = data, *end = data + size;
    char *first = line(&p, end);
    char *sp = strchr(first, ' ');
    const char *method = first, *target = "/";
    if (sp) {
        *sp = '\0';
        target = sp + 1;
    }
    if (!*method) method = "GET";
    char *lines[MAX_FUZZ_HEADERS];
    const char *hv[2 * MAX_FUZZ_HEADERS + 1];
    int nl = 0, nh = 0;
    while (p < end && nl < MAX_FUZZ_HEADERS) {
        char *l = line(&p, end);
        if (!*l) {
            free(l);
            break;
        }
        lines[nl++] = l;
        char *colon = strchr(l, ':');
        if (!colon) continue;
        *colon = '\0';
        const char *v = colon + 1;
        while (*v == ' ') v++;
        hv[nh++] = l;
        hv[nh++] = v;
    }
    hv[nh] = NULL;
    gp_http_answer a;
    if (gp_http_dispatch(method, target, hv, (const char *)p, (size_t)(end - p), &a) == GP_OK) {
        /* a streamed answer cut short reads as status 0; everything else is a real status */
        if (a.status != 0 && (a.status < 200 || a.status > 599)) abort();
        if (a.status >= 400 && strncmp(a.content_type, "application/json", 16) == 0 &&
            !gp_http_answer_header(&a, "Content-Encoding")) {
            cJSON *j = cJSON_ParseWithLength(a.body, a.len);
            if (!j || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "code"))) abort();
            cJSON_Delete(j);
        }
        if (!gp_http_answer_header(&a, "X-Request-Id")) abort();
        gp_http_answer_free(&a);
    }
    for (int i = 0; i < nl; i++) free(lines[i]);
    free(first);
    return 0;
}
