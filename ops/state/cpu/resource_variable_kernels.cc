// CPU kernels of resource variables (VarHandleOp and the ops that take its
// handle). A handle names container/name; the variable exists in the
// session's resource manager from its first AssignVariableOp until a
// DestroyResourceOp or the session's Close. Error texts follow TensorFlow's.
#include <graphrt/sdk/sdk.h>

#include <cstring>
#include <string>
#include <vector>

#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

using state::SameShape;

class VarHandleOp : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("container", &container_));
    OP_REQUIRES_OK(c, c->GetAttr("shared_name", &name_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, ctx->set_output_resource_handle(0, container_, name_, GR_VARIABLE_TYPE_NAME));
  }

 private:
  std::string container_, name_;
};

std::string UninitializedMessage(const GR_ResourceHandle& h) {
  return errors::StrCat("Error while reading resource variable ", h.name, " from Container: ", h.container,
                        ". This could mean that the variable was uninitialized. Not found: Resource ", h.container,
                        "/", h.name, "/", GR_VARIABLE_TYPE_NAME, " does not exist.");
}

// The existing variable a handle names (FailedPrecondition when absent).
Status ExistingVariable(OpKernelContext* ctx, const GR_ResourceHandle** handle, Variable* var) {
  GR_RETURN_IF_ERROR_SDK(state::VariableHandleOf(ctx, handle));
  Status s = ctx->LookupVariable((*handle)->container, (*handle)->name, GR_INVALID, false, var);
  if (s.code() == GR_NOT_FOUND) return Status(GR_FAILED_PRECONDITION, UninitializedMessage(**handle));
  return s;
}

class ReadVariableOp : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_)); }
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    Variable var;
    OP_REQUIRES_OK(ctx, ExistingVariable(ctx, &h, &var));
    OP_REQUIRES(ctx, var.dtype() == dtype_,
                errors::InvalidArgument("Trying to read variable ", h->name, " from Container: ", h->container,
                                        " with wrong dtype. Expected ", DataTypeName(dtype_), " got ",
                                        DataTypeName(var.dtype())));
    Tensor value;
    {
      VariableLock lock(var.raw(), /*exclusive=*/false);
      value = var.Value();  // a snapshot: later writes copy before they change it
    }
    OP_REQUIRES(ctx, value.valid(), Status(GR_FAILED_PRECONDITION, UninitializedMessage(*h)));
    OP_REQUIRES_OK(ctx, ctx->set_output(0, value));
  }

 private:
  DataType dtype_ = GR_INVALID;
};

class AssignVariableOp : public OpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    if (c->HasAttr("validate_shape")) OP_REQUIRES_OK(c, c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    OP_REQUIRES_OK(ctx, state::VariableHandleOf(ctx, &h));
    Variable var;
    Status s = ctx->LookupVariable(h->container, h->name, GR_INVALID, false, &var);
    if (s.code() == GR_NOT_FOUND) s = ctx->LookupVariable(h->container, h->name, dtype_, true, &var);
    OP_REQUIRES_OK(ctx, s);
    OP_REQUIRES(ctx, var.dtype() == dtype_,
                errors::InvalidArgument("Trying to assign variable with wrong dtype. Expected ",
                                        DataTypeName(var.dtype()), " got ", DataTypeName(dtype_)));
    Tensor value = ctx->input_tensor(1);
    OP_REQUIRES(ctx, value.valid(), errors::Internal("AssignVariableOp: no value input"));
    VariableLock lock(var.raw(), /*exclusive=*/true);
    TensorView old;
    if (validate_shape_ && var.View(&old)) {
      const TensorView rhs = value.view();
      OP_REQUIRES(ctx, SameShape(old, rhs),
                  errors::InvalidArgument("Trying to assign to variable with tensor with wrong shape. Expected ",
                                          old.ShapeString(), " got ", rhs.ShapeString()));
    }
    OP_REQUIRES_OK(ctx, ctx->AssignVariable(var.raw(), value));
  }

 private:
  DataType dtype_ = GR_INVALID;
  bool validate_shape_ = false;
};

