#!/usr/bin/env bash
# test_guidance.sh - OSRM route guidance (server/osrm/guidance.c) against the real daemon on the
# hand-made tests/data/osm/guidance.osm (one small map per maneuver, literal expectations checked
# against OSRM v6's answers on the same file), the same answers from a .gpath snapshot, and, when
# the OSRM tarball and Liechtenstein are present, the maneuver match rates against the real OSRM
# (tests/guidance_test.py).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/guidance_test.py
