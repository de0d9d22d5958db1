#!/usr/bin/env bash
# test_gen_osm.sh - `gpath gen --osm` (graph/road.c's OSM XML writer): osmium reads the file
# (`osmium fileinfo -e`) and converts it to .osm.pbf (skipped when osmium-tool is absent) and it holds the same roads as the
# DIMACS files written from the same graph: every node at the same point (1e-7 degrees against the
# .co's 1e-6), every arc both ways or one-way as the .gr has it, and each way's maxspeed giving
# the .gr's travel time (round(haversine metres / maxspeed * 10) deciseconds, within 1 for the
# haversine variant an importer may use); gpath's own OSM importer (osm:PATH) routes on it as on
# gen:. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/build/gpath}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }

if [ ! -x "$BIN" ]; then
  echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

for spec in 3000:4 60000:1; do
  n=${spec%:*} seed=${spec#*:}
  if ! "$BIN" gen --nodes "$n" --seed "$seed" --out "$tmp/g.gr" --osm "$tmp/g.osm" >"$tmp/gen.json" 2>"$tmp/err"; then
    bad "gen $n --osm" "$(head -c 300 "$tmp/err")"; continue
  fi
  ok "gen $n --osm"
  if command -v osmium >/dev/null 2>&1; then
    if osmium fileinfo -e "$tmp/g.osm" >"$tmp/info" 2>&1 && grep -q "Number of nodes: $n\$" "$tmp/info"; then
      ok "osmium fileinfo -e reads gen:$n:$seed ($(grep -c '<way ' "$tmp/g.osm") ways)"
    else
      bad "osmium fileinfo -e on gen:$n:$seed" "$(tail -5 "$tmp/info")"
    fi
    if osmium cat "$tmp/g.osm" -o "$tmp/g.osm.pbf" -O 2>"$tmp/err" &&
      osmium fileinfo -e "$tmp/g.osm.pbf" | grep -q "Number of nodes: $n\$"; then
      ok "osmium converts gen:$n:$seed to .osm.pbf"
    else
      bad "osmium cat to .osm.pbf" "$(head -c 300 "$tmp/err")"
    fi
  else
    skipped "osmium fileinfo (osmium-tool not installed)"
  fi
  if out=$($PY - "$tmp/g.osm" "$tmp/g.gr" "$tmp/g.co" 2>&1 <<'PYEOF'
import math, sys
import xml.etree.ElementTree as ET
osm, gr, co = sys.argv[1:4]
pos, arcs = {}, {}
speeds = {"motorway": 110, "primary": 80, "secondary": 70, "tertiary": 50, "residential": 30}
for ev, el in ET.iterparse(osm, events=("end",)):
    if el.tag == "node":
        pos[int(el.get("id"))] = (float(el.get("lon")), float(el.get("lat")))
    elif el.tag == "way":
        nds = [int(x.get("ref")) for x in el.findall("nd")]
        tags = {t.get("k"): t.get("v") for t in el.findall("tag")}
        kmh = float(tags["maxspeed"])
        assert speeds[tags["highway"]] == kmh, tags
        assert len(nds) >= 2, nds
        for a, b in zip(nds, nds[1:]):
            (x1, y1), (x2, y2) = pos[a], pos[b]
            p1, p2 = math.radians(y1), math.radians(y2)
            h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(x2 - x1) / 2) ** 2
            m = 2 * 6371008.8 * math.asin(math.sqrt(h))
            w = max(1, round(m / (kmh / 3.6) * 10))
            arcs.setdefault((a, b), []).append(w)
            # OSM implies oneway=yes on motorways: the writer must say oneway=no on two-way ones
            if tags.get("oneway", "yes" if tags["highway"] == "motorway" else "no") != "yes":
                arcs.setdefault((b, a), []).append(w)
        el.clear()
n = 0
for line in open(co):
    if line.startswith("v "):
        _, i, x, y = line.split()
        px, py = pos[int(i)]
        assert abs(px * 1e6 - int(x)) <= 0.51 and abs(py * 1e6 - int(y)) <= 0.51, (i, px, py, x, y)
        n += 1
assert n == len(pos), (n, len(pos))
m = 0
for line in open(gr):
    if line.startswith("a "):
        _, u, v, w = line.split()
        ws = arcs.get((int(u), int(v)))
        assert ws, ("arc missing from the OSM file", u, v)
        assert any(abs(x - int(w)) <= 1 for x in ws), (u, v, w, ws)
        m += 1
assert m == sum(len(x) for x in arcs.values()), (m, sum(len(x) for x in arcs.values()))
print(f"{len(pos)} nodes, {m} arcs agree")
PYEOF
  ); then
    ok "OSM = DIMACS for gen:$n:$seed: $out"
  else
    bad "OSM = DIMACS for gen:$n:$seed" "$(echo "$out" | tail -3)"
  fi
