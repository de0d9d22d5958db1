#!/usr/bin/env bash
# osrm-api.sh SUBJECT BACKEND... - OSRM v1 requests per second through HTTP: gpath's /route/v1 and
# /table/v1 (each BACKEND: cuda, cpu) against OSRM v6 (osrm-routed, CH, car.lua) on the same OSM
# file in the same run, with the same wrk request sequences (bench/osrm-api.lua: random coordinates
# inside the extract's bounding box, fixed seeds). Extracts: Liechtenstein (a real one, from
# $GPATH_DATA/osm) and a generated 1M-intersection street grid (bench/gen_osm_grid.py + osmium; gpath
# loads it as a 1,000,000-node graph). Writes bench/results/DATE-MACHINE-SUBJECT.md (bench/lib.sh).
# Run by bench/cpu-osrm-api.sh (cpu) and bench/gpu-osrm-api.sh (cuda, cpu).
#   env: BUILD (build), GPATH_DATA (../shared/data), OSRM_TARBALL (../shared/peers/osrm/...tar.xz)
#        or OSRM_DIR (already unpacked), GEN_OSM_PBF (the generated file; made when absent and
#        osmium is installed), BENCH_EXTRACTS ("liechtenstein gen1m"), BENCH_SECONDS (5),
#        BENCH_CONNS ("1 16"), BENCH_TABLE_N (25), WRK (wrk), CURL (curl),
#        OSRM_ALGORITHMS ("ch"; "mld" = osrm-partition + osrm-customize, --algorithm mld, far
#        quicker to prepare on large grids; "mld ch" runs both, rows labelled by algorithm),
#        BENCH_GPATH (1; 0 = OSRM rows only, then BENCH_BBOX=minlon,minlat,maxlon,maxlat is
#        required, e.g. the bbox of an earlier run's gpath rows), BENCH_DEADLINE_S (none; when
#        set, each OSRM preparation step is stopped 40 s before the script has run this long)
# The OSRM baseline is skipped with a note when its binaries are absent; gpath rows still run.
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/osrm-lib.sh
. bench/osrm-lib.sh
subject=${1:?usage: bench/osrm-api.sh SUBJECT BACKEND...}
shift
backends=${*:-cpu}
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpath
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
TARBALL=${OSRM_TARBALL:-$(cd .. && pwd)/shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz}
EXTRACTS=${BENCH_EXTRACTS:-liechtenstein gen1m}
SECS=${BENCH_SECONDS:-5}
CONNS=${BENCH_CONNS:-1 16}
TABLE_N=${BENCH_TABLE_N:-25}
WRK=${WRK:-wrk}
ALGOS=${OSRM_ALGORITHMS:-ch}
RUN_GPATH=${BENCH_GPATH:-1}
DEADLINE=${BENCH_DEADLINE_S:-0}
CURL=${CURL:-curl}
NPROC=$(nproc)
command -v "$WRK" >/dev/null || { echo "osrm-api: wrk is missing"; exit 1; }
[ "$RUN_GPATH" = 0 ] && backends=
[ -n "$backends" ] || [ -n "${BENCH_BBOX:-}" ] || { echo "osrm-api: BENCH_GPATH=0 needs BENCH_BBOX"; exit 1; }
[ -z "$backends" ] || [ -x "$BIN" ] || { echo "osrm-api: no $BIN (make all first)"; exit 1; }
for a in $ALGOS; do
  case $a in ch | mld) ;; *) echo "osrm-api: OSRM_ALGORITHMS: unknown algorithm $a"; exit 1 ;; esac
done
tmp=$(mktemp -d)
pid=
out=
table_done=0
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  # cut short (timeout, ^C): the rows measured so far still make a results file
  [ -n "$out" ] && [ "$table_done" = 0 ] && [ -s "$tmp/rows" ] && write_table "(cut short)"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# ---- OSRM
osrm=${OSRM_DIR:-}
if [ -z "$osrm" ] && [ -f "$TARBALL" ]; then
  osrm=$tmp/osrm
  osrm_unpack "$TARBALL" "$osrm"
fi
[ -n "$osrm" ] && [ -x "$osrm/bin/osrm-routed" ] || osrm=

file_of() {
  case $1 in
    liechtenstein) echo "$DATA/osm/liechtenstein-latest.osm.pbf" ;;
    monaco) echo "$DATA/osm/monaco.osm.pbf" ;;
    gen1m)
      local f=${GEN_OSM_PBF:-$tmp/gen1m.osm.pbf}
      if [ ! -f "$f" ] && command -v osmium >/dev/null; then
        /usr/bin/python3 bench/gen_osm_grid.py 1000000 1 "$tmp/gen1m.osm" && \
          osmium cat -q "$tmp/gen1m.osm" -o "$f" --overwrite && rm -f "$tmp/gen1m.osm"
      fi
      echo "$f" ;;
    *) echo "$1" ;;
  esac
}

