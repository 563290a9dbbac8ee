#!/usr/bin/env bash
# Runs the benchmark workloads W1..W5 (and the training steps W6..W8, the
# control-flow workloads W9 (LSTM: while loop vs unrolled) and W10 (scalar
# while loop) when --only names them) through graphrt for 1 and 2 threads, each
# workload in a fresh process (as the peers do: see ../shared/peers/README.md,
# problem 6), and prints a markdown table of the medians. When the peer
# systems are installed it runs their same workloads in the same sitting
# (commands as in ../shared/peers/run_all.sh) and prints their figures beside
# ours with ratios; otherwise it compares with the peers' recorded figures
# (../shared/peers/results/summary.md), marked "rec.".
#
# Builds nothing: build first, e.g.
#   ninja -C build graphrt_bench_workloads graphrt_ops_array_cpu graphrt_ops_math_cpu graphrt_ops_nn_cpu
# (W6..W8: graphrt_bench_train and the state and training plugins too; their
# peer is ../shared/peers/train_bench.py, which needs only torch. W9/W10:
# graphrt_bench_rnn and the plugins with the control-flow and TensorArray ops
# beside array/math/nn; W9's peer is bench/lstm_peer.py, torch's nn.LSTM.)
#
# Usage: bench/run.sh [--threads "1 2"] [--only "W1 W2 W3 W4 W5 W6 W7 W8 W9 W10"] [--repeat N] [--no-peers]
#                     [--min-time SECONDS]
# Environment: BUILD_DIR (default: build), PEERS_DIR (default: ../shared/peers;
# point it at a copy where setup.sh was run), OUT_DIR (raw output; default
# $BUILD_DIR/bench/results). Keep the machine otherwise idle.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
bin=$build/bin/graphrt_bench_workloads
train_bin=$build/bin/graphrt_bench_train
rnn_bin=$build/bin/graphrt_bench_rnn
peers=${PEERS_DIR:-$repo/../shared/peers}
[ -d "$peers" ] && peers=$(cd "$peers" && pwd)
out_dir=${OUT_DIR:-$build/bench/results}
threads="1 2"
only="W1 W2 W3 W4 W5"
repeat=1
use_peers=1
min_time=1

while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-peers) use_peers=0; shift ;;
    --min-time) min_time=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# The training workloads W6..W8 run in graphrt_bench_train, W9/W10 in
# graphrt_bench_rnn, the rest here.
train_only="" infer_only="" rnn_only=""
for W in $only; do
  case $W in W6|W7|W8) train_only+=" $W" ;; W9|W10) rnn_only+=" $W" ;; *) infer_only+=" $W" ;; esac
done
if [ -n "$rnn_only" ] && [ ! -x "$rnn_bin" ]; then
  echo "run.sh builds nothing and $rnn_bin is missing: build it first, e.g." >&2
  echo "  ninja -C $build graphrt_bench_rnn   (and the op plugins: plain 'ninja -C $build' builds all)" >&2
  exit 1
fi
if [ -n "$train_only" ] && [ ! -x "$train_bin" ]; then
  echo "run.sh builds nothing and $train_bin is missing: build it first, e.g." >&2
  echo "  ninja -C $build graphrt_bench_train graphrt_ops_array_cpu graphrt_ops_math_cpu graphrt_ops_nn_cpu graphrt_ops_state_cpu graphrt_ops_training_cpu" >&2
  exit 1
fi
if [ -n "$infer_only" ] && [ ! -x "$bin" ]; then
  echo "run.sh builds nothing and $bin is missing: build it first, e.g." >&2
  echo "  ninja -C $build graphrt_bench_workloads graphrt_ops_array_cpu graphrt_ops_math_cpu graphrt_ops_nn_cpu" >&2
  exit 1
fi
PY=/usr/bin/python3                    # Debian's python3 (python3-torch), as the peers use
[ -x "$PY" ] || PY=python3
AUTO="env -u OPENBLAS_CORETYPE"        # let OpenBLAS pick its kernels (peers' README, problem 1)

# One process per workload; our conv nets also in NCHW (the peers' layout).
our_workloads=()
for W in $infer_only; do
  case $W in
    W4) our_workloads+=(W4_cnn W4_cnn_nchw) ;;
    W5) our_workloads+=(W5_lenet W5_lenet_nchw) ;;
    *) our_workloads+=("$W") ;;
  esac
done

