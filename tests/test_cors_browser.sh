#!/usr/bin/env bash
# test_cors_browser.sh - gpath from a browser page of another origin, in real headless Chromium
# (tests/cors_browser.py, tests/web/cors.html): route (GET) and table (POST JSON) read and drawn
# through CORS, /admin blocked; screenshot in $BUILD/test-artifacts/cors-page.png. Skips with a
# message without chromium / chromedriver (deploy/install-deps.sh test installs both).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
BIN=${GPATH_BIN:-$BUILD/gpath}
if [ ! -x "$BIN" ]; then echo "skip: $BIN not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
BUILD="$BUILD" GPATH_BIN="$BIN" exec timeout 300 /usr/bin/python3 tests/cors_browser.py
