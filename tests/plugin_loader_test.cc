// Plugin loading: ABI stability, error paths, all-or-nothing loads.
#include <gtest/gtest.h>

#include <fstream>

#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace {

std::string TestPlugin(const std::string& name) {
  return std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_" + name + ".so";
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

TEST_F(PluginLoader, PluginBuiltWithClangAndLibcxxRuns) {
  std::ifstream f(TestPlugin("libcxx"));
  if (!f) GTEST_SKIP() << "clang++/libc++ not installed; libc++ plugin not built";
  ASSERT_TRUE(Load("libcxx").ok());
  ExpectAddOne("LibcxxAddOne");
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
  // The standard ops still work.
  auto out = testing::RunGraph(
      "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }"
      "node { name: 's' op: 'AddV2' input: 'a' input: 'a' attr { key: 'T' value { type: DT_INT32 } } }",
      {{"a", testing::MakeTensor<int32_t>(GR_INT32, {}, {21})}}, {"s"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
}

TEST_F(PluginLoader, DirectoryErrors) {
  Status s = Runtime::Global().LoadPluginDirectory("/nonexistent/dir");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("/nonexistent/dir"), std::string::npos);
}

}  // namespace
}  // namespace graphrt
