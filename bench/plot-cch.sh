#!/usr/bin/env bash
# plot-cch.sh DAT SVG - query time against graph size from bench/lab_cch.cu's --plot file (lines
# "name nodes dijkstra_ms nearfar_ms cch_p2p_us phast_ms"): one-to-all with CPU Dijkstra, GPU
# near-far and GPU PHAST, and the CCH p2p query, road networks (DIMACS, road-like gen:) as filled
# points beside grid-like graphs (grid:) as open points. Needs gnuplot.
set -eu
dat=$1
svg=$2
road=$(mktemp)
grid=$(mktemp)
trap 'rm -f "$road" "$grid"' EXIT
grep -E '^grid:' "$dat" | sort -k2 -n >"$grid" || true
grep -vE '^grid:' "$dat" | sort -k2 -n >"$road" || true
gnuplot <<GP
set terminal svg size 900,560 dynamic font "sans,12"
set output "$svg"
set title "Query time vs graph size (median; one-to-all = one source, whole tree)"
set logscale xy
set xlabel "nodes"
set ylabel "milliseconds"
set key outside right
set grid
plot "$road" using 2:3 with linespoints pt 7 lc 1 title "CPU Dijkstra (road)", \
     "$grid" using 2:3 with linespoints pt 6 lc 1 dt 2 title "CPU Dijkstra (grid)", \
     "$road" using 2:4 with linespoints pt 7 lc 2 title "GPU near-far (road)", \
     "$grid" using 2:4 with linespoints pt 6 lc 2 dt 2 title "GPU near-far (grid)", \
     "$road" using 2:6 with linespoints pt 7 lc 3 title "GPU PHAST (road)", \
     "$grid" using 2:6 with linespoints pt 6 lc 3 dt 2 title "GPU PHAST (grid)", \
     "$road" using 2:(\$5/1000) with linespoints pt 7 lc 4 title "CCH p2p, CPU (road)", \
     "$grid" using 2:(\$5/1000) with linespoints pt 6 lc 4 dt 2 title "CCH p2p, CPU (grid)"
GP
