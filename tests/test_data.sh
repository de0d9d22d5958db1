#!/usr/bin/env bash
# test_data.sh - `make data` (data/fetch.sh) without the internet: a small fixture manifest whose
# URLs point at python3 -m http.server on 127.0.0.1. Checks downloads verified by sha256 (a wrong
# first URL falls through to the next, a gzip transform), a corrupt or missing file reported by
# name with exit 1 and nothing half-written, a local copy used without any download, files already
# in place kept, no copy and no network ending within a minute, and that data/MANIFEST.tsv matches the local data copy ($GPATH_DATA, skipped when
# absent) file for file. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }
tmp=$(mktemp -d)
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# the publisher: files served over loopback HTTP
mkdir -p "$tmp/www/g1" "$tmp/www/mirror"
printf 'p sp 2 1\na 1 2 7\n' >"$tmp/www/g1/a.gr"
printf 'hello\n' >"$tmp/www/mirror/b.txt"
printf 'corrupted copy\n' >"$tmp/www/g1/b.txt"      # first URL of b: wrong bytes
seq 1 2000 >"$tmp/www/g1/c.txt"                      # served plain, kept gzipped
printf 'tampered\n' >"$tmp/www/g1/d.txt"
sha() { sha256sum "$1" | cut -d' ' -f1; }
printf 'hello\n' >"$tmp/b.expected"
seq 1 2000 | gzip -9 -n >"$tmp/c.expected"
printf 'the real d\n' >"$tmp/d.expected"
(cd "$tmp/www" && exec $PY -u -m http.server 0 --bind 127.0.0.1 >"$tmp/http.log" 2>&1) &
spid=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -nE 's/.*port ([0-9]+).*/\1/p' "$tmp/http.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
if [ -z "$port" ]; then
  bad "local HTTP server" "$(cat "$tmp/http.log")"; echo "$pass passed, $fail failed, $skip skipped"; exit 1
fi
U="http://127.0.0.1:$port"
{
  echo "# fixture manifest"
  printf 'g1/a.gr\t%s\t%s\t%s\t-\n' "$(stat -c %s "$tmp/www/g1/a.gr")" "$(sha "$tmp/www/g1/a.gr")" "$U/g1/a.gr"
  printf 'g1/b.txt\t6\t%s\t%s %s\t-\n' "$(sha "$tmp/b.expected")" "$U/g1/b.txt" "$U/mirror/b.txt"
  printf 'g2/c.txt.gz\t%s\t%s\t%s\tgzip\n' "$(stat -c %s "$tmp/c.expected")" "$(sha "$tmp/c.expected")" "$U/g1/c.txt"
  printf 'g2/d.txt\t11\t%s\t%s\t-\n' "$(sha "$tmp/d.expected")" "$U/g1/d.txt"
  printf 'g3/e.txt\t5\t%s\t%s\t-\n' "0000000000000000000000000000000000000000000000000000000000000000" "$U/g3/nope.txt"
  printf 'g3/made-here.tsv\t5\t%s\t-\t-\n' "1111111111111111111111111111111111111111111111111111111111111111"
} >"$tmp/M.tsv"

bash data/fetch.sh --manifest "$tmp/M.tsv" --dest "$tmp/out" --source "$tmp/nolocal" >"$tmp/log" 2>&1; rc=$?
[ $rc -eq 1 ] && ok "missing files: exit 1" || bad "missing files: exit 1" "exit $rc: $(cat "$tmp/log")"
cmp -s "$tmp/out/g1/a.gr" "$tmp/www/g1/a.gr" && ok "downloaded and verified" || bad "downloaded and verified" "$(cat "$tmp/log")"
cmp -s "$tmp/out/g1/b.txt" "$tmp/b.expected" && ok "a wrong first URL falls through to the next" || bad "fallback URL" "$(cat "$tmp/log")"
cmp -s "$tmp/out/g2/c.txt.gz" "$tmp/c.expected" && ok "gzip transform gives the manifest's bytes" || bad "gzip transform" "$(cat "$tmp/log")"
[ ! -e "$tmp/out/g2/d.txt" ] && grep -q "g2/d.txt: .*sha256 .* is not the manifest's" "$tmp/log" && ok "a corrupt download is reported and not kept" \
  || bad "corrupt download" "$(cat "$tmp/log")"
grep -q "g3/e.txt: .*404" "$tmp/log" && ok "a missing URL is reported by file" || bad "missing URL reported" "$(cat "$tmp/log")"
grep -q "g3/made-here.tsv: .*no public source" "$tmp/log" && ok "a local-only file is named as such" || bad "local-only file" "$(cat "$tmp/log")"
grep -q "^group g3: 2 file(s) missing" "$tmp/log" && grep -q "^group g2: 1 file(s) missing" "$tmp/log" && ok "missing groups summarised" \
  || bad "missing groups summarised" "$(cat "$tmp/log")"
