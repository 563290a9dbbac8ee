// CPU kernels of GatherV2 (with batch_dims) and Gather, GatherNd, ScatterNd,
// TensorScatterUpdate/Add/Sub and OneHot. Indices are validated before
// anything is written; a bad index is an InvalidArgument in TensorFlow's
// words, never an out-of-bounds access.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"
#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::CopyElements;
using array::Dims;

// "[1,2]": the multi-index of flat element `i` of a tensor of `dims`.
std::string IndexString(const int64_t* dims, int rank, int64_t i) {
  Dims idx(rank, 0);
  for (int d = rank - 1; d >= 0; --d) {
    idx[d] = dims[d] == 0 ? 0 : i % dims[d];
    if (dims[d] != 0) i /= dims[d];
  }
  return DimsString(idx.data(), rank);
}

// ------------------------------------------------------- GatherV2, Gather

// Gather (v1) is GatherV2 along axis 0 without batch dims: it has no axis
// input and no batch_dims attr.
class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* c) : OpKernel(c) {
    if (c->num_inputs() == 3) c->SetStatus(c->GetAttr("batch_dims", &batch_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView params = ctx->input(0);
    const TensorView indices = ctx->input(1);
    int64_t axis = 0;
    if (ctx->num_inputs() == 3) {
      const TensorView axis_t = ctx->input(2);
      OP_REQUIRES(ctx, axis_t.NumElements() == 1,
                  errors::InvalidArgument("axis must be scalar, but got ",
                                          sf::ShapeString(axis_t)));
      axis = array::IntAt(axis_t, 0);
    }
    OP_REQUIRES(ctx, array::Copyable(params.dtype()),
                array::UnsupportedDtype(ctx->num_inputs() == 3 ? "GatherV2" : "Gather", params.dtype()));
    const int pr = params.rank(), ir = indices.rank();
    OP_REQUIRES(ctx, pr >= 1, errors::InvalidArgument("params must be at least 1 dimensional"));
    OP_REQUIRES(ctx, axis >= -pr && axis < pr,
                errors::InvalidArgument("Expected axis in the range [", -pr, ", ", pr,
                                        "), but got ", axis));
    if (axis < 0) axis += pr;
    int64_t bd = batch_dims_;
    if (bd != 0) {
      OP_REQUIRES(ctx, bd >= -ir && bd <= ir,
                  errors::InvalidArgument("Expected batch_dims in the range [", -ir, ", ", ir,
                                          "], but got ", bd));
      if (bd < 0) bd += ir;
      OP_REQUIRES(ctx, bd < pr,
                  errors::InvalidArgument("batch_dims (", bd, ") must be less than rank(params) (",
                                          pr, ")."));
      OP_REQUIRES(ctx, axis >= bd,
                  errors::InvalidArgument("batch_dims (", bd,
                                          ") must be less than or equal to axis (", axis, ")."));
      for (int i = 0; i < bd; ++i) {
        OP_REQUIRES(ctx, params.dim(i) == indices.dim(i),
                    errors::InvalidArgument("params.shape[", i, "]: ", params.dim(i),
                                            " should be equal to indices.shape[", i,
                                            "]: ", indices.dim(i)));
      }
    }
    const int a = static_cast<int>(axis), b = static_cast<int>(bd);
    Dims out_dims;
    int64_t batch = 1, outer = 1, inner = 1, m = 1;
    for (int i = 0; i < a; ++i) {
      out_dims.push_back(params.dim(i));
      (i < b ? batch : outer) *= params.dim(i);
    }
    for (int i = b; i < ir; ++i) {
      out_dims.push_back(indices.dim(i));
      m *= indices.dim(i);
    }
    for (int i = a + 1; i < pr; ++i) {
      out_dims.push_back(params.dim(i));
      inner *= params.dim(i);
    }
    const int64_t limit = params.dim(a);
    // Validate every index first.
    const int64_t n_idx = indices.NumElements();
    for (int64_t i = 0; i < n_idx; ++i) {
      const int64_t v = array::IntAt(indices, i);
      OP_REQUIRES(ctx, v >= 0 && v < limit,
                  errors::InvalidArgument("indices", IndexString(indices.dims_data(), ir, i),
                                          " = ", v, " is not in [0, ", limit, ")"));
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), out_dims.size(), &out).ok()) return;
    if (out.NumElements() == 0) return;
    const int32_t dtype = params.dtype();
    const int es = array::ElementSize(dtype);
    const void* src = params.raw_data();
    const int64_t units = batch * outer * m;
    const int64_t cost = (dtype == GR_STRING ? 40 : 1) * inner + 5;
    ForRange(ctx, units, out.NumElements(), cost, [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) {
        const int64_t j = u % m;
        const int64_t bo = u / m;  // batch * outer + o
        const int64_t bi = bo / outer;
        const int64_t idx = array::IntAt(indices, bi * m + j);
        CopyElements(dtype, es, src, (bo * limit + idx) * inner, &out, u * inner, inner);
      }
    });
  }

 private:
  int64_t batch_dims_ = 0;
};

