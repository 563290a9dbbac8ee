#include "graphrt/core/gradients.h"

#include <google/protobuf/text_format.h>

#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core_api_internal.h"
#include "graphrt/core/control_flow.h"
#include "node_def_util.h"

namespace graphrt {

const GradientRegistration* GradientRegistry::LookUp(const std::string& op) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto it = grads_.find(op);
  return it == grads_.end() ? nullptr : it->second.get();
}

Status GradientRegistry::CheckAll(const std::vector<std::unique_ptr<GradientRegistration>>& staged) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::set<std::string> seen;
  for (const auto& r : staged) {
    if (!seen.insert(r->op).second)
      return errors::AlreadyExists("registers the gradient of op '", r->op, "' twice");
    auto it = grads_.find(r->op);
    if (it != grads_.end())
      return errors::AlreadyExists("registers the gradient of op '", r->op, "', which plugin '", it->second->plugin,
                                   "' registered already");
  }
  return Status::OK();
}

void GradientRegistry::AddAll(std::vector<std::unique_ptr<GradientRegistration>> staged) {
  std::unique_lock<std::shared_mutex> l(mu_);
  for (auto& r : staged) grads_[r->op] = std::move(r);
}

namespace {

std::string TensorName(const GraphOutput& t) { return t.first->name() + ":" + std::to_string(t.second); }

struct OutputHash {
  size_t operator()(const GraphOutput& t) const {
    return std::hash<const void*>()(t.first) * 31 + static_cast<size_t>(t.second);
  }
};

// One AddSymbolicGradients call: its names, the nodes it added, and the
// gradients gathered per tensor.
class Builder {
 public:
  Builder(Graph* g, const std::string& scope, const std::function<Node*(const std::string&)>& find_node,
          std::vector<Node*>* added)
      : g_(g), scope_(scope), find_node_(find_node), added_(added) {}

