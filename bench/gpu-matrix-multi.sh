#!/usr/bin/env bash
# gpu-matrix-multi.sh ROADLIKE.osm.pbf - distance matrices on every GPU of the host (issue 34 item 4,
# config cuda_devices), one table in bench/results/DATE-MACHINE-matrix-multigpu.md: the server
# started once per device list (BENCH_DEVICE_LISTS; default 0, then 0,1 and 0,1,2,3 where
# nvidia-smi lists that many GPUs; "0 0,0" runs the two-state path on one GPU), each time N x N
# .npy tables (POST /v1/graphs/m/table, Accept: application/x-npy, random coordinates in the
# road bbox, snapped; BENCH_MATRIX_SIZES) and a BENCH_JOB_SIZE matrix job (submission to the
# last byte of its result): time to the last byte, cells/s, the server's peak RSS (VmHWM), the
# speed-up over the first list's row, and a check: each answer's CRC-32 (first 256 MiB) must
# equal the first list's (the same places: same seeds), else the row says MISMATCH and the script
# exits 1. Time-boxed: each device list gets BENCH_BUDGET_S / lists seconds (server start
# included); a row whose estimate (its cells at the rate of the list's last row) is over twice what is
# left is skipped and said so, and a row running past what is left is cut (and said so).
#   env: BUILD (build) or GPATH_BIN, GPATH_COMMIT, BENCH_STATE_DIR (/tmp/gpath-matrix-multi),
#        BENCH_DEVICE_LISTS, BENCH_MATRIX_SIZES ("1000 10000 50000"), BENCH_JOB_SIZE (100000; 0:
#        none), BENCH_BUDGET_S (420), GPATH_BACKEND (cuda), PYTHON (python3)
# shellcheck disable=SC2154 # gpath_port and gpath_pid are set by gpath_start (bench/osrm-lib.sh)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/osrm-lib.sh
. bench/osrm-lib.sh
big=${1:-}
[ -f "$big" ] || { echo "gpu-matrix-multi: skipped: needs ROADLIKE.osm.pbf (see bench/gpu-matrix-multi.sh)"; exit 0; }
BUILD=${BUILD:-build}
# shellcheck disable=SC2034 # BIN and DEADLINE are read by bench/osrm-lib.sh
BIN=${GPATH_BIN:-$PWD/$BUILD/gpath}
# shellcheck disable=SC2034
DEADLINE=0
STATE=${BENCH_STATE_DIR:-/tmp/gpath-matrix-multi}
SIZES=${BENCH_MATRIX_SIZES:-1000 10000 50000}
JOB=${BENCH_JOB_SIZE:-100000}
BUDGET=${BENCH_BUDGET_S:-420}
BACKEND=${GPATH_BACKEND:-cuda} # cpu: a dry run of the script itself (the lists then change nothing)
PYTHON=${PYTHON:-python3}
PY=(env -u LD_LIBRARY_PATH "$PYTHON" bench/matrix_bench.py)
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
LISTS=${BENCH_DEVICE_LISTS:-}
if [ -z "$LISTS" ]; then
  LISTS=0
  [ "${ngpu:-0}" -ge 2 ] && LISTS="$LISTS 0,1"
  [ "${ngpu:-0}" -ge 4 ] && LISTS="$LISTS 0,1,2,3"
