#include "worker.h"

#include <condition_variable>
#include <deque>
#include <limits>
#include <set>
#include <system_error>
#include <thread>

#include "graphrt/core/device.h"
#include "graphrt/core/runtime.h"
#include "tensor_coding.h"

namespace graphrt {
namespace distributed {

// One step's rendezvous on this worker: values its partitions send wait
// here until a local _Recv or a peer's RecvTensor takes them; a _Recv of a
// value another task sends pulls it from that task with RecvTensor.
class StepRendezvous final : public Rendezvous, public std::enable_shared_from_this<StepRendezvous> {
 public:
  // `host_allocator`: where values pulled from other tasks land (host
  // memory: a _Recv from another task is a host-memory one).
  StepRendezvous(int64_t step_id, std::string task, std::shared_ptr<WorkerCache> workers, Allocator* host_allocator)
      : step_id_(step_id), task_(std::move(task)), workers_(std::move(workers)), host_allocator_(host_allocator) {}

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
  // Pulls the value from `src_task` with a raw RecvTensor (the response's
  // bytes go straight into the tensor: tensor_coding.h).
  void RecvRemote(const ParsedKey& key, const std::string& src_task, DoneCallback done) {
    grpc::GenericStub* stub;
    Status s = workers_->GenericStub(src_task, &stub);
    if (!s.ok()) {
      done(s, Tensor(), false);
      return;
    }
    struct Call {
      std::shared_ptr<grpc::ClientContext> ctx = std::make_shared<grpc::ClientContext>();
      std::string key;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    auto call = std::make_shared<Call>();
    call->key = key.full_key;
    proto::RecvTensorRequest req;
    req.set_step_id(step_id_);
    req.set_rendezvous_key(key.full_key);
    call->request = EncodeMessage(req);
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
    stub->UnaryCall(
        call->ctx.get(), kRecvTensorMethod, grpc::StubOptions(), &call->request, &call->response,
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
                     : CallError(rpc, "RecvTensor of '" + call->key + "'", src_task),
                 Tensor(), false);
            return;
          }
          self->workers_->Contacted(src_task);
          Tensor value;
          bool is_dead = false;
          Status parsed = DecodeRecvTensorResponse(&call->response, self->host_allocator_, &value, &is_dead);
          if (!parsed.ok()) parsed = parsed.WithContext("RecvTensor from " + src_task + " of '" + call->key + "'");
          done(parsed, value, is_dead);
        });
  }

  const int64_t step_id_;
  const std::string task_;
  const std::shared_ptr<WorkerCache> workers_;
  Allocator* const host_allocator_;
  std::atomic<int64_t> deadline_nanos_{0};
  LocalRendezvous local_;
  std::mutex mu_;
  Status aborted_;
  std::set<std::shared_ptr<grpc::ClientContext>> calls_;
};

namespace {

// What a RecvAsync callback gave, for a thread that waits for it.
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
      // The CPU's allocator keeps large blocks for reuse: a big value
      // pulled every step does not fault in fresh pages every step.
      if (d->type() == "CPU" && host_allocator_ == HostAllocator()) host_allocator_ = d->allocator();
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
  std::unique_lock<std::mutex> lock(mu_);
  if (shutting_down_.load()) {
    // Shutdown has aborted the steps it found; this one would wait forever.
    lock.unlock();
    auto step = std::make_shared<StepRendezvous>(step_id, task_, workers_, host_allocator_);
    step->StartAbort(errors::Aborted("Call was aborted: the worker ", task_, " is stopping"));
    return step;
  }
  StepEntry& step = steps_[step_id];
  if (!step.rendezvous) step.rendezvous = std::make_shared<StepRendezvous>(step_id, task_, workers_, host_allocator_);
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

// One RunGraph call: its request read straight into tensors, the step run
// on one of the worker's blocking-call threads (it lasts until the
// partition has run, and gRPC's callback threads must not block), the
// fetched tensors written out from their own buffers.
class Worker::RunGraphCall final : public grpc::ServerUnaryReactor {
 public:
  RunGraphCall(Worker* worker, grpc::ByteBuffer* response, int64_t deadline_nanos)
      : worker_(worker), response_(response), deadline_nanos_(deadline_nanos) {}

