// The toy XPU device backend (see toy_device.h for the model and README.md
// for its environment variables): two devices, XPU:0 and XPU:1.
#include "toy_device.h"

#include <graphrt/sdk/sdk.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

namespace toy {
namespace {

using graphrt::sdk::Api;

constexpr int32_t kDeviceCount = 2;
constexpr uint64_t kDefaultLimit = uint64_t{1} << 30;  // 1 GiB of address space each, touched lazily
constexpr uint64_t kMaxLimit = uint64_t{64} << 30;
constexpr int64_t kMaxDelayUs = 10 * 1000 * 1000;
constexpr const char* kLimitEnv = "GRAPHRT_TOY_XPU_MEMORY_LIMIT";
constexpr const char* kDelayEnv = "GRAPHRT_TOY_XPU_COMMAND_DELAY_US";

thread_local bool t_on_worker = false;

// What the backend knows across devices: the devices (for pointer lookups)
// and the live streams (for deferred frees).
struct Registry {
  std::mutex mu;
  std::vector<Device*> devices;
  std::set<std::shared_ptr<StreamState>> streams;
};
Registry& GetRegistry() {
  static Registry* r = new Registry();  // outlives devices destroyed at exit
  return *r;
}

std::string Range(const void* p, uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "[%p, +%llu)", p, static_cast<unsigned long long>(bytes));
  return buf;
}

}  // namespace

bool OnWorkerThread() { return t_on_worker; }

std::vector<std::pair<std::shared_ptr<StreamState>, uint64_t>> SnapshotStreams() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::pair<std::shared_ptr<StreamState>, uint64_t>> out;
  for (const auto& s : r.streams) {
    std::lock_guard<std::mutex> l(s->mu);
    if (s->completed < s->enqueued) out.emplace_back(s, s->enqueued);
  }
  return out;
}

Device* OwnerOf(const void* p, uint64_t bytes) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (Device* d : r.devices)
    if (d->arena().Contains(p, bytes)) return d;
  return nullptr;
}

// ------------------------------------------------------------------ streams

Stream::Stream(Device* device, int64_t delay_us)
    : device_(device), delay_us_(delay_us), state_(std::make_shared<StreamState>()) {
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.streams.insert(state_);
  }
  worker_ = std::thread([this] { Run(); });
}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    stop_ = true;
  }
  state_->cv.notify_all();
  worker_.join();
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.streams.erase(state_);
  magic_ = 0;
}

void Stream::Enqueue(Command c) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    queue_.push_back(std::move(c));
    ++state_->enqueued;
    wake = state_->waiters > 0;
  }
  if (wake) state_->cv.notify_all();
}

void Stream::EnqueueWork(Work work) {
  Command c;
  c.kind = Command::kWork;
  c.work = std::move(work);
  Enqueue(std::move(c));
}

void Stream::EnqueueRecord(const std::shared_ptr<EventState>& event) {
  Command c;
  c.kind = Command::kRecord;
  c.event = event;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    c.generation = ++event->recorded;
  }
  Enqueue(std::move(c));
}

void Stream::EnqueueWait(const std::shared_ptr<EventState>& event) {
  Command c;
  c.kind = Command::kWait;
  c.event = event;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    c.generation = event->recorded;  // what was recorded before this call
  }
  Enqueue(std::move(c));
}

void Stream::EnqueueCallback(GR_HostCallbackFn fn, void* arg) {
  Command c;
  c.kind = Command::kCallback;
  c.fn = fn;
  c.arg = arg;
  Enqueue(std::move(c));
}

Error Stream::Sync() {
  std::unique_lock<std::mutex> lock(state_->mu);
  const uint64_t target = state_->enqueued;
  state_->Wait(lock, [&] { return state_->completed >= target; });
  return state_->error;
}

Error Stream::status() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->error;
}

void Stream::Run() {
  t_on_worker = true;
  for (;;) {
    Command c;
    {
      std::unique_lock<std::mutex> lock(state_->mu);
      state_->Wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything ran
      c = std::move(queue_.front());
      queue_.pop_front();
    }
    Execute(c);
    bool wake;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      ++state_->completed;
      wake = state_->waiters > 0;
    }
    if (wake) state_->cv.notify_all();
  }
}

