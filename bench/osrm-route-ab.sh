#!/usr/bin/env bash
# osrm-route-ab.sh A_BIN B_BIN [MAP.osm.pbf] - OSRM /route/v1 throughput of two gpath binaries and
# of OSRM v6 CH on one OSM file (default: Liechtenstein from $GPATH_DATA/osm), the client of
# issue 35's route rows: wrk with bench/osrm-api.lua (fixed seeds), GET
# /route/v1/driving/A;B?overview=false, a new connection per request (Connection: close) at
# BENCH_CONNS connections. One server at a time, started afresh for each row; rows alternate A, B
# (and OSRM in the first BENCH_OSRM_ROUNDS rounds), BENCH_ROUNDS times. Each row reports req/s and
# the CPU time per request of the server (user + system ticks of its process from /proc over the
# row, divided by the requests wrk completed) and of wrk: on a machine shared with other work
# req/s swing with its load, the CPU per request holds. Medians into
# bench/results/DATE-MACHINE-osrm-route-ab.md, with gpath / OSRM CH by req/s and by server CPU.
#   env: GPATH_DATA (../shared/data), OSRM_TARBALL (../shared/peers/osrm/...tar.xz) or OSRM_DIR,
#        BENCH_CONNS (64), BENCH_SECONDS (5), BENCH_ROUNDS (4), BENCH_OSRM_ROUNDS (2),
#        BENCH_WRK_THREADS (2), BENCH_SERVE_ARGS (extra `gpath serve` flags; the default is
#        bench/gpu-osrm-cch.sh's: --backend cpu --cch on --cache-path "" --max-connections-per-ip 0)
set -eu
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/osrm-lib.sh
. bench/osrm-lib.sh
A=${1:?usage: bench/osrm-route-ab.sh A_BIN B_BIN [MAP.osm.pbf]}
B=${2:?usage: bench/osrm-route-ab.sh A_BIN B_BIN [MAP.osm.pbf]}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
MAP=${3:-$DATA/osm/liechtenstein-latest.osm.pbf}
TARBALL=${OSRM_TARBALL:-$(cd .. && pwd)/shared/peers/osrm/osrm-v6.0.0-debian12-bin.tar.xz}
CONNS=${BENCH_CONNS:-64}
SECS=${BENCH_SECONDS:-5}
ROUNDS=${BENCH_ROUNDS:-4}
OSRM_ROUNDS=${BENCH_OSRM_ROUNDS:-2}
export BENCH_WRK_THREADS=${BENCH_WRK_THREADS:-2}
WRK=${WRK:-wrk}
read -r -a SERVE_ARGS <<<"${BENCH_SERVE_ARGS:---backend cpu --cch on --cache-path \"\" --max-connections-per-ip 0}"
for i in "${!SERVE_ARGS[@]}"; do [ "${SERVE_ARGS[$i]}" = '""' ] && SERVE_ARGS[i]=""; done
[ -f "$MAP" ] || { echo "osrm-route-ab: no map $MAP"; exit 1; }
tmp=$(mktemp -d)
pid=
gpath_pid=
cleanup() {
  [ -n "$pid" ] && stop_pid "$pid"
  [ -n "$gpath_pid" ] && stop_pid "$gpath_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
cp "$MAP" "$tmp/map.osm.pbf"
osrm=${OSRM_DIR:-}
if [ -z "$osrm" ] && [ -f "$TARBALL" ]; then
  osrm=$tmp/osrm
  osrm_unpack "$TARBALL" "$osrm"
fi
if [ -n "$osrm" ] && ! { osrm_step "$tmp/osrm.log" osrm-extract -p "$osrm/profiles/car.lua" -t "$(nproc)" "$tmp/map.osm.pbf" &&
  osrm_step "$tmp/osrm.log" osrm-contract -t "$(nproc)" "$tmp/map.osrm"; }; then
  echo "osrm-route-ab: OSRM preparation failed, its rows are left out: $(tail -1 "$tmp/osrm.log")"
  osrm=
fi

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
bbox=
row() { # LABEL URL PID: one wrk run; appends "label rps server_us wrk_us statuses" to rows
  local t0 t1 r req rps w0 w1
  t0=$(ticks "$3")
  w0=$(awk '{print $16 + $17}' "/proc/$$/stat") # this shell's waited-for children: wrk
  r=$(osrm_wrk route "$CONNS" "" "$2" "$bbox" "$SECS" 1)
  w1=$(awk '{print $16 + $17}' "/proc/$$/stat")
  t1=$(ticks "$3")
  req=$(wrk_field "$r" requests)
  rps=$(wrk_field "$r" rps)
  if [ -z "$req" ] || [ "$req" -le 0 ]; then echo "osrm-route-ab: wrk failed on $1"; return 1; fi
  echo "$1 $rps $(( (t1 - t0) * 1000000 / HZ / req )) $(( (w1 - w0) * 1000000 / HZ / req )) $(wrk_field "$r" statuses)" >>"$tmp/rows"
  tail -1 "$tmp/rows"
}
serve_row() { # LABEL BIN
  BIN=$2
  gpath_start "$tmp/gpath.log" --graph "map=osm:$tmp/map.osm.pbf" --log-level warn \
    --osrm-max-table-size 1000 "${SERVE_ARGS[@]}" || return 1
  [ -n "$bbox" ] || bbox=$(python3 bench/osrm_cch.py bbox "http://127.0.0.1:$gpath_port/v1/graphs/map/overview.geojson?max_edges=100")
  row "$1" "http://127.0.0.1:$gpath_port" "$gpath_pid"
  stop_pid "$gpath_pid"
  gpath_pid=
}
for round in $(seq "$ROUNDS"); do
  serve_row A "$A"
  serve_row B "$B"
  if [ -n "$osrm" ] && [ "$round" -le "$OSRM_ROUNDS" ]; then
    LD_LIBRARY_PATH=$osrm/lib "$osrm/bin/osrm-routed" --algorithm ch -t "$(nproc)" -i 127.0.0.1 -p 5078 \
      "$tmp/map.osrm" >"$tmp/routed.log" 2>&1 &
    pid=$!
    ll=$(echo "$bbox" | cut -d, -f1,2)
    wait_http "http://127.0.0.1:5078/route/v1/driving/$ll;$ll?overview=false" "$pid" || true
    row OSRM-CH "http://127.0.0.1:5078" "$pid"
    stop_pid "$pid"
    pid=
  fi
done

out=$(bench_out osrm-route-ab)
bench_header "$out" "/route/v1 with a new connection per request: gpath A/B and OSRM v6 CH" \
  "bash bench/osrm-route-ab.sh $(basename "$A") $(basename "$B") $(basename "$MAP") (BENCH_CONNS=$CONNS BENCH_SECONDS=$SECS BENCH_ROUNDS=$ROUNDS BENCH_OSRM_ROUNDS=$OSRM_ROUNDS BENCH_WRK_THREADS=$BENCH_WRK_THREADS)"
python3 - "$tmp/rows" "$(basename "$A")" "$(basename "$B")" "${BENCH_SERVE_ARGS:---backend cpu --cch on --cache-path \"\" --max-connections-per-ip 0}" "$CONNS" "$SECS" "$BENCH_WRK_THREADS" >>"$out" <<'EOF'
import statistics, sys
rows, a, b, args, conns, secs, wt = sys.argv[1:]
by = {}
for line in open(rows):
    label, rps, srv, wrk, st = line.split()
    by.setdefault(label, []).append((float(rps), int(srv), int(wrk), st))
med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v),
           statistics.median(r[2] for r in v)) for k, v in by.items()}
