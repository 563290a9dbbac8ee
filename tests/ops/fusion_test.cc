// The optimizer's fusions end to end: a session with the default options
// runs MatMul/Conv2D + BiasAdd (+ activation) as one fused kernel, and gives
// the same numbers as the same graph with optimisation off (opt_level L0),
// which runs the original ops one by one.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT: the op-test vocabulary

// A session on `pbtxt`: with the fusions (`optimize`) or none of the
// rewrites (opt_level L0). The layout pass stays off (OpTestOptions), so
// NCHW graphs reach the NCHW fused kernels.
std::unique_ptr<Session> NewSessionWith(const std::string& pbtxt, bool optimize, int threads) {
  LoadStandardPlugins();
  SessionOptions opts = OpTestOptions(threads);
  if (!optimize)
    opts.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0);
  std::unique_ptr<Session> s;
  EXPECT_TRUE(NewSession(opts, &s).ok());
  Status st = s->Create(ParseGraph(pbtxt));
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

std::string ActivationNode(const std::string& act, const std::string& input) {
  std::string attrs = TypeAttr("T", "DT_FLOAT");
  if (act == "LeakyRelu") attrs += "attr { key: 'alpha' value { f: 0.3 } } ";
  return NodeText("act", act, {input}, attrs);
}

class MatMulFusion : public ::testing::TestWithParam<std::string> {};

