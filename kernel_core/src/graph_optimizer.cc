#include "graphrt/core/graph_optimizer.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "generic_passes.h"
#include "graph_pass_context.h"
#include "graphrt/core/control_flow.h"
#include "graphrt/core/op_registry.h"
#include "node_def_util.h"

namespace graphrt {

Status GraphPassRegistry::CheckAll(const std::vector<std::unique_ptr<GraphPassRegistration>>& staged) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::unordered_set<std::string> names;
  for (const auto& p : passes_) names.insert(p->name);
  for (const auto& p : staged)
    if (!names.insert(p->name).second)
      return errors::AlreadyExists("graph pass '", p->name, "' is registered twice (pass names are unique)");
  return Status::OK();
}

void GraphPassRegistry::AddAll(std::vector<std::unique_ptr<GraphPassRegistration>> staged) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : staged) passes_.push_back(std::move(p));
  std::stable_sort(passes_.begin(), passes_.end(), [](const auto& a, const auto& b) {
    return a->order != b->order ? a->order < b->order : a->name < b->name;
  });
}

std::vector<const GraphPassRegistration*> GraphPassRegistry::Passes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const GraphPassRegistration*> v;
  for (const auto& p : passes_) v.push_back(p.get());
  return v;
}

namespace {

// Ops that write through their inputs are not marked stateful in
// TensorFlow (Assign, ScatterAdd, TensorArrayWriteV3, ...): a ref or a
// resource input may be written.
bool MayWriteItsInputs(const Node& n) {
  for (DataType t : n.input_types())
    if (IsRefType(t) || t == GR_RESOURCE) return true;
  return false;
}

void RemoveControlOnlyNodes(Graph* g) {
  if (HasControlFlow(*g)) return;
  bool changed = true;
  while (changed) {
    changed = false;
    for (Node* n : g->op_nodes()) {
      // Core-internal nodes (no OpDef) and stateful ones stay; so do nodes
      // without outputs (NoOps: free to run, and rerouting a group's k
      // inputs to its m waiters would make k * m edges).
      if (n->op_def() == nullptr || n->IsStateful() || n->num_outputs() == 0 || n->out_edges().empty() ||
          MayWriteItsInputs(*n))
        continue;
      bool control_only = true;
      for (const Edge* e : n->out_edges()) control_only &= e->IsControlEdge() && e->dst()->IsOp();
      if (!control_only) continue;
      std::vector<Node*> waiters, inputs;
      for (const Edge* e : n->out_edges()) waiters.push_back(e->dst());
      for (const Edge* e : n->in_edges())
        if (e->src()->IsOp()) inputs.push_back(e->src());
      for (Node* w : waiters)
        for (Node* in : inputs) AddControlEdgeOnce(g, in, w);
      g->RemoveNode(n);
      for (Node* w : waiters)
        if (w->in_edges().empty()) g->AddControlEdge(g->source_node(), w);
      changed = true;
      break;  // op_nodes() is a snapshot of a graph that has changed
    }
  }
}


// ------------------------------------------------------ plugin graph passes

bool SameAttrs(const proto::NodeDef& a, const proto::NodeDef& b) {
  if (a.attr_size() != b.attr_size()) return false;
  for (const auto& [name, value] : a.attr()) {
    auto it = b.attr().find(name);
    if (it == b.attr().end() || !google::protobuf::util::MessageDifferencer::Equals(value, it->second)) return false;
  }
  return true;
}

// Builds the graph a pass returned, checking what it may change (see
// GR_GraphPassSpec): nodes on devices of other types keep their op, attrs
// and device; new nodes are on devices of the pass's type; targets stay.
// The core's own nodes (no OpDef: _Arg, _Retval) come back with their
// types; every other node is validated as a client's GraphDef is.
class PassResult {
 public:
  PassResult(const GraphPassRegistration& pass, const std::function<std::string(const std::string&)>& type_of,
             const std::unordered_set<std::string>& targets, const Graph& g)
      : pass_(pass), type_of_(type_of), targets_(targets), g_(g), old_(g.BuildNameIndex()) {}

