#!/usr/bin/env bash
# test_traffic.sh - live traffic against the real daemon (tests/traffic_test.py): OSRM speed and
# turn penalty files POSTed and re-read from configured files, expiry, DELETE, rejected files,
# data_version on every answer and under concurrent updates, and (when ../shared/peers/osrm is
# there) the same speed file through the real OSRM on Liechtenstein.
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/traffic_test.py
