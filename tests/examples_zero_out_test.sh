#!/usr/bin/env bash
# Installs graphrt, builds examples/zero_out out of tree against the install
# (find_package(graphrt)), and runs it with the installed `graphrt`.
# usage: examples_zero_out_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

source "$(dirname "$0")/examples_install.sh" "$1" "$2"

echo "== the installed graphrt finds the installed standard plugins"
"$GRAPHRT" plugins >"$TMP/plugins.txt" 2>&1 || { cat "$TMP/plugins.txt" >&2; fail "graphrt plugins"; }
grep -q "ops_math_cpu" "$TMP/plugins.txt" || { cat "$TMP/plugins.txt" >&2; fail "ops_math_cpu not listed"; }
# ...from the install prefix, not from the build tree.
grep "ops_math_cpu" "$TMP/plugins.txt" | grep -qF "$PREFIX/" ||
  { cat "$TMP/plugins.txt" >&2; fail "ops_math_cpu was not loaded from $PREFIX"; }

echo "== build examples/zero_out against the install"
cmake -S "$SRC/examples/zero_out" -B "$TMP/zero_out" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release >"$TMP/configure.log" 2>&1 ||
  { cat "$TMP/configure.log" >&2; fail "configuring examples/zero_out"; }
cmake --build "$TMP/zero_out" -j 2 >"$TMP/build.log" 2>&1 ||
  { cat "$TMP/build.log" >&2; fail "building examples/zero_out"; }
PLUGIN="$TMP/zero_out/libzero_out.so"
[[ -f "$PLUGIN" ]] || fail "$PLUGIN was not built"

echo "== the plugin exports only its entry point"
if command -v nm >/dev/null; then
  exported=$(nm -D --defined-only "$PLUGIN" | awk '$2 ~ /^[TDBR]$/ {print $3}')
  [[ "$exported" == "graphrt_plugin_init" ]] || fail "unexpected exported symbols: $exported"
fi

echo "== graphrt ops sees ZeroOut"
"$GRAPHRT" ops ZeroOut --plugin "$PLUGIN" >"$TMP/ops.txt" 2>&1 || { cat "$TMP/ops.txt" >&2; fail "graphrt ops"; }
grep -qF "ZeroOut(to_zero: int32) -> (zeroed: int32)" "$TMP/ops.txt" ||
  { cat "$TMP/ops.txt" >&2; fail "ZeroOut signature"; }
grep -qF "plugin:  zero_out" "$TMP/ops.txt" || { cat "$TMP/ops.txt" >&2; fail "ZeroOut's plugin"; }

echo "== run zero_out.pbtxt"
"$PY" -c "import numpy as np; np.save('$TMP/x.npy', np.array([5, 3, 2], np.int32))"
"$GRAPHRT" run "$SRC/examples/zero_out/zero_out.pbtxt" --plugin "$PLUGIN" \
  --feed "x:0=$TMP/x.npy" --fetch zeroed:0 --out "$TMP/out" >"$TMP/run.txt" 2>&1 ||
  { cat "$TMP/run.txt" >&2; fail "graphrt run"; }
cat "$TMP/run.txt"
grep -qF "zeroed:0: dtype=int32 shape=[3] values=[5, 0, 0]" "$TMP/run.txt" || fail "printed values"
"$PY" -c "
import numpy as np
got = np.load('$TMP/out/zeroed_0.npy')
assert got.dtype == np.int32 and got.tolist() == [5, 0, 0], got
" || fail "zeroed_0.npy contents"

echo "== Python: load_op_library gives zero_out(), as TensorFlow's does"
if [[ -f "$BUILD/python/graphrt/__init__.py" ]]; then
  PYTHONPATH="$BUILD/python" "$PY" - "$PLUGIN" <<'PYEOF' || fail "load_op_library(...).zero_out from Python"
import sys

import numpy as np

import graphrt
import graphrt.compat.v1 as tf

lib = graphrt.load_op_library(sys.argv[1])
x = tf.placeholder(tf.int32, [3], name="x")
z = lib.zero_out(x)
assert z.op.type == "ZeroOut" and z.name == "ZeroOut:0" and z.dtype == tf.int32, z
with tf.Session() as sess:
    got = sess.run(z, {x: np.array([5, 3, 2], np.int32)})
assert got.tolist() == [5, 0, 0], got
print("zero_out from Python:", got.tolist())
PYEOF
fi

echo "== without --plugin the op is unknown, and the error says so"
if "$GRAPHRT" run "$SRC/examples/zero_out/zero_out.pbtxt" --feed "x:0=$TMP/x.npy" \
    --fetch zeroed:0 >"$TMP/noplugin.txt" 2>&1; then
  fail "running ZeroOut without its plugin succeeded"
fi
grep -q "ZeroOut" "$TMP/noplugin.txt" || { cat "$TMP/noplugin.txt" >&2; fail "error does not name ZeroOut"; }

echo "== GRAPHRT_PLUGIN_PATH: a directory on the path is loaded like the standard ones"
mkdir -p "$TMP/pathdir"
cp "$PLUGIN" "$TMP/pathdir/"
GRAPHRT_PLUGIN_PATH="::$TMP/pathdir:" "$GRAPHRT" plugins >"$TMP/path_plugins.txt" 2>&1 ||
  { cat "$TMP/path_plugins.txt" >&2; fail "graphrt plugins with GRAPHRT_PLUGIN_PATH"; }
grep "zero_out" "$TMP/path_plugins.txt" | grep -qF "$TMP/pathdir/libzero_out.so" ||
  { cat "$TMP/path_plugins.txt" >&2; fail "zero_out not loaded from GRAPHRT_PLUGIN_PATH"; }
grep -q "ops_math_cpu" "$TMP/path_plugins.txt" || fail "standard plugins missing next to GRAPHRT_PLUGIN_PATH"
GRAPHRT_PLUGIN_PATH="$TMP/pathdir" "$GRAPHRT" run "$SRC/examples/zero_out/zero_out.pbtxt" \
  --feed "x:0=$TMP/x.npy" --fetch zeroed:0 >"$TMP/path_run.txt" 2>&1 ||
  { cat "$TMP/path_run.txt" >&2; fail "graphrt run with the op from GRAPHRT_PLUGIN_PATH"; }
grep -qF "values=[5, 0, 0]" "$TMP/path_run.txt" || fail "values with GRAPHRT_PLUGIN_PATH"

echo "== GRAPHRT_PLUGIN_PATH naming a missing directory: one clear error naming it"
if GRAPHRT_PLUGIN_PATH="$TMP/no_such_dir" "$GRAPHRT" plugins >"$TMP/path_bad.txt" 2>&1; then
  fail "a missing GRAPHRT_PLUGIN_PATH directory was accepted silently"
fi
grep -qF "$TMP/no_such_dir" "$TMP/path_bad.txt" || { cat "$TMP/path_bad.txt" >&2; fail "error does not name the directory"; }

echo "all zero_out example checks passed"
