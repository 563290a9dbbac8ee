// Parsing ops: ParseExample, ParseExampleV2, ParseSingleExample.
//
// Two levels:
// - ExampleParserTest drives the parser under the kernels
//   (ops/parsing/parser/) directly, with Examples built by the lite proto
//   classes and hand-written wire bytes, and hand-computed outputs.
// - The graph tests run the ops in sessions. Dense features need the
//   list(shape) attr dense_shapes, which this SDK/ABI cannot hand to a
//   plugin yet (parsing::kSdkReadsShapeLists); until it can, those tests
//   check the clear Unimplemented error, and the dense outputs are checked
//   through the parser only.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/example/example.pb.h"
#include "op_test_util.h"
#include "parser/example_parser.h"
#include "parsing/parsing_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT
namespace ex = ::graphrt::example;
namespace p = ::graphrt::sdk::parsing;

// ------------------------------------------------------------- builders

ex::Feature FloatFeature(const std::vector<float>& v) {
  ex::Feature f;
  for (float x : v) f.mutable_float_list()->add_value(x);
  if (v.empty()) f.mutable_float_list();
  return f;
}
ex::Feature Int64Feature(const std::vector<int64_t>& v) {
  ex::Feature f;
  for (int64_t x : v) f.mutable_int64_list()->add_value(x);
  if (v.empty()) f.mutable_int64_list();
  return f;
}
ex::Feature BytesFeature(const std::vector<std::string>& v) {
  ex::Feature f;
  for (const auto& x : v) f.mutable_bytes_list()->add_value(x);
  if (v.empty()) f.mutable_bytes_list();
  return f;
}

std::string Serialize(const std::vector<std::pair<std::string, ex::Feature>>& features) {
  ex::Example e;
  for (const auto& [k, f] : features) (*e.mutable_features()->mutable_feature())[k] = f;
  return e.SerializeAsString();
}

// Values the parser tests hold: floats, int64s or strings.
struct Out {
  std::vector<float> f;
  std::vector<int64_t> i;
  std::vector<std::string> s;
  p::ValueSink Sink(DataType dt, int64_t n) {
    p::ValueSink sink;
    if (dt == GR_FLOAT) {
      f.assign(static_cast<size_t>(n), -999.f);
      sink.data = f.data();
    } else if (dt == GR_INT64) {
      i.assign(static_cast<size_t>(n), -999);
      sink.data = i.data();
    } else {
      s.assign(static_cast<size_t>(n), "<unset>");
      sink.ctx = &s;
      sink.assign = [](void* ctx, int64_t index, const char* b, uint64_t size) {
        (*static_cast<std::vector<std::string>*>(ctx))[static_cast<size_t>(index)].assign(b, size);
      };
    }
    return sink;
  }
};

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

p::ConstValues Floats(const std::vector<float>& v) {
  return p::ConstValues{GR_FLOAT, v.data(), static_cast<int64_t>(v.size())};
}
p::ConstValues Int64s(const std::vector<int64_t>& v) {
  return p::ConstValues{GR_INT64, v.data(), static_cast<int64_t>(v.size())};
}
// GR_StringElem views of `v` (which must outlive them).
std::vector<GR_StringElem> Elems(std::vector<std::string>& v) {
  std::vector<GR_StringElem> e;
  for (auto& s : v) e.push_back(GR_StringElem{s.data(), s.size()});
  return e;
}

sdk::Status Parse(p::ParseConfig config, bool batched, const std::vector<std::string>& serialized,
                  p::ExampleParser* parser, const std::vector<std::string>& names = {}) {
  sdk::Status s = p::ExampleParser::Create(std::move(config), batched, parser);
  if (!s.ok()) return s;
  return parser->Parse(Views(serialized), Views(names));  // views needed during Parse only
}

bool Has(const sdk::Status& s, const std::string& sub) { return s.message().find(sub) != std::string::npos; }

// ======================================================= parser, dense

