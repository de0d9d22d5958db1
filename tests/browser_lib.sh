#!/usr/bin/env bash
# browser_lib.sh - sourced by the browser tests of the map pages (tests/test_map_page.sh,
# tests/test_osrm_browser.sh): what they need before they start. Not a test by itself.
#   browser_need FILE   skips the test (prints the skip and the closing line, exits 0) without
#                       node, chromium ($CHROMIUM, default /usr/bin/chromium), the bundled page
#                       file $BUILD/web/map/FILE (`make web` before the build) or playwright-core
#                       (installed by `make web`); else sets $chromium and $nm (the npm packages)
browser_skip() { echo "skip: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
browser_need() {
  command -v node >/dev/null || browser_skip "node is not installed"
  chromium=${CHROMIUM:-/usr/bin/chromium}
  [ -x "$chromium" ] || browser_skip "chromium is not installed (apt-get install chromium)"
  [ -f "${BUILD:-build}/web/map/$1" ] || browser_skip "the map page is not bundled (make web)"
  nm=$(cat "${BUILD:-build}/web/npm-cache.path" 2>/dev/null)
  [ -n "$nm" ] && [ -d "$nm/playwright-core" ] || browser_skip "playwright-core is not installed (make web)"
}
