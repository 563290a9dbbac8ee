// SavedModel / MetaGraphDef loading against TensorFlow's own files
// (../shared/tf_testdata/README.md "Expected results"; loader behaviours
// tf_behaviours.md §13 "SavedModel loading").
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

using testing::MakeTensor;
using testing::ToVector;

// Text-proto fields are matched, not copied: a serialized tf.Example with one
// float feature, written by hand from the wire format (tf_proto_facts.md §9:
// Example.features #1, Features.feature #1 map, Feature.float_list #2,
// FloatList.value #1 packed).
std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return s + static_cast<char>(v);
}
std::string LengthDelimited(int field, const std::string& payload) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(payload.size()) + payload;
}
std::string FloatExample(const std::string& key, float value) {
  std::string packed(4, '\0');
  std::memcpy(packed.data(), &value, 4);
  const std::string float_list = LengthDelimited(1, packed);
  const std::string feature = LengthDelimited(2, float_list);
  const std::string entry = LengthDelimited(1, key) + LengthDelimited(2, feature);
  const std::string features = LengthDelimited(1, entry);
  return LengthDelimited(1, features);
}
Tensor Examples(const std::string& key, const std::vector<float>& xs) {
  Tensor t(GR_STRING, TensorShape({static_cast<int64_t>(xs.size())}));
  for (size_t i = 0; i < xs.size(); ++i) t.set_string(static_cast<int64_t>(i), FloatExample(key, xs[i]));
  return t;
}

void ExpectFloats(const Tensor& t, const std::vector<int64_t>& dims, const std::vector<float>& want) {
  ASSERT_EQ(t.dtype(), GR_FLOAT);
  ASSERT_EQ(t.shape(), TensorShape(dims));
  const std::vector<float> got = ToVector<float>(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
}

SessionOptions Options() {
  testing::LoadStandardPlugins();
  return testing::OpTestOptions(1);
}

// ------------------------------------------------------------ reading files

TEST(SavedModelReadTest, HalfPlusTwoCpuSignaturesAndSaver) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_half_plus_two_cpu/00000123");
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  EXPECT_EQ(sm.saved_model_schema_version(), 1);
  const proto::MetaGraphDef* meta;
  ASSERT_TRUE(FindMetaGraphDefByTags(sm, {"serve"}, &meta).ok());
  EXPECT_EQ(meta->graph_def().node_size(), 74);
  std::vector<std::string> keys;
  for (const auto& [k, v] : meta->signature_def()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"classify_x_to_y", "regress_x2_to_y3", "regress_x_to_y",
                                            "regress_x_to_y2", "serving_default"}));
  const proto::SignatureDef& def = meta->signature_def().at("serving_default");
  EXPECT_EQ(def.method_name(), kPredictMethodName);
  EXPECT_EQ(def.inputs().at("x").name(), "x:0");
  EXPECT_EQ(def.inputs().at("x").dtype(), proto::DT_FLOAT);
  EXPECT_EQ(ShapeProtoString(def.inputs().at("x").tensor_shape()), "[-1, 1]");
  const proto::SignatureDef& cls = meta->signature_def().at("classify_x_to_y");
  EXPECT_EQ(cls.method_name(), kClassifyMethodName);
  EXPECT_EQ(cls.inputs().at("inputs").dtype(), proto::DT_STRING);
  EXPECT_TRUE(cls.inputs().at("inputs").tensor_shape().unknown_rank());
  EXPECT_EQ(cls.outputs().at("scores").name(), "y:0");
  // SaverDef as tf_proto_facts.md §3 gives it.
  EXPECT_EQ(meta->saver_def().filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(meta->saver_def().save_tensor_name(), "save/Identity:0");
  EXPECT_EQ(meta->saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(meta->saver_def().max_to_keep(), 5);
  EXPECT_TRUE(meta->saver_def().sharded());
  EXPECT_FLOAT_EQ(meta->saver_def().keep_checkpoint_every_n_hours(), 10000);
  EXPECT_EQ(meta->saver_def().version(), proto::SaverDef::V2);
  // Assets from the saved_model_assets collection (asset_file_def is empty).
  std::vector<proto::AssetFileDef> assets;
  ASSERT_TRUE(GetAssetFileDefs(*meta, &assets).ok());
  ASSERT_EQ(assets.size(), 1u);
  EXPECT_EQ(assets[0].filename(), "foo.txt");
  EXPECT_EQ(assets[0].tensor_info().name(), "Const:0");
  std::string init_op;
  ASSERT_TRUE(GetInitOp(*meta, dir, &init_op).ok());
  EXPECT_EQ(init_op, "group_deps");  // collection saved_model_main_op (TF 1.14)
  EXPECT_TRUE(MaybeSavedModelDirectory(dir));
}

TEST(SavedModelReadTest, LegacyInitOpAndRefOutputDtypes) {
  GRAPHRT_TESTDATA(three, "serving/saved_model_half_plus_three/00000123");
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(three, &sm).ok());
  std::string init_op;
  ASSERT_TRUE(GetInitOp(sm.meta_graphs(0), three, &init_op).ok());
  EXPECT_EQ(init_op, "group_deps");  // collection legacy_init_op (TF 1.0)
  EXPECT_EQ(sm.meta_graphs(0).meta_info_def().tensorflow_version(), "1.0.0-rc2");

  GRAPHRT_TESTDATA(counter, "serving/saved_model_counter/00000123");
  ASSERT_TRUE(ReadSavedModelFromDirectory(counter, &sm).ok());
  const auto& sigs = sm.meta_graphs(0).signature_def();
  ASSERT_TRUE(sigs.count("incr_counter"));
  EXPECT_EQ(sigs.at("incr_counter").outputs().at("output").dtype(), 101);  // DT_FLOAT_REF
  EXPECT_EQ(DataTypeEnumName(sigs.at("incr_counter").outputs().at("output").dtype()), "DT_FLOAT_REF");
  EXPECT_EQ(sigs.at("incr_counter_by").inputs().at("delta").name(), "delta:0");
}

