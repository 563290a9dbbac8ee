// CPU kernels of the broadcasting comparisons (Equal, NotEqual, Less,
// LessEqual, Greater, GreaterEqual; bool output) and the logical ops
// (LogicalAnd, LogicalOr, LogicalNot). Equal/NotEqual honour the
// incompatible_shape_error attr: when false, shapes that do not broadcast
// give a scalar false (Equal) or true (NotEqual) instead of an error.
#include <graphrt/sdk/sdk.h>

#include <cstdint>

#include "common/cpu/cwise_bcast.h"
#include "common/cpu/eigen.h"

namespace graphrt {
namespace sdk {
namespace {

using cwise::BinaryOp;
using cwise::UnaryOp;

struct EqualFn {
  static constexpr int64_t kCost = 1;
  static constexpr bool kIncompatibleResult = false;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x == y;
  }
};
struct NotEqualFn {
  static constexpr int64_t kCost = 1;
  static constexpr bool kIncompatibleResult = true;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x != y;
  }
};
struct LessFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x < y;
  }
};
struct LessEqualFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x <= y;
  }
};
struct GreaterFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x > y;
  }
};
struct GreaterEqualFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x >= y;
  }
};

struct LogicalAndFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x && y;
  }
};
struct LogicalOrFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x || y;
  }
};
struct LogicalNotFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X>
  static void Run(O&& o, const X& x) {
    o = !x;
  }
};

}  // namespace

#define GR_REGISTER_COMPARE(OP, T, F)                                                \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), \
                  BinaryOp<T, bool, F>)
#define GR_REGISTER_COMPARE_NUMERIC(OP, F) \
  GR_REGISTER_COMPARE(OP, float, F);       \
  GR_REGISTER_COMPARE(OP, double, F);      \
  GR_REGISTER_COMPARE(OP, int32_t, F);     \
  GR_REGISTER_COMPARE(OP, int64_t, F)

GR_REGISTER_COMPARE_NUMERIC("Equal", EqualFn);
GR_REGISTER_COMPARE("Equal", bool, EqualFn);
GR_REGISTER_COMPARE_NUMERIC("NotEqual", NotEqualFn);
GR_REGISTER_COMPARE("NotEqual", bool, NotEqualFn);
GR_REGISTER_COMPARE_NUMERIC("Less", LessFn);
GR_REGISTER_COMPARE_NUMERIC("LessEqual", LessEqualFn);
GR_REGISTER_COMPARE_NUMERIC("Greater", GreaterFn);
GR_REGISTER_COMPARE_NUMERIC("GreaterEqual", GreaterEqualFn);

REGISTER_KERNEL(Name("LogicalAnd").Device(DEVICE_CPU).Inexpensive(),
                BinaryOp<bool, bool, LogicalAndFn>);
REGISTER_KERNEL(Name("LogicalOr").Device(DEVICE_CPU).Inexpensive(),
                BinaryOp<bool, bool, LogicalOrFn>);
REGISTER_KERNEL(Name("LogicalNot").Device(DEVICE_CPU).Inexpensive(),
                UnaryOp<bool, LogicalNotFn>);

#undef GR_REGISTER_COMPARE_NUMERIC
#undef GR_REGISTER_COMPARE

}  // namespace sdk
}  // namespace graphrt
