#!/usr/bin/env bash
# cpu-pgrouting.sh - gpath (CPU backend, served over HTTP) against pgRouting on the same 1M-node
# generated road graph stored in the same PostgreSQL, in one run:
#   - the graph: `gpath gen` -> edges table (COPY; one row per road segment with cost and
#     reverse_cost, pgRouting's layout), read back by gpath through libpq (same content hash as the
#     generated file proves it is the same graph);
#   - pgr_dijkstra vs GET route on the same random pairs (answers compared), medians;
#   - pgr_dijkstraCostMatrix vs POST table on the same K vertices (answers compared), medians;
#   - a cached CxC table served from the SQLite cache vs its cold computation.
# pgRouting builds its graph from the edges SQL on every call (that is how it works); gpath loads it
# once, so its one-time load time is reported too. Results: bench/results/DATE-MACHINE-pgrouting.md.
# Knobs (env): GPATH_BENCH_NODES (1000000), GPATH_BENCH_PAIRS (7), GPATH_BENCH_K (20),
# GPATH_BENCH_CACHE_N (1000), GPATH_BENCH_REPS (5).
# shellcheck disable=SC2034 # PGC_EXTRA_OPTS is read by tests/pg_cluster.sh
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=tests/pg_cluster.sh
. tests/pg_cluster.sh
BUILD=${BUILD:-build}
GP=$PWD/$BUILD/gpath
N=${GPATH_BENCH_NODES:-1000000}
PAIRS=${GPATH_BENCH_PAIRS:-7}
K=${GPATH_BENCH_K:-20}
C=${GPATH_BENCH_CACHE_N:-1000}
REPS=${GPATH_BENCH_REPS:-5}
PY=/usr/bin/python3
[ -x "$GP" ] || { echo "cpu-pgrouting: build $GP first (make all)"; exit 1; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  pgc_stop -m immediate
  rm -rf "$tmp"
}
trap cleanup EXIT
log() { echo "# $*" >&2; }
median() { $PY -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print("%.3f" % statistics.median(v))' "$@"; }

PGC_EXTRA_OPTS="-c shared_buffers=1GB -c work_mem=256MB -c max_wal_size=8GB -c checkpoint_timeout=30min"
pgc_start "$tmp/pg" || { echo "cpu-pgrouting: PostgreSQL: $PGC_WHY"; exit 1; }
createdb bench
pgc_psql bench -c "CREATE EXTENSION pgrouting CASCADE" >/dev/null 2>&1 ||
  { echo "cpu-pgrouting: CREATE EXTENSION pgrouting failed (postgresql-15-pgrouting + postgis needed)"; exit 1; }
pgr_version=$(pgc_psql bench -At -c "SELECT pgr_version()")

log "generating gen:$N"
"$GP" gen --nodes "$N" --out "$tmp/g.gr" >"$tmp/gen.json" || exit 1
# the version of the file as gpath reads it back (the generated graph's own version also covers its
# road classes, which DIMACS and the edges table do not carry)
file_version=$("$GP" info --graph "$tmp/g.gr" | $PY -c 'import json,sys; print(json.load(sys.stdin)["version"])')
arcs=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["edges"])' "$tmp/gen.json")

# one row per road segment u<v with cost (u->v) and reverse_cost (v->u, -1 when absent)
log "COPY into edges"
t0=$(date +%s.%N)
pgc_psql bench -c "CREATE UNLOGGED TABLE edges (id bigint, source bigint, target bigint,
  cost float8, reverse_cost float8)"
awk '$1 == "a" { if ($2 < $3) f[$2 " " $3] = $4; else r[$3 " " $2] = $4 }
     END { id = 0
       for (k in f) { split(k, p, " "); rc = (k in r) ? r[k] : -1; delete r[k]
                      print ++id "," p[1] "," p[2] "," f[k] "," rc }
       for (k in r) { split(k, p, " "); print ++id "," p[1] "," p[2] ",-1," r[k] } }' "$tmp/g.gr" |
  pgc_psql bench -c "\\copy edges FROM STDIN CSV" || exit 1