void Stream::Execute(Command& c) {
  switch (c.kind) {
    case Command::kWork: {
      if (!status().ok()) return;  // a failed stream runs no more work
      // The optional delay makes the device slow enough that a copy or
      // kernel that does not order on its stream reads stale data in tests.
      if (delay_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
      Error e = c.work();
      if (!e.ok()) {
        std::lock_guard<std::mutex> lock(state_->mu);
        if (state_->error.ok()) state_->error = std::move(e);
      }
      return;
    }
    case Command::kRecord: {
      const Error s = status();
      {
        std::lock_guard<std::mutex> lock(c.event->mu);
        if (c.generation > c.event->completed) {
          c.event->completed = c.generation;
          c.event->error = s;
        }
      }
      c.event->cv.notify_all();
      return;
    }
    case Command::kWait: {
      Error e;
      {
        std::unique_lock<std::mutex> lock(c.event->mu);
        c.event->cv.wait(lock, [&] { return c.event->completed >= c.generation; });
        e = c.event->error;
      }
      // Work after the wait depends on the failed work: it must not run.
      if (!e.ok()) {
        std::lock_guard<std::mutex> lock(state_->mu);
        if (state_->error.ok())
          state_->error = Error{e.code, device_->name() + ": waited on an event of failed work: " + e.message};
      }
      return;
    }
    case Command::kCallback:
      c.fn(c.arg, status().code);
      return;
  }
}

// -------------------------------------------------------------------- arena

// A first-fit allocator over one block: a toy device's memory manager kept
// in this file so that the example stays self-contained for a vendor to
// copy; a real device brings its driver's allocator.
Arena::Arena(char* base, uint64_t limit) : base_(base), limit_(limit) {
  if (limit_ >= kUnit) free_[0] = limit_ & ~(kUnit - 1);
}

bool Arena::Contains(const void* p, uint64_t bytes) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(base_);
  return a >= b && a - b <= limit_ && bytes <= limit_ - (a - b);
}

void* Arena::Allocate(uint64_t bytes, uint64_t alignment) {
  if (alignment == 0) alignment = kUnit;
  if ((alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) return nullptr;
  alignment = std::max(alignment, kUnit);
  if (bytes > limit_) return nullptr;
  // Zero bytes still gets a unique block, as from malloc.
  const uint64_t size = (std::max<uint64_t>(bytes, 1) + kUnit - 1) & ~(kUnit - 1);
  if (void* p = TryAllocate(size, alignment)) return p;
  // Freed blocks may be waiting for stream work: wait for it and try again
  // (never on a worker thread, which would wait for itself).
  if (!OnWorkerThread() && WaitForPendingFrees()) return TryAllocate(size, alignment);
  return nullptr;
}

void* Arena::TryAllocate(uint64_t size, uint64_t alignment) {
  std::lock_guard<std::mutex> lock(mu_);
  ReclaimLocked();
  const uintptr_t base = reinterpret_cast<uintptr_t>(base_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t off = it->first, len = it->second;
    const uint64_t start = ((base + off + alignment - 1) & ~(alignment - 1)) - base;
    if (start - off > len || size > len - (start - off)) continue;
    free_.erase(it);
    if (start > off) free_[off] = start - off;
    if (start + size < off + len) free_[start + size] = off + len - (start + size);
    live_[start] = size;
    in_use_ += static_cast<int64_t>(size);
    peak_ = std::max(peak_, in_use_);
    return base_ + start;
  }
  return nullptr;
}

// Deferred frees. The core frees a tensor as soon as its last host-side
// reference goes, which for an asynchronous device can be while a kernel or
// copy enqueued earlier still reads or writes it. The block is therefore
// not reusable until every stream that existed at the free (on any XPU: a
// device-to-device copy touches two) has run everything enqueued on it
// before the free. This costs a snapshot of the streams per free and no
// synchronisation in the common case (idle streams are skipped), and,
// unlike recording an event per free, needs no stream of the core's
// choosing. Until then the bytes count as in use.
void Arena::Free(void* ptr) {
  if (ptr == nullptr) return;
  auto waits = SnapshotStreams();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(static_cast<uint64_t>(static_cast<char*>(ptr) - base_));
  if (it == live_.end()) {
    Api().log(GR_LOG_ERROR, __FILE__, __LINE__, "toy XPU: deallocate of a pointer this device did not allocate");
    return;
  }
  Pending p{it->first, it->second, std::move(waits)};
  live_.erase(it);
  pending_.push_back(std::move(p));
  ReclaimLocked();
}

// Each free waits, on every stream, for at least what the frees before it
// waited for (a stream idle at a later free has passed every earlier
// target), so the first free that is not reusable yet ends the scan: a
// free costs O(1), not O(pending), while a stream lags behind.
void Arena::ReclaimLocked() {
  while (!pending_.empty()) {
    const Pending& p = pending_.front();
    for (const auto& [stream, target] : p.waits) {
      std::lock_guard<std::mutex> l(stream->mu);
      if (stream->completed < target) return;
    }
    ReturnLocked(p.offset, p.size);
    in_use_ -= static_cast<int64_t>(p.size);
    pending_.pop_front();
  }
}

void Arena::ReturnLocked(uint64_t offset, uint64_t size) {
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + size) {  // merge with the block after
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {  // merge with the block before
      prev->second += size;
      return;
    }
  }
  free_[offset] = size;
}

