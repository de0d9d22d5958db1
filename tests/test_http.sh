#!/usr/bin/env bash
# test_http.sh - the HTTP service end to end: starts the real `gpath serve` on ephemeral loopback
# ports and drives every endpoint, error code, admin auth, reload-under-load and SIGTERM
# (tests/http_test.py, Debian's python3 with python3-yaml and python3-jsonschema).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/http_test.py
