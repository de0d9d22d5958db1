#!/usr/bin/env bash
# test_osrm_contract.sh - OSRM contract details on small hand-made OSM maps against the real daemon
# (tests/osrm_contract_test.py: annotations per segment, waypoints, unknown options, weight names,
# router topologies, snapping among small components, alternatives without U-turns), run as
# test_osrm.sh runs its own.
exec bash "$(dirname "$0")/test_osrm.sh" tests/osrm_contract_test.py
