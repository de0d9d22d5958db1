#!/usr/bin/env bash
# serve_lib.sh - sourced by tests/test_deploy.sh and tests/test_replicas.sh: waiting for a
# `gpath serve` started in the background with --port 0 --port-file, and stopping it as an
# orchestrator does. Not a test by itself.
#   serve_wait_ready PORTFILE PID   prints the port once GET /ready answers 200; fails if the
#                                   process exits first or after 20 s
#   serve_stop PID                  SIGTERM, then waits up to 20 s; sets SERVE_RC to the exit
#                                   status, or to "" if it is still running (the caller's cleanup
#                                   kills it). Not in $(...): wait needs the caller's shell.
serve_wait_ready() {
  local portfile=$1 pid=$2 port=
  for _ in $(seq 1 400); do
    [ -s "$portfile" ] && port=$(cat "$portfile")
    if [ -n "$port" ] && curl -fsS "http://127.0.0.1:$port/ready" >/dev/null 2>&1; then
      echo "$port"; return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
# shellcheck disable=SC2034 # SERVE_RC is read by the sourcing test
serve_stop() {
  local pid=$1
  SERVE_RC=
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 400); do
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; SERVE_RC=$?; return 0; fi
    sleep 0.05
  done
}
