// The TF1 summary ops (ops/summary): each output is parsed back with the
// client's full graphrt.proto.Summary (an independent definition of the
// plugin's lite messages) and every field checked; histograms against a
// naive reference of TensorFlow's documented bucket rule written here;
// TensorFlow's error texts. ImageSummary's PNGs are decoded with libpng;
// AudioSummaryV2's WAVs are parsed by hand (RIFF chunks).
#include <gtest/gtest.h>
#include <png.h>

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

uint64_t LeBytes(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

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

// ------------------------------------------------------------------ ImageSummary

struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

Image DecodePng(const std::string& bytes) {
  Image out;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, bytes.data(), bytes.size())) {
    ADD_FAILURE() << "not a PNG: " << img.message;
    return out;
  }
  out.width = static_cast<int>(img.width);
  out.height = static_cast<int>(img.height);
  out.channels = static_cast<int>(PNG_IMAGE_SAMPLE_CHANNELS(img.format));
  out.pixels.resize(PNG_IMAGE_SIZE(img));
  EXPECT_TRUE(png_image_finish_read(&img, nullptr, out.pixels.data(), 0, nullptr)) << img.message;
  return out;
}

// The images of an ImageSummary output: tags, Summary.Image fields, pixels.
void ExpectImages(const proto::Summary& s, const std::vector<std::string>& tags, int height, int width, int depth,
                  const std::vector<std::vector<uint8_t>>& pixels) {
  ASSERT_EQ(s.value_size(), static_cast<int>(tags.size()));
  for (size_t i = 0; i < tags.size(); ++i) {
    const proto::Summary::Value& v = s.value(static_cast<int>(i));
    EXPECT_EQ(v.tag(), tags[i]);
    ASSERT_EQ(v.value_case(), proto::Summary::Value::kImage);
    EXPECT_EQ(v.image().height(), height);
    EXPECT_EQ(v.image().width(), width);
    EXPECT_EQ(v.image().colorspace(), depth);
    const Image img = DecodePng(v.image().encoded_image_string());
    EXPECT_EQ(img.width, width);
    EXPECT_EQ(img.height, height);
    EXPECT_EQ(img.channels, depth);
    EXPECT_EQ(img.pixels, pixels[i]) << "image " << i;
  }
}

// TensorFlow's documented float-to-uint8 rule, naively: the range of the
// pixels whose channels are all finite; all >= 0: v * 255/max; else
// v * 127/max|v| + 128; truncated; other pixels get bad_color.
std::vector<uint8_t> RefNormalize(const std::vector<float>& v, int depth, const std::vector<uint8_t>& bad) {
  const size_t pixels = v.size() / depth;
  auto finite = [&](size_t p) {
    for (int c = 0; c < depth; ++c)
      if (!std::isfinite(v[p * depth + c])) return false;
    return true;
  };
  float lo = INFINITY, hi = -INFINITY;
  for (size_t p = 0; p < pixels; ++p)
    if (finite(p))
      for (int c = 0; c < depth; ++c) {
        lo = std::min(lo, v[p * depth + c]);
        hi = std::max(hi, v[p * depth + c]);
      }
  float scale, offset;
  if (lo < 0) {
    const float m = std::max(std::fabs(lo), std::fabs(hi));
    scale = m < 1e-6f ? 0.0f : 127.0f / m;
    offset = 128.0f;
  } else {
    scale = hi < 1e-6f ? 0.0f : 255.0f / hi;
    offset = 0.0f;
  }
  std::vector<uint8_t> out(v.size());
  for (size_t p = 0; p < pixels; ++p)
    for (int c = 0; c < depth; ++c)
      out[p * depth + c] = finite(p) ? static_cast<uint8_t>(v[p * depth + c] * scale + offset) : bad[c];
  return out;
}

TEST(ImageSummaryTest, Uint8ImagesAsTheyAre) {
  std::vector<int64_t> vals(2 * 2 * 3 * 3);
  for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<int64_t>((i * 29) % 256);
  const Tensor t = IntTensor(GR_UINT8, {2, 2, 3, 3}, vals);
  std::vector<std::vector<uint8_t>> want(2);
  for (size_t i = 0; i < vals.size(); ++i) want[i / 18].push_back(static_cast<uint8_t>(vals[i]));
  // max_images 3 > batch 2: two images, tags numbered.
  ExpectImages(RunSummary("ImageSummary", {Fed(Str("img")), Fed(t)}, TAttr(GR_UINT8)), {"img/image/0", "img/image/1"}, 2,
               3, 3, want);
  // max_images 1: one image, tag without a number.
  ExpectImages(RunSummary("ImageSummary", {Fed(Str("img")), Fed(t)}, TAttr(GR_UINT8) + IntAttr("max_images", 1)),
               {"img/image"}, 2, 3, 3, {want[0]});
}

