#!/usr/bin/env bash
# test_traffic_osrm.sh - live traffic equal to OSRM's on Liechtenstein (tests/traffic_osrm.py): the
# same segment speed file through osrm-contract --segment-speed-file and POST .../speeds, median
# |duration difference| <= 3%. Skips without ../shared/peers/osrm or the extract (make data).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
exec python3 tests/traffic_osrm.py
