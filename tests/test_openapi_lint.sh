#!/usr/bin/env bash
# test_openapi_lint.sh - openapi.yaml through the standard OpenAPI linter: @redocly/cli, pinned in
# tests/openapi-lint/package-lock.json and installed once (npm ci) into a cache outside the
# checkout keyed by the lock file, then `redocly lint` with tests/openapi-lint/redocly.yaml (the
# recommended ruleset; every example validated against its schema). Errors and warnings both
# fail. Skipped with a message when node/npm is not installed or the registry is unreachable
# (tests/check_openapi.py still checks the document offline in tests/lint.sh).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
done_with() { echo "$1 passed, $2 failed, $3 skipped"; [ "$2" -eq 0 ]; exit $?; }
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "skip - redocly lint: node/npm not installed (deploy/install-deps.sh test installs them)"
  done_with 0 0 1
fi
sum=$(cat tests/openapi-lint/package-lock.json tests/openapi-lint/package.json | sha256sum | cut -c1-16)
dir="${GPATH_LINT_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpath-openapi-lint}/$sum"
if [ ! -f "$dir/.installed" ]; then
  mkdir -p "$dir"
  cp tests/openapi-lint/package.json tests/openapi-lint/package-lock.json "$dir/"
  if (cd "$dir" && timeout 180 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
        --fetch-timeout=20000 --fetch-retries=1) >"$dir/npm.log" 2>&1; then
    touch "$dir/.installed"
  else
    tail -5 "$dir/npm.log"
    echo "skip - redocly lint: npm ci of tests/openapi-lint failed (registry unreachable?)"
    done_with 0 0 1
  fi
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# no telemetry, no update check: the lint runs offline once installed
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true timeout 120 \
  "$dir/node_modules/.bin/redocly" lint --config tests/openapi-lint/redocly.yaml --format=stylish \
  openapi.yaml >"$log" 2>&1
rc=$?
# Node 20's end-of-life banner is not a finding
grep -v '[║╔╚]' "$log" | sed '/^[[:space:]]*$/d'
if [ $rc -ne 0 ]; then
  echo "not ok - redocly lint openapi.yaml (exit $rc)"; done_with 0 1 0
elif grep -qE '^[[:space:]]+[0-9]+:[0-9]+[[:space:]]+warning' "$log" || grep -q 'You have [0-9]* warning' "$log"; then
  echo "not ok - redocly lint openapi.yaml: warnings count as failures"; done_with 0 1 0
fi
echo "ok - redocly lint openapi.yaml (recommended rules, examples valid against their schemas, no warnings)"
done_with 1 0 0