// --------------------------------------------------------------- GatherNd

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView params = ctx->input(0);
    const TensorView indices = ctx->input(1);
    OP_REQUIRES(ctx, array::Copyable(params.dtype()),
                array::UnsupportedDtype("GatherNd", params.dtype()));
    const int ir = indices.rank(), pr = params.rank();
    OP_REQUIRES(ctx, ir >= 1, errors::InvalidArgument("indices must be at least a vector"));
    const int64_t k = indices.dim(ir - 1);
    OP_REQUIRES(ctx, k <= pr,
                errors::InvalidArgument("index innermost dimension length must be <= params "
                                        "rank; saw: ",
                                        k, " vs. ", pr));
    Dims out_dims;
    int64_t n = 1, slice = 1;
    for (int i = 0; i < ir - 1; ++i) {
      out_dims.push_back(indices.dim(i));
      n *= indices.dim(i);
    }
    for (int i = static_cast<int>(k); i < pr; ++i) {
      out_dims.push_back(params.dim(i));
      slice *= params.dim(i);
    }
    // n and slice come from two tensors: test them, not their product.
    OP_REQUIRES(ctx, params.NumElements() > 0 || n == 0 || slice == 0,
                errors::InvalidArgument("Requested more than 0 entries, but params is empty.  "
                                        "Params shape: ",
                                        sf::ShapeString(params)));
    // Validate, naming the first bad index tuple.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t d = 0; d < k; ++d) {
        const int64_t v = array::IntAt(indices, i * k + d);
        if (v < 0 || v >= params.dim(static_cast<int>(d))) {
          std::string tuple;
          for (int64_t e = 0; e < k; ++e)
            tuple += (e ? ", " : "") + std::to_string(array::IntAt(indices, i * k + e));
          OP_REQUIRES(ctx, false,
                      errors::InvalidArgument(
                          "indices", IndexString(indices.dims_data(), ir - 1, i), " = [", tuple,
                          "] does not index into param shape ", sf::ShapeString(params),
                          ", node name: ", ctx->node_name()));
        }
      }
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), out_dims.size(), &out).ok()) return;
    if (out.NumElements() == 0) return;
    const int32_t dtype = params.dtype();
    const int es = array::ElementSize(dtype);
    const void* src = params.raw_data();
    const int64_t cost = (dtype == GR_STRING ? 40 : 1) * slice + 5 * k;
    ForRange(ctx, n, out.NumElements(), cost, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t off = 0;
        for (int64_t d = 0; d < k; ++d) {
          off = off * params.dim(static_cast<int>(d)) + array::IntAt(indices, i * k + d);
        }
        CopyElements(dtype, es, src, off * slice, &out, i * slice, slice);
      }
    });
  }
};

// ------------------------------------------------ ScatterNd, TensorScatter*

template <typename T>
inline void Accumulate(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}
template <>
inline void Accumulate<bool>(bool* dst, const bool* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = dst[i] || src[i];
}

// Where ScatterNd-style updates go into a tensor of `shape` (ScatterNd's
// output, TensorScatter*'s input): indices [n..., k] name slices of
// shape[k:], updates are [n..., shape[k:]...]. Checks the shapes and every
// index tuple (naming the first bad one) before anything is written.
struct ScatterPlan {
  int64_t n = 0, k = 0, slice = 1;
};

