// Element-wise gradient kernels out = f(a, b) over two same-sized inputs,
// for any op family: the nn activations' gradients (ReluGrad ... SoftsignGrad,
// SigmoidGrad, TanhGrad) and math's SqrtGrad, RsqrtGrad, ReciprocalGrad.
// Unlike the broadcasting ops (cwise_bcast.h) these never broadcast, as
// TensorFlow's.
//
// A functor F used as BinaryGradOp<T, F>:
//   static constexpr int64_t kCost;        // rough ns per element
//   static constexpr int kForward;         // which input may lend its buffer
//   static Status Check(a, b);             // the shape rule and its message
//   explicit F(OpKernelConstruction*);     // reads attrs (alpha, ...)
//   template <typename T> void Run(VecMap<T> o, ConstVecMap<T> a, ConstVecMap<T> b) const;
// Run is element-wise, so `o` may alias an input.
#ifndef GRAPHRT_OPS_COMMON_CPU_CWISE_GRAD_H_
#define GRAPHRT_OPS_COMMON_CPU_CWISE_GRAD_H_

#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

namespace graphrt {
namespace sdk {
namespace cwise {

// The Relu family's gradients (gradients, features): TensorFlow's "same
// size" rule and message; the output reuses the incoming gradients.
struct ReluFamilyGrad {
  static constexpr int kForward = 0;
  static bool SameShape(const TensorView& a, const TensorView& b) {
    if (a.rank() != b.rank()) return false;
    for (int i = 0; i < a.rank(); ++i)
      if (a.dim(i) != b.dim(i)) return false;
    return true;
  }
  static Status Check(const TensorView& g, const TensorView& a) {
    if (SameShape(g, a)) return Status();
    return errors::InvalidArgument("g and a must be the same size: ", shape_fns::ShapeString(g), " vs. ",
                                   shape_fns::ShapeString(a));
  }
};

// TensorFlow's cwise gradient ops (y, dy): equal element counts, output
// shaped like y, reusing dy's buffer.
struct CwiseGrad {
  static constexpr int kForward = 1;
  static Status Check(const TensorView& a, const TensorView& b) {
    if (a.NumElements() == b.NumElements()) return Status();
    return errors::InvalidArgument("The two arguments to a cwise op must have same number of elements, got ",
                                   a.NumElements(), " and ", b.NumElements());
  }
};

template <typename T, typename F>
class BinaryGradOp : public OpKernel {
 public:
  explicit BinaryGradOp(OpKernelConstruction* c) : OpKernel(c), f_(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0);
    const TensorView b = ctx->input(1);
    OP_REQUIRES_OK(ctx, F::Check(a, b));
    // The output has input 0's shape; input kForward lends its buffer
    // when it has that very shape.
    const int fwd = F::kForward == 1 && ReluFamilyGrad::SameShape(a, b) ? 1 : 0;
    TensorView out;
    if (!ctx->forward_input_or_allocate_output(fwd, 0, a.dims_data(), a.rank(), &out).ok()) return;
    const int64_t n = a.NumElements();
    if (n == 0) return;
    const T* ap = a.data<T>();
    const T* bp = b.data<T>();
    T* op = out.data<T>();
    const F& f = f_;
    ForRange(ctx, n, n, F::kCost, [=, &f](int64_t lo, int64_t hi) {
      f.template Run<T>(EigenVecMap<T>(op + lo, hi - lo), EigenConstVecMap<T>(ap + lo, hi - lo),
                        EigenConstVecMap<T>(bp + lo, hi - lo));
    });
  }

 private:
  const F f_;
};

}  // namespace cwise
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_CWISE_GRAD_H_