TEST_P(MatMulFusion, FusedEqualsUnfused) {
  const std::string act = GetParam();
  // The Const weights of the fused node are marked `_weights_const`: the
  // first shape runs on sgemm, the second (m*n*k >= 4M) on oneDNN's matmul
  // with the weights packed once (twice run: the second reuses them).
  for (const Dims& mkn : {Dims{37, 129, 65}, Dims{64, 256, 300}}) {
    const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
    std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstFloat("w", {k, n}, UniformFloats(k * n, 2)) +
                    ConstFloat("bias", {n}, UniformFloats(n, 3)) +
                    NodeText("mm", "MatMul", {"x", "w"}, TypeAttr("T", "DT_FLOAT")) +
                    NodeText("ba", "BiasAdd", {"mm", "bias"}, TypeAttr("T", "DT_FLOAT"));
    const std::string last = act.empty() ? "ba" : "act";
    if (!act.empty()) g += ActivationNode(act, "ba");
    const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, {m, k}, UniformFloats(m * k, 1, -2, 2))}};
    for (int threads : {1, 2}) {
      std::map<std::string, std::string> fused_ops, plain_ops;
      auto fused = NewSessionWith(g, true, threads);
      auto plain = NewSessionWith(g, false, threads);
      for (int run = 0; run < 2; ++run) {
        const Tensor a = RunTraced(fused.get(), feeds, last + ":0", &fused_ops);
        const Tensor b = RunTraced(plain.get(), feeds, last + ":0", &plain_ops);
        EXPECT_EQ(fused_ops[last], "_FusedMatMul") << "threads " << threads << " m " << m;
        EXPECT_EQ(fused_ops.count("mm"), 0u);
        EXPECT_EQ(plain_ops["mm"], "MatMul");
        ExpectCloseFloats(a, b, 1e-5);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, MatMulFusion,
                         ::testing::Values("", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"));

struct ConvCase {
  std::string act;
  std::string data_format;
};

class ConvFusion : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvFusion, FusedEqualsUnfused) {
  const ConvCase c = GetParam();
  const bool nchw = c.data_format == "NCHW";
  const int64_t batch = 3, h = 11, w = 9, cin = 5, cout = 7;
  const Dims in_dims = nchw ? Dims{batch, cin, h, w} : Dims{batch, h, w, cin};
  const std::string conv_attrs = TypeAttr("T", "DT_FLOAT") +
                                 "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
                                 "attr { key: 'padding' value { s: 'SAME' } } "
                                 "attr { key: 'data_format' value { s: '" + c.data_format + "' } } ";
  std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstFloat("filt", {3, 3, cin, cout}, UniformFloats(9 * cin * cout, 5)) +
                  ConstFloat("bias", {cout}, UniformFloats(cout, 6)) + NodeText("conv", "Conv2D", {"x", "filt"}, conv_attrs) +
                  NodeText("ba", "BiasAdd", {"conv", "bias"},
                           TypeAttr("T", "DT_FLOAT") + "attr { key: 'data_format' value { s: '" + c.data_format +
                               "' } } ");
  const std::string last = c.act.empty() ? "ba" : "act";
  if (!c.act.empty()) g += ActivationNode(c.act, "ba");
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, in_dims, UniformFloats(NumElements(in_dims), 4, -2, 2))}};
  std::map<std::string, std::string> fused_ops, plain_ops;
  auto fused = NewSessionWith(g, true, 2);
  auto plain = NewSessionWith(g, false, 2);
  // Twice: the second Run uses the filter the kernel re-laid out once.
  for (int run = 0; run < 2; ++run) {
    const Tensor a = RunTraced(fused.get(), feeds, last + ":0", &fused_ops);
    const Tensor b = RunTraced(plain.get(), feeds, last + ":0", &plain_ops);
    EXPECT_EQ(fused_ops[last], "_FusedConv2D");
    EXPECT_EQ(plain_ops["conv"], "Conv2D");
    ExpectCloseFloats(a, b, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(ActivationsAndFormats, ConvFusion,
                         ::testing::Values(ConvCase{"", "NHWC"}, ConvCase{"Relu", "NHWC"}, ConvCase{"Relu", "NCHW"},
                                           ConvCase{"Relu6", "NHWC"}, ConvCase{"Elu", "NCHW"},
                                           ConvCase{"LeakyRelu", "NHWC"}),
                         [](const auto& info) {
                           return (info.param.act.empty() ? std::string("BiasOnly") : info.param.act) + "_" +
                                  info.param.data_format;
                         });

// Conv2D + BiasAdd + activation + pooling -> _FusedConv2DPool. Cases reach
// the three paths for fewer than 16 output channels: 2x2/2 unpadded windows
// pooled in registers (NHWC and NCHW; one or two vectors of columns; whole
// and split channel blocks; odd rows and columns dropped; every activation;
// a strided convolution), other windows tiling rows without padding banded
// (NHWC: 2x3/3x2 VALID with gaps between windows), and the buffered one
// (overlapping or padded windows); for 16+ channels in NCHW, oneDNN's
// pooling of each chunk of images (one chunk, one per thread, one per image
// when an image's output passes 1 MB), else the buffered path.
struct ConvPoolCase {
  std::string pool_op;
  std::string data_format;
  int64_t h, w, cout;
  std::vector<int64_t> ksize_hw, strides_hw;
  std::string padding;
  std::string act = "Relu";
  int64_t conv_stride_h = 1;
};

void PrintTo(const ConvPoolCase& c, std::ostream* os) {
  *os << c.pool_op << " " << c.ksize_hw[0] << "x" << c.ksize_hw[1] << "/" << c.strides_hw[0] << "x"
      << c.strides_hw[1] << " " << c.padding << " after " << c.act << " conv to " << c.cout << " channels, "
      << c.data_format << " " << c.h << "x" << c.w << ", conv stride_h " << c.conv_stride_h;
}

class ConvPoolFusion : public ::testing::TestWithParam<ConvPoolCase> {};

std::string PoolList(const std::string& key, const std::vector<int64_t>& hw, bool nchw) {
  const std::string v = nchw ? "i: 1 i: 1 i: " + std::to_string(hw[0]) + " i: " + std::to_string(hw[1])
                             : "i: 1 i: " + std::to_string(hw[0]) + " i: " + std::to_string(hw[1]) + " i: 1";
  return "attr { key: '" + key + "' value { list { " + v + " } } } ";
}

std::string ConvReluPoolGraph(const ConvPoolCase& c, int64_t cin, const std::string& pool_padding) {
  const bool nchw = c.data_format == "NCHW";
  const std::string fmt = "attr { key: 'data_format' value { s: '" + c.data_format + "' } } ";
  const std::string sh = std::to_string(c.conv_stride_h);
  const std::string conv_strides = nchw ? "i: 1 i: 1 i: " + sh + " i: 1" : "i: 1 i: " + sh + " i: 1 i: 1";
  const std::string conv_attrs = TypeAttr("T", "DT_FLOAT") + "attr { key: 'strides' value { list { " +
                                 conv_strides + " } } } attr { key: 'padding' value { s: 'SAME' } } " + fmt;
  return PlaceholderNode("x", "DT_FLOAT") + ConstFloat("filt", {5, 5, cin, c.cout}, UniformFloats(25 * cin * c.cout, 7)) +
         ConstFloat("bias", {c.cout}, UniformFloats(c.cout, 8)) + NodeText("conv", "Conv2D", {"x", "filt"}, conv_attrs) +
         NodeText("ba", "BiasAdd", {"conv", "bias"}, TypeAttr("T", "DT_FLOAT") + fmt) +
         NodeText("act", c.act, {"ba"}, TypeAttr("T", "DT_FLOAT")) +
         NodeText("pool", c.pool_op, {"act"},
                  TypeAttr("T", "DT_FLOAT") + fmt + PoolList("ksize", c.ksize_hw, nchw) +
                      PoolList("strides", c.strides_hw, nchw) + "attr { key: 'padding' value { s: '" +
                      pool_padding + "' } } ");
}

TEST_P(ConvPoolFusion, FusedEqualsUnfused) {
  const ConvPoolCase c = GetParam();
  const bool nchw = c.data_format == "NCHW";
  const int64_t batch = 3, cin = 2;
  const Dims in_dims = nchw ? Dims{batch, cin, c.h, c.w} : Dims{batch, c.h, c.w, cin};
  const std::string g = ConvReluPoolGraph(c, cin, c.padding);
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, in_dims, UniformFloats(NumElements(in_dims), 9, -2, 2))}};
  for (int threads : {1, 2}) {
    std::map<std::string, std::string> fused_ops, plain_ops;
    auto fused = NewSessionWith(g, true, threads);
    auto plain = NewSessionWith(g, false, threads);
    for (int run = 0; run < 2; ++run) {
      const Tensor a = RunTraced(fused.get(), feeds, "pool:0", &fused_ops);
      const Tensor b = RunTraced(plain.get(), feeds, "pool:0", &plain_ops);
      EXPECT_EQ(fused_ops["pool"], "_FusedConv2DPool");
      EXPECT_EQ(fused_ops.count("conv"), 0u);
      EXPECT_EQ(plain_ops["pool"], c.pool_op);
      ExpectCloseFloats(a, b, 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Windows, ConvPoolFusion,
    ::testing::Values(ConvPoolCase{"MaxPool", "NHWC", 28, 28, 6, {2, 2}, {2, 2}, "VALID"},
                      ConvPoolCase{"MaxPool", "NHWC", 14, 30, 6, {2, 2}, {2, 2}, "SAME"},
                      ConvPoolCase{"AvgPool", "NHWC", 17, 23, 9, {2, 2}, {2, 2}, "VALID"},
                      ConvPoolCase{"MaxPool", "NHWC", 20, 29, 3, {2, 3}, {3, 2}, "VALID"},
                      ConvPoolCase{"AvgPool", "NHWC", 15, 21, 6, {2, 2}, {2, 2}, "SAME"},
                      ConvPoolCase{"MaxPool", "NHWC", 16, 18, 6, {3, 3}, {2, 2}, "SAME"},
                      ConvPoolCase{"MaxPool", "NHWC", 12, 14, 16, {2, 2}, {2, 2}, "VALID"},
                      ConvPoolCase{"MaxPool", "NCHW", 28, 28, 6, {2, 2}, {2, 2}, "VALID"},
                      ConvPoolCase{"AvgPool", "NCHW", 13, 17, 20, {3, 3}, {2, 2}, "SAME"},
                      ConvPoolCase{"MaxPool", "NHWC", 11, 14, 8, {2, 2}, {2, 2}, "VALID", "Elu"},
                      ConvPoolCase{"AvgPool", "NCHW", 10, 13, 13, {2, 2}, {2, 2}, "VALID", "Relu6"},
                      ConvPoolCase{"MaxPool", "NHWC", 9, 33, 15, {2, 2}, {2, 2}, "VALID", "LeakyRelu"},
                      ConvPoolCase{"AvgPool", "NCHW", 19, 37, 7, {2, 2}, {2, 2}, "VALID", "Elu"},
                      ConvPoolCase{"MaxPool", "NHWC", 23, 20, 5, {2, 2}, {2, 2}, "VALID", "Relu", 2},
                      ConvPoolCase{"MaxPool", "NCHW", 32, 32, 32, {2, 2}, {2, 2}, "VALID"},
                      ConvPoolCase{"MaxPool", "NCHW", 130, 129, 16, {3, 3}, {2, 2}, "SAME"},
                      ConvPoolCase{"AvgPool", "NCHW", 21, 19, 24, {2, 2}, {2, 2}, "VALID", "Elu"},
                      // More than 1 MiB of convolution output per image: pooled
                      // in bands of rows (the last one short, the last row unread),
                      // or whole images where windows overlap vertically.
                      ConvPoolCase{"MaxPool", "NHWC", 97, 97, 32, {2, 2}, {2, 2}, "VALID"},
                      ConvPoolCase{"AvgPool", "NCHW", 97, 91, 32, {2, 2}, {2, 2}, "VALID", "Elu"},
                      ConvPoolCase{"MaxPool", "NHWC", 90, 96, 40, {1, 2}, {3, 2}, "VALID"},
                      ConvPoolCase{"MaxPool", "NHWC", 95, 96, 32, {3, 3}, {2, 2}, "SAME"}),
    [](const auto& info) { return "Case" + std::to_string(info.index); });

// An input the convolution refuses (3 channels for a filter of 2) fails as
// Conv2D does, under the fused node's name; the session then runs a valid
// input.
TEST(ConvPoolFusionTest, BadInputFailsLikeTheUnfusedConvAndTheSessionGoesOn) {
  const ConvPoolCase c{"MaxPool", "NHWC", 0, 0, 6, {2, 2}, {2, 2}, "VALID"};
  const std::string g = ConvReluPoolGraph(c, 2, "VALID");
  const Feeds small = {{"x", MakeTensor<float>(GR_FLOAT, {1, 8, 16, 3}, UniformFloats(384, 11))}};
  const Feeds good = {{"x", MakeTensor<float>(GR_FLOAT, {1, 8, 16, 2}, UniformFloats(256, 12))}};
  auto fused = NewSessionWith(g, true, 1);
  auto plain = NewSessionWith(g, false, 1);
  std::vector<Tensor> out;
  const Status fused_error = fused->Run(small, {"pool:0"}, {}, &out);
  const Status plain_error = plain->Run(small, {"pool:0"}, {}, &out);
  ASSERT_FALSE(fused_error.ok());
  EXPECT_EQ(fused_error.code(), plain_error.code());
  EXPECT_NE(fused_error.message().find("pool"), std::string::npos) << fused_error;
  EXPECT_NE(fused_error.message().find("input depth must be evenly divisible by filter depth"), std::string::npos)
      << fused_error;
  std::map<std::string, std::string> ops;
  const Tensor a = RunTraced(fused.get(), good, "pool:0", &ops);
  EXPECT_EQ(ops["pool"], "_FusedConv2DPool");
  const Tensor b = RunTraced(plain.get(), good, "pool:0", &ops);
  ExpectCloseFloats(a, b, 1e-5);
}

// Not fused: the convolution's output read twice (fetched as well), and a
// pooling in another data format is not possible to build; EXPLICIT pooling
// padding stays with MaxPool too.
TEST(ConvPoolFusionTest, NotFusedWhenTheConvolutionIsReadElsewhere) {
  const ConvPoolCase c{"MaxPool", "NHWC", 12, 12, 6, {2, 2}, {2, 2}, "VALID"};
  const std::string g = ConvReluPoolGraph(c, 2, "VALID") + NodeText("other", "Identity", {"act"}, TypeAttr("T", "DT_FLOAT"));
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, {2, 12, 12, 2}, UniformFloats(2 * 12 * 12 * 2, 10))}};
  auto s = NewSessionWith(g, true, 1);
  proto::RunOptions ro;
  ro.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(ro, feeds, {"pool:0", "other:0"}, {}, &out, &md).ok());
  std::map<std::string, std::string> ops;
  for (const auto& dev : md.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats()) ops[ns.node_name()] = ns.timeline_label().substr(ns.timeline_label().find(" = ") + 3);
  EXPECT_EQ(ops["pool"], "MaxPool");
  EXPECT_EQ(ops["act"], "_FusedConv2D");
}

