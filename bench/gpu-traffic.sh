#!/usr/bin/env bash
# gpu-traffic.sh MAP.osm.pbf - live traffic under load (issue 30 item 6), one table in
# bench/results/DATE-MACHINE-traffic.md:
#  - gpath serves MAP (`--backend cuda`, turn costs on: gpath's default for OSM) while wrk routes at
#    BENCH_CONNS connections (GET /route/v1, bench/osrm-api.lua) for the whole run; once a second for
#    BENCH_SECONDS a speed file of BENCH_FRACTION of the graph's arcs (directed OSM segments taken
#    from routes' node annotations, new random speeds each time) is POSTed (ttl_s=5) and the time
#    from the POST to the first route answer carrying the new data_version is taken
#    (bench/traffic_bench.py: p50, p99); wrk's failed requests; the server's RSS at the start and
#    the end (after every POSTed file expired);
#  - the first request with a new exclude combination (bench/metric_first.py, same map, its own
#    server) against cached ones and plain routes;
#  - OSRM v6 in the same run on the same file with the last speed file: MLD (osrm-extract,
#    osrm-partition, osrm-customize, then osrm-customize --segment-speed-file, timed) and, when
#    BENCH_OSRM_CH=1, CH (osrm-contract --segment-speed-file, timed; 665 s on the 1M map before);
#    the reload: osrm-datastore when the package has it, and osrm-routed started again on the
#    customized files to its first route, timed.
#   env: BUILD (build) or GPATH_BIN, GPATH_BACKEND (cuda), GPATH_COMMIT, BENCH_STATE_DIR
#        (/tmp/gpath-traffic), OSRM_TARBALL (../shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz),
#        BENCH_SECONDS (60), BENCH_CONNS (64), BENCH_FRACTION (0.01), BENCH_OSRM (1),
#        BENCH_OSRM_CH (0), BENCH_EXCLUDE (1), BENCH_CCH_ORDER (the server's cch_order: nd,
#        flow; unset: the default), BENCH_SPARE_MB (the server's cch_spare_max_mb; unset: the
#        default), BENCH_MATCH (0; 1: the map matching batch of
#        bench/match_bench.py on the same server first, so that a large map is imported once for
#        both; BENCH_MATCH_ONLY=1: that batch alone, no speed files), BENCH_P99_GOAL (100, ms: the issue's goal for the map; 250 on road-like 24M),
#        BENCH_READY_S (120: bench/osrm-lib.sh), BENCH_LOG_LEVEL (warn; info logs each
#        apply's build_ms / attach_ms, debug each version's phases, tabulated in the results),
#        WRK (wrk), PYTHON (python3)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/osrm-lib.sh
. bench/osrm-lib.sh
map=${1:-}
[ -f "$map" ] || { echo "gpu-traffic: skipped: needs MAP.osm.pbf (see bench/gpu-traffic.sh)"; exit 0; }
BUILD=${BUILD:-build}
# shellcheck disable=SC2034 # BIN and DEADLINE are read by bench/osrm-lib.sh
BIN=${GPATH_BIN:-$PWD/$BUILD/gpath}
BACKEND=${GPATH_BACKEND:-cuda}
STATE=${BENCH_STATE_DIR:-/tmp/gpath-traffic}
TARBALL=${OSRM_TARBALL:-$(cd .. && pwd)/shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz}
SECS=${BENCH_SECONDS:-60}
CONNS=${BENCH_CONNS:-64}
FRACTION=${BENCH_FRACTION:-0.01}
WRK=${WRK:-wrk}
PYTHON=${PYTHON:-python3}
PY=(env -u LD_LIBRARY_PATH "$PYTHON")
NPROC=$(nproc)
DEADLINE=0
osrm=
TOKEN=bench-ops
mkdir -p "$STATE"
out=$(bench_out traffic)
bench_header "$out" "Live traffic under load, exclude metrics, OSRM's customize in the same run (issue 30)" \
  "bench/gpu-traffic.sh $(basename "$map") (BENCH_SECONDS=$SECS BENCH_CONNS=$CONNS BENCH_FRACTION=$FRACTION BENCH_OSRM=${BENCH_OSRM:-1} BENCH_OSRM_CH=${BENCH_OSRM_CH:-0} BENCH_MATCH=${BENCH_MATCH:-0} BENCH_MATCH_ONLY=${BENCH_MATCH_ONLY:-0} BENCH_CCH_ORDER=${BENCH_CCH_ORDER:-} BENCH_SPARE_MB=${BENCH_SPARE_MB:-})"
