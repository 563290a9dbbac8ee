#include "master.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <random>
#include <set>
#include <system_error>
#include <type_traits>
#include <unordered_map>

#include "graphrt/core/cluster_step.h"
#include "graphrt/core/device_name.h"
#include "graphrt/core/runtime.h"
#include "graphrt/proto/worker.pb.h"
#include "tensor_coding.h"
#include "worker.h"

namespace graphrt {
namespace distributed {

namespace {

// How long CreateSession waits for the cluster's tasks when the session
// sets no operation_timeout_in_ms (TensorFlow waits forever).
constexpr int64_t kDefaultDiscoveryTimeoutMs = 60000;
// DeleteWorkerSession and other clean-up calls (TensorFlow's 10 s).
constexpr int64_t kCleanupTimeoutMs = 10000;

grpc::Status Reply(const Status& s) { return ToGrpcStatus(s); }

// Whether `task` ("/job:J/replica:R/task:T") has devices that `filters`
// (ConfigProto.device_filters; none: all) allow.
bool TaskPassesFilters(const std::string& task, const google::protobuf::RepeatedPtrField<std::string>& filters) {
  if (filters.empty()) return true;
  DeviceNameParts t;
  if (!ParseDeviceName(task, &t).ok()) return false;
  for (const std::string& f : filters) {
    DeviceNameParts p;
    if (!ParseDeviceName(f, &p).ok()) continue;
    if ((!p.has_job || p.job == t.job) && (!p.has_replica || p.replica == t.replica) &&
        (!p.has_task || p.task == t.task))
      return true;
  }
  return false;
}

// TensorFlow's master checks the names of a graph it is given before
// anything else (its "Illegal op name" and "Illegal op input name"): a name
// is [A-Za-z0-9.][A-Za-z0-9_./>-]*, an input that name after an optional
// '^', then optionally ':' and an output index without leading zeros.
bool IsValidOpName(const std::string& name, size_t begin, size_t end) {
  if (begin >= end) return false;
  auto first = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.'; };
  auto rest = [&](char c) { return first(c) || c == '_' || c == '/' || c == '>' || c == '-'; };
  if (!first(name[begin])) return false;
  for (size_t i = begin + 1; i < end; ++i)
    if (!rest(name[i])) return false;
  return true;
}

Status ValidateGraphDefSyntax(const proto::GraphDef& def) {
  for (const proto::NodeDef& node : def.node()) {
    if (!IsValidOpName(node.name(), 0, node.name().size()))
      return errors::InvalidArgument("Illegal op name '", node.name(), "'");
    for (const std::string& input : node.input()) {
      const size_t begin = !input.empty() && input[0] == '^' ? 1 : 0;
      size_t end = input.size();
      const size_t colon = input.rfind(':');
      if (colon != std::string::npos && colon >= begin) {
        const std::string index = input.substr(colon + 1);
        const bool digits = !index.empty() && std::all_of(index.begin(), index.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        });
        if (!digits || (index.size() > 1 && index[0] == '0'))
          return errors::InvalidArgument("Illegal op input name '", input, "'");
        end = colon;
      }
      if (!IsValidOpName(input, begin, end))
        return errors::InvalidArgument("Illegal op input name '", input, "'");
    }
  }
  return Status::OK();
}

// Calls `call(task, done)` for every task at once and waits for all: the
// tasks' answers in `results`. `call` starts an asynchronous gRPC call and
// hands `done` its status.
template <typename Start>
std::map<std::string, grpc::Status> CallAll(const std::vector<std::string>& tasks, Start start) {
  struct Pending {
    std::mutex mu;
    std::condition_variable cv;
    size_t left;
    std::map<std::string, grpc::Status> results;
  };
  auto p = std::make_shared<Pending>();
  p->left = tasks.size();
  for (const std::string& task : tasks) {
    start(task, [p, task](const grpc::Status& s) {
      std::lock_guard<std::mutex> lock(p->mu);
      p->results[task] = s;
      if (--p->left == 0) p->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(p->mu);
  p->cv.wait(lock, [&] { return p->left == 0; });
  return p->results;
}

// Calls the WorkerService `method` on every task at once (with
// `timeout_ms`; waiting for tasks not up yet when `wait_for_ready`) and
// waits for all: each task's status. make(task, &request) fills the
// requests; got(task, response) sees each answer that succeeded.
template <typename Req, typename Resp>
std::map<std::string, grpc::Status> CallTasks(
    const std::shared_ptr<WorkerCache>& workers, const std::vector<std::string>& tasks,
    void (tensorflow::WorkerService::Stub::async::*method)(grpc::ClientContext*, const Req*, Resp*,
                                                           std::function<void(grpc::Status)>),
    int64_t timeout_ms, bool wait_for_ready, const std::function<void(const std::string&, Req*)>& make,
    const std::function<void(const std::string&, const Resp&)>& got = nullptr) {
  std::mutex got_mu;
  return CallAll(tasks, [&](const std::string& task, std::function<void(const grpc::Status&)> done) {
    tensorflow::WorkerService::Stub* stub;
    Status s = workers->Stub(task, &stub);
    if (!s.ok()) return done(ToGrpcStatus(s));
    struct Call {
      grpc::ClientContext ctx;
      Req req;
      Resp resp;
    };
    auto call = std::make_shared<Call>();
    SetDeadline(&call->ctx, timeout_ms);
    call->ctx.set_wait_for_ready(wait_for_ready);
    if (make) make(task, &call->req);
    // The channel (in `workers`) outlives the call.
    ((*stub->async()).*method)(&call->ctx, &call->req, &call->resp, [&, call, task, workers, done](grpc::Status rpc) {
      if (rpc.ok()) {
        uint64_t incarnation = 0;
        if constexpr (std::is_same_v<Resp, proto::GetStatusResponse>)
          if (call->resp.device_attributes_size() > 0) incarnation = call->resp.device_attributes(0).incarnation();
        workers->Contacted(task, incarnation);
      }
      if (rpc.ok() && got) {
        std::lock_guard<std::mutex> lock(got_mu);
        got(task, call->resp);
      }
      done(rpc);
    });
  });
}

}  // namespace

// One client session: its graph placed over the cluster, the steps it has
// registered with the workers, its callables.
class MasterSession {
 public:
  // `local_worker`: the worker of `local_task`, called directly.
  MasterSession(std::string handle, proto::ConfigProto config, std::shared_ptr<WorkerCache> workers,
                std::string local_task, std::shared_ptr<Worker> local_worker,
                std::vector<ClusterDevice> devices, std::vector<std::string> tasks, std::unique_ptr<Graph> graph)
      : handle_(std::move(handle)),
        config_(std::move(config)),
        workers_(std::move(workers)),
        local_task_(std::move(local_task)),
        local_worker_(std::move(local_worker)),
        devices_(std::move(devices)),
        tasks_(std::move(tasks)),
        graph_(std::move(graph)) {}

  const std::string& handle() const { return handle_; }
  const std::vector<ClusterDevice>& devices() const { return devices_; }
  const std::vector<std::string>& tasks() const { return tasks_; }

  Status Extend(const proto::GraphDef& def, int64_t expected_version, int64_t* new_version) {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return errors::FailedPrecondition("Session is closed.");
    if (expected_version != version_)
      return errors::Aborted("Current version is ", version_, " but caller expected ", expected_version, ".");
    auto g = std::make_unique<Graph>(&Runtime::Global().ops());
    CopyGraph(*graph_, g.get());
    GR_RETURN_IF_ERROR(ValidateGraphDefSyntax(def));
    GR_RETURN_IF_ERROR(ExtendGraph(def, g.get()));
    GR_RETURN_IF_ERROR(PlaceOnCluster(devices_, config_, g.get()));
    graph_ = std::move(g);
    *new_version = ++version_;
    return Status::OK();
  }

  // A step's feeds by name, its fetches and targets: `outputs` holds each
  // fetch once, by name.
  Status Run(const proto::RunOptions& options, const NamedTensors& feeds, const std::vector<std::string>& fetches,
             const std::vector<std::string>& targets, NamedTensors* outputs) {
    if (fetches.empty() && targets.empty())
      return errors::InvalidArgument("Must specify at least one target to fetch or execute.");
    std::vector<std::string> feed_names;
    for (const auto& [name, value] : feeds) feed_names.push_back(name);
    std::vector<std::string> unique_fetches = fetches;
    std::sort(unique_fetches.begin(), unique_fetches.end());
    unique_fetches.erase(std::unique(unique_fetches.begin(), unique_fetches.end()), unique_fetches.end());
    std::shared_ptr<RegisteredStep> step;
    GR_RETURN_IF_ERROR(GetStep(feed_names, unique_fetches, targets, &step));
    std::vector<Tensor> sorted_feeds(feeds.size());
    for (const auto& [name, value] : feeds) sorted_feeds[step->feed_index.at(name)] = value;
    std::vector<Tensor> fetched;
    GR_RETURN_IF_ERROR(RunRegistered(*step, options, sorted_feeds, &fetched));
    outputs->clear();
    for (const std::string& name : unique_fetches)
      outputs->emplace_back(name, std::move(fetched[step->fetch_index.at(name)]));
    return Status::OK();
  }

  Status MakeCallable(const proto::CallableOptions& options, int64_t* handle) {
    if (options.tensor_connection_size() > 0 || options.feed_devices_size() > 0 || options.fetch_devices_size() > 0)
      return errors::Unimplemented("MakeCallable: CallableOptions.tensor_connection, feed_devices and fetch_devices "
                                   "are not supported yet");
    auto c = std::make_shared<Callable>();
    std::vector<std::string> feeds(options.feed().begin(), options.feed().end());
    c->fetches.assign(options.fetch().begin(), options.fetch().end());
    std::vector<std::string> unique_fetches = c->fetches;
    std::sort(unique_fetches.begin(), unique_fetches.end());
    unique_fetches.erase(std::unique(unique_fetches.begin(), unique_fetches.end()), unique_fetches.end());
    const std::vector<std::string> targets(options.target().begin(), options.target().end());
    if (c->fetches.empty() && targets.empty())
      return errors::InvalidArgument("Must specify at least one target to fetch or execute.");
    GR_RETURN_IF_ERROR(GetStep(feeds, unique_fetches, targets, &c->step));
    for (const std::string& f : feeds) c->feed_order.push_back(c->step->feed_index.at(f));
    for (const std::string& f : c->fetches) c->fetch_order.push_back(c->step->fetch_index.at(f));
    c->run_options = options.run_options();
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return errors::FailedPrecondition("Session is closed.");
    *handle = next_callable_++;
    callables_[*handle] = std::move(c);
    return Status::OK();
  }

  Status RunCallable(int64_t handle, const proto::RunCallableRequest& req, proto::RunCallableResponse* resp) {
    std::shared_ptr<Callable> c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (handle < 0 || handle >= next_callable_) return errors::InvalidArgument("No such callable handle: ", handle);
      auto it = callables_.find(handle);
      if (it == callables_.end())
        return errors::InvalidArgument("Attempted to run callable after handle was released: ", handle);
      c = it->second;
    }
    if (req.feed_size() != static_cast<int>(c->feed_order.size()))
      return errors::InvalidArgument("Invalid number of feed tensors specified: got ", req.feed_size(),
                                     ", expected ", c->feed_order.size(), " for callable ", handle);
    std::vector<Tensor> sorted_feeds(c->feed_order.size());
    for (size_t i = 0; i < c->feed_order.size(); ++i)
      GR_RETURN_IF_ERROR(Tensor::FromProto(req.feed(static_cast<int>(i)), &sorted_feeds[c->feed_order[i]])
                             .WithContext("Callable " + std::to_string(handle) + "'s feed " + std::to_string(i)));
    std::vector<Tensor> fetched;
    GR_RETURN_IF_ERROR(RunRegistered(*c->step, c->run_options, sorted_feeds, &fetched));
    for (int index : c->fetch_order) fetched[index].AsProtoTensorContent(resp->add_fetch());
    return Status::OK();
  }

  Status ReleaseCallable(int64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    callables_.erase(handle);  // an unknown handle is fine, as in TensorFlow
    return Status::OK();
  }

  // Cancels the steps in progress, waits for them, then drops the
  // registered graphs and the workers' sessions (errors only logged).
  void Close() {
    std::vector<std::shared_ptr<grpc::ClientContext>> running;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      closed_ = true;
      running.assign(running_calls_.begin(), running_calls_.end());
    }
    for (auto& c : running) c->TryCancel();
    // A step of this task's partition runs on its caller's thread: it ends
    // when its kernels are cancelled.
    if (IsLocal(local_task_)) local_worker_->CancelSession(handle_);
    std::map<std::string, std::shared_ptr<RegisteredStep>> steps;
    {
      std::unique_lock<std::mutex> lock(mu_);
      idle_.wait(lock, [&] { return active_steps_ == 0; });
      steps.swap(steps_);
      callables_.clear();
    }
    // Deleting the sessions drops the graphs registered in them.
    CallTasks<proto::DeleteWorkerSessionRequest, proto::DeleteWorkerSessionResponse>(
        workers_, tasks_, &tensorflow::WorkerService::Stub::async::DeleteWorkerSession, kCleanupTimeoutMs, false,
        [&](const std::string&, proto::DeleteWorkerSessionRequest* req) { req->set_session_handle(handle_); });
  }

 private:
  // A signature's partitions, registered with their workers once.
  struct RegisteredStep {
    ClusterStep step;
    std::map<std::string, std::string> graph_handles;  // task -> handle
    std::map<std::string, int> feed_index, fetch_index;  // name -> index in the sorted signature
  };
  struct Callable {
    std::shared_ptr<RegisteredStep> step;
    std::vector<int> feed_order;   // feed_order[i]: sorted index of the caller's feed i
    std::vector<std::string> fetches;
    std::vector<int> fetch_order;  // likewise for fetches
    proto::RunOptions run_options;
  };

  Status GetStep(std::vector<std::string> feeds, std::vector<std::string> fetches, std::vector<std::string> targets,
                 std::shared_ptr<RegisteredStep>* out) {
    std::sort(feeds.begin(), feeds.end());
    for (size_t i = 1; i < feeds.size(); ++i)
      if (feeds[i] == feeds[i - 1]) return errors::InvalidArgument("Duplicated feeds: ", feeds[i]);
    std::sort(fetches.begin(), fetches.end());
    std::sort(targets.begin(), targets.end());
    std::string key;
    for (const auto* list : {&feeds, &fetches, &targets}) {
      for (const std::string& s : *list) key.append(s).push_back('\0');
      key.push_back('\1');
    }
    // One registration per signature: concurrent first users wait for it.
    std::unique_lock<std::mutex> build_lock(build_mu_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return errors::FailedPrecondition("Session is closed.");
      auto it = steps_.find(key);
      if (it != steps_.end()) {
        *out = it->second;
        return Status::OK();
      }
    }
    auto step = std::make_shared<RegisteredStep>();
    {
      std::lock_guard<std::mutex> lock(mu_);
      GR_RETURN_IF_ERROR(BuildClusterStep(*graph_, devices_, config_, feeds, fetches, targets, &step->step));
    }
    for (size_t i = 0; i < feeds.size(); ++i) step->feed_index[feeds[i]] = static_cast<int>(i);
    for (size_t i = 0; i < fetches.size(); ++i) step->fetch_index[fetches[i]] = static_cast<int>(i);
    for (auto& [task, partition] : step->step.partitions) {
      tensorflow::WorkerService::Stub* stub;
      GR_RETURN_IF_ERROR(workers_->Stub(task, &stub));
      grpc::ClientContext ctx;
      SetDeadline(&ctx, config_.operation_timeout_in_ms());
      proto::RegisterGraphRequest req;
      req.set_session_handle(handle_);
      req.set_create_worker_session_called(true);
      // Moved, not copied: the worker keeps the partition, the master need
      // not (a large constant is not held twice).
      req.mutable_graph_def()->Swap(&partition);
      *req.mutable_graph_options() = config_.graph_options();
      *req.mutable_config_proto() = config_;
      proto::RegisterGraphResponse resp;
      grpc::Status s = stub->RegisterGraph(&ctx, req, &resp);
      if (!s.ok()) return CallError(s, "RegisterGraph", task);
      step->graph_handles[task] = resp.graph_handle();
    }
    std::lock_guard<std::mutex> lock(mu_);
    steps_[key] = step;
    *out = std::move(step);
    return Status::OK();
  }

  // One step: RunGraph on every partition at once; the first error cancels
  // the others. `feeds` in the signature's sorted order; `fetched` likewise.
  Status RunRegistered(const RegisteredStep& rs, const proto::RunOptions& options, const std::vector<Tensor>& feeds,
                       std::vector<Tensor>* fetched) {
    const ClusterStep& step = rs.step;
    for (size_t i = 0; i < feeds.size(); ++i)
      if (feeds[i].dtype() != step.feed_types[i]) {
        std::string name;
        for (const auto& [n, index] : rs.feed_index)
          if (index == static_cast<int>(i)) name = n;
        return errors::InvalidArgument("Feed '", name, "' has dtype ", DataTypeString(feeds[i].dtype()),
                                       " but the graph expects ", DataTypeString(step.feed_types[i]));
      }
    // A call's request and answer: their tensors apart from the messages,
    // written from and read into tensors directly (tensor_coding.h).
    struct Call {
      std::shared_ptr<grpc::ClientContext> ctx = std::make_shared<grpc::ClientContext>();
      proto::RunGraphRequest req;
      NamedTensors sends;
      grpc::ByteBuffer request, response;
      proto::RunGraphResponse resp;
      NamedTensors recvs;
      grpc::Status rpc;
      Status decoded;
      StepCancellation cancellation;  // this task's partition, run here
    };
    static thread_local std::mt19937_64 rng(std::random_device{}());
    const int64_t step_id = static_cast<int64_t>(rng() >> 7);  // at most 2^57, as TensorFlow's
    const int64_t timeout_ms =
        options.timeout_in_ms() > 0 ? options.timeout_in_ms() : config_.operation_timeout_in_ms();
    std::map<std::string, std::shared_ptr<Call>> calls;  // by task
    for (const auto& [task, handle] : rs.graph_handles) {
      auto c = std::make_shared<Call>();
      SetDeadline(c->ctx.get(), timeout_ms);
      c->req.set_session_handle(handle_);
      c->req.set_create_worker_session_called(true);
      c->req.set_graph_handle(handle);
      c->req.set_step_id(step_id);
      c->req.set_store_errors_in_response_body(true);
      if (options.trace_level() != proto::RunOptions::NO_TRACE) c->req.mutable_exec_opts()->set_record_timeline(true);
      calls[task] = std::move(c);
    }
    for (size_t i = 0; i < feeds.size(); ++i) calls.at(step.feeds[i].task)->sends.emplace_back(step.feeds[i].key, feeds[i]);
    for (const auto& f : step.fetches) calls.at(f.task)->req.add_recv_key(f.key);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return errors::Cancelled("Step was cancelled by an explicit call to `Session::Close()`.");
      ++active_steps_;
      for (auto& [task, c] : calls) running_calls_.insert(c->ctx);
    }
    // The first failure cancels the others: their calls (whose workers then
    // cancel their steps), and this task's partition, run here, directly.
    std::atomic<bool> failed{false};
    auto cancel_others = [&](const std::shared_ptr<Call>& failed_call) {
      if (failed.exchange(true)) return;
      for (auto& [other_task, other] : calls) {
        if (other == failed_call) continue;
        if (IsLocal(other_task))
          other->cancellation.Cancel();
        else
          other->ctx->TryCancel();
      }
    };
    // This task's partition last: it runs on this thread, the others'
    // calls already under way.
    std::vector<std::string> tasks;
    for (auto& [task, c] : calls)
      if (!IsLocal(task)) tasks.push_back(task);
    for (auto& [task, c] : calls)
      if (IsLocal(task)) tasks.push_back(task);
    auto workers = workers_;
    const int64_t deadline_nanos = timeout_ms > 0 ? NowSteadyNanos() + timeout_ms * 1000000 : 0;
    CallAll(tasks, [&](const std::string& task, std::function<void(const grpc::Status&)> done) {
      std::shared_ptr<Call> c = calls.at(task);  // held by the callback until gRPC drops it
      if (IsLocal(task)) {
        Status s =
            local_worker_->RunGraphTensors(c->req, c->sends, deadline_nanos, &c->cancellation, &c->recvs, &c->resp);
        if (!s.ok()) {
          c->resp.set_status_code(static_cast<int32_t>(s.code()));
          c->resp.set_status_error_message(s.message());
          cancel_others(c);
        }
        return done(grpc::Status::OK);
      }
      grpc::GenericStub* stub;
      Status s = workers->GenericStub(task, &stub);
      if (!s.ok()) return done(ToGrpcStatus(s));
      c->request = EncodeWithTensors(c->req, kRunGraphSendField, c->sends);
      stub->UnaryCall(c->ctx.get(), kRunGraphMethod, grpc::StubOptions(), &c->request, &c->response,
                      [&, c, task, workers, done](grpc::Status rpc) {
                        c->rpc = rpc;
                        if (rpc.ok()) {
                          workers->Contacted(task);
                          c->decoded = DecodeWithTensors(&c->response, kRunGraphRecvField,
                                                         &proto::RunGraphResponse::mutable_recv, HostAllocator(),
                                                         &c->resp, &c->recvs)
                                           .WithContext("RunGraph's answer from " + task);
                        }
                        if (!rpc.ok() || !c->decoded.ok() || c->resp.status_code() != 0) cancel_others(c);
                        done(rpc);
                      });
    });
    bool closed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [task, c] : calls) running_calls_.erase(c->ctx);
      closed = closed_;
      if (--active_steps_ == 0) idle_.notify_all();
    }
    CleanupSteps(tasks, step_id);
    // The root cause: a worker's own error before the cancellations and
    // aborts it caused elsewhere.
    Status first, root;
    for (auto& [task, c] : calls) {
      Status s = !c->rpc.ok()        ? CallError(c->rpc, "RunGraph", task)
                 : !c->decoded.ok() ? c->decoded
                 : c->resp.status_code() != 0
                     ? Status(static_cast<Code>(c->resp.status_code()), c->resp.status_error_message())
                     : Status::OK();
      if (s.ok()) continue;
      if (first.ok()) first = s;
      if (root.ok() && s.code() != Code::kCancelled && s.code() != Code::kAborted) root = s;
    }
    if (!first.ok()) {
      if (closed) return errors::Cancelled("Step was cancelled by an explicit call to `Session::Close()`.");
      return root.ok() ? first : root;
    }
    fetched->resize(step.fetches.size());
    std::unordered_map<std::string, Tensor*> by_key;
    for (auto& [task, c] : calls)
      for (auto& [key, value] : c->recvs) by_key[key] = &value;
    for (size_t i = 0; i < step.fetches.size(); ++i) {
      auto it = by_key.find(step.fetches[i].key);
      if (it == by_key.end()) return errors::Internal("The worker ", step.fetches[i].task, " returned no value for ",
                                                      step.fetches[i].key);
      (*fetched)[i] = std::move(*it->second);
    }
    return Status::OK();
  }

  // CleanupGraph on every task of a step, without waiting for the answers.
  void CleanupSteps(const std::vector<std::string>& tasks, int64_t step_id) {
    for (const std::string& task : tasks) {
      if (IsLocal(task)) {
        local_worker_->CleanupStep(step_id);
        continue;
      }
      tensorflow::WorkerService::Stub* stub;
      if (!workers_->Stub(task, &stub).ok()) continue;
      struct Call {
        grpc::ClientContext ctx;
        proto::CleanupGraphRequest req;
        proto::CleanupGraphResponse resp;
      };
      auto call = std::make_shared<Call>();
      SetDeadline(&call->ctx, kCleanupTimeoutMs);
      call->req.set_step_id(step_id);
      auto workers = workers_;  // the channel outlives the call
      stub->async()->CleanupGraph(&call->ctx, &call->req, &call->resp, [call, workers](grpc::Status) {});
    }
  }

  // This task's worker is called directly unless the session asks for RPC
  // to what is in this process (rpc_options.use_rpc_for_inprocess_master,
  // which TensorFlow reads for the master only).
  bool IsLocal(const std::string& task) const {
    return local_worker_ != nullptr && task == local_task_ && !config_.rpc_options().use_rpc_for_inprocess_master();
  }

  const std::string handle_;
  const proto::ConfigProto config_;
  const std::shared_ptr<WorkerCache> workers_;
  const std::string local_task_;
  const std::shared_ptr<Worker> local_worker_;
  const std::vector<ClusterDevice> devices_;
  const std::vector<std::string> tasks_;  // those the device filters allow

  std::mutex build_mu_;  // one signature built and registered at a time
  std::mutex mu_;
  std::unique_ptr<Graph> graph_;
  int64_t version_ = 0;
  bool closed_ = false;
  std::map<std::string, std::shared_ptr<RegisteredStep>> steps_;
  std::map<int64_t, std::shared_ptr<Callable>> callables_;
  int64_t next_callable_ = 0;
  int active_steps_ = 0;
  std::condition_variable idle_;
  std::set<std::shared_ptr<grpc::ClientContext>> running_calls_;
};

