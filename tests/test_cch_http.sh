#!/usr/bin/env bash
# test_cch_http.sh - the CCH through a real `gpath serve` over loopback: with --cch on, route AUTO
# (the CCH query), sssp (PHAST) and table (buckets, or RPHAST on a GPU) agree with route
# algo=dijkstra on random pairs of a generated graph; after PATCH .../links (new costs on links of a
# shortest path) the new version's CCH (topology reused from the cache: the log says so) agrees
# again, and so after a change of over 4,096 links (checked on several threads), whose bad entries
# are refused naming them as one at a time would; a snapshot written by `gpath import` carries the CCH order and serving it reuses it; with
# --cch off no CCH is built. Prints "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/serve_lib.sh
BIN=${GPATH_BIN:-${BUILD:-build}/gpath}
if [ ! -x "$BIN" ]; then echo "SKIP: $BIN not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

start() { # MODE -> sets port, pid
  rm -f "$tmp/port"
  # PATCH .../links needs the operator token (server/http/daemon.c)
  "$BIN" serve --graph g=gen:6000:4 --cch "$1" --cch_min_nodes 0 --cache_path "" --port 0 \
    --listen 127.0.0.1 --port-file "$tmp/port" --log_level info --operator-token op-token \
    2>"$tmp/log.$1" &
  pid=$!
  port=$(serve_wait_ready "$tmp/port" "$pid") || { bad "serve --cch $1 did not start"; cat "$tmp/log.$1"; return 1; }
}

