#include "function_inline.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "functional_lowering.h"
#include "node_def_util.h"

namespace graphrt {
namespace {

using AttrMap = google::protobuf::Map<std::string, proto::AttrValue>;

// Deep enough for any real graph; stops a function that calls itself.
constexpr int kMaxInlineDepth = 32;

struct Arg {
  int size = 1;
  std::vector<DataType> types;
};

Status ArgShape(const proto::OpDef::ArgDef& a, const AttrMap& attrs, const std::string& where, Arg* out) {
  auto attr = [&](const std::string& name) -> const proto::AttrValue* {
    auto it = attrs.find(name);
    return it == attrs.end() ? nullptr : &it->second;
  };
  out->types.clear();
  if (!a.type_list_attr().empty()) {
    const proto::AttrValue* v = attr(a.type_list_attr());
    if (v == nullptr) return errors::InvalidArgument(where, ": attr '", a.type_list_attr(), "' is missing");
    for (int t : v->list().type()) out->types.push_back(static_cast<DataType>(t));
    out->size = static_cast<int>(out->types.size());
    return Status::OK();
  }
  DataType type = static_cast<DataType>(a.type());
  if (!a.type_attr().empty()) {
    const proto::AttrValue* v = attr(a.type_attr());
    if (v == nullptr) return errors::InvalidArgument(where, ": attr '", a.type_attr(), "' is missing");
    type = static_cast<DataType>(v->type());
  }
  out->size = 1;
  if (!a.number_attr().empty()) {
    const proto::AttrValue* v = attr(a.number_attr());
    if (v == nullptr || v->i() < 0 || v->i() > (1 << 20))
      return errors::InvalidArgument(where, ": attr '", a.number_attr(), "' is missing or out of range");
    out->size = static_cast<int>(v->i());
  }
  out->types.assign(out->size, type);
  return Status::OK();
}

class Inliner {
 public:
  Inliner(const proto::FunctionDefLibrary& library, const OpRegistry& ops, int64_t max_nodes,
          const std::string& limit_hint, proto::GraphDef* out)
      : ops_(ops), out_(out), max_nodes_(max_nodes), limit_hint_(limit_hint) {
    for (const proto::FunctionDef& f : library.function()) functions_[f.signature().name()] = &f;
  }

  // Expands one node of the graph itself, after checking that a lower bound
  // of what it expands to fits: exponential fan-out fails here, at once.
  Status ExpandTopLevel(const proto::NodeDef& node) {
    const uint64_t at_least = MinNodes(node, 0);
    if (at_least > 1 && static_cast<uint64_t>(out_->node_size()) + at_least > static_cast<uint64_t>(max_nodes_))
      return TooManyNodes(node, at_least, true);
    top_ = &node;
    GR_RETURN_IF_ERROR(Expand(node, 0));
    // Expand checks before each node it expands; the few a call adds
    // around its body (arguments, outputs) are counted here.
    if (out_->node_size() > max_nodes_) return TooManyNodes(node, 0, false);
    return Status::OK();
  }

  // The function `node` calls (null: none) and the attrs it is called with.
  Status CalledFunction(const proto::NodeDef& node, const proto::FunctionDef** f, const AttrMap** attrs) const {
    *f = nullptr;
    if (auto it = functions_.find(node.op()); it != functions_.end()) {
      *f = it->second;
      *attrs = &node.attr();
    } else if (node.op() == "PartitionedCall" || node.op() == "StatefulPartitionedCall") {
      auto fa = node.attr().find("f");
      if (fa != node.attr().end()) {
        auto it2 = functions_.find(fa->second.func().name());
        if (it2 == functions_.end())
          return errors::NotFound(NodePrefix(node), ": calls function '", fa->second.func().name(),
                                  "', which the graph's library does not define");
        *f = it2->second;
        *attrs = &fa->second.func().attr();
      }
    }
    return Status::OK();
  }

