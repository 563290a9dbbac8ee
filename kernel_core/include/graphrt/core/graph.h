// The in-memory graph: nodes, data edges (slot >= 0), control edges (slot -1),
// and the _SOURCE (id 0) / _SINK (id 1) nodes.
#ifndef GRAPHRT_CORE_GRAPH_H_
#define GRAPHRT_CORE_GRAPH_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/graph.pb.h"
#include "graphrt/proto/op_def.pb.h"

namespace graphrt {

class OpRegistry;
class Edge;
class Graph;

constexpr int kControlSlot = -1;

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  const proto::NodeDef& def() const { return def_; }
  const proto::OpDef* op_def() const { return op_def_; }
  const std::string& requested_device() const { return def_.device(); }
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string d) { assigned_device_ = std::move(d); }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  bool IsSource() const { return id_ == 0; }
  bool IsSink() const { return id_ == 1; }
  bool IsOp() const { return id_ > 1; }
  bool IsStateful() const { return op_def_ != nullptr && op_def_->is_stateful(); }
  // The data edge into input `i`, or nullptr.
  const Edge* input_edge(int i) const;
  // Sets an internal attr (name starting with '_': not part of the OpDef,
  // e.g. a hint a graph pass leaves for the kernel).
  void SetInternalAttr(const std::string& name, const proto::AttrValue& value);

 private:
  friend class Graph;
  friend void CopyGraph(const Graph& src, Graph* dst);
  friend void CopyGraph(const Graph& src, const std::vector<bool>& keep, Graph* dst);
  int id_ = -1;
  proto::NodeDef def_;
  const proto::OpDef* op_def_ = nullptr;
  std::vector<DataType> input_types_, output_types_;
  std::vector<const Edge*> in_edges_, out_edges_;
  std::string assigned_device_;
};

class Edge {
 public:
  int id() const { return id_; }
  Node* src() const { return src_; }
  Node* dst() const { return dst_; }
  int src_output() const { return src_output_; }
  int dst_input() const { return dst_input_; }
  bool IsControlEdge() const { return src_output_ == kControlSlot; }
  std::string DebugString() const;  // "[id=1 A:0 -> B:0]"

 private:
  friend class Graph;
  int id_ = -1;
  Node* src_ = nullptr;
  Node* dst_ = nullptr;
  int src_output_ = 0;
  int dst_input_ = 0;
};

class Graph {
 public:
  explicit Graph(const OpRegistry* ops);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Node* source_node() const { return nodes_[0].get(); }
  Node* sink_node() const { return nodes_[1].get(); }
  const OpRegistry* op_registry() const { return ops_; }

  // Validates the NodeDef against its OpDef (adding defaults). Edges are
  // added separately; the NodeDef's inputs are kept as given.
  Status AddNode(proto::NodeDef def, Node** out);
  // A core-internal node (e.g. _Arg/_Retval) with explicit dtypes.
  Node* AddInternalNode(proto::NodeDef def, std::vector<DataType> inputs, std::vector<DataType> outputs);
  // Replaces the attrs of op node `n`, as a graph pass may (a data_format,
  // say). They are validated against its OpDef (adding defaults) and must
  // leave its input and output types as they are; otherwise nothing changes.
  Status SetAttrs(Node* n, const google::protobuf::Map<std::string, proto::AttrValue>& attrs);
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  // Adds src -> dst as a control edge unless there is one already (then
  // returns nullptr). Costs the shorter of src's out- and dst's in-edges.
  const Edge* AddControlEdge(Node* src, Node* dst);
  // RemoveEdge and RemoveNode cost the degrees of the nodes they touch;
  // RemoveNodes removes many at once and filters each neighbour's edge
  // lists once, so dropping N leaves of _SINK is O(N), not O(N^2).
  void RemoveEdge(const Edge* e);
  void RemoveEdges(const std::vector<const Edge*>& edges);
  void RemoveNode(Node* n);
  void RemoveNodes(const std::vector<Node*>& nodes);

  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  int num_op_nodes() const { return num_nodes_ - 2; }
  Node* FindNodeId(int id) const { return id >= 0 && id < num_node_ids() ? nodes_[id].get() : nullptr; }
  // Live nodes, in id order.
  std::vector<Node*> nodes() const;
  std::vector<Node*> op_nodes() const;
  std::unordered_map<std::string, Node*> BuildNameIndex() const;

  const proto::VersionDef& versions() const { return versions_; }
  void set_versions(const proto::VersionDef& v) { versions_ = v; }

