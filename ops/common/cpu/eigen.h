// Eigen for the CPU kernels of every op family, included in one place.
#ifndef GRAPHRT_OPS_COMMON_CPU_EIGEN_H_
#define GRAPHRT_OPS_COMMON_CPU_EIGEN_H_

// GCC 12 reports false "(may be) used uninitialized" warnings inside the
// AVX-512 intrinsics Eigen inlines; they are not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include <cstdint>

namespace graphrt {
namespace sdk {

template <typename T>
using EigenArr = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using EigenVecMap = Eigen::Map<EigenArr<T>>;
template <typename T>
using EigenConstVecMap = Eigen::Map<const EigenArr<T>>;

// bfloat16 kept as its bits (the upper half of a float), converted through
// Eigen::bfloat16: round to nearest even, NaN stays NaN.
inline float Bf16BitsToFloat(uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
}
inline uint16_t FloatToBf16Bits(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f)); }

// Whole arrays, for the kernels that compute bfloat16 in float where oneDNN
// has no bfloat16 primitive (see matmul_common.h).
inline void Bf16BitsToFloat(const uint16_t* src, int64_t count, float* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = Bf16BitsToFloat(src[i]);
}
inline void FloatToBf16Bits(const float* src, int64_t count, uint16_t* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = FloatToBf16Bits(src[i]);
}

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_EIGEN_H_
