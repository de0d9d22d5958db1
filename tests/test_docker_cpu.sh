#!/usr/bin/env bash
# test_docker_cpu.sh - the image without `docker run --gpus`: runs gpath the way the Dockerfile's
# runtime stage does (its ENTRYPOINT and CMD, its ENV with the cache path moved to a temp dir,
# backend left at auto) on this machine. Without a usable GPU (no --gpus: no libcuda.so.1 in the
# container) it must fall back to the CPU quietly: ready with the built-in graph, /health "ok" on
# backend cpu, a route answered, one info line saying why ("no NVIDIA GPU found" when the CUDA
# backend is compiled in) and no warning, error or driver-version complaint. On a machine with a
# GPU the CPU checks skip. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/build/gpath}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }
skipped() { skip=$((skip + 1)); echo "SKIP $1"; }
tmp=$(mktemp -d)
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
if [ ! -x "$BIN" ]; then echo "gpath binary $BIN not built"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi

# The runtime stage's ENV (NAME=VALUE pairs) and ENTRYPOINT + CMD (exec form), as JSON.
$PY - Dockerfile >"$tmp/image.json" <<'EOF'
import json, re, shlex, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
stages = re.split(r"(?m)^FROM ", text)
rt = stages[-1]
env, entry, cmd = {}, [], []
for line in rt.splitlines():
    line = line.strip()
    if line.startswith("ENV "):
        for tok in shlex.split(line[4:]):
            k, _, v = tok.partition("=")
            env[k] = v
    elif line.startswith("ENTRYPOINT "):
        entry = json.loads(line[len("ENTRYPOINT "):])
    elif line.startswith("CMD ") and line[4:].lstrip().startswith("["):
        cmd = json.loads(line[4:])
json.dump({"env": env, "argv": entry + cmd}, sys.stdout)
EOF
if $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["argv"][:2] == ["/opt/gpath/bin/gpath", "serve"] and "GPATH_BACKEND" not in d["env"] else 1)' "$tmp/image.json"; then
  ok "the image runs gpath serve with backend auto (no GPATH_BACKEND)"
else bad "the image's entrypoint" "$(cat "$tmp/image.json")"; fi
mapfile -t envs < <($PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k, v in d["env"].items():
    if k == "PATH": continue
    if k == "GPATH_CACHE_PATH": v = sys.argv[2] + "/cache/gpath-cache.sqlite"  # the cache volume
    print(f"{k}={v}")' "$tmp/image.json" "$tmp")
mapfile -t argv < <($PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[2]); [print(a) for a in d["argv"][1:]]' "$tmp/image.json" "$BIN")
mkdir -p "$tmp/cache"
(cd "$tmp/cache" && exec env -u GPATH_CONFIG -u GPATH_GRAPHS -u GPATH_BACKEND -u GPATH_LOG_LEVEL "${envs[@]}" \
   "${argv[@]}" --port 0 --port-file "$tmp/port" --listen 127.0.0.1 >"$tmp/serve.log" 2>&1) &
spid=$!
if port=$(serve_wait_ready "$tmp/port" "$spid"); then
  ok "ready with the built-in graph (the image's defaults)"
  curl -s "http://127.0.0.1:$port/health" >"$tmp/health.json"
  backend=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["backend"])' "$tmp/health.json")
  if [ "$backend" = cuda ]; then
    skipped "CPU fallback: this machine has a usable GPU"
  else
    $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["status"] == "ok" and d["backend"] == "cpu" else 1)' "$tmp/health.json" \
      && ok "/health: status ok on backend cpu" || bad "/health on the CPU" "$(cat "$tmp/health.json")"
    curl -fsS "http://127.0.0.1:$port/v1/graphs/default/route?from=1&to=5000" >/dev/null \
      && ok "a route answered on the CPU" || bad "a route answered on the CPU"
    line=$(grep 'event=engine ' "$tmp/serve.log")
    if "$BIN" --version | grep -q 'cuda and cpu'; then
      case "$line" in *'backend=cpu reason="no NVIDIA GPU found'*) ok "start-up line: no NVIDIA GPU found" ;;
        *) bad "start-up line: no NVIDIA GPU found" "$line" ;; esac
    else
      case "$line" in *'backend=cpu reason="this gpath was built without CUDA'*) ok "start-up line names the CPU-only build" ;;
        *) bad "start-up line names the CPU-only build" "$line" ;; esac
    fi
    if grep -qiE 'level=(warn|error)|insufficient|driver version' "$tmp/serve.log"; then
      bad "quiet fallback: no warning, error or driver complaint" "$(grep -iE 'level=(warn|error)|insufficient|driver version' "$tmp/serve.log" | head -3)"
    else ok "quiet fallback: no warning, error or driver complaint"; fi
  fi
  serve_stop "$spid"; spid=
  [ "${SERVE_RC:-x}" = 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit ${SERVE_RC:-still running}"
else
  bad "gpath did not become ready as the image runs it" "$(tail -5 "$tmp/serve.log")"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
