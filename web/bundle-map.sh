#!/usr/bin/env bash
# bundle-map.sh OUTDIR - the map page's files for the binary (`make web`, after fetch-assets.sh has
# installed web/package-lock.json's pinned packages into its cache): OUTDIR/vendor.js (Leaflet +
# Leaflet Routing Machine), vendor.css, their images (flat: gpath serves them at /web/NAME and
# /web/images/NAME) and the page's own index.html, app.js, app.css. The Makefile embeds OUTDIR's
# files (web/embed-assets.sh); gpath serves them at / (config map_page). Also writes
# OUTDIR/../npm-cache.path (the packages' directory, for tests/test_osrm_browser.sh's
# playwright-core). Without the cache it says so and exits 0: GET / then answers 501.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: web/bundle-map.sh OUTDIR}
sum=$(cat web/package-lock.json web/package.json | sha256sum | cut -c1-16)
cache="${GPATH_WEB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpath-web}/$sum"
nm="$cache/node_modules"
if [ ! -f "$cache/.installed" ] || [ ! -f "$nm/leaflet/dist/leaflet.js" ]; then
  echo "web: the npm packages are not installed (web/fetch-assets.sh failed?); GET / will answer 501" >&2
  exit 0
fi
tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
version() { sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$nm/$1/package.json" | head -1; }
{
  echo "/* gpath map page vendor bundle: leaflet $(version leaflet) (BSD-2-Clause), leaflet-routing-machine $(version leaflet-routing-machine) (ISC) */"
  cat "$nm/leaflet/dist/leaflet.js"; echo ";"
  cat "$nm/leaflet-routing-machine/dist/leaflet-routing-machine.js"; echo ";"
} >"$tmp/vendor.js"
cat "$nm/leaflet/dist/leaflet.css" "$nm/leaflet-routing-machine/dist/leaflet-routing-machine.css" \
  >"$tmp/vendor.css"
cp "$nm/leaflet/dist/images/"*.png "$nm/leaflet-routing-machine/dist/"*.png \
  "$nm/leaflet-routing-machine/dist/"*.svg web/index.html web/app.js web/app.css "$tmp/"
# replace only what changed, so the embedded list and the binary rebuild only then
mkdir -p "$out"
for f in "$tmp"/*; do cmp -s "$f" "$out/$(basename "$f")" || cp "$f" "$out/"; done
for f in "$out"/*; do [ -e "$tmp/$(basename "$f")" ] || rm -f "$f"; done
rm -rf "$tmp"
echo "$nm" >"$out/../npm-cache.path"
echo "web: map page ready in $out"
