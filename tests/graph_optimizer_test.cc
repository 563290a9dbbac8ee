// The graph rewrites of graph_optimizer.h on graphs over a private op
// registry (TensorFlow's signatures for the ops involved), so each rewrite
// is checked structurally, independently of the kernels that are loaded:
// the core's own passes, and the device passes the standard plugins
// register for CPU (nn: NHWC layout, Conv2D fusions, conv+pool; math:
// MatMul fusions; both: constant-weights hints), run through the plugin
// ABI as a session runs them. End-to-end numbers of fused graphs are
// checked in tests/ops/fusion_test.cc; the ABI's rules in graph_pass_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <tuple>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace {

struct OpText {
  const char* name;
  std::vector<const char*> inputs, outputs, attrs;
};

const OpText kOps[] = {
    {"Placeholder", {}, {"output: dtype"}, {"dtype: type"}},
    {"Const", {}, {"output: dtype"}, {"value: tensor", "dtype: type"}},
    {"Identity", {"input: T"}, {"output: T"}, {"T: type"}},
    {"NoOp", {}, {}, {}},
    // TensorFlow 2's MatMul has grad_a/grad_b, which _FusedMatMul lacks.
    {"MatMul", {"a: T", "b: T"}, {"product: T"},
     {"transpose_a: bool = false", "transpose_b: bool = false", "T: {float, double}", "grad_a: bool = false",
      "grad_b: bool = false"}},
    {"BiasAdd", {"value: T", "bias: T"}, {"output: T"}, {"T: {float, double}", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"}},
    {"Relu", {"features: T"}, {"activations: T"}, {"T: {float, double}"}},
    {"Tanh", {"x: T"}, {"y: T"}, {"T: {float, double}"}},
    {"LeakyRelu", {"features: T"}, {"activations: T"}, {"alpha: float = 0.2", "T: {float, double}"}},
    {"Conv2D", {"input: T", "filter: T"}, {"output: T"},
     {"T: {float, double}", "strides: list(int)", "padding: {'SAME', 'VALID', 'EXPLICIT'}",
      "explicit_paddings: list(int) = []", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
      "dilations: list(int) = [1, 1, 1, 1]"}},
    {"Transpose", {"x: T", "perm: Tperm"}, {"y: T"}, {"T: type", "Tperm: {int32, int64} = DT_INT32"}},
    {"MaxPool", {"input: T"}, {"output: T"},
     {"T: {float, double}", "ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
      "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"}},
    {"Mean", {"input: T", "reduction_indices: Tidx"}, {"output: T"},
     {"keep_dims: bool = false", "T: {float, double}", "Tidx: {int32, int64} = DT_INT32"}},
    {"Add", {"x: T", "y: T"}, {"z: T"}, {"T: {float, double}"}},
    {"ConcatV2", {"values: N * T", "axis: Tidx"}, {"output: T"},
     {"N: int >= 2", "T: type", "Tidx: {int32, int64} = DT_INT32"}},
    {"Pad", {"input: T", "paddings: Tpaddings"}, {"output: T"},
     {"T: type", "Tpaddings: {int32, int64} = DT_INT32"}},
    // Stands for any op the layout pass does not know.
    {"Tap", {"input: T"}, {"output: T"}, {"T: type"}},
    {"_FusedMatMul", {"a: T", "b: T", "args: num_args * T"}, {"product: T"},
     {"transpose_a: bool = false", "transpose_b: bool = false", "T: {float, double}", "num_args: int >= 0",
      "fused_ops: list(string) = []", "epsilon: float = 0.0001", "leakyrelu_alpha: float = 0.2"}},
    {"_FusedConv2D", {"input: T", "filter: T", "args: num_args * T"}, {"output: T"},
     {"T: {float, double}", "num_args: int >= 0", "strides: list(int)", "padding: {'SAME', 'VALID'}",
      "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "dilations: list(int) = [1, 1, 1, 1]",
      "fused_ops: list(string) = []", "epsilon: float = 0.0001", "leakyrelu_alpha: float = 0.2"}},
};

class GraphOptimizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::unique_ptr<OpRegistrationData>> ops;
    for (const OpText& t : kOps) {
      GR_OpSpec spec{};
      spec.struct_size = sizeof(spec);
      spec.name = t.name;
      spec.inputs = t.inputs.data();
      spec.num_inputs = static_cast<int32_t>(t.inputs.size());
      spec.outputs = t.outputs.data();
      spec.num_outputs = static_cast<int32_t>(t.outputs.size());
      spec.attrs = t.attrs.data();
      spec.num_attrs = static_cast<int32_t>(t.attrs.size());
      auto data = std::make_unique<OpRegistrationData>();
      ASSERT_TRUE(BuildOpDef(spec, &data->op_def).ok()) << t.name;
      ops.push_back(std::move(data));
    }
    ASSERT_TRUE(registry_.AddAll(std::move(ops)).ok());
    testing::LoadStandardPlugins();  // their device passes
  }

  // Imports `text`, places every node on its requested device (else the
  // CPU), optimizes with `available` deciding kernel availability and
  // `device_type` naming the devices' types, and returns the resulting
  // GraphDef's nodes by name.
  std::map<std::string, proto::NodeDef> Optimize(const std::string& text, const KernelAvailableFn& available,
                                                 GraphOptimizerOptions options = {},
                                                 std::function<std::string(const std::string&)> device_type = CpuOnly) {
    proto::GraphDef def;
    EXPECT_TRUE(ParseGraphDefText(text, &def).ok());
    Graph g(&registry_);
    Status s = ConvertGraphDefToGraph(def, &g);
    EXPECT_TRUE(s.ok()) << s;
    for (Node* n : g.op_nodes())
      n->set_assigned_device(n->requested_device().empty() ? kCpu : n->requested_device());
    GraphPassServices services;
    services.device_type = device_type;
    services.kernel_available = available;
    s = OptimizeGraph(options, Runtime::Global().graph_passes().Passes(), services, &g);
    EXPECT_TRUE(s.ok()) << s;
    proto::GraphDef out;
    g.ToGraphDef(&out);
    std::map<std::string, proto::NodeDef> nodes;
    for (const proto::NodeDef& n : out.node()) nodes[n.name()] = n;
    return nodes;
  }

  static constexpr const char* kCpu = "/job:localhost/replica:0/task:0/device:CPU:0";
  static std::string CpuOnly(const std::string& device) {
    return device.find("CPU") != std::string::npos ? "CPU" : "";
  }

  static bool AllKernels(const proto::NodeDef&, const std::string&) { return true; }

  OpRegistry registry_;
};

