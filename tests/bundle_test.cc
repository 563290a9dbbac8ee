// graphrt_bundle (ops/io/bundle): TensorFlow checkpoints read and written
// without the core. Expected values come from the real TensorFlow files in
// shared/tf_testdata (their README lists them), TensorFlow's documented
// formats (tf_proto_facts.md §5, §8) and tensor_bundle_test.cc's behaviours
// (tf_behaviours.md §8, §13).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/bundle/bundle.h"
#include "test_util.h"

namespace graphrt {
namespace {

namespace bd = bundle;
using bd::TensorValue;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

std::string MakeDir() { return testing::MakeTempDir("bundle_test"); }

// A fresh prefix in a fresh directory.
std::string TempDir() { return MakeDir() + "/ckpt"; }

template <typename T>
TensorValue Pod(int dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
  TensorValue t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return t;
}
TensorValue Strings(std::vector<int64_t> dims, std::vector<std::string> v) {
  TensorValue t;
  t.dtype = bd::DT_STRING;
  t.dims = std::move(dims);
  t.strings = std::move(v);
  return t;
}
template <typename T>
std::vector<T> Values(const TensorValue& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::unique_ptr<bd::CheckpointReader> OpenOrDie(const std::string& prefix) {
  std::unique_ptr<bd::CheckpointReader> r;
  bd::Status s = bd::CheckpointReader::Open(prefix, &r);
  EXPECT_TRUE(s.ok()) << prefix << ": " << s.message;
  return r;
}

float ScalarFloat(bd::CheckpointReader* r, const std::string& name) {
  TensorValue t;
  bd::Status s = r->Lookup(name, &t);
  EXPECT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(t.dtype, bd::DT_FLOAT);
  std::vector<float> v = Values<float>(t);
  return v.size() == 1 ? v[0] : -12345.f;
}

#define SKIP_WITHOUT_SHARED(p) \
  if ((p).empty()) GTEST_SKIP() << "shared/tf_testdata not present"

// ------------------------------------------------------------- primitives

TEST(BundlePrimitives, Crc32cVectorsFromRealFiles) {
  // Standard CRC32C check value, then TensorFlow's masked CRCs of floats.
  EXPECT_EQ(bd::Crc32c("123456789", 9), 0xe3069283u);
  auto masked = [](float f) { return bd::MaskCrc(bd::Crc32c(reinterpret_cast<const char*>(&f), 4)); };
  EXPECT_EQ(masked(0.5f), 0x1f273806u);
  EXPECT_EQ(masked(2.0f), 0x4f78fd10u);
  EXPECT_EQ(masked(3.0f), 0xc382d6efu);
  EXPECT_EQ(masked(0.0f), 0x3a117ba6u);
  EXPECT_EQ(bd::UnmaskCrc(bd::MaskCrc(0xdeadbeef)), 0xdeadbeefu);
}

TEST(BundlePrimitives, OrderedCodeKeys) {
  // Real key of the scalar "Variable" in serving/bad_half_plus_two/export.
  EXPECT_EQ(bd::EncodeTensorNameSlice("Variable", bd::TensorSlice(), 0),
            std::string("\x00Variable\x00\x01\x00", 12));
  // Rank 1, full extent: (0, -1) -> 80 7f (real key of "bias" in MNISTBias.ckpt).
  bd::TensorSlice full;
  full.extents.resize(1);
  EXPECT_EQ(bd::EncodeTensorNameSlice("bias", full, 1), std::string("\x00" "bias\x00\x01\x01\x01\x80\x7f", 11));
  // SignedNumIncreasing one-byte cases 0 -> 80, 5 -> 85, -1 -> 7f, -64 -> 40,
  // and the first two-byte value 64 -> c0 40, 300 (NumIncreasing 02 01 2c for the rank).
  bd::TensorSlice s;
  s.extents = {{5, 64}};
  EXPECT_EQ(bd::EncodeTensorNameSlice("", s, 1), std::string("\x00\x00\x01\x01\x01\x85\xc0\x40", 8));
  bd::TensorSlice big;
  big.extents.resize(300);
  const std::string k = bd::EncodeTensorNameSlice("x", big, 300);
  EXPECT_EQ(k.substr(0, 7), std::string("\x00x\x00\x01\x02\x01\x2c", 7));
  // A name with 0x00 and 0xff bytes is escaped.
  EXPECT_EQ(bd::EncodeTensorNameSlice(std::string("a\x00\xff", 3), bd::TensorSlice(), 0),
            std::string("\x00" "a\x00\xff\xff\x00\x00\x01\x00", 9));
  // Large and negative values keep their order bytewise.
  std::vector<int64_t> vals = {INT64_MIN, -1000000000000LL, -65, -64, -1, 0, 1, 63, 64, 8191, 8192,
                               1LL << 40, INT64_MAX};
  std::string prev;
  for (size_t i = 0; i < vals.size(); ++i) {
    bd::TensorSlice t;
    t.extents = {{vals[i], 1}};
    std::string key = bd::EncodeTensorNameSlice("", t, 1);
    if (i) EXPECT_LT(prev, key) << vals[i];
    prev = key;
  }
}

TEST(BundlePrimitives, ShapeAndSliceParsing) {
  bool has = false;
  std::vector<int64_t> full;
  bd::TensorSlice s;
  ASSERT_TRUE(bd::ParseShapeAndSlice("10 20 0,5:-", &has, &full, &s).ok());
  EXPECT_TRUE(has);
  EXPECT_EQ(full, (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(s.DebugString(), "0,5:-");
  std::vector<int64_t> d;
  ASSERT_TRUE(bd::SliceDims(s, full, &d).ok());
  EXPECT_EQ(d, (std::vector<int64_t>{5, 20}));
  ASSERT_TRUE(bd::ParseShapeAndSlice("", &has, &full, &s).ok());
  EXPECT_FALSE(has);
  // TensorFlow's error texts (tensor_slice_test.cc).
  bd::Status st = bd::ParseShapeAndSlice("-:-", &has, &full, &s);
  EXPECT_EQ(st.code, bd::kInvalidArgument);
  EXPECT_NE(st.message.find("Need least two elements in shape_and_slice specification: -:-"), std::string::npos);
  st = bd::ParseSlice("-:-:1,3:4:5", &s);
  EXPECT_NE(st.message.find("Expected a pair of numbers or '-' but got '4': string = -:-:1,3:4:5"), std::string::npos);
  st = bd::ParseSlice("-:-1,3", &s);
  EXPECT_NE(st.message.find("Expected non-negative start and positive length but got start = -1, length = 3"),
            std::string::npos);
  st = bd::ParseShapeAndSlice("10 x -:-", &has, &full, &s);
  EXPECT_NE(st.message.find("Non numerical dimension in shape_and_slice: 10 x -:-"), std::string::npos);
  // Slice outside the shape, wrong rank.
  EXPECT_EQ(bd::ParseShapeAndSlice("10 20 8,5:-", &has, &full, &s).code, bd::kInvalidArgument);
  EXPECT_EQ(bd::ParseShapeAndSlice("10 20 -", &has, &full, &s).code, bd::kInvalidArgument);
  // A shape outside the size rule.
  EXPECT_EQ(bd::ParseShapeAndSlice("4611686018427387904 8 - -", &has, &full, &s).code, bd::kInvalidArgument);
}

// ------------------------------------------------------ real checkpoints

struct Expect {
  const char* prefix;
  std::map<std::string, float> scalars;
};

TEST(BundleRealFiles, EveryTestdataCheckpointReads) {
  const std::string root = testing::SharedPath("tf_testdata");
  SKIP_WITHOUT_SHARED(root);
  const std::vector<std::string> prefixes = {
      "serving/saved_model_half_plus_two_cpu/00000123/variables/variables",
      "serving/saved_model_half_plus_two_gpu/00000123/variables/variables",
      "serving/saved_model_half_plus_three/00000123/variables/variables",
      "serving/saved_model_counter/00000123/variables/variables",
      "rust/test_resources/regression-model/variables/variables",
      "rust/examples/regression_savedmodel/variables/variables",
      "tf2onnx/models/regression/checkpoint/model",
      "tf2onnx/models/regression/saved_model/variables/variables",
      "extra_tf1/tf2onnx/tests/models/assign/variables/variables",
      "extra_tf1/t2t/tensor2tensor/test_data/transformer_test_ckpt/model.ckpt-1",
      "extra_tf1/dl4j/src/main/resources/tf_graphs/nd4j_convert/simple_graph/data-all-1000",
      // V1
      "serving/session_bundle/half_plus_two/00000123/export",
      "serving/bad_half_plus_two/00000123/export",
      "extra_tf1/haskell/tensorflow-mnist/data/MNISTBias.ckpt",
      "extra_tf1/haskell/tensorflow-mnist/data/MNISTWts.ckpt",
  };
  // Every .index under tf_testdata is in the list above.
  size_t indexes = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(root)) {
    const std::string path = f.path().string();
    if (path.size() < 6 || path.substr(path.size() - 6) != ".index") continue;
    ++indexes;
    const std::string prefix = path.substr(root.size() + 1, path.size() - root.size() - 7);
    EXPECT_NE(std::find(prefixes.begin(), prefixes.end(), prefix), prefixes.end()) << prefix << " is not checked";
  }
  EXPECT_EQ(indexes, prefixes.size() - 4);  // the last four are V1
  for (const std::string& p : prefixes) {
    auto r = OpenOrDie(root + "/" + p);
    ASSERT_TRUE(r) << p;
    EXPECT_FALSE(r->entries().empty()) << p;
    for (const bd::EntryInfo& e : r->entries()) {
      TensorValue t;
      bd::Status s = r->Lookup(e.name, &t);
      EXPECT_TRUE(s.ok()) << p << " " << e.name << ": " << s.message;
      EXPECT_EQ(t.dims, e.dims) << p << " " << e.name;
    }
  }
}

TEST(BundleRealFiles, KnownValues) {
  const std::string root = testing::SharedPath("tf_testdata");
  SKIP_WITHOUT_SHARED(root);
  const std::vector<Expect> cases = {
      // Snappy-compressed index data block.
      {"serving/saved_model_half_plus_two_cpu/00000123/variables/variables",
       {{"a", 0.5f}, {"a2", 0.5f}, {"b", 2.0f}, {"c", 3.0f}, {"c2", 3.0f}}},
      {"serving/saved_model_half_plus_two_gpu/00000123/variables/variables", {{"a", 0.5f}, {"b", 2.0f}, {"c", 3.0f}}},
      {"serving/saved_model_half_plus_three/00000123/variables/variables", {{"a", 0.5f}, {"b", 3.0f}, {"c", 3.0f}}},
      {"serving/saved_model_counter/00000123/variables/variables", {{"counter", 0.0f}}},
      {"tf2onnx/models/regression/checkpoint/model", {{"W", 0.21396178f}, {"b", 1.0495254f}}},
      {"serving/session_bundle/half_plus_two/00000123/export", {{"a", 0.5f}, {"b", 2.0f}}},
      // Its variables keep TF 0.12's default names.
      {"serving/bad_half_plus_two/00000123/export", {{"Variable", 0.5f}, {"Variable_1", 2.0f}}},
  };
  for (const Expect& c : cases) {
    auto r = OpenOrDie(root + "/" + c.prefix);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->entries().size(), c.scalars.size()) << c.prefix;
    for (const auto& kv : c.scalars) EXPECT_EQ(ScalarFloat(r.get(), kv.first), kv.second) << c.prefix << " " << kv.first;
  }
  // The V1 session bundle through the glob pattern its Saver used.
  auto v1 = OpenOrDie(root + "/serving/session_bundle/half_plus_two/00000123/export-?????-of-00001");
  ASSERT_TRUE(v1);
  EXPECT_TRUE(v1->is_v1());
  EXPECT_EQ(ScalarFloat(v1.get(), "a"), 0.5f);

  // rust regression-model: w = [-0.85786223], b = [0.0], shape [1].
  auto rm = OpenOrDie(root + "/rust/test_resources/regression-model/variables/variables");
  TensorValue w;
  ASSERT_TRUE(rm->Lookup("w", &w).ok());
  EXPECT_EQ(w.dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(Values<float>(w), (std::vector<float>{-0.8578622341156006f}));

  // TF 2.5 object-graph checkpoint: a 531-byte DT_STRING and an int64.
  auto sm = OpenOrDie(root + "/rust/examples/regression_savedmodel/variables/variables");
  TensorValue g;
  ASSERT_TRUE(sm->Lookup("_CHECKPOINTABLE_OBJECT_GRAPH", &g).ok());
  EXPECT_EQ(g.dtype, bd::DT_STRING);
  ASSERT_EQ(g.strings.size(), 1u);
  EXPECT_EQ(g.strings[0].size(), 531u);
  TensorValue it;
  ASSERT_TRUE(sm->Lookup("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE", &it).ok());
  EXPECT_EQ(it.dtype, bd::DT_INT64);
  EXPECT_EQ(Values<int64_t>(it), (std::vector<int64_t>{0}));
  EXPECT_EQ(ScalarFloat(sm.get(), "optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE"), 0.5f);
  TensorValue w2;
  ASSERT_TRUE(sm->Lookup("w/.ATTRIBUTES/VARIABLE_VALUE", &w2).ok());
  EXPECT_EQ(Values<float>(w2), (std::vector<float>{0.20429754f}));
}

TEST(BundleRealFiles, HaskellV1AndT2tShards) {
  const std::string root = testing::SharedPath("tf_testdata");
  SKIP_WITHOUT_SHARED(root);
  auto bias = OpenOrDie(root + "/extra_tf1/haskell/tensorflow-mnist/data/MNISTBias.ckpt");
  ASSERT_TRUE(bias);
  ASSERT_EQ(bias->entries().size(), 1u);
  EXPECT_EQ(bias->entries()[0].name, "bias");
  EXPECT_EQ(bias->entries()[0].dims, (std::vector<int64_t>{10}));
  TensorValue b;
  ASSERT_TRUE(bias->Lookup("bias", &b).ok());
  EXPECT_EQ(Values<float>(b).size(), 10u);
  // A slice of a V1 tensor: elements 2..4 equal the whole tensor's.
  bd::TensorSlice s;
  s.extents = {{2, 3}};
  TensorValue part;
  ASSERT_TRUE(bias->LookupSlice("bias", s, &part).ok());
  const std::vector<float> whole = Values<float>(b);
  EXPECT_EQ(Values<float>(part), std::vector<float>(whole.begin() + 2, whole.begin() + 5));

  auto t2t = OpenOrDie(root + "/extra_tf1/t2t/tensor2tensor/test_data/transformer_test_ckpt/model.ckpt-1");
  ASSERT_TRUE(t2t);
  EXPECT_GT(t2t->entries().size(), 10u);
  const bd::EntryInfo* gs = t2t->Find("global_step");
  ASSERT_NE(gs, nullptr);
  EXPECT_EQ(gs->dtype, bd::DT_INT64);
  TensorValue step;
  ASSERT_TRUE(t2t->Lookup("global_step", &step).ok());
  EXPECT_EQ(Values<int64_t>(step), (std::vector<int64_t>{1}));  // model.ckpt-1
  // Shapes follow hparams.json: hidden_size 16, filter_size 8, 2 layers.
  for (int layer = 0; layer < 2; ++layer) {
    const std::string ffn = "transformer/body/decoder/layer_" + std::to_string(layer) + "/ffn/";
    ASSERT_NE(t2t->Find(ffn + "conv1/kernel"), nullptr) << ffn;
    EXPECT_EQ(t2t->Find(ffn + "conv1/kernel")->dims, (std::vector<int64_t>{16, 8}));
    EXPECT_EQ(t2t->Find(ffn + "conv2/kernel")->dims, (std::vector<int64_t>{8, 16}));
  }
  // Both data shards are used, and every tensor reads with its checksum.
  std::set<int> shards;
  for (const bd::EntryInfo& e : t2t->entries()) {
    shards.insert(e.shard_id);
    TensorValue t;
    ASSERT_TRUE(t2t->Lookup(e.name, &t).ok()) << e.name;
  }
  EXPECT_EQ(shards, (std::set<int>{0, 1}));
  // The Haskell MNIST weights: a [784,10] float matrix (V1).
  auto wts = OpenOrDie(root + "/extra_tf1/haskell/tensorflow-mnist/data/MNISTWts.ckpt");
  ASSERT_TRUE(wts);
  ASSERT_EQ(wts->entries().size(), 1u);
  EXPECT_EQ(wts->entries()[0].name, "weights");
  EXPECT_EQ(wts->entries()[0].dims, (std::vector<int64_t>{784, 10}));
}

// TensorFlow wrote these with uncompressed index blocks: writing the same
// tensors in the same order must give the same bytes, index and data.
TEST(BundleRealFiles, RewriteIsByteIdentical) {
  const std::string root = testing::SharedPath("tf_testdata");
  SKIP_WITHOUT_SHARED(root);
  const std::vector<std::string> prefixes = {
      "serving/saved_model_half_plus_three/00000123/variables/variables",
      "serving/saved_model_half_plus_two_gpu/00000123/variables/variables",
      "serving/saved_model_counter/00000123/variables/variables",
      "tf2onnx/models/regression/checkpoint/model",
      "rust/test_resources/regression-model/variables/variables",
      "rust/examples/regression_savedmodel/variables/variables",
  };
  const std::string dir = MakeDir();
  for (const std::string& p : prefixes) {
    auto r = OpenOrDie(root + "/" + p);
    ASSERT_TRUE(r);
    // Data-file order = the order TensorFlow added them.
    std::vector<bd::EntryInfo> order = r->entries();
    std::sort(order.begin(), order.end(), [](const bd::EntryInfo& x, const bd::EntryInfo& y) {
      return std::make_pair(x.shard_id, x.offset) < std::make_pair(y.shard_id, y.offset);
    });
    const std::string out = dir + "/" + std::to_string(&p - &prefixes[0]);
    {
      bd::BundleWriter w(out);
      for (const bd::EntryInfo& e : order) {
        TensorValue t;
        ASSERT_TRUE(r->Lookup(e.name, &t).ok());
        ASSERT_TRUE(w.Add(e.name, t).ok());
      }
      ASSERT_TRUE(w.Finish().ok());
    }
    const bool matched = ReadAll(out + ".data-00000-of-00001") == ReadAll(root + "/" + p + ".data-00000-of-00001") &&
                         ReadAll(out + ".index") == ReadAll(root + "/" + p + ".index");
    EXPECT_TRUE(matched) << p << ": rewritten bytes differ from TensorFlow's";
  }
}

// --------------------------------------------------------------- round trips

TEST(BundleWriter, EveryDtypeRoundTrips) {
  const std::string prefix = TempDir();
  std::vector<std::pair<std::string, TensorValue>> in;
  std::mt19937 rng(7);
  const std::vector<int> dtypes = {bd::DT_FLOAT,  bd::DT_DOUBLE,   bd::DT_INT32,   bd::DT_UINT8,     bd::DT_INT16,
                                   bd::DT_INT8,   bd::DT_COMPLEX64, bd::DT_INT64,  bd::DT_BOOL,      bd::DT_QINT8,
                                   bd::DT_QUINT8, bd::DT_QINT32,   bd::DT_BFLOAT16, bd::DT_QINT16,   bd::DT_QUINT16,
                                   bd::DT_UINT16, bd::DT_COMPLEX128, bd::DT_HALF,  bd::DT_UINT32,    bd::DT_UINT64};
  for (int dt : dtypes) {
    TensorValue t;
    t.dtype = dt;
    t.dims = {2, 3};
    for (int i = 0; i < 6 * bd::DTypeSize(dt); ++i)
      t.bytes.push_back(static_cast<char>(dt == bd::DT_BOOL ? (rng() & 1) : rng()));
    in.emplace_back("foo_" + bd::DTypeName(dt), t);
  }
  in.emplace_back("scalar", Pod<float>(bd::DT_FLOAT, {}, {42.f}));
  in.emplace_back("empty_a", Pod<float>(bd::DT_FLOAT, {0, 1618}, {}));
  in.emplace_back("empty_b", Pod<int32_t>(bd::DT_INT32, {16, 0, 18}, {}));
  in.emplace_back("strs", Strings({4}, {"hello", "", std::string("x\x00\x01", 3), std::string(100000, 'c')}));
  in.emplace_back("one_empty_string", Strings({1}, {""}));
  in.emplace_back("no_strings", Strings({0}, {}));
  {
    bd::BundleWriter w(prefix);
    // Any order of Add; the index lists them sorted.
    for (auto it = in.rbegin(); it != in.rend(); ++it) ASSERT_TRUE(w.Add(it->first, it->second).ok()) << it->first;
    ASSERT_TRUE(w.Finish().ok());
  }
  auto r = OpenOrDie(prefix);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->entries().size(), in.size());
  for (size_t i = 1; i < r->entries().size(); ++i) EXPECT_LT(r->entries()[i - 1].name, r->entries()[i].name);
  for (const auto& kv : in) {
    TensorValue t;
    bd::Status s = r->Lookup(kv.first, &t);
    ASSERT_TRUE(s.ok()) << kv.first << ": " << s.message;
    EXPECT_EQ(t.dtype, kv.second.dtype) << kv.first;
    EXPECT_EQ(t.dims, kv.second.dims) << kv.first;
    EXPECT_EQ(t.bytes, kv.second.bytes) << kv.first;
    EXPECT_EQ(t.strings, kv.second.strings) << kv.first;
  }
  // The header TensorFlow writes (HeaderEntry): num_shards 1, LITTLE, producer 1.
  const std::string index = ReadAll(prefix + ".index");
  EXPECT_NE(index.find(std::string("\x08\x01\x1a\x02\x08\x01", 6)), std::string::npos);
}

// As TensorFlow's writer, a prefix in a directory that does not exist yet
// (a sharded Saver's "<prefix>_temp/part") gets its directory made.
TEST(BundleWriter, MakesThePrefixDirectory) {
  const std::string prefix = MakeDir() + "/not/yet/there/ckpt";
  {
    bd::BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("v", Pod<float>(bd::DT_FLOAT, {2}, {1.f, 2.f})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  std::unique_ptr<bd::CheckpointReader> r;
  ASSERT_TRUE(bd::CheckpointReader::Open(prefix, &r).ok());
  TensorValue v;
  ASSERT_TRUE(r->Lookup("v", &v).ok());
  EXPECT_EQ(v.bytes.size(), 8u);
}

TEST(BundleWriter, DirectoryStructureAndErrors) {
  const std::string prefix = TempDir();
  {
    bd::BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("foo", Pod<float>(bd::DT_FLOAT, {1}, {1.f})).ok());
    bd::Status s = w.Add("foo", Pod<float>(bd::DT_FLOAT, {1}, {2.f}));
    EXPECT_EQ(s.code, bd::kInvalidArgument);
    EXPECT_NE(s.message.find("Adding duplicate key: foo"), std::string::npos);
    EXPECT_FALSE(w.Finish().ok());  // the writer is failed
    EXPECT_FALSE(std::ifstream(prefix + ".index").good());
    // A value that does not match its shape.
    bd::BundleWriter w2(prefix);
    EXPECT_EQ(w2.Add("x", Pod<float>(bd::DT_FLOAT, {3}, {1.f})).code, bd::kInvalidArgument);
  }
  // Finish twice.
  bd::BundleWriter w3(prefix);
  ASSERT_TRUE(w3.Add("x", Pod<float>(bd::DT_FLOAT, {1}, {1.f})).ok());
  ASSERT_TRUE(w3.Finish().ok());
  EXPECT_FALSE(w3.Finish().ok());
  EXPECT_TRUE(std::ifstream(prefix + ".index").good());
  EXPECT_TRUE(std::ifstream(prefix + ".data-00000-of-00001").good());
  // No temporaries left behind.
  const std::string dir = prefix.substr(0, prefix.rfind('/'));
  FILE* p = popen(("ls " + dir + " | grep -c tempstate").c_str(), "r");
  char buf[16] = {0};
  fgets(buf, sizeof(buf), p);
  pclose(p);
  EXPECT_EQ(std::string(buf), "0\n");
}

TEST(BundleReader, MissingPrefixAndKey) {
  const std::string prefix = TempDir();
  std::unique_ptr<bd::CheckpointReader> r;
  bd::Status s = bd::CheckpointReader::Open(prefix, &r);
  EXPECT_EQ(s.code, bd::kNotFound);
  EXPECT_NE(s.message.find(prefix), std::string::npos);
  {
    bd::BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("w", Pod<float>(bd::DT_FLOAT, {1}, {1.f})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  r = OpenOrDie(prefix);
  TensorValue t;
  s = r->Lookup("nope", &t);
  EXPECT_EQ(s.code, bd::kNotFound);
  EXPECT_NE(s.message.find("Key nope not found in checkpoint " + prefix), std::string::npos) << s.message;
}

// ------------------------------------------------------------ corruption

class BundleCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = TempDir();
    bd::BundleWriter w(prefix_);
    ASSERT_TRUE(w.Add("floats", Pod<float>(bd::DT_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6})).ok());
    ASSERT_TRUE(w.Add("strs", Strings({3}, {"hello", "", "world!"})).ok());
    ASSERT_TRUE(w.Finish().ok());
    data_ = ReadAll(prefix_ + ".data-00000-of-00001");
    ASSERT_EQ(data_.size(), 24u + 3 + 4 + 11);
  }
  bd::Status LookupAfter(const std::string& data, const std::string& name) {
    WriteAll(prefix_ + ".data-00000-of-00001", data);
    std::unique_ptr<bd::CheckpointReader> r;
    bd::Status s = bd::CheckpointReader::Open(prefix_, &r);
    if (!s.ok()) return s;
    TensorValue t;
    return r->Lookup(name, &t);
  }
  std::string prefix_, data_;
};

TEST_F(BundleCorruption, FlippedFloatByteIsDataLoss) {
  for (size_t i = 0; i < 24; ++i) {
    std::string d = data_;
    d[i] ^= 0x20;
    bd::Status s = LookupAfter(d, "floats");
    EXPECT_EQ(s.code, bd::kDataLoss) << i;
    EXPECT_NE(s.message.find("Checksum does not match"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("floats"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find(prefix_ + ".data-00000-of-00001"), std::string::npos) << s.message;
  }
  EXPECT_TRUE(LookupAfter(data_, "floats").ok());
}

TEST_F(BundleCorruption, FlippedStringBytes) {
  // Lengths area: varints at 24..26, then the masked length CRC.
  std::string d = data_;
  d[24] ^= 0x01;
  bd::Status s = LookupAfter(d, "strs");
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("length checksum does not match"), std::string::npos) << s.message;
  d = data_;
  d[data_.size() - 2] ^= 0x01;  // a string byte
  s = LookupAfter(d, "strs");
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("Checksum does not match"), std::string::npos) << s.message;
}

TEST_F(BundleCorruption, TruncatedDataFile) {
  bd::Status s = LookupAfter(data_.substr(0, data_.size() - 1), "strs");
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("strs"), std::string::npos) << s.message;
  s = LookupAfter(data_.substr(0, 23), "floats");
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("Requested 24 bytes but read 23 bytes"), std::string::npos) << s.message;
}

TEST_F(BundleCorruption, BadIndexFiles) {
  const std::string index = ReadAll(prefix_ + ".index");
  std::unique_ptr<bd::CheckpointReader> r;
  // Not an sstable.
  WriteAll(prefix_ + ".index", std::string(100, 'x'));
  bd::Status s = bd::CheckpointReader::Open(prefix_, &r);
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("not an sstable (bad magic number)"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find(prefix_ + ".index"), std::string::npos) << s.message;
  // Every truncation and every single flipped byte: a clean error or a
  // reader whose lookups fail cleanly, never a crash.
  for (size_t n = 0; n < index.size(); ++n) {
    WriteAll(prefix_ + ".index", index.substr(0, n));
    EXPECT_FALSE(bd::CheckpointReader::Open(prefix_, &r).ok()) << n;
  }
  int failures = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    std::string b = index;
    b[i] ^= 0x41;
    WriteAll(prefix_ + ".index", b);
    s = bd::CheckpointReader::Open(prefix_, &r);
    if (!s.ok()) {
      ++failures;
      EXPECT_TRUE(s.code == bd::kDataLoss || s.code == bd::kInvalidArgument || s.code == bd::kNotFound) << i << s.message;
      continue;
    }
    for (const auto& e : r->entries()) {
      TensorValue t;
      (void)r->Lookup(e.name, &t);
    }
  }
  EXPECT_GT(failures, 0);
}