TEST(ExampleParserTest, DenseFixedWithDefaults) {
  // x: float [2] required; k: int64 [] default 7; s: string [2] default {"a","b"}.
  std::vector<std::string> sdef = {"a", "b"};
  std::vector<GR_StringElem> sdef_e = Elems(sdef);
  std::vector<int64_t> kdef = {7};
  p::ParseConfig c;
  c.dense.push_back({"x", GR_FLOAT, {2}, {}});
  c.dense.push_back({"k", GR_INT64, {}, Int64s(kdef)});
  c.dense.push_back({"s", GR_STRING, {2}, p::ConstValues{GR_STRING, sdef_e.data(), 2}});
  const std::vector<std::string> in = {
      Serialize({{"x", FloatFeature({1.5f, -2})}, {"k", Int64Feature({42})}, {"ignored", FloatFeature({9})}}),
      Serialize({{"x", FloatFeature({3, 4})}, {"s", BytesFeature({"hello", std::string("\0z", 2)})}}),
  };
  p::ExampleParser parser;
  ASSERT_TRUE(Parse(c, true, in, &parser).ok());
  EXPECT_EQ(parser.dense_shape(0), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(parser.dense_shape(1), (std::vector<int64_t>{2}));
  EXPECT_EQ(parser.dense_shape(2), (std::vector<int64_t>{2, 2}));
  Out x, k, s;
  parser.FillDense(0, x.Sink(GR_FLOAT, 4));
  parser.FillDense(1, k.Sink(GR_INT64, 2));
  parser.FillDense(2, s.Sink(GR_STRING, 4));
  EXPECT_EQ(x.f, (std::vector<float>{1.5f, -2, 3, 4}));
  EXPECT_EQ(k.i, (std::vector<int64_t>{42, 7}));
  EXPECT_EQ(s.s, (std::vector<std::string>{"a", "b", "hello", std::string("\0z", 2)}));
}

TEST(ExampleParserTest, HalfPlusTwoConfigAndUnbatched) {
  // The serving graph's config: x float [1] required, x2 float [1] default 0.
  std::vector<float> zero = {0};
  p::ParseConfig c;
  c.dense.push_back({"x", GR_FLOAT, {1}, {}});
  c.dense.push_back({"x2", GR_FLOAT, {1}, Floats(zero)});
  std::vector<std::string> in;
  for (float v : {0.f, 1.f, 2.f, 3.f}) in.push_back(Serialize({{"x", FloatFeature({v})}}));
  p::ExampleParser parser;
  ASSERT_TRUE(Parse(c, true, in, &parser).ok());
  Out x, x2;
  EXPECT_EQ(parser.dense_shape(0), (std::vector<int64_t>{4, 1}));
  parser.FillDense(0, x.Sink(GR_FLOAT, 4));
  parser.FillDense(1, x2.Sink(GR_FLOAT, 4));
  EXPECT_EQ(x.f, (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(x2.f, (std::vector<float>{0, 0, 0, 0}));

  // One example, not batched (ParseSingleExample): no leading dim.
  p::ExampleParser single;
  ASSERT_TRUE(Parse(c, false, {in[3]}, &single).ok());
  EXPECT_EQ(single.dense_shape(0), (std::vector<int64_t>{1}));
  Out y;
  single.FillDense(0, y.Sink(GR_FLOAT, 1));
  EXPECT_EQ(y.f, (std::vector<float>{3}));

  // An empty batch: [0, 1].
  p::ExampleParser empty;
  ASSERT_TRUE(Parse(c, true, {}, &empty).ok());
  EXPECT_EQ(empty.dense_shape(0), (std::vector<int64_t>{0, 1}));
}

TEST(ExampleParserTest, DenseErrors) {
  p::ParseConfig c;
  c.dense.push_back({"x", GR_FLOAT, {2}, {}});
  p::ExampleParser parser;
  // Missing required feature in example 1: names the feature and the index.
  sdk::Status s = Parse(c, true, {Serialize({{"x", FloatFeature({1, 2})}}), Serialize({})}, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "Feature: x (data type: float) is required but could not be found.")) << s.message();
  EXPECT_TRUE(Has(s, "Index: 1")) << s.message();
  EXPECT_TRUE(Has(s, "Name: <unknown>")) << s.message();
  // With names, the name is used.
  s = Parse(c, true, {Serialize({})}, &parser, {"ex_a"});
  EXPECT_TRUE(Has(s, "Name: ex_a")) << s.message();
  // Wrong number of values.
  s = Parse(c, true, {Serialize({{"x", FloatFeature({1, 2, 3})}})}, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "Number of float values != expected.  Values size: 3 but output shape: [2]")) << s.message();
  EXPECT_TRUE(Has(s, "Index: 0")) << s.message();
  // An empty Feature (no list) is an empty list: wrong size for [2].
  s = Parse(c, true, {Serialize({{"x", ex::Feature()}})}, &parser);
  EXPECT_TRUE(Has(s, "Values size: 0")) << s.message();
  // Wrong list kind.
  s = Parse(c, true, {Serialize({{"x", Int64Feature({1, 2})}})}, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "Data types don't match. Data type: int64 but expected type: float")) << s.message();
  // A default of the wrong size is refused up front.
  std::vector<float> three = {1, 2, 3};
  p::ParseConfig bad;
  bad.dense.push_back({"x", GR_FLOAT, {2}, Floats(three)});
  s = p::ExampleParser::Create(bad, true, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "def_value[0]")) << s.message();
  // Dense shapes beyond the size rule.
  p::ParseConfig huge;
  huge.dense.push_back({"x", GR_FLOAT, {int64_t{1} << 40, int64_t{1} << 30}, {}});
  s = p::ExampleParser::Create(huge, true, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "2^58")) << s.message();
}

TEST(ExampleParserTest, VariableLengthDensePadsWithDefault) {
  // v: int64 [-1, 2] padded with -1; w: string [-1] padded with "pad".
  std::vector<int64_t> pad = {-1};
  std::vector<std::string> spad = {"pad"};
  std::vector<GR_StringElem> spad_e = Elems(spad);
  p::ParseConfig c;
  c.dense.push_back({"v", GR_INT64, {-1, 2}, Int64s(pad)});
  c.dense.push_back({"w", GR_STRING, {-1}, p::ConstValues{GR_STRING, spad_e.data(), 1}});
  const std::vector<std::string> in = {
      Serialize({{"v", Int64Feature({1, 2, 3, 4})}, {"w", BytesFeature({"a"})}}),
      Serialize({}),
      Serialize({{"v", Int64Feature({5, 6})}, {"w", BytesFeature({"b", "c", "d"})}}),
  };
  p::ExampleParser parser;
  ASSERT_TRUE(Parse(c, true, in, &parser).ok());
  EXPECT_EQ(parser.dense_shape(0), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(parser.dense_shape(1), (std::vector<int64_t>{3, 3}));
  Out v, w;
  parser.FillDense(0, v.Sink(GR_INT64, 12));
  parser.FillDense(1, w.Sink(GR_STRING, 9));
  EXPECT_EQ(v.i, (std::vector<int64_t>{1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1}));
  EXPECT_EQ(w.s, (std::vector<std::string>{"a", "pad", "pad", "pad", "pad", "pad", "b", "c", "d"}));

  // Not a multiple of the stride.
  sdk::Status s = Parse(c, true, {Serialize({{"v", Int64Feature({1, 2, 3})}})}, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "Number of int64 values is not a multiple of stride length. Saw 3 values")) << s.message();
  // The padding default must be one element.
  p::ParseConfig bad;
  bad.dense.push_back({"v", GR_INT64, {-1, 2}, {}});
  s = p::ExampleParser::Create(bad, true, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "must contain a single element (the padding element)")) << s.message();
  // Unbatched: the first dim is the example's own block count.
  p::ExampleParser single;
  ASSERT_TRUE(Parse(c, false, {in[0]}, &single).ok());
  EXPECT_EQ(single.dense_shape(0), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(single.dense_shape(1), (std::vector<int64_t>{1}));
}