  Status Expand(const proto::NodeDef& node, int depth) {
    // Every node made passes through here (an Inline adds its few own nodes
    // per call), so this bounds the work by max_nodes_.
    if (out_->node_size() >= max_nodes_) return TooManyNodes(*top_, 0, false);
    const proto::FunctionDef* f = nullptr;
    const AttrMap* call_attrs = nullptr;
    GR_RETURN_IF_ERROR(CalledFunction(node, &f, &call_attrs));
    const bool functional = f == nullptr && IsFunctionalControlFlowOp(node.op());
    if (f == nullptr && !functional) {
      *out_->add_node() = node;
      return Status::OK();
    }
    if (depth >= kMaxInlineDepth)
      return errors::InvalidArgument(NodePrefix(node), ": function calls nest deeper than ", kMaxInlineDepth,
                                     " (a function that calls itself?)");
    if (functional) {
      // Its branch/cond/body calls come back through Expand, one level deeper.
      FunctionalLoweringHooks hooks;
      hooks.find_function = [this](const std::string& name) -> const proto::FunctionDef* {
        auto it = functions_.find(name);
        return it == functions_.end() ? nullptr : it->second;
      };
      hooks.signature_types = &SignatureTypes;
      hooks.emit = [this, depth](const proto::NodeDef& n) { return Expand(n, depth + 1); };
      return LowerFunctionalControlFlow(node, ops_, hooks);
    }
    return Inline(node, *f, *call_attrs, depth);
  }

  // The flat dtypes of f's inputs and outputs when called with `attrs`.
  static Status SignatureTypes(const proto::FunctionDef& f, const AttrMap& attrs, const std::string& where,
                               std::vector<DataType>* in, std::vector<DataType>* out) {
    in->clear();
    out->clear();
    for (const proto::OpDef::ArgDef& a : f.signature().input_arg()) {
      Arg shape;
      GR_RETURN_IF_ERROR(ArgShape(a, attrs, where, &shape));
      in->insert(in->end(), shape.types.begin(), shape.types.end());
    }
    for (const proto::OpDef::ArgDef& a : f.signature().output_arg()) {
      Arg shape;
      GR_RETURN_IF_ERROR(ArgShape(a, attrs, where, &shape));
      out->insert(out->end(), shape.types.begin(), shape.types.end());
    }
    return Status::OK();
  }

 private:
  // Saturates here: only compared with max_nodes_ (an int64).
  static constexpr uint64_t kManyNodes = uint64_t{1} << 62;
  static uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return std::min(kManyNodes, a + b); }

  // A lower bound on the nodes `node` expands to: 1 for an op; a call makes
  // its input NoOp and output node besides its body; a functional op calls
  // every function its attrs name. Memoised per function, so this costs
  // the library's size however often a function is called.
  uint64_t MinNodes(const proto::NodeDef& node, int depth) {
    const proto::FunctionDef* f = nullptr;
    const AttrMap* attrs = nullptr;
    if (!CalledFunction(node, &f, &attrs).ok()) return 1;  // Expand reports it
    if (f != nullptr) return SaturatingAdd(2, MinFunctionNodes(*f, depth + 1));
    if (!IsFunctionalControlFlowOp(node.op())) return 1;
    uint64_t n = 1;
    for (const auto& [name, value] : node.attr()) {
      auto add = [&](const proto::NameAttrList& fn) {
        auto it = functions_.find(fn.name());
        if (it != functions_.end()) n = SaturatingAdd(n, MinFunctionNodes(*it->second, depth + 1));
      };
      if (value.has_func()) add(value.func());
      for (const proto::NameAttrList& fn : value.list().func()) add(fn);
    }
    return n;
  }
  uint64_t MinFunctionNodes(const proto::FunctionDef& f, int depth) {
    // Deeper than the inliner goes, or a cycle: it fails on depth anyway.
    if (depth > kMaxInlineDepth) return 1;
    const std::string& name = f.signature().name();
    if (auto it = min_nodes_.find(name); it != min_nodes_.end()) return it->second;
    min_nodes_[name] = 1;  // while in progress: a recursive call counts 1
    uint64_t n = 0;
    for (const proto::NodeDef& b : f.node_def()) n = SaturatingAdd(n, MinNodes(b, depth));
    min_nodes_[name] = n;
    return n;
  }

