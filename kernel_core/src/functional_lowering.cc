#include "functional_lowering.h"

#include <unordered_set>

#include "node_def_util.h"

namespace graphrt {
namespace {

void SetType(proto::NodeDef* n, const char* attr, DataType t) {
  (*n->mutable_attr())[attr].set_type(static_cast<proto::DataType>(t));
}

void SetTypeList(proto::NodeDef* n, const char* attr, const std::vector<DataType>& types) {
  proto::AttrValue::ListValue* list = (*n->mutable_attr())[attr].mutable_list();
  for (DataType t : types) list->add_type(static_cast<proto::DataType>(t));
}

std::string DTypes(const std::vector<DataType>& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + DataTypeString(types[i]);
  return s + "]";
}

// One lowering of one node. Every node it makes is named "<node>/_<what>"
// (TensorFlow graphs put their own nodes at "<node>/Identity" and the like).
class Lowering {
 public:
  Lowering(const proto::NodeDef& node, const FunctionalLoweringHooks& hooks)
      : node_(node), hooks_(hooks), where_(NodePrefix(node)) {
    for (const std::string& in : node.input()) (in[0] == '^' ? control_in_ : data_in_).push_back(in);
  }

  // Checks the node against its OpDef (attrs, defaults, number of inputs).
  Status Validate(const OpRegistry& ops) {
    const proto::OpDef* op_def = nullptr;
    Status s = ops.LookUpOpDef(node_.op(), &op_def);
    if (!s.ok()) return Status(s.code(), where_ + ": " + s.message());
    GR_RETURN_IF_ERROR(AddDefaultsAndValidate(*op_def, &node_));
    DataTypeVector inputs, outputs;
    GR_RETURN_IF_ERROR(InputOutputTypes(node_, *op_def, &inputs, &outputs));
    if (inputs.size() != data_in_.size())
      return errors::InvalidArgument(where_, ": has ", data_in_.size(), " data inputs but its attrs call for ",
                                     inputs.size(), " ", DTypes(inputs));
    return Status::OK();
  }

  Status LowerIf() {
    const std::vector<DataType> in_types = TypeList("Tin");
    const std::vector<DataType> out_types = TypeList("Tout");
    const proto::NameAttrList& then_f = node_.attr().at("then_branch").func();
    const proto::NameAttrList& else_f = node_.attr().at("else_branch").func();
    GR_RETURN_IF_ERROR(CheckFunction("then_branch", then_f, in_types, &out_types));
    GR_RETURN_IF_ERROR(CheckFunction("else_branch", else_f, in_types, &out_types));

    proto::NodeDef pred = NewNode("pred", "ToBool", {data_in_[0]});
    SetType(&pred, "T", static_cast<DataType>(node_.attr().at("Tcond").type()));
    for (const std::string& c : control_in_) pred.add_input(c);
    GR_RETURN_IF_ERROR(Emit(pred));
    // Branch 0 (else) reads the Switches' false outputs, branch 1 (then) their true ones.
    return LowerBranches({pred.name()}, {{&else_f, 0, 0}, {&then_f, 0, 1}}, in_types, out_types);
  }

