// SavedModelBuilder: what it writes is checked field by field and loaded
// back with LoadSavedModel (the only TF1 loader at hand), as TensorFlow
// Serving would load it.
#include "graphrt/client/saved_model_builder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "client_test_util.h"
#include "fake_session.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/client/saver.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;
using testing::FakeSession;
using testing::MakeTensor;
using testing::ScopedTempDir;
using testing::ToVector;

// y = 0.5 * x + 2 with an asset path Const (the tensor the loader feeds).
const char kHalfPlusTwo[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: -1 } } } } }
  node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
  node { name: "ax" op: "Mul" input: "a" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Add" input: "ax" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "vocab_path" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "/original/vocab.txt" } } } }
  node { name: "vocab_path_read" op: "Identity" input: "vocab_path" attr { key: "T" value { type: DT_STRING } } }
  node { name: "main_op" op: "NoOp" }
)pb";

proto::SignatureDef PredictSignature() {
  proto::SignatureDef sig;
  sig.set_method_name(kPredictMethodName);
  proto::TensorInfo& in = (*sig.mutable_inputs())["x"];
  in.set_name("x:0");
  in.set_dtype(proto::DT_FLOAT);
  in.mutable_tensor_shape()->add_dim()->set_size(-1);
  proto::TensorInfo& out = (*sig.mutable_outputs())["y"];
  out.set_name("y:0");
  out.set_dtype(proto::DT_FLOAT);
  out.mutable_tensor_shape()->add_dim()->set_size(-1);
  return sig;
}

struct BuilderTest : ::testing::Test {
  void SetUp() override {
    testing::LoadStandardPlugins();
    asset = tmp.Join("vocab.txt");
    std::ofstream(asset) << "a\nb\n";
  }
  MetaGraphExport Export() {
    MetaGraphExport meta;
    meta.tags = {"serve"};
    meta.signatures[kDefaultServingSignatureDefKey] = PredictSignature();
    meta.assets.push_back({asset, "vocab_path:0", ""});
    meta.main_op = "main_op";
    return meta;
  }
  ScopedTempDir tmp;
  std::string asset;
};

