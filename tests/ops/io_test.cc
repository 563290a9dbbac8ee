// The io family (ops/io): SaveV2 / RestoreV2 / MergeV2Checkpoints, V1 Save /
// SaveSlices / Restore / RestoreSlice, ShardedFilename / ShardedFilespec,
// run as graphs through a Session. Expected values: TensorFlow's own
// checkpoints in shared/tf_testdata (README) and TensorFlow's documented
// semantics (tf_proto_facts.md §5, §8; tf_behaviours.md §13).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using testing::ConstFloat;
using testing::Contains;
using testing::ConstNode;
using testing::MakeTensor;
using testing::NodeText;
using testing::ToVector;
using testing::TypeAttr;

std::string MakeDir() { return testing::MakeTempDir("io_test"); }

// "?????" (a literal "??-" would be a trigraph).
std::string Q5() { return std::string(5, '?'); }

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string ConstStrings(const std::string& name, const std::vector<std::string>& v, bool scalar = false) {
  std::vector<std::string> q;
  for (const auto& s : v) q.push_back(Quote(s));
  return ConstNode(name, "DT_STRING", scalar ? testing::Dims{} : testing::Dims{static_cast<int64_t>(v.size())},
                   "string_val", q);
}

std::string TypeList(const std::string& key, const std::vector<std::string>& types) {
  std::string s = "attr { key: \"" + key + "\" value { list { ";
  for (const auto& t : types) s += "type: " + t + " ";
  return s + "} } } ";
}

std::string StringPlaceholder(const std::string& name) { return testing::PlaceholderNode(name, "DT_STRING"); }

// RestoreV2 of `names` (all dtype `dt`) from the fed prefix.
std::string RestoreGraph(const std::vector<std::string>& names, const std::vector<std::string>& specs,
                         const std::vector<std::string>& dtypes) {
  return StringPlaceholder("prefix") + ConstStrings("names", names) + ConstStrings("specs", specs) +
         NodeText("restore", "RestoreV2", {"prefix", "names", "specs"}, TypeList("dtypes", dtypes));
}

Status RunRestore(const std::string& prefix, const std::vector<std::string>& names,
                  const std::vector<std::string>& specs, const std::vector<std::string>& dtypes,
                  std::vector<Tensor>* out) {
  std::vector<std::string> fetches;
  for (size_t i = 0; i < names.size(); ++i) fetches.push_back("restore:" + std::to_string(i));
  return testing::TryRunGraph(RestoreGraph(names, specs, dtypes), {{"prefix", Tensor::StringScalar(prefix)}},
                              fetches, out);
}

