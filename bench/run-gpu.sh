#!/usr/bin/env bash
# run-gpu.sh - `make bench-gpu`: runs every bench/gpu-*.sh in turn; each writes its results file
# under bench/results/ (named DATE-MACHINE-SUBJECT.md) with the command, machine, commit and medians.
set -u
cd "$(dirname "$0")/.." || exit 1
rc=0
for s in bench/gpu-*.sh; do
  [ -e "$s" ] || continue
  echo "=== $s"; bash "$s" || rc=1
done
exit $rc
