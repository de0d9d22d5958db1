#!/usr/bin/env bash
# gpu-planning.sh - `make bench-gpu` part: exhaustive single-link and single-router failure
# analysis with a full random demand matrix (every ordered router pair) on Topology Zoo's largest
# graphs (Kdl, Cogentco, Colt), Rocketfuel AS1239 and generated networks of 1,000 routers / 5,000
# links, 5,000 / 25,000 and 10,000 / 50,000 (bench/bench_planning.c): the incremental and the full
# strategy on the same scenarios (checked equal), the base link-load pass on the GPU against the
# CPU's (checked equal), and the gpu strategy (batches of scenarios on the device) on every
# scenario, checked equal to the incremental results. Goal: every single-link failure of 1,000
# routers / 5,000 links in <= 1 s.
# Writes bench/results/DATE-MACHINE-planning.md.
# Env: BUILD, GPATH_DATA (default ../shared/data), GPATH_COMMIT, PLANNING_SMALL=1 (a small CPU run:
# AS1239 and a 200-router network, a sample of the scenarios), PLANNING_MAX (scenarios run per kind
# on the large networks, the rest extrapolated; default 2000), PLANNING_FULL_MAX (default 100),
# PLANNING_SECONDS (time per strategy and kind before extrapolating; default 10), PLANNING_GPU_MAX
# (scenarios run per kind on the GPU; default all), PLANNING_GOAL=1 (only the goal network,
# 1,000 routers / 5,000 links: the GPU on every scenario, the CPU strategies a 3 s sample; the
# exit status says whether all single-link failures took <= 1 s on the GPU and matched),
# PLANNING_GEN (the generated networks, default the three above).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
BIN=$BUILD/bench/bench_planning
[ -x "$BIN" ] || { echo "gpu-planning: $BIN not built (make BUILD=$BUILD all)"; exit 1; }
MAX=${PLANNING_MAX:-2000}
SECS=${PLANNING_SECONDS:-10}
FULL=${PLANNING_FULL_MAX:-100}
real=()
for f in "$DATA/topology-zoo/graphml/Kdl.graphml" "$DATA/topology-zoo/graphml/Cogentco.graphml" \
         "$DATA/topology-zoo/graphml/Colt.graphml" "$DATA/rocketfuel/weights-dist/1239/weights.intra"; do
  [ -e "$f" ] && real+=("$f")
done
# PLANNING_GEN: the generated networks (default all three), e.g. "mesh:10000:50000:1" alone
read -r -a gen <<<"${PLANNING_GEN:-mesh:1000:5000:1 mesh:5000:25000:1 mesh:10000:50000:1}"
if [ "${PLANNING_SMALL:-0}" = 1 ]; then
  real=()
  [ -e "$DATA/rocketfuel/weights-dist/1239/weights.intra" ] && real=("$DATA/rocketfuel/weights-dist/1239/weights.intra")
  gen=(mesh:200:1000:1)
  MAX=${PLANNING_MAX:-100}
  FULL=${PLANNING_FULL_MAX:-10}
fi
GPUMAX=${PLANNING_GPU_MAX:-1000000}
if [ "${PLANNING_GOAL:-0}" = 1 ]; then
  real=()
  gen=(mesh:1000:5000:1)
  SECS=${PLANNING_SECONDS:-3}
  FULL=${PLANNING_FULL_MAX:-16}
fi
out=$(bench_out planning)
knobs=$(env | grep -E '^PLANNING_' | sort | tr '\n' ' ')
bench_header "$out" "Exhaustive failure analysis with ECMP link loads" "${knobs}bash bench/gpu-planning.sh"
{
  echo "Demands: every ordered pair of routers, volumes uniform in [0, 10) Mbit/s (seeded); links"
  echo "without a capacity in the file get 10 Gbit/s. 'tables': all-pairs distances + ECMP sets on"
  echo "the engine's backend. 'base load': one ECMP load pass over every destination (CPU threads;"
  echo "GPU: kernels/planload.cu, device time, checked equal to the CPU's). Failure scenarios on"
  echo "the CPU threads: 'incremental' recomputes only the destinations whose shortest-path DAG the"
  echo "failure touches, 'full' every destination; both on the same scenarios, checked equal. At"
  echo "most $MAX scenarios per kind run ($FULL for full); 'est.' = extrapolated to all of them."
  echo "'GPU s': the gpu strategy (the touched destinations of batches of scenarios, one thread"
  echo "block each: the column of the routers the failure cuts off, the traffic moved from the"
  echo "base flows, changed pairs; worst links on the device) on at most $GPUMAX scenarios per"
  echo "kind, wall time with the base loads and the copies; 'kernel s' the device time (base flows"
  echo "and scenario kernels); checked equal to the incremental results of the scenarios both ran."
  echo
} >>"$out"
rc=0
# the tables on the GPU when there is one (the scenarios run on the CPU threads either way)
b=cpu
"$BIN" --backend cuda >/dev/null 2>&1 && b=cuda
"$BIN" --backend "$b" --max-scenarios "$MAX" --full-max "$FULL" --seconds "$SECS" \
  --gpu-max "$GPUMAX" "${real[@]}" "${gen[@]}" >>"$out" || rc=1
if [ "${PLANNING_GOAL:-0}" = 1 ]; then
  # the links row: column 13 is "GPU s (all)"
  gs=$(awk -F'|' '$5 ~ /links/ {gsub(/ /, "", $14); print $14}' "$out" | tail -1)
  echo "goal: every single-link failure of 1,000 routers / 5,000 links on the GPU: ${gs:-none} s (<= 1 s)"
  awk -v x="${gs:-}" 'BEGIN { exit !(x != "" && x != "-" && x + 0 <= 1) }' || rc=1
fi
cat "$out"
echo "wrote $out"
exit $rc
