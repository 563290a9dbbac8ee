// A kernel that hands out a run of its input through the ABI 1.1 call
// ctx_set_output_from_input_range, with the run given by attrs, so the tests
// can reach the core's answers no standard kernel asks for: a run outside
// the input (an error), an unaligned start (copy instead).
#include <graphrt/sdk/sdk.h>

#include <cstring>

using namespace graphrt::sdk;

namespace {

class OutputRangeOp : public OpKernel {
 public:
  explicit OutputRangeOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("offset", &offset_));
    OP_REQUIRES_OK(c, c->GetAttr("count", &count_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int64_t dims[1] = {count_};
    if (ctx->set_output_from_input_range(0, 0, offset_, dims, 1) || !ctx->ok()) return;
    TensorView x = ctx->input(0);
    TensorView y;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, dims, 1, &y));
    if (count_ > 0)  // an empty output may have no buffer
      std::memcpy(y.data<float>(), x.data<float>() + offset_, static_cast<size_t>(count_) * sizeof(float));
  }

 private:
  int64_t offset_ = 0, count_ = 0;
};

}  // namespace

REGISTER_OP("TestOutputRange").Input("x: float").Output("y: float").Attr("offset: int").Attr("count: int");
REGISTER_KERNEL(Name("TestOutputRange").Device(DEVICE_CPU), OutputRangeOp);

GRAPHRT_PLUGIN("test_output_range", "1.0")
