#!/usr/bin/env bash
# install-deps.sh [run|test|web] - installs the Debian packages gpath needs that this machine lacks.
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -euo pipefail
what=${1:-test}
run_pkgs="build-essential pkg-config libmicrohttpd-dev libcjson-dev libinih-dev libpq-dev
  libsqlite3-dev zlib1g-dev libxml2-dev libmetis-dev curl libosmium2-dev libprotozero-dev
  libexpat1-dev libbz2-dev"
test_pkgs="$run_pkgs libcmocka-dev libcurl4-openssl-dev python3 python3-jsonschema python3-yaml
  python3-networkx python3-numpy postgresql postgresql-15-pgrouting postgresql-15-postgis-3
  gnuplot-nox wrk cppcheck yamllint osmium-tool libreadosm-dev prometheus nodejs chromium
  chromium-driver clang libclang-rt-14-dev"
# web: what `make web` needs to build the map page and API reference assets (node and npm)
web_pkgs="nodejs"
case "$what" in
  run) pkgs=$run_pkgs ;;
  web) pkgs=$web_pkgs ;;
  test) pkgs=$test_pkgs ;;
  *) echo "usage: $0 [run|test|web]" >&2; exit 2 ;;
esac
missing=()
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: Debian's own package, unless the installed nodejs already ships it (NodeSource builds do)
if [ "$what" != run ] && ! command -v npm >/dev/null; then missing+=(npm); fi
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "gpath needs Debian packages that are missing; run as root:" >&2
  echo "  apt-get update && $cmd" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
