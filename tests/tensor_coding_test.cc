// RecvTensor's hand-made encoding (client/distributed/src/tensor_coding.h)
// against protobuf's generated code, the reference: what one writes the
// other reads, in any slicing of the bytes, and the sender's tensor goes
// out without a copy.
#include "tensor_coding.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace graphrt {
namespace distributed {
namespace {

using testing::MakeTensor;
using testing::ToVector;

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string out;
  for (const grpc::Slice& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// `bytes` as gRPC may deliver them: in slices of `piece` bytes.
grpc::ByteBuffer Sliced(const std::string& bytes, size_t piece) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += piece)
    slices.emplace_back(bytes.data() + i, std::min(piece, bytes.size() - i));
  if (slices.empty()) slices.emplace_back(std::string());
  return grpc::ByteBuffer(slices.data(), slices.size());
}

Tensor Iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 7.0f;
  return MakeTensor<float>(GR_FLOAT, {n / 4, 4}, v);
}

TEST(TensorCodingTest, LargeTensorGoesOutFromItsOwnBufferAndProtobufReadsIt) {
  const Tensor value = Iota(1 << 16);  // 256 KiB
  {
    grpc::ByteBuffer buffer = EncodeRecvTensorResponse(value, false, 1234567);
    EXPECT_FALSE(value.RefCountIsOne()) << "the message holds the tensor's buffer";
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(buffer.Dump(&slices).ok());
    bool shares = false;
    for (const grpc::Slice& s : slices) shares |= s.begin() == static_cast<const uint8_t*>(value.raw_data());
    EXPECT_TRUE(shares) << "the tensor's bytes were copied";

    proto::RecvTensorResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(Bytes(buffer)));
    EXPECT_FALSE(parsed.is_dead());
    EXPECT_EQ(parsed.send_start_micros(), 1234567);
    Tensor back;
    ASSERT_TRUE(Tensor::FromProto(parsed.tensor(), &back).ok());
    EXPECT_EQ(back.shape(), value.shape());
    EXPECT_EQ(ToVector<float>(back), ToVector<float>(value));
  }
  EXPECT_TRUE(value.RefCountIsOne()) << "the message let the buffer go";
}

TEST(TensorCodingTest, SmallStringAndDeadValuesRoundTripThroughProtobuf) {
  std::vector<Tensor> values = {MakeTensor<int32_t>(GR_INT32, {3}, {1, -2, 3}),
                                MakeTensor<double>(GR_DOUBLE, {}, {2.5}), MakeTensor<float>(GR_FLOAT, {0, 3}, {})};
  Tensor strings(GR_STRING, TensorShape({2}));
  strings.set_string(0, "a");
  strings.set_string(1, std::string("b\0c", 3));
  values.push_back(strings);
  for (const Tensor& v : values) {
    grpc::ByteBuffer buffer = EncodeRecvTensorResponse(v, false, 0);
    proto::RecvTensorResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(Bytes(buffer)));
    Tensor back;
    ASSERT_TRUE(Tensor::FromProto(parsed.tensor(), &back).ok());
    EXPECT_EQ(back.DebugString(100), v.DebugString(100));
    bool dead = true;
    Tensor decoded;
    ASSERT_TRUE(DecodeRecvTensorResponse(&buffer, HostAllocator(), &decoded, &dead).ok());
    EXPECT_FALSE(dead);
    EXPECT_EQ(decoded.DebugString(100), v.DebugString(100));
  }
  grpc::ByteBuffer dead_buffer = EncodeRecvTensorResponse(Tensor(), true, 5);
  proto::RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Bytes(dead_buffer)));
  EXPECT_TRUE(parsed.is_dead());
  EXPECT_FALSE(parsed.has_tensor());
  bool dead = false;
  Tensor decoded;
  ASSERT_TRUE(DecodeRecvTensorResponse(&dead_buffer, HostAllocator(), &decoded, &dead).ok());
  EXPECT_TRUE(dead);
}

