// Plugin loading: ABI stability, error paths, all-or-nothing loads.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "graphrt/core/gradients.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace {

std::string TestPlugin(const std::string& name) {
  return std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_" + name + ".so";
}

// A copy, at another path, of the standard array ops plugin.
std::string StandardPluginCopy() {
  const std::string copy = ::testing::TempDir() + "/libgraphrt_ops_array_cpu_copy.so";
  for (const PluginInfo& p : Runtime::Global().Plugins())
    if (p.name == "ops_array_cpu") {
      std::ifstream in(p.path, std::ios::binary);
      std::ofstream(copy, std::ios::binary) << in.rdbuf();
    }
  return copy;
}

Status ParseAndConvert(const std::string& text, Graph* g) {
  proto::GraphDef def;
  GR_RETURN_IF_ERROR(ParseGraphDefText(text, &def));
  return ConvertGraphDefToGraph(def, g);
}

class PluginLoader : public ::testing::Test {
 protected:
  void SetUp() override { testing::LoadStandardPlugins(); }
  Status Load(const std::string& name) { return Runtime::Global().LoadPlugin(TestPlugin(name)); }
  size_t NumPlugins() { return Runtime::Global().Plugins().size(); }
};

TEST_F(PluginLoader, StandardPluginsAreLoaded) {
  std::vector<std::string> names;
  for (const PluginInfo& p : Runtime::Global().Plugins()) names.push_back(p.name);
  for (const char* want : {"cpu_device", "ops_array_cpu", "ops_math_cpu", "ops_nn_cpu"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_NE(Runtime::Global().ops().LookUp("MatMul"), nullptr);
}

void ExpectAddOne(const std::string& op) {
  std::vector<Tensor> out;
  Status s = testing::TryRunGraph(
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }"
      "node { name: 'y' op: '" + op + "' input: 'x' }",
      {{"x", testing::MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})}}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{2, 3, 4}));
}

TEST_F(PluginLoader, PluginBuiltWithOldCxx11AbiRuns) {
  ASSERT_TRUE(Load("old_abi").ok());
  ExpectAddOne("OldAbiAddOne");
  // Kernel errors (raised from std::string-using SDK code) reach the caller.
  std::vector<Tensor> out;
  Status s = testing::TryRunGraph(
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }"
      "node { name: 'y' op: 'OldAbiAddOne' input: 'x' attr { key: 'label' value { s: 'fail' } } }",
      {{"x", testing::MakeTensor<float>(GR_FLOAT, {1}, {1})}}, {"y"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Node 'y' (op 'OldAbiAddOne'): asked to fail by label 'fail'"), std::string::npos) << s;
}

// ctx_set_output_from_input_range (ABI 1.1): an aligned run is shared, an
// unaligned one copied; a run outside the input is OutOfRange naming the
// node, and the session goes on.
TEST_F(PluginLoader, OutputRangeOfAnInputSharesCopiesOrRefuses) {
  ASSERT_TRUE(Load("output_range").ok());
  auto graph = [](int offset, int count) {
    return testing::ParseGraph(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }"
        "node { name: 'y' op: 'TestOutputRange' input: 'x' attr { key: 'offset' value { i: " +
        std::to_string(offset) + " } } attr { key: 'count' value { i: " + std::to_string(count) + " } } }");
  };
  std::vector<float> values(40);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Tensor x = testing::MakeTensor<float>(GR_FLOAT, {40}, values);
  // 16 floats = 64 bytes in: shared; 3 floats in: copied.
  for (const auto& [offset, shared] : std::vector<std::pair<int, bool>>{{16, true}, {3, false}}) {
    auto s = testing::CreateSession(graph(offset, 5));
    ASSERT_NE(s, nullptr);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", x}}, {"y"}, {}, &out).ok());
    std::vector<float> want(values.begin() + offset, values.begin() + offset + 5);
    EXPECT_EQ(testing::ToVector<float>(out[0]), want);
    EXPECT_EQ(out[0].raw_data() == x.data<float>() + offset, shared) << "offset " << offset;
  }
  for (const auto& [offset, count] : std::vector<std::pair<int, int>>{{38, 3}, {-1, 2}, {41, 0}}) {
    auto s = testing::CreateSession(graph(offset, count));
    ASSERT_NE(s, nullptr);
    std::vector<Tensor> out;
    const Status st = s->Run({{"x", x}}, {"y"}, {}, &out);
    EXPECT_EQ(st.code(), Code::kOutOfRange) << st;
    EXPECT_NE(st.message().find("Node 'y' (op 'TestOutputRange')"), std::string::npos) << st;
    EXPECT_NE(st.message().find("not inside input 0 of 40 elements"), std::string::npos) << st;
    if (offset < 0) continue;  // outside any input
    // A feed the run fits in works on the same session.
    std::vector<float> more(100);
    for (size_t i = 0; i < more.size(); ++i) more[i] = static_cast<float>(i);
    const Status again = s->Run({{"x", testing::MakeTensor<float>(GR_FLOAT, {100}, more)}}, {"y"}, {}, &out);
    ASSERT_TRUE(again.ok()) << again;
    EXPECT_EQ(testing::ToVector<float>(out[0]),
              std::vector<float>(more.begin() + offset, more.begin() + offset + count));
  }
}

