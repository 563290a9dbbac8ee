#include "graph_passes.h"

#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/runtime.h"

namespace graphrt {

Status RunGraphPasses(const proto::GraphOptions& graph_options, const DeviceLookupFn& device_named, Graph* g) {
  // Rewrites: stateless nodes only waited for dropped, NHWC for CPU
  // convolution chains, fusions the nodes' devices have kernels for,
  // constant-weights hints. OptimizerOptions.opt_level L0 ("no
  // optimizations") turns them all off; RewriterConfig's
  // dependency_optimization, layout_optimizer and remapping toggles, set
  // OFF, the first three.
  GraphOptimizerOptions opt;
  const proto::RewriterConfig& rewrites = graph_options.rewrite_options();
  if (rewrites.layout_optimizer() != proto::RewriterConfig::OFF)
    opt.prefers_nhwc = [device_named](const std::string& assigned_device) {
      Device* d = device_named(assigned_device);
      return d != nullptr && d->type() == "CPU";
    };
  if (rewrites.remapping() == proto::RewriterConfig::OFF) opt.fuse_bias_activation = opt.fuse_conv_pool = false;
  if (rewrites.dependency_optimization() == proto::RewriterConfig::OFF) opt.remove_control_only_nodes = false;
  if (graph_options.optimizer_options().opt_level() == proto::OptimizerOptions::L0) {
    opt.prefers_nhwc = nullptr;
    opt.fuse_bias_activation = opt.fuse_conv_pool = opt.mark_constant_weights = false;
    opt.remove_control_only_nodes = false;
  }
  return OptimizeGraph(
      opt,
      [&device_named](const proto::NodeDef& n, const std::string& assigned_device) {
        const KernelRegistration* reg;
        Device* d = device_named(assigned_device);
        return d != nullptr && Runtime::Global().kernels().FindKernel(n, d->type(), &reg).ok();
      },
      g);
}

}  // namespace graphrt
