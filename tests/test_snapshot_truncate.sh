#!/usr/bin/env bash
# test_snapshot_truncate.sh - a .gpath snapshot truncated, then overwritten with zeros, under a
# running `gpath serve` (graph/snapshot.c reads the file into private memory, so nothing of the
# graph is backed by the file any more): the server keeps answering routes on it, with the same
# answers as before, and its process does not die (a file mapping would fault with SIGBUS here).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}
pass=0 fail=0 skip=0
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
if [ ! -x "$BIN" ]; then
  echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

# a graph of a few MB, so that most of it lies past the truncation point
if "$BIN" import --graph gen:100000 -o "$tmp/g.gpath" >"$tmp/import.log" 2>&1; then
  ok "import gen:100000 to a snapshot ($(stat -c %s "$tmp/g.gpath") bytes)"
else
  bad "import: $(tail -3 "$tmp/import.log")"; echo "$pass passed, $fail failed, $skip skipped"; exit 1
fi
"$BIN" serve --listen 127.0.0.1 --port 0 --port-file "$tmp/port" --graph "s=gpath:$tmp/g.gpath" \
  --cache-path "" >"$tmp/serve.log" 2>&1 &
pid=$!
if ! port=$(serve_wait_ready "$tmp/port" "$pid"); then
  bad "serve did not get ready: $(tail -3 "$tmp/serve.log")"; echo "$pass passed, $fail failed, $skip skipped"; exit 1
fi
routes() { # the answers of a fixed set of routes, one per line (status and body)
  for pair in "1 100000" "5000 77777" "99999 2" "42 4242" "31337 271"; do
    set -- $pair
    curl -s -w ' %{http_code}\n' "http://127.0.0.1:$port/v1/graphs/s/route?from=$1&to=$2"
  done
}
before=$(routes)
if [ "$(grep -c ' 200$' <<<"$before")" = 5 ]; then ok "5 routes before"; else bad "routes before: $before"; fi
truncate -s 4096 "$tmp/g.gpath"
after=$(routes)
if [ "$after" = "$before" ]; then ok "the same 5 answers after truncating the file to 4 KiB"
else bad "after truncation: $after"; fi
truncate -s 0 "$tmp/g.gpath"
dd if=/dev/zero of="$tmp/g.gpath" bs=1M count=4 conv=notrunc status=none
after=$(routes)
if [ "$after" = "$before" ]; then ok "the same 5 answers after emptying it and writing zeros"
else bad "after rewriting: $after"; fi
if kill -0 "$pid" 2>/dev/null && curl -fsS "http://127.0.0.1:$port/health" >/dev/null; then
  ok "the server is still up"
else
  bad "the server died: $(tail -5 "$tmp/serve.log")"
fi
serve_stop "$pid"
if [ "$SERVE_RC" = 0 ]; then ok "clean stop"; else bad "stop exit status '$SERVE_RC'"; fi
pid=
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
