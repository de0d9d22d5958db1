#!/usr/bin/env bash
# gpu-match.sh - map matching (issue 33 item 5): gpath vs OSRM v6 CH on the same OSM file and the
# same generated traces (bench/match_bench.py has the method): quality at noise 5/10/20 m x
# sampling 1/5/15/30 s, single-trace latency p50 for 100 and 1,000 points, batch throughput in
# GPS points per second for 10,000 traces on Liechtenstein and on the generated 1M-intersection
# grid (bench/gen_osm_grid.py; gpath only there: osrm-contract takes over 10 minutes on it). With
# BACKEND=cuda the Liechtenstein batch runs twice: on the GPU path (gpu_match_min_traces) and on a
# second server that keeps batches on the CPU, with both answers to one request compared.
# Writes bench/results/DATE-MACHINE-match.md (bench/lib.sh). About 5 minutes on 16 cores.
#   env: BUILD (build), GPATH_DATA (../shared/data), OSRM_TARBALL (../shared/peers/osrm/...),
#        BACKEND (cuda), GEN_OSM (the 1M grid's file; made under the work directory when absent;
#        "none" skips it), MATCH_TRACES (40 routes per quality setting), MATCH_BATCH (10000),
#        MATCH_OSRM_BATCH (2000 of them sent to OSRM), MATCH_LATENCY (30 traces per size),
#        MATCH_WORK (/tmp/gpath-match-bench: OSRM's unpacked release and extracts, cached)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpath
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
TARBALL=${OSRM_TARBALL:-$(cd .. && pwd)/shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz}
WORK=${MATCH_WORK:-/tmp/gpath-match-bench}
LIE=$DATA/osm/liechtenstein-latest.osm.pbf
[ -x "$BIN" ] || { echo "gpu-match: no $BIN (make all first)"; exit 1; }
[ -f "$LIE" ] || { echo "gpu-match: no $LIE"; exit 1; }
mkdir -p "$WORK"
GEN=${GEN_OSM:-$WORK/gen1m.osm}
if [ "$GEN" != none ] && [ ! -f "$GEN" ]; then
  t0=$(date +%s)
  /usr/bin/python3 bench/gen_osm_grid.py 1000000 1 "$GEN.tmp" && mv "$GEN.tmp" "$GEN"
  echo "gpu-match: generated $GEN in $(( $(date +%s) - t0 )) s"
fi
out=$(bench_out match)
cmd="bash bench/gpu-match.sh"
for v in BACKEND GEN_OSM MATCH_TRACES MATCH_BATCH MATCH_OSRM_BATCH MATCH_LATENCY; do
  [ -n "${!v:-}" ] && cmd="$v=${!v} $cmd"
done
bench_header "$out" "Map matching: gpath vs OSRM v6 (CH)" "$cmd"
args=(--bin "$BIN" --osm "$LIE" --work "$WORK" --out "$out" --backend "${BACKEND:-cuda}"
  --traces "${MATCH_TRACES:-40}" --batch "${MATCH_BATCH:-10000}"
  --osrm-batch "${MATCH_OSRM_BATCH:-2000}" --latency "${MATCH_LATENCY:-30}")
[ "$GEN" != none ] && args+=(--gen1m "$GEN")
[ -f "$TARBALL" ] && args+=(--tarball "$TARBALL")
t0=$(date +%s)
/usr/bin/python3 bench/match_bench.py "${args[@]}"
echo "- total: $(( $(date +%s) - t0 )) s" >>"$out"
echo "gpu-match: wrote $out"
cat "$out"
