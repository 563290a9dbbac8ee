#include "control_flow_ops.h"

#include <unordered_map>

#include "core_api_internal.h"
#include "node_def_util.h"

namespace graphrt {
namespace {

// Every output takes input 0's shape (Switch, Enter, Exit, NextIteration).
int32_t ForwardShape(GR_ShapeContext* sc, void*) {
  const PartialTensorShape in = sc->inputs->empty() ? PartialTensorShape() : (*sc->inputs)[0];
  for (PartialTensorShape& out : sc->outputs) out = in;
  return GR_OK;
}

// The shape all known inputs agree on, dim by dim; unknown where they
// differ. An input not inferred yet (a NextIteration back edge) is unknown.
int32_t MergeShape(GR_ShapeContext* sc, void*) {
  PartialTensorShape merged;
  bool first = true;
  for (const PartialTensorShape& in : *sc->inputs) {
    if (in.unknown_rank()) {
      merged = PartialTensorShape();
      break;
    }
    if (first) {
      merged = in;
      first = false;
      continue;
    }
    if (in.rank() != merged.rank()) {
      merged = PartialTensorShape();
      break;
    }
    std::vector<int64_t> dims = merged.dims();
    for (int d = 0; d < in.rank(); ++d)
      if (dims[d] != in.dim_size(d)) dims[d] = -1;
    merged = PartialTensorShape(std::move(dims));
  }
  sc->outputs[0] = merged;
  sc->outputs[1] = PartialTensorShape(std::vector<int64_t>{});
  return GR_OK;
}

int32_t ScalarShape(GR_ShapeContext* sc, void*) {
  for (PartialTensorShape& out : sc->outputs) out = PartialTensorShape(std::vector<int64_t>{});
  return GR_OK;
}

const std::vector<CoreOpSpec>& Primitives() {
  static const std::vector<CoreOpSpec> kSpecs = {
      {"Switch", {"data: T", "pred: bool"}, {"output_false: T", "output_true: T"}, {"T: type"}, 0, ForwardShape},
      {"RefSwitch",
       {"data: Ref(T)", "pred: bool"},
       {"output_false: Ref(T)", "output_true: Ref(T)"},
       {"T: type"},
       GR_OP_ALLOWS_UNINITIALIZED_INPUT,
       ForwardShape},
      {"Merge", {"inputs: N * T"}, {"output: T", "value_index: int32"}, {"T: type", "N: int >= 1"}, 0, MergeShape},
      {"RefMerge",
       {"inputs: Ref(N * T)"},
       {"output: Ref(T)", "value_index: int32"},
       {"T: type", "N: int >= 1"},
       0,
       MergeShape},
      {"Enter",
       {"data: T"},
       {"output: T"},
       {"T: type", "frame_name: string", "is_constant: bool = false", "parallel_iterations: int = 10"},
       0,
       ForwardShape},
      {"RefEnter",
       {"data: Ref(T)"},
       {"output: Ref(T)"},
       {"T: type", "frame_name: string", "is_constant: bool = false", "parallel_iterations: int = 10"},
       0,
       ForwardShape},
      {"Exit", {"data: T"}, {"output: T"}, {"T: type"}, 0, ForwardShape},
      {"RefExit", {"data: Ref(T)"}, {"output: Ref(T)"}, {"T: type"}, 0, ForwardShape},
      {"NextIteration", {"data: T"}, {"output: T"}, {"T: type"}, 0, ForwardShape},
      {"RefNextIteration", {"data: Ref(T)"}, {"output: Ref(T)"}, {"T: type"}, 0, ForwardShape},
      {"LoopCond", {"input: bool"}, {"output: bool"}, {}, 0, ScalarShape},
      {"ControlTrigger", {}, {}, {}, 0, nullptr},
  };
  return kSpecs;
}

int AttrInt(const Node& n, const char* name, int fallback) {
  const proto::AttrValue* v = FindAttr(n.def(), name);
  return v ? static_cast<int>(v->i()) : fallback;
}

}  // namespace

ControlFlowOp ControlFlowOpOf(const std::string& op) {
  static const std::unordered_map<std::string, ControlFlowOp> kOps = {
      {"Switch", ControlFlowOp::kSwitch},
      {"RefSwitch", ControlFlowOp::kSwitch},
      {"Merge", ControlFlowOp::kMerge},
      {"RefMerge", ControlFlowOp::kMerge},
      {"Enter", ControlFlowOp::kEnter},
      {"RefEnter", ControlFlowOp::kEnter},
      {"Exit", ControlFlowOp::kExit},
      {"RefExit", ControlFlowOp::kExit},
      {"NextIteration", ControlFlowOp::kNextIteration},
      {"RefNextIteration", ControlFlowOp::kNextIteration},
      {"LoopCond", ControlFlowOp::kLoopCond},
      {"ControlTrigger", ControlFlowOp::kControlTrigger},
  };
  auto it = kOps.find(op);
  return it == kOps.end() ? ControlFlowOp::kNone : it->second;
}

Status RegisterControlFlowOps(OpRegistry* ops) { return RegisterCoreOps(Primitives(), ops); }

Status RegisterCoreOps(const std::vector<CoreOpSpec>& specs, OpRegistry* ops) {
  std::vector<std::unique_ptr<OpRegistrationData>> defs;
  for (const CoreOpSpec& p : specs) {
    GR_OpSpec spec{};
    spec.struct_size = sizeof(GR_OpSpec);
    spec.name = p.name;
    spec.inputs = p.inputs.data();
    spec.num_inputs = static_cast<int32_t>(p.inputs.size());
    spec.outputs = p.outputs.data();
    spec.num_outputs = static_cast<int32_t>(p.outputs.size());
    spec.attrs = p.attrs.data();
    spec.num_attrs = static_cast<int32_t>(p.attrs.size());
    spec.flags = p.flags;
    auto d = std::make_unique<OpRegistrationData>();
    GR_RETURN_IF_ERROR(BuildOpDef(spec, &d->op_def));
    d->shape_fn = p.shape_fn;
    d->plugin = "graphrt_core";
    defs.push_back(std::move(d));
  }
  return ops->AddAll(std::move(defs));
}

int FrameLayout::OutputFrame(const Node& n) const {
  const int f = frame_of[n.id()];
  switch (ControlFlowOpOf(n.op())) {
    case ControlFlowOp::kEnter:
      return FrameNamed(FindAttr(n.def(), "frame_name")->s());
    case ControlFlowOp::kExit:
      return frames[f].parent;
    default:
      return f;
  }
}

int FrameLayout::FrameNamed(const std::string& name) const {
  auto it = frame_index.find(name);
  return it == frame_index.end() ? -1 : it->second;
}

bool HasControlFlow(const Graph& g) {
  for (Node* n : g.op_nodes())
    if (ControlFlowOpOf(n->op()) != ControlFlowOp::kNone) return true;
  return false;
}

Status ComputeFrameLayout(const Graph& g, FrameLayout* out) {
  out->frames.assign(1, FrameLayout::Frame{});
  out->frame_of.assign(g.num_node_ids(), -1);
  out->frame_index.clear();
  auto frame_label = [&](int f) { return f == 0 ? std::string("the root frame") : "frame '" + out->frames[f].name + "'"; };
  // Back edges (out of NextIteration) are checked once every frame is known.
  for (Node* n : g.TopologicalOrder()) {
    if (!n->IsOp()) continue;
    int frame = -1;
    const Node* frame_from = nullptr;
    for (const Edge* e : n->in_edges()) {
      const Node* src = e->src();
      if (!src->IsOp() || ControlFlowOpOf(src->op()) == ControlFlowOp::kNextIteration) continue;
      const int f = out->OutputFrame(*src);
      if (frame < 0) {
        frame = f;
        frame_from = src;
      } else if (f != frame) {
        return errors::InvalidArgument(NodePrefix(n->def()), ": its inputs come from two frames: '",
                                       frame_from->name(), "' gives ", frame_label(frame), ", '", src->name(),
                                       "' gives ", frame_label(f),
                                       ". A node inside a while loop must receive outside values through an Enter.");
      }
    }
    if (frame < 0) frame = 0;  // a root (or a node fed only by back edges, rejected below)
    out->frame_of[n->id()] = frame;
    const ControlFlowOp kind = ControlFlowOpOf(n->op());
    if (kind == ControlFlowOp::kEnter) {
      const proto::AttrValue* name = FindAttr(n->def(), "frame_name");
      if (name == nullptr || name->s().empty())
        return errors::InvalidArgument(NodePrefix(n->def()), ": an Enter needs a non-empty frame_name");
      const int known = out->FrameNamed(name->s());
      if (known < 0) {
        out->frame_index.emplace(name->s(), static_cast<int>(out->frames.size()));
        out->frames.push_back({name->s(), frame, AttrInt(*n, "parallel_iterations", 10)});
        if (out->frames.back().parallel_iterations <= 0)
          return errors::InvalidArgument(NodePrefix(n->def()), ": parallel_iterations must be positive, got ",
                                         out->frames.back().parallel_iterations);
      } else if (out->frames[known].parent != frame) {
        return errors::InvalidArgument(NodePrefix(n->def()), ": enters frame '", name->s(), "' from ",
                                       frame_label(frame), ", but other Enters of that frame come from ",
                                       frame_label(out->frames[known].parent));
      }
    } else if (kind == ControlFlowOp::kExit && frame == 0) {
      return errors::InvalidArgument(NodePrefix(n->def()), ": an Exit must be inside a while loop frame (its input '",
                                     n->input_edge(0) ? n->input_edge(0)->src()->name() : std::string("?"),
                                     "' is in the root frame)");
    }
  }
  for (Node* n : g.op_nodes()) {
    const ControlFlowOp kind = ControlFlowOpOf(n->op());
    if (kind == ControlFlowOp::kNextIteration) {
      for (const Edge* e : n->out_edges()) {
        const Node* dst = e->dst();
        if (!dst->IsOp()) continue;
        if (ControlFlowOpOf(dst->op()) != ControlFlowOp::kMerge || e->IsControlEdge())
          return errors::InvalidArgument(NodePrefix(n->def()), ": a NextIteration may feed only Merge nodes, but it ",
                                         "feeds '", dst->name(), "' (op '", dst->op(), "')");
        if (out->frame_of[dst->id()] != out->frame_of[n->id()])
          return errors::InvalidArgument(NodePrefix(n->def()), ": feeds Merge '", dst->name(), "' in ",
                                         frame_label(out->frame_of[dst->id()]), " from ",
                                         frame_label(out->frame_of[n->id()]));
      }
    } else if (kind == ControlFlowOp::kMerge) {
      bool back_edge = false, from_enter = false, other = false;
      for (const Edge* e : n->in_edges()) {
        if (e->IsControlEdge() || !e->src()->IsOp()) continue;
        const ControlFlowOp src = ControlFlowOpOf(e->src()->op());
        back_edge |= src == ControlFlowOp::kNextIteration;
        from_enter |= src == ControlFlowOp::kEnter;
        other |= src != ControlFlowOp::kNextIteration;
      }
      if (back_edge && !other)
        return errors::InvalidArgument(NodePrefix(n->def()), ": a loop's Merge needs an input from outside the loop ",
                                       "(an Enter) besides its NextIteration");
      if (from_enter && !back_edge)
        return errors::InvalidArgument(NodePrefix(n->def()), ": a Merge fed by an Enter starts a while loop and ",
                                       "needs a NextIteration input (its back edge)");
    }
  }
  return Status::OK();
}

}  // namespace graphrt
