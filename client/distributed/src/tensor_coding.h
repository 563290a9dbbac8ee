// Tensors on the wire without the copies protobuf's generated code makes.
// A RecvTensorResponse built as a message copies the tensor's bytes into a
// string, serializes them into gRPC's buffer, and the receiver copies them
// from gRPC's slices into a string again and from there into a tensor. Here
// the sender's bytes go out as a gRPC slice over the tensor's own buffer
// (the slice holds a reference until gRPC has written it), and the
// receiver copies them once, from the received slices into the new tensor.
// The bytes on the wire are exactly TensorFlow's message (facts §7), so
// either side may be TensorFlow's.
#ifndef GRAPHRT_DISTRIBUTED_SRC_TENSOR_CODING_H_
#define GRAPHRT_DISTRIBUTED_SRC_TENSOR_CODING_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/named_tensor.pb.h"
#include "graphrt/proto/worker.pb.h"
#include "grpc_util.h"

namespace graphrt {
namespace distributed {

// A message of a kind without tensors, to and from gRPC's buffers.
grpc::ByteBuffer EncodeMessage(const google::protobuf::MessageLite& message);
// (Reading leaves `buffer` as it was.)
Status DecodeMessage(grpc::ByteBuffer* buffer, google::protobuf::MessageLite* message);

// RecvTensorResponse{tensor: `value` (when not dead), is_dead,
// send_start_micros}.
grpc::ByteBuffer EncodeRecvTensorResponse(const Tensor& value, bool is_dead, int64_t send_start_micros);

// The inverse, for any well-formed RecvTensorResponse (a tensor in typed
// fields, fields in any order, unknown fields), the tensor from
// `allocator`: InvalidArgument for bytes that are not one, or a tensor that
// is not valid.
Status DecodeRecvTensorResponse(grpc::ByteBuffer* buffer, Allocator* allocator, Tensor* value, bool* is_dead);

// Tensors by name: RunGraph's feeds (send) and fetches (recv).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
// The fields of RunGraph's and RunStep's messages that hold them (facts
// §3, §4).
constexpr int kRunGraphSendField = 3;   // RunGraphRequest.send
constexpr int kRunGraphRecvField = 1;   // RunGraphResponse.recv
constexpr int kRunStepFeedField = 2;    // RunStepRequest.feed
constexpr int kRunStepTensorField = 1;  // RunStepResponse.tensor

// A message whose repeated NamedTensorProto field `field` carries
// `tensors` (their content written as EncodeRecvTensorResponse writes a
// tensor's); the other fields from `rest`, whose `field` is left empty.
grpc::ByteBuffer EncodeWithTensors(const google::protobuf::MessageLite& rest, int field, const NamedTensors& tensors);

namespace tensor_coding_internal {
// DecodeWithTensors for the form EncodeWithTensors writes; false for any
// other, which is then read as a message.
bool DecodeCommonForm(grpc::ByteBuffer* buffer, int field, Allocator* allocator,
                      google::protobuf::MessageLite* rest, NamedTensors* tensors);
}  // namespace tensor_coding_internal

// The inverse, for any well-formed message of `Message`'s kind: the entries
// of its field `field` (whose accessor is `entries`) into `tensors`, in
// order and each with one copy from the received bytes (from `allocator`);
// the other fields into `rest`. InvalidArgument for bytes that are not such
// a message, or an entry that is not a valid tensor.
template <typename Message>
Status DecodeWithTensors(grpc::ByteBuffer* buffer, int field,
                         google::protobuf::RepeatedPtrField<proto::NamedTensorProto>* (Message::*entries)(),
                         Allocator* allocator, Message* rest, NamedTensors* tensors) {
  if (tensor_coding_internal::DecodeCommonForm(buffer, field, allocator, rest, tensors)) return Status::OK();
  rest->Clear();
  tensors->clear();
  GR_RETURN_IF_ERROR(DecodeMessage(buffer, rest));
  for (const proto::NamedTensorProto& entry : *(rest->*entries)()) {
    Tensor value;
    GR_RETURN_IF_ERROR(Tensor::FromProto(entry.tensor(), &value, allocator)
                           .WithContext(rest->GetTypeName() + "'s tensor '" + entry.name() + "'"));
    tensors->emplace_back(entry.name(), std::move(value));
  }
  (rest->*entries)()->Clear();
  return Status::OK();
}

// A raw call's answer (RunGraph's, RunStep's) into `out`: `resp` with
// `tensors` in its field `field`; when `s` failed, the error in the body
// (status_code, status_error_message) if the caller asked for that
// (store_errors_in_response_body), else as the call's status. Returns the
// status to finish the call with.
template <typename Response>
grpc::Status AnswerWithTensors(const Status& s, bool errors_in_body, int field, Response* resp,
                               const NamedTensors& tensors, grpc::ByteBuffer* out) {
  if (s.ok()) {
    *out = EncodeWithTensors(*resp, field, tensors);
    return grpc::Status::OK;
  }
  if (!errors_in_body) return ToGrpcStatus(s);
  resp->Clear();
  resp->set_status_code(static_cast<int32_t>(s.code()));
  resp->set_status_error_message(Utf8(s.message()));
  *out = EncodeMessage(*resp);
  return grpc::Status::OK;
}

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_SRC_TENSOR_CODING_H_
