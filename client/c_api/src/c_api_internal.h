// What graphrt's two C APIs share behind their own names: libgraphrt_c
// (graphrt/c_client.h, GRC_*) and libgraphrt_tf_c (graphrt/tf_c_api.h,
// TensorFlow's TF_*). Header-only, compiled into each library; nothing of it
// is exported. Status structs are the libraries' own ({code, message}).
#ifndef GRAPHRT_CLIENT_C_API_INTERNAL_H_
#define GRAPHRT_CLIENT_C_API_INTERNAL_H_

#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include <google/protobuf/message_lite.h>

#include "graphrt/core/runtime.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"
#include "graphrt/model.h"

namespace graphrt::c_api_internal {

// Copies a Status into a C status struct S {code, message} (S may be NULL).
template <typename S>
void SetFromStatus(S* s, const Status& st) {
  if (s == nullptr) return;
  s->code = static_cast<decltype(s->code)>(st.code());
  s->message = st.ok() ? std::string() : st.message();
}

// Runs f (returning a Status) with exceptions turned into a status; true on OK.
template <typename S, typename F>
bool Call(S* s, const char* fn, F&& f) {
  const Status st = StatusFromExceptions(fn, std::forward<F>(f));
  SetFromStatus(s, st);
  return st.ok();
}

// The C APIs' *_SetStatus: an OK code clears the message.
template <typename S, typename C>
void SetCodeAndMessage(S* s, C code, const char* message, C ok) {
  if (s == nullptr) return;
  try {
    s->code = code;
    s->message = code == ok || message == nullptr ? "" : message;
  } catch (...) {
    s->message.clear();  // out of memory for the copy: keep the code
  }
}

inline Status NullArgument(const char* fn, const char* what) {
  return errors::InvalidArgument(fn, ": ", what, " is NULL");
}

inline Status LoadDefaultPlugins() {
  return Runtime::Global().LoadDefaultPlugins().WithContext("loading the standard plugins: ");
}

// Parses data[0, len) as `m`; `what` names the argument in errors.
inline Status ParseProto(const char* fn, const void* data, size_t len, const char* what,
                         google::protobuf::MessageLite* m) {
  if (len == 0) {  // no bytes: the empty message (data may be NULL)
    m->Clear();
    return Status::OK();
  }
  if (data == nullptr) return NullArgument(fn, what);
  if (len > static_cast<size_t>(INT_MAX)) {
    return errors::InvalidArgument(fn, ": ", len, " bytes of ", what, " are over protobuf's 2 GiB limit");
  }
  if (!m->ParseFromArray(data, static_cast<int>(len))) {
    const std::string type = m->GetTypeName();  // "graphrt.proto.GraphDef": say "GraphDef", as TensorFlow would
    return errors::InvalidArgument(fn, ": the ", len, " bytes of ", what, " are not a serialized ",
                                   type.substr(type.rfind('.') + 1));
  }
  return Status::OK();
}

// The shape a caller gave, checked (rank, non-negative dims, the size rule).
inline Status ShapeOf(const char* fn, const int64_t* dims, int num_dims, TensorShape* out) {
  if (num_dims < 0) return errors::InvalidArgument(fn, ": num_dims is negative (", num_dims, ")");
  if (num_dims > 0 && dims == nullptr) return NullArgument(fn, "dims");
  return TensorShape::FromDims(dims, num_dims, out).WithContext(std::string(fn) + ": ");
}

// len must be the bytes of a POD tensor of dt and shape.
inline Status CheckByteLength(const char* fn, DataType dt, const TensorShape& shape, size_t len) {
  // The size rule bounds elements to 2^58, so bytes cannot wrap.
  const size_t bytes = DataTypeSize(dt) * static_cast<size_t>(shape.num_elements());
  if (len != bytes) {
    return errors::InvalidArgument(fn, ": len is ", len, " bytes but a ", DataTypeString(dt), " tensor of shape ",
                                   shape.DebugString(), " has ", bytes);
  }
  return Status::OK();
}

// Both APIs' deallocator for memory a tensor adopts.
using Deallocator = void (*)(void* data, size_t len, void* arg);

// A tensor of POD dtype `dt` over the caller's data[0, len), which must be
// the shape's bytes: adopted (deallocator called once, when the last tensor
// sharing it dies) or, unaligned, copied and handed back at once.
inline Status TensorOverCallerMemory(const char* fn, DataType dt, const TensorShape& shape, void* data, size_t len,
                                     Deallocator deallocator, void* deallocator_arg, Tensor* out) {
  GR_RETURN_IF_ERROR(CheckByteLength(fn, dt, shape, len));
  if (len > 0 && data == nullptr) return NullArgument(fn, "data");
  std::function<void(void*)> release;
  if (deallocator != nullptr) {
    release = [deallocator, len, deallocator_arg](void* p) { deallocator(p, len, deallocator_arg); };
  }
  return TensorFromMemory(dt, shape, data, len, std::move(release), out).WithContext(fn);
}

// Bytes per element of a dtype value; 0 for unknown values and types
// without fixed-size elements.
inline size_t DataTypeSizeOfValue(int64_t value) {
  if (!IsSupportedDataTypeValue(value)) return 0;
  return DataTypeSize(static_cast<DataType>(value));
}

// The tensor accessors of both APIs (t may be NULL).
inline int TensorDims(const Tensor* t) { return t ? t->dims() : 0; }
inline int64_t TensorDim(const Tensor* t, int i) {
  if (t == nullptr || i < 0 || i >= t->dims()) return -1;
  return t->dim_size(i);
}
inline int64_t TensorElements(const Tensor* t) { return t ? t->NumElements() : 0; }
// Bytes and data of fixed-size element types; 0 and NULL for others.
inline size_t TensorBytes(const Tensor* t) {
  if (t == nullptr || !DataTypeIsPod(t->dtype())) return 0;
  return t->TotalBytes();
}
inline void* TensorData(const Tensor* t) {
  if (t == nullptr || !DataTypeIsPod(t->dtype()) || t->TotalBytes() == 0) return nullptr;
  return t->raw_data();
}

}  // namespace graphrt::c_api_internal

#endif  // GRAPHRT_CLIENT_C_API_INTERNAL_H_
