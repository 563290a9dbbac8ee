// CPU kernels of InvertPermutation, ConcatOffset, ReverseSequence,
// SparseToDense, Unique, UniqueV2, BroadcastArgs, StridedSliceGrad and
// MirrorPadGrad (Gather v1 shares GatherV2's kernel in gather_kernels.cc).
// Every index read from a tensor is checked against its bound before
// anything is written; an error names the index, its value and the bound.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"
#include "common/cpu/wrapping.h"
#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::CopyBox;
using array::Dims;

// Zeroes a new output (new string tensors already hold empty strings).
void ZeroOutput(TensorView* out) {
  if (out->dtype() != GR_STRING && out->NumElements() > 0) {
    std::memset(out->raw_data(), 0,
                static_cast<size_t>(out->NumElements()) * array::ElementSize(out->dtype()));
  }
}

// ----------------------------------------------------- InvertPermutation

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  explicit InvertPermutationOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    OP_REQUIRES(ctx, x.rank() == 1,
                errors::InvalidArgument("invert_permutation expects a 1D vector, got shape ",
                                        sf::ShapeString(x)));
    const int64_t n = x.NumElements();
    OP_REQUIRES(ctx, n <= std::numeric_limits<int32_t>::max(),
                errors::InvalidArgument("permutation of nonnegative int32s must have <= int32 max "
                                        "elements"));
    TensorView y;
    if (!ctx->allocate_output(0, x.dims_data(), 1, &y).ok()) return;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    std::fill(out, out + n, T(-1));
    for (int64_t i = 0; i < n; ++i) {
      const T d = in[i];
      OP_REQUIRES(ctx, d >= 0 && d < n,
                  errors::InvalidArgument("x[", i, "] = ", d, " is not between 0 and ", n));
      OP_REQUIRES(ctx, out[d] == T(-1),
                  errors::InvalidArgument(d, " is duplicated in the input (x[", out[d], "] and x[",
                                          i, "])"));
      out[d] = static_cast<T>(i);
    }
  }
};

// ---------------------------------------------------------- ConcatOffset

// offset[i] is zero except along the axis, where it is the sum of the
// sizes of shapes 0..i-1 there.
class ConcatOffsetOp : public OpKernel {
 public:
  explicit ConcatOffsetOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView concat_dim = ctx->input(0);
    OP_REQUIRES(ctx, concat_dim.rank() == 0,
                errors::InvalidArgument("Concat dim tensor should be a scalar integer, but got "
                                        "shape ",
                                        sf::ShapeString(concat_dim)));
    const int n = ctx->num_inputs() - 1;
    for (int i = 0; i < n; ++i) {
      const TensorView s = ctx->input(1 + i);
      OP_REQUIRES(ctx, s.rank() == 1,
                  errors::InvalidArgument("input ", i, " should be a vector, but got shape ",
                                          sf::ShapeString(s)));
    }
    const TensorView s0 = ctx->input(1);
    const int64_t dims = s0.NumElements();
    const int64_t cdim = concat_dim.scalar<int32_t>();
    const int64_t axis = cdim < 0 ? cdim + dims : cdim;
    OP_REQUIRES(ctx, axis >= 0 && axis < dims,
                errors::InvalidArgument("Concat dim is out of range: ", cdim, " vs. ", dims));
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      const TensorView s = ctx->input(1 + i);
      OP_REQUIRES(ctx, s.NumElements() == dims,
                  errors::InvalidArgument("input ", i, " should contain ", dims,
                                          " elements, but got ", s.NumElements()));
      const int32_t* v = s.data<int32_t>();
      for (int64_t j = 0; j < dims; ++j) {
        if (j == axis) continue;
        OP_REQUIRES(ctx, v[j] == s0.data<int32_t>()[j],
                    errors::InvalidArgument("All dimensions except ", axis, " must match. Input ",
                                            i, " has shape [", array::JoinInts(Values(s)),
                                            "] and doesn't match input 0 with shape [",
                                            array::JoinInts(Values(s0)), "]."));
      }
      OP_REQUIRES(ctx, v[axis] >= 0,
                  errors::InvalidArgument("input ", i, " has a negative size ", v[axis],
                                          " along the concat dim ", axis));
      TensorView out;
      if (!ctx->allocate_output(i, &dims, 1, &out).ok()) return;
      int32_t* o = out.data<int32_t>();
      std::fill(o, o + dims, 0);
      o[axis] = static_cast<int32_t>(offset);
      offset += v[axis];
      OP_REQUIRES(ctx, offset <= std::numeric_limits<int32_t>::max(),
                  errors::InvalidArgument("the sizes along the concat dim add up to ", offset,
                                          ", more than int32 holds"));
    }
  }

 private:
  static std::vector<int64_t> Values(const TensorView& v) {
    std::vector<int64_t> out;
    array::ReadIntVector(v, &out);
    return out;
  }
};

