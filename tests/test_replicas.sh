#!/usr/bin/env bash
# test_replicas.sh - scaling out: two `gpath serve` replicas read one PostgreSQL graph, and a cost
# change committed in PostgreSQL reaches both through LISTEN/NOTIFY on the channel gpath_reload.
#
# A throwaway PostgreSQL cluster (initdb + pg_ctl in a temp dir, a free loopback port; run as the
# postgres user when this runs as root, since PostgreSQL refuses root) is set up with
# deploy/compose/initdb/10-sample-edges.sql, the same script compose.yaml's database runs: the
# pgRouting edge table `edges` and its trigger that sends NOTIFY gpath_reload, 'roads' on commit.
# The table is then filled with a 30x30 grid of random integer costs. Two replicas serve it as
#   --graph roads='postgresql://gpath@127.0.0.1:PORT/gis?table=edges'
# on ports of their own (--port 0 --port-file). Checked, with pgRouting's pgr_dijkstra in the same
# database as the oracle of every distance:
#   1. both replicas answer the route corner to corner with pgr_dijkstra's cost;
#   2. trigger: an UPDATE of costs is committed; both replicas answer the new cost within 1 s;
#   3. explicit NOTIFY: with the trigger disabled, a committed change alone is not picked up
#      (replicas keep serving the old version, so it is the notification that reloads), then
#      `NOTIFY gpath_reload, 'roads'` makes both answer the new cost within 1 s;
#   4. the replicas report the same graph version hash after each reload, no query sent to either
#      replica during the reloads fails, and both stop cleanly on SIGTERM.
# Skips, with the reason, while the binary has no PostgreSQL LISTEN support or PostgreSQL/pgRouting
# is not installed (deploy/install-deps.sh test installs postgresql and postgresql-15-pgrouting).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
bin=${GPATH_BIN:-$PWD/$BUILD/gpath}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
finish() { echo; echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }
skip_all() { skip=$((skip + 1)); echo "skip - $*"; finish; }

[ -x "$bin" ] || skip_all "no gpath binary at $bin (make all first)"
if ! nm "$bin" 2>/dev/null | grep -q ' T gp_pg_listen_start$'; then
  skip_all "$bin has no PostgreSQL LISTEN gpath_reload support linked in (gp_pg_listen_start)"
