#!/usr/bin/env bash
# test_tiles.sh - vector tiles against the real daemon (tests/tiles_test.py): OSRM's /tile/v1 and
# gpath's basemap tiles on the hand-made tests/data/osm/tiles.osm (and a .gpath snapshot of it),
# decoded with @mapbox/vector-tile (installed by `make web`), bad input, gzip, ETag, the cache,
# TileJSON and style; and a Monaco tile against the real OSRM when its tarball and the extract are
# present. Skips with a message without node or the decoder packages.
cd "$(dirname "$0")/.." || exit 1
export BUILD="${BUILD:-build}"
GPATH_BIN="${GPATH_BIN:-$PWD/$BUILD/gpath}" exec /usr/bin/python3 tests/tiles_test.py