Status PlanScatterNd(const TensorView& indices, const TensorView& updates, const Dims& shape,
                     bool tensor_is_output, ScatterPlan* plan) {
  const char* tensor_name = tensor_is_output ? "output" : "input";
  const int r = shape.size();
  const std::string shape_str = sf::ShapeString(shape.data(), r);
  const int ir = indices.rank();
  if (ir < 1) {
    return errors::InvalidArgument("Indices shape must have rank at least one. Found:",
                                   sf::ShapeString(indices));
  }
  const int64_t k = indices.dim(ir - 1);
  if (k > r) {
    return errors::InvalidArgument("Output must have at least ", k, " dimensions, got shape: ",
                                   shape_str);
  }
  const int outer = ir - 1;
  const int ur = updates.rank();
  bool outer_ok = ur >= outer;
  for (int i = 0; outer_ok && i < outer; ++i) outer_ok = indices.dim(i) == updates.dim(i);
  if (!outer_ok) {
    return errors::InvalidArgument("Dimensions [0,", outer, ") of indices[shape=",
                                   sf::ShapeString(indices), "] must match dimensions [0,", outer,
                                   ") of updates[shape=", sf::ShapeString(updates), "]");
  }
  bool inner_ok = ur == outer + r - static_cast<int>(k);
  for (int i = static_cast<int>(k); inner_ok && i < r; ++i) {
    inner_ok = updates.dim(outer + i - static_cast<int>(k)) == shape[i];
  }
  if (!inner_ok) {
    return errors::InvalidArgument("Dimensions [", k, ",", r, ") of input[shape=", shape_str, "] must match dimensions [", outer, ",", ur,
                                   ") of updates[shape=", sf::ShapeString(updates), "]");
  }
  plan->n = 1;
  plan->k = k;
  plan->slice = 1;
  for (int i = 0; i < outer; ++i) plan->n *= indices.dim(i);
  for (int i = static_cast<int>(k); i < r; ++i) plan->slice *= shape[i];
  if (array::Product(shape) == 0 && updates.NumElements() != 0) {
    return errors::InvalidArgument("Indices and updates specified for empty ", tensor_name,
                                   tensor_is_output ? " shape" : "");
  }
  for (int64_t i = 0; i < plan->n; ++i) {
    for (int64_t d = 0; d < k; ++d) {
      const int64_t v = array::IntAt(indices, i * k + d);
      if (v < 0 || v >= shape[static_cast<int>(d)]) {
        std::string tuple;
        for (int64_t e = 0; e < k; ++e)
          tuple += (e ? ", " : "") + std::to_string(array::IntAt(indices, i * k + e));
        return errors::InvalidArgument("indices", IndexString(indices.dims_data(), outer, i),
                                       " = [", tuple, "] does not index into shape ", shape_str);
      }
    }
  }
  return Status();
}

// Calls apply(dst_offset, src_offset, count) for every update row, in
// order (so that repeated indices accumulate, or the last one wins); the
// work splits over column blocks of a slice instead.
template <typename Apply>
void ForEachScatterRow(OpKernelContext* ctx, const TensorView& indices, const Dims& shape,
                       const ScatterPlan& plan, Apply&& apply) {
  const int64_t col_block = 1024;
  const int64_t blocks = (plan.slice + col_block - 1) / col_block;
  ForRange(ctx, blocks, plan.n * plan.slice, plan.n * col_block, [&](int64_t lo, int64_t hi) {
    const int64_t c0 = lo * col_block, c1 = std::min(plan.slice, hi * col_block);
    for (int64_t i = 0; i < plan.n; ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < plan.k; ++d) {
        off = off * shape[static_cast<int>(d)] + array::IntAt(indices, i * plan.k + d);
      }
      apply(off * plan.slice + c0, i * plan.slice + c0, c1 - c0);
    }
  });
}

