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

// RunGraph's messages: named tensors in a repeated field (RunGraphResponse's
// recv = 1) around other fields, against protobuf's encoding both ways.
TEST(TensorCodingTest, NamedTensorsRoundTripThroughProtobuf) {
  Tensor strings(GR_STRING, TensorShape({1}));
  strings.set_string(0, "fantasia");
  const NamedTensors tensors = {{"big", Iota(1 << 14)},  // 64 KiB: zero-copy
                                {"small", MakeTensor<int64_t>(GR_INT64, {2}, {7, -9})},
                                {"empty", MakeTensor<float>(GR_FLOAT, {0, 4}, {})},
                                {"strings", strings}};
  proto::RunGraphResponse rest;
  rest.set_status_code(3);
  rest.set_status_error_message("not an error");
  rest.mutable_step_stats()->add_dev_stats()->set_device("/job:w/replica:0/task:0/device:CPU:0");
  grpc::ByteBuffer buffer = EncodeWithTensors(rest, 1, tensors);
  EXPECT_FALSE(tensors[0].second.RefCountIsOne()) << "the large tensor went out from its own buffer";

  proto::RunGraphResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Bytes(buffer)));
  EXPECT_EQ(parsed.status_code(), 3);
  EXPECT_EQ(parsed.step_stats().dev_stats(0).device(), "/job:w/replica:0/task:0/device:CPU:0");
  ASSERT_EQ(parsed.recv_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(parsed.recv(i).name(), tensors[i].first);
    Tensor back;
    ASSERT_TRUE(Tensor::FromProto(parsed.recv(i).tensor(), &back).ok()) << i;
    EXPECT_EQ(back.DebugString(1 << 20), tensors[i].second.DebugString(1 << 20)) << i;
  }
  // Back through the decoder, from its own bytes and from protobuf's, in
  // any slicing.
  for (const std::string& bytes : {Bytes(buffer), parsed.SerializeAsString()})
    for (size_t piece : {size_t{3}, size_t{4096}, bytes.size()}) {
      grpc::ByteBuffer in = Sliced(bytes, piece);
      proto::RunGraphResponse got_rest;
      NamedTensors got;
      Status s = DecodeWithTensors(&in, 1, &proto::RunGraphResponse::mutable_recv, HostAllocator(), &got_rest, &got);
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(got_rest.recv_size(), 0);
      EXPECT_EQ(got_rest.status_error_message(), "not an error");
      EXPECT_EQ(got_rest.step_stats().dev_stats_size(), 1);
      ASSERT_EQ(got.size(), tensors.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].first, tensors[i].first);
        EXPECT_EQ(got[i].second.DebugString(1 << 20), tensors[i].second.DebugString(1 << 20)) << i << " " << piece;
      }
    }
}

// Numbers in the form graphrt and TensorFlow write take the direct path
// (no message in between); a string among them sends the whole message
// through protobuf.
TEST(TensorCodingTest, NumericNamedTensorsTakeTheDirectPath) {
  NamedTensors tensors = {{"a", Iota(1 << 14)}, {"b", MakeTensor<int32_t>(GR_INT32, {3}, {1, 2, 3})}};
  proto::RunGraphResponse rest, got_rest;
  NamedTensors got;
  grpc::ByteBuffer buffer = EncodeWithTensors(rest, 1, tensors);
  EXPECT_TRUE(tensor_coding_internal::DecodeCommonForm(&buffer, 1, HostAllocator(), &got_rest, &got));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(ToVector<int32_t>(got[1].second), (std::vector<int32_t>{1, 2, 3}));
  tensors.emplace_back("s", Tensor::StringScalar("text"));
  buffer = EncodeWithTensors(rest, 1, tensors);
  EXPECT_FALSE(tensor_coding_internal::DecodeCommonForm(&buffer, 1, HostAllocator(), &got_rest, &got));
}

TEST(TensorCodingTest, NamedTensorsInTypedFormAndMalformedOnes) {
  // A request's feeds (RunGraphRequest.send = 3) in typed values, as
  // another client may send them.
  proto::RunGraphRequest typed;
  typed.set_graph_handle("g");
  proto::NamedTensorProto* send = typed.add_send();
  send->set_name("x");
  send->mutable_tensor()->set_dtype(proto::DT_FLOAT);
  send->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(3);
  send->mutable_tensor()->add_float_val(2.5f);
  grpc::ByteBuffer in = Sliced(typed.SerializeAsString(), 7);
  proto::RunGraphRequest rest;
  NamedTensors got;
  Status s = DecodeWithTensors(&in, 3, &proto::RunGraphRequest::mutable_send, HostAllocator(), &rest, &got);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(rest.graph_handle(), "g");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "x");
  EXPECT_EQ(ToVector<float>(got[0].second), (std::vector<float>{2.5f, 2.5f, 2.5f}));
  // Content that does not fill the shape; bytes that are no message.
  send->mutable_tensor()->clear_float_val();
  send->mutable_tensor()->set_tensor_content(std::string(8, '\0'));
  for (const std::string& bytes : {typed.SerializeAsString(), std::string("\x1a\x05\x0a\x01", 4)}) {
    grpc::ByteBuffer bad = Sliced(bytes, 5);
    s = DecodeWithTensors(&bad, 3, &proto::RunGraphRequest::mutable_send, HostAllocator(), &rest, &got);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  }
}

}  // namespace
}  // namespace distributed
}  // namespace graphrt
