// tf.train.Coordinator's protocol (tf_behaviours.md §15) over std::thread.
#include "graphrt/client/coordinator.h"

#include <algorithm>
#include <new>

namespace graphrt {

Coordinator::Coordinator(std::vector<Code> clean_stop_codes) : clean_stop_codes_(std::move(clean_stop_codes)) {}

Coordinator::~Coordinator() {
  RequestStop();
  // Threads ignored by an earlier Join (or never joined) are joined here:
  // they hold a pointer to this object.
  std::list<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
  }
  for (Worker& w : workers)
    if (w.thread.joinable()) w.thread.join();
}

bool Coordinator::IsClean(Code code) const {
  return std::find(clean_stop_codes_.begin(), clean_stop_codes_.end(), code) != clean_stop_codes_.end();
}

void Coordinator::RequestStop(const Status& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (!error.ok() && !IsClean(error.code()) && error_.ok()) error_ = error;
  }
  cv_.notify_all();
}

bool Coordinator::ShouldStop() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

bool Coordinator::WaitForStop(std::chrono::duration<double> timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return stop_; });
}

void Coordinator::ClearStop() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = false;
  error_ = Status::OK();
}

Status Coordinator::RequestedError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void Coordinator::Start(const std::string& name, std::function<void(Coordinator*)> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  workers_.emplace_back();
  Worker* w = &workers_.back();
  w->name = name;
  w->thread = std::thread([this, w, fn = std::move(fn)] {
    try {
      fn(this);
    } catch (const std::bad_alloc&) {
      RequestStop(errors::ResourceExhausted("thread ", w->name, ": out of memory"));
    } catch (const std::exception& e) {
      RequestStop(errors::Internal("thread ", w->name, ": ", e.what()));
    } catch (...) {
      RequestStop(errors::Internal("thread ", w->name, ": an exception that is not a std::exception"));
    }
    {
      std::lock_guard<std::mutex> inner(mu_);
      w->done = true;
    }
    cv_.notify_all();
  });
}

Status Coordinator::Join(std::chrono::duration<double> grace_period, bool ignore_live_threads) {
  std::unique_lock<std::mutex> lock(mu_);
  auto all_done = [this] {
    return std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.done; });
  };
  cv_.wait(lock, [&] { return stop_ || all_done(); });
  cv_.wait_for(lock, grace_period, all_done);
  // Join the finished threads; keep the others for a later Join.
  std::vector<std::thread> finished;
  std::string alive;
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done) {
      finished.push_back(std::move(it->thread));
      it = workers_.erase(it);
    } else {
      alive += (alive.empty() ? "" : ", ") + it->name;
      ++it;
    }
  }
  const Status error = error_;
  lock.unlock();
  for (std::thread& t : finished) t.join();
  if (!error.ok()) return error;
  if (!alive.empty() && !ignore_live_threads)
    return errors::Internal("Coordinator stopped with threads still running: ", alive);
  return Status::OK();
}

StopOnException::~StopOnException() {
  if (std::uncaught_exceptions() > exceptions_)
    coord_->RequestStop(errors::Internal(where_, ": left by an exception"));
}

}  // namespace graphrt