// ================================================= parser, sparse, ragged

TEST(ExampleParserTest, SparseAndRagged) {
  p::ParseConfig c;
  c.sparse.push_back({"ids", GR_INT64});
  c.sparse.push_back({"tags", GR_STRING});
  c.ragged.push_back({"ids", GR_INT64});
  const std::vector<std::string> in = {
      Serialize({{"ids", Int64Feature({10, 11, 12})}}),
      Serialize({{"tags", BytesFeature({"t"})}}),
      Serialize({{"ids", Int64Feature({20})}, {"tags", BytesFeature({"u", "v"})}}),
  };
  p::ExampleParser parser;
  ASSERT_TRUE(Parse(c, true, in, &parser).ok());
  ASSERT_EQ(parser.sparse_count(0), 4);
  std::vector<int64_t> idx(8), shape(2);
  Out vals;
  parser.FillSparse(0, idx.data(), vals.Sink(GR_INT64, 4), shape.data());
  EXPECT_EQ(idx, (std::vector<int64_t>{0, 0, 0, 1, 0, 2, 2, 0}));
  EXPECT_EQ(vals.i, (std::vector<int64_t>{10, 11, 12, 20}));
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 3}));
  ASSERT_EQ(parser.sparse_count(1), 3);
  std::vector<int64_t> idx1(6), shape1(2);
  Out tags;
  parser.FillSparse(1, idx1.data(), tags.Sink(GR_STRING, 3), shape1.data());
  EXPECT_EQ(idx1, (std::vector<int64_t>{1, 0, 2, 0, 2, 1}));
  EXPECT_EQ(tags.s, (std::vector<std::string>{"t", "u", "v"}));
  EXPECT_EQ(shape1, (std::vector<int64_t>{3, 2}));
  ASSERT_EQ(parser.ragged_count(0), 4);
  std::vector<int64_t> splits(4);
  Out rv;
  parser.FillRagged(0, rv.Sink(GR_INT64, 4), splits.data());
  EXPECT_EQ(rv.i, (std::vector<int64_t>{10, 11, 12, 20}));
  EXPECT_EQ(splits, (std::vector<int64_t>{0, 3, 3, 4}));

  // Nothing anywhere: [0, 2] indices, dense shape [B, 0].
  p::ExampleParser none;
  ASSERT_TRUE(Parse(c, true, {Serialize({}), ""}, &none).ok());
  EXPECT_EQ(none.sparse_count(0), 0);
  EXPECT_EQ(none.sparse_dense_shape(0), (std::vector<int64_t>{2, 0}));

  // Unbatched: indices [n, 1], dense shape [n].
  p::ExampleParser single;
  ASSERT_TRUE(Parse(c, false, {in[0]}, &single).ok());
  EXPECT_EQ(single.sparse_index_rank(), 1);
  std::vector<int64_t> sidx(3), sshape(1);
  Out sv;
  single.FillSparse(0, sidx.data(), sv.Sink(GR_INT64, 3), sshape.data());
  EXPECT_EQ(sidx, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(sshape, (std::vector<int64_t>{3}));

  // A sparse feature of the wrong kind.
  sdk::Status s = Parse(c, true, {Serialize({{"ids", FloatFeature({1})}})}, &parser);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "Data types don't match")) << s.message();
}

// ================================================ parser, wire bytes

