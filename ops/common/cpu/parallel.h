// How CPU kernels split work over the session's pool.
#ifndef GRAPHRT_OPS_COMMON_CPU_PARALLEL_H_
#define GRAPHRT_OPS_COMMON_CPU_PARALLEL_H_

#include <graphrt/sdk/sdk.h>

#include <cstdint>
#include <utility>

namespace graphrt {
namespace sdk {

// Below this many elements a split over the pool costs more than it saves.
constexpr int64_t kParallelMinElements = 32 * 1024;

// Runs fn(begin, end) over [0, n) units: inline when the work is small or
// the session has one thread, split over the session's pool otherwise.
// `elements` is the total work size, `cost` rough ns per unit.
template <typename Fn>
inline void ForRange(OpKernelContext* ctx, int64_t n, int64_t elements, int64_t cost, Fn&& fn) {
  if (elements >= kParallelMinElements && n > 1 && ctx->num_threads() > 1) {
    ctx->parallel_for(n, cost, std::forward<Fn>(fn));
  } else {
    fn(int64_t{0}, n);
  }
}

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_PARALLEL_H_
