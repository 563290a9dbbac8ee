// The CPU device backend: ordinary host memory, 64-byte aligned, and
// synchronous execution (streams and events are null handles, copies are
// memcpy, host callbacks run at once). The core runs CPU kernels on its own
// thread pool.
#include <graphrt/sdk/sdk.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using graphrt::sdk::Api;

constexpr uint64_t kMinAlignment = 64;  // one cache line; also AVX-512 width

struct CpuDevice {
  int32_t ordinal = 0;
  std::string description;  // built once: describe() must return stable storage
};

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) break;
      size_t begin = line.find_first_not_of(" \t", colon + 1);
      return begin == std::string::npos ? std::string() : line.substr(begin);
    }
  }
  return std::string();
}

const char* BestIsa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
  if (__builtin_cpu_supports("avx")) return "AVX";
  if (__builtin_cpu_supports("sse4.2")) return "SSE4.2";
  return "x86-64";
#elif defined(__aarch64__)
  return "AArch64";
#else
  return "generic";
#endif
}

std::string Describe() {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores <= 0) cores = static_cast<long>(std::thread::hardware_concurrency());
  std::string s = "host CPU, ";
  s += std::to_string(cores);
  s += cores == 1 ? " core" : " cores";
  const std::string model = CpuModelName();
  if (!model.empty()) s += ", " + model;
  s += ", ";
  s += BestIsa();
  return s;
}

// MemAvailable (what can be allocated without swapping) in bytes, or -1.
int64_t AvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    long long kb = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kb) == 1) return kb * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : -1;
}

// One CPU device by default; a session may ask for more (ConfigProto
// device_count {"CPU": n}): virtual devices over the same host and pool.
int32_t DeviceCount(void*) { return 1; }

int32_t CreateDevice(void*, int32_t ordinal, void** device_out, GR_StatusSink* status) {
  if (ordinal < 0) {
    std::string msg = "CPU device ordinal ";
    msg += std::to_string(ordinal);
    msg += " is negative";
    Api().status_set(status, GR_INVALID_ARGUMENT, msg.c_str());
    return GR_INVALID_ARGUMENT;
  }
  auto* d = new CpuDevice;
  d->ordinal = ordinal;
  d->description = Describe();
  *device_out = d;
  return GR_OK;
}

void DestroyDevice(void* device) { delete static_cast<CpuDevice*>(device); }

const char* DescribeDevice(void* device) {
  return static_cast<CpuDevice*>(device)->description.c_str();
}

// Large blocks (activations, big outputs) are kept for reuse instead of
// going back to the OS: glibc serves them with mmap, so every Run would
// otherwise page-fault its way through fresh memory (about 10 ms per 100 MB
// here). Sizes round up to classes at most 12.5% apart, so a block freed by
// one Run fits the same tensor of the next.
class LargeBlockCache {
 public:
  static constexpr uint64_t kMinBytes = 256 * 1024;

  // The size class of a large request.
  static uint64_t ClassOf(uint64_t bytes) {
    const int top = 63 - __builtin_clzll(bytes);
    const uint64_t step = uint64_t{1} << (top - 3);
    return (bytes + step - 1) & ~(step - 1);
  }

  void* Take(uint64_t size_class) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size_class);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= size_class;
    return p;
  }

  // Keeps `p` unless the cache is full.
  bool Give(void* p, uint64_t size_class) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_bytes_ + size_class > limit_) return false;
    free_[size_class].push_back(p);
    cached_bytes_ += size_class;
    return true;
  }

  ~LargeBlockCache() {
    for (auto& [size_class, blocks] : free_)
      for (void* p : blocks) std::free(p);
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, std::vector<void*>> free_;
  uint64_t cached_bytes_ = 0;
  // A quarter of physical memory, at most 4 GiB: plenty for the working set
  // of a graph, never a reason to swap.
  const uint64_t limit_ = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const uint64_t quarter = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * page / 4 : 0;
    return std::min<uint64_t>(quarter, uint64_t{4} << 30);
  }();
};

LargeBlockCache& BlockCache() {
  static LargeBlockCache* cache = new LargeBlockCache();  // outlives every tensor freed at exit
  return *cache;
}

// Bytes the core holds now and at most (what it asked for, not the size
// classes behind them), over every CPU device: they share one heap.
std::atomic<int64_t> g_bytes_in_use{0};
std::atomic<int64_t> g_peak_bytes_in_use{0};

