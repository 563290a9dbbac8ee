#include "graphrt/core/graph.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <unordered_set>

#include "function_inline.h"
#include "functional_lowering.h"
#include "graphrt/core/control_flow.h"
#include "graphrt/core/op_registry.h"
#include "node_def_util.h"

namespace graphrt {
namespace {

// A while loop's back edges leave its NextIteration nodes; orderings and the
// cycle check do not follow them (every other cycle is an error).
bool IsBackEdgeSource(const Node& n) { return ControlFlowOpOf(n.op()) == ControlFlowOp::kNextIteration; }

int NumForwardInEdges(const Node& n) {
  int count = 0;
  for (const Edge* e : n.in_edges()) count += IsBackEdgeSource(*e->src()) ? 0 : 1;
  return count;
}

// GraphDef versions this runtime reads (TensorFlow's scheme: producer must be
// >= kMinProducer; the graph's min_consumer must be <= kConsumer).
constexpr int kMinProducer = 0;
constexpr int kConsumer = 1900;

Status CheckVersions(const proto::VersionDef& v) {
  if (v.producer() < kMinProducer)
    return errors::InvalidArgument("GraphDef version ", v.producer(), " is no longer supported: graphrt needs ",
                                   kMinProducer, " <= version. Please regenerate your graph.");
  if (v.min_consumer() > kConsumer)
    return errors::InvalidArgument("GraphDef min consumer version ", v.min_consumer(),
                                   " is not yet supported: graphrt reads up to ", kConsumer,
                                   ". Please upgrade graphrt.");
  for (int bad : v.bad_consumers())
    if (bad == kConsumer)
      return errors::InvalidArgument("GraphDef disallows consumer version ", kConsumer,
                                     ". Please upgrade graphrt.");
  return Status::OK();
}

// src has an output `slot` for dst to read.
Status CheckSourceSlot(const Node& src, int slot, const Node& dst) {
  if (slot >= 0 && slot < src.num_outputs()) return Status::OK();
  return errors::InvalidArgument("Node '", dst.name(), "': Connecting to invalid output ", slot, " of source node ",
                                 src.name(), " which has ", src.num_outputs(), " outputs");
}

Status CheckInputType(const Node& src, int slot, const Node& dst, int input) {
  if (TypesCompatible(src.output_type(slot), dst.input_type(input))) return Status::OK();
  return errors::InvalidArgument("Input ", input, " of node ", dst.name(), " was passed ",
                                 DataTypeString(src.output_type(slot)), " from ", src.name(), ":", slot,
                                 " incompatible with expected ", DataTypeString(dst.input_type(input)), ".");
}

Status InputCountError(const Node& n, size_t given) {
  return errors::InvalidArgument(NodePrefix(n.def()), ": expects ", n.num_inputs(), " inputs but has ", given);
}

// Wires the inputs of the NodeDefs in [first, nodes.end()) given by name.
Status AddEdgesFromInputs(Graph* g, const std::vector<Node*>& new_nodes) {
  std::unordered_map<std::string, Node*> index = g->BuildNameIndex();
  // A new node's only edges so far are those added here, so "^x" listed
  // twice is the only duplicate control edge to skip: marking its sources
  // keeps a node with N control inputs O(N) (AddControlEdge would scan).
  std::vector<int> control_from(g->num_node_ids(), -1);
  for (Node* n : new_nodes) {
    const proto::NodeDef& def = n->def();
    int data_inputs = 0;
    bool seen_control = false;
    for (const std::string& in : def.input()) {
      std::string src_name;
      int slot;
      bool control;
      if (!ParseTensorName(in, &src_name, &slot, &control))
        return errors::InvalidArgument("Node '", n->name(), "': malformed input '", in, "'");
      if (control) {
        seen_control = true;
      } else if (seen_control) {
        return errors::InvalidArgument("Node '", n->name(), "': Control dependencies must come after regular dependencies");
      }
      auto it = index.find(src_name);
      if (it == index.end() || !it->second->IsOp())
        return errors::InvalidArgument("Node '", n->name(), "': Unknown input node '", in, "'");
      Node* src = it->second;
      if (control) {
        if (control_from[src->id()] != n->id()) g->AddEdge(src, kControlSlot, n, kControlSlot);
        control_from[src->id()] = n->id();
        continue;
      }
      GR_RETURN_IF_ERROR(CheckSourceSlot(*src, slot, *n));
      if (data_inputs >= n->num_inputs())
        return errors::InvalidArgument(NodePrefix(def), ": has more inputs than the ", n->num_inputs(),
                                       " its op takes");
      GR_RETURN_IF_ERROR(CheckInputType(*src, slot, *n, data_inputs));
      g->AddEdge(src, slot, n, data_inputs);
      ++data_inputs;
    }
    if (data_inputs != n->num_inputs()) return InputCountError(*n, data_inputs);
  }
  return Status::OK();
}

Status CheckAcyclic(const Graph& g) {
  std::vector<int> pending(g.num_node_ids(), 0);
  std::deque<Node*> ready;
  int live = 0;
  for (Node* n : g.nodes()) {
    ++live;
    pending[n->id()] = NumForwardInEdges(*n);
    if (pending[n->id()] == 0) ready.push_back(n);
  }
  int visited = 0;
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    ++visited;
    if (IsBackEdgeSource(*n)) continue;
    for (const Edge* e : n->out_edges())
      if (--pending[e->dst()->id()] == 0) ready.push_back(e->dst());
  }
  if (visited == live) return Status::OK();
  std::string names;
  int shown = 0;
  for (Node* n : g.op_nodes()) {
    if (pending[n->id()] > 0 && shown < 10) {
      names += (shown++ ? ", " : "") + n->name();
    }
  }
  return errors::InvalidArgument("Graph has a cycle through nodes: ", names,
                                 " (only a while loop's NextIteration -> Merge back edge may close a cycle)");
}

// Every op node hangs between _SOURCE and _SINK so traversals have roots.
void ConnectSourceAndSink(Graph* g, const std::vector<Node*>& new_nodes) {
  for (Node* n : new_nodes) {
    if (n->in_edges().empty()) g->AddControlEdge(g->source_node(), n);
  }
  for (Node* n : g->op_nodes()) {
    bool has_sink_edge = false;
    bool has_out = false;
    for (const Edge* e : n->out_edges()) {
      has_out = true;
      has_sink_edge |= e->dst()->IsSink();
    }
    if (!has_out) g->AddControlEdge(n, g->sink_node());
    (void)has_sink_edge;
  }
}

Status AddNodeDefs(const proto::GraphDef& in, Graph* g, const GraphLimits& limits, bool internal_names = false) {
  // The nodes this graph may still take: the node limit, or the byte limit
  // at kBytesPerNode per node, whichever is smaller.
  int64_t max_nodes = limits.max_nodes;
  std::string hint = limits.hint;
  if (limits.max_bytes > 0 && limits.max_bytes / GraphLimits::kBytesPerNode < max_nodes) {
    max_nodes = limits.max_bytes / GraphLimits::kBytesPerNode;
    hint = "at about " + std::to_string(GraphLimits::kBytesPerNode) + " bytes a node, the memory limit of " +
           std::to_string(limits.max_bytes) + " bytes allows no more; ConfigProto.graphrt_options." +
           "session_memory_limit_bytes raises it";
  }
  const int64_t room = std::max<int64_t>(0, max_nodes - g->num_op_nodes());
  if (in.node_size() > room)
    return errors::ResourceExhausted("the GraphDef has ", in.node_size(), " nodes; the graph may have ", max_nodes,
                                     " and has ", g->num_op_nodes(), " (", hint, ")");
  proto::GraphDef inlined;
  // Function calls and functional control flow (which calls the library's
  // functions, and says which one is missing when there is no library).
  const bool rewrite = in.library().function_size() > 0 ||
                       std::any_of(in.node().begin(), in.node().end(),
                                   [](const proto::NodeDef& n) { return IsFunctionalControlFlowOp(n.op()); });
  if (rewrite) GR_RETURN_IF_ERROR(InlineFunctionCalls(in, *g->op_registry(), room, hint, &inlined));
  const proto::GraphDef& def = rewrite ? inlined : in;
  std::unordered_map<std::string, Node*> index = g->BuildNameIndex();
  std::vector<Node*> added;
  for (const proto::NodeDef& nd : def.node()) {
    if (!IsValidNodeName(nd.name()) &&
        !(internal_names && nd.name().size() > 1 && nd.name()[0] == '_' && IsValidNodeName(nd.name().substr(1))))
      return errors::InvalidArgument("Node '", nd.name(), "': Node name contains invalid characters");
    if (index.count(nd.name()))
      return errors::InvalidArgument("Node '", nd.name(), "' is defined twice (node names must be unique)");
    Node* n;
    GR_RETURN_IF_ERROR(g->AddNode(nd, &n));
    index[nd.name()] = n;
    added.push_back(n);
  }
  GR_RETURN_IF_ERROR(AddEdgesFromInputs(g, added));
  ConnectSourceAndSink(g, added);
  return CheckAcyclic(*g);
}

}  // namespace

