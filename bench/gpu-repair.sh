#!/usr/bin/env bash
# gpu-repair.sh - LFA and TI-LFA repair paths for every router (engine/repair.h, bench/bench_repair.c)
# on Rocketfuel AS1239 and generated 1,000-router / 5,000-link, 5,000-router / 25,000-link and
# 10,000-router / 50,000-link networks, GPU (cuda: base APSP on the GPU, post-convergence trees
# on the host threads) and CPU backend in the same run, each GPU run checked against the CPU's
# distances and coverage first. Goal: TI-LFA for all routers of the 1,000 / 5,000 network in <= 1 s.
# Writes bench/results/DATE-MACHINE-repair.md.
# Env: BUILD, GPATH_DATA (default ../shared/data), BENCH_REPS (default 3), REPAIR_SIZES (default
# "routers:1000:5000:1 routers:5000:25000:1 routers:10000:50000:1"), REPAIR_BACKENDS (default
# "cuda cpu"), GPATH_COMMIT.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
BIN=$BUILD/bench/bench_repair
[ -x "$BIN" ] || { echo "gpu-repair: $BIN not built (make BUILD=$BUILD all)"; exit 1; }
REPS=${BENCH_REPS:-3}
read -r -a sizes <<<"${REPAIR_SIZES:-routers:1000:5000:1 routers:5000:25000:1 routers:10000:50000:1}"
read -r -a backends <<<"${REPAIR_BACKENDS:-cuda cpu}"
real=()
f="$DATA/rocketfuel/weights-dist/1239/weights.intra"
[ -e "$f" ] && real+=("$f")
out=$(bench_out repair)
knobs=$(env | grep -E '^(REPAIR_|BENCH_REPS=)' | sort | tr '\n' ' ')
bench_header "$out" "LFA and TI-LFA repair paths for every router" "${knobs}bash bench/gpu-repair.sh"
{
  echo "APSP: the base all-pairs distances on the backend (GPU blocked Floyd-Warshall with cuda)."
  echo "repairs: for every router, every primary next hop and destination, the LFA and the TI-LFA"
  echo "repair list for link and node protection (post-convergence trees on all host threads);"
  echo "'total' = APSP + repairs, median of $REPS runs after one warm-up. trees = post-convergence"
  echo "shortest-path trees grown; rows = (router, destination, primary next hop) triples."
  echo
} >>"$out"
rc=0
for b in "${backends[@]}"; do
  check=1
  [ "$b" = cpu ] && check=0
  echo "### backend $b" >>"$out"
  # log lines go to stderr, tables to the results file
  "$BIN" --backend "$b" --reps "$REPS" --check "$check" "${real[@]}" "${sizes[@]}" >>"$out" || rc=1
  echo >>"$out"
done
cat "$out"
echo "wrote $out"
exit $rc
