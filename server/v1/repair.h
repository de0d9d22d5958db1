/* repair.h - POST /v1/graphs/{graph}/repair-paths (server/v1/repair.c): LFA and TI-LFA repair
 * paths and their coverage for every router (engine/repair.h). */
#ifndef GP_H_REPAIR_H
#define GP_H_REPAIR_H

#include "server/http/http.h"

/* Body (optional): {"routers": [id or name, ...], "summary": bool, "node_protection": bool,
 * "paths": bool, "format": "json" | "csv"}. */
void gp_h_repair_paths(gp_req *r);

#endif
