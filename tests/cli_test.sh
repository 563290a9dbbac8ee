#!/usr/bin/env bash
# End-to-end tests of the `graphrt` command-line program.
# usage: cli_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
GRAPHRT="$BUILD/bin/graphrt"
PY=/usr/bin/python3
DATA="$SRC/tests/data"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

[[ -x "$GRAPHRT" ]] || { echo "FAIL: $GRAPHRT is not built" >&2; exit 1; }

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }

# run_ok NAME CMD...: runs CMD, which must succeed; its stdout lands in $OUT.
run_ok() {
  local name=$1
  shift
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  OUT=$(cat "$TMP/stdout")
  if [[ $rc -ne 0 ]]; then
    fail "$name: exit $rc from: $*"
    sed 's/^/    stderr: /' "$TMP/stderr" >&2
    return 1
  fi
  return 0
}

# expect_out NAME NEEDLE: the last run_ok's stdout contains NEEDLE.
expect_out() {
  if grep -qF -- "$2" <<<"$OUT"; then
    pass "$1"
  else
    fail "$1: '$2' not in output:"
    sed 's/^/    | /' <<<"$OUT" >&2
  fi
}

# expect_error NAME RC NEEDLE CMD...: CMD exits with RC and prints exactly one
# line, "graphrt: error: ...NEEDLE...", on stderr.
expect_error() {
  local name=$1 want_rc=$2 needle=$3
  shift 3
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  local err lines
  err=$(cat "$TMP/stderr")
  lines=$(wc -l <"$TMP/stderr")
  if [[ $rc -ne $want_rc ]]; then
    fail "$name: exit $rc, want $want_rc (stderr: $err)"
  elif [[ $lines -ne 1 ]]; then
    fail "$name: want one stderr line, got $lines:"
    sed 's/^/    stderr: /' "$TMP/stderr" >&2
  elif [[ $err != "graphrt: error: "* ]]; then
    fail "$name: stderr does not start with 'graphrt: error: ': $err"
  elif ! grep -qF -- "$needle" <<<"$err"; then
    fail "$name: '$needle' not in: $err"
  else
    pass "$name"
  fi
}

# --------------------------------------------------------------- inputs
"$PY" - "$TMP" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/a.npy", np.array([1, 2.5, 3], np.float32))
np.save(d + "/b.npy", np.array([4, 4.5, -3], np.float32))
np.save(d + "/a2.npy", np.array([[1, 2], [3, 4]], np.float32))
np.save(d + "/b2.npy", np.array([[10, 20], [30, 40]], np.float32))
np.save(d + "/big.npy", np.arange(100, dtype=np.float32))
np.save(d + "/zeros100.npy", np.zeros(100, np.float32))
np.save(d + "/f64.npy", np.array([1, 2, 3], np.float64))
open(d + "/bad.npy", "wb").write(b"this is not numpy")
np.save(d + "/trunc.npy", np.arange(10, dtype=np.float32))
raw = open(d + "/trunc.npy", "rb").read()
open(d + "/trunc.npy", "wb").write(raw[:-5])
EOF

cat >"$TMP/edges.pbtxt" <<'EOF'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "u" op: "Unique" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "idx" op: "Identity" input: "u:1" input: "^x"
       attr { key: "T" value { type: DT_INT32 } } device: "/device:CPU:0" }
EOF
cat >"$TMP/unknown_op.pbtxt" <<'EOF'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
node { name: "y" op: "NoSuchOpAnywhere" input: "x" }
EOF
printf 'this is { not a graph' >"$TMP/garbage.pb"
# A binary GraphDef whose node name is invalid UTF-8: protobuf refuses it and
# would log to stderr on its own; we want only our one line.
printf '\x0a\x04\x0a\x02\xff\xfe' >"$TMP/bad_utf8.pb"
: >"$TMP/empty.pb"

# ----------------------------------------------------------------- run
if run_ok "run add" "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a:0=$TMP/a.npy" \
    --feed "b:0=$TMP/b.npy" --fetch sum:0 --out "$TMP/out"; then
  expect_out "run add prints values" "sum:0: dtype=float shape=[3] values=[5, 7, 0]"
  if "$PY" - "$TMP" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
