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

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/worker.pb.h"

namespace graphrt {
namespace distributed {

// RecvTensorResponse{tensor: `value` (when not dead), is_dead,
// send_start_micros}.
grpc::ByteBuffer EncodeRecvTensorResponse(const Tensor& value, bool is_dead, int64_t send_start_micros);

// The inverse, for any well-formed RecvTensorResponse (a tensor in typed
// fields, fields in any order, unknown fields), the tensor from
// `allocator`: InvalidArgument for bytes that are not one, or a tensor that
// is not valid.
Status DecodeRecvTensorResponse(grpc::ByteBuffer* buffer, Allocator* allocator, Tensor* value, bool* is_dead);

// A message of a kind without tensors, to and from gRPC's buffers.
grpc::ByteBuffer EncodeMessage(const google::protobuf::MessageLite& message);
// (Reading leaves `buffer` as it was.)
Status DecodeMessage(grpc::ByteBuffer* buffer, google::protobuf::MessageLite* message);

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_SRC_TENSOR_CODING_H_