// -------------------------------------------------------- ReverseSequence

class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("seq_dim", &seq_dim_));
    c->SetStatus(c->GetAttr("batch_dim", &batch_dim_));
    if (batch_dim_ < 0) c->SetStatus(errors::InvalidArgument("Invalid batch_dim ", batch_dim_));
    if (seq_dim_ < 0) c->SetStatus(errors::InvalidArgument("Invalid seq_dim ", seq_dim_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView lens = ctx->input(1);
    const int r = in.rank();
    OP_REQUIRES(ctx, batch_dim_ != seq_dim_,
                errors::InvalidArgument("batch_dim == seq_dim == ", seq_dim_));
    OP_REQUIRES(
        ctx, seq_dim_ < r,
        errors::InvalidArgument("seq_dim must be < input rank ( ", seq_dim_, " vs. ", r, ")"));
    OP_REQUIRES(
        ctx, batch_dim_ < r,
        errors::InvalidArgument("batch_dim must be < input rank ( ", batch_dim_, " vs. ", r, ")"));
    OP_REQUIRES(ctx, lens.rank() == 1,
                errors::InvalidArgument("seq_lengths must be 1-dim, not ", sf::ShapeString(lens)));
    const int bd = static_cast<int>(batch_dim_), sd = static_cast<int>(seq_dim_);
    const int64_t batch = in.dim(bd), seq = in.dim(sd);
    OP_REQUIRES(ctx, lens.NumElements() == batch,
                errors::InvalidArgument("Length of seq_lengths != input.dims(", bd, "), (",
                                        lens.NumElements(), " vs. ", batch, ")"));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t l = array::IntAt(lens, b);
      OP_REQUIRES(ctx, l >= 0 && l <= seq,
                  errors::InvalidArgument("seq_lengths[", b, "] = ", l, " is not in [0, ", seq,
                                          "] (input.dims(", sd, ") = ", seq, ")"));
    }
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("ReverseSequence", in.dtype()));
    TensorView out;
    if (!ctx->allocate_output(0, in.dims_data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    // Per batch entry b: its first seq_lengths[b] steps along seq_dim come
    // from the input read backwards, the rest are copied through.
    const Dims strides = array::RowMajorStrides(in.dims_data(), r);
    const array::CopyTarget target = array::TargetOf(&out);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t l = array::IntAt(lens, b);
      for (int part = 0; part < 2; ++part) {
        const int64_t steps = part == 0 ? l : seq - l;
        if (steps == 0) continue;
        CopyBox box;
        for (int d = 0; d < r; ++d) {
          if (d == bd) {
            box.Add(1, strides[d], strides[d]);
          } else if (d == sd) {
            box.Add(steps, part == 0 ? -strides[d] : strides[d], strides[d]);
          } else {
            box.Add(in.dim(d), strides[d], strides[d]);
          }
        }
        const int64_t dst = b * strides[bd] + (part == 0 ? 0 : l * strides[sd]);
        const int64_t src = part == 0 ? b * strides[bd] + (l - 1) * strides[sd] : dst;
        array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), src, target, dst);
      }
    }
  }

 private:
  int64_t seq_dim_ = 0, batch_dim_ = 0;
};