TEST(ExampleParserTest, HandWrittenWireBytes) {
  p::ParseConfig c;
  c.dense.push_back({"x", GR_FLOAT, {-1}, {}});
  std::vector<float> pad = {0};
  c.dense[0].default_value = Floats(pad);
  c.sparse.push_back({"n", GR_INT64});
  // Example{features{feature{key "x" value{float_list{value: [1.5] packed}}}}}
  const std::string packed("\x0a\x0f\x0a\x0d\x0a\x01x\x12\x08\x12\x06\x0a\x04\x00\x00\xc0\x3f", 17);
  // The same list unpacked (two fixed32 fields: 1.5, 2.5), as older writers emit.
  const std::string unpacked("\x0a\x13\x0a\x11\x0a\x01x\x12\x0c\x12\x0a\x0d\x00\x00\xc0\x3f\x0d\x00\x00\x20\x40",
                             21);
  // int64_list {value: [-1, 300]} packed varints under key "n".
  const std::string ints("\x0a\x17\x0a\x15\x0a\x01n\x12\x10\x1a\x0e\x0a\x0c\xff\xff\xff\xff\xff\xff\xff\xff\xff"
                         "\x01\xac\x02",
                         25);
  p::ExampleParser parser;
  ASSERT_TRUE(Parse(c, true, {packed, unpacked, ints}, &parser).ok());
  EXPECT_EQ(parser.dense_shape(0), (std::vector<int64_t>{3, 2}));
  Out x;
  parser.FillDense(0, x.Sink(GR_FLOAT, 6));
  EXPECT_EQ(x.f, (std::vector<float>{1.5f, 0, 1.5f, 2.5f, 0, 0}));
  ASSERT_EQ(parser.sparse_count(0), 2);
  std::vector<int64_t> idx(4), shape(2);
  Out n;
  parser.FillSparse(0, idx.data(), n.Sink(GR_INT64, 2), shape.data());
  EXPECT_EQ(n.i, (std::vector<int64_t>{-1, 300}));
  EXPECT_EQ(idx, (std::vector<int64_t>{2, 0, 2, 1}));

  // The classes agree with the hand-written bytes.
  ex::Example e;
  ASSERT_TRUE(e.ParseFromString(packed));
  EXPECT_EQ(e.features().feature().at("x").float_list().value(0), 1.5f);
  EXPECT_EQ(Serialize({{"x", FloatFeature({1.5f})}}), packed);
}

TEST(ExampleParserTest, MalformedInputsAreErrorsNamingTheIndex) {
  p::ParseConfig c;
  c.sparse.push_back({"n", GR_INT64});
  const std::string good = Serialize({{"n", Int64Feature({1})}});
  const std::vector<std::string> bad = {
      std::string("\x0a\x05\x0a", 3),                      // length past the end
      "not a proto",                                        // wire type 6
      std::string("\x0a\x07\x0a\x05\x0a\x01n\x12\x09", 9),  // nested length past the end
      good.substr(0, good.size() - 1),                      // truncated
      std::string("\x0a\x02\x0a\xff", 4),                   // bad varint
  };
  for (size_t b = 0; b < bad.size(); ++b) {
    p::ExampleParser parser;
    sdk::Status s = Parse(c, true, {good, bad[b]}, &parser);
    EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT) << b;
    EXPECT_TRUE(Has(s, "Could not parse example input")) << s.message();
    EXPECT_TRUE(Has(s, "Index: 1")) << s.message();
  }
  // Random bytes: never a crash; either parsed or an InvalidArgument.
  std::mt19937 rng(7);
  for (int t = 0; t < 2000; ++t) {
    std::string r = good;
    for (int k = 0; k < 3; ++k) r[rng() % r.size()] = static_cast<char>(rng());
    p::ExampleParser parser;
    sdk::Status s = Parse(c, true, {r}, &parser);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT) << s.message();
      continue;
    }
    const int64_t n = parser.sparse_count(0);
    std::vector<int64_t> idx(static_cast<size_t>(2 * n)), shape(2);
    Out v;
    parser.FillSparse(0, idx.data(), v.Sink(GR_INT64, n), shape.data());
  }
}

TEST(ExampleParserTest, ParallelDecodeMatchesAndReportsTheFirstBadExample) {
  p::ParseConfig c;
  c.sparse.push_back({"n", GR_INT64});
  std::vector<std::string> in;
  for (int64_t e = 0; e < 100; ++e) in.push_back(Serialize({{"n", Int64Feature({e, -e})}}));
  // Chunks of 7, last chunk first, as a pool might run them.
  const p::ExampleParser::ParallelFor reversed = [](int64_t total, int64_t,
                                                    const std::function<void(int64_t, int64_t)>& fn) {
    for (int64_t b = (total - 1) / 7 * 7; b >= 0; b -= 7) fn(b, std::min(total, b + 7));
  };
  p::ExampleParser parser;
  ASSERT_TRUE(p::ExampleParser::Create(c, true, &parser).ok());
  ASSERT_TRUE(parser.Parse(Views(in), {}, reversed).ok());
  ASSERT_EQ(parser.sparse_count(0), 200);
  std::vector<int64_t> idx(400), shape(2);
  Out v;
  parser.FillSparse(0, idx.data(), v.Sink(GR_INT64, 200), shape.data());
  for (int64_t e = 0; e < 100; ++e) {
    EXPECT_EQ(v.i[2 * e], e);
    EXPECT_EQ(v.i[2 * e + 1], -e);
    EXPECT_EQ(idx[4 * e], e);
    EXPECT_EQ(idx[4 * e + 3], 1);
  }
  in[80] = "\xff";
  in[37] = "\x0a";
  sdk::Status s = parser.Parse(Views(in), {}, reversed);
  EXPECT_EQ(s.code(), GR_INVALID_ARGUMENT);
  EXPECT_TRUE(Has(s, "Index: 37")) << s.message();
}

// ============================================================ graphs

