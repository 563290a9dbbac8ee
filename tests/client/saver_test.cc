// The Saver: the save/restore graph it adds (TensorFlow's pattern,
// tf_proto_facts.md §8), checkpoint retention and the state file
// (tf_behaviours.md §13), and, once the state and checkpoint ops are
// registered, real save/restore round trips.
#include "graphrt/client/saver.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "client_test_util.h"
#include "fake_session.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/core/graph_def_io.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;
using testing::FakeSession;
using testing::ScopedTempDir;

const char kVarGraph[] = R"pb(
  node { name: "w" op: "VariableV2" device: "/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "b" op: "VariableV2" device: "/device:CPU:0"
         attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "shape" value { shape { } } } }
  node { name: "r" op: "VarHandleOp" device: "/device:CPU:1"
         attr { key: "dtype" value { type: DT_DOUBLE } }
         attr { key: "shape" value { shape { } } } }
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
)pb";

proto::GraphDef VarGraph() { return testing::ParseGraph(kVarGraph); }

std::vector<std::string> Inputs(const proto::NodeDef* n) {
  return n ? std::vector<std::string>(n->input().begin(), n->input().end()) : std::vector<std::string>{};
}

std::vector<std::string> StringConst(const proto::NodeDef* n) {
  if (n == nullptr || n->op() != "Const") return {"<not a Const>"};
  const auto& t = n->attr().at("value").tensor();
  return std::vector<std::string>(t.string_val().begin(), t.string_val().end());
}

