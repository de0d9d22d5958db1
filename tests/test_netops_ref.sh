#!/usr/bin/env bash
# test_netops_ref.sh - routing tables (distances + full ECMP next-hop sets) of every Topology Zoo,
# SNDlib and Rocketfuel file under $GPATH_DATA against networkx (tests/netops_ref.py), with hop-count
# and bandwidth-derived / native costs, plus what-if after failing each link of mid-sized networks,
# ECMP link loads (`gpath link-loads`) of random demand matrices on Topology Zoo and Rocketfuel,
# and LFA / TI-LFA repair paths with coverage (gpath repair) on Topology Zoo and Rocketfuel graphs.
# Skips (with a message) when the data, the gpath binary or Debian's python3-networkx is missing.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-${BUILD:-build}/gpath}
if [ ! -x "$BIN" ]; then echo "SKIP: $BIN not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
if ! /usr/bin/python3 -c 'import networkx' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 lacks networkx (apt-get install python3-networkx)"
  echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
GPATH_BIN="$BIN" GPATH_DATA="${GPATH_DATA:-$(cd .. && pwd)/shared/data}" exec /usr/bin/python3 tests/netops_ref.py
