#include "worker.h"

#include <condition_variable>
#include <deque>
#include <limits>
#include <set>

#include "graphrt/core/device.h"
#include "graphrt/core/runtime.h"

namespace graphrt {
namespace distributed {

// One step's rendezvous on this worker: values its partitions send wait
// here until a local _Recv or a peer's RecvTensor takes them; a _Recv of a
// value another task sends pulls it from that task with RecvTensor.
class StepRendezvous final : public Rendezvous, public std::enable_shared_from_this<StepRendezvous> {
 public:
  StepRendezvous(int64_t step_id, std::string task, std::shared_ptr<WorkerCache> workers)
      : step_id_(step_id), task_(std::move(task)), workers_(std::move(workers)) {}

  void set_deadline(int64_t deadline_nanos) { deadline_nanos_.store(deadline_nanos); }

  Status Send(const ParsedKey& key, const Tensor& value, bool is_dead) override {
    return local_.Send(key, value, is_dead);
  }

  void RecvAsync(const ParsedKey& key, DoneCallback done) override {
    std::string src_task;
    if (!TaskOfDevice(key.src_device, &src_task).ok() || src_task == task_) {
      local_.RecvAsync(key, std::move(done));
      return;
    }
    RecvRemote(key, src_task, std::move(done));
  }

  // A value sent on this task (RecvTensor, RunGraph's fetches).
  void RecvLocal(const ParsedKey& key, DoneCallback done) { local_.RecvAsync(key, std::move(done)); }

  void StartAbort(const Status& status) override {
    std::vector<std::shared_ptr<grpc::ClientContext>> calls;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (aborted_.ok()) aborted_ = status;
      for (auto& c : calls_) calls.push_back(c);
    }
    local_.StartAbort(status);
    for (auto& c : calls) c->TryCancel();
  }

 private:
  void RecvRemote(const ParsedKey& key, const std::string& src_task, DoneCallback done) {
    tensorflow::WorkerService::Stub* stub;
    Status s = workers_->Stub(src_task, &stub);
    if (!s.ok()) {
      done(s, Tensor(), false);
      return;
    }
    struct Call {
      std::shared_ptr<grpc::ClientContext> ctx = std::make_shared<grpc::ClientContext>();
      proto::RecvTensorRequest req;
      proto::RecvTensorResponse resp;
    };
    auto call = std::make_shared<Call>();
    call->req.set_step_id(step_id_);
    call->req.set_rendezvous_key(key.full_key);
    const int64_t deadline = deadline_nanos_.load();
    if (deadline > 0) {
      const int64_t left_ms = std::max<int64_t>(1, (deadline - NowSteadyNanos()) / 1000000);
      SetDeadline(call->ctx.get(), left_ms);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!aborted_.ok()) {
        Status aborted = aborted_;
        done(aborted, Tensor(), false);
        return;
      }
      calls_.insert(call->ctx);
    }
    auto self = shared_from_this();
    stub->async()->RecvTensor(
        call->ctx.get(), &call->req, &call->resp,
        [self, call, src_task, done = std::move(done)](grpc::Status rpc) {
          {
            std::lock_guard<std::mutex> lock(self->mu_);
            self->calls_.erase(call->ctx);
          }
          if (!rpc.ok()) {
            Status aborted;
            {
              std::lock_guard<std::mutex> lock(self->mu_);
              aborted = self->aborted_;
            }
            // A call this step cancelled reports why the step ended.
            done(!aborted.ok() && rpc.error_code() == grpc::StatusCode::CANCELLED
                     ? aborted
                     : CallError(rpc, "RecvTensor of '" + call->req.rendezvous_key() + "'", src_task),
                 Tensor(), false);
            return;
          }
          if (call->resp.is_dead()) {
            done(Status::OK(), Tensor(), true);
            return;
          }
          Tensor value;
          Status parsed = Tensor::FromProto(call->resp.tensor(), &value);
          if (!parsed.ok())
            parsed = parsed.WithContext("RecvTensor from " + src_task + " of '" + call->req.rendezvous_key() + "'");
          done(parsed, value, false);
        });
  }

  const int64_t step_id_;
  const std::string task_;
  const std::shared_ptr<WorkerCache> workers_;
  std::atomic<int64_t> deadline_nanos_{0};
  LocalRendezvous local_;
  std::mutex mu_;
  Status aborted_;
  std::set<std::shared_ptr<grpc::ClientContext>> calls_;
};

