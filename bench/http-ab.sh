#!/usr/bin/env bash
# http-ab.sh - A/B load test of two gpath binaries' HTTP layer on this machine: both serve the same
# generated graph (gen:NODES, CPU backend, log level warn) at once on two ports, and wrk rows
# alternate between them, ROUNDS times, so that load from other processes hits both alike: GET
# /health keep-alive (16 connections), GET /health with Connection: close (8; one TCP connection
# per request, the accept path), GET route keep-alive (8; bench/http-route.lua, fixed seeds);
# ROW@C runs a row at C connections, and route-close is GET route with Connection: close.
# Reports the median req/s of each, and the median server CPU time per request (user + system
# ticks of the server process from /proc over the row, divided by the requests wrk completed: the
# measure that holds up on a machine shared with other work), with the ratios B/A, into
# bench/results/DATE-MACHINE-SUBJECT.md.
#   bash bench/http-ab.sh A_BIN B_BIN
#   env: GPATH_BENCH_NODES (100000), GPATH_BENCH_SECONDS (5 per row), GPATH_BENCH_ROUNDS (5),
#        GPATH_BENCH_SUBJECT (http-ab), GPATH_BENCH_WRK_THREADS (2),
#        GPATH_BENCH_ROWS ("health close route"; e.g. "route-close@1 route-close@64 route@64"),
#        GPATH_BENCH_SERVE_ARGS (extra `gpath serve` flags), GPATH_BENCH_SPEC (the graph, default
#        gen:NODES; node ids must be 1..NODES)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
A=$1 B=$2
NODES=${GPATH_BENCH_NODES:-100000}
SECS=${GPATH_BENCH_SECONDS:-5}
ROUNDS=${GPATH_BENCH_ROUNDS:-5}
SUBJECT=${GPATH_BENCH_SUBJECT:-http-ab}
WT=${GPATH_BENCH_WRK_THREADS:-2}
ROWS=${GPATH_BENCH_ROWS:-health close route}
SPEC=${GPATH_BENCH_SPEC:-gen:$NODES}
# shellcheck disable=SC2206
SERVE_ARGS=(${GPATH_BENCH_SERVE_ARGS:-})
command -v wrk >/dev/null || { echo "http-ab: wrk is missing (make deps installs it)"; exit 1; }
tmp=$(mktemp -d)
pids=()
declare -A pid_of
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p"; done; rm -rf "$tmp"; }
trap cleanup EXIT
start() { # NAME BIN
  "$2" serve --listen 127.0.0.1 --port 0 --port-file "$tmp/$1.port" --graph "road=$SPEC" \
    --backend cpu --log-level warn --cache-path "" "${SERVE_ARGS[@]}" >"$tmp/$1.log" 2>&1 &
  pids+=($!)
  pid_of[$1]=$!
  for _ in $(seq 600); do [ -s "$tmp/$1.port" ] && break; sleep 0.1; done
  until curl -sf "http://127.0.0.1:$(cat "$tmp/$1.port")/ready" >/dev/null; do sleep 0.1; done
}
start a "$A"
start b "$B"
sed -e 's#^function request()#function request_unused()#' bench/http-route.lua >"$tmp/health.lua"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # user + system clock ticks of PID
TCK=$(getconf CLK_TCK)
wrk_row() { # CONNS ARGS... -> "req/s requests"
  local c=$1 t=$WT
  shift
  [ "$c" -lt "$t" ] && t=$c
  GPATH_BENCH_NODES=$NODES GPATH_BENCH_GRAPH=road wrk -t"$t" -c"$c" -d"${SECS}s" --timeout 30s "$@" \
    | sed -nE 's/^RESULT requests=([0-9]+) .* rps=([0-9.]+).*/\2 \1/p'
}
conns_of() { # ROW[@C] -> connections
  case $1 in *@*) echo "${1#*@}" ;; health) echo 16 ;; *) echo 8 ;; esac
}
row() { # ROW[@C] SIDE -> "req/s server-CPU-us-per-request"
  local port pid t0 r c
  port=$(cat "$tmp/$2.port") pid=${pid_of[$2]} c=$(conns_of "$1")
  t0=$(ticks "$pid")
  case ${1%@*} in
    health) r=$(wrk_row "$c" -s "$tmp/health.lua" "http://127.0.0.1:$port/health") ;;
    close) r=$(wrk_row "$c" -H "Connection: close" -s "$tmp/health.lua" "http://127.0.0.1:$port/health") ;;
    route) r=$(wrk_row "$c" -s bench/http-route.lua "http://127.0.0.1:$port") ;;
    route-close) r=$(wrk_row "$c" -H "Connection: close" -s bench/http-route.lua "http://127.0.0.1:$port") ;;
  esac
  awk -v r="$r" -v d="$(($(ticks "$pid") - t0))" -v tck="$TCK" \
    'BEGIN { split(r, a, " "); printf "%s %.2f\n", a[1], d / tck * 1e6 / a[2] }'
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
  for name in $ROWS; do
    for side in a b; do
      v=$(row "$name" "$side")
      echo "round $r $name $side $v"
      echo "${v% *}" >>"$tmp/$name.$side"
      echo "${v#* }" >>"$tmp/$name.$side.cpu"
    done
  done
done
out=$(bench_out "$SUBJECT")
# binaries by file name only: the results file carries no path of this machine
an=$(basename "$A") bn=$(basename "$B")
bench_header "$out" "HTTP A/B: $an vs $bn" "bash bench/http-ab.sh $an $bn (GPATH_BENCH_SPEC=$SPEC GPATH_BENCH_NODES=$NODES GPATH_BENCH_SECONDS=$SECS GPATH_BENCH_ROUNDS=$ROUNDS GPATH_BENCH_ROWS=\"$ROWS\" GPATH_BENCH_SERVE_ARGS=\"${SERVE_ARGS[*]}\")"
{
  echo "A = \`$an\`, B = \`$bn\`, both serving $SPEC on the CPU backend at once (extra flags: '${SERVE_ARGS[*]}'); wrk $WT threads,"
  echo "${SECS}s per row, rows alternating A, B, $ROUNDS rounds; medians of req/s and of the server's CPU"
  echo "time per request (its user + system time over the row / requests completed)."
  echo
  echo "| row | connections | A req/s | B req/s | B/A | A CPU us/req | B CPU us/req | B/A | A req/s rounds | B req/s rounds |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for name in $ROWS; do
    c=$(conns_of "$name")
    case ${name%@*} in health) label="GET /health keep-alive" ;; close) label="GET /health Connection: close" ;;
      route) label="GET route keep-alive" ;; route-close) label="GET route Connection: close" ;; esac
    ma=$(median <"$tmp/$name.a") mb=$(median <"$tmp/$name.b")
    ca=$(median <"$tmp/$name.a.cpu") cb=$(median <"$tmp/$name.b.cpu")
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b / a }'; }
    echo "| $label | $c | $ma | $mb | $(ratio "$ma" "$mb") | $ca | $cb | $(ratio "$ca" "$cb") | $(tr '\n' ' ' <"$tmp/$name.a") | $(tr '\n' ' ' <"$tmp/$name.b") |"
  done
  echo
  echo "Load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "(wrk, both servers and anything else on the machine share its $(nproc) CPUs)."
} >>"$out"
cat "$out"
echo "results: $out"
