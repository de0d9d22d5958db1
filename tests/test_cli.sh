#!/usr/bin/env bash
# test_cli.sh - the one-shot CLI (server/cli.c): gpath route/sssp/table/apsp/info/gen on a
# generated graph and on the pgRouting sample ($GPATH_DATA/pgrouting-sample, skipped when absent),
# checking the JSON documents (parsed with Debian's python3) and the error exits. Prints
# "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/build/gpath}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }

# check NAME PYTHON-EXPR CMD...: runs CMD, parses stdout as JSON into d, evaluates EXPR (true = pass)
check() {
  local name=$1 expr=$2; shift 2
  if ! "$@" >"$tmp/out" 2>"$tmp/err"; then bad "$name" "exit $? : $(head -c 300 "$tmp/err")"; return; fi
  if $PY -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($expr) else 1)" "$tmp/out" 2>"$tmp/pyerr"; then
    ok "$name"
  else
    bad "$name" "$(head -c 300 "$tmp/out") $(head -c 300 "$tmp/pyerr")"
  fi
}

# fails NAME PATTERN CMD...: CMD must exit non-zero with PATTERN (grep -E) on stderr, nothing on stdout
fails() {
  local name=$1 pat=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 0 ]; then bad "$name" "exit 0, expected an error"; return; fi
  if [ -s "$tmp/out" ]; then bad "$name" "stdout not empty: $(head -c 200 "$tmp/out")"; return; fi
  if grep -qE -- "$pat" "$tmp/err"; then ok "$name"; else bad "$name" "stderr: $(head -c 300 "$tmp/err")"; fi
}

if [ ! -x "$BIN" ]; then
  echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

# --- version and help
if "$BIN" --version | grep -qE '^gpath [0-9]+\.[0-9]+'; then ok "--version"; else bad "--version"; fi
if "$BIN" --help | grep -q 'route'; then ok "--help lists commands"; else bad "--help lists commands"; fi
for c in route sssp table apsp info gen; do
  if "$BIN" "$c" --help | grep -q "usage: gpath $c"; then ok "$c --help"; else bad "$c --help"; fi
done

# --- gen writes DIMACS .gr + .co that load back as the same graph
check "gen 2000" 'd["nodes"] == 2000 and d["edges"] > 4000' "$BIN" gen --nodes 2000 --seed 3 --out "$tmp/road.gr"
if [ -s "$tmp/road.gr" ] && [ -s "$tmp/road.co" ] && grep -q '^p sp 2000 ' "$tmp/road.gr"; then
  ok "gen files"; else bad "gen files"; fi
check "info on the written file" 'd["nodes"] == 2000 and d["has_coordinates"] is True and d["format"] == "dimacs" and d["loaded_at"].endswith("Z")' \
  "$BIN" info --graph "$tmp/road.gr"
"$BIN" info --graph gen:2000:3 >"$tmp/a.json" && "$BIN" info --graph "$tmp/road.gr" >"$tmp/b.json"
if $PY -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(0 if a["edges"]==b["edges"] else 1)' "$tmp/a.json" "$tmp/b.json"; then
  ok "gen file == gen:2000:3 (arcs)"; else bad "gen file == gen:2000:3 (arcs)"; fi

# --- route: the three algorithms agree, the path and geometry fit
for a in dijkstra bidir astar; do
  "$BIN" route --graph "$tmp/road.gr" --from 1 --to 1999 --algo $a --backend cpu >"$tmp/route-$a.json" 2>"$tmp/err" || bad "route $a" "$(cat "$tmp/err")"
done
if $PY - "$tmp" <<'EOF'
import json, sys
r = [json.load(open(f"{sys.argv[1]}/route-{a}.json")) for a in ("dijkstra", "bidir", "astar")]
assert all(x["distance"] == r[0]["distance"] for x in r), [x["distance"] for x in r]
assert isinstance(r[0]["distance"], int) and r[0]["distance"] > 0
for x in r:
    assert x["from"] == 1 and x["to"] == 1999
    assert x["path"][0] == 1 and x["path"][-1] == 1999
    g = x["geometry"]
    assert g["type"] == "LineString" and len(g["coordinates"]) == len(x["path"])
    assert all(len(c) == 2 and -180 <= c[0] <= 180 for c in g["coordinates"])
EOF
then ok "route dijkstra == bidir == astar, path and geometry"; else bad "route dijkstra == bidir == astar, path and geometry"; fi

# --- table: rows per source, equal to routes
check "table 3x2" 'len(d["distances"]) == 3 and all(len(r) == 2 for r in d["distances"]) and d["sources"] == [1, 5, 9] and d["targets"] == [1999, 100]' \
  "$BIN" table --graph "$tmp/road.gr" --sources 1,5,9 --targets 1999,100 --threads 2
