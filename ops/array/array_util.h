// Helpers shared by the array family's op definitions (shape functions) and
// its kernels on every device: dtype names and sizes, reading index-like
// tensors (int32/int64), axis canonicalisation, and the StridedSlice
// specification (TensorFlow's sparse -> dense mask semantics), which the
// shape function and the kernel must compute identically.
#ifndef GRAPHRT_OPS_ARRAY_ARRAY_UTIL_H_
#define GRAPHRT_OPS_ARRAY_ARRAY_UTIL_H_

#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace array {

// TensorFlow's DataTypeString spelling ("float", "int32", "float_ref").
inline std::string DataTypeName(int32_t dt) {
  const bool ref = dt > 100;
  const int32_t base = ref ? dt - 100 : dt;
  const char* name = nullptr;
  switch (base) {
    case GR_FLOAT: name = "float"; break;
    case GR_DOUBLE: name = "double"; break;
    case GR_INT32: name = "int32"; break;
    case GR_UINT8: name = "uint8"; break;
    case GR_INT16: name = "int16"; break;
    case GR_INT8: name = "int8"; break;
    case GR_STRING: name = "string"; break;
    case GR_COMPLEX64: name = "complex64"; break;
    case GR_INT64: name = "int64"; break;
    case GR_BOOL: name = "bool"; break;
    case GR_QINT8: name = "qint8"; break;
    case GR_QUINT8: name = "quint8"; break;
    case GR_QINT32: name = "qint32"; break;
    case GR_BFLOAT16: name = "bfloat16"; break;
    case GR_QINT16: name = "qint16"; break;
    case GR_QUINT16: name = "quint16"; break;
    case GR_UINT16: name = "uint16"; break;
    case GR_COMPLEX128: name = "complex128"; break;
    case GR_HALF: name = "half"; break;
    case GR_RESOURCE: name = "resource"; break;
    case GR_VARIANT: name = "variant"; break;
    case GR_UINT32: name = "uint32"; break;
    case GR_UINT64: name = "uint64"; break;
    default: return "unknown dtype " + std::to_string(dt);
  }
  return ref ? std::string(name) + "_ref" : std::string(name);
}

// Bytes per element of a plain-data dtype; 0 for string, resource, variant
// and unknown dtypes.
inline int ElementSize(int32_t dt) {
  switch (dt) {
    case GR_BOOL: case GR_INT8: case GR_UINT8: case GR_QINT8: case GR_QUINT8:
      return 1;
    case GR_INT16: case GR_UINT16: case GR_BFLOAT16: case GR_HALF: case GR_QINT16: case GR_QUINT16:
      return 2;
    case GR_FLOAT: case GR_INT32: case GR_UINT32: case GR_QINT32:
      return 4;
    case GR_DOUBLE: case GR_INT64: case GR_UINT64: case GR_COMPLEX64:
      return 8;
    case GR_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

inline bool IsIndexType(int32_t dt) { return dt == GR_INT32 || dt == GR_INT64; }

// Element i of an integer tensor (int8/16/32/64, uint8) as int64.
inline int64_t IntAt(const TensorView& v, int64_t i) {
  switch (v.dtype()) {
    case GR_INT32: return v.data<int32_t>()[i];
    case GR_INT64: return v.data<int64_t>()[i];
    case GR_INT16: return v.data<int16_t>()[i];
    case GR_INT8: return v.data<int8_t>()[i];
    case GR_UINT8: return v.data<uint8_t>()[i];
    default: return 0;
  }
}

// Reads an integer vector (or scalar) tensor into `out`; false when the
// dtype is not an integer type.
inline bool ReadIntVector(const TensorView& v, std::vector<int64_t>* out) {
  const DataType dt = v.dtype();
  if (dt != GR_INT32 && dt != GR_INT64 && dt != GR_INT16 && dt != GR_INT8 && dt != GR_UINT8) return false;
  const int64_t n = v.NumElements();
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = IntAt(v, i);
  return true;
}

inline std::string JoinInts(const std::vector<int64_t>& v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

// Number of elements of Range(start, limit, delta), or TensorFlow's error.
template <typename T>
Status RangeSize(T start, T limit, T delta, int64_t* size) {
  using P = std::conditional_t<std::is_integral_v<T>, int64_t, double>;  // printable
  if (delta == T(0)) return errors::InvalidArgument("Requires delta != 0: ", P(delta));
  if (delta > T(0)) {
    if (start > limit) {
      return errors::InvalidArgument("Requires start <= limit when delta > 0: ", P(start), "/",
                                     P(limit));
    }
  } else if (start < limit) {
    return errors::InvalidArgument("Requires start >= limit when delta < 0: ", P(start), "/",
                                   P(limit));
  }
  if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic: |limit - start| may not fit the signed type.
    const uint64_t span = limit > start ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                        : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t step = delta > T(0) ? static_cast<uint64_t>(delta)
                                       : uint64_t{0} - static_cast<uint64_t>(delta);
    const uint64_t n = span / step + (span % step != 0 ? 1 : 0);
    if (n > static_cast<uint64_t>(INT64_MAX)) {
      return errors::InvalidArgument("Requires ((limit - start) / delta) <= ", INT64_MAX);
    }
    *size = static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(std::fabs((static_cast<double>(limit) - static_cast<double>(start)) /
                                         static_cast<double>(delta)));
    if (!(n <= 9.2e18)) {
      return errors::InvalidArgument("Requires ((limit - start) / delta) <= ", INT64_MAX);
    }
    *size = static_cast<int64_t>(n);
  }
  return Status();
}

// Range's value i, start + i * delta. It lies between start and limit, so
// it fits T, but i * delta alone need not (int32 Range(-2^31, 2^31-1,
// 2^31-1) has 3 values): integers are computed modulo 2^64, which is exact
// once the result is back in T's range.
template <typename T>
T RangeValue(T start, T delta, int64_t i) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(start) +
                          static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
  } else {
    return static_cast<T>(start + static_cast<T>(i) * delta);
  }
}

