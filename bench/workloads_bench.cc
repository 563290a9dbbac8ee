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

struct Options {
  std::vector<std::string> only;  // workload names or groups ("W3"); empty = all
  std::vector<int> threads = {1, 2};
  double min_time = 1.0;
  int min_reps = 20;
  std::string graph_dir = GRAPHRT_BENCH_GRAPH_DIR;
  bool write_graphs_only = false;
};
Options g_opts;
// W1 total seconds per Run by (threads, N), for the marginal per-op cost.
std::map<std::pair<int, int>, double> g_w1_total;

Timing TimeCalls(const std::function<bool()>& fn, int warmup) {
  return TimeMedian(fn, warmup, g_opts.min_reps, g_opts.min_time);
}

std::string MissingOps(const Workload& w) { return bench::MissingOps(w.ops); }

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
  const std::string missing = MissingOps(*w);
  if (!missing.empty()) {
    Skip(state, *w, threads, "missing in the loaded plugins: " + missing);
    return;
  }
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  std::unique_ptr<Session> session;
  Status st = NewSession(opts, &session);
  if (st.ok()) st = session->Create(w->graph);
  if (!st.ok()) {
    Skip(state, *w, threads, "session setup failed: " + st.ToString());
    return;
  }
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

bool Selected(const std::string& name) {
  if (g_opts.only.empty()) return true;
  // "W4" selects W4_cnn and W4_cnn_nchw; "W4_cnn" only W4_cnn.
  for (const std::string& p : g_opts.only)
    if (name == p || name.rfind(p + "_", 0) == 0) return true;
  return false;
}

// Takes our own flags out of argv (the rest goes to Google Benchmark).
bool ParseFlags(int* argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t len = std::strlen(flag);
      return a.compare(0, len, flag) == 0 ? argv[i] + len : nullptr;
    };
    if (const char* v = value("--only=")) {
      g_opts.only = Split(v);
    } else if (const char* v2 = value("--threads=")) {
      g_opts.threads.clear();
      for (const std::string& t : Split(v2)) g_opts.threads.push_back(std::atoi(t.c_str()));
      for (int t : g_opts.threads)
        if (t < 1) {
          std::fprintf(stderr, "--threads: want positive integers, got '%s'\n", v2);
          return false;
        }
    } else if (const char* v3 = value("--min_time=")) {
      g_opts.min_time = std::atof(v3);
    } else if (const char* v4 = value("--min_reps=")) {
      g_opts.min_reps = std::max(1, std::atoi(v4));
    } else if (const char* v5 = value("--graph_dir=")) {
      g_opts.graph_dir = v5;
    } else if (a == "--write_graphs_only") {
      g_opts.write_graphs_only = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return true;
}

std::string GraphPath(const Workload& w) {
  std::string file = w.name;
  for (char& ch : file) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return g_opts.graph_dir + "/" + file + ".pb";
}

}  // namespace
}  // namespace bench
}  // namespace graphrt

int main(int argc, char** argv) {
  using namespace graphrt;
  using namespace graphrt::bench;
  if (!ParseFlags(&argc, argv)) return 2;

  // Generate, write to the build tree, read back: the benchmark runs what
  // the .pb files hold.
  std::vector<Workload> all = AllWorkloads();
  std::vector<Workload> selected;
  std::error_code ec;
  std::filesystem::create_directories(g_opts.graph_dir, ec);
  if (ec) {
    std::fprintf(stderr, "cannot create %s: %s\n", g_opts.graph_dir.c_str(), ec.message().c_str());
    return 1;
  }
  for (Workload& w : all) {
    if (!g_opts.write_graphs_only && !Selected(w.name)) continue;
    Status s = WriteFile(GraphPath(w), SerializeDeterministic(w.graph));
    if (s.ok()) s = ReadGraphDefFromFile(GraphPath(w), &w.graph);
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", w.name.c_str(), s.ToString().c_str());
      return 1;
    }
    selected.push_back(std::move(w));
  }
  if (g_opts.write_graphs_only) {
    std::printf("wrote %zu graphs to %s\n", selected.size(), g_opts.graph_dir.c_str());
    return 0;
  }
  if (selected.empty()) {
    std::fprintf(stderr, "--only selects no workload\n");
    return 2;
  }

  Status s = Runtime::Global().LoadPluginDirectory(GRAPHRT_PLUGIN_BUILD_DIR);
  if (!s.ok()) {
    std::fprintf(stderr, "plugin load failed: %s\n", s.ToString().c_str());
    return 1;
  }
  const dnnl_version_t* v = dnnl_version();
  std::printf("# graphrt workloads: %zu plugins from %s; oneDNN %d.%d.%d; graphs in %s\n",
              Runtime::Global().Plugins().size(), GRAPHRT_PLUGIN_BUILD_DIR, v->major, v->minor, v->patch,
              g_opts.graph_dir.c_str());
  std::fflush(stdout);

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