namespace {

// Waits for a RecvAsync callback; the wait ends early, aborting the step,
// when `ctx`'s call is cancelled or the worker shuts down.
struct RecvWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status status;
  Tensor value;
  bool is_dead = false;
};

Rendezvous::DoneCallback Notify(const std::shared_ptr<RecvWait>& w) {
  return [w](const Status& s, const Tensor& v, bool dead) {
    std::lock_guard<std::mutex> lock(w->mu);
    w->status = s;
    w->value = v;
    w->is_dead = dead;
    w->done = true;
    w->cv.notify_all();
  };
}

grpc::Status Reply(const Status& s) { return ToGrpcStatus(s); }

}  // namespace

Worker::Worker(std::string task, const proto::ConfigProto& config, std::shared_ptr<WorkerCache> workers,
               WorkerLimits limits)
    : task_(std::move(task)), config_(config), workers_(std::move(workers)), limits_(limits) {
  std::vector<Device*> local;
  const auto& counts = config.device_count();
  if (Runtime::Global().devices().GetDevices(std::map<std::string, int>(counts.begin(), counts.end()), &local).ok()) {
    for (Device* d : local) {
      proto::DeviceAttributes a;
      a.set_name(task_ + "/device:" + d->type() + ":" + std::to_string(d->ordinal()));
      a.set_device_type(d->type());
      int64_t total = 0, free = 0;
      if (d->MemoryInfo(&total, &free).ok() && total > 0) a.set_memory_limit(total);
      a.set_incarnation(DeviceIncarnation(a.name()));
      a.set_physical_device_desc(d->description());
      devices_.push_back(std::move(a));
    }
  }
  if (limits_.step_idle_seconds > 0 || limits_.session_idle_seconds > 0) reaper_ = std::thread([this] { ReapIdle(); });
}

void Worker::ReapIdle() {
  auto seconds = [](int64_t s) { return s > 0 ? s : std::numeric_limits<int64_t>::max() / 2000000000; };
  const int64_t period_s =
      std::max<int64_t>(1, std::min(seconds(limits_.step_idle_seconds), seconds(limits_.session_idle_seconds)) / 4);
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_.load()) {
    reaper_cv_.wait_for(lock, std::chrono::seconds(std::min<int64_t>(period_s, 60)));
    if (shutting_down_.load()) break;
    const int64_t now = NowSteadyNanos();
    std::vector<std::shared_ptr<StepRendezvous>> expired;
    if (limits_.step_idle_seconds > 0)
      for (auto it = steps_.begin(); it != steps_.end();) {
        if (it->second.running == 0 && now - it->second.last_used_nanos > limits_.step_idle_seconds * 1000000000) {
          expired.push_back(std::move(it->second.rendezvous));
          it = steps_.erase(it);
        } else {
          ++it;
        }
      }
    std::vector<std::shared_ptr<Session>> idle;
    if (limits_.session_idle_seconds > 0)
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (now - it->second->last_used_nanos > limits_.session_idle_seconds * 1000000000) {
          idle.push_back(std::move(it->second));
          it = sessions_.erase(it);
        } else {
          ++it;
        }
      }
    lock.unlock();
    for (auto& step : expired)
      step->StartAbort(errors::Aborted("The step's rendezvous on ", task_, " was idle for more than ",
                                       limits_.step_idle_seconds, " s and was dropped"));
    for (auto& session : idle) session->state->Cancel();
    lock.lock();
  }
}

Worker::~Worker() { Shutdown(); }

void Worker::Shutdown() {
  std::map<int64_t, StepEntry> steps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_.store(true);
    steps.swap(steps_);
    reaper_cv_.notify_all();
  }
  if (reaper_.joinable()) reaper_.join();
  for (auto& [id, step] : steps)
    step.rendezvous->StartAbort(errors::Aborted("Call was aborted: the worker ", task_, " is stopping"));
}

std::shared_ptr<StepRendezvous> Worker::Step(int64_t step_id) {
  std::lock_guard<std::mutex> lock(mu_);
  StepEntry& step = steps_[step_id];
  if (!step.rendezvous) step.rendezvous = std::make_shared<StepRendezvous>(step_id, task_, workers_);
  step.last_used_nanos = NowSteadyNanos();
  return step.rendezvous;
}

