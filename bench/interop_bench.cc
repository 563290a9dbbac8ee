// Inter-op parallelism (issue 15, "Speed"): two independent chains of eight
// 512x512 float MatMuls in one graph, run by a session with 1 and with 2
// threads (ConfigProto intra_op = inter_op = N: the session keeps one pool
// of max(intra, inter) threads for both kinds of parallelism), and each
// chain alone. The goal: the two-chain graph on 2 threads at least 1.7x as
// fast as on 1 thread. A third graph has both chains read one input x0
// (TwoChainsSharedInput): the same work, but one node makes both chains'
// first MatMuls ready at once, which is where today's executor hands work
// to a second thread (see the report in bench/README.md).
//
//   build/bin/graphrt_bench_interop
//
// Each figure is the median wall time of Session::Run over at least 10 runs
// and 2 s, after 2 warm-up runs (bench/workload_runner.h's TimeMedian).
// The end of the output gives the speed-ups and the machine's load average
// (on a shared machine the 2-thread figures mean little while it is busy).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"
#include "workload_runner.h"

namespace graphrt {
namespace {

constexpr int kDim = 512;
constexpr int kDepth = 8;

// Chains c = 0..chains-1: m{c}_0 = x{c} @ w{c}_0, m{c}_i = m{c}_{i-1} @ w{c}_i;
// with `shared_input` every chain starts from x0. Everything is fed (no
// Const), so no graph pass can fold a chain away.
proto::GraphDef Chains(int chains, int depth, bool shared_input) {
  std::string g;
  auto placeholder = [&](const std::string& name) {
    g += "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  };
  for (int c = 0; c < chains; ++c) {
    const std::string chain = std::to_string(c);
    if (c == 0 || !shared_input) placeholder("x" + chain);
    std::string prev = shared_input ? "x0" : "x" + chain;
    for (int i = 0; i < depth; ++i) {
      const std::string w = "w" + chain + "_" + std::to_string(i);
      const std::string m = "m" + chain + "_" + std::to_string(i);
      placeholder(w);
      g += "node { name: '" + m + "' op: 'MatMul' input: '" + prev + "' input: '" + w +
           "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
      prev = m;
    }
  }
  proto::GraphDef def;
  if (!ParseGraphDefText(g, &def).ok()) std::abort();
  return def;
}

Tensor RandomMatrix(uint32_t seed, float scale) {
  Tensor t(GR_FLOAT, TensorShape({kDim, kDim}));
  const std::vector<float> v = bench::RandomFloats(kDim * kDim, seed, -scale, scale);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

struct Setup {
  std::unique_ptr<Session> session;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
};

// Weights uniform in +-sqrt(3/512) keep the activations' variance about
// constant down a chain (no overflow, no denormals to slow it).
bool MakeSetup(int chains, int threads, bool shared_input, Setup* s) {
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  if (!NewSession(opts, &s->session).ok() || !s->session->Create(Chains(chains, kDepth, shared_input)).ok()) return false;
  const float w_scale = std::sqrt(3.0f / kDim);
  for (int c = 0; c < chains; ++c) {
    const std::string chain = std::to_string(c);
    if (c == 0 || !shared_input) s->feeds.emplace_back("x" + chain, RandomMatrix(100 + c, 1.0f));
    for (int i = 0; i < kDepth; ++i)
      s->feeds.emplace_back("w" + chain + "_" + std::to_string(i), RandomMatrix(1000 * (c + 1) + i, w_scale));
    s->fetches.push_back("m" + chain + "_" + std::to_string(kDepth - 1));
  }
  return true;
}

// The outputs of the 1-thread two-chain run, to check every other run's.
std::vector<Tensor> g_reference;

bool SameValues(const std::vector<Tensor>& a, const std::vector<Tensor>& b, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    const float* x = a[k].data<float>();
    const float* y = b[k].data<float>();
    for (int64_t i = 0; i < a[k].NumElements(); ++i)
      if (!(std::fabs(x[i] - y[i]) <= 1e-3f * (1.0f + std::fabs(y[i])))) return false;
  }
  return true;
}

void RunChains(benchmark::State& state, int chains, int threads, bool shared_input = false) {
  Setup s;
  if (!MakeSetup(chains, threads, shared_input, &s)) {
    state.SkipWithError("session setup failed");
    return;
  }
  std::vector<Tensor> out;
  Status status;
  const bench::Timing t = bench::TimeMedian(
      [&] {
        status = s.session->Run(s.feeds, s.fetches, {}, &out);
        return status.ok();
      },
      /*warmup=*/2, /*min_reps=*/10, /*min_time=*/2.0);
  if (!status.ok()) {
    state.SkipWithError(status.ToString().c_str());
    return;
  }
  if (g_reference.empty() && chains == 2 && threads == 1 && !shared_input) g_reference = out;
  // Chain 0 is the same in every graph; with two separate chains, chain 1 too.
  if (!g_reference.empty() && !SameValues(out, g_reference, shared_input ? 1 : static_cast<size_t>(chains))) {
    state.SkipWithError("results differ from the 1-thread two-chain run");
    return;
  }
  for (auto _ : state) state.SetIterationTime(t.median);
  state.counters["runs"] = t.reps;
  state.counters["GFLOPS"] = 2.0 * kDim * kDim * kDim * kDepth * chains / t.median / 1e9;
}

class SpeedupReporter : public bench::TimesReporter {
 public:
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto ms = [&](const char* name, int threads) {
      const std::string prefix = std::string(name) + "/threads:" + std::to_string(threads) + "/";
      for (const auto& [n, t] : times_)
        if (n.rfind(prefix, 0) == 0) return t;
      return 0.0;
    };
    const double two1 = ms("TwoChains", 1), two2 = ms("TwoChains", 2);
    const double one1 = ms("OneChain", 1), one2 = ms("OneChain", 2);
    const double shared1 = ms("TwoChainsSharedInput", 1), shared2 = ms("TwoChainsSharedInput", 2);
    std::printf("\ninter-op parallelism, %d-deep chains of %dx%d float MatMuls (median ms per Run):\n", kDepth, kDim,
                kDim);
    std::printf("  one chain:  1 thread %8.2f   2 threads %8.2f   speed-up %.2fx (intra-op only)\n", one1, one2,
                one2 > 0 ? one1 / one2 : 0.0);
    std::printf("  two chains: 1 thread %8.2f   2 threads %8.2f   speed-up %.2fx (goal >= 1.7x)\n", two1, two2,
                two2 > 0 ? two1 / two2 : 0.0);
    std::printf("  two chains from one shared input: 1 thread %8.2f   2 threads %8.2f   speed-up %.2fx\n", shared1,
                shared2, shared2 > 0 ? shared1 / shared2 : 0.0);
    std::printf("  two chains on 1 thread / one chain on 1 thread: %.2f (2 = no overhead)\n",
                one1 > 0 ? two1 / one1 : 0.0);
    std::ifstream load("/proc/loadavg");
    std::string avg;
    if (std::getline(load, avg)) std::printf("  load average while measuring: %s\n", avg.c_str());
  }
};

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) {
  using graphrt::RunChains;
  // The 1-thread two-chain run comes first: it is every other run's reference.
  for (int threads : {1, 2}) {
    graphrt::bench::RegisterOnce("TwoChains", threads, benchmark::kMillisecond,
                                 [threads](benchmark::State& st) { RunChains(st, 2, threads); });
    graphrt::bench::RegisterOnce("OneChain", threads, benchmark::kMillisecond,
                                 [threads](benchmark::State& st) { RunChains(st, 1, threads); });
    graphrt::bench::RegisterOnce("TwoChainsSharedInput", threads, benchmark::kMillisecond,
                                 [threads](benchmark::State& st) { RunChains(st, 2, threads, true); });
  }
  graphrt::SpeedupReporter reporter;
  return graphrt::bench::RunWithPlugins(argc, argv, &reporter);
}