TEST_F(BuilderTest, ModelWithoutVariablesRoundTrips) {
  for (bool as_text : {false, true}) {
    SCOPED_TRACE(as_text ? "pbtxt" : "pb");
    const std::string dir = tmp.Join(as_text ? "text_model" : "binary_model");
    proto::GraphDef graph = testing::ParseGraph(kHalfPlusTwo);
    auto session = testing::CreateSession(graph);
    {
      SavedModelBuilder builder(dir);
      Status s = builder.AddMetaGraphAndVariables(session.get(), graph, Export());
      ASSERT_TRUE(s.ok()) << s;
      s = builder.Save(as_text);
      ASSERT_TRUE(s.ok()) << s;
    }
    EXPECT_TRUE(fs::exists(dir + (as_text ? "/saved_model.pbtxt" : "/saved_model.pb")));
    EXPECT_EQ(std::ifstream(dir + "/assets/vocab.txt").get(), 'a');
    EXPECT_FALSE(fs::exists(dir + "/variables/variables.index"));  // nothing to save

    proto::SavedModel sm;
    ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
    EXPECT_EQ(sm.saved_model_schema_version(), 1);
    ASSERT_EQ(sm.meta_graphs_size(), 1);
    const proto::MetaGraphDef& m = sm.meta_graphs(0);
    EXPECT_EQ(m.graph_def().node_size(), graph.node_size());
    EXPECT_FALSE(m.has_saver_def());
    // stripped_op_list: the OpDefs of the ops used, by name.
    std::vector<std::string> ops;
    for (const auto& op : m.meta_info_def().stripped_op_list().op()) ops.push_back(op.name());
    EXPECT_EQ(ops, (std::vector<std::string>{"Add", "Const", "Identity", "Mul", "NoOp", "Placeholder"}));
    // Assets: the TF1 collections and asset_file_def.
    EXPECT_EQ(m.collection_def().at(kAssetFilepathsCollection).node_list().value(0), "vocab_path:0");
    const auto& any = m.collection_def().at(kSavedModelAssetsKey).any_list().value(0);
    EXPECT_EQ(any.type_url(), "type.googleapis.com/tensorflow.AssetFileDef");
    ASSERT_EQ(m.asset_file_def_size(), 1);
    EXPECT_EQ(m.asset_file_def(0).filename(), "vocab.txt");
    EXPECT_EQ(m.collection_def().at(kSavedModelMainOpKey).node_list().value(0), "main_op");

    SavedModelBundle bundle;
    Status s = LoadSavedModel(testing::OpTestOptions(1), dir, {"serve"}, &bundle);
    ASSERT_TRUE(s.ok()) << s;
    std::vector<Tensor> out;
    s = bundle.RunSignature(kDefaultServingSignatureDefKey, {{"x", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}},
                            {"y"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{2.5, 3, 4.5}));
  }
  // Nothing temporary is left beside the exports.
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(BuilderTest, SecondMetaGraphAndErrors) {
  proto::GraphDef graph = testing::ParseGraph(kHalfPlusTwo);
  auto session = testing::CreateSession(graph);
  const std::string dir = tmp.Join("model");
  {
    SavedModelBuilder builder(dir);
    MetaGraphExport meta = Export();
    EXPECT_EQ(builder.AddMetaGraph(graph, meta).code(), Code::kFailedPrecondition);  // variables first
    EXPECT_EQ(builder.Save().code(), Code::kFailedPrecondition);
    meta.tags.clear();
    EXPECT_EQ(builder.AddMetaGraphAndVariables(session.get(), graph, meta).code(), Code::kInvalidArgument);
    ASSERT_TRUE(builder.AddMetaGraphAndVariables(session.get(), graph, Export()).ok());
    Status s = builder.AddMetaGraph(graph, Export());  // the same tag set again
    EXPECT_EQ(s.code(), Code::kAlreadyExists);
    EXPECT_NE(s.message().find("{ serve }"), std::string::npos) << s;
    meta = Export();
    meta.tags = {"train", "serve"};
    meta.assets[0].filename = "../escape.txt";
    EXPECT_EQ(builder.AddMetaGraph(graph, meta).code(), Code::kInvalidArgument);
    meta.assets[0].filename = "";
    ASSERT_TRUE(builder.AddMetaGraph(graph, meta).ok());
    ASSERT_TRUE(builder.Save().ok());
    EXPECT_EQ(builder.Save().code(), Code::kFailedPrecondition);
  }
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  ASSERT_EQ(sm.meta_graphs_size(), 2);
  const proto::MetaGraphDef* m;
  EXPECT_TRUE(FindMetaGraphDefByTags(sm, {"serve", "train"}, &m).ok());
  // An existing export directory is never overwritten.
  SavedModelBuilder again(dir);
  Status s = again.AddMetaGraphAndVariables(session.get(), graph, Export());
  EXPECT_EQ(s.code(), Code::kAlreadyExists);
  EXPECT_NE(s.message().find(dir), std::string::npos);
  // A missing asset file is an error naming it, and an abandoned builder leaves nothing.
  {
    SavedModelBuilder abandoned(tmp.Join("abandoned"));
    MetaGraphExport meta = Export();
    meta.assets[0].source_path = tmp.Join("no-such-asset.txt");
    s = abandoned.AddMetaGraphAndVariables(session.get(), graph, meta);
    EXPECT_EQ(s.code(), Code::kNotFound);
    EXPECT_NE(s.message().find("no-such-asset.txt"), std::string::npos);
  }
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find("abandoned"), std::string::npos) << e.path();
}

