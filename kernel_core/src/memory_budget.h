// A session's memory budget: the most bytes its tensors may hold at once,
// enforced by the allocators its nodes allocate through.
#ifndef GRAPHRT_CORE_SRC_MEMORY_BUDGET_H_
#define GRAPHRT_CORE_SRC_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/core/tensor.h"
#include "graphrt/proto/config.pb.h"

namespace graphrt {

class BudgetedAllocator;

// The byte count one session's allocators share, and the allocators
// themselves. It lives while its owner (the session) does or any byte it
// charged is still allocated: tensors a Run returned may outlive the
// session and are still freed through it. Owner and bytes share one atomic
// word, so an allocation and a free each cost one atomic operation.
class MemoryBudget {
 public:
  // The caller owns it until ReleaseOwner().
  explicit MemoryBudget(int64_t limit_bytes);
  void ReleaseOwner() { Drop(kOwner); }
  // This budget's view of `base` (made once per base; lives with the budget).
  // Not thread-safe: the session calls it under its graph lock.
  Allocator* AllocatorFor(Allocator* base);
  // Reserves `bytes`; false (nothing reserved) when that would pass the limit.
  bool TryCharge(size_t bytes) {
    const int64_t b = static_cast<int64_t>(bytes);
    if (b > limit_) return false;
    const int64_t after = state_.fetch_add(b, std::memory_order_relaxed) + b;
    if ((after & ~kOwner) > limit_) {
      state_.fetch_sub(b, std::memory_order_relaxed);  // the owner is alive while it allocates
      return false;
    }
    return true;
  }
  void Release(size_t bytes) { Drop(static_cast<int64_t>(bytes)); }
  int64_t limit() const { return limit_; }
  int64_t in_use() const { return state_.load(std::memory_order_relaxed) & ~kOwner; }

 private:
  // Above any byte count a limit allows (limits are clamped below it).
  static constexpr int64_t kOwner = int64_t{1} << 62;
  ~MemoryBudget();
  void Drop(int64_t amount) {
    if (state_.fetch_sub(amount, std::memory_order_acq_rel) == amount) delete this;
  }
  const int64_t limit_;
  std::atomic<int64_t> state_{kOwner};
  std::vector<BudgetedAllocator*> allocators_;
};

// The limit a session's ConfigProto asks for: GraphrtOptions'
// session_memory_limit_bytes, else its session_memory_fraction (default
// 0.25) of physical memory.
int64_t SessionMemoryLimit(const proto::ConfigProto& config);

// A device allocator seen through a budget: Allocate refuses (nullptr) past
// the budget, Deallocate gives the bytes back. Owned by its MemoryBudget.
class BudgetedAllocator final : public Allocator {
 public:
  BudgetedAllocator(Allocator* base, MemoryBudget* budget) : base_(base), budget_(budget) {}
  Allocator* base() const { return base_; }
  const char* Name() const override { return base_->Name(); }
  std::string Describe() const override;
  void* Allocate(size_t bytes, size_t alignment) override {
    if (!budget_->TryCharge(bytes)) return nullptr;
    void* p = base_->Allocate(bytes, alignment);
    if (p == nullptr) budget_->Release(bytes);
    return p;
  }
  // The last free after the session is gone deletes the budget and this.
  void Deallocate(void* ptr, size_t bytes) override {
    base_->Deallocate(ptr, bytes);
    budget_->Release(bytes);
  }
  bool IsHost() const override { return base_->IsHost(); }

 private:
  Allocator* base_;
  MemoryBudget* budget_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_MEMORY_BUDGET_H_