  void Start(const grpc::ByteBuffer* request_bytes) {
    grpc::ByteBuffer request_copy(*request_bytes);  // (shares the slices)
    Status s = DecodeWithTensors(&request_copy, kRunGraphSendField, &proto::RunGraphRequest::mutable_send,
                                 worker_->host_allocator_, &req_, &sends_);
    if (!s.ok()) return Finish(ToGrpcStatus(s));
    try {
      worker_->run_graph_threads_.Run([this] { Run(); });
    } catch (const std::system_error& e) {
      Finish(ToGrpcStatus(errors::ResourceExhausted("RunGraph on ", worker_->task_, ": no thread to run it: ", e.what())));
    }
  }

  // The master gave up on the call (another partition failed, the session
  // closed, the deadline passed): the step ends here too, its waiting
  // kernels woken, instead of waiting for its own deadline or session.
  void OnCancel() override { cancellation_.Cancel(); }

  void OnDone() override { delete this; }

 private:
  void Run() {
    proto::RunGraphResponse resp;
    NamedTensors recvs;
    Status s = worker_->RunGraphTensors(req_, sends_, deadline_nanos_, &cancellation_, &recvs, &resp);
    sends_.clear();
    // The last use of this call: OnDone deletes it.
    Finish(AnswerWithTensors(s, req_.store_errors_in_response_body(), kRunGraphRecvField, &resp, recvs, response_));
  }

  Worker* const worker_;
  grpc::ByteBuffer* const response_;
  const int64_t deadline_nanos_;
  proto::RunGraphRequest req_;
  NamedTensors sends_;
  StepCancellation cancellation_;
};

grpc::ServerUnaryReactor* Worker::RunGraph(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) {
  auto* call = new RunGraphCall(this, response, DeadlineNanos(ctx));
  call->Start(request);
  return call;
}

Status Worker::RunGraphTensors(const proto::RunGraphRequest& req, const NamedTensors& sends, int64_t deadline_nanos,
                               StepCancellation* cancellation, NamedTensors* recvs, proto::RunGraphResponse* resp) {
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
  step->set_deadline(deadline_nanos);
  Status s;
  for (const auto& [name, value] : sends) {
    Rendezvous::ParsedKey key;
    s = Rendezvous::ParseKey(name, &key);
    if (s.ok()) s = step->Send(key, value, false);
    if (!s.ok()) break;
  }
  if (s.ok()) {
    WorkerGraph::StepArgs args;
    args.step_id = req.step_id();
    args.rendezvous = step.get();
    args.deadline_nanos = deadline_nanos;
    args.cancelled = &shutting_down_;
    args.cancellation = cancellation;
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
    recvs->emplace_back(k, wait->value);
  }
  return Status::OK();
}

grpc::Status Worker::CleanupGraph(grpc::ServerContext*, const proto::CleanupGraphRequest* req,
                                  proto::CleanupGraphResponse*) {
  CleanupStep(req->step_id());
  return grpc::Status::OK;
}

void Worker::CleanupStep(int64_t step_id) {
  std::shared_ptr<StepRendezvous> step;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = steps_.find(step_id);
    if (it == steps_.end()) return;
    step = std::move(it->second.rendezvous);
    steps_.erase(it);
  }
  step->StartAbort(errors::Aborted("Step ", step_id, " was cleaned up (CleanupGraph)"));
}

void Worker::Counts(size_t* sessions, size_t* steps) {
  std::lock_guard<std::mutex> lock(mu_);
  *sessions = sessions_.size() + (legacy_session_ ? 1 : 0);
  *steps = steps_.size();
}

