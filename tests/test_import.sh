#!/usr/bin/env bash
# test_import.sh - `gpath import` (cli/import.c): an OSM file to a .gpath snapshot
# with progress lines, then route / info on the snapshot (gpath: spec and *.gpath), the answers
# equal to those on the OSM file itself; --cch-order picks the stored CCH order; a damaged
# snapshot, a bad profile and a bad order exit 2 with the
# reason; Monaco and Liechtenstein ($GPATH_DATA/osm, skipped when absent) import with every
# profile. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/build/gpath}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/check_lib.sh
. tests/check_lib.sh

if [ ! -x "$BIN" ]; then
  echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

T=tests/data/osm/turns.osm
check "import turns.osm (car): restrictions kept for the turn model, no node copies" \
  "d['nodes'] == 5 and d['edges'] == 16 and d['profile'] == 'car'" \
  "$BIN" import "$T" --profile car -o "$tmp/turns.gpath"
if grep -q "turn restrictions: 2 relations for car, 2 restricted entries kept for the turn model" "$tmp/err" &&
   grep -q "1 conditional ignored" "$tmp/err" && grep -q "^\[import" "$tmp/err"; then
  ok "import progress lines (phases, counts)"
else
  bad "import progress lines" "$(head -c 600 "$tmp/err")"
fi
check "import --turn-costs off: node copies for the node-based model" \
  "d['nodes'] == 7 and d['edges'] == 20" \
  "$BIN" import "$T" --profile car --turn-costs off -o "$tmp/turns_off.gpath"
if grep -q "turn restrictions: 2 relations for car, 2 restricted entries, 2 node copies" "$tmp/err"; then
  ok "import --turn-costs off progress line (node copies)"
else
  bad "import --turn-costs off progress line" "$(head -c 600 "$tmp/err")"
fi
fails "import --turn-costs: a bad value is refused" "--turn-costs: 'maybe' is not on or off" \
  "$BIN" import "$T" --turn-costs maybe -o "$tmp/x.gpath"
check "route on the snapshot: no_left_turn detour (456 ds)" "d['weight'] == 456" \
  "$BIN" route --graph "gpath:$tmp/turns.gpath" --from 101 --to 103
check "route on the OSM file: the same" "d['weight'] == 456" \
  "$BIN" route --graph "osm:$T" --from 101 --to 103
check "routes through node copies report OSM ids (node-based: a free U-turn at 103)" \
  "d['weight'] == 499 and d['path'] == [104, 100, 103, 100, 101]" \
  "$BIN" route --graph "$tmp/turns_off.gpath" --from 104 --to 101 --turn-costs off
check "with turn costs no U-turn at 103 (3 roads): straight on to the west arm, then the ring's SW quarter (the 8 km/h SE quarter costs more)" \
  "d['weight'] == 736 and d['path'] == [104, 100, 103, 101]" \
  "$BIN" route --graph "$tmp/turns.gpath" --from 104 --to 101
check "with turn costs the path through the restricted crossing" \
  "d['weight'] == 320 and d['path'] == [101, 100, 102]" \
  "$BIN" route --graph "$tmp/turns.gpath" --from 101 --to 102
check "info on a bare *.gpath" "d['nodes'] == 5 and d['format'] == 'osm'" \
  "$BIN" info --graph "$tmp/turns.gpath"
check "--profile on a query command: foot ignores the restriction" "d['weight'] == 1367" \
  "$BIN" route --graph "$T" --profile foot --from 101 --to 103
head -c 1000 "$tmp/turns.gpath" >"$tmp/cut.gpath"
fails "a truncated snapshot is refused" "damaged snapshot.*truncated" \
  "$BIN" info --graph "$tmp/cut.gpath"
fails "a foreign file is refused" "not a gpath snapshot" "$BIN" info --graph "gpath:$T"
fails "an unknown profile is refused" "unknown profile 'tractor'" \
  "$BIN" import "$T" --profile tractor -o "$tmp/x.gpath"