if start on; then
  grep -q "event=cch_ready" "$tmp/log.on" && ok || bad "no cch_ready log line with --cch on"
  out=$(PORT=$port LOG="$tmp/log.on" /usr/bin/python3 - <<'PY'
import json, os, random, urllib.error, urllib.request
port = os.environ["PORT"]
base = f"http://127.0.0.1:{port}/v1/graphs/g"
def get(p):
    with urllib.request.urlopen(base + p) as r:
        return json.load(r)
def send(method, p, body):
    rq = urllib.request.Request(base + p, data=json.dumps(body).encode(), method=method,
                                headers={"Content-Type": "application/json",
                                         "Authorization": "Bearer op-token"})
    with urllib.request.urlopen(rq) as r:
        return json.load(r)
random.seed(7)
passed = failed = 0
def check(name, cond, info=""):
    global passed, failed
    if cond: passed += 1
    else:
        failed += 1
        print("FAIL:", name, info)
sp = get("/sssp?source=1")
ids = sp["nodes"]
dist = dict(zip(sp["nodes"], sp["weights"]))
def compare(tag):
    mism = 0
    for _ in range(40):
        s, t = random.choice(ids), random.choice(ids)
        a = get(f"/route?from={s}&to={t}")
        b = get(f"/route?from={s}&to={t}&algo=dijkstra")
        if abs(a["weight"] - b["weight"]) > 1e-9 or a["path"][0] != s or a["path"][-1] != t:
            mism += 1
    check(f"{tag}: route auto == dijkstra on 40 pairs", mism == 0, f"{mism} differ")
    s = random.choice(ids)
    sp = get(f"/sssp?source={s}")
    d = dict(zip(sp["nodes"], sp["weights"]))
    mism = 0
    for t in random.sample(ids, 15):
        b = get(f"/route?from={s}&to={t}&algo=dijkstra")
        if abs(d.get(t, -1) - b["weight"]) > 1e-9: mism += 1
    check(f"{tag}: sssp (PHAST) == dijkstra", mism == 0, f"{mism} differ")
    src, dst = random.sample(ids, 6), random.sample(ids, 7)
    tb = send("POST", "/table", {"sources": src, "targets": dst})
    mism = 0
    for i, s in enumerate(src):
        for j, t in enumerate(dst):
            b = get(f"/route?from={s}&to={t}&algo=dijkstra")
            v = tb["weights"][i][j] if isinstance(tb["weights"][0], list) else tb["weights"][i * len(dst) + j]
            if v is None or abs(v - b["weight"]) > 1e-9: mism += 1
    check(f"{tag}: table == dijkstra", mism == 0, f"{mism} differ")
compare("loaded")
# new costs on the links of a few shortest paths
links = []
for _ in range(5):
    s, t = random.sample(ids, 2)
    p = get(f"/route?from={s}&to={t}")["path"]
    for a, b in zip(p, p[1:]):
        links.append({"link": [a, b], "cost": random.randint(1, 50000)})
pr = send("PATCH", "/links", {"links": links[:60]})
check("patch answered with a new version", pr.get("version") not in (None, pr.get("previous_version")), str(pr)[:200])
compare("patched")
# a change of over 4,096 links (validated on all CPUs: server/v1/netops.c fast_range): distinct
# links of shortest-path trees, one of them set to cost 1
seen, big = set(), []
for s in random.sample(ids, 12):
    tr = get(f"/sssp?source={s}")
    for b, a in zip(tr["nodes"], tr["predecessors"]):
        if a is not None and (a, b) not in seen and (b, a) not in seen:
            seen.add((a, b))
            big.append({"link": [a, b], "cost": random.randint(2, 50000)})
    if len(big) > 4200:
        break
check("over 4,096 distinct links found", len(big) > 4096, str(len(big)))
def raw(text, query=""):
    rq = urllib.request.Request(base + "/links" + query, data=text.encode(), method="PATCH",
                                headers={"Content-Type": "application/json",
                                         "Authorization": "Bearer op-token"})
    try:
        with urllib.request.urlopen(rq) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
def refused(body):
    return raw(json.dumps(body))
before = get("")["version"]
n = len(big)
st, e = refused({"links": big[:-1] + [{"link": big[-1]["link"], "cost": -1}]})
check("a bad cost in the last of many entries: 400 naming it",
      st == 400 and f"links[{n - 1}].cost" in e.get("message", ""), f"{st} {e}")
st, e = refused({"links": big[:-1] + [{"link": big[0]["link"][::-1], "cost": 5}]})
check("a link named twice among many entries: 400 naming both",
      st == 400 and "links[0]" in e.get("message", "") and f"links[{n - 1}]" in e.get("message", ""),
      f"{st} {e}")
st, e = refused({"links": big[:100] + [{"link": [big[0]["link"][0], "no-such-router"], "cost": 5}] + big[101:]})
check("an unknown router among many entries: 400 naming it",
      st == 400 and "links[100]" in e.get("message", ""), f"{st} {e}")
check("refused changes leave the version", get("")["version"] == before)
big[n // 2]["cost"] = 1
a, b = big[n // 2]["link"]
pr = send("PATCH", "/links", {"links": big})
check("a change of many links answered", pr.get("links_changed") == n, str(pr)[:200])
check("its cost-1 link is the route between its ends", get(f"/route?from={a}&to={b}")["weight"] == 1)
k = random.randrange(n)
a2, b2 = big[k]["link"]
check("a changed link bounds the route between its ends",
      get(f"/route?from={a2}&to={b2}")["weight"] <= big[k]["cost"])
compare("patched many")
# the common form is read from the text (server/v1/netops.c links_text), anything else the JSON
# way: the same changes in another layout (keys swapped, blanks, newlines) give the same version
def last_body():
    with open(os.environ["LOG"]) as f:
        lines = [l for l in f if "event=links_changed" in l]
    return lines[-1].split(" body=")[1].split()[0] if lines else None
some = [{"link": l["link"], "cost": random.randint(2, 50000) + 0.5 * (i % 2)} for i, l in enumerate(big[:300])]
st, v1 = raw(json.dumps({"links": some}, separators=(",", ":")))
check("compact common form: text", st == 200 and last_body() == "text", f"{st} {last_body()}")
st, v0 = raw(json.dumps({"links": big}))  # back to the costs before
pretty = "{\n \"links\" : [\n" + ",\n".join(
    '\t{ "cost" : %s , "link" : [ %d ,%d ] }' % (json.dumps(e["cost"]), e["link"][0], e["link"][1])
    for e in some) + "\r\n ] }\n"
st, v2 = raw(pretty)
check("another layout: text, the same version", st == 200 and last_body() == "text" and
      v2.get("version") == v1.get("version"), f"{st} {last_body()} {v1.get('version')} {v2.get('version')}")
raw(json.dumps({"links": big}))
st, v3 = raw(json.dumps({"links": [dict(some[0], link=[str(some[0]["link"][0]), some[0]["link"][1]])] + some[1:]}))
check("a router by name: the JSON way, the same version", st == 200 and last_body() == "json" and
      v3.get("version") == v1.get("version"), f"{st} {last_body()} {v3}")
st, e = raw(json.dumps({"links": some}) + " x")
check("bytes after the value: 400 as before", st == 400 and "after its JSON value" in e.get("message", ""), f"{st} {e}")
st, e = raw(json.dumps({"links": some}), "?nope=1")
check("a query parameter: 400 naming it", st == 400 and "nope" in e.get("message", ""), f"{st} {e}")
st, e = raw('{"links": [{"link": [%d, %d], "cost": 5, "cost": 6}]}' % tuple(some[0]["link"]))
check("a key twice: the JSON way", st == 400 or last_body() == "json", f"{st} {e}")
st, e = raw('{"links": []}')
check("no entries: 400 as before", st == 400 and "non-empty" in e.get("message", ""), f"{st} {e}")
a3, b3 = some[1]["link"]
st, e = raw('{"links": [{"down": true, "link": [%d, %d]}]}' % (a3, b3))
check("a link down in the common form: text", st == 200 and e.get("links_changed") == 1 and
      last_body() == "text", f"{st} {e} {last_body()}")
r3 = get(f"/route?from={a3}&to={b3}")
check("the link down is not on the route between its ends", r3.get("path", [a3, b3]) != [a3, b3], str(r3)[:200])
print(f"PY {passed} {failed}")
PY
)
  echo "$out" | grep "^FAIL" || true
  read -r p f <<<"$(echo "$out" | awk '/^PY /{print $2, $3}')"
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1}))
  [ "$(grep -c 'event=cch_ready' "$tmp/log.on")" -ge 2 ] && grep -q "topology=reused" "$tmp/log.on" \
    && ok || bad "the patched version did not reuse the CCH topology"
  serve_stop "$pid"; pid=
