#!/usr/bin/env bash
# gpu-sssp.sh - GPU SSSP benchmarks (part of `make bench-gpu`): runs the kernel lab
# $BUILD/bench/lab_sssp (bench/lab_sssp.cu) - validation of every variant against the CPU backend,
# the near-far parameter sweep, one-to-all timings (seed, near-far, CPU 1 thread / all cores) on
# DIMACS NY and BAY and generated 1M / 10M / 24M-node road graphs, tables on BAY - then
# compute-sanitizer memcheck and racecheck on small graphs when the tool is installed.
# Writes bench/results/DATE-MACHINE-gpu-sssp.md. Env: BUILD, GPATH_DATA (default ../shared/data),
# GPU_SSSP_ARGS (extra lab arguments, e.g. "--sizes 1000000 --reps 3"), GPATH_COMMIT.
set -u
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-../shared/data} # relative: results files name no path of the machine
bin=$BUILD/bench/lab_sssp
if [ ! -x "$bin" ]; then
  echo "gpu-sssp: $bin is not built (CUDA builds only: nvcc was not found at build?)"
  exit 1
fi
out=$(bench_out gpu-sssp)
# shellcheck disable=SC2206
args=(--data "$DATA" --sweep ${GPU_SSSP_ARGS:-})
bench_header "$out" "GPU SSSP: seed vs near-far vs the CPU backend" "bash bench/gpu-sssp.sh ($bin ${args[*]})"
"$bin" "${args[@]}" | tee -a "$out" # log lines (stderr) stay on the terminal
rc=${PIPESTATUS[0]}
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{
  echo
  echo "### compute-sanitizer (small graphs: \`$bin --sanitize\`)"
  echo
  if [ -x "$san" ]; then
    for tool in memcheck racecheck; do
      log=$(mktemp)
      timeout "${SAN_TIMEOUT:-240}" "$san" --tool "$tool" --error-exitcode 3 "$bin" --sanitize >"$log" 2>&1
      trc=$?
      [ $trc -eq 0 ] || rc=1
      [ $trc -eq 124 ] && echo "- $tool: timed out after ${SAN_TIMEOUT:-240} s"
      echo "- $tool: exit $trc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^OK|^FAILED' "$log" | tr '\n' ' ')"
      rm -f "$log"
    done
  else
    echo "- compute-sanitizer not found: not run"
  fi
} | tee -a "$out"
echo "wrote $out"
exit $rc
