// The nn family's NHWC layout pass for CPU: oneDNN's convolutions take NHWC
// activations as they are and reach NCHW only through reorders, so NCHW
// layers on a CPU device run in NHWC, with Transposes only where the graph
// enters and leaves such a chain (TensorFlow's grappler does the reverse
// for GPUs). RewriterConfig.layout_optimizer OFF turns it off.
//
// Converts, in topological order:
//  * Conv2D and DepthwiseConv2dNative with data_format NCHW, always;
//  * MaxPool, AvgPool, BiasAdd and FusedBatchNorm/V2/V3 (NCHW), elementwise
//    unary ops, binary ops whose other operand is converted too or a scalar
//    Const, reductions over Const axes, ConcatV2 of converted tensors along
//    a Const axis, and Pad/PadV2/MirrorPad with Const paddings, when their
//    4-d input comes out of a node converted before them or out of the
//    graph's own Transpose NHWC -> NCHW (they continue a chain; alone, two
//    Transposes would cost more than the NCHW kernel).
// A converted node keeps its name and device and gets its attrs in NHWC
// order. It reads an NCHW input through a Transpose to NHWC, or directly
// what a converted node or a Transpose NHWC -> NCHW of the graph's own was
// given. Its 4-d output reaches unconverted consumers (fetches included)
// through a Transpose back to NCHW, and converted consumers directly. Nodes
// whose NHWC form has no kernel on their device stay as they are; so do
// nodes inside while loops (the Transposes and constants the rewrite adds
// would have to be entered into the loop's frame; cond branches in the
// root frame are fine: what the rewrite adds there is dead exactly when
// the branch is).
// No cost model: a node that continues a chain is converted even when none
// of its consumers is, which moves a Transpose back rather than saving one,
// and when its producer is also read by an unconverted op, both outputs
// get a Transpose back where one would do.
#include <graphrt/sdk/graph_pass.h>

#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/graph_pass/graph_view.h"

namespace graphrt {
namespace sdk {
namespace {

using passes::AttrMap;
using passes::Edge;
using passes::Graph;
using passes::Node;
using passes::PassEnv;
namespace pp = passes::pp;

// Dim i of an NHWC tensor is dim kNchwToNhwc[i] of the NCHW one: the
// Transpose perm NCHW -> NHWC. kNhwcToNchw is its inverse.
constexpr int kNchwToNhwc[4] = {0, 2, 3, 1};
constexpr int kNhwcToNchw[4] = {0, 3, 1, 2};

// Converted wherever they are NCHW: the convolutions are what the pass is for.
const std::unordered_set<std::string> kConvolutions = {"Conv2D", "DepthwiseConv2dNative"};
// Layout-sensitive ops converted when they continue a converted chain.
const std::unordered_set<std::string> kChainOps = {"MaxPool",        "AvgPool",           "BiasAdd",
                                                   "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"};
// Elementwise: any layout gives the same values in the same places.
const std::unordered_set<std::string> kUnary = {
    "Relu",  "Relu6", "Elu",   "Selu",     "LeakyRelu", "Softplus", "Softsign", "Tanh",  "Sigmoid",
    "Identity", "Neg", "Abs",  "Sign",     "Exp",       "Log",      "Log1p",    "Sqrt",  "Rsqrt",
    "Square", "Reciprocal", "Floor", "Ceil", "Round", "Erf", "Sin", "Cos"};
const std::unordered_set<std::string> kBinary = {"Add",     "AddV2",   "Sub", "Mul", "RealDiv",          "Div",
                                                 "Maximum", "Minimum", "Pow", "SquaredDifference"};
const std::unordered_set<std::string> kReductions = {"Sum", "Mean", "Max", "Min", "Prod"};

struct Endpoint {
  Node* node;
  int slot;
};

// A 4-value NCHW-ordered list attr in NHWC order (8 values: pairs per dim,
// as explicit_paddings). Absent or other lengths stay as they are.
void PermuteListAttr(AttrMap* attrs, const char* name) {
  auto it = attrs->find(name);
  if (it == attrs->end()) return;
  pp::AttrValue::ListValue* list = it->second.mutable_list();
  const int n = list->i_size();
  if (n != 4 && n != 8) return;
  const int per_dim = n / 4;
  std::vector<int64_t> old(list->i().begin(), list->i().end());
  for (int d = 0; d < 4; ++d)
    for (int k = 0; k < per_dim; ++k) list->set_i(d * per_dim + k, old[kNchwToNhwc[d] * per_dim + k]);
}

// A Transpose by a Const perm NHWC -> NCHW (as graphs converted from
// NHWC models hold in front of NCHW layers): its input is the NHWC tensor.
bool IsTransposeToNchw(const Node& n) {
  if (n.op() != "Transpose") return false;
  const Edge* perm = n.input_edge(1);
  std::vector<int64_t> values;
  return perm != nullptr && n.input_edge(0) != nullptr && passes::ConstInts(*perm->src(), &values) &&
         values == std::vector<int64_t>(std::begin(kNhwcToNchw), std::end(kNhwcToNchw));
}

bool IsScalarConst(const Node& n) {
  if (n.op() != "Const") return false;
  const pp::AttrValue* v = n.attr("value");
  return v != nullptr && v->tensor().tensor_shape().dim_size() == 0 && !v->tensor().tensor_shape().unknown_rank();
}

class LayoutPass {
 public:
  LayoutPass(PassEnv& env, Graph* g) : env_(env), g_(g), loop_depth_(g->LoopDepths()) {}

