// The backward convolutions of W8's training step (bench/train_workloads.h,
// SmallCnnTrain: NHWC, 3x3 SAME, stride 1, batch 8):
//   bf_conv2: Conv2DBackpropFilter of conv2d_1, x [8,112,112,64], dy [8,112,112,128]
//   bf_conv1: Conv2DBackpropFilter of conv2d,   x [8,224,224,3],  dy [8,224,224,64]
//   bd_conv2: Conv2DBackpropInput of conv2d_1 (the gradient reaching conv2d)
//   bd_conv1: Conv2DBackpropInput of conv2d (the image's gradient, which no
//             update needs; timed for completeness)
// and the filter gradients of W7's LeNet-5 (5x5, batch 64; SAME here, the
// second is VALID in W7):
//   bf_lenet1: x [64,28,28,1], dy [64,28,28,6] (few output channels: the
//              narrow kernel, ops/nn/cpu/narrow_conv.h)
//   bf_lenet2: x [64,14,14,6], dy [64,14,14,16]
//   bd_lenet2: its input gradient (the gradient reaching LeNet's first pool)
// run
//   * through a graphrt Session (the op alone, every input fed);
//   * directly on oneDNN, same shapes and user layouts (NHWC activations,
//     HWIO filter): one primitive over the whole batch, weights in the
//     layout oneDNN picks, the diff_weights reorder to HWIO (backward
//     weights) or the filter reorder from HWIO (backward data) timed with
//     it, as the kernel must do them every Run; oneDNN's own OpenMP threads;
//   * directly on oneDNN with every activation in the primitive's preferred
//     (blocked) layout and no reorder at all: the ceiling.
// on 1 and 2 threads. At the end the ratios session / direct are printed.
//
//   build/bin/graphrt_bench_conv_backprop [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

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

struct Case {
  const char* name;
  bool filter_grad;  // Conv2DBackpropFilter, else Conv2DBackpropInput
  int64_t n, c, h, w, oc;
  int64_t k = 3;  // square filter, SAME, stride 1
};
const Case kCases[] = {{"bf_conv2_64to128_112", true, 8, 64, 112, 112, 128},
                       {"bf_conv1_3to64_224", true, 8, 3, 224, 224, 64},
                       {"bd_conv2_64to128_112", false, 8, 64, 112, 112, 128},
                       {"bd_conv1_3to64_224", false, 8, 3, 224, 224, 64},
                       {"bf_lenet1_1to6_28", true, 64, 1, 28, 28, 6, 5},
                       {"bf_lenet2_6to16_14", true, 64, 6, 14, 14, 16, 5},
                       {"bd_lenet2_6to16_14", false, 64, 6, 14, 14, 16, 5}};
constexpr int64_t kNumCases = sizeof(kCases) / sizeof(kCases[0]);

std::string Int32ConstText(const std::string& name, const std::vector<int64_t>& v) {
  std::string vals;
  for (int64_t x : v) vals += "int_val: " + std::to_string(x) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
         "attr { key: 'value' value { tensor { dtype: DT_INT32 " + bench::TensorShapeText({4}) + vals +
         "} } } }\n";
}

std::string FloatPlaceholderText(const std::string& name) {
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
}

proto::GraphDef BackpropGraph(const Case& s) {
  std::string g = FloatPlaceholderText("dy");
  std::string op;
  if (s.filter_grad) {
    g += FloatPlaceholderText("x") + Int32ConstText("sizes", {s.k, s.k, s.c, s.oc});
    op = "op: 'Conv2DBackpropFilter' input: 'x' input: 'sizes' input: 'dy' ";
  } else {
    g += FloatPlaceholderText("f") + Int32ConstText("sizes", {s.n, s.h, s.w, s.c});
    op = "op: 'Conv2DBackpropInput' input: 'sizes' input: 'f' input: 'dy' ";
  }
  g += "node { name: 'y' " + op +
       "attr { key: 'T' value { type: DT_FLOAT } } "
       "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
       "attr { key: 'padding' value { s: 'SAME' } } "
       "attr { key: 'data_format' value { s: 'NHWC' } } }\n";
  proto::GraphDef def;
  if (!ParseGraphDefText(g, &def).ok()) std::abort();
  return def;
}

