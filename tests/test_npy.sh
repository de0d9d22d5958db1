#!/usr/bin/env bash
# test_npy.sh - tables as NumPy .npy arrays, streamed in blocks (tests/npy_test.py, which skips
# when Debian's python3 lacks numpy, yaml or jsonschema).
cd "$(dirname "$0")/.." || exit 1
GPATH_BIN="${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}" exec /usr/bin/python3 tests/npy_test.py
