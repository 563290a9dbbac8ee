#!/usr/bin/env bash
# What the plugins' x86-64-v4 builds bring (GRAPHRT_ISA_BUILDS): element-wise
# kernels (Exp, Tanh, Sigmoid, Mul, Cast to and from bfloat16, Sum) on a
# 64 Ki-float tensor that stays in L2, timed kernel by kernel with
# `graphrt run --profile` (1 thread), alternating the x86-64-v4 builds and
# the x86-64-v3 files (GRAPHRT_PLUGIN_ISA caps the level) in one sitting.
# Needs a CPU with AVX-512; on others both columns run the x86-64-v3 files.
#
# Usage: bench/isa_builds.sh [ROUNDS]      (BUILD_DIR, default build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
rounds=${1:-3}
cli=$build/bin/graphrt
[ -x "$cli" ] || { echo "isa_builds.sh: build $cli first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

float_op() { echo "node { name: \"$1\" op: \"$2\" input: \"$3\" attr { key: \"T\" value { type: DT_FLOAT } } }"; }
cast() {
  echo "node { name: \"$1\" op: \"Cast\" input: \"$2\" attr { key: \"SrcT\" value { type: $3 } }" \
       "attr { key: \"DstT\" value { type: $4 } } }"
}
{
  echo 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }'
  float_op exp Exp x
  float_op tanh Tanh x
  float_op sigmoid Sigmoid x
  echo 'node { name: "mul" op: "Mul" input: "x" input: "x" attr { key: "T" value { type: DT_FLOAT } } }'
  cast to_bf16 x DT_FLOAT DT_BFLOAT16
  cast from_bf16 to_bf16 DT_BFLOAT16 DT_FLOAT
  echo 'node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }' \
       'attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }'
  echo 'node { name: "sum" op: "Sum" input: "exp" input: "axis" attr { key: "T" value { type: DT_FLOAT } }' \
       'attr { key: "Tidx" value { type: DT_INT32 } } }'
} >"$tmp/elementwise.pbtxt"
# x = the peers' input pattern, 65536 floats (Debian's python3 and numpy, as bench/run.sh uses).
/usr/bin/python3 -c 'import numpy as np, sys
np.save(sys.argv[1], ((np.arange(1 << 16) * 7919) % 1000 / 1000 - 0.5).astype(np.float32))' "$tmp/x.npy"

# Kernel time per run of each op type, in microseconds, as "Op=us" words.
profile() {
  GRAPHRT_PLUGIN_ISA=$1 "$cli" run "$tmp/elementwise.pbtxt" --feed "x=$tmp/x.npy" --fetch tanh --fetch sigmoid \
    --fetch mul --fetch from_bf16 --fetch sum --runs 3000 --threads 1 --profile 2>&1 |
    sed -n '/nodes  op$/,/(all nodes)/p' | awk 'NR > 1 && $4 !~ /^(_|\(|Const$)/ {printf "%s=%s ", $4, $1}'
}
"$cli" plugins | grep -q '/x86-64-v4/' || echo "note: no x86-64-v4 build loaded (no AVX-512, or built without GRAPHRT_ISA_BUILDS)"
for ((r = 1; r <= rounds; ++r)); do
  for isa in x86-64-v4 x86-64-v3; do
    echo "$isa round $r: $(profile $isa)"
  done
done | python3 -c '
import collections, statistics, sys
times = collections.defaultdict(lambda: collections.defaultdict(list))
for line in sys.stdin:
    isa, _, rest = line.partition(" round ")
    for word in rest.split(":", 1)[1].split():
        op, us = word.split("=")
        times[op][isa].append(float(us))
print("| op | x86-64-v4 us | x86-64-v3 us | v3 / v4 |")
print("|---|---|---|---|")
for op, by in sorted(times.items()):
    v4, v3 = statistics.median(by["x86-64-v4"]), statistics.median(by["x86-64-v3"])
    print("| %s | %.2f | %.2f | %.2f |" % (op, v4, v3, v3 / v4))
print("medians of %d rounds; Cast is both casts together" % len(next(iter(times.values()))["x86-64-v4"]))
'
