#!/usr/bin/env bash
# cpu-osrm-api.sh - OSRM v1 route and table requests/s through HTTP, gpath's CPU backend vs OSRM
# v6 on the same OSM files in the same run (bench/osrm-api.sh has the method and the settings).
exec bash "$(dirname "$0")/osrm-api.sh" cpu-osrm-api cpu