std::vector<int> TypeList(const proto::NodeDef* n, const std::string& key) {
  std::vector<int> out;
  if (n == nullptr) return out;
  for (int t : n->attr().at(key).list().type()) out.push_back(t);
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// ------------------------------------------------------------ the graph it adds

TEST(SaverGraphTest, NonShardedPattern) {
  FakeSession session;
  proto::GraphDef graph = VarGraph();
  ASSERT_TRUE(session.Create(graph).ok());
  std::unique_ptr<Saver> saver;
  Status s = Saver::Create(&session, &graph, SaverOptions(), &saver);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(graph.node_size(), session.graph().node_size());  // *graph gets the nodes too

  const proto::SaverDef& def = saver->saver_def();
  EXPECT_EQ(def.filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(def.save_tensor_name(), "save/control_dependency:0");
  EXPECT_EQ(def.restore_op_name(), "save/restore_all");
  EXPECT_EQ(def.max_to_keep(), 5);
  EXPECT_FALSE(def.sharded());
  EXPECT_FLOAT_EQ(def.keep_checkpoint_every_n_hours(), 10000);
  EXPECT_EQ(def.version(), proto::SaverDef::V2);

  // The filename tensor: PlaceholderWithDefault over "model".
  EXPECT_EQ(StringConst(session.Node("save/filename/input")), std::vector<std::string>{"model"});
  ASSERT_NE(session.Node("save/Const"), nullptr);
  EXPECT_EQ(session.Node("save/Const")->op(), "PlaceholderWithDefault");
  EXPECT_EQ(Inputs(session.Node("save/Const")), std::vector<std::string>{"save/filename"});

  const proto::NodeDef* save = session.Node("save/SaveV2");
  ASSERT_NE(save, nullptr);
  EXPECT_EQ(save->op(), "SaveV2");
  EXPECT_EQ(Inputs(save), (std::vector<std::string>{"save/Const", "save/SaveV2/tensor_names",
                                                    "save/SaveV2/shape_and_slices", "w", "b",
                                                    "save/Read/ReadVariableOp"}));
  EXPECT_EQ(TypeList(save, "dtypes"), (std::vector<int>{proto::DT_FLOAT, proto::DT_INT32, proto::DT_DOUBLE}));
  EXPECT_EQ(StringConst(session.Node("save/SaveV2/tensor_names")), (std::vector<std::string>{"w", "b", "r"}));
  EXPECT_EQ(StringConst(session.Node("save/SaveV2/shape_and_slices")), (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(Inputs(session.Node("save/Read/ReadVariableOp")), std::vector<std::string>{"r"});
  EXPECT_EQ(Inputs(session.Node("save/control_dependency")),
            (std::vector<std::string>{"save/Const", "^save/SaveV2"}));

  const proto::NodeDef* restore = session.Node("save/RestoreV2");
  ASSERT_NE(restore, nullptr);
  EXPECT_EQ(Inputs(restore), (std::vector<std::string>{"save/Const", "save/RestoreV2/tensor_names",
                                                       "save/RestoreV2/shape_and_slices"}));
  EXPECT_EQ(TypeList(restore, "dtypes"), (std::vector<int>{proto::DT_FLOAT, proto::DT_INT32, proto::DT_DOUBLE}));
  const proto::NodeDef* assign = session.Node("save/Assign");
  ASSERT_NE(assign, nullptr);
  EXPECT_EQ(assign->op(), "Assign");
  EXPECT_EQ(Inputs(assign), (std::vector<std::string>{"w", "save/RestoreV2"}));
  EXPECT_TRUE(assign->attr().at("validate_shape").b());
  EXPECT_TRUE(assign->attr().at("use_locking").b());
  EXPECT_EQ(assign->attr().at("_class").list().s(0), "loc:@w");
  EXPECT_EQ(assign->device(), "/device:CPU:0");
  EXPECT_EQ(Inputs(session.Node("save/Assign_1")), (std::vector<std::string>{"b", "save/RestoreV2:1"}));
  ASSERT_NE(session.Node("save/AssignVariableOp_2"), nullptr);
  EXPECT_EQ(Inputs(session.Node("save/AssignVariableOp_2")), (std::vector<std::string>{"r", "save/RestoreV2:2"}));
  EXPECT_EQ(Inputs(session.Node("save/restore_all")),
            (std::vector<std::string>{"^save/Assign", "^save/Assign_1", "^save/AssignVariableOp_2"}));

  // The meta graph it writes holds the whole graph and the SaverDef.
  EXPECT_EQ(saver->meta_graph_def().graph_def().node_size(), graph.node_size());
  EXPECT_EQ(saver->meta_graph_def().saver_def().restore_op_name(), "save/restore_all");
}

TEST(SaverGraphTest, ShardedPatternOneShardPerDevice) {
  FakeSession session;
  proto::GraphDef graph = VarGraph();
  ASSERT_TRUE(session.Create(graph).ok());
  SaverOptions options;
  options.sharded = true;
  std::unique_ptr<Saver> saver;
  Status s = Saver::Create(&session, &graph, options, &saver);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(saver->saver_def().sharded());
  EXPECT_EQ(saver->saver_def().save_tensor_name(), "save/Identity:0");
  const proto::NodeDef* join = session.Node("save/StringJoin");
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(Inputs(join), (std::vector<std::string>{"save/Const", "save/StringJoin/inputs_1"}));
  const std::string temp = StringConst(session.Node("save/StringJoin/inputs_1"))[0];
  EXPECT_EQ(temp.size(), std::string("_temp_").size() + 32 + std::string("/part").size()) << temp;
  EXPECT_EQ(temp.substr(0, 6), "_temp_");
  EXPECT_EQ(session.Node("save/num_shards")->attr().at("value").tensor().int_val(0), 2);
  EXPECT_EQ(Inputs(session.Node("save/ShardedFilename_1")),
            (std::vector<std::string>{"save/StringJoin", "save/ShardedFilename_1/shard", "save/num_shards"}));
  EXPECT_EQ(session.Node("save/ShardedFilename_1/shard")->attr().at("value").tensor().int_val(0), 1);
  // w and b on CPU:0 in shard 0, r on CPU:1 in shard 1.
  EXPECT_EQ(StringConst(session.Node("save/SaveV2/tensor_names")), (std::vector<std::string>{"w", "b"}));
  EXPECT_EQ(StringConst(session.Node("save/SaveV2_1/tensor_names")), std::vector<std::string>{"r"});
  EXPECT_EQ(Inputs(session.Node("save/SaveV2_1"))[0], "save/ShardedFilename_1");
  EXPECT_EQ(Inputs(session.Node("save/MergeV2Checkpoints/checkpoint_prefixes")),
            (std::vector<std::string>{"save/control_dependency", "save/control_dependency_1"}));
  const proto::NodeDef* merge = session.Node("save/MergeV2Checkpoints");
  EXPECT_EQ(Inputs(merge), (std::vector<std::string>{"save/MergeV2Checkpoints/checkpoint_prefixes", "save/Const"}));
  EXPECT_TRUE(merge->attr().at("delete_old_dirs").b());
  EXPECT_EQ(Inputs(session.Node("save/Identity")),
            (std::vector<std::string>{"save/Const", "^save/MergeV2Checkpoints", "^save/control_dependency",
                                      "^save/control_dependency_1"}));
  // Restores read the final prefix, one RestoreV2 per shard.
  EXPECT_EQ(Inputs(session.Node("save/RestoreV2_1"))[0], "save/Const");
  EXPECT_EQ(Inputs(session.Node("save/restore_shard")), (std::vector<std::string>{"^save/Assign", "^save/Assign_1"}));
  EXPECT_EQ(Inputs(session.Node("save/restore_shard_1")), std::vector<std::string>{"^save/AssignVariableOp_2"});
  EXPECT_EQ(Inputs(session.Node("save/restore_all")),
            (std::vector<std::string>{"^save/restore_shard", "^save/restore_shard_1"}));
}

TEST(SaverGraphTest, ScopesAreMadeUniqueAndNamedVariablesOnly) {
  FakeSession session;
  proto::GraphDef graph = VarGraph();
  ASSERT_TRUE(session.Create(graph).ok());
  SaverOptions options;
  options.var_names = {"b"};
  std::unique_ptr<Saver> first, second;
  ASSERT_TRUE(Saver::Create(&session, &graph, options, &first).ok());
  ASSERT_TRUE(Saver::Create(&session, &graph, options, &second).ok());
  EXPECT_EQ(second->saver_def().restore_op_name(), "save_1/restore_all");
  EXPECT_EQ(StringConst(session.Node("save_1/SaveV2/tensor_names")), std::vector<std::string>{"b"});
}

TEST(SaverGraphTest, Errors) {
  FakeSession session;
  proto::GraphDef graph = VarGraph();
  ASSERT_TRUE(session.Create(graph).ok());
  std::unique_ptr<Saver> saver;
  SaverOptions options;
  options.var_names = {"nope"};
  Status s = Saver::Create(&session, &graph, options, &saver);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("'nope'"), std::string::npos);
  options.var_names = {"x"};
  s = Saver::Create(&session, &graph, options, &saver);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'x' is a Placeholder"), std::string::npos) << s;
  options.var_names = {"w", "w"};
  s = Saver::Create(&session, &graph, options, &saver);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("At least two variables have the same name: w"), std::string::npos);
  proto::GraphDef empty = testing::ParseGraph(R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } })pb");
  s = Saver::Create(&session, &empty, SaverOptions(), &saver);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("No variables to save"), std::string::npos);
  // A session refusing the nodes: the error says so and the graph is unchanged.
  session.set_extend_status(errors::NotFound("Op type not registered 'SaveV2'"));
  const int before = graph.node_size();
  s = Saver::Create(&session, &graph, SaverOptions(), &saver);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("SaveV2"), std::string::npos);
  EXPECT_EQ(graph.node_size(), before);
  EXPECT_EQ(saver, nullptr);
}