// Checks one dimension's paddings (dim -1 = unknown). `mirror_offset`: -1
// for constant padding, 0 for SYMMETRIC, 1 for REFLECT.
inline Status CheckPadding(int64_t before, int64_t after, int64_t dim, int mirror_offset) {
  if (before < 0 || after < 0) {
    return errors::InvalidArgument(mirror_offset < 0 ? "Paddings" : "paddings",
                                   " must be non-negative: ", before, " ", after);
  }
  if (dim < 0) return Status();
  if (mirror_offset == 0 && (before > dim || after > dim)) {
    return errors::InvalidArgument("paddings must be no greater than the dimension size: ", before,
                                   ", ", after, " greater than ", dim);
  }
  if (mirror_offset == 1 && (before >= dim || after >= dim)) {
    return errors::InvalidArgument("paddings must be less than the dimension size: ", before, ", ",
                                   after, " not less than ", dim);
  }
  return Status();
}

// MirrorPad's (and MirrorPadGrad's) mode attr as the mirror offset: 1 for
// REFLECT (the border is not repeated), 0 for SYMMETRIC.
template <typename Context>
Status ReadMirrorPadMode(const Context* c, int* offset) {
  std::string mode;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("mode", &mode));
  if (mode == "REFLECT") {
    *offset = 1;
  } else if (mode == "SYMMETRIC") {
    *offset = 0;
  } else {
    return errors::InvalidArgument("mode must be either REFLECT or SYMMETRIC.");
  }
  return Status();
}

// ------------------------------------------------------ shape inference

// The value of constant input `i` as integers; false when not a constant.
inline bool ConstIntVector(const InferenceContext* c, int i, std::vector<int64_t>* out) {
  TensorView v;
  return c->input_tensor(i, &v) && ReadIntVector(v, out);
}

// The value of constant scalar (or one-element) input `i`.
inline bool ConstIntScalar(const InferenceContext* c, int i, int64_t* out) {
  std::vector<int64_t> v;
  if (!ConstIntVector(c, i, &v) || v.size() != 1) return false;
  *out = v[0];
  return true;
}

inline PartialShape UnknownOfRank(int64_t rank) {
  return PartialShape::Known(std::vector<int64_t>(static_cast<size_t>(rank), -1));
}

// Length of the vector input `i` when its shape is known (-1 otherwise).
inline int64_t VectorLength(const InferenceContext* c, int i) {
  const PartialShape s = c->input(i);
  return s.rank == 1 ? s.dims[0] : -1;
}

// ------------------------------------------------------------ StridedSlice