out=$(bench_out "$subject")
bench_header "$out" "OSRM v1 API throughput: gpath vs OSRM (wrk)" \
  "bash bench/$subject.sh (BENCH_SECONDS=$SECS BENCH_CONNS=\"$CONNS\" BENCH_TABLE_N=$TABLE_N)"
{
  echo "Each row: wrk, ${SECS} s, requests built by bench/osrm-api.lua with fixed seeds (the same"
  echo "sequence for every server): \`route\` = GET /route/v1/driving/A;B?overview=false with A, B"
  echo "random in the extract's bounding box (shrunk by 10%), \`table\` = GET /table/v1/driving/"
  echo "with $TABLE_N random coordinates (a ${TABLE_N}x${TABLE_N} duration table). Both servers snap"
  echo "the coordinates to the nearest road. \`close\`: a new connection per request (OSRM's"
  echo "recommended client setting, see ../shared/peers/osrm/SOURCE.md); \`keep-alive\`: one per"
  echo "wrk connection (gpath only). One run per row (no repetitions: rows are throughput over"
  echo "${SECS} s, p50/p99 are wrk's latency percentiles of that run). ratio = gpath req/s / OSRM"
  echo "req/s for the same request, extract and connections (close)."
  echo
  echo "gpath: \`gpath serve --backend B --osrm-max-table-size 1000\`, graph \`osm:FILE\` (car"
  echo "profile). OSRM v6.0.0: osrm-extract -p car.lua, then per algorithm (backend column, here:"
  echo "$ALGOS) ch = osrm-contract, mld = osrm-partition + osrm-customize; osrm-routed --algorithm"
  echo "ALGO -t $NPROC --max-table-size 1000. The ratio is to OSRM ch where measured, else to mld"
  echo "(marked). The two use different speed models (gpath's car profile"
  echo "table vs car.lua), so routes differ somewhat; both answer every request."
  [ "$RUN_GPATH" = 0 ] && echo && echo "BENCH_GPATH=0: OSRM rows only; bbox given: $BENCH_BBOX."
  echo
} >>"$out"
rows=$tmp/rows
: >"$rows"
# shellcheck disable=SC2094 # reads $rows, writes $out
# write_table NOTE: the results table from the rows measured, with the ratio to OSRM
write_table() {
  {
    echo
    [ -n "$1" ] && echo "$1"
    echo "| server | backend | extract | request | connections | client | req/s | p50 ms | p99 ms | statuses | socket errors | ratio to OSRM |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    while IFS='|' read -r srv be ex rq c cl rps p50 p99 st se; do
      # the OSRM row for the same request: ch if measured, else mld
      base=$(awk -F'|' -v ex="$ex" -v rq="$rq" -v c="$c" '$1=="osrm" && $3==ex && $4==rq && $5==c && $7!="" {print $2, $7}' "$rows" |
        sort | head -1)
      ratio=
      if [ "$srv" = gpath ] && [ -n "$base" ] && [ -n "$rps" ]; then
        ratio=$(awk -v a="$rps" -v b="${base#* }" -v al="${base%% *}" \
          'BEGIN { if (b > 0) printf "%.2fx%s", a / b, (al == "ch" ? "" : " (vs " al ")") }')
      fi
      echo "| $srv | $be | $ex | $rq | $c | $cl | $rps | $p50 | $p99 | $st | $se | $ratio |"
    done <"$rows"
    echo
    echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg) ($NPROC CPUs shared by wrk and the servers)."
  } >>"$out"
}
run_wrk() { # server backend extract request conns keepalive url bbox
  local c=$5 r client=close
  r=$(osrm_wrk "$4" "$c" "$6" "$7" "$8" "$SECS" "$TABLE_N")
  echo "$1 $2 $3 $4 c=$c ${6:+keep-alive}: $r"
  [ -n "$6" ] && client=keep-alive
  echo "$1|$2|$3|$4|$c|$client|$(wrk_field "$r" rps)|$(wrk_field "$r" p50_ms)|$(wrk_field "$r" p99_ms)|$(wrk_field "$r" statuses)|$(wrk_field "$r" socket_errors)" >>"$rows"
}

osrm_failed() { # EXTRACT WHAT: report a failed or stopped preparation step with its log's tail
  echo "osrm-api: OSRM $2 preparation of $1 failed or was stopped:"; tail -20 "$tmp/osrm-prep.log"
  echo "- $1: OSRM $2 preparation failed or was stopped: $(tail -1 "$tmp/osrm-prep.log")" >>"$out"
  grep -v '^$' "$tmp/osrm-prep.log" | tail -3 | sed -E "s/^/  - $1 OSRM log: /" >>"$out" || true
  : >"$tmp/osrm-prep.log"
}

