#!/bin/sh
# gpath-reload - ExecReload= of gpath.service: asks the local gpath to re-read every graph it serves
# (POST /admin/graphs/NAME/reload with the bearer token GPATH_ADMIN_TOKEN). The graph names come
# from GPATH_GRAPHS ("NAME=SPEC ..."), else from GET /v1/graphs. Each reload is all-or-nothing in
# the server: a failure keeps the old graph serving and makes this script exit non-zero, naming it.
# The token is handed to curl on standard input so that it never shows in the process list.
set -u
port=${GPATH_PORT:-8080}
base="http://127.0.0.1:$port"
if [ -z "${GPATH_ADMIN_TOKEN:-}" ]; then
  echo "gpath-reload: GPATH_ADMIN_TOKEN is not set (the admin endpoints are disabled without it)" >&2
  exit 1
fi
names=""
if [ -n "${GPATH_GRAPHS:-}" ]; then
  for pair in $GPATH_GRAPHS; do names="$names ${pair%%=*}"; done
else
  names=$(curl -fsS "$base/v1/graphs" | grep -o '"name"[[:space:]]*:[[:space:]]*"[^"]*"' |
    sed 's/.*"\([^"]*\)"$/\1/') || { echo "gpath-reload: cannot list graphs at $base" >&2; exit 1; }
fi
rc=0
for g in $names; do
  # The body, then the status code on a line of its own.
  out=$(printf 'Authorization: Bearer %s\n' "$GPATH_ADMIN_TOKEN" |
    curl -sS -w '\n%{http_code}' -X POST -H @- "$base/admin/graphs/$g/reload" 2>&1)
  code=${out##*"
"}
  if [ "$code" = 200 ]; then
    echo "gpath-reload: $g reloaded"
  else
    echo "gpath-reload: $g: HTTP $code: ${out%"
"*}" >&2
    rc=1
  fi
done
exit $rc
