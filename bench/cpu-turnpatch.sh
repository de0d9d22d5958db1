#!/usr/bin/env bash
# cpu-turnpatch.sh - time from a cost change to its first answer with turn costs on and off
# (bench/bench_turnpatch.c: gp_engine_change_links on the CPU backend, then one route; no HTTP),
# on the road-like OSM maps `gpath gen -n N --osm` writes (TURNPATCH_SIZES, default "100000
# 1000000"), one link per change and then 1% of the links per change (TURNPATCH_REPS changes
# each, default 5). CPU only: on a GPU machine the service customizes on the device instead
# (bench/gpu-osrm-cch.sh measures that through HTTP). Writes bench/results/DATE-MACHINE-turnpatch.md.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
BUILD=${BUILD:-build}
for b in gpath bench/bench_turnpatch; do
  [ -x "$BUILD/$b" ] || { echo "cpu-turnpatch: $BUILD/$b not built (make BUILD=$BUILD all)"; exit 1; }
done
# shellcheck disable=SC2206  # a list of sizes
sizes=(${TURNPATCH_SIZES:-100000 1000000})
reps=${TURNPATCH_REPS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(bench_out turnpatch)
cmd="$BUILD/bench/bench_turnpatch --backend cpu --reps $reps [--links L] gen-N.osm"
bench_header "$out" "Cost change to first answer, turn costs on and off (CPU backend, no HTTP)" "$cmd"
{
  echo "CPU-only numbers: the CPU backend customizes the CCH on this machine's $(nproc) cores; the"
  echo "road graph's and the turn graph's new weights, the CCH metric and the partial customization"
  echo "(engine/cch.h gp_cch.prev) run on all of them, the dirty-edge pass on one. Maps: \`gpath gen"
  echo "-n N --osm\` (seed 1). change = the new road graph version; attach = the turn graph's weights,"
  echo "the CCH metric and customization; first answer = one route over the changed link."
  echo
} >>"$out"
rc=0
for n in "${sizes[@]}"; do
  "$BUILD/gpath" gen -n "$n" --osm "$tmp/gen-$n.osm" >/dev/null || { rc=1; continue; }
  m=$("$BUILD/gpath" info "$tmp/gen-$n.osm" 2>/dev/null | sed -nE 's/.*"edges":([0-9]+).*/\1/p')
  onepct=$(( ${m:-100000} / 200 )) # links (two arcs each) = 1% of the arcs
  for links in 1 "$onepct"; do
    printf '\n### gen %s, %s link(s) per change\n\n' "$n" "$links" >>"$out"
    "$BUILD/bench/bench_turnpatch" --backend cpu --reps "$reps" --links "$links" "$tmp/gen-$n.osm" \
      | tee -a "$out" || rc=1
  done
done
echo "wrote $out"
exit "$rc"
