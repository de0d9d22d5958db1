#!/usr/bin/env bash
# build.sh OUTDIR - bundles the map page into OUTDIR (`make web`): installs the pinned npm packages
# of web/package-lock.json into web/node_modules (npm ci, only when the lock file changed), then
# writes OUTDIR/vendor.js (Leaflet + Leaflet Routing Machine), vendor.css, their images, and the
# page's own index.html, app.js, app.css. gpath serves OUTDIR at / (config web_root; default the
# `web` directory beside the binary). Exits 0 with a message, building nothing, when npm is missing
# or the registry is unreachable (the map page then answers 404 and its browser test skips).
set -euo pipefail
out=${1:?usage: web/build.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
stamp="$here/node_modules/.lock-sum"
sum=$(sha256sum "$here/package-lock.json" | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
  if ! command -v npm >/dev/null; then
    echo "web: npm not installed; the map page is not bundled (apt-get install npm)"; exit 0
  fi
  if ! (cd "$here" && timeout 300 npm ci --no-audit --no-fund --loglevel=error \
        --fetch-timeout=20000 --fetch-retries=1 >/dev/null); then
    echo "web: npm ci failed (registry unreachable?); the map page is not bundled"; exit 0
  fi
  echo "$sum" >"$stamp"
fi
nm="$here/node_modules"
mkdir -p "$out/images"
{
  echo "/* gpath map page vendor bundle: leaflet $(node -p "require('$nm/leaflet/package.json').version" 2>/dev/null || echo '?'), leaflet-routing-machine $(node -p "require('$nm/leaflet-routing-machine/package.json').version" 2>/dev/null || echo '?') (their licences: BSD-2-Clause / ISC, in node_modules) */"
  cat "$nm/leaflet/dist/leaflet.js"; echo ";"
  cat "$nm/leaflet-routing-machine/dist/leaflet-routing-machine.js"; echo ";"
} >"$out/vendor.js.tmp"
cat "$nm/leaflet/dist/leaflet.css" "$nm/leaflet-routing-machine/dist/leaflet-routing-machine.css" \
  >"$out/vendor.css.tmp"
cp "$nm/leaflet/dist/images/"*.png "$out/images/"
cp "$nm/leaflet-routing-machine/dist/"*.png "$nm/leaflet-routing-machine/dist/"*.svg "$out/"
cp "$here/index.html" "$here/app.js" "$here/app.css" "$out/"
mv "$out/vendor.js.tmp" "$out/vendor.js"
mv "$out/vendor.css.tmp" "$out/vendor.css"
echo "web: bundled the map page into $out"
