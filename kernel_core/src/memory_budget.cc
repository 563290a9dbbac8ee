#include "memory_budget.h"

#include <unistd.h>

#include <algorithm>
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

MemoryBudget::MemoryBudget(int64_t limit_bytes) : limit_(std::clamp<int64_t>(limit_bytes, 0, kOwner - 1)) {}

MemoryBudget::~MemoryBudget() {
  for (BudgetedAllocator* a : allocators_) delete a;
}

Allocator* MemoryBudget::AllocatorFor(Allocator* base) {
  for (BudgetedAllocator* a : allocators_)
    if (a->base() == base) return a;
  allocators_.push_back(new BudgetedAllocator(base, this));
  return allocators_.back();
}

std::string BudgetedAllocator::Describe() const {
  return std::string(base_->Name()) + " (the session's memory limit is " + Bytes(budget_->limit()) + ", " +
         Bytes(budget_->in_use()) + " in use; ConfigProto.graphrt_options.session_memory_limit_bytes raises it)";
}

}  // namespace graphrt