  bool Run() {
    for (int id : g_->TopologicalIds()) {
      Node* n = g_->FindNodeId(id);
      if (n == nullptr || InLoop(*n) || env_.DeviceType(n->device()) != DEVICE_CPU) continue;
      const std::string& op = n->op();
      if (kConvolutions.count(op) || kChainOps.count(op)) {
        if (passes::StringAttr(*n, "data_format") != "NCHW" || (kChainOps.count(op) && !FromConverted(*n, 0)))
          continue;
        AttrMap attrs = n->def().attr();
        attrs["data_format"].set_s("NHWC");
        for (const char* list : {"strides", "dilations", "ksize", "explicit_paddings"}) PermuteListAttr(&attrs, list);
        Convert(n, attrs, {0}, {}, /*output_needs_transpose=*/true);
      } else if (kUnary.count(op) && n->num_inputs() == 1 && FromConverted(*n, 0)) {
        Convert(n, n->def().attr(), {0}, {}, true);
      } else if (kBinary.count(op) && n->num_inputs() == 2) {
        ConvertBinary(n);
      } else if (kReductions.count(op) && n->num_inputs() == 2 && FromConverted(*n, 0)) {
        ConvertReduction(n);
      } else if (op == "ConcatV2") {
        ConvertConcat(n);
      } else if (op == "Pad" || op == "PadV2" || op == "MirrorPad") {
        ConvertPad(n);
      }
    }
    RemoveBypassedNodes();
    return changed_;
  }

 private:
  // Removes the nodes that the rewiring left with nothing to feed (a
  // Transpose back to NCHW whose consumers were all converted, the graph's
  // own Transpose to NCHW, old reduction axes), and then what fed only
  // them. Stateful nodes, the core's own (no OpDef: _Arg) and the step's
  // targets stay.
  void RemoveBypassedNodes() {
    std::vector<int> work = bypassed_;
    while (!work.empty()) {
      Node* n = g_->FindNodeId(work.back());
      work.pop_back();
      if (n == nullptr || !n->out_edges().empty() || env_.IsTarget(n->name())) continue;
      const pp::OpDef* op = env_.OpDef(n->op());
      if (op == nullptr || op->is_stateful()) continue;
      for (const Edge* e : n->in_edges()) work.push_back(e->src()->id());
      g_->RemoveNode(n);
    }
  }

  bool InLoop(const Node& n) const {
    return static_cast<size_t>(n.id()) < loop_depth_.size() && loop_depth_[n.id()] > 0;
  }