TEST(ImageSummaryTest, FloatImagesAreScaledHandChecked) {
  // All >= 0: * 255/2.  {0, 63.75, 127.5, 255} truncated.
  proto::Summary s = RunSummary("ImageSummary", {Fed(Str("g")), Fed(Floats({1, 2, 2, 1}, {0, 0.5f, 1, 2}))},
                                TAttr(GR_FLOAT) + IntAttr("max_images", 1));
  ExpectImages(s, {"g/image"}, 2, 2, 1, {{0, 63, 127, 255}});
  // Negative values: * 127/1 + 128.  {1, 128, 191.5, 255}.
  s = RunSummary("ImageSummary", {Fed(Str("g")), Fed(Floats({1, 2, 2, 1}, {-1, 0, 0.5f, 1}))},
                 TAttr(GR_FLOAT) + IntAttr("max_images", 1));
  ExpectImages(s, {"g/image"}, 2, 2, 1, {{1, 128, 191, 255}});
  // All zero: scale 0.
  s = RunSummary("ImageSummary", {Fed(Str("g")), Fed(Floats({1, 1, 2, 1}, {0, 0}))},
                 TAttr(GR_FLOAT) + IntAttr("max_images", 1));
  ExpectImages(s, {"g/image"}, 1, 2, 1, {{0, 0}});
  // half and double: the same values, the same pixels (exact in both).
  s = RunSummary("ImageSummary", {Fed(Str("h")), Fed(MakeTensor<uint16_t>(GR_HALF, {1, 1, 4, 1}, {0x0000, 0x3c00, 0x4000, 0x4400}))},
                 TAttr(GR_HALF) + IntAttr("max_images", 1));
  ExpectImages(s, {"h/image"}, 1, 4, 1, {{0, 63, 127, 255}});  // {0,1,2,4} * 63.75
  s = RunSummary("ImageSummary", {Fed(Str("d")), Fed(MakeTensor<double>(GR_DOUBLE, {1, 1, 4, 1}, {0, 1, 2, 4}))},
                 TAttr(GR_DOUBLE) + IntAttr("max_images", 1));
  ExpectImages(s, {"d/image"}, 1, 4, 1, {{0, 63, 127, 255}});
}

TEST(ImageSummaryTest, NonFinitePixelsGetBadColorAndReference) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // RGBA, 3 images, the second pixel of each non-finite in one channel;
  // the range ignores those pixels (100 would otherwise be the max).
  std::vector<float> v = UniformFloats(3 * 2 * 2 * 4, 11, -3, 5);
  v[4 + 2] = nan;
  v[16 + 4 + 0] = inf;
  v[32 + 4 + 3] = -inf;
  v[4 + 0] = 100;
  v[16 + 4 + 1] = 100;
  const std::vector<uint8_t> red = {255, 0, 0, 255};
  std::vector<std::vector<uint8_t>> want;
  for (int i = 0; i < 2; ++i) want.push_back(RefNormalize(std::vector<float>(v.begin() + 16 * i, v.begin() + 16 * (i + 1)), 4, red));
  EXPECT_EQ(std::vector<uint8_t>(want[0].begin() + 4, want[0].begin() + 8), red);
  proto::Summary s = RunSummary("ImageSummary", {Fed(Str("c")), Fed(Floats({3, 2, 2, 4}, v))},
                                TAttr(GR_FLOAT) + IntAttr("max_images", 2));
  ExpectImages(s, {"c/image/0", "c/image/1"}, 2, 2, 4, want);
  // A bad_color of our own (RGB).
  const std::vector<float> rgb = {0.5f, nan, 0.25f, 1, 1, 1};
  const std::string bad = "attr { key: \"bad_color\" value { tensor { dtype: DT_UINT8 tensor_shape { dim { size: 3 } } "
                          "int_val: 1 int_val: 2 int_val: 3 } } } ";
  s = RunSummary("ImageSummary", {Fed(Str("c")), Fed(Floats({1, 1, 2, 3}, rgb))}, TAttr(GR_FLOAT) + bad);
  ExpectImages(s, {"c/image/0"}, 1, 2, 3, {{1, 2, 3, 255, 255, 255}});
}

