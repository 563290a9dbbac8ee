// A session's memory budget: the most bytes its tensors may hold at once,
// enforced by the allocators its nodes allocate through.
#ifndef GRAPHRT_CORE_SRC_MEMORY_BUDGET_H_
#define GRAPHRT_CORE_SRC_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "graphrt/core/tensor.h"
#include "graphrt/proto/config.pb.h"

namespace graphrt {

// The byte count one session's allocators share. Refcounted, because
// tensors a Run returns may outlive the session and are still freed through
// it.
class MemoryBudget {
 public:
  // Created with one reference.
  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Reserves `bytes`; false (nothing reserved) when that would pass the limit.
  bool TryCharge(size_t bytes) {
    const int64_t b = static_cast<int64_t>(bytes);
    if (b > limit_) return false;
    const int64_t before = in_use_.fetch_add(b, std::memory_order_relaxed);
    if (before > limit_ - b) {
      in_use_.fetch_sub(b, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void Release(size_t bytes) { in_use_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }
  int64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  ~MemoryBudget() = default;
  const int64_t limit_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int32_t> refs_{1};
};

// The limit a session's ConfigProto asks for: GraphrtOptions'
// session_memory_limit_bytes, else its session_memory_fraction (default
// 0.25) of physical memory.
int64_t SessionMemoryLimit(const proto::ConfigProto& config);

// A device allocator seen through a budget: Allocate refuses (nullptr) past
// the budget, Deallocate gives the bytes back. Refcounted like the budget:
// every live allocation holds a reference, so a tensor that outlives the
// session still frees through it.
class BudgetedAllocator final : public Allocator {
 public:
  // Created with one reference (the owner's); takes a reference on `budget`.
  BudgetedAllocator(Allocator* base, MemoryBudget* budget);
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  const char* Name() const override { return base_->Name(); }
  std::string Describe() const override;
  void* Allocate(size_t bytes, size_t alignment) override;
  void Deallocate(void* ptr, size_t bytes) override;
  bool IsHost() const override { return base_->IsHost(); }

 private:
  ~BudgetedAllocator() override;
  Allocator* base_;
  MemoryBudget* budget_;
  std::atomic<int32_t> refs_{1};
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_MEMORY_BUDGET_H_
