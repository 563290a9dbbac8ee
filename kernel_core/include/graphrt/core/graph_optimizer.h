// Graph rewrites run on each pruned, placed client graph before its executor
// is built (once per executor-cache miss, never per Run). Every rewrite
// keeps results equal within float tolerance.
//
// The core's own rewrites are generic (they name no public op). Rewrites
// that know particular ops and what a device prefers (NHWC layouts, fused
// kernels) are device graph passes that plugins register for a device type
// through the ABI (GR_GraphPassSpec in graphrt/c_api.h); OptimizeGraph runs
// them after the core's.
#ifndef GRAPHRT_CORE_GRAPH_OPTIMIZER_H_
#define GRAPHRT_CORE_GRAPH_OPTIMIZER_H_

#include <graphrt/c_api.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"

namespace graphrt {

// A device graph pass registered by a plugin (GR_GraphPassSpec, copied).
struct GraphPassRegistration {
  std::string name;
  std::string device_type;
  std::string plugin;
  int32_t toggle = GR_PASS_TOGGLE_NONE;
  int32_t order = 0;
  void* user_data = nullptr;
  int32_t (*run)(void* user_data, GR_GraphPassContext* ctx, const char* graph_def, uint64_t size) = nullptr;
};

// The process's device graph passes. Thread-safe; registrations are never
// removed, so the pointers Passes() returns stay valid.
class GraphPassRegistry {
 public:
  // Whether `staged` can be added: names unique here and among themselves.
  Status CheckAll(const std::vector<std::unique_ptr<GraphPassRegistration>>& staged) const;
  void AddAll(std::vector<std::unique_ptr<GraphPassRegistration>> staged);
  // In running order: ascending `order`, then name.
  std::vector<const GraphPassRegistration*> Passes() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<GraphPassRegistration>> passes_;
};

struct GraphOptimizerOptions {
  // Drop stateless nodes with outputs that nothing reads, only waits for
  // through control edges (what TF1's gradient `tuple` leaves: the input
  // gradient of a network's first layer feeds only a group_deps NoOp);
  // their waiters wait for their inputs instead, as TensorFlow's dependency
  // optimizer does. Not in graphs with control flow, where a control edge
  // from a Switch is live when its data output is dead.
  // RewriterConfig.dependency_optimization.
  bool remove_control_only_nodes = true;
  // Plugin passes at all (OptimizerOptions.opt_level L0 turns them off).
  bool plugin_passes = true;
  // Plugin passes whose toggle is GR_PASS_TOGGLE_LAYOUT_OPTIMIZER /
  // GR_PASS_TOGGLE_REMAPPING (RewriterConfig's fields set OFF: false).
  bool layout_optimizer = true;
  bool remapping = true;
};

// Whether the device a rewritten node would run on (by assigned name) has a
// kernel for it; a rewrite is applied only when it does.
using KernelAvailableFn = std::function<bool(const proto::NodeDef& node, const std::string& assigned_device)>;

// What the session tells the passes about its devices.
struct GraphPassServices {
  // The type ("CPU") of an assigned device name; empty when unknown.
  std::function<std::string(const std::string& assigned_device)> device_type;
  KernelAvailableFn kernel_available;
};

// Rewrites `g` in place: the core's passes, then each of `passes` that is
// switched on and has a node assigned to a device of its type. A plugin
// pass gets the graph as a GraphDef whose NodeDef.device are the assigned
// devices; its result is checked (it changed only nodes of its device type,
// kept the targets, is a valid graph) before it replaces `g`. An error
// names the pass and its plugin and leaves `g` as the last good pass left
// it.
Status OptimizeGraph(const GraphOptimizerOptions& options, const std::vector<const GraphPassRegistration*>& passes,
                     const GraphPassServices& services, Graph* g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_GRAPH_OPTIMIZER_H_