TEST(SavedModelReadTest, TextFormatSavedModel) {
  GRAPHRT_TESTDATA(dir, "tensorflow/cc/saved_model/testdata/half_plus_two_pbtxt/00000123");
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  ASSERT_EQ(sm.meta_graphs_size(), 1);
  const proto::MetaGraphDef& m = sm.meta_graphs(0);
  EXPECT_EQ(m.meta_info_def().stripped_op_list().op_size(), 15);
  EXPECT_EQ(m.meta_info_def().tensorflow_version(), "0.12.head");
  EXPECT_EQ(m.signature_def().at("serving_default").outputs().at("y").name(), "y:0");
  std::vector<proto::AssetFileDef> assets;
  ASSERT_TRUE(GetAssetFileDefs(m, &assets).ok());
  ASSERT_EQ(assets.size(), 1u);
  EXPECT_EQ(assets[0].filename(), "foo.txt");
}

TEST(SavedModelReadTest, TagSetsMustMatchExactly) {
  GRAPHRT_TESTDATA(dir, "rust/test_resources/regression-model");
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  const proto::MetaGraphDef* meta;
  // Order is irrelevant; a subset or a superset does not match.
  EXPECT_TRUE(FindMetaGraphDefByTags(sm, {"serve", "train"}, &meta).ok());
  Status s = FindMetaGraphDefByTags(sm, {"serve"}, &meta);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("Could not find meta graph def matching supplied tags: { serve }"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("{ serve, train }"), std::string::npos) << s.message();  // what there is
  s = FindMetaGraphDefByTags(sm, {"serve", "train", "gpu"}, &meta);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(meta, nullptr);
}

TEST(SavedModelReadTest, TensorFlow2SavedModelSignaturesAndInitOp) {
  GRAPHRT_TESTDATA(dir, "rust/examples/regression_savedmodel");
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  const proto::MetaGraphDef* meta;
  ASSERT_TRUE(FindMetaGraphDefByTags(sm, {"serve"}, &meta).ok());
  EXPECT_EQ(meta->signature_def().at("train").inputs().at("x").name(), "train_x:0");
  EXPECT_EQ(meta->signature_def().at("w").outputs().at("output").name(), "StatefulPartitionedCall_2:0");
  std::string init_op;
  ASSERT_TRUE(GetInitOp(*meta, dir, &init_op).ok());
  EXPECT_EQ(init_op, "NoOp");  // from the __saved_model_init_op signature
  EXPECT_EQ(meta->saver_def().filename_tensor_name(), "saver_filename:0");
}

TEST(SavedModelReadTest, ErrorsNameTheFile) {
  testing::ScopedTempDir tmp;
  proto::SavedModel sm;
  Status s = ReadSavedModelFromDirectory(tmp.path(), &sm);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("Could not find SavedModel .pb or .pbtxt at supplied export directory path: " +
                             tmp.path()),
            std::string::npos);
  EXPECT_FALSE(MaybeSavedModelDirectory(tmp.path()));
  std::ofstream(tmp.Join("saved_model.pb")) << "this is { not a proto";
  s = ReadSavedModelFromDirectory(tmp.path(), &sm);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find(tmp.Join("saved_model.pb")), std::string::npos) << s.message();
  // A saved_model.pb that is /dev/zero is refused by its type, not read
  // until memory runs out.
  std::filesystem::remove(tmp.Join("saved_model.pb"));
  std::filesystem::create_symlink("/dev/zero", tmp.Join("saved_model.pb"));
  s = ReadSavedModelFromDirectory(tmp.path(), &sm);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find(tmp.Join("saved_model.pb") + ": is a character device, not a regular file"),
            std::string::npos)
      << s.message();
  std::filesystem::remove(tmp.Join("saved_model.pb"));
  proto::MetaGraphDef meta;
  s = ReadMetaGraphDefFromFile(tmp.Join("missing.meta"), &meta);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("missing.meta"), std::string::npos);

  // The init-op collection must hold exactly one node.
  proto::MetaGraphDef two;
  auto* list = (*two.mutable_collection_def())["saved_model_main_op"].mutable_node_list();
  list->add_value("a");
  list->add_value("b");
  std::string init_op;
  s = GetInitOp(two, "/models/x", &init_op);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("Expected exactly one main op in : /models/x"), std::string::npos);
}