std::string StrConst(const std::string& name, const std::vector<std::string>& values, bool scalar) {
  std::vector<std::string> quoted;
  for (const auto& v : values) quoted.push_back("\"" + v + "\"");
  return ConstNode(name, "DT_STRING", scalar ? Dims{} : Dims{static_cast<int64_t>(values.size())}, "string_val",
                   quoted);
}
std::string IntAttr(const std::string& k, int64_t v) {
  return "attr { key: \"" + k + "\" value { i: " + std::to_string(v) + " } } ";
}
std::string TypeList(const std::string& k, const std::vector<std::string>& types) {
  std::string s = "attr { key: \"" + k + "\" value { list { ";
  for (const auto& t : types) s += "type: " + t + " ";
  return s + "} } } ";
}
std::string ShapeList(const std::string& k, const std::vector<Dims>& shapes) {
  std::string s = "attr { key: \"" + k + "\" value { list { ";
  for (const auto& d : shapes) s += "shape " + ShapeProto(d) + " ";
  return s + "} } } ";
}
std::string StrList(const std::string& k, const std::vector<std::string>& v) {
  std::string s = "attr { key: \"" + k + "\" value { list { ";
  for (const auto& x : v) s += "s: \"" + x + "\" ";
  return s + "} } } ";
}

Tensor StringVector(const std::vector<std::string>& v) {
  Tensor t(GR_STRING, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.set_string(static_cast<int64_t>(i), v[i]);
  return t;
}

// The ParseExample subgraph of the half_plus_two serving model
// (tf_testdata/derived/half_plus_two_cpu.graphdef.pb): tf_example -> 
// ParseExample(names = string[0], dense_keys "x", "x2", defaults float[0]
// (required) and Reshape(0.0, [1])), dense_shapes [[1], [1]].
std::string HalfPlusTwoParseGraph() {
  return PlaceholderNode("tf_example", "DT_STRING") + StrConst("names", {}, false) +
         StrConst("dense_keys_0", {"x"}, true) + StrConst("dense_keys_1", {"x2"}, true) +
         ConstFloat("Const", {0}, {}) + ConstFloat("key_x2", {}, {0}) + ConstInt32("shape", {1}) +
         NodeText("Reshape", "Reshape", {"key_x2", "shape"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tshape", "DT_INT32")) +
         NodeText("ParseExample/ParseExample", "ParseExample",
                  {"tf_example", "names", "dense_keys_0", "dense_keys_1", "Const", "Reshape"},
                  IntAttr("Ndense", 2) + IntAttr("Nsparse", 0) + TypeList("Tdense", {"DT_FLOAT", "DT_FLOAT"}) +
                      ShapeList("dense_shapes", {{1}, {1}}) + TypeList("sparse_types", {}));
}

TEST(ParseExampleGraphTest, HalfPlusTwoSubgraph) {
  std::vector<std::string> in;
  for (float v : {0.f, 1.f, 2.f, 3.f}) in.push_back(Serialize({{"x", FloatFeature({v})}}));
  in[2] = Serialize({{"x", FloatFeature({2})}, {"x2", FloatFeature({-7})}});
  std::vector<Tensor> out;
  Status st = TryRunGraph(HalfPlusTwoParseGraph(), {{"tf_example", StringVector(in)}},
                          {"ParseExample/ParseExample:0", "ParseExample/ParseExample:1"}, &out);
  if (!p::kSdkReadsShapeLists) {
    EXPECT_ERROR(st, Code::kUnimplemented, "ParseExample/ParseExample", "dense_shapes");
    return;
  }
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{4, 1}));
  ExpectValuesEq<float>(out[0], {0, 1, 2, 3});
  ExpectValuesEq<float>(out[1], {0, 0, -7, 0});
  // A missing required x names the feature and the example.
  in[1] = Serialize({{"x2", FloatFeature({1})}});
  st = TryRunGraph(HalfPlusTwoParseGraph(), {{"tf_example", StringVector(in)}}, {"ParseExample/ParseExample:0"},
                   &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "ParseExample/ParseExample", "Feature: x (data type: float) is required",
               "Index: 1");
}

// The ParseExample subgraph cut out of the real serving graphs (their
// VariableV2 model part needs the state ops, which are not this family's):
// tf_example and every ParseExample/* node, as TensorFlow wrote them.
void RunRealParseSubgraph(const std::string& rel, bool has_x2) {
  const std::string path = SharedPath("tf_testdata/" + rel);
  if (path.empty()) GTEST_SKIP() << rel << " not present";
  proto::GraphDef full, sub;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &full).ok());
  *sub.mutable_versions() = full.versions();
  for (const auto& n : full.node())
    if (n.name() == "tf_example" || n.name().rfind("ParseExample/", 0) == 0) *sub.add_node() = n;
  std::unique_ptr<Session> s = CreateSession(sub);
  ASSERT_TRUE(s);
  std::vector<std::string> in;
  for (float v : {0.f, 1.f, 2.f, 3.f}) in.push_back(Serialize({{"x", FloatFeature({v})}}));
  if (has_x2) in[1] = Serialize({{"x", FloatFeature({1})}, {"x2", FloatFeature({5})}});
  std::vector<std::string> fetches = {"ParseExample/ParseExample:0"};
  if (has_x2) fetches.push_back("ParseExample/ParseExample:1");
  std::vector<Tensor> out;
  Status st = s->Run({{"tf_example:0", StringVector(in)}}, fetches, {}, &out);
  if (!p::kSdkReadsShapeLists) {
    EXPECT_ERROR(st, Code::kUnimplemented, "ParseExample/ParseExample", "dense_shapes");
    return;
  }
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(DimsOf(out[0]), (Dims{4, 1}));
  ExpectValuesEq<float>(out[0], {0, 1, 2, 3});
  if (has_x2) ExpectValuesEq<float>(out[1], {0, 5, 0, 0});
}