  // NodeDefs with inputs rewritten from the edges (data inputs in order, then ^control).
  void ToGraphDef(proto::GraphDef* out) const;

  // Nodes in an order where every node comes after its inputs, a while
  // loop's back edges (out of NextIteration nodes) not counted.
  std::vector<Node*> TopologicalOrder() const;

 private:
  const OpRegistry* ops_;
  std::vector<std::unique_ptr<Node>> nodes_;  // null where removed; ids never reused
  std::vector<std::unique_ptr<Edge>> edges_;
  int num_nodes_ = 0;
  proto::VersionDef versions_;
};

// How large a graph built from a GraphDef may become. A GraphDef's own
// nodes cost their bytes, but function calls are inlined: a small library
// can ask for more nodes than any memory holds (see function_inline.h).
struct GraphLimits {
  // About what a node costs in the graph and what is built from it
  // (placement, partitions, executor; 3.3-3.8 KB measured on inlined and
  // plain graphs); turns a byte limit into nodes.
  static constexpr int64_t kBytesPerNode = 4096;
  static constexpr int64_t kDefaultMaxNodes = int64_t{4} << 20;
  // The most op nodes the graph may have, function calls inlined.
  int64_t max_nodes = kDefaultMaxNodes;
  // Bytes the graph may take at kBytesPerNode per node; 0: no such limit.
  int64_t max_bytes = 0;
  // What a caller whose graph is refused can change, e.g. a config field.
  std::string hint = "GraphLimits.max_nodes";
};

// Builds `g` (which must be empty) from a GraphDef: validates names, inputs,
// types and acyclicity. Errors name the node; past `limits`,
// RESOURCE_EXHAUSTED.
Status ConvertGraphDefToGraph(const proto::GraphDef& def, Graph* g, const GraphLimits& limits = GraphLimits());
// Adds the nodes of `def` to an existing graph (Session::Extend).
Status ExtendGraph(const proto::GraphDef& def, Graph* g, const GraphLimits& limits = GraphLimits());
// Copies src into the empty dst.
void CopyGraph(const Graph& src, Graph* dst);
// Copies the op nodes of src whose id `keep` marks, and the edges between
// them (and the source and sink), into the empty dst.
void CopyGraph(const Graph& src, const std::vector<bool>& keep, Graph* dst);

// Parses "node", "node:3", "^node". Returns false on malformed text.
bool ParseTensorName(const std::string& s, std::string* node, int* index, bool* is_control);

// TensorFlow's node name rule: [A-Za-z0-9.][A-Za-z0-9_.\-/]*.
bool IsValidNodeName(const std::string& name);
// Whether an output of type `src` may feed an input of type `dst`: the same
// type, or a ref output into a value input of its base type (a read).
bool TypesCompatible(DataType src, DataType dst);

// Adds one op node whose inputs are nodes already in `g` (data inputs in
// order, then control inputs): validates the name (not its uniqueness,
// which the caller's index knows), the NodeDef against its OpDef (defaults
// added), the inputs' number and types; sets the NodeDef's inputs and wires
// the edges, _SOURCE and _SINK included. All or nothing. It costs the
// node's degree, so building a graph node by node stays linear
// (ExtendGraph indexes and checks the whole graph each time).
Status AddNodeWithInputs(proto::NodeDef def, const std::vector<std::pair<Node*, int>>& inputs,
                         const std::vector<Node*>& control_inputs, Graph* g, Node** out);

// [begin, end) of the flat input (output: true, output) indices that op
// node `n`'s arg `arg_name` covers (one for a single tensor, N for a list).
// InvalidArgument naming the node and the arg when the op has no such arg.
Status NodeArgRange(const Node& n, const std::string& arg_name, bool output, int* begin, int* end);

// One step of TensorFlow's shape refiner: runs the registered shape
// function of op node `n` on its inputs' shapes and the values of inputs
// known as constants (nullptr where not). `outputs` gets one shape per
// output, unknown where the op has no shape function. Errors name the node.
// Tensors shape functions read from attrs come from `attr_allocator`.
Status InferNodeShapes(const Graph& g, const Node& n, const std::vector<PartialTensorShape>& input_shapes,
                       const std::vector<const Tensor*>& input_values, Allocator* attr_allocator,
                       std::vector<PartialTensorShape>* outputs);
// The value of a Const node when it is small enough for shape functions to
// read (shapes, axes, paddings: at most 65,536 elements); null otherwise.
// A large constant is left to its kernel, which allocates it within the
// session's memory budget, rather than materialised for shape inference.
std::unique_ptr<Tensor> ConstValueForShapeInference(const Node& n);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_GRAPH_H_
