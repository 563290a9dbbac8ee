// The device graph pass ABI (GR_GraphPassSpec): a plugin's pass runs only
// where nodes are assigned to devices of its type, RewriterConfig's toggles
// and opt_level L0 turn passes off, and a pass that fails or returns a bad
// graph gives an error naming the pass and its plugin while the session
// keeps working. The passes are tests/plugins/graph_pass_plugin.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "test_util.h"

namespace graphrt {
namespace {

constexpr const char* kCpu = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr const char* kTestDev = "/job:localhost/replica:0/task:0/device:TESTDEV:0";

class GraphPassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::LoadStandardPlugins();
    Status s = Runtime::Global().LoadPlugin(std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_graph_passes.so");
    ASSERT_TRUE(s.ok()) << s;
  }

  // Runs the registered passes over `text`, whose nodes are assigned to
  // their requested devices (CPU or TESTDEV).
  Status Optimize(const std::string& text, std::map<std::string, proto::NodeDef>* nodes) {
    Graph g(&Runtime::Global().ops());
    GR_RETURN_IF_ERROR(ConvertGraphDefToGraph(testing::ParseGraph(text), &g));
    for (Node* n : g.op_nodes()) n->set_assigned_device(n->requested_device());
    GraphPassServices services;
    services.device_type = [](const std::string& device) -> std::string {
      if (device == kCpu) return "CPU";
      if (device == kTestDev) return "TESTDEV";
      return "";
    };
    services.kernel_available = [](const proto::NodeDef&, const std::string&) { return true; };
    GR_RETURN_IF_ERROR(OptimizeGraph({}, Runtime::Global().graph_passes().Passes(), services, &g));
    proto::GraphDef out;
    g.ToGraphDef(&out);
    for (const proto::NodeDef& n : out.node()) (*nodes)[n.name()] = n;
    return Status::OK();
  }
};

std::string FloatNode(const std::string& name, const std::string& op, const std::string& input,
                      const std::string& device) {
  std::string s = "node { name: '" + name + "' op: '" + op + "' device: '" + device + "' ";
  if (!input.empty()) s += "input: '" + input + "' ";
  s += op == "Placeholder" ? "attr { key: 'dtype' value { type: DT_FLOAT } }" : "attr { key: 'T' value { type: DT_FLOAT } }";
  return s + " }\n";
}

bool Marked(const proto::NodeDef& n) { return n.attr().count("_test_marked") > 0; }

TEST_F(GraphPassTest, PassRunsOnlyOnNodesOfItsDeviceType) {
  const std::string g = FloatNode("x", "Placeholder", "", kCpu) + FloatNode("on_dev", "Identity", "x", kTestDev) +
                        FloatNode("on_cpu", "Identity", "on_dev", kCpu);
  std::map<std::string, proto::NodeDef> nodes;
  Status s = Optimize(g, &nodes);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(Marked(nodes["on_dev"]));
  EXPECT_FALSE(Marked(nodes["on_cpu"]));
  EXPECT_FALSE(Marked(nodes["x"]));
}

TEST_F(GraphPassTest, PassDoesNotRunWithoutNodesOfItsDeviceType) {
  // The TESTDEV pass would mark every node of a graph holding "touch_all",
  // CPU ones too, which the core refuses: it is not even called.
  const std::string g = FloatNode("x", "Placeholder", "", kCpu) + FloatNode("touch_all", "Identity", "x", kCpu);
  std::map<std::string, proto::NodeDef> nodes;
  Status s = Optimize(g, &nodes);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FALSE(Marked(nodes["touch_all"]));
}

TEST_F(GraphPassTest, PassChangingANodeOfAnotherDeviceTypeIsRefused) {
  const std::string g = FloatNode("x", "Placeholder", "", kCpu) + FloatNode("on_dev", "Identity", "x", kTestDev) +
                        FloatNode("touch_all", "Identity", "on_dev", kCpu);
  std::map<std::string, proto::NodeDef> nodes;
  Status s = Optimize(g, &nodes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("graph pass 'test.mark_testdev' of plugin 'test_graph_passes'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("not a TESTDEV device"), std::string::npos) << s;
}

// x = [1, -2] through three Identity nodes that CPU passes of the test
// plugin turn into Negs, each switched by its own toggle.
const char* kToggleGraph = R"pb(
  node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
         attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: -2 } } } }
  node { name: 'tp_remap' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_layout' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_always' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'ok' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_error' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_throw' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_malformed' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_invalid' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'tp_drop_target' op: 'NoOp' input: '^x' }
)pb";

