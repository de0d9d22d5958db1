#!/usr/bin/env bash
# test_osrm_exclude.sh - exclude= equal to the real OSRM's on Liechtenstein and Monaco (issue 30;
# tests/osrm_exclude.py: median |duration difference| <= 3%). Skips with a message without the
# OSRM tarball (../shared/peers/osrm) or the extract (make data); OSRM's data is kept under
# $BUILD/osrm-quality, shared with tests/test_osrm_quality.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
exec python3 tests/osrm_exclude.py "$PWD/$BUILD/gpath" "$PWD/$BUILD/osrm-quality" "${GPATH_DATA:-$PWD/data}"
