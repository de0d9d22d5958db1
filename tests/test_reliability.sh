#!/usr/bin/env bash
# test_reliability.sh - issue 29's hostile-input and fault cases that need a running daemon
# (tests/reliability_test.py): shutdown_grace_s cancelling queries still computing, framing headers
# on every request of a keep-alive connection, and the others it lists; against the real
# `gpath serve` on loopback. Arguments select tests by name.
set -u
cd "$(dirname "$0")/.." || exit 1
export GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}"
if ! /usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks python3-yaml / python3-jsonschema (make deps installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
exec /usr/bin/python3 tests/reliability_test.py "$@"
