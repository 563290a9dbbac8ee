// The activations a fused convolution may apply to its output.
#ifndef GRAPHRT_OPS_NN_CPU_CONV_ACT_H_
#define GRAPHRT_OPS_NN_CPU_CONV_ACT_H_

#include <cmath>

namespace graphrt {
namespace sdk {

enum class Act { kNone, kRelu, kRelu6, kElu, kLeakyRelu };

template <typename T>
T ApplyAct(T x, Act act, float alpha) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kRelu: return x > T(0) ? x : T(0);
    case Act::kRelu6: return x > T(0) ? (x < T(6) ? x : T(6)) : T(0);
    case Act::kElu: return x < T(0) ? static_cast<T>(std::expm1(x)) : x;
    case Act::kLeakyRelu: return x > T(0) ? x : static_cast<T>(x * static_cast<T>(alpha));
  }
  return x;
}

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_NN_CPU_CONV_ACT_H_
