/* docs.h - the API contract and its rendered reference (server/v1/docs.c). */
#ifndef GP_H_DOCS_H
#define GP_H_DOCS_H

#include "server/http/http.h"

void gp_h_openapi(gp_req *r);    /* GET /openapi.yaml */
void gp_h_docs(gp_req *r);       /* GET /docs */
void gp_h_docs_asset(gp_req *r); /* GET /docs/{asset} */

#endif