  Status Build(const proto::GraphDef& out, Graph* fresh) {
    fresh->set_versions(g_.versions());
    proto::GraphDef ops;
    *ops.mutable_versions() = g_.versions();
    std::unordered_map<std::string, std::string> assigned;
    std::vector<std::pair<const proto::NodeDef*, const Node*>> internal_with_inputs;
    for (const proto::NodeDef& nd : out.node()) {
      if (!assigned.emplace(nd.name(), nd.device()).second)
        return errors::InvalidArgument("Node '", nd.name(), "' is defined twice (node names must be unique)");
      auto it = old_.find(nd.name());
      const Node* old = it != old_.end() && it->second->IsOp() ? it->second : nullptr;
      GR_RETURN_IF_ERROR(CheckAllowed(nd, old));
      proto::NodeDef def = nd;
      def.set_device(old != nullptr ? old->requested_device() : nd.device());
      if (old != nullptr && old->op_def() == nullptr) {
        if (old->op() != nd.op() || !SameAttrs(old->def(), nd))
          return errors::InvalidArgument(NodePrefix(nd), ": the core's own node was changed");
        if (nd.input_size() > 0) {
          internal_with_inputs.emplace_back(&nd, old);
        } else {
          fresh->AddInternalNode(std::move(def), old->input_types(), old->output_types());
        }
        continue;
      }
      *ops.add_node() = std::move(def);
    }
    for (Node* n : g_.op_nodes()) {
      if (assigned.count(n->name())) continue;
      if (targets_.count(n->name()))
        return errors::InvalidArgument("it removed node '", n->name(), "', which the step runs as a target");
      if (type_of_(n->assigned_device()) != pass_.device_type)
        return errors::InvalidArgument("it removed node '", n->name(), "' on ", n->assigned_device(), ", not a ",
                                       pass_.device_type, " device");
    }
    // A pass's rewrite of a graph the session accepted: the session's node
    // limit applied to the GraphDef, not to what a pass makes of it.
    GraphLimits unlimited;
    unlimited.max_nodes = std::numeric_limits<int64_t>::max();
    GR_RETURN_IF_ERROR(ExtendGraph(ops, fresh, unlimited));
    std::unordered_map<std::string, Node*> index = fresh->BuildNameIndex();
    for (const auto& [nd, old] : internal_with_inputs) {
      Node* n = fresh->AddInternalNode(*nd, old->input_types(), old->output_types());
      index[nd->name()] = n;
      GR_RETURN_IF_ERROR(WireInternal(*nd, n, index, fresh));
    }
    // ExtendGraph gave the producers of the fetches' _Retvals, unread then,
    // edges to the sink that only targets have.
    for (Node* n : fresh->op_nodes()) {
      if (targets_.count(n->name())) continue;
      const Edge* to_sink = nullptr;
      for (const Edge* e : n->out_edges())
        if (e->dst()->IsSink()) to_sink = e;
      if (to_sink != nullptr && n->out_edges().size() > 1) fresh->RemoveEdge(to_sink);
    }
    for (Node* n : fresh->op_nodes()) {
      n->set_assigned_device(assigned.at(n->name()));
      if (n->in_edges().empty()) fresh->AddControlEdge(fresh->source_node(), n);
      if (targets_.count(n->name()) || n->out_edges().empty()) fresh->AddControlEdge(n, fresh->sink_node());
    }
    return Status::OK();
  }

 private:
  Status CheckAllowed(const proto::NodeDef& nd, const Node* old) {
    const std::string type = type_of_(nd.device());
    if (type.empty())
      return errors::InvalidArgument(NodePrefix(nd), ": its device '", nd.device(), "' is not a device of the session");
    if (type == pass_.device_type && (old == nullptr || type_of_(old->assigned_device()) == type)) return Status::OK();
    if (old == nullptr)
      return errors::InvalidArgument(NodePrefix(nd), ": a new node on ", nd.device(), ", not a ", pass_.device_type,
                                     " device");
    if (old->assigned_device() != nd.device() || old->op() != nd.op() || !SameAttrs(old->def(), nd))
      return errors::InvalidArgument(NodePrefix(nd), ": it changed this node on ", old->assigned_device(),
                                     ", not a ", pass_.device_type, " device");
    return Status::OK();
  }