void Worker::StepRunning(int64_t step_id, int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = steps_.find(step_id);
  if (it == steps_.end()) return;  // cleaned up meanwhile
  it->second.running += delta;
  it->second.last_used_nanos = NowSteadyNanos();
}

Status Worker::FindSession(const std::string& handle, bool created, std::shared_ptr<Session>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!created) {
    if (!legacy_session_) {
      legacy_session_ = std::make_shared<Session>();
      legacy_session_->state = std::make_shared<WorkerState>(config_, &shared_resources_);
    }
    *out = legacy_session_;
    return Status::OK();
  }
  auto it = sessions_.find(handle);
  if (it == sessions_.end())
    return errors::Aborted("Session handle is not found: ", handle, ". Possibly this worker (\"", task_,
                           "\") just restarted, or the session was idle longer than the worker keeps one.");
  it->second->last_used_nanos = NowSteadyNanos();
  *out = it->second;
  return Status::OK();
}

grpc::Status Worker::GetStatus(grpc::ServerContext*, const proto::GetStatusRequest*, proto::GetStatusResponse* resp) {
  for (const auto& d : devices_) *resp->add_device_attributes() = d;
  return grpc::Status::OK;
}

grpc::Status Worker::CreateWorkerSession(grpc::ServerContext*, const proto::CreateWorkerSessionRequest* req,
                                         proto::CreateWorkerSessionResponse*) {
  if (req->session_handle().empty()) return Reply(errors::InvalidArgument("Session must be non-empty."));
  auto session = std::make_shared<Session>();
  // ClusterSpec propagation isolates state as isolate_session_state does.
  const bool isolate = req->isolate_session_state() || req->server_def().cluster().job_size() > 0;
  session->state = std::make_shared<WorkerState>(config_, isolate ? nullptr : &shared_resources_);
  session->master_task = req->master_task();
  session->master_incarnation = req->master_incarnation();
  session->last_used_nanos = NowSteadyNanos();
  std::lock_guard<std::mutex> lock(mu_);
  // A master that restarted leaves its old sessions behind: drop them.
  if (!req->master_task().empty()) {
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->master_task == req->master_task() &&
          it->second->master_incarnation != req->master_incarnation())
        it = sessions_.erase(it);
      else
        ++it;
    }
  }
  sessions_[req->session_handle()] = std::move(session);
  return grpc::Status::OK;
}

grpc::Status Worker::DeleteWorkerSession(grpc::ServerContext*, const proto::DeleteWorkerSessionRequest* req,
                                         proto::DeleteWorkerSessionResponse*) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(req->session_handle());
    if (it == sessions_.end()) return grpc::Status::OK;  // an unknown handle is fine, as in TensorFlow
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session->state->Cancel();  // steps waiting on asynchronous kernels end
  return grpc::Status::OK;
}

grpc::Status Worker::RegisterGraph(grpc::ServerContext*, const proto::RegisterGraphRequest* req,
                                   proto::RegisterGraphResponse* resp) {
  std::shared_ptr<Session> session;
  Status s = FindSession(req->session_handle(), req->create_worker_session_called(), &session);
  if (!s.ok()) return Reply(s);
  std::unique_ptr<WorkerGraph> graph;
  s = WorkerGraph::Create(req->graph_def(), task_, session->state, &graph);
  if (!s.ok()) return Reply(s);
  std::lock_guard<std::mutex> lock(mu_);
  const std::string handle = Hex16(next_graph_++);
  session->graphs[handle] = std::move(graph);
  resp->set_graph_handle(handle);
  return grpc::Status::OK;
}

grpc::Status Worker::DeregisterGraph(grpc::ServerContext*, const proto::DeregisterGraphRequest* req,
                                     proto::DeregisterGraphResponse*) {
  std::shared_ptr<Session> session;
  Status s = FindSession(req->session_handle(), req->create_worker_session_called(), &session);
  if (!s.ok()) return Reply(s);
  std::lock_guard<std::mutex> lock(mu_);
  if (session->graphs.erase(req->graph_handle()) == 0)
    return Reply(errors::Aborted("Graph handle is not found: ", req->graph_handle(),
                                 ". Possibly, this worker just restarted."));
  return grpc::Status::OK;
}

