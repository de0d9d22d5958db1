#!/usr/bin/env bash
# test_gpu_multi_http.sh - every GPU of the host over HTTP (cuda_devices): the daemon with
# cuda_devices = 0,0 (two device states on one GPU; `all` too) answers tables as .npy (in blocks
# of a few rows, so every block is split over the devices), as JSON, and a matrix job's .npy
# result byte for byte as the daemon on one device, on a generated road-like OSM map with turn
# costs; /health lists the devices. Without a GPU it skips with "no CUDA device: GPU tests
# skipped" (GPATH_REQUIRE_GPU=1: a failure). GPATH_TEST_BACKEND=cpu runs the script on the CPU
# (the lists change nothing there: a check of the script itself).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
BIN=${GPATH_BIN:-$PWD/$BUILD/gpath}
BACKEND=${GPATH_TEST_BACKEND:-cuda}
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0
check() { # NAME CMD...
  local name=$1
  shift
  if "$@"; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
"$BIN" gen -n 5000 --osm "$tmp/map.osm" >/dev/null 2>&1 || { echo "FAIL gen"; echo "0 passed, 1 failed"; exit 1; }
start() { # NAME DEVICES -> port in $tmp/NAME.port, or 1
  "$BIN" serve --listen 127.0.0.1 --port 0 --port-file "$tmp/$1.portfile" --backend "$BACKEND" \
    --cch on --cuda-devices "$2" --cache-path "" --graph "m=osm:$tmp/map.osm" \
    --matrix-block-cells 1024 --matrix-job-block-cells 1024 --matrix-job-dir "$tmp/mj-$1" --log-level warn >"$tmp/$1.log" 2>&1 &
  pids+=($!)
  serve_wait_ready "$tmp/$1.portfile" "$!" >"$tmp/$1.port"
}
if ! start one ""; then
  why=$(tail -1 "$tmp/one.log")
  if [ "${GPATH_REQUIRE_GPU:-}" = 1 ] || ! grep -q "no usable CUDA backend" "$tmp/one.log"; then echo "FAIL the one-device daemon did not start: $why"; echo "0 passed, 1 failed"; exit 1; fi
  echo "no CUDA device: GPU tests skipped ($why)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
# 301 places: node positions of the map (snapped), every 13th
body=$(python3 - "$tmp/map.osm" <<'PY'
import json, re, sys
pts = [[float(lo), float(la)] for la, lo in re.findall(r'lat="([-0-9.]+)" lon="([-0-9.]+)"', open(sys.argv[1]).read())]
print(json.dumps({"sources": pts[::13][:301], "radius": 20000}))
PY
)
fetch() { # NAME PORT OUT [ACCEPT]: the table
  curl -fsS -H "Content-Type: application/json" ${4:+-H "Accept: $4"} -d "$body" \
    "http://127.0.0.1:$2/v1/graphs/m/table" -o "$3"
}
job() { # PORT OUT: a matrix job of the same places, its .npy result
  local loc st res
  loc=$(curl -fsS -H "Content-Type: application/json" -d "$body" "http://127.0.0.1:$1/v1/graphs/m/matrix-jobs" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])') || return 1
  for _ in $(seq 1 1200); do
    st=$(curl -fsS "http://127.0.0.1:$1$loc") || return 1
    case "$st" in *'"state":"done"'* | *'"state": "done"'*) break ;; *'"failed"'* | *'"cancelled"'*) return 1 ;; esac
    sleep 0.1
  done
  res=$(echo "$st" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"])') || return 1
  curl -fsS "http://127.0.0.1:$1$res" -o "$2"
}
p1=$(cat "$tmp/one.port")
fetch one "$p1" "$tmp/one.npy" application/x-npy
fetch one "$p1" "$tmp/one.json"
job "$p1" "$tmp/one-job.npy"
check "one device answers" test -s "$tmp/one.npy" -a -s "$tmp/one.json" -a -s "$tmp/one-job.npy"
for devs in 0,0 all; do
  name=d${devs//,/_}
  if ! start "$name" "$devs"; then
    check "cuda_devices=$devs starts ($(tail -1 "$tmp/$name.log"))" false
    continue
  fi
  p=$(cat "$tmp/$name.port")
  if [ "$BACKEND" = cuda ] && [ "$devs" = 0,0 ]; then
    check "cuda_devices=0,0: /health lists 0,0" \
      bash -c "curl -fsS http://127.0.0.1:$p/health | grep -q '\"devices\":\[0,0\]'"
  fi
  fetch "$name" "$p" "$tmp/$name.npy" application/x-npy
  fetch "$name" "$p" "$tmp/$name.json"
  job "$p" "$tmp/$name-job.npy"
  check "cuda_devices=$devs: .npy table equals one device's" cmp -s "$tmp/one.npy" "$tmp/$name.npy"
  check "cuda_devices=$devs: JSON table equals one device's" cmp -s "$tmp/one.json" "$tmp/$name.json"
  check "cuda_devices=$devs: matrix job equals one device's" cmp -s "$tmp/one-job.npy" "$tmp/$name-job.npy"
done
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