TEST(ImageSummaryTest, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ImageSummary", {Fed(Str("t")), Fed(Floats({2, 2, 1}, {1, 2, 3, 4}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Tensor must be 4-D with last dim 1, 3, or 4, not [2,2,1]");
  EXPECT_ERROR(TryOp("ImageSummary", {Fed(Str("t")), Fed(Floats({1, 1, 2, 2}, {1, 2, 3, 4}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "not [1,1,2,2]");
  EXPECT_ERROR(TryOp("ImageSummary", {Fed(Strings({1}, {"t"})), Fed(Floats({1, 1, 1, 1}, {1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Tags must be a scalar");
  EXPECT_ERROR(TryOp("ImageSummary", {Fed(Str("t")), Fed(Floats({1, 0, 2, 1}, {}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "input tensor must have non-zero dims. Found: [1, 0, 2, 1].");
  const std::string short_bad = "attr { key: \"bad_color\" value { tensor { dtype: DT_UINT8 tensor_shape { dim { size: 1 } } "
                                "int_val: 1 } } } ";
  EXPECT_ERROR(TryOp("ImageSummary", {Fed(Str("t")), Fed(Floats({1, 1, 1, 3}, {1, 2, 3}))}, TAttr(GR_FLOAT) + short_bad, 1, &out),
               Code::kInvalidArgument, "expected depth <= bad_color.size, got depth = 3, bad_color.size = 1");
  EXPECT_EQ(TryOp("ImageSummary", {Fed(Str("t")), Fed(IntTensor(GR_INT32, {1, 1, 1, 1}, {1}))}, TAttr(GR_INT32), 1, &out).code(),
            Code::kInvalidArgument);
  // An empty batch: no images.
  const proto::Summary s = RunSummary("ImageSummary", {Fed(Str("t")), Fed(Floats({0, 2, 2, 1}, {}))}, TAttr(GR_FLOAT));
  EXPECT_EQ(s.value_size(), 0);
}

// ----------------------------------------------------------------- AudioSummaryV2

struct Wav {
  int format = 0, channels = 0, bits = 0, block_align = 0;
  uint32_t rate = 0, byte_rate = 0;
  std::vector<int16_t> samples;
};

uint32_t U32(const std::string& s, size_t at) { return static_cast<uint32_t>(LeBytes(s, at, 4)); }

// RIFF/WAVE, walked chunk by chunk: "fmt " and "data".
Wav ParseWav(const std::string& b) {
  Wav w;
  EXPECT_GE(b.size(), 12u);
  if (b.size() < 12) return w;
  EXPECT_EQ(b.substr(0, 4), "RIFF");
  EXPECT_EQ(U32(b, 4), b.size() - 8);
  EXPECT_EQ(b.substr(8, 4), "WAVE");
  bool have_fmt = false, have_data = false;
  for (size_t at = 12; at + 8 <= b.size();) {
    const std::string id = b.substr(at, 4);
    const size_t size = U32(b, at + 4);
    EXPECT_LE(at + 8 + size, b.size()) << id;
    if (at + 8 + size > b.size()) break;
    if (id == "fmt ") {
      have_fmt = true;
      w.format = static_cast<int>(LeBytes(b, at + 8, 2));
      w.channels = static_cast<int>(LeBytes(b, at + 10, 2));
      w.rate = U32(b, at + 12);
      w.byte_rate = U32(b, at + 16);
      w.block_align = static_cast<int>(LeBytes(b, at + 20, 2));
      w.bits = static_cast<int>(LeBytes(b, at + 22, 2));
    } else if (id == "data") {
      have_data = true;
      for (size_t i = 0; i + 1 < size; i += 2) w.samples.push_back(static_cast<int16_t>(LeBytes(b, at + 8 + i, 2)));
    }
    at += 8 + size + (size & 1);
  }
  EXPECT_TRUE(have_fmt && have_data);
  return w;
}

void ExpectClip(const proto::Summary::Value& v, const std::string& tag, float rate, int channels, int frames,
                const std::vector<int16_t>& samples) {
  EXPECT_EQ(v.tag(), tag);
  ASSERT_EQ(v.value_case(), proto::Summary::Value::kAudio);
  const proto::Summary::Audio& a = v.audio();
  EXPECT_EQ(a.sample_rate(), rate);
  EXPECT_EQ(a.num_channels(), channels);
  EXPECT_EQ(a.length_frames(), frames);
  EXPECT_EQ(a.content_type(), "audio/wav");
  const Wav w = ParseWav(a.encoded_audio_string());
  EXPECT_EQ(w.format, 1);  // PCM
  EXPECT_EQ(w.channels, channels);
  EXPECT_EQ(w.rate, static_cast<uint32_t>(std::lrint(rate)));
  EXPECT_EQ(w.bits, 16);
  EXPECT_EQ(w.block_align, 2 * channels);
  EXPECT_EQ(w.byte_rate, w.rate * 2 * channels);
  EXPECT_EQ(w.samples, samples);
}

TEST(AudioSummaryV2Test, MonoClipsWithTensorFlowsSampleRule) {
  // round(x * 32768) clamped to [-32768, 32767]; halves round away from 0.
  const float half_lsb = 0.5f / 32768;
  const Tensor clips = Floats({2, 5}, {0, 0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -2.0f, half_lsb, -0.25f, 0.999f});
  const proto::Summary s = RunSummary("AudioSummaryV2", {Fed(Str("a")), Fed(clips), Fed(Floats({}, {8000}))}, "");
  ASSERT_EQ(s.value_size(), 2);  // max_outputs 3 > batch 2
  ExpectClip(s.value(0), "a/audio/0", 8000, 1, 5, {0, 16384, -16384, 32767, -32768});
  ExpectClip(s.value(1), "a/audio/1", 8000, 1, 5, {32767, -32768, 1, -8192, 32735});  // 0.999 * 32768 = 32735.2
}

TEST(AudioSummaryV2Test, StereoAndMaxOutputs) {
  const Tensor clips = Floats({2, 3, 2}, {0.25f, -0.25f, 0.5f, -0.5f, 0, 1, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f});
  proto::Summary s = RunSummary("AudioSummaryV2", {Fed(Str("st")), Fed(clips), Fed(Floats({}, {44100.4f}))},
                                IntAttr("max_outputs", 1));
  ASSERT_EQ(s.value_size(), 1);
  ExpectClip(s.value(0), "st/audio", 44100.4f, 2, 3, {8192, -8192, 16384, -16384, 0, 32767});
  // Zero frames: an empty data chunk. sample_rate as a one-element vector.
  s = RunSummary("AudioSummaryV2", {Fed(Str("e")), Fed(Floats({1, 0}, {})), Fed(Floats({1}, {16000}))}, "");
  ASSERT_EQ(s.value_size(), 1);
  ExpectClip(s.value(0), "e/audio/0", 16000, 1, 0, {});
}

TEST(AudioSummaryV2Test, Errors) {
  std::vector<Tensor> out;
  auto run = [&](const Tensor& tag, const Tensor& t, const Tensor& rate) {
    return TryOp("AudioSummaryV2", {Fed(tag), Fed(t), Fed(rate)}, "", 1, &out);
  };
  const Tensor ok = Floats({1, 2}, {0, 0});
  EXPECT_ERROR(run(Strings({1}, {"a"}), ok, Floats({}, {8000})), Code::kInvalidArgument, "Tag must be a scalar");
  EXPECT_ERROR(run(Str("a"), Floats({2}, {0, 0}), Floats({}, {8000})), Code::kInvalidArgument, "Tensor must be 3-D or 2-D, got: [2]");
  EXPECT_ERROR(run(Str("a"), ok, Floats({}, {0})), Code::kInvalidArgument, "sample_rate must be > 0");
  EXPECT_ERROR(run(Str("a"), ok, Floats({}, {-5})), Code::kInvalidArgument, "sample_rate must be > 0");
  EXPECT_ERROR(run(Str("a"), ok, Floats({}, {std::numeric_limits<float>::quiet_NaN()})), Code::kInvalidArgument,
               "sample_rate must be > 0");
  EXPECT_ERROR(run(Str("a"), ok, Floats({}, {1e30f})), Code::kInvalidArgument, "does not fit a WAV header");
  EXPECT_ERROR(run(Str("a"), ok, Floats({2}, {8000, 8000})), Code::kInvalidArgument,
               "sample_rate must be rank-0 or contain a single value");
  EXPECT_ERROR(run(Str("a"), Floats({1, 2, 0}, {}), Floats({}, {8000})), Code::kInvalidArgument, "1 to 1024 channels");
}

}  // namespace
}  // namespace graphrt
