#!/usr/bin/env bash
# build.sh - the build stage of gpath's container image, also run outside Docker by CI
# (tests/test_deploy.sh) so the two cannot drift. The Dockerfile's build stage runs exactly
#   deploy/build.sh --prefix /opt/gpath --build build --require-cuda
# Steps, each skippable:
#   deps     install the build packages the machine lacks (deploy/install-deps.sh run: apt-get as
#            root, else it prints the command and fails); Debian 12 and Ubuntu 24.04 name them alike
#   web      make BUILD=<dir> web: the map page (/) and API reference (/docs) assets, pinned npm
#            packages (web/package-lock.json) embedded into the binary; needs node and npm
#            (deploy/install-deps.sh web); without them the binary answers / and /docs with 501
#   make     make BUILD=<dir> <dir>/gpath  (the CUDA backend when nvcc is found, as `make` decides)
#   install  <prefix>/bin/gpath and <prefix>/share/gpath/gpath.conf.example (the database
#            migrations are compiled into the binary)
#   verify   the installed binary resolves all its shared libraries and runs `gpath serve --help`
#
# usage: deploy/build.sh [--prefix DIR] [--build DIR] [--jobs N] [--require-cuda] [--require-web]
#                        [--skip-deps] [--skip-web] [--skip-make] [--skip-install]
# --require-web fails the build when the web assets cannot be built (the Dockerfile passes it).
# Environment: NVCC= forces a CPU-only build (passed through to make), as in the Makefile.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
build=build
jobs=$(nproc 2>/dev/null || echo 2)
require_cuda=0 require_web=0 do_deps=1 do_web=1 do_make=1 do_install=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --require-cuda) require_cuda=1; shift ;;
    --require-web) require_web=1; shift ;;
    --skip-web) do_web=0; shift ;;
    --skip-deps) do_deps=0; shift ;;
    --skip-make) do_make=0; shift ;;
    --skip-install) do_install=0; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

step() { echo "build.sh: $*"; }

if [ $do_deps -eq 1 ]; then
  step "deps"
  bash deploy/install-deps.sh run
fi

if [ $do_web -eq 1 ]; then
  step "web (assets of / and /docs)"
  if [ $do_deps -eq 1 ]; then bash deploy/install-deps.sh web; fi
  GPATH_WEB_REQUIRED=$require_web make --no-print-directory BUILD="$build" web
  if [ $require_web -eq 1 ] && { [ ! -s "$build/web/map/vendor.js" ] ||
       [ ! -s "$build/web/dist/swagger-ui-bundle.js" ]; }; then
    echo "build.sh: --require-web but $build/web has no map page or API reference assets" >&2
    exit 1
  fi
fi

if [ $do_make -eq 1 ]; then
  step "make BUILD=$build (jobs $jobs)"
  # NVCC is passed only when the caller set it (even empty), so the Makefile's own detection
  # decides otherwise.
  make_args=(--no-print-directory -j"$jobs" BUILD="$build")
  if [ -n "${NVCC+x}" ]; then make_args+=(NVCC="$NVCC"); fi
  make "${make_args[@]}" "$build/gpath"
fi

bin="$build/gpath"
[ -x "$bin" ] || { echo "build.sh: $bin was not built" >&2; exit 1; }
if [ $require_cuda -eq 1 ]; then
  # The Makefile compiles kernels/*.cu only when it finds nvcc; an image without them would run
  # the CPU backend on a GPU host without saying so at build time.
  if ! ls "$build"/kernels/*.o >/dev/null 2>&1; then
    echo "build.sh: --require-cuda but $build has no CUDA objects (nvcc not found?)" >&2
    exit 1
  fi
fi

if [ $do_install -eq 1 ]; then
  step "install into $prefix"
  install -d "$prefix/bin" "$prefix/share/gpath"
  install -m 0755 "$bin" "$prefix/bin/gpath"
  if [ -f config/gpath.conf.example ]; then
    install -m 0644 config/gpath.conf.example "$prefix/share/gpath/gpath.conf.example"
  else # the binary writes the same documented file
    "$bin" serve --print-config >"$prefix/share/gpath/gpath.conf.example"
  fi
  bin="$prefix/bin/gpath"
fi

step "verify $bin"
if command -v ldd >/dev/null; then
  missing=$(ldd "$bin" | grep 'not found' || true)
  if [ -n "$missing" ]; then echo "build.sh: unresolved libraries:" >&2; echo "$missing" >&2; exit 1; fi
fi
"$bin" serve --help >/dev/null || { echo "build.sh: $bin serve --help failed" >&2; exit 1; }
step "ok: $bin"
