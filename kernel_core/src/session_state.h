// What the executors of one session share, whoever runs them: the thread
// arena, the memory budget, the file-access policy, the resources
// (variables) and the stateful kernels that hold them. A DirectSession has
// one; so does each worker session of a distributed worker
// (cluster_step.h), whose registered graphs share it as the executors of
// one DirectSession do.
#ifndef GRAPHRT_CORE_SRC_SESSION_STATE_H_
#define GRAPHRT_CORE_SRC_SESSION_STATE_H_

#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cancellation.h"
#include "executor.h"
#include "file_access.h"
#include "graph_passes.h"
#include "graphrt/core/partition.h"
#include "memory_budget.h"
#include "resource_mgr.h"
#include "graphrt/proto/config.pb.h"

namespace graphrt {

class SessionState {
 public:
  // `shared_resources`: resources this session shares with others (a
  // worker's sessions that do not isolate their state); null: its own.
  SessionState(const proto::ConfigProto& config, std::unique_ptr<FileAccessPolicy> file_access,
               std::shared_ptr<ResourceMgr> shared_resources = nullptr);
  // The budget lives on while tensors the session returned do.
  ~SessionState();
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;

  int num_threads() const { return num_threads_; }
  tbb::task_arena* arena() const { return arena_.get(); }
  // Host memory within the session's budget (attr tensors, feeds).
  Allocator* host_allocator() const { return host_allocator_; }
  int64_t memory_limit() const { return budget_->limit(); }
  // The session's view of a device's memory: host memory counts against
  // the budget.
  Allocator* AllocatorFor(Device* d);
  const FileAccessPolicy* file_access() const { return file_access_.get(); }
  ResourceMgr* resources() { return resources_.get(); }
  // Cancelled by Clear: steps waiting for asynchronous kernels stop waiting.
  CancellationRegistry* cancellation() { return &cancellation_; }

  // The kernel `n` runs with on `device`: a fresh one (*owned), or, for a
  // stateful node, the one created for its name the first time, shared by
  // every executor so that state survives across signatures. (Transfers
  // are stateful only so that no pass merges them: each executor's are its
  // own.)
  Status GetKernel(const Node& n, Device* device, const KernelRegistration** reg, void** kernel, bool* owned);

  // Cancels waiting steps, then drops the stateful kernels and the
  // session's own resources (Session::Close: the state goes now, not with
  // the object); shared resources stay.
  void Clear();

 private:
  struct SharedKernel {
    const KernelRegistration* reg = nullptr;
    void* kernel = nullptr;
  };
  Status CreateKernel(const Node& n, Device* device, const KernelRegistration** reg, void** kernel);

  int num_threads_ = 1;
  std::unique_ptr<tbb::task_arena> arena_;
  std::mutex budget_mu_;  // MemoryBudget::AllocatorFor is not thread-safe
  MemoryBudget* budget_;
  Allocator* host_allocator_;
  const std::unique_ptr<FileAccessPolicy> file_access_;  // null: no restriction
  CancellationRegistry cancellation_;
  std::mutex kernel_mu_;
  std::unordered_map<std::string, SharedKernel> stateful_kernels_;
  std::shared_ptr<ResourceMgr> resources_;
  bool owns_resources_;
};

// What a session's steps and a worker's registered graphs both do around
// their executor, on the devices `device_named` finds:
// TensorFlow's partition options: the devices' incarnations, and which
// args each node's kernel on its device declares HostMemory.
PartitionOptions TransferPartitionOptions(const DeviceLookupFn& device_named);
// InsertTransfers wherever two devices do not both work in host memory.
Status InsertStepTransfers(const DeviceLookupFn& device_named, Graph* g, int* num_transfers);
// The devices of `executor` whose compute streams its kernels enqueue on.
std::vector<Device*> StreamedDevices(const Executor& executor);
// Waits for those streams after a step, even a failed one (nothing a step
// enqueued may outlive it): the step's status, else the first stream error.
Status SyncStreams(const std::vector<Device*>& devices, Status step);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_SESSION_STATE_H_
