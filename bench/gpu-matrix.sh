#!/usr/bin/env bash
# gpu-matrix.sh ROADLIKE.osm.pbf [SMALL.osm.pbf] - distance matrices of issue 34 on the GPU
# machine, one table in bench/results/DATE-MACHINE-matrix.md:
#  - ROADLIKE (the road-like 1M map of `gpath gen -n 1000000 --osm`, turn costs on, gpath's
#    default): N x N tables for N in BENCH_MATRIX_SIZES as .npy (POST /v1/graphs/m/table,
#    Accept: application/x-npy) and as JSON where max_table_cells
#    allows (random coordinates in the road bbox, snapped), time to the first and the last byte (median of BENCH_REPS), cells per second, the
#    server's peak RSS (VmHWM) before and after; a matrix job of BENCH_JOB_SIZE x BENCH_JOB_SIZE
#    (submission to the last byte of its result);
#  - SMALL (Liechtenstein) with OSRM v6 CH in the same run (its /table/v1, GET, max-table-size
#    10000): BENCH_OSRM_SIZES, random coordinates in the road bbox, gpath's /table/v1 as .npy;
#  - with BENCH_OSRM_BIG_SIZES, OSRM CH on ROADLIKE too, beside the same gpath server: the file
#    prepared first (osrm-extract, osrm-contract: 16 s + 696 s on 16 cores for road-like 1M; kept
#    in BENCH_STATE_DIR/chbig for a later run on the same file), then those sizes as for SMALL.
# The client (bench/matrix_bench.py) reads every byte and keeps none.
#   env: BUILD (build) or GPATH_BIN, GPATH_BACKEND (cuda), GPATH_COMMIT, BENCH_STATE_DIR
#        (/tmp/gpath-matrix), OSRM_TARBALL (../shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz),
#        BENCH_MATRIX_SIZES ("1000 10000"), BENCH_JOB_SIZE (20000), BENCH_OSRM_SIZES ("1000 5000"),
#        BENCH_REPS (3), BENCH_LOG_LEVEL (warn; debug logs each table's phases), PYTHON (python3),
#        BENCH_SERVER_ARGS (more options for the road-like map's server, e.g. --matrix-block-cells N),
#        BENCH_TAG (the results file's subject: matrix-TAG), BENCH_ONE_RUN_FROM (N x N tables
#        from this N run once instead of BENCH_REPS times: road-like 24M's 50,000 x 50,000),
#        BENCH_READY_S (120: seconds the server may take to be ready; road-like 24M needs minutes),
#        BENCH_OSRM_BIG_SIZES (empty: no OSRM on ROADLIKE), BENCH_GPATH_OSRM_SIZES (empty: gpath's
#        /table/v1 as .npy on ROADLIKE at these sizes without OSRM, whose preparation takes minutes),
#        BENCH_RESULTS_DIR (bench/lib.sh)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/osrm-lib.sh
. bench/osrm-lib.sh
big=${1:-}
small=${2:-}
[ -f "$big" ] || { echo "gpu-matrix: skipped: needs ROADLIKE.osm.pbf (see bench/gpu-matrix.sh)"; exit 0; }
BUILD=${BUILD:-build}
# shellcheck disable=SC2034 # BIN and DEADLINE are read by bench/osrm-lib.sh
BIN=${GPATH_BIN:-$PWD/$BUILD/gpath}
BACKEND=${GPATH_BACKEND:-cuda}
STATE=${BENCH_STATE_DIR:-/tmp/gpath-matrix}
TARBALL=${OSRM_TARBALL:-$(cd .. && pwd)/shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz}
osrm=$STATE/osrm
SIZES=${BENCH_MATRIX_SIZES:-1000 10000}
JOB=${BENCH_JOB_SIZE:-20000}
OSIZES=${BENCH_OSRM_SIZES:-1000 5000}
REPS=${BENCH_REPS:-3}
PYTHON=${PYTHON:-python3}
PY=(env -u LD_LIBRARY_PATH "$PYTHON" bench/matrix_bench.py)
NPROC=$(nproc)
DEADLINE=0
mkdir -p "$STATE"
out=$(bench_out "matrix${BENCH_TAG:+-$BENCH_TAG}")
settings=
for v in BENCH_MATRIX_SIZES BENCH_JOB_SIZE BENCH_OSRM_SIZES BENCH_OSRM_BIG_SIZES BENCH_GPATH_OSRM_SIZES \
  BENCH_REPS BENCH_ONE_RUN_FROM BENCH_SERVER_ARGS BENCH_TAG; do
  [ -n "${!v:-}" ] && settings="$settings$v=\"${!v}\" "
