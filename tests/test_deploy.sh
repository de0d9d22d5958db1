#!/usr/bin/env bash
# test_deploy.sh - checks the deployment files without a Docker engine or a cluster (CI has neither):
#   1. tests/check_deploy.py: the documented structural and cross-file checks of the Dockerfile,
#      deploy/kubernetes, deploy/compose.yaml, deploy/systemd and docs/deployment.md (python3-yaml);
#   2. schema-aware linters from the npm registry, pinned in deploy/lint/package-lock.json and
#      installed once into a cache outside the checkout: dockerfile-utils (Dockerfile), the
#      Kubernetes OpenAPI schemas of kubernetes-models (every manifest) and dclint (compose.yaml);
#      skipped with a message when npm or the registry is unreachable;
#   3. yamllint (duplicate keys, indentation, style) of the manifests and compose.yaml;
#      systemd-analyze verify and its offline security score on gpath.service; shellcheck of
#      gpath-reload.sh;
#   4. deploy/build.sh, the Dockerfile's build stage, run outside Docker on exactly the files of the
#      image's build context (.dockerignore applied) beside a copy of the already-built $BUILD (so
#      make has nothing to recompile, yet checks every source and header) into a temporary prefix;
#   5. the installed binary started as the image starts it (`gpath serve`, nothing configured):
#      the HEALTHCHECK command, /ready, gpath-reload.sh (systemd's ExecReload) against its admin
#      endpoint, and SIGTERM (docker stop / pod termination) ending it cleanly.
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
BUILD=${BUILD:-build}
PY=/usr/bin/python3
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
skipped() { skip=$((skip + 1)); echo "skip - $*"; }
tally() { # counts the "ok - " / "not ok - " lines of a checker's output file
  local p f
  p=$(grep -c '^ok - ' "$1"); f=$(grep -c '^not ok - ' "$1")
  pass=$((pass + p)); fail=$((fail + f))
  grep -E '^(not ok - |skip - )' "$1" || true
  echo "  ($2: $p ok, $f not ok)"
}
tmp=$(mktemp -d)
srv_pid=
cleanup() {
  if [ -n "$srv_pid" ]; then kill -KILL "$srv_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

bin="$PWD/$BUILD/gpath"
have_bin=0
web_built=0  # step 4 sets it when the build has the web assets
if [ -x "$bin" ] && "$bin" serve --help >/dev/null 2>&1; then have_bin=1; fi

# ---- 1. structural checks
args=()
if [ $have_bin -eq 1 ]; then
  "$bin" serve --print-config >"$tmp/known.conf" 2>/dev/null && args+=(--known-keys "$tmp/known.conf")
  args+=(--binary "$bin")
fi
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ -n "$nvcc" ]; then
  v=$("$nvcc" --version | sed -nE 's/.*release ([0-9]+\.[0-9]+).*/\1/p')
  [ -n "$v" ] && args+=(--nvcc-version "$v")
fi
if $PY -c 'import yaml' 2>/dev/null; then
  $PY tests/check_deploy.py "${args[@]}" >"$tmp/check.log" 2>&1
  rc=$?
  tally "$tmp/check.log" check_deploy.py
  if [ $rc -ne 0 ] && ! grep -q '^not ok' "$tmp/check.log"; then
    bad "check_deploy.py exited $rc"; cat "$tmp/check.log"
  fi
else
  bad "check_deploy.py needs python3-yaml (deploy/install-deps.sh test installs it)"
fi

# ---- 1b. the binary itself accepts the shipped configuration (`serve --help` returns only after
# the config file and the GPATH_* environment parsed)
if [ $have_bin -eq 1 ] && $PY -c 'import yaml' 2>/dev/null; then
  $PY - "$tmp" <<'PY'
import sys, yaml
tmp = sys.argv[1]
docs = {d['kind']: d for f in ('configmap', 'secret') for d in
        yaml.safe_load_all(open(f'deploy/kubernetes/{f}.yaml')) if d}
