#!/usr/bin/env bash
# test_version.sh - one version number: the VERSION file is the only source. Checks that
# `gpath --version` (the Makefile's -DGPATH_VERSION), openapi.yaml's info.version, the Dockerfile's
# image label, the compose image tag, the Kubernetes Deployment's image tag and the docs' image tags
# all say the VERSION file's number. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${GPATH_BIN:-$PWD/build/gpath}
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "     $2"; }

v=$(tr -d ' \n' <VERSION 2>/dev/null)
if [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok "VERSION is a semantic version ($v)"; else bad "VERSION is a semantic version" "'$v'"; fi
# same NAME FOUND: FOUND must equal the VERSION number
same() { if [ "$2" = "$v" ]; then ok "$1 = $v"; else bad "$1 = $v" "found '$2'"; fi; }

if [ -x "$BIN" ]; then
  same "gpath --version" "$("$BIN" --version | awk '{print $2}')"
else
  bad "gpath --version" "$BIN not built"
fi
same "openapi.yaml info.version" "$(/usr/bin/python3 -c 'import yaml; print(yaml.safe_load(open("openapi.yaml"))["info"]["version"])')"
same "Dockerfile org.opencontainers.image.version" "$(sed -nE 's/.*org\.opencontainers\.image\.version="([^"]+)".*/\1/p' Dockerfile)"
same "deploy/compose.yaml gpath build tag" "$(/usr/bin/python3 -c 'import yaml; print(yaml.safe_load(open("deploy/compose.yaml"))["services"]["gpath"]["build"]["tags"][0].rsplit(":", 1)[1])')"
same "deploy/kubernetes/deployment.yaml image tag" "$(sed -nE 's#^ *image: .*/gpath:([^ ]+)$#\1#p' deploy/kubernetes/deployment.yaml)"
# every gpath image tag written in the docs
tags=$(grep -hoE 'gpath:[0-9]+\.[0-9]+\.[0-9]+' README.md docs/*.md deploy/kubernetes/README.md 2>/dev/null | sort -u | sed 's/gpath://')
if [ -z "$tags" ]; then bad "docs name an image tag"
else for t in $tags; do same "image tag gpath:$t in the docs" "$t"; done; fi
# the number is written nowhere else in the sources: GPATH_VERSION comes from the Makefile
if grep -rnE "GPATH_VERSION +\"[0-9]" server engine graph storage Makefile >/dev/null; then
  bad "no second copy of the version in the sources" "$(grep -rnE 'GPATH_VERSION +"[0-9]' server engine graph storage Makefile)"
else ok "no second copy of the version in the sources"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