namespace {
struct LocalMasters {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<Master>> by_address;
};
LocalMasters& Locals() {
  static LocalMasters* m = new LocalMasters();
  return *m;
}
}  // namespace

void RegisterLocalMaster(const std::string& address, std::shared_ptr<Master> master) {
  std::lock_guard<std::mutex> lock(Locals().mu);
  Locals().by_address[address] = master;
}

void UnregisterLocalMaster(const std::string& address) {
  std::lock_guard<std::mutex> lock(Locals().mu);
  Locals().by_address.erase(address);
}

std::shared_ptr<Master> FindLocalMaster(const std::string& address) {
  std::lock_guard<std::mutex> lock(Locals().mu);
  auto it = Locals().by_address.find(address);
  return it == Locals().by_address.end() ? nullptr : it->second.lock();
}

Master::Master(std::string task, proto::ConfigProto default_config, std::shared_ptr<WorkerCache> workers,
               std::shared_ptr<Worker> local_worker)
    : task_(std::move(task)),
      default_config_(std::move(default_config)),
      workers_(std::move(workers)),
      local_worker_(std::move(local_worker)),
      incarnation_(static_cast<int64_t>(DeviceIncarnation(task_ + "/master") >> 1)) {}

Master::~Master() { Shutdown(); }

void Master::Shutdown() { CloseAll(); }

