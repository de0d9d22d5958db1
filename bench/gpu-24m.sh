#!/usr/bin/env bash
# gpu-24m.sh - the road-like 24M map for issues 30 and 33 in one import (about 15 minutes of
# device time on the two-GPU H200 machine: its server needs more than 128 GiB of host memory):
# the map is generated (`gpath gen --osm`, then osmium to .osm.pbf: about 155 s) unless present,
# then bench/gpu-traffic.sh runs on it with the match batch first (BENCH_MATCH=1, one server
# for both), the goal of 250 ms named, no OSRM (osrm-contract on 24M takes far longer than a
# device call) and no exclude metrics. Run it in the background across device calls:
#   bash bench/bg.sh start g24 -- bash bench/gpu-24m.sh
#   bash bench/bg.sh wait g24 560      # in this call and the next ones until "exit 0"
# and carry nothing in those later calls (a carried folder replaces the one the job runs from).
# The match batch alone on 16 of the two-GPU machine's 32 cores, as on issue 33's 16-core host
# (this server held 86-96 GiB after start-up, the one-GPU machine has 128):
#   bash bench/bg.sh start g24 -- env BENCH_MATCH_ONLY=1 taskset -c 0-15 bash bench/gpu-24m.sh
# Issue 34's matrices on the same map, one server (about 90 GiB: it fits the one-GPU machine),
# gpu-matrix.sh's 1,000 / 10,000 / 50,000 tables (the last run once), no job, order nd (the
# service's default) unless BENCH_CCH_ORDER says otherwise:
#   bash bench/bg.sh start m24 -- env BENCH_24M_MATRIX=1 bash bench/gpu-24m.sh
#   env: BUILD (build), GEN24M_NODES (24000000), GEN24M_DIR (/tmp/gpath-24m), BENCH_CCH_ORDER
#        (flow: the turn graph's order with Inertial Flow parts, about 5x nd's CPU time on
#        road-like 1M; nd for the default order), BENCH_SPARE_MB (32768: the server's
#        cch_spare_max_mb, so that the turn graph's CCH (22 GB of weights and witnesses) gets its
#        prepared set and the first speed files restore lists), BENCH_SECONDS (30:
#        a speed file's version took 6-14 s on 24M on 2026-11-30, and each second waits for one),
#        BENCH_LOG_LEVEL (debug), and gpu-traffic.sh's own
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${GEN24M_NODES:-24000000}
dir=${GEN24M_DIR:-/tmp/gpath-24m}
map=$dir/gen$((N / 1000000))m.osm.pbf
[ "$N" -ge 1000000 ] || map=$dir/gen$((N / 1000))k.osm.pbf
mkdir -p "$dir"
if [ ! -s "$map" ]; then
  t0=$(date +%s)
  "$BUILD/gpath" gen -q -n "$N" --osm "$dir/map.osm"
  osmium cat "$dir/map.osm" -o "$map.tmp" -f pbf -O && mv "$map.tmp" "$map"
  rm -f "$dir/map.osm"
  echo "gpu-24m: generated $(basename "$map") ($(du -h "$map" | cut -f1)) in $(($(date +%s) - t0)) s"
fi
if [ "${BENCH_24M_MATRIX:-0}" = 1 ]; then
  BENCH_MATRIX_SIZES=${BENCH_MATRIX_SIZES:-1000 10000 50000} BENCH_JOB_SIZE=${BENCH_JOB_SIZE:-0} \
    BENCH_ONE_RUN_FROM=${BENCH_ONE_RUN_FROM:-50000} BENCH_READY_S=${BENCH_READY_S:-1500} \
    BENCH_TAG=${BENCH_TAG:-gen24m} BENCH_LOG_LEVEL=${BENCH_LOG_LEVEL:-debug} \
    BENCH_SERVER_ARGS="--cch-order ${BENCH_CCH_ORDER:-nd}${BENCH_SERVER_ARGS:+ $BENCH_SERVER_ARGS}" \
    exec bash bench/gpu-matrix.sh "$map"
fi
BENCH_CCH_ORDER=${BENCH_CCH_ORDER:-flow} BENCH_SPARE_MB=${BENCH_SPARE_MB:-32768} BENCH_SECONDS=${BENCH_SECONDS:-30} BENCH_MATCH=1 BENCH_P99_GOAL=${BENCH_P99_GOAL:-250} BENCH_READY_S=${BENCH_READY_S:-1500} \
  BENCH_OSRM=${BENCH_OSRM:-0} BENCH_EXCLUDE=${BENCH_EXCLUDE:-0} \
  BENCH_LOG_LEVEL=${BENCH_LOG_LEVEL:-debug} bash bench/gpu-traffic.sh "$map"
