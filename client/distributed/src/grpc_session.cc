// The grpc:// session target (TensorFlow's GrpcSession): the Session API
// over a master's MasterService.
#include <mutex>
#include <unordered_map>

#include "graphrt/core/session.h"
#include "graphrt/distributed/server.h"
#include "graphrt/proto/master.pb.h"
#include "grpc_util.h"
#include "master.h"
#include "tensor_coding.h"

namespace graphrt {
namespace distributed {
namespace {

constexpr char kScheme[] = "grpc://";
// How long Create waits for a master that is not up yet when the session
// sets no operation_timeout_in_ms.
constexpr int64_t kDefaultCreateTimeoutMs = 60000;

class GrpcSession final : public Session {
 public:
  GrpcSession(const SessionOptions& options, const std::shared_ptr<grpc::ChannelCredentials>& credentials)
      : options_(options), address_(options.target.substr(sizeof(kScheme) - 1)) {
    // A master in this process is called directly (TensorFlow's LocalMaster)
    // unless the session asks for RPC.
    if (!options.config.rpc_options().use_rpc_for_inprocess_master()) local_master_ = FindLocalMaster(address_);
    if (!local_master_) {
      auto channel = NewChannel(address_, credentials);
      stub_ = tensorflow::MasterService::NewStub(channel);
      generic_stub_ = std::make_unique<grpc::GenericStub>(channel);
    }
  }

  ~GrpcSession() override { Close().IgnoreError(); }

  Status Create(const proto::GraphDef& graph) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!handle_.empty()) return errors::AlreadyExists("Session already has a graph; use Extend() to add nodes.");
    return CreateLocked(graph);
  }

