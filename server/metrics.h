/* metrics.h - internal interface of server/metrics.c used by the dispatcher and GET /metrics.
 * (Counters other modules increment are declared in server/http/http.h.) */
#ifndef GP_METRICS_H
#define GP_METRICS_H

#include <stddef.h>

int gp_metrics_init(void); /* after the route table is known; idempotent */
void gp_metrics_free(void);
/* One answered request; route == gp_nroutes for unmatched paths. */
void gp_metrics_request(size_t route, int status, double seconds);
/* The Prometheus text exposition (malloc'd, *len bytes), or NULL on allocation failure. */
char *gp_metrics_render(size_t *len);

#endif
