#!/usr/bin/env bash
# cpu-http.sh - load benchmark of the HTTP service: wrk drives GET /v1/graphs/road/route between
# random node pairs (bench/http-route.lua, fixed seeds) of a generated 1M-node road graph served by
# the real `gpath serve` (backend from GPATH_BENCH_BACKEND, default auto). Reports requests/s and
# p50/p90/p99 latency per concurrency level, plus GET /health as the HTTP-only baseline, into
# bench/results/DATE-MACHINE-cpu-http.md (bench/lib.sh).
#   env: BUILD (build), GPATH_BENCH_NODES (1000000), GPATH_BENCH_SECONDS (30),
#        GPATH_BENCH_CONNS ("2 8"), GPATH_BENCH_BACKEND (auto),
#        GPATH_BENCH_SPEC (the graph, default gen:NODES; node ids must be 1..NODES),
#        GPATH_BENCH_SUBJECT (results file subject, default cpu-http),
#        GPATH_BENCH_WRK_THREADS (2), GPATH_BENCH_MODES ("keepalive"; "close" adds rows with
#        one request per connection, as OSRM's own benchmark client sends),
#        GPATH_BENCH_SERVE_ARGS (extra `gpath serve` flags)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpath
NODES=${GPATH_BENCH_NODES:-1000000}
SECS=${GPATH_BENCH_SECONDS:-30}
CONNS=${GPATH_BENCH_CONNS:-2 8}
BACKEND=${GPATH_BENCH_BACKEND:-auto}
SPEC=${GPATH_BENCH_SPEC:-gen:$NODES}
SUBJECT=${GPATH_BENCH_SUBJECT:-cpu-http}
WT=${GPATH_BENCH_WRK_THREADS:-2}
MODES=${GPATH_BENCH_MODES:-keepalive}
# shellcheck disable=SC2206
SERVE_ARGS=(${GPATH_BENCH_SERVE_ARGS:-})
command -v wrk >/dev/null || { echo "cpu-http: wrk is missing (make deps installs it)"; exit 1; }
[ -x "$BIN" ] || { echo "cpu-http: no $BIN (make all first)"; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"; rm -rf "$tmp"; }
trap cleanup EXIT
# log level warn: the per-request log line (info) is not what this measures
"$BIN" serve --listen 127.0.0.1 --port 0 --port-file "$tmp/port" --graph "road=$SPEC" \
  --backend "$BACKEND" --log-level warn "${SERVE_ARGS[@]}" --cache-path "$tmp/cache.sqlite" >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
t0=$(date +%s%N)
until curl -sf "http://127.0.0.1:$port/ready" >/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/log"; exit 1; }
  sleep 0.1
done
load_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
info=$(curl -s "http://127.0.0.1:$port/v1/graphs/road")
backend=$(curl -s "http://127.0.0.1:$port/health" | sed -nE 's/.*"backend":"([a-z]+)".*/\1/p')
threads=$(curl -s "http://127.0.0.1:$port/health" | sed -nE 's/.*"threads":([0-9]+).*/\1/p')
echo "graph: $info"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
out=$(bench_out "$SUBJECT")
bench_header "$out" "HTTP route load test (wrk)" "bash bench/cpu-http.sh (GPATH_BENCH_SPEC=$SPEC GPATH_BENCH_NODES=$NODES GPATH_BENCH_SECONDS=$SECS GPATH_BENCH_MODES=$MODES)"
{
  echo "Graph \`$SPEC\`, served by \`gpath serve\` with backend"
  # the HTTP pool: server/http/daemon.c's default unless GPATH_BENCH_SERVE_ARGS sets --threads
  pool="the default pool (max(8, 2 x CPUs) = $(nproc | awk '{ print ($1 > 4 ? 2 * $1 : 8) }'))"
  case " ${GPATH_BENCH_SERVE_ARGS:-} " in *" --threads "*) pool="as GPATH_BENCH_SERVE_ARGS sets" ;; esac
  echo "**$backend** ($threads engine threads), log level warn, HTTP workers: $pool; serve flags: \`${GPATH_BENCH_SERVE_ARGS:-none}\`."
  echo "Graph info: \`$info\`; ready ${load_s}s after the port opened."
  echo
  echo "wrk $WT threads, ${SECS}s per row, keep-alive unless the row says close; each request a random (from, to) pair of"
  echo "node ids in 1..$NODES (bench/http-route.lua, fixed seeds). statuses: HTTP status:count"
  echo "(400 = NoRoute between unconnected nodes, if any)."
  echo
  echo "| endpoint | connections | requests | req/s | p50 ms | p90 ms | p99 ms | max ms | socket errors | statuses |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >>"$out"
row() { # endpoint conns script-args...
  local ep=$1 c=$2; shift 2
  local r
  local t=$WT
  [ "$c" -lt "$t" ] && t=$c
  r=$(GPATH_BENCH_NODES=$NODES GPATH_BENCH_GRAPH=road wrk -t"$t" -c"$c" -d"${SECS}s" --timeout 30s "$@" \
      | grep '^RESULT' || true)
  echo "$ep c=$c: $r"
  [ -n "$r" ] || { echo "cpu-http: wrk gave no result"; exit 1; }
  get() { echo "$r" | tr ' ' '\n' | sed -nE "s/^$1=//p"; }
  echo "| $ep | $c | $(get requests) | $(get rps) | $(get p50_ms) | $(get p90_ms) | $(get p99_ms) | $(get max_ms) | $(get socket_errors) | $(get statuses) |" >>"$out"
}
for mode in $MODES; do
  for c in $CONNS; do
    if [ "$mode" = close ]; then
      row "GET route (close)" "$c" -H "Connection: close" -s bench/http-route.lua "http://127.0.0.1:$port"
    else
      row "GET route" "$c" -s bench/http-route.lua "http://127.0.0.1:$port"
    fi
  done
done
sed -e 's#^function request()#function request_unused()#' bench/http-route.lua >"$tmp/health.lua"
row "GET /health" 16 -s "$tmp/health.lua" "http://127.0.0.1:$port/health"
{
  echo
  echo "Load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "(wrk, the server and anything else on the machine share its $(nproc) CPUs)."
  if [ -s "$tmp/log" ]; then
    echo
    echo "Server warnings:"
    echo '```'
    tail -5 "$tmp/log"
    echo '```'
  fi
} >>"$out"
echo "results: $out"
