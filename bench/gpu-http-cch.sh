#!/usr/bin/env bash
# gpu-http-cch.sh - HTTP route throughput on DIMACS BAY through the CCH (part of `make bench-gpu`,
# run on the GPU machine for its 16 cores): bench/cpu-http.sh serving BAY with random node pairs,
# keep-alive and one request per connection, 1..64 connections. Route AUTO answers through the
# CCH on the CPU (the GPU serves PHAST / RPHAST). Writes bench/results/DATE-MACHINE-http-cch.md.
#   env: BUILD, GPATH_DATA (default ../shared/data), GPATH_BENCH_SECONDS (10), GPATH_COMMIT,
#        GPATH_BENCH_WRK_THREADS (default a quarter of the CPUs, at least 2: wrk and the server share
#        the machine; on 16 CPUs wrk gets 4 threads, 16 connections each at 64, and the server's
#        default pool of 2 x CPUs HTTP workers the rest. wrk spends far less per request than the
#        server, whose accepting thread spreads the connections over its workers).
set -eu
cd "$(dirname "$0")/.."
DATA=${GPATH_DATA:-../shared/data}
bay=$DATA/dimacs/USA-road-d.BAY.gr.gz
[ -f "$bay" ] || { echo "gpu-http-cch: $bay is missing (make data)"; exit 1; }
GPATH_BENCH_SPEC="dimacs:$bay" GPATH_BENCH_NODES=321270 \
  GPATH_BENCH_SUBJECT=http-cch GPATH_BENCH_SERVE_ARGS="--max-connections-per-ip 0" GPATH_BENCH_SECONDS=${GPATH_BENCH_SECONDS:-10} \
  GPATH_BENCH_CONNS="1 16 64" GPATH_BENCH_MODES="keepalive close" \
  GPATH_BENCH_WRK_THREADS=${GPATH_BENCH_WRK_THREADS:-$(nproc | awk '{ t = int($1 / 4); print (t < 2 ? 2 : t) }')} \
  bash bench/cpu-http.sh