template <bool kAdd>
class AssignUpdateVariableOp : public OpKernel {
 public:
  explicit AssignUpdateVariableOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    Variable var;
    OP_REQUIRES_OK(ctx, ExistingVariable(ctx, &h, &var));
    const TensorView value = ctx->input(1);
    OP_REQUIRES(ctx, value.dtype() == var.dtype(),
                errors::InvalidArgument("Trying to update variable ", h->name, " of dtype ",
                                        DataTypeName(var.dtype()), " with a ", DataTypeName(value.dtype())));
    VariableLock lock(var.raw(), /*exclusive=*/true);
    TensorView view;
    TensorView probe;
    OP_REQUIRES(ctx, var.View(&probe), Status(GR_FAILED_PRECONDITION, UninitializedMessage(*h)));
    OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(var.raw(), &view));
    OP_REQUIRES(ctx, SameShape(view, value),
                errors::InvalidArgument("Cannot update variable with shape ", view.ShapeString(),
                                        " using a Tensor with shape ", value.ShapeString(), ", shapes must be equal."));
    Status s;
    const bool known = state::DispatchNumeric(view.dtype(), [&](auto zero) {
      using T = decltype(zero);
      s = state::ApplyElementwise(kAdd ? state::ScatterKind::kAdd : state::ScatterKind::kSub, view.data<T>(),
                                  value.data<T>(), view.NumElements(), false);
    });
    OP_REQUIRES(ctx, known, errors::InvalidArgument("unsupported dtype ", DataTypeName(view.dtype())));
    OP_REQUIRES_OK(ctx, s);
  }
};

class VarIsInitializedOp : public OpKernel {
 public:
  explicit VarIsInitializedOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    OP_REQUIRES_OK(ctx, state::VariableHandleOf(ctx, &h));
    Variable var;
    Status s = ctx->LookupVariable(h->container, h->name, GR_INVALID, false, &var);
    bool initialized = false;
    if (s.ok()) {
      VariableLock lock(var.raw(), /*exclusive=*/false);
      TensorView unused;
      initialized = var.View(&unused);
    } else {
      OP_REQUIRES(ctx, s.code() == GR_NOT_FOUND, s);
    }
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    *out.data<bool>() = initialized;
  }
};

class VariableShapeOp : public OpKernel {
 public:
  explicit VariableShapeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    Variable var;
    OP_REQUIRES_OK(ctx, ExistingVariable(ctx, &h, &var));
    std::vector<int64_t> dims;
    {
      VariableLock lock(var.raw(), /*exclusive=*/false);
      TensorView v;
      OP_REQUIRES(ctx, var.View(&v), Status(GR_FAILED_PRECONDITION, UninitializedMessage(*h)));
      dims = v.dims();
    }
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{static_cast<int64_t>(dims.size())}, &out));
    for (size_t i = 0; i < dims.size(); ++i) {
      if (out.dtype() == GR_INT32) {
        OP_REQUIRES(ctx, dims[i] <= INT32_MAX, errors::InvalidArgument("dimension ", dims[i], " does not fit int32"));
        out.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
      } else {
        out.data<int64_t>()[i] = dims[i];
      }
    }
  }
};

class DestroyResourceOp : public OpKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorView hv = ctx->input(0);
    OP_REQUIRES(ctx, hv.dtype() == GR_RESOURCE && hv.NumElements() == 1 && state::IsSet(*hv.data<GR_ResourceHandle>()),
                errors::InvalidArgument("input 0 must be one resource handle"));
    const GR_ResourceHandle& h = *hv.data<GR_ResourceHandle>();
    Status s = ctx->DeleteResource(h.container, h.name, h.type_name);
    if (s.code() == GR_NOT_FOUND) {
      OP_REQUIRES(ctx, ignore_lookup_error_,
                  errors::NotFound("Resource ", h.container, "/", h.name, "/", h.type_name, " does not exist."));
      return;
    }
    OP_REQUIRES_OK(ctx, s);
  }

 private:
  bool ignore_lookup_error_ = true;
};