got = np.load(d + "/out/sum_0.npy")
want = np.load(d + "/a.npy") + np.load(d + "/b.npy")
assert got.dtype == np.float32, got.dtype
assert got.shape == (3,), got.shape
assert np.array_equal(got, want), (got, want)
EOF
  then pass "run --out writes sum_0.npy that numpy reads back"; else fail "run --out contents"; fi
fi

# tests/data/add.pb is add.pbtxt in binary form (protoc --encode=graphrt.proto.GraphDef).
if run_ok "run binary graph" "$GRAPHRT" run "$DATA/add.pb" --feed "a:0=$TMP/a.npy" \
    --feed "b:0=$TMP/b.npy" --fetch sum:0; then
  expect_out "run binary graph prints values" "sum:0: dtype=float shape=[3] values=[5, 7, 0]"
fi
cp "$DATA/add.pbtxt" "$TMP/text_named.pb"
if run_ok "run text graph named .pb" "$GRAPHRT" run "$TMP/text_named.pb" --feed "a:0=$TMP/a.npy" \
    --feed "b:0=$TMP/b.npy" --fetch sum:0; then
  expect_out "text graph named .pb falls back to text" "values=[5, 7, 0]"
fi

if run_ok "run 2-D, node names without :0" "$GRAPHRT" run "$DATA/add.pbtxt" \
    --feed "a=$TMP/a2.npy" --feed "b=$TMP/b2.npy" --fetch sum --threads 1; then
  expect_out "run 2-D values" "sum: dtype=float shape=[2,2] values=[11, 22, 33, 44]"
fi

if run_ok "run default fetches" "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a:0=$TMP/a.npy" \
    --feed "b:0=$TMP/b.npy"; then
  expect_out "run without --fetch fetches the sink" "sum:0: dtype=float shape=[3] values=[5, 7, 0]"
fi

if run_ok "run abbreviated" "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/big.npy" \
    --feed "b=$TMP/zeros100.npy" --fetch sum:0 --runs 3; then
  expect_out "run abbreviates large tensors" "values=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...] (100 values)"
  expect_out "run --runs reports mean time" "mean wall time per run:"
  expect_out "run --runs leaves the first run out of the mean" "over runs 2 to 3 (first run "
fi

if run_ok "run --profile" "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" \
    --feed "b=$TMP/b.npy" --runs 3 --profile; then
  expect_out "profile skips the first run" "mean over 2 traced runs"
  expect_out "profile names the op of a node" "100.0%      4  (all nodes)"
  if grep -Eq -- "^ +[0-9.]+ +[0-9.]+%  sum +Add(V2)? +/job:localhost/replica:0/task:0/device:CPU:0$" <<<"$OUT"; then
    pass "profile lists the node, its op and device"
  else
    fail "profile lists the node, its op and device:"
    sed 's/^/    | /' <<<"$OUT" >&2
  fi
fi