  // Whether input `i` of `n` is the NCHW view of an NHWC tensor: a
  // converted node's output, or one the graph itself transposes to NCHW.
  bool FromConverted(const Node& n, int i) const {
    const Edge* e = n.input_edge(i);
    return e != nullptr && (to_nchw_.count(e->src()->id()) > 0 || IsTransposeToNchw(*e->src()));
  }

  void ConvertBinary(Node* n) {
    std::vector<int> layout_inputs;
    for (int i = 0; i < 2; ++i) {
      const Edge* e = n->input_edge(i);
      if (e == nullptr) return;
      if (FromConverted(*n, i))
        layout_inputs.push_back(i);
      else if (!IsScalarConst(*e->src()))
        return;  // its layout is unknown: stay NCHW
    }
    if (!layout_inputs.empty()) Convert(n, n->def().attr(), layout_inputs, {}, true);
  }

  // Reducing the NCHW view over `axes` is reducing the NHWC tensor over the
  // mapped axes. Without keep_dims the result needs no transpose when the
  // kept dims stay in order (over H and W: [N, C] either way).
  void ConvertReduction(Node* n) {
    const Edge* axes_in = n->input_edge(1);
    std::vector<int64_t> axes;
    if (axes_in == nullptr || !passes::ConstInts(*axes_in->src(), &axes)) return;
    bool reduced[4] = {false, false, false, false};
    std::vector<int64_t> nhwc_axes;
    for (int64_t a : axes) {
      if (a < -4 || a >= 4) return;  // the kernel reports it
      const int nchw = static_cast<int>(a < 0 ? a + 4 : a);
      reduced[nchw] = true;
      nhwc_axes.push_back(kNhwcToNchw[nchw]);
    }
    const pp::AttrValue* keep = n->attr("keep_dims");
    const bool keep_dims = keep != nullptr && keep->b();
    if (!keep_dims) {
      int last = -1;
      for (int d = 0; d < 4; ++d) {
        if (reduced[d]) continue;
        if (kNhwcToNchw[d] < last) return;
        last = kNhwcToNchw[d];
      }
    }
    Node* axes_const = AddIntConstLike(n->name() + "/nhwc_axes", *axes_in->src(), nhwc_axes, *n);
    if (!Convert(n, n->def().attr(), {0}, {{1, {axes_const, 0}}}, keep_dims)) g_->RemoveNode(axes_const);
  }

  // ConcatV2 of converted tensors along NCHW axis a: along NHWC axis
  // kNhwcToNchw[a].
  void ConvertConcat(Node* n) {
    const int num_values = n->num_inputs() - 1;
    std::vector<int> values;
    for (int i = 0; i < num_values; ++i) {
      if (!FromConverted(*n, i)) return;
      values.push_back(i);
    }
    const Edge* axis_in = n->input_edge(num_values);
    std::vector<int64_t> axis;
    if (values.empty() || axis_in == nullptr || !passes::ConstInts(*axis_in->src(), &axis) || axis.size() != 1 ||
        axis[0] < -4 || axis[0] >= 4)
      return;
    Node* c = AddIntConstLike(n->name() + "/nhwc_axis", *axis_in->src(),
                              {kNhwcToNchw[axis[0] < 0 ? axis[0] + 4 : axis[0]]}, *n);
    if (!Convert(n, n->def().attr(), values, {{num_values, {c, 0}}}, true)) g_->RemoveNode(c);
  }

  // Pad / PadV2 / MirrorPad of a converted tensor: the paddings' rows (one
  // per dim, [4, 2]) in NHWC order.
  void ConvertPad(Node* n) {
    const Edge* pad_in = n->input_edge(1);
    std::vector<int64_t> pads;
    if (!FromConverted(*n, 0) || pad_in == nullptr || !passes::ConstInts(*pad_in->src(), &pads) || pads.size() != 8)
      return;
    std::vector<int64_t> nhwc(8);
    for (int d = 0; d < 4; ++d) {
      nhwc[2 * d] = pads[2 * kNchwToNhwc[d]];
      nhwc[2 * d + 1] = pads[2 * kNchwToNhwc[d] + 1];
    }
    Node* c = AddIntConstLike(n->name() + "/nhwc_paddings", *pad_in->src(), nhwc, *n);
    if (!Convert(n, n->def().attr(), {0}, {{1, {c, 0}}}, true)) g_->RemoveNode(c);
  }

