#!/usr/bin/env bash
# Installs graphrt, builds examples/embed out of tree against the install
# (find_package(graphrt), graphrt::client) and runs it on a SavedModel and
# on a GraphDef; checks that graphrt/model.h pulls in no protobuf header.
# usage: examples_embed_test.sh BUILD_DIR SOURCE_DIR SHARED_DIR
set -euo pipefail

source "$(dirname "$0")/examples_install.sh" "$1" "$2"
SHARED=${GRAPHRT_SHARED_DIR:-$3}

echo "== graphrt/model.h needs no protobuf header"
includes=$(echo '#include "graphrt/model.h"' | c++ -std=c++20 -x c++ -E -H -I"$PREFIX/include" - 2>&1 >/dev/null | grep '^\.' || true)
grep -q "graphrt/model.h" <<<"$includes" || { echo "$includes" >&2; fail "model.h was not found under $PREFIX/include"; }
if grep -q "google/protobuf\|\.pb\.h" <<<"$includes"; then
  grep "google/protobuf\|\.pb\.h" <<<"$includes" | head >&2
  fail "graphrt/model.h includes protobuf headers"
fi

build_linked_example embed
EMBED="$TMP/embed/embed"

HP2="$SHARED/tf_testdata/serving/saved_model_half_plus_two_cpu/00000123"
if [[ -d "$HP2" ]]; then
  echo "== a SavedModel: TensorFlow Serving's half_plus_two (y = 0.5 x + 2)"
  "$EMBED" "$HP2" 1 2 5 >"$TMP/hp2.txt" 2>&1 || { cat "$TMP/hp2.txt" >&2; fail "embed half_plus_two"; }
  grep -qF "input  x (x:0): float [?,1]" "$TMP/hp2.txt" || { cat "$TMP/hp2.txt" >&2; fail "input spec"; }
  grep -qF "output y (y:0): float [?,1]" "$TMP/hp2.txt" || { cat "$TMP/hp2.txt" >&2; fail "output spec"; }
  grep -qF "y = [3,1] [2.5, 3, 4.5]" "$TMP/hp2.txt" || { cat "$TMP/hp2.txt" >&2; fail "half_plus_two values"; }
else
  echo "SKIP (SavedModel part): $HP2 not found"
fi

echo "== a GraphDef: examples/graphs/mlp.pbtxt"
"$EMBED" "$SRC/examples/graphs/mlp.pbtxt" 1 2 3 >"$TMP/mlp.txt" 2>&1 || { cat "$TMP/mlp.txt" >&2; fail "embed mlp"; }
grep -qF "input  x (x:0): float [?,3]" "$TMP/mlp.txt" || { cat "$TMP/mlp.txt" >&2; fail "mlp input spec"; }
grep -qF "probs:0 = [1,2] [" "$TMP/mlp.txt" || { cat "$TMP/mlp.txt" >&2; fail "mlp output"; }

echo "== errors name what is wrong"
if "$EMBED" "$TMP/missing_model" >"$TMP/err.txt" 2>&1; then fail "a missing model loaded"; fi
grep -q "missing_model" "$TMP/err.txt" || { cat "$TMP/err.txt" >&2; fail "the error does not name the path"; }
echo PASS