# ------------------------------------------- trace, placement, bench
# relu_mm: h = Relu(x) [2,3]; y = MatMul(h, w) [2,4]; total = Sum(y) [].
cat >"$TMP/relu_mm.pbtxt" <<'EOF'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 3 } dim { size: 4 } } } } }
node { name: "h" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "MatMul" input: "h" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                            int_val: 0 int_val: 1 } } } }
node { name: "total" op: "Sum" input: "y" input: "axes" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "Tidx" value { type: DT_INT32 } } }
versions { producer: 27 }
EOF
# A placeholder with an unknown batch dim; one of strings.
cat >"$TMP/batch.pbtxt" <<'EOF'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
node { name: "r" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
EOF
cat >"$TMP/strings.pbtxt" <<'EOF'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_STRING } } }
versions { producer: 27 }
EOF
"$PY" - "$TMP" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/x23.npy", np.array([[1, -2, 3], [-4, 5, 6]], np.float32))
np.save(d + "/w34.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
EOF

if run_ok "run --trace" "$GRAPHRT" run "$TMP/relu_mm.pbtxt" --feed "x=$TMP/x23.npy" \
    --feed "w=$TMP/w34.npy" --fetch total --runs 2 --trace "$TMP/trace.json"; then
  # Relu(x) = [[1,0,3],[0,5,6]]; times arange(12).reshape(3,4):
  # [[24,28,32,36],[68,79,90,101]], which sums to 458.
  expect_out "run --trace still prints the fetch" "total: dtype=float shape=[] values=[458]"
  expect_out "run --trace names the file" "wrote trace of the last run to $TMP/trace.json"
  if "$PY" - "$TMP/trace.json" <<'EOF'
import json, sys
trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
xs = [e for e in events if e["ph"] == "X"]
ms = [e for e in events if e["ph"] == "M"]
names = [e["name"] for e in xs]
# One event per node the step ran, each once.
for node in ["h", "y", "total"]:
    assert names.count(node) == 1, (node, names)
assert len(names) == len(set(names)), names
ops = {e["name"]: e["cat"] for e in xs}
assert ops["h"] == "Relu" and ops["y"] == "MatMul" and ops["total"] == "Sum", ops
for e in xs:
    assert e["dur"] >= 0 and e["ts"] >= 0, e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
y = [e for e in xs if e["name"] == "y"][0]
assert y["args"]["outputs"] == [{"slot": 0, "dtype": "float", "shape": [2, 4], "bytes": 32}], y["args"]
# Every event's process and thread are named by metadata events.
procs = {e["pid"]: e["args"]["name"] for e in ms if e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]) for e in ms if e["name"] == "thread_name"}
assert procs[y["pid"]].endswith("/device:CPU:0"), procs
for e in xs:
    assert (e["pid"], e["tid"]) in threads, e
# Events on one track do not overlap (a track shows one at a time).
by_track = {}
for e in xs:
    by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
for spans in by_track.values():
    spans.sort()
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s1 >= e0 - 1e-6, spans
EOF
  then pass "run --trace writes a Chrome trace: one event per node, shapes and bytes"; else fail "run --trace contents"; fi
fi
expect_error "run --trace to an unwritable path" 1 "--trace $TMP/no/such/dir/t.json: cannot write" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" --feed "b=$TMP/b.npy" --trace "$TMP/no/such/dir/t.json"

if run_ok "run --log-placement" "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" \
    --feed "b=$TMP/b.npy" --log-placement; then
  expect_out "--log-placement heading" "device placement (from "
  expect_out "--log-placement names node, op and device" \
    "sum: (AddV2): /job:localhost/replica:0/task:0/device:CPU:0"
fi

if run_ok "dot --placed" "$GRAPHRT" dot "$TMP/relu_mm.pbtxt" --placed --fetch total; then
  expect_out "dot --placed colours a node" '"y" [label="y\nMatMul", style="rounded,filled", fillcolor="#8dd3c7"'
  expect_out "dot --placed legend" 'label="/job:localhost/replica:0/task:0/device:CPU:0", style="rounded,filled", fillcolor="#8dd3c7"'
fi
if run_ok "dot --placed, a node the run skips" "$GRAPHRT" dot "$TMP/relu_mm.pbtxt" --placed --fetch h; then
  expect_out "dot --placed: unrun node dashed" '"total" [label="total\nSum", style="rounded,dashed"];'
  expect_out "dot --placed: legend for unrun nodes" "not run (pruned or rewritten)"
fi
expect_error "dot: run options need --placed" 2 "--fetch applies only with --placed" \
  "$GRAPHRT" dot "$TMP/relu_mm.pbtxt" --fetch total

# bench_stats_ok: the last output has the five statistics, ascending, and a
# throughput.
bench_stats_ok() {
  "$PY" -c '
import re, sys
out = sys.stdin.read()
vals = []
for stat in ["min", "median", "p90", "p99", "max"]:
    m = re.search(r"^  %s +([0-9.]+)$" % stat, out, re.M)
    assert m, (stat, out)
    vals.append(float(m.group(1)))
assert all(a <= b for a, b in zip(vals, vals[1:])), vals
assert vals[0] > 0, vals
m = re.search(r"^throughput: ([0-9.]+) runs/s$", out, re.M)
assert m and float(m.group(1)) > 0, out
' <<<"$OUT"
}
if run_ok "bench mlp" "$GRAPHRT" bench "$SRC/examples/graphs/mlp.pbtxt" --runs 50 --warmup 2; then
  expect_out "bench counts the timed runs" "timed:   50 runs in"
  expect_out "bench reports the first warm-up run" "warm-up: 2 runs, the first"
  if bench_stats_ok; then pass "bench: min <= median <= p90 <= p99 <= max"; else fail "bench statistics"; fi
