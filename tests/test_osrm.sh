#!/usr/bin/env bash
# test_osrm.sh - the OSRM v1 API, isochrones, the road overview and the map page's routes against
# the real daemon (tests/osrm_test.py: plain urllib requests as OSRM documents them, golden checks
# of OSRM's response shapes and error codes, answers equal to gpath's own /v1 answers).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 "${1:-tests/osrm_test.py}" # another script: test_osrm_contract.sh