TEST(SavedModelReadTest, MetaGraphWithoutSignatures) {
  GRAPHRT_TESTDATA(dir, "serving/bad_half_plus_two/00000123");
  SavedModelBundle bundle;
  ASSERT_TRUE(ReadMetaGraphDefFromFile(dir + "/export.meta", &bundle.meta_graph_def).ok());
  bundle.source = dir + "/export.meta";
  EXPECT_EQ(bundle.meta_graph_def.signature_def_size(), 0);
  const proto::SignatureDef* sig;
  Status s = bundle.GetSignature("serving_default", &sig);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("has no signatures"), std::string::npos) << s.message();
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {}, {}, &out);  // no session: a clean error
  EXPECT_FALSE(s.ok());
}

// ------------------------------------------------------------ loading and running

// The loader's steps, seen from the session (TF1 loader order): restore
// with the variables prefix and the asset paths fed, then the main op with
// the asset paths fed.
TEST(SavedModelLoadTest, LoaderStepsAsTheSessionSeesThem) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_half_plus_two_cpu/00000123");
  testing::FakeSessionFactory::RegisterOnce();
  SessionOptions options;
  options.target = "fake://";
  SavedModelBundle bundle;
  Status s = LoadSavedModel(options, dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  const testing::FakeSession* fake = testing::FakeSessionFactory::last();
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(fake->graph().node_size(), 74);
  ASSERT_EQ(fake->runs().size(), 2u);
  const auto& restore = fake->runs()[0];
  EXPECT_EQ(restore.targets, std::vector<std::string>{"save/restore_all"});
  EXPECT_TRUE(restore.fetches.empty());
  EXPECT_EQ(restore.string_feeds.at("save/Const:0"), dir + "/variables/variables");
  EXPECT_EQ(restore.string_feeds.at("Const:0"), dir + "/assets/foo.txt");
  const auto& main_op = fake->runs()[1];
  EXPECT_EQ(main_op.targets, std::vector<std::string>{"group_deps"});
  EXPECT_EQ(main_op.string_feeds.size(), 1u);
  EXPECT_EQ(main_op.string_feeds.at("Const:0"), dir + "/assets/foo.txt");

  // With RunOptions, both runs get them.
  proto::RunOptions run_options;
  run_options.set_timeout_in_ms(1234);
  s = LoadSavedModel(options, run_options, dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  fake = testing::FakeSessionFactory::last();
  ASSERT_EQ(fake->runs().size(), 2u);
  EXPECT_EQ(fake->runs()[0].timeout_in_ms, 1234);
  EXPECT_EQ(fake->runs()[1].timeout_in_ms, 1234);

  // No variables/ (the text SavedModel): only the legacy init op runs.
  GRAPHRT_TESTDATA(pbtxt, "tensorflow/cc/saved_model/testdata/half_plus_two_pbtxt/00000123");
  s = LoadSavedModel(options, pbtxt, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  fake = testing::FakeSessionFactory::last();
  ASSERT_EQ(fake->runs().size(), 1u);
  EXPECT_EQ(fake->runs()[0].targets, std::vector<std::string>{"group_deps"});
  EXPECT_EQ(fake->runs()[0].string_feeds.at("Const:0"), pbtxt + "/assets/foo.txt");

  // A failing restore: the error names the checkpoint and the bundle stays empty.
  GRAPHRT_TESTDATA(counter, "serving/saved_model_counter/00000123");
  testing::FakeSessionFactory::set_next_run_status(errors::DataLoss("Checksum does not match"));
  s = LoadSavedModel(options, counter, {"serve"}, &bundle);
  testing::FakeSessionFactory::set_next_run_status(Status::OK());
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find("restoring the variables from " + counter + "/variables/variables"), std::string::npos)
      << s;
  EXPECT_NE(s.message().find("Checksum does not match"), std::string::npos) << s;
  EXPECT_EQ(bundle.session, nullptr);
  EXPECT_EQ(bundle.meta_graph_def.graph_def().node_size(), 0);
}

// SessionBundle directories: export.meta restored from the V1 checkpoint
// beside it (a single shard is named as itself).
TEST(SavedModelLoadTest, SessionBundleStepsAsTheSessionSeesThem) {
  GRAPHRT_TESTDATA(bundle_dir, "serving/session_bundle/half_plus_two/00000123");
  GRAPHRT_TESTDATA(bad_dir, "serving/bad_half_plus_two/00000123");
  testing::FakeSessionFactory::RegisterOnce();
  SessionOptions options;
  options.target = "fake://";
  EXPECT_TRUE(MaybeSessionBundleDirectory(bundle_dir));
  EXPECT_FALSE(MaybeSavedModelDirectory(bundle_dir));
  for (const auto& [dir, prefix] : {std::pair<std::string, std::string>{bundle_dir, bundle_dir + "/export-00000-of-00001"},
                                    {bad_dir, bad_dir + "/export"}}) {
    SavedModelBundle bundle;
    Status s = LoadSessionBundle(options, dir, &bundle);
    ASSERT_TRUE(s.ok()) << s;
    const testing::FakeSession* fake = testing::FakeSessionFactory::last();
    // The session bundle also runs its "serving_init_op"; the bad one has none.
    const auto& collections = bundle.meta_graph_def.collection_def();
    ASSERT_EQ(fake->runs().size(), collections.count("serving_init_op") ? 2u : 1u);
    if (dir == bundle_dir) {
      ASSERT_TRUE(collections.count("serving_init_op"));
      EXPECT_EQ(fake->runs()[1].targets,
                std::vector<std::string>{collections.at("serving_init_op").node_list().value(0)});
    }
    const std::string filename = bundle.meta_graph_def.saver_def().filename_tensor_name();
    EXPECT_FALSE(filename.empty());
    EXPECT_EQ(fake->runs()[0].string_feeds.at(filename), prefix);
    EXPECT_EQ(fake->runs()[0].targets,
              std::vector<std::string>{TensorNameToNodeName(bundle.meta_graph_def.saver_def().restore_op_name())});
  }
  SavedModelBundle bundle;
  testing::ScopedTempDir tmp;
  Status s = LoadSessionBundle(options, tmp.path(), &bundle);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("export.meta"), std::string::npos);
}