// The result of validating a StridedSlice against an input shape. Dims of
// -1 mean unknown (only in shape inference).
struct StridedSliceSpec {
  // Per input dimension (dense): canonical begin, end and stride.
  std::vector<int64_t> begin, end, strides;
  // Per input dimension: the size of the sliced range.
  std::vector<int64_t> processing_shape;
  // The output's shape (new axes added, shrunk axes removed).
  std::vector<int64_t> final_shape;
  bool is_identity = true;  // the output is the input, reshaped
};

// TensorFlow's StridedSlice validation. `input` must have a known rank; its
// dims may be -1. begin/end may be unknown (`*_known` false, shape inference
// only); strides must be known. All vectors have `n` (sparse) entries.
inline Status ValidateStridedSlice(const PartialShape& input, const std::vector<int64_t>& begin,
                                   bool begin_known, const std::vector<int64_t>& end,
                                   bool end_known, const std::vector<int64_t>& strides,
                                   int64_t begin_mask, int64_t end_mask, int64_t ellipsis_mask,
                                   int64_t new_axis_mask, int64_t shrink_axis_mask,
                                   StridedSliceSpec* spec) {
  const int n = static_cast<int>(strides.size());
  if (n > 62) {
    return errors::InvalidArgument("StridedSlice supports at most 62 slice dimensions, got ", n);
  }
  if (ellipsis_mask && (ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    return errors::InvalidArgument("Multiple ellipses in slice spec not allowed");
  }
  // Sparse spec: count new axes after the ellipsis; an implicit ellipsis
  // sits at the end when there is none.
  int sparse_dims = n;
  int64_t sparse_ellipsis = ellipsis_mask;
  int num_add_axis_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < n; ++i) {
    if (ellipsis_seen && ((int64_t{1} << i) & new_axis_mask)) ++num_add_axis_after_ellipsis;
    if ((int64_t{1} << i) & ellipsis_mask) ellipsis_seen = true;
  }
  if (!ellipsis_seen) {
    sparse_ellipsis |= int64_t{1} << sparse_dims;
    ++sparse_dims;
  }

  // Dense spec: one entry per input dimension.
  const int dims = input.rank;
  if (dims > 62) {  // the dense masks below hold one bit per input dim
    return errors::InvalidArgument("StridedSlice supports inputs of rank at most 62, got ", dims);
  }
  constexpr int kNewAxis = -1, kShrinkAxis = -2;
  std::vector<int64_t> dbegin(dims, 0), dend(dims, 0), dstrides(dims, 1);
  int64_t dbegin_mask = 0, dend_mask = 0, dshrink = 0;
  std::vector<int> gather;  // final shape: dense dim, kNewAxis or kShrinkAxis
  int full_index = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    const int64_t bit = int64_t{1} << i;
    if (bit & sparse_ellipsis) {
      const int next_index =
          std::min(dims - (sparse_dims - i) + 1 + num_add_axis_after_ellipsis, dims);
      for (; full_index < next_index; ++full_index) {
        dbegin[full_index] = dend[full_index] = 0;
        dstrides[full_index] = 1;
        dbegin_mask |= int64_t{1} << full_index;
        dend_mask |= int64_t{1} << full_index;
        gather.push_back(full_index);
      }
    } else if (bit & new_axis_mask) {
      gather.push_back(kNewAxis);
    } else {
      if (full_index == dims) {
        return errors::InvalidArgument("Index out of range using input dim ", full_index,
                                       "; input has only ", dims, " dims");
      }
      if (begin_known) dbegin[full_index] = begin[i];
      if (end_known) dend[full_index] = end[i];
      dstrides[full_index] = strides[i];
      if (begin_mask & bit) dbegin_mask |= int64_t{1} << full_index;
      if (end_mask & bit) dend_mask |= int64_t{1} << full_index;
      if (shrink_axis_mask & bit) {
        gather.push_back(kShrinkAxis);
        dshrink |= int64_t{1} << full_index;
      } else {
        gather.push_back(full_index);
      }
      ++full_index;
    }
  }

  spec->begin.assign(dims, 0);
  spec->end.assign(dims, 0);
  spec->strides.assign(dims, 1);
  spec->processing_shape.assign(dims, -1);
  spec->is_identity = true;
  for (int i = 0; i < dims; ++i) {
    const int64_t bit = int64_t{1} << i;
    int64_t b = dbegin[i], e = dend[i];
    const int64_t stride = dstrides[i];
    const int64_t dim = input.dims[i];
    if (stride == 0) return errors::InvalidArgument("strides[", i, "] must be non-zero");
    const bool shrink = (dshrink & bit) != 0;
    if (dim == -1) {
      spec->processing_shape[i] = shrink ? 1 : -1;
      spec->is_identity = false;
      continue;
    }
    const bool bmask = (dbegin_mask & bit) != 0, emask = (dend_mask & bit) != 0;
    const int64_t lo = stride > 0 ? 0 : -1;
    const int64_t hi = stride > 0 ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return (stride > 0) != is_end ? lo : hi;
      const int64_t fwd = x < 0 ? dim + x : x;
      return fwd < lo ? lo : (fwd > hi ? hi : fwd);
    };
    if (shrink && stride <= 0) {
      return errors::InvalidArgument("only stride 1 allowed on non-range indexing.");
    }
    const bool begin_and_end_masked = bmask && emask;
    if (begin_known && end_known) {
      if (shrink) {
        const int64_t fwd = b < 0 ? dim + b : b;
        if (fwd < 0 || fwd >= dim) {
          // TensorFlow names the index after wrapping a negative one.
          return errors::InvalidArgument("slice index ", fwd, " of dimension ", i, " out of bounds.");
        }
        b = fwd;
        e = b + 1;  // after the check: b may have been INT64_MAX
      } else {
        b = canonical(b, bmask, false);
        e = canonical(e, emask, true);
      }
      spec->is_identity = spec->is_identity && stride == 1 && b == 0 && e == dim && !shrink;
    } else {
      spec->is_identity = spec->is_identity && stride == 1 && begin_and_end_masked;
    }
    spec->begin[i] = b;
    spec->end[i] = e;
    spec->strides[i] = stride;
    int64_t interval = 0;
    bool known = false;
    if (begin_known && end_known) {
      interval = e - b;
      known = true;
    } else if (shrink) {
      interval = 1;
      known = true;
    } else if (begin_and_end_masked) {
      interval = stride < 0 ? -dim : dim;
      known = true;
    }
    if (known) {
      int64_t size;
      if (interval == 0 || ((interval < 0) != (stride < 0))) {
        size = 0;
      } else {
        size = interval / stride + (interval % stride != 0 ? 1 : 0);
      }
      spec->processing_shape[i] = size;
    }
  }
  spec->final_shape.clear();
  for (int g : gather) {
    if (g >= 0) {
      spec->final_shape.push_back(spec->processing_shape[g]);
    } else if (g == kNewAxis) {
      spec->final_shape.push_back(1);
    }
  }
  return Status();
}

