// CPU kernel of L2Loss: sum(t^2) / 2 over a whole tensor of any shape.
// Fixed-size blocks, each squared-summed by Eigen (vectorized), split over
// the session's pool; the partial sums are added in block order in double,
// so the result does not depend on the number of threads.
#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

namespace graphrt {
namespace sdk {
namespace {

template <typename T>
class L2LossOp : public OpKernel {
 public:
  explicit L2LossOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView t = ctx->input(0);
    TensorView out;
    if (!ctx->allocate_output(0, nullptr, 0, &out).ok()) return;
    const int64_t n = t.NumElements();
    constexpr int64_t kBlock = 16 * 1024;
    const int64_t blocks = (n + kBlock - 1) / kBlock;  // bounded by the input's size
    std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
    const T* tp = t.data<T>();
    double* pp = partial.data();
    ForRange(ctx, blocks, n, kBlock, [=](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t lo = blk * kBlock, len = std::min(kBlock, n - lo);
        pp[blk] = static_cast<double>(EigenConstVecMap<T>(tp + lo, len).square().sum());
      }
    });
    double sum = 0;
    for (double p : partial) sum += p;
    *out.data<T>() = static_cast<T>(sum / 2);
  }
};

}  // namespace

REGISTER_KERNEL(Name("L2Loss").Device(DEVICE_CPU).TypeConstraint<float>("T"), L2LossOp<float>);
REGISTER_KERNEL(Name("L2Loss").Device(DEVICE_CPU).TypeConstraint<double>("T"), L2LossOp<double>);

}  // namespace sdk
}  // namespace graphrt