TEST(ParseExampleGraphTest, RealHalfPlusTwoParseSubgraph) {
  RunRealParseSubgraph("derived/half_plus_two_cpu.graphdef.pb", true);
}

TEST(ParseExampleGraphTest, RealHalfPlusThreeParseSubgraph) {
  RunRealParseSubgraph("derived/half_plus_three.graphdef.pb", false);
}

// The nodes of `full` that `roots` need (inputs and control inputs,
// transitively), so a test runs the parts of a real serving graph whose ops
// are loaded without its save/restore part.
proto::GraphDef Closure(const proto::GraphDef& full, const std::vector<std::string>& roots) {
  std::map<std::string, const proto::NodeDef*> by_name;
  for (const auto& n : full.node()) by_name[n.name()] = &n;
  std::set<std::string> seen;
  std::vector<std::string> todo = roots;
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (!name.empty() && name[0] == '^') name = name.substr(1);
    name = name.substr(0, name.find(':'));
    if (!seen.insert(name).second || !by_name.count(name)) continue;
    for (const auto& in : by_name[name]->input()) todo.push_back(in);
  }
  proto::GraphDef sub;
  *sub.mutable_versions() = full.versions();
  for (const auto& n : full.node())
    if (seen.count(n.name())) *sub.add_node() = n;
  return sub;
}

// The whole regress/classify path of half_plus_two: init, then
// tf_example:0 -> ParseExample -> x, x2 -> y = 0.5x + 2, y2 = 0.5x + 3,
// y3 = 0.5x2 + 3 (tf_testdata README: x = 0..3 gives y = [2, 2.5, 3, 3.5]).
TEST(ParseExampleGraphTest, RealHalfPlusTwoSignatures) {
  const std::string path = SharedPath("tf_testdata/derived/half_plus_two_cpu.graphdef.pb");
  if (path.empty()) GTEST_SKIP() << "half_plus_two_cpu.graphdef.pb not present";
  proto::GraphDef full;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &full).ok());
  std::unique_ptr<Session> s = CreateSession(Closure(full, {"y", "y2", "y3", "init"}));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  Status st = s->Run({}, {}, {"init"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  std::vector<std::string> in;
  for (float v : {0.f, 1.f, 2.f, 3.f}) in.push_back(Serialize({{"x", FloatFeature({v})}}));
  in[3] = Serialize({{"x", FloatFeature({3})}, {"x2", FloatFeature({4})}});
  st = s->Run({{"tf_example:0", StringVector(in)}}, {"y:0", "y2:0", "y3:0"}, {}, &out);
  if (!p::kSdkReadsShapeLists) {
    EXPECT_ERROR(st, Code::kUnimplemented, "ParseExample/ParseExample", "dense_shapes");
    return;
  }
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(DimsOf(out[0]), (Dims{4, 1}));
  ExpectValuesEq<float>(out[0], {2, 2.5f, 3, 3.5f});
  ExpectValuesEq<float>(out[1], {3, 3.5f, 4, 4.5f});
  ExpectValuesEq<float>(out[2], {3, 3, 3, 5});
}

// The Saver's StringJoin of the same graph: checkpoint prefix + the
// temporary-file suffix TensorFlow wrote into save/StringJoin/inputs_1.
TEST(RealGraphTest, HalfPlusTwoSaverStringJoin) {
  const std::string path = SharedPath("tf_testdata/derived/half_plus_two_cpu.graphdef.pb");
  if (path.empty()) GTEST_SKIP() << "half_plus_two_cpu.graphdef.pb not present";
  proto::GraphDef full;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &full).ok());
  std::string suffix;
  for (const auto& n : full.node())
    if (n.name() == "save/StringJoin/inputs_1") suffix = n.attr().at("value").tensor().string_val(0);
  ASSERT_FALSE(suffix.empty());
  std::unique_ptr<Session> s = CreateSession(Closure(full, {"save/StringJoin"}));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"save/StringJoin:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].string_at(0), "model" + suffix);  // save/Const defaults to "model"
  ASSERT_TRUE(s->Run({{"save/Const:0", Tensor::StringScalar("/m/variables/variables")}}, {"save/StringJoin:0"}, {}, &out)
                  .ok());
  EXPECT_EQ(out[0].string_at(0), "/m/variables/variables" + suffix);
}

std::string SparseParseExampleGraph() {
  return PlaceholderNode("ser", "DT_STRING") + PlaceholderNode("names", "DT_STRING") +
         StrConst("k0", {"ids"}, true) + StrConst("k1", {"w"}, true) +
         NodeText("pe", "ParseExample", {"ser", "names", "k0", "k1"},
                  IntAttr("Nsparse", 2) + IntAttr("Ndense", 0) + TypeList("sparse_types", {"DT_INT64", "DT_FLOAT"}) +
                      TypeList("Tdense", {}) + ShapeList("dense_shapes", {}));
}

