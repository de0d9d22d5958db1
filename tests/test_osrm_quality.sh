#!/usr/bin/env bash
# test_osrm_quality.sh - routes as good as OSRM's (issue 35): bench/osrm_quality.py runs the real
# OSRM v6 (../shared/peers/osrm, car.lua / bicycle.lua / foot.lua, osrm-extract -t 2) and
# `gpath serve` on Monaco and Liechtenstein, 100 random route pairs between road points each, and
# checks the issue's targets, each its own line: median |duration difference| <= 3% (car) and
# <= 5% (bicycle, foot), the same path on >= 90% of car routes, >= 90% of OSRM's roundabout
# maneuvers and >= 85% of its other maneuvers met. Skips with a message without the OSRM tarball
# or the extracts (make data). OSRM's extracts are kept under $BUILD/osrm-quality.
#
# PENDING lists the targets not met yet; they print PENDING with their measured value instead of
# failing (none now: Monaco's other maneuvers reached 86.5%, 84.4% before OSRM's reading of a node
# where two roads meet and its collapsing of a bend after a maneuver, docs/osrm.md). Add an entry
# as MAP/PROFILE/TARGET while work it needs is not merged, drop it once it holds (the script says
# "pending target met" when one passes; --missed lists the maneuvers missed and where).
# Thresholds: OSRM_QUALITY_ARGS, e.g. "--max-duration-median 2 --min-same-path 95".
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
PENDING=""
# shellcheck disable=SC2086
exec python3 bench/osrm_quality.py --gpath "$PWD/$BUILD/gpath" --workdir "$PWD/$BUILD/osrm-quality" \
  --data "${GPATH_DATA:-$PWD/data}" --pending "$PENDING" ${OSRM_QUALITY_ARGS:-}
