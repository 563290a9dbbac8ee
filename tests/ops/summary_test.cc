// The TF1 summary ops (ops/summary): each output is parsed back with the
// client's full graphrt.proto.Summary (an independent definition of the
// plugin's lite messages) and every field checked; histograms against a
// naive reference of TensorFlow's documented bucket rule written here;
// TensorFlow's error texts.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "graphrt/proto/summary.pb.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

Tensor Strings(const Dims& dims, const std::vector<std::string>& v) {
  Tensor t(GR_STRING, TensorShape(dims));
  EXPECT_EQ(t.NumElements(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) t.set_string(static_cast<int64_t>(i), v[i]);
  return t;
}
Tensor Str(const std::string& s) { return Strings({}, {s}); }

Tensor Floats(const Dims& dims, const std::vector<float>& v) { return MakeTensor<float>(GR_FLOAT, dims, v); }

// The op's output: a scalar string, parsed as a Summary.
proto::Summary RunSummary(const std::string& op, const std::vector<Arg>& args, const std::string& attrs,
                          std::string* bytes = nullptr) {
  std::vector<Tensor> out = RunOp(op, args, attrs);
  proto::Summary s;
  if (out.size() != 1) return s;
  EXPECT_EQ(out[0].dtype(), GR_STRING);
  EXPECT_EQ(out[0].shape().dims(), 0) << "summary ops output a scalar";
  const std::string_view b = out[0].string_at(0);
  EXPECT_TRUE(s.ParseFromArray(b.data(), static_cast<int>(b.size()))) << op << ": output is not a Summary";
  if (bytes) *bytes = std::string(b);
  return s;
}

// ---------------------------------------------------------------- ScalarSummary

TEST(ScalarSummaryTest, OneValuePerElementRowMajor) {
  const proto::Summary s = RunSummary("ScalarSummary", {Fed(Strings({2, 2}, {"a", "b", "c", "d"})),
                                                        Fed(Floats({2, 2}, {1.5f, -2.0f, 0.0f, 1e30f}))},
                                      TAttr(GR_FLOAT));
  ASSERT_EQ(s.value_size(), 4);
  const char* tags[] = {"a", "b", "c", "d"};
  const float vals[] = {1.5f, -2.0f, 0.0f, 1e30f};
  for (int i = 0; i < 4; ++i) {
    const proto::Summary::Value& v = s.value(i);
    EXPECT_EQ(v.tag(), tags[i]);
    ASSERT_EQ(v.value_case(), proto::Summary::Value::kSimpleValue);
    EXPECT_EQ(v.simple_value(), vals[i]);
    EXPECT_EQ(v.node_name(), "");
    EXPECT_FALSE(v.has_metadata());
  }
}

TEST(ScalarSummaryTest, BytesOfTensorFlowsExample) {
  // tf_proto_facts.md §10: tag "loss", 0.5.
  std::string bytes;
  RunSummary("ScalarSummary", {Fed(Str("loss")), Fed(Floats({}, {0.5f}))}, TAttr(GR_FLOAT), &bytes);
  const std::string want("\x0a\x0b\x0a\x04loss\x15\x00\x00\x00\x3f", 13);
  EXPECT_EQ(bytes, want);
  // A zero value is still written (a oneof member), an empty tag is not.
  RunSummary("ScalarSummary", {Fed(Str("")), Fed(Floats({}, {0.0f}))}, TAttr(GR_FLOAT), &bytes);
  EXPECT_EQ(bytes, std::string("\x0a\x05\x15\x00\x00\x00\x00", 7));
}

TEST(ScalarSummaryTest, ValuesOfEveryRealTypeBecomeFloats) {
  proto::Summary s = RunSummary("ScalarSummary", {Fed(Strings({3}, {"x", "y", "z"})),
                                                  Fed(IntTensor(GR_INT64, {3}, {7, -3, 16777217}))},
                                TAttr(GR_INT64));
  ASSERT_EQ(s.value_size(), 3);
  EXPECT_EQ(s.value(0).simple_value(), 7.0f);
  EXPECT_EQ(s.value(1).simple_value(), -3.0f);
  EXPECT_EQ(s.value(2).simple_value(), 16777216.0f);  // float(2^24 + 1)
  s = RunSummary("ScalarSummary", {Fed(Str("d")), Fed(MakeTensor<double>(GR_DOUBLE, {}, {0.1}))}, TAttr(GR_DOUBLE));
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_EQ(s.value(0).simple_value(), 0.1f);
  s = RunSummary("ScalarSummary", {Fed(Strings({2}, {"u", "v"})), Fed(IntTensor(GR_UINT8, {2}, {255, 0}))},
                 TAttr(GR_UINT8));
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).simple_value(), 255.0f);
  // half: 0x3e00 = 1.5, 0xc400 = -4.
  s = RunSummary("ScalarSummary", {Fed(Strings({2}, {"h0", "h1"})), Fed(MakeTensor<uint16_t>(GR_HALF, {2}, {0x3e00, 0xc400}))},
                 TAttr(GR_HALF));
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).simple_value(), 1.5f);
  EXPECT_EQ(s.value(1).simple_value(), -4.0f);
  // Empty tags and values: an empty Summary.
  s = RunSummary("ScalarSummary", {Fed(Strings({0}, {})), Fed(Floats({0}, {}))}, TAttr(GR_FLOAT));
  EXPECT_EQ(s.value_size(), 0);
}

