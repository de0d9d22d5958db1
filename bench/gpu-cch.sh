#!/usr/bin/env bash
# gpu-cch.sh - CCH benchmarks on the GPU machine (part of `make bench-gpu`): runs the kernel lab
# $BUILD/bench/lab_cch (bench/lab_cch.cu) - GPU customization / PHAST / RPHAST validated against
# the CPU CCH, then timed beside the CPU CCH (p2p, PHAST, buckets) and today's engines (near-far GPU
# SSSP and tables, CPU Dijkstra) on DIMACS NY and BAY and grid-like generated graphs - then
# compute-sanitizer memcheck and racecheck on a small graph when the tool is installed, and a
# gnuplot SVG of one-to-all and p2p time against graph size (bench/plot-cch.sh) when gnuplot is.
# Writes bench/results/DATE-MACHINE-gpu-cch.md (+ .dat, .svg), the per-phase profiles the lab
# prints on stderr at the end of the .md. Env: BUILD, GPATH_DATA (default
# ../shared/data), GPU_CCH_ARGS (extra lab arguments, e.g. "--graphs gen:24000000 --reps 3"),
# GPU_CCH_SUBJECT (results file subject, default gpu-cch), GPU_CCH_SANITIZE=0 (no sanitizer runs),
# GPU_CCH_NCU=REGEX (then Nsight Compute on the lab's kernels matching it, e.g. sweep_wpass, over
# GPU_CCH_NCU_ARGS, default one --fast rep on gen:4000000, GPU_CCH_NCU_COUNT launches, default 2,
# after GPU_CCH_NCU_SKIP, default 0; the regex matches demangled names with template arguments,
# e.g. 'sweep_warcs<1,': speed of light, occupancy, memory, warp stalls by reason, DRAM and L2
# traffic), GPATH_COMMIT.
set -u
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-../shared/data} # relative: results files name no path of the machine
bin=$BUILD/bench/lab_cch
if [ ! -x "$bin" ]; then
  echo "gpu-cch: $bin is not built (CUDA builds only: nvcc was not found at build?)"
  exit 1
fi
out=$(bench_out "${GPU_CCH_SUBJECT:-gpu-cch}")
dat=${out%.md}.dat
# shellcheck disable=SC2206
args=(--data "$DATA" --plot "$dat" ${GPU_CCH_ARGS:-})
bench_header "$out" "CCH: customization, PHAST, RPHAST on the GPU; CCH queries on the CPU" "bash bench/gpu-cch.sh ($bin ${args[*]})"
errlog=$(mktemp)
"$bin" "${args[@]}" 2> >(tee "$errlog" >&2) | tee -a "$out"
rc=${PIPESTATUS[0]}
sleep 0.2 # the stderr tee's last lines
if grep -q "plan profile" "$errlog"; then # the lab's per-phase profiles (stderr) into the file
  {
    echo
    echo "### Per-phase profile (the lab's stderr, gp_dcch_tune.profile: device us per phase, one sweep each)"
    echo
    echo '```'
    grep "plan profile" "$errlog" | tr ';' '\n' | grep -E "plan profile|phase" | sed -E 's/^ //'
    echo '```'
  } >>"$out"
fi
rm -f "$errlog"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{
  echo
  echo "### compute-sanitizer (small graph: \`$bin --small\`)"
  echo
  if [ "${GPU_CCH_SANITIZE:-1}" != 1 ]; then
    echo "- skipped (GPU_CCH_SANITIZE=0)"
  elif [ -x "$san" ]; then
    for tool in memcheck racecheck; do
      log=$(mktemp)
      timeout "${SAN_TIMEOUT:-240}" "$san" --tool "$tool" --error-exitcode 3 "$bin" --small >"$log" 2>&1
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
if [ -n "${GPU_CCH_NCU:-}" ]; then # Nsight Compute on the sweep's kernels (stall reasons, memory)
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  {
    echo
    echo "### Nsight Compute: kernels matching \`${GPU_CCH_NCU}\` (\`${GPU_CCH_NCU_ARGS:---fast --reps 1 --queries 10 --p2p-checks 1 --nf-table-max 1 --graphs gen:4000000}\`)"
    echo
    if [ -x "$ncu" ]; then
      echo '```'
      # shellcheck disable=SC2086
      stalls=""
      for r in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard \
        math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected \
        short_scoreboard sleeping tex_throttle wait; do
        stalls="$stalls,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
      done
      timeout "${NCU_TIMEOUT:-400}" "$ncu" --clock-control none --kernel-name-base demangled \
        --kernel-name "regex:${GPU_CCH_NCU}" --launch-skip "${GPU_CCH_NCU_SKIP:-0}" \
        --launch-count "${GPU_CCH_NCU_COUNT:-2}" --section SpeedOfLight --section Occupancy \
        --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        --section LaunchStats --metrics "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio${stalls}" \
        "$bin" --data "$DATA" ${GPU_CCH_NCU_ARGS:---fast --reps 1 --queries 10 --p2p-checks 1 --nf-table-max 1 --graphs gen:4000000} 2>&1 |
        grep -v -e '^==PROF==' -e '^    ---' | head -400
      echo '```'
    else
      echo "- ncu not found: not run"
    fi
  } | tee -a "$out"
fi
if command -v gnuplot >/dev/null 2>&1; then
  bash bench/plot-cch.sh "$dat" "${out%.md}.svg" && echo "plot: ${out%.md}.svg" | tee -a "$out"
fi
echo "wrote $out"
exit $rc
