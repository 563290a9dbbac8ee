// The benchmark workloads W1..W5 (bench/workloads.h) through Session::Run,
// timed the way the peer benchmarks (../shared/peers) time theirs: warm-up
// calls, then every call timed on its own with steady_clock, at least
// --min_reps calls and at least --min_time seconds, and the MEDIAN reported.
//
//   build/bin/graphrt_bench_workloads [--only=W2,W3] [--threads=1,2]
//                                     [--min_time=1] [--min_reps=20]
//                                     [--graph_dir=DIR] [--write_graphs_only]
//                                     [Google Benchmark flags]
//
// On start the selected workloads are generated, written to --graph_dir as
// binary GraphDefs (<name>.pb, default: the build tree's bench/graphs), read
// back from there and run. Each (workload, thread count) is one Google
// Benchmark ("W2_mlp/threads:1"), whose reported Time is the median per Run;
// each also prints one line in the peers' format, which bench/run.sh and
// ../shared/peers/summarize.py read:
//   RESULT W2_mlp graphrt threads=1 0.41 ms/batch (208.8 GFLOP/s, 2436 reps)
// W1 reports us/op (total / N) and, when N=1 and N=1000 ran in the same
// process, W1_add_marginal = (t(1000) - t(1)) / 999. W3 also times a direct
// dnnl_sgemm on the same shapes (OpenMP threads = session threads) and
// reports ours/direct (GFLOP/s ratio). A workload whose ops have no CPU kernel
// in the loaded plugins is skipped with a message ("SKIP ..." line).
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "workload_runner.h"
#include "workloads.h"

#ifdef GRAPHRT_HAVE_OPENMP
#include <omp.h>
#else
static int omp_get_max_threads() { return 1; }
static void omp_set_num_threads(int) {}
#endif

