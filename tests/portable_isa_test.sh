#!/usr/bin/env bash
# The default build runs on any x86-64-v3 CPU: run the CLI and the W1-W5
# workload graphs (oneDNN's JIT, Eigen kernels, the narrow convolutions) in
# qemu emulating a Haswell, the oldest such CPU. An instruction it lacks
# (AVX-512, say, from a -march too new) stops the program with SIGILL. The
# plugins' x86-64-v4 builds (GRAPHRT_ISA_BUILDS) must use AVX-512 and must
# not be what a Haswell loads.
# usage: portable_isa_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
QEMU=$(command -v qemu-x86_64 || true)
[[ -n "$QEMU" ]] || { echo "SKIP: qemu-x86_64 not installed (Debian: qemu-user)"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
run() { "$QEMU" -cpu Haswell "$@" 2> >(grep -v "TCG doesn't support requested feature" >&2); }

echo "== graphrt run examples/graphs/mlp.pbtxt on a Haswell"
run "$BUILD/bin/graphrt" run "$SRC/examples/graphs/mlp.pbtxt" >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt" >&2; fail "graphrt run"; }
grep -q "probs:0: dtype=float shape=\[1,2\]" "$TMP/run.txt" || { cat "$TMP/run.txt" >&2; fail "graphrt run output"; }

echo "== the workload graphs on a Haswell"
[[ -x "$BUILD/bin/bench_workloads_test" ]] || fail "$BUILD/bin/bench_workloads_test was not built"
run "$BUILD/bin/bench_workloads_test" --gtest_brief=1 >"$TMP/w.txt" 2>&1 || { cat "$TMP/w.txt" >&2; fail "bench_workloads_test"; }
plugin_dir=$(dirname "$("$BUILD/bin/graphrt" plugins | grep -o '/[^ ]*/libgraphrt_ops_math_cpu.so' | head -1)")
plugin_dir=${plugin_dir%/x86-64-v4}
if [[ -d "$plugin_dir/x86-64-v4" ]]; then
  echo "== the x86-64-v4 builds use AVX-512; a Haswell loads the others"
  for f in "$plugin_dir"/x86-64-v4/*.so; do
    zmm=$(objdump -d --no-show-raw-insn "$f" | grep -c '%zmm' || true)  # -c: reads it all (pipefail)
    ((zmm > 0)) || fail "$f has no AVX-512 instruction"
  done
  run "$BUILD/bin/graphrt" plugins >"$TMP/plugins.txt" 2>&1 || { cat "$TMP/plugins.txt" >&2; fail "graphrt plugins"; }
  grep -qF "$plugin_dir/libgraphrt_ops_math_cpu.so" "$TMP/plugins.txt" || { cat "$TMP/plugins.txt" >&2; fail "no math plugin"; }
  if grep -q "/x86-64-v4/" "$TMP/plugins.txt"; then
    cat "$TMP/plugins.txt" >&2
    fail "a Haswell loaded an x86-64-v4 build"
  fi
fi
echo PASS