  // A Const of `like_const`'s dtype and shape holding `values`, on `user`'s
  // device (ConstInts has checked `like_const`).
  Node* AddIntConstLike(const std::string& base, const Node& like_const, const std::vector<int64_t>& values,
                        const Node& user) {
    const pp::TensorProto& old_value = like_const.attr("value")->tensor();
    return AddIntConst(base, old_value.dtype(), old_value.tensor_shape(), values, user);
  }

  // A Const of int32 or int64 `dtype` holding `values` in `shape`, on
  // `user`'s device.
  Node* AddIntConst(const std::string& base, pp::DataType dtype, const pp::TensorShapeProto& shape,
                    const std::vector<int64_t>& values, const Node& user) {
    pp::NodeDef def;
    def.set_name(g_->UniqueName(base));
    def.set_op("Const");
    def.set_device(user.device());
    (*def.mutable_attr())["dtype"].set_type(dtype);
    pp::TensorProto* value = (*def.mutable_attr())["value"].mutable_tensor();
    value->set_dtype(dtype);
    *value->mutable_tensor_shape() = shape;
    for (int64_t v : values) {
      if (dtype == pp::DT_INT32)
        value->add_int_val(static_cast<int32_t>(v));
      else
        value->add_int64_val(v);
    }
    return g_->AddNode(std::move(def), 0);
  }

  // Gives `n` the NHWC `attrs`, reads its `layout_inputs` in NHWC and the
  // `replaced` inputs from new endpoints; with `output_needs_transpose`
  // its consumers read output 0 through a Transpose back to NCHW. False,
  // with `n` unchanged, when its device has no kernel for the NHWC node.
  bool Convert(Node* n, const AttrMap& attrs, const std::vector<int>& layout_inputs,
               const std::vector<std::pair<int, Endpoint>>& replaced, bool output_needs_transpose) {
    const std::string device = n->device();
    // Every op converted has its layout inputs and output 0 of type T.
    const pp::DataType type = passes::TypeAttr(*n);
    pp::NodeDef probe = n->def();
    probe.clear_input();
    *probe.mutable_attr() = attrs;
    if (!env_.KernelAvailable(probe, device) || !TransposeAvailable(device, type)) return false;
    *n->mutable_def()->mutable_attr() = attrs;
    changed_ = true;
    for (int i : layout_inputs) Rewire(n, i, NhwcSource(n, i, type));
    for (const auto& [i, src] : replaced) Rewire(n, i, src);
    if (!output_needs_transpose) return true;
    std::vector<Endpoint> consumers;
    std::vector<const Edge*> edges;
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge() || e->src_output() != 0) continue;
      consumers.push_back({e->dst(), e->dst_input()});
      edges.push_back(e);
    }
    if (edges.empty()) return true;  // nothing reads output 0
    for (const Edge* e : edges) g_->RemoveEdge(e);
    Node* back = AddTranspose(n->name() + "/output_to_nchw", {n, 0}, kNhwcToNchw, *n, type);
    to_nchw_.insert(back->id());
    for (const Endpoint& c : consumers) g_->AddEdge(back, 0, c.node, c.slot);
    return true;
  }

  void Rewire(Node* n, int input, Endpoint src) {
    const Edge* old = n->input_edge(input);
    bypassed_.push_back(old->src()->id());
    g_->RemoveEdge(old);
    g_->AddEdge(src.node, src.slot, n, input);
  }