std::vector<std::string> Inputs(const proto::NodeDef& n) { return {n.input().begin(), n.input().end()}; }

std::vector<std::string> FusedOps(const proto::NodeDef& n) {
  const auto& l = n.attr().at("fused_ops").list().s();
  return {l.begin(), l.end()};
}

const char* kFloat = "attr { key: 'T' value { type: DT_FLOAT } }";

std::string Node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& attrs = kFloat) {
  std::string s = "node { name: '" + name + "' op: '" + op + "' ";
  for (const std::string& in : inputs) s += "input: '" + in + "' ";
  return s + attrs + " }\n";
}

std::string Placeholder(const std::string& name) {
  return Node(name, "Placeholder", {}, "attr { key: 'dtype' value { type: DT_FLOAT } }");
}

std::string MlpLayer(const std::string& activation) {
  std::string g = Placeholder("x") + Placeholder("w") + Placeholder("bias") + Node("ctrl", "NoOp", {}, "") +
                  Node("mm", "MatMul", {"x", "w", "^ctrl"}, std::string(kFloat) +
                       " attr { key: 'transpose_b' value { b: true } }") +
                  Node("ba", "BiasAdd", {"mm", "bias"});
  if (!activation.empty()) g += Node("act", activation, {"ba"});
  return g + Node("out", "Identity", {activation.empty() ? "ba" : "act"}) + Node("after", "NoOp", {"^mm"}, "");
}

// TF1's gradient `tuple`: the first layer's input gradient feeds only the
// group's NoOp (its own tuple Identity was pruned: nothing fetches it).
TEST_F(GraphOptimizerTest, ComputationOnlyWaitedForIsDroppedAndItsWaitersWaitForItsInputs) {
  const std::string g = Placeholder("x") + Placeholder("w") + Node("grad_x", "MatMul", {"x", "w"}) +
                        Node("shape_of", "Tanh", {"grad_x"}) +  // only waited for, through grad_x
                        Node("grad_w", "MatMul", {"x", "w"}) +
                        Node("group_deps", "NoOp", {"^shape_of", "^grad_w"}, "") +
                        Node("out", "Identity", {"grad_w", "^group_deps"});
  auto nodes = Optimize(g, AllKernels);
  EXPECT_EQ(nodes.count("grad_x"), 0u);
  EXPECT_EQ(nodes.count("shape_of"), 0u);
  ASSERT_EQ(nodes.count("group_deps"), 1u);  // NoOps stay
  std::vector<std::string> deps = Inputs(nodes["group_deps"]);
  std::sort(deps.begin(), deps.end());
  EXPECT_EQ(deps, (std::vector<std::string>{"^grad_w", "^w", "^x"}));
  EXPECT_EQ(Inputs(nodes["out"]), (std::vector<std::string>{"grad_w", "^group_deps"}));
  // Off (RewriterConfig.dependency_optimization OFF), or a node someone reads: kept.
  GraphOptimizerOptions off;
  off.remove_control_only_nodes = false;
  EXPECT_EQ(Optimize(g, AllKernels, off).count("grad_x"), 1u);
  EXPECT_EQ(Optimize(g + Node("reader", "Identity", {"shape_of"}), AllKernels).count("grad_x"), 1u);
}

