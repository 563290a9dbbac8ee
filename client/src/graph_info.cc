#include "graphrt/client/graph_info.h"

#include <algorithm>
#include <set>

#include "graphrt/core/control_flow.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"

namespace graphrt {
namespace {

// The node an input string refers to: "x:1" -> "x", "^y" -> "y".
std::string InputNode(const std::string& input) {
  const size_t begin = !input.empty() && input[0] == '^' ? 1 : 0;
  const size_t colon = input.rfind(':');
  const size_t end = colon == std::string::npos || colon < begin ? input.size() : colon;
  return input.substr(begin, end - begin);
}

// The nodes inside while loops (their tensors cannot be fetched); none when
// the graph does not load (the session will say why).
std::set<std::string> NodesInLoops(const proto::GraphDef& g) {
  Graph graph(&Runtime::Global().ops());
  FrameLayout frames;
  std::set<std::string> in_loops;
  if (!ConvertGraphDefToGraph(g, &graph).ok() || !HasControlFlow(graph) || !ComputeFrameLayout(graph, &frames).ok())
    return in_loops;
  for (Node* n : graph.op_nodes())
    if (frames.OutputFrame(*n) > 0) in_loops.insert(n->name());
  return in_loops;
}

}  // namespace

int NumOutputsOfNode(const proto::NodeDef& node) {
  const OpRegistrationData* reg = Runtime::Global().ops().LookUp(node.op());
  if (reg == nullptr) return -1;
  const proto::OpDef& def = reg->op_def;
  // The node's own value, else the OpDef's default.
  auto attr = [&](const std::string& name) -> const proto::AttrValue* {
    auto it = node.attr().find(name);
    if (it != node.attr().end()) return &it->second;
    for (const auto& a : def.attr())
      if (a.name() == name && a.has_default_value()) return &a.default_value();
    return nullptr;
  };
  int n = 0;
  for (const auto& arg : def.output_arg()) {
    if (!arg.number_attr().empty()) {
      const proto::AttrValue* v = attr(arg.number_attr());
      if (v == nullptr || v->value_case() != proto::AttrValue::kI) return -1;
      n += static_cast<int>(v->i());
    } else if (!arg.type_list_attr().empty()) {
      const proto::AttrValue* v = attr(arg.type_list_attr());
      if (v == nullptr || v->value_case() != proto::AttrValue::kList) return -1;
      n += v->list().type_size();
    } else {
      n += 1;
    }
  }
  return n;
}

std::vector<std::string> SinkOutputs(const proto::GraphDef& g, std::vector<std::string>* no_output_sinks) {
  std::set<std::string> consumed;
  for (const proto::NodeDef& n : g.node())
    for (const std::string& in : n.input()) consumed.insert(InputNode(in));
  const std::set<std::string> in_loops = NodesInLoops(g);
  std::vector<const proto::NodeDef*> sinks;
  for (const proto::NodeDef& n : g.node())
    if (!consumed.count(n.name()) && !in_loops.count(n.name())) sinks.push_back(&n);
  std::sort(sinks.begin(), sinks.end(),
            [](const proto::NodeDef* a, const proto::NodeDef* b) { return a->name() < b->name(); });
  std::vector<std::string> out;
  for (const proto::NodeDef* n : sinks) {
    int outputs = NumOutputsOfNode(*n);
    if (outputs < 0) outputs = 1;
    if (outputs == 0 && no_output_sinks != nullptr) no_output_sinks->push_back(n->name());
    for (int i = 0; i < outputs; ++i) out.push_back(n->name() + ":" + std::to_string(i));
  }
  return out;
}

}  // namespace graphrt