// ------------------------------------------------------------ files and state

struct SaverFixture : ::testing::Test {
  void SetUp() override {
    graph = VarGraph();
    ASSERT_TRUE(session.Create(graph).ok());
  }
  std::unique_ptr<Saver> Make(SaverOptions options) {
    std::unique_ptr<Saver> saver;
    Status s = Saver::Create(&session, &graph, options, &saver);
    EXPECT_TRUE(s.ok()) << s;
    return saver;
  }
  bool Exists(const std::string& name) const { return fs::exists(tmp.Join(name)); }
  FakeSession session;
  proto::GraphDef graph;
  ScopedTempDir tmp;
};

TEST_F(SaverFixture, SaveRunsTheSaveTensorAndWritesStateAndMeta) {
  auto saver = Make(SaverOptions());
  std::string path;
  Status s = saver->Save(&session, tmp.Join("model"), 7, &path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(path, tmp.Join("model-7"));
  ASSERT_EQ(session.runs().size(), 1u);
  EXPECT_EQ(session.runs()[0].string_feeds.at("save/Const:0"), tmp.Join("model-7"));
  EXPECT_EQ(session.runs()[0].fetches, std::vector<std::string>{"save/control_dependency:0"});
  // The state file, in TensorFlow's text form.
  EXPECT_EQ(ReadAll(tmp.Join("checkpoint")), "model_checkpoint_path: \"" + tmp.Join("model-7") +
                                                 "\"\nall_model_checkpoint_paths: \"" + tmp.Join("model-7") + "\"\n");
  EXPECT_EQ(LatestCheckpoint(tmp.path()), tmp.Join("model-7"));
  // <path>.meta: a MetaGraphDef that has the saver.
  proto::MetaGraphDef meta;
  ASSERT_TRUE(ReadMetaGraphDefFromFile(tmp.Join("model-7.meta"), &meta).ok());
  EXPECT_EQ(meta.saver_def().save_tensor_name(), "save/control_dependency:0");
  EXPECT_EQ(meta.graph_def().node_size(), graph.node_size());

  // Restore feeds the prefix and runs restore_all.
  s = saver->Restore(&session, path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(session.runs().back().string_feeds.at("save/Const:0"), path);
  EXPECT_EQ(session.runs().back().targets, std::vector<std::string>{"save/restore_all"});
}

TEST_F(SaverFixture, MaxToKeepDeletesTheOldestAndMovesResavedToTheEnd) {
  SaverOptions options;
  options.max_to_keep = 2;
  auto saver = Make(options);
  const std::string s1 = tmp.Join("s1"), s2 = tmp.Join("s2"), s3 = tmp.Join("s3");
  ASSERT_TRUE(saver->Save(&session, s1).ok());
  EXPECT_EQ(saver->last_checkpoints(), std::vector<std::string>{s1});
  ASSERT_TRUE(saver->Save(&session, s2).ok());
  EXPECT_EQ(saver->last_checkpoints(), (std::vector<std::string>{s1, s2}));
  ASSERT_TRUE(saver->Save(&session, s3).ok());
  EXPECT_EQ(saver->last_checkpoints(), (std::vector<std::string>{s2, s3}));
  // Every file of s1 is gone; s2 and s3 are intact.
  EXPECT_FALSE(Exists("s1.index"));
  EXPECT_FALSE(Exists("s1.data-00000-of-00001"));
  EXPECT_FALSE(Exists("s1.meta"));
  EXPECT_TRUE(Exists("s2.index") && Exists("s2.meta") && Exists("s3.data-00000-of-00001"));
  proto::CheckpointState state;
  ASSERT_TRUE(GetCheckpointState(tmp.path(), &state).ok());
  EXPECT_EQ(state.model_checkpoint_path(), s3);
  EXPECT_EQ(std::vector<std::string>(state.all_model_checkpoint_paths().begin(), state.all_model_checkpoint_paths().end()),
            (std::vector<std::string>{s2, s3}));
  ASSERT_TRUE(saver->Save(&session, s2).ok());
  EXPECT_EQ(saver->last_checkpoints(), (std::vector<std::string>{s3, s2}));
  EXPECT_TRUE(Exists("s3.index"));
  EXPECT_EQ(LatestCheckpoint(tmp.path()), s2);
}

TEST_F(SaverFixture, MaxToKeepZeroKeepsEverything) {
  SaverOptions options;
  options.max_to_keep = 0;
  auto saver = Make(options);
  for (int step = 0; step < 4; ++step) ASSERT_TRUE(saver->Save(&session, tmp.Join("m"), step).ok());
  EXPECT_TRUE(saver->last_checkpoints().empty());
  for (int step = 0; step < 4; ++step) EXPECT_TRUE(Exists("m-" + std::to_string(step) + ".index"));
  proto::CheckpointState state;
  ASSERT_TRUE(GetCheckpointState(tmp.path(), &state).ok());
  EXPECT_EQ(state.model_checkpoint_path(), tmp.Join("m-3"));
  EXPECT_EQ(state.all_model_checkpoint_paths_size(), 1);
}

TEST_F(SaverFixture, KeepCheckpointEveryNHours) {
  double now = 0;
  SaverOptions options;
  options.max_to_keep = 1;
  options.keep_checkpoint_every_n_hours = 1;
  options.clock = [&now] { return now; };
  auto saver = Make(options);  // first keep time: 3600 s
  const std::pair<double, const char*> saves[] = {{0, "a"}, {1800, "b"}, {3700, "c"}, {4000, "d"}, {5000, "e"},
                                                  {7300, "f"}, {7400, "g"}};
  for (const auto& [t, name] : saves) {
    now = t;
    ASSERT_TRUE(saver->Save(&session, tmp.Join(name)).ok());
  }
  // a (0) and b (1800) predate the first keep time; c (3700) is kept and
  // moves it to 7200; d and e are before that; f (7300) is kept.
  EXPECT_FALSE(Exists("a.index"));
  EXPECT_FALSE(Exists("b.index"));
  EXPECT_TRUE(Exists("c.index"));
  EXPECT_FALSE(Exists("d.index"));
  EXPECT_FALSE(Exists("e.index"));
  EXPECT_TRUE(Exists("f.index"));
  EXPECT_TRUE(Exists("g.index"));
  EXPECT_EQ(saver->last_checkpoints(), std::vector<std::string>{tmp.Join("g")});
}

TEST_F(SaverFixture, RelativePathsAndRecovery) {
  SaverOptions options;
  options.save_relative_paths = true;
  options.max_to_keep = 1;
  auto saver = Make(options);
  ASSERT_TRUE(saver->Save(&session, tmp.Join("old")).ok());
  EXPECT_EQ(ReadAll(tmp.Join("checkpoint")), "model_checkpoint_path: \"old\"\nall_model_checkpoint_paths: \"old\"\n");
  proto::CheckpointState state;
  ASSERT_TRUE(GetCheckpointState(tmp.path(), &state).ok());
  EXPECT_EQ(state.model_checkpoint_path(), tmp.Join("old"));  // joined on read
  // A new Saver does not delete old checkpoints unless told about them.
  auto fresh = Make(options);
  ASSERT_TRUE(fresh->Save(&session, tmp.Join("new1")).ok());
  ASSERT_TRUE(fresh->Save(&session, tmp.Join("new2")).ok());
  EXPECT_TRUE(Exists("old.index"));
  EXPECT_FALSE(Exists("new1.index"));
  auto recovering = Make(options);
  recovering->RecoverLastCheckpoints({tmp.Join("old"), tmp.Join("gone")});
  EXPECT_EQ(recovering->last_checkpoints(), std::vector<std::string>{tmp.Join("old")});
  ASSERT_TRUE(recovering->Save(&session, tmp.Join("newest")).ok());
  EXPECT_FALSE(Exists("old.index"));
}

TEST_F(SaverFixture, SaveAndRestoreErrors) {
  auto saver = Make(SaverOptions());
  Status s = saver->Save(&session, tmp.Join("no/such/dir/model"));
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("Parent directory of " + tmp.Join("no/such/dir/model") + " doesn't exist, can't save."),
            std::string::npos);
  s = saver->Save(&session, tmp.Join("checkpoint"));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("conflicts with path used for checkpoint state"), std::string::npos);
  s = saver->Restore(&session, tmp.Join("missing"));
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("The passed save_path is not a valid checkpoint: " + tmp.Join("missing")),
            std::string::npos);
  // A failing save kernel: the error comes back with the path, no state file.
  session.set_run_status(errors::DataLoss("disk on fire"));
  s = saver->Save(&session, tmp.Join("m"));
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(tmp.Join("m")), std::string::npos);
  EXPECT_FALSE(Exists("checkpoint"));
}