pgc_psql bench -c "ALTER TABLE edges ADD PRIMARY KEY (id)" -c "ANALYZE edges"
copy_s=$($PY -c "import time; print('%.1f' % (time.time() - $t0))")
rows=$(pgc_psql bench -At -c "SELECT count(*) FROM edges")
log "$rows edge rows in ${copy_s}s"

# gpath serve, reading the table through libpq (scale=1: integer costs, same hash as the file)
spec="$PGC_URI/bench?table=edges&scale=1"
t0=$(date +%s.%N)
"$GP" serve --graph "road=$spec" --listen 127.0.0.1 --port 0 --port-file "$tmp/port" \
  --backend cpu --cache-path "$tmp/cache.db" --cache-budget-mb 2048 --admin-token tok \
  --max-table-cells $((C * C > 1000000 ? C * C : 1000000)) --log-level info >"$tmp/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1200); do
  [ -s "$tmp/port" ] && curl -sf "http://127.0.0.1:$(cat "$tmp/port")/ready" >/dev/null 2>&1 && break
  sleep 0.1
done
load_s=$($PY -c "import time; print('%.1f' % (time.time() - $t0))")
port=$(cat "$tmp/port")
base="http://127.0.0.1:$port"
info=$(curl -s "$base/v1/graphs/road")
pg_version=$(echo "$info" | $PY -c 'import json,sys; print(json.load(sys.stdin)["version"])')
pg_nodes=$(echo "$info" | $PY -c 'import json,sys; print(json.load(sys.stdin)["nodes"])')
pg_arcs=$(echo "$info" | $PY -c 'import json,sys; print(json.load(sys.stdin)["edges"])')
log "gpath loaded $pg_nodes nodes, $pg_arcs arcs from PostgreSQL in ${load_s}s (version $pg_version, file $file_version)"
purge() { curl -s -X DELETE -H 'Authorization: Bearer tok' "$base/admin/cache" >/dev/null; }