grpc::Status Worker::RunGraph(grpc::ServerContext* ctx, const proto::RunGraphRequest* req,
                              proto::RunGraphResponse* resp) {
  Status s = RunGraphImpl(ctx, *req, resp);
  if (s.ok() || !req->store_errors_in_response_body()) return Reply(s);
  resp->set_status_code(static_cast<int32_t>(s.code()));
  resp->set_status_error_message(Utf8(s.message()));
  return grpc::Status::OK;
}

Status Worker::RunGraphImpl(grpc::ServerContext* ctx, const proto::RunGraphRequest& req,
                            proto::RunGraphResponse* resp) {
  if (shutting_down_.load()) return errors::Aborted("Call was aborted: the worker ", task_, " is stopping");
  if (req.is_partial()) return errors::Unimplemented("Partial runs are not supported by graphrt's workers");
  std::shared_ptr<Session> session;
  GR_RETURN_IF_ERROR(FindSession(req.session_handle(), req.create_worker_session_called(), &session));
  std::shared_ptr<WorkerGraph> graph;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = session->graphs.find(req.graph_handle());
    if (it == session->graphs.end())
      return errors::Aborted("Graph handle is not found: ", req.graph_handle(),
                             ". Possibly, this worker just restarted.");
    graph = it->second;
  }
  std::shared_ptr<StepRendezvous> step = Step(req.step_id());
  StepRunning(req.step_id(), +1);
  struct Done {
    Worker* w;
    int64_t id;
    ~Done() { w->StepRunning(id, -1); }
  } done{this, req.step_id()};
  const int64_t deadline = DeadlineNanos(ctx);
  step->set_deadline(deadline);
  Status s;
  for (const proto::NamedTensorProto& send : req.send()) {
    Rendezvous::ParsedKey key;
    s = Rendezvous::ParseKey(send.name(), &key);
    Tensor value;
    if (s.ok()) s = Tensor::FromProto(send.tensor(), &value);
    if (s.ok()) s = step->Send(key, value, false);
    if (!s.ok()) break;
  }
  if (s.ok()) {
    WorkerGraph::StepArgs args;
    args.step_id = req.step_id();
    args.rendezvous = step.get();
    args.deadline_nanos = deadline;
    args.cancelled = &shutting_down_;
    proto::StepStats stats;
    bool logging;
    {
      std::lock_guard<std::mutex> lock(mu_);
      logging = rpc_logging_;
    }
    const bool to_caller = req.exec_opts().record_timeline() || req.exec_opts().record_costs();
    if (to_caller || logging) args.stats = &stats;
    s = graph->Run(args);
    if (s.ok() && logging) {
      std::lock_guard<std::mutex> lock(mu_);
      if (logged_steps_.insert_or_assign(req.step_id(), stats).second) logged_order_.push_back(req.step_id());
      while (logged_order_.size() > kMaxLoggedSteps) {
        logged_steps_.erase(logged_order_.front());  // (gone already if fetched)
        logged_order_.pop_front();
      }
    }
    if (s.ok() && to_caller) *resp->mutable_step_stats() = std::move(stats);
  }
  if (!s.ok()) {
    // Peers waiting for this step's values learn why they will not come.
    step->StartAbort(s);
    return s;
  }
  for (const std::string& k : req.recv_key()) {
    Rendezvous::ParsedKey key;
    GR_RETURN_IF_ERROR(Rendezvous::ParseKey(k, &key));
    auto wait = std::make_shared<RecvWait>();
    step->RecvLocal(key, Notify(wait));
    std::unique_lock<std::mutex> lock(wait->mu);
    // The step has run, so its client-terminated sends are all there.
    if (!wait->done) {
      lock.unlock();
      step->StartAbort(errors::Aborted("Step ", req.step_id(), " has no value for ", k));
      lock.lock();
      wait->cv.wait(lock, [&] { return wait->done; });
    }
    GR_RETURN_IF_ERROR(wait->status);
    if (wait->is_dead) return errors::InvalidArgument("The tensor returned for ", k, " was not valid.");
    proto::NamedTensorProto* out = resp->add_recv();
    out->set_name(k);
    wait->value.AsProtoTensorContent(out->mutable_tensor());
  }
  return Status::OK();
}

grpc::Status Worker::CleanupGraph(grpc::ServerContext*, const proto::CleanupGraphRequest* req,
                                  proto::CleanupGraphResponse*) {
  std::shared_ptr<StepRendezvous> step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = steps_.find(req->step_id());
    if (it == steps_.end()) return grpc::Status::OK;
    step = std::move(it->second.rendezvous);
    steps_.erase(it);
  }
  step->StartAbort(errors::Aborted("Step ", req->step_id(), " was cleaned up (CleanupGraph)"));
  return grpc::Status::OK;
}

