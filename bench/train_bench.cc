// The training workloads W6..W8 (bench/train_workloads.h) through
// Session::Run, timed as the PyTorch peer ../shared/peers/train_bench.py
// times its steps: warm-up steps, then every step timed on its own, at least
// --min_reps steps and --min_time seconds, MEDIAN reported.
//
//   build/bin/graphrt_bench_train [--only=W6,W8] [--threads=1,2] [--min_time=1]
//                                 [--min_reps=20] [--gemm=1024] [--graph_dir=DIR]
//                                 [--optimizer=peer|gd] [--write_graphs_only]
//                                 [Google Benchmark flags]
//
// One step = Run(feeds {x, labels}, fetch the loss `Mean`, target `train`) on
// a fixed batch (x: the peers' pattern; label i = 7i mod classes), after one
// Run of `init`. The forward pass alone = Run(same feeds, fetch `Mean`, no
// target) on the same session: forward ops + loss, nothing else. For each
// thread count a direct dnnl_sgemm of --gemm^3 (OpenMP threads = session
// threads) is timed first in the same process: the GEMM ceiling the GFLOP/s
// figures are compared with. Lines in the peers' format:
//   RESULT GEMM_1024^3 dnnl_sgemm threads=1 98.1 GFLOP/s (...)
//   RESULT W6_mlp_train graphrt threads=1 1.9 ms/step (135 GFLOP/s, 0.62 of GEMM; forward 0.61 ms, step/forward 3.1; loss 2.30 -> 0.01; 520 reps)
//   RESULT W6_mlp_train_forward graphrt threads=1 0.61 ms/batch (140 GFLOP/s, 0.64 of GEMM; 1600 reps)
// GFLOP/s counts 2*MACs of the conv/dense layers (the peers' count): the
// forward figure, and 3x that for a step (each layer's input and weight
// gradient; TF1's graph computes the first layer's input gradient too).
// The step's loss goes from its first value to its value after all the
// timed steps (the batch is fixed, so it falls towards 0).
//
// --optimizer=gd builds the same nets with ApplyGradientDescent (same
// learning rates; names W6_mlp_train_gd, ...): the optimizer's share of a
// step, or a figure where ApplyAdam / ApplyMomentum are not loaded.
//
// On start the selected graphs are written to --graph_dir as binary
// GraphDefs (w6_mlp_train.pb, ...; default the build tree's bench/graphs),
// read back and run, as graphrt_bench_workloads does.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"
#include "train_workloads.h"
#include "workload_runner.h"

