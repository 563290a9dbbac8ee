// CPU kernels of ApplyGradientDescent (ref) and ResourceApplyGradientDescent:
// var -= alpha * delta in place, under the variable's exclusive lock (as the
// state family's updates: see ops/state/cpu/variable_kernels.cc).
#include <graphrt/sdk/sdk.h>

#include <cstring>
#include <string>

#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

// var -= alpha * delta on a writable view; checks TensorFlow's shapes.
Status Apply(const TensorView& var, const TensorView& alpha, const TensorView& delta) {
  if (alpha.rank() != 0) return errors::InvalidArgument("alpha is not a scalar: ", alpha.ShapeString());
  if (!state::SameShape(var, delta))
    return errors::InvalidArgument("var and delta do not have the same shape", var.ShapeString(), " ",
                                   delta.ShapeString());
  if (alpha.dtype() != var.dtype() || delta.dtype() != var.dtype())
    return errors::InvalidArgument("var, alpha and delta must have one dtype");
  const bool known = state::DispatchNumeric(var.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* v = var.data<T>();
    const T a = alpha.scalar<T>();
    const T* d = delta.data<T>();
    for (int64_t i = 0; i < var.NumElements(); ++i) v[i] = v[i] - a * d[i];
  });
  if (!known) return errors::InvalidArgument("unsupported dtype ", DataTypeName(var.dtype()));
  return Status();
}

class ApplyGradientDescentOp : public OpKernel {
 public:
  explicit ApplyGradientDescentOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    {
      VariableLock lock(v, /*exclusive=*/true);
      TensorView var;
      OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(v, &var));
      OP_REQUIRES_OK(ctx, Apply(var, ctx->input(1), ctx->input(2)));
    }
    OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, v));
  }
};

class ResourceApplyGradientDescentOp : public OpKernel {
 public:
  explicit ResourceApplyGradientDescentOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* handle = nullptr;
    OP_REQUIRES_OK(ctx, state::VariableHandleOf(ctx, &handle));
    const GR_ResourceHandle& h = *handle;
    Variable var;
    Status s = ctx->LookupVariable(h.container, h.name, GR_INVALID, false, &var);
    if (s.code() == GR_NOT_FOUND)
      s = Status(GR_FAILED_PRECONDITION, errors::StrCat("Attempting to use uninitialized variables: ", h.name));
    OP_REQUIRES_OK(ctx, s);
    VariableLock lock(var.raw(), /*exclusive=*/true);
    TensorView probe;
    OP_REQUIRES(ctx, var.View(&probe),
                Status(GR_FAILED_PRECONDITION, errors::StrCat("Attempting to use uninitialized variables: ", h.name)));
    TensorView view;
    OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(var.raw(), &view));
    OP_REQUIRES_OK(ctx, Apply(view, ctx->input(1), ctx->input(2)));
  }
};

REGISTER_KERNEL(Name("ApplyGradientDescent").Device(DEVICE_CPU), ApplyGradientDescentOp);
REGISTER_KERNEL(Name("ResourceApplyGradientDescent").Device(DEVICE_CPU), ResourceApplyGradientDescentOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