  // A name under `prefix` ("scope/...") no node has.
  std::string UniqueName(const std::string& prefix) {
    std::string name = prefix;
    for (int k = 1; Taken(name); ++k) name = prefix + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  Node* Find(const std::string& name) const {
    auto it = own_.find(name);
    if (it != own_.end()) return it->second;
    return find_node_(name);
  }

  // Adds `def` (named already, inputs as tensor names of the graph or of
  // nodes added here).
  Status Add(proto::NodeDef def, Node** out) {
    std::vector<GraphOutput> inputs;
    std::vector<Node*> controls;
    for (const std::string& in : def.input()) {
      std::string src;
      int index;
      bool control;
      if (!ParseTensorName(in, &src, &index, &control))
        return errors::InvalidArgument("Node '", def.name(), "': malformed input '", in, "'");
      Node* n = Find(src);
      if (n == nullptr) return errors::InvalidArgument("Node '", def.name(), "': Unknown input node '", in, "'");
      if (control) {
        controls.push_back(n);
      } else {
        inputs.emplace_back(n, index);
      }
    }
    GR_RETURN_IF_ERROR(AddNodeWithInputs(std::move(def), inputs, controls, g_, out));
    own_[(*out)->name()] = *out;
    added_->push_back(*out);
    return Status::OK();
  }

  // A node of `op` named under the scope (`base`, made unique) with one
  // type attr T.
  Status AddSimple(const std::string& base, const std::string& op, const std::vector<GraphOutput>& inputs,
                   const std::vector<std::pair<std::string, DataType>>& type_attrs, GraphOutput* out) {
    proto::NodeDef def;
    def.set_name(UniqueName(scope_ + "/" + base));
    def.set_op(op);
    for (const GraphOutput& in : inputs) def.add_input(TensorName(in));
    for (const auto& [attr, t] : type_attrs) (*def.mutable_attr())[attr].set_type(static_cast<proto::DataType>(t));
    Node* n;
    GR_RETURN_IF_ERROR(Add(std::move(def), &n));
    *out = {n, 0};
    return Status::OK();
  }

  const std::string& scope() const { return scope_; }

 private:
  bool Taken(const std::string& name) const { return taken_.count(name) || find_node_(name) != nullptr; }

  Graph* g_;
  std::string scope_;
  const std::function<Node*(const std::string&)>& find_node_;
  std::vector<Node*>* added_;
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, Node*> own_;
};

Status Unsupported(const Node& n) {
  return errors::Unimplemented("Node '", n.name(), "' (op '", n.op(),
                               "'): gradients through while loops and conditionals are not built yet");
}

}  // namespace

Status AddSymbolicGradients(Graph* g, const GradientRegistry& registry, const std::vector<GraphOutput>& ys,
                            const std::vector<GraphOutput>& xs, const std::vector<GraphOutput>& grad_ys,
                            const std::string& scope, const std::function<Node*(const std::string&)>& find_node,
                            std::vector<GraphOutput>* dxs, std::vector<Node*>* added) {
  auto check = [&](const GraphOutput& t, const char* what) -> Status {
    if (t.first == nullptr || !t.first->IsOp() || g->FindNodeId(t.first->id()) != t.first)
      return errors::InvalidArgument("gradients: a tensor of ", what, " is not in the graph");
    if (t.second < 0 || t.second >= t.first->num_outputs())
      return errors::InvalidArgument("gradients: ", what, " names output ", t.second, " of '", t.first->name(),
                                     "', which has ", t.first->num_outputs());
    return Status::OK();
  };
  for (const GraphOutput& y : ys) GR_RETURN_IF_ERROR(check(y, "ys"));
  for (const GraphOutput& x : xs) GR_RETURN_IF_ERROR(check(x, "xs"));
  if (!grad_ys.empty() && grad_ys.size() != ys.size())
    return errors::InvalidArgument("gradients: ", grad_ys.size(), " initial gradients for ", ys.size(), " ys");
  for (size_t i = 0; i < grad_ys.size(); ++i) {
    GR_RETURN_IF_ERROR(check(grad_ys[i], "grad_ys"));
    const DataType want = BaseType(ys[i].first->output_type(ys[i].second));
    const DataType got = BaseType(grad_ys[i].first->output_type(grad_ys[i].second));
    if (want != got)
      return errors::InvalidArgument("gradients: the initial gradient of '", TensorName(ys[i]), "' is ",
                                     DataTypeString(got), ", not ", DataTypeString(want));
  }
  dxs->assign(xs.size(), GraphOutput{nullptr, -1});

  // The nodes on a path from an x to a y, over data edges.
  const int n_ids = g->num_node_ids();
  std::vector<char> from_x(n_ids, 0), to_y(n_ids, 0);
  std::deque<Node*> queue;
  for (const GraphOutput& x : xs) {
    if (!from_x[x.first->id()]) queue.push_back(x.first);
    from_x[x.first->id()] = 1;
  }
  while (!queue.empty()) {
    Node* n = queue.front();
    queue.pop_front();
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge() || from_x[e->dst()->id()]) continue;
      from_x[e->dst()->id()] = 1;
      queue.push_back(e->dst());
    }
  }
  for (const GraphOutput& y : ys) {
    if (!to_y[y.first->id()]) queue.push_back(y.first);
    to_y[y.first->id()] = 1;
  }
  while (!queue.empty()) {
    Node* n = queue.front();
    queue.pop_front();
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge() || to_y[e->src()->id()]) continue;
      to_y[e->src()->id()] = 1;
      queue.push_back(e->src());
    }
  }
  auto on_path = [&](const Node* n) { return from_x[n->id()] && to_y[n->id()]; };

  // A node is differentiated once every consumer on the path has passed its
  // gradient back.
  std::vector<int> pending(n_ids, 0);
  for (int id = 0; id < n_ids; ++id) {
    Node* n = g->FindNodeId(id);
    if (n == nullptr || !on_path(n)) continue;
    if (ControlFlowOpOf(n->op()) != ControlFlowOp::kNone) return Unsupported(*n);
    for (const Edge* e : n->out_edges())
      if (!e->IsControlEdge() && on_path(e->dst())) ++pending[id];
  }

  Builder b(g, scope, find_node, added);
  std::unordered_map<GraphOutput, std::vector<GraphOutput>, OutputHash> arriving;
  for (size_t i = 0; i < ys.size(); ++i) {
    GraphOutput seed;
    if (grad_ys.empty()) {
      GR_RETURN_IF_ERROR(
          b.AddSimple("OnesLike", "OnesLike", {ys[i]}, {{"T", BaseType(ys[i].first->output_type(ys[i].second))}}, &seed));
    } else {
      seed = grad_ys[i];
    }
    arriving[ys[i]].push_back(seed);
  }
  // The sum of what arrived at tensor t (AddN of several), or {nullptr, -1}.
  auto gathered = [&](const GraphOutput& t, GraphOutput* out) -> Status {
    auto it = arriving.find(t);
    if (it == arriving.end() || it->second.empty()) {
      *out = {nullptr, -1};
      return Status::OK();
    }
    if (it->second.size() == 1) {
      *out = it->second[0];
      return Status::OK();
    }
    proto::NodeDef def;
    def.set_name(b.UniqueName(scope + "/AddN"));
    def.set_op("AddN");
    for (const GraphOutput& part : it->second) def.add_input(TensorName(part));
    (*def.mutable_attr())["N"].set_i(static_cast<int64_t>(it->second.size()));
    (*def.mutable_attr())["T"].set_type(static_cast<proto::DataType>(BaseType(t.first->output_type(t.second))));
    Node* n;
    GR_RETURN_IF_ERROR(b.Add(std::move(def), &n).WithContext("summing the gradients of '" + TensorName(t) + "': "));
    it->second.assign(1, GraphOutput{n, 0});
    *out = {n, 0};
    return Status::OK();
  };

  std::vector<Node*> ready;
  for (int id = 0; id < n_ids; ++id) {
    Node* n = g->FindNodeId(id);
    if (n != nullptr && on_path(n) && pending[id] == 0) ready.push_back(n);
  }
  std::unordered_map<const Node*, std::vector<size_t>> x_indices;
  for (size_t i = 0; i < xs.size(); ++i) x_indices[xs[i].first].push_back(i);

  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    // What arrived at each output, summed.
    std::vector<GraphOutput> dys(n->num_outputs());
    bool any = false;
    for (int k = 0; k < n->num_outputs(); ++k) {
      GR_RETURN_IF_ERROR(gathered({n, k}, &dys[k]));
      any |= dys[k].first != nullptr;
    }
    auto xi = x_indices.find(n);
    if (xi != x_indices.end()) {
      for (size_t i : xi->second) (*dxs)[i] = dys[xs[i].second];
    }
    // Producers on the path wait for this node whether or not it passes a
    // gradient back.
    std::vector<int> path_inputs;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge() || !on_path(e->src())) continue;
      path_inputs.push_back(e->dst_input());
      if (--pending[e->src()->id()] == 0) ready.push_back(e->src());
    }
    if (!any || path_inputs.empty()) continue;
    const GradientRegistration* reg = registry.LookUp(n->op());
    if (reg == nullptr)
      return errors::NotFound("No gradient defined for operation '", n->name(), "' (op type: ", n->op(),
                              "): the plugin that defines ", n->op(), " registers none");
    if (reg->fn == nullptr) continue;  // not differentiable: nothing flows on
    // Outputs nothing arrived at get zeros for the gradient function.
    for (int k = 0; k < n->num_outputs(); ++k) {
      if (dys[k].first != nullptr) continue;
      GR_RETURN_IF_ERROR(b.AddSimple(n->name() + "_grad/zeros_like", "ZerosLike", {{n, k}},
                                     {{"T", BaseType(n->output_type(k))}}, &dys[k]));
    }
    GR_GradientContext ctx;
    ctx.attrs = GR_Attrs{&n->def(), HostAllocator(), nullptr};
    ctx.attrs.error = &ctx.status;
    ctx.node = n;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Edge* e = n->input_edge(i);
      ctx.inputs.push_back(e ? TensorName({e->src(), e->src_output()}) : std::string());
      ctx.input_types.push_back(BaseType(n->input_type(i)));
    }
    for (int k = 0; k < n->num_outputs(); ++k) {
      ctx.outputs.push_back(TensorName({n, k}));
      ctx.output_grads.push_back(TensorName(dys[k]));
      ctx.output_types.push_back(BaseType(n->output_type(k)));
    }
    ctx.input_grads.assign(n->num_inputs(), std::string());
    const std::string grad_scope = scope + "/" + n->name() + "_grad";
    ctx.add_node = [&](const std::string& name, const std::string& text, std::string* final_name) -> Status {
      proto::NodeDef def;
      if (!google::protobuf::TextFormat::ParseFromString(text, &def))
        return errors::InvalidArgument("gradient of '", n->name(), "': node '", name,
                                       "' is not a NodeDef in text format: ", text);
      if (!IsValidNodeName(name))
        return errors::InvalidArgument("gradient of '", n->name(), "': '", name, "' is not a valid node name");
      def.set_name(b.UniqueName(grad_scope + "/" + name));
      Node* added_node;
      GR_RETURN_IF_ERROR(b.Add(std::move(def), &added_node)
                             .WithContext("gradient of node '" + n->name() + "' (op '" + n->op() + "'): "));
      *final_name = added_node->name();
      return Status::OK();
    };
    int32_t rc = GR_OK;
    Status thrown = StatusFromExceptions("gradient function", [&] {
      rc = reg->fn(&ctx, reg->user_data);
      return Status::OK();
    });
    if (!thrown.ok() && ctx.status.ok()) ctx.status = std::move(thrown);
    if (rc != GR_OK || !ctx.status.ok()) {
      const Status s = ctx.status.ok() ? errors::Internal("the gradient function failed without a message")
                                       : ctx.status;
      return Status(s.code(), "gradient of node '" + n->name() + "' (op '" + n->op() + "', plugin '" + reg->plugin +
                                  "'): " + s.message());
    }
    for (int i : path_inputs) {
      const std::string& grad = ctx.input_grads[i];
      if (grad.empty()) continue;  // no gradient for this input
      std::string src_name;
      int slot;
      bool control;
      Node* src = ParseTensorName(grad, &src_name, &slot, &control) && !control ? b.Find(src_name) : nullptr;
      if (src == nullptr || slot >= src->num_outputs())
        return errors::Internal("gradient of node '", n->name(), "' (op '", n->op(), "'): input ", i,
                                "'s gradient '", grad, "' is no tensor of the graph");
      if (BaseType(src->output_type(slot)) != BaseType(n->input_type(i)))
        return errors::InvalidArgument("gradient of node '", n->name(), "' (op '", n->op(), "'): input ", i,
                                       "'s gradient '", grad, "' is ", DataTypeString(src->output_type(slot)),
                                       " but the input is ", DataTypeString(BaseType(n->input_type(i))));
      const Edge* e = n->input_edge(i);
      arriving[{e->src(), e->src_output()}].emplace_back(src, slot);
    }
  }
  // An x that is also on another x's path was summed when it was reached;
  // one never reached has no gradient.
  return Status::OK();
}

}  // namespace graphrt