// The gradient of relu -> max_pool as tf.gradients builds it:
// ReluGrad(MaxPoolGrad(act, pool, g), act) becomes one _MaxPoolGradReluGrad
// named like the ReluGrad, with the same bits; a ReluGrad against another
// tensor (here the Relu's input) stays as it is.
TEST(FusionTest, MaxPoolGradThenReluGrad) {
  const std::string pool_attrs = TypeAttr("T", "DT_FLOAT") + PoolList("ksize", {2, 2}, false) +
                                 PoolList("strides", {2, 2}, false) + "attr { key: 'padding' value { s: 'VALID' } } ";
  const std::string forward = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("g", "DT_FLOAT") +
                              NodeText("act", "Relu", {"x"}, TypeAttr("T", "DT_FLOAT")) +
                              NodeText("pool", "MaxPool", {"act"}, pool_attrs) +
                              NodeText("mpg", "MaxPoolGrad", {"act", "pool", "g"}, pool_attrs);
  const Dims x_dims = {2, 8, 6, 9}, g_dims = {2, 4, 3, 9};
  std::vector<float> g = UniformFloats(NumElements(g_dims), 11, -1, 1);
  g[5] = -0.0f;
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, x_dims, UniformFloats(NumElements(x_dims), 10, -1, 1))},
                       {"g", MakeTensor<float>(GR_FLOAT, g_dims, g)}};
  for (bool same_features : {true, false}) {
    const std::string graph =
        forward + NodeText("rg", "ReluGrad", {"mpg", same_features ? "act" : "x"}, TypeAttr("T", "DT_FLOAT"));
    for (int threads : {1, 2}) {
      auto fused = NewSessionWith(graph, true, threads);
      auto plain = NewSessionWith(graph, false, threads);
      std::map<std::string, std::string> fused_ops, plain_ops;
      const Tensor a = RunTraced(fused.get(), feeds, "rg:0", &fused_ops);
      const Tensor b = RunTraced(plain.get(), feeds, "rg:0", &plain_ops);
      EXPECT_EQ(fused_ops["rg"], same_features ? "_MaxPoolGradReluGrad" : "ReluGrad");
      EXPECT_EQ(fused_ops.count("mpg"), same_features ? 0u : 1u);
      EXPECT_EQ(plain_ops["rg"], "ReluGrad");
      ASSERT_EQ(a.TotalBytes(), b.TotalBytes());
      EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
    }
  }
}