fi
ls /usr/share/postgresql/*/extension/pgrouting.control >/dev/null 2>&1 ||
  skip_all "pgRouting not installed (apt-get install postgresql-15-pgrouting), the distance oracle"
command -v curl >/dev/null || skip_all "curl not installed"

# shellcheck source=tests/pg_cluster.sh
. tests/pg_cluster.sh
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
tmp=$(mktemp -d)
chmod 711 "$tmp" # the cluster's directory inside must be reachable by the postgres user
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  pgc_stop -m immediate
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---- PostgreSQL (tests/pg_cluster.sh: initdb + pg_ctl, as the postgres user when root)
if ! pgc_start "$tmp/pg"; then
  case "${PGC_WHY:-}" in
    *"not found"*|*"no 'postgres' user"*) skip_all "$PGC_WHY" ;;
    *) bad "PostgreSQL: ${PGC_WHY:-pgc_start failed}"; finish ;;
  esac
fi
pgc_psql postgres -c 'CREATE DATABASE gis' >/dev/null || { bad "createdb"; finish; }
if pgc_psql gis -f deploy/compose/initdb/10-sample-edges.sql >"$tmp/init.log" 2>&1; then
  ok "deploy/compose/initdb/10-sample-edges.sql sets up edges, pgRouting and the NOTIFY trigger"
else
  bad "10-sample-edges.sql"; cat "$tmp/init.log"; finish
fi
# A 30x30 grid, both directions, random integer costs 1..100 (seeded: the same grid every run).
N=30
pgc_psql gis >/dev/null <<SQL || { bad "filling the grid"; finish; }
BEGIN;
TRUNCATE edges;
SELECT setseed(0.42);
INSERT INTO edges (id, source, target, cost, reverse_cost)
SELECT row_number() OVER (), a, b, c, r FROM (
  SELECT r * $N + c0 + 1 AS a, r * $N + c0 + 2 AS b, 1 + floor(random() * 100) AS c,
         1 + floor(random() * 100) AS r
    FROM generate_series(0, $N - 1) r, generate_series(0, $N - 2) c0
  UNION ALL
  SELECT r * $N + c0 + 1, (r + 1) * $N + c0 + 1, 1 + floor(random() * 100), 1 + floor(random() * 100)
    FROM generate_series(0, $N - 2) r, generate_series(0, $N - 1) c0) g;
COMMIT;
SQL
src=1 dst=$((N * N))
oracle() { # pgr_dijkstra's cost from $src to $dst on the committed table
  pgc_psql gis -At -c "SELECT agg_cost FROM pgr_dijkstra(
    'SELECT id, source, target, cost, reverse_cost FROM edges', $src, $dst) WHERE edge = -1"
}
d0=$(oracle)
[ -n "$d0" ] || { bad "pgr_dijkstra found no route $src -> $dst"; finish; }

# ---- two replicas
uri="$PGC_URI/gis?table=edges"
for i in 1 2; do
  mkdir -p "$tmp/r$i"
  (cd "$tmp/r$i" && exec env -u GPATH_CONFIG -u GPATH_GRAPHS GPATH_BACKEND=cpu \
    "$bin" serve --listen 127.0.0.1 --port 0 --port-file "$tmp/r$i/port" \
    --graph "roads=$uri" --cache-path "$tmp/r$i/cache.sqlite" --log-level warn \
    >"$tmp/r$i/log" 2>&1) &
  pids+=($!)
done
ports=()
for i in 1 2; do
  if port=$(serve_wait_ready "$tmp/r$i/port" "${pids[$((i - 1))]}"); then
    ports+=("$port")
  else
    bad "replica $i did not become ready"; tail -20 "$tmp/r$i/log"; finish
  fi
done
ok "two replicas ready on ports ${ports[*]}, both serving roads from PostgreSQL"

# wait_for EXPECTED TIMEOUT_S [MIN_WAIT_S]: polls route src->dst on both replicas every 10 ms until
# both answer EXPECTED; prints the seconds it took and each replica's graph version, fails after
# TIMEOUT_S. With MIN_WAIT_S, instead asserts both keep answering EXPECTED for that long.
wait_for() {
  $PY - "$1" "$2" "${3:-0}" "$src" "$dst" "${ports[@]}" <<'PY'
import json, sys, time, urllib.request
want, timeout, hold, src, dst = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
ports = sys.argv[6:]
def ask(port):
    url = f'http://127.0.0.1:{port}/v1/graphs/roads/route?from={src}&to={dst}'
    with urllib.request.urlopen(url, timeout=2) as r:
        o = json.load(r)
    return float(o['weight']), o.get('version')
t0 = time.monotonic()
while True:
    got = [ask(p) for p in ports]
    el = time.monotonic() - t0
    same = all(abs(d - want) <= 1e-6 * max(1.0, abs(want)) for d, _ in got)
    if hold:
        if not same:
            print(f'changed after {el:.3f} s: {got}'); sys.exit(1)
        if el >= hold:
            print(f'{el:.3f} ' + ' '.join(str(v) for _, v in got)); sys.exit(0)
    elif same:
        print(f'{el:.3f} ' + ' '.join(str(v) for _, v in got)); sys.exit(0)
    elif el > timeout:
        print(f'timeout after {el:.3f} s: want {want}, got {got}'); sys.exit(1)
    time.sleep(0.01)
PY
}
same_version() { # "SECONDS V1 V2" -> both versions equal and non-empty
  set -- $1
  [ -n "${2:-}" ] && [ "$2" != None ] && [ "$2" = "${3:-}" ]
}

if r=$(wait_for "$d0" 0); then ok "both replicas answer $src -> $dst = $d0 (pgr_dijkstra)"
else bad "initial route: $r"; finish; fi
same_version "$r" && ok "replicas serve the same graph version ($(echo "$r" | cut -d' ' -f2))" ||
  bad "replicas' versions differ: $r"
v0=$(echo "$r" | cut -d' ' -f2)

# A client queries both replicas back to back through both reloads below: none may fail (each
# replica builds the new graph beside the old one and swaps it in).
$PY - "$tmp/client.stop" "$tmp/client.out" "$src" "$dst" "${ports[@]}" <<'PY' &
import json, os, sys, urllib.request
stop, out, src, dst, ports = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
n = bad = 0
why = ''
while not os.path.exists(stop):
    for p in ports:
        n += 1
        try:
            with urllib.request.urlopen(
                    f'http://127.0.0.1:{p}/v1/graphs/roads/route?from={src}&to={dst}', timeout=5) as r:
                float(json.load(r)['weight'])
        except Exception as e:  # any HTTP error, timeout or malformed answer
            bad += 1
            why = why or f'{p}: {e}'
open(out, 'w').write(f'{n} {bad} {why}\n')
PY
client_pid=$!
pids+=("$client_pid") # killed by cleanup should the test end early

# ---- 2. the table's trigger: commit a cost change, nothing else
pgc_psql gis -c "UPDATE edges SET cost = cost * 3, reverse_cost = reverse_cost * 3 WHERE id % 3 = 0" \
  >/dev/null
d1=$(oracle)
if [ "$d1" = "$d0" ]; then bad "the cost change did not change pgr_dijkstra's answer ($d0)"; finish; fi
if r=$(wait_for "$d1" 1.0); then
  ok "trigger NOTIFY: both replicas answer the new cost $d1 within 1 s (took ${r%% *} s)"
  if same_version "$r" && [ "$(echo "$r" | cut -d' ' -f2)" != "$v0" ]; then
    ok "replicas agree on the reloaded version, a new one"
  else
    bad "versions after the reload: $r (before: $v0)"
  fi
else
  bad "trigger NOTIFY: $r"
fi

# ---- 3. explicit NOTIFY
pgc_psql gis -c "ALTER TABLE edges DISABLE TRIGGER edges_notify_gpath" >/dev/null
pgc_psql gis -c "UPDATE edges SET cost = cost + 7 WHERE source % 2 = 0" >/dev/null
d2=$(oracle)
if [ "$d2" = "$d1" ]; then bad "the second change did not change pgr_dijkstra's answer"; finish; fi
if r=$(wait_for "$d1" 0 0.5); then
  ok "without NOTIFY the replicas keep serving the old version ($d1) for 0.5 s"
else
  bad "replicas changed without a NOTIFY: $r"
fi
pgc_psql gis -c "NOTIFY gpath_reload, 'roads'" >/dev/null
if r=$(wait_for "$d2" 1.0); then
  ok "NOTIFY gpath_reload, 'roads': both replicas answer the new cost $d2 within 1 s (took ${r%% *} s)"
  same_version "$r" && ok "replicas agree on the reloaded version" || bad "versions differ: $r"
else
  bad "explicit NOTIFY: $r"
fi

touch "$tmp/client.stop"
wait "$client_pid"
read -r nreq nbad why <"$tmp/client.out"
if [ "${nreq:-0}" -gt 0 ] && [ "${nbad:-1}" -eq 0 ]; then
  ok "$nreq queries on both replicas during the reloads, none failed"
else
  bad "queries during the reloads: ${nbad:-?} of ${nreq:-?} failed: $why"
fi

# Every replica still healthy, none restarted; then SIGTERM (a pod's termination) stops each cleanly,
# its LISTEN connection included.
for i in 1 2; do
  pid=${pids[$((i - 1))]}
  if kill -0 "$pid" 2>/dev/null && curl -fsS "http://127.0.0.1:${ports[$((i - 1))]}/health" >/dev/null; then
    ok "replica $i healthy after the reloads"
  else
    bad "replica $i is gone or unhealthy"; tail -20 "$tmp/r$i/log"; continue
  fi
  serve_stop "$pid"; rc=$SERVE_RC
  if [ "$rc" = 0 ]; then ok "replica $i exits 0 on SIGTERM"
  else bad "replica $i on SIGTERM: exit status '${rc:-still running after 20 s}'"; tail -20 "$tmp/r$i/log"; fi
done
finish