template <typename T>
class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView indices = ctx->input(0);
    const TensorView updates = ctx->input(1);
    const TensorView shape_t = ctx->input(2);
    OP_REQUIRES(ctx, shape_t.rank() == 1,
                errors::InvalidArgument("Shape must be a 1-D vector, got shape ",
                                        sf::ShapeString(shape_t)));
    const int r = static_cast<int>(shape_t.NumElements());
    OP_REQUIRES(ctx, r >= 1, errors::InvalidArgument("Output must be at least 1-D, got shape: []"));
    Dims shape(r);
    for (int i = 0; i < r; ++i) {
      shape[i] = array::IntAt(shape_t, i);
      OP_REQUIRES(ctx, shape[i] >= 0,
                  errors::InvalidArgument("Dimension ", shape[i], " must be >= 0"));
    }
    // The shape is a value: hold it to the size rule before multiplying.
    int64_t total = 0;
    OP_REQUIRES_OK(ctx, NumElementsOf(shape.data(), r, &total));
    ScatterPlan plan;
    OP_REQUIRES_OK(ctx, PlanScatterNd(indices, updates, shape, true, &plan));
    TensorView out;
    if (!ctx->allocate_output(0, shape.data(), r, &out).ok()) return;
    if (total == 0) return;
    T* o = out.data<T>();
    std::memset(static_cast<void*>(o), 0, static_cast<size_t>(total) * sizeof(T));
    const T* u = updates.data<T>();
    ForEachScatterRow(ctx, indices, shape, plan, [&](int64_t dst, int64_t src, int64_t count) {
      Accumulate<T>(o + dst, u + src, count);
    });
  }
};

// TensorScatterUpdate, TensorScatterAdd and TensorScatterSub: a copy of
// `tensor` (its buffer when it can be reused) with the updates assigned,
// added or subtracted at the indexed slices. Update moves elements of any
// dtype; Add and Sub are for numbers.
class TensorScatterOp : public OpKernel {
 public:
  explicit TensorScatterOp(OpKernelConstruction* c)
      : OpKernel(c), op_(c->op()), kind_(state::ScatterKindOf(op_)) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView tensor = ctx->input(0);
    const TensorView indices = ctx->input(1);
    const TensorView updates = ctx->input(2);
    const int32_t dtype = tensor.dtype();
    const bool numeric = state::DispatchNumeric(static_cast<DataType>(dtype), [](auto) {});
    OP_REQUIRES(ctx, kind_ == state::ScatterKind::kUpdate ? array::Copyable(dtype) : numeric,
                array::UnsupportedDtype(op_.c_str(), dtype));
    OP_REQUIRES(ctx, tensor.rank() >= 1,
                errors::InvalidArgument("Input shape must have rank at least one. Found:",
                                        sf::ShapeString(tensor)));
    OP_REQUIRES(ctx, updates.rank() >= 1,
                errors::InvalidArgument("Updates shape must have rank at least one. Found:",
                                        sf::ShapeString(updates)));
    Dims shape(tensor.rank());
    for (int i = 0; i < tensor.rank(); ++i) shape[i] = tensor.dim(i);
    ScatterPlan plan;
    OP_REQUIRES_OK(ctx, PlanScatterNd(indices, updates, shape, false, &plan));
    TensorView out;
    bool forwarded = false;
    if (!ctx->forward_input_or_allocate_output(0, 0, tensor.dims_data(), tensor.rank(), &out,
                                               &forwarded)
             .ok()) {
      return;
    }
    const int es = array::ElementSize(dtype);
    if (!forwarded) CopyElements(dtype, es, tensor.raw_data(), 0, &out, 0, tensor.NumElements());
    if (out.NumElements() == 0) return;
    if (kind_ == state::ScatterKind::kUpdate) {
      ForEachScatterRow(ctx, indices, shape, plan, [&](int64_t dst, int64_t src, int64_t count) {
        CopyElements(dtype, es, updates.raw_data(), src, &out, dst, count);
      });
      return;
    }
    state::DispatchNumeric(static_cast<DataType>(dtype), [&](auto zero) {
      using T = decltype(zero);
      T* o = out.data<T>();
      const T* u = updates.data<T>();
      // Add and Sub cannot fail.
      ForEachScatterRow(ctx, indices, shape, plan, [&](int64_t dst, int64_t src, int64_t count) {
        (void)state::ApplyElementwise<T>(kind_, o + dst, u + src, count, false);
      });
    });
  }

 private:
  const std::string op_;
  const state::ScatterKind kind_;
};

