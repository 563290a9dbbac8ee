#!/usr/bin/env bash
# Builds graphrt's Debian packages: libgraphrt0, libgraphrt-dev, graphrt and
# python3-graphrt (README "Packaging").
#   tools/package.sh [CMAKE_ARGS...]
# Configures BUILD_DIR (default: build-package) for the prefix /usr, with the
# AVX-512 plugin builds, builds the default target and runs cpack; the .deb
# files go to PACKAGE_DIR (default: BUILD_DIR/packages) and their paths to
# stdout. Other arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-package}
package_dir=${PACKAGE_DIR:-$build_dir/packages}
# SETUP=0: the prerequisites are known to be there (tests/package_deb_test.sh).
[[ ${SETUP:-1} == 0 ]] || ./tools/setup.sh >&2
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DGRAPHRT_ISA_BUILDS=ON -DGRAPHRT_NATIVE=OFF -DGRAPHRT_BUILD_TESTS=OFF -DGRAPHRT_BUILD_BENCHMARKS=OFF \
  "$@" >/dev/null
cmake --build "$build_dir" -j"${JOBS:-2}" >&2
mkdir -p "$package_dir"
package_dir=$(cd "$package_dir" && pwd)
rm -f "$package_dir"/*.deb
(cd "$build_dir" && cpack -G DEB -B "$package_dir") >&2
ls "$package_dir"/*.deb
