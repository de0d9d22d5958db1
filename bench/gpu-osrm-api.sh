#!/usr/bin/env bash
# gpu-osrm-api.sh - OSRM v1 route and table requests/s through HTTP, gpath's CUDA and CPU backends
# vs OSRM v6 on the same OSM files in the same run (bench/osrm-api.sh has the method and the
# settings); run on the GPU machine.
exec bash "$(dirname "$0")/osrm-api.sh" gpu-osrm-api cuda cpu
