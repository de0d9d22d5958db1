#!/usr/bin/env bash
# test_cli.sh - the command line (cli/cli.c, cli/args.c, cli/netops.c, cli/progress.c, the
# serve flags of config.c): gpath route/nearest/sssp/table/apsp/info/gen on a generated graph and on
# the pgRouting sample ($GPATH_DATA/pgrouting-sample, skipped when absent), checking the JSON
# documents (parsed with Debian's python3) and the error exits; every subcommand's --help lists
# every option with a description and an example; short options; "did you mean" for unknown
# options (exit 2); the CLI's nearest, NoRoute (exit 3) and what-if documents equal the HTTP
# answers of a real daemon for the same input; progress lines on stderr when it is not a terminal
# and a bar when it is (a pty); serve --print-config with each value's source and secrets
# redacted. Prints "N passed, N failed, N skipped" last.
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

# expect_exit NAME CODE PATTERN CMD...: CMD exits CODE with PATTERN on stderr (stdout kept in $tmp/out)
expect_exit() {
  local name=$1 code=$2 pat=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq "$code" ] && grep -qE -- "$pat" "$tmp/err"; then ok "$name"
  else bad "$name" "exit $rc, stderr: $(head -c 300 "$tmp/err")"; fi
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
assert all(x["weight"] == r[0]["weight"] for x in r), [x["weight"] for x in r]
assert isinstance(r[0]["weight"], int) and r[0]["weight"] > 0
for x in r:
    assert x["from"] == 1 and x["to"] == 1999
    assert x["path"][0] == 1 and x["path"][-1] == 1999
    g = x["geometry"]
    assert g["type"] == "LineString" and len(g["coordinates"]) == len(x["path"])
    assert all(len(c) == 2 and -180 <= c[0] <= 180 for c in g["coordinates"])
EOF
then ok "route dijkstra == bidir == astar, path and geometry"; else bad "route dijkstra == bidir == astar, path and geometry"; fi

# --- table: rows per source, equal to routes
check "table 3x2" 'len(d["weights"]) == 3 and all(len(r) == 2 for r in d["weights"]) and d["sources"] == [1, 5, 9] and d["targets"] == [1999, 100]' \
  "$BIN" table --graph "$tmp/road.gr" --sources 1,5,9 --targets 1999,100 --threads 2
rd=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["weight"])' "$tmp/route-dijkstra.json")
check "table[0][0] == route distance" "d['weights'][0][0] == $rd" "$BIN" table --graph "$tmp/road.gr" --sources 1,5 --targets 1999
check "table targets default to sources" 'len(d["weights"]) == 2 and d["weights"][0][0] == 0 and d["weights"][1][1] == 0' \
  "$BIN" table --graph "$tmp/road.gr" --sources 7,8

# --- sssp with a cutoff
check "sssp full tree" 'd["source"] == 1 and d["reached"] == len(d["nodes"]) == len(d["weights"]) == len(d["predecessors"]) and d["reached"] > 1900 and d["predecessors"][d["nodes"].index(1)] is None' \
  "$BIN" sssp --graph "$tmp/road.gr" --source 1
check "sssp --max-weight" 'd["reached"] > 1 and d["reached"] < 2000 and max(d["weights"]) <= 300' \
  "$BIN" sssp --graph "$tmp/road.gr" --source 1 --max-weight 300
check "sssp --max-distance (the old name)" 'd["reached"] > 1 and d["reached"] < 2000 and max(d["weights"]) <= 300' \
  "$BIN" sssp --graph "$tmp/road.gr" --source 1 --max-distance 300

# --- apsp with next hops
check "apsp gen:150 --next-hops" 'len(d["nodes"]) == 150 and all(d["weights"][i][i] == 0 and d["next_hops"][i][i] is None for i in range(150)) and len(d["next_hops"]) == 150' \
  "$BIN" apsp --graph gen:150:2 --next-hops
check "apsp without next hops" '"next_hops" not in d and len(d["weights"]) == 150' "$BIN" apsp --graph gen:150:2

