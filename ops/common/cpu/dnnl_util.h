// oneDNN for the CPU kernels of every op family, in one place.
//
// Threads: Debian's oneDNN runs on OpenMP, which would start a team of its
// own next to the session's oneTBB pool and oversubscribe the cores. So a
// kernel runs every oneDNN call single-threaded (SingleOmpThread around both
// primitive creation, which picks blockings for the thread count it sees, and
// execution) and splits its work (rows, batch images, channel blocks) over
// the session's parallel_for itself. Intra-op parallelism then comes from
// the one pool the core owns.
#ifndef GRAPHRT_OPS_COMMON_CPU_DNNL_UTIL_H_
#define GRAPHRT_OPS_COMMON_CPU_DNNL_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <oneapi/dnnl/dnnl.hpp>

#ifdef GRAPHRT_HAVE_OPENMP
#include <omp.h>
#endif

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

namespace graphrt {
namespace sdk {

// Keeps OpenMP-based libraries to one thread on this thread for the scope.
class SingleOmpThread {
 public:
#ifdef GRAPHRT_HAVE_OPENMP
  SingleOmpThread() : prev_(omp_get_max_threads()) {
    if (prev_ != 1) omp_set_num_threads(1);
  }
  ~SingleOmpThread() {
    if (prev_ != 1) omp_set_num_threads(prev_);
  }
  SingleOmpThread(const SingleOmpThread&) = delete;
  SingleOmpThread& operator=(const SingleOmpThread&) = delete;

 private:
  int prev_;
#endif
};

inline const dnnl::engine& DnnlCpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One stream per thread: CPU streams are cheap but not free to create, and a
// stream must not be used by two threads at once.
inline dnnl::stream& DnnlThreadStream() {
  thread_local dnnl::stream stream(DnnlCpuEngine());
  return stream;
}

// The oneDNN element type of a graphrt dtype, or data_type::undef.
inline dnnl::memory::data_type DnnlDataType(DataType dt) {
  using dnnl_dt = dnnl::memory::data_type;
  switch (dt) {
    case GR_FLOAT: return dnnl_dt::f32;
    case GR_BFLOAT16: return dnnl_dt::bf16;
    case GR_HALF: return dnnl_dt::f16;
    case GR_INT32: return dnnl_dt::s32;
    case GR_INT8: return dnnl_dt::s8;
    case GR_UINT8: return dnnl_dt::u8;
    default: return dnnl_dt::undef;
  }
}

// Per-kernel cache of whatever a kernel derives from its input shapes
// (primitives, reordered weights), keyed by a vector of int64 (dims, flags).
// Lookups of a hit take a shared lock only; a kernel instance may run from
// several steps at once.
template <typename V>
class ShapeKeyedCache {
 public:
  using Key = std::vector<int64_t>;

  // Returns the entry for `key`, building it with make() (-> std::shared_ptr<V>,
  // null on failure, which is not cached) on a miss.
  template <typename Make>
  std::shared_ptr<V> GetOrCreate(const Key& key, Make&& make) {
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    std::shared_ptr<V> v = make();
    if (!v) return v;
    std::unique_lock<std::shared_mutex> lock(mu_);
    // Shapes of a long-lived session are few; a runaway mix of shapes must
    // not grow memory without bound.
    if (map_.size() >= kMaxEntries) map_.clear();
    return map_.emplace(key, std::move(v)).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 64;
  std::shared_mutex mu_;
  std::map<Key, std::shared_ptr<V>> map_;
};

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_DNNL_UTIL_H_
