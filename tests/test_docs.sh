#!/usr/bin/env bash
# test_docs.sh - every shell example of README.md and docs/*.md run against the real binary and
# server (tests/doc_examples.py; its docstring lists the <!-- doctest: ... --> markers): an example
# that stops working fails the suite. Examples that need a GPU, PostgreSQL, Docker, a Kubernetes
# cluster or the data sets skip with the reason where those are missing. Uses $BUILD/gpath.
# Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/gpath" ]; then echo "skip: $BUILD/gpath not built"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
BUILD="$BUILD" exec timeout 600 /usr/bin/python3 tests/doc_examples.py