TEST_F(BuilderTest, VariablesGoThroughAShardedSaverWithoutStateOrMetaFiles) {
  FakeSession session;
  proto::GraphDef graph = testing::ParseGraph(R"pb(
    node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { } } } }
  )pb");
  ASSERT_TRUE(session.Create(graph).ok());
  const std::string dir = tmp.Join("vars");
  SavedModelBuilder builder(dir);
  MetaGraphExport meta;
  meta.tags = {"serve"};
  Status s = builder.AddMetaGraphAndVariables(&session, graph, meta);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(builder.Save().ok());
  // The save ran with <export_dir>/variables/variables (in the temporary
  // directory renamed to export_dir).
  ASSERT_EQ(session.runs().size(), 1u);
  const std::string fed = session.runs()[0].string_feeds.at("save/Const:0");
  EXPECT_EQ(fed.substr(fed.size() - std::string("/variables/variables").size()), "/variables/variables");
  EXPECT_TRUE(fs::exists(dir + "/variables/variables.index"));
  EXPECT_FALSE(fs::exists(dir + "/variables/checkpoint"));
  EXPECT_FALSE(fs::exists(dir + "/variables/variables.meta"));
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  const proto::SaverDef& def = sm.meta_graphs(0).saver_def();
  EXPECT_TRUE(def.sharded());
  EXPECT_EQ(def.filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(def.save_tensor_name(), "save/Identity:0");
  EXPECT_EQ(def.restore_op_name(), "save/restore_all");
  bool has_merge = false;
  for (const auto& n : sm.meta_graphs(0).graph_def().node()) has_merge |= n.op() == "MergeV2Checkpoints";
  EXPECT_TRUE(has_merge);
}

const char kCounterGraph[] = R"pb(
  node { name: "counter" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { } } } }
  node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0 } } } }
  node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
  node { name: "init" op: "Assign" input: "counter" input: "zero" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "incr" op: "AssignAdd" input: "counter" input: "one" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "read" op: "Identity" input: "counter" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

TEST_F(BuilderTest, TrainedVariablesRoundTrip) {
  GRAPHRT_REQUIRE_OPS("VariableV2", "Assign", "AssignAdd", "SaveV2", "RestoreV2", "StringJoin", "ShardedFilename",
                      "MergeV2Checkpoints", "Pack");
  proto::GraphDef graph = testing::ParseGraph(kCounterGraph);
  auto session = testing::CreateSession(graph);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(session->Run({}, {"incr:0"}, {}, &out).ok());
  const std::string dir = tmp.Join("counter");
  SavedModelBuilder builder(dir);
  MetaGraphExport meta;
  meta.tags = {"serve"};
  proto::SignatureDef sig;
  sig.set_method_name(kPredictMethodName);
  (*sig.mutable_outputs())["output"].set_name("read:0");
  meta.signatures["get"] = sig;
  Status s = builder.AddMetaGraphAndVariables(session.get(), graph, meta);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(builder.Save().ok());
  EXPECT_TRUE(fs::exists(dir + "/variables/variables.data-00000-of-00001"));
  SavedModelBundle bundle;
  s = LoadSavedModel(testing::OpTestOptions(1), dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  s = bundle.RunSignature("get", {}, {"output"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 3.0f);
}

TEST_F(BuilderTest, ReexportTensorFlowsHalfPlusTwoThroughItsOwnSaver) {
  GRAPHRT_TESTDATA(src, "serving/saved_model_half_plus_two_cpu/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(src, "SaveV2", "RestoreV2", "StringJoin", "ShardedFilename", "MergeV2Checkpoints");
  SavedModelBundle bundle;
  // A loaded model's ops may write only in its folder and what the caller
  // allows: here the folder the re-export goes to.
  SessionOptions options = testing::OpTestOptions(1);
  options.config.mutable_graphrt_options()->add_allowed_directories(tmp.path());
  Status s = LoadSavedModel(options, src, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  const std::string dir = tmp.Join("reexport");
  SavedModelBuilder builder(dir);
  MetaGraphExport meta;
  meta.tags = {"serve"};
  for (const auto& [k, v] : bundle.meta_graph_def.signature_def()) meta.signatures[k] = v;
  s = builder.AddMetaGraphAndVariables(bundle.session.get(), bundle.meta_graph_def.graph_def(), meta,
                                       &bundle.meta_graph_def.saver_def());
  // SaveV2 makes its prefix's directory (the sharded saver's
  // <prefix>_temp_<uuid>/), as TensorFlow's does.
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(builder.Save().ok());
  SavedModelBundle again;
  s = LoadSavedModel(testing::OpTestOptions(1), dir, {"serve"}, &again);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = again.RunSignature("regress_x2_to_y3", {{"inputs", MakeTensor<float>(GR_FLOAT, {2, 1}, {1, 3})}}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{3.5, 4.5}));
}

}  // namespace
}  // namespace graphrt
