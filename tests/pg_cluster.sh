#!/usr/bin/env bash
# pg_cluster.sh - sourced by tests/test_pg.sh and bench/cpu-pgrouting.sh: a throwaway PostgreSQL
# cluster (initdb + pg_ctl) in a temp dir on a free loopback port, run as the unprivileged
# "postgres" user when we are root (PostgreSQL refuses to run as root). Not a test by itself.
#   pgc_start DIR     -> PGC_PORT, PGC_URI (postgresql://gpath@127.0.0.1:PORT), PGC_LOG; 0 on success
#   pgc_psql DB ARGS  psql as the cluster's superuser "gpath"
#   pgc_stop [-m immediate]
# shellcheck disable=SC2034 # PGC_* variables are for the sourcing script
PGC_BIN=""
pgc_find_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && PGC_BIN=$d
  done
  [ -n "$PGC_BIN" ]
}
pgc_as() { # runs a command as the cluster's owner
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pgc_free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
pgc_start() {
  PGC_DIR=$1
  pgc_find_bin || { PGC_WHY="PostgreSQL server binaries (initdb, pg_ctl) not found"; return 1; }
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    PGC_WHY="running as root and there is no 'postgres' user to run the server as"; return 1
  fi
  mkdir -p "$PGC_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres "$PGC_DIR"
  chmod 700 "$PGC_DIR"
  PGC_LOG=$PGC_DIR/server.log
  if ! pgc_as "$PGC_BIN/initdb" -D "$PGC_DIR/data" -U gpath --auth=trust -E UTF8 --no-sync \
      >"$PGC_DIR/initdb.log" 2>&1; then
    PGC_WHY="initdb failed: $(tail -3 "$PGC_DIR/initdb.log")"; return 1
  fi
  PGC_PORT=$(pgc_free_port)
  pgc_as "$PGC_BIN/pg_ctl" -D "$PGC_DIR/data" -l "$PGC_LOG" -w -t 60 \
    -o "-p $PGC_PORT -k $PGC_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off ${PGC_EXTRA_OPTS:-}" \
    start >/dev/null 2>&1 || { PGC_WHY="pg_ctl start failed: $(tail -5 "$PGC_LOG")"; return 1; }
  PGC_URI="postgresql://gpath@127.0.0.1:$PGC_PORT"
  export PGHOST=127.0.0.1 PGPORT=$PGC_PORT PGUSER=gpath
  return 0
}
pgc_psql() { local db=$1; shift; psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
pgc_restart() { # restarts the stopped cluster on the same port
  pgc_as "$PGC_BIN/pg_ctl" -D "$PGC_DIR/data" -l "$PGC_LOG" -w -t 60 \
    -o "-p $PGC_PORT -k $PGC_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off ${PGC_EXTRA_OPTS:-}" \
    start >/dev/null 2>&1
}
pgc_stop() {
  [ -n "${PGC_DIR:-}" ] && [ -d "$PGC_DIR/data" ] || return 0
  [ $# -eq 0 ] && set -- -m fast
  pgc_as "$PGC_BIN/pg_ctl" -D "$PGC_DIR/data" -w -t 30 stop "$@" >/dev/null 2>&1 || true
}