void CountAllocation(uint64_t bytes) {
  const int64_t now = g_bytes_in_use.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
                      static_cast<int64_t>(bytes);
  int64_t peak = g_peak_bytes_in_use.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_bytes_in_use.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void* AllocateBlock(uint64_t bytes, uint64_t alignment) {
  uint64_t align = alignment < kMinAlignment ? kMinAlignment : alignment;
  if ((align & (align - 1)) != 0) return nullptr;  // not a power of two
  // Zero bytes still gets a real (unique, freeable) block, so callers never
  // have to special-case it; aligned_alloc needs a size that is a multiple
  // of the alignment.
  const uint64_t want = bytes == 0 ? 1 : bytes;
  if (want > UINT64_MAX / 2) return nullptr;
  auto round_up = [align](uint64_t n) { return (n + align - 1) & ~(align - 1); };
  if (want >= LargeBlockCache::kMinBytes) {
    // Every large block spans at least its whole size class, so any of them
    // can serve a later request of that class; cached blocks have the
    // default alignment only.
    const uint64_t size_class = LargeBlockCache::ClassOf(want);
    if (align <= kMinAlignment)
      if (void* p = BlockCache().Take(size_class)) return p;
    return std::aligned_alloc(static_cast<size_t>(align), static_cast<size_t>(round_up(size_class)));
  }
  return std::aligned_alloc(static_cast<size_t>(align), static_cast<size_t>(round_up(want)));
}

void* Allocate(void*, uint64_t bytes, uint64_t alignment) {
  void* p = AllocateBlock(bytes, alignment);
  if (p != nullptr) CountAllocation(bytes);
  return p;
}

// The core passes the byte count it asked for, so the size class is known.
void Deallocate(void*, void* ptr, uint64_t bytes) {
  if (ptr != nullptr) g_bytes_in_use.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  if (ptr != nullptr && bytes >= LargeBlockCache::kMinBytes &&
      BlockCache().Give(ptr, LargeBlockCache::ClassOf(bytes)))
    return;
  std::free(ptr);
}

int32_t MemoryInfo(void*, GR_DeviceMemoryInfo* info, GR_StatusSink*) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  const int64_t total = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : -1;
  const int64_t avail = AvailableBytes();
  // Honour the reader's struct_size: only write fields it has.
  auto has = [info](size_t through) { return through <= info->struct_size; };
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, total_bytes))) info->total_bytes = total;
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, free_bytes))) info->free_bytes = avail;
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, bytes_in_use)))
    info->bytes_in_use = g_bytes_in_use.load(std::memory_order_relaxed);
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, peak_bytes_in_use)))
    info->peak_bytes_in_use = g_peak_bytes_in_use.load(std::memory_order_relaxed);
  // Nothing refuses below physical memory: that is the limit.
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, bytes_limit))) info->bytes_limit = total;
  return GR_OK;
}

// Execution on the CPU is synchronous: a stream or an event is nothing.
int32_t CreateStream(void*, void** stream_out, GR_StatusSink*) {
  *stream_out = nullptr;
  return GR_OK;
}
void DestroyStream(void*, void*) {}
int32_t SyncStream(void*, void*, GR_StatusSink*) { return GR_OK; }

int32_t Copy(void*, void*, void* dst, const void* src, uint64_t bytes, GR_StatusSink*) {
  if (bytes != 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
  return GR_OK;
}

int32_t CreateEvent(void*, void** event_out, GR_StatusSink*) {
  *event_out = nullptr;
  return GR_OK;
}
void DestroyEvent(void*, void*) {}
int32_t RecordEvent(void*, void*, void*, GR_StatusSink*) { return GR_OK; }
int32_t StreamWaitEvent(void*, void*, void*, GR_StatusSink*) { return GR_OK; }
int32_t SyncEvent(void*, void*, GR_StatusSink*) { return GR_OK; }
// Work is done when the call that enqueued it returns.
int32_t QueryEvent(void*, void*, GR_StatusSink*) { return GR_OK; }
int32_t HostCallback(void*, void*, GR_HostCallbackFn fn, void* arg, GR_StatusSink*) {
  fn(arg, GR_OK);
  return GR_OK;
}
int32_t StreamStatus(void*, void*, GR_StatusSink*) { return GR_OK; }

const GR_DeviceSpec kCpuDeviceSpec = {
    /*struct_size=*/sizeof(GR_DeviceSpec),
    /*device_type=*/"CPU",
    /*priority=*/50,
    /*flags=*/GR_DEVICE_HOST_MEMORY,
    /*backend_state=*/nullptr,
    /*device_count=*/&DeviceCount,
    /*create_device=*/&CreateDevice,
    /*destroy_device=*/&DestroyDevice,
    /*describe=*/&DescribeDevice,
    /*allocate=*/&Allocate,
    /*deallocate=*/&Deallocate,
    /*memory_info=*/&MemoryInfo,
    /*create_stream=*/&CreateStream,
    /*destroy_stream=*/&DestroyStream,
    /*sync_stream=*/&SyncStream,
    /*copy_host_to_device=*/&Copy,
    /*copy_device_to_host=*/&Copy,
    /*copy_device_to_device=*/&Copy,
    /*create_event=*/&CreateEvent,
    /*destroy_event=*/&DestroyEvent,
    /*record_event=*/&RecordEvent,
    /*stream_wait_event=*/&StreamWaitEvent,
    /*sync_event=*/&SyncEvent,
    /*query_event=*/&QueryEvent,
    /*host_callback=*/&HostCallback,
    /*stream_status=*/&StreamStatus,
};

}  // namespace

REGISTER_DEVICE_BACKEND(&kCpuDeviceSpec);

GRAPHRT_PLUGIN("cpu_device", "0.1.0")