done
bench_header "$out" "Distance matrices: .npy streamed, JSON, matrix jobs, OSRM CH (issue 34)" \
  "${settings}bench/gpu-matrix.sh $(basename "$big") ${small:+$(basename "$small")}"
{
  echo "gpath: \`serve --backend $BACKEND\` (\`--cch on\` for the small map, whose turn graph is under cch_min_nodes),
turn costs on (default for OSM), matrix cache off;"
  echo "client: bench/matrix_bench.py (one request at a time, every byte read, none kept);"
  echo "median of $REPS runs per row (last byte)${BENCH_ONE_RUN_FROM:+, one run from $BENCH_ONE_RUN_FROM x $BENCH_ONE_RUN_FROM}, peak RSS = the server's VmHWM after the row."
  echo
  echo "| map | server | answer | N x N | first byte s | last byte s | MB | cells/s | server peak RSS MB (before -> after) | ratio to OSRM CH |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
} >>"$out"
median_run() { # KIND URL N PID SEED EXTRA -> the RESULT line of the median last_s
  local i lines=() runs=$REPS
  if [ -n "${BENCH_ONE_RUN_FROM:-}" ] && [ "$3" -ge "$BENCH_ONE_RUN_FROM" ]; then runs=1; fi
  for i in $(seq "$runs"); do
    lines+=("$("${PY[@]}" "$1" "$2" "$3" "$4" "$((5 + i))" "$6" | grep '^RESULT' || true)")
  done
  printf '%s\n' "${lines[@]}" | grep 'status=200' |
    sort -t= -k1 | awk '{for(i=1;i<=NF;i++) if ($i ~ /^last_s=/) {split($i,a,"="); print a[2], $0}}' |
    sort -n | awk '{l[NR]=$0} END {if (NR) print l[int((NR+1)/2)]}' | cut -d' ' -f2-
}
field() { echo "$1" | tr ' ' '\n' | sed -nE "s/^$2=//p"; }
row() { # MAP SERVER ANSWER N RESULT [OSRM_LAST]
  local r=$5 ratio=""
  if [ -z "$r" ]; then echo "| $1 | $2 | $3 | $4 | - | failed | | | | |" >>"$out"; return; fi
  [ -n "${6:-}" ] && ratio=$(awk -v a="$6" -v b="$(field "$r" last_s)" 'BEGIN{printf "%.2fx", a/b}')
  echo "| $1 | $2 | $3 | $4 | $(field "$r" first_s) | $(field "$r" last_s) | $(awk -v b="$(field "$r" bytes)" 'BEGIN{printf "%.1f", b/1e6}') | $(awk -v c="$(field "$r" cells_per_s)" 'BEGIN{printf "%.3g", c}') | $(awk -v a="$(field "$r" hwm_before)" -v b="$(field "$r" hwm_after)" 'BEGIN{printf "%.0f -> %.0f", a/1e6, b/1e6}') | $ratio |" >>"$out"
  [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] && cp "$out" "$OUT/" || true
}

osrm_prepare() { # PBF DIR: DIR/map.osrm from PBF (car.lua), unless DIR holds it for the same file
  local sum
  sum=$(cksum <"$1")
  if [ -s "$2/map.osrm.hsgr" ] && [ "$(cat "$2/source.cksum" 2>/dev/null)" = "$sum" ]; then
    echo "OSRM files of $(basename "$1") kept from an earlier run" >>"$STATE/osrm-prep.log"
    return 0
  fi
  rm -rf "$2" && mkdir -p "$2" && cp "$1" "$2/map.osm.pbf"
  osrm_step "$STATE/osrm-prep.log" osrm-extract -p "$osrm/profiles/car.lua" -t "$NPROC" "$2/map.osm.pbf" &&
    osrm_step "$STATE/osrm-prep.log" osrm-contract -t "$NPROC" "$2/map.osrm" &&
    echo "$sum" >"$2/source.cksum"
}
osrm_compare() { # LABEL GRAPH OSRMFILE SIZES: OSRM CH's /table/v1 beside gpath's (running, bbox set)
  local n o osrm_pid
  LD_LIBRARY_PATH=$osrm/lib "$osrm/bin/osrm-routed" --algorithm ch -t "$NPROC" -i 127.0.0.1 -p 5078 \
    --max-table-size 10000 "$3" >"$STATE/osrm.log" 2>&1 &
  osrm_pid=$!
  if ! wait_http "http://127.0.0.1:5078/nearest/v1/driving/${bbox%%,*},$(echo "$bbox" | cut -d, -f2)" "$osrm_pid"; then
    echo "| $1 | OSRM CH | JSON | $4 | - | did not start | | | | |" >>"$out"
    stop_pid "$osrm_pid"
    return 0
  fi
  for n in $4; do
    o=$(median_run osrm "http://127.0.0.1:5078/table/v1/driving/GET" "$n" "$osrm_pid" 1 "bbox=$bbox")
    row "$1" "OSRM CH" JSON "$n" "$o"
    gpath_v1_row "$1" "$2" "$n" "$(field "$o" last_s)"
  done
  stop_pid "$osrm_pid"
}
gpath_v1_row() { # LABEL GRAPH N [OSRM_LAST]: gpath's /table/v1 as .npy (running, bbox set)
  row "$1" gpath ".npy (/table/v1)" "$3" \
    "$(median_run osrm "http://127.0.0.1:$gpath_port/table/v1/$2" "$3" "$gpath_pid" 1 "bbox=$bbox")" "${4:-}"
}

