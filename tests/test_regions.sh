#!/usr/bin/env bash
# test_regions.sh - several regions in one server (tests/regions_test.py: Monaco and Liechtenstein
# served side by side, OSRM profile aliases picking the region that holds the coordinates), run
# through test_osrm.sh (the same interpreter and dependency check).
exec bash "$(dirname "$0")/test_osrm.sh" tests/regions_test.py
