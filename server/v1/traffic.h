/* traffic.h - live traffic endpoints and files (server/v1/traffic.c, docs/traffic.md): OSRM speed
 * and turn penalty files POSTed or named in the config, expiry, and the traffic a graph has.
 */
#ifndef GP_H_TRAFFIC_H
#define GP_H_TRAFFIC_H

#include "server/http/http.h"

/* POST /v1/graphs/{graph}/speeds (text/csv, ?ttl_s=): a segment speed file applied whole */
void gp_h_speeds_post(gp_req *r);
/* DELETE /v1/graphs/{graph}/speeds: every speed dropped, back to the profile's */
void gp_h_speeds_delete(gp_req *r);
/* POST /v1/graphs/{graph}/turn-penalties (text/csv, ?ttl_s=) */
void gp_h_turns_post(gp_req *r);
/* DELETE /v1/graphs/{graph}/turn-penalties */
void gp_h_turns_delete(gp_req *r);
/* GET /v1/graphs/{graph}/traffic.geojson[?bbox=minlon,minlat,maxlon,maxlat]: a GeoJSON
 * FeatureCollection of the arcs whose current speed differs from the profile's (speed_kmh,
 * profile_kmh, ratio, closed, expires_at), with the data_version it describes */
void gp_h_traffic_geojson(gp_req *r);
/* The traffic applied to graph name ({"version", "speeds": [...], "turn_penalties": [...]}), or
 * NULL when it has none; GET /v1/graphs/{graph} shows it. */
cJSON *gp_srv_traffic_info(const char *name);
/* Starts the thread that expires entries, re-reads the configured files when they change
 * (traffic_poll_s) and reapplies traffic after a reload; stop joins it and drops the state. */
int gp_srv_traffic_start(const gp_config *cfg, gp_err *err);
void gp_srv_traffic_stop(void);

#endif