bool IsValidNodeName(const std::string& s) {
  if (s.empty()) return false;
  auto ok_first = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.'; };
  auto ok_rest = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
  };
  if (!ok_first(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(), ok_rest);
}

bool TypesCompatible(DataType src, DataType dst) {
  return src == dst || (IsRefType(src) && BaseType(src) == dst);
}

Status AddNodeWithInputs(proto::NodeDef def, const std::vector<std::pair<Node*, int>>& inputs,
                         const std::vector<Node*>& control_inputs, Graph* g, Node** out) {
  if (!IsValidNodeName(def.name()))
    return errors::InvalidArgument("Node '", def.name(), "': Node name contains invalid characters");
  def.clear_input();
  for (const auto& [src, slot] : inputs) {
    if (src == nullptr || !src->IsOp() || g->FindNodeId(src->id()) != src)
      return errors::InvalidArgument("Node '", def.name(), "': an input is not a node of this graph");
    def.add_input(slot == 0 ? src->name() : src->name() + ":" + std::to_string(slot));
  }
  for (Node* src : control_inputs) {
    if (src == nullptr || !src->IsOp() || g->FindNodeId(src->id()) != src)
      return errors::InvalidArgument("Node '", def.name(), "': a control input is not a node of this graph");
    def.add_input("^" + src->name());
  }
  Node* n;
  GR_RETURN_IF_ERROR(g->AddNode(std::move(def), &n));
  Status s;
  if (static_cast<int>(inputs.size()) != n->num_inputs()) s = InputCountError(*n, inputs.size());
  for (size_t i = 0; s.ok() && i < inputs.size(); ++i) {
    const auto& [src, slot] = inputs[i];
    s = CheckSourceSlot(*src, slot, *n);
    if (s.ok()) s = CheckInputType(*src, slot, *n, static_cast<int>(i));
  }
  if (!s.ok()) {
    g->RemoveNode(n);
    return s;
  }
  for (size_t i = 0; i < inputs.size(); ++i) g->AddEdge(inputs[i].first, inputs[i].second, n, static_cast<int>(i));
  for (Node* src : control_inputs) g->AddControlEdge(src, n);
  if (n->in_edges().empty()) g->AddControlEdge(g->source_node(), n);
  g->AddControlEdge(n, g->sink_node());
  *out = n;
  return Status::OK();
}

