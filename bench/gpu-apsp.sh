#!/usr/bin/env bash
# gpu-apsp.sh [LAB ARGS] | --plot RESULTS.md - the GPU all-pairs benchmark (`make bench-gpu` runs it): the kernel lab
# bench/lab_fw validates every matrix kind against the CPU backend, then times the blocked
# Floyd-Warshall (T min-plus updates/s = n^3 / time, median of 3, CUDA events), the n = 12,500
# seed-thesis case and the CPU backend's Floyd-Warshall for the ratio. Also records whether the
# min-plus kernels use the DPX instruction (cuobjdump) and, when compute-sanitizer exists (or
# GPATH_SANITIZE=1), a memcheck of the small validation cases. Writes
# bench/results/DATE-MACHINE-gpu-apsp.md (bench/lib.sh; GPATH_COMMIT names the commit where .git
# is absent).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
. bench/lib.sh
# plot RESULTS.md: an SVG of T updates/s against n (u32, u32+next, u16) beside it, when gnuplot exists
plot() {
  command -v gnuplot >/dev/null 2>&1 || { echo "gpu-apsp: no gnuplot, no plot"; return 0; }
  local md=$1 svg=${1%.md}.svg dat
  dat=$(mktemp -d)
  for m in u32 u32+next u16; do
    awk -F'|' -v m="$m" '{gsub(/ /, "", $2)} $2 == m && !seen[$3]++ {print $3, $7}' "$md" >"$dat/$m"
  done
  gnuplot <<EOF2
set terminal svg size 720,420 dynamic
set output "$svg"
set title "Blocked Floyd-Warshall on the GPU ($(basename "$md" .md))"
set xlabel "n (nodes)"
set ylabel "T min-plus updates/s (n**3 / time)"
set key right bottom
set grid
set yrange [0:*]
set xrange [0:34000]
plot "$dat/u32" using 1:2 with linespoints title "u32, distances", \
     "$dat/u32+next" using 1:2 with linespoints title "u32, distances + next hops", \
     "$dat/u16" using 1:2 with linespoints title "u16x2 (path lengths < 0x7fff)", \
     16.5 with lines lw 2 lc rgb "#999999" title "H100 int32 min-plus ceiling (16.5)", \
     13 with lines lw 1 lc rgb "#cc0000" title "target (13)"
EOF2
  rm -rf "$dat"
  echo "wrote $svg"
}
if [ "${1:-}" = "--plot" ]; then plot "$2"; exit $?; fi
BUILD=${BUILD:-build}
LAB=${LAB:-$BUILD/bench/lab_fw}
CUDA=${CUDA:-/usr/local/cuda}
if [ ! -x "$LAB" ]; then
  echo "gpu-apsp: $LAB is not built (a CUDA build: make BUILD=$BUILD all)"; exit 1
fi
out=$(bench_out gpu-apsp)
bench_header "$out" "GPU all-pairs shortest paths: blocked Floyd-Warshall (kernel lab)" "$LAB $*"
log=$(mktemp); trap 'rm -f "$log" "$log.san"' EXIT
"$LAB" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
{
  echo "## Throughput (T min-plus updates/s = n^3 / median solve time)"
  echo
  grep '^|' "$log"
  echo
  echo "## End to end and the CPU backend"
  echo
  grep -E '^api ' "$log" | sed 's/^/- /'
  echo
  echo "## Where the time goes (one profiled solve each)"
  echo
  grep -E '^phases ' "$log" | sed 's/^/- /'
  echo
  echo "## Validation"
  echo
  grep -E '^validation:|^FAIL|^too big' "$log" | sed 's/^/- /'
  echo
  sass=$(command -v cuobjdump || echo "$CUDA/bin/cuobjdump")
  if [ -x "$sass" ]; then
    echo "## SASS (cuobjdump -sass $LAB)"
    echo
    "$sass" -sass "$LAB" | awk '/Function :/ {f=$3} /VIADDMNMX/ {c[f]++} END {for (k in c) print "- " k ": " c[k] " VIADDMNMX"}' | sort
    echo
  fi
} >>"$out"
san=$(command -v compute-sanitizer || echo "$CUDA/bin/compute-sanitizer")
if [ -x "$san" ] || [ "${GPATH_SANITIZE:-0}" = 1 ]; then
  echo "=== compute-sanitizer --tool memcheck $LAB --sanitize"
  "$san" --tool memcheck --leak-check full "$LAB" --sanitize >"$log.san" 2>&1
  src=$?
  tail -5 "$log.san"
  {
    echo "## compute-sanitizer memcheck ($LAB --sanitize: n = 1 to 300, every kind)"
    echo
    echo "exit status $src"
    echo '```'
    grep -E 'ERROR SUMMARY|LEAK SUMMARY|validation:|failures' "$log.san"
    echo '```'
    echo
  } >>"$out"
  [ "$src" -eq 0 ] || rc=1
fi
{
  echo "## Full lab output"
  echo
  echo '```'
  cat "$log"
  echo '```'
} >>"$out"
echo "wrote $out"
plot "$out"
exit "$rc"