// ---------------------------------------------------------- SparseToDense

class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("validate_indices", &validate_indices_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView indices = ctx->input(0);
    const TensorView shape_t = ctx->input(1);
    const TensorView values = ctx->input(2);
    const TensorView default_value = ctx->input(3);
    OP_REQUIRES(ctx, indices.rank() <= 2,
                errors::InvalidArgument("sparse_indices should be a scalar, vector, or matrix, "
                                        "got shape ",
                                        sf::ShapeString(indices)));
    OP_REQUIRES(ctx, shape_t.rank() == 1,
                errors::InvalidArgument("output_shape should be a vector, got shape ",
                                        sf::ShapeString(shape_t)));
    const int64_t num_elems = indices.rank() > 0 ? indices.dim(0) : 1;
    const int64_t num_dims = indices.rank() > 1 ? indices.dim(1) : 1;
    OP_REQUIRES(
        ctx, values.rank() == 0 || (values.rank() == 1 && values.dim(0) == num_elems),
        errors::InvalidArgument("sparse_values has incorrect shape ", sf::ShapeString(values),
                                ", should be [] or [", num_elems, "]"));
    OP_REQUIRES(ctx, default_value.rank() == 0,
                errors::InvalidArgument("default_value should be a scalar, got shape ",
                                        sf::ShapeString(default_value)));
    OP_REQUIRES(ctx, shape_t.NumElements() == num_dims,
                errors::InvalidArgument("output_shape has incorrect number of elements: ",
                                        shape_t.NumElements(), " should be: ", num_dims));
    OP_REQUIRES(ctx, array::Copyable(values.dtype()),
                array::UnsupportedDtype("SparseToDense", values.dtype()));
    std::vector<int64_t> shape;
    array::ReadIntVector(shape_t, &shape);
    int64_t total = 0;
    OP_REQUIRES_OK(ctx, NumElementsOf(shape, &total));
    const int r = static_cast<int>(num_dims);
    // Validate every index (bounds always; order and repeats when asked),
    // naming the first bad one.
    for (int64_t i = 0; i < num_elems; ++i) {
      int cmp = 1;  // index i against index i - 1: <0, 0 or >0
      bool in_bounds = true;
      for (int d = 0; d < r; ++d) {
        const int64_t v = array::IntAt(indices, i * r + d);
        in_bounds = in_bounds && v >= 0 && v < shape[d];
        if (i > 0 && cmp == 1) {
          const int64_t prev = array::IntAt(indices, (i - 1) * r + d);
          if (v != prev) cmp = v < prev ? -1 : 2;
        }
      }
      if (i > 0 && cmp == 1) cmp = 0;  // every coordinate equal
      OP_REQUIRES(ctx, in_bounds,
                  errors::InvalidArgument("indices[", i, "] = ", IndexText(indices, i, r),
                                          " is out of bounds: need 0 <= index < [",
                                          array::JoinInts(shape), "]"));
      if (!validate_indices_ || i == 0) continue;
      OP_REQUIRES(ctx, cmp != -1,
                  errors::InvalidArgument("indices[", i, "] = ", IndexText(indices, i, r),
                                          " is out of order. Many sparse ops require sorted "
                                          "indices. Use `tf.sparse.reorder` to create a "
                                          "correctly ordered copy."));
      OP_REQUIRES(
          ctx, cmp != 0,
          errors::InvalidArgument("indices[", i, "] = ", IndexText(indices, i, r), " is repeated"));
    }
    TensorView out;
    if (!ctx->allocate_output(0, shape, &out).ok()) return;
    if (total == 0) return;
    array::FillElements(ctx, &out, 0, total, default_value.raw_data());
    const bool scalar_value = values.rank() == 0;
    const int es = array::ElementSize(values.dtype());
    // In order, so that a repeated index (validate_indices false) keeps its
    // last value.
    for (int64_t i = 0; i < num_elems; ++i) {
      int64_t flat = 0;
      for (int d = 0; d < r; ++d) flat = flat * shape[d] + array::IntAt(indices, i * r + d);
      array::CopyElements(values.dtype(), es, values.raw_data(), scalar_value ? 0 : i, &out, flat,
                          1);
    }
  }

 private:
  static std::string IndexText(const TensorView& indices, int64_t i, int r) {
    std::vector<int64_t> v;
    for (int d = 0; d < r; ++d) v.push_back(array::IntAt(indices, i * r + d));
    return "[" + array::JoinInts(v) + "]";
  }

  bool validate_indices_ = true;
};

