#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB) from the build tree, unpacks it
# into a scratch root as dpkg would lay it out, and uses it from there: the
# CLI with its plugins, find_package(graphrt) for an out-of-tree plugin, and
# the Python module.
# usage: package_deb_test.sh BUILD_DIR SOURCE_DIR PYTHON_INSTALL_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
PYDIR=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
unset GRAPHRT_PLUGIN_PATH PYTHONPATH

echo "== cpack -G DEB"
(cd "$BUILD" && cpack -G DEB -B "$TMP/pkg") >"$TMP/cpack.log" 2>&1 || { cat "$TMP/cpack.log" >&2; fail "cpack"; }
DEB=$(ls "$TMP"/pkg/graphrt_*_amd64.deb)

echo "== contents and dependencies"
dpkg-deb -c "$DEB" | awk '{print $6}' >"$TMP/contents.txt"
for f in ./usr/bin/graphrt ./usr/lib/libgraphrt_core.so ./usr/include/graphrt/c_api.h ./usr/include/graphrt/model.h \
  ./usr/lib/cmake/graphrt/graphrtConfig.cmake ./usr/lib/graphrt/plugins/libgraphrt_device_cpu.so \
  "./usr/$PYDIR/graphrt/__init__.py"; do
  grep -qxF "$f" "$TMP/contents.txt" || fail "$f is not in the package"
done
# The AVX-512 builds of plugins (GRAPHRT_ISA_BUILDS), where the build made them.
for f in "$BUILD"/lib/graphrt/plugins/x86-64-v4/*.so; do
  [[ -e "$f" ]] || continue
  grep -qxF "./usr/lib/graphrt/plugins/x86-64-v4/$(basename "$f")" "$TMP/contents.txt" ||
    fail "the x86-64-v4 build $(basename "$f") is not in the package"
done
depends=$(dpkg-deb -f "$DEB" Depends)
for d in libprotobuf libtbb python3-numpy "python3 (>= 3."; do
  grep -q "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done

echo "== unpack into a scratch root"
ROOT="$TMP/root"
dpkg-deb -x "$DEB" "$ROOT"
GRAPHRT="$ROOT/usr/bin/graphrt"

echo "== the CLI runs with the packaged plugins"
"$GRAPHRT" run "$SRC/examples/graphs/mlp.pbtxt" >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt" >&2; fail "graphrt run"; }
grep -q "probs:0" "$TMP/run.txt" || { cat "$TMP/run.txt" >&2; fail "no probs:0 in the output"; }
"$GRAPHRT" plugins >"$TMP/plugins.txt" 2>&1 || { cat "$TMP/plugins.txt" >&2; fail "graphrt plugins"; }
grep "ops_math_cpu" "$TMP/plugins.txt" | grep -qF "$ROOT/usr/lib/graphrt/plugins/" ||
  { cat "$TMP/plugins.txt" >&2; fail "ops_math_cpu was not loaded from the package"; }

echo "== find_package(graphrt) from the package builds a plugin"
cmake -S "$SRC/examples/zero_out" -B "$TMP/zero_out" -DCMAKE_PREFIX_PATH="$ROOT/usr" \
  -DCMAKE_BUILD_TYPE=Release >"$TMP/configure.log" 2>&1 || { cat "$TMP/configure.log" >&2; fail "configure"; }
cmake --build "$TMP/zero_out" -j 2 >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log" >&2; fail "build zero_out"; }
"$GRAPHRT" ops ZeroOut --plugin "$TMP/zero_out/libzero_out.so" >"$TMP/ops.txt" 2>&1 ||
  { cat "$TMP/ops.txt" >&2; fail "graphrt ops ZeroOut"; }
grep -qF "ZeroOut(to_zero: int32) -> (zeroed: int32)" "$TMP/ops.txt" || { cat "$TMP/ops.txt" >&2; fail "ZeroOut"; }

echo "== graphrt_add_plugin_isa_build from the package: a plugin's x86-64-v3 build beside it"
mkdir -p "$TMP/isa_src"
cat >"$TMP/isa_src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(zero_out_isa CXX)
find_package(graphrt REQUIRED)
graphrt_add_plugin(zero_out SOURCES $SRC/examples/zero_out/zero_out.cc)
graphrt_add_plugin_isa_build(zero_out x86-64-v3)
CMAKE
cmake -S "$TMP/isa_src" -B "$TMP/isa" -DCMAKE_PREFIX_PATH="$ROOT/usr" -DCMAKE_BUILD_TYPE=Release \
  >"$TMP/isa_configure.log" 2>&1 || { cat "$TMP/isa_configure.log" >&2; fail "configure (isa)"; }
cmake --build "$TMP/isa" -j 2 >"$TMP/isa_build.log" 2>&1 || { cat "$TMP/isa_build.log" >&2; fail "build (isa)"; }
[[ -f "$TMP/isa/x86-64-v3/libzero_out.so" ]] || fail "no x86-64-v3 build of zero_out"
# This CPU's choice (AVX2 and FMA: the x86-64-v3 build), and the file itself when capped.
want="$TMP/isa/libzero_out.so"
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && want="$TMP/isa/x86-64-v3/libzero_out.so"
"$GRAPHRT" plugins --plugin "$TMP/isa/libzero_out.so" >"$TMP/isa_plugins.txt" 2>&1 || fail "graphrt plugins (isa)"
grep -qF "  $want" "$TMP/isa_plugins.txt" || { cat "$TMP/isa_plugins.txt" >&2; fail "expected $want loaded"; }
GRAPHRT_PLUGIN_ISA=x86-64 "$GRAPHRT" plugins --plugin "$TMP/isa/libzero_out.so" >"$TMP/isa_plugins.txt" 2>&1 ||
  fail "graphrt plugins (isa, capped)"
grep -qF "  $TMP/isa/libzero_out.so" "$TMP/isa_plugins.txt" || { cat "$TMP/isa_plugins.txt" >&2; fail "the cap"; }

echo "== the Python module from the package"
PYTHONPATH="$ROOT/usr/$PYDIR" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 - "$ROOT" "$SRC" >"$TMP/py.txt" 2>&1 <<'PY' ||
import sys
import numpy as np
import graphrt
root, src = sys.argv[1], sys.argv[2]
assert graphrt.__file__.startswith(root), graphrt.__file__
with graphrt.Session(src + "/examples/graphs/mlp.pbtxt") as sess:
    probs = sess.run("probs:0", {"x:0": np.array([[1, 2, 3]], np.float32)})
assert probs.shape == (1, 2) and abs(float(probs.sum()) - 1.0) < 1e-5, probs
print("python ok")
PY
  { cat "$TMP/py.txt" >&2; fail "python"; }
grep -q "python ok" "$TMP/py.txt" || { cat "$TMP/py.txt" >&2; fail "python"; }
echo PASS
