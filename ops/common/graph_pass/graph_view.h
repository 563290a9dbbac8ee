// The toolkit of the plugins' device graph passes (graphrt/sdk/graph_pass.h):
// the GraphDef the core hands a pass as a mutable graph of nodes and edges
// (data edges slot >= 0, control edges slot -1), with what a rewrite asks
// the core (device types, kernels, OpDefs, targets) cached per run.
//
// Its Node/Edge/Graph deliberately mirror the core's graphrt::Graph so that
// rewrites read the same on both sides of the ABI; it cannot be the core's
// class: a plugin links nothing of the core (only the C ABI), and this one
// is over the plugin's own lite protos, without OpDef-derived types.
//
// NodeDef.device is the node's assigned device (the form the core gives a
// pass and takes back). Edges are the truth; NodeDef inputs are rewritten
// from them when the graph is serialized again.
#ifndef GRAPHRT_OPS_COMMON_GRAPH_PASS_GRAPH_VIEW_H_
#define GRAPHRT_OPS_COMMON_GRAPH_PASS_GRAPH_VIEW_H_

#include <graphrt/sdk/graph_pass.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graphrt/passproto/graph.pb.h"
#include "graphrt/passproto/op_def.pb.h"

namespace graphrt {
namespace passes {

namespace pp = ::graphrt::passproto;
using AttrMap = google::protobuf::Map<std::string, pp::AttrValue>;

constexpr int kControlSlot = -1;

class Node;

class Edge {
 public:
  Node* src() const { return src_; }
  Node* dst() const { return dst_; }
  int src_output() const { return src_output_; }
  int dst_input() const { return dst_input_; }
  bool IsControlEdge() const { return src_output_ == kControlSlot; }

 private:
  friend class Graph;
  int id_ = -1;
  Node* src_ = nullptr;
  Node* dst_ = nullptr;
  int src_output_ = 0;
  int dst_input_ = 0;
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  // Inputs as read (not kept up to date: the edges are).
  const pp::NodeDef& def() const { return def_; }
  pp::NodeDef* mutable_def() { return &def_; }
  const std::string& device() const { return def_.device(); }
  int num_inputs() const { return num_inputs_; }
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge into input `i`, or nullptr.
  const Edge* input_edge(int i) const;
  // An attr, or nullptr.
  const pp::AttrValue* attr(const std::string& name) const;

 private:
  friend class Graph;
  int id_ = -1;
  pp::NodeDef def_;
  int num_inputs_ = 0;
  std::vector<const Edge*> in_edges_, out_edges_;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Reads a serialized GraphDef; false (with *error) when it does not parse
  // or an input names no node.
  bool Parse(const std::string& serialized, std::string* error);
  // The graph as a serialized GraphDef, inputs from the edges.
  std::string Serialize() const;

  // A node with `num_inputs` data inputs (wired with AddEdge). The
  // NodeDef's own inputs are ignored.
  Node* AddNode(pp::NodeDef def, int num_inputs);
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  const Edge* AddControlEdge(Node* src, Node* dst);
  void RemoveEdge(const Edge* e);
  void RemoveNode(Node* n);

  Node* FindNodeId(int id) const { return id >= 0 && id < num_node_ids() ? nodes_[id].get() : nullptr; }
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  // Live nodes in id order.
  std::vector<Node*> nodes() const;
  // Every node after its inputs (a while loop's back edges, out of
  // NextIteration nodes, not counted).
  std::vector<Node*> TopologicalOrder() const;
  // Their ids: what a rewrite walks, since it may delete nodes later in the
  // order.
  std::vector<int> TopologicalIds() const;
  // Per node id, how many while loops the node is inside (0: the root
  // frame); empty when the graph has no Enter node.
  std::vector<int> LoopDepths() const;
  // `base`, or base_1, base_2, ... so that no node has the name.
  std::string UniqueName(const std::string& base);

 private:
  std::vector<std::unique_ptr<Node>> nodes_;  // null where removed
  std::vector<std::unique_ptr<Edge>> edges_;
  pp::VersionDef versions_;
  std::unordered_set<std::string> names_;
};

// The core's answers for one pass run, cached.
class PassEnv {
 public:
  explicit PassEnv(sdk::GraphPassContext& ctx) : ctx_(ctx) {}
  const std::string& DeviceType(const std::string& device);
  // Whether `device` has a kernel for `node` (inputs are not looked at).
  bool KernelAvailable(const pp::NodeDef& node, const std::string& device);
  // The OpDef of `op`, or nullptr for ops no plugin defines (_Arg, _Retval).
  const pp::OpDef* OpDef(const std::string& op);
  bool IsTarget(const std::string& node) { return ctx_.IsTarget(node); }

 private:
  sdk::GraphPassContext& ctx_;
  std::unordered_map<std::string, std::string> device_types_;
  std::unordered_map<std::string, std::unique_ptr<pp::OpDef>> op_defs_;
};

// Parses the graph, runs `rewrite` (which returns whether it changed
// anything) and serializes the result: the body of a GraphPassFn.
sdk::Status RunRewrite(sdk::GraphPassContext& ctx, const std::string& graph_def, std::string* rewritten,
                       bool* changed, const std::function<bool(PassEnv& env, Graph* g)>& rewrite);

// Small helpers shared by the passes.
std::string StringAttr(const Node& n, const char* name);
// The "T" attr, or DT_INVALID.
pp::DataType TypeAttr(const Node& n);
// The int values (row-major) of a Const of int32/int64 holding at most
// `max_elements` values; false for anything else.
bool ConstInts(const Node& n, std::vector<int64_t>* values, int max_elements = 64);
// The one op node reading `n`'s output 0, at its input 0, when nothing else
// reads `n` and the step does not run `n` as a target.
Node* SoleConsumer(PassEnv& env, const Node& n);

}  // namespace passes
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_GRAPH_PASS_GRAPH_VIEW_H_
