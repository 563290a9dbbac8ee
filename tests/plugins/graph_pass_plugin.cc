// Device graph passes that exist only to test the pass ABI (graph_pass_test):
// passes for a device type "TESTDEV" and for CPU, switched by toggles, and
// passes that misbehave when the graph holds a node of a particular name.
#include <graphrt/sdk/graph_pass.h>

#include <stdexcept>

#include "common/graph_pass/graph_view.h"

GRAPHRT_PLUGIN("test_graph_passes", "0.1.0")

namespace graphrt {
namespace sdk {
namespace {

using passes::Graph;
using passes::Node;
using passes::PassEnv;

bool HasNode(const Graph& g, const std::string& name) {
  for (Node* n : g.nodes())
    if (n->name() == name) return true;
  return false;
}

// Marks every node on a TESTDEV device with `_test_marked: true`; with a
// node named "touch_all" in the graph, every node (those on other devices
// too, which a pass must not change).
Status MarkTestDev(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, [](PassEnv& env, Graph* g) {
    const bool all = HasNode(*g, "touch_all");
    bool any = false;
    for (Node* n : g->nodes()) {
      if (!all && env.DeviceType(n->device()) != "TESTDEV") continue;
      (*n->mutable_def()->mutable_attr())["_test_marked"].set_b(true);
      any = true;
    }
    return any;
  });
}

// The Identity node named `name`, if the graph has one on CPU, becomes a Neg.
bool IdentityToNeg(PassEnv& env, Graph* g, const std::string& name) {
  for (Node* n : g->nodes()) {
    if (n->name() != name || n->op() != "Identity" || env.DeviceType(n->device()) != DEVICE_CPU) continue;
    n->mutable_def()->set_op("Neg");
    return true;
  }
  return false;
}

Status NegateRemap(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed,
                            [](PassEnv& env, Graph* g) { return IdentityToNeg(env, g, "tp_remap"); });
}

Status NegateLayout(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed,
                            [](PassEnv& env, Graph* g) { return IdentityToNeg(env, g, "tp_layout"); });
}

Status NegateAlways(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed,
                            [](PassEnv& env, Graph* g) { return IdentityToNeg(env, g, "tp_always"); });
}

// Fails in the way the graph's node names ask for.
Status Faulty(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  Graph g;
  std::string error;
  if (!g.Parse(in, &error)) return Status(GR_INTERNAL, error);
  *changed = true;
  if (HasNode(g, "tp_error")) return Status(GR_FAILED_PRECONDITION, "asked to fail by node tp_error");
  if (HasNode(g, "tp_throw")) throw std::runtime_error("asked to throw by node tp_throw");
  if (HasNode(g, "tp_malformed")) {
    *out = "\xff\xff\xff\xff not a GraphDef";
    return Status::OK();
  }
  if (HasNode(g, "tp_invalid")) {
    for (Node* n : g.nodes())
      if (n->name() == "tp_invalid") n->mutable_def()->set_op("NoSuchOpAnywhere");
    *out = g.Serialize();
    return Status::OK();
  }
  if (HasNode(g, "tp_drop_target")) {
    for (Node* n : g.nodes())
      if (n->name() == "tp_drop_target") g.RemoveNode(n);
    *out = g.Serialize();
    return Status::OK();
  }
  *changed = false;
  return Status::OK();
}

}  // namespace

REGISTER_GRAPH_PASS(GraphPass("test.mark_testdev").Device("TESTDEV"), MarkTestDev);
REGISTER_GRAPH_PASS(GraphPass("test.negate_remap").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_REMAPPING).Order(50),
                    NegateRemap);
REGISTER_GRAPH_PASS(GraphPass("test.negate_layout").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_LAYOUT_OPTIMIZER).Order(50),
                    NegateLayout);
REGISTER_GRAPH_PASS(GraphPass("test.negate_always").Device(DEVICE_CPU).Order(50), NegateAlways);
REGISTER_GRAPH_PASS(GraphPass("test.faulty").Device(DEVICE_CPU).Order(60), Faulty);

}  // namespace sdk
}  // namespace graphrt