  // The inputs of a core node with inputs (a fetch's _Retval).
  static Status WireInternal(const proto::NodeDef& nd, Node* n, const std::unordered_map<std::string, Node*>& index,
                             Graph* g) {
    int data = 0;
    for (const std::string& in : nd.input()) {
      std::string src_name;
      int slot;
      bool control;
      auto it = ParseTensorName(in, &src_name, &slot, &control) ? index.find(src_name) : index.end();
      if (it == index.end()) return errors::InvalidArgument(NodePrefix(nd), ": unknown input '", in, "'");
      if (control) {
        g->AddControlEdge(it->second, n);
        continue;
      }
      Node* src = it->second;
      if (data >= n->num_inputs() || slot >= src->num_outputs() ||
          BaseType(src->output_type(slot)) != BaseType(n->input_type(data)))
        return errors::InvalidArgument(NodePrefix(nd), ": input ", data, " '", in, "' does not fit it");
      g->AddEdge(src, slot, n, data++);
    }
    if (data != n->num_inputs())
      return errors::InvalidArgument(NodePrefix(nd), ": expects ", n->num_inputs(), " inputs but has ", data);
    return Status::OK();
  }

  const GraphPassRegistration& pass_;
  const std::function<std::string(const std::string&)>& type_of_;
  const std::unordered_set<std::string>& targets_;
  const Graph& g_;
  std::unordered_map<std::string, Node*> old_;
};

Status RunPluginPass(const GraphPassRegistration& pass, const GraphPassServices& services, Graph* g) {
  std::unordered_map<std::string, std::string> types;
  std::function<std::string(const std::string&)> type_of = [&](const std::string& device) {
    auto it = types.find(device);
    if (it == types.end()) it = types.emplace(device, services.device_type(device)).first;
    return it->second;
  };
  bool applies = false;
  for (Node* n : g->op_nodes()) applies = applies || type_of(n->assigned_device()) == pass.device_type;
  if (!applies) return Status::OK();

  // TensorFlow's form for pluggable optimizers: NodeDef.device is the
  // assigned device.
  proto::GraphDef in;
  g->ToGraphDef(&in);
  std::unordered_map<std::string, Node*> index = g->BuildNameIndex();
  for (proto::NodeDef& nd : *in.mutable_node()) nd.set_device(index.at(nd.name())->assigned_device());
  std::unordered_set<std::string> targets;
  for (const Edge* e : g->sink_node()->in_edges())
    if (e->src()->IsOp()) targets.insert(e->src()->name());

  GR_GraphPassContext ctx;
  ctx.pass = &pass;
  ctx.services = &services;
  ctx.ops = g->op_registry();
  ctx.targets = &targets;
  const std::string bytes = in.SerializeAsString();
  int32_t rc = GR_INTERNAL;
  Status thrown = StatusFromExceptions("graph pass", [&] {
    rc = pass.run(pass.user_data, &ctx, bytes.data(), bytes.size());
    return Status::OK();
  });
  const std::string who = "graph pass '" + pass.name + "' of plugin '" + pass.plugin + "'";
  if (!thrown.ok()) return Status(thrown.code(), who + " threw: " + thrown.message());
  if (rc != GR_OK) {
    Status why = ctx.status.ok() ? Status(static_cast<Code>(rc), "it returned an error without a message") : ctx.status;
    return Status(why.code(), who + " failed: " + why.message());
  }
  if (!ctx.has_output) return Status::OK();
  proto::GraphDef out;
  if (ctx.output.size() > static_cast<size_t>(INT32_MAX) ||
      !out.ParseFromArray(ctx.output.data(), static_cast<int>(ctx.output.size())))
    return errors::Internal(who, " returned a malformed GraphDef (", ctx.output.size(), " bytes that do not parse)");
  Graph fresh(g->op_registry());
  Status s = PassResult(pass, type_of, targets, *g).Build(out, &fresh);
  if (!s.ok()) return errors::Internal(who, " returned a graph the core refuses: ", s.message());
  g->RemoveNodes(g->op_nodes());
  CopyGraph(fresh, g);
  return Status::OK();
}

}  // namespace

Status OptimizeGraph(const GraphOptimizerOptions& options, const std::vector<const GraphPassRegistration*>& passes,
                     const GraphPassServices& services, Graph* g) {
  if (options.remove_control_only_nodes) RemoveControlOnlyNodes(g);
  if (!options.plugin_passes) return Status::OK();
  for (const GraphPassRegistration* p : passes) {
    if ((p->toggle == GR_PASS_TOGGLE_LAYOUT_OPTIMIZER && !options.layout_optimizer) ||
        (p->toggle == GR_PASS_TOGGLE_REMAPPING && !options.remapping))
      continue;
    GR_RETURN_IF_ERROR(RunPluginPass(*p, services, g));
  }
  return Status::OK();
}

}  // namespace graphrt