bool Arena::WaitForPendingFrees() {
  std::vector<std::pair<std::shared_ptr<StreamState>, uint64_t>> waits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Pending& p : pending_) waits.insert(waits.end(), p.waits.begin(), p.waits.end());
  }
  if (waits.empty()) return false;
  for (const auto& wait : waits) {  // (C++17 lambdas cannot capture structured bindings)
    StreamState& stream = *wait.first;
    const uint64_t target = wait.second;
    std::unique_lock<std::mutex> l(stream.mu);
    stream.Wait(l, [&] { return stream.completed >= target; });
  }
  return true;
}

bool Arena::IsLive(const void* p, uint64_t bytes) {
  if (!Contains(p, bytes)) return false;
  const uint64_t off = static_cast<uint64_t>(static_cast<const char*>(p) - base_);
  auto inside = [&](uint64_t start, uint64_t size) { return off >= start && bytes <= size && off - start <= size - bytes; };
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(off);
  if (it != live_.begin() && inside(std::prev(it)->first, std::prev(it)->second)) return true;
  for (const Pending& q : pending_)
    if (inside(q.offset, q.size)) return true;
  return false;
}

Arena::Stats Arena::GetStats() {
  std::lock_guard<std::mutex> lock(mu_);
  ReclaimLocked();
  return Stats{in_use_, peak_, static_cast<int64_t>(limit_)};
}

// ------------------------------------------------------------------- device

Device::Device(int ordinal, char* base, uint64_t limit, int64_t delay_us)
    : ordinal_(ordinal), base_(base), limit_(limit), delay_us_(delay_us), arena_(base, limit) {
  description_ = "toy asynchronous device " + name() + " (graphrt example): " + std::to_string(limit >> 20) +
                 " MiB of its own memory, one worker thread per stream";
  if (delay_us_ > 0) description_ += ", " + std::to_string(delay_us_) + " us per command";
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.devices.push_back(this);
}

Device::~Device() {
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.devices.erase(std::remove(r.devices.begin(), r.devices.end(), this), r.devices.end());
  }
  munmap(base_, limit_);
}

// ------------------------------------------------------- the GR_DeviceSpec

namespace {

int32_t Fail(GR_StatusSink* status, int32_t code, const std::string& msg) {
  Api().status_set(status, code, msg.c_str());
  return code;
}

// A non-negative integer with an optional K, M or G (binary) suffix.
bool ParseBytes(const char* s, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || errno != 0 || *s == '-') return false;
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, ++end;
  else if (*end == 'M' || *end == 'm') shift = 20, ++end;
  else if (*end == 'G' || *end == 'g') shift = 30, ++end;
  if (*end != '\0' || v > (kMaxLimit >> shift)) return false;
  *out = static_cast<uint64_t>(v) << shift;
  return true;
}