  Status TooManyNodes(const proto::NodeDef& node, uint64_t at_least, bool before) const {
    const proto::FunctionDef* f = nullptr;
    const AttrMap* attrs = nullptr;
    std::string what = NodePrefix(node);
    if (CalledFunction(node, &f, &attrs).ok() && f != nullptr)
      what += " (function '" + f->signature().name() + "')";
    else if (!IsFunctionalControlFlowOp(node.op()))  // the calls before it filled the graph
      return errors::ResourceExhausted("with its function calls inlined the graph has more than ", max_nodes_,
                                       " nodes, more than it may have (", limit_hint_, "); at ", what);
    if (before)
      return errors::ResourceExhausted(what, ": inlining its function calls would make at least ", at_least,
                                       " nodes, more than the graph may have (", max_nodes_, "; ", limit_hint_, ")");
    return errors::ResourceExhausted(what, ": inlining its function calls makes more than ", max_nodes_,
                                     " nodes, more than the graph may have (", limit_hint_, ")");
  }

  // The body nodes' output positions: "node:out_arg:i" -> flat output index.
  struct BodyNode {
    const proto::OpDef* signature = nullptr;  // op or function signature
    proto::NodeDef def;                       // with defaults, placeholders resolved
    const AttrMap* output_attrs = nullptr;    // what sizes its outputs (def's attrs when null)
    bool partitioned_call = false;            // its outputs are one list, "output"
  };

