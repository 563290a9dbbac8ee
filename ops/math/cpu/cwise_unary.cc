// CPU kernels of the element-wise unary math ops: Neg, Abs, Sign, Square,
// Reciprocal (and its old name Inv), Exp, Log, Log1p, Sqrt, Rsqrt, Tanh,
// Erf, Sin, Cos, Floor, Ceil, Round. Eigen-vectorized, written in place of
// a dying input, split over the pool when large (common/cpu/cwise_bcast.h).
//
// Integer Neg/Abs/Square wrap on overflow (-INT_MIN == INT_MIN) rather than
// hit undefined behaviour. Round rounds half to even, as TensorFlow. Sign
// of NaN is NaN.
#include <graphrt/sdk/sdk.h>

#include <cstdint>
#include <type_traits>

#include "common/cpu/cwise_bcast.h"
#include "common/cpu/eigen.h"

// Eigen's erf lives in its special-functions module (same warnings as in
// common/cpu/eigen.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <unsupported/Eigen/SpecialFunctions>
#pragma GCC diagnostic pop

namespace graphrt {
namespace sdk {
namespace {

using cwise::UnaryOp;

template <typename X>
using ScalarOf = typename std::decay_t<X>::Scalar;
template <typename X>
constexpr bool kIsFloat = std::is_floating_point_v<ScalarOf<X>>;

// Scalar helpers for integer types.
template <typename T>
struct WrappingNegScalar {
  T operator()(const T& a) const { return cwise::WrappingNeg(a); }
};
template <typename T>
struct WrappingAbsScalar {
  T operator()(const T& a) const { return a < 0 ? cwise::WrappingNeg(a) : a; }
};
template <typename T>
struct WrappingSquareScalar {
  T operator()(const T& a) const { return cwise::WrappingMul(a, a); }
};
template <typename T>
struct SignScalar {
  T operator()(const T& a) const {
    if constexpr (std::is_floating_point_v<T>) {
      return a > 0 ? T(1) : a < 0 ? T(-1) : a == 0 ? T(0) : a;  // NaN stays NaN
    } else {
      return static_cast<T>((a > 0) - (a < 0));
    }
  }
};

// One functor per op: `EXPR` on the Eigen array expression `x`.
#define GR_UNARY_FN(NAME, COST, EXPR)        \
  struct NAME {                              \
    static constexpr int64_t kCost = COST;   \
    template <typename O, typename X>        \
    static void Run(O&& o, const X& x) {     \
      o = EXPR;                              \
    }                                        \
  }

GR_UNARY_FN(ExpFn, 4, x.exp());
GR_UNARY_FN(LogFn, 4, x.log());
GR_UNARY_FN(Log1pFn, 6, x.log1p());
GR_UNARY_FN(SqrtFn, 2, x.sqrt());
GR_UNARY_FN(RsqrtFn, 2, x.rsqrt());
GR_UNARY_FN(TanhFn, 6, x.tanh());
GR_UNARY_FN(ErfFn, 8, x.erf());
GR_UNARY_FN(SinFn, 6, x.sin());
GR_UNARY_FN(CosFn, 6, x.cos());
GR_UNARY_FN(FloorFn, 1, x.floor());
GR_UNARY_FN(CeilFn, 1, x.ceil());
GR_UNARY_FN(ReciprocalFn, 3, x.inverse());

#undef GR_UNARY_FN

struct NegFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X>
  static void Run(O&& o, const X& x) {
    if constexpr (kIsFloat<X>) {
      o = -x;
    } else {
      o = x.unaryExpr(WrappingNegScalar<ScalarOf<X>>());
    }
  }
};
struct AbsFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X>
  static void Run(O&& o, const X& x) {
    if constexpr (kIsFloat<X>) {
      o = x.abs();
    } else {
      o = x.unaryExpr(WrappingAbsScalar<ScalarOf<X>>());
    }
  }
};
struct SquareFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X>
  static void Run(O&& o, const X& x) {
    if constexpr (kIsFloat<X>) {
      o = x.square();
    } else {
      o = x.unaryExpr(WrappingSquareScalar<ScalarOf<X>>());
    }
  }
};
struct SignFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X>
  static void Run(O&& o, const X& x) {
    o = x.unaryExpr(SignScalar<ScalarOf<X>>());
  }
};
// Round half to even; integers are already round.
struct RoundFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X>
  static void Run(O&& o, const X& x) {
    if constexpr (kIsFloat<X>) {
      o = x.rint();
    } else {
      o = x;
    }
  }
};

}  // namespace

#define GR_REGISTER_UNARY(OP, T, F) \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), UnaryOp<T, F>)
#define GR_REGISTER_UNARY_REAL(OP, F) \
  GR_REGISTER_UNARY(OP, float, F);    \
  GR_REGISTER_UNARY(OP, double, F)
#define GR_REGISTER_UNARY_ALL(OP, F) \
  GR_REGISTER_UNARY_REAL(OP, F);     \
  GR_REGISTER_UNARY(OP, int32_t, F); \
  GR_REGISTER_UNARY(OP, int64_t, F)

GR_REGISTER_UNARY_ALL("Neg", NegFn);
GR_REGISTER_UNARY_ALL("Abs", AbsFn);
GR_REGISTER_UNARY_ALL("Sign", SignFn);
GR_REGISTER_UNARY_ALL("Square", SquareFn);
GR_REGISTER_UNARY_ALL("Round", RoundFn);
GR_REGISTER_UNARY_REAL("Reciprocal", ReciprocalFn);
GR_REGISTER_UNARY_REAL("Inv", ReciprocalFn);
GR_REGISTER_UNARY_REAL("Exp", ExpFn);
GR_REGISTER_UNARY_REAL("Log", LogFn);
GR_REGISTER_UNARY_REAL("Log1p", Log1pFn);
GR_REGISTER_UNARY_REAL("Sqrt", SqrtFn);
GR_REGISTER_UNARY_REAL("Rsqrt", RsqrtFn);
GR_REGISTER_UNARY_REAL("Tanh", TanhFn);
GR_REGISTER_UNARY_REAL("Erf", ErfFn);
GR_REGISTER_UNARY_REAL("Sin", SinFn);
GR_REGISTER_UNARY_REAL("Cos", CosFn);
GR_REGISTER_UNARY_REAL("Floor", FloorFn);
GR_REGISTER_UNARY_REAL("Ceil", CeilFn);

#undef GR_REGISTER_UNARY_ALL
#undef GR_REGISTER_UNARY_REAL
#undef GR_REGISTER_UNARY

}  // namespace sdk
}  // namespace graphrt
