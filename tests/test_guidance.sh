#!/usr/bin/env bash
# test_guidance.sh - OSRM route guidance (server/osrm/guidance.c) against the real daemon: the
# maneuvers of the hand-made tests/data/osm/guidance.osm, a .gpath snapshot of it, and the match
# rates against the real OSRM on Liechtenstein when both are present (tests/guidance_test.py,
# which skips with a message when python3-yaml / python3-jsonschema are missing).
cd "$(dirname "$0")/.." || exit 1
GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}" exec /usr/bin/python3 tests/guidance_test.py
