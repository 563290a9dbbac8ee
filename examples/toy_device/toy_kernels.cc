// XPU kernels: MatMul, AddV2, Relu, Identity, Cast, BiasAdd, Shape, Reshape.
//
// The ops are TensorFlow's, defined by the standard plugins; this file only
// adds kernels for device "XPU". Inputs and outputs are XPU memory: Compute
// checks shapes (host-side metadata), allocates outputs, and enqueues the
// arithmetic on the stream the executor hands it (ctx->stream()), then
// returns. It never touches tensor data on the calling thread: the data is
// only valid, in order, on the stream.
#include <graphrt/sdk/sdk.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "toy_device.h"

namespace {

using graphrt::sdk::DataType;
using graphrt::sdk::OpKernel;
using graphrt::sdk::OpKernelConstruction;
using graphrt::sdk::OpKernelContext;
using graphrt::sdk::TensorView;
namespace errors = graphrt::sdk::errors;

constexpr const char* kXpu = "XPU";

// The stream to enqueue on, or nullptr after recording why. The inputs the
// work will read must be this device's memory: a real device would fault on
// a host pointer (the toy's arena is host-addressable, so it checks).
toy::Stream* StreamOf(OpKernelContext* ctx) {
  auto* s = static_cast<toy::Stream*>(ctx->stream());
  if (s == nullptr || !s->valid()) {
    ctx->CtxFailure(errors::FailedPrecondition(
        "XPU kernel of node '", ctx->node_name(),
        "' was given no XPU stream: device kernels run only under an executor that hands them one"));
    return nullptr;
  }
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    const TensorView x = ctx->input(i);
    if (x.NumElements() > 0 && toy::OwnerOf(x.raw_data(), x.ByteSize()) != s->device()) {
      ctx->CtxFailure(errors::FailedPrecondition("XPU kernel of node '", ctx->node_name(), "': input ", i,
                                                 " is not memory of its XPU (illegal address)"));
      return nullptr;
    }
  }
  return s;
}

// Output 0 of `dims` (in place of input `reuse` when the core allows it;
// -1: always fresh memory), then work(output data, element count) enqueued
// on the kernel's stream. An empty output enqueues nothing.
template <typename Work>
void EnqueueOutput(OpKernelContext* ctx, const int64_t* dims, int rank, int reuse, Work work) {
  toy::Stream* stream = StreamOf(ctx);
  if (stream == nullptr) return;
  TensorView out;
  if (reuse >= 0) OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({reuse}, 0, dims, rank, &out));
  else OP_REQUIRES_OK(ctx, ctx->allocate_output(0, dims, rank, &out));
  const int64_t count = out.NumElements();
  if (count == 0) return;
  void* data = out.raw_data();
  stream->EnqueueWork([=]() -> toy::Error {
    work(data, count);
    return toy::Error{};
  });
}

class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("transpose_a", &ta_));
    if (c->ok()) c->SetStatus(c->GetAttr("transpose_b", &tb_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0), b = ctx->input(1);
    OP_REQUIRES(ctx, a.rank() == 2 && b.rank() == 2,
                errors::InvalidArgument("MatMul on XPU: In[0] and In[1] must be matrices, got ", a.ShapeString(),
                                        " and ", b.ShapeString()));
    const int64_t m = ta_ ? a.dim(1) : a.dim(0), k = ta_ ? a.dim(0) : a.dim(1);
    const int64_t kb = tb_ ? b.dim(1) : b.dim(0), n = tb_ ? b.dim(0) : b.dim(1);
    OP_REQUIRES(ctx, k == kb,
                errors::InvalidArgument("Matrix size-incompatible: In[0]: ", a.ShapeString(), ", In[1]: ",
                                        b.ShapeString(), " (transpose_a=", ta_, ", transpose_b=", tb_, ")"));
    // Element (i, p) of op(A) and (p, j) of op(B) through strides.
    const int64_t a_row = ta_ ? 1 : k, a_col = ta_ ? m : 1;
    const int64_t b_row = tb_ ? 1 : n, b_col = tb_ ? k : 1;
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    const int64_t dims[2] = {m, n};
    EnqueueOutput(ctx, dims, 2, -1, [=](void* out, int64_t) {
      float* po = static_cast<float*>(out);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float acc = 0.f;
          for (int64_t p = 0; p < k; ++p) acc += pa[i * a_row + p * a_col] * pb[p * b_row + j * b_col];
          po[i * n + j] = acc;
        }
    });
  }

 private:
  bool ta_ = false, tb_ = false;
};

