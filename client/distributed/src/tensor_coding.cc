#include "tensor_coding.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <string>
#include <vector>

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

// TensorProto's, RecvTensorResponse's and NamedTensorProto's field
// numbers (facts §4, §7).
constexpr uint32_t kTensorDtype = Tag(1, WireFormatLite::WIRETYPE_VARINT);
constexpr uint32_t kTensorShape = Tag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kTensorContent = Tag(4, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kResponseTensor = Tag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kResponseIsDead = Tag(2, WireFormatLite::WIRETYPE_VARINT);
constexpr uint32_t kResponseSendStart = Tag(3, WireFormatLite::WIRETYPE_VARINT);
constexpr uint32_t kNamedTensorName = Tag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
constexpr uint32_t kNamedTensorTensor = Tag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);

void AppendVarint(std::string* out, uint64_t v) {
  uint8_t buf[10];  // a 64-bit varint's most
  const uint8_t* end = CodedOutputStream::WriteVarint64ToArray(v, buf);
  out->append(reinterpret_cast<const char*>(buf), end - buf);
}

void ReleaseTensor(void* tensor) { delete static_cast<Tensor*>(tensor); }

// A message as gRPC slices: bytes gather in one slice until a large
// tensor's content, which is a slice of its own over the tensor's buffer
// (holding a reference until gRPC has written it). Like TensorFlow's, a
// variable's value sent this way is read when it is written to the socket:
// an update racing with the send may show.
class SliceWriter {
 public:
  void Varint(uint64_t v) { AppendVarint(&pending_, v); }
  void Bytes(const std::string& bytes) { pending_ += bytes; }
  void Content(const Tensor& tensor) {
    Flush();
    auto* keep = new Tensor(tensor);
    slices_.emplace_back(keep->raw_data(), keep->TotalBytes(), &ReleaseTensor, keep);
  }
  grpc::ByteBuffer Finish() {
    Flush();
    if (slices_.empty()) slices_.emplace_back(std::string());
    return grpc::ByteBuffer(slices_.data(), slices_.size());
  }

 private:
  void Flush() {
    if (pending_.empty()) return;
    slices_.emplace_back(pending_);
    pending_.clear();
  }
  std::string pending_;
  std::vector<grpc::Slice> slices_;
};

// A tensor as TensorProto bytes: dtype, shape, then tensor_content (as
// TensorFlow writes it), the content a slice of its own when large.
// Strings and resources as protobuf encodes them.
struct EncodedTensor {
  std::string head;
  const Tensor* content = nullptr;  // its bytes follow `head`
  size_t size() const { return head.size() + (content ? content->TotalBytes() : 0); }
  void WriteTo(SliceWriter* w) const {
    w->Bytes(head);
    if (content) w->Content(*content);
  }
};

EncodedTensor EncodeTensor(const Tensor& t) {
  EncodedTensor e;
  if (!DataTypeIsPod(t.dtype())) {
    proto::TensorProto p;
    t.AsProtoTensorContent(&p);
    e.head = p.SerializeAsString();
    return e;
  }
  proto::TensorShapeProto shape;
  t.shape().AsProto(&shape);
  const std::string shape_bytes = shape.SerializeAsString();
  AppendVarint(&e.head, kTensorDtype);
  AppendVarint(&e.head, static_cast<uint64_t>(t.dtype()));
  AppendVarint(&e.head, kTensorShape);
  AppendVarint(&e.head, shape_bytes.size());
  e.head += shape_bytes;
  const size_t bytes = t.TotalBytes();
  if (bytes == 0) return e;  // (proto3 leaves an empty field out)
  AppendVarint(&e.head, kTensorContent);
  AppendVarint(&e.head, bytes);
  if (bytes < kZeroCopyMinBytes)
    e.head.append(static_cast<const char*>(t.raw_data()), bytes);
  else
    e.content = &t;
  return e;
}

// Reads the TensorProto that fills `in`'s current limit, when it is in the
// form EncodeTensor writes (dtype, shape, tensor_content, each once, in that
// order, content not empty): its content straight into a tensor from
// `allocator`. False for any other form, which the caller then reads as a
// message: typed values, fields out of order or repeated, malformed bytes.
// `total`: the bytes of the whole buffer, which bound what a length may claim.
bool ReadTensor(CodedInputStream* in, size_t total, Allocator* allocator, Tensor* value) {
  uint64_t dtype_value = 0;
  proto::TensorShapeProto shape_proto;
  bool have_dtype = false, have_shape = false, have_content = false;
  while (const uint32_t field = in->ReadTag()) {
    if (field == kTensorDtype && !have_dtype && !have_shape && !have_content) {
      if (!in->ReadVarint64(&dtype_value)) return false;
      have_dtype = true;
    } else if (field == kTensorShape && !have_shape && !have_content) {
      uint32_t shape_length;
      std::string shape_bytes;
      if (!in->ReadVarint32(&shape_length) || !in->ReadString(&shape_bytes, static_cast<int>(shape_length)) ||
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
          !DataTypeIsPod(dtype) || !in->ReadVarint32(&content_length) ||
          !TensorShape::FromProto(shape_proto, &shape).ok())
        return false;
      const uint64_t want = static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dtype);
      // The length must be what the shape needs and what the buffer still
      // holds, before a byte is allocated for it.
      const uint64_t left = total - static_cast<uint64_t>(in->CurrentPosition());
      if (content_length != want || content_length > left || content_length == 0) return false;
      Tensor t;
      if (!Tensor::Allocate(allocator, dtype, shape, &t).ok()) return false;
      if (!in->ReadRaw(t.raw_data(), static_cast<int>(content_length))) return false;
      *value = std::move(t);
      have_content = true;
    } else {
      return false;
    }
  }
  return in->ConsumedEntireMessage() && in->BytesUntilLimit() == 0 && have_content;
}

