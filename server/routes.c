/* routes.c - the HTTP service's static route table: method, path pattern ({name} matches one
 * segment), handler, flags (server/http/http.h). One line per endpoint; tests/check_openapi.py checks that
 * openapi.yaml describes exactly these paths and methods (`gpath serve --print-routes`). Metrics
 * are labelled with the pattern.
 */
#include "server/cache.h"
#include "server/v1/docs.h"
#include "server/v1/netops.h"
#include "server/v1/planning.h"
#include "server/v1/repair.h"
#include "server/v1/handlers.h"
#include "server/v1/isochrone.h"
#include "server/v1/traffic.h"
#include "server/v1/map.h"
#include "server/v1/tiles.h"
#include "server/v1/mjobs.h"
#include "server/http/http.h"
#include "server/osrm/osrm.h"

const gp_route gp_routes[] = {
    {"GET", "/health", gp_h_health, 0},
    {"GET", "/ready", gp_h_ready, 0},
    {"GET", "/metrics", gp_h_metrics, 0},
    {"GET", "/openapi.yaml", gp_h_openapi, 0},
    {"GET", "/docs", gp_h_docs, 0},
    {"GET", "/docs/{asset}", gp_h_docs_asset, 0},
    {"GET", "/v1/graphs", gp_h_graphs, 0},
    {"GET", "/v1/graphs/{graph}", gp_h_graph, GP_ROUTE_GRAPH},
    {"GET", "/v1/graphs/{graph}/route", gp_h_route, GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/nearest", gp_h_nearest, GP_ROUTE_GRAPH},
    {"GET", "/v1/graphs/{graph}/sssp", gp_h_sssp, GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"POST", "/v1/graphs/{graph}/table", gp_h_table,
     GP_ROUTE_GRAPH | GP_ROUTE_JSON | GP_ROUTE_QUERY},
    {"POST", "/v1/graphs/{graph}/apsp", gp_h_apsp, GP_ROUTE_GRAPH | GP_ROUTE_JSON | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/routing-table", gp_h_routing_table,
     GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/routing-tables", gp_h_routing_tables,
     GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    /* its body: read from the text, or parsed on demand (server/v1/netops.c links_text) */
    {"PATCH", "/v1/graphs/{graph}/links", gp_h_links_patch, GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"GET", "/v1/graphs/{graph}/links", gp_h_links, GP_ROUTE_GRAPH},
    {"POST", "/v1/graphs/{graph}/speeds", gp_h_speeds_post, GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"DELETE", "/v1/graphs/{graph}/speeds", gp_h_speeds_delete, GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"POST", "/v1/graphs/{graph}/turn-penalties", gp_h_turns_post,
     GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"DELETE", "/v1/graphs/{graph}/turn-penalties", gp_h_turns_delete,
     GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"GET", "/v1/graphs/{graph}/routers", gp_h_routers, GP_ROUTE_GRAPH},
    {"POST", "/v1/graphs/{graph}/what-if", gp_h_what_if,
     GP_ROUTE_GRAPH | GP_ROUTE_JSON | GP_ROUTE_QUERY},
    {"POST", "/v1/graphs/{graph}/repair-paths", gp_h_repair_paths, GP_ROUTE_GRAPH | GP_ROUTE_JSON},
    {"POST", "/v1/graphs/{graph}/repair-jobs", gp_h_repair_jobs_post,
     GP_ROUTE_GRAPH | GP_ROUTE_JSON},
    {"GET", "/v1/repair-jobs/{id}", gp_h_repair_job_get, 0},
    {"GET", "/v1/repair-jobs/{id}/result", gp_h_repair_job_result, 0},
    {"DELETE", "/v1/repair-jobs/{id}", gp_h_repair_job_delete, 0},
    {"POST", "/v1/graphs/{graph}/jobs", gp_h_jobs_post, GP_ROUTE_GRAPH},
    {"GET", "/v1/jobs/{id}", gp_h_job_get, 0},
    /* network planning (server/v1/planning.c) */
    {"PUT", "/v1/graphs/{graph}/demands", gp_h_demands_put, GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"GET", "/v1/graphs/{graph}/demands", gp_h_demands_get, GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"DELETE", "/v1/graphs/{graph}/demands", gp_h_demands_delete,
     GP_ROUTE_GRAPH | GP_ROUTE_OPERATOR},
    {"PATCH", "/v1/graphs/{graph}/capacities", gp_h_capacities_patch,
     GP_ROUTE_GRAPH | GP_ROUTE_JSON | GP_ROUTE_OPERATOR},
    {"POST", "/v1/graphs/{graph}/load", gp_h_load, GP_ROUTE_GRAPH},
    {"POST", "/v1/graphs/{graph}/failure-analysis", gp_h_failure_post,
     GP_ROUTE_GRAPH | GP_ROUTE_JSON},
    {"GET", "/v1/failure-analysis/{id}", gp_h_failure_get, GP_ROUTE_QUERY},
    {"DELETE", "/v1/failure-analysis/{id}", gp_h_failure_delete, 0},
    {"POST", "/v1/graphs/{graph}/matrix-jobs", gp_h_mjobs_post, GP_ROUTE_GRAPH | GP_ROUTE_JSON},
    {"GET", "/v1/matrix-jobs/{id}", gp_h_mjob_get, 0},
    {"DELETE", "/v1/matrix-jobs/{id}", gp_h_mjob_delete, 0},
    {"GET", "/v1/matrix-jobs/{id}/result", gp_h_mjob_result, 0},
    {"PUT", "/admin/graphs/{graph}", gp_h_admin_put, GP_ROUTE_ADMIN | GP_ROUTE_JSON},
    {"POST", "/admin/graphs/{graph}/reload", gp_h_admin_reload, GP_ROUTE_ADMIN},
    {"DELETE", "/admin/graphs/{graph}", gp_h_admin_delete, GP_ROUTE_ADMIN},
    {"GET", "/admin/cache", gp_h_cache_stats, GP_ROUTE_ADMIN},
    {"DELETE", "/admin/cache", gp_h_cache_purge, GP_ROUTE_ADMIN},
    /* OSRM v1 API, isochrones, map page (server/osrm/, server/v1/isochrone.c, map.c) */
    {"GET", "/route/v1/{profile}/{coordinates}", gp_h_osrm_route, GP_ROUTE_QUERY},
    {"GET", "/table/v1/{profile}/{coordinates}", gp_h_osrm_table, GP_ROUTE_QUERY},
    {"POST", "/table/v1/{profile}", gp_h_osrm_table_post, GP_ROUTE_JSON | GP_ROUTE_QUERY},
    {"GET", "/nearest/v1/{profile}/{coordinates}", gp_h_osrm_nearest, 0},
    {"GET", "/trip/v1/{profile}/{coordinates}", gp_h_osrm_trip, GP_ROUTE_QUERY},
    {"GET", "/match/v1/{profile}/{coordinates}", gp_h_osrm_match, GP_ROUTE_QUERY},
    {"POST", "/match/v1/{profile}", gp_h_osrm_match_post, GP_ROUTE_JSON | GP_ROUTE_QUERY},
    {"GET", "/tile/v1/{profile}/{tile}", gp_h_osrm_tile, GP_ROUTE_QUERY},
    {"POST", "/v1/graphs/{graph}/match", gp_h_match_batch, GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/isochrone", gp_h_isochrone, GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/overview.geojson", gp_h_overview, GP_ROUTE_GRAPH},
    {"GET", "/v1/graphs/{graph}/traffic.geojson", gp_h_traffic_geojson,
     GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/tiles/{z}/{x}/{y}", gp_h_base_tile,
     GP_ROUTE_GRAPH | GP_ROUTE_QUERY},
    {"GET", "/v1/graphs/{graph}/tiles.json", gp_h_base_tilejson, GP_ROUTE_GRAPH},
    {"GET", "/v1/graphs/{graph}/style.json", gp_h_base_style, GP_ROUTE_GRAPH},
    {"GET", "/", gp_h_map_page, 0},
    {"GET", "/lrm", gp_h_lrm_page, 0},
    {"GET", "/web/{file}", gp_h_web_asset, 0},
    {"GET", "/web/images/{file}", gp_h_web_asset, 0},
};
const size_t gp_nroutes = sizeof gp_routes / sizeof gp_routes[0];
