// The layout pass end to end (the nn plugin's nn.nhwc_layout, ops/nn/cpu/layout_pass.cc): an NCHW
// network on the CPU runs its convolution chain in NHWC between Transposes
// and gives the numbers of the same graph run op by op in NCHW (opt_level
// L0). Its structure is checked in graph_optimizer_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT: the op-test vocabulary

enum class Layout { kDefault, kOn, kOff, kNoRewrites };

std::unique_ptr<Session> NewSessionWith(const std::string& pbtxt, Layout layout, int threads) {
  LoadStandardPlugins();
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  proto::GraphOptions* g = opts.config.mutable_graph_options();
  if (layout == Layout::kOn) g->mutable_rewrite_options()->set_layout_optimizer(proto::RewriterConfig::ON);
  if (layout == Layout::kOff) g->mutable_rewrite_options()->set_layout_optimizer(proto::RewriterConfig::OFF);
  if (layout == Layout::kNoRewrites) g->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0);
  std::unique_ptr<Session> s;
  EXPECT_TRUE(NewSession(opts, &s).ok());
  Status st = s->Create(ParseGraph(pbtxt));
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

std::string Ints(const std::string& key, const std::vector<int>& v) {
  std::string s = "attr { key: '" + key + "' value { list {";
  for (int x : v) s += " i: " + std::to_string(x);
  return s + " } } } ";
}

std::string Str(const std::string& key, const std::string& v) {
  return "attr { key: '" + key + "' value { s: '" + v + "' } } ";
}

const std::string kF = TypeAttr("T", "DT_FLOAT");
const std::string kNchw = Str("data_format", "NCHW");

// conv 3x3 (SAME) + bias + relu, maxpool, depthwise 3x3, batch norm, a
// residual Add, a channel concat, a mirror pad, conv 1x1 with explicit
// padding and stride 2 in H, avgpool,
// then a Mean over H and W ([N, C] in both layouts) and a Mean over C with
// keep_dims (4-d: transposed back). r1 is fetched mid-chain.
std::string NchwNet() {
  const int64_t cin = 3, c1 = 8, c2 = 4;
  return PlaceholderNode("x", "DT_FLOAT") + ConstFloat("f1", {3, 3, cin, c1}, UniformFloats(9 * cin * c1, 1)) +
         ConstFloat("bias1", {c1}, UniformFloats(c1, 2)) + ConstFloat("fdw", {3, 3, c1, 1}, UniformFloats(9 * c1, 3)) +
         ConstFloat("scale", {c1}, UniformFloats(c1, 4, 0.5, 2)) + ConstFloat("offset", {c1}, UniformFloats(c1, 5)) +
         ConstFloat("mean_in", {c1}, UniformFloats(c1, 6)) + ConstFloat("var_in", {c1}, UniformFloats(c1, 7, 0.5, 2)) +
         ConstFloat("f2", {1, 1, 2 * c1, c2}, UniformFloats(2 * c1 * c2, 8)) + ConstInt32("hw", {2, 3}) +
         ConstInt32("c", {1}) + ConstNode("axis", "DT_INT32", {}, "int_val", {"1"}) +
         ConstNode("pads", "DT_INT32", {4, 2}, "int_val", {"0", "0", "0", "0", "1", "1", "2", "1"}) +
         NodeText("conv1", "Conv2D", {"x", "f1"}, kF + kNchw + Ints("strides", {1, 1, 1, 1}) + Str("padding", "SAME")) +
         NodeText("b1", "BiasAdd", {"conv1", "bias1"}, kF + kNchw) + NodeText("r1", "Relu", {"b1"}, kF) +
         NodeText("p1", "MaxPool", {"r1"},
                  kF + kNchw + Ints("ksize", {1, 1, 2, 2}) + Ints("strides", {1, 1, 2, 2}) + Str("padding", "SAME")) +
         NodeText("dw", "DepthwiseConv2dNative", {"p1", "fdw"},
                  kF + kNchw + Ints("strides", {1, 1, 1, 1}) + Str("padding", "SAME")) +
         NodeText("bn", "FusedBatchNormV3", {"dw", "scale", "offset", "mean_in", "var_in"},
                  kF + TypeAttr("U", "DT_FLOAT") + kNchw + "attr { key: 'is_training' value { b: false } } ") +
         NodeText("sum", "AddV2", {"bn", "p1"}, kF) +
         NodeText("cat", "ConcatV2", {"sum", "p1", "axis"}, kF + "attr { key: 'N' value { i: 2 } } ") +
         NodeText("padded", "MirrorPad", {"cat", "pads"}, kF + Str("mode", "REFLECT")) +
         NodeText("conv2", "Conv2D", {"padded", "f2"},
                  kF + kNchw + Ints("strides", {1, 1, 2, 1}) + Str("padding", "EXPLICIT") +
                      Ints("explicit_paddings", {0, 0, 0, 0, 1, 1, 2, 0})) +
         NodeText("avg", "AvgPool", {"conv2"},
                  kF + kNchw + Ints("ksize", {1, 1, 3, 3}) + Ints("strides", {1, 1, 2, 2}) + Str("padding", "VALID")) +
         NodeText("mean", "Mean", {"avg", "hw"}, kF) +
         NodeText("kept", "Max", {"conv2", "c"}, kF + "attr { key: 'keep_dims' value { b: true } } ");
}

const std::vector<std::string> kFetches = {"mean:0", "kept:0", "r1:0", "sum:0"};

