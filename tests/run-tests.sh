#!/usr/bin/env bash
# run-tests.sh [gpu] - runs every test program under $BUILD/tests (cmocka) and every tests/test_*.sh
# script, then prints one closing line "N passed, N failed, N skipped".
# With "gpu", runs only the GPU tests (test_gpu_*) and GPATH_REQUIRE_GPU=1 turns their skips into
# failures. Tests needing ../shared/data skip with a message when it is absent.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
mode=${1:-all}
pass=0 fail=0 skip=0 failed_names=()
export GPATH_BIN="$PWD/$BUILD/gpath"
# the test data: GPATH_DATA, else data/ once `make data` filled it, else ../shared/data
if [ -z "${GPATH_DATA:-}" ]; then
  if compgen -G "data/*/SOURCE.md" >/dev/null; then GPATH_DATA=$PWD/data
  else GPATH_DATA=$(cd .. && pwd)/shared/data; fi
fi
export GPATH_DATA
# one line per data group (data/MANIFEST.tsv) that is absent: its tests skip
if [ -r data/MANIFEST.tsv ]; then
  for g in $(grep -v '^#' data/MANIFEST.tsv | cut -f1 | cut -d/ -f1 | sort -u); do
    [ -d "$GPATH_DATA/$g" ] || echo "data: $g is not in $GPATH_DATA, its tests skip; run \`make data\` to get it"
  done
fi
tally() { # name logfile rc
  local p f s
  p=$(grep -aoE '^\[  PASSED  \] [0-9]+' "$2" | awk '{s+=$NF} END {print s+0}')
  f=$(grep -aoE '^\[  FAILED  \] [0-9]+ test' "$2" | awk '{s+=$(NF-1)} END {print s+0}')
  s=$(grep -aoE '^\[  SKIPPED \] [0-9]+' "$2" | awk '{s+=$NF} END {print s+0}')
  # scripts print their own "N passed, N failed, N skipped" line
  if [ "$p$f$s" = "000" ]; then
    local l; l=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
    if [ -n "$l" ]; then
      p=$(echo "$l" | awk '{print $1}'); f=$(echo "$l" | awk '{print $3}')
      s=$(echo "$l" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); s=${s:-0}
    fi
  fi
  if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
  [ "$f" -gt 0 ] && failed_names+=("$1")
  return 0
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for t in "$BUILD"/tests/test_* tests/test_*.sh; do
  [ -e "$t" ] || continue
  case "$t" in *.d) continue ;; esac
  name=$(basename "$t")
  case "$mode" in gpu) case "$name" in test_gpu_*) ;; *) continue ;; esac ;; esac
  echo "=== $name"
  if [[ "$t" == *.sh ]]; then bash "$t" >"$tmp/log" 2>&1; rc=$?
  else "$t" >"$tmp/log" 2>&1; rc=$?; fi
  cat "$tmp/log"
  tally "$name" "$tmp/log" "$rc"
done
echo
[ ${#failed_names[@]} -gt 0 ] && echo "failing: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
