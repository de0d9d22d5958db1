/* errors.c - the error code table and THE error document (contract in errors.h). */
#include "server/errors.h"

#include "graph/gp.h"

/* the one table (keep openapi.yaml's ErrorCode enum in step) */
static const struct {
    const char *name;
    int status;
} codes[GP_HC_COUNT] = {
    [GP_HC_INVALID_QUERY] = {"InvalidQuery", 400},
    [GP_HC_INVALID_JSON] = {"InvalidJson", 400},
    [GP_HC_UNKNOWN_NODE] = {"UnknownNode", 400},
    [GP_HC_NO_COORDINATES] = {"NoCoordinates", 400},
    [GP_HC_NO_SEGMENT] = {"NoSegment", 400},
    [GP_HC_UNAUTHORIZED] = {"Unauthorized", 401},
    [GP_HC_FORBIDDEN] = {"Forbidden", 403},
    [GP_HC_ADMIN_DISABLED] = {"AdminDisabled", 403},
    [GP_HC_UNKNOWN_GRAPH] = {"UnknownGraph", 404},
    [GP_HC_NOT_FOUND] = {"NotFound", 404},
    [GP_HC_NO_ROUTE] = {"NoRoute", 400},
    [GP_HC_METHOD_NOT_ALLOWED] = {"MethodNotAllowed", 405},
    [GP_HC_TOO_BIG] = {"TooBig", 413},
    [GP_HC_URI_TOO_LONG] = {"UriTooLong", 414},
    [GP_HC_HEADERS_TOO_LARGE] = {"HeadersTooLarge", 431},
    [GP_HC_OPERATOR_DISABLED] = {"OperatorDisabled", 403},
    [GP_HC_LOAD_FAILED] = {"LoadFailed", 422},
    [GP_HC_INTERNAL] = {"InternalError", 500},
    [GP_HC_DEVICE_ERROR] = {"DeviceError", 500},
    [GP_HC_DATABASE_ERROR] = {"DatabaseError", 500},
    [GP_HC_RANGE_NOT_SATISFIABLE] = {"RangeNotSatisfiable", 416},
    [GP_HC_UNSUPPORTED] = {"Unsupported", 501},
    [GP_HC_NOT_READY] = {"NotReady", 503},
    [GP_HC_BUSY] = {"Busy", 503},
    [GP_HC_TIMEOUT] = {"Timeout", 504},
    [GP_HC_SOURCE_UNAVAILABLE] = {"SourceUnavailable", 503},
};

const char *gp_http_code_name(int code) {
    return code >= 0 && code < GP_HC_COUNT ? codes[code].name : "InternalError";
}
int gp_http_code_status(int code) {
    return code >= 0 && code < GP_HC_COUNT ? codes[code].status : 500;
}

int gp_http_code_of(int s) {
    switch (s) {
    case GP_EINVAL: return GP_HC_INVALID_QUERY;
    case GP_EPARSE: return GP_HC_INVALID_QUERY;
    case GP_ENOTFOUND: return GP_HC_NOT_FOUND;
    case GP_ETOOBIG: return GP_HC_TOO_BIG;
    case GP_EDEVICE: return GP_HC_DEVICE_ERROR;
    case GP_EBUSY: return GP_HC_BUSY;
    case GP_EUNSUPPORTED: return GP_HC_UNSUPPORTED;
    case GP_ENOROUTE: return GP_HC_NO_ROUTE;
    case GP_EDB: return GP_HC_DATABASE_ERROR;
    case GP_ETIMEOUT: return GP_HC_TIMEOUT;
    default: return GP_HC_INTERNAL;
    }
}

cJSON *gp_render_error_doc(const char *code, const char *message) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!cJSON_AddStringToObject(o, "code", code) ||
        !cJSON_AddStringToObject(o, "message", message ? message : "")) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