  Status LowerCase() {
    const std::vector<DataType> in_types = TypeList("Tin");
    const std::vector<DataType> out_types = TypeList("Tout");
    const auto& funcs = node_.attr().at("branches").list().func();
    for (int k = 0; k < funcs.size(); ++k)
      GR_RETURN_IF_ERROR(CheckFunction("branches[" + std::to_string(k) + "]", funcs[k], in_types, &out_types));
    const int n = funcs.size();
    if (n == 0) return errors::InvalidArgument(where_, ": a Case needs at least one branch");

    proto::NodeDef index = NewNode("index", "Identity", {data_in_[0]});
    SetType(&index, "T", GR_INT32);
    for (const std::string& c : control_in_) index.add_input(c);
    GR_RETURN_IF_ERROR(Emit(index));
    auto constant = [&](int v) -> Status {
      proto::NodeDef c = NewNode("const_" + std::to_string(v), "Const", {"^" + index.name()});
      SetType(&c, "dtype", GR_INT32);
      proto::TensorProto* t = (*c.mutable_attr())["value"].mutable_tensor();
      t->set_dtype(proto::DT_INT32);
      t->mutable_tensor_shape();
      t->add_int_val(v);
      return Emit(c);
    };
    auto compare = [&](const std::string& name, const char* op, int v) -> Status {
      proto::NodeDef c = NewNode(name, op, {index.name(), Name("const_" + std::to_string(v))});
      SetType(&c, "T", GR_INT32);
      return Emit(c);
    };
    // pred_k = (index == k) for all but the last branch, which runs for
    // every other index: index < 0 || index >= n - 1.
    std::vector<std::string> preds;
    std::vector<Branch> branches;
    GR_RETURN_IF_ERROR(constant(0));
    for (int k = 0; k + 1 < n; ++k) {
      if (k > 0) GR_RETURN_IF_ERROR(constant(k));
      GR_RETURN_IF_ERROR(compare("pred_" + std::to_string(k), "Equal", k));
      preds.push_back(Name("pred_" + std::to_string(k)));
      branches.push_back({&funcs[k], k, 1});
    }
    if (n > 1) GR_RETURN_IF_ERROR(constant(n - 1));
    GR_RETURN_IF_ERROR(compare("below_range", "Less", 0));
    GR_RETURN_IF_ERROR(compare("above_range", "GreaterEqual", n - 1));
    GR_RETURN_IF_ERROR(
        Emit(NewNode("pred_" + std::to_string(n - 1), "LogicalOr", {Name("below_range"), Name("above_range")})));
    preds.push_back(Name("pred_" + std::to_string(n - 1)));
    branches.push_back({&funcs[n - 1], n - 1, 1});
    return LowerBranches(preds, branches, in_types, out_types);
  }

  Status LowerWhile() {
    const std::vector<DataType> types = TypeList("T");
    if (types.empty())
      return errors::InvalidArgument(where_, ": a While needs at least one loop variable (T is empty)");
    const proto::NameAttrList& cond_f = node_.attr().at("cond").func();
    const proto::NameAttrList& body_f = node_.attr().at("body").func();
    std::vector<DataType> cond_out;
    GR_RETURN_IF_ERROR(CheckFunction("cond", cond_f, types, nullptr, &cond_out));
    if (cond_out.size() != 1)
      return errors::InvalidArgument(where_, ": cond function '", cond_f.name(),
                                     "' must return one tensor, it returns ", cond_out.size(), " ", DTypes(cond_out));
    std::vector<DataType> body_out = types;
    GR_RETURN_IF_ERROR(CheckFunction("body", body_f, types, &body_out));
    const int n = static_cast<int>(types.size());
    auto indexed = [](const char* what, int i) { return std::string(what) + "_" + std::to_string(i); };

    for (int i = 0; i < n; ++i) {
      proto::NodeDef enter = NewNode(indexed("enter", i), "Enter", {data_in_[i]});
      for (const std::string& c : control_in_) enter.add_input(c);
      SetType(&enter, "T", types[i]);
      // The node's name is unique in the graph, so the frame is too.
      (*enter.mutable_attr())["frame_name"].set_s(node_.name());
      (*enter.mutable_attr())["is_constant"].set_b(false);
      (*enter.mutable_attr())["parallel_iterations"].set_i(node_.attr().at("parallel_iterations").i());
      GR_RETURN_IF_ERROR(Emit(enter));
      proto::NodeDef merge = NewNode(indexed("merge", i), "Merge", {enter.name(), Name(indexed("next_iteration", i))});
      SetType(&merge, "T", types[i]);
      (*merge.mutable_attr())["N"].set_i(2);
      GR_RETURN_IF_ERROR(Emit(merge));
    }
    std::vector<std::string> merged;
    for (int i = 0; i < n; ++i) merged.push_back(Name(indexed("merge", i)));
    GR_RETURN_IF_ERROR(EmitCall("cond", cond_f, merged, types, cond_out));
    proto::NodeDef to_bool = NewNode("cond_bool", "ToBool", {Name("cond")});
    SetType(&to_bool, "T", cond_out[0]);
    GR_RETURN_IF_ERROR(Emit(to_bool));
    GR_RETURN_IF_ERROR(Emit(NewNode("loop_cond", "LoopCond", {to_bool.name()})));

    std::vector<std::string> body_in, exits;
    for (int i = 0; i < n; ++i) {
      proto::NodeDef sw = NewNode(indexed("switch", i), "Switch", {merged[i], Name("loop_cond")});
      SetType(&sw, "T", types[i]);
      GR_RETURN_IF_ERROR(Emit(sw));
      body_in.push_back(sw.name() + ":1");
      proto::NodeDef exit = NewNode(indexed("exit", i), "Exit", {sw.name()});
      SetType(&exit, "T", types[i]);
      GR_RETURN_IF_ERROR(Emit(exit));
      exits.push_back(exit.name());
    }
    GR_RETURN_IF_ERROR(EmitCall("body", body_f, body_in, types, types));
    for (int i = 0; i < n; ++i) {
      proto::NodeDef next =
          NewNode(indexed("next_iteration", i), "NextIteration", {Name("body") + ":" + std::to_string(i)});
      SetType(&next, "T", types[i]);
      GR_RETURN_IF_ERROR(Emit(next));
    }
    // The Exits fire once the loop is done, after every iteration's body.
    return Emit(ForwardingNode(node_.name(), node_.device(), exits, types));
  }

