// The two convolutions of the reference CNN at batch 8 ([8,3,224,224]
// conv3x3 3->64 + bias + ReLU, then after a 2x2 pool [8,64,112,112] conv3x3
// 64->128 + bias + ReLU; SAME padding) and the two of LeNet-5 at batch 64
// ([64,1,28,28] conv5x5 1->6 SAME, [64,6,14,14] conv5x5 6->16 VALID; the
// first runs on ops/nn/cpu/narrow_conv.h, not oneDNN), and three with 8 to
// 15 output channels (3x3 SAME: 8->12 at 28x28 batch 32, 16->8 at 56x56
// batch 8, 32->15 at 28x28 batch 16), where the narrow kernel and oneDNN
// trade places by the CPU's vector width (NarrowConvApplies), run
//   * through a graphrt Session: _FusedConv2D (BiasAdd, Relu) with a Const
//     filter marked `_weights_const`, as the graph pass makes it;
//   * directly on oneDNN, same shapes and layouts: one primitive, weights
//     reordered once, bias + ReLU post-op, oneDNN's own OpenMP threads;
//   * directly on oneDNN with blocked activations (the primitive's preferred
//     layouts, no reorders anywhere): the ceiling.
// on 1 and 2 threads, in NHWC and NCHW. At the end the ratio session /
// direct is printed per case.
//
//   build/bin/graphrt_bench_conv [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "bench_util.h"

