#!/usr/bin/env bash
# End-to-end checks of `graphrt train` on TensorFlow's regression model
# (../shared/tf_testdata/rust/test_resources/regression-model): checkpoints
# and summaries, resuming after a stop, after kill -9 and after Ctrl-C with
# the same global step and bit-identical weights as an uninterrupted run,
# a graph without a global step, and clear errors.
# usage: cli_train_test.sh BUILD_DIR SHARED_DIR
set -euo pipefail

BUILD=$(cd "$1" && pwd)
TF="${GRAPHRT_SHARED_DIR:-$2}/tf_testdata"  # the environment may point elsewhere
GRAPHRT="$BUILD/bin/graphrt"
PY=/usr/bin/python3
TMP=$(mktemp -d)
pid=""
# A background run left behind by a failure is stopped before its files go.
cleanup() { if [[ -n $pid ]]; then kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$TMP"; }
trap cleanup EXIT
[[ -x "$GRAPHRT" ]] || { echo "FAIL: $GRAPHRT is not built" >&2; exit 1; }
# 77: CTest's skip code (SKIP_RETURN_CODE in tests/CMakeLists.txt).
[[ -d "$TF" ]] || { echo "SKIPPED: needs $TF (set GRAPHRT_SHARED_DIR to the folder that holds tf_testdata)"; exit 77; }
MODEL="$TF/rust/test_resources/regression-model"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
run_ok() {
  local name=$1; shift
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  OUT=$(cat "$TMP/stdout")
  if [[ $rc -ne 0 ]]; then
    fail "$name: exit $rc from: $*"; sed 's/^/    stderr: /' "$TMP/stderr" >&2; return 1
  fi
}
expect_out() {
  if grep -qF -- "$2" <<<"$OUT"; then pass "$1"; else fail "$1: '$2' not in output:"; sed 's/^/    | /' <<<"$OUT" >&2; fi
}
expect_error() {
  local name=$1 want_rc=$2 needle=$3; shift 3
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  local err; err=$(cat "$TMP/stderr")
  if [[ $rc -ne $want_rc ]]; then fail "$name: exit $rc, want $want_rc ($err)"
  elif ! grep -qF -- "$needle" <<<"$err"; then fail "$name: '$needle' not in: $err"
  else pass "$name"; fi
}
# The global step of DIR's latest checkpoint (from the state file).
latest_step() { sed -n 's/^model_checkpoint_path: ".*model\.ckpt-\([0-9]*\)"$/\1/p' "$1/checkpoint" 2>/dev/null || true; }
# Exports checkpoint PREFIX's tensors to DIR (one .npy each).
export_ckpt() { "$GRAPHRT" ckpt "$1" --out "$2" >/dev/null; }
same_weights() {
  local name=$1 a=$2 b=$3
  rm -rf "$TMP/wa" "$TMP/wb"
  export_ckpt "$a" "$TMP/wa" && export_ckpt "$b" "$TMP/wb" || { fail "$name: cannot read $a or $b"; return; }
  local t
  for t in w b global_step; do
    if ! cmp -s "$TMP/wa/$t.npy" "$TMP/wb/$t.npy"; then fail "$name: $t differs between $a and $b"; return; fi
  done
  pass "$name"
}

# Small inputs: w moves slowly, so the weights differ at every step and
# a wrong resume point would show.
"$PY" - "$TMP" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/x.npy", np.array([0.1, 0.2, 0.3], np.float32))
np.save(d + "/y.npy", np.array([0.4, 0.5, 0.6], np.float32))
np.save(d + "/x64.npy", np.array([0.1, 0.2, 0.3], np.float64))
np.save(d + "/xbig.npy", np.array([10, 20, 30], np.float32))
PYEOF
TRAIN=("$GRAPHRT" train "$MODEL" --tag train,serve --train-op train --loss Mean:0
       --feed "x:0=$TMP/x.npy" --feed "y:0=$TMP/y.npy" --threads 1)

# ---------------------------------------------------------------- uninterrupted
if run_ok "train 30 steps" "${TRAIN[@]}" --steps 30 --checkpoint-dir "$TMP/ref" --save-every 10 \
    --summary-dir "$TMP/ref" --summary-every 10 --log-every 10; then
  expect_out "progress lines off a terminal" "step 10/30"
  expect_out "final line" "done at step 30: 30 steps in"
  expect_out "final checkpoint named" "checkpoint: $TMP/ref/model.ckpt-30"
  # Saved at 0 (creation), 10, 20, 30.
  files=$(cd "$TMP/ref" && ls model.ckpt-*.index | sort -V | tr '\n' ' ')
  [[ $files == "model.ckpt-0.index model.ckpt-10.index model.ckpt-20.index model.ckpt-30.index " ]] &&
    pass "checkpoint cadence" || fail "checkpoint cadence: $files"
  [[ -f $TMP/ref/graph.pbtxt ]] && pass "graph.pbtxt written" || fail "no graph.pbtxt"
  run_ok "graphrt ckpt on the result" "$GRAPHRT" ckpt "$TMP/ref/model.ckpt-30" && {
    expect_out "checkpoint has w" "w  float  [1]"
    expect_out "checkpoint has the added global step" "global_step  int64  []"
  }
  # The loss as a scalar summary at 10, 20, 30 (graphrt events prints them).
  run_ok "graphrt events" "$GRAPHRT" events "$TMP/ref" --tag loss && {
    n=$(grep -c 'loss' <<<"$OUT" || true)
    [[ $n -ge 3 ]] && pass "loss summaries written ($n)" || { fail "loss summaries: $n"; sed 's/^/    | /' <<<"$OUT" >&2; }
  }
fi
# A fresh run from the SavedModel's weights, one step: the README's step
# with these inputs changes w from -0.85786223.
run_ok "one step" "${TRAIN[@]}" --steps 1 --checkpoint-dir "$TMP/one" && {
  rm -rf "$TMP/w1"; export_ckpt "$TMP/one/model.ckpt-0" "$TMP/w1"
  "$PY" -c "import numpy as np,sys; w=np.load(sys.argv[1]); sys.exit(0 if abs(float(w[0])+0.85786223)<1e-6 else 1)" \
    "$TMP/w1/w.npy" && pass "starts from the SavedModel's weights" || fail "step 0 weights are not the SavedModel's"
}

# -------------------------------------------------------------- NaN loss
# x = 10, 20, 30 with learning rate 0.5 diverges: inf, then NaN.
rc=0
# (TRAIN with its x:0 feed replaced by xbig.npy)
"${TRAIN[@]/#x:0=*/x:0=$TMP/xbig.npy}" --steps 1000 --checkpoint-dir "$TMP/nan" --save-every 5 \
  >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
nan_step=$(sed -n 's/^graphrt: error: step \([0-9]*\): NaN loss during training. (Mean:0)$/\1/p' "$TMP/stderr")
if [[ $rc -ne 1 || -z $nan_step ]]; then
  fail "NaN loss: exit $rc, stderr: $(cat "$TMP/stderr")"
elif [[ $(latest_step "$TMP/nan") == "$nan_step" || $(( $(latest_step "$TMP/nan") % 5 )) -ne 0 ]]; then
  fail "NaN loss at step $nan_step: the latest checkpoint is $(latest_step "$TMP/nan") (want the last periodic one)"
else
  pass "NaN loss stops at step $nan_step with an error; no checkpoint of the diverged state"
fi

# ------------------------------------------------------ stop and resume
run_ok "train 12 steps" "${TRAIN[@]}" --steps 12 --checkpoint-dir "$TMP/resume" --save-every 5
run_ok "resume to 30" "${TRAIN[@]}" --steps 30 --checkpoint-dir "$TMP/resume" --save-every 5 && {
  expect_out "resumes from the last checkpoint" "resumed from $TMP/resume/model.ckpt-12 at step 12"
  expect_out "trains the remaining steps" "done at step 30: 18 steps"
}
same_weights "resumed run equals the uninterrupted one" "$TMP/ref/model.ckpt-30" "$TMP/resume/model.ckpt-30"
run_ok "nothing left to do" "${TRAIN[@]}" --steps 20 --checkpoint-dir "$TMP/resume" && \
  expect_out "already past --steps" "done at step 30: 0 steps"

# ------------------------------------------------------------ kill -9
"${TRAIN[@]}" --steps 100000000 --checkpoint-dir "$TMP/killed" --save-every 1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  s=$(latest_step "$TMP/killed"); [[ -n $s && $s -ge 5 ]] && break; sleep 0.05
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
pid=""
killed_at=$(latest_step "$TMP/killed")
if [[ -z $killed_at || $killed_at -lt 1 ]]; then
  fail "kill -9: no checkpoint was written before the kill"
else
  target=$((killed_at + 7))
  run_ok "resume after kill -9" "${TRAIN[@]}" --steps "$target" --checkpoint-dir "$TMP/killed" --save-every 1000 && {
    expect_out "kill -9: resumes at the last checkpoint's step" "resumed from $TMP/killed/model.ckpt-$killed_at at step $killed_at"
    expect_out "kill -9: same final global step" "done at step $target: 7 steps"
  }
  run_ok "uninterrupted to $target" "${TRAIN[@]}" --steps "$target" --checkpoint-dir "$TMP/straight" --save-every 1000
  same_weights "kill -9 then resume equals the uninterrupted run" "$TMP/straight/model.ckpt-$target" \
    "$TMP/killed/model.ckpt-$target"
fi

# ------------------------------------------------------------- Ctrl-C
"${TRAIN[@]}" --steps 100000000 --checkpoint-dir "$TMP/int" --save-every 100000000 >"$TMP/int.out" 2>&1 &
pid=$!
for _ in $(seq 1 200); do [[ -f $TMP/int/checkpoint ]] && break; sleep 0.05; done
sleep 0.3
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
pid=""
stopped=$(sed -n 's/^interrupted at step \([0-9]*\):.*/\1/p' "$TMP/int.out")
if [[ $rc -ne 130 || -z $stopped ]]; then
  fail "Ctrl-C: exit $rc, output: $(cat "$TMP/int.out")"
elif [[ $(latest_step "$TMP/int") != "$stopped" || $stopped -lt 1 ]]; then
  fail "Ctrl-C: stopped at $stopped but the latest checkpoint is $(latest_step "$TMP/int")"
else
  pass "Ctrl-C saves the step it stopped at ($stopped) and exits 130"
fi

# ----------------------------------------- a GraphDef, --init, no global step
GRAPH="$TF/rust/examples/regression/model.pb"
if [[ -f $GRAPH ]]; then
  run_ok "GraphDef with --init" "$GRAPHRT" train "$GRAPH" --train-op train --init init --loss Mean:0 \
      --feed "x=$TMP/x.npy" --feed "y=$TMP/y.npy" --steps 4 --checkpoint-dir "$TMP/gd" --threads 1 && {
    expect_out "GraphDef trains" "done at step 4: 4 steps"
    [[ $(latest_step "$TMP/gd") == 4 ]] && pass "GraphDef checkpoints numbered by the added global step" ||
      fail "GraphDef latest checkpoint: $(latest_step "$TMP/gd")"
  }
  # Without --init nor collections, the initializers are found by name
  # (w/Assign, b/Assign).
  run_ok "GraphDef without --init" "$GRAPHRT" train "$GRAPH" --train-op train --feed "x=$TMP/x.npy" \
      --feed "y=$TMP/y.npy" --steps 2 --threads 1 && expect_out "default initializers" "done at step 2: 2 steps"
fi

# ------------------------------------------- a graph with its own global step
# v += 1 per step; `train` also steps global_step, `train_no_step` does not.
cat >"$TMP/own_step.pbtxt" <<'EOF'
node { name: "global_step" op: "VariableV2"
       attr { key: "dtype" value { type: DT_INT64 } } attr { key: "shape" value { shape { } } } }
node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }
node { name: "global_step/Assign" op: "Assign" input: "global_step" input: "zero" attr { key: "T" value { type: DT_INT64 } } }
node { name: "one64" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 1 } } } }
node { name: "step_up" op: "AssignAdd" input: "global_step" input: "one64" attr { key: "T" value { type: DT_INT64 } } }
node { name: "v" op: "VariableV2"
       attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "v/Assign" op: "Assign" input: "v" input: "one" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "v_up" op: "AssignAdd" input: "v" input: "one" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "train" op: "NoOp" input: "^v_up" input: "^step_up" }
