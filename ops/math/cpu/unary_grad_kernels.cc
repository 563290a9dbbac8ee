// CPU kernels of the element-wise gradients SqrtGrad, RsqrtGrad and
// ReciprocalGrad (and its old name InvGrad): inputs (y, dy) where y = f(x),
// TensorFlow's formulas, with the complex conjugate of the y factor for
// complex types (the gradient of a holomorphic f is dy * conj(f'(x))):
//   SqrtGrad       dy * 0.5 / conj(y)
//   RsqrtGrad      dy * -0.5 * conj(y)^3
//   ReciprocalGrad -dy * conj(y)^2
#include <graphrt/sdk/sdk.h>

#include <complex>
#include <cstdint>

#include "common/cpu/cwise_grad.h"
#include "common/cpu/eigen.h"

namespace graphrt {
namespace sdk {
namespace {

using cwise::BinaryGradOp;
using cwise::CwiseGrad;

struct SqrtGradFn : CwiseGrad {
  static constexpr int64_t kCost = 4;
  explicit SqrtGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(EigenVecMap<T> o, const EigenConstVecMap<T>& y, const EigenConstVecMap<T>& dy) const {
    o = dy * T(0.5) / y.conjugate();
  }
};

struct RsqrtGradFn : CwiseGrad {
  static constexpr int64_t kCost = 3;
  explicit RsqrtGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(EigenVecMap<T> o, const EigenConstVecMap<T>& y, const EigenConstVecMap<T>& dy) const {
    o = dy * T(-0.5) * y.conjugate().cube();
  }
};

struct ReciprocalGradFn : CwiseGrad {
  static constexpr int64_t kCost = 2;
  explicit ReciprocalGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(EigenVecMap<T> o, const EigenConstVecMap<T>& y, const EigenConstVecMap<T>& dy) const {
    o = -dy * y.conjugate().square();
  }
};

}  // namespace

#define GR_REGISTER_UNARY_GRAD(OP, FN)                                                                    \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<float>("T").Inexpensive(),                 \
                  BinaryGradOp<float, FN>);                                                            \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<double>("T").Inexpensive(),                \
                  BinaryGradOp<double, FN>);                                                           \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint("T", {GR_COMPLEX64}).Inexpensive(),        \
                  BinaryGradOp<std::complex<float>, FN>);                                              \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint("T", {GR_COMPLEX128}).Inexpensive(),       \
                  BinaryGradOp<std::complex<double>, FN>)

GR_REGISTER_UNARY_GRAD("SqrtGrad", SqrtGradFn);
GR_REGISTER_UNARY_GRAD("RsqrtGrad", RsqrtGradFn);
GR_REGISTER_UNARY_GRAD("ReciprocalGrad", ReciprocalGradFn);
GR_REGISTER_UNARY_GRAD("InvGrad", ReciprocalGradFn);

#undef GR_REGISTER_UNARY_GRAD

}  // namespace sdk
}  // namespace graphrt
