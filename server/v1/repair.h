/* repair.h - POST /v1/graphs/{graph}/repair-paths and repair jobs (server/v1/repair.c): LFA and
 * TI-LFA repair paths and their coverage for every router (engine/repair.h). */
#ifndef GP_H_REPAIR_H
#define GP_H_REPAIR_H

#include "server/http/http.h"

/* Body (optional): {"routers": [id or name, ...], "summary": bool, "node_protection": bool,
 * "paths": bool, "format": "json" | "csv"}. */
void gp_h_repair_paths(gp_req *r);
/* The same body as a job: POST .../repair-jobs (202 + Location, or 200 done at once from the
 * cache), GET /v1/repair-jobs/{id} (state, progress), GET .../result (the synchronous answer's
 * bytes), DELETE (cancel). */
void gp_h_repair_jobs_post(gp_req *r);
void gp_h_repair_job_get(gp_req *r);
void gp_h_repair_job_result(gp_req *r);
void gp_h_repair_job_delete(gp_req *r);
/* Cancels and waits for the jobs, then forgets them (server shutdown). */
void gp_srv_repair_stop(void);

#endif