# --- route vs pgr_dijkstra ---------------------------------------------------------------------------
read -r -a pairs <<<"$($PY -c "import random; r=random.Random(42); print(' '.join('%d:%d' % (r.randint(1,$N), r.randint(1,$N)) for _ in range($PAIRS)))")"
edges_q="SELECT id, source, target, cost, reverse_cost FROM edges"
pgr_t=() gp_t=() mism=0
{
  echo "\\timing on"
  for p in "${pairs[@]}"; do
    echo "SELECT '${p}', agg_cost FROM pgr_dijkstra('$edges_q', ${p%%:*}, ${p##*:}) WHERE edge = -1;"
  done
} >"$tmp/dij.sql"
log "pgr_dijkstra x ${#pairs[@]}"
pgc_psql bench -At -f "$tmp/dij.sql" >"$tmp/dij.out"
mapfile -t pgr_t < <(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$tmp/dij.out")
for p in "${pairs[@]}"; do
  want=$(grep "^$p|" "$tmp/dij.out" | cut -d'|' -f2)
  ts=()
  for _ in $(seq "$REPS"); do
    ts+=("$(curl -s -o "$tmp/r.json" -w '%{time_total}' "$base/v1/graphs/road/route?from=${p%%:*}&to=${p##*:}")")
  done
  got=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["weight"]; print("" if d is None else d)' "$tmp/r.json")
  [ -n "$want" ] && [ -n "$got" ] && $PY -c "import sys; sys.exit(0 if abs(float('$want')-float('$got'))<1e-9 else 1)" || mism=$((mism + 1))
  gp_t+=("$($PY -c "print(1000*$(median "${ts[@]}"))")")
done
pgr_route_ms=$(median "${pgr_t[@]}")
gp_route_ms=$(median "${gp_t[@]}")
route_mism=$mism

# --- table vs pgr_dijkstraCostMatrix -----------------------------------------------------------------
ids=$($PY -c "import random; r=random.Random(7); print(','.join(str(r.randint(1,$N)) for _ in range($K)))")
log "pgr_dijkstraCostMatrix ${K}x${K} x 3"
{
  echo "\\timing on"
  for _ in 1 2 3; do
    echo "SELECT count(*) FROM pgr_dijkstraCostMatrix('$edges_q', '{$ids}'::bigint[]);"
  done
  echo "\\timing off"
  echo "SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCostMatrix('$edges_q', '{$ids}'::bigint[]);"
} >"$tmp/cm.sql"
pgc_psql bench -At -f "$tmp/cm.sql" >"$tmp/cm.out"
mapfile -t pgr_cm_t < <(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$tmp/cm.out")
grep -E '^[0-9]+\|[0-9]+\|' "$tmp/cm.out" >"$tmp/cm.rows"
body="{\"sources\":[$ids],\"targets\":[$ids]}"
gp_cm_t=()
for _ in $(seq "$REPS"); do
  purge
  gp_cm_t+=("$(curl -s -o "$tmp/t.json" -w '%{time_total}' -X POST -H 'Content-Type: application/json' -d "$body" "$base/v1/graphs/road/table")")
done
table_diff=$($PY - "$tmp/t.json" "$tmp/cm.rows" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
ours = {(s, t): g["weights"][i][j] for i, s in enumerate(g["sources"]) for j, t in enumerate(g["targets"]) if s != t and g["weights"][i][j] is not None}
pg = {}
for l in open(sys.argv[2]):
    s, t, c = l.strip().split("|"); pg[(int(s), int(t))] = float(c)
print(sum(1 for k in set(ours) | set(pg) if k not in ours or k not in pg or abs(ours[k] - pg[k]) > 1e-9), len(pg))
EOF
)
pgr_cm_ms=$(median "${pgr_cm_t[@]}")
gp_cm_ms=$($PY -c "print(1000*$(median "${gp_cm_t[@]}"))")

# --- cached CxC table vs cold -----------------------------------------------------------------------
# C nodes of one district: gen:N numbers the nodes settlement by settlement, largest city first,
# neighbourhood by neighbourhood (graph/road.c), so ids 1..C are adjacent streets of its first
# neighbourhoods and the table's searches stop early; C random nodes of a 1M-node graph would be
# C full Dijkstras (about C x 0.25 s of CPU here).
cids=$(seq -s, 1 "$C")
cbody="{\"sources\":[$cids],\"targets\":[$cids]}"
printf '%s' "$cbody" >"$tmp/cbody.json"
purge
log "cold ${C}x${C} table"
cold=$(curl -s -o "$tmp/c0.json" -D "$tmp/c0.h" -w '%{time_total}' -X POST -H 'Content-Type: application/json' --data-binary "@$tmp/cbody.json" "$base/v1/graphs/road/table")
hit_t=() srv_t=() hits=0
for _ in $(seq 10); do
  hit_t+=("$(curl -s -o "$tmp/c1.json" -D "$tmp/c1.h" -w '%{time_total}' -X POST -H 'Content-Type: application/json' --data-binary "@$tmp/cbody.json" "$base/v1/graphs/road/table")")
  grep -qi '^x-gpath-cache: hit' "$tmp/c1.h" && hits=$((hits + 1))
done
same=no; cmp -s "$tmp/c0.json" "$tmp/c1.json" && same=yes
# the server's own duration of the last 10 table requests (lookup + JSON rendering, no transfer)
mapfile -t srv_t < <(grep 'path=/v1/graphs/road/table' "$tmp/serve.log" | tail -10 | sed -n 's/.*duration_ms=\([0-9.]*\).*/\1/p')
cold_ms=$($PY -c "print('%.0f' % (1000*$cold))")
hit_ms=$($PY -c "print(1000*$(median "${hit_t[@]}"))")
hit_min=$($PY -c "import sys; print('%.1f' % (1000*min(float(x) for x in sys.argv[1:])))" "${hit_t[@]}")
srv_ms=$(median "${srv_t[@]:-0}")
srv_min=$($PY -c "import sys; print('%.1f' % min(float(x) for x in sys.argv[1:]))" "${srv_t[@]:-0}")
load=$(cut -d' ' -f1-3 /proc/loadavg)
resp_mb=$($PY -c "import os; print('%.1f' % (os.path.getsize('$tmp/c1.json')/1e6))")
stats=$(curl -s -H 'Authorization: Bearer tok' "$base/admin/cache")

out=$(bench_out pgrouting)
bench_header "$out" "gpath (CPU backend) vs pgRouting $pgr_version on a ${N}-node road graph in PostgreSQL" "BUILD=$BUILD bash bench/cpu-pgrouting.sh"
ratio() { $PY -c "print('%.0f' % ($1 / $2))"; }
{
  echo "## Graph"
  echo "- \`gpath gen --nodes $N\`: $arcs arcs; written to PostgreSQL as $rows edge rows (cost, reverse_cost) with COPY in ${copy_s} s"
  echo "- read back by \`gpath serve --graph 'road=postgresql://…/bench?table=edges&scale=1'\` (libpq cursor): $pg_nodes nodes, $pg_arcs arcs in ${load_s} s (one-time; includes CSR build)"
  if [ "$pg_version" = "$file_version" ]; then
    echo "- content hash through PostgreSQL = of the generated file ($pg_version): the same graph"
  else
    echo "- arcs through PostgreSQL: $pg_arcs, in the generated file: $arcs ($([ "$pg_arcs" = "$arcs" ] && echo equal || echo DIFFERENT));"
    echo "  nodes $pg_nodes of $N: the generator's $((N - pg_nodes)) isolated nodes have no edge, so an edge table (gpath's"
    echo "  or pgRouting's graph) cannot hold them, and the content hashes ($pg_version vs $file_version) differ for that alone"
  fi
  echo
  echo "## Queries (median milliseconds; pgRouting times are psql \\timing, gpath times are curl time_total over loopback HTTP)"
  echo
  echo "| query | pgRouting | gpath (CPU) | ratio | answers |"
  echo "| --- | ---: | ---: | ---: | --- |"
  echo "| point-to-point, ${#pairs[@]} random pairs (gpath: $REPS reps each) | pgr_dijkstra $pgr_route_ms | route $gp_route_ms | $(ratio "$pgr_route_ms" "$gp_route_ms")x | $route_mism of ${#pairs[@]} differ |"
  echo "| ${K}x${K} matrix (pgRouting: 3 runs, gpath: $REPS cold runs, cache purged) | pgr_dijkstraCostMatrix $pgr_cm_ms | table $gp_cm_ms | $(ratio "$pgr_cm_ms" "$gp_cm_ms")x | $(echo "$table_diff" | awk '{print $1 " of " $2}') differ |"
  echo
  echo "pgRouting re-reads the edges with the SQL and builds its graph on every call; gpath keeps the graph resident"
  echo "(its one-time load above), which is where most of the ratio comes from."
  echo
  echo "## Matrix cache (${C}x${C} table, $((C * C)) cells, SQLite)"
  echo
  echo "The ${C} nodes are one district of the graph (ids 1..${C}: the first neighbourhoods of its largest city):"
  echo "the CPU backend's table stops each search once its targets are settled, so the cold run is seconds,"
  echo "not the ~${C} full Dijkstras (~$((C / 4)) s of CPU here) that ${C} random nodes would cost."
  echo
  echo "| | median ms | best ms |"
  echo "| --- | ---: | ---: |"
  echo "| cold: computed by the CPU backend (cache miss) | $cold_ms | |"
  echo "| cached: 10 hits, curl time_total ($resp_mb MB JSON answer) | $hit_ms | $hit_min |"
  echo "| cached: server duration of those requests (cache read + JSON rendering, from its log) | $srv_ms | $srv_min |"
  echo
  echo "- load average at the end of the run (2 cores, shared with other jobs): $load"
  echo
  echo "- hits: $hits of 10 answered with X-Gpath-Cache: hit; answer identical to the cold one: $same"
  echo "- GET /admin/cache afterwards: \`$stats\`"
} >>"$out"
cat "$out"
echo "wrote $out"
