#!/usr/bin/env bash
# run.sh BUILD - runs every libFuzzer harness BUILD/fuzz/fuzz_* (built by `make fuzz`) for
# FUZZ_SECONDS (default 8) on its committed corpus tests/fuzz/corpus/NAME/ (read only; new
# inputs go to a scratch directory, out of the tree). A crash, leak, timeout or UB report fails the
# run (the other harnesses still run) and the input is kept under BUILD/fuzz/crashes/. Prints
# "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build-fuzz}
secs=${FUZZ_SECONDS:-8}
pass=0 fail=0 skip=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build/fuzz/crashes"
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  case "$bin" in *.d) continue ;; esac
  name=$(basename "$bin")
  mkdir -p "$scratch/$name"
  dirs=("$scratch/$name")
  # the committed seeds: tests/fuzz/corpus/fuzz_NAME/ or tests/fuzz/corpus/NAME/
  if [ -d "tests/fuzz/corpus/$name" ]; then dirs+=("tests/fuzz/corpus/$name")
  elif [ -d "tests/fuzz/corpus/${name#fuzz_}" ]; then dirs+=("tests/fuzz/corpus/${name#fuzz_}")
  else echo "# $name: no committed corpus under tests/fuzz/corpus/, starting empty"; fi
  echo "=== $name: ${secs}s"
  # -rss_limit_mb / -timeout: a graph load that needs > 2 GiB or 10 s on a fuzz input is a bug
  if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz/crashes/$name-" "${dirs[@]}" >"$scratch/$name.log" 2>&1; then
    pass=$((pass + 1))
    grep -E "^stat::number_of_executed_units|^Done" "$scratch/$name.log" | tr '\n' ' '; echo
  else
    fail=$((fail + 1))
    tail -40 "$scratch/$name.log"
    echo "FAIL - $name (input kept under $build/fuzz/crashes/)"
  fi
done
[ $((pass + fail)) -eq 0 ] && { echo "no fuzz harness built under $build/fuzz"; skip=1; }
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
