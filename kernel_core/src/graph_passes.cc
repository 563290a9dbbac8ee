#include "graph_passes.h"

#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/runtime.h"

namespace graphrt {

Status RunGraphPasses(const proto::GraphOptions& graph_options, const DeviceLookupFn& device_named, Graph* g) {
  // Rewrites: stateless nodes only waited for dropped (the core's), then
  // the device passes plugins registered (layouts, fusions, weights
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
  return OptimizeGraph(opt, Runtime::Global().graph_passes().Passes(), services, g);
}

}  // namespace graphrt