# --- the pgRouting sample
EDGES="$DATA/pgrouting-sample/sampledata/edges.csv"
if [ -f "$EDGES" ]; then
  check "sample route 6->10 directed = 5" 'd["weight"] == 5 and d["path"][0] == 6 and d["path"][-1] == 10 and len(d["path"]) == 6' "$BIN" route --graph "csv:$EDGES" --from 6 --to 10 --algo dijkstra
  check "sample route 6->10 undirected = 1" 'd["weight"] == 1 and d["path"] == [6, 10]' "$BIN" route --graph "csv:$EDGES" --from 6 --to 10 --undirected
  "$BIN" route --graph "csv:$EDGES" --from 1 --to 2 >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ $rc -eq 3 ] && $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["code"] == "NoRoute" and "no route from node 1 to node 2" in d["message"] else 1)' "$tmp/out"; then
    ok "sample route 1->2 unreachable: NoRoute document, exit 3"
  else bad "sample route 1->2 unreachable: NoRoute document, exit 3" "exit $rc: $(head -c 300 "$tmp/out")"; fi
  check "sample table" 'd["weights"][0] == [5, 4] and d["weights"][1][1] == 5' "$BIN" table --graph "csv:$EDGES" --sources 6,1 --targets 10,17
  check "sample apsp has nulls" 'd["weights"][d["nodes"].index(6)][d["nodes"].index(10)] == 5 and d["weights"][d["nodes"].index(1)][d["nodes"].index(2)] is None' \
    "$BIN" apsp --graph "csv:$EDGES"
  check "sample fractional scale" 'd["weight"] == 5' "$BIN" route --graph "csv:$EDGES" --from 6 --to 10 --scale 1000
  check "sample info" 'd["nodes"] == 17 and d["edges"] == 30' "$BIN" info --graph "csv:$EDGES"
else
  skipped "pgRouting sample: $EDGES absent"
fi

# --- errors: named, on stderr, non-zero exit
expect_exit "unknown node id: exit 2" 2 'to: node 999999 is not in graph' "$BIN" route --graph "$tmp/road.gr" --from 1 --to 999999
cp "$tmp/out" "$tmp/errdoc"
check "unknown node id: HTTP's UnknownNode document on stdout" 'd["code"] == "UnknownNode" and "999999" in d["message"]' cat "$tmp/errdoc"
fails "missing --to" 'missing parameter --to' "$BIN" route --graph "$tmp/road.gr" --from 1
fails "missing --graph" 'missing parameter --graph' "$BIN" table --sources 1
fails "missing --source" 'missing parameter --source' "$BIN" sssp --graph gen:200
expect_exit "bad id list: exit 2" 2 "sources\\[1\\]: node 77777 is not in graph 'gen:200'" "$BIN" table --graph gen:200 --sources 1,77777
expect_exit "bad place: exit 2" 2 "'sources\\[1\\]' must be a node id" "$BIN" table --graph gen:200 --sources '1;x'
cp "$tmp/out" "$tmp/errdoc"
check "bad place: HTTP's InvalidQuery document on stdout" 'd["code"] == "InvalidQuery"' cat "$tmp/errdoc"
fails "unknown option" "unknown option --frm; did you mean --from\?" "$BIN" route --graph gen:200 --frm 1 --to 2
fails "unknown algorithm" "unknown algorithm 'fast'" "$BIN" route --graph gen:200 --from 1 --to 2 --algo fast
fails "unknown backend" "unknown backend 'tpu'" "$BIN" route --graph gen:200 --from 1 --to 2 --backend tpu
fails "unknown command" "unknown command 'rout'" "$BIN" rout
fails "missing graph file" "$tmp/nope.gr" "$BIN" info --graph "$tmp/nope.gr"
printf 'c broken\np sp 3 2\na 1 2 5\na 2 x 7\n' >"$tmp/broken.gr"
fails "loader error names file:line" "broken.gr:4" "$BIN" route --graph "$tmp/broken.gr" --from 1 --to 2
fails "negative --max-distance" "max-distance" "$BIN" sssp --graph gen:200 --source 1 --max-distance -5
fails "--max-weight and --max-distance" "not both" "$BIN" sssp --graph gen:200 --source 1 --max-weight 5 --max-distance 5
fails "apsp over --max-nodes" "over the limit of 100" "$BIN" apsp --graph gen:150:2 --max-nodes 100
fails "gen needs --out" "missing parameter --out" "$BIN" gen --nodes 500
if "$BIN" route --graph gen:200 --from 1 --to 2 --backend cuda >/dev/null 2>"$tmp/err"; then
  ok "--backend cuda (a GPU is usable here)"