TEST_F(PluginLoader, PluginBuiltWithClangAndLibcxxRuns) {
  std::ifstream f(TestPlugin("libcxx"));
  if (!f) GTEST_SKIP() << "clang++/libc++ not installed; libc++ plugin not built";
  ASSERT_TRUE(Load("libcxx").ok());
  ExpectAddOne("LibcxxAddOne");
}

// A plain C plugin compiled against the frozen 1.0 header loads and runs.
TEST_F(PluginLoader, PluginBuiltAgainstFrozenAbi10HeaderRuns) {
  ASSERT_TRUE(Load("abi_1_0").ok());
  ExpectAddOne("Abi10AddOne");
}

// Plugin resources (ABI 1.2): the session's container keeps them across
// Runs until deleted or Close; the step's container drops them at step end;
// a failing create reports the plugin's message; the session goes on.
TEST_F(PluginLoader, PluginResourcesLiveInTheSessionOrTheStep) {
  ASSERT_TRUE(Load("resources").ok());
  auto counter = [](const std::string& node, const std::string& name, bool per_step) {
    return "node { name: '" + node + "' op: 'TestCounter' attr { key: 'name' value { s: '" + name +
           "' } } attr { key: 'per_step' value { b: " + (per_step ? "true" : "false") + " } } }";
  };
  auto s = testing::CreateSession(testing::ParseGraph(
      counter("a", "c", false) + counter("step1", "s", true) + counter("step2", "s", true) +
      counter("bad", "refuse", false) + "node { name: 'del' op: 'TestDeleteCounter' attr { key: 'name' value { s: 'c' } } }"
      "node { name: 'live' op: 'TestLiveCounters' }"));
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  for (int64_t want = 1; want <= 3; ++want) {
    ASSERT_TRUE(s->Run({}, {"a"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int64_t>(), want);
  }
  // Two nodes of one step share the step's counter; the next step starts over.
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE(s->Run({}, {"step1"}, {"step2"}, &out).ok());
    ASSERT_TRUE(s->Run({}, {"step1", "step2"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int64_t>() + out[1].scalar<int64_t>(), 3);  // 1 and 2, in either order
  }
  ASSERT_TRUE(s->Run({}, {"live"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 1);  // only the session's counter is left
  Status bad = s->Run({}, {"bad"}, {}, &out);
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("refusing to make counter 'refuse'"), std::string::npos) << bad;
  ASSERT_TRUE(s->Run({}, {}, {"del"}, nullptr).ok());
  Status again = s->Run({}, {}, {"del"}, nullptr);
  EXPECT_EQ(again.code(), Code::kNotFound) << again;
  ASSERT_TRUE(s->Run({}, {"a", "live"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 1);  // made afresh after the delete
  EXPECT_EQ(out[1].scalar<int64_t>(), 1);
  ASSERT_TRUE(s->Close().ok());
  auto s2 = testing::CreateSession(testing::ParseGraph("node { name: 'live' op: 'TestLiveCounters' }"));
  ASSERT_TRUE(s2->Run({}, {"live"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 0);  // Close destroyed them
}

TEST_F(PluginLoader, LoadingTwiceIsANoOp) {
  ASSERT_TRUE(Load("old_abi").ok());
  size_t n = NumPlugins();
  ASSERT_TRUE(Load("old_abi").ok());
  EXPECT_EQ(NumPlugins(), n);
}

TEST_F(PluginLoader, ErrorsNameTheFileAndLeaveTheCoreUnchanged) {
  const std::string garbage = ::testing::TempDir() + "/libgarbage.so";
  std::ofstream(garbage) << "this is not an ELF file";
  struct Case {
    std::string path;
    Code code;
    std::vector<std::string> mentions;
  } cases[] = {
      {"/nonexistent/libnothing.so", Code::kNotFound, {"/nonexistent/libnothing.so", "not found"}},
      {garbage, Code::kInvalidArgument, {garbage, "cannot load plugin"}},
      {TestPlugin("no_entry"), Code::kInvalidArgument, {"not a graphrt plugin", "graphrt_plugin_init"}},
      {TestPlugin("abi_mismatch"), Code::kFailedPrecondition, {"ABI 2.7", "ABI " + std::to_string(GR_ABI_MAJOR) + "." + std::to_string(GR_ABI_MINOR), "rebuild"}},
      {TestPlugin("init_fails"), Code::kUnavailable, {"failed to initialise", "license server unreachable"}},
      {TestPlugin("orphan_kernel"), Code::kFailedPrecondition, {"NobodyDefinedThis", "no loaded plugin defines"}},
      {TestPlugin("conflicting_op"), Code::kAlreadyExists, {"AddV2", "already defined differently"}},
      {TestPlugin("short_op_spec"), Code::kInvalidArgument, {"GR_OpSpec is null or too small"}},
      {TestPlugin("conflicting_gradient"), Code::kAlreadyExists,
       {TestPlugin("conflicting_gradient"), "gradient of op 'MatMul'", "ops_math_cpu"}},
      {TestPlugin("short_gradient_spec"), Code::kInvalidArgument, {"GR_GradientSpec is null or too small"}},
      {TestPlugin("init_throws"), Code::kInternal,
       {TestPlugin("init_throws"), "failed to initialise", "thrown by the plugin's init"}},
      {StandardPluginCopy(), Code::kAlreadyExists, {"ops_array_cpu", "already loaded from", "one copy"}},
  };
  for (const Case& c : cases) {
    const size_t before = NumPlugins();
    const size_t ops_before = Runtime::Global().ops().ListOps().size();
    Status s = Runtime::Global().LoadPlugin(c.path);
    EXPECT_EQ(s.code(), c.code) << s;
    for (const std::string& m : c.mentions) EXPECT_NE(s.message().find(m), std::string::npos) << s << " / " << m;
    EXPECT_EQ(NumPlugins(), before);
    EXPECT_EQ(Runtime::Global().ops().ListOps().size(), ops_before);
  }
  EXPECT_EQ(Runtime::Global().ops().LookUp("ShouldNotSurvive"), nullptr);
  EXPECT_EQ(Runtime::Global().ops().LookUp("FreshOpFromConflictingPlugin"), nullptr);
  EXPECT_EQ(Runtime::Global().ops().LookUp("OpOfTheGradientConflict"), nullptr);
  EXPECT_EQ(Runtime::Global().gradients().LookUp("MatMul")->plugin, "ops_math_cpu");
  // The standard ops still work.
  auto out = testing::RunGraph(
      "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }"
      "node { name: 's' op: 'AddV2' input: 'a' input: 'a' attr { key: 'T' value { type: DT_INT32 } } }",
      {{"a", testing::MakeTensor<int32_t>(GR_INT32, {}, {21})}}, {"s"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
}

// A custom op library ships its op's gradient (ABI 1.5): the core's
// differentiation calls it; a failing one is an error naming the node.
TEST_F(PluginLoader, CustomOpGradientFromItsPlugin) {
  ASSERT_TRUE(Load("gradient").ok());
  Graph g(&Runtime::Global().ops());
  ASSERT_TRUE(ParseAndConvert("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }"
                              "node { name: 'y' op: 'TimesThree' input: 'x' }"
                              "node { name: 'f' op: 'Fragile' input: 'x' }",
                              &g)
                  .ok());
  auto index = g.BuildNameIndex();
  auto find = [&](const std::string& name) -> Node* {
    auto it = index.find(name);
    return it == index.end() ? nullptr : it->second;
  };
  std::vector<GraphOutput> dxs;
  std::vector<Node*> added;
  ASSERT_TRUE(AddSymbolicGradients(&g, Runtime::Global().gradients(), {{index["y"], 0}}, {{index["x"], 0}}, {},
                                   "gradients", find, &dxs, &added)
                  .ok());
  ASSERT_NE(dxs[0].first, nullptr);
  EXPECT_EQ(dxs[0].first->name(), "gradients/y_grad/mul");
  proto::GraphDef def;
  g.ToGraphDef(&def);
  std::vector<Tensor> out;
  Status s = testing::TryRunGraph(def.DebugString(), {{"x", testing::MakeTensor<float>(GR_FLOAT, {2}, {1, 2})}},
                                  {dxs[0].first->name()}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{3, 3}));  // 3 * ones
  added.clear();
  s = AddSymbolicGradients(&g, Runtime::Global().gradients(), {{index["f"], 0}}, {{index["x"], 0}}, {},
                           "gradients_1", find, &dxs, &added);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  for (const char* part : {"gradient of node 'f'", "Fragile", "test_gradient", "fragile has no stable gradient"})
    EXPECT_NE(s.message().find(part), std::string::npos) << s << " / " << part;
}

// A raw C-ABI kernel (no SDK catching for it) that throws: a Status naming
// the node, never an exception out of Run; the session keeps working.
TEST_F(PluginLoader, ExceptionsFromRawKernelsBecomeStatuses) {
  ASSERT_TRUE(Load("throwing").ok());
  auto graph = [](const std::string& where) {
    return "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }"
           "node { name: 't' op: 'ThrowingOp' input: 'x' attr { key: 'where' value { s: '" + where + "' } } }";
  };
  const Tensor x = testing::MakeTensor<float>(GR_FLOAT, {2}, {1, 2});
  struct Case {
    std::string where;
    Code code;
    std::string message;
  } cases[] = {
      {"create", Code::kInternal, "thrown by ThrowingOp's create"},
      {"compute", Code::kInternal, "thrown by ThrowingOp's compute"},
      {"bad_alloc", Code::kResourceExhausted, "std::bad_alloc"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(graph(c.where)));
    ASSERT_NE(s, nullptr);
    std::vector<Tensor> out;
    for (int attempt = 0; attempt < 2; ++attempt) {  // the session survives the first
      Status st = s->Run({{"x", x}}, {"t"}, {}, &out);
      EXPECT_EQ(st.code(), c.code) << st;
      EXPECT_NE(st.message().find("Node 't' (op 'ThrowingOp')"), std::string::npos) << st;
      EXPECT_NE(st.message().find(c.message), std::string::npos) << st;
    }
    ASSERT_TRUE(s->Run({{"x", x}}, {"x"}, {}, &out).ok());
    EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{1, 2}));
  }
  std::vector<Tensor> out;
  ASSERT_TRUE(testing::TryRunGraph(graph("none"), {{"x", x}}, {"t"}, &out).ok());
  EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{1, 2}));
}

// The marker file a test plugin's destructor creates if it is ever unloaded.
std::string UnloadMarker(const std::string& name) {
  const std::string marker = ::testing::TempDir() + "/unloaded_" + name;
  std::remove(marker.c_str());
  setenv("GRAPHRT_TEST_UNLOAD_MARKER", marker.c_str(), 1);
  return marker;
}
bool Exists(const std::string& path) { return std::ifstream(path).good(); }

// A valid directory whose kernel-only plugin (it starts a thread in init)
// sorts before the plugin defining its op: both load, each init runs once,
// and no library is unloaded (its thread would run unmapped code).
TEST_F(PluginLoader, KernelPluginSortingBeforeItsOpPluginLoadsWithoutRetry) {
  const std::string marker = UnloadMarker("kernels_first");
  const std::string dir = std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/kernels_first";
  ASSERT_TRUE(Runtime::Global().LoadPluginDirectory(dir).ok());
  std::vector<std::string> names;
  for (const PluginInfo& p : Runtime::Global().Plugins()) names.push_back(p.name);
  for (const char* want : {"test_dir_op", "test_TestDirOp_kernels"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  std::vector<Tensor> out;
  ASSERT_TRUE(testing::TryRunGraph("node { name: 'd' op: 'TestDirOp' }", {}, {"d"}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);  // init ran once
  EXPECT_FALSE(Exists(marker));
  // Loading the directory again changes nothing.
  ASSERT_TRUE(Runtime::Global().LoadPluginDirectory(dir).ok());
  ASSERT_TRUE(testing::TryRunGraph("node { name: 'd' op: 'TestDirOp' }", {}, {"d"}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
  EXPECT_FALSE(Exists(marker));
}

// A plugin rejected after its init ran (it started a thread) registers
// nothing but stays mapped.
TEST_F(PluginLoader, RejectedPluginWhoseInitRanStaysMapped) {
  const std::string marker = UnloadMarker("thread_orphan");
  const size_t before = NumPlugins();
  Status s = Load("thread_orphan");
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("NobodyDefinesThisEither"), std::string::npos) << s;
  EXPECT_NE(s.message().find("libgraphrt_test_thread_orphan.so"), std::string::npos) << s;
  EXPECT_EQ(NumPlugins(), before);
  EXPECT_TRUE(Runtime::Global().kernels().KernelsForOp("NobodyDefinesThisEither").empty());
  EXPECT_FALSE(Exists(marker));
  // Asked again, the same mapped copy is refused the same way.
  EXPECT_EQ(Load("thread_orphan").code(), Code::kFailedPrecondition);
  EXPECT_FALSE(Exists(marker));
}

// A kernel that takes over a loaded plugin's kernel, and one that is never
// chosen, say so (PluginInfo.kernels, which `graphrt plugins` prints).
TEST_F(PluginLoader, KernelsThatReplaceOrAreShadowedSaySo) {
  PluginInfo shadowed, override;
  ASSERT_TRUE(Runtime::Global().LoadPlugin(TestPlugin("relu_shadowed"), &shadowed).ok());
  ASSERT_EQ(shadowed.kernels.size(), 1u);
  EXPECT_EQ(shadowed.kernels[0],
            "Relu on CPU [is never used: shadowed by the kernel of plugin 'ops_nn_cpu' (priority 0 <= 0)]");
  const std::string relu =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }"
      "node { name: 'y' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }";
  const Tensor x = testing::MakeTensor<float>(GR_FLOAT, {2}, {-1, 2});
  std::vector<Tensor> out;
  ASSERT_TRUE(testing::TryRunGraph(relu, {{"x", x}}, {"y"}, &out).ok());  // the standard kernel
  EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{0, 2}));

  ASSERT_TRUE(Runtime::Global().LoadPlugin(TestPlugin("relu_override"), &override).ok());
  ASSERT_EQ(override.kernels.size(), 1u);
  EXPECT_EQ(override.kernels[0],
            "Relu on CPU [replaces the kernel of plugin 'ops_nn_cpu' (priority 1 > 0); "
            "replaces the kernel of plugin 'test_relu_shadowed' (priority 1 > 0)]");
  Status s = testing::TryRunGraph(relu, {{"x", x}}, {"y"}, &out);
  EXPECT_NE(s.message().find("test kernel_override ran"), std::string::npos) << s;
  // Plugins without overlapping kernels carry no mark.
  for (const PluginInfo& p : Runtime::Global().Plugins()) {
    if (p.name != "ops_array_cpu") continue;
    for (const std::string& k : p.kernels) EXPECT_EQ(k.find(" ["), std::string::npos) << k;
  }
}

TEST_F(PluginLoader, DirectoryErrors) {
  Status s = Runtime::Global().LoadPluginDirectory("/nonexistent/dir");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/dir"), std::string::npos);
}

}  // namespace
}  // namespace graphrt
