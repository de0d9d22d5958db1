#!/usr/bin/env bash
# test_cache_files.sh - the matrix cache's three files (c.sqlite, -wal, -shm) changed under a
# running `gpath serve` (a cleanup job, a restore, a full or read-only volume): the -shm file
# truncated to 0 bytes; all three truncated; made read-only (and the folder); deleted. After each,
# the same tables are asked again and a new one stored: the server must keep answering (no SIGBUS,
# exit 135), with the same answers as before; the cache may turn into misses. (chmod binds only
# new opens, and root ignores it: "readonly" checks that nothing breaks, not a write refused.) Also checks that the
# process maps no -shm file (storage/cache.c keeps the WAL index in its own memory).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/${BUILD:-build}/gpath}
pass=0 fail=0 skip=0
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
if [ ! -x "$BIN" ]; then
  echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1
fi

table() { # table N: the body and status of POST /table for the N-th fixed request
  local body
  case $1 in
    1) body='{"sources": [1, 5, 17, 300], "targets": [2, 99, 1500, 2000]}' ;;
    2) body='{"sources": [7, 8, 9], "targets": [10, 11, 12, 13, 14]}' ;;
    *) body="{\"sources\": [$1, 2, 3], \"targets\": [4, 5, 6]}" ;;
  esac
  curl -s -m 30 -w ' %{http_code}' -X POST -H 'Content-Type: application/json' -d "$body" \
    "http://127.0.0.1:$port/v1/graphs/g/table"
}

# run_case NAME DAMAGE-COMMAND: a fresh server and cache, two tables stored, the damage, then the
# same two tables (equal answers), a third one (a store after the damage), and /health.
run_case() {
  local name=$1 damage=$2 dir="$tmp/$1"
  mkdir -p "$dir"
  "$BIN" serve --listen 127.0.0.1 --port 0 --port-file "$dir/port" --graph g=gen:2000 \
    --backend cpu --cache-path "$dir/c.sqlite" --log-level info >"$dir/serve.log" 2>&1 &
  pid=$!
  if ! port=$(serve_wait_ready "$dir/port" "$pid"); then
    bad "$name: serve did not get ready: $(tail -3 "$dir/serve.log")"; kill -KILL "$pid"; pid=; return
  fi
  local a1 a2 b1 b2 c3
  a1=$(table 1); a2=$(table 2)
  case "$a1$a2" in *' 200'*' 200') ;; *) bad "$name: tables before: $a1 / $a2"; kill -KILL "$pid"; pid=; return ;; esac
  if [ "$name" = shm0 ]; then # once: no mapping of the -shm file (nor any file of the cache)
    if grep -q 'c\.sqlite' "/proc/$pid/maps"; then
      bad "the server maps a cache file: $(grep 'c\.sqlite' "/proc/$pid/maps" | awk '{print $6}' | sort -u | tr '\n' ' ')"
    else ok "no cache file (c.sqlite, -wal, -shm) is memory-mapped by the server"; fi
  fi
  (cd "$dir" && eval "$damage")
  b1=$(table 1); b2=$(table 2); c3=$(table 3)
  if [ "$b1" = "$a1" ] && [ "$b2" = "$a2" ]; then ok "$name: the same table answers after the damage"
  else bad "$name: answers changed: '$a1' -> '$b1'; '$a2' -> '$b2'"; fi
  case "$c3" in *' 200') ok "$name: a new table answered (stored or not) after the damage" ;;
    *) bad "$name: new table: '$c3'" ;; esac
  b1=$(table 1)
  if [ "$b1" = "$a1" ] && kill -0 "$pid" 2>/dev/null && curl -fsS -m 10 "http://127.0.0.1:$port/health" >/dev/null; then
    ok "$name: the server is still up and still answers the first table"
  else
    wait "$pid" 2>/dev/null; bad "$name: the server died or answers differ (exit $?): $(tail -3 "$dir/serve.log")"; pid=; return
  fi
  serve_stop "$pid"
  if [ "$SERVE_RC" = 0 ]; then ok "$name: clean stop"; else bad "$name: stop exit status '$SERVE_RC'"; fi
  pid=
}

run_case shm0 'truncate -s 0 c.sqlite-shm 2>/dev/null || : >c.sqlite-shm'
run_case all0 'for f in c.sqlite c.sqlite-wal c.sqlite-shm; do : >"$f"; done'
run_case readonly 'chmod a-w c.sqlite*; chmod a-w .'
run_case deleted 'rm -f c.sqlite c.sqlite-wal c.sqlite-shm'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