Tensor RandomTensor(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(GR_FLOAT, TensorShape(dims));
  const std::vector<float> v = bench::RandomFloats(static_cast<size_t>(t.NumElements()), seed);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

void BM_Session(benchmark::State& state) {
  const Case& s = kCases[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  std::unique_ptr<Session> sess;
  if (!NewSession(opts, &sess).ok() || !sess->Create(BackpropGraph(s)).ok()) {
    state.SkipWithError("session setup failed");
    return;
  }
  std::vector<std::pair<std::string, Tensor>> feeds = {{"dy", RandomTensor({s.n, s.h, s.w, s.oc}, 3)}};
  if (s.filter_grad) {
    feeds.emplace_back("x", RandomTensor({s.n, s.h, s.w, s.c}, 4));
  } else {
    feeds.emplace_back("f", RandomTensor({s.k, s.k, s.c, s.oc}, 5));
  }
  std::vector<Tensor> out;
  for (auto _ : state) {
    out.clear();
    Status st = sess->Run(feeds, {"y"}, {}, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  state.SetLabel(s.name);
}

void Fill(dnnl::memory* m, uint32_t seed) {
  const std::vector<float> v = bench::RandomFloats(m->get_desc().get_size() / sizeof(float), seed);
  std::copy(v.begin(), v.end(), static_cast<float*>(m->get_data_handle()));
}

void BM_Dnnl(benchmark::State& state) {
  using dnnl::memory;
  const Case& s = kCases[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const bool blocked = state.range(2) != 0;
  bench::SetOmpThreads(threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::dims src_d = {s.n, s.c, s.h, s.w}, dst_d = {s.n, s.oc, s.h, s.w};
  const memory::dims w_d = {s.oc, s.c, s.k, s.k};
  const memory::dims strides = {1, 1}, dil = {0, 0}, pad = {s.k / 2, s.k / 2};
  const auto act_tag = blocked ? memory::format_tag::any : memory::format_tag::nhwc;
  const memory::desc src_md(src_d, memory::data_type::f32, act_tag);
  const memory::desc dst_md(dst_d, memory::data_type::f32, act_tag);
  const memory::desc w_any(w_d, memory::data_type::f32, memory::format_tag::any);
  const memory::desc w_user(w_d, memory::data_type::f32, memory::format_tag::hwio);
  const auto alg = dnnl::algorithm::convolution_direct;
  dnnl::convolution_forward::primitive_desc hint(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, src_md, w_any, dst_md, strides,
                                      dil, pad, pad),
      eng);
  memory f_user(w_user, eng);
  Fill(&f_user, 5);
  std::string impl;
  if (s.filter_grad) {
    dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(alg, src_md, w_any, dst_md, strides, dil, pad, pad), eng, hint);
    dnnl::convolution_backward_weights prim(pd);
    memory src(pd.src_desc(), eng), ddst(pd.diff_dst_desc(), eng), dw(pd.diff_weights_desc(), eng);
    Fill(&src, 4);
    Fill(&ddst, 3);
    const bool reorder = pd.diff_weights_desc() != w_user;
    dnnl::reorder to_user;
    if (reorder) to_user = dnnl::reorder(dw, f_user);
    for (auto _ : state) {
      prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_DIFF_WEIGHTS, reorder ? dw : f_user}});
      if (reorder) to_user.execute(strm, dw, f_user);
      strm.wait();
    }
    impl = pd.impl_info_str();
  } else {
    dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(alg, src_md, w_any, dst_md, strides, dil, pad, pad), eng, hint);
    dnnl::convolution_backward_data prim(pd);
    memory dsrc(pd.diff_src_desc(), eng), ddst(pd.diff_dst_desc(), eng), w(pd.weights_desc(), eng);
    Fill(&ddst, 3);
    const bool reorder = pd.weights_desc() != w_user;
    dnnl::reorder from_user;
    if (reorder) from_user = dnnl::reorder(f_user, w);
    for (auto _ : state) {
      if (reorder) from_user.execute(strm, f_user, w);
      prim.execute(strm, {{DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_WEIGHTS, reorder ? w : f_user}, {DNNL_ARG_DIFF_SRC, dsrc}});
      strm.wait();
    }
    impl = pd.impl_info_str();
  }
  state.SetLabel(std::string(s.name) + " " + impl);
  bench::SetOmpThreads(1);
}

void SessionArgs(benchmark::internal::Benchmark* b) {
  for (int64_t c = 0; c < kNumCases; ++c)
    for (int64_t threads : {1, 2}) b->Args({c, threads});
}
void DnnlArgs(benchmark::internal::Benchmark* b) {
  for (int64_t blocked : {0, 1})
    for (int64_t c = 0; c < kNumCases; ++c)
      for (int64_t threads : {1, 2}) b->Args({c, threads, blocked});
}

// Each iteration is 0.05-2 s: a few iterations suffice, and a loaded machine
// (other builds on the same cores) is best compared within one run.
BENCHMARK(BM_Session)->Apply(SessionArgs)->ArgNames({"case", "threads"})->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dnnl)->Apply(DnnlArgs)->ArgNames({"case", "threads", "blocked"})->UseRealTime()->MinTime(1.0)->Unit(benchmark::kMillisecond);

// Prints every result and, at the end, session time / direct time.
class RatioReporter : public bench::TimesReporter {
 public:
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nsession / direct oneDNN (NHWC, one primitive) and / direct oneDNN (blocked, no reorders):\n");
    for (int c = 0; c < kNumCases; ++c)
      for (int threads : {1, 2}) {
        const std::string args = "case:" + std::to_string(c) + "/threads:" + std::to_string(threads);
        const auto s = times_.find("BM_Session/" + args + "/min_time:1.000/real_time");
        const auto d = times_.find("BM_Dnnl/" + args + "/blocked:0/min_time:1.000/real_time");
        const auto bl = times_.find("BM_Dnnl/" + args + "/blocked:1/min_time:1.000/real_time");
        if (s == times_.end()) continue;
        std::printf("  %-22s threads %d: session %.1f ms", kCases[c].name, threads, s->second);
        if (d != times_.end()) std::printf("; direct %.1f ms, ratio %.3f", d->second, s->second / d->second);
        if (bl != times_.end()) std::printf("; blocked %.1f ms, ratio %.3f", bl->second, s->second / bl->second);
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