done

# gpath's own OSM importer (osm:PATH, car profile) reads the file back: it folds the shape points
# into its arcs, so compare distances between intersections (nodes of degree != 2) with gen: (the
# node-based road model: turn costs off, gen has none); the car profile drives at 80% of a tagged
# maxspeed (OSRM's car.lua), so its times are gen's x 1.25
"$BIN" gen --nodes 20000 --seed 3 --out "$tmp/r.gr" --osm "$tmp/r.osm" -q >/dev/null 2>"$tmp/err"
if ! "$BIN" info --graph "osm:$tmp/r.osm" >"$tmp/osminfo" 2>"$tmp/err"; then
  if grep -qiE "osm.*(not|without|unsupported)|cannot tell" "$tmp/err"; then
    skipped "osm: import (this build reads no OSM: $(head -c 120 "$tmp/err"))"
  else
    bad "osm: import of gen:20000:3" "$(head -c 300 "$tmp/err")"
  fi
elif out=$($PY - "$BIN" "$tmp" 2>&1 <<'PYEOF'
import json, random, subprocess, sys
gp, tmp = sys.argv[1:3]
adj = {}
for line in open(f"{tmp}/r.gr"):
    if line.startswith("a "):
        _, u, v, _w = line.split()
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
ids = sorted(int(k) for k, a in adj.items() if len(a) != 2)
rnd = random.Random(7)
src, dst = rnd.sample(ids, 12), rnd.sample(ids, 12)
def table(spec):
    out = subprocess.run([gp, "table", "--graph", spec, "--sources", ",".join(map(str, src)),
                          "--targets", ",".join(map(str, dst)), "--turn-costs", "off"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["weights"]
a, b = table("gen:20000:3"), table(f"osm:{tmp}/r.osm")
worst = max(abs(b[i][j] - 1.25 * a[i][j]) / max(1, 1.25 * a[i][j])
            for i in range(12) for j in range(12))
assert worst < 0.005, (worst, a, b)
print(f"144 intersection pairs, largest difference {100 * worst:.3f}%")
PYEOF
); then
  ok "osm: import of gen:20000:3 routes as gen does: $out"
else
  bad "osm: import routes as gen does" "$(echo "$out" | tail -3)"
fi

# --osm alone (no DIMACS files): the JSON names the OSM file and no .gr
if "$BIN" gen --nodes 500 --osm "$tmp/only.osm" >"$tmp/only.json" 2>"$tmp/err" && [ -s "$tmp/only.osm" ] &&
  $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["nodes"] == 500 and d["osm"] and "graph" not in d else 1)' "$tmp/only.json"; then
  ok "gen --osm without --out"
else
  bad "gen --osm without --out" "$(cat "$tmp/only.json" "$tmp/err" | head -c 300)"
fi
if "$BIN" gen --nodes 500 >"$tmp/none.json" 2>"$tmp/err"; then bad "gen without --out or --osm must fail"
elif grep -q "missing parameter --out" "$tmp/err"; then ok "gen without --out or --osm is refused"
else bad "gen without --out or --osm" "$(head -c 300 "$tmp/err")"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