TEST(SavedModelLoadTest, MatrixHalfPlusTwoNeedsNoVariables) {
  GRAPHRT_TESTDATA(dir, "serving/batching/matrix_half_plus_two/1");
  SavedModelBundle bundle;
  Status load = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(load.ok()) << load;
  std::vector<Tensor> out;
  std::vector<std::string> keys;
  Status s = bundle.RunSignature(
      "serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}}, {}, &out, &keys);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(keys, std::vector<std::string>{"y"});
  ExpectFloats(out[0], {1, 3, 3}, {2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5});
  s = bundle.RunSignature("serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {2, 3, 3}, std::vector<float>(18, 1))}},
                          {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {2, 3, 3}, std::vector<float>(18, 2.5));
}

TEST(SavedModelLoadTest, SignatureErrorsNameKeysAndTheSessionKeepsWorking) {
  GRAPHRT_TESTDATA(dir, "serving/batching/matrix_half_plus_two/1");
  SavedModelBundle bundle;
  Status load = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(load.ok()) << load;
  const Tensor x = MakeTensor<float>(GR_FLOAT, {1, 3, 3}, std::vector<float>(9, 0));
  std::vector<Tensor> out;
  Status s = bundle.RunSignature("predict", {{"x", x}}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("available signatures: serving_default"), std::string::npos) << s.message();
  s = bundle.RunSignature("serving_default", {{"inputs", x}}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("has no input 'inputs' (its inputs: x)"), std::string::npos) << s.message();
  s = bundle.RunSignature("serving_default", {{"x", x}}, {"z"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("has no output 'z' (its outputs: y)"), std::string::npos) << s.message();
  // A feed of the wrong dtype fails in the session, naming the signature.
  s = bundle.RunSignature("serving_default", {{"x", MakeTensor<int32_t>(GR_INT32, {2}, {1, 2})}}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("serving_default"), std::string::npos) << s.message();
  s = bundle.RunSignature("serving_default", {{"x", x}}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1, 3, 3}, std::vector<float>(9, 2));
}

TEST(SavedModelLoadTest, SignatureDefaultsFeedInputsNotGiven) {
  GRAPHRT_TESTDATA(dir, "serving/batching/matrix_half_plus_two/1");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  proto::TensorProto& def = (*(*bundle.meta_graph_def.mutable_signature_def())["serving_default"].mutable_defaults())["x"];
  def.set_dtype(proto::DT_FLOAT);
  def.mutable_tensor_shape()->add_dim()->set_size(1);
  def.mutable_tensor_shape()->add_dim()->set_size(1);
  def.mutable_tensor_shape()->add_dim()->set_size(2);
  def.add_float_val(4);
  def.add_float_val(-4);
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1, 1, 2}, {4, 0});
  // A value given wins over the default.
  s = bundle.RunSignature("serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {1}, {2})}}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1}, {3});
  // A default that is not a valid tensor: an error naming the input.
  def.add_float_val(1);
  def.add_float_val(2);
  def.add_float_val(3);
  s = bundle.RunSignature("serving_default", {}, {"y"}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("default for input 'x'"), std::string::npos) << s;
}

// A default of a few bytes (one value, a large shape: the last value
// repeats) is made in the session's memory: the session's limit refuses
// it, naming the input, instead of 4 GiB appearing outside the budget.
TEST(SavedModelLoadTest, SignatureDefaultsAreMadeWithinTheSessionMemoryLimit) {
  GRAPHRT_TESTDATA(dir, "serving/batching/matrix_half_plus_two/1");
  SessionOptions options = Options();
  options.config.mutable_graphrt_options()->set_session_memory_limit_bytes(int64_t{256} << 20);
  SavedModelBundle bundle;
  Status s = LoadSavedModel(options, dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  proto::TensorProto& def = (*(*bundle.meta_graph_def.mutable_signature_def())["serving_default"].mutable_defaults())["x"];
  def.set_dtype(proto::DT_FLOAT);
  def.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 30);  // 4 GiB of float
  def.add_float_val(1);
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {}, {"y"}, &out);
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("default for input 'x'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("4294967296 bytes"), std::string::npos) << s;
  EXPECT_NE(s.message().find("session_memory_limit_bytes"), std::string::npos) << s;
  // Within the limit the default is used as before, and the session works.
  def.mutable_tensor_shape()->mutable_dim(0)->set_size(3);
  s = bundle.RunSignature("serving_default", {}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3}, {2.5f, 2.5f, 2.5f});
}