fi
if run_ok "bench --shape" "$GRAPHRT" bench "$TMP/batch.pbtxt" --shape x=5,3 --time 0.2 --threads 1; then
  expect_out "bench generates the placeholder's shape" "input:   x:0 (generated float [5,3])"
  if bench_stats_ok; then pass "bench --time statistics"; else fail "bench --time statistics"; fi
fi
if run_ok "bench generates known shapes and skips fed ones" "$GRAPHRT" bench "$TMP/relu_mm.pbtxt" \
    --feed "x=$TMP/x23.npy" --runs 3; then
  expect_out "bench generates w" "input:   w:0 (generated float [3,4])"
  if grep -q "input:   x:0" <<<"$OUT"; then fail "bench generated the fed x"; else pass "bench leaves fed x alone"; fi
fi
if run_ok "bench --shape on a PlaceholderWithDefault" "$GRAPHRT" bench "$SRC/examples/graphs/mlp.pbtxt" \
    --shape x=8,3 --runs 3; then
  expect_out "bench feeds a PlaceholderWithDefault named by --shape" "input:   x:0 (generated float [8,3])"
fi
expect_error "bench: unknown dim" 1 "placeholder 'x' has shape [?,3] with dim 0 unknown: give its size with --shape x=" \
  "$GRAPHRT" bench "$TMP/batch.pbtxt" --runs 1
expect_error "bench: --shape that does not fit" 1 "--shape x=[5,4] does not fit placeholder 'x' of shape [?,3]" \
  "$GRAPHRT" bench "$TMP/batch.pbtxt" --shape x=5,4 --runs 1
expect_error "bench: --shape of no placeholder" 1 "node 'r' is a Relu, not a placeholder" \
  "$GRAPHRT" bench "$TMP/batch.pbtxt" --shape r=5,3 --runs 1
expect_error "bench: malformed --shape" 2 "dims must be non-negative integers" \
  "$GRAPHRT" bench "$TMP/batch.pbtxt" --shape x=5,-3
expect_error "bench: inputs too large" 1 "more than the 1.0 MiB allowed" \
  "$GRAPHRT" bench "$TMP/batch.pbtxt" --shape x=100000000,3 --memory-limit 1
expect_error "bench: --runs and --time" 2 "give --runs or --time, not both" \
  "$GRAPHRT" bench "$TMP/batch.pbtxt" --runs 3 --time 1
expect_error "bench: a string placeholder" 1 "cannot generate values of dtype string for placeholder 'x'" \
  "$GRAPHRT" bench "$TMP/strings.pbtxt" --runs 1

if run_ok "run --target and --init" "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" \
    --feed "b=$TMP/b.npy" --init sum --target sum --fetch a:0; then
  expect_out "run --target still fetches" "a:0: dtype=float shape=[3] values=[1, 2.5, 3]"
fi

if run_ok "run --help" "$GRAPHRT" run --help; then
  expect_out "run --help lists --feed" "--feed"
  expect_out "run --help explains default fetches" "sink"
fi
if run_ok "--help" "$GRAPHRT" --help; then
  expect_out "--help lists commands" "inspect"
fi

# ------------------------------------------------------------ info
if run_ok "ops" "$GRAPHRT" ops; then
  expect_out "ops shows AddV2's signature" "AddV2(x: T, y: T) -> (z: T)"
  expect_out "ops shows kernels" "kernels: CPU"
  expect_out "ops shows the defining plugin" "plugin:  ops_math_cpu"
fi
if run_ok "ops filter" "$GRAPHRT" ops Placeholder; then
  expect_out "ops FILTER" "Placeholder("
