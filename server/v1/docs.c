/* docs.c - GET /openapi.yaml (the contract, embedded from the repository's openapi.yaml at
 * build time), GET /docs (an HTML page that renders it with Swagger UI) and GET /docs/{asset}
 * (Swagger UI's script and styles, from the npm package swagger-ui-dist pinned in
 * web/package-lock.json, fetched by `make web` and embedded; no CDN). A build made without
 * `make web` answers /docs with 501 Unsupported saying so.
 */
#include "server/v1/docs.h"

#include "server/assets.h"

#include <string.h>

const gp_asset *gp_asset_find(const char *name) {
    for (const gp_asset *a = gp_assets; a->name; a++)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

static void send_asset(gp_req *r, const gp_asset *a) {
    gp_req_add_header(r, "Cache-Control", "public, max-age=3600");
    gp_http_text(r, 200, a->type, (const char *)a->data, (size_t)(a->end - a->data));
}

void gp_h_openapi(gp_req *r) {
    const gp_asset *a = gp_asset_find("openapi.yaml");
    if (!a) {
        gp_http_error(r, GP_HC_INTERNAL, "openapi.yaml was not embedded in this build");
        return;
    }
    send_asset(r, a);
}

/* The page's scripts: without them the page could not render. */
static const char *const needed[] = {"swagger-ui-bundle.js", "swagger-ui.css"};

/* 1 when the page's scripts are embedded; else answers 501 naming the missing one. */
static int docs_built(gp_req *r) {
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
        if (!gp_asset_find(needed[i])) {
            gp_http_error(r, GP_HC_UNSUPPORTED,
                          "this build has no API reference assets (%s): build with `make web` "
                          "first (npm fetches swagger-ui-dist); the contract itself is at "
                          "/openapi.yaml",
                          needed[i]);
            return 0;
        }
    return 1;
}

void gp_h_docs(gp_req *r) {
    if (!docs_built(r)) return;
    const gp_asset *a = gp_asset_find("docs.html");
    if (!a) {
        gp_http_error(r, GP_HC_INTERNAL, "docs.html was not embedded in this build");
        return;
    }
    send_asset(r, a);
}

void gp_h_docs_asset(gp_req *r) {
    if (!docs_built(r)) return; /* as /docs: 501, not 404, in a build without the assets */
    const char *name = gp_req_param(r, "asset");
    const gp_asset *a = name && strcmp(name, "docs.html") && strcmp(name, "openapi.yaml")
                            ? gp_asset_find(name)
                            : NULL;
    if (!a) {
        gp_http_error(r, GP_HC_NOT_FOUND, "no documentation asset '%s'", name ? name : "");
        return;
    }
    send_asset(r, a);
}
