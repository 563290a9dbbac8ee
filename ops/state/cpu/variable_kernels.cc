// CPU kernels of ref variables: VariableV2/Variable, Assign, AssignAdd/Sub,
// RefIdentity, IsVariableInitialized, CountUpTo. The variables themselves
// live in the session's resource manager (core); these kernels reach them
// through the ABI's ref inputs and outputs.
//
// Every write holds the variable's exclusive lock, also with
// use_locking=false: the value's buffer may be swapped (copy on write), and
// that swap must never race a reader. TensorFlow allows unlocked updates to
// interleave; serialising them is a stronger guarantee, not a weaker one.
#include <graphrt/sdk/sdk.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

using state::DispatchNumeric;
using state::SameShape;

// VariableV2, Variable: output the ref of container/shared_name (the node's
// name when shared_name is empty), created uninitialized on first use.
class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("container", &container_));
    OP_REQUIRES_OK(c, c->GetAttr("shared_name", &name_));
    if (name_.empty()) name_ = c->name();
  }
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);  // one kernel instance serves concurrent steps
      if (!var_.valid()) OP_REQUIRES_OK(ctx, ctx->LookupVariable(container_, name_, dtype_, true, &var_));
      v = var_.raw();
    }
    OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, v));
  }

 private:
  DataType dtype_ = GR_INVALID;
  std::string container_, name_;
  std::mutex mu_;
  Variable var_;
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    Tensor value = ctx->input_tensor(1);
    OP_REQUIRES(ctx, value.valid(), errors::Internal("Assign: no value input"));
    {
      VariableLock lock(v, /*exclusive=*/true);
      TensorView old;
      if (validate_shape_ && Variable::Borrow(v).View(&old)) {
        const TensorView rhs = value.view();
        OP_REQUIRES(ctx, SameShape(old, rhs),
                    errors::InvalidArgument("Assign requires shapes of both tensors to match. lhs shape= ",
                                            old.ShapeString(), " rhs shape= ", rhs.ShapeString()));
      }
      // Shares the value's buffer; a later in-place update copies first.
      OP_REQUIRES_OK(ctx, ctx->AssignVariable(v, value));
    }
    OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, v));
  }

 private:
  bool validate_shape_ = true;
};

// AssignAdd / AssignSub.
template <bool kAdd>
class DenseUpdateOp : public OpKernel {
 public:
  explicit DenseUpdateOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    const TensorView value = ctx->input(1);
    {
      VariableLock lock(v, /*exclusive=*/true);
      TensorView var;
      OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(v, &var));
      OP_REQUIRES(ctx, SameShape(var, value),
                  errors::InvalidArgument("Cannot update variable with shape ", var.ShapeString(),
                                          " using a Tensor with shape ", value.ShapeString(),
                                          ", shapes must be equal."));
      Status s;
      const bool known = DispatchNumeric(var.dtype(), [&](auto zero) {
        using T = decltype(zero);
        s = state::ApplyElementwise(kAdd ? state::ScatterKind::kAdd : state::ScatterKind::kSub, var.data<T>(),
                                    value.data<T>(), var.NumElements(), false);
      });
      OP_REQUIRES(ctx, known, errors::InvalidArgument("unsupported dtype ", DataTypeName(var.dtype())));
      OP_REQUIRES_OK(ctx, s);
    }
    OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, v));
  }
};

class RefIdentityOp : public OpKernel {
 public:
  explicit RefIdentityOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, v));
  }
};

class IsVariableInitializedOp : public OpKernel {
 public:
  explicit IsVariableInitializedOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    bool initialized;
    {
      VariableLock lock(v, /*exclusive=*/false);
      TensorView unused;
      initialized = Variable::Borrow(v).View(&unused);
    }
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    *out.data<bool>() = initialized;
  }
};

// Outputs the value before incrementing; OutOfRange once it reaches limit.
class CountUpToOp : public OpKernel {
 public:
  explicit CountUpToOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("limit", &limit_)); }
  void Compute(OpKernelContext* ctx) override {
    GR_Variable* v = ctx->input_ref(0);
    if (!ctx->ok()) return;
    int64_t before = 0;
    {
      VariableLock lock(v, /*exclusive=*/true);
      TensorView var;
      OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(v, &var));
      OP_REQUIRES(ctx, var.rank() == 0,
                  errors::InvalidArgument("input is not a scalar: ", var.ShapeString()));
      before = var.dtype() == GR_INT32 ? *var.data<int32_t>() : *var.data<int64_t>();
      OP_REQUIRES(ctx, before < limit_, errors::OutOfRange("Reached limit of ", limit_));
      if (var.dtype() == GR_INT32) ++*var.data<int32_t>();
      else ++*var.data<int64_t>();
    }
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    if (out.dtype() == GR_INT32) *out.data<int32_t>() = static_cast<int32_t>(before);
    else *out.data<int64_t>() = before;
  }

 private:
  int64_t limit_ = 0;
};

REGISTER_KERNEL(Name("VariableV2").Device(DEVICE_CPU), VariableOp);
REGISTER_KERNEL(Name("Variable").Device(DEVICE_CPU), VariableOp);
REGISTER_KERNEL(Name("Assign").Device(DEVICE_CPU), AssignOp);
REGISTER_KERNEL(Name("AssignAdd").Device(DEVICE_CPU), DenseUpdateOp<true>);
REGISTER_KERNEL(Name("AssignSub").Device(DEVICE_CPU), DenseUpdateOp<false>);
REGISTER_KERNEL(Name("RefIdentity").Device(DEVICE_CPU).Inexpensive(), RefIdentityOp);
REGISTER_KERNEL(Name("IsVariableInitialized").Device(DEVICE_CPU).Inexpensive(), IsVariableInitializedOp);
REGISTER_KERNEL(Name("CountUpTo").Device(DEVICE_CPU), CountUpToOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
