#!/usr/bin/env bash
# gpu-osrm-cch.sh PHASE MAP.osm.pbf - gpath (CCH) side by side with OSRM v6 CH and MLD on one OSM
# file (issue 18: a road-like 1M-node map from `gpath gen -n 1000000 --osm`, made PBF by osmium),
# on the GPU machine. One table in bench/results/DATE-MACHINE-$BENCH_SUBJECT.md: routes/s at 1 and
# 64 connections, table 100x100 and 1000x1000 (median seconds), and the time from a cost change to
# answers that use it (gpath: PATCH .../links to the first answer with the new cost; OSRM:
# osrm-contract for CH, osrm-customize for MLD), each gpath row with its ratio to OSRM CH.
# PHASE (the state lives in BENCH_STATE_DIR, so `bench` can follow `prep` in a second call on the
# same machine):
#   prep   copy MAP there, unpack OSRM, time osrm-extract, osrm-partition + osrm-customize (MLD),
#          osrm-contract (CH); steps already done for the same MAP are kept (a stopped prep resumes);
#          prep.tsv (the times) and prep.log are copied to $OUT when set
#   bench  serve MAP with gpath, then the prepared OSRM CH and MLD (one server at a time) and
#          measure; the results file is rewritten after every measurement (and copied to $OUT
#          when set), so a run stopped at its deadline still leaves one
#   prep-bg  prep in a process session of its own (setsid), returning at once: on the GPU machine
#          it outlives the call, so a 10-minute call can do other work meanwhile and `bench` in
#          the next call (same machine) waits for it before measuring anything
#   all    prep, then bench (for small maps: on the road-like 1M map osrm-contract alone ran past
#          502 s on the H100 machine's 16 cores)
# Clients: routes = wrk with bench/osrm-api.lua (fixed seeds, the same sequence for every server,
# random points in the road bbox shrunk by 10%), OSRM with a new connection per request (with
# keep-alive osrm-routed stalls on delayed ACKs: ../shared/peers/osrm/SOURCE.md), gpath both ways;
# tables and cost changes = bench/osrm_cch.py (Python's urllib, one request at a time, a new
# connection each, no gzip; the same coordinate sets for every server; gpath's matrix cache off).
#   env: BUILD (build) or GPATH_BIN, GPATH_BACKEND (cuda), GPATH_COMMIT (the commit, where the
#        tree has no .git), BENCH_STATE_DIR (/tmp/gpath-osrm-gen1m), OSRM_TARBALL
#        (../shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz) or OSRM_DIR (unpacked),
#        BENCH_SUBJECT (osrm-cch-gen1m), BENCH_SECONDS (10, per wrk row), BENCH_CONNS ("1 64"),
#        BENCH_TABLE_SIZES ("100 1000"), BENCH_TABLE_SETS (6: one warm-up, then up to 5 counted),
#        BENCH_TABLE_BUDGET_S (30: per server and size, at least one counted), BENCH_PATCH_SINGLE
#        (5), BENCH_PATCH_BATCH (3), BENCH_PATCH_FRACTION (0.01 of the arcs), BENCH_DEADLINE_S
#        (none: seconds after which nothing new starts; OSRM steps stop 40 s before it),
#        WRK (wrk; OSRM's lib/ has its libraries), BENCH_WRK_THREADS (4: wrk's threads at most;
#        with a new connection per request a wrk thread spends ~40 us of CPU per request), CURL (curl, else Python), PYTHON (python3),
#        BENCH_OSRM (1; 0 = gpath's rows only), BENCH_GPATH_TURNS (default: gpath's own default;
#        "on off": gpath served twice, --turn-costs on then off, rows labelled so), BENCH_LOG_LEVEL (warn; info logs each cost
#        change's steps: event=links_changed, event=cch_ready). BENCH_CONNS="" and
#        BENCH_TABLE_SIZES="" leave out the routes and the tables (e.g. the cost changes alone).
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/osrm-lib.sh
. bench/osrm-lib.sh
phase=${1:-}
map=${2:-}
case $phase in prep | prep-bg | bench | all) ;; *)
  echo "gpu-osrm-cch: skipped: needs PHASE (prep, prep-bg, bench, all) and MAP.osm.pbf (see bench/gpu-osrm-cch.sh)"
  exit 0 ;;
