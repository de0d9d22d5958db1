#!/usr/bin/env bash
# test_exclude.sh - exclude= classes, vehicle limits and the truck profile per request over HTTP
# (tests/exclude_test.py: the real daemon on tests/data/osm/exclude.osm, literal durations, OSRM's
# error codes, /v1 route and table).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/exclude_test.py
