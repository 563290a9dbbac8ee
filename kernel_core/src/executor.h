// Runs one partition of a graph on one device by dependency counting.
#ifndef GRAPHRT_CORE_SRC_EXECUTOR_H_
#define GRAPHRT_CORE_SRC_EXECUTOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/core/device.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/step_stats.pb.h"
#include <oneapi/tbb/task_arena.h>

namespace graphrt {

// Core-internal ops that connect a step to its caller: _Arg yields feed
// `index`, _Retval stores its input as fetch `index`.
constexpr const char* kArgOp = "_Arg";
constexpr const char* kRetvalOp = "_Retval";

struct OutEdge {
  int src_output;  // kControlSlot for control edges
  int dst_item;
  int dst_slot;    // absolute input slot, -1 for control
  bool last_use;   // last consumer of this output: may take the tensor by move
  bool ref;        // a ref output: carries the variable, not a tensor
};

class Var;
class ResourceMgr;
class CancellationRegistry;
class Rendezvous;
class FileAccessPolicy;

struct NodeItem {
  // Hot: what the per-node path reads, together at the front.
  // The control-flow kinds occur only in executors with frames.
  enum class Kind : uint8_t {
    kKernel, kArg, kRetval, kSwitch, kMerge, kEnter, kExit, kNextIteration, kLoopCond, kControlTrigger
  };
  int num_inputs = 0;
  int num_outputs = 0;
  int input_start = 0;
  int output_start = 0;
  int index = 0;  // feed/fetch index for _Arg/_Retval
  Kind kind = Kind::kKernel;
  bool has_unconsumed_outputs = false;  // some output has no data consumer
  bool inexpensive = false;
  bool is_async = false;  // its kernel has compute_async (ABI 1.3)
  // Inputs fed by ref outputs: kDeref reads the variable's value when the
  // node runs (TensorFlow's semantics: after its control dependencies);
  // kRef passes the variable itself to a Ref(T) input.
  enum class RefInput : uint8_t { kNone, kDeref, kRef };
  bool has_ref_inputs = false;
  bool has_ref_outputs = false;
  bool allows_uninitialized_input = false;
  // Bit i: output i is in host memory though the node's device has its own
  // (a device kernel's HostMemory output; a _Recv for a HostMemory input),
  // allocated from the step's host allocator. (In the padding before `reg`: NodeItem's size
  // is W1's cache footprint.)
  uint32_t host_outputs = 0;
  const KernelRegistration* reg = nullptr;
  void* kernel = nullptr;
  Allocator* allocator = nullptr;  // where its outputs come from
  std::vector<OutEdge> out;
  std::vector<DataType> input_types;
  std::vector<DataType> output_types;
  // Cold: construction, errors, tracing.
  std::string name;
  std::string op;
  std::string error_prefix;  // "Node 'x' (op 'Y')"
  bool owns_kernel = false;
  bool is_send = false;  // a _Send: sends dead values too (frames executor)
  int initial_pending = 0;
  Device* device = nullptr;
  int device_index = 0;  // into Executor::devices()
  // Graphs with variables only.
  std::vector<RefInput> ref_inputs;          // per input, when has_ref_inputs
  std::vector<std::string> ref_input_names;  // the producing nodes, for errors
  std::vector<bool> output_is_ref;           // per output, when has_ref_outputs
};

// Hands out the kernel for a node: shared (stateful, session-owned) or fresh.
using KernelProvider =
    std::function<Status(const Node& node, Device* device, const KernelRegistration** reg, void** kernel, bool* owned)>;

struct StepState;

// Where outputs declared HostMemory are allocated in step `s` (executor.cc).
Allocator* StepHostAllocator(const StepState* s);

// Where output `index` of `item` is allocated in step `s`: its device's
// memory, or host memory for an output in host_outputs.
inline Allocator* OutputAllocator(const NodeItem& item, int index, const StepState* s) {
  if (item.host_outputs != 0) [[unlikely]]
    if ((item.host_outputs >> index) & 1) return StepHostAllocator(s);
  return item.allocator;
}

// Constructs `reg`'s kernel for `n` on `device`, its attr tensors from
// `attr_allocator`. Errors name the node; a raw C-ABI constructor's
// exception becomes the Status (SDK kernels catch their own).
Status ConstructKernel(const Node& n, Device* device, Allocator* attr_allocator, const KernelRegistration& reg,
                       void** kernel);

// The device a node of the graph runs on.
using DeviceOfNode = std::function<Device*(const Node& node)>;

// The allocator nodes on a device allocate their outputs from (the
// session's budgeted view of the device's memory).
using AllocatorOfDevice = std::function<Allocator*(Device* device)>;

struct RunArgs {
  const std::vector<Tensor>* feeds = nullptr;
  std::vector<Tensor>* fetches = nullptr;
  int64_t step_id = 0;
  int num_threads = 1;
  tbb::task_arena* arena = nullptr;  // required when num_threads > 1
  proto::StepStats* stats = nullptr;  // filled when tracing: one dev_stats per device
  // Set (by Session::Close) to end the step early: nodes not yet started
  // do not run and the step returns CANCELLED. May be null.
  const std::atomic<bool>* cancelled = nullptr;
  // The session's resources (variables); null for graphs without state.
  ResourceMgr* resources = nullptr;
  // steady_clock nanoseconds after which the step ends DEADLINE_EXCEEDED
  // (RunOptions.timeout_in_ms); 0: none. Checked where a step can run
  // unbounded: each new loop iteration; and while the step waits for
  // asynchronous kernels, which it then cancels.
  int64_t deadline_nanos = 0;
  // The session's: cancelled by Session::Close, it cancels the steps that
  // wait for asynchronous kernels. May be null.
  CancellationRegistry* session_cancellation = nullptr;
  // Where the step's _Send/_Recv pairs meet (InsertTransfers); required
  // when the graph has any, else null.
  Rendezvous* rendezvous = nullptr;
  // Where device kernels' HostMemory outputs go (the session's view of host
  // memory); null: the plain host allocator.
  Allocator* host_allocator = nullptr;
  // The directories file-touching kernels may use (ABI 1.4
  // ctx_check_file_access); null: any.
  const FileAccessPolicy* file_access = nullptr;
};

struct StepState;
struct FramePlan;

class Executor {
 public:
  // Runs every node of `graph` on the device `device_of` gives it. The nodes
  // of one step may span devices: those that share host memory hand tensors
  // over directly; others through _Send/_Recv pairs (InsertTransfers).
  // Kernels of a device with its own memory enqueue their work on its
  // compute stream and the step does not wait for it between nodes.
  static Status Create(const Graph& graph, const DeviceOfNode& device_of, const AllocatorOfDevice& allocator_of,
                       const KernelProvider& provider, std::unique_ptr<Executor>* out);
  ~Executor();
  Status Run(const RunArgs& args);

  const std::vector<NodeItem>& items() const { return items_; }
  // The devices the nodes run on, in order of first use.
  const std::vector<Device*>& devices() const { return devices_; }
  int num_slots() const { return num_slots_; }
  bool has_refs() const { return has_refs_; }
  // The loops and conds of the graph; null when it has no control flow.
  const FramePlan* frame_plan() const { return frames_.get(); }

 private:
  Executor();
  StepState* AcquireStep();
  void ReleaseStep(StepState* s);
  // Builds frames_ (executor_frames.cc).
  Status PlanFrames(const Graph& graph, const std::vector<int>& item_of);
  // Runs a step of a graph with control flow (executor_frames.cc).
  void RunFrames(StepState* s);

  std::vector<NodeItem> items_;
  std::vector<Device*> devices_;
  std::vector<int> roots_;
  int num_slots_ = 0;
  int num_outputs_ = 0;
  bool has_refs_ = false;
  std::mutex pool_mu_;
  std::vector<StepState*> step_pool_;
  std::unique_ptr<FramePlan> frames_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_EXECUTOR_H_
