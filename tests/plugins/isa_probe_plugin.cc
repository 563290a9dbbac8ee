// Reports the x86-64 level it was compiled for, so the loader tests can see
// which build of a plugin the loader picked (plugin_isa_test.cc). Built as
// the plugin file itself (x86-64) and as its x86-64-v3 and x86-64-v4 builds.
#include <graphrt/sdk/sdk.h>

using namespace graphrt::sdk;

namespace {

// The level's number: x86-64 is 1, x86-64-v4 is 4.
#if defined(__AVX512F__)
constexpr int32_t kLevel = 4;
#elif defined(__AVX2__)
constexpr int32_t kLevel = 3;
#elif defined(__SSE4_2__)
constexpr int32_t kLevel = 2;
#else
constexpr int32_t kLevel = 1;
#endif

class IsaLevelOp : public OpKernel {
 public:
  explicit IsaLevelOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, nullptr, 0, &out));
    out.data<int32_t>()[0] = kLevel;
  }
};

}  // namespace

REGISTER_OP("TestIsaLevel").Output("level: int32");
REGISTER_KERNEL(Name("TestIsaLevel").Device(DEVICE_CPU), IsaLevelOp);

GRAPHRT_PLUGIN("test_isa_probe", "1.0")