node { name: "train_no_step" op: "NoOp" input: "^v_up" }
EOF
run_ok "graph with its own global step" "$GRAPHRT" train "$TMP/own_step.pbtxt" --train-op train --steps 3 \
    --checkpoint-dir "$TMP/own" --threads 1 && {
  expect_out "own global step reaches --steps" "done at step 3: 3 steps"
  run_ok "its checkpoint" "$GRAPHRT" ckpt "$TMP/own/model.ckpt-3" --tensor v && {
    expect_out "v after 3 steps" "values: [4]"
    expect_out "no global step added" "(V2 bundle, 2 tensors)"
  }
}
expect_error "a train op that does not step the global step" 1 "the train op must increment it" \
  "$GRAPHRT" train "$TMP/own_step.pbtxt" --train-op train_no_step --steps 3 --threads 1

# --------------------------------------------------------------- errors
expect_error "missing --train-op" 2 "--train-op NODE is required" "$GRAPHRT" train "$MODEL" --steps 3
expect_error "missing --steps" 2 "--steps N is required" "$GRAPHRT" train "$MODEL" --train-op train
expect_error "bad --steps" 2 "--steps must be at least 1" "$GRAPHRT" train "$MODEL" --train-op train --steps 0
expect_error "unknown train op" 1 "--train-op 'trian': no node named 'trian'" \
  "$GRAPHRT" train "$MODEL" --tag train,serve --train-op trian --steps 3
expect_error "feed of the wrong dtype" 1 "holds double but placeholder 'x' expects float" \
  "$GRAPHRT" train "$MODEL" --tag train,serve --train-op train --feed "x:0=$TMP/x64.npy" --steps 3
expect_error "missing feed" 1 "step 1: Node 'y' (op 'Placeholder'): You must feed a value" "$GRAPHRT" train "$MODEL" --tag train,serve --train-op train \
  --feed "x:0=$TMP/x.npy" --steps 3 --threads 1
expect_error "an init that leaves a variable out" 1 "Variables not initialized: b" \
  "${TRAIN[@]}" --init w/Assign --steps 3

[[ $failures -eq 0 ]] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all cli_train checks passed"
