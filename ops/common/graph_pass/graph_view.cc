#include "common/graph_pass/graph_view.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace graphrt {
namespace passes {

namespace {

// "node", "node:3", "^node" (the core checks the result strictly; here a
// malformed name is only an unknown input).
bool ParseInput(const std::string& s, std::string* node, int* slot) {
  const bool control = !s.empty() && s[0] == '^';
  std::string body = control ? s.substr(1) : s;
  *slot = control ? kControlSlot : 0;
  const size_t colon = body.rfind(':');
  if (!control && colon != std::string::npos) {
    const std::string num = body.substr(colon + 1);
    if (num.empty() || num.size() > 9 || !std::all_of(num.begin(), num.end(), ::isdigit)) return false;
    *slot = std::stoi(num);
    body.resize(colon);
  }
  *node = body;
  return !body.empty();
}

bool IsNextIteration(const Node& n) { return n.op() == "NextIteration" || n.op() == "RefNextIteration"; }

}  // namespace

const Edge* Node::input_edge(int i) const {
  for (const Edge* e : in_edges_)
    if (e->dst_input() == i && !e->IsControlEdge()) return e;
  return nullptr;
}

const pp::AttrValue* Node::attr(const std::string& name) const {
  auto it = def_.attr().find(name);
  return it == def_.attr().end() ? nullptr : &it->second;
}

bool Graph::Parse(const std::string& serialized, std::string* error) {
  pp::GraphDef def;
  if (!def.ParseFromString(serialized)) {
    *error = "the graph the core gave does not parse as a GraphDef";
    return false;
  }
  versions_ = def.versions();
  std::unordered_map<std::string, Node*> index;
  for (pp::NodeDef& nd : *def.mutable_node()) {
    int data_inputs = 0;
    for (const std::string& in : nd.input()) data_inputs += in.empty() || in[0] != '^';
    Node* n = AddNode(nd, data_inputs);
    index[n->name()] = n;
  }
  for (const pp::NodeDef& nd : def.node()) {
    Node* dst = index.at(nd.name());
    int data = 0;
    for (const std::string& in : nd.input()) {
      std::string src;
      int slot;
      auto it = ParseInput(in, &src, &slot) ? index.find(src) : index.end();
      if (it == index.end()) {
        *error = "node '" + nd.name() + "' has an unknown input '" + in + "'";
        return false;
      }
      if (slot == kControlSlot)
        AddControlEdge(it->second, dst);
      else
        AddEdge(it->second, slot, dst, data++);
    }
  }
  return true;
}

std::string Graph::Serialize() const {
  pp::GraphDef out;
  *out.mutable_versions() = versions_;
  for (Node* n : nodes()) {
    pp::NodeDef* d = out.add_node();
    *d = n->def();
    d->clear_input();
    std::vector<const Edge*> data(n->num_inputs(), nullptr);
    std::vector<std::string> controls;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge())
        controls.push_back("^" + e->src()->name());
      else if (e->dst_input() < n->num_inputs())
        data[e->dst_input()] = e;
    }
    // A missing input stays missing: the core reports the node.
    for (const Edge* e : data)
      if (e != nullptr)
        d->add_input(e->src_output() == 0 ? e->src()->name() : e->src()->name() + ":" + std::to_string(e->src_output()));
    for (std::string& c : controls) d->add_input(std::move(c));
  }
  return out.SerializeAsString();
}

Node* Graph::AddNode(pp::NodeDef def, int num_inputs) {
  auto n = std::make_unique<Node>();
  n->id_ = num_node_ids();
  n->def_ = std::move(def);
  n->num_inputs_ = num_inputs;
  names_.insert(n->name());
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
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
  // The shorter list, as the core's Graph does: scanning dst's in-edges
  // made Parse quadratic in a node with N control inputs (a NoOp that
  // waits for N nodes).
  if (src->out_edges_.size() <= dst->in_edges_.size()) {
    for (const Edge* e : src->out_edges_)
      if (e->IsControlEdge() && e->dst() == dst) return nullptr;
  } else {
    for (const Edge* e : dst->in_edges_)
      if (e->IsControlEdge() && e->src() == src) return nullptr;
  }
  return AddEdge(src, kControlSlot, dst, kControlSlot);
}

void Graph::RemoveEdge(const Edge* e) {
  auto erase = [](std::vector<const Edge*>& v, const Edge* x) { v.erase(std::find(v.begin(), v.end(), x)); };
  erase(e->src()->out_edges_, e);
  erase(e->dst()->in_edges_, e);
  edges_[e->id_].reset();
}

void Graph::RemoveNode(Node* n) {
  std::vector<const Edge*> all(n->in_edges_.begin(), n->in_edges_.end());
  all.insert(all.end(), n->out_edges_.begin(), n->out_edges_.end());
  for (const Edge* e : all) RemoveEdge(e);
  names_.erase(n->name());
  nodes_[n->id_].reset();
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> v;
  for (const auto& n : nodes_)
    if (n) v.push_back(n.get());
  return v;
}

std::vector<Node*> Graph::TopologicalOrder() const {
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<Node*> ready, order;
  for (Node* n : nodes()) {
    for (const Edge* e : n->in_edges()) pending[n->id()] += IsNextIteration(*e->src()) ? 0 : 1;
    if (pending[n->id()] == 0) ready.push_back(n);
  }
  // Pop from the back, pushed in reverse: ties keep id order.
  std::reverse(ready.begin(), ready.end());
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    order.push_back(n);
    if (IsNextIteration(*n)) continue;
    std::vector<Node*> next;
    for (const Edge* e : n->out_edges())
      if (--pending[e->dst()->id()] == 0) next.push_back(e->dst());
    ready.insert(ready.end(), next.rbegin(), next.rend());
  }
  return order;
}

