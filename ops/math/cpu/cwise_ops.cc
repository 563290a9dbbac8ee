// CPU kernels of the broadcasting arithmetic ops: Add, AddV2, Sub, Mul,
// RealDiv, Div, FloorDiv, FloorMod, Maximum, Minimum, Pow,
// SquaredDifference. The broadcasting machinery (fast paths, in-place
// reuse, the split over the pool) is common/cpu/cwise_bcast.h; this file
// holds only the per-element functors and the registrations.
//
// Integer semantics follow TensorFlow: Div truncates toward zero, FloorDiv
// and FloorMod floor (Python semantics, the remainder takes the divisor's
// sign); a zero divisor fails the step with "Integer division by zero" and
// a negative integer exponent with "Integers to negative integer powers
// are not allowed". INT_MIN / -1 wraps to INT_MIN (INT_MIN mod -1 is 0)
// instead of trapping.
#include <graphrt/sdk/sdk.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/cpu/cwise_bcast.h"
#include "common/cpu/eigen.h"

namespace graphrt {
namespace sdk {
namespace {

using cwise::BinaryOp;
using cwise::WrappingMul;
using cwise::WrappingNeg;

template <typename X>
using ScalarOf = typename std::decay_t<X>::Scalar;

constexpr const char* kDivByZero = "Integer division by zero";
constexpr const char* kNegativePower = "Integers to negative integer powers are not allowed";

// Fails on any zero in y (y's elements all reach a non-empty output).
template <typename T>
const char* CheckNoZeroDivisor(const T*, int64_t, const T* y, int64_t ny) {
  return (EigenConstVecMap<T>(y, ny) == T(0)).any() ? kDivByZero : nullptr;
}

// ------------------------------------------------------------- functors

struct AddFn {
  static constexpr int64_t kCost = 1;  // rough ns per element
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x + y;
  }
};
struct SubFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x - y;
  }
};
struct MulFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x * y;
  }
};
// Floating-point division (RealDiv; Div on floating types).
struct DivFn {
  static constexpr int64_t kCost = 4;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x / y;
  }
};

// Integer Div: C's truncating division.
template <typename T>
struct TruncDivScalar {
  T operator()(const T& a, const T& b) const {
    return b == T(-1) ? WrappingNeg(a) : static_cast<T>(a / b);
  }
};
template <typename T>
struct TruncDivIntFn {
  static constexpr int64_t kCost = 8;
  static constexpr auto Check = CheckNoZeroDivisor<T>;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x.binaryExpr(y, TruncDivScalar<T>());
  }
};

// FloorDiv on floating types: floor(x / y).
struct FloorDivRealFn {
  static constexpr int64_t kCost = 5;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = (x / y).floor();
  }
};
template <typename T>
struct FloorDivScalar {
  T operator()(const T& a, const T& b) const {
    if (b == T(-1)) return WrappingNeg(a);
    const T q = static_cast<T>(a / b);
    const T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  }
};
template <typename T>
struct FloorDivIntFn {
  static constexpr int64_t kCost = 10;
  static constexpr auto Check = CheckNoZeroDivisor<T>;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x.binaryExpr(y, FloorDivScalar<T>());
  }
};

// FloorMod: the remainder of the flooring division (sign of the divisor).
template <typename T>
struct FloorModScalar {
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      const T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      if (b == T(-1)) return T(0);
      const T r = static_cast<T>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    }
  }
};
template <typename T>
struct FloorModRealFn {
  static constexpr int64_t kCost = 15;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x.binaryExpr(y, FloorModScalar<T>());
  }
};
template <typename T>
struct FloorModIntFn : FloorModRealFn<T> {
  static constexpr auto Check = CheckNoZeroDivisor<T>;
};