// The first save with a global_step takes in the checkpoints "<prefix>-<n>"
// that are already there (a former run's, ones a crash kept out of the
// state file): oldest by file time first, then max_to_keep applies. It
// also removes what crashed saves left, and nothing of other names.
TEST_F(SaverFixture, FirstStepSaveAdoptsEarlierCheckpointsAndRemovesLeftovers) {
  auto touch = [&](const std::string& name) { std::ofstream(tmp.Join(name)) << "x"; };
  const auto t0 = fs::file_time_type::clock::now() - std::chrono::hours(1);
  // model-2 is the oldest, then model-1, then model-3 (named in the state file).
  for (const auto& [step, age] : std::vector<std::pair<int, int>>{{2, 0}, {1, 10}, {3, 20}}) {
    const std::string p = "model-" + std::to_string(step);
    for (const char* ext : {".index", ".data-00000-of-00001", ".meta"}) touch(p + ext);
    fs::last_write_time(tmp.Join(p + ".index"), t0 + std::chrono::seconds(age));
  }
  ASSERT_TRUE(UpdateCheckpointState(tmp.path(), tmp.Join("model-3"), {tmp.Join("model-3")}).ok());
  // Leftovers of crashed saves, and files that are not this saver's.
  fs::create_directory(tmp.Join("model-5_temp_0123abcd"));
  touch("model-5_temp_0123abcd/part-00000-of-00001.index");
  const std::vector<std::string> leftovers = {"model-4.meta.tmp0123456789abcdef", "checkpoint.tmp00112233aabbccdd",
                                              "model-6.index.tempstate77", "model-6.data-00000-of-00001.tempstate78",
                                              "model-5_temp_0123abcd"};
  for (size_t i = 0; i + 1 < leftovers.size(); ++i) touch(leftovers[i]);
  const std::vector<std::string> others = {"model.index", "other-1.index", "modelx-1.index", "model-7x.index"};
  for (const std::string& f : others) touch(f);

  SaverOptions options;
  options.max_to_keep = 2;
  auto saver = Make(options);
  ASSERT_TRUE(saver->Save(&session, tmp.Join("model"), 10).ok());
  EXPECT_EQ(saver->last_checkpoints(), (std::vector<std::string>{tmp.Join("model-3"), tmp.Join("model-10")}));
  for (const char* gone : {"model-1.index", "model-1.data-00000-of-00001", "model-1.meta", "model-2.index",
                           "model-2.meta"})
    EXPECT_FALSE(Exists(gone)) << gone;
  EXPECT_TRUE(Exists("model-3.index") && Exists("model-3.meta") && Exists("model-10.index"));
  for (const std::string& f : leftovers) EXPECT_FALSE(Exists(f)) << f;
  for (const std::string& f : others) EXPECT_TRUE(Exists(f)) << f;
  proto::CheckpointState state;
  ASSERT_TRUE(GetCheckpointState(tmp.path(), &state).ok());
  EXPECT_EQ(std::vector<std::string>(state.all_model_checkpoint_paths().begin(), state.all_model_checkpoint_paths().end()),
            (std::vector<std::string>{tmp.Join("model-3"), tmp.Join("model-10")}));
  // Only the first save looks: a checkpoint appearing later is not taken in.
  touch("model-0.index");
  ASSERT_TRUE(saver->Save(&session, tmp.Join("model"), 11).ok());
  EXPECT_EQ(saver->last_checkpoints(), (std::vector<std::string>{tmp.Join("model-10"), tmp.Join("model-11")}));
  EXPECT_TRUE(Exists("model-0.index"));
  EXPECT_FALSE(Exists("model-3.index"));
  // max_to_keep = 0 keeps everything: nothing is taken in or deleted.
  options.max_to_keep = 0;
  auto keep_all = Make(options);
  ASSERT_TRUE(keep_all->Save(&session, tmp.Join("model"), 12).ok());
  EXPECT_TRUE(keep_all->last_checkpoints().empty());
  EXPECT_TRUE(Exists("model-0.index") && Exists("model-10.index") && Exists("model-11.index"));
}