rd=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["distance"])' "$tmp/route-dijkstra.json")
check "table[0][0] == route distance" "d['distances'][0][0] == $rd" "$BIN" table --graph "$tmp/road.gr" --sources 1,5 --targets 1999
check "table targets default to sources" 'len(d["distances"]) == 2 and d["distances"][0][0] == 0 and d["distances"][1][1] == 0' \
  "$BIN" table --graph "$tmp/road.gr" --sources 7,8

# --- sssp with a cutoff
check "sssp full tree" 'd["source"] == 1 and d["reached"] == len(d["nodes"]) == len(d["distances"]) == len(d["predecessors"]) and d["reached"] > 1900 and d["predecessors"][d["nodes"].index(1)] is None' \
  "$BIN" sssp --graph "$tmp/road.gr" --source 1
check "sssp --max-distance" 'd["reached"] > 1 and d["reached"] < 2000 and max(d["distances"]) <= 300' \
  "$BIN" sssp --graph "$tmp/road.gr" --source 1 --max-distance 300

# --- apsp with next hops
check "apsp gen:150 --next-hops" 'len(d["nodes"]) == 150 and all(d["distances"][i][i] == 0 and d["next_hops"][i][i] is None for i in range(150)) and len(d["next_hops"]) == 150' \
  "$BIN" apsp --graph gen:150:2 --next-hops
check "apsp without next hops" '"next_hops" not in d and len(d["distances"]) == 150' "$BIN" apsp --graph gen:150:2

# --- the pgRouting sample
EDGES="$DATA/pgrouting-sample/sampledata/edges.csv"
if [ -f "$EDGES" ]; then
  check "sample route 6->10 directed = 5" 'd["distance"] == 5 and d["path"][0] == 6 and d["path"][-1] == 10 and len(d["path"]) == 6' "$BIN" route --graph "csv:$EDGES" --from 6 --to 10 --algo dijkstra
  check "sample route 6->10 undirected = 1" 'd["distance"] == 1 and d["path"] == [6, 10]' "$BIN" route --graph "csv:$EDGES" --from 6 --to 10 --undirected
  check "sample route 1->2 unreachable" 'd["distance"] is None and d["path"] == []' "$BIN" route --graph "csv:$EDGES" --from 1 --to 2
  check "sample table" 'd["distances"][0] == [5, 4] and d["distances"][1][1] == 5' "$BIN" table --graph "csv:$EDGES" --sources 6,1 --targets 10,17
  check "sample apsp has nulls" 'd["distances"][d["nodes"].index(6)][d["nodes"].index(10)] == 5 and d["distances"][d["nodes"].index(1)][d["nodes"].index(2)] is None' \
    "$BIN" apsp --graph "csv:$EDGES"
  check "sample fractional scale" 'd["distance"] == 5' "$BIN" route --graph "csv:$EDGES" --from 6 --to 10 --scale 1000
  check "sample info" 'd["nodes"] == 17 and d["edges"] == 30' "$BIN" info --graph "csv:$EDGES"
else
  skipped "pgRouting sample: $EDGES absent"
fi

# --- errors: named, on stderr, non-zero exit
fails "unknown node id" 'unknown node id 999999' "$BIN" route --graph "$tmp/road.gr" --from 1 --to 999999
fails "missing --to" 'missing parameter --to' "$BIN" route --graph "$tmp/road.gr" --from 1
fails "missing --graph" 'missing parameter --graph' "$BIN" table --sources 1
fails "missing --source" 'missing parameter --source' "$BIN" sssp --graph gen:200
fails "bad id list" "unknown node id 77777|not an integer" "$BIN" table --graph gen:200 --sources 1,77777
fails "unknown option" "unknown option '--frm'" "$BIN" route --graph gen:200 --frm 1 --to 2
fails "unknown algorithm" "unknown algorithm 'fast'" "$BIN" route --graph gen:200 --from 1 --to 2 --algo fast
fails "unknown backend" "unknown backend 'tpu'" "$BIN" route --graph gen:200 --from 1 --to 2 --backend tpu
fails "unknown command" "unknown command 'rout'" "$BIN" rout
fails "missing graph file" "$tmp/nope.gr" "$BIN" info --graph "$tmp/nope.gr"
printf 'c broken\np sp 3 2\na 1 2 5\na 2 x 7\n' >"$tmp/broken.gr"
fails "loader error names file:line" "broken.gr:4" "$BIN" route --graph "$tmp/broken.gr" --from 1 --to 2
fails "negative --max-distance" "max-distance" "$BIN" sssp --graph gen:200 --source 1 --max-distance -5
fails "apsp over --max-nodes" "over the limit of 100" "$BIN" apsp --graph gen:150:2 --max-nodes 100
fails "gen needs --out" "missing parameter --out" "$BIN" gen --nodes 500
if "$BIN" route --graph gen:200 --from 1 --to 2 --backend cuda >/dev/null 2>"$tmp/err"; then
  ok "--backend cuda (a GPU is usable here)"
elif grep -qi 'cuda' "$tmp/err"; then ok "--backend cuda without a GPU is a named error"
else bad "--backend cuda" "$(cat "$tmp/err")"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