fi
# a snapshot from `gpath import` carries the CCH order: serving it skips METIS
if "$BIN" import gen:12000:5 -o "$tmp/g.gpath" >"$tmp/import.json" 2>"$tmp/import.err"; then
  grep -q "CCH order" "$tmp/import.err" && ok || bad "import did not compute the CCH order" "$(cat "$tmp/import.err")"
  rm -f "$tmp/port"
  "$BIN" serve --graph "s=gpath:$tmp/g.gpath" --cch auto --cache_path "" --port 0 \
    --listen 127.0.0.1 --port-file "$tmp/port" --log_level info 2>"$tmp/log.snap" &
  pid=$!
  if port=$(serve_wait_ready "$tmp/port" "$pid"); then
    grep -q "event=cch_ready.*topology=reused" "$tmp/log.snap" && ok ||
      { bad "the snapshot's order was not used"; grep cch "$tmp/log.snap"; }
    a=$(curl -fsS "http://127.0.0.1:$port/v1/graphs/s/route?from=1&to=11000")
    b=$(curl -fsS "http://127.0.0.1:$port/v1/graphs/s/route?from=1&to=11000&algo=dijkstra")
    da=$(echo "$a" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["weight"])')
    db=$(echo "$b" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["weight"])')
    [ -n "$da" ] && [ "$da" = "$db" ] && ok || bad "snapshot route: cch $da, dijkstra $db"
  else
    bad "serve of the snapshot did not start"; cat "$tmp/log.snap"
  fi
  serve_stop "$pid"; pid=
else
  bad "gpath import gen:12000:5" "$(cat "$tmp/import.err")"
fi
if start off; then
  grep -q "event=cch_ready" "$tmp/log.off" && bad "cch_ready with --cch off" || ok
  serve_stop "$pid"; pid=
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