esac
[ -f "$map" ] || { echo "gpu-osrm-cch: no map file '$map'"; exit 1; }
BUILD=${BUILD:-build}
BIN=${GPATH_BIN:-$PWD/$BUILD/gpath}
[ "${phase%-bg}" = prep ] || [ -x "$BIN" ] || { echo "gpu-osrm-cch: no $BIN (build it, or set BUILD / GPATH_BIN)"; exit 1; }
BACKEND=${GPATH_BACKEND:-cuda}
STATE=${BENCH_STATE_DIR:-/tmp/gpath-osrm-gen1m}
TARBALL=${OSRM_TARBALL:-$(cd .. && pwd)/shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz}
osrm=${OSRM_DIR:-$STATE/osrm}
SUBJECT=${BENCH_SUBJECT:-osrm-cch-gen1m}
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS-1 64}
TABLE_SIZES=${BENCH_TABLE_SIZES-100 1000}
TABLE_SETS=${BENCH_TABLE_SETS:-6}
TABLE_BUDGET=${BENCH_TABLE_BUDGET_S:-30}
PATCH_SINGLE=${BENCH_PATCH_SINGLE:-5}
PATCH_BATCH=${BENCH_PATCH_BATCH:-3}
PATCH_FRACTION=${BENCH_PATCH_FRACTION:-0.01}
DEADLINE=${BENCH_DEADLINE_S:-0}
TURNS=${BENCH_GPATH_TURNS:-default}
WRK=${WRK:-wrk}
PYTHON=${PYTHON:-python3}
# Python needs none of the libraries a bundle puts on LD_LIBRARY_PATH (older ones could break it)
PY=(env -u LD_LIBRARY_PATH "$PYTHON")
NPROC=$(nproc)
TOKEN=bench-operator
OSRM_PORT=5077
mkdir -p "$STATE"
map_id=$(cksum <"$map" | cut -d' ' -f1,2)
if [ "$(cat "$STATE/map.id" 2>/dev/null)" != "$map_id" ]; then # another map: start afresh
  rm -rf "$STATE/ch" "$STATE/mld" "$STATE/prep.tsv" "$STATE/prep.log"
  cp "$map" "$STATE/map.osm.pbf"
  echo "$map_id" >"$STATE/map.id"
fi
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
prep_time() { awk -F'\t' -v k="$1" '$1 == k { v = $2 } END { print v }' "$STATE/prep.tsv" 2>/dev/null; }
left() { [ "$DEADLINE" -gt 0 ] && echo $(( DEADLINE - SECONDS )) || echo 100000; }
fits() { [ "$(left)" -ge "$1" ]; } # fits SECONDS_NEEDED

# ---- PREP: OSRM's preprocessing, timed step by step into $STATE/prep.tsv
prep_step() { # NAME TOOL ARGS...: osrm_step, timed into prep.tsv, unless prep.tsv has NAME
  local name=$1 t0
  shift
  [ -n "$(prep_time "$name")" ] && { echo "prep: $name done earlier ($(prep_time "$name") s)"; return 0; }
  t0=$(now)
  if osrm_step "$STATE/prep.log" "$@"; then
    printf '%s\t%s\n' "$name" "$(since "$t0")" >>"$STATE/prep.tsv"
    echo "prep: $name $(prep_time "$name") s"
  else
    echo "prep: $name failed or was stopped:"; tail -5 "$STATE/prep.log"; return 1
  fi
}
prep() {
  [ -x "$osrm/bin/osrm-routed" ] || osrm_unpack "$TARBALL" "$osrm"
  echo "prep on ${HOSTNAME:-?}, $(date -u +%Y-%m-%dT%H:%MZ), $NPROC CPUs: $(basename "$map") ($map_id)" >>"$STATE/prep.log"
  if [ -z "$(prep_time extract)" ]; then
    rm -rf "$STATE/x" && mkdir -p "$STATE/x" && cp "$STATE/map.osm.pbf" "$STATE/x/map.osm.pbf"
    prep_step extract osrm-extract -p "$osrm/profiles/car.lua" -t "$NPROC" "$STATE/x/map.osm.pbf" || return 1
    rm -rf "$STATE/ch" "$STATE/mld"
    cp -r "$STATE/x" "$STATE/ch" && mv "$STATE/x" "$STATE/mld"
  fi
  # MLD first (about a minute), then CH's contraction (minutes on 1M nodes)
  prep_step partition osrm-partition -t "$NPROC" "$STATE/mld/map.osrm" &&
    prep_step customize osrm-customize -t "$NPROC" "$STATE/mld/map.osrm" || true
  prep_step contract osrm-contract -t "$NPROC" "$STATE/ch/map.osrm" || true
  echo "prep: $(tr '\t\n' '= ' <"$STATE/prep.tsv")(seconds; state in $STATE)"
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$STATE/prep.tsv" "$STATE/prep.log" "$OUT/"; fi
}

