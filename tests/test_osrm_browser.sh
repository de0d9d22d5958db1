#!/usr/bin/env bash
# test_osrm_browser.sh - the Leaflet Routing Machine page (GET /lrm) in real headless Chromium (tests/osrm_browser.js): page and
# assets served by gpath, the road overview drawn, two clicks routed by Leaflet Routing Machine's
# stock OSRM v1 router against gpath's /route/v1, the line and itinerary equal to gpath's answer,
# an isochrone drawn. The screenshot is kept as a CI artifact: $BUILD/test-artifacts/osrm-map.png.
# Graph: Monaco (osm:$GPATH_DATA/osm/monaco.osm.pbf) when this gpath loads OSM, else gen:10000:7.
# Skips with a message without chromium, node, the embedded page (`make web` before the build) or
# playwright-core (installed by `make web`).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
bin=${GPATH_BIN:-$PWD/$BUILD/gpath}
data=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
# shellcheck source=tests/browser_lib.sh
. tests/browser_lib.sh
browser_need vendor.js
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
graph="g=gen:10000:7"
monaco="$data/osm/monaco.osm.pbf"
if [ -f "$monaco" ] && "$bin" info --graph "osm:$monaco" >/dev/null 2>&1; then
  graph="monaco=osm:$monaco"
else
  echo "note: Monaco not loadable by this build (no OSM loader or no data): using gen:10000:7"
fi
echo "graph: ${graph%%=*}"
"$bin" serve --port 0 --port-file "$tmp/port" --graph "$graph" --cache-path "" \
  --log-level warn >"$tmp/serve.log" 2>&1 &
pid=$!
port=$(serve_wait_ready "$tmp/port" "$pid") || { cat "$tmp/serve.log"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
mkdir -p "$BUILD/test-artifacts"
PLAYWRIGHT_CORE="$nm/playwright-core" CHROMIUM=$chromium timeout 120 node tests/osrm_browser.js "http://127.0.0.1:$port" \
  "$PWD/$BUILD/test-artifacts/osrm-map.png"
