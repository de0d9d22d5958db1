#!/usr/bin/env bash
# cpu-cch.sh - `make bench` part: the CCH on the CPU (bench/bench_cch.c): order and contraction
# time and memory, customization (all threads, and after 1% of the costs change), p2p with path
# unpacking, PHAST one-to-all and bucket tables beside the CPU backend's Dijkstra family, on DIMACS
# NY and BAY (from GPATH_DATA, default ../shared/data), road-like gen: and grid-like grid: graphs. Medians over
# BENCH_REPS runs (default 5). Writes bench/results/DATE-MACHINE-cpu-cch.md.
# Perfect customization instead (its cost, the arcs it keeps, p2p with and without the pruned arcs):
#   CPU_CCH_FLAGS="--p2p-only --perfect-ab" CPU_CCH_GRAPHS=gen:1000000 CPU_CCH_SUBJECT=cch-perfect
#   bash bench/cpu-cch.sh
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
BIN=$BUILD/bench/bench_cch
[ -x "$BIN" ] || { echo "cpu-cch: $BIN not built (make BUILD=$BUILD all)"; exit 1; }
DATA=${GPATH_DATA:-../shared/data} # relative: results files name no path of the machine
graphs=()
for f in USA-road-d.NY.gr.gz USA-road-d.BAY.gr.gz; do
  [ -f "$DATA/dimacs/$f" ] && graphs+=("$DATA/dimacs/$f")
done
# shellcheck disable=SC2206  # CPU_CCH_GRAPHS is a list of specs
graphs+=(${CPU_CCH_GRAPHS:-gen:1000000 grid:10000 grid:30000})
out=$(bench_out "${CPU_CCH_SUBJECT:-cpu-cch}")
cmd="$BIN --reps ${BENCH_REPS:-5} ${CPU_CCH_FLAGS:+$CPU_CCH_FLAGS }${graphs[*]}"
bench_header "$out" "CCH on the CPU: preprocessing, customization, p2p, PHAST, buckets" "$cmd"
# shellcheck disable=SC2086
$cmd | tee -a "$out"
rc=${PIPESTATUS[0]}
echo "wrote $out"
exit "$rc"
