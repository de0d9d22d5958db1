#!/usr/bin/env bash
# cpu-netops.sh - `make bench` part: routing tables (all-pairs distances + ECMP next-hop sets) for
# every router of the largest real topologies (Topology Zoo Kdl, Rocketfuel AS1239) and of generated
# router-like networks of 1,000 and 10,000 routers on the CPU backend, plus cost-change recompute
# (incremental vs full, checked equal). Writes bench/results/DATE-MACHINE-cpu-netops.md.
# Env: BUILD, GPATH_DATA (default ../shared/data), BENCH_REPS (default 5).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
BIN=$BUILD/bench/bench_netops
[ -x "$BIN" ] || { echo "cpu-netops: $BIN not built (make BUILD=$BUILD all)"; exit 1; }
REPS=${BENCH_REPS:-5}
real=()
for f in "$DATA/topology-zoo/graphml/Kdl.graphml" "$DATA/rocketfuel/weights-dist/1239/weights.intra"; do
  [ -e "$f" ] && real+=("$f")
done
out=$(bench_out cpu-netops)
bench_header "$out" "Routing tables with ECMP (CPU backend)" "bash bench/cpu-netops.sh"
{
  echo "Distances: one Dijkstra per router on the CPU backend's threads (sparse graphs; Floyd-Warshall"
  echo "is kept for dense ones). ECMP: next-hop sets of every (router, destination) pair from the"
  echo "distance rows. Cost changes: single random links, cost x4+1 (up), cost 1 (down), removed"
  echo "(link down); 'incr' recomputes only the affected sources' rows (SSSP) and patches decreases"
  echo "in O(affected rows x columns); 'full' recomputes all pairs. Medians; every incremental result"
  echo "is checked equal to the full one."
  echo
  echo "Real topologies and 1,000 routers ($REPS reps, 5 changes of each kind):"
  echo
} >>"$out"
rc=0
# shellcheck disable=SC2086
"$BIN" --backend cpu --reps "$REPS" --changes 5 --check 0 "${real[@]}" router:1000:1 >>"$out" 2>&1 || rc=1
{
  echo
  echo "10,000 routers (1 rep, 1 change of each kind; 800 MB distance matrix):"
  echo
} >>"$out"
"$BIN" --backend cpu --reps 1 --changes 1 --check 0 router:10000:1 >>"$out" 2>&1 || rc=1
cat "$out"
echo "wrote $out"
exit $rc
