#!/usr/bin/env bash
# test_map_page.sh - the map page (GET /, MapLibre GL JS) in real headless Chromium
# (tests/map_page.js) against a real gpath serving Monaco (osm:$GPATH_DATA/osm/monaco.osm.pbf) and
# the small map of tests/data/osm/traffic.osm (the graph picker):
# the basemap drawn and fitted, the pickers, two clicks routed through /route/v1, the route
# coloured by speed, the itinerary's steps with text and icons, an alternative selected, an
# isochrone by right-click, a speed file POSTed and the traffic state shown (the slowed segments of
# traffic.geojson drawn in the traffic-line layer, close-up screenshots), the layout wide and
# narrow. Screenshots are kept as CI artifacts in $BUILD/test-artifacts/map-page/.
# Skips with a message without chromium, node, the Monaco extract or an OSM-loading gpath, the
# embedded page (`make web` before the build) or playwright-core (installed by `make web`).
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
bin=${GPATH_BIN:-$PWD/$BUILD/gpath}
data=${GPATH_DATA:-$(cd .. && pwd)/shared/data}
# shellcheck source=tests/browser_lib.sh
. tests/browser_lib.sh
browser_need maplibre-gl.mjs
monaco="$data/osm/monaco.osm.pbf"
[ -f "$monaco" ] || browser_skip "no $monaco (make data)"
"$bin" info --graph "osm:$monaco" >/dev/null 2>&1 || browser_skip "this gpath cannot load OSM"
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
token=map-page-test-token
"$bin" serve --port 0 --port-file "$tmp/port" --graph "monaco=osm:$monaco" \
  --graph "small=osm:tests/data/osm/traffic.osm" --cache-path "" \
  --operator-token "$token" --log-level warn >"$tmp/serve.log" 2>&1 &
pid=$!
port=$(serve_wait_ready "$tmp/port" "$pid") || { cat "$tmp/serve.log"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
out="$PWD/$BUILD/test-artifacts/map-page"
rm -rf "$out"
mkdir -p "$out"
PLAYWRIGHT_CORE="$nm/playwright-core" CHROMIUM=$chromium timeout 180 node tests/map_page.js \
  "http://127.0.0.1:$port" "$out" "$token"