TEST_F(GraphOptimizerTest, MatMulBiasAddReluBecomesOneFusedNodeNamedAfterTheRelu) {
  auto nodes = Optimize(MlpLayer("Relu"), AllKernels);
  EXPECT_EQ(nodes.count("mm"), 0u);
  EXPECT_EQ(nodes.count("ba"), 0u);
  ASSERT_EQ(nodes.count("act"), 1u);
  const proto::NodeDef& f = nodes["act"];
  EXPECT_EQ(f.op(), "_FusedMatMul");
  EXPECT_EQ(Inputs(f), (std::vector<std::string>{"x", "w", "bias", "^ctrl"}));
  EXPECT_EQ(FusedOps(f), (std::vector<std::string>{"BiasAdd", "Relu"}));
  EXPECT_EQ(f.attr().at("num_args").i(), 1);
  EXPECT_TRUE(f.attr().at("transpose_b").b());  // the MatMul's attrs carry over...
  EXPECT_EQ(f.attr().count("grad_a"), 0u);     // ...those the fused op has
  EXPECT_EQ(f.attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(Inputs(nodes["out"]), (std::vector<std::string>{"act"}));
  // A control edge out of the MatMul now leaves the fused node.
  EXPECT_EQ(Inputs(nodes["after"]), (std::vector<std::string>{"^act"}));
}

TEST_F(GraphOptimizerTest, LeakyReluCarriesItsAlpha) {
  const std::string g = Placeholder("x") + Placeholder("w") + Placeholder("bias") + Node("mm", "MatMul", {"x", "w"}) +
      Node("ba", "BiasAdd", {"mm", "bias"}) +
      Node("act", "LeakyRelu", {"ba"}, std::string(kFloat) + " attr { key: 'alpha' value { f: 0.3 } }");
  auto nodes = Optimize(g, AllKernels);
  ASSERT_EQ(nodes["act"].op(), "_FusedMatMul");
  EXPECT_EQ(FusedOps(nodes["act"]), (std::vector<std::string>{"BiasAdd", "LeakyRelu"}));
  EXPECT_FLOAT_EQ(nodes["act"].attr().at("leakyrelu_alpha").f(), 0.3f);
}

TEST_F(GraphOptimizerTest, BiasOnlyWhenTheBiasAddHasSeveralConsumers) {
  std::string g = Placeholder("x") + Placeholder("w") + Placeholder("bias") + Node("mm", "MatMul", {"x", "w"}) +
                  Node("ba", "BiasAdd", {"mm", "bias"}) + Node("act", "Relu", {"ba"}) + Node("other", "Identity", {"ba"});
  auto nodes = Optimize(g, AllKernels);
  ASSERT_EQ(nodes["ba"].op(), "_FusedMatMul");
  EXPECT_EQ(FusedOps(nodes["ba"]), (std::vector<std::string>{"BiasAdd"}));
  EXPECT_EQ(Inputs(nodes["act"]), (std::vector<std::string>{"ba"}));
  EXPECT_EQ(Inputs(nodes["other"]), (std::vector<std::string>{"ba"}));
}

TEST_F(GraphOptimizerTest, NothingFusesWhenTheMatMulOutputIsUsedElsewhere) {
  std::string g = Placeholder("x") + Placeholder("w") + Placeholder("bias") + Node("mm", "MatMul", {"x", "w"}) +
                  Node("ba", "BiasAdd", {"mm", "bias"}) + Node("act", "Relu", {"ba"}) + Node("tap", "Identity", {"mm"});
  auto nodes = Optimize(g, AllKernels);
  EXPECT_EQ(nodes["mm"].op(), "MatMul");
  EXPECT_EQ(nodes["ba"].op(), "BiasAdd");
  EXPECT_EQ(nodes["act"].op(), "Relu");
}

TEST_F(GraphOptimizerTest, FallsBackToWhatTheDeviceHasKernelsFor) {
  // No kernel for the activation variant: bias-only fusion.
  auto no_relu = [](const proto::NodeDef& n, const std::string&) { return FusedOps(n).size() == 1; };
  auto nodes = Optimize(MlpLayer("Relu"), no_relu);
  ASSERT_EQ(nodes["ba"].op(), "_FusedMatMul");
  EXPECT_EQ(nodes["act"].op(), "Relu");
  EXPECT_EQ(Inputs(nodes["act"]), (std::vector<std::string>{"ba"}));
  // No fused kernel at all: the graph is unchanged.
  nodes = Optimize(MlpLayer("Relu"), [](const proto::NodeDef&, const std::string&) { return false; });
  EXPECT_EQ(nodes["mm"].op(), "MatMul");
  EXPECT_EQ(nodes["ba"].op(), "BiasAdd");
  EXPECT_EQ(nodes["act"].op(), "Relu");
}

TEST_F(GraphOptimizerTest, DisabledFusionLeavesTheGraphAlone) {
  GraphOptimizerOptions off;
  off.remapping = false;  // RewriterConfig.remapping OFF
  auto nodes = Optimize(MlpLayer("Relu"), AllKernels, off);
  EXPECT_EQ(nodes["mm"].op(), "MatMul");
  EXPECT_EQ(nodes["act"].op(), "Relu");
}

TEST_F(GraphOptimizerTest, NodesPinnedToDifferentDevicesDoNotFuse) {
  std::string g = Placeholder("x") + Placeholder("w") + Placeholder("bias") +
                  "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' device: '/device:CPU:0' " + kFloat + " }\n" +
                  Node("ba", "BiasAdd", {"mm", "bias"});
  auto nodes = Optimize(g, AllKernels);
  EXPECT_EQ(nodes["mm"].op(), "MatMul");
  EXPECT_EQ(nodes["ba"].op(), "BiasAdd");
}

std::string ConvLayer(const std::string& filter_src, const std::string& bias_format) {
  const std::string conv_attrs = std::string(kFloat) +
                                 " attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } }"
                                 " attr { key: 'padding' value { s: 'SAME' } }";
  return Placeholder("x") + filter_src + Placeholder("bias") + Node("conv", "Conv2D", {"x", "filt"}, conv_attrs) +
         Node("ba", "BiasAdd", {"conv", "bias"},
              std::string(kFloat) + " attr { key: 'data_format' value { s: '" + bias_format + "' } }") +
         Node("act", "Relu", {"ba"});
}

const char* kConstFilter =
    "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
    "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 1 } } "
    "float_val: 2 } } } }\n"
    "node { name: 'filt' op: 'Identity' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n";

TEST_F(GraphOptimizerTest, Conv2DFusesAndItsConstantFilterIsMarked) {
  auto nodes = Optimize(ConvLayer(kConstFilter, "NHWC"), AllKernels);
  ASSERT_EQ(nodes["act"].op(), "_FusedConv2D");
  EXPECT_EQ(FusedOps(nodes["act"]), (std::vector<std::string>{"BiasAdd", "Relu"}));
  EXPECT_EQ(Inputs(nodes["act"]), (std::vector<std::string>{"x", "filt", "bias"}));
  EXPECT_EQ(nodes["act"].attr().at("padding").s(), "SAME");
  ASSERT_EQ(nodes["act"].attr().count("_weights_const"), 1u);
  EXPECT_TRUE(nodes["act"].attr().at("_weights_const").b());
}

TEST_F(GraphOptimizerTest, FedFilterIsNotMarkedConstant) {
  auto nodes = Optimize(ConvLayer(Placeholder("filt"), "NHWC"), AllKernels);
  ASSERT_EQ(nodes["act"].op(), "_FusedConv2D");
  EXPECT_EQ(nodes["act"].attr().count("_weights_const"), 0u);
}

// A 2x2 Const named 'w' read through Identity 'wid', and a 2x2 Placeholder 'x'.
const char* kConstWeights =
    "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
    "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1 } } } }\n"
    "node { name: 'wid' op: 'Identity' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n";

TEST_F(GraphOptimizerTest, MatMulWithConstantWeightsIsMarked) {
  const std::string g = Placeholder("x") + kConstWeights + Node("mm", "MatMul", {"x", "wid"}) +
                        Node("mm_in_b", "MatMul", {"wid", "x"});  // the Const is A: not weights
  auto nodes = Optimize(g, AllKernels);
  ASSERT_EQ(nodes["mm"].attr().count("_weights_const"), 1u);
  EXPECT_TRUE(nodes["mm"].attr().at("_weights_const").b());
  EXPECT_EQ(nodes["mm_in_b"].attr().count("_weights_const"), 0u);
}

TEST_F(GraphOptimizerTest, FusedMatMulWithConstantWeightsIsMarked) {
  const std::string g = Placeholder("x") + kConstWeights + Placeholder("bias") + Node("mm", "MatMul", {"x", "wid"}) +
                        Node("ba", "BiasAdd", {"mm", "bias"}) + Node("act", "Relu", {"ba"});
  auto nodes = Optimize(g, AllKernels);
  ASSERT_EQ(nodes["act"].op(), "_FusedMatMul");
  ASSERT_EQ(nodes["act"].attr().count("_weights_const"), 1u);
  EXPECT_TRUE(nodes["act"].attr().at("_weights_const").b());
}

TEST_F(GraphOptimizerTest, FedMatMulWeightsAreNotMarkedConstant) {
  auto nodes = Optimize(MlpLayer("Relu"), AllKernels);  // w is a Placeholder
  ASSERT_EQ(nodes["act"].op(), "_FusedMatMul");
  EXPECT_EQ(nodes["act"].attr().count("_weights_const"), 0u);
  nodes = Optimize(Placeholder("x") + Placeholder("w") + Node("mm", "MatMul", {"x", "w"}), AllKernels);
  EXPECT_EQ(nodes["mm"].attr().count("_weights_const"), 0u);
}

TEST_F(GraphOptimizerTest, MarkingConstantWeightsCanBeTurnedOff) {
  GraphOptimizerOptions off;
  off.plugin_passes = false;  // OptimizerOptions.opt_level L0
  auto nodes = Optimize(Placeholder("x") + kConstWeights + Node("mm", "MatMul", {"x", "wid"}), AllKernels, off);
  EXPECT_EQ(nodes["mm"].attr().count("_weights_const"), 0u);
}

TEST_F(GraphOptimizerTest, ConvBiasInAnotherDataFormatDoesNotFuse) {
  GraphOptimizerOptions fuse_only;
  fuse_only.layout_optimizer = false;
  auto nodes = Optimize(ConvLayer(kConstFilter, "NCHW"), AllKernels, fuse_only);
  EXPECT_EQ(nodes["conv"].op(), "Conv2D");
  EXPECT_EQ(nodes["ba"].op(), "BiasAdd");
  // Not fused, but its filter is still constant.
  EXPECT_TRUE(nodes["conv"].attr().at("_weights_const").b());
}

// ------------------------------------------------------------- layout pass

GraphOptimizerOptions LayoutOnly() {
  GraphOptimizerOptions o;
  o.remapping = o.remove_control_only_nodes = false;
  return o;
}

std::string Ints(const std::string& key, const std::vector<int>& v) {
  std::string s = " attr { key: '" + key + "' value { list {";
  for (int x : v) s += " i: " + std::to_string(x);
  return s + " } } }";
}

std::string Format(const std::string& f) { return " attr { key: 'data_format' value { s: '" + f + "' } }"; }

std::string NchwConv(const std::string& name, const std::string& input, bool explicit_padding = true) {
  std::string attrs = std::string(kFloat) + Ints("strides", {1, 1, 2, 3}) + Format("NCHW");
  if (explicit_padding)
    attrs += " attr { key: 'padding' value { s: 'EXPLICIT' } }" + Ints("explicit_paddings", {0, 0, 0, 0, 1, 2, 3, 4});
  else
    attrs += " attr { key: 'padding' value { s: 'SAME' } }";
  return Node(name, "Conv2D", {input, "filt"}, attrs);
}

std::string IntConst(const std::string& name, const std::vector<int>& values, bool scalar = false) {
  std::string s = "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
                  "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { ";
  if (!scalar) s += "dim { size: " + std::to_string(values.size()) + " } ";
  s += "} ";
  for (int v : values) s += "int_val: " + std::to_string(v) + " ";
  return s + "} } } }\n";
}

std::vector<int64_t> IntList(const proto::NodeDef& n, const std::string& key) {
  const auto& l = n.attr().at(key).list().i();
  return {l.begin(), l.end()};
}

std::vector<int> ConstValues(const proto::NodeDef& n) {
  const auto& v = n.attr().at("value").tensor().int_val();
  return {v.begin(), v.end()};
}

int CountOp(const std::map<std::string, proto::NodeDef>& nodes, const std::string& op) {
  int k = 0;
  for (const auto& [name, n] : nodes) k += n.op() == op;
  return k;
}

TEST_F(GraphOptimizerTest, LayoutPassRunsAnNchwChainInNhwcWithOneTranspose) {
  const std::string g =
      Placeholder("x") + Placeholder("filt") + Placeholder("bias") + NchwConv("conv", "x") +
      Node("ba", "BiasAdd", {"conv", "bias"}, std::string(kFloat) + Format("NCHW")) + Node("act", "Relu", {"ba"}) +
      Node("pool", "MaxPool", {"act"},
           std::string(kFloat) + Ints("ksize", {1, 1, 2, 3}) + Ints("strides", {1, 1, 4, 5}) + Format("NCHW") +
               " attr { key: 'padding' value { s: 'VALID' } }") +
      IntConst("axes", {2, 3}) + Node("mean", "Mean", {"pool", "axes"}) + Node("out", "Tap", {"mean"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  const proto::NodeDef& conv = nodes["conv"];
  EXPECT_EQ(conv.attr().at("data_format").s(), "NHWC");
  EXPECT_EQ(IntList(conv, "strides"), (std::vector<int64_t>{1, 2, 3, 1}));
  EXPECT_EQ(IntList(conv, "explicit_paddings"), (std::vector<int64_t>{0, 0, 1, 2, 3, 4, 0, 0}));
  ASSERT_EQ(Inputs(conv), (std::vector<std::string>{"conv/input_to_nhwc", "filt"}));
  const proto::NodeDef& in_t = nodes["conv/input_to_nhwc"];
  EXPECT_EQ(in_t.op(), "Transpose");
  ASSERT_EQ(in_t.input_size(), 2);
  EXPECT_EQ(in_t.input(0), "x");
  EXPECT_EQ(ConstValues(nodes[in_t.input(1)]), (std::vector<int>{0, 2, 3, 1}));
  // The chain reads the NHWC tensors directly.
  EXPECT_EQ(nodes["ba"].attr().at("data_format").s(), "NHWC");
  EXPECT_EQ(Inputs(nodes["ba"]), (std::vector<std::string>{"conv", "bias"}));
  EXPECT_EQ(Inputs(nodes["act"]), (std::vector<std::string>{"ba"}));
  EXPECT_EQ(nodes["pool"].attr().at("data_format").s(), "NHWC");
  EXPECT_EQ(IntList(nodes["pool"], "ksize"), (std::vector<int64_t>{1, 2, 3, 1}));
  EXPECT_EQ(IntList(nodes["pool"], "strides"), (std::vector<int64_t>{1, 4, 5, 1}));
  EXPECT_EQ(Inputs(nodes["pool"]), (std::vector<std::string>{"act"}));
  // Mean over H, W of NCHW = over axes 1, 2 of NHWC, [N, C] either way: no
  // transpose after it.
  ASSERT_EQ(Inputs(nodes["mean"]), (std::vector<std::string>{"pool", "mean/nhwc_axes"}));
  EXPECT_EQ(ConstValues(nodes["mean/nhwc_axes"]), (std::vector<int>{1, 2}));
  EXPECT_EQ(Inputs(nodes["out"]), (std::vector<std::string>{"mean"}));
  EXPECT_EQ(CountOp(nodes, "Transpose"), 1);
  // The new axes and one perm: the old axes, the bypassed transposes back
  // to NCHW and their perm are gone.
  EXPECT_EQ(nodes.count("axes"), 0u);
  EXPECT_EQ(CountOp(nodes, "Const"), 2);
}

TEST_F(GraphOptimizerTest, LayoutPassGivesOtherConsumersNchwThroughOneTranspose) {
  const std::string g = Placeholder("x") + Placeholder("filt") + NchwConv("conv", "x") + Node("tap", "Tap", {"conv"}) +
                        Node("tap2", "Tap", {"conv"}) + Node("act", "Relu", {"conv"}) + Node("after", "Tap", {"act"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  EXPECT_EQ(Inputs(nodes["tap"]), (std::vector<std::string>{"conv/output_to_nchw"}));
  EXPECT_EQ(Inputs(nodes["tap2"]), (std::vector<std::string>{"conv/output_to_nchw"}));
  const proto::NodeDef& back = nodes["conv/output_to_nchw"];
  EXPECT_EQ(back.op(), "Transpose");
  ASSERT_EQ(back.input_size(), 2);
  EXPECT_EQ(back.input(0), "conv");
  EXPECT_EQ(ConstValues(nodes[back.input(1)]), (std::vector<int>{0, 3, 1, 2}));
  EXPECT_EQ(Inputs(nodes["act"]), (std::vector<std::string>{"conv"}));
  EXPECT_EQ(Inputs(nodes["after"]), (std::vector<std::string>{"act/output_to_nchw"}));
  EXPECT_EQ(CountOp(nodes, "Transpose"), 3);
}

TEST_F(GraphOptimizerTest, LayoutPassAddsNoTransposeForAnOutputNobodyReads) {
  const std::string g = Placeholder("x") + Placeholder("filt") + NchwConv("conv", "x") +
                        Node("after", "NoOp", {"^conv"}, "");
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  EXPECT_EQ(nodes["conv"].attr().at("data_format").s(), "NHWC");
  EXPECT_EQ(Inputs(nodes["after"]), (std::vector<std::string>{"^conv"}));
  EXPECT_EQ(CountOp(nodes, "Transpose"), 1);  // conv/input_to_nhwc only
}

TEST_F(GraphOptimizerTest, LayoutPassMapsReductionAxesOnlyWhereTheResultNeedsNoTranspose) {
  const std::string g =
      Placeholder("x") + Placeholder("filt") + NchwConv("conv", "x") + IntConst("c", {-3}) + IntConst("h", {2}, true) +
      IntConst("hw", {2, 3}) + Node("over_c", "Mean", {"conv", "c"}) + Node("over_h", "Mean", {"conv", "h"}) +
      Node("kept", "Mean", {"conv", "hw"}, std::string(kFloat) + " attr { key: 'keep_dims' value { b: true } }") +
      Node("t1", "Tap", {"over_c"}) + Node("t2", "Tap", {"over_h"}) + Node("t3", "Tap", {"kept"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  // Over C: [N, H, W] either way.
  EXPECT_EQ(Inputs(nodes["over_c"]), (std::vector<std::string>{"conv", "over_c/nhwc_axes"}));
  EXPECT_EQ(ConstValues(nodes["over_c/nhwc_axes"]), (std::vector<int>{3}));
  EXPECT_EQ(Inputs(nodes["t1"]), (std::vector<std::string>{"over_c"}));
  // Over H alone: NHWC would give [N, W, C], not [N, C, W]: stays NCHW.
  EXPECT_EQ(Inputs(nodes["over_h"]), (std::vector<std::string>{"conv/output_to_nchw", "h"}));
  // keep_dims: a 4-d NHWC result, transposed back for its consumer.
  EXPECT_EQ(Inputs(nodes["kept"]), (std::vector<std::string>{"conv", "kept/nhwc_axes"}));
  EXPECT_EQ(ConstValues(nodes["kept/nhwc_axes"]), (std::vector<int>{1, 2}));
  EXPECT_EQ(Inputs(nodes["t3"]), (std::vector<std::string>{"kept/output_to_nchw"}));
}

TEST_F(GraphOptimizerTest, LayoutPassConvertsBinaryOpsOnlyOverKnownLayouts) {
  const std::string g = Placeholder("x") + Placeholder("y") + Placeholder("filt") + NchwConv("a", "x") +
                        NchwConv("b", "x") +
                        "node { name: 'two' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                        "'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }\n" + Node("both", "Add", {"a", "b"}) +
                        Node("scalar", "Add", {"two", "a"}) + Node("fed", "Add", {"a", "y"}) +
                        Node("t1", "Tap", {"both"}) + Node("t2", "Tap", {"scalar"}) + Node("t3", "Tap", {"fed"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  // One transpose of x serves both convolutions.
  EXPECT_EQ(Inputs(nodes["a"])[0], "a/input_to_nhwc");
  EXPECT_EQ(Inputs(nodes["b"])[0], "a/input_to_nhwc");
  EXPECT_EQ(Inputs(nodes["both"]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Inputs(nodes["t1"]), (std::vector<std::string>{"both/output_to_nchw"}));
  EXPECT_EQ(Inputs(nodes["scalar"]), (std::vector<std::string>{"two", "a"}));
  // y's layout is unknown (it could broadcast along any dim): stays NCHW.
  EXPECT_EQ(Inputs(nodes["fed"]), (std::vector<std::string>{"a/output_to_nchw", "y"}));
}

TEST_F(GraphOptimizerTest, LayoutPassMapsConcatAxisAndPaddings) {
  const std::string n2 = " attr { key: 'N' value { i: 2 } }";
  const std::string g =
      Placeholder("x") + Placeholder("filt") + NchwConv("a", "x") + NchwConv("b", "x") + IntConst("axis", {1}, true) +
      Node("cat", "ConcatV2", {"a", "b", "axis"}, std::string(kFloat) + n2) +
      Node("cat_fed", "ConcatV2", {"a", "x", "axis"}, std::string(kFloat) + n2) +
      "node { name: 'pads' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
      "tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } dim { size: 2 } } int_val: 0 int_val: 0 int_val: 1 "
      "int_val: 2 int_val: 3 int_val: 4 int_val: 5 int_val: 6 } } } }\n" +
      Node("pad", "Pad", {"cat", "pads"}) + Node("t1", "Tap", {"pad"}) + Node("t2", "Tap", {"cat_fed"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  // Channels: NCHW axis 1 is NHWC axis 3.
  ASSERT_EQ(Inputs(nodes["cat"]), (std::vector<std::string>{"a", "b", "cat/nhwc_axis"}));
  EXPECT_EQ(ConstValues(nodes["cat/nhwc_axis"]), (std::vector<int>{3}));
  EXPECT_EQ(nodes["cat/nhwc_axis"].attr().at("value").tensor().tensor_shape().dim_size(), 0);
  // Rows of [[N], [C], [H], [W]] become [[N], [H], [W], [C]].
  ASSERT_EQ(Inputs(nodes["pad"]), (std::vector<std::string>{"cat", "pad/nhwc_paddings"}));
  EXPECT_EQ(ConstValues(nodes["pad/nhwc_paddings"]), (std::vector<int>{0, 0, 3, 4, 5, 6, 1, 2}));
  EXPECT_EQ(Inputs(nodes["t1"]), (std::vector<std::string>{"pad/output_to_nchw"}));
  // x's layout is NCHW as fed: that concat stays NCHW.
  EXPECT_EQ(Inputs(nodes["cat_fed"]), (std::vector<std::string>{"a/output_to_nchw", "x", "axis"}));
}

// An NHWC tensor the graph itself transposes to NCHW for the layer is read
// directly; a Transpose by another perm is not.
TEST_F(GraphOptimizerTest, LayoutPassReadsThroughTheGraphsOwnTransposeToNchw) {
  const std::string g = Placeholder("x") + Placeholder("filt") + IntConst("to_nchw", {0, 3, 1, 2}) +
                        IntConst("other", {0, 3, 2, 1}) + Node("xt", "Transpose", {"x", "to_nchw"}) +
                        Node("xo", "Transpose", {"x", "other"}) + NchwConv("a", "xt") + NchwConv("b", "xo") +
                        Node("t1", "Tap", {"a"}) + Node("t2", "Tap", {"b"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  EXPECT_EQ(Inputs(nodes["a"]), (std::vector<std::string>{"x", "filt"}));
  EXPECT_EQ(Inputs(nodes["b"]), (std::vector<std::string>{"b/input_to_nhwc", "filt"}));
  EXPECT_EQ(Inputs(nodes["b/input_to_nhwc"])[0], "xo");
  EXPECT_EQ(nodes.count("xt"), 0u);  // no longer read: its output was never fetched
}

// A chain op behind the graph's own Transpose to NCHW continues the NHWC
// tensor as it would a converted node's output.
TEST_F(GraphOptimizerTest, LayoutPassContinuesFromTheGraphsOwnTransposeToNchw) {
  const std::string g = Placeholder("x") + IntConst("to_nchw", {0, 3, 1, 2}) + Node("xt", "Transpose", {"x", "to_nchw"}) +
                        Node("pool", "MaxPool", {"xt"},
                             std::string(kFloat) + Ints("ksize", {1, 1, 2, 2}) + Ints("strides", {1, 1, 2, 2}) +
                                 Format("NCHW") + " attr { key: 'padding' value { s: 'VALID' } }") +
                        Node("t", "Tap", {"pool"});
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  EXPECT_EQ(nodes["pool"].attr().at("data_format").s(), "NHWC");
  EXPECT_EQ(Inputs(nodes["pool"]), (std::vector<std::string>{"x"}));
  EXPECT_EQ(Inputs(nodes["t"]), (std::vector<std::string>{"pool/output_to_nchw"}));
  EXPECT_EQ(nodes.count("xt"), 0u);
  EXPECT_EQ(CountOp(nodes, "Transpose"), 1);
}

TEST_F(GraphOptimizerTest, LayoutPassLeavesWhatItCannotOrNeedNotConvert) {
  const std::string pool_attrs = std::string(kFloat) + Ints("ksize", {1, 1, 2, 2}) + Ints("strides", {1, 1, 2, 2}) +
                                 Format("NCHW") + " attr { key: 'padding' value { s: 'VALID' } }";
  const std::string g = Placeholder("x") + Placeholder("filt") + NchwConv("conv", "x") +
                        Node("pool", "MaxPool", {"x"}, pool_attrs) + Node("t", "Tap", {"conv"});
  // A pool of a fed NCHW tensor alone would only add two transposes.
  auto nodes = Optimize(g, AllKernels, LayoutOnly());
  EXPECT_EQ(nodes["pool"].attr().at("data_format").s(), "NCHW");
  EXPECT_EQ(Inputs(nodes["pool"]), (std::vector<std::string>{"x"}));
  EXPECT_EQ(nodes["conv"].attr().at("data_format").s(), "NHWC");
  // No NHWC kernel on the device, a device that prefers NCHW, or the pass
  // off: nothing changes.
  auto no_nhwc = [](const proto::NodeDef& n, const std::string&) {
    const auto it = n.attr().find("data_format");
    return it == n.attr().end() || it->second.s() != "NHWC";
  };
  GraphOptimizerOptions off = LayoutOnly();
  off.layout_optimizer = false;
  auto gpu = [](const std::string&) { return std::string("GPU"); };  // no pass for it
  using Case = std::tuple<GraphOptimizerOptions, KernelAvailableFn, std::function<std::string(const std::string&)>>;
  for (const auto& [options, available, device_type] :
       std::vector<Case>{{LayoutOnly(), no_nhwc, CpuOnly}, {LayoutOnly(), AllKernels, gpu}, {off, AllKernels, CpuOnly}}) {
    nodes = Optimize(g, available, options, device_type);
    EXPECT_EQ(nodes["conv"].attr().at("data_format").s(), "NCHW");
    EXPECT_EQ(Inputs(nodes["conv"]), (std::vector<std::string>{"x", "filt"}));
    EXPECT_EQ(Inputs(nodes["t"]), (std::vector<std::string>{"conv"}));
    EXPECT_EQ(CountOp(nodes, "Transpose"), 0);
    EXPECT_EQ(CountOp(nodes, "Const"), 0);
  }
}

TEST_F(GraphOptimizerTest, LayoutPassRunsBeforeTheFusionsSoTheyFuseNhwc) {
  GraphOptimizerOptions all;
  const std::string g = Placeholder("x") + Placeholder("filt") + Placeholder("bias") +
                        NchwConv("conv", "x", /*explicit_padding=*/false) +
                        Node("ba", "BiasAdd", {"conv", "bias"}, std::string(kFloat) + Format("NCHW")) +
                        Node("act", "Relu", {"ba"}) + Node("out", "Tap", {"act"});
  auto nodes = Optimize(g, AllKernels, all);
  ASSERT_EQ(nodes["act"].op(), "_FusedConv2D");
  EXPECT_EQ(nodes["act"].attr().at("data_format").s(), "NHWC");
  EXPECT_EQ(IntList(nodes["act"], "strides"), (std::vector<int64_t>{1, 2, 3, 1}));
  EXPECT_EQ(Inputs(nodes["act"]), (std::vector<std::string>{"conv/input_to_nhwc", "filt", "bias"}));
  EXPECT_EQ(Inputs(nodes["out"]), (std::vector<std::string>{"act/output_to_nchw"}));
}

}  // namespace
}  // namespace graphrt
