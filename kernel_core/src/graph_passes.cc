#include "graph_passes.h"

#include <map>
#include <vector>

#include "generic_passes.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/runtime.h"

namespace graphrt {
namespace {

// The host device constant folding evaluates on: CPU:0, made without
// making a device of any other type (null when no CPU backend is loaded).
Device* HostDevice() {
  DeviceRegistry& registry = Runtime::Global().devices();
  std::map<std::string, int> counts;
  for (const std::string& type : registry.DeviceTypes()) counts[type] = type == "CPU" ? 1 : 0;
  std::vector<Device*> devices;
  if (!counts.count("CPU") || !registry.GetDevices(counts, &devices).ok()) return nullptr;
  for (Device* d : devices)
    if (d->type() == "CPU") return d;
  return nullptr;
}

}  // namespace

Status RunGraphPasses(const proto::GraphOptions& graph_options, const DeviceLookupFn& device_named, Graph* g) {
  // Rewrites: the core's generic passes (Identity removal, constant
  // folding, CSE), stateless nodes only waited for dropped (the core's),
  // then the device passes plugins registered (layouts, fusions, weights
  // hints). OptimizerOptions.opt_level L0 ("no optimizations") turns them
  // all off; RewriterConfig's dependency_optimization, and the
  // layout_optimizer and remapping toggles of plugin passes, set OFF, theirs.
  GraphOptimizerOptions opt;
  const proto::RewriterConfig& rewrites = graph_options.rewrite_options();
  opt.layout_optimizer = rewrites.layout_optimizer() != proto::RewriterConfig::OFF;
  opt.remapping = rewrites.remapping() != proto::RewriterConfig::OFF;
  opt.remove_control_only_nodes = rewrites.dependency_optimization() != proto::RewriterConfig::OFF;
  if (graph_options.optimizer_options().opt_level() == proto::OptimizerOptions::L0)
    opt.plugin_passes = opt.remove_control_only_nodes = false;
  GraphPassServices services;
  services.device_type = [&device_named](const std::string& assigned_device) {
    Device* d = device_named(assigned_device);
    return d != nullptr ? d->type() : std::string();
  };
  services.kernel_available = [&device_named](const proto::NodeDef& n, const std::string& assigned_device) {
    const KernelRegistration* reg;
    Device* d = device_named(assigned_device);
    return d != nullptr && Runtime::Global().kernels().FindKernel(n, d->type(), &reg).ok();
  };
  // TensorFlow 1's GraphOptimizer: opt_level L1 (the default) turns
  // constant folding and CSE on whatever their flags say; at L0 each runs
  // only if its do_* flag asks. Identity removal (L1's RemoveIdentityNodes
  // there, grappler's dependency optimizer later) follows the dependency
  // switch as the removal of control-only nodes does: off at L0 or with
  // dependency_optimization OFF.
  const proto::OptimizerOptions& oo = graph_options.optimizer_options();
  const bool l1 = oo.opt_level() >= proto::OptimizerOptions::L1;
  GenericPassOptions generic;
  generic.remove_identity = opt.remove_control_only_nodes;
  generic.constant_folding = l1 || oo.do_constant_folding();
  generic.cse = l1 || oo.do_common_subexpression_elimination();
  if (oo.max_folded_constant_in_bytes() > 0) generic.max_folded_constant_bytes = oo.max_folded_constant_in_bytes();
  GR_RETURN_IF_ERROR(
      RunGenericPasses(generic, services, generic.constant_folding ? HostDevice() : nullptr, g));
  return OptimizeGraph(opt, Runtime::Global().graph_passes().Passes(), services, g);
}

}  // namespace graphrt