 private:
  // A branch: its function, the predicate it is gated on, and the Switch
  // output it reads (1: taken when the predicate is true).
  struct Branch {
    const proto::NameAttrList* f;
    int pred;
    int port;
  };

  std::string Name(const std::string& what) const { return node_.name() + "/_" + what; }

  proto::NodeDef NewNode(const std::string& what, const std::string& op, const std::vector<std::string>& inputs) const {
    proto::NodeDef n;
    n.set_name(Name(what));
    n.set_op(op);
    n.set_device(node_.device());
    for (const std::string& in : inputs) n.add_input(in);
    return n;
  }

  Status Emit(const proto::NodeDef& n) { return hooks_.emit(n); }

  // A list(type) attr (present: the node was validated).
  std::vector<DataType> TypeList(const char* attr) const {
    std::vector<DataType> out;
    for (int t : node_.attr().at(attr).list().type()) out.push_back(static_cast<DataType>(t));
    return out;
  }

  // `f` exists, takes `in` and returns `*out` (when `out` is given; any
  // outputs when `actual_out` is given instead, which receives them).
  Status CheckFunction(const std::string& attr, const proto::NameAttrList& f, const std::vector<DataType>& in,
                       const std::vector<DataType>* out, std::vector<DataType>* actual_out = nullptr) const {
    const proto::FunctionDef* def = hooks_.find_function(f.name());
    if (def == nullptr)
      return errors::NotFound(where_, ": ", attr, " names function '", f.name(),
                              "', which the graph's library does not define");
    const std::string fwhere = where_ + " (" + attr + " '" + f.name() + "')";
    std::vector<DataType> fin, fout;
    GR_RETURN_IF_ERROR(hooks_.signature_types(*def, f.attr(), fwhere, &fin, &fout));
    if (fin != in)
      return errors::InvalidArgument(fwhere, ": the function takes ", DTypes(fin), " but the node passes ", DTypes(in));
    if (out != nullptr && fout != *out)
      return errors::InvalidArgument(fwhere, ": the function returns ", DTypes(fout), " but the node's attrs say ",
                                     DTypes(*out));
    if (actual_out != nullptr) *actual_out = fout;
    return Status::OK();
  }

  // A call of `f` on `inputs`, named Name(what); the inliner expands it.
  Status EmitCall(const std::string& what, const proto::NameAttrList& f, const std::vector<std::string>& inputs,
                  const std::vector<DataType>& in_types, const std::vector<DataType>& out_types) {
    proto::NodeDef call = NewNode(what, "PartitionedCall", inputs);
    *(*call.mutable_attr())["f"].mutable_func() = f;
    SetTypeList(&call, "Tin", in_types);
    SetTypeList(&call, "Tout", out_types);
    return Emit(call);
  }