// Runs with a software trace; `transposes` gets the names of the Transpose
// nodes that ran, sorted.
std::vector<Tensor> RunTracedAll(Session* s, const Feeds& feeds, std::vector<std::string>* transposes,
                                 const std::vector<std::string>& fetches = kFetches,
                                 const std::vector<std::string>& targets = {}) {
  proto::RunOptions ro;
  ro.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  Status st = s->Run(ro, feeds, fetches, targets, &out, &md);
  EXPECT_TRUE(st.ok()) << st;
  transposes->clear();
  for (const auto& dev : md.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats())
      if (ns.timeline_label().find(" = Transpose") != std::string::npos) transposes->push_back(ns.node_name());
  std::sort(transposes->begin(), transposes->end());
  return out;
}

Feeds NetFeeds() {
  const Dims dims = {2, 3, 13, 11};
  return {{"x", MakeTensor<float>(GR_FLOAT, dims, UniformFloats(NumElements(dims), 9, -2, 2))}};
}

TEST(LayoutTest, NchwNetRunsInNhwcWithTheNumbersOfTheNchwOps) {
  const Feeds feeds = NetFeeds();
  for (int threads : {1, 2}) {
    auto converted = NewSessionWith(NchwNet(), Layout::kDefault, threads);  // on by default
    auto plain = NewSessionWith(NchwNet(), Layout::kNoRewrites, threads);
    std::vector<std::string> transposes, plain_transposes;
    for (int run = 0; run < 2; ++run) {
      const std::vector<Tensor> a = RunTracedAll(converted.get(), feeds, &transposes);
      const std::vector<Tensor> b = RunTracedAll(plain.get(), feeds, &plain_transposes);
      ASSERT_EQ(a.size(), kFetches.size());
      ASSERT_EQ(b.size(), kFetches.size());
      for (size_t i = 0; i < a.size(); ++i) ExpectCloseFloats(a[i], b[i], 1e-5, kFetches[i]);
      // x in; r1 and sum (fetched) and kept (keep_dims) out; the rest of
      // the chain, mean included, stays NHWC.
      EXPECT_EQ(transposes, (std::vector<std::string>{"conv1/input_to_nhwc", "kept/output_to_nchw",
                                                      "r1/output_to_nchw", "sum/output_to_nchw"}))
          << "threads " << threads;
      EXPECT_TRUE(plain_transposes.empty());
    }
  }
}

TEST(LayoutTest, TheRewriterConfigTogglesThePass) {
  const Feeds feeds = NetFeeds();
  auto on = NewSessionWith(NchwNet(), Layout::kOn, 1);
  auto off = NewSessionWith(NchwNet(), Layout::kOff, 1);
  std::vector<std::string> on_transposes, off_transposes;
  const std::vector<Tensor> a = RunTracedAll(on.get(), feeds, &on_transposes);
  const std::vector<Tensor> b = RunTracedAll(off.get(), feeds, &off_transposes);
  EXPECT_EQ(on_transposes.size(), 4u);
  EXPECT_TRUE(off_transposes.empty());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ExpectCloseFloats(a[i], b[i], 1e-5, kFetches[i]);
}

// A feed of the wrong rank fails at the Transpose made for conv1, whose
// name the error carries; the session then runs a good feed.
TEST(LayoutTest, BadInputNamesTheConvolutionAndTheSessionGoesOn) {
  auto s = NewSessionWith(NchwNet(), Layout::kDefault, 1);
  auto plain = NewSessionWith(NchwNet(), Layout::kNoRewrites, 1);
  std::vector<Tensor> out;
  const Feeds rank3 = {{"x", MakeTensor<float>(GR_FLOAT, {3, 13, 11}, UniformFloats(3 * 13 * 11, 10))}};
  const Status st = s->Run(rank3, kFetches, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("conv1"), std::string::npos) << st;
  std::vector<std::string> transposes;
  const std::vector<Tensor> a = RunTracedAll(s.get(), NetFeeds(), &transposes);
  const std::vector<Tensor> b = RunTracedAll(plain.get(), NetFeeds(), &transposes);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ExpectCloseFloats(a[i], b[i], 1e-5, kFetches[i]);
}

// The graph's own Transpose NHWC -> NCHW in front of the convolution is read
// through and, unless it is a target, no longer runs.
TEST(LayoutTest, TheGraphsOwnTransposeToNchwIsBypassedUnlessATarget) {
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstInt32("perm", {0, 3, 1, 2}) +
                        ConstFloat("f", {3, 3, 5, 6}, UniformFloats(90 * 3, 1)) +
                        NodeText("xt", "Transpose", {"x", "perm"}, kF) +
                        NodeText("conv", "Conv2D", {"xt", "f"},
                                 kF + kNchw + Ints("strides", {1, 1, 1, 1}) + Str("padding", "VALID"));
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, {2, 9, 7, 5}, UniformFloats(2 * 9 * 7 * 5, 2))}};
  auto converted = NewSessionWith(g, Layout::kDefault, 1);
  auto plain = NewSessionWith(g, Layout::kNoRewrites, 1);
  for (const std::vector<std::string>& targets : {std::vector<std::string>{}, std::vector<std::string>{"xt"}}) {
    std::vector<std::string> transposes, plain_transposes;
    const std::vector<Tensor> a = RunTracedAll(converted.get(), feeds, &transposes, {"conv:0"}, targets);
    const std::vector<Tensor> b = RunTracedAll(plain.get(), feeds, &plain_transposes, {"conv:0"}, targets);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    if (targets.empty())
      EXPECT_EQ(transposes, std::vector<std::string>{"conv/output_to_nchw"});
    else
      EXPECT_EQ(transposes, (std::vector<std::string>{"conv/output_to_nchw", "xt"}));
    ExpectCloseFloats(a[0], b[0], 1e-5, "conv");
  }
}

}  // namespace
}  // namespace graphrt
