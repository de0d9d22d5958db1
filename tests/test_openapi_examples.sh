#!/usr/bin/env bash
# test_openapi_examples.sh - the examples of openapi.yaml against the live server
# (tests/openapi_examples.py): every documented request is performed on a `gpath serve` with a
# generated road graph and the GraphML router fixture, and each example must have the shape of
# the answer (same keys, same JSON types), so the examples cannot drift from the service.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-${BUILD:-build}/gpath}
if [ ! -x "$BIN" ]; then echo "skip: $BIN not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
GPATH_BIN="$BIN" exec /usr/bin/python3 tests/openapi_examples.py
