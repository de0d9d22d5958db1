/* mjobs.h - matrix jobs: distance tables too big for one request, computed in the background and
 * kept on disk as .npy files (server/v1/mjobs.c; docs/api.md "Matrix jobs").
 *
 *   POST   /v1/graphs/{graph}/matrix-jobs   {"sources": [...], "targets"?: [...], "radius"?}
 *                                           -> 202 {"id", "state", ...}, Location: /v1/matrix-jobs/ID
 *   GET    /v1/matrix-jobs/{id}             the job: state, progress, rows done, result link
 *   DELETE /v1/matrix-jobs/{id}             cancels a queued or running job, or deletes a result
 *   GET    /v1/matrix-jobs/{id}/result      the .npy array (Range requests: 206 / 416)
 */
#ifndef GP_V1_MJOBS_H
#define GP_V1_MJOBS_H

#include "server/http/http.h"

#ifdef __cplusplus
extern "C" {
#endif

void gp_h_mjobs_post(gp_req *r);
void gp_h_mjob_get(gp_req *r);
void gp_h_mjob_delete(gp_req *r);
void gp_h_mjob_result(gp_req *r);
/* Stops the worker (a running job stays "running" on disk: the next start reports it failed). */
void gp_srv_mjobs_stop(void);

#ifdef __cplusplus
}
#endif
#endif
