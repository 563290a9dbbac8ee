// Buffers the CPU kernels of every op family share: per-thread scratch and
// per-kernel leased buffers, 64-byte aligned.
#ifndef GRAPHRT_OPS_COMMON_CPU_SCRATCH_H_
#define GRAPHRT_OPS_COMMON_CPU_SCRATCH_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace graphrt {
namespace sdk {

inline size_t AlignUp(size_t n) { return (n + 63) / 64 * 64; }

// 64-byte aligned growable buffer.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(p_); }
  // At least `bytes` bytes; old contents are not kept.
  char* Get(size_t bytes) {
    if (bytes > n_) {
      std::free(p_);
      n_ = (bytes + 4095) / 4096 * 4096;
      p_ = static_cast<char*>(std::aligned_alloc(64, n_));
      if (p_ == nullptr) {
        n_ = 0;
        throw std::bad_alloc();
      }
    }
    return p_;
  }
  char* data() const { return p_; }

 private:
  char* p_ = nullptr;
  size_t n_ = 0;
};

// Per-thread scratch for work that runs start to end on one thread without
// waiting on the pool (a chunk of a convolution or matmul): oneDNN
// scratchpads and blocked copies of operands. One per plugin and thread.
inline AlignedBuffer& ThreadScratch() {
  thread_local AlignedBuffer buf;
  return buf;
}

// Buffers that live across a parallel_for (the caller's thread may run
// other kernels while it waits, so thread-locals would be shared): leased
// from a per-kernel pool and returned after the Run.
class BufferPool {
 public:
  class Lease {
   public:
    Lease(BufferPool* pool, std::unique_ptr<AlignedBuffer> b) : pool_(pool), b_(std::move(b)) {}
    Lease(Lease&&) = default;
    ~Lease() {
      if (b_) pool_->Return(std::move(b_));
    }
    char* Get(size_t bytes) { return b_->Get(bytes); }

   private:
    BufferPool* pool_;
    std::unique_ptr<AlignedBuffer> b_;
  };
  Lease Acquire() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return Lease(this, std::make_unique<AlignedBuffer>());
    std::unique_ptr<AlignedBuffer> b = std::move(free_.back());
    free_.pop_back();
    return Lease(this, std::move(b));
  }

 private:
  void Return(std::unique_ptr<AlignedBuffer> b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < 8) free_.push_back(std::move(b));
  }
  std::mutex mu_;
  std::vector<std::unique_ptr<AlignedBuffer>> free_;
};

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_SCRATCH_H_