elif grep -qi 'cuda' "$tmp/err"; then ok "--backend cuda without a GPU is a named error"
else bad "--backend cuda" "$(cat "$tmp/err")"; fi

# --- one option table: every subcommand's --help lists every option with a description and an
# example; short options for the common ones
cmds=$("$BIN" --help | awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}')
for c in route nearest sssp table apsp routing-tables what-if repair info gen serve; do
  case " $(echo $cmds) " in *" $c "*) ok "gpath --help lists $c" ;; *) bad "gpath --help lists $c" "$cmds" ;; esac
done
for c in $cmds; do
  "$BIN" "$c" --help >"$tmp/help" 2>&1; rc=$?
  if $PY - "$tmp/help" "$c" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().split("\n")
rows = [i for i, l in enumerate(text) if re.match(r"^  (-\S, )?(    )?--[a-z]", l)]
assert len(rows) >= 2, "no option rows"
for k, i in enumerate(rows):
    name = re.search(r"--([a-z][a-z0-9-]*)", text[i]).group(1)
    end = rows[k + 1] if k + 1 < len(rows) else len(text)
    block = text[i:end]
    desc = text[i][31:].strip()
    assert len(desc) > 8, f"--{name}: no description"
    if name != "help":
        assert any(f"e.g. --{name}" in l for l in block), f"--{name}: no example"
EOF
  then [ $rc -eq 0 ] && ok "$c --help: every option described, with an example" || bad "$c --help exit $rc"
  else bad "$c --help: every option described, with an example" "$(head -c 400 "$tmp/help")"; fi
done
for pair in "route -g" "route -f" "route -t" "route -b" "route -q" "table -s" "table -t" "nearest -n" \
            "apsp -j" "gen -o" "gen -n" "what-if -L" "routing-tables -R" "repair -R" "repair -f" "serve -p" "serve -b" "serve -g" "serve -c"; do
  set -- $pair
  if "$BIN" "$1" --help | grep -qE "^  $2, --"; then ok "$1 has $2"; else bad "$1 has $2"; fi
done
check "short options answer like long ones" 'd["from"] == 1 and d["to"] == 1999 and d["weight"] > 0' \
  "$BIN" route -g "$tmp/road.gr" -f 1 -t 1999 -b cpu -q
check "--opt=value and -xVALUE forms" 'len(d["weights"]) == 2' "$BIN" table --graph="$tmp/road.gr" -s1,5 -t=7

# --- unknown options: a suggestion and exit 2
expect_exit "--grpah: did you mean --graph, exit 2" 2 'unknown option --grpah; did you mean --graph\?' "$BIN" route --grpah gen:200 -f 1 -t 2
expect_exit "--next-hop: did you mean --next-hops" 2 'did you mean --next-hops\?' "$BIN" apsp -g gen:200 --next-hop
expect_exit "repair --format xml: exit 2" 2 "'xml' is not json or csv" "$BIN" repair -g gen:200 --format xml
expect_exit "repair unknown router: UnknownNode, exit 2" 2 'routers\[0\]: no router named or numbered' "$BIN" repair -g gen:200 --router 99999 -q
expect_exit "what-if --fail-lnk: did you mean --fail-link" 2 'did you mean --fail-link\?' "$BIN" what-if -g gen:200 --fail-lnk 1,2
expect_exit "serve --prot: did you mean --port, exit 2" 2 'unknown flag --prot; did you mean --port\?' "$BIN" serve --prot 9000
expect_exit "unknown command suggestion" 2 "did you mean 'nearest'" "$BIN" neerest
expect_exit "no suggestion for a far-off name" 2 'unknown option --zzzzzz \(see' "$BIN" route --zzzzzz 1
expect_exit "missing value names an example" 2 'needs a value \(e.g. --from 1\)' "$BIN" route -g gen:200 -t 2 --from