int32_t ReadDelay(int64_t* delay_us, GR_StatusSink* status) {
  *delay_us = 0;
  const char* env = std::getenv(kDelayEnv);
  if (env == nullptr || *env == '\0') return GR_OK;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(env, &end, 10);
  if (end == env || *end != '\0' || errno != 0 || v < 0 || v > kMaxDelayUs)
    return Fail(status, GR_INVALID_ARGUMENT,
                std::string(kDelayEnv) + "='" + env + "' is not a number of microseconds in [0, 10000000]");
  *delay_us = v;
  return GR_OK;
}

int32_t DeviceCount(void*) { return kDeviceCount; }

int32_t CreateDevice(void*, int32_t ordinal, void** device_out, GR_StatusSink* status) {
  if (ordinal < 0 || ordinal >= kDeviceCount)
    return Fail(status, GR_INVALID_ARGUMENT, "XPU ordinal " + std::to_string(ordinal) + " does not exist (XPU:0 and XPU:1 do)");
  uint64_t limit = kDefaultLimit;
  if (const char* env = std::getenv(kLimitEnv); env != nullptr && *env != '\0') {
    if (!ParseBytes(env, &limit) || limit < Arena::kUnit)
      return Fail(status, GR_INVALID_ARGUMENT,
                  std::string(kLimitEnv) + "='" + env + "' is not a byte count from 64 to 64G (digits, optional K/M/G)");
  }
  int64_t delay = 0;
  if (int32_t code = ReadDelay(&delay, status); code != GR_OK) return code;
  // Address space only: pages are backed when first touched.
  void* base = mmap(nullptr, limit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return Fail(status, GR_RESOURCE_EXHAUSTED,
                "XPU:" + std::to_string(ordinal) + ": cannot reserve " + std::to_string(limit) + " bytes of memory: " +
                    std::strerror(errno));
  *device_out = new Device(ordinal, static_cast<char*>(base), limit, delay);
  return GR_OK;
}

void DestroyDevice(void* device) { delete static_cast<Device*>(device); }

const char* Describe(void* device) { return static_cast<Device*>(device)->description().c_str(); }

void* Allocate(void* device, uint64_t bytes, uint64_t alignment) {
  return static_cast<Device*>(device)->arena().Allocate(bytes, alignment);
}

void Deallocate(void* device, void* ptr, uint64_t) { static_cast<Device*>(device)->arena().Free(ptr); }

int32_t MemoryInfo(void* device, GR_DeviceMemoryInfo* info, GR_StatusSink*) {
  const Arena::Stats s = static_cast<Device*>(device)->arena().GetStats();
  // Only the fields the reader's struct has.
  auto has = [info](size_t through) { return through <= info->struct_size; };
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, total_bytes))) info->total_bytes = s.limit;
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, free_bytes))) info->free_bytes = s.limit - s.in_use;
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, bytes_in_use))) info->bytes_in_use = s.in_use;
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, peak_bytes_in_use))) info->peak_bytes_in_use = s.peak;
  if (has(GR_SIZE_THROUGH(GR_DeviceMemoryInfo, bytes_limit))) info->bytes_limit = s.limit;
  return GR_OK;
}

// The stream argument of every stream function, or nullptr after saying why.
Stream* StreamArg(void* device, void* stream, const char* fn, GR_StatusSink* status) {
  auto* d = static_cast<Device*>(device);
  auto* s = static_cast<Stream*>(stream);
  if (s == nullptr || !s->valid() || s->device() != d) {
    Fail(status, GR_INVALID_ARGUMENT, std::string(fn) + " on " + d->name() + ": not a stream of this device");
    return nullptr;
  }
  return s;
}

int32_t CreateStream(void* device, void** stream_out, GR_StatusSink* status) {
  int64_t delay = static_cast<Device*>(device)->delay_us();
  // Read again per stream, so that a test can slow the streams it makes.
  if (std::getenv(kDelayEnv) != nullptr)
    if (int32_t code = ReadDelay(&delay, status); code != GR_OK) return code;
  *stream_out = new Stream(static_cast<Device*>(device), delay);
  return GR_OK;
}

void DestroyStream(void*, void* stream) { delete static_cast<Stream*>(stream); }

int32_t ReportStream(const Error& e, GR_StatusSink* status) {
  return e.ok() ? GR_OK : Fail(status, e.code, e.message);
}

