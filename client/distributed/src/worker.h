// The WorkerService (TensorFlow's Worker, tf_distributed_facts.md section
// 7): runs the partitions a master registers, step by step, and serves the
// tensors its steps send to the partitions on other tasks (RecvTensor).
#ifndef GRAPHRT_DISTRIBUTED_SRC_WORKER_H_
#define GRAPHRT_DISTRIBUTED_SRC_WORKER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/core/cluster_step.h"
#include "graphrt/proto/worker.pb.h"
#include "grpc_util.h"
#include "tensor_coding.h"

namespace graphrt {
namespace distributed {

class StepRendezvous;


// What a worker forgets by itself (TensorFlow's worker keeps both forever
// when a master dies without cleaning up).
struct WorkerLimits {
  // A step's rendezvous that no call has used for this long is aborted and
  // dropped (its CleanupGraph never came). 0: never.
  int64_t step_idle_seconds = 600;
  // A worker session no call has used for this long is deleted. 0: never
  // (sessions of long idle clients stay; a restarted master's go anyway).
  int64_t session_idle_seconds = 0;
};

// RecvTensor is served asynchronously and raw: no thread waits for the
// value, which goes out from the tensor's own buffer (tensor_coding.h).
// RunGraph is raw too: its feeds and fetches are read into and written from
// tensors without a message in between.
class Worker final : public tensorflow::WorkerService::WithRawCallbackMethod_RunGraph<
                         tensorflow::WorkerService::WithRawCallbackMethod_RecvTensor<
                             tensorflow::WorkerService::Service>> {
 public:
  // `task`: "/job:worker/replica:0/task:0"; `workers`: the cluster's tasks,
  // which this worker's steps pull tensors from.
  Worker(std::string task, const proto::ConfigProto& config, std::shared_ptr<WorkerCache> workers,
         WorkerLimits limits = {});
  ~Worker() override;

  const std::string& task() const { return task_; }
  // This process's devices under the task's name, with their incarnations.
  const std::vector<proto::DeviceAttributes>& devices() const { return devices_; }
  // Ends every step (ABORTED "Call was aborted"): the server is stopping.
  void Shutdown();

  // What RunGraph and CleanupGraph do, called directly by the master of
  // this process (TensorFlow's LocalWorker): no RPC to itself.
  // `req` without its send, whose tensors are `sends`; the fetched
  // (req.recv_key's) into `recvs`, the rest of the answer into `resp`.
  // `deadline_nanos`: steady_clock, 0 for none; `cancellation` (may be
  // null) ends this step alone.
  Status RunGraphTensors(const proto::RunGraphRequest& req, const NamedTensors& sends, int64_t deadline_nanos,
                         StepCancellation* cancellation, NamedTensors* recvs, proto::RunGraphResponse* resp);
  void CleanupStep(int64_t step_id);
  // Worker sessions and step rendezvous held now (the server's status line).
  void Counts(size_t* sessions, size_t* steps);
  // Ends the steps of worker session `handle` that wait on asynchronous
  // kernels (its master session is closing).
  void CancelSession(const std::string& handle);

  grpc::Status GetStatus(grpc::ServerContext*, const proto::GetStatusRequest*, proto::GetStatusResponse*) override;
  grpc::Status CreateWorkerSession(grpc::ServerContext*, const proto::CreateWorkerSessionRequest*,
                                   proto::CreateWorkerSessionResponse*) override;
  grpc::Status DeleteWorkerSession(grpc::ServerContext*, const proto::DeleteWorkerSessionRequest*,
                                   proto::DeleteWorkerSessionResponse*) override;
  grpc::Status RegisterGraph(grpc::ServerContext*, const proto::RegisterGraphRequest*,
                             proto::RegisterGraphResponse*) override;
  grpc::Status DeregisterGraph(grpc::ServerContext*, const proto::DeregisterGraphRequest*,
                               proto::DeregisterGraphResponse*) override;
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext*, const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::Status CleanupGraph(grpc::ServerContext*, const proto::CleanupGraphRequest*,
                            proto::CleanupGraphResponse*) override;
  grpc::Status CleanupAll(grpc::ServerContext*, const proto::CleanupAllRequest*, proto::CleanupAllResponse*) override;
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext*, const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::Status Logging(grpc::ServerContext*, const proto::LoggingRequest*, proto::LoggingResponse*) override;
  grpc::Status Tracing(grpc::ServerContext*, const proto::TracingRequest*, proto::TracingResponse*) override;
  grpc::Status MarkRecvFinished(grpc::ServerContext*, const proto::MarkRecvFinishedRequest*,
                                proto::MarkRecvFinishedResponse*) override;

 private:
  struct Session {
    std::shared_ptr<WorkerState> state;
    std::map<std::string, std::shared_ptr<WorkerGraph>> graphs;  // by graph handle
    std::string master_task;
    int64_t master_incarnation = 0;
    int64_t last_used_nanos = 0;  // under mu_
  };
  struct StepEntry {
    std::shared_ptr<StepRendezvous> rendezvous;
    int64_t last_used_nanos = 0;
    int running = 0;  // RunGraphs of the step in progress: never idle then
  };
  // Drops idle steps and sessions (WorkerLimits) until Shutdown.
  void ReapIdle();
  // The session a request names; the legacy session when the master did
  // not create one (create_worker_session_called false).
  Status FindSession(const std::string& handle, bool created, std::shared_ptr<Session>* out);
  class RunGraphCall;
  class RecvTensorCall;
  // The rendezvous of step `step_id`, made on demand: a peer's RecvTensor
  // may come before this worker's RunGraph.
  std::shared_ptr<StepRendezvous> Step(int64_t step_id);
  // Marks a RunGraph of `step_id` in progress (or over, with -1).
  void StepRunning(int64_t step_id, int delta);

  const std::string task_;
  const proto::ConfigProto config_;
  std::shared_ptr<WorkerCache> workers_;
  std::vector<proto::DeviceAttributes> devices_;
  Allocator* host_allocator_ = HostAllocator();  // this process's CPU's
  SharedResources shared_resources_;
  std::atomic<bool> shutting_down_{false};

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  std::shared_ptr<Session> legacy_session_;
  uint64_t next_graph_ = 0;
  std::map<int64_t, StepEntry> steps_;
  // The Logging RPC: while enabled, each RunGraph's step stats, kept for
  // the master to fetch (at most kMaxLoggedSteps, oldest dropped first).
  static constexpr size_t kMaxLoggedSteps = 1000;
  bool rpc_logging_ = false;  // under mu_
  std::map<int64_t, proto::StepStats> logged_steps_;  // under mu_
  std::deque<int64_t> logged_order_;                  // under mu_: oldest first
  const WorkerLimits limits_;
  std::condition_variable reaper_cv_;  // with mu_: Shutdown wakes the reaper
  std::thread reaper_;
  // Last: destroyed first, waiting for the RunGraphs under way while the
  // rest of the worker is still there.
  BlockingCallThreads run_graph_threads_;
};

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_SRC_WORKER_H_