// ------------------------------------------------------- Unique, UniqueV2

// Element hashing and equality as TensorFlow compares values: floats by
// value (-0 == 0; every NaN is distinct), half and bfloat16 as floats,
// strings by content.
template <typename T>
size_t HashElem(const T& v) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return std::hash<float>()(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, GR_StringElem>) {
    return std::hash<std::string_view>()(std::string_view(v.data, v.size));
  } else {
    return std::hash<T>()(v);
  }
}

template <typename T>
bool EqualElem(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return static_cast<float>(a) == static_cast<float>(b);
  } else if constexpr (std::is_same_v<T, GR_StringElem>) {
    return std::string_view(a.data, a.size) == std::string_view(b.data, b.size);
  } else {
    return a == b;
  }
}

// x viewed as [outer, n, inner]; slice j is x[:, j, :]. Sets idx[j] to the
// number of the first slice equal to slice j, numbering distinct slices in
// the order they first occur, and `first` to each one's first position.
template <typename T>
void UniqueSlices(const T* x, int64_t outer, int64_t n, int64_t inner, std::vector<int64_t>* idx,
                  std::vector<int64_t>* first) {
  auto elem = [&](int64_t j, int64_t k) -> const T& {
    return x[(k / inner * n + j) * inner + k % inner];
  };
  const int64_t m = outer * inner;
  auto hash = [&](int64_t j) {
    size_t h = 0;
    for (int64_t k = 0; k < m; ++k) h = h * 1000003u ^ HashElem(elem(j, k));
    return h;
  };
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t k = 0; k < m; ++k)
      if (!EqualElem(elem(a, k), elem(b, k))) return false;
    return true;
  };
  std::unordered_map<int64_t, int64_t, decltype(hash), decltype(equal)> ids(
      static_cast<size_t>(std::min<int64_t>(n, 1 << 20)), hash, equal);
  idx->resize(static_cast<size_t>(n));
  first->clear();
  for (int64_t j = 0; j < n; ++j) {
    const auto it = ids.emplace(j, static_cast<int64_t>(first->size()));
    if (it.second) first->push_back(j);
    (*idx)[static_cast<size_t>(j)] = it.first->second;
  }
}

// Calls f(T{}) with T the element type of the dtypes Unique supports
// (TensorFlow's real number types, bool and string).
template <typename F>
bool DispatchUnique(int32_t dtype, F&& f) {
  if (dtype == GR_BOOL) {
    f(bool{});
    return true;
  }
  if (dtype == GR_STRING) {
    f(GR_StringElem{});
    return true;
  }
  if (dtype == GR_COMPLEX64 || dtype == GR_COMPLEX128) return false;
  return state::DispatchNumeric(static_cast<DataType>(dtype), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, std::complex<float>> &&
                  !std::is_same_v<T, std::complex<double>>) {
      f(zero);
    }
  });
}