save() { [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] && cp "$out" "$OUT/" || true; }
mib() { awk -v b="$1" 'BEGIN{printf "%.0f", b/1048576}'; }

# ---- gpath: speed files once a second under wrk
t0=$SECONDS
mflags=()
[ "${BENCH_MATCH:-0}" = 1 ] && mflags=(--match-max-batch-points 100000000 --match-max-traces 100000)
[ -n "${BENCH_CCH_ORDER:-}" ] && mflags+=(--cch-order "$BENCH_CCH_ORDER")
[ -n "${BENCH_SPARE_MB:-}" ] && mflags+=(--cch-spare-max-mb "$BENCH_SPARE_MB")
gpath_start "$STATE/gpath.log" --backend "$BACKEND" --cache-path "" --graph "m=osm:$map" \
  --operator-token "$TOKEN" --max-body-bytes 67108864 --max-connections-per-ip 0 \
  --log-level "${BENCH_LOG_LEVEL:-warn}" "${mflags[@]}"
ready_s=$((SECONDS - t0))
url="http://127.0.0.1:$gpath_port"
bbox=$("${PY[@]}" bench/osrm_cch.py bbox "$url/v1/graphs/m/overview.geojson")
if [ "${BENCH_MATCH:-0}" = 1 ]; then # before any speed file: the base graph's batch
  mt=$STATE/match.md
  : >"$mt"
  "${PY[@]}" bench/match_bench.py batch "$url" m "$mt" --label "$(basename "$map")" || echo "match batch failed" >>"$mt"
  { # each request's phases (the server's log: CPU prepare, device pass with its wait, answers)
    echo
    echo "Each batch request's phases (server log, event=match_gpu / event=match_batch):"
    echo
    echo '```'
    grep -oE 'event=match_(gpu|batch) .*' "$STATE/gpath.log" || echo "(none logged)"
    echo '```'
  } >>"$mt"
  cat "$mt"
  if [ "${BENCH_MATCH_ONLY:-0}" = 1 ]; then # the batch alone: no speed files
    stop_pid "$gpath_pid"
    { echo "Map: \`$(basename "$map")\` ($(du -h "$map" | cut -f1)); gpath \`serve --backend $BACKEND\`, turn costs on, ready in ${ready_s} s; the match batch alone (BENCH_MATCH_ONLY=1)."; cat "$mt"; } >>"$out"
    save
    echo "wrote $out"
    exit 0
  fi
