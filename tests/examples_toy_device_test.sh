#!/usr/bin/env bash
# Installs graphrt, builds examples/toy_device out of tree against the
# install (find_package(graphrt)) with g++ and, when Debian's libc++ is
# there, with clang++ -stdlib=libc++, and loads each build into the
# installed `graphrt`.
# usage: examples_toy_device_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

source "$(dirname "$0")/examples_install.sh" "$1" "$2"

# build NAME [cmake args...]: configures and builds into $TMP/NAME.
build() {
  local name=$1
  shift
  cmake -S "$SRC/examples/toy_device" -B "$TMP/$name" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_BUILD_TYPE=Release "$@" >"$TMP/$name.configure.log" 2>&1 ||
    { cat "$TMP/$name.configure.log" >&2; fail "configuring examples/toy_device ($name)"; }
  cmake --build "$TMP/$name" -j 2 >"$TMP/$name.build.log" 2>&1 ||
    { cat "$TMP/$name.build.log" >&2; fail "building examples/toy_device ($name)"; }
  [[ -f "$TMP/$name/libtoy_device.so" ]] || fail "$name: libtoy_device.so was not built"
}

# check PLUGIN: the installed graphrt loads it and lists its devices.
check() {
  local plugin=$1
  if command -v nm >/dev/null; then
    # (__bss_start, _edata and _end are the linker's own markers.)
    exported=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBR]$/ && $3 !~ /^(__bss_start|_edata|_end)$/ {print $3}')
    [[ "$exported" == "graphrt_plugin_init" ]] || fail "$plugin: unexpected exported symbols: $exported"
  fi
  GRAPHRT_TOY_XPU_MEMORY_LIMIT=256M "$GRAPHRT" devices --plugin "$plugin" >"$TMP/devices.txt" 2>&1 ||
    { cat "$TMP/devices.txt" >&2; fail "graphrt devices --plugin $plugin"; }
  cat "$TMP/devices.txt"
  for want in "device:XPU:0" "device:XPU:1" "type:        XPU (plugin toy_device)" \
      "toy asynchronous device XPU:1" "256.0 MiB total, 256.0 MiB free" \
      "0 B in use, 0 B peak, 256.0 MiB limit" "device:CPU:0"; do
    grep -qF "$want" "$TMP/devices.txt" || fail "graphrt devices does not show '$want'"
  done
  "$GRAPHRT" ops MatMul --plugin "$plugin" >"$TMP/ops.txt" 2>&1 || { cat "$TMP/ops.txt" >&2; fail "graphrt ops"; }
  grep -c "kernels:.*XPU" "$TMP/ops.txt" >/dev/null || { cat "$TMP/ops.txt" >&2; fail "MatMul has no XPU kernel"; }
  # A graph over CPU:0 (the constants), XPU:1 and XPU:0, run by the
  # installed CLI: [[1,2],[3,4]] x [[1,0],[0,-1]] = [[1,-2],[3,-4]], relu'd.
  "$GRAPHRT" run "$SRC/examples/toy_device/cpu_xpu_chain.pbtxt" --plugin "$plugin" --fetch relu \
    --log-placement --trace "$TMP/trace.json" >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt" >&2; fail "graphrt run on XPUs"; }
  grep -cF "relu: dtype=float shape=[2,2] values=[1, 0, 3, 0]" "$TMP/run.txt" >/dev/null ||
    { cat "$TMP/run.txt" >&2; fail "wrong result of the XPU graph"; }
  grep -cF "mm: (MatMul): /job:localhost/replica:0/task:0/device:XPU:1" "$TMP/run.txt" >/dev/null ||
    { cat "$TMP/run.txt" >&2; fail "MatMul was not placed on XPU:1"; }
  grep -cF "device:XPU:0" "$TMP/trace.json" >/dev/null || fail "the trace has no XPU:0 track"
}

echo "== build examples/toy_device against the install (g++)"
build gcc -DCMAKE_CXX_COMPILER=g++
check "$TMP/gcc/libtoy_device.so"

echo "== a bad memory limit is one clear error naming the variable"
if GRAPHRT_TOY_XPU_MEMORY_LIMIT=lots "$GRAPHRT" devices --plugin "$TMP/gcc/libtoy_device.so" >"$TMP/bad.txt" 2>&1; then
  fail "GRAPHRT_TOY_XPU_MEMORY_LIMIT=lots was accepted"
fi
grep -qF "GRAPHRT_TOY_XPU_MEMORY_LIMIT='lots'" "$TMP/bad.txt" || { cat "$TMP/bad.txt" >&2; fail "error does not name the variable"; }

if command -v clang++ >/dev/null && [[ -d /usr/lib/llvm-14/include/c++/v1 ]]; then
  echo "== build examples/toy_device with clang++ -stdlib=libc++"
  build libcxx -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-stdlib=libc++ \
    -DCMAKE_MODULE_LINKER_FLAGS=-stdlib=libc++
  ldd "$TMP/libcxx/libtoy_device.so" | grep -c "libc++" >/dev/null || fail "the libc++ build does not use libc++"
  check "$TMP/libcxx/libtoy_device.so"
else
  echo "== clang++ or libc++ not installed: skipping the libc++ build"
fi

echo "all toy_device example checks passed"