// RewriterConfig.remapping = OFF (TensorFlow's switch for its remapper's
// fusions) leaves the ops as they are; the constant-weights hint stays.
TEST(FusionTest, RemappingOffTurnsTheFusionsOff) {
  LoadStandardPlugins();
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstFloat("w", {3, 2}, UniformFloats(6, 1)) +
                        ConstFloat("bias", {2}, UniformFloats(2, 2)) +
                        NodeText("mm", "MatMul", {"x", "w"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("ba", "BiasAdd", {"mm", "bias"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("act", "Relu", {"ba"}, TypeAttr("T", "DT_FLOAT"));
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, {4, 3}, UniformFloats(12, 3))}};
  SessionOptions opts = OpTestOptions(1);
  opts.config.mutable_graph_options()->mutable_rewrite_options()->set_remapping(proto::RewriterConfig::OFF);
  std::unique_ptr<Session> off;
  ASSERT_TRUE(NewSession(opts, &off).ok());
  ASSERT_TRUE(off->Create(ParseGraph(g)).ok());
  auto fused = NewSessionWith(g, true, 1);
  std::map<std::string, std::string> off_ops, fused_ops;
  const Tensor a = RunTraced(off.get(), feeds, "act:0", &off_ops);
  const Tensor b = RunTraced(fused.get(), feeds, "act:0", &fused_ops);
  EXPECT_EQ(off_ops["mm"], "MatMul");
  EXPECT_EQ(off_ops["act"], "Relu");
  EXPECT_EQ(fused_ops["act"], "_FusedMatMul");
  ExpectCloseFloats(a, b, 1e-5);
}

}  // namespace
}  // namespace graphrt