// Hand-written protobuf bytes (tf_proto_facts §4): entries a broken or
// hostile writer could produce.
std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string Field(int num, uint64_t v) { return Varint(static_cast<uint64_t>(num) << 3) + Varint(v); }
std::string Bytes(int num, const std::string& b) {
  return Varint((static_cast<uint64_t>(num) << 3) | 2) + Varint(b.size()) + b;
}
std::string Shape(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += Bytes(2, d ? Field(1, static_cast<uint64_t>(d)) : std::string());
  return s;
}
std::string Entry(int dtype, const std::vector<int64_t>& dims, int shard, int64_t offset, int64_t size, uint32_t crc) {
  std::string e = Field(1, static_cast<uint64_t>(dtype)) + Bytes(2, Shape(dims));
  if (shard) e += Field(3, static_cast<uint64_t>(shard));
  if (offset) e += Field(4, static_cast<uint64_t>(offset));
  if (size) e += Field(5, static_cast<uint64_t>(size));
  e += std::string("\x35", 1) + std::string(reinterpret_cast<const char*>(&crc), 4);
  return e;
}
std::string Header(const std::string& version, int num_shards = 1) {
  return Field(1, static_cast<uint64_t>(num_shards)) + Bytes(3, version);
}

bd::Status OpenHandMade(const std::string& header, const std::string& key, const std::string& entry,
                        const std::string& data, std::unique_ptr<bd::CheckpointReader>* r) {
  std::string table;
  bd::Status s = bd::BuildIndexTable({{"", header}, {key, entry}}, &table);
  if (!s.ok()) return s;
  return bd::CheckpointReader::OpenV2FromMemory(table, {data}, r);
}

