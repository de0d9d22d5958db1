#!/usr/bin/env bash
# lib.sh - shared by the bench scripts: names results files and writes their common header.
#   source bench/lib.sh; out=$(bench_out SUBJECT); bench_header "$out" "TITLE" "COMMAND"
bench_machine() { # short machine name for file names: the GPU when there is one, else the CPU
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//'
  else
    echo "cpu$(nproc)-$(lscpu | sed -nE 's/^Model name: *//p' | head -1 | tr -cs 'A-Za-z0-9' '-' | cut -c1-30 | sed 's/-$//')"
  fi
}
bench_out() { # SUBJECT -> bench/results/DATE-MACHINE-SUBJECT.md (BENCH_RESULTS_DIR instead of
  # bench/results: bench/bg.sh sets it for the runs it spreads over several device calls, since
  # the device tool's copy of the tree at each call removes what a run wrote into bench/results)
  local d=${BENCH_RESULTS_DIR:-bench/results}
  mkdir -p "$d"
  echo "$d/$(date -u +%Y-%m-%d)-$(bench_machine)-$1.md"
}
bench_header() { # FILE TITLE COMMAND
  {
    echo "# $2"
    echo
    echo "- command: \`$3\`"
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    # the device machine gets a copy of the tree without .git: pass GPATH_COMMIT there
    echo "- commit: ${GPATH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "- CPU: $(lscpu | sed -nE 's/^Model name: *//p' | head -1), $(nproc) cores"
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
      echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
    fi
    echo
  } >"$1"
}

# phases LOG WHAT: appends to $out where the table time went
# (the debug events of engine/snap.c: serve --log-level debug)
# shellcheck disable=SC2154 # out is the calling script's results file
phases() {
  awk -v what="$2" '
    function v(k,  i, a) { for (i = 1; i <= NF; i++) if (split($i, a, "=") == 2 && a[1] == k) return a[2]; return 0 }
    /event=table_plan/ { np++; prep += v("prepare_ms") }
    /event=table_block/ { nb++; src += v("sources_ms"); tab += v("table_ms"); comb += v("combine_ms"); if (v("cells") == "device") { nd++; hc += v("host_cells") } }
    END { printf "\nphases (%s): %d plans, prepare %.0f ms; %d blocks: sources %.0f ms, engine table %.0f ms, combine %.0f ms", what, np, prep, nb, src, tab, comb
          if (nd) printf "; %d blocks with their cells combined on the device (engine table: that and the copy; combine: the host'"'"'s %d cells)", nd, hc
          printf "\n" }' "$1" >>"$out"
}
