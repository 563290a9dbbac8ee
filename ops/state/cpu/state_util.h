// Shared by the state family's kernels: element-type dispatch and the
// scatter arithmetic that ref and resource forms both run.
#ifndef GRAPHRT_OPS_STATE_CPU_STATE_UTIL_H_
#define GRAPHRT_OPS_STATE_CPU_STATE_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <Eigen/Core>
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/cpu/wrapping.h"

namespace graphrt {
namespace sdk {
namespace state {

// Calls f(T{}) with T the C++ type of a numeric dtype; false for others.
template <typename F>
bool DispatchNumeric(DataType t, F&& f) {
  switch (t) {
    case GR_FLOAT: f(float{}); return true;
    case GR_DOUBLE: f(double{}); return true;
    case GR_INT32: f(int32_t{}); return true;
    case GR_INT64: f(int64_t{}); return true;
    case GR_INT8: f(int8_t{}); return true;
    case GR_INT16: f(int16_t{}); return true;
    case GR_UINT8: f(uint8_t{}); return true;
    case GR_UINT16: f(uint16_t{}); return true;
    case GR_UINT32: f(uint32_t{}); return true;
    case GR_UINT64: f(uint64_t{}); return true;
    case GR_HALF: f(Eigen::half{}); return true;
    case GR_BFLOAT16: f(Eigen::bfloat16{}); return true;
    case GR_COMPLEX64: f(std::complex<float>{}); return true;
    case GR_COMPLEX128: f(std::complex<double>{}); return true;
    default: return false;
  }
}

inline std::string ShapeString(const TensorView& v) { return v.ShapeString(); }

inline bool SameShape(const TensorView& a, const TensorView& b) {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.dim(i) != b.dim(i)) return false;
  return true;
}

enum class ScatterKind { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

inline ScatterKind ScatterKindOf(const std::string& op) {
  auto ends = [&](const char* s) {
    const size_t n = std::strlen(s);
    return op.size() >= n && op.compare(op.size() - n, n, s) == 0;
  };
  if (ends("Add")) return ScatterKind::kAdd;
  if (ends("Sub")) return ScatterKind::kSub;
  if (ends("Mul")) return ScatterKind::kMul;
  if (ends("Div")) return ScatterKind::kDiv;
  if (ends("Min")) return ScatterKind::kMin;
  if (ends("Max")) return ScatterKind::kMax;
  return ScatterKind::kUpdate;
}

template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// dst = dst (op) src over n elements. Integer division by zero is an error.
template <typename T>
Status ApplyElementwise(ScatterKind kind, T* dst, const T* src, int64_t n, bool src_is_scalar) {
  for (int64_t i = 0; i < n; ++i) {
    const T u = src[src_is_scalar ? 0 : i];
    T& d = dst[i];
    switch (kind) {
      case ScatterKind::kUpdate: d = u; break;
      // Integers wrap (cwise::Wrapping*) rather than overflow, which is undefined.
      case ScatterKind::kAdd: d = cwise::WrappingAdd(d, u); break;
      case ScatterKind::kSub: d = cwise::WrappingSub(d, u); break;
      case ScatterKind::kMul: d = cwise::WrappingMul(d, u); break;
      case ScatterKind::kDiv:
        if constexpr (std::is_integral_v<T>) {
          if (u == T(0)) return errors::InvalidArgument("Integer division by zero");
          if constexpr (std::is_signed_v<T>) {
            if (u == T(-1)) {  // lowest / -1 overflows (and traps on x86): wrap
              d = cwise::WrappingNeg(d);
              break;
            }
          }
        }
        d = d / u;
        break;
      case ScatterKind::kMin:
      case ScatterKind::kMax:
        if constexpr (kIsComplex<T>) {
          return errors::InvalidArgument("min/max is not defined for complex values");
        } else {
          d = kind == ScatterKind::kMin ? (u < d ? u : d) : (d < u ? u : d);
        }
        break;
    }
  }
  return Status();
}

// Reads index i of an int32 or int64 vector.
inline int64_t IndexAt(const TensorView& idx, int64_t i) {
  return idx.dtype() == GR_INT32 ? idx.data<int32_t>()[i] : idx.data<int64_t>()[i];
}

// TensorFlow's Scatter* on `params` (rows along dim 0): updates must have
// shape indices.shape + params.shape[1:] (or be a scalar); every index in
// [0, rows) is checked before anything is written. `params` is writable.
inline Status Scatter(ScatterKind kind, const TensorView& params, const TensorView& indices,
                      const TensorView& updates, const GR_TensorView* raw_params) {
  if (params.rank() < 1) return errors::InvalidArgument("params must be at least 1-D, got shape ", params.ShapeString());
  const int64_t rows = params.dim(0);
  const int64_t n = indices.NumElements();
  const int64_t row_size = rows == 0 ? 0 : params.NumElements() / rows;
  const bool scalar_updates = updates.rank() == 0;
  if (!scalar_updates) {
    bool ok = updates.rank() == indices.rank() + params.rank() - 1;
    for (int i = 0; ok && i < indices.rank(); ++i) ok = updates.dim(i) == indices.dim(i);
    for (int i = 1; ok && i < params.rank(); ++i) ok = updates.dim(indices.rank() + i - 1) == params.dim(i);
    if (!ok)
      return errors::InvalidArgument("Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
                                     "[], got updates.shape ", updates.ShapeString(), ", indices.shape ",
                                     indices.ShapeString(), ", params.shape ", params.ShapeString());
  }
  if (updates.dtype() != params.dtype())
    return errors::InvalidArgument("updates must be ", DataTypeName(params.dtype()));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = IndexAt(indices, i);
    if (r < 0 || r >= rows) return errors::InvalidArgument("indices[", i, "] = ", r, " is not in [0, ", rows, ")");
  }
  if (params.dtype() == GR_STRING) {
    if (kind != ScatterKind::kUpdate) return errors::InvalidArgument("string variables only support ScatterUpdate");
    GR_TensorView dst = *raw_params;
    const GR_StringElem* src = updates.data<GR_StringElem>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = IndexAt(indices, i);
      for (int64_t j = 0; j < row_size; ++j) {
        const GR_StringElem& e = src[scalar_updates ? 0 : i * row_size + j];
        Api().string_assign(&dst, r * row_size + j, e.data, e.size);
      }
    }
    return Status();
  }
  Status status;
  const bool known = DispatchNumeric(params.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* p = params.data<T>();
    const T* u = updates.data<T>();
    for (int64_t i = 0; i < n && status.ok(); ++i) {
      const int64_t r = IndexAt(indices, i);
      status = ApplyElementwise(kind, p + r * row_size, scalar_updates ? u : u + i * row_size, row_size, scalar_updates);
    }
  });
  if (!known) {
    if (kind != ScatterKind::kUpdate || params.dtype() != GR_BOOL)
      return errors::InvalidArgument("scatter does not support dtype ", DataTypeName(params.dtype()));
    bool* p = params.data<bool>();
    const bool* u = updates.data<bool>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = IndexAt(indices, i);
      for (int64_t j = 0; j < row_size; ++j) p[r * row_size + j] = u[scalar_updates ? 0 : i * row_size + j];
    }
  }
  return status;
}

// A handle some kernel filled in (allocated resource tensors start null).
inline bool IsSet(const GR_ResourceHandle& h) { return h.container && h.name && h.type_name; }

// The handle in input `index`, checked to name a variable.
inline Status VariableHandleOf(OpKernelContext* ctx, const GR_ResourceHandle** out, int index = 0) {
  const TensorView h = ctx->input(index);
  if (h.dtype() != GR_RESOURCE || h.NumElements() != 1 || !IsSet(*h.data<GR_ResourceHandle>()))
    return errors::InvalidArgument("input ", index, " must be one resource handle, got shape ", h.ShapeString());
  const GR_ResourceHandle* handle = h.data<GR_ResourceHandle>();
  if (std::strcmp(handle->type_name, GR_VARIABLE_TYPE_NAME) != 0)
    return errors::InvalidArgument("resource ", handle->container, "/", handle->name, " is a ", handle->type_name,
                                   ", not a variable");
  *out = handle;
  return Status();
}

}  // namespace state
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_STATE_CPU_STATE_UTIL_H_