TEST(BundleHostile, EntryShapesAndSizes) {
  const std::string v1 = Field(1, 1);
  const float one = 1.f;
  const uint32_t crc = bd::MaskCrc(bd::Crc32c(reinterpret_cast<const char*>(&one), 4));
  const std::string data(reinterpret_cast<const char*>(&one), 4);
  std::unique_ptr<bd::CheckpointReader> r;
  TensorValue t;
  // The hand-made entry itself is right: it reads.
  ASSERT_TRUE(OpenHandMade(Header(v1), "t", Entry(bd::DT_FLOAT, {1}, 0, 0, 4, crc), data, &r).ok());
  ASSERT_TRUE(r->Lookup("t", &t).ok());
  EXPECT_EQ(Values<float>(t), std::vector<float>{1.f});
  // A shape past 2^58 elements and a negative dim: refused when opening.
  bd::Status s = OpenHandMade(Header(v1), "t", Entry(bd::DT_FLOAT, {1LL << 40, 1LL << 40}, 0, 0, 4, crc), data, &r);
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("tensor t"), std::string::npos) << s.message;
  s = OpenHandMade(Header(v1), "t", Entry(bd::DT_FLOAT, {static_cast<int64_t>(-1)}, 0, 0, 4, crc), data, &r);
  EXPECT_EQ(s.code, bd::kDataLoss);
  // A size that disagrees with the shape, a size past the file, an offset
  // past the file, a huge string count, a shard that does not exist.
  struct Bad {
    std::string entry;
    std::string message;
  } bad[] = {
      {Entry(bd::DT_FLOAT, {2}, 0, 0, 4, crc), "needs 8"},
      {Entry(bd::DT_FLOAT, {1LL << 50}, 0, 0, 4, crc), "needs"},
      {Entry(bd::DT_FLOAT, {1}, 0, 0, 1LL << 60, crc), "Requested 1152921504606846976 bytes but read 4 bytes"},
      {Entry(bd::DT_FLOAT, {1}, 0, 1LL << 40, 4, crc), "truncated"},
      {Entry(bd::DT_STRING, {1LL << 50}, 0, 0, 4, crc), "too short"},
      {Entry(bd::DT_FLOAT, {1}, 7, 0, 4, crc), "shard_id 7"},
      {Entry(21, {1}, 0, 0, 4, crc), "variant"},
  };
  for (const Bad& b : bad) {
    ASSERT_TRUE(OpenHandMade(Header(v1), "t", b.entry, data, &r).ok());
    s = r->Lookup("t", &t);
    EXPECT_FALSE(s.ok()) << b.message;
    EXPECT_NE(s.message.find(b.message), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("tensor t"), std::string::npos) << s.message;
  }
}