// batch_dims = 0: output = indices.shape + value.shape[1:], rows gathered.
class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("batch_dims", &batch_dims_));
    OP_REQUIRES(c, batch_dims_ == 0,
                errors::InvalidArgument("ResourceGather with batch_dims = ", batch_dims_,
                                        " is not supported by graphrt (only 0)"));
  }
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    Variable var;
    OP_REQUIRES_OK(ctx, ExistingVariable(ctx, &h, &var));
    const TensorView indices = ctx->input(1);
    Tensor value;
    {
      VariableLock lock(var.raw(), /*exclusive=*/false);
      value = var.Value();
    }
    OP_REQUIRES(ctx, value.valid(), Status(GR_FAILED_PRECONDITION, UninitializedMessage(*h)));
    const TensorView params = value.view();
    OP_REQUIRES(ctx, params.rank() >= 1, errors::InvalidArgument("params must be at least 1 dimensional"));
    const int64_t rows = params.dim(0);
    std::vector<int64_t> out_dims = indices.dims();
    for (int i = 1; i < params.rank(); ++i) out_dims.push_back(params.dim(i));
    int64_t total;
    OP_REQUIRES_OK(ctx, NumElementsOf(out_dims, &total));
    const int64_t n = indices.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = state::IndexAt(indices, i);
      OP_REQUIRES(ctx, r >= 0 && r < rows, errors::InvalidArgument("indices[", i, "] = ", r, " is not in [0, ", rows, ")"));
    }
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_dims, &out));
    const int64_t row = rows == 0 ? 0 : params.NumElements() / rows;
    if (params.dtype() == GR_STRING) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < row; ++j) {
          const GR_StringElem& e = params.data<GR_StringElem>()[state::IndexAt(indices, i) * row + j];
          Api().string_assign(out.raw(), i * row + j, e.data, e.size);
        }
      return;
    }
    const uint64_t elem = n == 0 || row == 0 ? 0 : out.ByteSize() / static_cast<uint64_t>(n * row);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(static_cast<char*>(out.raw_data()) + i * row * elem,
                  static_cast<const char*>(params.raw_data()) + state::IndexAt(indices, i) * row * elem, row * elem);
  }

 private:
  int64_t batch_dims_ = 0;
};

class ResourceScatterOp : public OpKernel {
 public:
  explicit ResourceScatterOp(OpKernelConstruction* c) : OpKernel(c), kind_(state::ScatterKindOf(c->op())) {}
  void Compute(OpKernelContext* ctx) override {
    const GR_ResourceHandle* h = nullptr;
    Variable var;
    OP_REQUIRES_OK(ctx, ExistingVariable(ctx, &h, &var));
    VariableLock lock(var.raw(), /*exclusive=*/true);
    TensorView probe;
    OP_REQUIRES(ctx, var.View(&probe), Status(GR_FAILED_PRECONDITION, UninitializedMessage(*h)));
    TensorView params;
    OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(var.raw(), &params));
    OP_REQUIRES_OK(ctx, state::Scatter(kind_, params, ctx->input(1), ctx->input(2), params.raw()));
  }

 private:
  const state::ScatterKind kind_;
};

REGISTER_KERNEL(Name("VarHandleOp").Device(DEVICE_CPU).Inexpensive(), VarHandleOp);
REGISTER_KERNEL(Name("ReadVariableOp").Device(DEVICE_CPU).Inexpensive(), ReadVariableOp);
REGISTER_KERNEL(Name("AssignVariableOp").Device(DEVICE_CPU), AssignVariableOp);
REGISTER_KERNEL(Name("AssignAddVariableOp").Device(DEVICE_CPU), AssignUpdateVariableOp<true>);
REGISTER_KERNEL(Name("AssignSubVariableOp").Device(DEVICE_CPU), AssignUpdateVariableOp<false>);
REGISTER_KERNEL(Name("VarIsInitializedOp").Device(DEVICE_CPU).Inexpensive(), VarIsInitializedOp);
REGISTER_KERNEL(Name("VariableShape").Device(DEVICE_CPU).Inexpensive(), VariableShapeOp);
REGISTER_KERNEL(Name("DestroyResourceOp").Device(DEVICE_CPU), DestroyResourceOp);
REGISTER_KERNEL(Name("ResourceGather").Device(DEVICE_CPU), ResourceGatherOp);
REGISTER_KERNEL(Name("ResourceScatterUpdate").Device(DEVICE_CPU), ResourceScatterOp);
REGISTER_KERNEL(Name("ResourceScatterAdd").Device(DEVICE_CPU), ResourceScatterOp);
REGISTER_KERNEL(Name("ResourceScatterSub").Device(DEVICE_CPU), ResourceScatterOp);
REGISTER_KERNEL(Name("ResourceScatterMul").Device(DEVICE_CPU), ResourceScatterOp);
REGISTER_KERNEL(Name("ResourceScatterDiv").Device(DEVICE_CPU), ResourceScatterOp);
REGISTER_KERNEL(Name("ResourceScatterMin").Device(DEVICE_CPU), ResourceScatterOp);
REGISTER_KERNEL(Name("ResourceScatterMax").Device(DEVICE_CPU), ResourceScatterOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