Status NodeArgRange(const Node& n, const std::string& arg_name, bool output, int* begin, int* end) {
  if (n.op_def() == nullptr) return errors::InvalidArgument(NodePrefix(n.def()), ": not an op node");
  DataTypeVector in, outs;
  std::vector<ArgRange> in_ranges, out_ranges;
  GR_RETURN_IF_ERROR(InputOutputTypes(n.def(), *n.op_def(), &in, &outs, &in_ranges, &out_ranges));
  for (const ArgRange& r : output ? out_ranges : in_ranges) {
    if (r.name != arg_name) continue;
    *begin = r.begin;
    *end = r.end;
    return Status::OK();
  }
  return errors::InvalidArgument(NodePrefix(n.def()), ": its op has no ", output ? "output" : "input", " arg named '",
                                 arg_name, "'");
}

bool ParseTensorName(const std::string& s, std::string* node, int* index, bool* is_control) {
  *is_control = !s.empty() && s[0] == '^';
  std::string body = *is_control ? s.substr(1) : s;
  *index = 0;
  size_t colon = body.rfind(':');
  if (colon != std::string::npos) {
    std::string num = body.substr(colon + 1);
    if (num.empty() || num.size() > 9 || !std::all_of(num.begin(), num.end(), ::isdigit)) return false;
    if (*is_control) return false;
    *index = std::stoi(num);
    body = body.substr(0, colon);
  }
  if (body.empty()) return false;
  *node = body;
  return true;
}