fails "import needs -o" "missing parameter --out" "$BIN" import "$T"
fails "an unknown CCH order is refused" "--cch-order: 'bogus' is not an order" \
  "$BIN" import --graph gen:20000:3 --cch-order bogus -o "$tmp/x.gpath"
check "import --cch-order metis stores one METIS_NodeND call's order" "d['nodes'] == 20000" \
  "$BIN" import --graph gen:20000:3 --cch-order metis -o "$tmp/metis.gpath"
if grep -q "CCH order (one METIS_NodeND call)" "$tmp/err"; then ok "import --cch-order metis: its progress line"
else bad "import --cch-order metis: its progress line" "$(head -c 600 "$tmp/err")"; fi
fails "--profile on a snapshot of another profile" "built with the car profile" \
  "$BIN" route --graph "$tmp/turns.gpath" --profile foot --from 101 --to 103
fails "--profile on a graph that is not OSM" "applies to OpenStreetMap graphs" \
  "$BIN" route --graph gen:1000 --profile car --from 1 --to 2
check "import of any spec (gen:2000:3) keeps its version" "d['nodes'] == 2000" \
  "$BIN" import --graph gen:2000:3 --out "$tmp/gen.gpath"
gv=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['version'])" "$tmp/out" 2>/dev/null)
check "the gen snapshot answers with the same version" "d['version'] == '$gv' and d['format'] == 'gen'" \
  "$BIN" info --graph "$tmp/gen.gpath"

# gpath serve maps the snapshot and answers on it (original OSM ids in paths)
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
"$BIN" serve --port 0 --port-file "$tmp/port" --backend cpu --cache-path '' \
  --graph "turns=gpath:$tmp/turns.gpath" --graph "osmfile=osm:$T?profile=car" >"$tmp/serve.log" 2>&1 &
spid=$!
if port=$(serve_wait_ready "$tmp/port" "$spid"); then
  check "serve: route on a mapped snapshot (turn costs: no U-turn at 103)" \
    "d['weight'] == 736 and d['path'] == [104, 100, 103, 101]" \
    curl -fsS "http://127.0.0.1:$port/v1/graphs/turns/route?from=104&to=101"
  check "serve: the snapshot and the OSM file have one version" \
    "d['version'] == '$("$BIN" info --graph "$tmp/turns.gpath" | $PY -c 'import json,sys; print(json.load(sys.stdin)["version"])')'" \
    curl -fsS "http://127.0.0.1:$port/v1/graphs/osmfile"
else
  bad "serve with a snapshot graph" "$(tail -5 "$tmp/serve.log")"
fi
serve_stop "$spid"
[ -z "$SERVE_RC" ] && kill -9 "$spid" 2>/dev/null

# --cch-order flow on a road-like map (its car turn graph over 10,000 nodes): the turn graph's
# coordinates are made for it, and its order has flow parts
"$BIN" gen -q -n 8000 --osm "$tmp/g8k.osm" >/dev/null
check "import a road-like map (car) --cch-order flow" "d['nodes'] > 5000" \
  "$BIN" import "$tmp/g8k.osm" --profile car --cch-order flow -o "$tmp/flow.gpath"
if grep -q "CCH order of the turn graph (nested dissection, flow parts)" "$tmp/err"; then
  ok "import --cch-order flow: the turn graph's order has flow parts"
else bad "import --cch-order flow: the turn graph's order has flow parts" "$(head -c 600 "$tmp/err")"; fi

for f in monaco.osm.pbf liechtenstein-latest.osm.pbf; do
  if [ ! -r "$DATA/osm/$f" ]; then skipped "$f: absent from $DATA/osm"; continue; fi
  for p in car bicycle foot; do
    check "import $f ($p)" "d['nodes'] > 1000 and d['edges'] > 2000" \
      "$BIN" import "$DATA/osm/$f" --profile "$p" -o "$tmp/$p.gpath"
    v=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['version'])" "$tmp/out" 2>/dev/null)
    check "$f ($p) snapshot has the import's version" "d['version'] == '$v'" \
      "$BIN" info --graph "$tmp/$p.gpath"
  done
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
