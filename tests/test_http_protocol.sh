#!/usr/bin/env bash
# test_http_protocol.sh - the HTTP protocol layer end to end (tests/http_protocol_test.py): per-IP
# connection limit and read deadline, 413 after the body, NUL bytes, UTF-8-safe error bodies,
# JSON 414/431, CORS, gzip, the operator token, request ids and the access log, build_info and
# process_* metrics (promtool), /openapi.yaml and /docs; against real `gpath serve` daemons on
# loopback (127.0.0.1 and 127.0.0.2 as a second client address).
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/http_protocol_test.py