  Status Extend(const proto::GraphDef& graph) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (handle_.empty()) return CreateLocked(graph);
    proto::ExtendSessionRequest req;
    req.set_session_handle(handle_);
    *req.mutable_graph_def() = graph;
    req.set_current_graph_version(version_);
    proto::ExtendSessionResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx, options_.config.operation_timeout_in_ms());
    GR_RETURN_IF_ERROR(Call("ExtendSession", Invoke(&Stub::ExtendSession, &Master::ExtendSession, &ctx, req, &resp)));
    version_ = resp.new_graph_version();
    return Status::OK();
  }

  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs, const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs) override {
    return Run(proto::RunOptions(), inputs, output_names, target_nodes, outputs, nullptr);
  }

  Status Run(const proto::RunOptions& run_options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& target_nodes,
             std::vector<Tensor>* outputs, proto::RunMetadata* run_metadata) override {
    proto::RunStepRequest req;
    GR_RETURN_IF_ERROR(Handle(req.mutable_session_handle()));
    // The feeds and fetches travel as tensors, not in the messages
    // (tensor_coding.h).
    NamedTensors feeds;
    for (const auto& [name, value] : inputs) {
      if (!value.IsInitialized()) return errors::InvalidArgument("Feed '", name, "' is an uninitialized tensor");
      feeds.emplace_back(name, value);
    }
    // Each name once; the outputs repeat them.
    std::unordered_map<std::string, int> fetch_index;
    for (const std::string& name : output_names)
      if (fetch_index.emplace(name, req.fetch_size()).second) req.add_fetch(name);
    for (const std::string& t : target_nodes) req.add_target(t);
    *req.mutable_options() = run_options;
    req.set_store_errors_in_response_body(true);
    proto::RunStepResponse resp;
    NamedTensors fetched;
    if (local_master_) {
      GR_RETURN_IF_ERROR(local_master_->RunStepTensors(req, feeds, &resp, &fetched));
    } else {
      grpc::ClientContext ctx;
      const int64_t timeout_ms =
          run_options.timeout_in_ms() > 0 ? run_options.timeout_in_ms() : options_.config.operation_timeout_in_ms();
      SetDeadline(&ctx, timeout_ms);
      grpc::ByteBuffer response;
      GR_RETURN_IF_ERROR(Call("RunStep", CallAndWait(generic_stub_.get(), &ctx, kRunStepMethod,
                                                      EncodeWithTensors(req, kRunStepFeedField, feeds), &response)));
      GR_RETURN_IF_ERROR(DecodeWithTensors(&response, kRunStepTensorField, &proto::RunStepResponse::mutable_tensor,
                                           HostAllocator(), &resp, &fetched)
                             .WithContext("RunStep's answer from the master at " + address_));
      if (resp.status_code() != 0) return Status(static_cast<Code>(resp.status_code()), resp.status_error_message());
    }
    std::vector<Tensor> unique(req.fetch_size());
    std::vector<bool> got(req.fetch_size(), false);
    for (auto& [name, value] : fetched) {
      auto it = fetch_index.find(name);
      if (it == fetch_index.end()) return errors::Internal("RunStep returned '", name, "', which was not fetched");
      unique[it->second] = std::move(value);
      got[it->second] = true;
    }
    for (int i = 0; i < req.fetch_size(); ++i)
      if (!got[i]) return errors::Internal("RunStep returned no value for '", req.fetch(i), "'");
    if (outputs != nullptr) {
      outputs->clear();
      for (const std::string& name : output_names) outputs->push_back(unique[fetch_index.at(name)]);
    }
    if (run_metadata != nullptr) *run_metadata = resp.metadata();
    return Status::OK();
  }

  // The master's session ends; Create may start another.
  Status Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (handle_.empty()) return Status::OK();
    proto::CloseSessionRequest req;
    req.set_session_handle(handle_);
    handle_.clear();
    proto::CloseSessionResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx, 10000);
    return Call("CloseSession", Invoke(&Stub::CloseSession, &Master::CloseSession, &ctx, req, &resp));
  }

  Status MakeCallable(const proto::CallableOptions& options, CallableHandle* out_handle) override {
    proto::MakeCallableRequest req;
    GR_RETURN_IF_ERROR(Handle(req.mutable_session_handle()));
    *req.mutable_options() = options;
    proto::MakeCallableResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx, options_.config.operation_timeout_in_ms());
    GR_RETURN_IF_ERROR(Call("MakeCallable", Invoke(&Stub::MakeCallable, &Master::MakeCallable, &ctx, req, &resp)));
    *out_handle = resp.handle();
    std::lock_guard<std::mutex> lock(mu_);
    callable_timeouts_[resp.handle()] = options.run_options().timeout_in_ms();
    return Status::OK();
  }

  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                     std::vector<Tensor>* fetch_tensors, proto::RunMetadata* run_metadata) override {
    if (fetch_tensors == nullptr) return errors::InvalidArgument("`fetch_tensors` must be provided.");
    proto::RunCallableRequest req;
    GR_RETURN_IF_ERROR(Handle(req.mutable_session_handle()));
    req.set_handle(handle);
    for (const Tensor& t : feed_tensors) t.AsProtoTensorContent(req.add_feed());
    int64_t timeout_ms = options_.config.operation_timeout_in_ms();
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = callable_timeouts_.find(handle);
      if (it != callable_timeouts_.end() && it->second > 0) timeout_ms = it->second;
    }
    proto::RunCallableResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx, timeout_ms);
    GR_RETURN_IF_ERROR(Call("RunCallable", Invoke(&Stub::RunCallable, &Master::RunCallable, &ctx, req, &resp)));
    fetch_tensors->assign(resp.fetch_size(), Tensor());
    for (int i = 0; i < resp.fetch_size(); ++i) GR_RETURN_IF_ERROR(Tensor::FromProto(resp.fetch(i), &(*fetch_tensors)[i]));
    if (run_metadata != nullptr) *run_metadata = resp.metadata();
    return Status::OK();
  }

  Status ReleaseCallable(CallableHandle handle) override {
    proto::ReleaseCallableRequest req;
    GR_RETURN_IF_ERROR(Handle(req.mutable_session_handle()));
    req.set_handle(handle);
    proto::ReleaseCallableResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx, 10000);
    return Call("ReleaseCallable", Invoke(&Stub::ReleaseCallable, &Master::ReleaseCallable, &ctx, req, &resp));
  }

 private:
  Status CreateLocked(const proto::GraphDef& graph) {
    proto::CreateSessionRequest req;
    *req.mutable_graph_def() = graph;
    *req.mutable_config() = options_.config;
    req.set_target(options_.target);
    proto::CreateSessionResponse resp;
    grpc::ClientContext ctx;
    // A master that is not up yet is waited for, until the deadline.
    const int64_t timeout = options_.config.operation_timeout_in_ms();
    SetDeadline(&ctx, timeout > 0 ? timeout : kDefaultCreateTimeoutMs);
    ctx.set_wait_for_ready(true);
    GR_RETURN_IF_ERROR(Call("CreateSession", Invoke(&Stub::CreateSession, &Master::CreateSession, &ctx, req, &resp)));
    handle_ = resp.session_handle();
    version_ = resp.graph_version();
    return Status::OK();
  }

  Status Handle(std::string* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (handle_.empty()) return errors::InvalidArgument("Session was not created with a graph before Run()!");
    *out = handle_;
    return Status::OK();
  }

  using Stub = tensorflow::MasterService::Stub;
  // One MasterService call, through gRPC or to the master in this process.
  template <typename Req, typename Resp>
  grpc::Status Invoke(grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*),
                      grpc::Status (Master::*local)(grpc::ServerContext*, const Req*, Resp*), grpc::ClientContext* ctx,
                      const Req& req, Resp* resp) {
    if (local_master_) {
      grpc::ServerContext server_ctx;
      return ((*local_master_).*local)(&server_ctx, &req, resp);
    }
    return ((*stub_).*rpc)(ctx, req, resp);
  }

  // A failed call names the master it went to when it could not reach it.
  Status Call(const char* method, const grpc::Status& s) {
    return s.ok() ? Status::OK() : CallError(s, method, "the master at " + address_);
  }

  const SessionOptions options_;
  const std::string address_;
  std::shared_ptr<Master> local_master_;  // or:
  std::unique_ptr<tensorflow::MasterService::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_stub_;  // RunStep's raw calls
  std::mutex mu_;
  std::string handle_;
  int64_t version_ = 0;
  std::unordered_map<int64_t, int64_t> callable_timeouts_;
};