// Same shapes, or one operand with a single element and no higher rank than
// the other (a scalar, [1], [1,1]...), broadcast to the other's shape.
// Other broadcasts are refused (Unimplemented) rather than run wrongly.
class AddV2Op : public OpKernel {
 public:
  explicit AddV2Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0), b = ctx->input(1);
    int mode;  // 0: elementwise, 1: a is the single element, 2: b is
    if (a.dims() == b.dims()) mode = 0;
    else if (a.NumElements() == 1 && a.rank() <= b.rank()) mode = 1;
    else if (b.NumElements() == 1 && b.rank() <= a.rank()) mode = 2;
    else {
      OP_REQUIRES(ctx, !Broadcastable(a, b),
                  errors::Unimplemented("AddV2 on XPU adds inputs of one shape, or a single element to a tensor; "
                                        "got ", a.ShapeString(), " and ", b.ShapeString(), " (run it on CPU)"));
      ctx->CtxFailure(errors::InvalidArgument("Incompatible shapes: ", a.ShapeString(), " vs. ", b.ShapeString()));
      return;
    }
    const TensorView& big = mode == 1 ? b : a;
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    EnqueueOutput(ctx, big.dims_data(), big.rank(), mode == 1 ? 1 : 0, [=](void* out, int64_t count) {
      float* po = static_cast<float*>(out);
      if (mode == 0) {
        for (int64_t i = 0; i < count; ++i) po[i] = pa[i] + pb[i];
      } else if (mode == 1) {
        const float s = pa[0];
        for (int64_t i = 0; i < count; ++i) po[i] = s + pb[i];
      } else {
        const float s = pb[0];
        for (int64_t i = 0; i < count; ++i) po[i] = pa[i] + s;
      }
    });
  }

 private:
  // NumPy's rule, to tell an unsupported broadcast from an impossible one.
  static bool Broadcastable(const TensorView& a, const TensorView& b) {
    for (int i = 1; i <= a.rank() && i <= b.rank(); ++i) {
      const int64_t x = a.dim(a.rank() - i), y = b.dim(b.rank() - i);
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  }
};

class ReluOp : public OpKernel {
 public:
  explicit ReluOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const float* px = x.data<float>();
    EnqueueOutput(ctx, x.dims_data(), x.rank(), 0, [px](void* out, int64_t count) {
      float* po = static_cast<float*>(out);
      for (int64_t i = 0; i < count; ++i) po[i] = px[i] < 0.f ? 0.f : px[i];  // NaN stays NaN
    });
  }
};

// The output shares the input's device buffer: nothing to enqueue.
class IdentityOp : public OpKernel {
 public:
  explicit IdentityOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, ctx->set_output_from_input(0, 0)); }
};

// float -> int32 truncates toward zero; NaN and values outside int32 give
// INT32_MIN, as TensorFlow's x86-64 CPU kernel (and graphrt's) does.
int32_t FloatToInt32(float v) {
  return (v >= -2147483648.0f && v < 2147483648.0f) ? static_cast<int32_t>(v) : INT32_MIN;
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("SrcT", &src_));
    if (c->ok()) c->SetStatus(c->GetAttr("DstT", &dst_));
  }

  void Compute(OpKernelContext* ctx) override {
    if (src_ == dst_) {  // nothing changes: share the buffer
      OP_REQUIRES_OK(ctx, ctx->set_output_from_input(0, 0));
      return;
    }
    const TensorView x = ctx->input(0);
    const void* in = x.raw_data();
    const bool to_int = dst_ == GR_INT32;
    EnqueueOutput(ctx, x.dims_data(), x.rank(), -1, [=](void* out, int64_t count) {
      if (to_int) {
        const float* s = static_cast<const float*>(in);
        int32_t* d = static_cast<int32_t*>(out);
        for (int64_t i = 0; i < count; ++i) d[i] = FloatToInt32(s[i]);
      } else {
        const int32_t* s = static_cast<const int32_t*>(in);
        float* d = static_cast<float*>(out);
        for (int64_t i = 0; i < count; ++i) d[i] = static_cast<float>(s[i]);
      }
    });
  }

 private:
  DataType src_ = GR_INVALID, dst_ = GR_INVALID;
};

