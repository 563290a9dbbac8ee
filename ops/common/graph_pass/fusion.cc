#include "common/graph_pass/fusion.h"

#include <algorithm>
#include <utility>

namespace graphrt {
namespace passes {

namespace {

// One contraction -> BiasAdd [-> activation] chain to fuse.
struct FusionChain {
  Node* contraction = nullptr;
  Node* bias_add = nullptr;
  Node* activation = nullptr;  // may be null
  Node* last() const { return activation ? activation : bias_add; }
};

bool SameDevice(const Node& a, const Node& b) { return a.device() == b.device(); }

bool MatchChain(PassEnv& env, Node* n, const std::unordered_set<std::string>& activations, bool same_data_format,
                FusionChain* chain) {
  Node* bias = SoleConsumer(env, *n);
  if (bias == nullptr || bias->op() != "BiasAdd" || !SameDevice(*n, *bias) || TypeAttr(*bias) != TypeAttr(*n))
    return false;
  if (same_data_format && StringAttr(*bias, "data_format") != StringAttr(*n, "data_format")) return false;
  *chain = FusionChain{n, bias, nullptr};
  Node* act = SoleConsumer(env, *bias);
  if (act != nullptr && activations.count(act->op()) && SameDevice(*n, *act) && TypeAttr(*act) == TypeAttr(*n))
    chain->activation = act;
  return true;
}

// The fused node: the contraction's attrs that the fused op also has (a
// newer MatMul's grad_a/grad_b are not _FusedMatMul's), plus the fusion's.
pp::NodeDef FusedNodeDef(const FusionChain& c, const pp::OpDef& fused_op) {
  const Node& base = *c.contraction;
  pp::NodeDef def;
  def.set_name(c.last()->name());
  def.set_op(fused_op.name());
  def.set_device(base.device());
  CopyDeclaredAttrs(base, fused_op, &def);
  auto& attrs = *def.mutable_attr();
  attrs["num_args"].set_i(1);
  pp::AttrValue::ListValue* ops = attrs["fused_ops"].mutable_list();
  ops->add_s("BiasAdd");
  if (c.activation != nullptr) {
    ops->add_s(c.activation->op());
    if (c.activation->op() == "LeakyRelu") {
      const pp::AttrValue* alpha = c.activation->attr("alpha");
      if (alpha != nullptr) attrs["leakyrelu_alpha"].set_f(alpha->f());
    }
  }
  return def;
}

// Whether input `input` of `n` comes from a Const, through any Identity
// nodes and constant Enters (a loop invariant: the same tensor in every
// iteration).
bool ComesFromConst(const Node& n, int input) {
  const Edge* e = n.input_edge(input);
  while (e != nullptr) {
    const Node* src = e->src();
    if (src->op() == "Const") return true;
    const pp::AttrValue* constant = src->attr("is_constant");
    const bool invariant = src->op() == "Enter" && constant != nullptr && constant->b();
    if (src->op() != "Identity" && !invariant) return false;
    e = src->input_edge(0);
  }
  return false;
}

}  // namespace

void CopyDeclaredAttrs(const Node& from, const pp::OpDef& op, pp::NodeDef* def) {
  for (const pp::OpDef::AttrDef& a : op.attr()) {
    const pp::AttrValue* v = from.attr(a.name());
    if (v != nullptr) (*def->mutable_attr())[a.name()] = *v;
  }
}

Node* ReplaceNodes(const std::vector<Node*>& chain, const Node* last, const std::vector<Endpoint>& data_in,
                   pp::NodeDef def, Graph* g) {
  auto in_chain = [&](const Node* n) { return std::find(chain.begin(), chain.end(), n) != chain.end(); };
  std::vector<Node*> control_in, control_out;
  std::vector<Endpoint> data_out;  // consumers of the last node's output
  for (Node* n : chain) {
    for (const Edge* e : n->in_edges())
      if (e->IsControlEdge() && !in_chain(e->src())) control_in.push_back(e->src());
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge()) {
        if (!in_chain(e->dst())) control_out.push_back(e->dst());
      } else if (n == last) {
        data_out.push_back({e->dst(), e->dst_input()});
      }
    }
  }
  for (Node* n : chain) g->RemoveNode(n);
  Node* fused = g->AddNode(std::move(def), static_cast<int>(data_in.size()));
  for (size_t i = 0; i < data_in.size(); ++i) g->AddEdge(data_in[i].node, data_in[i].slot, fused, static_cast<int>(i));
  for (Node* src : control_in) g->AddControlEdge(src, fused);
  for (const Endpoint& d : data_out) g->AddEdge(fused, 0, d.node, d.slot);
  for (Node* dst : control_out) g->AddControlEdge(fused, dst);
  return fused;
}

bool DataInputs(const Node& n, int count, std::vector<Endpoint>* inputs) {
  inputs->clear();
  for (int i = 0; i < count; ++i) {
    const Edge* e = n.input_edge(i);
    if (e == nullptr) return false;
    inputs->push_back({e->src(), e->src_output()});
  }
  return true;
}

bool FuseBiasActivation(PassEnv& env, Graph* g, const std::string& device_type, const std::string& contraction,
                        const std::string& fused_op_name, const std::unordered_set<std::string>& activations,
                        bool same_data_format) {
  const pp::OpDef* fused_op = env.OpDef(fused_op_name);
  if (fused_op == nullptr) return false;
  bool changed = false;
  for (int id : g->TopologicalIds()) {
    Node* n = g->FindNodeId(id);
    if (n == nullptr || n->op() != contraction || env.DeviceType(n->device()) != device_type) continue;
    FusionChain chain;
    if (!MatchChain(env, n, activations, same_data_format, &chain)) continue;
    pp::NodeDef def = FusedNodeDef(chain, *fused_op);
    if (!env.KernelAvailable(def, n->device())) {
      // Without the activation the device may still fuse the bias.
      if (chain.activation == nullptr) continue;
      chain.activation = nullptr;
      def = FusedNodeDef(chain, *fused_op);
      if (!env.KernelAvailable(def, n->device())) continue;
    }
    const Edge* in0 = chain.contraction->input_edge(0);
    const Edge* in1 = chain.contraction->input_edge(1);
    const Edge* bias_in = chain.bias_add->input_edge(1);
    if (in0 == nullptr || in1 == nullptr || bias_in == nullptr) continue;
    std::vector<Node*> nodes = {chain.contraction, chain.bias_add};
    if (chain.activation) nodes.push_back(chain.activation);
    ReplaceNodes(nodes, chain.last(),
                 {{in0->src(), in0->src_output()}, {in1->src(), in1->src_output()},
                  {bias_in->src(), bias_in->src_output()}},
                 std::move(def), g);
    changed = true;
  }
  return changed;
}

bool MarkConstantWeights(PassEnv& env, Graph* g, const std::string& device_type,
                         const std::unordered_set<std::string>& ops) {
  bool changed = false;
  for (Node* n : g->nodes()) {
    if (!ops.count(n->op()) || env.DeviceType(n->device()) != device_type || !ComesFromConst(*n, 1)) continue;
    const pp::AttrValue* mark = n->attr("_weights_const");
    if (mark != nullptr && mark->b()) continue;
    (*n->mutable_def()->mutable_attr())["_weights_const"].set_b(true);
    changed = true;
  }
  return changed;
}

}  // namespace passes
}  // namespace graphrt