# Which peers can run here.
have_ort=0 have_torch=0 have_gemm=0 have_torch_train=0 have_torch_rnn=0
notes=()
if ((use_peers)) && [ -n "$infer_only" ]; then
  if [ -d "$peers/ort/node_modules" ] && [ -d "$peers/models" ] && command -v node >/dev/null; then
    have_ort=1
  else
    notes+=("ONNX Runtime peer not installed ($peers/ort/node_modules, $peers/models or node missing)")
  fi
  if [ -d "$peers/build" ] && $PY -c 'import torch' 2>/dev/null; then
    have_torch=1
  else
    notes+=("PyTorch peer not installed ($peers/build missing or '$PY -c \"import torch\"' fails)")
  fi
  if [ -x "$peers/build/gemm_peak" ]; then have_gemm=1; fi
fi
if ((use_peers)) && [ -n "$train_only" ]; then
  if [ -f "$peers/train_bench.py" ] && $PY -c 'import torch' 2>/dev/null; then
    have_torch_train=1
  else
    notes+=("PyTorch training peer not run ($peers/train_bench.py missing or '$PY -c \"import torch\"' fails)")
  fi
fi

if ((use_peers)) && [[ " $rnn_only " == *" W9 "* ]]; then
  if $PY -c 'import torch' 2>/dev/null; then
    have_torch_rnn=1
  else
    notes+=("PyTorch LSTM peer not run ('$PY -c \"import torch\"' fails)")
  fi
fi

mkdir -p "$out_dir"
raw=$out_dir/raw-$(date +%Y%m%d-%H%M%S).txt
{
  echo "# $(date -Is) $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') nproc=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# graphrt $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?') binaries in $build/bin"
  # Which build of each plugin this CPU loads (x86-64-v4 builds where it has AVX-512).
  echo "# x86-64-v4 plugin builds loaded: $("$build/bin/graphrt" plugins 2>/dev/null | grep -c '/x86-64-v4/' || true)"
  for ((r = 1; r <= repeat; r++)); do
    for T in $threads; do
      for W in "${our_workloads[@]}"; do
        "$bin" --threads="$T" --only="$W" --min_time="$min_time" --benchmark_format=console 2>&1 ||
          echo "# graphrt_bench_workloads --threads=$T --only=$W exited with status $?"
      done
      for W in $train_only; do
        "$train_bin" --threads="$T" --only="$W" --min_time="$min_time" --benchmark_format=console 2>&1 ||
          echo "# graphrt_bench_train --threads=$T --only=$W exited with status $?"
        if ((have_torch_train)); then
          (cd "$peers" && $AUTO $PY train_bench.py --threads "$T" --only "$W" --min-time "$min_time" 2>&1) ||
            echo "# train_bench.py --only $W failed"
        fi
      done
      for W in $rnn_only; do
        "$rnn_bin" --threads="$T" --only="$W" --min_time="$min_time" --benchmark_format=console 2>&1 ||
          echo "# graphrt_bench_rnn --threads=$T --only=$W exited with status $?"
        if [ "$W" = W9 ] && ((have_torch_rnn)); then
          for passive in "" --omp-passive; do  # also without OpenMP spin-waiting (see lstm_peer.py)
            $AUTO $PY "$repo/bench/lstm_peer.py" --threads "$T" --min-time "$min_time" $passive 2>&1 ||
              echo "# lstm_peer.py $passive failed"
          done
        fi
      done
      if ((have_gemm)); then
        (cd "$peers" && $AUTO build/gemm_peak "$T" 2048 2>&1) || echo "# gemm_peak failed"
      fi
      if ((have_torch)); then
        for W in $infer_only; do
          (cd "$peers" && $AUTO $PY torch_bench.py --threads "$T" --only "$W" --big 2>&1) ||
            echo "# torch_bench.py --only $W failed"
        done
      fi
      if ((have_ort)); then
        for W in $infer_only; do
          (cd "$peers" && node ort/bench_ort.js "$T" models --only="$W" --big 2>&1) ||
            echo "# bench_ort.js --only=$W failed"
        done
      fi
    done
  done
  echo "# done $(date -Is) load=$(cut -d' ' -f1-3 /proc/loadavg)"
} | { grep -v -i "warning" || true; } > "$raw"

echo "raw output: $raw"
echo
recorded=()
if ((use_peers)) && [ -n "$infer_only" ] && { ((have_ort == 0)) || ((have_torch == 0)); } &&
  [ -f "$peers/results/summary.md" ]; then
  recorded=(--recorded "$peers/results/summary.md")
  notes+=("peer figures marked 'rec.' are the recorded ones in $peers/results/summary.md (another sitting)")
fi
$PY "$repo/bench/compare.py" "$raw" "${recorded[@]}"
for n in "${notes[@]}"; do echo "- note: $n"; done
