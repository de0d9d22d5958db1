#!/usr/bin/env bash
# test_pg.sh - gpath against a real PostgreSQL + pgRouting: starts a throwaway cluster (pg_ctl, temp
# dir, free port), loads pgRouting's sample data, and checks that gpath's route, table and all-pairs
# answers read through libpq equal pgr_dijkstra, pgr_dijkstraCostMatrix and pgr_floydWarshall run in
# the same database (every pair, directed and undirected), edges_sql, gpath's own schema and its
# migrations, clean errors (server unreachable, missing table), and a LISTEN/NOTIFY reload through
# `gpath serve`. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
GPATH_BIN=${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}
GPATH_DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok   - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && echo "$2" | head -20 | sed 's/^/       /'; }
skp() { skip=$((skip + 1)); echo "skip - $1"; }
finish() { echo "$pass passed, $fail failed, $skip skipped"; exit $((fail > 0)); }

tmp=$(mktemp -d)
chmod 755 "$tmp" # the server runs as the postgres user
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  pgc_stop -m immediate
  rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/pg_cluster.sh
. tests/pg_cluster.sh

if [ ! -x "$GPATH_BIN" ]; then skp "gpath binary $GPATH_BIN not built"; finish; fi
if ! pgc_start "$tmp/pg"; then skp "PostgreSQL: $PGC_WHY"; finish; fi
echo "# PostgreSQL on port $PGC_PORT ($PGC_BIN)"
createdb gt || { bad "createdb"; finish; }
db="$PGC_URI/gt"
enc() { $PY -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# --- clean errors --------------------------------------------------------------------------------
dead_port=$(pgc_free_port)
out=$("$GPATH_BIN" info --graph "postgresql://gpath@127.0.0.1:$dead_port/gt?table=edges" 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -qi "connection refused\|could not connect\|connection to server"; then
  ok "PostgreSQL unreachable: exit $rc with libpq's message"
else bad "PostgreSQL unreachable: expected a clean libpq error" "rc=$rc $out"; fi
# refused SPEC TEXT WHAT: loading SPEC fails with a message containing TEXT
refused() {
  local out rc
  out=$("$GPATH_BIN" info --graph "$1" 2>&1); rc=$?
  if [ $rc -ne 0 ] && echo "$out" | grep -qF -- "$2"; then ok "$3: $(echo "$out" | head -1)"
  else bad "$3" "rc=$rc $out"; fi
}
refused "$db?table=no_such_table" no_such_table "missing table: clean error naming it"
refused "$db?table=a&edges_sql=x" "not both" "table= and edges_sql= together refused"

# --- gpath's own schema and migrations -----------------------------------------------------------
createdb own
out=$("$GPATH_BIN" info --graph "$PGC_URI/own" 2>&1)
if echo "$out" | grep -q "no usable direction\|edges"; then
  v=$(pgc_psql own -At -c "SELECT max(version) FROM gpath.schema_version")
  [ "$v" = "1" ] && ok "migrations applied to an empty database (gpath.schema_version = 1)" \
    || bad "migration version" "$v $out"
else bad "own schema: empty gpath.edges should be a clean error" "$out"; fi
pgc_psql own -c "INSERT INTO gpath.edges (id, source, target, cost, reverse_cost) VALUES
  (1, 10, 20, 2.5, -1), (2, 20, 30, 1, 1), (3, 10, 30, 5, -1)" 2>&1
out=$("$GPATH_BIN" route --graph "$PGC_URI/own" --from 10 --to 30 2>"$tmp/own.err")
if echo "$out" | $PY -c 'import json,sys; d=json.load(sys.stdin); assert abs(d["weight"]-3.5)<1e-9 and d["path"]==[10,20,30], d' 2>/dev/null; then
  ok "gpath.edges read (second start: migrations already applied)"
else bad "gpath.edges route 10->30 = 3.5" "$out"; fi
pgc_psql own -c "INSERT INTO gpath.schema_version (version, name) VALUES (999, '0999-future')"
out=$("$GPATH_BIN" info --graph "$PGC_URI/own" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "newer"; then ok "a newer gpath schema is refused: $(echo "$out" | head -1)"
else bad "newer schema refused" "rc=$rc $out"; fi

# --- projected coordinates (srid=, a geometry column in another SRID) ------------------------------
# Three nodes with known lon/lat near Monaco: 1 (7.42, 43.73), 2 (7.43, 43.73), 3 (7.43, 43.74); the
# route 1->3 is 0.01 deg of longitude then 0.01 deg of latitude: 804.3 m + 1111.9 m (haversine).
# The table stores them in EPSG:3857 metres (computed here, not by PostGIS).
merc() { $PY -c 'import math,sys; lon,lat=map(float,sys.argv[1:]); R=6378137.0
print("%.3f, %.3f" % (R*math.radians(lon), R*math.log(math.tan(math.pi/4+math.radians(lat)/2))))' "$1" "$2"; }
p1=$(merc 7.42 43.73); p2=$(merc 7.43 43.73); p3=$(merc 7.43 43.74)
want_m=$($PY -c 'import math
def h(a,b,c,d):
    R=6371008.8; p1,p2=math.radians(b),math.radians(d); dl=math.radians(c-a)
    x=math.sin((p2-p1)/2)**2+math.cos(p1)*math.cos(p2)*math.sin(dl/2)**2
    return 2*R*math.asin(math.sqrt(x))
print(round(h(7.42,43.73,7.43,43.73)+h(7.43,43.73,7.43,43.74),1))')
mk_merc() { # DB: the edge table "merc" with x1..y2 in EPSG:3857
  pgc_psql "$1" -c "CREATE TABLE merc (id bigint, source bigint, target bigint, cost float8,
    reverse_cost float8, x1 float8, y1 float8, x2 float8, y2 float8);
    INSERT INTO merc VALUES (1, 1, 2, 1, 1, $p1, $p2), (2, 2, 3, 1, 1, $p2, $p3)" >/dev/null; }
# length_m of the route 1->3 (loaded from SPEC), from the served route's geometry-based length
len_m() { "$GPATH_BIN" route --graph "$1" --from 1 --to 3 --backend cpu 2>&1 |
  $PY -c 'import json,sys; d=json.load(sys.stdin); print(d["length_m"])' 2>/dev/null; }
near() { $PY -c "import sys; sys.exit(0 if abs(float('$1')-float('$2')) <= 0.01*float('$2') else 1)" 2>/dev/null; }
createdb np && mk_merc np
refused "$PGC_URI/np?table=merc" "give the table's projection with the spec option srid=N" \
  "x1..y2 in metres without srid= refused, naming srid="
refused "$PGC_URI/np?table=merc&srid=3857" "srid=3857 needs PostGIS" \
  "srid=3857 without PostGIS refused, naming PostGIS"
refused "$PGC_URI/np?table=merc&srid=abc" "srid must be an EPSG code" "srid=abc refused"
if createdb sr && pgc_psql sr -c "CREATE EXTENSION postgis" >"$tmp/postgis.log" 2>&1; then
  mk_merc sr
  got=$(len_m "$PGC_URI/sr?table=merc&srid=3857")
  if [ -n "$got" ] && near "$got" "$want_m"; then
    ok "srid=3857 with PostGIS: x1..y2 transformed, route 1->3 length_m $got (want $want_m within 1%)"
  else bad "srid=3857 transformed" "got=$got want=$want_m $("$GPATH_BIN" route --graph "$PGC_URI/sr?table=merc&srid=3857" --from 1 --to 3 2>&1 | head -3)"; fi
  # a geometry column in UTM zone 32N (EPSG:32632), no x1..y2: its end points, transformed
  pgc_psql sr -c "CREATE TABLE utm (id bigint, source bigint, target bigint, cost float8,
    geom geometry(LineString, 32632));
    INSERT INTO utm SELECT id, s, t, 1, ST_Transform(ST_SetSRID(ST_MakeLine(ST_MakePoint(a, b),
      ST_MakePoint(c, d)), 4326), 32632) FROM (VALUES (1, 1, 2, 7.42, 43.73, 7.43, 43.73),
      (2, 2, 3, 7.43, 43.73, 7.43, 43.74)) v(id, s, t, a, b, c, d)" >/dev/null
  got=$(len_m "$PGC_URI/sr?table=utm&directed=false")
  if [ -n "$got" ] && near "$got" "$want_m"; then
    ok "geometry in EPSG:32632 read through ST_Transform: route 1->3 length_m $got (want $want_m within 1%)"
  else bad "UTM geometry transformed" "got=$got want=$want_m $("$GPATH_BIN" route --graph "$PGC_URI/sr?table=utm&directed=false" --from 1 --to 3 2>&1 | head -3)"; fi
else skp "PostGIS extension absent (install postgresql-15-postgis-3): $(tail -1 "$tmp/postgis.log")"; fi

# --- pgRouting sample data -------------------------------------------------------------------------
csv=$GPATH_DATA/pgrouting-sample/sampledata/edges.csv
if [ ! -f "$csv" ]; then
  skp "pgRouting sample data not found at $csv (set GPATH_DATA)"; finish
fi
if ! pgc_psql gt -c "CREATE EXTENSION pgrouting CASCADE" >"$tmp/ext.log" 2>&1; then
  skp "CREATE EXTENSION pgrouting failed (install postgresql-15-pgrouting; it requires postgis): $(tail -1 "$tmp/ext.log")"
  finish
fi
pgc_psql gt -c "CREATE TABLE edges (id bigint PRIMARY KEY, source bigint, target bigint,
  cost float8, reverse_cost float8, capacity bigint, reverse_capacity bigint,
  x1 float8, y1 float8, x2 float8, y2 float8)" -c "\\copy edges FROM '$csv' CSV HEADER" \
  || { bad "loading edges.csv"; finish; }
echo "# pgRouting $(pgc_psql gt -At -c 'SELECT pgr_version()'), $(pgc_psql gt -At -c 'SELECT count(*) FROM edges') edges"

# compare.py KIND DIRECTED: gpath's JSON (file) against pgRouting's rows (file)
cat >"$tmp/compare.py" <<'EOF'
import json, os, sys
kind, gfile, pfile = sys.argv[1], sys.argv[2], sys.argv[3]
tol = float(os.environ.get("TOL", "1e-9"))  # relative (fixed-point costs are kept to 1/1000)
g = json.load(open(gfile))
pg = {}
for line in open(pfile):
    s, t, c = line.strip().split("|")
    pg[(int(s), int(t))] = float(c)
ours = {}
if kind == "table":
    for i, s in enumerate(g["sources"]):
        for j, t in enumerate(g["targets"]):
            if g["weights"][i][j] is not None and s != t:
                ours[(s, t)] = float(g["weights"][i][j])
else:
    for i, s in enumerate(g["nodes"]):
        for j, t in enumerate(g["nodes"]):
            if g["weights"][i][j] is not None and s != t:
                ours[(s, t)] = float(g["weights"][i][j])
bad = [(k, ours.get(k), pg.get(k)) for k in set(ours) | set(pg)
       if k not in ours or k not in pg or abs(ours[k] - pg[k]) > tol * max(1.0, abs(pg[k]))]
print(len(pg), "pairs;", len(bad), "differ", bad[:10])
sys.exit(1 if bad or not pg else 0)
EOF

ids=$(pgc_psql gt -At -c "SELECT string_agg(v::text, ',' ORDER BY v) FROM (SELECT source v FROM edges UNION SELECT target FROM edges) x")
edges_q="SELECT id, source, target, cost, reverse_cost FROM edges"
pgc_psql gt -At -c "$edges_q" >"$tmp/edges.txt"
# routes of every ordered pair go through one `gpath serve` (one load per graph) when it exists,
# else through the CLI (one load per route)
have_serve=0
"$GPATH_BIN" serve --help 2>&1 | grep -q -- "--port-file" && have_serve=1
if [ $have_serve = 1 ]; then
  "$GPATH_BIN" serve --graph "rd=$db?table=edges" --graph "ru=$db?table=edges&directed=false" \
    --listen 127.0.0.1 --port 0 --port-file "$tmp/rport" --cache-path "" --backend cpu \
    --engine-threads 2 --threads 2 >"$tmp/rserve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 100); do
    [ -s "$tmp/rport" ] && curl -sf "http://127.0.0.1:$(cat "$tmp/rport")/ready" >/dev/null 2>&1 && break
    sleep 0.1
  done
fi
# route_check.py DIRECTED DIJ_FILE SPEC GRAPH IDS: every ordered pair's distance against
# pgr_dijkstra, and every returned path checked to be a path of that cost in the edges table
cat >"$tmp/route_check.py" <<'EOF'
import json, os, subprocess, sys, urllib.request
directed, dij, spec, graph, ids = sys.argv[1] == "true", sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split(",")
port = os.environ.get("RPORT")
arc = {}
for l in open(os.environ["EDGES"]):
    i, s, t, c, rc = l.strip().split("|")
    for (u, v, w) in ((s, t, float(c)), (t, s, float(rc))):
        if w < 0: continue
        for a in ([(u, v)] if directed else [(u, v), (v, u)]):
            arc[a] = min(arc.get(a, w), w)
want = {tuple(l.split("|")[:2]): float(l.split("|")[2]) for l in open(dij) if l.strip()}
bad, n = [], 0
for s in ids:
    for t in ids:
        if s == t: continue
        if port:
            try:
                d = json.load(urllib.request.urlopen("http://127.0.0.1:%s/v1/graphs/%s/route?from=%s&to=%s" % (port, graph, s, t)))
            except urllib.error.HTTPError as e:
                d = json.load(e)
                d = {"weight": None, "path": []} if d.get("code") == "NoRoute" else d
        else:
            d = json.loads(subprocess.run([os.environ["GPATH_BIN"], "route", "--graph", spec, "--from", s, "--to", t], capture_output=True, text=True).stdout or "{}")
        n += 1
        dist = d.get("weight")
        if (dist is None) != ((s, t) not in want) or (dist is not None and abs(dist - want[(s, t)]) > 1e-9):
            bad.append((s, t, dist, want.get((s, t)))); continue
        if dist is not None:
            p = [str(x) for x in d["path"]]
            cost = sum(arc.get((p[k], p[k + 1]), float("inf")) for k in range(len(p) - 1))
            if p[0] != s or p[-1] != t or abs(cost - dist) > 1e-9: bad.append((s, t, "path", p))
print(n, "routes (%d reachable);" % len(want), len(bad), "differ", bad[:5])
sys.exit(1 if bad or not want else 0)
EOF
for dir in true false; do
  spec="$db?table=edges"; flag=""; graph=rd
  [ $dir = false ] && { spec="$db?table=edges&directed=false"; flag=" (undirected)"; graph=ru; }
  # info: nodes/arcs like pgRouting's graph
  out=$("$GPATH_BIN" info --graph "$spec" 2>&1)
  arcs=$(echo "$out" | $PY -c 'import json,sys; d=json.load(sys.stdin); print(d["nodes"], d["edges"])' 2>/dev/null)
  want_arcs=30; [ $dir = false ] && want_arcs=60
  [ "$arcs" = "17 $want_arcs" ] && ok "loaded via libpq$flag: 17 nodes, $want_arcs arcs" || bad "info$flag" "$out"

  # route: every ordered pair against pgr_dijkstra's final agg_cost, paths checked
  pgc_psql gt -At -c "SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra('$edges_q',
      (SELECT array_agg(v) FROM unnest('{$ids}'::bigint[]) v), (SELECT array_agg(v) FROM unnest('{$ids}'::bigint[]) v), $dir)
      WHERE edge = -1 ORDER BY 1, 2" >"$tmp/dij.txt"
  via=CLI; rport=""
  [ $have_serve = 1 ] && { via="gpath serve"; rport=$(cat "$tmp/rport"); }
  if res=$(RPORT=$rport EDGES="$tmp/edges.txt" GPATH_BIN="$GPATH_BIN" $PY "$tmp/route_check.py" $dir "$tmp/dij.txt" "$spec" $graph "$ids" 2>&1); then
    ok "route$flag ($via) = pgr_dijkstra on every pair, paths valid: $res"
  else bad "route$flag ($via) vs pgr_dijkstra" "$res"; fi

  # table: all x all against pgr_dijkstraCostMatrix
  pgc_psql gt -At -c "SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCostMatrix('$edges_q', '{$ids}'::bigint[], $dir)" >"$tmp/cm.txt"
  "$GPATH_BIN" table --graph "$spec" --sources "$ids" --targets "$ids" >"$tmp/t.json" 2>"$tmp/t.err"
  if res=$($PY "$tmp/compare.py" table "$tmp/t.json" "$tmp/cm.txt" 2>&1); then ok "table$flag = pgr_dijkstraCostMatrix: $res"
  else bad "table$flag vs pgr_dijkstraCostMatrix" "$res $(cat "$tmp/t.err")"; fi

  # apsp against pgr_floydWarshall
  pgc_psql gt -At -c "SELECT start_vid, end_vid, agg_cost FROM pgr_floydWarshall('$edges_q', $dir)" >"$tmp/fw.txt"
  "$GPATH_BIN" apsp --graph "$spec" >"$tmp/a.json" 2>"$tmp/a.err"
  if res=$($PY "$tmp/compare.py" apsp "$tmp/a.json" "$tmp/fw.txt" 2>&1); then ok "apsp$flag = pgr_floydWarshall: $res"
  else bad "apsp$flag vs pgr_floydWarshall" "$res $(cat "$tmp/a.err")"; fi
done

if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; serve_pid=""; fi

# --- planar units (srid=0): the sample's 0..4 grid is x/y, not lon/lat ----------------------------
# The route 6->10 (directed) is 5 unit edges of the grid: length_m 5 in the table's units (read as
# degrees it was 555,823 m); the planar graph has no lon/lat, so no geometry.
plan() { "$GPATH_BIN" route --graph "$1" --from 6 --to 10 --backend cpu 2>&1; }
out=$(plan "$db?table=edges&srid=0")
if echo "$out" | $PY -c 'import json,sys; d=json.load(sys.stdin); assert d["weight"] == 5 and d["length_m"] == 5 and "geometry" not in d, d' 2>/dev/null; then
  ok "srid=0 (planar): sample route 6->10 weight 5, length_m 5 (Euclidean, table units), no lon/lat geometry"
else bad "srid=0 planar sample route" "$out"; fi
q6="SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges"
out=$(plan "$db?edges_sql=$(enc "$q6")&srid=0")
if echo "$out" | $PY -c 'import json,sys; d=json.load(sys.stdin); assert d["length_m"] == 5, d' 2>/dev/null; then
  ok "srid=0 with edges_sql: length_m 5"
else bad "srid=0 edges_sql" "$out"; fi
# pgRouting's own sample table keeps its geometry with SRID 0: refused without srid=, naming it
pgc_psql gt -c "CREATE TABLE edges_geom AS SELECT id, source, target, cost, reverse_cost,
  ST_MakeLine(ST_MakePoint(x1, y1), ST_MakePoint(x2, y2))::geometry(LineString) AS geom FROM edges" >/dev/null
refused "$db?table=edges_geom" "has no SRID (0), so its x/y may not be lon/lat: give the spec option srid=0" \
  "a geometry column with SRID 0 and no srid= refused, naming srid=0"
out=$(plan "$db?table=edges_geom&srid=0")
if echo "$out" | $PY -c 'import json,sys; d=json.load(sys.stdin); assert d["weight"] == 5 and d["length_m"] == 5, d' 2>/dev/null; then
  ok "srid=0 on a geometry column with SRID 0: end points as x/y, route 6->10 length_m 5"
else bad "srid=0 geometry" "$out"; fi
refused "$db?table=edges&srid=-1" "or 0 for planar x/y" "srid=-1 refused, naming srid=0"

# edges_sql (URL-encoded), no reverse_cost column, fractional costs: pgRouting's johnson query shape
pgc_psql gt -c "CREATE TABLE edges_frac AS SELECT id, source, target, cost * 1.25 + id / 8.0 AS cost,
  reverse_cost * 0.75 AS reverse_cost, x1, y1, x2, y2 FROM edges"
for q in "SELECT id, source, target, cost FROM edges_frac WHERE id < 12" \
         "SELECT id, source, target, cost, reverse_cost FROM edges_frac;"; do
  pgc_psql gt -At -c "SELECT start_vid, end_vid, agg_cost FROM pgr_floydWarshall('$q', true)" >"$tmp/fw.txt"
  "$GPATH_BIN" apsp --graph "$db?edges_sql=$(enc "$q")&scale=1000000" >"$tmp/a.json" 2>"$tmp/a.err"
  if res=$($PY "$tmp/compare.py" apsp "$tmp/a.json" "$tmp/fw.txt" 2>&1); then ok "edges_sql '$q' = pgr_floydWarshall: $res"
  else bad "edges_sql '$q'" "$res $(cat "$tmp/a.err")"; fi
done
out=$("$GPATH_BIN" info --graph "$db?edges_sql=$(enc "SELECT id, source, cost FROM edges")" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "target"; then ok "edges_sql without target: clean error"
else bad "edges_sql missing column" "rc=$rc $out"; fi
out=$("$GPATH_BIN" info --graph "$db?edges_sql=$(enc "SELEC nonsense")" 2>&1); rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "syntax error"; then ok "bad edges_sql: PostgreSQL's message"
else bad "bad edges_sql" "rc=$rc $out"; fi

# --- osm2pgrouting's ways table as it is ----------------------------------------------------------
# gid (no id), source, target, cost (degrees), cost_s / reverse_cost_s (seconds, fractional: no
# single default scale keeps 1/1000 of them), length_m, name, x1..y2: read with gid, cost_s,
# reverse_cost_s, and the scale picked over the whole table.
pgc_psql gt -c "CREATE TABLE ways (gid bigint PRIMARY KEY, osm_id bigint, length float8,
  length_m float8, name text, source bigint, target bigint, cost float8, reverse_cost float8,
  cost_s float8, reverse_cost_s float8, one_way int, x1 float8, y1 float8, x2 float8, y2 float8)" \
  -c "INSERT INTO ways SELECT id, 1000 + id, cost / 1e5, cost * 11.1, 'street ' || id, source,
  target, cost / 1e5, reverse_cost / 1e5, cost * 0.0137 + id * 0.00031,
  CASE WHEN reverse_cost < 0 THEN -1 ELSE reverse_cost * 0.0219 + id * 0.00017 END, 0,
  x1, y1, x2, y2 FROM edges"
ways_q="SELECT gid AS id, source, target, cost_s AS cost, reverse_cost_s AS reverse_cost FROM ways"
pgc_psql gt -At -c "SELECT start_vid, end_vid, agg_cost FROM pgr_floydWarshall('$ways_q', true)" >"$tmp/fw.txt"
"$GPATH_BIN" apsp --graph "$db?table=ways" >"$tmp/a.json" 2>"$tmp/a.err"
sc=$("$GPATH_BIN" info --graph "$db?table=ways" 2>&1 | $PY -c 'import json,sys; print(json.load(sys.stdin)["scale"])' 2>&1)
if res=$(TOL=1e-3 $PY "$tmp/compare.py" apsp "$tmp/a.json" "$tmp/fw.txt" 2>&1) &&
   $PY -c "import sys; sys.exit(0 if float('$sc') > 1000 else 1)" 2>/dev/null; then
  ok "osm2pgrouting ways (gid, cost_s, reverse_cost_s; scale $sc picked over every cost) = pgr_floydWarshall: $res"
else bad "osm2pgrouting ways" "scale=$sc $res $(cat "$tmp/a.err")"; fi

# --- LISTEN/NOTIFY reload through gpath serve ------------------------------------------------------
if "$GPATH_BIN" serve --help 2>&1 | grep -q -- "--port-file"; then
  # "pw": a spec with a password (trust auth ignores it): it must never be shown or logged
  "$GPATH_BIN" serve --graph "roads=$db?table=edges" \
    --graph "pw=postgresql://gpath:pgS3cretPw@127.0.0.1:$PGC_PORT/gt?table=edges&password=pgS3cretQ" \
    --listen 127.0.0.1 --port 0 \
    --port-file "$tmp/port" --cache-path "$tmp/cache.db" --backend cpu --engine-threads 2 \
    --threads 2 --admin-token tok >"$tmp/serve.log" 2>&1 &
  serve_pid=$!
  up=0
  for _ in $(seq 100); do
    [ -s "$tmp/port" ] && curl -sf "http://127.0.0.1:$(cat "$tmp/port")/ready" >/dev/null 2>&1 && { up=1; break; }
    sleep 0.1
  done
  port=$(cat "$tmp/port" 2>/dev/null)
  route() { curl -sf "http://127.0.0.1:$port/v1/graphs/roads/route?from=6&to=10"; }
  dist() { route | $PY -c 'import json,sys; print(json.load(sys.stdin)["weight"])' 2>/dev/null; }
  if [ $up -eq 1 ]; then
    d0=$(dist)
    [ -n "$d0" ] || bad "served route 6->10" "$(route; tail -5 "$tmp/serve.log")"
    # redaction: the password is in neither the graph list, the graph, metrics nor the log
    shown=$(curl -s "http://127.0.0.1:$port/v1/graphs"; curl -s "http://127.0.0.1:$port/v1/graphs/pw"
      curl -s "http://127.0.0.1:$port/metrics")
    if ! echo "$shown" | grep -q "pgS3cret" && ! grep -q "pgS3cret" "$tmp/serve.log" &&
       echo "$shown" | grep -q 'gpath:\*\*\*@127.0.0.1' && echo "$shown" | grep -q 'password=\*\*\*'; then
      ok "a PostgreSQL password is redacted in GET /v1/graphs, /v1/graphs/pw, /metrics and the log"
    else bad "password redaction" "$(echo "$shown" | grep -o '"source":"[^"]*"'; grep -o 'spec=[^ ]*' "$tmp/serve.log" | head -3)"; fi
    # admin loads may reach only the configured database hosts (load_pg_hosts)
    adm_put() { curl -s -o "$tmp/put.json" -w '%{http_code}' -X PUT -H 'Authorization: Bearer tok' \
      -H 'Content-Type: application/json' -d "{\"spec\": \"$1\"}" "http://127.0.0.1:$port/admin/graphs/$2"; }
    c1=$(adm_put "postgresql://gpath@127.0.0.2:$PGC_PORT/gt?table=edges" probe)
    b1=$(cat "$tmp/put.json")
    c2=$(adm_put "postgresql://gpath@127.0.0.1:$PGC_PORT/gt?table=edges" copy)
    if [ "$c1" = 403 ] && echo "$b1" | grep -q "load_pg_hosts" && [ "$c2" = 201 ]; then
      ok "admin PUT: a host outside load_pg_hosts is 403 Forbidden, the configured host loads (201)"
    else bad "load_pg_hosts" "$c1 $b1 / $c2 $(cat "$tmp/put.json")"; fi
    # wait until the listener is connected (it logs it), then change a cost on the 6->10 path
    for _ in $(seq 50); do grep -q "LISTEN gpath_reload on" "$tmp/serve.log" && break; sleep 0.1; done
    pgc_psql gt -c "UPDATE edges SET cost = 0.5, reverse_cost = 0.5 WHERE id = 4" -c "NOTIFY gpath_reload, 'roads'"
    t0=$(date +%s.%N); d1=$d0
    while :; do
      d1=$(dist); [ "$d1" != "$d0" ] && break
      [ "$($PY -c "import time; print(int(time.time() - $t0 > 1.0))")" = 1 ] && break
      sleep 0.05
    done
    el=$($PY -c "import time; print(round(time.time() - $t0, 3))")
    want=$(pgc_psql gt -At -c "SELECT agg_cost FROM pgr_dijkstra('$edges_q', 6, 10) WHERE edge = -1")
    if $PY -c "import sys; sys.exit(0 if abs(float('$d1') - float('$want')) < 1e-9 and '$d1' != '$d0' else 1)" 2>/dev/null; then
      ok "NOTIFY gpath_reload: served 6->10 went $d0 -> $d1 (= pgr_dijkstra) within ${el}s"
    else bad "NOTIFY reload within 1 s" "before=$d0 after=$d1 pgr=$want $(tail -5 "$tmp/serve.log")"; fi
    # the matrix cache behind POST table: miss, hit (same body), admin stats, purge, miss again
    tab() { curl -s -D "$tmp/h.txt" -o "$tmp/tab$1.json" -X POST -H 'Content-Type: application/json' \
      -d '{"sources":[1,6,12],"targets":[10,17,3]}' "http://127.0.0.1:$port/v1/graphs/roads/table"
      tr -d '\r' <"$tmp/h.txt" | sed -n 's/^[Xx]-[Gg]path-[Cc]ache: //p'; }
    adm() { curl -s -X "$1" -H 'Authorization: Bearer tok' "http://127.0.0.1:$port/admin/cache$2"; }
    h1=$(tab 1); h2=$(tab 2)
    if [ "$h1" = miss ] && [ "$h2" = hit ] && cmp -s "$tmp/tab1.json" "$tmp/tab2.json"; then
      ok "POST table: X-Gpath-Cache miss then hit, same answer"
    else bad "table cache miss/hit" "$h1 $h2 $(cat "$tmp/tab1.json" "$tmp/tab2.json")"; fi
    st=$(adm GET "")
    if echo "$st" | $PY -c 'import json,sys; d=json.load(sys.stdin); assert d["enabled"] and d["entries"]>=1 and d["hits"]>=1 and 0<d["hit_rate"]<=1, d' 2>/dev/null; then
      ok "GET /admin/cache: $st"
    else bad "GET /admin/cache" "$st"; fi
    del=$(adm DELETE "?graph=roads")
    h3=$(tab 3)
    if echo "$del" | grep -q '"deleted":[1-9]' && [ "$h3" = miss ]; then ok "DELETE /admin/cache?graph=roads: $del, then a miss"
    else bad "DELETE /admin/cache" "$del $h3"; fi
    # server gone and back: the listener reconnects and the service keeps answering
    pgc_stop -m immediate
    # a second service started while PostgreSQL is down: not ready, says why, loads once it is back
    "$GPATH_BIN" serve --graph "roads=$db?table=edges" --listen 127.0.0.1 --port 0 \
      --port-file "$tmp/port2" --cache-path "" --backend cpu --engine-threads 2 --threads 2 \
      >"$tmp/serve2.log" 2>&1 &
    serve2_pid=$!
    for _ in $(seq 50); do [ -s "$tmp/port2" ] && break; sleep 0.1; done
    port2=$(cat "$tmp/port2" 2>/dev/null)
    sleep 0.5
    r2=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$port2/ready")
    if echo "$r2" | grep -q " 503$" && echo "$r2" | grep -qi "roads"; then ok "PostgreSQL down at start: /ready 503 naming the graph"
    else bad "/ready with PostgreSQL down" "$r2 $(tail -5 "$tmp/serve2.log")"; fi
    d_down=$(dist)
    [ -n "$d_down" ] && [ "$d_down" = "$d1" ] && ok "PostgreSQL stopped: the loaded graph keeps serving ($d_down)" \
      || bad "serving with PostgreSQL down" "$d_down $(tail -5 "$tmp/serve.log")"
    # a reload while the database is down is an outage, not bad content: 503 + Retry-After
    rl=$(curl -s -D "$tmp/rh.txt" -w ' %{http_code}' -X POST -H 'Authorization: Bearer tok' \
      "http://127.0.0.1:$port/admin/graphs/roads/reload")
    if echo "$rl" | grep -q ' 503$' && echo "$rl" | grep -q '"SourceUnavailable"' &&
       grep -qi '^retry-after:' "$tmp/rh.txt" && [ "$(dist)" = "$d1" ]; then
      ok "reload with PostgreSQL down: 503 SourceUnavailable with Retry-After, the old graph keeps serving"
    else bad "reload with PostgreSQL down" "$rl $(cat "$tmp/rh.txt")"; fi
    pgc_restart
    pgc_psql gt -c "UPDATE edges SET cost = 1, reverse_cost = 1 WHERE id = 4"
    sleep 0.3
    pgc_psql gt -c "NOTIFY gpath_reload"
    t0=$(date +%s); d2=$d1
    while [ $(($(date +%s) - t0)) -lt 10 ]; do d2=$(dist); [ "$d2" = "$d0" ] && break; sleep 0.2; done
    [ -n "$d2" ] && [ "$d2" = "$d0" ] && ok "after a PostgreSQL restart the listener reconnected and reloaded ($d1 -> $d2)" \
      || bad "reload after PostgreSQL restart" "$d2 vs $d0 $(tail -5 "$tmp/serve.log")"
    r2=""
    t0=$(date +%s)
    while [ $(($(date +%s) - t0)) -lt 10 ]; do
      r2=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$port2/ready"); echo "$r2" | grep -q " 200$" && break; sleep 0.2
    done
    if echo "$r2" | grep -q " 200$"; then ok "PostgreSQL back: the failed start-up load was retried, /ready 200"
    else bad "retry of the failed load" "$r2 $(tail -5 "$tmp/serve2.log")"; fi
    kill "$serve2_pid" 2>/dev/null; wait "$serve2_pid" 2>/dev/null
  else bad "gpath serve did not come up" "$(tail -20 "$tmp/serve.log")"; fi
  kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; serve_pid=""
else
  skp "gpath serve (HTTP) not available in this build: LISTEN/NOTIFY reload not tested"
fi
finish