namespace graphrt {
namespace bench {
namespace {

RunnerOptions g_opts;
int64_t g_gemm = 1024;           // --gemm=N; 0: no GEMM ceiling
bool g_gradient_descent = false;  // --optimizer=gd
std::map<int, double> g_gemm_gflops;  // by thread count

Timing TimeCalls(const std::function<bool()>& fn, int warmup) {
  return TimeMedian(fn, warmup, g_opts.min_reps, g_opts.min_time);
}

// "(0.62 of GEMM)" when the ceiling for `threads` was measured.
std::string OfGemm(double gflops, int threads) {
  auto it = g_gemm_gflops.find(threads);
  return it == g_gemm_gflops.end() ? "" : Format(", %.2f of GEMM", gflops / it->second);
}

void Skip(benchmark::State& state, const std::string& name, int threads, const std::string& why) {
  std::printf("SKIP %s graphrt threads=%d: %s\n", name.c_str(), threads, why.c_str());
  std::fflush(stdout);
  state.SkipWithError(why.c_str());
}

// The GEMM ceiling: dnnl_sgemm on n^3 with OpenMP threads = `threads`.
void RunGemm(benchmark::State& state, int threads) {
  const int64_t n = g_gemm;
  const std::vector<float> a = RandomFloats(static_cast<size_t>(n * n), 1), b = RandomFloats(static_cast<size_t>(n * n), 2);
  std::vector<float> c(static_cast<size_t>(n * n));
  SetOmpThreads(threads);
  dnnl_status_t ds = dnnl_success;
  Timing t;
  for (auto _ : state) {
    t = TimeCalls(
        [&] {
          ds = dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
          return ds == dnnl_success;
        },
        3);
    state.SetIterationTime(t.median);
  }
  if (ds != dnnl_success) {
    Skip(state, "GEMM", threads, "dnnl_sgemm failed with status " + std::to_string(static_cast<int>(ds)));
    return;
  }
  const double gflops = 2.0 * n * n * n / t.median / 1e9;
  g_gemm_gflops[threads] = gflops;
  state.counters["GFLOP/s"] = gflops;
  const std::string name = "GEMM_" + std::to_string(n) + "^3";
  Result(name, "dnnl_sgemm", threads, gflops, "GFLOP/s",
         Format("(%.3f ms, ", t.median * 1e3) + std::to_string(t.reps) + " reps)");
}

Tensor LabelTensor(const TrainWorkload& w) {
  const std::vector<int64_t> labels = TrainLabels(w);
  Tensor t(w.label_dtype == proto::DT_INT64 ? GR_INT64 : GR_INT32, TensorShape(w.labels.dims));
  for (size_t i = 0; i < labels.size(); ++i) {
    if (w.label_dtype == proto::DT_INT64) t.data<int64_t>()[i] = labels[i];
    else t.data<int32_t>()[i] = static_cast<int32_t>(labels[i]);
  }
  return t;
}

void RunTrain(benchmark::State& state, const TrainWorkload* w, int threads) {
  std::unique_ptr<Session> session;
  std::string why = OpenSession(w->graph, w->ops, threads, &session);
  if (why.empty()) {
    const Status st = session->Run({}, {}, {w->init}, nullptr);
    if (!st.ok()) why = "running init failed: " + st.ToString();
  }
  if (!why.empty()) {
    Skip(state, w->name, threads, why);
    return;
  }
  Tensor x(GR_FLOAT, TensorShape(w->x.dims));
  const std::vector<float> xv = TrainInput(*w);
  std::copy(xv.begin(), xv.end(), x.data<float>());
  const std::vector<std::pair<std::string, Tensor>> feeds = {{w->x.name, x}, {w->labels.name, LabelTensor(*w)}};
  const std::vector<std::string> fetches = {w->loss};
  std::vector<Tensor> out;
  Status run_status;
  auto run = [&](const std::vector<std::string>& targets) {
    out.clear();  // the previous result dies before the next Run, as in a client loop
    run_status = session->Run(feeds, fetches, targets, &out);
    return run_status.ok() && std::isfinite(out[0].data<float>()[0]);
  };
  auto step = [&] { return run({w->train}); };
  auto forward = [&] { return run({}); };

  // The forward pass first (the weights at init), then the steps.
  Timing f, s;
  float first_loss = NAN;
  for (auto _ : state) {
    f = TimeCalls(forward, 5);
    if (f.reps == 0) break;
    if (!step()) break;
    first_loss = out[0].data<float>()[0];
    s = TimeCalls(step, 5);
    state.SetIterationTime(s.median);
  }
  if (f.reps == 0 || s.reps == 0) {
    Skip(state, w->name, threads,
         run_status.ok() ? std::string("the loss is not finite") : "Run failed: " + run_status.ToString());
    return;
  }
  const float last_loss = forward() ? out[0].data<float>()[0] : NAN;
  const double step_gflops = w->step_flops / s.median / 1e9, fwd_gflops = w->forward_flops / f.median / 1e9;
  Result(w->name, "graphrt", threads, s.median * 1e3, "ms/step",
         Format("(%.1f GFLOP/s", step_gflops) + OfGemm(step_gflops, threads) +
             Format("; forward %.4g ms, step/forward %.2f", f.median * 1e3, s.median / f.median) +
             Format("; loss %.4f -> %.4f; ", first_loss, last_loss) + std::to_string(s.reps) + " reps)");
  Result(w->name + "_forward", "graphrt", threads, f.median * 1e3, "ms/batch",
         Format("(%.1f GFLOP/s", fwd_gflops) + OfGemm(fwd_gflops, threads) + "; " + std::to_string(f.reps) +
             " reps)");
  state.counters["ms_per_step"] = s.median * 1e3;
  state.counters["ms_forward"] = f.median * 1e3;
  state.counters["step/forward"] = s.median / f.median;
  state.counters["GFLOP/s"] = step_gflops;
}

// The flags of this program beside RunnerOptions' (see ParseRunnerFlags).
int ExtraFlag(const std::string& a) {
  if (a.rfind("--gemm=", 0) == 0) {
    g_gemm = std::atoll(a.c_str() + 7);
    if (g_gemm >= 0 && g_gemm <= 8192) return 1;
    std::fprintf(stderr, "--gemm: want a size in [0, 8192], got '%s'\n", a.c_str() + 7);
    return -1;
  }
  if (a.rfind("--optimizer=", 0) == 0) {
    const std::string v = a.substr(12);
    if (v == "gd" || v == "peer") {
      g_gradient_descent = v == "gd";
      return 1;
    }
    std::fprintf(stderr, "--optimizer: want peer or gd, got '%s'\n", v.c_str());
    return -1;
  }
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace graphrt

int main(int argc, char** argv) {
  using namespace graphrt;
  using namespace graphrt::bench;
  g_opts.graph_dir = GRAPHRT_BENCH_GRAPH_DIR;
  if (!ParseRunnerFlags(&argc, argv, &g_opts, ExtraFlag)) return 2;

  std::vector<TrainWorkload> selected = AllTrainWorkloads();
  if (g_gradient_descent) {
    // The same nets and learning rates with ApplyGradientDescent: the
    // optimizer's share of a step, or a figure where Adam/Momentum are missing.
    selected = {MlpTrain(64, 784, 512, 10, GradientDescent(1e-3f)), LeNet5Train(64, GradientDescent(0.01f)),
                SmallCnnTrain(8, 224, 64, 128, 1000, GradientDescent(0.01f))};
    for (TrainWorkload& w : selected) w.name += "_gd";
  }
  const int done = WriteAndReadBackGraphs(g_opts, &selected);
  if (done >= 0) return done;
  if (!LoadPlugins(GRAPHRT_PLUGIN_BUILD_DIR, "graphrt training workloads", g_opts)) return 1;

  for (int t : g_opts.threads) {
    if (g_gemm > 0)
      benchmark::RegisterBenchmark(("GEMM_" + std::to_string(g_gemm) + "^3/threads:" + std::to_string(t)).c_str(),
                                   [t](benchmark::State& st) { RunGemm(st, t); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    for (const TrainWorkload& w : selected)
      benchmark::RegisterBenchmark((w.name + "/threads:" + std::to_string(t)).c_str(),
                                   [&w, t](benchmark::State& st) { RunTrain(st, &w, t); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