class UniqueOp : public OpKernel {
 public:
  explicit UniqueOp(OpKernelConstruction* c) : OpKernel(c), idx32_(c->output_type(1) == GR_INT32) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    int64_t axis = -1;  // none: x must be a vector
    if (ctx->num_inputs() == 2) {
      const TensorView axis_t = ctx->input(1);
      OP_REQUIRES(
          ctx, axis_t.rank() == 1,
          errors::InvalidArgument("axis expects a 1D vector, got shape ", sf::ShapeString(axis_t)));
      OP_REQUIRES(ctx, axis_t.NumElements() <= 1,
                  errors::InvalidArgument("axis does not support input tensors larger than 1 "
                                          "elements"));
      if (axis_t.NumElements() == 1) {
        axis = array::IntAt(axis_t, 0);
        const int64_t r = x.rank();
        OP_REQUIRES(ctx, axis >= -r && axis < r,
                    errors::InvalidArgument("axis ", axis, " is not in [", -r, ", ", r,
                                            ") for an input of shape ", sf::ShapeString(x)));
        if (axis < 0) axis += r;
      }
    }
    if (axis < 0) {
      OP_REQUIRES(
          ctx, x.rank() == 1,
          errors::InvalidArgument("unique expects a 1D vector, got shape ", sf::ShapeString(x)));
      axis = 0;
    }
    const int a = static_cast<int>(axis);
    const int64_t n = x.dim(a);
    OP_REQUIRES(ctx, !idx32_ || n <= std::numeric_limits<int32_t>::max(),
                errors::InvalidArgument("unique does not support input tensors larger than ",
                                        std::numeric_limits<int32_t>::max(),
                                        " elements with out_idx int32"));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < a; ++d) outer *= x.dim(d);
    for (int d = a + 1; d < x.rank(); ++d) inner *= x.dim(d);
    std::vector<int64_t> idx, first;
    if (n > 0 && outer * inner > 0) {
      const bool known = DispatchUnique(x.dtype(), [&](auto zero) {
        using T = decltype(zero);
        UniqueSlices<T>(x.data<T>(), outer, n, inner, &idx, &first);
      });
      OP_REQUIRES(
          ctx, known,
          array::UnsupportedDtype(ctx->num_inputs() == 2 ? "UniqueV2" : "Unique", x.dtype()));
    } else if (n > 0) {
      // Empty slices are all equal.
      idx.assign(static_cast<size_t>(n), 0);
      first.assign(1, 0);
    }
    const int64_t k = static_cast<int64_t>(first.size());
    std::vector<int64_t> y_dims = x.dims();
    y_dims[a] = k;
    TensorView y, idx_out;
    if (!ctx->allocate_output(0, y_dims, &y).ok()) return;
    const int es = array::ElementSize(x.dtype());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t t = 0; t < k; ++t) {
        array::CopyElements(x.dtype(), es, x.raw_data(), (o * n + first[t]) * inner, &y,
                            (o * k + t) * inner, inner);
      }
    }
    if (!ctx->allocate_output(1, &n, 1, &idx_out).ok()) return;
    for (int64_t j = 0; j < n; ++j) {
      if (idx32_) {
        idx_out.data<int32_t>()[j] = static_cast<int32_t>(idx[j]);
      } else {
        idx_out.data<int64_t>()[j] = idx[j];
      }
    }
  }

 private:
  const bool idx32_;  // out_idx is int32
};

// ---------------------------------------------------------------- ListDiff