TEST(CheckpointStateTest, ReadsTensorFlowsStateFiles) {
  GRAPHRT_TESTDATA(tf2onnx, "tf2onnx/models/regression/checkpoint");
  proto::CheckpointState state;
  ASSERT_TRUE(GetCheckpointState(tf2onnx, &state).ok());
  EXPECT_EQ(state.model_checkpoint_path(), tf2onnx + "/model");
  EXPECT_EQ(LatestCheckpoint(tf2onnx), tf2onnx + "/model");
  EXPECT_TRUE(CheckpointExists(tf2onnx + "/model"));
  GRAPHRT_TESTDATA(bad, "serving/bad_half_plus_two/00000123");
  ASSERT_TRUE(GetCheckpointState(bad, &state).ok());
  EXPECT_EQ(state.model_checkpoint_path(), "/tmp/bad_half_plus_two/00000123/export");  // absolute: as written
  // V1 checkpoints: the file itself, or its shards.
  EXPECT_TRUE(CheckpointExists(bad + "/export"));
  GRAPHRT_TESTDATA(bundle, "serving/session_bundle/half_plus_two/00000123");
  EXPECT_TRUE(CheckpointExists(bundle + "/export"));
  EXPECT_FALSE(CheckpointExists(bundle + "/exp"));
}