for ex in $EXTRACTS; do
  f=$(file_of "$ex")
  if [ ! -f "$f" ]; then echo "osrm-api: $ex: no file $f, skipped"; echo "- $ex: skipped (no file $(basename "$f"))" >>"$out"; continue; fi
  bbox=${BENCH_BBOX:-}
  if [ -z "$backends" ]; then echo "- $ex: \`$(basename "$f")\` ($(du -h "$f" | cut -f1)); bbox used: $bbox" >>"$out"; fi
  for be in $backends; do
    if ! gpath_start "$tmp/gpath.log" --graph "map=osm:$f" --backend "$be" --log-level warn \
      --cache-path "" --osrm-max-table-size 1000; then
      echo "- $ex: gpath --backend $be did not start: $(tail -1 "$tmp/gpath.log")" >>"$out"
      continue
    fi
    pid=$gpath_pid port=$gpath_port
    info=$("$CURL" -s "http://127.0.0.1:$port/v1/graphs/map")
    used=$("$CURL" -s "http://127.0.0.1:$port/health" | sed -nE 's/.*"backend":"([a-z]+)".*/\1/p')
    if [ -z "$bbox" ]; then
      bbox=$("$CURL" -s "http://127.0.0.1:$port/v1/graphs/map/overview.geojson?max_edges=100" |
        sed -nE 's/.*"bbox":\[([^]]*)\].*/\1/p' |
        awk -F, '{dx=($3-$1)*0.1; dy=($4-$2)*0.1; printf "%.6f,%.6f,%.6f,%.6f", $1+dx, $2+dy, $3-dx, $4-dy}')
      echo "- $ex: \`$(basename "$f")\` ($(du -h "$f" | cut -f1)); gpath graph: $(echo "$info" |
        sed -E 's/"source":"[^"]*",//'); bbox used: $bbox" >>"$out"
    fi
    echo "gpath $be (answering: $used) on $ex"
    [ "$used" = "$be" ] || echo "- note: gpath asked for backend $be answered with $used" >>"$out"
    for c in $CONNS; do
      run_wrk gpath "$used" "$ex" route "$c" "" "http://127.0.0.1:$port" "$bbox"
      run_wrk gpath "$used" "$ex" route "$c" 1 "http://127.0.0.1:$port" "$bbox"
      run_wrk gpath "$used" "$ex" table "$c" "" "http://127.0.0.1:$port" "$bbox"
    done
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
  done
  if [ -n "$osrm" ]; then
    mkdir -p "$tmp/o" && cp "$f" "$tmp/o/map.osm.pbf"
    t0=$(date +%s)
    if ! osrm_step "$tmp/osrm-prep.log" osrm-extract -p "$osrm/profiles/car.lua" -t "$NPROC" "$tmp/o/map.osm.pbf"; then
      osrm_failed "$ex" extract; rm -rf "$tmp/o"; continue
    fi
    echo "- $ex: OSRM osrm-extract $(( $(date +%s) - t0 )) s" >>"$out"
    for algo in $ALGOS; do
      d=$tmp/$algo
      rm -rf "$d" && cp -r "$tmp/o" "$d"
      t0=$(date +%s)
      if [ "$algo" = ch ]; then
        osrm_step "$tmp/osrm-prep.log" osrm-contract -t "$NPROC" "$d/map.osrm" || { osrm_failed "$ex" "$algo"; rm -rf "$d"; continue; }
      else
        { osrm_step "$tmp/osrm-prep.log" osrm-partition -t "$NPROC" "$d/map.osrm" &&
          osrm_step "$tmp/osrm-prep.log" osrm-customize -t "$NPROC" "$d/map.osrm"; } || { osrm_failed "$ex" "$algo"; rm -rf "$d"; continue; }
      fi
      prep=$(( $(date +%s) - t0 ))
      LD_LIBRARY_PATH=$osrm/lib "$osrm/bin/osrm-routed" --algorithm "$algo" -t "$NPROC" -i 127.0.0.1 \
        -p 5077 --max-table-size 1000 "$d/map.osrm" >"$tmp/osrm.log" 2>&1 &
      pid=$!
      if ! wait_http "http://127.0.0.1:5077/nearest/v1/driving/${bbox%%,*},$(echo "$bbox" | cut -d, -f2)" "$pid"; then
        tail -20 "$tmp/osrm.log"
        echo "- $ex: osrm-routed --algorithm $algo did not start: $(tail -1 "$tmp/osrm.log")" >>"$out"
        kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; rm -rf "$d"; continue
      fi
      echo "- $ex: OSRM $algo preparation ($([ "$algo" = ch ] && echo contract || echo partition + customize)) ${prep} s" >>"$out"
      for c in $CONNS; do
        run_wrk osrm "$algo" "$ex" route "$c" "" "http://127.0.0.1:5077" "$bbox"
        run_wrk osrm "$algo" "$ex" table "$c" "" "http://127.0.0.1:5077" "$bbox"
      done
      kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
      rm -rf "$d"
    done
    rm -rf "$tmp/o"
  else
    echo "- $ex: OSRM baseline not run (no OSRM binaries: set OSRM_TARBALL or OSRM_DIR)" >>"$out"
  fi
done
write_table ""
table_done=1
echo "wrote $out"
