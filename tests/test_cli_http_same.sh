#!/usr/bin/env bash
# test_cli_http_same.sh - every query the service answers, run from the shell, prints the document
# HTTP answers (issue 17): a real daemon on a loopback ephemeral port and the CLI get the same
# inputs - node ids, coordinates lon,lat (snapped within --radius / radius=), lists of places -
# for route, nearest, sssp, table, apsp, info, routing-tables, routing-table (--router) and
# what-if, on a generated road graph written as DIMACS .gr/.co, an inline GraphML topology,
# Topology Zoo's Abilene ($GPATH_DATA, skipped when absent) and an OSM fixture
# (tests/data/osm/oneway.osm); the parsed JSON must be equal, with the graph served under its
# --graph spec so that "graph" matches too. Only info's loaded_at (when each process loaded the
# graph) differs by construction. Errors - UnknownNode, NoSegment, NoCoordinates, InvalidQuery,
# NoRoute, and what-if's unknown routers and unjoined links (NotFound) - must be HTTP's error
# document on the CLI's stdout, its message on stderr, with exit 2 (3 for NoRoute).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/build/gpath}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
ROOT=$PWD
tmp=$(mktemp -d)
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
if [ ! -x "$BIN" ]; then
  echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

cd "$tmp" || exit 1
"$BIN" gen -n 2000 -s 3 -o road.gr -q >/dev/null || { echo "gen failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
printf 'p sp 3 1\na 1 2 5\n' >tiny.gr   # no coordinates; 3 unreachable
cp "$ROOT/tests/data/osm/oneway.osm" oneway.osm
cat >topo.graphml <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="label" attr.type="string" for="node" id="d0" />
  <graph edgedefault="undirected">
    <node id="1"><data key="d0">r1</data></node>
    <node id="2"><data key="d0">r2</data></node>
    <node id="3"><data key="d0">r3</data></node>
    <node id="4"><data key="d0">r4</data></node>
    <node id="5"><data key="d0">r5</data></node>
    <edge source="1" target="2"/>
    <edge source="2" target="3"/>
    <edge source="3" target="4"/>
    <edge source="4" target="1"/>
    <edge source="1" target="3"/>
  </graph>
</graphml>
EOF
graphs=(-g road.gr=road.gr -g tiny.gr=tiny.gr -g oneway.osm=oneway.osm -g topo.graphml=topo.graphml)
abilene=
if [ -f "$DATA/topology-zoo/graphml/Abilene.graphml" ]; then
  cp "$DATA/topology-zoo/graphml/Abilene.graphml" Abilene.graphml
  graphs+=(-g Abilene.graphml=Abilene.graphml); abilene=1
fi
"$BIN" serve --port 0 --port-file port --listen 127.0.0.1 --cache-path '' --backend cpu "${graphs[@]}" \
  >serve.log 2>&1 &
spid=$!
# shellcheck source=tests/serve_lib.sh
. "$ROOT/tests/serve_lib.sh"
if ! port=$(serve_wait_ready port "$spid"); then
  echo "FAIL daemon did not start: $(tail -5 serve.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

BIN="$BIN" PORT="$port" ABILENE="$abilene" /usr/bin/python3 - <<'EOF'
import json, os, subprocess, urllib.error, urllib.request

BIN, PORT = os.environ["BIN"], os.environ["PORT"]
passed = failed = skipped = 0


def http(method, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%s/v1/graphs/%s" % (PORT, path), method=method,
                                 data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def cli(*args):
    p = subprocess.run([BIN, *args, "-q"], capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        doc = "not JSON: " + p.stdout[:200]
    return p.returncode, doc, p.stderr


def same(name, args, method, path, body=None, drop=(), code=None):
    """The CLI's stdout equals HTTP's body; the exit status follows HTTP's status. code: the error
    code both must answer (None: a 200 answer)."""
    global passed, failed
    rc, a, err = cli(*args)
    status, b = http(method, path, body)
    got = (b or {}).get("code") if status != 200 else None
    for k in drop:
        for d in (a, b):
            if isinstance(d, dict):
                d.pop(k, None)
    if isinstance(b, dict):
        b.pop("request_id", None)  # per-request, if HTTP ever adds it to a body
    want_rc = 0 if status == 200 else 3 if got == "NoRoute" else 1 if status >= 500 else 2
    problems = []
    if got != code:
        problems.append("HTTP answered %d %s, the test expects %s" % (status, got, code or 200))
    if a != b:
        problems.append("documents differ:\n       cli:  %s\n       http: %s"
                        % (json.dumps(a)[:400], json.dumps(b)[:400]))
    if rc != want_rc:
        problems.append("exit %d (HTTP %d: want %d) %s" % (rc, status, want_rc, err[:200]))
    if status != 200 and (b or {}).get("message", "\0") not in err:
        problems.append("stderr does not carry the message: " + err[:200])
    if problems:
        failed += 1
        print("FAIL %s (HTTP %d)\n     %s" % (name, status, "\n     ".join(problems)))
    else:
        passed += 1
        print("ok   %s (HTTP %d)" % (name, status))


R = "road.gr"
# places on the road-like gen:2000:3 (road.co): a few metres off node 1 and off node 500, and one
# ~130 km from every road
CO = {int(l.split()[1]): (int(l.split()[2]) / 1e6, int(l.split()[3]) / 1e6)
      for l in open("road.co") if l.startswith("v ")}
PA = (round(CO[1][0] + 0.00004, 6), round(CO[1][1] + 0.00003, 6))
PB = (round(CO[500][0] + 0.00004, 6), round(CO[500][1] - 0.00003, 6))
A, B = "%.6f,%.6f" % PA, "%.6f,%.6f" % PB
OFF = "%.6f,%.6f" % (CO[1][0] + 1.0, CO[1][1] + 1.0)
# route: ids, coordinates (lon,lat), mixed, radius, algorithms, errors
same("route ids", ["route", "-g", R, "-f", "1", "-t", "1500"], "GET", R + "/route?from=1&to=1500")
same("route coordinates", ["route", "-g", R, "-f", A, "-t", B],
     "GET", R + "/route?from=%s&to=%s" % (A, B))
same("route id to coordinate, astar, radius", ["route", "-g", R, "-f", "7", "-t", "8.5,47.3",
     "--algo", "astar", "--radius", "500"], "GET", R + "/route?from=7&to=8.5,47.3&algo=astar&radius=500")
same("route NoSegment beyond the radius", ["route", "-g", R, "-f", "8.5,47.3", "-t", "1", "-r", "1"],
     "GET", R + "/route?from=8.5,47.3&to=1&radius=1", code="NoSegment")
same("route NoSegment (swapped lat,lon)", ["route", "-g", R, "-f", "47.28,8.47", "-t", "1"],
     "GET", R + "/route?from=47.28,8.47&to=1", code="NoSegment")
same("route UnknownNode", ["route", "-g", R, "-f", "1", "-t", "999999"], "GET", R + "/route?from=1&to=999999", code="UnknownNode")
same("route InvalidQuery (malformed place)", ["route", "-g", R, "-f", "1", "-t", "8.5,x"],
     "GET", R + "/route?from=1&to=8.5,x", code="InvalidQuery")
same("route NoRoute (exit 3)", ["route", "-g", "tiny.gr", "-f", "1", "-t", "3"], "GET", "tiny.gr/route?from=1&to=3", code="NoRoute")
same("route NoCoordinates", ["route", "-g", "tiny.gr", "-f", "1", "-t", "8.5,47.3"],
     "GET", "tiny.gr/route?from=1&to=8.5,47.3", code="NoCoordinates")
same("route astar NoCoordinates", ["route", "-g", "tiny.gr", "-f", "1", "-t", "2", "-a", "astar"],
     "GET", "tiny.gr/route?from=1&to=2&algo=astar", code="NoCoordinates")
# nearest
same("nearest", ["nearest", "-g", R, "--lon", "8.5", "--lat", "47.3", "-n", "3"],
     "GET", R + "/nearest?lon=8.5&lat=47.3&number=3")
same("nearest, waypoint beyond the radius", ["nearest", "-g", R, "--lon", "8.5", "--lat", "47.3", "-r", "1"],
     "GET", R + "/nearest?lon=8.5&lat=47.3&radius=1")
same("nearest NoCoordinates", ["nearest", "-g", "tiny.gr", "--lon", "1", "--lat", "1"],
     "GET", "tiny.gr/nearest?lon=1&lat=1", code="NoCoordinates")
# sssp
same("sssp id", ["sssp", "-g", R, "-s", "1", "-d", "300"], "GET", R + "/sssp?source=1&max_distance=300")
same("sssp coordinate", ["sssp", "-g", R, "-s", "8.5,47.3", "-d", "400"],
     "GET", R + "/sssp?source=8.5,47.3&max_distance=400")
same("sssp whole tree", ["sssp", "-g", "tiny.gr", "-s", "1"], "GET", "tiny.gr/sssp?source=1")
same("sssp NoSegment", ["sssp", "-g", R, "-s", OFF, "--radius", "2"],
     "GET", R + "/sssp?source=%s&radius=2" % OFF, code="NoSegment")
same("sssp UnknownNode", ["sssp", "-g", R, "-s", "0"], "GET", R + "/sssp?source=0", code="UnknownNode")
# table
same("table ids", ["table", "-g", R, "-s", "1,1500", "-t", "250,1999"], "POST", R + "/table",
     {"sources": [1, 1500], "targets": [250, 1999]})
same("table ids and coordinates", ["table", "-g", R, "-s", "1;" + A, "-t", "500;" + B],
     "POST", R + "/table", {"sources": [1, list(PA)], "targets": [500, B]})
same("table sources x sources", ["table", "-g", R, "-s", "3;8.5,47.3;9"], "POST", R + "/table",
     {"sources": [3, "8.5,47.3", 9]})
same("table radius, NoSegment names the entry", ["table", "-g", R, "-s", "1;" + OFF, "-r", "3"],
     "POST", R + "/table", {"sources": [1, [float(x) for x in OFF.split(",")]], "radius": 3},
     code="NoSegment")
same("table UnknownNode", ["table", "-g", R, "-s", "1", "-t", "2;77777"], "POST", R + "/table",
     {"sources": [1], "targets": [2, 77777]}, code="UnknownNode")
same("table unreachable cells", ["table", "-g", "tiny.gr", "-s", "1,2,3"], "POST", "tiny.gr/table",
     {"sources": [1, 2, 3]})
# apsp, info
same("apsp", ["apsp", "-g", "topo.graphml"], "POST", "topo.graphml/apsp", {})
same("apsp next hops", ["apsp", "-g", "tiny.gr", "--next-hops"], "POST", "tiny.gr/apsp", {"next_hops": True})
for g in (R, "tiny.gr", "oneway.osm", "topo.graphml"):
    same("info " + g, ["info", "-g", g], "GET", g, drop=("loaded_at",))
# OSM: one-way streets, coordinates beside them, no route between separate ways
O = "oneway.osm"
same("osm route along the one-way street", ["route", "-g", O, "-f", "1", "-t", "3"], "GET", O + "/route?from=1&to=3")
same("osm route back around the detour", ["route", "-g", O, "-f", "3", "-t", "1"], "GET", O + "/route?from=3&to=1")
same("osm route coordinates", ["route", "-g", O, "-f", "7.0015,45.0001", "-t", "7.0001,45.0009"],
     "GET", O + "/route?from=7.0015,45.0001&to=7.0001,45.0009")
same("osm NoRoute", ["route", "-g", O, "-f", "1", "-t", "6"], "GET", O + "/route?from=1&to=6", code="NoRoute")
same("osm sssp coordinate", ["sssp", "-g", O, "-s", "7.0015,45.0001"], "GET", O + "/sssp?source=7.0015,45.0001")
same("osm table", ["table", "-g", O, "-s", "1;7.0015,45.0001", "-t", "3;6"], "POST", O + "/table",
     {"sources": [1, "7.0015,45.0001"], "targets": [3, 6]})
same("osm nearest", ["nearest", "-g", O, "--lon", "7.0012", "--lat", "45.0002", "-n", "2"],
     "GET", O + "/nearest?lon=7.0012&lat=45.0002&number=2")
# topologies: routing tables, one router's table, what-if
T = "topo.graphml"
same("routing-tables", ["routing-tables", "-g", T], "GET", T + "/routing-tables")
same("routing-table of one router (by name)", ["routing-tables", "-g", T, "--router", "r3"],
     "GET", T + "/routing-table?router=r3")
same("routing-table of an unknown router", ["routing-tables", "-g", T, "--router", "r9"],
     "GET", T + "/routing-table?router=r9", code="UnknownNode")
same("what-if", ["what-if", "-g", T, "--fail-link", "1,3", "--set-cost", "r2,r3,5", "--fail-router", "4"],
     "POST", T + "/what-if", {"fail_links": [[1, 3]], "set_costs": [{"link": ["r2", "r3"], "cost": 5}],
                              "fail_routers": [4]})
same("what-if: unknown router in a link", ["what-if", "-g", T, "--fail-link", "r1,r9"], "POST",
     T + "/what-if", {"fail_links": [["r1", "r9"]]}, code="UnknownNode")
same("what-if: routers not joined", ["what-if", "-g", T, "--fail-link", "1,3", "--set-cost", "r2,r4,3"],
     "POST", T + "/what-if", {"fail_links": [["1", "3"]], "set_costs": [{"link": ["r2", "r4"], "cost": 3}]},
     code="NotFound")
same("what-if: unknown router", ["what-if", "-g", T, "--fail-router", "r7"], "POST", T + "/what-if",
     {"fail_routers": ["r7"]}, code="UnknownNode")
same("route on a topology", ["route", "-g", T, "-f", "2", "-t", "4"], "GET", T + "/route?from=2&to=4")
if os.environ.get("ABILENE"):
    A = "Abilene.graphml"
    same("Abilene routing-tables", ["routing-tables", "-g", A], "GET", A + "/routing-tables")
    same("Abilene table", ["table", "-g", A, "-s", "0,3,7"], "POST", A + "/table", {"sources": [0, 3, 7]})
    same("Abilene what-if", ["what-if", "-g", A, "--fail-link", "0,1"], "POST", A + "/what-if",
         {"fail_links": [[0, 1]]})
else:
    skipped += 1
    print("SKIP Abilene: $GPATH_DATA/topology-zoo absent")
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
EOF
