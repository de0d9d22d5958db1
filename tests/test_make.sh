#!/usr/bin/env bash
# test_make.sh - what `make` and `make run` do for a newcomer, read from `make -n` (nothing is
# built or installed): `make` alone builds the web assets and everything else; `make run` builds in
# parallel and serves on loopback with no cross-origin callers unless told (RUN_LISTEN, RUN_CORS);
# and the real `gpath serve` prints the address to open once its graphs are in.
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BUILD:-build}/gpath
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

make -n >"$tmp/default" 2>&1
if grep -q "web/fetch-assets.sh" "$tmp/default" && grep -q "web/bundle-map.sh" "$tmp/default" &&
   grep -q "make --no-print-directory all" "$tmp/default"; then
  ok "make alone builds the web assets, then all"
else bad "make alone builds the web assets, then all" "$(head -20 "$tmp/default")"; fi

make -n run BUILD="${BUILD:-build}" >"$tmp/run" 2>&1
if grep -qE "^make --no-print-directory -j[0-9]+ .*gpath$" "$tmp/run"; then ok "make run builds in parallel"
else bad "make run builds in parallel" "$(cat "$tmp/run")"; fi
if grep -q "gpath serve --listen '127.0.0.1' --cors-origins ''" "$tmp/run"; then
  ok "make run serves on 127.0.0.1 with CORS closed"
else bad "make run serves on 127.0.0.1 with CORS closed" "$(cat "$tmp/run")"; fi
make -n run RUN_LISTEN=0.0.0.0 RUN_CORS='*' ARGS="--port 9000" >"$tmp/run2" 2>&1
if grep -q "gpath serve --listen '0.0.0.0' --cors-origins '\*' --port 9000" "$tmp/run2"; then
  ok "RUN_LISTEN, RUN_CORS and ARGS are passed"
else bad "RUN_LISTEN, RUN_CORS and ARGS are passed" "$(cat "$tmp/run2")"; fi

if [ -x "$BIN" ]; then
  "$BIN" serve --listen 127.0.0.1 --port 0 --port-file "$tmp/port" --graph g=gen:100 \
    --cache-path "" >"$tmp/log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do grep -q "serving on" "$tmp/log" && break; sleep 0.05; done
  port=$(cat "$tmp/port" 2>/dev/null)
  if [ -n "$port" ] && grep -q "^gpath: serving on http://127.0.0.1:$port/ " "$tmp/log"; then
    ok "serve prints the address to open"
  else bad "serve prints the address to open" "$(tail -5 "$tmp/log")"; fi
  kill "$pid"; wait "$pid" 2>/dev/null; pid=
else
  bad "serve prints the address to open" "$BIN is not built"
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