print(f"A = `{a}`, B = `{b}` (`gpath serve {args}`, log level warn); OSRM = osrm-routed --algorithm ch")
print(f"on the same file. wrk {wt} threads, {conns} connections, {secs} s per row, GET")
print("/route/v1/driving/A;B?overview=false with Connection: close (bench/osrm-api.lua, fixed seeds).")
print("Medians over the rounds; CPU us/req = the process's user + system time over the row / requests.\n")
print("| server | rows | req/s | server CPU us/req | wrk CPU us/req | req/s per row | statuses |")
print("|---|---|---|---|---|---|---|")
for k in ("A", "B", "OSRM-CH"):
    if k in by:
        m = med[k]
        print(f"| {k} | {len(by[k])} | {m[0]:,.0f} | {m[1]:.0f} | {m[2]:.0f} | "
              f"{' '.join(f'{r[0]:.0f}' for r in by[k])} | {by[k][-1][3]} |")
if "OSRM-CH" in med:
    o = med["OSRM-CH"]
    for k in ("A", "B"):
        m = med[k]
        print(f"\n{k} / OSRM CH: {m[0] / o[0]:.2f}x by req/s, {o[1] / m[1]:.2f}x by server CPU per request.", end="")
    print()
EOF
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs, shared with wrk and anything else)." >>"$out"
echo "wrote $out"
cat "$out"