class GrpcSessionFactory final : public SessionFactory {
 public:
  Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* out) override {
    if (options.target.size() <= sizeof(kScheme) - 1)
      return errors::InvalidArgument("Target '", options.target, "' names no master: expected grpc://host:port");
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    GR_RETURN_IF_ERROR(ClientCredentials(&credentials));
    *out = std::make_unique<GrpcSession>(options, credentials);
    return Status::OK();
  }
};

// Loading the library makes grpc:// targets available.
const bool kRegistered = [] {
  RegisterGrpcSessionFactory();
  return true;
}();

}  // namespace

Status ListClusterDevices(const std::string& target, int64_t timeout_ms,
                          std::vector<proto::DeviceAttributes>* local, std::vector<proto::DeviceAttributes>* remote) {
  if (target.rfind(kScheme, 0) != 0 || target.size() <= sizeof(kScheme) - 1)
    return errors::InvalidArgument("Target '", target, "' names no master: expected grpc://host:port");
  const std::string address = target.substr(sizeof(kScheme) - 1);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  GR_RETURN_IF_ERROR(ClientCredentials(&credentials));
  auto stub = tensorflow::MasterService::NewStub(NewChannel(address, credentials));
  grpc::ClientContext ctx;
  SetDeadline(&ctx, timeout_ms);
  ctx.set_wait_for_ready(timeout_ms > 0);
  proto::ListDevicesRequest req;
  proto::ListDevicesResponse resp;
  grpc::Status s = stub->ListDevices(&ctx, req, &resp);
  if (!s.ok()) return CallError(s, "ListDevices", "the master at " + address);
  local->assign(resp.local_device().begin(), resp.local_device().end());
  remote->assign(resp.remote_device().begin(), resp.remote_device().end());
  return Status::OK();
}

void RegisterGrpcSessionFactory() {
  static std::once_flag once;
  std::call_once(once, [] { RegisterSessionFactory(kScheme, std::make_unique<GrpcSessionFactory>()); });
}

}  // namespace distributed
}  // namespace graphrt
