#!/usr/bin/env bash
# fetch-assets.sh OUTDIR - fetches the API reference page's assets (swagger-ui-dist, pinned with
# its integrity hash in web/package-lock.json) with `npm ci --ignore-scripts` into a cache keyed by
# the lock file, and copies the files GET /docs needs into OUTDIR, from where the Makefile embeds
# them into the binary. Run by `make web` (and `make test` / `make run`). Without npm or the
# registry it says so and exits 0: the build then answers GET /docs with 501 naming `make web`
# (GPATH_WEB_REQUIRED=1 makes that an error).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: web/fetch-assets.sh OUTDIR}
files="swagger-ui-bundle.js swagger-ui.css"
fail() {
  echo "web: $1; GET /docs will answer 501 (the contract is still served at /openapi.yaml)" >&2
  [ "${GPATH_WEB_REQUIRED:-0}" = 1 ] && exit 1
  exit 0
}
sum=$(cat web/package-lock.json web/package.json | sha256sum | cut -c1-16)
cache="${GPATH_WEB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpath-web}/$sum"
if [ ! -f "$cache/.installed" ]; then
  command -v npm >/dev/null || fail "npm is not installed"
  mkdir -p "$cache"
  cp web/package.json web/package-lock.json "$cache/"
  # --ignore-scripts: swagger-ui-dist's dependency @scarf/scarf would phone home on install
  if ! (cd "$cache" && SCARF_ANALYTICS=false timeout 300 npm ci --ignore-scripts --no-audit \
        --no-fund --loglevel=error --fetch-timeout=20000 --fetch-retries=1) >"$cache/npm.log" 2>&1; then
    tail -5 "$cache/npm.log" >&2
    fail "npm ci failed (registry unreachable?)"
  fi
  touch "$cache/.installed"
fi
mkdir -p "$out"
for f in $files; do
  src="$cache/node_modules/swagger-ui-dist/$f"
  [ -f "$src" ] || fail "$src is missing"
  cmp -s "$src" "$out/$f" || cp "$src" "$out/$f"
done
echo "web: $files ready in $out"