class ListDiffOp : public OpKernel {
 public:
  explicit ListDiffOp(OpKernelConstruction* c) : OpKernel(c), idx32_(c->output_type(1) == GR_INT32) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0), y = ctx->input(1);
    OP_REQUIRES(ctx, x.rank() == 1, errors::InvalidArgument("x should be a 1D vector, got shape ", sf::ShapeString(x)));
    OP_REQUIRES(ctx, y.rank() == 1, errors::InvalidArgument("y should be a 1D vector, got shape ", sf::ShapeString(y)));
    const int64_t n = x.dim(0);
    OP_REQUIRES(ctx, !idx32_ || n <= std::numeric_limits<int32_t>::max(),
                errors::InvalidArgument("ListDiff does not support more than ", std::numeric_limits<int32_t>::max(),
                                        " elements with out_idx int32"));
    std::vector<int64_t> kept;
    const bool known = DispatchUnique(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      auto hash = [](const T& v) { return HashElem(v); };
      auto equal = [](const T& a, const T& b) { return EqualElem(a, b); };
      std::unordered_set<T, decltype(hash), decltype(equal)> in_y(
          static_cast<size_t>(std::min<int64_t>(y.dim(0), 1 << 20)), hash, equal);
      for (int64_t j = 0; j < y.dim(0); ++j) in_y.insert(y.data<T>()[j]);
      for (int64_t i = 0; i < n; ++i)
        if (in_y.count(x.data<T>()[i]) == 0) kept.push_back(i);
    });
    OP_REQUIRES(ctx, known, array::UnsupportedDtype("ListDiff", x.dtype()));
    const int64_t k = static_cast<int64_t>(kept.size());
    TensorView out, idx;
    if (!ctx->allocate_output(0, &k, 1, &out).ok()) return;
    if (!ctx->allocate_output(1, &k, 1, &idx).ok()) return;
    const int es = array::ElementSize(x.dtype());
    for (int64_t t = 0; t < k; ++t) {
      array::CopyElements(x.dtype(), es, x.raw_data(), kept[t], &out, t, 1);
      if (idx32_) {
        idx.data<int32_t>()[t] = static_cast<int32_t>(kept[t]);
      } else {
        idx.data<int64_t>()[t] = kept[t];
      }
    }
  }

 private:
  const bool idx32_;  // out_idx is int32
};

// ----------------------------------------------------------- BroadcastArgs

template <typename T>
class BroadcastArgsOp : public OpKernel {
 public:
  explicit BroadcastArgsOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView s0 = ctx->input(0), s1 = ctx->input(1);
    OP_REQUIRES(ctx, s0.rank() == 1,
                errors::InvalidArgument("In[0] must be a vector, got shape ", sf::ShapeString(s0)));
    OP_REQUIRES(ctx, s1.rank() == 1,
                errors::InvalidArgument("In[1] must be a vector, got shape ", sf::ShapeString(s1)));
    std::vector<int64_t> a, b, out;
    array::ReadIntVector(s0, &a);
    array::ReadIntVector(s1, &b);
    OP_REQUIRES(ctx, sf::BroadcastShapes(a, b, &out),
                errors::InvalidArgument("Incompatible shapes: [", array::JoinInts(a), "] vs. [",
                                        array::JoinInts(b), "]"));
    const int64_t n = static_cast<int64_t>(out.size());
    TensorView r0;
    if (!ctx->allocate_output(0, &n, 1, &r0).ok()) return;
    for (int64_t i = 0; i < n; ++i) r0.data<T>()[i] = static_cast<T>(out[i]);
  }
};

// -------------------------------------------------------- StridedSliceGrad

// The adjoint of StridedSlice: a zero tensor of `shape` with dy written to
// the positions StridedSlice reads (which are distinct, so this is a
// copy, not a sum). The slice spec is StridedSlice's own
// (array::ValidateStridedSlice).
class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(masks_.Read(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView shape_t = ctx->input(0);
    const TensorView dy = ctx->input(4);
    OP_REQUIRES(
        ctx, shape_t.rank() == 1,
        errors::InvalidArgument("shape must be 1-D, got shape.shape = ", sf::ShapeString(shape_t)));
    OP_REQUIRES(ctx, array::Copyable(dy.dtype()),
                array::UnsupportedDtype("StridedSliceGrad", dy.dtype()));
    std::vector<int64_t> shape;
    array::ReadIntVector(shape_t, &shape);
    int64_t total = 0;
    OP_REQUIRES_OK(ctx, NumElementsOf(shape, &total));
    array::StridedSliceSpec spec;
    OP_REQUIRES_OK(ctx, array::StridedSliceSpecOf(ctx->input(1), ctx->input(2), ctx->input(3),
                                                  shape, masks_, &spec));
    OP_REQUIRES(ctx, dy.dims() == spec.final_shape,
                errors::InvalidArgument("shape of dy was ", sf::ShapeString(dy), " instead of ",
                                        sf::ShapeString(spec.final_shape)));
    if (spec.is_identity) {
      ctx->set_output_from_input(0, 4, shape);
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, shape, &out).ok()) return;
    ZeroOutput(&out);
    if (dy.NumElements() == 0) return;
    int64_t base = 0;
    const CopyBox box =
        array::StridedSliceBox(shape.data(), static_cast<int>(shape.size()), spec, false, &base);
    array::StridedCopy(ctx, dy.dtype(), box, dy.raw_data(), 0, array::TargetOf(&out), base);
  }

 private:
  array::StridedSliceMasks masks_;
};