class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format = "NHWC";
    if (c->HasAttr("data_format")) c->SetStatus(c->GetAttr("data_format", &format));
    if (!c->ok()) return;
    if (format != "NHWC" && format != "NCHW")
      c->SetStatus(errors::InvalidArgument("BiasAdd: unknown data_format '", format, "'"));
    nchw_ = format == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0), bias = ctx->input(1);
    OP_REQUIRES(ctx, x.rank() >= 2,
                errors::InvalidArgument("Input tensor must be at least 2D: ", x.ShapeString()));
    OP_REQUIRES(ctx, bias.rank() == 1, errors::InvalidArgument("Biases must be 1D: ", bias.ShapeString()));
    const int channel_dim = nchw_ ? 1 : x.rank() - 1;
    const int64_t channels = x.dim(channel_dim);
    OP_REQUIRES(ctx, bias.dim(0) == channels,
                errors::InvalidArgument("Must provide as many biases as the ", nchw_ ? "channel" : "last",
                                        " dimension of the input tensor: ", bias.ShapeString(), " vs. ",
                                        x.ShapeString()));
    // NCHW: elements per (image, channel); NHWC: 1.
    int64_t inner = 1;
    if (nchw_) OP_REQUIRES_OK(ctx, graphrt::sdk::NumElementsOf(x.dims_data() + 2, x.rank() - 2, &inner));
    const float* px = x.data<float>();
    const float* pb = bias.data<float>();
    EnqueueOutput(ctx, x.dims_data(), x.rank(), 0, [=](void* out, int64_t count) {
      float* po = static_cast<float*>(out);
      for (int64_t i = 0; i < count; ++i) po[i] = px[i] + pb[(i / inner) % channels];
    });
  }

 private:
  bool nchw_ = false;
};

// Shape: the input's dims, written on the calling thread into the output,
// which is HostMemory (as TensorFlow's GPU kernel declares it): the core
// must allocate it in host memory, and the toy refuses its own memory.
class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const int64_t dims[1] = {x.rank()};
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, dims, 1, &out));
    OP_REQUIRES(ctx, x.rank() == 0 || toy::OwnerOf(out.raw_data(), out.ByteSize()) == nullptr,
                errors::FailedPrecondition("Shape on XPU: its HostMemory output was given XPU memory"));
    int32_t* o = out.data<int32_t>();
    for (int i = 0; i < x.rank(); ++i) {
      OP_REQUIRES(ctx, x.dim(i) <= INT32_MAX,
                  errors::InvalidArgument("Shape output type int32 cannot hold dimension ", x.dim(i)));
      o[i] = static_cast<int32_t>(x.dim(i));
    }
  }
};

// Reshape: the output shares the input's XPU buffer under the dims of the
// `shape` input, which is HostMemory (read here, on the calling thread):
// the core must deliver it in host memory, and the toy refuses its own.
// No -1 inference: the dims must multiply to the input's element count.
class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0), shape = ctx->input(1);
    OP_REQUIRES(ctx, shape.rank() == 1, errors::InvalidArgument("shape must be a vector, got ", shape.ShapeString()));
    OP_REQUIRES(ctx, shape.NumElements() == 0 || toy::OwnerOf(shape.raw_data(), shape.ByteSize()) == nullptr,
                errors::FailedPrecondition("Reshape on XPU: its HostMemory input 'shape' is XPU memory"));
    std::vector<int64_t> dims(shape.data<int32_t>(), shape.data<int32_t>() + shape.NumElements());
    int64_t count = 0;
    OP_REQUIRES_OK(ctx, graphrt::sdk::NumElementsOf(dims.data(), static_cast<int>(dims.size()), &count));
    OP_REQUIRES(ctx, count == x.NumElements(),
                errors::InvalidArgument("Input to reshape is a tensor with ", x.NumElements(),
                                        " values, but the requested shape has ", count));
    OP_REQUIRES_OK(ctx, ctx->set_output_from_input(0, 0, dims));
  }
};

using graphrt::sdk::Name;

REGISTER_KERNEL(Name("MatMul").Device(kXpu).TypeConstraint<float>("T"), MatMulOp);
REGISTER_KERNEL(Name("AddV2").Device(kXpu).TypeConstraint<float>("T"), AddV2Op);
REGISTER_KERNEL(Name("Relu").Device(kXpu).TypeConstraint<float>("T"), ReluOp);
REGISTER_KERNEL(Name("Identity").Device(kXpu).TypeConstraint("T", {GR_FLOAT, GR_INT32, GR_INT64, GR_DOUBLE}),
                IdentityOp);
REGISTER_KERNEL(Name("Cast").Device(kXpu).TypeConstraint("SrcT", {GR_FLOAT, GR_INT32}).TypeConstraint("DstT", {GR_FLOAT, GR_INT32}),
                CastOp);
REGISTER_KERNEL(Name("BiasAdd").Device(kXpu).TypeConstraint<float>("T"), BiasAddOp);
REGISTER_KERNEL(Name("Shape").Device(kXpu).HostMemory("output").TypeConstraint<int32_t>("out_type"), ShapeOp);
REGISTER_KERNEL(Name("Reshape").Device(kXpu).HostMemory("shape").TypeConstraint<float>("T").TypeConstraint<int32_t>("Tshape"),
                ReshapeOp);

}  // namespace