// ----------------------------------------------------------------- OneHot

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView indices = ctx->input(0);
    const TensorView depth_t = ctx->input(1);
    const TensorView on = ctx->input(2);
    const TensorView off = ctx->input(3);
    const int ir = indices.rank();
    OP_REQUIRES(ctx, axis_ == -1 || (axis_ >= 0 && axis_ <= ir),
                errors::InvalidArgument("Expected axis to be -1 or between [0, ", ir + 1,
                                        "). But received: ", axis_));
    OP_REQUIRES(ctx, depth_t.rank() == 0,
                errors::InvalidArgument("depth must be a scalar, but got: ",
                                        sf::ShapeString(depth_t)));
    OP_REQUIRES(ctx, on.rank() == 0,
                errors::InvalidArgument("on_value must be a scalar, but got: ",
                                        sf::ShapeString(on)));
    OP_REQUIRES(ctx, off.rank() == 0,
                errors::InvalidArgument("off_value must be a scalar, but got: ",
                                        sf::ShapeString(off)));
    OP_REQUIRES(ctx, array::Copyable(on.dtype()), array::UnsupportedDtype("OneHot", on.dtype()));
    const int64_t depth = *depth_t.data<int32_t>();
    OP_REQUIRES(ctx, depth >= 0,
                errors::InvalidArgument("depth must be non-negative, got: ", depth));
    const int axis = axis_ == -1 ? ir : static_cast<int>(axis_);
    Dims out_dims;
    int64_t prefix = 1, suffix = 1;
    for (int i = 0; i < ir; ++i) {
      if (i == axis) out_dims.push_back(depth);
      out_dims.push_back(indices.dim(i));
      (i < axis ? prefix : suffix) *= indices.dim(i);
    }
    if (axis == ir) out_dims.push_back(depth);
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), out_dims.size(), &out).ok()) return;
    if (out.NumElements() == 0) return;
    array::FillElements(ctx, &out, 0, out.NumElements(), off.raw_data());
    const int32_t dtype = on.dtype();
    const int es = array::ElementSize(dtype);
    ForRange(ctx, prefix, prefix * suffix, suffix * 3, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        for (int64_t s = 0; s < suffix; ++s) {
          const int64_t v = array::IntAt(indices, p * suffix + s);
          if (v < 0 || v >= depth) continue;
          CopyElements(dtype, es, on.raw_data(), 0, &out, (p * depth + v) * suffix + s, 1);
        }
      }
    });
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

REGISTER_KERNEL(Name("GatherV2").Device(DEVICE_CPU).HostMemory("axis"), GatherV2Op);
REGISTER_KERNEL(Name("Gather").Device(DEVICE_CPU), GatherV2Op);
REGISTER_KERNEL(Name("GatherNd").Device(DEVICE_CPU), GatherNdOp);
REGISTER_KERNEL(Name("OneHot").Device(DEVICE_CPU).HostMemory("depth"), OneHotOp);
REGISTER_KERNEL(Name("TensorScatterUpdate").Device(DEVICE_CPU), TensorScatterOp);
REGISTER_KERNEL(Name("TensorScatterAdd").Device(DEVICE_CPU), TensorScatterOp);
REGISTER_KERNEL(Name("TensorScatterSub").Device(DEVICE_CPU), TensorScatterOp);

#define GR_SCATTER_ND(T, DT) \
  REGISTER_KERNEL(Name("ScatterNd").Device(DEVICE_CPU).TypeConstraint("T", {DT}).HostMemory("shape"), ScatterNdOp<T>)
GR_SCATTER_ND(float, GR_FLOAT);
GR_SCATTER_ND(double, GR_DOUBLE);
GR_SCATTER_ND(int8_t, GR_INT8);
GR_SCATTER_ND(uint8_t, GR_UINT8);
GR_SCATTER_ND(int16_t, GR_INT16);
GR_SCATTER_ND(uint16_t, GR_UINT16);
GR_SCATTER_ND(int32_t, GR_INT32);
GR_SCATTER_ND(uint32_t, GR_UINT32);
GR_SCATTER_ND(int64_t, GR_INT64);
GR_SCATTER_ND(uint64_t, GR_UINT64);
GR_SCATTER_ND(bool, GR_BOOL);
GR_SCATTER_ND(Eigen::bfloat16, GR_BFLOAT16);
GR_SCATTER_ND(Eigen::half, GR_HALF);
GR_SCATTER_ND(std::complex<float>, GR_COMPLEX64);
GR_SCATTER_ND(std::complex<double>, GR_COMPLEX128);
#undef GR_SCATTER_ND

}  // namespace sdk
}  // namespace graphrt