size_t Master::SessionCount() {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

void Master::CloseAll() {
  std::map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  for (auto& [handle, session] : sessions) session->Close();
}

Status Master::FindSession(const std::string& handle, std::shared_ptr<MasterSession>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end())
    return errors::Aborted("Session ", handle, " is not found. Possibly, this master has restarted.");
  *out = it->second;
  return Status::OK();
}

grpc::Status Master::CreateSession(grpc::ServerContext* ctx, const proto::CreateSessionRequest* req,
                                   proto::CreateSessionResponse* resp) {
  return Reply(StatusFromExceptions("CreateSession", [&] { return CreateSessionImpl(ctx, *req, resp); }));
}

Status Master::CreateSessionImpl(grpc::ServerContext* ctx, const proto::CreateSessionRequest& req,
                                 proto::CreateSessionResponse* resp) {
  GR_RETURN_IF_ERROR(ValidateGraphDefSyntax(req.graph_def()));
  proto::ConfigProto config = default_config_;
  config.MergeFrom(req.config());
  if (config.use_per_session_threads() || config.session_inter_op_thread_pool_size() > 0)
    return errors::InvalidArgument("Distributed session does not support session thread pool options.");
  if (config.cluster_def().job_size() > 0)
    return errors::Unimplemented("ClusterSpec propagation (ConfigProto.cluster_def) is not supported yet: start each "
                                 "task's server with the cluster instead");
  // The tasks the session may use; the master's own first.
  std::vector<std::string> tasks;
  for (const auto& [task, address] : workers_->addresses())
    if (TaskPassesFilters(task, config.device_filters()) && task != task_) tasks.push_back(task);
  if (TaskPassesFilters(task_, config.device_filters())) tasks.insert(tasks.begin(), task_);
  if (tasks.empty()) return errors::InvalidArgument("The device_filters leave no task of the cluster");

  // Device discovery: every task, in parallel, waiting for tasks not up yet
  // until the deadline; then the error names those that never answered.
  int64_t timeout_ms =
      config.operation_timeout_in_ms() > 0 ? config.operation_timeout_in_ms() : kDefaultDiscoveryTimeoutMs;
  // Within the caller's own deadline, with time left to tell it which tasks
  // did not answer.
  if (const int64_t deadline = DeadlineNanos(ctx); deadline > 0) {
    const int64_t left_ms = (deadline - NowSteadyNanos()) / 1000000;
    timeout_ms = std::max<int64_t>(1, std::min(timeout_ms, left_ms - std::min<int64_t>(200, left_ms / 5)));
  }
  std::map<std::string, proto::GetStatusResponse> statuses;
  auto results = CallTasks<proto::GetStatusRequest, proto::GetStatusResponse>(
      workers_, tasks, &tensorflow::WorkerService::Stub::async::GetStatus, timeout_ms, /*wait_for_ready=*/true, nullptr,
      [&](const std::string& task, const proto::GetStatusResponse& r) { statuses[task] = r; });
  std::string missing;
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string last_error;
  for (const auto& [task, s] : results) {
    if (s.ok()) continue;
    missing += (missing.empty() ? "" : ", ") + task + " (" + workers_->addresses().at(task) + ")";
    if (code == grpc::StatusCode::OK) code = s.error_code();
    last_error = s.error_message();
  }
  if (!missing.empty())
    return Status(static_cast<Code>(code), "CreateSession: these tasks did not answer within " +
                                               std::to_string(timeout_ms) + " ms: " + missing + " (" + last_error +
                                               "). Start them, or leave them out with ConfigProto.device_filters.");
  std::vector<ClusterDevice> devices;
  for (const std::string& task : tasks)
    for (const proto::DeviceAttributes& d : statuses[task].device_attributes())
      devices.push_back({d.name(), d.device_type(), d.incarnation()});

  auto graph = std::make_unique<Graph>(&Runtime::Global().ops());
  GR_RETURN_IF_ERROR(ConvertGraphDefToGraph(req.graph_def(), graph.get()));
  GR_RETURN_IF_ERROR(PlaceOnCluster(devices, config, graph.get()));

  const std::string handle = RandomHandle();
  auto created = CallTasks<proto::CreateWorkerSessionRequest, proto::CreateWorkerSessionResponse>(
      workers_, tasks, &tensorflow::WorkerService::Stub::async::CreateWorkerSession, timeout_ms, false,
      [&](const std::string&, proto::CreateWorkerSessionRequest* r) {
        r->set_session_handle(handle);
        r->set_isolate_session_state(config.isolate_session_state());
        r->set_master_task(task_);
        r->set_master_incarnation(incarnation_);
      });
  for (const auto& [task, s] : created)
    if (!s.ok()) return CallError(s, "CreateWorkerSession", task);
  auto session = std::make_shared<MasterSession>(handle, config, workers_, task_, local_worker_, std::move(devices), std::move(tasks),
                                                 std::move(graph));
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[handle] = session;
  }
  resp->set_session_handle(handle);
  resp->set_graph_version(0);
  return Status::OK();
}

