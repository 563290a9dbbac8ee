// The toy XPU device: what its backend (toy_device.cc) and its kernels
// (toy_kernels.cc) share. Internal to the plugin: the core sees only the
// GR_DeviceSpec functions and opaque device / stream / event pointers.
//
// Model: each XPU has its own memory, one big block of host address space
// carved by a first-fit allocator, which the core must treat as device memory
// (the spec has no GR_DEVICE_HOST_MEMORY flag). Each stream is a worker
// thread running a FIFO of commands (copies, kernels, event records and
// waits, host callbacks); every enqueue returns at once. A command that fails
// poisons its stream: later work on it is skipped and reports that error.
#ifndef GRAPHRT_EXAMPLES_TOY_DEVICE_H_
#define GRAPHRT_EXAMPLES_TOY_DEVICE_H_

#include <graphrt/c_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace toy {

// A GR_Code and its message; code GR_OK means success.
struct Error {
  int32_t code = GR_OK;
  std::string message;
  bool ok() const { return code == GR_OK; }
};

// Events: a record enqueues a marker; the event is done once every marker
// recorded so far has been reached. Shared by the handle and by the commands
// that record or wait on it, so destroying a handle with work pending is safe.
struct EventState {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;   // generation of the last record
  uint64_t completed = 0;  // highest generation reached
  Error error;             // the stream's status when `completed` was reached
};

struct Event {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

// The part of a stream that outlives it: deferred frees wait on `completed`.
struct StreamState {
  std::mutex mu;
  std::condition_variable cv;  // signalled when `completed` grows or work arrives
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  Error error;  // the first failure; sticky
  // Threads blocked on `cv`. Enqueues and completions signal only when
  // there are some: a futex wake per command would cost more than the
  // command on a busy stream.
  int waiters = 0;

  // cv.wait(lock, done), counted in `waiters`.
  template <typename Done>
  void Wait(std::unique_lock<std::mutex>& lock, Done done) {
    ++waiters;
    cv.wait(lock, done);
    --waiters;
  }
};

class Device;

class Stream {
 public:
  static constexpr uint32_t kMagic = 0x58505553;  // "XPUS": a kernel checks what it was handed
  // A command is the work of a copy or a kernel: it returns its error.
  using Work = std::function<Error()>;

  Stream(Device* device, int64_t delay_us);
  ~Stream();  // runs what is queued, then stops the worker
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device* device() const { return device_; }
  bool valid() const { return magic_ == kMagic; }
  const std::shared_ptr<StreamState>& state() const { return state_; }

  void EnqueueWork(Work work);
  void EnqueueRecord(const std::shared_ptr<EventState>& event);
  void EnqueueWait(const std::shared_ptr<EventState>& event);
  void EnqueueCallback(GR_HostCallbackFn fn, void* arg);
  // Waits for everything enqueued before the call; the stream's status.
  Error Sync();
  Error status() const;

 private:
  struct Command {
    enum Kind { kWork, kRecord, kWait, kCallback } kind = kWork;
    Work work;
    std::shared_ptr<EventState> event;
    uint64_t generation = 0;
    GR_HostCallbackFn fn = nullptr;
    void* arg = nullptr;
  };
  void Enqueue(Command c);
  void Run();
  void Execute(Command& c);

  uint32_t magic_ = kMagic;
  Device* device_;
  int64_t delay_us_;
  std::shared_ptr<StreamState> state_;
  std::deque<Command> queue_;  // guarded by state_->mu
  bool stop_ = false;          // guarded by state_->mu
  std::thread worker_;
};

// One device's memory: [base, base + limit) carved first-fit in 64-byte
// units. A freed block goes back only once the streams that existed at the
// free have passed the point they had reached (see Arena::Free).
class Arena {
 public:
  static constexpr uint64_t kUnit = 64;
  static constexpr uint64_t kMaxAlignment = uint64_t{1} << 20;

  Arena(char* base, uint64_t limit);
  void* Allocate(uint64_t bytes, uint64_t alignment);
  void Free(void* ptr);
  // Whether [p, p + bytes) lies inside this arena's address range.
  bool Contains(const void* p, uint64_t bytes) const;
  // Whether [p, p + bytes) lies inside one block handed out (or freed but
  // not yet reusable): what a copy may touch when it runs.
  bool IsLive(const void* p, uint64_t bytes);
  struct Stats {
    int64_t in_use, peak, limit;
  };
  Stats GetStats();
  // Blocks freed while stream work was pending; waits until they can be
  // reused (used when an allocation does not fit otherwise).
  bool WaitForPendingFrees();

 private:
  struct Pending {
    uint64_t offset, size;
    std::vector<std::pair<std::shared_ptr<StreamState>, uint64_t>> waits;  // (stream, enqueued at free)
  };
  void* TryAllocate(uint64_t size, uint64_t alignment);
  void ReclaimLocked();
  void ReturnLocked(uint64_t offset, uint64_t size);

  char* const base_;
  const uint64_t limit_;
  std::mutex mu_;
  std::map<uint64_t, uint64_t> free_;              // offset -> size, coalesced
  std::map<uint64_t, uint64_t> live_;              // offset -> size handed out
  std::deque<Pending> pending_;                    // in the order freed
  int64_t in_use_ = 0, peak_ = 0;                  // live + pending bytes
};

class Device {
 public:
  Device(int ordinal, char* base, uint64_t limit, int64_t delay_us);
  ~Device();
  int ordinal() const { return ordinal_; }
  Arena& arena() { return arena_; }
  int64_t delay_us() const { return delay_us_; }
  const std::string& description() const { return description_; }
  std::string name() const { return "XPU:" + std::to_string(ordinal_); }

 private:
  int ordinal_;
  char* base_;
  uint64_t limit_;
  int64_t delay_us_;
  Arena arena_;
  std::string description_;
};

// Every live stream of every XPU: a free waits for all of them, since a
// device-to-device copy on one XPU's stream reads or writes another's memory.
std::vector<std::pair<std::shared_ptr<StreamState>, uint64_t>> SnapshotStreams();
// The XPU whose arena holds [p, p + bytes), or nullptr.
Device* OwnerOf(const void* p, uint64_t bytes);
// True on a stream's worker thread (which must never wait for streams).
bool OnWorkerThread();

}  // namespace toy

#endif  // GRAPHRT_EXAMPLES_TOY_DEVICE_H_
