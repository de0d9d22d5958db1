#!/usr/bin/env bash
# cpu-engine.sh - `make bench` part: the CPU backend on a 1M-node generated road graph (generation,
# one-to-all SSSP, point-to-point Dijkstra / bidirectional / A*, 100x100 table on all threads and
# on one) and APSP (blocked Floyd-Warshall) on a 2,000-node graph with and without next hops, plus
# SSSP time vs graph size (10k..1M) as a table and an SVG plot (gnuplot, when installed).
# Medians over BENCH_REPS runs (default 5). Extra bench_cpu flags: BENCH_CPU_ARGS (e.g.
# "--threads 16"). Writes bench/results/DATE-MACHINE-cpu-engine.md (+ -cpu-sssp-scaling.svg).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
BIN=$BUILD/bench/bench_cpu
[ -x "$BIN" ] || { echo "cpu-engine: $BIN not built (make BUILD=$BUILD all)"; exit 1; }
REPS=${BENCH_REPS:-5}
SIZES=${BENCH_SCALING:-10000,30000,100000,300000,1000000}
out=$(bench_out cpu-engine)
svg=${out%-cpu-engine.md}-cpu-sssp-scaling.svg
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086  # BENCH_CPU_ARGS is a list of flags
cmd="$BIN --graph gen:1000000:1 --apsp-graph gen:2000:1 --reps $REPS --pairs 20 --table 100 --scaling $SIZES ${BENCH_CPU_ARGS:-}"
bench_header "$out" "CPU engine: SSSP, point-to-point, table, APSP" "$cmd"
{
  echo "Baselines: p2p rows compare with plain Dijkstra (early exit); the multi-threaded table and"
  echo "APSP compare with the same work on one thread. A* uses the great-circle bound (haversine"
  echo "metres x the smallest weight per metre over all arcs). Every timed answer is cross-checked"
  echo "against Dijkstra inside the program."
  echo
} >>"$out"
# shellcheck disable=SC2086
if ! $cmd --scaling-out "$tmp/scaling.dat" >"$tmp/body.md"; then
  echo "cpu-engine: bench_cpu failed"; cat "$tmp/body.md"; exit 1
fi
cat "$tmp/body.md" >>"$out"
if command -v gnuplot >/dev/null 2>&1 && [ -s "$tmp/scaling.dat" ]; then
  gnuplot <<GP
set terminal svg size 640,400 dynamic font "sans,11"
set output "$svg"
set title "CPU one-to-all Dijkstra (1 thread) on generated road graphs"
set xlabel "nodes"; set ylabel "seconds (median)"
set logscale xy; set grid; set key left top
plot "$tmp/scaling.dat" using 1:2:3:4 with yerrorlines title "SSSP median (min..max)"
GP
  { echo; echo "Plot: [$(basename "$svg")]($(basename "$svg"))"; } >>"$out"
fi
echo "wrote $out"
