// ZeroOut: the classic first custom op. The output has the input's shape;
// its first element is the input's first element and every other element
// is zero.
//
// A plugin is this one file: the op definition (REGISTER_OP), a CPU kernel
// (an OpKernel subclass plus REGISTER_KERNEL) and, once per plugin,
// GRAPHRT_PLUGIN naming the library. It includes only the SDK header and
// links nothing of graphrt: the core hands it everything at load time.
#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cstdint>

using graphrt::sdk::InferenceContext;
using graphrt::sdk::OpKernel;
using graphrt::sdk::OpKernelConstruction;
using graphrt::sdk::OpKernelContext;
using graphrt::sdk::Status;
using graphrt::sdk::TensorView;

REGISTER_OP("ZeroOut")
    .Input("to_zero: int32")
    .Output("zeroed: int32")
    .Doc("Keeps the first element of `to_zero` and sets all the others to zero.")
    .SetShapeFn([](InferenceContext* c) {
      // Same shape as the input, known or not.
      c->set_output(0, c->input(0));
      return Status::OK();
    });

class ZeroOutOp : public OpKernel {
 public:
  explicit ZeroOutOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView input = ctx->input(0);
    TensorView output;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.dims(), &output));
    const int64_t n = input.NumElements();
    int32_t* out = output.data<int32_t>();
    std::fill(out, out + n, 0);
    if (n > 0) out[0] = input.data<int32_t>()[0];
  }
};

REGISTER_KERNEL(graphrt::sdk::Name("ZeroOut").Device(graphrt::sdk::DEVICE_CPU), ZeroOutOp);

GRAPHRT_PLUGIN("zero_out", "1.0.0")