std::vector<int> Graph::TopologicalIds() const {
  std::vector<int> ids;
  for (Node* n : TopologicalOrder()) ids.push_back(n->id());
  return ids;
}

std::vector<int> Graph::LoopDepths() const {
  bool loops = false;
  for (Node* n : nodes()) loops = loops || n->op() == "Enter" || n->op() == "RefEnter";
  if (!loops) return {};
  // A node is in the frame of its inputs; Enter goes one loop in, Exit one
  // out (TensorFlow's frames; the back edge into Merge adds nothing).
  std::vector<int> depth(nodes_.size(), 0);
  for (Node* n : TopologicalOrder()) {
    int d = 0;
    for (const Edge* e : n->in_edges())
      if (!IsNextIteration(*e->src())) d = std::max(d, depth[e->src()->id()]);
    if (n->op() == "Enter" || n->op() == "RefEnter") ++d;
    if ((n->op() == "Exit" || n->op() == "RefExit") && d > 0) --d;
    depth[n->id()] = d;
  }
  return depth;
}

std::string Graph::UniqueName(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

const std::string& PassEnv::DeviceType(const std::string& device) {
  auto it = device_types_.find(device);
  if (it == device_types_.end()) it = device_types_.emplace(device, ctx_.DeviceType(device)).first;
  return it->second;
}

bool PassEnv::KernelAvailable(const pp::NodeDef& node, const std::string& device) {
  return ctx_.KernelAvailable(node.SerializeAsString(), device);
}

const pp::OpDef* PassEnv::OpDef(const std::string& op) {
  auto it = op_defs_.find(op);
  if (it == op_defs_.end()) {
    std::string bytes;
    std::unique_ptr<pp::OpDef> def;
    if (ctx_.OpDef(op, &bytes)) {
      def = std::make_unique<pp::OpDef>();
      if (!def->ParseFromString(bytes)) def.reset();
    }
    it = op_defs_.emplace(op, std::move(def)).first;
  }
  return it->second.get();
}

sdk::Status RunRewrite(sdk::GraphPassContext& ctx, const std::string& graph_def, std::string* rewritten,
                       bool* changed, const std::function<bool(PassEnv& env, Graph* g)>& rewrite) {
  Graph g;
  std::string error;
  if (!g.Parse(graph_def, &error)) return sdk::Status(GR_INVALID_ARGUMENT, error);
  PassEnv env(ctx);
  *changed = rewrite(env, &g);
  if (*changed) *rewritten = g.Serialize();
  return sdk::Status::OK();
}

std::string StringAttr(const Node& n, const char* name) {
  const pp::AttrValue* v = n.attr(name);
  return v ? v->s() : std::string();
}

pp::DataType TypeAttr(const Node& n) {
  const pp::AttrValue* v = n.attr("T");
  return v ? v->type() : pp::DT_INVALID;
}

bool ConstInts(const Node& n, std::vector<int64_t>* values, int max_elements) {
  const pp::AttrValue* v = n.op() == "Const" ? n.attr("value") : nullptr;
  if (v == nullptr || !v->has_tensor()) return false;
  const pp::TensorProto& t = v->tensor();
  if (t.dtype() != pp::DT_INT32 && t.dtype() != pp::DT_INT64) return false;
  // Bounded before multiplying: only small constants (axes, perms,
  // paddings) are worth reading.
  int64_t count = 1;
  if (t.tensor_shape().unknown_rank()) return false;
  for (const auto& dim : t.tensor_shape().dim()) {
    if (dim.size() < 0 || dim.size() > max_elements) return false;
    count *= dim.size();
    if (count > max_elements) return false;
  }
  const bool is32 = t.dtype() == pp::DT_INT32;
  values->clear();
  if (!t.tensor_content().empty()) {
    const size_t width = is32 ? 4 : 8;
    if (t.tensor_content().size() != static_cast<size_t>(count) * width) return false;
    for (int64_t i = 0; i < count; ++i) {  // little-endian, as TensorFlow writes it
      const char* p = t.tensor_content().data() + i * width;
      if (is32) {
        int32_t x;
        std::memcpy(&x, p, 4);
        values->push_back(x);
      } else {
        int64_t x;
        std::memcpy(&x, p, 8);
        values->push_back(x);
      }
    }
    return true;
  }
  const int given = is32 ? t.int_val_size() : t.int64_val_size();
  if (given > count) return false;
  // Fewer values than elements: the last one repeats (none: zeros).
  for (int64_t i = 0; i < count; ++i) {
    const int k = static_cast<int>(std::min<int64_t>(i, given - 1));
    values->push_back(given == 0 ? 0 : is32 ? t.int_val(k) : t.int64_val(k));
  }
  return true;
}

Node* SoleConsumer(PassEnv& env, const Node& n) {
  if (env.IsTarget(n.name())) return nullptr;
  Node* consumer = nullptr;
  for (const Edge* e : n.out_edges()) {
    if (e->IsControlEdge()) continue;
    if (consumer != nullptr || e->src_output() != 0 || e->dst_input() != 0) return nullptr;
    consumer = e->dst();
  }
  return consumer;
}

}  // namespace passes
}  // namespace graphrt