  // The common part of If and Case: branch k runs when preds[branches[k].pred]
  // sends its inputs to Switch output branches[k].port.
  Status LowerBranches(const std::vector<std::string>& preds, const std::vector<Branch>& branches,
                       const std::vector<DataType>& in_types, const std::vector<DataType>& out_types) {
    const int num_in = static_cast<int>(in_types.size());
    auto switch_name = [&](int pred, int input) {
      return "switch_" + std::to_string(pred) + (input < 0 ? std::string("_pred") : "_" + std::to_string(input));
    };
    for (int p = 0; p < static_cast<int>(preds.size()); ++p) {
      // The predicate switched on itself gives each branch a pivot that is
      // live only when the branch is taken; input-less branch nodes wait on it.
      for (int i = -1; i < num_in; ++i) {
        proto::NodeDef sw = NewNode(switch_name(p, i), "Switch", {i < 0 ? preds[p] : data_in_[1 + i], preds[p]});
        SetType(&sw, "T", i < 0 ? GR_BOOL : in_types[i]);
        GR_RETURN_IF_ERROR(Emit(sw));
      }
    }
    std::vector<std::string> pivots;
    for (size_t k = 0; k < branches.size(); ++k) {
      const Branch& b = branches[k];
      const std::string port = ":" + std::to_string(b.port);
      proto::NodeDef pivot = NewNode("pivot_" + std::to_string(k), "Identity", {Name(switch_name(b.pred, -1)) + port});
      SetType(&pivot, "T", GR_BOOL);
      GR_RETURN_IF_ERROR(Emit(pivot));
      pivots.push_back(pivot.name());
      std::vector<std::string> inputs;
      for (int i = 0; i < num_in; ++i) inputs.push_back(Name(switch_name(b.pred, i)) + port);
      inputs.push_back("^" + pivot.name());
      GR_RETURN_IF_ERROR(EmitCall("branch_" + std::to_string(k), *b.f, inputs, in_types, out_types));
    }
    // Exactly one branch is live, so each Merge forwards its value.
    std::vector<std::string> outputs;
    for (size_t m = 0; m < out_types.size(); ++m) {
      proto::NodeDef merge = NewNode("output_" + std::to_string(m), "Merge", {});
      for (size_t k = 0; k < branches.size(); ++k)
        merge.add_input(Name("branch_" + std::to_string(k)) + ":" + std::to_string(m));
      SetType(&merge, "T", out_types[m]);
      (*merge.mutable_attr())["N"].set_i(static_cast<int64_t>(branches.size()));
      GR_RETURN_IF_ERROR(Emit(merge));
      outputs.push_back(merge.name());
    }
    // Live once the taken branch has run to its end (side effects included):
    // a Merge is not made dead by its dead (untaken) control inputs.
    proto::NodeDef executed = NewNode("branch_executed", "Merge", pivots);
    for (size_t k = 0; k < branches.size(); ++k) executed.add_input("^" + Name("branch_" + std::to_string(k)));
    SetType(&executed, "T", GR_BOOL);
    (*executed.mutable_attr())["N"].set_i(static_cast<int64_t>(branches.size()));
    GR_RETURN_IF_ERROR(Emit(executed));
    proto::NodeDef out = ForwardingNode(node_.name(), node_.device(), outputs, out_types);
    out.add_input("^" + executed.name());
    return Emit(out);
  }

  proto::NodeDef node_;  // with the OpDef's defaults once validated
  const FunctionalLoweringHooks& hooks_;
  const std::string where_;
  std::vector<std::string> data_in_, control_in_;
};

}  // namespace

bool IsFunctionalControlFlowOp(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {"If",    "StatelessIf",   "Case", "StatelessCase",
                                                       "While", "StatelessWhile"};
  return kOps.count(op) > 0;
}

Status LowerFunctionalControlFlow(const proto::NodeDef& node, const OpRegistry& ops,
                                  const FunctionalLoweringHooks& hooks) {
  Lowering lowering(node, hooks);
  GR_RETURN_IF_ERROR(lowering.Validate(ops));
  const std::string& op = node.op();
  if (op == "If" || op == "StatelessIf") return lowering.LowerIf();
  if (op == "Case" || op == "StatelessCase") return lowering.LowerCase();
  return lowering.LowerWhile();
}

proto::NodeDef ForwardingNode(const std::string& name, const std::string& device,
                              const std::vector<std::string>& tensors, const std::vector<DataType>& types) {
  proto::NodeDef n;
  n.set_name(name);
  n.set_device(device);
  if (tensors.empty()) {
    n.set_op("NoOp");
  } else if (tensors.size() == 1) {
    n.set_op("Identity");
    SetType(&n, "T", types[0]);
  } else {
    n.set_op("IdentityN");
    SetTypeList(&n, "T", types);
  }
  for (const std::string& t : tensors) n.add_input(t);
  return n;
}

}  // namespace graphrt