grpc::Status Master::ExtendSession(grpc::ServerContext*, const proto::ExtendSessionRequest* req,
                                   proto::ExtendSessionResponse* resp) {
  std::shared_ptr<MasterSession> session;
  Status s = FindSession(req->session_handle(), &session);
  int64_t version = 0;
  if (s.ok())
    s = StatusFromExceptions("ExtendSession",
                             [&] { return session->Extend(req->graph_def(), req->current_graph_version(), &version); });
  if (s.ok()) resp->set_new_graph_version(version);
  return Reply(s);
}

grpc::Status Master::PartialRunSetup(grpc::ServerContext*, const proto::PartialRunSetupRequest*,
                                     proto::PartialRunSetupResponse*) {
  return Reply(errors::Unimplemented("Partial runs (PartialRunSetup) are not supported by graphrt, in a single "
                                     "process or distributed"));
}

Status Master::RunStepTensors(const proto::RunStepRequest& req, const NamedTensors& feeds,
                              proto::RunStepResponse* resp, NamedTensors* outputs) {
  if (!req.partial_run_handle().empty()) return errors::Unimplemented("Partial runs are not supported by graphrt");
  std::shared_ptr<MasterSession> session;
  GR_RETURN_IF_ERROR(FindSession(req.session_handle(), &session));
  const std::vector<std::string> fetches(req.fetch().begin(), req.fetch().end());
  const std::vector<std::string> targets(req.target().begin(), req.target().end());
  return StatusFromExceptions("RunStep", [&] { return session->Run(req.options(), feeds, fetches, targets, outputs); });
}

