#!/usr/bin/env bash
# test_soak.sh - this round's endpoints (traffic, matching, matrices, tiles, link loads and failure
# analysis where built) under load from several clients with flat memory (tests/soak_test.py;
# GPATH_SOAK_S sets the soak's seconds, default 20). Skips without data/osm/monaco.osm.pbf.
set -u
cd "$(dirname "$0")/.." || exit 1
GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}" exec /usr/bin/python3 tests/soak_test.py "$@"
