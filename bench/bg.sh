#!/usr/bin/env bash
# bg.sh - one long benchmark step across several device calls (a call runs at most 10
# minutes; the machine stays held while calls follow each other within its idle time):
#   start NAME -- CMD ARGS...  runs CMD in a process session of its own (setsid: it outlives the
#                              call), output in /tmp/gpath-bg/NAME.log, and returns at once;
#   wait NAME SECONDS          waits until it ends or SECONDS have passed, then prints its state
#                              (running, or its exit status), its wall seconds so far and the
#                              log's last lines; exits 0 when it ended with 0, 3 while it runs;
#   log NAME                   prints the whole log.
# E.g. the CCH of road-like 24M's turn graph, whose order and contraction take longer than one
# call (issue 35: GPU customization with turn costs; bench/results via bench/gpu-cch.sh):
#   bash bench/bg.sh start t24 -- env GPU_CCH_SUBJECT=turns-cch-24m GPU_CCH_SANITIZE=0 \
#     GPU_CCH_ARGS="--fast --phast-only --reps 3 --p2p-checks 0 --turns --graphs gen:24000000" \
#     bash bench/gpu-cch.sh
#   bash bench/bg.sh wait t24 560    # in this call and the next ones until "exit 0"
# The device tool copies the tree again at each call, removing what the run wrote into
# bench/results since the last: a run started here writes its results files into
# /tmp/gpath-bg/results instead (BENCH_RESULTS_DIR, bench/lib.sh, unless set), which `wait`
# lists once the run has ended; copy them into the tree or out of the machine from there.
set -u
cd "$(dirname "$0")/.." || exit 1
dir=/tmp/gpath-bg
what=${1:-}
name=${2:-}
usage() {
  echo "usage: bash bench/bg.sh start NAME -- CMD ARGS... | wait NAME SECONDS | log NAME" >&2
  exit 2
}
[ -n "$name" ] && [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || usage
mkdir -p "$dir"
state() { # -> "running", "exit N" or "not started"
  if [ -f "$dir/$name.rc" ]; then
    echo "exit $(cat "$dir/$name.rc")"
  elif [ -f "$dir/$name.t0" ]; then
    echo running
  else
    echo "not started"
  fi
}
case "$what" in
start)
  shift 2
  [ "${1:-}" = "--" ] && shift
  [ $# -gt 0 ] || usage
  [ "$(state)" = running ] && { echo "bg: $name is running already" >&2; exit 1; }
  rm -f "$dir/$name.rc"
  date +%s >"$dir/$name.t0"
  # shellcheck disable=SC2016 # expanded by the inner shell
  BENCH_RESULTS_DIR=${BENCH_RESULTS_DIR:-$dir/results} \
    setsid bash -c 'rc=$1; shift; "$@"; echo $? >"$rc"' _ "$dir/$name.rc" "$@" \
    >"$dir/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
  echo "bg: $name started (pid $!, log $dir/$name.log)"
  ;;
wait)
  limit=${3:-}
  [[ "$limit" =~ ^[0-9]+$ ]] || usage
  [ "$(state)" = "not started" ] && { echo "bg: $name was not started" >&2; exit 1; }
  end=$((SECONDS + limit))
  while [ "$(state)" = running ] && [ $SECONDS -lt "$end" ]; do sleep 1; done
  s=$(state)
  echo "bg: $name: $s after $(($(date +%s) - $(cat "$dir/$name.t0"))) s"
  tail -n "${BG_TAIL:-15}" "$dir/$name.log"
  if [ "$s" != running ] && [ -d "$dir/results" ]; then
    echo "bg: results files in $dir/results:"
    ls -1 "$dir/results"
  fi
  case "$s" in
  "exit 0") exit 0 ;;
  running) exit 3 ;;
  *) exit 1 ;;
  esac
  ;;
log)
  cat "$dir/$name.log"
  ;;
*)
  usage
  ;;
esac
