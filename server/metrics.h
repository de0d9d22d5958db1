/* metrics.h - the text exposition of GET /metrics (server/metrics.c). The counters it renders
 * are the transport's (server/http/counters.h), which the dispatcher and handlers increment. */
#ifndef GP_METRICS_H
#define GP_METRICS_H

#include <stddef.h>

/* The Prometheus text exposition (malloc'd, *len bytes), or NULL on allocation failure. */
char *gp_metrics_render(size_t *len);

#endif