# --- nearest
check "nearest 3" 'd["lon"] == 8.5 and d["lat"] == 47.3 and len(d["nodes"]) == 3 and d["nodes"][0]["distance_m"] <= d["nodes"][1]["distance_m"] <= d["nodes"][2]["distance_m"] and all(set(n) == {"id", "distance_m", "lon", "lat"} for n in d["nodes"]) and d["waypoint"]["distance_m"] <= d["nodes"][0]["distance_m"]' \
  "$BIN" nearest -g gen:2000:3 --lon 8.5 --lat 47.3 -n 3
expect_exit "nearest: latitude out of range" 2 '--lat: .91. is outside' "$BIN" nearest -g gen:2000:3 --lon 8.5 --lat 91
printf 'p sp 3 1\na 1 2 5\n' >"$tmp/tiny.gr"
expect_exit "nearest without coordinates" 2 'no node coordinates' "$BIN" nearest -g "$tmp/tiny.gr" --lon 1 --lat 1

# --- the same documents as HTTP: nearest, NoRoute, what-if (a real daemon on loopback)
# sq.gr: a square 1-2-3-4 with the diagonal 1-3, every link both ways
printf 'p sp 4 10\na 1 2 1\na 2 1 1\na 2 3 1\na 3 2 1\na 3 4 1\na 4 3 1\na 4 1 1\na 1 4 1\na 1 3 2\na 3 1 2\n' >"$tmp/sq.gr"
(cd "$tmp" && exec "$BIN" serve --port 0 --port-file "$tmp/port" --listen 127.0.0.1 --cache-path '' \
   --backend cpu -g tiny.gr=tiny.gr -g sq.gr=sq.gr -g road=gen:2000:3 >"$tmp/serve.log" 2>&1) &
spid=$!
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
if port=$(serve_wait_ready "$tmp/port" "$spid"); then
  U="http://127.0.0.1:$port/v1/graphs"
  same() { # NAME CLI-OUT HTTP-OUT [drop keys...]: equal JSON documents
    local name=$1 a=$2 b=$3; shift 3
    if $PY - "$a" "$b" "$@" <<'EOF'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in sys.argv[3:]:  # members that differ by construction (the graph's name)
    a.pop(k, None)
    b.pop(k, None)
b.pop("request_id", None)  # per-request data HTTP may add to error bodies
assert a == b, (a, b)
EOF
    then ok "$name"; else bad "$name" "cli: $(head -c 300 "$a") http: $(head -c 300 "$b")"; fi
  }
  "$BIN" nearest -g gen:2000:3 --lon 8.5 --lat 47.3 -n 3 >"$tmp/cli.json"
  curl -s "$U/road/nearest?lon=8.5&lat=47.3&number=3" >"$tmp/http.json"
  same "nearest: CLI document == HTTP document (less the graph's name)" "$tmp/cli.json" "$tmp/http.json" graph
  "$BIN" route -g gen:2000:3 -f 1 -t 1500 >"$tmp/cli.json"
  curl -s "$U/road/route?from=1&to=1500" >"$tmp/http.json"
  same "route: CLI document == HTTP document (less the graph's name)" "$tmp/cli.json" "$tmp/http.json" graph
  (cd "$tmp" && "$BIN" route -g tiny.gr -f 1 -t 3 >"$tmp/cli.json" 2>/dev/null); rc=$?
  curl -s "$U/tiny.gr/route?from=1&to=3" >"$tmp/http.json"
  [ $rc -eq 3 ] && ok "no route: exit 3" || bad "no route: exit 3" "exit $rc"
  same "no route: CLI document == HTTP error document" "$tmp/cli.json" "$tmp/http.json"
  (cd "$tmp" && "$BIN" what-if -g sq.gr --fail-link 1,2 --set-cost 3,4,7 --fail-router 2 -q >"$tmp/cli.json")
  curl -s -X POST -d '{"fail_links": [[1, 2]], "set_costs": [{"link": [3, 4], "cost": 7}], "fail_routers": [2]}' \
    "$U/sq.gr/what-if" >"$tmp/http.json"
  same "what-if: CLI document == HTTP document" "$tmp/cli.json" "$tmp/http.json"
  check "what-if document has changes" 'd["count"] == len(d["changes"]) > 0 and d["graph"] == "sq.gr"' cat "$tmp/cli.json"
