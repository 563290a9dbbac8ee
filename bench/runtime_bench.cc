// Runtime overheads: W1 (per-node cost on a 1000-node AddV2 chain), W1 with
// b a Const or a variable, the fixed cost of one Session::Run, and the time
// to load the standard plugins.
//
//   build/bin/graphrt_bench_runtime            (all)
// W1's figure is the marginal cost per node: (t(1000) - t(1)) / 999.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"

namespace graphrt {
namespace {

// x_i = x_{i-1} + b on float[4], x and b fed: nothing can be folded.
proto::GraphDef AddChain(int n) {
  std::string g =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'b' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    std::string name = "add" + std::to_string(i);
    g += "node { name: '" + name + "' op: 'AddV2' input: '" + prev +
         "' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    prev = name;
  }
  proto::GraphDef def;
  Status s = ParseGraphDefText(g, &def);
  if (!s.ok()) std::abort();
  return def;
}

// Runs the chain ending in `fetches` until the benchmark has timed enough,
// checks x + n*1, and reports ns per node.
void RunChain(benchmark::State& state, Session* s, const std::vector<std::pair<std::string, Tensor>>& feeds,
              const std::vector<std::string>& fetches, int n) {
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status st = s->Run(feeds, fetches, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  if (out[0].data<float>()[0] != 1.0f + n) state.SkipWithError("wrong result");
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

void BM_AddChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  std::unique_ptr<Session> s;
  if (!NewSession(opts, &s).ok() || !s->Create(AddChain(n)).ok()) {
    state.SkipWithError("session setup failed");
    return;
  }
  Tensor x(GR_FLOAT, TensorShape({4})), b(GR_FLOAT, TensorShape({4}));
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = b.data<float>()[i] = 1.0f;
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}, {"b", b}};
  std::vector<std::string> fetches = {"add" + std::to_string(n - 1)};
  RunChain(state, s.get(), feeds, fetches, n);
}
BENCHMARK(BM_AddChain)->ArgsProduct({{1, 1000}, {1, 2}})->ArgNames({"nodes", "threads"})->UseRealTime();

// W1 with b held in the graph instead of fed: a Const (kind 0), a ref
// variable that every AddV2 reads itself (kind 1: n reads of the variable,
// each under its lock), or a resource variable read once (kind 2).
// "A Run that reads a variable costs no more than one reading a Const."
void BM_AddChainReading(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int kind = static_cast<int>(state.range(1));
  std::string g =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'one' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
      "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } } float_val: 1 } } } }\n";
  const char* shape = "attr { key: 'shape' value { shape { dim { size: 4 } } } } attr { key: 'dtype' value { type: DT_FLOAT } }";
  std::string b = "one";
  if (kind == 1) {
    g += std::string("node { name: 'v' op: 'VariableV2' ") + shape + " }\n" +
         "node { name: 'init' op: 'Assign' input: 'v' input: 'one' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    b = "v";
  } else if (kind == 2) {
    g += std::string("node { name: 'h' op: 'VarHandleOp' ") + shape + " attr { key: 'shared_name' value { s: 'h' } } }\n" +
         "node { name: 'init' op: 'AssignVariableOp' input: 'h' input: 'one' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
         "node { name: 'r' op: 'ReadVariableOp' input: 'h' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
    b = "r";
  }
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    std::string name = "add" + std::to_string(i);
    g += "node { name: '" + name + "' op: 'AddV2' input: '" + prev + "' input: '" + b +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    prev = name;
  }
  proto::GraphDef def;
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(1);
  opts.config.set_inter_op_parallelism_threads(1);
  std::unique_ptr<Session> s;
  if (!ParseGraphDefText(g, &def).ok() || !NewSession(opts, &s).ok() || !s->Create(def).ok() ||
      (kind != 0 && !s->Run({}, {}, {"init"}, nullptr).ok())) {
    state.SkipWithError("session setup failed");
    return;
  }
  Tensor x(GR_FLOAT, TensorShape({4}));
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = 1.0f;
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  std::vector<std::string> fetches = {prev};
  RunChain(state, s.get(), feeds, fetches, n);
}
BENCHMARK(BM_AddChainReading)->ArgsProduct({{1, 1000}, {0, 1, 2}})->ArgNames({"nodes", "b_kind"})->UseRealTime();

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  graphrt::Status s = graphrt::Runtime::Global().LoadPluginDirectory(GRAPHRT_PLUGIN_BUILD_DIR);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::fprintf(stderr, "plugin load failed: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("standard plugin load: %.2f ms (%zu plugins)\n", ms, graphrt::Runtime::Global().Plugins().size());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