// One RunStep call, as RunGraph's on a worker: feeds read straight into
// tensors, the step run on a blocking-call thread, the fetched tensors
// written out from their own buffers.
class Master::RunStepCall final : public grpc::ServerUnaryReactor {
 public:
  RunStepCall(Master* master, grpc::ByteBuffer* response) : master_(master), response_(response) {}

  void Start(const grpc::ByteBuffer* request_bytes) {
    grpc::ByteBuffer request_copy(*request_bytes);  // (shares the slices)
    Status s = DecodeWithTensors(&request_copy, kRunStepFeedField, &proto::RunStepRequest::mutable_feed,
                                 HostAllocator(), &req_, &feeds_);
    if (!s.ok()) return Finish(ToGrpcStatus(s));
    try {
      master_->run_step_threads_.Run([this] { Run(); });
    } catch (const std::system_error& e) {
      Finish(ToGrpcStatus(errors::ResourceExhausted("RunStep on ", master_->task_, ": no thread to run it: ", e.what())));
    }
  }

  void OnDone() override { delete this; }

 private:
  void Run() {
    proto::RunStepResponse resp;
    NamedTensors outputs;
    Status s = master_->RunStepTensors(req_, feeds_, &resp, &outputs);
    feeds_.clear();
    // The last use of this call: OnDone deletes it.
    Finish(AnswerWithTensors(s, req_.store_errors_in_response_body(), kRunStepTensorField, &resp, outputs, response_));
  }

