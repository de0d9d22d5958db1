#!/usr/bin/env bash
# test_match.sh - map matching against the real daemon (tests/match_test.py: /match/v1 GET and
# POST, the batch POST /v1/graphs/{graph}/match, literal expectations on a hand-made map, noisy
# traces on Liechtenstein and the real OSRM's quality on the same traces when they are here),
# run through test_osrm.sh (the same interpreter and dependency check).
exec bash "$(dirname "$0")/test_osrm.sh" tests/match_test.py