# a prep started by prep-bg and still running: wait for it (within the deadline)
wait_prep() {
  local pid t0
  pid=$(cat "$STATE/prep.pid" 2>/dev/null) || return 0
  t0=$(now)
  while kill -0 "$pid" 2>/dev/null; do
    fits 150 || { note="${note}The background prep (pid $pid) was still running at ${SECONDS} s. "; return 0; }
    sleep 2
  done
  echo "prep (background, pid $pid) finished; waited $(since "$t0") s: $(tr '\t\n' '= ' <"$STATE/prep.tsv" 2>/dev/null)"
  rm -f "$STATE/prep.pid"
}

# ---- BENCH
rows=$STATE/rows # measure|server|client|value|unit|detail
gpath_pid=
gpath_port=
osrm_pid=
out=
note=
complete=0
cleanup() {
  [ -n "$gpath_pid" ] && stop_pid "$gpath_pid"
  [ -n "$osrm_pid" ] && stop_pid "$osrm_pid"
  [ -n "$out" ] && write_results
  return 0
}
trap cleanup EXIT
trap 'note="${note}stopped by a signal at ${SECONDS} s. "; exit 143' TERM INT

add_row() { echo "$1|$2|$3|$4|$5|$6" >>"$rows"; }
skipped=0
skip() { echo "gpu-osrm-cch: skipped $1 (${SECONDS} s of ${DEADLINE})"; skipped=1; note="${note}Not measured for want of time: $1. "; }
fmt() { awk -v v="$1" -v u="$2" 'BEGIN {
  if (v == "") { print "-"; exit }
  if (u == "req/s") printf "%\047.0f req/s", v; else if (u == "ms") printf "%.1f ms", v;
  else if (v >= 10) printf "%.1f s", v; else printf "%.3f s", v }'; }

# the ratio of a gpath row to OSRM CH for the same measure: higher is better for gpath
ratio() { # MEASURE VALUE UNIT
  local base
  base=$(awk -F'|' -v m="$1" '$1 == m && $2 == "OSRM CH" { print $4 }' "$rows" | head -1)
  case $1 in cost\ change*) base=$(prep_time contract) ;; esac
  awk -v a="$2" -v b="$base" -v u="$3" 'BEGIN {
    if (a == "" || b == "" || a <= 0 || b <= 0) exit
    if (u == "ms") a /= 1000
    r = (u == "req/s") ? a / b : b / a
    printf(r >= 100 ? "%.0fx" : "%.2fx", r) }'
}
goal() { # MEASURE VALUE UNIT RATIO: issue 35's goals for gpath rows (>= 3x OSRM CH; a cost change <= 100 ms)
  case $1 in
    cost\ change*) awk -v v="$2" 'BEGIN { print (v != "" && v <= 100) ? "met (<= 100 ms)" : "not met (<= 100 ms)" }' ;;
    *) awk -v r="${4%x}" 'BEGIN { if (r != "") print (r >= 3) ? "met (>= 3x)" : "not met (>= 3x)" }' ;;
  esac
}