TEST(ParseExampleGraphTest, SparseFeatures) {
  const std::vector<std::string> in = {Serialize({{"ids", Int64Feature({5, 6})}, {"w", FloatFeature({0.5f})}}),
                                       Serialize({{"w", FloatFeature({1, 2, 3})}})};
  std::vector<Tensor> out;
  Status st = TryRunGraph(SparseParseExampleGraph(), {{"ser", StringVector(in)}, {"names", StringVector({})}},
                          {"pe:0", "pe:1", "pe:2", "pe:3", "pe:4", "pe:5"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  ExpectValuesEq<int64_t>(out[0], {0, 0, 0, 1});
  EXPECT_EQ(DimsOf(out[1]), (Dims{4, 2}));
  ExpectValuesEq<int64_t>(out[1], {0, 0, 1, 0, 1, 1, 1, 2});
  ExpectValuesEq<int64_t>(out[2], {5, 6});
  ExpectValuesEq<float>(out[3], {0.5f, 1, 2, 3});
  ExpectValuesEq<int64_t>(out[4], {2, 2});
  ExpectValuesEq<int64_t>(out[5], {2, 3});

  // A malformed example: InvalidArgument naming the node and the index.
  st = TryRunGraph(SparseParseExampleGraph(),
                   {{"ser", StringVector({in[0], "garbage!"})}, {"names", StringVector({"a", "b"})}}, {"pe:0"}, &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "pe", "Could not parse example input", "Index: 1", "Name: b");
  // serialized must be a vector; names must match it.
  Tensor scalar = Tensor::StringScalar(in[0]);
  st = TryRunGraph(SparseParseExampleGraph(), {{"ser", scalar}, {"names", StringVector({})}}, {"pe:0"}, &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "Expected serialized to be a vector");
  st = TryRunGraph(SparseParseExampleGraph(), {{"ser", StringVector(in)}, {"names", StringVector({"a"})}},
                   {"pe:0"}, &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "Expected len(names) == len(serialized)");
  // A feature of the wrong kind.
  st = TryRunGraph(SparseParseExampleGraph(),
                   {{"ser", StringVector({Serialize({{"ids", FloatFeature({1})}})})}, {"names", StringVector({})}},
                   {"pe:0"}, &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "Data types don't match", "Key: ids");
  // The session survives: the next Run works.
  st = TryRunGraph(SparseParseExampleGraph(), {{"ser", StringVector(in)}, {"names", StringVector({})}}, {"pe:2"},
                   &out);
  EXPECT_TRUE(st.ok()) << st;
}

// A batch large enough to be decoded on the session's two threads.
TEST(ParseExampleGraphTest, LargeBatchOnTwoThreads) {
  std::vector<std::string> in;
  for (int64_t e = 0; e < 3000; ++e) in.push_back(Serialize({{"ids", Int64Feature({e})}, {"w", FloatFeature({0.5f})}}));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(SparseParseExampleGraph()), 2);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"ser", StringVector(in)}, {"names", StringVector({})}}, {"pe:2", "pe:4"}, {}, &out).ok());
  ASSERT_EQ(out[0].NumElements(), 3000);
  for (int64_t e = 0; e < 3000; ++e) ASSERT_EQ(out[0].data<int64_t>()[e], e);
  ExpectValuesEq<int64_t>(out[1], {3000, 1});
  in[2999] = "\x0a\x01";
  Status st = s->Run({{"ser", StringVector(in)}, {"names", StringVector({})}}, {"pe:2"}, {}, &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "pe", "Index: 2999");
}

TEST(ParseSingleExampleGraphTest, SparseAndDense) {
  const std::string graph =
      PlaceholderNode("ser", "DT_STRING") +
      NodeText("ps", "ParseSingleExample", {"ser"},
               IntAttr("num_sparse", 1) + StrList("sparse_keys", {"tags"}) + StrList("dense_keys", {}) +
                   TypeList("sparse_types", {"DT_STRING"}) + TypeList("Tdense", {}) + ShapeList("dense_shapes", {}));
  std::vector<Tensor> out;
  Status st = TryRunGraph(graph, {{"ser", Tensor::StringScalar(Serialize({{"tags", BytesFeature({"a", "bc"})}}))}},
                          {"ps:0", "ps:1", "ps:2"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 1}));
  ExpectValuesEq<int64_t>(out[0], {0, 1});
  ASSERT_EQ(out[1].NumElements(), 2);
  EXPECT_EQ(out[1].string_at(0), "a");
  EXPECT_EQ(out[1].string_at(1), "bc");
  ExpectValuesEq<int64_t>(out[2], {2});
  st = TryRunGraph(graph, {{"ser", StringVector({"", ""})}}, {"ps:0"}, &out);
  EXPECT_ERROR(st, Code::kInvalidArgument, "Expected serialized to be a scalar");

  // Dense: k int64 [2] with a default.
  const std::string dense_graph =
      PlaceholderNode("ser", "DT_STRING") +
      ConstNode("def", "DT_INT64", {2}, "int64_val", {"8", "9"}) +
      NodeText("ps", "ParseSingleExample", {"ser", "def"},
               IntAttr("num_sparse", 0) + StrList("sparse_keys", {}) + StrList("dense_keys", {"k"}) +
                   TypeList("sparse_types", {}) + TypeList("Tdense", {"DT_INT64"}) + ShapeList("dense_shapes", {{2}}));
  st = TryRunGraph(dense_graph, {{"ser", Tensor::StringScalar(Serialize({}))}}, {"ps:0"}, &out);
  if (!p::kSdkReadsShapeLists) {
    EXPECT_ERROR(st, Code::kUnimplemented, "ps", "dense_shapes");
    return;
  }
  ASSERT_TRUE(st.ok()) << st;
  ExpectValuesEq<int64_t>(out[0], {8, 9});
  st = TryRunGraph(dense_graph, {{"ser", Tensor::StringScalar(Serialize({{"k", Int64Feature({1, 2})}}))}}, {"ps:0"},
                   &out);
  ASSERT_TRUE(st.ok()) << st;
  ExpectValuesEq<int64_t>(out[0], {1, 2});
}