int32_t SyncStream(void* device, void* stream, GR_StatusSink* status) {
  Stream* s = StreamArg(device, stream, "sync_stream", status);
  return s ? ReportStream(s->Sync(), status) : GR_INVALID_ARGUMENT;
}

int32_t StreamStatus(void* device, void* stream, GR_StatusSink* status) {
  Stream* s = StreamArg(device, stream, "stream_status", status);
  return s ? ReportStream(s->status(), status) : GR_INVALID_ARGUMENT;
}

// A copy's work: checks, when it runs, that both ranges are still inside
// blocks handed out (a device reports a bad address asynchronously, as a
// failed stream), then copies.
Stream::Work CopyWork(Device* dst_dev, void* dst, Device* src_dev, const void* src, uint64_t bytes) {
  return [=]() -> Error {
    if (dst_dev && !dst_dev->arena().IsLive(dst, bytes))
      return Error{GR_INTERNAL, dst_dev->name() + ": illegal address: copy destination " + Range(dst, bytes) +
                                    " is not inside one allocated block"};
    if (src_dev && !src_dev->arena().IsLive(src, bytes))
      return Error{GR_INTERNAL, src_dev->name() + ": illegal address: copy source " + Range(src, bytes) +
                                    " is not inside one allocated block"};
    std::memcpy(dst, src, bytes);
    return Error{};
  };
}

// Enqueues a copy after checking where its sides live: on an XPU
// (`*_device`) or the host (anything outside every XPU's arena). A host
// side must stay valid until the stream has run the copy. Between XPUs
// (XPU:0 -> XPU:1 or within one) one side must be this device's.
int32_t EnqueueCopy(const char* fn, void* device, void* stream, void* dst, const void* src, uint64_t bytes,
                    bool dst_device, bool src_device, GR_StatusSink* status) {
  Stream* s = StreamArg(device, stream, fn, status);
  if (s == nullptr) return GR_INVALID_ARGUMENT;
  auto* d = static_cast<Device*>(device);
  if (bytes == 0) {  // nothing to copy, but still ordered on the stream
    s->EnqueueWork([] { return Error{}; });
    return GR_OK;
  }
  auto bad = [&](const char* side, const void* p, const char* why) {
    return Fail(status, GR_INVALID_ARGUMENT,
                std::string(fn) + " on " + d->name() + ": " + side + " " + Range(p, bytes) + " " + why);
  };
  Device* dst_dev = dst_device ? OwnerOf(dst, bytes) : nullptr;
  Device* src_dev = src_device ? OwnerOf(src, bytes) : nullptr;
  if (dst_device && src_device) {
    if (dst_dev == nullptr) return bad("destination", dst, "is not XPU memory");
    if (src_dev == nullptr) return bad("source", src, "is not XPU memory");
    if (dst_dev != d && src_dev != d) return bad("source", src, "and the destination are another XPU's memory");
  } else {
    if (dst_device && dst_dev != d) return bad("destination", dst, "is not in its memory");
    if (src_device && src_dev != d) return bad("source", src, "is not in its memory");
    const void* host = dst_device ? src : dst;
    if (host == nullptr || OwnerOf(host, 1) != nullptr)
      return bad(dst_device ? "source" : "destination", host, "is not host memory");
  }
  s->EnqueueWork(CopyWork(dst_dev, dst, src_dev, src, bytes));
  return GR_OK;
}

int32_t CopyHostToDevice(void* device, void* stream, void* dst, const void* src, uint64_t bytes,
                         GR_StatusSink* status) {
  return EnqueueCopy("copy_host_to_device", device, stream, dst, src, bytes, true, false, status);
}

int32_t CopyDeviceToHost(void* device, void* stream, void* dst, const void* src, uint64_t bytes,
                         GR_StatusSink* status) {
  return EnqueueCopy("copy_device_to_host", device, stream, dst, src, bytes, false, true, status);
}

int32_t CopyDeviceToDevice(void* device, void* stream, void* dst, const void* src, uint64_t bytes,
                           GR_StatusSink* status) {
  return EnqueueCopy("copy_device_to_device", device, stream, dst, src, bytes, true, true, status);
}

