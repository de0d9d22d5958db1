#!/usr/bin/env bash
# cpu-osm.sh - `make bench` part: OpenStreetMap import (graph/osm.c) and snapshots.
#  1. The two OSM readers on the same files (bench/osm_readers.c): libosmium vs readosm.
#  2. `gpath import` (car profile) of Liechtenstein ($GPATH_DATA/osm, skipped when absent) and of
#     generated city grids of 1 M and 10 M nodes (bench/gen_osm.py -> osmium cat -> .osm.pbf;
#     BENCH_OSM_SIZES overrides, e.g. "1000000"): wall time and peak RSS (/usr/bin/time -v), the
#     import's phases, the graph's size against the input (OSRM's view: nodes and edges after
#     compression vs the OSM nodes the ways reference).
#  3. Loading the snapshot (`gpath info --graph X.gpath`, process start included) against
#     building from the .osm.pbf again: medians of BENCH_REPS runs (default 3).
# Writes bench/results/DATE-MACHINE-cpu-osm.md.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
BIN=$BUILD/gpath
READERS=$BUILD/bench/osm_readers
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
REPS=${BENCH_REPS:-3}
SIZES=${BENCH_OSM_SIZES:-1000000 10000000}
for x in "$BIN" "$READERS"; do [ -x "$x" ] || { echo "cpu-osm: $x not built"; exit 1; }; done
command -v osmium >/dev/null || { echo "cpu-osm: osmium-tool missing (deploy/install-deps.sh)"; exit 1; }
[ -x /usr/bin/time ] || { echo "cpu-osm: /usr/bin/time missing (Debian package time)"; exit 1; }
out=$(bench_out cpu-osm)
tmp=${BENCH_TMP:-$(mktemp -d)}; trap 'rm -rf "$tmp"' EXIT

bench_header "$out" "OSM import, snapshots and readers" "bash bench/cpu-osm.sh (sizes: $SIZES)"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores shared with other engineers' builds)" >>"$out"
echo >>"$out"

inputs=()
if [ -r "$DATA/osm/liechtenstein-latest.osm.pbf" ]; then
  inputs+=("liechtenstein:$DATA/osm/liechtenstein-latest.osm.pbf")
fi
for n in $SIZES; do
  echo "generating $n nodes"
  python3 bench/gen_osm.py "$n" "$tmp/g$n.osm" 1 >"$tmp/gen.log" || { echo "gen_osm failed"; exit 1; }
  osmium cat "$tmp/g$n.osm" -o "$tmp/g$n.osm.pbf" --overwrite || exit 1
  inputs+=("grid-$n:$tmp/g$n.osm.pbf")
done

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

{
  echo "## 1. Readers: libosmium vs readosm"
  echo
  echo "Same work per object in both (count, look at every tag key, sum way node references);"
  echo "median of $REPS passes."
  echo
  echo "| file | reader | seconds | objects/s | nodes | ways | relations | way node refs |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
} >>"$out"
for inp in "${inputs[@]}"; do
  name=${inp%%:*} f=${inp#*:}
  "$READERS" "$f" "$REPS" | sed "s/^| /| $name .osm.pbf | /" >>"$out"
done
# XML: the smallest generated grid only (the XML of 10 M nodes is ~0.8 GB)
first=${SIZES%% *}
if [ -r "$tmp/g$first.osm" ]; then
  "$READERS" "$tmp/g$first.osm" "$REPS" | sed "s/^| /| grid-$first .osm (XML) | /" >>"$out"
fi

{
  echo
  echo "## 2. Import (car profile) and graph size"
  echo
  echo "| input | .osm.pbf MB | import s | peak RSS MB | OSM nodes | way node refs | graph nodes | arcs | shape points | graph nodes / way node refs | snapshot MB |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} >>"$out"
phases=""
for inp in "${inputs[@]}"; do
  name=${inp%%:*} f=${inp#*:}
  if ! /usr/bin/time -v "$BIN" import "$f" --profile car -o "$tmp/$name.gpath" >"$tmp/imp.json" 2>"$tmp/imp.err"; then
    echo "cpu-osm: import of $f failed"; cat "$tmp/imp.err"; exit 1
  fi
  wall=$(sed -nE 's/.*Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (.*)/\1/p' "$tmp/imp.err" |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
  rss=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$tmp/imp.err")
  osmn=$(sed -nE 's/.*read ([0-9]+) nodes,.*/\1/p' "$tmp/imp.err")
  gl=$(grep -E '\] graph: ' "$tmp/imp.err")
  gn=$(echo "$gl" | sed -nE 's/.*graph: ([0-9]+) nodes.*/\1/p')
  ga=$(echo "$gl" | sed -nE 's/.* ([0-9]+) arcs.*/\1/p')
  gs=$(echo "$gl" | sed -nE 's/.* ([0-9]+) shape points.*/\1/p')
  refs=$(echo "$gl" | sed -nE 's/.*from ([0-9]+) way node references.*/\1/p')
  pbf=$(stat -c %s "$f"); snap=$(stat -c %s "$tmp/$name.gpath")
  echo "| $name | $(awk "BEGIN {printf \"%.1f\", $pbf / 1e6}") | $wall | $(awk "BEGIN {printf \"%.0f\", $rss / 1024}") | $osmn | $refs | $gn | $ga | $gs | $(awk "BEGIN {printf \"%.3f\", $gn / $refs}") | $(awk "BEGIN {printf \"%.1f\", $snap / 1e6}") |" >>"$out"
  phases+=$'\n'"$name:"$'\n'"$(grep -E '^\[(osm|import)' "$tmp/imp.err" | sed 's/^/    /')"
done
{
  echo
  echo "Import progress lines (phases with elapsed time):"
  echo
  echo '```text'
  echo "${phases#$'\n'}"
  echo '```'
  echo
  echo "## 3. Snapshot load vs import"
  echo
  echo "Seconds for \`gpath info\` (process start, load, one JSON line), median of $REPS runs."
  echo
  echo "| input | from .osm.pbf s | from .gpath s | speed-up |"
  echo "| --- | ---: | ---: | ---: |"
} >>"$out"
for inp in "${inputs[@]}"; do
  name=${inp%%:*} f=${inp#*:}
  tp=$(for _ in $(seq "$REPS"); do /usr/bin/time -f %e "$BIN" info --graph "$f" 2>&1 >/dev/null | tail -1; done | median)
  ts=$(for _ in $(seq "$REPS"); do /usr/bin/time -f %e "$BIN" info --graph "$tmp/$name.gpath" 2>&1 >/dev/null | tail -1; done | median)
  echo "| $name | $tp | $ts | $(awk "BEGIN {printf \"%.1fx\", $tp / ($ts > 0 ? $ts : 0.01)}") |" >>"$out"
done
echo "wrote $out"