TEST(CheckpointStateTest, Errors) {
  ScopedTempDir tmp;
  proto::CheckpointState state;
  EXPECT_EQ(GetCheckpointState(tmp.path(), &state).code(), Code::kNotFound);
  EXPECT_EQ(LatestCheckpoint(tmp.path()), "");
  std::ofstream(tmp.Join("checkpoint")) << "all_model_checkpoint_paths: \"x\"\n";
  Status s = GetCheckpointState(tmp.path(), &state);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Invalid checkpoint state loaded from " + tmp.path()), std::string::npos);
  std::ofstream(tmp.Join("checkpoint")) << "model_checkpoint_path: {{{";
  s = GetCheckpointState(tmp.path(), &state);
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(tmp.Join("checkpoint")), std::string::npos);
  // Named in the state file but without files: not the latest.
  ASSERT_TRUE(UpdateCheckpointState(tmp.path(), tmp.Join("ghost"), {}).ok());
  EXPECT_EQ(LatestCheckpoint(tmp.path()), "");
  std::ofstream(tmp.Join("ghost.index")) << "x";
  EXPECT_EQ(LatestCheckpoint(tmp.path()), tmp.Join("ghost"));
  s = UpdateCheckpointState(tmp.path(), tmp.Join("checkpoint"), {});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  // No temporaries are left behind by the atomic writes.
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) files += e.path().filename().string().find(".tmp") == std::string::npos ? 1 : 100;
  EXPECT_EQ(files, 2);
}

// ------------------------------------------------------------ real round trips

const char kRealGraph[] = R"pb(
  node { name: "w" op: "VariableV2"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "w/v1" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2 } } } }
  node { name: "w/v2" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 10 float_val: 20 } } } }
  node { name: "w/set1" op: "Assign" input: "w" input: "w/v1" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "w/set2" op: "Assign" input: "w" input: "w/v2" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "n" op: "VariableV2"
         attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "shape" value { shape { } } } }
  node { name: "n/v1" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 7 } } } }
  node { name: "n/v2" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: -1 } } } }
  node { name: "n/set1" op: "Assign" input: "n" input: "n/v1" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "n/set2" op: "Assign" input: "n" input: "n/v2" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "init" op: "NoOp" input: "^w/set1" input: "^n/set1" }
  node { name: "clobber" op: "NoOp" input: "^w/set2" input: "^n/set2" }
  node { name: "w/read" op: "Identity" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "n/read" op: "Identity" input: "n" attr { key: "T" value { type: DT_INT64 } } }
)pb";

void ExpectValues(Session* session, std::vector<float> w, int64_t n) {
  std::vector<Tensor> out;
  Status s = session->Run({}, {"w/read:0", "n/read:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(testing::ToVector<float>(out[0]), w);
  EXPECT_EQ(out[1].scalar<int64_t>(), n);
}

class SaverRoundTripTest : public ::testing::TestWithParam<bool> {};

TEST_P(SaverRoundTripTest, SaveClobberRestoreAndRestoreInANewSession) {
  GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "SaveV2", "RestoreV2", "StringJoin", "ShardedFilename",
                      "MergeV2Checkpoints");
  ScopedTempDir tmp;
  proto::GraphDef graph = testing::ParseGraph(kRealGraph);
  auto session = testing::CreateSession(graph);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  SaverOptions options;
  options.sharded = GetParam();
  std::unique_ptr<Saver> saver;
  Status s = Saver::Create(session.get(), &graph, options, &saver);
  ASSERT_TRUE(s.ok()) << s;
  std::string path;
  s = saver->Save(session.get(), tmp.Join("ckpt"), 3, &path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(path, tmp.Join("ckpt-3"));
  EXPECT_TRUE(CheckpointExists(path));
  EXPECT_TRUE(fs::exists(path + ".data-00000-of-00001"));
  // Sharded: the _temp_ directory is gone after the merge.
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find("_temp_"), std::string::npos) << e.path();
  ASSERT_TRUE(session->Run({}, {}, {"clobber"}, &out).ok());
  ExpectValues(session.get(), {10, 20}, -1);
  s = saver->Restore(session.get(), path);
  ASSERT_TRUE(s.ok()) << s;
  ExpectValues(session.get(), {1, 2}, 7);

  // import_meta_graph + restore in a fresh session.
  proto::MetaGraphDef meta;
  ASSERT_TRUE(ReadMetaGraphDefFromFile(path + ".meta", &meta).ok());
  auto fresh = testing::CreateSession(meta.graph_def());
  std::unique_ptr<Saver> restorer;
  ASSERT_TRUE(Saver::FromSaverDef(meta.saver_def(), &meta, SaverOptions(), &restorer).ok());
  s = restorer->Restore(fresh.get(), LatestCheckpoint(tmp.path()));
  ASSERT_TRUE(s.ok()) << s;
  ExpectValues(fresh.get(), {1, 2}, 7);
}

INSTANTIATE_TEST_SUITE_P(ShardedOrNot, SaverRoundTripTest, ::testing::Bool());

TEST(SaverRoundTrip, NamedVariablesOnlyAndShapeMismatch) {
  GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "SaveV2", "RestoreV2");
  ScopedTempDir tmp;
  proto::GraphDef graph = testing::ParseGraph(kRealGraph);
  auto session = testing::CreateSession(graph);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  SaverOptions options;
  options.var_names = {"n"};
  std::unique_ptr<Saver> saver;
  ASSERT_TRUE(Saver::Create(session.get(), &graph, options, &saver).ok());
  ASSERT_TRUE(saver->Save(session.get(), tmp.Join("only_n")).ok());
  ASSERT_TRUE(session->Run({}, {}, {"clobber"}, &out).ok());
  ASSERT_TRUE(saver->Restore(session.get(), tmp.Join("only_n")).ok());
  ExpectValues(session.get(), {10, 20}, 7);  // w was not saved, so not restored

  // A saver over w restoring a checkpoint without w: NotFound naming the key.
  options.var_names = {"w"};
  std::unique_ptr<Saver> w_saver;
  ASSERT_TRUE(Saver::Create(session.get(), &graph, options, &w_saver).ok());
  Status s = w_saver->Restore(session.get(), tmp.Join("only_n"));
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  EXPECT_NE(s.message().find("w"), std::string::npos) << s;
  ExpectValues(session.get(), {10, 20}, 7);  // the session keeps working
}