std::shared_ptr<EventState>& EventArg(void* event) { return static_cast<Event*>(event)->state; }

int32_t CreateEvent(void*, void** event_out, GR_StatusSink*) {
  *event_out = new Event;
  return GR_OK;
}

void DestroyEvent(void*, void* event) { delete static_cast<Event*>(event); }

int32_t RecordEvent(void* device, void* stream, void* event, GR_StatusSink* status) {
  Stream* s = StreamArg(device, stream, "record_event", status);
  if (s == nullptr) return GR_INVALID_ARGUMENT;
  if (event == nullptr) return Fail(status, GR_INVALID_ARGUMENT, "record_event: null event");
  s->EnqueueRecord(EventArg(event));
  return GR_OK;
}

int32_t StreamWaitEvent(void* device, void* stream, void* event, GR_StatusSink* status) {
  Stream* s = StreamArg(device, stream, "stream_wait_event", status);
  if (s == nullptr) return GR_INVALID_ARGUMENT;
  if (event == nullptr) return Fail(status, GR_INVALID_ARGUMENT, "stream_wait_event: null event");
  s->EnqueueWait(EventArg(event));
  return GR_OK;
}

// An event never recorded counts as done, as in CUDA.
int32_t SyncEvent(void*, void* event, GR_StatusSink* status) {
  if (event == nullptr) return Fail(status, GR_INVALID_ARGUMENT, "sync_event: null event");
  EventState& e = *EventArg(event);
  std::unique_lock<std::mutex> lock(e.mu);
  const uint64_t target = e.recorded;
  e.cv.wait(lock, [&] { return e.completed >= target; });
  return e.error.ok() ? GR_OK : Fail(status, e.error.code, e.error.message);
}

int32_t QueryEvent(void*, void* event, GR_StatusSink* status) {
  if (event == nullptr) return Fail(status, GR_INVALID_ARGUMENT, "query_event: null event");
  EventState& e = *EventArg(event);
  std::lock_guard<std::mutex> lock(e.mu);
  if (e.completed < e.recorded) return GR_UNAVAILABLE;  // pending: not an error, nothing recorded
  return e.error.ok() ? GR_OK : Fail(status, e.error.code, e.error.message);
}

int32_t HostCallback(void* device, void* stream, GR_HostCallbackFn fn, void* arg, GR_StatusSink* status) {
  Stream* s = StreamArg(device, stream, "host_callback", status);
  if (s == nullptr) return GR_INVALID_ARGUMENT;
  if (fn == nullptr) return Fail(status, GR_INVALID_ARGUMENT, "host_callback: null function");
  s->EnqueueCallback(fn, arg);
  return GR_OK;
}

// Priority below the CPU's (50): nodes land on an XPU only when pinned there.
const GR_DeviceSpec kToyDeviceSpec = [] {
  GR_DeviceSpec s;
  std::memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.device_type = "XPU";
  s.priority = 10;
  s.flags = 0;  // its own memory: the core must copy to and from it
  s.device_count = &DeviceCount;
  s.create_device = &CreateDevice;
  s.destroy_device = &DestroyDevice;
  s.describe = &Describe;
  s.allocate = &Allocate;
  s.deallocate = &Deallocate;
  s.memory_info = &MemoryInfo;
  s.create_stream = &CreateStream;
  s.destroy_stream = &DestroyStream;
  s.sync_stream = &SyncStream;
  s.copy_host_to_device = &CopyHostToDevice;
  s.copy_device_to_host = &CopyDeviceToHost;
  s.copy_device_to_device = &CopyDeviceToDevice;
  s.create_event = &CreateEvent;
  s.destroy_event = &DestroyEvent;
  s.record_event = &RecordEvent;
  s.stream_wait_event = &StreamWaitEvent;
  s.sync_event = &SyncEvent;
  s.query_event = &QueryEvent;
  s.host_callback = &HostCallback;
  s.stream_status = &StreamStatus;
  return s;
}();

}  // namespace
}  // namespace toy

REGISTER_DEVICE_BACKEND(&toy::kToyDeviceSpec);

GRAPHRT_PLUGIN("toy_device", "1.0.0")