fi
if run_ok "plugins" "$GRAPHRT" plugins; then
  expect_out "plugins lists ops_math_cpu" "ops_math_cpu"
  expect_out "plugins shows the ABI" "ABI 1."
fi
if run_ok "plugins --no-default-plugins" "$GRAPHRT" plugins --no-default-plugins; then
  expect_out "--no-default-plugins loads nothing" "no plugins loaded"
fi
# <libdir>/graphrt/plugins; libdir is lib or lib64 depending on the system.
PLUGIN_DIR=$(ls -d "$BUILD"/lib*/graphrt/plugins | head -n 1)
if run_ok "plugins --plugin-dir" "$GRAPHRT" plugins --no-default-plugins \
    --plugin-dir "$PLUGIN_DIR"; then
  expect_out "--plugin-dir loads a directory" "ops_math_cpu"
fi
if run_ok "devices" "$GRAPHRT" devices; then
  expect_out "devices lists CPU:0" "device:CPU:0"
  expect_out "devices shows type" "type:        CPU"
  expect_out "devices shows memory" "memory:"
  expect_out "devices shows the allocator's bytes in use, peak and limit" " peak, "
fi

# ------------------------------------------------------ inspect, dot
if run_ok "inspect" "$GRAPHRT" inspect "$DATA/add.pbtxt"; then
  expect_out "inspect node count" "nodes:    3"
  expect_out "inspect producer" "producer: 27"
  expect_out "inspect placeholders" "  a: float <unknown>"
  expect_out "inspect node line" "sum = AddV2(a, b)"
  expect_out "inspect: all ops defined" "all 2 ops used are defined by loaded plugins"
fi
if run_ok "inspect unknown op" "$GRAPHRT" inspect "$TMP/unknown_op.pbtxt"; then
  expect_out "inspect marks undefined ops" "UNDEFINED OPS"
  expect_out "inspect names the undefined op" "!! NoSuchOpAnywhere (used by: y)"
  expect_out "inspect placeholder shape" "x: float [?,3]"
fi
if run_ok "inspect device" "$GRAPHRT" inspect "$TMP/edges.pbtxt"; then
  expect_out "inspect shows devices and control inputs" "idx = Identity(u:1, ^x)  device: /device:CPU:0"
fi
if run_ok "dot" "$GRAPHRT" dot "$TMP/edges.pbtxt"; then
  expect_out "dot header" "digraph"
  expect_out "dot node label" '"u" [label="u\nUnique"];'
  expect_out "dot data edge" '"x" -> "u";'
  expect_out "dot output index label" '"u" -> "idx" [label="1"];'
  expect_out "dot control edge dashed" '"x" -> "idx" [style=dashed];'
fi

# ----------------------------------------------------------- errors
expect_error "missing graph" 1 "$TMP/nope.pbtxt: No such file" \
  "$GRAPHRT" run "$TMP/nope.pbtxt"
expect_error "garbage graph" 1 "Could not parse '$TMP/garbage.pb'" \
  "$GRAPHRT" run "$TMP/garbage.pb"
expect_error "invalid UTF-8 graph" 1 "Could not parse" \
  "$GRAPHRT" inspect "$TMP/bad_utf8.pb"
expect_error "empty graph has nothing to run" 1 "no sink node" \
  "$GRAPHRT" run "$TMP/empty.pb"
expect_error "unknown fetch" 1 "no node named 'nope'" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" --feed "b=$TMP/b.npy" --fetch nope:0
expect_error "fetch output out of range" 1 "has 1 output" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" --feed "b=$TMP/b.npy" --fetch sum:3
expect_error "unknown feed" 1 "no node named 'zz'" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "zz:0=$TMP/a.npy" --fetch sum:0
expect_error "bad npy" 1 "$TMP/bad.npy: not a .npy file (bad magic" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/bad.npy" --feed "b=$TMP/b.npy"
expect_error "truncated npy" 1 "$TMP/trunc.npy: truncated" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/trunc.npy" --feed "b=$TMP/b.npy"
expect_error "missing npy" 1 "$TMP/missing.npy: No such file" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/missing.npy" --feed "b=$TMP/b.npy"
expect_error "float64 feed for a float placeholder" 1 "expects float" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/f64.npy" --feed "b=$TMP/b.npy"
expect_error "missing feed reported by the session" 1 "b" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$TMP/a.npy" --fetch sum:0
expect_error "missing plugin file" 1 "$TMP/libnothing.so" \
  "$GRAPHRT" plugins --plugin "$TMP/libnothing.so"
