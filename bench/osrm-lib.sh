#!/usr/bin/env bash
# shellcheck disable=SC2154 # osrm, DEADLINE, WRK, BIN are set by the sourcing script
# osrm-lib.sh - shared by the OSRM side-by-side benches (bench/osrm-api.sh, bench/gpu-osrm-cch.sh):
# OSRM v6 from its tarball (../shared/peers/osrm), its preparation steps under a deadline, HTTP
# readiness, `gpath serve` in the background, and wrk runs of bench/osrm-api.lua. Source it after
# setting: osrm (the unpacked OSRM folder, or empty), DEADLINE (seconds of $SECONDS, 0 = none),
# WRK, CURL (curl; when missing, Python's urllib answers the probes), PYTHON (python3), BIN (gpath).
#   osrm_unpack TARBALL DIR        unpacks OSRM into DIR unless DIR/bin/osrm-routed is there
#   http_ok URL                    GET URL answers 200
#   wait_http URL PID              waits up to BENCH_READY_S (120) s for http_ok URL while PID lives
#   osrm_step LOG TOOL ARGS...     one OSRM tool, output appended to LOG, stopped 40 s before
#                                  DEADLINE (exit 124 then); LD_LIBRARY_PATH=$osrm/lib
#   gpath_start LOG ARGS...        `gpath serve --listen 127.0.0.1 --port 0 ARGS...` in the
#                                  background: sets gpath_pid and gpath_port, fails (LOG's tail
#                                  printed) when it does not answer /ready
#   stop_pid PID                   SIGTERM and wait (a process already gone is no error)
#   free_port                      a TCP port of 127.0.0.1 that nothing listens on now
#   osrm_wrk MODE CONNS KEEPALIVE URL BBOX SECS TABLE_N   one wrk run of bench/osrm-api.lua
#                                  (threads: CONNS up to BENCH_WRK_THREADS, default 4;
#                                  LD_LIBRARY_PATH gets $osrm/lib last):
#                                  prints its RESULT line (empty when wrk failed)
#   wrk_field RESULT KEY           one KEY=VALUE field of a RESULT line
osrm_unpack() {
  [ -x "$2/bin/osrm-routed" ] && return 0
  mkdir -p "$2" && tar xJf "$1" -C "$2"
}

http_ok() {
  if command -v "${CURL:-curl}" >/dev/null 2>&1; then
    "${CURL:-curl}" -sf "$1" >/dev/null 2>&1
  else
    env -u LD_LIBRARY_PATH "${PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/osrm_cch.py" ok "$1"
  fi
}

wait_http() { # URL PID: up to BENCH_READY_S seconds (120; a road-like 24M map imports for minutes)
  for _ in $(seq $((${BENCH_READY_S:-120} * 10))); do
    http_ok "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

osrm_step() {
  local log=$1 tool=$2 left=0
  shift 2
  if [ "${DEADLINE:-0}" -gt 0 ]; then
    left=$(( DEADLINE - SECONDS - 40 ))
    [ "$left" -gt 0 ] || { echo "$tool: not started, no time left before the deadline ($DEADLINE s)" >>"$log"; return 124; }
  fi
  echo "$tool started at ${SECONDS} s" >>"$log"
  LD_LIBRARY_PATH=$osrm/lib timeout "$left" "$osrm/bin/$tool" "$@" >>"$log" 2>&1 && return 0
  local rc=$?
  [ "$rc" = 124 ] && echo "$tool: stopped after ${left} s (deadline $DEADLINE s)" >>"$log"
  return "$rc"
}

gpath_start() { # LOG ARGS...
  local log=$1 pf
  shift
  pf=$(mktemp -u)
  "$BIN" serve --listen 127.0.0.1 --port 0 --port-file "$pf" "$@" >"$log" 2>&1 &
  gpath_pid=$!
  gpath_port=
  for _ in $(seq 6000); do
    [ -s "$pf" ] && break
    kill -0 "$gpath_pid" 2>/dev/null || break
    sleep 0.1
  done
  gpath_port=$(cat "$pf" 2>/dev/null)
  rm -f "$pf"
  if [ -z "$gpath_port" ] || ! wait_http "http://127.0.0.1:$gpath_port/ready" "$gpath_pid"; then
    echo "gpath serve did not start:"; tail -5 "$log"
    stop_pid "$gpath_pid"; gpath_pid=
    return 1
  fi
}

stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

free_port() {
  env -u LD_LIBRARY_PATH "${PYTHON:-python3}" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

osrm_wrk() { # MODE CONNS KEEPALIVE URL BBOX SECS TABLE_N
  local t=$2 most=${BENCH_WRK_THREADS:-4}
  [ "$t" -gt "$most" ] && t=$most
  # OSRM's lib/ holds the libraries wrk needs (LuaJIT, OpenSSL) for machines without them
  env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}${osrm:+$osrm/lib}" \
    OSRM_BBOX="$5" OSRM_MODE="$1" OSRM_TABLE_N="$7" ${3:+OSRM_KEEPALIVE=1} \
    "$WRK" -t"$t" -c"$2" -d"$6s" --timeout 30s -s "$(dirname "${BASH_SOURCE[0]}")/osrm-api.lua" "$4" |
    grep '^RESULT' || true
}

wrk_field() { echo "$1" | tr ' ' '\n' | sed -nE "s/^$2=//p"; }
