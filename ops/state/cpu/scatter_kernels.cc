// CPU kernels of the Scatter* and ScatterNd* ops on ref variables: rows (or
// index tuples) of the variable updated in place, under its exclusive lock
// (see variable_kernels.cc for why updates always lock).
#include <graphrt/sdk/sdk.h>

#include <string>
#include <vector>

#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

using state::ScatterKind;

// Scatter*: rows of the variable along dim 0.
class ScatterOp : public OpKernel {
 public:
  explicit ScatterOp(OpKernelConstruction* c) : OpKernel(c), kind_(state::ScatterKindOf(c->op())) {}
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    const TensorView indices = ctx->input(1);
    const TensorView updates = ctx->input(2);
    {
      VariableLock lock(v, /*exclusive=*/true);
      TensorView params;
      OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(v, &params));
      OP_REQUIRES_OK(ctx, Apply(params, indices, updates));
    }
    OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, v));
  }

 protected:
  virtual Status Apply(const TensorView& params, const TensorView& indices, const TensorView& updates) {
    return state::Scatter(kind_, params, indices, updates, params.raw());
  }
  const ScatterKind kind_;
};

// ScatterNd{Update,Add,Sub}: indices [..., K] address slices of the
// variable's first K dims; updates have shape indices.shape[:-1] +
// ref.shape[K:].
class ScatterNdOp : public ScatterOp {
 public:
  explicit ScatterNdOp(OpKernelConstruction* c) : ScatterOp(c) {}

 protected:
  Status Apply(const TensorView& params, const TensorView& indices, const TensorView& updates) override {
    if (indices.rank() < 1) return errors::InvalidArgument("indices must be at least 1-D, got ", indices.ShapeString());
    const int64_t k = indices.dim(indices.rank() - 1);
    if (k > params.rank())
      return errors::InvalidArgument("indices.shape[-1] = ", k, " must be <= params rank ", params.rank());
    // updates.shape must be indices.shape[:-1] + params.shape[k:].
    bool ok = updates.rank() == indices.rank() - 1 + params.rank() - k;
    for (int i = 0; ok && i + 1 < indices.rank(); ++i) ok = updates.dim(i) == indices.dim(i);
    for (int64_t i = k; ok && i < params.rank(); ++i)
      ok = updates.dim(static_cast<int>(indices.rank() - 1 + i - k)) == params.dim(static_cast<int>(i));
    if (!ok)
      return errors::InvalidArgument("Must have updates.shape = indices.shape[:-1] + params_shape[K:], got "
                                     "updates.shape ", updates.ShapeString(), ", indices.shape ",
                                     indices.ShapeString(), ", params_shape ", params.ShapeString());
    int64_t slice = 1;
    for (int64_t i = k; i < params.rank(); ++i) slice *= params.dim(static_cast<int>(i));  // a sub-product of a valid shape
    const int64_t n = k == 0 ? 0 : indices.NumElements() / k;
    std::vector<int64_t> offsets(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t ix = state::IndexAt(indices, i * k + j);
        const int64_t dim = params.dim(static_cast<int>(j));
        if (ix < 0 || ix >= dim) {
          std::string tuple;
          for (int64_t t = 0; t < k; ++t) tuple += (t ? ", " : "") + std::to_string(state::IndexAt(indices, i * k + t));
          return errors::InvalidArgument("indices[", i, "] = [", tuple, "] does not index into shape ",
                                         params.ShapeString());
        }
        off = off * dim + ix;
      }
      offsets[i] = off * slice;
    }
    if (updates.dtype() != params.dtype())
      return errors::InvalidArgument("updates must be ", DataTypeName(params.dtype()));
    if (params.dtype() == GR_STRING) {
      if (kind_ != ScatterKind::kUpdate) return errors::InvalidArgument("strings only support ScatterNdUpdate");
      GR_TensorView dst = *params.raw();
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < slice; ++j) {
          const GR_StringElem& e = updates.data<GR_StringElem>()[i * slice + j];
          Api().string_assign(&dst, offsets[i] + j, e.data, e.size);
        }
      return Status();
    }
    Status s;
    const bool known = state::DispatchNumeric(params.dtype(), [&](auto zero) {
      using T = decltype(zero);
      for (int64_t i = 0; i < n && s.ok(); ++i)
        s = state::ApplyElementwise(kind_, params.data<T>() + offsets[i], updates.data<T>() + i * slice, slice, false);
    });
    if (!known) {
      if (kind_ != ScatterKind::kUpdate || params.dtype() != GR_BOOL)
        return errors::InvalidArgument("ScatterNd does not support dtype ", DataTypeName(params.dtype()));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < slice; ++j) params.data<bool>()[offsets[i] + j] = updates.data<bool>()[i * slice + j];
    }
    return s;
  }
};

REGISTER_KERNEL(Name("ScatterUpdate").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterAdd").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterSub").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterMul").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterDiv").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterMin").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterMax").Device(DEVICE_CPU), ScatterOp);
REGISTER_KERNEL(Name("ScatterNdUpdate").Device(DEVICE_CPU), ScatterNdOp);
REGISTER_KERNEL(Name("ScatterNdAdd").Device(DEVICE_CPU), ScatterNdOp);
REGISTER_KERNEL(Name("ScatterNdSub").Device(DEVICE_CPU), ScatterNdOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