namespace graphrt {
namespace bench {
namespace {

RunnerOptions g_opts;
// W1 total seconds per Run by (threads, N), for the marginal per-op cost.
std::map<std::pair<int, int>, double> g_w1_total;

Timing TimeCalls(const std::function<bool()>& fn, int warmup) {
  return TimeMedian(fn, warmup, g_opts.min_reps, g_opts.min_time);
}

void Skip(benchmark::State& state, const Workload& w, int threads, const std::string& why) {
  std::printf("SKIP %s graphrt threads=%d: %s\n", w.name.c_str(), threads, why.c_str());
  std::fflush(stdout);
  state.SkipWithError(why.c_str());
}

// W1: x = 1, b = 1e-3 (as the peers); the rest: the peers' pattern input.
std::vector<float> FeedValues(const Workload& w, const FeedSpec& f) {
  const int64_t n = NumElementsOf(f.dims);
  if (w.name.rfind("W1_", 0) == 0) return std::vector<float>(static_cast<size_t>(n), f.name == "x" ? 1.0f : 1e-3f);
  return PatternValues(n);
}

// Checks the output of one Run; returns "" when it is plausible.
std::string CheckOutput(const Workload& w, const std::vector<Tensor>& feeds, const Tensor& y) {
  if (y.dtype() != GR_FLOAT) return "output is not float";
  if (y.shape().dim_sizes() != w.fetch_dims) return "output has shape " + y.shape().DebugString();
  const float* p = y.data<float>();
  const int64_t n = y.NumElements();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return "output is not finite at " + std::to_string(i);
  if (w.name.rfind("W1_", 0) == 0) {
    const int chain = static_cast<int>(w.graph.node_size()) - 2;
    for (int64_t i = 0; i < n; ++i) {
      float want = feeds[0].data<float>()[i];
      for (int k = 0; k < chain; ++k) want = want + feeds[1].data<float>()[i];
      if (p[i] != want) return "output " + std::to_string(p[i]) + " != " + std::to_string(want);
    }
  } else if (w.name == "W2_mlp") {
    for (int64_t r = 0; r < w.fetch_dims[0]; ++r) {
      double s = 0;
      for (int64_t c = 0; c < w.fetch_dims[1]; ++c) s += p[r * w.fetch_dims[1] + c];
      if (std::fabs(s - 1.0) > 1e-4) return "softmax row " + std::to_string(r) + " sums to " + std::to_string(s);
    }
  } else if (w.name.rfind("W3_", 0) != 0) {
    double abs_sum = 0;
    for (int64_t i = 0; i < n; ++i) abs_sum += std::fabs(p[i]);
    if (abs_sum == 0) return "output is all zeros";
  }
  return "";
}

void RunWorkload(benchmark::State& state, const Workload* w, int threads) {
  std::unique_ptr<Session> session;
  const std::string why = OpenSession(w->graph, w->ops, threads, &session);
  if (!why.empty()) {
    Skip(state, *w, threads, why);
    return;
  }
  Status st;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<Tensor> feed_tensors;
  for (const FeedSpec& f : w->feeds) {
    Tensor t(GR_FLOAT, TensorShape(f.dims));
    const std::vector<float> v = FeedValues(*w, f);
    std::copy(v.begin(), v.end(), t.data<float>());
    feeds.emplace_back(f.name, t);
    feed_tensors.push_back(t);
  }
  const std::vector<std::string> fetches = {w->fetch};
  std::vector<Tensor> out;
  st = session->Run(feeds, fetches, {}, &out);
  if (!st.ok()) {
    Skip(state, *w, threads, "Run failed: " + st.ToString());
    return;
  }
  std::string bad = CheckOutput(*w, feed_tensors, out[0]);
  if (!bad.empty()) {
    Skip(state, *w, threads, "wrong result: " + bad);
    return;
  }

  const bool w1 = w->name.rfind("W1_", 0) == 0, w3 = w->name.rfind("W3_", 0) == 0;
  const int warmup = w1 ? 50 : w3 ? 3 : 10;
  Status run_status;
  auto run = [&] {
    out.clear();  // the previous result dies before the next Run, as in a client loop
    run_status = session->Run(feeds, fetches, {}, &out);
    return run_status.ok();
  };
  Timing t;
  for (auto _ : state) {
    t = TimeCalls(run, warmup);
    state.SetIterationTime(t.median);
  }
  if (!run_status.ok()) {
    Skip(state, *w, threads, "Run failed while timing: " + run_status.ToString());
    return;
  }
  const std::string reps = std::to_string(t.reps) + " reps";
  if (w1) {
    const int n = static_cast<int>(w->graph.node_size()) - 2;
    Result(w->name, "graphrt", threads, t.median * 1e6 / n, "us/op", Format("(total %.2f us/call, ", t.median * 1e6) + reps + ")");
    state.counters["us_per_op"] = t.median * 1e6 / n;
    g_w1_total[{threads, n}] = t.median;
    return;
  }
  const double gflops = w->flops / t.median / 1e9;
  state.counters["GFLOP/s"] = gflops;
  if (!w3) {
    Result(w->name, "graphrt", threads, t.median * 1e3, "ms/batch", Format("(%.1f GFLOP/s, ", gflops) + reps + ")");
    state.counters["ms_per_batch"] = t.median * 1e3;
    return;
  }

  // W3: the same product by a direct dnnl_sgemm call (row-major, C
  // preallocated), OpenMP threads = session threads.
  const int64_t m = w->fetch_dims[0], nn = w->fetch_dims[1], k = w->feeds[0].dims[1];
  const float* a = feed_tensors[0].data<float>();
  const float* b = feed_tensors[1].data<float>();
  std::vector<float> c(static_cast<size_t>(m * nn));
  const int prev_omp = omp_get_max_threads();
  omp_set_num_threads(threads);
  dnnl_status_t ds = dnnl_success;
  const Timing d = TimeCalls(
      [&] {
        ds = dnnl_sgemm('N', 'N', m, nn, k, 1.0f, a, k, b, nn, 0.0f, c.data(), nn);
        return ds == dnnl_success;
      },
      3);
  omp_set_num_threads(prev_omp);
  if (ds != dnnl_success) {
    Skip(state, *w, threads, "dnnl_sgemm failed with status " + std::to_string(static_cast<int>(ds)));
    return;
  }
  // Both compute the same product: compare (relative to the largest entry).
  double max_abs = 0, max_err = 0;
  const float* y = out[0].data<float>();
  for (size_t i = 0; i < c.size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(c[i])));
    max_err = std::max(max_err, std::fabs(static_cast<double>(c[i]) - y[i]));
  }
  if (max_err > 1e-4 * std::max(1.0, max_abs)) {
    Skip(state, *w, threads, Format("wrong result: differs from dnnl_sgemm by %g (max |C| %g)", max_err, max_abs));
    return;
  }
  const double direct = w->flops / d.median / 1e9;
  Result(w->name, "graphrt", threads, gflops, "GFLOP/s",
         Format("(%.3f ms, ", t.median * 1e3) + reps + Format(", %.3f of direct dnnl_sgemm)", gflops / direct));
  Result(w->name, "dnnl_sgemm", threads, direct, "GFLOP/s",
         Format("(%.3f ms, ", d.median * 1e3) + std::to_string(d.reps) + " reps)");
  state.counters["direct_GFLOP/s"] = direct;
  state.counters["ours/direct"] = gflops / direct;
}

}  // namespace
}  // namespace bench
}  // namespace graphrt

int main(int argc, char** argv) {
  using namespace graphrt;
  using namespace graphrt::bench;
  g_opts.graph_dir = GRAPHRT_BENCH_GRAPH_DIR;
  if (!ParseRunnerFlags(&argc, argv, &g_opts)) return 2;

  // Generate, write to the build tree, read back: the benchmark runs what
  // the .pb files hold.
  std::vector<Workload> selected = AllWorkloads();
  const int done = WriteAndReadBackGraphs(g_opts, &selected);
  if (done >= 0) return done;
  if (!LoadPlugins(GRAPHRT_PLUGIN_BUILD_DIR, "graphrt workloads", g_opts)) return 1;

  for (int t : g_opts.threads)
    for (const Workload& w : selected)
      benchmark::RegisterBenchmark((w.name + "/threads:" + std::to_string(t)).c_str(),
                                   [&w, t](benchmark::State& st) { RunWorkload(st, &w, t); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(w.name.rfind("W1_", 0) == 0 ? benchmark::kMicrosecond : benchmark::kMillisecond);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The cost of one more AddV2 with the fixed cost of a Run removed.
  for (int t : g_opts.threads) {
    auto one = g_w1_total.find({t, 1}), many = g_w1_total.find({t, 1000});
    if (one != g_w1_total.end() && many != g_w1_total.end())
      Result("W1_add_marginal", "graphrt", t, (many->second - one->second) * 1e6 / 999, "us/op", "");
  }
  return 0;
}
