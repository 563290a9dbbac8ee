// Cancellation callbacks by token: a step's (kernels that wait ask to be
// told when the step ends early) and a session's (Close reaches the steps
// that wait). The contract is GR_CoreApi.ctx_on_cancel's: a callback runs at
// most once, on the cancelling thread; Remove of a callback that is running
// waits until it has returned.
#ifndef GRAPHRT_CORE_SRC_CANCELLATION_H_
#define GRAPHRT_CORE_SRC_CANCELLATION_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace graphrt {

class CancellationRegistry {
 public:
  using Fn = void (*)(void*);

  // False (fn not kept) when cancelled already; else the token for Remove.
  bool Add(Fn fn, void* arg, int64_t* token) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return false;
    *token = next_token_++;
    callbacks_.emplace(*token, std::make_pair(fn, arg));
    return true;
  }

  // True when the callback had not run and never will; false when it ran
  // (after it has returned, if another thread is running it).
  bool Remove(int64_t token) {
    std::unique_lock<std::mutex> lock(mu_);
    if (callbacks_.erase(token) > 0) return true;
    // On the cancelling thread (a callback removing another's) there is
    // nothing to wait for: the one running is this thread's.
    if (cancelling_ && canceller_ != std::this_thread::get_id())
      done_cv_.wait(lock, [this] { return !cancelling_; });
    return false;
  }

  // Runs every callback once, in token order, each outside the lock, on
  // this thread. Later calls (and callbacks added later) do nothing. A
  // callback removed before its turn does not run.
  void Cancel() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    cancelling_ = true;
    canceller_ = std::this_thread::get_id();
    while (!callbacks_.empty()) {
      const auto [fn, arg] = callbacks_.begin()->second;
      callbacks_.erase(callbacks_.begin());
      lock.unlock();
      fn(arg);
      lock.lock();
    }
    cancelling_ = false;
    done_cv_.notify_all();
  }

  bool cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }

  // For a pooled step: forget the last step's registrations. No callback
  // may be running (the step has ended).
  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    callbacks_.clear();
    cancelled_ = false;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  bool cancelled_ = false;
  bool cancelling_ = false;
  std::thread::id canceller_;
  int64_t next_token_ = 0;
  std::map<int64_t, std::pair<Fn, void*>> callbacks_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_CANCELLATION_H_