// A restore that cannot succeed for every variable changes none: here n is
// declared int64 [2] but the checkpoint holds a scalar, so its Assign would
// fail after w's had run. Also through a sharded saver (one RestoreV2 per
// device), and for a tensor the checkpoint lacks.
const char kMismatchGraph[] = R"pb(
  node { name: "w" op: "VariableV2" device: "/device:CPU:0"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "w/v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 3 float_val: 4 } } } }
  node { name: "w/set" op: "Assign" input: "w" input: "w/v" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "n" op: "VariableV2"
         attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "n/v" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: 5 int64_val: 6 } } } }
  node { name: "n/set" op: "Assign" input: "n" input: "n/v" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "init" op: "NoOp" input: "^w/set" input: "^n/set" }
  node { name: "w/read" op: "Identity" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "n/read" op: "Identity" input: "n" attr { key: "T" value { type: DT_INT64 } } }
)pb";

TEST(SaverRoundTrip, RestoreChangesNoVariableUnlessAllMatch) {
  GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "SaveV2", "RestoreV2", "StringJoin", "ShardedFilename",
                      "MergeV2Checkpoints");
  ScopedTempDir tmp;
  proto::GraphDef saved_graph = testing::ParseGraph(kRealGraph);
  auto saved = testing::CreateSession(saved_graph);
  ASSERT_TRUE(saved->Run({}, {}, {"init"}, nullptr).ok());
  std::unique_ptr<Saver> saver;
  ASSERT_TRUE(Saver::Create(saved.get(), &saved_graph, SaverOptions(), &saver).ok());
  ASSERT_TRUE(saver->Save(saved.get(), tmp.Join("model")).ok());  // w = [1, 2], n = 7
  SaverOptions only_w;
  only_w.var_names = {"w"};
  std::unique_ptr<Saver> w_saver;
  ASSERT_TRUE(Saver::Create(saved.get(), &saved_graph, only_w, &w_saver).ok());
  ASSERT_TRUE(w_saver->Save(saved.get(), tmp.Join("only_w")).ok());

  for (bool sharded : {false, true}) {
    proto::GraphDef graph = testing::ParseGraph(kMismatchGraph);
    auto session = testing::CreateSession(graph);
    ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
    SaverOptions options;
    options.sharded = sharded;
    std::unique_ptr<Saver> restorer;
    ASSERT_TRUE(Saver::Create(session.get(), &graph, options, &restorer).ok());
    auto expect_unchanged = [&] {
      std::vector<Tensor> out;
      ASSERT_TRUE(session->Run({}, {"w/read:0", "n/read:0"}, {}, &out).ok());
      EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{3, 4})) << "sharded " << sharded;
      EXPECT_EQ(testing::ToVector<int64_t>(out[1]), (std::vector<int64_t>{5, 6})) << "sharded " << sharded;
    };
    for (int round = 0; round < 5; ++round) {
      Status s = restorer->Restore(session.get(), tmp.Join("model"));
      EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
      EXPECT_NE(s.message().find("Saver: restoring from " + tmp.Join("model") +
                                 ": variable n has shape [2] but tensor n in the checkpoint has shape []"),
                std::string::npos) << s;
      EXPECT_NE(s.message().find("no variable was changed"), std::string::npos) << s;
      expect_unchanged();
      s = restorer->Restore(session.get(), tmp.Join("only_w"));
      EXPECT_EQ(s.code(), Code::kNotFound) << s;
      EXPECT_NE(s.message().find("Key n not found in checkpoint " + tmp.Join("only_w")), std::string::npos) << s;
      expect_unchanged();
    }
  }
}