// ----------------------------------------------------------- MirrorPadGrad

// Adds row `src` (the input's dims 1.., contiguous) into the output row at
// `dst`: input index p of dim d lands at output offset off[d][p].
template <typename T>
void FoldRow(const T* src, T* dst, int r, const int64_t* in_dims,
             const std::vector<std::vector<int64_t>>& off) {
  if (r == 1) {
    dst[0] = cwise::WrappingAdd(dst[0], src[0]);
    return;
  }
  const int last = r - 1;
  const int64_t n_last = in_dims[last];
  const int64_t* last_off = off[last].data();
  Dims idx(r, 0);
  int64_t base = 0;
  for (int d = 1; d < last; ++d) base += off[d][0];
  for (;;) {
    for (int64_t k = 0; k < n_last; ++k) {
      T& d = dst[base + last_off[k]];
      d = cwise::WrappingAdd(d, src[k]);
    }
    src += n_last;
    int d = last - 1;
    for (; d >= 1; --d) {
      base -= off[d][idx[d]];
      if (++idx[d] < in_dims[d]) {
        base += off[d][idx[d]];
        break;
      }
      idx[d] = 0;
      base += off[d][0];
    }
    if (d < 1) return;
  }
}

class MirrorPadGradOp : public OpKernel {
 public:
  explicit MirrorPadGradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(array::ReadMirrorPadMode(c, &offset_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView p = ctx->input(1);
    const int r = in.rank();
    OP_REQUIRES(ctx, state::DispatchNumeric(in.dtype(), [](auto) {}),
                array::UnsupportedDtype("MirrorPadGrad", in.dtype()));
    OP_REQUIRES(
        ctx, p.rank() == 2 && p.dim(1) == 2,
        errors::InvalidArgument("paddings must be a matrix with 2 columns: ", sf::ShapeString(p)));
    OP_REQUIRES(ctx, p.dim(0) == r,
                errors::InvalidArgument("The first dimension of paddings must be the rank of "
                                        "inputs",
                                        sf::ShapeString(p), " ", sf::ShapeString(in)));
    Dims out_dims(r), before(r);
    for (int d = 0; d < r; ++d) {
      const int64_t lo = array::IntAt(p, 2 * d), hi = array::IntAt(p, 2 * d + 1);
      OP_REQUIRES(ctx, lo >= 0 && hi >= 0,
                  errors::InvalidArgument("Paddings must be non-negative: ", lo, ", ", hi));
      const int64_t dim = in.dim(d);
      OP_REQUIRES(ctx, lo <= dim && hi <= dim - lo,  // not lo + hi: it may overflow
                  errors::InvalidArgument("paddings ", lo, ", ", hi, " of dimension ", d,
                                          " exceed its size ", dim));
      const int64_t n = dim - lo - hi;
      if (offset_ == 0) {
        OP_REQUIRES(ctx, lo <= n && hi <= n,
                    errors::InvalidArgument("paddings must be no greater than the output "
                                            "dimension size: ",
                                            lo, ", ", hi, " greater than ", n));
      } else {
        OP_REQUIRES(ctx, lo < n && hi < n,
                    errors::InvalidArgument("paddings must be less than the output dimension "
                                            "size: ",
                                            lo, ", ", hi, " not less than ", n));
      }
      out_dims[d] = n;
      before[d] = lo;
    }
    bool padded = false;
    for (int d = 0; d < r; ++d) padded = padded || out_dims[d] != in.dim(d);
    if (!padded) {  // a scalar, or no padding: nothing to fold
      ctx->set_output_from_input(0, 0);
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    // off[d][p]: where input index p of dim d lands in the output (times
    // the output's stride), by MirrorPad's rule read backwards: the
    // interior maps to itself, a pad to the element it mirrors.
    const Dims os = array::RowMajorStrides(out_dims.data(), r);
    std::vector<std::vector<int64_t>> off(static_cast<size_t>(r));
    for (int d = 0; d < r; ++d) {
      const int64_t n = out_dims[d], lo = before[d];
      off[d].resize(static_cast<size_t>(in.dim(d)));
      for (int64_t q = 0; q < in.dim(d); ++q) {
        int64_t j = q - lo;
        if (j < 0) j = -j - 1 + offset_;
        if (j >= n) j = 2 * n - 1 - j - offset_;
        off[d][q] = j * os[d];
      }
    }
    // Output rows of dim 0 are independent: each sums its (at most three)
    // input rows, so the work splits over them.
    const int64_t n0 = out_dims[0];
    std::vector<std::vector<int64_t>> sources(static_cast<size_t>(n0));
    for (int64_t q = 0; q < in.dim(0); ++q) sources[off[0][q] / os[0]].push_back(q);
    const int64_t row = in.NumElements() / in.dim(0);
    state::DispatchNumeric(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* x = in.data<T>();
      T* y = out.data<T>();
      ForRange(ctx, n0, in.NumElements(), row * 2, [&](int64_t lo, int64_t hi) {
        for (int64_t j = lo; j < hi; ++j) {
          std::fill(y + j * os[0], y + (j + 1) * os[0], T(0));
          for (int64_t q : sources[j])
            FoldRow<T>(x + q * row, y + j * os[0], r, in.dims_data(), off);
        }
      });
    });
  }

 private:
  int offset_ = 0;
};

}  // namespace

