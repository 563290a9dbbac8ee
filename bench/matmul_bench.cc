// MatMul float through a Session against one direct call of oneDNN's
// dnnl_sgemm, on 1 and 2 threads, and bfloat16 / _FusedMatMul for scale;
// MatMul / _FusedMatMul with a Const B (packed weights).
//
//   build/bin/graphrt_bench_matmul
//   build/bin/graphrt_bench_matmul --benchmark_filter='Sgemm|SessionMatMul'
//   [GRAPHRT_MATMUL_IMPL=sgemm] build/bin/graphrt_bench_matmul --benchmark_filter=ConstB
//
// BM_DirectSgemm runs dnnl_sgemm with OpenMP set to `threads` (oneDNN's own
// threading); BM_SessionMatMul runs MatMul in a session whose pool has
// `threads` threads (the kernel splits the product over it, each block a
// single-threaded sgemm). The ratio of their GFLOP/s is the kernel's
// efficiency, Session::Run overhead and output allocation included.
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.h>

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

void SetFlops(benchmark::State& state, int64_t m, int64_t k, int64_t n) {
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * static_cast<double>(m * k * n) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_DirectSgemm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const std::vector<float> a = bench::RandomFloats(static_cast<size_t>(m * k), 42);
  const std::vector<float> b = bench::RandomFloats(static_cast<size_t>(k * n), 42);
  std::vector<float> c(static_cast<size_t>(m * n));
  bench::SetOmpThreads(threads);
  for (auto _ : state) {
    if (dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n) !=
        dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      return;
    }
    benchmark::DoNotOptimize(c.data());
  }
  bench::SetOmpThreads(1);
  SetFlops(state, m, k, n);
}

// The same call writing into a freshly allocated output each iteration, as
// a kernel must (the session allocates every output): isolates the cost of
// the allocation and its first-touch page faults from the kernel's.
void BM_DirectSgemmFreshOutput(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const std::vector<float> a = bench::RandomFloats(static_cast<size_t>(m * k), 42);
  const std::vector<float> b = bench::RandomFloats(static_cast<size_t>(k * n), 42);
  bench::SetOmpThreads(threads);
  const size_t bytes = static_cast<size_t>(m * n) * sizeof(float);
  for (auto _ : state) {
    float* c = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    if (dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c, n) !=
        dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      std::free(c);
      return;
    }
    benchmark::DoNotOptimize(c);
    std::free(c);
  }
  bench::SetOmpThreads(1);
  SetFlops(state, m, k, n);
}

std::unique_ptr<Session> MakeSession(const std::string& graph, int threads) {
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  std::unique_ptr<Session> s;
  proto::GraphDef def;
  if (!ParseGraphDefText(graph, &def).ok() || !NewSession(opts, &s).ok() || !s->Create(def).ok())
    return nullptr;
  return s;
}

std::string Placeholder(const std::string& name, const std::string& dt) {
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: " + dt +
         " } } }\n";
}