fi
nlists=$(echo "$LISTS" | wc -w)
share=$((BUDGET / nlists))
mkdir -p "$STATE"
out=$(bench_out matrix-multigpu)
bench_header "$out" "Distance matrices on every GPU of the host: cuda_devices (issue 34 item 4)" \
  "bench/gpu-matrix-multi.sh $(basename "$big")"
{
  echo "gpath: \`serve --backend $BACKEND --cuda-devices LIST\`, turn costs on (default for OSM), matrix cache off;"
  echo "client: bench/matrix_bench.py (one request at a time, every byte read, none kept), one run per row;"
  echo "$ngpu GPU(s) listed by nvidia-smi; $share s per device list (server start included);"
  echo "speed-up: the first list's last byte over this row's; check: the answer's CRC-32 (first 256 MiB) against the first list's."
  echo
  echo "| devices | answer | N x N | last byte s | GB | cells/s | server peak RSS MB | speed-up | check |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
} >>"$out"
field() { echo "$1" | tr ' ' '\n' | sed -nE "s/^$2=//p"; }
bad=0
declare -A base_s base_crc
for list in $LISTS; do
  t0=$(date +%s)
  gpath_start "$STATE/gpath-$list.log" --backend "$BACKEND" --cuda-devices "$list" --cache-path "" \
    --graph "m=osm:$big" --max-binary-table-cells 1000000000000 --max-body-bytes 268435456 \
    --max-table-cells 1000000 --request-timeout-ms 0 --matrix-job-dir "$STATE/mj-$list" \
    --log-level debug || { echo "| $list | server | | did not start | | | | | |" >>"$out"; bad=1; continue; }
  curl -s "http://127.0.0.1:$gpath_port/health" | grep -o '"devices":\[[^]]*\]' || true
  bbox=$(env -u LD_LIBRARY_PATH "$PYTHON" bench/osrm_cch.py bbox "http://127.0.0.1:$gpath_port/v1/graphs/m/overview.geojson")
  rate=0
  rows=""
  for n in $SIZES; do rows="$rows npy:$n"; done
  [ "$JOB" -gt 0 ] && rows="$rows job:$JOB"
  for r in $rows; do
    kind=${r%%:*} n=${r#*:}
    left=$((share - ($(date +%s) - t0)))
    est=$(awk -v n="$n" -v r="$rate" 'BEGIN{printf "%d", (r > 0 ? n * n / r + 5 : 0)}')
    if [ "$left" -le 5 ] || [ "$est" -gt $((2 * left)) ]; then
      echo "| $list | $kind | $n | skipped (estimate ${est} s, ${left} s left) | | | | | |" >>"$out"
      continue
    fi
    url="http://127.0.0.1:$gpath_port/v1/graphs/m/table"
    [ "$kind" = job ] && url="http://127.0.0.1:$gpath_port/v1/graphs/m/matrix-jobs"
    res=$(timeout "$left" "${PY[@]}" "$kind" "$url" "$n" "$gpath_pid" 7 "bbox=$bbox" | grep '^RESULT' || true)
    echo "$list $res"
    if ! echo "$res" | grep -q status=200; then
      echo "| $list | $kind | $n | cut or failed (${left} s left): $(echo "$res" | cut -c1-80) | | | | | |" >>"$out"
      continue
    fi
    last=$(field "$res" last_s) crc=$(field "$res" crc)
    rate=$(field "$res" cells_per_s)
    key=$kind:$n
    [ -z "${base_s[$key]:-}" ] && base_s[$key]=$last && base_crc[$key]=$crc
    check=ok
    if [ "$crc" != "${base_crc[$key]}" ]; then check="MISMATCH ($crc vs ${base_crc[$key]})"; bad=1; fi
    echo "| $list | $kind | $n | $last | $(awk -v b="$(field "$res" bytes)" 'BEGIN{printf "%.2f", b/1e9}') | $(awk -v c="$rate" 'BEGIN{printf "%.3g", c}') | $(awk -v a="$(field "$res" hwm_after)" 'BEGIN{printf "%.0f", a/1e6}') | $(awk -v a="${base_s[$key]}" -v b="$last" 'BEGIN{printf "%.2fx", a/b}') | $check |" >>"$out"
    [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] && cp "$out" "$OUT/" || true
  done
  stop_pid "$gpath_pid"
  phases "$STATE/gpath-$list.log" "devices $list"
  rm -rf "$STATE/mj-$list"
done
echo "wrote $out"
cat "$out"
[ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] && cp "$out" "$OUT/" || true
exit "$bad"