[ -z "$(find "$tmp/out" -name '*.part')" ] && ok "no partial files left" || bad "no partial files left"

# a local copy is used without any download: the publisher is gone
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
mkdir -p "$tmp/local/g2" "$tmp/local/g3"
cp "$tmp/d.expected" "$tmp/local/g2/d.txt"
printf 'made\n' >"$tmp/local/g3/made-here.tsv"
sed -i "s/1111111111111111111111111111111111111111111111111111111111111111/$(sha "$tmp/local/g3/made-here.tsv")/" "$tmp/M.tsv"
sed -i '/^g3\/e.txt/d' "$tmp/M.tsv"
GPATH_DATA="$tmp/local" bash data/fetch.sh --manifest "$tmp/M.tsv" --dest "$tmp/out" >"$tmp/log" 2>&1; rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/out/g2/d.txt" "$tmp/d.expected" && grep -q "3 already in .* 2 copied from $tmp/local, 0 downloaded, 0 missing" "$tmp/log"; then
  ok "GPATH_DATA copy used without downloading; present files kept"
else bad "GPATH_DATA copy" "exit $rc: $(cat "$tmp/log")"; fi
printf 'x' >>"$tmp/out/g1/a.gr"
GPATH_DATA="$tmp/local" bash data/fetch.sh --manifest "$tmp/M.tsv" --dest "$tmp/out" --no-download >"$tmp/log" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "g1/a.gr: .*downloads disabled" "$tmp/log" && ok "a changed file is detected by its sha256" || bad "changed file detected" "exit $rc: $(cat "$tmp/log")"

# no copy and no network: every connection through a proxy that accepts and never answers (as a
# network that drops packets), the real manifest; it must end within a minute naming what is missing
($PY -u -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(256)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept())
' >"$tmp/hole.port" 2>/dev/null) &
hpid=$!
for _ in $(seq 1 100); do [ -s "$tmp/hole.port" ] && break; sleep 0.05; done
hole="http://127.0.0.1:$(cat "$tmp/hole.port")"
t0=$(date +%s)
env -u GPATH_DATA http_proxy="$hole" https_proxy="$hole" HTTPS_PROXY="$hole" ALL_PROXY="$hole" no_proxy= \
  timeout 60 bash data/fetch.sh --dest "$tmp/offline" --source "$tmp/nolocal" >"$tmp/log" 2>&1; rc=$?
dt=$(( $(date +%s) - t0 ))
kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null
nfiles=$(grep -cv '^\(#\|$\)' data/MANIFEST.tsv)
if [ $rc -eq 1 ] && grep -q "^data: no network: .*unreachable" "$tmp/log" &&
   grep -q "0 downloaded, $nfiles missing" "$tmp/log" && grep -q "osm/monaco.osm.pbf: " "$tmp/log"; then
  ok "no copy, no network: ends in ${dt}s (under 60) naming the $nfiles missing files"
else bad "no copy, no network: ends within a minute" "exit $rc after ${dt}s: $(head -c 3000 "$tmp/log")"; fi

# the real manifest matches the local copy of the data
if [ -d "$DATA" ]; then
  if $PY - data/MANIFEST.tsv "$DATA" <<'EOF'
import hashlib, os, sys
man, root = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(man) if l.strip() and not l.startswith("#")]
assert all(len(r) == 5 for r in rows), [r for r in rows if len(r) != 5][:3]
listed = {r[0] for r in rows}
# files inside the groups (data/ itself also holds the manifest and the scripts)
have = {os.path.relpath(os.path.join(d, n), root) for d, _, ns in os.walk(root) for n in ns if d != root}
assert listed == have, (sorted(have - listed)[:5], sorted(listed - have)[:5])
for path, size, sha, urls, tr in rows:
    b = open(os.path.join(root, path), "rb").read()
    assert len(b) == int(size), path
    assert hashlib.sha256(b).hexdigest() in sha.split("|"), path
    assert urls == "-" or all(u.startswith(("http://", "https://")) for u in urls.split()), path
    assert tr in ("-", "gzip"), path
EOF
  then ok "data/MANIFEST.tsv matches $DATA file for file (sizes, sha256)"
  else bad "data/MANIFEST.tsv matches the local data copy"; fi
else
  skipped "data/MANIFEST.tsv against the local data: $DATA absent (run \`make data\`)"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