std::unique_ptr<Session> MakeSession(const SessionOptions& options) {
  std::unique_ptr<Session> s;
  Status st = NewSession(options, &s);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return nullptr;
  st = s->Create(testing::ParseGraph(kToggleGraph));
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

// The first value of each fetch: 1 where the Identity stayed, -1 where a
// pass made it a Neg. x is fed (its own value): Identities of a Const
// would be folded into Consts before the plugin passes see them.
std::vector<float> Firsts(Session* s, const std::vector<std::string>& fetches) {
  std::vector<Tensor> out;
  Status st = s->Run({{"x", testing::MakeTensor<float>(GR_FLOAT, {2}, {1, -2})}}, fetches, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  std::vector<float> v;
  for (const Tensor& t : out) v.push_back(t.data<float>()[0]);
  return v;
}

TEST_F(GraphPassTest, RewriterConfigTogglesTurnPluginPassesOff) {
  const std::vector<std::string> fetches = {"tp_remap", "tp_layout", "tp_always"};
  SessionOptions on;
  auto s = MakeSession(on);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Firsts(s.get(), fetches), (std::vector<float>{-1, -1, -1}));

  SessionOptions no_remap;
  no_remap.config.mutable_graph_options()->mutable_rewrite_options()->set_remapping(proto::RewriterConfig::OFF);
  s = MakeSession(no_remap);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Firsts(s.get(), fetches), (std::vector<float>{1, -1, -1}));

  SessionOptions no_layout;
  no_layout.config.mutable_graph_options()->mutable_rewrite_options()->set_layout_optimizer(
      proto::RewriterConfig::OFF);
  s = MakeSession(no_layout);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Firsts(s.get(), fetches), (std::vector<float>{-1, 1, -1}));

  SessionOptions l0;
  l0.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0);
  s = MakeSession(l0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Firsts(s.get(), fetches), (std::vector<float>{1, 1, 1}));
}

TEST_F(GraphPassTest, FailingPassGivesAClearErrorAndTheSessionKeepsWorking) {
  auto s = MakeSession(SessionOptions());
  ASSERT_NE(s, nullptr);
  struct Case {
    std::string fetch, target, expected;
  };
  const std::vector<Case> cases = {
      {"tp_error", "", "failed: asked to fail by node tp_error"},
      {"tp_throw", "", "asked to throw by node tp_throw"},
      {"tp_malformed", "", "returned a malformed GraphDef"},
      {"tp_invalid", "", "NoSuchOpAnywhere"},
      {"", "tp_drop_target", "removed node 'tp_drop_target', which the step runs as a target"},
  };
  for (const Case& c : cases) {
    std::vector<Tensor> out;
    std::vector<std::string> fetches, targets;
    if (!c.fetch.empty()) fetches.push_back(c.fetch);
    if (!c.target.empty()) targets.push_back(c.target);
    Status st = s->Run({}, fetches, targets, &out);
    ASSERT_FALSE(st.ok()) << c.expected;
    EXPECT_NE(st.message().find("graph pass 'test.faulty' of plugin 'test_graph_passes'"), std::string::npos) << st;
    EXPECT_NE(st.message().find(c.expected), std::string::npos) << st;
    // Another step of the same session is fine.
    EXPECT_EQ(Firsts(s.get(), {"ok"}), (std::vector<float>{1}));
  }
  // And the failing one fails the same way again (nothing half-built was kept).
  std::vector<Tensor> out;
  EXPECT_NE(s->Run({}, {"tp_error"}, {}, &out).message().find("asked to fail"), std::string::npos);
}

TEST_F(GraphPassTest, PassNamesAreUniqueAndListedWithTheirPlugin) {
  std::vector<std::unique_ptr<GraphPassRegistration>> staged;
  staged.push_back(std::make_unique<GraphPassRegistration>());
  staged.back()->name = "nn.nhwc_layout";
  Status s = Runtime::Global().graph_passes().CheckAll(staged);
  EXPECT_EQ(s.code(), Code::kAlreadyExists) << s;
  EXPECT_NE(s.message().find("nn.nhwc_layout"), std::string::npos);
  bool listed = false;
  for (const PluginInfo& p : Runtime::Global().Plugins())
    for (const std::string& pass : p.graph_passes) listed |= p.name == "ops_nn_cpu" && pass == "nn.nhwc_layout for CPU";
  EXPECT_TRUE(listed);
  // In running order: ascending order, then name.
  std::vector<std::string> names;
  for (const GraphPassRegistration* p : Runtime::Global().graph_passes().Passes()) names.push_back(p->name);
  auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  EXPECT_LT(at("nn.nhwc_layout"), at("nn.fuse_conv_bias_activation"));
  EXPECT_LT(at("nn.fuse_conv_bias_activation"), at("nn.fuse_conv_pool"));
  EXPECT_LT(at("nn.fuse_conv_pool"), at("nn.conv_constant_weights"));
}

}  // namespace
}  // namespace graphrt
