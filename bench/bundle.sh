#!/usr/bin/env bash
# bundle.sh DIR - packs what the GPU benchmarks and the GPU test suite need for a GPU machine that
# has the CUDA driver but none of our libraries (see docs/gpu.md): the built binaries of $BUILD
# (gpath, the GPU tests, the CCH lab and bench programs), stripped, under DIR/build with the
# layout the scripts expect; the shared libraries they load (../shared/tools/bundle-libs.sh, or
# ldd when that is absent), wrk, curl and osmium with their libraries under DIR/lib; and the data sets the runs
# read (DIMACS NY and BAY, the OSM extracts) under DIR/data. On the GPU machine:
#   export LD_LIBRARY_PATH=$PWD/DIR/lib PATH=$PWD/DIR/lib:$PATH GPATH_DATA=DIR/data BUILD=DIR/build
# then e.g. `bash bench/gpu-cch.sh` or `bash tests/run-tests.sh gpu`.
# A device tool that carries at most 64 MiB: BUNDLE_TAR=1 also packs DIR into DIR.tar.xz (about 28
# MB; unpack with `tar xJf DIR.tar.xz -C "$(dirname DIR)"` there).
#   env: BUILD (build), GPATH_DATA (../shared/data), BUNDLE_DATA ("dimacs/USA-road-d.NY.gr.gz
#        dimacs/USA-road-d.NY.co.gz dimacs/USA-road-d.BAY.gr.gz dimacs/USA-road-d.BAY.co.gz osm"),
#        BUNDLE_EXTRA (more files to copy into DIR/data)
set -eu
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/bundle.sh DIR}
BUILD=${BUILD:-build}
DATA=${GPATH_DATA:-../shared/data}
[ -x "$BUILD/gpath" ] || { echo "bundle: $BUILD/gpath is not built (make all)"; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/build/tests" "$dir/build/bench" "$dir/lib" "$dir/data"
bins=("$BUILD/gpath")
for f in "$BUILD"/tests/test_gpu_* "$BUILD"/bench/lab_cch "$BUILD"/bench/bench_cch \
  "$BUILD"/bench/bench_planning "$BUILD"/bench/bench_repair; do
  [ -x "$f" ] && [ "${f%.d}" = "$f" ] && bins+=("$f")
done
for f in "${bins[@]}"; do
  rel=${f#"$BUILD"/}
  strip -o "$dir/build/$rel" "$f"
done
libs() { # BINARY: its shared libraries (not the C library's own) into $dir/lib
  if [ -x ../shared/tools/bundle-libs.sh ]; then
    ../shared/tools/bundle-libs.sh "$1" "$dir/lib" >/dev/null
  else
    ldd "$1" | awk '$3 ~ /^\// {print $3}' |
      grep -vE '/(libc|libm|libpthread|libdl|librt|libgcc_s|ld-linux[^/]*)\.so' |
      while read -r l; do cp -L "$l" "$dir/lib/"; done
  fi
}
for f in "${bins[@]}"; do libs "$f"; done
for t in wrk curl osmium; do # the HTTP benchmarks' load generator, readiness checks, OSM files
  command -v $t >/dev/null 2>&1 || continue
  cp "$(command -v $t)" "$dir/lib/$t"
  libs "$(command -v $t)"
done
for d in ${BUNDLE_DATA:-dimacs/USA-road-d.NY.gr.gz dimacs/USA-road-d.NY.co.gz dimacs/USA-road-d.BAY.gr.gz dimacs/USA-road-d.BAY.co.gz osm}; do
  [ -e "$DATA/$d" ] || continue
  mkdir -p "$dir/data/$(dirname "$d")"
  cp -r "$DATA/$d" "$dir/data/$d"
done
for f in ${BUNDLE_EXTRA:-}; do cp "$f" "$dir/data/"; done
echo "bundle: $(du -sh "$dir" | cut -f1) in $dir ($(find "$dir/lib" -type f | wc -l) files in lib)"
if [ "${BUNDLE_TAR:-0}" = 1 ]; then
  tar cf - -C "$(dirname "$dir")" "$(basename "$dir")" | xz -T0 -6 >"$dir.tar.xz"
  echo "bundle: $(du -sh "$dir.tar.xz" | cut -f1) in $dir.tar.xz"
fi
