#!/usr/bin/env bash
# test_netops_http.sh - the network-operations endpoints over loopback against a real `gpath serve`
# (tests/netops_http.py): routing tables with ECMP sets, streamed all-router tables, what-if,
# PATCH links, jobs, error answers; and the bandwidth cost rule through the CLI.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-${BUILD:-build}/gpath}
if [ ! -x "$BIN" ]; then echo "SKIP: $BIN not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
GPATH_BIN="$BIN" exec /usr/bin/python3 tests/netops_http.py
