/* errors.h - the service's error answers, below every room of server/ and shared with the CLI
 * (server/errors.c): the stable error codes (GP_HC_*), their names and HTTP statuses in one table,
 * the mapping from a GP_E* status, and THE error document {"code": CODE, "message": MESSAGE} that
 * HTTP's error writer (server/http/) sends and the CLI prints, so both are the same bytes for the
 * same error. Adding an error code: one enum entry here, one line in server/errors.c's table, and
 * openapi.yaml's ErrorCode enum (tests/check_openapi.py compares them).
 */
#ifndef GP_ERRORS_H
#define GP_ERRORS_H

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stable error codes; the names ("InvalidQuery", ...) and HTTP statuses live in one table in
 * server/errors.c and in openapi.yaml's ErrorCode schema. */
enum gp_http_code {
    GP_HC_INVALID_QUERY = 0, /* 400 missing / malformed query parameter or body field */
    GP_HC_INVALID_JSON,      /* 400 body is not JSON, or not the expected shape */
    GP_HC_UNKNOWN_NODE,      /* 400 a node id the graph does not have */
    GP_HC_NO_COORDINATES,    /* 400 the graph has no coordinates (nearest, geometry) */
    GP_HC_NO_SEGMENT,        /* 400 no road segment within the snapping radius of a coordinate */
    GP_HC_UNAUTHORIZED,      /* 401 admin call without a bearer token */
    GP_HC_FORBIDDEN,         /* 403 wrong bearer token */
    GP_HC_ADMIN_DISABLED,    /* 403 admin endpoints are off (no admin_token configured) */
    GP_HC_UNKNOWN_GRAPH,     /* 404 no graph of that name */
    GP_HC_NOT_FOUND,         /* 404 no such path or resource */
    GP_HC_NO_ROUTE, /* 400 target unreachable from source (as OSRM, Valhalla, GraphHopper) */
    GP_HC_METHOD_NOT_ALLOWED, /* 405 path exists, method does not */
    GP_HC_TOO_BIG,            /* 413 body, table or APSP over a configured limit */
    GP_HC_URI_TOO_LONG,       /* 414 request target over max_url_bytes */
    GP_HC_HEADERS_TOO_LARGE,  /* 431 request headers over max_header_bytes */
    GP_HC_OPERATOR_DISABLED,  /* 403 cost-changing calls are off (no operator_token/admin_token) */
    GP_HC_LOAD_FAILED,        /* 422 a graph load/reload failed (the old graph keeps serving) */
    GP_HC_INTERNAL,           /* 500 a bug or allocation failure */
    GP_HC_DEVICE_ERROR,       /* 500 CUDA error */
    GP_HC_DATABASE_ERROR,     /* 500 SQLite / PostgreSQL error */
    GP_HC_UNSUPPORTED,        /* 501 the backend or build cannot do this */
    GP_HC_NOT_READY,          /* 503 graphs still loading */
    GP_HC_BUSY,               /* 503 every worker busy past the bounded wait */
    GP_HC_TIMEOUT,            /* 504 over the configured time limit */
    GP_HC_SOURCE_UNAVAILABLE, /* 503 a graph source is down or too slow (load_timeout_s); retry */
    GP_HC_RANGE_NOT_SATISFIABLE, /* 416 a Range header outside the resource */
    GP_HC_COUNT
};
const char *gp_http_code_name(int code); /* "InvalidQuery", ... */
int gp_http_code_status(int code);       /* 400, ... */
/* Maps a GP_E* status to an HTTP error code (GP_EBUSY -> GP_HC_BUSY, ...). */
int gp_http_code_of(int gp_status);

/* THE error document {"code": CODE, "message": MESSAGE} (a NULL message is ""); NULL when out of
 * memory. */
cJSON *gp_render_error_doc(const char *code, const char *message);

#ifdef __cplusplus
}
#endif
#endif