fi
seg=$("${PY[@]}" bench/traffic_bench.py segments "$url" m "$bbox" "$FRACTION" "$STATE/segments.txt" | grep '^RESULT')
echo "segments: $seg"
gpu_mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1; }
gpu0=$(gpu_mem || true)
osrm_wrk route "$CONNS" "" "$url/" "$bbox" "$((SECS + 12))" 1 >"$STATE/wrk.txt" &
wrk_pid=$!
sleep 1
upd=$("${PY[@]}" bench/traffic_bench.py updates "$url" m "$bbox" "$gpath_pid" "$STATE/segments.txt" "$SECS" "$TOKEN" "$STATE/speeds.csv" | grep '^RESULT')
gpu1=$(gpu_mem || true)
wait "$wrk_pid" || true
w=$(cat "$STATE/wrk.txt")
echo "updates: $upd"
echo "wrk: $w"
stop_pid "$gpath_pid"
grep -o 'event=traffic_applied.*' "$STATE/gpath.log" | tail -5 || true
f() { wrk_field "$1" "$2"; }
{
  echo "Map: \`$(basename "$map")\` ($(du -h "$map" | cut -f1)); gpath \`serve --backend $BACKEND\`, turn costs on, ready in ${ready_s} s."
  echo "Speed file: $(f "$seg" segments) directed OSM segments ($FRACTION of the graph's arcs; from $(f "$seg" routes) routes' node annotations), every line a new random speed (10-100 km/h) each second, POSTed with ttl_s=5, $SECS times, while wrk routed at $CONNS connections (new connection per request) on /route/v1."
  echo
  echo "| measure | result | detail | goal (issue 30) |"
  echo "|---|---:|---|---|"
  p99=$(f "$upd" p99_ms)
  echo "| POST -> first answer with the new data_version, p50 | $(f "$upd" p50_ms) ms | $(f "$upd" updates) updates seen; POST answered after $(f "$upd" post_p50_ms) ms (p50); max $(f "$upd" max_ms) ms | |"
  goal=${BENCH_P99_GOAL:-100}
  echo "| POST -> first answer with the new data_version, p99 | $p99 ms | each update in POST order: $(f "$upd" in_order_ms | tr ',' ' ') ms | $(awk -v p="$p99" -v g="$goal" 'BEGIN{print (p <= g ? "met" : "not met")}') (<= $goal ms; the issue: 100 on the 1M map, 250 on 24M) |"
  fails=$(( $(f "$upd" failed) + $(f "$w" socket_errors) ))
  echo "| failed requests | $fails | wrk: $(f "$w" requests) requests, $(f "$w" rps) req/s, p50 $(f "$w" p50_ms) ms, p99 $(f "$w" p99_ms) ms, statuses $(f "$w" statuses), socket errors $(f "$w" socket_errors); updates failed $(f "$upd" failed) | $([ "$fails" = 0 ] && echo met || echo "not met") (0) |"
  echo "| server RSS, start -> end | $(mib "$(f "$upd" rss_start)") -> $(mib "$(f "$upd" rss_end)") MiB | peak $(mib "$(f "$upd" rss_peak)") MiB; end = after every POSTed file expired; GPU memory used ${gpu0:-?} -> ${gpu1:-?} MiB (whole device) | |"
  echo "| server RSS, 10th update -> last, growth per update | $(mib "$(f "$upd" rss_10)") -> $(mib "$(f "$upd" rss_last)") MiB, $(awk -v b="$(f "$upd" rss_slope)" 'BEGIN{printf "%.1f", b/1048576}') MiB | least-squares slope over the updates after the 10th (the first ones allocate the spares and pools every later version reuses); over the second half alone $(awk -v b="$(f "$upd" rss_slope2)" 'BEGIN{printf "%.1f", b/1048576}') MiB | flat memory |"
} >>"$out"
[ -n "${mt:-}" ] && cat "$mt" >>"$out"
{
  echo
  echo "Phases of each new version (server debug log, bench/traffic_bench.py phases; BENCH_LOG_LEVEL=debug):"
  echo
  "${PY[@]}" bench/traffic_bench.py phases "$STATE/gpath.log" || true
} >>"$out"
save

# ---- the first request with a new exclude
if [ "${BENCH_EXCLUDE:-1}" = 1 ]; then
  # Python runs without the bundle's LD_LIBRARY_PATH (PY): gpath gets it back through a wrapper
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "${LD_LIBRARY_PATH:-}" "$BIN" >"$STATE/gpath-wrap"
  chmod +x "$STATE/gpath-wrap"
  mlevel=info
  [ "${BENCH_LOG_LEVEL:-warn}" = debug ] && mlevel=debug # each metric's attach phases, printed below the table
  "${PY[@]}" bench/metric_first.py "$STATE/gpath-wrap" "osm:$map" --backend "$BACKEND" --log-level "$mlevel" >"$STATE/metric_first.txt" 2>&1 || true
  ex=$(grep -E '^\||^    ' "$STATE/metric_first.txt" || true)
  [ -n "$ex" ] || ex="metric_first.py failed: $(tail -3 "$STATE/metric_first.txt")"
  {
    echo
    echo "First request with a new exclude combination (bench/metric_first.py; four new keys, then 200 plain"
    echo "routes and 200 with a cached key; server times from the request log):"
    echo
    echo "$ex"
  } >>"$out"
  save