TEST(ScalarSummaryTest, ShapeMismatchIsTensorFlowsError) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ScalarSummary", {Fed(Strings({2}, {"a", "b"})), Fed(Floats({3}, {1, 2, 3}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "tags and values not the same shape: [2] != [3]", "op");
  // A single tag is named.
  const Status s = TryOp("ScalarSummary", {Fed(Str("loss")), Fed(Floats({2}, {1, 2}))}, TAttr(GR_FLOAT), 1, &out);
  EXPECT_ERROR(s, Code::kInvalidArgument, "tags and values not the same shape: [] != [2] (tag 'loss')");
  // Same element count, other shape: still an error.
  EXPECT_ERROR(TryOp("ScalarSummary", {Fed(Strings({2, 1}, {"a", "b"})), Fed(Floats({2}, {1, 2}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "[2,1] != [2]");
  // Not a real number type (the op definition refuses it).
  EXPECT_EQ(TryOp("ScalarSummary", {Fed(Str("s")), Fed(Str("v"))}, TAttr(GR_STRING), 1, &out).code(),
            Code::kInvalidArgument);
}

// ------------------------------------------------------------- HistogramSummary

// TensorFlow's default limits as documented: 1e-12 times 1.1 again and
// again while below 1e20, then DBL_MAX; the negations in ascending order, 0.
std::vector<double> RefLimits() {
  std::vector<double> pos;
  double v = 1e-12;
  while (v < 1e20) {
    pos.push_back(v);
    v = v * 1.1;
  }
  pos.push_back(DBL_MAX);
  std::vector<double> all;
  for (size_t i = pos.size(); i > 0; --i) all.push_back(-pos[i - 1]);
  all.push_back(0.0);
  for (double p : pos) all.push_back(p);
  return all;
}

// Naive reference: linear search for the first limit > x; then the runs of
// empty buckets folded into their last limit.
proto::HistogramProto RefHistogram(const std::vector<double>& xs) {
  const std::vector<double> limits = RefLimits();
  std::vector<double> counts(limits.size(), 0.0);
  proto::HistogramProto h;
  double mn = DBL_MAX, mx = -DBL_MAX, sum = 0, sq = 0;
  for (double x : xs) {
    size_t b = 0;
    while (b < limits.size() && !(limits[b] > x)) ++b;
    counts[b] += 1;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    sum += x;
    sq += x * x;
  }
  h.set_min(mn);
  h.set_max(mx);
  h.set_num(static_cast<double>(xs.size()));
  h.set_sum(sum);
  h.set_sum_squares(sq);
  bool in_empty_run = false;
  for (size_t i = 0; i < limits.size(); ++i) {
    if (counts[i] > 0) {
      h.add_bucket_limit(limits[i]);
      h.add_bucket(counts[i]);
      in_empty_run = false;
    } else if (in_empty_run) {
      h.set_bucket_limit(h.bucket_limit_size() - 1, limits[i]);
    } else {
      h.add_bucket_limit(limits[i]);
      h.add_bucket(0);
      in_empty_run = true;
    }
  }
  return h;
}

void ExpectHistogram(const proto::HistogramProto& got, const proto::HistogramProto& want) {
  EXPECT_EQ(got.min(), want.min());
  EXPECT_EQ(got.max(), want.max());
  EXPECT_EQ(got.num(), want.num());
  EXPECT_EQ(got.sum(), want.sum());
  EXPECT_EQ(got.sum_squares(), want.sum_squares());
  ASSERT_EQ(got.bucket_limit_size(), want.bucket_limit_size());
  ASSERT_EQ(got.bucket_size(), want.bucket_size());
  for (int i = 0; i < want.bucket_size(); ++i) {
    EXPECT_EQ(got.bucket_limit(i), want.bucket_limit(i)) << "limit " << i;
    EXPECT_EQ(got.bucket(i), want.bucket(i)) << "bucket " << i;
  }
}

proto::HistogramProto RunHistogram(const Tensor& values, const std::string& tag = "h") {
  const proto::Summary s = RunSummary("HistogramSummary", {Fed(Str(tag)), Fed(values)}, TAttr(values.dtype()));
  if (s.value_size() != 1) {
    ADD_FAILURE() << "want one value, got " << s.value_size();
    return proto::HistogramProto();
  }
  EXPECT_EQ(s.value(0).tag(), tag);
  EXPECT_EQ(s.value(0).value_case(), proto::Summary::Value::kHisto);
  return s.value(0).histo();
}

TEST(HistogramSummaryTest, ReferenceLimitsAreTensorFlows) {
  // The documented count and landmarks, so the reference itself is checked.
  const std::vector<double> l = RefLimits();
  ASSERT_EQ(l.size(), 1551u);
  EXPECT_EQ(l.front(), -DBL_MAX);
  EXPECT_EQ(l[775], 0.0);
  EXPECT_EQ(l[776], 1e-12);
  EXPECT_EQ(l[774], -1e-12);
  EXPECT_NEAR(l[777], 1.1e-12, 1e-26);
  EXPECT_NEAR(l[1549], 9.92e19, 0.01e19);
  EXPECT_EQ(l.back(), DBL_MAX);
}

TEST(HistogramSummaryTest, OneValueHandChecked) {
  // 1.0 lies in the bucket whose limit is 1e-12 * 1.1^290 (the first > 1):
  // an empty run up to the limit below it, the bucket, an empty run to DBL_MAX.
  const proto::HistogramProto h = RunHistogram(Floats({}, {1.0f}));
  ASSERT_EQ(h.bucket_size(), 3);
  EXPECT_LE(h.bucket_limit(0), 1.0);
  EXPECT_GT(h.bucket_limit(1), 1.0);
  EXPECT_NEAR(h.bucket_limit(1) / h.bucket_limit(0), 1.1, 1e-9);
  EXPECT_NEAR(h.bucket_limit(1), 1e-12 * std::pow(1.1, 290), 1e-9);
  EXPECT_EQ(h.bucket_limit(2), DBL_MAX);
  EXPECT_EQ(h.bucket(0), 0.0);
  EXPECT_EQ(h.bucket(1), 1.0);
  EXPECT_EQ(h.bucket(2), 0.0);
  EXPECT_EQ(h.min(), 1.0);
  EXPECT_EQ(h.max(), 1.0);
  EXPECT_EQ(h.num(), 1.0);
  EXPECT_EQ(h.sum(), 1.0);
  EXPECT_EQ(h.sum_squares(), 1.0);
}

TEST(HistogramSummaryTest, MatchesNaiveReference) {
  // Zero (goes to the 1e-12 bucket), tiny values either side of ±1e-12,
  // exact limits (upper bound: the next bucket), repeats, huge values.
  const std::vector<float> xs = {0.0f, 0.0f, 1e-13f, -1e-13f, 1e-12f, -1e-12f, 2.5f, 2.5f, -2.5f, 3.0f,
                                 -7.25f, 1e10f, -1e10f, 3e38f, -3e38f, 1.1f, 0.5f, 123456.0f};
  std::vector<double> ds(xs.begin(), xs.end());
  ExpectHistogram(RunHistogram(Floats({static_cast<int64_t>(xs.size())}, xs)), RefHistogram(ds));
  // Random values, and the same values as doubles and as a matrix.
  const std::vector<float> r = UniformFloats(500, 7, -50, 50);
  ds.assign(r.begin(), r.end());
  ExpectHistogram(RunHistogram(Floats({20, 25}, r)), RefHistogram(ds));
  ExpectHistogram(RunHistogram(MakeTensor<double>(GR_DOUBLE, {500}, ds)), RefHistogram(ds));
  // Integers.
  ExpectHistogram(RunHistogram(IntTensor(GR_INT32, {5}, {0, 1, -1, 1000000, 3})), RefHistogram({0, 1, -1, 1000000, 3}));
}

TEST(HistogramSummaryTest, EmptyValues) {
  // TensorFlow's empty histogram: min DBL_MAX, max -DBL_MAX, one (DBL_MAX, 0).
  const proto::HistogramProto h = RunHistogram(Floats({0}, {}));
  EXPECT_EQ(h.min(), DBL_MAX);
  EXPECT_EQ(h.max(), -DBL_MAX);
  EXPECT_EQ(h.num(), 0.0);
  ASSERT_EQ(h.bucket_size(), 1);
  EXPECT_EQ(h.bucket_limit(0), DBL_MAX);
  EXPECT_EQ(h.bucket(0), 0.0);
}

TEST(HistogramSummaryTest, NonFiniteAndBadTagAreErrors) {
  std::vector<Tensor> out;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // TensorFlow names the node ("op" in these graphs).
  EXPECT_ERROR(TryOp("HistogramSummary", {Fed(Str("w")), Fed(Floats({3}, {1, nan, 2}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Nan in summary histogram for: op");
  EXPECT_ERROR(TryOp("HistogramSummary", {Fed(Str("w")), Fed(Floats({2}, {1, -inf}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Infinity in summary histogram for: op");
  EXPECT_ERROR(TryOp("HistogramSummary", {Fed(Strings({1}, {"w"})), Fed(Floats({1}, {1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "tags must be scalar");
}

// ----------------------------------------------------------------- MergeSummary

std::string Serialized(const proto::Summary& s) { return s.SerializeAsString(); }

proto::Summary ScalarOf(const std::string& tag, float v) {
  proto::Summary s;
  proto::Summary::Value* val = s.add_value();
  val->set_tag(tag);
  val->set_simple_value(v);
  return s;
}

TEST(MergeSummaryTest, ConcatenatesInInputOrder) {
  proto::Summary two = ScalarOf("b", 2);
  proto::Summary::Value* h = two.add_value();
  h->set_tag("c");
  h->mutable_histo()->set_num(4);
  h->mutable_histo()->add_bucket_limit(1.5);
  h->mutable_histo()->add_bucket(4);
  const proto::Summary s = RunSummary(
      "MergeSummary",
      {Fed(Str(Serialized(ScalarOf("a", 1)))), Fed(Strings({2}, {Serialized(two), Serialized(ScalarOf("d", 4))}))},
      IntAttr("N", 2));
  ASSERT_EQ(s.value_size(), 4);
  EXPECT_EQ(s.value(0).tag(), "a");
  EXPECT_EQ(s.value(0).simple_value(), 1.0f);
  EXPECT_EQ(s.value(1).tag(), "b");
  EXPECT_EQ(s.value(1).simple_value(), 2.0f);
  EXPECT_EQ(s.value(2).tag(), "c");
  ASSERT_TRUE(s.value(2).has_histo());
  EXPECT_EQ(s.value(2).histo().SerializeAsString(), h->histo().SerializeAsString());
  EXPECT_EQ(s.value(3).tag(), "d");
  EXPECT_EQ(s.value(3).simple_value(), 4.0f);
}

TEST(MergeSummaryTest, EmptyTagsMayRepeat) {
  // TensorSummary values have no tag; two of them merge.
  proto::Summary t;
  t.add_value()->set_node_name("n1");
  proto::Summary u;
  u.add_value()->set_node_name("n2");
  const proto::Summary s =
      RunSummary("MergeSummary", {Fed(Str(Serialized(t))), Fed(Str(Serialized(u))), Fed(Str(""))}, IntAttr("N", 3));
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).node_name(), "n1");
  EXPECT_EQ(s.value(1).node_name(), "n2");
}

TEST(MergeSummaryTest, DuplicateTagAndGarbageAreErrors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("MergeSummary", {Fed(Str(Serialized(ScalarOf("a", 1)))), Fed(Str(Serialized(ScalarOf("a", 2))))},
                     IntAttr("N", 2), 1, &out),
               Code::kInvalidArgument, "Duplicate tag a found in summary inputs");
  EXPECT_ERROR(TryOp("MergeSummary", {Fed(Strings({2}, {Serialized(ScalarOf("a", 1)), "\xff\xff\xff"}))}, IntAttr("N", 1), 1, &out),
               Code::kInvalidArgument, "Could not parse one of the summary inputs");
}

// ------------------------------------------------------- TensorSummary(V2)

TEST(TensorSummaryV2Test, TagMetadataAndTensorContent) {
  proto::SummaryMetadata md;
  md.mutable_plugin_data()->set_plugin_name("scalars");
  md.mutable_plugin_data()->set_content(std::string("\x01\x02", 2));
  md.set_display_name("Loss");
  md.set_summary_description("the loss");
  const std::vector<float> vals = {1.0f, -2.5f, 3.25f, 0.0f, 5.0f, 6.0f};
  const proto::Summary s = RunSummary(
      "TensorSummaryV2", {Fed(Str("t/loss")), Fed(Floats({2, 3}, vals)), Fed(Str(md.SerializeAsString()))},
      TAttr(GR_FLOAT));
  ASSERT_EQ(s.value_size(), 1);
  const proto::Summary::Value& v = s.value(0);
  EXPECT_EQ(v.tag(), "t/loss");
  EXPECT_EQ(v.node_name(), "");
  EXPECT_EQ(v.metadata().SerializeAsString(), md.SerializeAsString());
  ASSERT_EQ(v.value_case(), proto::Summary::Value::kTensor);
  const proto::TensorProto& t = v.tensor();
  EXPECT_EQ(t.dtype(), proto::DT_FLOAT);
  ASSERT_EQ(t.tensor_shape().dim_size(), 2);
  EXPECT_EQ(t.tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(t.tensor_shape().dim(1).size(), 3);
  // Raw little-endian floats in tensor_content, as TensorFlow's AsProtoTensorContent.
  ASSERT_EQ(t.tensor_content().size(), vals.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(t.tensor_content().data(), vals.data(), t.tensor_content().size()), 0);
  EXPECT_EQ(t.float_val_size(), 0);
  // The core's own reading of the TensorProto agrees.
  Tensor back;
  ASSERT_TRUE(Tensor::FromProto(t, &back).ok());
  ExpectValuesEq<float>(back, vals);
}

TEST(TensorSummaryV2Test, StringsScalarsAndEmptyMetadata) {
  proto::Summary s = RunSummary("TensorSummaryV2", {Fed(Str("text")), Fed(Strings({2}, {"hello", std::string("\0b", 2)})), Fed(Str(""))},
                                TAttr(GR_STRING));
  ASSERT_EQ(s.value_size(), 1);
  const proto::TensorProto& t = s.value(0).tensor();
  EXPECT_EQ(t.dtype(), proto::DT_STRING);
  ASSERT_EQ(t.string_val_size(), 2);
  EXPECT_EQ(t.string_val(0), "hello");
  EXPECT_EQ(t.string_val(1), std::string("\0b", 2));
  EXPECT_TRUE(t.tensor_content().empty());
  EXPECT_TRUE(s.value(0).has_metadata());  // present, empty, as TensorFlow writes it
  EXPECT_EQ(s.value(0).metadata().ByteSizeLong(), 0u);
  // An int64 scalar: a present but empty shape.
  s = RunSummary("TensorSummaryV2", {Fed(Str("step")), Fed(IntTensor(GR_INT64, {}, {-2})), Fed(Str(""))}, TAttr(GR_INT64));
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_TRUE(s.value(0).tensor().has_tensor_shape());
  EXPECT_EQ(s.value(0).tensor().tensor_shape().dim_size(), 0);
  EXPECT_EQ(s.value(0).tensor().dtype(), proto::DT_INT64);
  const int64_t want = -2;
  EXPECT_EQ(s.value(0).tensor().tensor_content(), std::string(reinterpret_cast<const char*>(&want), 8));
}

TEST(TensorSummaryV2Test, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("TensorSummaryV2", {Fed(Strings({1}, {"t"})), Fed(Floats({1}, {1})), Fed(Str(""))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "tag must be scalar");
  EXPECT_ERROR(TryOp("TensorSummaryV2", {Fed(Str("t")), Fed(Floats({1}, {1})), Fed(Strings({1}, {""}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "serialized_summary_metadata must be scalar");
  EXPECT_ERROR(TryOp("TensorSummaryV2", {Fed(Str("t")), Fed(Floats({1}, {1})), Fed(Str("\xff\xff"))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "serialized_summary_metadata is not a serialized SummaryMetadata");
}

TEST(TensorSummaryTest, NamedByTheNode) {
  const proto::Summary s = RunSummary("TensorSummary", {Fed(IntTensor(GR_INT32, {3}, {4, 5, -6}))},
                                      TAttr(GR_INT32) + StrAttr("description", "ignored by TensorFlow too") +
                                          StrAttr("display_name", "shown"));
  ASSERT_EQ(s.value_size(), 1);
  const proto::Summary::Value& v = s.value(0);
  EXPECT_EQ(v.node_name(), "op");
  EXPECT_EQ(v.tag(), "");
  EXPECT_FALSE(v.has_metadata());
  EXPECT_EQ(v.tensor().dtype(), proto::DT_INT32);
  ASSERT_EQ(v.tensor().tensor_shape().dim_size(), 1);
  EXPECT_EQ(v.tensor().tensor_shape().dim(0).size(), 3);
  const int32_t want[] = {4, 5, -6};
  EXPECT_EQ(v.tensor().tensor_content(), std::string(reinterpret_cast<const char*>(want), sizeof(want)));
}

}  // namespace
}  // namespace graphrt
