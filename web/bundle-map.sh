#!/usr/bin/env bash
# bundle-map.sh OUTDIR - the map pages' files for the binary (`make web`, after fetch-assets.sh has
# installed web/package-lock.json's pinned packages into its cache). The Makefile embeds OUTDIR's
# files flat (web/embed-assets.sh); gpath serves them at /web/NAME (server/v1/map.c):
#   GET /     index.html, app.js, app.css: MapLibre GL JS (maplibre-gl.mjs, its worker
#             maplibre-gl-worker.mjs, which it loads from beside itself, maplibre-gl.css) and
#             osrm-text.js (osrm-text-instructions with its English strings, made a browser script
#             by web/bundle-text.js)
#   GET /lrm  lrm.html, lrm.js, lrm.css: Leaflet + Leaflet Routing Machine (vendor.js, vendor.css,
#             their images, also at /web/images/NAME where Leaflet's CSS looks)
# Also writes OUTDIR/../npm-cache.path (the packages' directory, for the browser tests'
# playwright-core). Without the cache it says so and exits 0: GET / then answers 501.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: web/bundle-map.sh OUTDIR}
sum=$(cat web/package-lock.json web/package.json | sha256sum | cut -c1-16)
cache="${GPATH_WEB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpath-web}/$sum"
nm="$cache/node_modules"
if [ ! -f "$cache/.installed" ] || [ ! -f "$nm/leaflet/dist/leaflet.js" ] ||
   [ ! -f "$nm/maplibre-gl/dist/maplibre-gl.mjs" ]; then
  echo "web: the npm packages are not installed (web/fetch-assets.sh failed?); GET / will answer 501" >&2
  exit 0
fi
tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
version() { sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$nm/$1/package.json" | head -1; }
{
  echo "/* gpath LRM page vendor bundle: leaflet $(version leaflet) (BSD-2-Clause), leaflet-routing-machine $(version leaflet-routing-machine) (ISC) */"
  cat "$nm/leaflet/dist/leaflet.js"; echo ";"
  cat "$nm/leaflet-routing-machine/dist/leaflet-routing-machine.js"; echo ";"
} >"$tmp/vendor.js"
cat "$nm/leaflet/dist/leaflet.css" "$nm/leaflet-routing-machine/dist/leaflet-routing-machine.css" \
  >"$tmp/vendor.css"
cp "$nm/leaflet/dist/images/"*.png "$nm/leaflet-routing-machine/dist/"*.png \
  "$nm/leaflet-routing-machine/dist/"*.svg web/lrm.html web/lrm.js web/lrm.css "$tmp/"
# MapLibre's ES modules as published (the source maps stay out: 10 MB the page never needs)
cp "$nm/maplibre-gl/dist/maplibre-gl.mjs" "$nm/maplibre-gl/dist/maplibre-gl-worker.mjs" \
  "$nm/maplibre-gl/dist/maplibre-gl.css" web/index.html web/app.js web/app.css "$tmp/"
sed -i '/^\/\/# sourceMappingURL=/d' "$tmp/maplibre-gl.mjs" "$tmp/maplibre-gl-worker.mjs"
if command -v node >/dev/null; then
  node web/bundle-text.js "$nm/osrm-text-instructions" >"$tmp/osrm-text.js"
else # the page then words the steps itself (web/app.js instruction())
  echo "/* node was not there at build time: no osrm-text-instructions */" >"$tmp/osrm-text.js"
fi
# replace only what changed, so the embedded list and the binary rebuild only then
mkdir -p "$out"
for f in "$tmp"/*; do cmp -s "$f" "$out/$(basename "$f")" || cp "$f" "$out/"; done
for f in "$out"/*; do [ -e "$tmp/$(basename "$f")" ] || rm -f "$f"; done
rm -rf "$tmp"
echo "$nm" >"$out/../npm-cache.path"
echo "web: map pages ready in $out (maplibre-gl $(version maplibre-gl), leaflet $(version leaflet))"
