// Two's-complement wrapping arithmetic (-INT_MIN == INT_MIN), for kernels
// that must not hit signed-overflow UB on any input. Floating-point and
// complex types pass straight through, so a kernel templated on T calls these
// for every T.
#ifndef GRAPHRT_OPS_COMMON_CPU_WRAPPING_H_
#define GRAPHRT_OPS_COMMON_CPU_WRAPPING_H_

#include <type_traits>

namespace graphrt {
namespace sdk {
namespace cwise {

template <typename T>
inline constexpr bool kWrapsOnOverflow = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// At least unsigned int, so that narrow types are not promoted to int.
template <typename T>
using WrapUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
inline T WrappingNeg(T a) {
  if constexpr (kWrapsOnOverflow<T>) {
    return static_cast<T>(WrapUnsigned<T>(0) - static_cast<WrapUnsigned<T>>(a));
  } else {
    return -a;
  }
}
template <typename T>
inline T WrappingAdd(T a, T b) {
  if constexpr (kWrapsOnOverflow<T>) {
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) + static_cast<WrapUnsigned<T>>(b));
  } else {
    return a + b;
  }
}
template <typename T>
inline T WrappingSub(T a, T b) {
  if constexpr (kWrapsOnOverflow<T>) {
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) - static_cast<WrapUnsigned<T>>(b));
  } else {
    return a - b;
  }
}
template <typename T>
inline T WrappingMul(T a, T b) {
  if constexpr (kWrapsOnOverflow<T>) {
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) * static_cast<WrapUnsigned<T>>(b));
  } else {
    return a * b;
  }
}

}  // namespace cwise
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_WRAPPING_H_
