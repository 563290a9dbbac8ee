#!/usr/bin/env bash
# Installs graphrt, builds examples/c_client (C only) out of tree against the
# install (find_package(graphrt), graphrt::c) and runs it: results match a
# NumPy evaluation of the bundled graph, the program links libgraphrt_c and
# no C++ symbol, and errors name the file.
# usage: example_c_client_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

source "$(dirname "$0")/../examples_install.sh" "$1" "$2"

echo "== the C API is installed"
[[ -f "$PREFIX/include/graphrt/c_client.h" ]] || fail "graphrt/c_client.h was not installed"
ls "$PREFIX"/lib*/libgraphrt_c.so* >/dev/null 2>&1 || fail "libgraphrt_c.so was not installed"

echo "== build examples/c_client against the install"
# A sanitizer build tree's libraries need the sanitizer runtime in the program.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
extra=()
sanitized=0
if [[ "$(cache_value GRAPHRT_SANITIZE)" == "ON" ]]; then
  # The instrumented C++ libraries behind libgraphrt_c need UBSan's C++
  # runtime part (and so libstdc++) in the program: sanitizer builds only.
  sanitized=1
  extra=(-DCMAKE_C_COMPILER="$(cache_value CMAKE_C_COMPILER)" -DCMAKE_C_FLAGS="-fsanitize=address,undefined"
         -DCMAKE_EXE_LINKER_FLAGS="-fsanitize-link-c++-runtime -lstdc++")
fi
cmake -S "$SRC/examples/c_client" -B "$TMP/c_client" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >"$TMP/configure.log" 2>&1 ||
  { cat "$TMP/configure.log" >&2; fail "configuring examples/c_client"; }
cmake --build "$TMP/c_client" -j 2 >"$TMP/build.log" 2>&1 ||
  { cat "$TMP/build.log" >&2; fail "building examples/c_client"; }
PROG="$TMP/c_client/c_client"
[[ -x "$PROG" ]] || fail "$PROG was not built"

echo "== it links the C library and no C++ ABI"
readelf -d "$PROG" | grep -c 'NEEDED.*libgraphrt_c\.so' >/dev/null || { readelf -d "$PROG" >&2; fail "not linked to libgraphrt_c"; }
cxx_libs='libgraphrt_core|libgraphrt_client|libstdc\+\+|libprotobuf'
((sanitized)) && cxx_libs='libgraphrt_core|libgraphrt_client|libprotobuf'
if readelf -d "$PROG" | grep -cE "NEEDED.*($cxx_libs)" >/dev/null; then
  readelf -d "$PROG" >&2
  fail "the C program links a C++ library directly"
fi
if ((!sanitized)) && nm -D --undefined-only "$PROG" | grep -c ' _Z' >/dev/null; then
  nm -D --undefined-only "$PROG" >&2
  fail "the C program needs C++ symbols"
fi

# probs = Softmax(Relu(x W + b) W2) with the bundled graph's constants,
# evaluated independently in float64.
expected() {
  "$PY" -c "
import numpy as np, sys
W = np.array([0.5, -1.0, 0.25, 1.0, -0.5, 0.75, 0.5, 0.0, 1.0, 0.25, -0.25, 0.5]).reshape(3, 4)
b = np.array([0.1, 0.2, -0.3, 0.0])
W2 = np.array([1.0, -1.0, 0.5, 0.5, -1.0, 1.0, 0.25, 0.75]).reshape(4, 2)
x = np.array([float(v) for v in sys.argv[1:]]).reshape(1, 3)
l = np.maximum(x @ W + b, 0) @ W2
p = np.exp(l - l.max()); p /= p.sum()
print(' '.join(repr(v) for v in p.ravel()))
" "$@"
}
check_values() {  # output-file expected-values...
  local out=$1; shift
  "$PY" -c "
import re, sys
line = open(sys.argv[1]).read()
m = re.search(r'probs:0: dtype 1 shape \[1, 2\] values \[([^]]*)\]', line)
assert m, line
got = [float(v) for v in m.group(1).split(',')]
want = [float(v) for v in sys.argv[2:]]
assert len(got) == len(want) and all(abs(g - w) <= 1e-5 for g, w in zip(got, want)), (got, want)
" "$out" "$@"
}

echo "== run the bundled graph"
"$PROG" >"$TMP/run1.txt" 2>&1 || { cat "$TMP/run1.txt" >&2; fail "c_client"; }
cat "$TMP/run1.txt"
check_values "$TMP/run1.txt" $(expected 1 2 3) || fail "values for x = [1, 2, 3]"
"$PROG" 0.5 -1 2 >"$TMP/run2.txt" 2>&1 || { cat "$TMP/run2.txt" >&2; fail "c_client 0.5 -1 2"; }
cat "$TMP/run2.txt"
check_values "$TMP/run2.txt" $(expected 0.5 -1 2) || fail "values for x = [0.5, -1, 2]"

echo "== devices"
"$PROG" --devices >"$TMP/devices.txt" 2>&1 || { cat "$TMP/devices.txt" >&2; fail "c_client --devices"; }
grep -q "device:CPU:0 (CPU" "$TMP/devices.txt" || { cat "$TMP/devices.txt" >&2; fail "no CPU device listed"; }

echo "== errors name the file and the tensor"
if "$PROG" --graph "$TMP/missing.pbtxt" >"$TMP/err1.txt" 2>&1; then fail "a missing graph succeeded"; fi
grep -qF "$TMP/missing.pbtxt" "$TMP/err1.txt" || { cat "$TMP/err1.txt" >&2; fail "error does not name the file"; }
if "$PROG" --out nothing:0 >"$TMP/err2.txt" 2>&1; then fail "an unknown fetch succeeded"; fi
grep -q "NOT_FOUND.*nothing" "$TMP/err2.txt" || { cat "$TMP/err2.txt" >&2; fail "error does not name the fetch"; }
if "$PROG" 1 2 >"$TMP/err3.txt" 2>&1; then fail "a [1, 2] input succeeded"; fi
grep -q "INVALID_ARGUMENT" "$TMP/err3.txt" || { cat "$TMP/err3.txt" >&2; fail "wrong shape was not INVALID_ARGUMENT"; }

echo "all c_client example checks passed"
