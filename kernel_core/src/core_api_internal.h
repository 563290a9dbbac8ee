// The core's side of the C ABI: definitions of the opaque handles.
#ifndef GRAPHRT_CORE_SRC_CORE_API_INTERNAL_H_
#define GRAPHRT_CORE_SRC_CORE_API_INTERNAL_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/device.h"
#include "graphrt/core/gradients.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/node_def.pb.h"

struct GR_StatusSink {
  graphrt::Status status;
};

// Everything one plugin registers during its init call, applied only if the
// whole load succeeds.
struct GR_Registrar {
  std::string plugin;
  std::vector<std::unique_ptr<graphrt::OpRegistrationData>> ops;
  std::vector<std::unique_ptr<graphrt::KernelRegistration>> kernels;
  std::vector<std::pair<GR_DeviceSpec, std::string>> devices;
  std::vector<std::unique_ptr<graphrt::GraphPassRegistration>> graph_passes;
  std::vector<std::unique_ptr<graphrt::GradientRegistration>> gradients;
  graphrt::Status error;
};

struct GR_Attrs {
  const graphrt::proto::NodeDef* node;
  // Where attr tensors' memory comes from (the session's budgeted host
  // allocator; null: the plain host allocator) and where an attr_tensor
  // failure is described when the caller passes no status sink (the kernel
  // construction's or shape context's own status; may be null).
  graphrt::Allocator* allocator = nullptr;
  graphrt::Status* error = nullptr;
};

// One node being differentiated (gradients.cc makes it; the grad_* API
// functions read and fill it).
struct GR_GradientContext {
  GR_Attrs attrs;
  const graphrt::Node* node = nullptr;
  std::vector<std::string> inputs, outputs, output_grads;  // tensor names
  std::vector<int32_t> input_types, output_types;
  std::vector<std::string> input_grads;  // set by the function; "" = none
  // Adds a node (name, NodeDef text) under the gradient's scope.
  std::function<graphrt::Status(const std::string&, const std::string&, std::string*)> add_node;
  std::deque<std::string> names;  // what grad_add_node handed out
  graphrt::Status status;
};

struct GR_Tensor {
  std::atomic<int32_t> refs{1};
  graphrt::Tensor tensor;
};

struct GR_KernelConstruction {
  GR_Attrs attrs;
  const graphrt::proto::NodeDef* node;
  const std::vector<GR_DataType>* input_types;
  const std::vector<GR_DataType>* output_types;
  graphrt::Device* device;
  graphrt::Status status;
};

namespace graphrt {

struct StepState;
struct NodeItem;

// Owned by one executing step; one per node invocation (on the stack; an
// asynchronous kernel's on the heap until it is done).
class Var;
struct KernelCall {
  const NodeItem* item;
  Tensor* inputs;
  Tensor* outputs;
  StepState* step;
  // The variables on the node's ref inputs and outputs (only for nodes that
  // have them; the executor keeps them per step or per loop iteration).
  Var** ref_inputs;
  Var** ref_outputs;
  Status status;
};

const GR_CoreApi* CoreApi();

// Step-level services for the ABI; StepState lives in executor.cc.
class Var;
class ResourceMgr;
int64_t StepIdOf(const StepState* s);
int32_t NumThreadsOf(const StepState* s);
ResourceMgr* ResourcesOf(const StepState* s);
// ABI 1.4: the session's file-access policy; null: every path allowed.
class FileAccessPolicy;
const FileAccessPolicy* FileAccessOf(const StepState* s);
// The step's resource container ("__per_step_<id>"), emptied when it ends.
const char* StepContainerOf(StepState* s);
// ABI 1.3 (executor.cc): ends an asynchronous kernel's call; the step's
// cancellation state and callbacks (GR_CoreApi.ctx_on_cancel's contract).
void AsyncKernelDone(GR_KernelContext* ctx);
bool StepCancelled(const StepState* s);
bool StepOnCancel(StepState* s, void (*fn)(void*), void* arg, int64_t* token);
bool StepRemoveOnCancel(StepState* s, int64_t token);

}  // namespace graphrt

struct GR_KernelContext {
  graphrt::KernelCall call;
};


struct GR_ShapeContext {
  GR_Attrs attrs;
  const graphrt::proto::NodeDef* node;
  const std::vector<graphrt::PartialTensorShape>* inputs;
  const std::vector<const graphrt::Tensor*>* input_values;  // null entries = unknown
  std::vector<graphrt::PartialTensorShape> outputs;
  graphrt::Status status;
  int32_t graph_def_version = 0;  // the GraphDef's producer
};

#endif  // GRAPHRT_CORE_SRC_CORE_API_INTERNAL_H_
