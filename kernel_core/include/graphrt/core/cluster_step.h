// What a distributed runtime (client/distributed: Master, Worker) needs of
// the core. The master's side: a session's graph placed over a cluster's
// devices, and one step's graph cut into one partition per task, by the
// same pipeline a DirectSession runs (client graph, placement, passes,
// partition). The worker's side: such a partition, registered once and run
// step by step with the worker's rendezvous, on this process's devices.
#ifndef GRAPHRT_CORE_CLUSTER_STEP_H_
#define GRAPHRT_CORE_CLUSTER_STEP_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/rendezvous.h"
#include "graphrt/core/status.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/config.pb.h"
#include "graphrt/proto/graph.pb.h"
#include "graphrt/proto/step_stats.pb.h"

namespace graphrt {

class CancellationRegistry;

// A device's incarnation: a non-zero number fixed for this process's life
// and different in every process, so that transfers addressed to a device
// of a restarted process are told apart (TensorFlow's
// DeviceAttributes.incarnation; the middle field of a rendezvous key).
uint64_t DeviceIncarnation(const std::string& device_name);

// A device of a cluster, as its task reports it (GetStatus).
struct ClusterDevice {
  std::string name;  // "/job:ps/replica:0/task:0/device:CPU:0"
  std::string type;  // "CPU"
  uint64_t incarnation = 0;
};

// "/job:ps/replica:0/task:0" of a full device name; InvalidArgument unless
// the name has a job, replica, task, type and index.
Status TaskOfDevice(const std::string& device_name, std::string* task);

// Places the nodes of `g` not yet placed over `devices` (the master's own
// first: unconstrained nodes go there), specs' jobs and tasks choosing
// among them, with ConfigProto's soft placement; then infers shapes.
// InvalidArgument names the node and its spec when no device matches.
Status PlaceOnCluster(const std::vector<ClusterDevice>& devices, const proto::ConfigProto& config, Graph* g);

// One step of a placed session graph, partitioned by task.
struct ClusterStep {
  // Task ("/job:worker/replica:0/task:1") -> its partition: every node
  // with its full device, _Send/_Recv pairs on the edges between tasks,
  // and client-terminated transfers for the feeds and fetches.
  std::map<std::string, proto::GraphDef> partitions;
  struct Endpoint {
    std::string task;  // whose RunGraph carries it
    std::string key;   // its rendezvous key there
  };
  std::vector<Endpoint> feeds;    // in the order of `feeds` given
  std::vector<DataType> feed_types;
  std::vector<Endpoint> fetches;  // likewise
};

// The step that feeds `feeds` and fetches `fetches` and runs `targets` of
// `g` (placed by PlaceOnCluster), through the pipeline a DirectSession's
// step takes: the client graph (TensorFlow's errors for unknown names),
// placement of what it adds, the graph passes, then Partition by task.
Status BuildClusterStep(const Graph& g, const std::vector<ClusterDevice>& devices, const proto::ConfigProto& config,
                        const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                        const std::vector<std::string>& targets, ClusterStep* out);

class SessionState;
class ResourceMgr;
namespace cluster_internal {
struct WorkerGraphImpl;
}  // namespace cluster_internal

// Resources (variables, queues, ...) that several worker sessions share:
// those of a worker's sessions that do not isolate their state live here
// and outlive the sessions (TensorFlow's device resource managers).
class SharedResources {
 public:
  SharedResources();
  ~SharedResources();
  // CleanupAll: drops every resource of `containers` (none: the default
  // container).
  void Cleanup(const std::vector<std::string>& containers);

 private:
  friend class WorkerState;
  std::shared_ptr<ResourceMgr> resources_;
};

// Ends one step of a WorkerGraph from another thread, as deleting its
// session would: kernels that wait are woken and the step ends CANCELLED
// (TensorFlow cancels a step whose RunGraph call was cancelled). Cancel
// before the step starts makes it end at once; after it ends, nothing.
class StepCancellation {
 public:
  StepCancellation();
  ~StepCancellation();
  StepCancellation(const StepCancellation&) = delete;
  StepCancellation& operator=(const StepCancellation&) = delete;
  void Cancel();

 private:
  friend class WorkerGraph;
  std::unique_ptr<CancellationRegistry> registry_;
};

// The state the graphs of one worker session share: its stateful kernels,
// its memory budget, and its resources (its own, or `shared`'s). Graphs
// registered in the session hold it; it goes with the last of them.
class WorkerState {
 public:
  // `shared` null: the session's state is isolated (its own resources).
  WorkerState(const proto::ConfigProto& config, SharedResources* shared);
  ~WorkerState();
  WorkerState(const WorkerState&) = delete;
  WorkerState& operator=(const WorkerState&) = delete;
  // Ends steps waiting on asynchronous kernels (a session being deleted).
  void Cancel();

 private:
  friend class WorkerGraph;
  std::unique_ptr<SessionState> state_;
};

// One partition a worker was given (RegisterGraph), ready to run steps.
class WorkerGraph {
 public:
  // `graph`'s nodes must all be on devices of `task`
  // ("/job:worker/replica:0/task:1"; this process's devices of the same type
  // and index run them). InvalidArgument names a node without a full device
  // or on another task.
  static Status Create(const proto::GraphDef& graph, const std::string& task, std::shared_ptr<WorkerState> state,
                       std::unique_ptr<WorkerGraph>* out);
  ~WorkerGraph();

  struct StepArgs {
    int64_t step_id = 0;
    // Where this partition's _Send/_Recv meet: the client's feeds are sent
    // into it before the step, its fetches received from it after.
    Rendezvous* rendezvous = nullptr;
    // steady_clock nanoseconds; 0: none.
    int64_t deadline_nanos = 0;
    // Set to end the step early (CANCELLED); may be null.
    const std::atomic<bool>* cancelled = nullptr;
    // Cancels this step alone, as deleting its session would (kernels that
    // wait are woken); may be null.
    StepCancellation* cancellation = nullptr;
    proto::StepStats* stats = nullptr;  // when tracing
  };
  Status Run(const StepArgs& args);

 private:
  using Impl = cluster_internal::WorkerGraphImpl;
  explicit WorkerGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_CLUSTER_STEP_H_