TEST(BundleHostile, VersionChecks) {
  const std::string e = Entry(bd::DT_FLOAT, {}, 0, 0, 0, 0);
  std::unique_ptr<bd::CheckpointReader> r;
  bd::Status s = OpenHandMade(Header(Field(1, 1) + Field(2, 2)), "t", e, "", &r);
  EXPECT_EQ(s.code, bd::kInvalidArgument);
  EXPECT_NE(s.message.find("Checkpoint min consumer version 2 above current version 1 for TensorFlow"),
            std::string::npos) << s.message;
  s = OpenHandMade(Header(Field(1, static_cast<uint64_t>(-1))), "t", e, "", &r);
  EXPECT_NE(s.message.find("Checkpoint producer version -1 below min producer 0 supported by TensorFlow"),
            std::string::npos) << s.message;
  s = OpenHandMade(Header(Field(1, 1) + Field(3, 1)), "t", e, "", &r);
  EXPECT_NE(s.message.find("Checkpoint disallows consumer version 1.  Please upgrade TensorFlow: this version is "
                           "likely buggy."),
            std::string::npos) << s.message;
  // No header at all; zero shards.
  std::string table;
  ASSERT_TRUE(bd::BuildIndexTable({{"t", e}}, &table).ok());
  EXPECT_EQ(bd::CheckpointReader::OpenV2FromMemory(table, {}, &r).code, bd::kDataLoss);
  EXPECT_EQ(OpenHandMade(Header(Field(1, 1), 0), "t", e, "", &r).code, bd::kDataLoss);
}

