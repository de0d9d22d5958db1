#!/usr/bin/env bash
# cpu-cch-order.sh - the CCH order (engine/cch_order.c): one METIS_NodeND call against the parallel
# nested dissection, on DIMACS NY and BAY (from GPATH_DATA, default ../shared/data) and the
# road-like gen:1000000 and gen:4000000 (CCH_ORDER_GRAPHS replaces those two). Part 1,
# bench/cch_order.c: order time (wall; CPU seconds of all the work; the critical path, from which
# the time on 16 threads is predicted), the ranks the same at 1 and all threads, contraction time
# and peak memory, and the quality of each order (CCH edges = fill, triangles = customization
# work, levels). Part 2, bench/bench_cch --p2p-only --order metis and --order nd on NY, BAY
# and gen:1000000: customization time and p2p query work (elimination-tree nodes visited) on each.
# Writes bench/results/DATE-MACHINE-cch-order.md.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
for b in cch_order bench_cch; do
  [ -x "$BUILD/bench/$b" ] || { echo "cpu-cch-order: $BUILD/bench/$b not built (make BUILD=$BUILD all)"; exit 1; }
done
DATA=${GPATH_DATA:-../shared/data} # relative: results files name no path of the machine
dimacs=()
for f in USA-road-d.NY.gr.gz USA-road-d.BAY.gr.gz; do
  [ -f "$DATA/dimacs/$f" ] && dimacs+=("$DATA/dimacs/$f")
done
# shellcheck disable=SC2206  # CCH_ORDER_GRAPHS is a list of specs
gens=(${CCH_ORDER_GRAPHS:-gen:1000000 gen:4000000})
out=$(bench_out cch-order)
cmd1="$BUILD/bench/cch_order --threads 1,$(nproc) ${dimacs[*]} ${gens[*]}"
cmd2="$BUILD/bench/bench_cch --p2p-only --reps 3 --queries 1000 --order"
graphs2="${dimacs[*]} ${gens[0]}"
bench_header "$out" "CCH order: one METIS_NodeND call vs the parallel nested dissection" \
  "$cmd1; for o in metis nd; do $cmd2 \$o $graphs2; done"
{
  echo "## Order, contraction, fill"
  echo
  echo "Wall seconds on a shared machine are noisy; CPU seconds are this process's. The 16-thread"
  echo "time is predicted as max(work / 16, critical path), both in CPU seconds of this machine."
  echo
} >>"$out"
rc=0
# shellcheck disable=SC2086
$cmd1 | tee -a "$out" || rc=1
for o in metis nd; do
  printf '\n## Customization and queries on the %s order (--order %s)\n' "$o" "$o" >>"$out"
  # shellcheck disable=SC2086
  $cmd2 "$o" $graphs2 | tee -a "$out" || rc=1
done
echo "wrote $out"
exit "$rc"