else
  bad "daemon for the CLI/HTTP comparisons did not start" "$(tail -5 "$tmp/serve.log")"
fi
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null

# --- progress: lines on stderr when it is not a terminal, a bar on a terminal, nothing with -q
GPATH_PROGRESS_INTERVAL=0.001 "$BIN" apsp -g gen:800:2 >/dev/null 2>"$tmp/err"
if $PY - "$tmp/err" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
pct = [int(m.group(1)) for l in lines for m in [re.match(r"gpath: progress apsp (\d+)% after [\d.]+ s$", l)] if m]
assert len(pct) >= 2, lines[:5]
assert pct == sorted(pct) and max(pct) < 100, pct
assert re.match(r"gpath: progress done after [\d.]+ s$", lines[-1]), lines[-1]
EOF
then ok "apsp: progress lines on a non-terminal stderr, increasing, below 100%, then done"
else bad "apsp: progress lines" "$(head -c 400 "$tmp/err")"; fi
GPATH_PROGRESS_INTERVAL=0.001 "$BIN" apsp -g gen:800:2 -q >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] && ok "--quiet: no progress" || bad "--quiet: no progress" "$(head -c 200 "$tmp/err")"
"$BIN" route -g gen:300 -f 1 -t 2 >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] && ok "quick command: stderr stays empty" || bad "quick command: stderr stays empty" "$(head -c 200 "$tmp/err")"
if GPATH_PROGRESS_INTERVAL=0.001 $PY - "$BIN" <<'EOF'
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen([sys.argv[1], "apsp", "-g", "gen:800:2"], stdout=subprocess.DEVNULL, stderr=s)
os.close(s)
out = b""
while True:  # read while it runs: a full pty would stall its writes
    try:
        chunk = os.read(m, 65536)
    except OSError:  # EIO: the child closed its end
        break
    if not chunk:
        break
    out += chunk
assert p.wait() == 0
assert b"\r" in out and b"[" in out and b"%" in out and b"apsp" in out, out[:300]
assert b"progress done" not in out  # no log lines on a terminal
EOF
then ok "apsp: a progress bar on a terminal"; else bad "apsp: a progress bar on a terminal"; fi

# --- serve --print-config: the effective configuration, each value with its source
printf '[server]\nport = 7000\nthreads = 5\nadmin_token = filesecret\n[graphs]\nr = postgresql://u:pw0rd@db/gis?table=e\n' >"$tmp/t.conf"
GPATH_THREADS=3 GPATH_ADMIN_TOKEN=envsecret "$BIN" serve -c "$tmp/t.conf" -p 9999 --print-config >"$tmp/pc" 2>&1
if $PY - "$tmp/pc" "$tmp/t.conf" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
def entry(key):
    i = next(i for i, l in enumerate(lines) if l.startswith(key + " = "))
    return lines[i].split(" = ", 1)[1], lines[i - 1]
assert entry("port") == ("9999", "# source: flag --port"), entry("port")
assert entry("threads") == ("3", "# source: env GPATH_THREADS"), entry("threads")
i = lines.index("# admin_token = <redacted>")  # commented out: a copy never sets a bogus token
assert lines[i - 1] == "# source: env GPATH_ADMIN_TOKEN (value not shown)", lines[i - 1]
assert not any(l.startswith("admin_token =") for l in lines)
assert entry("listen") == ("0.0.0.0", "# source: default"), entry("listen")
v, src = entry("r")
assert v == "postgresql://u:<redacted>@db/gis?table=e" and src == "# source: file " + sys.argv[2], (v, src)
text = "\n".join(lines)
assert "envsecret" not in text and "filesecret" not in text and "pw0rd" not in text
EOF
then ok "--print-config: values after file < env < flag, sources, secrets redacted"
else bad "--print-config" "$(head -c 600 "$tmp/pc")"; fi
"$BIN" serve --print-config -p 8081 >"$tmp/pc2.conf"
if "$BIN" serve -c "$tmp/pc2.conf" --print-config | grep -q '^port = 8081'; then ok "--print-config output reads back as a config file"
else bad "--print-config output reads back as a config file"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
