#!/usr/bin/env bash
# cpu-roadlike.sh - how road-like the generated graphs are (issue 18): mean degree, hop diameter
# and METIS nested-dissection fill and operation count (bench/roadlike.h) of the real DIMACS NY
# and BAY graphs, of gen:N at their node counts (bounds: fill and operations within 2x, mean
# degree within 20%, hop diameter within 2x) and at 1M, 4M and 24M nodes, with the grid (grid:N,
# the generator gen:N was before) at the same sizes for contrast. Writes
# bench/results/DATE-MACHINE-roadlike.md.
# Knobs (env): GPATH_ROADLIKE_SIZES ("1000000 4000000 24000000"), GPATH_ROADLIKE_ND_MAX (largest
# gen: graph ordered with METIS, 24000000), GPATH_ROADLIKE_GRID_ND_MAX (largest grid ordered,
# 4000000), GPATH_ROADLIKE_BIG_SEEDS (METIS orderings per graph above 1M nodes, 1; 3 up to 1M),
# GPATH_ROADLIKE_JOBS (graphs measured at once, 1; load/ND times are then shared-machine times),
# ROADLIKE_BIN ($BUILD/bench/roadlike), GPATH_DATA (../shared/data).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
. bench/lib.sh
BUILD=${BUILD:-build}
BIN=${ROADLIKE_BIN:-$BUILD/bench/roadlike}
DATA=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
SIZES=${GPATH_ROADLIKE_SIZES:-1000000 4000000 24000000}
ND_MAX=${GPATH_ROADLIKE_ND_MAX:-24000000}
GRID_ND_MAX=${GPATH_ROADLIKE_GRID_ND_MAX:-4000000}
BIG_SEEDS=${GPATH_ROADLIKE_BIG_SEEDS:-1}
JOBS=${GPATH_ROADLIKE_JOBS:-1}
PY=/usr/bin/python3
[ -x "$BIN" ] || { echo "cpu-roadlike: build $BIN first (make all; needs libmetis-dev)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log() { echo "# $(date -u +%H:%M:%S) $*" >&2; }
rows=$tmp/rows.md
"$BIN" --header >"$rows"
nrow=0
measure() { # SEEDS SPEC: one row into $tmp/row.K (K = call order), or a row saying why not
  local seeds=$1 spec=$2 args=(--seeds "$1") k=$((nrow += 1))
  [ "$seeds" -eq 0 ] && args=(--no-nd)
  log "$spec (METIS orderings: $seeds)"
  (if ! "$BIN" "${args[@]}" "$spec" >"$tmp/row.$k" 2>"$tmp/err.$k"; then
     echo "| $spec | failed: $(tr '\n|' ' /' <"$tmp/err.$k" | cut -c1-200) |" >"$tmp/row.$k"
   fi) &
  # up to JOBS measures at a time (METIS is single-threaded)
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
}
for r in NY BAY; do
  f=$DATA/dimacs/USA-road-d.$r.gr.gz
  if [ -f "$f" ]; then measure 3 "$f"; else log "no $f: the $r rows are missing"; fi
done
for n in 264346 321270; do measure 3 "gen:$n"; done
for n in 264346 321270; do measure 3 "grid:$n"; done
for n in $SIZES; do
  s=3; [ "$n" -gt 1000000 ] && s=$BIG_SEEDS
  g=$s; [ "$n" -gt "$ND_MAX" ] && g=0
  measure "$g" "gen:$n"
  g=$s; [ "$n" -gt "$GRID_ND_MAX" ] && g=0
  measure "$g" "grid:$n"
done

wait
for k in $(seq "$nrow"); do cat "$tmp/row.$k" >>"$rows"; done

out=$(bench_out roadlike)
bench_header "$out" "Road-likeness of the generated graphs (gen:N) against the DIMACS NY and BAY graphs and the grid (grid:N)" \
  "BUILD=$BUILD bash bench/cpu-roadlike.sh (GPATH_ROADLIKE_SIZES='$SIZES' GPATH_ROADLIKE_ND_MAX=$ND_MAX GPATH_ROADLIKE_GRID_ND_MAX=$GRID_ND_MAX GPATH_ROADLIKE_BIG_SEEDS=$BIG_SEEDS GPATH_ROADLIKE_JOBS=$JOBS)"
{
  echo "Measures (bench/roadlike.h) on the undirected simple graph underneath each graph: mean degree ="
  echo "arcs / nodes; hop diameter = a lower bound by iterated double-sweep BFS (3 sweeps from node 0);"
  echo "ND fill and operation count = non-zeros below the diagonal of the Cholesky factor and"
  echo "sum c^2 - c over its column counts c (METIS's ComputeFillIn definitions, what \`ndmetis\` prints)"
  echo "for the METIS_NodeND order with the fewest operations among the seeds tried (one ordering's count"
  echo "varies by ~15% with METIS's seed). \"load / generate s\" includes the CSR and k-d tree build."
  echo
  echo "## Ratios to the real graphs (bounds of issue 18: fill and operations 0.5-2x, mean degree 0.8-1.2x, hop diameter 0.5-2x)"
  echo
  $PY - "$rows" <<'PYEOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(c) >= 12 and c[1].isdigit():
        rows[c[0]] = c
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
print("| graph | against | fill | operations | mean degree | hop diameter | within all bounds |")
print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
for real, n in (("USA-road-d.NY.gr.gz", "264346"), ("USA-road-d.BAY.gr.gz", "321270")):
    if real not in rows:
        continue
    r = rows[real]
    for kind in ("gen", "grid"):
        x = rows.get(f"{kind}:{n}")
        if not x:
            continue
        q = [num(x[6]) / num(r[6]), num(x[8]) / num(r[8]), num(x[3]) / num(r[3]), num(x[4]) / num(r[4])]
        ok = 0.5 <= q[0] <= 2 and 0.5 <= q[1] <= 2 and 0.8 <= q[2] <= 1.2 and 0.5 <= q[3] <= 2
        print(f"| {kind}:{n} | {real.split('.')[1]} | {q[0]:.2f}x | {q[1]:.2f}x | {q[2]:.2f}x | {q[3]:.2f}x | {'yes' if ok else 'no'} |")
PYEOF
  echo
  echo "## All graphs"
  echo
  cat "$rows"
  echo
  echo "gen:N (graph/road.c) vs grid:N at the same size: the operation count, which sets the work of a"
  echo "customizable contraction hierarchy's customization, is what separates them."
} >>"$out"
log "wrote $out"
cat "$out"
