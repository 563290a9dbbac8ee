// MaxPool / AvgPool on CPU: oneDNN's pooling primitives vs the direct loops
// of ops/nn/cpu/pooling_kernels.cc, on [8,64,224,224]-sized float tensors
// (NHWC and NCHW), 2x2 windows, stride 2, VALID, through a session.
//
//   GRAPHRT_NN_POOL_IMPL=dnnl   build/bin/graphrt_bench_pool
//   GRAPHRT_NN_POOL_IMPL=direct build/bin/graphrt_bench_pool
// (the kernels read the variable when they are built, so one program run
// measures one implementation; unset, the kernels' defaults).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "bench_util.h"

namespace graphrt {
namespace {

proto::GraphDef PoolGraph(const std::string& op, bool nchw) {
  const std::string k = nchw ? "list { i: 1 i: 1 i: 2 i: 2 }" : "list { i: 1 i: 2 i: 2 i: 1 }";
  const std::string g =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'p' op: '" + op + "' input: 'x' "
      "attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'padding' value { s: 'VALID' } } "
      "attr { key: 'data_format' value { s: '" + std::string(nchw ? "NCHW" : "NHWC") + "' } } "
      "attr { key: 'ksize' value { " + k + " } } "
      "attr { key: 'strides' value { " + k + " } } }\n";
  proto::GraphDef def;
  if (!ParseGraphDefText(g, &def).ok()) std::abort();
  return def;
}

// range(0): 0 MaxPool / 1 AvgPool; range(1): 0 NHWC / 1 NCHW; range(2): threads.
void BM_Pool(benchmark::State& state) {
  const std::string op = state.range(0) == 0 ? "MaxPool" : "AvgPool";
  const bool nchw = state.range(1) == 1;
  const int threads = static_cast<int>(state.range(2));
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  std::unique_ptr<Session> s;
  if (!NewSession(opts, &s).ok() || !s->Create(PoolGraph(op, nchw)).ok()) {
    state.SkipWithError("session setup failed");
    return;
  }
  const std::vector<int64_t> dims = nchw ? std::vector<int64_t>{8, 64, 224, 224}
                                         : std::vector<int64_t>{8, 224, 224, 64};
  Tensor x(GR_FLOAT, TensorShape(dims));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = static_cast<float>(i % 977) * 0.01f;
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status st = s->Run(feeds, {"p"}, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * x.NumElements() * 4);
}
BENCHMARK(BM_Pool)
    ->ArgsProduct({{0, 1}, {0, 1}, {1, 2}})
    ->ArgNames({"avg", "nchw", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) {
  const char* impl = std::getenv("GRAPHRT_NN_POOL_IMPL");
  std::printf("pooling implementation: %s\n", impl ? impl : "(kernel default)");
  return graphrt::bench::RunWithPlugins(argc, argv);
}