std::string Edge::DebugString() const {
  auto name = [](Node* n) { return n ? n->name() : std::string("<NULL>"); };
  return "[id=" + std::to_string(id_) + " " + name(src_) + ":" + std::to_string(src_output_) + " -> " +
         name(dst_) + ":" + std::to_string(dst_input_) + "]";
}

const Edge* Node::input_edge(int i) const {
  for (const Edge* e : in_edges_)
    if (e->dst_input() == i && !e->IsControlEdge()) return e;
  return nullptr;
}

Graph::Graph(const OpRegistry* ops) : ops_(ops) {
  for (const char* name : {"_SOURCE", "_SINK"}) {
    proto::NodeDef d;
    d.set_name(name);
    d.set_op("NoOp");
    AddInternalNode(std::move(d), {}, {});
  }
  AddControlEdge(source_node(), sink_node());
  versions_.set_producer(0);
}

Graph::~Graph() = default;

Status Graph::AddNode(proto::NodeDef def, Node** out) {
  const proto::OpDef* op_def;
  Status s = ops_->LookUpOpDef(def.op(), &op_def);
  if (!s.ok()) return errors::NotFound(NodePrefix(def), ": ", s.message());
  GR_RETURN_IF_ERROR(AddDefaultsAndValidate(*op_def, &def));
  std::vector<DataType> in, outs;
  GR_RETURN_IF_ERROR(InputOutputTypes(def, *op_def, &in, &outs));
  Node* n = AddInternalNode(std::move(def), std::move(in), std::move(outs));
  n->op_def_ = op_def;
  *out = n;
  return Status::OK();
}

Node* Graph::AddInternalNode(proto::NodeDef def, std::vector<DataType> inputs, std::vector<DataType> outputs) {
  auto n = std::make_unique<Node>();
  n->id_ = static_cast<int>(nodes_.size());
  n->def_ = std::move(def);
  n->input_types_ = std::move(inputs);
  n->output_types_ = std::move(outputs);
  nodes_.push_back(std::move(n));
  ++num_nodes_;
  return nodes_.back().get();
}

Status Graph::SetAttrs(Node* n, const google::protobuf::Map<std::string, proto::AttrValue>& attrs) {
  if (n->op_def_ == nullptr) return errors::Internal(NodePrefix(n->def_), ": not an op node");
  proto::NodeDef def = n->def_;
  *def.mutable_attr() = attrs;
  GR_RETURN_IF_ERROR(AddDefaultsAndValidate(*n->op_def_, &def));
  std::vector<DataType> in, outs;
  GR_RETURN_IF_ERROR(InputOutputTypes(def, *n->op_def_, &in, &outs));
  if (in != n->input_types_ || outs != n->output_types_)
    return errors::InvalidArgument(NodePrefix(n->def_), ": new attrs would change its input or output types");
  n->def_ = std::move(def);
  return Status::OK();
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  auto e = std::make_unique<Edge>();
  e->id_ = static_cast<int>(edges_.size());
  e->src_ = src;
  e->dst_ = dst;
  e->src_output_ = src_output;
  e->dst_input_ = dst_input;
  src->out_edges_.push_back(e.get());
  dst->in_edges_.push_back(e.get());
  edges_.push_back(std::move(e));
  return edges_.back().get();
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  // Either list would show a duplicate; the shorter one keeps a node with
  // many edges (_SINK, _SOURCE, a NoOp waiting for N nodes) from making
  // every edge added to it cost its degree.
  if (src->out_edges_.size() <= dst->in_edges_.size()) {
    for (const Edge* e : src->out_edges_)
      if (e->IsControlEdge() && e->dst() == dst) return nullptr;
  } else {
    for (const Edge* e : dst->in_edges_)
      if (e->IsControlEdge() && e->src() == src) return nullptr;
  }
  return AddEdge(src, kControlSlot, dst, kControlSlot);
}

