// A host callback that holds a device stream until the test opens it, so
// that work enqueued behind it is pending for as long as the test needs
// (deterministic, unlike racing a slow device). A synchronous backend runs
// host callbacks on the enqueuing thread at once: the gate then holds
// nothing and says so (ran_inline()).
#ifndef GRAPHRT_TESTS_DEVICE_GATE_H_
#define GRAPHRT_TESTS_DEVICE_GATE_H_

#include <graphrt/c_api.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace graphrt {
namespace testing {

class StreamGate {
 public:
  // Pass with `this` to a host_callback function.
  static void Callback(void* arg, int32_t) { static_cast<StreamGate*>(arg)->Hold(); }

  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool ran_inline() const {
    std::lock_guard<std::mutex> lock(mu_);
    return inline_;
  }
  // The stream must have passed the gate (synced) before it is destroyed.
  ~StreamGate() { Open(); }

 private:
  void Hold() {
    std::unique_lock<std::mutex> lock(mu_);
    if (std::this_thread::get_id() == owner_) {
      inline_ = true;
      return;
    }
    cv_.wait(lock, [&] { return open_; });
  }

  const std::thread::id owner_ = std::this_thread::get_id();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  bool inline_ = false;
};

}  // namespace testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_DEVICE_GATE_H_
