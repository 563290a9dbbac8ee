// A custom op built against the SDK, compiled with other standard libraries
// in the ABI tests. y = x + 1 for float; the op name comes from the build.
#include <graphrt/sdk/sdk.h>

#include <string>

using namespace graphrt::sdk;

namespace {

class AddOneOp : public OpKernel {
 public:
  explicit AddOneOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string label;  // exercises this plugin's std::string inside the SDK
    OP_REQUIRES_OK(c, c->GetAttr("label", &label));
    label_ = label;
  }
  void Compute(OpKernelContext* ctx) override {
    TensorView x = ctx->input(0);
    TensorView y;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.dims(), &y));
    for (int64_t i = 0; i < x.NumElements(); ++i) y.data<float>()[i] = x.data<float>()[i] + 1.0f;
    OP_REQUIRES(ctx, label_ != "fail", errors::InvalidArgument("asked to fail by label '", label_, "'"));
  }

 private:
  std::string label_;
};

}  // namespace

REGISTER_OP(TEST_OP_NAME).Input("x: float").Output("y: float").Attr("label: string = 'ok'");
REGISTER_KERNEL(Name(TEST_OP_NAME).Device(DEVICE_CPU), AddOneOp);

GRAPHRT_PLUGIN(TEST_OP_NAME, "1.0")