fi

# ---- OSRM on the same file with the last speed file
if [ "${BENCH_OSRM:-1}" = 1 ] && [ -f "$TARBALL" ]; then
  osrm=$STATE/osrm
  osrm_unpack "$TARBALL" "$osrm"
  rm -rf "$STATE/mld" && mkdir -p "$STATE/mld" && cp "$map" "$STATE/mld/map.osm.pbf"
  log=$STATE/osrm-prep.log
  : >"$log"
  timed() { # TOOL ARGS... -> its wall seconds (0.1 s), or "failed"
    local s
    s=$(date +%s.%N)
    osrm_step "$log" "$@" && awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}' || echo failed
  }
  t_ex=$(timed osrm-extract -p "$osrm/profiles/car.lua" -t "$NPROC" "$STATE/mld/map.osm.pbf")
  t_pa=$(timed osrm-partition -t "$NPROC" "$STATE/mld/map.osrm")
  t_cu=$(timed osrm-customize -t "$NPROC" "$STATE/mld/map.osrm")
  t_cs=$(timed osrm-customize -t "$NPROC" --segment-speed-file "$STATE/speeds.csv" "$STATE/mld/map.osrm")
  if [ -x "$osrm/bin/osrm-datastore" ]; then # the reload that makes them answer (shared memory)
    t_ds="$(timed osrm-datastore "$STATE/mld/map.osrm") s"
    [ "$t_ds" = "failed s" ] && t_ds="failed ($(grep -v ' started at ' "$log" | tail -1 | tr -d '`|' | cut -c1-160))"
  else
    t_ds="not timed (not in this OSRM package)"
  fi
  # the other reload: osrm-routed started again on the customized files, to its first route
  rp=$(awk -v b="$bbox" 'BEGIN{split(b,a,","); printf "%.6f,%.6f;%.6f,%.6f", a[1]+(a[3]-a[1])*0.3, a[2]+(a[4]-a[2])*0.3, a[1]+(a[3]-a[1])*0.7, a[2]+(a[4]-a[2])*0.7}')
  oport=$(free_port) # not gpath's port + 17: wrk's many connections used such ports (bind failed)
  s0=$(date +%s.%N)
  LD_LIBRARY_PATH=$osrm/lib "$osrm/bin/osrm-routed" --algorithm mld -t "$NPROC" -i 127.0.0.1 -p "$oport" "$STATE/mld/map.osrm" >>"$log" 2>&1 &
  opid=$!
  if wait_http "http://127.0.0.1:$oport/route/v1/driving/$rp?overview=false" "$opid"; then
    t_rs=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  else
    t_rs=failed
  fi
  stop_pid "$opid"
  t_ch=""
  if [ "${BENCH_OSRM_CH:-0}" = 1 ]; then
    t_ch=$(timed osrm-contract -t "$NPROC" --segment-speed-file "$STATE/speeds.csv" "$STATE/mld/map.osrm")
  fi
  {
    echo
    echo "OSRM v6 on the same file, the last speed file of the run ($NPROC threads; seconds, one run each):"
    echo "osrm-extract $t_ex s, osrm-partition $t_pa s, osrm-customize $t_cu s without traffic;"
    echo "**osrm-customize --segment-speed-file $t_cs s** (MLD: the new speeds answer only after this"
    echo "and a reload: osrm-datastore $t_ds, or osrm-routed started again, $t_rs s to its first route)${t_ch:+; osrm-contract --segment-speed-file $t_ch s (CH)}."
    [ -z "$t_ch" ] && echo "CH not run (BENCH_OSRM_CH=0): osrm-contract took 665 s on this 1M map in an earlier run (bench/results/2026-11-28-NVIDIA-H100-80GB-HBM3-osrm-turns-gen1m.md)."
  } >>"$out"
  save
fi
echo "wrote $out"
cat "$out"