# ---- OSRM's files of the road-like map first (BENCH_OSRM_BIG_SIZES), then gpath beside it
big_osrm=
if [ -n "${BENCH_OSRM_BIG_SIZES:-}" ] && [ -f "$TARBALL" ]; then
  osrm_unpack "$TARBALL" "$osrm"
  osrm_prepare "$big" "$STATE/chbig" && big_osrm=$STATE/chbig/map.osrm
  [ -n "$big_osrm" ] || echo "| $(basename "$big") | OSRM CH | JSON | $BENCH_OSRM_BIG_SIZES | - | preparation failed ($STATE/osrm-prep.log) | | | | |" >>"$out"
fi

# ---- the road-like map, gpath (and OSRM CH with BENCH_OSRM_BIG_SIZES; a job's result is kept on
# disk: a 100,000 x 100,000 one is 40 GB)
rm -rf "$STATE/mj"
gpath_start "$STATE/gpath-big.log" --backend "$BACKEND" --cache-path "" --graph "m=osm:$big" \
  --max-binary-table-cells 1000000000 --max-body-bytes 67108864 --request-timeout-ms 600000 \
  --osrm-max-table-size 10000 --matrix-job-dir "$STATE/mj" --log-level "${BENCH_LOG_LEVEL:-warn}" ${BENCH_SERVER_ARGS:-}
bbox=$(env -u LD_LIBRARY_PATH "$PYTHON" bench/osrm_cch.py bbox "http://127.0.0.1:$gpath_port/v1/graphs/m/overview.geojson")
echo "road-like map: bbox $bbox, gpath on port $gpath_port"
for n in $SIZES; do
  r=$(median_run npy "http://127.0.0.1:$gpath_port/v1/graphs/m/table" "$n" "$gpath_pid" 1 "bbox=$bbox")
  row "$(basename "$big")" gpath .npy "$n" "$r"
  if [ "$((n * n))" -le 1000000 ]; then
    r=$(median_run json "http://127.0.0.1:$gpath_port/v1/graphs/m/table" "$n" "$gpath_pid" 1 "bbox=$bbox")
    row "$(basename "$big")" gpath JSON "$n" "$r"
  fi
done
[ -n "$big_osrm" ] && osrm_compare "$(basename "$big")" m "$big_osrm" "$BENCH_OSRM_BIG_SIZES"
for n in ${BENCH_GPATH_OSRM_SIZES:-}; do gpath_v1_row "$(basename "$big")" m "$n"; done
if [ "$JOB" -gt 0 ]; then
  r=$("${PY[@]}" job "http://127.0.0.1:$gpath_port/v1/graphs/m/matrix-jobs" "$JOB" "$gpath_pid" 9 "bbox=$bbox" | grep '^RESULT' || true)
  echo "$r"
  echo "$r" | grep -q status=200 || r=""
  row "$(basename "$big")" gpath "job (.npy on disk)" "$JOB" "$r"
fi
stop_pid "$gpath_pid"
rm -rf "$STATE/mj"
phases "$STATE/gpath-big.log" "$(basename "$big"), every run above"

# ---- the small map, gpath and OSRM CH in the same run
if [ -f "$small" ] && [ -f "$TARBALL" ]; then
  osrm_unpack "$TARBALL" "$osrm"
  osrm_prepare "$small" "$STATE/ch"
  gpath_start "$STATE/gpath-small.log" --backend "$BACKEND" --cch on --cache-path "" --graph "s=osm:$small" \
    --max-binary-table-cells 1000000000 --max-body-bytes 67108864 --osrm-max-table-size 10000 \
    --request-timeout-ms 600000 --log-level warn
  bbox=$(env -u LD_LIBRARY_PATH "$PYTHON" bench/osrm_cch.py bbox "http://127.0.0.1:$gpath_port/v1/graphs/s/overview.geojson")
  osrm_compare "$(basename "$small")" s "$STATE/ch/map.osrm" "$OSIZES"
  stop_pid "$gpath_pid"
fi
echo "wrote $out"
cat "$out"
