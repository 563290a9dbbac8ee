// Where each node of a Run ran, for `run --log-placement` and `dot --placed`.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "observe.h"

namespace graphrt {
namespace cli {

Placement PlacementFromMetadata(const proto::RunMetadata& metadata) {
  Placement p;
  if (metadata.partition_graphs_size() > 0) {
    p.source = "the session's partition graphs";
    for (const proto::GraphDef& g : metadata.partition_graphs()) {
      for (const proto::NodeDef& n : g.node()) {
        p.device_of[n.name()] = n.device();
        p.op_of[n.name()] = n.op();
      }
    }
    return p;
  }
  p.source = "the step stats: the nodes the executor ran";
  for (const proto::DeviceStepStats& dev : metadata.step_stats().dev_stats()) {
    for (const proto::NodeExecStats& ns : dev.node_stats()) {
      p.device_of[ns.node_name()] = dev.device();
      p.op_of[ns.node_name()] = OpOfTimelineLabel(ns.timeline_label());
    }
  }
  return p;
}

void PrintPlacement(const Placement& p, std::ostream& os) {
  std::map<std::string, std::vector<std::string>> by_device;
  for (const auto& [node, device] : p.device_of) by_device[device].push_back(node);
  os << "device placement (from " << p.source << "):\n";
  for (const auto& [device, nodes] : by_device) {
    for (const std::string& node : nodes) {
      auto op = p.op_of.find(node);
      os << node << ": (" << (op != p.op_of.end() ? op->second : "?") << "): " << device << "\n";
    }
  }
  if (p.device_of.empty()) os << "  (no nodes)\n";
}

}  // namespace cli
}  // namespace graphrt