open(f'{tmp}/k8s.conf', 'w').write(docs['ConfigMap']['data']['gpath.conf'])
s = docs['Secret']['stringData']
open(f'{tmp}/k8s.env', 'w').write(f"GPATH_GRAPHS={s['graphs']}\nGPATH_ADMIN_TOKEN={s['admin-token']}\n")
env = yaml.safe_load(open('deploy/compose.yaml'))['services']['gpath']['environment']
open(f'{tmp}/compose.env', 'w').write(''.join(
    f"{k}={v.replace('${POSTGRES_PASSWORD}', 'pw').split('${')[0] or 'x'}\n" for k, v in env.items()))
PY
  # env_run FILE CMD...: runs CMD with the KEY=VALUE lines of FILE in its environment
  env_run() { local f=$1; shift; local -a kv; mapfile -t kv < <(grep -E '^[A-Z_]+=' "$f"); env "${kv[@]}" "$@"; }
  for what in "k8s ConfigMap gpath.conf|--config $tmp/k8s.conf|/dev/null" \
              "k8s Secret env (GPATH_GRAPHS, GPATH_ADMIN_TOKEN)||$tmp/k8s.env" \
              "compose gpath environment||$tmp/compose.env" \
              "systemd gpath.env.example||deploy/systemd/gpath.env.example"; do
    IFS='|' read -r name flags envf <<<"$what"
    # shellcheck disable=SC2086 # flags is a word list on purpose
    if out=$(env_run "$envf" "$bin" serve $flags --help 2>&1 >/dev/null); then
      ok "gpath serve accepts the $name"
    else
      bad "gpath serve rejects the $name: $out"
    fi
  done
fi

# ---- 2. schema-aware linters (npm)
lock_sum=$(sha256sum deploy/lint/package-lock.json deploy/lint/package.json | sha256sum | cut -c1-16)
lint_dir="${GPATH_LINT_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpath-deploy-lint}/$lock_sum"
lint_ok=0
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  skipped "npm linters: node/npm not installed (the structural checks above still ran)"
  skipped "dclint compose.yaml: node/npm not installed"
else
  if [ ! -f "$lint_dir/.installed" ]; then
    mkdir -p "$lint_dir"
    cp deploy/lint/package.json deploy/lint/package-lock.json "$lint_dir/"
    if (cd "$lint_dir" && timeout 120 npm ci --no-audit --no-fund --loglevel=error \
      --fetch-timeout=20000 --fetch-retries=1) \
      >"$tmp/npm.log" 2>&1; then
      touch "$lint_dir/.installed"
    else
      echo "npm ci failed:"; tail -5 "$tmp/npm.log"
    fi
  fi
  if [ -f "$lint_dir/.installed" ]; then lint_ok=1; fi
  if [ $lint_ok -eq 1 ]; then
    NODE_PATH="$lint_dir/node_modules" node deploy/lint/validate.js dockerfile Dockerfile \
      >"$tmp/lint.log" 2>&1
    NODE_PATH="$lint_dir/node_modules" node deploy/lint/validate.js kubernetes \
      deploy/kubernetes/*.yaml >>"$tmp/lint.log" 2>&1
    tally "$tmp/lint.log" "dockerfile-utils + kubernetes-models"
    if "$lint_dir/node_modules/.bin/dclint" --color=false --max-warnings 0 deploy/compose.yaml \
      >"$tmp/dclint.log" 2>&1; then
      ok "dclint deploy/compose.yaml (Compose Specification schema + rules, no warnings)"
    else
      bad "dclint deploy/compose.yaml"; cat "$tmp/dclint.log"
    fi
  else
    skipped "npm linters: could not install deploy/lint's packages (registry unreachable?)"
    skipped "dclint compose.yaml: could not install it"
  fi
fi

# ---- 3. YAML style and duplicate keys (yamllint, Debian), systemd, shell
if command -v yamllint >/dev/null; then
  if yamllint -s -f parsable -c deploy/yamllint.yaml deploy/kubernetes deploy/compose.yaml \
    >"$tmp/yl.log" 2>&1; then ok "yamllint deploy/kubernetes deploy/compose.yaml"
  else bad "yamllint"; cat "$tmp/yl.log"; fi
else
  skipped "yamllint not installed (deploy/install-deps.sh test installs it)"
fi
if command -v shellcheck >/dev/null; then
  if shellcheck -S warning deploy/systemd/gpath-reload.sh deploy/build.sh tests/test_replicas.sh \
    >"$tmp/sc.log" 2>&1; then ok "shellcheck gpath-reload.sh build.sh test_replicas.sh"
  else bad "shellcheck"; cat "$tmp/sc.log"; fi
else
  skipped "shellcheck not installed"
fi
if command -v systemd-analyze >/dev/null; then
  # verify insists that the executables exist: point them at this checkout's.
  mkdir -p "$tmp/unit"
  exe=$bin; [ $have_bin -eq 1 ] || exe=/bin/true
  sed -e "s#^ExecStart=/usr/local/bin/gpath #ExecStart=$exe #" \
      -e "s#^ExecReload=/usr/local/bin/gpath-reload#ExecReload=$PWD/deploy/systemd/gpath-reload.sh#" \
      deploy/systemd/gpath.service >"$tmp/unit/gpath.service"
  out=$(systemd-analyze verify "$tmp/unit/gpath.service" 2>&1)
  rc=$?
  # Newer syscall names unknown to an older systemd's table are not the unit's fault.
  out=$(echo "$out" | grep -v 'Failed to parse system call, ignoring' | grep -v '^$' || true)
  if [ $rc -eq 0 ] && [ -z "$out" ]; then ok "systemd-analyze verify gpath.service"
  else bad "systemd-analyze verify gpath.service: $out"; fi
  sec=$(systemd-analyze security --offline=yes "$tmp/unit/gpath.service" 2>/dev/null |
    sed -nE 's/.*Overall exposure level for gpath.service: ([0-9.]+).*/\1/p')
  if [ -z "$sec" ]; then
    skipped "systemd-analyze security --offline unsupported by this systemd"
  elif awk -v s="$sec" 'BEGIN { exit !(s <= 3.0) }'; then
    ok "systemd-analyze security: exposure $sec (<= 3.0)"
  else
    bad "systemd-analyze security: exposure $sec > 3.0"
  fi