  Status Inline(const proto::NodeDef& call, const proto::FunctionDef& f, const AttrMap& attrs, int depth) {
    const std::string where = NodePrefix(call) + " (function '" + f.signature().name() + "')";
    const std::string prefix = call.name() + "/";
    std::vector<std::string> data_in, control_in;
    for (const std::string& in : call.input()) (in[0] == '^' ? control_in : data_in).push_back(in);

    // Arguments: one Identity per element, named after the arg.
    std::unordered_map<std::string, std::vector<std::string>> arg_tensors;
    size_t next_input = 0;
    std::vector<std::string> arg_nodes;
    for (const proto::OpDef::ArgDef& a : f.signature().input_arg()) {
      Arg shape;
      GR_RETURN_IF_ERROR(ArgShape(a, attrs, where, &shape));
      for (int j = 0; j < shape.size; ++j) {
        if (next_input >= data_in.size()) break;
        proto::NodeDef* id = out_->add_node();
        const bool list = !a.number_attr().empty() || !a.type_list_attr().empty();
        id->set_name(prefix + a.name() + (list ? "_" + std::to_string(j) : std::string()));
        id->set_op("Identity");
        id->set_device(call.device());
        id->add_input(data_in[next_input++]);
        (*id->mutable_attr())["T"].set_type(static_cast<proto::DataType>(shape.types[j]));
        arg_tensors[a.name()].push_back(id->name());
        arg_nodes.push_back(id->name());
      }
    }
    if (next_input != data_in.size() || arg_nodes.size() != data_in.size())
      return errors::InvalidArgument(where, ": the call has ", data_in.size(),
                                     " data inputs but the function takes a different number");

    // Body nodes without inputs wait for the call's inputs (so they run in
    // the caller's frame, and are dead when the call's inputs are).
    const std::string input_control = prefix + "input_control_node";
    {
      proto::NodeDef* nc = out_->add_node();
      nc->set_name(input_control);
      nc->set_op("NoOp");
      nc->set_device(call.device());
      for (const std::string& c : control_in) nc->add_input(c);
      for (const std::string& a : arg_nodes) nc->add_input("^" + a);
    }

    std::unordered_map<std::string, BodyNode> body;
    for (const proto::NodeDef& b : f.node_def()) {
      BodyNode& bn = body[b.name()];
      bn.def = b;
      GR_RETURN_IF_ERROR(ResolvePlaceholders(&bn.def, attrs, where));
      const proto::FunctionDef* callee = nullptr;
      const AttrMap* callee_attrs = nullptr;
      GR_RETURN_IF_ERROR(CalledFunction(bn.def, &callee, &callee_attrs));
      if (callee != nullptr) {
        bn.signature = &callee->signature();
        bn.output_attrs = callee_attrs;
        bn.partitioned_call = b.op() != callee->signature().name();
      } else {
        const proto::OpDef* op_def = nullptr;
        Status s = ops_.LookUpOpDef(b.op(), &op_def);
        if (!s.ok()) return Status(s.code(), where + ": body node '" + b.name() + "': " + s.message());
        bn.signature = op_def;
        proto::NodeDef with_defaults = bn.def;
        if (AddDefaultsAndValidate(*op_def, &with_defaults).ok()) bn.def = std::move(with_defaults);
      }
    }
    auto resolve = [&](const std::string& ref, std::vector<std::string>* tensors) -> Status {
      // "arg", "arg:i", "node:out_arg:i"
      const size_t c1 = ref.find(':');
      const std::string head = ref.substr(0, c1);
      if (auto a = arg_tensors.find(head); a != arg_tensors.end()) {
        if (c1 == std::string::npos) {
          tensors->insert(tensors->end(), a->second.begin(), a->second.end());
          return Status::OK();
        }
        const int i = std::atoi(ref.c_str() + c1 + 1);
        if (i < 0 || i >= static_cast<int>(a->second.size()))
          return errors::InvalidArgument(where, ": input '", ref, "' is out of range");
        tensors->push_back(a->second[i]);
        return Status::OK();
      }
      auto b = body.find(head);
      const size_t c2 = c1 == std::string::npos ? c1 : ref.find(':', c1 + 1);
      if (b == body.end() || c2 == std::string::npos)
        return errors::InvalidArgument(where, ": '", ref, "' names no argument or body node output");
      const std::string out_arg = ref.substr(c1 + 1, c2 - c1 - 1);
      const int i = std::atoi(ref.c_str() + c2 + 1);
      if (b->second.partitioned_call && out_arg == "output") {
        tensors->push_back(prefix + head + ":" + std::to_string(i));
        return Status::OK();
      }
      int base = 0;
      for (const proto::OpDef::ArgDef& o : b->second.signature->output_arg()) {
        Arg shape;
        const AttrMap& sizing = b->second.output_attrs ? *b->second.output_attrs : b->second.def.attr();
        GR_RETURN_IF_ERROR(ArgShape(o, sizing, where, &shape));
        if (o.name() == out_arg) {
          if (i < 0 || i >= shape.size) return errors::InvalidArgument(where, ": '", ref, "' is out of range");
          tensors->push_back(prefix + head + ":" + std::to_string(base + i));
          return Status::OK();
        }
        base += shape.size;
      }
      return errors::InvalidArgument(where, ": '", ref, "': '", head, "' has no output '", out_arg, "'");
    };

    for (const proto::NodeDef& b : f.node_def()) {
      proto::NodeDef n = body[b.name()].def;
      n.set_name(prefix + b.name());
      if (n.device().empty()) n.set_device(call.device());
      n.clear_input();
      for (const std::string& in : b.input()) {
        if (in[0] == '^') {
          const std::string dep = in.substr(1);
          auto a = arg_tensors.find(dep);
          if (a != arg_tensors.end()) {
            for (const std::string& t : a->second) n.add_input("^" + t);
          } else {
            n.add_input("^" + prefix + dep);
          }
          continue;
        }
        std::vector<std::string> tensors;
        GR_RETURN_IF_ERROR(resolve(in, &tensors));
        for (const std::string& t : tensors) n.add_input(t);
      }
      if (n.input_size() == 0) n.add_input("^" + input_control);
      GR_RETURN_IF_ERROR(Expand(n, depth + 1));
    }

    // The call's outputs: a node named like the call, so "call:k" and
    // "^call" keep their meaning.
    std::vector<std::string> rets;
    std::vector<DataType> ret_types;
    for (const proto::OpDef::ArgDef& o : f.signature().output_arg()) {
      Arg shape;
      GR_RETURN_IF_ERROR(ArgShape(o, attrs, where, &shape));
      auto r = f.ret().find(o.name());
      if (r == f.ret().end()) return errors::InvalidArgument(where, ": no ret for output '", o.name(), "'");
      std::vector<std::string> tensors;
      GR_RETURN_IF_ERROR(resolve(r->second, &tensors));
      if (tensors.size() == 1 && shape.size > 1) {
        // "node:list_out:0" for a whole list output: its consecutive outputs.
        const std::string& t = tensors[0];
        const size_t colon = t.rfind(':');
        const int base = std::atoi(t.c_str() + colon + 1);
        tensors.clear();
        for (int k = 0; k < shape.size; ++k) tensors.push_back(t.substr(0, colon) + ":" + std::to_string(base + k));
      }
      if (static_cast<int>(tensors.size()) != shape.size)
        return errors::InvalidArgument(where, ": ret '", r->second, "' does not match output '", o.name(), "'");
      rets.insert(rets.end(), tensors.begin(), tensors.end());
      ret_types.insert(ret_types.end(), shape.types.begin(), shape.types.end());
    }
    proto::NodeDef* outn = out_->add_node();
    *outn = ForwardingNode(call.name(), call.device(), rets, ret_types);
    for (const auto& [name, node] : f.control_ret()) outn->add_input("^" + prefix + node);
    // A call with no outputs completes when its whole body has.
    if (rets.empty() && f.control_ret().empty())
      for (const proto::NodeDef& b : f.node_def()) outn->add_input("^" + prefix + b.name());
    if (outn->input_size() == 0) outn->add_input("^" + input_control);
    return Status::OK();
  }

