// The MasterService (TensorFlow's Master, tf_distributed_facts.md section
// 6): holds the sessions that clients create, places their graphs over the
// cluster's devices, and runs each step as partitions on the workers.
#ifndef GRAPHRT_DISTRIBUTED_SRC_MASTER_H_
#define GRAPHRT_DISTRIBUTED_SRC_MASTER_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "graphrt/proto/master.pb.h"
#include "grpc_util.h"
#include "tensor_coding.h"

namespace graphrt {
namespace distributed {

class MasterSession;
class Worker;

// RunStep is served raw: its feeds and fetches are read into and written
// from tensors without a message in between (tensor_coding.h).
class Master final : public tensorflow::MasterService::WithRawCallbackMethod_RunStep<
                         tensorflow::MasterService::Service> {
 public:
  // `task`: this server's own ("/job:worker/replica:0/task:0"), whose
  // devices come first in placement; `workers`: every task of the cluster,
  // this one included; `local_worker`: this task's, which steps call
  // directly (TensorFlow's LocalWorker; null: over RPC like the others).
  Master(std::string task, proto::ConfigProto default_config, std::shared_ptr<WorkerCache> workers,
         std::shared_ptr<Worker> local_worker = nullptr);
  ~Master() override;
  // Closes every session (the server is stopping).
  void Shutdown();
  // Sessions open now (the server's status line).
  size_t SessionCount();

  grpc::Status CreateSession(grpc::ServerContext*, const proto::CreateSessionRequest*,
                             proto::CreateSessionResponse*) override;
  grpc::Status ExtendSession(grpc::ServerContext*, const proto::ExtendSessionRequest*,
                             proto::ExtendSessionResponse*) override;
  grpc::Status PartialRunSetup(grpc::ServerContext*, const proto::PartialRunSetupRequest*,
                               proto::PartialRunSetupResponse*) override;
  grpc::ServerUnaryReactor* RunStep(grpc::CallbackServerContext*, const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  // What RunStep does, for a client in this process (TensorFlow's
  // LocalMaster): `req` without its feed, whose tensors are `feeds`; each
  // fetch once by name into `outputs`, the rest of the answer into `resp`.
  Status RunStepTensors(const proto::RunStepRequest& req, const NamedTensors& feeds, proto::RunStepResponse* resp,
                        NamedTensors* outputs);
  grpc::Status CloseSession(grpc::ServerContext*, const proto::CloseSessionRequest*,
                            proto::CloseSessionResponse*) override;
  grpc::Status ListDevices(grpc::ServerContext*, const proto::ListDevicesRequest*,
                           proto::ListDevicesResponse*) override;
  grpc::Status Reset(grpc::ServerContext*, const proto::ResetRequest*, proto::ResetResponse*) override;
  grpc::Status MakeCallable(grpc::ServerContext*, const proto::MakeCallableRequest*,
                            proto::MakeCallableResponse*) override;
  grpc::Status RunCallable(grpc::ServerContext*, const proto::RunCallableRequest*,
                           proto::RunCallableResponse*) override;
  grpc::Status ReleaseCallable(grpc::ServerContext*, const proto::ReleaseCallableRequest*,
                               proto::ReleaseCallableResponse*) override;

 private:
  Status FindSession(const std::string& handle, std::shared_ptr<MasterSession>* out);
  Status CreateSessionImpl(grpc::ServerContext* ctx, const proto::CreateSessionRequest& req,
                           proto::CreateSessionResponse* resp);
  void CloseAll();

  const std::string task_;
  const proto::ConfigProto default_config_;
  const std::shared_ptr<WorkerCache> workers_;
  const std::shared_ptr<Worker> local_worker_;
  const int64_t incarnation_;  // of this master: workers drop sessions of an earlier one
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<MasterSession>> sessions_;
  class RunStepCall;
  // Last: destroyed first, waiting for the steps under way.
  BlockingCallThreads run_step_threads_;
};

// The masters of this process's servers by address ("localhost:PORT" and
// the cluster's address of their task): a grpc:// session to one of them
// calls it directly.
void RegisterLocalMaster(const std::string& address, std::shared_ptr<Master> master);
void UnregisterLocalMaster(const std::string& address);
std::shared_ptr<Master> FindLocalMaster(const std::string& address);

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_SRC_MASTER_H_