  Master* const master_;
  grpc::ByteBuffer* const response_;
  proto::RunStepRequest req_;
  NamedTensors feeds_;
};

grpc::ServerUnaryReactor* Master::RunStep(grpc::CallbackServerContext*, const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) {
  auto* call = new RunStepCall(this, response);
  call->Start(request);
  return call;
}

grpc::Status Master::CloseSession(grpc::ServerContext*, const proto::CloseSessionRequest* req,
                                  proto::CloseSessionResponse*) {
  std::shared_ptr<MasterSession> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(req->session_handle());
    if (it == sessions_.end())
      return Reply(errors::Aborted("Session ", req->session_handle(),
                                   " is not found. Possibly, this master has restarted."));
    session = std::move(it->second);
    sessions_.erase(it);
  }
  session->Close();
  return grpc::Status::OK;
}

grpc::Status Master::ListDevices(grpc::ServerContext*, const proto::ListDevicesRequest* req,
                                 proto::ListDevicesResponse* resp) {
  auto add = [&](const ClusterDevice& d) {
    std::string task;
    proto::DeviceAttributes* a =
        TaskOfDevice(d.name, &task).ok() && task == task_ ? resp->add_local_device() : resp->add_remote_device();
    a->set_name(d.name);
    a->set_device_type(d.type);
    a->set_incarnation(d.incarnation);
  };
  if (!req->session_handle().empty()) {
    std::shared_ptr<MasterSession> session;
    Status s = FindSession(req->session_handle(), &session);
    if (!s.ok()) return Reply(errors::InvalidArgument(s.message()));
    for (const ClusterDevice& d : session->devices()) add(d);
    return grpc::Status::OK;
  }
  std::vector<std::string> tasks;
  for (const auto& [task, address] : workers_->addresses()) tasks.push_back(task);
  std::map<std::string, proto::GetStatusResponse> statuses;
  auto results = CallTasks<proto::GetStatusRequest, proto::GetStatusResponse>(
      workers_, tasks, &tensorflow::WorkerService::Stub::async::GetStatus, kCleanupTimeoutMs, false, nullptr,
      [&](const std::string& task, const proto::GetStatusResponse& r) { statuses[task] = r; });
  for (const auto& [task, s] : results)
    if (!s.ok()) return Reply(CallError(s, "GetStatus", task));
  for (const std::string& task : tasks)
    for (const proto::DeviceAttributes& d : statuses[task].device_attributes())
      *(task == task_ ? resp->add_local_device() : resp->add_remote_device()) = d;
  return grpc::Status::OK;
}

