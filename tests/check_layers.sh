#!/usr/bin/env bash
# check_layers.sh - the dependency rules of gpath's product code, written once here and checked by
# `make lint` (tests/lint.sh): every `#include "..."` line of graph/, storage/, engine/, kernels/,
# server/ and cli/ must name a header its room may include. Arrows point down:
#
#   cli/            the command line, on top: may include anything below; nothing includes cli/
#   server/         the service itself (serve, routes, metrics, cache glue: above every room of
#                   server/) and its foundations (config.h, registry.h, errors.h) that the rooms
#                   below may include; never cli/
#   server/v1/      gpath's own API: server/, http/, api/, storage/, engine/, graph/; never osrm/
#   server/osrm/    the OSRM family: server/, http/, api/, engine/, graph/; never v1/
#   server/api/     documents shared by every flavour and by the CLI (errors, rendering, parameter
#                   values, geometry): api/, the foundations, engine/, graph/; never http/, v1/,
#                   osrm/ (it knows no request)
#   server/http/    transport (daemon, front end, head checks, util, the handler toolkit): http/,
#                   the foundations, engine/engine.h, graph/; never api/, v1/, osrm/: it never
#                   knows what a route does
#   storage/        storage/, graph/
#   engine/         engine/, graph/, kernels/ (the launchers' C headers)
#   kernels/        kernels/ (their own C headers), graph/ (the bottom floor: gp_err, gp_graph,
#                   GP_INF); never engine/: the engine hands its structs down as plain C
#   graph/          graph/ only
#
# Lab and test-only tuning headers (*_lab.h) are never included from server/, cli/ or storage/.
# Tests, benchmarks and the lab may include anything. A failure names the file, the line and the
# forbidden include. Run: bash tests/check_layers.sh (exit status 1 on a violation).
set -u
cd "$(dirname "$0")/.." || exit 1

# room (longest prefix wins) | what it may include (path prefixes; a name ending in .h is one
# header) | what it never includes, even where a prefix above allows it
RULES='
cli/          | cli/ server/ storage/ engine/ graph/ |
server/v1/    | server/ storage/ engine/ graph/ | server/osrm/ cli/
server/osrm/  | server/ engine/ graph/ | server/v1/ cli/
server/api/   | server/api/ server/config.h server/registry.h server/errors.h engine/ graph/ |
server/http/  | server/http/ server/config.h server/registry.h server/errors.h engine/engine.h graph/ |
server/       | server/ storage/ engine/ graph/ | cli/
storage/      | storage/ graph/ |
engine/       | engine/ graph/ kernels/ |
kernels/      | kernels/ graph/ |
graph/        | graph/ |
'

# Known exceptions, each "file include" on a line of its own, with its reason in a comment above
# (none today: keep it that way).
EXCEPTIONS='
'

files=$(ls graph/*.[ch] graph/*.cpp storage/*.[ch] engine/*.[ch] kernels/*.cu kernels/*.cuh \
  kernels/*.h server/*.[ch] server/*/*.[ch] cli/*.[ch] 2>/dev/null)
# one awk pass: the rules and exceptions first, then every include line of every file
# shellcheck disable=SC2086
awk -v rules="$RULES" -v exceptions="$EXCEPTIONS" '
function has(list, inc,   n, w, i) { # 1 when inc matches a prefix (or names a header) of list
  n = split(list, w, " ")
  for (i = 1; i <= n; i++)
    if ((w[i] ~ /\.h$/ && inc == w[i]) || (w[i] !~ /\.h$/ && index(inc, w[i]) == 1)) return 1
  return 0
}
function words(t,   w, n, i, o) { n = split(t, w, " "); o = ""; for (i = 1; i <= n; i++) o = o (i > 1 ? " " : "") w[i]; return o }
BEGIN {
  nr = split(rules, line, "\n")
  for (i = 1; i <= nr; i++) {
    if (line[i] !~ /\|/) continue
    split(line[i], f, "|")
    r = words(f[1]); room[++nrooms] = r; allow[r] = words(f[2]); deny[r] = words(f[3])
  }
  ne = split(exceptions, ex, "\n")
  for (i = 1; i <= ne; i++) if (words(ex[i]) != "") known[words(ex[i])] = 1
  rc = 0
}
FNR == 1 { # the room of this file: the longest matching prefix
  best = ""
  for (i = 1; i <= nrooms; i++)
    if (index(FILENAME, room[i]) == 1 && length(room[i]) > length(best)) best = room[i]
}
best != "" && /^[ \t]*#[ \t]*include[ \t]*"/ {
  inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
  if ((FILENAME " " inc) in known) next
  why = ""
  if (inc ~ /_lab\.h$/ && FILENAME ~ /^(server|cli|storage)\//)
    why = "lab/test-only tuning headers stay out of the product'"'"'s " FILENAME
  else if (!has(allow[best], inc)) why = "its room may include only: " allow[best]
  else if (deny[best] != "" && has(deny[best], inc)) why = "its room never includes: " deny[best]
  if (why != "") { printf "layers: %s:%d includes \"%s\" (%s)\n", FILENAME, FNR, inc, why; rc = 1 }
}
END {
  if (rc == 0) print "layers: ok (tests/check_layers.sh)"
  exit rc
}' $files
