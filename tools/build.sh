#!/usr/bin/env bash
# Set up, configure and build graphrt into BUILD_DIR (default: build).
#   tools/build.sh [--tests] [CMAKE_ARGS...]
# Without --tests it builds what running graphrt needs (core, plugins, CLI,
# client libraries, Python module); --tests also builds the test programs,
# test plugins, fuzzers and benchmarks (the target graphrt_tests).
# Other arguments go to cmake's configure step. GRAPHRT_WERROR=ON in the
# environment makes warnings errors (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(all)
if [[ ${1:-} == --tests ]]; then
  targets+=(graphrt_tests)
  shift
fi
build_dir=${BUILD_DIR:-build}
./tools/setup.sh
config=(-DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}")
[[ -n ${GRAPHRT_WERROR:-} ]] && config+=(-DGRAPHRT_WERROR="$GRAPHRT_WERROR")
cmake -S . -B "$build_dir" -G Ninja "${config[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j"${JOBS:-2}" --target "${targets[@]}"