grpc::Status Worker::CleanupAll(grpc::ServerContext*, const proto::CleanupAllRequest* req, proto::CleanupAllResponse*) {
  shared_resources_.Cleanup(std::vector<std::string>(req->container().begin(), req->container().end()));
  return grpc::Status::OK;
}

grpc::Status Worker::RecvTensor(grpc::ServerContext* ctx, const proto::RecvTensorRequest* req,
                                proto::RecvTensorResponse* resp) {
  return Reply(RecvTensorImpl(ctx, *req, resp));
}

Status Worker::RecvTensorImpl(grpc::ServerContext* ctx, const proto::RecvTensorRequest& req,
                              proto::RecvTensorResponse* resp) {
  Rendezvous::ParsedKey key;
  if (!Rendezvous::ParseKey(req.rendezvous_key(), &key).ok())
    return errors::InvalidArgument("Invalid rendezvous key (src): ", req.rendezvous_key(), " @ ", task_);
  const proto::DeviceAttributes* src = nullptr;
  for (const auto& d : devices_)
    if (d.name() == key.src.ToString()) src = &d;
  if (src == nullptr)
    return errors::InvalidArgument("Invalid rendezvous key (src): ", req.rendezvous_key(), " @ ", task_,
                                   ": its source device is not on this worker");
  if (src->incarnation() != key.src_incarnation) {
    return errors::Aborted("RecvTensor expects a different device incarnation: ", Hex16(key.src_incarnation),
                           " vs. ", Hex16(src->incarnation()),
                           ". Your worker job (\"", task_, "\") was probably restarted (its incarnation changed). "
                           "Check your worker job for the reason why it was restarted.");
  }
  if (shutting_down_.load()) return errors::Aborted("Call was aborted: the worker ", task_, " is stopping");
  std::shared_ptr<StepRendezvous> step = Step(req.step_id());
  auto wait = std::make_shared<RecvWait>();
  step->RecvLocal(key, Notify(wait));
  std::unique_lock<std::mutex> lock(wait->mu);
  bool aborted = false;
  while (!wait->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return wait->done; })) {
    if (!aborted && (ctx->IsCancelled() || shutting_down_.load())) {
      aborted = true;  // the caller gave up (its step failed or timed out): so does this step
      lock.unlock();
      step->StartAbort(errors::Aborted("Step ", req.step_id(), ": RecvTensor of ", req.rendezvous_key(),
                                       " was cancelled by its caller"));
      lock.lock();
    }
  }
  GR_RETURN_IF_ERROR(wait->status);
  resp->set_is_dead(wait->is_dead);
  resp->set_send_start_micros(NowSteadyNanos() / 1000);
  if (!wait->is_dead) wait->value.AsProtoTensorContent(resp->mutable_tensor());
  return Status::OK();
}

grpc::Status Worker::Logging(grpc::ServerContext*, const proto::LoggingRequest* req, proto::LoggingResponse* resp) {
  std::lock_guard<std::mutex> lock(mu_);
  if (req->enable_rpc_logging()) rpc_logging_ = true;
  if (req->disable_rpc_logging()) rpc_logging_ = false;
  if (req->clear()) {
    logged_steps_.clear();
    logged_order_.clear();
  }
  for (int64_t step_id : req->fetch_step_id()) {
    auto it = logged_steps_.find(step_id);
    if (it == logged_steps_.end()) continue;
    proto::LabeledStepStats* labeled = resp->add_step();
    labeled->set_step_id(step_id);
    labeled->mutable_step_stats()->Swap(&it->second);
    logged_steps_.erase(it);
  }
  return grpc::Status::OK;
}

grpc::Status Worker::Tracing(grpc::ServerContext*, const proto::TracingRequest*, proto::TracingResponse*) {
  return Reply(errors::Unimplemented("Tracing is not supported by graphrt's workers"));
}

grpc::Status Worker::MarkRecvFinished(grpc::ServerContext*, const proto::MarkRecvFinishedRequest*,
                                      proto::MarkRecvFinishedResponse*) {
  return grpc::Status::OK;  // no response cache to release
}

}  // namespace distributed
}  // namespace graphrt