// The five masks of StridedSlice, StridedSliceGrad (and their kin), read
// from a shape function's or a kernel's attrs.
struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;

  template <typename Context>
  Status Read(const Context* c) {
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("begin_mask", &begin));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("end_mask", &end));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("ellipsis_mask", &ellipsis));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("new_axis_mask", &new_axis));
    return c->GetAttr("shrink_axis_mask", &shrink_axis);
  }
};

// A kernel's StridedSlice spec over a tensor of `shape`: begin, end and
// strides must be vectors of one length; then ValidateStridedSlice.
inline Status StridedSliceSpecOf(const TensorView& b, const TensorView& e, const TensorView& s,
                                 const std::vector<int64_t>& shape, const StridedSliceMasks& m,
                                 StridedSliceSpec* spec) {
  if (b.rank() != 1 || e.rank() != 1 || s.rank() != 1 || b.NumElements() != e.NumElements() ||
      b.NumElements() != s.NumElements()) {
    return errors::InvalidArgument(
        "Expected begin, end, and strides to be 1D equal size tensors, but got shapes ",
        b.ShapeString(), ", ", e.ShapeString(), ", and ", s.ShapeString(), " instead.");
  }
  std::vector<int64_t> begin, end, strides;
  ReadIntVector(b, &begin);
  ReadIntVector(e, &end);
  ReadIntVector(s, &strides);
  return ValidateStridedSlice(PartialShape::Known(shape), begin, true, end, true, strides, m.begin,
                              m.end, m.ellipsis, m.new_axis, m.shrink_axis, spec);
}

}  // namespace array
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_ARRAY_ARRAY_UTIL_H_