expect_error "feed without =" 2 "expected NAME=FILE.npy" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --feed a.npy
expect_error "unknown option" 2 "--frobnicate" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --frobnicate
expect_error "bad --runs" 2 "--runs" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --runs 0
expect_error "missing GRAPH" 2 "missing GRAPH" "$GRAPHRT" inspect
expect_error "unknown command" 2 "unknown command 'frob'" "$GRAPHRT" frob
expect_error "no command" 2 "missing COMMAND" "$GRAPHRT"

# Hostile inputs (the reliability probe's, kept in the fuzz corpus): one clean
# error line naming the node or file, exit 1, and a small process.
CORPUS="$SRC/tests/fuzz/corpus"
hostile() {  # NAME NEEDLE CMD...
  local name=$1 needle=$2
  shift 2
  expect_error "$name" 1 "$needle" /usr/bin/time -f "%M" -o "$TMP/rss" "$@"
  local rss_kb
  rss_kb=$(tail -1 "$TMP/rss")
  if [[ "$rss_kb" -gt 1048576 ]]; then fail "$name: peak RSS ${rss_kb} KB"; else pass "$name: peak RSS ${rss_kb} KB"; fi
}
if [[ -x /usr/bin/time ]]; then
  hostile "1e12-element Const within --memory-limit" "Node 'c' (op 'Const')" \
    "$GRAPHRT" run "$CORPUS/fuzz_graph/reliability_const_1e12_bad_alloc_escapes_Create.pbtxt" --memory-limit 64
  hostile "dtype far outside the enum" "dtype value 53551684 is not a TensorFlow DataType" \
    "$GRAPHRT" run "$CORPUS/fuzz_graph/reliability_dtype_enum_huge_const_tensor_stackoverflow.pbtxt"
  hostile "2^62-element Fill" "Node 'f' (op 'Fill')" \
    "$GRAPHRT" run "$CORPUS/fuzz_graph/reliability_fill_2p62_float.pbtxt"
  hostile ".npy of 300M zero-byte strings" "zero-byte elements" \
    "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=$CORPUS/fuzz_npy/reliability_npy_S0_300M_elements_4.8GB_alloc.npy"
  run_ok "inspect a dtype outside the enum" "$GRAPHRT" inspect \
    "$CORPUS/fuzz_graph/reliability_dtype_enum_huge_placeholder_inspect_stackoverflow.pbtxt" &&
    expect_out "inspect names the bad dtype" "10000000 (not a TensorFlow DataType)"
  # Special files are refused by their type, not read until memory runs out.
  hostile "/dev/zero as a graph" "/dev/zero: is a character device, not a regular file" "$GRAPHRT" run /dev/zero
  hostile "/dev/zero as a feed" "/dev/zero: is a character device, not a regular file" \
    "$GRAPHRT" run "$DATA/add.pbtxt" --feed "a=/dev/zero" --feed "b=$TMP/b.npy"
  # A Const of rank 1000 (TensorFlow allows 254).
  "$PY" -c "import sys; print('node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } '
    'attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { ' + 'dim { size: 1 } ' * 1000 +
    '} float_val: 2 } } } }')" >"$TMP/rank1000.pbtxt"
  hostile "rank 1000 Const" "shape has rank 1000, more than the 254" "$GRAPHRT" run "$TMP/rank1000.pbtxt"
  # A tensor summary of 2^30 floats given by one value (the last value
  # repeats): printed from its first values, not made whole (4 GiB).
  "$PY" - "$TMP/big.tfevents" <<'PYEOF'