TEST(BundleHostile, BigEndianBundleIsByteSwapped) {
  // A header saying BIG with big-endian data: values come back right.
  const char be[4] = {0x40, 0x49, 0x0f, static_cast<char>(0xdb)};  // 3.14159274f big-endian
  const std::string data(be, 4);
  const uint32_t crc = bd::MaskCrc(bd::Crc32c(data.data(), 4));
  std::unique_ptr<bd::CheckpointReader> r;
  ASSERT_TRUE(OpenHandMade(Field(1, 1) + Field(2, 1) + Bytes(3, Field(1, 1)), "pi",
                           Entry(bd::DT_FLOAT, {}, 0, 0, 4, crc), data, &r)
                  .ok());
  TensorValue t;
  ASSERT_TRUE(r->Lookup("pi", &t).ok());
  EXPECT_EQ(Values<float>(t), std::vector<float>{3.14159274f});
}

// ------------------------------------------------------------------ slices

TEST(BundleSlices, PartitionedVariables) {
  // [5,10] saved as slices -:0,1 (zeros) and -:1,9 (ones).
  const std::string prefix = TempDir();
  {
    bd::BundleWriter w(prefix);
    bd::TensorSlice a, b;
    ASSERT_TRUE(bd::ParseSlice("-:0,1", &a).ok());
    ASSERT_TRUE(bd::ParseSlice("-:1,9", &b).ok());
    ASSERT_TRUE(w.AddSlice("foo", {5, 10}, a, Pod<float>(bd::DT_FLOAT, {5, 1}, std::vector<float>(5, 0.f))).ok());
    ASSERT_TRUE(w.AddSlice("foo", {5, 10}, b, Pod<float>(bd::DT_FLOAT, {5, 9}, std::vector<float>(45, 1.f))).ok());
    // Overlapping slices are refused.
    bd::TensorSlice c;
    ASSERT_TRUE(bd::ParseSlice("0,1:0,2", &c).ok());
    EXPECT_EQ(w.AddSlice("foo", {5, 10}, c, Pod<float>(bd::DT_FLOAT, {1, 2}, {0.f, 0.f})).code, bd::kInvalidArgument);
  }
  {
    bd::BundleWriter w(prefix);
    bd::TensorSlice a, b;
    ASSERT_TRUE(bd::ParseSlice("-:0,1", &a).ok());
    ASSERT_TRUE(bd::ParseSlice("-:1,9", &b).ok());
    ASSERT_TRUE(w.AddSlice("foo", {5, 10}, a, Pod<float>(bd::DT_FLOAT, {5, 1}, std::vector<float>(5, 0.f))).ok());
    ASSERT_TRUE(w.AddSlice("foo", {5, 10}, b, Pod<float>(bd::DT_FLOAT, {5, 9}, std::vector<float>(45, 1.f))).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto r = OpenOrDie(prefix);
  ASSERT_EQ(r->entries().size(), 1u);
  EXPECT_EQ(r->entries()[0].dims, (std::vector<int64_t>{5, 10}));
  EXPECT_EQ(r->entries()[0].slices.size(), 2u);
  TensorValue full;
  ASSERT_TRUE(r->Lookup("foo", &full).ok());
  std::vector<float> want(50);
  for (int i = 0; i < 50; ++i) want[static_cast<size_t>(i)] = i % 10 == 0 ? 0.f : 1.f;
  EXPECT_EQ(Values<float>(full), want);
  // Sub-slices across the stored boundary.
  bd::TensorSlice s;
  ASSERT_TRUE(bd::ParseSlice("-:0,2", &s).ok());
  TensorValue part;
  ASSERT_TRUE(r->LookupSlice("foo", s, &part).ok());
  EXPECT_EQ(part.dims, (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(Values<float>(part), (std::vector<float>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1}));
  ASSERT_TRUE(bd::ParseSlice("1,2:2,2", &s).ok());
  ASSERT_TRUE(r->LookupSlice("foo", s, &part).ok());
  EXPECT_EQ(Values<float>(part), std::vector<float>(4, 1.f));
  // A slice outside the shape.
  ASSERT_TRUE(bd::ParseSlice("-:5,6", &s).ok());
  EXPECT_EQ(r->LookupSlice("foo", s, &part).code, bd::kInvalidArgument);
}

TEST(BundleSlices, UncoveredSliceAndEquivalentSlices) {
  const std::string prefix = TempDir();
  {
    bd::BundleWriter w(prefix);
    bd::TensorSlice a;
    ASSERT_TRUE(bd::ParseSlice("0,2:-", &a).ok());
    ASSERT_TRUE(w.AddSlice("half", {4, 3}, a, Pod<int32_t>(bd::DT_INT32, {2, 3}, {1, 2, 3, 4, 5, 6})).ok());
    std::vector<float> v(50);
    for (int i = 0; i < 50; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
    ASSERT_TRUE(w.Add("whole", Pod<float>(bd::DT_FLOAT, {5, 10}, v)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto r = OpenOrDie(prefix);
  TensorValue t;
  bd::Status s = r->Lookup("half", &t);
  EXPECT_EQ(s.code, bd::kNotFound);
  EXPECT_NE(s.message.find("do not cover"), std::string::npos) << s.message;
  bd::TensorSlice top;
  ASSERT_TRUE(bd::ParseSlice("0,1:-", &top).ok());
  ASSERT_TRUE(r->LookupSlice("half", top, &t).ok());
  EXPECT_EQ(Values<int32_t>(t), (std::vector<int32_t>{1, 2, 3}));
  // -:- == 0,5:0,10 on a whole tensor.
  bd::TensorSlice e1, e2;
  ASSERT_TRUE(bd::ParseSlice("-:-", &e1).ok());
  ASSERT_TRUE(bd::ParseSlice("0,5:0,10", &e2).ok());
  TensorValue t1, t2;
  ASSERT_TRUE(r->LookupSlice("whole", e1, &t1).ok());
  ASSERT_TRUE(r->LookupSlice("whole", e2, &t2).ok());
  EXPECT_EQ(t1.bytes, t2.bytes);
  EXPECT_EQ(t1.dims, (std::vector<int64_t>{5, 10}));
  bd::TensorSlice mid;
  ASSERT_TRUE(bd::ParseSlice("1,2:3,2", &mid).ok());
  ASSERT_TRUE(r->LookupSlice("whole", mid, &t).ok());
  EXPECT_EQ(Values<float>(t), (std::vector<float>{13, 14, 23, 24}));
}

// --------------------------------------------------------------------- V1

TEST(BundleV1, WriteAndReadSlicesAndStrings) {
  const std::string dir = MakeDir();
  std::vector<bd::V1Item> items(3);
  items[0].name = "v";
  items[0].full_dims = {2, 2};
  items[0].value = Pod<double>(bd::DT_DOUBLE, {2, 2}, {1.5, 2.5, 3.5, 4.5});
  items[1].name = "s";
  items[1].full_dims = {2};
  items[1].value = Strings({2}, {"ab", std::string("\x00\xff", 2)});
  items[2].name = "p";
  items[2].full_dims = {4, 2};
  ASSERT_TRUE(bd::ParseSlice("2,2:-", &items[2].slice).ok());
  items[2].value = Pod<int64_t>(bd::DT_INT64, {2, 2}, {5, 6, 7, 8});
  ASSERT_TRUE(bd::WriteV1Checkpoint(dir + "/ckpt", items).ok());
  auto r = OpenOrDie(dir + "/ckpt");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->is_v1());
  ASSERT_EQ(r->entries().size(), 3u);
  TensorValue t;
  ASSERT_TRUE(r->Lookup("v", &t).ok());
  EXPECT_EQ(Values<double>(t), (std::vector<double>{1.5, 2.5, 3.5, 4.5}));
  ASSERT_TRUE(r->Lookup("s", &t).ok());
  EXPECT_EQ(t.strings, (std::vector<std::string>{"ab", std::string("\x00\xff", 2)}));
  EXPECT_EQ(r->Lookup("p", &t).code, bd::kNotFound);  // only rows 2..3 stored
  bd::TensorSlice s;
  ASSERT_TRUE(bd::ParseSlice("3,1:-", &s).ok());
  ASSERT_TRUE(r->LookupSlice("p", s, &t).ok());
  EXPECT_EQ(Values<int64_t>(t), (std::vector<int64_t>{7, 8}));
  // The V1 glob form of a sharded name.
  ASSERT_TRUE(bd::WriteV1Checkpoint(dir + "/sh-00000-of-00001", items).ok());
  auto g = OpenOrDie(dir + "/sh");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->entries().size(), 3u);
}

TEST(BundleV1, FlippedBytesNeverCrash) {
  const std::string root = testing::SharedPath("tf_testdata");
  SKIP_WITHOUT_SHARED(root);
  const std::string src = ReadAll(root + "/serving/bad_half_plus_two/00000123/export");
  const std::string dir = MakeDir();
  int refused = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    std::string b = src;
    b[i] ^= 0x10;
    WriteAll(dir + "/export", b);
    std::unique_ptr<bd::CheckpointReader> r;
    bd::Status s = bd::CheckpointReader::OpenV1(dir + "/export", &r);
    if (!s.ok()) {
      ++refused;
      continue;
    }
    for (const auto& e : r->entries()) {
      TensorValue t;
      if (!r->Lookup(e.name, &t).ok()) ++refused;
    }
  }
  EXPECT_GT(refused, static_cast<int>(src.size()) / 2);
}

// ------------------------------------------------------------------ merge

TEST(BundleMerge, MergesShardsAndCleansUp) {
  const std::string dir = MakeDir();
  mkdir((dir + "/tmp_a").c_str(), 0755);
  mkdir((dir + "/tmp_b").c_str(), 0755);
  {
    bd::BundleWriter w(dir + "/tmp_a/part-00000-of-00002");
    ASSERT_TRUE(w.Add("foo_000", Pod<float>(bd::DT_FLOAT, {1}, {0.f})).ok());
    ASSERT_TRUE(w.Add("foo_003", Pod<float>(bd::DT_FLOAT, {1}, {3.f})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  {
    bd::BundleWriter w(dir + "/tmp_b/part-00001-of-00002");
    ASSERT_TRUE(w.Add("foo_001", Pod<float>(bd::DT_FLOAT, {1}, {1.f})).ok());
    ASSERT_TRUE(w.Add("bar", Strings({}, {"s"})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  ASSERT_TRUE(bd::MergeBundles({dir + "/tmp_a/part-00000-of-00002", dir + "/tmp_b/part-00001-of-00002"}, dir + "/merged",
                               true, false)
                  .ok());
  EXPECT_TRUE(std::ifstream(dir + "/merged.index").good());
  EXPECT_TRUE(std::ifstream(dir + "/merged.data-00000-of-00002").good());
  EXPECT_TRUE(std::ifstream(dir + "/merged.data-00001-of-00002").good());
  struct stat st;
  EXPECT_NE(stat((dir + "/tmp_a").c_str(), &st), 0);  // emptied and removed
  EXPECT_NE(stat((dir + "/tmp_b").c_str(), &st), 0);
  auto r = OpenOrDie(dir + "/merged");
  ASSERT_EQ(r->entries().size(), 4u);
  EXPECT_EQ(r->entries()[0].name, "bar");
  EXPECT_EQ(ScalarFloat(r.get(), "foo_003"), 3.f);
  EXPECT_EQ(ScalarFloat(r.get(), "foo_001"), 1.f);
  // Duplicate keys across inputs are refused.
  {
    bd::BundleWriter w(dir + "/x");
    ASSERT_TRUE(w.Add("k", Pod<float>(bd::DT_FLOAT, {}, {0.f})).ok());
    ASSERT_TRUE(w.Finish().ok());
    bd::BundleWriter w2(dir + "/y");
    ASSERT_TRUE(w2.Add("k", Pod<float>(bd::DT_FLOAT, {}, {0.f})).ok());
    ASSERT_TRUE(w2.Finish().ok());
  }
  bd::Status s = bd::MergeBundles({dir + "/x", dir + "/y"}, dir + "/z", false, false);
  EXPECT_EQ(s.code, bd::kInvalidArgument);
  EXPECT_NE(s.message.find("Duplicate tensor keyed by k"), std::string::npos) << s.message;
  // Missing inputs: NotFound, or skipped with allow_missing_files.
  EXPECT_EQ(bd::MergeBundles({dir + "/nothing"}, dir + "/z", false, false).code, bd::kNotFound);
  EXPECT_TRUE(bd::MergeBundles({dir + "/nothing", dir + "/x"}, dir + "/z", false, true).ok());
  EXPECT_EQ(ScalarFloat(OpenOrDie(dir + "/z").get(), "k"), 0.f);
}

// ------------------------------------------------------------ crash safety

// A child saves checkpoints ckpt-1, ckpt-2, ... (each holding its own
// number in every tensor) as fast as it can and is SIGKILLed at a random
// moment; the newest prefix with an index always restores completely with
// the right values, and so does every older one.
TEST(BundleCrashSafety, KilledWriterNeverLeavesABrokenCheckpoint) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 25; ++round) {
    const std::string dir = MakeDir();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<float> big(64 * 1024);
      for (int n = 1;; ++n) {
        std::fill(big.begin(), big.end(), static_cast<float>(n));
        bd::BundleWriter w(dir + "/ckpt-" + std::to_string(n));
        w.Add("big", Pod<float>(bd::DT_FLOAT, {static_cast<int64_t>(big.size())}, big));
        w.Add("n", Pod<int32_t>(bd::DT_INT32, {}, {n}));
        w.Add("s", Strings({2}, {std::to_string(n), "x"}));
        if (!w.Finish().ok()) _exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 40000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    int newest = 0;
    for (int n = 1; n < 100000; ++n) {
      if (!std::ifstream(dir + "/ckpt-" + std::to_string(n) + ".index").good()) break;
      newest = n;
    }
    for (int n = 1; n <= newest; ++n) {
      const std::string p = dir + "/ckpt-" + std::to_string(n);
      auto r = OpenOrDie(p);
      ASSERT_TRUE(r) << p;
      TensorValue t;
      ASSERT_TRUE(r->Lookup("n", &t).ok()) << p;
      EXPECT_EQ(Values<int32_t>(t), std::vector<int32_t>{n});
      ASSERT_TRUE(r->Lookup("big", &t).ok()) << p;
      EXPECT_EQ(Values<float>(t)[1000], static_cast<float>(n));
      ASSERT_TRUE(r->Lookup("s", &t).ok()) << p;
      EXPECT_EQ(t.strings[0], std::to_string(n));
    }
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace graphrt

namespace graphrt {
namespace {

TEST(BundleZeroCopy, RawAddAndLookupInto) {
  const std::string prefix = TempDir();
  const std::vector<double> v = {1.25, -2.5, 1e300};
  {
    bd::BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("raw", bd::DT_DOUBLE, {3}, reinterpret_cast<const char*>(v.data()), 24).ok());
    // The byte count must match the shape; strings have no raw form.
    EXPECT_EQ(w.Add("bad", bd::DT_DOUBLE, {4}, reinterpret_cast<const char*>(v.data()), 24).code, bd::kInvalidArgument);
  }
  {
    bd::BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("raw", bd::DT_DOUBLE, {3}, reinterpret_cast<const char*>(v.data()), 24).ok());
    bd::TensorSlice s;
    ASSERT_TRUE(bd::ParseSlice("1,1", &s).ok());
    ASSERT_TRUE(w.AddSlice("part", {2}, s, Pod<int32_t>(bd::DT_INT32, {1}, {7})).ok());
    ASSERT_TRUE(bd::ParseSlice("0,1", &s).ok());
    ASSERT_TRUE(w.AddSlice("part", {2}, s, Pod<int32_t>(bd::DT_INT32, {1}, {6})).ok());
    ASSERT_TRUE(w.Add("str", Strings({}, {"s"})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto r = OpenOrDie(prefix);
  std::vector<double> got(3);
  std::vector<int64_t> seen;
  auto alloc = [&](const std::vector<int64_t>& dims, char** dst) {
    seen = dims;
    *dst = reinterpret_cast<char*>(got.data());
    return bd::Status();
  };
  ASSERT_TRUE(r->LookupInto("raw", alloc).ok());
  EXPECT_EQ(got, v);
  EXPECT_EQ(seen, (std::vector<int64_t>{3}));
  // Assembled from slices, then copied into the buffer.
  std::vector<int32_t> parts(2);
  ASSERT_TRUE(r->LookupInto("part", [&](const std::vector<int64_t>& dims, char** dst) {
                   EXPECT_EQ(dims, (std::vector<int64_t>{2}));
                   *dst = reinterpret_cast<char*>(parts.data());
                   return bd::Status();
                 }).ok());
  EXPECT_EQ(parts, (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(r->LookupInto("str", alloc).code, bd::kInvalidArgument);
  EXPECT_EQ(r->LookupInto("none", alloc).code, bd::kNotFound);
  // An allocation failure is passed through.
  EXPECT_EQ(r->LookupInto("raw", [](const std::vector<int64_t>&, char**) {
               return bd::MakeStatus(bd::kOutOfRange, "no memory");
             }).code,
            bd::kOutOfRange);
}

}  // namespace
}  // namespace graphrt

namespace graphrt {
namespace {

// TensorFlow's V1 writer (Save / SaveSlices) wrote these; the same tensors
// through WriteV1Checkpoint give the same bytes. (The Haskell MNIST files
// predate the `versions` field, so they differ by exactly that.)
TEST(BundleV1, RewriteIsByteIdentical) {
  const std::string root = testing::SharedPath("tf_testdata");
  SKIP_WITHOUT_SHARED(root);
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"serving/bad_half_plus_two/00000123/export", {"Variable", "Variable_1"}},
      {"serving/session_bundle/half_plus_two/00000123/export-00000-of-00001", {"a", "b"}},
  };
  const std::string dir = MakeDir();
  for (const auto& [file, names] : files) {
    auto r = OpenOrDie(root + "/" + file);
    ASSERT_TRUE(r);
    std::vector<bd::V1Item> items;
    for (const std::string& n : names) {
      bd::V1Item it;
      it.name = n;
      it.full_dims = r->Find(n)->dims;
      ASSERT_TRUE(r->Lookup(n, &it.value).ok());
      items.push_back(it);
    }
    ASSERT_TRUE(bd::WriteV1Checkpoint(dir + "/out", items).ok());
    EXPECT_EQ(ReadAll(dir + "/out"), ReadAll(root + "/" + file)) << file;
  }
}

}  // namespace
}  // namespace graphrt

// --------------------------------------------------- overwriting a prefix

namespace graphrt {
namespace {

constexpr int64_t kBigElems = 16384;

// One checkpoint "version v": every tensor holds v (bytes computed here, so
// a read-back compares bit for bit). Shards: 1 = one BundleWriter at
// `prefix`; 2 = two part bundles in <prefix>_tmp merged into `prefix`, as a
// sharded Saver does. No gtest asserts: it also runs in killed children.
bool SaveVersion(const std::string& prefix, int v, int shards, const std::function<void()>& before_merge = {}) {
  const std::vector<float> big(kBigElems, static_cast<float>(v) + 0.5f);
  auto add_first = [&](bd::BundleWriter* w) {
    return w->Add("big", bd::DT_FLOAT, {kBigElems}, reinterpret_cast<const char*>(big.data()), big.size() * 4).ok() &&
           w->Add("n", Pod<int32_t>(bd::DT_INT32, {}, {v})).ok();
  };
  auto add_second = [&](bd::BundleWriter* w) {
    return w->Add("s", Strings({2}, {"v" + std::to_string(v), std::string(100 * v, 'x')})).ok();
  };
  if (shards == 1) {
    bd::BundleWriter w(prefix);
    return add_first(&w) && add_second(&w) && w.Finish().ok();
  }
  const std::string tmp = prefix + "_tmp";
  const std::string a = tmp + "/part-00000-of-00002", b = tmp + "/part-00001-of-00002";
  {
    bd::BundleWriter w(a);
    if (!add_first(&w) || !w.Finish().ok()) return false;
  }
  {
    bd::BundleWriter w(b);
    if (!add_second(&w) || !w.Finish().ok()) return false;
  }
  if (before_merge) before_merge();
  return bd::MergeBundles({a, b}, prefix, true, false).ok();
}

// The version every tensor of `prefix` holds, bit for bit; -1 (and *why)
// when it does not read or its tensors disagree.
int ReadVersion(const std::string& prefix, std::string* why) {
  std::unique_ptr<bd::CheckpointReader> r;
  bd::Status s = bd::CheckpointReader::Open(prefix, &r);
  if (!s.ok()) return *why = s.message, -1;
  TensorValue n, big, str;
  for (auto [name, t] : {std::pair<const char*, TensorValue*>{"n", &n}, {"big", &big}, {"s", &str}}) {
    s = r->Lookup(name, t);
    if (!s.ok()) return *why = s.message, -1;
  }
  if (n.bytes.size() != 4) return *why = "n has " + std::to_string(n.bytes.size()) + " bytes", -1;
  const int v = Values<int32_t>(n)[0];
  const std::vector<float> want(kBigElems, static_cast<float>(v) + 0.5f);
  if (big.bytes != std::string(reinterpret_cast<const char*>(want.data()), want.size() * 4))
    return *why = "big does not hold version " + std::to_string(v), -1;
  if (str.strings != std::vector<std::string>{"v" + std::to_string(v), std::string(100 * v, 'x')})
    return *why = "s does not hold version " + std::to_string(v), -1;
  return v;
}

std::set<std::string> DirNames(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// Every file step of an overwrite (each write, fsync, rename, unlink), in
// turn: a child saves version 2 over version 1 and is SIGKILLed just before
// that step. The prefix then reads as version 1 or version 2 exactly, and
// the next save of it completes and leaves only the checkpoint's files.
// (Merged: the steps of the merge; before it only the parts are written.)
void KillAtEveryStep(int shards) {
  std::vector<std::string> steps;
  size_t first = 0;
  {
    const std::string probe = TempDir();
    ASSERT_TRUE(SaveVersion(probe, 1, shards));
    bd::SetFileStepHookForTesting([&](uint64_t, const char* what) { steps.push_back(what); });
    const bool ok = SaveVersion(probe, 2, shards, [&] { first = steps.size() - 1; });
    bd::SetFileStepHookForTesting(nullptr);
    ASSERT_TRUE(ok);
  }
  ASSERT_GE(steps.size() - first, 12u);
  int saw_old = 0, saw_new = 0;
  for (size_t k = first; k <= steps.size(); ++k) {
    const std::string dir = MakeDir();
    const std::string prefix = dir + "/model";
    ASSERT_TRUE(SaveVersion(prefix, 1, shards));
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      size_t seen = 0;
      bd::SetFileStepHookForTesting([&](uint64_t, const char*) {
        if (seen++ == k) ::raise(SIGKILL);
      });
      _exit(SaveVersion(prefix, 2, shards) ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    const std::string at = k < steps.size() ? "killed before step " + std::to_string(k) + " (" + steps[k] + ")"
                                            : "not killed";
    if (k < steps.size()) {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << at;
    } else {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << at;
    }
    std::string why;
    const int v = ReadVersion(prefix, &why);
    EXPECT_TRUE(v == 1 || v == 2) << at << ": " << why;
    saw_old += v == 1;
    saw_new += v == 2;
    if (k == steps.size()) {
      EXPECT_EQ(v, 2);
    }
    ASSERT_TRUE(SaveVersion(prefix, 3, shards)) << at;
    EXPECT_EQ(ReadVersion(prefix, &why), 3) << at << ": " << why;
    std::set<std::string> want = {"model.index"};
    for (int i = 0; i < shards; ++i)
      want.insert("model" + bd::DataFilename("", i, shards));
    EXPECT_EQ(DirNames(dir), want) << at;
    std::filesystem::remove_all(dir);
  }
  // Kills before the commit keep the old checkpoint, later ones the new.
  EXPECT_GT(saw_old, 3);
  EXPECT_GT(saw_new, 3);
}

TEST(BundleCrashSafety, OverwriteKilledAtEveryStepReadsOldOrNew) { KillAtEveryStep(1); }

TEST(BundleCrashSafety, MergedOverwriteKilledAtEveryStepReadsOldOrNew) { KillAtEveryStep(2); }

// What a crash can leave: a committed pending index and data (readable
// before anything completes them), temporaries. The next save of the
// prefix completes or removes them; other prefixes' files are untouched.
TEST(BundleCrashSafety, NextSaveCleansUpOnlyItsPrefix) {
  const std::string dir = MakeDir();
  const std::string p = dir + "/model";
  ASSERT_TRUE(SaveVersion(p, 1, 1));
  ASSERT_TRUE(SaveVersion(dir + "/other", 4, 1));
  // A save of version 2 stopped right after its commit (the pending index).
  ASSERT_TRUE(SaveVersion(dir + "/v2", 2, 1));
  std::filesystem::rename(dir + "/v2.index", p + ".index.pending");
  std::filesystem::rename(dir + "/v2.data-00000-of-00001", p + ".data-00000-of-00001.pending");
  std::string why;
  EXPECT_EQ(ReadVersion(p, &why), 2) << why;
  EXPECT_TRUE(bd::V2BundleExists(p));
  // Halfway through the renames: the data already renamed.
  std::filesystem::rename(p + ".data-00000-of-00001.pending", p + ".data-00000-of-00001");
  EXPECT_EQ(ReadVersion(p, &why), 2) << why;
  // Temporaries of crashed saves of `model` and of `other` and `model-1`.
  for (const char* f : {"model.index.tempstate0123abc", "model.data-00000-of-00001.tempstate99",
                        "model.data-00003-of-00004.pending", "other.index.tempstate1", "model-1.index.tempstate2",
                        "other.data-00000-of-00001.pending"})
    WriteAll(dir + "/" + f, "junk");
  ASSERT_TRUE(bd::RecoverBundle(p).ok());
  EXPECT_EQ(ReadVersion(p, &why), 2) << why;
  EXPECT_EQ(DirNames(dir), (std::set<std::string>{"model.index", "model.data-00000-of-00001", "other.index",
                                                  "other.data-00000-of-00001", "other.index.tempstate1",
                                                  "model-1.index.tempstate2", "other.data-00000-of-00001.pending"}));
  EXPECT_EQ(ReadVersion(dir + "/other", &why), 4) << why;
  // A pending index that does not parse was never committed: removed, the
  // checkpoint stays as it was.
  WriteAll(p + ".index.pending", "not a table");
  ASSERT_TRUE(SaveVersion(p, 5, 1));
  EXPECT_EQ(ReadVersion(p, &why), 5) << why;
  EXPECT_FALSE(std::filesystem::exists(p + ".index.pending"));
}

}  // namespace
}  // namespace graphrt

// ------------------------------------------------------------ many slices

namespace graphrt {
namespace {

std::string SliceProtoBytes(const bd::TensorSlice& s) {
  std::string out;
  for (const bd::Extent& e : s.extents)
    out += Bytes(1, e.full() ? std::string()
                             : (e.start ? Field(1, static_cast<uint64_t>(e.start)) : std::string()) +
                                   Field(2, static_cast<uint64_t>(e.length)));
  return out;
}

// Opens an index listing tensor "t" of `dims` as `slices` (their own
// entries absent: opening checks the slices, lookups would fail).
bd::Status OpenSliced(const std::vector<int64_t>& dims, const std::vector<bd::TensorSlice>& slices) {
  std::string entry = Field(1, bd::DT_FLOAT) + Bytes(2, Shape(dims));
  for (const bd::TensorSlice& s : slices) entry += Bytes(7, SliceProtoBytes(s));
  std::unique_ptr<bd::CheckpointReader> r;
  return OpenHandMade(Header(Field(1, 1)), "t", entry, "", &r);
}

bd::TensorSlice Box(const std::vector<std::pair<int64_t, int64_t>>& extents) {
  bd::TensorSlice s;
  for (const auto& [start, length] : extents) {
    bd::Extent e;
    e.start = length < 0 ? 0 : start;
    e.length = length;
    s.extents.push_back(e);
  }
  return s;
}

// The reference answer: any two slices sharing an element.
bool PairwiseOverlap(const std::vector<int64_t>& dims, const std::vector<bd::TensorSlice>& slices) {
  for (size_t i = 0; i < slices.size(); ++i)
    for (size_t j = i + 1; j < slices.size(); ++j) {
      bool meet = true;
      for (size_t d = 0; d < dims.size(); ++d) {
        const bd::Extent& a = slices[i].extents[d];
        const bd::Extent& b = slices[j].extents[d];
        const int64_t alo = a.full() ? 0 : a.start, ahi = a.full() ? dims[d] : a.start + a.length;
        const int64_t blo = b.full() ? 0 : b.start, bhi = b.full() ? dims[d] : b.start + b.length;
        meet = meet && std::max(alo, blo) < std::min(ahi, bhi);
      }
      if (meet) return true;
    }
  return false;
}

void ExpectOverlapVerdict(const std::vector<int64_t>& dims, const std::vector<bd::TensorSlice>& slices,
                          const std::string& what) {
  const bool overlap = PairwiseOverlap(dims, slices);
  const bd::Status s = OpenSliced(dims, slices);
  EXPECT_EQ(s.ok(), !overlap) << what << ": " << s.message;
  if (!s.ok()) {
    EXPECT_EQ(s.code, bd::kDataLoss) << what;
    EXPECT_NE(s.message.find(" of tensor t overlap"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("<memory>.index"), std::string::npos) << s.message;
  }
}

// Random slice sets in 1 to 4 dimensions, against the pairwise check: grid
// partitions (disjoint), partitions with one slice added (most overlap),
// and free random boxes, empty and full extents included.
TEST(BundleSlices, OverlapCheckAgreesWithPairwiseCheck) {
  std::mt19937 rng(2027);
  auto uniform = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  int disjoint = 0, overlapping = 0;
  for (int round = 0; round < 4000; ++round) {
    const size_t rank = 1 + static_cast<size_t>(round % 4);
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) d = uniform(1, 7);
    std::vector<bd::TensorSlice> slices;
    auto random_box = [&] {
      bd::TensorSlice s;
      for (int64_t d : dims) {
        bd::Extent e;
        if (rng() % 5 != 0) {
          e.start = uniform(0, d);
          e.length = uniform(0, d - e.start);
        }
        s.extents.push_back(e);
      }
      return s;
    };
    if (round % 3 == 2) {
      const size_t n = 2 + rng() % 6;
      for (size_t i = 0; i < n; ++i) slices.push_back(random_box());
    } else {
      // A grid: random cuts per dimension, then every cell.
      std::vector<std::vector<int64_t>> cuts(rank);
      for (size_t d = 0; d < rank; ++d) {
        cuts[d] = {0, dims[d]};
        for (int64_t c = 1; c < dims[d]; ++c)
          if (rng() % 2) cuts[d].push_back(c);
        std::sort(cuts[d].begin(), cuts[d].end());
      }
      std::vector<size_t> idx(rank, 0);
      for (;;) {
        bd::TensorSlice s;
        for (size_t d = 0; d < rank; ++d) {
          bd::Extent e;
          e.start = cuts[d][idx[d]];
          e.length = cuts[d][idx[d] + 1] - e.start;
          if (e.start == 0 && e.length == dims[d] && rng() % 2) e = bd::Extent();  // as "-"
          s.extents.push_back(e);
        }
        slices.push_back(s);
        size_t d = 0;
        for (; d < rank; ++d) {
          if (++idx[d] + 1 < cuts[d].size()) break;
          idx[d] = 0;
        }
        if (d == rank) break;
      }
      if (round % 3 == 1) slices.push_back(random_box());
      std::shuffle(slices.begin(), slices.end(), rng);
    }
    if (slices.size() < 2) continue;
    (PairwiseOverlap(dims, slices) ? overlapping : disjoint)++;
    ExpectOverlapVerdict(dims, slices, "round " + std::to_string(round));
  }
  EXPECT_GT(disjoint, 1000);
  EXPECT_GT(overlapping, 500);
}

// Tens of thousands of slices (the reproducer's shape: one-element slices
// of a vector; a 2-D and a 3-D grid): opened, and one overlapping slice
// anywhere is found and named.
TEST(BundleSlices, ManySlicesAreCheckedAndOverlapsNamed) {
  std::vector<bd::TensorSlice> line;
  for (int64_t i = 0; i < 32768; ++i) line.push_back(Box({{32767 - i, 1}}));
  EXPECT_TRUE(OpenSliced({32768}, line).ok());
  line.push_back(Box({{20000, 2}}));
  bd::Status s = OpenSliced({32768}, line);
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("20000,2"), std::string::npos) << s.message;

  std::vector<bd::TensorSlice> grid;
  for (int64_t i = 0; i < 181; ++i)
    for (int64_t j = 0; j < 181; ++j) grid.push_back(Box({{j, 1}, {i, 1}, {0, -1}}));
  EXPECT_TRUE(OpenSliced({181, 181, 3}, grid).ok());
  grid.push_back(Box({{180, 1}, {0, 181}, {0, -1}}));
  s = OpenSliced({181, 181, 3}, grid);
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("180,1:0,181:-"), std::string::npos) << s.message;

  std::vector<bd::TensorSlice> cube;
  for (int64_t i = 0; i < 32; ++i)
    for (int64_t j = 0; j < 32; ++j)
      for (int64_t k = 0; k < 32; ++k) cube.push_back(Box({{i, 1}, {j, 1}, {k, 1}}));
  EXPECT_TRUE(OpenSliced({32, 32, 32}, cube).ok());
  cube.insert(cube.begin() + 5000, Box({{31, 1}, {31, 1}, {30, 2}}));
  s = OpenSliced({32, 32, 32}, cube);
  EXPECT_EQ(s.code, bd::kDataLoss);
  EXPECT_NE(s.message.find("31,1:31,1:30,2"), std::string::npos) << s.message;
  // Identical slices, and slices of zero elements (which overlap nothing).
  EXPECT_EQ(OpenSliced({4, 2}, {Box({{1, 2}, {0, -1}}), Box({{1, 2}, {0, -1}})}).code, bd::kDataLoss);
  EXPECT_TRUE(OpenSliced({4, 2}, {Box({{1, 0}, {0, -1}}), Box({{0, 4}, {0, -1}}), Box({{2, 0}, {0, 2}})}).ok());
}

}  // namespace
}  // namespace graphrt