# rows grouped by measure (routes, tables, cost changes; by size), OSRM CH, OSRM MLD, then gpath
sorted_rows() {
  awk -F'|' '{ k = ($1 ~ /^routes/) ? 1 : ($1 ~ /^table/) ? 2 : 3
    n = $1; sub(/^[^0-9]*/, "", n); n += 0
    if (k == 3) n = ($1 ~ /any/) ? 0 : ($1 ~ /1 link/) ? 1 : 2
    s = ($2 == "OSRM CH") ? 1 : ($2 == "OSRM MLD") ? 2 : 3
    printf "%d\t%09d\t%d\t%06d\t%s\n", k, n, s, NR, $0 }' "$rows" | sort -t"$(printf '\t')" -k1,1n -k2,2n -k3,3n -k4,4n | cut -f5-
}
write_results() {
  [ -f "$STATE/results.head" ] || return 0
  local tmpf=$out.tmp m s c v u d r g
  {
    cat "$STATE/results.head"
    echo "| measure | server | client | result | detail | gpath / OSRM CH | goal (issue 35) |"
    echo "|---|---|---|---|---|---|---|"
    while IFS='|' read -r m s c v u d; do
      r="" g=""
      case $s in gpath*) r=$(ratio "$m" "$v" "$u"); g=$(goal "$m" "$v" "$u" "$r") ;; esac
      echo "| $m | $s | $c | $(fmt "$v" "$u") | $d | $r | $g |"
    done < <(sorted_rows)
    echo
    if [ "$complete" = 0 ]; then echo "**Incomplete run** (the file is rewritten after every measurement; this is the last state)."
    elif [ "$skipped" = 1 ] || [ -n "$note" ]; then echo "The run ended within its deadline, **with rows left out**:"
    else echo "Complete run."; fi
    [ -n "$note" ] && echo "$note"
    echo
    [ -s "$STATE/turns.txt" ] && { echo "gpath servers:"; echo; sed 's/^/- /' "$STATE/turns.txt"; echo; }
    echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($NPROC CPUs shared by the clients and the servers)."
  } >"$tmpf"
  mv "$tmpf" "$out"
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    cp "$out" "$OUT/"
    { echo "== prep.log"; tail -40 "$STATE/prep.log" 2>/dev/null; echo "== gpath.log"; tail -40 "$STATE/gpath.log" 2>/dev/null
      echo "== gpath.log events"; grep -h "event=links_changed\|event=cch_ready" "$STATE/gpath.log" 2>/dev/null
      echo "== osrm.log"; tail -20 "$STATE/osrm.log" 2>/dev/null; echo "== costchange.jsonl"; cat "$STATE/costchange.jsonl" 2>/dev/null
      for f in "$STATE"/table-*.json; do [ -f "$f" ] && echo "== $(basename "$f"): $(cat "$f")"; done; } >"$OUT/osrm-cch-logs.txt" 2>/dev/null || true
  fi
}

measure_routes() { # SERVER URL KEEPALIVE_TOO
  local c r cl
  for c in $CONNS; do
    for cl in close ${3:+keep-alive}; do
      fits $((SECS + 40)) || { skip "$1 routes at $c connections ($cl)"; continue; }
      r=$(osrm_wrk route "$c" "$([ "$cl" = keep-alive ] && echo 1)" "$2" "$bbox" "$SECS" 1)
      echo "$1 route c=$c $cl: $r"
      add_row "routes/s, $c connection$([ "$c" = 1 ] || echo s)" "$1" "wrk -c $c, $([ "$cl" = close ] && echo "new connection per request" || echo keep-alive)" \
        "$(wrk_field "$r" rps)" req/s "p50 $(wrk_field "$r" p50_ms) ms, p99 $(wrk_field "$r" p99_ms) ms; statuses $(wrk_field "$r" statuses); socket errors $(wrk_field "$r" socket_errors)"
      write_results
    done
  done
}