// Maximum / Minimum: a NaN on either side gives NaN, as TensorFlow.
struct MaximumFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    using S = ScalarOf<X>;
    o = x.binaryExpr(y, Eigen::internal::scalar_max_op<S, S, Eigen::PropagateNaN>());
  }
};
struct MinimumFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    using S = ScalarOf<X>;
    o = x.binaryExpr(y, Eigen::internal::scalar_min_op<S, S, Eigen::PropagateNaN>());
  }
};

struct SquaredDifferenceFn {
  static constexpr int64_t kCost = 2;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = (x - y).square();
  }
};

struct PowRealFn {
  static constexpr int64_t kCost = 20;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x.pow(y);
  }
};
// Integer power by squaring (wrapping on overflow); exponents are >= 0.
template <typename T>
struct IntPowScalar {
  T operator()(const T& base, const T& exponent) const {
    T result = 1, b = base;
    for (T e = exponent; e > 0; e = static_cast<T>(e >> 1)) {
      if (e & 1) result = WrappingMul(result, b);
      b = WrappingMul(b, b);
    }
    return result;
  }
};
template <typename T>
const char* CheckNonNegativeExponent(const T*, int64_t, const T* y, int64_t ny) {
  return (EigenConstVecMap<T>(y, ny) < T(0)).any() ? kNegativePower : nullptr;
}
template <typename T>
struct PowIntFn {
  static constexpr int64_t kCost = 10;
  static constexpr auto Check = CheckNonNegativeExponent<T>;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x.binaryExpr(y, IntPowScalar<T>());
  }
};

}  // namespace

#define GR_REGISTER_BINARY(OP, T, F)                                                 \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), \
                  BinaryOp<T, T, F>)
#define GR_REGISTER_BINARY_REAL(OP, F) \
  GR_REGISTER_BINARY(OP, float, F);    \
  GR_REGISTER_BINARY(OP, double, F)
#define GR_REGISTER_BINARY_ALL(OP, F) \
  GR_REGISTER_BINARY_REAL(OP, F);     \
  GR_REGISTER_BINARY(OP, int32_t, F); \
  GR_REGISTER_BINARY(OP, int64_t, F)
#define GR_REGISTER_BINARY_SPLIT(OP, REAL_F, INT_F) \
  GR_REGISTER_BINARY_REAL(OP, REAL_F);              \
  GR_REGISTER_BINARY(OP, int32_t, INT_F<int32_t>);  \
  GR_REGISTER_BINARY(OP, int64_t, INT_F<int64_t>)

GR_REGISTER_BINARY_ALL("Add", AddFn);
GR_REGISTER_BINARY_ALL("AddV2", AddFn);
GR_REGISTER_BINARY_ALL("Sub", SubFn);
GR_REGISTER_BINARY_ALL("Mul", MulFn);
// RealDiv is for floating point; integers divide with Div/FloorDiv.
GR_REGISTER_BINARY_REAL("RealDiv", DivFn);
GR_REGISTER_BINARY_SPLIT("Div", DivFn, TruncDivIntFn);
GR_REGISTER_BINARY_SPLIT("FloorDiv", FloorDivRealFn, FloorDivIntFn);
GR_REGISTER_BINARY("FloorMod", float, FloorModRealFn<float>);
GR_REGISTER_BINARY("FloorMod", double, FloorModRealFn<double>);
GR_REGISTER_BINARY("FloorMod", int32_t, FloorModIntFn<int32_t>);
GR_REGISTER_BINARY("FloorMod", int64_t, FloorModIntFn<int64_t>);
GR_REGISTER_BINARY_ALL("Maximum", MaximumFn);
GR_REGISTER_BINARY_ALL("Minimum", MinimumFn);
GR_REGISTER_BINARY_ALL("SquaredDifference", SquaredDifferenceFn);
GR_REGISTER_BINARY_SPLIT("Pow", PowRealFn, PowIntFn);

#undef GR_REGISTER_BINARY_SPLIT
#undef GR_REGISTER_BINARY_ALL
#undef GR_REGISTER_BINARY_REAL
#undef GR_REGISTER_BINARY

}  // namespace sdk
}  // namespace graphrt