else
  skipped "systemd-analyze not installed"
fi

# ---- 4. deploy/build.sh outside Docker, on exactly the files the image's build context holds
if [ $have_bin -eq 1 ] && command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1; then
  # The context: the checkout's files (tracked and untracked-but-not-ignored, as `docker build .`
  # would send them) less what .dockerignore drops, with their timestamps.
  ctx="$tmp/ctx"
  mkdir -p "$ctx"
  git ls-files -co --exclude-standard | $PY tests/check_deploy.py --docker-context |
    while IFS= read -r f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 -r cp -a --parents -t "$ctx"
  # Beside it, a copy of $BUILD under the same relative name (its .d files then name the context's
  # sources and headers, so make really checks that the context holds everything the build reads)
  # with timestamps kept: make finds everything up to date and the whole script runs in seconds:
  # deps check, make, CUDA check, install, verify. The test and bench programs are left out.
  case "$BUILD" in /*) bdir=build-ctx ;; *) bdir=$BUILD ;; esac
  mkdir -p "$ctx/$bdir"
  tar -C "$BUILD" --exclude=./tests --exclude=./bench -cf - . | tar -C "$ctx/$bdir" -xf -
  bs_args=(--build "$bdir" --prefix "$tmp/prefix")
  if ls "$BUILD"/kernels/*.o >/dev/null 2>&1; then bs_args+=(--require-cuda)
  else export NVCC=; fi
  # The web step as the image runs it, when this build has the assets (make web ran): from the
  # npm cache the checkout's build filled, so offline; the installed binary then serves / and /docs.
  if [ -s "$BUILD/web/map/vendor.js" ] && [ -s "$BUILD/web/dist/swagger-ui-bundle.js" ]; then
    bs_args+=(--require-web); web_built=1
  else bs_args+=(--skip-web); fi
  # A sanitizer build (make asan): should anything be stale, relink it with the sanitizers too.
  if readelf -d "$bin" 2>/dev/null | grep -q 'libasan'; then
    export SAN="-fsanitize=address,undefined"
  fi
  if (cd "$ctx" && bash deploy/build.sh "${bs_args[@]}") >"$tmp/build.log" 2>&1; then
    ok "deploy/build.sh ${bs_args[*]//$tmp/TMP} in the Docker build context (.dockerignore applied)"
  else
    bad "deploy/build.sh in the Docker build context"; tail -20 "$tmp/build.log"
  fi
  unset NVCC SAN
  if grep -qE '^(cc|gcc|nvcc|.*/nvcc) ' "$tmp/build.log"; then
    echo "  (note: make recompiled something: $BUILD was not up to date)"
  fi
  if [ -x "$tmp/prefix/bin/gpath" ] && [ -s "$tmp/prefix/share/gpath/gpath.conf.example" ]; then
    ok "build.sh installed bin/gpath and share/gpath/gpath.conf.example (the image's /opt/gpath)"
  else
    bad "build.sh install layout"; find "$tmp/prefix" 2>/dev/null
  fi
  if bash deploy/build.sh --no-such-flag >/dev/null 2>&1; then bad "build.sh accepted an unknown flag"
  else ok "build.sh rejects an unknown flag"; fi