// Reads a length-delimited field's length, then `read` within it.
template <typename Read>
bool ReadDelimited(CodedInputStream* in, Read read) {
  uint32_t length;
  if (!in->ReadVarint32(&length)) return false;
  const CodedInputStream::Limit limit = in->PushLimit(static_cast<int>(length));
  if (!read()) return false;
  in->PopLimit(limit);
  return true;
}

// Appends the field whose tag was just read, tag and all, to `out`.
bool CopyField(CodedInputStream* in, uint32_t tag, std::string* out) {
  AppendVarint(out, tag);
  switch (WireFormatLite::GetTagWireType(tag)) {
    case WireFormatLite::WIRETYPE_VARINT: {
      uint64_t v;
      if (!in->ReadVarint64(&v)) return false;
      AppendVarint(out, v);
      return true;
    }
    case WireFormatLite::WIRETYPE_FIXED64: {
      uint64_t v;
      if (!in->ReadLittleEndian64(&v)) return false;
      out->append(reinterpret_cast<const char*>(&v), 8);  // (x86-64: little-endian)
      return true;
    }
    case WireFormatLite::WIRETYPE_FIXED32: {
      uint32_t v;
      if (!in->ReadLittleEndian32(&v)) return false;
      out->append(reinterpret_cast<const char*>(&v), 4);
      return true;
    }
    case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
      uint32_t length;
      std::string bytes;
      if (!in->ReadVarint32(&length) || !in->ReadString(&bytes, static_cast<int>(length))) return false;
      AppendVarint(out, length);
      *out += bytes;
      return true;
    }
    default:
      return false;  // groups: left to protobuf
  }
}

// The fast path of DecodeRecvTensorResponse.
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
      if (have_tensor || !ReadDelimited(&in, [&] { return ReadTensor(&in, total, allocator, value); })) return false;
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
  // TensorFlow's layout: send_start_micros, is_dead when true, then the
  // tensor, its content last.
  SliceWriter w;
  if (send_start_micros != 0) {
    w.Varint(kResponseSendStart);
    w.Varint(static_cast<uint64_t>(send_start_micros));
  }
  if (is_dead) {
    w.Varint(kResponseIsDead);
    w.Varint(1);
    return w.Finish();
  }
  const EncodedTensor e = EncodeTensor(value);
  w.Varint(kResponseTensor);
  w.Varint(e.size());
  e.WriteTo(&w);
  return w.Finish();
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

grpc::ByteBuffer EncodeWithTensors(const google::protobuf::MessageLite& rest, int field, const NamedTensors& tensors) {
  SliceWriter w;
  w.Bytes(rest.SerializeAsString());
  for (const auto& [name, tensor] : tensors) {
    const EncodedTensor e = EncodeTensor(tensor);
    // NamedTensorProto: name = 1, tensor = 2.
    const size_t entry = 1 + CodedOutputStream::VarintSize64(name.size()) + name.size() + 1 +
                         CodedOutputStream::VarintSize64(e.size()) + e.size();
    w.Varint(Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    w.Varint(entry);
    w.Varint(kNamedTensorName);
    w.Varint(name.size());
    w.Bytes(name);
    w.Varint(kNamedTensorTensor);
    w.Varint(e.size());
    e.WriteTo(&w);
  }
  return w.Finish();
}

namespace tensor_coding_internal {

bool DecodeCommonForm(grpc::ByteBuffer* buffer, int field, Allocator* allocator,
                      google::protobuf::MessageLite* rest, NamedTensors* tensors) {
  const size_t total = buffer->Length();
  grpc::ProtoBufferReader reader(buffer);
  CodedInputStream in(&reader);
  const uint32_t entry_tag = Tag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  std::string rest_bytes;
  tensors->clear();
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (!in.ConsumedEntireMessage()) return false;
      break;
    }
    if (tag == entry_tag) {
      std::string name;
      Tensor value;
      bool have_name = false, have_tensor = false;
      const bool read = ReadDelimited(&in, [&] {
        while (const uint32_t f = in.ReadTag()) {
          if (f == kNamedTensorName && !have_name) {
            uint32_t length;
            if (!in.ReadVarint32(&length) || !in.ReadString(&name, static_cast<int>(length))) return false;
            have_name = true;
          } else if (f == kNamedTensorTensor && !have_tensor) {
            if (!ReadDelimited(&in, [&] { return ReadTensor(&in, total, allocator, &value); })) return false;
            have_tensor = true;
          } else {
            return false;
          }
        }
        return in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0 && have_tensor;
      });
      if (!read) return false;
      tensors->emplace_back(std::move(name), std::move(value));
    } else if (WireFormatLite::GetTagFieldNumber(tag) == field) {
      return false;
    } else if (!CopyField(&in, tag, &rest_bytes)) {
      return false;
    }
  }
  return rest->ParseFromString(rest_bytes);
}

}  // namespace tensor_coding_internal

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