namespace graphrt {
namespace {

struct ConvShape {
  const char* name;
  int64_t n, c, h, w, oc;
  int64_t k = 3;     // square filter
  bool same = true;  // SAME (odd k: k / 2 on every side) or VALID
  int64_t oh() const { return same ? h : h - k + 1; }
  int64_t ow() const { return same ? w : w - k + 1; }
};
const ConvShape kShapes[] = {{"conv1_3to64_224", 8, 3, 224, 224, 64},
                             {"conv2_64to128_112", 8, 64, 112, 112, 128},
                             {"lenet1_1to6_28", 64, 1, 28, 28, 6, 5, true},
                             {"lenet2_6to16_14", 64, 6, 14, 14, 16, 5, false},
                             {"mid_8to12_28", 32, 8, 28, 28, 12, 3, true},
                             {"mid_16to8_56", 8, 16, 56, 56, 8, 3, true},
                             {"mid_32to15_28", 16, 32, 28, 28, 15, 3, true}};
constexpr int64_t kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);

proto::GraphDef FusedConvGraph(const ConvShape& s, bool nchw) {
  const std::vector<float> f = bench::RandomFloats(static_cast<size_t>(s.k * s.k * s.c * s.oc), 1);
  const std::vector<float> b = bench::RandomFloats(static_cast<size_t>(s.oc), 2);
  const std::string fmt = nchw ? "NCHW" : "NHWC";
  const std::string strides = "list { i: 1 i: 1 i: 1 i: 1 }";
  std::string g =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'f' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT " +
      bench::TensorShapeText({s.k, s.k, s.c, s.oc}) + bench::FloatValText(f) +
      "} } } }\n"
      "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT " +
      bench::TensorShapeText({s.oc}) + bench::FloatValText(b) +
      "} } } }\n"
      "node { name: 'y' op: '_FusedConv2D' input: 'x' input: 'f' input: 'b' "
      "attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'num_args' value { i: 1 } } "
      "attr { key: 'strides' value { " + strides + " } } "
      "attr { key: 'padding' value { s: '" + std::string(s.same ? "SAME" : "VALID") + "' } } "
      "attr { key: 'data_format' value { s: '" + fmt + "' } } "
      "attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: 'Relu' } } } "
      "attr { key: '_weights_const' value { b: true } } }\n";
  proto::GraphDef def;
  if (!ParseGraphDefText(g, &def).ok()) std::abort();
  return def;
}

void BM_Session(benchmark::State& state) {
  const ConvShape& s = kShapes[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const bool nchw = state.range(2) != 0;
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  std::unique_ptr<Session> sess;
  if (!NewSession(opts, &sess).ok() || !sess->Create(FusedConvGraph(s, nchw)).ok()) {
    state.SkipWithError("session setup failed");
    return;
  }
  const std::vector<int64_t> dims = nchw ? std::vector<int64_t>{s.n, s.c, s.h, s.w}
                                         : std::vector<int64_t>{s.n, s.h, s.w, s.c};
  Tensor x(GR_FLOAT, TensorShape(dims));
  const std::vector<float> xv = bench::RandomFloats(static_cast<size_t>(x.NumElements()), 3);
  std::copy(xv.begin(), xv.end(), x.data<float>());
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  std::vector<Tensor> out;
  for (auto _ : state) {
    out.clear();  // the output buffer is freed before the next Run, as in a serving loop
    Status st = sess->Run(feeds, {"y"}, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  state.SetLabel(s.name);
}

void BM_Dnnl(benchmark::State& state) {
  using dnnl::memory;
  const ConvShape& s = kShapes[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const bool nchw = state.range(2) != 0;
  const bool blocked = state.range(3) != 0;
  bench::SetOmpThreads(threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::dims src_d = {s.n, s.c, s.h, s.w}, dst_d = {s.n, s.oc, s.oh(), s.ow()};
  const memory::dims w_d = {s.oc, s.c, s.k, s.k};
  const int64_t pad = s.same ? s.k / 2 : 0;
  const auto user_tag = nchw ? memory::format_tag::nchw : memory::format_tag::nhwc;
  const auto act_tag = blocked ? memory::format_tag::any : user_tag;
  memory::desc src_md(src_d, memory::data_type::f32, act_tag);
  memory::desc dst_md(dst_d, memory::data_type::f32, act_tag);
  memory::desc w_md(w_d, memory::data_type::f32, memory::format_tag::any);
  memory::desc b_md({s.oc}, memory::data_type::f32, memory::format_tag::a);
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::convolution_direct, src_md, w_md, b_md, dst_md,
                                    {1, 1}, {0, 0}, {pad, pad}, {pad, pad});
  dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
  dnnl::convolution_forward conv(pd);
  // Weights from HWIO, reordered once (outside the timing).
  std::vector<float> f = bench::RandomFloats(static_cast<size_t>(s.k * s.k * s.c * s.oc), 1);
  memory f_user({w_d, memory::data_type::f32, memory::format_tag::hwio}, eng, f.data());
  memory f_mem(pd.weights_desc(), eng);
  dnnl::reorder(f_user, f_mem).execute(strm, f_user, f_mem);
  std::vector<float> b = bench::RandomFloats(static_cast<size_t>(s.oc), 2);
  memory b_mem(b_md, eng, b.data());
  memory src(pd.src_desc(), eng), dst(pd.dst_desc(), eng);
  std::vector<float> xv = bench::RandomFloats(pd.src_desc().get_size() / sizeof(float), 3);
  std::copy(xv.begin(), xv.end(), static_cast<float*>(src.get_data_handle()));
  strm.wait();
  for (auto _ : state) {
    conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, f_mem}, {DNNL_ARG_BIAS, b_mem},
                        {DNNL_ARG_DST, dst}});
    strm.wait();
  }
  state.SetLabel(std::string(s.name) + " " + pd.impl_info_str());
  bench::SetOmpThreads(1);
}

// Args: shape, threads, nchw.
void SessionArgs(benchmark::internal::Benchmark* b) {
  for (int64_t nchw : {0, 1})
    for (int64_t shape = 0; shape < kNumShapes; ++shape)
      for (int64_t threads : {1, 2}) b->Args({shape, threads, nchw});
}
// Args: shape, threads, nchw, blocked.
void DnnlArgs(benchmark::internal::Benchmark* b) {
  for (int64_t blocked : {0, 1})
    for (int64_t nchw : {0, 1})
      for (int64_t shape = 0; shape < kNumShapes; ++shape)
        for (int64_t threads : {1, 2}) b->Args({shape, threads, nchw, blocked});
}

BENCHMARK(BM_Session)->Apply(SessionArgs)->ArgNames({"shape", "threads", "nchw"})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dnnl)->Apply(DnnlArgs)->ArgNames({"shape", "threads", "nchw", "blocked"})->UseRealTime()->Unit(benchmark::kMillisecond);

// Prints every result and, at the end, session time / direct time.
class RatioReporter : public bench::TimesReporter {
 public:
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nsession / direct oneDNN (same layout) and / direct oneDNN (blocked):\n");
    for (int nchw : {0, 1})
      for (int shape = 0; shape < kNumShapes; ++shape)
        for (int threads : {1, 2}) {
          const std::string args = "shape:" + std::to_string(shape) + "/threads:" + std::to_string(threads) +
                                   "/nchw:" + std::to_string(nchw);
          const auto s = times_.find("BM_Session/" + args + "/real_time");
          const auto d = times_.find("BM_Dnnl/" + args + "/blocked:0/real_time");
          const auto bl = times_.find("BM_Dnnl/" + args + "/blocked:1/real_time");
          if (s == times_.end() || d == times_.end()) continue;
          std::printf("  %-18s %s threads %d: session %.2f ms, direct %.2f ms, ratio %.3f", kShapes[shape].name,
                      nchw ? "NCHW" : "NHWC", threads, s->second, d->second, s->second / d->second);
          if (bl != times_.end()) std::printf("; blocked %.2f ms, ratio %.3f", bl->second, s->second / bl->second);
          std::printf("\n");
        }
  }
};

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) {
  graphrt::RatioReporter reporter;
  return graphrt::bench::RunWithPlugins(argc, argv, &reporter);
}
