#!/usr/bin/env bash
# test_api.sh - the /v1 API's semantics end to end (tests/api_test.py): coordinates snapped to road
# segments, waypoints and units, the parameter layer's refusals, NoRoute 400, operators' names.
# Needs Debian's python3 with python3-yaml and python3-jsonschema (openapi.yaml validation).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/api_test.py