  // Attr values that name the caller's attrs ("$T" placeholders) take them.
  static Status ResolvePlaceholders(proto::NodeDef* n, const AttrMap& attrs, const std::string& where) {
    for (auto& [key, value] : *n->mutable_attr()) {
      if (value.placeholder().empty()) continue;
      auto it = attrs.find(value.placeholder());
      if (it == attrs.end())
        return errors::InvalidArgument(where, ": body node '", n->name(), "' attr '", key, "' refers to attr '",
                                       value.placeholder(), "', which the call does not set");
      value = it->second;
    }
    return Status::OK();
  }

  const OpRegistry& ops_;
  proto::GraphDef* out_;
  const int64_t max_nodes_;
  const std::string limit_hint_;
  const proto::NodeDef* top_ = nullptr;  // the graph's node being expanded
  std::unordered_map<std::string, const proto::FunctionDef*> functions_;
  std::unordered_map<std::string, uint64_t> min_nodes_;
};

}  // namespace

Status InlineFunctionCalls(const proto::GraphDef& in, const OpRegistry& ops, int64_t max_nodes,
                           const std::string& limit_hint, proto::GraphDef* out) {
  out->Clear();
  *out->mutable_versions() = in.versions();
  Inliner inliner(in.library(), ops, max_nodes, limit_hint, out);
  for (const proto::NodeDef& n : in.node()) GR_RETURN_IF_ERROR(inliner.ExpandTopLevel(n));
  return Status::OK();
}

}  // namespace graphrt