measure_tables() { # SERVER URL
  local n j f
  for n in $TABLE_SIZES; do
    f=$STATE/table-$(echo "$1" | tr -c 'A-Za-z0-9\n' '-')-$n.json
    fits 30 || { skip "$1 table ${n}x$n"; continue; }
    timeout $(( $(left) - 15 )) "${PY[@]}" bench/osrm_cch.py table "$2" "$STATE/coords-$n.txt" "$TABLE_BUDGET" >"$f" || true
    j=$(cat "$f")
    echo "$1 table ${n}x$n: $j"
    add_row "table ${n}x$n" "$1" "one request at a time, new connection each" \
      "$(json_field "$j" median_s)" s \
      "median of $(json_field "$j" n) (min $(json_field "$j" min_s | cut -c1-6), max $(json_field "$j" max_s | cut -c1-6) s; after one warm-up); $(json_field "$j" bytes) bytes; null cells $(json_field "$j" nulls); errors $(json_field "$j" errors)"
    write_results
  done
}
json_field() { echo "$1" | "${PY[@]}" -c 'import json, sys
try: v = json.load(sys.stdin).get(sys.argv[1], "")
except ValueError: v = ""
print(v)' "$2"; }

measure_costchange() { # URL [SERVER LABEL]
  fits 60 || { skip "gpath cost changes"; return 0; }
  : >"$STATE/costchange.jsonl"
  timeout $(( $(left) - 15 )) "${PY[@]}" bench/osrm_cch.py costchange "$1" map "$TOKEN" "$bbox" \
    "$PATCH_SINGLE" "$PATCH_BATCH" "$PATCH_FRACTION" 18 >"$STATE/costchange.jsonl" || true
  cat "$STATE/costchange.jsonl"
  local kind probe label summ
  for kind in single batch; do
    for probe in node_route_ms osrm_route_ms; do
      summ=$("${PY[@]}" - "$STATE/costchange.jsonl" "$kind" "$probe" <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rs = [r for r in rs if r.get("kind") == sys.argv[2]]
ok = [r for r in rs if sys.argv[3] in r]
if not rs: sys.exit()
med = lambda k: statistics.median(r[k] for r in ok) if ok else ""
n = rs[0].get("links", 0)
print("%s|%d link%s per PATCH (%s bytes); PATCH answered after %s ms (median); %d of %d changes seen%s" % (
    med(sys.argv[3]), n, "" if n == 1 else "s", rs[0].get("body_bytes", "?"),
    "%.1f" % med("patch_ms") if ok else "-", len(ok), len(rs),
    "; " + rs[0]["error"][:100] if "error" in rs[0] else ""))
PY
)
      [ -n "$summ" ] || continue
      label=$([ "$kind" = single ] && echo "1 link" || awk -v f="$PATCH_FRACTION" 'BEGIN { printf "%g%% of the arcs", f * 100 }')
      add_row "cost change -> answers ($label)" "${2:-gpath $used}" \
        "PATCH, then $([ "$probe" = node_route_ms ] && echo "GET /v1/graphs/map/route (node ids)" || echo "GET /route/v1 (coordinates)") until it answers the new cost" \
        "${summ%%|*}" ms "${summ#*|}"
    done
  done
  write_results
}

osrm_serve() { # ALGO: starts osrm-routed on the prepared files; sets osrm_pid
  local d=$STATE/$1
  LD_LIBRARY_PATH=$osrm/lib "$osrm/bin/osrm-routed" --algorithm "$1" -t "$NPROC" -i 127.0.0.1 \
    -p "$OSRM_PORT" --max-table-size 1000 "$d/map.osrm" >"$STATE/osrm.log" 2>&1 &
  osrm_pid=$!
  if ! wait_http "http://127.0.0.1:$OSRM_PORT/nearest/v1/driving/${bbox%%,*},$(echo "$bbox" | cut -d, -f2)" "$osrm_pid"; then
    tail -5 "$STATE/osrm.log"; stop_pid "$osrm_pid"; osrm_pid=; return 1
  fi
}

bench() {
  wait_prep
  out=$(bench_out "$SUBJECT")
  : >"$rows"
  rm -f "$STATE"/table-*.json "$STATE/costchange.jsonl" "$STATE/results.head" "$STATE/turns.txt"
  local t0 info algo label step
  # gpath: the same OSM file, its CCH on (on a 1M-node graph auto would choose it too)
  local turns first=1 glabel ready_s gurl
  for turns in $TURNS; do
  local tflag=()
  [ "$turns" = default ] || tflag=(--turn-costs "$turns")
  t0=$(now)
  gpath_start "$STATE/gpath.log" --graph "map=osm:$STATE/map.osm.pbf" --backend "$BACKEND" \
    --cch on --log-level "${BENCH_LOG_LEVEL:-warn}" --cache-path "" --osrm-max-table-size 1000 --max-url-bytes 65536 \
    --max-body-bytes 67108864 --max-connections-per-ip 0 --operator-token "$TOKEN" "${tflag[@]}" || return 1
  gurl=http://127.0.0.1:$gpath_port
  ready_s=$(since "$t0")
  info=$("${PY[@]}" -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "$gurl/v1/graphs/map")
  if [ "$first" = 1 ]; then
  used=$("${PY[@]}" -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))["backend"])' "$gurl/health" 2>/dev/null || echo "$BACKEND")
  bbox=$("${PY[@]}" bench/osrm_cch.py bbox "$gurl/v1/graphs/map/overview.geojson?max_edges=100")
  for n in $TABLE_SIZES; do "${PY[@]}" bench/osrm_cch.py coords "$bbox" "$n" "$TABLE_SETS" "$n" >"$STATE/coords-$n.txt"; done
  bench_header "$STATE/results.head" "gpath (CCH) vs OSRM v6 CH and MLD on $(basename "$map")" \
    "bash bench/gpu-osrm-cch.sh $phase $(basename "$map")$([ "$phase" = bench ] && echo " (after bash bench/gpu-osrm-cch.sh prep on the same machine)") (BENCH_SECONDS=$SECS BENCH_CONNS=\"$CONNS\" BENCH_TABLE_SETS=$TABLE_SETS BENCH_TABLE_BUDGET_S=$TABLE_BUDGET BENCH_PATCH_FRACTION=$PATCH_FRACTION BENCH_DEADLINE_S=$DEADLINE BENCH_OSRM=${BENCH_OSRM:-1} BENCH_LOG_LEVEL=${BENCH_LOG_LEVEL:-warn} BENCH_TABLE_SIZES=\"$TABLE_SIZES\" BENCH_GPATH_TURNS=\"$TURNS\" BENCH_WRK_THREADS=${BENCH_WRK_THREADS:-4})"
  {
    echo "Map: \`$(basename "$map")\` ($(du -h "$map" | cut -f1), cksum $map_id), road bbox shrunk by 10%: $bbox."
    echo "gpath graph: $(echo "$info" | sed -E 's/"source":"[^"]*",//')."
    echo
    echo "Preparation (not in the table): gpath \`serve\` from the OSM file to /ready ${ready_s} s (OSM import, CCH"
    echo "order, contraction, first customization; backend answering: $used). OSRM (\`-t $NPROC\`, car.lua, same file;"
    echo "timed by \`prep\` on this machine: $(sed -n 1p "$STATE/prep.log" 2>/dev/null | sed 's/^prep on [^,]*, //')): osrm-extract $(prep_time extract) s,"
    echo "osrm-partition $(prep_time partition) s, osrm-customize $(prep_time customize) s, osrm-contract $(prep_time contract) s."
    echo
    echo "Servers: \`gpath serve --backend $BACKEND --cch on --cache-path \"\" --osrm-max-table-size 1000"
    echo "--max-url-bytes 65536 --max-connections-per-ip 0\` (matrix cache off); \`osrm-routed --algorithm ch|mld"
    echo "-t $NPROC --max-table-size 1000\`, one server at a time, all on this machine's $NPROC CPUs with the client."
    echo "Routes: wrk (threads = connections up to ${BENCH_WRK_THREADS:-4}), ${SECS} s per row, GET /route/v1/driving/A;B?overview=false"
    echo "with A, B random in the bbox (bench/osrm-api.lua, fixed seeds: the same sequence for every server)."
    echo "Tables: GET /table/v1/driving/ with N random coordinates (N x N durations), the same $TABLE_SETS coordinate"
    echo "sets for every server (bench/osrm_cch.py; the first a warm-up, then up to $((TABLE_SETS - 1)) counted within"
    echo "${TABLE_BUDGET} s), client time to the last byte. Cost change: gpath, PATCH /v1/graphs/map/links lowering the cost"
    echo "of one link of the current shortest path s->t (so the s->t cost must drop), alone or with random links"
    echo "(new costs x0.5-2) of a shortest-path tree, then the same s->t asked until the answer has the new cost,"
    echo "time from sending the PATCH ($PATCH_SINGLE single-link and $PATCH_BATCH batch PATCHes, medians); OSRM answers a"
    echo "cost change only after its preparation again (osrm-contract for CH, osrm-customize for MLD: the times above,"
    echo "with \`--segment-speed-file\` they are the same steps). Both use their own speed models (gpath's car"
    echo "profile table, OSRM's car.lua), so routes differ somewhat."
    echo
    echo "gpath / OSRM CH: routes, gpath req/s over OSRM CH's (new connection per request) at the same connections;"
    echo "tables, OSRM CH's median over gpath's; cost change, osrm-contract's seconds over gpath's time to the answer."
    echo
  } >>"$STATE/results.head"
  write_results
  fi
  first=0
  glabel="gpath $used$([ "$turns" = default ] || echo ", turn costs $turns")"
  echo "$glabel on $(basename "$map"): ready in ${ready_s} s, bbox $bbox"
  echo "$glabel: serve to /ready ${ready_s} s; graph $(echo "$info" | sed -E 's/"source":"[^"]*",//'); $(grep -h 'turn' "$STATE/gpath.log" | tail -2 | tr '\n' ' ')" >>"$STATE/turns.txt"
  measure_routes "$glabel" "$gurl" 1
  measure_tables "$glabel" "$gurl"
  measure_costchange "$gurl" "$glabel"
  stop_pid "$gpath_pid"; gpath_pid=
  done
  for algo in $([ "${BENCH_OSRM:-1}" = 0 ] || echo ch mld); do
    label="OSRM $(echo "$algo" | tr a-z A-Z)"
    step=$([ "$algo" = ch ] && echo contract || echo customize)
    if [ -z "$(prep_time "$step")" ]; then
      note="${note}$label not measured: not prepared (run \`bash bench/gpu-osrm-cch.sh prep MAP\` first, same machine). "
      write_results; continue
    fi
    fits 60 || { skip "$label"; continue; }
    osrm_serve "$algo" || { note="${note}$label: osrm-routed did not start ($(tail -1 "$STATE/osrm.log")). "; continue; }
    echo "$label serving"
    measure_routes "$label" "http://127.0.0.1:$OSRM_PORT" ""
    measure_tables "$label" "http://127.0.0.1:$OSRM_PORT"
    add_row "cost change -> answers (any)" "$label" "$([ "$algo" = ch ] && echo osrm-contract || echo "osrm-customize (after osrm-partition $(prep_time partition) s, once)") -t $NPROC" \
      "$(prep_time "$step")" s "the whole graph again, then a restart of osrm-routed (or its shared-memory reload)"
    stop_pid "$osrm_pid"; osrm_pid=
  done
  complete=1
  write_results
  echo "wrote $out"
}

case $phase in
  prep) prep ;;
  prep-bg)
    BENCH_DEADLINE_S=0 setsid nohup bash bench/gpu-osrm-cch.sh prep "$map" >"$STATE/prep.out" 2>&1 </dev/null &
    echo $! >"$STATE/prep.pid"
    echo "prep started in the background (pid $!, log $STATE/prep.out)" ;;
  bench) bench ;;
  all) prep || true; bench ;;
esac