void Worker::CancelSession(const std::string& handle) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(handle);
    if (it == sessions_.end()) return;
    session = it->second;
  }
  session->state->Cancel();
}


grpc::Status Worker::CleanupAll(grpc::ServerContext*, const proto::CleanupAllRequest* req, proto::CleanupAllResponse*) {
  shared_resources_.Cleanup(std::vector<std::string>(req->container().begin(), req->container().end()));
  return grpc::Status::OK;
}

// One RecvTensor in flight, answered by the rendezvous's callback when the
// value is sent. A caller that cancels (its step failed or timed out) or a
// worker that stops aborts the step, which answers the call.
class Worker::RecvTensorCall final : public grpc::ServerUnaryReactor {
 public:
  RecvTensorCall(Worker* worker, grpc::ByteBuffer* response) : worker_(worker), response_(response) {}

  void Start(const grpc::ByteBuffer* request_bytes) {
    proto::RecvTensorRequest req;
    grpc::ByteBuffer request_copy(*request_bytes);  // (shares the slices)
    Status s = DecodeMessage(&request_copy, &req);
    if (!s.ok()) return Finish(ToGrpcStatus(s));
    step_id_ = req.step_id();
    key_ = req.rendezvous_key();
    Rendezvous::ParsedKey key;
    if (!Rendezvous::ParseKey(key_, &key).ok())
      return Finish(ToGrpcStatus(
          errors::InvalidArgument("Invalid rendezvous key (src): ", key_, " @ ", worker_->task_)));
    const proto::DeviceAttributes* src = nullptr;
    for (const auto& d : worker_->devices_)
      if (d.name() == key.src.ToString()) src = &d;
    if (src == nullptr)
      return Finish(ToGrpcStatus(errors::InvalidArgument("Invalid rendezvous key (src): ", key_, " @ ",
                                                         worker_->task_,
                                                         ": its source device is not on this worker")));
    if (src->incarnation() != key.src_incarnation)
      return Finish(ToGrpcStatus(errors::Aborted(
          "RecvTensor expects a different device incarnation: ", Hex16(key.src_incarnation), " vs. ",
          Hex16(src->incarnation()), ". Your worker job (\"", worker_->task_,
          "\") was probably restarted (its incarnation changed). "
          "Check your worker job for the reason why it was restarted.")));
    std::shared_ptr<StepRendezvous> step = worker_->Step(step_id_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      step_ = step;
    }
    // The callback may run at once, on this thread, or when the value is
    // sent, on the sender's; either way it answers the call, and the call
    // is not touched after that (OnDone deletes it).
    step->RecvLocal(key, [this](const Status& status, const Tensor& value, bool is_dead) {
      if (!status.ok()) return Finish(ToGrpcStatus(status));
      const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
      *response_ = EncodeRecvTensorResponse(value, is_dead, now_micros);
      Finish(grpc::Status::OK);
    });
  }

  void OnCancel() override {
    std::shared_ptr<StepRendezvous> step;
    {
      std::lock_guard<std::mutex> lock(mu_);
      step = step_;
    }
    if (step)
      step->StartAbort(
          errors::Aborted("Step ", step_id_, ": RecvTensor of ", key_, " was cancelled by its caller"));
  }

  void OnDone() override { delete this; }

 private:
  Worker* const worker_;
  grpc::ByteBuffer* const response_;
  int64_t step_id_ = 0;
  std::string key_;
  std::mutex mu_;
  std::shared_ptr<StepRendezvous> step_;  // under mu_ (OnCancel may come at any time)
};

grpc::ServerUnaryReactor* Worker::RecvTensor(grpc::CallbackServerContext*, const grpc::ByteBuffer* request,
                                             grpc::ByteBuffer* response) {
  auto* call = new RecvTensorCall(this, response);
  call->Start(request);
  return call;
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