void Node::SetInternalAttr(const std::string& name, const proto::AttrValue& value) {
  if (name.empty() || name[0] != '_') std::abort();  // a programming error, not bad input
  (*def_.mutable_attr())[name] = value;
}

void Graph::RemoveEdge(const Edge* e) {
  auto erase = [](std::vector<const Edge*>& v, const Edge* x) { v.erase(std::find(v.begin(), v.end(), x)); };
  erase(e->src()->out_edges_, e);
  erase(e->dst()->in_edges_, e);
  edges_[e->id()].reset();
}

void Graph::RemoveEdges(const std::vector<const Edge*>& edges) {
  // A set of the batch, not a mark per edge id: a caller may remove a few
  // edges at a time from a large graph.
  const std::unordered_set<const Edge*> gone(edges.begin(), edges.end());
  std::vector<Node*> ends;
  for (const Edge* e : gone) {
    ends.push_back(e->src());
    ends.push_back(e->dst());
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  auto removed = [&](const Edge* e) { return gone.count(e) != 0; };
  for (Node* n : ends) {  // one stable pass per node touched
    n->out_edges_.erase(std::remove_if(n->out_edges_.begin(), n->out_edges_.end(), removed), n->out_edges_.end());
    n->in_edges_.erase(std::remove_if(n->in_edges_.begin(), n->in_edges_.end(), removed), n->in_edges_.end());
  }
  for (const Edge* e : gone) edges_[e->id()].reset();
}

void Graph::RemoveNode(Node* n) {
  std::vector<const Edge*> all(n->in_edges_.begin(), n->in_edges_.end());
  all.insert(all.end(), n->out_edges_.begin(), n->out_edges_.end());
  for (const Edge* e : all) RemoveEdge(e);
  nodes_[n->id()].reset();
  --num_nodes_;
}

void Graph::RemoveNodes(const std::vector<Node*>& nodes) {
  if (nodes.empty()) return;
  std::vector<char> gone(nodes_.size(), 0), touched(nodes_.size(), 0);
  std::vector<Node*> doomed;
  for (Node* n : nodes) {
    if (gone[n->id()]) continue;
    gone[n->id()] = 1;
    doomed.push_back(n);
  }
  std::vector<Node*> neighbours;
  auto touch = [&](Node* o) {
    if (gone[o->id()] || touched[o->id()]) return;
    touched[o->id()] = 1;
    neighbours.push_back(o);
  };
  for (Node* n : doomed) {
    for (const Edge* e : n->in_edges_) touch(e->src());
    for (const Edge* e : n->out_edges_) touch(e->dst());
  }
  // One stable pass per surviving neighbour keeps its edge order.
  for (Node* o : neighbours) {
    auto& outs = o->out_edges_;
    outs.erase(std::remove_if(outs.begin(), outs.end(), [&](const Edge* e) { return gone[e->dst()->id()]; }),
               outs.end());
    auto& ins = o->in_edges_;
    ins.erase(std::remove_if(ins.begin(), ins.end(), [&](const Edge* e) { return gone[e->src()->id()]; }),
              ins.end());
  }
  // Each removed edge once: those to survivors here, then every in-edge of
  // a removed node (edges between two removed nodes are among the latter).
  for (Node* n : doomed)
    for (const Edge* e : n->out_edges_)
      if (!gone[e->dst()->id()]) edges_[e->id()].reset();
  for (Node* n : doomed)
    for (const Edge* e : n->in_edges_) edges_[e->id()].reset();
  for (Node* n : doomed) {
    nodes_[n->id()].reset();
    --num_nodes_;
  }
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> v;
  for (const auto& n : nodes_)
    if (n) v.push_back(n.get());
  return v;
}

std::vector<Node*> Graph::op_nodes() const {
  std::vector<Node*> v;
  for (const auto& n : nodes_)
    if (n && n->IsOp()) v.push_back(n.get());
  return v;
}

std::unordered_map<std::string, Node*> Graph::BuildNameIndex() const {
  std::unordered_map<std::string, Node*> m;
  for (const auto& n : nodes_)
    if (n) m[n->name()] = n.get();
  return m;
}

void Graph::ToGraphDef(proto::GraphDef* out) const {
  out->Clear();
  *out->mutable_versions() = versions_;
  for (Node* n : TopologicalOrder()) {
    if (!n->IsOp()) continue;
    proto::NodeDef* d = out->add_node();
    *d = n->def();
    d->clear_input();
    std::vector<const Edge*> data(n->num_inputs(), nullptr);
    std::vector<std::string> controls;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        if (e->src()->IsOp()) controls.push_back("^" + e->src()->name());
      } else {
        data[e->dst_input()] = e;
      }
    }
    for (const Edge* e : data) {
      if (e == nullptr) continue;
      d->add_input(e->src_output() == 0 ? e->src()->name()
                                        : e->src()->name() + ":" + std::to_string(e->src_output()));
    }
    for (auto& c : controls) d->add_input(c);
    if (!n->assigned_device().empty() && d->device().empty()) d->set_device(n->assigned_device());
  }
}

