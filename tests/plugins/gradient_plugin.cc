// A custom op that ships its gradient (ABI 1.5), as a user's op library
// would: TimesThree(x) = 3x, d/dx = 3 dy, written with the SDK.
#include <graphrt/sdk/gradient.h>
#include <graphrt/sdk/sdk.h>

namespace graphrt {
namespace sdk {
namespace {

REGISTER_OP("TimesThree").Input("x: float").Output("y: float");

class TimesThreeOp : public OpKernel {
 public:
  explicit TimesThreeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    TensorView x = ctx->input(0);
    TensorView y;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.dims(), &y));
    for (int64_t i = 0; i < x.NumElements(); ++i) y.data<float>()[i] = 3.0f * x.data<float>()[i];
  }
};
REGISTER_KERNEL(Name("TimesThree").Device(DEVICE_CPU), TimesThreeOp);

Status TimesThreeGrad(GradientContext& g) {
  g.SetGrad(0, g.Add("mul", "Mul", {g.grad(0), g.ScalarConst("three", GR_FLOAT, 3.0)},
                     {TypeAttr("T", GR_FLOAT)}));
  return Status();
}
REGISTER_GRADIENT("TimesThree", TimesThreeGrad);

// Its gradient function fails, naming why.
REGISTER_OP("Fragile").Input("x: float").Output("y: float");
Status FragileGrad(GradientContext&) { return Status(GR_FAILED_PRECONDITION, "fragile has no stable gradient"); }
REGISTER_GRADIENT("Fragile", FragileGrad);

}  // namespace
}  // namespace sdk
}  // namespace graphrt

GRAPHRT_PLUGIN("test_gradient", "1.0")
