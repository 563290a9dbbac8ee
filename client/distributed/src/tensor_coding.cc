#include "tensor_coding.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <string>

#include "graphrt/core/types.h"

namespace graphrt {
namespace distributed {

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::internal::WireFormatLite;

// Below this many bytes a tensor's content is copied into the message's
// first slice: a slice of its own costs an allocation and a callback.
constexpr size_t kZeroCopyMinBytes = 16 << 10;

constexpr uint32_t Tag(int field, WireFormatLite::WireType type) {
  return static_cast<uint32_t>(field << 3) | static_cast<uint32_t>(type);
}

// TensorProto's and RecvTensorResponse's field numbers (facts §7).
constexpr uint32_t kTensorDtype = Tag(1, WireFormatLite::WIRETYPE_VARINT);
constexpr uint32_t kTensorShape = Tag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kTensorContent = Tag(4, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kResponseTensor = Tag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kResponseIsDead = Tag(2, WireFormatLite::WIRETYPE_VARINT);
constexpr uint32_t kResponseSendStart = Tag(3, WireFormatLite::WIRETYPE_VARINT);

void AppendVarint(std::string* out, uint64_t v) {
  uint8_t buf[10];  // a 64-bit varint's most
  const uint8_t* end = CodedOutputStream::WriteVarint64ToArray(v, buf);
  out->append(reinterpret_cast<const char*>(buf), end - buf);
}

void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

// The fast path of DecodeRecvTensorResponse: a response whose tensor is
// dtype, shape and tensor_content, in that order, each once (what graphrt
// and TensorFlow send). False for anything else, which the caller then
// parses as a message: fields out of order, typed values, repeated fields,
// malformed bytes.
bool DecodeCommonForm(grpc::ByteBuffer* buffer, Allocator* allocator, Tensor* value, bool* is_dead) {
  const size_t total = buffer->Length();
  grpc::ProtoBufferReader reader(buffer);
  CodedInputStream in(&reader);
  bool have_tensor = false;
  *is_dead = false;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.ConsumedEntireMessage() && (have_tensor || *is_dead);
    if (tag == kResponseTensor) {
      if (have_tensor) return false;
      uint32_t length;
      if (!in.ReadVarint32(&length)) return false;
      const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(length));
      uint64_t dtype_value = 0;
      proto::TensorShapeProto shape_proto;
      bool have_dtype = false, have_shape = false, have_content = false;
      while (const uint32_t field = in.ReadTag()) {
        if (field == kTensorDtype && !have_dtype && !have_shape && !have_content) {
          if (!in.ReadVarint64(&dtype_value)) return false;
          have_dtype = true;
        } else if (field == kTensorShape && !have_shape && !have_content) {
          uint32_t shape_length;
          std::string shape_bytes;
          if (!in.ReadVarint32(&shape_length) || !in.ReadString(&shape_bytes, static_cast<int>(shape_length)) ||
              !shape_proto.ParseFromString(shape_bytes))
            return false;
          have_shape = true;
        } else if (field == kTensorContent && have_dtype && !have_content) {
          // A value that is no DataType is left to the message path's error
          // (not cast: an enum may not hold it).
          DataType dtype;
          uint32_t content_length;
          TensorShape shape;
          if (dtype_value > 0x7fffffff ||
              !ValidateDataType(static_cast<int64_t>(dtype_value), /*allow_ref=*/false, "tensor", &dtype).ok() ||
              !DataTypeIsPod(dtype) || !in.ReadVarint32(&content_length) ||
              !TensorShape::FromProto(shape_proto, &shape).ok())
            return false;
          const uint64_t want = static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dtype);
          // The length must be what the shape needs and what the buffer
          // still holds, before a byte is allocated for it.
          const uint64_t left = total - static_cast<uint64_t>(in.CurrentPosition());
          if (content_length != want || content_length > left || content_length == 0) return false;
          Tensor t;
          if (!Tensor::Allocate(allocator, dtype, shape, &t).ok()) return false;
          if (!in.ReadRaw(t.raw_data(), static_cast<int>(content_length))) return false;
          *value = std::move(t);
          have_content = true;
        } else {
          return false;
        }
      }
      if (!in.ConsumedEntireMessage() || in.BytesUntilLimit() != 0 || !have_content) return false;
      in.PopLimit(limit);
      have_tensor = true;
    } else if (tag == kResponseIsDead) {
      uint64_t v;
      if (!in.ReadVarint64(&v)) return false;
      *is_dead = v != 0;
    } else if (WireFormatLite::GetTagFieldNumber(tag) == 1) {
      return false;  // the tensor field with another wire type
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
}

}  // namespace

grpc::ByteBuffer EncodeRecvTensorResponse(const Tensor& value, bool is_dead, int64_t send_start_micros) {
  const size_t bytes = is_dead ? 0 : value.TotalBytes();
  if (is_dead || !DataTypeIsPod(value.dtype()) || bytes < kZeroCopyMinBytes) {
    proto::RecvTensorResponse response;
    if (!is_dead) value.AsProtoTensorContent(response.mutable_tensor());
    response.set_is_dead(is_dead);
    response.set_send_start_micros(send_start_micros);
    return EncodeMessage(response);
  }
  // [send_start_micros][tensor: tag, length, dtype, shape, content's tag
  // and length][content], TensorFlow's layout: the last slice is the
  // tensor's own buffer.
  proto::TensorShapeProto shape;
  value.shape().AsProto(&shape);
  const std::string shape_bytes = shape.SerializeAsString();
  std::string tensor_head;
  AppendVarint(&tensor_head, kTensorDtype);
  AppendVarint(&tensor_head, static_cast<uint64_t>(value.dtype()));
  AppendVarint(&tensor_head, kTensorShape);
  AppendVarint(&tensor_head, shape_bytes.size());
  tensor_head += shape_bytes;
  AppendVarint(&tensor_head, kTensorContent);
  AppendVarint(&tensor_head, bytes);
  std::string head;
  if (send_start_micros != 0) {
    AppendVarint(&head, kResponseSendStart);
    AppendVarint(&head, static_cast<uint64_t>(send_start_micros));
  }
  AppendVarint(&head, kResponseTensor);
  AppendVarint(&head, tensor_head.size() + bytes);
  head += tensor_head;
  // The slice keeps the buffer alive until gRPC has written it. Like
  // TensorFlow's, a variable's value sent this way is read when it is
  // written to the socket: an update racing with the send may show.
  auto* keep = new Tensor(value);
  grpc::Slice slices[2] = {grpc::Slice(head), grpc::Slice(keep->raw_data(), bytes, &ReleaseTensor, keep)};
  return grpc::ByteBuffer(slices, 2);
}

Status DecodeRecvTensorResponse(grpc::ByteBuffer* buffer, Allocator* allocator, Tensor* value, bool* is_dead) {
  if (DecodeCommonForm(buffer, allocator, value, is_dead)) return Status::OK();
  proto::RecvTensorResponse response;
  GR_RETURN_IF_ERROR(DecodeMessage(buffer, &response));
  *is_dead = response.is_dead();
  if (*is_dead) {
    *value = Tensor();
    return Status::OK();
  }
  return Tensor::FromProto(response.tensor(), value, allocator).WithContext("RecvTensorResponse's tensor");
}

grpc::ByteBuffer EncodeMessage(const google::protobuf::MessageLite& message) {
  grpc::ByteBuffer buffer;
  grpc::ProtoBufferWriter writer(&buffer, grpc::kProtoBufferWriterMaxBufferLength,
                                 static_cast<int>(message.ByteSizeLong()));
  message.SerializeToZeroCopyStream(&writer);
  return buffer;
}

Status DecodeMessage(grpc::ByteBuffer* buffer, google::protobuf::MessageLite* message) {
  grpc::ProtoBufferReader reader(buffer);
  if (!message->ParseFromZeroCopyStream(&reader))
    return errors::InvalidArgument("Could not parse a ", message->GetTypeName(), " (", buffer->Length(), " bytes)");
  return Status::OK();
}

}  // namespace distributed
}  // namespace graphrt
