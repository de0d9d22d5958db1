#!/usr/bin/env bash
# gpu-netops.sh - `make bench-gpu` part: routing tables (all-pairs distances on the GPU + ECMP
# next-hop sets on the host threads) for every router of the largest real topologies and of
# generated 1,000 and 10,000-router networks, every table checked against the CPU backend's, and
# cost-change recompute on the GPU (incremental SSSP rows vs full APSP). Target: <= 10 ms for
# 1,000 routers including ECMP sets. Writes bench/results/DATE-MACHINE-gpu-netops.md.
# Env: BUILD, GPATH_DATA (default ../shared/data), BENCH_REPS (default 10), GPATH_COMMIT.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
BIN=$BUILD/bench/bench_netops
[ -x "$BIN" ] || { echo "gpu-netops: $BIN not built (make BUILD=$BUILD all)"; exit 1; }
REPS=${BENCH_REPS:-10}
real=()
for f in "$DATA/topology-zoo/graphml/Kdl.graphml" "$DATA/rocketfuel/weights-dist/1239/weights.intra"; do
  [ -e "$f" ] && real+=("$f")
done
out=$(bench_out gpu-netops)
bench_header "$out" "Routing tables with ECMP (GPU all-pairs)" "bash bench/gpu-netops.sh"
{
  echo "Distances: the engine's all-pairs on the GPU (blocked Floyd-Warshall, result copied to the"
  echo "host); ECMP sets extracted on all host cores. 'total' = distances + ECMP for every router."
  echo "Cost changes as in cpu-netops ('incr': affected sources by GPU SSSP; 'full': GPU APSP)."
  echo "Every table is compared with the CPU backend's (Dijkstra) before timing is reported."
  echo
} >>"$out"
rc=0
# log lines go to stderr, tables to the results file
"$BIN" --backend cuda --reps "$REPS" --changes 5 --check 1 "${real[@]}" router:1000:1 >>"$out" || rc=1
echo >>"$out"
"$BIN" --backend cuda --reps 3 --changes 1 --check 1 router:10000:1 >>"$out" || rc=1
cat "$out"
echo "wrote $out"
exit $rc
