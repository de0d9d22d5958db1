#!/usr/bin/env bash
# lint.sh - rejects unsafe C calls in the sources, checks the dependency rules between rooms
# (tests/check_layers.sh), shell scripts and openapi.yaml.
set -u
cd "$(dirname "$0")/.." || exit 1
rc=0
bad=$(grep -nE '\b(sprintf|vsprintf|strcpy|strcat|atoi|atol|gets|strtok)[[:space:]]*\(' \
  graph/*.[ch] engine/*.[ch] server/*.[ch] server/*/*.[ch] cli/*.[ch] storage/*.[ch] kernels/*.cu tests/*.c bench/*.c 2>/dev/null \
  | grep -vE '(snprintf|vsnprintf|strtok_r)' || true)
if [ -n "$bad" ]; then echo "lint: unsafe calls (use snprintf, memcpy with lengths, strtol):"; echo "$bad"; rc=1; fi
if command -v shellcheck >/dev/null; then
  shellcheck -S warning tests/*.sh deploy/*.sh bench/*.sh data/*.sh .ci/run 2>/dev/null || { echo "lint: shellcheck"; rc=1; }
fi
# the dependency rules between rooms (graph/ < storage/, engine/ < server/ rooms < cli/)
layers=$(bash tests/check_layers.sh) || { echo "$layers"; rc=1; }
# no getenv in product code below the config layer: settings are config keys (server/config.c maps
# GPATH_* variables onto them), test and lab knobs go through the *_lab.h headers
env=$(grep -nE '\bgetenv[[:space:]]*\(' graph/*.[ch] graph/*.cpp engine/*.[ch] storage/*.[ch] kernels/*.cu \
  kernels/*.cuh kernels/*.h server/*.[ch] server/*/*.[ch] cli/*.[ch] 2>/dev/null | grep -v '^server/config\.c:' || true)
if [ -n "$env" ]; then echo "lint: getenv outside server/config.c (make it a config key):"; echo "$env"; rc=1; fi
# every _free / _unref / _close / _stop / _destroy accepts NULL (graph/gp.h): a definition with a
# pointer parameter and no NULL guard in its first two lines is named
nonull=$(git grep -nE '^[a-z].*\b\w+(_free|_unref|_close|_stop|_destroy)\((\w+ )+\*?\w+[,)].*\{$' -- \
  'graph/*' 'engine/*' 'storage/*' 'kernels/*' 'server/*' 'cli/*' |
  while IFS=: read -r f l _; do
    sed -n "$((l + 1)),$((l + 2))p" "$f" | grep -qE 'if \(!?\w+( \|\||\)|$| &&)' || echo "$f:$l"
  done)
if [ -n "$nonull" ]; then echo "lint: these release functions must accept NULL (graph/gp.h):"; echo "$nonull"; rc=1; fi
# the layout .clang-format describes (clang-format 14: other versions lay some lines out otherwise)
if command -v clang-format >/dev/null && clang-format --version | grep -q ' version 14\.'; then
  git ls-files -z '*.c' '*.h' '*.cu' '*.cuh' '*.cpp' | xargs -0 clang-format --dry-run --Werror --ferror-limit=1 \
    >/dev/null 2>&1 || { echo "lint: layout differs from .clang-format (run make format)"; rc=1; }
fi
if [ -f tests/check_openapi.py ]; then /usr/bin/python3 tests/check_openapi.py || rc=1; fi
[ $rc -eq 0 ] && echo "lint: ok"
exit $rc