  // The NHWC form of what feeds input `i` of `n`: the converted producer
  // itself, or (one per producer output and device) a Transpose of it,
  // named after `n` so that a bad input's error names the node it was for.
  Endpoint NhwcSource(Node* n, int i, pp::DataType type) {
    const Edge* e = n->input_edge(i);
    Node* src = e->src();
    if (to_nchw_.count(src->id()) || IsTransposeToNchw(*src)) {
      const Edge* in = src->input_edge(0);
      return {in->src(), in->src_output()};
    }
    auto key = std::make_tuple(src->id(), e->src_output(), n->device());
    auto it = to_nhwc_.find(key);
    if (it == to_nhwc_.end())
      it = to_nhwc_
               .emplace(key, AddTranspose(n->name() + "/input_to_nhwc", {src, e->src_output()}, kNchwToNhwc, *n, type))
               .first;
    return {it->second, 0};
  }

  // A Transpose of `in` (of `type`) by `perm` on `like`'s device.
  Node* AddTranspose(const std::string& base, Endpoint in, const int (&perm)[4], const Node& like,
                     pp::DataType type) {
    Node* perm_const = PermConst(perm, like);
    pp::NodeDef def;
    def.set_name(g_->UniqueName(base));
    def.set_op("Transpose");
    def.set_device(like.device());
    (*def.mutable_attr())["T"].set_type(type);
    (*def.mutable_attr())["Tperm"].set_type(pp::DT_INT32);
    Node* t = g_->AddNode(std::move(def), 2);
    g_->AddEdge(in.node, in.slot, t, 0);
    g_->AddEdge(perm_const, 0, t, 1);
    return t;
  }

  // One perm Const per direction and device.
  Node* PermConst(const int (&perm)[4], const Node& like) {
    const bool to_nhwc = perm[1] == kNchwToNhwc[1];
    auto key = std::make_pair(to_nhwc, like.device());
    auto it = perm_consts_.find(key);
    if (it != perm_consts_.end()) return it->second;
    pp::TensorShapeProto shape;
    shape.add_dim()->set_size(4);
    Node* c = AddIntConst(to_nhwc ? "LayoutPass/nchw_to_nhwc_perm" : "LayoutPass/nhwc_to_nchw_perm", pp::DT_INT32,
                          shape, std::vector<int64_t>(std::begin(perm), std::end(perm)), like);
    return perm_consts_.emplace(key, c).first->second;
  }

  // Whether `device` has Transpose (and Const) kernels for `type`.
  bool TransposeAvailable(const std::string& device, pp::DataType type) {
    auto key = std::make_pair(device, type);
    auto it = transpose_available_.find(key);
    if (it != transpose_available_.end()) return it->second;
    pp::NodeDef t;
    t.set_name("probe");
    t.set_op("Transpose");
    (*t.mutable_attr())["T"].set_type(type);
    (*t.mutable_attr())["Tperm"].set_type(pp::DT_INT32);
    pp::NodeDef c;
    c.set_name("probe");
    c.set_op("Const");
    (*c.mutable_attr())["dtype"].set_type(pp::DT_INT32);
    (*c.mutable_attr())["value"].mutable_tensor()->set_dtype(pp::DT_INT32);
    const bool ok = env_.KernelAvailable(t, device) && env_.KernelAvailable(c, device);
    return transpose_available_.emplace(key, ok).first->second;
  }

  PassEnv& env_;
  Graph* g_;
  std::vector<int> loop_depth_;  // by node id; empty without loops
  bool changed_ = false;
  std::unordered_set<int> to_nchw_;  // ids of the Transposes back to NCHW
  std::vector<int> bypassed_;        // ids of nodes that lost a consumer
  std::map<std::tuple<int, int, std::string>, Node*> to_nhwc_;
  std::map<std::pair<bool, std::string>, Node*> perm_consts_;
  std::map<std::pair<std::string, pp::DataType>, bool> transpose_available_;
};

Status ConvertNchwToNhwc(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed,
                            [](PassEnv& env, Graph* g) { return LayoutPass(env, g).Run(); });
}

}  // namespace

REGISTER_GRAPH_PASS(GraphPass("nn.nhwc_layout").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_LAYOUT_OPTIMIZER).Order(10),
                    ConvertNchwToNhwc);

}  // namespace sdk
}  // namespace graphrt