// A Saver given a path relative to the working directory writes the state// A Saver given a path relative to the working directory writes the state
// file's paths relative to the checkpoint directory (as TensorFlow does), so
// LatestCheckpoint of that relative directory finds the checkpoint.
TEST(SaverRoundTrip, RelativeDirectoryStateFileResolves) {
  GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "SaveV2", "RestoreV2");
  ScopedTempDir tmp;
  const fs::path cwd = fs::current_path();
  fs::current_path(tmp.path());
  proto::GraphDef graph = testing::ParseGraph(kRealGraph);
  auto session = testing::CreateSession(graph);
  ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
  std::unique_ptr<Saver> saver;
  ASSERT_TRUE(Saver::Create(session.get(), &graph, SaverOptions(), &saver).ok());
  fs::create_directories("ck");
  std::string written;
  Status s = saver->Save(session.get(), "ck/model.ckpt", 3, &written);
  const std::string latest = LatestCheckpoint("ck");
  proto::CheckpointState state;
  const Status read = GetCheckpointState("ck", &state);
  fs::current_path(cwd);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(written, "ck/model.ckpt-3");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(state.model_checkpoint_path(), "ck/model.ckpt-3");  // joined with the directory on read
  EXPECT_EQ(latest, "ck/model.ckpt-3");
}

// ------------------------------------------------------------ killed while saving

const char kCounterGraph[] = R"pb(
  node { name: "counter" op: "VariableV2" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "shape" value { shape { } } } }
  node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }
  node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 1 } } } }
  node { name: "init" op: "Assign" input: "counter" input: "zero" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "incr" op: "AssignAdd" input: "counter" input: "one" attr { key: "T" value { type: DT_INT64 } } }
  node { name: "read" op: "Identity" input: "counter" attr { key: "T" value { type: DT_INT64 } } }
)pb";

// The child of SaverKillTest: counts up and saves step after step (each
// checkpoint holds its own step number) until it is killed.
TEST(SaverKillChild, SaveForever) {
  const char* dir = std::getenv("GRAPHRT_SAVER_KILL_DIR");
  if (dir == nullptr) GTEST_SKIP() << "run by SaverKillTest only";
  proto::GraphDef graph = testing::ParseGraph(kCounterGraph);
  auto session = testing::CreateSession(graph);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  SaverOptions options;
  options.sharded = std::getenv("GRAPHRT_SAVER_KILL_SHARDED") != nullptr;
  options.max_to_keep = 2;
  std::unique_ptr<Saver> saver;
  ASSERT_TRUE(Saver::Create(session.get(), &graph, options, &saver).ok());
  for (;;) {
    ASSERT_TRUE(session->Run({}, {"incr:0"}, {}, &out).ok());
    ASSERT_TRUE(saver->Save(session.get(), std::string(dir) + "/model", out[0].scalar<int64_t>()).ok());
  }
}

// SIGKILL at random moments of a save never leaves the latest checkpoint
// unreadable: after each kill, latest_checkpoint restores, and to the step
// its name says.
TEST(SaverKillTest, KilledWhileSavingLeavesALoadableCheckpoint) {
  GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "AssignAdd", "SaveV2", "RestoreV2", "StringJoin", "ShardedFilename",
                      "MergeV2Checkpoints");
  ScopedTempDir tmp;
  std::mt19937 rng(12345);
  int restored = 0;
  for (int round = 0; round < 12; ++round) {
    const bool sharded = round % 2 == 1;
    std::string env_dir = "GRAPHRT_SAVER_KILL_DIR=" + tmp.path();
    std::string filter = "--gtest_filter=SaverKillChild.SaveForever";
    std::string exe = "/proc/self/exe";
    std::vector<char*> argv = {exe.data(), filter.data(), nullptr};
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
    env_strings.push_back(env_dir);
    if (sharded) env_strings.push_back("GRAPHRT_SAVER_KILL_SHARDED=1");
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()), 0);
    // The last rounds wait long enough for several saves to finish, even on
    // a loaded machine (a save fsyncs its files and directory several times).
    const int ms = round >= 10 ? 1200 : static_cast<int>(rng() % 150);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);

    const std::string latest = LatestCheckpoint(tmp.path());
    if (latest.empty()) continue;  // killed before the first save finished
    const int64_t step = std::stoll(latest.substr(latest.rfind('-') + 1));
    proto::GraphDef graph = testing::ParseGraph(kCounterGraph);
    auto session = testing::CreateSession(graph);
    std::unique_ptr<Saver> saver;
    SaverOptions options;
    options.sharded = sharded;
    ASSERT_TRUE(Saver::Create(session.get(), &graph, options, &saver).ok());
    Status s = saver->Restore(session.get(), latest);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s;
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {"read:0"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int64_t>(), step) << latest;
    ++restored;
  }
  EXPECT_GE(restored, 2);
}

}  // namespace
}  // namespace graphrt