Tensor StringVector(const std::vector<std::string>& v) {
  Tensor t(GR_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.set_string(static_cast<int64_t>(i), v[i]);
  return t;
}

#define SHARED_OR_SKIP(var, rel)                  \
  const std::string var = testing::SharedPath(rel); \
  if (var.empty()) GTEST_SKIP() << rel " not present"

// ------------------------------------------------------------- real files

TEST(IoRestoreV2, HalfPlusTwoSnappyIndex) {
  SHARED_OR_SKIP(dir, "tf_testdata/serving/saved_model_half_plus_two_cpu/00000123/variables");
  std::vector<Tensor> out;
  Status s = RunRestore(dir + "/variables", {"a", "b", "c", "c2"}, {"", "", "", ""},
                        {"DT_FLOAT", "DT_FLOAT", "DT_FLOAT", "DT_FLOAT"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 0.5f);
  EXPECT_EQ(out[1].scalar<float>(), 2.0f);
  EXPECT_EQ(out[2].scalar<float>(), 3.0f);
  EXPECT_EQ(out[3].scalar<float>(), 3.0f);
  EXPECT_EQ(out[0].shape(), TensorShape({}));
}

TEST(IoRestoreV2, HalfPlusThreeCounterRegression) {
  SHARED_OR_SKIP(root, "tf_testdata");
  std::vector<Tensor> out;
  ASSERT_TRUE(RunRestore(root + "/serving/saved_model_half_plus_three/00000123/variables/variables", {"a", "b"},
                         {"", ""}, {"DT_FLOAT", "DT_FLOAT"}, &out)
                  .ok());
  EXPECT_EQ(out[0].scalar<float>(), 0.5f);
  EXPECT_EQ(out[1].scalar<float>(), 3.0f);
  ASSERT_TRUE(RunRestore(root + "/serving/saved_model_counter/00000123/variables/variables", {"counter"}, {""},
                         {"DT_FLOAT"}, &out)
                  .ok());
  EXPECT_EQ(out[0].scalar<float>(), 0.0f);
  ASSERT_TRUE(RunRestore(root + "/rust/test_resources/regression-model/variables/variables", {"w", "b"}, {"", ""},
                         {"DT_FLOAT", "DT_FLOAT"}, &out)
                  .ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>{-0.8578622341156006f});
  EXPECT_EQ(out[1].shape(), TensorShape({1}));
  // The string entry of a TF 2.5 checkpoint.
  ASSERT_TRUE(RunRestore(root + "/rust/examples/regression_savedmodel/variables/variables",
                         {"_CHECKPOINTABLE_OBJECT_GRAPH", "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"}, {"", ""},
                         {"DT_STRING", "DT_INT64"}, &out)
                  .ok());
  EXPECT_EQ(out[0].string_at(0).size(), 531u);
  EXPECT_EQ(out[1].scalar<int64_t>(), 0);
}

TEST(IoRestoreV2, FallsBackToV1Checkpoints) {
  SHARED_OR_SKIP(root, "tf_testdata/serving");
  std::vector<Tensor> out;
  // The session bundle's Saver restores its V1 file with RestoreV2 and a
  // sharded file pattern.
  Status s = RunRestore(root + "/session_bundle/half_plus_two/00000123/export-" + Q5() + "-of-00001", {"a", "b"}, {"", ""},
                        {"DT_FLOAT", "DT_FLOAT"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 0.5f);
  EXPECT_EQ(out[1].scalar<float>(), 2.0f);
}

TEST(IoRestoreV1, RestoreAndRestoreSliceOfRealFiles) {
  SHARED_OR_SKIP(root, "tf_testdata");
  const std::string g = StringPlaceholder("pattern") + ConstStrings("name", {"Variable_1"}, true) +
                        NodeText("r", "Restore", {"pattern", "name"}, TypeAttr("dt", "DT_FLOAT"));
  std::vector<Tensor> out;
  Status s = testing::TryRunGraph(
      g, {{"pattern", Tensor::StringScalar(root + "/serving/bad_half_plus_two/00000123/export")}}, {"r:0"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 2.0f);
  // Three elements of the Haskell MNIST bias [10], as a slice.
  const std::string gs = StringPlaceholder("pattern") + ConstStrings("name", {"bias"}, true) +
                         ConstStrings("spec", {"10 4,3"}, true) +
                         NodeText("r", "RestoreSlice", {"pattern", "name", "spec"}, TypeAttr("dt", "DT_FLOAT"));
  const std::string bias = root + "/extra_tf1/haskell/tensorflow-mnist/data/MNISTBias.ckpt";
  s = testing::TryRunGraph(gs, {{"pattern", Tensor::StringScalar(bias)}}, {"r:0"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out[0].shape(), TensorShape({3}));
  const std::string gf = StringPlaceholder("pattern") + ConstStrings("name", {"bias"}, true) +
                         NodeText("r", "Restore", {"pattern", "name"}, TypeAttr("dt", "DT_FLOAT"));
  std::vector<Tensor> whole;
  ASSERT_TRUE(testing::TryRunGraph(gf, {{"pattern", Tensor::StringScalar(bias)}}, {"r:0"}, &whole).ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[0].data<float>()[i], whole[0].data<float>()[4 + i]);
}

// --------------------------------------------------------- save / restore

std::string SaveGraph(const std::string& values_nodes, const std::vector<std::string>& names,
                      const std::vector<std::string>& specs, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& dtypes) {
  std::vector<std::string> in = {"prefix", "names", "specs"};
  in.insert(in.end(), inputs.begin(), inputs.end());
  return StringPlaceholder("prefix") + ConstStrings("names", names) + ConstStrings("specs", specs) + values_nodes +
         NodeText("save", "SaveV2", in, TypeList("dtypes", dtypes));
}

Status RunTarget(const std::string& graph, const std::vector<std::pair<std::string, Tensor>>& feeds,
                 const std::string& target) {
  std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(graph));
  if (!s) return errors::Internal("no session");
  std::vector<Tensor> out;
  return s->Run(feeds, {}, {target}, &out);
}

TEST(IoSaveV2, RoundTripOfDtypesAndStrings) {
  const std::string prefix = MakeDir() + "/model.ckpt";
  const std::string values =
      ConstFloat("f", {2, 2}, {1.5f, -2.f, 3.25f, 0.f}) +
      ConstNode("i", "DT_INT64", {3}, "int64_val", {"-5", "0", "9000000000"}) +
      ConstNode("d", "DT_DOUBLE", {}, "double_val", {"2.718281828459045"}) +
      ConstNode("b", "DT_BOOL", {2}, "bool_val", {"true", "false"}) + testing::PlaceholderNode("s", "DT_STRING");
  const std::string g = SaveGraph(values, {"f", "i", "d", "b", "s"}, {"", "", "", "", ""}, {"f", "i", "d", "b", "s"},
                                  {"DT_FLOAT", "DT_INT64", "DT_DOUBLE", "DT_BOOL", "DT_STRING"});
  Status st = RunTarget(g, {{"prefix", Tensor::StringScalar(prefix)}, {"s", StringVector({"x", "", "hello world"})}},
                        "save");
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_TRUE(std::ifstream(prefix + ".index").good());
  EXPECT_TRUE(std::ifstream(prefix + ".data-00000-of-00001").good());
  std::vector<Tensor> out;
  st = RunRestore(prefix, {"s", "f", "i", "d", "b"}, {"", "", "", "", ""},
                  {"DT_STRING", "DT_FLOAT", "DT_INT64", "DT_DOUBLE", "DT_BOOL"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out[0].NumElements(), 3);
  EXPECT_EQ(out[0].string_at(0), "x");
  EXPECT_EQ(out[0].string_at(1), "");
  EXPECT_EQ(out[0].string_at(2), "hello world");
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{1.5f, -2.f, 3.25f, 0.f}));
  EXPECT_EQ(out[1].shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToVector<int64_t>(out[2]), (std::vector<int64_t>{-5, 0, 9000000000LL}));
  EXPECT_EQ(out[3].scalar<double>(), 2.718281828459045);
  EXPECT_EQ(ToVector<bool>(out[4]), (std::vector<bool>{true, false}));
}

TEST(IoSaveV2, PartitionedVariableSlices) {
  // A [4,2] variable saved as two row blocks under one name, restored whole,
  // as another slice, and with a wrong full shape.
  const std::string prefix = MakeDir() + "/part";
  const std::string values = ConstFloat("top", {2, 2}, {1, 2, 3, 4}) + ConstFloat("bottom", {2, 2}, {5, 6, 7, 8});
  const std::string g =
      SaveGraph(values, {"p", "p"}, {"4 2 0,2:-", "4 2 2,2:-"}, {"top", "bottom"}, {"DT_FLOAT", "DT_FLOAT"});
  ASSERT_TRUE(RunTarget(g, {{"prefix", Tensor::StringScalar(prefix)}}, "save").ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(RunRestore(prefix, {"p", "p"}, {"", "4 2 1,2:-"}, {"DT_FLOAT", "DT_FLOAT"}, &out).ok());
  EXPECT_EQ(out[0].shape(), TensorShape({4, 2}));
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(out[1].shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{3, 4, 5, 6}));
  Status s = RunRestore(prefix, {"p"}, {"5 2 0,1:-"}, {"DT_FLOAT"}, &out);
  EXPECT_ERROR(s, Code::kInvalidArgument, "[5,2]", "[4,2]", "p");
  // A slice spec whose shape disagrees with the value saved.
  const std::string bad = SaveGraph(ConstFloat("v", {3}, {1, 2, 3}), {"v"}, {"4 0,2"}, {"v"}, {"DT_FLOAT"});
  s = RunTarget(bad, {{"prefix", Tensor::StringScalar(prefix + "_bad")}}, "save");
  EXPECT_ERROR(s, Code::kInvalidArgument, "[2]", "[3]");
  EXPECT_FALSE(std::ifstream(prefix + "_bad.index").good());
}

TEST(IoRestoreV2, Errors) {
  const std::string prefix = MakeDir() + "/e";
  ASSERT_TRUE(RunTarget(SaveGraph(ConstFloat("v", {1}, {1}), {"v"}, {""}, {"v"}, {"DT_FLOAT"}),
                        {{"prefix", Tensor::StringScalar(prefix)}}, "save")
                  .ok());
  std::vector<Tensor> out;
  EXPECT_ERROR(RunRestore(prefix, {"nope"}, {""}, {"DT_FLOAT"}, &out), Code::kNotFound,
               "Key nope not found in checkpoint " + prefix);
  EXPECT_ERROR(RunRestore(prefix, {"v"}, {""}, {"DT_INT32"}, &out), Code::kInvalidArgument,
               "tensor_name = v; expected dtype int32 does not equal original dtype float");
  EXPECT_ERROR(RunRestore(prefix + "_missing", {"v"}, {""}, {"DT_FLOAT"}, &out), Code::kNotFound, prefix + "_missing");
  EXPECT_ERROR(RunRestore(prefix, {"v"}, {"1 0,1:-"}, {"DT_FLOAT"}, &out), Code::kInvalidArgument);
  // Corrupted data: DataLoss naming the tensor and the file.
  {
    std::fstream f(prefix + ".data-00000-of-00001", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1);
    f.put('\x7f');
  }
  EXPECT_ERROR(RunRestore(prefix, {"v"}, {""}, {"DT_FLOAT"}, &out), Code::kDataLoss, "Checksum does not match", "v",
               prefix + ".data-00000-of-00001");
  // tensor_names and dtypes of different lengths; a non-scalar prefix.
  const std::string g = StringPlaceholder("prefix") + ConstStrings("names", {"a", "b"}) + ConstStrings("specs", {"", ""}) +
                        NodeText("restore", "RestoreV2", {"prefix", "names", "specs"}, TypeList("dtypes", {"DT_FLOAT"}));
  Status s = testing::TryRunGraph(g, {{"prefix", Tensor::StringScalar(prefix)}}, {"restore:0"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  s = testing::TryRunGraph(RestoreGraph({"v"}, {""}, {"DT_FLOAT"}), {{"prefix", StringVector({prefix, prefix})}},
                           {"restore:0"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
}

// -------------------------------------------------- sharded saver pattern

TEST(IoMerge, ShardedSaverPattern) {
  // As a sharded tf.train.Saver does: ShardedFilename for each part under
  // <prefix>_temp_<id>/part, SaveV2 each, MergeV2Checkpoints into prefix.
  const std::string dir = MakeDir();
  const std::string prefix = dir + "/model";
  const std::string g =
      StringPlaceholder("prefix") + ConstStrings("tmp", {prefix + "_temp_abc/part"}, true) +
      ConstNode("shard0", "DT_INT32", {}, "int_val", {"0"}) + ConstNode("shard1", "DT_INT32", {}, "int_val", {"1"}) +
      ConstNode("num", "DT_INT32", {}, "int_val", {"2"}) +
      NodeText("fn0", "ShardedFilename", {"tmp", "shard0", "num"}, "") +
      NodeText("fn1", "ShardedFilename", {"tmp", "shard1", "num"}, "") + ConstStrings("n0", {"a"}) +
      ConstStrings("n1", {"b"}) + ConstStrings("sp", {""}) + ConstFloat("va", {}, {0.5f}) +
      ConstFloat("vb", {2}, {2.f, 3.f}) +
      NodeText("save0", "SaveV2", {"fn0", "n0", "sp", "va"}, TypeList("dtypes", {"DT_FLOAT"})) +
      NodeText("save1", "SaveV2", {"fn1", "n1", "sp", "vb"}, TypeList("dtypes", {"DT_FLOAT"})) +
      NodeText("prefixes", "Pack", {"fn0", "fn1"},
               TypeAttr("T", "DT_STRING") + "attr { key: \"N\" value { i: 2 } } attr { key: \"axis\" value { i: 0 } }") +
      NodeText("merge", "MergeV2Checkpoints", {"prefixes", "prefix", "^save0", "^save1"},
               "attr { key: \"delete_old_dirs\" value { b: true } }") +
      NodeText("spec", "ShardedFilespec", {"tmp", "num"}, "");
  std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(g));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"prefix", Tensor::StringScalar(prefix)}}, {"fn1:0", "spec:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].string_at(0), prefix + "_temp_abc/part-00001-of-00002");
  EXPECT_EQ(out[1].string_at(0), prefix + "_temp_abc/part-" + Q5() + "-of-00002");
  mkdir((prefix + "_temp_abc").c_str(), 0755);
  Status st = s->Run({{"prefix", Tensor::StringScalar(prefix)}}, {}, {"merge"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_TRUE(std::ifstream(prefix + ".index").good());
  EXPECT_TRUE(std::ifstream(prefix + ".data-00000-of-00002").good());
  EXPECT_TRUE(std::ifstream(prefix + ".data-00001-of-00002").good());
  struct stat sb;
  EXPECT_NE(stat((prefix + "_temp_abc").c_str(), &sb), 0) << "the temporary directory is removed";
  ASSERT_TRUE(RunRestore(prefix, {"b", "a"}, {"", ""}, {"DT_FLOAT", "DT_FLOAT"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{2.f, 3.f}));
  EXPECT_EQ(out[1].scalar<float>(), 0.5f);
}

// ---------------------------------------------------------------------- V1

TEST(IoV1, SaveSaveSlicesRestoreRestoreSlice) {
  const std::string dir = MakeDir();
  const std::string g1 = StringPlaceholder("file") + ConstStrings("names", {"w", "s"}) +
                         ConstFloat("w", {2, 3}, {1, 2, 3, 4, 5, 6}) + ConstStrings("s", {"p", "q"}) +
                         NodeText("save", "Save", {"file", "names", "w", "s"}, TypeList("T", {"DT_FLOAT", "DT_STRING"}));
  ASSERT_TRUE(RunTarget(g1, {{"file", Tensor::StringScalar(dir + "/v1")}}, "save").ok());
  const std::string r1 = StringPlaceholder("file") + ConstStrings("n", {"w"}, true) +
                         NodeText("r", "Restore", {"file", "n"}, TypeAttr("dt", "DT_FLOAT")) +
                         ConstStrings("n2", {"s"}, true) +
                         NodeText("r2", "Restore", {"file", "n2"}, TypeAttr("dt", "DT_STRING"));
  std::vector<Tensor> out;
  Status s = testing::TryRunGraph(r1, {{"file", Tensor::StringScalar(dir + "/v1")}}, {"r:0", "r2:0"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out[1].string_at(1), "q");
  // RestoreV2 reads the same V1 file (no .index beside it).
  ASSERT_TRUE(RunRestore(dir + "/v1", {"w"}, {"2 3 -:1,2"}, {"DT_FLOAT"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{2, 3, 5, 6}));

  // SaveSlices: column block 1..2 of a [2,3] tensor; RestoreSlice of column 2.
  const std::string g2 = StringPlaceholder("file") + ConstStrings("names", {"m"}) + ConstStrings("specs", {"2 3 -:1,2"}) +
                         ConstFloat("m", {2, 2}, {10, 11, 20, 21}) +
                         NodeText("save", "SaveSlices", {"file", "names", "specs", "m"}, TypeList("T", {"DT_FLOAT"}));
  ASSERT_TRUE(RunTarget(g2, {{"file", Tensor::StringScalar(dir + "/sl-00000-of-00001")}}, "save").ok());
  const std::string r2 = StringPlaceholder("file") + ConstStrings("n", {"m"}, true) + ConstStrings("sp", {"2 3 -:2,1"}, true) +
                         NodeText("r", "RestoreSlice", {"file", "n", "sp"}, TypeAttr("dt", "DT_FLOAT"));
  s = testing::TryRunGraph(r2, {{"file", Tensor::StringScalar(dir + "/sl-" + Q5() + "-of-00001")}}, {"r:0"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({2, 1}));
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{11, 21}));
  // The whole tensor is not stored: a clear error, not zeros.
  const std::string r3 = StringPlaceholder("file") + ConstStrings("n", {"m"}, true) +
                         NodeText("r", "Restore", {"file", "n"}, TypeAttr("dt", "DT_FLOAT"));
  s = testing::TryRunGraph(r3, {{"file", Tensor::StringScalar(dir + "/sl-00000-of-00001")}}, {"r:0"}, &out);
  EXPECT_ERROR(s, Code::kNotFound, "m", "do not cover");
  // No such file.
  s = testing::TryRunGraph(r3, {{"file", Tensor::StringScalar(dir + "/none")}}, {"r:0"}, &out);
  EXPECT_ERROR(s, Code::kNotFound, "Failed to find any matching files for " + dir + "/none");
}

// ------------------------------------------------------ file-access policy

// A session confined to `allowed` (ConfigProto.graphrt_options.allowed_directories).
std::unique_ptr<Session> ConfinedSession(const std::string& graph, const std::vector<std::string>& allowed,
                                         Status* created = nullptr) {
  testing::LoadStandardPlugins();
  SessionOptions o = testing::OpTestOptions(1);
  for (const std::string& d : allowed) o.config.mutable_graphrt_options()->add_allowed_directories(d);
  std::unique_ptr<Session> s;
  Status st = NewSession(o, &s);
  if (st.ok()) st = s->Create(testing::ParseGraph(graph));
  if (created != nullptr) *created = st;
  return st.ok() ? std::move(s) : nullptr;
}

std::string Real(const std::string& path) { return std::filesystem::canonical(path).string(); }
bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

// SaveV2 of one float (1.5) to the fed prefix, and its RestoreV2.
std::string SaveRestoreGraph() {
  return SaveGraph(ConstFloat("v", {}, {1.5f}), {"v"}, {""}, {"v"}, {"DT_FLOAT"}) + ConstStrings("rnames", {"v"}) +
         NodeText("restore", "RestoreV2", {"prefix", "rnames", "specs"}, TypeList("dtypes", {"DT_FLOAT"}));
}

TEST(IoFileAccess, SaveV2InsideTheAllowedDirectoriesOnly) {
  const std::string allowed = MakeDir(), outside = MakeDir();
  std::unique_ptr<Session> s = ConfinedSession(SaveRestoreGraph(), {allowed});
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  auto save = [&](const std::string& prefix) {
    return s->Run({{"prefix", Tensor::StringScalar(prefix)}}, {}, {"save"}, &out);
  };
  // Inside (a subdirectory too): saved, and read back.
  ASSERT_TRUE(save(allowed + "/model.ckpt").ok());
  EXPECT_TRUE(Exists(allowed + "/model.ckpt.index"));
  mkdir((allowed + "/sub").c_str(), 0755);
  ASSERT_TRUE(save(allowed + "/sub/./model").ok());
  ASSERT_TRUE(s->Run({{"prefix", Tensor::StringScalar(allowed + "/sub/model")}}, {"restore:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1.5f);
  // Outside, directly or through "..": refused, naming node, op, path and
  // the allowed list; nothing written.
  const std::string up = allowed + "/sub/../../" + std::filesystem::path(outside).filename().string() + "/ckpt";
  for (const std::string& prefix : {outside + "/ckpt", up}) {
    EXPECT_ERROR(save(prefix), Code::kPermissionDenied, "Node 'save' (op 'SaveV2')", "writing '" + prefix + "'",
                 "is not allowed", "[" + Real(allowed) + "]", "allowed_directories");
    EXPECT_FALSE(Exists(outside + "/ckpt.index"));
  }
  EXPECT_ERROR(s->Run({{"prefix", Tensor::StringScalar(outside + "/ckpt")}}, {"restore:0"}, {}, &out),
               Code::kPermissionDenied, "Node 'restore' (op 'RestoreV2')", "reading '" + outside + "/ckpt'");
  // The session goes on.
  ASSERT_TRUE(save(allowed + "/again").ok());
  EXPECT_TRUE(Exists(allowed + "/again.index"));
}

TEST(IoFileAccess, SymlinksLeadingOutAreRefused) {
  const std::string allowed = MakeDir(), outside = MakeDir();
  namespace fs = std::filesystem;
  fs::create_directory_symlink(outside, allowed + "/link");
  fs::create_symlink(outside + "/missing", allowed + "/dangling");
  std::ofstream(outside + "/secret") << "not a checkpoint";
  fs::create_symlink(outside + "/secret", allowed + "/evil.index");
  std::unique_ptr<Session> s = ConfinedSession(SaveRestoreGraph(), {allowed});
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  // A directory symlink: the resolved path is outside.
  EXPECT_ERROR(s->Run({{"prefix", Tensor::StringScalar(allowed + "/link/ckpt")}}, {}, {"save"}, &out),
               Code::kPermissionDenied, "Node 'save' (op 'SaveV2')", "resolved: '" + Real(outside) + "/ckpt'");
  EXPECT_FALSE(Exists(outside + "/ckpt.index"));
  // A checkpoint file that is a symlink leading out.
  EXPECT_ERROR(s->Run({{"prefix", Tensor::StringScalar(allowed + "/evil")}}, {"restore:0"}, {}, &out),
               Code::kPermissionDenied, "Node 'restore' (op 'RestoreV2')", Real(outside) + "/secret");
  // V1 Save through a dangling symlink would create its target.
  const std::string v1 = StringPlaceholder("file") + ConstStrings("names", {"w"}) + ConstFloat("w", {}, {2.f}) +
                         NodeText("save", "Save", {"file", "names", "w"}, TypeList("T", {"DT_FLOAT"})) +
                         ConstStrings("n", {"w"}, true) +
                         NodeText("r", "Restore", {"file", "n"}, TypeAttr("dt", "DT_FLOAT"));
  std::unique_ptr<Session> s1 = ConfinedSession(v1, {allowed});
  ASSERT_TRUE(s1);
  EXPECT_ERROR(s1->Run({{"file", Tensor::StringScalar(allowed + "/dangling")}}, {}, {"save"}, &out),
               Code::kPermissionDenied, "Node 'save' (op 'Save')", "symbolic link to a missing target");
  EXPECT_FALSE(Exists(outside + "/missing"));
  // V1 Restore patterns: wildcards in a directory, and a match leading out.
  EXPECT_ERROR(s1->Run({{"file", Tensor::StringScalar(allowed + "/*/secret")}}, {"r:0"}, {}, &out),
               Code::kPermissionDenied, "Node 'r' (op 'Restore')", "wildcards only in its last component");
  EXPECT_ERROR(s1->Run({{"file", Tensor::StringScalar(allowed + "/evil.ind?x")}}, {"r:0"}, {}, &out),
               Code::kPermissionDenied, "Node 'r' (op 'Restore')", Real(outside) + "/secret");
  // Inside, V1 works under the policy.
  ASSERT_TRUE(s1->Run({{"file", Tensor::StringScalar(allowed + "/v1")}}, {}, {"save"}, &out).ok());
  ASSERT_TRUE(s1->Run({{"file", Tensor::StringScalar(allowed + "/v?")}}, {"r:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.f);
}

TEST(IoFileAccess, MergeV2CheckpointsChecksSourcesAndDestination) {
  const std::string allowed = MakeDir(), outside = MakeDir();
  // A checkpoint outside, written by an unconfined session.
  ASSERT_TRUE(RunTarget(SaveGraph(ConstFloat("v", {}, {1.f}), {"v"}, {""}, {"v"}, {"DT_FLOAT"}),
                        {{"prefix", Tensor::StringScalar(outside + "/part")}}, "save")
                  .ok());
  const std::string g = StringPlaceholder("src") + StringPlaceholder("dst") +
                        NodeText("merge", "MergeV2Checkpoints", {"src", "dst"},
                                 "attr { key: \"delete_old_dirs\" value { b: true } }");
  std::unique_ptr<Session> s = ConfinedSession(g, {allowed});
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"src", StringVector({outside + "/part"})}, {"dst", Tensor::StringScalar(allowed + "/m")}},
                      {}, {"merge"}, &out),
               Code::kPermissionDenied, "Node 'merge' (op 'MergeV2Checkpoints')",
               "reading and writing '" + outside + "/part'");
  EXPECT_TRUE(Exists(outside + "/part.index"));  // not moved, not deleted
  EXPECT_FALSE(Exists(allowed + "/m.index"));
}

TEST(IoFileAccess, AllowedDirectoriesAreValidatedAtSessionCreation) {
  Status created;
  EXPECT_FALSE(ConfinedSession(SaveRestoreGraph(), {""}, &created));
  EXPECT_ERROR(created, Code::kInvalidArgument, "allowed_directories", "empty file path");
  // A directory that does not exist yet may be allowed (a checkpoint
  // directory made later).
  const std::string later = MakeDir() + "/later";
  std::unique_ptr<Session> s = ConfinedSession(SaveRestoreGraph(), {later});
  ASSERT_TRUE(s);
  mkdir(later.c_str(), 0755);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"prefix", Tensor::StringScalar(later + "/ckpt")}}, {}, {"save"}, &out).ok());
  // Without a policy, any path goes (a plain session's behaviour).
  const std::string anywhere = MakeDir() + "/ckpt";
  ASSERT_TRUE(RunTarget(SaveRestoreGraph(), {{"prefix", Tensor::StringScalar(anywhere)}}, "save").ok());
  EXPECT_TRUE(Exists(anywhere + ".index"));
}

TEST(IoFilenames, ShardedFilenameAndSpec) {
  const std::string g = ConstStrings("base", {"foo"}, true) + ConstNode("k", "DT_INT32", {}, "int_val", {"3"}) +
                        ConstNode("n", "DT_INT32", {}, "int_val", {"10"}) +
                        NodeText("f", "ShardedFilename", {"base", "k", "n"}, "") +
                        NodeText("p", "ShardedFilespec", {"base", "n"}, "");
  std::vector<Tensor> out = testing::RunOps(g, {}, {"f:0", "p:0"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].string_at(0), "foo-00003-of-00010");
  EXPECT_EQ(out[1].string_at(0), "foo-" + Q5() + "-of-00010");
}

// ------------------------------------------- TensorFlow's own saver graphs

// The Saver subgraphs of TensorFlow's SavedModels (tf_testdata README,
// acceptance cases 3-5): restore through save/restore_all, save through
// save/SaveV2 (+ MergeV2Checkpoints). They need the state family's
// VariableV2/Assign; without it loaded they are skipped.
bool HaveOps(const std::vector<std::string>& ops) {
  testing::LoadStandardPlugins();
  for (const std::string& op : ops)
    if (Runtime::Global().ops().LookUp(op) == nullptr) return false;
  return true;
}

// The part of a real graph that `roots` need, with each `fed` node (name ->
// dtype) replaced by a Placeholder: graphrt's Session::Create checks every
// node's op, and these graphs also hold ParseExample and the Saver's
// StringJoin, which the runs below never execute.
std::unique_ptr<Session> LoadSubgraph(const std::string& rel, const std::vector<std::string>& roots,
                                      const std::map<std::string, DataType>& fed) {
  const std::string path = testing::SharedPath("tf_testdata/" + rel);
  if (path.empty()) return nullptr;
  proto::GraphDef g;
  Status s = ReadGraphDefFromFile(path, &g);
  EXPECT_TRUE(s.ok()) << s;
  std::map<std::string, const proto::NodeDef*> by_name;
  for (const auto& n : g.node()) by_name[n.name()] = &n;
  proto::GraphDef sub;
  *sub.mutable_versions() = g.versions();
  std::set<std::string> done;
  std::vector<std::string> todo = roots;
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!done.insert(name).second) continue;
    proto::NodeDef* out = sub.add_node();
    auto f = fed.find(name);
    if (f != fed.end()) {
      out->set_name(name);
      out->set_op("Placeholder");
      (*out->mutable_attr())["dtype"].set_type(static_cast<proto::DataType>(f->second));
      continue;
    }
    EXPECT_TRUE(by_name.count(name)) << name;
    if (!by_name.count(name)) return nullptr;
    *out = *by_name[name];
    for (const std::string& in : out->input()) {
      std::string node = in[0] == '^' ? in.substr(1) : in;
      node = node.substr(0, node.find(':'));
      todo.push_back(node);
    }
  }
  return testing::CreateSession(sub);
}

#define SAVER_OPS_OR_SKIP()                                                                    \
  if (!HaveOps({"VariableV2", "Assign", "AssignAdd", "Mul", "Add"}))                           \
    GTEST_SKIP() << "state ops not loaded";                                                    \
  if (testing::SharedPath("tf_testdata").empty()) GTEST_SKIP() << "tf_testdata not present"

TEST(IoSaverGraphs, HalfPlusThreeRestoreAll) {
  SAVER_OPS_OR_SKIP();
  auto s = LoadSubgraph("derived/half_plus_three.graphdef.pb", {"save/restore_all", "y"},
                        {{"save/Const", GR_STRING}, {"x", GR_FLOAT}});
  ASSERT_TRUE(s);
  const std::string vars = testing::SharedPath("tf_testdata") + "/serving/saved_model_half_plus_three/00000123/variables/variables";
  std::vector<Tensor> out;
  Status st = s->Run({{"save/Const:0", Tensor::StringScalar(vars)}}, {}, {"save/restore_all"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_TRUE(s->Run({{"x:0", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{3.5f, 4.f, 5.5f}));
}

TEST(IoSaverGraphs, CounterSaveThenRestore) {
  // counter: restore 0.0, count to 2, save with the graph's own sharded
  // Saver nodes (SaveV2 + MergeV2Checkpoints), restore into a new session.
  SAVER_OPS_OR_SKIP();
  // save/Identity is the Saver's save_tensor_name: it runs SaveV2, then
  // MergeV2Checkpoints, and returns the prefix.
  const std::vector<std::string> roots = {"save/restore_all", "incr_counter_op/AssignAdd", "save/Identity", "counter"};
  const std::map<std::string, DataType> fed = {{"save/Const", GR_STRING}, {"save/ShardedFilename", GR_STRING}};
  auto s = LoadSubgraph("derived/counter.graphdef.pb", roots, fed);
  ASSERT_TRUE(s);
  const std::string vars = testing::SharedPath("tf_testdata") + "/serving/saved_model_counter/00000123/variables/variables";
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"save/Const:0", Tensor::StringScalar(vars)}}, {}, {"save/restore_all"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"incr_counter_op/AssignAdd:0"}, {}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"incr_counter_op/AssignAdd:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.f);
  const std::string dir = MakeDir();
  // Feed the shard file name as the Saver's StringJoin + ShardedFilename
  // would make it (<prefix>_temp_<id>/part-00000-of-00001).
  const std::string part = dir + "/model_temp_x/part-00000-of-00001";
  mkdir((dir + "/model_temp_x").c_str(), 0755);
  Status st = s->Run({{"save/ShardedFilename:0", Tensor::StringScalar(part)},
                      {"save/Const:0", Tensor::StringScalar(dir + "/model")}},
                     {"save/Identity:0"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].string_at(0), dir + "/model");
  EXPECT_TRUE(std::ifstream(dir + "/model.index").good());
  struct stat sb;
  EXPECT_NE(stat((dir + "/model_temp_x").c_str(), &sb), 0) << "delete_old_dirs removes the temporary directory";
  auto s2 = LoadSubgraph("derived/counter.graphdef.pb", roots, fed);
  ASSERT_TRUE(s2);
  ASSERT_TRUE(s2->Run({{"save/Const:0", Tensor::StringScalar(dir + "/model")}}, {}, {"save/restore_all"}, &out).ok());
  ASSERT_TRUE(s2->Run({}, {"counter:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.f);
}

}  // namespace
}  // namespace graphrt
