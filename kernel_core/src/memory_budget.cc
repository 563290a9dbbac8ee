#include "memory_budget.h"

#include <unistd.h>

#include <cmath>

namespace graphrt {
namespace {

constexpr double kDefaultSessionMemoryFraction = 0.25;

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{8} << 30;  // unknown: assume a small machine
  return static_cast<int64_t>(pages) * page_size;
}

std::string Bytes(int64_t b) {
  char buf[64];
  if (b >= (int64_t{1} << 30)) std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(b) / (1 << 30));
  else std::snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(b) / (1 << 20));
  return buf;
}

}  // namespace

int64_t SessionMemoryLimit(const proto::ConfigProto& config) {
  const proto::GraphrtOptions& o = config.graphrt_options();
  if (o.session_memory_limit_bytes() > 0) return o.session_memory_limit_bytes();
  double fraction = o.session_memory_fraction();
  if (!(fraction > 0)) fraction = kDefaultSessionMemoryFraction;
  return static_cast<int64_t>(std::floor(static_cast<double>(PhysicalMemoryBytes()) * fraction));
}

BudgetedAllocator::BudgetedAllocator(Allocator* base, MemoryBudget* budget) : base_(base), budget_(budget) {
  budget_->Ref();
}

BudgetedAllocator::~BudgetedAllocator() { budget_->Unref(); }

std::string BudgetedAllocator::Describe() const {
  return std::string(base_->Name()) + " (the session's memory limit is " + Bytes(budget_->limit()) + ", " +
         Bytes(budget_->in_use()) + " in use; ConfigProto.graphrt_options.session_memory_limit_bytes raises it)";
}

void* BudgetedAllocator::Allocate(size_t bytes, size_t alignment) {
  if (!budget_->TryCharge(bytes)) return nullptr;
  void* p = base_->Allocate(bytes, alignment);
  if (p == nullptr) {
    budget_->Release(bytes);
    return nullptr;
  }
  refs_.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void BudgetedAllocator::Deallocate(void* ptr, size_t bytes) {
  base_->Deallocate(ptr, bytes);
  budget_->Release(bytes);
  Unref();
}

}  // namespace graphrt