else
  skipped "deploy/build.sh: $BUILD/gpath is not built (make all first), or this is no git checkout"
fi

# ---- 5. the installed binary as the image runs it
ibin="$tmp/prefix/bin/gpath"
if [ -x "$ibin" ] && command -v curl >/dev/null; then
  mkdir -p "$tmp/cache"
  # As in the image: cache on its volume, no config, no graph; plus a port file and an admin token.
  (cd "$tmp/cache" && exec env -u GPATH_CONFIG -u GPATH_GRAPHS \
    GPATH_CACHE_PATH="$tmp/cache/gpath-cache.sqlite" GPATH_ADMIN_TOKEN=deploy-test-token \
    GPATH_BACKEND=cpu "$ibin" serve --port 0 --port-file "$tmp/port" >"$tmp/serve.log" 2>&1) &
  srv_pid=$!
  if port=$(serve_wait_ready "$tmp/port" "$srv_pid"); then
    ok "gpath serve with nothing configured becomes ready (built-in graph)"
    # The Dockerfile's HEALTHCHECK command, as written there, with GPATH_PORT pointing at this port.
    hc=$(sed -nE 's/^ *CMD (curl .*)$/\1/p' Dockerfile)
    if [ -n "$hc" ] && GPATH_PORT=$port sh -c "$hc"; then ok "Dockerfile HEALTHCHECK command passes"
    else bad "Dockerfile HEALTHCHECK command ($hc) failed"; fi
    if [ "$web_built" = 1 ]; then
      for pg in / /docs /web/vendor.js; do
        code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$pg")
        if [ "$code" = 200 ]; then ok "installed binary (build.sh --require-web) serves GET $pg: 200"
        else bad "installed binary: GET $pg answered $code, not 200 (web assets not embedded?)"; fi
      done
    else
      skipped "GET / and /docs from the installed binary: $BUILD has no web assets (make web)"
    fi
    if GPATH_PORT=$port GPATH_ADMIN_TOKEN=deploy-test-token sh deploy/systemd/gpath-reload.sh \
      >"$tmp/reload.log" 2>&1; then ok "gpath-reload.sh reloads every graph via the admin endpoint"
    else bad "gpath-reload.sh: $(cat "$tmp/reload.log")"; fi
    if GPATH_PORT=$port GPATH_ADMIN_TOKEN=wrong-token sh deploy/systemd/gpath-reload.sh \
      >/dev/null 2>&1; then bad "gpath-reload.sh succeeded with a wrong token"
    else ok "gpath-reload.sh fails with a wrong token"; fi
    serve_stop "$srv_pid"; rc=$SERVE_RC
    if [ "$rc" = 0 ]; then ok "SIGTERM: gpath serve drains and exits 0"
    else bad "SIGTERM: gpath serve exit status '${rc:-still running after 20 s}'"; fi
    srv_pid=
  else
    bad "gpath serve (image defaults) did not become ready"; tail -20 "$tmp/serve.log"
  fi
else
  skipped "running the installed binary: no installed gpath (step 4) or no curl"
fi

echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
