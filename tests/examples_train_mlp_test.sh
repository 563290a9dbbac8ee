#!/usr/bin/env bash
# Installs graphrt, builds examples/train_mlp out of tree against the install
# (find_package(graphrt), graphrt::client) and checks the training run: the
# loss falls, checkpoints and summaries are written, a second run resumes,
# and a run killed with SIGKILL resumes from its last checkpoint and ends
# with the same weights as an uninterrupted run.
# usage: examples_train_mlp_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

source "$(dirname "$0")/examples_install.sh" "$1" "$2"

build_linked_example train_mlp
TRAIN="$TMP/train_mlp/train_mlp"

echo "== train 200 steps: the loss falls, checkpoints and summaries are written"
"$TRAIN" "$TMP/a" --steps 200 >"$TMP/a.txt" 2>&1 || { cat "$TMP/a.txt" >&2; fail "train_mlp --steps 200"; }
cat "$TMP/a.txt"
grep -qF "starting at step 0," "$TMP/a.txt" || fail "the first run did not start at step 0"
first=$(awk '/^step/ {print $4; exit}' "$TMP/a.txt")
last=$(awk '/^step/ {v=$4} END {print v}' "$TMP/a.txt")
"$PY" -c "import sys; f, l = float('$first'), float('$last'); sys.exit(0 if l < 0.5 * f else 1)" ||
  fail "loss did not halve: $first -> $last"
[[ -f "$TMP/a/model.ckpt-200.index" && -f "$TMP/a/model.ckpt-150.index" ]] || { ls "$TMP/a" >&2; fail "checkpoints"; }
"$GRAPHRT" events "$TMP/a" --tag loss >"$TMP/events.txt" 2>&1 || { cat "$TMP/events.txt" >&2; fail "graphrt events"; }
grep -q "loss" "$TMP/events.txt" || { cat "$TMP/events.txt" >&2; fail "no loss summaries"; }

echo "== a second run resumes at step 200"
"$TRAIN" "$TMP/a" --steps 300 >"$TMP/a2.txt" 2>&1 || { cat "$TMP/a2.txt" >&2; fail "resumed run"; }
grep -qF "resuming from" "$TMP/a2.txt" && grep -qF "starting at step 200," "$TMP/a2.txt" ||
  { cat "$TMP/a2.txt" >&2; fail "the second run did not resume at 200"; }
[[ -f "$TMP/a/model.ckpt-300.index" ]] || fail "model.ckpt-300 missing"

echo "== killed with SIGKILL, then run again: resumes and ends with the uninterrupted run's weights"
"$TRAIN" "$TMP/k" --steps 1000000 >"$TMP/k.txt" 2>&1 &
pid=$!
# Kill it once its state file names a checkpoint past step 0 (it saves every
# 50 steps and keeps 5); the state file is written after the checkpoint.
latest_saved() { sed -n 's/^model_checkpoint_path: ".*model.ckpt-\([0-9]*\)"$/\1/p' "$TMP/k/checkpoint" 2>/dev/null || true; }
for _ in $(seq 1 4000); do
  s=$(latest_saved)
  [[ -n "$s" && "$s" -gt 0 ]] && break
  sleep 0.005
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
saved=$(latest_saved)
[[ -n "$saved" && "$saved" -gt 0 ]] || { cat "$TMP/k/checkpoint" "$TMP/k.txt" >&2; fail "no checkpoint past step 0 before the kill"; }
target=$((saved + 120))
"$TRAIN" "$TMP/k" --steps "$target" >"$TMP/k2.txt" 2>&1 || { cat "$TMP/k2.txt" >&2; fail "run after kill"; }
grep -qF "starting at step $saved," "$TMP/k2.txt" || { cat "$TMP/k2.txt" >&2; fail "did not resume at step $saved"; }
"$TRAIN" "$TMP/u" --steps "$target" >"$TMP/u.txt" 2>&1 || { cat "$TMP/u.txt" >&2; fail "uninterrupted run"; }
for run in u k; do
  "$GRAPHRT" ckpt "$TMP/$run/model.ckpt-$target" --out "$TMP/w$run" >"$TMP/ckpt_$run.txt" 2>&1 ||
    { cat "$TMP/ckpt_$run.txt" >&2; fail "reading run $run's checkpoint"; }
done
ls "$TMP"/wu/*.npy | grep -c "global_step" >/dev/null || { ls "$TMP/wu" >&2; fail "no global_step in the checkpoint"; }
echo "killed after checkpoint $saved; compared $(ls "$TMP"/wu/*.npy | wc -l) tensors at step $target"
for f in "$TMP"/wu/*.npy; do
  cmp -s "$f" "$TMP/wk/$(basename "$f")" || fail "$(basename "$f") after the kill differs from the uninterrupted run"
done

echo "all train_mlp example checks passed"