grpc::Status Master::Reset(grpc::ServerContext*, const proto::ResetRequest* req, proto::ResetResponse*) {
  CloseAll();
  std::vector<std::string> tasks;
  for (const auto& [task, address] : workers_->addresses())
    if (TaskPassesFilters(task, req->device_filters())) tasks.push_back(task);
  auto results = CallTasks<proto::CleanupAllRequest, proto::CleanupAllResponse>(
      workers_, tasks, &tensorflow::WorkerService::Stub::async::CleanupAll, kCleanupTimeoutMs, false,
      [&](const std::string&, proto::CleanupAllRequest* r) { *r->mutable_container() = req->container(); });
  for (const auto& [task, s] : results)
    if (!s.ok()) return Reply(CallError(s, "CleanupAll", task));
  return grpc::Status::OK;
}

grpc::Status Master::MakeCallable(grpc::ServerContext*, const proto::MakeCallableRequest* req,
                                  proto::MakeCallableResponse* resp) {
  std::shared_ptr<MasterSession> session;
  Status s = FindSession(req->session_handle(), &session);
  int64_t handle = 0;
  if (s.ok()) s = StatusFromExceptions("MakeCallable", [&] { return session->MakeCallable(req->options(), &handle); });
  if (s.ok()) resp->set_handle(handle);
  return Reply(s);
}

grpc::Status Master::RunCallable(grpc::ServerContext*, const proto::RunCallableRequest* req,
                                 proto::RunCallableResponse* resp) {
  std::shared_ptr<MasterSession> session;
  Status s = FindSession(req->session_handle(), &session);
  if (s.ok()) s = StatusFromExceptions("RunCallable", [&] { return session->RunCallable(req->handle(), *req, resp); });
  return Reply(s);
}

grpc::Status Master::ReleaseCallable(grpc::ServerContext*, const proto::ReleaseCallableRequest* req,
                                     proto::ReleaseCallableResponse*) {
  std::shared_ptr<MasterSession> session;
  Status s = FindSession(req->session_handle(), &session);
  if (s.ok()) s = session->ReleaseCallable(req->handle());
  return Reply(s);
}

}  // namespace distributed
}  // namespace graphrt