std::vector<Node*> Graph::TopologicalOrder() const {
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<Node*> ready, order;
  for (Node* n : nodes()) {
    pending[n->id()] = NumForwardInEdges(*n);
    if (pending[n->id()] == 0) ready.push_back(n);
  }
  // Pop from the back but push in reverse so ties keep id order.
  std::reverse(ready.begin(), ready.end());
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    order.push_back(n);
    if (IsBackEdgeSource(*n)) continue;
    std::vector<Node*> next;
    for (const Edge* e : n->out_edges())
      if (--pending[e->dst()->id()] == 0) next.push_back(e->dst());
    ready.insert(ready.end(), next.rbegin(), next.rend());
  }
  return order;
}

Status ConvertGraphDefToGraph(const proto::GraphDef& def, Graph* g, const GraphLimits& limits) {
  if (def.has_versions()) GR_RETURN_IF_ERROR(CheckVersions(def.versions()));
  g->set_versions(def.versions());
  return AddNodeDefs(def, g, limits);
}

Status ConvertPartitionGraphDef(const proto::GraphDef& def, Graph* g, const GraphLimits& limits) {
  if (def.has_versions()) GR_RETURN_IF_ERROR(CheckVersions(def.versions()));
  g->set_versions(def.versions());
  return AddNodeDefs(def, g, limits, /*internal_names=*/true);
}

Status ExtendGraph(const proto::GraphDef& def, Graph* g, const GraphLimits& limits) {
  if (def.has_versions()) {
    GR_RETURN_IF_ERROR(CheckVersions(def.versions()));
    if (g->num_op_nodes() > 0 && def.versions().producer() != g->versions().producer())
      return errors::InvalidArgument("Extend: GraphDef producer version ", def.versions().producer(),
                                     " differs from the session graph's ", g->versions().producer());
  }
  return AddNodeDefs(def, g, limits);
}

void CopyGraph(const Graph& src, Graph* dst) { CopyGraph(src, std::vector<bool>(src.num_node_ids(), true), dst); }

void CopyGraph(const Graph& src, const std::vector<bool>& keep, Graph* dst) {
  dst->set_versions(src.versions());
  std::vector<Node*> map(src.num_node_ids(), nullptr);
  map[0] = dst->source_node();
  map[1] = dst->sink_node();
  for (Node* n : src.op_nodes()) {
    if (!keep[n->id()]) continue;
    Node* c = dst->AddInternalNode(n->def(), n->input_types(), n->output_types());
    c->op_def_ = n->op_def_;
    c->set_assigned_device(n->assigned_device());
    map[n->id()] = c;
  }
  for (Node* n : src.nodes()) {
    if (map[n->id()] == nullptr) continue;
    for (const Edge* e : n->out_edges()) {
      if (e->src()->IsSource() && e->dst()->IsSink()) continue;  // dst has it already
      if (map[e->dst()->id()] == nullptr) continue;
      dst->AddEdge(map[e->src()->id()], e->src_output(), map[e->dst()->id()], e->dst_input());
    }
  }
}

}  // namespace graphrt