TEST(TensorCodingTest, ReadsProtobufsEncodingInAnySlicing) {
  const Tensor value = Iota(4096);
  proto::RecvTensorResponse response;
  value.AsProtoTensorContent(response.mutable_tensor());
  response.set_send_start_micros(99);
  const std::string bytes = response.SerializeAsString();
  for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, size_t{4096}, bytes.size()}) {
    grpc::ByteBuffer buffer = Sliced(bytes, piece);
    Tensor back;
    bool dead = true;
    ASSERT_TRUE(DecodeRecvTensorResponse(&buffer, HostAllocator(), &back, &dead).ok()) << piece;
    EXPECT_FALSE(dead);
    EXPECT_EQ(back.shape(), value.shape());
    EXPECT_EQ(ToVector<float>(back), ToVector<float>(value)) << piece;
  }
}

TEST(TensorCodingTest, ReadsEveryWellFormedForm) {
  // Typed values instead of tensor_content; the tensor after the other
  // fields; unknown fields around it; the content before the shape.
  proto::RecvTensorResponse typed;
  typed.mutable_tensor()->set_dtype(proto::DT_FLOAT);
  typed.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  typed.mutable_tensor()->add_float_val(1.5f);
  typed.mutable_tensor()->add_float_val(-2.0f);  // the last value repeats
  std::string forms[3];
  forms[0] = typed.SerializeAsString();
  proto::RecvTensorResponse plain;
  MakeTensor<float>(GR_FLOAT, {3}, {1.5f, -2.0f, -2.0f}).AsProtoTensorContent(plain.mutable_tensor());
  plain.set_require_ack(true);
  const std::string tensor_field = plain.SerializeAsString();
  // field 9 (unknown) varint 1, then the message, then field 3 = 7
  forms[1] = std::string("\x48\x01", 2) + tensor_field + std::string("\x18\x07", 2);
  proto::TensorProto content_first;
  content_first.set_tensor_content(plain.tensor().tensor_content());
  proto::TensorProto rest;
  rest.set_dtype(proto::DT_FLOAT);
  *rest.mutable_tensor_shape() = plain.tensor().tensor_shape();
  const std::string tensor_bytes = content_first.SerializeAsString() + rest.SerializeAsString();
  forms[2] = std::string("\x0a", 1) + static_cast<char>(tensor_bytes.size()) + tensor_bytes;
  for (const std::string& form : forms) {
    grpc::ByteBuffer buffer = Sliced(form, 5);
    Tensor back;
    bool dead = true;
    Status s = DecodeRecvTensorResponse(&buffer, HostAllocator(), &back, &dead);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_FALSE(dead);
    EXPECT_EQ(ToVector<float>(back), (std::vector<float>{1.5f, -2.0f, -2.0f}));
  }
}

TEST(TensorCodingTest, MalformedResponsesAreClearErrors) {
  proto::RecvTensorResponse response;
  Iota(64).AsProtoTensorContent(response.mutable_tensor());
  const std::string good = response.SerializeAsString();
  // Content one byte short of what the shape needs.
  proto::RecvTensorResponse short_content = response;
  short_content.mutable_tensor()->mutable_tensor_content()->pop_back();
  // A length that runs past the end; a message cut short; not a message.
  std::string huge_length = good;
  huge_length[1] = static_cast<char>(0xff);
  huge_length.insert(2, "\xff\xff\x07");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {short_content.SerializeAsString(), "tensor_content has 255 bytes"},
      {good.substr(0, good.size() - 10), "Could not parse"},
      {huge_length, "Could not parse"},
      {std::string("\x0a\x02\x08\x63", 4), "RecvTensorResponse's tensor"},  // dtype 99
      // dtype 2385 (no DataType), shape [2], 8 bytes of content: the fuzzer's
      {std::string("\x0a\x13\x08\xd1\x12\x12\x04\x12\x02\x08\x02\x22\x08", 13) + std::string(8, '\x01'),
       "RecvTensorResponse's tensor"},
      {std::string(), "RecvTensorResponse's tensor"},  // no tensor, not dead
  };
  for (const auto& [bytes, want] : cases) {
    grpc::ByteBuffer buffer = Sliced(bytes, 16);
    Tensor back;
    bool dead = false;
    Status s = DecodeRecvTensorResponse(&buffer, HostAllocator(), &back, &dead);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(want), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace distributed
}  // namespace graphrt