// Variable-length dense features (FixedLenSequenceFeature): V1 and V2 pad
// each example's blocks to the batch's longest with the scalar default.
TEST(ParseExampleGraphTest, VariableLengthDense) {
  const std::vector<std::string> in = {Serialize({{"v", FloatFeature({1, 2, 3, 4})}}), Serialize({}),
                                       Serialize({{"v", FloatFeature({5, 6})}})};
  const std::string v1 = PlaceholderNode("ser", "DT_STRING") + StrConst("names", {}, false) +
                         StrConst("dk", {"v"}, true) + ConstFloat("pad", {}, {-1}) +
                         NodeText("pe", "ParseExample", {"ser", "names", "dk", "pad"},
                                  IntAttr("Nsparse", 0) + IntAttr("Ndense", 1) + TypeList("sparse_types", {}) +
                                      TypeList("Tdense", {"DT_FLOAT"}) + ShapeList("dense_shapes", {{-1, 2}}));
  const std::string v2 = PlaceholderNode("ser", "DT_STRING") + StrConst("names", {}, false) + StrConst("sk", {}, false) +
                         StrConst("dk", {"v"}, false) + StrConst("rk", {}, false) + ConstFloat("pad", {}, {-1}) +
                         NodeText("pe", "ParseExampleV2", {"ser", "names", "sk", "dk", "rk", "pad"},
                                  TypeList("Tdense", {"DT_FLOAT"}) + IntAttr("num_sparse", 0) + TypeList("sparse_types", {}) +
                                      TypeList("ragged_value_types", {}) + TypeList("ragged_split_types", {}) +
                                      ShapeList("dense_shapes", {{-1, 2}}));
  for (const std::string& g : {v1, v2}) {
    std::vector<Tensor> out;
    Status st = TryRunGraph(g, {{"ser", StringVector(in)}}, {"pe:0"}, &out);
    if (!p::kSdkReadsShapeLists) {
      EXPECT_ERROR(st, Code::kUnimplemented, "pe", "dense_shapes");
      continue;
    }
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(DimsOf(out[0]), (Dims{3, 2, 2}));
    ExpectValuesEq<float>(out[0], {1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1});
  }
  // V2 on a scalar: [k, 2].
  std::vector<Tensor> out;
  Status st = TryRunGraph(v2, {{"ser", Tensor::StringScalar(in[2])}}, {"pe:0"}, &out);
  if (!p::kSdkReadsShapeLists) return;
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 2}));
  ExpectValuesEq<float>(out[0], {5, 6});
}

std::string V2Graph(const std::string& ragged_split_type) {
  return PlaceholderNode("ser", "DT_STRING") + StrConst("names", {}, false) + StrConst("sk", {"s"}, false) +
         StrConst("dk", {}, false) + StrConst("rk", {"r"}, false) +
         NodeText("pv2", "ParseExampleV2", {"ser", "names", "sk", "dk", "rk"},
                  TypeList("Tdense", {}) + IntAttr("num_sparse", 1) + TypeList("sparse_types", {"DT_FLOAT"}) +
                      TypeList("ragged_value_types", {"DT_INT64"}) +
                      TypeList("ragged_split_types", {ragged_split_type}) + ShapeList("dense_shapes", {}));
}

TEST(ParseExampleV2GraphTest, SparseAndRaggedOnVectorAndScalar) {
  const std::vector<std::string> in = {Serialize({{"r", Int64Feature({1, 2})}, {"s", FloatFeature({0.25f})}}),
                                       Serialize({}), Serialize({{"r", Int64Feature({3})}})};
  for (const std::string split : {"DT_INT32", "DT_INT64"}) {
    std::vector<Tensor> out;
    Status st = TryRunGraph(V2Graph(split), {{"ser", StringVector(in)}}, {"pv2:0", "pv2:1", "pv2:2", "pv2:3", "pv2:4"},
                            &out);
    ASSERT_TRUE(st.ok()) << st;
    ExpectValuesEq<int64_t>(out[0], {0, 0});
    ExpectValuesEq<float>(out[1], {0.25f});
    ExpectValuesEq<int64_t>(out[2], {3, 1});
    ExpectValuesEq<int64_t>(out[3], {1, 2, 3});
    if (split == "DT_INT32") {
      ExpectValuesEq<int32_t>(out[4], {0, 2, 2, 3});
    } else {
      ExpectValuesEq<int64_t>(out[4], {0, 2, 2, 3});
    }
    // A scalar: indices [n, 1], shape [n], row splits [0, n].
    st = TryRunGraph(V2Graph(split), {{"ser", Tensor::StringScalar(in[0])}}, {"pv2:0", "pv2:2", "pv2:4"}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(DimsOf(out[0]), (Dims{1, 1}));
    ExpectValuesEq<int64_t>(out[1], {1});
    EXPECT_EQ(DimsOf(out[2]), (Dims{2}));
  }
  std::vector<Tensor> out;
  Tensor matrix(GR_STRING, TensorShape({1, 1}));
  Status st = TryRunGraph(V2Graph("DT_INT64"), {{"ser", matrix}}, {"pv2:0"}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st.message(), "scalar or")) << st;
}

}  // namespace
}  // namespace graphrt
