#!/usr/bin/env bash
# Installs graphrt and builds examples/tf_c_hello (TensorFlow C API code,
# #include "tensorflow/c/c_api.h") out of tree with
# `pkg-config --cflags --libs tensorflow` from the install's
# tensorflow-compat folder, then runs it: it prints graphrt's TensorFlow
# version and fits y = 3x - 1 through TF_AddGradients. A program that asks
# for libtensorflow.so.1 by name gets graphrt's library from that folder.
# usage: example_tf_c_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

source "$(dirname "$0")/../examples_install.sh" "$1" "$2"

compat=
for d in "$PREFIX"/lib*/graphrt/tensorflow-compat "$PREFIX"/lib/*/graphrt/tensorflow-compat; do
  [[ -d "$d" ]] && compat=$d && break
done
[[ -n "$compat" ]] || fail "no tensorflow-compat folder was installed under $PREFIX"
for f in libtensorflow.so.1 libtensorflow.so pkgconfig/tensorflow.pc; do
  [[ -e "$compat/$f" ]] || fail "$compat/$f was not installed (or is a dangling link)"
done
[[ -f "$PREFIX/include/graphrt/tensorflow/c/c_api.h" ]] || fail "tensorflow/c/c_api.h was not installed"

echo "== build examples/tf_c_hello with pkg-config tensorflow"
export PKG_CONFIG_PATH="$compat/pkgconfig"
flags=$(pkg-config --cflags --libs tensorflow) || fail "pkg-config tensorflow"
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
cc=cc
extra=()
if [[ "$(cache_value GRAPHRT_SANITIZE)" == "ON" ]]; then
  cc="$(cache_value CMAKE_C_COMPILER)"
  extra=(-fsanitize=address,undefined -fsanitize-link-c++-runtime -lstdc++)
fi
# shellcheck disable=SC2086 -- pkg-config's flags split into words
"$cc" -std=c11 -Wall -Wextra -Werror "$SRC/examples/tf_c_hello/hello_tf.c" $flags "${extra[@]}" \
  -o "$TMP/hello_tf" || fail "compiling hello_tf.c"
readelf -d "$TMP/hello_tf" | grep -q 'NEEDED.*libgraphrt_tf_c\.so' || { readelf -d "$TMP/hello_tf" >&2; fail "not linked to libgraphrt_tf_c"; }

echo "== run it"
"$TMP/hello_tf" >"$TMP/out.txt" 2>&1 || { cat "$TMP/out.txt" >&2; fail "hello_tf failed"; }
cat "$TMP/out.txt"
grep -q "^TensorFlow C library version 1.15.0-graphrt" "$TMP/out.txt" || fail "version line"
grep -q "^fitted w=3.000 b=-1.000 loss=0.0000" "$TMP/out.txt" || fail "the fit (w=3, b=-1)"

echo "== -ltensorflow links graphrt's library (the linker script)"
"$cc" -std=c11 "$SRC/examples/tf_c_hello/hello_tf.c" -I"$PREFIX/include/graphrt" -L"$compat" -ltensorflow \
  -Wl,-rpath,"$compat/../.." "${extra[@]}" -o "$TMP/hello_l" || fail "linking with -ltensorflow"
"$TMP/hello_l" | grep -q "^fitted w=3.000 b=-1.000" || fail "the -ltensorflow build's fit"

echo "== libtensorflow.so.1 by name is graphrt's"
LD_LIBRARY_PATH="$compat" "$PY" -c "
import ctypes
lib = ctypes.CDLL('libtensorflow.so.1')
lib.TF_Version.restype = ctypes.c_char_p
v = lib.TF_Version().decode()
assert v.startswith('1.15.0-graphrt'), v
print('libtensorflow.so.1:', v)
" || fail "dlopen libtensorflow.so.1"

echo "all tf_c_hello example checks passed"
