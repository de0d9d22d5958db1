#!/usr/bin/env bash
# test_cch_http.sh - the CCH through a real `gpath serve` over loopback: with --cch on, route AUTO
# (the CCH query), sssp (PHAST) and table (buckets, or RPHAST on a GPU) agree with route
# algo=dijkstra on random pairs of a generated graph; after PATCH .../links (new costs on links of a
# shortest path) the new version's CCH (topology reused from the cache: the log says so) agrees
# again; a snapshot written by `gpath import` carries the CCH order and serving it reuses it; with
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
  "$BIN" serve --graph g=gen:3000:4 --cch "$1" --cch_min_nodes 0 --cache_path "" --port 0 \
    --listen 127.0.0.1 --port-file "$tmp/port" --log_level info --operator-token op-token \
    2>"$tmp/log.$1" &
  pid=$!
  port=$(serve_wait_ready "$tmp/port" "$pid") || { bad "serve --cch $1 did not start"; cat "$tmp/log.$1"; return 1; }
}

if start on; then
  grep -q "event=cch_ready" "$tmp/log.on" && ok || bad "no cch_ready log line with --cch on"
  out=$(PORT=$port /usr/bin/python3 - <<'PY'
import json, os, random, urllib.request
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
