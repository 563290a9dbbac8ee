// A Coordinator, as TensorFlow's tf.train.Coordinator (tf_behaviours.md
// §15): threads that work together check ShouldStop(), any of them may
// RequestStop (optionally with the error that made it stop), and Join
// waits for all of them, giving them a grace period once a stop was
// requested, and reports the first error.
//
// std::thread has no timed join, so the Coordinator starts the threads it
// joins itself (Start): it then knows when each has finished, and a thread
// that throws is a stop request with that exception's message.
#ifndef GRAPHRT_CLIENT_COORDINATOR_H_
#define GRAPHRT_CLIENT_COORDINATOR_H_

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/core/status.h"

namespace graphrt {

class Coordinator {
 public:
  // Codes that stop without being an error (TF's clean_stop_exception_types;
  // default OutOfRange: the normal end of input).
  explicit Coordinator(std::vector<Code> clean_stop_codes = {Code::kOutOfRange});
  // Joins the threads still running (after requesting a stop).
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Sets the stop flag. A non-OK `error` whose code is not a clean-stop code
  // is recorded if it is the first one (later ones are ignored).
  void RequestStop(const Status& error = Status::OK());
  bool ShouldStop() const;
  // Waits until a stop is requested or `timeout` passes; true when stopped.
  bool WaitForStop(std::chrono::duration<double> timeout) const;
  // Clears the stop flag and the recorded error (threads are kept).
  void ClearStop();
  // The recorded error (OK when none): TF's raise_requested_exception.
  Status RequestedError() const;

  // Runs fn(this) on a new thread named `name`. An exception from fn is a
  // RequestStop with an Internal error naming the thread and the
  // exception's what() (a std::bad_alloc: ResourceExhausted).
  void Start(const std::string& name, std::function<void(Coordinator*)> fn);

  // Waits until every started thread has ended or a stop was requested; then
  // gives the threads `grace_period` to end. Returns the recorded error if
  // any; else, when threads are still running, Internal "Coordinator stopped
  // with threads still running: <names>" (OK with ignore_live_threads; they
  // are joined later, by the next Join or the destructor).
  Status Join(std::chrono::duration<double> grace_period = std::chrono::seconds(120),
              bool ignore_live_threads = false);

 private:
  struct Worker {
    std::string name;
    std::thread thread;
    bool done = false;
  };
  bool IsClean(Code code) const;

  const std::vector<Code> clean_stop_codes_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;  // stop requested or a thread ended
  bool stop_ = false;
  Status error_;
  std::list<Worker> workers_;  // a list: a Worker's address stays valid
};

// RAII: requests a stop on `coord` if the scope is left by an exception
// (TF's `with coord.stop_on_exception():`). A destructor cannot see the
// exception itself, so the error says only where it happened; code that
// can should catch it and call RequestStop with its message instead (as
// Coordinator::Start does).
class StopOnException {
 public:
  StopOnException(Coordinator* coord, std::string where)
      : coord_(coord), where_(std::move(where)), exceptions_(std::uncaught_exceptions()) {}
  ~StopOnException();
  StopOnException(const StopOnException&) = delete;
  StopOnException& operator=(const StopOnException&) = delete;

 private:
  Coordinator* coord_;
  std::string where_;
  int exceptions_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_COORDINATOR_H_