import struct, sys
def crc32c(data):
    c = 0xFFFFFFFF
    for byte in data:
        c ^= byte
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
def masked(c): return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
def varint(x):
    out = b""
    while x >= 0x80:
        out += bytes([(x & 0x7F) | 0x80]); x >>= 7
    return out + bytes([x])
def field(num, payload): return varint(num << 3 | 2) + varint(len(payload)) + payload
def record(data):
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked(crc32c(n))) + data + struct.pack("<I", masked(crc32c(data)))
shape = field(2, field(2, varint(1 << 3) + varint(1 << 30)))
tensor = varint(1 << 3) + varint(1) + shape + field(5, struct.pack("<f", 1.0))
event = varint(2 << 3) + varint(3) + field(5, field(1, field(1, b"t") + field(8, tensor)))
open(sys.argv[1], "wb").write(record(event))
PYEOF
  run_ok "events: 2^30 floats from one value" \
    /usr/bin/time -f "%M" -o "$TMP/rss" "$GRAPHRT" events "$TMP/big.tfevents" &&
    expect_out "events: its shape and first values" "tensor  t = float [1073741824] [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ...]"
  rss_kb=$(tail -1 "$TMP/rss")
  if [[ "$rss_kb" -gt 1048576 ]]; then fail "events: peak RSS ${rss_kb} KB"; else pass "events: RSS ${rss_kb} KB"; fi
fi
expect_error "bad --memory-limit" 2 "--memory-limit" \
  "$GRAPHRT" run "$DATA/add.pbtxt" --memory-limit -1

# ckpt: TensorFlow's own checkpoints (V2 with a Snappy index, V1), .npy export.
TFDATA="$SRC/../shared/tf_testdata"
if [[ -d "$TFDATA" ]]; then
  run_ok "ckpt lists a V2 bundle" "$GRAPHRT" ckpt "$TFDATA/serving/saved_model_half_plus_two_cpu/00000123/variables/variables" &&
    expect_out "ckpt lists a2" "a2  float  []"
  run_ok "ckpt prints a tensor" "$GRAPHRT" ckpt "$TFDATA/rust/test_resources/regression-model/variables/variables" --tensor w &&
    expect_out "ckpt prints w" "values: [-0.85786223]"
  run_ok "ckpt reads V1" "$GRAPHRT" ckpt "$TFDATA/serving/bad_half_plus_two/00000123/export" --tensor Variable_1 --out "$TMP/ck" &&
    expect_out "ckpt V1 value" "values: [2]"
  if "$PY" -c "import numpy, sys; v = numpy.load(sys.argv[1]); sys.exit(0 if v.shape == () and v == 2.0 else 1)" \
      "$TMP/ck/Variable_1.npy"; then pass "ckpt --out writes .npy"; else fail "ckpt --out: wrong Variable_1.npy"; fi
  run_ok "ckpt --out of every tensor" "$GRAPHRT" ckpt "$TFDATA/rust/examples/regression_savedmodel/variables/variables" --out "$TMP/ck2" &&
    expect_out "ckpt --out names" "w_.ATTRIBUTES_VARIABLE_VALUE.npy"
  expect_error "ckpt missing key" 1 "Key nope not found in checkpoint" \
    "$GRAPHRT" ckpt "$TFDATA/serving/saved_model_counter/00000123/variables/variables" --tensor nope
  # run on a while loop graph: the default fetches skip the dead-end Exits of
  # the inner loop (inside the outer loop: not fetchable).
  run_ok "run nested loops" "$GRAPHRT" run "$TFDATA/tensorflow/grappler/nested_loop.pbtxt" &&
    expect_out "run nested loops: outer Exit" "while/Exit:0: dtype=int32 shape=[] values=[3]" &&
    expect_out "run nested loops: outer Exit_1" "while/Exit_1:0: dtype=float shape=[8,1,1]"
fi
expect_error "ckpt missing checkpoint" 1 "no checkpoint at $TMP/none" "$GRAPHRT" ckpt "$TMP/none"
head -c 100 /dev/urandom >"$TMP/junk.index"
expect_error "ckpt corrupt index" 1 "not an sstable" "$GRAPHRT" ckpt "$TMP/junk"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all cli checks passed"