REGISTER_KERNEL(Name("InvertPermutation").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                InvertPermutationOp<int32_t>);
REGISTER_KERNEL(Name("InvertPermutation").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                InvertPermutationOp<int64_t>);
REGISTER_KERNEL(Name("ConcatOffset")
                    .Device(DEVICE_CPU)
                    .HostMemory("concat_dim")
                    .HostMemory("shape")
                    .HostMemory("offset")
                    .Inexpensive(),
                ConcatOffsetOp);
REGISTER_KERNEL(Name("ReverseSequence").Device(DEVICE_CPU), ReverseSequenceOp);
REGISTER_KERNEL(Name("SparseToDense").Device(DEVICE_CPU), SparseToDenseOp);
REGISTER_KERNEL(Name("Unique").Device(DEVICE_CPU), UniqueOp);
REGISTER_KERNEL(Name("ListDiff").Device(DEVICE_CPU), ListDiffOp);
REGISTER_KERNEL(Name("UniqueV2").Device(DEVICE_CPU).HostMemory("axis"), UniqueOp);
REGISTER_KERNEL(Name("BroadcastArgs")
                    .Device(DEVICE_CPU)
                    .TypeConstraint<int32_t>("T")
                    .HostMemory("s0")
                    .HostMemory("s1")
                    .HostMemory("r0")
                    .Inexpensive(),
                BroadcastArgsOp<int32_t>);
REGISTER_KERNEL(Name("BroadcastArgs")
                    .Device(DEVICE_CPU)
                    .TypeConstraint<int64_t>("T")
                    .HostMemory("s0")
                    .HostMemory("s1")
                    .HostMemory("r0")
                    .Inexpensive(),
                BroadcastArgsOp<int64_t>);
REGISTER_KERNEL(Name("StridedSliceGrad")
                    .Device(DEVICE_CPU)
                    .HostMemory("shape")
                    .HostMemory("begin")
                    .HostMemory("end")
                    .HostMemory("strides"),
                StridedSliceGradOp);
REGISTER_KERNEL(Name("MirrorPadGrad").Device(DEVICE_CPU).HostMemory("paddings"), MirrorPadGradOp);

}  // namespace sdk
}  // namespace graphrt
