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
if [ -f tests/check_openapi.py ]; then /usr/bin/python3 tests/check_openapi.py || rc=1; fi
[ $rc -eq 0 ] && echo "lint: ok"
exit $rc