// `op` on fed a [m,k], b [k,n] (and bias [n] for _FusedMatMul). With
// `const_b` (float only), b is a Const: the graph pass marks it
// `_weights_const` and big enough products run with b packed once.
void RunSession(benchmark::State& state, const std::string& op, DataType dt, bool const_b = false) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const std::string dts = dt == GR_FLOAT ? "DT_FLOAT" : "DT_BFLOAT16";
  std::string g = Placeholder("a", dts);
  if (const_b) {
    g += "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT " +
         bench::TensorShapeText({k, n}) +
         bench::FloatValText(bench::RandomFloats(static_cast<size_t>(k * n), 42)) + "} } } }\n";
  } else {
    g += Placeholder("b", dts);
  }
  std::string inputs = "input: 'a' input: 'b' ";
  std::string attrs = "attr { key: 'T' value { type: " + dts + " } } ";
  if (op == "_FusedMatMul") {
    g += Placeholder("bias", dts);
    inputs += "input: 'bias' ";
    attrs +=
        "attr { key: 'num_args' value { i: 1 } } "
        "attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: 'Relu' } } } ";
  }
  g += "node { name: 'mm' op: '" + op + "' " + inputs + attrs + "}\n";
  std::unique_ptr<Session> s = MakeSession(g, threads);
  if (!s) {
    state.SkipWithError("session setup failed");
    return;
  }
  Tensor a(dt, TensorShape({m, k})), b(dt, TensorShape({k, n})), bias(dt, TensorShape({n}));
  const std::vector<float> av = bench::RandomFloats(static_cast<size_t>(m * k), 42);
  const std::vector<float> bv = bench::RandomFloats(static_cast<size_t>(k * n), 42);
  for (int64_t i = 0; i < m * k; ++i) {
    if (dt == GR_FLOAT) a.data<float>()[i] = av[static_cast<size_t>(i)];
    else a.data<uint16_t>()[i] = 0x3f80;  // 1.0
  }
  for (int64_t i = 0; i < k * n; ++i) {
    if (dt == GR_FLOAT) b.data<float>()[i] = bv[static_cast<size_t>(i)];
    else b.data<uint16_t>()[i] = 0x3f80;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (dt == GR_FLOAT) bias.data<float>()[i] = 0.5f;
    else bias.data<uint16_t>()[i] = 0x3f00;
  }
  std::vector<std::pair<std::string, Tensor>> feeds = {{"a", a}};
  if (!const_b) feeds.push_back({"b", b});
  if (op == "_FusedMatMul") feeds.push_back({"bias", bias});
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status st = s->Run(feeds, {"mm"}, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  SetFlops(state, m, k, n);
}

void BM_SessionMatMul(benchmark::State& state) { RunSession(state, "MatMul", GR_FLOAT); }
void BM_SessionFusedMatMulRelu(benchmark::State& state) {
  RunSession(state, "_FusedMatMul", GR_FLOAT);
}
void BM_SessionMatMulBf16(benchmark::State& state) { RunSession(state, "MatMul", GR_BFLOAT16); }
void BM_SessionMatMulConstB(benchmark::State& state) {
  RunSession(state, "MatMul", GR_FLOAT, /*const_b=*/true);
}
void BM_SessionFusedMatMulReluConstB(benchmark::State& state) {
  RunSession(state, "_FusedMatMul", GR_FLOAT, /*const_b=*/true);
}

// {m, k, n, threads}: 256^3, 1024^3 and 4096 x 4096 x 1024 (m x n x k).
void Shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({256, 256, 256, threads});
    b->Args({1024, 1024, 1024, threads});
    b->Args({4096, 1024, 4096, threads});
  }
  b->ArgNames({"m", "k", "n", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_DirectSgemm)->Apply(Shapes);
BENCHMARK(BM_DirectSgemmFreshOutput)->Apply(Shapes);
BENCHMARK(BM_SessionMatMul)->Apply(Shapes);
BENCHMARK(BM_SessionFusedMatMulRelu)->Apply(Shapes);
BENCHMARK(BM_SessionMatMulBf16)->Apply(Shapes);

// Constant weights: W2's layers (batch 64) and shapes either side of the
// packed/sgemm rule. Compare with GRAPHRT_MATMUL_IMPL=sgemm (the same
// graphs on sgemm, as before packed weights).
void ConstBShapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({64, 784, 512, threads});
    b->Args({64, 512, 512, threads});
    b->Args({64, 512, 10, threads});
    b->Args({256, 256, 256, threads});
    b->Args({128, 1024, 1024, threads});
    b->Args({32, 256, 256, threads});
    // Narrow outputs (classifier heads) and LeNet's small dense layers.
    b->Args({64, 120, 84, threads});
    b->Args({64, 84, 10, threads});
    b->Args({64, 400, 120, threads});
    b->Args({256, 512, 10, threads});
    b->Args({64, 1024, 16, threads});
    b->Args({8, 128, 1000, threads});
  }
  b->ArgNames({"m", "k", "n", "threads"})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_SessionMatMulConstB)->Apply(ConstBShapes);
BENCHMARK(BM_SessionFusedMatMulReluConstB)->Apply(ConstBShapes);

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) {
  return graphrt::bench::RunWithPlugins(argc, argv);
}
