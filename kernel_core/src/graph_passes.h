// The graph-passes stage of a step: the rewrites of graph_optimizer.h run
// on the pruned, placed client graph, switched by the session's
// GraphOptions (RewriterConfig toggles, OptimizerOptions.opt_level).
#ifndef GRAPHRT_CORE_SRC_GRAPH_PASSES_H_
#define GRAPHRT_CORE_SRC_GRAPH_PASSES_H_

#include <functional>
#include <string>

#include "graphrt/core/device.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"
#include "graphrt/proto/config.pb.h"

namespace graphrt {

// The session's device with this full name, or nullptr.
using DeviceLookupFn = std::function<Device*(const std::string& name)>;

// Rewrites `g` in place; a rewrite applies only where the device of the
// nodes involved has a kernel for the result.
Status RunGraphPasses(const proto::GraphOptions& graph_options, const DeviceLookupFn& device_named, Graph* g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_GRAPH_PASSES_H_