TEST(SavedModelLoadTest, LoadErrors) {
  GRAPHRT_TESTDATA(dir, "serving/batching/matrix_half_plus_two/1");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"missing-tag"}, &bundle);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("Could not find meta graph def matching supplied tags: { missing-tag }"),
            std::string::npos);
  EXPECT_EQ(bundle.session, nullptr);
  s = LoadSavedModel(Options(), dir, {"serve", "missing-tag"}, &bundle);
  EXPECT_EQ(s.code(), Code::kNotFound);
  s = LoadSavedModel(Options(), dir + "/does-not-exist", {"serve"}, &bundle);
  EXPECT_EQ(s.code(), Code::kNotFound);
  SessionOptions bad = Options();
  bad.target = "invalid:target";
  s = LoadSavedModel(bad, dir, {"serve"}, &bundle);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("invalid:target"), std::string::npos) << s.message();
  EXPECT_EQ(bundle.session, nullptr);
}

TEST(SavedModelLoadTest, RedundantInputs) {
  GRAPHRT_TESTDATA(dir, "tf2onnx/models/saved_model_with_redundant_inputs");
  SavedModelBundle bundle;
  Status load = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(load.ok()) << load;
  std::vector<float> xs(10);
  for (int i = 0; i < 10; ++i) xs[i] = 0.5f * i - 2;
  std::vector<float> want(10);
  for (int i = 0; i < 10; ++i) want[i] = xs[i] + 1;
  std::vector<Tensor> out;
  Status s = bundle.RunSignature("serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {1, 10}, xs)}}, {"z"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1, 10}, want);
  // The unconnected input may be fed too.
  s = bundle.RunSignature("serving_default",
                          {{"x", MakeTensor<float>(GR_FLOAT, {1, 10}, xs)},
                           {"y", MakeTensor<float>(GR_FLOAT, {1, 10}, std::vector<float>(10, 7))}},
                          {"z"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1, 10}, want);
}

TEST(SavedModelLoadTest, HalfPlusTwoEverySignature) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_half_plus_two_cpu/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "VariableV2", "Assign", "RestoreV2", "ParseExample");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  const Tensor x = MakeTensor<float>(GR_FLOAT, {3, 1}, {1, 2, 5});
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {{"x", x}}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3, 1}, {2.5, 3.0, 4.5});
  s = bundle.RunSignature("regress_x2_to_y3", {{"inputs", x}}, {"outputs"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3, 1}, {3.5, 4.0, 5.5});
  // loader_test.cc's check: 4 Examples with x = 0..3 -> [2, 2.5, 3, 3.5].
  // The asset: its tensor is a Const holding the file name.
  s = bundle.session->Run({}, {"filename_tensor:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].string_at(0), "foo.txt");
  const Tensor examples = Examples("x", {0, 1, 2, 3});
  s = bundle.RunSignature("regress_x_to_y", {{"inputs", examples}}, {"outputs"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {4, 1}, {2, 2.5, 3, 3.5});
  s = bundle.RunSignature("regress_x_to_y2", {{"inputs", examples}}, {"outputs"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {4, 1}, {3, 3.5, 4, 4.5});  // y2 = a*x + c
  s = bundle.RunSignature("classify_x_to_y", {{"inputs", examples}}, {"scores"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {4, 1}, {2, 2.5, 3, 3.5});
}

TEST(SavedModelLoadTest, HalfPlusThree) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_half_plus_three/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "VariableV2", "Assign", "RestoreV2", "ParseExample");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3}, {3.5, 4, 5.5});
  s = bundle.session->Run({{"x2:0", MakeTensor<float>(GR_FLOAT, {2}, {0, 4})}}, {"y2:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {2}, {3, 5});
  s = bundle.RunSignature("tensorflow/serving/regress", {{"inputs", Examples("x", {0, 2})}}, {"outputs"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {2, 1}, {3, 4});
}

// The counter's signatures in order (README case 4); `bundle` holds a
// counter at 0.
void CounterSignatureSequence(const SavedModelBundle& bundle) {
  auto scalar = [&](const char* sig, std::vector<std::pair<std::string, Tensor>> in) {
    std::vector<Tensor> o;
    Status st = bundle.RunSignature(sig, in, {"output"}, &o);
    EXPECT_TRUE(st.ok()) << sig << ": " << st;
    return st.ok() ? o[0].scalar<float>() : -1.0f;
  };
  EXPECT_EQ(scalar("get_counter", {}), 0.0f);
  EXPECT_EQ(scalar("incr_counter", {}), 1.0f);
  EXPECT_EQ(scalar("incr_counter", {}), 2.0f);
  EXPECT_EQ(scalar("incr_counter_by", {{"delta", Tensor::Scalar<float>(GR_FLOAT, 2.5f)}}), 4.5f);
  EXPECT_EQ(scalar("reset_counter", {}), 0.0f);
  EXPECT_EQ(scalar("get_counter", {}), 0.0f);
}

// A bundle whose variables come from the graph's `init` target instead of
// the checkpoint (README: "run target init (initial values)").
Status InitBundle(const std::string& dir, SavedModelBundle* bundle) {
  proto::SavedModel sm;
  GR_RETURN_IF_ERROR(ReadSavedModelFromDirectory(dir, &sm));
  const proto::MetaGraphDef* meta;
  GR_RETURN_IF_ERROR(FindMetaGraphDefByTags(sm, {"serve"}, &meta));
  bundle->meta_graph_def = *meta;
  bundle->source = dir;
  GR_RETURN_IF_ERROR(NewSession(Options(), &bundle->session));
  GR_RETURN_IF_ERROR(bundle->session->Create(meta->graph_def()));
  std::vector<Tensor> out;
  return bundle->session->Run({}, {}, {"init"}, &out);
}

TEST(SavedModelLoadTest, CounterInitPathAndUninitializedError) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_counter/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "VariableV2", "Assign", "AssignAdd");
  proto::SavedModel sm;
  ASSERT_TRUE(ReadSavedModelFromDirectory(dir, &sm).ok());
  auto raw = testing::CreateSession(sm.meta_graphs(0).graph_def());
  ASSERT_NE(raw, nullptr);
  std::vector<Tensor> out;
  // Before any restore or init the variable is uninitialized.
  Status s = raw->Run({}, {"counter:0"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("Attempting to use uninitialized value counter"), std::string::npos) << s;
  SavedModelBundle bundle;
  s = InitBundle(dir, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  CounterSignatureSequence(bundle);
}

TEST(SavedModelLoadTest, CounterRestorePath) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_counter/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "VariableV2", "Assign", "AssignAdd", "RestoreV2");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  CounterSignatureSequence(bundle);
}

TEST(SavedModelLoadTest, HalfPlusTwoInitPath) {
  GRAPHRT_TESTDATA(cpu, "serving/saved_model_half_plus_two_cpu/00000123");
  GRAPHRT_TESTDATA(three, "serving/saved_model_half_plus_three/00000123");
  GRAPHRT_TESTDATA(pbtxt, "tensorflow/cc/saved_model/testdata/half_plus_two_pbtxt/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(cpu);
  GRAPHRT_REQUIRE_MODEL_OPS(three);
  GRAPHRT_REQUIRE_MODEL_OPS(pbtxt);
  const Tensor x = MakeTensor<float>(GR_FLOAT, {3, 1}, {1, 2, 5});
  std::vector<Tensor> out;
  {
    SavedModelBundle bundle;
    Status s = InitBundle(cpu, &bundle);
    ASSERT_TRUE(s.ok()) << s;
    s = bundle.RunSignature("serving_default", {{"x", x}}, {"y"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ExpectFloats(out[0], {3, 1}, {2.5, 3.0, 4.5});
    s = bundle.RunSignature("regress_x2_to_y3", {{"inputs", x}}, {"outputs"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ExpectFloats(out[0], {3, 1}, {3.5, 4.0, 5.5});
    // y2 = a*x + c, fed through x (ParseExample pruned away).
    s = bundle.session->Run({{"x:0", x}}, {"y2:0"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ExpectFloats(out[0], {3, 1}, {3.5, 4.0, 5.5});
  }
  for (const std::string& dir : {three, pbtxt}) {
    SCOPED_TRACE(dir);
    SavedModelBundle bundle;
    Status s = InitBundle(dir, &bundle);
    ASSERT_TRUE(s.ok()) << s;
    const float b = dir == three ? 3.0f : 2.0f;
    s = bundle.RunSignature("serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}}, {"y"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ExpectFloats(out[0], {3}, {0.5f + b, 1 + b, 2.5f + b});
    // x2 is a real Placeholder: y2 = 0.5 * x2 + 3 in both.
    s = bundle.session->Run({{"x2:0", MakeTensor<float>(GR_FLOAT, {2}, {0, 4})}}, {"y2:0"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ExpectFloats(out[0], {2}, {3, 5});
  }
}

TEST(SavedModelLoadTest, TextSavedModelRestoredFromTheCpuCheckpoint) {
  GRAPHRT_TESTDATA(dir, "tensorflow/cc/saved_model/testdata/half_plus_two_pbtxt/00000123");
  GRAPHRT_TESTDATA(cpu, "serving/saved_model_half_plus_two_cpu/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "Variable", "Assign", "RestoreV2");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"serve"}, &bundle);  // no variables/: nothing restored
  ASSERT_TRUE(s.ok()) << s;
  std::unique_ptr<Saver> saver;
  ASSERT_TRUE(Saver::FromSaverDef(bundle.meta_graph_def.saver_def(), nullptr, SaverOptions(), &saver).ok());
  s = saver->Restore(bundle.session.get(), cpu + "/variables/variables");
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {{"x", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3}, {2.5, 3, 4.5});
  s = bundle.session->Run({{"x2:0", MakeTensor<float>(GR_FLOAT, {2}, {1, 2})}}, {"y2:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {2}, {3.5, 4});
}

TEST(SavedModelLoadTest, Tf2OnnxRegressionSavedModelUsesSave1) {
  GRAPHRT_TESTDATA(dir, "tf2onnx/models/regression/saved_model");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "VariableV2", "Assign", "RestoreV2");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(bundle.meta_graph_def.saver_def().restore_op_name(), "save_1/restore_all");
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {{"X", MakeTensor<float>(GR_FLOAT, {2}, {2, 3})}}, {"pred"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {2}, {1.4774489f, 1.6914107f});
}

TEST(SavedModelLoadTest, Tf2OnnxMetaGraphAndCheckpoint) {
  GRAPHRT_TESTDATA(dir, "tf2onnx/models/regression/checkpoint");
  GRAPHRT_REQUIRE_MODEL_OPS(dir + "/model.meta", "VariableV2", "Assign", "RestoreV2");
  const std::string prefix = LatestCheckpoint(dir);  // the state file names "model", relative
  EXPECT_EQ(prefix, dir + "/model");
  SavedModelBundle bundle;
  Status s = LoadMetaGraphAndCheckpoint(Options(), dir + "/model.meta", prefix, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.session->Run({{"X:0", MakeTensor<float>(GR_FLOAT, {1}, {1})}}, {"pred:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1}, {1.2634872f});
}

TEST(SavedModelLoadTest, RegressionModelWithTwoTags) {
  GRAPHRT_TESTDATA(dir, "rust/test_resources/regression-model");
  GRAPHRT_REQUIRE_MODEL_OPS(dir, "VariableV2", "Assign", "RestoreV2");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"train", "serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.RunSignature("tensorflow/serving/regress",
                          {{"x", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})},
                           {"y", MakeTensor<float>(GR_FLOAT, {3}, {0.4f, 0.5f, 0.6f})}},
                          {"out"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3}, {-0.8578622f, -1.7157245f, -2.5735867f});
  // The README's restored values and one GradientDescent(0.5) step: loss,
  // then w and b after `train` (float32, 1e-5).
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x:0", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})},
                                                             {"y:0", MakeTensor<float>(GR_FLOAT, {3}, {0.4f, 0.5f, 0.6f})}};
  ASSERT_TRUE(bundle.session->Run(feeds, {"w:0", "b:0", "Mean:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].data<float>()[0], -0.85786223f, 1e-6);
  EXPECT_EQ(out[1].data<float>()[0], 0.0f);
  EXPECT_NEAR(out[2].scalar<float>(), 5.5211017f, 1e-5);
  ASSERT_TRUE(bundle.session->Run(feeds, {}, {"train"}, nullptr).ok());
  ASSERT_TRUE(bundle.session->Run({}, {"w:0", "b:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].data<float>()[0], 4.2121615f, 1e-5);
  EXPECT_NEAR(out[1].data<float>()[0], 2.2157245f, 1e-5);
}

// The README's deterministic training check: from `init` (RandomUniform in
// [-1, 1)), 201 steps on y = 0.1x + 0.3 bring w to 0.1 and b to 0.3.
TEST(SavedModelLoadTest, RegressionModelTrainsFromInit) {
  GRAPHRT_TESTDATA(dir, "rust/test_resources/regression-model");
  SavedModelBundle bundle;
  Status s = LoadSavedModel(Options(), dir, {"train", "serve"}, &bundle);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(bundle.session->Run({}, {}, {"init"}, nullptr).ok());
  const std::vector<float> x = {-1, -0.5f, 0, 0.5f, 1};
  std::vector<float> y;
  for (float v : x) y.push_back(0.1f * v + 0.3f);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x:0", MakeTensor<float>(GR_FLOAT, {5}, x)},
                                                             {"y:0", MakeTensor<float>(GR_FLOAT, {5}, y)}};
  for (int step = 0; step < 201; ++step) ASSERT_TRUE(bundle.session->Run(feeds, {}, {"train"}, nullptr).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(bundle.session->Run({}, {"w:0", "b:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].data<float>()[0], 0.1f, 1e-5);
  EXPECT_NEAR(out[1].data<float>()[0], 0.3f, 1e-5);
}

TEST(SavedModelLoadTest, SessionBundleV1Checkpoint) {
  GRAPHRT_TESTDATA(dir, "serving/session_bundle/half_plus_two/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir + "/export.meta", "Variable", "Assign", "RestoreV2");
  SavedModelBundle bundle;
  Status s = LoadMetaGraphAndCheckpoint(Options(), dir + "/export.meta", dir + "/export-00000-of-00001", &bundle);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.session->Run({{"x:0", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}}, {"y:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {3}, {2.5, 3, 4.5});
  // Through the directory: the shard file found by pattern, serving_init_op run.
  SavedModelBundle from_dir;
  s = LoadSessionBundle(Options(), dir, &from_dir);
  ASSERT_TRUE(s.ok()) << s;
  s = from_dir.session->Run({{"x:0", MakeTensor<float>(GR_FLOAT, {1}, {-4})}}, {"y:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1}, {0});
}

TEST(SavedModelLoadTest, BadHalfPlusTwoLoadsButHasNoSignatures) {
  GRAPHRT_TESTDATA(dir, "serving/bad_half_plus_two/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir + "/export.meta", "Variable", "Assign", "RestoreSlice");
  // Its state file names /tmp/bad_half_plus_two/..., which does not exist.
  EXPECT_EQ(LatestCheckpoint(dir), "");
  SavedModelBundle bundle;
  Status s = LoadMetaGraphAndCheckpoint(Options(), dir + "/export.meta", dir + "/export", &bundle);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.RunSignature("serving_default", {}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("has no signatures"), std::string::npos) << s.message();
  // Its graph has TF's default names: Placeholder * Variable + Variable_1.
  s = bundle.session->Run({{"Placeholder:0", MakeTensor<float>(GR_FLOAT, {2}, {0, 2})}}, {"Add:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {2}, {2, 3});
  // The same through the SessionBundle directory (V1 file "export").
  SavedModelBundle from_dir;
  s = LoadSessionBundle(Options(), dir, &from_dir);
  ASSERT_TRUE(s.ok()) << s;
  s = from_dir.session->Run({{"Placeholder:0", MakeTensor<float>(GR_FLOAT, {1}, {4})}}, {"Add:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ExpectFloats(out[0], {1}, {4});
}

TEST(SavedModelLoadTest, MetaGraphLoadErrors) {
  GRAPHRT_TESTDATA(dir, "serving/session_bundle/half_plus_two/00000123");
  GRAPHRT_REQUIRE_MODEL_OPS(dir + "/export.meta");
  SavedModelBundle bundle;
  Status s = LoadMetaGraphAndCheckpoint(Options(), dir + "/export.meta", dir + "/no-such-checkpoint", &bundle);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("not a valid checkpoint"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("no-such-checkpoint"), std::string::npos) << s.message();
  EXPECT_EQ(bundle.session, nullptr);
  // Without a checkpoint nothing is restored: the variables read as uninitialized.
  s = LoadMetaGraphAndCheckpoint(Options(), dir + "/export.meta", "", &bundle);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = bundle.session->Run({{"x:0", MakeTensor<float>(GR_FLOAT, {1}, {1})}}, {"y:0"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("Attempting to use uninitialized value"), std::string::npos) << s;
}

}  // namespace
}  // namespace graphrt
