#!/usr/bin/env bash
# test_planning_http.sh - the network-planning endpoints (demands, capacities, ECMP loads,
# failure-analysis jobs) over loopback against a real `gpath serve` (tests/planning_http.py).
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-${BUILD:-build}/gpath}
if [ ! -x "$BIN" ]; then echo "SKIP: $BIN not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
GPATH_BIN="$BIN" exec /usr/bin/python3 tests/planning_http.py
